//! Command-line arguments (clap derive). Every command's `--help` ends with
//! an example.

use clap::{Args, Parser, Subcommand, ValueEnum};
use nodemaint::authority::WindowState;
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(
    name = "nodemaint",
    version,
    about = "Typed node maintenance for OpenStack Ironic: migrations, backfill, nodes and fleets",
    after_help = "Examples:\n  nodemaint db upgrade\n  nodemaint --database-url postgres://ironic@db/ironic db status\n  nodemaint --config-file /etc/ironic/ironic.conf upgrade check\n  nodemaint fleet seed --nodes 10000 --maintained-fraction 0.1\n  nodemaint maintenance add myNode --type operator_hold --reason \"Row C power work\"\n\nExit codes: 0 ok, 3 configuration, 4 database unreachable or a privilege missing, 5 not an Ironic/nodemaint database or schema missing, 6 lock timeout, 7 not found, 8 forbidden, 9 conflict, 10 bad input, 11 other database error, 12 contention: retried and still conflicting (try again), 127 bad arguments, 130/143 interrupted (SIGINT/SIGTERM; the open transaction rolled back)."
)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Args, Debug, Clone)]
pub struct Global {
    /// Database URL: sqlite://FILE, postgres://USER@HOST/DB, mysql://USER@HOST/DB
    /// (SQLAlchemy spellings such as mysql+pymysql:// are accepted).
    /// Default: the config file's [database] url, else sqlite://nodemaint.db.
    #[arg(long, global = true, env = "NODEMAINT_DATABASE_URL", hide_env_values = true)]
    pub database_url: Option<String>,
    /// nodemaint's TOML configuration file ([database] url, [upgrade] pin_release_version, [policy] file).
    #[arg(long, global = true, env = "NODEMAINT_CONFIG")]
    pub config: Option<PathBuf>,
    /// An oslo.config file such as /etc/ironic/ironic.conf, read with Ironic's key names
    /// ([database] connection, [keystone_authtoken], [oslo_policy], [healthcheck]); repeatable,
    /// later files win.
    #[arg(long = "config-file", global = true, value_name = "FILE")]
    pub config_files: Vec<PathBuf>,
    /// A directory of oslo.config files: every *.conf in it, in name order, read after --config-file.
    #[arg(long = "config-dir", global = true, value_name = "DIR")]
    pub config_dirs: Vec<PathBuf>,
    /// Output format: tables for people, JSON for machines (on stdout).
    #[arg(long, global = true, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// More logging on stderr (-v info, -vv debug); RUST_LOG overrides.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// No progress bars or informational messages.
    #[arg(short, long, global = true)]
    pub quiet: bool,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Table,
    Json,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Schema migrations: upgrade, status, downgrade.
    #[command(
        subcommand,
        after_help = "Examples:\n  nodemaint db status\n  nodemaint --database-url postgresql+psycopg2://ironic@db/ironic db upgrade\n  nodemaint db downgrade --steps 1 --yes"
    )]
    Db(DbCommand),
    /// Nodes as a pre-upgrade service writes them (legacy columns only).
    #[command(
        subcommand,
        after_help = "Examples:\n  nodemaint node create --name rack1-n01 --owner 9c84d2e0f1a3\n  nodemaint node list --maintenance\n  nodemaint node show rack1-n01 --format json"
    )]
    Node(NodeCommand),
    /// Whole fleets for testing and benchmarks.
    #[command(subcommand, after_help = "Example:\n  nodemaint fleet seed --nodes 100000 --maintained-fraction 0.1")]
    Fleet(FleetCommand),
    /// Typed maintenance entries: list, add, remove, and the legacy set/unset.
    #[command(
        subcommand,
        after_help = "Examples:\n  nodemaint maintenance add myNode --type hardware_failure --reason \"Disk 3 has bad sectors\"\n  nodemaint maintenance list myNode\n  nodemaint maintenance remove myNode --all\n  # as a lessee would:\n  nodemaint maintenance unset myNode --project 2a210e5ff114 --roles admin"
    )]
    Maintenance(MaintenanceCommand),
    /// Node history.
    #[command(
        subcommand,
        after_help = "Examples:\n  nodemaint history list myNode --limit 20\n  nodemaint history list myNode --project 2a210e5ff114 --format json"
    )]
    History(HistoryCommand),
    /// Pre-flight checks: Success, Warning or Failure, as `*-status upgrade check`.
    #[command(subcommand, after_help = "Example:\n  nodemaint --config /etc/nodemaint.toml upgrade check")]
    Upgrade(UpgradeCommand),
    /// Converge node_maintenance with the legacy columns after the release
    /// pin lifts; idempotent and safe from cron.
    #[command(
        after_help = "Example:\n  nodemaint reconcile --dry-run\n  nodemaint reconcile --max-count 10000\n  # cron, every 15 minutes:\n  */15 * * * * nodemaint --config /etc/nodemaint.toml -q reconcile\n\nExit codes: 0 nothing left to do, 1 --max-count reached (or --dry-run found drift) with work remaining, 2 error, 127 bad arguments."
    )]
    Reconcile(ReconcileArgs),
    /// Maintenance windows across the estate: list them, and the tick that
    /// starts and ends them.
    #[command(
        subcommand,
        after_help = "Examples:\n  nodemaint windows list\n  nodemaint windows list --state ended --since -7d --format json\n  nodemaint windows tick\n  # cron, every minute:\n  * * * * * nodemaint --config /etc/nodemaint.toml -q windows tick"
    )]
    Windows(WindowsCommand),
    /// Notifications: send the outbox's unsent ones to the message bus.
    #[command(
        subcommand,
        after_help = "Examples:\n  nodemaint --config-file /etc/ironic/ironic.conf notify publish\n  # cron-only deployments (no serve), every minute:\n  * * * * * nodemaint --config-file /etc/ironic/ironic.conf -q notify publish"
    )]
    Notify(NotifyCommand),
    /// The REST API: Ironic's node and maintenance endpoints, typed
    /// maintenance at microversion 1.116, maintenance windows at 1.117. Runs the
    /// windows tick every --tick-interval seconds. Stops cleanly on SIGTERM.
    #[command(
        after_help = "Examples:\n  nodemaint serve --auth-strategy noauth\n  baremetal --os-auth-type none --os-endpoint http://127.0.0.1:6385 node maintenance set myNode --reason \"rebalancing rack\"\n  # behind an authenticating proxy that sets X-User-Id, X-Project-Id, X-Roles, OpenStack-System-Scope:\n  nodemaint --config /etc/nodemaint.toml serve --bind 127.0.0.1:6385 --public-endpoint https://baremetal.example.com\n\nRequest logs (method, path, status, latency) go to stderr. Exit codes: 0 stopped by SIGTERM/SIGINT, 3 cannot listen or bad configuration, 4 database unreachable, 5 schema missing (run nodemaint db upgrade)."
    )]
    Serve(ServeArgs),
}

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Address and port to listen on, e.g. 127.0.0.1:6385 or localhost:6385
    /// (port 0 picks a free one; the log says which).
    #[arg(long, default_value = "127.0.0.1:6385", value_parser = socket_addr)]
    pub bind: std::net::SocketAddr,
    /// keystone: every X-Auth-Token validated with Keystone ([keystone_authtoken] in
    /// the config file). trusted-headers: identity from a fronting proxy's X-User-Id,
    /// X-Project-Id, X-Roles and OpenStack-System-Scope headers. noauth: every caller
    /// is a system admin (as Ironic's noauth). Default: keystone when the config has
    /// [keystone_authtoken], else trusted-headers, which on an address other than
    /// loopback must be asked for by name.
    #[arg(long, value_enum)]
    pub auth_strategy: Option<crate::server::AuthStrategy>,
    /// oslo.policy YAML/JSON file overriding the default rules. Default: the config's [policy] file.
    #[arg(long)]
    pub policy_file: Option<PathBuf>,
    /// The URL clients reach this API at, used in links (default: the request's Host).
    #[arg(long, value_parser = http_url)]
    pub public_endpoint: Option<String>,
    /// Most database connections the API holds open [default: the config's [database]
    /// max_pool_size, else 16].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub db_max_connections: Option<u32>,
    /// Seconds a request body may take to arrive; a slower one is answered 408.
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub body_timeout: u64,
    /// Seconds between two runs of the windows tick in the server (as `nodemaint windows tick`);
    /// 0 turns it off (then run the tick from cron).
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u64).range(0..=86_400))]
    pub tick_interval: u64,
    /// Seconds between two sends of the notification outbox in the server (as `nodemaint
    /// notify publish`), when notifications are configured; 0 turns it off (then run
    /// `notify publish` from cron).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(0..=86_400))]
    pub notify_interval: u64,
    /// Seconds a stop (SIGTERM, SIGINT) waits for requests in flight before closing their connections.
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u64).range(0..=3600))]
    pub shutdown_timeout: u64,
}

