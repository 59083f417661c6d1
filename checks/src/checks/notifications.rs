//! Notifications that should have gone out and have not: the outbox holds
//! unsent ones older than a few minutes while notifications are on (the
//! bus is unreachable, or nothing publishes: `serve --notify-interval 0`
//! and no `notify publish` in cron), or holds unsent ones while they are
//! off (nothing will send them).

use crate::{CheckResult, Context};
use nodemaint_migration::OUTBOX_TABLE;
use sea_orm::{ConnectionTrait, Value};

/// How old the oldest unsent notification may be: many of `serve`'s
/// one-second rounds, five of a one-minute cron's.
pub const GRACE: chrono::Duration = chrono::Duration::minutes(5);

pub async fn check(c: &Context) -> Result<CheckResult, String> {
    let tables = nodemaint_runtime::probe::tables(&c.db).await.map_err(|e| e.to_string())?;
    if !tables.iter().any(|t| t == OUTBOX_TABLE) {
        return Ok(CheckResult::success(Some(
            "No notification outbox yet: `nodemaint db upgrade` adds it.".to_owned(),
        )));
    }
    let backend = c.db.get_database_backend();
    let cutoff = nodemaint_runtime::sql::now_utc() - GRACE;
    let sql = format!(
        "SELECT COUNT(*), COUNT(CASE WHEN created_at < ? THEN 1 END) FROM {OUTBOX_TABLE} WHERE sent_at IS NULL"
    );
    let statement = nodemaint_runtime::sql::stmt(backend, &sql, vec![Value::from(cutoff)]);
    let row = c.db.query_one_raw(statement).await.map_err(|e| e.to_string())?.ok_or("no row")?;
    let unsent = crate::census::int_at(&row, 0)?;
    let late = crate::census::int_at(&row, 1)?;
    Ok(match (c.notifications, unsent, late) {
        (false, 0, _) => CheckResult::success(Some(
            "Notifications are off ([DEFAULT] notification_level or [oslo_messaging_notifications] driver unset)."
                .to_owned(),
        )),
        (false, n, _) => CheckResult::warning(format!(
            "{n} notification(s) wait in the outbox but notifications are off in this configuration: nothing will \
             send them. Turn them on again ([DEFAULT] notification_level, [oslo_messaging_notifications] driver) \
             and run `nodemaint notify publish`."
        )),
        (true, _, 0) => CheckResult::success(None),
        (true, n, late) => CheckResult::warning(format!(
            "{n} notification(s) unsent, {late} of them written more than {} minutes ago: is the bus reachable? \
             Check [oslo_messaging_notifications] transport_url, and that `nodemaint serve --notify-interval` is \
             above 0 or `nodemaint notify publish` runs from cron.",
            GRACE.num_minutes()
        )),
    })
}
