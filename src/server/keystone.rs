//! `--auth-strategy keystone`: every request's `X-Auth-Token` validated with
//! Keystone, as keystonemiddleware's `auth_token` does for Ironic.
//!
//! The service authenticates itself (password or application credential,
//! from `[keystone_authtoken]`), then asks `GET /v3/auth/tokens` with the
//! request's token as `X-Subject-Token`. The caller comes from Keystone's
//! answer alone: user id, project id and name, role names, system scope;
//! never from request headers. A validated token is cached until it expires
//! or `token_cache_time` passes, whichever is first, in a bounded map: a
//! revoked token keeps working until then. A token Keystone does not know
//! is 401 with `WWW-Authenticate: Keystone uri="…"`, and is remembered as
//! invalid for `token_cache_time` too (as keystonemiddleware does), so
//! repeating it does not cost Keystone a validation each time; Keystone not
//! answering is 503, and nothing is let through.

use nodemaint::Caller;
use nodemaint::config::KeystoneSection;
use nodemaint::{Error, Result};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// Most validated tokens kept; past it the least used go first.
pub const CACHE_ENTRIES: usize = 10_000;

/// Why a request was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// 401: no token, or one Keystone does not accept.
    Unauthenticated(String),
    /// 503: Keystone could not be asked (the request is not let through).
    Unavailable(String),
}

/// How the service proves who it is to Keystone.
#[derive(Debug, Clone)]
enum Credentials {
    Password { username: String, password: String, user_domain: String, project: String, project_domain: String },
    ApplicationCredential { id: String, secret: String },
}

/// Tokens Keystone answered for: the caller (`None`: Keystone refused the
/// token) and until when the answer holds. Bounded by the crate's
/// eviction; an answer past its time is dropped when next asked for.
struct Cache(quick_cache::sync::Cache<String, (Option<Caller>, Instant)>);

impl Default for Cache {
    fn default() -> Self {
        Cache(quick_cache::sync::Cache::new(CACHE_ENTRIES))
    }
}

impl Cache {
    /// `Some(answer)` while a remembered answer holds.
    fn get(&self, token: &str, now: Instant) -> Option<Option<Caller>> {
        match self.0.get(token) {
            Some((caller, until)) if until > now => Some(caller),
            Some(_) => {
                self.0.remove(token);
                None
            }
            None => None,
        }
    }

    fn put(&self, token: &str, caller: Option<Caller>, until: Instant) {
        self.0.insert(token.to_owned(), (caller, until));
    }
}

/// The validator `serve` holds for its lifetime.
pub struct Keystone {
    http: reqwest::Client,
    /// `…/v3`, no trailing slash.
    identity: String,
    /// The `WWW-Authenticate` header of a 401.
    challenge: String,
    credentials: Credentials,
    /// The service's own token and when to get a new one.
    service_token: tokio::sync::Mutex<Option<(String, Instant)>>,
    cache: Cache,
    ttl: Duration,
}

/// `auth_url` as the v3 identity endpoint.
pub fn identity_endpoint(auth_url: &str) -> String {
    let base = auth_url.trim_end_matches('/');
    if base.ends_with("/v3") { base.to_owned() } else { format!("{base}/v3") }
}

fn config_error(message: String) -> Error {
    Error::Config(format!("[keystone_authtoken] {message}"))
}

