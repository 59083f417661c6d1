//! Notifications (issue #29) on every backend, received by a real
//! oslo.messaging notification listener (`tests/ironic/oslo_listener.py`,
//! in Ironic 39's virtual environment) through the shared RabbitMQ, each
//! test on an exchange and topic of its own: the legacy calls' Ironic
//! `maintenance_set` pairs and the typed events, with their priorities,
//! publisher ids, request ids and payloads; nothing for a refused change;
//! Ironic's `.start` + `.error` for a legacy call that failed after it
//! began; two `serve` processes sending each notification once.

use crate::api::{As, OLD, Reply, Server};
use crate::backend_tests;
use crate::common::{TestDb, count, ok};
use nodemaint::admin::legacy_nodes::{self, NewNode};
use reqwest::{Method, StatusCode};
use sea_orm::{ConnectionTrait, DatabaseConnection, DbBackend};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const RABBIT: &str = "rabbit://guest:guest@127.0.0.1:5672/";
const HOST: &str = "notify-test-host";

/// An exchange and topic of this test's own, and the ironic.conf that
/// turns notifications on for them.
struct Bus {
    exchange: String,
    topic: String,
    url: String,
    conf: std::path::PathBuf,
}

impl Bus {
    fn new() -> Bus {
        let id = uuid::Uuid::new_v4().simple().to_string();
        let (exchange, topic) = (format!("nmx-{}", &id[..8]), format!("nmt-{}", &id[..8]));
        let conf = std::env::temp_dir().join(format!("nodemaint-notify-{id}.conf"));
        let bus = Bus { exchange, topic, url: RABBIT.to_owned(), conf };
        bus.write_conf();
        bus
    }

    /// The ironic.conf of this bus (again, after `url` changed).
    fn write_conf(&self) {
        let (topic, exchange, url) = (&self.topic, &self.exchange, &self.url);
        let text = format!(
            "[DEFAULT]\nhost = {HOST}\nnotification_level = info\nversioned_notifications_topics = {topic}\n\
             control_exchange = {exchange}\n\n[oslo_messaging_notifications]\ndriver = messagingv2\n\
             transport_url = {url}\n"
        );
        std::fs::write(&self.conf, text).unwrap();
    }

    /// Appends `text` (sections and keys) to the bus's ironic.conf.
    fn add_conf(&self, text: &str) {
        let mut conf = std::fs::read_to_string(&self.conf).unwrap();
        conf.push_str(text);
        std::fs::write(&self.conf, conf).unwrap();
    }

    /// The notification settings this ironic.conf gives (for the library).
    fn settings(&self) -> nodemaint::notify::Settings {
        let files = nodemaint::config::Files { toml: None, oslo_files: vec![self.conf.clone()], oslo_dirs: Vec::new() };
        nodemaint::notify::Settings::from_config(&files.load().unwrap()).unwrap().expect("notifications on")
    }

    fn conf(&self) -> String {
        self.conf.display().to_string()
    }

    /// A listener waiting for `n` notifications (at most `timeout`).
    fn listen(&self, n: usize, timeout: Duration) -> Listener {
        self.listen_at(&self.url, n, timeout)
    }

    /// [`Bus::listen`] through the broker at `url`.
    fn listen_at(&self, url: &str, n: usize, timeout: Duration) -> Listener {
        let python = ironic_python();
        let out = std::env::temp_dir().join(format!("nodemaint-notify-{}.json", uuid::Uuid::new_v4().simple()));
        let mut child = Command::new(python)
            .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/ironic/oslo_listener.py"))
            .args([url, &self.exchange, &self.topic, &n.to_string(), &timeout.as_secs().to_string()])
            .arg(&out)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the oslo.messaging listener");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        assert_eq!(lines.next().and_then(Result::ok).as_deref(), Some("ready"), "the listener did not start");
        Listener { child, out }
    }

    /// `serve` on `url` with notifications on, trusted headers.
    fn serve(&self, url: &str) -> Server {
        let conf = self.conf();
        Server::start_with_args(&[
            "--config-file",
            &conf,
            "--database-url",
            url,
            "serve",
            "--bind",
            "127.0.0.1:0",
            "--auth-strategy",
            "trusted-headers",
            "--tick-interval",
            "0",
            "--notify-interval",
            "1",
        ])
    }
}

impl Drop for Bus {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.conf);
    }
}

