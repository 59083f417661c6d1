//! One error type for the library and the CLI. Variants that the API returns
//! carry their HTTP status; every variant has its own documented exit code,
//! and its message is one line that names the problem and what to do.

use crate::authority::rejected::Rejected;
use sea_orm::DbErr;
use sea_orm::sqlx;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// 400: the request is malformed (unknown type, `extra` not an object, …).
    #[error("{0}")]
    BadRequest(String),
    /// 403: policy or the release floors refuse it.
    #[error("{0}")]
    Forbidden(String),
    /// 404: no such node (or one the caller cannot see), no such entry.
    #[error("{0}")]
    NotFound(String),
    /// 409: an identical entry is already active.
    #[error("{0}")]
    Conflict(String),
    /// Bad configuration or arguments: a malformed URL, an unreadable config file.
    #[error("{0}")]
    Config(String),
    /// The database server could not be reached or refused the login, or no
    /// pooled connection came free within `[database] pool_timeout`.
    #[error("{0}")]
    Unreachable(String),
    /// 503: the connection died under the operation (the server restarted,
    /// shut down, killed the session, or the network dropped it). The
    /// transaction was not committed, unless it died during the commit
    /// itself (`committing`): then whether the change was made is unknown.
    #[error("{message}")]
    Lost { message: String, committing: bool },
    /// The database is not one nodemaint can work on, or lacks our schema.
    #[error("{0}")]
    Schema(String),
    /// Another process held a lock past the timeout.
    #[error("{0}")]
    LockTimeout(String),
    /// The database user lacks a privilege the command needs (or an SQLite
    /// file is read-only); the message names it.
    #[error("{0}")]
    Privileges(String),
    /// 503: the transaction lost to others (deadlock, Galera certification
    /// conflict, serialization failure, busy database) every time it was
    /// run, up to the retry limit. Nothing was written; trying again later
    /// may succeed.
    #[error("{0}")]
    Contended(String),
    /// Any other database failure. Nothing was written (the transaction
    /// rolled back). `kind` says what the server's code meant.
    #[error("{message}")]
    Database { message: String, kind: DbFailure },
    /// The message bus (RabbitMQ) could not be reached, refused the login,
    /// or did not confirm a notification. Nothing was marked sent: the
    /// notifications wait in the outbox for the next try.
    #[error("{0}")]
    Bus(String),
}

/// What a database failure was, decided from the server's codes (never its
/// text).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DbFailure {
    /// A deadlock, or a Galera certification conflict (reported as one):
    /// retrying the whole transaction is safe.
    Deadlock,
    /// A serializable transaction lost to another: retry the whole transaction.
    Serialization,
    /// A lock wait gave up, or SQLite was busy or locked: retryable.
    Busy,
    /// A Galera node that is not ready for clients (not synced, or not in
    /// the cluster's primary component): try another node.
    NotReady,
    /// The server ended the session: it is shutting down or restarting,
    /// an administrator killed the connection, or it cannot take clients now.
    ConnectionLost,
    /// The server cannot store a value as given: a character outside its
    /// character set (NUL in PostgreSQL, an emoji in MySQL's utf8mb3).
    BadCharacter,
    /// A value longer than its column.
    TooLong,
    /// A time outside what the column stores.
    BadTime,
    /// A unique key refused the row.
    UniqueViolation,
    /// The user lacks a privilege (or the SQLite file is read-only).
    Privilege,
    /// Anything else.
    Other,
}

/// Which server a code came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Server {
    Postgres,
    Mysql,
    Sqlite,
}

