//! Set changes as values: what the tick and reconcile decide for many
//! nodes at once. Pure like [`super::plan`]: the rows read under the
//! nodes' locks and the clock come in, a [`BatchPlan`] comes out, and the
//! store's batch applier (`store/batches.rs`) writes it in the batch's
//! transaction. Steps whose rows the database builds from other rows (a
//! legacy entry from its node's column, an expiry's events from the
//! entries) are named here by their ids and notes; the applier runs them
//! set-based, so a batch costs a few statements, not one per node.

use crate::authority::caller::Caller;
use crate::authority::event::{EventKind, MaintenanceEvent};
use chrono::NaiveDateTime;
use nodemaint_entity::vocab::iso8601;
use nodemaint_entity::{node_maintenance, node_maintenance_schedule};
use nodemaint_migration::backfill::Missing;
use nodemaint_runtime::drift::{DriftKind, LegacyFix, NodeDrift, RECONCILE_ASSERTER};
use std::collections::BTreeSet;

/// The identity the schedule acts as in history (like the conductor's).
pub const WINDOWS_ACTOR: &str = "nodemaint-windows";

/// The note on a window's expiry event: the schedule released it.
pub const EXPIRED_NOTE: &str = "the window ended; released by the schedule";

/// The note on a window's start event.
pub const STARTED_NOTE: &str = "window started by the schedule";

/// The note on the event of a legacy entry reconcile creates.
pub const BACKFILL_NOTE: &str = "reconciliation: backfilled from nodes.maintenance";

/// The schedule's service identity: system scope, no project.
pub fn scheduler() -> Caller {
    Caller::system(WINDOWS_ACTOR, &["admin", "service"])
}

/// Reconcile's service identity.
pub fn reconciler() -> Caller {
    Caller::system(RECONCILE_ASSERTER, &["admin"])
}

/// Ids a set step acts on, and the note on the event each gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Noted {
    pub ids: Vec<i32>,
    pub note: &'static str,
}

/// Legacy entries made from the nodes' columns: which nodes, by the
/// backfill's rule for which of them lack one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Backfill {
    pub groups: Vec<(Missing, Vec<i32>)>,
    pub note: &'static str,
}

/// What a set writer decided for a batch of locked nodes, in the order the
/// applier writes it; every event is by `actor` at `at`.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchPlan {
    pub actor: Caller,
    pub at: NaiveDateTime,
    /// Nodes that get a legacy entry made from their columns (the
    /// backfill's SQL), an `asserted` event each.
    pub backfill: Option<Backfill>,
    /// Legacy entries whose reason takes their node's column, with an
    /// `updated` event each.
    pub take_column: Option<Noted>,
    /// Active entries released at their end: those whose `ends_at` has
    /// still passed under the lock (an extend that came first wins), each
    /// with an `expired` event.
    pub expire: Option<Noted>,
    /// Scheduled windows that become active entries, asserted at `at`.
    pub start: Vec<i32>,
    /// Scheduled windows to take off the schedule (started or refused).
    pub unschedule: Vec<i32>,
    /// Events the plan built whole.
    pub events: Vec<MaintenanceEvent>,
    /// Events of entries whose node is gone: a history row only, whose
    /// text names the node id (a typed row belongs to a node).
    pub orphan_events: Vec<MaintenanceEvent>,
    /// Active entries deleted (their events are in `events` or `orphan_events`).
    pub delete: Vec<i32>,
    /// Nodes whose boolean, reason and fault are written again from what
    /// they hold after the rest.
    pub resync: Vec<i32>,
}

impl BatchPlan {
    pub fn new(actor: Caller, at: NaiveDateTime) -> BatchPlan {
        BatchPlan {
            actor,
            at,
            backfill: None,
            take_column: None,
            expire: None,
            start: Vec::new(),
            unschedule: Vec::new(),
            events: Vec::new(),
            orphan_events: Vec::new(),
            delete: Vec::new(),
            resync: Vec::new(),
        }
    }
}

/// Distinct ids in ascending order (the order nodes are locked in).
fn distinct(ids: impl IntoIterator<Item = i32>) -> Vec<i32> {
    ids.into_iter().collect::<BTreeSet<i32>>().into_iter().collect()
}

