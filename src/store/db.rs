//! Database URLs and connections: which URLs are accepted (sqlx's, and the
//! SQLAlchemy spellings found in Ironic's `[database] connection`), how they
//! are shown (password hidden), and how a connection is opened.

use crate::error::{Error, Result, describe, one_line};
use sea_orm::sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode};
use sea_orm::{ConnectOptions, ConnectionTrait, Database, DatabaseConnection, DbBackend, DbErr};
use std::time::Duration;

/// The embedded default: an SQLite file in the working directory.
pub const DEFAULT_URL: &str = "sqlite://nodemaint.db";

/// How long an SQLite writer waits for another before giving up. Long, so
/// that "database is locked" never reaches a caller under normal contention.
pub const SQLITE_BUSY_TIMEOUT: Duration = Duration::from_secs(60);
/// Page cache of each SQLite connection, in KiB (SQLite's default is 2,000).
/// The backfill and reconcile insert uuids into unique indexes that outgrow
/// 2 MB between 10,000 and 100,000 entries, and every miss is a read from
/// the file. 16 MiB was the fastest size of a sweep (8 MiB slower, 32 MiB no
/// faster and larger; figures in git history), and the backfill's peak
/// resident set stays flat from 100,000 to a million nodes (BENCHMARKS.md).
pub const SQLITE_CACHE_KIB: u32 = 16 * 1024;

/// Statements sent through pools opened while debug logging was on.
static STATEMENTS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How many statements this process has sent, when debug logging is on (0 otherwise).
pub fn statements_sent() -> u64 {
    STATEMENTS.load(std::sync::atomic::Ordering::Relaxed)
}

/// A pooled connection idle at least this long is pinged before use.
pub const POOL_PING_AFTER_IDLE: Duration = Duration::from_secs(30);

/// Turns a URL a deployer may paste into one sqlx understands.
///
/// `postgresql+psycopg2://…` → `postgres://…`, `mysql+pymysql://…` →
/// `mysql://…`, `sqlite:////abs/path` (SQLAlchemy) → `sqlite:///abs/path`,
/// and the query string's TLS parameters in the spellings of libpq,
/// SQLAlchemy and PyMySQL onto sqlx's (see `mysql_parameters`). A parameter
/// nodemaint does not understand is refused: dropping it silently could
/// mean a plaintext connection where the deployer asked for TLS.
pub fn normalize_url(url: &str) -> Result<String> {
    let url = url.trim();
    let (base, query) = url.split_once('?').unwrap_or((url, ""));
    let normalized = normalize_base(url, base)?;
    let params = match backend_of(&normalized) {
        DbBackend::Postgres => postgres_parameters(url, query)?,
        DbBackend::MySql => mysql_parameters(url, query)?,
        _ => sqlite_parameters(url, query)?,
    };
    Ok(if params.is_empty() { normalized } else { format!("{normalized}?{}", params.join("&")) })
}

/// The `key=value` pairs of a query string, in order.
fn query_pairs(query: &str) -> impl Iterator<Item = (&str, &str)> {
    query.split('&').filter(|p| !p.is_empty()).map(|p| p.split_once('=').unwrap_or((p, "")))
}

fn unknown_parameter(url: &str, key: &str, known: &str) -> Error {
    Error::Config(format!(
        "database URL `{}`: nodemaint does not understand the parameter `{key}`; remove it (parameters understood here: {known})",
        redact(url)
    ))
}

fn bad_value(url: &str, key: &str, value: &str, expected: &str) -> Error {
    Error::Config(format!("database URL `{}`: {key}={value} is not one of {expected}", redact(url)))
}

/// libpq's (and psycopg2's) TLS parameters, which sqlx reads as they are.
fn postgres_parameters(url: &str, query: &str) -> Result<Vec<String>> {
    const MODES: [&str; 6] = ["disable", "allow", "prefer", "require", "verify-ca", "verify-full"];
    const KNOWN: &str = "sslmode, sslrootcert, sslcert, sslkey, application_name, options";
    let mut out = Vec::new();
    for (key, value) in query_pairs(query) {
        match key {
            "sslmode" if MODES.contains(&value) => out.push(format!("sslmode={value}")),
            "sslmode" => return Err(bad_value(url, key, value, &MODES.join(", "))),
            "sslrootcert" | "sslcert" | "sslkey" | "application_name" | "options" => out.push(format!("{key}={value}")),
            _ => return Err(unknown_parameter(url, key, KNOWN)),
        }
    }
    Ok(out)
}

