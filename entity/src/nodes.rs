//! Ironic's `nodes` table: only the columns nodemaint reads or writes.
//! Ironic has ~65 columns; the others keep their defaults and are never touched.

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

crate::from_row_at!(
    id,
    uuid,
    name,
    owner,
    lessee,
    maintenance,
    maintenance_reason,
    fault,
    reservation,
    version,
    created_at,
    updated_at
);

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
