//! Why the authority model refuses a request: one typed value per refusal,
//! its HTTP status and its message in this one file. Messages are Ironic's
//! (404s word for word) or the spec's (the release refusals); they name
//! fields as the API does (`ends_at`), and a caller passes the label its
//! users know where a value came from elsewhere (the CLI's `--end`).

use crate::authority::entry::{EXTRA_MAX_BYTES, IDENTITY_MAX_CHARS, REASON_MAX_CHARS};
use chrono::NaiveDateTime;
use nodemaint_entity::Scope;
use nodemaint_entity::vocab::{REGISTRY, iso8601};

/// What a time argument may look like, for error messages.
pub(crate) const TIME_FORMS: &str =
    "an RFC 3339 time such as 2026-12-05T22:00:00Z, or +30m / +2h / +1d from now (-1d: a day ago)";

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Rejected {
    // 404: the caller is not told whether the node exists.
    #[error("Node {node} could not be found.")]
    NodeNotFound { node: String },
    #[error("Maintenance entry {uuid} could not be found on node {node}.")]
    EntryNotFound { uuid: String, node: String },

    // 403
    #[error("{rule} is disallowed by policy")]
    Policy { rule: String },
    /// A release the floors or the remove rule refuse: every blocker's
    /// text (`release::Refusal`), all or nothing.
    #[error("{}", .blockers.join("; "))]
    Release { blockers: Vec<String> },

    // 409
    #[error("Maintenance entry {uuid} (type {ty}, scope {scope}, {}) is already active on node {node}", project_text(.project))]
    Duplicate { uuid: String, ty: String, scope: Scope, project: String, node: String },
    #[error(
        "Maintenance entry {} (type {}, scope {}, {}) is active on node {} {}, which overlaps this window",
        .0.uuid, .0.ty, .0.scope, project_text(&.0.project), .0.node,
        .0.ends_at.map(|e| format!("until {}", iso8601(e))).unwrap_or_else(|| "with no end".into())
    )]
    OverlapsActive(Box<Holder>),
    #[error(
        "Maintenance window {} (type {}, scope {}, {}) is scheduled on node {} from {} until {}, which overlaps this one",
        .0.uuid, .0.ty, .0.scope, project_text(&.0.project), .0.node,
        iso8601(.0.starts_at), .0.ends_at.map(iso8601).unwrap_or_default()
    )]
    OverlapsScheduled(Box<Holder>),
    #[error(
        "Maintenance entry {uuid} on node {node} is active, not scheduled; release it to end it early \
         (DELETE the entry, or nodemaint maintenance remove {node} {uuid})"
    )]
    CancelActive { uuid: String, node: String },

    // 400: what the caller sent.
    #[error("Unknown maintenance type '{name}'; known types are: {}", known_types())]
    UnknownType { name: String },
    #[error("Maintenance type '{name}' is reserved and cannot be added through the typed API")]
    ReservedType { name: String },
    #[error("Maintenance reason is {chars} characters long; at most {REASON_MAX_CHARS} are accepted")]
    ReasonTooLong { chars: usize },
    #[error("{what} contains a NUL character (\\u0000), which the database cannot store; remove it")]
    Nul { what: String },
    #[error("{what} is {chars} characters long; at most {IDENTITY_MAX_CHARS} are accepted")]
    IdentityTooLong { what: String, chars: usize },
    #[error("Maintenance extra must be a JSON object, not {kind}")]
    ExtraNotObject { kind: &'static str },
    #[error("Maintenance extra is {bytes} bytes once encoded; at most {EXTRA_MAX_BYTES} are accepted")]
    ExtraTooLarge { bytes: usize },
    #[error("Maintenance extra is not valid JSON ({detail}); pass an object such as '{{\"ticket\": \"CHG-2211\"}}'")]
    ExtraNotJson { detail: String },
    /// `field` is the name the caller used: `ends_at` on the wire, `--end` on the CLI.
    #[error("{field} '{text}' is not a time; expected {TIME_FORMS}")]
    NotATime { field: String, text: String },
    #[error(
        "{field} '{text}' is {} UTC, outside the times every database stores (1970-01-01T00:00:00Z to 9999-12-31T23:59:59Z)",
        .utc.format("%Y-%m-%dT%H:%M:%S")
    )]
    TimeOutOfRange { field: String, text: String, utc: NaiveDateTime },
    #[error("A maintenance window (an entry with ends_at) needs a reason: say why the node is held")]
    WindowNeedsReason,
    #[error(
        "A maintenance window with a start (starts_at) needs an end (ends_at); an entry without an end never expires"
    )]
    StartWithoutEnd,
    #[error("The window's end {} is not in the future (it is now {})", iso8601(*.end), iso8601(*.now))]
    EndNotInFuture { end: NaiveDateTime, now: NaiveDateTime },
    #[error("The window's end {} is not after its start {}", iso8601(*.end), iso8601(*.start))]
    EndNotAfterStart { end: NaiveDateTime, start: NaiveDateTime },
    #[error(
        "The new end {} is not in the future (it is now {}); to end a window early, release it",
        iso8601(*.end), iso8601(*.now)
    )]
    ExtensionNotInFuture { end: NaiveDateTime, now: NaiveDateTime },
    #[error(
        "The new end {} is not later than the current end {}; a window can be extended, not shortened \
         (to end it early, release it)",
        iso8601(*.end), iso8601(*.current)
    )]
    ExtensionNotLater { end: NaiveDateTime, current: NaiveDateTime },
    #[error("Maintenance entry {uuid} has no end, so it is not a window and cannot be extended")]
    NotAWindow { uuid: String },
    #[error("Unknown window state '{state}'; expected any of: {}", super::window::WindowState::names())]
    UnknownWindowState { state: String },
}

