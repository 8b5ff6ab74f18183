//! The verification decision: from an IP, a User-Agent, the registry and
//! (when asked for) DNS answers, one verdict. DNS answers come in as
//! values; the `botscope-dns` crate fetches them.

use std::net::IpAddr;

use serde::{Deserialize, Serialize};

use crate::ipset::normalize;
use crate::registry::{BotEntry, Combine, Registry};
use crate::ua::UaInfo;

/// The outcome of verifying one client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// The claimed bot's verifiers agree: all of them, or one for an
    /// `any-of` entry.
    Verified,
    /// The User-Agent claims a registered bot and evidence contradicts it:
    /// FCrDNS answered and failed, or the address is outside the list of a
    /// bot verified by its list (alone, or as well as by FCrDNS).
    Spoofed,
    /// The answer needed could not be had (DNS timeout, SERVFAIL, refused;
    /// or only FCrDNS could tell and DNS was not allowed).
    Unverifiable,
    /// No bot is claimed, but the address is in a registered bot's set.
    UnclaimedBotIp,
    /// Nothing to verify: not a registered bot, or no verifier for it.
    Unknown,
}

impl Verdict {
    /// The stable name (`verified`, `spoofed`, `unverifiable`,
    /// `unclaimed-bot-ip`, `unknown`).
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Verified => "verified",
            Verdict::Spoofed => "spoofed",
            Verdict::Unverifiable => "unverifiable",
            Verdict::UnclaimedBotIp => "unclaimed-bot-ip",
            Verdict::Unknown => "unknown",
        }
    }
}

/// Why a DNS question got no usable answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DnsFailure {
    /// No answer in time.
    Timeout,
    /// The server failed (SERVFAIL).
    ServerFailure,
    /// The server refused.
    Refused,
    /// Anything else that is not an answer.
    Other(String),
}

impl std::fmt::Display for DnsFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DnsFailure::Timeout => f.write_str("timeout"),
            DnsFailure::ServerFailure => f.write_str("server failure"),
            DnsFailure::Refused => f.write_str("refused"),
            DnsFailure::Other(s) => f.write_str(s),
        }
    }
}

/// The answers to one DNS question: records (empty for NXDOMAIN or no
/// data, which are answers), or a failure.
pub type DnsAnswer<T> = Result<Vec<T>, DnsFailure>;

/// What DNS said about an address: its PTR names, and each name's
/// addresses.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FcrdnsEvidence {
    /// The reverse lookup.
    pub ptr: Option<DnsAnswer<String>>,
    /// Forward lookups (A and AAAA) of PTR names, by name.
    pub forward: Vec<(String, DnsAnswer<IpAddr>)>,
    /// Whether the same servers know the verification domains (`true`:
    /// the name exists), asked when an answer was negative: a resolver
    /// that says NXDOMAIN for `googlebot.com` too is not evidence.
    pub zones: Vec<(String, Result<bool, DnsFailure>)>,
    /// Answers taken from a cache rather than asked now: the question
    /// (`PTR`, `A/AAAA NAME`, `SOA ZONE`) and how long ago its resolver
    /// gave it, when known.
    pub cached: Vec<(String, Option<std::time::Duration>)>,
}

/// PTR names of one address looked up at most (those inside the bot's
/// domains only): a hostile reverse zone cannot make one address cost
/// more than this many forward lookups, which run at once.
pub const MAX_PTR_NAMES: usize = 5;

/// The result of an FCrDNS check against an entry's domains.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fcrdns {
    /// A PTR name in an allowed domain resolves back to the address.
    Pass {
        /// The confirming names.
        hostnames: Vec<String>,
    },
    /// DNS answered, and the answer contradicts the claim.
    Fail {
        /// Why.
        reason: String,
        /// PTR names seen.
        hostnames: Vec<String>,
    },
    /// DNS gave no usable answer.
    Unavailable {
        /// Why.
        reason: String,
    },
}

/// True when `host` is `domain` or ends with `.domain`, on label
/// boundaries (`crawl.evilgooglebot.com` is not `googlebot.com`).
pub fn in_domain(host: &str, domain: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    let domain = domain.trim_end_matches('.').to_ascii_lowercase();
    host == domain
        || host
            .strip_suffix(&domain)
            .is_some_and(|rest| rest.ends_with('.'))
}

/// The zones whose existence makes a resolver's negative answers count,
/// for an FCrDNS check against `domains` of `ip`: the domains, or the
/// reverse tree when any domain is allowed.
pub fn trust_zones(ip: IpAddr, domains: &[String]) -> Vec<String> {
    if domains.is_empty() {
        vec![match normalize(ip) {
            IpAddr::V4(_) => "in-addr.arpa".to_owned(),
            IpAddr::V6(_) => "ip6.arpa".to_owned(),
        }]
    } else {
        domains.to_vec()
    }
}

/// The PTR names to look up forward, in order: those inside `domains`
/// (all when empty), at most [`MAX_PTR_NAMES`].
pub fn names_to_confirm<'a>(names: &'a [String], domains: &[String]) -> Vec<&'a String> {
    names
        .iter()
        .filter(|n| domains.is_empty() || domains.iter().any(|d| in_domain(n, d)))
        .take(MAX_PTR_NAMES)
        .collect()
}

/// Whether a negative answer counts: `Ok` when the servers answered for
/// one of the trust zones, else why not.
fn negative_counts(ev: &FcrdnsEvidence) -> Result<(), String> {
    if ev.zones.iter().any(|(_, r)| *r == Ok(true)) {
        return Ok(());
    }
    if let Some((zone, Err(f))) = ev.zones.iter().find(|(_, r)| r.is_err()) {
        return Err(format!(
            "the answer is negative and the resolver could not be checked ({zone}: {f})"
        ));
    }
    if ev.zones.is_empty() {
        return Err("the answer is negative and the resolver was not checked".into());
    }
    let zones: Vec<&str> = ev.zones.iter().map(|(z, _)| z.as_str()).collect();
    Err(format!(
        "the resolver denies {} exists too, so its negative answers are not evidence",
        zones.join(" and ")
    ))
}

