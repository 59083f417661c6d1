//! The pure authority model as Python classes and functions: thin wrappers
//! over `nodemaint::authority`, which decides everything. Nothing here
//! judges a caller; it converts arguments and answers.

use crate::errors;
use chrono::{DateTime, FixedOffset, NaiveDateTime, Utc};
use nodemaint::authority::{self, EntryView, MaintenanceEvent};
use nodemaint::entity::vocab::REGISTRY;
use nodemaint::entity::{Scope, node_maintenance, nodes};
use nodemaint::{Caller, EventKind, Policy};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use std::sync::OnceLock;

/// Who is asking: a Keystone token's user, project (none for a system
/// token) and roles, with Keystone's implied roles added (admin ⇒ manager
/// ⇒ member ⇒ reader).
///
/// >>> Caller.project("u1", "a0a0a0a0a0a0", ["admin"]).roles
/// ['admin', 'manager', 'member', 'reader']
#[pyclass(frozen, module = "nodemaint", name = "Caller", from_py_object)]
#[derive(Clone)]
pub struct PyCaller {
    pub inner: Caller,
}

#[pymethods]
impl PyCaller {
    /// A caller: system-scoped when `project_id` is None (unless
    /// `system_scope` says otherwise), else project-scoped.
    #[new]
    #[pyo3(signature = (user_id, project_id=None, roles=Vec::new(), *, system_scope=None, request_id=None))]
    fn new(
        user_id: String,
        project_id: Option<String>,
        roles: Vec<String>,
        system_scope: Option<bool>,
        request_id: Option<String>,
    ) -> PyResult<Self> {
        let roles: Vec<&str> = roles.iter().map(String::as_str).collect();
        let mut inner = match (project_id, system_scope) {
            (Some(_), Some(true)) => {
                return Err(PyValueError::new_err("system_scope=True: a system-scoped caller has no project_id"));
            }
            (Some(project), _) => Caller::project(user_id, project, &roles),
            (None, Some(false)) => {
                return Err(PyValueError::new_err("system_scope=False needs a project_id (a project-scoped token)"));
            }
            (None, _) => Caller::system(user_id, &roles),
        };
        inner.request_id = request_id;
        Ok(PyCaller { inner })
    }

    /// A system-scoped caller (an operator with a system token).
    #[staticmethod]
    fn system(user_id: String, roles: Vec<String>) -> Self {
        let roles: Vec<&str> = roles.iter().map(String::as_str).collect();
        PyCaller { inner: Caller::system(user_id, &roles) }
    }

    /// A project-scoped caller.
    #[staticmethod]
    fn project(user_id: String, project_id: String, roles: Vec<String>) -> Self {
        let roles: Vec<&str> = roles.iter().map(String::as_str).collect();
        PyCaller { inner: Caller::project(user_id, project_id, &roles) }
    }

    /// The caller of every request under `auth_strategy = noauth`.
    #[staticmethod]
    fn noauth() -> Self {
        PyCaller { inner: Caller::noauth() }
    }

    #[getter]
    fn user_id(&self) -> &str {
        &self.inner.user_id
    }
    #[getter]
    fn project_id(&self) -> Option<&str> {
        self.inner.project_id.as_deref()
    }
    #[getter]
    fn roles(&self) -> Vec<String> {
        self.inner.roles.clone()
    }
    #[getter]
    fn system_scope(&self) -> bool {
        self.inner.system_scope
    }
    #[getter]
    fn request_id(&self) -> Option<&str> {
        self.inner.request_id.as_deref()
    }

    fn __repr__(&self) -> String {
        let c = &self.inner;
        match &c.project_id {
            Some(p) => format!("Caller.project({:?}, {:?}, {:?})", c.user_id, p, c.roles),
            None => format!("Caller.system({:?}, {:?})", c.user_id, c.roles),
        }
    }
}

/// An Ironic node as the model sees it: its uuid (a new one when not
/// given), name, owner and lessee.
#[pyclass(frozen, module = "nodemaint", name = "Node", from_py_object)]
#[derive(Clone)]
pub struct PyNode {
    pub inner: nodes::Model,
}

