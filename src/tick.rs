//! `windows tick`: releases every active entry whose `ends_at` has passed,
//! then starts every scheduled window whose `starts_at` has come (ending
//! first, so back-to-back windows of one key hand over in one tick).
//! Run from cron or by `serve --tick-interval`.
//!
//! Set-based in bounded batches, each one transaction through the
//! transaction runner: pick up to `--batch-size` due rows, lock their nodes
//! (the one node lock every writer takes), and filter on the time again
//! under the lock (an extend or a release that got there first wins). An
//! expiry is then two `INSERT … SELECT` of the events (typed rows, then
//! history rows with their text built by the database, see
//! [`history::record_for_entries`]) and one `DELETE … IN`; a start reads the due windows (each is checked against the node's
//! entries), copies them with one `INSERT … SELECT` from the schedule and
//! writes a multi-row history insert. Both end with one set-based
//! invariant write. Under the windows lock, so two ticks (two cron hosts,
//! two `serve` instances) never do the same work: the second waits and finds
//! nothing to do. With nothing due, a tick is one statement of two indexed
//! probes and takes no lock.

use crate::authority::caller::Caller;
use crate::authority::event::{EventKind, MaintenanceEvent};
use crate::error::Result;
use crate::schema;
use crate::store::history;
use crate::store::invariant;
use crate::store::locks::{self, Lock, LockWait};
use crate::store::nodes;
use crate::store::transaction::{self, RetryPolicy};
use chrono::NaiveDateTime;
use nodemaint_entity::vocab::iso8601;
use nodemaint_entity::{node_maintenance, node_maintenance_schedule as schedule};
use nodemaint_runtime::drift::LOAD_CHUNK;
use nodemaint_runtime::sql::{now_utc, quote, stmt};
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, DatabaseConnection, DatabaseTransaction, EntityTrait, PaginatorTrait,
    QueryFilter, QueryOrder, QuerySelect, Value,
};
use serde::Serialize;
use std::collections::BTreeSet;

/// The identity the schedule acts as in history (like the conductor's).
pub const WINDOWS_ACTOR: &str = "nodemaint-windows";

/// The note on a window's expiry event: the schedule released it.
pub const EXPIRED_NOTE: &str = "the window ended; released by the schedule";

/// The schedule's service identity: system scope, no project.
pub fn scheduler() -> Caller {
    Caller::system(WINDOWS_ACTOR, &["admin", "service"])
}

