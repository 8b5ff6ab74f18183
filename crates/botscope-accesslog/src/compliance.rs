//! How far a robot obeyed robots.txt, measured as Kim et al. (2025,
//! "Scrapers selectively respect robots.txt directives") measure it from
//! access logs: a robot's requests split into sessions at 5 minutes
//! without a request; each session is judged under the directive its
//! robots.txt group held when the session began (nothing, a Crawl-delay,
//! some paths closed, everything closed); it complies when it fetched no
//! path closed to it and kept any Crawl-delay. Beside that, per version of
//! the file: whether the robot read the new file before it went on, and
//! what it fetched that the new file closed.

use serde::Serialize;

use crate::analyze::{Policy, Second};
use crate::time::format_rfc3339;

/// How a server answered a request for a closed path, in the buckets of
/// the industry panels that set stated policy beside enforcement (HasData's
/// AI Crawler Block Index, 2026): `answered` (2xx: the robot got the
/// page), `redirected` (3xx), `blocked` (401, 403), `payment-required`
/// (402), `rate-limited` (429), `other-4xx`, `error` (5xx), `other`. A
/// challenge page is a 403 or a 200 to a log; it counts as what it was
/// answered.
pub const ANSWERS: [&str; 8] = [
    "answered",
    "redirected",
    "blocked",
    "payment-required",
    "rate-limited",
    "other-4xx",
    "error",
    "other",
];

/// The [`ANSWERS`] bucket of a status code.
pub fn answer_of(status: u16) -> usize {
    match status {
        200..=299 => 0,
        300..=399 => 1,
        401 | 403 => 2,
        402 => 3,
        429 => 4,
        400..=499 => 5,
        500..=599 => 6,
        _ => 7,
    }
}

/// Stated versus enforced: a robot's requests for paths its robots.txt
/// closed, from its verified addresses, by how the server answered them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Enforcement {
    /// Requests for closed paths from the robot's verified addresses.
    pub closed_requests: u64,
    /// Of them, per answer ([`ANSWERS`]), the answers that happened.
    pub answers: std::collections::BTreeMap<&'static str, u64>,
}

impl Enforcement {
    /// Adds one client's answers.
    pub fn add(&mut self, answers: &[u32; ANSWERS.len()]) {
        for (k, n) in answers.iter().enumerate() {
            if *n > 0 {
                self.closed_requests += u64::from(*n);
                *self.answers.entry(ANSWERS[k]).or_default() += u64::from(*n);
            }
        }
    }

    /// Closed requests the server answered with the page (2xx).
    pub fn answered(&self) -> u64 {
        self.answers.get("answered").copied().unwrap_or(0)
    }
}

/// Seconds without a request that end a session in the study (5 minutes).
pub const STUDY_SESSION_GAP: i64 = 300;

/// What a robot's robots.txt group asks of it, from the most lenient to
/// the strictest (the study's levels).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Directive {
    /// The group closes nothing and sets no Crawl-delay.
    Nothing,
    /// A Crawl-delay and no closed path.
    CrawlDelay,
    /// Some paths closed, `/` open.
    DisallowSome,
    /// `/` closed.
    DisallowAll,
    /// No robots.txt known at that time.
    Unknown,
}

impl Directive {
    /// Every level, in the order of the tables.
    pub const ALL: [Directive; 5] = [
        Directive::Nothing,
        Directive::CrawlDelay,
        Directive::DisallowSome,
        Directive::DisallowAll,
        Directive::Unknown,
    ];

    /// `nothing`, `crawl-delay`, `disallow-some`, `disallow-all`, `unknown`.
    pub fn as_str(self) -> &'static str {
        match self {
            Directive::Nothing => "nothing",
            Directive::CrawlDelay => "crawl-delay",
            Directive::DisallowSome => "disallow-some",
            Directive::DisallowAll => "disallow-all",
            Directive::Unknown => "unknown",
        }
    }

    /// A directive compliance can be judged under (something was asked).
    pub fn asks(self) -> bool {
        matches!(
            self,
            Directive::CrawlDelay | Directive::DisallowSome | Directive::DisallowAll
        )
    }
}

