//! The configuration file (`--config FILE`, TOML) and how it combines with
//! flags and the environment: a flag or `NODEMAINT_DATABASE_URL` wins over
//! the file, the file over the built-in default.
//!
//! ```toml
//! [database]
//! url = "postgres://ironic@db.example.com/ironic"
//!
//! [upgrade]
//! pin_release_version = "2025.2"   # set during a rolling upgrade
//! ```

use crate::error::{Error, Result};
use serde::Deserialize;
use std::path::Path;

#[derive(Debug, Default, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    pub database: DatabaseSection,
    #[serde(default)]
    pub upgrade: UpgradeSection,
    #[serde(default)]
    pub policy: PolicySection,
}

#[derive(Debug, Default, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct DatabaseSection {
    pub url: Option<String>,
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
    fn unknown_keys_are_refused() {
        let e = Config::parse("[database]\nuri = \"x\"\n").unwrap_err();
        assert!(e.contains("uri"), "{e}");
    }
}
