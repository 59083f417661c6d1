//! Integration tests against real SQLite, PostgreSQL and MySQL/MariaDB
//! databases (see `common` for how each test gets its own database).

mod common;

mod api;
mod authority_modes;
mod backfill;
mod bad_input;
mod catalog;
mod concurrency;
mod db_cli;
mod events;
mod first_day;
mod galera;
mod ironic_conf;
mod ironic_notifications;
mod ironic_wire;
mod keystone;
mod layout;
mod maintenance_cli;
mod notifications;
mod outage;
mod own_postgres;
mod readme;
mod rolling_upgrade;
mod scenarios;
mod tls;
mod windows;
