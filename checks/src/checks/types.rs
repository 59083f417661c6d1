//! Entries of types this release does not know (written by a newer one?).

use super::{NO_TABLE, has_maintenance_table};
use crate::{CheckResult, Context};
use nodemaint_entity::EntryType;

pub async fn check(c: &Context) -> Result<CheckResult, String> {
    if !has_maintenance_table(c).await? {
        return Ok(CheckResult::failure(NO_TABLE));
    }
    let unknown: Vec<String> = c
        .census()
        .await?
        .types
        .iter()
        .filter(|t| EntryType::lookup(&t.entry_type).is_none())
        .map(|t| format!("{} ({})", t.entry_type, t.entries))
        .collect();
    if unknown.is_empty() {
        return Ok(CheckResult::success(None));
    }
    Ok(CheckResult::warning(format!(
        "Entries of unregistered maintenance type(s): {}. A newer release may have written them; this one lists \
         them but the typed API cannot add them. Upgrade every service, or release them if they are stale.",
        unknown.join(", ")
    )))
}
