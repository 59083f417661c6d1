//! TLS to the database, against real servers with TLS turned on: a
//! PostgreSQL cluster and a MariaDB server started by the test on free
//! loopback ports, with a certificate authority made by the test (a server
//! certificate for `localhost` only, and a second, unrelated CA).
//!
//! `verify-full` / `VERIFY_IDENTITY` with the right CA connects; with the
//! wrong CA, or a host name the certificate was not issued for, it is
//! refused; `require` connects without a CA; and a connection that says it
//! is encrypted is (the server is asked).

use crate::common::{nodemaint_cmd, ok, stderr};
use crate::own_postgres::{OwnPostgres, free_port, run, scratch, wait_until};
use sea_orm::{ConnectionTrait, Statement};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A CA, a server certificate it signed for `localhost` (no IP address),
/// and another CA that signed nothing here.
pub(crate) struct Certs {
    pub(crate) ca: PathBuf,
    pub(crate) wrong_ca: PathBuf,
    pub(crate) cert: PathBuf,
    pub(crate) key: PathBuf,
}

/// Made with `openssl` in `dir`, owned by `owner` (the server's user).
pub(crate) fn make_certs(dir: &Path, owner: &str) -> Certs {
    let p = |name: &str| dir.join(name);
    let ca_ext = ["-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"];
    for (name, subject) in [("ca", "/CN=nodemaint test CA"), ("wrong-ca", "/CN=someone else's CA")] {
        run(Command::new("openssl")
            .args([
                "req",
                "-x509",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:P-256",
                "-nodes",
                "-days",
                "2",
                "-subj",
                subject,
            ])
            .args(ca_ext)
            .arg("-keyout")
            .arg(p(&format!("{name}.key")))
            .arg("-out")
            .arg(p(&format!("{name}.crt"))));
    }
    run(Command::new("openssl")
        .args([
            "req",
            "-new",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-subj",
            "/CN=localhost",
        ])
        .arg("-keyout")
        .arg(p("server.key"))
        .arg("-out")
        .arg(p("server.csr")));
    std::fs::write(
        p("server.ext"),
        "subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    run(Command::new("openssl")
        .args(["x509", "-req", "-days", "2", "-CAcreateserial"])
        .arg("-in")
        .arg(p("server.csr"))
        .arg("-CA")
        .arg(p("ca.crt"))
        .arg("-CAkey")
        .arg(p("ca.key"))
        .arg("-extfile")
        .arg(p("server.ext"))
        .arg("-out")
        .arg(p("server.crt")));
    run(Command::new("chown").arg("-R").arg(format!("{owner}:")).arg(dir));
    run(Command::new("chmod").arg("0600").arg(p("server.key")));
    Certs { ca: p("ca.crt"), wrong_ca: p("wrong-ca.crt"), cert: p("server.crt"), key: p("server.key") }
}

/// A MariaDB server of its own, TLS on, no grant tables; killed on drop.
struct TlsMariadb {
    dir: PathBuf,
    server: std::process::Child,
    port: u16,
    certs: Certs,
}

impl TlsMariadb {
    fn start() -> TlsMariadb {
        let dir = scratch("mysql");
        let data = dir.join("data");
        run(Command::new("mariadb-install-db")
            .args(["--no-defaults", "--user=mysql", "--skip-test-db", "--auth-root-authentication-method=normal"])
            .arg(format!("--datadir={}", data.display())));
        let certs = make_certs(&dir, "mysql");
        let port = free_port();
        let server = Command::new("/usr/sbin/mariadbd")
            .args([
                "--no-defaults",
                "--user=mysql",
                "--bind-address=127.0.0.1",
                "--skip-grant-tables",
                "--skip-log-bin",
            ])
            .args(["--innodb-buffer-pool-size=16M", "--innodb-log-file-size=8M"])
            .arg(format!("--port={port}"))
            .arg(format!("--datadir={}", data.display()))
            .arg(format!("--socket={}", dir.join("mysqld.sock").display()))
            .arg(format!("--pid-file={}", dir.join("mysqld.pid").display()))
            .arg(format!("--log-error={}", dir.join("error.log").display()))
            .arg(format!("--ssl-ca={}", certs.ca.display()))
            .arg(format!("--ssl-cert={}", certs.cert.display()))
            .arg(format!("--ssl-key={}", certs.key.display()))
            .spawn()
            .expect("start mariadbd");
        let ping = || {
            Command::new("mariadb-admin")
                .args(["-h", "127.0.0.1", "-u", "root", "--skip-ssl", "-P", &port.to_string(), "ping"])
                .output()
                .is_ok_and(|o| o.status.success())
        };
        wait_until("mariadbd", ping);
        run(Command::new("mariadb").args([
            "-h",
            "127.0.0.1",
            "-u",
            "root",
            "--skip-ssl",
            "-P",
            &port.to_string(),
            "-e",
            "CREATE DATABASE ironic",
        ]));
        TlsMariadb { dir, server, port, certs }
    }

