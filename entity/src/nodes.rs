//! Ironic's `nodes` table: only the columns nodemaint reads or writes.
//! Ironic has ~65 columns; the others keep their defaults and are never touched.

use crate::next_column;
use sea_orm::entity::prelude::*;
use serde::Serialize;

/// Ironic's `nodes.name`, `owner` and `lessee` are `VARCHAR(255)`.
pub const FIELD_MAX: usize = 255;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel, Serialize)]
#[sea_orm(table_name = "nodes")]
pub struct Model {
    #[sea_orm(primary_key)]
    #[serde(skip)]
    pub id: i32,
    pub uuid: Option<String>,
    pub name: Option<String>,
    pub owner: Option<String>,
    pub lessee: Option<String>,
    /// Denormalised cache: true exactly while a `node_maintenance` row exists.
    pub maintenance: Option<bool>,
    /// Deprecated; written with the synthesised value (see [`crate::synthesize_reason`]).
    #[sea_orm(column_type = "Text", nullable)]
    pub maintenance_reason: Option<String>,
    pub fault: Option<String>,
    pub reservation: Option<String>,
    pub version: Option<String>,
    pub created_at: Option<DateTime>,
    pub updated_at: Option<DateTime>,
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
            name: next_column(row, &mut at)?,
            owner: next_column(row, &mut at)?,
            lessee: next_column(row, &mut at)?,
            maintenance: next_column(row, &mut at)?,
            maintenance_reason: next_column(row, &mut at)?,
            fault: next_column(row, &mut at)?,
            reservation: next_column(row, &mut at)?,
            version: next_column(row, &mut at)?,
            created_at: next_column(row, &mut at)?,
            updated_at: next_column(row, &mut at)?,
        })
    }
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(has_many = "super::node_maintenance::Entity")]
    NodeMaintenance,
}

impl Related<super::node_maintenance::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::NodeMaintenance.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
