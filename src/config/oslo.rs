//! The deployer's own `ironic.conf`: oslo.config's INI syntax, read as
//! oslo.config reads it, and Ironic's key names mapped onto [`Config`].
//!
//! The syntax is oslo.config's `iniparser`, not Python's `configparser`
//! and not a general INI dialect: `[section]`, `key = value` or `key:
//! value`, `#` and `;` comments at the start of a line, a line starting
//! with whitespace continues the value above (joined with a newline), a
//! value wrapped in one pair of matching quotes loses them, nothing else is
//! unescaped or interpolated (no `%`, no `$`). A key given twice keeps the
//! last value, and later files win over earlier ones. Written by hand
//! because general INI crates unescape backslashes or keep quotes, which
//! would change passwords that oslo.config passes through untouched.
//!
//! Only the keys nodemaint uses are read; every other section and key of
//! `ironic.conf` is ignored, as another service's options are.

use super::{Config, DatabaseSection, HealthcheckSection, KeystoneSection, PolicySection};
use crate::error::{Error, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One value and the file it came from (for messages).
#[derive(Debug, Clone, PartialEq)]
struct Value {
    text: String,
    file: PathBuf,
}

type Sections = BTreeMap<String, BTreeMap<String, Value>>;

/// Every section's keys, from all files read so far (later files win).
#[derive(Debug, Default)]
pub struct OsloFiles {
    sections: Sections,
    read: Vec<PathBuf>,
}

/// oslo.config's group names are case-insensitive except `DEFAULT`; option
/// names take `-` and `_` alike.
fn section_name(name: &str) -> String {
    if name == "DEFAULT" { name.to_owned() } else { name.to_ascii_lowercase() }
}

impl OsloFiles {
    /// Reads `files` in order, then each directory's `*.conf` files in
    /// name order (`--config-file`, then `--config-dir`, as oslo.config).
    pub fn read(files: &[PathBuf], dirs: &[PathBuf]) -> Result<OsloFiles> {
        let mut all = OsloFiles::default();
        for file in files {
            all.read_file(file)?;
        }
        for dir in dirs {
            let entries = std::fs::read_dir(dir)
                .map_err(|e| Error::Config(format!("cannot read config directory {}: {e}", dir.display())))?;
            let mut confs: Vec<PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "conf") && p.is_file())
                .collect();
            confs.sort();
            for file in confs {
                all.read_file(&file)?;
            }
        }
        Ok(all)
    }

    fn read_file(&mut self, path: &Path) -> Result<()> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::Config(format!("cannot read config file {}: {e}", path.display())))?;
        self.parse(&text, path).map_err(|(line, why)| {
            Error::Config(format!(
                "config file {} line {line}: {why}; oslo.config's syntax is `[section]` then `key = value`",
                path.display()
            ))
        })?;
        self.read.push(path.to_owned());
        Ok(())
    }

    /// Parses one file's text into the sections (an error is its line and why).
    fn parse(&mut self, text: &str, file: &Path) -> std::result::Result<(), (usize, String)> {
        let mut section: Option<String> = None;
        // The assignment being read: its key and its lines of value so far.
        let mut pending: Option<(String, Vec<String>)> = None;
        let flush = |pending: &mut Option<(String, Vec<String>)>, section: &Option<String>, sections: &mut Sections| {
            if let (Some((key, lines)), Some(section)) = (pending.take(), section) {
                let value = Value { text: lines.join("\n"), file: file.to_owned() };
                sections.entry(section.clone()).or_default().insert(key, value);
            }
        };
        for (index, raw) in text.lines().enumerate() {
            let number = index + 1;
            let line = raw.trim_end();
            if line.is_empty() {
                flush(&mut pending, &section, &mut self.sections);
                continue;
            }
            if line.starts_with([' ', '\t']) {
                match &mut pending {
                    Some((_, lines)) => lines.push(line.trim_start().to_owned()),
                    None => return Err((number, "a continuation line with no key above it".into())),
                }
                continue;
            }
            flush(&mut pending, &section, &mut self.sections);
            if let Some(rest) = line.strip_prefix('[') {
                let name = rest.strip_suffix(']').map(str::trim).filter(|n| !n.is_empty());
                let Some(name) = name else {
                    return Err((number, format!("`{line}` is not a section header")));
                };
                section = Some(section_name(name));
            } else if line.starts_with(['#', ';']) {
                continue;
            } else {
                let (key, value) =
                    split_assignment(line).ok_or_else(|| (number, format!("`{line}` is not `key = value`")))?;
                if section.is_none() {
                    return Err((number, format!("`{key}` comes before any [section]")));
                }
                pending = Some((key, vec![value]));
            }
        }
        flush(&mut pending, &section, &mut self.sections);
        Ok(())
    }

    fn get(&self, section: &str, key: &str) -> Option<&Value> {
        self.sections.get(section).and_then(|keys| keys.get(key))
    }

    fn string(&self, section: &str, key: &str) -> Option<String> {
        self.get(section, key).map(|v| v.text.clone())
    }

    /// A typed value, or a configuration error naming the key and its file.
    fn typed<T>(&self, section: &str, key: &str, what: &str, parse: impl Fn(&str) -> Option<T>) -> Result<Option<T>> {
        let Some(value) = self.get(section, key) else { return Ok(None) };
        parse(value.text.trim()).map(Some).ok_or_else(|| {
            Error::Config(format!(
                "config file {}: [{section}] {key} = `{}` is not {what}",
                value.file.display(),
                value.text
            ))
        })
    }

    fn bool(&self, section: &str, key: &str) -> Result<Option<bool>> {
        // oslo.config's BoolOpt accepts these words, in any case.
        self.typed(section, key, "true or false", |t| match t.to_ascii_lowercase().as_str() {
            "true" | "1" | "on" | "yes" => Some(true),
            "false" | "0" | "off" | "no" => Some(false),
            _ => None,
        })
    }

    /// oslo.config's ListOpt: comma-separated, each item trimmed, empty
    /// items dropped.
    fn list(&self, section: &str, key: &str) -> Option<Vec<String>> {
        self.get(section, key)
            .map(|v| v.text.split(',').map(str::trim).filter(|item| !item.is_empty()).map(str::to_owned).collect())
    }

    fn number<T: std::str::FromStr>(&self, section: &str, key: &str) -> Result<Option<T>> {
        self.typed(section, key, "a number", |t| t.parse().ok())
    }

    /// The files read, for messages ("config file a.conf, b.conf").
    pub fn describe(&self) -> String {
        self.read.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
    }

    /// What nodemaint takes from the files, with Ironic's key names.
    pub fn to_config(&self) -> Result<Config> {
        let keystone = match self.sections.get("keystone_authtoken") {
            // keystonemiddleware is configured when the section names where Keystone is.
            Some(keys) if keys.contains_key("auth_url") => Some(self.keystone()?),
            _ => None,
        };
        Ok(Config {
            database: DatabaseSection {
                url: self.string("database", "connection"),
                db_max_retries: self.number("database", "db_max_retries")?,
                db_retry_interval: self.number("database", "db_retry_interval")?,
                db_max_retry_interval: self.number("database", "db_max_retry_interval")?,
                pool_timeout: self.number("database", "pool_timeout")?,
                max_pool_size: self.number("database", "max_pool_size")?,
                ..DatabaseSection::default()
            },
            upgrade: super::UpgradeSection { pin_release_version: self.string("DEFAULT", "pin_release_version") },
            policy: PolicySection {
                file: self.policy_file()?,
                // Either switch off means the legacy model: deprecated
                // defaults in Ironic let any admin act as the cloud's admin.
                enforce_scope: match (
                    self.bool("oslo_policy", "enforce_scope")?,
                    self.bool("oslo_policy", "enforce_new_defaults")?,
                ) {
                    (Some(false), _) | (_, Some(false)) => Some(false),
                    (scope, _) => scope,
                },
            },
            keystone_authtoken: keystone,
            healthcheck: HealthcheckSection { enabled: self.bool("healthcheck", "enabled")? },
            default: super::DefaultSection {
                host: self.string("DEFAULT", "host"),
                auth_strategy: self.string("DEFAULT", "auth_strategy"),
                notification_level: self.string("DEFAULT", "notification_level"),
                versioned_notifications_topics: self.list("DEFAULT", "versioned_notifications_topics"),
                control_exchange: self.string("DEFAULT", "control_exchange"),
                transport_url: self.string("DEFAULT", "transport_url"),
            },
            oslo_messaging_notifications: super::NotificationsSection {
                driver: self.string("oslo_messaging_notifications", "driver"),
                transport_url: self.string("oslo_messaging_notifications", "transport_url"),
            },
            oslo_messaging_rabbit: super::RabbitSection {
                ssl: self.bool("oslo_messaging_rabbit", "ssl")?,
                ssl_ca_file: self.string("oslo_messaging_rabbit", "ssl_ca_file"),
                ssl_cert_file: self.string("oslo_messaging_rabbit", "ssl_cert_file"),
                ssl_key_file: self.string("oslo_messaging_rabbit", "ssl_key_file"),
            },
            nodemaint: super::NodemaintSection {
                notification_retention: self.number("nodemaint", "notification_retention")?,
            },
            source: Some(super::Source::Oslo(self.describe())),
        })
    }

    /// `[oslo_policy] policy_file`: a relative path is looked for beside the
    /// config file that named it, as oslo.config finds files.
    fn policy_file(&self) -> Result<Option<String>> {
        let Some(value) = self.get("oslo_policy", "policy_file") else { return Ok(None) };
        let path = Path::new(value.text.trim());
        if path.is_absolute() {
            return Ok(Some(value.text.trim().to_owned()));
        }
        let beside = value.file.parent().unwrap_or(Path::new(".")).join(path);
        Ok(Some(beside.display().to_string()))
    }

    fn keystone(&self) -> Result<KeystoneSection> {
        const S: &str = "keystone_authtoken";
        let defaults = KeystoneSection::with_auth_url(String::new());
        Ok(KeystoneSection {
            auth_url: self.string(S, "auth_url").unwrap_or_default(),
            auth_type: self.string(S, "auth_type").unwrap_or(defaults.auth_type),
            username: self.string(S, "username"),
            password: self.string(S, "password"),
            project_name: self.string(S, "project_name"),
            user_domain_name: self.string(S, "user_domain_name").unwrap_or(defaults.user_domain_name),
            project_domain_name: self.string(S, "project_domain_name").unwrap_or(defaults.project_domain_name),
            application_credential_id: self.string(S, "application_credential_id"),
            application_credential_secret: self.string(S, "application_credential_secret"),
            www_authenticate_uri: self.string(S, "www_authenticate_uri"),
            cafile: self.string(S, "cafile"),
            insecure: self.bool(S, "insecure")?.unwrap_or(false),
            token_cache_time: self.number(S, "token_cache_time")?.unwrap_or(defaults.token_cache_time),
            http_connect_timeout: self.number(S, "http_connect_timeout")?.unwrap_or(defaults.http_connect_timeout),
            ..defaults
        })
    }
}

