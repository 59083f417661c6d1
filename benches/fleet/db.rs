//! A scratch database per measurement on each backend, made from Ironic 39's
//! own schema (the fixtures), dropped afterwards.

use nodemaint::db::connect;
use sea_orm::{ConnectionTrait, Database, DatabaseConnection};
use std::path::PathBuf;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
    Mysql,
}

impl Backend {
    pub fn name(self) -> &'static str {
        match self {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
            Backend::Mysql => "mysql",
        }
    }

    pub fn parse(s: &str) -> Option<Backend> {
        [Backend::Sqlite, Backend::Postgres, Backend::Mysql].into_iter().find(|b| b.name() == s)
    }

    fn server(self) -> String {
        let (var, default) = match self {
            Backend::Postgres => ("NODEMAINT_TEST_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432"),
            _ => ("NODEMAINT_TEST_MYSQL_URL", "mysql://root@127.0.0.1:3306"),
        };
        std::env::var(var)
            .ok()
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| default.to_owned())
            .trim_end_matches('/')
            .to_owned()
    }
}

pub struct Scratch {
    pub backend: Backend,
    pub url: String,
    name: String,
    dir: Option<PathBuf>,
}

impl Scratch {
    /// An empty database holding Ironic 39's schema.
    pub async fn ironic(backend: Backend) -> Scratch {
        let name = format!("nodemaint_bench_{}", uuid::Uuid::new_v4().simple());
        let scratch = match backend {
            Backend::Sqlite => {
                let dir = std::env::temp_dir().join(&name);
                std::fs::create_dir_all(&dir).unwrap();
                let url = format!("sqlite://{}?mode=rwc", dir.join("bench.db").display());
                Scratch { backend, url, name, dir: Some(dir) }
            }
            _ => {
                let admin = admin(backend).await;
                admin.execute_unprepared(&format!("CREATE DATABASE {name}")).await.unwrap();
                admin.close().await.ok();
                Scratch { backend, url: format!("{}/{name}", backend.server()), name, dir: None }
            }
        };
        scratch.load_schema().await;
        scratch
    }

    pub async fn connect(&self) -> DatabaseConnection {
        connect(&self.url).await.expect("connect to the scratch database")
    }

    /// Lets the writes of seeding settle before a timed run, so that neither
    /// side of a comparison pays for the other's: the fleet seeded last still
    /// has dirty pages that the database and the kernel write back in the
    /// background (on PostgreSQL, whichever backfill ran first measured
    /// 0.1 s slower at 100,000 nodes). A checkpoint on PostgreSQL, then `sync`.
    pub async fn settle(&self) {
        if self.backend == Backend::Postgres {
            let admin = admin(self.backend).await;
            admin.execute_unprepared("CHECKPOINT").await.unwrap();
            admin.close().await.ok();
        }
        let _ = std::process::Command::new("sync").status();
    }

    async fn load_schema(&self) {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let shared = std::env::var("NODEMAINT_IRONIC_SCHEMA_DIR")
            .map(|d| if PathBuf::from(&d).is_relative() { root.join(d) } else { PathBuf::from(d) })
            .unwrap_or_else(|_| root.join("../shared/fixtures"));
        let file = match self.backend {
            Backend::Sqlite => shared.join("ironic-39.0.0-schema.sqlite.sql"),
            Backend::Postgres => shared.join("ironic-39.0.0-schema.postgresql.sql"),
            Backend::Mysql => root.join("tests/fixtures/ironic-39.0.0-schema.mysql.sql"),
        };
        let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let mut options = sea_orm::ConnectOptions::new(self.url.clone());
        options.max_connections(1).sqlx_logging(false);
        let db = Database::connect(options).await.unwrap();
        let kept: Vec<&str> = text
            .lines()
            .filter(|l| !l.starts_with("--") && !l.starts_with('\\') && !l.contains("set_config('search_path'"))
            .collect();
        for statement in kept.join("\n").split(";\n").map(str::trim).filter(|s| !s.is_empty()) {
            db.execute_unprepared(statement.trim_end_matches(';')).await.unwrap_or_else(|e| panic!("{statement}: {e}"));
        }
        db.close().await.ok();
    }
}

async fn admin(backend: Backend) -> DatabaseConnection {
    let url = match backend {
        Backend::Postgres => format!("{}/postgres", backend.server()),
        _ => format!("{}/", backend.server()),
    };
    Database::connect(url).await.unwrap_or_else(|e| panic!("{} is unreachable: {e}", backend.server()))
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if let Some(dir) = &self.dir {
            let _ = std::fs::remove_dir_all(dir);
            return;
        }
        let (backend, name) = (self.backend, self.name.clone());
        let _ = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            rt.block_on(async {
                let admin = admin(backend).await;
                let force = if backend == Backend::Postgres { " WITH (FORCE)" } else { "" };
                let _ = admin.execute_unprepared(&format!("DROP DATABASE IF EXISTS {name}{force}")).await;
            });
        })
        .join();
    }
}
