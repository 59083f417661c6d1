//! The endpoints: each one reads the request, calls one library operation
//! and shapes the answer the way Ironic does at the negotiated version. No
//! authority decision is made here; the library makes them all.

use super::errors::ApiError;
use super::extract::{IronicPath, IronicQuery};
use super::version::{self, Version};
use super::{AppState, RequestCaller};
use axum::Extension;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use nodemaint::authority::WindowState;
use nodemaint::authority::parse_time;
use nodemaint::maintenance::{WindowDetail, WindowQuery};
use nodemaint::nodes::{NodeQuery, NodeView};
use nodemaint::{EntryView, NewEntry};
use nodemaint_runtime::py_json::py_json;
use nodemaint_runtime::sql::now_utc;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::collections::HashMap;

/// Ironic's `[api] max_limit`: the most nodes one page returns.
const MAX_LIMIT: u64 = 1000;

type ApiResult = Result<Response, ApiError>;

/// A JSON answer written as Ironic (Python's json.dumps) writes it.
fn json_response(status: StatusCode, value: &Value) -> Response {
    let mut response = (status, py_json(value)).into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// 202 with an empty body: the boolean endpoints' answer since Ironic's first API.
fn accepted() -> Response {
    StatusCode::ACCEPTED.into_response()
}

/// Where links point: `--public-endpoint`, else the address the client used.
fn base_url(state: &AppState, headers: &HeaderMap) -> String {
    if let Some(endpoint) = &state.public_endpoint {
        return endpoint.trim_end_matches('/').to_owned();
    }
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("localhost");
    format!("http://{host}")
}

fn links(base: &str, path: &str) -> Value {
    json!([{"href": format!("{base}/v1/{path}"), "rel": "self"}, {"href": format!("{base}/{path}"), "rel": "bookmark"}])
}

fn version_document(base: &str) -> Value {
    json!({
        "id": "v1",
        "links": [{"href": format!("{base}/v1/"), "rel": "self"}],
        "status": "CURRENT",
        "min_version": version::MIN.to_string(),
        "version": version::MAX.to_string(),
    })
}

/// `GET /`: version discovery, as Ironic answers it.
pub async fn root(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let base = base_url(&state, &headers);
    json_response(
        StatusCode::OK,
        &json!({
            "name": "OpenStack Ironic API",
            "description": "Ironic is an OpenStack project which enables the provision and management of baremetal machines.",
            "default_version": version_document(&base),
            "versions": [version_document(&base)],
        }),
    )
}

/// `GET /v1`: the v1 document; of Ironic's resources only nodes are served.
pub async fn v1(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let base = base_url(&state, &headers);
    json_response(
        StatusCode::OK,
        &json!({
            "id": "v1",
            "links": [
                {"href": format!("{base}/v1/"), "rel": "self"},
                {"href": "https://docs.openstack.org//ironic/latest/contributor//webapi.html", "rel": "describedby", "type": "text/html"},
            ],
            "media_types": {"base": "application/json", "type": "application/vnd.openstack.ironic.v1+json"},
            "nodes": links(&base, "nodes/"),
            "version": version_document(&base),
        }),
    )
}

/// How Ironic reads a node identifier at `version` (`get_rpc_node`): a
/// UUID is a UUID; from 1.5 a valid logical name is a name, anything else
/// a 400; below 1.5 anything else is a node that does not exist (404).
fn check_ident(ident: &str, version: Version) -> Result<(), ApiError> {
    use std::sync::LazyLock;
    // Ironic's own patterns (ironic/common/utils.py), anchored as Python's
    // `re.match(…$)` is: `$` also matches before one final newline.
    static LOGICAL: LazyLock<regex::Regex> =
        LazyLock::new(|| regex::Regex::new(r"(?i)^[A-Z0-9._~-]+\n?\z").expect("a valid pattern"));
    static HOSTNAME_SAFE: LazyLock<regex::Regex> = LazyLock::new(|| {
        regex::Regex::new(r"^[a-z0-9]([a-z0-9\-]{0,61}[a-z0-9])?(\.[a-z0-9\-_]{0,62}[a-z0-9])*\.?\n?\z")
            .expect("a valid pattern")
    });
    if uuid::Uuid::try_parse(ident).is_ok() {
        return Ok(());
    }
    // Ironic's route refuses what is neither, at every version, before any
    // version is chosen (the framework's 400, no version headers).
    if ident.chars().count() > 255 || !LOGICAL.is_match(ident) {
        return Err(ApiError::Http(StatusCode::BAD_REQUEST, format!("Expected UUID or name for node: {ident}")));
    }
    if version < version::NODE_NAMES {
        return Err(nodemaint::Error::node_not_found(ident).into());
    }
    if version < version::UNRESTRICTED_NAMES && !HOSTNAME_SAFE.is_match(ident) {
        return Err(ApiError::bad_request(format!("Expected a logical name or UUID but received {ident}.")));
    }
    Ok(())
}

/// The paths of the typed API do not exist below its microversion.
fn require_typed(version: Version) -> Result<(), ApiError> {
    if version < version::TYPED_MAINTENANCE {
        return Err(ApiError::not_found("The resource could not be found."));
    }
    Ok(())
}

/// A node's fields at `version`, in Ironic's order, with its links.
fn node_json(node: &NodeView, version: Version, base: &str, detail: bool) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("uuid".into(), json!(node.uuid));
    if detail {
        m.insert("created_at".into(), json!(node.created_at));
        m.insert("updated_at".into(), json!(node.updated_at));
        if version >= version::FAULT {
            m.insert("fault".into(), json!(node.fault));
        }
        if version >= version::LESSEE {
            m.insert("lessee".into(), json!(node.lessee));
        }
    }
    m.insert("maintenance".into(), json!(node.maintenance));
    if detail {
        m.insert("maintenance_reason".into(), json!(node.maintenance_reason));
    }
    if version >= version::NODE_NAMES {
        m.insert("name".into(), json!(node.name));
    }
    if detail {
        if version >= version::OWNER {
            m.insert("owner".into(), json!(node.owner));
        }
        m.insert("reservation".into(), json!(node.reservation));
    }
    m.insert("links".into(), links(base, &format!("nodes/{}", node.uuid.as_deref().unwrap_or_default())));
    m
}

