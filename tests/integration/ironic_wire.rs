//! The wire differential against the real Ironic 39: Ironic's API
//! (`tests/ironic/ironic.sh`, all-in-one, noauth, fake hardware) and
//! `nodemaint serve` on copies of one SQLite database that Ironic's own
//! migrations made and Ironic's own API filled, sent the same legacy
//! requests a script or the `baremetal` client sends (every microversion
//! from 1.1 to 1.115, names and uuids, paging, filters, version headers,
//! errors, the maintenance PUT and DELETE). Status, the headers that matter
//! (the version headers, the content type) and the body must agree.
//!
//! What may differ is listed in [`normalize`] and in the checks, each with
//! its reason; nothing else may.

use crate::api::Server;
use crate::common::ok;
use reqwest::Method;
use serde_json::{Map, Value, json};
use std::path::PathBuf;
use std::process::Command;

/// A running Ironic 39 API, stopped on drop.
pub(crate) struct Ironic {
    dir: PathBuf,
    pub(crate) url: String,
}

impl Ironic {
    fn start(dir: PathBuf) -> Ironic {
        Ironic::start_with(dir, None)
    }

    /// With `append`'s settings after the deployer's ironic.conf.
    pub(crate) fn start_with(dir: PathBuf, append: Option<&std::path::Path>) -> Ironic {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let out = Command::new("bash")
            .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/ironic/ironic.sh"))
            .arg("start")
            .env("NODEMAINT_IRONIC_DIR", &dir)
            .env("NODEMAINT_IRONIC_PORT", port.to_string())
            .env("NODEMAINT_IRONIC_CONF_APPEND", append.map(|p| p.as_os_str()).unwrap_or_default())
            .output()
            .expect("run tests/ironic/ironic.sh");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "Ironic 39 did not start: {stdout}{}", String::from_utf8_lossy(&out.stderr));
        let url = stdout.lines().last().expect("the API's URL").trim().to_owned();
        Ironic { dir, url }
    }
}

impl Drop for Ironic {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/ironic/ironic.sh"))
            .arg("stop")
            .env("NODEMAINT_IRONIC_DIR", &self.dir)
            .output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// One answer, reduced to what is compared.
#[derive(Debug, PartialEq)]
struct Answer {
    status: u16,
    /// The version headers and the content type, by name.
    headers: Vec<(String, String)>,
    body: Value,
}

const COMPARED_HEADERS: [&str; 4] = [
    "x-openstack-ironic-api-version",
    "x-openstack-ironic-api-minimum-version",
    "x-openstack-ironic-api-maximum-version",
    "content-type",
];

async fn send(http: &reqwest::Client, base: &str, request: &Request) -> Answer {
    let mut builder = http.request(request.method.clone(), format!("{base}{}", request.path));
    for (name, value) in &request.headers {
        builder = builder.header(*name, *value);
    }
    if let Some(body) = &request.body {
        builder = builder.header("Content-Type", "application/json").body(body.to_string());
    }
    let response = builder.send().await.unwrap_or_else(|e| panic!("{base}{}: {e}", request.path));
    let status = response.status().as_u16();
    let headers = COMPARED_HEADERS
        .iter()
        .filter_map(|name| response.headers().get(*name).map(|v| (name.to_string(), v.to_str().unwrap().to_owned())))
        .collect();
    let text = response.text().await.unwrap();
    let body = if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap_or_else(|_| Value::String(text.clone()))
    };
    Answer { status, headers, body }
}

/// The deliberate differences, applied to nodemaint's answer before it is
/// compared, each with its reason:
/// - nodemaint serves two microversions more (1.116 typed maintenance,
///   1.117 windows), so its maximum is 1.117 where Ironic 39's is 1.115;
/// - links name the address each server was reached at;
/// - an error's `error_message` is compared as the JSON it holds.
fn normalize(mut answer: Answer, ours: &str, theirs: &str) -> Answer {
    for (_, value) in &mut answer.headers {
        if value == "1.117" {
            *value = "1.115".into();
        }
    }
    let text = answer.body.to_string().replace(ours, theirs).replace("1.117", "1.115");
    answer.body = serde_json::from_str(&text).unwrap();
    answer
}

/// The error text inside Ironic's `error_message`, parsed.
fn error_message(body: &Value) -> Option<Value> {
    body.get("error_message").and_then(Value::as_str).and_then(|m| serde_json::from_str(m).ok())
}

