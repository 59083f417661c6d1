//! The default rules: Ironic 39's own defaults for the rules it has
//! (`ironic/common/policy.py`), and the spec's new maintenance rules at the
//! same levels ("Security impact").

/// Rule names nodemaint enforces.
pub const NODE_GET: &str = "baremetal:node:get";
pub const NODE_LIST: &str = "baremetal:node:list";
pub const SET_MAINTENANCE: &str = "baremetal:node:set_maintenance";
pub const CLEAR_MAINTENANCE: &str = "baremetal:node:clear_maintenance";
pub const MAINTENANCE_GET: &str = "baremetal:node:maintenance:get";
pub const MAINTENANCE_ADD: &str = "baremetal:node:maintenance:add";
pub const MAINTENANCE_REMOVE: &str = "baremetal:node:maintenance:remove";
pub const HISTORY_GET: &str = "baremetal:node:history:get";

const SYSTEM_MEMBER: &str = "(role:member and system_scope:all) or rule:service_role";
const SYSTEM_READER: &str =
    "(role:reader and system_scope:all) or (role:service and system_scope:all) or rule:service_role";
const SYSTEM_SERVICE: &str = "role:service and system_scope:all";
/// Ironic's API_READER: any reader may list; what they see is filtered by scope.
const API_READER: &str = "role:reader";
const PROJECT_SERVICE: &str = "role:service and project_id:%(node.owner)s";
const PROJECT_READER: &str = "role:reader and (project_id:%(node.owner)s or project_id:%(node.lessee)s)";
const PROJECT_OWNER_MEMBER: &str = "role:member and project_id:%(node.owner)s";
const PROJECT_OWNER_READER: &str = "role:reader and project_id:%(node.owner)s";
const PROJECT_LESSEE_ADMIN: &str = "role:admin and project_id:%(node.lessee)s";
const PROJECT_LESSEE_MANAGER: &str = "role:manager and project_id:%(node.lessee)s";

fn any_of(parts: &[&str]) -> String {
    parts.iter().map(|p| format!("({p})")).collect::<Vec<_>>().join(" or ")
}

/// Ironic's SYSTEM_OR_PROJECT_READER.
pub(crate) fn system_or_project_reader() -> String {
    any_of(&[SYSTEM_READER, PROJECT_READER, PROJECT_SERVICE])
}

/// Ironic's SYSTEM_OR_OWNER_MEMBER_AND_LESSEE_ADMIN (set/clear maintenance).
pub(crate) fn system_or_owner_member_and_lessee_admin() -> String {
    any_of(&[
        SYSTEM_MEMBER,
        SYSTEM_SERVICE,
        PROJECT_OWNER_MEMBER,
        PROJECT_LESSEE_ADMIN,
        PROJECT_LESSEE_MANAGER,
        PROJECT_SERVICE,
    ])
}

/// Ironic's SYSTEM_OR_OWNER_READER (node history).
pub(crate) fn system_or_owner_reader() -> String {
    any_of(&[SYSTEM_READER, SYSTEM_SERVICE, PROJECT_OWNER_READER, PROJECT_SERVICE])
}

/// Every default, as (name, check string).
pub(crate) fn rules() -> Vec<(&'static str, String)> {
    vec![
        ("service_role", "role:service and project_name:%(config.service_project_name)s".to_owned()),
        ("admin_api", "role:admin or role:administrator".to_owned()),
        ("is_admin", "rule:admin_api".to_owned()),
        (NODE_GET, system_or_project_reader()),
        (NODE_LIST, API_READER.to_owned()),
        (SET_MAINTENANCE, system_or_owner_member_and_lessee_admin()),
        (CLEAR_MAINTENANCE, system_or_owner_member_and_lessee_admin()),
        (MAINTENANCE_GET, system_or_project_reader()),
        (MAINTENANCE_ADD, system_or_owner_member_and_lessee_admin()),
        (MAINTENANCE_REMOVE, system_or_owner_member_and_lessee_admin()),
        (HISTORY_GET, system_or_owner_reader()),
    ]
}
