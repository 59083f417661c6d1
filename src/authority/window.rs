//! Maintenance windows' rules: the times callers send, which windows
//! overlap, and what an extension may do. Pure: `now` is an argument.
//!
//! Times are naive UTC to the second, as nodemaint stores them. A window is
//! the half-open interval `[starts_at, ends_at)`; an entry without an end
//! lasts for ever.

use crate::authority::rejected::{Rejected, Result};
use chrono::{DateTime, Duration, NaiveDateTime, Timelike};

/// Reads a time as callers write it: RFC 3339 (any offset, converted to
/// UTC), or `+N` / `-N` with `s`, `m`, `h` or `d` counted from `now` (ahead
/// or ago). `what` names the field in the error (`--end`, `ends_at`).
pub fn parse_time(text: &str, now: NaiveDateTime, what: &str) -> Result<NaiveDateTime> {
    let text = text.trim();
    let bad = || Rejected::NotATime { field: what.to_owned(), text: text.to_owned() };
    let relative = text.strip_prefix('+').map(|r| (r, 1)).or_else(|| text.strip_prefix('-').map(|r| (r, -1)));
    if let Some((relative, sign)) = relative {
        let split = relative.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?;
        let (digits, unit) = relative.split_at(split);
        let n: i64 = digits.parse().map_err(|_| bad())?;
        let seconds = match unit {
            "s" => Some(n),
            "m" => n.checked_mul(60),
            "h" => n.checked_mul(3_600),
            "d" => n.checked_mul(86_400),
            _ => None,
        }
        .filter(|s| *s <= 3_650 * 86_400)
        .ok_or_else(bad)?;
        return within_storable(now + Duration::seconds(sign * seconds), text, what);
    }
    let parsed = DateTime::parse_from_rfc3339(text).map_err(|_| bad())?;
    let utc = parsed.naive_utc();
    within_storable(utc.with_nanosecond(0).unwrap_or(utc), text, what)
}

/// The times every backend stores and compares alike, in UTC: MySQL's
/// DATETIME ends with year 9999 (a later one is stored as zeros), and
/// SQLite compares times as text, where `+10000-…` sorts before `2026-…`.
/// Nothing about maintenance needs a time before the Unix epoch.
pub(crate) const EARLIEST: NaiveDateTime = match chrono::NaiveDate::from_ymd_opt(1970, 1, 1) {
    Some(d) => d.and_hms_opt(0, 0, 0).expect("midnight"),
    None => panic!("a valid date"),
};
pub(crate) const LATEST: NaiveDateTime = match chrono::NaiveDate::from_ymd_opt(9999, 12, 31) {
    Some(d) => d.and_hms_opt(23, 59, 59).expect("a valid time"),
    None => panic!("a valid date"),
};

fn within_storable(time: NaiveDateTime, text: &str, what: &str) -> Result<NaiveDateTime> {
    if (EARLIEST..=LATEST).contains(&time) {
        return Ok(time);
    }
    Err(Rejected::TimeOutOfRange { field: what.to_owned(), text: text.to_owned(), utc: time })
}

/// Where a window is in its life, as the API names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum WindowState {
    /// Holding its node now (every active entry is shown as `active`).
    Active,
    /// Waiting for its start; touches nothing of its node until then.
    Scheduled,
    /// Expired, cancelled or released: known from its event.
    Ended,
}

impl WindowState {
    /// Every state, in the order the estate listing walks them.
    pub const ALL: [WindowState; 3] = [WindowState::Active, WindowState::Scheduled, WindowState::Ended];

    /// Every state's name, for messages: `active, scheduled, ended`.
    pub fn names() -> String {
        WindowState::ALL.map(WindowState::as_str).join(", ")
    }

    pub fn as_str(self) -> &'static str {
        match self {
            WindowState::Active => "active",
            WindowState::Scheduled => "scheduled",
            WindowState::Ended => "ended",
        }
    }
}

impl std::fmt::Display for WindowState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for WindowState {
    type Err = Rejected;

    fn from_str(text: &str) -> Result<WindowState> {
        WindowState::ALL
            .into_iter()
            .find(|s| s.as_str() == text.trim())
            .ok_or_else(|| Rejected::UnknownWindowState { state: text.to_owned() })
    }
}

/// A window's times after the checks of [`check`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Times {
    /// `Some` when the window starts later: it is scheduled, not active.
    pub scheduled_start: Option<NaiveDateTime>,
    pub ends_at: NaiveDateTime,
}

/// The rules for a new window: a reason, an end in the future and after the
/// start. A start absent or not in the future makes the window active now.
pub(crate) fn check(
    reason: Option<&str>,
    starts_at: Option<NaiveDateTime>,
    ends_at: NaiveDateTime,
    now: NaiveDateTime,
) -> Result<Times> {
    if reason.is_none_or(|r| r.trim().is_empty()) {
        return Err(Rejected::WindowNeedsReason);
    }
    if ends_at <= now {
        return Err(Rejected::EndNotInFuture { end: ends_at, now });
    }
    if let Some(start) = starts_at
        && ends_at <= start
    {
        return Err(Rejected::EndNotAfterStart { end: ends_at, start });
    }
    Ok(Times { scheduled_start: starts_at.filter(|s| *s > now), ends_at })
}

/// An extension: the new end must be later than the current one and in the
/// future (a window is never shortened; ending it early is releasing it).
pub(crate) fn check_extension(current: NaiveDateTime, new_end: NaiveDateTime, now: NaiveDateTime) -> Result<()> {
    if new_end <= now {
        return Err(Rejected::ExtensionNotInFuture { end: new_end, now });
    }
    if new_end <= current {
        return Err(Rejected::ExtensionNotLater { end: new_end, current });
    }
    Ok(())
}

