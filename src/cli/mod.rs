//! Wiring: resolve the database URL, connect, call the library, render the
//! result or the error, and turn it into an exit code.

pub mod args;
mod progress;
mod render;

use crate::server::AuthStrategy;
use args::{
    CallerArgs, Cli, Command, DbCommand, FleetCommand, Format, Global, HistoryCommand, MaintenanceCommand, NodeCommand,
    NotifyCommand, ReconcileArgs, ServeArgs, UpgradeCommand, WindowsCommand,
};
use nodemaint::admin::{fleet, legacy_nodes};
use nodemaint::authority::{parse_extra_arg, parse_time};
use nodemaint::config::Config;
use nodemaint::db::Access;
use nodemaint::db::{Lock, LockWait};
use nodemaint::maintenance::WindowQuery;
use nodemaint::notify::Settings;
use nodemaint::publish::{PublishOptions, Publisher};
use nodemaint::tick::{self, TickOptions};
use nodemaint::{Caller, Error, Maintenance, NewEntry, Policy, Result, db, nodes, schema};
use nodemaint_runtime::sql::now_utc;
use render::Output;
use sea_orm::DatabaseConnection;
use std::time::Duration;

pub fn init_logging(verbose: u8, quiet: bool) {
    let default = match (quiet, verbose) {
        (true, _) => "error",
        (_, 0) => "warn",
        (_, 1) => "info",
        _ => "debug",
    };
    // The `log` notification driver's lines are what that driver sends:
    // shown at every verbosity, as a deployer who chose it expects. lapin
    // logs at ERROR what is routine here (a passive declare of an exchange
    // not made yet closes its channel) and what nodemaint reports itself
    // in one line (a broker that went away): left to RUST_LOG.
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| {
        tracing_subscriber::EnvFilter::new(format!("{default},nodemaint::notification=info,lapin=off"))
    });
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
}

/// `serve`'s pool without `--db-max-connections` or `[database] max_pool_size`.
const DEFAULT_SERVE_POOL: u32 = 16;

/// Exit code of `upgrade check` when the checks could not run at all.
const EXIT_CHECKS_COULD_NOT_RUN: u8 = 255;
/// Exit code of `reconcile` for any error (as ironic-dbsync's online data migrations).
const EXIT_RECONCILE_ERROR: u8 = 2;

/// Exit codes after SIGINT and SIGTERM, as a shell reports a process they killed.
pub const EXIT_SIGINT: u8 = 130;
pub const EXIT_SIGTERM: u8 = 143;

/// Runs the command and returns the process exit code.
pub async fn run(cli: Cli) -> u8 {
    let json = cli.global.format == Format::Json
        || matches!(&cli.command, Command::Upgrade(UpgradeCommand::Check { json: true, .. }));
    let out = Output::new(if json { Format::Json } else { Format::Table }, cli.global.quiet);
    let started = std::time::Instant::now();
    let name = command_name(&cli.command);
    // `serve` stops on these signals itself; every other command is
    // interrupted: dropping its future drops the open transaction, which
    // the database rolls back, and the progress bar, which clears itself.
    let result = if matches!(cli.command, Command::Serve(_)) {
        dispatch(&cli, &out).await
    } else {
        tokio::select! {
            result = dispatch(&cli, &out) => result,
            code = interrupted() => {
                eprintln!(
                    "nodemaint {name}: interrupted; the transaction in progress was rolled back (work already \
                     committed is kept). Run the command again to continue."
                );
                return code;
            }
        }
    };
    let code = match result {
        Ok(code) => code,
        Err(e) => {
            let code = error_exit_code(&cli.command, &e);
            out.error(&e, code);
            code
        }
    };
    tracing::info!("nodemaint {name} finished in {:.1} s, exit code {code}", started.elapsed().as_secs_f64());
    tracing::debug!(
        "{} SQL statement(s) sent (each is logged at trace level, target nodemaint::sql)",
        db::statements_sent()
    );
    code
}

/// Waits for SIGINT or SIGTERM and returns the exit code that reports it.
async fn interrupted() -> u8 {
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut term) => term.recv().await,
            Err(_) => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = terminate => EXIT_SIGTERM,
        _ = tokio::signal::ctrl_c() => EXIT_SIGINT,
    }
}