/// The Python of Ironic 39's virtual environment (oslo.messaging).
pub(crate) fn ironic_python() -> String {
    let out = Command::new("bash")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/ironic/ironic.sh"))
        .arg("python")
        .output()
        .expect("run tests/ironic/ironic.sh python");
    assert!(out.status.success(), "ironic venv: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

struct Listener {
    child: Child,
    out: std::path::PathBuf,
}

impl Listener {
    /// Waits for the listener to finish; what it received, in order.
    fn received(mut self) -> Vec<Value> {
        let status = self.child.wait().expect("wait for the listener");
        assert!(status.success(), "the listener failed: {status}");
        let text = std::fs::read_to_string(&self.out).expect("the listener's output");
        let _ = std::fs::remove_file(&self.out);
        serde_json::from_str::<Vec<Value>>(&text).unwrap()
    }
}

const OWNER: &str = "owner-project";
const OPERATOR: As = As { user: "op-user", project: None, roles: "admin" };
const OWNER_ADMIN: As = As { user: "owner-admin", project: Some(OWNER), roles: "admin" };
/// May see the node, may not set maintenance on it (Ironic's default policy).
const OWNER_READER: As = As { user: "owner-reader", project: Some(OWNER), roles: "reader" };

async fn setup(t: &TestDb, name: &str) -> DatabaseConnection {
    prepare(&t.url, name).await
}

/// The schema upgraded on `url`, and one node `name` of the owner's.
pub(crate) async fn prepare(url: &str, name: &str) -> DatabaseConnection {
    ok(&crate::common::nodemaint_cmd(url, &["db", "upgrade"]).output().expect("run nodemaint"));
    let db = nodemaint::db::connect(url).await.expect("connect to the test database");
    let node = NewNode { name: Some(name.into()), owner: Some(OWNER.into()), ..NewNode::default() };
    legacy_nodes::create(&db, node).await.unwrap();
    db
}

async fn call(api: &Server, method: Method, path: &str, version: &str, body: Option<Value>, who: As) -> Reply {
    api.call(method, path, Some(version), Some(who), body).await
}

fn data(n: &Value) -> &Value {
    &n["payload"]["ironic_object.data"]
}

async fn legacy_calls_and_typed_changes_reach_an_oslo_listener(t: TestDb) {
    let db = setup(&t, "myNode").await;
    let bus = Bus::new();
    let listener = bus.listen(7, Duration::from_secs(60));
    let api = bus.serve(&t.url);

    let put =
        call(&api, Method::PUT, "/v1/nodes/myNode/maintenance", OLD, Some(json!({"reason": "disk"})), OPERATOR).await;
    assert_eq!(put.status, StatusCode::ACCEPTED, "{}", put.body);
    // Refused before any change: nothing is sent for them.
    let missing = call(&api, Method::PUT, "/v1/nodes/nope/maintenance", OLD, Some(json!({})), OPERATOR).await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    let added = call(
        &api,
        Method::POST,
        "/v1/nodes/myNode/maintenance",
        "1.116",
        Some(json!({"type": "operator_hold", "reason": "owner's hold"})),
        OWNER_ADMIN,
    )
    .await;
    assert_eq!(added.status, StatusCode::CREATED, "{}", added.body);
    let twice = call(
        &api,
        Method::POST,
        "/v1/nodes/myNode/maintenance",
        "1.116",
        Some(json!({"type": "operator_hold", "reason": "again"})),
        OWNER_ADMIN,
    )
    .await;
    assert_eq!(twice.status, StatusCode::CONFLICT, "{}", twice.body);
    let failure = call(
        &api,
        Method::POST,
        "/v1/nodes/myNode/maintenance",
        "1.116",
        Some(json!({"type": "hardware_failure", "reason": "PSU"})),
        OPERATOR,
    )
    .await;
    assert_eq!(failure.status, StatusCode::CREATED, "{}", failure.body);
    // All or nothing: the owner may not release the operator's system hold.
    let forbidden = call(&api, Method::DELETE, "/v1/nodes/myNode/maintenance", "1.116", None, OWNER_ADMIN).await;
    assert_eq!(forbidden.status, StatusCode::FORBIDDEN, "{}", forbidden.body);
    let uuid = added.json()["uuid"].as_str().unwrap().to_owned();
    let released =
        call(&api, Method::DELETE, &format!("/v1/nodes/myNode/maintenance/{uuid}"), "1.116", None, OWNER_ADMIN).await;
    assert!(released.status.is_success(), "{}", released.body);
    let unset = call(&api, Method::DELETE, "/v1/nodes/myNode/maintenance", OLD, None, OPERATOR).await;
    assert_eq!(unset.status, StatusCode::ACCEPTED, "{}", unset.body);

    let got = listener.received();
    let types: Vec<&str> = got.iter().map(|n| n["event_type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "baremetal.node.maintenance_set.start",
            "baremetal.node.maintenance_set.end",
            "baremetal.node.maintenance_entry.asserted",
            "baremetal.node.maintenance_entry.asserted",
            "baremetal.node.maintenance_entry.released",
            "baremetal.node.maintenance_set.start",
            "baremetal.node.maintenance_set.end",
        ],
        "{got:#?}"
    );
    for n in &got {
        assert_eq!(n["priority"], "info");
        assert_eq!(n["publisher_id"], format!("ironic-api.{HOST}"));
    }
    // The context: the response's request id, the caller's identity.
    let request_id = |r: &Reply| r.header("x-openstack-request-id").unwrap().to_owned();
    for (n, reply) in got.iter().zip([&put, &put, &added, &failure, &released, &unset, &unset]) {
        assert_eq!(n["context"]["request_id"], request_id(reply), "{n:#}");
    }
    assert_eq!(got[0]["context"]["user"], OPERATOR.user);
    assert_eq!(got[2]["context"]["user"], "owner-admin");
    assert_eq!(got[2]["context"]["project_id"], OWNER);

    // NodePayload 1.17: `.start` shows the new state already.
    for n in &got[..2] {
        assert_eq!(n["payload"]["ironic_object.name"], "NodePayload");
        assert_eq!(n["payload"]["ironic_object.version"], "1.17");
        assert_eq!(data(n).as_object().unwrap().len(), 47);
        assert_eq!(data(n)["maintenance"], true);
        assert_eq!(data(n)["maintenance_reason"], "disk");
        assert_eq!(data(n)["name"], "myNode");
        assert_eq!(data(n)["owner"], OWNER);
    }
    for n in &got[5..] {
        assert_eq!(data(n)["maintenance"], false);
        assert_eq!(data(n)["maintenance_reason"], Value::Null);
    }
    // The typed events: versioned payloads of their own.
    assert_eq!(got[2]["payload"]["ironic_object.name"], "MaintenanceEntryPayload");
    assert_eq!(got[2]["payload"]["ironic_object.version"], "1.0");
    let entry = data(&got[2]);
    assert_eq!(entry["uuid"], uuid.as_str());
    assert_eq!(entry["type"], "operator_hold");
    assert_eq!(entry["scope"], "owner");
    assert_eq!(entry["reason"], "owner's hold");
    assert_eq!(entry["asserted_by"], "owner-admin");
    assert_eq!(entry["asserted_by_project"], OWNER);
    assert_eq!(entry["event"], "asserted");
    assert_eq!(data(&got[3])["scope"], "system");
    assert_eq!(data(&got[3])["asserted_by_project"], Value::Null);
    assert_eq!(data(&got[4])["event"], "released");
    assert_eq!(data(&got[4])["actor"], "owner-admin");
    assert_eq!(data(&got[2])["node_uuid"], data(&got[0])["uuid"]);

    // Each notification once, all marked sent.
    let ids: std::collections::HashSet<_> = got.iter().map(|n| n["metadata"]["message_id"].to_string()).collect();
    assert_eq!(ids.len(), got.len());
    let unsent = count(&db, "SELECT COUNT(*) FROM node_maintenance_notification WHERE sent_at IS NULL").await;
    assert_eq!(unsent, 0);
}
backend_tests!(legacy_calls_and_typed_changes_reach_an_oslo_listener);

/// A trigger that fails any write that changes the boolean of the node
/// `boom` (the node lock's no-op write on SQLite passes): the legacy call
/// is refused by the database after it was planned.
async fn fail_maintenance_writes(db: &DatabaseConnection) {
    let statements: Vec<&str> = match db.get_database_backend() {
        DbBackend::Sqlite => vec![
            "CREATE TRIGGER nm_boom BEFORE UPDATE ON nodes WHEN OLD.name = 'boom' AND NEW.maintenance IS NOT OLD.maintenance \
             BEGIN SELECT RAISE(ABORT, 'boom'); END",
        ],
        DbBackend::Postgres => vec![
            "CREATE FUNCTION nm_boom() RETURNS trigger AS $$ BEGIN \
             IF OLD.name = 'boom' AND NEW.maintenance IS DISTINCT FROM OLD.maintenance THEN RAISE EXCEPTION 'boom'; END IF; \
             RETURN NEW; END $$ LANGUAGE plpgsql",
            "CREATE TRIGGER nm_boom BEFORE UPDATE ON nodes FOR EACH ROW EXECUTE FUNCTION nm_boom()",
        ],
        _ => vec![
            "CREATE TRIGGER nm_boom BEFORE UPDATE ON nodes FOR EACH ROW BEGIN \
             IF OLD.name = 'boom' AND NOT (NEW.maintenance <=> OLD.maintenance) THEN \
             SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'boom'; END IF; END",
        ],
    };
    for sql in statements {
        db.execute_unprepared(sql).await.unwrap();
    }
}

async fn a_failed_legacy_call_sends_start_and_error_and_a_refused_one_nothing(t: TestDb) {
    let db = setup(&t, "boom").await;
    fail_maintenance_writes(&db).await;
    let bus = Bus::new();
    let listener = bus.listen(2, Duration::from_secs(60));
    let api = bus.serve(&t.url);

    let refused =
        call(&api, Method::PUT, "/v1/nodes/boom/maintenance", OLD, Some(json!({"reason": "x"})), OWNER_READER).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "{}", refused.body);
    let failed =
        call(&api, Method::PUT, "/v1/nodes/boom/maintenance", OLD, Some(json!({"reason": "psu"})), OPERATOR).await;
    assert!(failed.status.is_server_error(), "{}: {}", failed.status, failed.body);

    let got = listener.received();
    let seen: Vec<(&str, &str)> =
        got.iter().map(|n| (n["event_type"].as_str().unwrap(), n["priority"].as_str().unwrap())).collect();
    assert_eq!(
        seen,
        [("baremetal.node.maintenance_set.start", "info"), ("baremetal.node.maintenance_set.error", "error")],
        "{got:#?}"
    );
    for n in &got {
        // The node as the call asked for it; the database kept it as it was.
        assert_eq!(data(n)["maintenance"], true);
        assert_eq!(data(n)["maintenance_reason"], "psu");
        assert_eq!(n["context"]["request_id"], failed.header("x-openstack-request-id").unwrap());
    }
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_maintenance").await, 0);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_maintenance_event").await, 0);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_maintenance_notification").await, 2);
}
backend_tests!(a_failed_legacy_call_sends_start_and_error_and_a_refused_one_nothing);

