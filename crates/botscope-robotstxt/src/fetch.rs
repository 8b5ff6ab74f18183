//! The fetch policy for robots.txt, as pure functions: what a crawler does
//! with the answer it got when it asked for `/robots.txt`.
//!
//! RFC 9309 section 2.3 and Google's documentation:
//!
//! | answer | action |
//! |---|---|
//! | 2xx | parse the body (up to the size cap) |
//! | 3xx | follow up to 5 hops; after that, as if unavailable (allow all) |
//! | 4xx other than 429 | unavailable: allow all |
//! | 429, 5xx, network error | unreachable: disallow all; after 30 days unreachable, the last cached copy, else allow all |
//!
//! Under the 1996 draft, 401 and 403 mean disallow all, and a copy is kept
//! for 7 days when the response says nothing.
//!
//! The rule that `/robots.txt` itself is always allowed (RFC 9309 2.2.2)
//! belongs here, in the fetch layer: see [`is_robots_txt_path`].

use std::time::{Duration, SystemTime};

use crate::matcher::Semantics;
use crate::scan::DEFAULT_PARSE_CAP;

const HOUR: Duration = Duration::from_secs(3600);
const DAY: Duration = Duration::from_secs(24 * 3600);

/// The knobs of the fetch policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FetchPolicy {
    /// Which reading of status codes to apply.
    pub semantics: Semantics,
    /// Redirect hops to follow (RFC 9309: at least 5).
    pub max_redirects: u8,
    /// Bytes of body to parse (RFC 9309: at least 500 KiB).
    pub size_cap: usize,
    /// Cache lifetime when the response gives none.
    pub default_ttl: Duration,
    /// Longest cache lifetime, whatever the response says.
    pub max_ttl: Duration,
    /// Shortest cache lifetime, so that robots.txt is never fetched per page.
    pub min_ttl: Duration,
    /// How soon to retry after a server or network error without `Retry-After`.
    pub error_retry: Duration,
    /// How long robots.txt may be unreachable before the crawler stops
    /// treating the site as disallowed.
    pub unreachable_grace: Duration,
}

impl FetchPolicy {
    /// RFC 9309 as Google applies it: 24 hours by default and at most.
    pub fn google() -> Self {
        FetchPolicy {
            semantics: Semantics::Google,
            max_redirects: 5,
            size_cap: DEFAULT_PARSE_CAP,
            default_ttl: DAY,
            max_ttl: DAY,
            min_ttl: Duration::from_secs(60),
            error_retry: HOUR,
            unreachable_grace: 30 * DAY,
        }
    }

    /// The 1996 draft: 7 days by default; 401 and 403 disallow all.
    pub fn draft1996() -> Self {
        FetchPolicy {
            semantics: Semantics::Draft1996,
            default_ttl: 7 * DAY,
            max_ttl: 30 * DAY,
            ..FetchPolicy::google()
        }
    }

    /// The policy for the given semantics.
    pub fn for_semantics(semantics: Semantics) -> Self {
        match semantics {
            Semantics::Google => FetchPolicy::google(),
            Semantics::Draft1996 => FetchPolicy::draft1996(),
        }
    }
}

impl Default for FetchPolicy {
    fn default() -> Self {
        FetchPolicy::google()
    }
}

/// What came back for `GET /robots.txt`.
#[derive(Debug, Clone, Copy)]
pub struct FetchResponse<'a> {
    /// The HTTP status, or `None` when no response arrived (DNS failure,
    /// refused or reset connection, TLS failure, timeout).
    pub status: Option<u16>,
    /// Response headers, names in any case.
    pub headers: &'a [(&'a str, &'a str)],
    /// Redirect hops already followed to get here.
    pub redirect_hops: u8,
    /// Length of the body received (or announced), in bytes.
    pub body_len: u64,
    /// How long robots.txt has been unreachable, counting this attempt
    /// (zero when the previous attempt succeeded).
    pub unreachable_for: Duration,
    /// Whether an earlier good copy is cached.
    pub has_cached_copy: bool,
    /// The time of the response, for `Expires` and `Retry-After` dates.
    pub now: SystemTime,
}

