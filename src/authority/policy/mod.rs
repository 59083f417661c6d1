//! Policy: oslo.policy's rule language ([`rule`]) and policy file format
//! (YAML or JSON, rule name → check string), with Ironic's defaults
//! ([`defaults`]). A file overrides defaults rule by rule.
//!
//! Policy is necessary, never sufficient: scope derivation and the release
//! floors are code (`scope`, `release`) and run after it, so no policy file
//! can let a lessee release a system entry.

pub mod defaults;
pub(crate) mod rule;

use crate::authority::caller::Caller;
use crate::authority::rejected::Rejected;
use crate::error::{Error, Result};
use nodemaint_entity::{node_maintenance, nodes};
use rule::{Attributes, Creds, Rule};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// The project `service_role` expects service users in (Ironic's default).
pub(crate) const SERVICE_PROJECT_NAME: &str = "service";

/// The rule namespace the spec introduces and nodemaint owns whole: a name
/// under it that nodemaint does not define is a typo, never Ironic's.
pub(crate) const MAINTENANCE_NAMESPACE: &str = "baremetal:node:maintenance";

#[derive(Debug, Clone)]
pub struct Policy {
    /// By name; a hash map, as every check of a request looks rules up.
    rules: HashMap<String, Rule>,
    /// Rules a policy file set under [`MAINTENANCE_NAMESPACE`] that no
    /// default defines: they change nothing, so the loader warns about them.
    unknown: Vec<String>,
    /// `[oslo_policy] enforce_scope`: when false, a token with the admin role
    /// has system authority, for scope derivation and for every
    /// `system_scope:all` check alike (legacy deployments keep full authority).
    pub enforce_scope: bool,
}

impl Default for Policy {
    fn default() -> Self {
        Policy::defaults()
    }
}

impl Policy {
    /// Ironic's defaults and the spec's maintenance rules.
    pub fn defaults() -> Policy {
        let rules = defaults::rules()
            .into_iter()
            .map(|(name, text)| (name.to_owned(), rule::parse(&text).expect("default rules parse")))
            .collect();
        Policy { rules, unknown: Vec::new(), enforce_scope: true }
    }

    /// Defaults overridden by a YAML or JSON policy file.
    pub fn load(path: &Path) -> Result<Policy> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::Config(format!("cannot read policy file {}: {e}", path.display())))?;
        Policy::defaults()
            .with_overrides(&text)
            .map_err(|m| Error::Config(format!("policy file {}: {m}", path.display())))
    }

    /// Applies a policy document's rules over these.
    pub fn with_overrides(mut self, text: &str) -> Result<Policy, String> {
        let map: BTreeMap<String, String> = if text.trim_start().starts_with('{') {
            serde_json::from_str(text).map_err(|e| format!("not a JSON object of rule name to check string: {e}"))?
        } else if text.trim().is_empty() {
            BTreeMap::new()
        } else {
            serde_yaml_ng::from_str::<Option<BTreeMap<String, String>>>(text)
                .map_err(|e| format!("not a YAML mapping of rule name to check string: {e}"))?
                .unwrap_or_default()
        };
        let known: Vec<&str> = defaults::rules().iter().map(|(name, _)| *name).collect();
        for (name, text) in map {
            let parsed = rule::parse(&text).map_err(|e| format!("rule \"{name}\": cannot parse \"{text}\": {e}"))?;
            // Ironic's own rules (ports, allocations, …) are legitimately
            // absent here; only nodemaint's namespace can be checked for typos.
            if name.starts_with(MAINTENANCE_NAMESPACE) && !known.contains(&name.as_str()) {
                self.unknown.push(name.clone());
            }
            self.rules.insert(name, parsed);
        }
        Ok(self)
    }

    /// Rules the policy file set that nodemaint does not know (a misspelt
    /// `baremetal:node:maintenance:…` name, which would silently do nothing).
    pub fn unknown_rules(&self) -> &[String] {
        &self.unknown
    }

    /// Whether `rule` allows `caller` on `target`. An unknown rule denies.
    pub fn enforce(&self, rule: &str, caller: &Caller, target: &Target<'_>) -> bool {
        let creds = Creds {
            user_id: &caller.user_id,
            project_id: caller.project_id.as_deref(),
            project_name: caller.project_name.as_deref(),
            roles: &caller.roles,
            // The same answer scope derivation gets (see has_system_authority).
            system_scope: crate::authority::scope::has_system_authority(caller, self.enforce_scope),
        };
        let lookup = |name: &str| self.rules.get(name);
        self.rules.get(rule).is_some_and(|r| r.eval(&creds, target, &lookup, 0))
    }

    /// [`Policy::enforce`] as a 403 in Ironic's words.
    pub fn authorize(&self, rule: &str, caller: &Caller, target: &Target<'_>) -> Result<(), Rejected> {
        if self.enforce(rule, caller, target) { Ok(()) } else { Err(Rejected::Policy { rule: rule.to_owned() }) }
    }
}

