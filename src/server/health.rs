//! `GET /healthcheck`, as oslo.middleware's healthcheck answers it for
//! Ironic behind a load balancer: `200 OK` (text/plain) while the database
//! answers, `503` with the reason when it does not, so HAProxy drains this
//! service instead of sending clients to wait on it.
//!
//! The probe is one `SELECT 1` on a pooled connection, bounded by
//! [`PROBE_TIMEOUT`]; its result is kept for [`CACHE_FOR`], so any number
//! of load balancers polling it cost the database at most one statement a
//! second. Concurrent checks while a probe runs wait for that probe.

use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use sea_orm::DatabaseConnection;
use std::time::{Duration, Instant};
use tokio::sync::Mutex;

/// How long a probe's answer stands.
pub const CACHE_FOR: Duration = Duration::from_secs(1);
/// How long the probe waits for the database before calling it down.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// The last probe: when it ran and what it found (`Err` is the reason).
pub struct Health {
    db: DatabaseConnection,
    last: Mutex<Option<(Instant, Result<(), String>)>>,
}

impl Health {
    pub fn new(db: DatabaseConnection) -> Health {
        Health { db, last: Mutex::new(None) }
    }

    /// The database's state, probed at most once per [`CACHE_FOR`].
    pub async fn check(&self) -> Result<(), String> {
        let mut last = self.last.lock().await;
        if let Some((at, result)) = last.as_ref()
            && at.elapsed() < CACHE_FOR
        {
            return result.clone();
        }
        // The answer says what kind of failure; the driver's words go to the log.
        let result = match tokio::time::timeout(PROBE_TIMEOUT, nodemaint::db::ping(&self.db)).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => {
                tracing::warn!("healthcheck: {e}");
                Err(match e {
                    nodemaint::Error::Unreachable(_) => "database unavailable: no connection could be made",
                    nodemaint::Error::Lost { .. } => "database unavailable: the connection was lost",
                    _ => "database unavailable: the probe failed",
                }
                .to_owned())
            }
            Err(_) => {
                let reason = format!("database unavailable: no answer within {}s", PROBE_TIMEOUT.as_secs());
                tracing::warn!("healthcheck: {reason}");
                Err(reason)
            }
        };
        *last = Some((Instant::now(), result.clone()));
        result
    }
}

/// `GET /healthcheck` (and `HEAD`).
pub async fn healthcheck(State(state): State<super::AppState>) -> Response {
    let Some(health) = &state.health else {
        return super::handlers::not_found().await.into_response();
    };
    let (status, body) = match health.check().await {
        Ok(()) => (StatusCode::OK, "OK".to_owned()),
        Err(reason) => (StatusCode::SERVICE_UNAVAILABLE, reason),
    };
    let mut response = (status, body).into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=UTF-8"));
    response
}