    fn url(&self, host: &str, query: &str) -> String {
        format!("mysql+pymysql://root@{host}:{}/ironic?{query}", self.port)
    }
}

impl Drop for TlsMariadb {
    fn drop(&mut self) {
        let _ = self.server.kill();
        let _ = self.server.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn refused_for_tls(url: &str) {
    let out = nodemaint_cmd(url, &["db", "status"]).output().unwrap();
    assert_eq!(out.status.code(), Some(4), "{url}: {}", stderr(&out));
    assert!(stderr(&out).contains("TLS parameters"), "{url}: {}", stderr(&out));
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
}

/// Whether the server sees this connection encrypted.
async fn encrypted(url: &str, sql: &str) -> bool {
    let db = nodemaint::db::connect(&nodemaint::db::normalize_url(url).unwrap()).await.unwrap();
    let row =
        db.query_one_raw(Statement::from_string(db.get_database_backend(), sql.to_owned())).await.unwrap().unwrap();
    let answer: String = row.try_get_by_index(0).unwrap();
    db.close().await.ok();
    !answer.is_empty() && answer != "f" && answer != "false"
}

fn ca(path: &Path) -> String {
    path.display().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_verify_full_connects_with_the_right_ca_and_refuses_a_wrong_ca_or_host() {
    if !crate::common::runs_as_root("tls::postgres_verify_full") {
        return;
    }
    let pg = OwnPostgres::start(true);
    let (right, wrong) = {
        let certs = pg.certs.as_ref().expect("TLS on");
        (ca(&certs.ca), ca(&certs.wrong_ca))
    };
    ok(&nodemaint_cmd(
        &pg.url("localhost", &format!("sslmode=verify-full&sslrootcert={right}")),
        &["-q", "db", "upgrade"],
    )
    .output()
    .unwrap());
    let checked = pg.url("localhost", &format!("sslmode=verify-full&sslrootcert={right}"));
    assert!(encrypted(&checked, "SELECT CAST(ssl AS TEXT) FROM pg_stat_ssl WHERE pid = pg_backend_pid()").await);
    refused_for_tls(&pg.url("localhost", &format!("sslmode=verify-full&sslrootcert={wrong}")));
    refused_for_tls(&pg.url("127.0.0.1", &format!("sslmode=verify-full&sslrootcert={right}")));
    // verify-ca checks the chain, not the name; require encrypts without checking.
    ok(&nodemaint_cmd(&pg.url("127.0.0.1", &format!("sslmode=verify-ca&sslrootcert={right}")), &["db", "status"])
        .output()
        .unwrap());
    let required = pg.url("127.0.0.1", "sslmode=require");
    ok(&nodemaint_cmd(&required, &["db", "status"]).output().unwrap());
    assert!(encrypted(&required, "SELECT CAST(ssl AS TEXT) FROM pg_stat_ssl WHERE pid = pg_backend_pid()").await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mysql_verify_identity_connects_with_the_right_ca_and_refuses_a_wrong_ca_or_host() {
    if !crate::common::runs_as_root("tls::mysql_verify_identity") {
        return;
    }
    let my = TlsMariadb::start();
    let (right, wrong) = (ca(&my.certs.ca), ca(&my.certs.wrong_ca));
    // PyMySQL's spelling, as a deployer copies it from ironic.conf.
    let checked = my.url("localhost", &format!("ssl_ca={right}&ssl_verify_identity=true&charset=utf8"));
    ok(&nodemaint_cmd(&checked, &["-q", "db", "upgrade"]).output().unwrap());
    assert!(
        encrypted(
            &checked,
            "SELECT VARIABLE_VALUE FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME = 'SSL_CIPHER'"
        )
        .await
    );
    refused_for_tls(&my.url("localhost", &format!("ssl_ca={wrong}&ssl_verify_identity=true")));
    refused_for_tls(&my.url("127.0.0.1", &format!("ssl_ca={right}&ssl_verify_identity=true")));
    // A CA alone verifies the chain (PyMySQL's default), not the name.
    ok(&nodemaint_cmd(&my.url("127.0.0.1", &format!("ssl_ca={right}")), &["db", "status"]).output().unwrap());
    let required = my.url("127.0.0.1", "ssl_mode=REQUIRED");
    ok(&nodemaint_cmd(&required, &["db", "status"]).output().unwrap());
    assert!(
        encrypted(
            &required,
            "SELECT VARIABLE_VALUE FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME = 'SSL_CIPHER'"
        )
        .await
    );
}

/// A parameter nodemaint does not understand is refused, by name, before
/// any connection is tried (it might have been a TLS setting).
#[test]
fn unknown_url_parameters_are_refused_by_name() {
    for url in ["postgresql://u@127.0.0.1:1/ironic?bogus=1", "mysql+pymysql://u@127.0.0.1:1/ironic?ssl=1"] {
        let out = nodemaint_cmd(url, &["db", "status"]).output().unwrap();
        assert_eq!(out.status.code(), Some(3), "{url}: {}", stderr(&out));
        assert!(stderr(&out).contains("does not understand the parameter"), "{}", stderr(&out));
    }
}
