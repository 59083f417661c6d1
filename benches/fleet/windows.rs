//! Maintenance windows on the big fleet: the estate listing walked 1,000 per
//! page against the same keyset query issued directly; `windows tick`
//! releasing every expired window against hand-written set-based SQL doing
//! the same deletes, history rows and node updates; and a tick with nothing
//! due against one indexed probe of `ends_at`, on the big fleet and on a
//! small one (flat as the fleet grows).

use crate::{Figure, lower, median, timed};
use nodemaint::authority::WindowState;
use nodemaint::maintenance::WindowQuery;
use nodemaint::tick::{self, TickOptions};
use nodemaint::{Caller, Maintenance, Policy};
use nodemaint_runtime::sql::{now_utc, quote, stmt, uuid_v4_expr};
use sea_orm::{ConnectionTrait, DatabaseConnection, DbBackend, TransactionTrait, Value};

/// Adds `node_maintenance.ends_at` and the typed events' table to the
/// hand-written side's copy, which never ran the migrations after the
/// backfill it wrote by hand.
pub async fn add_later_schema(db: &DatabaseConnection) {
    for ddl in nodemaint_migration::event_table_ddl(db.get_database_backend()) {
        db.execute_unprepared(&ddl).await.unwrap();
    }
    let ts = match db.get_database_backend() {
        DbBackend::Postgres => "TIMESTAMP WITHOUT TIME ZONE",
        _ => "DATETIME",
    };
    db.execute_unprepared(&format!("ALTER TABLE node_maintenance ADD COLUMN ends_at {ts}")).await.unwrap();
    db.execute_unprepared("CREATE INDEX node_maintenance_ends_at_idx ON node_maintenance (ends_at)").await.unwrap();
}

/// Puts `count` windows whose end has passed on nodes out of maintenance
/// (the lowest ids), each node in maintenance because of it, as the API
/// would have left them.
pub async fn expired_windows(db: &DatabaseConnection, count: u64) {
    let backend = db.get_database_backend();
    let (uuid, ty) = (uuid_v4_expr(backend), quote(backend, "type"));
    let now = now_utc();
    let (asserted, ended) = (now - chrono::Duration::hours(2), now - chrono::Duration::minutes(1));
    let txn = db.begin().await.unwrap();
    txn.execute_raw(stmt(
        backend,
        &format!(
            "INSERT INTO node_maintenance (uuid, node_id, {ty}, reason, scope, asserted_by, asserted_by_project, \
             asserted_at, version, created_at, ends_at) \
             SELECT {uuid}, id, 'operator_hold', 'bench window', 'system', 'op', '', ?, '1.0', ?, ? FROM nodes \
             WHERE maintenance = FALSE OR maintenance IS NULL ORDER BY id LIMIT {count}"
        ),
        vec![Value::from(asserted), Value::from(asserted), Value::from(ended)],
    ))
    .await
    .unwrap();
    if backend == DbBackend::Postgres {
        // Statistics for the windows just written, as autovacuum would have them.
        txn.execute_unprepared("ANALYZE node_maintenance").await.unwrap();
    }
    txn.execute_unprepared(
        "UPDATE nodes SET maintenance = TRUE, maintenance_reason = 'operator_hold: bench window' \
         WHERE id IN (SELECT node_id FROM node_maintenance WHERE ends_at IS NOT NULL)",
    )
    .await
    .unwrap();
    txn.commit().await.unwrap();
    if backend == DbBackend::Postgres {
        db.execute_unprepared("ANALYZE node_maintenance").await.unwrap();
        db.execute_unprepared("ANALYZE nodes").await.unwrap();
    }
}

/// The tick's work as the fewest statements: a typed event and a history
/// row keyed to it per expired window, the nodes it held updated (none of them holds anything else),
/// the windows deleted; one transaction.
async fn hand_expire(db: &DatabaseConnection) {
    let backend = db.get_database_backend();
    let (user, ty) = (quote(backend, "user"), quote(backend, "type"));
    let event = nodemaint_runtime::sql::concat(
        backend,
        &["'maintenance entry '", "m.uuid", "' expired (type '", &format!("m.{ty}"), "', reason: '", "m.reason", "')'"],
    );
    let now = Value::from(now_utc());
    let txn = db.begin().await.unwrap();
    txn.execute_raw(stmt(
        backend,
        &crate::hand::typed_for(backend, "expired", "m.ends_at <= ?", "?"),
        vec![now.clone(), now.clone()],
    ))
    .await
    .unwrap();
    txn.execute_raw(stmt(
        backend,
        &format!(
            "INSERT INTO node_history (uuid, event_type, severity, event, {user}, node_id, version, created_at) \
             SELECT e.history_uuid, 'maintenance', 'info', {event}, 'hand', m.node_id, '1.0', ? FROM node_maintenance m \
             JOIN node_maintenance_event e ON e.entry_uuid = m.uuid AND e.kind = 'expired' WHERE m.ends_at <= ?"
        ),
        vec![now.clone(), now.clone()],
    ))
    .await
    .unwrap();
    txn.execute_raw(stmt(
        backend,
        "UPDATE nodes SET maintenance = FALSE, maintenance_reason = NULL, updated_at = ? \
         WHERE id IN (SELECT node_id FROM node_maintenance WHERE ends_at <= ?)",
        vec![now.clone(), now.clone()],
    ))
    .await
    .unwrap();
    txn.execute_raw(stmt(backend, "DELETE FROM node_maintenance WHERE ends_at <= ?", vec![now])).await.unwrap();
    txn.commit().await.unwrap();
}

