//! `nodemaint maintenance …` and `history list` through the binary: the
//! table and JSON shapes, the caller flags, and one exit code per error class.

use crate::backend_tests;
use crate::common::{TestDb, ok, stderr, stdout};

fn json(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_str(&stdout(out)).unwrap_or_else(|e| panic!("{e}: {}", stdout(out)))
}

async fn prepared(t: &TestDb) {
    ok(&t.cli(&["db", "upgrade"]));
    ok(&t.cli(&["node", "create", "--name", "myNode", "--owner", "own1", "--lessee", "les1"]));
}

async fn maintenance_commands_list_add_remove_with_spec_shapes(t: TestDb) {
    prepared(&t).await;
    let hw = json(&t.cli(&[
        "--format",
        "json",
        "maintenance",
        "add",
        "myNode",
        "--type",
        "hardware_failure",
        "--reason",
        "Disk 3",
        "--extra",
        "{\"ticket\": \"CIDTEAM-3743\"}",
        "--project",
        "own1",
        "--user",
        "alice",
    ]));
    assert_eq!(hw["scope"], "owner");
    assert_eq!(hw["extra"]["ticket"], "CIDTEAM-3743");
    let hold = json(&t.cli(&[
        "--format",
        "json",
        "maintenance",
        "add",
        "myNode",
        "--type",
        "operator_hold",
        "--reason",
        "Row C",
    ]));
    assert_eq!(hold["scope"], "system");

    let table = ok(&t.cli(&["maintenance", "list", "myNode"]));
    let header = table.lines().nth(1).unwrap();
    assert!(
        header.starts_with("| UUID ")
            && header.contains("| Type ")
            && header.contains("| Reason ")
            && header.contains("| Scope "),
        "{table}"
    );
    assert!(
        table.contains("| hardware_failure |") && table.contains("| owner  |") && table.contains("| system |"),
        "{table}"
    );

    let listed =
        json(&t.cli(&["--format", "json", "maintenance", "list", "myNode", "--project", "les1", "--roles", "reader"]));
    let entries = listed["maintenance"].as_array().unwrap();
    assert_eq!(entries.len(), 2);
    assert!(entries.iter().all(|e| e["asserted_by"] == "******"), "a lessee sees both masked: {listed}");

    let shown = json(&t.cli(&["--format", "json", "node", "show", "myNode"]));
    assert_eq!(shown["maintenance_reason"], "hardware_failure: Disk 3; operator_hold: Row C");

    let released =
        json(&t.cli(&["--format", "json", "maintenance", "remove", "myNode", hold["uuid"].as_str().unwrap()]));
    assert_eq!(released["released"][0]["uuid"], hold["uuid"], "the same shape as --all");
    let all = json(&t.cli(&["--format", "json", "maintenance", "remove", "myNode", "--all"]));
    assert_eq!(all["released"].as_array().unwrap().len(), 1);
    let shown = json(&t.cli(&["--format", "json", "node", "show", "myNode"]));
    assert_eq!(
        (shown["maintenance"].clone(), shown["maintenance_reason"].clone()),
        (false.into(), serde_json::Value::Null)
    );

    let history = json(&t.cli(&["--format", "json", "history", "list", "myNode"]));
    let events = history["history"].as_array().unwrap();
    assert_eq!(events.len(), 4, "two asserts and two releases: {history}");
    assert!(events.iter().all(|e| e["event_type"] == "maintenance"));
}

async fn legacy_set_unset_round_trip_the_reason(t: TestDb) {
    prepared(&t).await;
    ok(&t.cli(&["maintenance", "set", "myNode", "--reason", "LK_OP|HW_ERR: rebalancing rack"]));
    let shown = json(&t.cli(&["--format", "json", "node", "show", "myNode"]));
    assert_eq!(shown["maintenance_reason"], "LK_OP|HW_ERR: rebalancing rack");
    let out = ok(&t.cli(&["maintenance", "unset", "myNode"]));
    assert!(out.starts_with("Released "), "{out}");
    let shown = json(&t.cli(&["--format", "json", "node", "show", "myNode"]));
    assert_eq!(shown["maintenance"], false);
}