async fn two_servers_send_each_notification_once(t: TestDb) {
    let db = setup(&t, "n0").await;
    for i in 1..4 {
        legacy_nodes::create(&db, NewNode { name: Some(format!("n{i}")), ..NewNode::default() }).await.unwrap();
    }
    let bus = Bus::new();
    let rounds = 10;
    // Each round on each node: a PUT and a DELETE, two notifications each.
    let expected = rounds * 4 * 4;
    let listener = bus.listen(expected, Duration::from_secs(120));
    let (a, b) = (bus.serve(&t.url), bus.serve(&t.url));
    for round in 0..rounds {
        for node in 0..4 {
            let api = if (round + node) % 2 == 0 { &a } else { &b };
            let path = format!("/v1/nodes/n{node}/maintenance");
            let put = call(api, Method::PUT, &path, OLD, Some(json!({"reason": format!("r{round}")})), OPERATOR).await;
            assert_eq!(put.status, StatusCode::ACCEPTED, "{}", put.body);
            let unset = call(api, Method::DELETE, &path, OLD, None, OPERATOR).await;
            assert_eq!(unset.status, StatusCode::ACCEPTED, "{}", unset.body);
        }
    }
    let got = listener.received();
    assert_eq!(got.len(), expected, "every notification, none twice");
    let ids: std::collections::HashSet<_> = got.iter().map(|n| n["metadata"]["message_id"].to_string()).collect();
    assert_eq!(ids.len(), expected, "a notification was sent twice");
    // Per node, in commit order: start, end of the PUT, then of the DELETE, round by round.
    for node in 0..4 {
        let name = format!("n{node}");
        let mine: Vec<(&str, bool)> = got
            .iter()
            .filter(|n| data(n)["name"] == name.as_str())
            .map(|n| (n["event_type"].as_str().unwrap(), data(n)["maintenance"].as_bool().unwrap()))
            .collect();
        let one_round = [
            ("baremetal.node.maintenance_set.start", true),
            ("baremetal.node.maintenance_set.end", true),
            ("baremetal.node.maintenance_set.start", false),
            ("baremetal.node.maintenance_set.end", false),
        ];
        assert_eq!(mine, one_round.repeat(rounds), "{name}");
    }
}
backend_tests!(two_servers_send_each_notification_once);

/// `nodemaint ARGS…` with the bus's ironic.conf and the test's database.
fn cli(bus: &Bus, t: &TestDb, args: &[&str]) -> std::process::Output {
    let conf = bus.conf();
    let mut all = vec!["--config-file", conf.as_str(), "--database-url", t.url.as_str()];
    all.extend_from_slice(args);
    crate::common::bare_cmd(&all).output().expect("run nodemaint")
}

