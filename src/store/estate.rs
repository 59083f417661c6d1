//! The estate listing's reads (`crate::maintenance::estate` decides what a
//! caller sees of them): active windows, scheduled windows and the typed
//! events that ended windows, each joined to its node, walked by id in
//! bounded pages, optionally only on the nodes one project owns or leases.

use chrono::NaiveDateTime;
use nodemaint_entity::{
    node_history, node_maintenance, node_maintenance_event, node_maintenance_schedule as schedule, nodes,
};
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, DbErr, EntityTrait, Iterable, JoinType, QueryFilter, QueryOrder,
    QueryResult, QuerySelect, QueryTrait, RelationTrait, Select,
};

/// One page of a part: after which id, how many, and on whose nodes
/// (`None`: every node, for a system reader).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Page<'a> {
    pub after: i32,
    pub limit: u64,
    pub project: Option<&'a str>,
}

impl Page<'_> {
    /// The nodes' filter: all of them, or those the project owns or leases.
    fn nodes(&self) -> Condition {
        match self.project {
            None => Condition::all(),
            Some(p) => Condition::any().add(nodes::Column::Owner.eq(p)).add(nodes::Column::Lessee.eq(p)),
        }
    }
}

/// Entries with an end (active windows), each with its node.
pub(crate) async fn active<C: ConnectionTrait>(
    db: &C,
    page: Page<'_>,
) -> Result<Vec<(node_maintenance::Model, nodes::Model)>, DbErr> {
    use node_maintenance::Column as C;
    let select = node_maintenance::Entity::find()
        .select_only()
        .columns(C::iter())
        .join(JoinType::InnerJoin, node_maintenance::Relation::Node.def())
        .filter(C::EndsAt.is_not_null())
        .filter(C::Id.gt(page.after));
    with_nodes(db, page, select, C::iter().count(), C::Id, node_maintenance::Model::from_row_at).await
}

/// Scheduled windows, each with its node.
pub(crate) async fn scheduled<C: ConnectionTrait>(
    db: &C,
    page: Page<'_>,
) -> Result<Vec<(schedule::Model, nodes::Model)>, DbErr> {
    use schedule::Column as C;
    let select = schedule::Entity::find()
        .select_only()
        .columns(C::iter())
        .join(JoinType::InnerJoin, schedule::Relation::Node.def())
        .filter(C::Id.gt(page.after));
    with_nodes(db, page, select, C::iter().count(), C::Id, schedule::Model::from_row_at).await
}

/// Up to `page.limit` rows of `select` (its own columns, joined to `nodes`)
/// on the page's nodes, in `id` order, each with its node: the node's
/// columns follow the row's `width` columns, and both are read by position
/// (the entity crate's `from_row_at!` says why).
async fn with_nodes<D: ConnectionTrait, E: EntityTrait, M>(
    db: &D,
    page: Page<'_>,
    select: Select<E>,
    width: usize,
    id: E::Column,
    model_at: fn(&QueryResult, usize) -> Result<M, DbErr>,
) -> Result<Vec<(M, nodes::Model)>, DbErr> {
    let statement = select
        .columns(nodes::Column::iter())
        .filter(page.nodes())
        .order_by_asc(id)
        .limit(page.limit)
        .build(db.get_database_backend());
    let found = db.query_all_raw(statement).await?;
    found.iter().map(|r| Ok((model_at(r, 0)?, nodes::Model::from_row_at(r, width)?))).collect()
}

/// The typed events whose kind is one of `kinds`, or is `released_kind`
/// with a planned end (a window released early), recorded at or after
/// `since`, whose history row still exists: each with its node and the
/// history text.
pub(crate) async fn ended<C: ConnectionTrait>(
    db: &C,
    page: Page<'_>,
    kinds: &[&str],
    released_kind: &str,
    since: Option<NaiveDateTime>,
) -> Result<Vec<(node_maintenance_event::Model, nodes::Model, Option<String>)>, DbErr> {
    use node_maintenance_event::Column as C;
    let ended = Condition::any()
        .add(C::Kind.is_in(kinds.iter().copied()))
        .add(Condition::all().add(C::Kind.eq(released_kind)).add(C::EndsAt.is_not_null()));
    let mut select = node_maintenance_event::Entity::find()
        .select_only()
        .columns(C::iter())
        .join(JoinType::InnerJoin, node_maintenance_event::Relation::Node.def())
        .join(JoinType::InnerJoin, node_maintenance_event::Relation::History.def())
        .filter(ended)
        .filter(C::Id.gt(page.after));
    if let Some(since) = since {
        select = select.filter(C::CreatedAt.gte(since));
    }
    let width = C::iter().count();
    let statement = select
        .columns(nodes::Column::iter())
        .column(node_history::Column::Event)
        .filter(page.nodes())
        .order_by_asc(C::Id)
        .limit(page.limit)
        .build(db.get_database_backend());
    let found = db.query_all_raw(statement).await?;
    let node_width = nodes::Column::iter().count();
    found
        .iter()
        .map(|r| {
            let event = node_maintenance_event::Model::from_row_at(r, 0)?;
            let node = nodes::Model::from_row_at(r, width)?;
            let text: Option<String> = r.try_get_by_index(width + node_width)?;
            Ok((event, node, text))
        })
        .collect()
}
