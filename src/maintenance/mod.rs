//! The maintenance operations an API handler calls, each one transaction
//! under the node lock that keeps `nodes.maintenance`, the synthesised
//! `nodes.maintenance_reason` and `node_history` in step with the entries.
//!
//! Every operation decides in the same order: find the node and derive the
//! caller's scope (none → 404, as the API hides nodes a caller cannot see),
//! then policy (403), then the release floors (403), then validation of
//! what was sent (400/409), and only then writes.
//!
//! ```no_run
//! use nodemaint::{Caller, Maintenance, NewEntry, Policy};
//! # async fn handler(db: sea_orm::DatabaseConnection) {
//! let svc = Maintenance::new(db, Policy::defaults());
//! // From the request's credentials (X-User-Id, X-Project-Id, X-Roles):
//! let caller = Caller::project("1f2e3d4c5b6a", "9c84d2e0f1a3", &["member"]);
//! let request = NewEntry { entry_type: "hardware_failure".into(), reason: Some("Disk 3".into()), ..Default::default() };
//! match svc.add(&caller, "myNode", request).await {
//!     Ok(entry) => { /* 201 with serde_json::to_string(&entry) */ }
//!     Err(e) => { let _status = e.http_status(); /* 400 / 403 / 404 / 409, body e.message() */ }
//! }
//! # }
//! ```

use crate::authority::caller::Caller;
use crate::authority::entry::{self, EntryView};
use crate::authority::event::EventKind;
use crate::authority::policy::{self, Policy, defaults as rules};
use crate::authority::release::{self, Authority};
use crate::authority::scope::derive_scope;
use crate::error::{DbFailure, Error, Result};
use crate::store::history::{self, HistoryView};
use crate::store::invariant::{self, NodeState};
use crate::store::nodes::{self as nodes_store, Locking, NodeQuery, NodeView};
use crate::store::transaction::{self, RetryPolicy};
use crate::store::{schedule, statements};
use nodemaint_entity::vocab::{FAULT, LEGACY, fault_column};
use nodemaint_entity::{Scope, node_maintenance, nodes};
use nodemaint_runtime::sql::now_utc;
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveValue::NotSet, ColumnTrait, Condition, ConnectionTrait, DatabaseConnection, DatabaseTransaction, DbBackend,
    DbErr, EntityTrait, FromQueryResult, QueryFilter, QueryOrder, QuerySelect,
};
use std::future::Future;
use std::sync::Arc;
use tokio::sync::Semaphore;

pub mod estate;
pub mod windows;

/// A typed entry to add (`POST /v1/nodes/{node}/maintenance`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NewEntry {
    pub entry_type: String,
    pub reason: Option<String>,
    /// Must be a JSON object when present.
    pub extra: Option<serde_json::Value>,
    /// A window's planned start: later than now makes it scheduled.
    pub starts_at: Option<chrono::NaiveDateTime>,
    /// A window's hard end: the tick releases the entry when it passes.
    pub ends_at: Option<chrono::NaiveDateTime>,
}

/// The library's entry point for maintenance: a pool and a policy. Clones
/// share the pool, the policy and (on SQLite) the writers' queue.
#[derive(Clone)]
pub struct Maintenance {
    db: DatabaseConnection,
    policy: Arc<Policy>,
    /// SQLite only: its write transactions, one at a time, in arrival order.
    writers: Option<Arc<Semaphore>>,
    /// How a transaction that lost to a concurrent one is run again.
    retry: RetryPolicy,
}

/// A node locked for the rest of a transaction, with what the caller holds on it.
struct Locked {
    node: nodes::Model,
    authority: Authority,
}

impl Maintenance {
    pub fn new(db: DatabaseConnection, policy: Policy) -> Maintenance {
        // SQLite has one writer at a time. Left to themselves, writers that
        // find the database locked wait in SQLite's busy handler, which
        // sleeps and polls (1, 2, 5 … 100 ms) and leaves the CPU idle while
        // the lock is free; queued here, the next writer starts the moment
        // the last one commits. Writers in other processes (reconcile from
        // cron) still meet the busy timeout.
        let writers = (db.get_database_backend() == DbBackend::Sqlite).then(|| Arc::new(Semaphore::new(1)));
        Maintenance { db, policy: Arc::new(policy), writers, retry: RetryPolicy::default() }
    }

