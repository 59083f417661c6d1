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
        Served::start_with(url, max_connections, &["--auth-strategy", "noauth"])
    }

    /// [`Served::start`] with `args` (the auth strategy, a config file).
    pub fn start_with(url: &str, max_connections: usize, args: &[&str]) -> Served {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_nodemaint"))
            .args(["--database-url", url, "serve", "--bind", "127.0.0.1:0"])
            .args(args)
            .args(["--db-max-connections", &max_connections.to_string()])
            // The request log costs a line per request; a deployment keeps it, and so does the bench.
            .env("RUST_LOG", "info")
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

/// One keep-alive HTTP/1.1 connection that writes prepared requests and
/// reads whole responses, wrk-style: the load client shares the machine's
/// two cores with the server it measures, so it should take as little of
/// them as a client can (reqwest took 0.10–0.14 ms of CPU per cycle).
struct Connection {
    /// HOST:PORT.
    addr: String,
    stream: Option<tokio::net::TcpStream>,
    buf: Vec<u8>,
}

/// A response: its status and body.
struct Answer {
    status: u16,
    body: String,
}

impl Connection {
    /// `base` is `http://HOST:PORT`.
    fn new(base: &str) -> Connection {
        let addr = base.trim_start_matches("http://").trim_end_matches('/').to_owned();
        Connection { addr, stream: None, buf: Vec::with_capacity(4096) }
    }

    /// Sends one request and reads its whole response (Content-Length or
    /// chunked), reconnecting when the server closed the connection.
    async fn exchange(&mut self, request: &[u8]) -> std::io::Result<Answer> {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        if self.stream.is_none() {
            let stream = tokio::net::TcpStream::connect(&self.addr).await?;
            stream.set_nodelay(true)?;
            self.stream = Some(stream);
        }
        let stream = self.stream.as_mut().unwrap();
        stream.write_all(request).await?;
        self.buf.clear();
        loop {
            if let Some((answer, close)) = parse(&self.buf)? {
                if close {
                    self.stream = None;
                }
                return Ok(answer);
            }
            if stream.read_buf(&mut self.buf).await? == 0 {
                self.stream = None;
                return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "server closed the connection"));
            }
        }
    }
}

/// A whole response in `buf`, and whether the server will close the
/// connection; `None` while more is to come.
fn parse(buf: &[u8]) -> std::io::Result<Option<(Answer, bool)>> {
    let bad = |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, format!("bad HTTP response: {what}"));
    let Some(head_end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else { return Ok(None) };
    let head = std::str::from_utf8(&buf[..head_end]).map_err(|_| bad("head is not UTF-8"))?;
    let mut lines = head.split("\r\n");
    let status =
        lines.next().and_then(|l| l.split(' ').nth(1)).and_then(|c| c.parse().ok()).ok_or_else(|| bad("status"))?;
    let (mut length, mut chunked, mut close) = (None, false, false);
    for line in lines {
        let Some((name, value)) = line.split_once(':') else { continue };
        let value = value.trim();
        if name.eq_ignore_ascii_case("content-length") {
            length = Some(value.parse::<usize>().map_err(|_| bad("content-length"))?);
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            chunked = value.eq_ignore_ascii_case("chunked");
        } else if name.eq_ignore_ascii_case("connection") {
            close = value.eq_ignore_ascii_case("close");
        }
    }
    let rest = &buf[head_end + 4..];
    let body = if chunked {
        let mut body = Vec::new();
        let mut at = 0;
        loop {
            let Some(eol) = rest[at..].windows(2).position(|w| w == b"\r\n") else { return Ok(None) };
            let size = std::str::from_utf8(&rest[at..at + eol])
                .ok()
                .and_then(|s| usize::from_str_radix(s.split(';').next()?.trim(), 16).ok())
                .ok_or_else(|| bad("chunk size"))?;
            let data = at + eol + 2;
            if rest.len() < data + size + 2 {
                return Ok(None);
            }
            if size == 0 {
                break body;
            }
            body.extend_from_slice(&rest[data..data + size]);
            at = data + size + 2;
        }
    } else {
        let length = length.unwrap_or(0);
        if rest.len() < length {
            return Ok(None);
        }
        rest[..length].to_vec()
    };
    Ok(Some((Answer { status, body: String::from_utf8_lossy(&body).into_owned() }, close)))
}

