//! What kind of database a URL points at, before anything is changed: a
//! fresh one, Ironic's, one nodemaint already migrated, or something else
//! that nodemaint must refuse to touch.

use sea_orm::{ConnectionTrait, DbBackend, DbErr, Statement};

/// Columns of `nodes` that nodemaint reads or writes; an Ironic database has them all.
pub const REQUIRED_NODE_COLUMNS: &[&str] =
    &["id", "uuid", "name", "owner", "lessee", "maintenance", "maintenance_reason"];

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DatabaseKind {
    /// No tables at all: the baseline will create `nodes` and `node_history`.
    Empty,
    /// Has a `nodes` table with Ironic's columns (Ironic's own, or our baseline's).
    Ironic,
    /// Has tables, but no `nodes`, or a `nodes` missing what we need.
    Foreign(String),
}

/// Names of the tables in the connection's current schema/database.
pub async fn tables<C: ConnectionTrait>(db: &C) -> Result<Vec<String>, DbErr> {
    let backend = db.get_database_backend();
    let sql = match backend {
        DbBackend::Sqlite => "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
        // pg_catalog, not information_schema: the latter is a view over it, and slow.
        DbBackend::Postgres => "SELECT tablename::text FROM pg_catalog.pg_tables WHERE schemaname = current_schema()",
        _ => "SELECT CAST(table_name AS CHAR) FROM information_schema.tables WHERE table_schema = DATABASE()",
    };
    db.query_all_raw(Statement::from_string(backend, sql))
        .await?
        .iter()
        .map(|row| row.try_get_by_index::<String>(0))
        .collect()
}

/// Column names of `table`.
pub async fn columns<C: ConnectionTrait>(db: &C, table: &str) -> Result<Vec<String>, DbErr> {
    let backend = db.get_database_backend();
    let sql = match backend {
        DbBackend::Sqlite => format!("SELECT name FROM pragma_table_info('{table}')"),
        // The catalog, not information_schema, which lists only the columns
        // the user has privileges on: a user without grants would make
        // Ironic's own table look foreign.
        DbBackend::Postgres => format!(
            "SELECT a.attname::text FROM pg_catalog.pg_attribute a \
             JOIN pg_catalog.pg_class c ON c.oid = a.attrelid \
             JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
             WHERE n.nspname = current_schema() AND c.relname = '{table}' AND a.attnum > 0 AND NOT a.attisdropped"
        ),
        _ => format!(
            "SELECT CAST(column_name AS CHAR) FROM information_schema.columns \
             WHERE table_schema = DATABASE() AND table_name = '{table}'"
        ),
    };
    db.query_all_raw(Statement::from_string(backend, sql))
        .await?
        .iter()
        .map(|row| row.try_get_by_index::<String>(0))
        .collect()
}

/// MySQL's SQLSTATE for "table doesn't exist" (error 1146).
const NO_SUCH_TABLE: &str = "42S02";

/// The SQLSTATE of a server error.
fn sql_state(e: &DbErr) -> Option<String> {
    match e {
        DbErr::Exec(sea_orm::RuntimeErr::SqlxError(inner)) => match inner.as_ref() {
            sea_orm::sqlx::Error::Database(db) => db.code().map(|c| c.into_owned()),
            _ => None,
        },
        _ => None,
    }
}

pub async fn classify<C: ConnectionTrait>(db: &C) -> Result<DatabaseKind, DbErr> {
    let tables = tables(db).await?;
    if !tables.iter().any(|t| t == "nodes") && db.get_database_backend() == DbBackend::MySql {
        // MySQL lists only the tables the user has privileges on: read
        // `nodes` itself, so a user without grants gets the server's "SELECT
        // command denied" instead of an empty-looking database.
        if let Err(e) = db.execute_unprepared("SELECT 1 FROM nodes WHERE 1 = 0").await
            && sql_state(&e).as_deref() != Some(NO_SUCH_TABLE)
        {
            return Err(e);
        }
    }
    if !tables.iter().any(|t| t == "nodes") {
        let others: Vec<&String> = tables.iter().filter(|t| !t.starts_with("nodemaint_")).collect();
        return Ok(if others.is_empty() {
            DatabaseKind::Empty
        } else {
            DatabaseKind::Foreign(format!("it has {} table(s) but no `nodes` table", others.len()))
        });
    }
    let columns = columns(db, "nodes").await?;
    let missing: Vec<&str> =
        REQUIRED_NODE_COLUMNS.iter().copied().filter(|c| !columns.iter().any(|have| have == c)).collect();
    if missing.is_empty() {
        Ok(DatabaseKind::Ironic)
    } else {
        Ok(DatabaseKind::Foreign(format!("its `nodes` table lacks column(s) {}", missing.join(", "))))
    }
}