    /// With `retry` instead of the default retry policy (`[database]
    /// max_retries`, `retry_interval`, `max_retry_interval`).
    pub fn with_retry_policy(mut self, retry: RetryPolicy) -> Maintenance {
        self.retry = retry;
        self
    }

    pub fn retry_policy(&self) -> RetryPolicy {
        self.retry
    }

    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    pub fn db(&self) -> &DatabaseConnection {
        &self.db
    }

    /// Runs `op` through the transaction runner (`transaction::run`), on
    /// SQLite one writer of this service at a time.
    async fn in_transaction<T, F, Fut>(&self, op: F) -> Result<T>
    where
        F: Fn(Arc<DatabaseTransaction>) -> Fut,
        Fut: Future<Output = Result<T>>,
    {
        // Held until the transaction (and any retry) ends; the semaphore is
        // never closed, so acquiring cannot fail.
        let _turn = match &self.writers {
            Some(queue) => queue.acquire().await.ok(),
            None => None,
        };
        transaction::run(&self.db, &self.retry, op).await
    }

    /// The node, visible to the caller, without locking (reads).
    async fn visible<C: ConnectionTrait>(&self, db: &C, caller: &Caller, ident: &str) -> Result<Locked> {
        let node = nodes_store::find(db, ident).await?;
        self.authority(caller, node, ident)
    }

    /// The caller's authority on the node, or 404: a caller outside the
    /// node's scopes, or one the read rule (`baremetal:node:get`) refuses,
    /// is not told the node exists, as Ironic checks that rule first.
    fn authority(&self, caller: &Caller, node: nodes::Model, ident: &str) -> Result<Locked> {
        let scope = derive_scope(caller, node.owner.as_deref(), node.lessee.as_deref(), self.policy.enforce_scope)
            .ok_or_else(|| Error::node_not_found(ident))?;
        if !self.policy.enforce(rules::NODE_GET, caller, &policy::node_target(&node)) {
            return Err(Error::node_not_found(ident));
        }
        let authority = Authority { scope, project: caller.project_or_empty().to_owned() };
        Ok(Locked { node, authority })
    }

    /// Locks the node for this transaction and derives the caller's authority.
    async fn lock(&self, txn: &DatabaseTransaction, caller: &Caller, ident: &str) -> Result<Locked> {
        let node = lock_node(txn, ident).await?;
        self.authority(caller, node, ident)
    }

    /// The node as the caller may see it (`GET /v1/nodes/{node}`), reason synthesised.
    pub async fn node(&self, caller: &Caller, ident: &str) -> Result<NodeView> {
        let locked = self.visible(&self.db, caller, ident).await?;
        self.policy.authorize(rules::NODE_GET, caller, &policy::node_target(&locked.node))?;
        Ok(NodeView::from(&locked.node))
    }

    /// The nodes the caller may see (`GET /v1/nodes`): every node for a
    /// system caller, else those whose owner or lessee is the caller's
    /// project, which is the same visibility as [`Maintenance::node`].
    pub async fn nodes(&self, caller: &Caller, query: &NodeQuery) -> Result<Vec<NodeView>> {
        self.policy.authorize(rules::NODE_LIST, caller, &policy::empty_target())?;
        let mut select = if query.descending {
            nodes::Entity::find().order_by_desc(nodes::Column::Id)
        } else {
            nodes::Entity::find().order_by_asc(nodes::Column::Id)
        }
        .limit(query.limit);
        // With no owner and no lessee to match, only system authority remains.
        if derive_scope(caller, None, None, self.policy.enforce_scope) != Some(Scope::System) {
            let Some(project) = caller.project_id.as_deref().filter(|p| !p.is_empty()) else {
                return Ok(Vec::new());
            };
            select = select
                .filter(Condition::any().add(nodes::Column::Owner.eq(project)).add(nodes::Column::Lessee.eq(project)));
        }
        select = match query.maintenance {
            Some(true) => select.filter(nodes::Column::Maintenance.eq(true)),
            Some(false) => select.filter(
                Condition::any().add(nodes::Column::Maintenance.eq(false)).add(nodes::Column::Maintenance.is_null()),
            ),
            None => select,
        };
        if let Some(marker) = &query.marker {
            let after = self.visible(&self.db, caller, marker).await?;
            select = select.filter(if query.descending {
                nodes::Column::Id.lt(after.node.id)
            } else {
                nodes::Column::Id.gt(after.node.id)
            });
        }
        Ok(select.all(&self.db).await?.iter().map(NodeView::from).collect())
    }

