//! The payloads: Ironic 39's `NodePayload` (1.17) for the legacy calls'
//! `maintenance_set` notifications, and nodemaint's own versioned payloads
//! for typed events. Pure: the node's columns come in as values already
//! read (`store::outbox::node_columns`).

use super::message::{isotime, versioned_object};
use crate::authority::event::{EventKind, MaintenanceEvent};
use chrono::NaiveDateTime;
use serde_json::{Map, Value, json};

/// How a `NodePayload` field is stored in Ironic's `nodes` table and
/// shown in the payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// A string column, `null` when NULL.
    Text,
    /// A boolean column.
    Bool,
    /// A `DateTimeField`: `2026-12-07T10:36:41Z`.
    Time,
    /// A JSON-encoded dict in a TEXT column (Ironic's `JsonEncodedDict`):
    /// `{}` when NULL, as Ironic's objects load it.
    Dict,
}

/// `NodePayload` 1.17's fields that are `nodes` columns, in the class's
/// field order (as Ironic serialises them); `traits` (from `node_traits`)
/// goes between `target_provision_state` and `updated_at`.
pub const NODE_FIELDS: [(&str, FieldKind); 46] = {
    use FieldKind::{Bool, Dict, Text, Time};
    [
        ("clean_step", Dict),
        ("conductor_group", Text),
        ("console_enabled", Bool),
        ("created_at", Time),
        ("deploy_step", Dict),
        ("description", Text),
        ("disable_power_off", Bool),
        ("driver", Text),
        ("extra", Dict),
        ("boot_mode", Text),
        ("secure_boot", Bool),
        ("inspection_finished_at", Time),
        ("inspection_started_at", Time),
        ("instance_uuid", Text),
        ("last_error", Text),
        ("maintenance", Bool),
        ("maintenance_reason", Text),
        ("fault", Text),
        ("bios_interface", Text),
        ("boot_interface", Text),
        ("console_interface", Text),
        ("deploy_interface", Text),
        ("inspect_interface", Text),
        ("management_interface", Text),
        ("network_interface", Text),
        ("power_interface", Text),
        ("raid_interface", Text),
        ("rescue_interface", Text),
        ("storage_interface", Text),
        ("vendor_interface", Text),
        ("name", Text),
        ("owner", Text),
        ("lessee", Text),
        ("power_state", Text),
        ("properties", Dict),
        ("protected", Bool),
        ("protected_reason", Text),
        ("provision_state", Text),
        ("provision_updated_at", Time),
        ("resource_class", Text),
        ("retired", Bool),
        ("retired_reason", Text),
        ("target_power_state", Text),
        ("target_provision_state", Text),
        ("updated_at", Time),
        ("uuid", Text),
    ]
};

pub const NODE_PAYLOAD: &str = "NodePayload";
pub const NODE_PAYLOAD_VERSION: &str = "1.17";

/// One column's value as read from the database.
#[derive(Debug, Clone, PartialEq)]
pub enum Column {
    Null,
    Text(String),
    Bool(bool),
    Time(NaiveDateTime),
}

/// A node's columns by name (those the database has; a fresh nodemaint
/// database has few of Ironic's), and its traits.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NodeColumns {
    pub values: Vec<(&'static str, Column)>,
    pub traits: Vec<String>,
}

impl NodeColumns {
    fn get(&self, name: &str) -> &Column {
        self.values.iter().find(|(n, _)| *n == name).map_or(&Column::Null, |(_, v)| v)
    }

    /// This node with `name` set to `value` (`.start` shows the node
    /// before the save: its old `updated_at` and `fault`).
    pub fn with(mut self, name: &'static str, value: Column) -> NodeColumns {
        match self.values.iter_mut().find(|(n, _)| *n == name) {
            Some((_, v)) => *v = value,
            None => self.values.push((name, value)),
        }
        self
    }
}

/// The `NodePayload` of `node`, as a versioned object.
pub fn node_payload(node: &NodeColumns) -> Value {
    let mut data = Map::new();
    for (name, kind) in NODE_FIELDS {
        if name == "updated_at" {
            let mut traits = node.traits.clone();
            traits.sort();
            data.insert("traits".into(), json!(traits));
        }
        data.insert(name.into(), field_value(kind, node.get(name)));
    }
    versioned_object(NODE_PAYLOAD, NODE_PAYLOAD_VERSION, Value::Object(data))
}

