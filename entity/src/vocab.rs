//! The vocabulary of node maintenance: registered entry types, scopes, and
//! the synthesised `maintenance_reason`. Pure: no database, no clock.

use crate::node_maintenance;
use std::fmt;

/// Who writes a registered type's entries, which decides how it behaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Handling {
    /// Written by the legacy calls or the conductor (`legacy`, `fault`):
    /// never accepted from the typed API, at most one per node (enforced
    /// under the node lock), released by policy alone (no scope floors).
    Reserved,
    /// Asserted by callers through the typed API, at their scope, under
    /// the release floors; one per (type, scope, project).
    Typed,
}

/// One registered maintenance type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EntryType {
    pub name: &'static str,
    pub handling: Handling,
}

pub const LEGACY: &str = "legacy";
pub const FAULT: &str = "fault";
pub const HARDWARE_FAILURE: &str = "hardware_failure";
pub const OPERATOR_HOLD: &str = "operator_hold";

/// The type registry. Adding a type is adding one line here (spec, "Maintenance types").
pub const REGISTRY: &[EntryType] = &[
    EntryType { name: LEGACY, handling: Handling::Reserved },
    EntryType { name: FAULT, handling: Handling::Reserved },
    EntryType { name: HARDWARE_FAILURE, handling: Handling::Typed },
    EntryType { name: OPERATOR_HOLD, handling: Handling::Typed },
];

impl EntryType {
    /// The registered type of that name, if any.
    pub fn lookup(name: &str) -> Option<&'static EntryType> {
        REGISTRY.iter().find(|t| t.name == name)
    }

    /// Never accepted from the typed API.
    pub fn reserved(&self) -> bool {
        self.handling == Handling::Reserved
    }

    /// Release is governed by policy alone: the scope floors do not apply.
    pub fn policy_only_release(&self) -> bool {
        self.handling == Handling::Reserved
    }

    /// At most one entry of this type per node.
    pub fn one_per_node(&self) -> bool {
        self.handling == Handling::Reserved
    }
}

/// The scope an entry was asserted at. Ordered: `System > Owner > Lessee`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Scope {
    Lessee,
    Owner,
    System,
}

