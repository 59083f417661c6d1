//! Maintenance windows on every backend: the tick ends and starts them
//! (once, however many ticks run at once), extend and cancel follow the
//! release rules, overlaps and bad input are refused with nothing written,
//! the estate listing shows what each caller may see, `serve` ticks on its
//! own, and an old service's drift on a window is reconciled like any entry.

use crate::backend_tests;
use crate::common::{TestDb, count, nodemaint_cmd, stderr, stdout};
use chrono::{Duration as Span, NaiveDateTime};
use nodemaint::admin::legacy_nodes::{self, NewNode, NodeChange};
use nodemaint::authority::WindowState;
use nodemaint::entity::{node_history, node_maintenance};
use nodemaint::maintenance::{WindowDetail, WindowQuery};
use nodemaint::schema::{self, UpgradeOptions};
use nodemaint::tick::{self, TickOptions, TickReport};
use nodemaint::{Caller, Maintenance, NewEntry, Policy, nodes};
use nodemaint_runtime::sql::now_utc;
use sea_orm::{ActiveValue::Set, ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter};
use std::process::Stdio;
use std::time::Duration;

const OWNER: &str = "9c84d2e0f1a3";
const LESSEE: &str = "a0a0a0a0a0a0";
const OTHER_OWNER: &str = "c0c0c0c0c0c0";

fn operator() -> Caller {
    Caller::system("op-admin", &["admin"])
}
fn lessee_admin() -> Caller {
    Caller::project("lessee-user", LESSEE, &["admin"])
}
fn owner_member() -> Caller {
    Caller::project("owner-user", OWNER, &["member"])
}

fn window(ty: &str, reason: &str, start: Option<NaiveDateTime>, end: NaiveDateTime) -> NewEntry {
    NewEntry {
        entry_type: ty.into(),
        reason: Some(reason.into()),
        starts_at: start,
        ends_at: Some(end),
        ..Default::default()
    }
}

fn in_secs(s: i64) -> NaiveDateTime {
    now_utc() + Span::seconds(s)
}

/// An upgraded database with `myNode` (owner, lessee) and `otherNode` (another owner).
async fn setup(t: &TestDb) -> (Maintenance, DatabaseConnection) {
    let db = t.connect().await;
    schema::upgrade(&db, &t.url, UpgradeOptions::default()).await.unwrap();
    let nodes = [("myNode", OWNER, Some(LESSEE)), ("otherNode", OTHER_OWNER, None)];
    for (name, owner, lessee) in nodes {
        let node = NewNode {
            name: Some(name.into()),
            owner: Some(owner.into()),
            lessee: lessee.map(str::to_owned),
            ..NewNode::default()
        };
        legacy_nodes::create(&db, node).await.unwrap();
    }
    (Maintenance::new(db.clone(), Policy::defaults()), db)
}

async fn node_state(db: &DatabaseConnection, ident: &str) -> (bool, Option<String>) {
    let n = nodes::find(db, ident).await.unwrap();
    (n.maintenance.unwrap_or(false), n.maintenance_reason)
}

async fn run_tick(db: &DatabaseConnection, t: &TestDb) -> TickReport {
    tick::tick(db, &t.url, TickOptions::default()).await.unwrap()
}

async fn events(db: &DatabaseConnection, verb: &str) -> i64 {
    count(db, &format!("SELECT COUNT(*) FROM node_history WHERE event LIKE 'maintenance entry % {verb} (%'")).await
}

async fn a_window_is_released_by_the_tick_once_its_end_passes(t: TestDb) {
    let (svc, db) = setup(&t).await;
    let hold =
        svc.add(&operator(), "myNode", window("operator_hold", "Row C power work", None, in_secs(2))).await.unwrap();
    assert_eq!((hold.state, hold.ends_at.is_some()), (WindowState::Active, true));
    assert_eq!(node_state(&db, "myNode").await, (true, Some("operator_hold: Row C power work".into())));
    let early = run_tick(&db, &t).await;
    assert_eq!((early.expired, early.started), (0, 0), "not yet at its end");
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_maintenance").await, 1);

    tokio::time::sleep(Duration::from_secs(3)).await;
    let report = run_tick(&db, &t).await;
    assert_eq!((report.expired, report.started, report.remaining), (1, 0, 0));
    assert_eq!(node_state(&db, "myNode").await, (false, None), "boolean and reason recomputed");
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_maintenance").await, 0);
    let expired: Vec<node_history::Model> =
        node_history::Entity::find().filter(node_history::Column::Event.like("% expired (%")).all(&db).await.unwrap();
    assert_eq!(expired.len(), 1, "{expired:?}");
    let text = expired[0].event.clone().unwrap();
    assert!(text.contains(&hold.uuid) && text.contains("released by the schedule"), "{text}");
    assert_eq!(expired[0].user.as_deref(), Some("nodemaint-windows"), "the schedule acted");

    let again = run_tick(&db, &t).await;
    assert_eq!((again.expired, again.started), (0, 0), "a second tick does nothing");
    assert_eq!(events(&db, "expired").await, 1);
}

