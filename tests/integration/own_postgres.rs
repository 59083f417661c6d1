//! A PostgreSQL cluster of the test's own, on a free loopback port (never
//! the shared server), for tests that need TLS on or a database that goes
//! away: initdb, pg_ctl start/stop as `postgres`, removed on drop.

use crate::tls::{Certs, make_certs};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

pub(crate) fn run(cmd: &mut Command) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

pub(crate) fn scratch(owner: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nodemaint_tls_{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).unwrap();
    run(Command::new("chown").arg(format!("{owner}:")).arg(&dir));
    dir
}

/// Polls `ready` for up to a minute.
pub(crate) fn wait_until(what: &str, mut ready: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !ready() {
        assert!(Instant::now() < deadline, "{what} did not start within 60 s");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// A PostgreSQL cluster of its own (TLS on or off), trust authentication,
/// one database `ironic`; stopped on drop.
pub(crate) struct OwnPostgres {
    dir: PathBuf,
    bin: PathBuf,
    pub(crate) port: u16,
    pub(crate) certs: Option<Certs>,
    options: String,
}

impl OwnPostgres {
    pub(crate) fn start(tls: bool) -> OwnPostgres {
        let bin = std::fs::read_dir("/usr/lib/postgresql")
            .expect("PostgreSQL's server binaries under /usr/lib/postgresql")
            .map(|e| e.unwrap().path().join("bin"))
            .find(|b| b.join("initdb").exists())
            .expect("initdb");
        let dir = scratch("postgres");
        let data = dir.join("data");
        let as_postgres = |program: &Path| {
            let mut cmd = Command::new("setpriv");
            cmd.args(["--reuid=postgres", "--regid=postgres", "--init-groups"]).arg(program);
            cmd
        };
        run(as_postgres(&bin.join("initdb")).args(["-A", "trust", "-U", "postgres", "--no-sync", "-D"]).arg(&data));
        let certs = tls.then(|| make_certs(&dir, "postgres"));
        let port = free_port();
        let mut options = format!(
            "-c port={port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={} -c fsync=off",
            dir.display()
        );
        if let Some(certs) = &certs {
            options += &format!(
                " -c ssl=on -c ssl_cert_file={} -c ssl_key_file={}",
                certs.cert.display(),
                certs.key.display()
            );
        }
        let pg = OwnPostgres { dir, bin, port, certs, options };
        pg.start_again();
        run(as_postgres(&pg.bin.join("createdb")).arg("-h").arg(&pg.dir).args([
            "-p",
            &pg.port.to_string(),
            "-U",
            "postgres",
            "ironic",
        ]));
        pg
    }

    fn pg_ctl(&self) -> Command {
        let mut cmd = Command::new("setpriv");
        cmd.args(["--reuid=postgres", "--regid=postgres", "--init-groups"])
            .arg(self.bin.join("pg_ctl"))
            .arg("-D")
            .arg(self.dir.join("data"));
        cmd
    }

    /// Starts the cluster (again, after [`OwnPostgres::stop`]) on its port.
    pub(crate) fn start_again(&self) {
        run(self.pg_ctl().arg("-l").arg(self.dir.join("log")).args(["-w", "-o", &self.options, "start"]));
    }

    /// Stops it as an administrator would (`pg_ctl stop -m fast`): sessions
    /// are told "terminating connection due to administrator command".
    pub(crate) fn stop(&self) {
        run(self.pg_ctl().args(["-w", "-m", "fast", "stop"]));
    }

    pub(crate) fn url(&self, host: &str, query: &str) -> String {
        format!("postgresql+psycopg2://postgres@{host}:{}/ironic?{query}", self.port)
    }
}

impl Drop for OwnPostgres {
    fn drop(&mut self) {
        let _ = self.pg_ctl().args(["-m", "immediate", "stop"]).output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
