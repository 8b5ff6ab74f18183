//! What a policy is made of, and what a request brings to it.

use std::net::IpAddr;

/// What a rule does to a request it matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Action {
    /// Let it through.
    Allow,
    /// Refuse it (403).
    Deny,
    /// Slow it down (429 with `Retry-After`).
    Limit,
    /// Ask it to prove it is a browser a person drives (a page with a
    /// no-JavaScript path and a proof of work).
    Challenge,
    /// Add the rule's headers and go on to the next rule.
    Label,
    /// Let it through for the rule's `price`, paid by a request whose Web
    /// Bot Auth signature verifies and covers its price header (pay per
    /// crawl over HTTP 402); quote the price to any other.
    Charge,
    /// Let it through with an RSL licence token (`Authorization: License`)
    /// that the licence server the site's RSL document names for the path
    /// says permits it; refuse any other with `WWW-Authenticate: License`.
    License,
}

impl Action {
    /// Every action, as written in a policy.
    pub const ALL: [(&'static str, Action); 7] = [
        ("allow", Action::Allow),
        ("deny", Action::Deny),
        ("limit", Action::Limit),
        ("challenge", Action::Challenge),
        ("label", Action::Label),
        ("charge", Action::Charge),
        ("license", Action::License),
    ];

    /// The name as written (`allow`, `deny`, `limit`, `challenge`, `label`,
    /// `charge`, `license`).
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Allow => "allow",
            Action::Deny => "deny",
            Action::Limit => "limit",
            Action::Challenge => "challenge",
            Action::Label => "label",
            Action::Charge => "charge",
            Action::License => "license",
        }
    }

    /// The action a name stands for.
    pub fn parse(s: &str) -> Option<Action> {
        Action::ALL.iter().find(|(n, _)| *n == s).map(|(_, a)| *a)
    }
}

/// Who the client is, as far as the evidence goes (`X-Bot-Identity`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Identity {
    /// Its claim holds: the operator's published addresses, forward-confirmed
    /// reverse DNS, or a registered agent's signature.
    Verified,
    /// Its claim is contradicted by evidence (never by the absence of it).
    Spoofed,
    /// It claims a registered bot and the evidence is not in (yet): reverse
    /// DNS pending or failed.
    Unverifiable,
    /// It claims a registered bot that has no verifier in the registry.
    Unknown,
    /// Its User-Agent claims no registered bot.
    Unclaimed,
}

impl Identity {
    /// Every identity, as written.
    pub const ALL: [(&'static str, Identity); 5] = [
        ("verified", Identity::Verified),
        ("spoofed", Identity::Spoofed),
        ("unverifiable", Identity::Unverifiable),
        ("unknown", Identity::Unknown),
        ("unclaimed", Identity::Unclaimed),
    ];

    /// The name as written.
    pub fn as_str(self) -> &'static str {
        Identity::ALL
            .iter()
            .find(|(_, i)| *i == self)
            .map_or("unknown", |(n, _)| n)
    }

    /// The identity a name stands for.
    pub fn parse(s: &str) -> Option<Identity> {
        Identity::ALL.iter().find(|(n, _)| *n == s).map(|(_, i)| *i)
    }

    fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

/// What the request's Web Bot Auth signature says (`X-Bot-Signature`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Signature {
    /// A signature that holds, with its agent's key.
    Verified,
    /// A signature that does not hold.
    Invalid,
    /// A signature that could not be checked (its keys are not known yet,
    /// or signatures are not checked).
    Unverified,
    /// No signature.
    None,
}

impl Signature {
    /// Every signature state, as written.
    pub const ALL: [(&'static str, Signature); 4] = [
        ("verified", Signature::Verified),
        ("invalid", Signature::Invalid),
        ("unverified", Signature::Unverified),
        ("none", Signature::None),
    ];

    /// The name as written.
    pub fn as_str(self) -> &'static str {
        Signature::ALL
            .iter()
            .find(|(_, s)| *s == self)
            .map_or("none", |(n, _)| n)
    }

    /// The state a name stands for.
    pub fn parse(s: &str) -> Option<Signature> {
        Signature::ALL
            .iter()
            .find(|(n, _)| *n == s)
            .map(|(_, x)| *x)
    }

    fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

/// A kind of trap link (the policy's `traps: kinds:`), each with its own
/// certainty.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TrapKind {
    /// A path that appears only as a `Disallow:` line of the robots.txt
    /// the gate serves: only a client that read robots.txt and did the
    /// opposite knows it. Caught on the first request.
    Robots,
    /// A link inside `<script type="ignore">`, which no HTML parser,
    /// browser or screen reader follows; only a crude link extractor does.
    /// Caught on the first request.
    Script,
    /// A hidden, `nofollow` link whose text says it is a trap: a person
    /// without CSS could still follow it once, so the first hit explains
    /// and a second distinct one within the window catches.
    Anchor,
}

impl TrapKind {
    /// Every kind, as written.
    pub const ALL: [(&'static str, TrapKind); 3] = [
        ("robots", TrapKind::Robots),
        ("script", TrapKind::Script),
        ("anchor", TrapKind::Anchor),
    ];

    /// The name as written.
    pub fn as_str(self) -> &'static str {
        TrapKind::ALL[self as usize].0
    }

    /// The kind a name stands for.
    pub fn parse(s: &str) -> Option<TrapKind> {
        TrapKind::ALL.iter().find(|(n, _)| *n == s).map(|(_, k)| *k)
    }

    /// Its bit in a set of kinds.
    pub fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

/// The catches a client has against it: for each [`TrapKind`], how long
/// ago (in milliseconds) it was last caught by one, if it was and the
/// catch is still held.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Trapped {
    /// By kind, in [`TrapKind`] order.
    pub age_ms: [Option<u64>; 3],
}

