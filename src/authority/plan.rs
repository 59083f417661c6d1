//! A maintenance change as a value. Every operation of the facade is a pure
//! function here: from what the node holds (read under its lock, a
//! [`Snapshot`]), who asks, the policy and the clock to a [`Plan`] — the
//! rows to insert, update and delete, the node's new boolean, reason and
//! fault, and the events — or the refusal, whose [`Error`] variant carries
//! its HTTP status. `crate::store::apply` is the one applier that writes a
//! plan; no operation writes by itself.
//!
//! Every planner decides in the same order: the caller's scope on the node
//! (none → 404, see [`authority_on`]), then policy (403), then the release
//! floors (403), then what was sent (400/409).

use crate::authority::caller::Caller;
use crate::authority::entry::{self, EntryView};
use crate::authority::event::{EventKind, MaintenanceEvent};
use crate::authority::policy::{self, Policy, defaults as rules};
use crate::authority::rejected::{Holder, Rejected, Result};
use crate::authority::release::{self, Authority};
use crate::authority::scope::derive_scope;
use crate::authority::window::{self, Times};
use chrono::NaiveDateTime;
use nodemaint_entity::vocab::{FAULT, LEGACY, fault_column, iso8601, maintenance_reason_column};
use nodemaint_entity::{Scope, node_maintenance, node_maintenance_schedule, nodes};

type Entry = node_maintenance::Model;
type Window = node_maintenance_schedule::Model;

/// A typed entry to add (`POST /v1/nodes/{node}/maintenance`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NewEntry {
    pub entry_type: String,
    pub reason: Option<String>,
    /// Must be a JSON object when present.
    pub extra: Option<serde_json::Value>,
    /// A window's planned start: later than now makes it scheduled.
    pub starts_at: Option<NaiveDateTime>,
    /// A window's hard end: the tick releases the entry when it passes.
    pub ends_at: Option<NaiveDateTime>,
}

/// What a node holds, as read under its lock.
#[derive(Debug, Clone, Copy)]
pub struct Snapshot<'a> {
    pub node: &'a nodes::Model,
    /// Its active entries, in `asserted_at` order.
    pub entries: &'a [Entry],
    /// Its scheduled windows, soonest first; empty when the operation did
    /// not need them read (`crate::store::apply::Reads`).
    pub scheduled: &'a [Window],
}

/// A change to a scheduled window.
#[derive(Debug, Clone, PartialEq)]
pub enum WindowWrite {
    /// A new window (its id is the store's to give).
    Insert(Box<Window>),
    /// The window with this id ends at `ends_at` (changed at `at`).
    SetEnd {
        id: i32,
        ends_at: NaiveDateTime,
        at: NaiveDateTime,
    },
    Delete(i32),
}

/// The node's own columns after a change (the invariant: the boolean is
/// true exactly while an entry is active).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeWrite {
    pub maintenance: bool,
    /// The deprecated `maintenance_reason`, synthesised from the entries.
    pub reason: Option<String>,
    /// `Some(value)` writes `nodes.fault`; `None` leaves it (see `vocab::fault_column`).
    pub fault: Option<Option<String>>,
}

/// One node's change: what the applier writes, in one transaction.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Plan {
    pub node_id: i32,
    /// When the change is made: the time of its rows, events and `nodes.updated_at`.
    pub at: NaiveDateTime,
    /// New entries (their ids are the store's to give).
    pub insert: Vec<Entry>,
    /// Entries rewritten by id: their reason, extra, end and `updated_at`.
    pub update: Vec<Entry>,
    /// Entries removed.
    pub delete: Vec<Entry>,
    pub windows: Vec<WindowWrite>,
    /// The node's columns; `None` when the change leaves them as they are
    /// (a window scheduled, extended or cancelled).
    pub node: Option<NodeWrite>,
    /// What happened, in order: one history row and one typed row each.
    pub events: Vec<MaintenanceEvent>,
    /// The boolean's PUT or DELETE: notified as Ironic notifies them
    /// (`maintenance_set` `.start` and `.end`, also when nothing changed),
    /// not with typed events.
    pub legacy_call: bool,
}