/// The tick's expiry of the picked entries `(id, node_id)`.
pub fn expire(picked: &[(i32, i32)], at: NaiveDateTime) -> BatchPlan {
    let mut plan = BatchPlan::new(scheduler(), at);
    plan.expire = Some(Noted { ids: picked.iter().map(|(id, _)| *id).collect(), note: EXPIRED_NOTE });
    plan.resync = distinct(picked.iter().map(|(_, node)| *node));
    plan
}

/// A due window that could not start, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotStarted {
    pub window: String,
    pub node_id: i32,
    pub why: String,
}

impl std::fmt::Display for NotStarted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} on node id {}: {}", self.window, self.node_id, self.why)
    }
}

/// The tick's start of the windows `due` (in `starts_at`, id order; their
/// nodes locked and holding `held`): each starts unless it has already
/// ended or an active entry of its (type, scope, project) holds the node
/// (an earlier window of this batch included). Every due window leaves the
/// schedule; one that does not start gets a `cancelled` event saying why.
pub fn start_due(
    due: &[node_maintenance_schedule::Model],
    held: &[node_maintenance::Model],
    at: NaiveDateTime,
) -> (BatchPlan, Vec<NotStarted>) {
    let mut plan = BatchPlan::new(scheduler(), at);
    let key =
        |node: i32, ty: &str, scope: &str, project: &str| (node, ty.to_owned(), scope.to_owned(), project.to_owned());
    let mut taken: BTreeSet<_> =
        held.iter().map(|e| key(e.node_id, &e.entry_type, &e.scope, &e.asserted_by_project)).collect();
    let mut refused = Vec::new();
    for w in due {
        let why = if w.ends_at <= at {
            Some(format!("it ended at {} before a tick could start it", iso8601(w.ends_at)))
        } else if !taken.insert(key(w.node_id, &w.entry_type, &w.scope, &w.asserted_by_project)) {
            Some("an active entry of the same type, scope and project holds the node".to_owned())
        } else {
            None
        };
        let entry = w.as_entry(at);
        match why {
            Some(why) => {
                let note = format!("did not start: {why}");
                plan.events.push(MaintenanceEvent::new(EventKind::Cancelled, &entry, &plan.actor, Some(&note), at));
                refused.push(NotStarted { window: w.uuid.clone(), node_id: w.node_id, why });
            }
            None => {
                plan.events.push(MaintenanceEvent::new(
                    EventKind::Started,
                    &entry,
                    &plan.actor,
                    Some(STARTED_NOTE),
                    at,
                ));
                plan.start.push(w.id);
                plan.resync.push(w.node_id);
            }
        }
        plan.unschedule.push(w.id);
    }
    plan.resync = distinct(plan.resync.drain(..));
    (plan, refused)
}

/// The note on reconcile's event for a repair of `kind`.
pub fn repair_note(kind: DriftKind, pinned: bool) -> &'static str {
    match kind {
        DriftKind::ClearedWithLegacyEntries => {
            "reconciliation: maintenance was cleared by a service of the pinned release"
        }
        DriftKind::ClearedWithTypedEntries if pinned => {
            "reconciliation while the release is pinned: the boolean is canonical"
        }
        DriftKind::DuplicateSingletons => "reconciliation: duplicate entry of a one-per-node type; the oldest is kept",
        DriftKind::OrphanedEntries => "reconciliation: the entry's node no longer exists",
        DriftKind::ReasonChanged => "reconciliation: the reason was changed by a service of the pinned release",
        _ => "reconciliation",
    }
}