async fn each_error_class_has_its_exit_code(t: TestDb) {
    prepared(&t).await;
    let sys = json(&t.cli(&["--format", "json", "maintenance", "add", "myNode", "--type", "hardware_failure"]));
    let cases: Vec<(Vec<&str>, i32, u16, &str)> = vec![
        (vec!["maintenance", "add", "nope", "--type", "operator_hold"], 7, 404, "Node nope could not be found."),
        (
            vec!["maintenance", "remove", "myNode", "--all", "--project", "les1", "--roles", "admin"],
            8,
            403,
            "not permitted at lessee scope",
        ),
        (vec!["maintenance", "add", "myNode", "--type", "hardware_failure"], 9, 409, "is already active"),
        (vec!["maintenance", "add", "myNode", "--type", "lockout"], 10, 400, "Unknown maintenance type 'lockout'"),
        (
            vec!["maintenance", "add", "myNode", "--type", "operator_hold", "--extra", "{not json"],
            10,
            400,
            "not valid JSON",
        ),
        (
            vec!["maintenance", "add", "myNode", "--type", "operator_hold", "--extra", "[1, 2]"],
            10,
            400,
            "must be a JSON object",
        ),
        (vec!["maintenance", "remove", "myNode", "zzz"], 10, 400, "Expected a maintenance entry UUID"),
    ];
    for (args, code, status, needle) in cases {
        let out = t.cli(&args);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("error: ") && err.contains(needle), "{args:?}: {err}");
        let mut with_json = vec!["--format", "json"];
        with_json.extend(&args);
        let body = json(&t.cli(&with_json));
        assert_eq!(body["error"]["status"], status, "{args:?}");
        assert!(body["error"]["message"].as_str().unwrap().contains(needle));
    }
    assert_eq!(
        json(&t.cli(&["--format", "json", "maintenance", "list", "myNode"]))["maintenance"][0]["uuid"],
        sys["uuid"]
    );
    let bad_policy = std::env::temp_dir().join(format!("nodemaint-bad-policy-{}.yaml", uuid::Uuid::new_v4()));
    std::fs::write(&bad_policy, "\"baremetal:node:maintenance:get\": \"role:admin and (\"\n").unwrap();
    let out = t.cli(&["maintenance", "list", "myNode", "--policy-file", bad_policy.to_str().unwrap()]);
    std::fs::remove_file(&bad_policy).ok();
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stderr(&out).contains("cannot parse"), "{}", stderr(&out));
}

async fn maintenance_before_upgrade_says_to_upgrade(t: TestDb) {
    t.load_ironic_schema().await;
    let out = t.cli(&["maintenance", "list", "x"]);
    assert_eq!(out.status.code(), Some(5));
    assert!(
        stderr(&out).contains("no `node_maintenance` table (typed maintenance); run `nodemaint db upgrade` first"),
        "{}",
        stderr(&out)
    );
}

backend_tests!(
    maintenance_commands_list_add_remove_with_spec_shapes,
    legacy_set_unset_round_trip_the_reason,
    each_error_class_has_its_exit_code,
    maintenance_before_upgrade_says_to_upgrade,
);

#[test]
fn maintenance_and_history_help_have_examples() {
    for args in [
        ["maintenance", "list"],
        ["maintenance", "add"],
        ["maintenance", "remove"],
        ["maintenance", "set"],
        ["maintenance", "unset"],
        ["history", "list"],
    ] {
        let out = crate::common::nodemaint_cmd("sqlite::memory:", &[args[0], args[1], "--help"]).output().unwrap();
        assert!(stdout(&out).contains("Example:\n  nodemaint"), "{args:?}");
    }
}

