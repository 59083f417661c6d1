//! The notification differential against the real Ironic 39 (issue #29):
//! Ironic's API with notifications on (`tests/ironic/ironic.sh`, noauth,
//! the shared RabbitMQ) and `nodemaint serve` on a copy of Ironic's own
//! SQLite database taken before the calls, each on an exchange and topic
//! of its own, are sent the same legacy maintenance calls. What each puts
//! on the bus is captured off the wire (`capture_notifications.py`, kombu:
//! routing keys, AMQP properties, the envelope) and compared field by
//! field. What may differ is listed in [`DIFFER`], each with its reason;
//! nothing else may.

use crate::api::Server;
use crate::common::ok;
use crate::ironic_wire::Ironic;
use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;

const RABBIT: &str = "rabbit://guest:guest@127.0.0.1:5672/";
const HOST: &str = "cmp-host";
const MAINTENANCE_SET: &str = "baremetal.node.maintenance_set";

/// Message fields that must differ, and why: ids made per message or per
/// request, and the times of the calls (the two servers are called one
/// after the other).
const DIFFER: [&str; 5] =
    ["message_id", "_unique_id", "timestamp", "_context_request_id", "_context_global_request_id"];

/// `notifications.conf` for an exchange and topic of one server's own.
fn notifications_conf(dir: &Path, name: &str, exchange: &str, topic: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    let text = format!(
        "[DEFAULT]\nhost = {HOST}\nnotification_level = info\nversioned_notifications_topics = {topic}\n\
         control_exchange = {exchange}\n\n[oslo_messaging_notifications]\ndriver = messagingv2\n\
         transport_url = {RABBIT}\n"
    );
    std::fs::write(&path, text).unwrap();
    path
}

/// `capture_notifications.py ARGS…` with Ironic's Python.
fn capture(args: &[&str]) {
    let python = crate::notifications::ironic_python();
    let out = Command::new(python)
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/ironic/capture_notifications.py"))
        .args(args)
        .output()
        .expect("run capture_notifications.py");
    assert!(out.status.success(), "capture: {}", String::from_utf8_lossy(&out.stderr));
}

/// The four legacy calls, in order: set, set again (already in
/// maintenance), unset, unset again (not in maintenance).
async fn calls(http: &reqwest::Client, base: &str) {
    let path = format!("{base}/v1/nodes/cmp-node/maintenance");
    for (put, reason) in [(true, Some("disk")), (true, Some("disk, again")), (false, None), (false, None)] {
        let request = if put { http.put(&path).json(&json!({"reason": reason})) } else { http.delete(&path) };
        let response = request.header("X-OpenStack-Ironic-API-Version", "1.115").send().await.unwrap();
        assert_eq!(response.status(), 202, "{base}: {}", response.text().await.unwrap());
    }
}

/// What was captured, the inner message parsed.
fn captured(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut all: Vec<Value> = serde_json::from_str(&text).unwrap();
    for m in &mut all {
        let inner: Value = serde_json::from_str(m["body"]["oslo.message"].as_str().unwrap()).unwrap();
        m["message"] = inner;
    }
    all
}