/// What to do with the response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FetchAction {
    /// Parse the first `max_bytes` of the body.
    Parse {
        /// Bytes to parse.
        max_bytes: usize,
        /// True when the body is longer than that.
        truncated: bool,
    },
    /// No restrictions: robots.txt is unavailable.
    AllowAll,
    /// Nothing may be fetched: robots.txt is unreachable.
    DisallowAll,
    /// Fetch this location next (absolute or relative to the request URL).
    FollowRedirect {
        /// The `Location` header.
        location: String,
    },
    /// Keep using the cached copy.
    UseCachedCopy,
}

impl FetchAction {
    /// A stable name: `parse`, `allow-all`, `disallow-all`,
    /// `follow-redirect`, `use-cached-copy`.
    pub fn as_str(&self) -> &'static str {
        match self {
            FetchAction::Parse { .. } => "parse",
            FetchAction::AllowAll => "allow-all",
            FetchAction::DisallowAll => "disallow-all",
            FetchAction::FollowRedirect { .. } => "follow-redirect",
            FetchAction::UseCachedCopy => "use-cached-copy",
        }
    }
}

/// The policy's decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchDecision {
    /// What to do.
    pub action: FetchAction,
    /// Why, in a few words, citing the rule.
    pub reason: &'static str,
    /// How long the outcome holds before robots.txt is fetched again.
    pub expires_in: Duration,
}

/// Looks up a header by name, case-insensitively.
pub fn header<'a>(headers: &[(&str, &'a str)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k.trim().eq_ignore_ascii_case(name))
        .map(|(_, v)| v.trim())
}

/// Decides what to do with a robots.txt response.
///
/// ```
/// use std::time::{Duration, SystemTime};
/// use botscope_robotstxt::{decide_fetch, FetchAction, FetchPolicy, FetchResponse};
///
/// let r = FetchResponse {
///     status: Some(503), headers: &[], redirect_hops: 0, body_len: 0,
///     unreachable_for: Duration::ZERO, has_cached_copy: true, now: SystemTime::now(),
/// };
/// assert_eq!(decide_fetch(&FetchPolicy::google(), &r).action, FetchAction::DisallowAll);
/// let later = FetchResponse { unreachable_for: Duration::from_secs(31 * 86400), ..r };
/// assert_eq!(decide_fetch(&FetchPolicy::google(), &later).action, FetchAction::UseCachedCopy);
/// ```
pub fn decide_fetch(policy: &FetchPolicy, r: &FetchResponse<'_>) -> FetchDecision {
    let lifetime = || cache_lifetime(policy, r.headers, r.now);
    let unreachable = |reason: &'static str| {
        let retry = header(r.headers, "retry-after")
            .and_then(|v| parse_retry_after(v, r.now))
            .unwrap_or(policy.error_retry)
            .clamp(policy.min_ttl, policy.max_ttl);
        if r.unreachable_for >= policy.unreachable_grace {
            let action = if r.has_cached_copy {
                FetchAction::UseCachedCopy
            } else {
                FetchAction::AllowAll
            };
            let reason = if r.has_cached_copy {
                "unreachable for longer than the grace period: use the last good copy (RFC 9309 2.3.1.4)"
            } else {
                "unreachable for longer than the grace period and no copy: allow all (RFC 9309 2.3.1.4)"
            };
            return FetchDecision {
                action,
                reason,
                expires_in: retry,
            };
        }
        FetchDecision {
            action: FetchAction::DisallowAll,
            reason,
            expires_in: retry,
        }
    };
    let Some(status) = r.status else {
        return unreachable(
            "network error: disallow all until robots.txt can be fetched (RFC 9309 2.3.1.4)",
        );
    };
    match status {
        200..=299 => {
            let cap = policy.size_cap;
            let truncated = usize::try_from(r.body_len).map_or(true, |n| n > cap);
            FetchDecision {
                action: FetchAction::Parse {
                    max_bytes: cap,
                    truncated,
                },
                reason: if truncated {
                    "success; the body is over the size cap and only its start is parsed (RFC 9309 2.5)"
                } else {
                    "success: parse the body (RFC 9309 2.3.1.1)"
                },
                expires_in: lifetime(),
            }
        }
        304 if r.has_cached_copy => FetchDecision {
            action: FetchAction::UseCachedCopy,
            reason: "not modified: the cached copy is still good",
            expires_in: lifetime(),
        },
        300..=399 => match header(r.headers, "location").filter(|l| !l.is_empty()) {
            Some(loc) if r.redirect_hops < policy.max_redirects => FetchDecision {
                action: FetchAction::FollowRedirect {
                    location: loc.to_owned(),
                },
                reason: "redirect: follow it (RFC 9309 2.3.1.2)",
                expires_in: Duration::ZERO,
            },
            Some(_) => FetchDecision {
                action: FetchAction::AllowAll,
                reason: "too many redirects: robots.txt is unavailable, allow all (RFC 9309 2.3.1.2)",
                expires_in: lifetime(),
            },
            None => FetchDecision {
                action: FetchAction::AllowAll,
                reason: "redirect without a Location: robots.txt is unavailable, allow all",
                expires_in: lifetime(),
            },
        },
        429 => unreachable("too many requests: treated as a server error, disallow all"),
        401 | 403 if policy.semantics == Semantics::Draft1996 => FetchDecision {
            action: FetchAction::DisallowAll,
            reason: "access restricted: the 1996 draft reads 401/403 as disallow all",
            expires_in: lifetime(),
        },
        400..=499 => FetchDecision {
            action: FetchAction::AllowAll,
            reason: "unavailable (4xx): no restrictions (RFC 9309 2.3.1.3)",
            expires_in: lifetime(),
        },
        500..=599 => unreachable(
            "server error: disallow all until robots.txt can be fetched (RFC 9309 2.3.1.4)",
        ),
        _ => unreachable("unexpected status: treated as unreachable, disallow all"),
    }
}

