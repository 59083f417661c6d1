//! Maintenance windows: `node_maintenance.ends_at` (nullable, indexed: an
//! entry without it never expires) and `node_maintenance_schedule`, the
//! windows planned to start later, which touch nothing of a node until they
//! start (the spec's invariant: an entry is active exactly while its row in
//! `node_maintenance` exists). Nothing of Ironic's is changed.
//!
//! The DDL is frozen here as text per backend, like the other migrations.
//! MySQL commits each DDL statement on its own, so every step checks what
//! is already there: a run interrupted between two of them is finished by
//! the next `db upgrade`, never failed by it.

use crate::exec_all;
use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DbBackend;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261205_000004_maintenance_windows"
    }
}

pub const SCHEDULE_TABLE: &str = "node_maintenance_schedule";
pub const ENDS_AT_INDEX: &str = "node_maintenance_ends_at_idx";
pub const SCHEDULE_UNIQUE_UUID: &str = "uniq_node_maintenance_schedule0uuid";
pub const SCHEDULE_NODE_INDEX: &str = "node_maintenance_schedule_node_id_idx";
pub const SCHEDULE_STARTS_INDEX: &str = "node_maintenance_schedule_starts_at_idx";
pub const SCHEDULE_FK: &str = "node_maintenance_schedule_node_id_fk";

fn create_schedule(backend: DbBackend) -> Vec<String> {
    match backend {
        DbBackend::MySql => vec![format!(
            "CREATE TABLE IF NOT EXISTS {SCHEDULE_TABLE} (id INT NOT NULL AUTO_INCREMENT, uuid VARCHAR(36) NOT NULL, \
             node_id INT NOT NULL, type VARCHAR(64) NOT NULL, reason TEXT NULL, scope VARCHAR(64) NOT NULL, \
             asserted_by VARCHAR(255) NOT NULL, asserted_by_project VARCHAR(255) NOT NULL DEFAULT '', \
             starts_at DATETIME NOT NULL, ends_at DATETIME NOT NULL, extra TEXT NULL, version VARCHAR(15), \
             created_at DATETIME, updated_at DATETIME, PRIMARY KEY (id), UNIQUE KEY {SCHEDULE_UNIQUE_UUID} (uuid), \
             KEY {SCHEDULE_NODE_INDEX} (node_id), KEY {SCHEDULE_STARTS_INDEX} (starts_at), \
             CONSTRAINT {SCHEDULE_FK} FOREIGN KEY (node_id) REFERENCES nodes (id) ON DELETE CASCADE) \
             ENGINE=InnoDB"
        )],
        backend => {
            let (id, ts) = if backend == DbBackend::Postgres {
                ("id SERIAL NOT NULL PRIMARY KEY", "TIMESTAMP WITHOUT TIME ZONE")
            } else {
                ("id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT", "DATETIME")
            };
            vec![
                format!(
                    "CREATE TABLE {SCHEDULE_TABLE} ({id}, uuid VARCHAR(36) NOT NULL, node_id INTEGER NOT NULL, \
                     type VARCHAR(64) NOT NULL, reason TEXT, scope VARCHAR(64) NOT NULL, \
                     asserted_by VARCHAR(255) NOT NULL, asserted_by_project VARCHAR(255) NOT NULL DEFAULT '', \
                     starts_at {ts} NOT NULL, ends_at {ts} NOT NULL, extra TEXT, version VARCHAR(15), \
                     created_at {ts}, updated_at {ts}, CONSTRAINT {SCHEDULE_UNIQUE_UUID} UNIQUE (uuid), \
                     CONSTRAINT {SCHEDULE_FK} FOREIGN KEY (node_id) REFERENCES nodes (id) ON DELETE CASCADE)"
                ),
                format!("CREATE INDEX {SCHEDULE_NODE_INDEX} ON {SCHEDULE_TABLE} (node_id)"),
                format!("CREATE INDEX {SCHEDULE_STARTS_INDEX} ON {SCHEDULE_TABLE} (starts_at)"),
            ]
        }
    }
}

fn add_ends_at(backend: DbBackend) -> Vec<String> {
    match backend {
        DbBackend::MySql => vec![format!(
            "ALTER TABLE node_maintenance ADD COLUMN ends_at DATETIME NULL, ADD INDEX {ENDS_AT_INDEX} (ends_at)"
        )],
        backend => {
            let ts = if backend == DbBackend::Postgres { "TIMESTAMP WITHOUT TIME ZONE" } else { "DATETIME" };
            vec![
                format!("ALTER TABLE node_maintenance ADD COLUMN ends_at {ts}"),
                format!("CREATE INDEX {ENDS_AT_INDEX} ON node_maintenance (ends_at)"),
            ]
        }
    }
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let (db, backend) = (manager.get_connection(), manager.get_database_backend());
        if backend == DbBackend::MySql {
            // CREATE TABLE IF NOT EXISTS above; the column only when missing.
            exec_all(db, &create_schedule(backend)).await?;
            let columns = nodemaint_runtime::probe::columns(db, "node_maintenance").await?;
            if !columns.iter().any(|c| c == "ends_at") {
                exec_all(db, &add_ends_at(backend)).await?;
            }
            return Ok(());
        }
        exec_all(db, &create_schedule(backend)).await?;
        exec_all(db, &add_ends_at(backend)).await
    }

    /// Drops the schedule (planned windows are lost: `db downgrade` names
    /// them and their count first) and `ends_at` (active windows become
    /// entries without an end, released by hand like any other).
    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let (db, backend) = (manager.get_connection(), manager.get_database_backend());
        let drop_index = match backend {
            DbBackend::MySql => format!("ALTER TABLE node_maintenance DROP INDEX {ENDS_AT_INDEX}, DROP COLUMN ends_at"),
            _ => format!("DROP INDEX {ENDS_AT_INDEX}"),
        };
        let mut statements = vec![format!("DROP TABLE {SCHEDULE_TABLE}"), drop_index];
        if backend != DbBackend::MySql {
            statements.push("ALTER TABLE node_maintenance DROP COLUMN ends_at".to_owned());
        }
        exec_all(db, &statements).await
    }

    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }
}
