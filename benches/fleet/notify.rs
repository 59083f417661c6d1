//! Notifications (issue #29): `serve`'s legacy and typed cycles with
//! notifications on (to the shared RabbitMQ, its publisher sending while
//! the clients run) against the same server with them off, and draining a
//! backlog of 100,000 notifications from the outbox to RabbitMQ. The
//! queues the publisher fills are declared first with a length limit (the
//! publisher uses a queue as it finds it), so the broker holds at most
//! `QUEUE_LIMIT` messages, and are deleted afterwards.

use crate::serve::{self, Served};
use crate::{Figure, alternated, rounds};
use lapin::options::{ExchangeDeclareOptions, QueueBindOptions, QueueDeclareOptions, QueueDeleteOptions};
use lapin::types::{AMQPValue, FieldTable};
use nodemaint::entity::node_maintenance_notification as outbox;
use nodemaint::publish::{PublishOptions, Publisher};
use sea_orm::{ActiveValue::Set, EntityTrait};
use std::time::Instant;

const AMQP: &str = "amqp://guest:guest@127.0.0.1:5672/%2f";
const QUEUE_LIMIT: i64 = 10_000;

/// A topic and exchange of this run's own, its ironic.conf, and its
/// length-limited queues.
struct Bus {
    exchange: String,
    topic: String,
    conf: std::path::PathBuf,
    channel: lapin::Channel,
    _connection: lapin::Connection,
}

impl Bus {
    async fn new() -> Bus {
        let id = uuid::Uuid::new_v4().simple().to_string();
        let (exchange, topic) = (format!("nmbx-{}", &id[..8]), format!("nmbt-{}", &id[..8]));
        let conf = std::env::temp_dir().join(format!("nodemaint-bench-notify-{id}.conf"));
        let text = format!(
            "[DEFAULT]\nnotification_level = info\nversioned_notifications_topics = {topic}\ncontrol_exchange = {exchange}\n\
             \n[oslo_messaging_notifications]\ndriver = messagingv2\ntransport_url = rabbit://guest:guest@127.0.0.1:5672/\n"
        );
        std::fs::write(&conf, text).unwrap();
        let connection = lapin::Connection::connect(AMQP, lapin::ConnectionProperties::default()).await.unwrap();
        let channel = connection.create_channel().await.unwrap();
        let kind = lapin::ExchangeKind::Topic;
        channel
            .exchange_declare(exchange.as_str().into(), kind, ExchangeDeclareOptions::default(), FieldTable::default())
            .await
            .unwrap();
        let mut limited = FieldTable::default();
        limited.insert("x-max-length".into(), AMQPValue::LongLongInt(QUEUE_LIMIT));
        for priority in ["info", "error"] {
            let key = format!("{topic}.{priority}");
            channel.queue_declare(key.as_str().into(), QueueDeclareOptions::default(), limited.clone()).await.unwrap();
            let (q, x, k) = (key.as_str().into(), exchange.as_str().into(), key.as_str().into());
            channel.queue_bind(q, x, k, QueueBindOptions::default(), FieldTable::default()).await.unwrap();
        }
        Bus { exchange, topic, conf, channel, _connection: connection }
    }

    fn settings(&self) -> nodemaint::notify::Settings {
        let files = nodemaint::config::Files { toml: None, oslo_files: vec![self.conf.clone()], oslo_dirs: Vec::new() };
        let config = files.load().unwrap();
        nodemaint::notify::Settings::from_config(&config).unwrap().expect("notifications on")
    }

    async fn remove(self) {
        for priority in ["info", "error"] {
            let key = format!("{}.{priority}", self.topic);
            let _ = self.channel.queue_delete(key.as_str().into(), QueueDeleteOptions::default()).await;
        }
        let _ = self.channel.exchange_delete(self.exchange.as_str().into(), Default::default()).await;
        let _ = std::fs::remove_file(&self.conf);
    }
}

