//! The rolling-upgrade story end to end: migrate, act as services of the
//! pinned release (writing only `nodes.maintenance` and
//! `nodes.maintenance_reason`), see `upgrade check` report each drift,
//! `reconcile --dry-run` change nothing, `reconcile` repair it all, and the
//! table, the boolean, the reason column and history agree row by row.

use crate::backend_tests;
use crate::common::{Backend, TestDb, count, nodemaint_cmd, ok, rows, stderr, stdout};
use nodemaint::admin::legacy_nodes::{NewNode, NodeChange};
use nodemaint::entity::vocab::maintenance_reason_column;
use nodemaint::entity::{node_maintenance, nodes};
use nodemaint::schema::{self, UpgradeOptions};
use nodemaint::{Caller, Maintenance, NewEntry, Policy};
use sea_orm::{ColumnTrait, ConnectionTrait, Database, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder};
use std::collections::HashMap;

fn json(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_str(&stdout(out)).unwrap_or_else(|e| panic!("{e}: {}", stdout(out)))
}

/// Runs SQL on one connection with foreign keys off, to make rows that
/// only a delete without cascade leaves behind.
async fn without_foreign_keys(t: &TestDb, sql: &str) {
    let mut options = sea_orm::ConnectOptions::new(t.url.clone());
    options.max_connections(1).sqlx_logging(false);
    let db = Database::connect(options).await.unwrap();
    let off = match t.backend {
        Backend::Sqlite => "PRAGMA foreign_keys = OFF",
        Backend::Postgres => "SET session_replication_role = replica",
        Backend::Mysql => "SET FOREIGN_KEY_CHECKS = 0",
    };
    db.execute_unprepared(off).await.unwrap();
    db.execute_unprepared(sql).await.unwrap();
    db.close().await.ok();
}

/// Every node: boolean = "an entry exists", reason column = synthesised,
/// at most one legacy and one fault, and history accounting for each entry.
/// Three queries, compared in memory.
async fn assert_converged(db: &DatabaseConnection) {
    assert_invariants(db, true).await;
}

/// The invariants, and with `history` that node history accounts for every
/// entry (not for entries written behind nodemaint's back, as drift is).
async fn assert_invariants(db: &DatabaseConnection, history: bool) {
    let all_nodes = nodes::Entity::find().order_by_asc(nodes::Column::Id).all(db).await.unwrap();
    let mut entries: HashMap<i32, Vec<node_maintenance::Model>> = HashMap::new();
    for e in node_maintenance::Entity::find().all(db).await.unwrap() {
        entries.entry(e.node_id).or_default().push(e);
    }
    let mut balance: HashMap<i32, i64> = HashMap::new();
    let id_text = crate::common::text(db.get_database_backend(), "node_id");
    for row in rows(db, &format!("SELECT {id_text}, event FROM node_history WHERE node_id IS NOT NULL")).await {
        let id: i32 = row[0].as_deref().unwrap().parse().unwrap();
        let event = row[1].as_deref().unwrap_or("");
        let delta = if event.contains(" asserted (type ") {
            1
        } else if event.contains(" released (type ") {
            -1
        } else {
            0
        };
        *balance.entry(id).or_default() += delta;
    }
    let ids: std::collections::HashSet<i32> = all_nodes.iter().map(|n| n.id).collect();
    assert!(entries.keys().all(|id| ids.contains(id)), "entries without a node remain");
    let none = Vec::new();
    for node in &all_nodes {
        let es = entries.get(&node.id).unwrap_or(&none);
        let name = node.name.clone().unwrap_or_default();
        assert_eq!(node.maintenance.unwrap_or(false), !es.is_empty(), "{name}: boolean");
        if !es.is_empty() || node.maintenance == Some(true) {
            assert_eq!(node.maintenance_reason, maintenance_reason_column(es), "{name}: reason column");
        }
        for ty in ["legacy", "fault"] {
            assert!(es.iter().filter(|e| e.entry_type == ty).count() <= 1, "{name}: one {ty} at most");
        }
        if history {
            assert_eq!(
                balance.get(&node.id).copied().unwrap_or(0),
                es.len() as i64,
                "{name}: history accounts for the entries"
            );
        }
    }
}