/// How long a fetched robots.txt may be cached: `Cache-Control: max-age`
/// (or `s-maxage`), else `Expires` relative to `Date`, else the default;
/// `no-store` and `no-cache` mean the shortest lifetime. Always within
/// the policy's bounds.
pub fn cache_lifetime(policy: &FetchPolicy, headers: &[(&str, &str)], now: SystemTime) -> Duration {
    let mut from_headers = None;
    let mut max_age = None;
    let mut s_maxage = None;
    for (name, value) in headers {
        if !name.trim().eq_ignore_ascii_case("cache-control") {
            continue;
        }
        for directive in value.split(',') {
            let (k, v) = directive
                .split_once('=')
                .map_or((directive, None), |(k, v)| (k, Some(v)));
            let k = k.trim().to_ascii_lowercase();
            let secs = v.and_then(|v| v.trim().trim_matches('"').parse::<u64>().ok());
            match k.as_str() {
                "no-store" | "no-cache" => from_headers = Some(Duration::ZERO),
                "max-age" => max_age = max_age.or(secs),
                "s-maxage" => s_maxage = s_maxage.or(secs),
                _ => {}
            }
        }
    }
    if from_headers.is_none() {
        from_headers = max_age.or(s_maxage).map(Duration::from_secs);
    }
    if from_headers.is_none()
        && let Some(expires) = header(headers, "expires")
    {
        let base = header(headers, "date")
            .and_then(|d| httpdate::parse_http_date(d).ok())
            .unwrap_or(now);
        // An invalid Expires means "already expired" (RFC 9111 5.3).
        from_headers = Some(
            httpdate::parse_http_date(expires)
                .ok()
                .and_then(|e| e.duration_since(base).ok())
                .unwrap_or(Duration::ZERO),
        );
    }
    from_headers
        .unwrap_or(policy.default_ttl)
        .clamp(policy.min_ttl, policy.max_ttl.max(policy.min_ttl))
}

