//! Are all nodemaint migrations applied?

use crate::{CheckResult, Context};
use nodemaint_migration::{MigrationStatus, Migrator, MigratorTrait};

pub async fn check(c: &Context) -> Result<CheckResult, String> {
    let migrations = Migrator::get_migration_with_status_read_only(&c.db).await.map_err(|e| e.to_string())?;
    let pending: Vec<&str> =
        migrations.iter().filter(|m| m.status() == MigrationStatus::Pending).map(|m| m.name()).collect();
    if pending.is_empty() {
        return Ok(CheckResult::success(None));
    }
    Ok(CheckResult::failure(format!(
        "{} of {} migration(s) pending ({}): run `nodemaint db upgrade`.",
        pending.len(),
        migrations.len(),
        pending.join(", ")
    )))
}