/// Ironic 39's node fields, in its order. nodemaint serves those that
/// concern maintenance; `?fields=` may name any of these, and those
/// nodemaint does not serve are left out (a deliberate difference).
#[rustfmt::skip]
const IRONIC_NODE_FIELDS: [&str; 69] = [
    "uuid", "created_at", "updated_at", "automated_clean", "bios_interface", "boot_interface", "boot_mode",
    "clean_step", "conductor_group", "console_enabled", "console_interface", "disable_power_off",
    "deploy_interface", "deploy_step", "description", "driver", "driver_info", "driver_internal_info", "extra",
    "fault", "firmware_interface", "health", "inspection_finished_at", "inspection_started_at",
    "inspect_interface", "instance_info", "instance_name", "instance_uuid", "last_error", "lessee", "maintenance",
    "maintenance_reason", "management_interface", "name", "network_data", "network_interface", "owner",
    "parent_node", "power_interface", "power_state", "properties", "protected", "protected_reason",
    "provision_state", "provision_updated_at", "raid_config", "raid_interface", "rescue_interface", "reservation",
    "resource_class", "retired", "retired_reason", "secure_boot", "service_step", "shard", "storage_interface",
    "target_power_state", "target_provision_state", "target_raid_config", "traits", "vendor_interface", "links",
    "conductor", "allocation_uuid", "chassis_uuid", "ports", "states", "portgroups", "volume",
];

/// What `GET /v1/nodes` asks for when neither `fields` nor `detail` is
/// given (Ironic's `_DEFAULT_RETURN_FIELDS`), as its `next` link says.
const DEFAULT_LIST_FIELDS: &str = "instance_uuid,maintenance,power_state,provision_state,uuid,name";