/// Compares nodemaint's body with Ironic's. A node object (or a list of
/// them) from nodemaint carries a subset of Ironic's fields (nodemaint
/// serves the fields maintenance concerns: a deliberate difference); each
/// field it has must be in Ironic's answer at that version, with the same
/// value, in the same order. Anything else must be equal.
fn same_body(ours: &Value, theirs: &Value) -> Result<(), String> {
    if let (Some(a), Some(b)) = (error_message(ours), error_message(theirs)) {
        return if a == b { Ok(()) } else { Err(format!("error {a} vs Ironic's {b}")) };
    }
    match (ours, theirs) {
        // A node: the fields nodemaint serves (see above). The v1 document:
        // nodemaint serves nodes alone of Ironic's resources, so it lists
        // only them.
        (Value::Object(a), Value::Object(b))
            if (a.contains_key("uuid") && a.contains_key("links")) || a.contains_key("media_types") =>
        {
            subset_in_order(a, b)
        }
        (Value::Object(a), Value::Object(b)) => {
            let (ka, kb): (Vec<&String>, Vec<&String>) = (a.keys().collect(), b.keys().collect());
            if ka != kb {
                return Err(format!("keys {ka:?} vs Ironic's {kb:?}"));
            }
            a.iter().try_for_each(|(k, v)| same_body(v, &b[k]).map_err(|e| format!("{k}: {e}")))
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            a.iter().zip(b).enumerate().try_for_each(|(i, (x, y))| same_body(x, y).map_err(|e| format!("[{i}] {e}")))
        }
        _ if ours == theirs => Ok(()),
        _ => Err(format!("{ours} vs Ironic's {theirs}")),
    }
}

fn subset_in_order(ours: &Map<String, Value>, theirs: &Map<String, Value>) -> Result<(), String> {
    let mut last = None;
    for (key, value) in ours {
        let Some(at) = theirs.keys().position(|k| k == key) else {
            return Err(format!("field {key} is not in Ironic's node ({:?})", theirs.keys().collect::<Vec<_>>()));
        };
        if last.is_some_and(|l| at < l) {
            return Err(format!("field {key} out of Ironic's order"));
        }
        last = Some(at);
        // After a write each server keeps the time it wrote (and nodemaint
        // whole seconds, as it stores every time).
        if key == "updated_at" && value.is_string() && theirs[key].is_string() {
            continue;
        }
        if &theirs[key] != value {
            return Err(format!("{key}: {value} vs Ironic's {}", theirs[key]));
        }
    }
    Ok(())
}

#[derive(Debug, Clone)]
struct Request {
    method: Method,
    path: String,
    headers: Vec<(&'static str, &'static str)>,
    body: Option<Value>,
}

fn get(path: impl Into<String>, version: Option<&'static str>) -> Request {
    Request {
        method: Method::GET,
        path: path.into(),
        headers: version.map(|v| vec![("X-OpenStack-Ironic-API-Version", v)]).unwrap_or_default(),
        body: None,
    }
}

fn versions() -> Vec<&'static str> {
    (1..=115).map(|minor| &*Box::leak(format!("1.{minor}").into_boxed_str())).collect()
}

