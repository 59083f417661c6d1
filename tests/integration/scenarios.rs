//! The node maintenance spec's usage scenarios 1–7, the fault type, policy
//! floors and bad input, through the library's public API on every backend.
//! Each test asserts statuses, messages, masking, and the node's
//! `maintenance` / `maintenance_reason` after each step.

use crate::backend_tests;
use crate::common::{TestDb, count, rows};
use nodemaint::admin::legacy_nodes::{self, NewNode, NodeChange};
use nodemaint::nodes;
use nodemaint::schema::{self, UpgradeOptions};
use nodemaint::{Caller, Error, Maintenance, NewEntry, Policy};
use sea_orm::DatabaseConnection;

const OWNER: &str = "9c84d2e0f1a3";
const LESSEE: &str = "a0a0a0a0a0a0";
const LESSEE_B: &str = "b0b0b0b0b0b0";

fn operator() -> Caller {
    Caller::system("op-admin", &["admin"])
}
fn owner_member(user: &str) -> Caller {
    Caller::project(user, OWNER, &["member"])
}
fn lessee_admin(project: &str) -> Caller {
    Caller::project("lessee-user", project, &["admin"])
}

fn typed(ty: &str, reason: &str) -> NewEntry {
    NewEntry { entry_type: ty.into(), reason: Some(reason.into()), extra: None, ..Default::default() }
}

async fn setup(t: &TestDb, policy: Policy) -> (Maintenance, DatabaseConnection) {
    let db = t.connect().await;
    schema::upgrade(&db, &t.url, UpgradeOptions::default()).await.unwrap();
    legacy_nodes::create(
        &db,
        NewNode {
            name: Some("myNode".into()),
            owner: Some(OWNER.into()),
            lessee: Some(LESSEE.into()),
            ..NewNode::default()
        },
    )
    .await
    .unwrap();
    legacy_nodes::create(
        &db,
        NewNode { name: Some("otherNode".into()), owner: Some(OWNER.into()), ..NewNode::default() },
    )
    .await
    .unwrap();
    (Maintenance::new(db.clone(), policy), db)
}

/// (`maintenance`, `maintenance_reason`) as an old-microversion reader sees them.
async fn legacy_view(db: &DatabaseConnection, node: &str) -> (bool, Option<String>) {
    let n = nodes::find(db, node).await.unwrap();
    (n.maintenance.unwrap_or(false), n.maintenance_reason)
}

fn status(e: &Error) -> u16 {
    e.http_status()
}

async fn scenario_1_hardware_replacement_hold(t: TestDb) {
    let (svc, db) = setup(&t, Policy::defaults()).await;
    let reason = "Disk 3 has bad sectors, scheduled for replacement, see ticket https://myjira/CIDTEAM-3743";
    let entry = svc.add(&owner_member("1f2e3d4c5b6a"), "myNode", typed("hardware_failure", reason)).await.unwrap();
    let json = serde_json::to_value(&entry).unwrap();
    assert_eq!(json["type"], "hardware_failure");
    assert_eq!(json["reason"], reason);
    assert_eq!(json["scope"], "owner");
    assert_eq!(json["asserted_by"], "1f2e3d4c5b6a");
    assert_eq!(json["asserted_by_project"], OWNER);
    assert_eq!(json["extra"], serde_json::json!({}));
    let at = json["asserted_at"].as_str().unwrap();
    assert!(at.len() == 25 && at.ends_with("+00:00") && at.as_bytes()[10] == b'T', "{at}");
    assert!(uuid::Uuid::parse_str(json["uuid"].as_str().unwrap()).is_ok());
    assert_eq!(legacy_view(&db, "myNode").await, (true, Some(format!("hardware_failure: {reason}"))));
    // Audit: the assert is in node history with who and why.
    let events = svc.history(&operator(), "myNode", 10).await.unwrap();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].user.as_deref(), Some("1f2e3d4c5b6a"));
    assert_eq!(events[0].project.as_deref(), Some(OWNER));
    assert!(
        events[0]
            .event
            .as_deref()
            .unwrap()
            .contains(&format!("{} asserted (type hardware_failure, scope owner", entry.uuid))
    );
}

