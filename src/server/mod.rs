//! `nodemaint serve`: the spec's REST API, Ironic-compatible on the wire.
//!
//! This lives in the binary crate on purpose: it can only reach what the
//! `nodemaint` library exports, so an API service importing the library
//! finds everything it needs there ([`nodemaint::Maintenance`] decides;
//! this module reads requests and writes answers).
//!
//! Layers, outermost first: the access log (status and latency on stderr,
//! with Ironic's `x-openstack-request-id`), microversion negotiation (406
//! for versions not served; the version headers on every answer), then,
//! on `/v1/nodes…` only, identity (401 without one). Discovery (`/`,
//! `/v1`) is public, as in Ironic.

mod auth;
mod errors;
mod extract;
mod handlers;
mod health;
mod keystone;
mod publisher;
mod routes;
mod ticker;
mod version;

pub use auth::AuthStrategy;
pub use keystone::Keystone;

use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::{Router, extract::State};
use errors::ApiError;
use nodemaint::publish::Publisher;
use nodemaint::{Caller, Error, Maintenance, Result};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tower_http::normalize_path::NormalizePath;
use version::Refusal;

/// What every handler shares.
#[derive(Clone)]
pub struct AppState {
    svc: Maintenance,
    body_timeout: Duration,
    auth: AuthStrategy,
    /// The token validator, with `--auth-strategy keystone`.
    keystone: Option<Arc<Keystone>>,
    public_endpoint: Option<String>,
    /// `/healthcheck`'s probe, unless `[healthcheck] enabled = false`.
    health: Option<Arc<health::Health>>,
}

/// The caller a request speaks for, set by the identity layer.
#[derive(Clone)]
pub struct RequestCaller(pub Caller);

/// The largest request body served (the framework's default limit); anything
/// larger is 413. A 16,000-character reason fits many times over.
pub const MAX_BODY_BYTES: usize = 2 * 1024 * 1024;

pub struct ServeOptions {
    pub bind: SocketAddr,
    /// How long a request body may take to arrive (408 after it).
    pub body_timeout: Duration,
    /// How long a stop waits for requests in flight before leaving them.
    pub shutdown_timeout: Duration,
    pub auth: AuthStrategy,
    /// The token validator, with `--auth-strategy keystone`.
    pub keystone: Option<Arc<Keystone>>,
    /// The URL clients reach this service at, for links (behind a proxy).
    pub public_endpoint: Option<String>,
    /// How often the windows tick runs in the server (`None`: never), and
    /// the database URL its lock is named by.
    pub tick: Option<(Duration, String)>,
    /// Serve `/healthcheck` (`[healthcheck] enabled`).
    pub healthcheck: bool,
    /// The notification publisher, how often it runs and the database URL
    /// its lock is named by (`None`: notifications off, or sent from cron).
    pub publisher: Option<(Publisher, Duration, String)>,
    /// What the tick notifies (`None`: notifications off).
    pub notify: Option<nodemaint::notify::Settings>,
}

/// The whole API as a router, ready to serve.
pub fn router(svc: Maintenance, options: &ServeOptions) -> Router {
    let state = AppState {
        auth: options.auth,
        keystone: options.keystone.clone(),
        public_endpoint: options.public_endpoint.clone(),
        body_timeout: options.body_timeout,
        health: options.healthcheck.then(|| Arc::new(health::Health::new(svc.db().clone()))),
        svc,
    };
    let (mut public, mut nodes) = (Router::new(), Router::new());
    for route in routes::routes() {
        let group = if route.public { &mut public } else { &mut nodes };
        *group = std::mem::take(group).route(route.path, route.router);
    }
    let nodes = nodes
        .route_layer(middleware::from_fn_with_state(state.clone(), read_body))
        .route_layer(middleware::from_fn_with_state(state.clone(), identify));
    public
        .merge(nodes)
        .fallback(handlers::not_found)
        .method_not_allowed_fallback(handlers::method_not_allowed)
        .layer(middleware::from_fn(negotiate))
        .layer(middleware::from_fn(access_log))
        .with_state(state)
}