/// The caller's authority on `node`, or 404: a caller outside the node's
/// scopes, or one the read rule (`baremetal:node:get`) refuses, is not told
/// the node exists, as Ironic checks that rule first.
pub fn authority_on(caller: &Caller, policy: &Policy, node: &nodes::Model, ident: &str) -> Result<Authority> {
    let scope = derive_scope(caller, node.owner.as_deref(), node.lessee.as_deref(), policy.enforce_scope)
        .ok_or_else(|| Rejected::NodeNotFound { node: ident.to_owned() })?;
    if !policy.enforce(rules::NODE_GET, caller, &policy::node_target(node)) {
        return Err(Rejected::NodeNotFound { node: ident.to_owned() });
    }
    Ok(Authority { scope, project: caller.project_or_empty().to_owned() })
}

/// 403 unless `caller`, holding `authority` on `node`, may release every
/// one of `entries`, naming every blocker: the per-entry remove policy,
/// then the release floors.
fn may_release(
    caller: &Caller,
    policy: &Policy,
    authority: &Authority,
    node: &nodes::Model,
    entries: &[Entry],
) -> Result<()> {
    release::release_all(authority, entries, rules::MAINTENANCE_REMOVE, |e| {
        policy.enforce(rules::MAINTENANCE_REMOVE, caller, &policy::entry_target(node, e))
    })
}

/// 403 unless `caller` may clear the node's maintenance (the node rule),
/// then release every one of `entries`: what the bulk release decides.
fn may_release_all(
    caller: &Caller,
    policy: &Policy,
    authority: &Authority,
    node: &nodes::Model,
    entries: &[Entry],
) -> Result<()> {
    policy.authorize(rules::CLEAR_MAINTENANCE, caller, &policy::node_target(node))?;
    may_release(caller, policy, authority, node, entries)
}

/// What `DELETE /v1/nodes/{node}/maintenance/{uuid}` decides about the
/// node's active `entry`, with no database: 404 when the caller may not
/// see the node (`ident` is how it was named), 403 when the remove policy
/// or the release floors refuse, with the REST API's message.
pub fn release_decision(
    caller: &Caller,
    policy: &Policy,
    node: &nodes::Model,
    ident: &str,
    entry: &Entry,
) -> Result<()> {
    let authority = authority_on(caller, policy, node, ident)?;
    may_release(caller, policy, &authority, node, std::slice::from_ref(entry))
}

/// What `DELETE /v1/nodes/{node}/maintenance` (release everything, all or
/// nothing) decides about the node's active `entries`: 404 as above, 403
/// from the node rule, or one 403 naming every entry that may not go.
pub fn bulk_release_decision(
    caller: &Caller,
    policy: &Policy,
    node: &nodes::Model,
    ident: &str,
    entries: &[Entry],
) -> Result<()> {
    let authority = authority_on(caller, policy, node, ident)?;
    may_release_all(caller, policy, &authority, node, entries)
}

/// Everything a planner decides from.
pub struct Context<'a> {
    pub caller: &'a Caller,
    pub policy: &'a Policy,
    pub authority: Authority,
    pub held: Snapshot<'a>,
    /// The node as the caller named it, for messages.
    pub ident: &'a str,
    pub now: NaiveDateTime,
    /// The uuid a new entry or window gets.
    pub new_uuid: String,
}

