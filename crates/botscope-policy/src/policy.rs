//! A compiled policy and its one decision function.

use std::net::IpAddr;

use botscope_botid::IpRange;
use botscope_robotstxt::Matcher;
use regex::Regex;

use crate::model::{Action, Decision, Facts};
use crate::rate::{Rate, RateStore};

/// A rule's conditions, each optional; all that are given must hold.
#[derive(Debug, Clone, Default)]
pub struct Conditions {
    /// Registry names, lower-cased.
    pub bots: Option<Vec<String>>,
    /// Categories (the registry's, `unregistered-bot`, `browser`).
    pub categories: Option<Vec<String>>,
    /// Identities, as bits.
    pub identity: Option<u8>,
    /// Signature states, as bits.
    pub signature: Option<u8>,
    /// Networks.
    pub network: Option<Vec<IpRange>>,
    /// AS numbers.
    pub asn: Option<Vec<u32>>,
    /// The User-Agent pattern.
    pub user_agent: Option<Regex>,
    /// Methods, upper-case.
    pub method: Option<Vec<String>>,
    /// Path patterns (robots.txt syntax), compiled as one robots.txt.
    pub path: Option<PathSet>,
    /// `robots: disallowed` (true) or `allowed` (false).
    pub robots: Option<bool>,
    /// Lists, as bits.
    pub list: Option<u8>,
    /// The rate the key must be over.
    pub rate: Option<Rate>,
    /// `trapped:`: caught by one of these trap kinds (bits of
    /// [`TrapKind::bit`](crate::TrapKind::bit)), at most this long ago
    /// in milliseconds (`None`: while the catch is held).
    pub trapped: Option<(u8, Option<u64>)>,
}

/// Path patterns with `*` and `$`, matched by the robots.txt engine as
/// Google reads them: a path matches when a `Disallow` of one of them would
/// close it.
#[derive(Debug, Clone)]
pub struct PathSet {
    /// The patterns as written.
    pub patterns: Vec<String>,
    matcher: Matcher,
}

impl PathSet {
    /// The patterns, each a robots.txt path pattern (checked by the
    /// caller: no line breaks or `#`).
    pub fn new(patterns: Vec<String>) -> PathSet {
        PathSet::with_case(patterns, PathCase::Sensitive)
    }

    /// The same, matched without case under [`PathCase::Insensitive`]
    /// (the patterns folded here, the paths by [`Policy::decide`]).
    pub fn with_case(patterns: Vec<String>, case: PathCase) -> PathSet {
        let mut text = String::from("user-agent: *\n");
        for p in &patterns {
            text.push_str("disallow: ");
            let normal = crate::target::normalize_pattern(p);
            match case {
                PathCase::Sensitive => text.push_str(&normal),
                PathCase::Insensitive => text.push_str(&crate::target::fold_case(&normal)),
            }
            text.push('\n');
        }
        PathSet {
            matcher: Matcher::new(text.as_bytes()),
            patterns,
        }
    }

    /// Whether `path` (path and query, in normal form:
    /// [`normalize_target`](crate::normalize_target)) matches one of the
    /// patterns.
    pub fn matches(&self, path: &str) -> bool {
        !self
            .matcher
            .check_path("*", Self::normal(path).as_bytes())
            .allowed
    }

    /// [`PathSet::matches`], adding its work to `work` in the robots.txt
    /// engine's units (a wildcard match examines at most the path plus
    /// [`botscope_robotstxt::SCAN_PER_PATTERN_BYTE`] times the pattern,
    /// a unit per 32 bytes): linear in the path and the patterns however
    /// many `*` they hold.
    pub fn matches_counted(&self, path: &str, work: &mut u64) -> bool {
        let sel = self.matcher.select_counted("*", work);
        !self
            .matcher
            .check_selected_counted(&sel, Self::normal(path).as_bytes(), work)
            .allowed
    }

    fn normal(path: &str) -> std::borrow::Cow<'_, str> {
        if path.starts_with('/') {
            std::borrow::Cow::Borrowed(path)
        } else {
            // An absolute-form target (`http://host/p`) or `*`.
            std::borrow::Cow::Owned(
                String::from_utf8_lossy(&botscope_robotstxt::path_of(path.as_bytes())).into_owned(),
            )
        }
    }
}

