//! A lock around schema changes: sea-orm-migration has none, and two
//! deployers running `db upgrade` at once must not both apply a migration.
//!
//! - PostgreSQL: a session advisory lock on a dedicated connection;
//! - MySQL/MariaDB: `GET_LOCK` on a dedicated connection;
//! - SQLite: an OS lock on a file beside the database (`<db>.nodemaint-migrate.lock`),
//!   because SQLite's own locks cover one transaction, not a whole run.
//!
//! The server-side locks die with their connection, so a killed process never
//! leaves the lock held.
//!
//! On a MariaDB Galera cluster `GET_LOCK` holds on one node only, so a second
//! process connected to another node would take it too. There the lock is a
//! lease row in `nodemaint_locks` (created on first use): taken by an
//! `INSERT … ON DUPLICATE KEY UPDATE` that succeeds only when the row is
//! absent or its lease has run out, which the cluster certifies like any
//! write (two nodes taking it at once: one loses and sees the other's row);
//! renewed while held, deleted on release. A killed holder's lease runs out
//! after [`LEASE`], and the next process takes it. The lease is measured by
//! the database nodes' clocks, which must agree to well within it (NTP).

use sea_orm::{ConnectOptions, ConnectionTrait, Database, DatabaseConnection, DbBackend, DbErr, Statement};
use std::fs::{File, OpenOptions, TryLockError};
use std::time::{Duration, Instant};

/// The lock `db upgrade` and `db downgrade` take.
pub const MIGRATION_LOCK: &str = "nodemaint.migrate";
/// The lock `reconcile` takes, so two never repair the same drift.
pub const RECONCILE_LOCK: &str = "nodemaint.reconcile";
/// The lock `windows tick` holds while it starts and ends windows.
pub const WINDOWS_LOCK: &str = "nodemaint.windows";
/// The lock a notification publisher holds while it sends, so two never
/// send one notification twice.
pub const NOTIFY_LOCK: &str = "nodemaint.notify";

#[derive(Debug)]
pub enum LockError {
    /// Another holder kept the lock past the timeout.
    Timeout {
        name: String,
        waited: Duration,
    },
    Db(DbErr),
    Io(String),
}

impl From<DbErr> for LockError {
    fn from(e: DbErr) -> Self {
        LockError::Db(e)
    }
}

/// How long a Galera lease lasts without renewal: the longest a killed
/// holder keeps others waiting. Renewed every quarter of it.
pub const LEASE: Duration = Duration::from_secs(20);

/// The lease table's name (Galera only).
pub const LEASE_TABLE: &str = "nodemaint_locks";

enum Held {
    Server {
        conn: DatabaseConnection,
        unlock: Statement,
    },
    /// A Galera lease, and the task renewing it (aborted on drop).
    Lease {
        conn: DatabaseConnection,
        release: Statement,
        renewal: tokio::task::JoinHandle<()>,
    },
    File(#[allow(dead_code)] File),
    Nothing,
}

/// A held lock; call [`LockGuard::release`] when done (dropping it also
/// releases, when the connection or file closes).
pub struct LockGuard {
    held: Held,
}

impl LockGuard {
    pub async fn release(mut self) -> Result<(), DbErr> {
        match std::mem::replace(&mut self.held, Held::Nothing) {
            Held::Server { conn, unlock } => {
                conn.execute_raw(unlock).await?;
                conn.close().await?;
            }
            Held::Lease { conn, release, renewal } => {
                renewal.abort();
                conn.execute_raw(release).await?;
                conn.close().await?;
            }
            Held::File(_) | Held::Nothing => {}
        }
        tracing::debug!("lock released");
        Ok(())
    }
}

impl Drop for LockGuard {
    fn drop(&mut self) {
        // Not released (an error or an interrupt): stop renewing, so the
        // lease runs out and the next process takes it.
        if let Held::Lease { renewal, .. } = &self.held {
            renewal.abort();
        }
    }
}

/// A stable 64-bit key for a PostgreSQL advisory lock (FNV-1a of the name).
fn advisory_key(name: &str) -> i64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in name.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash as i64
}

/// The file an SQLite URL names, or `None` for an in-memory database.
pub fn sqlite_path(url: &str) -> Option<String> {
    let rest = url.strip_prefix("sqlite://").or_else(|| url.strip_prefix("sqlite:"))?;
    let path = rest.split('?').next().unwrap_or("");
    if path.is_empty() || path == ":memory:" || url.contains("mode=memory") { None } else { Some(path.to_owned()) }
}

/// The lock file for lock `name` beside the SQLite database at `path`.
pub fn lock_file(path: &str, name: &str) -> String {
    format!("{path}.{}.lock", name.replace('.', "-"))
}

