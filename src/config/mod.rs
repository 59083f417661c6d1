//! Configuration: nodemaint's own TOML file (`--config FILE`) or the
//! deployer's `ironic.conf` (`--config-file FILE`, repeatable, and
//! `--config-dir DIR`, oslo.config's syntax and Ironic's key names; see
//! `oslo.rs`). Both fill one [`Config`], and a key that exists in both means
//! the same in both. A flag or `NODEMAINT_DATABASE_URL` wins over a file,
//! a file over the built-in default.
//!
//! ```toml
//! [database]
//! url = "postgres://ironic@db.example.com/ironic"   # or `connection`, as in ironic.conf
//! db_max_retries = 20        # a transaction that lost to another is run again
//! db_retry_interval = 0.01   # seconds before the first retry, doubled each time
//! db_max_retry_interval = 0.5  # the longest pause
//! pool_timeout = 3           # seconds a request waits for a connection (then 503)
//!
//! [upgrade]
//! pin_release_version = "2025.2"   # set during a rolling upgrade
//! ```

pub(crate) mod oslo;

use crate::error::{Error, Result};
use crate::store::transaction::RetryPolicy;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug, Default, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    pub database: DatabaseSection,
    #[serde(default)]
    pub upgrade: UpgradeSection,
    #[serde(default)]
    pub policy: PolicySection,
    /// `serve --auth-strategy keystone`: keystonemiddleware's section, with
    /// its key names, so it can be carried over from `ironic.conf`.
    pub keystone_authtoken: Option<KeystoneSection>,
    /// `serve`'s `/healthcheck`, as oslo.middleware's.
    #[serde(default)]
    pub healthcheck: HealthcheckSection,
    /// Ironic's `[DEFAULT]` keys nodemaint uses.
    #[serde(default, rename = "DEFAULT")]
    pub default: DefaultSection,
    /// oslo.messaging's notifier: which driver, over which transport.
    #[serde(default)]
    pub oslo_messaging_notifications: NotificationsSection,
    /// oslo.messaging's RabbitMQ driver: TLS to the broker.
    #[serde(default)]
    pub oslo_messaging_rabbit: RabbitSection,
    /// nodemaint's own keys, in a section of its own in `ironic.conf`.
    #[serde(default)]
    pub nodemaint: NodemaintSection,
    /// Which files this came from (none: the built-in defaults).
    #[serde(skip)]
    pub source: Option<Source>,
}

/// Where a [`Config`] was read from, for messages that name a key's file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// nodemaint's TOML file.
    Toml(String),
    /// oslo.config files (`ironic.conf`), listed in the order read.
    Oslo(String),
}

/// Ironic's `[DEFAULT]` keys that nodemaint uses.
#[derive(Debug, Default, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct DefaultSection {
    /// The name this service reports itself as (Ironic's `host`).
    pub host: Option<String>,
    /// `keystone` or `noauth`, as Ironic reads it: `serve`'s default
    /// `--auth-strategy`.
    pub auth_strategy: Option<String>,
    /// Versioned notifications at this level and above are sent (`debug`,
    /// `info`, `warning`, `error`, `critical`); unset, none are, as in Ironic.
    pub notification_level: Option<String>,
    /// Where versioned notifications go (Ironic's default
    /// `ironic_versioned_notifications`).
    pub versioned_notifications_topics: Option<Vec<String>>,
    /// The exchange they are published to (Ironic's default `ironic`).
    pub control_exchange: Option<String>,
    /// oslo.messaging's transport, for notifications too unless
    /// `[oslo_messaging_notifications] transport_url` names another.
    pub transport_url: Option<String>,
}

/// `[oslo_messaging_notifications]`, as oslo.messaging reads it.
#[derive(Debug, Default, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct NotificationsSection {
    /// `messagingv2` (the message bus), `log`, or `noop`; unset, nothing
    /// is sent, as oslo.messaging's notifier with no driver.
    pub driver: Option<String>,
    /// The broker notifications go to (`rabbit://user:pass@host:5672/vhost`).
    pub transport_url: Option<String>,
}

