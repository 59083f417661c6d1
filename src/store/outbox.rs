//! The notification outbox (`node_maintenance_notification`): what a
//! change writes in its own transaction for the publisher to send, and
//! what the publisher reads, marks and prunes. See `crate::notify` for the
//! messages and `crate::ops::publish` for the sending.

use crate::authority::caller::Caller;
use crate::authority::event::MaintenanceEvent;
use crate::authority::plan::{NodeWrite, Plan};
use crate::notify::message::{Notification, RequestContext};
use crate::notify::payload::{self, Column, FieldKind, NODE_FIELDS, NodeColumns};
use crate::notify::{Level, Settings};
use crate::store::apply::Held;
use nodemaint_entity::node_maintenance_notification::{self as outbox, Column as Col};
use nodemaint_entity::nodes;
use nodemaint_runtime::sql::{quote, stmt};
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveValue::Set, ColumnTrait, ConnectionTrait, DbBackend, DbErr, EntityTrait, QueryFilter, QueryOrder, QuerySelect,
};
use tokio::sync::OnceCell;

/// What a change needs to write its notifications: who sends them, from
/// which level, and (read once) which of `NodePayload`'s columns this
/// database's `nodes` table has.
pub struct Outbox {
    publisher_id: String,
    level: Level,
    shape: OnceCell<NodeShape>,
}

/// The payload columns `nodes` has, whether `node_traits` exists, and
/// the select list on `nodes` that reads them (traits joined by commas).
struct NodeShape {
    columns: Vec<(&'static str, FieldKind)>,
    traits: bool,
    select: String,
}

/// A legacy call's attempt, kept to notify its failure (`.start` + `.error`).
#[derive(Debug, Clone)]
pub struct Attempt {
    pub node_id: i32,
    pub node: NodeWrite,
}

const MAINTENANCE_SET: &str = "baremetal.node.maintenance_set";

impl Outbox {
    pub fn new(settings: &Settings) -> Outbox {
        Outbox { publisher_id: settings.publisher_id.clone(), level: settings.level, shape: OnceCell::new() }
    }

    /// The notifications of `plan`, made by `caller` on `before` (the node
    /// as it was read under its lock), written in the change's transaction.
    pub(crate) async fn record<C: ConnectionTrait>(
        &self,
        db: &C,
        plan: &Plan,
        held: &Held,
        caller: &Caller,
    ) -> Result<(), DbErr> {
        if !self.sends(Level::Info) {
            return Ok(());
        }
        let before = &held.node;
        let context = RequestContext::of(caller);
        let notifications = if plan.legacy_call {
            let node = match &held.payload {
                Some(read) => read.clone(),
                None => self.node_columns(db, before.id).await?,
            };
            // `.start` shows the node before the save (Ironic emits it
            // before the conductor writes): the new maintenance state and
            // reason, the old `updated_at` and `fault`; `.end` the node as
            // the plan's write left it.
            let mut start = node
                .with("updated_at", before.updated_at.map_or(Column::Null, Column::Time))
                .with("fault", before.fault.clone().map_or(Column::Null, Column::Text));
            let mut after = start.clone();
            if let Some(write) = &plan.node {
                start = start
                    .with("maintenance", Column::Bool(write.maintenance))
                    .with("maintenance_reason", write.reason.clone().map_or(Column::Null, Column::Text));
                after = start.clone().with("updated_at", Column::Time(plan.at));
                if let Some(fault) = &write.fault {
                    after = after.with("fault", fault.clone().map_or(Column::Null, Column::Text));
                }
            }
            vec![
                self.notification(
                    format!("{MAINTENANCE_SET}.start"),
                    Level::Info,
                    payload::node_payload(&start),
                    &context,
                ),
                self.notification(
                    format!("{MAINTENANCE_SET}.end"),
                    Level::Info,
                    payload::node_payload(&after),
                    &context,
                ),
            ]
        } else {
            let node_uuid = before.uuid.as_deref().unwrap_or_default();
            plan.events.iter().map(|event| self.event_notification(event, node_uuid, &context)).collect()
        };
        insert(db, before.id, &notifications, &self.publisher_id).await
    }

