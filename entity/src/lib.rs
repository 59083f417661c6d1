//! Sea-orm entities for the four tables nodemaint reads and writes, and the
//! schema-level vocabulary of node maintenance (type names, scope names, the
//! synthesised `maintenance_reason`).
//!
//! What it is not for: queries, transactions or authority decisions. Those
//! live in `nodemaint` (operations) and `nodemaint-migration` (backfill and
//! drift SQL). The column names and types here are Ironic 39's, so the same
//! entities read a real Ironic database and a fresh one made by our baseline.

pub mod node_history;
pub mod node_maintenance;
pub mod node_maintenance_schedule;
pub mod nodes;
pub mod vocab;

pub use vocab::{EntryType, Scope, synthesize_reason};

/// The value of `row`'s column `*at`, moving `at` to the next column: for
/// the models' `from_row_at`, which read a model by position.
fn next_column<T: sea_orm::TryGetable>(row: &sea_orm::QueryResult, at: &mut usize) -> Result<T, sea_orm::DbErr> {
    let column = *at;
    *at += 1;
    row.try_get_by_index(column)
}
