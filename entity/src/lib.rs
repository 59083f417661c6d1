//! Sea-orm entities for the six tables nodemaint reads and writes, and the
//! schema-level vocabulary of node maintenance (type names, scope names, the
//! synthesised `maintenance_reason`).
//!
//! What it is not for: queries, transactions or authority decisions. Those
//! live in `nodemaint` (operations) and `nodemaint-migration` (backfill and
//! drift SQL). The column names and types here are Ironic 39's, so the same
//! entities read a real Ironic database and a fresh one made by our baseline.

pub use vocab::{EntryType, Scope, synthesize_reason};

/// The value of `row`'s column `*at`, moving `at` to the next column.
fn next_column<T: sea_orm::TryGetable>(row: &sea_orm::QueryResult, at: &mut usize) -> Result<T, sea_orm::DbErr> {
    let column = *at;
    *at += 1;
    row.try_get_by_index(column)
}

/// `Model::from_row_at(row, at)`: the model from `row`'s columns from `at`
/// on, in `Column`'s order (what `select_only().columns(Column::iter())`
/// selects), read by position. A derived decode looks each column up by
/// name, built afresh per column when the select prefixes it (a join): most
/// of the estate listing's time per row. Fields listed in declaration order.
macro_rules! from_row_at {
    ($($field:ident),* $(,)?) => {
        impl Model {
            /// This model from `row`'s columns from `at` on, by position (see `from_row_at!`).
            pub fn from_row_at(row: &sea_orm::QueryResult, at: usize) -> Result<Model, sea_orm::DbErr> {
                let mut at = at;
                Ok(Model { $($field: crate::next_column(row, &mut at)?,)* })
            }
        }
    };
}
pub(crate) use from_row_at;

pub mod node_history;
pub mod node_maintenance;
pub mod node_maintenance_event;
pub mod node_maintenance_notification;
pub mod node_maintenance_schedule;
pub mod nodes;
pub mod vocab;