/// `key = value` or `key: value` (whichever separator comes first), trimmed,
/// one pair of matching quotes removed, `-` in the key read as `_`.
fn split_assignment(line: &str) -> Option<(String, String)> {
    let at = match (line.find('='), line.find(':')) {
        (Some(e), Some(c)) => e.min(c),
        (Some(i), None) | (None, Some(i)) => i,
        (None, None) => return None,
    };
    let key = line[..at].trim();
    if key.is_empty() {
        return None;
    }
    let mut value = line[at + 1..].trim();
    for quote in ['"', '\''] {
        if value.len() >= 2 && value.starts_with(quote) && value.ends_with(quote) {
            value = &value[1..value.len() - 1];
            break;
        }
    }
    Some((key.replace('-', "_"), value.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> std::result::Result<OsloFiles, (usize, String)> {
        let mut files = OsloFiles::default();
        files.parse(text, Path::new("/etc/ironic/ironic.conf"))?;
        Ok(files)
    }

    #[test]
    fn values_are_read_as_oslo_config_reads_them() {
        let files = parse(
            "# a comment\n[DEFAULT]\nhost = conductor-1\n; another\n[database]\nconnection=mysql+pymysql://ironic:p%40ss\\w0rd@db/ironic?charset=utf8\n\
             [Keystone_Authtoken]\nauth-url: http://k:5000/v3\npassword = \"quoted secret\"\nmemcached_servers = a:11211,\n    b:11211\n\n[api]\nhost_ip = ::\n",
        )
        .unwrap();
        assert_eq!(files.string("DEFAULT", "host").as_deref(), Some("conductor-1"));
        // No unescaping and no interpolation: the text as written.
        assert_eq!(
            files.string("database", "connection").as_deref(),
            Some("mysql+pymysql://ironic:p%40ss\\w0rd@db/ironic?charset=utf8")
        );
        assert_eq!(files.string("keystone_authtoken", "auth_url").as_deref(), Some("http://k:5000/v3"));
        assert_eq!(files.string("keystone_authtoken", "password").as_deref(), Some("quoted secret"));
        assert_eq!(files.string("keystone_authtoken", "memcached_servers").as_deref(), Some("a:11211,\nb:11211"));
        assert_eq!(files.string("api", "host_ip").as_deref(), Some("::"));
    }

    #[test]
    fn the_last_value_wins_within_a_file_and_across_files() {
        let mut files = parse("[database]\nconnection = sqlite:////a.db\nconnection = sqlite:////b.db\n").unwrap();
        assert_eq!(files.string("database", "connection").as_deref(), Some("sqlite:////b.db"));
        files
            .parse("[database]\nconnection = sqlite:////c.db\n", Path::new("/etc/ironic/ironic.conf.d/z.conf"))
            .unwrap();
        assert_eq!(files.string("database", "connection").as_deref(), Some("sqlite:////c.db"));
    }

    #[test]
    fn malformed_lines_are_errors_with_their_line() {
        for (text, line, needle) in [
            ("key = value\n", 1, "before any [section]"),
            ("[database\nconnection = x\n", 1, "not a section header"),
            ("[database]\njust words\n", 2, "not `key = value`"),
            ("[database]\n\n  continued\n", 3, "continuation"),
            ("[database]\n= value\n", 2, "not `key = value`"),
        ] {
            let (at, why) = parse(text).unwrap_err();
            assert_eq!(at, line, "{text:?}");
            assert!(why.contains(needle), "{text:?}: {why}");
        }
    }

    #[test]
    fn ironics_keys_map_onto_the_configuration() {
        let files = parse(
            "[DEFAULT]\nhost = c1\npin_release_version = 2025.2\n[database]\nconnection = postgresql+psycopg2://ironic@db/ironic\n\
             max_retries = -1\ndb_max_retries = 3\npool_timeout = 5\nmax_pool_size = 10\n\
             [oslo_policy]\nenforce_scope = False\npolicy_file = policy.yaml\n[healthcheck]\nenabled = True\n\
             [keystone_authtoken]\nauth_url = http://k:5000\nusername = ironic\ninsecure = true\ntoken_cache_time = 60\n",
        )
        .unwrap();
        let config = files.to_config().unwrap();
        assert_eq!(config.database.url.as_deref(), Some("postgresql+psycopg2://ironic@db/ironic"));
        // oslo.db's max_retries (connection attempts at start) is not the transaction retries.
        assert_eq!(config.database.retry_policy().unwrap().max_retries, 3);
        assert_eq!(config.database.pool_timeout().unwrap(), std::time::Duration::from_secs(5));
        assert_eq!(config.database.max_pool_size, Some(10));
        assert_eq!(config.upgrade.pin_release_version.as_deref(), Some("2025.2"));
        assert_eq!(config.policy.enforce_scope, Some(false));
        assert_eq!(config.policy.file.as_deref(), Some("/etc/ironic/policy.yaml"));
        assert_eq!(config.healthcheck.enabled, Some(true));
        assert_eq!(config.default.host.as_deref(), Some("c1"));
        let keystone = config.keystone_authtoken.unwrap();
        assert_eq!(
            (keystone.username.as_deref(), keystone.insecure, keystone.token_cache_time),
            (Some("ironic"), true, 60)
        );
        assert_eq!(keystone.user_domain_name, "Default");
    }

    #[test]
    fn notification_keys_are_read_with_ironics_and_oslo_messagings_names() {
        let files = parse(
            "[DEFAULT]\nnotification_level = info\nversioned_notifications_topics = a, b,\ncontrol_exchange = baremetal\n\
             transport_url = rabbit://rpc@mq:5672/\n[oslo_messaging_notifications]\ndriver = messagingv2\n\
             transport_url = rabbit://n:p@mq2:5671/ironic\n[oslo_messaging_rabbit]\nssl = True\nssl_ca_file = /etc/ca.pem\n\
             [nodemaint]\nnotification_retention = 3600\n",
        )
        .unwrap();
        let config = files.to_config().unwrap();
        assert_eq!(config.default.notification_level.as_deref(), Some("info"));
        assert_eq!(config.default.versioned_notifications_topics, Some(vec!["a".to_owned(), "b".to_owned()]));
        assert_eq!(config.default.control_exchange.as_deref(), Some("baremetal"));
        assert_eq!(config.default.transport_url.as_deref(), Some("rabbit://rpc@mq:5672/"));
        assert_eq!(config.oslo_messaging_notifications.driver.as_deref(), Some("messagingv2"));
        assert_eq!(config.oslo_messaging_notifications.transport_url.as_deref(), Some("rabbit://n:p@mq2:5671/ironic"));
        assert_eq!(config.oslo_messaging_rabbit.ssl, Some(true));
        assert_eq!(config.oslo_messaging_rabbit.ssl_ca_file.as_deref(), Some("/etc/ca.pem"));
        assert_eq!(config.nodemaint.notification_retention, Some(3600.0));
    }

    #[test]
    fn a_value_of_the_wrong_type_names_its_key_and_file() {
        let e = parse("[healthcheck]\nenabled = maybe\n").unwrap().to_config().unwrap_err();
        assert_eq!(e.exit_code(), 3);
        assert!(e.message().contains("[healthcheck] enabled = `maybe`") && e.message().contains("ironic.conf"), "{e}");
    }
}
