//! `nodemaint serve` over real HTTP: the spec's scenarios 1–7 through the
//! REST API on every backend, at the old microversion and at 1.116, plus
//! microversion negotiation, Ironic's error format, identity, the request
//! log and graceful shutdown. Each test starts the real binary on a free
//! port and talks to it with reqwest.

use crate::backend_tests;
use crate::common::{TestDb, count, nodemaint_cmd, ok, rows};
use nodemaint::admin::legacy_nodes::{self, NewNode, NodeChange};
use nodemaint::nodes;
use reqwest::{Method, StatusCode};
use sea_orm::DatabaseConnection;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const OWNER: &str = "9c84d2e0f1a3";
const LESSEE: &str = "a0a0a0a0a0a0";
const LESSEE_B: &str = "b0b0b0b0b0b0";
/// The typed-maintenance microversion, and one an old client negotiates.
pub(crate) const NEW: &str = "1.116";
pub(crate) const OLD: &str = "1.65";
/// The maintenance-windows microversion, the newest served.
pub(crate) const WINDOWS: &str = "1.117";

/// Credentials as a fronting proxy leaves them (trusted-headers).
#[derive(Clone, Copy)]
pub(crate) struct As {
    pub(crate) user: &'static str,
    pub(crate) project: Option<&'static str>,
    pub(crate) roles: &'static str,
}

pub(crate) const OPERATOR: As = As { user: "op-admin", project: None, roles: "admin" };
const OWNER_MEMBER: As = As { user: "1f2e3d4c5b6a", project: Some(OWNER), roles: "member" };
const OWNER_TEAMMATE: As = As { user: "teammate", project: Some(OWNER), roles: "member" };
pub(crate) const LESSEE_ADMIN: As = As { user: "lessee-user", project: Some(LESSEE), roles: "admin" };
const LESSEE_B_ADMIN: As = As { user: "lessee-b-user", project: Some(LESSEE_B), roles: "admin" };

/// A running `nodemaint serve`, stopped with SIGTERM on drop.
pub(crate) struct Server {
    child: Child,
    pub(crate) base: String,
    log: Arc<Mutex<Vec<String>>>,
    /// Reads stderr into `log` until the server closes it.
    reader: Option<std::thread::JoinHandle<()>>,
    http: reqwest::Client,
}

pub(crate) struct Reply {
    pub(crate) status: StatusCode,
    pub(crate) headers: reqwest::header::HeaderMap,
    pub(crate) body: String,
}

impl Reply {
    pub(crate) fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }

    /// The message an Ironic client shows: `faultstring` inside `error_message`.
    pub(crate) fn fault(&self) -> String {
        let inner: Value = serde_json::from_str(self.json()["error_message"].as_str().expect("error_message"))
            .expect("error_message is JSON");
        inner["faultstring"].as_str().or(inner["description"].as_str()).expect("a message").to_owned()
    }

    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

impl Server {
    pub(crate) fn start(url: &str, auth: &str) -> Server {
        Server::start_with(url, auth, &[])
    }

    pub(crate) fn start_with(url: &str, auth: &str, extra: &[&str]) -> Server {
        let mut args = vec!["--database-url", url, "serve", "--bind", "127.0.0.1:0", "--auth-strategy", auth];
        args.extend_from_slice(extra);
        Server::start_with_args(&args)
    }

