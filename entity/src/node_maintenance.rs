//! `node_maintenance`: one row per active maintenance entry (node maintenance
//! spec, "Data model impact"). Releasing an entry hard-deletes its row.

use crate::next_column;
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "node_maintenance")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i32,
    #[sea_orm(unique)]
    pub uuid: String,
    pub node_id: i32,
    /// A registered type name (see [`crate::EntryType`]); free-form in the schema.
    #[sea_orm(column_name = "type")]
    pub entry_type: String,
    #[sea_orm(column_type = "Text", nullable)]
    pub reason: Option<String>,
    pub scope: String,
    pub asserted_by: String,
    /// Empty, never NULL, for system-internal asserts (the unique key needs a value).
    pub asserted_by_project: String,
    /// Naive UTC, as Ironic stores times.
    pub asserted_at: DateTime,
    /// JSON object text.
    #[sea_orm(column_type = "Text", nullable)]
    pub extra: Option<String>,
    pub version: Option<String>,
    pub created_at: Option<DateTime>,
    pub updated_at: Option<DateTime>,
    /// A window's hard end (naive UTC): the tick releases the entry once it
    /// has passed. `None`: the entry never expires.
    pub ends_at: Option<DateTime>,
}

impl Model {
    /// This model from `row`'s columns from `at` on, in [`Column`]'s order
    /// (what `select_only().columns(Column::iter())` selects), read by
    /// position: a derived decode looks each column up by its name, built
    /// afresh per column when the select prefixes it (a join), which was
    /// most of the estate listing's time per row. Fields in declaration order.
    pub fn from_row_at(row: &sea_orm::QueryResult, at: usize) -> Result<Model, DbErr> {
        let mut at = at;
        Ok(Model {
            id: next_column(row, &mut at)?,
            uuid: next_column(row, &mut at)?,
            node_id: next_column(row, &mut at)?,
            entry_type: next_column(row, &mut at)?,
            reason: next_column(row, &mut at)?,
            scope: next_column(row, &mut at)?,
            asserted_by: next_column(row, &mut at)?,
            asserted_by_project: next_column(row, &mut at)?,
            asserted_at: next_column(row, &mut at)?,
            extra: next_column(row, &mut at)?,
            version: next_column(row, &mut at)?,
            created_at: next_column(row, &mut at)?,
            updated_at: next_column(row, &mut at)?,
            ends_at: next_column(row, &mut at)?,
        })
    }
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(
        belongs_to = "super::nodes::Entity",
        from = "Column::NodeId",
        to = "super::nodes::Column::Id",
        on_delete = "Cascade"
    )]
    Node,
}

impl Related<super::nodes::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Node.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
