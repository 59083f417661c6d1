//! The one applier: every change to one node goes through [`change`],
//! which in the caller's transaction takes the node lock, reads what the
//! node holds, hands that to a pure planner (`crate::authority::plan`) and
//! writes the plan it returns — the entries, the windows, the invariant
//! write (boolean, reason, fault) and the events. A refusal writes nothing.
//! The set writers (the tick's batches, reconcile's repairs) are
//! `super::batches`.

use crate::authority::caller::Caller;
use crate::authority::plan::{NodeWrite, Plan, Snapshot, WindowWrite};
use crate::authority::rejected::Rejected;
use crate::error::{DbFailure, Error, Result};
use crate::notify::payload::NodeColumns;
use crate::store::nodes::{self, Locking};
use crate::store::outbox::Outbox;
use crate::store::{history, schedule, statements};
use nodemaint_entity::{node_maintenance, node_maintenance_schedule, nodes as node_rows};
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveValue::NotSet, ColumnTrait, ConnectionTrait, DatabaseTransaction, DbBackend, DbErr, EntityTrait,
    FromQueryResult, QueryFilter,
};

/// What a planner needs read besides the node and its active entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reads<'a> {
    /// The active entries alone.
    Entries,
    /// The active entries, for a legacy call (the boolean's PUT or
    /// DELETE): with notifications on, the node's `NodePayload` columns
    /// are read by the lock's own statement.
    LegacyCall,
    /// The scheduled windows too.
    Windows,
    /// The scheduled windows only when no active entry has this uuid (a
    /// release that cancels a window of that uuid if it has not started).
    WindowsUnlessActive(&'a str),
}

/// What a node holds, as read (under its lock, for a change).
pub(crate) struct Held {
    pub node: node_rows::Model,
    pub entries: Vec<node_maintenance::Model>,
    pub scheduled: Vec<node_maintenance_schedule::Model>,
    /// The node's `NodePayload` columns as locked (a legacy call's, notifying).
    pub payload: Option<NodeColumns>,
}

impl Held {
    pub fn snapshot(&self) -> Snapshot<'_> {
        Snapshot { node: &self.node, entries: &self.entries, scheduled: &self.scheduled }
    }
}

/// Locks the node `ident` for the rest of the transaction and reads it.
async fn lock(txn: &DatabaseTransaction, ident: &str, reads: Reads<'_>, outbox: Option<&Outbox>) -> Result<Held> {
    if let (Reads::LegacyCall, Some(outbox)) = (reads, outbox) {
        // One statement for the lock and the payload's columns: a legacy
        // call's notifications show the node, and a second read was a
        // round trip more for every call.
        let extra = outbox.payload_select(txn).await?;
        let (node, row) = nodes::lock_one(txn, ident, Some(extra)).await?;
        let payload = outbox.payload_of(&row, nodes::model_columns())?;
        let mut held = read_holdings(txn, node, reads).await?;
        held.payload = Some(payload);
        return Ok(held);
    }
    let node = nodes::lock(txn, Locking::Ident(ident)).await?.ok_or_else(|| Error::node_not_found(ident))?;
    read_holdings(txn, node, reads).await
}

/// The node `ident` and what it holds, without locking (reads).
pub(crate) async fn read<C: ConnectionTrait>(db: &C, ident: &str, reads: Reads<'_>) -> Result<Held> {
    let node = nodes::find(db, ident).await?;
    read_holdings(db, node, reads).await
}

async fn read_holdings<C: ConnectionTrait>(db: &C, node: node_rows::Model, reads: Reads<'_>) -> Result<Held> {
    let entries = entries_of(db, node.id).await?;
    let windows = match reads {
        Reads::Entries | Reads::LegacyCall => false,
        Reads::Windows => true,
        Reads::WindowsUnlessActive(uuid) => !entries.iter().any(|e| e.uuid == uuid),
    };
    let scheduled = if windows { schedule::of_node(db, node.id).await? } else { Vec::new() };
    Ok(Held { node, entries, scheduled, payload: None })
}

/// Who makes a change, and where its notifications go (`None`: not sent).
pub(crate) struct By<'a> {
    pub caller: &'a Caller,
    pub outbox: Option<&'a Outbox>,
}

/// Locks the node `ident`, reads it as `reads` says, asks `decide` for a
/// plan and writes it, with its notifications; returns what `decide`
/// returned beside the plan.
pub(crate) async fn change<T>(
    txn: &DatabaseTransaction,
    ident: &str,
    reads: Reads<'_>,
    by: By<'_>,
    decide: impl FnOnce(&Held) -> Result<(Plan, T), Rejected>,
) -> Result<T> {
    let held = lock(txn, ident, reads, by.outbox).await?;
    let (plan, outcome) = decide(&held)?;
    apply(txn, &plan, &held.node).await?;
    if let Some(outbox) = by.outbox {
        outbox.record(txn, &plan, &held, by.caller).await?;
    }
    Ok(outcome)
}

