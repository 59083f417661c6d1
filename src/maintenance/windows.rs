//! Maintenance windows on [`Maintenance`]: schedule (through
//! [`Maintenance::add`] with `ends_at`), extend and cancel (the estate
//! listing is `super::estate`). Each is one transaction under the node lock, like every
//! operation; who may extend or cancel a window is exactly who may release
//! it (the release floors and `baremetal:node:maintenance:remove`).
//!
//! Two windows of the same (type, scope, project) on a node never overlap,
//! and an entry without an end overlaps every window after it: refused at
//! scheduling (409 naming the other), so a window that comes due never
//! finds its key held (the tick still checks, see `crate::tick`).

use super::{Locked, Maintenance, NewEntry, entries_of};
use crate::authority::caller::Caller;
use crate::authority::entry::EntryView;
use crate::authority::event::EventKind;
use crate::authority::policy::{self, defaults as rules};
use crate::authority::release;
use crate::authority::window::{self, Times};
use crate::error::{Error, Result};
use crate::store::history;
use crate::store::schedule;
use chrono::NaiveDateTime;
use nodemaint_entity::vocab::iso8601;
use nodemaint_entity::{Scope, node_maintenance, node_maintenance_schedule};
use nodemaint_runtime::sql::now_utc;
use sea_orm::DatabaseTransaction;

/// What two windows must not share while they overlap.
pub(super) struct Key<'a> {
    pub ty: &'a str,
    pub scope: Scope,
    pub project: &'a str,
}

impl Key<'_> {
    fn matches(&self, ty: &str, scope: &str, project: &str) -> bool {
        self.ty == ty && self.scope.as_str() == scope && self.project == project
    }
}

/// The window rules for `request`'s times; `None` for an entry without an end.
pub(super) fn times(request: &NewEntry, now: NaiveDateTime) -> Result<Option<Times>> {
    match (request.starts_at, request.ends_at) {
        (None, None) => Ok(None),
        (Some(_), None) => Err(Error::BadRequest(
            "A maintenance window with a start (starts_at) needs an end (ends_at); an entry without an end never expires"
                .into(),
        )),
        (start, Some(end)) => window::check(request.reason.as_deref(), start, end, now).map(Some),
    }
}

fn end_text(end: Option<NaiveDateTime>) -> String {
    end.map(|e| format!("until {}", iso8601(e))).unwrap_or_else(|| "with no end".into())
}

/// 409 when a window `[start, end)` of `key` would overlap another of the
/// same key on the node (`except`: the window being changed).
pub(super) fn refuse_overlap(
    entries: &[node_maintenance::Model],
    scheduled: &[node_maintenance_schedule::Model],
    key: &Key<'_>,
    start: NaiveDateTime,
    end: Option<NaiveDateTime>,
    except: Option<&str>,
    ident: &str,
) -> Result<()> {
    let from = if key.project.is_empty() { "no project".to_owned() } else { format!("project {}", key.project) };
    let other = |uuid: &str| except != Some(uuid);
    if let Some(active) = entries.iter().find(|e| {
        other(&e.uuid)
            && key.matches(&e.entry_type, &e.scope, &e.asserted_by_project)
            && window::overlaps(e.asserted_at, e.ends_at, start, end)
    }) {
        return Err(Error::Conflict(format!(
            "Maintenance entry {} (type {}, scope {}, {from}) is active on node {ident} {}, which overlaps this window",
            active.uuid,
            key.ty,
            key.scope,
            end_text(active.ends_at)
        )));
    }
    if let Some(planned) = scheduled.iter().find(|w| {
        other(&w.uuid)
            && key.matches(&w.entry_type, &w.scope, &w.asserted_by_project)
            && window::overlaps(w.starts_at, Some(w.ends_at), start, end)
    }) {
        return Err(Error::Conflict(format!(
            "Maintenance window {} (type {}, scope {}, {from}) is scheduled on node {ident} from {} until {}, \
             which overlaps this one",
            planned.uuid,
            key.ty,
            key.scope,
            iso8601(planned.starts_at),
            iso8601(planned.ends_at)
        )));
    }
    Ok(())
}

