//! The one transaction runner every operation and repair uses: begin, run,
//! commit (or roll back on an error), and run the whole transaction again
//! when it failed transiently: a deadlock (on a Galera cluster also a
//! certification conflict), a serialization failure, a busy database
//! (`Error::is_transient`, decided from the server's codes).

use crate::error::{Error, Result};
use sea_orm::{DatabaseConnection, DatabaseTransaction, TransactionTrait};
use std::future::Future;
use std::sync::Arc;

/// How many times a transaction that failed transiently is run again.
pub const TRANSIENT_RETRIES: usize = 5;

/// Runs `op` in a transaction on `db` and commits what it did; an error
/// rolls everything back. `op` gets the transaction shared (it may be run
/// more than once, so it must be `Fn`); it must not keep it past its
/// future, or the commit cannot take it back.
pub async fn run<T, F, Fut>(db: &DatabaseConnection, op: F) -> Result<T>
where
    F: Fn(Arc<DatabaseTransaction>) -> Fut,
    Fut: Future<Output = Result<T>>,
{
    let mut attempt = 0;
    loop {
        attempt += 1;
        let txn = Arc::new(db.begin().await?);
        let result = op(txn.clone()).await;
        let Ok(txn) = Arc::try_unwrap(txn) else {
            // Dropping the last handle rolls it back.
            return Err(Error::Database {
                message: "internal error: an operation kept its transaction; nothing was changed".into(),
                kind: crate::error::DbFailure::Other,
            });
        };
        let result = match result {
            Ok(value) => txn.commit().await.map(|()| value).map_err(Error::from),
            Err(e) => {
                txn.rollback().await.ok();
                Err(e)
            }
        };
        match result {
            Err(e) if attempt <= TRANSIENT_RETRIES && e.is_transient() => {
                tracing::debug!(attempt, "transaction run again: {e}");
            }
            other => return other,
        }
    }
}
