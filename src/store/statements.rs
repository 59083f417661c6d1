//! The statements every API operation sends, their SQL rendered by
//! sea-query once per backend and reused with each call's values.
//!
//! Why: building a statement through the ORM each time (the entity's column
//! list, the expression tree, quoting, then freeing it all) cost more CPU
//! than sqlx spends sending it and reading the answer (callgrind on `serve`;
//! the counts are in git history). The text of these statements never
//! depends on their values, so it is built once.
//!
//! Each statement here has its ORM form beside it (`*_query`), which renders
//! the cached text and which the tests compare with the cached statement,
//! values included, on every backend.

use nodemaint_entity::{node_history, node_maintenance, node_maintenance_event, node_maintenance_schedule, nodes};
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveModelTrait, ActiveValue, ColumnTrait, DbBackend, EntityTrait, Iterable, QueryFilter, QueryOrder, QuerySelect,
    QueryTrait, Statement, Value, Values,
};
use std::sync::OnceLock;

/// One statement's SQL text, rendered on first use for each backend.
struct Sql([OnceLock<String>; 3]);

impl Sql {
    const fn new() -> Sql {
        Sql([OnceLock::new(), OnceLock::new(), OnceLock::new()])
    }

    fn with(&self, backend: DbBackend, render: impl FnOnce() -> Statement, values: Vec<Value>) -> Statement {
        let slot = match backend {
            DbBackend::Postgres => 0,
            DbBackend::MySql => 1,
            _ => 2,
        };
        let sql = self.0[slot].get_or_init(|| render().sql);
        Statement { sql: sql.clone(), values: Some(Values(values)), db_backend: backend }
    }
}

/// The values of an insert of `row`, in the order sea-query renders them:
/// the entity's columns in declaration order, those set.
fn insert_values<A: ActiveModelTrait>(row: &A) -> Vec<Value> {
    <A::Entity as EntityTrait>::Column::iter()
        .filter_map(|column| match row.get(column) {
            ActiveValue::Set(v) | ActiveValue::Unchanged(v) => Some(v),
            ActiveValue::NotSet => None,
        })
        .collect()
}

/// Finds a node by uuid (`by_uuid`) or name, `FOR UPDATE` with `lock` (not
/// on SQLite, which has no row locks; see `maintenance::find_node`).
pub(crate) fn find_node(backend: DbBackend, by_uuid: bool, lock: bool, value: String) -> Statement {
    static SQL: [Sql; 4] = [Sql::new(), Sql::new(), Sql::new(), Sql::new()];
    let lock = lock && backend != DbBackend::Sqlite;
    let which = usize::from(by_uuid) * 2 + usize::from(lock);
    SQL[which].with(backend, || find_node_query(by_uuid, lock, String::new()).build(backend), vec![value.into()])
}

/// [`find_node`] (locking) that also reads `extra`, a select list on
/// `nodes` (the notification payload's columns), after the node's own.
pub(crate) fn find_node_reading(backend: DbBackend, by_uuid: bool, extra: &str, value: String) -> Statement {
    let lock = backend != DbBackend::Sqlite;
    let query = find_node_query(by_uuid, lock, value).expr(sea_orm::sea_query::Expr::cust(extra.to_owned()));
    query.build(backend)
}

fn find_node_query(by_uuid: bool, lock: bool, value: String) -> sea_orm::Select<nodes::Entity> {
    let filter = if by_uuid { nodes::Column::Uuid.eq(value) } else { nodes::Column::Name.eq(value) };
    let query = nodes::Entity::find().filter(filter);
    if lock { query.lock_exclusive() } else { query }
}

/// A node's entries in `asserted_at` order, ties by id.
pub(crate) fn entries_of(backend: DbBackend, node_id: i32) -> Statement {
    static SQL: Sql = Sql::new();
    SQL.with(backend, || entries_of_query(0).build(backend), vec![node_id.into()])
}

fn entries_of_query(node_id: i32) -> sea_orm::Select<node_maintenance::Entity> {
    node_maintenance::Entity::find()
        .filter(node_maintenance::Column::NodeId.eq(node_id))
        .order_by_asc(node_maintenance::Column::AssertedAt)
        .order_by_asc(node_maintenance::Column::Id)
}

