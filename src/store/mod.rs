//! Everything in the root crate that sends SQL: connections ([`db`]), the
//! one transaction runner ([`transaction`]), the one node lookup and lock
//! ([`nodes`]), the two appliers (`apply`: one node's plan; `batches`: a
//! set's plan, its lock order and batch size), the invariant write
//! (`invariant`: boolean, reason, fault), history events ([`history`]),
//! windows' rows (`schedule`), the tick's reads (`due`), the estate
//! listing's pages (`estate`), schema's migration reads (`migrations`), an
//! old service's node writes and fleet seeding (`legacy`), nodemaint's own
//! locks ([`locks`]), the notification outbox (`outbox`) and the statements every API operation sends, rendered
//! once (`statements`).

pub(crate) mod apply;
pub(crate) mod batches;
pub mod db;
pub(crate) mod due;
pub(crate) mod estate;
pub mod history;
pub(crate) mod invariant;
#[cfg(feature = "fixtures")]
pub(crate) mod legacy;
pub mod locks;
pub(crate) mod migrations;
pub mod nodes;
pub(crate) mod outbox;
pub(crate) mod schedule;
pub(crate) mod statements;
pub mod transaction;