#[derive(Default)]
pub struct TickOptions {
    /// Windows per transaction; `None`: reconcile's default for the backend.
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
        let (expired, started) = (count_expired(db, now).await?, count_due(db, now).await?);
        return Ok(TickReport { dry_run: true, expired, started, ..TickReport::default() });
    }
    if !any_due(db, now).await? {
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

/// Where a walk over due rows has got to: the last `(time, id)` a batch
/// picked. Each batch starts after it, so it never reads again what earlier
/// batches deleted (on PostgreSQL those index entries stay until a vacuum).
type Cursor = Option<(NaiveDateTime, i32)>;

/// `column` strictly after `cursor` in `(column, id)` order.
fn after(column: impl ColumnTrait, id: impl ColumnTrait, cursor: Cursor) -> Condition {
    match cursor {
        None => Condition::all(),
        Some((at, last)) => {
            Condition::any().add(column.gt(at)).add(Condition::all().add(column.eq(at)).add(id.gt(last)))
        }
    }
}

async fn run(db: &DatabaseConnection, options: &TickOptions) -> Result<TickReport> {
    let size = options.batch_size.unwrap_or_else(|| crate::reconcile::default_batch_size(db.get_database_backend()));
    let batch = u64::try_from(size.max(1)).unwrap_or(u64::MAX);
    let mut budget = options.max_count.unwrap_or(u64::MAX);
    let mut report = TickReport::default();
    // The time of the whole run: what comes due while it runs is the next tick's.
    let now = now_utc();
    let mut cursor: Cursor = None;
    while budget > 0 {
        let limit = batch.min(budget);
        let (done, next) =
            transaction::run(db, &options.retry, |txn| async move { expire_batch(&txn, now, limit, cursor).await })
                .await?;
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
        let (started, not_started, next) =
            transaction::run(db, &options.retry, |txn| async move { start_batch(&txn, now, limit, cursor).await })
                .await?;
        budget -= started + not_started.len() as u64;
        report.started += started;
        report.not_started.extend(not_started);
        match next {
            Some(_) => cursor = next,
            None => break,
        }
    }
    if budget == 0 {
        report.remaining = count_expired(db, now).await? + count_due(db, now).await?;
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
) -> Result<(u64, Cursor)> {
    use node_maintenance::Column as C;
    let picked: Vec<(i32, i32, Option<NaiveDateTime>)> = node_maintenance::Entity::find()
        .select_only()
        .columns([C::Id, C::NodeId, C::EndsAt])
        .filter(C::EndsAt.lte(now))
        .filter(after(C::EndsAt, C::Id, cursor))
        .order_by_asc(C::EndsAt)
        .order_by_asc(C::Id)
        .limit(limit)
        .into_tuple()
        .all(txn)
        .await?;
    let next = picked.last().filter(|_| picked.len() as u64 == limit).and_then(|(id, _, at)| Some(((*at)?, *id)));
    if picked.is_empty() {
        return Ok((0, None));
    }
    let node_ids = lock_nodes(txn, picked.iter().map(|(_, node, _)| *node)).await?;
    let backend = txn.get_database_backend();
    let actor = scheduler();
    let mut done = 0;
    for chunk in picked.chunks(LOAD_CHUNK) {
        // Both statements filter on the end again under the lock, so an
        // extend or a release that came first wins; they see the same rows.
        let marks = vec!["?"; chunk.len()].join(", ");
        let values = || {
            let mut values: Vec<Value> = chunk.iter().map(|(id, _, _)| Value::from(*id)).collect();
            values.push(now.into());
            values
        };
        let due = format!("m.id IN ({marks}) AND m.ends_at <= ?");
        history::record_for_entries(txn, EventKind::Expired, &actor, Some(EXPIRED_NOTE), now, &due, values()).await?;
        let deleted = txn
            .execute_raw(stmt(
                backend,
                &format!("DELETE FROM node_maintenance WHERE id IN ({marks}) AND ends_at <= ?"),
                values(),
            ))
            .await?;
        done += deleted.rows_affected();
    }
    for chunk in node_ids.chunks(LOAD_CHUNK) {
        invariant::resync(txn, chunk, now).await?;
    }
    Ok((done, next))
}

/// Starts up to `limit` scheduled windows whose start has come, after
/// `cursor`; returns how many started, why the others could not, and where
/// the next batch starts.
async fn start_batch(
    txn: &DatabaseTransaction,
    now: NaiveDateTime,
    limit: u64,
    cursor: Cursor,
) -> Result<(u64, Vec<String>, Cursor)> {
    use schedule::Column as C;
    let picked: Vec<(i32, i32, NaiveDateTime)> = schedule::Entity::find()
        .select_only()
        .columns([C::Id, C::NodeId, C::StartsAt])
        .filter(C::StartsAt.lte(now))
        .filter(after(C::StartsAt, C::Id, cursor))
        .order_by_asc(C::StartsAt)
        .order_by_asc(C::Id)
        .limit(limit)
        .into_tuple()
        .all(txn)
        .await?;
    let next = picked.last().filter(|_| picked.len() as u64 == limit).map(|(id, _, at)| (*at, *id));
    if picked.is_empty() {
        return Ok((0, Vec::new(), None));
    }
    lock_nodes(txn, picked.iter().map(|(_, node, _)| *node)).await?;
    let actor = scheduler();
    let backend = txn.get_database_backend();
    let (mut started, mut refused) = (0u64, Vec::new());
    let mut touched = BTreeSet::new();
    for chunk in picked.chunks(LOAD_CHUNK) {
        let due = schedule::Entity::find()
            .filter(schedule::Column::Id.is_in(chunk.iter().map(|(id, _, _)| *id)))
            .filter(schedule::Column::StartsAt.lte(now))
            .order_by_asc(schedule::Column::StartsAt)
            .order_by_asc(schedule::Column::Id)
            .all(txn)
            .await?;
        if due.is_empty() {
            continue;
        }
        let held = node_maintenance::Entity::find()
            .filter(node_maintenance::Column::NodeId.is_in(due.iter().map(|w| w.node_id)))
            .all(txn)
            .await?;
        let mut taken: BTreeSet<(i32, String, String, String)> = held
            .iter()
            .map(|e| (e.node_id, e.entry_type.clone(), e.scope.clone(), e.asserted_by_project.clone()))
            .collect();
        let (mut start, mut events) = (Vec::new(), Vec::new());
        for w in &due {
            let key = (w.node_id, w.entry_type.clone(), w.scope.clone(), w.asserted_by_project.clone());
            let why = if w.ends_at <= now {
                Some(format!("it ended at {} before a tick could start it", iso8601(w.ends_at)))
            } else if taken.contains(&key) {
                Some("an active entry of the same type, scope and project holds the node".to_owned())
            } else {
                None
            };
            match why {
                Some(why) => {
                    let note = format!("did not start: {why}");
                    events.push(MaintenanceEvent::new(
                        EventKind::Cancelled,
                        &w.as_entry(now),
                        &actor,
                        Some(&note),
                        now,
                    ));
                    refused.push(format!("{} on node id {}: {why}", w.uuid, w.node_id));
                }
                None => {
                    taken.insert(key);
                    touched.insert(w.node_id);
                    events.push(MaintenanceEvent::new(
                        EventKind::Started,
                        &w.as_entry(now),
                        &actor,
                        Some("window started by the schedule"),
                        now,
                    ));
                    start.push(w.id);
                }
            }
        }
        if !start.is_empty() {
            let ty = quote(backend, "type");
            let marks = vec!["?"; start.len()].join(", ");
            let mut values: Vec<Value> = vec![now.into()];
            values.extend(start.iter().map(|id| Value::from(*id)));
            txn.execute_raw(stmt(
                backend,
                &format!(
                    "INSERT INTO node_maintenance (uuid, node_id, {ty}, reason, scope, asserted_by, \
                     asserted_by_project, asserted_at, extra, version, created_at, ends_at) \
                     SELECT uuid, node_id, {ty}, reason, scope, asserted_by, asserted_by_project, ?, extra, version, \
                     created_at, ends_at FROM node_maintenance_schedule WHERE id IN ({marks})"
                ),
                values,
            ))
            .await?;
            started += start.len() as u64;
        }
        schedule::Entity::delete_many().filter(schedule::Column::Id.is_in(due.iter().map(|w| w.id))).exec(txn).await?;
        history::record_all(txn, &events).await?;
    }
    let touched: Vec<i32> = touched.into_iter().collect();
    for chunk in touched.chunks(LOAD_CHUNK) {
        invariant::resync(txn, chunk, now).await?;
    }
    Ok((started, refused, next))
}

/// Locks the distinct nodes of `ids`, in id order; returns them.
async fn lock_nodes(txn: &DatabaseTransaction, ids: impl Iterator<Item = i32>) -> Result<Vec<i32>> {
    let ids: Vec<i32> = ids.collect::<BTreeSet<i32>>().into_iter().collect();
    for chunk in ids.chunks(LOAD_CHUNK) {
        nodes::lock(txn, nodes::Locking::Ids(chunk)).await?;
    }
    Ok(ids)
}

/// Whether any window is due: one statement of two indexed probes. The
/// `ORDER BY` keeps them indexed: `serve` runs this prepared statement every
/// interval, and PostgreSQL's generic plan for `ends_at <= $1 LIMIT 1`
/// guesses a third of the rows match and scans the table (53 ms at a
/// million entries, none due, against 0.05 ms through the index).
async fn any_due(db: &DatabaseConnection, now: NaiveDateTime) -> Result<bool> {
    let backend = db.get_database_backend();
    let probe = stmt(
        backend,
        "SELECT (SELECT id FROM node_maintenance WHERE ends_at <= ? ORDER BY ends_at LIMIT 1), \
         (SELECT id FROM node_maintenance_schedule WHERE starts_at <= ? ORDER BY starts_at LIMIT 1)",
        vec![Value::from(now), Value::from(now)],
    );
    let Some(row) = db.query_one_raw(probe).await? else { return Ok(false) };
    let ending: Option<i32> = row.try_get_by_index(0)?;
    let starting: Option<i32> = row.try_get_by_index(1)?;
    Ok(ending.is_some() || starting.is_some())
}

async fn count_expired(db: &DatabaseConnection, now: NaiveDateTime) -> Result<u64> {
    Ok(node_maintenance::Entity::find().filter(node_maintenance::Column::EndsAt.lte(now)).count(db).await?)
}

async fn count_due(db: &DatabaseConnection, now: NaiveDateTime) -> Result<u64> {
    Ok(schedule::Entity::find().filter(schedule::Column::StartsAt.lte(now)).count(db).await?)
}
