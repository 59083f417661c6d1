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

use sea_orm::{ConnectOptions, ConnectionTrait, Database, DatabaseConnection, DbBackend, DbErr, Statement};
use std::fs::{File, OpenOptions, TryLockError};
use std::time::{Duration, Instant};

/// The lock `db upgrade` and `db downgrade` take.
pub const MIGRATION_LOCK: &str = "nodemaint.migrate";
/// The lock `reconcile` takes, so two never repair the same drift.
pub const RECONCILE_LOCK: &str = "nodemaint.reconcile";

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

enum Held {
    Server { conn: DatabaseConnection, unlock: Statement },
    File(#[allow(dead_code)] File),
    Nothing,
}

/// A held lock; call [`LockGuard::release`] when done (dropping it also
/// releases, when the connection or file closes).
pub struct LockGuard {
    held: Held,
}

impl LockGuard {
    pub async fn release(self) -> Result<(), DbErr> {
        if let Held::Server { conn, unlock } = self.held {
            conn.execute_raw(unlock).await?;
            conn.close().await?;
        }
        tracing::debug!("lock released");
        Ok(())
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
