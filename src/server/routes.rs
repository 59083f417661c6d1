//! The API's routes as one table: each path, the methods it takes (named
//! beside the handlers that serve them), and whether it needs an identity.
//! The router is built from this table, and a test holds the OpenAPI
//! document (`openapi.yaml`) to it, path for path and method for method.

use super::{AppState, handlers, health};
use axum::routing::{MethodRouter, delete, get};

pub struct Route {
    /// The path, with `{ident}`-style parameters (served with or without a
    /// trailing slash, as Ironic's).
    pub path: &'static str,
    /// The methods `router` takes, by name (what the document test reads).
    #[cfg_attr(not(test), allow(dead_code))]
    pub methods: &'static [&'static str],
    pub router: MethodRouter<AppState>,
    /// Discovery and the health check need no identity.
    pub public: bool,
}

fn route(path: &'static str, methods: &'static [&'static str], router: MethodRouter<AppState>) -> Route {
    Route { path, methods, router, public: false }
}

fn public(path: &'static str, router: MethodRouter<AppState>) -> Route {
    Route { path, methods: &["GET"], router, public: true }
}

/// Every route `serve` answers.
pub fn routes() -> Vec<Route> {
    vec![
        public("/", get(handlers::root)),
        public("/v1", get(handlers::v1)),
        public("/healthcheck", get(health::healthcheck)),
        route("/v1/nodes", &["GET", "PATCH"], get(handlers::list_nodes::<false>).patch(handlers::patch_without_node)),
        route("/v1/nodes/detail", &["GET"], get(handlers::list_nodes::<true>)),
        route("/v1/nodes/{ident}", &["GET"], get(handlers::show_node)),
        route(
            "/v1/nodes/{ident}/maintenance",
            &["GET", "POST", "PUT", "DELETE"],
            get(handlers::list_entries)
                .post(handlers::add_entry)
                .put(handlers::legacy_set)
                .delete(handlers::release_all),
        ),
        route(
            "/v1/nodes/{ident}/maintenance/{entry}",
            &["DELETE", "PATCH"],
            delete(handlers::release_entry).patch(handlers::extend_entry),
        ),
        route("/v1/maintenance", &["GET"], get(handlers::list_windows)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// `(path, METHOD)` pairs, with path parameters renamed `{}` so the
    /// document's names (`node_ident`) and the router's (`ident`) compare.
    fn shape(path: &str, method: &str) -> (String, String) {
        let mut out = String::new();
        let mut inside = false;
        for c in path.chars() {
            match c {
                '{' => {
                    inside = true;
                    out.push_str("{}");
                }
                '}' => inside = false,
                _ if inside => {}
                c => out.push(c),
            }
        }
        (out, method.to_ascii_uppercase())
    }

    #[test]
    fn the_openapi_document_has_every_route_and_no_other() {
        let document: serde_yaml_ng::Value = serde_yaml_ng::from_str(include_str!("openapi.yaml")).unwrap();
        let documented: BTreeSet<(String, String)> = document["paths"]
            .as_mapping()
            .expect("paths")
            .iter()
            .flat_map(|(path, item)| {
                let path = path.as_str().unwrap().to_owned();
                item.as_mapping().unwrap().keys().map(move |m| shape(&path, m.as_str().unwrap())).collect::<Vec<_>>()
            })
            .collect();
        let served: BTreeSet<(String, String)> =
            routes().iter().flat_map(|r| r.methods.iter().map(|m| shape(r.path, m))).collect();
        assert_eq!(documented, served, "openapi.yaml and the router disagree");
    }
}