#[derive(Args, Debug)]
pub struct ReconcileArgs {
    /// Report what would be repaired; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Candidate nodes per repair transaction [default: 10000 on SQLite, whose write lock is database-wide; 1000 on PostgreSQL and MySQL] (detection finds candidates 500,000 node ids at a time).
    #[arg(long, value_parser = clap::value_parser!(i64).range(1..=1_000_000))]
    pub batch_size: Option<i64>,
    /// Stop after this many repairs (drifted nodes, or entries without a node).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_count: Option<u64>,
    /// The release services are pinned to; default: the config's [upgrade] pin_release_version.
    #[arg(long)]
    pub pin_release_version: Option<String>,
    /// Seconds to wait for another reconcile holding the lock.
    #[arg(long, default_value_t = 300)]
    pub lock_timeout: u64,
}

#[derive(Subcommand, Debug)]
pub enum UpgradeCommand {
    /// Read-only checks before restarting services on the new release.
    #[command(
        after_help = "Example:\n  nodemaint --config /etc/nodemaint.toml upgrade check\n  nodemaint upgrade check --json\n\nExit codes: 0 all Success, 1 a Warning, 2 a Failure, 255 the checks could not run, 127 bad arguments."
    )]
    Check {
        /// oslo.upgradecheck's JSON output (same as --format json).
        #[arg(long)]
        json: bool,
        /// The release services are pinned to; default: the config's [upgrade] pin_release_version.
        #[arg(long)]
        pin_release_version: Option<String>,
    },
}

