//! Everything that sends SQL for the operations above it: connections
//! ([`db`]), the one transaction runner ([`transaction`]), the one node
//! lookup and lock ([`nodes`], also the legacy node writes an old service
//! makes), the invariant write (`invariant`: boolean, reason, fault), history
//! events ([`history`]), windows' rows (`schedule`), nodemaint's own locks
//! ([`locks`]) and the statements every API operation sends, rendered once
//! (`statements`).

pub(crate) mod apply;
pub(crate) mod batches;
pub mod db;
pub(crate) mod due;
pub(crate) mod estate;
pub mod history;
pub(crate) mod invariant;
pub(crate) mod legacy;
pub mod locks;
pub(crate) mod migrations;
pub mod nodes;
pub(crate) mod schedule;
pub(crate) mod statements;
pub mod transaction;
