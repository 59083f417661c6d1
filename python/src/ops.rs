//! `Maintenance`: the library's operations on a database, each one
//! transaction through the library's one applier. Calls block the calling
//! Python thread, not the interpreter: the GIL is released while the Rust
//! side works, so several Python threads share one handle (and its pool).

use crate::errors;
use crate::model::{PyCaller, PyPolicy, now, time_arg, to_python};
use nodemaint::db;
use nodemaint::schema;
use nodemaint::{Maintenance, NewEntry};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, OnceLock};

/// One runtime for the process: its workers drive the pools' connections;
/// each call is driven by the Python thread that made it (`block_on`).
fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("nodemaint")
            .enable_all()
            .build()
            .expect("a tokio runtime starts")
    })
}

/// Runs `work` to its end with the GIL released; a library error becomes
/// its exception, a panic an `InternalError` (never an unwind into Python).
fn block<T, F>(py: Python<'_>, work: F) -> PyResult<T>
where
    T: Send,
    F: Future<Output = nodemaint::Result<T>> + Send,
{
    let outcome = py.detach(|| std::panic::catch_unwind(AssertUnwindSafe(|| runtime().block_on(work))));
    match outcome {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => Err(errors::to_py(py, error)),
        Err(payload) => Err(errors::panicked(py, payload)),
    }
}

/// The operations of the REST API on one database.
///
/// >>> m = Maintenance("sqlite:////var/lib/ironic/ironic.sqlite")
/// >>> m.add(Caller.system("op", ["admin"]), "myNode", "operator_hold", reason="Row C power")["scope"]
/// 'system'
#[pyclass(frozen, module = "nodemaint", name = "Maintenance")]
pub struct PyMaintenance {
    inner: Arc<Maintenance>,
}

impl PyMaintenance {
    fn service(&self) -> Arc<Maintenance> {
        Arc::clone(&self.inner)
    }
}

#[pymethods]
impl PyMaintenance {
    /// Connects to the database at `url` (the CLI's URLs, SQLAlchemy forms
    /// such as `mysql+pymysql://` included) and checks that nodemaint's
    /// tables are there (`nodemaint db upgrade` makes them).
    #[new]
    #[pyo3(signature = (url, policy=None, *, max_connections=None))]
    fn new(
        py: Python<'_>,
        url: String,
        policy: Option<PyRef<'_, PyPolicy>>,
        max_connections: Option<u32>,
    ) -> PyResult<Self> {
        if max_connections == Some(0) {
            return Err(PyValueError::new_err("max_connections must be at least 1"));
        }
        let policy = policy.map(|p| p.inner.clone()).unwrap_or_default();
        let connection = block(py, async {
            let url = db::normalize_url(&url)?;
            let connection = db::connect_with(&url, max_connections).await?;
            schema::require_maintenance_table(&connection, &url).await?;
            Ok(connection)
        })?;
        Ok(PyMaintenance { inner: Arc::new(Maintenance::new(connection, policy)) })
    }

    /// The node's active entries and scheduled windows as `caller` sees
    /// them (`GET /v1/nodes/{node}/maintenance`).
    fn list<'py>(&self, py: Python<'py>, caller: PyRef<'py, PyCaller>, node: String) -> PyResult<Bound<'py, PyAny>> {
        let (svc, caller) = (self.service(), caller.inner.clone());
        let entries = block(py, async move { svc.list(&caller, &node).await })?;
        to_python(py, &entries)
    }

    /// Asserts an entry at the caller's scope (`POST …/maintenance`); with
    /// `ends_at`, a window, scheduled when `starts_at` is later than now.
    /// Times: a `datetime` (naive is UTC) or an RFC 3339 string.
    #[pyo3(signature = (caller, node, r#type, *, reason=None, extra=None, starts_at=None, ends_at=None))]
    #[allow(clippy::too_many_arguments)]
    fn add<'py>(
        &self,
        py: Python<'py>,
        caller: PyRef<'py, PyCaller>,
        node: String,
        r#type: String,
        reason: Option<String>,
        extra: Option<&Bound<'py, PyAny>>,
        starts_at: Option<&Bound<'py, PyAny>>,
        ends_at: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let at = now();
        let request = NewEntry {
            entry_type: r#type,
            reason,
            extra: extra.map(json_arg).transpose()?,
            starts_at: starts_at.map(|t| time_arg(t, "starts_at", at)).transpose()?,
            ends_at: ends_at.map(|t| time_arg(t, "ends_at", at)).transpose()?,
        };
        let (svc, caller) = (self.service(), caller.inner.clone());
        let entry = block(py, async move { svc.add(&caller, &node, request).await })?;
        to_python(py, &entry)
    }

    /// A window from `starts_at` to `ends_at`: `add` with both times.
    #[pyo3(signature = (caller, node, r#type, starts_at, ends_at, *, reason=None, extra=None))]
    #[allow(clippy::too_many_arguments)]
    fn schedule<'py>(
        &self,
        py: Python<'py>,
        caller: PyRef<'py, PyCaller>,
        node: String,
        r#type: String,
        starts_at: &Bound<'py, PyAny>,
        ends_at: &Bound<'py, PyAny>,
        reason: Option<String>,
        extra: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.add(py, caller, node, r#type, reason, extra, Some(starts_at), Some(ends_at))
    }

    /// Releases one entry by uuid; a window that has not started is
    /// cancelled (`DELETE …/maintenance/{uuid}`).
    fn remove<'py>(
        &self,
        py: Python<'py>,
        caller: PyRef<'py, PyCaller>,
        node: String,
        uuid: String,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (svc, caller) = (self.service(), caller.inner.clone());
        let entry = block(py, async move { svc.release(&caller, &node, &uuid).await })?;
        to_python(py, &entry)
    }

    /// Releases every active entry, all or nothing (`DELETE
    /// …/maintenance`); returns what was released.
    fn remove_all<'py>(
        &self,
        py: Python<'py>,
        caller: PyRef<'py, PyCaller>,
        node: String,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (svc, caller) = (self.service(), caller.inner.clone());
        let entries = block(py, async move { svc.release_all(&caller, &node).await })?;
        to_python(py, &entries)
    }

    /// The legacy boolean's PUT (`baremetal node maintenance set`): the
    /// node's one `legacy` entry, created or its reason updated.
    #[pyo3(signature = (caller, node, reason=None))]
    fn set<'py>(
        &self,
        py: Python<'py>,
        caller: PyRef<'py, PyCaller>,
        node: String,
        reason: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (svc, caller) = (self.service(), caller.inner.clone());
        let entry = block(py, async move { svc.legacy_set(&caller, &node, reason).await })?;
        to_python(py, &entry)
    }

    /// The legacy boolean's DELETE: releases everything, all or nothing.
    fn unset<'py>(&self, py: Python<'py>, caller: PyRef<'py, PyCaller>, node: String) -> PyResult<Bound<'py, PyAny>> {
        self.remove_all(py, caller, node)
    }

    /// Moves a window's end later (active or scheduled).
    fn extend<'py>(
        &self,
        py: Python<'py>,
        caller: PyRef<'py, PyCaller>,
        node: String,
        uuid: String,
        ends_at: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let ends_at = time_arg(ends_at, "ends_at", now())?;
        let (svc, caller) = (self.service(), caller.inner.clone());
        let entry = block(py, async move { svc.extend(&caller, &node, &uuid, ends_at).await })?;
        to_python(py, &entry)
    }

    /// Cancels a window that has not started (an active one is 409).
    fn cancel<'py>(
        &self,
        py: Python<'py>,
        caller: PyRef<'py, PyCaller>,
        node: String,
        uuid: String,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (svc, caller) = (self.service(), caller.inner.clone());
        let entry = block(py, async move { svc.cancel(&caller, &node, &uuid).await })?;
        to_python(py, &entry)
    }

    /// The node as the REST API shows it (`maintenance`, the synthesised
    /// `maintenance_reason`, `fault`, …).
    fn node<'py>(&self, py: Python<'py>, caller: PyRef<'py, PyCaller>, node: String) -> PyResult<Bound<'py, PyAny>> {
        let (svc, caller) = (self.service(), caller.inner.clone());
        let view = block(py, async move { svc.node(&caller, &node).await })?;
        to_python(py, &view)
    }

    /// The node's history, oldest first (at most `limit` newest rows), with
    /// identities above the caller's scope masked.
    #[pyo3(signature = (caller, node, limit=100))]
    fn history<'py>(
        &self,
        py: Python<'py>,
        caller: PyRef<'py, PyCaller>,
        node: String,
        limit: u64,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (svc, caller) = (self.service(), caller.inner.clone());
        let rows = block(py, async move { svc.history(&caller, &node, limit).await })?;
        to_python(py, &rows)
    }

    /// Closes the pool's connections (the handle is unusable after).
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let svc = self.service();
        block(
            py,
            async move { svc.db().clone().close().await.map_err(|e| nodemaint::Error::Unreachable(e.to_string())) },
        )
    }
}

/// `extra`: a JSON object (a dict); anything else is the API's 400.
fn json_arg(value: &Bound<'_, PyAny>) -> PyResult<serde_json::Value> {
    if !value.is_instance_of::<PyDict>() {
        let ty = value.get_type().name().map(|n| n.to_string()).unwrap_or_default();
        return Err(pyo3::exceptions::PyTypeError::new_err(format!("extra must be a dict, not {ty}")));
    }
    pythonize::depythonize(value).map_err(|e| PyValueError::new_err(format!("extra: {e}")))
}