/// The set writers notify too: the tick's window starts and expiries and
/// reconcile's repairs, through the CLI and `notify publish` (no serve).
async fn the_tick_and_reconcile_notify_and_notify_publish_sends(t: TestDb) {
    let db = setup(&t, "w1").await;
    legacy_nodes::create(&db, NewNode { name: Some("w2".into()), ..NewNode::default() }).await.unwrap();
    let old = NewNode {
        name: Some("old".into()),
        maintenance: true,
        maintenance_reason: Some("by hand".into()),
        ..NewNode::default()
    };
    legacy_nodes::create(&db, old).await.unwrap();
    let bus = Bus::new();
    let listener = bus.listen(5, Duration::from_secs(60));

    let window = ["--type", "operator_hold", "--reason", "firmware", "-q"];
    ok(&cli(&bus, &t, &[&["maintenance", "add", "w1", "--end", "+1h"][..], &window].concat()));
    ok(&cli(&bus, &t, &[&["maintenance", "add", "w2", "--start", "+1h", "--end", "+2h"][..], &window].concat()));
    // Bring both windows' times to now rather than wait for them.
    let past = "2020-01-01 00:00:00";
    db.execute_unprepared(&format!("UPDATE node_maintenance SET ends_at = '{past}'")).await.unwrap();
    db.execute_unprepared(&format!("UPDATE node_maintenance_schedule SET starts_at = '{past}'")).await.unwrap();
    ok(&cli(&bus, &t, &["-q", "reconcile"]));
    ok(&cli(&bus, &t, &["-q", "windows", "tick"]));
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_maintenance_notification WHERE sent_at IS NULL").await, 5);
    let published = cli(&bus, &t, &["--format", "json", "notify", "publish"]);
    let report: Value = serde_json::from_str(&ok(&published)).unwrap();
    assert_eq!(report["sent"], 5);
    assert_eq!(report["unsent"], 0);

    let got = listener.received();
    let seen: Vec<(&str, &str)> =
        got.iter().map(|n| (n["event_type"].as_str().unwrap(), data(n)["actor"].as_str().unwrap())).collect();
    let (by_cli, reconciler, scheduler) = ("operator", "nodemaint-reconcile", "nodemaint-windows");
    assert_eq!(
        seen,
        [
            ("baremetal.node.maintenance_entry.asserted", by_cli),
            ("baremetal.node.maintenance_window.scheduled", by_cli),
            ("baremetal.node.maintenance_entry.asserted", reconciler),
            ("baremetal.node.maintenance_window.expired", scheduler),
            ("baremetal.node.maintenance_window.started", scheduler),
        ],
        "{got:#?}"
    );
    assert_eq!(got[2]["payload"]["ironic_object.name"], "MaintenanceEntryPayload");
    assert_eq!(data(&got[2])["type"], "legacy");
    assert_eq!(data(&got[2])["reason"], "by hand");
    assert_eq!(got[3]["payload"]["ironic_object.name"], "MaintenanceWindowPayload");
    assert_eq!(data(&got[2])["note"], "reconciliation: backfilled from nodes.maintenance");
    assert_eq!(data(&got[3])["note"], "the window ended; released by the schedule");
    assert_eq!(data(&got[4])["note"], "window started by the schedule");
    for n in &got[3..] {
        assert_eq!(data(n)["type"], "operator_hold");
        assert!(data(n)["ends_at"].is_string(), "{n:#}");
    }
    // Nothing left: a second run sends nothing, and says so.
    let again: Value = serde_json::from_str(&ok(&cli(&bus, &t, &["--format", "json", "notify", "publish"]))).unwrap();
    assert_eq!(again["sent"], 0);
}
backend_tests!(the_tick_and_reconcile_notify_and_notify_publish_sends);

/// `upgrade check`: unsent notifications older than five minutes are a
/// Warning that asks whether the bus is reachable; sent, a Success.
/// Unsent ones while notifications are off are a Warning too.
async fn the_upgrade_check_warns_of_notifications_left_unsent(t: TestDb) {
    let db = setup(&t, "n1").await;
    let bus = Bus::new();
    ok(&cli(&bus, &t, &["-q", "maintenance", "set", "n1", "--reason", "disk"]));
    let check = cli(&bus, &t, &["upgrade", "check"]);
    assert_eq!(check.status.code(), Some(0), "fresh ones are not late: {}", crate::common::stdout(&check));
    db.execute_unprepared("UPDATE node_maintenance_notification SET created_at = '2020-01-01 00:00:00'").await.unwrap();
    let check = cli(&bus, &t, &["upgrade", "check", "--json"]);
    assert_eq!(check.status.code(), Some(1), "{}", crate::common::stdout(&check));
    let details = notification_details(&check);
    assert!(
        details
            .starts_with("2 notification(s) unsent, 2 of them written more than 5 minutes ago: is the bus reachable?"),
        "{details}"
    );
    let off = t.cli(&["upgrade", "check", "--json"]);
    assert_eq!(off.status.code(), Some(1), "{}", crate::common::stdout(&off));
    assert!(notification_details(&off).contains("but notifications are off"), "{}", crate::common::stdout(&off));
    let listener = bus.listen(2, Duration::from_secs(30));
    ok(&cli(&bus, &t, &["-q", "notify", "publish"]));
    assert_eq!(listener.received().len(), 2);
    let check = cli(&bus, &t, &["upgrade", "check"]);
    assert_eq!(check.status.code(), Some(0), "{}", crate::common::stdout(&check));
}
backend_tests!(the_upgrade_check_warns_of_notifications_left_unsent);

/// The "Notifications delivered" check's details in `upgrade check --json`.
fn notification_details(out: &std::process::Output) -> String {
    let report: Value = serde_json::from_str(&crate::common::stdout(out)).unwrap();
    let checks = report["checks"].as_array().expect("checks");
    let check = checks.iter().find(|c| c["check"] == "Notifications delivered").expect("the notifications check");
    check["details"].as_str().unwrap_or_default().to_owned()
}

/// A RabbitMQ of this test's own (`tests/lib/rabbitmq.sh`), on a free
/// port, removed on drop.
struct OwnBroker {
    dir: std::path::PathBuf,
    port: u16,
    /// The AMQPS port and its certificate, key and CA, when TLS is on.
    tls: Option<(u16, crate::tls::Certs)>,
}

impl OwnBroker {
    fn start() -> OwnBroker {
        let broker = OwnBroker::new();
        broker.run("start");
        broker
    }

    /// With a TLS listener too: a CA made by the test, a certificate for `localhost`.
    fn start_tls() -> OwnBroker {
        let mut broker = OwnBroker::new();
        let certs = broker.dir.join("certs");
        std::fs::create_dir_all(&certs).unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        broker.tls = Some((port, crate::tls::make_certs(&certs, "rabbitmq")));
        broker.run("start");
        broker
    }