/// Serves until SIGTERM or SIGINT, then finishes the requests in flight for
/// at most `shutdown_timeout` (a client stalled mid-request must not keep a
/// systemd stop waiting forever).
pub async fn serve(svc: Maintenance, mut options: ServeOptions) -> Result<()> {
    let listener = tokio::net::TcpListener::bind(options.bind).await.map_err(|e| {
        Error::Config(format!("cannot listen on {}: {e}; choose another address with --bind", options.bind))
    })?;
    let local = listener.local_addr().map_err(|e| Error::Config(format!("cannot read the listening address: {e}")))?;
    tracing::info!("nodemaint API listening on http://{local} (auth strategy: {:?})", options.auth);
    let ticker = options.tick.clone().map(|(interval, url)| {
        ticker::spawn(svc.db().clone(), url, interval, svc.retry_policy(), options.notify.clone())
    });
    let publisher = (options.publisher.take())
        .map(|(publisher, interval, url)| publisher::spawn(svc.db().clone(), url, interval, publisher));
    // Ironic answers every path with or without a trailing slash, and the
    // `baremetal` client asks for `/v1/nodes/?…`: the slash is trimmed
    // before routing.
    let app = NormalizePath::trim_trailing_slash(router(svc, &options));
    let stopping = Arc::new(tokio::sync::Notify::new());
    let signalled = stopping.clone();
    let app = axum::ServiceExt::<Request>::into_make_service(app);
    let server = axum::serve(listener, app).with_graceful_shutdown(async move {
        shutdown_signal().await;
        signalled.notify_one();
    });
    let deadline = async {
        stopping.notified().await;
        tokio::time::sleep(options.shutdown_timeout).await;
    };
    tokio::select! {
        served = server => served.map_err(|e| Error::Config(format!("the HTTP server stopped: {e}")))?,
        () = deadline => tracing::warn!(
            "requests still in flight after --shutdown-timeout {}s; closing their connections",
            options.shutdown_timeout.as_secs()
        ),
    }
    for task in [ticker, publisher].into_iter().flatten() {
        task.abort();
    }
    tracing::info!("nodemaint API stopped");
    Ok(())
}

async fn shutdown_signal() {
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut term) => {
                term.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = terminate => {},
        _ = tokio::signal::ctrl_c() => {},
    }
    tracing::info!("shutting down: finishing the requests in flight");
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

fn put_header(headers: &mut HeaderMap, name: &'static str, value: String) {
    if let Ok(v) = HeaderValue::from_str(&value) {
        headers.insert(name, v);
    }
}

fn range_headers(headers: &mut HeaderMap) {
    put_header(headers, version::MIN_HEADER, version::MIN.to_string());
    put_header(headers, version::MAX_HEADER, version::MAX.to_string());
}

/// Picks the version a request is served at, or refuses it (406) under /v1.
async fn negotiate(mut request: Request, next: Next) -> Response {
    let headers = request.headers();
    let asked = version::requested(header(headers, version::STANDARD_HEADER), header(headers, version::HEADER));
    let negotiated = version::negotiate(asked);
    // Ironic refuses under /v1 in its web framework's words, and at the
    // root (discovery) in its own fault form; both without a version header.
    let refuse = |message: String| {
        if request.uri().path().starts_with("/v1") {
            ApiError::Http(StatusCode::NOT_ACCEPTABLE, message)
        } else {
            ApiError::Fault(StatusCode::NOT_ACCEPTABLE, message)
        }
    };
    let chosen = match negotiated {
        Ok(v) => v,
        Err(Refusal::Invalid(message)) => return refuse(message).into_response(),
        Err(Refusal::Unsupported(message)) => {
            let mut response = refuse(message).into_response();
            range_headers(response.headers_mut());
            return response;
        }
    };
    request.extensions_mut().insert(chosen);
    let mut response = next.run(request).await;
    if response.extensions().get::<errors::Framework>().is_some() {
        return response;
    }
    let headers = response.headers_mut();
    range_headers(headers);
    put_header(headers, version::HEADER, chosen.to_string());
    put_header(headers, version::STANDARD_HEADER, format!("baremetal {chosen}"));
    response
}

/// Who the request speaks for: 401 without a usable identity (with
/// Keystone's `WWW-Authenticate` challenge), 503 when Keystone cannot be asked.
async fn identify(State(state): State<AppState>, mut request: Request, next: Next) -> Response {
    let caller = match &state.keystone {
        Some(keystone) => keystone.caller(header(request.headers(), "X-Auth-Token")).await,
        None => auth::caller(state.auth, request.headers())
            .map_err(|auth::Unauthenticated(message)| keystone::Refused::Unauthenticated(message)),
    };
    match caller {
        Ok(mut caller) => {
            caller.request_id = request.extensions().get::<RequestId>().map(|RequestId(id)| id.clone());
            request.extensions_mut().insert(RequestCaller(caller));
            next.run(request).await
        }
        Err(keystone::Refused::Unauthenticated(message)) => {
            let mut response = ApiError::Fault(StatusCode::UNAUTHORIZED, message).into_response();
            if let Some(keystone) = &state.keystone {
                put_header(response.headers_mut(), "WWW-Authenticate", keystone.challenge().to_owned());
            }
            response
        }
        Err(keystone::Refused::Unavailable(message)) => {
            tracing::error!("{message}; answering 503");
            ApiError::Fault(
                StatusCode::SERVICE_UNAVAILABLE,
                "The identity service is unavailable; try again later.".into(),
            )
            .into_response()
        }
    }
}