    /// The node's active entries, then its scheduled windows (soonest
    /// first), masked for the caller, each with whether this caller may
    /// release it (or cancel or extend it) and why not.
    pub async fn list(&self, caller: &Caller, ident: &str) -> Result<Vec<EntryView>> {
        let locked = self.visible(&self.db, caller, ident).await?;
        self.policy.authorize(rules::MAINTENANCE_GET, caller, &policy::node_target(&locked.node))?;
        let entries = entries_of(&self.db, locked.node.id).await?;
        let scheduled = schedule::of_node(&self.db, locked.node.id).await?;
        let planned: Vec<node_maintenance::Model> = scheduled.iter().map(|w| w.as_pending_entry()).collect();
        let blocked = |entries: &[node_maintenance::Model]| {
            release::release_plan(&locked.authority, entries, rules::MAINTENANCE_REMOVE, |e| {
                self.policy.enforce(rules::MAINTENANCE_REMOVE, caller, &policy::entry_target(&locked.node, e))
            })
        };
        let scope = locked.authority.scope;
        let node = &locked.node;
        let active = entries
            .iter()
            .zip(blocked(&entries))
            .map(|(e, b)| EntryView::for_caller(e, scope).with_releasable(b).on_node(node));
        let later = scheduled
            .iter()
            .zip(blocked(&planned))
            .map(|(w, b)| EntryView::scheduled(w, scope).with_releasable(b).on_node(node));
        Ok(active.chain(later).collect())
    }

    /// Adds a typed entry at the caller's derived scope; with `ends_at`, a
    /// window (scheduled when `starts_at` is later than now, see [`windows`]).
    pub async fn add(&self, caller: &Caller, ident: &str, request: NewEntry) -> Result<EntryView> {
        self.in_transaction(|txn| {
            let request = request.clone();
            async move {
                let txn = &*txn;
                let now = now_utc();
                let locked = self.lock(txn, caller, ident).await?;
                self.policy.authorize(rules::MAINTENANCE_ADD, caller, &policy::node_target(&locked.node))?;
                let ty = entry::typed_api_type(&request.entry_type)?;
                entry::check_reason(request.reason.as_deref())?;
                let times = windows::times(&request, now)?;
                let extra = entry::check_extra(request.extra.as_ref())?;
                entry::check_identity("User id", &caller.user_id)?;
                entry::check_identity("Project id", caller.project_or_empty())?;
                let entries = entries_of(txn, locked.node.id).await?;
                let scheduled = schedule::of_node(txn, locked.node.id).await?;
                let key =
                    windows::Key { ty: ty.name, scope: locked.authority.scope, project: &locked.authority.project };
                if let Some(start) = times.and_then(|t| t.scheduled_start) {
                    let end = times.map(|t| t.ends_at);
                    windows::refuse_overlap(&entries, &scheduled, &key, start, end, None, ident)?;
                    let window = windows::schedule(txn, &locked, caller, ty.name, &request, extra, start, now).await?;
                    return Ok(EntryView::scheduled(&window, locked.authority.scope).on_node(&locked.node));
                }
                refuse_duplicate(&entries, ty.name, locked.authority.scope, &locked.authority.project, ident)?;
                windows::refuse_overlap(&entries, &scheduled, &key, now, times.map(|t| t.ends_at), None, ident)?;
                let ends_at = times.map(|t| t.ends_at);
                let created = insert_entry(txn, &locked, caller, ty.name, request.reason, extra, ends_at).await?;
                history::record(txn, EventKind::Asserted, &created, caller, None).await?;
                sync_node(txn, &locked.node, &entries, &with_entry(&entries, &created)).await?;
                Ok(EntryView::for_caller(&created, locked.authority.scope).on_node(&locked.node))
            }
        })
        .await
    }