/// The tick writes its expiry events with `INSERT … SELECT`, the history
/// text built by the database from the typed row: each typed row must read
/// back as the event the library would record, and its text be exactly what
/// the one renderer writes, whatever the reason holds (quotes, `%`, `?`,
/// non-ASCII, over the event's length limit, none) and whoever asserted it.
async fn the_ticks_expiry_events_read_as_the_library_writes_them(t: TestDb) {
    use nodemaint::authority::{EventKind, MaintenanceEvent};
    use nodemaint::entity::node_maintenance_event;
    let (svc, db) = setup(&t).await;
    let odd = "it's 100% ?broken — ünïcode; \"quoted\" \\ back";
    let long = "x".repeat(5000);
    svc.add(&operator(), "myNode", window("operator_hold", &long, None, in_secs(60))).await.unwrap();
    svc.add(&lessee_admin(), "myNode", window("hardware_failure", odd, None, in_secs(60))).await.unwrap();
    let bare = svc
        .add(&operator(), "otherNode", window("operator_hold", "set to none below", None, in_secs(60)))
        .await
        .unwrap();
    // As an old service or a hand edit may leave one: no reason at all.
    node_maintenance::Entity::update_many()
        .col_expr(node_maintenance::Column::Reason, sea_orm::sea_query::Expr::value(Option::<String>::None))
        .filter(node_maintenance::Column::Uuid.eq(bare.uuid.clone()))
        .exec(&db)
        .await
        .unwrap();
    node_maintenance::Entity::update_many()
        .col_expr(node_maintenance::Column::EndsAt, sea_orm::sea_query::Expr::value(in_secs(-60)))
        .exec(&db)
        .await
        .unwrap();
    let before = node_maintenance::Entity::find().all(&db).await.unwrap();
    assert_eq!(before.len(), 3);

    let report = run_tick(&db, &t).await;
    assert_eq!(report.expired, 3);
    // What the tick records as, spelt out: the contract, not the constant.
    const EXPIRED_NOTE: &str = "the window ended; released by the schedule";
    let scheduler = Caller::system("nodemaint-windows", &["admin", "service"]);
    for entry in &before {
        let typed: Vec<node_maintenance_event::Model> = node_maintenance_event::Entity::find()
            .filter(node_maintenance_event::Column::EntryUuid.eq(entry.uuid.clone()))
            .filter(node_maintenance_event::Column::Kind.eq("expired"))
            .all(&db)
            .await
            .unwrap();
        assert_eq!(typed.len(), 1, "one expiry event for {}", entry.uuid);
        let event = MaintenanceEvent::from_row(&typed[0]).expect("a typed event");
        let expected = MaintenanceEvent::new(EventKind::Expired, entry, &scheduler, Some(EXPIRED_NOTE), event.at);
        assert_eq!(event, expected, "the typed row is the event the library records");
        let found: Vec<node_history::Model> = node_history::Entity::find()
            .filter(node_history::Column::Uuid.eq(typed[0].history_uuid.clone()))
            .all(&db)
            .await
            .unwrap();
        assert_eq!(found.len(), 1, "its history row");
        assert_eq!(found[0].event.as_deref(), Some(expected.text().as_str()), "rendered by the one template");
        assert_eq!(found[0].node_id, Some(entry.node_id));
        assert_eq!((found[0].user.as_deref(), found[0].project.as_deref()), (Some("nodemaint-windows"), None));
        let uuid = found[0].uuid.parse::<uuid::Uuid>().expect("a uuid");
        assert!(!uuid.is_nil());
    }
}

