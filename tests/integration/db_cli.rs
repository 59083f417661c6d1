//! `nodemaint db …`, `node …` and `fleet …` through the binary: the schema a
//! fresh upgrade makes (read back from the catalog), status, the migration
//! lock, down/up round trips, cascading deletes, and bad input.

use crate::backend_tests;
use crate::catalog;
use crate::common::{Backend, TestDb, count, ok, stderr, stdout};
use nodemaint::entity::nodes;
use sea_orm::{ConnectionTrait, EntityTrait, QueryOrder};

const MIGRATIONS: [&str; 6] = [
    "m20261201_000001_baseline",
    "m20261201_000002_create_node_maintenance",
    "m20261201_000003_backfill_legacy_entries",
    "m20261205_000004_maintenance_windows",
    "m20261206_000005_maintenance_events",
    "m20261207_000006_notification_outbox",
];

async fn fresh_upgrade_creates_the_specified_schema(t: TestDb) {
    let out = ok(&t.cli(&["db", "upgrade"]));
    for m in MIGRATIONS {
        assert!(out.contains(&format!("Applied {m}")), "{out}");
    }
    let db = t.connect().await;
    let tables = catalog::tables(&db).await;
    let ours = ["node_maintenance", "node_maintenance_schedule", "node_maintenance_event", "nodemaint_migrations"];
    for table in ["nodes", "node_history"].into_iter().chain(ours) {
        assert!(tables.contains(&table.to_owned()), "{table} missing from {tables:?}");
    }

    // Every column of the spec's "Data model impact", with its length and nullability.
    let columns = catalog::columns(&db, "node_maintenance").await;
    let expect: [(&str, bool, Option<i64>); 14] = [
        ("id", false, None),
        ("uuid", false, Some(36)),
        ("node_id", false, None),
        ("type", false, Some(64)),
        ("reason", true, None),
        ("scope", false, Some(64)),
        ("asserted_by", false, Some(255)),
        ("asserted_by_project", false, Some(255)),
        ("asserted_at", false, None),
        ("extra", true, None),
        ("version", true, Some(15)),
        ("created_at", true, None),
        ("updated_at", true, None),
        // Maintenance windows' hard end (the windows migration).
        ("ends_at", true, None),
    ];
    assert_eq!(columns.len(), expect.len(), "{columns:?}");
    for (name, nullable, len) in expect {
        let c = columns.iter().find(|c| c.name == name).unwrap_or_else(|| panic!("no column {name}: {columns:?}"));
        assert_eq!(c.nullable, nullable, "{name} nullability: {c:?}");
        if len.is_some() {
            assert_eq!(c.max_len, len, "{name} length: {c:?}");
        }
    }
    for text_column in ["reason", "extra"] {
        let c = columns.iter().find(|c| c.name == text_column).unwrap();
        assert!(c.data_type.contains("text"), "{text_column} is {}", c.data_type);
    }

    let indexes = catalog::indexes(&db, "node_maintenance").await;
    let has = |unique: bool, cols: &[&str]| {
        indexes.iter().any(|i| i.unique == unique && i.columns.iter().map(String::as_str).eq(cols.iter().copied()))
    };
    assert!(has(true, &["uuid"]), "unique uuid: {indexes:?}");
    assert!(has(true, &["node_id", "type", "scope", "asserted_by_project"]), "unique entry key: {indexes:?}");
    assert!(
        indexes.iter().any(|i| i.name == "node_maintenance_node_id_idx" && !i.unique && i.columns == ["node_id"]),
        "node_id index: {indexes:?}"
    );
    let fks = catalog::foreign_keys(&db, "node_maintenance").await;
    assert_eq!(fks.len(), 1, "{fks:?}");
    assert_eq!(
        (fks[0].column.as_str(), fks[0].ref_table.as_str(), fks[0].ref_column.as_str()),
        ("node_id", "nodes", "id")
    );
    assert_eq!(fks[0].on_delete, "CASCADE");
    assert!(has(false, &["ends_at"]), "the tick's ends_at index: {indexes:?}");

    // Scheduled windows: the entry's columns with a start and a required end,
    // indexed by start and node, cascading with the node.
    let schedule = catalog::columns(&db, "node_maintenance_schedule").await;
    for (name, nullable) in [
        ("uuid", false),
        ("node_id", false),
        ("type", false),
        ("reason", true),
        ("scope", false),
        ("asserted_by", false),
        ("asserted_by_project", false),
        ("starts_at", false),
        ("ends_at", false),
    ] {
        let c = schedule.iter().find(|c| c.name == name).unwrap_or_else(|| panic!("no column {name}: {schedule:?}"));
        assert_eq!(c.nullable, nullable, "{name} nullability: {c:?}");
    }
    let schedule_indexes = catalog::indexes(&db, "node_maintenance_schedule").await;
    for cols in [&["starts_at"][..], &["node_id"][..]] {
        assert!(
            schedule_indexes.iter().any(|i| i.columns.iter().map(String::as_str).eq(cols.iter().copied())),
            "{cols:?}: {schedule_indexes:?}"
        );
    }
    let schedule_fks = catalog::foreign_keys(&db, "node_maintenance_schedule").await;
    assert_eq!(schedule_fks.len(), 1, "{schedule_fks:?}");
    assert_eq!((schedule_fks[0].ref_table.as_str(), schedule_fks[0].on_delete.as_str()), ("nodes", "CASCADE"));

    // Typed events: one per history row (unique uuid), found by node and by
    // entry, cascading with the node; no key on Ironic's node_history.
    let events = catalog::columns(&db, "node_maintenance_event").await;
    for (name, nullable) in [
        ("history_uuid", false),
        ("node_id", false),
        ("kind", false),
        ("entry_uuid", false),
        ("type", false),
        ("scope", false),
        ("reason", true),
        ("asserted_by", true),
        ("ends_at", true),
        ("actor", false),
        ("actor_project", false),
        ("created_at", false),
        ("from_text", false),
    ] {
        let c = events.iter().find(|c| c.name == name).unwrap_or_else(|| panic!("no column {name}: {events:?}"));
        assert_eq!(c.nullable, nullable, "{name} nullability: {c:?}");
    }
    let event_indexes = catalog::indexes(&db, "node_maintenance_event").await;
    for (unique, col) in [(true, "history_uuid"), (false, "node_id"), (false, "entry_uuid")] {
        assert!(event_indexes.iter().any(|i| i.unique == unique && i.columns == [col]), "{col}: {event_indexes:?}");
    }
    let event_fks = catalog::foreign_keys(&db, "node_maintenance_event").await;
    assert_eq!(event_fks.len(), 1, "{event_fks:?}");
    assert_eq!((event_fks[0].ref_table.as_str(), event_fks[0].on_delete.as_str()), ("nodes", "CASCADE"));

    // The baseline made Ironic's nodes with its columns and indexes.
    let node_columns: Vec<String> = catalog::columns(&db, "nodes").await.into_iter().map(|c| c.name).collect();
    for c in ["id", "uuid", "name", "owner", "lessee", "maintenance", "maintenance_reason", "fault", "reservation"] {
        assert!(node_columns.contains(&c.to_owned()), "nodes.{c}: {node_columns:?}");
    }
    let history: Vec<catalog::Column> = catalog::columns(&db, "node_history").await;
    assert_eq!(history.iter().find(|c| c.name == "user").unwrap().max_len, Some(64));
    assert_eq!(history.iter().find(|c| c.name == "project").unwrap().max_len, Some(80));

    let status: serde_json::Value = serde_json::from_str(&ok(&t.cli(&["--format", "json", "db", "status"]))).unwrap();
    let status = status.as_array().unwrap();
    assert_eq!(status.len(), MIGRATIONS.len());
    for (row, name) in status.iter().zip(MIGRATIONS) {
        assert_eq!(row["name"], name);
        assert_eq!(row["applied"], true, "{row}");
        assert!(row["applied_at"].is_string(), "{row}");
    }
    assert!(ok(&t.cli(&["db", "upgrade"])).contains("Nothing to apply"));
}

