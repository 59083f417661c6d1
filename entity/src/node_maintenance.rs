//! `node_maintenance`: one row per active maintenance entry (node maintenance
//! spec, "Data model impact"). Releasing an entry hard-deletes its row.

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

crate::from_row_at!(
    id,
    uuid,
    node_id,
    entry_type,
    reason,
    scope,
    asserted_by,
    asserted_by_project,
    asserted_at,
    extra,
    version,
    created_at,
    updated_at,
    ends_at
);

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
