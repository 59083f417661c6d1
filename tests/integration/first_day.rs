//! What a new user meets on the first day with the CLI: a closed pipe, `-q`
//! from cron, `-v` logs, Ctrl-C and SIGTERM, policy typos, reasons too long
//! for a shell argument, and arguments checked before any work starts.

use crate::backend_tests;
use crate::common::{TestDb, count, nodemaint_cmd, ok, stderr, stdout};
use sea_orm::ConnectionTrait;
use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::time::Duration;

async fn prepared(t: &TestDb) {
    ok(&t.cli(&["-q", "db", "upgrade"]));
    ok(&t.cli(&["-q", "node", "create", "--name", "myNode", "--owner", "own1"]));
}

/// `nodemaint … | head -1` stops quietly, as `ls | head` does.
async fn a_closed_pipe_ends_the_command_quietly(t: TestDb) {
    prepared(&t).await;
    ok(&t.cli(&["-q", "fleet", "seed", "--nodes", "3000"]));
    let dir = tempdir();
    let err = dir.join("stderr");
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(r#""$0" --database-url "$1" --format json node list --limit 5000 2>"$2" | head -1"#)
        .arg(env!("CARGO_BIN_EXE_nodemaint"))
        .arg(&t.url)
        .arg(&err)
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "[\n");
    let err = std::fs::read_to_string(&err).unwrap();
    assert_eq!(err, "", "nothing on stderr: no panic, no 'Broken pipe'");
}

