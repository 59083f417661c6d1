//! Does `node_maintenance` agree with the legacy columns? Every drift kind
//! `reconcile` repairs, counted, with a few example nodes. Drift is expected
//! while the release is pinned (a Warning), a Failure once it is not.

use super::{NO_TABLE, has_maintenance_table};
use crate::{CheckResult, Context};
use nodemaint_runtime::drift::{self, DriftKind};
use nodemaint_runtime::progress::NoProgress;

pub async fn check(c: &Context) -> Result<CheckResult, String> {
    if !has_maintenance_table(c).await? {
        return Ok(CheckResult::failure(NO_TABLE));
    }
    let summary = drift::summarize(&c.db, c.pinned.is_some(), &NoProgress).await.map_err(|e| e.to_string())?;
    if summary.total() == 0 {
        return Ok(CheckResult::success(None));
    }
    let found: Vec<String> = DriftKind::ALL
        .iter()
        .filter(|k| summary.count(**k) > 0)
        .map(|k| {
            let examples = summary.examples.get(k).map(|e| e.join(", ")).unwrap_or_default();
            format!("{} {} (e.g. {examples})", summary.count(*k), k.describe())
        })
        .collect();
    let found = found.join("; ");
    Ok(match &c.pinned {
        Some(version) => CheckResult::warning(format!(
            "{found}. Expected while the release is pinned to {version}: run `nodemaint reconcile` once the pin is lifted."
        )),
        None => CheckResult::failure(format!("{found}. Run `nodemaint reconcile` to repair them.")),
    })
}
