//! `windows tick`: releases every active entry whose `ends_at` has passed,
//! then starts every scheduled window whose `starts_at` has come (ending
//! first, so back-to-back windows of one key hand over in one tick).
//! Run from cron or by `serve --tick-interval`.
//!
//! Set-based in bounded batches, each one transaction through the
//! transaction runner: pick up to `--batch-size` due rows
//! (`store/due.rs`), lock their nodes (the one node lock every writer
//! takes), decide with a pure planner (`authority/batch.rs`: which windows
//! start, which expire) and write the plan with the batch applier
//! (`store/batches.rs`), which filters on the time again under the lock (an
//! extend or a release that got there first wins). Under the windows lock,
//! so two ticks (two cron hosts, two `serve` instances) never do the same
//! work: the second waits and finds nothing to do. With nothing due, a tick
//! is one statement of two indexed probes and takes no lock.

use crate::authority::batch;
use crate::error::Result;
use crate::notify::Settings;
use crate::schema;
use crate::store::batches;
use crate::store::due::{self, Cursor};
use crate::store::locks::{self, Lock, LockWait};
use crate::store::outbox::Outbox;
use crate::store::transaction::{self, RetryPolicy};
use chrono::NaiveDateTime;
use nodemaint_runtime::sql::now_utc;
use sea_orm::{DatabaseConnection, DatabaseTransaction};
use serde::Serialize;
use std::sync::Arc;

#[derive(Default)]
pub struct TickOptions {
    /// Windows per transaction; `None`: the set writers' default for the backend.
    pub batch_size: Option<i64>,
    /// Stop after ending and starting this many windows.
    pub max_count: Option<u64>,
    /// Count what is due; write nothing.
    pub dry_run: bool,
    /// How to wait for the windows lock.
    pub lock: LockWait,
    pub retry: RetryPolicy,
    /// The caller has checked the schema (`serve` does once, at start), so
    /// each tick skips the catalog queries that check it.
    pub schema_checked: bool,
    /// Notify each window started and expired (`None`: notifications off).
    pub notify: Option<Settings>,
}

#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct TickReport {
    pub dry_run: bool,
    /// Active windows released at their end (with `--dry-run`: due to be).
    pub expired: u64,
    /// Scheduled windows made active (with `--dry-run`: due to be).
    pub started: u64,
    /// Scheduled windows that came due but could not start, each with why
    /// (recorded in the node's history, and removed from the schedule).
    pub not_started: Vec<String>,
    /// Still due after this run (`--max-count` stopped it).
    pub remaining: u64,
}

/// One tick under the windows lock (see the module docs).
pub async fn tick(db: &DatabaseConnection, url: &str, mut options: TickOptions) -> Result<TickReport> {
    if !options.schema_checked {
        schema::require_maintenance_table(db, url).await?;
    }
    let now = now_utc();
    if options.dry_run {
        let (expired, started) = (due::count_expired(db, now).await?, due::count_starting(db, now).await?);
        return Ok(TickReport { dry_run: true, expired, started, ..TickReport::default() });
    }
    if !due::any_due(db, now).await? {
        return Ok(TickReport::default());
    }
    let guard = locks::hold(db, url, Lock::Windows, std::mem::take(&mut options.lock)).await?;
    let result = run(db, &options).await;
    let released = guard.release().await;
    let report = result?;
    released?;
    if report.expired + report.started > 0 || !report.not_started.is_empty() {
        tracing::info!(
            expired = report.expired,
            started = report.started,
            not_started = report.not_started.len(),
            "windows tick"
        );
    }
    Ok(report)
}

async fn run(db: &DatabaseConnection, options: &TickOptions) -> Result<TickReport> {
    let size = options.batch_size.unwrap_or_else(|| batches::default_batch_size(db.get_database_backend()));
    let batch = u64::try_from(size.max(1)).unwrap_or(u64::MAX);
    let mut budget = options.max_count.unwrap_or(u64::MAX);
    let mut report = TickReport::default();
    // The time of the whole run: what comes due while it runs is the next tick's.
    let now = now_utc();
    let outbox = options.notify.as_ref().map(Outbox::new);
    let outbox = outbox.as_ref();
    let mut cursor: Cursor = None;
    while budget > 0 {
        let limit = batch.min(budget);
        let expired =
            |txn: Arc<DatabaseTransaction>| async move { expire_batch(&txn, now, limit, cursor, outbox).await };
        let (done, next) = transaction::run(db, &options.retry, expired).await?;
        report.expired += done;
        budget -= done;
        match next {
            Some(_) => cursor = next,
            None => break,
        }
    }
    let mut cursor: Cursor = None;
    while budget > 0 {
        let limit = batch.min(budget);
        let started =
            |txn: Arc<DatabaseTransaction>| async move { start_batch(&txn, now, limit, cursor, outbox).await };
        let (started, not_started, next) = transaction::run(db, &options.retry, started).await?;
        budget -= started + not_started.len() as u64;
        report.started += started;
        report.not_started.extend(not_started);
        match next {
            Some(_) => cursor = next,
            None => break,
        }
    }
    if budget == 0 {
        report.remaining = due::count_expired(db, now).await? + due::count_starting(db, now).await?;
    }
    Ok(report)
}

/// Ends up to `limit` active windows whose end has passed, after `cursor`;
/// returns how many, and where the next batch starts (`None`: no more).
async fn expire_batch(
    txn: &DatabaseTransaction,
    now: NaiveDateTime,
    limit: u64,
    cursor: Cursor,
    outbox: Option<&Outbox>,
) -> Result<(u64, Cursor)> {
    let picked = due::pick_expired(txn, now, limit, cursor).await?;
    if picked.rows.is_empty() {
        return Ok((0, None));
    }
    let plan = batch::expire(&picked.rows, now);
    batches::lock(txn, plan.resync.iter().copied()).await?;
    let done = batches::apply(txn, &plan, outbox).await?;
    Ok((done, picked.next))
}

/// Starts up to `limit` scheduled windows whose start has come, after
/// `cursor`; returns how many started, why the others could not, and where
/// the next batch starts.
async fn start_batch(
    txn: &DatabaseTransaction,
    now: NaiveDateTime,
    limit: u64,
    cursor: Cursor,
    outbox: Option<&Outbox>,
) -> Result<(u64, Vec<String>, Cursor)> {
    let picked = due::pick_starting(txn, now, limit, cursor).await?;
    if picked.rows.is_empty() {
        return Ok((0, Vec::new(), None));
    }
    let nodes = batches::lock(txn, picked.rows.iter().map(|(_, node)| *node)).await?;
    let ids: Vec<i32> = picked.rows.iter().map(|(id, _)| *id).collect();
    let due = due::windows_due(txn, &ids, now).await?;
    let held = if due.is_empty() { Vec::new() } else { due::entries_on(txn, &nodes).await? };
    let (plan, refused) = batch::start_due(&due, &held, now);
    batches::apply(txn, &plan, outbox).await?;
    Ok((plan.start.len() as u64, refused.iter().map(ToString::to_string).collect(), picked.next))
}