/// The `fields` of a request, split as Ironic splits a list argument.
fn field_list(fields: Option<&str>) -> Vec<&str> {
    fields.unwrap_or_default().split(',').map(str::trim).filter(|f| !f.is_empty()).collect()
}

/// `?fields=a,b` (from 1.8; below it Ironic answers 406): only those
/// fields, plus the links.
fn select_fields(mut node: Map<String, Value>, fields: Option<&str>, version: Version) -> Result<Value, ApiError> {
    let Some(fields) = fields else { return Ok(Value::Object(node)) };
    if version < version::FIELDS {
        return Err(ApiError::Fault(StatusCode::NOT_ACCEPTABLE, "Request not acceptable.".into()));
    }
    let wanted = field_list(Some(fields));
    // Ironic answers an unknown field with a 500; nodemaint with a 400.
    if let Some(unknown) = wanted.iter().find(|f| !IRONIC_NODE_FIELDS.contains(f) || **f == "links") {
        return Err(ApiError::bad_request(format!("Field {unknown} is not a valid field.")));
    }
    node.retain(|k, _| k == "links" || wanted.contains(&k.as_str()));
    Ok(Value::Object(node))
}

#[derive(Debug, Deserialize)]
pub struct ListParams {
    limit: Option<String>,
    marker: Option<String>,
    maintenance: Option<String>,
    detail: Option<String>,
    fields: Option<String>,
    sort_key: Option<String>,
    sort_dir: Option<String>,
}

/// Node fields Ironic refuses to sort by (`invalid_sort_key_list`).
const UNSORTABLE: [&str; 12] = [
    "properties",
    "driver_info",
    "extra",
    "instance_info",
    "driver_internal_info",
    "clean_step",
    "deploy_step",
    "raid_config",
    "target_raid_config",
    "traits",
    "network_data",
    "service_step",
];

/// `sort_key` and `sort_dir` as Ironic checks them; nodemaint sorts by id
/// only (a deliberate difference: another key is refused, not ignored).
fn sort_order(key: Option<&str>, dir: Option<&str>) -> Result<bool, ApiError> {
    let descending = match dir.unwrap_or("asc") {
        "asc" => false,
        "desc" => true,
        other => {
            return Err(ApiError::bad_request(format!(
                "Invalid sort direction: {other}. Acceptable values are 'asc' or 'desc'"
            )));
        }
    };
    match key.unwrap_or("id") {
        "id" => Ok(descending),
        key if UNSORTABLE.contains(&key) => {
            Err(ApiError::bad_request(format!("The sort_key value {key} is an invalid field for sorting")))
        }
        key if IRONIC_NODE_FIELDS.contains(&key) => Err(ApiError::bad_request(format!(
            "The sort_key value \"{key}\" is an invalid field for sorting (nodemaint sorts nodes by id only)"
        ))),
        key => Err(ApiError::bad_request(format!("The sort_key value \"{key}\" is an invalid field for sorting"))),
    }
}

fn parse_bool(name: &str, text: &str) -> Result<bool, ApiError> {
    match text.to_ascii_lowercase().as_str() {
        "1" | "t" | "true" | "on" | "y" | "yes" => Ok(true),
        "0" | "f" | "false" | "off" | "n" | "no" => Ok(false),
        _ => Err(ApiError::bad_request(format!("Invalid value for {name}: '{text}'; expected true or false"))),
    }
}

fn parse_limit(text: Option<&str>) -> Result<u64, ApiError> {
    match text {
        None => Ok(MAX_LIMIT),
        Some(t) => match t.parse::<i64>() {
            Ok(n) if n <= 0 => Err(ApiError::bad_request("Limit must be positive")),
            Ok(n) => Ok((n as u64).min(MAX_LIMIT)),
            Err(_) => Err(ApiError::bad_request(format!("Expected an integer for limit: {t}"))),
        },
    }
}

