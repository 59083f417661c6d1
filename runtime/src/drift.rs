//! Drift between `node_maintenance` and the legacy columns that services
//! not yet upgraded keep writing during a rolling upgrade (the release pin),
//! found set-based, a node-id range at a time. `reconcile` repairs what
//! this finds; `upgrade check` reports it. Detection is read-only: one
//! query per window of node ids returns the candidates ([`candidates`]),
//! which are loaded and judged by a pure [`classify`].

use crate::progress::Progress;
use nodemaint_entity::vocab::{LEGACY, REGISTRY, maintenance_reason_column};
use nodemaint_entity::{EntryType, node_maintenance, nodes};
use sea_orm::{
    ColumnTrait, ConnectionTrait, DbBackend, DbErr, EntityTrait, Iterable, QueryFilter, QueryOrder, QuerySelect,
    Statement, TransactionSession, TransactionTrait,
};
use std::collections::{BTreeMap, BTreeSet};

/// `asserted_by` of the legacy entries `reconcile` creates.
pub const RECONCILE_ASSERTER: &str = "nodemaint-reconcile";

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DriftKind {
    /// `maintenance = true` and no entry: an old service set maintenance.
    MaintainedWithoutEntry,
    /// `maintenance = false` with legacy/fault entries: an old service cleared it.
    ClearedWithLegacyEntries,
    /// `maintenance = false` with typed entries: never legitimate; the table wins.
    ClearedWithTypedEntries,
    /// `maintenance_reason` differs from the synthesised value: an old service changed it.
    ReasonChanged,
    /// More than one legacy or fault entry on a node: a race or a hand edit.
    DuplicateSingletons,
    /// Entries whose node is gone: a delete without cascade.
    OrphanedEntries,
}

impl DriftKind {
    pub const ALL: [DriftKind; 6] = [
        DriftKind::MaintainedWithoutEntry,
        DriftKind::ClearedWithLegacyEntries,
        DriftKind::ClearedWithTypedEntries,
        DriftKind::ReasonChanged,
        DriftKind::DuplicateSingletons,
        DriftKind::OrphanedEntries,
    ];

    /// The name shown in reports and JSON.
    pub fn name(self) -> &'static str {
        match self {
            DriftKind::MaintainedWithoutEntry => "maintained_without_entry",
            DriftKind::ClearedWithLegacyEntries => "cleared_with_legacy_entries",
            DriftKind::ClearedWithTypedEntries => "cleared_with_typed_entries",
            DriftKind::ReasonChanged => "reason_changed",
            DriftKind::DuplicateSingletons => "duplicate_legacy_or_fault",
            DriftKind::OrphanedEntries => "entries_without_node",
        }
    }

    /// What it means, for an operator.
    pub fn describe(self) -> &'static str {
        match self {
            DriftKind::MaintainedWithoutEntry => "node(s) in maintenance with no entry",
            DriftKind::ClearedWithLegacyEntries => "node(s) out of maintenance still holding legacy/fault entries",
            DriftKind::ClearedWithTypedEntries => "node(s) out of maintenance holding typed entries",
            DriftKind::ReasonChanged => "node(s) whose maintenance_reason differs from their entries",
            DriftKind::DuplicateSingletons => "node(s) with more than one legacy or fault entry",
            DriftKind::OrphanedEntries => "entr(ies) whose node no longer exists",
        }
    }
}

/// What is wrong with one node, and the repair that converges it.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeDrift {
    pub node_id: i32,
    pub node_uuid: Option<String>,
    pub kinds: Vec<DriftKind>,
    /// Create a legacy entry from the column for a node with no entry at all.
    pub create_legacy_for_empty: bool,
    /// The column's text goes into the legacy entry (created if absent).
    pub legacy_takes_column: Option<LegacyFix>,
    /// Entries to release, and why.
    pub release: Vec<(node_maintenance::Model, DriftKind)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LegacyFix {
    Update(i32),
    Create,
}

