//! nodemaint: typed node maintenance for OpenStack Ironic.
//!
//! This crate is what the CLI and an API service share. An API service needs
//! [`Maintenance`] (every operation of the spec's REST API, each one
//! transaction that keeps `nodes.maintenance`, the synthesised reason, the
//! fault column and node history in step with the entries), a [`Caller`]
//! built from the request's credentials, a [`Policy`], and [`Error`], whose
//! variants carry their HTTP status.
//!
//! The folders say what kind of code is where: [`authority`] is the pure
//! authority model (scope derivation, release floors, policy, masking, entry
//! validation); [`store`] sends SQL (connections, the transaction runner,
//! the node lookup and lock, history); the operations sit above them in
//! [`ops`] ([`maintenance`] with its windows, [`reconcile`] after the release pin
//! lifts, [`tick`] that starts and ends windows, [`schema`] for upgrades
//! under a lock). [`admin`] is what the `node` and `fleet seed`
//! commands do: write the legacy columns as an old service would (to make
//! fleets to try an upgrade on); an API service never needs it. The schema
//! history is in `nodemaint-migration`, the tables in `nodemaint-entity`,
//! the upgrade checks in `nodemaint-checks`.
//!
//! Not for: rendering. The binary (`src/main.rs`, `src/cli/`) parses
//! arguments, calls into here, and prints; its REST API (`src/server/`)
//! is built on this crate's public items alone.

pub mod admin;
pub mod authority;
pub mod config;
pub mod error;
pub mod ops;
pub mod store;

pub use ops::{maintenance, reconcile, schema, tick};

// What an API service needs, at the root.
pub use authority::caller::Caller;
pub use authority::entry::EntryView;
pub use authority::policy::Policy;
pub use error::{Error, Result};
pub use maintenance::{Maintenance, NewEntry};
pub use nodemaint_entity as entity;
pub use nodemaint_entity::Scope;
pub use nodemaint_migration as migration;
pub use nodemaint_runtime as runtime;
pub use store::history::HistoryView;
pub use store::nodes::{NodeQuery, NodeView};
pub use store::transaction::RetryPolicy;
// The store's modules the CLI, the tests and the benchmark use by name.
pub use store::{db, nodes};
