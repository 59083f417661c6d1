//! Entries of types this release does not know (written by a newer one?).

use super::{NO_TABLE, has_maintenance_table};
use crate::{CheckResult, Context};
use nodemaint_entity::EntryType;
use sea_orm::{ConnectionTrait, Statement};

pub async fn check(c: &Context) -> Result<CheckResult, String> {
    if !has_maintenance_table(c).await? {
        return Ok(CheckResult::failure(NO_TABLE));
    }
    let backend = c.db.get_database_backend();
    let rows = c
        .db
        .query_all_raw(Statement::from_string(backend, "SELECT type, COUNT(*) FROM node_maintenance GROUP BY type"))
        .await
        .map_err(|e| e.to_string())?;
    let per_type: Vec<(String, i64)> = rows
        .iter()
        .map(|r| {
            let n = r.try_get_by_index::<i64>(1).or_else(|_| r.try_get_by_index::<i32>(1).map(i64::from));
            Ok((r.try_get_by_index::<String>(0)?, n?))
        })
        .collect::<Result<_, sea_orm::DbErr>>()
        .map_err(|e| e.to_string())?;
    let unknown: Vec<String> =
        per_type.iter().filter(|(t, _)| EntryType::lookup(t).is_none()).map(|(t, n)| format!("{t} ({n})")).collect();
    if unknown.is_empty() {
        return Ok(CheckResult::success(None));
    }
    Ok(CheckResult::warning(format!(
        "Entries of unregistered maintenance type(s): {}. A newer release may have written them; this one lists \
         them but the typed API cannot add them. Upgrade every service, or release them if they are stale.",
        unknown.join(", ")
    )))
}