impl DbFailure {
    /// Classifies a server error from its SQLSTATE (PostgreSQL, MySQL) and
    /// vendor number (MySQL's error number, SQLite's extended result code).
    pub(crate) fn classify(server: Server, sqlstate: Option<&str>, number: Option<i64>) -> DbFailure {
        match server {
            Server::Postgres => match sqlstate.unwrap_or_default() {
                "40P01" => DbFailure::Deadlock,
                "40001" => DbFailure::Serialization,
                "55P03" => DbFailure::Busy,
                "23505" => DbFailure::UniqueViolation,
                "42501" => DbFailure::Privilege,
                // admin_shutdown ("terminating connection due to administrator
                // command"), crash_shutdown, cannot_connect_now, and class 08.
                "57P01" | "57P02" | "57P03" => DbFailure::ConnectionLost,
                "22021" | "22P05" => DbFailure::BadCharacter,
                "22001" => DbFailure::TooLong,
                "22008" => DbFailure::BadTime,
                state if state.starts_with("08") => DbFailure::ConnectionLost,
                _ => DbFailure::Other,
            },
            Server::Mysql => match number.unwrap_or_default() {
                // 1213 is also how Galera reports a certification conflict.
                1213 => DbFailure::Deadlock,
                // MariaDB: "Record has changed since last read" (a row
                // changed under a REPEATABLE READ transaction).
                1020 => DbFailure::Serialization,
                1205 => DbFailure::Busy,
                // "WSREP has not yet prepared node for application use".
                1047 => DbFailure::NotReady,
                1062 | 1586 => DbFailure::UniqueViolation,
                1044 | 1142 | 1143 | 1227 => DbFailure::Privilege,
                // Server shutdown in progress, connection killed (MariaDB),
                // server gone away, lost connection, inactivity disconnect.
                1053 | 1927 | 2006 | 2013 | 4031 => DbFailure::ConnectionLost,
                1366 | 1300 => DbFailure::BadCharacter,
                1406 => DbFailure::TooLong,
                1292 => DbFailure::BadTime,
                _ => DbFailure::Other,
            },
            // Primary result codes are the low byte of the extended ones.
            Server::Sqlite => match number.unwrap_or_default() {
                1555 | 2067 => DbFailure::UniqueViolation,
                n if n & 0xff == 5 || n & 0xff == 6 => DbFailure::Busy,
                n if n & 0xff == 8 => DbFailure::Privilege,
                _ => DbFailure::Other,
            },
        }
    }

    /// Whether the whole transaction may simply be run again.
    pub fn is_transient(self) -> bool {
        matches!(self, DbFailure::Deadlock | DbFailure::Serialization | DbFailure::Busy)
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// The HTTP status an API returns for this error.
    pub fn http_status(&self) -> u16 {
        match self {
            Error::BadRequest(_) => 400,
            Error::Forbidden(_) => 403,
            Error::NotFound(_) => 404,
            Error::Conflict(_) => 409,
            Error::Unreachable(_)
            | Error::Lost { .. }
            | Error::LockTimeout(_)
            | Error::Contended(_)
            | Error::Bus(_) => 503,
            Error::Config(_) | Error::Schema(_) | Error::Database { .. } | Error::Privileges(_) => 500,
        }
    }

    /// The process exit code of a command that fails with this error (README, "Exit codes").
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Config(_) => 3,
            Error::Unreachable(_) | Error::Lost { .. } | Error::Privileges(_) => 4,
            Error::Schema(_) => 5,
            Error::LockTimeout(_) => 6,
            Error::NotFound(_) => 7,
            Error::Forbidden(_) => 8,
            Error::Conflict(_) => 9,
            Error::BadRequest(_) => 10,
            Error::Database { .. } => 11,
            Error::Contended(_) => 12,
            Error::Bus(_) => 13,
        }
    }

    pub fn message(&self) -> &str {
        match self {
            Error::BadRequest(m)
            | Error::Forbidden(m)
            | Error::NotFound(m)
            | Error::Conflict(m)
            | Error::Config(m)
            | Error::Unreachable(m)
            | Error::Lost { message: m, .. }
            | Error::Schema(m)
            | Error::LockTimeout(m)
            | Error::Privileges(m)
            | Error::Contended(m)
            | Error::Bus(m)
            | Error::Database { message: m, .. } => m,
        }
    }
}

/// A driver message folded onto one line and kept short.
pub fn one_line(text: &str) -> String {
    let folded: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if folded.chars().count() > 300 {
        let cut: String = folded.chars().take(300).collect();
        format!("{cut}…")
    } else {
        folded
    }
}

/// What a database error says, without sea-orm's wrapper prefixes.
pub(crate) fn describe(e: &DbErr) -> String {
    let text = e.to_string();
    let text = text
        .trim_start_matches("Execution Error: ")
        .trim_start_matches("Query Error: ")
        .trim_start_matches("Connection Error: ")
        .trim_start_matches("error returned from database: ");
    one_line(text)
}

/// The server's own error inside a sea-orm error, when there is one.
pub(crate) fn database_error(e: &DbErr) -> Option<&(dyn sqlx::error::DatabaseError + 'static)> {
    use sea_orm::RuntimeErr;
    match e {
        DbErr::Exec(RuntimeErr::SqlxError(inner))
        | DbErr::Query(RuntimeErr::SqlxError(inner))
        | DbErr::Conn(RuntimeErr::SqlxError(inner)) => match inner.as_ref() {
            sqlx::Error::Database(db) => Some(db.as_ref()),
            _ => None,
        },
        _ => None,
    }
}