async fn status_before_upgrade_lists_everything_pending_and_creates_nothing(t: TestDb) {
    let status: serde_json::Value = serde_json::from_str(&ok(&t.cli(&["--format", "json", "db", "status"]))).unwrap();
    assert!(status.as_array().unwrap().iter().all(|m| m["applied"] == false), "{status}");
    assert!(catalog::tables(&t.connect().await).await.is_empty());
}

async fn seeded_nodes(t: &TestDb, n: &str, fraction: &str) -> i64 {
    ok(&t.cli(&["fleet", "seed", "--nodes", n, "--maintained-fraction", fraction, "--seed", "7"]));
    count(&t.connect().await, "SELECT COUNT(*) FROM nodes WHERE maintenance = TRUE").await
}

async fn two_concurrent_upgrades_apply_each_migration_once(t: TestDb) {
    t.load_ironic_schema().await;
    let maintained = seeded_nodes(&t, "20000", "0.5").await;
    // Small batches make the backfill take long enough for the two to overlap.
    let spawn = || {
        crate::common::nodemaint_cmd(&t.url, &["db", "upgrade", "--batch-size", "20", "--lock-timeout", "120"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn(), spawn());
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    let (out_a, out_b) = (ok(&a), ok(&b));
    let applied = |o: &str| o.matches("Applied m2026").count();
    assert_eq!(applied(&out_a) + applied(&out_b), MIGRATIONS.len(), "a: {out_a}\nb: {out_b}");
    assert!(out_a.contains("Nothing to apply") ^ out_b.contains("Nothing to apply"), "a: {out_a}\nb: {out_b}");
    let db = t.connect().await;
    assert_eq!(count(&db, "SELECT COUNT(*) FROM nodemaint_migrations").await, MIGRATIONS.len() as i64);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_maintenance").await, maintained);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_history").await, maintained);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_maintenance_event WHERE from_text").await, maintained);
}