/// Pure: the drift of each node, given the nodes (those in maintenance and
/// those holding entries) and all their entries. While the release is
/// pinned the boolean is canonical, so entries on a cleared node are all
/// released, typed ones included. Entries whose node is not in `nodes` are
/// orphans (their node was deleted without the cascade): one drift per
/// missing node, releasing all of them.
pub fn classify(nodes: &[nodes::Model], entries: &[node_maintenance::Model], pinned: bool) -> Vec<NodeDrift> {
    let mut by_node: BTreeMap<i32, Vec<&node_maintenance::Model>> = BTreeMap::new();
    for e in entries {
        by_node.entry(e.node_id).or_default().push(e);
    }
    let mut out = Vec::new();
    for node in nodes {
        let mut es: Vec<&node_maintenance::Model> = by_node.remove(&node.id).unwrap_or_default();
        es.sort_by_key(|e| (e.asserted_at, e.id));
        let mut drift = NodeDrift {
            node_id: node.id,
            node_uuid: node.uuid.clone(),
            kinds: Vec::new(),
            create_legacy_for_empty: false,
            legacy_takes_column: None,
            release: Vec::new(),
        };
        let policy_only =
            |e: &node_maintenance::Model| EntryType::lookup(&e.entry_type).is_some_and(|t| t.policy_only_release());
        if node.maintenance.unwrap_or(false) {
            if es.is_empty() {
                drift.kinds.push(DriftKind::MaintainedWithoutEntry);
                drift.create_legacy_for_empty = true;
            } else {
                for ty in REGISTRY.iter().filter(|t| t.one_per_node()).map(|t| t.name) {
                    let extra: Vec<&&node_maintenance::Model> =
                        es.iter().filter(|e| e.entry_type == ty).skip(1).collect();
                    for e in extra {
                        drift.release.push(((*e).clone(), DriftKind::DuplicateSingletons));
                    }
                }
                if !drift.release.is_empty() {
                    drift.kinds.push(DriftKind::DuplicateSingletons);
                }
                let owned: Vec<node_maintenance::Model> = es.iter().map(|e| (*e).clone()).collect();
                if node.maintenance_reason != maintenance_reason_column(&owned) {
                    drift.kinds.push(DriftKind::ReasonChanged);
                    let kept_legacy = es.iter().find(|e| e.entry_type == LEGACY).map(|e| e.id);
                    drift.legacy_takes_column = Some(kept_legacy.map_or(LegacyFix::Create, LegacyFix::Update));
                }
            }
        } else if !es.is_empty() {
            let (singletons, typed): (Vec<&node_maintenance::Model>, Vec<&node_maintenance::Model>) =
                es.iter().copied().partition(|e| policy_only(e));
            if !singletons.is_empty() {
                drift.kinds.push(DriftKind::ClearedWithLegacyEntries);
                drift.release.extend(singletons.iter().map(|e| ((*e).clone(), DriftKind::ClearedWithLegacyEntries)));
            }
            if !typed.is_empty() {
                drift.kinds.push(DriftKind::ClearedWithTypedEntries);
                if pinned {
                    drift.release.extend(typed.iter().map(|e| ((*e).clone(), DriftKind::ClearedWithTypedEntries)));
                }
            }
        }
        if !drift.kinds.is_empty() {
            out.push(drift);
        }
    }
    // What is left belongs to nodes that do not exist.
    for (node_id, es) in by_node {
        out.push(NodeDrift {
            node_id,
            node_uuid: None,
            kinds: vec![DriftKind::OrphanedEntries],
            create_legacy_for_empty: false,
            legacy_takes_column: None,
            release: es.into_iter().map(|e| (e.clone(), DriftKind::OrphanedEntries)).collect(),
        });
    }
    out
}

impl NodeDrift {
    /// Entries whose node is gone: their repair records history with no node.
    pub fn is_orphan(&self) -> bool {
        self.kinds == [DriftKind::OrphanedEntries]
    }