    /// `nodemaint ARGS…`, which must run `serve` (with `--bind 127.0.0.1:0`).
    pub(crate) fn start_with_args(args: &[&str]) -> Server {
        let mut child = crate::common::bare_cmd(args)
            .env("RUST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start nodemaint serve");
        let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
        let mut base = None;
        for line in lines.by_ref() {
            let line = line.expect("read stderr");
            if let Some(at) = line.find("listening on http://") {
                let addr = line[at + "listening on ".len()..].split_whitespace().next().unwrap().to_owned();
                base = Some(addr);
                break;
            }
        }
        let base = base.unwrap_or_else(|| panic!("serve exited: {:?}", child.wait()));
        let log = Arc::new(Mutex::new(Vec::new()));
        let sink = log.clone();
        let reader = std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                sink.lock().unwrap().push(line);
            }
        });
        Server { child, base, log, reader: Some(reader), http: reqwest::Client::new() }
    }

    pub(crate) async fn call(
        &self,
        method: Method,
        path: &str,
        version: Option<&str>,
        who: Option<As>,
        body: Option<Value>,
    ) -> Reply {
        self.try_call(method, path, version, who, body).await.expect("HTTP request")
    }

    /// [`Server::call`], or the transport's error (the server died under it).
    pub(crate) async fn try_call(
        &self,
        method: Method,
        path: &str,
        version: Option<&str>,
        who: Option<As>,
        body: Option<Value>,
    ) -> Result<Reply, reqwest::Error> {
        let mut request = self.http.request(method, format!("{}{path}", self.base));
        if let Some(v) = version {
            request = request.header("X-OpenStack-Ironic-API-Version", v);
        }
        if let Some(who) = who {
            request = request.header("X-User-Id", who.user).header("X-Roles", who.roles);
            request = match who.project {
                Some(p) => request.header("X-Project-Id", p),
                None => request.header("OpenStack-System-Scope", "all"),
            };
        }
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await?;
        let (status, headers) = (response.status(), response.headers().clone());
        Ok(Reply { status, headers, body: response.text().await? })
    }

    async fn get(&self, path: &str, version: &str, who: As) -> Reply {
        self.call(Method::GET, path, Some(version), Some(who), None).await
    }

    /// POST an entry at 1.116; asserts 201 and returns the entry.
    async fn add(&self, node: &str, who: As, ty: &str, reason: &str) -> Value {
        let r = self.add_reply(node, who, json!({"type": ty, "reason": reason})).await;
        assert_eq!(r.status, StatusCode::CREATED, "{}", r.body);
        r.json()
    }

    async fn add_reply(&self, node: &str, who: As, body: Value) -> Reply {
        self.call(Method::POST, &format!("/v1/nodes/{node}/maintenance"), Some(NEW), Some(who), Some(body)).await
    }

    async fn release(&self, node: &str, entry: &Value, who: As) -> Reply {
        let path = format!("/v1/nodes/{node}/maintenance/{}", entry["uuid"].as_str().unwrap());
        self.call(Method::DELETE, &path, Some(NEW), Some(who), None).await
    }

    async fn release_all(&self, node: &str, version: &str, who: As) -> Reply {
        self.call(Method::DELETE, &format!("/v1/nodes/{node}/maintenance"), Some(version), Some(who), None).await
    }

    /// (`maintenance`, `maintenance_reason`) as a client at `version` reads them.
    async fn legacy_view(&self, node: &str, version: &str) -> (bool, Value) {
        let r = self.get(&format!("/v1/nodes/{node}"), version, OPERATOR).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        let n = r.json();
        (n["maintenance"].as_bool().unwrap(), n["maintenance_reason"].clone())
    }

    /// The server's process id (a test that kills it with SIGKILL).
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    pub(crate) fn log_lines(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }

    /// SIGTERM, then the exit status (killed after 10 s if it hangs), once
    /// everything the server wrote to stderr is in the log: the process can
    /// exit before the reader thread has taken its last lines.
    pub(crate) fn stop(&mut self) -> std::process::ExitStatus {
        let _ = std::process::Command::new("kill").arg("-TERM").arg(self.child.id().to_string()).status();
        let deadline = Instant::now() + Duration::from_secs(10);
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                break status;
            }
            if Instant::now() > deadline {
                self.child.kill().ok();
                break self.child.wait().expect("wait");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        if let Some(reader) = self.reader.take() {
            reader.join().expect("the log reader");
        }
        status
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            self.stop();
        }
    }
}

/// Schema upgraded, `myNode` (owner + lessee) created as an old service would.
async fn setup(t: &TestDb) -> DatabaseConnection {
    ok(&t.cli(&["db", "upgrade"]));
    let db = t.connect().await;
    let node = NewNode {
        name: Some("myNode".into()),
        owner: Some(OWNER.into()),
        lessee: Some(LESSEE.into()),
        ..NewNode::default()
    };
    legacy_nodes::create(&db, node).await.unwrap();
    db
}

async fn entry_count(db: &DatabaseConnection) -> i64 {
    count(db, "SELECT COUNT(*) FROM node_maintenance").await
}

async fn scenario_1_hardware_replacement_hold_over_http(t: TestDb) {
    let db = setup(&t).await;
    let api = Server::start(&t.url, "trusted-headers");
    let reason = "Disk 3 has bad sectors, scheduled for replacement, see ticket https://myjira/CIDTEAM-3743";
    let entry = api.add("myNode", OWNER_MEMBER, "hardware_failure", reason).await;
    assert_eq!(entry["type"], "hardware_failure");
    assert_eq!(entry["reason"], reason);
    assert_eq!(entry["scope"], "owner");
    assert_eq!(entry["asserted_by"], "1f2e3d4c5b6a");
    assert_eq!(entry["asserted_by_project"], OWNER);
    assert_eq!(entry["extra"], json!({}));
    let uuid = entry["uuid"].as_str().unwrap();
    assert!(uuid::Uuid::parse_str(uuid).is_ok());
    // Links go through the node's uuid, whatever name the request used.
    let node_uuid = api.get("/v1/nodes/myNode", NEW, OPERATOR).await.json()["uuid"].as_str().unwrap().to_owned();
    assert!(
        entry["links"][0]["href"].as_str().unwrap().ends_with(&format!("/v1/nodes/{node_uuid}/maintenance/{uuid}"))
    );
    // An older client still sees the boolean and a reason synthesised from the entry.
    let synthesised = json!(format!("hardware_failure: {reason}"));
    assert_eq!(api.legacy_view("myNode", OLD).await, (true, synthesised.clone()));
    assert_eq!(api.legacy_view("myNode", NEW).await, (true, synthesised));
    assert_eq!(entry_count(&db).await, 1);
}

