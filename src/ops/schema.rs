//! Schema operations behind `nodemaint db`: upgrade (migrations + backfill,
//! under the migration lock), status, and downgrade.

use crate::error::{Error, Result};
use crate::store::db::redact;
use crate::store::locks::{self, Lock, LockWait};
use crate::store::migrations::{self as migrations_store, Rows, count};
use chrono::{DateTime, Utc};
use nodemaint_migration::backfill::{self, BackfillContext, BackfillOptions};
use nodemaint_migration::{
    EVENT_TABLE, MIGRATION_TABLE, MigrationStatus, Migrator, MigratorTrait, OUTBOX_TABLE, SCHEDULE_TABLE,
};
use nodemaint_runtime::probe::{self, DatabaseKind};
use nodemaint_runtime::progress::{NoProgress, Progress};
use sea_orm::DatabaseConnection;
use serde::Serialize;
use std::sync::Arc;
use std::sync::atomic::Ordering;

pub struct UpgradeOptions {
    /// Node ids per backfill batch; `None` for the backend's default.
    pub batch_size: Option<i64>,
    pub progress: Arc<dyn Progress>,
    /// How to wait for the migration lock.
    pub lock: LockWait,
}

impl Default for UpgradeOptions {
    fn default() -> Self {
        UpgradeOptions { batch_size: None, progress: Arc::new(NoProgress), lock: LockWait::default() }
    }
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct UpgradeReport {
    /// Migrations applied by this run, in order (empty when nothing was pending).
    pub applied: Vec<String>,
    /// Legacy entries the backfill created.
    pub backfilled: u64,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct MigrationRow {
    pub name: String,
    pub applied: bool,
    pub applied_at: Option<DateTime<Utc>>,
}

/// Refuses a database that is neither empty nor Ironic-shaped.
pub async fn require_upgradable(db: &DatabaseConnection, url: &str) -> Result<()> {
    if let DatabaseKind::Foreign(why) = probe::classify(db).await? {
        return Err(Error::Schema(format!(
            "{} is not an Ironic or nodemaint database ({why}); point --database-url at Ironic's database or an empty one",
            redact(url)
        )));
    }
    Ok(())
}

/// Refuses a database without Ironic's `nodes` table (before `db upgrade` on a fresh one).
pub async fn require_nodes_table(db: &DatabaseConnection, url: &str) -> Result<()> {
    match probe::classify(db).await? {
        DatabaseKind::Ironic => Ok(()),
        DatabaseKind::Empty => {
            Err(Error::Schema(format!("{} has no `nodes` table yet; run `nodemaint db upgrade` first", redact(url))))
        }
        DatabaseKind::Foreign(why) => Err(Error::Schema(format!(
            "{} is not an Ironic or nodemaint database ({why}); point --database-url at Ironic's database",
            redact(url)
        ))),
    }
}

/// Refuses a database where `node_maintenance`, the windows' schedule,
/// the typed events or the outbox do not exist yet (operations write them).
pub async fn require_maintenance_table(db: &DatabaseConnection, url: &str) -> Result<()> {
    require_nodes_table(db, url).await?;
    let tables = probe::tables(db).await?;
    let needed = [
        ("node_maintenance", "typed maintenance"),
        (SCHEDULE_TABLE, "maintenance windows"),
        (EVENT_TABLE, "typed events"),
        (OUTBOX_TABLE, "the notification outbox"),
    ];
    for (table, what) in needed {
        if !tables.iter().any(|t| t == table) {
            return Err(Error::Schema(format!(
                "{} has no `{table}` table ({what}); run `nodemaint db upgrade` first",
                redact(url)
            )));
        }
    }
    Ok(())
}

/// Applies every pending migration under the migration lock.
pub async fn upgrade(db: &DatabaseConnection, url: &str, options: UpgradeOptions) -> Result<UpgradeReport> {
    require_upgradable(db, url).await?;
    let guard = locks::hold(db, url, Lock::Migration, options.lock).await?;
    let result = upgrade_locked(db, options.batch_size, options.progress).await;
    let released = guard.release().await;
    let report = result?;
    released?;
    Ok(report)
}

async fn upgrade_locked(
    db: &DatabaseConnection,
    batch_size: Option<i64>,
    progress: Arc<dyn Progress>,
) -> Result<UpgradeReport> {
    let pending: Vec<String> =
        Migrator::get_pending_migrations(db).await?.iter().map(|m| m.name().to_owned()).collect();
    let ctx = Arc::new(BackfillContext {
        options: BackfillOptions { batch_size, progress, ..BackfillOptions::default() },
        ..BackfillContext::default()
    });
    let started = std::time::Instant::now();
    backfill::with_context(ctx.clone(), Migrator::up(db, None)).await?;
    let backfilled = ctx.backfilled.load(Ordering::Relaxed);
    tracing::info!(
        "applied {} migration(s) [{}], backfilled {backfilled} legacy entries, in {:.2} s",
        pending.len(),
        pending.join(", "),
        started.elapsed().as_secs_f64()
    );
    Ok(UpgradeReport { applied: pending, backfilled })
}

/// Every migration as pending, for a database that does not exist yet.
pub fn all_pending() -> Vec<MigrationRow> {
    Migrator::migrations()
        .iter()
        .map(|m| MigrationRow { name: m.name().to_owned(), applied: false, applied_at: None })
        .collect()
}

/// Every migration, applied or pending. Read-only: creates nothing.
pub async fn status(db: &DatabaseConnection) -> Result<Vec<MigrationRow>> {
    let migrations = Migrator::get_migration_with_status_read_only(db).await?;
    let applied_at = match probe::tables(db).await?.iter().any(|t| t == MIGRATION_TABLE) {
        true => migrations_store::applied_at(db).await?,
        false => Default::default(),
    };
    Ok(migrations
        .iter()
        .map(|m| MigrationRow {
            name: m.name().to_owned(),
            applied: m.status() == MigrationStatus::Applied,
            applied_at: applied_at.get(m.name()).copied().flatten(),
        })
        .collect())
}

/// One thing a downgrade removes, with how many rows go with it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Removal {
    /// The migration whose rollback removes it.
    pub migration: String,
    /// `drop table T` or `delete backfilled legacy entries from node_maintenance`.
    pub what: String,
    pub rows: u64,
}

impl std::fmt::Display for Removal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({} row{})", self.what, self.rows, if self.rows == 1 { "" } else { "s" })
    }
}

