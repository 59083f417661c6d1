//! `--galera`: assert + release cycles per second on a three-node MariaDB
//! Galera cluster (started with `tests/galera/cluster.sh`, which needs root):
//! 8 workers spread over the three nodes through the library, against the
//! same 8 on one node, and against the library's statements sent directly
//! with sqlx spread the same way; and how many transactions were run again
//! per 1,000 operations.

use crate::ops;
use crate::{Figure, alternated, bench_nodes, rounds};
use nodemaint_test_support::{Backend, ScratchDb, database_url};

const WORKERS: usize = 8;

pub async fn figures(quick: bool) -> Vec<Figure> {
    eprintln!("[galera] assert + release cycles, {WORKERS} workers");
    let servers = nodemaint_test_support::galera::Cluster::shared().servers.clone();
    let scratch = ScratchDb::empty(Backend::Mysql, Some(&servers[0]), "nodemaint_bench_galera").await;
    let name = scratch.url.rsplit('/').next().unwrap().to_owned();
    let urls: Vec<String> = servers.iter().map(|s| database_url(s, &name)).collect();
    let db = nodemaint::db::connect(&urls[0]).await.unwrap();
    nodemaint::schema::upgrade(&db, &urls[0], nodemaint::schema::UpgradeOptions::default()).await.unwrap();
    bench_nodes(&db).await;
    db.close().await.ok();

    let (rounds, run_for) = rounds(quick, 3);
    let idents: Vec<String> = (0..WORKERS).map(|i| ops::node_name(i, false)).collect();
    let retries_before = nodemaint::db::retries();
    let (spread, direct) = alternated(
        "spread over 3 nodes",
        rounds,
        || ops::library_spread(&urls, WORKERS, false, run_for),
        || ops::direct_spread(&urls, idents.clone(), run_for),
    )
    .await;
    // Operations through the library in those rounds: two per cycle.
    let library_ops = spread * 2.0 * run_for.as_secs_f64() * rounds as f64;
    let retries = nodemaint::db::retries() - retries_before;
    let (_, one) = alternated(
        "spread against one node",
        rounds,
        || ops::library_spread(&urls, WORKERS, false, run_for),
        || ops::library(&urls[0], WORKERS, false, run_for),
    )
    .await;
    let ratio = spread / direct;
    vec![
        Figure {
            backend: "galera",
            figure: format!(
                "assert+release cycles/s, {WORKERS} workers over 3 nodes, library vs direct sqlx spread the same way"
            ),
            ours: spread,
            hand_written: Some(direct),
            ratio: Some(ratio),
            target: Some(">= 0.8".into()),
            met: Some(ratio >= 0.8),
        },
        Figure {
            backend: "galera",
            figure: format!("assert+release cycles/s, {WORKERS} workers over 3 nodes vs all on one node (library)"),
            ours: spread,
            hand_written: Some(one),
            ratio: Some(spread / one),
            target: None,
            met: None,
        },
        Figure {
            backend: "galera",
            figure: "transactions run again per 1,000 library operations".into(),
            ours: retries as f64 * 1000.0 / library_ops.max(1.0),
            hand_written: None,
            ratio: None,
            target: None,
            met: None,
        },
    ]
}
