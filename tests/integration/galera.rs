//! nodemaint on a real three-node MariaDB Galera cluster, started by
//! `tests/galera/cluster.sh` (Debian's mariadb-server and galera-4, run as
//! the `mysql` user, hence root): concurrent writers through every node with
//! no failed request, cluster-wide migration and reconcile locks, a killed
//! lock holder, causal reads after an upgrade through another node, and a
//! Galera node killed under load. Outside CI, without root, the tests say
//! they skipped; under CI they fail.

use crate::api::{OLD, OPERATOR, Server};
use crate::common::{ConfigFile, count, node_invariants, nodemaint_cmd, ok, rows, runs_as_root, stderr, stdout};
use nodemaint::entity::nodes;
use nodemaint_test_support::galera::Cluster;
use nodemaint_test_support::{Backend, ScratchDb, database_url};
use reqwest::Method;
use sea_orm::{ConnectionTrait, DatabaseConnection, EntityTrait};
use serde_json::json;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The shared cluster, or `None` when the test may not start servers.
fn shared(test: &str) -> Option<Cluster> {
    runs_as_root(test).then(Cluster::shared)
}

/// A new database (created through node 1) and its URL on each node.
async fn database(cluster: &Cluster) -> (ScratchDb, Vec<String>) {
    let db = ScratchDb::empty(Backend::Mysql, Some(&cluster.servers[0]), "nodemaint_galera").await;
    let name = db.url.rsplit('/').next().unwrap().to_owned();
    let urls = cluster.servers.iter().map(|server| database_url(server, &name)).collect();
    (db, urls)
}

async fn connect(url: &str) -> DatabaseConnection {
    nodemaint::db::connect(url).await.expect("connect to a Galera node")
}

