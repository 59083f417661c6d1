//! Masking (node maintenance spec, "REST API impact"): on entries whose
//! scope strictly outranks the caller's, the asserter fields are hidden, so
//! a lessee sees that a system hold exists, and why, but not who set it.
//!
//! History shows the same identities, so it hides the same ones ("lessees
//! cannot enumerate operator identities"): in a maintenance event, the
//! entry's asserter when the entry's scope outranks the caller's, and the
//! actor (the `user` and `project` columns and the text's "by …") when the
//! actor's scope does. An assert's actor is the asserter, at the entry's
//! scope. Any other actor's scope is not recorded, so it is read from its
//! project: none (a system token, the conductor, a tool) is system, the
//! node's owner or lessee is that scope, and any other project, which could
//! only act with system authority or under a former owner or lease, is
//! taken as system: masking errs toward hiding.
//!
//! All of it is decided from an event's typed fields ([`event_masks`]), and
//! a masked event's text is rendered again with the hidden fields replaced
//! (`MaintenanceEvent::masked`), never cut out of the stored text: no id or
//! reason can move a mask.

use nodemaint_entity::Scope;

/// What masked fields show.
pub const MASK: &str = "******";

/// Whether an entry at `entry_scope` is masked for a caller at `caller_scope`.
pub fn is_masked(caller_scope: Scope, entry_scope: Scope) -> bool {
    entry_scope > caller_scope
}

/// The scope an event's actor acted at, from its project (see the module doc).
pub(crate) fn actor_scope(project: Option<&str>, owner: Option<&str>, lessee: Option<&str>) -> Scope {
    match project.filter(|p| !p.is_empty()) {
        Some(p) if owner == Some(p) => Scope::Owner,
        Some(p) if lessee == Some(p) => Scope::Lessee,
        _ => Scope::System,
    }
}

/// Which identities of a maintenance event a reader at `reader` may not
/// see: `(asserter, actor)`. The asserter is the entry's, at its scope; the
/// actor acted at the entry's scope when it is the asserter (`by_asserter`),
/// else at the scope its project gives it on the node ([`actor_scope`]).
pub(crate) fn event_masks(
    reader: Scope,
    entry_scope: Scope,
    by_asserter: bool,
    actor_project: Option<&str>,
    owner: Option<&str>,
    lessee: Option<&str>,
) -> (bool, bool) {
    let actor = if by_asserter { entry_scope } else { actor_scope(actor_project, owner, lessee) };
    (is_masked(reader, entry_scope), is_masked(reader, actor))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_asserts_actor_is_masked_at_the_entrys_scope_any_other_at_its_projects() {
        let (o, l) = (Some("own"), Some("les"));
        assert_eq!(event_masks(Scope::Lessee, Scope::System, true, Some("les"), o, l), (true, true));
        assert_eq!(event_masks(Scope::Lessee, Scope::System, false, Some("les"), o, l), (true, false));
        assert_eq!(event_masks(Scope::Owner, Scope::Lessee, false, None, o, l), (false, true));
        assert_eq!(event_masks(Scope::System, Scope::System, false, None, o, l), (false, false));
    }

    #[test]
    fn an_actors_scope_comes_from_its_project() {
        let (o, l) = (Some("own"), Some("les"));
        assert_eq!(actor_scope(None, o, l), Scope::System);
        assert_eq!(actor_scope(Some(""), o, l), Scope::System);
        assert_eq!(actor_scope(Some("own"), o, l), Scope::Owner);
        assert_eq!(actor_scope(Some("les"), o, l), Scope::Lessee);
        assert_eq!(actor_scope(Some("former-lessee"), o, l), Scope::System, "unknown projects err toward hiding");
    }

    #[test]
    fn only_strictly_higher_scopes_are_masked() {
        assert!(is_masked(Scope::Lessee, Scope::System));
        assert!(is_masked(Scope::Lessee, Scope::Owner));
        assert!(is_masked(Scope::Owner, Scope::System));
        assert!(!is_masked(Scope::Owner, Scope::Owner));
        assert!(!is_masked(Scope::System, Scope::Lessee));
        assert!(!is_masked(Scope::System, Scope::System));
    }
}
