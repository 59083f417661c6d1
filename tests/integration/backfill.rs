//! The legacy backfill on a real Ironic database (made by Ironic 39's own
//! migrations): one legacy entry per maintained node with the reason
//! verbatim, one history event each, Ironic's tables untouched; idempotent
//! when run twice and after being killed between batches.

use crate::backend_tests;
use crate::catalog;
use crate::common::{TestDb, count, ok, rows, text};
use nodemaint::admin::legacy_nodes::{self, NewNode};
use nodemaint_migration::backfill::{BackfillOptions, backfill_legacy_entries};
use sea_orm::{ConnectionTrait, DatabaseConnection, DbBackend};

/// Nodes in and out of maintenance, with and without reasons, as Ironic holds them.
const FLEET: [(&str, bool, Option<&str>); 6] = [
    ("hw-disk", true, Some("HW_ERR: Disk 3 has bad sectors, see CIDTEAM-3743")),
    ("lk-op", true, Some("LK_OP|HW_ERR: PSU 1 failed; don't power on ✓")),
    ("no-reason", true, None),
    ("empty-reason", true, Some("")),
    ("in-service", false, None),
    ("stale-reason", false, Some("cleared long ago")),
];

async fn ironic_fleet(t: &TestDb) -> DatabaseConnection {
    t.load_ironic_schema().await;
    let db = t.connect().await;
    for (name, maintenance, reason) in FLEET {
        legacy_nodes::create(&db, NewNode { name: Some(name.into()), maintenance, ..NewNode::default() })
            .await
            .unwrap();
        // Ironic keeps whatever reason text it had, even on a node out of maintenance.
        if let Some(reason) = reason {
            let sql = nodemaint_runtime::sql::stmt(
                db.get_database_backend(),
                "UPDATE nodes SET maintenance_reason = ? WHERE name = ?",
                vec![reason.into(), name.into()],
            );
            db.execute_raw(sql).await.unwrap();
        }
    }
    // A node whose boolean is NULL (the column is nullable in Ironic) is not in maintenance.
    db.execute_unprepared("INSERT INTO nodes (uuid, name, maintenance) VALUES ('0b0f6f0e-3c57-4c8e-9d49-6f4b3c1f0a11', 'null-flag', NULL)")
        .await
        .unwrap();
    db
}

/// (node name, reason, type, scope, project, asserted_by) of every entry.
async fn entries(db: &DatabaseConnection) -> Vec<Vec<Option<String>>> {
    rows(
        db,
        "SELECT n.name, m.reason, m.type, m.scope, m.asserted_by_project, m.asserted_by, m.uuid \
         FROM node_maintenance m JOIN nodes n ON n.id = m.node_id ORDER BY n.name",
    )
    .await
}