fn field_value(kind: FieldKind, column: &Column) -> Value {
    match (kind, column) {
        // A dict that does not parse as an object is shown as Ironic's
        // objects show a NULL one: it cannot be a dict field's value.
        (FieldKind::Dict, Column::Text(text)) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => Value::Object(map),
            _ => json!({}),
        },
        (FieldKind::Dict, _) => json!({}),
        (_, Column::Null) => Value::Null,
        (FieldKind::Time, Column::Time(at)) => json!(isotime(*at)),
        (_, Column::Text(text)) => json!(text),
        (_, Column::Bool(b)) => json!(b),
        (_, Column::Time(at)) => json!(isotime(*at)),
    }
}

/// The payload of a typed event (nodemaint's own objects, in Ironic's
/// namespace and style): `MaintenanceEntryPayload` or
/// `MaintenanceWindowPayload`, version 1.0.
pub fn event_payload(event: &MaintenanceEvent, node_uuid: &str) -> Value {
    let time = |t: Option<NaiveDateTime>| t.map(isotime);
    let data = json!({
        "node_uuid": node_uuid,
        "uuid": event.entry_uuid,
        "type": event.entry_type,
        "scope": event.scope,
        "reason": event.reason,
        "asserted_by": event.asserted_by,
        "asserted_by_project": Some(&event.asserted_by_project).filter(|p| !p.is_empty()),
        "asserted_at": time(Some(event.asserted_at)),
        "ends_at": time(event.ends_at),
        "event": event.kind.as_str(),
        "actor": event.actor,
        "actor_project": Some(&event.actor_project).filter(|p| !p.is_empty()),
        "note": event.note,
        "created_at": time(Some(event.at)),
    });
    let name = if is_window_event(event.kind) { "MaintenanceWindowPayload" } else { "MaintenanceEntryPayload" };
    versioned_object(name, "1.0", data)
}

/// Whether `kind` is about a window's schedule rather than any entry.
fn is_window_event(kind: EventKind) -> bool {
    matches!(
        kind,
        EventKind::Scheduled | EventKind::Started | EventKind::Extended | EventKind::Cancelled | EventKind::Expired
    )
}

/// A typed event's `event_type`, in Ironic's `baremetal.<object>.<action>.<what happened>`:
/// `baremetal.node.maintenance_entry.asserted`, `….maintenance_window.started`.
pub fn event_type(kind: EventKind) -> String {
    let object = if is_window_event(kind) { "maintenance_window" } else { "maintenance_entry" };
    format!("baremetal.node.{object}.{}", kind.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_payload_has_ironics_47_fields_with_its_defaults() {
        let at = NaiveDateTime::parse_from_str("2026-12-07 10:36:41.25", "%Y-%m-%d %H:%M:%S%.f").unwrap();
        let node = NodeColumns {
            values: vec![
                ("uuid", Column::Text("n1".into())),
                ("maintenance", Column::Bool(true)),
                ("extra", Column::Text(r#"{"a": 1}"#.into())),
                ("properties", Column::Text("not json".into())),
                ("updated_at", Column::Time(at)),
            ],
            traits: vec!["CUSTOM_B".into(), "CUSTOM_A".into()],
        };
        let payload = node_payload(&node);
        assert_eq!(payload["ironic_object.name"], "NodePayload");
        assert_eq!(payload["ironic_object.version"], "1.17");
        let data = payload["ironic_object.data"].as_object().unwrap();
        assert_eq!(data.len(), 47);
        let keys: Vec<&str> = data.keys().map(String::as_str).collect();
        assert_eq!(&keys[..2], ["clean_step", "conductor_group"]);
        assert_eq!(&keys[44..], ["traits", "updated_at", "uuid"]);
        assert_eq!(data["maintenance"], true);
        assert_eq!(data["extra"], json!({"a": 1}));
        assert_eq!(data["properties"], json!({}));
        assert_eq!(data["clean_step"], json!({}));
        assert_eq!(data["owner"], Value::Null);
        assert_eq!(data["updated_at"], "2026-12-07T10:36:41Z");
        assert_eq!(data["traits"], json!(["CUSTOM_A", "CUSTOM_B"]));
    }

    #[test]
    fn event_types_name_the_entry_or_the_window() {
        assert_eq!(event_type(EventKind::Asserted), "baremetal.node.maintenance_entry.asserted");
        assert_eq!(event_type(EventKind::Released), "baremetal.node.maintenance_entry.released");
        assert_eq!(event_type(EventKind::Expired), "baremetal.node.maintenance_window.expired");
        assert_eq!(event_type(EventKind::Scheduled), "baremetal.node.maintenance_window.scheduled");
    }
}