/// PyMySQL's and mysqlclient's TLS parameters as SQLAlchemy passes them
/// (`ssl_ca`, `ssl_cert`, `ssl_key`, `ssl_verify_cert`,
/// `ssl_verify_identity` / `ssl_check_hostname`, `ssl_mode`), mapped onto
/// sqlx's `ssl-mode`: as PyMySQL does, a CA alone verifies the certificate
/// (VERIFY_CA), and hostname checking makes it VERIFY_IDENTITY. libpq's
/// `sslmode` words are understood too.
fn mysql_parameters(url: &str, query: &str) -> Result<Vec<String>> {
    const MODES: [&str; 5] = ["DISABLED", "PREFERRED", "REQUIRED", "VERIFY_CA", "VERIFY_IDENTITY"];
    const KNOWN: &str =
        "ssl_mode, ssl_ca, ssl_cert, ssl_key, ssl_verify_cert, ssl_verify_identity, ssl_check_hostname, charset";
    let (mut mode, mut out) = (None::<String>, Vec::new());
    let (mut has_ca, mut verify_cert, mut verify_identity) = (false, None::<bool>, false);
    let flag = |key: &str, value: &str| match value.to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        _ => Err(bad_value(url, key, value, "true, false")),
    };
    for (key, value) in query_pairs(query) {
        match key.replace('-', "_").as_str() {
            "ssl_mode" | "sslmode" => {
                let upper = match value {
                    "disable" => "DISABLED".to_owned(),
                    "prefer" | "allow" => "PREFERRED".to_owned(),
                    "require" => "REQUIRED".to_owned(),
                    "verify-ca" => "VERIFY_CA".to_owned(),
                    "verify-full" => "VERIFY_IDENTITY".to_owned(),
                    other => other.to_ascii_uppercase(),
                };
                if !MODES.contains(&upper.as_str()) {
                    return Err(bad_value(url, key, value, &MODES.join(", ")));
                }
                mode = Some(upper);
            }
            "ssl_ca" | "sslca" => {
                has_ca = true;
                out.push(format!("ssl-ca={value}"));
            }
            "ssl_cert" | "sslcert" => out.push(format!("ssl-cert={value}")),
            "ssl_key" | "sslkey" => out.push(format!("ssl-key={value}")),
            "ssl_verify_cert" => verify_cert = Some(flag(key, value)?),
            "ssl_verify_identity" | "ssl_check_hostname" => verify_identity = flag(key, value)?,
            "charset" => out.push(format!("charset={value}")),
            _ => return Err(unknown_parameter(url, key, KNOWN)),
        }
    }
    let implied = if verify_identity {
        Some("VERIFY_IDENTITY")
    } else if verify_cert == Some(true) || (has_ca && verify_cert != Some(false)) {
        Some("VERIFY_CA")
    } else if has_ca || verify_cert == Some(false) {
        Some("REQUIRED")
    } else {
        None
    };
    if let Some(mode) = mode.or(implied.map(str::to_owned)) {
        out.insert(0, format!("ssl-mode={mode}"));
    }
    Ok(out)
}

/// SQLite's own URL parameters.
fn sqlite_parameters(url: &str, query: &str) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for (key, value) in query_pairs(query) {
        match key {
            "mode" | "cache" | "immutable" | "vfs" => out.push(format!("{key}={value}")),
            _ => return Err(unknown_parameter(url, key, "mode, cache, immutable, vfs")),
        }
    }
    Ok(out)
}

