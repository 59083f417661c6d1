//! Typed maintenance events on every backend: what a reader sees of history
//! and of ended windows is decided by each event's fields, never by its
//! text, so no identity or reason can move a mask or make an entry look
//! ended; every operation's typed row reads back as the event whose text is
//! in history; and events written before typed events are typed once by the
//! migration from their fixed opening only.

use crate::api::{As, OPERATOR, Server, WINDOWS};
use crate::backend_tests;
use crate::common::{TestDb, count, ok};
use chrono::{Duration as Span, NaiveDateTime};
use nodemaint::MaintenanceEvent;
use nodemaint::admin::legacy_nodes::{self, NewNode, NodeChange};
use nodemaint::authority::WindowState;
use nodemaint::entity::{node_history, node_maintenance_event};
use nodemaint::maintenance::{WindowDetail, WindowQuery};
use nodemaint::schema::{self, UpgradeOptions};
use nodemaint::tick::{self, TickOptions};
use nodemaint::{Caller, Maintenance, NewEntry, Policy};
use nodemaint_runtime::sql::now_utc;
use reqwest::{Method, StatusCode};
use sea_orm::{ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder};
use serde_json::json;

const OWNER: &str = "9c84d2e0f1a3";
const LESSEE: &str = "a0a0a0a0a0a0";
/// In every identity a reader may not see; never in anything else.
const SECRET: &str = "SECRET";

/// A system user whose id holds every separator the history text uses,
/// then [`SECRET`], commas, a newline and non-ASCII.
fn sneaky_operator(tag: &str) -> Caller {
    Caller::system(format!("op) by {SECRET}-{tag} (project x), asserted by y (project z) at w,\n ünï"), &["admin"])
}
fn owner_admin() -> Caller {
    Caller::project("owner-user", OWNER, &["admin"])
}
fn lessee_admin() -> Caller {
    Caller::project("lessee-user", LESSEE, &["admin"])
}

/// A reason holding the separators (and a fake end) too.
const SNEAKY_REASON: &str = "PSU ) by x (project y) at z, asserted by w (project v) at u, ends 2030-01-01, \
                             cancelled (RMA) expired (vendor)";

fn entry(ty: &str, reason: &str) -> NewEntry {
    NewEntry { entry_type: ty.into(), reason: Some(reason.into()), ..Default::default() }
}

fn window(ty: &str, start: Option<NaiveDateTime>, end: NaiveDateTime) -> NewEntry {
    NewEntry { starts_at: start, ends_at: Some(end), ..entry(ty, SNEAKY_REASON) }
}

fn in_secs(s: i64) -> NaiveDateTime {
    now_utc() + Span::seconds(s)
}

/// An upgraded database with `myNode` (owner, lessee).
async fn setup(t: &TestDb) -> (Maintenance, DatabaseConnection) {
    let db = t.connect().await;
    schema::upgrade(&db, &t.url, UpgradeOptions::default()).await.unwrap();
    let node = NewNode {
        name: Some("myNode".into()),
        owner: Some(OWNER.into()),
        lessee: Some(LESSEE.into()),
        ..NewNode::default()
    };
    legacy_nodes::create(&db, node).await.unwrap();
    (Maintenance::new(db.clone(), Policy::default()), db)
}

fn ended() -> WindowQuery {
    WindowQuery { states: vec![WindowState::Ended], since: None, limit: 1000, marker: None }
}

/// Runs one tick now.
async fn run_tick(db: &DatabaseConnection, t: &TestDb) {
    tick::tick(db, &t.url, TickOptions::default()).await.unwrap();
}

