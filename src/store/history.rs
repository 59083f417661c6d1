//! Maintenance events in the store: each event is one `node_history` row
//! (its text rendered from the event, for Ironic's readers) and one
//! `node_maintenance_event` row (its typed fields, keyed by the history
//! row's uuid), written in the operation's transaction. The `user` (64)
//! and `project` (80) columns of history get the identity cut to fit; the
//! text and the typed row keep it whole.
//!
//! Set writers (the tick, reconcile) insert the typed rows with one
//! `INSERT … SELECT` and the history rows from them with another, the text
//! built by the database from the same template ([`text_sql`]).

use crate::authority::event::{self, EventKind, Field, MaintenanceEvent, Piece};
use crate::authority::masking::{self, MASK};
use crate::store::statements;
use chrono::SubsecRound;
use nodemaint_entity::node_history::{self, EVENT_TYPE_MAINTENANCE, PROJECT_MAX, USER_MAX};
use nodemaint_entity::vocab::iso8601;
use nodemaint_entity::{Scope, node_maintenance_event};
use nodemaint_migration::backfill::EVENT_REASON_MAX;
use nodemaint_runtime::sql::{SQLITE_UUID_V7_EXPR, concat, quote, stmt, uuid_v4_expr};
use sea_orm::{
    ActiveValue::Set, ColumnTrait, ConnectionTrait, DbBackend, DbErr, EntityTrait, QueryFilter, QueryOrder,
    QuerySelect, Value,
};
use serde::Serialize;
use std::collections::HashMap;

fn cut(text: &str, max: usize) -> String {
    text.chars().take(max).collect()
}

/// Writes one event: its history row and its typed row.
pub async fn record_event<C: ConnectionTrait>(db: &C, event: &MaintenanceEvent) -> Result<(), DbErr> {
    // No RETURNING: nothing reads the rows back, and on MySQL an ActiveModel
    // insert would follow the INSERT with a SELECT of the new row.
    let (history, typed) = event_rows(event);
    let backend = db.get_database_backend();
    db.execute_raw(statements::insert_history(backend, &history)).await?;
    db.execute_raw(statements::insert_typed_event(backend, &typed)).await?;
    Ok(())
}

/// Writes a set of events: two multi-row inserts.
pub async fn record_all<C: ConnectionTrait>(
    db: &C,
    events: &[impl std::borrow::Borrow<MaintenanceEvent>],
) -> Result<(), DbErr> {
    if events.is_empty() {
        return Ok(());
    }
    let (history, typed): (Vec<_>, Vec<_>) = events.iter().map(|e| event_rows(e.borrow())).unzip();
    node_history::Entity::insert_many(history).exec(db).await?;
    node_maintenance_event::Entity::insert_many(typed).exec(db).await?;
    Ok(())
}

/// The two rows of one event.
pub(crate) fn event_rows(event: &MaintenanceEvent) -> (node_history::ActiveModel, node_maintenance_event::ActiveModel) {
    // Time-ordered (version 7): each event's uuid lands at the right edge
    // of node_history's unique uuid index instead of on a random leaf,
    // which is most of what a batch of history rows costs to write.
    let uuid = uuid::Uuid::now_v7().to_string();
    let history = node_history::ActiveModel {
        uuid: Set(uuid.clone()),
        event_type: Set(Some(EVENT_TYPE_MAINTENANCE.to_owned())),
        severity: Set(Some("info".to_owned())),
        event: Set(Some(event.text())),
        user: Set(Some(cut(&event.actor, USER_MAX))),
        project: Set((!event.actor_project.is_empty()).then(|| cut(&event.actor_project, PROJECT_MAX))),
        node_id: Set(Some(event.node_id)),
        version: Set(Some("1.0".to_owned())),
        created_at: Set(Some(event.at)),
        ..Default::default()
    };
    let typed = node_maintenance_event::ActiveModel {
        history_uuid: Set(uuid),
        node_id: Set(event.node_id),
        kind: Set(event.kind.as_str().to_owned()),
        entry_uuid: Set(event.entry_uuid.clone()),
        entry_type: Set(event.entry_type.clone()),
        scope: Set(event.scope.clone()),
        reason: Set(event.reason.clone()),
        asserted_by: Set(Some(event.asserted_by.clone())),
        asserted_by_project: Set(Some(event.asserted_by_project.clone())),
        asserted_at: Set(Some(event.asserted_at)),
        ends_at: Set(event.ends_at),
        actor: Set(event.actor.clone()),
        actor_project: Set(event.actor_project.clone()),
        note: Set(event.note.clone()),
        created_at: Set(event.at),
        from_text: Set(false),
        ..Default::default()
    };
    (history, typed)
}