/// Forward-confirmed reverse DNS: a PTR name of `ip` inside `domains` (any
/// domain when empty) must resolve back to `ip`. Fails only on evidence:
/// PTR names all outside the domains, names that resolve elsewhere, or
/// negative answers from a resolver that knows the domains exist.
pub fn check_fcrdns(ip: IpAddr, domains: &[String], ev: &FcrdnsEvidence) -> Fcrdns {
    let ip = normalize(ip);
    let names = match &ev.ptr {
        None => {
            return Fcrdns::Unavailable {
                reason: "no reverse lookup was made".into(),
            };
        }
        Some(Err(f)) => {
            return Fcrdns::Unavailable {
                reason: format!("reverse lookup failed: {f}"),
            };
        }
        Some(Ok(names)) => names,
    };
    let names: Vec<String> = names
        .iter()
        .map(|n| n.trim_end_matches('.').to_ascii_lowercase())
        .collect();
    if names.is_empty() {
        return match negative_counts(ev) {
            Ok(()) => Fcrdns::Fail {
                reason: format!("{ip} has no PTR record"),
                hostnames: Vec::new(),
            },
            Err(why) => Fcrdns::Unavailable {
                reason: format!("{ip} has no PTR record, but {why}"),
            },
        };
    }
    let allowed = names_to_confirm(&names, domains);
    if allowed.is_empty() {
        return Fcrdns::Fail {
            reason: format!("PTR {} is outside {}", names.join(", "), domains.join(", ")),
            hostnames: names.clone(),
        };
    }
    let (mut unavailable, mut elsewhere, mut empty) = (None, None, None);
    for name in allowed {
        let answer = ev
            .forward
            .iter()
            .find(|(n, _)| n.trim_end_matches('.').eq_ignore_ascii_case(name))
            .map(|(_, a)| a);
        match answer {
            Some(Ok(addrs)) if addrs.iter().any(|a| normalize(*a) == ip) => {
                return Fcrdns::Pass {
                    hostnames: vec![name.clone()],
                };
            }
            None => {
                unavailable.get_or_insert(format!("no forward lookup of {name} was made"));
            }
            Some(Err(f)) => {
                unavailable.get_or_insert(format!("forward lookup of {name} failed: {f}"));
            }
            Some(Ok(addrs)) if addrs.is_empty() => {
                empty.get_or_insert(format!("{name} has no A/AAAA record"));
            }
            Some(Ok(addrs)) => {
                let shown: Vec<String> = addrs.iter().map(ToString::to_string).collect();
                elsewhere
                    .get_or_insert(format!("{name} resolves to {}, not {ip}", shown.join(", ")));
            }
        }
    }
    if let Some(reason) = elsewhere {
        return Fcrdns::Fail {
            reason,
            hostnames: names.clone(),
        };
    }
    if let Some(reason) = unavailable {
        return Fcrdns::Unavailable { reason };
    }
    let reason = empty.unwrap_or_default();
    match negative_counts(ev) {
        Ok(()) => Fcrdns::Fail {
            reason,
            hostnames: names.clone(),
        },
        Err(why) => Fcrdns::Unavailable {
            reason: format!("{reason}, but {why}"),
        },
    }
}

/// Who an address is registered to, from the IP-owner databases: its
/// autonomous system and the country it is placed in. Every field is
/// `None` when no database knows (or none is installed).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owner {
    /// The AS number that announces the address.
    #[serde(default)]
    pub asn: Option<u32>,
    /// The organisation the AS is registered to.
    #[serde(default)]
    pub as_org: Option<String>,
    /// ISO 3166-1 alpha-2 country code.
    #[serde(default)]
    pub country: Option<String>,
    /// The database is much newer than the request (addresses change
    /// hands): the network is shown, but it is not evidence.
    #[serde(skip)]
    pub stale: bool,
}

impl Owner {
    /// `AS15169 (Google LLC)`, or `AS15169` without an organisation.
    pub fn network(&self) -> Option<String> {
        let asn = self.asn?;
        Some(match &self.as_org {
            Some(o) => format!("AS{asn} ({o})"),
            None => format!("AS{asn}"),
        })
    }
}

/// Where owners of addresses come from (the IP-owner databases of
/// `botscope-ipdb`, or nothing).
pub trait Owners {
    /// The owner of `ip` now; the default (all unknown) when not known.
    fn owner(&self, ip: IpAddr) -> Owner;

    /// The owner of `ip` for a request made at `when` (Unix seconds):
    /// marked stale when the database is much newer than the request.
    fn owner_at(&self, ip: IpAddr, when: i64) -> Owner {
        let _ = when;
        self.owner(ip)
    }
}

/// No IP-owner database: every owner is unknown.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoOwners;

impl Owners for NoOwners {
    fn owner(&self, _: IpAddr) -> Owner {
        Owner::default()
    }
}

/// One verdict, with what it rests on. Field names are a stable contract
/// (`botscope verify --format json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verification {
    /// The address.
    pub ip: IpAddr,
    /// The User-Agent, if one was given.
    pub user_agent: Option<String>,
    /// The User-Agent is a robot's.
    pub is_bot: bool,
    /// The kind of client ([`crate::ClientType`]: `browser`, `crawler`,
    /// `feed-reader`, `preview`, `library`, `os-service`, `media-player`,
    /// `headless`, `monitor`, `scanner`, `unknown`); a crawler's registry
    /// category is `category`.
    #[serde(default)]
    pub client_type: crate::ClientType,
    /// The registered bot the User-Agent claims.
    pub claimed_bot: Option<String>,
    /// The claimed (or owning) bot's category.
    pub category: Option<String>,
    /// The verdict.
    pub verdict: Verdict,
    /// The methods that were applied (`ip`, `fcrdns`).
    pub methods: Vec<String>,
    /// PTR names seen (confirming ones for a verified client).
    pub hostnames: Vec<String>,
    /// Why, in one sentence.
    pub reason: String,
    /// The address's registered network and country (`asn`, `as_org`,
    /// `country`: null when no IP-owner database knows).
    #[serde(flatten)]
    pub owner: Owner,
    /// The request's Web Bot Auth signature, when a request was examined
    /// (`verify --request`, the gate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<SignatureEvidence>,
}