/// Stores a window that starts at `start` and records that it was scheduled.
#[allow(clippy::too_many_arguments)]
pub(super) async fn schedule(
    txn: &DatabaseTransaction,
    locked: &Locked,
    caller: &Caller,
    ty: &str,
    request: &NewEntry,
    extra: Option<String>,
    start: NaiveDateTime,
    now: NaiveDateTime,
) -> Result<node_maintenance_schedule::Model> {
    let window = node_maintenance_schedule::Model {
        id: 0,
        uuid: uuid::Uuid::new_v4().to_string(),
        node_id: locked.node.id,
        entry_type: ty.to_owned(),
        reason: request.reason.clone(),
        scope: locked.authority.scope.as_str().to_owned(),
        asserted_by: caller.user_id.clone(),
        asserted_by_project: locked.authority.project.clone(),
        starts_at: start,
        // Checked by `times` before anything is stored.
        ends_at: request.ends_at.unwrap_or(start),
        extra,
        version: Some("1.0".to_owned()),
        created_at: Some(now),
        updated_at: None,
    };
    let window = schedule::insert(txn, window).await?;
    let note = format!("starts {}", iso8601(start));
    history::record(txn, EventKind::Scheduled, &window.as_entry(now), caller, Some(&note)).await?;
    Ok(window)
}

/// A window on a locked node: active (an entry with an end) or scheduled.
enum Found {
    Active(node_maintenance::Model),
    Scheduled(node_maintenance_schedule::Model),
}

impl Maintenance {
    /// Moves a window's end later (`PATCH …/maintenance/{uuid}`): an active
    /// window or a scheduled one. Earlier, or in the past, is 400 and
    /// changes nothing; an entry without an end is not a window (400).
    pub async fn extend(
        &self,
        caller: &Caller,
        ident: &str,
        entry_uuid: &str,
        ends_at: NaiveDateTime,
    ) -> Result<EntryView> {
        let entry_uuid = parse_uuid(entry_uuid)?;
        self.in_transaction(|txn| {
            let entry_uuid = entry_uuid.clone();
            async move {
                let txn = &*txn;
                let now = now_utc();
                let locked = self.lock(txn, caller, ident).await?;
                let entries = entries_of(txn, locked.node.id).await?;
                let scheduled = schedule::of_node(txn, locked.node.id).await?;
                let found = find(&entries, &scheduled, &entry_uuid)
                    .ok_or_else(|| Error::entry_not_found(&entry_uuid, ident))?;
                let as_entry = match &found {
                    Found::Active(e) => e.clone(),
                    Found::Scheduled(w) => w.as_pending_entry(),
                };
                self.may_release(caller, &locked, &as_entry)?;
                let Some(current) = as_entry.ends_at else {
                    return Err(Error::BadRequest(format!(
                        "Maintenance entry {entry_uuid} has no end, so it is not a window and cannot be extended"
                    )));
                };
                window::check_extension(current, ends_at, now)?;
                let key = Key {
                    ty: &as_entry.entry_type,
                    scope: Scope::parse(&as_entry.scope).unwrap_or(Scope::System),
                    project: &as_entry.asserted_by_project,
                };
                let start = match &found {
                    Found::Active(e) => e.asserted_at,
                    Found::Scheduled(w) => w.starts_at,
                };
                refuse_overlap(&entries, &scheduled, &key, start, Some(ends_at), Some(&entry_uuid), ident)?;
                let note = format!("end moved from {}", iso8601(current));
                let view = match found {
                    Found::Active(mut e) => {
                        schedule::set_active_end(txn, e.id, ends_at, now).await?;
                        e.ends_at = Some(ends_at);
                        e.updated_at = Some(now);
                        history::record(txn, EventKind::Extended, &e, caller, Some(&note)).await?;
                        EntryView::for_caller(&e, locked.authority.scope).on_node(&locked.node)
                    }
                    Found::Scheduled(mut w) => {
                        schedule::set_scheduled_end(txn, w.id, ends_at, now).await?;
                        w.ends_at = ends_at;
                        w.updated_at = Some(now);
                        let entry = w.as_pending_entry();
                        history::record(txn, EventKind::Extended, &entry, caller, Some(&note)).await?;
                        EntryView::scheduled(&w, locked.authority.scope).on_node(&locked.node)
                    }
                };
                Ok(view)
            }
        })
        .await
    }

