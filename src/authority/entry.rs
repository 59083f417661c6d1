//! Maintenance entries as callers see them (the spec's entry object), and
//! validation of what callers send: the type registry, `reason`, `extra`.
//! Pure: no database.

use crate::authority::masking::{MASK, is_masked};
use crate::authority::rejected::{Rejected, Result};
use crate::authority::release::entry_scope;
use crate::authority::window::WindowState;
use nodemaint_entity::vocab::iso8601;
use nodemaint_entity::{EntryType, Scope, node_maintenance, node_maintenance_schedule};
use serde::Serialize;

/// The longest reason accepted, in characters. Ironic's `maintenance_reason`
/// is `TEXT` (64 KiB on MySQL): a single entry's reason must fit it whole.
pub const REASON_MAX_CHARS: usize = 16_000;
/// The longest `extra` accepted once JSON-encoded, in bytes (`TEXT` on MySQL).
pub const EXTRA_MAX_BYTES: usize = 65_535;
/// Identity fields are `VARCHAR(255)` in `node_maintenance`.
pub const IDENTITY_MAX_CHARS: usize = 255;

/// The spec's entry object, and from microversion 1.117 a window's times,
/// its state and whether this caller may release it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct EntryView {
    pub uuid: String,
    #[serde(rename = "type")]
    pub entry_type: String,
    pub reason: Option<String>,
    pub scope: String,
    pub asserted_by: String,
    /// The asserting project; `null` on the wire for a system entry, which
    /// has none (stored as `''` so the unique key covers it).
    #[serde(serialize_with = "empty_as_null")]
    pub asserted_by_project: String,
    /// When it became active; for a scheduled window, when it was scheduled.
    pub asserted_at: String,
    pub extra: serde_json::Value,
    /// `active`, or `scheduled` for a window that starts later.
    pub state: WindowState,
    /// A scheduled window's planned start.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub starts_at: Option<String>,
    /// A window's hard end; `null`: the entry never expires.
    pub ends_at: Option<String>,
    /// Whether this caller may release (or cancel, or extend) it, when asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub releasable: Option<bool>,
    /// Why not, when `releasable` is false (the 403 text).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub releasable_reason: Option<String>,
    /// The node's uuid, for links (not a field of the entry object).
    #[serde(skip)]
    pub node_uuid: Option<String>,
}

fn empty_as_null<S: serde::Serializer>(value: &str, serializer: S) -> std::result::Result<S::Ok, S::Error> {
    if value.is_empty() { serializer.serialize_none() } else { serializer.serialize_str(value) }
}

impl EntryView {
    /// The entry as a caller at `caller_scope` may see it.
    pub fn for_caller(entry: &node_maintenance::Model, caller_scope: Scope) -> EntryView {
        let masked = is_masked(caller_scope, entry_scope(entry));
        let hide = |value: &str| if masked { MASK.to_owned() } else { value.to_owned() };
        EntryView {
            uuid: entry.uuid.clone(),
            entry_type: entry.entry_type.clone(),
            reason: entry.reason.clone(),
            scope: entry.scope.clone(),
            asserted_by: hide(&entry.asserted_by),
            asserted_by_project: hide(&entry.asserted_by_project),
            asserted_at: iso8601(entry.asserted_at),
            extra: parse_extra(entry.extra.as_deref()),
            state: WindowState::Active,
            starts_at: None,
            ends_at: entry.ends_at.map(iso8601),
            releasable: None,
            releasable_reason: None,
            node_uuid: None,
        }
    }

    /// A scheduled window as a caller at `caller_scope` may see it.
    pub fn scheduled(window: &node_maintenance_schedule::Model, caller_scope: Scope) -> EntryView {
        EntryView {
            state: WindowState::Scheduled,
            starts_at: Some(iso8601(window.starts_at)),
            ..EntryView::for_caller(&window.as_pending_entry(), caller_scope)
        }
    }

    /// On the node with this uuid (for links).
    pub fn on_node(mut self, node: &nodemaint_entity::nodes::Model) -> EntryView {
        self.node_uuid = node.uuid.clone();
        self
    }

    /// With whether the caller may release it: `blocked` is the 403 text, if any.
    pub fn with_releasable(mut self, blocked: Option<String>) -> EntryView {
        self.releasable = Some(blocked.is_none());
        self.releasable_reason = blocked;
        self
    }
}

/// Stored `extra` text as a JSON object (`{}` when empty or unreadable).
pub(crate) fn parse_extra(text: Option<&str>) -> serde_json::Value {
    text.and_then(|t| serde_json::from_str::<serde_json::Value>(t).ok())
        .filter(serde_json::Value::is_object)
        .unwrap_or_else(|| serde_json::json!({}))
}