/// A robot's sessions that began under one directive.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Under {
    /// The directive in force when the sessions began.
    pub directive: Directive,
    /// Sessions.
    pub sessions: u64,
    /// Of them, sessions that fetched robots.txt.
    pub sessions_reading_robots_txt: u64,
    /// Requests in them.
    pub requests: u64,
    /// Requests for paths closed to the robot when they were made.
    pub closed_requests: u64,
    /// Requests sooner after the one before than the Crawl-delay then in
    /// force.
    pub crawl_delay_breaches: u64,
    /// Sessions with no closed request and no Crawl-delay breach.
    pub compliant_sessions: u64,
    /// `compliant_sessions / sessions`, for a directive that asks
    /// something; `None` under `nothing` and `unknown`.
    pub compliance: Option<f64>,
}

/// A robot's requests while one version of robots.txt was in force.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UnderVersion {
    /// The version (an index into the report's `robots_txt`).
    pub version: usize,
    /// In force from (RFC 3339; `None`: from the beginning).
    pub from: Option<String>,
    /// Requests.
    pub requests: u64,
    /// Fetches of robots.txt.
    pub robots_txt_fetches: u64,
    /// Requests for paths this version closed to the robot.
    pub closed_requests: u64,
    /// Of them, made after the robot had read robots.txt under this
    /// version (it knew, and fetched them anyway).
    pub closed_after_reading: u64,
    /// The robot read robots.txt before (or in the same second as) its
    /// first other request under this version; `None` when it made no
    /// other request.
    pub read_first: Option<bool>,
    /// Its first request for a path this version closed.
    pub first_closed_request: Option<String>,
}

/// A robot's compliance: per directive and per version of robots.txt.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Compliance {
    /// The inactivity that ends a session, in seconds.
    pub session_gap_s: i64,
    /// Sessions.
    pub sessions: u64,
    /// Sessions that fetched robots.txt.
    pub sessions_reading_robots_txt: u64,
    /// Per directive in force at a session's start, strictest last; only
    /// directives the robot met.
    pub by_directive: Vec<Under>,
    /// Per version of robots.txt the robot made requests under.
    pub by_version: Vec<UnderVersion>,
}

#[derive(Default)]
struct Tally {
    sessions: u64,
    reading: u64,
    requests: u64,
    closed: u64,
    breaches: u64,
    compliant: u64,
}

/// A session being read.
struct Session {
    directive: Directive,
    reading: bool,
    requests: u64,
    closed: u64,
    breaches: u64,
}

