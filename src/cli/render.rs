//! How results and errors are shown: ASCII tables for people, JSON on stdout
//! for machines. Errors go to stderr as one line (`error: …`), or to stdout
//! as `{"error": {"status": …, "message": …}}` with `--format json`.

use super::args::Format;
use nodemaint::HistoryView;
use nodemaint::admin::fleet::SeedReport;
use nodemaint::entity::nodes;
use nodemaint::maintenance::{WindowDetail, WindowRow};
use nodemaint::nodes::NodeView;
use nodemaint::reconcile::ReconcileReport;
use nodemaint::schema::{MigrationRow, Removal, UpgradeReport};
use nodemaint::tick::TickReport;
use nodemaint::{EntryView, Error};
use serde::Serialize;
use tabled::builder::Builder;
use tabled::settings::Style;

pub struct Output {
    pub format: Format,
    /// `-q`: confirmations that work was done (applied, reconciled, seeded,
    /// deleted) are left out, since cron mails whatever a job prints; data a
    /// command was asked for, warnings and errors are always shown.
    pub quiet: bool,
}

fn state_text(e: &EntryView) -> String {
    match &e.starts_at {
        Some(start) => format!("{} (starts {start})", e.state),
        None => e.state.to_string(),
    }
}

fn releasable_text(e: &EntryView) -> String {
    match (e.releasable, &e.releasable_reason) {
        (Some(false), Some(why)) => format!("no: {why}"),
        (Some(false), None) => "no".into(),
        (Some(true), _) => "yes".into(),
        (None, _) => String::new(),
    }
}

fn or_none(value: &Option<String>) -> String {
    value.clone().unwrap_or_else(|| "None".to_owned())
}

/// An ASCII table, as OpenStack clients draw them.
pub fn table(header: &[&str], rows: Vec<Vec<String>>) -> String {
    let mut builder = Builder::default();
    builder.push_record(header.iter().map(|h| h.to_string()));
    for row in rows {
        builder.push_record(row);
    }
    builder.build().with(Style::ascii()).to_string()
}

impl Output {
    pub fn new(format: Format, quiet: bool) -> Self {
        Output { format, quiet }
    }

    fn json_mode(&self) -> bool {
        self.format == Format::Json
    }

    /// Whether the result of a change is shown: always as JSON (a machine
    /// asked for it), as a table unless `-q` (nothing on success).
    pub fn confirms(&self) -> bool {
        self.json_mode() || !self.quiet
    }

    fn json<T: Serialize>(&self, value: &T) {
        match serde_json::to_string_pretty(value) {
            Ok(text) => println!("{text}"),
            Err(e) => eprintln!("error: cannot encode the result as JSON: {e}"),
        }
    }

    /// An error, and the exit code it ends the command with. As JSON,
    /// `status` is the HTTP status the API gives the same error, and null
    /// for one only a command meets (configuration, schema, locks).
    pub fn error(&self, e: &Error, exit_code: u8) {
        if self.json_mode() {
            let status = match e {
                Error::Config(_) | Error::Schema(_) | Error::LockTimeout(_) | Error::Privileges(_) => None,
                other => Some(other.http_status()),
            };
            self.json(&serde_json::json!({
                "error": {"status": status, "exit_code": exit_code, "message": e.message()}
            }));
        } else {
            eprintln!("error: {}", e.message());
        }
    }

    pub fn upgrade(&self, report: &UpgradeReport) {
        if self.json_mode() {
            return self.json(report);
        }
        if self.quiet {
            return;
        }
        if report.applied.is_empty() {
            println!("Nothing to apply: the schema is up to date.");
        }
        for name in &report.applied {
            println!("Applied {name}");
        }
        if report.applied.iter().any(|m| m.contains("backfill")) {
            println!(
                "Backfilled {} legacy maintenance entr{}.",
                report.backfilled,
                if report.backfilled == 1 { "y" } else { "ies" }
            );
        }
    }

    pub fn migrations(&self, rows: &[MigrationRow]) {
        if self.json_mode() {
            return self.json(&rows);
        }
        let rows = rows
            .iter()
            .map(|m| {
                vec![
                    m.name.clone(),
                    if m.applied { "applied" } else { "pending" }.to_owned(),
                    m.applied_at.map(|t| t.to_rfc3339()).unwrap_or_default(),
                ]
            })
            .collect();
        println!("{}", table(&["Migration", "Status", "Applied at"], rows));
    }

    pub fn downgrade(&self, rolled_back: &[String], removed: &[Removal]) {
        if self.json_mode() {
            return self.json(&serde_json::json!({ "rolled_back": rolled_back, "removed": removed }));
        }
        if self.quiet {
            return;
        }
        if rolled_back.is_empty() {
            println!("Nothing to roll back.");
        }
        for name in rolled_back {
            println!("Rolled back {name}");
            for removal in removed.iter().filter(|r| &r.migration == name) {
                println!("  {removal}");
            }
        }
    }

