//! Maintenance events as values: what happened to an entry, who did it and
//! when, in typed fields. The store records each event twice in one
//! transaction: its fields in `node_maintenance_event`, and in
//! `node_history` (Ironic's readers) the text [`MaintenanceEvent::text`]
//! renders from them. Whatever needs to know what happened (masking, the
//! ended-window listing) reads the fields; nothing parses the text.
//!
//! The text has one template ([`template`]): rendered here from a value,
//! and by `store::history` as SQL over the fields' columns for writers that
//! insert a set of events with one statement. A test holds the two equal
//! byte for byte on every backend.

use crate::authority::caller::Caller;
use crate::authority::masking::{self, MASK};
use chrono::{NaiveDateTime, SubsecRound};
use nodemaint_entity::vocab::iso8601;
use nodemaint_entity::{Scope, node_maintenance, node_maintenance_event};
use nodemaint_migration::backfill::EVENT_REASON_MAX;
use serde::Serialize;
use std::borrow::Cow;

/// What happened to an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    Asserted,
    Updated,
    Released,
    /// A window planned to start later (its asserter acts).
    Scheduled,
    /// A scheduled window became active (the schedule acts).
    Started,
    /// A window's end moved later.
    Extended,
    /// A scheduled window removed before it started.
    Cancelled,
    /// A window released at its end (the schedule acts).
    Expired,
}

impl EventKind {
    pub const ALL: [EventKind; 8] = [
        EventKind::Asserted,
        EventKind::Updated,
        EventKind::Released,
        EventKind::Scheduled,
        EventKind::Started,
        EventKind::Extended,
        EventKind::Cancelled,
        EventKind::Expired,
    ];

    /// The stored name, which is also the verb of the history text.
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Asserted => "asserted",
            EventKind::Updated => "updated",
            EventKind::Released => "released",
            EventKind::Scheduled => "scheduled",
            EventKind::Started => "started",
            EventKind::Extended => "extended",
            EventKind::Cancelled => "cancelled",
            EventKind::Expired => "expired",
        }
    }

    pub fn parse(s: &str) -> Option<EventKind> {
        EventKind::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// Whether the actor is the entry's asserter (assert, schedule), so
    /// the actor acted at the entry's scope.
    pub fn by_asserter(self) -> bool {
        matches!(self, EventKind::Asserted | EventKind::Scheduled)
    }

    /// Whether the text names the entry's asserter beside the actor: not
    /// when the actor is the asserter, nor for updates.
    fn names_asserter(self) -> bool {
        !matches!(self, EventKind::Asserted | EventKind::Scheduled | EventKind::Updated)
    }
}

/// One maintenance event (see the module docs). Times are whole seconds,
/// as the text shows them and as every backend stores them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MaintenanceEvent {
    pub kind: EventKind,
    pub node_id: i32,
    pub entry_uuid: String,
    #[serde(rename = "type")]
    pub entry_type: String,
    pub scope: String,
    pub reason: Option<String>,
    pub asserted_by: String,
    /// Empty for none (a system entry).
    pub asserted_by_project: String,
    pub asserted_at: NaiveDateTime,
    /// The window's planned end, when the entry has one.
    pub ends_at: Option<NaiveDateTime>,
    /// Who acted, in full.
    pub actor: String,
    /// The actor's project; empty for none.
    pub actor_project: String,
    /// Why, when the actor is a tool, or what changed.
    pub note: Option<String>,
    pub at: NaiveDateTime,
}

impl MaintenanceEvent {
    /// A typed row read back as the event it records; `None` for a row
    /// typed from an older text (its identities are not known).
    pub fn from_row(row: &node_maintenance_event::Model) -> Option<MaintenanceEvent> {
        if row.from_text {
            return None;
        }
        Some(MaintenanceEvent {
            kind: EventKind::parse(&row.kind)?,
            node_id: row.node_id,
            entry_uuid: row.entry_uuid.clone(),
            entry_type: row.entry_type.clone(),
            scope: row.scope.clone(),
            reason: row.reason.clone(),
            asserted_by: row.asserted_by.clone().unwrap_or_default(),
            asserted_by_project: row.asserted_by_project.clone().unwrap_or_default(),
            asserted_at: row.asserted_at?.trunc_subsecs(0),
            ends_at: row.ends_at.map(|t| t.trunc_subsecs(0)),
            actor: row.actor.clone(),
            actor_project: row.actor_project.clone(),
            note: row.note.clone(),
            at: row.created_at.trunc_subsecs(0),
        })
    }

