//! Ironic's `node_history` table. Maintenance events use `event_type = 'maintenance'`.
//! Ironic's sizes apply: `user` is 64 characters, `project` 80.

use sea_orm::entity::prelude::*;

/// Ironic's `node_history.user` column size.
pub const USER_MAX: usize = 64;
/// Ironic's `node_history.project` column size.
pub const PROJECT_MAX: usize = 80;
/// The `event_type` of every maintenance assert and release.
pub const EVENT_TYPE_MAINTENANCE: &str = "maintenance";

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "node_history")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i32,
    pub uuid: String,
    pub conductor: Option<String>,
    pub event_type: Option<String>,
    pub severity: Option<String>,
    #[sea_orm(column_type = "Text", nullable)]
    pub event: Option<String>,
    pub user: Option<String>,
    pub project: Option<String>,
    pub node_id: Option<i32>,
    pub version: Option<String>,
    pub created_at: Option<DateTime>,
    pub updated_at: Option<DateTime>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(belongs_to = "super::nodes::Entity", from = "Column::NodeId", to = "super::nodes::Column::Id")]
    Node,
}

impl Related<super::nodes::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Node.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
