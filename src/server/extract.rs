//! Path and query extractors whose refusals are Ironic's: a path or query
//! string that cannot be read (invalid UTF-8 after percent-decoding) is
//! the web framework's 400 with an empty description, as Ironic answers
//! it, instead of axum's plain-text rejection.

use super::errors::ApiError;
use axum::extract::{FromRequestParts, Path, Query};
use axum::http::StatusCode;
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

/// [`Path`], refused as Ironic refuses an unreadable path.
pub struct IronicPath<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for IronicPath<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        match Path::<T>::from_request_parts(parts, state).await {
            Ok(Path(value)) => Ok(IronicPath(value)),
            Err(_) => Err(ApiError::Http(StatusCode::BAD_REQUEST, String::new())),
        }
    }
}

/// [`Query`], refused as Ironic refuses an unreadable query string.
pub struct IronicQuery<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for IronicQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        match Query::<T>::from_request_parts(parts, state).await {
            Ok(Query(value)) => Ok(IronicQuery(value)),
            Err(_) => Err(ApiError::Http(StatusCode::BAD_REQUEST, String::new())),
        }
    }
}
