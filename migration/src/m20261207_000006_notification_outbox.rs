//! The notification outbox: `node_maintenance_notification`, one row per
//! notification a change is to send, written in the change's own
//! transaction (a change that rolls back leaves none) and marked sent by
//! the publisher once the broker confirmed it. Rows hold the message as it
//! goes on the bus (rendered when the change was made: its payload is the
//! node as it was then), so a resend is byte for byte the first send.
//!
//! Apart from history on purpose: the publisher prunes its sent rows after
//! `[nodemaint] notification_retention` and never touches `node_history` or
//! the typed events. No foreign key to `nodes`: a node deleted before its
//! notification went out still has it sent. `(sent_at, id)` is the
//! publisher's index: the unsent rows, oldest first. It is the only one
//! besides the key: every change writes these rows, and `message_id` (a
//! random uuid, looked up by nobody) needs no index of its own.
//!
//! The DDL is frozen here per backend, like the other migrations; on MySQL
//! (which commits DDL on its own) the table is created only when missing.

use crate::exec_all;
use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::DbBackend;

pub struct Migration;

impl MigrationName for Migration {
    fn name(&self) -> &str {
        "m20261207_000006_notification_outbox"
    }
}

pub const OUTBOX_TABLE: &str = "node_maintenance_notification";
const UNSENT_INDEX: &str = "node_maintenance_notification_sent_at_idx";

fn create_table(backend: DbBackend) -> Vec<String> {
    // A NodePayload holds the node's JSON columns, which Ironic stores as
    // TEXT; MySQL's TEXT is 64 KiB, so the message is a MEDIUMTEXT there.
    let columns = |id: &str, ts: &str, text: &str| {
        format!(
            "{id}, message_id VARCHAR(36) NOT NULL, node_id INTEGER, event_type VARCHAR(255) NOT NULL, \
             priority VARCHAR(16) NOT NULL, message {text} NOT NULL, created_at {ts} NOT NULL, sent_at {ts}"
        )
    };
    match backend {
        DbBackend::MySql => vec![format!(
            "CREATE TABLE IF NOT EXISTS {OUTBOX_TABLE} ({}, PRIMARY KEY (id), KEY {UNSENT_INDEX} (sent_at, id)) ENGINE=InnoDB",
            columns("id INT NOT NULL AUTO_INCREMENT", "DATETIME(6)", "MEDIUMTEXT")
        )],
        backend => {
            let (id, ts) = if backend == DbBackend::Postgres {
                ("id SERIAL NOT NULL PRIMARY KEY", "TIMESTAMP WITHOUT TIME ZONE")
            } else {
                ("id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT", "DATETIME")
            };
            vec![
                format!("CREATE TABLE {OUTBOX_TABLE} ({})", columns(id, ts, "TEXT")),
                format!("CREATE INDEX {UNSENT_INDEX} ON {OUTBOX_TABLE} (sent_at, id)"),
            ]
        }
    }
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let (db, backend) = (manager.get_connection(), manager.get_database_backend());
        if backend == DbBackend::MySql || !nodemaint_runtime::probe::tables(db).await?.iter().any(|t| t == OUTBOX_TABLE)
        {
            exec_all(db, &create_table(backend)).await?;
        }
        Ok(())
    }

    /// Drops the outbox: notifications not yet sent are lost (the down
    /// plan counts them).
    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        exec_all(manager.get_connection(), &[format!("DROP TABLE {OUTBOX_TABLE}")]).await
    }

    fn use_transaction(&self) -> Option<bool> {
        Some(true)
    }
}