impl Keystone {
    /// Checks the section and builds the HTTP client (nothing is sent yet).
    pub fn new(section: &KeystoneSection) -> Result<Keystone> {
        let required = |key: &str, value: &Option<String>| {
            value
                .clone()
                .filter(|v| !v.is_empty())
                .ok_or_else(|| config_error(format!("{key} is required with auth_type = \"{}\"", section.auth_type)))
        };
        let credentials = match section.auth_type.as_str() {
            "password" => Credentials::Password {
                username: required("username", &section.username)?,
                password: required("password", &section.password)?,
                user_domain: section.user_domain_name.clone(),
                project: required("project_name", &section.project_name)?,
                project_domain: section.project_domain_name.clone(),
            },
            "v3applicationcredential" => Credentials::ApplicationCredential {
                id: required("application_credential_id", &section.application_credential_id)?,
                secret: required("application_credential_secret", &section.application_credential_secret)?,
            },
            other => {
                return Err(config_error(format!(
                    "auth_type = \"{other}\" is not supported; use \"password\" or \"v3applicationcredential\""
                )));
            }
        };
        let identity = identity_endpoint(&section.auth_url);
        if !(identity.starts_with("http://") || identity.starts_with("https://")) {
            return Err(config_error(format!("auth_url = \"{}\" is not an http(s) URL", section.auth_url)));
        }
        let connect = Duration::from_secs(section.http_connect_timeout.max(1));
        let mut builder = reqwest::Client::builder()
            .connect_timeout(connect)
            .timeout(connect + Duration::from_secs(10))
            .user_agent(concat!("nodemaint/", env!("CARGO_PKG_VERSION")));
        if let Some(cafile) = &section.cafile {
            let pem = std::fs::read(cafile).map_err(|e| config_error(format!("cafile {cafile}: {e}")))?;
            for cert in reqwest::Certificate::from_pem_bundle(&pem)
                .map_err(|e| config_error(format!("cafile {cafile}: not PEM certificates: {e}")))?
            {
                builder = builder.add_root_certificate(cert);
            }
        }
        if section.insecure {
            builder = builder.danger_accept_invalid_certs(true);
        }
        let http = builder.build().map_err(|e| config_error(format!("cannot build the HTTP client: {e}")))?;
        let uri = section.www_authenticate_uri.clone().unwrap_or_else(|| section.auth_url.clone());
        Ok(Keystone {
            http,
            identity,
            challenge: format!("Keystone uri=\"{uri}\""),
            credentials,
            service_token: tokio::sync::Mutex::new(None),
            cache: Cache::default(),
            ttl: Duration::from_secs(section.token_cache_time),
        })
    }

    /// The `WWW-Authenticate` value of a 401.
    pub fn challenge(&self) -> &str {
        &self.challenge
    }

    /// The caller behind `token` (the request's `X-Auth-Token`).
    pub async fn caller(&self, token: Option<&str>) -> std::result::Result<Caller, Refused> {
        let Some(token) = token.map(str::trim).filter(|t| !t.is_empty()) else {
            return Err(Refused::Unauthenticated("The request you have made requires authentication.".into()));
        };
        let now = Instant::now();
        match self.cache.get(token, now) {
            Some(Some(caller)) => return Ok(caller),
            Some(None) => return Err(refused()),
            None => {}
        }
        let (answer, until) = match self.validate(token).await {
            Ok((caller, expires_in)) => (Ok(caller), now + expires_in.min(self.ttl)),
            Err(Refused::Unauthenticated(message)) => (Err(Refused::Unauthenticated(message)), now + self.ttl),
            // Keystone not answering is not an answer about the token.
            Err(unavailable) => return Err(unavailable),
        };
        self.cache.put(token, answer.as_ref().ok().cloned(), until);
        answer
    }

    /// Asks Keystone about `token`; the caller and how long until it expires.
    async fn validate(&self, token: &str) -> std::result::Result<(Caller, Duration), Refused> {
        for attempt in 0..2 {
            let service = self.service_token(attempt > 0).await?;
            let request = self
                .http
                .get(format!("{}/auth/tokens?nocatalog", self.identity))
                .header("X-Auth-Token", service)
                .header("X-Subject-Token", token);
            let response = send_idempotent(request).await.map_err(|e| unavailable(&self.identity, &e))?;
            match response.status().as_u16() {
                200 => {
                    let body: Value = response.json().await.map_err(|e| unavailable(&self.identity, &e))?;
                    return caller_from_token(&body["token"]).ok_or_else(|| {
                        Refused::Unauthenticated("The token does not name a user Keystone vouches for.".into())
                    });
                }
                // Keystone says 404 for a token it does not know (expired, revoked, made up).
                404 => return Err(refused()),
                // Our own token was refused (expired early, revoked): get a new one, once.
                401 if attempt == 0 => continue,
                status => {
                    return Err(Refused::Unavailable(format!(
                        "Keystone at {} answered the token validation with HTTP {status}",
                        self.identity
                    )));
                }
            }
        }
        Err(Refused::Unavailable(format!("Keystone at {} refused the service's own credentials", self.identity)))
    }