impl PyNode {
    /// How the REST API would be told the node: its uuid, else its name.
    pub fn ident(&self) -> &str {
        self.inner.uuid.as_deref().or(self.inner.name.as_deref()).unwrap_or_default()
    }
}

#[pymethods]
impl PyNode {
    #[new]
    #[pyo3(signature = (uuid=None, name=None, owner=None, lessee=None))]
    fn new(uuid: Option<String>, name: Option<String>, owner: Option<String>, lessee: Option<String>) -> Self {
        let uuid = Some(uuid.unwrap_or_else(|| uuid::Uuid::new_v4().to_string()));
        let inner = nodes::Model {
            id: 0,
            uuid,
            name,
            owner,
            lessee,
            maintenance: None,
            maintenance_reason: None,
            fault: None,
            reservation: None,
            version: None,
            created_at: None,
            updated_at: None,
        };
        PyNode { inner }
    }

    #[getter]
    fn uuid(&self) -> Option<&str> {
        self.inner.uuid.as_deref()
    }
    #[getter]
    fn name(&self) -> Option<&str> {
        self.inner.name.as_deref()
    }
    #[getter]
    fn owner(&self) -> Option<&str> {
        self.inner.owner.as_deref()
    }
    #[getter]
    fn lessee(&self) -> Option<&str> {
        self.inner.lessee.as_deref()
    }

    fn __repr__(&self) -> String {
        let n = &self.inner;
        format!("Node(uuid={:?}, name={:?}, owner={:?}, lessee={:?})", n.uuid, n.name, n.owner, n.lessee)
    }
}

/// One active maintenance entry: its type, scope and asserter (the
/// project is empty for a system entry), with a new uuid and the current
/// time unless given.
///
/// >>> Entry("operator_hold", "owner", "alice", "9c84d2e0f1a3").scope
/// 'owner'
#[pyclass(frozen, module = "nodemaint", name = "Entry", from_py_object)]
#[derive(Clone)]
pub struct PyEntry {
    pub inner: node_maintenance::Model,
}

#[pymethods]
impl PyEntry {
    #[new]
    #[pyo3(signature = (r#type, scope, asserted_by, asserted_by_project=String::new(), *, reason=None, uuid=None, asserted_at=None, ends_at=None, extra=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        r#type: String,
        scope: &str,
        asserted_by: String,
        asserted_by_project: String,
        reason: Option<String>,
        uuid: Option<String>,
        asserted_at: Option<&Bound<'_, PyAny>>,
        ends_at: Option<&Bound<'_, PyAny>>,
        extra: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let scope = parse_scope(scope)?;
        if r#type.is_empty() {
            return Err(PyValueError::new_err("type must not be empty"));
        }
        let now = now();
        let asserted_at = asserted_at.map(|t| time_arg(t, "asserted_at", now)).transpose()?.unwrap_or(now);
        let ends_at = ends_at.map(|t| time_arg(t, "ends_at", now)).transpose()?;
        let extra = match extra {
            Some(d) => Some(
                pythonize::depythonize::<serde_json::Value>(d.as_any())
                    .map_err(|e| PyValueError::new_err(format!("extra: {e}")))?
                    .to_string(),
            ),
            None => None,
        };
        let inner = node_maintenance::Model {
            id: 0,
            uuid: uuid.unwrap_or_else(|| uuid::Uuid::new_v4().to_string()),
            node_id: 0,
            entry_type: r#type,
            reason,
            scope: scope.as_str().to_owned(),
            asserted_by,
            asserted_by_project,
            asserted_at,
            extra,
            version: Some("1.0".to_owned()),
            created_at: Some(asserted_at),
            updated_at: None,
            ends_at,
        };
        Ok(PyEntry { inner })
    }

    #[getter]
    fn uuid(&self) -> &str {
        &self.inner.uuid
    }
    #[getter]
    fn r#type(&self) -> &str {
        &self.inner.entry_type
    }
    #[getter]
    fn scope(&self) -> &str {
        &self.inner.scope
    }
    #[getter]
    fn reason(&self) -> Option<&str> {
        self.inner.reason.as_deref()
    }
    #[getter]
    fn asserted_by(&self) -> &str {
        &self.inner.asserted_by
    }
    #[getter]
    fn asserted_by_project(&self) -> &str {
        &self.inner.asserted_by_project
    }
    #[getter]
    fn asserted_at(&self) -> DateTime<Utc> {
        self.inner.asserted_at.and_utc()
    }
    #[getter]
    fn ends_at(&self) -> Option<DateTime<Utc>> {
        self.inner.ends_at.map(|t| t.and_utc())
    }

    /// The entry object as the REST API shows it to a system reader.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_python(py, &EntryView::for_caller(&self.inner, Scope::System))
    }

    fn __repr__(&self) -> String {
        let e = &self.inner;
        format!(
            "Entry({:?}, {:?}, {:?}, {:?}, uuid={:?})",
            e.entry_type, e.scope, e.asserted_by, e.asserted_by_project, e.uuid
        )
    }
}

