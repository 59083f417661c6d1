//! The estate listing (`windows list`, `GET /v1/maintenance`): every active
//! window (an entry with an end), then every scheduled one, then (when
//! asked) the windows that ended, read from node history — on the nodes the
//! caller may see, masked as everywhere. Each part is walked by id; a
//! marker (`state:id`) continues after a row of any part.

use super::Maintenance;
use crate::authority::caller::Caller;
use crate::authority::entry::EntryView;
use crate::authority::event::EventKind;
use crate::authority::masking;
use crate::authority::policy::{self, Policy, defaults as rules};
use crate::authority::scope::derive_scope;
use crate::authority::window::WindowState;
use crate::error::{Error, Result};
use crate::store::estate::{self as store_estate, Page};
use crate::store::history;
use chrono::NaiveDateTime;
use nodemaint_entity::vocab::iso8601;
use nodemaint_entity::{Scope, node_maintenance_event, nodes};

/// Which windows the estate listing returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WindowQuery {
    /// Which parts to walk; empty means active and scheduled.
    pub states: Vec<WindowState>,
    /// Ended windows: only those that ended at or after this time.
    pub since: Option<NaiveDateTime>,
    /// At most this many rows.
    pub limit: u64,
    /// Only rows after this one (the `marker` of the last row of a page).
    pub marker: Option<String>,
}

/// One row: a window with its node, or (`ended`) the event that ended it.
#[derive(Debug, Clone, serde::Serialize, PartialEq)]
pub struct WindowRow {
    pub node_uuid: Option<String>,
    pub node_name: Option<String>,
    /// What to pass as `marker` for the page after this row.
    pub marker: String,
    #[serde(flatten)]
    pub window: WindowDetail,
}

#[derive(Debug, Clone, serde::Serialize, PartialEq)]
#[serde(untagged)]
pub enum WindowDetail {
    Entry(Box<EntryView>),
    Ended(Box<EndedWindow>),
}

/// A window that ended, from the typed event that ended it, masked as the
/// entry and the event are everywhere.
#[derive(Debug, Clone, serde::Serialize, PartialEq)]
pub struct EndedWindow {
    /// Always `ended`.
    pub state: WindowState,
    pub uuid: String,
    #[serde(rename = "type")]
    pub entry_type: String,
    pub scope: String,
    pub reason: Option<String>,
    /// The asserter, or [`crate::authority::masking::MASK`]; `null` when
    /// not known (an event recorded before typed events).
    pub asserted_by: Option<String>,
    pub asserted_by_project: Option<String>,
    /// The planned end (`null` when not known: a window that ended before
    /// typed events, whose text is not read).
    pub ends_at: Option<String>,
    /// When it ended.
    pub ended_at: String,
    /// How: `expired`, `cancelled` (or did not start), `released` early.
    pub ended_by: &'static str,
    /// Who ended it, and its project.
    pub user: Option<String>,
    pub project: Option<String>,
    /// The event's history text, as this caller may see it.
    pub event: Option<String>,
}

/// Who is looking, and what of a node that tells.
struct Viewer<'a> {
    caller: &'a Caller,
    policy: &'a Policy,
    /// `None` for a system caller, who sees every node.
    project: Option<String>,
}

impl Viewer<'_> {
    /// A page of a part, on the nodes this viewer's project may see.
    fn page(&self, after: i32, limit: u64) -> Page<'_> {
        Page { after, limit, project: self.project.as_deref() }
    }

    /// The caller's scope on `node`, when it may read the node's maintenance.
    fn scope_on(&self, node: &nodes::Model) -> Option<Scope> {
        let scope =
            derive_scope(self.caller, node.owner.as_deref(), node.lessee.as_deref(), self.policy.enforce_scope)?;
        self.policy.enforce(rules::MAINTENANCE_GET, self.caller, &policy::node_target(node)).then_some(scope)
    }
}

/// What one read of a part gave: the rows the caller may see, the last id
/// read, and whether the read was full (so the part may go on).
struct Read {
    rows: Vec<WindowRow>,
    last: Option<i32>,
    full: bool,
}

fn row(node: &nodes::Model, marker: String, window: WindowDetail) -> WindowRow {
    WindowRow { node_uuid: node.uuid.clone(), node_name: node.name.clone(), marker, window }
}

/// `(part, id)` of a marker; `(0, 0)` without one.
fn parse_marker(marker: Option<&str>) -> Result<(usize, i32)> {
    let Some(marker) = marker else { return Ok((0, 0)) };
    let bad = || Error::BadRequest(format!("Marker '{marker}' is not one this listing returned (e.g. active:42)"));
    let (state, id) = marker.split_once(':').ok_or_else(bad)?;
    let state: WindowState = state.parse().map_err(|_| bad())?;
    // The listing walks the states in `ALL`'s order: a marker resumes in its state's part.
    let part = WindowState::ALL.iter().position(|s| *s == state).ok_or_else(bad)?;
    Ok((part, id.parse().map_err(|_| bad())?))
}