fn normalize_base(url: &str, base: &str) -> Result<String> {
    let Some((scheme, rest)) = base.split_once(':') else {
        return Err(bad_url(url, "it has no scheme"));
    };
    let base = scheme.split('+').next().unwrap_or(scheme).to_ascii_lowercase();
    let normalized = match base.as_str() {
        "postgres" | "postgresql" => format!("postgres:{rest}"),
        "mysql" | "mariadb" => format!("mysql:{rest}"),
        "sqlite" => {
            let rest = rest.strip_prefix("////").map(|p| format!("///{p}")).unwrap_or_else(|| rest.to_owned());
            format!("sqlite:{rest}")
        }
        _ => {
            return Err(bad_url(url, &format!("scheme `{scheme}` is not sqlite, postgres or mysql")));
        }
    };
    if base == "sqlite" {
        let path = normalized.trim_start_matches("sqlite:").trim_start_matches("//");
        if path.split('?').next().unwrap_or("").is_empty() {
            return Err(bad_url(
                url,
                "it names no file; use e.g. sqlite://nodemaint.db or sqlite:///var/lib/nodemaint.db",
            ));
        }
    } else {
        // A URL parser, not string splitting: `[::1]` and `[::1]:5432` are
        // hosts, a user name or password may hold reserved characters.
        let parsed = url::Url::parse(normalized.split('?').next().unwrap_or(&normalized)).map_err(|e| {
            bad_url(
                url,
                &match e {
                    url::ParseError::InvalidPort => {
                        format!("its port `{}` is not a number from 1 to 65535", port_text(&normalized))
                    }
                    url::ParseError::EmptyHost => "it names no host".to_owned(),
                    other => other.to_string(),
                },
            )
        })?;
        if !normalized.contains("://") || parsed.host_str().is_none_or(str::is_empty) {
            return Err(bad_url(url, "it names no host; expected SCHEME://[USER[:PASSWORD]@]HOST[:PORT]/DATABASE"));
        }
        // Without one, PostgreSQL would connect to the user's own database
        // (often the `postgres` system database) and MySQL to none.
        if parsed.path().trim_matches('/').is_empty() {
            return Err(bad_url(url, "it names no database; add /DATABASE, e.g. /ironic"));
        }
    }
    Ok(normalized)
}

/// The port as written in a URL (for a message about it): after the last
/// `:` of the host part that is not inside an IPv6 address's brackets.
fn port_text(url: &str) -> &str {
    let authority = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = authority.split(['/', '?']).next().unwrap_or_default();
    let host = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    let after_brackets = host.rfind(']').map_or(host, |i| &host[i..]);
    after_brackets.rsplit_once(':').map_or("", |(_, port)| port)
}

fn bad_url(url: &str, why: &str) -> Error {
    Error::Config(format!(
        "malformed database URL `{}`: {why}; use e.g. sqlite://nodemaint.db, postgres://USER@HOST/ironic or mysql://USER@HOST/ironic",
        redact(url)
    ))
}

/// The URL with any password replaced by `***`, for messages and logs.
pub(crate) fn redact(url: &str) -> String {
    if let Some((scheme, rest)) = url.split_once("://")
        && let Some((userinfo, host)) = rest.rsplit_once('@')
        && let Some((user, _password)) = userinfo.split_once(':')
    {
        return format!("{scheme}://{user}:***@{host}");
    }
    url.to_owned()
}

/// The backend a (normalized) URL names.
pub fn backend_of(url: &str) -> DbBackend {
    if url.starts_with("postgres") {
        DbBackend::Postgres
    } else if url.starts_with("mysql") {
        DbBackend::MySql
    } else {
        DbBackend::Sqlite
    }
}

/// What a command does with the database, which decides how an SQLite
/// file is opened (servers do not care).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// May create the file (`db upgrade`, and the library's default).
    Create,
    /// Writes to an existing file.
    ReadWrite,
    /// Only reads: opened read-only, so a read-only file (or a replica's
    /// copy) can be inspected, and a missing one is not created.
    ReadOnly,
}

/// How the pool is sized and how long a caller waits for one of its connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolOptions {
    /// At most this many connections (an API service sizes it to its
    /// workers); `None` is sea-orm's default, and 4 on SQLite.
    pub max_connections: Option<u32>,
    /// How long an operation waits for a connection before it fails with
    /// [`Error::Unreachable`] (503): `[database] pool_timeout`. While the
    /// server is down the pool keeps trying to connect for this long, so
    /// it is also how fast a request learns the database is gone.
    pub acquire_timeout: Duration,
}

impl Default for PoolOptions {
    fn default() -> Self {
        PoolOptions { max_connections: None, acquire_timeout: crate::config::DEFAULT_POOL_TIMEOUT }
    }
}