    /// How many repairs this is: one per node, or one per entry whose node is gone.
    pub fn repairs(&self) -> u64 {
        if self.is_orphan() { self.release.len() as u64 } else { 1 }
    }
}

/// Counts of each drift kind and a few example node uuids (entry uuids for
/// entries whose node is gone).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DriftSummary {
    pub counts: BTreeMap<DriftKind, u64>,
    pub examples: BTreeMap<DriftKind, Vec<String>>,
}

/// How many example nodes a summary keeps per kind.
pub const EXAMPLES: usize = 3;

impl DriftSummary {
    pub fn add(&mut self, drift: &NodeDrift) {
        for kind in &drift.kinds {
            *self.counts.entry(*kind).or_default() += drift.repairs();
            let examples = self.examples.entry(*kind).or_default();
            let names: Vec<String> = if drift.is_orphan() {
                drift.release.iter().map(|(e, _)| e.uuid.clone()).collect()
            } else {
                vec![drift.node_uuid.clone().unwrap_or_else(|| format!("id {}", drift.node_id))]
            };
            for name in names {
                if examples.len() < EXAMPLES {
                    examples.push(name);
                }
            }
        }
    }

    pub fn count(&self, kind: DriftKind) -> u64 {
        self.counts.get(&kind).copied().unwrap_or(0)
    }

    pub fn total(&self) -> u64 {
        self.counts.values().sum()
    }
}

/// The nodes (any state) and entries [`classify`] needs for `ids`: two queries.
pub async fn load<C: ConnectionTrait>(
    db: &C,
    ids: &[i32],
) -> Result<(Vec<nodes::Model>, Vec<node_maintenance::Model>), DbErr> {
    // Every column but `ends_at` (drift does not depend on it), so that
    // `upgrade check` runs before the windows migration has added it.
    let entries = node_maintenance::Entity::find()
        .select_only()
        .columns(node_maintenance::Column::iter().filter(|c| !matches!(c, node_maintenance::Column::EndsAt)))
        .column_as(sea_orm::sea_query::Expr::cust("NULL"), "ends_at")
        .filter(node_maintenance::Column::NodeId.is_in(ids.iter().copied()))
        .order_by_asc(node_maintenance::Column::Id)
        .all(db)
        .await?;
    let found = nodes::Entity::find()
        .filter(nodes::Column::Id.is_in(ids.iter().copied()))
        .order_by_asc(nodes::Column::Id)
        .all(db)
        .await?;
    Ok((found, entries))
}

/// The drift of exactly these nodes (candidates, or a repair's locked
/// nodes), loaded and classified [`LOAD_CHUNK`] ids at a time.
pub async fn scan<C: ConnectionTrait>(db: &C, ids: &[i32], pinned: bool) -> Result<Vec<NodeDrift>, DbErr> {
    let mut out = Vec::new();
    // Bounded IN lists (PostgreSQL takes at most 65,535 parameters) and bounded memory.
    for chunk in ids.chunks(LOAD_CHUNK) {
        let (nodes, entries) = load(db, chunk).await?;
        out.extend(classify(&nodes, &entries, pinned));
    }
    Ok(out)
}

/// Node ids loaded and classified at once.
pub const LOAD_CHUNK: usize = 1000;

/// Node ids one detection query covers. A window is one pass over its
/// nodes and entries, so wide windows cost little more than one scan of
/// the table; what a window returns is only the ids of candidates (at most
/// one per id in the window: 2 MB at this width), which bounds memory.
pub const DETECT_WINDOW: i64 = 500_000;

/// Windows detected at once, each on its own connection. One detection
/// statement uses one core of the database server (PostgreSQL 15 cannot run
/// a full join in parallel), so two windows at a time use both cores and
/// finish sooner than one window of twice the width (figures in git
/// history). Memory stays that of one million-id window.
pub const DETECT_AT_ONCE: usize = 2;
// `candidates_in` joins exactly a pair; a different width needs it rewritten.
const _: () = assert!(DETECT_AT_ONCE == 2);