/// The command as typed, for logs and messages (`db upgrade`, `reconcile`).
fn command_name(command: &Command) -> &'static str {
    match command {
        Command::Db(DbCommand::Upgrade { .. }) => "db upgrade",
        Command::Db(DbCommand::Status) => "db status",
        Command::Db(DbCommand::Downgrade { .. }) => "db downgrade",
        Command::Node(_) => "node",
        Command::Fleet(_) => "fleet seed",
        Command::Maintenance(_) => "maintenance",
        Command::History(_) => "history list",
        Command::Upgrade(_) => "upgrade check",
        Command::Reconcile(_) => "reconcile",
        Command::Windows(WindowsCommand::List { .. }) => "windows list",
        Command::Windows(WindowsCommand::Tick { .. }) => "windows tick",
        Command::Notify(NotifyCommand::Publish { .. }) => "notify publish",
        Command::Serve(_) => "serve",
    }
}

/// Commands that mirror OpenStack tools keep those tools' exit codes.
fn error_exit_code(command: &Command, e: &Error) -> u8 {
    match command {
        Command::Upgrade(_) => EXIT_CHECKS_COULD_NOT_RUN,
        Command::Reconcile(_) | Command::Windows(WindowsCommand::Tick { .. }) => EXIT_RECONCILE_ERROR,
        _ => e.exit_code(),
    }
}

/// A release pin and where it came from.
struct Pin {
    version: String,
    source: String,
}

/// The pin: the flag, else the config's `[upgrade] pin_release_version`.
/// It must look like a release (`2025.2`) or a version (`26.1.0`), as
/// Ironic's own `pin_release_version` does: a typo would otherwise pin
/// to nothing any service runs, and nobody would notice.
fn pin_from(flag: &Option<String>, global: &Global) -> Result<Option<Pin>> {
    let pin = match flag {
        Some(version) => Some(Pin { version: version.clone(), source: "--pin-release-version".to_owned() }),
        None => {
            let config = load_config(global)?;
            let source = config.pin_source();
            config.upgrade.pin_release_version.map(|version| Pin { version, source })
        }
    };
    let Some(pin) = pin.filter(|p| !p.version.trim().is_empty()) else { return Ok(None) };
    let parts: Vec<&str> = pin.version.trim().split('.').collect();
    if parts.len() < 2 || parts.iter().any(|p| p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit())) {
        return Err(Error::Config(format!(
            "{} = `{}` is not a release or a version; use e.g. 2025.2 (a release) or 26.1.0 (a version)",
            pin.source, pin.version
        )));
    }
    Ok(Some(Pin { version: pin.version.trim().to_owned(), source: pin.source }))
}

async fn upgrade_check(global: &Global, pin: &Option<String>, out: &Output) -> Result<u8> {
    let pin = pin_from(pin, global)?;
    let (db, url) = open(global, Access::ReadOnly).await?;
    schema::require_upgradable(&db, &url).await?;
    let notifications = notification_settings(global)?.is_some();
    let mut ctx =
        nodemaint_checks::Context::new(db, pin.as_ref().map(|p| p.version.clone())).with_notifications(notifications);
    if let Some(pin) = &pin {
        ctx = ctx.with_pin_source(&pin.source);
    }
    let ctx = std::sync::Arc::new(ctx);
    let report = nodemaint_checks::run(ctx, nodemaint_checks::checks::ALL).await;
    out.checks(&report);
    Ok(report.exit_code())
}

async fn reconcile(args: &ReconcileArgs, global: &Global, out: &Output) -> Result<u8> {
    let ReconcileArgs { dry_run, batch_size, max_count, pin_release_version, lock_timeout } = args;
    let pin = pin_from(pin_release_version, global)?;
    let (conn, url) = open(global, if *dry_run { Access::ReadOnly } else { Access::ReadWrite }).await?;
    let options = nodemaint::reconcile::ReconcileOptions {
        batch_size: *batch_size,
        max_count: *max_count,
        dry_run: *dry_run,
        pinned: pin.as_ref().map(|p| p.version.clone()),
        lock: lock_wait(out, &url, Lock::Reconcile, *lock_timeout),
        retry: load_config(global)?.database.retry_policy()?,
        progress: progress::bar(out.quiet),
        notify: notification_settings(global)?,
    };
    let report = nodemaint::reconcile::reconcile(&conn, &url, options).await?;
    out.reconciled(&report, pin.as_ref().map(|p| p.source.as_str()));
    Ok(if report.remaining() > 0 { 1 } else { 0 })
}

