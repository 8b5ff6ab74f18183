//! `verify --trace`: each step of a verdict as `dig` would show it (the
//! claim, the published list, the PTR question and its answer, the A/AAAA
//! question of each name, the check of the domains after a negative
//! answer, the comparison). Pure: it reads the evidence already gathered.

use std::fmt::Write;
use std::net::IpAddr;

use crate::ipset::normalize;
use crate::registry::{Combine, Registry};
use crate::ua::UaInfo;
use crate::verify::{FcrdnsEvidence, Verification, in_domain, names_to_confirm};

/// The reverse-lookup name of `ip` (`4.3.2.1.in-addr.arpa.`).
pub fn reverse_name(ip: IpAddr) -> String {
    match normalize(ip) {
        IpAddr::V4(a) => {
            let o = a.octets();
            format!("{}.{}.{}.{}.in-addr.arpa.", o[3], o[2], o[1], o[0])
        }
        IpAddr::V6(a) => {
            let mut s = String::new();
            for b in a.octets().iter().rev() {
                let _ = write!(s, "{:x}.{:x}.", b & 0xf, b >> 4);
            }
            s + "ip6.arpa."
        }
    }
}

fn fqdn(name: &str) -> String {
    format!("{}.", name.trim_end_matches('.'))
}

/// The steps behind `v`, one per line, `;;` before comments as in `dig`.
pub fn trace(
    registry: &Registry,
    ua: &UaInfo,
    ev: Option<&FcrdnsEvidence>,
    v: &Verification,
) -> String {
    let mut s = String::new();
    let ip = v.ip;
    let _ = writeln!(s, ";; client type: {}", ua.client_type);
    let Some(bot) = ua.claimed_bot.as_deref().and_then(|n| registry.get(n)) else {
        let _ = writeln!(s, ";; no registered bot is claimed by the User-Agent");
        let _ = writeln!(s, ";; verdict: {} ({})", v.verdict.as_str(), v.reason);
        return s;
    };
    let _ = writeln!(
        s,
        ";; claim: {} ({})",
        bot.name,
        ua.reason.as_deref().unwrap_or("named in the User-Agent")
    );
    if bot.has_ip_verifier() {
        let n = bot.ranges().count();
        let hit = bot.ranges().find(|r| r.contains(ip));
        let _ = match hit {
            Some(r) => writeln!(
                s,
                ";; published addresses: {ip} is in {} (of {n} ranges)",
                r.written()
            ),
            None => writeln!(s, ";; published addresses: {ip} is in none of {n} ranges"),
        };
    }
    if let Some(domains) = &bot.fcrdns_hosts {
        let shown = if domains.is_empty() {
            "any domain".to_owned()
        } else {
            domains.join(", ")
        };
        let combine = if bot.has_ip_verifier() {
            match bot.verify {
                Combine::AnyOf => " (verify: any-of)",
                Combine::AllOf => " (verify: all-of)",
            }
        } else {
            ""
        };
        let _ = writeln!(s, ";; FCrDNS against {shown}{combine}");
        match ev {
            None => {
                let _ = writeln!(s, ";; no DNS question was asked");
            }
            Some(ev) => dns_steps(&mut s, ip, domains, ev),
        }
    }
    let _ = writeln!(s, ";; verdict: {} ({})", v.verdict.as_str(), v.reason);
    s
}

/// The line that says an answer came from the cache, and its age.
fn from_cache(s: &mut String, ev: &FcrdnsEvidence, question: &str) {
    if let Some((_, age)) = ev.cached.iter().find(|(q, _)| q == question) {
        let _ = match age {
            Some(a) => writeln!(
                s,
                ";; (from the cache: this resolver's answer of {} s ago)",
                a.as_secs()
            ),
            None => writeln!(s, ";; (from the cache: this resolver's answer)"),
        };
    }
}

fn dns_steps(s: &mut String, ip: IpAddr, domains: &[String], ev: &FcrdnsEvidence) {
    let rev = reverse_name(ip);
    let _ = writeln!(s, ";; QUESTION: {rev}\tIN\tPTR");
    from_cache(s, ev, "PTR");
    let names: Vec<String> = match &ev.ptr {
        None => {
            let _ = writeln!(s, ";; (not asked)");
            return;
        }
        Some(Err(f)) => {
            let _ = writeln!(s, ";; status: no answer ({f})");
            Vec::new()
        }
        Some(Ok(n)) if n.is_empty() => {
            let _ = writeln!(s, ";; status: NXDOMAIN or no PTR record");
            Vec::new()
        }
        Some(Ok(n)) => {
            for name in n {
                let _ = writeln!(s, "{rev}\tIN\tPTR\t{}", fqdn(name));
            }
            n.iter()
                .map(|x| x.trim_end_matches('.').to_ascii_lowercase())
                .collect()
        }
    };
    let picked = names_to_confirm(&names, domains);
    for name in &names {
        if !picked.contains(&name) {
            let why = if domains.is_empty() || domains.iter().any(|d| in_domain(name, d)) {
                "over the limit of names looked up"
            } else {
                "outside the domains"
            };
            let _ = writeln!(s, ";; {} not looked up: {why}", fqdn(name));
        }
    }
    for name in picked {
        let _ = writeln!(s, ";; QUESTION: {}\tIN\tA/AAAA", fqdn(name));
        from_cache(s, ev, &format!("A/AAAA {name}"));
        let answer = ev
            .forward
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, a)| a);
        match answer {
            None => {
                let _ = writeln!(s, ";; (not asked)");
            }
            Some(Err(f)) => {
                let _ = writeln!(s, ";; status: no answer ({f})");
            }
            Some(Ok(addrs)) if addrs.is_empty() => {
                let _ = writeln!(s, ";; status: NXDOMAIN or no A/AAAA record");
            }
            Some(Ok(addrs)) => {
                for a in addrs {
                    let kind = if a.is_ipv4() { "A" } else { "AAAA" };
                    let _ = writeln!(s, "{}\tIN\t{kind}\t{a}", fqdn(name));
                }
                let back = addrs.iter().any(|a| normalize(*a) == normalize(ip));
                let _ = writeln!(
                    s,
                    ";; compare: {ip} {} among the addresses of {}",
                    if back { "is" } else { "is not" },
                    fqdn(name)
                );
            }
        }
    }
    for (zone, r) in &ev.zones {
        let _ = writeln!(
            s,
            ";; QUESTION: {}\tIN\tSOA\t(does the resolver know the domain?)",
            fqdn(zone)
        );
        from_cache(s, ev, &format!("SOA {zone}"));
        let _ = match r {
            Ok(true) => writeln!(s, ";; status: NOERROR: negative answers count"),
            Ok(false) => writeln!(
                s,
                ";; status: NXDOMAIN: this resolver's negative answers are not evidence"
            ),
            Err(f) => writeln!(s, ";; status: no answer ({f})"),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reverse_names() {
        assert_eq!(
            reverse_name("198.51.100.10".parse().expect("ip")),
            "10.100.51.198.in-addr.arpa."
        );
        assert_eq!(
            reverse_name("2001:db8::1".parse().expect("ip")),
            "1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa."
        );
    }
}