/// What a request's HTTP message signature says (`signature` of a
/// verdict).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignatureEvidence {
    /// `verified`, `invalid` or `unverified`.
    pub outcome: String,
    /// The signature agent (`Signature-Agent` URL) the signature names.
    pub agent: Option<String>,
    /// The key's id (its JWK thumbprint).
    pub keyid: Option<String>,
    /// Why, in one phrase.
    pub reason: String,
    /// The registered bot whose operator signs as `agent`: null for an
    /// agent no entry names (signed, an identity without an operator).
    pub bot: Option<String>,
    /// Who the signature is attributed to: the agent URL's identifier
    /// (draft-ietf-webbotauth-httpsig-protocol-01: the URL resolved, its
    /// query discarded, normalized) when its keys were fetched from it,
    /// else the key's thumbprint URI (RFC 9278).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identifier: Option<String>,
    /// Each signature of the request, checked on its own (JSON objects:
    /// outcome, reason, label, agent, its form and reading, identifier,
    /// keyid, times, notes).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub signatures: Vec<serde_json::Value>,
    /// What the outcome does not say (a member ignored for its
    /// parameters, no `Signature-Agent`, plain http).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl SignatureEvidence {
    /// The evidence of a request's signature verdict: the one that
    /// decided, and every signature in `signatures`.
    pub fn from_verdict(v: &botscope_httpsig::Verdict) -> SignatureEvidence {
        SignatureEvidence {
            outcome: v.outcome.as_str().to_owned(),
            agent: v.agent.clone(),
            keyid: v.keyid.clone(),
            reason: v.reason.to_string(),
            bot: None,
            identifier: v.identifier(),
            signatures: v.each_json(),
            notes: v.notes.clone(),
        }
    }
}

/// Adds a request's signature to a verdict. A signature that holds, from
/// an agent a registry entry names, verifies that bot (method
/// `signature`) whatever the address says; one from an agent no entry
/// names is reported as signed by that agent and changes nothing else; an
/// invalid one is shown with its reason and is not, by itself, evidence
/// of spoofing.
pub fn with_signature(registry: &Registry, v: &mut Verification, mut sig: SignatureEvidence) {
    // By identifier: a signature verified with a key held by other means
    // is attributed to the key alone, never to the URL it names.
    let bot = match (&sig.outcome[..], &sig.identifier, &sig.agent) {
        ("verified", Some(id), _) => registry.signed_by_identifier(id),
        ("verified", None, Some(agent)) => registry.signed_by(agent),
        _ => None,
    };
    sig.bot = bot.map(|b| b.name.clone());
    match (sig.outcome.as_str(), bot) {
        ("verified", Some(bot)) => {
            let agent = sig.agent.as_deref().unwrap_or_default();
            let claim = match v.claimed_bot.as_deref() {
                Some(c) if !c.eq_ignore_ascii_case(&bot.name) => {
                    format!(" (its User-Agent claims {c})")
                }
                _ => String::new(),
            };
            v.reason = format!(
                "signed by {agent}, the signature agent of {}{claim}",
                bot.name
            );
            v.claimed_bot = Some(bot.name.clone());
            v.category = bot.category.map(|c| c.as_str().to_owned());
            v.client_type = crate::ClientType::of_category(bot.category);
            v.is_bot = true;
            v.verdict = Verdict::Verified;
            v.methods.retain(|m| m != "signature");
            v.methods.insert(0, "signature".to_owned());
        }
        ("verified", None) => {
            v.reason = format!(
                "{}; signed by {}, an agent no registry entry names",
                v.reason,
                sig.agent.as_deref().unwrap_or("(no agent)")
            );
        }
        ("invalid", _) => {
            v.reason = format!("{}; its signature is invalid ({})", v.reason, sig.reason);
        }
        _ => {}
    }
    v.signature = Some(sig);
}

impl Verification {
    /// `VERDICT<TAB>IP<TAB>CLAIMED-BOT<TAB>REASON` (`-` for no claim),
    /// control and bidi characters escaped (a reason quotes DNS names and
    /// User-Agents, which strangers write).
    pub fn text_line(&self) -> String {
        let claimed = self.claimed_bot.as_deref().unwrap_or("-");
        format!(
            "{}\t{}\t{}\t{}",
            self.verdict.as_str(),
            self.ip,
            botscope_text::field(claimed),
            botscope_text::field(&self.reason)
        )
    }
}

/// The domains to check by FCrDNS for `ip` claiming `ua`, when the
/// verdict would use DNS evidence: the claimed bot has reverse-DNS domains
/// and its published list does not settle it already (an `any-of` bot
/// from a listed address needs no DNS). A caller resolves only the
/// addresses that need it, each once.
pub fn fcrdns_domains<'r>(registry: &'r Registry, ip: IpAddr, ua: &UaInfo) -> Option<&'r [String]> {
    let bot = ua.claimed_bot.as_deref().and_then(|n| registry.get(n))?;
    let domains = bot.fcrdns_hosts.as_deref()?;
    if ip.is_unspecified() {
        return None;
    }
    let listed = bot.publishes(ip);
    match bot.verify {
        Combine::AnyOf if listed => None,
        // Outside the list of an all-of bot is spoofing already.
        Combine::AllOf if bot.has_ip_verifier() && !listed => None,
        _ => Some(domains),
    }
}

/// The addresses to resolve, each once, sorted, with the union of the
/// domains their claims are checked against (an address can claim two
/// bots in a log).
pub fn dns_questions<'r>(
    wants: impl IntoIterator<Item = (IpAddr, &'r [String])>,
) -> Vec<(IpAddr, Vec<String>)> {
    let mut map: std::collections::BTreeMap<IpAddr, Vec<String>> = Default::default();
    for (ip, domains) in wants {
        let d = map.entry(normalize(ip)).or_default();
        for x in domains {
            if !d.contains(x) {
                d.push(x.clone());
            }
        }
    }
    map.into_iter().collect()
}

/// Whether the verdict for `ip` claiming `ua` would use FCrDNS evidence
/// (see [`fcrdns_domains`]).
pub fn wants_fcrdns(registry: &Registry, ip: IpAddr, ua: &UaInfo) -> bool {
    fcrdns_domains(registry, ip, ua).is_some()
}

/// How much older than a published list a request may be for its absence
/// from the list to count: addresses move, and a log of 2015 read with the
/// lists of 2026 would call the crawlers of that time fakes.
pub const LIST_STALE_AFTER: i64 = 90 * 86_400;

