//! `serve --notify-interval`: the notification publisher
//! (`nodemaint::publish`) run in the server, so a deployment that runs only
//! the API needs no cron. Each round looks for unsent notifications with
//! one indexed read, and only then takes the notification lock without
//! waiting; a server that finds it held leaves the round to the holder, so
//! several servers never send one notification twice. While the bus is
//! down, rounds back off to `MAX_BACKOFF`; the notifications wait in the
//! outbox and go out in order when it returns.

use nodemaint::db::LockWait;
use nodemaint::publish::{PublishOptions, Publisher};
use sea_orm::DatabaseConnection;
use std::time::Duration;

/// The longest pause between two rounds while sending fails.
const MAX_BACKOFF: Duration = Duration::from_secs(10);

/// Runs the publisher every `interval` until the task is aborted.
pub fn spawn(
    db: DatabaseConnection,
    url: String,
    interval: Duration,
    mut publisher: Publisher,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut pause = interval;
        loop {
            tokio::time::sleep(pause).await;
            match nodemaint::publish::has_unsent(&db).await {
                Ok(false) => continue,
                Ok(true) => {}
                Err(e) => {
                    tracing::warn!("notifications: cannot read the outbox: {}", e.message());
                    continue;
                }
            }
            let options = PublishOptions { lock: LockWait::new(Duration::ZERO), ..PublishOptions::default() };
            match publisher.publish(&db, &url, options).await {
                Ok(report) => {
                    if pause > interval {
                        tracing::info!("notifications: sending again; {} sent", report.sent);
                    }
                    pause = interval;
                }
                Err(nodemaint::Error::LockTimeout(_)) => tracing::debug!("notifications: another process is sending"),
                Err(e) => {
                    pause = (pause * 2).clamp(interval, MAX_BACKOFF.max(interval));
                    tracing::warn!("notifications not sent: {}; trying again in {}s", e.message(), pause.as_secs());
                }
            }
        }
    })
}