/// Whether `[a_start, a_end)` and `[b_start, b_end)` share a moment; `None`
/// ends never.
pub(crate) fn overlaps(
    a_start: NaiveDateTime,
    a_end: Option<NaiveDateTime>,
    b_start: NaiveDateTime,
    b_end: Option<NaiveDateTime>,
) -> bool {
    a_end.is_none_or(|end| b_start < end) && b_end.is_none_or(|end| a_start < end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> NaiveDateTime {
        DateTime::parse_from_rfc3339(text).unwrap().naive_utc()
    }

    #[test]
    fn window_states_read_as_the_api_names_them() {
        for state in WindowState::ALL {
            assert_eq!(state.as_str().parse::<WindowState>(), Ok(state));
            assert_eq!(serde_json::to_value(state).unwrap(), state.as_str());
        }
        let e = "paused".parse::<WindowState>().unwrap_err();
        assert_eq!(e.http_status(), 400);
        assert_eq!(e.to_string(), "Unknown window state 'paused'; expected any of: active, scheduled, ended");
    }

    #[test]
    fn times_are_rfc3339_or_relative_to_now() {
        let now = at("2026-12-05T10:00:00Z");
        assert_eq!(parse_time("2026-12-05T22:00:00Z", now, "--end").unwrap(), at("2026-12-05T22:00:00Z"));
        assert_eq!(parse_time("2026-12-05T23:00:00+01:00", now, "--end").unwrap(), at("2026-12-05T22:00:00Z"));
        assert_eq!(parse_time("2026-12-05T22:00:00.750Z", now, "--end").unwrap(), at("2026-12-05T22:00:00Z"));
        assert_eq!(parse_time("+30m", now, "--end").unwrap(), at("2026-12-05T10:30:00Z"));
        assert_eq!(parse_time("+2h", now, "--end").unwrap(), at("2026-12-05T12:00:00Z"));
        assert_eq!(parse_time("+1d", now, "--end").unwrap(), at("2026-12-06T10:00:00Z"));
        assert_eq!(parse_time("+45s", now, "--end").unwrap(), at("2026-12-05T10:00:45Z"));
        assert_eq!(parse_time("-1d", now, "--since").unwrap(), at("2026-12-04T10:00:00Z"));
        for bad in ["tomorrow", "+", "+5", "+5w", "+m", "-", "2026-12-05 22:00", "+99999999999999d", ""] {
            let e = parse_time(bad, now, "--end").unwrap_err();
            assert_eq!(e.http_status(), 400, "{bad}");
            assert!(e.to_string().starts_with(&format!("--end '{bad}' is not a time; expected an RFC 3339")), "{e}");
        }
    }

    #[test]
    fn a_window_needs_a_reason_a_future_end_and_an_end_after_its_start() {
        let now = at("2026-12-05T10:00:00Z");
        let (start, end) = (at("2026-12-05T22:00:00Z"), at("2026-12-06T02:00:00Z"));
        assert_eq!(
            check(Some("rack C"), Some(start), end, now).unwrap(),
            Times { scheduled_start: Some(start), ends_at: end }
        );
        // A start that is not in the future: active now.
        assert_eq!(check(Some("rack C"), Some(now), end, now).unwrap().scheduled_start, None);
        assert_eq!(check(Some("rack C"), None, end, now).unwrap().scheduled_start, None);
        let refused = [
            (None, None, end, "needs a reason"),
            (Some("  "), None, end, "needs a reason"),
            (Some("r"), None, now, "is not in the future"),
            (Some("r"), None, at("2026-12-05T09:00:00Z"), "is not in the future"),
            (Some("r"), Some(end), start, "is not after its start"),
            (Some("r"), Some(start), start, "is not after its start"),
        ];
        for (reason, start, end, message) in refused {
            let e = check(reason, start, end, now).unwrap_err();
            assert_eq!(e.http_status(), 400);
            assert!(e.to_string().contains(message), "{e}");
        }
    }

    #[test]
    fn extensions_move_the_end_later_only() {
        let now = at("2026-12-05T10:00:00Z");
        let current = at("2026-12-05T12:00:00Z");
        check_extension(current, at("2026-12-05T13:00:00Z"), now).unwrap();
        assert!(check_extension(current, current, now).unwrap_err().to_string().contains("not later than"));
        assert!(
            check_extension(current, at("2026-12-05T11:00:00Z"), now).unwrap_err().to_string().contains("not later")
        );
        assert!(check_extension(current, at("2026-12-05T09:00:00Z"), now).unwrap_err().to_string().contains("future"));
    }

    #[test]
    fn windows_overlap_when_they_share_a_moment() {
        let t = |h: u32| at(&format!("2026-12-05T{h:02}:00:00Z"));
        assert!(overlaps(t(1), Some(t(3)), t(2), Some(t(4))));
        assert!(overlaps(t(2), Some(t(4)), t(1), Some(t(3))));
        assert!(!overlaps(t(1), Some(t(2)), t(2), Some(t(3))), "back to back is not an overlap");
        assert!(overlaps(t(1), None, t(5), Some(t(6))), "an entry without an end overlaps everything after it");
        assert!(!overlaps(t(5), None, t(1), Some(t(2))));
        assert!(overlaps(t(1), None, t(0), None));
    }
}
