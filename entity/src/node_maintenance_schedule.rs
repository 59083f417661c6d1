//! `node_maintenance_schedule`: maintenance windows planned to start later.
//! A row here touches nothing of its node; when `starts_at` comes, the tick
//! moves it into `node_maintenance` (an active entry with the same uuid and
//! `ends_at`) and deletes it here.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "node_maintenance_schedule")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i32,
    #[sea_orm(unique)]
    pub uuid: String,
    pub node_id: i32,
    #[sea_orm(column_name = "type")]
    pub entry_type: String,
    #[sea_orm(column_type = "Text", nullable)]
    pub reason: Option<String>,
    pub scope: String,
    pub asserted_by: String,
    pub asserted_by_project: String,
    /// Naive UTC, like every time nodemaint stores.
    pub starts_at: DateTime,
    pub ends_at: DateTime,
    #[sea_orm(column_type = "Text", nullable)]
    pub extra: Option<String>,
    pub version: Option<String>,
    pub created_at: Option<DateTime>,
    pub updated_at: Option<DateTime>,
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
    starts_at,
    ends_at,
    extra,
    version,
    created_at,
    updated_at
);

impl Model {
    /// The window as an entry while it waits: asserted when it was
    /// scheduled. What release floors, policy, masking and history read.
    pub fn as_pending_entry(&self) -> super::node_maintenance::Model {
        self.as_entry(self.created_at.unwrap_or(self.starts_at))
    }

    /// The entry this window becomes when it starts at `at`.
    pub fn as_entry(&self, at: DateTime) -> super::node_maintenance::Model {
        super::node_maintenance::Model {
            id: 0,
            uuid: self.uuid.clone(),
            node_id: self.node_id,
            entry_type: self.entry_type.clone(),
            reason: self.reason.clone(),
            scope: self.scope.clone(),
            asserted_by: self.asserted_by.clone(),
            asserted_by_project: self.asserted_by_project.clone(),
            asserted_at: at,
            extra: self.extra.clone(),
            version: self.version.clone(),
            created_at: self.created_at,
            updated_at: self.updated_at,
            ends_at: Some(self.ends_at),
        }
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
