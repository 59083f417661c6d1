//! One error type for the library and the CLI. Variants that the API returns
//! carry their HTTP status; every variant has its own documented exit code,
//! and its message is one line that names the problem and what to do.

use sea_orm::DbErr;
use sea_orm::sqlx;
use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// 400: the request is malformed (unknown type, `extra` not an object, …).
    BadRequest(String),
    /// 403: policy or the release floors refuse it.
    Forbidden(String),
    /// 404: no such node (or one the caller cannot see), no such entry.
    NotFound(String),
    /// 409: an identical entry is already active.
    Conflict(String),
    /// Bad configuration or arguments: a malformed URL, an unreadable config file.
    Config(String),
    /// The database server could not be reached or refused the login.
    Unreachable(String),
    /// The database is not one nodemaint can work on, or lacks our schema.
    Schema(String),
    /// Another process held a lock past the timeout.
    LockTimeout(String),
    /// The database user lacks a privilege the command needs (or an SQLite
    /// file is read-only); the message names it.
    Privileges(String),
    /// Any other database failure. Nothing was written (the transaction rolled back).
    Database(String),
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
            Error::Unreachable(_) | Error::LockTimeout(_) => 503,
            Error::Config(_) | Error::Schema(_) | Error::Database(_) | Error::Privileges(_) => 500,
        }
    }

    /// The process exit code of a command that fails with this error (README, "Exit codes").
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Config(_) => 3,
            Error::Unreachable(_) | Error::Privileges(_) => 4,
            Error::Schema(_) => 5,
            Error::LockTimeout(_) => 6,
            Error::NotFound(_) => 7,
            Error::Forbidden(_) => 8,
            Error::Conflict(_) => 9,
            Error::BadRequest(_) => 10,
            Error::Database(_) => 11,
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
            | Error::Schema(m)
            | Error::LockTimeout(m)
            | Error::Privileges(m)
            | Error::Database(m) => m,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for Error {}

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
pub fn describe(e: &DbErr) -> String {
    let text = e.to_string();
    let text = text
        .trim_start_matches("Execution Error: ")
        .trim_start_matches("Query Error: ")
        .trim_start_matches("Connection Error: ")
        .trim_start_matches("error returned from database: ");
    one_line(text)
}

/// The server's own error inside a sea-orm error, when there is one.
pub fn database_error(e: &DbErr) -> Option<&(dyn sqlx::error::DatabaseError + 'static)> {
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

/// Whether the server refused for want of a privilege: PostgreSQL's
/// SQLSTATE 42501, MySQL's 1142/1143 (command or column denied), or an
/// SQLite file opened read-only (SQLITE_READONLY and its extended codes).
fn is_privilege_error(db: &dyn sqlx::error::DatabaseError) -> bool {
    if let Some(mysql) = db.try_downcast_ref::<sqlx::mysql::MySqlDatabaseError>() {
        return matches!(mysql.number(), 1142 | 1143 | 1044 | 1227);
    }
    if db.try_downcast_ref::<sqlx::sqlite::SqliteError>().is_some() {
        return db.code().and_then(|c| c.parse::<i32>().ok()).is_some_and(|c| c & 0xff == 8);
    }
    db.code().as_deref() == Some("42501")
}

impl From<DbErr> for Error {
    fn from(e: DbErr) -> Self {
        if let Some(db) = database_error(&e)
            && is_privilege_error(db)
        {
            return Error::Privileges(format!(
                "the database refused: {}; grant the database user the privilege named (Ironic's own database user has them all), or for SQLite make the file writable; nothing was changed",
                describe(&e)
            ));
        }
        match &e {
            DbErr::Conn(_) | DbErr::ConnectionAcquire(_) => {
                Error::Unreachable(format!("lost the database connection: {}", describe(&e)))
            }
            _ => Error::Database(format!("database error: {}; nothing was changed", describe(&e))),
        }
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
        ];
        for (e, status, code) in cases {
            assert_eq!(e.http_status(), status);
            assert_eq!(e.exit_code(), code);
        }
    }

    #[test]
    fn driver_text_is_folded_to_one_line() {
        assert_eq!(one_line("a\n  b\tc"), "a b c");
        assert!(one_line(&"x ".repeat(400)).ends_with('…'));
    }
}