/// The typed rows of the history rows with these uuids, by uuid.
pub(crate) async fn typed_events<C: ConnectionTrait>(
    db: &C,
    history_uuids: &[String],
) -> Result<HashMap<String, node_maintenance_event::Model>, DbErr> {
    let mut found = HashMap::new();
    for chunk in history_uuids.chunks(nodemaint_runtime::drift::LOAD_CHUNK) {
        let rows = node_maintenance_event::Entity::find()
            .filter(node_maintenance_event::Column::HistoryUuid.is_in(chunk.iter().cloned()))
            .all(db)
            .await?;
        found.extend(rows.into_iter().map(|r| (r.history_uuid.clone(), r)));
    }
    Ok(found)
}

/// A node's history, oldest first: at most `limit` newest rows, each with
/// its typed row when it is a maintenance event.
pub(crate) async fn node_history_of<C: ConnectionTrait>(
    db: &C,
    node_id: i32,
    limit: u64,
) -> Result<Vec<(node_history::Model, Option<node_maintenance_event::Model>)>, DbErr> {
    let mut rows = node_history::Entity::find()
        .filter(node_history::Column::NodeId.eq(node_id))
        .order_by_desc(node_history::Column::Id)
        .limit(limit)
        .all(db)
        .await?;
    rows.reverse();
    let uuids: Vec<String> = rows
        .iter()
        .filter(|r| r.event_type.as_deref() == Some(EVENT_TYPE_MAINTENANCE))
        .map(|r| r.uuid.clone())
        .collect();
    let mut typed = typed_events(db, &uuids).await?;
    Ok(rows
        .into_iter()
        .map(|r| {
            let t = typed.remove(&r.uuid);
            (r, t)
        })
        .collect())
}

/// [`event::template`] as an SQL expression over a typed row aliased `e`.
pub(crate) fn text_sql(backend: DbBackend, kind: EventKind) -> String {
    pieces_sql(backend, &event::template(kind))
}

fn pieces_sql(backend: DbBackend, pieces: &[Piece]) -> String {
    let parts: Vec<String> = pieces
        .iter()
        .map(|piece| match *piece {
            Piece::Text(text) => format!("'{}'", text.replace('\'', "''")),
            Piece::Field(field) => field_sql(backend, field),
            // Concatenation with NULL is NULL on every backend: the part
            // disappears when its field is NULL.
            Piece::Optional(_, inner) => format!("COALESCE({}, '')", pieces_sql(backend, inner)),
        })
        .collect();
    let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
    concat(backend, &parts)
}

fn field_sql(backend: DbBackend, field: Field) -> String {
    let project = |column: &str| format!("CASE WHEN {column} = '' THEN 'none' ELSE {column} END");
    match field {
        Field::EntryUuid => "e.entry_uuid".into(),
        Field::Kind => "e.kind".into(),
        Field::Type => format!("e.{}", quote(backend, "type")),
        Field::Scope => "e.scope".into(),
        Field::AssertedBy => "e.asserted_by".into(),
        Field::AssertedByProject => project("e.asserted_by_project"),
        Field::AssertedAt => iso8601_sql(backend, "e.asserted_at"),
        Field::EndsAt => iso8601_sql(backend, "e.ends_at"),
        Field::Reason => format!("COALESCE(SUBSTR(e.reason, 1, {EVENT_REASON_MAX}), 'None')"),
        Field::Actor => "e.actor".into(),
        Field::ActorProject => project("e.actor_project"),
        Field::Note => "e.note".into(),
    }
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

/// A new event's uuid, made by the database as the backfill makes them:
/// time-ordered on SQLite (see [`SQLITE_UUID_V7_EXPR`]), random elsewhere.
fn uuid_sql(backend: DbBackend) -> &'static str {
    if backend == DbBackend::Sqlite { SQLITE_UUID_V7_EXPR } else { uuid_v4_expr(backend) }
}