/// `[oslo_messaging_rabbit]`'s TLS keys.
#[derive(Debug, Default, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct RabbitSection {
    /// Connect to the broker over TLS.
    pub ssl: Option<bool>,
    /// A PEM file of CAs to verify the broker's certificate with (default:
    /// the system's).
    pub ssl_ca_file: Option<String>,
    /// A PEM client certificate and its key, for brokers that ask for one.
    pub ssl_cert_file: Option<String>,
    pub ssl_key_file: Option<String>,
}

/// `[nodemaint]`: keys of nodemaint's own, beside Ironic's.
#[derive(Debug, Default, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NodemaintSection {
    /// Seconds a sent notification is kept in the outbox before it is
    /// pruned (default a day).
    pub notification_retention: Option<f64>,
}

/// `[healthcheck]`, as Ironic reads it for oslo.middleware.
#[derive(Debug, Default, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct HealthcheckSection {
    /// `GET /healthcheck` is served unless this is false (Ironic's default
    /// is off; nodemaint's is on: it shows only OK or why not, and a load
    /// balancer in front of a new service needs it from the first day).
    pub enabled: Option<bool>,
}

/// How `serve` validates tokens with Keystone (keystonemiddleware's
/// `[keystone_authtoken]` keys).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct KeystoneSection {
    /// Keystone's identity endpoint, e.g. `https://keystone.example.com:5000/v3`
    /// (`/v3` is added when absent).
    pub auth_url: String,
    /// `password` or `v3applicationcredential`.
    #[serde(default = "default_auth_type")]
    pub auth_type: String,
    pub username: Option<String>,
    pub password: Option<String>,
    pub project_name: Option<String>,
    #[serde(default = "default_domain")]
    pub user_domain_name: String,
    #[serde(default = "default_domain")]
    pub project_domain_name: String,
    pub application_credential_id: Option<String>,
    pub application_credential_secret: Option<String>,
    /// What a 401 names for clients to authenticate at (default: `auth_url`).
    pub www_authenticate_uri: Option<String>,
    /// A PEM file of CAs to verify Keystone's certificate with.
    pub cafile: Option<String>,
    /// Do not verify Keystone's certificate (testing only).
    #[serde(default)]
    pub insecure: bool,
    /// Seconds a validated token is trusted without asking Keystone again
    /// (at most until it expires); a revoked token works until then.
    #[serde(default = "default_token_cache_time")]
    pub token_cache_time: u64,
    /// Seconds to wait for a connection to Keystone.
    #[serde(default = "default_connect_timeout")]
    pub http_connect_timeout: u64,
    // keystonemiddleware keys that mean nothing here; accepted so the
    // section carries over from ironic.conf unchanged.
    pub auth_version: Option<toml::Value>,
    pub region_name: Option<toml::Value>,
    pub interface: Option<toml::Value>,
    pub memcached_servers: Option<toml::Value>,
    pub service_token_roles: Option<toml::Value>,
    pub service_token_roles_required: Option<toml::Value>,
    pub service_type: Option<toml::Value>,
    pub delay_auth_decision: Option<toml::Value>,
}

impl KeystoneSection {
    /// The section with `auth_url` and every other key at its default.
    pub fn with_auth_url(auth_url: String) -> KeystoneSection {
        KeystoneSection {
            auth_url,
            auth_type: default_auth_type(),
            username: None,
            password: None,
            project_name: None,
            user_domain_name: default_domain(),
            project_domain_name: default_domain(),
            application_credential_id: None,
            application_credential_secret: None,
            www_authenticate_uri: None,
            cafile: None,
            insecure: false,
            token_cache_time: default_token_cache_time(),
            http_connect_timeout: default_connect_timeout(),
            auth_version: None,
            region_name: None,
            interface: None,
            memcached_servers: None,
            service_token_roles: None,
            service_token_roles_required: None,
            service_type: None,
            delay_auth_decision: None,
        }
    }
}

fn default_auth_type() -> String {
    "password".into()
}

fn default_domain() -> String {
    "Default".into()
}

fn default_token_cache_time() -> u64 {
    300
}

fn default_connect_timeout() -> u64 {
    10
}