/// How the application behind the gate compares paths (the policy's
/// `path_case:`): as written (`sensitive`, the default, as nginx and most
/// stacks), or without case (`insensitive`: Express's default router,
/// ASP.NET, IIS), where `/PRIVATE/x` is `/private/x`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PathCase {
    /// `/PRIVATE/x` is another path than `/private/x`.
    #[default]
    Sensitive,
    /// ASCII letters compared without case (escapes' digits are not
    /// letters: `%C3%A9` is `%C3%A9`).
    Insensitive,
}

impl PathCase {
    /// A path (in normal form) as this compares it.
    pub fn fold(self, path: &str) -> std::borrow::Cow<'_, str> {
        match self {
            PathCase::Sensitive => std::borrow::Cow::Borrowed(path),
            PathCase::Insensitive => crate::target::fold_case(path),
        }
    }
}

/// One rule.
#[derive(Debug, Clone)]
pub struct Rule {
    /// Its name (unique in the policy).
    pub name: String,
    /// A number derived from its name: its rate state survives a reload
    /// that moves it.
    pub id: u32,
    /// The line it starts on.
    pub line: u32,
    /// What it does.
    pub action: Action,
    /// When it applies.
    pub when: Conditions,
    /// Headers a `label` rule adds (name, value).
    pub headers: Vec<(String, String)>,
    /// What a `charge` rule asks for a page.
    pub price: Option<botscope_terms::Price>,
}

/// How much higher a `challenge` rule's rate is for a client holding a
/// pass: a pass raises the limit, it does not lift it.
pub const PASS_FACTOR: u32 = 10;
/// How much higher a `challenge` rule's rate is for subresources (counted
/// apart from pages): a gallery's thumbnails load, a flood of them is
/// limited.
pub const SUBRESOURCE_FACTOR: u32 = 10;

/// What a `challenge` rule does to a request whose other conditions hold.
enum Step {
    /// Not this rule's: go on to the next.
    Skip,
    /// Challenge (after a rate: the wait).
    Apply(Option<u64>),
    /// A subresource over its rate: limited, never challenged.
    Limit(u64),
}

/// A `challenge` rule's rate counts pages; subresources are counted apart
/// at [`SUBRESOURCE_FACTOR`] times the rate and limited over it, never
/// challenged (a challenge page in place of an image breaks the page a
/// person is reading); a pass multiplies both by [`PASS_FACTOR`], and a
/// rule without a rate does not apply to a client holding one.
fn challenge_step(rule: &Rule, f: &Facts, rates: &dyn RateStore) -> Step {
    let Some(rate) = &rule.when.rate else {
        return match (f.passed, f.navigation) {
            (true, _) => Step::Skip,
            (false, true) => Step::Apply(None),
            (false, false) => Step::Limit(60_000),
        };
    };
    let mut factor = 1u32;
    let mut id = rule.id;
    if f.passed {
        factor = factor.saturating_mul(PASS_FACTOR);
        id = id.wrapping_add(1);
    }
    if !f.navigation {
        factor = factor.saturating_mul(SUBRESOURCE_FACTOR);
        id = id.wrapping_add(2);
    }
    let scaled = Rate {
        count: rate.count.saturating_mul(factor),
        ..*rate
    };
    match (rates.hit(id, &scaled, f, true), f.navigation) {
        (None, _) => Step::Skip,
        (Some(wait), true) => Step::Apply(Some(wait)),
        (Some(wait), false) => Step::Limit(wait),
    }
}

/// Whether a path (in normal form) is a protocol file: `/robots.txt`, or
/// under `/.well-known/` (key directories, security.txt). A client that
/// cannot read them cannot obey them.
pub fn is_protocol_file(path: &str) -> bool {
    let p = path.split('?').next().unwrap_or(path);
    p == "/robots.txt" || p.starts_with("/.well-known/")
}

impl Rule {
    /// Whether the rule's `path:` names a protocol file itself (a pattern
    /// starting `/robots.txt` or `/.well-known`): only such a rule may
    /// refuse or challenge one.
    pub fn names_protocol_files(&self) -> bool {
        self.when.path.as_ref().is_some_and(|p| {
            p.patterns
                .iter()
                .any(|x| x.starts_with("/robots.txt") || x.starts_with("/.well-known"))
        })
    }

    /// Whether `f` meets every condition but the rate; `path` is
    /// `f.path` in normal form, `spelled` as the client spelled it (both
    /// folded as the policy's `path_case` says).
    fn holds(&self, f: &Facts, path: &str, spelled: &str) -> bool {
        self.holds_but_path(f) && self.holds_on_path(f, path, spelled)
    }

