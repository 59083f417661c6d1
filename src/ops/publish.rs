//! The notification publisher: sends the outbox's unsent notifications in
//! id order (commit order per node), marks them sent once the broker has
//! confirmed them, and prunes sent ones after the retention. At least
//! once: a notification sent but not yet marked when the publisher dies is
//! sent again, with the same `message_id`, for a listener to drop.
//!
//! On the wire as oslo.messaging's `messagingv2` driver over rabbit puts
//! it: a topic exchange `<control_exchange>` (not durable, not
//! auto-deleted), routing key `<topic>.<priority in lower case>`, the queue
//! of that name declared and bound by the publisher (so nothing is dropped
//! before a listener first comes), persistent JSON messages in the 2.0
//! envelope, publisher confirms. An exchange or queue that already exists
//! is used as it is (a passive declare first): a deployment that made it
//! durable keeps it so.
//!
//! One publisher at a time per database: each run holds the notification
//! lock, so several `serve` processes never send one notification twice.

use crate::error::{Error, Result};
use crate::notify::message::envelope;
use crate::notify::settings::{Broker, Driver, Settings};
use crate::store::locks::{self, Lock, LockWait};
use crate::store::outbox::{self, Unsent};
use lapin::options::{
    BasicPublishOptions, ConfirmSelectOptions, ExchangeDeclareOptions, QueueBindOptions, QueueDeclareOptions,
};
use lapin::types::FieldTable;
use lapin::{BasicProperties, Channel, Connection, ConnectionProperties, ExchangeKind};
use nodemaint_runtime::sql::now_utc;
use sea_orm::DatabaseConnection;
use std::collections::HashSet;
use std::time::Duration;

/// Notifications read, sent and marked per round.
pub const DEFAULT_BATCH: u64 = 1000;
/// Sent notifications deleted per statement when pruning.
const PRUNE_BATCH: u64 = 10_000;
/// How long connecting to a broker may take before the next is tried.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long the broker may take to confirm one batch.
const CONFIRM_TIMEOUT: Duration = Duration::from_secs(30);

/// How one run sends.
pub struct PublishOptions {
    pub lock: LockWait,
    /// Notifications per round (read, sent, confirmed, marked).
    pub batch_size: u64,
    /// Stop after about this many (a whole round at a time); `None`: all.
    pub max_count: Option<u64>,
}

impl Default for PublishOptions {
    fn default() -> Self {
        PublishOptions { lock: LockWait::default(), batch_size: DEFAULT_BATCH, max_count: None }
    }
}

/// What one run did.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct PublishReport {
    /// Notifications sent and marked.
    pub sent: u64,
    /// Sent notifications older than the retention, deleted.
    pub pruned: u64,
    /// Still unsent when the run ended.
    pub unsent: u64,
}

/// Whether any notification waits to be sent (one indexed read).
pub async fn has_unsent(db: &DatabaseConnection) -> Result<bool> {
    Ok(outbox::any_unsent(db).await?)
}

/// Sends for one database; keeps its broker connection between runs.
pub struct Publisher {
    settings: Settings,
    bus: Option<Bus>,
}

/// An open connection with its confirming channel, and the queues it has
/// declared (once per connection, as oslo.messaging does).
struct Bus {
    connection: Connection,
    channel: Channel,
    declared: HashSet<String>,
}

impl Publisher {
    pub fn new(settings: Settings) -> Publisher {
        Publisher { settings, bus: None }
    }

    /// Sends what is unsent (under the notification lock), then prunes.
    pub async fn publish(
        &mut self,
        db: &DatabaseConnection,
        url: &str,
        options: PublishOptions,
    ) -> Result<PublishReport> {
        let guard = locks::hold(db, url, Lock::Notify, options.lock).await?;
        let result = self.publish_locked(db, options.batch_size.max(1), options.max_count).await;
        let released = guard.release().await;
        let report = result?;
        released?;
        Ok(report)
    }