/// Reconcile's repairs of `drifts` (classified under the nodes' locks).
pub fn repair(drifts: &[NodeDrift], pinned: bool, at: NaiveDateTime) -> BatchPlan {
    let mut plan = BatchPlan::new(reconciler(), at);
    let pick = |f: &dyn Fn(&NodeDrift) -> bool| drifts.iter().filter(|d| f(d)).map(|d| d.node_id).collect::<Vec<i32>>();
    // Missing legacy entries: the backfill's own SQL.
    let groups: Vec<(Missing, Vec<i32>)> = [
        (Missing::AnyEntry, pick(&|d| d.create_legacy_for_empty)),
        (Missing::Legacy, pick(&|d| d.legacy_takes_column == Some(LegacyFix::Create))),
    ]
    .into_iter()
    .filter(|(_, ids)| !ids.is_empty())
    .collect();
    if !groups.is_empty() {
        plan.backfill = Some(Backfill { groups, note: BACKFILL_NOTE });
    }
    // The legacy entry takes the column's text.
    let updates: Vec<i32> = drifts
        .iter()
        .filter_map(|d| match d.legacy_takes_column {
            Some(LegacyFix::Update(id)) => Some(id),
            _ => None,
        })
        .collect();
    if !updates.is_empty() {
        plan.take_column = Some(Noted { ids: updates, note: repair_note(DriftKind::ReasonChanged, pinned) });
    }
    // Releases, each recorded with the entry's full data.
    for (entry, kind) in drifts.iter().flat_map(|d| d.release.iter()) {
        let event =
            MaintenanceEvent::new(EventKind::Released, entry, &plan.actor, Some(repair_note(*kind, pinned)), at);
        if *kind == DriftKind::OrphanedEntries {
            plan.orphan_events.push(event);
        } else {
            plan.events.push(event);
        }
        plan.delete.push(entry.id);
    }
    // The boolean and the reason column, re-synthesised from what remains.
    // Not for missing nodes (no row), nor nodes that only got their legacy
    // entry (the backfill copied the column they already hold).
    plan.resync = pick(&|d| {
        let only_created = d.create_legacy_for_empty && d.kinds.len() == 1;
        !(d.is_orphan() || only_created)
    });
    plan
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::NaiveDate;

    fn at(h: u32) -> NaiveDateTime {
        NaiveDate::from_ymd_opt(2026, 12, 6).unwrap().and_hms_opt(h, 0, 0).unwrap()
    }

    fn window(id: i32, node: i32, project: &str, starts: u32, ends: u32) -> node_maintenance_schedule::Model {
        node_maintenance_schedule::Model {
            id,
            uuid: format!("w{id}"),
            node_id: node,
            entry_type: "operator_hold".into(),
            reason: Some("planned".into()),
            scope: "owner".into(),
            asserted_by: "alice".into(),
            asserted_by_project: project.into(),
            extra: None,
            version: None,
            created_at: Some(at(1)),
            updated_at: None,
            starts_at: at(starts),
            ends_at: at(ends),
        }
    }

    #[test]
    fn a_due_window_starts_unless_it_ended_or_its_key_is_held() {
        let held = vec![window(9, 2, "P1", 1, 5).as_entry(at(1))];
        let due = [
            window(1, 1, "P1", 2, 6), // starts
            window(2, 1, "P1", 2, 7), // same key on node 1: the first took it
            window(3, 2, "P1", 2, 6), // node 2 holds that key already
            window(4, 3, "P1", 1, 2), // ended before the tick at 3
            window(5, 3, "P2", 2, 6), // starts
        ];
        let (plan, refused) = start_due(&due, &held, at(3));
        assert_eq!(plan.start, vec![1, 5]);
        assert_eq!(plan.unschedule, vec![1, 2, 3, 4, 5], "every due window leaves the schedule");
        assert_eq!(plan.resync, vec![1, 3]);
        let kinds: Vec<(EventKind, &str)> = plan.events.iter().map(|e| (e.kind, e.entry_uuid.as_str())).collect();
        assert_eq!(
            kinds,
            [
                (EventKind::Started, "w1"),
                (EventKind::Cancelled, "w2"),
                (EventKind::Cancelled, "w3"),
                (EventKind::Cancelled, "w4"),
                (EventKind::Started, "w5")
            ]
        );
        assert!(plan.events.iter().all(|e| e.actor == WINDOWS_ACTOR && e.at == at(3)));
        let why: Vec<String> = refused.iter().map(ToString::to_string).collect();
        assert_eq!(
            why,
            [
                "w2 on node id 1: an active entry of the same type, scope and project holds the node",
                "w3 on node id 2: an active entry of the same type, scope and project holds the node",
                "w4 on node id 3: it ended at 2026-12-06T02:00:00+00:00 before a tick could start it",
            ]
        );
        assert_eq!(plan.events[3].note.as_deref(), Some(format!("did not start: {}", refused[2].why).as_str()));
    }

    #[test]
    fn an_expiry_names_its_entries_and_resyncs_each_node_once() {
        let plan = expire(&[(10, 2), (11, 1), (12, 2)], at(4));
        assert_eq!(plan.expire, Some(Noted { ids: vec![10, 11, 12], note: EXPIRED_NOTE }));
        assert_eq!(plan.resync, vec![1, 2]);
        assert!(plan.events.is_empty() && plan.delete.is_empty());
    }
}
