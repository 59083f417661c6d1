//! Nodes as the operations read them: the one lookup by uuid or name
//! ([`find`]), the one node lock (`lock`, one node or a set), and the
//! node as the API shows it ([`NodeView`]). Writes of the legacy columns as
//! an old service makes them are `legacy`.

use crate::error::{Error, Result};
use crate::store::statements;
use nodemaint_entity::nodes;
use nodemaint_entity::vocab::iso8601;
use nodemaint_runtime::sql::stmt;
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, DatabaseTransaction, DbBackend, EntityTrait, FromQueryResult, QueryFilter,
    QueryOrder, QuerySelect, Value,
};
use serde::Serialize;

/// A node as `node show --format json` prints it: Ironic's field names.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct NodeView {
    pub uuid: Option<String>,
    pub name: Option<String>,
    pub owner: Option<String>,
    pub lessee: Option<String>,
    pub maintenance: bool,
    pub maintenance_reason: Option<String>,
    pub fault: Option<String>,
    pub reservation: Option<String>,
    pub created_at: Option<String>,
    pub updated_at: Option<String>,
}

impl From<&nodes::Model> for NodeView {
    fn from(n: &nodes::Model) -> Self {
        NodeView {
            uuid: n.uuid.clone(),
            name: n.name.clone(),
            owner: n.owner.clone(),
            lessee: n.lessee.clone(),
            maintenance: n.maintenance.unwrap_or(false),
            maintenance_reason: n.maintenance_reason.clone(),
            fault: n.fault.clone(),
            reservation: n.reservation.clone(),
            created_at: n.created_at.map(python_isoformat),
            updated_at: n.updated_at.map(python_isoformat),
        }
    }
}

/// A node's time as Ironic's API writes it (Python's `isoformat()` of an
/// aware UTC time): microseconds only when there are any.
pub fn python_isoformat(t: chrono::NaiveDateTime) -> String {
    use chrono::Timelike;
    let whole = iso8601(t);
    match t.nanosecond() / 1000 {
        0 => whole,
        micros => format!("{}.{micros:06}+00:00", whole.trim_end_matches("+00:00")),
    }
}

/// Whether `ident` could be a node's uuid or name at all: no name holds a
/// NUL (PostgreSQL refuses one in a query) or is longer than the column.
fn could_name_a_node(ident: &str) -> bool {
    !ident.contains('\0') && ident.chars().count() <= 255
}

/// Finds a node by uuid (when `ident` is one) or by name, as Ironic's API
/// does, without locking it: the one node lookup every operation uses
/// (`lock` is the same lookup under the node lock).
pub async fn find<C: ConnectionTrait>(db: &C, ident: &str) -> Result<nodes::Model> {
    if !could_name_a_node(ident) {
        return Err(Error::node_not_found(ident));
    }
    let (by_uuid, value) = ident_key(ident);
    nodes::Model::find_by_statement(statements::find_node(db.get_database_backend(), by_uuid, false, value))
        .one(db)
        .await?
        .ok_or_else(|| Error::node_not_found(ident))
}

