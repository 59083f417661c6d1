//! Masking (node maintenance spec, "REST API impact"): on entries whose
//! scope strictly outranks the caller's, the asserter fields are hidden, so
//! a lessee sees that a system hold exists, and why, but not who set it.

use nodemaint_entity::Scope;

/// What masked fields show.
pub const MASK: &str = "******";

/// Whether an entry at `entry_scope` is masked for a caller at `caller_scope`.
pub fn is_masked(caller_scope: Scope, entry_scope: Scope) -> bool {
    entry_scope > caller_scope
}

#[cfg(test)]
mod tests {
    use super::*;

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
