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

use nodemaint_entity::Scope;

/// What masked fields show.
pub const MASK: &str = "******";

/// Whether an entry at `entry_scope` is masked for a caller at `caller_scope`.
pub fn is_masked(caller_scope: Scope, entry_scope: Scope) -> bool {
    entry_scope > caller_scope
}

/// The scope an event's actor acted at, from its project (see the module doc).
pub fn actor_scope(project: Option<&str>, owner: Option<&str>, lessee: Option<&str>) -> Scope {
    match project.filter(|p| !p.is_empty()) {
        Some(p) if owner == Some(p) => Scope::Owner,
        Some(p) if lessee == Some(p) => Scope::Lessee,
        _ => Scope::System,
    }
}

/// What a maintenance event's text says of itself (history's `event`, as
/// `history::event_text` writes it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventShape {
    /// The entry's scope.
    pub entry_scope: Scope,
    /// Whether the event is an assert (or a window's scheduling), whose
    /// actor is the entry's asserter.
    pub asserted: bool,
}

/// Reads `maintenance entry UUID VERB (type T, scope S…` ; `None` for any other text.
pub fn event_shape(text: &str) -> Option<EventShape> {
    let rest = text.strip_prefix("maintenance entry ")?;
    let (_, rest) = rest.split_once(' ')?;
    let (verb, rest) = rest.split_once(" (type ")?;
    let (_, rest) = rest.split_once(", scope ")?;
    let scope = rest.split([',', ')']).next()?;
    Some(EventShape { entry_scope: Scope::parse(scope)?, asserted: verb == "asserted" || verb == "scheduled" })
}

/// `text` with the entry's asserter (`asserted by A (project P)`) and/or the
/// actor (the final `) by U (project Q)`) replaced by [`MASK`].
pub fn mask_event_text(text: &str, asserter: bool, actor: bool) -> String {
    let mut out = text.to_owned();
    if actor && let Some(at) = out.rfind(") by ") {
        let start = at + ") by ".len();
        if let Some(end) = out[start..].find(')').map(|i| start + i + 1) {
            out.replace_range(start..end, &format!("{MASK} (project {MASK})"));
        }
    }
    if asserter && let Some(at) = out.find(", asserted by ") {
        let start = at + ", asserted by ".len();
        if let Some(end) = out[start..].find(") at ").map(|i| start + i + 1) {
            out.replace_range(start..end, &format!("{MASK} (project {MASK})"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const RELEASED: &str = "maintenance entry 8d8d9a25-c1d0-4d4c-93a6-2a4a7e2bf7d8 released (type hardware_failure, scope system, asserted by op-admin (project none) at 2026-06-10T10:30:00+00:00, reason: Disk 3 (bad) by vendor) by les-user (project les1)";

    #[test]
    fn event_texts_are_read_back() {
        let shape = event_shape(RELEASED).unwrap();
        assert_eq!(shape, EventShape { entry_scope: Scope::System, asserted: false });
        let asserted = "maintenance entry u asserted (type operator_hold, scope lessee, reason: x) by u (project p)";
        assert_eq!(event_shape(asserted), Some(EventShape { entry_scope: Scope::Lessee, asserted: true }));
        assert_eq!(event_shape("Node deploy failed"), None);
    }

    #[test]
    fn asserter_and_actor_are_masked_separately() {
        let text = mask_event_text(RELEASED, true, false);
        assert!(text.contains("asserted by ****** (project ******) at 2026"), "{text}");
        assert!(text.ends_with("reason: Disk 3 (bad) by vendor) by les-user (project les1)"), "{text}");
        let text = mask_event_text(RELEASED, false, true);
        assert!(text.contains("asserted by op-admin (project none)"), "{text}");
        assert!(text.ends_with("by vendor) by ****** (project ******)"), "{text}");
        assert_eq!(mask_event_text(RELEASED, false, false), RELEASED);
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
