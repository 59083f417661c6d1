//! One notification as oslo.messaging's `messagingv2` driver puts it on
//! the wire: the message (`message_id`, `publisher_id`, `event_type`,
//! `priority`, `payload`, `timestamp`, `_unique_id` and the request
//! context as `_context_*` keys), serialised to a string inside the 2.0
//! envelope `{"oslo.version": "2.0", "oslo.message": "<the message>"}`.

use super::settings::Level;
use crate::authority::caller::Caller;
use chrono::NaiveDateTime;
use serde_json::{Map, Value, json};

/// The request a notification is about, as oslo.context's `to_dict` and
/// Ironic's `RequestContext` put it in the message.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestContext {
    pub user: Option<String>,
    pub project: Option<String>,
    pub roles: Vec<String>,
    pub system_scope: Option<String>,
    pub request_id: Option<String>,
    pub global_request_id: Option<String>,
}

impl RequestContext {
    /// The context of `caller`'s request. A noauth request's has no
    /// identity, as Ironic's has none (no user, project, roles or scope).
    pub fn of(caller: &Caller) -> RequestContext {
        if caller.is_noauth() {
            return RequestContext { request_id: caller.request_id.clone(), ..RequestContext::default() };
        }
        RequestContext {
            user: Some(caller.user_id.clone()).filter(|u| !u.is_empty()),
            project: caller.project_id.clone(),
            roles: caller.roles.clone(),
            system_scope: caller.system_scope.then(|| "all".to_owned()),
            request_id: caller.request_id.clone(),
            global_request_id: None,
        }
    }

    /// The `_context_*` keys, in oslo.context's order. The token and its
    /// details are never put on the bus (`null`): Ironic does send the
    /// caller's token there, which a listener has no use for and should
    /// never hold.
    fn write(&self, message: &mut Map<String, Value>) {
        let dash = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".to_owned());
        let identity = format!("{} {} - - -", dash(&self.user), dash(&self.project));
        let keys = [
            ("user", json!(self.user)),
            ("project_id", json!(self.project)),
            ("system_scope", json!(self.system_scope)),
            ("project", json!(self.project)),
            ("domain", Value::Null),
            ("user_domain", Value::Null),
            ("project_domain", Value::Null),
            // Ironic 39's API leaves oslo.context's `is_admin` false (seen
            // in its notifications under noauth; its policy checks roles).
            ("is_admin", json!(false)),
            ("read_only", json!(false)),
            ("show_deleted", json!(false)),
            ("auth_token", Value::Null),
            ("request_id", json!(self.request_id)),
            ("global_request_id", json!(self.global_request_id)),
            ("resource_uuid", Value::Null),
            ("roles", json!(self.roles)),
            ("user_identity", json!(identity)),
            ("is_admin_project", json!(true)),
            ("auth_token_info", Value::Null),
        ];
        for (key, value) in keys {
            message.insert(format!("_context_{key}"), value);
        }
    }
}

/// A notification, ready to be stored and sent.
#[derive(Debug, Clone, PartialEq)]
pub struct Notification {
    /// Stable across resends: a listener drops a duplicate by it.
    pub message_id: String,
    pub event_type: String,
    pub level: Level,
    /// The versioned object (`ironic_object.name`, `.namespace`, `.version`, `.data`).
    pub payload: Value,
    pub at: NaiveDateTime,
    pub context: RequestContext,
}

impl Notification {
    /// The message, serialised, as it goes inside the envelope.
    pub fn message(&self, publisher_id: &str) -> String {
        let mut message = Map::new();
        message.insert("message_id".into(), json!(self.message_id));
        message.insert("publisher_id".into(), json!(publisher_id));
        message.insert("event_type".into(), json!(self.event_type));
        message.insert("priority".into(), json!(self.level.priority()));
        message.insert("payload".into(), self.payload.clone());
        message.insert("timestamp".into(), json!(python_timestamp(self.at)));
        self.context.write(&mut message);
        // oslo.messaging's amqp layer adds a random id of its own to each
        // message it sends; a resend of this one keeps it too.
        message.insert("_unique_id".into(), json!(self.message_id.replace('-', "")));
        Value::Object(message).to_string()
    }
}

/// The envelope around a stored message: the body published to the broker.
pub fn envelope(message: &str) -> String {
    json!({"oslo.version": "2.0", "oslo.message": message}).to_string()
}

/// `str(datetime)` in Python, as oslo.messaging writes `timestamp`:
/// `YYYY-MM-DD HH:MM:SS.ffffff`, the fraction left out when it is zero.
pub fn python_timestamp(at: NaiveDateTime) -> String {
    use chrono::Timelike;
    if at.nanosecond() / 1000 == 0 {
        at.format("%Y-%m-%d %H:%M:%S").to_string()
    } else {
        at.format("%Y-%m-%d %H:%M:%S%.6f").to_string()
    }
}

/// A time as oslo.versionedobjects' `DateTimeField` serialises it (UTC,
/// whole seconds, `Z`): `2026-12-07T10:36:41Z`, as Ironic 39's payloads
/// show `created_at` and `updated_at`.
pub fn isotime(at: NaiveDateTime) -> String {
    at.format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// A versioned object as oslo.versionedobjects serialises it (Ironic's
/// namespace; no `changes`: Ironic resets them before it sends).
pub fn versioned_object(name: &str, version: &str, data: Value) -> Value {
    json!({
        "ironic_object.name": name,
        "ironic_object.namespace": "ironic",
        "ironic_object.version": version,
        "ironic_object.data": data,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> NaiveDateTime {
        NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S%.f").unwrap()
    }

    #[test]
    fn timestamps_are_pythons_str_of_a_datetime() {
        assert_eq!(python_timestamp(at("2026-12-07 08:30:01.000250")), "2026-12-07 08:30:01.000250");
        assert_eq!(python_timestamp(at("2026-12-07 08:30:01.0")), "2026-12-07 08:30:01");
        assert_eq!(isotime(at("2026-12-07 10:36:41.258443")), "2026-12-07T10:36:41Z");
    }

    #[test]
    fn the_message_is_a_string_inside_the_2_0_envelope() {
        let caller = Caller::project("u1", "p1", &["member"]).in_request("req-1");
        let n = Notification {
            message_id: "0d6c6e0e-5a0e-4e8e-9a51-3c0f6a3b9a11".into(),
            event_type: "baremetal.node.maintenance_set.start".into(),
            level: Level::Info,
            payload: versioned_object("NodePayload", "1.17", json!({"uuid": "n1"})),
            at: at("2026-12-07 08:30:01.5"),
            context: RequestContext::of(&caller),
        };
        let body: Value = serde_json::from_str(&envelope(&n.message("ironic-api.h"))).unwrap();
        assert_eq!(body["oslo.version"], "2.0");
        let inner: Value = serde_json::from_str(body["oslo.message"].as_str().unwrap()).unwrap();
        assert_eq!(inner["publisher_id"], "ironic-api.h");
        assert_eq!(inner["priority"], "INFO");
        assert_eq!(inner["timestamp"], "2026-12-07 08:30:01.500000");
        assert_eq!(inner["payload"]["ironic_object.version"], "1.17");
        assert_eq!(inner["_context_request_id"], "req-1");
        assert_eq!(inner["_context_project_id"], "p1");
        assert_eq!(inner["_context_roles"], json!(["member", "reader"]));
        assert_eq!(inner["_context_auth_token"], Value::Null);
        assert_eq!(inner["_unique_id"], "0d6c6e0e5a0e4e8e9a513c0f6a3b9a11");
    }
}
