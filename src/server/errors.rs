//! Errors in Ironic's wire format, so existing clients show the message:
//! a JSON body whose `error_message` is itself JSON. Ironic's own errors
//! carry `faultcode` / `faultstring` / `debuginfo`; the ones its web
//! framework raises (405, 406) carry `code` / `title` / `description`.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use nodemaint_runtime::py_json::py_json;
use serde_json::json;

#[derive(Debug)]
pub enum ApiError {
    /// What the library decided (400, 403, 404, 409, 5xx).
    Library(nodemaint::Error),
    /// A 4xx the API layer decides (bad body, 401) in Ironic's fault form.
    Fault(StatusCode, String),
    /// A framework-level refusal (400 for an unreadable path, 404 for an
    /// unknown one, 405, 406): answered before any version is chosen, so
    /// it carries no version headers, as Ironic's.
    Http(StatusCode, String),
}

/// Marks a response the web framework gave (see [`ApiError::Http`]): the
/// version layer adds no version headers to it.
#[derive(Debug, Clone, Copy)]
pub struct Framework;

impl From<nodemaint::Error> for ApiError {
    fn from(e: nodemaint::Error) -> Self {
        ApiError::Library(e)
    }
}

impl From<nodemaint::authority::Rejected> for ApiError {
    fn from(rejected: nodemaint::authority::Rejected) -> Self {
        ApiError::Library(rejected.into())
    }
}

impl ApiError {
    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::Fault(StatusCode::BAD_REQUEST, message.into())
    }

    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::Fault(StatusCode::NOT_FOUND, message.into())
    }

    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::Library(e) => StatusCode::from_u16(e.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            ApiError::Fault(status, _) | ApiError::Http(status, _) => *status,
        }
    }

    /// The `error_message` text, as Ironic encodes it.
    pub fn error_message(&self) -> String {
        let status = self.status();
        match self {
            ApiError::Library(e) => fault_body(status, &public_message(e)),
            ApiError::Fault(_, message) => fault_body(status, message),
            ApiError::Http(_, description) => py_json(&json!({
                "code": status.as_u16(),
                "title": status.canonical_reason().unwrap_or(""),
                "description": description,
            })),
        }
    }
}

/// What a client is told. The library's words, except for failures of the
/// database itself: those name what the client should do, and the driver's
/// own text (which can name servers and tables) goes to the log only.
fn public_message(e: &nodemaint::Error) -> std::borrow::Cow<'_, str> {
    use nodemaint::Error;
    match e {
        Error::Unreachable(_) => "The database is unavailable: no connection to it could be had in time. Try again later.".into(),
        Error::Lost { committing: false, .. } => {
            "Lost the connection to the database; nothing was written. Try again.".into()
        }
        Error::Lost { committing: true, .. } => "Lost the connection to the database during the commit: whether the change was made is unknown. Check before trying again.".into(),
        Error::Database { .. } | Error::Privileges(_) | Error::Schema(_) | Error::Config(_) => {
            "The database failed this request; nothing was changed. The service's log has the details.".into()
        }
        other => other.message().into(),
    }
}

fn fault_body(status: StatusCode, message: &str) -> String {
    let faultcode = if status.is_server_error() { "Server" } else { "Client" };
    py_json(&json!({"faultcode": faultcode, "faultstring": message, "debuginfo": null}))
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        match &self {
            ApiError::Library(e) if self.status().is_server_error() => tracing::error!("{}", e.message()),
            _ if self.status().is_server_error() => tracing::error!("{}", self.error_message()),
            _ => {}
        }
        let body = py_json(&json!({"error_message": self.error_message()}));
        let framework = matches!(self, ApiError::Http(..));
        let mut response = (self.status(), body).into_response();
        if framework {
            response.extensions_mut().insert(Framework);
        }
        response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        if self.status() == StatusCode::SERVICE_UNAVAILABLE {
            // Contention, an unreachable or not-ready database node, a lock
            // held elsewhere: all pass; a client may come back in a second.
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_are_ironics_nested_json() {
        // Byte for byte what Ironic 39 answers for an unknown node.
        let e = ApiError::Library(nodemaint::Error::NotFound("Node nope could not be found.".into()));
        assert_eq!(
            py_json(&json!({"error_message": e.error_message()})),
            r#"{"error_message": "{\"faultcode\": \"Client\", \"faultstring\": \"Node nope could not be found.\", \"debuginfo\": null}"}"#
        );
        let refused = ApiError::Http(
            StatusCode::NOT_ACCEPTABLE,
            "Invalid value for X-OpenStack-Ironic-API-Version header".into(),
        );
        assert_eq!(
            refused.error_message(),
            r#"{"code": 406, "title": "Not Acceptable", "description": "Invalid value for X-OpenStack-Ironic-API-Version header"}"#
        );
        let db = ApiError::Library(nodemaint::Error::Database {
            message: "database error: x; nothing was changed".into(),
            kind: nodemaint::error::DbFailure::Other,
        });
        assert!(db.error_message().starts_with(r#"{"faultcode": "Server""#));
        assert!(!db.error_message().contains("database error: x"), "driver text stays in the log");
    }

    #[test]
    fn a_lost_or_unreachable_database_is_a_503_with_retry_after_and_no_driver_text() {
        for e in [
            nodemaint::Error::Unreachable("cannot connect to postgres://db/ironic: refused".into()),
            nodemaint::Error::Lost {
                message: "lost the database connection (terminating connection due to administrator command)".into(),
                committing: false,
            },
        ] {
            let api = ApiError::Library(e);
            let body = api.error_message();
            assert!(!body.contains("administrator") && !body.contains("postgres://"), "{body}");
            let response = api.into_response();
            assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
            assert_eq!(response.headers().get(header::RETRY_AFTER).unwrap(), "1");
        }
    }

    #[test]
    fn contention_is_a_503_with_retry_after() {
        let e = ApiError::Library(nodemaint::Error::Contended("the database refused this change".into()));
        let response = e.into_response();
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(response.headers().get(header::RETRY_AFTER).unwrap(), "1");
    }
}