async fn scenario_2_a_second_hold_and_409_on_duplicates(t: TestDb) {
    let (svc, db) = setup(&t, Policy::defaults()).await;
    let hw = svc.add(&owner_member("alice"), "myNode", typed("hardware_failure", "Disk 3")).await.unwrap();
    let hold = svc
        .add(&operator(), "myNode", typed("operator_hold", "Row C power work, change window CHG-2211"))
        .await
        .unwrap();
    assert_eq!(hold.scope, "system");
    assert_eq!(hold.asserted_by_project, "");
    let listed = svc.list(&operator(), "myNode").await.unwrap();
    assert_eq!(listed.iter().map(|e| e.uuid.as_str()).collect::<Vec<_>>(), [hw.uuid.as_str(), hold.uuid.as_str()]);
    assert_eq!(
        legacy_view(&db, "myNode").await,
        (true, Some("hardware_failure: Disk 3; operator_hold: Row C power work, change window CHG-2211".into()))
    );
    // Same type and scope from the same project is one logical entry, whoever asserts it.
    let again =
        svc.add(&Caller::system("another-op", &["admin"]), "myNode", typed("operator_hold", "x")).await.unwrap_err();
    assert_eq!(status(&again), 409, "{again}");
    assert!(again.message().contains(&hold.uuid), "{again}");
    let teammate = svc.add(&owner_member("bob"), "myNode", typed("hardware_failure", "y")).await.unwrap_err();
    assert_eq!(status(&teammate), 409);
    // A different type from the same project is a new entry.
    svc.add(&owner_member("bob"), "myNode", typed("operator_hold", "owner's own hold")).await.unwrap();
    assert_eq!(svc.list(&operator(), "myNode").await.unwrap().len(), 3);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_history").await, 3, "refused asserts write no history");
}

async fn scenario_3_releasing_one_hold_at_a_time(t: TestDb) {
    let (svc, db) = setup(&t, Policy::defaults()).await;
    svc.add(&operator(), "myNode", typed("hardware_failure", "Disk 3")).await.unwrap();
    let hold = svc.add(&operator(), "myNode", typed("operator_hold", "Row C power work")).await.unwrap();
    let released = svc.release(&Caller::system("dc-tech", &["member"]), "myNode", &hold.uuid).await.unwrap();
    assert_eq!(released.uuid, hold.uuid);
    assert_eq!(legacy_view(&db, "myNode").await, (true, Some("hardware_failure: Disk 3".into())));
    let events = svc.history(&operator(), "myNode", 10).await.unwrap();
    let last = events.last().unwrap();
    assert_eq!(last.user.as_deref(), Some("dc-tech"));
    let text = last.event.as_deref().unwrap();
    assert!(text.contains(&format!("{} released (type operator_hold, scope system", hold.uuid)), "{text}");
    assert!(text.contains("reason: Row C power work") && text.ends_with("by dc-tech (project none)"), "{text}");
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_maintenance").await, 1, "release hard-deletes");
}

async fn scenario_4_releasing_everything_at_once(t: TestDb) {
    let (svc, db) = setup(&t, Policy::defaults()).await;
    svc.add(&owner_member("alice"), "myNode", typed("hardware_failure", "Disk 3")).await.unwrap();
    svc.add(&operator(), "myNode", typed("operator_hold", "Row C")).await.unwrap();
    svc.legacy_set(&operator(), "myNode", Some("rebalancing".into())).await.unwrap();
    let released = svc.release_all(&operator(), "myNode").await.unwrap();
    assert_eq!(released.len(), 3);
    assert_eq!(legacy_view(&db, "myNode").await, (false, None));
    assert!(svc.list(&operator(), "myNode").await.unwrap().is_empty());
    // One release event per entry.
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_history WHERE event LIKE '% released %'").await, 3);
}