impl<'a> Context<'a> {
    /// A caller's change: 404 unless the caller may see the node.
    pub fn new(
        caller: &'a Caller,
        policy: &'a Policy,
        held: Snapshot<'a>,
        ident: &'a str,
        now: NaiveDateTime,
        new_uuid: String,
    ) -> Result<Context<'a>> {
        let authority = authority_on(caller, policy, held.node, ident)?;
        Ok(Context { caller, policy, authority, held, ident, now, new_uuid })
    }

    /// A read's context, for an authority already derived (no new uuid).
    pub fn reading(
        caller: &'a Caller,
        policy: &'a Policy,
        authority: Authority,
        held: Snapshot<'a>,
        ident: &'a str,
        now: NaiveDateTime,
    ) -> Context<'a> {
        Context { caller, policy, authority, held, ident, now, new_uuid: String::new() }
    }

    /// The conductor's change (a fault): system scope, no project, no policy.
    pub fn conductor(
        conductor: &'a Caller,
        policy: &'a Policy,
        held: Snapshot<'a>,
        ident: &'a str,
        now: NaiveDateTime,
        new_uuid: String,
    ) -> Context<'a> {
        let authority = Authority { scope: Scope::System, project: String::new() };
        Context { caller: conductor, policy, authority, held, ident, now, new_uuid }
    }

    fn node(&self) -> &'a nodes::Model {
        self.held.node
    }

    fn scope(&self) -> Scope {
        self.authority.scope
    }

    /// A plan for this node with nothing in it yet.
    fn plan(&self) -> Plan {
        Plan { node_id: self.node().id, at: self.now, ..Plan::default() }
    }

    fn event(&self, kind: EventKind, entry: &Entry, note: Option<&str>) -> MaintenanceEvent {
        MaintenanceEvent::new(kind, entry, self.caller, note, self.now)
    }

    /// `plan` with the node's columns as its entries will be after it.
    fn syncing(&self, mut plan: Plan) -> Plan {
        let gone = |e: &Entry| plan.delete.iter().chain(&plan.update).any(|d| d.id == e.id);
        let mut after: Vec<Entry> = self.held.entries.iter().filter(|e| !gone(e)).cloned().collect();
        after.extend(plan.update.iter().cloned());
        // A new entry's id is larger than any the node has (the key
        // increases), which is how the reason orders entries asserted in
        // the same second.
        after.extend(plan.insert.iter().map(|e| Entry { id: i32::MAX, ..e.clone() }));
        plan.node = Some(NodeWrite {
            maintenance: !after.is_empty(),
            reason: maintenance_reason_column(&after),
            fault: fault_column(self.held.entries, &after),
        });
        plan
    }

    /// Per entry, `None` when the caller may release it, else the 403 text:
    /// the per-entry remove policy, then the release floors.
    pub fn release_refusals(&self, entries: &[Entry]) -> Vec<Option<String>> {
        release::release_plan(&self.authority, entries, rules::MAINTENANCE_REMOVE, |e| {
            self.policy.enforce(rules::MAINTENANCE_REMOVE, self.caller, &policy::entry_target(self.node(), e))
        })
    }

    /// 403 unless the caller may release every one of `entries`, naming every blocker.
    fn may_release(&self, entries: &[Entry]) -> Result<()> {
        may_release(self.caller, self.policy, &self.authority, self.node(), entries)
    }

    fn authorize(&self, rule: &str) -> Result<()> {
        self.policy.authorize(rule, self.caller, &policy::node_target(self.node()))
    }

    /// The caller's identity must fit the entry's columns.
    fn check_caller_identity(&self) -> Result<()> {
        entry::check_identity("User id", &self.caller.user_id)?;
        entry::check_identity("Project id", self.caller.project_or_empty())
    }

    fn view(&self, entry: &Entry) -> EntryView {
        EntryView::for_caller(entry, self.scope()).on_node(self.node())
    }

    fn window_view(&self, window: &Window) -> EntryView {
        EntryView::scheduled(window, self.scope()).on_node(self.node())
    }

    /// A new entry of `ty` asserted now by the caller at its scope.
    fn new_entry(
        &self,
        ty: &str,
        reason: Option<String>,
        extra: Option<String>,
        ends_at: Option<NaiveDateTime>,
    ) -> Entry {
        Entry {
            id: 0,
            uuid: self.new_uuid.clone(),
            node_id: self.node().id,
            entry_type: ty.to_owned(),
            reason,
            scope: self.scope().as_str().to_owned(),
            asserted_by: self.caller.user_id.clone(),
            asserted_by_project: self.authority.project.clone(),
            asserted_at: self.now,
            extra,
            version: Some("1.0".to_owned()),
            created_at: Some(self.now),
            updated_at: None,
            ends_at,
        }
    }

    /// Adds a typed entry at the caller's scope; with `ends_at`, a window,
    /// scheduled when `starts_at` is later than now.
    pub fn add(&self, request: &NewEntry) -> Result<(Plan, EntryView)> {
        self.authorize(rules::MAINTENANCE_ADD)?;
        let ty = entry::typed_api_type(&request.entry_type)?;
        entry::check_reason(request.reason.as_deref())?;
        let times = window_times(request, self.now)?;
        let extra = entry::check_extra(request.extra.as_ref())?;
        self.check_caller_identity()?;
        let key = Key { ty: ty.name, scope: self.scope(), project: &self.authority.project };
        let ends_at = times.map(|t| t.ends_at);
        if let Some(times) = times
            && let Some(start) = times.scheduled_start
        {
            self.refuse_overlap(&key, start, ends_at, None)?;
            let window = Window {
                id: 0,
                uuid: self.new_uuid.clone(),
                node_id: self.node().id,
                entry_type: ty.name.to_owned(),
                reason: request.reason.clone(),
                scope: self.scope().as_str().to_owned(),
                asserted_by: self.caller.user_id.clone(),
                asserted_by_project: self.authority.project.clone(),
                starts_at: start,
                ends_at: times.ends_at,
                extra,
                version: Some("1.0".to_owned()),
                created_at: Some(self.now),
                updated_at: None,
            };
            let note = format!("starts {}", iso8601(start));
            let mut plan = self.plan();
            plan.events.push(self.event(EventKind::Scheduled, &window.as_entry(self.now), Some(&note)));
            let view = self.window_view(&window);
            plan.windows.push(WindowWrite::Insert(Box::new(window)));
            return Ok((plan, view));
        }
        self.refuse_duplicate(ty.name)?;
        self.refuse_overlap(&key, self.now, ends_at, None)?;
        let created = self.new_entry(ty.name, request.reason.clone(), extra, ends_at);
        let mut plan = self.plan();
        plan.events.push(self.event(EventKind::Asserted, &created, None));
        let view = self.view(&created);
        plan.insert.push(created);
        Ok((self.syncing(plan), view))
    }

    /// Releases the active entry `uuid`; a scheduled window by that uuid is
    /// cancelled when `cancels` (1.117's DELETE), else not found (1.116).
    pub fn release(&self, uuid: &str, cancels: bool) -> Result<(Plan, EntryView)> {
        let Some(entry) = self.held.entries.iter().find(|e| e.uuid == uuid) else {
            if cancels {
                return self.cancel_scheduled(uuid);
            }
            return Err(Rejected::EntryNotFound { uuid: uuid.to_owned(), node: self.ident.to_owned() });
        };
        self.may_release(std::slice::from_ref(entry))?;
        let mut plan = self.plan();
        plan.events.push(self.event(EventKind::Released, entry, None));
        plan.delete.push(entry.clone());
        Ok((self.syncing(plan), EntryView::for_caller(entry, self.scope())))
    }

    /// Releases every active entry, all or nothing (`DELETE
    /// /v1/nodes/{node}/maintenance`, the boolean unset).
    pub fn release_all(&self) -> Result<(Plan, Vec<EntryView>)> {
        let entries = self.held.entries;
        may_release_all(self.caller, self.policy, &self.authority, self.node(), entries)?;
        let mut plan = self.plan();
        plan.events = entries.iter().map(|e| self.event(EventKind::Released, e, None)).collect();
        plan.delete = entries.to_vec();
        plan.legacy_call = true;
        let views = entries.iter().map(|e| EntryView::for_caller(e, self.scope())).collect();
        Ok((self.syncing(plan), views))
    }

    /// What [`Context::release_all`] would decide, entry by entry: each as
    /// the caller sees it, with why it may not go. 403 when the node-level
    /// rule refuses the caller outright, as the release would.
    pub fn release_all_preview(&self) -> Result<Vec<(EntryView, Option<String>)>> {
        self.authorize(rules::CLEAR_MAINTENANCE)?;
        let entries = self.held.entries;
        let refusals = self.release_refusals(entries);
        Ok(entries.iter().map(|e| EntryView::for_caller(e, self.scope())).zip(refusals).collect())
    }

    /// The boolean PUT: the node's single legacy entry, created, or its
    /// reason updated without re-stamping its asserter or scope.
    pub fn legacy_set(&self, reason: Option<String>) -> Result<(Plan, EntryView)> {
        self.authorize(rules::SET_MAINTENANCE)?;
        entry::check_reason(reason.as_deref())?;
        self.check_caller_identity()?;
        let (mut plan, entry) = self.assert_single(LEGACY, reason, None);
        plan.legacy_call = true;
        Ok((plan, entry))
    }

    /// The conductor asserts a fault (kind in `extra`); a re-assert updates
    /// the node's one fault entry in place.
    pub fn fault_assert(&self, kind: &str, reason: Option<String>) -> Result<(Plan, EntryView)> {
        entry::check_reason(reason.as_deref())?;
        let extra = Some(serde_json::json!({ "kind": kind }).to_string());
        Ok(self.assert_single(FAULT, reason, extra))
    }

    /// The conductor clears the node's fault; `None` when there is none.
    pub fn fault_clear(&self) -> Result<(Plan, Option<EntryView>)> {
        let Some(fault) = self.held.entries.iter().find(|e| e.entry_type == FAULT) else {
            return Ok((self.plan(), None));
        };
        let mut plan = self.plan();
        plan.events.push(self.event(EventKind::Released, fault, None));
        plan.delete.push(fault.clone());
        Ok((self.syncing(plan), Some(EntryView::for_caller(fault, Scope::System))))
    }

    /// The node's one entry of a one-per-node type (`legacy`, `fault`):
    /// its reason (and `extra` when given) updated, keeping its asserter
    /// and scope, or the entry inserted; one event either way.
    fn assert_single(&self, ty: &str, reason: Option<String>, extra: Option<String>) -> (Plan, EntryView) {
        let mut plan = self.plan();
        let entry = match self.held.entries.iter().find(|e| e.entry_type == ty) {
            Some(existing) => {
                let mut updated = existing.clone();
                updated.reason = reason;
                if extra.is_some() {
                    updated.extra = extra;
                }
                updated.updated_at = Some(self.now);
                plan.events.push(self.event(EventKind::Updated, &updated, None));
                plan.update.push(updated.clone());
                updated
            }
            None => {
                let created = self.new_entry(ty, reason, extra, None);
                plan.events.push(self.event(EventKind::Asserted, &created, None));
                plan.insert.push(created.clone());
                created
            }
        };
        (self.syncing(plan), EntryView::for_caller(&entry, self.scope()))
    }

    /// Moves a window's end later (active or scheduled). Earlier, or in
    /// the past, is 400; an entry without an end is not a window (400).
    pub fn extend(&self, uuid: &str, ends_at: NaiveDateTime) -> Result<(Plan, EntryView)> {
        let active = self.held.entries.iter().find(|e| e.uuid == uuid);
        let scheduled = self.held.scheduled.iter().find(|w| w.uuid == uuid);
        let (as_entry, start) = match (active, scheduled) {
            (Some(e), _) => (e.clone(), e.asserted_at),
            (None, Some(w)) => (w.as_pending_entry(), w.starts_at),
            (None, None) => return Err(Rejected::EntryNotFound { uuid: uuid.to_owned(), node: self.ident.to_owned() }),
        };
        self.may_release(std::slice::from_ref(&as_entry))?;
        let Some(current) = as_entry.ends_at else {
            return Err(Rejected::NotAWindow { uuid: uuid.to_owned() });
        };
        window::check_extension(current, ends_at, self.now)?;
        let key = Key {
            ty: &as_entry.entry_type,
            scope: release::entry_scope(&as_entry),
            project: &as_entry.asserted_by_project,
        };
        self.refuse_overlap(&key, start, Some(ends_at), Some(uuid))?;
        let note = format!("end moved from {}", iso8601(current));
        let mut plan = self.plan();
        let view = match (active, scheduled) {
            (Some(e), _) => {
                let mut e = e.clone();
                e.ends_at = Some(ends_at);
                e.updated_at = Some(self.now);
                plan.events.push(self.event(EventKind::Extended, &e, Some(&note)));
                plan.update.push(e.clone());
                self.view(&e)
            }
            (None, Some(w)) => {
                let mut w = w.clone();
                w.ends_at = ends_at;
                w.updated_at = Some(self.now);
                plan.events.push(self.event(EventKind::Extended, &w.as_pending_entry(), Some(&note)));
                plan.windows.push(WindowWrite::SetEnd { id: w.id, ends_at, at: self.now });
                self.window_view(&w)
            }
            (None, None) => unreachable!("found above"),
        };
        // An active window's end is not in the node's columns: they stay.
        Ok((plan, view))
    }

    /// Removes a window that has not started. An active entry is 409: end
    /// it by releasing it.
    pub fn cancel(&self, uuid: &str) -> Result<(Plan, EntryView)> {
        if self.held.entries.iter().any(|e| e.uuid == uuid) {
            let ident = self.ident;
            return Err(Rejected::CancelActive { uuid: uuid.to_owned(), node: ident.to_owned() });
        }
        self.cancel_scheduled(uuid)
    }

    fn cancel_scheduled(&self, uuid: &str) -> Result<(Plan, EntryView)> {
        let window = self
            .held
            .scheduled
            .iter()
            .find(|w| w.uuid == uuid)
            .ok_or_else(|| Rejected::EntryNotFound { uuid: uuid.to_owned(), node: self.ident.to_owned() })?;
        let pending = window.as_pending_entry();
        self.may_release(std::slice::from_ref(&pending))?;
        let note = format!("was to start {}", iso8601(window.starts_at));
        let mut plan = self.plan();
        plan.events.push(self.event(EventKind::Cancelled, &pending, Some(&note)));
        plan.windows.push(WindowWrite::Delete(window.id));
        Ok((plan, EntryView::scheduled(window, self.scope())))
    }

    /// 409 when an entry of this type is already active at the caller's
    /// scope and project.
    fn refuse_duplicate(&self, ty: &str) -> Result<()> {
        let (scope, project) = (self.scope(), self.authority.project.as_str());
        if let Some(existing) = self
            .held
            .entries
            .iter()
            .find(|e| e.entry_type == ty && e.scope == scope.as_str() && e.asserted_by_project == project)
        {
            return Err(Rejected::Duplicate {
                uuid: existing.uuid.clone(),
                ty: ty.to_owned(),
                scope,
                project: project.to_owned(),
                node: self.ident.to_owned(),
            });
        }
        Ok(())
    }

    /// 409 when a window `[start, end)` of `key` would overlap another of
    /// the same key on the node (`except`: the window being changed). Two
    /// windows of one (type, scope, project) never overlap, so a window
    /// that comes due never finds its key held (the tick still checks).
    fn refuse_overlap(
        &self,
        key: &Key<'_>,
        start: NaiveDateTime,
        end: Option<NaiveDateTime>,
        except: Option<&str>,
    ) -> Result<()> {
        let holder = |uuid: &str, starts_at, ends_at| {
            Box::new(Holder {
                uuid: uuid.to_owned(),
                ty: key.ty.to_owned(),
                scope: key.scope,
                project: key.project.to_owned(),
                node: self.ident.to_owned(),
                starts_at,
                ends_at,
            })
        };
        let other = |uuid: &str| except != Some(uuid);
        if let Some(active) = self.held.entries.iter().find(|e| {
            other(&e.uuid)
                && key.matches(&e.entry_type, &e.scope, &e.asserted_by_project)
                && window::overlaps(e.asserted_at, e.ends_at, start, end)
        }) {
            return Err(Rejected::OverlapsActive(holder(&active.uuid, active.asserted_at, active.ends_at)));
        }
        if let Some(planned) = self.held.scheduled.iter().find(|w| {
            other(&w.uuid)
                && key.matches(&w.entry_type, &w.scope, &w.asserted_by_project)
                && window::overlaps(w.starts_at, Some(w.ends_at), start, end)
        }) {
            return Err(Rejected::OverlapsScheduled(holder(&planned.uuid, planned.starts_at, Some(planned.ends_at))));
        }
        Ok(())
    }
}