/// The state an old service leaves behind, one node per drift kind.
async fn drifted_fleet(t: &TestDb, anomalies: bool) -> (DatabaseConnection, Maintenance) {
    t.load_ironic_schema().await;
    let db = t.connect().await;
    for (name, maintenance, reason) in [
        ("set-later", false, None),
        ("cleared-later", true, Some("rack move")),
        ("reason-changed", true, Some("first reason")),
        ("typed-cleared", false, None),
        ("dup-legacy", true, Some("dup")),
        ("in-sync", true, Some("fine")),
        ("gone", true, Some("deleted without cascade")),
    ] {
        nodemaint::admin::legacy_nodes::create(
            &db,
            NewNode {
                name: Some(name.into()),
                maintenance,
                maintenance_reason: reason.map(Into::into),
                ..NewNode::default()
            },
        )
        .await
        .unwrap();
    }
    schema::upgrade(&db, &t.url, UpgradeOptions::default()).await.unwrap();
    let svc = Maintenance::new(db.clone(), Policy::defaults());
    svc.add(
        &Caller::system("op", &["admin"]),
        "typed-cleared",
        NewEntry {
            entry_type: "hardware_failure".into(),
            reason: Some("Disk 3".into()),
            extra: None,
            ..Default::default()
        },
    )
    .await
    .unwrap();
    // Services of the pinned release write only the columns:
    let old = |change: NodeChange| change;
    nodemaint::admin::legacy_nodes::set(
        &db,
        "set-later",
        old(NodeChange { maintenance: Some(true), reason: Some("HW_ERR: PSU".into()), ..NodeChange::default() }),
    )
    .await
    .unwrap();
    nodemaint::admin::legacy_nodes::set(
        &db,
        "cleared-later",
        old(NodeChange { maintenance: Some(false), ..NodeChange::default() }),
    )
    .await
    .unwrap();
    nodemaint::admin::legacy_nodes::set(
        &db,
        "reason-changed",
        old(NodeChange { reason: Some("LK_OP|HW_ERR: second reason".into()), ..NodeChange::default() }),
    )
    .await
    .unwrap();
    nodemaint::admin::legacy_nodes::set(
        &db,
        "typed-cleared",
        old(NodeChange { maintenance: Some(false), ..NodeChange::default() }),
    )
    .await
    .unwrap();
    if anomalies {
        // A race: a second legacy entry and its event (another scope, so the unique key lets it in).
        let dup = nodemaint::nodes::find(&db, "dup-legacy").await.unwrap();
        db.execute_unprepared(&format!(
            "INSERT INTO node_maintenance (uuid, node_id, type, reason, scope, asserted_by, asserted_by_project, asserted_at) \
             VALUES ('00000000-0000-4000-8000-00000000d0b1', {id}, 'legacy', 'second', 'owner', 'racer', 'p', '2030-01-01 00:00:00')",
            id = dup.id
        ))
        .await
        .unwrap();
        db.execute_unprepared(&format!(
            "INSERT INTO node_history (uuid, event_type, severity, event, node_id) VALUES ('00000000-0000-4000-8000-00000000e0e1', \
             'maintenance', 'info', 'maintenance entry 00000000-0000-4000-8000-00000000d0b1 asserted (type legacy, scope owner, reason: second) by racer (project p)', {id})",
            id = dup.id
        ))
        .await
        .unwrap();
        // A delete that skipped the cascade.
        let gone = nodemaint::nodes::find(&db, "gone").await.unwrap();
        without_foreign_keys(
            t,
            &format!("DELETE FROM node_history WHERE node_id = {id}; DELETE FROM nodes WHERE id = {id}", id = gone.id),
        )
        .await;
    }
    (db, svc)
}