/// The estate listing's keyset query issued directly, page after page.
async fn hand_walk(db: &DatabaseConnection, page: u64) -> u64 {
    let backend = db.get_database_backend();
    let (mut after, mut rows) = (0i64, 0u64);
    loop {
        let found = db
            .query_all_raw(stmt(
                backend,
                &format!(
                    "SELECT m.id AS window_id, m.*, n.id, n.uuid, n.name, n.owner, n.lessee, n.maintenance, \
                     n.maintenance_reason, n.fault, n.reservation, n.version, n.created_at, n.updated_at \
                     FROM node_maintenance m JOIN nodes n ON n.id = m.node_id \
                     WHERE m.ends_at IS NOT NULL AND m.id > ? ORDER BY m.id LIMIT {page}"
                ),
                vec![Value::from(after)],
            ))
            .await
            .unwrap();
        let Some(last) = found.last() else { break };
        after = i64::from(last.try_get::<i32>("", "window_id").unwrap());
        rows += found.len() as u64;
    }
    rows
}

/// The estate listing through the library, as a system admin, page after page.
async fn our_walk(svc: &Maintenance, page: u64) -> u64 {
    let admin = Caller::system("bench", &["admin"]);
    let (mut marker, mut rows) = (None, 0u64);
    loop {
        let query = WindowQuery { states: vec![WindowState::Active], since: None, limit: page, marker: marker.clone() };
        let found = svc.windows(&admin, &query).await.unwrap();
        let Some(last) = found.last() else { break };
        marker = Some(last.marker.clone());
        rows += found.len() as u64;
    }
    rows
}

/// One tick with nothing due, as `serve` runs it every interval (the schema
/// was checked when the server started).
async fn idle_tick(db: &DatabaseConnection, url: &str) -> f64 {
    let options = TickOptions { schema_checked: true, ..TickOptions::default() };
    let (secs, report) = timed(tick::tick(db, url, options)).await;
    assert_eq!(report.unwrap().expired, 0);
    secs
}

/// One indexed probe of `ends_at`: the floor of "is anything due?".
async fn probe(db: &DatabaseConnection) -> f64 {
    let backend = db.get_database_backend();
    // ORDER BY: indexed under PostgreSQL's generic plan too (see `tick::any_due`).
    let sql = "SELECT id FROM node_maintenance WHERE ends_at <= ? ORDER BY ends_at LIMIT 1";
    timed(db.query_one_raw(stmt(backend, sql, vec![Value::from(now_utc())]))).await.0
}

/// Many repeats of a sub-millisecond measurement, summed, so the clock's
/// resolution and one scheduling hiccup do not decide the figure.
async fn repeated<F, Fut>(n: usize, mut f: F) -> f64
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = f64>,
{
    let mut total = 0.0;
    for _ in 0..n {
        total += f().await;
    }
    total
}

pub async fn figures(
    backend: crate::db::Backend,
    ours: (&DatabaseConnection, &str),
    hand: &DatabaseConnection,
    small: (&DatabaseConnection, &str),
    windows: u64,
    quick: bool,
) -> Vec<Figure> {
    let name = backend.name();
    let (db, url) = ours;
    eprintln!("[{name}] maintenance windows: {windows} expired windows on each copy");
    expired_windows(db, windows).await;
    expired_windows(hand, windows).await;

    let svc = Maintenance::new(db.clone(), Policy::defaults());
    let runs = if quick { 1 } else { 3 };
    let walk = median(runs, || async {
        let (secs, rows) = timed(our_walk(&svc, 1000)).await;
        assert_eq!(rows, windows);
        secs
    })
    .await;
    let direct = median(runs, || async {
        let (secs, rows) = timed(hand_walk(db, 1000)).await;
        assert_eq!(rows, windows);
        secs
    })
    .await;
    let mut figures =
        vec![lower(backend, format!("windows list, {windows} active windows, 1,000 per page (s)"), walk, direct, 2.0)];

    let (secs, report) = timed(tick::tick(db, url, TickOptions::default())).await;
    let report = report.unwrap();
    assert_eq!((report.expired, report.remaining), (windows, 0), "{report:?}");
    let (hand_secs, ()) = timed(hand_expire(hand)).await;
    figures.push(lower(backend, format!("windows tick, {windows} expired windows released (s)"), secs, hand_secs, 2.0));

    // The released windows' entries stay in PostgreSQL's ends_at index
    // until a vacuum. Measured as autovacuum leaves the table.
    if backend == crate::db::Backend::Postgres {
        db.execute_unprepared("VACUUM ANALYZE node_maintenance").await.unwrap();
    }
    let repeats = if quick { 20 } else { 200 };
    let idle_big = repeated(repeats, || idle_tick(db, url)).await;
    let floor = repeated(repeats, || probe(db)).await;
    figures.push(lower(
        backend,
        format!("windows tick, nothing due, x{repeats} (s) vs one indexed ends_at probe"),
        idle_big,
        floor,
        3.0,
    ));
    let idle_small = repeated(repeats, || idle_tick(small.0, small.1)).await;
    figures.push(Figure {
        backend: name,
        figure: "windows tick, nothing due: big fleet / a 33-node database".into(),
        ours: idle_big,
        hand_written: Some(idle_small),
        ratio: Some(idle_big / idle_small),
        target: Some("<= 1.5 (flat)".into()),
        met: Some(idle_big / idle_small <= 1.5),
    });
    figures
}