async fn upgrade_on_an_ironic_database_backfills_one_legacy_entry_per_maintained_node(t: TestDb) {
    let db = ironic_fleet(&t).await;
    let backend = db.get_database_backend();
    let ironic_tables = catalog::tables(&db).await;
    let node_columns = catalog::columns(&db, "nodes").await;
    let nodes_before = rows(
        &db,
        &format!("SELECT uuid, name, {}, maintenance_reason FROM nodes ORDER BY id", text(backend, "maintenance")),
    )
    .await;

    let out = ok(&t.cli(&["db", "upgrade"]));
    assert!(out.contains("Backfilled 4 legacy maintenance entries."), "{out}");

    let got = entries(&db).await;
    let maintained: Vec<_> = FLEET.iter().filter(|(_, m, _)| *m).collect();
    assert_eq!(got.len(), maintained.len(), "{got:?}");
    let mut expected: Vec<_> = maintained.iter().map(|(name, _, reason)| (*name, *reason)).collect();
    expected.sort();
    for (row, (name, reason)) in got.iter().zip(expected) {
        assert_eq!(row[0].as_deref(), Some(name));
        assert_eq!(row[1].as_deref(), reason, "{name}: reason must be copied verbatim, NULL staying NULL");
        assert_eq!(row[2].as_deref(), Some("legacy"));
        assert_eq!(row[3].as_deref(), Some("system"));
        assert_eq!(row[4].as_deref(), Some(""), "system-internal asserts have an empty project, not NULL");
        assert_eq!(row[5].as_deref(), Some("nodemaint-migration"));
        let uuid = uuid::Uuid::parse_str(row[6].as_deref().unwrap()).unwrap();
        assert_eq!(uuid.get_variant(), uuid::Variant::RFC4122);
        if backend == DbBackend::Sqlite {
            // Time-ordered on SQLite (see migration::sql::SQLITE_UUID_V7_EXPR), stamped now.
            assert_eq!(uuid.get_version_num(), 7, "{uuid}");
            let (secs, _) = uuid.get_timestamp().expect("a v7 uuid carries its time").to_unix();
            let now = chrono::Utc::now().timestamp() as u64;
            assert!(secs + 600 > now && secs <= now, "{uuid} is stamped {secs}, now is {now}");
        } else {
            assert_eq!(uuid.get_version_num(), 4);
        }
    }
    let mut uuids: Vec<_> = got.iter().map(|r| r[6].clone()).collect();
    uuids.sort();
    uuids.dedup();
    assert_eq!(uuids.len(), got.len(), "every entry gets its own uuid");

    // One history event per backfilled entry, naming it.
    let history = rows(
        &db,
        "SELECT h.event_type, h.event, m.uuid, h.severity FROM node_history h \
         JOIN node_maintenance m ON m.node_id = h.node_id ORDER BY h.id",
    )
    .await;
    assert_eq!(history.len(), maintained.len());
    for h in &history {
        assert_eq!(h[0].as_deref(), Some("maintenance"));
        let event = h[1].as_deref().unwrap();
        assert!(event.contains(h[2].as_deref().unwrap()) && event.contains("type legacy, scope system"), "{event}");
        assert_eq!(h[3].as_deref(), Some("info"));
    }
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_history").await, maintained.len() as i64);

    // Ironic's own tables, columns, rows and alembic version are untouched.
    let after = catalog::tables(&db).await;
    for table in &ironic_tables {
        assert!(after.contains(table), "{table} disappeared");
    }
    assert_eq!(catalog::columns(&db, "nodes").await, node_columns);
    let nodes_after = rows(
        &db,
        &format!("SELECT uuid, name, {}, maintenance_reason FROM nodes ORDER BY id", text(backend, "maintenance")),
    )
    .await;
    assert_eq!(nodes_after, nodes_before);
    assert_eq!(rows(&db, "SELECT version_num FROM alembic_version").await, vec![vec![Some("9fb44677ef15".to_owned())]]);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM nodemaint_baseline").await, 0, "the baseline created nothing here");
}

async fn backfill_run_twice_creates_each_entry_once(t: TestDb) {
    let db = ironic_fleet(&t).await;
    ok(&t.cli(&["db", "upgrade"]));
    let first = entries(&db).await;
    // The same backfill again (as reconcile will run it), on a fleet with a new maintained node.
    legacy_nodes::create(
        &db,
        NewNode {
            name: Some("late".into()),
            maintenance: true,
            maintenance_reason: Some("late".into()),
            ..NewNode::default()
        },
    )
    .await
    .unwrap();
    let created = backfill_legacy_entries(&db, &BackfillOptions { batch_size: Some(2), ..BackfillOptions::default() })
        .await
        .unwrap();
    assert_eq!(created, 1, "only the node without its legacy entry");
    assert_eq!(backfill_legacy_entries(&db, &BackfillOptions::default()).await.unwrap(), 0);
    let second = entries(&db).await;
    assert_eq!(second.len(), first.len() + 1);
    for row in &first {
        assert!(second.contains(row), "existing entry {row:?} changed");
    }
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_history").await, second.len() as i64);
}