    fn new() -> OwnBroker {
        let port = loop {
            // The broker's distribution port is its port + 20000: both free.
            let p = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
            if p < 45_000 && std::net::TcpListener::bind(("0.0.0.0", p + 20_000)).is_ok() {
                break p;
            }
        };
        let dir = std::env::temp_dir().join(format!("nodemaint-rabbit-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).unwrap();
        OwnBroker { dir, port, tls: None }
    }

    fn run(&self, what: &str) {
        let mut tls: Vec<std::ffi::OsString> = Vec::new();
        if let (Some((port, certs)), "start") = (&self.tls, what) {
            tls.push(port.to_string().into());
            tls.extend([&certs.cert, &certs.key, &certs.ca].map(|p| p.as_os_str().to_owned()));
        }
        let out = Command::new("bash")
            .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/lib/rabbitmq.sh"))
            .arg(what)
            .arg(&self.dir)
            .arg(self.port.to_string())
            .args(tls)
            .output()
            .expect("run tests/lib/rabbitmq.sh");
        assert!(out.status.success(), "rabbitmq {what}: {}", String::from_utf8_lossy(&out.stderr));
    }

    fn url(&self) -> String {
        format!("rabbit://guest:guest@127.0.0.1:{}/", self.port)
    }
}

impl Drop for OwnBroker {
    fn drop(&mut self) {
        self.run("clean");
    }
}

/// The bus goes down under `serve`: 1,000 changes all succeed meanwhile;
/// when it is back, every event arrives, in commit order per node, none twice.
async fn a_bus_outage_loses_nothing_and_sends_nothing_twice(t: TestDb) {
    let db = setup(&t, "n0").await;
    let nodes = 10;
    for i in 1..nodes {
        legacy_nodes::create(&db, NewNode { name: Some(format!("n{i}")), ..NewNode::default() }).await.unwrap();
    }
    let broker = OwnBroker::start();
    let mut bus = Bus::new();
    bus.url = broker.url();
    bus.write_conf();
    let changes = 1000;
    let listener = bus.listen(changes, Duration::from_secs(240));
    let api = bus.serve(&t.url);
    broker.run("stop");
    let entry = json!({"type": "operator_hold", "reason": "outage"});
    for round in 0..changes / (2 * nodes) {
        for node in 0..nodes {
            let path = format!("/v1/nodes/n{node}/maintenance");
            let added = call(&api, Method::POST, &path, "1.116", Some(entry.clone()), OPERATOR).await;
            assert_eq!(added.status, StatusCode::CREATED, "round {round}: {}", added.body);
            let uuid = added.json()["uuid"].as_str().unwrap().to_owned();
            let released = call(&api, Method::DELETE, &format!("{path}/{uuid}"), "1.116", None, OPERATOR).await;
            assert!(released.status.is_success(), "round {round}: {}", released.body);
        }
    }
    let unsent = count(&db, "SELECT COUNT(*) FROM node_maintenance_notification WHERE sent_at IS NULL").await;
    assert_eq!(unsent, changes as i64, "every event waits while the bus is down");
    broker.run("start");
    let got = listener.received();
    assert_eq!(got.len(), changes, "every event arrived, none twice");
    let ids: std::collections::HashSet<_> = got.iter().map(|n| n["metadata"]["message_id"].to_string()).collect();
    assert_eq!(ids.len(), changes, "an event arrived twice");
    // Per node, the order of its typed events in the database (commit order).
    let committed = crate::common::rows(
        &db,
        "SELECT n.uuid, e.kind, e.entry_uuid FROM node_maintenance_event e JOIN nodes n ON n.id = e.node_id ORDER BY e.id",
    )
    .await;
    let order = |pairs: Vec<(String, String, String)>| {
        let mut by_node: std::collections::BTreeMap<String, Vec<(String, String)>> = Default::default();
        for (node, kind, entry) in pairs {
            by_node.entry(node).or_default().push((kind, entry));
        }
        by_node
    };
    let text = |v: &Option<String>| v.clone().unwrap_or_default();
    let in_db = order(committed.iter().map(|r| (text(&r[0]), text(&r[1]), text(&r[2]))).collect());
    let field = |n: &Value, f: &str| data(n)[f].as_str().unwrap().to_owned();
    let received = order(got.iter().map(|n| (field(n, "node_uuid"), field(n, "event"), field(n, "uuid"))).collect());
    assert_eq!(received, in_db, "per node, in commit order");
    drop(api);
}
backend_tests!(a_bus_outage_loses_nothing_and_sends_nothing_twice);

/// Sent notifications are pruned after `[nodemaint] notification_retention`,
/// unsent ones never; history and the typed events are never touched.
async fn sent_notifications_are_pruned_after_the_retention_and_history_stays(t: TestDb) {
    let db = setup(&t, "n1").await;
    let bus = Bus::new();
    bus.add_conf("\n[nodemaint]\nnotification_retention = 3600\n");
    let listener = bus.listen(4, Duration::from_secs(30));
    ok(&cli(&bus, &t, &["-q", "maintenance", "set", "n1", "--reason", "disk"]));
    let first: Value = serde_json::from_str(&ok(&cli(&bus, &t, &["--format", "json", "notify", "publish"]))).unwrap();
    assert_eq!((first["sent"].as_u64(), first["pruned"].as_u64()), (Some(2), Some(0)), "within the retention: kept");
    // Sent two hours ago, by the clock of the retention.
    db.execute_unprepared("UPDATE node_maintenance_notification SET sent_at = '2020-01-01 00:00:00'").await.unwrap();
    ok(&cli(&bus, &t, &["-q", "maintenance", "unset", "n1"]));
    let history = count(&db, "SELECT COUNT(*) FROM node_history").await;
    let typed = count(&db, "SELECT COUNT(*) FROM node_maintenance_event").await;
    let second: Value = serde_json::from_str(&ok(&cli(&bus, &t, &["--format", "json", "notify", "publish"]))).unwrap();
    assert_eq!((second["sent"].as_u64(), second["pruned"].as_u64()), (Some(2), Some(2)), "{second}");
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_maintenance_notification").await, 2, "the new ones stay");
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_history").await, history);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_maintenance_event").await, typed);
    assert_eq!(listener.received().len(), 4);
}
backend_tests!(sent_notifications_are_pruned_after_the_retention_and_history_stays);

