//! The invariant write: `nodes.maintenance` (true exactly while the node has
//! an entry), the deprecated `maintenance_reason` synthesised from the
//! entries, and (one node at a time) `nodes.fault` following the fault entry — for one node (an
//! API operation, one cached statement) or a set (a reconcile batch, one
//! set-based statement). Every writer of entries ends with it, under the
//! node lock ([`super::nodes::lock`]).

use crate::error::Result;
use crate::store::statements;
use nodemaint_entity::node_maintenance;
use nodemaint_entity::vocab::maintenance_reason_column;
use nodemaint_runtime::sql::stmt;
use sea_orm::{ColumnTrait, ConnectionTrait, DbBackend, EntityTrait, QueryFilter, Value};
use std::collections::BTreeMap;

/// One node's state after the transaction's change.
pub(crate) struct NodeState<'a> {
    pub id: i32,
    /// The node's entries after the change, in any order (the synthesised
    /// reason orders them itself). Known without reading them again: every
    /// writer holds the node's lock.
    pub entries: &'a [node_maintenance::Model],
    /// `Some(value)` writes `nodes.fault` (see `vocab::fault_column`);
    /// `None` leaves it as it is. Only API operations write it, one node at
    /// a time; a set (reconcile) leaves an old conductor's fault as it is.
    pub fault: Option<Option<String>>,
}

/// Writes the boolean, the reason column and `updated_at = now` (and the
/// fault column where asked) for every node in `nodes`.
pub(crate) async fn write<C: ConnectionTrait>(
    db: &C,
    nodes: &[NodeState<'_>],
    now: chrono::NaiveDateTime,
) -> Result<()> {
    let backend = db.get_database_backend();
    let update = match nodes {
        [] => return Ok(()),
        // An UPDATE rendered once, not ActiveModel::update (which reads the node back).
        [one] => {
            let (maintained, reason) = (!one.entries.is_empty(), maintenance_reason_column(one.entries));
            match &one.fault {
                Some(fault) => statements::sync_node_fault(backend, one.id, maintained, reason, fault.clone(), now),
                None => statements::sync_node(backend, one.id, maintained, reason, now),
            }
        }
        set if set.iter().any(|n| n.fault.is_some()) => {
            return Err(crate::error::Error::Database {
                message: "internal error: the fault column is written one node at a time; nothing was changed".into(),
                kind: crate::error::DbFailure::Other,
            });
        }
        set if backend == DbBackend::MySql => case_set(set, now),
        set => values_set(backend, set, now),
    };
    db.execute_raw(update).await?;
    Ok(())
}

/// [`write`] for the nodes `ids` from their entries as they are now (a
/// set-based repair or tick, under the nodes' lock): one read, one write.
pub(crate) async fn resync<C: ConnectionTrait>(db: &C, ids: &[i32], now: chrono::NaiveDateTime) -> Result<()> {
    let entries = node_maintenance::Entity::find()
        .filter(node_maintenance::Column::NodeId.is_in(ids.iter().copied()))
        .all(db)
        .await?;
    let mut by_node: BTreeMap<i32, Vec<node_maintenance::Model>> = ids.iter().map(|id| (*id, Vec::new())).collect();
    for e in entries {
        by_node.entry(e.node_id).or_default().push(e);
    }
    let states: Vec<NodeState> =
        by_node.iter().map(|(id, entries)| NodeState { id: *id, entries, fault: None }).collect();
    write(db, &states, now).await
}

/// SQLite and PostgreSQL: `UPDATE … FROM (VALUES …)`, the new values
/// joined to the nodes. SQLite factors every parameter of a CASE out as a
/// run-once constant and compares each with all before it when preparing:
/// 4,000 parameters made that quadratic step a tenth of a 1 % drift
/// reconcile's CPU. On PostgreSQL the join is also the cheaper plan: a
/// tick batch of 1,000 nodes took 20–25 ms against 26–32 ms with two CASEs
/// of 1,000 arms. Both name a VALUES list's columns `column1`…, and
/// PostgreSQL takes their types from the first row's casts.
fn values_set(backend: DbBackend, nodes: &[NodeState<'_>], now: chrono::NaiveDateTime) -> sea_orm::Statement {
    let first = match backend {
        DbBackend::Postgres => "(?::integer, ?::boolean, ?::text)",
        _ => "(?, ?, ?)",
    };
    let rows = std::iter::once(first)
        .chain(std::iter::repeat_n("(?, ?, ?)", nodes.len().saturating_sub(1)))
        .collect::<Vec<_>>();
    let mut values: Vec<Value> = vec![now.into()];
    for n in nodes {
        values.extend([
            Value::from(n.id),
            Value::from(!n.entries.is_empty()),
            maintenance_reason_column(n.entries).into(),
        ]);
    }
    stmt(
        backend,
        &format!(
            "UPDATE nodes SET maintenance = v.column2, maintenance_reason = v.column3, updated_at = ? \
             FROM (VALUES {}) AS v WHERE nodes.id = v.column1",
            rows.join(", ")
        ),
        values,
    )
}

/// MySQL and MariaDB (no `UPDATE … FROM`): one `UPDATE … SET col = CASE id WHEN … END`.
fn case_set(nodes: &[NodeState<'_>], now: chrono::NaiveDateTime) -> sea_orm::Statement {
    let when = " WHEN ? THEN ?";
    let mut sql = String::from("UPDATE nodes SET maintenance = CASE id");
    let mut values: Vec<Value> = Vec::new();
    for n in nodes {
        sql.push_str(when);
        values.extend([Value::from(n.id), Value::from(!n.entries.is_empty())]);
    }
    sql.push_str(" END, maintenance_reason = CASE id");
    for n in nodes {
        sql.push_str(when);
        values.extend([Value::from(n.id), maintenance_reason_column(n.entries).into()]);
    }
    sql.push_str(" END");
    sql.push_str(&format!(", updated_at = ? WHERE id IN ({})", vec!["?"; nodes.len()].join(", ")));
    values.push(now.into());
    values.extend(nodes.iter().map(|n| Value::from(n.id)));
    stmt(DbBackend::MySql, &sql, values)
}
