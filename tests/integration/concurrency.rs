//! Concurrent callers in separate processes (the API runs many workers) and
//! in-process tasks on their own pools, asserting and releasing on the same
//! few nodes; then the invariants, row by row: at most one legacy and one
//! fault entry per node, the boolean equal to "an entry exists", the reason
//! column equal to the synthesised one, and history accounting for every
//! entry. No caller may see a database error ("database is locked"
//! included): only success or a 409.

use crate::backend_tests;
use crate::common::{TestDb, node_invariants, nodemaint_cmd, stderr};
use nodemaint::admin::fleet::Rng;
use nodemaint::admin::legacy_nodes::NewNode;
use nodemaint::entity::nodes;
use nodemaint::schema::{self, UpgradeOptions};
use nodemaint::{Caller, Maintenance, NewEntry, Policy};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};

const NODES: [&str; 3] = ["hot1", "hot2", "hot3"];
const OWNER: &str = "owner-project";

fn cli_op(rng: &mut Rng) -> Vec<String> {
    let node = NODES[rng.below(3) as usize].to_owned();
    let s = |v: &str| v.to_owned();
    match rng.below(6) {
        0 => vec![s("maintenance"), s("set"), node, s("--reason"), format!("cli {}", rng.below(100))],
        1 => vec![s("maintenance"), s("unset"), node],
        2 => vec![s("maintenance"), s("add"), node, s("--type"), s("operator_hold"), s("--reason"), s("cli hold")],
        3 => vec![s("maintenance"), s("add"), node, s("--type"), s("hardware_failure"), s("--project"), s(OWNER)],
        4 => vec![s("maintenance"), s("remove"), node, s("--all")],
        _ => vec![s("maintenance"), s("set"), node],
    }
}

async fn library_worker(svc: Maintenance, seed: u64) {
    let mut rng = Rng::new(seed);
    for _ in 0..25 {
        let node = NODES[rng.below(3) as usize];
        let op = Caller::system(format!("worker-{seed}"), &["admin"]);
        let result = match rng.below(6) {
            0 => svc.legacy_set(&op, node, Some(format!("lib {seed}"))).await.map(drop),
            1 => svc.release_all(&op, node).await.map(drop),
            2 => svc.fault_assert(node, "power_failure", Some("flap".into())).await.map(drop),
            3 => svc.fault_clear(node).await.map(drop),
            4 => svc
                .add(
                    &op,
                    node,
                    NewEntry {
                        entry_type: "operator_hold".into(),
                        reason: Some("lib".into()),
                        extra: None,
                        ..Default::default()
                    },
                )
                .await
                .map(drop),
            _ => svc.legacy_unset(&op, node).await.map(drop),
        };
        if let Err(e) = result {
            assert_eq!(e.http_status(), 409, "only conflicts may fail here: {e}");
        }
    }
}

async fn concurrent_asserts_and_releases_keep_every_invariant(t: TestDb) {
    let db = t.connect().await;
    schema::upgrade(&db, &t.url, UpgradeOptions::default()).await.unwrap();
    for name in NODES {
        nodemaint::admin::legacy_nodes::create(
            &db,
            NewNode { name: Some(name.into()), owner: Some(OWNER.into()), ..NewNode::default() },
        )
        .await
        .unwrap();
    }
    // Three workers share one service (on SQLite, one writers' queue), three
    // have their own pool each, and CLI processes write beside them all.
    let shared = Maintenance::new(nodemaint::db::connect(&t.url).await.unwrap(), Policy::defaults());
    let mut tasks = Vec::new();
    for seed in 0..6 {
        let svc = if seed < 3 {
            shared.clone()
        } else {
            Maintenance::new(nodemaint::db::connect(&t.url).await.unwrap(), Policy::defaults())
        };
        tasks.push(tokio::spawn(library_worker(svc, seed)));
    }
    let url = t.url.clone();
    let processes = tokio::task::spawn_blocking(move || {
        let mut rng = Rng::new(99);
        for _wave in 0..6 {
            let children: Vec<_> = (0..6)
                .map(|_| {
                    let args = cli_op(&mut rng);
                    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
                    (
                        args.clone(),
                        nodemaint_cmd(&url, &refs)
                            .stdout(std::process::Stdio::null())
                            .stderr(std::process::Stdio::piped())
                            .spawn()
                            .unwrap(),
                    )
                })
                .collect();
            for (args, child) in children {
                let out = child.wait_with_output().unwrap();
                let code = out.status.code();
                assert!(matches!(code, Some(0) | Some(9)), "{args:?} exited {code:?}: {}", stderr(&out));
            }
        }
    });
    for task in tasks {
        task.await.unwrap();
    }
    processes.await.unwrap();

    for name in NODES {
        let node = nodes::Entity::find().filter(nodes::Column::Name.eq(name)).one(&db).await.unwrap().unwrap();
        let entries = node_invariants(&db, &node, name).await;
        let events = |verb: &str| {
            let sql = format!(
                "SELECT COUNT(*) FROM node_history WHERE node_id = {} AND event LIKE '% {verb} (type %'",
                node.id
            );
            let db = db.clone();
            async move { crate::common::count(&db, &sql).await }
        };
        let (asserted, released) = (events("asserted").await, events("released").await);
        assert_eq!(asserted - released, entries.len() as i64, "{name}: history accounts for every active entry");
        assert!(asserted > 0, "{name} saw no traffic");
    }
}

backend_tests!(concurrent_asserts_and_releases_keep_every_invariant);