async fn snapshot(t: &TestDb) -> Vec<nodes::Model> {
    nodes::Entity::find().order_by_asc(nodes::Column::Id).all(&t.connect().await).await.unwrap()
}

async fn down_then_up_leaves_the_same_node_rows(t: TestDb) {
    t.load_ironic_schema().await;
    let maintained = seeded_nodes(&t, "500", "0.3").await;
    let before = snapshot(&t).await;
    ok(&t.cli(&["db", "upgrade"]));
    assert_eq!(snapshot(&t).await, before, "the upgrade must not touch nodes");

    let refused = t.cli(&["db", "downgrade", "--steps", "6"]);
    assert_eq!(refused.status.code(), Some(3), "{}", stderr(&refused));
    assert!(stderr(&refused).contains("--yes"));

    let down = ok(&t.cli(&["db", "downgrade", "--steps", "6", "--yes"]));
    assert!(down.contains("Rolled back m20261201_000001_baseline"), "{down}");
    let db = t.connect().await;
    let tables = catalog::tables(&db).await;
    assert!(!tables.contains(&"node_maintenance".to_owned()));
    for ironic in ["nodes", "node_history", "alembic_version", "ports", "allocations"] {
        assert!(tables.contains(&ironic.to_owned()), "down dropped Ironic's {ironic}");
    }
    assert_eq!(snapshot(&t).await, before);

    ok(&t.cli(&["db", "upgrade"]));
    assert_eq!(snapshot(&t).await, before);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_maintenance").await, maintained);
}

async fn down_then_up_on_a_fresh_database_keeps_the_baseline_nodes(t: TestDb) {
    ok(&t.cli(&["db", "upgrade"]));
    let maintained = seeded_nodes(&t, "300", "0.5").await;
    let before = snapshot(&t).await;
    ok(&t.cli(&["db", "downgrade", "--steps", "5", "--yes"]));
    assert_eq!(snapshot(&t).await, before);
    let out = ok(&t.cli(&["db", "upgrade"]));
    assert!(out.contains(&format!("Backfilled {maintained} legacy")), "{out}");
    assert_eq!(snapshot(&t).await, before);
    // All the way down on a fresh database drops what the baseline made.
    ok(&t.cli(&["db", "downgrade", "--steps", "6", "--yes"]));
    let tables = catalog::tables(&t.connect().await).await;
    assert!(!tables.iter().any(|t| t == "nodes" || t == "node_history"), "{tables:?}");
}

async fn deleting_a_node_cascades_to_its_entries(t: TestDb) {
    ok(&t.cli(&["db", "upgrade"]));
    for name in ["n1", "n2"] {
        ok(&t.cli(&["node", "create", "--name", name, "--maintenance", "--reason", "HW_ERR: disk"]));
    }
    // Back to before the backfill (and the migrations after it).
    ok(&t.cli(&["db", "downgrade", "--steps", "4", "--yes"]));
    ok(&t.cli(&["db", "upgrade"]));
    let db = t.connect().await;
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_maintenance").await, 2);
    // The database itself cascades: a plain DELETE (history first, as Ironic does).
    let n1 = count(&db, "SELECT id FROM nodes WHERE name = 'n1'").await;
    db.execute_unprepared(&format!("DELETE FROM node_history WHERE node_id = {n1}")).await.unwrap();
    db.execute_unprepared(&format!("DELETE FROM nodes WHERE id = {n1}")).await.unwrap();
    assert_eq!(count(&db, &format!("SELECT COUNT(*) FROM node_maintenance WHERE node_id = {n1}")).await, 0);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_maintenance").await, 1);
    // And `node delete` does the same through the CLI.
    ok(&t.cli(&["node", "delete", "n2"]));
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_maintenance").await, 0);
}