/// A maintenance event: `kind` happening to `entry` by `actor`, as node
/// history records it. `text()` is the history row's text, from the one
/// renderer the database writers use.
#[pyclass(frozen, module = "nodemaint", name = "Event", from_py_object)]
#[derive(Clone)]
pub struct PyEvent {
    pub inner: MaintenanceEvent,
}

#[pymethods]
impl PyEvent {
    #[new]
    #[pyo3(signature = (kind, entry, actor, *, note=None, at=None))]
    fn new(
        kind: &str,
        entry: PyRef<'_, PyEntry>,
        actor: PyRef<'_, PyCaller>,
        note: Option<String>,
        at: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let kind = EventKind::parse(kind).ok_or_else(|| {
            let kinds: Vec<&str> = EventKind::ALL.iter().map(|k| k.as_str()).collect();
            PyValueError::new_err(format!("kind must be one of {}, not {kind:?}", kinds.join(", ")))
        })?;
        let now = now();
        let at = at.map(|t| time_arg(t, "at", now)).transpose()?.unwrap_or(now);
        Ok(PyEvent { inner: MaintenanceEvent::new(kind, &entry.inner, &actor.inner, note.as_deref(), at) })
    }

    #[getter]
    fn kind(&self) -> &'static str {
        self.inner.kind.as_str()
    }
    #[getter]
    fn entry_uuid(&self) -> &str {
        &self.inner.entry_uuid
    }
    #[getter]
    fn r#type(&self) -> &str {
        &self.inner.entry_type
    }
    #[getter]
    fn scope(&self) -> &str {
        &self.inner.scope
    }
    #[getter]
    fn reason(&self) -> Option<&str> {
        self.inner.reason.as_deref()
    }
    #[getter]
    fn asserted_by(&self) -> &str {
        &self.inner.asserted_by
    }
    #[getter]
    fn asserted_by_project(&self) -> &str {
        &self.inner.asserted_by_project
    }
    #[getter]
    fn actor(&self) -> &str {
        &self.inner.actor
    }
    #[getter]
    fn actor_project(&self) -> &str {
        &self.inner.actor_project
    }
    #[getter]
    fn note(&self) -> Option<&str> {
        self.inner.note.as_deref()
    }
    #[getter]
    fn at(&self) -> DateTime<Utc> {
        self.inner.at.and_utc()
    }

    /// The node history text of this event.
    fn text(&self) -> String {
        self.inner.text()
    }

    fn __repr__(&self) -> String {
        format!("Event({:?})", self.inner.text())
    }
}

/// The policy: Ironic's defaults and the spec's maintenance rules,
/// overridden rule by rule by an oslo.policy file (YAML or JSON).
///
/// >>> Policy.from_text('"baremetal:node:maintenance:remove": "role:admin"').enforce_scope
/// True
#[pyclass(frozen, module = "nodemaint", name = "Policy", from_py_object)]
#[derive(Clone)]
pub struct PyPolicy {
    pub inner: Policy,
}

