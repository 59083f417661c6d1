//! Node history events for maintenance: one row per entry asserted,
//! updated or released, in the operation's transaction. The event text
//! names the entry (uuid, type, scope, reason) and who acted, in full: the
//! `user` (64) and `project` (80) columns get the identity cut to fit, so a
//! long identity never becomes a database error and is never lost.

use crate::authority::caller::Caller;
use crate::authority::masking::{self, EventShape};
use crate::store::statements;
use nodemaint_entity::Scope;
use nodemaint_entity::node_history::{self, EVENT_TYPE_MAINTENANCE, PROJECT_MAX, USER_MAX};
use nodemaint_entity::node_maintenance;
use nodemaint_entity::vocab::iso8601;
use nodemaint_migration::backfill::EVENT_REASON_MAX;
use nodemaint_runtime::sql::{SQLITE_UUID_V7_EXPR, concat, now_utc, quote, uuid_v4_expr};
use sea_orm::{ActiveValue::Set, ConnectionTrait, DbBackend, DbErr};
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
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

impl Action {
    fn verb(self) -> &'static str {
        match self {
            Action::Asserted => "asserted",
            Action::Updated => "updated",
            Action::Released => "released",
            Action::Scheduled => "scheduled",
            Action::Started => "started",
            Action::Extended => "extended",
            Action::Cancelled => "cancelled",
            Action::Expired => "expired",
        }
    }

    /// Whether the text names the entry's asserter beside the actor: not
    /// when the actor is the asserter (assert, schedule; masking reads that
    /// from the verb), nor for updates (as before windows).
    fn names_asserter(self) -> bool {
        !matches!(self, Action::Asserted | Action::Scheduled | Action::Updated)
    }
}

fn cut(text: &str, max: usize) -> String {
    text.chars().take(max).collect()
}

fn project_text(project: &str) -> &str {
    if project.is_empty() { "none" } else { project }
}

/// The event text for `action` on `entry` by `actor`; `note` says why when
/// the actor is a tool (e.g. "reconciliation") or what changed (a window's
/// old end). A window's end is named in every event about it.
pub fn event_text(action: Action, entry: &node_maintenance::Model, actor: &Caller, note: Option<&str>) -> String {
    let reason = entry.reason.as_deref().map(|r| cut(r, EVENT_REASON_MAX as usize)).unwrap_or_else(|| "None".into());
    let mut text =
        format!("maintenance entry {} {} (type {}, scope {}", entry.uuid, action.verb(), entry.entry_type, entry.scope);
    if action.names_asserter() {
        text.push_str(&format!(
            ", asserted by {} (project {}) at {}",
            entry.asserted_by,
            project_text(&entry.asserted_by_project),
            iso8601(entry.asserted_at)
        ));
    }
    if let Some(end) = entry.ends_at {
        text.push_str(&format!(", ends {}", iso8601(end)));
    }
    text.push_str(&format!(
        ", reason: {reason}) by {} (project {})",
        actor.user_id,
        project_text(actor.project_or_empty())
    ));
    if let Some(note) = note {
        text.push_str(&format!(" [{note}]"));
    }
    text
}

/// [`event_text`] as an SQL expression over an entry row aliased `m`, for
/// writers that insert a set of events with one `INSERT … SELECT` (the
/// tick): the same text, built by the database, so no row travels to the
/// client and back. Its one `?` is bound to the second value returned (the
/// part after the reason, which names the actor and the note).
pub(crate) fn event_text_sql(
    backend: DbBackend,
    action: Action,
    actor: &Caller,
    note: Option<&str>,
) -> (String, String) {
    let project = |column: &str| format!("CASE WHEN {column} = '' THEN 'none' ELSE {column} END");
    let asserter = concat(
        backend,
        &[
            "', asserted by '",
            "m.asserted_by",
            "' (project '",
            &project("m.asserted_by_project"),
            "') at '",
            &iso8601_sql(backend, "m.asserted_at"),
        ],
    );
    let ends = format!("COALESCE({}, '')", concat(backend, &["', ends '", &iso8601_sql(backend, "m.ends_at")]));
    let opening = format!("' {} (type '", action.verb());
    let reason = format!("COALESCE(SUBSTR(m.reason, 1, {EVENT_REASON_MAX}), 'None')");
    let ty = format!("m.{}", quote(backend, "type"));
    let mut parts = vec!["'maintenance entry '", "m.uuid", &opening, &ty, "', scope '", "m.scope"];
    if action.names_asserter() {
        parts.push(&asserter);
    }
    parts.extend([ends.as_str(), "', reason: '", &reason, "?"]);
    let mut after = format!(") by {} (project {})", actor.user_id, project_text(actor.project_or_empty()));
    if let Some(note) = note {
        after.push_str(&format!(" [{note}]"));
    }
    (concat(backend, &parts), after)
}

/// A new event's uuid, made by the database as the backfill makes them:
/// time-ordered on SQLite (see [`SQLITE_UUID_V7_EXPR`]), random elsewhere.
pub(crate) fn uuid_sql(backend: DbBackend) -> &'static str {
    if backend == DbBackend::Sqlite { SQLITE_UUID_V7_EXPR } else { uuid_v4_expr(backend) }
}

/// The `user` column of an event by `actor`: the identity cut to fit.
pub(crate) fn user_column(actor: &Caller) -> String {
    cut(&actor.user_id, USER_MAX)
}

/// The `project` column of an event by `actor`: cut to fit, NULL for none.
pub(crate) fn project_column(actor: &Caller) -> Option<String> {
    let project = actor.project_or_empty();
    (!project.is_empty()).then(|| cut(project, PROJECT_MAX))
}

