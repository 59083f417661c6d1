//! Scope derivation (node maintenance spec, "Scoping"): the scope a caller
//! holds on one node is derived from its credentials, never requested.
//!
//! - system: a system-scoped token, or a project-scoped `admin` when scope
//!   is not enforced (`enforce_scope = false`), so such deployments keep full
//!   authority;
//! - owner: the caller's project is `node.owner` (owner wins when the
//!   project is both owner and lessee);
//! - lessee: the caller's project is `node.lessee`;
//! - none: the node is hidden from the caller (the API answers 404).
//!
//! This is code, not policy: a policy file cannot widen it, which is what
//! keeps the release floors floors.

use crate::authority::caller::Caller;
use nodemaint_entity::Scope;

/// Whether `caller` passes the system-level admin check: a system-scoped
/// token; or, where scope is not enforced (the legacy model, in which an
/// admin anywhere is the cloud's admin, as Ironic's deprecated `is_admin`
/// rules treat it), a token with the admin role. The policy engine answers
/// `system_scope:all` from this same function, so scope derivation and
/// policy agree in both modes.
pub fn has_system_authority(caller: &Caller, enforce_scope: bool) -> bool {
    caller.system_scope || (!enforce_scope && caller.has_role("admin"))
}

/// The scope `caller` holds on a node with this owner and lessee.
pub fn derive_scope(caller: &Caller, owner: Option<&str>, lessee: Option<&str>, enforce_scope: bool) -> Option<Scope> {
    if has_system_authority(caller, enforce_scope) {
        return Some(Scope::System);
    }
    let project = caller.project_id.as_deref().filter(|p| !p.is_empty())?;
    if owner == Some(project) {
        Some(Scope::Owner)
    } else if lessee == Some(project) {
        Some(Scope::Lessee)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scope_follows_the_spec() {
        let sys = Caller::system("op", &["admin"]);
        let owner = Caller::project("u", "p-own", &["member"]);
        let lessee = Caller::project("u", "p-les", &["member"]);
        let both = Caller::project("u", "p-both", &["member"]);
        let stranger = Caller::project("u", "p-x", &["admin"]);
        let (o, l) = (Some("p-own"), Some("p-les"));
        assert_eq!(derive_scope(&sys, o, l, true), Some(Scope::System));
        assert_eq!(derive_scope(&owner, o, l, true), Some(Scope::Owner));
        assert_eq!(derive_scope(&lessee, o, l, true), Some(Scope::Lessee));
        assert_eq!(derive_scope(&both, Some("p-both"), Some("p-both"), true), Some(Scope::Owner));
        assert_eq!(derive_scope(&stranger, o, l, true), None, "a project admin of another project sees nothing");
        assert_eq!(
            derive_scope(&stranger, o, l, false),
            Some(Scope::System),
            "enforce_scope = false keeps admins whole"
        );
        assert_eq!(derive_scope(&owner, None, None, true), None);
    }
}
