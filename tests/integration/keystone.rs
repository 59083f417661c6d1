//! `serve --auth-strategy keystone` against a real Keystone 30 (started by
//! `tests/keystone/keystone.sh`: PyPI's keystone in a cached venv, SQLite,
//! fernet tokens, uwsgi), with projects, users, roles, a service user and a
//! `baremetal` catalog entry made through Keystone's own API: the spec's
//! scenarios 5 and 6 with real project- and system-scoped tokens,
//! lockout/tagout by the token's user id, forged headers, revoked tokens,
//! Keystone stopped, the real `baremetal` client logging in with a password
//! and finding nodemaint in the catalog, and a Keystone served over HTTPS
//! (`cafile`, `insecure`). On SQLite and PostgreSQL.

use crate::api::Server;
use crate::common::{Backend, ConfigFile, TestDb, client_venv, count};
use nodemaint::admin::legacy_nodes::{self, NewNode, NodeChange};
use nodemaint_test_support::keystone::{Admin, Keystone, PASSWORD, Scope, token, token_via};
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::process::Command;
use std::time::Duration;

/// The people of the spec's scenarios, as Keystone knows them.
struct World {
    keystone: Keystone,
    admin: Admin,
    owner: String,
    lessee: String,
    lessee_b: String,
    operator: String,
    owner_member: String,
    owner_teammate: String,
    /// The service user nodemaint authenticates as, and its project.
    service_user: String,
    service_project: String,
}

impl World {
    async fn new() -> World {
        let keystone = Keystone::start();
        let admin = Admin::new(&keystone.url).await;
        let (owner, lessee, lessee_b) =
            (admin.project("owner").await, admin.project("lessee").await, admin.project("lessee-b").await);
        let service = admin.project("service").await;
        let nodemaint = admin.user("nodemaint").await;
        admin.grant(&nodemaint, "service", Scope::Project(&service)).await;
        let operator = admin.user("operator").await;
        admin.grant(&operator, "admin", Scope::System).await;
        let owner_member = admin.user("owner-member").await;
        admin.grant(&owner_member, "member", Scope::Project(&owner)).await;
        let owner_teammate = admin.user("owner-teammate").await;
        admin.grant(&owner_teammate, "member", Scope::Project(&owner)).await;
        let lessee_admin = admin.user("lessee-admin").await;
        admin.grant(&lessee_admin, "admin", Scope::Project(&lessee)).await;
        let lessee_b_admin = admin.user("lessee-b-admin").await;
        admin.grant(&lessee_b_admin, "admin", Scope::Project(&lessee_b)).await;
        World {
            keystone,
            admin,
            owner,
            lessee,
            lessee_b,
            operator,
            owner_member,
            owner_teammate,
            service_user: nodemaint,
            service_project: service,
        }
    }

    async fn token(&self, user: &str, scope: Scope<'_>) -> String {
        token(&self.keystone.url, user, scope).await
    }

    /// A clouds.yaml for the real clients: each `(cloud, user, scope)` logs
    /// in with a password, `scope` being `system_scope: all` or
    /// `project_id: '…'` (system scope has no command-line flag).
    fn clouds(&self, clouds: &[(&str, &str, String)]) -> ConfigFile {
        let mut text = String::from("clouds:\n");
        for (name, user, scope) in clouds {
            text += &format!(
                "  {name}:\n    auth: {{auth_url: '{}', username: {user}, password: '{PASSWORD}', user_domain_name: Default, {scope}}}\n    auth_type: password\n    region_name: RegionOne\n    interface: public\n",
                self.keystone.url
            );
        }
        ConfigFile::new(&text)
    }

    /// A config file naming this Keystone, with `extra` appended.
    fn config(&self, cache_seconds: u64, extra: &str) -> ConfigFile {
        ConfigFile::new(&format!(
            "[keystone_authtoken]\nauth_url = \"{}\"\nauth_type = \"password\"\nusername = \"nodemaint\"\npassword = \"{PASSWORD}\"\n\
             project_name = \"service\"\nuser_domain_name = \"Default\"\nproject_domain_name = \"Default\"\n\
             token_cache_time = {cache_seconds}\n{extra}",
            self.keystone.url
        ))
    }
}

