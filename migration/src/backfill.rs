//! The set-based legacy backfill: one `legacy` entry (and one history event)
//! per node with `maintenance = true` that has no legacy entry yet.
//!
//! Run by the backfill migration on `db upgrade` and, later, by `reconcile`
//! after the release pin lifts. It works in primary-key ranges of
//! `batch_size` node ids: two `INSERT … SELECT` statements per range, the
//! database generating every uuid, so memory and round trips do not grow
//! with the fleet. Nodes that already have their legacy entry are skipped,
//! which makes it idempotent and resumable.

use nodemaint_runtime::progress::{NoProgress, Progress};
use nodemaint_runtime::sql::{SQLITE_UUID_V7_EXPR, concat, now_utc, quote, stmt, uuid_v4_expr};

// Frozen here, as this migration wrote them: a later vocabulary change must
// not change what an old migration does.
/// The type the backfill gives its entries.
pub const LEGACY: &str = "legacy";
/// `node_history.event_type` of the events it writes.
const EVENT_TYPE_MAINTENANCE: &str = "maintenance";
use sea_orm::{ConnectionTrait, DbBackend, DbErr, Value};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// `asserted_by` of the entries the upgrade migration backfills.
pub const MIGRATION_ASSERTER: &str = "nodemaint-migration";
/// Default number of node ids per batch on PostgreSQL and MySQL/MariaDB.
/// The whole backfill is one transaction on these servers, so a batch's
/// width only decides how many statements it takes; fewer, wider ones were
/// faster on both (figures in git history).
pub const DEFAULT_BATCH_SIZE: i64 = 100_000;
/// Default on SQLite, the embedded engine: with the 16 MiB page cache its
/// connections get, width matters little for time and costs memory (a wider
/// batch raised the peak resident set without a faster run), and with
/// time-ordered uuids ([`SQLITE_UUID_V7_EXPR`]) a batch's statement journal
/// copies few existing index pages. Figures in git history.
pub const SQLITE_DEFAULT_BATCH_SIZE: i64 = 50_000;

/// The default batch for `backend`.
pub fn default_batch_size(backend: DbBackend) -> i64 {
    match backend {
        DbBackend::Sqlite => SQLITE_DEFAULT_BATCH_SIZE,
        _ => DEFAULT_BATCH_SIZE,
    }
}
/// Longest reason copied into a history event's text (the `event` column is
/// `TEXT`, 64 KiB on MySQL); the entry row keeps the reason in full.
pub const EVENT_REASON_MAX: i64 = 4096;

/// How a backfill runs.
#[derive(Clone)]
pub struct BackfillOptions {
    /// Node ids per batch; `None` for the backend's default ([`default_batch_size`]).
    pub batch_size: Option<i64>,
    pub asserted_by: String,
    pub progress: Arc<dyn Progress>,
}

impl Default for BackfillOptions {
    fn default() -> Self {
        BackfillOptions { batch_size: None, asserted_by: MIGRATION_ASSERTER.to_owned(), progress: Arc::new(NoProgress) }
    }
}

/// The options the backfill migration runs with, and what it did. The
/// migration framework gives a migration no parameters, so `db upgrade`
/// scopes one of these around `Migrator::up` (see [`with_context`]).
#[derive(Default)]
pub struct BackfillContext {
    pub options: BackfillOptions,
    pub backfilled: AtomicU64,
}

tokio::task_local! {
    static CONTEXT: Arc<BackfillContext>;
}

/// Runs `fut` (typically `Migrator::up`) with the backfill options in `ctx`.
pub async fn with_context<F: std::future::Future>(ctx: Arc<BackfillContext>, fut: F) -> F::Output {
    CONTEXT.scope(ctx, fut).await
}

pub(crate) fn current_context() -> Arc<BackfillContext> {
    CONTEXT.try_with(Arc::clone).unwrap_or_default()
}

