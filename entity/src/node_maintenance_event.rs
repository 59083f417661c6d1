//! `node_maintenance_event`: what each maintenance event in `node_history`
//! says, as typed fields, one row per history row (`history_uuid`). The
//! history row's `event` text is rendered from these fields; masking and
//! the ended-window listing read the fields, never the text.
//!
//! Rows typed from a history text written before this table existed have
//! `from_text` set: only the text's fixed opening (entry, kind, type,
//! scope) was read from it, so the identity and time fields are empty.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "node_maintenance_event")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i32,
    /// `node_history.uuid` of the event's history row.
    #[sea_orm(unique)]
    pub history_uuid: String,
    pub node_id: i32,
    /// What happened: `asserted`, `released`, `expired`, … (`EventKind`).
    pub kind: String,
    pub entry_uuid: String,
    #[sea_orm(column_name = "type")]
    pub entry_type: String,
    pub scope: String,
    #[sea_orm(column_type = "Text", nullable)]
    pub reason: Option<String>,
    pub asserted_by: Option<String>,
    pub asserted_by_project: Option<String>,
    pub asserted_at: Option<DateTime>,
    /// The window's planned end, when the entry had one.
    pub ends_at: Option<DateTime>,
    /// Who acted, in full (history's `user` column is cut to 64).
    pub actor: String,
    /// The actor's project; empty for none.
    pub actor_project: String,
    #[sea_orm(column_type = "Text", nullable)]
    pub note: Option<String>,
    pub created_at: DateTime,
    pub from_text: bool,
}

crate::from_row_at!(
    id,
    history_uuid,
    node_id,
    kind,
    entry_uuid,
    entry_type,
    scope,
    reason,
    asserted_by,
    asserted_by_project,
    asserted_at,
    ends_at,
    actor,
    actor_project,
    note,
    created_at,
    from_text
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
    /// The history row this event types (no foreign key: Ironic prunes
    /// and deletes its history rows without knowing of this table).
    #[sea_orm(
        belongs_to = "super::node_history::Entity",
        from = "Column::HistoryUuid",
        to = "super::node_history::Column::Uuid"
    )]
    History,
}

impl Related<super::nodes::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Node.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