/// What a rule's `%(…)s` may read: the node's fields as `node.*`, an
/// entry's as `maintenance.*`, and `config.service_project_name`. It
/// borrows them: building one allocates nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct Target<'a> {
    node: Option<&'a nodes::Model>,
    entry: Option<&'a node_maintenance::Model>,
}

impl Attributes for Target<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        if key == "config.service_project_name" {
            return Some(SERVICE_PROJECT_NAME);
        }
        if let Some(field) = key.strip_prefix("node.") {
            let node = self.node?;
            return match field {
                "uuid" => node.uuid.as_deref(),
                "name" => node.name.as_deref(),
                "owner" => node.owner.as_deref(),
                "lessee" => node.lessee.as_deref(),
                _ => None,
            };
        }
        let entry = self.entry?;
        Some(match key.strip_prefix("maintenance.")? {
            "uuid" => &entry.uuid,
            "type" => &entry.entry_type,
            "scope" => &entry.scope,
            "asserted_by" => &entry.asserted_by,
            "asserted_by_project" => &entry.asserted_by_project,
            _ => return None,
        })
    }
}

/// The target for rules about no node in particular (listing nodes).
pub fn empty_target() -> Target<'static> {
    Target::default()
}

/// The target for node rules: the node's fields as `node.*`.
pub fn node_target(node: &nodes::Model) -> Target<'_> {
    Target { node: Some(node), entry: None }
}

/// The target for `maintenance:remove`: the node's fields and the entry's as `maintenance.*`.
pub fn entry_target<'a>(node: &'a nodes::Model, entry: &'a node_maintenance::Model) -> Target<'a> {
    Target { node: Some(node), entry: Some(entry) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use defaults::*;

    fn node(owner: Option<&str>, lessee: Option<&str>) -> nodes::Model {
        nodes::Model {
            id: 1,
            uuid: Some("u".into()),
            name: Some("n".into()),
            owner: owner.map(Into::into),
            lessee: lessee.map(Into::into),
            maintenance: Some(false),
            maintenance_reason: None,
            fault: None,
            reservation: None,
            version: None,
            created_at: None,
            updated_at: None,
        }
    }

    #[test]
    fn defaults_match_ironic_for_maintenance() {
        let p = Policy::defaults();
        let n = node(Some("own"), Some("les"));
        let t = node_target(&n);
        assert!(p.enforce(SET_MAINTENANCE, &Caller::system("op", &["member"]), &t));
        assert!(!p.enforce(SET_MAINTENANCE, &Caller::system("op", &["reader"]), &t));
        assert!(p.enforce(MAINTENANCE_ADD, &Caller::project("u", "own", &["member"]), &t));
        assert!(
            !p.enforce(MAINTENANCE_ADD, &Caller::project("u", "les", &["member"]), &t),
            "lessees need admin or manager"
        );
        assert!(p.enforce(MAINTENANCE_REMOVE, &Caller::project("u", "les", &["manager"]), &t));
        assert!(p.enforce(MAINTENANCE_GET, &Caller::project("u", "les", &["reader"]), &t));
        assert!(!p.enforce(MAINTENANCE_GET, &Caller::project("u", "other", &["admin"]), &t));
        assert!(!p.enforce("baremetal:no:such:rule", &Caller::system("op", &["admin"]), &t));
    }

    #[test]
    fn files_override_rule_by_rule_in_yaml_or_json() {
        let yaml = "# tighten release to the asserter\n\"baremetal:node:maintenance:remove\": \"role:member and user_id:%(maintenance.asserted_by)s\"\n";
        let p = Policy::defaults().with_overrides(yaml).unwrap();
        let n = node(Some("own"), None);
        let mut e = crate::authority::release::tests::entry("operator_hold", "owner", "own");
        e.asserted_by = "alice".into();
        let t = entry_target(&n, &e);
        assert!(p.enforce(MAINTENANCE_REMOVE, &Caller::project("alice", "own", &["member"]), &t));
        assert!(!p.enforce(MAINTENANCE_REMOVE, &Caller::project("bob", "own", &["member"]), &t));
        assert!(
            p.enforce(SET_MAINTENANCE, &Caller::project("bob", "own", &["member"]), &node_target(&n)),
            "others keep defaults"
        );
        let json = Policy::defaults().with_overrides("{\"baremetal:node:maintenance:get\": \"!\"}").unwrap();
        assert!(!json.enforce(MAINTENANCE_GET, &Caller::system("op", &["admin"]), &node_target(&n)));
        assert!(json.unknown_rules().is_empty());
        let bad = Policy::defaults().with_overrides("\"x\": \"role:a and (\"\n").unwrap_err();
        assert!(bad.contains("rule \"x\": cannot parse \"role:a and (\""), "{bad}");
    }

    #[test]
    fn a_misspelt_maintenance_rule_is_reported_and_ironics_own_rules_are_not() {
        let text = "\"baremetal:node:maintenance:lst\": \"!\"\n\"baremetal:port:get\": \"rule:is_admin\"\n";
        let p = Policy::defaults().with_overrides(text).unwrap();
        assert_eq!(p.unknown_rules(), ["baremetal:node:maintenance:lst"]);
    }
}