/// The legacy PUT and DELETE of `uuid`'s maintenance on `host` (HOST:PORT),
/// with the header lines `auth` (each ending in CRLF), as bytes on the wire.
fn legacy_requests(host: &str, uuid: &str, auth: &str) -> (Vec<u8>, Vec<u8>) {
    let path = format!("/v1/nodes/{uuid}/maintenance");
    let body = r#"{"reason":"bench"}"#;
    let put = format!(
        "PUT {path} HTTP/1.1\r\nhost: {host}\r\n{auth}content-type: application/json\r\naccept: */*\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    let delete = format!("DELETE {path} HTTP/1.1\r\nhost: {host}\r\n{auth}accept: */*\r\n\r\n");
    (put.into_bytes(), delete.into_bytes())
}

/// Cycles per second: `workers` clients, each on its own node and its own
/// connection. With a server `pid`, prints its CPU per cycle, the load
/// client's and the whole machine's.
pub async fn cycles(base: &str, node_uuids: &[String], workers: usize, run_for: Duration, pid: Option<u32>) -> f64 {
    cycles_as(base, node_uuids, workers, run_for, pid, "").await
}

/// [`cycles`] with the header lines `auth` on every request (a token, or a
/// proxy's identity headers).
pub async fn cycles_as(
    base: &str,
    node_uuids: &[String],
    workers: usize,
    run_for: Duration,
    pid: Option<u32>,
    auth: &str,
) -> f64 {
    let meters = pid.map(|pid| (CpuMeter::of_pid(pid), CpuMeter::start(), MachineMeter::start()));
    let done = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let tasks: Vec<_> = (0..workers)
        .map(|i| {
            let done = done.clone();
            let mut connection = Connection::new(base);
            let (put, delete) = legacy_requests(&connection.addr, &node_uuids[i], auth);
            tokio::spawn(async move {
                while start.elapsed() < run_for {
                    for (request, what) in [(&put, "PUT"), (&delete, "DELETE")] {
                        let answer = connection.exchange(request).await.unwrap_or_else(|e| panic!("{what}: {e}"));
                        assert_eq!(answer.status, 202, "{}: {}", request_line(request), answer.body);
                    }
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

/// The request line of a prepared request, for a failure message.
fn request_line(request: &[u8]) -> String {
    String::from_utf8_lossy(request).lines().next().unwrap_or_default().to_owned()
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

/// Typed cycles per second: `POST` an entry at 1.116, then `DELETE` it by
/// its uuid, `workers` clients each on its own node and connection.
pub async fn typed_cycles(base: &str, node_uuids: &[String], workers: usize, run_for: Duration) -> f64 {
    let done = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let tasks: Vec<_> = (0..workers)
        .map(|i| {
            let done = done.clone();
            let mut connection = Connection::new(base);
            let (host, node) = (connection.addr.clone(), node_uuids[i].clone());
            let version = "x-openstack-ironic-api-version: 1.116\r\n";
            let body = r#"{"type":"operator_hold","reason":"bench"}"#;
            let post = format!(
                "POST /v1/nodes/{node}/maintenance HTTP/1.1\r\nhost: {host}\r\n{version}content-type: application/json\r\naccept: */*\r\ncontent-length: {}\r\n\r\n{body}",
                body.len()
            )
            .into_bytes();
            tokio::spawn(async move {
                while start.elapsed() < run_for {
                    let added = connection.exchange(&post).await.unwrap_or_else(|e| panic!("POST: {e}"));
                    assert_eq!(added.status, 201, "POST: {}", added.body);
                    let entry: Value = serde_json::from_str(&added.body).unwrap();
                    let uuid = entry["uuid"].as_str().unwrap();
                    let delete = format!(
                        "DELETE /v1/nodes/{node}/maintenance/{uuid} HTTP/1.1\r\nhost: {host}\r\n{version}accept: */*\r\n\r\n"
                    );
                    let released = connection.exchange(delete.as_bytes()).await.unwrap_or_else(|e| panic!("DELETE: {e}"));
                    assert!((200..300).contains(&released.status), "DELETE: {}", released.body);
                    done.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    done.load(Ordering::Relaxed) as f64 / start.elapsed().as_secs_f64()
}