/// How long the first, direct connection may take (see `probe_server`).
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// One round trip that proves the database answers (the health check's probe).
pub async fn ping(db: &DatabaseConnection) -> Result<()> {
    db.execute_unprepared("SELECT 1").await?;
    Ok(())
}

/// Opens a pool on `url` (already normalized) and checks it answers.
/// SQLite files are created if missing, in WAL mode with a long busy timeout.
pub async fn connect(url: &str) -> Result<DatabaseConnection> {
    connect_with(url, None).await
}

/// [`connect`] with a pool of at most `max_connections`.
pub async fn connect_with(url: &str, max_connections: Option<u32>) -> Result<DatabaseConnection> {
    connect_for(url, &PoolOptions { max_connections, ..PoolOptions::default() }, Access::Create).await
}

/// The file an SQLite URL names when it does not exist yet (only `db
/// upgrade` creates one).
pub fn missing_sqlite_file(url: &str) -> Option<String> {
    nodemaint_runtime::lock::sqlite_path(url).filter(|path| !std::path::Path::new(path).exists())
}

/// [`connect_with`] for a command that needs only `access`.
pub async fn connect_for(url: &str, pool: &PoolOptions, access: Access) -> Result<DatabaseConnection> {
    if access != Access::Create
        && let Some(path) = missing_sqlite_file(url)
    {
        return Err(Error::Schema(format!(
            "there is no database at {path} yet; run `nodemaint db upgrade` first (it creates it), or fix --database-url"
        )));
    }
    let mut options = ConnectOptions::new(url.to_owned());
    options
        .sqlx_logging(false)
        // (sea-orm's connect_timeout is the same sqlx setting: one is enough.)
        .acquire_timeout(pool.acquire_timeout)
        // A pool pings every connection it hands out unless told otherwise:
        // one more round trip per transaction (of eight for a legacy PUT on
        // PostgreSQL). Only a connection idle this long, which a server,
        // proxy or firewall may have dropped, is checked first.
        .test_before_acquire_if_idle_for(POOL_PING_AFTER_IDLE)
        .map_sqlx_sqlite_opts(move |o: SqliteConnectOptions| {
            let o = o
                .busy_timeout(SQLITE_BUSY_TIMEOUT)
                .foreign_keys(true)
                .pragma("cache_size", format!("-{SQLITE_CACHE_KIB}"));
            match access {
                // Switching to WAL is a write: a read-only open keeps the file's mode.
                Access::ReadOnly => o.create_if_missing(false).read_only(true),
                Access::ReadWrite => o.create_if_missing(false).journal_mode(SqliteJournalMode::Wal),
                Access::Create => o.create_if_missing(true).journal_mode(SqliteJournalMode::Wal),
            }
        });
    if let Some(max) = pool.max_connections {
        options.max_connections(max.max(1));
    } else if backend_of(url) == DbBackend::Sqlite {
        // One writer at a time anyway; a small pool keeps readers concurrent.
        options.max_connections(4);
    }
    let started = std::time::Instant::now();
    if probe_server(url).await? == Server::Galera {
        // Causal reads: every statement of every connection first waits
        // until this node has applied what the cluster certified before it,
        // so a read through one node sees a commit made through another
        // (detection, checks, the node read under the lock, and a client's
        // GET after its PUT through another node behind a load balancer).
        tracing::debug!("Galera cluster: sessions read causally (wsrep_sync_wait = 1)");
        options.map_sqlx_mysql_pool_opts(|pool| {
            pool.after_connect(|conn, _| {
                Box::pin(async move {
                    use sea_orm::sqlx::Executor;
                    conn.execute("SET SESSION wsrep_sync_wait = 1").await.map(|_| ())
                })
            })
        });
    }
    let mut db = Database::connect(options).await.map_err(|e| connect_error(url, &e))?;
    // With -vv (or RUST_LOG=debug), count every statement and log each at
    // trace level; otherwise the pool carries no callback at all.
    if tracing::enabled!(tracing::Level::DEBUG) {
        db.set_metric_callback(|info| {
            STATEMENTS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            tracing::trace!(
                target: "nodemaint::sql",
                elapsed_us = info.elapsed.as_micros() as u64,
                failed = info.failed,
                "{}",
                one_line(&info.statement.sql)
            );
        });
    }
    db.execute_unprepared("SELECT 1").await.map_err(|e| connect_error(url, &e))?;
    tracing::debug!("connected to {} in {} ms", redact(url), started.elapsed().as_millis());
    Ok(db)
}