    pub fn node(&self, node: &nodes::Model) {
        let view = NodeView::from(node);
        if self.json_mode() {
            return self.json(&view);
        }
        let rows = vec![
            vec!["uuid".into(), or_none(&view.uuid)],
            vec!["name".into(), or_none(&view.name)],
            vec!["owner".into(), or_none(&view.owner)],
            vec!["lessee".into(), or_none(&view.lessee)],
            vec!["maintenance".into(), view.maintenance.to_string()],
            vec!["maintenance_reason".into(), or_none(&view.maintenance_reason)],
            vec!["fault".into(), or_none(&view.fault)],
            vec!["reservation".into(), or_none(&view.reservation)],
            vec!["created_at".into(), or_none(&view.created_at)],
            vec!["updated_at".into(), or_none(&view.updated_at)],
        ];
        println!("{}", table(&["Field", "Value"], rows));
    }

    pub fn nodes(&self, list: &[nodes::Model]) {
        let views: Vec<NodeView> = list.iter().map(NodeView::from).collect();
        if self.json_mode() {
            return self.json(&views);
        }
        let rows = views
            .iter()
            .map(|v| {
                vec![
                    or_none(&v.uuid),
                    or_none(&v.name),
                    or_none(&v.owner),
                    or_none(&v.lessee),
                    v.maintenance.to_string(),
                    or_none(&v.maintenance_reason),
                ]
            })
            .collect();
        println!("{}", table(&["UUID", "Name", "Owner", "Lessee", "Maintenance", "Maintenance reason"], rows));
    }

    /// Entries as the spec's `maintenance list` example shows them.
    pub fn entries(&self, entries: &[EntryView]) {
        if self.json_mode() {
            return self.json(&serde_json::json!({ "maintenance": entries }));
        }
        let rows = entries
            .iter()
            .map(|e| {
                vec![
                    e.uuid.clone(),
                    e.entry_type.clone(),
                    or_none(&e.reason),
                    e.scope.clone(),
                    state_text(e),
                    or_none(&e.ends_at),
                    releasable_text(e),
                ]
            })
            .collect();
        println!("{}", table(&["UUID", "Type", "Reason", "Scope", "State", "Ends", "Releasable by you"], rows));
    }

    /// The estate listing (`windows list`).
    pub fn windows(&self, rows: &[WindowRow]) {
        if self.json_mode() {
            return self.json(&serde_json::json!({ "windows": rows }));
        }
        if rows.is_empty() {
            println!("No windows.");
            return;
        }
        let node = |r: &WindowRow| r.node_name.clone().or_else(|| r.node_uuid.clone()).unwrap_or_default();
        let lines = rows
            .iter()
            .map(|r| match &r.window {
                WindowDetail::Entry(e) => vec![
                    node(r),
                    state_text(e),
                    e.uuid.clone(),
                    e.entry_type.clone(),
                    e.scope.clone(),
                    or_none(&e.ends_at),
                    or_none(&e.reason),
                    r.marker.clone(),
                ],
                WindowDetail::Ended(e) => vec![
                    node(r),
                    format!("ended: {} {}", e.ended_by, e.ended_at),
                    e.uuid.clone(),
                    e.entry_type.clone(),
                    e.scope.clone(),
                    or_none(&e.ends_at),
                    or_none(if e.reason.is_some() { &e.reason } else { &e.event }),
                    r.marker.clone(),
                ],
            })
            .collect();
        println!("{}", table(&["Node", "State", "UUID", "Type", "Scope", "Ends", "Reason / event", "Marker"], lines));
    }

    /// `windows tick`.
    pub fn ticked(&self, report: &TickReport) {
        if self.json_mode() {
            return self.json(report);
        }
        if self.quiet {
            return;
        }
        let verb = if report.dry_run { "Due" } else { "Done" };
        println!("{verb}: {} window(s) ended, {} started.", report.expired, report.started);
        for why in &report.not_started {
            println!("Did not start: {why}");
        }
        if report.remaining > 0 {
            println!("{} more due; run again (without --max-count to finish).", report.remaining);
        }
    }

    pub fn published(&self, report: &nodemaint::publish::PublishReport) {
        if self.json_mode() {
            return self.json(report);
        }
        if self.quiet {
            return;
        }
        println!("Sent {} notification(s); pruned {} sent ones past the retention.", report.sent, report.pruned);
        if report.unsent > 0 {
            println!("{} left unsent; run again (without --max-count to finish).", report.unsent);
        }
    }

    pub fn entry(&self, e: &EntryView) {
        if self.json_mode() {
            return self.json(e);
        }
        let rows = vec![
            vec!["uuid".into(), e.uuid.clone()],
            vec!["type".into(), e.entry_type.clone()],
            vec!["reason".into(), or_none(&e.reason)],
            vec!["scope".into(), e.scope.clone()],
            vec!["asserted_by".into(), e.asserted_by.clone()],
            vec!["asserted_by_project".into(), e.asserted_by_project.clone()],
            vec!["asserted_at".into(), e.asserted_at.clone()],
            vec!["extra".into(), e.extra.to_string()],
            vec!["state".into(), e.state.to_string()],
        ];
        let mut rows = rows;
        if let Some(start) = &e.starts_at {
            rows.push(vec!["starts_at".into(), start.clone()]);
        }
        rows.push(vec!["ends_at".into(), or_none(&e.ends_at)]);
        println!("{}", table(&["Field", "Value"], rows));
    }

