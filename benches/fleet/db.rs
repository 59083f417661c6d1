//! A scratch database per measurement on each backend, made from Ironic 39's
//! own schema (the fixtures), dropped afterwards: the tests' scratch
//! databases (`nodemaint-test-support`), with the loopback servers as the
//! default and a way to let seeding settle before a timed run.

use nodemaint::db::connect;
pub use nodemaint_test_support::Backend;
use nodemaint_test_support::{ScratchDb, admin};
use sea_orm::{ConnectionTrait, DatabaseConnection};

/// The server a backend's scratch databases live on: its variable, else the loopback default.
fn server(backend: Backend) -> Option<String> {
    let default = match backend {
        Backend::Sqlite => return None,
        Backend::Postgres => "postgres://postgres@127.0.0.1:5432",
        Backend::Mysql => "mysql://root@127.0.0.1:3306",
    };
    Some(backend.server_from_env().unwrap_or_else(|| default.to_owned()))
}

pub struct Scratch(ScratchDb);

impl std::ops::Deref for Scratch {
    type Target = ScratchDb;
    fn deref(&self) -> &ScratchDb {
        &self.0
    }
}

impl Scratch {
    /// An empty database holding Ironic 39's schema.
    pub async fn ironic(backend: Backend) -> Scratch {
        let scratch = ScratchDb::empty(backend, server(backend).as_deref(), "nodemaint_bench").await;
        scratch.load_ironic_schema().await;
        Scratch(scratch)
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
        if let (Backend::Postgres, Some(server)) = (self.backend, self.server()) {
            let admin = admin(self.backend, server).await;
            admin.execute_unprepared("CHECKPOINT").await.unwrap();
            admin.close().await.ok();
        }
        let _ = std::process::Command::new("sync").status();
    }
}