    /// Whether `f` meets every condition that does not read the path
    /// (nor the rate).
    fn holds_but_path(&self, f: &Facts) -> bool {
        let c = &self.when;
        if let Some(m) = c.identity
            && m & (1 << f.identity as u8) == 0
        {
            return false;
        }
        if let Some(m) = c.signature
            && m & (1 << f.signature as u8) == 0
        {
            return false;
        }
        if let Some(m) = c.list
            && m & f.lists == 0
        {
            return false;
        }
        if let Some(cats) = &c.categories
            && !cats.iter().any(|x| x == f.category)
        {
            return false;
        }
        if let Some(bots) = &c.bots
            && !f
                .bot
                .is_some_and(|b| bots.iter().any(|x| x.eq_ignore_ascii_case(b)))
        {
            return false;
        }
        if let Some(methods) = &c.method
            && !methods.iter().any(|m| m.eq_ignore_ascii_case(f.method))
        {
            return false;
        }
        if let Some(asns) = &c.asn
            && !f.asn.is_some_and(|a| asns.contains(&a))
        {
            return false;
        }
        if let Some(nets) = &c.network {
            let ip: IpAddr = botscope_botid::normalize(f.ip);
            if !nets.iter().any(|n| n.contains(ip)) {
                return false;
            }
        }
        if let Some((kinds, within)) = c.trapped
            && !f.trapped.by(kinds, within)
        {
            return false;
        }
        if let Some(re) = &c.user_agent
            && !re.is_match(f.user_agent)
        {
            return false;
        }
        true
    }

    /// Whether `f` meets the conditions on its path (`path:`,
    /// `robots:`).
    fn holds_on_path(&self, f: &Facts, path: &str, spelled: &str) -> bool {
        let c = &self.when;
        if let Some(p) = &c.path
            && !p.matches(path)
        {
            return false;
        }
        if let Some(want) = c.robots {
            // No robots.txt known: nothing is closed. Closed as served, or
            // as the client spelled it (a crawler reading robots.txt as
            // Google does compares the spelling it asks for).
            let closed = f
                .robots
                .is_some_and(|r| r(path) || (path != spelled && r(spelled)));
            if closed != want {
                return false;
            }
        }
        true
    }
}

/// A site owner's policy: rules tried in order, the first that matches
/// decides, `label` rules add their headers and go on, `default` decides
/// what no rule matched.
#[derive(Debug, Clone)]
pub struct Policy {
    /// The rules in order.
    pub rules: Vec<Rule>,
    /// What no rule decided.
    pub default: Action,
    /// Where it was read from.
    pub file: String,
    /// How paths are compared (`path_case:`).
    pub path_case: PathCase,
    /// The trap links the gate serves (`traps:`), none when absent.
    pub traps: Option<Traps>,
    /// The indices of the `challenge` rules, in order.
    pub(crate) challenges: Vec<usize>,
}

/// The policy's `traps:`: which trap links the gate serves and how it
/// counts what they catch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Traps {
    /// The kinds switched on ([`TrapKind::bit`](crate::TrapKind::bit)).
    pub kinds: u8,
    /// How long a catch is held, in milliseconds (`hold:`, a day by
    /// default).
    pub hold_ms: u64,
    /// Within how long a second distinct `anchor` link catches, in
    /// milliseconds (`window:`, ten minutes by default).
    pub window_ms: u64,
    /// Distinct addresses of one /24 (IPv4) or /48 (IPv6) that must be
    /// caught before the catch covers the whole network (`widen:`, 4 by
    /// default; 0 never widens).
    pub widen: u32,
    /// Networks never caught (`exempt:`), besides the clients known by
    /// their identity.
    pub exempt: Vec<IpRange>,
    /// `tarpit:`: a refusal of a caught client is held before it is
    /// sent, a second the first time, twice as long each time after for
    /// its network, up to `max_ms`, at most `held` at once (past them,
    /// sent at once).
    pub tarpit: Option<Tarpit>,
}

/// How a gate slows what its traps caught (`traps: tarpit:`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tarpit {
    /// The longest hold, in milliseconds (`max:`, 30 s by default).
    pub max_ms: u64,
    /// Refusals held at once at most (`held:`, 64 by default).
    pub held: u32,
}