/// Every difference between our message and Ironic's, but for [`DIFFER`]
/// and the node's `updated_at` (a time of the calls).
fn differences(i: usize, ours: &Value, theirs: &Value, topics: (&str, &str)) -> Vec<String> {
    let mut out = Vec::new();
    let key = |m: &Value, topic: &str| m["routing_key"].as_str().unwrap().replacen(topic, "TOPIC", 1);
    if key(ours, topics.0) != key(theirs, topics.1) {
        out.push(format!("#{i} routing key {} vs {}", ours["routing_key"], theirs["routing_key"]));
    }
    for p in ["content_type", "content_encoding"] {
        if ours[p] != theirs[p] {
            out.push(format!("#{i} {p} {} vs {}", ours[p], theirs[p]));
        }
    }
    for p in ["delivery_mode", "priority"] {
        if ours["properties"][p] != theirs["properties"][p] {
            out.push(format!("#{i} property {p} {} vs {}", ours["properties"][p], theirs["properties"][p]));
        }
    }
    if ours["body"]["oslo.version"] != theirs["body"]["oslo.version"] {
        out.push(format!("#{i} oslo.version"));
    }
    let (o, t) = (ours["message"].as_object().unwrap(), theirs["message"].as_object().unwrap());
    let keys = |m: &serde_json::Map<String, Value>| {
        let mut k: Vec<String> = m.keys().cloned().collect();
        k.sort();
        k
    };
    if keys(o) != keys(t) {
        out.push(format!("#{i} message keys {:?} vs {:?}", keys(o), keys(t)));
    }
    for (name, value) in t {
        if DIFFER.contains(&name.as_str()) || name == "payload" {
            continue;
        }
        if o.get(name) != Some(value) {
            out.push(format!("#{i} {name}: {:?} vs Ironic's {value}", o.get(name)));
        }
    }
    let (op, tp) = (&o["payload"], &t["payload"]);
    for field in ["ironic_object.name", "ironic_object.namespace", "ironic_object.version"] {
        if op[field] != tp[field] {
            out.push(format!("#{i} payload {field} {} vs {}", op[field], tp[field]));
        }
    }
    let (od, td) = (op["ironic_object.data"].as_object().unwrap(), tp["ironic_object.data"].as_object().unwrap());
    let (ok, tk): (Vec<&String>, Vec<&String>) = (od.keys().collect(), td.keys().collect());
    if ok != tk {
        out.push(format!("#{i} payload fields (in order) {ok:?} vs {tk:?}"));
    }
    for (name, value) in td {
        if name == "updated_at" {
            // A time of the call; both a time, or both none.
            if od.get(name).map(Value::is_string) != Some(value.is_string()) {
                out.push(format!("#{i} payload updated_at {:?} vs {value}", od.get(name)));
            }
            continue;
        }
        if od.get(name) != Some(value) {
            out.push(format!("#{i} payload {name}: {:?} vs Ironic's {value}", od.get(name)));
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_notifies_the_legacy_calls_as_ironic_39_does() {
    let dir = std::env::temp_dir().join(format!("nodemaint-ironic-notify-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).unwrap();
    let id = uuid::Uuid::new_v4().simple().to_string();
    let (theirs_x, theirs_t) = (format!("irx-{}", &id[..8]), format!("irt-{}", &id[..8]));
    let (ours_x, ours_t) = (format!("nmx-{}", &id[..8]), format!("nmt-{}", &id[..8]));
    let theirs_conf = notifications_conf(&dir, "ironic-notify.conf", &theirs_x, &theirs_t);
    let ours_conf = notifications_conf(&dir, "nodemaint.conf", &ours_x, &ours_t);
    capture(&["declare", &theirs_x, &theirs_t]);
    capture(&["declare", &ours_x, &ours_t]);

    let ironic = Ironic::start_with(dir.join("ironic"), Some(&theirs_conf));
    let http = reqwest::Client::new();
    let created = http
        .post(format!("{}/v1/nodes", ironic.url))
        .header("X-OpenStack-Ironic-API-Version", "1.115")
        .json(
            &json!({"driver": "fake-hardware", "name": "cmp-node", "extra": {"rack": "c"}, "properties": {"cpus": 8}}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), 201, "{}", created.text().await.unwrap());
    // Traits come from their own table (`node_traits`); the payload lists them.
    let traits = http
        .put(format!("{}/v1/nodes/cmp-node/traits", ironic.url))
        .header("X-OpenStack-Ironic-API-Version", "1.115")
        .json(&json!({"traits": ["CUSTOM_RACK_C", "CUSTOM_GPU"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(traits.status(), 204, "{}", traits.text().await.unwrap());
    // Both servers start from the same node: a copy taken before the calls.
    let copy = dir.join("nodemaint.sqlite");
    let source =
        nodemaint::db::connect(&format!("sqlite://{}", dir.join("ironic/ironic.sqlite").display())).await.unwrap();
    use sea_orm::ConnectionTrait;
    source.execute_unprepared(&format!("VACUUM INTO '{}'", copy.display())).await.unwrap();
    source.close().await.unwrap();
    calls(&http, &ironic.url).await;
    let theirs_out = dir.join("theirs.json");
    let out = theirs_out.display().to_string();
    capture(&["read", &theirs_x, &theirs_t, &out, "8", MAINTENANCE_SET, "60"]);

    let url = format!("sqlite://{}", copy.display());
    ok(&crate::common::nodemaint_cmd(&url, &["-q", "db", "upgrade"]).output().unwrap());
    let conf = ours_conf.display().to_string();
    let server = Server::start_with_args(&[
        "--config-file",
        &conf,
        "--database-url",
        &url,
        "serve",
        "--bind",
        "127.0.0.1:0",
        "--auth-strategy",
        "noauth",
        "--tick-interval",
        "0",
    ]);
    calls(&http, &server.base).await;
    let ours_out = dir.join("ours.json");
    let out = ours_out.display().to_string();
    capture(&["read", &ours_x, &ours_t, &out, "8", MAINTENANCE_SET, "60"]);

    let (theirs, ours) = (captured(&theirs_out), captured(&ours_out));
    let types = |all: &[Value]| -> Vec<String> {
        all.iter().map(|m| m["message"]["event_type"].as_str().unwrap().to_owned()).collect()
    };
    assert_eq!(types(&theirs).len(), 8, "Ironic sent {:?}", types(&theirs));
    assert_eq!(types(&ours), types(&theirs));
    let traits = &theirs[0]["message"]["payload"]["ironic_object.data"]["traits"];
    assert_eq!(traits, &json!(["CUSTOM_GPU", "CUSTOM_RACK_C"]), "Ironic lists the traits");
    let mut found = Vec::new();
    for (i, (o, t)) in ours.iter().zip(&theirs).enumerate() {
        found.extend(differences(i, o, t, (&ours_t, &theirs_t)));
    }
    drop(server);
    drop(ironic);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(found.is_empty(), "{} difference(s) from Ironic 39:\n{}", found.len(), found.join("\n"));
}