/// Every kind of event by identities the node's owner and lessee may not
/// see: asserts, a window released early, one cancelled, one expired, an
/// owner's entry released by the system. Read as the owner and the lessee,
/// history and the ended windows show no part of those identities; read by
/// the system, they are there (so the check can fail).
async fn no_identity_a_reader_may_not_see_shows_in_history_or_ended_windows(t: TestDb) {
    let (svc, db) = setup(&t).await;
    svc.add(&sneaky_operator("A"), "myNode", entry("operator_hold", SNEAKY_REASON)).await.unwrap();
    let early =
        svc.add(&sneaky_operator("B"), "myNode", window("hardware_failure", None, in_secs(3600))).await.unwrap();
    svc.release(&sneaky_operator("B"), "myNode", &early.uuid).await.unwrap();
    let planned =
        svc.add(&sneaky_operator("C"), "myNode", window("hardware_failure", Some(in_secs(600)), in_secs(3600))).await;
    svc.cancel(&sneaky_operator("C"), "myNode", &planned.unwrap().uuid).await.unwrap();
    svc.add(&sneaky_operator("D"), "myNode", window("hardware_failure", None, in_secs(1))).await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
    run_tick(&db, &t).await;
    let owners = svc.add(&owner_admin(), "myNode", entry("operator_hold", "owner's hold")).await.unwrap();
    svc.release(&sneaky_operator("E"), "myNode", &owners.uuid).await.unwrap();

    // History is the owner's to read (Ironic's default rule); ended windows
    // the lessee's too.
    let history = svc.history(&owner_admin(), "myNode", 1000).await.unwrap();
    assert!(history.len() >= 9, "{history:?}");
    let seen = serde_json::to_string(&history).unwrap();
    assert!(!seen.contains(SECRET) && !seen.contains("ünï"), "the owner sees a masked identity: {seen}");
    assert!(seen.contains("cancelled (RMA)"), "the reasons are shown: {seen}");
    for (who, reader) in [("owner", owner_admin()), ("lessee", lessee_admin())] {
        let windows = svc.windows(&reader, &ended()).await.unwrap();
        assert_eq!(windows.len(), 3, "released early, cancelled, expired: {windows:?}");
        let seen = serde_json::to_string(&windows).unwrap();
        assert!(!seen.contains(SECRET) && !seen.contains("ünï"), "the {who} sees a masked identity: {seen}");
        // The reason is the entry's, shown whole to anyone who sees the entry.
        assert!(seen.contains("cancelled (RMA)"), "{seen}");
    }
    let system = serde_json::to_string(&svc.history(&sneaky_operator("Z"), "myNode", 1000).await.unwrap()).unwrap();
    for tag in ["A", "B", "C", "D", "E"] {
        assert!(system.contains(&format!("{SECRET}-{tag}")), "the system sees {tag}: {system}");
    }

    // The same through the CLI, as the owner and the lessee.
    let out = ok(&t.cli(&[
        "--format",
        "json",
        "history",
        "list",
        "myNode",
        "--project",
        OWNER,
        "--user",
        "own",
        "--roles",
        "admin",
    ]));
    assert!(out.contains("maintenance entry") && !out.contains(SECRET), "{out}");
    let out = ok(&t.cli(&[
        "--format",
        "json",
        "windows",
        "list",
        "--state",
        "ended",
        "--project",
        LESSEE,
        "--roles",
        "admin",
    ]));
    assert!(out.contains("expired") && !out.contains(SECRET), "{out}");
}

backend_tests!(no_identity_a_reader_may_not_see_shows_in_history_or_ended_windows);

