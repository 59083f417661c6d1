//! The maintenance operations an API handler calls, each one transaction
//! that keeps `nodes.maintenance`, the synthesised `nodes.maintenance_reason`
//! and `node_history` in step with the entries.
//!
//! Each change is a plan and an applier: the store's applier
//! (`crate::store::apply`) locks the node and reads what it holds, a pure
//! planner (`crate::authority::plan`) decides (scope → 404, policy → 403,
//! floors → 403, what was sent → 400/409), and the applier writes the plan.
//! This module only picks the planner and what it needs read.
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
use crate::authority::entry::EntryView;
use crate::authority::plan::{self, Context, Plan};
use crate::authority::policy::{self, Policy, defaults as rules};
use crate::authority::rejected::Rejected;
use crate::authority::release::Authority;
use crate::error::{Error, Result};
use crate::notify::Settings;
use crate::store::apply::{self, Held, Reads};
use crate::store::history::{self, HistoryView};
use crate::store::nodes::{self as nodes_store, NodeQuery, NodeView};
use crate::store::outbox::{Attempt, Outbox};
use crate::store::transaction::{self, RetryPolicy};
use nodemaint_runtime::sql::now_utc;
use sea_orm::{DatabaseConnection, DatabaseTransaction, DbBackend};
use std::future::Future;
use std::sync::Arc;
use tokio::sync::Semaphore;

pub use crate::authority::plan::NewEntry;

