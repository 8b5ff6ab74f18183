//! The verification decision: from an IP, a User-Agent, the registry and
//! (when asked for) DNS answers, one verdict. DNS answers come in as
//! values; the `botscope-dns` crate fetches them.

use std::net::IpAddr;

use serde::{Deserialize, Serialize};

use crate::ipset::normalize;
use crate::registry::{BotEntry, Registry};
use crate::ua::UaInfo;

/// The outcome of verifying one client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Every verifier of the claimed bot's entry agrees.
    Verified,
    /// The User-Agent claims a registered bot and a verifier contradicts it.
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
}

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

/// Forward-confirmed reverse DNS: the PTR names of `ip` that lie in
/// `domains` (any domain when empty) must each resolve back to `ip`, and
/// at least one must exist.
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
        return Fcrdns::Fail {
            reason: format!("{ip} has no PTR record"),
            hostnames: Vec::new(),
        };
    }
    let allowed: Vec<&String> = names
        .iter()
        .filter(|n| domains.is_empty() || domains.iter().any(|d| in_domain(n, d)))
        .collect();
    if allowed.is_empty() {
        return Fcrdns::Fail {
            reason: format!("PTR {} is outside {}", names.join(", "), domains.join(", ")),
            hostnames: names.clone(),
        };
    }
    let mut confirmed = Vec::new();
    for name in allowed {
        let answer = ev
            .forward
            .iter()
            .find(|(n, _)| n.trim_end_matches('.').eq_ignore_ascii_case(name))
            .map(|(_, a)| a);
        match answer {
            None => {
                return Fcrdns::Unavailable {
                    reason: format!("no forward lookup of {name} was made"),
                };
            }
            Some(Err(f)) => {
                return Fcrdns::Unavailable {
                    reason: format!("forward lookup of {name} failed: {f}"),
                };
            }
            Some(Ok(addrs)) if addrs.iter().any(|a| normalize(*a) == ip) => {
                confirmed.push(name.clone())
            }
            Some(Ok(addrs)) if addrs.is_empty() => {
                return Fcrdns::Fail {
                    reason: format!("{name} has no A/AAAA record"),
                    hostnames: names.clone(),
                };
            }
            Some(Ok(addrs)) => {
                let shown: Vec<String> = addrs.iter().map(ToString::to_string).collect();
                return Fcrdns::Fail {
                    reason: format!("{name} resolves to {}, not {ip}", shown.join(", ")),
                    hostnames: names.clone(),
                };
            }
        }
    }
    Fcrdns::Pass {
        hostnames: confirmed,
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
}

impl Verification {
    /// `VERDICT<TAB>IP<TAB>CLAIMED-BOT<TAB>REASON` (`-` for no claim).
    pub fn text_line(&self) -> String {
        let claimed = self.claimed_bot.as_deref().unwrap_or("-");
        format!(
            "{}\t{}\t{claimed}\t{}",
            self.verdict.as_str(),
            self.ip,
            self.reason
        )
    }
}

/// Whether the verdict for `ip` claiming `ua` would use FCrDNS evidence:
/// the claimed bot has reverse-DNS domains (so a caller resolves only the
/// addresses that need it, each once).
pub fn wants_fcrdns(registry: &Registry, ip: IpAddr, ua: &UaInfo) -> bool {
    ua.claimed_bot
        .as_deref()
        .and_then(|n| registry.get(n))
        .is_some_and(|b| b.fcrdns_hosts.is_some())
        && !ip.is_unspecified()
}