/// Takes the lock `name` for the database at `url`, waiting at most
/// `timeout`. `on_wait` is called once, when the lock is found held.
pub async fn acquire(
    url: &str,
    backend: DbBackend,
    name: &str,
    timeout: Duration,
    on_wait: impl FnOnce(),
) -> Result<LockGuard, LockError> {
    let start = Instant::now();
    let mut on_wait = Some(on_wait);
    let mut waited = || {
        if let Some(f) = on_wait.take() {
            f();
        }
    };
    let poll = Duration::from_millis(200);
    match backend {
        DbBackend::Sqlite => {
            let Some(path) = sqlite_path(url) else {
                return Ok(LockGuard { held: Held::Nothing });
            };
            let lock_path = lock_file(&path, name);
            let file = OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&lock_path)
                .map_err(|e| LockError::Io(format!("cannot open lock file {lock_path}: {e}")))?;
            loop {
                match file.try_lock() {
                    Ok(()) => {
                        tracing::info!(lock = name, file = %lock_path, waited_ms = start.elapsed().as_millis() as u64, "lock taken");
                        return Ok(LockGuard { held: Held::File(file) });
                    }
                    Err(TryLockError::WouldBlock) => {}
                    Err(TryLockError::Error(e)) => {
                        return Err(LockError::Io(format!("cannot lock {lock_path}: {e}")));
                    }
                }
                if start.elapsed() >= timeout {
                    return Err(LockError::Timeout { name: name.to_owned(), waited: start.elapsed() });
                }
                waited();
                tokio::time::sleep(poll).await;
            }
        }
        backend => {
            let mut options = ConnectOptions::new(url.to_owned());
            options.max_connections(1).min_connections(1).sqlx_logging(false);
            let conn = Database::connect(options).await?;
            if backend == DbBackend::MySql && is_galera(&conn).await? {
                return acquire_lease(conn, name, timeout, start, waited).await;
            }
            let (try_lock, unlock) = match backend {
                DbBackend::Postgres => {
                    let key = advisory_key(name);
                    (format!("SELECT pg_try_advisory_lock({key})"), format!("SELECT pg_advisory_unlock({key})"))
                }
                _ => {
                    let quoted = name.replace('\'', "''");
                    (format!("SELECT GET_LOCK('{quoted}', 0)"), format!("SELECT RELEASE_LOCK('{quoted}')"))
                }
            };
            loop {
                let row = conn.query_one_raw(Statement::from_string(backend, try_lock.clone())).await?;
                let got = match row {
                    Some(row) => row
                        .try_get_by_index::<bool>(0)
                        .or_else(|_| row.try_get_by_index::<Option<i64>>(0).map(|v| v == Some(1)))?,
                    None => false,
                };
                if got {
                    tracing::info!(lock = name, waited_ms = start.elapsed().as_millis() as u64, "lock taken");
                    let unlock = Statement::from_string(backend, unlock);
                    return Ok(LockGuard { held: Held::Server { conn, unlock } });
                }
                if start.elapsed() >= timeout {
                    let _ = conn.close().await;
                    return Err(LockError::Timeout { name: name.to_owned(), waited: start.elapsed() });
                }
                waited();
                tokio::time::sleep(poll).await;
            }
        }
    }
}

/// Whether the MySQL server behind `conn` is a Galera node (`wsrep_on`).
pub async fn is_galera(conn: &DatabaseConnection) -> Result<bool, DbErr> {
    let row = conn.query_one_raw(Statement::from_string(DbBackend::MySql, "SHOW VARIABLES LIKE 'wsrep_on'")).await?;
    Ok(row.and_then(|r| r.try_get_by_index::<String>(1).ok()).is_some_and(|v| v.eq_ignore_ascii_case("ON")))
}