/// What [`probe_server`] found at the URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Server {
    /// A single server (PostgreSQL, MySQL, MariaDB without wsrep), or SQLite.
    Single,
    /// A node of a MariaDB Galera cluster (`wsrep_on` is `ON`).
    Galera,
}

/// One direct connection before the pool: a pool retries until its timeout
/// and then reports only "timed out", hiding "connection refused". On
/// MySQL it also asks whether the server is a Galera node.
async fn probe_server(url: &str) -> Result<Server> {
    use sea_orm::sqlx::{Connection, MySqlConnection, PgConnection, Row};
    let attempt = async {
        match backend_of(url) {
            DbBackend::Postgres => PgConnection::connect(url).await?.close().await.map(|()| Server::Single),
            DbBackend::MySql => {
                let mut conn = MySqlConnection::connect(url).await?;
                // SHOW VARIABLES answers on every MySQL and MariaDB; a server
                // without wsrep has no such row, or OFF.
                let wsrep = sea_orm::sqlx::query("SHOW VARIABLES LIKE 'wsrep_on'").fetch_optional(&mut conn).await?;
                let on = wsrep
                    .and_then(|row| row.try_get::<String, _>(1).ok())
                    .is_some_and(|v| v.eq_ignore_ascii_case("ON"));
                conn.close().await?;
                Ok(if on { Server::Galera } else { Server::Single })
            }
            _ => Ok(Server::Single),
        }
    };
    match tokio::time::timeout(CONNECT_TIMEOUT, attempt).await {
        Ok(Ok(server)) => Ok(server),
        Ok(Err(e)) => Err(connect_error_text(url, &e.to_string())),
        Err(_) => Err(Error::Unreachable(format!(
            "cannot connect to {}: no answer within {}s; is the server running, and is the URL right?",
            redact(url),
            CONNECT_TIMEOUT.as_secs()
        ))),
    }
}

fn connect_error(url: &str, e: &DbErr) -> Error {
    connect_error_text(url, &describe(e))
}