/// The configuration, read once per command (the database URL, the pin,
/// the policy and the pool all come from it; one process runs one command).
fn load_config(global: &Global) -> Result<Config> {
    static LOADED: std::sync::OnceLock<Config> = std::sync::OnceLock::new();
    if let Some(config) = LOADED.get() {
        return Ok(config.clone());
    }
    let files = nodemaint::config::Files {
        toml: config_path(global).map(ToOwned::to_owned),
        oslo_files: global.config_files.clone(),
        oslo_dirs: global.config_dirs.clone(),
    };
    let config = files.load()?;
    Ok(LOADED.get_or_init(|| config).clone())
}

/// The TOML config file: `--config` / `NODEMAINT_CONFIG`, where an empty
/// value (`NODEMAINT_CONFIG=`) means none, as unsetting it would.
fn config_path(global: &Global) -> Option<&std::path::Path> {
    global.config.as_deref().filter(|p| !p.as_os_str().is_empty())
}

/// The pool a command uses: how long it waits for a connection comes from
/// `[database] pool_timeout`.
fn pool_options(global: &Global, max_connections: Option<u32>) -> Result<db::PoolOptions> {
    let config = load_config(global)?;
    Ok(db::PoolOptions { max_connections, acquire_timeout: config.database.pool_timeout()? })
}

/// The database URL: flag or env, then config file, then the embedded default.
fn database_url(global: &Global) -> Result<String> {
    let config = load_config(global)?;
    let url = global.database_url.clone().or(config.database.url).unwrap_or_else(|| db::DEFAULT_URL.to_owned());
    db::normalize_url(&url)
}

/// The caller the flags describe: a system-scoped operator unless --project.
fn caller_from(args: &CallerArgs) -> Caller {
    let user = args.user.clone().or_else(|| std::env::var("USER").ok()).unwrap_or_else(|| "operator".to_owned());
    let roles: Vec<&str> = args.roles.iter().map(String::as_str).collect();
    match &args.project {
        Some(project) => Caller::project(user, project.clone(), if roles.is_empty() { &["member"] } else { &roles }),
        None => Caller::system(user, if roles.is_empty() { &["admin"] } else { &roles }),
    }
}

/// The policy: --policy-file, else the config's [policy] file, else the defaults.
fn policy_from(policy_file: Option<&std::path::PathBuf>, global: &Global) -> Result<Policy> {
    let config = load_config(global)?;
    let file = policy_file.cloned().or(config.policy.file.map(Into::into));
    let mut policy = match &file {
        Some(path) => Policy::load(path)?,
        None => Policy::defaults(),
    };
    if let (Some(path), [_, ..]) = (&file, policy.unknown_rules()) {
        // Shown even with -q: such a rule silently changes nothing.
        eprintln!(
            "warning: policy file {}: nodemaint has no rule named {}; it changes nothing (nodemaint's rules are listed in the README, \"Policy\")",
            path.display(),
            policy.unknown_rules().join(", ")
        );
    }
    policy.enforce_scope = config.policy.enforce_scope.unwrap_or(true);
    Ok(policy)
}

async fn service(global: &Global, caller: &CallerArgs, access: Access) -> Result<Maintenance> {
    let policy = policy_from(caller.policy_file.as_ref(), global)?;
    let (conn, url) = open(global, access).await?;
    schema::require_maintenance_table(&conn, &url).await?;
    let svc = Maintenance::new(conn, policy).with_retry_policy(load_config(global)?.database.retry_policy()?);
    Ok(match notification_settings(global)? {
        Some(settings) => svc.with_notifications(&settings),
        None => svc,
    })
}

/// The notification settings the configuration gives (`None`: off).
fn notification_settings(global: &Global) -> Result<Option<Settings>> {
    Settings::from_config(&load_config(global)?)
}