/// Which nodes [`lock`] holds: one by uuid or name, or a set by id.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Locking<'a> {
    /// One node, by uuid or name (an API operation); not found is an error.
    Ident(&'a str),
    /// Nodes by id (a reconcile batch); ids no longer there are skipped.
    Ids(&'a [i32]),
}

/// The one node lock: holds the nodes for the rest of the transaction.
/// Every writer of a node's entries takes it first, so what it reads next
/// cannot change under it. For one node it returns the node's row as it is
/// under the lock (the lookup and the lock are one statement); a set is
/// locked without reading it (reconcile reads what it needs under the lock).
/// PostgreSQL and MySQL: `SELECT … FOR UPDATE`. SQLite has no row locks: a
/// no-op write first takes the database's write lock before anything is
/// read (a read that later upgrades to a write can fail with "database is
/// locked" whatever the busy timeout).
pub(crate) async fn lock(txn: &DatabaseTransaction, which: Locking<'_>) -> Result<Option<nodes::Model>> {
    let backend = txn.get_database_backend();
    let sqlite = backend == DbBackend::Sqlite;
    match which {
        Locking::Ident(ident) => Ok(Some(lock_one(txn, ident, None).await?.0)),
        Locking::Ids(ids) => {
            let marks = vec!["?"; ids.len()].join(", ");
            let values: Vec<Value> = ids.iter().map(|id| (*id).into()).collect();
            let sql = if sqlite {
                format!("UPDATE nodes SET maintenance = maintenance WHERE id IN ({marks})")
            } else {
                format!("SELECT id FROM nodes WHERE id IN ({marks}) FOR UPDATE")
            };
            txn.execute_raw(stmt(backend, &sql, values)).await?;
            Ok(None)
        }
    }
}

/// How many columns a `nodes` row read as [`nodes::Model`] has: what
/// [`lock_one`] reads after them starts at this index.
pub(crate) fn model_columns() -> usize {
    <nodes::Column as sea_orm::Iterable>::iter().count()
}

/// [`lock`] of one node by uuid or name, its row read with `extra` (a
/// select list on `nodes`, after the node's own columns) in the same
/// statement: the row as it is under the lock, and the whole result.
pub(crate) async fn lock_one(
    txn: &DatabaseTransaction,
    ident: &str,
    extra: Option<&str>,
) -> Result<(nodes::Model, sea_orm::QueryResult)> {
    if !could_name_a_node(ident) {
        return Err(Error::node_not_found(ident));
    }
    let backend = txn.get_database_backend();
    let (by_uuid, value) = ident_key(ident);
    if backend == DbBackend::Sqlite {
        let column = if by_uuid { "uuid" } else { "name" };
        let sql = format!("UPDATE nodes SET maintenance = maintenance WHERE {column} = ?");
        txn.execute_raw(stmt(backend, &sql, vec![value.clone().into()])).await?;
    }
    let statement = match extra {
        Some(extra) => statements::find_node_reading(backend, by_uuid, extra, value),
        None => statements::find_node(backend, by_uuid, true, value),
    };
    let row = txn.query_one_raw(statement).await?.ok_or_else(|| Error::node_not_found(ident))?;
    Ok((nodes::Model::from_query_result(&row, "")?, row))
}

/// How Ironic's API reads a node identifier: a uuid (compared lower-case)
/// when it parses as one, else a name.
fn ident_key(ident: &str) -> (bool, String) {
    if uuid::Uuid::try_parse(ident).is_ok() { (true, ident.to_ascii_lowercase()) } else { (false, ident.to_owned()) }
}

/// The nodes `query` asks for, in id order: those whose owner or lessee is
/// `project`, or every node with `None` (a system caller); after the node
/// with id `after` (the marker).
pub(crate) async fn list<C: ConnectionTrait>(
    db: &C,
    query: &NodeQuery,
    project: Option<&str>,
    after: Option<i32>,
) -> Result<Vec<nodes::Model>> {
    use nodes::Column as N;
    let mut select = if query.descending {
        nodes::Entity::find().order_by_desc(N::Id)
    } else {
        nodes::Entity::find().order_by_asc(N::Id)
    }
    .limit(query.limit);
    if let Some(project) = project {
        select = select.filter(Condition::any().add(N::Owner.eq(project)).add(N::Lessee.eq(project)));
    }
    select = match query.maintenance {
        Some(true) => select.filter(N::Maintenance.eq(true)),
        Some(false) => select.filter(Condition::any().add(N::Maintenance.eq(false)).add(N::Maintenance.is_null())),
        None => select,
    };
    if let Some(after) = after {
        select = select.filter(if query.descending { N::Id.lt(after) } else { N::Id.gt(after) });
    }
    Ok(select.all(db).await?)
}

/// Which nodes a caller's listing returns, in id order (`GET /v1/nodes`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeQuery {
    /// At most this many (Ironic's `limit`).
    pub limit: u64,
    /// Only nodes after this one, by uuid or name (Ironic's `marker`).
    pub marker: Option<String>,
    /// Only nodes in (`Some(true)`) or out of (`Some(false)`) maintenance.
    pub maintenance: Option<bool>,
    /// Newest first (Ironic's `sort_dir=desc`; nodes are sorted by id).
    pub descending: bool,
}