/// What two windows must not share while they overlap.
struct Key<'a> {
    ty: &'a str,
    scope: Scope,
    project: &'a str,
}

impl Key<'_> {
    fn matches(&self, ty: &str, scope: &str, project: &str) -> bool {
        self.ty == ty && self.scope.as_str() == scope && self.project == project
    }
}

/// The window rules for `request`'s times; `None` for an entry without an end.
fn window_times(request: &NewEntry, now: NaiveDateTime) -> Result<Option<Times>> {
    match (request.starts_at, request.ends_at) {
        (None, None) => Ok(None),
        (Some(_), None) => Err(Rejected::StartWithoutEnd),
        (start, Some(end)) => window::check(request.reason.as_deref(), start, end, now).map(Some),
    }
}

#[cfg(test)]
mod tests {
    //! Plans are values: each is checked here without a database (the
    //! integration tests check that the applier writes what they say).
    use super::*;
    use crate::authority::event::tests::at;
    use crate::authority::release::tests::entry;
    use nodemaint_entity::vocab::{HARDWARE_FAILURE, OPERATOR_HOLD};

    fn node(owner: Option<&str>) -> nodes::Model {
        nodes::Model {
            id: 7,
            uuid: Some("n-uuid".into()),
            name: Some("myNode".into()),
            owner: owner.map(str::to_owned),
            lessee: None,
            maintenance: Some(false),
            maintenance_reason: None,
            fault: None,
            reservation: None,
            version: None,
            created_at: None,
            updated_at: None,
        }
    }