    /// Releases one entry by uuid; a window that has not started is
    /// cancelled (`DELETE …/maintenance/{uuid}` at 1.117).
    pub async fn release(&self, caller: &Caller, ident: &str, entry_uuid: &str) -> Result<EntryView> {
        self.release_one(caller, ident, entry_uuid, true).await
    }

    /// Releases one active entry by uuid; a scheduled window is not found
    /// (404), as a client that does not know windows (1.116) never sees one.
    pub async fn release_active(&self, caller: &Caller, ident: &str, entry_uuid: &str) -> Result<EntryView> {
        self.release_one(caller, ident, entry_uuid, false).await
    }

    async fn release_one(&self, caller: &Caller, ident: &str, entry_uuid: &str, cancels: bool) -> Result<EntryView> {
        let Ok(parsed) = uuid::Uuid::try_parse(entry_uuid) else {
            return Err(Error::BadRequest(format!("Expected a maintenance entry UUID but received '{entry_uuid}'.")));
        };
        let entry_uuid = parsed.to_string();
        self.in_transaction(|txn| {
            let entry_uuid = entry_uuid.clone();
            async move {
                let txn = &*txn;
                let locked = self.lock(txn, caller, ident).await?;
                let entries = entries_of(txn, locked.node.id).await?;
                let Some(entry) = entries.iter().find(|e| e.uuid == entry_uuid) else {
                    if !cancels {
                        return Err(Error::entry_not_found(&entry_uuid, ident));
                    }
                    // DELETE of a window that has not started cancels it.
                    return self.cancel_locked(txn, caller, &locked, &entry_uuid, ident).await;
                };
                release::release_all(&locked.authority, std::slice::from_ref(entry), rules::MAINTENANCE_REMOVE, |e| {
                    self.policy.enforce(rules::MAINTENANCE_REMOVE, caller, &policy::entry_target(&locked.node, e))
                })
                .map_err(Error::Forbidden)?;
                delete_entries(txn, std::slice::from_ref(entry), caller, None).await?;
                sync_node(txn, &locked.node, &entries, &without_entry(&entries, entry)).await?;
                Ok(EntryView::for_caller(entry, locked.authority.scope))
            }
        })
        .await
    }

    /// What [`Maintenance::release_all`] would do, without doing it: each of
    /// the node's entries as the caller sees it, with `None` when the caller
    /// may release it, else why not (the 403 text). Reads only; 403 when the
    /// node-level rule refuses the caller outright, as the release would.
    pub async fn release_all_plan(&self, caller: &Caller, ident: &str) -> Result<Vec<(EntryView, Option<String>)>> {
        let locked = self.visible(&self.db, caller, ident).await?;
        self.policy.authorize(rules::CLEAR_MAINTENANCE, caller, &policy::node_target(&locked.node))?;
        let entries = entries_of(&self.db, locked.node.id).await?;
        let plan = release::release_plan(&locked.authority, &entries, rules::MAINTENANCE_REMOVE, |e| {
            self.policy.enforce(rules::MAINTENANCE_REMOVE, caller, &policy::entry_target(&locked.node, e))
        });
        Ok(entries.iter().map(|e| EntryView::for_caller(e, locked.authority.scope)).zip(plan).collect())
    }