/// `GET /v1/nodes` (`DETAIL = false`) and `GET /v1/nodes/detail` (`true`).
pub async fn list_nodes<const DETAIL: bool>(
    State(state): State<AppState>,
    Extension(version): Extension<Version>,
    Extension(caller): Extension<RequestCaller>,
    headers: HeaderMap,
    IronicQuery(params): IronicQuery<ListParams>,
) -> ApiResult {
    if let Some(marker) = params.marker.as_deref()
        && uuid::Uuid::try_parse(marker).is_err()
    {
        return Err(ApiError::bad_request(format!("Expected UUID for marker: {marker}")));
    }
    // /detail takes no `fields`; `detail` itself is a parameter from 1.43.
    if DETAIL && params.fields.is_some() {
        return Err(ApiError::bad_request("Unexpected arguments: fields"));
    }
    let maintenance = params.maintenance.as_deref().map(|m| parse_bool("maintenance", m)).transpose()?;
    let descending = sort_order(params.sort_key.as_deref(), params.sort_dir.as_deref())?;
    let query = NodeQuery {
        limit: parse_limit(params.limit.as_deref())?,
        marker: params.marker.clone(),
        maintenance,
        descending,
    };
    let detail_param = params.detail.as_deref().map(|d| parse_bool("detail", d)).transpose()?;
    let py_bool = |b: bool| if b { "True" } else { "False" };
    if let Some(asked) = detail_param
        && version < version::DETAIL_PARAMETER
    {
        return Err(ApiError::bad_request(format!("Invalid query parameter ?detail={} received.", py_bool(asked))));
    }
    // With `fields`, any field may be asked for, as from /detail.
    let detail = DETAIL || detail_param.unwrap_or(false) || params.fields.is_some();
    let base = base_url(&state, &headers);
    let found = state.svc.nodes(&caller.0, &query).await?;
    let nodes = found
        .iter()
        .map(|n| select_fields(node_json(n, version, &base, detail), params.fields.as_deref(), version))
        .collect::<Result<Vec<_>, _>>()?;
    let mut body = Map::new();
    body.insert("nodes".into(), Value::Array(nodes));
    if found.len() as u64 == query.limit
        && let Some(last) = found.last().and_then(|n| n.uuid.as_deref())
    {
        // Ironic's next link (collection.get_next): the sort, the filters it
        // keeps, `fields`, then limit and marker, as Python formats them.
        let mut next = format!(
            "{base}/v1/{}?sort_key={}&sort_dir={}&",
            if DETAIL { "nodes/detail" } else { "nodes" },
            params.sort_key.as_deref().unwrap_or("id"),
            params.sort_dir.as_deref().unwrap_or("asc")
        );
        if maintenance == Some(true) {
            next.push_str("maintenance=True&");
        }
        if let Some(detail) = detail_param {
            next.push_str(&format!("detail={}&", py_bool(detail)));
        }
        let fields = field_list(params.fields.as_deref());
        if !fields.is_empty() {
            next.push_str(&format!("fields={}&", fields.join(",")));
        } else if !DETAIL && !detail_param.unwrap_or(false) {
            next.push_str(&format!("fields={DEFAULT_LIST_FIELDS}&"));
        }
        next.push_str(&format!("limit={}&marker={last}", query.limit));
        body.insert("next".into(), json!(next));
    }
    Ok(json_response(StatusCode::OK, &Value::Object(body)))
}

/// `GET /v1/nodes/{node_ident}`.
pub async fn show_node(
    State(state): State<AppState>,
    Extension(version): Extension<Version>,
    Extension(caller): Extension<RequestCaller>,
    IronicPath(ident): IronicPath<String>,
    headers: HeaderMap,
    IronicQuery(params): IronicQuery<HashMap<String, String>>,
) -> ApiResult {
    check_ident(&ident, version)?;
    let node = state.svc.node(&caller.0, &ident).await?;
    let body = select_fields(
        node_json(&node, version, &base_url(&state, &headers), true),
        params.get("fields").map(String::as_str),
        version,
    )?;
    Ok(json_response(StatusCode::OK, &body))
}

