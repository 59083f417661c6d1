//! The checks `nodemaint upgrade check` runs, in order. Each is one small
//! module with one `check` function; adding a check is adding a line here.

mod backend;
mod backfilled;
mod galera;
mod invariants;
mod notifications;
mod overdue;
mod pin;
mod schema;
mod stale;
mod types;

use crate::framework::Check;

pub const ALL: &[Check] = &[
    Check { name: "Schema migrations", run: |c| Box::pin(schema::check(c)) },
    Check { name: "Maintenance entries backfilled", run: |c| Box::pin(backfilled::check(c)) },
    Check { name: "Release pin", run: |c| Box::pin(pin::check(c)) },
    Check { name: "Maintenance entry invariants", run: |c| Box::pin(invariants::check(c)) },
    Check { name: "Registered maintenance types", run: |c| Box::pin(types::check(c)) },
    Check { name: "Stale holds after a lease or ownership change", run: |c| Box::pin(stale::check(c)) },
    Check { name: "Database backend supported", run: |c| Box::pin(backend::check(c)) },
    Check { name: "Galera cluster", run: |c| Box::pin(galera::check(c)) },
    Check { name: "Overdue maintenance windows", run: |c| Box::pin(overdue::check(c)) },
    Check { name: "Notifications delivered", run: |c| Box::pin(notifications::check(c)) },
];

/// Whether `node_maintenance` exists; checks of its rows need it.
pub(crate) async fn has_maintenance_table(c: &crate::Context) -> Result<bool, String> {
    Ok(nodemaint_runtime::probe::tables(&c.db)
        .await
        .map_err(|e| e.to_string())?
        .iter()
        .any(|t| t == "node_maintenance"))
}

pub(crate) const NO_TABLE: &str = "The node_maintenance table does not exist yet: run `nodemaint db upgrade`.";

/// One integer from a query.
pub(crate) async fn count(c: &crate::Context, sql: &str) -> Result<i64, String> {
    use sea_orm::ConnectionTrait;
    let backend = c.db.get_database_backend();
    let row =
        c.db.query_one_raw(sea_orm::Statement::from_string(backend, sql.to_owned()))
            .await
            .map_err(|e| e.to_string())?
            .ok_or("no row")?;
    crate::census::int_at(&row, 0)
        .or_else(|_| row.try_get_by_index::<Option<i64>>(0).map(|v| v.unwrap_or(0)).map_err(|e| e.to_string()))
}
