//! `serve --tick-interval`: the windows tick (`nodemaint::tick`) run in the
//! server, so a deployment that runs only the API needs no cron. Several
//! servers may run it: each round takes the windows lock without waiting,
//! and a server that finds it held leaves that round to the holder.

use nodemaint::RetryPolicy;
use nodemaint::db::LockWait;
use nodemaint::tick::{self, TickOptions};
use sea_orm::DatabaseConnection;
use std::time::Duration;

/// Runs the tick every `interval` until the task is aborted.
pub fn spawn(
    db: DatabaseConnection,
    url: String,
    interval: Duration,
    retry: RetryPolicy,
    notify: Option<nodemaint::notify::Settings>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut every = tokio::time::interval(interval);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            every.tick().await;
            let lock = LockWait::new(Duration::ZERO);
            let notify = notify.clone();
            let options = TickOptions { lock, retry, schema_checked: true, notify, ..TickOptions::default() };
            match tick::tick(&db, &url, options).await {
                Ok(_) => {}
                Err(nodemaint::Error::LockTimeout(_)) => tracing::debug!("windows tick: another process is ticking"),
                Err(e) => {
                    tracing::warn!("windows tick failed: {}; trying again in {}s", e.message(), interval.as_secs())
                }
            }
        }
    })
}
