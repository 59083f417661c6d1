//! The node writes an old (pre-upgrade) Ironic service makes, for
//! `crate::admin`: nodes created, changed and deleted with the legacy
//! columns written directly, and fleets seeded with multi-row INSERTs.
//! Nothing here keeps the invariant the operations keep; an API service
//! never calls it.

use nodemaint_entity::{node_history, nodes};
use nodemaint_runtime::progress::Progress;
use nodemaint_runtime::sql::stmt;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, DbErr, EntityTrait, QueryFilter, QueryOrder,
    QuerySelect, TransactionTrait, Value,
};

/// The node named `name`, if any.
pub(crate) async fn named<C: ConnectionTrait>(db: &C, name: &str) -> Result<Option<nodes::Model>, DbErr> {
    nodes::Entity::find().filter(nodes::Column::Name.eq(name)).one(db).await
}

pub(crate) async fn insert<C: ConnectionTrait>(db: &C, node: nodes::ActiveModel) -> Result<nodes::Model, DbErr> {
    node.insert(db).await
}

pub(crate) async fn update<C: ConnectionTrait>(db: &C, node: nodes::ActiveModel) -> Result<nodes::Model, DbErr> {
    node.update(db).await
}

/// At most `limit` nodes in id order, optionally only those in maintenance.
pub(crate) async fn list<C: ConnectionTrait>(
    db: &C,
    limit: u64,
    only_maintained: bool,
) -> Result<Vec<nodes::Model>, DbErr> {
    let mut query = nodes::Entity::find().order_by_asc(nodes::Column::Id).limit(limit);
    if only_maintained {
        query = query.filter(nodes::Column::Maintenance.eq(true));
    }
    query.all(db).await
}

/// Deletes the node `ident` as Ironic's `destroy_node` does: its history
/// first (that foreign key has no cascade), then the node; its maintenance
/// entries go with it through `ON DELETE CASCADE`. One transaction.
pub(crate) async fn delete(db: &DatabaseConnection, ident: &str) -> crate::error::Result<nodes::Model> {
    let txn = db.begin().await?;
    let node = super::nodes::find(&txn, ident).await?;
    node_history::Entity::delete_many().filter(node_history::Column::NodeId.eq(node.id)).exec(&txn).await?;
    nodes::Entity::delete_by_id(node.id).exec(&txn).await?;
    txn.commit().await?;
    Ok(node)
}

/// One seeded node's legacy columns.
pub(crate) struct SeedNode {
    pub uuid: String,
    pub name: String,
    pub owner: String,
    pub lessee: Option<String>,
    pub maintenance: bool,
    pub reason: Option<String>,
}

/// Values per row and rows per statement: 7 × 4,000 stays under SQLite's
/// 32,766 bound parameters (and PostgreSQL's and MySQL's 65,535).
const COLUMNS: usize = 7;
const ROWS_PER_STATEMENT: usize = 4_000;

/// Adds `count` nodes in one transaction, the `n`th made by `make(n)`,
/// numbering on from the nodes already there (the first new node is
/// `existing + 1`), `ROWS_PER_STATEMENT` rows per INSERT.
pub(crate) async fn seed(
    db: &DatabaseConnection,
    count: u64,
    mut make: impl FnMut(u64) -> SeedNode,
    progress: &dyn Progress,
) -> Result<(), DbErr> {
    let backend = db.get_database_backend();
    let txn = db.begin().await?;
    let existing: i64 = txn
        .query_one_raw(stmt(backend, "SELECT COUNT(*) FROM nodes", vec![]))
        .await?
        .map(|row| row.try_get_by_index::<i64>(0))
        .transpose()?
        .unwrap_or(0);
    let now = nodemaint_runtime::sql::now_utc();
    progress.begin("seeding nodes", count);
    let mut done = 0u64;
    while done < count {
        let rows = (count - done).min(ROWS_PER_STATEMENT as u64) as usize;
        let mut values: Vec<Value> = Vec::with_capacity(rows * COLUMNS);
        for i in 0..rows {
            let node = make(existing.max(0) as u64 + done + i as u64 + 1);
            values.extend([
                node.uuid.into(),
                node.name.into(),
                node.owner.into(),
                node.lessee.into(),
                node.maintenance.into(),
                node.reason.into(),
                now.into(),
            ]);
        }
        let placeholders = vec!["(?, ?, ?, ?, ?, ?, ?)"; rows].join(", ");
        let sql = format!(
            "INSERT INTO nodes (uuid, name, owner, lessee, maintenance, maintenance_reason, created_at) VALUES {placeholders}"
        );
        txn.execute_raw(stmt(backend, &sql, values)).await?;
        done += rows as u64;
        progress.advance(rows as u64);
    }
    txn.commit().await?;
    progress.finish();
    Ok(())
}