#[pymethods]
impl PyPolicy {
    /// The defaults; `enforce_scope` as oslo.policy's (`[oslo_policy]`).
    #[new]
    #[pyo3(signature = (*, enforce_scope=true))]
    fn new(enforce_scope: bool) -> Self {
        let mut inner = Policy::defaults();
        inner.enforce_scope = enforce_scope;
        PyPolicy { inner }
    }

    /// The defaults overridden by a policy file, as `nodemaint serve`
    /// loads it (`[oslo_policy] policy_file`).
    #[staticmethod]
    #[pyo3(signature = (path, *, enforce_scope=true))]
    fn load(py: Python<'_>, path: std::path::PathBuf, enforce_scope: bool) -> PyResult<Self> {
        let mut inner = Policy::load(&path).map_err(|e| errors::to_py(py, e))?;
        inner.enforce_scope = enforce_scope;
        Ok(PyPolicy { inner })
    }

    /// The defaults overridden by a policy file's text.
    #[staticmethod]
    #[pyo3(signature = (text, *, enforce_scope=true))]
    fn from_text(py: Python<'_>, text: &str, enforce_scope: bool) -> PyResult<Self> {
        let mut inner = Policy::defaults()
            .with_overrides(text)
            .map_err(|e| errors::exception(py, "ConfigError", format!("policy: {e}"), 500))?;
        inner.enforce_scope = enforce_scope;
        Ok(PyPolicy { inner })
    }

    #[getter]
    fn enforce_scope(&self) -> bool {
        self.inner.enforce_scope
    }

    /// Rules the file set under `baremetal:node:maintenance` that nodemaint
    /// does not define (they change nothing).
    #[getter]
    fn unknown_rules(&self) -> Vec<String> {
        self.inner.unknown_rules().to_vec()
    }

    /// Whether `rule` lets `caller` act on `node` (and `entry`, for the
    /// rules about one entry).
    #[pyo3(signature = (rule, caller, node, entry=None))]
    fn enforce(
        &self,
        rule: &str,
        caller: PyRef<'_, PyCaller>,
        node: PyRef<'_, PyNode>,
        entry: Option<PyRef<'_, PyEntry>>,
    ) -> bool {
        let target = match &entry {
            Some(e) => authority::entry_target(&node.inner, &e.inner),
            None => authority::node_target(&node.inner),
        };
        self.inner.enforce(rule, &caller.inner, &target)
    }
}

/// What a release call would answer: `allowed`, else the HTTP `status`
/// and the REST API's `message`. True in a boolean context when allowed.
/// The refusal is kept as the model's value and worded when asked.
#[pyclass(frozen, eq, module = "nodemaint", name = "Decision", from_py_object)]
#[derive(Clone, PartialEq, Eq)]
pub struct PyDecision {
    refusal: Option<authority::Rejected>,
}

impl PyDecision {
    fn of(decided: Result<(), authority::Rejected>) -> Self {
        PyDecision { refusal: decided.err() }
    }
}

#[pymethods]
impl PyDecision {
    #[getter]
    fn allowed(&self) -> bool {
        self.refusal.is_none()
    }

    #[getter]
    fn status(&self) -> Option<u16> {
        self.refusal.as_ref().map(authority::Rejected::http_status)
    }

    #[getter]
    fn message(&self) -> Option<String> {
        self.refusal.as_ref().map(ToString::to_string)
    }

    fn __bool__(&self) -> bool {
        self.refusal.is_none()
    }

    fn __repr__(&self) -> String {
        match &self.refusal {
            Some(r) => format!("Decision(allowed=False, status={}, message={:?})", r.http_status(), r.to_string()),
            None => "Decision(allowed=True)".to_owned(),
        }
    }
}

/// The policy to decide with: the one given, else the defaults (parsed once).
fn policy_or_defaults<'a>(policy: &'a Option<PyRef<'_, PyPolicy>>) -> &'a Policy {
    static DEFAULTS: OnceLock<Policy> = OnceLock::new();
    match policy {
        Some(p) => &p.inner,
        None => DEFAULTS.get_or_init(Policy::defaults),
    }
}