async fn a_scheduled_window_touches_nothing_until_it_starts_and_starts_once(t: TestDb) {
    let (svc, db) = setup(&t).await;
    let planned = svc
        .add(&operator(), "myNode", window("operator_hold", "firmware", Some(in_secs(2)), in_secs(3600)))
        .await
        .unwrap();
    assert_eq!(planned.state, WindowState::Scheduled);
    assert!(planned.starts_at.is_some());
    assert_eq!(node_state(&db, "myNode").await, (false, None), "scheduled: the node is not in maintenance");
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_maintenance").await, 0);
    let listed = svc.list(&operator(), "myNode").await.unwrap();
    assert_eq!(listed.iter().map(|e| e.state).collect::<Vec<_>>(), [WindowState::Scheduled]);
    assert_eq!(run_tick(&db, &t).await.started, 0, "not due yet");

    tokio::time::sleep(Duration::from_secs(3)).await;
    // Two ticks at once (two cron hosts): the window starts once.
    let (a, b) = tokio::join!(run_tick(&db, &t), run_tick(&db, &t));
    assert_eq!(a.started + b.started, 1, "{a:?} {b:?}");
    assert_eq!(node_state(&db, "myNode").await, (true, Some("operator_hold: firmware".into())));
    let active = svc.list(&operator(), "myNode").await.unwrap();
    assert_eq!(active.len(), 1);
    assert_eq!(
        (active[0].uuid.as_str(), active[0].state),
        (planned.uuid.as_str(), WindowState::Active),
        "the same window, now active"
    );
    assert_eq!(active[0].ends_at, planned.ends_at);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_maintenance_schedule").await, 0);
    assert_eq!((events(&db, "scheduled").await, events(&db, "started").await), (1, 1));
}