/// The entry or window in the way of a new one (boxed: the refusal stays small).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    pub uuid: String,
    pub ty: String,
    pub scope: Scope,
    pub project: String,
    pub node: String,
    pub starts_at: NaiveDateTime,
    pub ends_at: Option<NaiveDateTime>,
}

impl Rejected {
    /// The status the API answers with.
    pub fn http_status(&self) -> u16 {
        use Rejected::*;
        match self {
            NodeNotFound { .. } | EntryNotFound { .. } => 404,
            Policy { .. } | Release { .. } => 403,
            Duplicate { .. } | OverlapsActive(_) | OverlapsScheduled(_) | CancelActive { .. } => 409,
            UnknownType { .. }
            | ReservedType { .. }
            | ReasonTooLong { .. }
            | Nul { .. }
            | IdentityTooLong { .. }
            | ExtraNotObject { .. }
            | ExtraTooLarge { .. }
            | ExtraNotJson { .. }
            | NotATime { .. }
            | TimeOutOfRange { .. }
            | WindowNeedsReason
            | StartWithoutEnd
            | EndNotInFuture { .. }
            | EndNotAfterStart { .. }
            | ExtensionNotInFuture { .. }
            | ExtensionNotLater { .. }
            | NotAWindow { .. }
            | UnknownWindowState { .. } => 400,
        }
    }
}

pub(crate) type Result<T, E = Rejected> = std::result::Result<T, E>;

fn project_text(project: &str) -> String {
    if project.is_empty() { "no project".to_owned() } else { format!("project {project}") }
}

fn known_types() -> String {
    REGISTRY.iter().filter(|t| !t.reserved()).map(|t| t.name).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_refusal_has_its_status() {
        let t = chrono::DateTime::from_timestamp(0, 0).expect("epoch").naive_utc();
        let cases = [
            (Rejected::NodeNotFound { node: "n".into() }, 404, "Node n could not be found."),
            (Rejected::Policy { rule: "r".into() }, 403, "r is disallowed by policy"),
            (Rejected::Release { blockers: vec!["a".into(), "b".into()] }, 403, "a; b"),
            (
                Rejected::CancelActive { uuid: "u".into(), node: "n".into() },
                409,
                "Maintenance entry u on node n is active",
            ),
            (Rejected::EndNotInFuture { end: t, now: t }, 400, "The window's end 1970-01-01T00:00:00+00:00 is not"),
        ];
        for (rejected, status, text) in cases {
            assert_eq!(rejected.http_status(), status, "{rejected}");
            assert!(rejected.to_string().starts_with(text), "{rejected}");
        }
    }

    #[test]
    fn project_less_entries_say_so() {
        let dup = |project: &str| Rejected::Duplicate {
            uuid: "u".into(),
            ty: "operator_hold".into(),
            scope: Scope::System,
            project: project.into(),
            node: "n".into(),
        };
        assert!(dup("").to_string().contains("scope system, no project)"));
        assert!(dup("p1").to_string().contains("scope system, project p1)"));
    }
}
