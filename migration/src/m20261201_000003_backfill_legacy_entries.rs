//! Backfill: one `legacy` entry per node in maintenance, reason copied
//! verbatim, at system scope with an empty project, asserted by the
//! migration (spec, "Data model impact"). The SQL is in [`crate::backfill`],
//! where `reconcile` runs it again after the release pin lifts.
//!
//! The whole backfill is one transaction on every backend, recorded as
//! applied in that same transaction: an interrupted run leaves nothing, and
//! the next `db upgrade` starts again (already backfilled nodes are skipped
//! either way).

use crate::backfill::{self, LEGACY, MIGRATION_ASSERTER};
use sea_orm_migration::prelude::*;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261201_000003_backfill_legacy_entries"
    }
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let ctx = backfill::current_context();
        let mut options = ctx.options.clone();
        options.asserted_by = MIGRATION_ASSERTER.to_owned();
        let created = backfill::backfill_legacy_entries(manager.get_connection(), &options).await?;
        backfill::record_backfilled(created);
        // A table just filled in bulk has no planner statistics until
        // autovacuum gets to it; reconcile's and the API's queries need them.
        // (PostgreSQL only: MySQL's ANALYZE TABLE would commit the migration.)
        if manager.get_database_backend() == sea_orm_migration::sea_orm::DbBackend::Postgres {
            manager.get_connection().execute_unprepared("ANALYZE node_maintenance").await?;
        }
        Ok(())
    }

    /// Removes the entries this migration made; `nodes` is not touched (its
    /// boolean and reason are still the pre-upgrade truth). History events
    /// are audit and stay.
    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let backend = manager.get_database_backend();
        let ty = nodemaint_runtime::sql::quote(backend, "type");
        manager
            .get_connection()
            .execute_raw(nodemaint_runtime::sql::stmt(
                backend,
                &format!("DELETE FROM node_maintenance WHERE {ty} = ? AND asserted_by = ?"),
                vec![LEGACY.into(), MIGRATION_ASSERTER.into()],
            ))
            .await?;
        Ok(())
    }

    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }
}
