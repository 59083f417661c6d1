//! Test support: one uniquely named database per test on each configured
//! backend, dropped afterwards; Ironic's own schema loaded from the
//! fixtures; the `nodemaint` binary; catalog queries.
//!
//! SQLite always runs. PostgreSQL and MySQL run when
//! `NODEMAINT_TEST_POSTGRES_URL` / `NODEMAINT_TEST_MYSQL_URL` name a server;
//! without them a test says it skipped that backend, except under CI
//! (`CI` set), where a missing backend fails the test.

#![allow(dead_code)]

use sea_orm::{ConnectionTrait, Database, DatabaseConnection, DbBackend, Statement};
use std::path::PathBuf;
use std::process::{Command, Output};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
    Mysql,
}

impl Backend {
    fn server_var(self) -> Option<&'static str> {
        match self {
            Backend::Sqlite => None,
            Backend::Postgres => Some("NODEMAINT_TEST_POSTGRES_URL"),
            Backend::Mysql => Some("NODEMAINT_TEST_MYSQL_URL"),
        }
    }
}

/// One test database; dropped (file removed, or `DROP DATABASE`) on drop.
pub struct TestDb {
    pub backend: Backend,
    pub url: String,
    server: Option<String>,
    name: String,
    dir: Option<PathBuf>,
}

fn unique_name() -> String {
    format!("nodemaint_test_{}", uuid::Uuid::new_v4().simple())
}

impl TestDb {
    /// A new empty database, or `None` (with a note on stderr) when the
    /// backend is not configured outside CI.
    pub async fn create(backend: Backend) -> Option<TestDb> {
        let name = unique_name();
        let Some(var) = backend.server_var() else {
            let dir = std::env::temp_dir().join(&name);
            std::fs::create_dir_all(&dir).expect("temp dir");
            let url = format!("sqlite://{}?mode=rwc", dir.join("nodemaint.db").display());
            return Some(TestDb { backend, url, server: None, name, dir: Some(dir) });
        };
        let server = match std::env::var(var) {
            Ok(s) if !s.is_empty() => s.trim_end_matches('/').to_owned(),
            _ => {
                if std::env::var_os("CI").is_some() {
                    panic!("{var} is not set: CI must run every backend");
                }
                eprintln!("skipped {backend:?}: {var} is not set");
                return None;
            }
        };
        let admin = Database::connect(admin_url(backend, &server)).await.unwrap_or_else(|e| {
            panic!("{var}={server} is unreachable: {e}");
        });
        admin.execute_unprepared(&format!("CREATE DATABASE {name}")).await.expect("create test database");
        admin.close().await.ok();
        let url = format!("{server}/{name}");
        Some(TestDb { backend, url, server: Some(server), name, dir: None })
    }

    pub async fn connect(&self) -> DatabaseConnection {
        nodemaint::db::connect(&self.url).await.expect("connect to test database")
    }

    /// Loads Ironic 39.0.0's own schema (made by `ironic-dbsync create_schema`).
    pub async fn load_ironic_schema(&self) {
        let text = std::fs::read_to_string(ironic_schema_file(self.backend)).expect("read Ironic schema fixture");
        // One connection, so session settings in the dump apply to every statement.
        let mut options = sea_orm::ConnectOptions::new(self.url.clone());
        options.max_connections(1).sqlx_logging(false);
        let db = Database::connect(options).await.expect("connect to test database");
        for statement in split_sql(&text) {
            db.execute_unprepared(&statement).await.unwrap_or_else(|e| panic!("{statement}: {e}"));
        }
        if self.backend != Backend::Mysql {
            // The MySQL dump carries its alembic row already.
            db.execute_unprepared("INSERT INTO alembic_version (version_num) VALUES ('9fb44677ef15')").await.unwrap();
        }
        db.close().await.ok();
    }

    /// Runs `nodemaint --database-url URL ARGS…`.
    pub fn cli(&self, args: &[&str]) -> Output {
        nodemaint_cmd(&self.url, args).output().expect("run nodemaint")
    }
}

pub fn nodemaint_cmd(url: &str, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_nodemaint"));
    cmd.arg("--database-url").arg(url).args(args).env_remove("NODEMAINT_CONFIG").env_remove("RUST_LOG");
    cmd
}

fn admin_url(backend: Backend, server: &str) -> String {
    match backend {
        Backend::Postgres => format!("{server}/postgres"),
        _ => format!("{server}/"),
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        if let Some(dir) = &self.dir {
            let _ = std::fs::remove_dir_all(dir);
            return;
        }
        let (Some(server), backend, name) = (self.server.clone(), self.backend, self.name.clone()) else {
            return;
        };
        // Drop runs inside the test's runtime: do the async work on a thread of its own.
        let _ = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            rt.block_on(async {
                if let Ok(admin) = Database::connect(admin_url(backend, &server)).await {
                    let force = if backend == Backend::Postgres { " WITH (FORCE)" } else { "" };
                    let _ = admin.execute_unprepared(&format!("DROP DATABASE IF EXISTS {name}{force}")).await;
                    let _ = admin.close().await;
                }
            });
        })
        .join();
    }
}