/// The window events and an update, each with its payload: a window
/// scheduled, extended and cancelled; one active at once, extended; the
/// conductor's fault asserted and asserted again (updated) through the
/// library; sent by `notify publish`.
async fn window_events_and_an_update_reach_the_listener(t: TestDb) {
    let db = setup(&t, "w1").await;
    let bus = Bus::new();
    let listener = bus.listen(7, Duration::from_secs(60));
    let added = |times: &[&str]| -> String {
        let hold = ["--type", "operator_hold", "--reason", "firmware"];
        let args = [&["--format", "json", "maintenance", "add", "w1"][..], times, &hold].concat();
        let entry: Value = serde_json::from_str(&ok(&cli(&bus, &t, &args))).unwrap();
        entry["uuid"].as_str().expect("the entry's uuid").to_owned()
    };
    let later = added(&["--start", "+1h", "--end", "+2h"]);
    ok(&cli(&bus, &t, &["-q", "maintenance", "extend", "w1", &later, "--end", "+3h"]));
    ok(&cli(&bus, &t, &["-q", "maintenance", "cancel", "w1", &later]));
    let now = added(&["--end", "+1h"]);
    ok(&cli(&bus, &t, &["-q", "maintenance", "extend", "w1", &now, "--end", "+2h"]));
    let svc =
        nodemaint::Maintenance::new(db.clone(), nodemaint::Policy::defaults()).with_notifications(&bus.settings());
    let fault = svc.fault_assert("w1", "power", Some("PSU 1".into())).await.unwrap();
    svc.fault_assert("w1", "power", Some("PSU 1 and 2".into())).await.unwrap();
    let report: Value = serde_json::from_str(&ok(&cli(&bus, &t, &["--format", "json", "notify", "publish"]))).unwrap();
    assert_eq!(report["sent"], 7, "{report}");

    let got = listener.received();
    let seen: Vec<(&str, &str, &str, &str)> = got
        .iter()
        .map(|n| {
            let name = n["payload"]["ironic_object.name"].as_str().unwrap();
            (
                n["event_type"].as_str().unwrap(),
                name,
                data(n)["event"].as_str().unwrap(),
                data(n)["uuid"].as_str().unwrap(),
            )
        })
        .collect();
    let (window, entry) = ("MaintenanceWindowPayload", "MaintenanceEntryPayload");
    let fault = fault.uuid.as_str();
    assert_eq!(
        seen,
        [
            ("baremetal.node.maintenance_window.scheduled", window, "scheduled", later.as_str()),
            ("baremetal.node.maintenance_window.extended", window, "extended", later.as_str()),
            ("baremetal.node.maintenance_window.cancelled", window, "cancelled", later.as_str()),
            ("baremetal.node.maintenance_entry.asserted", entry, "asserted", now.as_str()),
            ("baremetal.node.maintenance_window.extended", window, "extended", now.as_str()),
            ("baremetal.node.maintenance_entry.asserted", entry, "asserted", fault),
            ("baremetal.node.maintenance_entry.updated", entry, "updated", fault),
        ],
        "{got:#?}"
    );
    // An extension moves the end later (ISO 8601 UTC compares as text).
    let ends = |n: &Value| data(n)["ends_at"].as_str().expect("a window's end").to_owned();
    assert!(ends(&got[1]) > ends(&got[0]), "{:#} then {:#}", got[0], got[1]);
    assert!(ends(&got[4]) > ends(&got[3]), "{:#} then {:#}", got[3], got[4]);
    assert_eq!(data(&got[2])["actor"], "operator");
    // The notes the README's table shows.
    let note = |n: &Value| data(n)["note"].as_str().unwrap_or_default().to_owned();
    assert!(note(&got[0]).starts_with("starts "), "{:#}", got[0]);
    assert!(note(&got[1]).starts_with("end moved from "), "{:#}", got[1]);
    assert!(note(&got[2]).starts_with("was to start "), "{:#}", got[2]);
    assert_eq!(data(&got[3])["note"], Value::Null);
    for n in &got[5..] {
        assert_eq!(data(n)["type"], "fault");
        assert_eq!(data(n)["scope"], "system");
        assert_eq!(data(n)["ends_at"], Value::Null);
    }
    assert_eq!(data(&got[5])["reason"], "PSU 1");
    assert_eq!(data(&got[6])["reason"], "PSU 1 and 2");
}
backend_tests!(window_events_and_an_update_reach_the_listener);

/// `driver = log`: each notification is a line on stderr (the
/// `nodemaint::notification` log at its priority), shown without `-v`,
/// and marked sent; nothing goes to the bus.
async fn the_log_driver_writes_each_notification_as_a_log_line(t: TestDb) {
    let db = setup(&t, "n1").await;
    let bus = Bus::new();
    let conf = std::fs::read_to_string(&bus.conf).unwrap().replace("driver = messagingv2", "driver = log");
    std::fs::write(&bus.conf, conf).unwrap();
    ok(&cli(&bus, &t, &["-q", "maintenance", "set", "n1", "--reason", "disk"]));
    let published = cli(&bus, &t, &["--format", "json", "notify", "publish"]);
    let report: Value = serde_json::from_str(&ok(&published)).unwrap();
    assert_eq!(report["sent"], 2, "{report}");
    let stderr = crate::common::stderr(&published);
    let lines: Vec<&str> = stderr.lines().filter(|l| l.contains("nodemaint::notification")).collect();
    assert_eq!(lines.len(), 2, "{stderr}");
    for (line, what) in lines.iter().zip(["maintenance_set.start", "maintenance_set.end"]) {
        assert!(line.contains(" INFO "), "{line}");
        assert!(line.contains(&format!("baremetal.node.{what}")), "{line}");
        assert!(
            line.contains("\"maintenance_reason\": \"disk\"") || line.contains("\"maintenance_reason\":\"disk\""),
            "{line}"
        );
    }
    let unsent = count(&db, "SELECT COUNT(*) FROM node_maintenance_notification WHERE sent_at IS NULL").await;
    assert_eq!(unsent, 0);
}
backend_tests!(the_log_driver_writes_each_notification_as_a_log_line);

