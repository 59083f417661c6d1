//! The README's walk-through, run as written: every `cargo run --release --`
//! line of its "Set up" section, in order, in a fresh directory (the
//! embedded SQLite default), with this build's binary for `cargo run`. A
//! command that stops working, or a comment that stops being true (the
//! backfill's count, the final check), fails here.

use std::process::Command;

const README: &str = include_str!("../../README.md");

/// The `cargo run --release -- …` lines of the README's "## Set up"
/// section, up to its first subsection, in order.
fn walkthrough() -> Vec<&'static str> {
    let start = README.find("## Set up").expect("the README has a Set up section");
    let section = &README[start..];
    let section = &section[..section.find("\n### ").unwrap_or(section.len())];
    section.lines().filter(|l| l.starts_with("cargo run --release -- ")).collect()
}

#[test]
fn the_readmes_walkthrough_runs_as_written() {
    let lines = walkthrough();
    assert!(lines.len() >= 5, "the walk-through was found: {lines:?}");
    let dir = std::env::temp_dir().join(format!("nodemaint-readme-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut outputs = Vec::new();
    for line in &lines {
        // The shell reads the line as a reader would paste it (quotes, the
        // trailing comment); `cargo run --release --` is this build.
        let command = line.replacen("cargo run --release --", env!("CARGO_BIN_EXE_nodemaint"), 1);
        let out = Command::new("sh")
            .arg("-c")
            .arg(&command)
            .current_dir(&dir)
            .env_remove("NODEMAINT_CONFIG")
            .env_remove("NODEMAINT_DATABASE_URL")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(out.status.success(), "`{line}` failed: {stdout}{}", String::from_utf8_lossy(&out.stderr));
        outputs.push((*line, stdout));
    }
    let _ = std::fs::remove_dir_all(&dir);
    // What the comments promise.
    let (_, backfill) = outputs.iter().rfind(|(l, _)| l.contains("backfills ~10,000")).expect("the backfill line");
    let count: u64 = backfill
        .split_whitespace()
        .skip_while(|w| *w != "Backfilled")
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("a backfill count in: {backfill}"));
    assert!((9_000..=11_000).contains(&count), "~10,000 entries backfilled: {count}");
    let (_, check) = outputs.last().unwrap();
    assert!(!check.contains("Warning") && !check.contains("Failure"), "{check}");
}