/// Nodes as a deployment has them, made through Ironic's own API.
async fn fill(http: &reqwest::Client, ironic: &str) -> Vec<(String, String)> {
    let mut nodes = Vec::new();
    for (name, owner, lessee) in [
        ("rack1-n01", Some("p-owner"), Some("p-lessee")),
        ("rack1-n02", None, None),
        ("rack1-n03", Some("p-owner"), None),
        ("Rack1_N04", None, None),
        ("rack1-n05", None, Some("p-lessee")),
    ] {
        let response = http
            .post(format!("{ironic}/v1/nodes"))
            .header("X-OpenStack-Ironic-API-Version", "1.115")
            .json(&json!({"driver": "fake-hardware", "name": name}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 201, "{}", response.text().await.unwrap());
        let node: Value = response.json().await.unwrap();
        // Ironic's noauth caller is a project-scoped admin, which may not
        // create a node for another project: the owner comes by PATCH.
        let patch: Vec<Value> = [("owner", owner), ("lessee", lessee)]
            .into_iter()
            .filter_map(|(field, value)| value.map(|v| json!({"op": "add", "path": format!("/{field}"), "value": v})))
            .collect();
        if !patch.is_empty() {
            let response = http
                .patch(format!("{ironic}/v1/nodes/{}", node["uuid"].as_str().unwrap()))
                .header("X-OpenStack-Ironic-API-Version", "1.115")
                .json(&patch)
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), 200, "{}", response.text().await.unwrap());
        }
        nodes.push((node["uuid"].as_str().unwrap().to_owned(), name.to_owned()));
    }
    let response = http
        .put(format!("{ironic}/v1/nodes/rack1-n03/maintenance"))
        .header("X-OpenStack-Ironic-API-Version", "1.115")
        .json(&json!({"reason": "disk 3: \"bad\" sectors; ticket #42"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 202);
    nodes
}

fn requests(nodes: &[(String, String)]) -> Vec<Request> {
    let (uuid, name) = (&nodes[0].0, &nodes[0].1);
    let mut all = Vec::new();
    for v in versions() {
        all.push(get(format!("/v1/nodes/{uuid}"), Some(v)));
        all.push(get(format!("/v1/nodes/{name}"), Some(v)));
        all.push(get(format!("/v1/nodes/{}", nodes[3].1), Some(v)));
        all.push(get("/v1/nodes?limit=2", Some(v)));
        all.push(get("/v1/nodes/detail?limit=2", Some(v)));
        all.push(get(format!("/v1/nodes/{}/maintenance", nodes[2].0), Some(v)));
    }
    for v in [None, Some("1.1"), Some("1.31"), Some("1.65"), Some("1.115"), Some("latest")] {
        for path in [
            "/v1/nodes",
            "/v1/nodes/",
            "/v1/nodes?maintenance=true",
            "/v1/nodes?maintenance=false&limit=1",
            "/v1/nodes?maintenance=true&fields=uuid,maintenance_reason",
            "/v1/nodes?limit=0",
            "/v1/nodes?limit=-1",
            "/v1/nodes?limit=abc",
            "/v1/nodes?limit=3&detail=true",
            "/v1/nodes?marker=nope",
            "/v1/nodes?marker=5b4ab3f4-58c0-4b1c-a8a0-0a1c2d3e4f50",
            "/v1/nodes?sort_key=bogus",
            "/v1/nodes?sort_key=properties",
            "/v1/nodes?sort_dir=up",
            "/v1/nodes?sort_dir=desc&limit=2",
            "/v1/nodes/detail?fields=uuid",
            "/v1/nodes/nope",
            "/v1/nodes/5b4ab3f4-58c0-4b1c-a8a0-0a1c2d3e4f50",
            "/v1/nodes/x%00y",
            "/v1/nodes/a%20b",
            "/v1/nodes/%FF%FE",
            "/v1/nodes/rack1-n03?fields=uuid,maintenance,maintenance_reason",
            "/v1/nodes/rack1-n03?fields=bogus",
            "/v1/bogus",
            "/",
            "/v1",
            "/v1/",
        ] {
            all.push(get(path, v));
        }
        all.push(get(format!("/v1/nodes?limit=2&marker={}", nodes[1].0), v));
    }
    for headers in [
        vec![("X-OpenStack-Ironic-API-Version", "")],
        vec![("X-OpenStack-Ironic-API-Version", "1.0")],
        vec![("X-OpenStack-Ironic-API-Version", "2.0")],
        vec![("X-OpenStack-Ironic-API-Version", "1.-2")],
        vec![("X-OpenStack-Ironic-API-Version", "1. 5")],
        vec![("X-OpenStack-Ironic-API-Version", "abc")],
        vec![("X-OpenStack-Ironic-API-Version", "1.2, 1.31")],
        vec![("OpenStack-API-Version", "baremetal 1.50")],
        vec![("OpenStack-API-Version", "baremetal xx")],
        vec![("OpenStack-API-Version", "baremetal 2.0")],
        vec![("OpenStack-API-Version", "compute 2.1"), ("X-OpenStack-Ironic-API-Version", "1.65")],
        vec![("OpenStack-API-Version", "compute 2.1, baremetal 1.40"), ("X-OpenStack-Ironic-API-Version", "1.65")],
    ] {
        for path in ["/v1/nodes/rack1-n01", "/v1/nodes", "/"] {
            all.push(Request { method: Method::GET, path: path.into(), headers: headers.clone(), body: None });
        }
    }
    let write = |method: Method, path: &str, version: &'static str, body: Option<Value>| Request {
        method,
        path: path.into(),
        headers: vec![("X-OpenStack-Ironic-API-Version", version)],
        body,
    };
    // Writes, each followed by a read of what it did.
    for (version, node) in
        [("1.1", nodes[1].0.as_str()), ("1.4", "rack1-n02"), ("1.65", "rack1-n02"), ("1.115", "Rack1_N04")]
    {
        all.push(write(
            Method::PUT,
            &format!("/v1/nodes/{node}/maintenance"),
            version,
            Some(json!({"reason": "rack C power"})),
        ));
        all.push(get(format!("/v1/nodes/{node}"), Some(version)));
        all.push(write(Method::PUT, &format!("/v1/nodes/{node}/maintenance?reason=from%20the%20query"), version, None));
        all.push(get(format!("/v1/nodes/{node}"), Some(version)));
        all.push(write(
            Method::PUT,
            &format!("/v1/nodes/{node}/maintenance"),
            version,
            Some(json!({"reason": "x", "bogus": 1})),
        ));
        all.push(write(Method::DELETE, &format!("/v1/nodes/{node}/maintenance"), version, None));
        all.push(get(format!("/v1/nodes/{node}"), Some(version)));
        all.push(write(Method::POST, &format!("/v1/nodes/{node}/maintenance"), version, Some(json!({}))));
        all.push(write(Method::PATCH, "/v1/nodes", version, Some(json!({}))));
    }
    all
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nodemaint_answers_legacy_requests_as_ironic_39_does() {
    let dir = std::env::temp_dir().join(format!("nodemaint-ironic-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).unwrap();
    let ironic = Ironic::start(dir.clone());
    let http = reqwest::Client::new();
    let nodes = fill(&http, &ironic.url).await;

    // A copy of Ironic's database, taken consistently while it runs.
    let copy = dir.join("nodemaint.sqlite");
    let source = nodemaint::db::connect(&format!("sqlite://{}", dir.join("ironic.sqlite").display())).await.unwrap();
    use sea_orm::ConnectionTrait;
    source.execute_unprepared(&format!("VACUUM INTO '{}'", copy.display())).await.unwrap();
    source.close().await.unwrap();
    let url = format!("sqlite://{}", copy.display());
    ok(&crate::common::nodemaint_cmd(&url, &["-q", "db", "upgrade"]).output().unwrap());
    let server = Server::start_with(&url, "noauth", &["--tick-interval", "0"]);

    let mut differences = Vec::new();
    let requests = requests(&nodes);
    for request in &requests {
        let theirs = send(&http, &ironic.url, request).await;
        let ours = normalize(send(&http, &server.base, request).await, &server.base, &ironic.url);
        let what = format!("{} {} {:?}", request.method, request.path, request.headers);
        if ours.status != theirs.status {
            differences.push(format!(
                "{what}: status {} vs Ironic's {} ({} vs {})",
                ours.status, theirs.status, ours.body, theirs.body
            ));
            continue;
        }
        if ours.headers != theirs.headers {
            differences.push(format!("{what}: headers {:?} vs Ironic's {:?}", ours.headers, theirs.headers));
        }
        if let Err(e) = same_body(&ours.body, &theirs.body) {
            differences.push(format!("{what}: {e}"));
        }
    }
    // The client package against both: the typed verbs say in one line
    // that Ironic 39 lacks the microversion they need; python-ironicclient's
    // own maintenance set/unset keep working against both servers.
    let bin = crate::common::client_venv().join("bin/baremetal");
    let baremetal = |base: &str, args: &[&str]| {
        Command::new(&bin).args(["--os-auth-type", "none", "--os-endpoint", base]).args(args).output().unwrap()
    };
    let refused = baremetal(
        &ironic.url,
        &["node", "maintenance", "add", "rack1-n01", "--type", "operator_hold", "--reason", "x"],
    );
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_ne!(refused.status.code(), Some(0));
    assert!(
        stderr.trim()
            == "this needs bare metal API microversion 1.116 (typed maintenance); the server offers at most 1.115",
        "one line naming the version: {stderr}"
    );
    for base in [&ironic.url, &server.base] {
        for args in [
            &["node", "maintenance", "set", "rack1-n05", "--reason", "both"][..],
            &["node", "maintenance", "unset", "rack1-n05"][..],
        ] {
            let out = baremetal(base, args);
            assert!(out.status.success(), "{base} {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        }
    }
    let added = baremetal(
        &server.base,
        &["node", "maintenance", "add", "rack1-n05", "--type", "operator_hold", "--reason", "x"],
    );
    assert!(added.status.success(), "nodemaint serve takes it: {}", String::from_utf8_lossy(&added.stderr));

    assert!(
        differences.is_empty(),
        "{} of {} requests answered differently:\n{}",
        differences.len(),
        requests.len(),
        differences.join("\n")
    );
}