/// Decides the verdict for one client. `dns` is the FCrDNS evidence for
/// `ip`, or `None` when DNS is not to be used (offline); `owner` is who
/// the address is registered to (all `None` when unknown).
pub fn verify(
    registry: &Registry,
    ip: IpAddr,
    user_agent: Option<&str>,
    ua: &UaInfo,
    dns: Option<&FcrdnsEvidence>,
    owner: Owner,
) -> Verification {
    verify_at(registry, ip, user_agent, ua, dns, owner, None)
}

/// [`verify`] for a request made at `when` (Unix seconds): an address
/// missing from a list dated more than [`LIST_STALE_AFTER`] after it is
/// not evidence (the verdict says `unverifiable`, naming the list's date).
pub fn verify_at(
    registry: &Registry,
    ip: IpAddr,
    user_agent: Option<&str>,
    ua: &UaInfo,
    dns: Option<&FcrdnsEvidence>,
    owner: Owner,
    when: Option<i64>,
) -> Verification {
    let ip = normalize(ip);
    let mut v = Verification {
        ip,
        user_agent: user_agent.map(str::to_owned),
        is_bot: ua.is_bot,
        client_type: ua.client_type,
        claimed_bot: ua.claimed_bot.clone(),
        category: None,
        verdict: Verdict::Unknown,
        methods: Vec::new(),
        hostnames: Vec::new(),
        reason: String::new(),
        owner,
        signature: None,
    };
    let Some(bot) = ua.claimed_bot.as_deref().and_then(|n| registry.get(n)) else {
        let owners: Vec<&BotEntry> = registry.owners_of(ip).collect();
        if owners.is_empty() {
            v.reason = if ua.is_bot {
                match ua.reason.as_deref() {
                    Some(why) => format!("an unregistered robot: {why}"),
                    None => "an unregistered robot".to_owned(),
                }
            } else {
                "not a registered bot".into()
            };
        } else {
            v.verdict = Verdict::UnclaimedBotIp;
            v.category = owners[0].category.map(|c| c.as_str().to_owned());
            let names: Vec<&str> = owners.iter().map(|b| b.name.as_str()).collect();
            v.methods.push("ip".into());
            v.reason = format!(
                "no bot is claimed, but {ip} is published by {}",
                names.join(", ")
            );
        }
        return v;
    };
    v.category = bot.category.map(|c| c.as_str().to_owned());
    decide(bot, ip, dns, when, &mut v);
    v
}

/// The date of `bot`'s list when it is more than [`LIST_STALE_AFTER`]
/// after a request made at `when`.
fn list_dated_after(bot: &BotEntry, when: Option<i64>) -> Option<&str> {
    let as_of = bot.ip_as_of.as_deref()?;
    let date: jiff::civil::Date = as_of.parse().ok()?;
    let listed_at = date
        .to_zoned(jiff::tz::TimeZone::UTC)
        .ok()?
        .timestamp()
        .as_second();
    (when? < listed_at - LIST_STALE_AFTER).then_some(as_of)
}

fn decide(
    bot: &BotEntry,
    ip: IpAddr,
    dns: Option<&FcrdnsEvidence>,
    when: Option<i64>,
    v: &mut Verification,
) {
    let name = &bot.name;
    let has_list = bot.has_ip_verifier();
    if !has_list && bot.fcrdns_hosts.is_none() {
        v.reason = format!("{name} has no verifier in the registry");
        if by_network(bot, ip, v) {
            return;
        }
        let own = v.owner.asn.is_some_and(|a| bot.asns.contains(&a)) && !v.owner.stale;
        if let Some(net) = v.owner.network().filter(|_| own) {
            v.methods.push("asn".into());
            v.verdict = Verdict::Unverifiable;
            v.reason = format!(
                "claims {name}; {ip} is in its operator's network {net}, which others \
                 may share, and {name} publishes no addresses or reverse DNS to confirm"
            );
        }
        return;
    }
    let listed = bot.publishes(ip);
    if has_list {
        v.methods.push("ip".into());
    }
    // A list dated long after the request says nothing of an address it
    // lacks: the crawler's addresses of that time may have been others.
    // (Its date is read only for an address it lacks.)
    let stale_list = if has_list && !listed {
        list_dated_after(bot, when)
    } else {
        None
    };
    let absence_counts = stale_list.is_none();
    let Some(domains) = &bot.fcrdns_hosts else {
        // Verified by its list only: the list is the whole truth.
        if !listed && !absence_counts {
            v.verdict = Verdict::Unverifiable;
            v.reason = format!(
                "claims {name}; {ip} is not among {name}'s published addresses, which says \
                 nothing of a request made long before them (list dated {})",
                stale_list.unwrap_or_default()
            );
            return;
        }
        if listed {
            v.verdict = Verdict::Verified;
            v.reason = format!("{ip} is among {name}'s published addresses");
        } else {
            v.verdict = Verdict::Spoofed;
            v.reason = format!(
                "claims {name}, but {ip} is not among {name}'s published addresses \
                 (its operator documents no reverse DNS)"
            );
        }
        return;
    };
    match bot.verify {
        Combine::AnyOf if listed => {
            v.verdict = Verdict::Verified;
            v.reason = format!("{ip} is among {name}'s published addresses");
            return;
        }
        Combine::AllOf if has_list && !listed && absence_counts => {
            v.verdict = Verdict::Spoofed;
            v.reason = format!(
                "claims {name}, but {ip} is not among {name}'s published addresses \
                 (required beside FCrDNS)"
            );
            return;
        }
        _ => {}
    }
    let before = match (has_list, listed) {
        (false, _) => String::new(),
        (true, true) => format!("{ip} is among {name}'s published addresses; "),
        (true, false) if absence_counts => {
            format!("{ip} is not among {name}'s published addresses; ")
        }
        (true, false) => format!(
            "{ip} is not among {name}'s published addresses (list dated {}, long after the \
             request: not evidence); ",
            stale_list.unwrap_or_default()
        ),
    };
    let Some(ev) = dns else {
        if by_network(bot, ip, v) {
            return;
        }
        v.verdict = Verdict::Unverifiable;
        v.reason = format!("claims {name}; {before}FCrDNS is needed and DNS is off");
        return;
    };
    v.methods.push("fcrdns".into());
    match check_fcrdns(ip, domains, ev) {
        Fcrdns::Pass { hostnames } => {
            v.verdict = Verdict::Verified;
            v.reason = format!(
                "{name}: {before}forward-confirmed reverse DNS ({})",
                hostnames.join(", ")
            );
            v.hostnames = hostnames;
        }
        Fcrdns::Fail { reason, hostnames } => {
            v.hostnames = hostnames;
            v.verdict = Verdict::Spoofed;
            v.reason = format!("claims {name}, but {before}FCrDNS fails: {reason}");
        }
        Fcrdns::Unavailable { reason } => {
            if by_network(bot, ip, v) {
                return;
            }
            v.verdict = Verdict::Unverifiable;
            v.reason = format!("claims {name}; {before}{reason}");
        }
    }
}

