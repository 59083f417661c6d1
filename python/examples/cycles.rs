//! The Rust side of `python/bench/operations.py`: assert+release cycles
//! through the library, as the binding's benchmark does them from Python
//! threads, so the two can be compared in one run.
//!
//!   cargo run --release -p nodemaint-python --example cycles -- URL WORKERS SECONDS
//!
//! Worker `i` cycles on node `bench-<i>` (made by the benchmark) as a
//! system operator; prints the cycles per second of all workers together.

use nodemaint::{Caller, Maintenance, NewEntry, Policy, db};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: cycles URL WORKERS SECONDS";
    let url = args.next().ok_or(usage)?;
    let workers: usize = args.next().and_then(|w| w.parse().ok()).ok_or(usage)?;
    let seconds: u64 = args.next().and_then(|s| s.parse().ok()).ok_or(usage)?;
    let url = db::normalize_url(&url).map_err(|e| e.to_string())?;
    let connection = db::connect_with(&url, Some(workers as u32)).await.map_err(|e| e.to_string())?;
    let svc = Arc::new(Maintenance::new(connection, Policy::defaults()));
    let cycles = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let tasks: Vec<_> = (0..workers)
        .map(|i| {
            let (svc, cycles) = (Arc::clone(&svc), Arc::clone(&cycles));
            tokio::spawn(async move {
                let caller = Caller::system(format!("bench-{i}"), &["admin"]);
                let node = format!("bench-{i}");
                while Instant::now() < deadline {
                    let request = NewEntry {
                        entry_type: "operator_hold".into(),
                        reason: Some("bench".into()),
                        ..NewEntry::default()
                    };
                    let entry = svc.add(&caller, &node, request).await.map_err(|e| e.to_string())?;
                    svc.release(&caller, &node, &entry.uuid).await.map_err(|e| e.to_string())?;
                    cycles.fetch_add(1, Ordering::Relaxed);
                }
                Ok::<(), String>(())
            })
        })
        .collect();
    let started = Instant::now();
    for task in tasks {
        task.await.map_err(|e| e.to_string())??;
    }
    let elapsed = started.elapsed().as_secs_f64();
    println!("{:.1}", cycles.load(Ordering::Relaxed) as f64 / elapsed);
    Ok(())
}
