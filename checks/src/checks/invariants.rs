//! Rules every row must keep: one legacy and one fault entry per node at
//! most, `asserted_by_project` never NULL, `extra` a JSON object, `scope`
//! one of system/owner/lessee.

use super::{NO_TABLE, count, has_maintenance_table};
use crate::{CheckResult, Context};
use nodemaint_entity::{EntryType, node_maintenance};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect};

/// Rows of `extra` read per query.
const PAGE: u64 = 10_000;

async fn extra_not_object(c: &Context) -> Result<i64, String> {
    let mut bad = 0;
    let mut after = 0;
    loop {
        let page: Vec<(i32, Option<String>)> = node_maintenance::Entity::find()
            .select_only()
            .column(node_maintenance::Column::Id)
            .column(node_maintenance::Column::Extra)
            .filter(node_maintenance::Column::Extra.is_not_null())
            .filter(node_maintenance::Column::Id.gt(after))
            .order_by_asc(node_maintenance::Column::Id)
            .limit(PAGE)
            .into_tuple()
            .all(&c.db)
            .await
            .map_err(|e| e.to_string())?;
        let Some((last, _)) = page.last() else { break };
        after = *last;
        bad += page
            .iter()
            .filter(|(_, text)| {
                let text = text.as_deref().unwrap_or("");
                !text.trim().is_empty() && !serde_json::from_str::<serde_json::Value>(text).is_ok_and(|v| v.is_object())
            })
            .count() as i64;
    }
    Ok(bad)
}

pub async fn check(c: &Context) -> Result<CheckResult, String> {
    if !has_maintenance_table(c).await? {
        return Ok(CheckResult::failure(NO_TABLE));
    }
    let census = c.census().await?;
    // A type with fewer nodes than entries has a node holding two: only
    // then is it worth grouping by node to count them.
    let surplus = census
        .types
        .iter()
        .any(|t| EntryType::lookup(&t.entry_type).is_some_and(|e| e.one_per_node()) && t.entries > t.nodes);
    let duplicates = if surplus {
        count(
            c,
            "SELECT COUNT(*) FROM (SELECT node_id FROM node_maintenance WHERE type IN ('legacy', 'fault') \
             GROUP BY node_id, type HAVING COUNT(*) > 1) d",
        )
        .await?
    } else {
        0
    };
    let null_project = census.total(|t| t.null_project);
    let bad_scope = census.total(|t| t.bad_scope);
    let bad_extra = if census.total(|t| t.with_extra) > 0 { extra_not_object(c).await? } else { 0 };
    let mut problems = Vec::new();
    if duplicates > 0 {
        problems.push(format!("{duplicates} node(s) hold more than one legacy or fault entry"));
    }
    if null_project > 0 {
        problems
            .push(format!("{null_project} entr(ies) have a NULL asserted_by_project (must be '' for system asserts)"));
    }
    if bad_extra > 0 {
        problems.push(format!("{bad_extra} entr(ies) have an extra that is not a JSON object"));
    }
    if bad_scope > 0 {
        problems.push(format!("{bad_scope} entr(ies) have a scope other than system, owner or lessee"));
    }
    if problems.is_empty() {
        return Ok(CheckResult::success(None));
    }
    Ok(CheckResult::failure(format!(
        "{}. `nodemaint reconcile` releases duplicates; fix the other rows by hand before restarting services.",
        problems.join("; ")
    )))
}
