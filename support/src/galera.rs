//! A three-node MariaDB Galera cluster on loopback, started (and, for a
//! cluster of a test's own, stopped) with `tests/galera/cluster.sh`; it
//! needs root (the servers run as `mysql`).

use std::process::Command;

/// A running cluster: its three server URLs.
pub struct Cluster {
    dir: String,
    base: u16,
    pub servers: Vec<String>,
    own: bool,
}

impl Cluster {
    /// The shared cluster on ports 3311-3313, started if it is not running.
    pub fn shared() -> Cluster {
        Cluster::start("/tmp/nodemaint-galera", 3310, false)
    }

    /// A cluster of the caller's own on ports `base + 1..=3` (for tests that
    /// kill its nodes), stopped when dropped.
    pub fn own(base: u16) -> Cluster {
        Cluster::start(&format!("/tmp/nodemaint-galera-{base}"), base, true)
    }

    fn start(dir: &str, base: u16, own: bool) -> Cluster {
        let mut cluster = Cluster { dir: dir.to_owned(), base, servers: Vec::new(), own };
        let out = cluster.script(&["start"]).output().expect("run tests/galera/cluster.sh");
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        assert!(out.status.success(), "the Galera cluster did not start: {}{}", text(&out.stdout), text(&out.stderr));
        cluster.servers = text(&out.stdout).lines().map(str::to_owned).collect();
        assert_eq!(cluster.servers.len(), 3, "three URLs: {}", text(&out.stdout));
        cluster
    }

    /// `cluster.sh ARGS…` for this cluster (`kill N`, `restart N`, `status`).
    pub fn script(&self, args: &[&str]) -> Command {
        let mut command = Command::new("bash");
        command
            .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/galera/cluster.sh"))
            .args(args)
            .env("NODEMAINT_GALERA_DIR", &self.dir)
            .env("NODEMAINT_GALERA_PORT", self.base.to_string());
        command
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if self.own {
            let _ = self.script(&["stop"]).status();
        }
    }
}