/// Connects for what the command does: only `db upgrade` creates an SQLite
/// file, and commands that only read open it read-only.
async fn open(global: &Global, access: Access) -> Result<(DatabaseConnection, String)> {
    let url = database_url(global)?;
    let conn = db::connect_for(&url, &pool_options(global, None)?, access).await?;
    Ok((conn, url))
}

/// Waiting up to `--lock-timeout` for `lock`, saying so on stderr unless quiet.
fn lock_wait(out: &Output, url: &str, lock: Lock, timeout: u64) -> LockWait {
    let timeout = Duration::from_secs(timeout);
    let notice = (!out.quiet).then(|| lock.waiting(url, timeout));
    LockWait {
        timeout,
        on_wait: Box::new(move || {
            if let Some(notice) = notice {
                eprintln!("{notice}");
            }
        }),
    }
}

async fn dispatch(cli: &Cli, out: &Output) -> Result<u8> {
    let global = &cli.global;
    match &cli.command {
        Command::Db(cmd) => db_command(cmd, global, out).await.map(|()| 0),
        Command::Node(cmd) => node_command(cmd, global, out).await.map(|()| 0),
        Command::Fleet(cmd) => fleet_command(cmd, global, out).await.map(|()| 0),
        Command::Maintenance(cmd) => maintenance_command(cmd, global, out).await,
        Command::History(cmd) => history_command(cmd, global, out).await.map(|()| 0),
        Command::Windows(cmd) => windows_command(cmd, global, out).await,
        Command::Notify(NotifyCommand::Publish { max_count, batch_size, lock_timeout }) => {
            let settings = notification_settings(global)?.ok_or_else(|| {
                Error::Config(
                    "notifications are off: set [DEFAULT] notification_level and [oslo_messaging_notifications] driver in the config".into(),
                )
            })?;
            let (conn, url) = open(global, Access::ReadWrite).await?;
            schema::require_maintenance_table(&conn, &url).await?;
            let lock = lock_wait(out, &url, Lock::Notify, *lock_timeout);
            let options = PublishOptions { lock, batch_size: *batch_size, max_count: *max_count };
            let mut publisher = Publisher::new(settings);
            let report = publisher.publish(&conn, &url, options).await;
            publisher.close().await;
            let report = report?;
            out.published(&report);
            Ok(u8::from(report.unsent > 0))
        }
        Command::Upgrade(UpgradeCommand::Check { pin_release_version, .. }) => {
            upgrade_check(global, pin_release_version, out).await
        }
        Command::Reconcile(args) => reconcile(args, global, out).await,
        Command::Serve(args) => serve(args, global).await.map(|()| 0),
    }
}

/// The auth strategy: the flag; else the config's `[DEFAULT] auth_strategy`
/// (Ironic's key: `keystone` or `noauth`); else keystone when the config
/// has `[keystone_authtoken]`; else trusted-headers, but only on loopback
/// unless asked for by name (anyone who reaches the port could claim any
/// identity).
fn auth_strategy(args: &ServeArgs, config: &Config) -> Result<AuthStrategy> {
    match (args.auth_strategy, config.default.auth_strategy.as_deref().map(str::trim)) {
        (Some(strategy), _) => Ok(strategy),
        (None, Some("keystone")) => Ok(AuthStrategy::Keystone),
        (None, Some("noauth")) => Ok(AuthStrategy::Noauth),
        (None, Some(other)) => Err(Error::Config(format!(
            "[DEFAULT] auth_strategy = {other} in {}: nodemaint serve takes keystone or noauth from there (or pass --auth-strategy)",
            config.describe()
        ))),
        (None, None) if config.keystone_authtoken.is_some() => Ok(AuthStrategy::Keystone),
        (None, None) if args.bind.ip().is_loopback() => Ok(AuthStrategy::TrustedHeaders),
        (None, None) => Err(Error::Config(format!(
            "serve on {} would trust identity headers from anyone who reaches it; configure [keystone_authtoken] (or pass --auth-strategy keystone), or, behind a proxy that authenticates and strips those headers, pass --auth-strategy trusted-headers",
            args.bind
        ))),
    }
}