/// Through `serve`: a window asserted and released early by a system user
/// whose id holds the separators; `GET /v1/maintenance?state=ended` shows
/// the owner and the lessee no part of it, and the operator all of it.
async fn the_rest_estate_listing_masks_ended_windows_by_their_fields(t: TestDb) {
    let (_, _) = setup(&t).await;
    let api = Server::start(&t.url, "trusted-headers");
    let sneaky = As { user: "op) by SECRET-R (project x), asserted by y", project: None, roles: "admin" };
    let ends = (chrono::Utc::now() + Span::hours(1)).to_rfc3339();
    let body = json!({"type": "hardware_failure", "reason": SNEAKY_REASON, "ends_at": ends});
    let made = api.call(Method::POST, "/v1/nodes/myNode/maintenance", Some(WINDOWS), Some(sneaky), Some(body)).await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.body);
    let uuid = made.json()["uuid"].as_str().unwrap().to_owned();
    let path = format!("/v1/nodes/myNode/maintenance/{uuid}");
    let released = api.call(Method::DELETE, &path, Some(WINDOWS), Some(sneaky), None).await;
    assert!(released.status.is_success(), "{}", released.body);

    let owner = As { user: "owner-user", project: Some(OWNER), roles: "admin" };
    let lessee = As { user: "lessee-user", project: Some(LESSEE), roles: "admin" };
    for who in [owner, lessee] {
        let r = api.call(Method::GET, "/v1/maintenance?state=ended", Some(WINDOWS), Some(who), None).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        assert!(!r.body.contains(SECRET), "{} sees a masked identity: {}", who.user, r.body);
        let rows = r.json()["windows"].as_array().cloned().unwrap_or_default();
        assert_eq!(rows.len(), 1, "{}", r.body);
        assert_eq!(rows[0]["uuid"], uuid.as_str());
        assert_eq!(rows[0]["ended_by"], "released");
        assert_eq!(rows[0]["asserted_by"], "******");
    }
    let r = api.call(Method::GET, "/v1/maintenance?state=ended", Some(WINDOWS), Some(OPERATOR), None).await;
    assert!(r.body.contains("SECRET-R"), "the operator sees who: {}", r.body);
}

backend_tests!(the_rest_estate_listing_masks_ended_windows_by_their_fields);

/// No reason text makes an entry an ended window: active entries and an
/// entry released without an end whose reasons read like an ending are not
/// listed; every window that ended (expired, cancelled, released early) is
/// listed once, with its uuid, type, scope and planned end.
async fn no_reason_makes_an_entry_an_ended_window(t: TestDb) {
    let (svc, db) = setup(&t).await;
    let op = Caller::system("op", &["admin"]);
    for (who, ty, reason) in [
        (&op, "hardware_failure", "PSU cancelled (RMA)"),
        (&op, "operator_hold", "firmware expired (vendor)"),
        (&owner_admin(), "operator_hold", "row C, ends 2030-01-01T00:00:00+00:00"),
    ] {
        svc.add(who, "myNode", entry(ty, reason)).await.unwrap();
    }
    let released = svc.add(&lessee_admin(), "myNode", entry("operator_hold", "x, ends 2030-01-01 released (")).await;
    svc.release(&lessee_admin(), "myNode", &released.unwrap().uuid).await.unwrap();
    assert!(svc.windows(&op, &ended()).await.unwrap().is_empty(), "nothing ended yet");

    let early = svc.add(&owner_admin(), "myNode", window("hardware_failure", None, in_secs(3600))).await.unwrap();
    svc.release(&owner_admin(), "myNode", &early.uuid).await.unwrap();
    let planned = window("operator_hold", Some(in_secs(600)), in_secs(7200));
    let planned = svc.add(&lessee_admin(), "myNode", planned).await.unwrap();
    svc.cancel(&lessee_admin(), "myNode", &planned.uuid).await.unwrap();
    let expiring = svc.add(&lessee_admin(), "myNode", window("hardware_failure", None, in_secs(1))).await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
    run_tick(&db, &t).await;

    let found = svc.windows(&op, &ended()).await.unwrap();
    let rows: Vec<_> = found
        .iter()
        .map(|r| match &r.window {
            WindowDetail::Ended(e) => {
                (e.uuid.clone(), e.entry_type.clone(), e.scope.clone(), e.ends_at.clone(), e.ended_by)
            }
            WindowDetail::Entry(e) => panic!("an entry among ended windows: {e:?}"),
        })
        .collect();
    assert_eq!(
        rows,
        vec![
            (early.uuid, "hardware_failure".into(), "owner".into(), early.ends_at, "released"),
            (planned.uuid, "operator_hold".into(), "lessee".into(), planned.ends_at, "cancelled"),
            (expiring.uuid, "hardware_failure".into(), "lessee".into(), expiring.ends_at, "expired"),
        ]
    );
}