async fn scenario_2_second_hold_and_duplicate_conflict_over_http(t: TestDb) {
    let db = setup(&t).await;
    let api = Server::start(&t.url, "trusted-headers");
    let disk = api.add("myNode", OWNER_MEMBER, "hardware_failure", "Disk 3 has bad sectors").await;
    let power = api.add("myNode", OPERATOR, "operator_hold", "Row C power work, change window CHG-2211").await;
    assert_eq!(power["scope"], "system");

    let listed = api.get("/v1/nodes/myNode/maintenance", NEW, OWNER_MEMBER).await;
    assert_eq!(listed.status, StatusCode::OK);
    let entries = listed.json()["maintenance"].as_array().unwrap().clone();
    let uuids: Vec<&Value> = entries.iter().map(|e| &e["uuid"]).collect();
    assert_eq!(uuids, [&disk["uuid"], &power["uuid"]]);
    assert_eq!(
        api.legacy_view("myNode", OLD).await,
        (
            true,
            json!("hardware_failure: Disk 3 has bad sectors; operator_hold: Row C power work, change window CHG-2211")
        )
    );

    // The same type and scope from the same project is one logical entry, whoever asserts it.
    let again = api.add_reply("myNode", OWNER_TEAMMATE, json!({"type": "hardware_failure", "reason": "again"})).await;
    assert_eq!(again.status, StatusCode::CONFLICT, "{}", again.body);
    assert!(again.fault().contains(disk["uuid"].as_str().unwrap()), "{}", again.fault());
    assert_eq!(entry_count(&db).await, 2);
}

async fn scenario_3_release_one_hold_at_a_time_over_http(t: TestDb) {
    let db = setup(&t).await;
    let api = Server::start(&t.url, "trusted-headers");
    let _disk = api.add("myNode", OWNER_MEMBER, "hardware_failure", "Disk 3 has bad sectors").await;
    let power = api.add("myNode", OPERATOR, "operator_hold", "Row C power work").await;

    let r = api.release("myNode", &power, OPERATOR).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.body);
    assert!(r.body.is_empty());
    assert_eq!(api.legacy_view("myNode", OLD).await, (true, json!("hardware_failure: Disk 3 has bad sectors")));
    // The release is in node history with the releasing identity and the entry's type and reason.
    let user = if t.backend == crate::common::Backend::Mysql { "`user`" } else { "\"user\"" };
    let events = rows(&db, &format!("SELECT event, {user} FROM node_history ORDER BY id")).await;
    let last = events.last().unwrap();
    let text = last[0].clone().unwrap();
    assert!(text.contains(power["uuid"].as_str().unwrap()) && text.contains("operator_hold"), "{text}");
    assert!(text.contains("Row C power work"), "{text}");
    assert_eq!(last[1].as_deref(), Some("op-admin"));

    // Unknown entry: 404; not a uuid: 400.
    let gone = api.release("myNode", &power, OPERATOR).await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND, "{}", gone.body);
    let bad = api.release("myNode", &json!({"uuid": "not-a-uuid"}), OPERATOR).await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST, "{}", bad.body);
}

async fn scenario_4_release_everything_over_http(t: TestDb) {
    let db = setup(&t).await;
    let api = Server::start(&t.url, "trusted-headers");
    api.add("myNode", OWNER_MEMBER, "hardware_failure", "Disk 3").await;
    api.add("myNode", OWNER_MEMBER, "operator_hold", "power").await;
    let r = api.release_all("myNode", NEW, OWNER_MEMBER).await;
    assert_eq!(r.status, StatusCode::NO_CONTENT, "{}", r.body);
    assert_eq!(api.legacy_view("myNode", OLD).await, (false, Value::Null));
    assert_eq!(entry_count(&db).await, 0);
    // The old spelling of the same DELETE answers 202, as it always did.
    api.add("myNode", OWNER_MEMBER, "operator_hold", "again").await;
    let old = api.release_all("myNode", OLD, OWNER_MEMBER).await;
    assert_eq!((old.status, old.body.as_str()), (StatusCode::ACCEPTED, ""));
    assert_eq!(api.legacy_view("myNode", NEW).await, (false, Value::Null));
}

