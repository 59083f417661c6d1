//! The operations, one layer over `crate::authority` (which decides) and
//! `crate::store` (which sends SQL): the maintenance API ([`maintenance`],
//! with its windows and the estate listing), [`reconcile`] after the
//! release pin lifts, the [`tick`] that starts and ends windows,
//! [`schema`] for upgrades under the migration lock, and [`publish`], which
//! sends the notification outbox to the message bus. None of them sends SQL
//! of its own: each reads through the store, plans with the authority
//! model, and hands the plan to the store's applier.

pub mod maintenance;
pub mod publish;
pub mod reconcile;
pub mod schema;
pub mod tick;
