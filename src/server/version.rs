//! API microversions as Ironic negotiates them: the `OpenStack-API-Version:
//! baremetal X.Y` header wins when present, else `X-OpenStack-Ironic-API-Version`;
//! no header means the minimum; `latest` means the maximum; anything outside
//! the range, or unreadable, is refused with 406 in Ironic's words. Pure.

use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version {
    pub major: i64,
    pub minor: i64,
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

const fn v1(minor: i64) -> Version {
    Version { major: 1, minor }
}

/// The oldest version served (Ironic's minimum).
pub const MIN: Version = v1(1);
/// Ironic 39's 1.115, then typed maintenance (1.116) and windows (1.117).
pub const MAX: Version = v1(117);
/// `GET`/`POST /v1/nodes/{node}/maintenance` and `DELETE …/maintenance/{uuid}`;
/// a collection `DELETE` answers 204 instead of 202 from here on.
pub const TYPED_MAINTENANCE: Version = v1(116);
/// Maintenance windows: `starts_at` / `ends_at` on POST, `state`, `ends_at`
/// and `releasable` on entries, scheduled windows in a node's list, `PATCH
/// …/maintenance/{uuid}` to extend, and `GET /v1/maintenance`.
pub const WINDOWS: Version = v1(117);
/// Nodes can be addressed by name.
pub const NODE_NAMES: Version = v1(5);
/// Names may use any RFC 3986 unreserved character (before: host names).
pub const UNRESTRICTED_NAMES: Version = v1(10);
/// `?fields=` selects the fields of a node.
pub const FIELDS: Version = v1(8);
/// `GET /v1/nodes?detail=true`.
pub const DETAIL_PARAMETER: Version = v1(43);
/// The node's `fault` field.
pub const FAULT: Version = v1(42);
/// The node's `owner` field.
pub const OWNER: Version = v1(50);
/// The node's `lessee` field.
pub const LESSEE: Version = v1(65);

/// The legacy header, also sent back with the version chosen.
pub const HEADER: &str = "X-OpenStack-Ironic-API-Version";
pub const MIN_HEADER: &str = "X-OpenStack-Ironic-API-Minimum-Version";
pub const MAX_HEADER: &str = "X-OpenStack-Ironic-API-Maximum-Version";
/// The standard header (`baremetal 1.116`), read first when present.
pub const STANDARD_HEADER: &str = "OpenStack-API-Version";
const SERVICE_TYPE: &str = "baremetal";

/// Why a requested version is refused (406).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The header could not be read; Ironic sends no version range then.
    Invalid(String),
    /// A well-formed version outside the range; the range headers go back.
    Unsupported(String),
}

/// The version a request asks for, as microversion-parse reads headers for
/// Ironic: the standard header's last `baremetal` entry; when it has none
/// (or is absent), the legacy header's last comma-separated value.
pub fn requested<'a>(standard: Option<&'a str>, legacy: Option<&'a str>) -> Option<&'a str> {
    let from_standard = standard.and_then(|value| {
        value.rsplit(',').find_map(|part| {
            let (service, version) = part.trim().split_once(char::is_whitespace)?;
            service.eq_ignore_ascii_case(SERVICE_TYPE).then(|| version.trim())
        })
    });
    from_standard.filter(|v| !v.is_empty()).or_else(|| legacy.map(|v| v.rsplit(',').next().unwrap_or(v).trim()))
}

/// The version to serve a request with, from what it asked for. Ironic
/// names its own header in the refusal whichever header the value came
/// from, and an empty value is the minimum, as no header is.
pub fn negotiate(requested: Option<&str>) -> Result<Version, Refusal> {
    let Some(text) = requested.filter(|t| !t.is_empty()) else { return Ok(MIN) };
    if text.eq_ignore_ascii_case("latest") {
        return Ok(MAX);
    }
    let parsed = text
        .split_once('.')
        .and_then(|(major, minor)| Some(Version { major: python_int(major)?, minor: python_int(minor)? }));
    let Some(version) = parsed else {
        return Err(Refusal::Invalid(format!("Invalid value for {HEADER} header")));
    };
    let range = format!("The supported version range is: [{MIN}, {MAX}].");
    if version.major != MIN.major {
        return Err(Refusal::Unsupported(format!(
            "Mutually exclusive versions requested. Version {version} requested but not supported by this service. {range}"
        )));
    }
    if version < MIN || version > MAX {
        return Err(Refusal::Unsupported(format!(
            "Version {version} was requested but the minor version is not supported by this service. {range}"
        )));
    }
    Ok(version)
}

