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

/// The lines of the first ```sh block after `heading`, comments dropped and
/// `\` continuations joined, as a shell reads them.
fn block_after(heading: &str) -> Vec<String> {
    let start = README.find(heading).unwrap_or_else(|| panic!("the README has {heading}"));
    let block = &README[start..];
    let block = &block[block.find("```sh\n").expect("a sh block") + 6..];
    let block = &block[..block.find("```").expect("the block ends")];
    let mut lines: Vec<String> = Vec::new();
    let mut continued = false;
    for line in block.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let text = trimmed.trim_end_matches('\\').trim_end();
        match (continued, lines.last_mut()) {
            (true, Some(last)) => {
                last.push(' ');
                last.push_str(text);
            }
            _ => lines.push(text.to_owned()),
        }
        continued = trimmed.ends_with('\\');
    }
    lines
}

#[test]
fn the_readmes_rest_api_block_runs_as_written() {
    use std::io::{BufRead, BufReader};
    let lines = block_after("## The REST API: `nodemaint serve`");
    assert!(lines.iter().any(|l| l.contains(" serve ")), "{lines:?}");
    let dir = std::env::temp_dir().join(format!("nodemaint-readme-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).unwrap();
    let bin = env!("CARGO_BIN_EXE_nodemaint");
    let baremetal = crate::common::client_venv().join("bin/baremetal").display().to_string();
    /// The README's server, killed however the test ends.
    struct Serving(std::process::Child);
    impl Drop for Serving {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let mut server: Option<Serving> = None;
    let mut base = String::new();
    for line in &lines {
        let line = line.replace("http://127.0.0.1:6385", &base);
        if line.contains(" serve ") {
            // The README's server, on a free port instead of 6385.
            let args = line.replacen("cargo run --release --", "", 1);
            let args: Vec<&str> = args.split('#').next().unwrap().split_whitespace().collect();
            let mut child = Command::new(bin)
                .args(&args)
                .args(["--bind", "127.0.0.1:0", "--tick-interval", "0"])
                .current_dir(&dir)
                .env("RUST_LOG", "info")
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            let stderr = child.stderr.take().unwrap();
            let mut reader = BufReader::new(stderr).lines();
            let listening = reader
                .by_ref()
                .map_while(Result::ok)
                .find(|l| l.contains("listening on http://"))
                .expect("serve starts");
            base = listening[listening.find("http://").unwrap()..].split_whitespace().next().unwrap().to_owned();
            std::thread::spawn(move || reader.for_each(drop));
            server = Some(Serving(child));
            continue;
        }
        let command =
            line.replacen("cargo run --release --", bin, 1).replacen("baremetal ", &format!("{baremetal} "), 1);
        let out = Command::new("sh").arg("-c").arg(&command).current_dir(&dir).output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(out.status.success(), "`{line}` failed: {stdout}{}", String::from_utf8_lossy(&out.stderr));
        if line.starts_with("curl") {
            let body: serde_json::Value =
                serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("`{line}`: {e}: {stdout}"));
            assert!(body.get("error_message").is_none(), "`{line}` was refused: {body}");
        }
        if line.contains("node show myNode") {
            assert!(stdout.contains("rebalancing rack"), "{stdout}");
        }
    }
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}