impl Scope {
    pub const ALL: [Scope; 3] = [Scope::System, Scope::Owner, Scope::Lessee];

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::System => "system",
            Scope::Owner => "owner",
            Scope::Lessee => "lessee",
        }
    }

    pub fn parse(s: &str) -> Option<Scope> {
        Scope::ALL.into_iter().find(|scope| scope.as_str() == s)
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A stored (naive UTC) time as the API shows it: `2026-06-10T10:30:00+00:00`.
pub fn iso8601(t: chrono::NaiveDateTime) -> String {
    use chrono::{Datelike, Timelike};
    // Written out rather than through a chrono format string, which is
    // parsed again on every call: listings format two or three times a row.
    match t.year() {
        // Outside this, and in a leap second, chrono's spelling is kept.
        year @ 0..=9999 if t.nanosecond() < 1_000_000_000 => format!(
            "{year:04}-{:02}-{:02}T{:02}:{:02}:{:02}+00:00",
            t.month(),
            t.day(),
            t.hour(),
            t.minute(),
            t.second()
        ),
        _ => t.format("%Y-%m-%dT%H:%M:%S+00:00").to_string(),
    }
}

/// The value `nodes.maintenance_reason` must hold for a node's active entries.
///
/// - no entry: `None`;
/// - the node's only entry is `legacy`: its reason verbatim (legacy round-trip
///   fidelity, spec scenario 7), `None` included;
/// - otherwise `<type>: <reason>` (just `<type>` when the reason is empty)
///   joined with `"; "`, in `asserted_at` order, ties broken by `id`.
pub fn synthesize_reason(entries: &[node_maintenance::Model]) -> Option<String> {
    match entries {
        [] => None,
        [only] if only.entry_type == LEGACY => only.reason.clone(),
        _ => {
            let mut ordered: Vec<&node_maintenance::Model> = entries.iter().collect();
            ordered.sort_by_key(|e| (e.asserted_at, e.id));
            let parts: Vec<String> = ordered
                .iter()
                .map(|e| match e.reason.as_deref() {
                    Some(reason) if !reason.is_empty() => format!("{}: {}", e.entry_type, reason),
                    _ => e.entry_type.clone(),
                })
                .collect();
            Some(parts.join("; "))
        }
    }
}

/// `nodes.maintenance_reason` is `TEXT`: 65,535 bytes on MySQL.
pub const REASON_COLUMN_MAX_BYTES: usize = 65_535;

/// What `nodes.maintenance_reason` holds: [`synthesize_reason`], cut at a
/// character boundary to fit the column (only many long reasons together
/// can reach it; each entry keeps its own reason whole).
pub fn maintenance_reason_column(entries: &[node_maintenance::Model]) -> Option<String> {
    let mut text = synthesize_reason(entries)?;
    if text.len() > REASON_COLUMN_MAX_BYTES {
        let mut cut = REASON_COLUMN_MAX_BYTES;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
    }
    Some(text)
}

/// Ironic's `nodes.fault` is `VARCHAR(255)`.
pub const FAULT_COLUMN_MAX_CHARS: usize = 255;

/// What to write to `nodes.fault` when a node's entries go from `before` to
/// `after`, or `None` to leave it. The column follows the fault entry as
/// the boolean follows every entry: the fault's kind (its `extra.kind`)
/// while one exists, NULL once it is released, and NULL with the last
/// entry, as Ironic clears the fault with the flag. While other entries
/// remain and none was a fault, a fault an older conductor wrote without an
/// entry is left as it is.
pub fn fault_column(before: &[node_maintenance::Model], after: &[node_maintenance::Model]) -> Option<Option<String>> {
    if let Some(fault) = after.iter().find(|e| e.entry_type == FAULT) {
        let kind = fault
            .extra
            .as_deref()
            .and_then(|x| serde_json::from_str::<serde_json::Value>(x).ok())
            .and_then(|x| x.get("kind").and_then(|k| k.as_str()).map(str::to_owned))
            .unwrap_or_else(|| FAULT.to_owned());
        return Some(Some(kind.chars().take(FAULT_COLUMN_MAX_CHARS).collect()));
    }
    if after.is_empty() || before.iter().any(|e| e.entry_type == FAULT) {
        return Some(None);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::NaiveDate;

    #[test]
    fn iso8601_spells_times_as_chrono_formats_them() {
        let chrono_spelling = |t: chrono::NaiveDateTime| t.format("%Y-%m-%dT%H:%M:%S+00:00").to_string();
        let times =
            ["2026-06-10T10:30:00.999999", "0001-01-02T03:04:05", "9999-12-31T23:59:59.5", "2024-02-29T00:00:00"];
        for text in times {
            let t: chrono::NaiveDateTime = text.parse().unwrap();
            assert_eq!(iso8601(t), chrono_spelling(t), "{text}");
        }
        let leap = NaiveDate::from_ymd_opt(2016, 12, 31).unwrap().and_hms_nano_opt(23, 59, 59, 1_500_000_000);
        let far = NaiveDate::from_ymd_opt(12345, 1, 1).unwrap().and_hms_opt(0, 0, 0);
        for t in [leap.unwrap(), far.unwrap()] {
            assert_eq!(iso8601(t), chrono_spelling(t));
        }
        assert_eq!(iso8601("2026-06-10T10:30:00".parse().unwrap()), "2026-06-10T10:30:00+00:00");
    }

    #[test]
    fn the_fault_column_follows_the_fault_entry_and_the_last_release() {
        let mut fault = entry(1, FAULT, Some("PSU"), 0);
        fault.extra = Some(r#"{"kind": "power failure"}"#.into());
        let hold = entry(2, "operator_hold", Some("x"), 1);
        assert_eq!(fault_column(&[], std::slice::from_ref(&fault)), Some(Some("power failure".into())));
        assert_eq!(fault_column(&[fault.clone(), hold.clone()], std::slice::from_ref(&hold)), Some(None));
        assert_eq!(fault_column(std::slice::from_ref(&hold), &[]), Some(None), "the last release clears it");
        assert_eq!(fault_column(&[], std::slice::from_ref(&hold)), None, "an old conductor's fault stays");
    }

    fn entry(id: i32, entry_type: &str, reason: Option<&str>, minute: u32) -> node_maintenance::Model {
        node_maintenance::Model {
            id,
            uuid: format!("00000000-0000-4000-8000-{id:012}"),
            node_id: 1,
            entry_type: entry_type.into(),
            reason: reason.map(Into::into),
            scope: "system".into(),
            asserted_by: "u".into(),
            asserted_by_project: String::new(),
            asserted_at: NaiveDate::from_ymd_opt(2026, 6, 10).unwrap().and_hms_opt(10, minute, 0).unwrap(),
            extra: None,
            version: None,
            created_at: None,
            updated_at: None,
            ends_at: None,
        }
    }

    #[test]
    fn no_entry_means_no_reason() {
        assert_eq!(synthesize_reason(&[]), None);
    }

    #[test]
    fn only_legacy_entry_round_trips_verbatim() {
        let e = entry(1, LEGACY, Some("LK_OP|HW_ERR: rebalancing rack"), 0);
        assert_eq!(synthesize_reason(&[e]).as_deref(), Some("LK_OP|HW_ERR: rebalancing rack"));
        assert_eq!(synthesize_reason(&[entry(1, LEGACY, None, 0)]), None);
    }

    #[test]
    fn several_entries_join_in_asserted_at_order_then_id() {
        let later = entry(1, OPERATOR_HOLD, Some("Row C power work"), 5);
        let first = entry(2, HARDWARE_FAILURE, Some("Disk 3"), 1);
        let tie = entry(3, LEGACY, None, 5);
        assert_eq!(
            synthesize_reason(&[later, first, tie]).as_deref(),
            Some("hardware_failure: Disk 3; operator_hold: Row C power work; legacy")
        );
    }

    #[test]
    fn a_single_typed_entry_is_prefixed() {
        let e = entry(1, HARDWARE_FAILURE, Some("Disk 3"), 0);
        assert_eq!(synthesize_reason(&[e]).as_deref(), Some("hardware_failure: Disk 3"));
    }

    #[test]
    fn the_column_value_fits_mysql_text() {
        let long: String = "é".repeat(20_000);
        let entries: Vec<_> = (0..3).map(|i| entry(i, OPERATOR_HOLD, Some(&long), i as u32)).collect();
        let column = maintenance_reason_column(&entries).unwrap();
        assert!(column.len() <= REASON_COLUMN_MAX_BYTES && column.starts_with("operator_hold: é"));
        let one = [entry(1, LEGACY, Some("short"), 0)];
        assert_eq!(maintenance_reason_column(&one), synthesize_reason(&one));
    }

    #[test]
    fn registry_knows_reserved_types() {
        assert!(EntryType::lookup(LEGACY).unwrap().reserved());
        assert!(EntryType::lookup(FAULT).unwrap().policy_only_release());
        assert!(!EntryType::lookup(OPERATOR_HOLD).unwrap().reserved());
        assert!(EntryType::lookup("lockout").is_none());
        assert!(Scope::System > Scope::Owner && Scope::Owner > Scope::Lessee);
    }
}