/// The candidates of each of `windows` (at most [`DETECT_AT_ONCE`]),
/// detected concurrently, in the order given.
pub async fn candidates_in<C: ConnectionTrait + TransactionTrait + Sync>(
    db: &C,
    windows: &[(i64, i64)],
) -> Result<Vec<Vec<i32>>, DbErr> {
    match windows {
        [a, b] => {
            let (first, second) = tokio::try_join!(candidates(db, a.0, a.1), candidates(db, b.0, b.1))?;
            Ok(vec![first, second])
        }
        _ => {
            let mut out = Vec::with_capacity(windows.len());
            for (lo, hi) in windows {
                out.push(candidates(db, *lo, *hi).await?);
            }
            Ok(out)
        }
    }
}

/// The one walk over detection windows that reconcile and the drift check
/// share: each window with its candidate node ids, in id order, the
/// candidates found [`DETECT_AT_ONCE`] windows at a time.
pub struct WindowWalk {
    windows: Vec<(i64, i64)>,
    next_window: usize,
    ready: std::collections::VecDeque<((i64, i64), Vec<i32>)>,
}

impl WindowWalk {
    /// The walk over the windows of `db`'s node ids ([`windows`]).
    pub async fn start<C: ConnectionTrait>(db: &C) -> Result<WindowWalk, DbErr> {
        Ok(WindowWalk { windows: windows(db).await?, next_window: 0, ready: Default::default() })
    }

    /// How many node ids the walk covers, for a progress bar.
    pub fn span(&self) -> u64 {
        match (self.windows.first(), self.windows.last()) {
            (Some((first, _)), Some((_, last))) => (last - first) as u64,
            _ => 0,
        }
    }

    /// The next window and its candidates, or `None` when the walk is done.
    pub async fn next<C: ConnectionTrait + TransactionTrait + Sync>(
        &mut self,
        db: &C,
    ) -> Result<Option<((i64, i64), Vec<i32>)>, DbErr> {
        if self.ready.is_empty() && self.next_window < self.windows.len() {
            let end = (self.next_window + DETECT_AT_ONCE).min(self.windows.len());
            let batch = &self.windows[self.next_window..end];
            let found = candidates_in(db, batch).await?;
            self.ready.extend(batch.iter().copied().zip(found));
            self.next_window = end;
        }
        Ok(self.ready.pop_front())
    }
}

/// The windows of node ids detection walks: from the lowest to the highest
/// id among nodes and entries (an entry whose node is gone may lie outside
/// the nodes' ids), [`DETECT_WINDOW`] wide.
pub async fn windows<C: ConnectionTrait>(db: &C) -> Result<Vec<(i64, i64)>, DbErr> {
    let Some((min, max)) = id_bounds(db).await? else { return Ok(Vec::new()) };
    let mut out = Vec::new();
    let mut lo = min;
    while lo <= max {
        let hi = lo.saturating_add(DETECT_WINDOW).min(max + 1);
        out.push((lo, hi));
        lo = hi;
    }
    Ok(out)
}

/// Lowest and highest id among `nodes.id` and `node_maintenance.node_id`.
/// Four scalar subqueries, each one index probe (see `sql::first_and_last`).
async fn id_bounds<C: ConnectionTrait>(db: &C) -> Result<Option<(i64, i64)>, DbErr> {
    let backend = db.get_database_backend();
    let sql = format!(
        "SELECT {}, {}",
        crate::sql::first_and_last("nodes", "id"),
        crate::sql::first_and_last("node_maintenance", "node_id")
    );
    let Some(row) = db.query_one_raw(Statement::from_string(backend, sql)).await? else { return Ok(None) };
    let get = |i: usize| row.try_get_by_index::<Option<i32>>(i).map(|v| v.map(i64::from));
    let mins = [get(0)?, get(2)?].into_iter().flatten().min();
    let maxs = [get(1)?, get(3)?].into_iter().flatten().max();
    Ok(mins.zip(maxs))
}

