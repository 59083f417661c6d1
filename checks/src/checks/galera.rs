//! On a MariaDB Galera cluster: is the cluster whole and this node ready
//! before an upgrade? Warning when a configured node is missing from the
//! cluster or this node is not `Synced`; Failure when this node is not in
//! the primary component or not ready for clients (writes would fail).
//! Anything that is not a Galera node passes with a note.

use crate::{CheckResult, Context};
use sea_orm::{ConnectionTrait, DbBackend, Statement};

/// What the node reports of itself and its cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GaleraState {
    /// `wsrep_cluster_size`: nodes in this node's component.
    pub size: u64,
    /// Peers in `wsrep_cluster_address` (gcomm://a,b,c), when it lists them.
    pub configured: Option<u64>,
    /// `wsrep_local_state_comment`: `Synced`, `Donor/Desynced`, `Joining`, …
    pub state: String,
    /// `wsrep_ready` is `ON`.
    pub ready: bool,
    /// `wsrep_cluster_status`: `Primary`, or `Non-Primary` after a partition.
    pub status: String,
}

/// The check's verdict on `s`.
pub fn assess(s: &GaleraState) -> CheckResult {
    if !s.ready || s.status != "Primary" {
        return CheckResult::failure(format!(
            "This Galera node is not ready for clients (wsrep_ready {}, cluster status {}): writes through it fail. Point nodemaint at a node of the primary component, or restore the cluster first.",
            if s.ready { "ON" } else { "OFF" },
            s.status
        ));
    }
    let whole = s.configured.is_none_or(|c| s.size >= c);
    if !whole || s.state != "Synced" {
        let missing = match s.configured {
            Some(c) if s.size < c => format!("{} of the {c} configured nodes are in the cluster", s.size),
            _ => format!("{} nodes are in the cluster", s.size),
        };
        return CheckResult::warning(format!(
            "Galera: {missing}, and this node is {}. Upgrade when every node has joined and is Synced: a node that rejoins during the upgrade copies the whole database (SST).",
            s.state
        ));
    }
    CheckResult::success(Some(format!("Galera cluster of {} nodes, this node Synced and ready.", s.size)))
}

/// The number of peers a `gcomm://` address lists (`None` for `gcomm://`
/// alone, which bootstraps, or anything else).
pub fn configured_peers(address: &str) -> Option<u64> {
    let peers = address.strip_prefix("gcomm://")?.split('?').next()?;
    let count = peers.split(',').filter(|p| !p.trim().is_empty()).count() as u64;
    (count > 0).then_some(count)
}

pub async fn check(c: &Context) -> Result<CheckResult, String> {
    if c.db.get_database_backend() != DbBackend::MySql {
        return Ok(CheckResult::success(Some("Not a Galera cluster.".into())));
    }
    let value = |rows: &[sea_orm::QueryResult], name: &str| -> Option<String> {
        rows.iter().find_map(|row| {
            let key: String = row.try_get_by_index(0).ok()?;
            if key.eq_ignore_ascii_case(name) { row.try_get_by_index::<String>(1).ok() } else { None }
        })
    };
    let query = |sql: &str| c.db.query_all_raw(Statement::from_string(DbBackend::MySql, sql.to_owned()));
    let variables = query("SHOW VARIABLES WHERE Variable_name IN ('wsrep_on', 'wsrep_cluster_address')")
        .await
        .map_err(|e| e.to_string())?;
    if !value(&variables, "wsrep_on").is_some_and(|v| v.eq_ignore_ascii_case("ON")) {
        return Ok(CheckResult::success(Some("Not a Galera cluster.".into())));
    }
    let status = query(
        "SHOW STATUS WHERE Variable_name IN ('wsrep_cluster_size', 'wsrep_local_state_comment', 'wsrep_ready', 'wsrep_cluster_status')",
    )
    .await
    .map_err(|e| e.to_string())?;
    let state = GaleraState {
        size: value(&status, "wsrep_cluster_size").and_then(|v| v.parse().ok()).unwrap_or(0),
        configured: value(&variables, "wsrep_cluster_address").as_deref().and_then(configured_peers),
        state: value(&status, "wsrep_local_state_comment").unwrap_or_default(),
        ready: value(&status, "wsrep_ready").is_some_and(|v| v.eq_ignore_ascii_case("ON")),
        status: value(&status, "wsrep_cluster_status").unwrap_or_default(),
    };
    Ok(assess(&state))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framework::Code;

    fn state(size: u64, local: &str, ready: bool, status: &str) -> GaleraState {
        GaleraState { size, configured: Some(3), state: local.into(), ready, status: status.into() }
    }

    #[test]
    fn a_whole_synced_cluster_passes_a_missing_or_unsynced_node_warns_a_non_primary_one_fails() {
        assert_eq!(assess(&state(3, "Synced", true, "Primary")).code, Code::Success);
        let missing = assess(&state(2, "Synced", true, "Primary"));
        assert_eq!(missing.code, Code::Warning);
        assert!(missing.details.unwrap().contains("2 of the 3 configured nodes"));
        assert_eq!(assess(&state(3, "Donor/Desynced", true, "Primary")).code, Code::Warning);
        assert_eq!(assess(&state(1, "Initialized", false, "non-Primary")).code, Code::Failure);
    }

    #[test]
    fn peers_are_counted_from_the_cluster_address() {
        assert_eq!(configured_peers("gcomm://10.0.0.1,10.0.0.2,10.0.0.3"), Some(3));
        assert_eq!(configured_peers("gcomm://a:4567,b:4567?pc.wait_prim=no"), Some(2));
        assert_eq!(configured_peers("gcomm://"), None);
    }
}
