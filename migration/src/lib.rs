//! Schema history for nodemaint: the [`Migrator`] and its migrations (one
//! file each, listed in order below), and the set-based backfill SQL that
//! both the upgrade migration and `reconcile` run. The SQL nodemaint runs
//! outside migrations (drift detection, locks, probes) is `nodemaint-runtime`.
//!
//! What it is not for: live entities or authority decisions. Migrations
//! freeze their own DDL and identifiers, so an old migration keeps meaning
//! what it meant.

pub mod backfill;

mod m20261201_000001_baseline;
mod m20261201_000002_create_node_maintenance;
mod m20261201_000003_backfill_legacy_entries;
mod m20261205_000004_maintenance_windows;
mod m20261206_000005_maintenance_events;
mod m20261207_000006_notification_outbox;

/// The table listing which of `nodes` / `node_history` the baseline created
/// (and its down drops), and how to read it.
pub use m20261201_000001_baseline::{
    DROPPED_IN_ORDER as BASELINE_DROPS, MARKER as BASELINE_MARKER, created_tables as baseline_created_tables,
};
pub use m20261201_000002_create_node_maintenance::{NODE_FK, NODE_ID_INDEX, UNIQUE_ENTRY, UNIQUE_UUID};
pub use m20261205_000004_maintenance_windows::{ENDS_AT_INDEX, SCHEDULE_TABLE};
pub use m20261206_000005_maintenance_events::{EVENT_TABLE, create_table as event_table_ddl};
pub use m20261207_000006_notification_outbox::OUTBOX_TABLE;
pub use sea_orm_migration::{MigrationStatus, MigratorTrait};

use sea_orm_migration::prelude::*;

/// The table where applied migrations are recorded. Named for us, so it never
/// collides with another tool's `seaql_migrations` in a shared database.
pub const MIGRATION_TABLE: &str = "nodemaint_migrations";

pub struct Migrator;

#[async_trait::async_trait]
impl MigratorTrait for Migrator {
    fn migrations() -> Vec<Box<dyn MigrationTrait>> {
        vec![
            Box::new(m20261201_000001_baseline::Migration),
            Box::new(m20261201_000002_create_node_maintenance::Migration),
            Box::new(m20261201_000003_backfill_legacy_entries::Migration),
            Box::new(m20261205_000004_maintenance_windows::Migration),
            Box::new(m20261206_000005_maintenance_events::Migration),
            Box::new(m20261207_000006_notification_outbox::Migration),
        ]
    }

    fn migration_table_name() -> sea_orm::DynIden {
        Alias::new(MIGRATION_TABLE).into_iden()
    }
}

/// Runs DDL statements one at a time, in order.
pub(crate) async fn exec_all<C: ConnectionTrait>(db: &C, statements: &[String]) -> Result<(), DbErr> {
    for statement in statements {
        db.execute_unprepared(statement).await?;
    }
    Ok(())
}
