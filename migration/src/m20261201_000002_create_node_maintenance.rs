//! `node_maintenance`, exactly as the node maintenance spec's "Data model
//! impact" gives it: unique `uuid`, FK to `nodes.id` ON DELETE CASCADE, an
//! index on `node_id`, and the unique `(node_id, type, scope,
//! asserted_by_project)` that backs the 409 duplicate guard.
//!
//! The DDL is frozen here as text per backend (not built from the live
//! entity), so this migration keeps meaning what it meant when it shipped.

use crate::exec_all;
use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DbBackend;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261201_000002_create_node_maintenance"
    }
}

pub const UNIQUE_UUID: &str = "uniq_node_maintenance0uuid";
pub const UNIQUE_ENTRY: &str = "uniq_node_maintenance0node_id0type0scope0asserted_by_project";
pub const NODE_ID_INDEX: &str = "node_maintenance_node_id_idx";
pub const NODE_FK: &str = "node_maintenance_node_id_fk";

fn ddl(backend: DbBackend) -> Vec<String> {
    match backend {
        // One statement: MySQL commits each DDL statement on its own, so the
        // indexes live inside CREATE TABLE and nothing can be left half-made.
        DbBackend::MySql => vec![format!(
            "CREATE TABLE node_maintenance (id INT NOT NULL AUTO_INCREMENT, uuid VARCHAR(36) NOT NULL, \
             node_id INT NOT NULL, type VARCHAR(64) NOT NULL, reason TEXT NULL, scope VARCHAR(64) NOT NULL, \
             asserted_by VARCHAR(255) NOT NULL, asserted_by_project VARCHAR(255) NOT NULL DEFAULT '', \
             asserted_at DATETIME NOT NULL, extra TEXT NULL, version VARCHAR(15), created_at DATETIME, \
             updated_at DATETIME, PRIMARY KEY (id), UNIQUE KEY {UNIQUE_UUID} (uuid), \
             UNIQUE KEY {UNIQUE_ENTRY} (node_id, type, scope, asserted_by_project), \
             KEY {NODE_ID_INDEX} (node_id), \
             CONSTRAINT {NODE_FK} FOREIGN KEY (node_id) REFERENCES nodes (id) ON DELETE CASCADE) \
             ENGINE=InnoDB"
        )],
        backend => {
            let (id, ts) = if backend == DbBackend::Postgres {
                ("id SERIAL NOT NULL", "TIMESTAMP WITHOUT TIME ZONE")
            } else {
                // AUTOINCREMENT: ids are never reused, so "rows after id N" is exact.
                ("id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT", "DATETIME")
            };
            let pk = if backend == DbBackend::Postgres { "PRIMARY KEY (id), " } else { "" };
            vec![
                format!(
                    "CREATE TABLE node_maintenance ({id}, uuid VARCHAR(36) NOT NULL, node_id INTEGER NOT NULL, \
                     type VARCHAR(64) NOT NULL, reason TEXT, scope VARCHAR(64) NOT NULL, \
                     asserted_by VARCHAR(255) NOT NULL, asserted_by_project VARCHAR(255) NOT NULL DEFAULT '', \
                     asserted_at {ts} NOT NULL, extra TEXT, version VARCHAR(15), created_at {ts}, updated_at {ts}, \
                     {pk}CONSTRAINT {UNIQUE_UUID} UNIQUE (uuid), \
                     CONSTRAINT {UNIQUE_ENTRY} UNIQUE (node_id, type, scope, asserted_by_project), \
                     CONSTRAINT {NODE_FK} FOREIGN KEY (node_id) REFERENCES nodes (id) ON DELETE CASCADE)"
                ),
                format!("CREATE INDEX {NODE_ID_INDEX} ON node_maintenance (node_id)"),
            ]
        }
    }
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        exec_all(manager.get_connection(), &ddl(manager.get_database_backend())).await
    }

    /// Drops the table. `nodes.maintenance` and `nodes.maintenance_reason`
    /// stay as they are: they are written on every change, so nothing that
    /// old services read is lost.
    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.get_connection().execute_unprepared("DROP TABLE node_maintenance").await?;
        Ok(())
    }

    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }
}