/// True when the owner's AS is known and is none of the operator's.
fn foreign_network(bot: &BotEntry, owner: &Owner) -> bool {
    !owner.stale
        && owner
            .asn
            .is_some_and(|a| !bot.asns.is_empty() && !bot.asns.contains(&a))
}

fn foreign_reason(bot: &BotEntry, ip: IpAddr, owner: &Owner) -> String {
    let theirs: Vec<String> = bot.asns.iter().map(|a| format!("AS{a}")).collect();
    let operator = bot
        .operator
        .as_deref()
        .map_or_else(|| format!("{}'s", bot.name), |o| format!("{o}'s"));
    format!(
        "claims {}, but {ip} belongs to {}, not to {operator} networks ({})",
        bot.name,
        owner.network().unwrap_or_default(),
        theirs.join(", ")
    )
}

/// When DNS cannot tell: the registered owner of the address decides if
/// it is a network the operator does not crawl from (spoofed). Returns
/// whether it decided.
fn by_network(bot: &BotEntry, ip: IpAddr, v: &mut Verification) -> bool {
    if !foreign_network(bot, &v.owner) {
        return false;
    }
    v.methods.push("asn".into());
    v.verdict = Verdict::Spoofed;
    v.reason = foreign_reason(bot, ip, &v.owner);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().expect("ip")
    }

    fn reg() -> Registry {
        Registry::parse(
            "t",
            "bots:\n- name: Googlebot\n  operator: Google\n  asns: [15169, AS396982]\n  fcrdns_hosts: [googlebot.com, google.com]\n- name: Google-Extended\n  operator: Google\n  asns: [15169]\n- name: GPTBot\n  cidr_list: [192.0.2.0/24]\n- name: Both\n  cidr_list: [198.51.100.0/24]\n  fcrdns_hosts: [both.example]\n- name: Either\n  verify: any-of\n  cidr_list: [198.51.100.0/24]\n  fcrdns_hosts: [either.example]\n- name: Anyhost\n  fcrdns_hosts: []\n- name: Nothing\n",
        )
        .expect("registry")
    }

    fn claim(bot: &str) -> UaInfo {
        UaInfo {
            is_bot: true,
            family: None,
            claimed_bot: Some(bot.into()),
            reason: Some("token".into()),
            client_type: crate::ClientType::Crawler,
        }
    }

    /// Evidence from a resolver that knows the verification domains.
    fn ev(ptr: DnsAnswer<String>, forward: &[(&str, DnsAnswer<IpAddr>)]) -> FcrdnsEvidence {
        FcrdnsEvidence {
            ptr: Some(ptr),
            forward: forward
                .iter()
                .map(|(n, a)| ((*n).to_owned(), a.clone()))
                .collect(),
            zones: vec![("googlebot.com".into(), Ok(true))],
            cached: Vec::new(),
        }
    }

    /// The same, from a resolver with `zones` as its answers for the domains.
    fn with_zones(
        mut e: FcrdnsEvidence,
        zones: &[(&str, Result<bool, DnsFailure>)],
    ) -> FcrdnsEvidence {
        e.zones = zones
            .iter()
            .map(|(z, r)| ((*z).to_owned(), r.clone()))
            .collect();
        e
    }

    #[test]
    fn label_boundaries() {
        assert!(in_domain(
            "crawl-66-249-66-1.googlebot.com",
            "googlebot.com"
        ));
        assert!(in_domain("googlebot.com.", "googlebot.com"));
        assert!(!in_domain("crawl.evilgooglebot.com", "googlebot.com"));
        assert!(!in_domain("googlebot.com.evil.net", "googlebot.com"));
    }

    #[test]
    fn fcrdns_cases() {
        let r = reg();
        let a = ip("192.0.2.66");
        let host = "crawl-192-0-2-66.googlebot.com".to_owned();
        let verdict = |e: FcrdnsEvidence| {
            verify(&r, a, None, &claim("Googlebot"), Some(&e), Owner::default()).verdict
        };
        assert_eq!(
            verdict(ev(Ok(vec![host.clone()]), &[(&host, Ok(vec![a]))])),
            Verdict::Verified
        );
        assert_eq!(
            verdict(ev(Ok(vec![host.clone()]), &[(&host, Ok(vec![]))])),
            Verdict::Spoofed,
            "PTR with no A"
        );
        assert_eq!(
            verdict(ev(
                Ok(vec![host.clone()]),
                &[(&host, Ok(vec![ip("192.0.2.1")]))]
            )),
            Verdict::Spoofed,
            "A elsewhere"
        );
        assert_eq!(
            verdict(ev(Ok(vec!["x.evilgooglebot.com".into()]), &[])),
            Verdict::Spoofed,
            "lookalike"
        );
        assert_eq!(verdict(ev(Ok(vec![]), &[])), Verdict::Spoofed, "NXDOMAIN");
        assert_eq!(
            verdict(ev(Err(DnsFailure::Timeout), &[])),
            Verdict::Unverifiable
        );
        assert_eq!(
            verdict(ev(Err(DnsFailure::ServerFailure), &[])),
            Verdict::Unverifiable
        );
        assert_eq!(
            verdict(ev(
                Ok(vec![host.clone()]),
                &[(&host, Err(DnsFailure::Refused))]
            )),
            Verdict::Unverifiable
        );
        // Negative answers count only from a resolver that knows the domain.
        let nx = ev(Ok(vec![]), &[]);
        let untrusted = with_zones(
            nx.clone(),
            &[("googlebot.com", Ok(false)), ("google.com", Ok(false))],
        );
        let v = verify(
            &r,
            a,
            None,
            &claim("Googlebot"),
            Some(&untrusted),
            Owner::default(),
        );
        assert_eq!(v.verdict, Verdict::Unverifiable, "{}", v.reason);
        assert!(v.reason.contains("not evidence"), "{}", v.reason);
        assert_eq!(
            verdict(with_zones(nx.clone(), &[])),
            Verdict::Unverifiable,
            "resolver not checked"
        );
        assert_eq!(
            verdict(with_zones(
                nx,
                &[("googlebot.com", Err(DnsFailure::Timeout))]
            )),
            Verdict::Unverifiable
        );
        let no_a = ev(Ok(vec![host.clone()]), &[(&host, Ok(vec![]))]);
        assert_eq!(
            verdict(with_zones(no_a, &[("googlebot.com", Ok(false))])),
            Verdict::Unverifiable,
            "PTR with no A from a resolver that denies the domain"
        );
        // Two PTR names: one elsewhere, one confirming.
        let two = ev(
            Ok(vec!["other.example.net".into(), host.clone()]),
            &[(&host, Ok(vec![a]))],
        );
        let v = verify(
            &r,
            a,
            None,
            &claim("Googlebot"),
            Some(&two),
            Owner::default(),
        );
        assert_eq!(
            (v.verdict, v.hostnames.clone()),
            (Verdict::Verified, vec![host.clone()])
        );
        // Any domain, but FCrDNS must still pass.
        let any = ev(
            Ok(vec!["h.example.org".into()]),
            &[("h.example.org", Ok(vec![a]))],
        );
        assert_eq!(
            verify(&r, a, None, &claim("Anyhost"), Some(&any), Owner::default()).verdict,
            Verdict::Verified
        );
        assert_eq!(
            verify(
                &r,
                a,
                None,
                &claim("Anyhost"),
                Some(&ev(Ok(vec![]), &[])),
                Owner::default()
            )
            .verdict,
            Verdict::Spoofed
        );
    }

    #[test]
    fn any_of_and_all_of_with_dns() {
        let r = reg();
        let out = ip("203.0.113.5");
        let inside = ip("198.51.100.5");
        let host = "crawl-5.either.example".to_owned();
        let good = ev(Ok(vec![host.clone()]), &[(&host, Ok(vec![out]))]);
        let bad = ev(Ok(vec!["x.other.example".into()]), &[]);
        let run = |bot: &str, a: IpAddr, e: &FcrdnsEvidence| {
            verify(&r, a, None, &claim(bot), Some(e), Owner::default()).verdict
        };
        assert_eq!(run("Either", out, &good), Verdict::Verified, "rDNS alone");
        assert_eq!(run("Either", out, &bad), Verdict::Spoofed);
        assert_eq!(
            run("Either", inside, &bad),
            Verdict::Verified,
            "the list alone"
        );
        let both_host = "c.both.example".to_owned();
        let both_good = ev(
            Ok(vec![both_host.clone()]),
            &[(&both_host, Ok(vec![inside]))],
        );
        assert_eq!(run("Both", inside, &both_good), Verdict::Verified);
        assert_eq!(run("Both", inside, &bad), Verdict::Spoofed);
        // Which addresses need DNS at all.
        let wants = |bot: &str, a: &str| wants_fcrdns(&r, ip(a), &claim(bot));
        assert!(!wants("Either", "198.51.100.5"));
        assert!(wants("Either", "203.0.113.5"));
        assert!(wants("Both", "198.51.100.5"));
        assert!(!wants("Both", "203.0.113.5"), "spoofed by the list already");
        assert!(wants("Googlebot", "203.0.113.5"));
        assert!(!wants("GPTBot", "203.0.113.5"));
    }

    /// A list is evidence for requests near its date: an address missing
    /// from the list of 2026 says nothing of a request of 2015.
    #[test]
    fn a_list_dated_long_after_the_request_is_not_evidence_of_absence() {
        let r = Registry::parse(
            "t",
            "bots:\n- name: AhrefsBot\n  cidr_list: [192.0.2.0/24]\n  ip_as_of: 2026-06-01\n- name: Both\n  cidr_list: [198.51.100.0/24]\n  fcrdns_hosts: [both.example]\n  ip_as_of: 2026-06-01\n",
        )
        .expect("registry");
        let t = |d: &str| {
            d.parse::<jiff::civil::Date>()
                .expect("date")
                .to_zoned(jiff::tz::TimeZone::UTC)
                .expect("zoned")
                .timestamp()
                .as_second()
        };
        let at = |bot: &str, a: &str, when: Option<i64>| {
            verify_at(&r, ip(a), None, &claim(bot), None, Owner::default(), when)
        };
        // Near the list's date (or with no date to go by) it decides.
        assert_eq!(
            at("AhrefsBot", "203.0.113.5", None).verdict,
            Verdict::Spoofed
        );
        let near = at("AhrefsBot", "203.0.113.5", Some(t("2026-05-01")));
        assert_eq!(near.verdict, Verdict::Spoofed);
        // Years before it, absence is no evidence.
        let old = at("AhrefsBot", "203.0.113.5", Some(t("2015-03-01")));
        assert_eq!(old.verdict, Verdict::Unverifiable, "{}", old.reason);
        assert!(
            old.reason.contains("list dated 2026-06-01"),
            "{}",
            old.reason
        );
        // Presence still counts.
        let listed = at("AhrefsBot", "192.0.2.9", Some(t("2015-03-01")));
        assert_eq!(listed.verdict, Verdict::Verified);
        // Required beside FCrDNS, a stale list does not spoof either.
        let both = at("Both", "203.0.113.5", Some(t("2015-03-01")));
        assert_eq!(both.verdict, Verdict::Unverifiable, "{}", both.reason);
        assert!(both.reason.contains("not evidence"), "{}", both.reason);
        assert_eq!(
            at("Both", "203.0.113.5", Some(t("2026-06-01"))).verdict,
            Verdict::Spoofed
        );
    }

    #[test]
    fn hostile_reverse_zone_is_bounded() {
        let r = reg();
        let a = ip("192.0.2.66");
        let names: Vec<String> = (0..20).map(|i| format!("n{i}.googlebot.com")).collect();
        // Only the first MAX_PTR_NAMES names inside the domain are looked at.
        let picked = names_to_confirm(&names, &["googlebot.com".to_owned()]);
        assert_eq!(picked.len(), MAX_PTR_NAMES);
        let mut outside: Vec<String> = (0..20).map(|i| format!("n{i}.elsewhere.net")).collect();
        outside.push("crawl.googlebot.com".into());
        assert_eq!(
            names_to_confirm(&outside, &["googlebot.com".to_owned()]),
            [&"crawl.googlebot.com".to_owned()],
            "names in the domain first, the rest never asked"
        );
        // The first confirming name is enough, whatever the others say.
        let e = ev(
            Ok(names.clone()),
            &[
                ("n0.googlebot.com", Err(DnsFailure::Timeout)),
                ("n1.googlebot.com", Ok(vec![ip("192.0.2.1")])),
                ("n2.googlebot.com", Ok(vec![a])),
            ],
        );
        let v = verify(&r, a, None, &claim("Googlebot"), Some(&e), Owner::default());
        assert_eq!(
            (v.verdict, v.hostnames),
            (Verdict::Verified, vec!["n2.googlebot.com".to_owned()])
        );
    }

    #[test]
    fn ip_sets_and_offline() {
        let r = reg();
        let inside = ip("::ffff:192.0.2.7");
        let v = verify(
            &r,
            inside,
            Some("GPTBot/1.2"),
            &claim("GPTBot"),
            None,
            Owner::default(),
        );
        assert_eq!(
            (v.verdict, v.methods.clone()),
            (Verdict::Verified, vec!["ip".to_owned()])
        );
        assert_eq!(v.ip, ip("192.0.2.7"));
        assert_eq!(
            verify(
                &r,
                ip("203.0.113.9"),
                None,
                &claim("GPTBot"),
                None,
                Owner::default()
            )
            .verdict,
            Verdict::Spoofed
        );
        assert_eq!(
            verify(
                &r,
                ip("203.0.113.9"),
                None,
                &claim("Googlebot"),
                None,
                Owner::default()
            )
            .verdict,
            Verdict::Unverifiable,
            "FCrDNS only, offline"
        );
        // all-of: the list and FCrDNS.
        assert_eq!(
            verify(
                &r,
                ip("198.51.100.1"),
                None,
                &claim("Both"),
                None,
                Owner::default()
            )
            .verdict,
            Verdict::Unverifiable,
            "listed, but FCrDNS is needed too"
        );
        assert_eq!(
            verify(
                &r,
                ip("203.0.113.1"),
                None,
                &claim("Both"),
                None,
                Owner::default()
            )
            .verdict,
            Verdict::Spoofed
        );
        // any-of: the list, or FCrDNS for an address outside it.
        let listed = verify(
            &r,
            ip("198.51.100.1"),
            None,
            &claim("Either"),
            None,
            Owner::default(),
        );
        assert_eq!(
            (listed.verdict, listed.methods),
            (Verdict::Verified, vec!["ip".to_owned()])
        );
        let outside = verify(
            &r,
            ip("203.0.113.1"),
            None,
            &claim("Either"),
            None,
            Owner::default(),
        );
        assert_eq!(
            outside.verdict,
            Verdict::Unverifiable,
            "offline is never spoofed"
        );
        assert!(outside.reason.contains("DNS is off"), "{}", outside.reason);
        assert_eq!(
            verify(
                &r,
                ip("203.0.113.1"),
                None,
                &claim("Nothing"),
                None,
                Owner::default()
            )
            .verdict,
            Verdict::Unknown
        );
        let browser = UaInfo::default();
        assert_eq!(
            verify(&r, ip("192.0.2.8"), None, &browser, None, Owner::default()).verdict,
            Verdict::UnclaimedBotIp
        );
        assert_eq!(
            verify(
                &r,
                ip("203.0.113.8"),
                None,
                &browser,
                None,
                Owner::default()
            )
            .verdict,
            Verdict::Unknown
        );
    }

    fn owned(asn: u32, org: &str) -> Owner {
        Owner {
            asn: Some(asn),
            as_org: Some(org.into()),
            country: Some("US".into()),
            stale: false,
        }
    }

    #[test]
    fn a_foreign_network_is_evidence_when_dns_cannot_tell() {
        let r = reg();
        let a = ip("203.0.113.9");
        let g = claim("Googlebot");
        // Offline, from a network Google does not crawl from.
        let v = verify(&r, a, None, &g, None, owned(64500, "Example Hosting"));
        assert_eq!(v.verdict, Verdict::Spoofed, "{}", v.reason);
        assert!(
            v.reason.contains("AS64500 (Example Hosting)"),
            "{}",
            v.reason
        );
        assert!(
            v.reason.contains("Google's networks (AS15169, AS396982)"),
            "{}",
            v.reason
        );
        assert!(v.methods.contains(&"asn".to_owned()));
        assert_eq!(v.owner.country.as_deref(), Some("US"));
        // From Google's own network, or with no database: unverifiable.
        let v = verify(&r, a, None, &g, None, owned(396982, "Google LLC"));
        assert_eq!(v.verdict, Verdict::Unverifiable, "{}", v.reason);
        let v = verify(&r, a, None, &g, None, Owner::default());
        assert_eq!(v.verdict, Verdict::Unverifiable, "{}", v.reason);
        // A database much newer than the request is not evidence.
        let mut old = owned(64500, "Example Hosting");
        old.stale = true;
        let v = verify(&r, a, None, &g, None, old);
        assert_eq!(v.verdict, Verdict::Unverifiable, "{}", v.reason);
        // DNS that cannot tell (untrusted negative answer): the network decides.
        let untrusted = with_zones(ev(Ok(vec![]), &[]), &[("googlebot.com", Ok(false))]);
        let v = verify(&r, a, None, &g, Some(&untrusted), owned(64500, "Example"));
        assert_eq!(v.verdict, Verdict::Spoofed, "{}", v.reason);
        // FCrDNS that passes wins over the database (databases go stale).
        let pass = ev(
            Ok(vec!["crawl-1.googlebot.com".into()]),
            &[("crawl-1.googlebot.com", Ok(vec![a]))],
        );
        let v = verify(&r, a, None, &g, Some(&pass), owned(64500, "Example"));
        assert_eq!(v.verdict, Verdict::Verified, "{}", v.reason);
    }

    #[test]
    fn a_network_alone_never_verifies() {
        let r = reg();
        let a = ip("203.0.113.9");
        let c = claim("Google-Extended");
        let v = verify(&r, a, None, &c, None, owned(64500, "Example"));
        assert_eq!(v.verdict, Verdict::Spoofed, "{}", v.reason);
        let v = verify(&r, a, None, &c, None, owned(15169, "Google LLC"));
        assert_eq!(v.verdict, Verdict::Unverifiable, "{}", v.reason);
        let v = verify(&r, a, None, &c, None, Owner::default());
        assert_eq!(v.verdict, Verdict::Unknown, "{}", v.reason);
        let mut old = owned(64500, "Example");
        old.stale = true;
        let v = verify(&r, a, None, &c, None, old);
        assert_eq!(
            v.verdict,
            Verdict::Unknown,
            "a stale foreign network: {}",
            v.reason
        );
        // A bot with no AS numbers learns nothing from the owner.
        let v = verify(
            &r,
            a,
            None,
            &claim("Nothing"),
            None,
            owned(64500, "Example"),
        );
        assert_eq!(v.verdict, Verdict::Unknown, "{}", v.reason);
    }

    #[test]
    fn owner_fields_are_null_without_a_database() {
        let r = reg();
        let v = verify(
            &r,
            ip("192.0.2.8"),
            None,
            &claim("GPTBot"),
            None,
            Owner::default(),
        );
        let j = serde_json::to_value(&v).expect("json");
        for k in ["asn", "as_org", "country"] {
            assert!(j[k].is_null(), "{k}: {j}");
        }
        let back: Verification = serde_json::from_value(j).expect("read back");
        assert_eq!(back, v);
        let v = verify(
            &r,
            ip("192.0.2.8"),
            None,
            &claim("GPTBot"),
            None,
            owned(1, "X"),
        );
        let j = serde_json::to_value(&v).expect("json");
        assert_eq!(j["asn"], 1);
        assert_eq!(j["as_org"], "X");
    }
}

