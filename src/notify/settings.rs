//! What the configuration says about notifications, resolved once: whether
//! they are sent at all, from which level, as whom, to which exchange and
//! topics, over which broker. Ironic's and oslo.messaging's keys and
//! defaults (`config::DefaultSection`, `NotificationsSection`,
//! `RabbitSection`); nothing here connects to anything.

use crate::config::Config;
use crate::error::{Error, Result};
use std::time::Duration;

/// A notification's priority, and the configured threshold: oslo's
/// levels, in increasing order (Ironic's `NotificationLevel`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Debug,
    Info,
    Warning,
    Error,
    Critical,
}

impl Level {
    pub const ALL: [Level; 5] = [Level::Debug, Level::Info, Level::Warning, Level::Error, Level::Critical];

    /// The name in `notification_level` and in a routing key (lower case).
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Debug => "debug",
            Level::Info => "info",
            Level::Warning => "warning",
            Level::Error => "error",
            Level::Critical => "critical",
        }
    }

    /// The message's `priority` field, as oslo.messaging writes it.
    pub fn priority(self) -> &'static str {
        match self {
            Level::Debug => "DEBUG",
            Level::Info => "INFO",
            Level::Warning => "WARN",
            Level::Error => "ERROR",
            Level::Critical => "CRITICAL",
        }
    }

    fn parse(text: &str) -> Option<Level> {
        Level::ALL.into_iter().find(|l| l.as_str().eq_ignore_ascii_case(text.trim()))
    }
}

/// oslo.messaging's notification drivers nodemaint has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Driver {
    /// `messagingv2`: the message bus, in oslo's 2.0 envelope.
    Messaging,
    /// `log`: each notification as a log line (`nodemaint::notification`).
    Log,
}

/// One broker of the transport URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broker {
    pub host: String,
    pub port: u16,
    pub user: String,
    pub password: String,
}

/// Where notifications go: the brokers (tried in order) and the vhost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transport {
    pub brokers: Vec<Broker>,
    pub vhost: String,
    pub tls: Option<Tls>,
}

/// `[oslo_messaging_rabbit] ssl*`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tls {
    pub ca_file: Option<String>,
    pub cert_file: Option<String>,
    pub key_file: Option<String>,
}

/// Notifications as configured, when they are on.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// Notifications below this are not sent.
    pub level: Level,
    pub driver: Driver,
    /// `ironic-api.<[DEFAULT] host>`: nodemaint speaks for Ironic's API.
    pub publisher_id: String,
    pub topics: Vec<String>,
    pub exchange: String,
    pub transport: Transport,
    /// How long a sent notification stays in the outbox.
    pub retention: Duration,
}

/// oslo.messaging's default transport, `rabbit://`: guest on localhost.
const DEFAULT_TRANSPORT: &str = "rabbit://";
const DEFAULT_TOPIC: &str = "ironic_versioned_notifications";
const DEFAULT_EXCHANGE: &str = "ironic";
const DEFAULT_RETENTION: Duration = Duration::from_secs(24 * 3600);

impl Settings {
    /// The settings `config` gives, or `None` when nothing is to be sent:
    /// no `notification_level` (Ironic's default), or no driver or `noop`
    /// (oslo.messaging's notifier then sends nothing either).
    pub fn from_config(config: &Config) -> Result<Option<Settings>> {
        let Some(level) = &config.default.notification_level else { return Ok(None) };
        let level = Level::parse(level).ok_or_else(|| {
            let known = Level::ALL.map(Level::as_str).join(", ");
            Error::Config(format!("[DEFAULT] notification_level = `{level}` is not one of {known}"))
        })?;
        let driver = match config.oslo_messaging_notifications.driver.as_deref().map(str::trim) {
            None | Some("" | "noop") => return Ok(None),
            Some("messagingv2") => Driver::Messaging,
            Some("log") => Driver::Log,
            Some(other) => {
                return Err(Error::Config(format!(
                    "[oslo_messaging_notifications] driver = `{other}` is not one nodemaint has; use messagingv2, log or noop"
                )));
            }
        };
        let url = (config.oslo_messaging_notifications.transport_url.as_deref())
            .or(config.default.transport_url.as_deref())
            .unwrap_or(DEFAULT_TRANSPORT);
        let mut transport = parse_transport_url(url)?;
        let rabbit = &config.oslo_messaging_rabbit;
        if rabbit.ssl == Some(true) || transport.tls.is_some() {
            transport.tls = Some(Tls {
                ca_file: rabbit.ssl_ca_file.clone(),
                cert_file: rabbit.ssl_cert_file.clone(),
                key_file: rabbit.ssl_key_file.clone(),
            });
        }
        let topics = match &config.default.versioned_notifications_topics {
            Some(topics) if !topics.is_empty() => topics.clone(),
            Some(_) => {
                return Err(Error::Config(
                    "[DEFAULT] versioned_notifications_topics is empty; name a topic or unset notification_level"
                        .into(),
                ));
            }
            None => vec![DEFAULT_TOPIC.to_owned()],
        };
        let retention = match config.nodemaint.notification_retention {
            None => DEFAULT_RETENTION,
            Some(s) if s.is_finite() && s >= 0.0 => Duration::from_secs_f64(s),
            Some(s) => {
                return Err(Error::Config(format!(
                    "[nodemaint] notification_retention = {s} is not a number of seconds"
                )));
            }
        };
        Ok(Some(Settings {
            level,
            driver,
            publisher_id: format!("ironic-api.{}", host_name(config)),
            topics,
            exchange: config.default.control_exchange.clone().unwrap_or_else(|| DEFAULT_EXCHANGE.to_owned()),
            transport,
            retention,
        }))
    }