    /// The service's token, asked for when there is none, it is about to
    /// expire, or `renew` (Keystone refused it).
    async fn service_token(&self, renew: bool) -> std::result::Result<String, Refused> {
        let mut slot = self.service_token.lock().await;
        if let Some((token, refresh_at)) = slot.as_ref()
            && !renew
            && Instant::now() < *refresh_at
        {
            return Ok(token.clone());
        }
        let identity = match &self.credentials {
            Credentials::Password { username, password, user_domain, .. } => json!({
                "methods": ["password"],
                "password": {"user": {"name": username, "domain": {"name": user_domain}, "password": password}},
            }),
            Credentials::ApplicationCredential { id, secret } => json!({
                "methods": ["application_credential"],
                "application_credential": {"id": id, "secret": secret},
            }),
        };
        let mut auth = json!({ "identity": identity });
        if let Credentials::Password { project, project_domain, .. } = &self.credentials {
            auth["scope"] = json!({"project": {"name": project, "domain": {"name": project_domain}}});
        }
        let response = self
            .http
            .post(format!("{}/auth/tokens?nocatalog", self.identity))
            .json(&json!({ "auth": auth }))
            .send()
            .await
            .map_err(|e| unavailable(&self.identity, &e))?;
        let status = response.status();
        if !status.is_success() {
            return Err(Refused::Unavailable(format!(
                "Keystone at {} refused the service's credentials ([keystone_authtoken]): HTTP {status}",
                self.identity
            )));
        }
        let token = response
            .headers()
            .get("X-Subject-Token")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
            .ok_or_else(|| Refused::Unavailable("Keystone issued no X-Subject-Token for the service".into()))?;
        let body: Value = response.json().await.map_err(|e| unavailable(&self.identity, &e))?;
        // Renewed a minute before it expires (at the latest in an hour).
        let lifetime = expires_in(&body["token"]).unwrap_or(Duration::from_secs(3600)).min(Duration::from_secs(3600));
        let refresh_at = Instant::now() + lifetime.saturating_sub(Duration::from_secs(60));
        *slot = Some((token.clone(), refresh_at));
        Ok(token)
    }
}

/// Sends a GET, once more when the first attempt failed in transit (a
/// kept-alive connection the server had closed resets the request).
async fn send_idempotent(request: reqwest::RequestBuilder) -> reqwest::Result<reqwest::Response> {
    let retry = request.try_clone();
    match request.send().await {
        Err(e) if !e.is_timeout() => match retry {
            Some(again) => again.send().await,
            None => Err(e),
        },
        other => other,
    }
}

/// The 401 for a token Keystone does not accept.
fn refused() -> Refused {
    Refused::Unauthenticated("The request you have made requires authentication.".into())
}

fn unavailable(identity: &str, e: &dyn std::fmt::Display) -> Refused {
    Refused::Unavailable(format!("cannot reach Keystone at {identity}: {}", nodemaint::error::one_line(&e.to_string())))
}

/// How long until the token described by `token` (a `"token"` object) expires.
fn expires_in(token: &Value) -> Option<Duration> {
    let at = chrono::DateTime::parse_from_rfc3339(token["expires_at"].as_str()?).ok()?;
    (at.with_timezone(&chrono::Utc) - chrono::Utc::now()).to_std().ok()
}

