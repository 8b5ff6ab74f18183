//! What a client is, and why: the behavioural signals and their
//! thresholds.

use super::*;

/// What a client is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Class {
    /// A person with a browser.
    Human,
    /// A robot that says so in its User-Agent.
    DeclaredBot,
    /// A robot with a browser's User-Agent (or none).
    UndeclaredBot,
    /// Probes for weak spots.
    Scanner,
    /// An uptime or performance monitor.
    Monitor,
}

impl Class {
    /// Every class, in report order.
    pub const ALL: [Class; 5] = [
        Class::Human,
        Class::DeclaredBot,
        Class::UndeclaredBot,
        Class::Scanner,
        Class::Monitor,
    ];

    /// The stable name (`declared_bot`).
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Human => "human",
            Class::DeclaredBot => "declared_bot",
            Class::UndeclaredBot => "undeclared_bot",
            Class::Scanner => "scanner",
            Class::Monitor => "monitor",
        }
    }

    /// Position in [`Class::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// True for every class but humans.
    pub fn is_robot(self) -> bool {
        self != Class::Human
    }
}

/// One reason for a class: a stable code and a sentence with the figures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reason {
    /// Stable code (`robots-txt`, `no-assets` …), documented in
    /// docs/log-analysis.md.
    pub code: &'static str,
    /// The evidence, in words.
    pub detail: String,
}

pub(super) fn reason(code: &'static str, detail: String) -> Reason {
    Reason { code, detail }
}

/// Thresholds of the behavioural signals (documented in docs/log-analysis.md).
/// Requests robots.txt closed to a robot that make it disobedient: a
/// signal when classifying, a place in the `disobedient-bots` list when
/// exporting. One or two can be a crawler's cached robots.txt or a race
/// with an edit; three are a habit.
pub const DISOBEDIENT_REQUESTS: u32 = 3;

/// A disobedient robot: a robot (declared or not) whose address was not
/// verified, with at least [`DISOBEDIENT_REQUESTS`] requests robots.txt
/// closed to it. A robot in no registry that names itself
/// (`python-requests`) is one; a verified crawler is not, whatever its
/// breaches (a stale cached robots.txt must not put a search engine on a
/// list meant for a 403: the report shows its breaches).
pub fn is_disobedient(class: Class, disallowed: u32, check: Option<crate::Check>) -> bool {
    matches!(class, Class::DeclaredBot | Class::UndeclaredBot)
        && disallowed >= DISOBEDIENT_REQUESTS
        && check != Some(crate::Check::Verified)
}

pub(super) mod limits {
    /// Pages before the asset and referer signals count.
    pub const MIN_PAGES: u32 = 3;
    /// Share of pages without a Referer that counts as "no referer".
    pub const NO_REFERER_SHARE: f64 = 0.9;
    /// Pages in one session, and pages per minute, that count as fast.
    pub const FAST_PAGES: u32 = 10;
    /// Pages per minute over a session that count as fast.
    pub const FAST_RATE: f64 = 20.0;
    /// Requests before HEAD and error shares count.
    pub const MIN_REQUESTS: u64 = 4;
    /// Probes that make a scanner whatever else it did.
    pub const PROBES: u32 = 3;
    /// Share of probing requests that makes a scanner.
    pub const PROBE_SHARE: f64 = 0.25;
    /// Requests to one or two paths that make a steady poller a monitor.
    pub const MONITOR_REQUESTS: u64 = 10;
    /// Seconds a poller must span to be a monitor.
    pub const MONITOR_SPAN: i64 = 600;
    /// Disallowed requests that count as a signal.
    pub const DISALLOWED: u32 = super::DISOBEDIENT_REQUESTS;
}

/// Peak pages per minute over the client's sessions with at least
/// `FAST_PAGES` pages.
pub(super) fn peak_rate(c: History<'_>) -> Option<(f64, u32)> {
    // No session has more pages than the client.
    if c.pages < limits::FAST_PAGES {
        return None;
    }
    c.sessions()
        .filter(|s| s.pages >= limits::FAST_PAGES)
        .map(|s| {
            let minutes = ((s.end - s.start) as f64 / 60.0).max(1.0 / 60.0);
            (f64::from(s.pages) / minutes, s.pages)
        })
        .max_by(|a, b| a.0.total_cmp(&b.0))
}

pub(super) fn share(n: u64, of: u64) -> f64 {
    if of == 0 { 0.0 } else { n as f64 / of as f64 }
}

/// Classifies one client from its counters and its User-Agent, with the
/// reasons (for every class but human). `no_user_agent`: the log had `-`.
pub fn classify(c: History<'_>, agent: &Agent, no_user_agent: bool) -> (Class, Vec<Reason>) {
    let mut say = Say(Some(Vec::new()));
    let class = decide(c, agent, no_user_agent, &mut say);
    let reasons = match class {
        Class::Human => Vec::new(),
        _ => say.0.unwrap_or_default(),
    };
    (class, reasons)
}

/// The class [`classify`] gives, without writing its reasons (the
/// analysis keeps only the class; the report writes the reasons of the
/// clients it shows).
pub(super) fn class_of(c: History<'_>, agent: &Agent, no_user_agent: bool) -> Class {
    decide(c, agent, no_user_agent, &mut Say(None))
}