/// A request body as a JSON object: empty means `{}`; keys outside `allowed`
/// are refused as Ironic refuses them.
///
/// Walked by hand rather than through serde's `deny_unknown_fields`: Ironic
/// names every unexpected key at once and words type errors its own way,
/// where serde stops at the first and appends positions to its text.
fn body_object(body: &Bytes, allowed: &[&str]) -> Result<Map<String, Value>, ApiError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Map::new());
    }
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("The request body is not valid JSON ({e}); send a JSON object")))?;
    let Value::Object(map) = value else {
        return Err(ApiError::bad_request("The request body must be a JSON object"));
    };
    let unexpected: Vec<&str> = map.keys().map(String::as_str).filter(|k| !allowed.contains(k)).collect();
    if !unexpected.is_empty() {
        return Err(ApiError::bad_request(format!("Unexpected arguments: {}", unexpected.join(", "))));
    }
    Ok(map)
}

/// An optional string field: absent or null is `None`.
fn optional_string(map: &Map<String, Value>, key: &str) -> Result<Option<String>, ApiError> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(ApiError::bad_request(format!("Expected string for {key}: {other}"))),
    }
}

/// The fields 1.117 added to an entry; below it an entry is 1.116's object.
const WINDOW_FIELDS: [&str; 5] = ["state", "starts_at", "ends_at", "releasable", "releasable_reason"];

/// An entry as the API shows it at `version`, its links through the node's
/// uuid (as Ironic's links are), so a client can follow them whatever
/// name the request used.
fn entry_json(entry: &EntryView, base: &str, version: Version) -> Value {
    let mut value = serde_json::to_value(entry).unwrap_or_else(|_| json!({}));
    if let Value::Object(m) = &mut value {
        if version < version::WINDOWS {
            m.retain(|k, _| !WINDOW_FIELDS.contains(&k.as_str()));
        }
        let node = entry.node_uuid.as_deref().unwrap_or_default();
        m.insert("links".into(), links(base, &format!("nodes/{node}/maintenance/{}", entry.uuid)));
    }
    value
}

/// A time field (1.117): RFC 3339; absent or null is `None`.
fn optional_time(
    map: &Map<String, Value>,
    key: &str,
    now: chrono::NaiveDateTime,
) -> Result<Option<chrono::NaiveDateTime>, ApiError> {
    optional_string(map, key)?.map(|t| parse_time(&t, now, key).map_err(ApiError::from)).transpose()
}

/// `PUT /v1/nodes/{node_ident}/maintenance` `{"reason": …}` (all versions):
/// the node's legacy entry, created or its reason updated; 202, no body.
pub async fn legacy_set(
    State(state): State<AppState>,
    Extension(version): Extension<Version>,
    Extension(caller): Extension<RequestCaller>,
    IronicPath(ident): IronicPath<String>,
    IronicQuery(params): IronicQuery<HashMap<String, String>>,
    body: Bytes,
) -> ApiResult {
    // Ironic reads the arguments before it looks for the node.
    let map = body_object(&body, &["reason"])?;
    check_ident(&ident, version)?;
    // Ironic also takes the reason as a query parameter.
    let reason = optional_string(&map, "reason")?.or_else(|| params.get("reason").cloned());
    state.svc.legacy_set(&caller.0, &ident, reason).await?;
    Ok(accepted())
}

/// `DELETE /v1/nodes/{node_ident}/maintenance` (all versions): release
/// every entry, all or nothing; 202 as before 1.116, 204 from it.
pub async fn release_all(
    State(state): State<AppState>,
    Extension(version): Extension<Version>,
    Extension(caller): Extension<RequestCaller>,
    IronicPath(ident): IronicPath<String>,
) -> ApiResult {
    check_ident(&ident, version)?;
    state.svc.release_all(&caller.0, &ident).await?;
    Ok(if version >= version::TYPED_MAINTENANCE { StatusCode::NO_CONTENT.into_response() } else { accepted() })
}

