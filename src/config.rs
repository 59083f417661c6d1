//! The configuration file (`--config FILE`, TOML) and how it combines with
//! flags and the environment: a flag or `NODEMAINT_DATABASE_URL` wins over
//! the file, the file over the built-in default.
//!
//! ```toml
//! [database]
//! url = "postgres://ironic@db.example.com/ironic"
//! max_retries = 20           # a transaction that lost to another is run again
//! retry_interval = 0.01      # seconds before the first retry, doubled each time
//! max_retry_interval = 0.5   # the longest pause
//!
//! [upgrade]
//! pin_release_version = "2025.2"   # set during a rolling upgrade
//! ```

use crate::error::{Error, Result};
use crate::store::transaction::RetryPolicy;
use serde::Deserialize;
use std::path::Path;
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

#[derive(Debug, Default, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DatabaseSection {
    pub url: Option<String>,
    /// How often a transaction that lost to a concurrent one (deadlock,
    /// Galera certification conflict, busy database) is run again.
    pub max_retries: Option<u32>,
    /// Seconds before the first retry; doubled after each, with jitter.
    pub retry_interval: Option<f64>,
    /// The longest pause between retries, in seconds.
    pub max_retry_interval: Option<f64>,
}

impl DatabaseSection {
    /// The retry policy these keys give (the defaults where absent).
    pub fn retry_policy(&self) -> Result<RetryPolicy> {
        let default = RetryPolicy::default();
        let seconds = |key: &str, value: Option<f64>, default: Duration| match value {
            None => Ok(default),
            Some(v) if v.is_finite() && (0.0..=3600.0).contains(&v) => Ok(Duration::from_secs_f64(v)),
            Some(v) => {
                Err(Error::Config(format!("[database] {key} = {v} is not a number of seconds between 0 and 3600")))
            }
        };
        Ok(RetryPolicy {
            max_retries: self.max_retries.unwrap_or(default.max_retries),
            interval: seconds("retry_interval", self.retry_interval, default.interval)?,
            max_interval: seconds("max_retry_interval", self.max_retry_interval, default.max_interval)?,
        })
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

impl Config {
    pub fn load(path: &Path) -> Result<Config> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::Config(format!("cannot read config file {}: {e}", path.display())))?;
        Config::parse(&text).map_err(|e| Error::Config(format!("config file {}: {e}", path.display())))
    }

    pub fn parse(text: &str) -> Result<Config, String> {
        toml::from_str(text).map_err(|e| crate::error::one_line(e.message()))
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
        let c = Config::parse("[database]\nmax_retries = 3\nretry_interval = 0.2\n").unwrap();
        let retry = c.database.retry_policy().unwrap();
        assert_eq!(retry.max_retries, 3);
        assert_eq!(retry.interval, Duration::from_millis(200));
        assert_eq!(retry.max_interval, RetryPolicy::default().max_interval);
        let e = Config::parse("[database]\nmax_retry_interval = -1.0\n").unwrap().database.retry_policy().unwrap_err();
        assert!(e.to_string().contains("max_retry_interval"), "{e}");
    }

    #[test]
    fn unknown_keys_are_refused() {
        let e = Config::parse("[database]\nuri = \"x\"\n").unwrap_err();
        assert!(e.contains("uri"), "{e}");
    }
}