impl Compliance {
    /// The compliance of a robot whose group is `token`'s, from its
    /// request seconds (sorted, each once), under `policy`. Costs one
    /// pass over the seconds, with one policy question per second.
    pub fn of(seconds: &[Second], policy: &dyn Policy, token: Option<&str>) -> Compliance {
        let mut tallies: [Tally; 5] = Default::default();
        let mut versions: Vec<(UnderVersion, Option<i64>)> = Vec::new();
        let mut session: Option<Session> = None;
        let mut prev: Option<i64> = None;
        let close = |s: Session, tallies: &mut [Tally; 5]| {
            let k = Directive::ALL
                .iter()
                .position(|d| *d == s.directive)
                .unwrap_or(4);
            let t = &mut tallies[k];
            t.sessions += 1;
            t.reading += u64::from(s.reading);
            t.requests += s.requests;
            t.closed += s.closed;
            t.breaches += s.breaches;
            t.compliant += u64::from(s.closed == 0 && s.breaches == 0);
        };
        for sec in seconds {
            let n = u64::from(sec.requests);
            if prev.is_none_or(|p| sec.t - p > STUDY_SESSION_GAP) {
                if let Some(s) = session.take() {
                    close(s, &mut tallies);
                }
                session = Some(Session {
                    directive: policy.directive(token, sec.t),
                    reading: false,
                    requests: 0,
                    closed: 0,
                    breaches: 0,
                });
            }
            let delay = policy.crawl_delay(token, sec.t).filter(|d| *d > 0.0);
            let mut breaches = 0;
            if let Some(d) = delay {
                breaches += n - 1;
                if prev.is_some_and(|p| ((sec.t - p) as f64) < d) {
                    breaches += 1;
                }
            }
            if let Some(s) = session.as_mut() {
                s.reading |= sec.robots_txt > 0;
                s.requests += n;
                s.closed += u64::from(sec.closed);
                s.breaches += breaches;
            }
            prev = Some(sec.t);
            if let Some((version, from)) = policy.version(sec.t) {
                if versions.last().is_none_or(|(v, _)| v.version != version) {
                    versions.push((
                        UnderVersion {
                            version,
                            from: from.map(format_rfc3339),
                            requests: 0,
                            robots_txt_fetches: 0,
                            closed_requests: 0,
                            closed_after_reading: 0,
                            read_first: None,
                            first_closed_request: None,
                        },
                        None,
                    ));
                }
                if let Some((v, read_at)) = versions.last_mut() {
                    let others = sec.requests - sec.robots_txt.min(sec.requests);
                    if sec.robots_txt > 0 && read_at.is_none() {
                        *read_at = Some(sec.t);
                    }
                    if others > 0 && v.read_first.is_none() {
                        v.read_first = Some(read_at.is_some());
                    }
                    v.requests += n;
                    v.robots_txt_fetches += u64::from(sec.robots_txt);
                    v.closed_requests += u64::from(sec.closed);
                    if read_at.is_some_and(|r| r < sec.t) {
                        v.closed_after_reading += u64::from(sec.closed);
                    }
                    if sec.closed > 0 && v.first_closed_request.is_none() {
                        v.first_closed_request = Some(format_rfc3339(sec.t));
                    }
                }
            }
        }
        if let Some(s) = session.take() {
            close(s, &mut tallies);
        }
        let by_directive: Vec<Under> = Directive::ALL
            .iter()
            .zip(tallies)
            .filter(|(_, t)| t.sessions > 0)
            .map(|(d, t)| Under {
                directive: *d,
                sessions: t.sessions,
                sessions_reading_robots_txt: t.reading,
                requests: t.requests,
                closed_requests: t.closed,
                crawl_delay_breaches: t.breaches,
                compliant_sessions: t.compliant,
                compliance: d
                    .asks()
                    .then(|| (t.compliant as f64 / t.sessions as f64 * 1e6).round() / 1e6),
            })
            .collect();
        Compliance {
            session_gap_s: STUDY_SESSION_GAP,
            sessions: by_directive.iter().map(|u| u.sessions).sum(),
            sessions_reading_robots_txt: by_directive
                .iter()
                .map(|u| u.sessions_reading_robots_txt)
                .sum(),
            by_directive,
            by_version: versions.into_iter().map(|(v, _)| v).collect(),
        }
    }
}

impl Compliance {
    /// Sessions judged: those begun under a directive that asks
    /// something.
    pub fn judged_sessions(&self) -> u64 {
        self.by_directive
            .iter()
            .filter(|u| u.directive.asks())
            .map(|u| u.sessions)
            .sum()
    }

    /// Of the judged sessions, those that complied.
    pub fn compliant_sessions(&self) -> u64 {
        self.by_directive
            .iter()
            .filter(|u| u.directive.asks())
            .map(|u| u.compliant_sessions)
            .sum()
    }