async fn scenario_5_scoped_holds_and_rbac_denials_over_http(t: TestDb) {
    let db = setup(&t).await;
    let api = Server::start(&t.url, "trusted-headers");
    let operator_entry = api.add("myNode", OPERATOR, "hardware_failure", "PSU failing").await;
    let lessee_entry = api.add("myNode", LESSEE_ADMIN, "operator_hold", "our own work").await;
    assert_eq!(lessee_entry["scope"], "lessee");

    // The lessee sees that a system hold exists, and why, but not who placed it.
    let seen = api.get("/v1/nodes/myNode/maintenance", NEW, LESSEE_ADMIN).await.json();
    let system = &seen["maintenance"][0];
    assert_eq!((system["reason"].as_str(), system["asserted_by"].as_str()), (Some("PSU failing"), Some("******")));
    assert_eq!(system["asserted_by_project"], "******");

    let refused = api.release_all("myNode", NEW, LESSEE_ADMIN).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "{}", refused.body);
    assert_eq!(
        refused.fault(),
        format!(
            "Cannot release maintenance entry {} (type hardware_failure, scope system): not permitted at lessee scope",
            operator_entry["uuid"].as_str().unwrap()
        )
    );
    // All or nothing: the lessee's own entry is still there too.
    assert_eq!(entry_count(&db).await, 2);
    // The same refusal for an old client's unset, naming the blocker.
    let old = api.release_all("myNode", OLD, LESSEE_ADMIN).await;
    assert_eq!(old.status, StatusCode::FORBIDDEN);
    assert!(old.fault().contains(operator_entry["uuid"].as_str().unwrap()));

    let own = api.release("myNode", &lessee_entry, LESSEE_ADMIN).await;
    assert_eq!(own.status, StatusCode::NO_CONTENT, "{}", own.body);
    assert_eq!(api.legacy_view("myNode", OLD).await, (true, json!("hardware_failure: PSU failing")));
    // Releasing the system entry by uuid is refused the same way.
    let direct = api.release("myNode", &operator_entry, LESSEE_ADMIN).await;
    assert_eq!(direct.status, StatusCode::FORBIDDEN, "{}", direct.body);
    assert_eq!(entry_count(&db).await, 1);
}

async fn scenario_6_holds_across_a_lease_change_over_http(t: TestDb) {
    let db = setup(&t).await;
    let api = Server::start(&t.url, "trusted-headers");
    let held = api.add("myNode", LESSEE_ADMIN, "operator_hold", "lease A work").await;
    // The owner re-assigns the lease, as the Nova driver does on every instance.
    legacy_nodes::set(&db, "myNode", NodeChange { lessee: Some(Some(LESSEE_B.into())), ..NodeChange::default() })
        .await
        .unwrap();
    let refused = api.release_all("myNode", NEW, LESSEE_B_ADMIN).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "{}", refused.body);
    assert_eq!(
        refused.fault(),
        format!(
            "Cannot release maintenance entry {} (type operator_hold, scope lessee, asserted by project {LESSEE}): not asserted by your project",
            held["uuid"].as_str().unwrap()
        )
    );
    // Project A lost the node with the lease: it is not even visible to it now.
    let former = api.release("myNode", &held, LESSEE_ADMIN).await;
    assert_eq!(former.status, StatusCode::NOT_FOUND, "{}", former.body);
    // The owner outranks lessee scope and cleans up.
    let cleaned = api.release("myNode", &held, OWNER_MEMBER).await;
    assert_eq!(cleaned.status, StatusCode::NO_CONTENT, "{}", cleaned.body);
    assert_eq!(api.legacy_view("myNode", NEW).await, (false, Value::Null));
}

/// Scenario 7 on a database made by Ironic's own migrations.
async fn scenario_7_legacy_automation_unchanged_over_http(t: TestDb) {
    t.load_ironic_schema().await;
    let db = setup(&t).await;
    let uuid = nodes::find(&db, "myNode").await.unwrap().uuid.unwrap();
    let api = Server::start(&t.url, "trusted-headers");
    let path = format!("/v1/nodes/{uuid}/maintenance");
    // No version header at all: Ironic's minimum, nodes by uuid only.
    let put = api.call(Method::PUT, &path, None, Some(OWNER_MEMBER), Some(json!({"reason": "rebalancing rack"}))).await;
    assert_eq!((put.status, put.body.as_str()), (StatusCode::ACCEPTED, ""));
    assert_eq!(put.header("X-OpenStack-Ironic-API-Version"), Some("1.1"));
    let shown = api.call(Method::GET, &format!("/v1/nodes/{uuid}"), None, Some(OWNER_MEMBER), None).await.json();
    assert_eq!(
        (shown["maintenance"].clone(), shown["maintenance_reason"].clone()),
        (json!(true), json!("rebalancing rack"))
    );
    // Old fields only at the old version.
    assert!(shown.get("owner").is_none() && shown.get("lessee").is_none() && shown.get("fault").is_none());
    // A second PUT updates the reason of the one legacy entry.
    let again = api.call(Method::PUT, &path, Some(OLD), Some(OWNER_TEAMMATE), Some(json!({"reason": "rack 2"}))).await;
    assert_eq!(again.status, StatusCode::ACCEPTED);
    assert_eq!(api.legacy_view("myNode", OLD).await, (true, json!("rack 2")));
    let legacy = rows(&db, "SELECT type, asserted_by FROM node_maintenance").await;
    assert_eq!(legacy, [[Some("legacy".into()), Some("1f2e3d4c5b6a".into())]], "asserter is never re-stamped");
    let del = api.call(Method::DELETE, &path, None, Some(OWNER_MEMBER), None).await;
    assert_eq!((del.status, del.body.as_str()), (StatusCode::ACCEPTED, ""));
    assert_eq!(api.legacy_view("myNode", OLD).await, (false, Value::Null));
    assert_eq!(entry_count(&db).await, 0);
    // Should a typed entry outside its authority appear, its unset fails and names it.
    let operator_entry = api.add("myNode", OPERATOR, "hardware_failure", "PSU").await;
    api.call(Method::PUT, &path, None, Some(OWNER_MEMBER), Some(json!({"reason": "script"}))).await;
    let blocked = api.call(Method::DELETE, &path, None, Some(LESSEE_ADMIN), None).await;
    assert_eq!(blocked.status, StatusCode::FORBIDDEN, "{}", blocked.body);
    assert!(blocked.fault().contains(operator_entry["uuid"].as_str().unwrap()), "{}", blocked.fault());
    assert_eq!(entry_count(&db).await, 2);
}

