//! `node_maintenance_notification`: the notification outbox. One row per
//! notification a change is to send, written in the change's transaction,
//! holding the message as it goes on the bus; `sent_at` is set once the
//! broker confirmed it. Apart from history: sent rows are pruned after a
//! retention, history never is.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "node_maintenance_notification")]
pub struct Model {
    /// Commit order per node (the node lock orders a node's changes).
    #[sea_orm(primary_key)]
    pub id: i32,
    /// The message's `message_id`, the same on every resend.
    pub message_id: String,
    /// The node it is about (no foreign key: it is sent after a delete).
    pub node_id: Option<i32>,
    pub event_type: String,
    /// oslo's priority, upper case (`INFO`, `ERROR`).
    pub priority: String,
    /// The message (oslo.message), serialised; the envelope is added when sent.
    #[sea_orm(column_type = "Text")]
    pub message: String,
    pub created_at: DateTime,
    pub sent_at: Option<DateTime>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