/// Who is acting. By default a system-scoped operator; with --project, a
/// project-scoped caller (how an operator checks what a lessee may do).
#[derive(Args, Debug, Clone)]
pub struct CallerArgs {
    /// User id to act as (on changes, recorded as asserted_by and in history). Default: $USER.
    #[arg(long)]
    pub user: Option<String>,
    /// Act with a project-scoped token for this project (node owner or lessee).
    #[arg(long, value_parser = non_empty)]
    pub project: Option<String>,
    /// Roles, comma-separated (keystone's implied roles are added).
    /// Default: admin with a system token, member with --project.
    #[arg(long, value_delimiter = ',')]
    pub roles: Vec<String>,
    /// oslo.policy YAML/JSON file overriding the default rules. Default: the config's [policy] file.
    #[arg(long)]
    pub policy_file: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
pub enum MaintenanceCommand {
    /// List a node's active entries and scheduled windows (masked for the
    /// caller), with their end and whether you may release each.
    #[command(
        after_help = "Example:\n  nodemaint maintenance list myNode\n  nodemaint maintenance list myNode --project 2a210e5f --roles member --format json"
    )]
    List {
        /// Node uuid or name.
        node: String,
        #[command(flatten)]
        caller: CallerArgs,
    },
    /// Add a typed entry at the caller's scope.
    #[command(
        after_help = "Example:\n  nodemaint maintenance add myNode --type hardware_failure --reason \"Disk 3 has bad sectors, see CIDTEAM-3743\"\n  # a window: held from 22:00 UTC until 02:00, released by `windows tick`:\n  nodemaint maintenance add rack1-n01 --type operator_hold --reason \"Row C power work\" --start 2026-12-05T22:00:00Z --end 2026-12-06T02:00:00Z\n  nodemaint maintenance add rack1-n01 --type operator_hold --reason \"firmware\" --end +2h\n\nExit codes: 0 added, 7 no such node, 8 forbidden, 9 conflict (an identical entry, or an overlapping window), 10 bad input (type, reason, extra, times)."
    )]
    Add {
        /// Node uuid or name.
        node: String,
        /// A registered type: hardware_failure, operator_hold.
        #[arg(long = "type")]
        entry_type: String,
        #[command(flatten)]
        reason: ReasonArgs,
        /// A JSON object of per-type metadata.
        #[arg(long)]
        extra: Option<String>,
        /// A window's planned start (RFC 3339, or +30m / +2h / +1d from now; needs --end).
        /// Later than now: the window is scheduled and touches nothing until then.
        #[arg(long, requires = "end", allow_hyphen_values = true)]
        start: Option<String>,
        /// A window's hard end (RFC 3339, or +30m / +2h / +1d from now): `windows tick`
        /// releases the entry then. Without it the entry never expires.
        #[arg(long, allow_hyphen_values = true)]
        end: Option<String>,
        #[command(flatten)]
        caller: CallerArgs,
    },
    /// Move a window's end later (never earlier: to end it early, remove it).
    #[command(
        after_help = "Example:\n  nodemaint maintenance extend rack1-n01 3c1a7b90-5a4e-4a8e-9e55-3f0c2b1d7a66 --end +2h\n  nodemaint maintenance extend rack1-n01 3c1a7b90-5a4e-4a8e-9e55-3f0c2b1d7a66 --end 2026-12-06T04:00:00Z"
    )]
    Extend {
        /// Node uuid or name.
        node: String,
        /// The window's uuid (active or scheduled).
        entry: String,
        /// The new end (RFC 3339, or +30m / +2h / +1d from now), later than the current one.
        #[arg(long, allow_hyphen_values = true)]
        end: String,
        #[command(flatten)]
        caller: CallerArgs,
    },
    /// Cancel a window that has not started (an active one is ended with remove).
    #[command(after_help = "Example:\n  nodemaint maintenance cancel rack1-n01 3c1a7b90-5a4e-4a8e-9e55-3f0c2b1d7a66")]
    Cancel {
        /// Node uuid or name.
        node: String,
        /// The scheduled window's uuid.
        entry: String,
        #[command(flatten)]
        caller: CallerArgs,
    },
    /// Release one entry by uuid, or all of them (all or nothing) with --all.
    #[command(
        override_usage = "nodemaint maintenance remove [OPTIONS] <NODE> <ENTRY>\n       nodemaint maintenance remove [OPTIONS] <NODE> --all [--dry-run]",
        after_help = "Example:\n  nodemaint maintenance remove myNode 3c1a7b90-5a4e-4a8e-9e55-3f0c2b1d7a66\n  nodemaint maintenance remove myNode --all\n  # which entries would block my release, and why (changes nothing; exit 8 if any would):\n  nodemaint maintenance remove myNode --all --dry-run --project a0a0a0a0a0a0 --roles admin"
    )]
    Remove {
        /// Node uuid or name.
        node: String,
        /// The entry's uuid.
        #[arg(required_unless_present = "all", conflicts_with = "all")]
        entry: Option<String>,
        /// Release every active entry, or none if any is outside your authority.
        #[arg(long)]
        all: bool,
        /// With --all: change nothing; list each entry and whether you may
        /// release it, with the refusal you would get (exit 8 if any blocks).
        // (conflicting with ENTRY, which is required without --all: a
        // `requires = "all"` counts --all's default as present.)
        #[arg(long, conflicts_with = "entry")]
        dry_run: bool,
        #[command(flatten)]
        caller: CallerArgs,
    },
    /// The boolean PUT: create the node's legacy entry or update its reason.
    #[command(after_help = "Example:\n  nodemaint maintenance set myNode --reason \"rebalancing rack\"")]
    Set {
        /// Node uuid or name.
        node: String,
        #[command(flatten)]
        reason: ReasonArgs,
        #[command(flatten)]
        caller: CallerArgs,
    },
    /// The boolean DELETE: release every entry, all or nothing.
    #[command(after_help = "Example:\n  nodemaint maintenance unset myNode")]
    Unset {
        /// Node uuid or name.
        node: String,
        #[command(flatten)]
        caller: CallerArgs,
    },
}