/// Backfills every node, batch by batch, on `db` (the migration's
/// transaction, or a connection). Returns the number of entries created.
pub async fn backfill_legacy_entries<C: ConnectionTrait>(db: &C, opts: &BackfillOptions) -> Result<u64, DbErr> {
    let Some((min, max)) = nodemaint_runtime::sql::node_id_bounds(db).await? else {
        return Ok(0);
    };
    let batch = opts.batch_size.unwrap_or_else(|| default_batch_size(db.get_database_backend())).max(1);
    opts.progress.begin("backfilling legacy entries", (max - min + 1) as u64);
    let now = now_utc();
    // On an upgrade `node_maintenance` has just been created and holds no
    // legacy entry, and each batch covers nodes no other batch touches, so
    // no batch needs to look for existing entries. Leaving the anti-join out
    // matters on PostgreSQL: planned against a table with no statistics, it
    // may scan the unique index by `type` alone and re-visit every entry the
    // statement has already inserted (quadratic in the batch).
    let missing = if any_legacy_entry(db).await? { Missing::Legacy } else { Missing::AllMaintained };
    let mut created = 0;
    let mut lo = min;
    while lo <= max {
        let hi = lo.saturating_add(batch).min(max + 1);
        let n = backfill_nodes(db, NodeSet::Range(lo, hi), missing, &opts.asserted_by, now, true).await?;
        tracing::debug!(first_id = lo, end_id = hi, created = n, "backfill batch done");
        created += n;
        opts.progress.advance((hi - lo) as u64);
        lo = hi;
    }
    opts.progress.finish();
    Ok(created)
}

/// Whether `node_maintenance` holds any legacy entry (one probe).
async fn any_legacy_entry<C: ConnectionTrait>(db: &C) -> Result<bool, DbErr> {
    let backend = db.get_database_backend();
    let sql = format!("SELECT 1 FROM node_maintenance WHERE {} = '{LEGACY}' LIMIT 1", quote(backend, "type"));
    Ok(db.query_one_raw(stmt(backend, &sql, vec![])).await?.is_some())
}

/// Which nodes one backfill statement covers.
#[derive(Debug, Clone, Copy)]
pub enum NodeSet<'a> {
    /// Node ids in `[lo, hi)`.
    Range(i64, i64),
    /// Exactly these node ids (reconcile's drifted nodes).
    Ids(&'a [i32]),
}

/// Which maintained nodes get a legacy entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Missing {
    /// Those without a legacy entry (the upgrade backfill).
    Legacy,
    /// Those without any entry (reconcile: a node set in maintenance by an old service).
    AnyEntry,
    /// All of them: the caller knows none has a legacy entry yet.
    AllMaintained,
}

impl NodeSet<'_> {
    /// The SQL condition on `column` and its values.
    fn condition(&self, column: &str) -> (String, Vec<Value>) {
        match self {
            NodeSet::Range(lo, hi) => (format!("{column} >= ? AND {column} < ?"), vec![(*lo).into(), (*hi).into()]),
            NodeSet::Ids(ids) => {
                let marks = vec!["?"; ids.len().max(1)].join(", ");
                let mut values: Vec<Value> = ids.iter().map(|id| (*id).into()).collect();
                if values.is_empty() {
                    values.push(Value::from(-1));
                }
                (format!("{column} IN ({marks})"), values)
            }
        }
    }
}