/// The caller a validated token describes, and how long until it expires;
/// `None` when it names no user.
pub fn caller_from_token(token: &Value) -> Option<(Caller, Duration)> {
    let user = token["user"]["id"].as_str()?;
    let roles: Vec<&str> = token["roles"].as_array()?.iter().filter_map(|r| r["name"].as_str()).collect();
    let system = token["system"]["all"].as_bool().unwrap_or(false);
    let mut caller = match token["project"]["id"].as_str() {
        Some(project) if !system => Caller::project(user, project, &roles),
        // A system-scoped token; a domain-scoped or unscoped one gets no
        // system authority (no project, not system): it sees no node.
        _ => {
            let mut c = Caller::system(user, &roles);
            c.system_scope = system;
            c
        }
    };
    caller.project_name = token["project"]["name"].as_str().map(str::to_owned);
    Some((caller, expires_in(token).unwrap_or_default()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn callers_come_from_the_token_alone() {
        let in_an_hour = (chrono::Utc::now() + chrono::Duration::hours(1)).to_rfc3339();
        let project = json!({
            "user": {"id": "u1", "name": "alice"}, "project": {"id": "p1", "name": "lessee"},
            "roles": [{"id": "r", "name": "member"}], "expires_at": in_an_hour,
        });
        let (c, expires) = caller_from_token(&project).unwrap();
        assert_eq!((c.user_id.as_str(), c.project_id.as_deref()), ("u1", Some("p1")));
        assert_eq!(c.project_name.as_deref(), Some("lessee"));
        assert!(c.has_role("member") && c.has_role("reader") && !c.has_role("admin") && !c.system_scope);
        assert!(expires > Duration::from_secs(3500) && expires <= Duration::from_secs(3600));

        let system = json!({"user": {"id": "op"}, "system": {"all": true}, "roles": [{"name": "admin"}], "expires_at": in_an_hour});
        let (c, _) = caller_from_token(&system).unwrap();
        assert!(c.system_scope && c.project_id.is_none() && c.has_role("admin"));

        let domain = json!({"user": {"id": "d"}, "domain": {"id": "default"}, "roles": [{"name": "admin"}]});
        let (c, expires) = caller_from_token(&domain).unwrap();
        assert!(!c.system_scope && c.project_id.is_none(), "a domain token has neither scope");
        assert_eq!(expires, Duration::ZERO, "no expiry: not cached");
        assert!(caller_from_token(&json!({"roles": []})).is_none());
    }

    #[test]
    fn the_cache_keeps_tokens_until_their_time_and_stays_bounded() {
        let cache = Cache::default();
        let now = Instant::now();
        let caller = Caller::system("u", &["admin"]);
        cache.put("t1", Some(caller.clone()), now + Duration::from_secs(5));
        assert!(cache.get("t1", now).is_some_and(|c| c.is_some()));
        assert!(cache.get("t1", now + Duration::from_secs(6)).is_none(), "expired");
        cache.put("bad", None, now + Duration::from_secs(5));
        assert_eq!(cache.get("bad", now).map(|c| c.is_none()), Some(true), "a refused token is remembered as refused");
        let last = 3 * CACHE_ENTRIES;
        for i in 0..=last {
            cache.put(&format!("t{i}"), Some(caller.clone()), now + Duration::from_secs(60));
        }
        assert!(cache.0.len() <= CACHE_ENTRIES, "bounded: {} entries", cache.0.len());
        assert!(cache.0.len() > CACHE_ENTRIES / 2, "and still caching: {} entries", cache.0.len());
        assert!(cache.get(&format!("t{last}"), now).is_some(), "the newest answer is kept");
    }

    #[test]
    fn auth_urls_become_the_v3_endpoint() {
        assert_eq!(identity_endpoint("http://k:5000"), "http://k:5000/v3");
        assert_eq!(identity_endpoint("http://k:5000/v3/"), "http://k:5000/v3");
        assert_eq!(identity_endpoint("https://k/identity"), "https://k/identity/v3");
    }
}