impl Trapped {
    /// Not caught.
    pub const NONE: Trapped = Trapped { age_ms: [None; 3] };

    /// Caught by `kind` `age_ms` ago (the latest catch of a kind counts).
    pub fn with(mut self, kind: TrapKind, age_ms: u64) -> Trapped {
        let slot = &mut self.age_ms[kind as usize];
        *slot = Some(slot.map_or(age_ms, |a| a.min(age_ms)));
        self
    }

    /// Whether a kind among `kinds` (bits) caught the client at most
    /// `within_ms` ago (any age when `None`).
    pub fn by(&self, kinds: u8, within_ms: Option<u64>) -> bool {
        TrapKind::ALL.iter().any(|(_, k)| {
            kinds & k.bit() != 0
                && self.age_ms[*k as usize].is_some_and(|a| within_ms.is_none_or(|w| a <= w))
        })
    }

    /// Whether any kind caught the client.
    pub fn any(&self) -> bool {
        self.age_ms.iter().any(Option::is_some)
    }
}

/// The category of a client whose User-Agent says it is a robot but names
/// no registered one (`python-requests`, `curl`, `Go-http-client`, a
/// scraper naming itself).
pub const UNREGISTERED_BOT: &str = "unregistered-bot";
/// The category of a client whose User-Agent is not a robot's (a browser,
/// or something posing as one).
pub const BROWSER: &str = "browser";

/// The lists of addresses a gate reads (`bots export`, `logs export-lists`)
/// that rules can name with `list:`.
pub const LISTS: [&str; 5] = [
    botscope_botid::ALL_OK,
    botscope_botid::OTHER,
    botscope_botid::UNDECLARED,
    botscope_botid::SUSPECT,
    DISOBEDIENT,
];

/// Robots an access log showed fetching what robots.txt closed to them.
pub const DISOBEDIENT: &str = "disobedient-bots";

/// The bit of a list name in [`Facts::lists`].
pub fn list_bit(name: &str) -> Option<u8> {
    LISTS.iter().position(|l| *l == name).map(|i| 1 << i)
}

pub(crate) fn identity_bits(ids: &[Identity]) -> u8 {
    ids.iter().fold(0, |m, i| m | i.bit())
}

pub(crate) fn signature_bits(s: &[Signature]) -> u8 {
    s.iter().fold(0, |m, x| m | x.bit())
}

/// What the gate (or a replayed log line) knows of one request: a value
/// the caller builds, no I/O behind it.
#[derive(Clone, Copy)]
pub struct Facts<'a> {
    /// The client's address.
    pub ip: IpAddr,
    /// The request method (`GET`).
    pub method: &'a str,
    /// The request target's path and query (`/a/b?c`).
    pub path: &'a str,
    /// The User-Agent (empty when none).
    pub user_agent: &'a str,
    /// Who the client is.
    pub identity: Identity,
    /// The registered bot it claims or signs as (registry name).
    pub bot: Option<&'a str>,
    /// Its category: the registry's (`search`, `ai-training` …),
    /// [`UNREGISTERED_BOT`] or [`BROWSER`].
    pub category: &'a str,
    /// Its signature.
    pub signature: Signature,
    /// The AS announcing its address, when an owner database knows.
    pub asn: Option<u32>,
    /// The lists holding its address ([`list_bit`] bits).
    pub lists: u8,
    /// Whether the robots.txt served to this client closes `path` to it
    /// (asked only when a rule has `robots:`; `None`: no robots.txt known).
    pub robots: Option<&'a dyn Fn(&str) -> bool>,
    /// The request's time, in milliseconds (the gate's clock, or the log's
    /// for a replay): rates are counted in it.
    pub now_ms: u64,
    /// A page a person navigates to, not a subresource of one (an image,
    /// a stylesheet, a script, a fetch): [`is_navigation`](crate::is_navigation).
    /// Only navigations count toward a `challenge` rule's rate, and a
    /// subresource is never challenged (allowed, or limited at ten times
    /// the rule's rate).
    pub navigation: bool,
    /// The client holds a challenge pass: a `challenge` rule's rate is ten
    /// times higher for it, and a `challenge` rule without a rate does
    /// not apply to it.
    pub passed: bool,
    /// The trap links that caught it (its address, or its network once
    /// enough of that network's addresses were caught).
    pub trapped: Trapped,
}

impl std::fmt::Debug for Facts<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Facts")
            .field("ip", &self.ip)
            .field("method", &self.method)
            .field("path", &self.path)
            .field("user_agent", &self.user_agent)
            .field("identity", &self.identity)
            .field("bot", &self.bot)
            .field("category", &self.category)
            .field("signature", &self.signature)
            .field("asn", &self.asn)
            .field("lists", &self.lists)
            .field("robots", &self.robots.is_some())
            .field("now_ms", &self.now_ms)
            .field("navigation", &self.navigation)
            .field("passed", &self.passed)
            .field("trapped", &self.trapped)
            .finish()
    }
}

/// The policy's answer for one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision<'p> {
    /// What to do (never [`Action::Label`]).
    pub action: Action,
    /// The deciding rule's name (`default` when none matched).
    pub rule: &'p str,
    /// The deciding rule's index, `None` for the default.
    pub index: Option<usize>,
    /// The `label` rules that matched on the way, in order.
    pub labels: Vec<usize>,
    /// For a rate that was exceeded: how long until the key is under it
    /// again, in milliseconds.
    pub retry_after_ms: Option<u64>,
}