async fn node_show_json_uses_ironic_field_names(t: TestDb) {
    ok(&t.cli(&["db", "upgrade"]));
    ok(&t.cli(&["node", "create", "--name", "rack1-n01", "--owner", "p-owner", "--lessee", "p-lessee"]));
    ok(&t.cli(&["node", "set", "rack1-n01", "--maintenance", "--reason", "rebalancing rack"]));
    let shown: serde_json::Value =
        serde_json::from_str(&ok(&t.cli(&["--format", "json", "node", "show", "rack1-n01"]))).unwrap();
    assert_eq!(shown["name"], "rack1-n01");
    assert_eq!(shown["owner"], "p-owner");
    assert_eq!(shown["lessee"], "p-lessee");
    assert_eq!(shown["maintenance"], true);
    assert_eq!(shown["maintenance_reason"], "rebalancing rack");
    assert!(shown["fault"].is_null());
    let by_uuid = ok(&t.cli(&["--format", "json", "node", "show", shown["uuid"].as_str().unwrap()]));
    assert_eq!(serde_json::from_str::<serde_json::Value>(&by_uuid).unwrap(), shown);
    ok(&t.cli(&["node", "set", "rack1-n01", "--no-maintenance"]));
    let cleared: serde_json::Value =
        serde_json::from_str(&ok(&t.cli(&["--format", "json", "node", "show", "rack1-n01"]))).unwrap();
    assert_eq!(cleared["maintenance"], false);
    assert!(cleared["maintenance_reason"].is_null());
    // Old services write only the columns: no entry appears.
    assert_eq!(count(&t.connect().await, "SELECT COUNT(*) FROM node_maintenance").await, 0);
}

async fn unknown_node_is_exit_7_with_one_line(t: TestDb) {
    ok(&t.cli(&["db", "upgrade"]));
    let out = t.cli(&["node", "show", "no-such-node"]);
    assert_eq!(out.status.code(), Some(7));
    assert_eq!(stderr(&out).trim(), "error: Node no-such-node could not be found.");
    let json = t.cli(&["--format", "json", "node", "show", "no-such-node"]);
    assert_eq!(json.status.code(), Some(7));
    let body: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    assert_eq!(body["error"]["status"], 404);
}

async fn a_database_that_is_not_ironic_is_refused(t: TestDb) {
    t.connect().await.execute_unprepared("CREATE TABLE invoices (id INTEGER PRIMARY KEY)").await.unwrap();
    let out = t.cli(&["db", "upgrade"]);
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("not an Ironic or nodemaint database") && err.contains("no `nodes` table"), "{err}");
    assert_eq!(catalog::tables(&t.connect().await).await, vec!["invoices".to_owned()], "nothing may be created");
    let node = t.cli(&["node", "list"]);
    assert_eq!(node.status.code(), Some(5));
}

async fn node_commands_before_upgrade_say_to_upgrade(t: TestDb) {
    let out = t.cli(&["node", "list"]);
    assert_eq!(out.status.code(), Some(5));
    assert!(stderr(&out).contains("run `nodemaint db upgrade` first"), "{}", stderr(&out));
}

backend_tests!(
    fresh_upgrade_creates_the_specified_schema,
    status_before_upgrade_lists_everything_pending_and_creates_nothing,
    two_concurrent_upgrades_apply_each_migration_once,
    down_then_up_leaves_the_same_node_rows,
    down_then_up_on_a_fresh_database_keeps_the_baseline_nodes,
    deleting_a_node_cascades_to_its_entries,
    node_show_json_uses_ironic_field_names,
    unknown_node_is_exit_7_with_one_line,
    a_database_that_is_not_ironic_is_refused,
    node_commands_before_upgrade_say_to_upgrade,
);

#[test]
fn malformed_url_is_exit_3_with_one_line() {
    let out = crate::common::nodemaint_cmd("postgres://user@host:notaport/db", &["db", "status"]).output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("malformed database URL") && err.contains("port `notaport`"), "{err}");
}

#[test]
fn unreachable_server_is_exit_4_with_one_line() {
    for url in ["postgres://postgres@127.0.0.1:1/ironic", "mysql://root@127.0.0.1:1/ironic"] {
        let out = crate::common::nodemaint_cmd(url, &["db", "upgrade"]).output().unwrap();
        assert_eq!(out.status.code(), Some(4), "{url}");
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("cannot connect to") && err.contains("refused"), "{err}");
    }
}

#[test]
fn bad_arguments_are_exit_127() {
    let out =
        crate::common::nodemaint_cmd("sqlite::memory:", &["db", "upgrade", "--batch-size", "0"]).output().unwrap();
    assert_eq!(out.status.code(), Some(127));
}

#[test]
fn every_command_has_an_example_in_its_help() {
    for args in [
        vec!["db", "upgrade"],
        vec!["db", "status"],
        vec!["db", "downgrade"],
        vec!["node", "create"],
        vec!["node", "list"],
        vec!["node", "show"],
        vec!["node", "set"],
        vec!["node", "delete"],
        vec!["fleet", "seed"],
    ] {
        let mut full = args.clone();
        full.push("--help");
        let out = crate::common::nodemaint_cmd("sqlite::memory:", &full).output().unwrap();
        assert!(stdout(&out).contains("Example:\n  nodemaint"), "{args:?}: {}", stdout(&out));
    }
    let _ = Backend::Sqlite;
}