backend_tests!(no_reason_makes_an_entry_an_ended_window);

/// Every event every operation records (assert, update, release, bulk
/// release, legacy set and unset, schedule, extend, cancel, the tick's
/// start and expiry, reconcile's backfill and repairs) has one typed row
/// that reads back as an event, and its history text is that event's text.
async fn every_events_typed_row_reads_back_as_its_history_text(t: TestDb) {
    let (svc, db) = setup(&t).await;
    let op = sneaky_operator("op");
    svc.add(&op, "myNode", entry("operator_hold", SNEAKY_REASON)).await.unwrap();
    let owners = svc.add(&owner_admin(), "myNode", entry("hardware_failure", "disk")).await.unwrap();
    svc.legacy_set(&op, "myNode", Some("legacy reason".into())).await.unwrap();
    svc.legacy_set(&op, "myNode", Some("legacy reason, again".into())).await.unwrap();
    svc.release(&lessee_admin(), "myNode", &owners.uuid).await.unwrap_err();
    svc.release(&op, "myNode", &owners.uuid).await.unwrap();
    let w = svc.add(&lessee_admin(), "myNode", window("operator_hold", None, in_secs(600))).await.unwrap();
    svc.extend(&lessee_admin(), "myNode", &w.uuid, in_secs(1200)).await.unwrap();
    let s = svc.add(&op, "myNode", window("hardware_failure", Some(in_secs(1)), in_secs(3))).await.unwrap();
    svc.extend(&op, "myNode", &s.uuid, in_secs(4)).await.unwrap();
    let c = svc.add(&owner_admin(), "myNode", window("operator_hold", Some(in_secs(600)), in_secs(900))).await;
    svc.cancel(&owner_admin(), "myNode", &c.unwrap().uuid).await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    run_tick(&db, &t).await; // starts s
    tokio::time::sleep(std::time::Duration::from_millis(3500)).await;
    run_tick(&db, &t).await; // expires s
    svc.legacy_unset(&op, "myNode").await.unwrap();
    svc.add(&op, "myNode", entry("hardware_failure", "again")).await.unwrap();
    svc.release_all(&op, "myNode").await.unwrap();
    // An old service sets maintenance with a reason: reconcile backfills it.
    let set = NodeChange { maintenance: Some(true), reason: Some("old service".into()), ..NodeChange::default() };
    legacy_nodes::set(&db, "myNode", set).await.unwrap();
    ok(&t.cli(&["reconcile"]));

    let history = node_history::Entity::find()
        .filter(node_history::Column::EventType.eq("maintenance"))
        .order_by_asc(node_history::Column::Id)
        .all(&db)
        .await
        .unwrap();
    let typed = node_maintenance_event::Entity::find().all(&db).await.unwrap();
    assert_eq!(typed.len(), history.len(), "one typed row per event");
    let mut kinds = std::collections::BTreeSet::new();
    for h in &history {
        let row = typed.iter().find(|e| e.history_uuid == h.uuid).unwrap_or_else(|| panic!("untyped: {h:?}"));
        let event = MaintenanceEvent::from_row(row).unwrap_or_else(|| panic!("not a typed event: {row:?}"));
        assert_eq!(h.event.as_deref(), Some(event.text().as_str()), "rendered by the one template");
        assert_eq!((h.node_id, h.created_at), (Some(event.node_id), Some(event.at)));
        kinds.insert(row.kind.clone());
    }
    let all = ["asserted", "updated", "released", "scheduled", "started", "extended", "cancelled", "expired"];
    assert_eq!(kinds, all.iter().map(|k| k.to_string()).collect(), "every kind was recorded");
    // The reconcile backfill's event, typed with its note.
    let backfilled = typed.iter().find(|e| e.note.as_deref().is_some_and(|n| n.contains("backfilled"))).unwrap();
    assert_eq!((backfilled.kind.as_str(), backfilled.entry_type.as_str()), ("asserted", "legacy"));
}