/// Reads the whole request body before the handler runs, within
/// `body_timeout` and [`MAX_BODY_BYTES`], so a slow or oversized body gets
/// Ironic's error body (408, 413) instead of holding a worker or a text/plain
/// answer from the framework. Hand-written over tower-http's limit and
/// timeout layers because those answer in text/plain mid-handler (after
/// Ironic would have answered) and would need a mapping layer as long as
/// this; the limit itself is axum's.
async fn read_body(State(state): State<AppState>, request: Request, next: Next) -> Response {
    use axum::extract::FromRequest;
    let (parts, body) = request.into_parts();
    // A body declared too large is refused before any of it is read (and
    // before the body timeout could hold a stop for it).
    let declared =
        parts.headers.get(axum::http::header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|length| length > MAX_BODY_BYTES as u64) {
        let mut response = too_large().into_response();
        response.headers_mut().insert(axum::http::header::CONNECTION, HeaderValue::from_static("close"));
        return response;
    }
    // A request of its own for the body alone: the framework's limit applies
    // (2 MiB, [`MAX_BODY_BYTES`]) and its rejection says which failure it was.
    let read = tokio::time::timeout(state.body_timeout, axum::body::Bytes::from_request(Request::new(body), &())).await;
    let refusal = match read {
        Ok(Ok(bytes)) => return next.run(Request::from_parts(parts, axum::body::Body::from(bytes))).await,
        Ok(Err(rejection)) if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE => too_large(),
        Ok(Err(rejection)) => ApiError::bad_request(format!("Cannot read the request body: {}", rejection.body_text())),
        Err(_) => ApiError::Fault(
            StatusCode::REQUEST_TIMEOUT,
            format!("The request body did not arrive within {}s; send it again.", state.body_timeout.as_secs()),
        ),
    };
    // The rest of the body is never read, so the connection cannot carry
    // another request: say so, or a client reusing it reads garbage.
    let mut response = refusal.into_response();
    response.headers_mut().insert(axum::http::header::CONNECTION, HeaderValue::from_static("close"));
    response
}

fn too_large() -> ApiError {
    ApiError::Fault(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!("Request is too large. Larger than max_request_body_size ({MAX_BODY_BYTES})."),
    )
}

/// One line per request on stderr: method, path, status, latency, request id.
/// Not tower-http's trace layer: that one logs nothing for a request the
/// client abandoned, and it is the line operators look for in an outage.
/// A request whose client went away before the answer is logged too, with
/// status 499 (nginx's "client closed request"): the server drops its
/// future, and the line is written from the drop.
async fn access_log(mut request: Request, next: Next) -> Response {
    let mut line = AccessLine {
        started: Instant::now(),
        method: request.method().clone(),
        path: request.uri().path().to_owned(),
        request_id: format!("req-{}", uuid::Uuid::new_v4()),
        status: None,
    };
    // The caller carries it into the library, for notifications.
    request.extensions_mut().insert(RequestId(line.request_id.clone()));
    let mut response = next.run(request).await;
    line.status = Some(response.status().as_u16());
    put_header(response.headers_mut(), "x-openstack-request-id", line.request_id.clone());
    response
}

/// The request's `x-openstack-request-id`, made by [`access_log`].
#[derive(Clone)]
struct RequestId(String);

/// A request's access-log line, written when it is dropped: after the
/// answer, or when the client abandoned the request.
struct AccessLine {
    started: Instant,
    method: axum::http::Method,
    path: String,
    request_id: String,
    status: Option<u16>,
}

impl Drop for AccessLine {
    fn drop(&mut self) {
        let AccessLine { started, method, path, request_id, status } = self;
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        match status {
            Some(status) => {
                tracing::info!(target: "nodemaint::api", "{method} {path} status: {status} time: {ms:.1}ms [{request_id}]")
            }
            None => tracing::warn!(
                target: "nodemaint::api",
                "{method} {path} status: 499 (client closed the connection before the answer) time: {ms:.1}ms [{request_id}]"
            ),
        }
    }
}