    /// A legacy call that failed after it began: Ironic's `.start` and
    /// `.error`, showing the node with the change it was asked for, in a
    /// transaction of their own (the change's was rolled back).
    pub async fn record_failure<C: ConnectionTrait>(
        &self,
        db: &C,
        attempt: &Attempt,
        caller: &Caller,
    ) -> Result<(), DbErr> {
        let context = RequestContext::of(caller);
        let node = self
            .node_columns(db, attempt.node_id)
            .await?
            .with("maintenance", Column::Bool(attempt.node.maintenance))
            .with("maintenance_reason", attempt.node.reason.clone().map_or(Column::Null, Column::Text));
        let payload = payload::node_payload(&node);
        let mut notifications = Vec::new();
        if self.sends(Level::Info) {
            notifications.push(self.notification(
                format!("{MAINTENANCE_SET}.start"),
                Level::Info,
                payload.clone(),
                &context,
            ));
        }
        if self.sends(Level::Error) {
            notifications.push(self.notification(format!("{MAINTENANCE_SET}.error"), Level::Error, payload, &context));
        }
        insert(db, attempt.node_id, &notifications, &self.publisher_id).await
    }

    /// The typed events a set writer (the tick, reconcile) wrote in this
    /// transaction, read back (those after `mark`, the highest event id
    /// before it wrote, by its actor), each with its notification, in
    /// pages of `INSERT_ROWS`. Events of nodes already deleted (orphans)
    /// have no typed row and are not notified.
    pub async fn record_batch<C: ConnectionTrait>(&self, db: &C, mark: i32, actor: &Caller) -> Result<(), DbErr> {
        use nodemaint_entity::node_maintenance_event::{Column as E, Entity as Events};
        if !self.sends(Level::Info) {
            return Ok(());
        }
        let context = RequestContext::of(actor);
        let mut after = mark;
        loop {
            let page = Events::find()
                .filter(E::Id.gt(after))
                .filter(E::Actor.eq(actor.user_id.as_str()))
                .order_by_asc(E::Id)
                .limit(INSERT_ROWS as u64)
                .find_also_related(nodes::Entity)
                .all(db)
                .await?;
            let Some((last, _)) = page.last() else { return Ok(()) };
            after = last.id;
            let rows: Vec<_> = page
                .iter()
                .filter_map(|(row, node)| {
                    let event = MaintenanceEvent::from_row(row)?;
                    let node_uuid = node.as_ref().and_then(|n| n.uuid.clone()).unwrap_or_default();
                    Some(row_of(
                        Some(event.node_id),
                        &self.event_notification(&event, &node_uuid, &context),
                        &self.publisher_id,
                    ))
                })
                .collect();
            if !rows.is_empty() {
                outbox::Entity::insert_many(rows).exec_without_returning(db).await?;
            }
        }
    }

    fn sends(&self, level: Level) -> bool {
        level >= self.level
    }

    fn event_notification(&self, event: &MaintenanceEvent, node_uuid: &str, context: &RequestContext) -> Notification {
        let payload = payload::event_payload(event, node_uuid);
        self.notification(payload::event_type(event.kind), Level::Info, payload, context)
    }

    fn notification(
        &self,
        event_type: String,
        level: Level,
        payload: serde_json::Value,
        context: &RequestContext,
    ) -> Notification {
        Notification {
            message_id: uuid::Uuid::new_v4().to_string(),
            event_type,
            level,
            payload,
            at: chrono::Utc::now().naive_utc(),
            context: context.clone(),
        }
    }

    /// The select list on `nodes` that reads a node's payload columns
    /// and traits (the node lock reads it in its own statement).
    pub(crate) async fn payload_select<C: ConnectionTrait>(&self, db: &C) -> Result<&str, DbErr> {
        Ok(&self.shape.get_or_try_init(|| node_shape(db)).await?.select)
    }