/// `GET /v1/nodes/{node_ident}/maintenance` (1.116).
pub async fn list_entries(
    State(state): State<AppState>,
    Extension(version): Extension<Version>,
    Extension(caller): Extension<RequestCaller>,
    IronicPath(ident): IronicPath<String>,
    headers: HeaderMap,
) -> ApiResult {
    if version < version::TYPED_MAINTENANCE {
        return Ok(legacy_methods_only());
    }
    check_ident(&ident, version)?;
    let entries = state.svc.list(&caller.0, &ident).await?;
    let base = base_url(&state, &headers);
    // Scheduled windows are not entries yet: 1.116 never shows them.
    let items: Vec<Value> = entries
        .iter()
        .filter(|e| version >= version::WINDOWS || e.state == WindowState::Active)
        .map(|e| entry_json(e, &base, version))
        .collect();
    Ok(json_response(StatusCode::OK, &json!({"maintenance": items})))
}

/// `POST /v1/nodes/{node_ident}/maintenance` (1.116): 201 with the entry.
pub async fn add_entry(
    State(state): State<AppState>,
    Extension(version): Extension<Version>,
    Extension(caller): Extension<RequestCaller>,
    IronicPath(ident): IronicPath<String>,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult {
    if version < version::TYPED_MAINTENANCE {
        return Ok(legacy_methods_only());
    }
    check_ident(&ident, version)?;
    let allowed: &[&str] = if version >= version::WINDOWS {
        &["type", "reason", "extra", "starts_at", "ends_at"]
    } else {
        &["type", "reason", "extra"]
    };
    let map = body_object(&body, allowed)?;
    let entry_type =
        optional_string(&map, "type")?.ok_or_else(|| ApiError::bad_request("Missing mandatory parameter: type"))?;
    let extra = match map.get("extra") {
        None | Some(Value::Null) => None,
        Some(value) => Some(value.clone()),
    };
    let now = now_utc();
    let request = NewEntry {
        entry_type,
        reason: optional_string(&map, "reason")?,
        extra,
        starts_at: optional_time(&map, "starts_at", now)?,
        ends_at: optional_time(&map, "ends_at", now)?,
    };
    let created = state.svc.add(&caller.0, &ident, request).await?;
    Ok(json_response(StatusCode::CREATED, &entry_json(&created, &base_url(&state, &headers), version)))
}

/// `DELETE /v1/nodes/{node_ident}/maintenance/{entry_uuid}` (1.116): 204.
pub async fn release_entry(
    State(state): State<AppState>,
    Extension(version): Extension<Version>,
    Extension(caller): Extension<RequestCaller>,
    IronicPath((ident, entry_uuid)): IronicPath<(String, String)>,
) -> ApiResult {
    require_typed(version)?;
    check_ident(&ident, version)?;
    // Below 1.117 a scheduled window does not exist, so it cannot be cancelled.
    if version >= version::WINDOWS {
        state.svc.release(&caller.0, &ident, &entry_uuid).await?;
    } else {
        state.svc.release_active(&caller.0, &ident, &entry_uuid).await?;
    }
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// `PATCH /v1/nodes/{node_ident}/maintenance/{entry_uuid}` (1.117)
/// `{"ends_at": …}`: extends a window; 200 with it.
pub async fn extend_entry(
    State(state): State<AppState>,
    Extension(version): Extension<Version>,
    Extension(caller): Extension<RequestCaller>,
    IronicPath((ident, entry_uuid)): IronicPath<(String, String)>,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult {
    require_windows(version)?;
    check_ident(&ident, version)?;
    let map = body_object(&body, &["ends_at"])?;
    let ends_at = optional_time(&map, "ends_at", now_utc())?
        .ok_or_else(|| ApiError::bad_request("Missing mandatory parameter: ends_at"))?;
    let extended = state.svc.extend(&caller.0, &ident, &entry_uuid, ends_at).await?;
    Ok(json_response(StatusCode::OK, &entry_json(&extended, &base_url(&state, &headers), version)))
}

#[derive(Debug, Deserialize)]
pub struct WindowParams {
    state: Option<String>,
    since: Option<String>,
    limit: Option<String>,
    marker: Option<String>,
}

/// `GET /v1/maintenance?state=…&since=…&limit=…&marker=…` (1.117): every
/// window the caller may see, paged; `next` links the following page.
pub async fn list_windows(
    State(state): State<AppState>,
    Extension(version): Extension<Version>,
    Extension(caller): Extension<RequestCaller>,
    headers: HeaderMap,
    IronicQuery(params): IronicQuery<WindowParams>,
) -> ApiResult {
    require_windows(version)?;
    let query = WindowQuery {
        states: params
            .state
            .as_deref()
            .map(|s| s.split(',').filter(|s| !s.trim().is_empty()).map(str::parse).collect::<Result<_, _>>())
            .transpose()?
            .unwrap_or_default(),
        since: params.since.as_deref().map(|t| parse_time(t, now_utc(), "since")).transpose()?,
        limit: parse_limit(params.limit.as_deref())?,
        marker: params.marker.clone(),
    };
    let rows = state.svc.windows(&caller.0, &query).await?;
    let base = base_url(&state, &headers);
    let mut body = Map::new();
    let items: Vec<Value> = rows
        .iter()
        .map(|row| {
            let mut value = serde_json::to_value(row).unwrap_or_else(|_| json!({}));
            if let (Value::Object(m), Some(node)) = (&mut value, row.node_uuid.as_deref())
                && let WindowDetail::Entry(e) = &row.window
            {
                m.insert("links".into(), links(&base, &format!("nodes/{node}/maintenance/{}", e.uuid)));
            }
            value
        })
        .collect();
    body.insert("windows".into(), Value::Array(items));
    if rows.len() as u64 == query.limit
        && let Some(last) = rows.last()
    {
        // Every value encoded, and a relative `since` carried as the time it
        // meant for the first page, so every page reads the same window.
        let mut args = url::form_urlencoded::Serializer::new(String::new());
        args.append_pair("limit", &query.limit.to_string()).append_pair("marker", &last.marker);
        if let Some(states) = &params.state {
            args.append_pair("state", states);
        }
        if let Some(since) = query.since {
            args.append_pair("since", &format!("{}Z", since.format("%Y-%m-%dT%H:%M:%S")));
        }
        body.insert("next".into(), json!(format!("{base}/v1/maintenance?{}", args.finish())));
    }
    Ok(json_response(StatusCode::OK, &Value::Object(body)))
}

/// The paths of maintenance windows do not exist below 1.117.
fn require_windows(version: Version) -> Result<(), ApiError> {
    if version < version::WINDOWS {
        return Err(ApiError::not_found("The resource could not be found."));
    }
    Ok(())
}

/// Paths nothing is served at: the web framework's 404, as Ironic's.
pub async fn not_found() -> ApiError {
    ApiError::Http(StatusCode::NOT_FOUND, String::new())
}

/// A known path with a method it does not take: the framework's 405.
pub async fn method_not_allowed() -> ApiError {
    ApiError::Http(StatusCode::METHOD_NOT_ALLOWED, String::new())
}

/// `PATCH /v1/nodes`: Ironic reads the missing node as a missing argument.
pub async fn patch_without_node() -> ApiError {
    ApiError::bad_request("Missing mandatory parameter: node_ident")
}

/// The maintenance path's methods below 1.116, where it has only the
/// boolean's PUT and DELETE: anything else is the framework's 405.
fn legacy_methods_only() -> Response {
    let mut response = ApiError::Http(StatusCode::METHOD_NOT_ALLOWED, String::new()).into_response();
    response.headers_mut().insert(header::ALLOW, HeaderValue::from_static("DELETE, PUT"));
    response
}