#[derive(Subcommand, Debug)]
pub enum NotifyCommand {
    /// Send every unsent notification in commit order, mark each sent once
    /// the broker confirmed it, and prune sent ones older than
    /// [nodemaint] notification_retention; safe from cron on several hosts.
    #[command(
        after_help = "Example:\n  nodemaint --config-file /etc/ironic/ironic.conf notify publish\n  nodemaint --config-file /etc/ironic/ironic.conf notify publish --max-count 10000 --format json\n\nExit codes: 0 nothing left unsent, 1 --max-count reached with notifications left, 3 notifications are not configured, 6 another publisher held the lock past --lock-timeout, 13 the message bus was unreachable or refused (nothing more marked sent), 127 bad arguments."
    )]
    Publish {
        /// Stop after sending about this many (whole batches).
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
        max_count: Option<u64>,
        /// Notifications per batch (read, sent, confirmed, marked sent).
        #[arg(long, default_value_t = nodemaint::publish::DEFAULT_BATCH, value_parser = clap::value_parser!(u64).range(1..=100_000))]
        batch_size: u64,
        /// Seconds to wait for another publisher holding the notification lock.
        #[arg(long, default_value_t = 300)]
        lock_timeout: u64,
    },
}

#[derive(Subcommand, Debug)]
pub enum WindowsCommand {
    /// Every active and scheduled window you may see, across the estate;
    /// ended ones from node history when asked.
    #[command(
        after_help = "Example:\n  nodemaint windows list\n  nodemaint windows list --state active,scheduled,ended --since 2026-12-01T00:00:00Z --limit 50\n  # the next page: --marker with the last row's marker\n  nodemaint windows list --limit 50 --marker active:1234"
    )]
    List {
        /// Which windows: active, scheduled, ended (comma-separated) [default: active,scheduled].
        #[arg(long, value_delimiter = ',')]
        state: Vec<WindowState>,
        /// Ended windows: only those that ended at or after this time (RFC 3339, or -2h / -7d ago).
        #[arg(long, allow_hyphen_values = true)]
        since: Option<String>,
        /// At most this many rows.
        #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..=100_000))]
        limit: u64,
        /// Continue after this row (the `marker` of the last row of the previous page).
        #[arg(long)]
        marker: Option<String>,
        #[command(flatten)]
        caller: CallerArgs,
    },
    /// Start every due scheduled window and release every window whose end
    /// has passed; idempotent and safe from cron on several hosts at once.
    #[command(
        after_help = "Example:\n  nodemaint windows tick --dry-run\n  nodemaint windows tick --max-count 10000\n  # cron, every minute:\n  * * * * * nodemaint --config /etc/nodemaint.toml -q windows tick\n\nExit codes: 0 nothing left to do, 1 --max-count reached (or --dry-run found windows due) with work remaining, 2 error, 127 bad arguments."
    )]
    Tick {
        /// Count what is due; change nothing.
        #[arg(long)]
        dry_run: bool,
        /// Stop after starting and ending this many windows.
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
        max_count: Option<u64>,
        /// Windows per transaction [default: 10000 on SQLite, 1000 on PostgreSQL and MySQL].
        #[arg(long, value_parser = clap::value_parser!(i64).range(1..=1_000_000))]
        batch_size: Option<i64>,
        /// Seconds to wait for another tick holding the windows lock.
        #[arg(long, default_value_t = 300)]
        lock_timeout: u64,
    },
}