/// Runs `nodemaint` through each of `urls` at once with the same arguments.
fn at_once(urls: &[&str], args: &[&str]) -> Vec<std::process::Output> {
    let children: Vec<_> = urls
        .iter()
        .map(|url| nodemaint_cmd(url, args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap())
        .collect();
    children.into_iter().map(|c| c.wait_with_output().unwrap()).collect()
}

/// Every invariant, on one node's copy: at most one legacy and one fault
/// entry per node, no duplicate (type, scope, project), the boolean equal to
/// "an entry exists", the reason column the synthesised one. Returns the
/// rows that every node must hold alike.
async fn invariants(url: &str) -> Vec<Vec<Option<String>>> {
    let db = connect(url).await;
    for node in nodes::Entity::find().all(&db).await.unwrap() {
        node_invariants(&db, &node, &format!("{url} node {}", node.id)).await;
    }
    let mut snapshot = rows(
        &db,
        "SELECT CAST(id AS CHAR), CAST(node_id AS CHAR), type, scope, asserted_by_project, reason \
         FROM node_maintenance ORDER BY id",
    )
    .await;
    snapshot.extend(
        rows(&db, "SELECT CAST(id AS CHAR), CAST(maintenance AS CHAR), maintenance_reason FROM nodes ORDER BY id")
            .await,
    );
    snapshot.extend(rows(&db, "SELECT CAST(COUNT(*) AS CHAR) FROM node_history").await);
    db.close().await.ok();
    snapshot
}

/// Every node of the cluster holds the same rows, each copy with every invariant.
async fn same_everywhere(urls: &[String]) {
    let first = invariants(&urls[0]).await;
    for url in &urls[1..] {
        assert_eq!(invariants(url).await, first, "{url} holds other rows than {}", urls[0]);
    }
}

/// What a load run saw: requests by status.
#[derive(Default)]
struct Tally {
    ok: AtomicU64,
    unavailable: AtomicU64,
    other: AtomicU64,
    /// The slowest 503, in milliseconds: how long a client waited to be told.
    slowest_unavailable_ms: AtomicU64,
}

/// `clients` clients, each on server `i % servers.len()` and node
/// `i % nodes`, setting and clearing maintenance (Ironic's legacy calls)
/// until `until`. Returns the tally and the first unexpected answer.
async fn load(
    servers: &[Arc<Server>],
    nodes: &[String],
    clients: usize,
    run: Duration,
) -> (Arc<Tally>, Option<String>) {
    let tally = Arc::new(Tally::default());
    let first_other = Arc::new(std::sync::Mutex::new(None));
    let until = Instant::now() + run;
    let mut tasks = Vec::new();
    for i in 0..clients {
        let server = servers[i % servers.len()].clone();
        let node = nodes[i % nodes.len()].clone();
        let (tally, first_other) = (tally.clone(), first_other.clone());
        tasks.push(tokio::spawn(async move {
            let path = format!("/v1/nodes/{node}/maintenance");
            let mut n = 0u64;
            while Instant::now() < until {
                n += 1;
                let (method, body) = if n % 2 == 1 {
                    (Method::PUT, Some(json!({"reason": format!("client {i} round {n}")})))
                } else {
                    (Method::DELETE, None)
                };
                let started = Instant::now();
                let r = server.call(method, &path, Some(OLD), Some(OPERATOR), body).await;
                if r.status.is_success() {
                    tally.ok.fetch_add(1, Ordering::Relaxed);
                } else if r.status == reqwest::StatusCode::SERVICE_UNAVAILABLE {
                    tally.unavailable.fetch_add(1, Ordering::Relaxed);
                    tally.slowest_unavailable_ms.fetch_max(started.elapsed().as_millis() as u64, Ordering::Relaxed);
                    assert_eq!(r.header("Retry-After"), Some("1"), "{}", r.body);
                    let message = r.fault();
                    assert!(
                        !message.contains('\n') && !message.contains("1213"),
                        "one line, no driver text: {message}"
                    );
                } else {
                    tally.other.fetch_add(1, Ordering::Relaxed);
                    first_other.lock().unwrap().get_or_insert(format!("{} {}", r.status, r.body));
                }
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let first = first_other.lock().unwrap().clone();
    (tally, first)
}

/// Four nodes (`hot0`..`hot3`) on a migrated database, through node 1.
async fn hot_nodes(url: &str) -> Vec<String> {
    ok(&nodemaint_cmd(url, &["db", "upgrade"]).output().unwrap());
    let names: Vec<String> = (0..4).map(|i| format!("hot{i}")).collect();
    for name in &names {
        ok(&nodemaint_cmd(url, &["node", "create", "--name", name]).output().unwrap());
    }
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writers_through_every_node_fail_no_request_and_every_node_agrees() {
    let Some(cluster) = shared("galera load") else { return };
    let (_db, urls) = database(&cluster).await;
    let names = hot_nodes(&urls[0]).await;
    let servers: Vec<Arc<Server>> = urls.iter().map(|url| Arc::new(Server::start(url, "noauth"))).collect();
    let (tally, first_other) = load(&servers, &names, 16, Duration::from_secs(10)).await;
    let (ok, unavailable, other) = (
        tally.ok.load(Ordering::Relaxed),
        tally.unavailable.load(Ordering::Relaxed),
        tally.other.load(Ordering::Relaxed),
    );
    eprintln!("galera load: {ok} succeeded, {unavailable} 503, {other} other");
    assert!(ok > 500, "the load ran: {ok} requests");
    assert_eq!((unavailable, other), (0, 0), "no request fails; first unexpected: {first_other:?}");
    drop(servers);
    same_everywhere(&urls).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn without_retries_conflicts_are_503_with_retry_after_and_nothing_half_written() {
    let Some(cluster) = shared("galera no retries") else { return };
    let (_db, urls) = database(&cluster).await;
    let names = hot_nodes(&urls[0]).await;
    let file = ConfigFile::new("[database]\ndb_max_retries = 0\n");
    let config = file.path();
    let servers: Vec<Arc<Server>> =
        urls.iter().map(|url| Arc::new(Server::start_with(url, "noauth", &["--config", &config]))).collect();
    let (tally, first_other) = load(&servers, &names, 16, Duration::from_secs(8)).await;
    let unavailable = tally.unavailable.load(Ordering::Relaxed);
    assert_eq!(tally.other.load(Ordering::Relaxed), 0, "only 503 may fail: {first_other:?}");
    assert!(unavailable > 0, "certification conflicts happen with 16 writers on 4 nodes through 3 Galera nodes");
    drop(servers);
    same_everywhere(&urls).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_upgrades_through_two_nodes_apply_each_migration_once() {
    let Some(cluster) = shared("galera upgrades") else { return };
    // A fresh database.
    let (_fresh, urls) = database(&cluster).await;
    let outs = at_once(&[&urls[0], &urls[1]], &["db", "upgrade"]);
    for out in &outs {
        ok(out);
    }
    let applied: usize = outs.iter().map(|o| stdout(o).matches("Applied ").count()).sum();
    let db = connect(&urls[2]).await;
    let migrations = count(&db, "SELECT COUNT(*) FROM nodemaint_migrations").await;
    assert_eq!(applied as i64, migrations, "each migration applied once, by one of the two");
    assert_eq!(count(&db, "SELECT COUNT(DISTINCT version) FROM nodemaint_migrations").await, migrations);

    // A legacy fleet made by Ironic's own schema.
    let (seeded, urls) = database(&cluster).await;
    seeded.load_ironic_schema().await;
    ok(&nodemaint_cmd(&urls[0], &["fleet", "seed", "--nodes", "3000", "--maintained-fraction", "0.3", "--seed", "7"])
        .output()
        .unwrap());
    for out in at_once(&[&urls[1], &urls[2]], &["db", "upgrade"]) {
        ok(&out);
    }
    let db = connect(&urls[0]).await;
    let maintained = count(&db, "SELECT COUNT(*) FROM nodes WHERE maintenance").await;
    assert!(maintained > 500);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_maintenance WHERE type = 'legacy'").await, maintained);
    assert_eq!(count(&db, "SELECT COUNT(DISTINCT node_id) FROM node_maintenance").await, maintained);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_reconciles_through_two_nodes_repair_each_drift_once() {
    let Some(cluster) = shared("galera reconcile") else { return };
    let (_db, urls) = database(&cluster).await;
    ok(&nodemaint_cmd(&urls[0], &["db", "upgrade"]).output().unwrap());
    ok(&nodemaint_cmd(&urls[0], &["fleet", "seed", "--nodes", "4000", "--maintained-fraction", "0.0", "--seed", "3"])
        .output()
        .unwrap());
    // An old service sets the boolean on 400 nodes behind nodemaint's back.
    let db = connect(&urls[0]).await;
    db.execute_unprepared("UPDATE nodes SET maintenance = 1, maintenance_reason = 'old conductor' WHERE id % 10 = 0")
        .await
        .unwrap();
    let drifted = count(&db, "SELECT COUNT(*) FROM nodes WHERE maintenance").await;
    let outs = at_once(&[&urls[1], &urls[2]], &["--format", "json", "reconcile"]);
    let mut repaired = 0;
    for out in &outs {
        let report: serde_json::Value = serde_json::from_str(&ok(out)).unwrap();
        repaired += report["summary"].as_array().unwrap().iter().map(|k| k["repaired"].as_u64().unwrap()).sum::<u64>();
    }
    assert_eq!(repaired as i64, drifted, "each drift repaired once, by one of the two");
    let db = connect(&urls[0]).await;
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_maintenance WHERE type = 'legacy'").await, drifted);
    let events = "SELECT COUNT(*) FROM node_history WHERE event LIKE '%asserted (type legacy%'";
    assert_eq!(count(&db, events).await, drifted, "one history event per repair");
    same_everywhere(&urls).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lock_holder_killed_with_sigkill_leaves_the_lock_to_the_next_within_the_lease() {
    let Some(cluster) = shared("galera killed holder") else { return };
    let (seeded, urls) = database(&cluster).await;
    seeded.load_ironic_schema().await;
    ok(&nodemaint_cmd(&urls[0], &["fleet", "seed", "--nodes", "2000", "--maintained-fraction", "0.5", "--seed", "5"])
        .output()
        .unwrap());
    // A session on node 1 holds every node row, so the backfill of the
    // upgrade through node 1 waits (holding the migration lock) until killed.
    let blocker = sea_orm::Database::connect(&urls[0]).await.unwrap();
    let txn = sea_orm::TransactionTrait::begin(&blocker).await.unwrap();
    txn.execute_unprepared("SELECT id FROM nodes FOR UPDATE").await.unwrap();
    let mut holder = nodemaint_cmd(&urls[0], &["db", "upgrade"])
        .env("RUST_LOG", "info")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(holder.stderr.take().unwrap()));
    assert!(lines.any(|l| l.unwrap().contains("lease taken")), "the holder took the lease");
    std::thread::sleep(Duration::from_secs(2));
    holder.kill().unwrap();
    holder.wait().unwrap();
    txn.rollback().await.unwrap();
    let started = Instant::now();
    let next = nodemaint_cmd(&urls[1], &["db", "upgrade", "--lock-timeout", "60"]).output().unwrap();
    ok(&next);
    let waited = started.elapsed();
    assert!(stderr(&next).contains("Waiting for the migration lock"), "it found the lock held: {}", stderr(&next));
    assert!(waited <= nodemaint_runtime::lock::LEASE + Duration::from_secs(10), "took it within the lease: {waited:?}");
    let db = connect(&urls[2]).await;
    let maintained = count(&db, "SELECT COUNT(*) FROM nodes WHERE maintenance").await;
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_maintenance WHERE type = 'legacy'").await, maintained);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upgrade_check_through_another_node_right_after_the_upgrade_sees_no_drift() {
    let Some(cluster) = shared("galera causal reads") else { return };
    for round in 0..3 {
        let (seeded, urls) = database(&cluster).await;
        seeded.load_ironic_schema().await;
        let seed = format!("{}", 11 + round);
        ok(&nodemaint_cmd(
            &urls[0],
            &["fleet", "seed", "--nodes", "20000", "--maintained-fraction", "0.5", "--seed", &seed],
        )
        .output()
        .unwrap());
        ok(&nodemaint_cmd(&urls[0], &["db", "upgrade"]).output().unwrap());
        let check = nodemaint_cmd(&urls[(round % 2) + 1], &["upgrade", "check"]).output().unwrap();
        assert_eq!(check.status.code(), Some(0), "round {round}: {}", stdout(&check));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_galera_node_killed_under_load_loses_nothing_and_rejoins_with_the_same_rows() {
    if !runs_as_root("galera node killed") {
        return;
    }
    let cluster = Cluster::own(3410);
    let (_db, urls) = database(&cluster).await;
    let names = hot_nodes(&urls[0]).await;
    let survivors: Vec<Arc<Server>> = urls[..2].iter().map(|url| Arc::new(Server::start(url, "noauth"))).collect();
    let doomed = Arc::new(Server::start(&urls[2], "noauth"));
    let phase = Duration::from_secs(5);

    // The survivors' throughput with all three nodes up.
    let (before, _) = load(&survivors, &names, 8, phase).await;
    let before = before.ok.load(Ordering::Relaxed);

    let on_doomed = tokio::spawn({
        let (doomed, names) = (doomed.clone(), names.clone());
        async move { load(&[doomed], &names, 4, Duration::from_secs(25)).await }
    });
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(cluster.script(&["kill", "3"]).status().unwrap().success());
    // Galera evicts the dead node after its suspect timeout; until then the
    // survivors' commits wait for it. From then on they keep their pace.
    let survivor = connect(&urls[0]).await;
    let deadline = Instant::now() + Duration::from_secs(60);
    while count(&survivor, "SELECT CAST(VARIABLE_VALUE AS SIGNED) FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'WSREP_CLUSTER_SIZE'").await != 2 {
        assert!(Instant::now() < deadline, "Galera did not evict the killed node within 60 s");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    // Other tests share the two cores, so one round can be starved: the
    // survivors must keep at least half their pace in one of three rounds
    // (each round's failures must be none).
    tokio::time::sleep(Duration::from_secs(1)).await;
    let mut rounds = Vec::new();
    for _ in 0..3 {
        let (after, first_other) = load(&survivors, &names, 8, phase).await;
        assert_eq!(
            (after.unavailable.load(Ordering::Relaxed), after.other.load(Ordering::Relaxed)),
            (0, 0),
            "through the surviving nodes nothing fails: {first_other:?}"
        );
        rounds.push(after.ok.load(Ordering::Relaxed));
        if rounds.last().is_some_and(|after| after * 2 >= before) {
            break;
        }
    }
    eprintln!("galera node killed: survivors {before} ok in {phase:?} before, {rounds:?} in rounds after the eviction");
    assert!(
        rounds.iter().any(|after| after * 2 >= before),
        "the survivors keep at least half their throughput: {rounds:?} after vs {before} before"
    );

    // The dead node's serve tells its clients at once, and its health check says so.
    let health = reqwest::get(format!("{}/healthcheck", doomed.base)).await.unwrap();
    assert_eq!(health.status(), reqwest::StatusCode::SERVICE_UNAVAILABLE);
    let (doomed_tally, doomed_other) = on_doomed.await.unwrap();
    assert_eq!(
        doomed_tally.other.load(Ordering::Relaxed),
        0,
        "the dead node's clients get 503s only: {doomed_other:?}"
    );
    assert!(doomed_tally.unavailable.load(Ordering::Relaxed) > 0, "the dead node's clients were told");
    let slowest = doomed_tally.slowest_unavailable_ms.load(Ordering::Relaxed);
    assert!(slowest < 5_000, "a 503 within the pool timeout, not a hang: the slowest took {slowest} ms");

    // While a node is missing the upgrade check warns.
    let check = nodemaint_cmd(&urls[0], &["upgrade", "check"]).output().unwrap();
    assert_eq!(check.status.code(), Some(1), "{}", stdout(&check));
    assert!(stdout(&check).contains("2 of the 3"), "{}", stdout(&check));

    // The node rejoins; its serve, never restarted, answers again.
    assert!(cluster.script(&["restart", "3"]).status().unwrap().success(), "node 3 rejoins");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let health = reqwest::get(format!("{}/healthcheck", doomed.base)).await.unwrap();
        if health.status() == reqwest::StatusCode::OK {
            break;
        }
        assert!(Instant::now() < deadline, "the rejoined node's serve is still unhealthy after 30 s");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let (back, back_other) = load(std::slice::from_ref(&doomed), &names, 2, Duration::from_secs(2)).await;
    assert_eq!(
        (back.unavailable.load(Ordering::Relaxed), back.other.load(Ordering::Relaxed)),
        (0, 0),
        "every request through the rejoined node succeeds: {back_other:?}"
    );
    drop(survivors);
    drop(doomed);
    same_everywhere(&urls).await;
}

/// Real certification conflicts with no retries (`db_max_retries = 0`),
/// notifications on: every legacy call that succeeded left `.start` +
/// `.end` in the outbox, matched by request id; every one that failed with
/// a 503 either Ironic's `.start` + `.error` (it lost after its plan) or
/// nothing (it lost in the node lock's read, before the node was read and
/// the caller authorized: as Ironic sends nothing when its node lookup
/// fails), and some of them the pair; never a failure notification that
/// could not be written; nothing for a request that is not one of them.
/// (Sent here by no one: the outbox is what the publisher sends, which
/// `notifications.rs` tests.)
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn conflicts_that_exhaust_their_retries_notify_start_and_error_and_nothing_else() {
    let Some(cluster) = shared("galera notifications") else { return };
    let (_db, urls) = database(&cluster).await;
    let names = hot_nodes(&urls[0]).await;
    let file = ConfigFile::new(
        "[DEFAULT]\nnotification_level = info\n\n[oslo_messaging_notifications]\ndriver = messagingv2\n\
         transport_url = rabbit://guest:guest@127.0.0.1:5672/\n\n[database]\ndb_max_retries = 0\n",
    );
    let config = file.path();
    let args = ["--config-file", &config, "--notify-interval", "0"];
    let servers: Vec<Arc<Server>> = urls.iter().map(|url| Arc::new(Server::start_with(url, "noauth", &args))).collect();
    let replies = Arc::new(std::sync::Mutex::new(Vec::new()));
    let until = Instant::now() + Duration::from_secs(8);
    let mut tasks = Vec::new();
    for i in 0..16 {
        let (server, node, replies) = (servers[i % 3].clone(), names[i % names.len()].clone(), replies.clone());
        tasks.push(tokio::spawn(async move {
            let path = format!("/v1/nodes/{node}/maintenance");
            let mut n = 0u64;
            while Instant::now() < until {
                n += 1;
                let (method, body) = if n % 2 == 1 {
                    (Method::PUT, Some(json!({"reason": format!("c{i} r{n}")})))
                } else {
                    (Method::DELETE, None)
                };
                let r = server.call(method, &path, Some(OLD), Some(OPERATOR), body).await;
                let id = r.header("x-openstack-request-id").expect("a request id").to_owned();
                replies.lock().unwrap().push((id, r.status.as_u16()));
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let mut servers: Vec<Server> = servers.into_iter().map(|s| Arc::try_unwrap(s).ok().unwrap()).collect();
    for server in &mut servers {
        server.stop();
        let lost: Vec<String> =
            server.log_lines().into_iter().filter(|l| l.contains("could not be notified")).collect();
        assert!(lost.is_empty(), "{lost:?}");
    }
    let replies = replies.lock().unwrap().clone();
    let failed = replies.iter().filter(|(_, status)| *status == 503).count();
    assert!(failed > 0, "certification conflicts happen with 16 writers on 4 nodes through 3 Galera nodes");
    assert!(replies.iter().all(|(_, s)| *s == 202 || *s == 503), "only 503 may fail");

    let db = connect(&urls[0]).await;
    let mut written: std::collections::HashMap<String, Vec<String>> = Default::default();
    for row in rows(&db, "SELECT event_type, message FROM node_maintenance_notification ORDER BY id").await {
        let message: serde_json::Value = serde_json::from_str(row[1].as_deref().unwrap()).unwrap();
        let id = message["_context_request_id"].as_str().expect("a request id").to_owned();
        written.entry(id).or_default().push(row[0].clone().unwrap());
    }
    let set = |what: &str| format!("baremetal.node.maintenance_set.{what}");
    let mut notified_failures = 0;
    for (id, status) in &replies {
        let got = written.remove(id).unwrap_or_default();
        if *status == 503 && got.is_empty() {
            continue;
        }
        let expected = if *status == 503 { [set("start"), set("error")] } else { [set("start"), set("end")] };
        assert_eq!(got, expected, "request {id} ({status})");
        notified_failures += usize::from(*status == 503);
    }
    assert!(notified_failures > 0, "of {failed} conflicts, none lost after its plan");
    assert!(written.is_empty(), "notifications of no request: {written:?}");
    same_everywhere(&urls).await;
}