async fn serve(args: &ServeArgs, global: &Global) -> Result<()> {
    let policy = policy_from(args.policy_file.as_ref(), global)?;
    // The configuration is checked before the database is asked anything.
    let config = load_config(global)?;
    let auth = auth_strategy(args, &config)?;
    let keystone = match (auth, &config.keystone_authtoken) {
        (AuthStrategy::Keystone, Some(section)) => Some(std::sync::Arc::new(crate::server::Keystone::new(section)?)),
        (AuthStrategy::Keystone, None) => {
            return Err(Error::Config(format!(
                "--auth-strategy keystone needs a [keystone_authtoken] section (auth_url, username, password, project_name, …) in the config file{}",
                if config.source.is_some() {
                    format!(" ({})", config.describe())
                } else {
                    "; pass ironic.conf with --config-file, or nodemaint's TOML with --config".into()
                }
            )));
        }
        _ => None,
    };
    let url = database_url(global)?;
    let max_connections = args.db_max_connections.or(config.database.max_pool_size).unwrap_or(DEFAULT_SERVE_POOL);
    let conn = db::connect_for(&url, &pool_options(global, Some(max_connections))?, Access::ReadWrite).await?;
    schema::require_maintenance_table(&conn, &url).await?;
    let mut options = crate::server::ServeOptions {
        keystone,
        bind: args.bind,
        body_timeout: Duration::from_secs(args.body_timeout),
        shutdown_timeout: Duration::from_secs(args.shutdown_timeout),
        auth,
        public_endpoint: args.public_endpoint.clone(),
        tick: (args.tick_interval > 0).then(|| (Duration::from_secs(args.tick_interval), url.clone())),
        healthcheck: config.healthcheck.enabled.unwrap_or(true),
        publisher: None,
        notify: None,
    };
    let retry = load_config(global)?.database.retry_policy()?;
    let mut svc = Maintenance::new(conn, policy).with_retry_policy(retry);
    let notify = Settings::from_config(&config)?;
    options.notify.clone_from(&notify);
    if let Some(settings) = notify {
        svc = svc.with_notifications(&settings);
        if args.notify_interval > 0 {
            options.publisher =
                Some((Publisher::new(settings), Duration::from_secs(args.notify_interval), url.clone()));
        }
    }
    crate::server::serve(svc, options).await
}

/// The exit code is 0, or 8 when a dry run found entries that would block.
async fn maintenance_command(cmd: &MaintenanceCommand, global: &Global, out: &Output) -> Result<u8> {
    match cmd {
        MaintenanceCommand::List { node, caller } => {
            let entries = service(global, caller, Access::ReadOnly).await?.list(&caller_from(caller), node).await?;
            out.entries(&entries);
        }
        MaintenanceCommand::Add { node, entry_type, reason, extra, start, end, caller } => {
            let extra = extra.as_deref().map(parse_extra_arg).transpose()?;
            let now = now_utc();
            let starts_at = start.as_deref().map(|t| parse_time(t, now, "--start")).transpose()?;
            let ends_at = end.as_deref().map(|t| parse_time(t, now, "--end")).transpose()?;
            let request =
                NewEntry { entry_type: entry_type.clone(), reason: read_reason(reason)?, extra, starts_at, ends_at };
            let created =
                service(global, caller, Access::ReadWrite).await?.add(&caller_from(caller), node, request).await?;
            if out.confirms() {
                out.entry(&created);
            }
        }
        MaintenanceCommand::Extend { node, entry, end, caller } => {
            let ends_at = parse_time(end, now_utc(), "--end")?;
            let svc = service(global, caller, Access::ReadWrite).await?;
            let extended = svc.extend(&caller_from(caller), node, entry, ends_at).await?;
            if out.confirms() {
                out.entry(&extended);
            }
        }
        MaintenanceCommand::Cancel { node, entry, caller } => {
            let svc = service(global, caller, Access::ReadWrite).await?;
            out.released(&[svc.cancel(&caller_from(caller), node, entry).await?]);
        }
        MaintenanceCommand::Remove { node, dry_run: true, caller, .. } => {
            let svc = service(global, caller, Access::ReadOnly).await?;
            let plan = svc.release_all_plan(&caller_from(caller), node).await?;
            out.release_plan(&plan);
            if plan.iter().any(|(_, blocked)| blocked.is_some()) {
                return Ok(Error::Forbidden(String::new()).exit_code());
            }
        }
        MaintenanceCommand::Remove { node, entry, all, caller, .. } => {
            let svc = service(global, caller, Access::ReadWrite).await?;
            match (entry, all) {
                // The same shape as --all: what was released.
                (Some(uuid), false) => out.released(&[svc.release(&caller_from(caller), node, uuid).await?]),
                _ => out.released(&svc.release_all(&caller_from(caller), node).await?),
            }
        }
        MaintenanceCommand::Set { node, reason, caller } => {
            let entry = service(global, caller, Access::ReadWrite)
                .await?
                .legacy_set(&caller_from(caller), node, read_reason(reason)?)
                .await?;
            if out.confirms() {
                out.entry(&entry);
            }
        }
        MaintenanceCommand::Unset { node, caller } => {
            let released =
                service(global, caller, Access::ReadWrite).await?.legacy_unset(&caller_from(caller), node).await?;
            out.released(&released);
        }
    }
    Ok(0)
}