async fn scenario_5_scoped_holds_and_rbac_denials(t: TestDb) {
    let (svc, db) = setup(&t, Policy::defaults()).await;
    let sys = svc.add(&operator(), "myNode", typed("hardware_failure", "PSU")).await.unwrap();
    let own = svc.add(&lessee_admin(LESSEE), "myNode", typed("operator_hold", "our tests")).await.unwrap();
    assert_eq!(own.scope, "lessee");
    let e = svc.release_all(&lessee_admin(LESSEE), "myNode").await.unwrap_err();
    assert_eq!(status(&e), 403);
    assert_eq!(
        e.message(),
        format!(
            "Cannot release maintenance entry {} (type hardware_failure, scope system): not permitted at lessee scope",
            sys.uuid
        )
    );
    assert_eq!(svc.list(&operator(), "myNode").await.unwrap().len(), 2, "a refused bulk release releases nothing");
    // The lessee sees the system hold and why, but not who set it.
    let seen = svc.list(&lessee_admin(LESSEE), "myNode").await.unwrap();
    let theirs = seen.iter().find(|v| v.uuid == sys.uuid).unwrap();
    assert_eq!((theirs.asserted_by.as_str(), theirs.asserted_by_project.as_str()), ("******", "******"));
    assert_eq!(theirs.reason.as_deref(), Some("PSU"));
    let mine = seen.iter().find(|v| v.uuid == own.uuid).unwrap();
    assert_eq!(mine.asserted_by, "lessee-user");
    // Releasing their own entry by uuid succeeds; the operator's stays.
    let one = svc.release(&lessee_admin(LESSEE), "myNode", &sys.uuid).await.unwrap_err();
    assert_eq!(status(&one), 403);
    svc.release(&lessee_admin(LESSEE), "myNode", &own.uuid).await.unwrap();
    assert_eq!(legacy_view(&db, "myNode").await, (true, Some("hardware_failure: PSU".into())));
    // A project that is neither owner nor lessee does not see the node at all.
    let stranger = Caller::project("x", "ffffffff", &["admin"]);
    assert_eq!(status(&svc.list(&stranger, "myNode").await.unwrap_err()), 404);
    assert_eq!(status(&svc.add(&stranger, "myNode", typed("operator_hold", "x")).await.unwrap_err()), 404);
}

async fn scenario_6_holds_across_a_lease_change(t: TestDb) {
    let (svc, db) = setup(&t, Policy::defaults()).await;
    let hold = svc.add(&lessee_admin(LESSEE), "myNode", typed("operator_hold", "lease A work")).await.unwrap();
    legacy_nodes::set(&db, "myNode", NodeChange { lessee: Some(Some(LESSEE_B.into())), ..NodeChange::default() })
        .await
        .unwrap();
    let expected = format!(
        "Cannot release maintenance entry {} (type operator_hold, scope lessee, asserted by project {LESSEE}): not asserted by your project",
        hold.uuid
    );
    let bulk = svc.release_all(&lessee_admin(LESSEE_B), "myNode").await.unwrap_err();
    assert_eq!((status(&bulk), bulk.message()), (403, expected.as_str()));
    let one = svc.release(&lessee_admin(LESSEE_B), "myNode", &hold.uuid).await.unwrap_err();
    assert_eq!((status(&one), one.message()), (403, expected.as_str()));
    // The former lessee lost the node with the field change.
    assert_eq!(status(&svc.list(&lessee_admin(LESSEE), "myNode").await.unwrap_err()), 404);
    // The owner outranks lessee scope and cleans up the stale hold.
    svc.release(&owner_member("alice"), "myNode", &hold.uuid).await.unwrap();
    assert_eq!(legacy_view(&db, "myNode").await, (false, None));

    // One rank up: an owner entry surviving an ownership transfer is releasable only at system.
    let owned = svc.add(&owner_member("alice"), "myNode", typed("hardware_failure", "old owner's")).await.unwrap();
    legacy_nodes::set(&db, "myNode", NodeChange { owner: Some(Some("new-owner".into())), ..NodeChange::default() })
        .await
        .unwrap();
    let new_owner = Caller::project("carol", "new-owner", &["member"]);
    let refused = svc.release(&new_owner, "myNode", &owned.uuid).await.unwrap_err();
    assert!(refused.message().ends_with("not asserted by your project"), "{refused}");
    svc.release(&operator(), "myNode", &owned.uuid).await.unwrap();
}