fn tempdir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("nodemaint_first_day_{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `-q` is what cron runs: nothing on success. `-v` logs what was done.
async fn quiet_prints_nothing_on_success_and_verbose_logs_the_work(t: TestDb) {
    for args in [vec!["-q", "db", "upgrade"], vec!["-q", "fleet", "seed", "--nodes", "50"]] {
        let out = t.cli(&args);
        assert_eq!(
            (out.status.code(), stdout(&out), stderr(&out)),
            (Some(0), String::new(), String::new()),
            "{args:?}"
        );
    }
    // Drift for reconcile to repair: an old service set maintenance.
    ok(&t.cli(&["-q", "node", "create", "--name", "myNode"]));
    ok(&t.cli(&["-q", "node", "set", "myNode", "--maintenance", "--reason", "old service"]));
    let out = t.cli(&["-q", "reconcile"]);
    assert_eq!((out.status.code(), stdout(&out), stderr(&out)), (Some(0), String::new(), String::new()));
    assert_eq!(
        count(&t.connect().await, "SELECT COUNT(*) FROM node_maintenance WHERE reason = 'old service'").await,
        1
    );

    let verbose = t.cli(&["-v", "reconcile", "--dry-run"]);
    let log = stderr(&verbose);
    assert!(log.contains("lock taken") && log.contains("reconcile done in"), "{log}");
    assert!(log.contains("nodemaint reconcile finished in"), "{log}");
    let debug = t.cli(&["-vv", "db", "upgrade"]);
    assert!(stderr(&debug).contains("connected to"), "{}", stderr(&debug));
}

/// SIGTERM or Ctrl-C during a long write: the bar goes, one line says what
/// was kept, and the exit code says which signal (143, 130).
async fn an_interrupted_seed_says_so_and_keeps_nothing(t: TestDb) {
    ok(&t.cli(&["-q", "db", "upgrade"]));
    for (signal, code) in [("-TERM", 143), ("-INT", 130)] {
        let mut child = nodemaint_cmd(&t.url, &["fleet", "seed", "--nodes", "20000000"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(1500));
        assert!(child.try_wait().unwrap().is_none(), "the seed ended before the signal");
        std::process::Command::new("kill").arg(signal).arg(child.id().to_string()).status().unwrap();
        let lines: Vec<String> = BufReader::new(child.stderr.take().unwrap()).lines().map_while(Result::ok).collect();
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(code), "{signal}: {lines:?}");
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(lines[0].contains("interrupted; the transaction in progress was rolled back"), "{lines:?}");
        assert_eq!(count(&t.connect().await, "SELECT COUNT(*) FROM nodes").await, 0, "{signal}");
    }
}

/// A misspelt rule in nodemaint's namespace would silently change nothing.
async fn a_misspelt_policy_rule_is_a_warning_naming_it(t: TestDb) {
    prepared(&t).await;
    let dir = tempdir();
    let policy = dir.join("policy.yaml");
    std::fs::write(&policy, "\"baremetal:node:maintenance:lst\": \"!\"\n\"baremetal:port:get\": \"!\"\n").unwrap();
    let out = t.cli(&["-q", "maintenance", "list", "myNode", "--policy-file", policy.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    let err = stderr(&out);
    assert!(err.contains("no rule named baremetal:node:maintenance:lst"), "{err}");
    assert!(!err.contains("baremetal:port:get"), "Ironic's own rules are not typos: {err}");
}

/// `--reason -` and `--reason-file` for reasons a shell argument cannot carry.
async fn reasons_come_from_standard_input_or_a_file(t: TestDb) {
    prepared(&t).await;
    let mut child = nodemaint_cmd(&t.url, &["--format", "json", "maintenance", "set", "myNode", "--reason", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"line one\nline two\n").unwrap();
    let out = child.wait_with_output().unwrap();
    let entry: serde_json::Value = serde_json::from_str(&ok(&out)).unwrap();
    assert_eq!(entry["reason"], "line one\nline two");
    let dir = tempdir();
    let file = dir.join("reason.txt");
    std::fs::write(&file, "from a file\n").unwrap();
    let args = ["--format", "json", "maintenance", "add", "myNode", "--type", "operator_hold", "--reason-file"];
    let entry: serde_json::Value =
        serde_json::from_str(&ok(&t.cli(&[&args[..], &[file.to_str().unwrap()]].concat()))).unwrap();
    assert_eq!(entry["reason"], "from a file");
    let missing = t.cli(&["maintenance", "set", "myNode", "--reason-file", "/nonexistent/reason"]);
    assert_eq!(missing.status.code(), Some(10));
    assert!(stderr(&missing).contains("cannot read the reason from /nonexistent/reason"), "{}", stderr(&missing));
}

backend_tests!(
    quiet_prints_nothing_on_success_and_verbose_logs_the_work,
    an_interrupted_seed_says_so_and_keeps_nothing
);

mod sqlite_only {
    macro_rules! sqlite {
        ($($name:ident),*) => {$(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() {
                let t = crate::common::TestDb::create(crate::common::Backend::Sqlite).await.unwrap();
                super::$name(t).await;
            }
        )*};
    }
    sqlite!(
        a_closed_pipe_ends_the_command_quietly,
        a_misspelt_policy_rule_is_a_warning_naming_it,
        reasons_come_from_standard_input_or_a_file
    );
}

/// Arguments are checked before any work: exit 127 and a line naming the flag.
#[test]
fn bad_values_are_usage_errors() {
    let url = "sqlite:///nonexistent-dir/never-created.db";
    for (args, needle) in [
        (vec!["fleet", "seed", "--nodes", "5", "--maintained-fraction", "1.5"], "--maintained-fraction"),
        (vec!["maintenance", "list", "n", "--project", ""], "--project"),
        (vec!["serve", "--public-endpoint", "baremetal.example.com"], "--public-endpoint"),
        (vec!["serve", "--bind", "nowhere.invalid:6385"], "--bind"),
    ] {
        let out = nodemaint_cmd(url, &args).output().unwrap();
        assert_eq!(out.status.code(), Some(127), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(needle), "{args:?}: {}", stderr(&out));
    }
    let help = nodemaint_cmd(url, &["maintenance", "remove", "--help"]).output().unwrap();
    let usage = stdout(&help);
    assert!(usage.lines().any(|l| l.contains("Usage:") && l.contains("<NODE> <ENTRY>")), "{usage}");
    assert!(usage.lines().any(|l| l.contains("remove [OPTIONS] <NODE> --all")), "{usage}");
    let check = stdout(&nodemaint_cmd(url, &["upgrade", "check", "--help"]).output().unwrap());
    assert!(check.contains("127 bad arguments"), "{check}");
}

/// `--bind localhost:PORT` resolves the name.
#[test]
fn serve_binds_a_host_name() {
    let dir = tempdir();
    let url = format!("sqlite://{}", dir.join("n.db").display());
    ok(&nodemaint_cmd(&url, &["-q", "db", "upgrade"]).output().unwrap());
    let mut child = nodemaint_cmd(&url, &["serve", "--auth-strategy", "noauth", "--bind", "localhost:0"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let line =
        BufReader::new(child.stderr.take().unwrap()).lines().map_while(Result::ok).find(|l| l.contains("listening on"));
    child.kill().ok();
    child.wait().ok();
    assert!(
        line.as_deref().is_some_and(|l| l.contains("http://127.0.0.1:") || l.contains("http://[::1]:")),
        "{line:?}"
    );
}

/// Values longer than Ironic's columns are refused before they reach the
/// database (exit 10, one line), and nothing is written.
async fn over_long_values_are_bad_input_not_database_errors(t: TestDb) {
    prepared(&t).await;
    let long = "n".repeat(300);
    let reason = "r".repeat(120_000);
    for (args, needle) in [
        (vec!["node", "create", "--name", long.as_str()], "--name is 300 characters long"),
        (vec!["node", "create", "--owner", long.as_str()], "--owner is 300 characters long"),
        (vec!["node", "set", "myNode", "--lessee", long.as_str()], "--lessee is 300 characters long"),
        (vec!["node", "set", "myNode", "--maintenance", "--reason", reason.as_str()], "120000 characters long"),
        (vec!["maintenance", "set", "myNode", "--user", long.as_str()], "User id is 300 characters long"),
    ] {
        let out = t.cli(&args);
        assert_eq!(out.status.code(), Some(10), "{}: {}", args[..2].join(" "), stderr(&out));
        let err = stderr(&out);
        assert!(err.contains(needle) && err.lines().count() == 1, "{err}");
    }
    ok(&t.cli(&["-q", "node", "create", "--name", "other"]));
    let taken = t.cli(&["node", "set", "myNode", "--name", "other"]);
    assert_eq!(taken.status.code(), Some(9), "{}", stderr(&taken));
    let db = t.connect().await;
    assert_eq!(count(&db, "SELECT COUNT(*) FROM nodes").await, 2);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM nodes WHERE maintenance_reason IS NOT NULL OR lessee IS NOT NULL").await, 0);
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_maintenance").await, 0);

    // A reason an old Ironic service already stored is copied verbatim by
    // reconcile, whatever its length (ARCHITECTURE.md, "Over-long legacy reasons").
    let stored = "s".repeat(20_000);
    db.execute_unprepared(&format!("UPDATE nodes SET maintenance = true, maintenance_reason = '{stored}' WHERE name = 'myNode'"))
        .await
        .unwrap();
    ok(&t.cli(&["-q", "reconcile"]));
    assert_eq!(count(&db, &format!("SELECT COUNT(*) FROM node_maintenance WHERE reason = '{stored}'")).await, 1);
    let again = t.cli(&["reconcile", "--dry-run"]);
    assert_eq!(again.status.code(), Some(0), "no drift left behind: {}", stdout(&again));
}

backend_tests!(over_long_values_are_bad_input_not_database_errors);