/// History hides the identities the entry view hides: "lessees cannot
/// enumerate operator identities" holds for `history list` too.
async fn history_masks_the_identities_the_entry_view_masks(t: TestDb) {
    prepared(&t).await;
    let sys = ["--user", "op-secret"];
    let owner = ["--project", "own1", "--user", "owner-user", "--roles", "member"];
    let lessee = ["--project", "les1", "--user", "lessee-user", "--roles", "admin"];
    let add = |who: &[&str], ty: &str| {
        ok(&t.cli(&[&["maintenance", "add", "myNode", "--type", ty, "--reason", "r"][..], who].concat()));
    };
    add(&sys, "hardware_failure");
    add(&owner, "operator_hold");
    add(&lessee, "operator_hold");
    // The owner releases the lessee's hold: an owner-scope actor on a lessee entry.
    let listed = json(&t.cli(&["--format", "json", "maintenance", "list", "myNode"]));
    let lessee_hold =
        listed["maintenance"].as_array().unwrap().iter().find(|e| e["scope"] == "lessee").unwrap().clone();
    ok(&t.cli(&[&["maintenance", "remove", "myNode", lessee_hold["uuid"].as_str().unwrap()][..], &owner].concat()));

    let history = |who: &[&str]| {
        let out = json(&t.cli(&[&["--format", "json", "history", "list", "myNode"][..], who].concat()));
        out["history"].as_array().unwrap().clone()
    };
    let text = |events: &[serde_json::Value]| serde_json::to_string(events).unwrap();
    // The system operator sees everyone.
    let all = history(&["--user", "op2"]);
    assert_eq!(all.len(), 4);
    assert!(text(&all).contains("op-secret") && text(&all).contains("owner-user"));
    // The owner: the operator masked everywhere, the lessee and itself in clear.
    let seen = history(&owner);
    assert!(!text(&seen).contains("op-secret"), "{}", text(&seen));
    assert_eq!(seen[0]["user"], "******");
    assert!(seen[0]["event"].as_str().unwrap().ends_with("by ****** (project ******)"), "{}", seen[0]["event"]);
    assert!(text(&seen).contains("owner-user") && text(&seen).contains("lessee-user"));
    // The lessee, under a policy that lets lessees read history: no operator, no owner.
    let policy = std::env::temp_dir().join(format!("nodemaint_history_policy_{}.yaml", uuid::Uuid::new_v4().simple()));
    std::fs::write(&policy, "\"baremetal:node:history:get\": \"role:reader\"\n").unwrap();
    let seen = history(&[&lessee[..], &["--policy-file", policy.to_str().unwrap()]].concat());
    std::fs::remove_file(&policy).ok();
    assert!(!text(&seen).contains("op-secret") && !text(&seen).contains("owner-user"), "{}", text(&seen));
    assert!(text(&seen).contains("lessee-user"));
    // Its own hold's release: its own identity in clear, the releasing owner masked.
    let release = seen.iter().find(|e| e["event"].as_str().unwrap().contains(" released ")).unwrap();
    let event = release["event"].as_str().unwrap();
    assert!(event.contains("asserted by lessee-user (project les1)"), "{event}");
    assert!(event.ends_with("by ****** (project ******)"), "{event}");
    assert_eq!((release["user"].as_str(), release["project"].as_str()), (Some("******"), Some("******")));
}

backend_tests!(history_masks_the_identities_the_entry_view_masks);

/// `remove --all --dry-run` answers "which holds block my release?": each
/// entry with the refusal the caller would get, exit 8 when any blocks,
/// and nothing changed.
async fn remove_all_dry_run_names_each_blocker_and_changes_nothing(t: TestDb) {
    prepared(&t).await;
    let lessee = ["--project", "les1", "--user", "lessee-user", "--roles", "admin"];
    ok(&t.cli(&["maintenance", "add", "myNode", "--type", "hardware_failure", "--reason", "PSU", "--user", "op"]));
    ok(&t.cli(
        &[&["maintenance", "add", "myNode", "--type", "operator_hold", "--reason", "ours"][..], &lessee].concat(),
    ));

    let dry =
        t.cli(&[&["--format", "json", "maintenance", "remove", "myNode", "--all", "--dry-run"][..], &lessee].concat());
    assert_eq!(dry.status.code(), Some(8), "{}", stderr(&dry));
    let plan = json(&dry)["would_release"].as_array().unwrap().clone();
    assert_eq!(plan.len(), 2);
    let system = plan.iter().find(|p| p["entry"]["scope"] == "system").unwrap();
    let uuid = system["entry"]["uuid"].as_str().unwrap();
    let refusal = format!(
        "Cannot release maintenance entry {uuid} (type hardware_failure, scope system): not permitted at lessee scope"
    );
    assert_eq!((system["releasable"].as_bool(), system["refusal"].as_str()), (Some(false), Some(refusal.as_str())));
    assert_eq!(system["entry"]["asserted_by"], "******", "masked as in the listing");
    let own = plan.iter().find(|p| p["entry"]["scope"] == "lessee").unwrap();
    assert_eq!((own["releasable"].as_bool(), own["refusal"].as_str()), (Some(true), None));

    // The real release is refused with the same words, and the dry run changed nothing.
    let real = t.cli(&[&["maintenance", "remove", "myNode", "--all"][..], &lessee].concat());
    assert_eq!(real.status.code(), Some(8));
    assert!(stderr(&real).contains(&refusal), "{}", stderr(&real));
    let listed = json(&t.cli(&["--format", "json", "maintenance", "list", "myNode"]));
    assert_eq!(listed["maintenance"].as_array().unwrap().len(), 2);

    // The operator may release both: exit 0, a table that says so.
    let dry = t.cli(&["maintenance", "remove", "myNode", "--all", "--dry-run"]);
    assert_eq!(dry.status.code(), Some(0), "{}", stderr(&dry));
    assert_eq!(stdout(&dry).matches("| yes").count(), 2, "{}", stdout(&dry));
    // --dry-run needs --all.
    let refused = t.cli(&["maintenance", "remove", "myNode", uuid, "--dry-run"]);
    assert_eq!(refused.status.code(), Some(127), "{}", stderr(&refused));
}

backend_tests!(remove_all_dry_run_names_each_blocker_and_changes_nothing);