    async fn publish_locked(&mut self, db: &DatabaseConnection, batch: u64, max: Option<u64>) -> Result<PublishReport> {
        let mut report = PublishReport::default();
        let mut after = 0;
        loop {
            if max.is_some_and(|max| report.sent >= max) {
                break;
            }
            let rows = outbox::unsent(db, after, batch).await?;
            let Some(last) = rows.last() else { break };
            after = last.id;
            if let Err(e) = self.send(&rows).await {
                // Reconnect next time: the connection may be half dead.
                self.close().await;
                return Err(e);
            }
            let ids: Vec<i32> = rows.iter().map(|r| r.id).collect();
            outbox::mark_sent(db, &ids, chrono::Utc::now().naive_utc()).await?;
            report.sent += ids.len() as u64;
        }
        let before = now_utc() - chrono::Duration::from_std(self.settings.retention).unwrap_or(chrono::Duration::MAX);
        loop {
            let pruned = outbox::prune(db, before, PRUNE_BATCH).await?;
            report.pruned += pruned;
            if pruned < PRUNE_BATCH {
                break;
            }
        }
        report.unsent = outbox::backlog(db).await?.1;
        Ok(report)
    }

    /// Sends `rows` to every topic and waits for the broker's confirms.
    async fn send(&mut self, rows: &[Unsent]) -> Result<()> {
        if self.settings.driver == Driver::Log {
            // As oslo.messaging's log driver: the message (no envelope),
            // each at its priority.
            for row in rows {
                if row.priority.eq_ignore_ascii_case("error") {
                    tracing::error!(target: "nodemaint::notification", "{}", row.message);
                } else {
                    tracing::info!(target: "nodemaint::notification", "{}", row.message);
                }
            }
            return Ok(());
        }
        let (exchange, topics) = (self.settings.exchange.clone(), self.settings.topics.clone());
        let bus = self.bus().await?;
        let mut confirms = Vec::with_capacity(rows.len() * topics.len());
        for row in rows {
            let body = envelope(&row.message);
            for topic in &topics {
                let key = format!("{topic}.{}", row.priority.to_lowercase());
                bus.declare_queue(&exchange, &key).await?;
                let properties = BasicProperties::default()
                    .with_content_type("application/json".into())
                    .with_content_encoding("utf-8".into())
                    .with_delivery_mode(2)
                    .with_priority(0);
                let confirm = bus
                    .channel
                    .basic_publish(
                        exchange.as_str().into(),
                        key.into(),
                        BasicPublishOptions::default(),
                        body.as_bytes(),
                        properties,
                    )
                    .await
                    .map_err(|e| bus_error("sending a notification", &e))?;
                confirms.push(confirm);
            }
        }
        let confirmed = async {
            for confirm in confirms {
                let confirmation = confirm.await.map_err(|e| bus_error("waiting for the broker's confirm", &e))?;
                if confirmation.is_nack() {
                    return Err(Error::Bus(
                        "the broker refused a notification (nack); it stays unsent and is tried again".into(),
                    ));
                }
            }
            Ok(())
        };
        tokio::time::timeout(CONFIRM_TIMEOUT, confirmed).await.map_err(|_| {
            Error::Bus(format!("the broker did not confirm the notifications within {}s", CONFIRM_TIMEOUT.as_secs()))
        })?
    }

    /// The open connection, or a new one to the first broker that answers.
    async fn bus(&mut self) -> Result<&mut Bus> {
        let alive =
            self.bus.as_ref().is_some_and(|b| b.connection.status().connected() && b.channel.status().connected());
        if !alive {
            self.close().await;
            self.bus = Some(self.connect().await?);
        }
        Ok(self.bus.as_mut().expect("connected above"))
    }

    async fn connect(&self) -> Result<Bus> {
        let transport = &self.settings.transport;
        let mut last = None;
        for broker in &transport.brokers {
            match tokio::time::timeout(CONNECT_TIMEOUT, self.connect_to(broker)).await {
                Ok(Ok(bus)) => return Ok(bus),
                Ok(Err(e)) => last = Some(e),
                Err(_) => {
                    last = Some(Error::Bus(format!(
                        "RabbitMQ at {}:{} did not answer within {}s",
                        broker.host,
                        broker.port,
                        CONNECT_TIMEOUT.as_secs()
                    )))
                }
            }
        }
        Err(last.unwrap_or_else(|| Error::Bus("no broker in the transport URL".into())))
    }

