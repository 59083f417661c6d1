//! Who is "system" under `enforce_scope` true and false, asked of scope
//! derivation and of policy alike (one answer, `has_system_authority`), for
//! a project admin of another project, the node owner's admin and the
//! lessee's admin; a caller the read rule refuses is not told the node
//! exists (404, as Ironic); a system entry's project is `null` on the wire.

use crate::api::{OPERATOR, Server, WINDOWS};
use crate::backend_tests;
use crate::common::{TestDb, ok};
use nodemaint::admin::legacy_nodes::{self, NewNode};
use nodemaint::{Caller, Error, Maintenance, NewEntry, Policy};
use reqwest::{Method, StatusCode};

backend_tests!(
    system_authority_is_one_answer_with_and_without_scope_enforcement,
    a_caller_the_read_rule_refuses_gets_404
);

const OWNER: &str = "p-owner";
const LESSEE: &str = "p-lessee";

fn hold(reason: &str) -> NewEntry {
    NewEntry {
        entry_type: "operator_hold".into(),
        reason: Some(reason.into()),
        extra: None,
        starts_at: None,
        ends_at: None,
    }
}

async fn setup(t: &TestDb) -> sea_orm::DatabaseConnection {
    ok(&t.cli(&["-q", "db", "upgrade"]));
    let db = t.connect().await;
    legacy_nodes::create(
        &db,
        NewNode {
            name: Some("n1".into()),
            owner: Some(OWNER.into()),
            lessee: Some(LESSEE.into()),
            ..NewNode::default()
        },
    )
    .await
    .unwrap();
    db
}

fn service(db: &sea_orm::DatabaseConnection, enforce_scope: bool) -> Maintenance {
    let mut policy = Policy::defaults();
    policy.enforce_scope = enforce_scope;
    Maintenance::new(db.clone(), policy)
}

async fn system_authority_is_one_answer_with_and_without_scope_enforcement(t: TestDb) {
    let db = setup(&t).await;
    let operator = Caller::system("op", &["admin"]);
    let stranger_admin = Caller::project("x-admin", "p-elsewhere", &["admin"]);
    let owner_admin = Caller::project("o-admin", OWNER, &["admin"]);
    let lessee_admin = Caller::project("l-admin", LESSEE, &["admin"]);

    // Scope enforced: a project admin is its project's, nothing more.
    let svc = service(&db, true);
    let system_hold = svc.add(&operator, "n1", hold("operator's")).await.unwrap();
    assert!(matches!(svc.list(&stranger_admin, "n1").await, Err(Error::NotFound(_))), "another project sees nothing");
    assert_eq!(svc.list(&owner_admin, "n1").await.unwrap().len(), 1, "the owner's admin reads the entries");
    assert_eq!(svc.add(&owner_admin, "n1", hold("owner's")).await.unwrap().scope, "owner");
    let lessee_hold = svc.add(&lessee_admin, "n1", hold("lessee's")).await.unwrap();
    assert_eq!(lessee_hold.scope, "lessee");
    let refused = svc.release(&lessee_admin, "n1", &system_hold.uuid).await.unwrap_err();
    assert_eq!(refused.http_status(), 403, "a lessee does not release the operator's hold: {refused}");
    let refused = svc.release(&owner_admin, "n1", &system_hold.uuid).await.unwrap_err();
    assert_eq!(refused.http_status(), 403, "nor does the owner: {refused}");
    svc.release(&operator, "n1", &lessee_hold.uuid).await.unwrap();

    // Scope not enforced: the legacy model, an admin anywhere is the
    // cloud's admin, for scope and for policy alike (no half: never a 403
    // on reading with system scope, never a system hold added that policy
    // would then refuse to show).
    let svc = service(&db, false);
    for admin in [&stranger_admin, &owner_admin, &lessee_admin] {
        let listed = svc.list(admin, "n1").await.unwrap_or_else(|e| panic!("{}: {e}", admin.user_id));
        assert!(!listed.is_empty());
        let added = svc.add(admin, "n1", NewEntry { entry_type: "hardware_failure".into(), ..hold(&admin.user_id) });
        let added = added.await.unwrap_or_else(|e| panic!("{}: {e}", admin.user_id));
        assert_eq!(added.scope, "system", "{}", admin.user_id);
        svc.release(admin, "n1", &added.uuid).await.unwrap_or_else(|e| panic!("{}: {e}", admin.user_id));
    }
    // A member is no admin: still its project's scope.
    let owner_member = Caller::project("o-member", OWNER, &["member"]);
    let refused = svc.release(&owner_member, "n1", &system_hold.uuid).await.unwrap_err();
    assert_eq!(refused.http_status(), 403, "{refused}");
}

async fn a_caller_the_read_rule_refuses_gets_404(t: TestDb) {
    let db = setup(&t).await;
    let svc = service(&db, true);
    let operator = Caller::system("op", &["admin"]);
    let held = svc.add(&operator, "n1", hold("operator's")).await.unwrap();
    // In the owner's project, with no role: Ironic hides the node (404), and
    // so does every operation, a release by uuid included (no 403 naming
    // the entry's type and scope).
    let roleless = Caller::project("nobody", OWNER, &[]);
    for result in [
        svc.list(&roleless, "n1").await.map(|_| ()),
        svc.node(&roleless, "n1").await.map(|_| ()),
        svc.release(&roleless, "n1", &held.uuid).await.map(|_| ()),
        svc.legacy_set(&roleless, "n1", Some("x".into())).await.map(|_| ()),
    ] {
        let e = result.unwrap_err();
        assert_eq!((e.http_status(), e.message()), (404, "Node n1 could not be found."));
    }

    // On the wire: a system entry's project is null, a project's is its id.
    let api = Server::start(&t.url, "trusted-headers");
    let listed = api.call(Method::GET, "/v1/nodes/n1/maintenance", Some(WINDOWS), Some(OPERATOR), None).await;
    assert_eq!(listed.status, StatusCode::OK, "{}", listed.body);
    let entry = &listed.json()["maintenance"][0];
    assert_eq!(entry["scope"], "system");
    assert!(entry["asserted_by_project"].is_null(), "{entry}");
}