/// Records a `kind` event by one actor for each entry row the condition
/// `entries` (over `node_maintenance m`, with its `values`) selects: the
/// typed rows with one `INSERT … SELECT` from the entries, then their
/// history rows with one from the typed rows. Run before the entries are
/// deleted; the entries must have no `kind` event yet (true of every set
/// writer: an entry expires, or is backfilled, once).
pub(crate) async fn record_for_entries<C: ConnectionTrait>(
    db: &C,
    kind: EventKind,
    actor: &crate::authority::caller::Caller,
    note: Option<&str>,
    at: chrono::NaiveDateTime,
    entries: &str,
    values: Vec<Value>,
) -> Result<(), DbErr> {
    let backend = db.get_database_backend();
    let (uuid, ty, user) = (uuid_sql(backend), quote(backend, "type"), quote(backend, "user"));
    let at = at.trunc_subsecs(0);
    let mut bound: Vec<Value> = vec![
        actor.user_id.clone().into(),
        actor.project_or_empty().to_owned().into(),
        note.map(str::to_owned).into(),
        at.into(),
    ];
    bound.extend(values.iter().cloned());
    db.execute_raw(stmt(
        backend,
        &format!(
            "INSERT INTO node_maintenance_event (history_uuid, node_id, kind, entry_uuid, {ty}, scope, reason, \
             asserted_by, asserted_by_project, asserted_at, ends_at, actor, actor_project, note, created_at, \
             from_text) SELECT {uuid}, m.node_id, '{kind}', m.uuid, m.{ty}, m.scope, m.reason, m.asserted_by, \
             m.asserted_by_project, m.asserted_at, m.ends_at, ?, ?, ?, ?, FALSE FROM node_maintenance m \
             WHERE {entries} ORDER BY m.id",
            kind = kind.as_str()
        ),
        bound,
    ))
    .await?;
    let text = text_sql(backend, kind);
    // Driven from the entries (a few ids, by primary key) to their events
    // by `entry_uuid`'s index. PostgreSQL, without statistics for the
    // events (a new table, or one autovacuum has not analysed yet), planned
    // the join as a hash of every event per batch; a lateral lookup per
    // entry (its `LIMIT` keeps the planner from flattening it back into a
    // join; an entry has one event of a set writer's kind) leaves it no
    // other plan. (MariaDB has no LATERAL; it joins by the index as it is.)
    let events = match backend {
        DbBackend::Postgres => format!(
            "node_maintenance m CROSS JOIN LATERAL (SELECT * FROM node_maintenance_event x \
             WHERE x.entry_uuid = m.uuid AND x.kind = '{kind}' LIMIT 1) e",
            kind = kind.as_str()
        ),
        _ => format!(
            "node_maintenance m JOIN node_maintenance_event e ON e.entry_uuid = m.uuid AND e.kind = '{kind}'",
            kind = kind.as_str()
        ),
    };
    db.execute_raw(stmt(
        backend,
        &format!(
            "INSERT INTO node_history (uuid, event_type, severity, event, {user}, project, node_id, version, \
             created_at) SELECT e.history_uuid, '{EVENT_TYPE_MAINTENANCE}', 'info', {text}, \
             SUBSTR(e.actor, 1, {USER_MAX}), CASE WHEN e.actor_project = '' THEN NULL \
             ELSE SUBSTR(e.actor_project, 1, {PROJECT_MAX}) END, e.node_id, '1.0', e.created_at \
             FROM {events} WHERE {entries} ORDER BY e.id"
        ),
        values,
    ))
    .await?;
    Ok(())
}

/// Which identities of a typed event a reader at `reader`, on a node with
/// this owner and lessee, may not see: `(asserter, actor)`.
pub(crate) fn masks_of(
    row: &node_maintenance_event::Model,
    reader: Scope,
    owner: Option<&str>,
    lessee: Option<&str>,
) -> (bool, bool) {
    let entry_scope = Scope::parse(&row.scope).unwrap_or(Scope::System);
    let by_asserter = EventKind::parse(&row.kind).is_some_and(EventKind::by_asserter);
    masking::event_masks(reader, entry_scope, by_asserter, Some(row.actor_project.as_str()), owner, lessee)
}