    /// `kind` happening to `entry` by `actor` at `at`.
    pub fn new(
        kind: EventKind,
        entry: &node_maintenance::Model,
        actor: &Caller,
        note: Option<&str>,
        at: NaiveDateTime,
    ) -> MaintenanceEvent {
        MaintenanceEvent {
            kind,
            node_id: entry.node_id,
            entry_uuid: entry.uuid.clone(),
            entry_type: entry.entry_type.clone(),
            scope: entry.scope.clone(),
            reason: entry.reason.clone(),
            asserted_by: entry.asserted_by.clone(),
            asserted_by_project: entry.asserted_by_project.clone(),
            asserted_at: entry.asserted_at.trunc_subsecs(0),
            ends_at: entry.ends_at.map(|t| t.trunc_subsecs(0)),
            actor: actor.user_id.clone(),
            actor_project: actor.project_or_empty().to_owned(),
            note: note.map(str::to_owned),
            at: at.trunc_subsecs(0),
        }
    }

    /// The history text: the kind's one template filled from this event.
    pub fn text(&self) -> String {
        let mut out = String::with_capacity(160 + self.reason.as_ref().map_or(0, String::len));
        render(&template(self.kind), self, &mut out);
        out
    }

    /// This event with the asserter and/or the actor replaced by [`MASK`]
    /// (their projects too), as a reader below their scope sees it.
    pub fn masked(&self, asserter: bool, actor: bool) -> MaintenanceEvent {
        let mut seen = self.clone();
        if asserter {
            seen.asserted_by = MASK.to_owned();
            seen.asserted_by_project = MASK.to_owned();
        }
        if actor {
            seen.actor = MASK.to_owned();
            seen.actor_project = MASK.to_owned();
        }
        seen
    }

    /// This event as a reader at `reader` on a node with this owner and
    /// lessee may see it: the identities above the reader's scope masked,
    /// decided from the fields (see `authority/masking.rs`).
    pub fn for_reader(&self, reader: Scope, owner: Option<&str>, lessee: Option<&str>) -> MaintenanceEvent {
        let entry_scope = Scope::parse(&self.scope).unwrap_or(Scope::System);
        let (asserter, actor) = masking::event_masks(
            reader,
            entry_scope,
            self.kind.by_asserter(),
            Some(self.actor_project.as_str()),
            owner,
            lessee,
        );
        self.masked(asserter, actor)
    }

    /// The value of `field` in the text; `None` leaves out an optional part.
    fn field(&self, field: Field) -> Option<Cow<'_, str>> {
        let project = |p: &str| if p.is_empty() { "none".to_owned() } else { p.to_owned() };
        Some(match field {
            Field::EntryUuid => Cow::Borrowed(self.entry_uuid.as_str()),
            Field::Kind => Cow::Borrowed(self.kind.as_str()),
            Field::Type => Cow::Borrowed(self.entry_type.as_str()),
            Field::Scope => Cow::Borrowed(self.scope.as_str()),
            Field::AssertedBy => Cow::Borrowed(self.asserted_by.as_str()),
            Field::AssertedByProject => Cow::Owned(project(&self.asserted_by_project)),
            Field::AssertedAt => Cow::Owned(iso8601(self.asserted_at)),
            Field::EndsAt => Cow::Owned(iso8601(self.ends_at?)),
            Field::Reason => match &self.reason {
                Some(r) => Cow::Owned(r.chars().take(EVENT_REASON_MAX as usize).collect()),
                None => Cow::Borrowed("None"),
            },
            Field::Actor => Cow::Borrowed(self.actor.as_str()),
            Field::ActorProject => Cow::Owned(project(&self.actor_project)),
            Field::Note => Cow::Borrowed(self.note.as_deref()?),
        })
    }
}

