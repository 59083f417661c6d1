//! Input a database cannot store is a clear 400 (exit 10) with nothing
//! written, on every backend, through the CLI and the REST API: times past
//! year 9999 or before 1970, NUL characters, and (on MySQL with Ironic's
//! usual `charset=utf8`) 4-byte characters. Also the CLI's small promises:
//! `-q` prints nothing on success, relative times that start with `-` are
//! times, and a JSON error's `status` is null where no HTTP status applies.

use crate::api::{OPERATOR, Server, WINDOWS};
use crate::backend_tests;
use crate::common::{TestDb, count, nodemaint_cmd, ok, stderr, stdout};
use reqwest::{Method, StatusCode};
use serde_json::json;

backend_tests!(times_nul_and_unstorable_text_are_400_with_nothing_written, quiet_means_nothing_on_success);

async fn times_nul_and_unstorable_text_are_400_with_nothing_written(t: TestDb) {
    ok(&t.cli(&["-q", "db", "upgrade"]));
    ok(&t.cli(&["-q", "node", "create", "--name", "n1"]));
    let db = t.connect().await;
    let nothing_written = |what: &str| {
        let what = what.to_owned();
        let db = db.clone();
        async move {
            assert_eq!(count(&db, "SELECT COUNT(*) FROM node_maintenance").await, 0, "{what}: an entry was written");
            assert_eq!(count(&db, "SELECT COUNT(*) FROM node_maintenance_schedule").await, 0, "{what}");
        }
    };

    // The CLI: exit 10 and one line naming the problem. (A NUL cannot be
    // in a process's arguments: it comes from a reason file.)
    let nul = crate::common::ConfigFile::new("x\u{0}y\n");
    let nul = nul.path();
    for (args, needle) in [
        (
            &[
                "maintenance",
                "add",
                "n1",
                "--type",
                "operator_hold",
                "--reason",
                "x",
                "--end",
                "9999-12-31T23:59:59-05:00",
            ][..],
            "outside the times",
        ),
        (
            &[
                "maintenance",
                "add",
                "n1",
                "--type",
                "operator_hold",
                "--reason",
                "x",
                "--end",
                "+10000-01-01T00:00:00Z",
            ][..],
            "not a time",
        ),
        (
            &[
                "maintenance",
                "add",
                "n1",
                "--type",
                "operator_hold",
                "--reason",
                "x",
                "--start",
                "1969-12-31T23:59:59Z",
                "--end",
                "+1h",
            ][..],
            "outside the times",
        ),
        (&["maintenance", "add", "n1", "--type", "operator_hold", "--reason-file", &nul][..], "NUL"),
        (&["maintenance", "set", "n1", "--reason-file", &nul][..], "NUL"),
    ] {
        let out = t.cli(args);
        assert_eq!(out.status.code(), Some(10), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(needle), "{args:?}: {}", stderr(&out));
        assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
    }
    nothing_written("the CLI").await;

    // A relative time that starts with `-` is a time, not a flag: here an
    // end in the past, refused as one (exit 10), not as bad arguments (127).
    let out = t.cli(&["maintenance", "add", "n1", "--type", "operator_hold", "--reason", "x", "--end", "-1h"]);
    assert_eq!(out.status.code(), Some(10), "{}", stderr(&out));

    // The REST API.
    let server = Server::start(&t.url, "trusted-headers");
    for (method, path, body) in [
        (
            Method::POST,
            "/v1/nodes/n1/maintenance",
            json!({"type": "operator_hold", "reason": "x", "ends_at": "9999-12-31T23:59:59-05:00"}),
        ),
        (
            Method::POST,
            "/v1/nodes/n1/maintenance",
            json!({"type": "operator_hold", "reason": "x", "ends_at": "+10000-01-01T00:00:00Z"}),
        ),
        (Method::POST, "/v1/nodes/n1/maintenance", json!({"type": "operator_hold", "reason": "x\u{0}y"})),
        (Method::PUT, "/v1/nodes/n1/maintenance", json!({"reason": "x\u{0}y"})),
    ] {
        let reply = server.call(method.clone(), path, Some(WINDOWS), Some(OPERATOR), Some(body.clone())).await;
        assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{method} {body}: {}", reply.body);
        let fault = reply.fault();
        assert!(["NUL", "outside the times", "not a time"].iter().any(|n| fault.contains(n)), "{fault}");
    }
    let reply = server
        .call(Method::GET, "/v1/maintenance?since=%2B10000-01-01T00:00:00Z", Some(WINDOWS), Some(OPERATOR), None)
        .await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{}", reply.body);
    // A node name with a NUL is no name: Ironic 39's 400 (ironic_wire.rs).
    let reply = server.call(Method::GET, "/v1/nodes/x%00y", Some(WINDOWS), Some(OPERATOR), None).await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{}", reply.body);
    assert_eq!(reply.fault(), "Expected UUID or name for node: x\u{0}y");
    nothing_written("the API").await;
    let node = count(&db, "SELECT COUNT(*) FROM nodes WHERE maintenance = TRUE").await;
    assert_eq!(node, 0, "the boolean is untouched");
}

