//! Is the release pinned (a rolling upgrade in progress)?

use crate::{CheckResult, Context};

pub async fn check(c: &Context) -> Result<CheckResult, String> {
    Ok(match &c.pinned {
        None => CheckResult::success(None),
        Some(version) => CheckResult::warning(format!(
            "The release is pinned to {version}{}: services of that release may still write nodes.maintenance \
             directly. Once every service runs the new release, remove [upgrade] pin_release_version, restart the \
             services and run `nodemaint reconcile`.",
            c.pin_source.as_deref().map(|s| format!(" (by {s})")).unwrap_or_default()
        )),
    })
}
