//! oslo.upgradecheck's two outputs, byte for byte, so tools written for
//! `*-status upgrade check` read ours unchanged:
//!
//! - a prettytable with one left-aligned column titled `Upgrade Check
//!   Results`, a rule between every row, each check one cell of three lines;
//!   the details wrapped by `textwrap.wrap(details, 60, subsequent_indent='  ')`;
//! - `--json`: `json.dumps({"name": …, "checks": [{"check", "result", "details"}]})`,
//!   with Python's separators and ASCII escapes.

use crate::framework::Report;
use nodemaint_runtime::py_json::py_json;

pub const TITLE: &str = "Upgrade Check Results";
const WRAP: usize = 60;
const INDENT: &str = "  ";

/// Python's `textwrap.wrap(text, 60, subsequent_indent='  ')`: greedy fill
/// on whitespace, over-long words broken.
pub fn wrap(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    let mut words: std::collections::VecDeque<String> = text.split_whitespace().map(str::to_owned).collect();
    while let Some(word) = words.pop_front() {
        let indent = if lines.is_empty() { "" } else { INDENT };
        let room = WRAP - indent.chars().count();
        let used = line.chars().count();
        let need = if used == 0 { word.chars().count() } else { used + 1 + word.chars().count() };
        if need <= room {
            if used > 0 {
                line.push(' ');
            }
            line.push_str(&word);
        } else if used == 0 {
            // A word longer than the line: break it, as textwrap does.
            let head: String = word.chars().take(room).collect();
            let tail: String = word.chars().skip(room).collect();
            lines.push(format!("{indent}{head}"));
            if !tail.is_empty() {
                words.push_front(tail);
            }
        } else {
            lines.push(format!("{indent}{line}"));
            line.clear();
            words.push_front(word);
        }
    }
    if !line.is_empty() {
        let indent = if lines.is_empty() { "" } else { INDENT };
        lines.push(format!("{indent}{line}"));
    }
    lines
}

/// The table `upgrade check` prints.
pub fn table(report: &Report) -> String {
    let cells: Vec<Vec<String>> = report
        .results
        .iter()
        .map(|(name, result)| {
            let details = match &result.details {
                Some(d) => wrap(d).join("\n"),
                None => "None".to_owned(),
            };
            format!("Check: {name}\nResult: {}\nDetails: {details}", result.code.label())
                .lines()
                .map(str::to_owned)
                .collect()
        })
        .collect();
    let width = cells.iter().flatten().map(|l| l.chars().count()).chain([TITLE.len()]).max().unwrap_or(0);
    let rule = format!("+{}+", "-".repeat(width + 2));
    let row = |text: &str| format!("| {text}{} |", " ".repeat(width - text.chars().count()));
    let mut out = vec![rule.clone(), row(TITLE), rule.clone()];
    for cell in &cells {
        out.extend(cell.iter().map(|l| row(l)));
        out.push(rule.clone());
    }
    out.join("\n")
}

/// The `--json` output.
pub fn json(report: &Report) -> String {
    let checks: Vec<serde_json::Value> = report
        .results
        .iter()
        .map(|(name, r)| serde_json::json!({"check": name, "result": r.code as u8, "details": r.details}))
        .collect();
    py_json(&serde_json::json!({"name": TITLE, "checks": checks}))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framework::CheckResult;

    fn report() -> Report {
        Report {
            results: vec![
                ("Cells v2".into(), CheckResult::success(None)),
                (
                    "Placement API".into(),
                    CheckResult::failure("There is no placement-api endpoint in the service catalog."),
                ),
                (
                    "Release pin".into(),
                    CheckResult::warning(
                        "The release is pinned to 2025.2: services of the old release may still write \
                         nodes.maintenance directly; run nodemaint reconcile once the pin is lifted.",
                    ),
                ),
            ],
        }
    }

    /// Printed by oslo.upgradecheck's own `UpgradeCommands.check()` for the same three results.
    const OSLO_TABLE: &str = "\
+-----------------------------------------------------------------------+
| Upgrade Check Results                                                 |
+-----------------------------------------------------------------------+
| Check: Cells v2                                                       |
| Result: Success                                                       |
| Details: None                                                         |
+-----------------------------------------------------------------------+
| Check: Placement API                                                  |
| Result: Failure                                                       |
| Details: There is no placement-api endpoint in the service catalog.   |
+-----------------------------------------------------------------------+
| Check: Release pin                                                    |
| Result: Warning                                                       |
| Details: The release is pinned to 2025.2: services of the old release |
|   may still write nodes.maintenance directly; run nodemaint           |
|   reconcile once the pin is lifted.                                   |
+-----------------------------------------------------------------------+";

    #[test]
    fn the_table_is_oslos_byte_for_byte() {
        assert_eq!(table(&report()), OSLO_TABLE);
    }

    #[test]
    fn details_wrap_at_60_with_a_two_space_indent() {
        let text = "The release is pinned to 2025.2: services of the old release may still write nodes.maintenance directly; run nodemaint reconcile once the pin is lifted.";
        let lines = wrap(text);
        assert_eq!(
            lines,
            vec![
                "The release is pinned to 2025.2: services of the old release",
                "  may still write nodes.maintenance directly; run nodemaint",
                "  reconcile once the pin is lifted.",
            ]
        );
        assert!(lines.iter().all(|l| l.chars().count() <= 60));
        let long = wrap(&"x".repeat(130));
        assert_eq!(long.iter().map(|l| l.len()).collect::<Vec<_>>(), [60, 60, 14]);
    }

    #[test]
    fn json_is_pythons_json_dumps() {
        let r = Report {
            results: vec![
                ("Cells v2".into(), CheckResult::success(None)),
                ("Ünïcode \"q\"".into(), CheckResult::warning("tab\there")),
            ],
        };
        // json.dumps({"name": "Upgrade Check Results", "checks": [...]}) in Python gives exactly:
        assert_eq!(
            json(&r),
            r#"{"name": "Upgrade Check Results", "checks": [{"check": "Cells v2", "result": 0, "details": null}, {"check": "\u00dcn\u00efcode \"q\"", "result": 1, "details": "tab\there"}]}"#
        );
    }
}