#[derive(Subcommand, Debug)]
pub enum HistoryCommand {
    /// A node's history events, oldest first.
    #[command(after_help = "Example:\n  nodemaint history list myNode --limit 20")]
    List {
        /// Node uuid or name.
        node: String,
        /// At most this many of the newest events.
        #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=100_000))]
        limit: u64,
        #[command(flatten)]
        caller: CallerArgs,
    },
}

#[derive(Subcommand, Debug)]
pub enum DbCommand {
    /// Apply every pending migration under the migration lock, backfilling
    /// one legacy entry per node in maintenance.
    #[command(
        after_help = "Example:\n  nodemaint --database-url postgres://ironic@db/ironic db upgrade --lock-timeout 600"
    )]
    Upgrade {
        /// Seconds to wait for another `db upgrade` holding the lock.
        #[arg(long, default_value_t = 300)]
        lock_timeout: u64,
        /// Node ids per backfill batch [default: 50000 on SQLite, 100000 on PostgreSQL and MySQL].
        #[arg(long, value_parser = clap::value_parser!(i64).range(1..=1_000_000))]
        batch_size: Option<i64>,
    },
    /// Each migration, applied or pending, with when it was applied. Read-only.
    #[command(after_help = "Example:\n  nodemaint db status --format json")]
    Status,
    /// Roll back the last N migrations (never drops Ironic's own tables).
    #[command(after_help = "Example:\n  nodemaint db downgrade --steps 1 --yes")]
    Downgrade {
        /// How many applied migrations to roll back, newest first.
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
        steps: u32,
        /// Confirm: rolling back drops node_maintenance and its entries.
        #[arg(long)]
        yes: bool,
        /// Seconds to wait for the migration lock.
        #[arg(long, default_value_t = 300)]
        lock_timeout: u64,
    },
}

