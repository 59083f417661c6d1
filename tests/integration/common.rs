//! Test support: one uniquely named database per test on each configured
//! backend, dropped afterwards, and Ironic's own schema loaded from the
//! fixtures (both from `nodemaint-test-support`, which the benchmark shares);
//! the `nodemaint` binary; catalog queries.
//!
//! SQLite always runs. PostgreSQL and MySQL run when
//! `NODEMAINT_TEST_POSTGRES_URL` / `NODEMAINT_TEST_MYSQL_URL` name a server;
//! without them a test says it skipped that backend, except under CI
//! (`CI` set), where a missing backend fails the test.

#![allow(dead_code)]

use sea_orm::{ConnectionTrait, DatabaseConnection, DbBackend, Statement};
use std::process::{Command, Output};

pub use nodemaint_test_support::Backend;
use nodemaint_test_support::ScratchDb;

/// One test database (the shared [`ScratchDb`]), with the test's own ways
/// to reach it: the library's connection and the `nodemaint` binary.
pub struct TestDb(ScratchDb);

impl std::ops::Deref for TestDb {
    type Target = ScratchDb;
    fn deref(&self) -> &ScratchDb {
        &self.0
    }
}

impl TestDb {
    /// A new empty database, or `None` (with a note on stderr) when the
    /// backend is not configured outside CI.
    pub async fn create(backend: Backend) -> Option<TestDb> {
        let server = backend.server_from_env();
        if let (Some(var), None) = (backend.server_var(), &server) {
            if std::env::var_os("CI").is_some() {
                panic!("{var} is not set: CI must run every backend");
            }
            eprintln!("skipped {backend:?}: {var} is not set");
            return None;
        }
        Some(TestDb(ScratchDb::empty(backend, server.as_deref(), "nodemaint_test").await))
    }

    pub async fn connect(&self) -> DatabaseConnection {
        nodemaint::db::connect(&self.url).await.expect("connect to test database")
    }

    /// Runs `nodemaint --database-url URL ARGS…`.
    pub fn cli(&self, args: &[&str]) -> Output {
        nodemaint_cmd(&self.url, args).output().expect("run nodemaint")
    }
}

/// Whether a test that starts servers as their own users, or drops to
/// another user, may run: as root it does; otherwise it is skipped with a
/// note, except under CI (`CI` set), where it fails as a missing backend does.
pub fn runs_as_root(test: &str) -> bool {
    let uid = Command::new("id").arg("-u").output().map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned());
    if uid.is_ok_and(|u| u == "0") {
        return true;
    }
    if std::env::var_os("CI").is_some() {
        panic!("{test} starts servers as their own users and must run as root, as CI does");
    }
    eprintln!("skipped {test}: it starts servers as their own users and needs root");
    false
}

pub fn nodemaint_cmd(url: &str, args: &[&str]) -> Command {
    let mut cmd = bare_cmd(&["--database-url", url]);
    cmd.args(args);
    cmd
}

/// `nodemaint ARGS…` with nothing from this process's environment: no
/// config file, database URL or log filter unless the arguments name them.
pub fn bare_cmd(args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_nodemaint"));
    cmd.args(args).env_remove("NODEMAINT_CONFIG").env_remove("NODEMAINT_DATABASE_URL").env_remove("RUST_LOG");
    cmd
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

/// A file in the temp directory holding `text` (a config or policy file for
/// a command under test), removed when dropped.
pub struct ConfigFile(std::path::PathBuf);

impl ConfigFile {
    pub fn new(text: &str) -> ConfigFile {
        let path = std::env::temp_dir().join(format!("nodemaint-test-{}.toml", uuid::Uuid::new_v4().simple()));
        std::fs::write(&path, text).unwrap();
        ConfigFile(path)
    }

    pub fn path(&self) -> String {
        self.0.display().to_string()
    }
}

impl Drop for ConfigFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Asserts one node's invariants and returns its entries (by id): at most one
/// legacy and one fault entry, no two with the same (type, scope, project),
/// the boolean equal to "an entry exists", the reason column the synthesised
/// one. `label` names the node (and where it was read) in a failure.
pub async fn node_invariants(
    db: &DatabaseConnection,
    node: &nodemaint::entity::nodes::Model,
    label: &str,
) -> Vec<nodemaint::entity::node_maintenance::Model> {
    use nodemaint::entity::node_maintenance;
    use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder};
    let entries = node_maintenance::Entity::find()
        .filter(node_maintenance::Column::NodeId.eq(node.id))
        .order_by_asc(node_maintenance::Column::Id)
        .all(db)
        .await
        .unwrap();
    let of = |ty: &str| entries.iter().filter(|e| e.entry_type == ty).count();
    assert!(of("legacy") <= 1 && of("fault") <= 1, "{label}: {entries:?}");
    let mut keys: Vec<_> = entries.iter().map(|e| (&e.entry_type, &e.scope, &e.asserted_by_project)).collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), entries.len(), "{label}: duplicate (type, scope, project)");
    assert_eq!(node.maintenance, Some(!entries.is_empty()), "{label}: boolean vs {} entries", entries.len());
    let reason = nodemaint::entity::vocab::maintenance_reason_column(&entries);
    assert_eq!(node.maintenance_reason, reason, "{label}: reason");
    entries
}

/// The virtual environment with the real OpenStack clients and this
/// repository's client package (`tests/clients/run.sh --venv` builds it once
/// and installs the package afresh).
pub fn client_venv() -> std::path::PathBuf {
    let out = Command::new("bash")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/clients/run.sh"))
        .arg("--venv")
        .output()
        .expect("run tests/clients/run.sh --venv");
    assert!(out.status.success(), "clients: {}", String::from_utf8_lossy(&out.stderr));
    std::path::PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}