fn connect_error_text(url: &str, detail: &str) -> Error {
    let detail = one_line(detail.trim_start_matches("error returned from database: "));
    // PostgreSQL appends its own source position ("at line 768"): noise here.
    let detail = match detail.rfind(" at line ") {
        Some(i) if detail[i + 9..].chars().all(|c| c.is_ascii_digit()) => detail[..i].to_owned(),
        _ => detail,
    };
    let lower = detail.to_ascii_lowercase();
    let hint = if ["tls", "ssl", "certificate", "handshake", "unknownissuer", "notvalidforname"]
        .iter()
        .any(|w| lower.contains(w))
    {
        "check the URL's TLS parameters (sslmode / sslrootcert, ssl_mode / ssl_ca): the CA must sign the server's certificate, and verify-full / VERIFY_IDENTITY needs the host name it was issued for"
    } else if detail.contains("role")
        || detail.contains("Access denied")
        || detail.to_ascii_lowercase().contains("password")
    {
        "check the user and password in the URL"
    } else if detail.contains("does not exist") || detail.contains("Unknown database") {
        "create the database first, or fix the URL"
    } else if backend_of(url) == DbBackend::Sqlite {
        "check that the file's directory exists and is writable"
    } else {
        "is the server running, and is the URL right?"
    };
    Error::Unreachable(format!("cannot connect to {}: {detail}; {hint}", redact(url)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlalchemy_urls_are_accepted() {
        assert_eq!(normalize_url("postgresql+psycopg2://u@h:5432/ironic").unwrap(), "postgres://u@h:5432/ironic");
        assert_eq!(normalize_url("mysql+pymysql://root@127.0.0.1/ironic").unwrap(), "mysql://root@127.0.0.1/ironic");
        assert_eq!(normalize_url("sqlite:////var/lib/ironic.sqlite").unwrap(), "sqlite:///var/lib/ironic.sqlite");
        assert_eq!(normalize_url("sqlite://nodemaint.db").unwrap(), "sqlite://nodemaint.db");
    }

    #[test]
    fn ipv6_hosts_are_hosts_with_or_without_a_port() {
        for url in [
            "postgres://postgres@[::1]/db",
            "postgres://postgres@[::1]:5432/db",
            "mysql://root@[::1]/db",
            "mysql+pymysql://root@[::1]:3306/db?charset=utf8",
            "postgresql+psycopg2://u:p@[fe80::1]/ironic",
        ] {
            assert!(normalize_url(url).is_ok(), "{url}: {:?}", normalize_url(url));
        }
    }

    #[test]
    fn malformed_urls_are_config_errors_naming_the_problem() {
        for (url, needle) in [
            ("nonsense", "no scheme"),
            ("oracle://h/db", "scheme `oracle`"),
            ("postgres://u@h:port/db", "port `port` is not a number"),
            ("mysql://u@[::1]:99999/db", "port `99999`"),
            ("postgres://u@[::1:5432/db", "invalid IPv6"),
            ("mysql:///db", "no host"),
            ("mysql://root@host:3306", "names no database"),
            ("postgres://u@h/", "names no database"),
            ("postgresql://u@h:5432?sslmode=disable", "names no database"),
            ("sqlite://", "names no file"),
        ] {
            let e = normalize_url(url).unwrap_err();
            assert_eq!(e.exit_code(), 3, "{url}");
            assert!(e.message().contains(needle), "{url}: {e}");
        }
    }

    #[test]
    fn tls_parameters_in_libpq_sqlalchemy_and_pymysql_spellings_map_onto_sqlx() {
        let cases = [
            (
                "postgresql+psycopg2://u@h/ironic?sslmode=verify-full&sslrootcert=/ca.pem",
                "postgres://u@h/ironic?sslmode=verify-full&sslrootcert=/ca.pem",
            ),
            ("postgresql://u@h/ironic?sslmode=require", "postgres://u@h/ironic?sslmode=require"),
            ("mysql+pymysql://u@h/ironic?ssl_ca=/ca.pem", "mysql://u@h/ironic?ssl-mode=VERIFY_CA&ssl-ca=/ca.pem"),
            (
                "mysql+pymysql://u@h/ironic?ssl_ca=/ca.pem&ssl_verify_identity=true",
                "mysql://u@h/ironic?ssl-mode=VERIFY_IDENTITY&ssl-ca=/ca.pem",
            ),
            (
                "mysql+pymysql://u@h/ironic?ssl_ca=/ca.pem&ssl_verify_cert=false",
                "mysql://u@h/ironic?ssl-mode=REQUIRED&ssl-ca=/ca.pem",
            ),
            ("mysql://u@h/ironic?ssl_mode=REQUIRED&charset=utf8", "mysql://u@h/ironic?ssl-mode=REQUIRED&charset=utf8"),
            (
                "mysql://u@h/ironic?sslmode=verify-full&ssl_cert=/c.pem&ssl_key=/k.pem",
                "mysql://u@h/ironic?ssl-mode=VERIFY_IDENTITY&ssl-cert=/c.pem&ssl-key=/k.pem",
            ),
            ("sqlite://n.db?mode=rwc", "sqlite://n.db?mode=rwc"),
        ];
        for (given, expected) in cases {
            assert_eq!(normalize_url(given).unwrap(), expected, "{given}");
        }
    }

    #[test]
    fn parameters_nodemaint_does_not_understand_are_refused_by_name() {
        for (url, needle) in [
            ("postgres://u@h/ironic?bogus=1", "parameter `bogus`"),
            ("mysql+pymysql://u@h/ironic?ssl=true", "parameter `ssl`"),
            ("sqlite://n.db?journal=wal", "parameter `journal`"),
            ("postgres://u@h/ironic?sslmode=required", "sslmode=required is not one of"),
            ("mysql://u@h/ironic?ssl_mode=SOMETIMES", "ssl_mode=SOMETIMES is not one of"),
        ] {
            let e = normalize_url(url).unwrap_err();
            assert_eq!(e.exit_code(), 3, "{url}");
            assert!(e.message().contains(needle), "{url}: {e}");
        }
    }

    #[test]
    fn passwords_are_hidden() {
        assert_eq!(redact("postgres://u:secret@h/db"), "postgres://u:***@h/db");
        assert_eq!(redact("postgres://u@h/db"), "postgres://u@h/db");
    }
}