/// The Galera form of [`acquire`]: the lease row (see the module docs).
async fn acquire_lease(
    conn: DatabaseConnection,
    name: &str,
    timeout: Duration,
    start: Instant,
    mut waited: impl FnMut(),
) -> Result<LockGuard, LockError> {
    let sql = |text: &str, values: Vec<sea_orm::Value>| Statement::from_sql_and_values(DbBackend::MySql, text, values);
    // Causal reads on this connection too: the row another node just wrote is seen.
    conn.execute_unprepared("SET SESSION wsrep_sync_wait = 1").await?;
    conn.execute_unprepared(&format!(
        "CREATE TABLE IF NOT EXISTS {LEASE_TABLE} (name VARCHAR(64) NOT NULL PRIMARY KEY, \
         owner VARCHAR(64) NOT NULL, expires_at DATETIME(6) NOT NULL) ENGINE=InnoDB"
    ))
    .await?;
    let owner = format!("{}:{}", std::process::id(), uuid::Uuid::new_v4().simple());
    let lease = LEASE.as_secs();
    // MySQL applies the assignments left to right: the owner changes only
    // when the lease ran out (or is ours), and the expiry only when the
    // owner (as just set) is us.
    let take = sql(
        &format!(
            "INSERT INTO {LEASE_TABLE} (name, owner, expires_at) VALUES (?, ?, NOW(6) + INTERVAL {lease} SECOND) \
             ON DUPLICATE KEY UPDATE owner = IF(expires_at < NOW(6), VALUES(owner), owner), \
             expires_at = IF(owner = VALUES(owner), VALUES(expires_at), expires_at)"
        ),
        vec![name.into(), owner.clone().into()],
    );
    let holder = sql(&format!("SELECT owner FROM {LEASE_TABLE} WHERE name = ?"), vec![name.into()]);
    let poll = Duration::from_millis(200);
    loop {
        match conn.execute_raw(take.clone()).await {
            Ok(_) => {}
            // Another node took it at the same moment and won certification.
            Err(e) if is_deadlock(&e) => {}
            Err(e) => return Err(e.into()),
        }
        let current = conn.query_one_raw(holder.clone()).await?.and_then(|r| r.try_get_by_index::<String>(0).ok());
        if current.as_deref() == Some(owner.as_str()) {
            tracing::info!(
                lock = name,
                lease_s = lease,
                waited_ms = start.elapsed().as_millis() as u64,
                "lease taken (Galera)"
            );
            let renew = sql(
                &format!(
                    "UPDATE {LEASE_TABLE} SET expires_at = NOW(6) + INTERVAL {lease} SECOND WHERE name = ? AND owner = ?"
                ),
                vec![name.into(), owner.clone().into()],
            );
            let renewal = tokio::spawn(renew_lease(conn.clone(), renew, name.to_owned()));
            let release = sql(
                &format!("DELETE FROM {LEASE_TABLE} WHERE name = ? AND owner = ?"),
                vec![name.into(), owner.into()],
            );
            return Ok(LockGuard { held: Held::Lease { conn, release, renewal } });
        }
        if start.elapsed() >= timeout {
            let _ = conn.close().await;
            return Err(LockError::Timeout { name: name.to_owned(), waited: start.elapsed() });
        }
        waited();
        tokio::time::sleep(poll).await;
    }
}

/// Renews the lease every quarter of [`LEASE`] until aborted.
async fn renew_lease(conn: DatabaseConnection, renew: Statement, name: String) {
    loop {
        tokio::time::sleep(LEASE / 4).await;
        match conn.execute_raw(renew.clone()).await {
            Ok(done) if done.rows_affected() == 1 => {}
            Ok(_) => {
                tracing::error!(lock = %name, "the lease was lost (it ran out before it was renewed); another process may hold it now");
                return;
            }
            Err(e) => tracing::warn!(lock = %name, "renewing the lease failed: {e}; trying again"),
        }
    }
}

/// MySQL error 1213: a deadlock, or a Galera certification conflict.
fn is_deadlock(e: &DbErr) -> bool {
    use sea_orm::RuntimeErr;
    let (DbErr::Exec(RuntimeErr::SqlxError(inner)) | DbErr::Query(RuntimeErr::SqlxError(inner))) = e else {
        return false;
    };
    match inner.as_ref() {
        sea_orm::sqlx::Error::Database(db) => {
            db.try_downcast_ref::<sea_orm::sqlx::mysql::MySqlDatabaseError>().is_some_and(|m| m.number() == 1213)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_paths_are_read_from_urls() {
        assert_eq!(sqlite_path("sqlite://nodemaint.db?mode=rwc").as_deref(), Some("nodemaint.db"));
        assert_eq!(sqlite_path("sqlite:///tmp/x.db").as_deref(), Some("/tmp/x.db"));
        assert_eq!(sqlite_path("sqlite::memory:"), None);
        assert_eq!(sqlite_path("postgres://h/db"), None);
    }

    #[test]
    fn advisory_keys_are_stable() {
        assert_eq!(advisory_key(MIGRATION_LOCK), advisory_key("nodemaint.migrate"));
        assert_ne!(advisory_key(MIGRATION_LOCK), advisory_key(RECONCILE_LOCK));
        assert_eq!(lock_file("/x/n.db", RECONCILE_LOCK), "/x/n.db.nodemaint-reconcile.lock");
    }
}
