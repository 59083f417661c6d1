//! The batch applier: the set writers (the tick's expiry and start,
//! reconcile's repairs) lock their nodes with [`lock`] and write a pure
//! [`BatchPlan`] (`crate::authority::batch`) with [`apply`], in the
//! batch's transaction, with the notifications of its events when asked
//! (`Outbox::record_batch`). Each step is set-based, `LOAD_CHUNK` rows per
//! statement (under every backend's parameter limit), so a batch costs a
//! few statements whatever its size.

use crate::authority::batch::{Backfill, BatchPlan, Noted};
use crate::authority::event::{EventKind, MaintenanceEvent};
use crate::error::Result;
use crate::store::outbox::{self, Outbox};
use crate::store::{history, invariant, nodes};
use nodemaint_entity::{node_history, node_maintenance};
use nodemaint_migration::backfill::{self, NodeSet};
use nodemaint_runtime::drift::LOAD_CHUNK;
use nodemaint_runtime::sql::{quote, stmt};
use sea_orm::{ColumnTrait, ConnectionTrait, DatabaseTransaction, DbBackend, EntityTrait, QueryFilter, Value};
use std::collections::BTreeSet;

/// Default `--batch-size` of the set writers (reconcile, the tick) on
/// PostgreSQL and MySQL: the most nodes one batch transaction locks. Row locks: an API request on one of them
/// waits for the transaction, the rest of the fleet does not.
pub const DEFAULT_BATCH_SIZE: i64 = 1000;

/// Default on SQLite, whose write lock is database-wide: every API write
/// waits for a batch transaction whatever its size, so size buys no
/// concurrency there, while each commit costs a WAL sync and usually a
/// checkpoint. Measured on a million nodes with 1 % drift of each kind:
/// see BENCHMARKS.md. A 10,000-node repair holds the lock about a second.
pub const SQLITE_DEFAULT_BATCH_SIZE: i64 = 10_000;

/// The default `--batch-size` for `backend`.
pub fn default_batch_size(backend: DbBackend) -> i64 {
    match backend {
        DbBackend::Sqlite => SQLITE_DEFAULT_BATCH_SIZE,
        _ => DEFAULT_BATCH_SIZE,
    }
}

/// Locks the distinct nodes of `ids` for the rest of the transaction, in
/// id order (every set writer takes them in the same order, so two never
/// deadlock each other); returns them in that order.
pub(crate) async fn lock(txn: &DatabaseTransaction, ids: impl IntoIterator<Item = i32>) -> Result<Vec<i32>> {
    let ids: Vec<i32> = ids.into_iter().collect::<BTreeSet<i32>>().into_iter().collect();
    for chunk in ids.chunks(LOAD_CHUNK) {
        nodes::lock(txn, nodes::Locking::Ids(chunk)).await?;
    }
    Ok(ids)
}

/// Writes `plan` (its nodes locked by this transaction); returns how many
/// entries expired (an extend or a release under the lock can win over an
/// expiry the plan named).
pub(crate) async fn apply(txn: &DatabaseTransaction, plan: &BatchPlan, outbox: Option<&Outbox>) -> Result<u64> {
    let mark = match outbox {
        Some(_) => outbox::last_event_id(txn).await?,
        None => 0,
    };
    if let Some(backfill) = &plan.backfill {
        create_legacy(txn, plan, backfill).await?;
    }
    let taken = match &plan.take_column {
        Some(noted) => take_column(txn, plan, noted).await?,
        None => Vec::new(),
    };
    let expired = match &plan.expire {
        Some(noted) => expire(txn, plan, noted).await?,
        None => 0,
    };
    for chunk in plan.start.chunks(LOAD_CHUNK) {
        start_windows(txn, chunk, plan.at).await?;
    }
    for chunk in plan.unschedule.chunks(LOAD_CHUNK) {
        use nodemaint_entity::node_maintenance_schedule as schedule;
        schedule::Entity::delete_many().filter(schedule::Column::Id.is_in(chunk.iter().copied())).exec(txn).await?;
    }
    let events: Vec<&MaintenanceEvent> = taken.iter().chain(&plan.events).collect();
    for chunk in events.chunks(LOAD_CHUNK) {
        history::record_all(txn, chunk).await?;
    }
    for chunk in plan.orphan_events.chunks(LOAD_CHUNK) {
        node_history::Entity::insert_many(chunk.iter().map(orphan_row)).exec(txn).await?;
    }
    for chunk in plan.delete.chunks(LOAD_CHUNK) {
        node_maintenance::Entity::delete_many()
            .filter(node_maintenance::Column::Id.is_in(chunk.iter().copied()))
            .exec(txn)
            .await?;
    }
    for chunk in plan.resync.chunks(LOAD_CHUNK) {
        invariant::resync(txn, chunk, plan.at).await?;
    }
    if let Some(outbox) = outbox {
        outbox.record_batch(txn, mark, &plan.actor).await?;
    }
    Ok(expired)
}

/// `?, ?, …` for `n` values.
fn marks(n: usize) -> String {
    vec!["?"; n].join(", ")
}

/// The highest entry id (0 with none): entries created after it are newer.
async fn last_entry_id(txn: &DatabaseTransaction) -> Result<i64> {
    let backend = txn.get_database_backend();
    let row = txn.query_one_raw(stmt(backend, "SELECT COALESCE(MAX(id), 0) FROM node_maintenance", vec![])).await?;
    let id = match row {
        Some(row) => row.try_get_by_index::<i64>(0).or_else(|_| row.try_get_by_index::<i32>(0).map(i64::from))?,
        None => 0,
    };
    Ok(id)
}