/// How long a request waits for a pooled connection by default before it
/// is answered 503: long enough for a busy pool to free one, short enough
/// that a client (or a load balancer's health check) learns of a dead
/// database in seconds instead of hanging. oslo.db's `pool_timeout` key.
pub(crate) const DEFAULT_POOL_TIMEOUT: Duration = Duration::from_secs(3);

#[derive(Debug, Default, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DatabaseSection {
    /// The database URL (`connection` is ironic.conf's name for it).
    #[serde(alias = "connection")]
    pub url: Option<String>,
    /// How often a transaction that lost to a concurrent one (deadlock,
    /// Galera certification conflict, busy database) is run again
    /// (oslo.db's `db_max_retries`).
    pub db_max_retries: Option<u32>,
    /// Seconds before the first retry; doubled after each, with jitter.
    pub db_retry_interval: Option<f64>,
    /// The longest pause between retries, in seconds.
    pub db_max_retry_interval: Option<f64>,
    /// Seconds a request waits for a pooled connection before its 503.
    pub pool_timeout: Option<f64>,
    /// Most connections `serve` holds open (unless `--db-max-connections`).
    pub max_pool_size: Option<u32>,
    // nodemaint's names before it read ironic.conf: refused with the new name,
    // since in ironic.conf `max_retries` and `retry_interval` mean oslo.db's
    // connection attempts at start, not transaction retries.
    #[serde(default)]
    max_retries: Option<toml::Value>,
    #[serde(default)]
    retry_interval: Option<toml::Value>,
    #[serde(default)]
    max_retry_interval: Option<toml::Value>,
}

fn seconds(key: &str, value: Option<f64>, default: Duration) -> Result<Duration> {
    match value {
        None => Ok(default),
        Some(v) if v.is_finite() && (0.0..=3600.0).contains(&v) => Ok(Duration::from_secs_f64(v)),
        Some(v) => Err(Error::Config(format!("[database] {key} = {v} is not a number of seconds between 0 and 3600"))),
    }
}

impl DatabaseSection {
    /// The retry policy these keys give (the defaults where absent).
    pub fn retry_policy(&self) -> Result<RetryPolicy> {
        let default = RetryPolicy::default();
        Ok(RetryPolicy {
            max_retries: self.db_max_retries.unwrap_or(default.max_retries),
            interval: seconds("db_retry_interval", self.db_retry_interval, default.interval)?,
            max_interval: seconds("db_max_retry_interval", self.db_max_retry_interval, default.max_interval)?,
        })
    }

    /// How long a request waits for a connection (3 s unless configured).
    pub fn pool_timeout(&self) -> Result<Duration> {
        let timeout = seconds("pool_timeout", self.pool_timeout, DEFAULT_POOL_TIMEOUT)?;
        if timeout.is_zero() {
            return Err(Error::Config("[database] pool_timeout = 0 would refuse every request; use at least 1".into()));
        }
        Ok(timeout)
    }

    /// The names nodemaint's TOML used before, each refused with its new name.
    fn check_renamed(&self) -> Result<(), String> {
        for (old, value, new) in [
            ("max_retries", &self.max_retries, "db_max_retries"),
            ("retry_interval", &self.retry_interval, "db_retry_interval"),
            ("max_retry_interval", &self.max_retry_interval, "db_max_retry_interval"),
        ] {
            if value.is_some() {
                return Err(format!(
                    "[database] {old} is now {new} (oslo.db's name; in ironic.conf `{old}` means connection attempts at start, which nodemaint does not make); rename it"
                ));
            }
        }
        Ok(())
    }
}

#[derive(Debug, Default, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct UpgradeSection {
    pub pin_release_version: Option<String>,
}

#[derive(Debug, Default, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct PolicySection {
    /// A YAML or JSON oslo.policy file overriding the defaults.
    pub file: Option<String>,
    /// As oslo.policy's `enforce_scope` (default true). When false, a
    /// project-scoped admin has system authority.
    pub enforce_scope: Option<bool>,
}

/// The files a command was told to read.
#[derive(Debug, Default, Clone)]
pub struct Files {
    /// `--config`: nodemaint's TOML file.
    pub toml: Option<PathBuf>,
    /// `--config-file`, in order: oslo.config INI (`ironic.conf`).
    pub oslo_files: Vec<PathBuf>,
    /// `--config-dir`: every `*.conf` in each, by name, after the files.
    pub oslo_dirs: Vec<PathBuf>,
}