#[cfg(test)]
mod signature_tests {
    use super::*;

    fn registry() -> Registry {
        Registry::parse(
            "t.yaml",
            "bots:\n- name: SignedBot\n  category: ai-assistant\n  ua_tokens: [SignedBot]\n  signature_agents: ['https://Agent.Example/']\n- name: Googlebot\n  ua_tokens: [Googlebot]\n  cidr_list: [192.0.2.0/24]\n",
        )
        .expect("registry")
    }

    fn evidence(outcome: &str, agent: &str) -> SignatureEvidence {
        SignatureEvidence {
            outcome: outcome.to_owned(),
            agent: Some(agent.to_owned()),
            keyid: Some("k".to_owned()),
            reason: "why".to_owned(),
            bot: None,
            identifier: None,
            signatures: Vec::new(),
            notes: Vec::new(),
        }
    }

    fn unknown(r: &Registry) -> Verification {
        verify(
            r,
            "203.0.113.9".parse().expect("ip"),
            None,
            &UaInfo::default(),
            None,
            Owner::default(),
        )
    }

    #[test]
    fn a_registered_agent_verifies_its_bot() {
        let r = registry();
        assert_eq!(
            r.signed_by("https://agent.example")
                .map(|b| b.name.as_str()),
            Some("SignedBot")
        );
        assert!(r.signed_by("https://agent.example.evil").is_none());
        let mut v = unknown(&r);
        with_signature(
            &r,
            &mut v,
            evidence("verified", "https://agent.example:443"),
        );
        assert_eq!(v.verdict, Verdict::Verified);
        assert_eq!(v.claimed_bot.as_deref(), Some("SignedBot"));
        assert_eq!(v.methods, ["signature"]);
        assert_eq!(
            v.signature.as_ref().and_then(|s| s.bot.as_deref()),
            Some("SignedBot")
        );
        let json = serde_json::to_value(&v).expect("json");
        assert_eq!(json["signature"]["outcome"], "verified");
        assert_eq!(json["signature"]["agent"], "https://agent.example:443");
    }