async fn snapshot(db: &DatabaseConnection) -> (Vec<Vec<Option<String>>>, Vec<Vec<Option<String>>>, i64) {
    let backend = db.get_database_backend();
    let entries = rows(db, "SELECT uuid, reason, type, scope FROM node_maintenance ORDER BY id").await;
    let flag = crate::common::text(backend, "maintenance");
    let nodes = rows(db, &format!("SELECT name, {flag}, maintenance_reason FROM nodes ORDER BY id")).await;
    (entries, nodes, count(db, "SELECT COUNT(*) FROM node_history").await)
}

fn check_result<'a>(report: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == name)
        .unwrap_or_else(|| panic!("{name} in {report}"))
}

async fn rolling_upgrade_story_end_to_end(t: TestDb) {
    let (db, _svc) = drifted_fleet(&t, false).await;

    // Pinned: drift is expected, a Warning.
    let pinned = t.cli(&["upgrade", "check", "--json", "--pin-release-version", "2025.2"]);
    assert_eq!(pinned.status.code(), Some(1), "{}", stdout(&pinned));
    let report = json(&pinned);
    assert_eq!(check_result(&report, "Release pin")["result"], 1);
    let drift = check_result(&report, "Maintenance entries backfilled");
    assert_eq!(drift["result"], 1);
    let details = drift["details"].as_str().unwrap();
    for needle in [
        "1 node(s) in maintenance with no entry",
        "1 node(s) out of maintenance still holding legacy/fault entries",
        "1 node(s) out of maintenance holding typed entries",
        "1 node(s) whose maintenance_reason differs from their entries",
        "pinned to 2025.2",
    ] {
        assert!(details.contains(needle), "{needle} not in: {details}");
    }

    // Unpinned: the same drift is a Failure naming reconcile.
    let unpinned = t.cli(&["upgrade", "check", "--json"]);
    assert_eq!(unpinned.status.code(), Some(2));
    let report = json(&unpinned);
    let drift = check_result(&report, "Maintenance entries backfilled");
    assert_eq!(drift["result"], 2);
    assert!(drift["details"].as_str().unwrap().contains("Run `nodemaint reconcile`"));

    // A dry run reports and changes nothing.
    let before = snapshot(&db).await;
    let dry = t.cli(&["reconcile", "--dry-run"]);
    assert_eq!(dry.status.code(), Some(1), "{}", stderr(&dry));
    let table = stdout(&dry);
    assert!(
        table.starts_with(
            "+-----------------------------+--------------+-----------+\n\
         | Migration                   | Total Needed | Completed |\n\
         +-----------------------------+--------------+-----------+\n\
         | maintained_without_entry    | 1            | 0         |\n"
        ),
        "{table}"
    );
    assert!(table.contains("Dry run: nothing was changed"), "{table}");
    assert_eq!(snapshot(&db).await, before);

    // Reconcile repairs everything, and says so.
    let run = json(&t.cli(&["--format", "json", "reconcile"]));
    let summary = run["summary"].as_array().unwrap();
    for kind in summary {
        assert_eq!(kind["found"], kind["repaired"], "{kind}");
        assert_eq!(kind["remaining"], 0, "{kind}");
    }
    let found = |name: &str| summary.iter().find(|k| k["drift"] == name).unwrap()["found"].as_u64().unwrap();
    assert_eq!(found("maintained_without_entry"), 1);
    assert_eq!(found("cleared_with_legacy_entries"), 1);
    assert_eq!(found("cleared_with_typed_entries"), 1);
    assert_eq!(found("reason_changed"), 1);
    assert_eq!(found("duplicate_legacy_or_fault") + found("entries_without_node"), 0);
    assert_eq!(run["typed_on_cleared"].as_array().unwrap().len(), 1);

    let report = json(&t.cli(&["upgrade", "check", "--json"]));
    assert!(report["checks"].as_array().unwrap().iter().all(|c| c["result"] == 0), "{report}");
    assert_converged(&db).await;

    // Row by row, what each node now holds.
    let node = |name: &'static str| {
        let db = db.clone();
        async move { nodemaint::nodes::find(&db, name).await.unwrap() }
    };
    let entries_of = |id: i32| {
        let db = db.clone();
        async move {
            node_maintenance::Entity::find().filter(node_maintenance::Column::NodeId.eq(id)).all(&db).await.unwrap()
        }
    };
    let set_later = node("set-later").await;
    let e = entries_of(set_later.id).await;
    assert_eq!((e.len(), e[0].entry_type.as_str(), e[0].reason.as_deref()), (1, "legacy", Some("HW_ERR: PSU")));
    assert_eq!(e[0].asserted_by, "nodemaint-reconcile");
    assert!(entries_of(node("cleared-later").await.id).await.is_empty());
    let changed = node("reason-changed").await;
    assert_eq!(entries_of(changed.id).await[0].reason.as_deref(), Some("LK_OP|HW_ERR: second reason"));
    assert_eq!(changed.maintenance_reason.as_deref(), Some("LK_OP|HW_ERR: second reason"));
    let typed = node("typed-cleared").await;
    assert_eq!(typed.maintenance, Some(true), "the table is canonical for typed entries");
    assert_eq!(typed.maintenance_reason.as_deref(), Some("hardware_failure: Disk 3"));
    let notes = rows(&db, "SELECT event FROM node_history WHERE event LIKE '%[reconciliation%' ORDER BY id").await;
    assert!(
        notes.iter().any(|r| r[0].as_deref().unwrap().contains("released (type legacy, scope system, asserted by")),
        "{notes:?}"
    );

    // Idempotent: a second run finds nothing.
    let again = t.cli(&["--format", "json", "reconcile"]);
    assert_eq!(again.status.code(), Some(0));
    assert!(json(&again)["summary"].as_array().unwrap().iter().all(|k| k["found"] == 0));
}