backend_tests!(
    scenario_1_hardware_replacement_hold_over_http,
    scenario_2_second_hold_and_duplicate_conflict_over_http,
    scenario_3_release_one_hold_at_a_time_over_http,
    scenario_4_release_everything_over_http,
    scenario_5_scoped_holds_and_rbac_denials_over_http,
    scenario_6_holds_across_a_lease_change_over_http,
    scenario_7_legacy_automation_unchanged_over_http,
);

async fn microversions_are_negotiated_as_ironic_does(t: TestDb) {
    setup(&t).await;
    let api = Server::start(&t.url, "noauth");
    let version_of = |r: &Reply| r.header("X-OpenStack-Ironic-API-Version").map(str::to_owned);
    for (asked, chosen) in [(None, "1.1"), (Some("1.50"), "1.50"), (Some(NEW), NEW), (Some("latest"), WINDOWS)] {
        let r = api.call(Method::GET, "/v1/nodes", asked, None, None).await;
        assert_eq!(r.status, StatusCode::OK, "{asked:?}: {}", r.body);
        assert_eq!(version_of(&r).as_deref(), Some(chosen), "{asked:?}");
        assert_eq!(r.header("X-OpenStack-Ironic-API-Minimum-Version"), Some("1.1"));
        assert_eq!(r.header("X-OpenStack-Ironic-API-Maximum-Version"), Some(WINDOWS));
    }
    // The standard header form wins over the legacy one.
    let standard = api
        .http
        .get(format!("{}/v1/nodes", api.base))
        .header("OpenStack-API-Version", "baremetal 1.80")
        .header("X-OpenStack-Ironic-API-Version", "1.20")
        .send()
        .await
        .unwrap();
    assert_eq!(standard.headers()["X-OpenStack-Ironic-API-Version"], "1.80");
    assert_eq!(standard.headers()["OpenStack-API-Version"], "baremetal 1.80");

    let unsupported = api.call(Method::GET, "/v1/nodes", Some("1.118"), None, None).await;
    assert_eq!(unsupported.status, StatusCode::NOT_ACCEPTABLE);
    assert_eq!(
        unsupported.body,
        r#"{"error_message": "{\"code\": 406, \"title\": \"Not Acceptable\", \"description\": \"Version 1.118 was requested but the minor version is not supported by this service. The supported version range is: [1.1, 1.117].\"}"}"#
    );
    assert_eq!(unsupported.header("X-OpenStack-Ironic-API-Maximum-Version"), Some(WINDOWS));
    assert_eq!(version_of(&unsupported), None);
    let major = api.call(Method::GET, "/v1/nodes", Some("2.1"), None, None).await;
    assert_eq!(major.status, StatusCode::NOT_ACCEPTABLE);
    assert!(major.fault().starts_with("Mutually exclusive versions requested. Version 2.1"), "{}", major.fault());
    let garbage = api.call(Method::GET, "/v1/nodes", Some("abc"), None, None).await;
    assert_eq!(garbage.status, StatusCode::NOT_ACCEPTABLE);
    assert_eq!(garbage.fault(), "Invalid value for X-OpenStack-Ironic-API-Version header");

    // The typed endpoints do not exist below 1.116: the maintenance path
    // has only the boolean's PUT and DELETE there (405, as Ironic 39).
    for (method, path) in
        [(Method::GET, "/v1/nodes/myNode/maintenance"), (Method::POST, "/v1/nodes/myNode/maintenance")]
    {
        let r = api.call(method, path, Some("1.115"), None, Some(json!({"type": "operator_hold"}))).await;
        assert_eq!(r.status, StatusCode::METHOD_NOT_ALLOWED, "{path}: {}", r.body);
        assert_eq!(r.header("allow"), Some("DELETE, PUT"));
    }
    let r = api
        .call(
            Method::DELETE,
            &format!("/v1/nodes/myNode/maintenance/{}", uuid::Uuid::new_v4()),
            Some("1.115"),
            None,
            None,
        )
        .await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    // Names are addressable from 1.5, as in Ironic; below it a name is a node not found.
    let by_name = api.call(Method::GET, "/v1/nodes/myNode", Some("1.4"), None, None).await;
    assert_eq!((by_name.status, by_name.fault()), (StatusCode::NOT_FOUND, "Node myNode could not be found.".into()));
    // From 1.5 to 1.9 a name must be a host name (lower case); from 1.10 any unreserved characters.
    let r = api.call(Method::GET, "/v1/nodes/myNode", Some("1.5"), None, None).await;
    assert_eq!(
        (r.status, r.fault()),
        (StatusCode::BAD_REQUEST, "Expected a logical name or UUID but received myNode.".into())
    );
    assert_eq!(api.call(Method::GET, "/v1/nodes/myNode", Some("1.10"), None, None).await.status, StatusCode::OK);

    // Listing: short items, detail, pages with a next link, fields.
    let short = api.call(Method::GET, "/v1/nodes", Some(NEW), None, None).await.json();
    assert!(short["nodes"][0].get("maintenance_reason").is_none() && short["nodes"][0]["name"] == "myNode");
    let detail = api.call(Method::GET, "/v1/nodes/detail", Some(NEW), None, None).await.json();
    assert_eq!(detail["nodes"][0]["owner"], OWNER);
    assert!(detail["nodes"][0].get("maintenance_reason").is_some());
    let db = t.connect().await;
    legacy_nodes::create(&db, NewNode { name: Some("second".into()), ..NewNode::default() }).await.unwrap();
    let page = api.call(Method::GET, "/v1/nodes?limit=1", Some(NEW), None, None).await.json();
    let first = page["nodes"][0]["uuid"].as_str().unwrap().to_owned();
    // Ironic's next link, verbatim (its default fields included), and it can be followed.
    let next = page["next"].as_str().unwrap();
    assert!(next.ends_with(&format!("/v1/nodes?sort_key=id&sort_dir=asc&fields=instance_uuid,maintenance,power_state,provision_state,uuid,name&limit=1&marker={first}")), "{page}");
    let rest = api.call(Method::GET, next.trim_start_matches(&api.base), Some(NEW), None, None).await.json();
    assert_eq!(rest["nodes"][0]["name"], "second");
    assert!(rest["nodes"][0].get("power_state").is_none(), "fields nodemaint does not serve are left out");
    let fields = api.call(Method::GET, "/v1/nodes/myNode?fields=maintenance,owner", Some(NEW), None, None).await.json();
    let keys: Vec<&String> = fields.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["maintenance", "owner", "links"]);
    let bad = api.call(Method::GET, "/v1/nodes/myNode?fields=bogus", Some(NEW), None, None).await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);

    // Discovery, as Ironic serves it, advertising the newest version.
    let root = api.call(Method::GET, "/", None, None, None).await.json();
    assert_eq!(root["default_version"]["version"], WINDOWS);
    assert_eq!(root["default_version"]["min_version"], "1.1");
    assert_eq!(root["name"], "OpenStack Ironic API");
    let v1 = api.call(Method::GET, "/v1", None, None, None).await.json();
    assert_eq!(v1["id"], "v1");
    assert!(v1["nodes"][0]["href"].as_str().unwrap().ends_with("/v1/nodes/"));
}

