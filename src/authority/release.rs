//! The release floors (node maintenance spec, "Scoping"), checked in code
//! after policy, so policy can tighten release but never relax it:
//!
//! - a caller whose scope strictly outranks the entry's may release it
//!   (system > owner > lessee);
//! - at equal scope the caller's project must match the entry's
//!   `asserted_by_project`, except at system scope (one trust domain);
//! - `legacy` and `fault` entries are exempt: policy alone governs them.
//!
//! Bulk release is all-or-nothing, and its refusal names every blocker.

use crate::authority::rejected::Rejected;
use nodemaint_entity::{EntryType, Scope, node_maintenance};
use std::fmt;

/// What the caller holds on the node: its derived scope and its project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Authority {
    pub scope: Scope,
    /// The caller's project, empty for a system-scoped token.
    pub project: String,
}

/// Why a floor refuses a release.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Denial {
    /// The entry's scope is above the caller's.
    Outranked,
    /// Same scope, another project.
    OtherProject,
    /// The remove policy refused this entry (checked before the floors).
    Policy,
}

/// An entry's scope as stored; anything unreadable counts as system, the
/// most protected, so a corrupt row can never be released by accident.
pub(crate) fn entry_scope(entry: &node_maintenance::Model) -> Scope {
    Scope::parse(&entry.scope).unwrap_or(Scope::System)
}

/// Whether the floors let `who` release `entry`.
pub fn floor(who: &Authority, entry: &node_maintenance::Model) -> Result<(), Denial> {
    if EntryType::lookup(&entry.entry_type).is_some_and(|t| t.policy_only_release()) {
        return Ok(());
    }
    let theirs = entry_scope(entry);
    if who.scope > theirs || (who.scope == theirs && who.scope == Scope::System) {
        Ok(())
    } else if who.scope < theirs {
        Err(Denial::Outranked)
    } else if who.project == entry.asserted_by_project {
        Ok(())
    } else {
        Err(Denial::OtherProject)
    }
}

/// A refusal of one entry, worded as the spec's scenarios 5 and 6 show it.
pub(crate) struct Refusal<'a> {
    pub entry: &'a node_maintenance::Model,
    pub denial: Denial,
    pub caller_scope: Scope,
    pub rule: &'a str,
}

impl fmt::Display for Refusal<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let e = self.entry;
        match self.denial {
            Denial::Outranked => write!(
                f,
                "Cannot release maintenance entry {} (type {}, scope {}): not permitted at {} scope",
                e.uuid, e.entry_type, e.scope, self.caller_scope
            ),
            Denial::OtherProject => write!(
                f,
                "Cannot release maintenance entry {} (type {}, scope {}, asserted by project {}): not asserted by your project",
                e.uuid, e.entry_type, e.scope, e.asserted_by_project
            ),
            Denial::Policy => write!(
                f,
                "Cannot release maintenance entry {} (type {}, scope {}): {} is disallowed by policy",
                e.uuid, e.entry_type, e.scope, self.rule
            ),
        }
    }
}

/// Per entry, in order: `None` when `who` may release it, else why not (the
/// text of the 403 it would get). `policy_allows` is the per-entry remove
/// policy, checked before the floors.
pub(crate) fn release_plan(
    who: &Authority,
    entries: &[node_maintenance::Model],
    rule: &str,
    mut policy_allows: impl FnMut(&node_maintenance::Model) -> bool,
) -> Vec<Option<String>> {
    entries
        .iter()
        .map(|entry| {
            let denial = if policy_allows(entry) { floor(who, entry).err()? } else { Denial::Policy };
            Some(Refusal { entry, denial, caller_scope: who.scope, rule }.to_string())
        })
        .collect()
}