impl Maintenance {
    /// The estate listing (see the module docs). Rows the caller may not
    /// see are skipped in the database where the node's owner and lessee
    /// decide, else by policy here, reading on until the page is full.
    pub async fn windows(&self, caller: &Caller, query: &WindowQuery) -> Result<Vec<WindowRow>> {
        self.policy.authorize(rules::NODE_LIST, caller, &policy::empty_target())?;
        let wanted = match query.states.is_empty() {
            true => &[WindowState::Active, WindowState::Scheduled][..],
            false => &query.states[..],
        };
        let (start_part, start_after) = parse_marker(query.marker.as_deref())?;
        let system = derive_scope(caller, None, None, self.policy.enforce_scope) == Some(Scope::System);
        let project = caller.project_id.clone().filter(|p| !p.is_empty());
        if !system && project.is_none() {
            return Ok(Vec::new());
        }
        let viewer = Viewer { caller, policy: &self.policy, project: if system { None } else { project } };
        let mut rows = Vec::new();
        for (part, state) in WindowState::ALL.iter().enumerate().skip(start_part) {
            if !wanted.contains(state) {
                continue;
            }
            let mut after = if part == start_part { start_after } else { 0 };
            loop {
                let want = query.limit.saturating_sub(rows.len() as u64);
                if want == 0 {
                    return Ok(rows);
                }
                let read = match state {
                    WindowState::Active => self.active_windows(&viewer, after, want).await?,
                    WindowState::Scheduled => self.scheduled_windows(&viewer, after, want).await?,
                    WindowState::Ended => self.ended_windows(&viewer, after, want, query.since).await?,
                };
                rows.extend(read.rows);
                match read.last {
                    Some(last) if read.full => after = last,
                    _ => break,
                }
            }
        }
        Ok(rows)
    }

    async fn active_windows(&self, viewer: &Viewer<'_>, after: i32, limit: u64) -> Result<Read> {
        let found = store_estate::active(&self.db, viewer.page(after, limit)).await?;
        let (last, full) = (found.last().map(|(e, _)| e.id), found.len() as u64 == limit);
        let rows = found
            .into_iter()
            .filter_map(|(entry, node)| {
                let scope = viewer.scope_on(&node)?;
                let view = EntryView::for_caller(&entry, scope).on_node(&node);
                Some(row(&node, format!("active:{}", entry.id), WindowDetail::Entry(Box::new(view))))
            })
            .collect();
        Ok(Read { rows, last, full })
    }

    async fn scheduled_windows(&self, viewer: &Viewer<'_>, after: i32, limit: u64) -> Result<Read> {
        let found = store_estate::scheduled(&self.db, viewer.page(after, limit)).await?;
        let (last, full) = (found.last().map(|(w, _)| w.id), found.len() as u64 == limit);
        let rows = found
            .into_iter()
            .filter_map(|(window, node)| {
                let scope = viewer.scope_on(&node)?;
                let view = EntryView::scheduled(&window, scope).on_node(&node);
                Some(row(&node, format!("scheduled:{}", window.id), WindowDetail::Entry(Box::new(view))))
            })
            .collect();
        Ok(Read { rows, last, full })
    }

    /// A window ended when it expired, was cancelled, or was released with
    /// an end set: read from the typed events (never from the text), whose
    /// history row still exists (Ironic's retention of history holds here).
    async fn ended_windows(
        &self,
        viewer: &Viewer<'_>,
        after: i32,
        limit: u64,
        since: Option<NaiveDateTime>,
    ) -> Result<Read> {
        let kinds = [EventKind::Expired.as_str(), EventKind::Cancelled.as_str()];
        let found =
            store_estate::ended(&self.db, viewer.page(after, limit), &kinds, EventKind::Released.as_str(), since)
                .await?;
        let (last, full) = (found.last().map(|(e, _, _)| e.id), found.len() as u64 == limit);
        let rows = found
            .into_iter()
            .filter_map(|(event, node, text)| {
                let scope = viewer.scope_on(&node)?;
                let marker = format!("ended:{}", event.id);
                Some(row(&node, marker, WindowDetail::Ended(Box::new(ended_window(&event, text, scope, &node)))))
            })
            .collect();
        Ok(Read { rows, last, full })
    }
}

/// An ended window as a reader at `reader` on `node` sees it.
fn ended_window(
    row: &node_maintenance_event::Model,
    text: Option<String>,
    reader: Scope,
    node: &nodes::Model,
) -> EndedWindow {
    let (hide_asserter, hide_actor) = history::masks_of(row, reader, node.owner.as_deref(), node.lessee.as_deref());
    let hide =
        |value: Option<String>, hidden: bool| if hidden { value.map(|_| masking::MASK.to_owned()) } else { value };
    let empty_as_none = |p: String| (!p.is_empty()).then_some(p);
    let event = history::masked_text(row, hide_asserter, hide_actor).or(text);
    EndedWindow {
        state: WindowState::Ended,
        uuid: row.entry_uuid.clone(),
        entry_type: row.entry_type.clone(),
        scope: row.scope.clone(),
        reason: row.reason.clone(),
        asserted_by: hide(row.asserted_by.clone(), hide_asserter),
        asserted_by_project: match hide_asserter {
            true => Some(masking::MASK.to_owned()),
            false => row.asserted_by_project.clone().and_then(empty_as_none),
        },
        ends_at: row.ends_at.map(iso8601),
        ended_at: iso8601(row.created_at),
        ended_by: EventKind::parse(&row.kind).map_or("released", EventKind::as_str),
        user: hide(Some(row.actor.clone()), hide_actor),
        project: hide(empty_as_none(row.actor_project.clone()), hide_actor),
        event,
    }
}