/// An HTTP exchange with `serve`, as a client holding `token`.
async fn call(
    api: &Server,
    method: reqwest::Method,
    path: &str,
    token: Option<&str>,
    body: Option<Value>,
) -> (StatusCode, reqwest::header::HeaderMap, String) {
    let mut r = reqwest::Client::new()
        .request(method, format!("{}{path}", api.base))
        .header("X-OpenStack-Ironic-API-Version", "1.116");
    if let Some(token) = token {
        r = r.header("X-Auth-Token", token);
    }
    if let Some(body) = body {
        r = r.json(&body);
    }
    let response = r.send().await.unwrap();
    let (status, headers) = (response.status(), response.headers().clone());
    (status, headers, response.text().await.unwrap())
}

fn fault(body: &str) -> String {
    let outer: Value = serde_json::from_str(body).unwrap();
    let inner: Value = serde_json::from_str(outer["error_message"].as_str().unwrap()).unwrap();
    inner["faultstring"].as_str().unwrap().to_owned()
}

async fn add(api: &Server, token: &str, ty: &str, reason: &str) -> Value {
    let (status, _, body) = call(
        api,
        reqwest::Method::POST,
        "/v1/nodes/myNode/maintenance",
        Some(token),
        Some(json!({"type": ty, "reason": reason})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    serde_json::from_str(&body).unwrap()
}

async fn release(api: &Server, token: &str, entry: &Value) -> (StatusCode, String) {
    let path = format!("/v1/nodes/myNode/maintenance/{}", entry["uuid"].as_str().unwrap());
    let (status, _, body) = call(api, reqwest::Method::DELETE, &path, Some(token), None).await;
    (status, body)
}

/// A database with `myNode` (owned by the owner project, leased to the
/// lessee) for every backend the test runs on.
async fn database(t: &TestDb, world: &World) -> sea_orm::DatabaseConnection {
    let db = t.connect().await;
    nodemaint::schema::upgrade(&db, &t.url, nodemaint::schema::UpgradeOptions::default()).await.unwrap();
    let node = NewNode {
        name: Some("myNode".into()),
        owner: Some(world.owner.clone()),
        lessee: Some(world.lessee.clone()),
        ..NewNode::default()
    };
    legacy_nodes::create(&db, node).await.unwrap();
    db
}

/// One test per backend this issue names (SQLite and PostgreSQL): each
/// starts its own Keystone.
async fn backends() -> Vec<TestDb> {
    let mut dbs = Vec::new();
    for backend in [Backend::Sqlite, Backend::Postgres] {
        if let Some(t) = TestDb::create(backend).await {
            dbs.push(t);
        }
    }
    dbs
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_tokens_drive_scenarios_5_and_6_and_forged_headers_change_nothing() {
    let world = World::new().await;
    for t in backends().await {
        let db = database(&t, &world).await;
        let config = world.config(300, "");
        let api = Server::start_with(&t.url, "keystone", &["--config", &config.path()]);
        let operator = world.token("operator", Scope::System).await;
        let lessee_admin = world.token("lessee-admin", Scope::Project(&world.lessee)).await;

        // Scenario 5: a system hold and a lessee hold; the lessee sees the
        // system hold's reason, not who placed it, and cannot release it.
        let system_entry = add(&api, &operator, "hardware_failure", "PSU failing").await;
        assert_eq!(system_entry["asserted_by"], world.operator.as_str(), "the asserter is the token's user id");
        let lessee_entry = add(&api, &lessee_admin, "operator_hold", "our own work").await;
        assert_eq!(lessee_entry["scope"], "lessee");
        assert_eq!(lessee_entry["asserted_by_project"], world.lessee.as_str());
        let (status, _, seen) =
            call(&api, reqwest::Method::GET, "/v1/nodes/myNode/maintenance", Some(&lessee_admin), None).await;
        assert_eq!(status, StatusCode::OK);
        let seen: Value = serde_json::from_str(&seen).unwrap();
        let system = seen["maintenance"].as_array().unwrap().iter().find(|e| e["scope"] == "system").unwrap().clone();
        assert_eq!((system["reason"].as_str(), system["asserted_by"].as_str()), (Some("PSU failing"), Some("******")));
        let (status, _, body) =
            call(&api, reqwest::Method::DELETE, "/v1/nodes/myNode/maintenance", Some(&lessee_admin), None).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
        assert_eq!(
            fault(&body),
            format!(
                "Cannot release maintenance entry {} (type hardware_failure, scope system): not permitted at lessee scope",
                system_entry["uuid"].as_str().unwrap()
            )
        );
        assert_eq!(count(&db, "SELECT COUNT(*) FROM node_maintenance").await, 2, "all or nothing");

        // Forged headers with the lessee's token: still the lessee.
        let forged = reqwest::Client::new()
            .delete(format!("{}/v1/nodes/myNode/maintenance/{}", api.base, system_entry["uuid"].as_str().unwrap()))
            .header("X-OpenStack-Ironic-API-Version", "1.116")
            .header("X-Auth-Token", &lessee_admin)
            .header("X-User-Id", world.operator.as_str())
            .header("X-Roles", "admin")
            .header("OpenStack-System-Scope", "all")
            .header("X-Project-Id", world.owner.as_str())
            .send()
            .await
            .unwrap();
        assert_eq!(forged.status(), StatusCode::FORBIDDEN, "forged identity headers are ignored");
        assert_eq!(release(&api, &lessee_admin, &lessee_entry).await.0, StatusCode::NO_CONTENT);
        assert_eq!(release(&api, &operator, &system_entry).await.0, StatusCode::NO_CONTENT);

        // Scenario 6: the lease moves to lessee B; B cannot release A's hold,
        // A no longer sees the node, the owner cleans up.
        let held = add(&api, &lessee_admin, "operator_hold", "lease A work").await;
        legacy_nodes::set(
            &db,
            "myNode",
            NodeChange { lessee: Some(Some(world.lessee_b.clone())), ..NodeChange::default() },
        )
        .await
        .unwrap();
        let lessee_b_admin = world.token("lessee-b-admin", Scope::Project(&world.lessee_b)).await;
        let (status, _, body) =
            call(&api, reqwest::Method::DELETE, "/v1/nodes/myNode/maintenance", Some(&lessee_b_admin), None).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
        assert_eq!(
            fault(&body),
            format!(
                "Cannot release maintenance entry {} (type operator_hold, scope lessee, asserted by project {}): not asserted by your project",
                held["uuid"].as_str().unwrap(),
                world.lessee
            )
        );
        assert_eq!(release(&api, &lessee_admin, &held).await.0, StatusCode::NOT_FOUND);
        let owner_member = world.token("owner-member", Scope::Project(&world.owner)).await;
        assert_eq!(release(&api, &owner_member, &held).await.0, StatusCode::NO_CONTENT);
        assert_eq!(count(&db, "SELECT COUNT(*) FROM node_maintenance").await, 0);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lockout_tagout_holds_to_the_asserting_users_real_id() {
    let world = World::new().await;
    let policy = ConfigFile::new(
        "\"baremetal:node:maintenance:remove\": \"role:member and user_id:%(maintenance.asserted_by)s\"\n",
    );
    for t in backends().await {
        database(&t, &world).await;
        let config = world.config(300, &format!("[policy]\nfile = \"{}\"\n", policy.path()));
        let api = Server::start_with(&t.url, "keystone", &["--config", &config.path()]);
        let member = world.token("owner-member", Scope::Project(&world.owner)).await;
        let teammate = world.token("owner-teammate", Scope::Project(&world.owner)).await;
        let tag = add(&api, &member, "operator_hold", "my lock on this node").await;
        assert_eq!(tag["asserted_by"], world.owner_member.as_str());
        let (status, body) = release(&api, &teammate, &tag).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "another member of the same project may not: {body}");
        assert_ne!(world.owner_teammate, world.owner_member);
        assert_eq!(release(&api, &member, &tag).await.0, StatusCode::NO_CONTENT, "the asserting user may");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_invalid_and_revoked_tokens_are_401_and_keystone_down_is_503_with_nothing_written() {
    let world = World::new().await;
    for t in backends().await {
        let db = database(&t, &world).await;
        let config = world.config(2, "");
        let api = Server::start_with(&t.url, "keystone", &["--config", &config.path()]);

        // Discovery stays open, as in Ironic.
        for path in ["/", "/v1"] {
            assert_eq!(call(&api, reqwest::Method::GET, path, None, None).await.0, StatusCode::OK, "{path}");
        }
        let challenge = format!("Keystone uri=\"{}\"", world.keystone.url);
        for token in [None, Some("not-a-token")] {
            let (status, headers, body) = call(&api, reqwest::Method::GET, "/v1/nodes/myNode", token, None).await;
            assert_eq!(status, StatusCode::UNAUTHORIZED, "{token:?}: {body}");
            assert_eq!(headers["WWW-Authenticate"].to_str().unwrap(), challenge);
        }

        let operator = world.token("operator", Scope::System).await;
        assert_eq!(call(&api, reqwest::Method::GET, "/v1/nodes/myNode", Some(&operator), None).await.0, StatusCode::OK);
        world.admin.revoke(&operator).await;
        tokio::time::sleep(Duration::from_secs(3)).await;
        let (status, _, body) = call(&api, reqwest::Method::GET, "/v1/nodes/myNode", Some(&operator), None).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "revoked, once the cache time passed: {body}");
        let hold = json!({"type": "operator_hold", "reason": "with a revoked token"});
        let (status, _, _) =
            call(&api, reqwest::Method::POST, "/v1/nodes/myNode/maintenance", Some(&operator), Some(hold)).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        assert_eq!(count(&db, "SELECT COUNT(*) FROM node_maintenance").await, 0, "nothing written");
    }

    // Keystone stopped: a token it would have accepted gets 503, nothing is written.
    let t = backends().await.into_iter().next().unwrap();
    let db = database(&t, &world).await;
    let config = world.config(300, "");
    let api = Server::start_with(&t.url, "keystone", &["--config", &config.path()]);
    let operator = world.token("operator", Scope::System).await;
    let bogus = Some("not-a-token-either");
    assert_eq!(call(&api, reqwest::Method::GET, "/v1/nodes/myNode", bogus, None).await.0, StatusCode::UNAUTHORIZED);
    world.keystone.stop();
    // A token Keystone refused is remembered as refused: still 401, not 503.
    assert_eq!(call(&api, reqwest::Method::GET, "/v1/nodes/myNode", bogus, None).await.0, StatusCode::UNAUTHORIZED);
    let body = json!({"type": "operator_hold", "reason": "while keystone is down"});
    let (status, headers, text) =
        call(&api, reqwest::Method::POST, "/v1/nodes/myNode/maintenance", Some(&operator), Some(body)).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{text}");
    assert!(headers.contains_key("Retry-After"));
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_maintenance").await, 0);
    assert!(api.log_lines().iter().any(|l| l.contains("cannot reach Keystone")), "one line in the log");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_baremetal_client_logs_in_with_a_password_and_finds_nodemaint_in_the_catalog() {
    let world = World::new().await;
    let venv = client_venv();
    let t = backends().await.into_iter().next().unwrap();
    let db = database(&t, &world).await;
    let config = world.config(300, "");
    let api = Server::start_with(&t.url, "keystone", &["--config", &config.path()]);
    world.admin.catalog(&api.base).await;
    // The client's own configuration: system scope has no command-line flag.
    let clouds = world.clouds(&[
        ("operator", "operator", "system_scope: all".into()),
        ("owner-member", "owner-member", format!("project_id: '{}'", world.owner)),
    ]);
    let baremetal = |cloud: &str, args: &[&str]| {
        let out = Command::new(venv.join("bin/baremetal"))
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("OS_CLIENT_CONFIG_FILE", clouds.path())
            .args(["--os-cloud", cloud])
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "baremetal {args:?} as {cloud}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    // A system admin.
    baremetal("operator", &["node", "maintenance", "set", "myNode", "--reason", "rack C power work"]);
    let shown: Value = serde_json::from_str(&baremetal("operator", &["node", "show", "myNode", "-f", "json"])).unwrap();
    assert_eq!(
        (shown["maintenance"].as_bool(), shown["maintenance_reason"].as_str()),
        (Some(true), Some("rack C power work"))
    );
    let listed = baremetal("operator", &["node", "list", "--maintenance", "-f", "value", "-c", "Name"]);
    assert_eq!(listed.trim(), "myNode");
    let asserter = "SELECT asserted_by FROM node_maintenance";
    assert_eq!(crate::common::rows(&db, asserter).await, vec![vec![Some(world.operator.clone())]]);
    baremetal("operator", &["node", "maintenance", "unset", "myNode"]);
    // A member of the owning project, on its own node.
    baremetal("owner-member", &["node", "maintenance", "set", "myNode", "--reason", "owner work"]);
    let shown: Value =
        serde_json::from_str(&baremetal("owner-member", &["node", "show", "myNode", "-f", "json"])).unwrap();
    assert_eq!(shown["maintenance"].as_bool(), Some(true));
    baremetal("owner-member", &["node", "maintenance", "unset", "myNode"]);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_maintenance").await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_service_can_authenticate_with_an_application_credential() {
    let world = World::new().await;
    // The service user makes its own application credential, as a deployer would.
    let own = world.token("nodemaint", Scope::Project(&world.service_project)).await;
    let made: Value = reqwest::Client::new()
        .post(format!("{}/users/{}/application_credentials", world.keystone.url, world.service_user))
        .header("X-Auth-Token", own)
        .json(&json!({"application_credential": {"name": "nodemaint-serve"}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let credential = &made["application_credential"];
    let t = backends().await.into_iter().next().unwrap();
    database(&t, &world).await;
    let config = ConfigFile::new(&format!(
        "[keystone_authtoken]\nauth_url = \"{}\"\nauth_type = \"v3applicationcredential\"\n\
         application_credential_id = \"{}\"\napplication_credential_secret = \"{}\"\n",
        world.keystone.url,
        credential["id"].as_str().expect("an application credential id"),
        credential["secret"].as_str().expect("its secret"),
    ));
    let api = Server::start_with(&t.url, "keystone", &["--config", &config.path()]);
    let operator = world.token("operator", Scope::System).await;
    let (status, _, body) = call(&api, reqwest::Method::GET, "/v1/nodes/myNode", Some(&operator), None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, _, _) = call(&api, reqwest::Method::GET, "/v1/nodes/myNode", Some("made-up"), None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

/// `cafile` and `insecure`: a Keystone served over HTTPS by a CA of the
/// test's own is trusted when `cafile` names that CA or `insecure = true`,
/// and refused (503, never a pass) with no CA or another CA.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_keystone_over_tls_is_trusted_through_cafile_or_insecure_and_refused_otherwise() {
    let dir = std::env::temp_dir().join(format!("nodemaint-keystone-tls-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).unwrap();
    let user = String::from_utf8(Command::new("id").arg("-un").output().unwrap().stdout).unwrap();
    let certs = crate::tls::make_certs(&dir, user.trim());
    let keystone = Keystone::start_tls(&dir);
    assert!(keystone.url.starts_with("https://localhost:"), "{}", keystone.url);
    let ca = reqwest::Certificate::from_pem(&std::fs::read(&certs.ca).unwrap()).unwrap();
    let http = reqwest::Client::builder().add_root_certificate(ca).build().unwrap();
    let operator = token_via(&http, &keystone.url, "admin", Scope::System).await;

    let t = backends().await.into_iter().next().unwrap();
    let db = t.connect().await;
    nodemaint::schema::upgrade(&db, &t.url, Default::default()).await.unwrap();
    let node = NewNode { name: Some("myNode".into()), ..Default::default() };
    legacy_nodes::create(&db, node).await.unwrap();
    let cases = [
        (format!("cafile = \"{}\"", certs.ca.display()), StatusCode::OK),
        ("insecure = true".to_owned(), StatusCode::OK),
        (String::new(), StatusCode::SERVICE_UNAVAILABLE),
        (format!("cafile = \"{}\"", certs.wrong_ca.display()), StatusCode::SERVICE_UNAVAILABLE),
    ];
    for (extra, expected) in cases {
        // The bootstrap admin serves as the service user: this is about the transport.
        let config = ConfigFile::new(&format!(
            "[keystone_authtoken]\nauth_url = \"{}\"\nauth_type = \"password\"\nusername = \"admin\"\n\
             password = \"{PASSWORD}\"\nproject_name = \"admin\"\nuser_domain_name = \"Default\"\n\
             project_domain_name = \"Default\"\n{extra}\n",
            keystone.url
        ));
        let api = Server::start_with(&t.url, "keystone", &["--config", &config.path()]);
        let (status, _, body) = call(&api, reqwest::Method::GET, "/v1/nodes/myNode", Some(&operator), None).await;
        assert_eq!(status, expected, "with [{extra}]: {body}");
    }
    drop(keystone);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The spec's Scenarios 1 to 7 as the spec writes them, through the real
/// `openstack` command with this repository's client package, as real
/// Keystone users: a system admin, a member of the owning project, the
/// lessee's admin and a second lessee's admin. After each step: the tables,
/// the server's refusals, the boolean and synthesised reason, and the
/// history's identities.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_specs_scenarios_through_the_openstack_client_as_real_users() {
    let world = World::new().await;
    let venv = client_venv();
    let t = backends().await.into_iter().next().unwrap();
    let db = database(&t, &world).await;
    let config = world.config(300, "");
    let api = Server::start_with(&t.url, "keystone", &["--config", &config.path()]);
    world.admin.catalog(&api.base).await;
    let clouds = world.clouds(&[
        ("operator", "operator", "system_scope: all".into()),
        ("owner", "owner-member", format!("project_id: '{}'", world.owner)),
        ("lessee", "lessee-admin", format!("project_id: '{}'", world.lessee)),
        ("lessee-b", "lessee-b-admin", format!("project_id: '{}'", world.lessee_b)),
    ]);
    let openstack = |as_cloud: &str, args: &[&str]| {
        Command::new(venv.join("bin/openstack"))
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("OS_CLIENT_CONFIG_FILE", clouds.path())
            .args(["--os-cloud", as_cloud, "baremetal"])
            .args(args)
            .output()
            .unwrap()
    };
    let ok = |as_cloud: &str, args: &[&str]| {
        let out = openstack(as_cloud, args);
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "openstack baremetal {args:?} as {as_cloud}: {stdout}{stderr}");
        stdout.into_owned()
    };
    let refused = |as_cloud: &str, args: &[&str]| {
        let out = openstack(as_cloud, args);
        let stderr = String::from_utf8_lossy(&out.stderr).trim().to_owned();
        assert!(!out.status.success(), "openstack baremetal {args:?} as {as_cloud} was accepted");
        assert_eq!(stderr.lines().count(), 1, "one line, no traceback: {stderr}");
        stderr
    };
    let json = |text: String| -> Value { serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}")) };
    let node = |as_cloud: &str| {
        let shown = json(ok(as_cloud, &["node", "show", "myNode", "-f", "json"]));
        (shown["maintenance"].as_bool().unwrap(), shown["maintenance_reason"].as_str().map(str::to_owned))
    };
    let last_event = || async {
        let rows = crate::common::rows(
            &db,
            "SELECT event, \"user\" FROM node_history WHERE event_type = 'maintenance' ORDER BY id DESC LIMIT 1",
        )
        .await;
        (rows[0][0].clone().unwrap(), rows[0][1].clone().unwrap())
    };
    let disk = "Disk 3 has bad sectors, scheduled for replacement, see ticket https://myjira/CIDTEAM-3743";
    let power = "Row C power work, change window CHG-2211";

    // Scenario 1: the owner's hardware replacement hold.
    let s1 = json(ok(
        "owner",
        &["node", "maintenance", "add", "myNode", "--type", "hardware_failure", "--reason", disk, "-f", "json"],
    ));
    assert_eq!((s1["scope"].as_str(), s1["asserted_by"].as_str()), (Some("owner"), Some(world.owner_member.as_str())));
    assert_eq!(s1["asserted_by_project"].as_str(), Some(world.owner.as_str()));
    assert_eq!(node("operator"), (true, Some(format!("hardware_failure: {disk}"))), "old readers see it");

    // Scenario 2: the operator's second hold; the spec's table; a duplicate is 409.
    let s2 = json(ok(
        "operator",
        &["node", "maintenance", "add", "myNode", "--type", "operator_hold", "--reason", power, "-f", "json"],
    ));
    assert_eq!(s2["scope"], "system");
    let table = json(ok("operator", &["node", "maintenance", "list", "myNode", "-f", "json"]));
    let rows: Vec<(String, String)> = table
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["Type"].as_str().unwrap().to_owned(), r["Scope"].as_str().unwrap().to_owned()))
        .collect();
    assert_eq!(
        rows,
        [("hardware_failure".to_owned(), "owner".to_owned()), ("operator_hold".to_owned(), "system".to_owned())]
    );
    let again =
        refused("owner", &["node", "maintenance", "add", "myNode", "--type", "hardware_failure", "--reason", "again"]);
    assert!(
        again.contains(s1["uuid"].as_str().unwrap()) && again.contains("already active"),
        "the 409 names the entry: {again}"
    );

    // Scenario 3: the power work ends first; history names the releaser.
    ok("operator", &["node", "maintenance", "remove", "myNode", s2["uuid"].as_str().unwrap()]);
    assert_eq!(node("owner"), (true, Some(format!("hardware_failure: {disk}"))));
    let (event, user) = last_event().await;
    assert!(event.contains("operator_hold") && event.contains(power), "{event}");
    assert_eq!(user, world.operator, "the releasing identity");

    // Scenario 4: everything at once, by the owner.
    ok("owner", &["node", "maintenance", "remove", "myNode", "--all"]);
    assert_eq!(node("owner"), (false, None));

    // Scenario 5: the lessee cannot clear the operator's hold, only its own.
    let s5 = json(ok(
        "operator",
        &["node", "maintenance", "add", "myNode", "--type", "hardware_failure", "--reason", "PSU", "-f", "json"],
    ));
    let mine = json(ok(
        "lessee",
        &["node", "maintenance", "add", "myNode", "--type", "operator_hold", "--reason", "tenant work", "-f", "json"],
    ));
    assert_eq!(mine["scope"], "lessee");
    let denied = refused("lessee", &["node", "maintenance", "remove", "myNode", "--all"]);
    let uuid5 = s5["uuid"].as_str().unwrap();
    assert!(
        denied.contains(&format!("Cannot release maintenance entry {uuid5} (type hardware_failure, scope system): not permitted at lessee scope")),
        "{denied}"
    );
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_maintenance").await, 2, "nothing released");
    ok("lessee", &["node", "maintenance", "remove", "myNode", mine["uuid"].as_str().unwrap()]);
    assert_eq!(node("operator"), (true, Some("hardware_failure: PSU".to_owned())), "the operator's hold alone");

    // Scenario 6: a lease change; the new lessee cannot release the old lessee's hold.
    let stale = json(ok(
        "lessee",
        &["node", "maintenance", "add", "myNode", "--type", "operator_hold", "--reason", "lease A", "-f", "json"],
    ));
    legacy_nodes::set(
        &db,
        "myNode",
        NodeChange { lessee: Some(Some(world.lessee_b.clone())), ..NodeChange::default() },
    )
    .await
    .unwrap();
    let denied = refused("lessee-b", &["node", "maintenance", "remove", "myNode", "--all"]);
    assert!(
        denied.contains(&format!("asserted by project {}", world.lessee))
            && denied.contains("not asserted by your project"),
        "{denied}"
    );
    ok("owner", &["node", "maintenance", "remove", "myNode", stale["uuid"].as_str().unwrap()]);
    ok("operator", &["node", "maintenance", "remove", "myNode", uuid5]);
    assert_eq!(node("operator"), (false, None));

    // Scenario 7: legacy set/unset (python-ironicclient's own), unchanged;
    // its unset is refused, naming the blocker, when a hold is not the caller's.
    ok("owner", &["node", "maintenance", "set", "myNode", "--reason", "rebalancing rack"]);
    assert_eq!(node("owner"), (true, Some("rebalancing rack".to_owned())), "read back verbatim");
    ok("owner", &["node", "maintenance", "unset", "myNode"]);
    assert_eq!(node("owner"), (false, None));
    let blocker = json(ok(
        "operator",
        &["node", "maintenance", "add", "myNode", "--type", "hardware_failure", "--reason", "PSU", "-f", "json"],
    ));
    let out = openstack("owner", &["node", "maintenance", "unset", "myNode"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(blocker["uuid"].as_str().unwrap()),
        "the 403 names the blocker"
    );
    assert!(node("operator").0, "the refused unset released nothing");
}

/// The client package's own checks (tests/clients/plugin.py: the verbs'
/// JSON, refusals and bad input, windows released by serve's tick, the
/// estate listing, openstacksdk's resource and helpers) as a real Keystone
/// user instead of `noauth`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_packages_checks_pass_as_a_keystone_user() {
    let world = World::new().await;
    let venv = client_venv();
    let t = backends().await.into_iter().next().unwrap();
    database(&t, &world).await;
    let config = world.config(300, "");
    let api = Server::start_with(&t.url, "keystone", &["--config", &config.path(), "--tick-interval", "1"]);
    world.admin.catalog(&api.base).await;
    let clouds = world.clouds(&[("operator", "operator", "system_scope: all".into())]);
    let out = Command::new(venv.join("bin/python"))
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/clients/plugin.py"))
        .args([api.base.as_str(), env!("CARGO_BIN_EXE_nodemaint"), t.url.as_str()])
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("OS_CLIENT_CONFIG_FILE", clouds.path())
        .env("NODEMAINT_CLIENT_CLOUD", "operator")
        .env("NODEMAINT_CLIENT_USER", &world.operator)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        stdout.contains("all client-package checks passed") && stdout.contains("all resource checks passed"),
        "{stdout}"
    );
}