async fn duplicates_and_orphans_fail_the_check_and_are_repaired(t: TestDb) {
    let (db, _svc) = drifted_fleet(&t, true).await;
    let pinned = t.cli(&["upgrade", "check", "--json", "--pin-release-version", "2025.2"]);
    assert_eq!(pinned.status.code(), Some(2), "an invariant broken is a Failure even while pinned");
    let report = json(&pinned);
    let invariants = check_result(&report, "Maintenance entry invariants");
    assert_eq!(invariants["result"], 2);
    assert!(
        invariants["details"].as_str().unwrap().contains("1 node(s) hold more than one legacy or fault entry"),
        "{invariants}"
    );
    let details = check_result(&report, "Maintenance entries backfilled")["details"].as_str().unwrap().to_owned();
    assert!(details.contains("1 node(s) with more than one legacy or fault entry"), "{details}");
    assert!(details.contains("1 entr(ies) whose node no longer exists"), "{details}");

    let run = json(&t.cli(&["--format", "json", "reconcile"]));
    let found = |name: &str| {
        run["summary"].as_array().unwrap().iter().find(|k| k["drift"] == name).unwrap()["repaired"].as_u64().unwrap()
    };
    assert_eq!((found("duplicate_legacy_or_fault"), found("entries_without_node")), (1, 1));
    let dup = nodemaint::nodes::find(&db, "dup-legacy").await.unwrap();
    let kept =
        node_maintenance::Entity::find().filter(node_maintenance::Column::NodeId.eq(dup.id)).all(&db).await.unwrap();
    assert_eq!((kept.len(), kept[0].reason.as_deref()), (1, Some("dup")), "the oldest legacy entry is kept");
    let notes = rows(&db, "SELECT event FROM node_history WHERE node_id IS NULL").await;
    assert!(
        notes
            .iter()
            .any(|r| r[0].as_deref().unwrap().contains("no longer exists")
                && r[0].as_deref().unwrap().contains("[node id")),
        "{notes:?}"
    );
    assert!(
        json(&t.cli(&["upgrade", "check", "--json"]))["checks"].as_array().unwrap().iter().all(|c| c["result"] == 0)
    );
    assert_converged(&db).await;
}

