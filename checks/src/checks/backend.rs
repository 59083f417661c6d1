//! Is the database server recent enough for what the migrations use?
//! SQLite 3.23 (`TRUE`/`FALSE`), PostgreSQL 13 (`gen_random_uuid()`),
//! MariaDB 10.10 (`RANDOM_BYTES()`), MySQL 8.0 (Ironic's own minimum).

use crate::{CheckResult, Context};
use sea_orm::{ConnectionTrait, DbBackend, Statement};

/// `(major, minor)` from the start of a version string such as `15.19 (Debian …)`.
pub fn major_minor(version: &str) -> Option<(u32, u32)> {
    let mut parts = version.split(|c: char| !c.is_ascii_digit()).filter(|p| !p.is_empty());
    Some((parts.next()?.parse().ok()?, parts.next().and_then(|p| p.parse().ok()).unwrap_or(0)))
}

/// The product, its version, and the minimum nodemaint needs.
pub fn requirement(backend: DbBackend, version: &str) -> (&'static str, (u32, u32)) {
    match backend {
        DbBackend::Sqlite => ("SQLite", (3, 23)),
        DbBackend::Postgres => ("PostgreSQL", (13, 0)),
        _ if version.contains("MariaDB") => ("MariaDB", (10, 10)),
        _ => ("MySQL", (8, 0)),
    }
}

pub async fn check(c: &Context) -> Result<CheckResult, String> {
    let backend = c.db.get_database_backend();
    let sql = match backend {
        DbBackend::Sqlite => "SELECT sqlite_version()",
        DbBackend::Postgres => "SHOW server_version",
        _ => "SELECT VERSION()",
    };
    let row =
        c.db.query_one_raw(Statement::from_string(backend, sql)).await.map_err(|e| e.to_string())?.ok_or("no row")?;
    let version: String = row.try_get_by_index(0).map_err(|e| e.to_string())?;
    let (product, minimum) = requirement(backend, &version);
    let found = major_minor(&version).ok_or_else(|| format!("cannot read the server version `{version}`"))?;
    if found >= minimum {
        return Ok(CheckResult::success(Some(format!(
            "{product} {version} ({}.{} or later is needed).",
            minimum.0, minimum.1
        ))));
    }
    Ok(CheckResult::failure(format!(
        "{product} {version} is older than {}.{}, which the nodemaint migrations need. Upgrade the database server first.",
        minimum.0, minimum.1
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_read_and_compared() {
        assert_eq!(major_minor("15.19 (Debian 15.19-0+deb12u1)"), Some((15, 19)));
        assert_eq!(major_minor("10.11.19-MariaDB-0+deb12u1"), Some((10, 11)));
        assert_eq!(requirement(DbBackend::MySql, "10.9.2-MariaDB"), ("MariaDB", (10, 10)));
        assert!(major_minor("10.9.2-MariaDB").unwrap() < (10, 10));
        assert_eq!(requirement(DbBackend::MySql, "8.0.36"), ("MySQL", (8, 0)));
    }
}
