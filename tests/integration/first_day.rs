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

/// A directory of the test's own, removed with everything in it on drop.
struct TempDir(std::path::PathBuf);

impl std::ops::Deref for TempDir {
    type Target = std::path::Path;
    fn deref(&self) -> &std::path::Path {
        &self.0
    }
}

impl AsRef<std::path::Path> for TempDir {
    fn as_ref(&self) -> &std::path::Path {
        &self.0
    }
}

impl AsRef<std::ffi::OsStr> for TempDir {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.as_os_str()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn tempdir() -> TempDir {
    let dir = std::env::temp_dir().join(format!("nodemaint_first_day_{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).unwrap();
    TempDir(dir)
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

    let verbose = t.cli(&["-v", "reconcile"]);
    let log = stderr(&verbose);
    assert!(log.contains("lock taken") && log.contains("reconcile done in"), "{log}");
    assert!(log.contains("nodemaint reconcile finished in"), "{log}");
    let debug = t.cli(&["-vv", "db", "upgrade"]);
    assert!(stderr(&debug).contains("connected to"), "{}", stderr(&debug));
    let counted = stderr(&debug);
    let sent = counted.lines().find(|l| l.contains("SQL statement(s) sent")).unwrap_or_else(|| panic!("{counted}"));
    let n: u64 = sent.split(" SQL statement").next().unwrap().rsplit(' ').next().unwrap().parse().unwrap();
    assert!(n > 0, "{sent}");
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
    assert_eq!(
        count(&db, "SELECT COUNT(*) FROM nodes WHERE maintenance_reason IS NOT NULL OR lessee IS NOT NULL").await,
        0
    );
    assert_eq!(count(&db, "SELECT COUNT(*) FROM node_maintenance").await, 0);

    // A reason an old Ironic service already stored is copied verbatim by
    // reconcile, whatever its length (ARCHITECTURE.md, "Over-long legacy reasons").
    let stored = "s".repeat(20_000);
    db.execute_unprepared(&format!(
        "UPDATE nodes SET maintenance = true, maintenance_reason = '{stored}' WHERE name = 'myNode'"
    ))
    .await
    .unwrap();
    ok(&t.cli(&["-q", "reconcile"]));
    assert_eq!(count(&db, &format!("SELECT COUNT(*) FROM node_maintenance WHERE reason = '{stored}'")).await, 1);
    let again = t.cli(&["reconcile", "--dry-run"]);
    assert_eq!(again.status.code(), Some(0), "no drift left behind: {}", stdout(&again));
}

backend_tests!(over_long_values_are_bad_input_not_database_errors);

/// Every command refuses a database that is neither Ironic's nor nodemaint's
/// (exit 5; upgrade check 255, reconcile 2) and creates nothing in it.
#[test]
fn a_foreign_database_is_refused_by_every_command_and_left_untouched() {
    let dir = tempdir();
    let file = dir.join("foreign.db");
    let url = format!("sqlite://{}", file.display());
    let made = std::process::Command::new("python3")
        .args([
            "-c",
            "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('CREATE TABLE foo (x)'); c.commit()",
        ])
        .arg(&file)
        .status()
        .unwrap();
    assert!(made.success());
    for (args, code) in [
        (vec!["db", "status"], 5),
        (vec!["db", "downgrade", "--steps", "1", "--yes"], 5),
        (vec!["db", "upgrade"], 5),
        (vec!["node", "list"], 5),
        (vec!["maintenance", "list", "x"], 5),
        (vec!["upgrade", "check"], 255),
        (vec!["reconcile", "--dry-run"], 2),
    ] {
        let out = nodemaint_cmd(&url, &args).output().unwrap();
        assert_eq!(out.status.code(), Some(code), "{args:?}: {}{}", stdout(&out), stderr(&out));
        let said = format!("{}{}", stdout(&out), stderr(&out));
        assert!(said.contains("is not an Ironic or nodemaint database"), "{args:?}: {said}");
    }
    let tables = std::process::Command::new("python3")
        .args(["-c", "import sqlite3,sys; print(sorted(r[0] for r in sqlite3.connect(sys.argv[1]).execute(\"SELECT name FROM sqlite_master WHERE type='table'\")))"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(stdout(&tables).trim(), "['foo']");
    let left: Vec<_> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    assert!(!left.iter().any(|f| f.contains("lock")), "no lock file: {left:?}");
}

/// A missing SQLite file is created by `db upgrade` alone; a URL without a
/// database is a configuration error (3) naming what is missing.
#[test]
fn only_db_upgrade_creates_a_database_and_urls_must_name_one() {
    let dir = tempdir();
    let file = dir.join("missing.db");
    let url = format!("sqlite://{}", file.display());
    for args in [vec!["node", "list"], vec!["db", "downgrade", "--steps", "1", "--yes"], vec!["upgrade", "check"]] {
        let out = nodemaint_cmd(&url, &args).output().unwrap();
        assert!(matches!(out.status.code(), Some(5 | 255)), "{args:?}: {}", stderr(&out));
        assert!(
            stdout(&out).contains("there is no database at") || stderr(&out).contains("there is no database at"),
            "{args:?}: {}",
            stderr(&out)
        );
        assert!(!file.exists(), "{args:?} created {}", file.display());
    }
    let status = ok(&nodemaint_cmd(&url, &["db", "status"]).output().unwrap());
    assert_eq!(status.matches("pending").count(), 6, "{status}");
    assert!(!file.exists(), "db status created {}", file.display());
    for url in ["mysql://root@127.0.0.1:3306", "postgres://postgres@127.0.0.1:5432", "sqlite://"] {
        let out = nodemaint_cmd(url, &["db", "status"]).output().unwrap();
        assert_eq!(out.status.code(), Some(3), "{url}: {}", stderr(&out));
        assert!(stderr(&out).contains("names no"), "{url}: {}", stderr(&out));
    }
}

/// A read-only SQLite file can be inspected by the commands that only read;
/// a write is refused with what to do (exit 4), not a driver message.
#[test]
fn a_read_only_sqlite_file_can_be_read() {
    if !crate::common::runs_as_root("a_read_only_sqlite_file_can_be_read") {
        return;
    }
    let dir = tempdir();
    let file = dir.join("ro.db");
    let url = format!("sqlite://{}", file.display());
    ok(&nodemaint_cmd(&url, &["-q", "db", "upgrade"]).output().unwrap());
    ok(&nodemaint_cmd(&url, &["-q", "node", "create", "--name", "n1", "--maintenance", "--reason", "r"])
        .output()
        .unwrap());
    // The directory stays open for SQLite's -shm and -wal files; the database itself is 0444.
    let chmod = |mode: &str, path: &std::path::Path| {
        assert!(std::process::Command::new("chmod").arg(mode).arg(path).status().unwrap().success());
    };
    chmod("0777", &dir);
    chmod("0444", &file);
    let as_nobody = |args: &[&str]| {
        std::process::Command::new("setpriv")
            .args([
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                env!("CARGO_BIN_EXE_nodemaint"),
                "--database-url",
                &url,
            ])
            .args(args)
            .env_remove("NODEMAINT_CONFIG")
            .output()
            .unwrap()
    };
    for args in [vec!["db", "status"], vec!["node", "list"], vec!["node", "show", "n1"], vec!["reconcile", "--dry-run"]]
    {
        let out = as_nobody(&args);
        assert!(matches!(out.status.code(), Some(0 | 1)), "{args:?}: exit {:?}: {}", out.status.code(), stderr(&out));
    }
    let check = as_nobody(&["upgrade", "check"]);
    assert!(matches!(check.status.code(), Some(0..=2)), "{}", stderr(&check));
    let write = as_nobody(&["node", "create", "--name", "n2"]);
    assert_eq!(write.status.code(), Some(4), "{}", stderr(&write));
    assert!(stderr(&write).contains("make the file writable"), "{}", stderr(&write));
}

/// A database user without grants on Ironic's tables is told that it lacks
/// a privilege, and which, rather than that the database is not Ironic's.
async fn a_user_without_privileges_is_told_which_it_lacks(t: TestDb) {
    use crate::common::Backend;
    ok(&t.cli(&["-q", "db", "upgrade"]));
    ok(&t.cli(&["-q", "node", "create", "--name", "n1"]));
    let db = t.connect().await;
    let user = format!("nm_noperm_{}", &uuid::Uuid::new_v4().simple().to_string()[..12]);
    let database = t.url.rsplit('/').next().unwrap().to_owned();
    let (server, _) = t.url.rsplit_once('/').unwrap();
    let (create, drop): (Vec<String>, Vec<String>) = match t.backend {
        Backend::Postgres => (vec![format!("CREATE ROLE {user} LOGIN")], vec![format!("DROP ROLE IF EXISTS {user}")]),
        Backend::Mysql => (
            // Connecting needs some privilege on the database: one table, not `nodes`.
            vec![
                format!("CREATE USER '{user}'@'%'"),
                format!("GRANT SELECT ON {database}.node_history TO '{user}'@'%'"),
            ],
            vec![format!("DROP USER IF EXISTS '{user}'@'%'")],
        ),
        Backend::Sqlite => unreachable!("SQLite has no users"),
    };
    for sql in &create {
        db.execute_unprepared(sql).await.unwrap();
    }
    let scheme_and_host = server.split_once("://").map(|(s, h)| (s, h.rsplit_once('@').map_or(h, |(_, h)| h))).unwrap();
    let url = format!("{}://{user}@{}/{database}", scheme_and_host.0, scheme_and_host.1);
    let node_list = nodemaint_cmd(&url, &["node", "list"]).output().unwrap();
    let check = nodemaint_cmd(&url, &["upgrade", "check"]).output().unwrap();
    db.close().await.ok();
    let admin = t.connect().await;
    for sql in &drop {
        admin.execute_unprepared(sql).await.ok();
    }
    assert_eq!(node_list.status.code(), Some(4), "{}", stderr(&node_list));
    let said = stderr(&node_list);
    assert!(
        said.contains("nodes") && (said.contains("permission denied") || said.contains("command denied")),
        "{said}"
    );
    assert!(said.contains("grant the database user"), "{said}");
    assert!(!said.contains("is not an Ironic"), "{said}");
    // Either the checks cannot start (255) or the checks that read the
    // tables fail (2); both say which privilege is missing.
    let said = format!("{}{}", stdout(&check), stderr(&check));
    assert!(matches!(check.status.code(), Some(2 | 255)), "{said}");
    assert!(said.contains("permission denied") || said.contains("command denied"), "{said}");
}

mod a_user_without_privileges_is_told_which_it_lacks {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres() {
        if let Some(t) = crate::common::TestDb::create(crate::common::Backend::Postgres).await {
            super::a_user_without_privileges_is_told_which_it_lacks(t).await;
        }
    }
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn mysql() {
        if let Some(t) = crate::common::TestDb::create(crate::common::Backend::Mysql).await {
            super::a_user_without_privileges_is_told_which_it_lacks(t).await;
        }
    }
}

/// The confirmation names every table a downgrade drops and every row it
/// deletes, counted, before anything is touched.
async fn a_downgrade_names_every_table_it_drops_and_its_rows(t: TestDb) {
    ok(&t.cli(&["-q", "db", "upgrade"]));
    ok(&t.cli(&["-q", "db", "downgrade", "--steps", "4", "--yes"]));
    ok(&t.cli(&["-q", "fleet", "seed", "--nodes", "10", "--maintained-fraction", "0.5"]));
    ok(&t.cli(&["-q", "db", "upgrade"]));
    let db = t.connect().await;
    let backfilled = count(&db, "SELECT COUNT(*) FROM node_maintenance").await;
    assert!(backfilled > 0);
    let history = count(&db, "SELECT COUNT(*) FROM node_history").await;
    let refused = t.cli(&["db", "downgrade", "--steps", "6"]);
    assert_eq!(refused.status.code(), Some(3), "{}", stderr(&refused));
    let said = stderr(&refused);
    for part in [
        "drop table node_maintenance_notification (notifications not yet sent are lost) (0 rows)".to_owned(),
        // The backfill's events, typed from their text by the events migration.
        format!("drop table node_maintenance_event (typed events; their history texts stay) ({backfilled} rows)"),
        "drop table node_maintenance_schedule (0 rows)".to_owned(),
        "drop column node_maintenance.ends_at: active windows lose their end (0 rows)".to_owned(),
        format!("delete the backfilled legacy entries from node_maintenance ({backfilled} rows)"),
        format!("drop table node_maintenance ({backfilled} rows)"),
        format!("drop table node_history ({history} row"),
        "drop table nodes (10 rows)".to_owned(),
        "re-run with --yes".to_owned(),
    ] {
        assert!(said.contains(&part), "missing `{part}`: {said}");
    }
    assert_eq!(count(&db, "SELECT COUNT(*) FROM nodes").await, 10, "nothing dropped without --yes");
    let done = ok(&t.cli(&["db", "downgrade", "--steps", "6", "--yes"]));
    assert!(done.contains("drop table nodes (10 rows)"), "{done}");
}

backend_tests!(a_downgrade_names_every_table_it_drops_and_its_rows);

/// `nodes.fault` follows the fault entry as the boolean follows every entry,
/// and the legacy unset clears it as Ironic's does.
async fn the_fault_column_is_kept_in_step_and_cleared_by_the_unset(t: TestDb) {
    use nodemaint::{Maintenance, Policy};
    prepared(&t).await;
    let db = t.connect().await;
    let fault_of = |db: &sea_orm::DatabaseConnection| {
        let db = db.clone();
        async move {
            let node = nodemaint::nodes::find(&db, "myNode").await.unwrap();
            (node.maintenance, node.fault)
        }
    };
    // An old conductor: maintenance, reason and fault, no entry; reconcile keeps the fault.
    db.execute_unprepared(
        "UPDATE nodes SET maintenance = true, maintenance_reason = 'PSU died', fault = 'power failure' WHERE name = 'myNode'",
    )
    .await
    .unwrap();
    ok(&t.cli(&["-q", "reconcile"]));
    assert_eq!(fault_of(&db).await, (Some(true), Some("power failure".into())));
    // The boolean unset (Ironic's DELETE) clears it with the flag.
    ok(&t.cli(&["-q", "maintenance", "unset", "myNode"]));
    assert_eq!(fault_of(&db).await, (Some(false), None));

    // The conductor's fault entry sets it; releasing that entry clears it, while another hold stays.
    let svc = Maintenance::new(db.clone(), Policy::defaults());
    svc.fault_assert("myNode", "clean failure", Some("cleaning timed out".into())).await.unwrap();
    assert_eq!(fault_of(&db).await, (Some(true), Some("clean failure".into())));
    ok(&t.cli(&["-q", "maintenance", "add", "myNode", "--type", "operator_hold", "--reason", "hold"]));
    assert_eq!(fault_of(&db).await, (Some(true), Some("clean failure".into())));
    svc.fault_clear("myNode").await.unwrap();
    assert_eq!(fault_of(&db).await, (Some(true), None));
}

backend_tests!(the_fault_column_is_kept_in_step_and_cleared_by_the_unset);

/// The smaller things: an empty NODEMAINT_CONFIG, a pin that is no release,
/// where a pin came from, a second seed with the same --seed, and a dry run
/// that names the nodes it found.
async fn pins_seeds_configs_and_dry_runs_say_what_to_do(t: TestDb) {
    prepared(&t).await;
    let empty_config = nodemaint_cmd(&t.url, &["db", "status"]).env("NODEMAINT_CONFIG", "").output().unwrap();
    assert_eq!(empty_config.status.code(), Some(0), "{}", stderr(&empty_config));

    let bad_pin = t.cli(&["reconcile", "--pin-release-version", "banana"]);
    assert_eq!(bad_pin.status.code(), Some(2));
    assert!(
        stderr(&bad_pin).contains("--pin-release-version = `banana` is not a release or a version"),
        "{}",
        stderr(&bad_pin)
    );
    let flagged = t.cli(&["--format", "json", "upgrade", "check", "--pin-release-version", "2025.2"]);
    assert!(stdout(&flagged).contains("pinned to 2025.2 (by --pin-release-version)"), "{}", stdout(&flagged));
    let dir = tempdir();
    let config = dir.join("nodemaint.toml");
    std::fs::write(&config, "[upgrade]\npin_release_version = \"2025.2\"\n").unwrap();
    let filed = t.cli(&["--config", config.to_str().unwrap(), "--format", "json", "upgrade", "check"]);
    let by_file = format!("pinned to 2025.2 (by [upgrade] pin_release_version in {})", config.display());
    assert!(stdout(&filed).contains(&by_file), "{}", stdout(&filed));

    ok(&t.cli(&["-q", "fleet", "seed", "--nodes", "20", "--seed", "7"]));
    let again = t.cli(&["fleet", "seed", "--nodes", "20", "--seed", "7"]);
    assert_eq!(again.status.code(), Some(9), "{}", stderr(&again));
    assert!(stderr(&again).contains("pick another --seed than 7"), "{}", stderr(&again));
    assert_eq!(count(&t.connect().await, "SELECT COUNT(*) FROM nodes").await, 21, "the second seed kept nothing");

    // Drift of two kinds: an old service set maintenance; something cleared the boolean under a typed entry.
    ok(&t.cli(&["-q", "node", "set", "myNode", "--maintenance", "--reason", "old"]));
    ok(&t.cli(&["-q", "node", "create", "--name", "typed"]));
    ok(&t.cli(&["-q", "maintenance", "add", "typed", "--type", "operator_hold"]));
    ok(&t.cli(&["-q", "node", "set", "typed", "--no-maintenance"]));
    let uuid_of = |name: &str| {
        let shown: serde_json::Value =
            serde_json::from_str(&ok(&t.cli(&["--format", "json", "node", "show", name]))).unwrap();
        shown["uuid"].as_str().unwrap().to_owned()
    };
    let dry = t.cli(&["--format", "json", "reconcile", "--dry-run"]);
    let report: serde_json::Value = serde_json::from_str(&stdout(&dry)).unwrap();
    let kind = |name: &str| report["summary"].as_array().unwrap().iter().find(|k| k["drift"] == name).unwrap().clone();
    assert!(
        kind("maintained_without_entry")["examples"].as_array().unwrap().contains(&uuid_of("myNode").into()),
        "{report}"
    );
    assert_eq!(kind("cleared_with_typed_entries")["examples"], serde_json::json!([uuid_of("typed")]), "{report}");
    assert_eq!(report["typed_on_cleared"], serde_json::json!([uuid_of("typed")]), "{report}");
}

backend_tests!(pins_seeds_configs_and_dry_runs_say_what_to_do);
