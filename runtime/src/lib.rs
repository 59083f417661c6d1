//! The SQL nodemaint runs outside its migrations, shared by `reconcile`,
//! the upgrade checks and the library: drift detection ([`drift`]), the
//! migration and reconcile locks ([`lock`]), what kind of database a URL
//! points at ([`probe`]), per-backend SQL helpers ([`sql`]), the progress
//! sink long work reports to ([`progress`]), and Python-style JSON
//! ([`py_json`]) that the upgrade-check output and the REST API both write.
//!
//! Not for: schema history (that is `nodemaint-migration`, which depends on
//! this crate for its helpers) or authority decisions (`nodemaint`).

pub mod drift;
pub mod lock;
pub mod probe;
pub mod progress;
pub mod py_json;
pub mod sql;