/// Reads `Retry-After`: seconds, or an HTTP date.
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// True when `path` is `/robots.txt` itself, which RFC 9309 2.2.2 makes
/// always allowed: a crawler fetches it whatever it says.
pub fn is_robots_txt_path(path: &[u8]) -> bool {
    let end = path
        .iter()
        .position(|&b| b == b'?' || b == b'#')
        .unwrap_or(path.len());
    &path[..end] == b"/robots.txt"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resp(
        status: Option<u16>,
        headers: &'static [(&'static str, &'static str)],
    ) -> FetchResponse<'static> {
        FetchResponse {
            status,
            headers,
            redirect_hops: 0,
            body_len: 100,
            unreachable_for: Duration::ZERO,
            has_cached_copy: false,
            now: httpdate::parse_http_date("Sun, 22 Nov 2026 10:00:00 GMT")
                .unwrap_or(SystemTime::UNIX_EPOCH),
        }
    }

    fn act(p: &FetchPolicy, r: &FetchResponse<'_>) -> &'static str {
        decide_fetch(p, r).action.as_str()
    }

    #[test]
    fn status_table() {
        let g = FetchPolicy::google();
        let d = FetchPolicy::draft1996();
        let cases: &[(Option<u16>, &str, &str)] = &[
            (Some(200), "parse", "parse"),
            (Some(204), "parse", "parse"),
            (Some(301), "allow-all", "allow-all"), // no Location
            (Some(400), "allow-all", "allow-all"),
            (Some(401), "allow-all", "disallow-all"),
            (Some(403), "allow-all", "disallow-all"),
            (Some(404), "allow-all", "allow-all"),
            (Some(410), "allow-all", "allow-all"),
            (Some(429), "disallow-all", "disallow-all"),
            (Some(500), "disallow-all", "disallow-all"),
            (Some(503), "disallow-all", "disallow-all"),
            (Some(103), "disallow-all", "disallow-all"),
            (None, "disallow-all", "disallow-all"),
        ];
        for (status, google, draft) in cases {
            let r = resp(*status, &[]);
            assert_eq!(act(&g, &r), *google, "google {status:?}");
            assert_eq!(act(&d, &r), *draft, "draft {status:?}");
        }
    }

    #[test]
    fn redirects_up_to_five_hops() {
        let g = FetchPolicy::google();
        let mut r = resp(
            Some(301),
            &[("Location", "https://www.example.com/robots.txt")],
        );
        for hops in 0..5 {
            r.redirect_hops = hops;
            assert_eq!(act(&g, &r), "follow-redirect", "hop {hops}");
        }
        r.redirect_hops = 5;
        assert_eq!(act(&g, &r), "allow-all");
    }

    #[test]
    fn unreachable_for_thirty_days() {
        let g = FetchPolicy::google();
        let mut r = resp(Some(503), &[("Retry-After", "120")]);
        r.unreachable_for = 29 * DAY;
        let dec = decide_fetch(&g, &r);
        assert_eq!(dec.action, FetchAction::DisallowAll);
        assert_eq!(dec.expires_in, Duration::from_secs(120));
        r.unreachable_for = 30 * DAY;
        assert_eq!(act(&g, &r), "allow-all");
        r.has_cached_copy = true;
        assert_eq!(act(&g, &r), "use-cached-copy");
    }

    #[test]
    fn size_cap() {
        let mut r = resp(Some(200), &[]);
        r.body_len = 600 * 1024;
        assert_eq!(
            decide_fetch(&FetchPolicy::google(), &r).action,
            FetchAction::Parse {
                max_bytes: 500 * 1024,
                truncated: true
            }
        );
    }

    #[test]
    fn cache_lifetimes() {
        let g = FetchPolicy::google();
        let d = FetchPolicy::draft1996();
        let now = resp(None, &[]).now;
        assert_eq!(cache_lifetime(&g, &[], now), DAY);
        assert_eq!(cache_lifetime(&d, &[], now), 7 * DAY);
        assert_eq!(
            cache_lifetime(&g, &[("cache-control", "public, max-age=3600")], now),
            HOUR
        );
        assert_eq!(
            cache_lifetime(&g, &[("Cache-Control", "max-age=999999")], now),
            DAY,
            "bounded by max_ttl"
        );
        assert_eq!(
            cache_lifetime(&d, &[("Cache-Control", "max-age=999999")], now),
            Duration::from_secs(999_999)
        );
        assert_eq!(
            cache_lifetime(&g, &[("Cache-Control", "no-store")], now),
            g.min_ttl
        );
        let exp = [
            ("Date", "Sun, 22 Nov 2026 10:00:00 GMT"),
            ("Expires", "Sun, 22 Nov 2026 12:00:00 GMT"),
        ];
        assert_eq!(cache_lifetime(&g, &exp, now), 2 * HOUR);
        assert_eq!(cache_lifetime(&g, &[("Expires", "0")], now), g.min_ttl);
    }

    #[test]
    fn retry_after_forms() {
        let now = resp(None, &[]).now;
        assert_eq!(parse_retry_after("30", now), Some(Duration::from_secs(30)));
        assert_eq!(
            parse_retry_after("Sun, 22 Nov 2026 10:05:00 GMT", now),
            Some(Duration::from_secs(300))
        );
        assert_eq!(parse_retry_after("soon", now), None);
    }

    #[test]
    fn robots_txt_path() {
        assert!(is_robots_txt_path(b"/robots.txt"));
        assert!(is_robots_txt_path(b"/robots.txt?x=1"));
        assert!(!is_robots_txt_path(b"/robots.txt.bak"));
    }
}
