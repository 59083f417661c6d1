//! nodemaint: typed node maintenance for OpenStack Ironic.
//!
//! This crate is what the CLI and an API service share: database URLs and
//! connections ([`db`]), schema upgrades under a lock ([`schema`]), legacy
//! node access ([`nodes`]) and fleet seeding ([`fleet`]), configuration
//! ([`config`]) and one error type whose variants carry their HTTP status and
//! exit code ([`error`]). The schema itself is in `nodemaint-migration`, the
//! tables in `nodemaint-entity`, the upgrade checks in `nodemaint-checks`.
//!
//! Not for: rendering. The binary (`src/main.rs`, `src/cli/`) parses
//! arguments, calls into here, and prints; its REST API (`src/server/`)
//! is built on this crate's public items alone.

pub mod caller;
pub mod config;
pub mod db;
pub mod entry;
pub mod error;
pub mod fleet;
pub mod history;
pub mod maintenance;
pub mod masking;
pub mod nodes;
pub mod policy;
pub mod reconcile;
pub mod release;
pub mod schema;
pub mod scope;
mod statements;
mod transaction;

pub use caller::Caller;
pub use entry::EntryView;
pub use error::{Error, Result};
pub use maintenance::{Maintenance, NewEntry};
pub use nodemaint_entity as entity;
pub use nodemaint_entity::Scope;
pub use nodemaint_migration as migration;
pub use policy::Policy;