impl Default for Tarpit {
    fn default() -> Tarpit {
        Tarpit {
            max_ms: 30_000,
            held: 64,
        }
    }
}

impl Default for Traps {
    fn default() -> Traps {
        Traps {
            kinds: 0,
            hold_ms: 86_400_000,
            window_ms: 600_000,
            widen: 4,
            exempt: Vec::new(),
            tarpit: None,
        }
    }
}

impl Traps {
    /// Whether `kind` is switched on.
    pub fn has(&self, kind: crate::TrapKind) -> bool {
        self.kinds & kind.bit() != 0
    }
}

impl Policy {
    /// The decision for one request. Pure but for `rates`, which counts the
    /// request against every `rate:` rule it reaches whose other
    /// conditions hold.
    ///
    /// `path:` and `robots:` judge the request's target in normal form
    /// ([`normalize_target`](crate::normalize_target)): the path the front
    /// server serves, however the client spelled it.
    pub fn decide(&self, f: &Facts, rates: &dyn RateStore) -> Decision<'_> {
        let normal = crate::target::normalize_target(f.path);
        let path = self.path_case.fold(&normal);
        let spelled = self.path_case.fold(f.path);
        let protocol = is_protocol_file(&path);
        let mut labels = Vec::new();
        for (i, rule) in self.rules.iter().enumerate() {
            if !rule.holds(f, &path, &spelled) {
                continue;
            }
            // robots.txt and /.well-known/ are refused, challenged or
            // charged only by a rule that names them.
            if protocol
                && matches!(
                    rule.action,
                    Action::Deny | Action::Challenge | Action::Charge | Action::License
                )
                && !rule.names_protocol_files()
            {
                continue;
            }
            let mut retry_after_ms = None;
            if rule.action == Action::Challenge {
                match challenge_step(rule, f, rates) {
                    Step::Skip => continue,
                    Step::Apply(wait) => retry_after_ms = wait,
                    Step::Limit(wait) => {
                        return Decision {
                            action: Action::Limit,
                            rule: &rule.name,
                            index: Some(i),
                            labels,
                            retry_after_ms: Some(wait),
                        };
                    }
                }
            } else if let Some(rate) = &rule.when.rate {
                // A label's rate adds the label and goes on; any other
                // rule's decides.
                match rates.hit(rule.id, rate, f, rule.action != Action::Label) {
                    None => continue,
                    Some(wait) => retry_after_ms = Some(wait),
                }
            }
            if rule.action == Action::Label {
                labels.push(i);
                continue;
            }
            return Decision {
                action: rule.action,
                rule: &rule.name,
                index: Some(i),
                labels,
                retry_after_ms,
            };
        }
        let default = match self.default {
            Action::Deny | Action::Challenge if protocol => Action::Allow,
            a => a,
        };
        Decision {
            action: default,
            rule: "default",
            index: None,
            labels,
            retry_after_ms: None,
        }
    }

    /// For a request `d` allowed: the first `challenge` rule whose
    /// conditions (its rate aside) held for `f`, or the `default` when it
    /// challenges, and what let the request through before it: the name
    /// of the `allow` rule that decided, or `protocol-file` when the
    /// rule passed over `/robots.txt` or `/.well-known/` (which only a
    /// rule naming them may challenge). `None` when no challenge was
    /// passed over, or `d` did not allow. A challenge's funnel counts
    /// these as exempt, by reason.
    pub fn exempted<'p>(&'p self, f: &Facts, d: &Decision<'p>) -> Option<(&'p str, &'p str)> {
        if d.action != Action::Allow {
            return None;
        }
        let after = d.index.map_or(0, |i| i + 1);
        let candidates = &self.challenges[self.challenges.partition_point(|&c| c < after)..];
        if candidates.is_empty() && self.default != Action::Challenge {
            return None;
        }
        // Without a deciding rule only a protocol file passed a challenge
        // over: a path that cannot be one (no `robots.txt`, `well-known`
        // or escape in any case) is told apart without normalizing it.
        // The path is normal-formed only when a rule's other conditions
        // held: the plain decision keeps its cost.
        let may_be_protocol = || {
            let p = f.path.as_bytes();
            memchr::memchr(b'%', p).is_some()
                || p.windows(10).any(|w| {
                    w.eq_ignore_ascii_case(b"robots.txt") || w.eq_ignore_ascii_case(b"well-known")
                })
        };
        if d.index.is_none() && !may_be_protocol() {
            return None;
        }
        let normal = || {
            let n = crate::target::normalize_target(f.path);
            let path = self.path_case.fold(&n).into_owned();
            let spelled = self.path_case.fold(f.path).into_owned();
            let protocol = is_protocol_file(&path);
            (path, spelled, protocol)
        };
        let mut known = None;
        let reason = match d.index {
            Some(i) => self.rules.get(i).map(|r| r.name.as_str())?,
            None => {
                let n = known.insert(normal());
                if !n.2 {
                    return None;
                }
                "protocol-file"
            }
        };
        for rule in candidates.iter().filter_map(|&c| self.rules.get(c)) {
            if !rule.holds_but_path(f) {
                continue;
            }
            // A rule that reads no path holds without one.
            if d.index.is_some() && rule.when.path.is_none() && rule.when.robots.is_none() {
                return Some((&rule.name, reason));
            }
            let (path, spelled, protocol) = known.get_or_insert_with(normal);
            if rule.holds_on_path(f, path, spelled)
                && (d.index.is_some() || (*protocol && !rule.names_protocol_files()))
            {
                return Some((&rule.name, reason));
            }
        }
        (self.default == Action::Challenge).then_some(("default", reason))
    }

    /// Whether any rule reads robots.txt (the caller may then skip
    /// preparing it).
    pub fn reads_robots(&self) -> bool {
        self.rules.iter().any(|r| r.when.robots.is_some())
    }

    /// The rule named `name`.
    pub fn rule(&self, name: &str) -> Option<&Rule> {
        self.rules.iter().find(|r| r.name == name)
    }
}

