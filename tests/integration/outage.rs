//! When the database goes away: a PostgreSQL cluster of the test's own is
//! stopped under a running `serve` and the cron commands, then started again.
//! Requests are answered 503 (with `Retry-After` and Ironic's body, never
//! driver text) within the pool timeout instead of hanging, `/healthcheck`
//! says so, an abandoned request is still in the access log, the cron
//! commands exit with their documented codes having written nothing, and
//! once the database is back everything answers again without a restart.

use crate::api::{OPERATOR, Server};
use crate::common::{nodemaint_cmd, ok, stderr};
use crate::own_postgres::OwnPostgres;
use reqwest::{Method, StatusCode};
use sea_orm::{ConnectionTrait, TransactionTrait};
use serde_json::json;
use std::time::{Duration, Instant};

async fn health(server: &Server) -> (StatusCode, String) {
    let response = reqwest::get(format!("{}/healthcheck", server.base)).await.expect("healthcheck");
    let status = response.status();
    (status, response.text().await.unwrap())
}

/// Polls until `/healthcheck` answers `want`, for at most `within`.
async fn health_becomes(server: &Server, want: StatusCode, within: Duration) -> Duration {
    let started = Instant::now();
    loop {
        let (status, body) = health(server).await;
        if status == want {
            return started.elapsed();
        }
        assert!(started.elapsed() < within, "/healthcheck still {status} ({body}) after {within:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_answers_503_fast_while_postgres_is_down_and_recovers_without_a_restart() {
    if !crate::common::runs_as_root("outage::serve_answers_503_fast") {
        return;
    }
    let pg = OwnPostgres::start(false);
    let url = pg.url("127.0.0.1", "");
    let url = url.trim_end_matches('?');
    ok(&nodemaint_cmd(url, &["-q", "db", "upgrade"]).output().unwrap());
    ok(&nodemaint_cmd(url, &["-q", "node", "create", "--name", "n1"]).output().unwrap());
    let server = Server::start_with(url, "noauth", &["--tick-interval", "0"]);
    assert_eq!(health(&server).await, (StatusCode::OK, "OK".to_owned()));
    let put = || {
        server.call(Method::PUT, "/v1/nodes/n1/maintenance", Some("1.65"), Some(OPERATOR), Some(json!({"reason": "r"})))
    };
    assert_eq!(put().await.status, StatusCode::ACCEPTED);

    pg.stop();
    // Every request, the first ones included (their pooled connections were
    // terminated by the server), is a 503 within the pool timeout.
    for (method, path) in [
        (Method::GET, "/v1/nodes/n1"),
        (Method::PUT, "/v1/nodes/n1/maintenance"),
        (Method::GET, "/v1/nodes?maintenance=true"),
    ] {
        let started = Instant::now();
        let body = (method == Method::PUT).then(|| json!({"reason": "while down"}));
        let reply = server.call(method.clone(), path, Some("1.65"), Some(OPERATOR), body).await;
        let took = started.elapsed();
        assert_eq!(reply.status, StatusCode::SERVICE_UNAVAILABLE, "{method} {path}: {}", reply.body);
        assert!(took < Duration::from_secs(5), "{method} {path} took {took:?}");
        assert_eq!(reply.header("Retry-After"), Some("1"));
        let fault = reply.fault();
        assert!(
            fault.starts_with("The database is unavailable") || fault.starts_with("Lost the connection"),
            "{fault}"
        );
        assert!(!reply.body.contains("terminating") && !reply.body.contains("127.0.0.1"), "{}", reply.body);
    }
    let down = health_becomes(&server, StatusCode::SERVICE_UNAVAILABLE, Duration::from_secs(5)).await;
    assert!(down < Duration::from_secs(5));
    assert!(health(&server).await.1.starts_with("database unavailable"));

    // The cron commands exit with their documented codes, at once, writing nothing.
    for (args, code) in [
        (&["reconcile"][..], 2),
        (&["windows", "tick"][..], 2),
        (&["upgrade", "check"][..], 255),
        (&["maintenance", "set", "n1", "--reason", "x"][..], 4),
    ] {
        let started = Instant::now();
        let out = nodemaint_cmd(url, args).output().unwrap();
        assert_eq!(out.status.code(), Some(code), "{args:?}: {}", stderr(&out));
        assert!(started.elapsed() < Duration::from_secs(10), "{args:?} took {:?}", started.elapsed());
        assert!(stderr(&out).contains("cannot connect"), "{args:?}: {}", stderr(&out));
    }

    pg.start_again();
    let up = health_becomes(&server, StatusCode::OK, Duration::from_secs(10)).await;
    assert!(up < Duration::from_secs(10));
    let reply = server.call(Method::GET, "/v1/nodes/n1", Some("1.65"), Some(OPERATOR), None).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    assert_eq!(reply.json()["maintenance_reason"], "r", "what was written before the outage is there, nothing else");
    assert_eq!(put().await.status, StatusCode::ACCEPTED);

    // A client that gives up before the answer (here: the node is locked by
    // another transaction) is still in the access log.
    let db = nodemaint::db::connect(&nodemaint::db::normalize_url(url).unwrap()).await.unwrap();
    let holder = db.begin().await.unwrap();
    holder.execute_unprepared("SELECT id FROM nodes WHERE name = 'n1' FOR UPDATE").await.unwrap();
    let impatient = reqwest::Client::builder().timeout(Duration::from_millis(500)).build().unwrap();
    let abandoned = impatient
        .put(format!("{}/v1/nodes/n1/maintenance", server.base))
        .header("X-OpenStack-Ironic-API-Version", "1.65")
        .header("X-User-Id", "op")
        .header("X-Roles", "admin")
        .header("OpenStack-System-Scope", "all")
        .json(&json!({"reason": "abandoned"}))
        .send()
        .await;
    assert!(abandoned.is_err(), "the client gave up: {:?}", abandoned.map(|r| r.status()));
    tokio::time::sleep(Duration::from_millis(300)).await;
    holder.rollback().await.unwrap();
    let log = server.log_lines().join("\n");
    assert!(log.contains("PUT /v1/nodes/n1/maintenance status: 499"), "the abandoned request is logged:\n{log}");
    assert!(log.matches("status: 503").count() >= 3, "{log}");
}
