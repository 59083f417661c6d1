//! `reconcile`: after the release pin lifts (and from cron at any time),
//! converge `node_maintenance` with the legacy columns that services of the
//! pinned release kept writing. Detection is read-only and set-based
//! (`nodemaint_runtime::drift`, one query per window of node ids, which
//! returns only the candidates); candidates are repaired `--batch-size` at a
//! time, each batch in one transaction that locks just those nodes,
//! classifies them under the lock (so a concurrent reconcile or API call is
//! never repaired twice, and nothing is loaded twice), plans the repairs
//! (`authority/batch.rs::repair`) and writes them with the batch applier
//! (`store/batches.rs`), set-based: the backfill's `INSERT … SELECT` for
//! missing legacy entries, one multi-row insert for history, one
//! `DELETE … IN`, one `UPDATE … CASE` that re-synthesises the boolean and
//! the reason column.

use crate::authority::batch;
use crate::error::Result;
use crate::notify::Settings;
use crate::schema;
use crate::store::batches;
use crate::store::locks::{self, Lock, LockWait};
use crate::store::outbox::Outbox;
use crate::store::transaction::{self, RetryPolicy};
use nodemaint_runtime::drift::{self, DriftKind, NodeDrift};
use nodemaint_runtime::progress::{NoProgress, Progress};
use nodemaint_runtime::sql::now_utc;
use sea_orm::{DatabaseConnection, DatabaseTransaction};
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Arc;

pub struct ReconcileOptions {
    /// Candidate nodes per repair transaction; `None`: the backend's default (1,000; 10,000 on SQLite).
    pub batch_size: Option<i64>,
    /// Stop after this many repairs (a repair is one drifted node, or one entry without a node).
    pub max_count: Option<u64>,
    /// Report only; write nothing.
    pub dry_run: bool,
    /// `[upgrade] pin_release_version`: while set, the boolean is canonical.
    pub pinned: Option<String>,
    /// How to wait for the reconcile lock.
    pub lock: LockWait,
    /// How a repair batch that lost to a concurrent transaction is run again.
    pub retry: RetryPolicy,
    pub progress: Arc<dyn Progress>,
    /// Notify each repair's events (`None`: notifications off).
    pub notify: Option<Settings>,
}

impl Default for ReconcileOptions {
    fn default() -> Self {
        ReconcileOptions {
            batch_size: None,
            max_count: None,
            dry_run: false,
            pinned: None,
            lock: LockWait::default(),
            retry: RetryPolicy::default(),
            progress: Arc::new(NoProgress),
            notify: None,
        }
    }
}

/// One drift kind's line of the summary.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct KindSummary {
    pub drift: &'static str,
    pub found: u64,
    pub repaired: u64,
    pub remaining: u64,
    /// Up to five of the nodes found (uuid, or `id N` for
    /// an entry whose node is gone), so a dry run says where to look.
    pub examples: Vec<String>,
}

/// How many nodes each drift kind names in the report.
pub(crate) const EXAMPLES_PER_KIND: usize = 5;

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ReconcileReport {
    pub pinned: Option<String>,
    pub dry_run: bool,
    pub summary: Vec<KindSummary>,
    /// Node uuids whose typed entries sat on a node out of maintenance
    /// (repaired, or with `--dry-run` found).
    pub typed_on_cleared: Vec<String>,
}

impl ReconcileReport {
    pub fn remaining(&self) -> u64 {
        self.summary.iter().map(|k| k.remaining).sum()
    }
    pub fn repaired(&self) -> u64 {
        self.summary.iter().map(|k| k.repaired).sum()
    }
}

#[derive(Default)]
struct Tally {
    found: BTreeMap<DriftKind, u64>,
    repaired: BTreeMap<DriftKind, u64>,
    examples: BTreeMap<DriftKind, Vec<String>>,
    typed_on_cleared: Vec<String>,
    /// A dry run repairs nothing, so what it found is what it reports.
    dry_run: bool,
}

fn node_label(d: &NodeDrift) -> String {
    d.node_uuid.clone().unwrap_or_else(|| format!("id {}", d.node_id))
}

impl Tally {
    fn found(&mut self, d: &NodeDrift) {
        for k in &d.kinds {
            *self.found.entry(*k).or_default() += d.repairs();
            let examples = self.examples.entry(*k).or_default();
            if examples.len() < EXAMPLES_PER_KIND {
                examples.push(node_label(d));
            }
        }
        if self.dry_run {
            self.note_typed_on_cleared(d);
        }
    }
    fn repaired(&mut self, d: &NodeDrift) {
        for k in &d.kinds {
            *self.repaired.entry(*k).or_default() += d.repairs();
        }
        self.note_typed_on_cleared(d);
    }
    fn note_typed_on_cleared(&mut self, d: &NodeDrift) {
        if d.kinds.contains(&DriftKind::ClearedWithTypedEntries) && self.typed_on_cleared.len() < 100 {
            self.typed_on_cleared.push(node_label(d));
        }
    }
}

