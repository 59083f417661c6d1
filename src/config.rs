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
