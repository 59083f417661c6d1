//! Windows as stored: the scheduled ones (`node_maintenance_schedule`) and
//! the end of active ones (`node_maintenance.ends_at`). One node at a time
//! for the API's operations, under the node lock; the tick's set-based SQL
//! is in `crate::tick`.

use crate::store::statements;
use nodemaint_entity::{node_maintenance, node_maintenance_schedule as schedule};
use sea_orm::sea_query::Expr;
use sea_orm::{ActiveValue::NotSet, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, FromQueryResult, QueryFilter};

/// A node's scheduled windows, soonest first (a cached statement: every add reads them).
pub(crate) async fn of_node<C: ConnectionTrait>(db: &C, node_id: i32) -> Result<Vec<schedule::Model>, DbErr> {
    schedule::Model::find_by_statement(statements::schedule_of(db.get_database_backend(), node_id)).all(db).await
}

/// Stores a scheduled window; returns it with its id.
pub(crate) async fn insert<C: ConnectionTrait>(db: &C, mut window: schedule::Model) -> Result<schedule::Model, DbErr> {
    let mut row: schedule::ActiveModel = window.clone().into();
    row.id = NotSet;
    window.id = schedule::Entity::insert(row).exec(db).await?.last_insert_id;
    Ok(window)
}

pub(crate) async fn delete<C: ConnectionTrait>(db: &C, id: i32) -> Result<(), DbErr> {
    schedule::Entity::delete_by_id(id).exec(db).await?;
    Ok(())
}

/// Moves a scheduled window's end.
pub(crate) async fn set_scheduled_end<C: ConnectionTrait>(
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

/// Moves an active entry's end.
pub(crate) async fn set_active_end<C: ConnectionTrait>(
    db: &C,
    id: i32,
    ends_at: chrono::NaiveDateTime,
    now: chrono::NaiveDateTime,
) -> Result<(), DbErr> {
    node_maintenance::Entity::update_many()
        .col_expr(node_maintenance::Column::EndsAt, Expr::value(ends_at))
        .col_expr(node_maintenance::Column::UpdatedAt, Expr::value(now))
        .filter(node_maintenance::Column::Id.eq(id))
        .exec(db)
        .await?;
    Ok(())
}