async fn pinned_reconcile_converges_the_table_to_the_boolean(t: TestDb) {
    let (db, _svc) = drifted_fleet(&t, false).await;
    let out = ok(&t.cli(&["reconcile", "--pin-release-version", "2025.2"]));
    assert!(out.contains("pinned to 2025.2") && out.contains("again once it has"), "{out}");
    let typed = nodemaint::nodes::find(&db, "typed-cleared").await.unwrap();
    assert_eq!(typed.maintenance, Some(false), "while pinned the boolean is canonical");
    assert_eq!(count(&db, &format!("SELECT COUNT(*) FROM node_maintenance WHERE node_id = {}", typed.id)).await, 0);
    assert_converged(&db).await;
}

async fn two_concurrent_reconciles_repair_each_drift_once(t: TestDb) {
    let db = t.connect().await;
    schema::upgrade(&db, &t.url, UpgradeOptions::default()).await.unwrap();
    ok(&t.cli(&["fleet", "seed", "--nodes", "3000", "--maintained-fraction", "0.3", "--seed", "5"]));
    let drifted = count(&db, "SELECT COUNT(*) FROM nodes WHERE maintenance = TRUE").await;
    let spawn = || {
        nodemaint_cmd(&t.url, &["--format", "json", "reconcile", "--batch-size", "50"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn(), spawn());
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    assert_eq!((a.status.code(), b.status.code()), (Some(0), Some(0)), "{} {}", stderr(&a), stderr(&b));
    let repaired = |o: &std::process::Output| json(o)["summary"][0]["repaired"].as_i64().unwrap();
    assert_eq!(repaired(&a) + repaired(&b), drifted, "each drift repaired exactly once");
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_maintenance").await, drifted);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_history").await, drifted);
    assert_converged(&db).await;
}

async fn max_count_stops_with_exit_1_then_finishes_with_0(t: TestDb) {
    let db = t.connect().await;
    schema::upgrade(&db, &t.url, UpgradeOptions::default()).await.unwrap();
    for i in 0..5 {
        nodemaint::admin::legacy_nodes::create(
            &db,
            NewNode { name: Some(format!("n{i}")), maintenance: true, ..NewNode::default() },
        )
        .await
        .unwrap();
    }
    let first = t.cli(&["--format", "json", "reconcile", "--max-count", "2"]);
    assert_eq!(first.status.code(), Some(1), "{}", stderr(&first));
    let summary = &json(&first)["summary"][0];
    assert_eq!(
        (summary["found"].as_u64(), summary["repaired"].as_u64(), summary["remaining"].as_u64()),
        (Some(5), Some(2), Some(3))
    );
    let second = t.cli(&["reconcile", "--max-count", "10"]);
    assert_eq!(second.status.code(), Some(0), "{}", stdout(&second));
    assert_converged(&db).await;
}

async fn reconcile_killed_mid_run_then_rerun_loses_and_doubles_nothing(t: TestDb) {
    let db = t.connect().await;
    schema::upgrade(&db, &t.url, UpgradeOptions::default()).await.unwrap();
    ok(&t.cli(&["fleet", "seed", "--nodes", "20000", "--maintained-fraction", "0.5", "--seed", "9"]));
    let drifted = count(&db, "SELECT COUNT(*) FROM nodes WHERE maintenance = TRUE").await;
    let (batches, status) = crate::common::kill_after(
        &t.url,
        &["reconcile", "--batch-size", "10"],
        "nodemaint=debug",
        "reconcile batch repaired",
        20,
    );
    assert_eq!(batches, 20);
    assert_eq!(status.code(), None, "killed mid-run");
    let partial = count(&db, "SELECT COUNT(*) FROM node_maintenance").await;
    assert!(partial > 0 && partial < drifted, "{partial} of {drifted}: committed batches stay");
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_history").await, partial, "each kept entry has its event");
    let rerun = t.cli(&["--format", "json", "reconcile"]);
    assert_eq!(rerun.status.code(), Some(0), "{}", stderr(&rerun));
    assert_eq!(json(&rerun)["summary"][0]["repaired"].as_i64().unwrap(), drifted - partial);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_maintenance").await, drifted);
    assert_converged(&db).await;
}