    async fn connect_to(&self, broker: &Broker) -> Result<Bus> {
        let transport = &self.settings.transport;
        let uri = lapin::uri::AMQPUri {
            scheme: if transport.tls.is_some() { lapin::uri::AMQPScheme::AMQPS } else { lapin::uri::AMQPScheme::AMQP },
            authority: lapin::uri::AMQPAuthority {
                userinfo: lapin::uri::AMQPUserInfo { username: broker.user.clone(), password: broker.password.clone() },
                host: broker.host.clone(),
                port: broker.port,
            },
            vhost: transport.vhost.clone(),
            query: Default::default(),
        };
        let at = format!("RabbitMQ at {}:{}", broker.host, broker.port);
        let unreachable = |e: lapin::Error| bus_error(&format!("connecting to {at}"), &e);
        let properties = ConnectionProperties::default().with_connection_name("nodemaint".into());
        let connection = match &transport.tls {
            None => Connection::connect_uri(uri, properties).await.map_err(unreachable)?,
            Some(tls) => {
                let read = |what: &str, path: &str| {
                    std::fs::read(path).map_err(|e| {
                        Error::Config(format!("[oslo_messaging_rabbit] {what} = {path} cannot be read: {e}"))
                    })
                };
                let cert_chain = match &tls.ca_file {
                    Some(path) => Some(String::from_utf8_lossy(&read("ssl_ca_file", path)?).into_owned()),
                    None => None,
                };
                let identity = match (&tls.cert_file, &tls.key_file) {
                    (Some(cert), Some(key)) => Some(lapin::tcp::OwnedIdentity::PKCS8 {
                        pem: read("ssl_cert_file", cert)?,
                        key: read("ssl_key_file", key)?,
                    }),
                    _ => None,
                };
                let config = lapin::tcp::OwnedTLSConfig { identity, cert_chain };
                let runtime = lapin::runtime::default_runtime().map_err(unreachable)?;
                Connection::connect_uri_with_config(uri, properties, config, runtime).await.map_err(unreachable)?
            }
        };
        let channel = connection.create_channel().await.map_err(unreachable)?;
        channel.confirm_select(ConfirmSelectOptions::default()).await.map_err(unreachable)?;
        let mut bus = Bus { connection, channel, declared: HashSet::new() };
        bus.declare_exchange(&self.settings.exchange).await?;
        Ok(bus)
    }

    /// Closes the connection, if any (best effort: it may be dead already).
    pub async fn close(&mut self) {
        if let Some(bus) = self.bus.take() {
            let _ = bus.connection.close(200, "nodemaint publisher done".into()).await;
        }
    }
}

impl Bus {
    /// The exchange as it is, or a new one as oslo.messaging declares it.
    async fn declare_exchange(&mut self, exchange: &str) -> Result<()> {
        let passive = ExchangeDeclareOptions { passive: true, ..Default::default() };
        let kind = || ExchangeKind::Topic;
        if self.channel.exchange_declare(exchange.into(), kind(), passive, FieldTable::default()).await.is_ok() {
            return Ok(());
        }
        // A failed passive declare closes the channel: open another.
        self.reopen().await?;
        self.channel
            .exchange_declare(exchange.into(), kind(), ExchangeDeclareOptions::default(), FieldTable::default())
            .await
            .map_err(|e| bus_error(&format!("declaring the exchange {exchange}"), &e))
    }

    /// The queue `key` bound to `exchange` by `key`, once per connection.
    async fn declare_queue(&mut self, exchange: &str, key: &str) -> Result<()> {
        if self.declared.contains(key) {
            return Ok(());
        }
        let passive = QueueDeclareOptions { passive: true, ..Default::default() };
        if self.channel.queue_declare(key.into(), passive, FieldTable::default()).await.is_err() {
            self.reopen().await?;
            (self.channel.queue_declare(key.into(), QueueDeclareOptions::default(), FieldTable::default()).await)
                .map_err(|e| bus_error(&format!("declaring the queue {key}"), &e))?;
        }
        (self.channel.queue_bind(
            key.into(),
            exchange.into(),
            key.into(),
            QueueBindOptions::default(),
            FieldTable::default(),
        ))
        .await
        .map_err(|e| bus_error(&format!("binding the queue {key} to {exchange}"), &e))?;
        self.declared.insert(key.to_owned());
        Ok(())
    }

    async fn reopen(&mut self) -> Result<()> {
        let channel = self.connection.create_channel().await.map_err(|e| bus_error("opening a channel", &e))?;
        channel
            .confirm_select(ConfirmSelectOptions::default())
            .await
            .map_err(|e| bus_error("opening a channel", &e))?;
        self.channel = channel;
        Ok(())
    }
}

fn bus_error(doing: &str, e: &lapin::Error) -> Error {
    Error::Bus(format!("{doing} failed: {e}; the notifications wait in the outbox"))
}