/// A number as Python's `int()` reads one (what microversion-parse calls):
/// surrounding whitespace, a sign, and `_` between digits allowed.
fn python_int(text: &str) -> Option<i64> {
    let text = text.trim();
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let well_formed = !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit() || b == b'_')
        && !digits.starts_with('_')
        && !digits.ends_with('_')
        && !digits.contains("__");
    if !well_formed {
        return None;
    }
    let value: i64 = digits.replace('_', "").parse().ok()?;
    Some(if negative { -value } else { value })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_header_is_the_minimum_and_latest_the_maximum() {
        assert_eq!(negotiate(None), Ok(MIN));
        assert_eq!(negotiate(Some("latest")), Ok(MAX));
        assert_eq!(negotiate(Some("1.116")), Ok(TYPED_MAINTENANCE));
        assert_eq!(negotiate(Some("1.50")), Ok(v1(50)));
    }

    #[test]
    fn versions_outside_the_range_are_refused_in_ironics_words() {
        // Ironic 39 says exactly this for 1.116 with its own maximum, 1.115.
        assert_eq!(
            negotiate(Some("1.118")),
            Err(Refusal::Unsupported(
                "Version 1.118 was requested but the minor version is not supported by this service. \
                 The supported version range is: [1.1, 1.117]."
                    .into()
            ))
        );
        assert_eq!(
            negotiate(Some("2.1")),
            Err(Refusal::Unsupported(
                "Mutually exclusive versions requested. Version 2.1 requested but not supported by this service. \
                 The supported version range is: [1.1, 1.117]."
                    .into()
            ))
        );
        assert!(matches!(negotiate(Some("1.0")), Err(Refusal::Unsupported(_))));
        // Python's int() reads these, so Ironic refuses them as unsupported.
        assert!(matches!(negotiate(Some("1.-2")), Err(Refusal::Unsupported(m)) if m.starts_with("Version 1.-2 ")));
        assert_eq!(negotiate(Some("1. 50")), Ok(v1(50)));
        assert_eq!(negotiate(Some("")), Ok(MIN), "an empty value is no value");
        for bad in ["abc", "1", "1.x", " .3", "1.2.3", "1.__2"] {
            assert_eq!(
                negotiate(Some(bad)),
                Err(Refusal::Invalid("Invalid value for X-OpenStack-Ironic-API-Version header".into())),
                "{bad}"
            );
        }
    }

    #[test]
    fn a_malformed_version_names_ironics_header_whichever_it_came_from() {
        assert_eq!(
            negotiate(requested(Some("baremetal xx"), None)),
            Err(Refusal::Invalid("Invalid value for X-OpenStack-Ironic-API-Version header".into()))
        );
    }

    #[test]
    fn the_standard_header_wins_over_the_legacy_one() {
        assert_eq!(requested(Some("baremetal 1.80"), Some("1.20")), Some("1.80"));
        assert_eq!(requested(Some("compute 2.1, baremetal latest"), None), Some("latest"));
        // Naming only another service: the legacy header is read, as microversion-parse does.
        assert_eq!(requested(Some("compute 2.1"), Some("1.20")), Some("1.20"));
        assert_eq!(requested(Some("compute 2.1"), None), None);
        assert_eq!(requested(Some("baremetal 1.2, baremetal 1.9"), None), Some("1.9"), "the last one");
        assert_eq!(requested(None, Some("1.2, 1.31")), Some("1.31"));
        assert_eq!(requested(None, Some(" 1.20 ")), Some("1.20"));
        assert_eq!(requested(None, None), None);
    }
}