/// A node's scheduled windows, soonest first (read by every add: a new
/// entry may not overlap one).
pub(crate) fn schedule_of(backend: DbBackend, node_id: i32) -> Statement {
    static SQL: Sql = Sql::new();
    SQL.with(backend, || schedule_of_query(0).build(backend), vec![node_id.into()])
}

fn schedule_of_query(node_id: i32) -> sea_orm::Select<node_maintenance_schedule::Entity> {
    node_maintenance_schedule::Entity::find()
        .filter(node_maintenance_schedule::Column::NodeId.eq(node_id))
        .order_by_asc(node_maintenance_schedule::Column::StartsAt)
        .order_by_asc(node_maintenance_schedule::Column::Id)
}

/// Inserts an entry (every column but `id`), returning its id on PostgreSQL;
/// MySQL and SQLite report it as the last insert id.
pub(crate) fn insert_entry(backend: DbBackend, row: &node_maintenance::ActiveModel) -> Statement {
    static SQL: Sql = Sql::new();
    SQL.with(backend, || insert_entry_query(row, backend), insert_values(row))
}

fn insert_entry_query(row: &node_maintenance::ActiveModel, backend: DbBackend) -> Statement {
    let mut insert = node_maintenance::Entity::insert(row.clone()).into_query();
    if backend == DbBackend::Postgres {
        insert.returning_col(node_maintenance::Column::Id);
    }
    backend.build(&insert)
}

/// Inserts an event's history row (the columns `history::event_rows` sets).
pub(crate) fn insert_history(backend: DbBackend, row: &node_history::ActiveModel) -> Statement {
    static SQL: Sql = Sql::new();
    SQL.with(backend, || node_history::Entity::insert(row.clone()).build(backend), insert_values(row))
}

/// Inserts an event's typed row (the columns `history::event_rows` sets).
pub(crate) fn insert_typed_event(backend: DbBackend, row: &node_maintenance_event::ActiveModel) -> Statement {
    static SQL: Sql = Sql::new();
    SQL.with(backend, || node_maintenance_event::Entity::insert(row.clone()).build(backend), insert_values(row))
}

/// Deletes one entry.
pub(crate) fn delete_entry(backend: DbBackend, id: i32) -> Statement {
    static SQL: Sql = Sql::new();
    SQL.with(backend, || delete_entry_query(0).build(backend), vec![id.into()])
}

fn delete_entry_query(id: i32) -> sea_orm::DeleteMany<node_maintenance::Entity> {
    node_maintenance::Entity::delete_many().filter(node_maintenance::Column::Id.eq(id))
}

/// Sets a node's boolean, deprecated reason column and `updated_at`.
pub(crate) fn sync_node(
    backend: DbBackend,
    node_id: i32,
    maintenance: bool,
    reason: Option<String>,
    now: chrono::NaiveDateTime,
) -> Statement {
    static SQL: Sql = Sql::new();
    let values = vec![maintenance.into(), reason.into(), now.into(), node_id.into()];
    SQL.with(backend, || sync_node_query(0, false, None, now).build(backend), values)
}

/// [`sync_node`] that also writes `nodes.fault` (see `vocab::fault_column`).
pub(crate) fn sync_node_fault(
    backend: DbBackend,
    node_id: i32,
    maintenance: bool,
    reason: Option<String>,
    fault: Option<String>,
    now: chrono::NaiveDateTime,
) -> Statement {
    static SQL: Sql = Sql::new();
    let values = vec![maintenance.into(), reason.into(), now.into(), fault.into(), node_id.into()];
    SQL.with(backend, || sync_node_fault_query(0, false, None, None, now).build(backend), values)
}

fn sync_node_fault_query(
    node_id: i32,
    maintenance: bool,
    reason: Option<String>,
    fault: Option<String>,
    now: chrono::NaiveDateTime,
) -> sea_orm::UpdateMany<nodes::Entity> {
    sync_node_query(node_id, maintenance, reason, now).col_expr(nodes::Column::Fault, Expr::value(fault))
}

