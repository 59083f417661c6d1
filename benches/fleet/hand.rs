//! The hand-written lower bounds: the fewest statements that do the same
//! work, with the database's own uuid generation, in one transaction.

use nodemaint_migration::backfill::{MIGRATION_ASSERTER, event_expr};
use nodemaint_runtime::sql::quote;
use nodemaint_runtime::sql::{concat, uuid_v4_expr};
use sea_orm::{ConnectionTrait, DatabaseConnection, DbBackend, TransactionTrait};

fn now_literal() -> &'static str {
    "'2026-12-01 00:00:00'"
}

/// History rows for the entries `filter` selects (alias `m`), in one `INSERT … SELECT`.
fn history_for(backend: DbBackend, verb: &str, filter: &str) -> String {
    history_on(backend, verb, filter, "m.node_id")
}

/// As [`history_for`], with `node` as the event's node (NULL for entries
/// whose node is gone). With a node the entries' typed rows (`typed_for`,
/// written first) give each history row its uuid, as the library keys the
/// two rows to each other; an orphan's history row has no typed row.
fn history_on(backend: DbBackend, verb: &str, filter: &str, node: &str) -> String {
    let (uuid, from) = match node {
        "NULL" => (uuid_v4_expr(backend).to_string(), "node_maintenance m".to_owned()),
        _ => (
            "e.history_uuid".to_owned(),
            format!("node_maintenance m JOIN node_maintenance_event e ON e.entry_uuid = m.uuid AND e.kind = '{verb}'"),
        ),
    };
    let user = quote(backend, "user");
    let ty = quote(backend, "type");
    let event = concat(
        backend,
        &[
            "'maintenance entry '",
            "m.uuid",
            &format!("' {verb} (type '"),
            &format!("m.{ty}"),
            "', scope '",
            "m.scope",
            "', reason: '",
            "COALESCE(SUBSTR(m.reason, 1, 4096), 'None')",
            "') by hand'",
        ],
    );
    format!(
        "INSERT INTO node_history (uuid, event_type, severity, event, {user}, node_id, version, created_at) \
         SELECT {uuid}, 'maintenance', 'info', {event}, 'hand', {node}, '1.0', {now} FROM {from} WHERE {filter}",
        now = now_literal()
    )
}

/// Typed event rows (`node_maintenance_event`) for the entries `filter`
/// selects (alias `m`), in one `INSERT … SELECT`: the library writes one
/// beside each history row of a live node, so the floor does too.
pub fn typed_for(backend: DbBackend, kind: &str, filter: &str, at: &str) -> String {
    let uuid = uuid_v4_expr(backend);
    let ty = quote(backend, "type");
    format!(
        "INSERT INTO node_maintenance_event (history_uuid, node_id, kind, entry_uuid, {ty}, scope, reason, asserted_by, \
         asserted_by_project, asserted_at, ends_at, actor, actor_project, created_at, from_text) \
         SELECT {uuid}, m.node_id, '{kind}', m.uuid, m.{ty}, m.scope, m.reason, m.asserted_by, m.asserted_by_project, \
         m.asserted_at, m.ends_at, 'hand', '', {at}, FALSE FROM node_maintenance m WHERE {filter}"
    )
}

/// The backfill as two statements: one `INSERT … SELECT` into
/// `node_maintenance`, one into `node_history`, writing the same rows as the
/// migration (asserter, event text), so that both sides write the same bytes.
pub async fn backfill(db: &DatabaseConnection) {
    let backend = db.get_database_backend();
    let uuid = uuid_v4_expr(backend);
    let ty = quote(backend, "type");
    let user = quote(backend, "user");
    let txn = db.begin().await.unwrap();
    txn.execute_unprepared(&format!(
        "INSERT INTO node_maintenance (uuid, node_id, {ty}, reason, scope, asserted_by, asserted_by_project, asserted_at, version, created_at) \
         SELECT {uuid}, id, 'legacy', maintenance_reason, 'system', '{MIGRATION_ASSERTER}', '', {now}, '1.0', {now} FROM nodes WHERE maintenance = TRUE",
        now = now_literal()
    ))
    .await
    .unwrap();
    txn.execute_unprepared(&format!(
        "INSERT INTO node_history (uuid, event_type, severity, event, {user}, node_id, version, created_at) \
         SELECT {uuid}, 'maintenance', 'info', {event}, SUBSTR(m.asserted_by, 1, 64), m.node_id, '1.0', {now} FROM node_maintenance m",
        event = event_expr(backend),
        now = now_literal()
    ))
    .await
    .unwrap();
    txn.commit().await.unwrap();
}

