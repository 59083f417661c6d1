//! Scheduled windows as stored (`node_maintenance_schedule`), one node at
//! a time for the applier (`super::apply`), under the node lock; the
//! tick's set-based SQL is `super::batches`.

use crate::store::statements;
use nodemaint_entity::node_maintenance_schedule as schedule;
use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, ConnectionTrait, DbErr, EntityTrait, FromQueryResult, QueryFilter};

/// A node's scheduled windows, soonest first (a cached statement: every add reads them).
pub(crate) async fn of_node<C: ConnectionTrait>(db: &C, node_id: i32) -> Result<Vec<schedule::Model>, DbErr> {
    schedule::Model::find_by_statement(statements::schedule_of(db.get_database_backend(), node_id)).all(db).await
}

pub(crate) async fn delete<C: ConnectionTrait>(db: &C, id: i32) -> Result<(), DbErr> {
    schedule::Entity::delete_by_id(id).exec(db).await?;
    Ok(())
}

/// Moves a scheduled window's end.
pub(crate) async fn set_end<C: ConnectionTrait>(
    db: &C,
    id: i32,
    ends_at: chrono::NaiveDateTime,
    now: chrono::NaiveDateTime,
) -> Result<(), DbErr> {
    schedule::Entity::update_many()
        .col_expr(schedule::Column::EndsAt, Expr::value(ends_at))
        .col_expr(schedule::Column::UpdatedAt, Expr::value(now))
        .filter(schedule::Column::Id.eq(id))
        .exec(db)
        .await?;
    Ok(())
}