/// A trigger that fails every write changing the boolean of the node
/// `boom` as a deadlock does, each time it is tried: PostgreSQL's `40P01`;
/// MariaDB's error 1213 (also how Galera reports a certification
/// conflict). SQLite has one writer at a time and no deadlocks.
async fn deadlock_maintenance_writes(db: &DatabaseConnection) {
    let statements: Vec<&str> = match db.get_database_backend() {
        DbBackend::Postgres => vec![
            "CREATE FUNCTION nm_deadlock() RETURNS trigger AS $$ BEGIN \
             IF OLD.name = 'boom' AND NEW.maintenance IS DISTINCT FROM OLD.maintenance THEN \
             RAISE EXCEPTION 'deadlock detected' USING ERRCODE = '40P01'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql",
            "CREATE TRIGGER nm_deadlock BEFORE UPDATE ON nodes FOR EACH ROW EXECUTE FUNCTION nm_deadlock()",
        ],
        DbBackend::MySql => vec![
            "CREATE TRIGGER nm_deadlock BEFORE UPDATE ON nodes FOR EACH ROW BEGIN \
             IF OLD.name = 'boom' AND NOT (NEW.maintenance <=> OLD.maintenance) THEN \
             SIGNAL SQLSTATE '40001' SET MYSQL_ERRNO = 1213, \
             MESSAGE_TEXT = 'Deadlock found when trying to get lock; try restarting transaction'; END IF; END",
        ],
        _ => unreachable!("SQLite has no deadlocks"),
    };
    for sql in statements {
        db.execute_unprepared(sql).await.unwrap();
    }
}

/// A change that deadlocks each time it is tried exhausts its retries
/// (`[database] db_max_retries = 2`): a 503 that says how often it was
/// refused, nothing written; the typed change sends nothing, the legacy
/// call Ironic's `.start` + `.error`. On PostgreSQL and MariaDB (Galera's
/// real certification conflicts: `galera.rs`).
async fn a_change_that_deadlocks_until_its_retries_run_out(url: &str) {
    let db = prepare(url, "boom").await;
    deadlock_maintenance_writes(&db).await;
    let bus = Bus::new();
    bus.add_conf("\n[database]\ndb_max_retries = 2\ndb_retry_interval = 0.01\n");
    let listener = bus.listen(2, Duration::from_secs(60));
    let api = bus.serve(url);

    let body = json!({"type": "hardware_failure", "reason": "PSU"});
    let typed = call(&api, Method::POST, "/v1/nodes/boom/maintenance", "1.116", Some(body), OPERATOR).await;
    let legacy =
        call(&api, Method::PUT, "/v1/nodes/boom/maintenance", OLD, Some(json!({"reason": "psu"})), OPERATOR).await;
    for reply in [&typed, &legacy] {
        assert_eq!(reply.status, StatusCode::SERVICE_UNAVAILABLE, "{}", reply.body);
        assert!(reply.body.contains("refused this change 3 time(s)"), "{}", reply.body);
        assert!(reply.body.contains("deadlock or Galera certification conflict"), "{}", reply.body);
    }

    let got = listener.received();
    let seen: Vec<(&str, &str)> =
        got.iter().map(|n| (n["event_type"].as_str().unwrap(), n["priority"].as_str().unwrap())).collect();
    assert_eq!(
        seen,
        [("baremetal.node.maintenance_set.start", "info"), ("baremetal.node.maintenance_set.error", "error")],
        "{got:#?}"
    );
    for n in &got {
        assert_eq!(n["context"]["request_id"], legacy.header("x-openstack-request-id").unwrap());
        assert_eq!(data(n)["maintenance_reason"], "psu");
    }
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_maintenance").await, 0);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_maintenance_event").await, 0);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_maintenance_notification").await, 2);
}