async fn two_tick_processes_release_a_thousand_windows_each_exactly_once(t: TestDb) {
    let db = t.connect().await;
    schema::upgrade(&db, &t.url, UpgradeOptions::default()).await.unwrap();
    let out = t.cli(&["fleet", "seed", "--nodes", "1000", "--maintained-fraction", "0", "--seed", "3"]);
    assert!(out.status.success(), "{}", stderr(&out));
    // A thousand windows whose end has passed (as if the tick had been down),
    // each node in maintenance because of it.
    let ids: Vec<i32> = nodemaint::entity::nodes::Entity::find().all(&db).await.unwrap().iter().map(|n| n.id).collect();
    let past = now_utc() - Span::minutes(5);
    let models: Vec<node_maintenance::ActiveModel> = ids
        .iter()
        .map(|id| node_maintenance::ActiveModel {
            uuid: Set(uuid::Uuid::new_v4().to_string()),
            node_id: Set(*id),
            entry_type: Set("operator_hold".into()),
            reason: Set(Some("overnight".into())),
            scope: Set("system".into()),
            asserted_by: Set("op-admin".into()),
            asserted_by_project: Set(String::new()),
            asserted_at: Set(past - Span::hours(1)),
            ends_at: Set(Some(past)),
            ..Default::default()
        })
        .collect();
    assert_eq!(models.len(), 1000);
    for chunk in models.chunks(200) {
        node_maintenance::Entity::insert_many(chunk.to_vec()).exec(&db).await.unwrap();
    }
    sea_orm::ConnectionTrait::execute_unprepared(
        &db,
        "UPDATE nodes SET maintenance = TRUE, maintenance_reason = 'operator_hold: overnight'",
    )
    .await
    .unwrap();

    let ticks: Vec<_> = (0..2)
        .map(|_| {
            nodemaint_cmd(&t.url, &["windows", "tick", "--batch-size", "100", "--format", "json"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let outs: Vec<_> = ticks.into_iter().map(|c| c.wait_with_output().unwrap()).collect();
    let mut expired = 0;
    for out in &outs {
        assert_eq!(out.status.code(), Some(0), "{}{}", stdout(out), stderr(out));
        let report: serde_json::Value = serde_json::from_str(&stdout(out)).unwrap();
        expired += report["expired"].as_u64().unwrap();
    }
    assert_eq!(expired, 1000, "between them the two released each window once");
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_maintenance").await, 0);
    assert_eq!(events(&db, "expired").await, 1000, "one history event per window");
    assert_eq!(count(&db, "SELECT COUNT(*) FROM nodes WHERE maintenance").await, 0);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM nodes WHERE maintenance_reason IS NOT NULL").await, 0);
    // --dry-run and a tick with nothing due: exit 0, nothing to do.
    let dry = t.cli(&["windows", "tick", "--dry-run"]);
    assert_eq!(dry.status.code(), Some(0), "{}", stdout(&dry));
}

async fn extend_and_cancel_follow_the_release_rules(t: TestDb) {
    let (svc, db) = setup(&t).await;
    let end = in_secs(3600);
    let active = svc.add(&operator(), "myNode", window("operator_hold", "rack", None, end)).await.unwrap();
    let planned = svc
        .add(&operator(), "myNode", window("hardware_failure", "disk", Some(in_secs(7200)), in_secs(9000)))
        .await
        .unwrap();

    // Later works, on an active and on a scheduled window.
    let later = end + Span::hours(1);
    let extended = svc.extend(&operator(), "myNode", &active.uuid, later).await.unwrap();
    assert_eq!(extended.ends_at.as_deref(), Some(nodemaint::entity::vocab::iso8601(later).as_str()));
    let moved = svc.extend(&operator(), "myNode", &planned.uuid, in_secs(10_000)).await.unwrap();
    assert_eq!(moved.state, WindowState::Scheduled);
    assert_eq!(events(&db, "extended").await, 2);
    let ends = || async {
        node_maintenance::Entity::find().all(&db).await.unwrap().into_iter().map(|e| e.ends_at).collect::<Vec<_>>()
    };
    let stored = ends().await;
    // Earlier, or in the past: 400, nothing changed.
    for bad in [end, in_secs(-60)] {
        let e = svc.extend(&operator(), "myNode", &active.uuid, bad).await.unwrap_err();
        assert_eq!(e.http_status(), 400, "{e}");
    }
    assert_eq!(ends().await, stored, "nothing changed");
    assert_eq!(events(&db, "extended").await, 2);

    // A lessee cannot extend or cancel a system window, and sees it masked.
    let e = svc.extend(&lessee_admin(), "myNode", &active.uuid, in_secs(20_000)).await.unwrap_err();
    assert_eq!(e.http_status(), 403, "{e}");
    let e = svc.cancel(&lessee_admin(), "myNode", &planned.uuid).await.unwrap_err();
    assert_eq!(e.http_status(), 403, "{e}");
    let seen = svc.list(&lessee_admin(), "myNode").await.unwrap();
    assert_eq!(seen.len(), 2);
    assert!(seen.iter().all(|e| e.asserted_by == "******" && e.releasable == Some(false)), "{seen:?}");
    assert!(seen.iter().all(|e| e.releasable_reason.as_deref().is_some_and(|r| !r.is_empty())));
    // The lessee's own window: theirs to extend and cancel.
    let own = svc
        .add(&lessee_admin(), "myNode", window("operator_hold", "tenant", Some(in_secs(600)), in_secs(900)))
        .await
        .unwrap();
    assert_eq!(own.scope, "lessee");
    svc.extend(&lessee_admin(), "myNode", &own.uuid, in_secs(1200)).await.unwrap();

    // Cancel: a scheduled window goes; an active one is refused (release ends it).
    let e = svc.cancel(&operator(), "myNode", &active.uuid).await.unwrap_err();
    assert_eq!(e.http_status(), 409, "{e}");
    // Its advice names a command that exists, as it is spelt.
    assert!(e.message().contains(&format!("nodemaint maintenance remove myNode {}", active.uuid)), "{e}");
    let out = t.cli(&["maintenance", "remove", "--help"]);
    assert!(out.status.success() && !String::from_utf8_lossy(&out.stdout).contains("--entry"));
    assert!(e.message().contains("release it"), "{e}");
    svc.cancel(&operator(), "myNode", &planned.uuid).await.unwrap();
    // DELETE of a scheduled window (the release operation) cancels it too.
    svc.release(&lessee_admin(), "myNode", &own.uuid).await.unwrap();
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_maintenance_schedule").await, 0);
    assert_eq!(events(&db, "cancelled").await, 2);
    assert!(node_state(&db, "myNode").await.0, "cancelling scheduled windows leaves the active one");

    // Unknown uuids: 404; an entry without an end is not a window: 400.
    let unknown = uuid::Uuid::new_v4().to_string();
    assert_eq!(svc.extend(&operator(), "myNode", &unknown, in_secs(99)).await.unwrap_err().http_status(), 404);
    assert_eq!(svc.cancel(&operator(), "myNode", &unknown).await.unwrap_err().http_status(), 404);
    let plain = NewEntry { entry_type: "hardware_failure".into(), reason: Some("psu".into()), ..Default::default() };
    let plain = svc.add(&operator(), "myNode", plain).await.unwrap();
    let e = svc.extend(&operator(), "myNode", &plain.uuid, in_secs(99)).await.unwrap_err();
    assert_eq!(e.http_status(), 400, "{e}");
}

async fn overlapping_windows_of_one_key_are_refused(t: TestDb) {
    let (svc, db) = setup(&t).await;
    // One clock for the whole test, so "back to back" stays exact however slow a step is.
    let base = now_utc();
    let in_secs = |s: i64| base + Span::seconds(s);
    let first =
        svc.add(&operator(), "myNode", window("operator_hold", "A", Some(in_secs(3600)), in_secs(7200))).await.unwrap();
    let e = svc
        .add(&operator(), "myNode", window("operator_hold", "B", Some(in_secs(5400)), in_secs(9000)))
        .await
        .unwrap_err();
    assert_eq!(e.http_status(), 409);
    assert!(e.message().contains(&first.uuid), "names the other: {e}");
    // An entry without an end would hold the key when the window is due.
    let forever = NewEntry { entry_type: "operator_hold".into(), reason: Some("C".into()), ..Default::default() };
    let e = svc.add(&operator(), "myNode", forever).await.unwrap_err();
    assert_eq!(e.http_status(), 409);
    assert!(e.message().contains(&first.uuid), "{e}");
    // Back to back, another type, or another scope: fine.
    let before = svc.add(&operator(), "myNode", window("operator_hold", "D", None, in_secs(3600))).await.unwrap();
    svc.add(&operator(), "myNode", window("hardware_failure", "E", Some(in_secs(5400)), in_secs(9000))).await.unwrap();
    svc.add(&lessee_admin(), "myNode", window("operator_hold", "F", Some(in_secs(5400)), in_secs(9000))).await.unwrap();
    // Extending the active one into the scheduled one is refused too.
    let e = svc.extend(&operator(), "myNode", &before.uuid, in_secs(4000)).await.unwrap_err();
    assert_eq!(e.http_status(), 409, "{e}");
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_maintenance_schedule").await, 3);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_maintenance").await, 1);
}

async fn bad_window_input_is_refused_and_nothing_written(t: TestDb) {
    let (_svc, db) = setup(&t).await;
    let add = |extra: &[&str]| {
        let mut args = vec!["maintenance", "add", "myNode", "--type", "operator_hold"];
        args.extend_from_slice(extra);
        t.cli(&args)
    };
    let cases: [(&[&str], &str); 6] = [
        (&["--reason", "r", "--start", "+2h", "--end", "+1h"], "is not after its start"),
        (&["--reason", "r", "--end", "2020-01-01T00:00:00Z"], "is not in the future"),
        (&["--reason", "r", "--end", "tomorrow"], "--end 'tomorrow' is not a time"),
        (&["--reason", "r", "--start", "soon", "--end", "+1h"], "--start 'soon' is not a time"),
        (&["--end", "+1h"], "needs a reason"),
        (&["--reason", "  ", "--end", "+1h"], "needs a reason"),
    ];
    for (args, message) in cases {
        let out = add(args);
        assert_eq!(out.status.code(), Some(10), "{args:?}: {}", stderr(&out));
        let line = stderr(&out);
        assert!(line.contains(message), "{args:?}: {line}");
        assert_eq!(line.trim().lines().count(), 1, "one line: {line}");
    }
    let unknown = uuid::Uuid::new_v4().to_string();
    let out = t.cli(&["maintenance", "extend", "myNode", &unknown, "--end", "+1h"]);
    assert_eq!(out.status.code(), Some(7), "{}", stderr(&out));
    let out = t.cli(&["maintenance", "cancel", "myNode", &unknown]);
    assert_eq!(out.status.code(), Some(7), "{}", stderr(&out));
    let out = t.cli(&["maintenance", "cancel", "myNode", "not-a-uuid"]);
    assert_eq!(out.status.code(), Some(10), "{}", stderr(&out));
    for table in ["node_maintenance", "node_maintenance_schedule", "node_history"] {
        assert_eq!(count(&db, &format!("SELECT COUNT(*) FROM {table}")).await, 0, "{table}: nothing written");
    }
    assert_eq!(node_state(&db, "myNode").await, (false, None));
}

async fn the_estate_listing_shows_what_each_caller_may_see(t: TestDb) {
    let (svc, db) = setup(&t).await;
    let sys = svc.add(&operator(), "myNode", window("operator_hold", "sys", None, in_secs(3600))).await.unwrap();
    let ten = svc
        .add(&lessee_admin(), "myNode", window("operator_hold", "ten", Some(in_secs(60)), in_secs(600)))
        .await
        .unwrap();
    let other =
        svc.add(&operator(), "otherNode", window("hardware_failure", "oth", None, in_secs(3600))).await.unwrap();
    // An entry without an end is not a window.
    let plain = NewEntry { entry_type: "hardware_failure".into(), reason: Some("x".into()), ..Default::default() };
    svc.add(&operator(), "myNode", plain).await.unwrap();

    let all = |limit: u64, marker: Option<String>| WindowQuery { states: vec![], since: None, limit, marker };
    let uuids = |rows: &[nodemaint::maintenance::WindowRow]| -> Vec<String> {
        rows.iter()
            .filter_map(|r| match &r.window {
                WindowDetail::Entry(e) => Some(e.uuid.clone()),
                WindowDetail::Ended { .. } => None,
            })
            .collect()
    };
    let system = svc.windows(&operator(), &all(100, None)).await.unwrap();
    assert_eq!(uuids(&system), [sys.uuid.clone(), other.uuid.clone(), ten.uuid.clone()], "active, then scheduled");
    // Each row reads as the node's own listing shows that window, and names its node.
    for row in &system {
        let WindowDetail::Entry(seen) = &row.window else { panic!("no ended rows asked for") };
        let node = row.node_name.clone().unwrap();
        let listed = svc.list(&operator(), &node).await.unwrap();
        let mut same = listed.into_iter().find(|e| e.uuid == seen.uuid).unwrap();
        (same.releasable, same.releasable_reason) = (None, None);
        assert_eq!(**seen, same, "{node}");
        assert_eq!(row.node_uuid, nodes::find(&db, &node).await.unwrap().uuid);
    }
    let lessee = svc.windows(&lessee_admin(), &all(100, None)).await.unwrap();
    assert_eq!(uuids(&lessee), [sys.uuid.clone(), ten.uuid.clone()], "only the leased node");
    match &lessee[0].window {
        WindowDetail::Entry(e) => assert_eq!(e.asserted_by, "******", "masked above the lessee's scope"),
        WindowDetail::Ended { .. } => unreachable!(),
    }
    let owner = svc.windows(&owner_member(), &all(100, None)).await.unwrap();
    assert_eq!(uuids(&owner), [sys.uuid.clone(), ten.uuid.clone()]);
    let stranger = Caller::project("nobody", "d0d0d0d0d0d0", &["member"]);
    assert!(svc.windows(&stranger, &all(100, None)).await.unwrap().is_empty());

    // Pages of one, by marker, walk the same rows.
    let (mut walked, mut marker) = (Vec::new(), None);
    loop {
        let page = svc.windows(&operator(), &all(1, marker.clone())).await.unwrap();
        let Some(last) = page.last() else { break };
        marker = Some(last.marker.clone());
        walked.extend(uuids(&page));
        assert!(walked.len() <= 3, "{walked:?}");
    }
    assert_eq!(walked, uuids(&system));
    let e = svc.windows(&operator(), &all(1, Some("nonsense".into()))).await.unwrap_err();
    assert_eq!(e.http_status(), 400);

    // Ended windows, from history: a cancel now; nothing before `since`.
    let since = now_utc();
    svc.cancel(&lessee_admin(), "myNode", &ten.uuid).await.unwrap();
    let ended = WindowQuery { states: vec![WindowState::Ended], since: Some(since), limit: 100, marker: None };
    let found = svc.windows(&operator(), &ended).await.unwrap();
    assert_eq!(found.len(), 1, "{found:?}");
    match &found[0].window {
        WindowDetail::Ended(e) => {
            assert_eq!((e.uuid.as_str(), e.ended_by), (ten.uuid.as_str(), "cancelled"));
            assert_eq!(e.ends_at, ten.ends_at, "the planned end, not the time of the cancel");
        }
        WindowDetail::Entry(_) => panic!("an ended row"),
    }
    let later = WindowQuery { since: Some(now_utc() + Span::hours(1)), ..ended };
    assert!(svc.windows(&operator(), &later).await.unwrap().is_empty());
    let stranger_sees = svc.windows(&stranger, &WindowQuery { since: Some(since), ..later }).await.unwrap();
    assert!(stranger_sees.is_empty());
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_maintenance WHERE ends_at IS NOT NULL").await, 2);
}

async fn an_old_services_drift_on_a_window_is_reconciled_like_any_entry(t: TestDb) {
    let (svc, db) = setup(&t).await;
    let hold = svc.add(&operator(), "myNode", window("operator_hold", "rack", None, in_secs(3600))).await.unwrap();
    // A service of the old release clears the boolean.
    let clear = NodeChange { maintenance: Some(false), ..NodeChange::default() };
    legacy_nodes::set(&db, "myNode", clear).await.unwrap();
    assert_eq!(node_state(&db, "myNode").await, (false, None));
    let report = nodemaint::reconcile::reconcile(&db, &t.url, Default::default()).await.unwrap();
    assert_eq!(report.repaired(), 1, "{report:?}");
    assert_eq!(node_state(&db, "myNode").await, (true, Some("operator_hold: rack".into())), "the table wins");
    let kept = svc.list(&operator(), "myNode").await.unwrap();
    assert_eq!(
        (kept[0].uuid.as_str(), kept[0].ends_at.clone()),
        (hold.uuid.as_str(), hold.ends_at.clone()),
        "still a window"
    );
}

async fn upgrade_check_warns_of_windows_the_tick_left_past_their_end(t: TestDb) {
    let (svc, db) = setup(&t).await;
    svc.add(&operator(), "myNode", window("operator_hold", "recent", None, in_secs(3600))).await.unwrap();
    let check = t.cli(&["upgrade", "check"]);
    assert_eq!(check.status.code(), Some(0), "{}", stdout(&check));
    // A window that ended ten minutes ago and is still active: no tick ran.
    let overdue_uuid = uuid::Uuid::new_v4().to_string();
    let overdue = node_maintenance::ActiveModel {
        uuid: Set(overdue_uuid.clone()),
        node_id: Set(nodes::find(&db, "otherNode").await.unwrap().id),
        entry_type: Set("hardware_failure".into()),
        reason: Set(Some("forgotten".into())),
        scope: Set("system".into()),
        asserted_by: Set("op-admin".into()),
        asserted_by_project: Set(String::new()),
        asserted_at: Set(in_secs(-7200)),
        ends_at: Set(Some(in_secs(-600))),
        ..Default::default()
    };
    node_maintenance::Entity::insert(overdue).exec(&db).await.unwrap();
    legacy_nodes::set(
        &db,
        "otherNode",
        NodeChange {
            maintenance: Some(true),
            reason: Some("hardware_failure: forgotten".into()),
            ..NodeChange::default()
        },
    )
    .await
    .unwrap();
    let check = t.cli(&["upgrade", "check"]);
    assert_eq!(check.status.code(), Some(1), "{}", stdout(&check));
    let text = stdout(&check);
    assert!(text.contains("Overdue maintenance windows"), "{text}");
    assert!(text.contains("Is the tick running?"), "{text}");
    assert!(text.contains(&overdue_uuid), "names the window: {text}");
    run_tick(&db, &t).await;
    let check = t.cli(&["upgrade", "check"]);
    assert_eq!(check.status.code(), Some(0), "{}", stdout(&check));
}

backend_tests!(
    upgrade_check_warns_of_windows_the_tick_left_past_their_end,
    a_window_is_released_by_the_tick_once_its_end_passes,
    the_ticks_expiry_events_read_as_the_library_writes_them,
    a_scheduled_window_touches_nothing_until_it_starts_and_starts_once,
    two_tick_processes_release_a_thousand_windows_each_exactly_once,
    extend_and_cancel_follow_the_release_rules,
    overlapping_windows_of_one_key_are_refused,
    bad_window_input_is_refused_and_nothing_written,
    the_estate_listing_shows_what_each_caller_may_see,
    an_old_services_drift_on_a_window_is_reconciled_like_any_entry,
);

async fn windows_over_http_at_1_117_and_serve_ticks_on_its_own(t: TestDb) {
    use crate::api::{LESSEE_ADMIN, NEW, OPERATOR, Server, WINDOWS};
    use nodemaint::entity::vocab::iso8601;
    use reqwest::{Method, StatusCode};
    use serde_json::json;
    let (_svc, db) = setup(&t).await;
    let api = Server::start_with(&t.url, "trusted-headers", &["--tick-interval", "1"]);
    let path = "/v1/nodes/myNode/maintenance";
    let end = iso8601(in_secs(3));
    let body = json!({"type": "operator_hold", "reason": "short", "ends_at": end});
    let r = api.call(Method::POST, path, Some(WINDOWS), Some(OPERATOR), Some(body.clone())).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    assert_eq!((r.json()["state"].as_str(), r.json()["ends_at"].as_str()), (Some("active"), Some(end.as_str())));
    let planned = json!({"type": "hardware_failure", "reason": "later", "starts_at": iso8601(in_secs(3600)), "ends_at": iso8601(in_secs(7200))});
    let r = api.call(Method::POST, path, Some(WINDOWS), Some(OPERATOR), Some(planned)).await;
    assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
    assert_eq!(r.json()["state"], "scheduled");
    let scheduled = r.json()["uuid"].as_str().unwrap().to_owned();

    // 1.116 is unchanged: no window fields in, none out, no scheduled windows.
    let r = api.call(Method::POST, path, Some(NEW), Some(OPERATOR), Some(body)).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
    assert!(r.fault().contains("Unexpected arguments: ends_at"), "{}", r.fault());
    let old = api.call(Method::GET, path, Some(NEW), Some(OPERATOR), None).await.json();
    assert_eq!(old["maintenance"].as_array().unwrap().len(), 1, "{old}");
    assert!(old["maintenance"][0].get("state").is_none() && old["maintenance"][0].get("ends_at").is_none(), "{old}");
    // 1.117: both, with whether this caller may release each, and why not.
    let seen = api.call(Method::GET, path, Some(WINDOWS), Some(LESSEE_ADMIN), None).await.json();
    let items = seen["maintenance"].as_array().unwrap();
    assert_eq!(items.iter().map(|e| e["state"].as_str().unwrap()).collect::<Vec<_>>(), ["active", "scheduled"]);
    assert!(items.iter().all(|e| e["releasable"] == false && e["releasable_reason"].is_string()), "{seen}");

    // PATCH extends (the lessee may not); below 1.117 the path does not take PATCH.
    let entry = format!("{path}/{scheduled}");
    let new_end = iso8601(in_secs(9000));
    let r = api.call(Method::PATCH, &entry, Some(WINDOWS), Some(LESSEE_ADMIN), Some(json!({"ends_at": new_end}))).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN, "{}", r.body);
    let r = api.call(Method::PATCH, &entry, Some(WINDOWS), Some(OPERATOR), Some(json!({"ends_at": new_end}))).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.json()["ends_at"].as_str(), Some(new_end.as_str()));
    let r = api.call(Method::PATCH, &entry, Some(WINDOWS), Some(OPERATOR), Some(json!({"ends_at": "soon"}))).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
    let r = api.call(Method::PATCH, &entry, Some(NEW), Some(OPERATOR), Some(json!({"ends_at": new_end}))).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);

    // The estate listing, paged.
    let page = api.call(Method::GET, "/v1/maintenance?limit=1", Some(WINDOWS), Some(OPERATOR), None).await.json();
    assert_eq!(page["windows"].as_array().unwrap().len(), 1, "{page}");
    let next = page["next"].as_str().expect("a next link").to_owned();
    let rest = next.split_once("/v1/").map(|(_, p)| format!("/v1/{p}")).unwrap();
    let second = api.call(Method::GET, &rest, Some(WINDOWS), Some(OPERATOR), None).await.json();
    assert_eq!(second["windows"][0]["uuid"].as_str(), Some(scheduled.as_str()), "{second}");
    assert_eq!(second["windows"][0]["node_name"], "myNode");
    // A `since` in the link is encoded and is the time the first page meant
    // (a relative `-1d` would mean another time on every page).
    let page = api
        .call(
            Method::GET,
            "/v1/maintenance?limit=1&since=-1d&state=active,scheduled",
            Some(WINDOWS),
            Some(OPERATOR),
            None,
        )
        .await
        .json();
    let next = page["next"].as_str().expect("a next link");
    let since = next.split("since=").nth(1).expect("since carried").split('&').next().unwrap();
    assert!(since.ends_with('Z') && !since.starts_with('-') && !since.contains('+') && !since.contains(' '), "{next}");
    assert!(next.contains("state=active%2Cscheduled"), "{next}");
    let rest = next.split_once("/v1/").map(|(_, p)| format!("/v1/{p}")).unwrap();
    let r = api.call(Method::GET, &rest, Some(WINDOWS), Some(OPERATOR), None).await;
    assert_eq!(r.status, StatusCode::OK, "page 2 reads: {}", r.body);
    let r = api.call(Method::GET, "/v1/maintenance?state=active,paused", Some(WINDOWS), Some(OPERATOR), None).await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
    assert!(r.body.contains("Unknown window state 'paused'; expected any of: active, scheduled, ended"), "{}", r.body);
    let with_offset = "/v1/maintenance?limit=1&since=2026-01-01T00:00:00%2B00:00";
    let page = api.call(Method::GET, with_offset, Some(WINDOWS), Some(OPERATOR), None).await.json();
    let rest = page["next"].as_str().unwrap().split_once("/v1/").map(|(_, p)| format!("/v1/{p}")).unwrap();
    assert_eq!(api.call(Method::GET, &rest, Some(WINDOWS), Some(OPERATOR), None).await.status, StatusCode::OK);

    // A 1.116 client never sees scheduled windows, so it cannot cancel one: 404.
    let r = api.call(Method::DELETE, &entry, Some(NEW), Some(OPERATOR), None).await;
    assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_maintenance_schedule").await, 1);

    // DELETE of a scheduled window cancels it.
    let r = api.call(Method::DELETE, &entry, Some(WINDOWS), Some(OPERATOR), None).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.body);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_maintenance_schedule").await, 0);

    // No cron: the server's own tick releases the short window after its end.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while node_state(&db, "myNode").await.0 {
        assert!(std::time::Instant::now() < deadline, "serve --tick-interval 1 did not release the window");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert_eq!(node_state(&db, "myNode").await, (false, None));
    assert_eq!(events(&db, "expired").await, 1);
}

backend_tests!(windows_over_http_at_1_117_and_serve_ticks_on_its_own);