async fn errors_and_identity_speak_ironics_wire_format(t: TestDb) {
    let db = setup(&t).await;
    let mut api = Server::start(&t.url, "trusted-headers");
    let missing = api.get("/v1/nodes/nope", NEW, OPERATOR).await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    assert_eq!(
        missing.body,
        r#"{"error_message": "{\"faultcode\": \"Client\", \"faultstring\": \"Node nope could not be found.\", \"debuginfo\": null}"}"#
    );
    assert_eq!(missing.header("content-type"), Some("application/json"));
    // No identity from the proxy: 401, nothing served.
    let anonymous = api.call(Method::GET, "/v1/nodes", Some(NEW), None, None).await;
    assert_eq!(anonymous.status, StatusCode::UNAUTHORIZED);
    assert!(anonymous.fault().contains("X-User-Id"), "{}", anonymous.fault());
    // A project that is neither owner nor lessee cannot see the node.
    let stranger = As { user: "x", project: Some("ffff"), roles: "admin" };
    assert_eq!(api.get("/v1/nodes/myNode", NEW, stranger).await.status, StatusCode::NOT_FOUND);
    assert_eq!(api.get("/v1/nodes", NEW, stranger).await.json()["nodes"], json!([]));
    assert_eq!(api.get("/v1/nodes", NEW, LESSEE_ADMIN).await.json()["nodes"].as_array().unwrap().len(), 1);
    // A reader passes node:get but not maintenance:add (403 from policy).
    let reader = As { user: "r", project: Some(OWNER), roles: "reader" };
    let denied = api.add_reply("myNode", reader, json!({"type": "operator_hold"})).await;
    assert_eq!(denied.status, StatusCode::FORBIDDEN, "{}", denied.body);
    assert_eq!(denied.fault(), "baremetal:node:maintenance:add is disallowed by policy");

    // Bad input: 400, one line, nothing written.
    let cases = [
        (json!({"type": "legacy"}), "legacy"),
        (json!({"type": "fault"}), "fault"),
        (json!({"type": "no_such_type"}), "no_such_type"),
        (json!({"reason": "no type"}), "Missing mandatory parameter: type"),
        (json!({"type": "operator_hold", "extra": [1]}), "extra"),
        (json!({"type": "operator_hold", "scope": "system"}), "Unexpected arguments: scope"),
        (json!({"type": 5}), "Expected string for type"),
    ];
    for (body, needle) in cases {
        let r = api.add_reply("myNode", OPERATOR, body.clone()).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{body}: {}", r.body);
        assert!(r.fault().contains(needle), "{body}: {}", r.fault());
    }
    let not_json = api
        .http
        .put(format!("{}/v1/nodes/myNode/maintenance", api.base))
        .header("X-OpenStack-Ironic-API-Version", NEW)
        .header("X-User-Id", "op")
        .header("X-Roles", "admin")
        .header("OpenStack-System-Scope", "all")
        .body("{\"reas")
        .send()
        .await
        .unwrap();
    assert_eq!(not_json.status(), StatusCode::BAD_REQUEST);
    let bad_reason = api
        .call(Method::PUT, "/v1/nodes/myNode/maintenance", Some(NEW), Some(OPERATOR), Some(json!({"reason": 5})))
        .await;
    assert_eq!(bad_reason.fault(), "Expected string for reason: 5");
    assert_eq!(entry_count(&db).await, 0);
    assert_eq!(api.legacy_view("myNode", NEW).await, (false, Value::Null));

    // The request log: method, path, status and latency on stderr.
    api.call(Method::PUT, "/v1/nodes/myNode/maintenance", Some(NEW), Some(OPERATOR), Some(json!({"reason": "x"})))
        .await;
    let status = api.stop();
    assert!(status.success(), "SIGTERM is a clean stop: {status:?}");
    let log = api.log_lines().join("\n");
    assert!(log.contains("PUT /v1/nodes/myNode/maintenance status: 202 time: "), "{log}");
    assert!(log.contains("GET /v1/nodes/nope status: 404"), "{log}");
    assert!(log.contains("nodemaint API stopped"), "{log}");
}