/// `windows list` and `windows tick` (exit 1 when a tick left work, as reconcile).
async fn windows_command(cmd: &WindowsCommand, global: &Global, out: &Output) -> Result<u8> {
    match cmd {
        WindowsCommand::List { state, since, limit, marker, caller } => {
            let since = since.as_deref().map(|t| parse_time(t, now_utc(), "--since")).transpose()?;
            let query = WindowQuery { states: state.clone(), since, limit: *limit, marker: marker.clone() };
            let svc = service(global, caller, Access::ReadOnly).await?;
            out.windows(&svc.windows(&caller_from(caller), &query).await?);
            Ok(0)
        }
        WindowsCommand::Tick { dry_run, max_count, batch_size, lock_timeout } => {
            let (conn, url) = open(global, if *dry_run { Access::ReadOnly } else { Access::ReadWrite }).await?;
            let options = TickOptions {
                batch_size: *batch_size,
                max_count: *max_count,
                dry_run: *dry_run,
                lock: lock_wait(out, &url, Lock::Windows, *lock_timeout),
                retry: load_config(global)?.database.retry_policy()?,
                schema_checked: false,
                notify: notification_settings(global)?,
            };
            let report = tick::tick(&conn, &url, options).await?;
            out.ticked(&report);
            let left = if report.dry_run { report.expired + report.started } else { report.remaining };
            Ok(u8::from(left > 0))
        }
    }
}

async fn history_command(cmd: &HistoryCommand, global: &Global, out: &Output) -> Result<()> {
    match cmd {
        HistoryCommand::List { node, limit, caller } => {
            let svc = service(global, caller, Access::ReadOnly).await?;
            out.history(&svc.history(&caller_from(caller), node, *limit).await?);
        }
    }
    Ok(())
}

async fn db_command(cmd: &DbCommand, global: &Global, out: &Output) -> Result<()> {
    match cmd {
        DbCommand::Upgrade { lock_timeout, batch_size } => {
            let (conn, url) = open(global, Access::Create).await?;
            let options = schema::UpgradeOptions {
                batch_size: *batch_size,
                progress: progress::bar(out.quiet),
                lock: lock_wait(out, &url, Lock::Migration, *lock_timeout),
            };
            let report = schema::upgrade(&conn, &url, options).await?;
            out.upgrade(&report);
            Ok(())
        }
        DbCommand::Status => {
            // A missing SQLite file has every migration pending; it is not created to say so.
            let url = database_url(global)?;
            if db::missing_sqlite_file(&url).is_some() {
                out.migrations(&schema::all_pending());
                return Ok(());
            }
            let (conn, url) = open(global, Access::ReadOnly).await?;
            schema::require_upgradable(&conn, &url).await?;
            out.migrations(&schema::status(&conn).await?);
            Ok(())
        }
        DbCommand::Downgrade { steps, yes, lock_timeout } => {
            let (conn, url) = open(global, Access::ReadWrite).await?;
            let plan = schema::downgrade_plan(&conn, &url, *steps).await?;
            if !yes && !plan.is_empty() {
                let listed: Vec<String> = plan.iter().map(ToString::to_string).collect();
                return Err(Error::Config(format!(
                    "db downgrade --steps {steps} would {}; re-run with --yes to confirm",
                    listed.join(", ")
                )));
            }
            let lock = lock_wait(out, &url, Lock::Migration, *lock_timeout);
            let rolled_back = schema::downgrade(&conn, &url, *steps, lock).await?;
            out.downgrade(&rolled_back, &plan);
            Ok(())
        }
    }
}