/// Node ids in `[lo, hi)` that may have drifted, ascending: maintained
/// nodes with no entry, with several (classified in Rust), or with one whose
/// synthesised reason differs from the column; nodes out of maintenance
/// holding entries; and the ids of missing nodes that entries point to.
/// Everything else is in sync by construction.
///
/// One set-based pass over the window's maintained nodes and its entries,
/// per-node entry counts aggregated once: on PostgreSQL a hash full join of
/// the two; on SQLite (whose full join is a nested loop) a left join from the
/// aggregated entries plus an anti-join from the maintained nodes; on
/// MySQL/MariaDB (no full join) see below. Measured against one scan of
/// `nodes` in BENCHMARKS.md.
pub async fn candidates<C: ConnectionTrait + TransactionTrait>(db: &C, lo: i64, hi: i64) -> Result<Vec<i32>, DbErr> {
    let backend = db.get_database_backend();
    let ty = crate::sql::quote(backend, "type");
    // The column value the library writes for a node whose only entry is m.
    let one = format!(
        "CASE WHEN m.{ty} = 'legacy' THEN m.reason WHEN m.reason IS NULL OR m.reason = '' THEN m.{ty} ELSE {} END",
        crate::sql::concat(backend, &[&format!("m.{ty}"), "': '", "m.reason"])
    );
    let differs = match backend {
        DbBackend::Postgres => "a.r IS DISTINCT FROM n.maintenance_reason",
        _ => "a.r IS NOT n.maintenance_reason",
    };
    // Per node of the window: how many entries, and (read only when there
    // is one) the reason column that entry alone synthesises.
    let entries = format!(
        "SELECT m.node_id, COUNT(*) AS c, MAX({one}) AS r FROM node_maintenance m \
         WHERE m.node_id >= ? AND m.node_id < ? GROUP BY m.node_id"
    );
    let (sql, values) = match backend {
        DbBackend::Postgres => (
            format!(
                "SELECT COALESCE(n.id, a.node_id) FROM \
                 (SELECT id, maintenance_reason FROM nodes WHERE maintenance = TRUE AND id >= ? AND id < ?) n \
                 FULL JOIN ({entries}) a ON a.node_id = n.id \
                 WHERE n.id IS NULL OR a.node_id IS NULL OR a.c <> 1 OR {differs}"
            ),
            vec![lo.into(), hi.into(), lo.into(), hi.into()],
        ),
        // MySQL/MariaDB: aggregating the entries first costs a primary-key
        // lookup per entry, so each entry is compared with its node as it is
        // read (in the table's clustered order) and nodes with several
        // entries come from the node_id index alone. BINARY: the default
        // collations ignore case and trailing spaces.
        DbBackend::MySql => (
            format!(
                "SELECT m.node_id FROM node_maintenance m LEFT JOIN nodes n ON n.id = m.node_id AND n.maintenance = TRUE \
                 WHERE m.node_id >= ? AND m.node_id < ? \
                 AND (n.id IS NULL OR NOT (BINARY ({one}) <=> BINARY n.maintenance_reason)) \
                 UNION ALL \
                 SELECT node_id FROM node_maintenance WHERE node_id >= ? AND node_id < ? GROUP BY node_id HAVING COUNT(*) > 1 \
                 UNION ALL \
                 SELECT n.id FROM nodes n WHERE n.id >= ? AND n.id < ? AND n.maintenance = TRUE \
                 AND NOT EXISTS (SELECT 1 FROM node_maintenance m WHERE m.node_id = n.id)"
            ),
            vec![lo.into(), hi.into(), lo.into(), hi.into(), lo.into(), hi.into()],
        ),
        _ => (
            format!(
                "SELECT a.node_id FROM ({entries}) a LEFT JOIN nodes n ON n.id = a.node_id AND n.maintenance = TRUE \
                 WHERE n.id IS NULL OR a.c <> 1 OR {differs} \
                 UNION ALL \
                 SELECT n.id FROM nodes n WHERE n.id >= ? AND n.id < ? AND n.maintenance = TRUE \
                 AND NOT EXISTS (SELECT 1 FROM node_maintenance m WHERE m.node_id = n.id)"
            ),
            vec![lo.into(), hi.into(), lo.into(), hi.into()],
        ),
    };
    let statement = crate::sql::stmt(backend, &sql, values);
    let rows = match backend {
        DbBackend::Sqlite => query_mapped(db, statement).await?,
        _ => db.query_all_raw(statement).await?,
    };
    let mut ids = BTreeSet::new();
    for row in rows {
        ids.insert(row.try_get_by_index::<i32>(0)?);
    }
    Ok(ids.into_iter().collect())
}