/// A rule's id: FNV-1a of its name.
pub fn rule_id(name: &str) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for b in name.bytes() {
        h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
    }
    h
}

/// What a policy refuses by name everywhere, as robots.txt can say it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Refused {
    /// Registry categories refused everywhere.
    pub categories: Vec<String>,
    /// Registry bots refused everywhere.
    pub bots: Vec<String>,
    /// Deny rules robots.txt cannot say (by path, rate, network …), by name.
    pub unsaid: Vec<String>,
}

impl Policy {
    /// The categories and bots whose every request a `deny` rule refuses
    /// (its only conditions are `bot` and `category`, and no
    /// earlier rule lets them through by those alone), for a robots.txt
    /// that tells crawlers so. Other deny rules are listed as unsaid.
    pub fn refused(&self) -> Refused {
        let mut out = Refused::default();
        for (i, r) in self.rules.iter().enumerate() {
            if r.action != Action::Deny {
                continue;
            }
            let c = &r.when;
            let by_name = (c.bots.is_some() || c.categories.is_some())
                && c.identity.is_none()
                && c.signature.is_none()
                && c.network.is_none()
                && c.asn.is_none()
                && c.user_agent.is_none()
                && c.method.is_none()
                && c.path.is_none()
                && c.robots.is_none()
                && c.list.is_none()
                && c.rate.is_none();
            // An earlier allow of every request of a category or bot.
            let let_through = |cat: Option<&str>, bot: Option<&str>| {
                self.rules[..i].iter().any(|e| {
                    e.action == Action::Allow
                        && e.when.path.is_none()
                        && e.when.rate.is_none()
                        && e.when.identity.is_none()
                        && (e
                            .when
                            .categories
                            .as_ref()
                            .is_some_and(|cs| cat.is_some_and(|x| cs.iter().any(|y| y == x)))
                            || e.when.bots.as_ref().is_some_and(|bs| {
                                bot.is_some_and(|x| bs.iter().any(|y| y.eq_ignore_ascii_case(x)))
                            }))
                })
            };
            if !by_name {
                out.unsaid.push(r.name.clone());
                continue;
            }
            match (&c.categories, &c.bots) {
                (Some(cats), None) => {
                    for cat in cats {
                        let said = cat != crate::UNREGISTERED_BOT && cat != crate::BROWSER;
                        if said && !let_through(Some(cat), None) && !out.categories.contains(cat) {
                            out.categories.push(cat.clone());
                        }
                    }
                }
                (None, Some(bots)) => {
                    for b in bots {
                        if !let_through(None, Some(b)) && !out.bots.contains(b) {
                            out.bots.push(b.clone());
                        }
                    }
                }
                _ => out.unsaid.push(r.name.clone()),
            }
        }
        out
    }
}