/// Writes `plan` for `node` (locked by this transaction).
async fn apply(txn: &DatabaseTransaction, plan: &Plan, node: &node_rows::Model) -> Result<()> {
    let backend = txn.get_database_backend();
    match &plan.delete[..] {
        [] => {}
        [one] => {
            txn.execute_raw(statements::delete_entry(backend, one.id)).await?;
        }
        many => {
            node_maintenance::Entity::delete_many()
                .filter(node_maintenance::Column::Id.is_in(many.iter().map(|e| e.id)))
                .exec(txn)
                .await?;
        }
    }
    for entry in &plan.update {
        update_entry(txn, entry).await?;
    }
    for entry in &plan.insert {
        insert_entry(txn, entry, node).await?;
    }
    for write in &plan.windows {
        match write {
            WindowWrite::Insert(window) => {
                let mut row: node_maintenance_schedule::ActiveModel = window.as_ref().clone().into();
                row.id = NotSet;
                node_maintenance_schedule::Entity::insert(row).exec(txn).await?;
            }
            WindowWrite::SetEnd { id, ends_at, at } => schedule::set_end(txn, *id, *ends_at, *at).await?,
            WindowWrite::Delete(id) => schedule::delete(txn, *id).await?,
        }
    }
    if let Some(columns) = &plan.node {
        write_node(txn, plan.node_id, columns, plan.at).await?;
    }
    for event in &plan.events {
        history::record_event(txn, event).await?;
    }
    Ok(())
}

/// A node's entries in `asserted_at` order, ties by id.
pub(crate) async fn entries_of<C: ConnectionTrait>(
    db: &C,
    node_id: i32,
) -> Result<Vec<node_maintenance::Model>, DbErr> {
    node_maintenance::Model::find_by_statement(statements::entries_of(db.get_database_backend(), node_id)).all(db).await
}

/// The invariant write for one node whose columns a plan decided: one
/// cached `UPDATE`, not `ActiveModel::update` (which reads the node back).
async fn write_node(txn: &DatabaseTransaction, id: i32, columns: &NodeWrite, at: chrono::NaiveDateTime) -> Result<()> {
    let backend = txn.get_database_backend();
    let (maintenance, reason) = (columns.maintenance, columns.reason.clone());
    let update = match &columns.fault {
        Some(fault) => statements::sync_node_fault(backend, id, maintenance, reason, fault.clone(), at),
        None => statements::sync_node(backend, id, maintenance, reason, at),
    };
    txn.execute_raw(update).await?;
    Ok(())
}

async fn insert_entry(
    txn: &DatabaseTransaction,
    entry: &node_maintenance::Model,
    node: &node_rows::Model,
) -> Result<()> {
    let mut row: node_maintenance::ActiveModel = entry.clone().into();
    row.id = NotSet;
    // Nothing is read back (no RETURNING *, no SELECT after it on MySQL):
    // the row is what was just sent, and nothing after needs its id.
    let backend = txn.get_database_backend();
    let insert = statements::insert_entry(backend, &row);
    let inserted = if backend == DbBackend::Postgres {
        txn.query_one_raw(insert).await.map(drop)
    } else {
        txn.execute_raw(insert).await.map(drop)
    };
    inserted.map_err(|e| match Error::from(e) {
        // The unique key backs the planner's duplicate check.
        Error::Database { kind: DbFailure::UniqueViolation, .. } => Error::Conflict(format!(
            "An identical maintenance entry (type {}, scope {}) is already active on node {}",
            entry.entry_type,
            entry.scope,
            node.uuid.as_deref().unwrap_or("?")
        )),
        other => other,
    })
}

/// Rewrites an entry's reason, extra, end and `updated_at`; asserter and
/// scope stay. Not `ActiveModel::update`: it reads the row back (RETURNING
/// *, or a SELECT after the UPDATE on MySQL), and the new row is known.
async fn update_entry(txn: &DatabaseTransaction, entry: &node_maintenance::Model) -> Result<()> {
    use node_maintenance::Column as C;
    node_maintenance::Entity::update_many()
        .col_expr(C::Reason, Expr::value(entry.reason.clone()))
        .col_expr(C::Extra, Expr::value(entry.extra.clone()))
        .col_expr(C::EndsAt, Expr::value(entry.ends_at))
        .col_expr(C::UpdatedAt, Expr::value(entry.updated_at))
        .filter(C::Id.eq(entry.id))
        .exec(txn)
        .await?;
    Ok(())
}
