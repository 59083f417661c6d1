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
//! validation, the typed refusals); the store (private) sends all SQL, of
//! which [`db`] (connections, locks, retries) and [`nodes`] (the node
//! lookup) are public; the operations sit above them: [`maintenance`] with
//! its windows and the estate listing, [`reconcile`] after the release pin
//! lifts, [`tick`] that starts and ends windows, [`schema`] for upgrades
//! under a lock. `admin` (feature `fixtures`, on by default, needed by the
//! CLI) is what the `node` and `fleet seed` commands do: write the legacy
//! columns as an old service would; an API service depends with
//! `default-features = false` and never sees it. The schema
//! history is in `nodemaint-migration`, the tables in `nodemaint-entity`,
//! the upgrade checks in `nodemaint-checks`.
//!
//! Not for: rendering. The binary (`src/main.rs`, `src/cli/`) parses
//! arguments, calls into here, and prints; its REST API (`src/server/`)
//! is built on this crate's public items alone.

#[cfg(feature = "fixtures")]
pub mod admin;
pub mod authority;
pub mod config;
pub mod error;
pub mod notify;
mod ops;
mod store;

pub use ops::{maintenance, publish, reconcile, schema, tick};

/// Connections: URLs (SQLAlchemy forms included), TLS, pools, the health
/// probe, nodemaint's own locks and the transaction runner's retry policy.
pub mod db {
    pub use crate::store::db::{
        Access, DEFAULT_URL, POOL_PING_AFTER_IDLE, PoolOptions, SQLITE_BUSY_TIMEOUT, backend_of, connect, connect_for,
        connect_with, missing_sqlite_file, normalize_url, ping, statements_sent,
    };
    pub use crate::store::locks::{Lock, LockWait};
    pub use crate::store::transaction::{RetryPolicy, retries};
}

/// Ironic's nodes as the API shows them: the one lookup and the listing.
pub mod nodes {
    pub use crate::store::nodes::{NodeQuery, NodeView, find};
}

// What an API service needs, at the root.
pub use authority::{Caller, EntryView, EventKind, MaintenanceEvent, Policy, Rejected};
pub use error::{Error, Result};
pub use maintenance::{Maintenance, NewEntry};
pub use nodemaint_entity as entity;
pub use nodemaint_entity::Scope;
pub use nodes::{NodeQuery, NodeView};
pub use store::history::HistoryView;
pub use store::transaction::RetryPolicy;