#[derive(Subcommand, Debug)]
pub enum NodeCommand {
    /// Create a node.
    #[command(
        after_help = "Example:\n  nodemaint node create --name rack1-n01 --owner 9c84d2e0f1a3 --maintenance --reason \"HW_ERR: disk 3\""
    )]
    Create {
        /// A unique name, addressable instead of the uuid.
        #[arg(long)]
        name: Option<String>,
        /// Default: a fresh uuid.
        #[arg(long)]
        uuid: Option<String>,
        /// The owning project's id (its members assert at owner scope).
        #[arg(long)]
        owner: Option<String>,
        /// The leasing project's id (its members assert at lessee scope).
        #[arg(long)]
        lessee: Option<String>,
        /// Put the node in maintenance as an old service would (boolean and reason only).
        #[arg(long)]
        maintenance: bool,
        /// The maintenance reason (with --maintenance).
        #[arg(long, requires = "maintenance")]
        reason: Option<String>,
    },
    /// List nodes in id order.
    #[command(after_help = "Example:\n  nodemaint node list --maintenance --limit 20")]
    List {
        /// At most this many nodes.
        #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=100_000))]
        limit: u64,
        /// Only nodes with maintenance = true.
        #[arg(long)]
        maintenance: bool,
    },
    /// Show one node's columns under Ironic's names.
    #[command(after_help = "Example:\n  nodemaint node show rack1-n01 --format json")]
    Show {
        /// Node uuid or name.
        node: String,
    },
    /// Change a node's columns as an old service would (no entries are written).
    #[command(
        after_help = "Example:\n  nodemaint node set rack1-n01 --maintenance --reason \"rebalancing rack\"\n  nodemaint node set rack1-n01 --no-maintenance"
    )]
    Set {
        /// Node uuid or name.
        node: String,
        /// New name.
        #[arg(long)]
        name: Option<String>,
        /// New owner ("" clears it).
        #[arg(long)]
        owner: Option<String>,
        /// New lessee ("" clears it).
        #[arg(long)]
        lessee: Option<String>,
        /// Set nodes.maintenance = true (with --reason).
        #[arg(long, conflicts_with = "no_maintenance")]
        maintenance: bool,
        /// Set nodes.maintenance = false and clear the reason.
        #[arg(long)]
        no_maintenance: bool,
        /// Write nodes.maintenance_reason.
        #[arg(long, conflicts_with = "no_maintenance")]
        reason: Option<String>,
    },
    /// Delete a node, its history and (by cascade) its maintenance entries.
    #[command(after_help = "Example:\n  nodemaint node delete rack1-n01")]
    Delete {
        /// Node uuid or name.
        node: String,
    },
}