/// Node ids spread over five detection windows (detected two at a time, then
/// the odd one alone): drift in every window is found, repaired and checked.
async fn drift_in_every_detection_window_is_found(t: TestDb) {
    let db = t.connect().await;
    schema::upgrade(&db, &t.url, UpgradeOptions::default()).await.unwrap();
    let window = nodemaint_runtime::drift::DETECT_WINDOW;
    let ids = [1, window + 7, 2 * window + 11, 3 * window + 13, 4 * window + 17];
    for (i, id) in ids.iter().enumerate() {
        let node = nodemaint::admin::legacy_nodes::create(
            &db,
            NewNode { name: Some(format!("w{i}")), maintenance: true, ..NewNode::default() },
        )
        .await
        .unwrap();
        // Set in maintenance by an old service: no entry.
        db.execute_unprepared(&format!("UPDATE nodes SET id = {id} WHERE id = {}", node.id)).await.unwrap();
    }
    db.execute_unprepared("DELETE FROM node_maintenance").await.unwrap();
    let check = json(&t.cli(&["upgrade", "check", "--json"]));
    let backfilled = check_result(&check, "Maintenance entries backfilled");
    assert_eq!(backfilled["result"], 2, "{backfilled}");
    assert!(backfilled["details"].as_str().unwrap().starts_with("5 "), "{backfilled}");
    let dry = t.cli(&["--format", "json", "reconcile", "--dry-run"]);
    assert_eq!(dry.status.code(), Some(1), "{}", stderr(&dry));
    assert_eq!(json(&dry)["summary"][0]["found"].as_i64(), Some(5));
    let run = t.cli(&["--format", "json", "reconcile"]);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    assert_eq!(json(&run)["summary"][0]["repaired"].as_i64(), Some(5));
    let listed = ids.iter().map(i64::to_string).collect::<Vec<_>>().join(", ");
    let held = format!("SELECT COUNT(DISTINCT node_id) FROM node_maintenance WHERE node_id IN ({listed})");
    assert_eq!(count(&db, &held).await, 5);
    assert_converged(&db).await;
}

/// A repair transaction larger than the chunk its statements list nodes in
/// (the default on SQLite, or --batch-size): every chunk of it is repaired.
async fn a_repair_transaction_spanning_several_chunks_repairs_them_all(t: TestDb) {
    let db = t.connect().await;
    schema::upgrade(&db, &t.url, UpgradeOptions::default()).await.unwrap();
    let nodes = 2 * nodemaint_runtime::drift::LOAD_CHUNK as u64 + 500;
    // Every node set in maintenance by an old service: no entries.
    nodemaint::admin::fleet::seed(&db, nodes, 1.0, 7, &nodemaint_runtime::progress::NoProgress).await.unwrap();
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_maintenance").await, 0);
    let options = nodemaint::reconcile::ReconcileOptions { batch_size: Some(nodes as i64), ..Default::default() };
    let report = nodemaint::reconcile::reconcile(&db, &t.url, options).await.unwrap();
    assert_eq!(report.repaired(), nodes, "{report:?}");
    assert_eq!(report.remaining(), 0, "{report:?}");
    assert_eq!(count(&db, "SELECT COUNT(DISTINCT node_id) FROM node_maintenance").await, nodes as i64);
    assert_converged(&db).await;
}