    fn context<'a>(caller: &'a Caller, policy: &'a Policy, held: Snapshot<'a>) -> Result<Context<'a>> {
        Context::new(caller, policy, held, "myNode", at("2026-12-05T10:00:00"), "0000-new".into())
    }

    #[test]
    fn an_assert_plans_one_insert_the_boolean_the_reason_and_one_event() {
        let (policy, node) = (Policy::defaults(), node(Some("own")));
        let mut held = entry(OPERATOR_HOLD, "system", "");
        held.reason = Some("rack".into());
        let entries = [held];
        let caller = Caller::project("alice", "own", &["member"]);
        let ctx = context(&caller, &policy, Snapshot { node: &node, entries: &entries, scheduled: &[] }).unwrap();
        let request =
            NewEntry { entry_type: HARDWARE_FAILURE.into(), reason: Some("PSU".into()), ..NewEntry::default() };
        let (plan, view) = ctx.add(&request).unwrap();
        assert_eq!(plan.insert.len(), 1);
        assert!(plan.update.is_empty() && plan.delete.is_empty() && plan.windows.is_empty());
        let created = &plan.insert[0];
        assert_eq!(
            (created.uuid.as_str(), created.scope.as_str(), created.asserted_by_project.as_str()),
            ("0000-new", "owner", "own")
        );
        assert_eq!(
            plan.node,
            Some(NodeWrite {
                maintenance: true,
                reason: Some("operator_hold: rack; hardware_failure: PSU".into()),
                fault: None
            })
        );
        assert_eq!(plan.events, vec![MaintenanceEvent::new(EventKind::Asserted, created, &caller, None, ctx.now)]);
        assert_eq!(view.uuid, "0000-new");
        assert_eq!(view.asserted_by, "alice");
    }

    #[test]
    fn a_refused_release_plans_nothing_and_names_the_floor() {
        let (policy, node) = (Policy::defaults(), node(Some("own")));
        let entries = [entry(HARDWARE_FAILURE, "system", "")];
        let caller = Caller::project("alice", "own", &["admin"]);
        let ctx = context(&caller, &policy, Snapshot { node: &node, entries: &entries, scheduled: &[] }).unwrap();
        let refused = ctx.release_all().unwrap_err();
        assert_eq!(refused.http_status(), 403);
        assert!(refused.to_string().contains("not permitted at owner scope"), "{refused}");
        let system = Caller::system("op", &["admin"]);
        let ctx = context(&system, &policy, Snapshot { node: &node, entries: &entries, scheduled: &[] }).unwrap();
        let (plan, views) = ctx.release_all().unwrap();
        assert_eq!(plan.delete, entries.to_vec());
        assert_eq!(plan.node, Some(NodeWrite { maintenance: false, reason: None, fault: Some(None) }));
        assert_eq!(plan.events.iter().map(|e| e.kind).collect::<Vec<_>>(), vec![EventKind::Released]);
        assert_eq!(views.len(), 1);
    }

    #[test]
    fn a_caller_outside_the_nodes_scopes_is_not_told_it_exists() {
        let (policy, node) = (Policy::defaults(), node(Some("own")));
        let stranger = Caller::project("eve", "other", &["admin"]);
        let e = context(&stranger, &policy, Snapshot { node: &node, entries: &[], scheduled: &[] }).err().unwrap();
        assert_eq!(e.http_status(), 404);
    }

    #[test]
    fn a_legacy_set_on_a_held_legacy_entry_updates_it_in_place() {
        let (policy, node) = (Policy::defaults(), node(None));
        let mut legacy = entry(LEGACY, "system", "");
        legacy.reason = Some("old".into());
        let entries = [legacy.clone()];
        let system = Caller::system("op", &["admin"]);
        let ctx = context(&system, &policy, Snapshot { node: &node, entries: &entries, scheduled: &[] }).unwrap();
        let (plan, _) = ctx.legacy_set(Some("new".into())).unwrap();
        assert!(plan.insert.is_empty());
        assert_eq!(plan.update.len(), 1);
        assert_eq!((plan.update[0].id, plan.update[0].reason.as_deref()), (legacy.id, Some("new")));
        assert_eq!(plan.update[0].asserted_by, legacy.asserted_by, "the asserter is not re-stamped");
        assert_eq!(plan.node.unwrap().reason.as_deref(), Some("new"), "a lone legacy entry's reason verbatim");
        assert_eq!(plan.events[0].kind, EventKind::Updated);
    }

    #[test]
    fn a_window_in_the_future_is_scheduled_and_leaves_the_node_alone() {
        let (policy, node) = (Policy::defaults(), node(None));
        let system = Caller::system("op", &["admin"]);
        let ctx = context(&system, &policy, Snapshot { node: &node, entries: &[], scheduled: &[] }).unwrap();
        let request = NewEntry {
            entry_type: OPERATOR_HOLD.into(),
            reason: Some("rack C".into()),
            starts_at: Some(at("2026-12-05T22:00:00")),
            ends_at: Some(at("2026-12-06T02:00:00")),
            ..NewEntry::default()
        };
        let (plan, view) = ctx.add(&request).unwrap();
        assert!(plan.insert.is_empty() && plan.node.is_none());
        assert!(matches!(&plan.windows[..], [WindowWrite::Insert(w)] if w.uuid == "0000-new"));
        assert_eq!(plan.events[0].kind, EventKind::Scheduled);
        assert_eq!(plan.events[0].note.as_deref(), Some("starts 2026-12-05T22:00:00+00:00"));
        assert_eq!(view.state, crate::authority::window::WindowState::Scheduled);
    }
}
