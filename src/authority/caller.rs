//! Who is asking: the credentials an API request carries (as
//! keystonemiddleware leaves them) or the CLI's `--user/--project/--roles`.
//! Pure data; the decisions made from it live in `scope`, `release`,
//! `masking` and `policy`.

use serde::Serialize;

/// The single logical identity the conductor uses for `fault` entries.
pub(crate) const CONDUCTOR_IDENTITY: &str = "ironic-conductor";

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Caller {
    pub user_id: String,
    /// The token's project; `None` for a system-scoped token.
    pub project_id: Option<String>,
    pub project_name: Option<String>,
    /// Roles, lower-case, with keystone's default implied roles added
    /// (admin ⇒ member ⇒ reader, manager ⇒ member).
    pub roles: Vec<String>,
    /// A system-scoped token (`OpenStack-System-Scope: all`).
    pub system_scope: bool,
    /// The request this call belongs to (the API's `Openstack-Request-Id`):
    /// what a notification's `_context_request_id` says. No bearing on
    /// authority.
    pub request_id: Option<String>,
}

/// The user id of [`Caller::noauth`].
pub const NOAUTH_USER: &str = "noauth";

/// Keystone's default role hierarchy: a token lists the implied roles too.
pub(crate) fn with_implied_roles<I: IntoIterator<Item = S>, S: AsRef<str>>(roles: I) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |r: &str| {
        if !out.iter().any(|have| have == r) {
            out.push(r.to_owned());
        }
    };
    for role in roles {
        let role = role.as_ref().trim().to_ascii_lowercase();
        if role.is_empty() {
            continue;
        }
        push(&role);
        match role.as_str() {
            "admin" => {
                push("manager");
                push("member");
                push("reader");
            }
            "manager" => {
                push("member");
                push("reader");
            }
            "member" => push("reader"),
            _ => {}
        }
    }
    out
}

impl Caller {
    /// A system-scoped caller (an operator with a system token).
    pub fn system(user_id: impl Into<String>, roles: &[&str]) -> Caller {
        Caller {
            user_id: user_id.into(),
            project_id: None,
            project_name: None,
            roles: with_implied_roles(roles),
            system_scope: true,
            request_id: None,
        }
    }

    /// A project-scoped caller.
    pub fn project(user_id: impl Into<String>, project_id: impl Into<String>, roles: &[&str]) -> Caller {
        Caller {
            user_id: user_id.into(),
            project_id: Some(project_id.into()),
            project_name: None,
            roles: with_implied_roles(roles),
            system_scope: false,
            request_id: None,
        }
    }

    /// The caller of every request under `--auth-strategy noauth`: a
    /// system admin named `noauth` (in history and `asserted_by`).
    pub fn noauth() -> Caller {
        Caller::system(NOAUTH_USER, &["admin"])
    }

    /// Whether this is [`Caller::noauth`]: Ironic's noauth requests carry
    /// no identity, so their notifications' context names none either.
    pub fn is_noauth(&self) -> bool {
        self.user_id == NOAUTH_USER && self.system_scope && self.project_id.is_none()
    }

    /// The conductor's service identity: system scope, empty project.
    pub fn conductor() -> Caller {
        Caller::system(CONDUCTOR_IDENTITY, &["admin", "service"])
    }

    /// This caller, in the request `request_id`.
    pub fn in_request(mut self, request_id: impl Into<String>) -> Caller {
        self.request_id = Some(request_id.into());
        self
    }

    pub fn has_role(&self, role: &str) -> bool {
        self.roles.iter().any(|r| r.eq_ignore_ascii_case(role))
    }

    /// The project recorded as `asserted_by_project`: empty for system tokens.
    pub fn project_or_empty(&self) -> &str {
        self.project_id.as_deref().unwrap_or("")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admin_implies_member_and_reader() {
        assert_eq!(with_implied_roles(["Admin"]), ["admin", "manager", "member", "reader"]);
        assert_eq!(with_implied_roles(["member", "reader"]), ["member", "reader"]);
        assert_eq!(with_implied_roles(["observer", ""]), ["observer"]);
    }
}