/// The all-or-nothing decision for a set of entries: `Ok` when every one
/// may go, else the 403 naming every blocker.
pub fn release_all(
    who: &Authority,
    entries: &[node_maintenance::Model],
    rule: &str,
    policy_allows: impl FnMut(&node_maintenance::Model) -> bool,
) -> Result<(), Rejected> {
    let blockers: Vec<String> = release_plan(who, entries, rule, policy_allows).into_iter().flatten().collect();
    if blockers.is_empty() { Ok(()) } else { Err(Rejected::Release { blockers }) }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use nodemaint_entity::vocab::{FAULT, HARDWARE_FAILURE, LEGACY, OPERATOR_HOLD};
    use proptest::prelude::*;

    pub fn entry(entry_type: &str, scope: &str, project: &str) -> node_maintenance::Model {
        node_maintenance::Model {
            id: 1,
            uuid: "8d8d9a25-c1d0-4d4c-93a6-2a4a7e2bf7d8".into(),
            node_id: 1,
            entry_type: entry_type.into(),
            reason: None,
            scope: scope.into(),
            asserted_by: "someone".into(),
            asserted_by_project: project.into(),
            asserted_at: chrono::NaiveDate::from_ymd_opt(2026, 6, 10).unwrap().and_hms_opt(10, 30, 0).unwrap(),
            extra: None,
            version: None,
            created_at: None,
            updated_at: None,
            ends_at: None,
        }
    }

    /// The spec's rules written out as a table, independently of `floor`.
    fn spec_table(caller: Scope, caller_project: &str, ty: &str, scope: Scope, project: &str) -> bool {
        if ty == LEGACY || ty == FAULT {
            return true; // "exempt from both checks and governed by policy alone"
        }
        use Scope::*;
        match (caller, scope) {
            (System, _) => true,     // outranks owner and lessee; any system entry
            (Owner, Lessee) => true, // strictly outranks
            (Owner, Owner) | (Lessee, Lessee) => caller_project == project,
            (Owner, System) | (Lessee, System) | (Lessee, Owner) => false,
        }
    }

    fn scope_strategy() -> impl Strategy<Value = Scope> {
        prop_oneof![Just(Scope::System), Just(Scope::Owner), Just(Scope::Lessee)]
    }

    fn type_strategy() -> impl Strategy<Value = &'static str> {
        prop_oneof![Just(LEGACY), Just(FAULT), Just(HARDWARE_FAILURE), Just(OPERATOR_HOLD)]
    }

    fn project_strategy() -> impl Strategy<Value = String> {
        prop_oneof![Just(String::new()), Just("p-a".to_owned()), Just("p-b".to_owned()), "[a-f0-9]{1,4}"]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 5000, ..ProptestConfig::default() })]
        #[test]
        fn release_decision_agrees_with_the_spec_table(
            caller in scope_strategy(), caller_project in project_strategy(),
            ty in type_strategy(), scope in scope_strategy(), project in project_strategy(),
        ) {
            let who = Authority { scope: caller, project: caller_project.clone() };
            let e = entry(ty, scope.as_str(), &project);
            prop_assert_eq!(floor(&who, &e).is_ok(), spec_table(caller, &caller_project, ty, scope, &project));
            // Bulk release of one entry decides the same.
            prop_assert_eq!(release_all(&who, std::slice::from_ref(&e), "r", |_| true).is_ok(), floor(&who, &e).is_ok());
            // A refusing policy always refuses; a permissive one never lifts a floor.
            prop_assert!(release_all(&who, std::slice::from_ref(&e), "r", |_| false).is_err());
        }
    }

    #[test]
    fn messages_match_scenarios_5_and_6() {
        let lessee = Authority { scope: Scope::Lessee, project: "b0b0b0".into() };
        let sys = entry(HARDWARE_FAILURE, "system", "");
        assert_eq!(
            release_all(&lessee, std::slice::from_ref(&sys), "r", |_| true).unwrap_err().to_string(),
            "Cannot release maintenance entry 8d8d9a25-c1d0-4d4c-93a6-2a4a7e2bf7d8 (type hardware_failure, scope system): not permitted at lessee scope"
        );
        let mut stale = entry(OPERATOR_HOLD, "lessee", "a0a0a0");
        stale.uuid = "f00dfeed-0000-4000-8000-000000000000".into();
        assert_eq!(
            release_all(&lessee, std::slice::from_ref(&stale), "r", |_| true).unwrap_err().to_string(),
            "Cannot release maintenance entry f00dfeed-0000-4000-8000-000000000000 (type operator_hold, scope lessee, asserted by project a0a0a0): not asserted by your project"
        );
        let both =
            release_all(&lessee, &[sys, stale, entry(LEGACY, "system", "")], "r", |_| true).unwrap_err().to_string();
        assert_eq!(both.matches("Cannot release").count(), 2, "every blocker is named, the legacy one is not: {both}");
    }

    #[test]
    fn an_unreadable_scope_is_treated_as_system() {
        let owner = Authority { scope: Scope::Owner, project: "p".into() };
        assert_eq!(floor(&owner, &entry(OPERATOR_HOLD, "galaxy", "p")), Err(Denial::Outranked));
    }
}
