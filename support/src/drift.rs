//! 1 % drift of each kind, as services of a pinned release (and accidents)
//! leave it, chosen by node id so two copies of a fleet drift identically.

use nodemaint_runtime::sql::{quote, uuid_v4_expr};
use sea_orm::{ConnectionTrait, Database, DatabaseConnection, DbBackend};

/// Injects the drift into the migrated fleet behind `db` (at `url`, for the
/// connection that turns foreign keys off).
pub async fn inject(db: &DatabaseConnection, url: &str) {
    let backend = db.get_database_backend();
    let ty = quote(backend, "type");
    let uuid = uuid_v4_expr(backend);
    let run = |sql: String| async move { db.execute_unprepared(&sql).await.unwrap_or_else(|e| panic!("{sql}: {e}")) };
    // A tenth of the maintained nodes (10 % of the fleet) is 1 % of the fleet.
    run("UPDATE nodes SET maintenance = FALSE, maintenance_reason = NULL WHERE maintenance = TRUE AND id % 10 = 2"
        .into())
    .await;
    run("UPDATE nodes SET maintenance_reason = 'changed by an old service' WHERE maintenance = TRUE AND id % 10 = 3"
        .into())
    .await;
    run(format!(
        "INSERT INTO node_maintenance (uuid, node_id, {ty}, reason, scope, asserted_by, asserted_by_project, asserted_at) \
         SELECT {uuid}, id, 'operator_hold', 'typed hold', 'system', 'op', '', '2026-11-30 00:00:00' FROM nodes WHERE maintenance = TRUE AND id % 10 = 4"
    ))
    .await;
    run("UPDATE nodes SET maintenance = FALSE, maintenance_reason = NULL WHERE maintenance = TRUE AND id % 10 = 4"
        .into())
    .await;
    run(format!(
        "INSERT INTO node_maintenance (uuid, node_id, {ty}, reason, scope, asserted_by, asserted_by_project, asserted_at) \
         SELECT {uuid}, id, 'legacy', 'duplicate', 'owner', 'racer', 'dup', '2030-01-01 00:00:00' FROM nodes WHERE maintenance = TRUE AND id % 10 = 5"
    ))
    .await;
    run("UPDATE nodes SET maintenance = TRUE, maintenance_reason = 'HW_ERR: set by an old service' WHERE (maintenance = FALSE OR maintenance IS NULL) AND id % 100 = 1".into()).await;
    // Entries whose node is gone: a delete with foreign keys off.
    let mut options = sea_orm::ConnectOptions::new(url.to_owned());
    options.max_connections(1).sqlx_logging(false);
    let raw = Database::connect(options).await.unwrap();
    let off = match backend {
        DbBackend::Sqlite => "PRAGMA foreign_keys = OFF",
        DbBackend::Postgres => "SET session_replication_role = replica",
        _ => "SET FOREIGN_KEY_CHECKS = 0",
    };
    raw.execute_unprepared(off).await.unwrap();
    raw.execute_unprepared(
        "DELETE FROM node_history WHERE node_id IN (SELECT id FROM nodes WHERE maintenance = TRUE AND id % 10 = 6)",
    )
    .await
    .unwrap();
    raw.execute_unprepared("DELETE FROM nodes WHERE maintenance = TRUE AND id % 10 = 6").await.unwrap();
    raw.close().await.ok();
}