    /// Releases every active entry, all or nothing (`DELETE /v1/nodes/{node}/maintenance`,
    /// and the boolean unset). Returns what was released.
    pub async fn release_all(&self, caller: &Caller, ident: &str) -> Result<Vec<EntryView>> {
        self.in_transaction(|txn| async move {
            let txn = &*txn;
            let locked = self.lock(txn, caller, ident).await?;
            self.policy.authorize(rules::CLEAR_MAINTENANCE, caller, &policy::node_target(&locked.node))?;
            let entries = entries_of(txn, locked.node.id).await?;
            release::release_all(&locked.authority, &entries, rules::MAINTENANCE_REMOVE, |e| {
                self.policy.enforce(rules::MAINTENANCE_REMOVE, caller, &policy::entry_target(&locked.node, e))
            })
            .map_err(Error::Forbidden)?;
            delete_entries(txn, &entries, caller, None).await?;
            sync_node(txn, &locked.node, &entries, &[]).await?;
            Ok(entries.iter().map(|e| EntryView::for_caller(e, locked.authority.scope)).collect())
        })
        .await
    }

    /// The boolean PUT: creates the node's single legacy entry, or updates
    /// its reason without re-stamping its asserter or scope.
    pub async fn legacy_set(&self, caller: &Caller, ident: &str, reason: Option<String>) -> Result<EntryView> {
        self.in_transaction(|txn| {
            let reason = reason.clone();
            async move {
                let txn = &*txn;
                let locked = self.lock(txn, caller, ident).await?;
                self.policy.authorize(rules::SET_MAINTENANCE, caller, &policy::node_target(&locked.node))?;
                entry::check_reason(reason.as_deref())?;
                entry::check_identity("User id", &caller.user_id)?;
                entry::check_identity("Project id", caller.project_or_empty())?;
                let entries = entries_of(txn, locked.node.id).await?;
                let entry = assert_single(txn, &locked, &entries, caller, LEGACY, reason, None).await?;
                sync_node(txn, &locked.node, &entries, &with_entry(&entries, &entry)).await?;
                Ok(EntryView::for_caller(&entry, locked.authority.scope))
            }
        })
        .await
    }

    /// The boolean DELETE: release everything, all or nothing.
    pub async fn legacy_unset(&self, caller: &Caller, ident: &str) -> Result<Vec<EntryView>> {
        self.release_all(caller, ident).await
    }

    /// The conductor asserts a fault (system scope, empty project, kind in
    /// `extra`); a re-assert updates the node's one fault entry in place.
    pub async fn fault_assert(&self, ident: &str, kind: &str, reason: Option<String>) -> Result<EntryView> {
        let conductor = Caller::conductor();
        self.in_transaction(|txn| {
            let (reason, conductor) = (reason.clone(), conductor.clone());
            async move {
                let txn = &*txn;
                let node = lock_node(txn, ident).await?;
                let locked = Locked { node, authority: Authority { scope: Scope::System, project: String::new() } };
                entry::check_reason(reason.as_deref())?;
                let extra = Some(serde_json::json!({ "kind": kind }).to_string());
                let entries = entries_of(txn, locked.node.id).await?;
                let entry = assert_single(txn, &locked, &entries, &conductor, FAULT, reason, extra).await?;
                sync_node(txn, &locked.node, &entries, &with_entry(&entries, &entry)).await?;
                Ok(EntryView::for_caller(&entry, Scope::System))
            }
        })
        .await
    }

    /// The conductor clears the node's fault after automatic recovery.
    /// `None` when there was none.
    pub async fn fault_clear(&self, ident: &str) -> Result<Option<EntryView>> {
        let conductor = Caller::conductor();
        self.in_transaction(|txn| {
            let conductor = conductor.clone();
            async move {
                let txn = &*txn;
                let node = lock_node(txn, ident).await?;
                let entries = entries_of(txn, node.id).await?;
                let Some(fault) = entries.iter().find(|e| e.entry_type == FAULT) else {
                    return Ok(None);
                };
                delete_entries(txn, std::slice::from_ref(fault), &conductor, None).await?;
                sync_node(txn, &node, &entries, &without_entry(&entries, fault)).await?;
                Ok(Some(EntryView::for_caller(fault, Scope::System)))
            }
        })
        .await
    }