async fn scenario_7_legacy_automation_unchanged(t: TestDb) {
    let (svc, db) = setup(&t, Policy::defaults()).await;
    let written = "LK_OP|HW_ERR: rebalancing rack; don't touch ✓";
    let legacy = svc.legacy_set(&operator(), "myNode", Some(written.into())).await.unwrap();
    assert_eq!(legacy.entry_type, "legacy");
    assert_eq!(legacy_view(&db, "myNode").await, (true, Some(written.into())), "the exact string written");
    // A second PUT, by someone else, updates the reason but never re-stamps asserter or scope.
    let again = svc.legacy_set(&owner_member("alice"), "myNode", Some("rebalancing rack".into())).await.unwrap();
    assert_eq!((again.uuid.as_str(), again.scope.as_str()), (legacy.uuid.as_str(), "system"));
    assert_eq!(again.asserted_by, "******", "the owner sees the system entry masked");
    let stored = &svc.list(&operator(), "myNode").await.unwrap()[0];
    assert_eq!((stored.asserted_by.as_str(), stored.asserted_by_project.as_str()), ("op-admin", ""));
    assert_eq!(legacy_view(&db, "myNode").await, (true, Some("rebalancing rack".into())));
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_maintenance WHERE type = 'legacy'").await, 1);
    // Legacy release is policy-only: the owner may clear the operator's legacy entry.
    svc.legacy_unset(&owner_member("alice"), "myNode").await.unwrap();
    assert_eq!(legacy_view(&db, "myNode").await, (false, None));
    // A NULL reason round-trips as NULL.
    svc.legacy_set(&operator(), "myNode", None).await.unwrap();
    assert_eq!(legacy_view(&db, "myNode").await, (true, None));
    // Should a typed entry outside its authority appear, the unset fails naming every blocker, releasing nothing.
    let sys = svc.add(&operator(), "myNode", typed("hardware_failure", "Disk 3")).await.unwrap();
    let e = svc.legacy_unset(&owner_member("alice"), "myNode").await.unwrap_err();
    assert_eq!(status(&e), 403);
    assert!(e.message().contains(&sys.uuid) && e.message().contains("not permitted at owner scope"), "{e}");
    assert_eq!(svc.list(&operator(), "myNode").await.unwrap().len(), 2);
    assert_eq!(legacy_view(&db, "myNode").await, (true, Some("legacy; hardware_failure: Disk 3".into())));
}

async fn fault_entries_are_the_conductors_and_updated_in_place(t: TestDb) {
    let (svc, db) = setup(&t, Policy::defaults()).await;
    let fault = svc.fault_assert("myNode", "power_failure", Some("power sync failed".into())).await.unwrap();
    assert_eq!((fault.entry_type.as_str(), fault.scope.as_str()), ("fault", "system"));
    assert_eq!((fault.asserted_by.as_str(), fault.asserted_by_project.as_str()), ("ironic-conductor", ""));
    assert_eq!(fault.extra, serde_json::json!({"kind": "power_failure"}));
    let again = svc.fault_assert("myNode", "clean_failure", Some("clean failed".into())).await.unwrap();
    assert_eq!(again.uuid, fault.uuid, "a re-asserted fault updates the entry in place");
    assert_eq!(again.extra["kind"], "clean_failure");
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_maintenance WHERE type = 'fault'").await, 1);
    assert_eq!(legacy_view(&db, "myNode").await, (true, Some("fault: clean failed".into())));
    // After repair, anyone passing the remove policy may release it, scope notwithstanding.
    svc.release(&lessee_admin(LESSEE), "myNode", &fault.uuid).await.unwrap();
    assert_eq!(legacy_view(&db, "myNode").await, (false, None));
    svc.fault_assert("myNode", "rescue_abort_failure", None).await.unwrap();
    assert!(svc.fault_clear("myNode").await.unwrap().is_some());
    assert!(svc.fault_clear("myNode").await.unwrap().is_none());
    assert_eq!(legacy_view(&db, "myNode").await, (false, None));
}

async fn a_permissive_policy_cannot_lift_the_floors(t: TestDb) {
    let everything: String = [
        "baremetal:node:get",
        "baremetal:node:set_maintenance",
        "baremetal:node:clear_maintenance",
        "baremetal:node:maintenance:get",
        "baremetal:node:maintenance:add",
        "baremetal:node:maintenance:remove",
    ]
    .iter()
    .map(|r| format!("\"{r}\": \"@\"\n"))
    .collect();
    let (svc, _db) = setup(&t, Policy::defaults().with_overrides(&everything).unwrap()).await;
    let sys = svc.add(&operator(), "myNode", typed("hardware_failure", "PSU")).await.unwrap();
    let reader = Caller::project("r", LESSEE, &["reader"]);
    let e = svc.release(&reader, "myNode", &sys.uuid).await.unwrap_err();
    assert_eq!(status(&e), 403);
    assert!(e.message().ends_with("not permitted at lessee scope"), "{e}");
    let b = svc.add(&lessee_admin(LESSEE), "myNode", typed("operator_hold", "A")).await.unwrap();
    legacy_nodes::set(svc.db(), "myNode", NodeChange { lessee: Some(Some(LESSEE_B.into())), ..NodeChange::default() })
        .await
        .unwrap();
    let e = svc.release(&Caller::project("r", LESSEE_B, &["reader"]), "myNode", &b.uuid).await.unwrap_err();
    assert!(e.message().ends_with("not asserted by your project"), "{e}");
    // "@" does not make a stranger see the node either: scope is code.
    assert_eq!(status(&svc.list(&Caller::project("x", "zzz", &[]), "myNode").await.unwrap_err()), 404);
}