    /// Whether a notification at `level` is sent.
    pub fn sends(&self, level: Level) -> bool {
        level >= self.level
    }
}

/// `[DEFAULT] host`, else the machine's name (Ironic's default).
fn host_name(config: &Config) -> String {
    if let Some(host) = &config.default.host {
        return host.clone();
    }
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".to_owned())
}

/// oslo.messaging's transport URL for the rabbit driver:
/// `rabbit://[user[:pass]@]host[:port][,[user[:pass]@]host[:port]…]/[vhost][?ssl=1]`.
/// User, password and vhost are percent-decoded; a broker without a user
/// is guest/guest, without a port 5672; an empty vhost is `/`.
pub fn parse_transport_url(url: &str) -> Result<Transport> {
    let bad = |why: &str| Error::Config(format!("transport_url `{}`: {why}", redact(url)));
    let (scheme, rest) = url.split_once("://").ok_or_else(|| bad("not a URL (rabbit://user:pass@host:5672/)"))?;
    if !matches!(scheme, "rabbit" | "kombu") {
        return Err(bad("nodemaint sends notifications to RabbitMQ only; use a rabbit:// URL"));
    }
    let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
    let (hosts, vhost) = rest.split_once('/').unwrap_or((rest, ""));
    let vhost = decode(vhost).ok_or_else(|| bad("the virtual host is not valid percent-encoding"))?;
    let mut brokers = Vec::new();
    for part in hosts.split(',') {
        let (credentials, address) = match part.rsplit_once('@') {
            Some((c, a)) => (Some(c), a),
            None => (None, part),
        };
        let (user, password) = match credentials {
            None => ("guest".to_owned(), "guest".to_owned()),
            Some(c) => {
                let (u, p) = c.split_once(':').unwrap_or((c, ""));
                let decoded = (decode(u), decode(p));
                let (Some(u), Some(p)) = decoded else {
                    return Err(bad("a user or password is not valid percent-encoding"));
                };
                (u, p)
            }
        };
        let (host, port) = split_host_port(address).ok_or_else(|| bad("a broker's port is not a number"))?;
        let host = if host.is_empty() { "localhost".to_owned() } else { host };
        brokers.push(Broker { host, port: port.unwrap_or(5672), user, password });
    }
    let mut tls = None;
    for (key, value) in query.split('&').filter(|p| !p.is_empty()).map(|p| p.split_once('=').unwrap_or((p, ""))) {
        if key == "ssl" && matches!(value.to_ascii_lowercase().as_str(), "1" | "true" | "yes" | "on") {
            tls = Some(Tls::default());
        }
    }
    Ok(Transport { brokers, vhost: if vhost.is_empty() { "/".to_owned() } else { vhost }, tls })
}

/// `host`, `host:port`, `[v6]` or `[v6]:port`.
fn split_host_port(address: &str) -> Option<(String, Option<u16>)> {
    if let Some(rest) = address.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        let port = match after.strip_prefix(':') {
            Some(p) => Some(p.parse().ok()?),
            None if after.is_empty() => None,
            None => return None,
        };
        return Some((host.to_owned(), port));
    }
    match address.rsplit_once(':') {
        Some((host, "")) => Some((host.to_owned(), None)),
        Some((host, port)) => Some((host.to_owned(), Some(port.parse().ok()?))),
        None => Some((address.to_owned(), None)),
    }
}

/// Percent-decoded, as oslo.messaging unquotes a URL's user, password and
/// vhost (`+` stays a plus); `None` when the result is not UTF-8.
fn decode(text: &str) -> Option<String> {
    percent_encoding::percent_decode_str(text).decode_utf8().ok().map(|t| t.into_owned())
}