/// Creates a legacy entry, reason copied from `nodes.maintenance_reason`, for
/// each maintained node of `nodes` that is `missing` one, and (with
/// `history`) one history event for each, in this migration's text: two
/// `INSERT … SELECT`, uuids generated by the database. Without `history`
/// the caller records the events (`reconcile`, which writes typed events).
pub async fn backfill_nodes<C: ConnectionTrait>(
    db: &C,
    nodes: NodeSet<'_>,
    missing: Missing,
    asserted_by: &str,
    now: chrono::NaiveDateTime,
    history: bool,
) -> Result<u64, DbErr> {
    let backend = db.get_database_backend();
    let before: i64 = db
        .query_one_raw(stmt(backend, "SELECT COALESCE(MAX(id), 0) FROM node_maintenance", vec![]))
        .await?
        .map(|row| row.try_get_by_index::<i64>(0).or_else(|_| row.try_get_by_index::<i32>(0).map(i64::from)))
        .transpose()?
        .unwrap_or(0);
    // Time-ordered on SQLite, whose statement journal charges every batch
    // for each existing index page it changes (ARCHITECTURE.md).
    let uuid = if backend == DbBackend::Sqlite { SQLITE_UUID_V7_EXPR } else { uuid_v4_expr(backend) };
    let ty = quote(backend, "type");
    let absent = match missing {
        Missing::Legacy => {
            format!("AND NOT EXISTS (SELECT 1 FROM node_maintenance m WHERE m.node_id = n.id AND m.{ty} = '{LEGACY}')")
        }
        Missing::AnyEntry => "AND NOT EXISTS (SELECT 1 FROM node_maintenance m WHERE m.node_id = n.id)".to_owned(),
        Missing::AllMaintained => String::new(),
    };
    let (in_nodes, node_values) = nodes.condition("n.id");
    let mut values: Vec<Value> = vec![asserted_by.into(), now.into(), now.into()];
    values.extend(node_values);
    let inserted = db
        .execute_raw(stmt(
            backend,
            &format!(
                "INSERT INTO node_maintenance (uuid, node_id, {ty}, reason, scope, asserted_by, \
                 asserted_by_project, asserted_at, extra, version, created_at) \
                 SELECT {uuid}, n.id, '{LEGACY}', n.maintenance_reason, 'system', ?, '', ?, NULL, '1.0', ? \
                 FROM nodes n WHERE {in_nodes} AND n.maintenance = TRUE {absent} ORDER BY n.id"
            ),
            values,
        ))
        .await?
        .rows_affected();
    if inserted == 0 || !history {
        return Ok(inserted);
    }
    let event = event_expr(backend);
    let user = quote(backend, "user");
    let (in_entries, node_values) = nodes.condition("m.node_id");
    let mut values: Vec<Value> = vec![now.into(), Value::from(before)];
    values.extend(node_values);
    values.push(asserted_by.into());
    db.execute_raw(stmt(
        backend,
        &format!(
            "INSERT INTO node_history (uuid, event_type, severity, event, {user}, project, node_id, version, created_at) \
             SELECT {uuid}, '{EVENT_TYPE_MAINTENANCE}', 'info', {event}, SUBSTR(m.asserted_by, 1, 64), NULL, m.node_id, '1.0', ? \
             FROM node_maintenance m WHERE m.id > ? AND {in_entries} \
             AND m.{ty} = '{LEGACY}' AND m.asserted_by = ? ORDER BY m.id"
        ),
        values,
    ))
    .await?;
    Ok(inserted)
}

/// The history event text of a backfilled entry `m`, as an SQL expression
/// (public, hidden from the docs, so that the benchmark's hand-written floor
/// writes the same rows; not part of the crate's API).
#[doc(hidden)]
pub fn event_expr(backend: DbBackend) -> String {
    concat(
        backend,
        &[
            "'maintenance entry '",
            "m.uuid",
            &format!("' asserted (type {LEGACY}, scope system, reason: '"),
            &format!("COALESCE(SUBSTR(m.reason, 1, {EVENT_REASON_MAX}), 'None')"),
            "') by '",
            "m.asserted_by",
            "' (backfilled from nodes.maintenance)'",
        ],
    )
}

/// Records that `n` entries were backfilled by the current `db upgrade`.
pub(crate) fn record_backfilled(n: u64) {
    current_context().backfilled.fetch_add(n, Ordering::Relaxed);
}