fn ironic_schema_file(backend: Backend) -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    match backend {
        Backend::Mysql => manifest.join("tests/fixtures/ironic-39.0.0-schema.mysql.sql"),
        _ => {
            let dir = std::env::var("NODEMAINT_IRONIC_SCHEMA_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|_| manifest.join("../shared/fixtures"));
            let dir = if dir.is_relative() { manifest.join(dir) } else { dir };
            let file = if backend == Backend::Postgres {
                "ironic-39.0.0-schema.postgresql.sql"
            } else {
                "ironic-39.0.0-schema.sqlite.sql"
            };
            dir.join(file)
        }
    }
}

/// Statements of a schema dump, without comments, psql meta-commands, or
/// pg_dump's empty search_path (which would hide every table from the pool).
fn split_sql(text: &str) -> Vec<String> {
    let kept: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with("--") && !l.starts_with('\\') && !l.contains("set_config('search_path'"))
        .collect();
    kept.join("\n")
        .split(";\n")
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.trim_end_matches(';').to_owned())
        .collect()
}

/// One statement's rows as strings (NULL as `None`).
pub async fn rows(db: &DatabaseConnection, sql: &str) -> Vec<Vec<Option<String>>> {
    let backend = db.get_database_backend();
    db.query_all_raw(Statement::from_string(backend, sql.to_owned()))
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .iter()
        .map(|row| {
            let n = row.column_names().len();
            (0..n)
                .map(|i| row.try_get_by_index::<Option<String>>(i).unwrap_or_else(|e| panic!("{sql} column {i}: {e}")))
                .collect()
        })
        .collect()
}

/// `expr` as text in SQL, for [`rows`].
pub fn text(backend: DbBackend, expr: &str) -> String {
    match backend {
        DbBackend::MySql => format!("CAST({expr} AS CHAR)"),
        _ => format!("CAST({expr} AS TEXT)"),
    }
}

/// A single integer from `sql`.
pub async fn count(db: &DatabaseConnection, sql: &str) -> i64 {
    let backend = db.get_database_backend();
    let row = db.query_one_raw(Statement::from_string(backend, sql.to_owned())).await.unwrap().expect("a row");
    row.try_get_by_index::<i64>(0).or_else(|_| row.try_get_by_index::<i32>(0).map(i64::from)).unwrap()
}

/// Runs `nodemaint ARGS…` with `RUST_LOG=log`, kills it when its stderr has
/// shown `marker` `n` times, and returns how often it saw the marker and the
/// exit status (`code() == None` when the kill landed before it finished).
pub fn kill_after(url: &str, args: &[&str], log: &str, marker: &str, n: usize) -> (usize, std::process::ExitStatus) {
    use std::io::{BufRead, BufReader};
    let mut child = nodemaint_cmd(url, args)
        .env("RUST_LOG", log)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run nodemaint");
    let mut seen = 0;
    for line in BufReader::new(child.stderr.take().expect("stderr")).lines() {
        if line.expect("read stderr").contains(marker) {
            seen += 1;
            if seen == n {
                child.kill().expect("kill nodemaint");
                break;
            }
        }
    }
    (seen, child.wait().expect("wait for nodemaint"))
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Asserts a command succeeded, showing what it printed if not.
pub fn ok(o: &Output) -> String {
    assert!(o.status.success(), "exit {:?}\nstdout: {}\nstderr: {}", o.status.code(), stdout(o), stderr(o));
    stdout(o)
}

/// One test per backend: `backend_tests!(name)` turns `async fn name(db: TestDb)`
/// into `name::sqlite`, `name::postgres` and `name::mysql`.
#[macro_export]
macro_rules! backend_tests {
    ($($name:ident),* $(,)?) => {
        $(
            mod $name {
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn sqlite() {
                    if let Some(db) = $crate::common::TestDb::create($crate::common::Backend::Sqlite).await {
                        super::$name(db).await;
                    }
                }
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn postgres() {
                    if let Some(db) = $crate::common::TestDb::create($crate::common::Backend::Postgres).await {
                        super::$name(db).await;
                    }
                }
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn mysql() {
                    if let Some(db) = $crate::common::TestDb::create($crate::common::Backend::Mysql).await {
                        super::$name(db).await;
                    }
                }
            }
        )*
    };
}