/// Runs a reconciliation under the reconcile lock.
pub async fn reconcile(db: &DatabaseConnection, url: &str, mut options: ReconcileOptions) -> Result<ReconcileReport> {
    schema::require_maintenance_table(db, url).await?;
    // A dry run writes nothing, so it neither waits for a running reconcile
    // nor needs to write a lock file (a read-only SQLite file can be checked).
    let guard = if options.dry_run {
        None
    } else {
        let wait = std::mem::take(&mut options.lock);
        Some(locks::hold(db, url, Lock::Reconcile, wait).await?)
    };
    let pinned = options.pinned.is_some();
    let started = std::time::Instant::now();
    let result = run(db, &options, pinned).await;
    let released = match guard {
        Some(guard) => guard.release().await,
        None => Ok(()),
    };
    let tally = result?;
    released?;
    tracing::info!(
        found = tally.found.values().sum::<u64>(),
        repaired = tally.repaired.values().sum::<u64>(),
        dry_run = options.dry_run,
        "reconcile done in {:.2} s",
        started.elapsed().as_secs_f64()
    );
    let summary = DriftKind::ALL
        .iter()
        .map(|k| {
            let found = tally.found.get(k).copied().unwrap_or(0);
            let repaired = tally.repaired.get(k).copied().unwrap_or(0);
            let examples = tally.examples.get(k).cloned().unwrap_or_default();
            KindSummary { drift: k.name(), found, repaired, remaining: found.saturating_sub(repaired), examples }
        })
        .collect();
    Ok(ReconcileReport {
        pinned: options.pinned.clone(),
        dry_run: options.dry_run,
        summary,
        typed_on_cleared: tally.typed_on_cleared,
    })
}

async fn run(db: &DatabaseConnection, options: &ReconcileOptions, pinned: bool) -> Result<Tally> {
    let mut tally = Tally { dry_run: options.dry_run, ..Tally::default() };
    let mut budget = options.max_count.unwrap_or(u64::MAX);
    let mut walk = drift::WindowWalk::start(db).await?;
    options.progress.begin("reconciling", walk.span());
    while let Some((window, ids)) = walk.next(db).await? {
        repair_window(db, options, pinned, window, &ids, &mut tally, &mut budget).await?;
    }
    options.progress.finish();
    Ok(tally)
}

/// Repairs (or, for `--dry-run` and past `--max-count`, only classifies)
/// the candidates `ids` of the window `[lo, hi)`, `--batch-size` at a time.
async fn repair_window(
    db: &DatabaseConnection,
    options: &ReconcileOptions,
    pinned: bool,
    (lo, hi): (i64, i64),
    ids: &[i32],
    tally: &mut Tally,
    budget: &mut u64,
) -> Result<()> {
    let size = options.batch_size.unwrap_or_else(|| batches::default_batch_size(db.get_database_backend()));
    let batch = usize::try_from(size.max(1)).unwrap_or(usize::MAX);
    let mut at = lo;
    for group in ids.chunks(batch) {
        let mut pending = group;
        while !pending.is_empty() {
            if options.dry_run || *budget == 0 {
                // Report only: classified without locks, nothing written.
                for chunk in pending.chunks(drift::LOAD_CHUNK) {
                    drift::scan(db, chunk, pinned).await?.iter().for_each(|d| tally.found(d));
                }
                break;
            }
            let (now, later) = pending.split_at(pending.len().min((*budget).min(usize::MAX as u64) as usize));
            let repaired = repair_nodes(db, options, now, pinned).await?;
            for d in &repaired {
                tally.found(d);
                tally.repaired(d);
                *budget = budget.saturating_sub(d.repairs());
            }
            tracing::debug!(first_id = now[0], repaired = repaired.len(), "reconcile batch repaired");
            pending = later;
        }
        let next = i64::from(group[group.len() - 1]) + 1;
        options.progress.advance((next - at) as u64);
        at = next;
    }
    options.progress.advance((hi - at) as u64);
    Ok(())
}

/// Repairs the drift of the candidates `ids` in one transaction; returns
/// what it repaired (classified under the lock, so only real drift).
async fn repair_nodes(
    db: &DatabaseConnection,
    options: &ReconcileOptions,
    ids: &[i32],
    pinned: bool,
) -> Result<Vec<NodeDrift>> {
    let outbox = options.notify.as_ref().map(Outbox::new);
    let outbox = outbox.as_ref();
    // Through the transaction runner: a batch that loses a deadlock to an
    // API request is run again whole, and classified again under its locks.
    transaction::run(db, &options.retry, |txn| async move {
        let mut repaired = Vec::new();
        // Each step's statements list its nodes (IN lists, VALUES rows), so
        // the transaction goes LOAD_CHUNK nodes at a time, under every
        // backend's parameter limit, however many --batch-size puts in it.
        for chunk in ids.chunks(drift::LOAD_CHUNK) {
            repaired.extend(repair_chunk(&txn, chunk, pinned, outbox).await?);
        }
        Ok(repaired)
    })
    .await
}

/// Locks `ids` in `txn`, classifies them under the lock and repairs them.
async fn repair_chunk(
    txn: &DatabaseTransaction,
    ids: &[i32],
    pinned: bool,
    outbox: Option<&Outbox>,
) -> Result<Vec<NodeDrift>> {
    let started = std::time::Instant::now();
    batches::lock(txn, ids.iter().copied()).await?;
    let drifts = drift::scan(txn, ids, pinned).await?;
    tracing::trace!(elapsed_ms = started.elapsed().as_millis() as u64, "locked and re-detected");
    if drifts.is_empty() {
        return Ok(drifts);
    }
    batches::apply(txn, &batch::repair(&drifts, pinned, now_utc()), outbox).await?;
    tracing::trace!(elapsed_ms = started.elapsed().as_millis() as u64, "repaired");
    Ok(drifts)
}