async fn backfill_killed_between_batches_then_rerun_has_one_entry_per_node(t: TestDb) {
    t.load_ironic_schema().await;
    ok(&t.cli(&["fleet", "seed", "--nodes", "20000", "--maintained-fraction", "0.5", "--seed", "3"]));
    let db = t.connect().await;
    let maintained = count(&db, "SELECT COUNT(*) FROM nodes WHERE maintenance = TRUE").await;

    let (batches, status) = crate::common::kill_after(
        &t.url,
        &["db", "upgrade", "--batch-size", "10"],
        "nodemaint_migration=debug",
        "backfill batch done",
        5,
    );
    assert_eq!(batches, 5);
    assert_eq!(status.code(), None, "the upgrade must have been killed mid-backfill, not finished");
    // The backfill is one transaction: nothing of it survived, and it is still pending.
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_maintenance").await, 0);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_history").await, 0);

    let out = ok(&t.cli(&["db", "upgrade"]));
    assert!(out.contains(&format!("Backfilled {maintained} legacy")), "{out}");
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_maintenance").await, maintained);
    assert_eq!(
        count(
            &db,
            "SELECT COUNT(*) FROM (SELECT node_id FROM node_maintenance GROUP BY node_id HAVING COUNT(*) > 1) d"
        )
        .await,
        0
    );
    assert_eq!(
        count(&db, "SELECT COUNT(*) FROM nodes n WHERE n.maintenance = TRUE AND NOT EXISTS (SELECT 1 FROM node_maintenance m WHERE m.node_id = n.id)").await,
        0
    );
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_history").await, maintained);
}

async fn fleet_seed_is_deterministic_and_shaped_like_legacy_fleets(t: TestDb) {
    ok(&t.cli(&["db", "upgrade"]));
    let out: serde_json::Value = serde_json::from_str(&ok(&t.cli(&[
        "--format",
        "json",
        "fleet",
        "seed",
        "--nodes",
        "2000",
        "--maintained-fraction",
        "0.25",
        "--seed",
        "11",
    ])))
    .unwrap();
    let db = t.connect().await;
    assert_eq!(out["created"], 2000);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM nodes").await, 2000);
    let maintained = count(&db, "SELECT COUNT(*) FROM nodes WHERE maintenance = TRUE").await;
    assert_eq!(out["maintained"], maintained);
    assert!((400..600).contains(&maintained), "{maintained} of 2000 at 0.25");
    assert_eq!(
        count(&db, "SELECT COUNT(*) FROM nodes WHERE maintenance = FALSE AND maintenance_reason IS NOT NULL").await,
        0
    );
    assert!(count(&db, "SELECT COUNT(*) FROM nodes WHERE maintenance_reason LIKE 'LK_OP|HW_ERR: %'").await > 0);
    assert!(count(&db, "SELECT COUNT(*) FROM nodes WHERE maintenance = TRUE AND maintenance_reason IS NULL").await > 0);
    // No entries: a seeded fleet is the pre-upgrade state.
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_maintenance").await, 0);
    let first = rows(&db, "SELECT uuid FROM nodes ORDER BY id LIMIT 3").await;

    let again = TestDb::create(t.backend).await.unwrap();
    ok(&again.cli(&["db", "upgrade"]));
    ok(&again.cli(&["fleet", "seed", "--nodes", "3", "--maintained-fraction", "0.25", "--seed", "11"]));
    assert_eq!(
        rows(&again.connect().await, "SELECT uuid FROM nodes ORDER BY id").await,
        first,
        "same seed, same fleet"
    );
}

backend_tests!(
    upgrade_on_an_ironic_database_backfills_one_legacy_entry_per_maintained_node,
    backfill_run_twice_creates_each_entry_once,
    backfill_killed_between_batches_then_rerun_has_one_entry_per_node,
    fleet_seed_is_deterministic_and_shaped_like_legacy_fleets,
);
