//! Who a request comes from. `noauth` makes every caller a system admin, as
//! Ironic's `auth_strategy = noauth` does; `trusted-headers` reads the
//! credentials a fronting proxy (keystonemiddleware or one doing its job)
//! leaves on the request: `X-User-Id`, `X-Project-Id`, `X-Project-Name`,
//! `X-Roles` and `OpenStack-System-Scope: all`. The proxy must strip these
//! headers from what clients send; README.md, "Authentication".

use axum::http::HeaderMap;
use nodemaint::Caller;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AuthStrategy {
    /// Every caller is a system-scoped admin (testing, or a private network).
    Noauth,
    /// Credentials from the headers a fronting auth proxy sets.
    TrustedHeaders,
    /// Every X-Auth-Token validated with Keystone (`[keystone_authtoken]`).
    Keystone,
}

/// Why a request carries no usable identity (401).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unauthenticated(pub String);

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim).filter(|v| !v.is_empty())
}

/// The caller a request speaks for under `noauth` or `trusted-headers`
/// (`keystone` asks Keystone: `keystone.rs`).
pub fn caller(strategy: AuthStrategy, headers: &HeaderMap) -> Result<Caller, Unauthenticated> {
    if strategy == AuthStrategy::Noauth {
        return Ok(Caller::noauth());
    }
    // keystonemiddleware marks a token it could not validate (delay_auth_decision).
    if header(headers, "X-Identity-Status").is_some_and(|s| !s.eq_ignore_ascii_case("confirmed")) {
        return Err(Unauthenticated("The request you have made requires authentication.".into()));
    }
    let Some(user) = header(headers, "X-User-Id") else {
        return Err(Unauthenticated(
            "The request you have made requires authentication: no X-User-Id header from the authenticating proxy."
                .into(),
        ));
    };
    let roles: Vec<&str> = header(headers, "X-Roles").map(|r| r.split(',').collect()).unwrap_or_default();
    let system_scope = header(headers, "OpenStack-System-Scope").is_some_and(|s| s.eq_ignore_ascii_case("all"));
    let mut caller = match header(headers, "X-Project-Id") {
        Some(project) if !system_scope => Caller::project(user, project, &roles),
        _ => Caller::system(user, &roles),
    };
    caller.system_scope = system_scope;
    caller.project_name = header(headers, "X-Project-Name").map(str::to_owned);
    Ok(caller)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, v.parse().unwrap());
        }
        h
    }

    #[test]
    fn noauth_is_a_system_admin_whatever_the_headers_say() {
        let c = caller(AuthStrategy::Noauth, &headers(&[("X-Project-Id", "p1"), ("X-Roles", "reader")])).unwrap();
        assert!(c.system_scope && c.has_role("admin") && c.project_id.is_none());
        assert_eq!(c.user_id, "noauth");
    }

    #[test]
    fn trusted_headers_give_a_project_or_system_token() {
        let lessee = caller(
            AuthStrategy::TrustedHeaders,
            &headers(&[("X-User-Id", "u1"), ("X-Project-Id", "p1"), ("X-Roles", "Member, reader")]),
        )
        .unwrap();
        assert_eq!(lessee.project_id.as_deref(), Some("p1"));
        assert!(!lessee.system_scope && lessee.has_role("member") && !lessee.has_role("admin"));

        let operator = caller(
            AuthStrategy::TrustedHeaders,
            &headers(&[("X-User-Id", "op"), ("X-Roles", "admin"), ("OpenStack-System-Scope", "all")]),
        )
        .unwrap();
        assert!(operator.system_scope && operator.project_id.is_none() && operator.has_role("reader"));
    }

    #[test]
    fn trusted_headers_without_a_confirmed_user_are_refused() {
        assert!(caller(AuthStrategy::TrustedHeaders, &headers(&[("X-Project-Id", "p1")])).is_err());
        let invalid = headers(&[("X-User-Id", "u1"), ("X-Identity-Status", "Invalid")]);
        assert!(caller(AuthStrategy::TrustedHeaders, &invalid).is_err());
    }
}