    /// Removes a window that has not started (`DELETE` of a scheduled
    /// window). An active entry is refused with 409: end it by releasing it.
    pub async fn cancel(&self, caller: &Caller, ident: &str, entry_uuid: &str) -> Result<EntryView> {
        let entry_uuid = parse_uuid(entry_uuid)?;
        self.in_transaction(|txn| {
            let entry_uuid = entry_uuid.clone();
            async move {
                let txn = &*txn;
                let locked = self.lock(txn, caller, ident).await?;
                if entries_of(txn, locked.node.id).await?.iter().any(|e| e.uuid == entry_uuid) {
                    return Err(Error::Conflict(format!(
                        "Maintenance entry {entry_uuid} on node {ident} is active, not scheduled; \
                         release it to end it early (DELETE the entry, or nodemaint maintenance remove {ident} {entry_uuid})"
                    )));
                }
                self.cancel_locked(txn, caller, &locked, &entry_uuid, ident).await
            }
        })
        .await
    }

    /// Cancels the scheduled window `entry_uuid` on a locked node; 404 when
    /// the node has none by that uuid.
    pub(super) async fn cancel_locked(
        &self,
        txn: &DatabaseTransaction,
        caller: &Caller,
        locked: &Locked,
        entry_uuid: &str,
        ident: &str,
    ) -> Result<EntryView> {
        let scheduled = schedule::of_node(txn, locked.node.id).await?;
        let window =
            scheduled.iter().find(|w| w.uuid == entry_uuid).ok_or_else(|| Error::entry_not_found(entry_uuid, ident))?;
        let pending = window.as_pending_entry();
        self.may_release(caller, locked, &pending)?;
        schedule::delete(txn, window.id).await?;
        let note = format!("was to start {}", iso8601(window.starts_at));
        history::record(txn, EventKind::Cancelled, &pending, caller, Some(&note)).await?;
        Ok(EntryView::scheduled(window, locked.authority.scope))
    }

    /// 403 unless the caller may release `entry`: the node-level rule, the
    /// release floors and the per-entry policy, as a release decides.
    fn may_release(&self, caller: &Caller, locked: &Locked, entry: &node_maintenance::Model) -> Result<()> {
        release::release_all(&locked.authority, std::slice::from_ref(entry), rules::MAINTENANCE_REMOVE, |e| {
            self.policy.enforce(rules::MAINTENANCE_REMOVE, caller, &policy::entry_target(&locked.node, e))
        })
        .map_err(Error::Forbidden)
    }
}

fn find(
    entries: &[node_maintenance::Model],
    scheduled: &[node_maintenance_schedule::Model],
    uuid: &str,
) -> Option<Found> {
    if let Some(e) = entries.iter().find(|e| e.uuid == uuid) {
        return Some(Found::Active(e.clone()));
    }
    scheduled.iter().find(|w| w.uuid == uuid).map(|w| Found::Scheduled(w.clone()))
}

pub(super) fn parse_uuid(text: &str) -> Result<String> {
    uuid::Uuid::try_parse(text)
        .map(|u| u.to_string())
        .map_err(|_| Error::BadRequest(format!("Expected a maintenance entry UUID but received '{text}'.")))
}