    /// The node's history, oldest first, at most `limit` newest rows, with
    /// the identities above the caller's scope masked.
    pub async fn history(&self, caller: &Caller, ident: &str, limit: u64) -> Result<Vec<HistoryView>> {
        let locked = self.visible(&self.db, caller, ident).await?;
        self.policy.authorize(rules::HISTORY_GET, caller, &policy::node_target(&locked.node))?;
        let rows = history::node_history_of(&self.db, locked.node.id, limit).await?;
        let (scope, node) = (locked.authority.scope, &locked.node);
        Ok(rows
            .into_iter()
            .map(|(row, typed)| {
                HistoryView::from(row).for_caller(typed.as_ref(), scope, node.owner.as_deref(), node.lessee.as_deref())
            })
            .collect())
    }
}

/// A node's entries in `asserted_at` order, ties by id.
pub(crate) async fn entries_of<C: ConnectionTrait>(
    db: &C,
    node_id: i32,
) -> Result<Vec<node_maintenance::Model>, DbErr> {
    node_maintenance::Model::find_by_statement(statements::entries_of(db.get_database_backend(), node_id)).all(db).await
}

fn refuse_duplicate(
    entries: &[node_maintenance::Model],
    ty: &str,
    scope: Scope,
    project: &str,
    ident: &str,
) -> Result<()> {
    if let Some(existing) =
        entries.iter().find(|e| e.entry_type == ty && e.scope == scope.as_str() && e.asserted_by_project == project)
    {
        let from = if project.is_empty() { "no project".to_owned() } else { format!("project {project}") };
        return Err(Error::Conflict(format!(
            "Maintenance entry {} (type {ty}, scope {scope}, {from}) is already active on node {ident}",
            existing.uuid
        )));
    }
    Ok(())
}

async fn insert_entry(
    txn: &DatabaseTransaction,
    locked: &Locked,
    caller: &Caller,
    ty: &str,
    reason: Option<String>,
    extra: Option<String>,
    ends_at: Option<chrono::NaiveDateTime>,
) -> Result<node_maintenance::Model> {
    let now = now_utc();
    let mut entry = node_maintenance::Model {
        id: 0,
        uuid: uuid::Uuid::new_v4().to_string(),
        node_id: locked.node.id,
        entry_type: ty.to_owned(),
        reason,
        scope: locked.authority.scope.as_str().to_owned(),
        asserted_by: caller.user_id.clone(),
        asserted_by_project: locked.authority.project.clone(),
        asserted_at: now,
        extra,
        version: Some("1.0".to_owned()),
        created_at: Some(now),
        updated_at: None,
        ends_at,
    };
    let mut row: node_maintenance::ActiveModel = entry.clone().into();
    row.id = NotSet;
    // Only the key comes back (RETURNING id, or the last insert id): the
    // rest of the row is what was just sent, and an ActiveModel insert would
    // read the whole row back (on MySQL with a second statement).
    let backend = txn.get_database_backend();
    let insert = statements::insert_entry(backend, &row);
    let inserted = if backend == DbBackend::Postgres {
        match txn.query_one_raw(insert).await {
            Ok(Some(returned)) => returned.try_get::<i32>("", "id"),
            Ok(None) => Err(DbErr::RecordNotInserted),
            Err(e) => Err(e),
        }
    } else {
        txn.execute_raw(insert).await.and_then(|done| {
            i32::try_from(done.last_insert_id()).map_err(|_| DbErr::Custom("entry id out of range".into()))
        })
    };
    entry.id = inserted.map_err(|e| match Error::from(e) {
        // The unique key backs the in-code duplicate check.
        Error::Database { kind: DbFailure::UniqueViolation, .. } => Error::Conflict(format!(
            "An identical maintenance entry (type {ty}, scope {}) is already active on node {}",
            locked.authority.scope,
            locked.node.uuid.as_deref().unwrap_or("?")
        )),
        other => other,
    })?;
    Ok(entry)
}

