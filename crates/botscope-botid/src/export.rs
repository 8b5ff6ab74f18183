//! The lists a web server consults per request, with no delay (ACAP
//! sections 3–4): verdicts in, per-category address lists out. Writing them
//! to disk is the caller's job.

use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;

use crate::registry::Registry;
use crate::verify::{Verdict, Verification};

/// Directory of verified robots' addresses.
pub const ALL_OK: &str = "all-ok-bots";
/// Robots that are not verified and not spoofed (unverifiable, unregistered,
/// or a registered bot's address without a claim).
pub const OTHER: &str = "other-bots";
/// Clients that claim a registered bot and are not it.
pub const SUSPECT: &str = "suspect-bots";
/// Clients with a browser's User-Agent that behave like crawlers (from
/// log analysis): no claim to check, but not people either.
pub const UNDECLARED: &str = "undeclared-bots";
/// Robots, not verified, that a log showed fetching what robots.txt
/// closed to them (from log analysis).
pub const DISOBEDIENT: &str = "disobedient-bots";

/// The list directories every export has, in order of severity.
pub const CATEGORIES: [&str; 5] = [ALL_OK, OTHER, UNDECLARED, DISOBEDIENT, SUSPECT];

/// Addresses by category, from verdicts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lists {
    /// Verified robots.
    pub all_ok: BTreeSet<IpAddr>,
    /// Verified robots, per bot (directory-safe names).
    pub per_bot: BTreeMap<String, BTreeSet<IpAddr>>,
    /// Robots neither verified nor spoofed.
    pub other: BTreeSet<IpAddr>,
    /// Spoofed.
    pub suspect: BTreeSet<IpAddr>,
    /// Undeclared robots: browsers' User-Agents, crawlers' behaviour.
    pub undeclared: BTreeSet<IpAddr>,
    /// Robots, not verified, that fetched what robots.txt closed to them.
    pub disobedient: BTreeSet<IpAddr>,
}

/// Longest slug kept as written; a longer name is cut and marked.
const MAX_SLUG: usize = 64;

/// A bot name as a directory and map value: lower case, `[a-z0-9._-]`,
/// at most 64 + 9 bytes. A name that is not already such a word (a space,
/// a `!`, a leading dot, a reserved list name, over 64 bytes) gets a
/// `-` and eight hex digits of a hash of the name, so two names that
/// differ other than in case never share a directory (`Googlebot!` is not
/// `googlebot`).
pub fn slug(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    let trimmed = s.trim_matches(|c| c == '.' || c == '-');
    let clean = trimmed.len() == name.len()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        && !trimmed.is_empty()
        && trimmed.len() <= MAX_SLUG
        && !CATEGORIES.contains(&trimmed);
    if clean {
        return trimmed.to_owned();
    }
    // FNV-1a over the lower-cased name: stable across runs and builds.
    let mut h: u32 = 0x811c_9dc5;
    for b in name.to_lowercase().bytes() {
        h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
    }
    let mut head: &str = trimmed;
    if head.len() > MAX_SLUG {
        head = &head[..MAX_SLUG];
    }
    let head = head.trim_end_matches(['.', '-']);
    if head.is_empty() {
        format!("bot-{h:08x}")
    } else {
        format!("{head}-{h:08x}")
    }
}

/// Reads `verify --batch` output: one JSON verdict per line; error
/// records and lines that are not verdicts are counted, not used.
pub fn read_verdicts(input: impl std::io::BufRead) -> std::io::Result<(Vec<Verification>, usize)> {
    let (mut out, mut skipped) = (Vec::new(), 0usize);
    for line in input.split(b'\n') {
        let line = line?;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<Verification>(&line) {
            Ok(v) => out.push(v),
            Err(_) => skipped += 1,
        }
    }
    Ok((out, skipped))
}

