//! Schema operations behind `nodemaint db`: upgrade (migrations + backfill,
//! under the migration lock), status, and downgrade.

use crate::error::{Error, Result};
use crate::store::db::redact;
use crate::store::locks::{self, Lock, LockWait};
use chrono::{DateTime, Utc};
use nodemaint_migration::backfill::{self, BackfillContext, BackfillOptions};
use nodemaint_migration::{EVENT_TABLE, MIGRATION_TABLE, MigrationStatus, Migrator, MigratorTrait, SCHEDULE_TABLE};
use nodemaint_runtime::probe::{self, DatabaseKind};
use nodemaint_runtime::progress::{NoProgress, Progress};
use sea_orm::{ConnectionTrait, DatabaseConnection, Statement};
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

/// Refuses a database where `node_maintenance`, the windows' schedule or
/// the typed events do not exist yet (every operation uses all three).
pub async fn require_maintenance_table(db: &DatabaseConnection, url: &str) -> Result<()> {
    require_nodes_table(db, url).await?;
    let tables = probe::tables(db).await?;
    let needed = [
        ("node_maintenance", "typed maintenance"),
        (SCHEDULE_TABLE, "maintenance windows"),
        (EVENT_TABLE, "typed events"),
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
    let backend = db.get_database_backend();
    let mut applied_at = std::collections::HashMap::new();
    if probe::tables(db).await?.iter().any(|t| t == MIGRATION_TABLE) {
        let rows = db
            .query_all_raw(Statement::from_string(
                backend,
                format!("SELECT version, applied_at FROM {MIGRATION_TABLE}"),
            ))
            .await?;
        for row in rows {
            let version: String = row.try_get_by_index(0)?;
            let at: i64 = row.try_get_by_index(1)?;
            applied_at.insert(version, DateTime::<Utc>::from_timestamp(at, 0));
        }
    }
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

async fn row_count(db: &DatabaseConnection, table: &str, filter: &str) -> Result<u64> {
    let row = db
        .query_one_raw(Statement::from_string(
            db.get_database_backend(),
            format!("SELECT COUNT(*) FROM {table}{filter}"),
        ))
        .await?;
    let n = match row {
        Some(row) => row.try_get_by_index::<i64>(0).or_else(|_| row.try_get_by_index::<i32>(0).map(i64::from))?,
        None => 0,
    };
    Ok(n.max(0) as u64)
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
        // Matched by the migration's id: a later migration whose name shares
        // a word with an older one must not inherit its plan.
        let name = migration.as_str();
        if name == "m20261201_000003_backfill_legacy_entries" && tables.iter().any(|t| t == "node_maintenance") {
            let ty = nodemaint_runtime::sql::quote(db.get_database_backend(), "type");
            let filter = format!(" WHERE {ty} = 'legacy' AND asserted_by = '{}'", backfill::MIGRATION_ASSERTER);
            let rows = row_count(db, "node_maintenance", &filter).await?;
            plan.push(removal("delete the backfilled legacy entries from node_maintenance".into(), rows));
        } else if name == "m20261206_000005_maintenance_events" && tables.iter().any(|t| t == EVENT_TABLE) {
            let what = format!("drop table {EVENT_TABLE} (typed events; their history texts stay)");
            plan.push(removal(what, row_count(db, EVENT_TABLE, "").await?));
        } else if name == "m20261205_000004_maintenance_windows" && tables.iter().any(|t| t == SCHEDULE_TABLE) {
            plan.push(removal(format!("drop table {SCHEDULE_TABLE}"), row_count(db, SCHEDULE_TABLE, "").await?));
            let windows = row_count(db, "node_maintenance", " WHERE ends_at IS NOT NULL").await?;
            plan.push(removal("drop column node_maintenance.ends_at: active windows lose their end".into(), windows));
        } else if name == "m20261201_000002_create_node_maintenance" {
            plan.push(removal("drop table node_maintenance".into(), row_count(db, "node_maintenance", "").await?));
        } else if name == "m20261201_000001_baseline"
            && tables.iter().any(|t| t == nodemaint_migration::BASELINE_MARKER)
        {
            let created = nodemaint_migration::baseline_created_tables(db).await?;
            for table in nodemaint_migration::BASELINE_DROPS {
                if created.iter().any(|t| t == table) {
                    plan.push(removal(format!("drop table {table}"), row_count(db, table, "").await?));
                }
            }
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
