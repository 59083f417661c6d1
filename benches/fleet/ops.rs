//! Assert + release cycles per second: through the library, and the same
//! statements in the same transactions issued directly with sqlx (no ORM).

use chrono::Timelike;
use nodemaint::{Caller, Maintenance, NewEntry, Policy};
use sea_orm::sqlx;
use std::collections::HashMap;
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
    library_spread(&[url.to_owned()], workers, hot, run_for).await
}

/// [`library`] with worker `i` on `urls[i % urls.len()]` (the nodes of a
/// Galera cluster), one service and pool per URL.
pub async fn library_spread(urls: &[String], workers: usize, hot: bool, run_for: Duration) -> f64 {
    let mut services = Vec::new();
    for url in urls {
        let share = workers.div_ceil(urls.len());
        let db = nodemaint::db::connect_with(url, Some(share as u32 + 1)).await.unwrap();
        // As a deployment with enforce_scope = false and legacy admin rules.
        let mut policy = Policy::defaults()
            .with_overrides("\"baremetal:node:maintenance:add\": \"role:admin\"\n\"baremetal:node:maintenance:remove\": \"role:admin\"\n")
            .unwrap();
        policy.enforce_scope = false;
        services.push(Maintenance::new(db, policy));
    }
    let cpu = CpuMeter::start();
    let done = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let tasks: Vec<_> = (0..workers)
        .map(|i| {
            let (svc, done) = (services[i % services.len()].clone(), done.clone());
            tokio::spawn(async move {
                let (who, node) = (caller(i), node_name(i, hot));
                while start.elapsed() < run_for {
                    let request = NewEntry {
                        entry_type: "operator_hold".into(),
                        reason: Some("bench".into()),
                        extra: None,
                        ..Default::default()
                    };
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
        CpuMeter::parse(&std::fs::read_to_string(stat).unwrap_or_default())
    }

    /// (user + system, system) in ms from the text of a /proc/<pid>/stat.
    fn parse(stat: &str) -> (f64, f64) {
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

/// The whole machine's CPU and the database server's, at the start of a
/// phase: where every millisecond of a cycle went, not just this process's.
pub struct MachineMeter {
    busy_ms: f64,
    idle_ms: f64,
    /// Each database server process's CPU so far, by pid: connections come
    /// and go between phases, so only each process's own growth counts.
    database: HashMap<u32, f64>,
}

impl MachineMeter {
    /// Busy and idle time summed over all CPUs, in ms, from /proc/stat's
    /// `cpu` line (user nice system idle iowait irq softirq steal, in ticks of 10 ms).
    fn machine() -> (f64, f64) {
        let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
        let ticks: Vec<f64> =
            stat.lines().next().unwrap_or_default().split_whitespace().skip(1).filter_map(|t| t.parse().ok()).collect();
        let at = |i: usize| ticks.get(i).copied().unwrap_or(0.0) * 10.0;
        (at(0) + at(1) + at(2) + at(5) + at(6) + at(7), at(3) + at(4))
    }

    /// CPU of every PostgreSQL or MariaDB server process, in ms, by pid.
    fn database() -> HashMap<u32, f64> {
        let Ok(dir) = std::fs::read_dir("/proc") else { return HashMap::new() };
        dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
            .filter_map(|pid| Some((pid, std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)))
            .filter(|(_, s)| ["(postgres)", "(mariadbd)", "(mysqld)"].iter().any(|c| s.contains(c)))
            .map(|(pid, s)| (pid, CpuMeter::parse(&s).0))
            .collect()
    }

    pub fn start() -> MachineMeter {
        let (busy_ms, idle_ms) = MachineMeter::machine();
        MachineMeter { busy_ms, idle_ms, database: MachineMeter::database() }
    }

    /// Prints the machine's busy CPU and the database server's per cycle, on stderr.
    pub fn report(&self, phase: &str, workers: usize, cycles: u64) {
        let (busy_ms, idle_ms) = MachineMeter::machine();
        let (busy, idle) = (busy_ms - self.busy_ms, idle_ms - self.idle_ms);
        let database: f64 = MachineMeter::database()
            .into_iter()
            .map(|(pid, ms)| ms - self.database.get(&pid).copied().unwrap_or(0.0))
            .sum();
        let per = |ms: f64| ms / cycles.max(1) as f64;
        eprintln!(
            "  {phase}, {workers} worker(s): machine {:.3} ms busy per cycle ({:.0} % idle), database server {:.3}",
            per(busy),
            100.0 * idle / (busy + idle).max(1.0),
            per(database)
        );
    }
}

fn now() -> chrono::NaiveDateTime {
    let t = chrono::Utc::now().naive_utc();
    t.with_nanosecond(0).unwrap_or(t)
}

/// The SQL text of every statement the library sends for an assert or a
/// release, rendered by sea-query from the same entities as the library's
/// own (src/statements.rs), so the direct side sends the very same
/// statements: the node's mapped columns, found by uuid or by name and
/// locked; the node's entries, every column; the full entry insert (its id
/// returned on PostgreSQL); the history event; the delete; the node's sync.
struct Statements {
    /// SQLite only: the library's no-op write that takes the write lock first.
    sqlite_lock: Option<String>,
    find_node: String,
    entries: String,
    /// The node's scheduled windows, which every add reads (no overlap).
    schedule: String,
    insert_entry: String,
    /// PostgreSQL: the insert returns the new id.
    returning: bool,
    insert_event: String,
    /// The event's typed row (`node_maintenance_event`), beside its history row.
    insert_typed_event: String,
    delete_entry: String,
    sync_node: String,
    /// The same, also clearing `fault`: what the library sends when the last entry goes.
    sync_node_fault: String,
}

impl Statements {
    fn render(backend: sea_orm::DbBackend, by_uuid: bool) -> Statements {
        use nodemaint::entity::{node_history, node_maintenance, node_maintenance_event, nodes};
        use sea_orm::sea_query::Expr;
        use sea_orm::{ActiveValue::Set, ColumnTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect, QueryTrait};
        let sqlite = backend == sea_orm::DbBackend::Sqlite;
        let column = if by_uuid { nodes::Column::Uuid } else { nodes::Column::Name };
        let find = nodes::Entity::find().filter(column.eq(""));
        let find = if sqlite { find } else { find.lock_exclusive() };
        let entry = node_maintenance::ActiveModel {
            uuid: Set(String::new()),
            node_id: Set(0),
            entry_type: Set(String::new()),
            reason: Set(None),
            scope: Set(String::new()),
            asserted_by: Set(String::new()),
            asserted_by_project: Set(String::new()),
            asserted_at: Set(now()),
            extra: Set(None),
            version: Set(None),
            created_at: Set(None),
            updated_at: Set(None),
            ..Default::default()
        };
        let mut insert_entry = node_maintenance::Entity::insert(entry).into_query();
        let returning = backend == sea_orm::DbBackend::Postgres;
        if returning {
            insert_entry.returning_col(node_maintenance::Column::Id);
        }
        let event = node_history::ActiveModel {
            uuid: Set(String::new()),
            event_type: Set(None),
            severity: Set(None),
            event: Set(None),
            user: Set(None),
            project: Set(None),
            node_id: Set(None),
            version: Set(None),
            created_at: Set(None),
            ..Default::default()
        };
        let typed = node_maintenance_event::ActiveModel {
            history_uuid: Set(String::new()),
            node_id: Set(0),
            kind: Set(String::new()),
            entry_uuid: Set(String::new()),
            entry_type: Set(String::new()),
            scope: Set(String::new()),
            reason: Set(None),
            asserted_by: Set(None),
            asserted_by_project: Set(None),
            asserted_at: Set(None),
            ends_at: Set(None),
            actor: Set(String::new()),
            actor_project: Set(String::new()),
            note: Set(None),
            created_at: Set(now()),
            from_text: Set(false),
            ..Default::default()
        };
        Statements {
            sqlite_lock: sqlite.then(|| {
                format!(
                    "UPDATE nodes SET maintenance = maintenance WHERE {} = ?",
                    if by_uuid { "uuid" } else { "name" }
                )
            }),
            find_node: find.build(backend).sql,
            entries: node_maintenance::Entity::find()
                .filter(node_maintenance::Column::NodeId.eq(0))
                .order_by_asc(node_maintenance::Column::AssertedAt)
                .order_by_asc(node_maintenance::Column::Id)
                .build(backend)
                .sql,
            schedule: nodemaint::entity::node_maintenance_schedule::Entity::find()
                .filter(nodemaint::entity::node_maintenance_schedule::Column::NodeId.eq(0))
                .order_by_asc(nodemaint::entity::node_maintenance_schedule::Column::StartsAt)
                .order_by_asc(nodemaint::entity::node_maintenance_schedule::Column::Id)
                .build(backend)
                .sql,
            insert_entry: backend.build(&insert_entry).sql,
            returning,
            insert_event: node_history::Entity::insert(event).build(backend).sql,
            insert_typed_event: node_maintenance_event::Entity::insert(typed).build(backend).sql,
            delete_entry: node_maintenance::Entity::delete_many()
                .filter(node_maintenance::Column::Id.eq(0))
                .build(backend)
                .sql,
            sync_node: nodes::Entity::update_many()
                .col_expr(nodes::Column::Maintenance, Expr::value(false))
                .col_expr(nodes::Column::MaintenanceReason, Expr::value(None::<String>))
                .col_expr(nodes::Column::UpdatedAt, Expr::value(now()))
                .filter(nodes::Column::Id.eq(0))
                .build(backend)
                .sql,
            sync_node_fault: nodes::Entity::update_many()
                .col_expr(nodes::Column::Maintenance, Expr::value(false))
                .col_expr(nodes::Column::MaintenanceReason, Expr::value(None::<String>))
                .col_expr(nodes::Column::UpdatedAt, Expr::value(now()))
                .col_expr(nodes::Column::Fault, Expr::value(None::<String>))
                .filter(nodes::Column::Id.eq(0))
                .build(backend)
                .sql,
        }
    }
}

/// A node's mapped columns, as the library reads them.
type NodeRow = (
    i32,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<bool>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<chrono::NaiveDateTime>,
    Option<chrono::NaiveDateTime>,
);

/// An entry's columns, as the library reads them.
type EntryRow = (
    i32,
    String,
    i32,
    String,
    Option<String>,
    String,
    String,
    String,
    chrono::NaiveDateTime,
    Option<String>,
    Option<String>,
    Option<chrono::NaiveDateTime>,
    Option<chrono::NaiveDateTime>,
);

/// The library's statements issued directly, per backend (sqlx's executor
/// types differ, so the body is written once and stamped out for each).
macro_rules! direct_backend {
    ($name:ident, $db:ty) => {
        async fn $name(pool: sqlx::Pool<$db>, sql: Statements, idents: Vec<String>, run_for: Duration) -> f64 {
            let workers = idents.len();
            let sql = Arc::new(sql);
            let (cpu, machine) = (CpuMeter::start(), MachineMeter::start());
            let done = Arc::new(AtomicU64::new(0));
            let start = Instant::now();
            let tasks: Vec<_> = idents
                .into_iter()
                .enumerate()
                .map(|(i, ident)| {
                    let (pool, sql, done) = (pool.clone(), sql.clone(), done.clone());
                    tokio::spawn(async move {
                        let (user, project) = (format!("w{i}"), format!("p{i}"));
                        while start.elapsed() < run_for {
                            for releasing in [false, true] {
                                // As the library does: a transaction that loses a deadlock is retried whole.
                                loop {
                                    let attempt: Result<(), sqlx::Error> = async {
                                        let mut tx = pool.begin().await?;
                                        if let Some(lock) = &sql.sqlite_lock {
                                            sqlx::query(sqlx::AssertSqlSafe(lock.clone())).bind(&ident).execute(&mut *tx).await?;
                                        }
                                        let node: NodeRow = sqlx::query_as(sqlx::AssertSqlSafe(sql.find_node.clone()))
                                            .bind(&ident)
                                            .fetch_one(&mut *tx)
                                            .await?;
                                        let id = node.0;
                                        let mut entries: Vec<EntryRow> = sqlx::query_as(sqlx::AssertSqlSafe(sql.entries.clone()))
                                            .bind(id)
                                            .fetch_all(&mut *tx)
                                            .await?;
                                        let ts = now();
                                        let event = if releasing {
                                            let at = entries.iter().position(|e| e.7 == project).ok_or(sqlx::Error::RowNotFound)?;
                                            let e = entries.remove(at);
                                            sqlx::query(sqlx::AssertSqlSafe(sql.delete_entry.clone())).bind(e.0).execute(&mut *tx).await?;
                                            let text = format!(
                                                "maintenance entry {} released (type {}, scope {}, asserted by {} (project {}) at {}, reason: {}) by {user} (project {project})",
                                                e.1, e.3, e.5, e.6, e.7, e.8.format("%Y-%m-%dT%H:%M:%S"), e.4.as_deref().unwrap_or("None")
                                            );
                                            (text, "released", e.1, e.4, e.6, e.7, e.8)
                                        } else {
                                            sqlx::query(sqlx::AssertSqlSafe(sql.schedule.clone())).bind(id).fetch_all(&mut *tx).await?;
                                            let uuid = uuid::Uuid::new_v4().to_string();
                                            let insert = sqlx::query(sqlx::AssertSqlSafe(sql.insert_entry.clone()))
                                                .bind(&uuid).bind(id).bind("operator_hold").bind(Some("bench")).bind("system")
                                                .bind(&user).bind(&project).bind(ts).bind(None::<String>).bind(Some("1.0"))
                                                .bind(Some(ts)).bind(None::<chrono::NaiveDateTime>);
                                            let new_id = if sql.returning {
                                                use sqlx::Row;
                                                insert.fetch_one(&mut *tx).await?.try_get::<i32, _>(0)?
                                            } else {
                                                insert.execute(&mut *tx).await?;
                                                0
                                            };
                                            entries.push((new_id, uuid.clone(), id, "operator_hold".into(), Some("bench".into()), "system".into(), user.clone(), project.clone(), ts, None, Some("1.0".into()), Some(ts), None));
                                            let text = format!("maintenance entry {uuid} asserted (type operator_hold, scope system, reason: bench) by {user} (project {project})");
                                            (text, "asserted", uuid, Some("bench".to_owned()), user.clone(), project.clone(), ts)
                                        };
                                        let (text, kind, entry_uuid, reason, asserted_by, asserted_by_project, asserted_at) = event;
                                        let history_uuid = uuid::Uuid::now_v7().to_string();
                                        sqlx::query(sqlx::AssertSqlSafe(sql.insert_event.clone()))
                                            .bind(&history_uuid).bind(Some("maintenance")).bind(Some("info")).bind(Some(text))
                                            .bind(Some(&user)).bind(Some(&project)).bind(Some(id)).bind(Some("1.0")).bind(Some(ts))
                                            .execute(&mut *tx)
                                            .await?;
                                        // Its typed row, as the library writes beside each history row.
                                        sqlx::query(sqlx::AssertSqlSafe(sql.insert_typed_event.clone()))
                                            .bind(&history_uuid).bind(id).bind(kind).bind(entry_uuid).bind("operator_hold").bind("system")
                                            .bind(reason).bind(Some(asserted_by)).bind(Some(asserted_by_project)).bind(Some(asserted_at))
                                            .bind(None::<chrono::NaiveDateTime>).bind(&user).bind(&project).bind(None::<String>).bind(ts).bind(false)
                                            .execute(&mut *tx)
                                            .await?;
                                        // The entries after the change are known (the node is locked), as in the library.
                                        let reason = entries.iter().map(|e| format!("{}: {}", e.3, e.4.as_deref().unwrap_or_default())).collect::<Vec<_>>().join("; ");
                                        let sync = if entries.is_empty() {
                                            sqlx::query(sqlx::AssertSqlSafe(sql.sync_node_fault.clone()))
                                                .bind(false).bind(None::<String>).bind(ts).bind(None::<String>).bind(id)
                                        } else {
                                            sqlx::query(sqlx::AssertSqlSafe(sql.sync_node.clone()))
                                                .bind(true).bind(Some(reason)).bind(ts).bind(id)
                                        };
                                        sync.execute(&mut *tx).await?;
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
            machine.report("direct", workers, cycles);
            cycles as f64 / start.elapsed().as_secs_f64()
        }
    };
}

direct_backend!(direct_postgres, sqlx::Postgres);
direct_backend!(direct_mysql, sqlx::MySql);
direct_backend!(direct_sqlite, sqlx::Sqlite);

/// The direct side's pool: pooled as the library pools, a connection in use
/// is not pinged each time it is handed out (only one idle for
/// nodemaint::db::POOL_PING_AFTER_IDLE, longer than any run here).
fn pool_options<DB: sqlx::Database>(workers: usize) -> sqlx::pool::PoolOptions<DB> {
    sqlx::pool::PoolOptions::new().max_connections(workers as u32 + 1).test_before_acquire(false)
}

/// [`direct`] with the node of worker `i` handled on `urls[i % urls.len()]`,
/// all at once: the sum of the per-URL rates.
pub async fn direct_spread(urls: &[String], idents: Vec<String>, run_for: Duration) -> f64 {
    let mut groups: Vec<Vec<String>> = vec![Vec::new(); urls.len()];
    for (i, ident) in idents.into_iter().enumerate() {
        groups[i % urls.len()].push(ident);
    }
    let runs: Vec<_> = urls
        .iter()
        .zip(groups)
        .map(|(url, idents)| {
            let url = url.clone();
            tokio::spawn(async move { direct(&url, idents, run_for).await })
        })
        .collect();
    let mut total = 0.0;
    for run in runs {
        total += run.await.unwrap();
    }
    total
}

/// Cycles per second issuing the library's statements directly with sqlx,
/// one worker per node in `idents` (uuids or names, found as the library
/// finds them).
pub async fn direct(url: &str, idents: Vec<String>, run_for: Duration) -> f64 {
    let by_uuid = idents.iter().all(|i| uuid::Uuid::try_parse(i).is_ok());
    let workers = idents.len();
    let backend = nodemaint::db::backend_of(url);
    let sql = Statements::render(backend, by_uuid);
    match backend {
        sea_orm::DbBackend::Postgres => {
            let pool = pool_options(workers).connect(url).await.unwrap();
            direct_postgres(pool, sql, idents, run_for).await
        }
        sea_orm::DbBackend::MySql => {
            let pool = pool_options(workers).connect(url).await.unwrap();
            direct_mysql(pool, sql, idents, run_for).await
        }
        _ => {
            use std::str::FromStr;
            let options = sqlx::sqlite::SqliteConnectOptions::from_str(url)
                .unwrap()
                .busy_timeout(nodemaint::db::SQLITE_BUSY_TIMEOUT)
                .journal_mode(sqlx::sqlite::SqliteJournalMode::Wal)
                .foreign_keys(true);
            let pool = pool_options(workers).connect_with(options).await.unwrap();
            direct_sqlite(pool, sql, idents, run_for).await
        }
    }
}
