//! Drift between `node_maintenance` and the legacy columns that services
//! not yet upgraded keep writing during a rolling upgrade (the release pin),
//! found set-based, a node-id range at a time. `reconcile` repairs what
//! this finds; `upgrade check` reports it. Detection is read-only: two
//! queries per range, whatever the range holds, and a pure [`classify`].

use crate::backfill::Progress;
use nodemaint_entity::vocab::{FAULT, LEGACY, maintenance_reason_column};
use nodemaint_entity::{EntryType, node_maintenance, nodes};
use sea_orm::{ColumnTrait, ConnectionTrait, DbBackend, DbErr, EntityTrait, QueryFilter, QueryOrder, Statement};
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
/// released, typed ones included.
pub fn classify(nodes: &[nodes::Model], entries: &[node_maintenance::Model], pinned: bool) -> Vec<NodeDrift> {
    let mut by_node: BTreeMap<i32, Vec<&node_maintenance::Model>> = BTreeMap::new();
    for e in entries {
        by_node.entry(e.node_id).or_default().push(e);
    }
    let mut out = Vec::new();
    for node in nodes {
        let mut es: Vec<&node_maintenance::Model> = by_node.get(&node.id).cloned().unwrap_or_default();
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
            |e: &node_maintenance::Model| EntryType::lookup(&e.entry_type).is_some_and(|t| t.policy_only_release);
        if node.maintenance.unwrap_or(false) {
            if es.is_empty() {
                drift.kinds.push(DriftKind::MaintainedWithoutEntry);
                drift.create_legacy_for_empty = true;
            } else {
                for ty in [LEGACY, FAULT] {
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
    out
}

/// Counts of each drift kind and a few example node uuids.
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
            *self.counts.entry(*kind).or_default() += 1;
            let examples = self.examples.entry(*kind).or_default();
            if examples.len() < EXAMPLES {
                examples.push(drift.node_uuid.clone().unwrap_or_else(|| format!("id {}", drift.node_id)));
            }
        }
    }

    pub fn add_orphans(&mut self, count: u64, examples: Vec<String>) {
        if count > 0 {
            *self.counts.entry(DriftKind::OrphanedEntries).or_default() += count;
            self.examples.entry(DriftKind::OrphanedEntries).or_default().extend(examples.into_iter().take(EXAMPLES));
        }
    }

    pub fn count(&self, kind: DriftKind) -> u64 {
        self.counts.get(&kind).copied().unwrap_or(0)
    }

    pub fn total(&self) -> u64 {
        self.counts.values().sum()
    }
}

/// Which nodes a scan reads.
#[derive(Debug, Clone, Copy)]
pub enum Nodes<'a> {
    Range(i64, i64),
    Ids(&'a [i32]),
}

/// The nodes and entries [`classify`] needs for `which`: two queries, plus a
/// third only when entries sit on nodes that are out of maintenance.
pub async fn load<C: ConnectionTrait>(
    db: &C,
    which: Nodes<'_>,
) -> Result<(Vec<nodes::Model>, Vec<node_maintenance::Model>), DbErr> {
    use sea_orm::sea_query::ExprTrait;
    let (node_filter, entry_filter) = match which {
        Nodes::Range(lo, hi) => (
            nodes::Column::Id.gte(lo).and(nodes::Column::Id.lt(hi)),
            node_maintenance::Column::NodeId.gte(lo).and(node_maintenance::Column::NodeId.lt(hi)),
        ),
        Nodes::Ids(ids) => {
            (nodes::Column::Id.is_in(ids.iter().copied()), node_maintenance::Column::NodeId.is_in(ids.iter().copied()))
        }
    };
    let entries = node_maintenance::Entity::find()
        .filter(entry_filter)
        .order_by_asc(node_maintenance::Column::Id)
        .all(db)
        .await?;
    let mut found = nodes::Entity::find()
        .filter(node_filter)
        .filter(nodes::Column::Maintenance.eq(true))
        .order_by_asc(nodes::Column::Id)
        .all(db)
        .await?;
    let seen: BTreeSet<i32> = found.iter().map(|n| n.id).collect();
    let others: BTreeSet<i32> = entries.iter().map(|e| e.node_id).filter(|id| !seen.contains(id)).collect();
    if !others.is_empty() {
        found.extend(nodes::Entity::find().filter(nodes::Column::Id.is_in(others)).all(db).await?);
    }
    Ok((found, entries))
}

/// The drift among `which` nodes. A range is first narrowed in SQL to the
/// nodes that can drift ([`candidates`]), so a clean range costs two
/// queries that return nothing; only candidates are loaded and classified.
pub async fn scan<C: ConnectionTrait>(db: &C, which: Nodes<'_>, pinned: bool) -> Result<Vec<NodeDrift>, DbErr> {
    let ids = match which {
        Nodes::Range(lo, hi) => candidates(db, lo, hi).await?,
        Nodes::Ids(ids) => ids.to_vec(),
    };
    let mut out = Vec::new();
    // Bounded IN lists (PostgreSQL takes at most 65,535 parameters) and bounded memory.
    for chunk in ids.chunks(LOAD_CHUNK) {
        let (nodes, entries) = load(db, Nodes::Ids(chunk)).await?;
        out.extend(classify(&nodes, &entries, pinned));
    }
    Ok(out)
}

/// Node ids loaded and classified at once.
pub const LOAD_CHUNK: usize = 1000;

/// Node ids in `[lo, hi)` that may have drifted: maintained nodes with no
/// entry, with several (classified in Rust), or with one whose synthesised
/// reason differs from the column; and nodes out of maintenance holding
/// entries. Everything else is in sync by construction.
pub async fn candidates<C: ConnectionTrait>(db: &C, lo: i64, hi: i64) -> Result<Vec<i32>, DbErr> {
    let backend = db.get_database_backend();
    let ty = crate::backfill::quote(backend, "type");
    // The column value the library writes for a node whose only entry is m.
    let one = format!(
        "CASE WHEN m.{ty} = 'legacy' THEN m.reason WHEN m.reason IS NULL OR m.reason = '' THEN m.{ty} ELSE {} END",
        crate::sql::concat(backend, &[&format!("m.{ty}"), "': '", "m.reason"])
    );
    let same = match backend {
        // Binary: the default collations ignore case and trailing spaces.
        DbBackend::MySql => format!("BINARY ({one}) <=> BINARY n.maintenance_reason"),
        DbBackend::Postgres => format!("({one}) IS NOT DISTINCT FROM n.maintenance_reason"),
        _ => format!("({one}) IS n.maintenance_reason"),
    };
    // One probe per maintained node: the sum is 1 exactly when the node has
    // one entry and its synthesised reason is the column's.
    let maintained = format!(
        "SELECT n.id FROM nodes n WHERE n.id >= ? AND n.id < ? AND n.maintenance = TRUE AND COALESCE( \
         (SELECT SUM(CASE WHEN {same} THEN 1 ELSE 2 END) FROM node_maintenance m WHERE m.node_id = n.id), 0) <> 1"
    );
    let cleared = "SELECT DISTINCT m.node_id FROM node_maintenance m JOIN nodes n ON n.id = m.node_id \
         WHERE m.node_id >= ? AND m.node_id < ? AND (n.maintenance = FALSE OR n.maintenance IS NULL)";
    let mut ids = BTreeSet::new();
    for sql in [maintained.as_str(), cleared] {
        let rows = db.query_all_raw(crate::sql::stmt(backend, sql, vec![lo.into(), hi.into()])).await?;
        for row in rows {
            ids.insert(row.try_get_by_index::<i32>(0)?);
        }
    }
    Ok(ids.into_iter().collect())
}

pub use crate::sql::node_id_bounds;

/// Entries whose node is gone, oldest first, at most `limit`.
pub async fn orphans<C: ConnectionTrait>(db: &C, limit: u64) -> Result<Vec<node_maintenance::Model>, DbErr> {
    let backend = db.get_database_backend();
    let ids: Vec<i32> = db
        .query_all_raw(crate::sql::stmt(
            backend,
            "SELECT m.id FROM node_maintenance m WHERE NOT EXISTS (SELECT 1 FROM nodes n WHERE n.id = m.node_id) \
             ORDER BY m.id LIMIT ?",
            vec![(limit.min(i64::MAX as u64) as i64).into()],
        ))
        .await?
        .iter()
        .map(|row| row.try_get_by_index::<i32>(0))
        .collect::<Result<_, _>>()?;
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    node_maintenance::Entity::find()
        .filter(node_maintenance::Column::Id.is_in(ids))
        .order_by_asc(node_maintenance::Column::Id)
        .all(db)
        .await
}

/// The whole table scanned range by range: what `upgrade check` and
/// `reconcile --dry-run` report.
pub async fn summarize<C: ConnectionTrait>(
    db: &C,
    batch_size: i64,
    pinned: bool,
    progress: &dyn Progress,
) -> Result<DriftSummary, DbErr> {
    let mut summary = DriftSummary::default();
    if let Some((min, max)) = node_id_bounds(db).await? {
        progress.begin("scanning for drift", (max - min + 1) as u64);
        let mut lo = min;
        while lo <= max {
            let hi = lo.saturating_add(batch_size.max(1)).min(max + 1);
            for drift in scan(db, Nodes::Range(lo, hi), pinned).await? {
                summary.add(&drift);
            }
            progress.advance((hi - lo) as u64);
            lo = hi;
        }
        progress.finish();
    }
    let count = orphan_count(db).await?;
    if count > 0 {
        let examples = orphans(db, EXAMPLES as u64).await?;
        summary.add_orphans(count, examples.iter().map(|e| e.uuid.clone()).collect());
    }
    Ok(summary)
}

/// How many entries have no node.
pub async fn orphan_count<C: ConnectionTrait>(db: &C) -> Result<u64, DbErr> {
    let backend = db.get_database_backend();
    let row = db
        .query_one_raw(Statement::from_string(
            backend,
            "SELECT COUNT(*) FROM node_maintenance m WHERE NOT EXISTS (SELECT 1 FROM nodes n WHERE n.id = m.node_id)",
        ))
        .await?;
    let n = match row {
        Some(row) => row.try_get_by_index::<i64>(0).or_else(|_| row.try_get_by_index::<i32>(0).map(i64::from))?,
        None => 0,
    };
    Ok(n as u64)
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
}