mod microversions_are_negotiated_as_ironic_does {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sqlite() {
        let t = crate::common::TestDb::create(crate::common::Backend::Sqlite).await.unwrap();
        super::microversions_are_negotiated_as_ironic_does(t).await;
    }
}

backend_tests!(errors_and_identity_speak_ironics_wire_format);

/// `serve`'s documented exit codes when it cannot start.
async fn serve_refuses_to_start_with_its_documented_exit_codes(t: TestDb) {
    // No schema yet: 5, naming the fix.
    let out = nodemaint_cmd(&t.url, &["serve", "--bind", "127.0.0.1:0"]).output().unwrap();
    assert_eq!(out.status.code(), Some(5), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("db upgrade"));
    // The port is taken: 3.
    setup(&t).await;
    let api = Server::start(&t.url, "noauth");
    let out = nodemaint_cmd(&t.url, &["serve", "--bind", api.base.trim_start_matches("http://")]).output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot listen on"));
    // Trusted headers on an address others reach, not asked for by name: 3,
    // naming both ways out; named, it starts.
    let out = nodemaint_cmd(&t.url, &["serve", "--bind", "0.0.0.0:0"]).output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("would trust identity headers") && err.contains("--auth-strategy trusted-headers"), "{err}");
    let mut named = nodemaint_cmd(&t.url, &["serve", "--bind", "0.0.0.0:0", "--auth-strategy", "trusted-headers"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let listening =
        BufReader::new(named.stderr.take().unwrap()).lines().map_while(Result::ok).any(|l| l.contains("listening on"));
    named.kill().unwrap();
    named.wait().unwrap();
    assert!(listening, "named, trusted-headers starts on 0.0.0.0");
    // Keystone without its section: 3, naming it.
    let out =
        nodemaint_cmd(&t.url, &["serve", "--bind", "127.0.0.1:0", "--auth-strategy", "keystone"]).output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("[keystone_authtoken]"));
}

mod serve_refuses_to_start_with_its_documented_exit_codes {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sqlite() {
        let t = crate::common::TestDb::create(crate::common::Backend::Sqlite).await.unwrap();
        super::serve_refuses_to_start_with_its_documented_exit_codes(t).await;
    }
}