/// The benchmark's drift (`nodemaint_test_support::drift`: 1 % of each kind
/// on a fleet made by Ironic's schema and backfilled) fails the check, and
/// one reconcile converges it.
async fn the_benchmarks_drift_of_every_kind_is_repaired(t: TestDb) {
    t.load_ironic_schema().await;
    let db = t.connect().await;
    nodemaint::admin::fleet::seed(&db, 3_000, 0.5, 42, &nodemaint_runtime::progress::NoProgress).await.unwrap();
    schema::upgrade(&db, &t.url, UpgradeOptions::default()).await.unwrap();
    assert_eq!(nodemaint_cmd(&t.url, &["upgrade", "check"]).output().unwrap().status.code(), Some(0));
    nodemaint_test_support::drift::inject(&db, &t.url).await;
    let check = nodemaint_cmd(&t.url, &["upgrade", "check"]).output().unwrap();
    assert_ne!(check.status.code(), Some(0), "the drift is seen: {}", crate::common::stdout(&check));
    let report = nodemaint::reconcile::reconcile(&db, &t.url, Default::default()).await.unwrap();
    let kinds: Vec<&str> = report.summary.iter().filter(|k| k.repaired > 0).map(|k| k.drift).collect();
    assert!(kinds.len() >= 5, "every injected kind is repaired: {report:?}");
    assert_eq!(report.remaining(), 0, "{report:?}");
    // The injected entries have no history of their own (they were written
    // behind nodemaint's back), so history cannot balance here.
    assert_invariants(&db, false).await;
    assert_eq!(nodemaint_cmd(&t.url, &["upgrade", "check"]).output().unwrap().status.code(), Some(0));
}

backend_tests!(
    the_benchmarks_drift_of_every_kind_is_repaired,
    a_repair_transaction_spanning_several_chunks_repairs_them_all,
    drift_in_every_detection_window_is_found,
    rolling_upgrade_story_end_to_end,
    duplicates_and_orphans_fail_the_check_and_are_repaired,
    pinned_reconcile_converges_the_table_to_the_boolean,
    two_concurrent_reconciles_repair_each_drift_once,
    max_count_stops_with_exit_1_then_finishes_with_0,
    reconcile_killed_mid_run_then_rerun_loses_and_doubles_nothing,
);

#[test]
fn upgrade_check_on_an_unreachable_database_exits_255_with_one_line() {
    let out = nodemaint_cmd("postgres://postgres@127.0.0.1:1/ironic", &["upgrade", "check"]).output().unwrap();
    assert_eq!(out.status.code(), Some(255));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("cannot connect"), "{err}");
}

