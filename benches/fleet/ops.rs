//! Assert + release cycles per second: through the library, and the same
//! statements in the same transactions issued directly with sqlx (no ORM).

use chrono::Timelike;
use nodemaint::{Caller, Maintenance, NewEntry, Policy};
use sea_orm::sqlx;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

pub const HOT: &str = "bench-hot";

/// Worker `i`'s node: its own, or the shared hot one.
pub fn node_name(i: usize, hot: bool) -> String {
    if hot { HOT.to_owned() } else { format!("bench-{i}") }
}

/// Worker `i`'s caller: a project admin with system authority
/// (`enforce_scope = false`), so workers never collide on the unique key.
fn caller(i: usize) -> Caller {
    Caller::project(format!("w{i}"), format!("p{i}"), &["admin"])
}

/// Cycles per second through `nodemaint::Maintenance`.
pub async fn library(url: &str, workers: usize, hot: bool, run_for: Duration) -> f64 {
    let db = nodemaint::db::connect_with(url, Some(workers as u32 + 1)).await.unwrap();
    // As a deployment with enforce_scope = false and legacy admin rules.
    let mut policy = Policy::defaults()
        .with_overrides("\"baremetal:node:maintenance:add\": \"role:admin\"\n\"baremetal:node:maintenance:remove\": \"role:admin\"\n")
        .unwrap();
    policy.enforce_scope = false;
    let svc = Maintenance::new(db, policy);
    let cpu = CpuMeter::start();
    let done = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let tasks: Vec<_> = (0..workers)
        .map(|i| {
            let (svc, done) = (svc.clone(), done.clone());
            tokio::spawn(async move {
                let (who, node) = (caller(i), node_name(i, hot));
                while start.elapsed() < run_for {
                    let request =
                        NewEntry { entry_type: "operator_hold".into(), reason: Some("bench".into()), extra: None };
                    let entry = svc.add(&who, &node, request).await.unwrap();
                    svc.release(&who, &node, &entry.uuid).await.unwrap();
                    done.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    let cycles = done.load(Ordering::Relaxed);
    cpu.report("library", workers, cycles);
    cycles as f64 / start.elapsed().as_secs_f64()
}

/// A process's CPU time so far (this one's, or a child's), at the start of a phase.
pub struct CpuMeter {
    stat: String,
    total_ms: f64,
    kernel_ms: f64,
}

impl CpuMeter {
    /// User + system and system CPU time, in ms, from /proc/<pid>/stat
    /// (`utime` and `stime`, in ticks of 10 ms: `getconf CLK_TCK` is 100).
    fn read(stat: &str) -> (f64, f64) {
        let stat = std::fs::read_to_string(stat).unwrap_or_default();
        let fields: Vec<&str> = stat.rsplit(") ").next().unwrap_or_default().split(' ').collect();
        let ms = |i: usize| fields.get(i).and_then(|t| t.parse::<f64>().ok()).unwrap_or(0.0) * 10.0;
        (ms(11) + ms(12), ms(12))
    }

    /// This process.
    pub fn start() -> CpuMeter {
        CpuMeter::of("/proc/self/stat".to_owned())
    }

    /// Another process (the server under load).
    pub fn of_pid(pid: u32) -> CpuMeter {
        CpuMeter::of(format!("/proc/{pid}/stat"))
    }

    fn of(stat: String) -> CpuMeter {
        let (total_ms, kernel_ms) = CpuMeter::read(&stat);
        CpuMeter { stat, total_ms, kernel_ms }
    }

    /// Prints the CPU spent per cycle since `start`, on stderr.
    pub fn report(&self, phase: &str, workers: usize, cycles: u64) {
        let (total_ms, kernel_ms) = CpuMeter::read(&self.stat);
        let per = |ms: f64| ms / cycles.max(1) as f64;
        eprintln!(
            "  {phase}, {workers} worker(s): {:.3} ms of the process's CPU per cycle, {:.3} in the kernel",
            per(total_ms - self.total_ms),
            per(kernel_ms - self.kernel_ms)
        );
    }
}

fn now() -> chrono::NaiveDateTime {
    let t = chrono::Utc::now().naive_utc();
    t.with_nanosecond(0).unwrap_or(t)
}

/// The library's statements, per backend: the placeholder style and the node lock differ.
macro_rules! direct_backend {
    ($name:ident, $db:ty, $lock:expr, $fetch:expr, $q:expr) => {
        pub async fn $name(pool: sqlx::Pool<$db>, workers: usize, hot: bool, run_for: Duration) -> f64 {
            let q = $q;
            let cpu = CpuMeter::start();
            let done = Arc::new(AtomicU64::new(0));
            let start = Instant::now();
            let tasks: Vec<_> = (0..workers)
                .map(|i| {
                    let (pool, done) = (pool.clone(), done.clone());
                    tokio::spawn(async move {
                        let node: String = node_name(i, hot);
                        let (user, project) = (format!("w{i}"), format!("p{i}"));
                        while start.elapsed() < run_for {
                            for releasing in [false, true] {
                                // As the library does: a transaction that loses a deadlock is retried whole.
                                loop {
                                    let attempt: Result<(), sqlx::Error> = async {
                                        let mut tx = pool.begin().await?;
                                let lock: &[&str] = &$lock;
                                for sql in lock {
                                    sqlx::query(sqlx::AssertSqlSafe(q(sql))).bind(&node).execute(&mut *tx).await?;
                                }
                                let (id,): (i32,) = sqlx::query_as(sqlx::AssertSqlSafe(q($fetch))).bind(&node).fetch_one(&mut *tx).await?;
                                let mut entries: Vec<(i32, String, String, Option<String>)> = sqlx::query_as(sqlx::AssertSqlSafe(q("SELECT id, asserted_by_project, type, reason FROM node_maintenance WHERE node_id = ? ORDER BY asserted_at, id")))
                                    .bind(id).fetch_all(&mut *tx).await?;
                                let ts = now();
                                if releasing {
                                    let eid = entries.iter().find(|e| e.1 == project).map(|e| e.0).ok_or(sqlx::Error::RowNotFound)?;
                                    sqlx::query(sqlx::AssertSqlSafe(q("DELETE FROM node_maintenance WHERE id = ?"))).bind(eid).execute(&mut *tx).await?;
                                    entries.retain(|e| e.0 != eid);
                                } else {
                                    sqlx::query(sqlx::AssertSqlSafe(q("INSERT INTO node_maintenance (uuid, node_id, type, reason, scope, asserted_by, asserted_by_project, asserted_at, version, created_at) VALUES (?, ?, 'operator_hold', 'bench', 'system', ?, ?, ?, '1.0', ?)")))
                                        .bind(uuid::Uuid::new_v4().to_string()).bind(id).bind(&user).bind(&project).bind(ts).bind(ts)
                                        .execute(&mut *tx).await?;
                                    entries.push((0, project.clone(), "operator_hold".to_owned(), Some("bench".to_owned())));
                                }
                                sqlx::query(sqlx::AssertSqlSafe(q("INSERT INTO node_history (uuid, event_type, severity, event, user_col, project, node_id, version, created_at) VALUES (?, 'maintenance', 'info', ?, ?, ?, ?, '1.0', ?)")))
                                    .bind(uuid::Uuid::new_v4().to_string()).bind(format!("maintenance entry by {user}")).bind(&user).bind(&project).bind(id).bind(ts)
                                    .execute(&mut *tx).await?;
                                // The entries after the change are known (the node is locked), as in the library.
                                let reason = entries.iter().map(|(_, _, t, r)| format!("{t}: {}", r.clone().unwrap_or_default())).collect::<Vec<_>>().join("; ");
                                sqlx::query(sqlx::AssertSqlSafe(q("UPDATE nodes SET maintenance = ?, maintenance_reason = ?, updated_at = ? WHERE id = ?")))
                                    .bind(!entries.is_empty()).bind(if entries.is_empty() { None } else { Some(reason) }).bind(ts).bind(id)
                                    .execute(&mut *tx).await?;
                                tx.commit().await?;
                                        Ok(())
                                    }
                                    .await;
                                    match attempt {
                                        Ok(()) => break,
                                        Err(e) if e.to_string().contains("eadlock") => continue,
                                        Err(e) => panic!("{e}"),
                                    }
                                }
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
            cpu.report("direct", workers, cycles);
            cycles as f64 / start.elapsed().as_secs_f64()
        }
    };
}

fn numbered(sql: &str) -> String {
    let mut out = String::new();
    let mut n = 0;
    for c in sql.replace("user_col", "\"user\"").chars() {
        if c == '?' {
            n += 1;
            out.push_str(&format!("${n}"));
        } else {
            out.push(c);
        }
    }
    out
}

direct_backend!(direct_postgres, sqlx::Postgres, [], "SELECT id FROM nodes WHERE name = ? FOR UPDATE", numbered);
direct_backend!(direct_mysql, sqlx::MySql, [], "SELECT id FROM nodes WHERE name = ? FOR UPDATE", |s: &str| s
    .replace("user_col", "`user`"));
direct_backend!(
    direct_sqlite,
    sqlx::Sqlite,
    ["UPDATE nodes SET maintenance = maintenance WHERE name = ?"],
    "SELECT id FROM nodes WHERE name = ?",
    |s: &str| s.replace("user_col", "\"user\"")
);

/// The direct side's pool: pooled as the library pools, a connection in use
/// is not pinged each time it is handed out (only one idle for
/// nodemaint::db::POOL_PING_AFTER_IDLE, longer than any run here).
fn pool_options<DB: sqlx::Database>(workers: usize) -> sqlx::pool::PoolOptions<DB> {
    sqlx::pool::PoolOptions::new().max_connections(workers as u32 + 1).test_before_acquire(false)
}

/// Cycles per second issuing the statements directly with sqlx.
pub async fn direct(url: &str, workers: usize, hot: bool, run_for: Duration) -> f64 {
    if url.starts_with("postgres") {
        let pool = pool_options(workers).connect(url).await.unwrap();
        direct_postgres(pool, workers, hot, run_for).await
    } else if url.starts_with("mysql") {
        let pool = pool_options(workers).connect(url).await.unwrap();
        direct_mysql(pool, workers, hot, run_for).await
    } else {
        use std::str::FromStr;
        let options = sqlx::sqlite::SqliteConnectOptions::from_str(url)
            .unwrap()
            .busy_timeout(nodemaint::db::SQLITE_BUSY_TIMEOUT)
            .journal_mode(sqlx::sqlite::SqliteJournalMode::Wal)
            .foreign_keys(true);
        let pool = pool_options(workers).connect_with(options).await.unwrap();
        direct_sqlite(pool, workers, hot, run_for).await
    }
}
