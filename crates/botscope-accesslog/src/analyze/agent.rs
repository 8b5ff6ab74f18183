//! What the caller says about User-Agents and robots.txt, and the time window.

/// What the caller's bot registry says about one User-Agent. Computed once
/// per distinct User-Agent ([`Identify`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Agent {
    /// The robot the User-Agent declares: the registry's name, or the
    /// product token of an unregistered robot's User-Agent.
    pub robot: Option<String>,
    /// The robot is in the registry.
    pub registered: bool,
    /// The registry's category (`search`, `ai`, `seo`, `monitor` …).
    pub category: Option<String>,
    /// The User-Agent belongs to an uptime or performance monitor.
    pub monitor: bool,
    /// Why the User-Agent is taken for a robot's.
    pub reason: Option<String>,
    /// The product token whose robots.txt group applies; `None` for the
    /// `*` group.
    pub token: Option<String>,
    /// The kind of client the User-Agent names (`browser`, `crawler`,
    /// `feed-reader`, `preview`, `library`, …; the caller's classifier
    /// says); `None` when the caller does not type clients.
    pub client_type: Option<&'static str>,
}

/// User-Agent → [`Agent`]; implemented over the bot registry by the caller.
pub trait Identify: Sync {
    /// What `user_agent` (absent when the log has `-`) says.
    fn identify(&self, user_agent: Option<&str>) -> Agent;
}

/// What [`Policy::groups`] found for a token: the policy's own numbers
/// (one per version of robots.txt), shared by every User-Agent of the
/// token.
pub type Groups = std::sync::Arc<[u32]>;

/// The site's robots.txt over time; implemented by the caller over the
/// robots.txt engine.
pub trait Policy: Sync {
    /// Whether the group of `token` (`None`: the `*` group) disallowed
    /// `target` at `time`; `None` when no robots.txt was in force then.
    fn disallowed(&self, token: Option<&str>, target: &str, time: i64) -> Option<bool>;
    /// The groups of `token` in every version, found once per distinct
    /// User-Agent for [`Policy::disallowed_in`], which then judges each
    /// request without finding them again; `None` (the default): each
    /// request is asked of [`Policy::disallowed`] by its token.
    fn groups(&self, _token: Option<&str>) -> Option<Groups> {
        None
    }
    /// [`Policy::disallowed`] for a token whose groups [`Policy::groups`]
    /// found: the same answer.
    fn disallowed_in(&self, _groups: &Groups, _target: &str, _time: i64) -> Option<bool> {
        None
    }
    /// The Crawl-delay, in seconds, for `token` at `time`.
    fn crawl_delay(&self, token: Option<&str>, time: i64) -> Option<f64>;
    /// What the group of `token` asks at `time`, for compliance by
    /// strictness ([`crate::Compliance`]); `Unknown` unless the policy
    /// says.
    fn directive(&self, _token: Option<&str>, _time: i64) -> crate::Directive {
        crate::Directive::Unknown
    }
    /// The version of robots.txt in force at `time`: its index among the
    /// versions and its start (`None`: from the beginning); `None` when
    /// none was.
    fn version(&self, _time: i64) -> Option<(usize, Option<i64>)> {
        None
    }
    /// Whether any request can be judged at all (`false`: no robots.txt,
    /// and the fold need not look the agent's token up for it).
    fn judges(&self) -> bool {
        true
    }
}

/// No robots.txt known: nothing is judged.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoPolicy;

impl Policy for NoPolicy {
    fn disallowed(&self, _: Option<&str>, _: &str, _: i64) -> Option<bool> {
        None
    }
    fn crawl_delay(&self, _: Option<&str>, _: i64) -> Option<f64> {
        None
    }
    fn judges(&self) -> bool {
        false
    }
}

/// A time window: records outside it are counted and skipped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Window {
    /// Inclusive start (seconds since the epoch).
    pub since: Option<i64>,
    /// Exclusive end.
    pub until: Option<i64>,
}

impl Window {
    pub(super) fn contains(&self, t: i64) -> bool {
        self.since.is_none_or(|s| t >= s) && self.until.is_none_or(|u| t < u)
    }
}
