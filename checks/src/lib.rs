//! `nodemaint upgrade check`: pre-flight checks in the manner of
//! oslo.upgradecheck. A check is a name and a function that returns
//! Success, Warning or Failure with details saying how to fix it; checks are
//! independent, read-only and idempotent; the run's exit code is the worst
//! result. Unlike oslo, a check that errors or panics is reported as a
//! Failure and the others still run.
//!
//! - [`framework`]: results, the runner, the exit code;
//! - [`render`]: oslo's table and `--json` output, byte for byte;
//! - [`checks`]: the checks, one small module each, registered in [`checks::ALL`];
//! - [`census`]: the one pass over `node_maintenance` the row checks share.
//!
//! Not for: repairing anything (that is `nodemaint reconcile`).

pub mod census;
pub mod checks;
pub mod framework;
pub mod render;

pub use framework::{Check, CheckResult, Code, Context, Report, run};
