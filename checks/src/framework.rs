//! Results, the runner and the exit code.

use crate::census::Census;
use sea_orm::DatabaseConnection;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// oslo.upgradecheck's result codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Code {
    Success = 0,
    Warning = 1,
    Failure = 2,
}

impl Code {
    pub fn label(self) -> &'static str {
        match self {
            Code::Success => "Success",
            Code::Warning => "Warning",
            Code::Failure => "Failure",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckResult {
    pub code: Code,
    /// How to fix it; `None` prints as `None`, as in oslo.
    pub details: Option<String>,
}

impl CheckResult {
    pub fn success(details: Option<String>) -> Self {
        CheckResult { code: Code::Success, details }
    }
    pub fn warning(details: impl Into<String>) -> Self {
        CheckResult { code: Code::Warning, details: Some(details.into()) }
    }
    pub fn failure(details: impl Into<String>) -> Self {
        CheckResult { code: Code::Failure, details: Some(details.into()) }
    }
}

/// What every check may read.
pub struct Context {
    pub db: DatabaseConnection,
    /// `[upgrade] pin_release_version`, when set.
    pub pinned: Option<String>,
    /// Where the pin came from (a flag, a config file), for the details.
    pub pin_source: Option<String>,
    /// Whether the configuration turns notifications on.
    pub notifications: bool,
    /// Taken by the first check that asks, shared by the rest.
    census: tokio::sync::OnceCell<Census>,
}

impl Context {
    pub fn new(db: DatabaseConnection, pinned: Option<String>) -> Self {
        Context { db, pinned, pin_source: None, notifications: false, census: tokio::sync::OnceCell::new() }
    }

    /// Says where the pin came from in the "Release pin" details.
    pub fn with_pin_source(mut self, source: impl Into<String>) -> Self {
        self.pin_source = Some(source.into());
        self
    }

    /// Says whether the configuration turns notifications on.
    pub fn with_notifications(mut self, on: bool) -> Self {
        self.notifications = on;
        self
    }

    /// The one pass over `node_maintenance` the row checks share (checks
    /// run at once: the others wait for the first's pass, not a pass each).
    pub async fn census(&self) -> Result<&Census, String> {
        self.census.get_or_try_init(|| Census::take(&self.db)).await
    }
}

pub type CheckFuture<'a> = Pin<Box<dyn Future<Output = Result<CheckResult, String>> + Send + 'a>>;

/// A check: a name and a function. Adding a check is adding one of these
/// to [`crate::checks::ALL`].
#[derive(Clone, Copy)]
pub struct Check {
    pub name: &'static str,
    pub run: for<'a> fn(&'a Context) -> CheckFuture<'a>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    pub results: Vec<(String, CheckResult)>,
}

impl Report {
    /// The worst result's code (0, 1 or 2).
    pub fn exit_code(&self) -> u8 {
        self.results.iter().map(|(_, r)| r.code as u8).max().unwrap_or(0)
    }
}

fn panic_text(payload: Box<dyn std::any::Any + Send>) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned())
}

/// Runs every check at once (they are independent and read-only, so the
/// run takes as long as the slowest check, not the sum) and reports them in
/// the order given. A check that returns an error or panics becomes a
/// Failure saying so.
pub async fn run(ctx: Arc<Context>, checks: &[Check]) -> Report {
    let running: Vec<_> = checks
        .iter()
        .map(|check| {
            let ctx = ctx.clone();
            let run = check.run;
            (check.name, tokio::spawn(async move { run(&ctx).await }))
        })
        .collect();
    let mut results = Vec::with_capacity(running.len());
    for (name, handle) in running {
        let result = match handle.await {
            Ok(Ok(result)) => result,
            Ok(Err(e)) => CheckResult::failure(format!("The check could not complete: {e}")),
            Err(join) if join.is_panic() => {
                CheckResult::failure(format!("The check crashed: {}", panic_text(join.into_panic())))
            }
            Err(join) => CheckResult::failure(format!("The check was cancelled: {join}")),
        };
        results.push((name.to_owned(), result));
    }
    Report { results }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(_: &Context) -> CheckFuture<'_> {
        Box::pin(async { Ok(CheckResult::warning("look into it")) })
    }
    fn errs(_: &Context) -> CheckFuture<'_> {
        Box::pin(async { Err("relation \"node_maintenance\" does not exist".to_owned()) })
    }
    fn panics(_: &Context) -> CheckFuture<'_> {
        Box::pin(async { panic!("index out of bounds") })
    }

    #[tokio::test]
    async fn a_failing_or_panicking_check_is_a_failure_and_the_others_still_run() {
        let db = sea_orm::Database::connect("sqlite::memory:").await.unwrap();
        let ctx = Arc::new(Context::new(db, None));
        let checks =
            [Check { name: "panics", run: panics }, Check { name: "errs", run: errs }, Check { name: "fine", run: ok }];
        let report = run(ctx, &checks).await;
        let got: Vec<(&str, Code, &str)> =
            report.results.iter().map(|(n, r)| (n.as_str(), r.code, r.details.as_deref().unwrap_or(""))).collect();
        assert_eq!(
            got,
            vec![
                ("panics", Code::Failure, "The check crashed: index out of bounds"),
                ("errs", Code::Failure, "The check could not complete: relation \"node_maintenance\" does not exist"),
                ("fine", Code::Warning, "look into it"),
            ]
        );
        assert_eq!(report.exit_code(), 2);
        assert_eq!(Report { results: vec![] }.exit_code(), 0);
    }
}
