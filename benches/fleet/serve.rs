//! The legacy `PUT` + `DELETE /v1/nodes/{uuid}/maintenance` cycle over HTTP,
//! per second, from one load client: against `nodemaint serve` (the real
//! binary, noauth), against a real Ironic 39 API when `--ironic-url` names one,
//! and (in main.rs) against the same statements issued directly with sqlx.
//! Requests carry no version header, as a legacy fleet script's do.

use crate::ops::{CpuMeter, MachineMeter};
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A `nodemaint serve` child process, stopped with SIGTERM on drop.
pub struct Served {
    child: Child,
    pub base: String,
}

impl Served {
    pub fn start(url: &str, max_connections: usize) -> Served {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_nodemaint"))
            .args(["--database-url", url, "serve", "--auth-strategy", "noauth", "--bind", "127.0.0.1:0"])
            .args(["--db-max-connections", &max_connections.to_string()])
            // The request log costs a line per request; a deployment keeps it, and so does the bench.
            .env("RUST_LOG", std::env::var("XP_LOG").unwrap_or("info".into()))
            .envs(std::env::var("XP_THREADS").ok().map(|t| ("TOKIO_WORKER_THREADS", t)))
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start nodemaint serve");
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let base = lines
            .by_ref()
            .map_while(Result::ok)
            .find_map(|l| l.split("listening on ").nth(1).and_then(|r| r.split_whitespace().next()).map(str::to_owned))
            .expect("nodemaint serve did not start");
        // Keep draining the log so the server never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        Served { child, base }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = std::process::Command::new("kill").arg("-TERM").arg(self.child.id().to_string()).status();
        let _ = self.child.wait();
    }
}

impl Served {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

/// Cycles per second: `workers` clients, each on its own node. With a
/// server `pid`, prints its CPU per cycle and the load client's.
pub async fn cycles(base: &str, node_uuids: &[String], workers: usize, run_for: Duration, pid: Option<u32>) -> f64 {
    let meters = pid.map(|pid| (CpuMeter::of_pid(pid), CpuMeter::start(), MachineMeter::start()));
    let client = reqwest::Client::new();
    let done = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let tasks: Vec<_> = (0..workers)
        .map(|i| {
            let (client, done) = (client.clone(), done.clone());
            let url = format!("{base}/v1/nodes/{}/maintenance", node_uuids[i]);
            tokio::spawn(async move {
                while start.elapsed() < run_for {
                    let put = client.put(&url).json(&json!({"reason": "bench"})).send().await.expect("PUT");
                    assert_eq!(
                        put.status(),
                        StatusCode::ACCEPTED,
                        "PUT {url}: {}",
                        put.text().await.unwrap_or_default()
                    );
                    let del = client.delete(&url).send().await.expect("DELETE");
                    assert_eq!(
                        del.status(),
                        StatusCode::ACCEPTED,
                        "DELETE {url}: {}",
                        del.text().await.unwrap_or_default()
                    );
                    done.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    let cycles = done.load(Ordering::Relaxed);
    if let Some((server, client, machine)) = meters {
        server.report("server", workers, cycles);
        client.report("load client", workers, cycles);
        machine.report("serve", workers, cycles);
    }
    cycles as f64 / start.elapsed().as_secs_f64()
}

/// `n` fake-hardware nodes on a real Ironic, created through its API the
/// first time and found by name afterwards; their uuids.
pub async fn ironic_nodes(base: &str, n: usize) -> Vec<String> {
    let client = reqwest::Client::new();
    let v = ("X-OpenStack-Ironic-API-Version", "1.115");
    let mut uuids = Vec::with_capacity(n);
    for i in 0..n {
        let name = format!("nodemaint-peer-{i}");
        let found = client.get(format!("{base}/v1/nodes/{name}")).header(v.0, v.1).send().await.expect("Ironic API");
        let node: Value = if found.status() == StatusCode::OK {
            found.json().await.unwrap()
        } else {
            let created = client
                .post(format!("{base}/v1/nodes"))
                .header(v.0, v.1)
                .json(&json!({"name": name, "driver": "fake-hardware"}))
                .send()
                .await
                .expect("Ironic API");
            assert_eq!(created.status(), StatusCode::CREATED, "create node on Ironic");
            created.json().await.unwrap()
        };
        uuids.push(node["uuid"].as_str().expect("uuid").to_owned());
    }
    uuids
}
