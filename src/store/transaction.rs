//! The one transaction runner every operation and repair uses: begin, run,
//! commit (or roll back on an error), and run the whole transaction again
//! when it failed transiently — a deadlock (on a Galera cluster also a
//! certification conflict, reported as one), a serialization failure, a
//! busy database (`Error::is_transient`, decided from the server's codes) —
//! after an exponentially growing, jittered pause, as oslo.db's
//! `wrap_db_retry` does for Ironic. When the retries run out the caller gets
//! `Error::Contended` (HTTP 503, exit 12): nothing was written.
//!
//! A connection that died before the commit (`Error::Lost`: the server
//! restarted, or the pool handed out a connection it had not yet found
//! dead) is also run again, at once, on another connection: nothing was
//! written. One that died during the commit is not: whether the commit
//! landed is unknown, and the caller is told so.

use crate::error::{DbFailure, Error, Result};
use sea_orm::{DatabaseConnection, DatabaseTransaction, TransactionTrait};
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// How a transaction that failed transiently is run again. The defaults
/// absorb 16 clients asserting and releasing on 4 shared nodes through three
/// Galera nodes with no failed request (tests/integration/galera.rs); a
/// request that loses every time waits about 7 s in all before its 503.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryPolicy {
    /// Runs after the first (`[database] max_retries`; 0: never retry).
    pub max_retries: u32,
    /// The pause before the first retry, doubled after each
    /// (`[database] retry_interval`, seconds).
    pub interval: Duration,
    /// The longest pause (`[database] max_retry_interval`, seconds).
    pub max_interval: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy { max_retries: 20, interval: Duration::from_millis(10), max_interval: Duration::from_millis(500) }
    }
}

impl RetryPolicy {
    /// The pause before retry number `retry` (1-based): the interval doubled
    /// per retry, capped, then a random point in its upper half ("equal
    /// jitter"), so clients that collided do not collide again in step.
    pub fn pause(&self, retry: u32) -> Duration {
        let doubled =
            self.interval.saturating_mul(1u32.checked_shl(retry.saturating_sub(1).min(20)).unwrap_or(u32::MAX));
        let ceiling = doubled.min(self.max_interval);
        let half = ceiling / 2;
        half + half.mul_f64(jitter())
    }
}

/// A number in [0, 1) from the thread's random generator.
fn jitter() -> f64 {
    rand::random::<f64>()
}

static RETRIES: AtomicU64 = AtomicU64::new(0);

/// How many times a transaction whose connection died before its commit is
/// run again on another: more than a pool's connections (serve's 16 by
/// default), so one request gets through every stale connection to a
/// fresh one after a restart.
const MAX_RECONNECTS: u32 = 32;

/// Transactions run again since the process started (the benchmark reports
/// retries per 1,000 operations).
pub fn retries() -> u64 {
    RETRIES.load(Ordering::Relaxed)
}

/// Runs `op` in a transaction on `db` and commits what it did; an error
/// rolls everything back. `op` gets the transaction shared (it may be run
/// more than once, so it must be `Fn`); it must not keep it past its
/// future, or the commit cannot take it back.
pub async fn run<T, F, Fut>(db: &DatabaseConnection, retry: &RetryPolicy, op: F) -> Result<T>
where
    F: Fn(Arc<DatabaseTransaction>) -> Fut,
    Fut: Future<Output = Result<T>>,
{
    let mut retries = 0;
    let mut reconnects = 0;
    loop {
        // The error, and whether it came from the commit itself.
        let result: Result<T, (Error, bool)> = async {
            let txn = Arc::new(db.begin().await.map_err(|e| (Error::from(e), false))?);
            let result = op(txn.clone()).await;
            let Ok(txn) = Arc::try_unwrap(txn) else {
                // Dropping the last handle rolls it back.
                let message = "internal error: an operation kept its transaction; nothing was changed".into();
                return Err((Error::Database { message, kind: DbFailure::Other }, false));
            };
            match result {
                Ok(value) => txn.commit().await.map(|()| value).map_err(|e| (Error::from(e), true)),
                Err(e) => {
                    txn.rollback().await.ok();
                    Err((e, false))
                }
            }
        }
        .await;
        match result {
            Ok(value) => return Ok(value),
            Err((Error::Lost { message, .. }, true)) => {
                let message = format!(
                    "{}: it died during the commit, so whether the change was made is unknown; look before trying again",
                    message.split(';').next().unwrap_or(&message)
                );
                return Err(Error::Lost { message, committing: true });
            }
            Err((Error::Database { kind, .. }, _)) if kind.is_transient() && retries >= retry.max_retries => {
                return Err(Error::Contended(format!(
                    "the database refused this change {} time(s) as conflicting with concurrent ones ({}); nothing was written; try again",
                    retries + 1,
                    match kind {
                        DbFailure::Deadlock => "deadlock or Galera certification conflict",
                        DbFailure::Serialization => "serialization failure",
                        _ => "lock wait timeout or busy database",
                    }
                )));
            }
            // After a server restart every pooled connection is dead, and
            // each is found out (and closed by the pool) only when used: try
            // as many as a pool holds, without a pause, before giving up.
            Err((Error::Lost { message, .. }, false)) if reconnects < MAX_RECONNECTS => {
                reconnects += 1;
                tracing::debug!(attempt = reconnects, "transaction run again on another connection: {message}");
            }
            Err((e, _)) if e.is_transient() => {
                retries += 1;
                RETRIES.fetch_add(1, Ordering::Relaxed);
                let pause = retry.pause(retries);
                tracing::debug!(retry = retries, pause_ms = pause.as_millis() as u64, "transaction run again: {e}");
                tokio::time::sleep(pause).await;
            }
            Err((e, _)) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pauses_double_up_to_the_ceiling_with_jitter_in_the_upper_half() {
        let policy = RetryPolicy::default();
        for (retry, ceiling_ms) in [(1, 10), (2, 20), (3, 40), (6, 320), (7, 500), (20, 500), (40, 500)] {
            let ceiling = Duration::from_millis(ceiling_ms);
            for _ in 0..50 {
                let pause = policy.pause(retry);
                assert!(pause >= ceiling / 2 && pause <= ceiling, "retry {retry}: {pause:?} outside {ceiling:?}/2..");
            }
        }
        let spread: std::collections::BTreeSet<Duration> = (0..50).map(|_| policy.pause(6)).collect();
        assert!(spread.len() > 10, "jitter varies: {spread:?}");
    }
}