/// Decides the verdict for one client. `dns` is the FCrDNS evidence for
/// `ip`, or `None` when DNS is not to be used (offline).
pub fn verify(
    registry: &Registry,
    ip: IpAddr,
    user_agent: Option<&str>,
    ua: &UaInfo,
    dns: Option<&FcrdnsEvidence>,
) -> Verification {
    let ip = normalize(ip);
    let mut v = Verification {
        ip,
        user_agent: user_agent.map(str::to_owned),
        is_bot: ua.is_bot,
        claimed_bot: ua.claimed_bot.clone(),
        category: None,
        verdict: Verdict::Unknown,
        methods: Vec::new(),
        hostnames: Vec::new(),
        reason: String::new(),
    };
    let Some(bot) = ua.claimed_bot.as_deref().and_then(|n| registry.get(n)) else {
        let owners: Vec<&BotEntry> = registry.owners_of(ip).collect();
        if owners.is_empty() {
            v.reason = if ua.is_bot {
                format!(
                    "a robot ({}) not in the registry",
                    ua.reason.clone().unwrap_or_default()
                )
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
    decide(bot, ip, dns, &mut v);
    v
}

fn decide(bot: &BotEntry, ip: IpAddr, dns: Option<&FcrdnsEvidence>, v: &mut Verification) {
    let name = &bot.name;
    if !bot.has_ip_verifier() && bot.fcrdns_hosts.is_none() {
        v.reason = format!("{name} has no verifier in the registry");
        return;
    }
    let mut passed = Vec::new();
    if bot.has_ip_verifier() {
        v.methods.push("ip".into());
        if bot.ranges().any(|r| r.contains(ip)) {
            passed.push("its published addresses");
        } else {
            v.verdict = Verdict::Spoofed;
            v.reason = format!("claims {name}, but {ip} is not among {name}'s published addresses");
            return;
        }
    }
    if let Some(domains) = &bot.fcrdns_hosts {
        let Some(ev) = dns else {
            if passed.is_empty() {
                v.verdict = Verdict::Unverifiable;
                v.reason = format!("{name} is verified by FCrDNS only, and DNS is off");
            } else {
                v.verdict = Verdict::Verified;
                v.reason = format!(
                    "{ip} is among {name}'s published addresses (FCrDNS not checked: DNS is off)"
                );
            }
            return;
        };
        v.methods.push("fcrdns".into());
        match check_fcrdns(ip, domains, ev) {
            Fcrdns::Pass { hostnames } => {
                v.hostnames = hostnames;
                passed.push("forward-confirmed reverse DNS");
            }
            Fcrdns::Fail { reason, hostnames } => {
                v.hostnames = hostnames;
                v.verdict = Verdict::Spoofed;
                v.reason = format!("claims {name}, but FCrDNS fails: {reason}");
                return;
            }
            Fcrdns::Unavailable { reason } => {
                v.verdict = Verdict::Unverifiable;
                v.reason = format!("claims {name}; {reason}");
                return;
            }
        }
    }
    v.verdict = Verdict::Verified;
    v.reason = format!("{name}: {}", passed.join(" and "));
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
            "bots:\n- name: Googlebot\n  fcrdns_hosts: [googlebot.com, google.com]\n- name: GPTBot\n  cidr_list: [192.0.2.0/24]\n- name: Both\n  cidr_list: [198.51.100.0/24]\n  fcrdns_hosts: [both.example]\n- name: Anyhost\n  fcrdns_hosts: []\n- name: Nothing\n",
        )
        .expect("registry")
    }

    fn claim(bot: &str) -> UaInfo {
        UaInfo {
            is_bot: true,
            family: None,
            claimed_bot: Some(bot.into()),
            reason: Some("token".into()),
        }
    }

    fn ev(ptr: DnsAnswer<String>, forward: &[(&str, DnsAnswer<IpAddr>)]) -> FcrdnsEvidence {
        FcrdnsEvidence {
            ptr: Some(ptr),
            forward: forward
                .iter()
                .map(|(n, a)| ((*n).to_owned(), a.clone()))
                .collect(),
        }
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
        let verdict =
            |e: FcrdnsEvidence| verify(&r, a, None, &claim("Googlebot"), Some(&e)).verdict;
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
        // Two PTR names: one elsewhere, one confirming.
        let two = ev(
            Ok(vec!["other.example.net".into(), host.clone()]),
            &[(&host, Ok(vec![a]))],
        );
        let v = verify(&r, a, None, &claim("Googlebot"), Some(&two));
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
            verify(&r, a, None, &claim("Anyhost"), Some(&any)).verdict,
            Verdict::Verified
        );
        assert_eq!(
            verify(&r, a, None, &claim("Anyhost"), Some(&ev(Ok(vec![]), &[]))).verdict,
            Verdict::Spoofed
        );
    }

    #[test]
    fn ip_sets_and_offline() {
        let r = reg();
        let inside = ip("::ffff:192.0.2.7");
        let v = verify(&r, inside, Some("GPTBot/1.2"), &claim("GPTBot"), None);
        assert_eq!(
            (v.verdict, v.methods.clone()),
            (Verdict::Verified, vec!["ip".to_owned()])
        );
        assert_eq!(v.ip, ip("192.0.2.7"));
        assert_eq!(
            verify(&r, ip("203.0.113.9"), None, &claim("GPTBot"), None).verdict,
            Verdict::Spoofed
        );
        assert_eq!(
            verify(&r, ip("203.0.113.9"), None, &claim("Googlebot"), None).verdict,
            Verdict::Unverifiable,
            "FCrDNS only, offline"
        );
        assert_eq!(
            verify(&r, ip("198.51.100.1"), None, &claim("Both"), None).verdict,
            Verdict::Verified
        );
        assert_eq!(
            verify(&r, ip("203.0.113.1"), None, &claim("Both"), None).verdict,
            Verdict::Spoofed
        );
        assert_eq!(
            verify(&r, ip("203.0.113.1"), None, &claim("Nothing"), None).verdict,
            Verdict::Unknown
        );
        let browser = UaInfo::default();
        assert_eq!(
            verify(&r, ip("192.0.2.8"), None, &browser, None).verdict,
            Verdict::UnclaimedBotIp
        );
        assert_eq!(
            verify(&r, ip("203.0.113.8"), None, &browser, None).verdict,
            Verdict::Unknown
        );
    }
}