/// A field of an event as the text shows it: a project that is empty reads
/// `none`, a missing reason `None`, a time [`iso8601`], a reason at most
/// [`EVENT_REASON_MAX`] characters (the entry keeps it whole).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Field {
    EntryUuid,
    Kind,
    Type,
    Scope,
    AssertedBy,
    AssertedByProject,
    AssertedAt,
    EndsAt,
    Reason,
    Actor,
    ActorProject,
    Note,
}

/// A piece of the text's template.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Piece {
    Text(&'static str),
    Field(Field),
    /// Its pieces when the field has a value, else nothing.
    Optional(Field, &'static [Piece]),
}

use Piece::{Field as F, Optional, Text};

const OPENING: &[Piece] = &[
    Text(TEXT_OPENING),
    F(Field::EntryUuid),
    Text(" "),
    F(Field::Kind),
    Text(" (type "),
    F(Field::Type),
    Text(", scope "),
    F(Field::Scope),
];
const ASSERTER: &[Piece] = &[
    Text(", asserted by "),
    F(Field::AssertedBy),
    Text(" (project "),
    F(Field::AssertedByProject),
    Text(") at "),
    F(Field::AssertedAt),
];
const CLOSING: &[Piece] = &[
    Optional(Field::EndsAt, &[Text(", ends "), F(Field::EndsAt)]),
    Text(", reason: "),
    F(Field::Reason),
    Text(") by "),
    F(Field::Actor),
    Text(" (project "),
    F(Field::ActorProject),
    Text(")"),
    Optional(Field::Note, &[Text(" ["), F(Field::Note), Text("]")]),
];

/// The history text of an event of `kind`: `maintenance entry UUID KIND
/// (type T, scope S[, asserted by A (project P) at T][, ends E], reason:
/// R) by U (project Q)[ [note]]`. The asserter is named when it is not the
/// actor; a window's end in every event about it.
pub(crate) fn template(kind: EventKind) -> Vec<Piece> {
    let mut pieces = OPENING.to_vec();
    if kind.names_asserter() {
        pieces.extend_from_slice(ASSERTER);
    }
    pieces.extend_from_slice(CLOSING);
    pieces
}

fn render(pieces: &[Piece], event: &MaintenanceEvent, out: &mut String) {
    for piece in pieces {
        match *piece {
            Text(text) => out.push_str(text),
            F(field) => out.push_str(&event.field(field).unwrap_or_default()),
            Optional(field, inner) => {
                if event.field(field).is_some() {
                    render(inner, event, out);
                }
            }
        }
    }
}

/// How every maintenance event's text begins.
pub(crate) const TEXT_OPENING: &str = "maintenance entry ";

/// What a reader below system scope sees of a maintenance event that has
/// no typed fields (written by an older nodemaint after the upgrade).
pub(crate) const UNTYPED: &str =
    "maintenance event recorded without typed fields (by an older nodemaint); its text is shown at system scope";

/// The text a reader below an event's asserter or actor sees of an event
/// typed from an older history text, whose identities are not known apart
/// from the rest: its opening only, so nothing of them can show.
pub(crate) fn opening_only(kind: &str, entry_uuid: &str, entry_type: &str, scope: &str) -> String {
    format!(
        "maintenance entry {entry_uuid} {kind} (type {entry_type}, scope {scope}; recorded before typed events, \
         the rest is shown at system scope)"
    )
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::authority::release::tests::entry;

    pub(crate) fn at(s: &str) -> NaiveDateTime {
        NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S").unwrap()
    }

    #[test]
    fn the_text_names_the_entry_its_asserter_and_the_actor_in_full() {
        let mut e = entry("operator_hold", "lessee", "a0a0a0");
        e.reason = Some("Row C power work".into());
        let long_user = "u".repeat(100);
        let actor = Caller::project(long_user.clone(), "b0b0b0", &["member"]);
        let text = MaintenanceEvent::new(EventKind::Released, &e, &actor, None, at("2026-12-05T10:00:00")).text();
        assert_eq!(
            text,
            format!(
                "maintenance entry 8d8d9a25-c1d0-4d4c-93a6-2a4a7e2bf7d8 released (type operator_hold, scope lessee, \
                 asserted by someone (project a0a0a0) at 2026-06-10T10:30:00+00:00, reason: Row C power work) by \
                 {long_user} (project b0b0b0)"
            )
        );
    }

    #[test]
    fn an_assert_names_no_separate_asserter_and_optional_parts_show_when_set() {
        let mut e = entry("operator_hold", "system", "");
        e.reason = None;
        e.ends_at = Some(at("2026-12-06T03:00:00"));
        let actor = Caller::system("op", &["admin"]);
        let text =
            MaintenanceEvent::new(EventKind::Asserted, &e, &actor, Some("why"), at("2026-12-05T10:00:00")).text();
        assert_eq!(
            text,
            "maintenance entry 8d8d9a25-c1d0-4d4c-93a6-2a4a7e2bf7d8 asserted (type operator_hold, scope system, \
             ends 2026-12-06T03:00:00+00:00, reason: None) by op (project none) [why]"
        );
    }

    #[test]
    fn masking_replaces_fields_so_no_separator_in_an_identity_moves_it() {
        let mut e = entry("operator_hold", "system", "");
        e.asserted_by = "op) secret (x".into();
        e.reason = Some("PSU ) by x (project y) at z, asserted by w".into());
        let actor = Caller::project("les) by me (project q", "les1", &["member"]);
        let event = MaintenanceEvent::new(EventKind::Released, &e, &actor, None, at("2026-12-05T10:00:00"));
        let seen = event.masked(true, false).text();
        assert!(!seen.contains("secret"), "{seen}");
        assert!(seen.contains("asserted by ****** (project ******) at"), "{seen}");
        assert!(seen.contains("by les) by me (project q (project les1)"), "the actor is shown whole: {seen}");
        let seen = event.masked(true, true).text();
        assert!(!seen.contains("secret") && !seen.contains("les1") && !seen.contains("by me"), "{seen}");
    }

    /// Text built from the template's separators, commas, newlines and
    /// non-ASCII, with `marker` (which nothing else holds) inside.
    fn tricky(marker: &'static str) -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just(") by ".to_owned()),
            Just(", asserted by ".to_owned()),
            Just("(project ".to_owned()),
            Just(") at ".to_owned()),
            Just(", ends ".to_owned()),
            Just(", reason: ".to_owned()),
            Just("\n".to_owned()),
            Just(", ".to_owned()),
            "[a-zü ()\\[\\]]{0,6}",
        ];
        proptest::collection::vec(piece, 0..6)
            .prop_map(move |parts| format!("{}{marker}{}", parts.concat(), parts.concat()))
    }

    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]
        /// Whatever ids and reasons hold, a masked identity shows no part of
        /// itself (its marker), and one not masked shows whole.
        #[test]
        fn no_masked_identity_shows_whatever_the_ids_and_reasons_hold(
            asserter in tricky("§A"), asserter_project in tricky("§A"), actor in tricky("§B"),
            actor_project in tricky("§B"), reason in tricky("~"), note in tricky("~"),
            kind in proptest::sample::select(EventKind::ALL.to_vec()),
            hide_asserter in any::<bool>(), hide_actor in any::<bool>(),
        ) {
            let mut e = entry("operator_hold", "system", "");
            e.asserted_by = asserter.clone();
            e.asserted_by_project = asserter_project.clone();
            e.reason = Some(reason);
            let caller = Caller::project(actor.clone(), actor_project.clone(), &["admin"]);
            let event = MaintenanceEvent::new(kind, &e, &caller, Some(&note), at("2026-12-05T10:00:00"));
            let seen = event.masked(hide_asserter, hide_actor).text();
            prop_assert_eq!(seen.contains("§A"), !hide_asserter && kind.names_asserter(), "{}", seen);
            prop_assert_eq!(seen.contains("§B"), !hide_actor, "{}", seen);
            if !hide_actor {
                let named = format!(") by {actor} (project {actor_project})");
                prop_assert!(seen.contains(&named), "{}", seen);
            }
            if !hide_asserter && kind.names_asserter() {
                let named = format!(", asserted by {asserter} (project {asserter_project}) at ");
                prop_assert!(seen.contains(&named), "{}", seen);
            }
        }
    }

    #[test]
    fn kinds_round_trip_through_their_names() {
        for kind in EventKind::ALL {
            assert_eq!(EventKind::parse(kind.as_str()), Some(kind));
        }
        assert_eq!(EventKind::parse("deleted"), None);
    }
}