mod a_change_that_deadlocks_until_its_retries_run_out {
    use crate::common::{Backend, TestDb};

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres() {
        if let Some(t) = TestDb::create(Backend::Postgres).await {
            super::a_change_that_deadlocks_until_its_retries_run_out(&t.url).await;
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn mysql() {
        if let Some(t) = TestDb::create(Backend::Mysql).await {
            super::a_change_that_deadlocks_until_its_retries_run_out(&t.url).await;
        }
    }
}

/// Makes the insert of the node `stall`'s notifications hang: its change
/// written, its notifications inserted, its commit not reached. PostgreSQL
/// and MariaDB sleep in the trigger; SQLite, which has no sleep, runs a
/// join of 8·10⁹ rows.
async fn stall_notifications(db: &DatabaseConnection) {
    let statements: Vec<String> = match db.get_database_backend() {
        DbBackend::Postgres => vec![
            "CREATE FUNCTION nm_stall() RETURNS trigger AS $$ BEGIN \
             IF NEW.node_id = (SELECT id FROM nodes WHERE name = 'stall') THEN PERFORM pg_sleep(4); END IF; \
             RETURN NULL; END $$ LANGUAGE plpgsql"
                .into(),
            "CREATE TRIGGER nm_stall AFTER INSERT ON node_maintenance_notification FOR EACH ROW \
             EXECUTE FUNCTION nm_stall()"
                .into(),
        ],
        DbBackend::MySql => vec![
            "CREATE TRIGGER nm_stall AFTER INSERT ON node_maintenance_notification FOR EACH ROW BEGIN \
             IF NEW.node_id = (SELECT id FROM nodes WHERE name = 'stall') THEN SET @nm_stall = SLEEP(4); END IF; END"
                .into(),
        ],
        _ => vec![
            "CREATE TABLE nm_big (x INTEGER)".into(),
            "INSERT INTO nm_big WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 2000) \
             SELECT x FROM c"
                .into(),
            "CREATE TRIGGER nm_stall AFTER INSERT ON node_maintenance_notification \
             WHEN NEW.node_id = (SELECT id FROM nodes WHERE name = 'stall') \
             BEGIN SELECT count(*) FROM nm_big a, nm_big b, nm_big c; END"
                .into(),
        ],
    };
    for sql in statements {
        db.execute_unprepared(&sql).await.unwrap();
    }
}

/// How many sessions on this database are in the stall trigger's sleep;
/// on SQLite, 1 while another connection holds the write lock.
async fn stalled(db: &DatabaseConnection, url: &str) -> i64 {
    match db.get_database_backend() {
        DbBackend::Postgres => {
            count(
                db,
                "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event = 'PgSleep'",
            )
            .await
        }
        DbBackend::MySql => {
            count(
                db,
                "SELECT COUNT(*) FROM information_schema.processlist WHERE db = DATABASE() AND state = 'User sleep'",
            )
            .await
        }
        _ => {
            let file = url.trim_start_matches("sqlite://").split('?').next().unwrap();
            let probe = Command::new("sqlite3")
                .args(["-cmd", ".timeout 0", file, "BEGIN IMMEDIATE; ROLLBACK;"])
                .output()
                .expect("run sqlite3");
            i64::from(!probe.status.success())
        }
    }
}

/// `serve` killed (SIGKILL) inside a legacy call's transaction, after it
/// wrote the change and its notifications and before its commit: the
/// database rolls it all back, and nothing is ever sent for it, neither
/// `.end` nor `.start` + `.error`. A call on another node afterwards is
/// sent, so the listener and the outbox do work.
async fn a_change_killed_before_its_commit_sends_nothing(t: TestDb) {
    let db = setup(&t, "stall").await;
    legacy_nodes::create(&db, NewNode { name: Some("calm".into()), ..NewNode::default() }).await.unwrap();
    stall_notifications(&db).await;
    let bus = Bus::new();
    let api = bus.serve(&t.url);
    let pid = api.pid().to_string();
    let body = json!({"reason": "psu"});
    let request = api.try_call(Method::PUT, "/v1/nodes/stall/maintenance", Some(OLD), Some(OPERATOR), Some(body));
    let kill = async {
        // SQLite's probe sees the write lock, taken first: held for a
        // second on end, the transaction is in the insert (where it stays
        // for minutes), not in a moment's write.
        let needed = if db.get_database_backend() == DbBackend::Sqlite { 5 } else { 1 };
        let (mut seen, deadline) = (0, std::time::Instant::now() + Duration::from_secs(30));
        while seen < needed {
            assert!(std::time::Instant::now() < deadline, "the call never reached the stalled insert");
            seen = if stalled(&db, &t.url).await > 0 { seen + 1 } else { 0 };
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        assert!(Command::new("kill").args(["-KILL", &pid]).status().unwrap().success());
    };
    let (reply, ()) = tokio::join!(request, kill);
    assert!(reply.is_err(), "the killed server answered: {:?}", reply.map(|r| r.body));
    drop(api);
    // The server's session ends (and rolls back) once its sleep is over.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while stalled(&db, &t.url).await > 0 {
        assert!(std::time::Instant::now() < deadline, "the killed server's session stayed");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_maintenance").await, 0);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_maintenance_event").await, 0);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_maintenance_notification").await, 0);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM nodes WHERE maintenance = true").await, 0);

    let listener = bus.listen(2, Duration::from_secs(60));
    let again = bus.serve(&t.url);
    let put =
        call(&again, Method::PUT, "/v1/nodes/calm/maintenance", OLD, Some(json!({"reason": "x"})), OPERATOR).await;
    assert_eq!(put.status, StatusCode::ACCEPTED, "{}", put.body);
    let got = listener.received();
    let names: Vec<(&str, &str)> =
        got.iter().map(|n| (n["event_type"].as_str().unwrap(), data(n)["name"].as_str().unwrap())).collect();
    assert_eq!(
        names,
        [("baremetal.node.maintenance_set.start", "calm"), ("baremetal.node.maintenance_set.end", "calm")],
        "{got:#?}"
    );
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_maintenance_notification").await, 2);
}
backend_tests!(a_change_killed_before_its_commit_sends_nothing);

/// TLS to the broker as ironic.conf sets it (`[oslo_messaging_rabbit] ssl
/// = true`, `ssl_ca_file`), to a RabbitMQ of the test's own with an AMQPS
/// listener (a CA made by the test, a certificate for `localhost`): the
/// notifications arrive (the listener takes them off the plain port). With
/// a CA that did not sign the broker's certificate, `notify publish` is
/// refused (exit 13), says why, and they wait in the outbox.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notifications_go_to_a_tls_broker_that_the_configured_ca_signed() {
    let Some(t) = TestDb::create(crate::common::Backend::Sqlite).await else { return };
    let db = setup(&t, "n1").await;
    let broker = OwnBroker::start_tls();
    let (tls_port, certs) = broker.tls.as_ref().unwrap();
    let mut bus = Bus::new();
    bus.url = format!("rabbit://guest:guest@localhost:{tls_port}/");
    bus.write_conf();
    let tls = |ca: &std::path::Path| format!("\n[oslo_messaging_rabbit]\nssl = true\nssl_ca_file = {}\n", ca.display());
    let conf = std::fs::read_to_string(&bus.conf).unwrap();
    std::fs::write(&bus.conf, format!("{conf}{}", tls(&certs.ca))).unwrap();
    let listener = bus.listen_at(&broker.url(), 2, Duration::from_secs(60));

    ok(&cli(&bus, &t, &["-q", "maintenance", "set", "n1", "--reason", "disk"]));
    let report: Value = serde_json::from_str(&ok(&cli(&bus, &t, &["--format", "json", "notify", "publish"]))).unwrap();
    assert_eq!(report["sent"], 2, "{report}");
    let got = listener.received();
    let types: Vec<&str> = got.iter().map(|n| n["event_type"].as_str().unwrap()).collect();
    assert_eq!(types, ["baremetal.node.maintenance_set.start", "baremetal.node.maintenance_set.end"]);

    std::fs::write(&bus.conf, format!("{conf}{}", tls(&certs.wrong_ca))).unwrap();
    ok(&cli(&bus, &t, &["-q", "maintenance", "unset", "n1"]));
    let refused = cli(&bus, &t, &["notify", "publish"]);
    let said = crate::common::stderr(&refused);
    assert_eq!(refused.status.code(), Some(13), "{said}");
    assert!(said.contains(&format!("connecting to RabbitMQ at localhost:{tls_port} failed")), "{said}");
    assert!(said.contains("the notifications wait in the outbox"), "{said}");
    assert_eq!(said.trim().lines().count(), 1, "one line: {said}");
    let unsent = count(&db, "SELECT COUNT(*) FROM node_maintenance_notification WHERE sent_at IS NULL").await;
    assert_eq!(unsent, 2);
}