/// Whether `e` is the connection failing (the server went away mid-query,
/// or the pool could not hand out a connection) rather than the server
/// answering with an error.
fn lost_connection(e: &DbErr) -> bool {
    use sea_orm::RuntimeErr;
    match e {
        DbErr::Exec(RuntimeErr::SqlxError(inner))
        | DbErr::Query(RuntimeErr::SqlxError(inner))
        | DbErr::Conn(RuntimeErr::SqlxError(inner)) => matches!(
            inner.as_ref(),
            sqlx::Error::Io(_) | sqlx::Error::Tls(_) | sqlx::Error::PoolClosed | sqlx::Error::WorkerCrashed
        ),
        _ => false,
    }
}

/// What the server's codes say `e` was (`Other` for a failure with no server error).
pub(crate) fn failure_of(e: &DbErr) -> DbFailure {
    let Some(db) = database_error(e) else { return DbFailure::Other };
    let sqlstate = db.code();
    if let Some(mysql) = db.try_downcast_ref::<sqlx::mysql::MySqlDatabaseError>() {
        return DbFailure::classify(Server::Mysql, sqlstate.as_deref(), Some(i64::from(mysql.number())));
    }
    if db.try_downcast_ref::<sqlx::sqlite::SqliteError>().is_some() {
        // sqlx gives SQLite's extended result code as the "code".
        return DbFailure::classify(Server::Sqlite, None, sqlstate.as_deref().and_then(|c| c.parse().ok()));
    }
    DbFailure::classify(Server::Postgres, sqlstate.as_deref(), None)
}

impl From<DbErr> for Error {
    fn from(e: DbErr) -> Self {
        let kind = failure_of(&e);
        if kind == DbFailure::Privilege {
            return Error::Privileges(format!(
                "the database refused: {}; grant the database user the privilege named (Ironic's own database user has them all), or for SQLite make the file writable; nothing was changed",
                describe(&e)
            ));
        }
        if let Some(what) = match kind {
            DbFailure::BadCharacter => Some(
                "a text holds a character the database's character set cannot store (NUL; or with MySQL's utf8, \
                 which is utf8mb3, a 4-byte character such as an emoji): remove it, or connect with charset=utf8mb4",
            ),
            DbFailure::TooLong => Some("a value is longer than its database column allows: shorten it"),
            DbFailure::BadTime => Some("a time is outside what the database stores"),
            _ => None,
        } {
            tracing::debug!("the database refused a value: {}", describe(&e));
            return Error::BadRequest(format!("The database cannot store this request: {what}; nothing was changed"));
        }
        if kind == DbFailure::NotReady {
            return Error::Unreachable(format!(
                "the database node is not ready for clients ({}): a Galera node that is not synced or not in the primary component; use another node, or wait until it has rejoined",
                describe(&e)
            ));
        }
        if let DbErr::ConnectionAcquire(_) = &e {
            return Error::Unreachable(
                "no database connection within [database] pool_timeout: the database server is unreachable, or every \
                 connection is busy; nothing was written; try again"
                    .into(),
            );
        }
        if kind == DbFailure::ConnectionLost || lost_connection(&e) {
            return Error::Lost {
                message: format!("lost the database connection ({}); nothing was written; try again", describe(&e)),
                committing: false,
            };
        }
        match &e {
            DbErr::Conn(_) => Error::Unreachable(format!("lost the database connection: {}", describe(&e))),
            _ => Error::Database { message: format!("database error: {}; nothing was changed", describe(&e)), kind },
        }
    }
}

/// The authority model's refusals keep their status and message.
impl From<Rejected> for Error {
    fn from(rejected: Rejected) -> Self {
        let message = rejected.to_string();
        match rejected.http_status() {
            404 => Error::NotFound(message),
            403 => Error::Forbidden(message),
            409 => Error::Conflict(message),
            _ => Error::BadRequest(message),
        }
    }
}

impl Error {
    /// 404 for a node that does not exist or that the caller may not see
    /// (the API does not tell the two apart), in Ironic's words.
    pub fn node_not_found(ident: &str) -> Error {
        Rejected::NodeNotFound { node: ident.to_owned() }.into()
    }