    pub fn released(&self, entries: &[EntryView]) {
        if self.json_mode() {
            return self.json(&serde_json::json!({ "released": entries }));
        }
        if self.quiet {
            return;
        }
        if entries.is_empty() {
            println!("No active entries; maintenance is off.");
        }
        for e in entries {
            println!("Released {} ({}, scope {})", e.uuid, e.entry_type, e.scope);
        }
    }

    /// `maintenance remove --all --dry-run`: each entry, and what blocks it.
    pub fn release_plan(&self, plan: &[(EntryView, Option<String>)]) {
        if self.json_mode() {
            let entries: Vec<_> = plan
                .iter()
                .map(
                    |(e, blocked)| serde_json::json!({"entry": e, "releasable": blocked.is_none(), "refusal": blocked}),
                )
                .collect();
            return self.json(&serde_json::json!({ "would_release": entries }));
        }
        if plan.is_empty() {
            println!("No active entries; nothing to release.");
            return;
        }
        let rows = plan
            .iter()
            .map(|(e, blocked)| {
                let verdict = blocked.as_deref().map_or("yes".to_owned(), |why| format!("no: {why}"));
                vec![e.uuid.clone(), e.entry_type.clone(), e.scope.clone(), verdict]
            })
            .collect();
        println!("{}", table(&["UUID", "Type", "Scope", "Releasable by you"], rows));
    }

    pub fn history(&self, events: &[HistoryView]) {
        if self.json_mode() {
            return self.json(&serde_json::json!({ "history": events }));
        }
        let rows = events
            .iter()
            .map(|h| vec![or_none(&h.created_at), or_none(&h.event_type), or_none(&h.user), or_none(&h.event)])
            .collect();
        println!("{}", table(&["Created at", "Event type", "User", "Event"], rows));
    }

    pub fn checks(&self, report: &nodemaint_checks::Report) {
        if self.json_mode() {
            println!("{}", nodemaint_checks::render::json(report));
        } else {
            println!("{}", nodemaint_checks::render::table(report));
        }
    }

    /// nova-manage's online-data-migration summary, one row per drift kind.
    pub fn reconciled(&self, report: &ReconcileReport, pin_source: Option<&str>) {
        if self.json_mode() {
            return self.json(report);
        }
        if !self.quiet {
            let rows = report
                .summary
                .iter()
                .map(|k| vec![k.drift.to_owned(), k.found.to_string(), k.repaired.to_string()])
                .collect();
            println!("{}", table(&["Migration", "Total Needed", "Completed"], rows));
            if report.dry_run {
                for kind in report.summary.iter().filter(|k| !k.examples.is_empty()) {
                    let more = if kind.found > kind.examples.len() as u64 { ", …" } else { "" };
                    println!("{}: {}{more}", kind.drift, kind.examples.join(", "));
                }
            }
        }
        if !report.typed_on_cleared.is_empty() && !report.dry_run {
            let verb = if report.pinned.is_some() {
                "released them (the boolean is canonical while pinned)"
            } else {
                "kept them and set maintenance back on"
            };
            eprintln!(
                "WARNING: typed maintenance entries were found on {} node(s) out of maintenance ({}); {verb}. Something other than nodemaint cleared nodes.maintenance.",
                report.typed_on_cleared.len(),
                report.typed_on_cleared.iter().take(5).cloned().collect::<Vec<_>>().join(", ")
            );
        }
        if self.quiet {
            return;
        }
        let remaining = report.remaining();
        if report.dry_run {
            println!("Dry run: nothing was changed; {remaining} repair(s) to do.");
        } else if remaining > 0 {
            println!("{remaining} repair(s) left to do: run `nodemaint reconcile` again.");
        } else {
            println!("Nothing left to reconcile.");
        }
        if let Some(version) = &report.pinned {
            let by = pin_source.map(|s| format!(" (by {s})")).unwrap_or_default();
            println!(
                "The release is pinned to {version}{by}: the boolean is canonical until the pin lifts. Run `nodemaint reconcile` again once it has."
            );
        }
    }

    pub fn deleted(&self, node: &nodes::Model) {
        if self.json_mode() {
            return self.json(&serde_json::json!({ "deleted": node.uuid }));
        }
        if self.quiet {
            return;
        }
        println!("Deleted node {}", or_none(&node.uuid));
    }

    pub fn seeded(&self, report: &SeedReport) {
        if self.json_mode() {
            return self.json(report);
        }
        if self.quiet {
            return;
        }
        println!(
            "Created {} nodes ({} in maintenance), {} … {}.",
            report.created,
            report.maintained,
            or_none(&report.first_name),
            or_none(&report.last_name)
        );
    }
}