/// A type the typed API accepts: registered and not reserved.
pub(crate) fn typed_api_type(name: &str) -> Result<&'static EntryType> {
    match EntryType::lookup(name) {
        None => Err(Rejected::UnknownType { name: name.to_owned() }),
        Some(t) if t.reserved() => Err(Rejected::ReservedType { name: name.to_owned() }),
        Some(t) => Ok(t),
    }
}

pub(crate) fn check_reason(reason: Option<&str>) -> Result<()> {
    if let Some(reason) = reason {
        check_no_nul("Maintenance reason", reason)?;
        let chars = reason.chars().count();
        if chars > REASON_MAX_CHARS {
            return Err(Rejected::ReasonTooLong { chars });
        }
    }
    Ok(())
}

/// Text with a NUL character, which PostgreSQL cannot store in a text
/// column (and the other backends would keep, so one database would differ
/// from another), is refused before anything is written.
pub(crate) fn check_no_nul(what: &str, text: &str) -> Result<()> {
    if text.contains('\0') {
        return Err(Rejected::Nul { what: what.to_owned() });
    }
    Ok(())
}

/// `extra` must be a JSON object; returns its stored text.
pub(crate) fn check_extra(extra: Option<&serde_json::Value>) -> Result<Option<String>> {
    let Some(extra) = extra else { return Ok(None) };
    if !extra.is_object() {
        return Err(Rejected::ExtraNotObject { kind: json_kind(extra) });
    }
    let text = extra.to_string();
    if text.len() > EXTRA_MAX_BYTES {
        return Err(Rejected::ExtraTooLarge { bytes: text.len() });
    }
    Ok(Some(text))
}

/// Parses `--extra` text from the command line.
pub fn parse_extra_arg(text: &str) -> Result<serde_json::Value> {
    serde_json::from_str(text).map_err(|e| Rejected::ExtraNotJson { detail: e.to_string() })
}

fn json_kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// Identity fields stored in `node_maintenance` must fit `VARCHAR(255)`.
pub(crate) fn check_identity(what: &str, value: &str) -> Result<()> {
    check_no_nul(what, value)?;
    let chars = value.chars().count();
    if chars > IDENTITY_MAX_CHARS {
        return Err(Rejected::IdentityTooLong { what: what.to_owned(), chars });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::authority::release::tests::entry;

    #[test]
    fn nul_characters_are_refused_before_a_write() {
        let e = check_reason(Some("x\0y")).unwrap_err();
        assert_eq!(e.http_status(), 400);
        assert!(e.to_string().contains("NUL"), "{e}");
        assert!(check_identity("User id", "a\0").is_err());
        assert!(check_reason(Some("line\nbreak\ttab")).is_ok());
    }

    #[test]
    fn unknown_and_reserved_types_are_400() {
        let e = typed_api_type("lockout").unwrap_err();
        assert_eq!(e.http_status(), 400);
        assert!(e.to_string().starts_with("Unknown maintenance type 'lockout'"), "{e}");
        for reserved in ["legacy", "fault"] {
            let e = typed_api_type(reserved).unwrap_err();
            assert_eq!(e.http_status(), 400);
            assert!(e.to_string().contains("is reserved"), "{e}");
        }
        assert!(typed_api_type("hardware_failure").is_ok());
    }

    #[test]
    fn extra_must_be_an_object() {
        assert!(check_extra(Some(&serde_json::json!([1]))).unwrap_err().to_string().contains("not an array"));
        assert_eq!(check_extra(Some(&serde_json::json!({"a": 1}))).unwrap().as_deref(), Some("{\"a\":1}"));
        assert!(parse_extra_arg("{nope").unwrap_err().to_string().contains("not valid JSON"));
    }

    #[test]
    fn a_reason_of_a_mebibyte_is_refused() {
        let e = check_reason(Some(&"x".repeat(1 << 20))).unwrap_err();
        assert_eq!(e.http_status(), 400);
    }

    #[test]
    fn entries_serialise_as_the_spec_shows_and_mask_upward() {
        let mut e = entry("hardware_failure", "system", "");
        e.extra = Some("{\"kind\":\"disk\"}".into());
        let seen = serde_json::to_value(EntryView::for_caller(&e, Scope::Lessee)).unwrap();
        assert_eq!(seen["asserted_at"], "2026-06-10T10:30:00+00:00");
        assert_eq!(seen["type"], "hardware_failure");
        assert_eq!(seen["asserted_by"], MASK);
        assert_eq!(seen["asserted_by_project"], MASK);
        assert_eq!(seen["extra"]["kind"], "disk");
        let own = EntryView::for_caller(&e, Scope::System);
        assert_eq!(own.asserted_by, "someone");
    }
}