impl Files {
    /// The configuration they give: the TOML file, or the oslo.config
    /// files, or the defaults. Both kinds at once is refused: which one
    /// wins for a key would be a guess.
    pub fn load(&self) -> Result<Config> {
        let oslo = !self.oslo_files.is_empty() || !self.oslo_dirs.is_empty();
        match (&self.toml, oslo) {
            (Some(toml), true) => Err(Error::Config(format!(
                "--config {} (nodemaint's TOML) and --config-file/--config-dir (ironic.conf) were both given; use one of them",
                toml.display()
            ))),
            (Some(toml), false) => Config::load(toml),
            (None, true) => oslo::OsloFiles::read(&self.oslo_files, &self.oslo_dirs)?.to_config(),
            (None, false) => Ok(Config::default()),
        }
    }
}

impl Config {
    /// nodemaint's TOML file.
    pub fn load(path: &Path) -> Result<Config> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::Config(format!("cannot read config file {}: {e}", path.display())))?;
        let mut config =
            Config::parse(&text).map_err(|e| Error::Config(format!("config file {}: {e}", path.display())))?;
        config.source = Some(Source::Toml(path.display().to_string()));
        Ok(config)
    }

    pub fn parse(text: &str) -> Result<Config, String> {
        let config: Config = toml::from_str(text).map_err(|e| crate::error::one_line(e.message()))?;
        config.database.check_renamed()?;
        Ok(config)
    }

    /// Where the release pin was set, for messages: the key and its file.
    pub fn pin_source(&self) -> String {
        match &self.source {
            Some(Source::Oslo(files)) => format!("[DEFAULT] pin_release_version in {files}"),
            Some(Source::Toml(file)) => format!("[upgrade] pin_release_version in {file}"),
            None => "[upgrade] pin_release_version".into(),
        }
    }

    /// The files this came from, for messages (`the config file` when none).
    pub fn describe(&self) -> String {
        match &self.source {
            Some(Source::Oslo(files) | Source::Toml(files)) => files.clone(),
            None => "the config file".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_are_read() {
        let c = Config::parse("[database]\nurl = \"sqlite://x.db\"\n[upgrade]\npin_release_version = \"2025.2\"\n")
            .unwrap();
        assert_eq!(c.database.url.as_deref(), Some("sqlite://x.db"));
        assert_eq!(c.upgrade.pin_release_version.as_deref(), Some("2025.2"));
    }

    #[test]
    fn retry_keys_give_the_retry_policy_and_bad_values_are_refused() {
        let c = Config::parse("[database]\ndb_max_retries = 3\ndb_retry_interval = 0.2\n").unwrap();
        let retry = c.database.retry_policy().unwrap();
        assert_eq!(retry.max_retries, 3);
        assert_eq!(retry.interval, Duration::from_millis(200));
        assert_eq!(retry.max_interval, RetryPolicy::default().max_interval);
        let e =
            Config::parse("[database]\ndb_max_retry_interval = -1.0\n").unwrap().database.retry_policy().unwrap_err();
        assert!(e.to_string().contains("db_max_retry_interval"), "{e}");
    }

    #[test]
    fn the_old_retry_names_are_refused_with_the_new_ones() {
        let e = Config::parse("[database]\nmax_retries = 0\n").unwrap_err();
        assert!(e.contains("max_retries is now db_max_retries"), "{e}");
        let c = Config::parse("[database]\nconnection = \"sqlite://x.db\"\npool_timeout = 2\n").unwrap();
        assert_eq!(c.database.url.as_deref(), Some("sqlite://x.db"));
        assert_eq!(c.database.pool_timeout().unwrap(), Duration::from_secs(2));
        assert_eq!(Config::default().database.pool_timeout().unwrap(), DEFAULT_POOL_TIMEOUT);
    }

    #[test]
    fn unknown_keys_are_refused() {
        let e = Config::parse("[database]\nuri = \"x\"\n").unwrap_err();
        assert!(e.contains("uri"), "{e}");
    }
}
