//! nodemaint's own locks (migration, reconcile, windows) as the operations
//! take them: one way to wait for one, one message when another process
//! holds it and one error when the wait runs out. The locks themselves
//! (advisory locks, `GET_LOCK`, Galera's lease row, SQLite's lock file) are
//! `nodemaint_runtime::lock`.

use crate::error::{Error, Result};
use crate::store::db::redact;
use nodemaint_runtime::lock::{self, LockGuard, MIGRATION_LOCK, NOTIFY_LOCK, RECONCILE_LOCK, WINDOWS_LOCK};
use sea_orm::DatabaseConnection;
use std::time::Duration;

/// Default for `--lock-timeout`.
pub const DEFAULT_LOCK_TIMEOUT: Duration = Duration::from_secs(300);

/// Which of nodemaint's locks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lock {
    /// Held by `db upgrade` and `db downgrade`.
    Migration,
    /// Held by `reconcile` (not by a dry run).
    Reconcile,
    /// Held by a windows tick that has work to do.
    Windows,
    /// Held by a notification publisher that has notifications to send.
    Notify,
}

impl Lock {
    fn name(self) -> &'static str {
        match self {
            Lock::Migration => MIGRATION_LOCK,
            Lock::Reconcile => RECONCILE_LOCK,
            Lock::Windows => WINDOWS_LOCK,
            Lock::Notify => NOTIFY_LOCK,
        }
    }

    /// What a command tells its user when it starts waiting.
    pub fn waiting(self, url: &str, timeout: Duration) -> String {
        let (url, secs) = (redact(url), timeout.as_secs());
        match self {
            Lock::Migration => format!(
                "Waiting for the migration lock on {url}: another nodemaint is changing the schema (giving up after {secs}s)…"
            ),
            Lock::Reconcile => {
                format!("Waiting for another nodemaint reconcile on {url} to finish (giving up after {secs}s)…")
            }
            Lock::Windows => format!("Waiting for another windows tick on {url} to finish (giving up after {secs}s)…"),
            Lock::Notify => {
                format!("Waiting for another notification publisher on {url} to finish (giving up after {secs}s)…")
            }
        }
    }

    /// The error when the wait ran out after `waited`.
    fn busy(self, url: &str, waited: Duration) -> String {
        let (url, secs) = (redact(url), waited.as_secs());
        match self {
            Lock::Migration => format!(
                "another nodemaint held the migration lock on {url} for {secs}s; retry when it has finished, or raise --lock-timeout"
            ),
            Lock::Reconcile => format!(
                "another nodemaint reconcile held the reconcile lock on {url} for {secs}s; it is doing this work already"
            ),
            Lock::Windows => {
                format!("another nodemaint held the windows lock on {url} for {secs}s; it is doing this work already")
            }
            Lock::Notify => format!(
                "another nodemaint held the notification lock on {url} for {secs}s; it is sending the notifications already"
            ),
        }
    }
}

/// How an operation waits for its lock.
pub struct LockWait {
    /// How long to wait for the holder; zero gives up at once.
    pub timeout: Duration,
    /// Called once, when another process holds the lock and waiting starts.
    pub on_wait: Box<dyn FnOnce() + Send + Sync>,
}

impl LockWait {
    /// Waits up to `timeout`, silently.
    pub fn new(timeout: Duration) -> LockWait {
        LockWait { timeout, on_wait: Box::new(|| {}) }
    }
}

impl Default for LockWait {
    fn default() -> Self {
        LockWait::new(DEFAULT_LOCK_TIMEOUT)
    }
}

/// Takes `which` on the database at `url`, waiting as `wait` says.
pub(crate) async fn hold(db: &DatabaseConnection, url: &str, which: Lock, wait: LockWait) -> Result<LockGuard> {
    lock::acquire(url, db.get_database_backend(), which.name(), wait.timeout, wait.on_wait)
        .await
        .map_err(|e| Error::from_lock(e, |waited| which.busy(url, waited)))
}
