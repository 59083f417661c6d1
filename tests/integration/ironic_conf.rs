//! The deployer's own `ironic.conf`: the all-in-one file in
//! `../shared/fixtures/` (as Ironic 39 runs with it), pointed at the test's
//! database, drives `db upgrade`, `upgrade check`, the CLI and `serve`
//! through `--config-file` and `--config-dir`, with Ironic's key names and
//! oslo.config's syntax, on every backend.

use crate::api::Server;
use crate::backend_tests;
use crate::common::{TestDb, bare_cmd, ok, stderr};
use std::path::{Path, PathBuf};
use std::process::Output;

backend_tests!(the_deployments_ironic_conf_drives_every_command);

/// The fixture as a deployer has it.
fn fixture() -> String {
    let dir = std::env::var("NODEMAINT_IRONIC_SCHEMA_DIR").unwrap_or_else(|_| "../shared/fixtures".into());
    std::fs::read_to_string(Path::new(&dir).join("ironic-all-in-one.conf")).expect("the all-in-one ironic.conf fixture")
}

/// The URL as it is written in an ironic.conf: SQLAlchemy's spelling.
fn sqlalchemy(url: &str) -> String {
    let url = url.replacen("postgres://", "postgresql+psycopg2://", 1).replacen("mysql://", "mysql+pymysql://", 1);
    match url.strip_prefix("sqlite://") {
        // sqlite:////abs/path, without nodemaint's own ?mode=rwc.
        Some(path) => format!("sqlite:///{}", path.split('?').next().unwrap()),
        None => url,
    }
}

/// A directory of the test's own, removed on drop.
struct Dir(PathBuf);

impl Dir {
    fn new() -> Dir {
        let dir = std::env::temp_dir().join(format!("nodemaint-conf-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).unwrap();
        Dir(dir)
    }

    fn write(&self, name: &str, text: &str) -> String {
        let path = self.0.join(name);
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `nodemaint ARGS…` with no --database-url: everything comes from the files.
fn run(args: &[&str]) -> Output {
    bare_cmd(args).output().expect("run nodemaint")
}

async fn the_deployments_ironic_conf_drives_every_command(t: TestDb) {
    let dir = Dir::new();
    // The fixture's [database] has only comments: the deployer adds the line.
    let conf = fixture().replacen("[database]\n", &format!("[database]\nconnection = {}\n", sqlalchemy(&t.url)), 1);
    let file = dir.write("ironic.conf", &conf);

    let upgraded = ok(&run(&["--config-file", &file, "db", "upgrade"]));
    assert!(upgraded.contains("Applied"), "{upgraded}");
    ok(&run(&["--config-file", &file, "-q", "node", "create", "--name", "n1", "--maintenance", "--reason", "old"]));
    ok(&run(&["--config-file", &file, "-q", "reconcile"]));
    let check = run(&["--config-file", &file, "upgrade", "check"]);
    assert_eq!(check.status.code(), Some(0), "{}", String::from_utf8_lossy(&check.stdout));

    // --config-dir: every *.conf by name, later files winning; the fixture
    // first with a database that does not exist, then the right one.
    let conf_dir = Dir::new();
    conf_dir.write("00-ironic.conf", &conf.replacen("connection = ", "connection = sqlite:////nonexistent/x.db\n#", 1));
    conf_dir.write("10-database.conf", &format!("[database]\nconnection = {}\n", sqlalchemy(&t.url)));
    conf_dir.write("README", "not a .conf file: ignored\n");
    let listed =
        ok(&run(&["--config-dir", &conf_dir.0.display().to_string(), "--format", "json", "node", "show", "n1"]));
    assert!(listed.contains("\"maintenance\": true"), "{listed}");

    // serve: auth_strategy = noauth comes from the file; /healthcheck answers.
    let server =
        Server::start_with_args(&["--config-file", &file, "serve", "--bind", "127.0.0.1:0", "--tick-interval", "0"]);
    let health = reqwest::get(format!("{}/healthcheck", server.base)).await.unwrap();
    assert_eq!(health.status(), 200);
    assert_eq!(health.text().await.unwrap(), "OK");
    let node = reqwest::Client::new()
        .get(format!("{}/v1/nodes/n1", server.base))
        .header("X-OpenStack-Ironic-API-Version", "1.65")
        .send()
        .await
        .unwrap();
    assert_eq!(node.status(), 200, "noauth from [DEFAULT] auth_strategy: no identity needed");
    drop(server);

    // [healthcheck] enabled = false turns it off.
    let off = dir.write("off.conf", &format!("{conf}\n[healthcheck]\nenabled = false\n"));
    let server =
        Server::start_with_args(&["--config-file", &off, "serve", "--bind", "127.0.0.1:0", "--tick-interval", "0"]);
    assert_eq!(reqwest::get(format!("{}/healthcheck", server.base)).await.unwrap().status(), 404);
}

#[test]
fn bad_files_are_configuration_errors_naming_the_file_and_line() {
    let dir = Dir::new();
    let broken = dir.write("broken.conf", "[DEFAULT]\nhost = a\nthis line is not an assignment\n");
    let out = run(&["--config-file", &broken, "db", "status"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stderr(&out).contains("broken.conf line 3"), "{}", stderr(&out));

    let good = dir.write("ironic.conf", "[database]\nconnection = sqlite:////tmp/x.db\n");
    let toml = dir.write("nodemaint.toml", "[database]\nurl = \"sqlite://x.db\"\n");
    let out = run(&["--config", &toml, "--config-file", &good, "db", "status"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stderr(&out).contains("use one of them"), "{}", stderr(&out));

    let out = run(&[
        "--config-file",
        &dir.write("missing-dir.conf", "[DEFAULT]\n"),
        "--config-dir",
        "/nonexistent",
        "db",
        "status",
    ]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stderr(&out).contains("/nonexistent"), "{}", stderr(&out));

    let strategy = dir
        .write("basic.conf", "[DEFAULT]\nauth_strategy = http_basic\n[database]\nconnection = sqlite:////tmp/x.db\n");
    let out = run(&["--config-file", &strategy, "serve"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stderr(&out).contains("auth_strategy = http_basic"), "{}", stderr(&out));
}
