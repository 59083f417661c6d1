//! Typed maintenance events: `node_maintenance_event`, one row per
//! maintenance event in `node_history` (keyed by the history row's uuid),
//! holding what the event's text says as fields, so that masking and the
//! ended-window listing never parse the text. Nothing of Ironic's is
//! changed: no foreign key points at `node_history` (Ironic prunes and
//! deletes history rows without knowing of this table; readers join on the
//! uuid, so a pruned event is gone for them too); rows go with their node.
//!
//! Events already in history are typed once, here, set-based in ranges of
//! history ids: from the text's fixed opening only, `maintenance entry
//! <uuid> <kind> (type <type>, scope <scope>`, which no identity or reason
//! can reach (the uuid has a fixed width, the kind and scope a fixed
//! vocabulary, types a name pattern), `from_text` set. What follows the
//! opening (identities, reason, times) is not read: any of it could hold
//! the separators. Who acted comes from history's `user`/`project` columns.
//!
//! The DDL and the text's opening are frozen here, as in the other
//! migrations. MySQL commits each DDL statement on its own: the table is
//! created only when missing, and rows already typed are skipped, so a run
//! interrupted anywhere is finished by the next `db upgrade`.

use crate::exec_all;
use nodemaint_runtime::sql::{first_and_last, now_utc, quote, stmt};
use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::{ConnectionTrait, DbBackend, Value};

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261206_000005_maintenance_events"
    }
}

pub const EVENT_TABLE: &str = "node_maintenance_event";
const UNIQUE_HISTORY_UUID: &str = "uniq_node_maintenance_event0history_uuid";
const NODE_INDEX: &str = "node_maintenance_event_node_id_idx";
const ENTRY_INDEX: &str = "node_maintenance_event_entry_uuid_idx";
const NODE_FK: &str = "node_maintenance_event_node_id_fk";

/// History ids per typing statement.
const TYPING_BATCH: i64 = 100_000;

/// The table's DDL on `backend`, as this migration runs it (the
/// benchmark's hand-written side creates the same table with it).
pub fn create_table(backend: DbBackend) -> Vec<String> {
    let columns = |id: &str, ts: &str, boolean: &str| {
        format!(
            "{id}, history_uuid VARCHAR(36) NOT NULL, node_id INTEGER NOT NULL, kind VARCHAR(16) NOT NULL, \
             entry_uuid VARCHAR(36) NOT NULL, type VARCHAR(64) NOT NULL, scope VARCHAR(64) NOT NULL, reason TEXT, \
             asserted_by VARCHAR(255), asserted_by_project VARCHAR(255), asserted_at {ts}, ends_at {ts}, \
             actor TEXT NOT NULL, actor_project TEXT NOT NULL, note TEXT, created_at {ts} NOT NULL, \
             from_text {boolean} NOT NULL DEFAULT FALSE"
        )
    };
    match backend {
        DbBackend::MySql => vec![format!(
            "CREATE TABLE IF NOT EXISTS {EVENT_TABLE} ({}, PRIMARY KEY (id), \
             UNIQUE KEY {UNIQUE_HISTORY_UUID} (history_uuid), KEY {NODE_INDEX} (node_id), \
             KEY {ENTRY_INDEX} (entry_uuid), \
             CONSTRAINT {NODE_FK} FOREIGN KEY (node_id) REFERENCES nodes (id) ON DELETE CASCADE) ENGINE=InnoDB",
            columns("id INT NOT NULL AUTO_INCREMENT", "DATETIME", "BOOLEAN")
        )],
        backend => {
            let (id, ts) = if backend == DbBackend::Postgres {
                ("id SERIAL NOT NULL PRIMARY KEY", "TIMESTAMP WITHOUT TIME ZONE")
            } else {
                ("id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT", "DATETIME")
            };
            vec![
                format!(
                    "CREATE TABLE {EVENT_TABLE} ({}, CONSTRAINT {UNIQUE_HISTORY_UUID} UNIQUE (history_uuid), \
                     CONSTRAINT {NODE_FK} FOREIGN KEY (node_id) REFERENCES nodes (id) ON DELETE CASCADE)",
                    columns(id, ts, "BOOLEAN")
                ),
                format!("CREATE INDEX {NODE_INDEX} ON {EVENT_TABLE} (node_id)"),
                format!("CREATE INDEX {ENTRY_INDEX} ON {EVENT_TABLE} (entry_uuid)"),
            ]
        }
    }
}

/// The position of `needle` in `hay` (1-based, 0 when absent), in characters.
fn position(backend: DbBackend, hay: &str, needle: &str) -> String {
    match backend {
        DbBackend::Postgres => format!("strpos({hay}, '{needle}')"),
        _ => format!("INSTR({hay}, '{needle}')"),
    }
}