async fn lockout_tagout_policy_limits_release_to_the_asserter(t: TestDb) {
    let policy = Policy::defaults()
        .with_overrides(
            "\"baremetal:node:maintenance:remove\": \"role:member and user_id:%(maintenance.asserted_by)s\"\n",
        )
        .unwrap();
    let (svc, db) = setup(&t, policy).await;
    let alice_hold = svc.add(&owner_member("alice"), "myNode", typed("operator_hold", "LOTO: alice")).await.unwrap();
    let e = svc.release(&owner_member("bob"), "myNode", &alice_hold.uuid).await.unwrap_err();
    assert_eq!(status(&e), 403);
    assert_eq!(
        e.message(),
        format!(
            "Cannot release maintenance entry {} (type operator_hold, scope owner): baremetal:node:maintenance:remove is disallowed by policy",
            alice_hold.uuid
        )
    );
    let e = svc.release_all(&owner_member("bob"), "myNode").await.unwrap_err();
    assert!(e.message().contains("disallowed by policy"), "{e}");
    // Even a system operator is held to the tightened policy.
    assert_eq!(status(&svc.release(&operator(), "myNode", &alice_hold.uuid).await.unwrap_err()), 403);
    svc.release(&owner_member("alice"), "myNode", &alice_hold.uuid).await.unwrap();
    assert_eq!(legacy_view(&db, "myNode").await, (false, None));
}

async fn bad_input_is_a_clear_error_and_writes_nothing(t: TestDb) {
    let (svc, db) = setup(&t, Policy::defaults()).await;
    let op = operator();
    let cases: Vec<(NewEntry, u16, &str)> = vec![
        (typed("lockout", "x"), 400, "Unknown maintenance type 'lockout'"),
        (typed("legacy", "x"), 400, "is reserved"),
        (typed("fault", "x"), 400, "is reserved"),
        (
            NewEntry { extra: Some(serde_json::json!(["a"])), ..typed("operator_hold", "x") },
            400,
            "must be a JSON object",
        ),
        (NewEntry { extra: Some(serde_json::json!("s")), ..typed("operator_hold", "x") }, 400, "must be a JSON object"),
        (typed("operator_hold", &"r".repeat(1 << 20)), 400, "at most 16000"),
    ];
    for (request, expected, needle) in cases {
        let e = svc.add(&op, "myNode", request).await.unwrap_err();
        assert_eq!(status(&e), expected, "{e}");
        assert!(e.message().contains(needle), "{e}");
    }
    assert_eq!(status(&svc.add(&op, "noSuchNode", typed("operator_hold", "x")).await.unwrap_err()), 404);
    let e = svc.release(&op, "myNode", "not-a-uuid").await.unwrap_err();
    assert_eq!(status(&e), 400, "{e}");
    let e = svc.release(&op, "myNode", "6a0b3c2d-1e4f-4a5b-8c7d-9e0f1a2b3c4d").await.unwrap_err();
    assert_eq!(status(&e), 404, "{e}");
    let elsewhere = svc.add(&op, "otherNode", typed("operator_hold", "x")).await.unwrap();
    let e = svc.release(&op, "myNode", &elsewhere.uuid).await.unwrap_err();
    assert_eq!(status(&e), 404, "an entry of another node is not found here: {e}");
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_maintenance").await, 1);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_history").await, 1);
    assert_eq!(legacy_view(&db, "myNode").await, (false, None));
}