/// The caller's scope on the node (system > owner > lessee), or None when
/// the caller has none there (the node is not found for them).
#[pyfunction]
#[pyo3(signature = (caller, node, *, enforce_scope=true))]
pub fn derive_scope(caller: PyRef<'_, PyCaller>, node: PyRef<'_, PyNode>, enforce_scope: bool) -> Option<&'static str> {
    let n = &node.inner;
    authority::derive_scope(&caller.inner, n.owner.as_deref(), n.lessee.as_deref(), enforce_scope).map(Scope::as_str)
}

/// What `DELETE /v1/nodes/{node}/maintenance/{uuid}` answers for the
/// node's active `entry`: 404 when the caller may not see the node, 403
/// when the remove policy or the release floors refuse.
///
/// >>> release_decision(Caller.system("op", ["member"]), Node(), Entry("operator_hold", "owner", "a", "p")).allowed
/// True
#[pyfunction]
#[pyo3(signature = (caller, node, entry, policy=None))]
pub fn release_decision(
    caller: PyRef<'_, PyCaller>,
    node: PyRef<'_, PyNode>,
    entry: PyRef<'_, PyEntry>,
    policy: Option<PyRef<'_, PyPolicy>>,
) -> PyDecision {
    let policy = policy_or_defaults(&policy);
    PyDecision::of(authority::release_decision(&caller.inner, policy, &node.inner, node.ident(), &entry.inner))
}

/// What `DELETE /v1/nodes/{node}/maintenance` (release every entry, all
/// or nothing) answers: one 403 naming every entry that may not go.
#[pyfunction]
#[pyo3(signature = (caller, node, entries, policy=None))]
pub fn bulk_release_decision(
    caller: PyRef<'_, PyCaller>,
    node: PyRef<'_, PyNode>,
    entries: Vec<PyRef<'_, PyEntry>>,
    policy: Option<PyRef<'_, PyPolicy>>,
) -> PyDecision {
    let policy = policy_or_defaults(&policy);
    let entries: Vec<node_maintenance::Model> = entries.iter().map(|e| e.inner.clone()).collect();
    PyDecision::of(authority::bulk_release_decision(&caller.inner, policy, &node.inner, node.ident(), &entries))
}

/// [`release_decision`] for many `(caller, node, entry)` triples at once,
/// in one call (the policy given once).
#[pyfunction]
#[pyo3(signature = (items, policy=None))]
pub fn release_decisions(
    items: Vec<(PyRef<'_, PyCaller>, PyRef<'_, PyNode>, PyRef<'_, PyEntry>)>,
    policy: Option<PyRef<'_, PyPolicy>>,
) -> Vec<PyDecision> {
    let policy = policy_or_defaults(&policy);
    items
        .iter()
        .map(|(c, n, e)| PyDecision::of(authority::release_decision(&c.inner, policy, &n.inner, n.ident(), &e.inner)))
        .collect()
}

/// `entry` or `event` as `caller` may see it on `node`: identities above
/// the caller's scope replaced by `******`. NotFound when the caller has no
/// scope on the node.
#[pyfunction]
#[pyo3(signature = (item, caller, node, *, enforce_scope=true))]
pub fn mask<'py>(
    py: Python<'py>,
    item: &Bound<'py, PyAny>,
    caller: PyRef<'py, PyCaller>,
    node: PyRef<'py, PyNode>,
    enforce_scope: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let n = &node.inner;
    let reader = authority::derive_scope(&caller.inner, n.owner.as_deref(), n.lessee.as_deref(), enforce_scope)
        .ok_or_else(|| errors::rejected(py, authority::Rejected::NodeNotFound { node: node.ident().to_owned() }))?;
    if let Ok(entry) = item.cast::<PyEntry>() {
        let seen = EntryView::for_caller(&entry.get().inner, reader);
        let mut masked = entry.get().inner.clone();
        masked.asserted_by = seen.asserted_by;
        masked.asserted_by_project = seen.asserted_by_project;
        return Ok(Bound::new(py, PyEntry { inner: masked })?.into_any());
    }
    if let Ok(event) = item.cast::<PyEvent>() {
        let seen = event.get().inner.for_reader(reader, n.owner.as_deref(), n.lessee.as_deref());
        return Ok(Bound::new(py, PyEvent { inner: seen })?.into_any());
    }
    Err(PyTypeError::new_err(format!(
        "item must be an Entry or an Event, not {}",
        item.get_type().name().map(|n| n.to_string()).unwrap_or_default()
    )))
}

