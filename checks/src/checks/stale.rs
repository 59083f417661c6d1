//! The spec's scenario 6: owner- or lessee-scope entries whose project no
//! longer owns or leases the node. Only a higher scope can release them now.

use super::{NO_TABLE, count, has_maintenance_table};
use crate::{CheckResult, Context};
use sea_orm::{ConnectionTrait, Statement};

const STALE: &str = "FROM node_maintenance m JOIN nodes n ON n.id = m.node_id \
     WHERE (m.scope = 'owner' AND (n.owner IS NULL OR n.owner <> m.asserted_by_project)) \
     OR (m.scope = 'lessee' AND (n.lessee IS NULL OR n.lessee <> m.asserted_by_project))";

/// How many stale entries the details name.
const LISTED: usize = 5;

pub async fn check(c: &Context) -> Result<CheckResult, String> {
    if !has_maintenance_table(c).await? {
        return Ok(CheckResult::failure(NO_TABLE));
    }
    let total = count(c, &format!("SELECT COUNT(*) {STALE}")).await?;
    if total == 0 {
        return Ok(CheckResult::success(None));
    }
    let backend = c.db.get_database_backend();
    let rows =
        c.db.query_all_raw(Statement::from_string(
            backend,
            format!(
                "SELECT m.uuid, m.type, m.scope, m.asserted_by_project, n.uuid {STALE} ORDER BY m.id LIMIT {LISTED}"
            ),
        ))
        .await
        .map_err(|e| e.to_string())?;
    let listed: Vec<String> = rows
        .iter()
        .map(|r| {
            let get = |i: usize| r.try_get_by_index::<Option<String>>(i).ok().flatten().unwrap_or_default();
            format!("{} ({} at {} scope, project {}) on node {}", get(0), get(1), get(2), get(3), get(4))
        })
        .collect();
    Ok(CheckResult::warning(format!(
        "{total} entr(ies) outlived a lease or ownership change and can now be released only at a higher scope: {}. \
         Review them in the transfer runbook.",
        listed.join("; ")
    )))
}