/// Legacy and typed cycles, 8 clients, notifications on against off, in
/// alternating rounds (gated on PostgreSQL, as the issue asks).
pub async fn figures(backend: crate::db::Backend, url: &str, quick: bool) -> Vec<Figure> {
    let name = backend.name();
    eprintln!("[{name}] serve with notifications on against off");
    let db = nodemaint::db::connect(url).await.unwrap();
    let mut uuids = Vec::new();
    for i in 0..8 {
        uuids.push(nodemaint::nodes::find(&db, &crate::ops::node_name(i, false)).await.unwrap().uuid.unwrap());
    }
    let bus = Bus::new().await;
    let conf = bus.conf.display().to_string();
    let workers = 8;
    let with = |interval: &'static str| {
        let args = [
            "--auth-strategy",
            "noauth",
            "--tick-interval",
            "0",
            "--config-file",
            &conf,
            "--notify-interval",
            interval,
        ];
        Served::start_with(url, workers + 1, &args)
    };
    // Sending (the publisher each second, and the broker) on the same two
    // cores; and written only, the publisher off, which isolates the
    // outbox's own cost. One at a time: a running publisher sends what any
    // server wrote.
    let off = Served::start_with(url, workers + 1, &["--auth-strategy", "noauth", "--tick-interval", "0"]);
    let (rounds, run_for) = rounds(quick, 4);
    let mut figures = Vec::new();
    for typed in [false, true] {
        let what = if typed { "typed POST+DELETE" } else { "legacy PUT+DELETE" };
        let run = |base: String| {
            let uuids = uuids.clone();
            async move {
                if typed {
                    serve::typed_cycles(&base, &uuids, workers, run_for).await
                } else {
                    serve::cycles(&base, &uuids, workers, run_for, None).await
                }
            }
        };
        for sent in [true, false] {
            let server = with(if sent { "1" } else { "0" });
            let how = if sent { "notifications on (sent)" } else { "notifications written, not sent" };
            let label = format!("{what}, {how} / off");
            let (with, without) =
                alternated(&label, rounds, || run(server.base.clone()), || run(off.base.clone())).await;
            let gated = sent && backend == crate::db::Backend::Postgres;
            figures.push(Figure {
                backend: name,
                figure: format!("serve: {what} cycles/s, {workers} clients, {how} vs off"),
                ours: with,
                hand_written: Some(without),
                ratio: Some(with / without),
                target: gated.then(|| ">= 0.9".to_owned()),
                met: gated.then_some(with / without >= 0.9),
            });
        }
    }
    drop(off);
    figures.push(drain(&db, url, &bus, if quick { 5_000 } else { 100_000 }, name).await);
    bus.remove().await;
    figures
}

/// Fills the outbox with `n` notifications as a legacy call renders them,
/// then times one `notify publish` run sending them all.
async fn drain(db: &sea_orm::DatabaseConnection, url: &str, bus: &Bus, n: usize, name: &'static str) -> Figure {
    eprintln!("[{name}] draining {n} notifications to RabbitMQ");
    // One real message (a legacy call's `.end`, NodePayload), copied with
    // fresh message ids.
    let svc =
        nodemaint::Maintenance::new(db.clone(), nodemaint::Policy::defaults()).with_notifications(&bus.settings());
    let node = crate::ops::node_name(0, false);
    svc.legacy_set(&nodemaint::Caller::system("bench", &["admin"]), &node, Some("bench".into())).await.unwrap();
    let sample = outbox::Entity::find().all(db).await.unwrap().pop().expect("a notification");
    outbox::Entity::delete_many().exec(db).await.unwrap();
    for chunk in (0..n).collect::<Vec<_>>().chunks(1000) {
        let rows = chunk.iter().map(|_| {
            let id = uuid::Uuid::new_v4().to_string();
            outbox::ActiveModel {
                message: Set(sample.message.replace(&sample.message_id, &id)),
                message_id: Set(id),
                node_id: Set(sample.node_id),
                event_type: Set(sample.event_type.clone()),
                priority: Set(sample.priority.clone()),
                created_at: Set(sample.created_at),
                sent_at: Set(None),
                ..Default::default()
            }
        });
        outbox::Entity::insert_many(rows).exec_without_returning(db).await.unwrap();
    }
    let before = crate::peak_rss_kib();
    let mut publisher = Publisher::new(bus.settings());
    let started = Instant::now();
    let batch_size =
        std::env::var("NM_BATCH").ok().and_then(|b| b.parse().ok()).unwrap_or(nodemaint::publish::DEFAULT_BATCH);
    let report = publisher.publish(db, url, PublishOptions { batch_size, ..PublishOptions::default() }).await.unwrap();
    let secs = started.elapsed().as_secs_f64();
    publisher.close().await;
    assert_eq!(report.sent, n as u64, "{report:?}");
    let rate = n as f64 / secs;
    let grew = (crate::peak_rss_kib() - before) as f64 / 1024.0;
    eprintln!("  {n} sent in {secs:.1} s: {rate:.0}/s; peak RSS grew {grew:.1} MiB");
    Figure {
        backend: name,
        figure: format!("notify publish: {n} notifications drained, per second"),
        ours: rate,
        hand_written: None,
        ratio: None,
        target: Some(">= 5000/s".to_owned()),
        met: Some(rate >= 5000.0),
    }
}