/// The deprecated `maintenance_reason` the entries give ("type: reason",
/// joined by "; ", in the order given), or None for no entries.
#[pyfunction]
pub fn synthesised_reason(entries: Vec<PyRef<'_, PyEntry>>) -> Option<String> {
    let entries: Vec<node_maintenance::Model> = entries.iter().map(|e| e.inner.clone()).collect();
    nodemaint::entity::synthesize_reason(&entries)
}

/// The registered maintenance types: `name`, `reserved` (never accepted
/// from the typed API: `legacy`, `fault`), `policy_only_release` (exempt
/// from the scope floors) and `one_per_node`.
#[pyfunction]
pub fn entry_types<'py>(py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
    REGISTRY
        .iter()
        .map(|t| {
            let d = PyDict::new(py);
            d.set_item("name", t.name)?;
            d.set_item("reserved", t.reserved())?;
            d.set_item("policy_only_release", t.policy_only_release())?;
            d.set_item("one_per_node", t.one_per_node())?;
            Ok(d)
        })
        .collect()
}

/// A scope argument, or the ValueError that names it.
pub fn parse_scope(text: &str) -> PyResult<Scope> {
    Scope::parse(text)
        .ok_or_else(|| PyValueError::new_err(format!("scope must be one of system, owner, lessee, not {text:?}")))
}

/// A time argument: a `datetime` (naive is UTC) or a string as the REST
/// API takes it (RFC 3339, or `+2h` from now); `what` names the argument.
pub fn time_arg(value: &Bound<'_, PyAny>, what: &str, now: NaiveDateTime) -> PyResult<NaiveDateTime> {
    let text = if value.is_instance_of::<PyString>() {
        value.extract::<String>()?
    } else if let Ok(aware) = value.extract::<DateTime<FixedOffset>>() {
        aware.to_rfc3339()
    } else if let Ok(naive) = value.extract::<NaiveDateTime>() {
        naive.and_utc().to_rfc3339()
    } else {
        let ty = value.get_type().name().map(|n| n.to_string()).unwrap_or_default();
        return Err(PyTypeError::new_err(format!("{what} must be a datetime or a string, not {ty}")));
    };
    authority::parse_time(&text, now, what).map_err(|refusal| PyValueError::new_err(refusal.to_string()))
}

/// Now, to the second, as the library stores times.
pub fn now() -> NaiveDateTime {
    use chrono::SubsecRound;
    Utc::now().naive_utc().trunc_subsecs(0)
}

/// A library view (serde) as Python objects: dicts, lists, strings.
pub fn to_python<'py, T: serde::Serialize>(py: Python<'py>, value: &T) -> PyResult<Bound<'py, PyAny>> {
    pythonize::pythonize(py, value).map_err(|e| errors::exception(py, "InternalError", e.to_string(), 500))
}

/// For `python/bench/decisions.py`'s breakdown: reads the items as
/// `release_decisions` does, and nothing else.
#[pyfunction]
pub fn _bench_extract(items: Vec<(PyRef<'_, PyCaller>, PyRef<'_, PyNode>, PyRef<'_, PyEntry>)>) -> usize {
    items.len()
}

/// For the same breakdown: reads and decides as `release_decisions` does,
/// without making the `Decision` objects (returns how many are allowed).
#[pyfunction]
#[pyo3(signature = (items, policy=None))]
pub fn _bench_decide(
    items: Vec<(PyRef<'_, PyCaller>, PyRef<'_, PyNode>, PyRef<'_, PyEntry>)>,
    policy: Option<PyRef<'_, PyPolicy>>,
) -> usize {
    let policy = policy_or_defaults(&policy);
    items
        .iter()
        .filter(|(c, n, e)| authority::release_decision(&c.inner, policy, &n.inner, n.ident(), &e.inner).is_ok())
        .count()
}