mod estate;
pub use estate::{EndedWindow, WindowDetail, WindowQuery, WindowRow};
mod windows;

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
    /// Where changes write their notifications; `None`: none are sent.
    outbox: Option<Arc<Outbox>>,
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
        Maintenance { db, policy: Arc::new(policy), writers, retry: RetryPolicy::default(), outbox: None }
    }

    /// With `retry` instead of the default retry policy (`[database]
    /// max_retries`, `retry_interval`, `max_retry_interval`).
    pub fn with_retry_policy(mut self, retry: RetryPolicy) -> Maintenance {
        self.retry = retry;
        self
    }

    /// Every change writes its notifications (`settings`) to the outbox, in
    /// its own transaction, for a publisher (`nodemaint serve`, `nodemaint
    /// notify publish`) to send.
    pub fn with_notifications(mut self, settings: &Settings) -> Maintenance {
        self.outbox = Some(Arc::new(Outbox::new(settings)));
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

    /// The node and what it holds, read without a lock, with the caller's
    /// authority on it (404 when the caller may not see it).
    async fn visible(&self, caller: &Caller, ident: &str, reads: Reads<'_>) -> Result<(Held, Authority)> {
        let held = apply::read(&self.db, ident, reads).await?;
        let authority = plan::authority_on(caller, &self.policy, &held.node, ident)?;
        Ok((held, authority))
    }

    /// One change by `caller` to the node `ident`: the applier locks and
    /// reads it as `reads` says, `decide` plans from it, the applier writes.
    async fn change<T, D>(&self, caller: &Caller, ident: &str, reads: Reads<'_>, decide: D) -> Result<T>
    where
        D: Fn(&Context<'_>) -> Result<(Plan, T), Rejected>,
    {
        self.planned_change(caller, ident, reads, |held| {
            let new_uuid = uuid::Uuid::new_v4().to_string();
            decide(&Context::new(caller, &self.policy, held.snapshot(), ident, now_utc(), new_uuid)?)
        })
        .await
    }

    /// [`Maintenance::change`] by the conductor (system scope, no policy).
    async fn conductor_change<T, D>(&self, ident: &str, decide: D) -> Result<T>
    where
        D: Fn(&Context<'_>) -> Result<(Plan, T), Rejected>,
    {
        let conductor = Caller::conductor();
        self.planned_change(&conductor, ident, Reads::Entries, |held| {
            let new_uuid = uuid::Uuid::new_v4().to_string();
            decide(&Context::conductor(&conductor, &self.policy, held.snapshot(), ident, now_utc(), new_uuid))
        })
        .await
    }

    /// Runs one planned change in a transaction, its notifications written
    /// with it. A legacy call (the boolean's PUT or DELETE) that fails after
    /// it was planned, in the write or the commit, is notified as Ironic
    /// notifies one that failed after it began (`.start` + `.error`), in a
    /// transaction of its own; one whose commit may have landed
    /// (`Error::Lost` while committing) is not: its outcome is unknown.
    async fn planned_change<T, D>(&self, by: &Caller, ident: &str, reads: Reads<'_>, decide: D) -> Result<T>
    where
        D: Fn(&Held) -> Result<(Plan, T), Rejected>,
    {
        let attempt = std::sync::Mutex::new(None::<Attempt>);
        let outbox = self.outbox.as_deref();
        let result = self
            .in_transaction(|txn| {
                let (decide, attempt) = (&decide, &attempt);
                async move {
                    apply::change(&txn, ident, reads, apply::By { caller: by, outbox }, |held| {
                        let (plan, outcome) = decide(held)?;
                        if let (true, Some(node)) = (plan.legacy_call, &plan.node) {
                            *attempt.lock().unwrap_or_else(|e| e.into_inner()) =
                                Some(Attempt { node_id: plan.node_id, node: node.clone() });
                        }
                        Ok((plan, outcome))
                    })
                    .await
                }
            })
            .await;
        let attempt = attempt.into_inner().unwrap_or_else(|e| e.into_inner());
        if let (Err(error), Some(outbox), Some(attempt)) = (&result, outbox, attempt)
            && !matches!(error, Error::Lost { committing: true, .. })
        {
            let attempt = &attempt;
            let recorded =
                self.in_transaction(|txn| async move { Ok(outbox.record_failure(&*txn, attempt, by).await?) });
            if let Err(e) = recorded.await {
                tracing::error!("the failed maintenance change on {ident} could not be notified: {e}");
            }
        }
        result
    }

    /// The node as the caller may see it (`GET /v1/nodes/{node}`), reason synthesised.
    pub async fn node(&self, caller: &Caller, ident: &str) -> Result<NodeView> {
        let node = nodes_store::find(&self.db, ident).await?;
        plan::authority_on(caller, &self.policy, &node, ident)?;
        self.policy.authorize(rules::NODE_GET, caller, &policy::node_target(&node))?;
        Ok(NodeView::from(&node))
    }

    /// The nodes the caller may see (`GET /v1/nodes`): every node for a
    /// system caller, else those whose owner or lessee is the caller's
    /// project, which is the same visibility as [`Maintenance::node`].
    pub async fn nodes(&self, caller: &Caller, query: &NodeQuery) -> Result<Vec<NodeView>> {
        self.policy.authorize(rules::NODE_LIST, caller, &policy::empty_target())?;
        // With no owner and no lessee to match, only system authority remains.
        let project = if crate::authority::scope::derive_scope(caller, None, None, self.policy.enforce_scope)
            == Some(nodemaint_entity::Scope::System)
        {
            None
        } else {
            match caller.project_id.as_deref().filter(|p| !p.is_empty()) {
                Some(project) => Some(project),
                None => return Ok(Vec::new()),
            }
        };
        let after = match &query.marker {
            Some(marker) => Some(self.visible(caller, marker, Reads::Entries).await?.0.node.id),
            None => None,
        };
        Ok(nodes_store::list(&self.db, query, project, after).await?.iter().map(NodeView::from).collect())
    }

    /// The node's active entries, then its scheduled windows (soonest
    /// first), masked for the caller, each with whether this caller may
    /// release it (or cancel or extend it) and why not.
    pub async fn list(&self, caller: &Caller, ident: &str) -> Result<Vec<EntryView>> {
        let (held, authority) = self.visible(caller, ident, Reads::Windows).await?;
        let node = &held.node;
        self.policy.authorize(rules::MAINTENANCE_GET, caller, &policy::node_target(node))?;
        let ctx = Context::reading(caller, &self.policy, authority, held.snapshot(), ident, now_utc());
        let scope = ctx.authority.scope;
        let planned: Vec<_> = held.scheduled.iter().map(|w| w.as_pending_entry()).collect();
        let active = held
            .entries
            .iter()
            .zip(ctx.release_refusals(&held.entries))
            .map(|(e, b)| EntryView::for_caller(e, scope).with_releasable(b).on_node(node));
        let later = held
            .scheduled
            .iter()
            .zip(ctx.release_refusals(&planned))
            .map(|(w, b)| EntryView::scheduled(w, scope).with_releasable(b).on_node(node));
        Ok(active.chain(later).collect())
    }

    /// Adds a typed entry at the caller's derived scope; with `ends_at`, a
    /// window (scheduled when `starts_at` is later than now).
    pub async fn add(&self, caller: &Caller, ident: &str, request: NewEntry) -> Result<EntryView> {
        self.change(caller, ident, Reads::Windows, |ctx| ctx.add(&request)).await
    }

    /// Releases one entry by uuid; a window that has not started is
    /// cancelled (`DELETE …/maintenance/{uuid}` at 1.117).
    pub async fn release(&self, caller: &Caller, ident: &str, entry_uuid: &str) -> Result<EntryView> {
        let uuid = parse_uuid(entry_uuid)?;
        self.change(caller, ident, Reads::WindowsUnlessActive(&uuid), |ctx| ctx.release(&uuid, true)).await
    }

    /// Releases one active entry by uuid; a scheduled window is not found
    /// (404), as a client that does not know windows (1.116) never sees one.
    pub async fn release_active(&self, caller: &Caller, ident: &str, entry_uuid: &str) -> Result<EntryView> {
        let uuid = parse_uuid(entry_uuid)?;
        self.change(caller, ident, Reads::Entries, |ctx| ctx.release(&uuid, false)).await
    }

    /// What [`Maintenance::release_all`] would do, without doing it: each of
    /// the node's entries as the caller sees it, with `None` when the caller
    /// may release it, else why not (the 403 text). Reads only; 403 when the
    /// node-level rule refuses the caller outright, as the release would.
    pub async fn release_all_plan(&self, caller: &Caller, ident: &str) -> Result<Vec<(EntryView, Option<String>)>> {
        let (held, authority) = self.visible(caller, ident, Reads::Entries).await?;
        let ctx = Context::reading(caller, &self.policy, authority, held.snapshot(), ident, now_utc());
        Ok(ctx.release_all_preview()?)
    }

    /// Releases every active entry, all or nothing (`DELETE /v1/nodes/{node}/maintenance`,
    /// and the boolean unset). Returns what was released.
    pub async fn release_all(&self, caller: &Caller, ident: &str) -> Result<Vec<EntryView>> {
        self.change(caller, ident, Reads::LegacyCall, |ctx| ctx.release_all()).await
    }

    /// The boolean PUT: creates the node's single legacy entry, or updates
    /// its reason without re-stamping its asserter or scope.
    pub async fn legacy_set(&self, caller: &Caller, ident: &str, reason: Option<String>) -> Result<EntryView> {
        self.change(caller, ident, Reads::LegacyCall, |ctx| ctx.legacy_set(reason.clone())).await
    }

    /// The boolean DELETE: release everything, all or nothing.
    pub async fn legacy_unset(&self, caller: &Caller, ident: &str) -> Result<Vec<EntryView>> {
        self.release_all(caller, ident).await
    }

    /// The conductor asserts a fault (system scope, empty project, kind in
    /// `extra`); a re-assert updates the node's one fault entry in place.
    pub async fn fault_assert(&self, ident: &str, kind: &str, reason: Option<String>) -> Result<EntryView> {
        self.conductor_change(ident, |ctx| ctx.fault_assert(kind, reason.clone())).await
    }

    /// The conductor clears the node's fault after automatic recovery.
    /// `None` when there was none.
    pub async fn fault_clear(&self, ident: &str) -> Result<Option<EntryView>> {
        self.conductor_change(ident, |ctx| ctx.fault_clear()).await
    }

    /// The node's history, oldest first, at most `limit` newest rows, with
    /// the identities above the caller's scope masked.
    pub async fn history(&self, caller: &Caller, ident: &str, limit: u64) -> Result<Vec<HistoryView>> {
        let node = nodes_store::find(&self.db, ident).await?;
        let scope = plan::authority_on(caller, &self.policy, &node, ident)?.scope;
        self.policy.authorize(rules::HISTORY_GET, caller, &policy::node_target(&node))?;
        let rows = history::node_history_of(&self.db, node.id, limit).await?;
        Ok(rows
            .into_iter()
            .map(|(row, typed)| {
                HistoryView::from(row).for_caller(typed.as_ref(), scope, node.owner.as_deref(), node.lessee.as_deref())
            })
            .collect())
    }
}

/// An entry uuid as the store keeps it (lower case, hyphenated), or 400.
fn parse_uuid(text: &str) -> Result<String> {
    uuid::Uuid::try_parse(text)
        .map(|u| u.to_string())
        .map_err(|_| Error::BadRequest(format!("Expected a maintenance entry UUID but received '{text}'.")))
}