#[derive(Subcommand, Debug)]
pub enum FleetCommand {
    /// Add N legacy nodes (pre-upgrade state: boolean and reason, no entries).
    #[command(after_help = "Example:\n  nodemaint fleet seed --nodes 1000000 --maintained-fraction 0.1 --seed 42")]
    Seed {
        /// How many nodes to add (1 to 100,000,000).
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
        nodes: u64,
        /// Share of the nodes put in maintenance, 0 to 1.
        #[arg(long, default_value_t = 0.1, value_parser = fraction)]
        maintained_fraction: f64,
        /// Random seed: the same seed makes the same fleet.
        #[arg(long, default_value_t = 0)]
        seed: u64,
    },
}

/// A reason: inline, `-` for standard input, or from a file, for reasons too
/// long or awkward for a shell argument.
#[derive(Args, Debug, Clone)]
pub struct ReasonArgs {
    /// Why the node is held (free text, at most 16,000 characters); `-` reads it from standard input.
    #[arg(long, conflicts_with = "reason_file")]
    pub reason: Option<String>,
    /// Read the reason from this file (a trailing newline is dropped).
    #[arg(long, value_name = "FILE")]
    pub reason_file: Option<PathBuf>,
}

fn socket_addr(text: &str) -> Result<std::net::SocketAddr, String> {
    use std::net::ToSocketAddrs;
    text.to_socket_addrs()
        .map_err(|e| format!("{e}; expected HOST:PORT, e.g. 127.0.0.1:6385 or localhost:6385"))?
        .next()
        .ok_or_else(|| format!("{text} resolves to no address"))
}

fn http_url(text: &str) -> Result<String, String> {
    let host = text.strip_prefix("https://").or_else(|| text.strip_prefix("http://"));
    match host {
        Some(rest) if !rest.is_empty() && !rest.starts_with('/') && !text.contains(char::is_whitespace) => {
            Ok(text.to_owned())
        }
        _ => Err("expected an http:// or https:// URL with a host, e.g. https://baremetal.example.com".to_owned()),
    }
}

fn non_empty(text: &str) -> Result<String, String> {
    if text.trim().is_empty() { Err("must not be empty".to_owned()) } else { Ok(text.to_owned()) }
}

fn fraction(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(f) if (0.0..=1.0).contains(&f) => Ok(f),
        _ => Err(format!("{text} is not a number from 0 to 1")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// Every command and group, depth first, with its path.
    fn commands(cmd: &clap::Command, path: String, out: &mut Vec<(String, clap::Command)>) {
        for sub in cmd.get_subcommands() {
            let here = format!("{path} {}", sub.get_name());
            out.push((here.clone(), sub.clone()));
            commands(sub, here, out);
        }
    }

    #[test]
    fn every_command_and_group_has_an_example_and_every_argument_a_help_line() {
        let mut all = Vec::new();
        commands(&Cli::command(), "nodemaint".into(), &mut all);
        assert!(all.len() > 15, "{}", all.len());
        for (path, cmd) in &all {
            let after = cmd.get_after_help().map(|h| h.to_string()).unwrap_or_default();
            assert!(after.contains("Example"), "`{path} --help` has no example");
            for arg in cmd.get_arguments() {
                let name = arg.get_id().as_str();
                if name == "help" || name == "version" {
                    continue;
                }
                assert!(arg.get_help().is_some(), "`{path} --help`: argument {name} has no help line");
            }
        }
    }
}
