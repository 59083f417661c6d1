//! The library's errors as the Python exceptions of `nodemaint.errors`
//! (defined in Python, so that `ConfigError` can also be a `ValueError`),
//! each carrying the HTTP status and the one-line message the REST API
//! gives.

use nodemaint::authority::Rejected;
use pyo3::prelude::*;

/// The class in `nodemaint.errors` that an error of the library is raised as.
fn class_of(error: &nodemaint::Error) -> &'static str {
    use nodemaint::Error::*;
    match error {
        BadRequest(_) => "BadRequest",
        Forbidden(_) => "Forbidden",
        NotFound(_) => "NotFound",
        Conflict(_) => "Conflict",
        Unreachable(_) | Lost { .. } | LockTimeout(_) | Contended(_) | Bus(_) => "ServiceUnavailable",
        Config(_) => "ConfigError",
        Schema(_) | Database { .. } | Privileges(_) => "DatabaseError",
    }
}

/// An instance of `nodemaint.errors.<class>(message, code)`.
pub fn exception(py: Python<'_>, class: &str, message: String, code: u16) -> PyErr {
    let made = py.import("nodemaint.errors").and_then(|m| m.getattr(class)).and_then(|c| c.call1((message, code)));
    match made {
        Ok(instance) => PyErr::from_value(instance),
        Err(import_failed) => import_failed,
    }
}

/// A library error as its Python exception.
pub fn to_py(py: Python<'_>, error: nodemaint::Error) -> PyErr {
    exception(py, class_of(&error), error.message().to_owned(), error.http_status())
}

/// A refusal of the pure model as its Python exception.
pub fn rejected(py: Python<'_>, refusal: Rejected) -> PyErr {
    to_py(py, nodemaint::Error::from(refusal))
}

/// A Rust panic caught at the boundary: never unwinds into the interpreter.
pub fn panicked(py: Python<'_>, payload: Box<dyn std::any::Any + Send>) -> PyErr {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned());
    exception(py, "InternalError", format!("nodemaint failed inside (a defect, please report it): {what}"), 500)
}