impl Lists {
    /// `N verified (B bots), N other, N undeclared, N disobedient, N
    /// suspect`.
    pub fn summary(&self) -> String {
        format!(
            "{} verified ({} bots), {} other, {} undeclared, {} disobedient, {} suspect",
            self.all_ok.len(),
            self.per_bot.len(),
            self.other.len(),
            self.undeclared.len(),
            self.disobedient.len(),
            self.suspect.len()
        )
    }

    /// Puts `ip` in the disobedient list, out of every milder one
    /// (verified, other, undeclared); a suspect stays suspect.
    pub fn add_disobedient(&mut self, ip: IpAddr) {
        if self.suspect.contains(&ip) {
            return;
        }
        self.all_ok.remove(&ip);
        self.other.remove(&ip);
        self.undeclared.remove(&ip);
        for set in self.per_bot.values_mut() {
            set.remove(&ip);
        }
        self.per_bot.retain(|_, s| !s.is_empty());
        self.disobedient.insert(ip);
    }

    /// Sorts verdicts into lists. An address seen with several verdicts
    /// goes where the most severe puts it (suspect over other over
    /// verified), so one spoofing request is never whitelisted.
    pub fn from_verdicts<'a>(verdicts: impl IntoIterator<Item = &'a Verification>) -> Lists {
        let mut l = Lists::default();
        let mut verified: BTreeMap<IpAddr, BTreeSet<String>> = BTreeMap::new();
        for v in verdicts {
            match v.verdict {
                Verdict::Verified => {
                    if let Some(b) = &v.claimed_bot {
                        verified.entry(v.ip).or_default().insert(slug(b));
                    }
                }
                Verdict::Spoofed => {
                    l.suspect.insert(v.ip);
                }
                Verdict::Unverifiable | Verdict::UnclaimedBotIp => {
                    l.other.insert(v.ip);
                }
                Verdict::Unknown if v.is_bot => {
                    l.other.insert(v.ip);
                }
                Verdict::Unknown => {}
            }
        }
        l.other.retain(|ip| !l.suspect.contains(ip));
        for (ip, bots) in verified {
            if l.suspect.contains(&ip) || l.other.contains(&ip) {
                continue;
            }
            l.all_ok.insert(ip);
            for b in bots {
                l.per_bot.entry(b).or_default().insert(ip);
            }
        }
        l
    }

    /// Every (category, address) pair, categories as directory names.
    pub fn entries(&self) -> Vec<(String, IpAddr)> {
        let mut out: Vec<(String, IpAddr)> = Vec::new();
        out.extend(self.all_ok.iter().map(|ip| (ALL_OK.to_owned(), *ip)));
        for (b, ips) in &self.per_bot {
            out.extend(ips.iter().map(|ip| (b.clone(), *ip)));
        }
        out.extend(self.other.iter().map(|ip| (OTHER.to_owned(), *ip)));
        out.extend(
            self.undeclared
                .iter()
                .map(|ip| (UNDECLARED.to_owned(), *ip)),
        );
        out.extend(
            self.disobedient
                .iter()
                .map(|ip| (DISOBEDIENT.to_owned(), *ip)),
        );
        out.extend(self.suspect.iter().map(|ip| (SUSPECT.to_owned(), *ip)));
        out
    }

    /// An Apache `RewriteMap` text map: `IP value`, value `verified:BOT`,
    /// `other`, `undeclared`, `disobedient` or `suspect`.
    pub fn rewritemap(&self) -> String {
        let mut out = String::from(
            "# botscope crawler map: IP -> verified:BOT | other | undeclared | disobedient | suspect\n",
        );
        let mut lines: BTreeMap<IpAddr, String> = BTreeMap::new();
        for (b, ips) in &self.per_bot {
            for ip in ips {
                lines.entry(*ip).or_insert_with(|| format!("verified:{b}"));
            }
        }
        for ip in &self.other {
            lines.insert(*ip, "other".into());
        }
        for ip in &self.undeclared {
            lines.insert(*ip, "undeclared".into());
        }
        for ip in &self.disobedient {
            lines.insert(*ip, "disobedient".into());
        }
        for ip in &self.suspect {
            lines.insert(*ip, "suspect".into());
        }
        for (ip, v) in lines {
            out.push_str(&format!("{ip} {v}\n"));
        }
        out
    }

    /// An nginx `geo` block setting `$variable`: verified addresses
    /// (`verified:BOT`), the registry's published blocks (`published:BOT`),
    /// `other`, `undeclared`, `disobedient`, `suspect`; the most specific
    /// entry wins in nginx. Each network appears once (nginx warns of
    /// duplicates): an address's most severe value wins, a published block
    /// of one address gives way to what the log showed of it.
    pub fn nginx_geo(&self, registry: &Registry, variable: &str) -> String {
        let mut out = format!(
            "# botscope crawler lists, for: include this file in the http block\ngeo ${variable} {{\n    default none;\n"
        );
        let mut nets: BTreeMap<String, String> = BTreeMap::new();
        for b in registry.bots() {
            for r in b.ranges() {
                for cidr in r.to_cidrs() {
                    nets.entry(cidr)
                        .or_insert_with(|| format!("published:{}", slug(&b.name)));
                }
            }
        }
        let host = |ip: &IpAddr| {
            if ip.is_ipv4() {
                format!("{ip}/32")
            } else {
                format!("{ip}/128")
            }
        };
        let mut verified: BTreeSet<String> = BTreeSet::new();
        for (b, ips) in &self.per_bot {
            for ip in ips {
                // The first bot of an address (in name order) names it.
                if verified.insert(host(ip)) {
                    nets.insert(host(ip), format!("verified:{b}"));
                }
            }
        }
        for (set, value) in [
            (&self.other, "other"),
            (&self.undeclared, "undeclared"),
            (&self.disobedient, "disobedient"),
            (&self.suspect, "suspect"),
        ] {
            for ip in set {
                nets.insert(host(ip), value.to_owned());
            }
        }
        for (net, value) in nets {
            out.push_str(&format!("    {net} {value};\n"));
        }
        out.push_str("}\n");
        out
    }

    /// Plain lists: one address per line for each category (file name →
    /// content).
    pub fn plain(&self) -> BTreeMap<String, String> {
        let mut files: BTreeMap<String, String> = BTreeMap::new();
        for (cat, ip) in self.entries() {
            let f = files.entry(format!("{cat}.txt")).or_default();
            f.push_str(&ip.to_string());
            f.push('\n');
        }
        for cat in CATEGORIES {
            files.entry(format!("{cat}.txt")).or_default();
        }
        files
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(ip: &str, bot: Option<&str>, verdict: Verdict, is_bot: bool) -> Verification {
        Verification {
            ip: ip.parse().expect("ip"),
            user_agent: None,
            is_bot,
            client_type: Default::default(),
            claimed_bot: bot.map(str::to_owned),
            category: None,
            verdict,
            methods: vec![],
            hostnames: vec![],
            reason: String::new(),
            owner: Default::default(),
            signature: None,
        }
    }

    #[test]
    fn severity_wins() {
        let verdicts = [
            v("192.0.2.1", Some("Googlebot"), Verdict::Verified, true),
            v("192.0.2.2", Some("Googlebot"), Verdict::Verified, true),
            v("192.0.2.2", Some("Googlebot"), Verdict::Spoofed, true),
            v("192.0.2.3", None, Verdict::UnclaimedBotIp, false),
            v("192.0.2.4", None, Verdict::Unknown, false),
            v("2001:db8::1", Some("Yahoo! Slurp"), Verdict::Verified, true),
        ];
        let l = Lists::from_verdicts(&verdicts);
        let ips = |s: &BTreeSet<IpAddr>| s.iter().map(ToString::to_string).collect::<Vec<_>>();
        assert_eq!(ips(&l.all_ok), ["192.0.2.1", "2001:db8::1"]);
        assert_eq!(ips(&l.suspect), ["192.0.2.2"]);
        assert_eq!(ips(&l.other), ["192.0.2.3"]);
        assert_eq!(
            l.per_bot.keys().collect::<Vec<_>>(),
            ["googlebot", "yahoo--slurp-2e5507ba"]
        );
        let map = l.rewritemap();
        assert!(
            map.contains("192.0.2.1 verified:googlebot\n") && map.contains("192.0.2.2 suspect\n"),
            "{map}"
        );
        let reg = Registry::parse(
            "t",
            "bots:\n- name: Googlebot\n  cidr_list: [192.0.2.0/28]\n",
        )
        .expect("registry");
        let geo = l.nginx_geo(&reg, "botscope_crawler");
        assert!(
            geo.contains("    192.0.2.0/28 published:googlebot;\n")
                && geo.contains("    192.0.2.1/32 verified:googlebot;\n"),
            "{geo}"
        );
        assert!(geo.contains("2001:db8::1/128 verified:yahoo--slurp-2e5507ba;"));
        assert_eq!(l.plain()["suspect-bots.txt"], "192.0.2.2\n");
        assert_eq!(l.plain()["disobedient-bots.txt"], "");
    }

    #[test]
    fn disobedience_outranks_all_but_suspicion() {
        let verdicts = [
            v("192.0.2.1", Some("Googlebot"), Verdict::Verified, true),
            v("192.0.2.2", Some("Googlebot"), Verdict::Spoofed, true),
            v("192.0.2.3", None, Verdict::UnclaimedBotIp, false),
        ];
        let mut l = Lists::from_verdicts(&verdicts);
        for ip in ["192.0.2.1", "192.0.2.2", "192.0.2.3", "192.0.2.4"] {
            l.add_disobedient(ip.parse().expect("ip"));
        }
        let ips = |s: &BTreeSet<IpAddr>| s.iter().map(ToString::to_string).collect::<Vec<_>>();
        assert_eq!(ips(&l.disobedient), ["192.0.2.1", "192.0.2.3", "192.0.2.4"]);
        assert_eq!(ips(&l.suspect), ["192.0.2.2"]);
        assert!(l.all_ok.is_empty() && l.other.is_empty() && l.per_bot.is_empty());
        assert!(l.rewritemap().contains("192.0.2.3 disobedient\n"));
        assert!(
            l.summary()
                .ends_with("0 undeclared, 3 disobedient, 1 suspect")
        );
        assert_eq!(
            l.plain()["disobedient-bots.txt"],
            "192.0.2.1\n192.0.2.3\n192.0.2.4\n"
        );
    }

    #[test]
    fn slugs_are_directory_safe() {
        assert_eq!(slug("Googlebot"), "googlebot");
        assert_eq!(slug("archive.org_bot"), "archive.org_bot");
        let etc = slug("../etc");
        assert!(etc.starts_with("etc-") && etc.len() == 12, "{etc}");
        assert!(slug("all-ok-bots").starts_with("all-ok-bots-"));
        assert!(slug("/").starts_with("bot-"));
        // Names that differ other than in case never share a directory.
        assert_ne!(slug("Googlebot!"), slug("Googlebot"));
        assert_ne!(slug("Echobot Bot"), slug("Echobot-Bot"));
        assert_eq!(slug("Echobot Bot"), slug("ECHOBOT BOT"));
        assert!(slug("Echobot Bot").starts_with("echobot-bot-"));
        // A huge name still makes one short directory name.
        let long = slug(&"x".repeat(5000));
        assert_eq!(long.len(), MAX_SLUG + 9);
        for s in [etc, long, slug("a\u{0}b"), slug("日本")] {
            assert!(
                s.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-".contains(&b)),
                "{s}"
            );
        }
    }
}