/// The largest memory map SQLite makes (its compile-time `SQLITE_MAX_MMAP_SIZE`
/// on 64-bit Linux); a larger request is clamped to it.
const SQLITE_MMAP_SIZE: i64 = 0x7fff_0000;

/// Runs a SQLite read with the database file memory-mapped, on one
/// connection for the statement's duration (a read transaction pins it),
/// then unmaps it again.
///
/// Why: the bundled SQLite is built with `SQLITE_ENABLE_MEMORY_MANAGEMENT`,
/// which makes all connections of a process share one page-cache group. A
/// pool's connections then evict each other's pages, and a detection pass
/// on whichever connection lost read the file several times over and took
/// about twice as long. Read through a map, pages come straight from the OS
/// page cache: every connection is as fast as the one that won. The map is dropped afterwards so
/// that the file's pages count against the process's resident set only
/// while detection runs (the backfill, whose memory is bounded, never maps).
async fn query_mapped<C: ConnectionTrait + TransactionTrait>(
    db: &C,
    statement: Statement,
) -> Result<Vec<sea_orm::QueryResult>, DbErr> {
    let txn = db.begin().await?;
    txn.execute_unprepared(&format!("PRAGMA mmap_size = {SQLITE_MMAP_SIZE}")).await?;
    let rows = txn.query_all_raw(statement).await;
    // Unmapped whether or not the read succeeded: the connection returns to the pool.
    txn.execute_unprepared("PRAGMA mmap_size = 0").await?;
    let rows = rows?;
    txn.commit().await?;
    Ok(rows)
}

