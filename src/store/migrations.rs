//! What `crate::schema` reads of the schema's history and of the rows a
//! downgrade would remove.

use chrono::{DateTime, Utc};
use nodemaint_migration::MIGRATION_TABLE;
use nodemaint_migration::backfill::MIGRATION_ASSERTER;
use sea_orm::{ConnectionTrait, DbErr, Statement};
use std::collections::HashMap;

/// When each applied migration was applied, by name (the migrations table
/// must exist).
pub(crate) async fn applied_at<C: ConnectionTrait>(db: &C) -> Result<HashMap<String, Option<DateTime<Utc>>>, DbErr> {
    let sql = format!("SELECT version, applied_at FROM {MIGRATION_TABLE}");
    let rows = db.query_all_raw(Statement::from_string(db.get_database_backend(), sql)).await?;
    rows.iter()
        .map(|row| {
            let version: String = row.try_get_by_index(0)?;
            let at: i64 = row.try_get_by_index(1)?;
            Ok((version, DateTime::<Utc>::from_timestamp(at, 0)))
        })
        .collect()
}

/// Which rows of a table [`count`] counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rows {
    All,
    /// `node_maintenance`'s legacy entries the backfill made.
    Backfilled,
    /// `node_maintenance`'s active windows (entries with an end).
    Windows,
    /// The outbox's notifications not yet sent.
    Unsent,
}

pub(crate) async fn count<C: ConnectionTrait>(db: &C, table: &str, rows: Rows) -> Result<u64, DbErr> {
    let backend = db.get_database_backend();
    let filter = match rows {
        Rows::All => String::new(),
        Rows::Backfilled => format!(
            " WHERE {} = 'legacy' AND asserted_by = '{MIGRATION_ASSERTER}'",
            nodemaint_runtime::sql::quote(backend, "type")
        ),
        Rows::Windows => " WHERE ends_at IS NOT NULL".to_owned(),
        Rows::Unsent => " WHERE sent_at IS NULL".to_owned(),
    };
    let sql = format!("SELECT COUNT(*) FROM {table}{filter}");
    let n = match db.query_one_raw(Statement::from_string(backend, sql)).await? {
        Some(row) => row.try_get_by_index::<i64>(0).or_else(|_| row.try_get_by_index::<i32>(0).map(i64::from))?,
        None => 0,
    };
    Ok(n.max(0) as u64)
}
