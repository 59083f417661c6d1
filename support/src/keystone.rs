//! A real Keystone (30.0.0 from PyPI, in a cached virtual environment),
//! started with `tests/keystone/keystone.sh` on a free loopback port, and
//! its admin API: projects, users, role grants, the catalog, revocation.

use reqwest::StatusCode;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::Command;

/// Every user's password, the bootstrap admin's included.
pub const PASSWORD: &str = "s3cret-test";

/// A running Keystone, stopped (and its files removed) when dropped.
pub struct Keystone {
    dir: PathBuf,
    /// The identity endpoint, `http://127.0.0.1:PORT/v3` (or `https://localhost:PORT/v3`).
    pub url: String,
}

impl Keystone {
    pub fn start() -> Keystone {
        Keystone::start_with(None)
    }

    /// Served over HTTPS with `tls`'s `server.crt` and `server.key` (for
    /// the name `localhost`; `ca.crt` signed them): `https://localhost:PORT/v3`.
    pub fn start_tls(tls: &std::path::Path) -> Keystone {
        Keystone::start_with(Some(tls))
    }

    fn start_with(tls: Option<&std::path::Path>) -> Keystone {
        let dir = std::env::temp_dir().join(format!("nodemaint-keystone-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let mut script = Keystone::script(&dir, "start");
        script.env("NODEMAINT_KEYSTONE_PORT", port.to_string());
        if let Some(tls) = tls {
            script.env("NODEMAINT_KEYSTONE_TLS", tls);
        }
        let out = script.output().unwrap();
        assert!(
            out.status.success(),
            "Keystone did not start: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let url = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        Keystone { dir, url }
    }

    fn script(dir: &std::path::Path, command: &str) -> Command {
        let mut c = Command::new("bash");
        c.arg(concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/keystone/keystone.sh"))
            .arg(command)
            .env("NODEMAINT_KEYSTONE_DIR", dir)
            .env("NODEMAINT_KEYSTONE_PASSWORD", PASSWORD);
        c
    }

    /// Stops the server (the files stay until drop).
    pub fn stop(&self) {
        let _ = Keystone::script(&self.dir, "stop").status();
    }
}

impl Drop for Keystone {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// How a token is scoped.
#[derive(Clone, Copy)]
pub enum Scope<'a> {
    System,
    Project(&'a str),
}

/// A token for `user` from Keystone's password method.
pub async fn token(url: &str, user: &str, scope: Scope<'_>) -> String {
    token_via(&reqwest::Client::new(), url, user, scope).await
}

/// [`token`] through `http` (a client that trusts a TLS Keystone's CA).
pub async fn token_via(http: &reqwest::Client, url: &str, user: &str, scope: Scope<'_>) -> String {
    let scope = match scope {
        Scope::System => json!({"system": {"all": true}}),
        Scope::Project(id) => json!({"project": {"id": id}}),
    };
    let body = json!({"auth": {
        "identity": {"methods": ["password"], "password": {"user": {"name": user, "domain": {"name": "Default"}, "password": PASSWORD}}},
        "scope": scope,
    }});
    let r = http.post(format!("{url}/auth/tokens?nocatalog")).json(&body).send().await.unwrap();
    assert_eq!(r.status(), StatusCode::CREATED, "token for {user}");
    r.headers()["X-Subject-Token"].to_str().unwrap().to_owned()
}

/// Keystone's admin API, as the bootstrap admin with a system-scoped token.
pub struct Admin {
    http: reqwest::Client,
    url: String,
    token: String,
}

impl Admin {
    pub async fn new(url: &str) -> Admin {
        Admin { http: reqwest::Client::new(), url: url.to_owned(), token: token(url, "admin", Scope::System).await }
    }

    pub async fn send(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        let mut request =
            self.http.request(method.clone(), format!("{}{path}", self.url)).header("X-Auth-Token", &self.token);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let r = request.send().await.unwrap();
        let status = r.status();
        let text = r.text().await.unwrap();
        assert!(status.is_success(), "{method} {path}: {status} {text}");
        if text.is_empty() { Value::Null } else { serde_json::from_str(&text).unwrap() }
    }

    pub async fn role(&self, name: &str) -> String {
        let roles = self.send(reqwest::Method::GET, &format!("/roles?name={name}"), None).await;
        roles["roles"][0]["id"].as_str().unwrap_or_else(|| panic!("no role {name}")).to_owned()
    }

    pub async fn project(&self, name: &str) -> String {
        let p = self
            .send(reqwest::Method::POST, "/projects", Some(json!({"project": {"name": name, "domain_id": "default"}})))
            .await;
        p["project"]["id"].as_str().unwrap().to_owned()
    }

    pub async fn user(&self, name: &str) -> String {
        let body = json!({"user": {"name": name, "domain_id": "default", "password": PASSWORD}});
        let u = self.send(reqwest::Method::POST, "/users", Some(body)).await;
        u["user"]["id"].as_str().unwrap().to_owned()
    }

    pub async fn grant(&self, user: &str, role: &str, scope: Scope<'_>) {
        let role = self.role(role).await;
        let path = match scope {
            Scope::System => format!("/system/users/{user}/roles/{role}"),
            Scope::Project(project) => format!("/projects/{project}/users/{user}/roles/{role}"),
        };
        self.send(reqwest::Method::PUT, &path, None).await;
    }

    /// The `baremetal` service, its public endpoint at `endpoint`.
    pub async fn catalog(&self, endpoint: &str) {
        let service = self
            .send(reqwest::Method::POST, "/services", Some(json!({"service": {"type": "baremetal", "name": "ironic"}})))
            .await;
        let id = service["service"]["id"].as_str().unwrap();
        let body =
            json!({"endpoint": {"service_id": id, "interface": "public", "region_id": "RegionOne", "url": endpoint}});
        self.send(reqwest::Method::POST, "/endpoints", Some(body)).await;
    }

    pub async fn revoke(&self, token: &str) {
        let r = self
            .http
            .delete(format!("{}/auth/tokens", self.url))
            .header("X-Auth-Token", &self.token)
            .header("X-Subject-Token", token)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::NO_CONTENT);
    }
}