/// Legacy entries from the nodes' columns (the backfill's own SQL), then
/// an `asserted` event for each entry it created.
async fn create_legacy(txn: &DatabaseTransaction, plan: &BatchPlan, backfill: &Backfill) -> Result<()> {
    let asserter = plan.actor.user_id.as_str();
    let before = last_entry_id(txn).await?;
    for (missing, ids) in &backfill.groups {
        for chunk in ids.chunks(LOAD_CHUNK) {
            backfill::backfill_nodes(txn, NodeSet::Ids(chunk), *missing, asserter, plan.at, false).await?;
        }
    }
    let nodes: Vec<i32> = backfill.groups.iter().flat_map(|(_, ids)| ids.iter().copied()).collect();
    let backend = txn.get_database_backend();
    for chunk in nodes.chunks(LOAD_CHUNK) {
        let mut values: Vec<Value> = vec![before.into(), asserter.into()];
        values.extend(chunk.iter().map(|id| Value::from(*id)));
        let created = format!(
            "m.id > ? AND m.asserted_by = ? AND m.node_id IN ({}) AND m.{} = '{}'",
            marks(chunk.len()),
            quote(backend, "type"),
            backfill::LEGACY
        );
        let note = Some(backfill.note);
        history::record_for_entries(txn, EventKind::Asserted, &plan.actor, note, plan.at, &created, values).await?;
    }
    Ok(())
}

/// The entries' reason becomes their node's `maintenance_reason`; returns
/// an `updated` event each, with the entry as it now is.
async fn take_column(txn: &DatabaseTransaction, plan: &BatchPlan, noted: &Noted) -> Result<Vec<MaintenanceEvent>> {
    let backend = txn.get_database_backend();
    let mut events = Vec::new();
    for chunk in noted.ids.chunks(LOAD_CHUNK) {
        let mut values: Vec<Value> = vec![plan.at.into()];
        values.extend(chunk.iter().map(|id| Value::from(*id)));
        txn.execute_raw(stmt(
            backend,
            &format!(
                "UPDATE node_maintenance SET reason = (SELECT n.maintenance_reason FROM nodes n \
                 WHERE n.id = node_maintenance.node_id), updated_at = ? WHERE id IN ({})",
                marks(chunk.len())
            ),
            values,
        ))
        .await?;
        let updated = node_maintenance::Entity::find()
            .filter(node_maintenance::Column::Id.is_in(chunk.iter().copied()))
            .all(txn)
            .await?;
        events.extend(
            updated
                .iter()
                .map(|e| MaintenanceEvent::new(EventKind::Updated, e, &plan.actor, Some(noted.note), plan.at)),
        );
    }
    Ok(events)
}

/// Releases the entries whose end has still passed: the events (typed
/// rows, then history rows with their text built by the database, see
/// [`history::record_for_entries`]), then one `DELETE … IN`. Both filter
/// on the end again, so they see the same rows.
async fn expire(txn: &DatabaseTransaction, plan: &BatchPlan, noted: &Noted) -> Result<u64> {
    let backend = txn.get_database_backend();
    let mut done = 0;
    for chunk in noted.ids.chunks(LOAD_CHUNK) {
        let marks = marks(chunk.len());
        let values = || {
            let mut values: Vec<Value> = chunk.iter().map(|id| Value::from(*id)).collect();
            values.push(plan.at.into());
            values
        };
        let due = format!("m.id IN ({marks}) AND m.ends_at <= ?");
        history::record_for_entries(txn, EventKind::Expired, &plan.actor, Some(noted.note), plan.at, &due, values())
            .await?;
        let deleted = txn
            .execute_raw(stmt(
                backend,
                &format!("DELETE FROM node_maintenance WHERE id IN ({marks}) AND ends_at <= ?"),
                values(),
            ))
            .await?;
        done += deleted.rows_affected();
    }
    Ok(done)
}

/// Copies the windows `ids` from the schedule into the active entries,
/// asserted at `at`: one `INSERT … SELECT`.
async fn start_windows(txn: &DatabaseTransaction, ids: &[i32], at: chrono::NaiveDateTime) -> Result<()> {
    let backend = txn.get_database_backend();
    let ty = quote(backend, "type");
    let mut values: Vec<Value> = vec![at.into()];
    values.extend(ids.iter().map(|id| Value::from(*id)));
    txn.execute_raw(stmt(
        backend,
        &format!(
            "INSERT INTO node_maintenance (uuid, node_id, {ty}, reason, scope, asserted_by, \
             asserted_by_project, asserted_at, extra, version, created_at, ends_at) \
             SELECT uuid, node_id, {ty}, reason, scope, asserted_by, asserted_by_project, ?, extra, version, \
             created_at, ends_at FROM node_maintenance_schedule WHERE id IN ({})",
            marks(ids.len())
        ),
        values,
    ))
    .await?;
    Ok(())
}

/// The history row of an event whose node is gone: node id NULL, the text
/// naming the node id.
fn orphan_row(event: &MaintenanceEvent) -> node_history::ActiveModel {
    let (mut row, _) = history::event_rows(event);
    row.event = sea_orm::ActiveValue::Set(Some(format!("{} [node id {}]", event.text(), event.node_id)));
    row.node_id = sea_orm::ActiveValue::Set(None);
    row
}