/// nodemaint's migrations, by id: what rolling each back removes is
/// decided by its exact id (recorded in the migrations table, fixed
/// forever), never by a word the id shares with another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Baseline,
    CreateEntries,
    Backfill,
    Windows,
    Events,
    Outbox,
}

impl Step {
    fn of(id: &str) -> Option<Step> {
        Some(match id {
            "m20261201_000001_baseline" => Step::Baseline,
            "m20261201_000002_create_node_maintenance" => Step::CreateEntries,
            "m20261201_000003_backfill_legacy_entries" => Step::Backfill,
            "m20261205_000004_maintenance_windows" => Step::Windows,
            "m20261206_000005_maintenance_events" => Step::Events,
            "m20261207_000006_notification_outbox" => Step::Outbox,
            _ => return None,
        })
    }
}

/// What rolling back the last `steps` applied migrations would remove,
/// newest first: every table it drops and every row it deletes, counted.
/// Read-only; `db downgrade` shows it before asking for `--yes`.
pub async fn downgrade_plan(db: &DatabaseConnection, url: &str, steps: u32) -> Result<Vec<Removal>> {
    require_upgradable(db, url).await?;
    let tables = probe::tables(db).await?;
    if !tables.iter().any(|t| t == MIGRATION_TABLE) {
        return Ok(Vec::new());
    }
    let applied: Vec<String> =
        Migrator::get_applied_migrations(db).await?.iter().map(|m| m.name().to_owned()).collect();
    let mut plan = Vec::new();
    for migration in applied.iter().rev().take(steps as usize) {
        let removal = |what: String, rows: u64| Removal { migration: migration.clone(), what, rows };
        let has = |table: &str| tables.iter().any(|t| t == table);
        match Step::of(migration) {
            Some(Step::Backfill) if has("node_maintenance") => {
                let rows = count(db, "node_maintenance", Rows::Backfilled).await?;
                plan.push(removal("delete the backfilled legacy entries from node_maintenance".into(), rows));
            }
            Some(Step::Outbox) if has(OUTBOX_TABLE) => {
                let what = format!("drop table {OUTBOX_TABLE} (notifications not yet sent are lost)");
                plan.push(removal(what, count(db, OUTBOX_TABLE, Rows::Unsent).await?));
            }
            Some(Step::Events) if has(EVENT_TABLE) => {
                let what = format!("drop table {EVENT_TABLE} (typed events; their history texts stay)");
                plan.push(removal(what, count(db, EVENT_TABLE, Rows::All).await?));
            }
            Some(Step::Windows) if has(SCHEDULE_TABLE) => {
                plan.push(removal(format!("drop table {SCHEDULE_TABLE}"), count(db, SCHEDULE_TABLE, Rows::All).await?));
                let windows = count(db, "node_maintenance", Rows::Windows).await?;
                plan.push(removal(
                    "drop column node_maintenance.ends_at: active windows lose their end".into(),
                    windows,
                ));
            }
            Some(Step::CreateEntries) => {
                plan.push(removal(
                    "drop table node_maintenance".into(),
                    count(db, "node_maintenance", Rows::All).await?,
                ));
            }
            Some(Step::Baseline) if has(nodemaint_migration::BASELINE_MARKER) => {
                let created = nodemaint_migration::baseline_created_tables(db).await?;
                for table in nodemaint_migration::BASELINE_DROPS {
                    if created.iter().any(|t| t == table) {
                        plan.push(removal(format!("drop table {table}"), count(db, table, Rows::All).await?));
                    }
                }
            }
            _ => {}
        }
    }
    Ok(plan)
}

/// Rolls back the last `steps` applied migrations under the migration lock.
/// Returns their names, most recent first.
pub async fn downgrade(db: &DatabaseConnection, url: &str, steps: u32, lock: LockWait) -> Result<Vec<String>> {
    require_upgradable(db, url).await?;
    // Nothing nodemaint applied: nothing to roll back, and nothing (not even
    // the migrations table or a lock file) is created to find that out.
    if !probe::tables(db).await?.iter().any(|t| t == MIGRATION_TABLE) {
        return Ok(Vec::new());
    }
    let guard = locks::hold(db, url, Lock::Migration, lock).await?;
    let result = async {
        let applied: Vec<String> =
            Migrator::get_applied_migrations(db).await?.iter().map(|m| m.name().to_owned()).collect();
        Migrator::down(db, Some(steps)).await?;
        Ok::<_, Error>(applied.into_iter().rev().take(steps as usize).collect())
    }
    .await;
    let released = guard.release().await;
    let rolled_back = result?;
    released?;
    Ok(rolled_back)
}