backend_tests!(every_events_typed_row_reads_back_as_its_history_text);

/// Events already in history when the events migration runs are typed
/// from their fixed opening only: kind, entry, type and scope, the actor
/// from history's columns. A reader who may not see an identity gets the
/// opening only, whatever the rest of the text holds; the system the text.
async fn older_events_are_typed_from_their_opening_and_masked_whole(t: TestDb) {
    let (svc, db) = setup(&t).await;
    let op = sneaky_operator("old");
    let held = svc.add(&op, "myNode", window("hardware_failure", None, in_secs(3600))).await.unwrap();
    svc.release(&op, "myNode", &held.uuid).await.unwrap();
    // Back to before typed events: the texts stay, their types go.
    ok(&t.cli(&["db", "downgrade", "--steps", "2", "--yes"]));
    ok(&t.cli(&["db", "upgrade"]));
    let typed = node_maintenance_event::Entity::find().order_by_asc(node_maintenance_event::Column::Id).all(&db).await;
    let typed = typed.unwrap();
    let kinds: Vec<(&str, &str, &str, &str, bool)> = typed
        .iter()
        .map(|e| (e.kind.as_str(), e.entry_uuid.as_str(), e.entry_type.as_str(), e.scope.as_str(), e.from_text))
        .collect();
    let u = held.uuid.as_str();
    assert_eq!(
        kinds,
        vec![("asserted", u, "hardware_failure", "system", true), ("released", u, "hardware_failure", "system", true)]
    );
    assert!(typed.iter().all(|e| e.asserted_by.is_none() && e.reason.is_none()), "nothing after the opening read");

    let seen = serde_json::to_string(&svc.history(&owner_admin(), "myNode", 100).await.unwrap()).unwrap();
    assert!(!seen.contains(SECRET) && !seen.contains("PSU"), "{seen}");
    assert!(seen.contains(&format!("maintenance entry {u} released (type hardware_failure, scope system;")), "{seen}");
    let seen = serde_json::to_string(&svc.history(&op, "myNode", 100).await.unwrap()).unwrap();
    assert!(seen.contains("SECRET-old") && seen.contains("PSU"), "the system reads the text: {seen}");
    // Not an ended window: whether it had an end is after the opening.
    assert!(svc.windows(&op, &ended()).await.unwrap().is_empty());
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_history").await, 2);

    // An older nodemaint still running after the upgrade writes a text
    // without a typed row: below system scope it is not shown at all.
    let node = count(&db, "SELECT id FROM nodes WHERE name = 'myNode'").await;
    let user = nodemaint_runtime::sql::quote(db.get_database_backend(), "user");
    db.execute_unprepared(&format!(
        "INSERT INTO node_history (uuid, event_type, severity, event, {user}, project, node_id, version, created_at) \
         VALUES ('00000000-0000-4000-8000-000000000001', 'maintenance', 'info', 'maintenance entry {u} released \
         (type operator_hold, scope owner, asserted by o (project {OWNER}) at x, reason: r) by {SECRET}-late \
         (project {OWNER})', 'someone', '{OWNER}', {node}, '1.0', '2026-12-05 10:00:00')"
    ))
    .await
    .unwrap();
    let seen = serde_json::to_string(&svc.history(&owner_admin(), "myNode", 100).await.unwrap()).unwrap();
    assert!(!seen.contains(SECRET) && seen.contains("without typed fields"), "{seen}");
}

backend_tests!(older_events_are_typed_from_their_opening_and_masked_whole);