async fn long_identities_fit_history_and_are_kept_in_full(t: TestDb) {
    let (svc, db) = setup(&t, Policy::defaults()).await;
    let long_project = format!("p{}", "0123456789".repeat(12));
    let long_user = format!("u{}", "abcdefghij".repeat(10));
    legacy_nodes::create(
        &db,
        NewNode { name: Some("longNode".into()), owner: Some(long_project.clone()), ..NewNode::default() },
    )
    .await
    .unwrap();
    let caller = Caller::project(long_user.clone(), long_project.clone(), &["member"]);
    let entry = svc.add(&caller, "longNode", typed("operator_hold", "x")).await.unwrap();
    assert_eq!(
        (entry.asserted_by.as_str(), entry.asserted_by_project.as_str()),
        (long_user.as_str(), long_project.as_str())
    );
    let stored = rows(&db, "SELECT h.user, h.project, h.event FROM node_history h JOIN nodes n ON n.id = h.node_id WHERE n.name = 'longNode'").await;
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0][0].as_deref(), Some(&long_user[..64]));
    assert_eq!(stored[0][1].as_deref(), Some(&long_project[..80]));
    let event = stored[0][2].as_deref().unwrap();
    assert!(event.contains(&format!("by {long_user} (project {long_project})")), "{event}");
    // Over VARCHAR(255) is refused before anything is written.
    let huge = Caller::system("u".repeat(300), &["admin"]);
    assert_eq!(status(&svc.add(&huge, "longNode", typed("hardware_failure", "x")).await.unwrap_err()), 400);
}

/// `GET /v1/nodes`: a project sees the nodes it owns or leases, a system
/// caller all; `maintenance` filters; `marker` pages; `node:list` is policy.
async fn node_listing_shows_what_the_caller_may_see(t: TestDb) {
    let (svc, _db) = setup(&t, Policy::defaults()).await;
    let names = |v: Vec<nodemaint::nodes::NodeView>| v.into_iter().map(|n| n.name.unwrap()).collect::<Vec<_>>();
    let all = nodemaint::nodes::NodeQuery { limit: 100, marker: None, maintenance: None, descending: false };
    assert_eq!(names(svc.nodes(&operator(), &all).await.unwrap()), ["myNode", "otherNode"]);
    assert_eq!(names(svc.nodes(&owner_member("u"), &all).await.unwrap()), ["myNode", "otherNode"]);
    assert_eq!(names(svc.nodes(&lessee_admin(LESSEE), &all).await.unwrap()), ["myNode"]);
    assert!(svc.nodes(&lessee_admin(LESSEE_B), &all).await.unwrap().is_empty());
    svc.legacy_set(&operator(), "otherNode", Some("held".into())).await.unwrap();
    let maintained = nodemaint::nodes::NodeQuery { maintenance: Some(true), ..all.clone() };
    assert_eq!(names(svc.nodes(&operator(), &maintained).await.unwrap()), ["otherNode"]);
    let free = nodemaint::nodes::NodeQuery { maintenance: Some(false), ..all.clone() };
    assert_eq!(names(svc.nodes(&operator(), &free).await.unwrap()), ["myNode"]);
    let page =
        nodemaint::nodes::NodeQuery { limit: 1, marker: Some("myNode".into()), maintenance: None, descending: false };
    assert_eq!(names(svc.nodes(&operator(), &page).await.unwrap()), ["otherNode"]);
    let unknown = nodemaint::nodes::NodeQuery { marker: Some("nope".into()), ..all.clone() };
    assert_eq!(svc.nodes(&operator(), &unknown).await.unwrap_err().http_status(), 404);
    let no_roles = Caller::project("u", OWNER, &[]);
    assert_eq!(status(&svc.nodes(&no_roles, &all).await.unwrap_err()), 403);
}

backend_tests!(
    node_listing_shows_what_the_caller_may_see,
    scenario_1_hardware_replacement_hold,
    scenario_2_a_second_hold_and_409_on_duplicates,
    scenario_3_releasing_one_hold_at_a_time,
    scenario_4_releasing_everything_at_once,
    scenario_5_scoped_holds_and_rbac_denials,
    scenario_6_holds_across_a_lease_change,
    scenario_7_legacy_automation_unchanged,
    fault_entries_are_the_conductors_and_updated_in_place,
    a_permissive_policy_cannot_lift_the_floors,
    lockout_tagout_policy_limits_release_to_the_asserter,
    bad_input_is_a_clear_error_and_writes_nothing,
    long_identities_fit_history_and_are_kept_in_full,
);