    /// Per directive, the sessions of several robots together (the
    /// study's table: compliance by strictness).
    pub fn total<'a>(robots: impl IntoIterator<Item = &'a Compliance>) -> Vec<Under> {
        let mut out: Vec<Under> = Vec::new();
        for c in robots {
            for u in &c.by_directive {
                match out.iter_mut().find(|o| o.directive == u.directive) {
                    Some(o) => {
                        o.sessions += u.sessions;
                        o.sessions_reading_robots_txt += u.sessions_reading_robots_txt;
                        o.requests += u.requests;
                        o.closed_requests += u.closed_requests;
                        o.crawl_delay_breaches += u.crawl_delay_breaches;
                        o.compliant_sessions += u.compliant_sessions;
                    }
                    None => out.push(u.clone()),
                }
            }
        }
        out.sort_by_key(|u| u.directive);
        for u in &mut out {
            u.compliance = u.directive.asks().then(|| {
                (u.compliant_sessions as f64 / u.sessions.max(1) as f64 * 1e6).round() / 1e6
            });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Version 0 from the start: `/private` closed, Crawl-delay 10 from
    /// t = 0; version 1 from t = 10,000: everything closed.
    struct Two;

    impl Policy for Two {
        fn disallowed(&self, _: Option<&str>, target: &str, time: i64) -> Option<bool> {
            Some(time >= 10_000 || target.starts_with("/private"))
        }
        fn crawl_delay(&self, _: Option<&str>, time: i64) -> Option<f64> {
            (time < 10_000).then_some(10.0)
        }
        fn directive(&self, _: Option<&str>, time: i64) -> Directive {
            if time >= 10_000 {
                Directive::DisallowAll
            } else {
                Directive::DisallowSome
            }
        }
        fn version(&self, time: i64) -> Option<(usize, Option<i64>)> {
            Some(if time >= 10_000 {
                (1, Some(10_000))
            } else {
                (0, None)
            })
        }
    }

    fn sec(t: i64, requests: u32, robots_txt: u32, closed: u32) -> Second {
        Second {
            t,
            requests,
            robots_txt,
            closed,
        }
    }

    #[test]
    fn sessions_split_at_five_minutes_and_are_judged_by_their_start() {
        let s = [
            // Session 1: reads robots.txt, paces at 20 s, complies.
            sec(0, 1, 1, 0),
            sec(20, 1, 0, 0),
            sec(40, 1, 0, 0),
            // Session 2 (gap 1,000 s): two requests 5 s apart, one closed.
            sec(1_040, 1, 0, 0),
            sec(1_045, 1, 0, 1),
            // Session 3 under version 1: one request, closed, no reading.
            sec(20_000, 1, 0, 1),
            // Session 4: reads, then fetches a closed path anyway.
            sec(30_000, 1, 1, 0),
            sec(30_010, 2, 0, 2),
        ];
        let c = Compliance::of(&s, &Two, None);
        assert_eq!(c.sessions, 4);
        assert_eq!(c.sessions_reading_robots_txt, 2);
        let some = &c.by_directive[0];
        assert_eq!(some.directive, Directive::DisallowSome);
        assert_eq!(
            (some.sessions, some.requests, some.closed_requests),
            (2, 5, 1)
        );
        assert_eq!(some.crawl_delay_breaches, 1, "5 s after the one before");
        assert_eq!(some.compliant_sessions, 1);
        assert_eq!(some.compliance, Some(0.5));
        let all = &c.by_directive[1];
        assert_eq!(all.directive, Directive::DisallowAll);
        assert_eq!((all.sessions, all.compliant_sessions), (2, 0));
        assert_eq!(all.compliance, Some(0.0));
        assert_eq!(c.by_version.len(), 2);
        let v1 = &c.by_version[1];
        assert_eq!(v1.from.as_deref(), Some("1970-01-01T02:46:40Z"));
        assert_eq!(v1.read_first, Some(false), "it came back without reading");
        assert_eq!((v1.closed_requests, v1.closed_after_reading), (3, 2));
        assert_eq!(
            v1.first_closed_request.as_deref(),
            Some("1970-01-01T05:33:20Z")
        );
        assert_eq!(c.by_version[0].read_first, Some(true));
        assert_eq!((c.judged_sessions(), c.compliant_sessions()), (4, 1));
        let t = Compliance::total([&c, &c]);
        assert_eq!(t.len(), 2);
        assert_eq!((t[0].sessions, t[0].compliant_sessions), (4, 2));
        assert_eq!(t[0].compliance, Some(0.5));
        assert_eq!(t[1].compliance, Some(0.0));
    }

    #[test]
    fn answers_fall_in_the_panels_buckets() {
        let mut e = Enforcement::default();
        let mut a = [0u32; ANSWERS.len()];
        for s in [200, 204, 301, 403, 401, 402, 429, 404, 503, 999] {
            a[answer_of(s)] += 1;
        }
        e.add(&a);
        assert_eq!(e.closed_requests, 10);
        assert_eq!(e.answered(), 2);
        assert_eq!(e.answers["blocked"], 2);
        assert_eq!(e.answers["payment-required"], 1);
        assert_eq!(e.answers["rate-limited"], 1);
        assert_eq!(e.answers["other-4xx"], 1);
        assert_eq!(e.answers["error"], 1);
        assert_eq!(e.answers["other"], 1);
    }

    #[test]
    fn no_robots_txt_judges_nothing() {
        let s = [sec(0, 3, 0, 0), sec(1_000, 1, 0, 0)];
        let c = Compliance::of(&s, &crate::NoPolicy, None);
        assert_eq!(c.sessions, 2);
        assert_eq!(c.by_directive.len(), 1);
        assert_eq!(c.by_directive[0].directive, Directive::Unknown);
        assert_eq!(c.by_directive[0].compliance, None);
        assert!(c.by_version.is_empty());
    }
}
