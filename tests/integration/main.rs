//! Integration tests against real SQLite, PostgreSQL and MySQL/MariaDB
//! databases (see `common` for how each test gets its own database).

mod common;

mod backfill;
mod scenarios;
mod catalog;
mod db_cli;