/// The reason given inline, as `-` (standard input) or with --reason-file.
fn read_reason(args: &args::ReasonArgs) -> Result<Option<String>> {
    let (text, source) = match (&args.reason, &args.reason_file) {
        (Some(dash), None) if dash == "-" => {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
                .map_err(|e| Error::BadRequest(format!("cannot read the reason from standard input: {e}")))?;
            (text, "standard input")
        }
        (Some(inline), _) => return Ok(Some(inline.clone())),
        (None, Some(path)) => {
            let text = std::fs::read_to_string(path).map_err(|e| {
                Error::BadRequest(format!("cannot read the reason from {}: {e}; check --reason-file", path.display()))
            })?;
            (text, "the file")
        }
        (None, None) => return Ok(None),
    };
    let text = text.strip_suffix('\n').map(|t| t.strip_suffix('\r').unwrap_or(t)).unwrap_or(&text).to_owned();
    tracing::debug!("read a {}-character reason from {source}", text.chars().count());
    Ok(Some(text))
}

/// `""` on the command line clears a field.
fn optional_field(value: &Option<String>) -> Option<Option<String>> {
    value.as_ref().map(|v| if v.is_empty() { None } else { Some(v.clone()) })
}

async fn node_command(cmd: &NodeCommand, global: &Global, out: &Output) -> Result<()> {
    let read_only = matches!(cmd, NodeCommand::List { .. } | NodeCommand::Show { .. });
    let (conn, url) = open(global, if read_only { Access::ReadOnly } else { Access::ReadWrite }).await?;
    schema::require_nodes_table(&conn, &url).await?;
    match cmd {
        NodeCommand::Create { name, uuid, owner, lessee, maintenance, reason } => {
            let node = legacy_nodes::create(
                &conn,
                legacy_nodes::NewNode {
                    uuid: uuid.clone(),
                    name: name.clone(),
                    owner: owner.clone(),
                    lessee: lessee.clone(),
                    maintenance: *maintenance,
                    maintenance_reason: reason.clone(),
                },
            )
            .await?;
            if out.confirms() {
                out.node(&node);
            }
        }
        NodeCommand::List { limit, maintenance } => out.nodes(&legacy_nodes::list(&conn, *limit, *maintenance).await?),
        NodeCommand::Show { node } => out.node(&nodes::find(&conn, node).await?),
        NodeCommand::Set { node, name, owner, lessee, maintenance, no_maintenance, reason } => {
            let change = legacy_nodes::NodeChange {
                name: name.clone(),
                owner: optional_field(owner),
                lessee: optional_field(lessee),
                maintenance: if *maintenance {
                    Some(true)
                } else if *no_maintenance {
                    Some(false)
                } else {
                    None
                },
                reason: reason.clone(),
            };
            let changed = legacy_nodes::set(&conn, node, change).await?;
            if out.confirms() {
                out.node(&changed);
            }
        }
        NodeCommand::Delete { node } => {
            let deleted = legacy_nodes::delete(&conn, node).await?;
            out.deleted(&deleted);
        }
    }
    Ok(())
}

async fn fleet_command(cmd: &FleetCommand, global: &Global, out: &Output) -> Result<()> {
    match cmd {
        FleetCommand::Seed { nodes: count, maintained_fraction, seed } => {
            let (conn, url) = open(global, Access::ReadWrite).await?;
            schema::require_nodes_table(&conn, &url).await?;
            let bar = progress::bar(out.quiet);
            let report = fleet::seed(&conn, *count, *maintained_fraction, *seed, bar.as_ref()).await?;
            out.seeded(&report);
            Ok(())
        }
    }
}