/// MySQL with Ironic's `charset=utf8` (utf8mb3): an emoji cannot be sent,
/// and the refusal says so, exit 10 / 400, instead of error 1366.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_emoji_under_mysql_utf8mb3_is_a_clear_400() {
    let Some(t) = TestDb::create(crate::common::Backend::Mysql).await else { return };
    let url = format!("{}?charset=utf8", t.url);
    ok(&nodemaint_cmd(&url, &["-q", "db", "upgrade"]).output().unwrap());
    ok(&nodemaint_cmd(&url, &["-q", "node", "create", "--name", "n1"]).output().unwrap());
    let out = nodemaint_cmd(&url, &["maintenance", "add", "n1", "--type", "operator_hold", "--reason", "disk 🔥"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(10), "{}", stderr(&out));
    assert!(stderr(&out).contains("charset=utf8mb4"), "{}", stderr(&out));
    assert!(!stderr(&out).contains("1366"), "no driver text: {}", stderr(&out));
    let server = Server::start(&url, "trusted-headers");
    let reply = server
        .call(Method::PUT, "/v1/nodes/n1/maintenance", Some("1.65"), Some(OPERATOR), Some(json!({"reason": "🔥"})))
        .await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{}", reply.body);
    let db = t.connect().await;
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_maintenance").await, 0);
    // With utf8mb4 the same text is stored.
    let out = t.cli(&["-q", "maintenance", "add", "n1", "--type", "operator_hold", "--reason", "disk 🔥"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

async fn quiet_means_nothing_on_success(t: TestDb) {
    ok(&t.cli(&["-q", "db", "upgrade"]));
    for args in [
        &["-q", "node", "create", "--name", "n1"][..],
        &["-q", "node", "set", "n1", "--owner", "p1"][..],
        &["-q", "maintenance", "set", "n1", "--reason", "r"][..],
        &["-q", "maintenance", "add", "n1", "--type", "operator_hold", "--reason", "x", "--end", "+2h"][..],
        &["-q", "maintenance", "unset", "n1"][..],
    ] {
        let out = t.cli(args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        assert_eq!(stdout(&out), "", "{args:?} printed on success");
    }
    // `add`'s help names its exit codes; read-only commands do not claim to record the user.
    let help = stdout(&t.cli(&["maintenance", "add", "--help"]));
    assert!(
        help.contains("Exit codes: 0 added, 7") && help.contains("9 conflict") && help.contains("10 bad input"),
        "{help}"
    );
    assert!(
        !stdout(&t.cli(&["maintenance", "list", "--help"])).contains("recorded as asserted_by and in history. Default")
    );
    // Data asked for is still shown, and JSON always.
    assert!(stdout(&t.cli(&["-q", "node", "show", "n1"])).contains("n1"));
    assert!(stdout(&t.cli(&["-q", "--format", "json", "node", "create", "--name", "n2"])).contains("\"n2\""));
}

#[test]
fn a_json_error_that_no_http_status_fits_says_null() {
    let out = nodemaint_cmd("postgres://u@h:notaport/db", &["--format", "json", "db", "status"]).output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    let body: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(body["error"]["status"], serde_json::Value::Null, "{body}");
    assert_eq!(body["error"]["exit_code"], 3);
}