    #[test]
    fn an_unregistered_agent_is_signed_not_a_bot() {
        let r = registry();
        let mut v = unknown(&r);
        let before = v.verdict;
        with_signature(&r, &mut v, evidence("verified", "https://stranger.example"));
        assert_eq!(v.verdict, before);
        assert_eq!(v.claimed_bot, None);
        assert!(
            v.reason.contains("signed by https://stranger.example"),
            "{}",
            v.reason
        );
        assert_eq!(v.signature.as_ref().and_then(|s| s.bot.clone()), None);
    }

    #[test]
    fn an_invalid_signature_is_no_evidence_of_spoofing() {
        let r = registry();
        let ua = UaInfo {
            is_bot: true,
            claimed_bot: Some("Googlebot".into()),
            ..UaInfo::default()
        };
        let ip = "192.0.2.7".parse().expect("ip");
        let mut v = verify(&r, ip, Some("Googlebot"), &ua, None, Owner::default());
        assert_eq!(v.verdict, Verdict::Verified);
        with_signature(&r, &mut v, evidence("invalid", "https://agent.example"));
        assert_eq!(v.verdict, Verdict::Verified, "the address still vouches");
        assert!(v.reason.contains("signature is invalid"), "{}", v.reason);
        // Nor does a valid signature of a registered agent turn into a
        // spoofing verdict for another claim.
        let json = serde_json::to_value(&v).expect("json");
        assert_eq!(json["signature"]["outcome"], "invalid");
    }

    #[test]
    fn without_a_request_there_is_no_signature_field() {
        let r = registry();
        let json = serde_json::to_value(unknown(&r)).expect("json");
        assert!(json.get("signature").is_none());
    }

    #[test]
    fn registry_urls_must_be_https() {
        let e = Registry::parse(
            "t.yaml",
            "bots:\n- name: x\n  signature_agents: ['http://agent.example', 'https://']\n",
        )
        .expect_err("refused");
        assert_eq!(e.len(), 2, "{e:?}");
    }
}