/// Where [`decide`] puts its reasons: nowhere when only the class is
/// wanted, so that no sentence is written for nothing.
struct Say(Option<Vec<Reason>>);

impl Say {
    fn push(&mut self, code: &'static str, detail: impl FnOnce() -> String) {
        if let Some(v) = &mut self.0 {
            v.push(reason(code, detail()));
        }
    }
}

/// [`classify`]'s decision, its reasons told to `say`.
fn decide(c: History<'_>, agent: &Agent, no_user_agent: bool, say: &mut Say) -> Class {
    let errors = u64::from(c.status[3]) + u64::from(c.status[4]);
    let probing = u64::from(c.probes) + u64::from(c.odd_methods);
    // Scanners: probes for weak spots. A registered robot never is one.
    if !agent.registered
        && probing > 0
        && (probing >= u64::from(limits::PROBES)
            || share(probing, c.requests) >= limits::PROBE_SHARE)
    {
        if c.probes > 0 {
            say.push("probes", || {
                format!(
                    "{} of {} requests probe for weak spots",
                    c.probes, c.requests
                )
            });
        }
        if c.odd_methods > 0 {
            say.push("odd-method", || {
                format!(
                    "{} requests with a method no web client sends",
                    c.odd_methods
                )
            });
        }
        if errors > 0 {
            say.push("errors", || {
                format!("{errors} of {} requests answered 4xx/5xx", c.requests)
            });
        }
        return Class::Scanner;
    }
    if agent.monitor {
        say.push("monitor-ua", || {
            agent
                .reason
                .clone()
                .unwrap_or_else(|| "the User-Agent is a monitor's".into())
        });
        return Class::Monitor;
    }
    if agent.robot.is_some() {
        say.push("declared", || {
            agent
                .reason
                .clone()
                .unwrap_or_else(|| "the User-Agent names a robot".into())
        });
        return Class::DeclaredBot;
    }
    // A steady poller of one or two paths, loading nothing else.
    if c.requests >= limits::MONITOR_REQUESTS
        && c.distinct_paths() <= 2
        && c.assets == 0
        && c.last() - c.first() >= limits::MONITOR_SPAN
    {
        say.push("poller", || {
            format!(
                "{} requests to {} path(s) over {} minutes, nothing else",
                c.requests,
                c.distinct_paths(),
                (c.last() - c.first()) / 60
            )
        });
        return Class::Monitor;
    }
    // Undeclared robots: one strong signal, or two weak ones.
    let mut strong = 0;
    if c.robots_txt > 0 {
        strong += 1;
        say.push("robots-txt", || {
            format!("fetched robots.txt {} time(s)", c.robots_txt)
        });
    }
    if no_user_agent {
        strong += 1;
        say.push("no-ua", || "sends no User-Agent".into());
    }
    if c.crawler_only > 0 {
        strong += 1;
        say.push("crawler-paths", || {
            format!(
                "{} request(s) for files only crawlers look for (sitemaps, ads.txt, security.txt)",
                c.crawler_only
            )
        });
    }
    if c.quick_posts > 0 {
        strong += 1;
        say.push("quick-post", || {
            format!(
                "{} form POST(s) 2 seconds or less after the previous request",
                c.quick_posts
            )
        });
    }
    let mut weak = 0;
    if c.pages >= limits::MIN_PAGES && c.assets == 0 {
        weak += 1;
        say.push("no-assets", || {
            format!("{} pages and no styles, scripts or images", c.pages)
        });
    }
    if c.pages >= limits::MIN_PAGES
        && share(u64::from(c.pages_without_referer), u64::from(c.pages)) >= limits::NO_REFERER_SHARE
    {
        weak += 1;
        say.push("no-referer", || {
            format!(
                "{} of {} pages without a Referer",
                c.pages_without_referer, c.pages
            )
        });
    }
    if let Some((rate, pages)) = peak_rate(c)
        && rate >= limits::FAST_RATE
    {
        weak += 1;
        say.push("fast", || {
            format!("{rate:.0} pages/min over a session of {pages} pages")
        });
    }
    if c.requests >= limits::MIN_REQUESTS && share(u64::from(c.head), c.requests) >= 0.5 {
        weak += 1;
        say.push("head", || {
            format!("{} of {} requests are HEAD", c.head, c.requests)
        });
    }
    if c.requests >= limits::MIN_REQUESTS && share(errors, c.requests) >= 0.5 {
        weak += 1;
        say.push("errors", || {
            format!("{errors} of {} requests answered 4xx/5xx", c.requests)
        });
    }
    if c.disallowed >= limits::DISALLOWED {
        weak += 1;
        say.push("disallowed", || {
            format!(
                "{} requests robots.txt disallows for every robot",
                c.disallowed
            )
        });
    }
    if c.absolute > 0 || probing > 0 {
        weak += 1;
        if c.absolute > 0 {
            say.push("absolute-uri", || {
                format!(
                    "{} request(s) with a full URL, as proxies are probed",
                    c.absolute
                )
            });
        } else {
            say.push("probes", || {
                format!("{probing} of {} requests probe for weak spots", c.requests)
            });
        }
    }
    if strong > 0 || weak >= 2 {
        Class::UndeclaredBot
    } else {
        Class::Human
    }
}
