//! Maintenance windows whose end passed a while ago and are still active:
//! the tick (`nodemaint windows tick` from cron, or `serve
//! --tick-interval`) is not running, and nodes stay out of service past
//! the end their operators set.

use super::has_maintenance_table;
use crate::{CheckResult, Context};
use sea_orm::{ConnectionTrait, Value};

/// How long past its end a window may stay before it counts as overdue:
/// ten of `serve`'s default tick intervals, five of a one-minute cron's.
pub const GRACE: chrono::Duration = chrono::Duration::minutes(5);

/// How many overdue windows the details name.
const LISTED: usize = 5;

pub async fn check(c: &Context) -> Result<CheckResult, String> {
    let columns = if has_maintenance_table(c).await? {
        nodemaint_runtime::probe::columns(&c.db, "node_maintenance").await.map_err(|e| e.to_string())?
    } else {
        Vec::new()
    };
    if !columns.iter().any(|c| c == "ends_at") {
        return Ok(CheckResult::success(Some(
            "No maintenance windows yet: `nodemaint db upgrade` adds them.".to_owned(),
        )));
    }
    let backend = c.db.get_database_backend();
    let cutoff = nodemaint_runtime::sql::now_utc() - GRACE;
    let query = |select: &str, rest: &str| {
        let sql = format!(
            "SELECT {select} FROM node_maintenance m JOIN nodes n ON n.id = m.node_id WHERE m.ends_at < ?{rest}"
        );
        nodemaint_runtime::sql::stmt(backend, &sql, vec![Value::from(cutoff)])
    };
    let row = c.db.query_one_raw(query("COUNT(*)", "")).await.map_err(|e| e.to_string())?.ok_or("no row")?;
    let total = crate::census::int_at(&row, 0)?;
    if total == 0 {
        return Ok(CheckResult::success(None));
    }
    let select = "m.uuid, n.uuid, m.type, CAST(m.ends_at AS CHAR(19))";
    let rows =
        c.db.query_all_raw(query(select, &format!(" ORDER BY m.ends_at LIMIT {LISTED}")))
            .await
            .map_err(|e| e.to_string())?;
    let listed: Vec<String> = rows
        .iter()
        .map(|r| {
            let get = |i: usize| r.try_get_by_index::<Option<String>>(i).ok().flatten().unwrap_or_default();
            format!("{} ({}) on node {} ended {}", get(0), get(2), get(1), get(3))
        })
        .collect();
    Ok(CheckResult::warning(format!(
        "{total} maintenance window(s) ended more than {} minutes ago and are still active: {}. Is the tick running? \
         Run `nodemaint windows tick` from cron every minute, or keep `nodemaint serve --tick-interval` above 0.",
        GRACE.num_minutes(),
        listed.join("; ")
    )))
}
