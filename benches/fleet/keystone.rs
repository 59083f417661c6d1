//! `--keystone`: legacy PUT + DELETE cycles per second at 8 clients through
//! `serve --auth-strategy keystone` (tokens cached) against
//! `trusted-headers` on the same database, and what a token cache miss
//! costs (one validation round trip to a real Keystone on loopback, started
//! with `tests/keystone/keystone.sh`).

use crate::db::Backend;
use crate::serve::{Served, cycles_as};
use crate::{Figure, alternated, rounds};
use nodemaint_test_support::keystone::{Admin, Keystone, PASSWORD, Scope, token};

pub async fn figures(backend: Backend, url: &str, quick: bool) -> Vec<Figure> {
    let name = backend.name();
    eprintln!("[{name}] legacy PUT + DELETE cycles, keystone against trusted-headers");
    let keystone = Keystone::start();
    let admin = Admin::new(&keystone.url).await;
    let service = admin.project("service").await;
    let nodemaint = admin.user("nodemaint").await;
    admin.grant(&nodemaint, "service", Scope::Project(&service)).await;
    let operator = admin.user("operator").await;
    admin.grant(&operator, "admin", Scope::System).await;
    let operator_token = token(&keystone.url, "operator", Scope::System).await;
    let config = |cache: u64| {
        let path = std::env::temp_dir().join(format!("nodemaint-bench-keystone-{cache}.toml"));
        let text = format!(
            "[keystone_authtoken]\nauth_url = \"{}\"\nusername = \"nodemaint\"\npassword = \"{PASSWORD}\"\nproject_name = \"service\"\ntoken_cache_time = {cache}\n",
            keystone.url
        );
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    };
    let (cached, uncached) = (config(300), config(0));
    let db = nodemaint::db::connect(url).await.unwrap();
    let mut uuids = Vec::new();
    for i in 0..8 {
        uuids.push(nodemaint::nodes::find(&db, &crate::ops::node_name(i, false)).await.unwrap().uuid.unwrap());
    }
    let (rounds, run_for) = rounds(quick, 4);
    let as_token = format!("x-auth-token: {operator_token}\r\n");
    let as_proxy = format!("x-user-id: {operator}\r\nx-roles: admin\r\nopenstack-system-scope: all\r\n");

    let with_keystone = Served::start_with(url, 9, &["--auth-strategy", "keystone", "--config", &cached]);
    let with_headers = Served::start_with(url, 9, &["--auth-strategy", "trusted-headers"]);
    // Tokens cached: one cycle validates the token before the rounds (eight
    // clients starting at once would otherwise each ask Keystone, at about
    // half a second a validation here, inside the first round). Then both
    // servers warm up untimed (their pools' connections and TLS handshakes
    // to PostgreSQL), or whichever runs first pays for it.
    cycles_as(&with_keystone.base, &uuids, 1, std::time::Duration::from_millis(1), None, &as_token).await;
    cycles_as(&with_keystone.base, &uuids, 8, std::time::Duration::from_secs(1), None, &as_token).await;
    cycles_as(&with_headers.base, &uuids, 8, std::time::Duration::from_secs(1), None, &as_proxy).await;
    let (ks, th) = alternated(
        "8 clients, keystone (cached) vs trusted-headers",
        rounds,
        || cycles_as(&with_keystone.base, &uuids, 8, run_for, Some(with_keystone.pid()), &as_token),
        || cycles_as(&with_headers.base, &uuids, 8, run_for, Some(with_headers.pid()), &as_proxy),
    )
    .await;
    drop(with_headers);

    // One client, every request validated (token_cache_time = 0) against
    // every request served from the cache: the difference per request is
    // one validation round trip.
    let without_cache = Served::start_with(url, 2, &["--auth-strategy", "keystone", "--config", &uncached]);
    let (miss, hit) = alternated(
        "1 client, keystone without cache vs cached",
        rounds,
        || cycles_as(&without_cache.base, &uuids, 1, run_for, None, &as_token),
        || cycles_as(&with_keystone.base, &uuids, 1, run_for, None, &as_token),
    )
    .await;
    let miss_ms = (1.0 / miss - 1.0 / hit) / 2.0 * 1000.0;
    let _ = (std::fs::remove_file(&cached), std::fs::remove_file(&uncached));
    vec![
        Figure {
            backend: name,
            figure: "serve: legacy PUT+DELETE cycles/s, 8 clients, keystone (cached tokens) vs trusted-headers".into(),
            ours: ks,
            hand_written: Some(th),
            ratio: Some(ks / th),
            target: Some(">= 0.9".into()),
            met: Some(ks / th >= 0.9),
        },
        Figure {
            backend: name,
            figure: "serve: keystone token cache miss, ms per request (one validation round trip)".into(),
            ours: miss_ms,
            hand_written: None,
            ratio: None,
            target: None,
            met: None,
        },
    ]
}