/// [`iso8601`] in SQL: whole seconds, cut (not rounded) as chrono's `%S` does.
fn iso8601_sql(backend: DbBackend, column: &str) -> String {
    match backend {
        DbBackend::Postgres => format!("to_char({column}, 'YYYY-MM-DD\"T\"HH24:MI:SS\"+00:00\"')"),
        DbBackend::MySql => format!("DATE_FORMAT({column}, '%Y-%m-%dT%H:%i:%s+00:00')"),
        // The first 19 characters: SQLite would round a fraction of a second.
        _ => format!("strftime('%Y-%m-%dT%H:%M:%S+00:00', substr({column}, 1, 19))"),
    }
}

/// Writes one maintenance event for `entry` on its node.
pub async fn record<C: ConnectionTrait>(
    db: &C,
    action: Action,
    entry: &node_maintenance::Model,
    actor: &Caller,
    note: Option<&str>,
) -> Result<(), DbErr> {
    // No RETURNING: nothing reads the row back, and on MySQL an ActiveModel
    // insert would follow the INSERT with a SELECT of the new row.
    let row = event_model(action, entry, actor, note);
    db.execute_raw(statements::insert_event(db.get_database_backend(), &row)).await?;
    Ok(())
}

/// The history row for one event, for callers that insert many at once.
pub fn event_model(
    action: Action,
    entry: &node_maintenance::Model,
    actor: &Caller,
    note: Option<&str>,
) -> node_history::ActiveModel {
    node_history::ActiveModel {
        // Time-ordered (version 7): each event's uuid lands at the right edge
        // of node_history's unique uuid index instead of on a random leaf,
        // which is most of what a batch of history rows costs to write.
        uuid: Set(uuid::Uuid::now_v7().to_string()),
        event_type: Set(Some(EVENT_TYPE_MAINTENANCE.to_owned())),
        severity: Set(Some("info".to_owned())),
        event: Set(Some(event_text(action, entry, actor, note))),
        user: Set(Some(user_column(actor))),
        project: Set(project_column(actor)),
        node_id: Set(Some(entry.node_id)),
        version: Set(Some("1.0".to_owned())),
        created_at: Set(Some(now_utc())),
        ..Default::default()
    }
}

/// A history row as `history list` shows it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct HistoryView {
    pub uuid: String,
    pub created_at: Option<String>,
    pub event_type: Option<String>,
    pub severity: Option<String>,
    pub event: Option<String>,
    pub user: Option<String>,
    pub project: Option<String>,
}

impl HistoryView {
    /// This event as a caller holding `caller_scope` on a node with this
    /// owner and lessee may see it: identities above its scope masked, as
    /// the entry view masks them (see [`crate::authority::masking`]).
    pub fn for_caller(mut self, caller_scope: Scope, owner: Option<&str>, lessee: Option<&str>) -> HistoryView {
        let shape = self.event.as_deref().and_then(masking::event_shape);
        let actor = match shape {
            Some(EventShape { entry_scope, asserted: true }) => entry_scope,
            _ => masking::actor_scope(self.project.as_deref(), owner, lessee),
        };
        let hide_actor = masking::is_masked(caller_scope, actor);
        let hide_asserter = shape.is_some_and(|s| masking::is_masked(caller_scope, s.entry_scope));
        if hide_actor {
            self.user = self.user.map(|_| masking::MASK.to_owned());
            self.project = self.project.map(|_| masking::MASK.to_owned());
        }
        if shape.is_some() {
            self.event = self.event.map(|text| masking::mask_event_text(&text, hide_asserter, hide_actor));
        }
        self
    }
}

impl From<node_history::Model> for HistoryView {
    fn from(h: node_history::Model) -> Self {
        HistoryView {
            uuid: h.uuid,
            created_at: h.created_at.map(iso8601),
            event_type: h.event_type,
            severity: h.severity,
            event: h.event,
            user: h.user,
            project: h.project,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::authority::release::tests::entry;

    #[test]
    fn release_events_name_entry_asserter_and_releaser_in_full() {
        let mut e = entry("operator_hold", "lessee", "a0a0a0");
        e.reason = Some("Row C power work".into());
        let long_user = "u".repeat(100);
        let actor = Caller::project(long_user.clone(), "b0b0b0", &["member"]);
        let text = event_text(Action::Released, &e, &actor, None);
        assert!(text.starts_with("maintenance entry 8d8d9a25-c1d0-4d4c-93a6-2a4a7e2bf7d8 released (type operator_hold, scope lessee, asserted by someone (project a0a0a0) at 2026-06-10T10:30:00+00:00, reason: Row C power work) by "), "{text}");
        assert!(text.contains(&long_user), "the full identity is kept in the text");
        assert_eq!(cut(&long_user, USER_MAX).len(), 64);
    }

    #[test]
    fn event_uuids_are_time_ordered() {
        let e = entry("operator_hold", "lessee", "a0a0a0");
        let actor = Caller::system("op", &["admin"]);
        let uuids: Vec<uuid::Uuid> = (0..3)
            .map(|_| {
                let model = event_model(Action::Asserted, &e, &actor, None);
                uuid::Uuid::parse_str(model.uuid.as_ref()).unwrap()
            })
            .collect();
        assert!(uuids.iter().all(|u| u.get_version_num() == 7), "{uuids:?}");
        assert!(uuids.windows(2).all(|w| w[0] < w[1]), "ordered as created: {uuids:?}");
    }
}
