//! Test and benchmark support for nodemaint: a scratch database per test
//! or measurement on each backend (a file on SQLite, `CREATE DATABASE` on
//! PostgreSQL and MySQL), dropped afterwards, and Ironic 39's own schema
//! loaded from the fixtures; 1 % drift of each kind ([`drift`]); a three-node
//! Galera cluster ([`galera`]) and a real Keystone ([`keystone`]), started by
//! the scripts under `tests/`.
//!
//! Not for: anything a deployment runs. It is `publish = false`, shared by
//! `tests/integration` and `benches/fleet` so they cannot drift apart.

pub mod drift;
pub mod galera;
pub mod keystone;

use sea_orm::{ConnectionTrait, Database, DatabaseConnection};
use std::path::PathBuf;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
    Mysql,
}

impl Backend {
    pub const ALL: [Backend; 3] = [Backend::Sqlite, Backend::Postgres, Backend::Mysql];

    pub fn name(self) -> &'static str {
        match self {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
            Backend::Mysql => "mysql",
        }
    }

    pub fn parse(s: &str) -> Option<Backend> {
        Backend::ALL.into_iter().find(|b| b.name() == s)
    }

    /// The variable naming this backend's server (none for SQLite).
    pub fn server_var(self) -> Option<&'static str> {
        match self {
            Backend::Sqlite => None,
            Backend::Postgres => Some("NODEMAINT_TEST_POSTGRES_URL"),
            Backend::Mysql => Some("NODEMAINT_TEST_MYSQL_URL"),
        }
    }

    /// The server URL from [`Backend::server_var`], without a trailing slash.
    pub fn server_from_env(self) -> Option<String> {
        let var = self.server_var()?;
        std::env::var(var).ok().filter(|v| !v.is_empty()).map(|v| v.trim_end_matches('/').to_owned())
    }
}

/// One scratch database; dropped (file removed, or `DROP DATABASE`) on drop.
pub struct ScratchDb {
    pub backend: Backend,
    pub url: String,
    server: Option<String>,
    name: String,
    dir: Option<PathBuf>,
}

impl ScratchDb {
    /// A new empty database named `<prefix>_<uuid>`: on SQLite a file in a
    /// directory of its own, elsewhere a database on `server`.
    pub async fn empty(backend: Backend, server: Option<&str>, prefix: &str) -> ScratchDb {
        let name = format!("{prefix}_{}", uuid::Uuid::new_v4().simple());
        let Some(server) = server.filter(|_| backend != Backend::Sqlite) else {
            let dir = std::env::temp_dir().join(&name);
            std::fs::create_dir_all(&dir).expect("temp dir");
            let url = format!("sqlite://{}?mode=rwc", dir.join("nodemaint.db").display());
            return ScratchDb { backend, url, server: None, name, dir: Some(dir) };
        };
        let server = server.trim_end_matches('/').to_owned();
        let admin = admin(backend, &server).await;
        admin.execute_unprepared(&format!("CREATE DATABASE {name}")).await.expect("create the scratch database");
        admin.close().await.ok();
        ScratchDb { backend, url: database_url(&server, &name), server: Some(server), name, dir: None }
    }

    /// The server this database lives on (none for SQLite).
    pub fn server(&self) -> Option<&str> {
        self.server.as_deref()
    }

    /// Loads Ironic 39.0.0's own schema (made by `ironic-dbsync create_schema`).
    pub async fn load_ironic_schema(&self) {
        let file = ironic_schema_file(self.backend);
        let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        // One connection, so session settings in the dump apply to every statement.
        let mut options = sea_orm::ConnectOptions::new(self.url.clone());
        options.max_connections(1).sqlx_logging(false);
        let db = Database::connect(options).await.expect("connect to the scratch database");
        for statement in split_sql(&text) {
            db.execute_unprepared(&statement).await.unwrap_or_else(|e| panic!("{statement}: {e}"));
        }
        if self.backend != Backend::Mysql {
            // The MySQL dump carries its alembic row already.
            db.execute_unprepared("INSERT INTO alembic_version (version_num) VALUES ('9fb44677ef15')").await.unwrap();
        }
        db.close().await.ok();
    }
}

/// The URL of database `name` on `server`. A query on the server URL
/// (`postgres://postgres@127.0.0.1:5432?sslmode=disable`) is kept, after the
/// database name.
pub fn database_url(server: &str, name: &str) -> String {
    match server.split_once('?') {
        Some((base, query)) => format!("{}/{name}?{query}", base.trim_end_matches('/')),
        None => format!("{}/{name}", server.trim_end_matches('/')),
    }
}

/// The admin connection of a server: its `postgres` database, or none on MySQL.
pub async fn admin(backend: Backend, server: &str) -> DatabaseConnection {
    Database::connect(admin_url(backend, server)).await.unwrap_or_else(|e| panic!("{server} is unreachable: {e}"))
}

fn admin_url(backend: Backend, server: &str) -> String {
    match backend {
        Backend::Postgres => database_url(server, "postgres"),
        _ => database_url(server, ""),
    }
}

impl Drop for ScratchDb {
    fn drop(&mut self) {
        if let Some(dir) = &self.dir {
            let _ = std::fs::remove_dir_all(dir);
            return;
        }
        let (Some(server), backend, name) = (self.server.clone(), self.backend, self.name.clone()) else {
            return;
        };
        // Drop may run inside a runtime: do the async work on a thread of its own.
        let _ = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            rt.block_on(async {
                if let Ok(admin) = Database::connect(admin_url(backend, &server)).await {
                    let force = if backend == Backend::Postgres { " WITH (FORCE)" } else { "" };
                    let _ = admin.execute_unprepared(&format!("DROP DATABASE IF EXISTS {name}{force}")).await;
                    let _ = admin.close().await;
                }
            });
        })
        .join();
    }
}

/// Ironic 39's schema for `backend`: SQLite and PostgreSQL from
/// `NODEMAINT_IRONIC_SCHEMA_DIR` (default `../shared/fixtures`), MySQL from
/// this repository's `tests/fixtures`.
pub fn ironic_schema_file(backend: Backend) -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    match backend {
        Backend::Mysql => root.join("tests/fixtures/ironic-39.0.0-schema.mysql.sql"),
        _ => {
            let dir = std::env::var("NODEMAINT_IRONIC_SCHEMA_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|_| root.join("../shared/fixtures"));
            let dir = if dir.is_relative() { root.join(dir) } else { dir };
            let file = if backend == Backend::Postgres {
                "ironic-39.0.0-schema.postgresql.sql"
            } else {
                "ironic-39.0.0-schema.sqlite.sql"
            };
            dir.join(file)
        }
    }
}

/// Statements of a schema dump, without comments, psql meta-commands, or
/// pg_dump's empty search_path (which would hide every table from the pool).
pub fn split_sql(text: &str) -> Vec<String> {
    let kept: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with("--") && !l.starts_with('\\') && !l.contains("set_config('search_path'"))
        .collect();
    kept.join("\n")
        .split(";\n")
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.trim_end_matches(';').to_owned())
        .collect()
}