/// The URL with its passwords replaced, for messages.
fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_owned() };
    let (hosts, tail) = match rest.find(['/', '?']) {
        Some(at) => rest.split_at(at),
        None => (rest, ""),
    };
    let hosts: Vec<String> = hosts
        .split(',')
        .map(|part| match part.rsplit_once('@') {
            Some((credentials, address)) => {
                let user = credentials.split_once(':').map_or(credentials, |(u, _)| u);
                format!("{user}:***@{address}")
            }
            None => part.to_owned(),
        })
        .collect();
    format!("{scheme}://{}{tail}", hosts.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(lines: &str) -> Config {
        Config::parse(lines).unwrap()
    }

    #[test]
    fn off_unless_a_level_and_a_driver_are_set_as_in_ironic() {
        assert_eq!(Settings::from_config(&Config::default()).unwrap(), None);
        let no_driver = config("[DEFAULT]\nnotification_level = \"info\"\n");
        assert_eq!(Settings::from_config(&no_driver).unwrap(), None);
        let noop =
            config("[DEFAULT]\nnotification_level = \"info\"\n[oslo_messaging_notifications]\ndriver = \"noop\"\n");
        assert_eq!(Settings::from_config(&noop).unwrap(), None);
        let no_level = config("[oslo_messaging_notifications]\ndriver = \"messagingv2\"\n");
        assert_eq!(Settings::from_config(&no_level).unwrap(), None);
    }

    #[test]
    fn defaults_are_ironics_and_oslo_messagings() {
        let on = config(
            "[DEFAULT]\nhost = \"api-1\"\nnotification_level = \"INFO\"\n[oslo_messaging_notifications]\ndriver = \"messagingv2\"\n",
        );
        let s = Settings::from_config(&on).unwrap().unwrap();
        assert_eq!((s.level, s.driver), (Level::Info, Driver::Messaging));
        assert_eq!(s.publisher_id, "ironic-api.api-1");
        assert_eq!(s.topics, vec!["ironic_versioned_notifications"]);
        assert_eq!(s.exchange, "ironic");
        assert_eq!(s.retention, Duration::from_secs(86_400));
        let guest = Broker { host: "localhost".into(), port: 5672, user: "guest".into(), password: "guest".into() };
        assert_eq!(s.transport, Transport { brokers: vec![guest], vhost: "/".into(), tls: None });
        assert!(s.sends(Level::Info) && s.sends(Level::Error) && !s.sends(Level::Debug));
    }

    #[test]
    fn the_notifications_transport_wins_over_the_default_one() {
        let c = config(
            "[DEFAULT]\nnotification_level = \"error\"\ntransport_url = \"rabbit://rpc:x@rpc-mq:5672/\"\n\
             [oslo_messaging_notifications]\ndriver = \"log\"\ntransport_url = \"rabbit://n:p%40ss@mq2:5671/ironic\"\n\
             [oslo_messaging_rabbit]\nssl = true\nssl_ca_file = \"/etc/ca.pem\"\n",
        );
        let s = Settings::from_config(&c).unwrap().unwrap();
        assert_eq!(s.driver, Driver::Log);
        assert_eq!(
            s.transport.brokers[0],
            Broker { host: "mq2".into(), port: 5671, user: "n".into(), password: "p@ss".into() }
        );
        assert_eq!(s.transport.vhost, "ironic");
        assert_eq!(s.transport.tls.unwrap().ca_file.as_deref(), Some("/etc/ca.pem"));
    }

    #[test]
    fn transport_urls_are_read_as_oslo_messaging_reads_them() {
        let t = parse_transport_url("rabbit://a:1@h1:5673,b:2@[::1]:5674,h3/%2Fv?ssl=1").unwrap();
        let hosts: Vec<_> = t.brokers.iter().map(|b| (b.host.as_str(), b.port, b.user.as_str())).collect();
        assert_eq!(hosts, [("h1", 5673, "a"), ("::1", 5674, "b"), ("h3", 5672, "guest")]);
        assert_eq!(t.vhost, "/v");
        assert!(t.tls.is_some());
        for (url, needle) in [
            ("amqp://h/", "RabbitMQ only"),
            ("h:5672", "not a URL"),
            ("rabbit://u:secret@h:port/", "port is not a number"),
        ] {
            let e = parse_transport_url(url).unwrap_err().to_string();
            assert!(e.contains(needle) && !e.contains("secret"), "{url}: {e}");
        }
    }

    #[test]
    fn unknown_levels_and_drivers_are_refused_by_name() {
        let level = config("[DEFAULT]\nnotification_level = \"loud\"\n");
        assert!(Settings::from_config(&level).unwrap_err().to_string().contains("notification_level = `loud`"));
        let driver =
            config("[DEFAULT]\nnotification_level = \"info\"\n[oslo_messaging_notifications]\ndriver = \"kafka\"\n");
        assert!(Settings::from_config(&driver).unwrap_err().to_string().contains("driver = `kafka`"));
    }
}