/// The whole table, window by window: what `upgrade check` and
/// `reconcile --dry-run` report.
pub async fn summarize<C: ConnectionTrait + TransactionTrait + Sync>(
    db: &C,
    pinned: bool,
    progress: &dyn Progress,
) -> Result<DriftSummary, DbErr> {
    let mut summary = DriftSummary::default();
    let mut walk = WindowWalk::start(db).await?;
    progress.begin("scanning for drift", walk.span());
    while let Some(((lo, hi), ids)) = walk.next(db).await? {
        for chunk in ids.chunks(LOAD_CHUNK) {
            for drift in scan(db, chunk, pinned).await? {
                summary.add(&drift);
            }
        }
        progress.advance((hi - lo) as u64);
    }
    progress.finish();
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::NaiveDate;

    fn node(id: i32, maintenance: bool, reason: Option<&str>) -> nodes::Model {
        nodes::Model {
            id,
            uuid: Some(format!("node-{id}")),
            name: None,
            owner: None,
            lessee: None,
            maintenance: Some(maintenance),
            maintenance_reason: reason.map(Into::into),
            fault: None,
            reservation: None,
            version: None,
            created_at: None,
            updated_at: None,
        }
    }

    fn entry(id: i32, node_id: i32, ty: &str, reason: Option<&str>) -> node_maintenance::Model {
        node_maintenance::Model {
            id,
            uuid: format!("e-{id}"),
            node_id,
            entry_type: ty.into(),
            reason: reason.map(Into::into),
            scope: "system".into(),
            asserted_by: "x".into(),
            asserted_by_project: String::new(),
            asserted_at: NaiveDate::from_ymd_opt(2026, 1, 1).unwrap().and_hms_opt(0, 0, id as u32).unwrap(),
            extra: None,
            version: None,
            created_at: None,
            updated_at: None,
            ends_at: None,
        }
    }

    #[test]
    fn each_drift_kind_is_found_with_its_repair() {
        let nodes = vec![
            node(1, true, Some("set by old service")),     // no entry
            node(2, false, None),                          // cleared, legacy left behind
            node(3, false, None),                          // cleared, typed entry
            node(4, true, Some("changed by old service")), // legacy with another reason
            node(5, true, Some("hardware_failure: disk")), // typed only, column changed? no: matches
            node(6, true, Some("a")),                      // two legacy entries
            node(7, true, Some("in sync")),                // fine
        ];
        let entries = vec![
            entry(10, 2, LEGACY, Some("old")),
            entry(11, 3, "operator_hold", Some("hold")),
            entry(12, 4, LEGACY, Some("original")),
            entry(13, 5, "hardware_failure", Some("disk")),
            entry(14, 6, LEGACY, Some("a")),
            entry(15, 6, LEGACY, Some("b")),
            entry(16, 7, LEGACY, Some("in sync")),
        ];
        let drift = classify(&nodes, &entries, false);
        let kinds: Vec<(i32, Vec<DriftKind>)> = drift.iter().map(|d| (d.node_id, d.kinds.clone())).collect();
        assert_eq!(
            kinds,
            vec![
                (1, vec![DriftKind::MaintainedWithoutEntry]),
                (2, vec![DriftKind::ClearedWithLegacyEntries]),
                (3, vec![DriftKind::ClearedWithTypedEntries]),
                (4, vec![DriftKind::ReasonChanged]),
                (6, vec![DriftKind::DuplicateSingletons, DriftKind::ReasonChanged]),
            ]
        );
        assert!(drift[0].create_legacy_for_empty);
        assert_eq!(drift[1].release.len(), 1);
        assert!(drift[2].release.is_empty(), "typed entries are kept when not pinned");
        assert_eq!(drift[3].legacy_takes_column, Some(LegacyFix::Update(12)));
        assert_eq!(drift[4].release.iter().map(|(e, _)| e.id).collect::<Vec<_>>(), [15], "the oldest is kept");
        // Pinned: the boolean is canonical, typed entries on a cleared node go too.
        let pinned = classify(&nodes, &entries, true);
        assert_eq!(pinned[2].release.len(), 1);
    }

    #[test]
    fn a_reason_change_on_a_typed_only_node_creates_the_legacy_entry() {
        let drift =
            classify(&[node(5, true, Some("new text"))], &[entry(13, 5, "hardware_failure", Some("disk"))], false);
        assert_eq!(drift[0].legacy_takes_column, Some(LegacyFix::Create));
    }

    #[test]
    fn entries_whose_node_is_gone_are_orphans_counted_per_entry() {
        let entries =
            [entry(10, 1, LEGACY, Some("x")), entry(11, 9, LEGACY, None), entry(12, 9, "operator_hold", None)];
        let drift = classify(&[node(1, true, Some("x"))], &entries, false);
        assert_eq!(drift.len(), 1, "node 1 is in sync: {drift:?}");
        assert_eq!((drift[0].node_id, drift[0].is_orphan(), drift[0].repairs()), (9, true, 2));
        assert_eq!(drift[0].release.iter().map(|(e, _)| e.id).collect::<Vec<_>>(), [11, 12]);
        let mut summary = DriftSummary::default();
        summary.add(&drift[0]);
        assert_eq!(summary.count(DriftKind::OrphanedEntries), 2);
        assert_eq!(summary.examples[&DriftKind::OrphanedEntries], ["e-11", "e-12"], "entries, not the missing node");
    }
}