/// Requests the real `baremetal` client and Ironic 39 answer differently
/// from a naive server: paths with a trailing slash, bad paging and field
/// parameters, names below 1.5, 405 / 413 and malformed versions, each in
/// Ironic's error body.
async fn wire_details_answer_as_ironic_39_does(t: TestDb) {
    setup(&t).await;
    let api = Server::start(&t.url, "noauth");
    // `baremetal node list` asks for /v1/nodes/?…; every path takes a trailing slash.
    api.call(Method::PUT, "/v1/nodes/myNode/maintenance/", Some(NEW), None, Some(json!({"reason": "r"}))).await;
    let listed = api.call(Method::GET, "/v1/nodes/?limit=5&maintenance=True", Some("1.65"), None, None).await;
    assert_eq!(listed.status, StatusCode::OK, "{}", listed.body);
    assert_eq!(listed.json()["nodes"][0]["name"], "myNode");
    for path in ["/v1/nodes/detail/", "/v1/nodes/myNode/", "/v1/nodes/myNode/maintenance/"] {
        let r = api.call(Method::GET, path, Some(NEW), None, None).await;
        assert_eq!(r.status, StatusCode::OK, "{path}: {}", r.body);
    }
    let fault = |r: &Reply| (r.status, r.fault());
    let bad = StatusCode::BAD_REQUEST;
    for (path, want) in [
        ("/v1/nodes?limit=0", "Limit must be positive"),
        ("/v1/nodes?limit=-3", "Limit must be positive"),
        ("/v1/nodes?marker=myNode", "Expected UUID for marker: myNode"),
        ("/v1/nodes/myNode?fields=bogus", "Field bogus is not a valid field."),
    ] {
        assert_eq!(fault(&api.call(Method::GET, path, Some(NEW), None, None).await), (bad, want.to_owned()), "{path}");
    }
    // Below 1.5 a name names no node (what Ironic 39 answers; the wire
    // differential in ironic_wire.rs checks every version).
    let by_name = api.call(Method::GET, "/v1/nodes/myNode", None, None, None).await;
    assert_eq!((by_name.status, by_name.fault()), (StatusCode::NOT_FOUND, "Node myNode could not be found.".into()));
    // 405 in the framework's error body, as Ironic's, not text/plain.
    let patch = api.call(Method::PATCH, "/v1/nodes/myNode/maintenance", Some(NEW), None, None).await;
    assert_eq!(patch.status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(patch.header("content-type"), Some("application/json"));
    assert_eq!(patch.fault(), "");
    // A malformed version is refused naming Ironic's header, whichever it came in.
    let standard =
        api.http.get(format!("{}/v1/nodes", api.base)).header("OpenStack-API-Version", "baremetal xx").send().await;
    let standard = standard.unwrap();
    assert_eq!(standard.status(), StatusCode::NOT_ACCEPTABLE);
    assert!(standard.text().await.unwrap().contains("Invalid value for X-OpenStack-Ironic-API-Version header"));
    // A body declared too large is refused at once, before any of it arrives.
    {
        use std::io::{Read, Write};
        let mut conn = std::net::TcpStream::connect(api.base.trim_start_matches("http://")).unwrap();
        let declared = "PUT /v1/nodes/myNode/maintenance HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 99999999\r\n\r\n{\"reason\": \"x\"}";
        conn.write_all(declared.as_bytes()).unwrap();
        conn.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let started = Instant::now();
        let mut answer = [0u8; 512];
        let n = conn.read(&mut answer).unwrap();
        assert!(
            String::from_utf8_lossy(&answer[..n]).starts_with("HTTP/1.1 413"),
            "{}",
            String::from_utf8_lossy(&answer[..n])
        );
        assert!(started.elapsed() < Duration::from_secs(2), "answered at once: {:?}", started.elapsed());
    }
}

mod wire_details_answer_as_ironic_39_does {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sqlite() {
        let t = crate::common::TestDb::create(crate::common::Backend::Sqlite).await.unwrap();
        super::wire_details_answer_as_ironic_39_does(t).await;
    }
}

/// A client that stalls mid-body gets 408 after `--body-timeout`, and a stop
/// with such a client connected ends within `--shutdown-timeout`.
async fn a_stalled_client_neither_holds_a_request_nor_a_stop(t: TestDb) {
    use std::io::{Read, Write};
    setup(&t).await;
    let stalled_put = "PUT /v1/nodes/myNode/maintenance HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"rea";
    let api = Server::start_with(&t.url, "noauth", &["--body-timeout", "1"]);
    let mut conn = std::net::TcpStream::connect(api.base.trim_start_matches("http://")).unwrap();
    conn.write_all(stalled_put.as_bytes()).unwrap();
    conn.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut answer = [0u8; 512];
    let n = conn.read(&mut answer).unwrap();
    let answer = String::from_utf8_lossy(&answer[..n]);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    drop(api);

    let mut api = Server::start_with(&t.url, "noauth", &["--body-timeout", "600", "--shutdown-timeout", "1"]);
    let mut conn = std::net::TcpStream::connect(api.base.trim_start_matches("http://")).unwrap();
    conn.write_all(stalled_put.as_bytes()).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    let status = api.stop();
    assert!(status.success(), "{status:?}");
    assert!(started.elapsed() < Duration::from_secs(5), "the stop took {:?}", started.elapsed());
    assert!(api.log_lines().join("\n").contains("--shutdown-timeout 1s"), "{:?}", api.log_lines());
}

mod a_stalled_client_neither_holds_a_request_nor_a_stop {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sqlite() {
        let t = crate::common::TestDb::create(crate::common::Backend::Sqlite).await.unwrap();
        super::a_stalled_client_neither_holds_a_request_nor_a_stop(t).await;
    }
}
