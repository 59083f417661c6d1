//! Baseline: Ironic's `nodes` and `node_history`, with Ironic 39's column
//! names and types, created **only where absent**. On a real Ironic database
//! both exist (made by Ironic's alembic migrations) and are left untouched;
//! on a fresh database this creates the columns nodemaint uses and Ironic's
//! indexes on them. Which tables this migration created is recorded in
//! `nodemaint_baseline`, so `down` drops only those, never Ironic's own.

use crate::exec_all;
use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::{DbBackend, Statement};

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261201_000001_baseline"
    }
}

pub const MARKER: &str = "nodemaint_baseline";

fn create_nodes(backend: DbBackend) -> Vec<String> {
    match backend {
        DbBackend::MySql => vec![
            "CREATE TABLE nodes (id INT NOT NULL AUTO_INCREMENT, uuid VARCHAR(36), name VARCHAR(255), \
             reservation VARCHAR(255), maintenance TINYINT(1), maintenance_reason TEXT, fault VARCHAR(255), \
             owner VARCHAR(255), lessee VARCHAR(255), version VARCHAR(15), created_at DATETIME, updated_at DATETIME, \
             PRIMARY KEY (id), UNIQUE KEY uniq_nodes0uuid (uuid), UNIQUE KEY uniq_nodes0name (name), \
             KEY reservation_idx (reservation), KEY owner_idx (owner), KEY lessee_idx (lessee)) \
             ENGINE=InnoDB"
                .to_owned(),
        ],
        backend => {
            let (id, ts) = if backend == DbBackend::Postgres {
                ("id SERIAL NOT NULL", "TIMESTAMP WITHOUT TIME ZONE")
            } else {
                ("id INTEGER NOT NULL", "DATETIME")
            };
            let table = format!(
                "CREATE TABLE nodes ({id}, uuid VARCHAR(36), name VARCHAR(255), reservation VARCHAR(255), \
                     maintenance BOOLEAN, maintenance_reason TEXT, fault VARCHAR(255), owner VARCHAR(255), \
                     lessee VARCHAR(255), version VARCHAR(15), created_at {ts}, updated_at {ts}, PRIMARY KEY (id), \
                     CONSTRAINT uniq_nodes0uuid UNIQUE (uuid), CONSTRAINT uniq_nodes0name UNIQUE (name))"
            );
            vec![
                table,
                "CREATE INDEX reservation_idx ON nodes (reservation)".to_owned(),
                "CREATE INDEX owner_idx ON nodes (owner)".to_owned(),
                "CREATE INDEX lessee_idx ON nodes (lessee)".to_owned(),
            ]
        }
    }
}

fn create_node_history(backend: DbBackend) -> Vec<String> {
    match backend {
        DbBackend::MySql => vec![
            "CREATE TABLE node_history (id INT NOT NULL AUTO_INCREMENT, uuid VARCHAR(36) NOT NULL, \
             conductor VARCHAR(255), event_type VARCHAR(255), severity VARCHAR(255), event TEXT, \
             user VARCHAR(64), project VARCHAR(80), node_id INT, state VARCHAR(255), \
             target_provision_state VARCHAR(255), duration_seconds INT, version VARCHAR(15), \
             created_at DATETIME, updated_at DATETIME, PRIMARY KEY (id), UNIQUE KEY uniq_history0uuid (uuid), \
             KEY history_uuid_idx (uuid), KEY history_conductor_idx (conductor), KEY history_node_id_idx (node_id), \
             CONSTRAINT node_history_ibfk_1 FOREIGN KEY (node_id) REFERENCES nodes (id)) \
             ENGINE=InnoDB"
                .to_owned(),
        ],
        backend => {
            let (id, ts, user) = if backend == DbBackend::Postgres {
                ("id SERIAL NOT NULL", "TIMESTAMP WITHOUT TIME ZONE", "\"user\"")
            } else {
                ("id INTEGER NOT NULL", "DATETIME", "user")
            };
            let table = format!(
                "CREATE TABLE node_history ({id}, uuid VARCHAR(36) NOT NULL, conductor VARCHAR(255), \
                     event_type VARCHAR(255), severity VARCHAR(255), event TEXT, {user} VARCHAR(64), \
                     project VARCHAR(80), node_id INTEGER, state VARCHAR(255), target_provision_state VARCHAR(255), \
                     duration_seconds INTEGER, version VARCHAR(15), created_at {ts}, updated_at {ts}, \
                     PRIMARY KEY (id), CONSTRAINT uniq_history0uuid UNIQUE (uuid), \
                     FOREIGN KEY (node_id) REFERENCES nodes (id))"
            );
            vec![
                table,
                "CREATE INDEX history_uuid_idx ON node_history (uuid)".to_owned(),
                "CREATE INDEX history_conductor_idx ON node_history (conductor)".to_owned(),
                "CREATE INDEX history_node_id_idx ON node_history (node_id)".to_owned(),
            ]
        }
    }
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let backend = manager.get_database_backend();
        let db = manager.get_connection();
        db.execute_unprepared(&format!(
            "CREATE TABLE IF NOT EXISTS {MARKER} (table_name VARCHAR(64) NOT NULL, PRIMARY KEY (table_name))"
        ))
        .await?;
        for (table, ddl) in [("nodes", create_nodes(backend)), ("node_history", create_node_history(backend))] {
            if manager.has_table(table).await? {
                continue;
            }
            exec_all(db, &ddl).await?;
            db.execute_raw(nodemaint_runtime::sql::stmt(
                backend,
                &format!("INSERT INTO {MARKER} (table_name) VALUES (?)"),
                vec![table.into()],
            ))
            .await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        let created = created_tables(db).await?;
        for table in DROPPED_IN_ORDER {
            if created.iter().any(|t| t == table) {
                db.execute_unprepared(&format!("DROP TABLE {table}")).await?;
            }
        }
        db.execute_unprepared(&format!("DROP TABLE {MARKER}")).await?;
        Ok(())
    }

    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }
}

/// What `down` drops, in that order (node_history references nodes).
pub const DROPPED_IN_ORDER: [&str; 2] = ["node_history", "nodes"];

/// The tables this migration created (listed in [`MARKER`]), which its
/// `down` drops; `db downgrade` reads them to say so before it asks.
pub async fn created_tables<C: ConnectionTrait>(db: &C) -> Result<Vec<String>, DbErr> {
    db.query_all_raw(Statement::from_string(db.get_database_backend(), format!("SELECT table_name FROM {MARKER}")))
        .await?
        .iter()
        .map(|row| row.try_get_by_index::<String>(0))
        .collect()
}