    /// The payload columns of `row`, read by [`Outbox::payload_select`]
    /// from its column `offset` on.
    pub(crate) fn payload_of(&self, row: &sea_orm::QueryResult, offset: usize) -> Result<NodeColumns, DbErr> {
        let shape = self.shape.get().ok_or_else(|| DbErr::Custom("the payload's columns were not probed".into()))?;
        let mut node = NodeColumns::default();
        for (i, (name, kind)) in shape.columns.iter().enumerate() {
            node.values.push((name, column_value(row, offset + i, *kind)));
        }
        if shape.traits {
            let joined: Option<String> = row.try_get_by_index(offset + shape.columns.len())?;
            node.traits =
                joined.iter().flat_map(|j| j.split(',')).filter(|t| !t.is_empty()).map(str::to_owned).collect();
        }
        Ok(node)
    }

    /// The node's payload columns as they are now (in this transaction),
    /// its traits in the same statement (one round trip).
    async fn node_columns<C: ConnectionTrait>(&self, db: &C, node_id: i32) -> Result<NodeColumns, DbErr> {
        let select = self.payload_select(db).await?;
        let backend = db.get_database_backend();
        let sql = format!("SELECT {select} FROM nodes WHERE nodes.id = ?");
        match db.query_one_raw(stmt(backend, &sql, vec![node_id.into()])).await? {
            Some(row) => self.payload_of(&row, 0),
            None => Ok(NodeColumns::default()),
        }
    }
}

/// One column read as its kind says; a value of another type (a database
/// made by hand) is shown as NULL rather than failing the change.
fn column_value(row: &sea_orm::QueryResult, i: usize, kind: FieldKind) -> Column {
    let text = || row.try_get_by_index::<Option<String>>(i).ok().flatten().map(Column::Text);
    let value = match kind {
        FieldKind::Text | FieldKind::Dict => text(),
        FieldKind::Bool => row.try_get_by_index::<Option<bool>>(i).ok().flatten().map(Column::Bool),
        FieldKind::Time => row.try_get_by_index::<Option<chrono::NaiveDateTime>>(i).ok().flatten().map(Column::Time),
    };
    value.unwrap_or(Column::Null)
}

async fn node_shape<C: ConnectionTrait>(db: &C) -> Result<NodeShape, DbErr> {
    let have = nodemaint_runtime::probe::columns(db, "nodes").await?;
    let columns: Vec<_> = NODE_FIELDS.into_iter().filter(|(name, _)| have.iter().any(|c| c == name)).collect();
    let traits = nodemaint_runtime::probe::tables(db).await?.iter().any(|t| t == "node_traits");
    let backend = db.get_database_backend();
    let nodes = quote(backend, "nodes");
    let mut list: Vec<String> = columns.iter().map(|(name, _)| format!("{nodes}.{}", quote(backend, name))).collect();
    if traits {
        // Trait names are upper-case letters, digits and `_`: a comma separates them.
        let t = quote(backend, "trait");
        let joined = match backend {
            DbBackend::Postgres => format!("string_agg(t.{t}, ',')"),
            DbBackend::MySql => format!("GROUP_CONCAT(t.{t} SEPARATOR ',')"),
            _ => format!("group_concat(t.{t}, ',')"),
        };
        list.push(format!("(SELECT {joined} FROM node_traits t WHERE t.node_id = {nodes}.id)"));
    }
    Ok(NodeShape { columns, traits, select: list.join(", ") })
}

/// The highest typed-event id now (0 with none): a set writer's mark
/// before it writes, for [`Outbox::record_batch`].
pub async fn last_event_id<C: ConnectionTrait>(db: &C) -> Result<i32, DbErr> {
    use nodemaint_entity::node_maintenance_event::{Column as E, Entity as Events};
    let id: Option<Option<i32>> =
        Events::find().select_only().column_as(E::Id.max(), "last").into_tuple().one(db).await?;
    Ok(id.flatten().unwrap_or(0))
}

/// Rows per page and per multi-row insert (each row binds 7 values).
const INSERT_ROWS: usize = 500;

fn row_of(node_id: Option<i32>, n: &Notification, publisher_id: &str) -> outbox::ActiveModel {
    outbox::ActiveModel {
        message_id: Set(n.message_id.clone()),
        node_id: Set(node_id),
        event_type: Set(n.event_type.clone()),
        priority: Set(n.level.priority().to_owned()),
        message: Set(n.message(publisher_id)),
        created_at: Set(n.at),
        sent_at: Set(None),
        ..Default::default()
    }
}

async fn insert<C: ConnectionTrait>(
    db: &C,
    node_id: i32,
    notifications: &[Notification],
    publisher_id: &str,
) -> Result<(), DbErr> {
    if notifications.is_empty() {
        return Ok(());
    }
    let rows: Vec<_> = notifications.iter().map(|n| row_of(Some(node_id), n, publisher_id)).collect();
    outbox::Entity::insert_many(rows).exec_without_returning(db).await?;
    Ok(())
}

/// An unsent notification, as the publisher sends it.
#[derive(Debug, Clone)]
pub struct Unsent {
    pub id: i32,
    pub priority: String,
    pub message: String,
}

/// The oldest `limit` unsent notifications after id `after`, in id order
/// (commit order per node). A run walks on from the last id it sent: on
/// PostgreSQL the rows it marked stay in the `(sent_at, id)` index as dead
/// entries until vacuum, and a scan from the start would step over all of
/// them each time (quadratic in the backlog). A row committed behind the
/// walk (a lower id, later) is the next run's.
pub async fn unsent<C: ConnectionTrait>(db: &C, after: i32, limit: u64) -> Result<Vec<Unsent>, DbErr> {
    let rows = outbox::Entity::find()
        .select_only()
        .columns([Col::Id, Col::Priority, Col::Message])
        .filter(Col::SentAt.is_null())
        .filter(Col::Id.gt(after))
        .order_by_asc(Col::Id)
        .limit(limit)
        .into_tuple::<(i32, String, String)>()
        .all(db)
        .await?;
    Ok(rows.into_iter().map(|(id, priority, message)| Unsent { id, priority, message }).collect())
}

/// Whether any notification is unsent: one indexed read of one id (the
/// publisher's probe, every second in `serve`, reads no message).
pub async fn any_unsent<C: ConnectionTrait>(db: &C) -> Result<bool, DbErr> {
    let id: Option<i32> =
        outbox::Entity::find().select_only().column(Col::Id).filter(Col::SentAt.is_null()).into_tuple().one(db).await?;
    Ok(id.is_some())
}

/// Marks `ids` sent at `at`.
pub async fn mark_sent<C: ConnectionTrait>(db: &C, ids: &[i32], at: chrono::NaiveDateTime) -> Result<(), DbErr> {
    if ids.is_empty() {
        return Ok(());
    }
    outbox::Entity::update_many()
        .col_expr(Col::SentAt, Expr::value(at))
        .filter(Col::Id.is_in(ids.iter().copied()))
        .exec(db)
        .await?;
    Ok(())
}

/// Deletes at most `limit` notifications sent before `before`; returns how many.
pub async fn prune<C: ConnectionTrait>(db: &C, before: chrono::NaiveDateTime, limit: u64) -> Result<u64, DbErr> {
    let ids: Vec<i32> = outbox::Entity::find()
        .select_only()
        .column(Col::Id)
        .filter(Col::SentAt.lt(before))
        .order_by_asc(Col::SentAt)
        .limit(limit)
        .into_tuple()
        .all(db)
        .await?;
    if ids.is_empty() {
        return Ok(0);
    }
    Ok(outbox::Entity::delete_many().filter(Col::Id.is_in(ids)).exec(db).await?.rows_affected)
}

/// When the oldest unsent notification was written, and how many are unsent.
pub async fn backlog<C: ConnectionTrait>(db: &C) -> Result<(Option<chrono::NaiveDateTime>, u64), DbErr> {
    let row: Option<(Option<chrono::NaiveDateTime>, i64)> = outbox::Entity::find()
        .select_only()
        .column_as(Col::CreatedAt.min(), "oldest")
        .column_as(Col::Id.count(), "unsent")
        .filter(Col::SentAt.is_null())
        .into_tuple()
        .one(db)
        .await?;
    Ok(row.map_or((None, 0), |(oldest, n)| (oldest, n.max(0) as u64)))
}