    /// A lock that could not be taken: `on_timeout` words the timeout
    /// (given how long it waited), the rest map as any failure does.
    pub(crate) fn from_lock(
        e: nodemaint_runtime::lock::LockError,
        on_timeout: impl FnOnce(std::time::Duration) -> String,
    ) -> Error {
        match e {
            nodemaint_runtime::lock::LockError::Timeout { waited, .. } => Error::LockTimeout(on_timeout(waited)),
            nodemaint_runtime::lock::LockError::Db(e) => Error::from(e),
            nodemaint_runtime::lock::LockError::Io(m) => Error::Config(m),
        }
    }

    /// 404 for an entry that is not active on the node.
    pub fn entry_not_found(uuid: &str, node: &str) -> Error {
        Rejected::EntryNotFound { uuid: uuid.to_owned(), node: node.to_owned() }.into()
    }

    /// Whether the failed transaction may be run again as a whole
    /// (a deadlock, a serialization failure, a busy or locked database).
    pub fn is_transient(&self) -> bool {
        matches!(self, Error::Database { kind, .. } if kind.is_transient())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_errors_carry_their_status_and_exit_code() {
        let cases = [
            (Error::BadRequest("x".into()), 400, 10),
            (Error::Forbidden("x".into()), 403, 8),
            (Error::NotFound("x".into()), 404, 7),
            (Error::Conflict("x".into()), 409, 9),
            (Error::Contended("x".into()), 503, 12),
            (Error::Lost { message: "x".into(), committing: false }, 503, 4),
            (Error::Unreachable("x".into()), 503, 4),
            (Error::Bus("x".into()), 503, 13),
        ];
        for (e, status, code) in cases {
            assert_eq!(e.http_status(), status);
            assert_eq!(e.exit_code(), code);
        }
    }

    #[test]
    fn failures_are_classified_by_each_servers_codes() {
        use DbFailure::*;
        let cases = [
            (Server::Postgres, Some("40P01"), None, Deadlock),
            (Server::Postgres, Some("40001"), None, Serialization),
            (Server::Postgres, Some("55P03"), None, Busy),
            (Server::Postgres, Some("23505"), None, UniqueViolation),
            (Server::Postgres, Some("42501"), None, Privilege),
            (Server::Postgres, Some("42P01"), None, Other),
            (Server::Postgres, Some("57P01"), None, ConnectionLost),
            (Server::Postgres, Some("57P03"), None, ConnectionLost),
            (Server::Postgres, Some("08006"), None, ConnectionLost),
            (Server::Mysql, Some("40001"), Some(1213), Deadlock),
            (Server::Mysql, Some("HY000"), Some(1205), Busy),
            (Server::Mysql, Some("HY000"), Some(1020), Serialization),
            (Server::Mysql, Some("08S01"), Some(1047), NotReady),
            (Server::Mysql, Some("23000"), Some(1062), UniqueViolation),
            (Server::Mysql, Some("42000"), Some(1142), Privilege),
            (Server::Mysql, Some("42S02"), Some(1146), Other),
            (Server::Mysql, Some("08S01"), Some(1053), ConnectionLost),
            (Server::Mysql, Some("70100"), Some(1927), ConnectionLost),
            (Server::Mysql, Some("HY000"), Some(2013), ConnectionLost),
            (Server::Mysql, Some("22007"), Some(1366), BadCharacter),
            (Server::Mysql, Some("22001"), Some(1406), TooLong),
            (Server::Postgres, Some("22021"), None, BadCharacter),
            (Server::Sqlite, None, Some(5), Busy),
            (Server::Sqlite, None, Some(517), Busy),
            (Server::Sqlite, None, Some(6), Busy),
            (Server::Sqlite, None, Some(2067), UniqueViolation),
            (Server::Sqlite, None, Some(1555), UniqueViolation),
            (Server::Sqlite, None, Some(8), Privilege),
            (Server::Sqlite, None, Some(787), Other),
        ];
        for (server, state, number, want) in cases {
            assert_eq!(DbFailure::classify(server, state, number), want, "{server:?} {state:?} {number:?}");
        }
        assert!(Deadlock.is_transient() && Serialization.is_transient() && Busy.is_transient());
        assert!(!UniqueViolation.is_transient() && !Other.is_transient() && !Privilege.is_transient());
        assert!(!NotReady.is_transient());
    }

    #[test]
    fn driver_text_is_folded_to_one_line() {
        assert_eq!(one_line("a\n  b\tc"), "a b c");
        assert!(one_line(&"x ".repeat(400)).ends_with('…'));
    }
}