/// Types the maintenance events of history ids in `[lo, hi)` (see the
/// module docs): one `INSERT … SELECT`. With `resuming` (rows typed by an
/// interrupted run are there) it skips the events already typed; without,
/// it leaves that anti-join out: on PostgreSQL, planned against the table
/// just created, it scans the table for every row and re-visits each row
/// the statement has inserted (quadratic: minutes for 100,000 events).
/// History rows are not joined to `nodes`: `node_history.node_id` is a
/// foreign key already, and PostgreSQL, without statistics for a history
/// just backfilled, planned that join as a loop over every node.
async fn type_from_text<C: ConnectionTrait>(
    db: &C,
    lo: i64,
    hi: i64,
    now: chrono::NaiveDateTime,
    resuming: bool,
) -> Result<u64, DbErr> {
    let backend = db.get_database_backend();
    let not_typed = match resuming {
        true => format!("AND NOT EXISTS (SELECT 1 FROM {EVENT_TABLE} x WHERE x.history_uuid = h.uuid)"),
        false => String::new(),
    };
    let (ty, user) = (quote(backend, "type"), quote(backend, "user"));
    let kind_end = position(backend, "d.rest", " (type ");
    let scope_at = position(backend, "d.rest", ", scope ");
    let scope = |name: &str| format!("WHEN SUBSTR(d.rest, {scope_at} + 8, {}) = '{name}' THEN '{name}'", name.len());
    // `maintenance entry ` is 18 characters: the uuid is 19..54, the kind from 56.
    let sql = format!(
        "INSERT INTO {EVENT_TABLE} (history_uuid, node_id, kind, entry_uuid, {ty}, scope, actor, actor_project, \
         created_at, from_text) \
         SELECT t.history_uuid, t.node_id, t.kind, t.entry_uuid, t.entry_type, t.scope, t.actor, t.actor_project, \
         t.created_at, TRUE FROM (\
           SELECT d.history_uuid, d.node_id, SUBSTR(d.rest, 1, {kind_end} - 1) AS kind, d.entry_uuid, \
           SUBSTR(d.rest, {kind_end} + 7, {scope_at} - {kind_end} - 7) AS entry_type, \
           CASE {} {} {} END AS scope, d.actor, d.actor_project, d.created_at FROM (\
             SELECT h.uuid AS history_uuid, h.node_id, SUBSTR(h.event, 19, 36) AS entry_uuid, \
             SUBSTR(h.event, 56) AS rest, COALESCE(h.{user}, '') AS actor, COALESCE(h.project, '') AS actor_project, \
             COALESCE(h.created_at, ?) AS created_at \
             FROM node_history h \
             WHERE h.id >= ? AND h.id < ? AND h.node_id IS NOT NULL AND h.event_type = 'maintenance' \
             AND h.event LIKE 'maintenance entry %' \
             {not_typed}\
           ) d WHERE {kind_end} > 1 AND {scope_at} > {kind_end}\
         ) t WHERE t.kind IN ('asserted', 'updated', 'released', 'scheduled', 'started', 'extended', 'cancelled', \
         'expired') AND t.scope IS NOT NULL",
        scope("system"),
        scope("owner"),
        scope("lessee"),
    );
    let values: Vec<Value> = vec![now.into(), lo.into(), hi.into()];
    Ok(db.execute_raw(stmt(backend, &sql, values)).await?.rows_affected())
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let (db, backend) = (manager.get_connection(), manager.get_database_backend());
        if backend == DbBackend::MySql || !nodemaint_runtime::probe::tables(db).await?.iter().any(|t| t == EVENT_TABLE)
        {
            exec_all(db, &create_table(backend)).await?;
        }
        let bounds = db
            .query_one_raw(stmt(backend, &format!("SELECT {}", first_and_last("node_history", "id")), vec![]))
            .await?;
        let Some(row) = bounds else { return Ok(()) };
        let (first, last): (Option<i32>, Option<i32>) = (row.try_get_by_index(0)?, row.try_get_by_index(1)?);
        let (Some(first), Some(last)) = (first, last) else { return Ok(()) };
        let now = now_utc();
        // Each batch covers history ids no other batch does, so only rows of
        // an interrupted earlier run (MySQL commits DDL apart) can be there.
        let resuming = db.query_one_raw(stmt(backend, &format!("SELECT 1 FROM {EVENT_TABLE} LIMIT 1"), vec![])).await?;
        let mut lo = i64::from(first);
        while lo <= i64::from(last) {
            let hi = lo + TYPING_BATCH;
            let typed = type_from_text(db, lo, hi, now, resuming.is_some()).await?;
            tracing::debug!(first_id = lo, end_id = hi, typed, "history events typed");
            lo = hi;
        }
        // Statistics now rather than when autovacuum gets to the table (as
        // the backfill does for node_maintenance): the typed events were
        // just written in bulk, and readers look them up by entry and uuid.
        // (PostgreSQL only: MySQL's ANALYZE TABLE would commit the migration.)
        if backend == DbBackend::Postgres {
            db.execute_unprepared(&format!("ANALYZE {EVENT_TABLE}")).await?;
        }
        Ok(())
    }

    /// Drops the typed events; the history texts stay.
    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        exec_all(manager.get_connection(), &[format!("DROP TABLE {EVENT_TABLE}")]).await
    }

    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }
}