#[test]
fn reconcile_errors_exit_2_and_bad_arguments_127() {
    let out = nodemaint_cmd("mysql://root@127.0.0.1:1/ironic", &["reconcile"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let out = nodemaint_cmd("sqlite::memory:", &["reconcile", "--max-count", "0"]).output().unwrap();
    assert_eq!(out.status.code(), Some(127));
}

/// `upgrade check`'s row checks, each made to fire by a row an operator
/// could find in a real table.
async fn row_checks_report_what_they_find(t: TestDb) {
    let db = t.connect().await;
    schema::upgrade(&db, &t.url, UpgradeOptions::default()).await.unwrap();
    let svc = Maintenance::new(db.clone(), Policy::defaults());
    for (name, owner, lessee) in [("leased", "own-a", "les-a"), ("plain", "own-a", "les-a")] {
        nodemaint::admin::legacy_nodes::create(
            &db,
            NewNode {
                name: Some(name.into()),
                owner: Some(owner.into()),
                lessee: Some(lessee.into()),
                ..NewNode::default()
            },
        )
        .await
        .unwrap();
    }
    let hold =
        NewEntry { entry_type: "operator_hold".into(), reason: Some("ours".into()), extra: None, ..Default::default() };
    let stale = svc.add(&Caller::project("u", "les-a", &["admin"]), "leased", hold.clone()).await.unwrap();
    let report = json(&t.cli(&["upgrade", "check", "--json"]));
    assert!(report["checks"].as_array().unwrap().iter().all(|c| c["result"] == 0), "{report}");
    assert!(
        check_result(&report, "Database backend supported")["details"].as_str().unwrap().contains("or later is needed")
    );

    // Scenario 6: the lease changes hands; the old lessee's hold is stale.
    nodemaint::admin::legacy_nodes::set(
        &db,
        "leased",
        NodeChange { lessee: Some(Some("les-b".into())), ..NodeChange::default() },
    )
    .await
    .unwrap();
    // A newer release wrote a type this one does not know; someone stored bad rows by hand.
    let plain = nodemaint::nodes::find(&db, "plain").await.unwrap();
    let insert = |uuid: &str, ty: &str, scope: &str, extra: &str| {
        format!(
            "INSERT INTO node_maintenance (uuid, node_id, type, reason, scope, asserted_by, asserted_by_project, asserted_at, extra) \
             VALUES ('{uuid}', {}, '{ty}', 'r', '{scope}', 'x', '{uuid}', '2026-01-01 00:00:00', {extra})",
            plain.id
        )
    };
    for sql in [
        insert("00000000-0000-4000-8000-0000000000a1", "power_lock", "system", "NULL"),
        insert("00000000-0000-4000-8000-0000000000a2", "operator_hold", "galaxy", "NULL"),
        insert("00000000-0000-4000-8000-0000000000a3", "hardware_failure", "system", "'[1, 2]'"),
        // Two legacy entries on one node (a racing old service).
        insert("00000000-0000-4000-8000-0000000000a4", "legacy", "system", "NULL"),
        insert("00000000-0000-4000-8000-0000000000a5", "legacy", "system", "NULL"),
    ] {
        db.execute_unprepared(&sql).await.unwrap();
    }
    let out = t.cli(&["upgrade", "check", "--json"]);
    assert_eq!(out.status.code(), Some(2));
    let report = json(&out);
    let stale_check = check_result(&report, "Stale holds after a lease or ownership change");
    assert_eq!(stale_check["result"], 1);
    assert!(stale_check["details"].as_str().unwrap().contains(&stale.uuid), "{stale_check}");
    let types = check_result(&report, "Registered maintenance types");
    assert_eq!(types["result"], 1);
    assert!(types["details"].as_str().unwrap().contains("power_lock (1)"), "{types}");
    let invariants = check_result(&report, "Maintenance entry invariants");
    assert_eq!(invariants["result"], 2);
    let details = invariants["details"].as_str().unwrap();
    assert!(details.contains("1 entr(ies) have an extra that is not a JSON object"), "{details}");
    assert!(details.contains("1 entr(ies) have a scope other than system, owner or lessee"), "{details}");
    assert!(details.contains("1 node(s) hold more than one legacy or fault entry"), "{details}");

    // asserted_by_project is NOT NULL in our schema; a table made otherwise is caught.
    if t.backend != Backend::Sqlite {
        let relax = match t.backend {
            Backend::Postgres => "ALTER TABLE node_maintenance ALTER COLUMN asserted_by_project DROP NOT NULL",
            _ => "ALTER TABLE node_maintenance MODIFY asserted_by_project VARCHAR(255) NULL",
        };
        db.execute_unprepared(relax).await.unwrap();
        db.execute_unprepared("UPDATE node_maintenance SET asserted_by_project = NULL WHERE type = 'power_lock'")
            .await
            .unwrap();
        let report = json(&t.cli(&["upgrade", "check", "--json"]));
        let details = check_result(&report, "Maintenance entry invariants")["details"].as_str().unwrap().to_owned();
        assert!(details.contains("1 entr(ies) have a NULL asserted_by_project"), "{details}");
    }
}

backend_tests!(row_checks_report_what_they_find);