/// The same repairs `reconcile` makes for the drift `nodemaint_test_support::drift::inject` leaves,
/// as one set-based statement (or two, with history) per kind.
pub async fn repair(db: &DatabaseConnection) {
    let backend = db.get_database_backend();
    let ty = quote(backend, "type");
    let uuid = uuid_v4_expr(backend);
    let now = now_literal();
    let txn = db.begin().await.unwrap();
    let orphan = "NOT EXISTS (SELECT 1 FROM nodes n WHERE n.id = m.node_id)".to_owned();
    let dup = format!(
        "m.{ty} IN ('legacy', 'fault') AND EXISTS (SELECT 1 FROM node_maintenance o WHERE o.node_id = m.node_id AND o.{ty} = m.{ty} AND o.id < m.id)"
    );
    let cleared = format!(
        "m.{ty} IN ('legacy', 'fault') AND EXISTS (SELECT 1 FROM nodes n WHERE n.id = m.node_id AND (n.maintenance = FALSE OR n.maintenance IS NULL))"
    );
    for (filter, node) in [(&orphan, "NULL"), (&dup, "m.node_id"), (&cleared, "m.node_id")] {
        // An orphan's event has no node to type it on: history only, as in the library.
        if node != "NULL" {
            txn.execute_unprepared(&typed_for(backend, "released", filter, now)).await.unwrap();
        }
        txn.execute_unprepared(&history_on(backend, "released", filter, node)).await.unwrap();
        let delete = match backend {
            // MySQL cannot read the table it deletes from in a subquery: go through a derived table.
            DbBackend::MySql => format!(
                "DELETE FROM node_maintenance WHERE id IN (SELECT id FROM (SELECT m.id FROM node_maintenance m WHERE {filter}) d)"
            ),
            _ => {
                format!("DELETE FROM node_maintenance WHERE id IN (SELECT m.id FROM node_maintenance m WHERE {filter})")
            }
        };
        txn.execute_unprepared(&delete).await.unwrap();
    }
    // Typed entries on a cleared node: the boolean back, the reason synthesised.
    let agg = match backend {
        DbBackend::Postgres => format!("string_agg(m.{ty} || ': ' || m.reason, '; ' ORDER BY m.asserted_at, m.id)"),
        DbBackend::MySql => {
            format!("GROUP_CONCAT(CONCAT(m.{ty}, ': ', m.reason) ORDER BY m.asserted_at, m.id SEPARATOR '; ')")
        }
        _ => format!("group_concat(m.{ty} || ': ' || m.reason, '; ')"),
    };
    let typed = match backend {
        DbBackend::MySql => format!(
            "UPDATE nodes n JOIN (SELECT m.node_id, {agg} AS r FROM node_maintenance m GROUP BY m.node_id) s ON s.node_id = n.id \
             SET n.maintenance = TRUE, n.maintenance_reason = s.r WHERE n.maintenance = FALSE OR n.maintenance IS NULL"
        ),
        _ => format!(
            "UPDATE nodes SET maintenance = TRUE, maintenance_reason = (SELECT {agg} FROM node_maintenance m WHERE m.node_id = nodes.id) \
             WHERE (maintenance = FALSE OR maintenance IS NULL) AND EXISTS (SELECT 1 FROM node_maintenance m WHERE m.node_id = nodes.id)"
        ),
    };
    txn.execute_unprepared(&typed).await.unwrap();
    // A changed reason goes to the legacy entry.
    let differs = match backend {
        DbBackend::MySql => "NOT (n.maintenance_reason <=> m.reason)",
        DbBackend::Postgres => "n.maintenance_reason IS DISTINCT FROM m.reason",
        _ => "n.maintenance_reason IS NOT m.reason",
    };
    let changed = format!(
        "m.{ty} = 'legacy' AND EXISTS (SELECT 1 FROM nodes n WHERE n.id = m.node_id AND n.maintenance = TRUE AND {differs} \
         AND NOT EXISTS (SELECT 1 FROM node_maintenance o WHERE o.node_id = m.node_id AND o.id <> m.id))"
    );
    let update = match backend {
        DbBackend::MySql => format!(
            "UPDATE node_maintenance m JOIN nodes n ON n.id = m.node_id SET m.reason = n.maintenance_reason \
             WHERE m.{ty} = 'legacy' AND n.maintenance = TRUE AND {differs}"
        ),
        _ => format!(
            "UPDATE node_maintenance SET reason = (SELECT n.maintenance_reason FROM nodes n WHERE n.id = node_maintenance.node_id) \
             WHERE id IN (SELECT m.id FROM node_maintenance m WHERE {changed})"
        ),
    };
    txn.execute_unprepared(&typed_for(backend, "updated", &changed, now)).await.unwrap();
    txn.execute_unprepared(&history_for(backend, "updated", &changed)).await.unwrap();
    txn.execute_unprepared(&update).await.unwrap();
    // Maintained nodes with no entry: the backfill.
    txn.execute_unprepared(&format!(
        "INSERT INTO node_maintenance (uuid, node_id, {ty}, reason, scope, asserted_by, asserted_by_project, asserted_at, version, created_at) \
         SELECT {uuid}, n.id, 'legacy', n.maintenance_reason, 'system', 'hand-repair', '', {now}, '1.0', {now} FROM nodes n \
         WHERE n.maintenance = TRUE AND NOT EXISTS (SELECT 1 FROM node_maintenance m WHERE m.node_id = n.id)"
    ))
    .await
    .unwrap();
    txn.execute_unprepared(&typed_for(backend, "asserted", "m.asserted_by = 'hand-repair'", now)).await.unwrap();
    txn.execute_unprepared(&history_for(backend, "asserted", "m.asserted_by = 'hand-repair'")).await.unwrap();
    txn.commit().await.unwrap();
}