fn sync_node_query(
    node_id: i32,
    maintenance: bool,
    reason: Option<String>,
    now: chrono::NaiveDateTime,
) -> sea_orm::UpdateMany<nodes::Entity> {
    nodes::Entity::update_many()
        .col_expr(nodes::Column::Maintenance, Expr::value(maintenance))
        .col_expr(nodes::Column::MaintenanceReason, Expr::value(reason))
        .col_expr(nodes::Column::UpdatedAt, Expr::value(now))
        .filter(nodes::Column::Id.eq(node_id))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::authority::caller::Caller;
    use crate::authority::event::{EventKind, MaintenanceEvent};
    use crate::authority::release::tests::entry;
    use crate::store::history::event_rows;

    const BACKENDS: [DbBackend; 3] = [DbBackend::Postgres, DbBackend::MySql, DbBackend::Sqlite];

    /// Twice, so the second call is served from the cache.
    fn same_twice(cached: impl Fn() -> Statement, built: Statement) {
        assert_eq!(cached(), built, "first call");
        assert_eq!(cached(), built, "from the cache");
    }

    #[test]
    fn cached_statements_are_the_statements_the_orm_builds() {
        let now = chrono::NaiveDate::from_ymd_opt(2026, 12, 4).unwrap().and_hms_opt(15, 0, 0).unwrap();
        let mut model = entry("operator_hold", "system", "");
        model.reason = None;
        let mut row: node_maintenance::ActiveModel = model.clone().into();
        row.id = ActiveValue::NotSet;
        let actor = Caller::project("u1", "p1", &["member"]);
        let (history, typed) =
            event_rows(&MaintenanceEvent::new(EventKind::Released, &model, &actor, Some("note"), now));
        for b in BACKENDS {
            for (by_uuid, lock) in [(true, true), (true, false), (false, true), (false, false)] {
                let locks = lock && b != DbBackend::Sqlite;
                same_twice(
                    || find_node(b, by_uuid, lock, "n-1".into()),
                    find_node_query(by_uuid, locks, "n-1".into()).build(b),
                );
            }
            same_twice(|| entries_of(b, 42), entries_of_query(42).build(b));
            same_twice(|| schedule_of(b, 42), schedule_of_query(42).build(b));
            same_twice(|| insert_entry(b, &row), insert_entry_query(&row, b));
            same_twice(|| insert_history(b, &history), node_history::Entity::insert(history.clone()).build(b));
            same_twice(
                || insert_typed_event(b, &typed),
                node_maintenance_event::Entity::insert(typed.clone()).build(b),
            );
            same_twice(|| delete_entry(b, 7), delete_entry_query(7).build(b));
            same_twice(|| sync_node(b, 3, false, None, now), sync_node_query(3, false, None, now).build(b));
            same_twice(
                || sync_node(b, 3, true, Some("r".into()), now),
                sync_node_query(3, true, Some("r".into()), now).build(b),
            );
            same_twice(
                || sync_node_fault(b, 3, true, Some("r".into()), Some("power failure".into()), now),
                sync_node_fault_query(3, true, Some("r".into()), Some("power failure".into()), now).build(b),
            );
            same_twice(
                || sync_node_fault(b, 3, false, None, None, now),
                sync_node_fault_query(3, false, None, None, now).build(b),
            );
        }
    }

    #[test]
    fn postgres_locks_and_returns_the_new_id() {
        assert!(find_node(DbBackend::Postgres, true, true, "u".into()).sql.ends_with("FOR UPDATE"));
        assert!(!find_node(DbBackend::Sqlite, true, true, "u".into()).sql.contains("FOR UPDATE"));
        let mut row: node_maintenance::ActiveModel = entry("operator_hold", "system", "").into();
        row.id = ActiveValue::NotSet;
        assert!(insert_entry(DbBackend::Postgres, &row).sql.ends_with(r#"RETURNING "id""#));
        assert!(!insert_entry(DbBackend::MySql, &row).sql.contains("RETURNING"));
    }
}