/// Asserts the node's one entry of a one-per-node type (`legacy`, `fault`):
/// updates the reason (and `extra` when given) of the one in `entries`,
/// keeping its asserter and scope, or inserts it; one history event either way.
async fn assert_single(
    txn: &DatabaseTransaction,
    locked: &Locked,
    entries: &[node_maintenance::Model],
    actor: &Caller,
    ty: &str,
    reason: Option<String>,
    extra: Option<String>,
) -> Result<node_maintenance::Model> {
    let (entry, action) = match entries.iter().find(|e| e.entry_type == ty) {
        Some(existing) => (update_entry(txn, existing, reason, extra).await?, EventKind::Updated),
        None => (insert_entry(txn, locked, actor, ty, reason, extra, None).await?, EventKind::Asserted),
    };
    history::record(txn, action, &entry, actor, None).await?;
    Ok(entry)
}

/// Changes an entry's reason (and `extra` when given); asserter and scope stay.
async fn update_entry(
    txn: &DatabaseTransaction,
    entry: &node_maintenance::Model,
    reason: Option<String>,
    extra: Option<String>,
) -> Result<node_maintenance::Model> {
    let mut updated = entry.clone();
    updated.reason = reason;
    if extra.is_some() {
        updated.extra = extra;
    }
    updated.updated_at = Some(now_utc());
    // Not ActiveModel::update: it reads the row back (RETURNING *, or a
    // SELECT after the UPDATE on MySQL), and the new row is known here.
    node_maintenance::Entity::update_many()
        .col_expr(node_maintenance::Column::Reason, Expr::value(updated.reason.clone()))
        .col_expr(node_maintenance::Column::Extra, Expr::value(updated.extra.clone()))
        .col_expr(node_maintenance::Column::UpdatedAt, Expr::value(updated.updated_at))
        .filter(node_maintenance::Column::Id.eq(entry.id))
        .exec(txn)
        .await?;
    Ok(updated)
}

/// Deletes entries and records each release.
pub(crate) async fn delete_entries<C: ConnectionTrait>(
    db: &C,
    entries: &[node_maintenance::Model],
    actor: &Caller,
    note: Option<&str>,
) -> Result<()> {
    if entries.is_empty() {
        return Ok(());
    }
    if let [entry] = entries {
        db.execute_raw(statements::delete_entry(db.get_database_backend(), entry.id)).await?;
    } else {
        node_maintenance::Entity::delete_many()
            .filter(node_maintenance::Column::Id.is_in(entries.iter().map(|e| e.id)))
            .exec(db)
            .await?;
    }
    for entry in entries {
        history::record(db, EventKind::Released, entry, actor, note).await?;
    }
    Ok(())
}

/// `entries` with `entry` added, or in place of the row with its id.
fn with_entry(entries: &[node_maintenance::Model], entry: &node_maintenance::Model) -> Vec<node_maintenance::Model> {
    let mut after: Vec<_> = entries.iter().filter(|e| e.id != entry.id).cloned().collect();
    after.push(entry.clone());
    after
}

/// `entries` without `entry`.
fn without_entry(entries: &[node_maintenance::Model], entry: &node_maintenance::Model) -> Vec<node_maintenance::Model> {
    entries.iter().filter(|e| e.id != entry.id).cloned().collect()
}

/// The invariant write for one node: `entries` are its entries after this
/// transaction's change, `before` what they were (which decides whether a
/// fault was released).
async fn sync_node<C: ConnectionTrait>(
    db: &C,
    node: &nodes::Model,
    before: &[node_maintenance::Model],
    entries: &[node_maintenance::Model],
) -> Result<()> {
    let state = NodeState { id: node.id, entries, fault: fault_column(before, entries) };
    invariant::write(db, &[state], now_utc()).await
}

/// The node `ident` under the node lock.
async fn lock_node(txn: &DatabaseTransaction, ident: &str) -> Result<nodes::Model> {
    let node = nodes_store::lock(txn, Locking::Ident(ident)).await?;
    node.ok_or_else(|| Error::node_not_found(ident))
}