/// The text of a typed event with these identities hidden, rendered from
/// its fields (an event typed from an older text: its opening only);
/// `None` when nothing is hidden and the stored text stands.
pub(crate) fn masked_text(row: &node_maintenance_event::Model, asserter: bool, actor: bool) -> Option<String> {
    if !(asserter || actor) {
        return None;
    }
    Some(match MaintenanceEvent::from_row(row) {
        Some(event) => event.masked(asserter, actor).text(),
        None => event::opening_only(&row.kind, &row.entry_uuid, &row.entry_type, &row.scope),
    })
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
    /// This history row as a reader at `reader` on a node with this owner
    /// and lessee may see it: the identities above its scope masked, read
    /// from the event's typed row (see `authority/masking.rs`). A
    /// row without one is another service's event: its actor is masked by
    /// its project (and one of ours without it is shown at system scope only).
    pub fn for_caller(
        mut self,
        typed: Option<&node_maintenance_event::Model>,
        reader: Scope,
        owner: Option<&str>,
        lessee: Option<&str>,
    ) -> HistoryView {
        let Some(row) = typed else {
            if masking::is_masked(reader, masking::actor_scope(self.project.as_deref(), owner, lessee)) {
                self.hide_actor();
            }
            // Ours without its typed row: written by an older nodemaint
            // still running after the upgrade. Who it names is not known
            // apart from the rest, so below system it is not shown.
            let ours = self.event_type.as_deref() == Some(EVENT_TYPE_MAINTENANCE)
                && self.event.as_deref().is_some_and(|t| t.starts_with(event::TEXT_OPENING));
            if ours && reader != Scope::System {
                self.event = Some(event::UNTYPED.to_owned());
            }
            return self;
        };
        let (hide_asserter, hide_actor) = masks_of(row, reader, owner, lessee);
        if hide_actor {
            self.hide_actor();
        }
        if let Some(text) = masked_text(row, hide_asserter, hide_actor) {
            self.event = Some(text);
        }
        self
    }

    fn hide_actor(&mut self) {
        self.user = self.user.as_ref().map(|_| MASK.to_owned());
        self.project = self.project.as_ref().map(|_| MASK.to_owned());
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
    use crate::authority::caller::Caller;
    use crate::authority::release::tests::entry;

    #[test]
    fn history_columns_are_cut_to_fit_and_the_typed_row_keeps_the_identity_whole() {
        let e = entry("operator_hold", "lessee", "a0a0a0");
        let long_user = "u".repeat(100);
        let actor = Caller::project(long_user.clone(), "p".repeat(90), &["member"]);
        let event = MaintenanceEvent::new(EventKind::Released, &e, &actor, None, nodemaint_runtime::sql::now_utc());
        let (history, typed) = event_rows(&event);
        assert_eq!(history.user.as_ref().as_deref().map(str::len), Some(USER_MAX));
        assert_eq!(history.project.as_ref().as_deref().map(str::len), Some(PROJECT_MAX));
        assert_eq!(typed.actor.as_ref(), &long_user);
        assert_eq!(history.uuid.as_ref(), typed.history_uuid.as_ref());
    }

    #[test]
    fn event_uuids_are_time_ordered() {
        let e = entry("operator_hold", "lessee", "a0a0a0");
        let actor = Caller::system("op", &["admin"]);
        let event = MaintenanceEvent::new(EventKind::Asserted, &e, &actor, None, nodemaint_runtime::sql::now_utc());
        let uuids: Vec<uuid::Uuid> =
            (0..3).map(|_| uuid::Uuid::parse_str(event_rows(&event).0.uuid.as_ref()).unwrap()).collect();
        assert!(uuids.iter().all(|u| u.get_version_num() == 7), "{uuids:?}");
        assert!(uuids.windows(2).all(|w| w[0] < w[1]), "ordered as created: {uuids:?}");
    }
}
