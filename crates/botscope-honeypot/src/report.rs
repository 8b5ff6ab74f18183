//! The ethics report: the honeypot's log read back, requests grouped by
//! crawler (the robot its User-Agent names, and its verified identity),
//! and each behaviour judged per site against the robots.txt that site
//! served that crawler.
//!
//! A verdict needs evidence: a site is judged only for crawlers that asked
//! it for something the behaviour is about, a failure names the requests
//! that failed it, and time gaps are judged at the log's resolution (one
//! second) so that no crawler that kept the Crawl-delay is failed.

use std::collections::{BTreeMap, HashMap};
use std::io::BufRead;
use std::net::IpAddr;

use botscope_accesslog::{LogFormat, MAX_LINE_BYTES, Malformed, VHOST_COMBINED};
use botscope_botid::{Owner, Registry, UaClassifier};
use botscope_robotstxt::Matcher;
use serde::Serialize;

use crate::design::{Behaviour, Design, NOBODY, POLICY_PATH, own_token};

/// Failing requests quoted per check.
const EVIDENCE: usize = 5;

/// The checks, in the report's order.
pub const CHECKS: [Check; 5] = [
    Check::RobotsFirst,
    Check::ObeyedDisallow,
    Check::OwnGroup,
    Check::CrawlDelay,
    Check::StoppedOn5xx,
];

/// One behaviour judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Check {
    /// Its first request to each site was `/robots.txt`.
    RobotsFirst,
    /// No request the site's robots.txt disallows (trap, allow inside
    /// disallow, wildcard and `$`, redirected robots.txt).
    ObeyedDisallow,
    /// On the own-group site: followed the group naming it, not `*`.
    OwnGroup,
    /// On the crawl-delay site: the delay between every two requests.
    CrawlDelay,
    /// On the site whose robots.txt answers 500: nothing but robots.txt.
    StoppedOn5xx,
}

impl Check {
    /// The stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            Check::RobotsFirst => "robots-first",
            Check::ObeyedDisallow => "obeyed-disallow",
            Check::OwnGroup => "own-group",
            Check::CrawlDelay => "crawl-delay",
            Check::StoppedOn5xx => "stopped-on-5xx",
        }
    }

    /// A heading for people.
    pub fn title(self) -> &'static str {
        match self {
            Check::RobotsFirst => "robots.txt first",
            Check::ObeyedDisallow => "obeyed Disallow",
            Check::OwnGroup => "own group over *",
            Check::CrawlDelay => "kept Crawl-delay",
            Check::StoppedOn5xx => "stopped on 5xx",
        }
    }
}

/// One request of the log.
#[derive(Debug, Clone)]
struct Hit {
    time: i64,
    site: usize,
    path: String,
    ip: IpAddr,
    ua: Option<String>,
}

/// A behaviour's result for one crawler.
#[derive(Debug, Clone, Serialize)]
pub struct Score {
    /// Which.
    pub check: Check,
    /// Sites judged.
    pub sites: u64,
    /// Sites passed.
    pub passed: u64,
    /// `passed / sites`, or `None` when no site could be judged.
    pub score: Option<f64>,
    /// Requests that failed it (a few).
    pub evidence: Vec<String>,
}

/// One crawler.
#[derive(Debug, Clone, Serialize)]
pub struct Crawler {
    /// The robot its User-Agent names (the registry's name when it claims
    /// a registered robot).
    pub name: String,
    /// Its identity by the registry's published addresses (offline):
    /// `verified`, `spoofed`, `unverifiable`, `unknown` (not registered).
    pub identity: String,
    /// User-Agents seen (at most ten).
    pub user_agents: Vec<String>,
    /// Addresses seen (at most ten).
    pub addresses: Vec<String>,
    /// Requests.
    pub requests: u64,
    /// Sites visited.
    pub sites: u64,
    /// Per behaviour.
    pub checks: Vec<Score>,
    /// The mean of the judged behaviours' scores, 0–100; `None` when none
    /// could be judged.
    pub score: Option<f64>,
    /// Its Web Bot Auth signatures, when it signed any request.
    pub signatures: Option<Signatures>,
}

/// A crawler's signed requests, each checked at the time it was made.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Signatures {
    /// Requests that carried a signature.
    pub signed: u64,
    /// Of those, signatures that held.
    pub verified: u64,
    /// Signatures that were wrong (expired, another host, replayed …).
    pub invalid: u64,
    /// Signatures that could not be checked (the agent's keys unknown).
    pub unverified: u64,
    /// The signature agents named (at most ten).
    pub agents: Vec<String>,
    /// The registered bots whose agents signed verified requests.
    pub bots: Vec<String>,
    /// Why the first signature that did not verify did not.
    pub first_failure: Option<String>,
}

impl Signatures {
    /// `verified/signed`.
    pub fn cell(&self) -> String {
        format!("{}/{}", self.verified, self.signed)
    }
}

/// A signed request as the honeypot recorded it (`LOG.signatures.jsonl`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct SignedRequest {
    /// When (Unix seconds).
    pub time: i64,
    /// The client.
    pub ip: IpAddr,
    /// Its User-Agent.
    pub user_agent: Option<String>,
    /// The method.
    pub method: String,
    /// The `Host` field as sent.
    pub host: String,
    /// The request target.
    pub target: String,
    /// `Signature`.
    pub signature: Option<String>,
    /// `Signature-Input`.
    pub signature_input: Option<String>,
    /// `Signature-Agent`.
    pub signature_agent: Option<String>,
}

/// Signed requests read at most.
pub const MAX_SIGNED: usize = 1_000_000;

/// Reads the signed requests the honeypot recorded beside its log
/// (`LOG.signatures.jsonl`): none when there is no such file. Lines that
/// are not records are counted, at most [`MAX_SIGNED`] records kept.
pub fn read_signed(path: &std::path::Path) -> std::io::Result<(Vec<SignedRequest>, u64)> {
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((Vec::new(), 0)),
        Err(e) => return Err(e),
    };
    let mut input = std::io::BufReader::new(file);
    let (mut out, mut bad) = (Vec::new(), 0u64);
    let mut buf = Vec::new();
    while next_line(&mut input, &mut buf)? {
        if buf.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<SignedRequest>(&buf) {
            Ok(r) if out.len() < MAX_SIGNED => out.push(r),
            _ => bad += 1,
        }
    }
    Ok((out, bad))
}

/// The distinct signature agents the records name (at most 64): the key
/// directories to fetch before the report.
pub fn signed_agents(records: &[SignedRequest]) -> Vec<String> {
    let mut agents: Vec<String> = Vec::new();
    for r in records {
        let Some(a) = &r.signature_agent else {
            continue;
        };
        for agent in botscope_httpsig::agents_in(a) {
            if agents.len() < 64 && !agents.contains(&agent) {
                agents.push(agent);
            }
        }
    }
    agents
}

/// The whole report.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The sites judged against.
    pub design: Design,
    /// Lines read.
    pub lines: u64,
    /// Lines that are not requests of the vhost_combined format, by reason.
    pub malformed: BTreeMap<String, u64>,
    /// Requests for hosts that are not the honeypot's sites.
    pub other_hosts: u64,
    /// Crawlers, best score first.
    pub crawlers: Vec<Crawler>,
}

/// What the log held.
struct Read {
    hits: Vec<Hit>,
    lines: u64,
    malformed: BTreeMap<String, u64>,
    other_hosts: u64,
}

/// Reads the log: requests for the design's sites, the rest counted.
fn read(input: impl BufRead, design: &Design) -> std::io::Result<Read> {
    let format = LogFormat::apache(VHOST_COMBINED).map_err(std::io::Error::other)?;
    let (mut hits, mut lines, mut malformed, mut other) =
        (Vec::new(), 0u64, BTreeMap::<String, u64>::new(), 0u64);
    let mut input = input;
    let mut buf: Vec<u8> = Vec::new();
    while next_line(&mut input, &mut buf)? {
        lines += 1;
        let line = buf.strip_suffix(b"\r").unwrap_or(&buf);
        let r = match format.parse_line(line) {
            Ok(r) => r,
            Err(Malformed::Empty) => {
                lines -= 1;
                continue;
            }
            Err(m) => {
                *malformed.entry(m.as_str().to_owned()).or_default() += 1;
                continue;
            }
        };
        let Some((site, _)) = r.vhost.as_deref().and_then(|v| design.site(v)) else {
            other += 1;
            continue;
        };
        hits.push(Hit {
            time: r.time,
            site,
            path: r.path.into_owned(),
            ip: r.ip,
            ua: r.user_agent.map(|u| u.into_owned()),
        });
    }
    Ok(Read {
        hits,
        lines,
        malformed,
        other_hosts: other,
    })
}

/// Reads one line into `buf` (without its newline), keeping at most
/// [`MAX_LINE_BYTES`] + 1 bytes of it (the parser then says `too-long`);
/// false at the end.
fn next_line(input: &mut impl BufRead, buf: &mut Vec<u8>) -> std::io::Result<bool> {
    buf.clear();
    let n = botscope_text::read_line_capped(input, buf, MAX_LINE_BYTES)?;
    if buf.last() == Some(&b'\n') {
        buf.pop();
    }
    Ok(n > 0)
}

/// The deciding line's text, for evidence.
fn rule_text(rules: &str, line: u32) -> String {
    rules
        .lines()
        .nth(line.saturating_sub(1) as usize)
        .unwrap_or("")
        .trim()
        .to_owned()
}

/// Judges every crawler in the log `input` against `design`.
pub fn report(
    input: impl BufRead,
    design: Design,
    registry: &Registry,
    classifier: &UaClassifier,
) -> std::io::Result<Report> {
    report_signed(
        input,
        design,
        registry,
        classifier,
        &[],
        &botscope_httpsig::KeySet::new(),
    )
}

/// [`report`], with the signed requests recorded beside the log, each
/// checked at its time with `keys` (the agents' key directories), and a
/// signature seen twice counted invalid (a replay).
pub fn report_signed(
    input: impl BufRead,
    design: Design,
    registry: &Registry,
    classifier: &UaClassifier,
    signed: &[SignedRequest],
    keys: &dyn botscope_httpsig::Keys,
) -> std::io::Result<Report> {
    let Read {
        hits,
        lines,
        malformed,
        other_hosts,
    } = read(input, &design)?;
    // Crawler of each (address, User-Agent).
    let mut key_of: HashMap<(IpAddr, Option<String>), (String, String)> = HashMap::new();
    let mut crawler_of = |ip: IpAddr, ua: Option<&str>| {
        key_of
            .entry((ip, ua.map(str::to_owned)))
            .or_insert_with(|| {
                let Some(ua) = ua else {
                    return ("(no User-Agent)".to_owned(), "unknown".to_owned());
                };
                let info = classifier.classify(ua);
                let name = info
                    .claimed_bot
                    .clone()
                    .or_else(|| botscope_botid::robot_name(ua))
                    .unwrap_or_else(|| ua.to_owned());
                let v =
                    botscope_botid::verify(registry, ip, Some(ua), &info, None, Owner::default());
                (name, v.verdict.as_str().to_owned())
            })
            .clone()
    };
    let mut by_crawler: BTreeMap<(String, String), Vec<usize>> = BTreeMap::new();
    for (i, h) in hits.iter().enumerate() {
        let key = crawler_of(h.ip, h.ua.as_deref());
        by_crawler.entry(key).or_default().push(i);
    }
    // Each signed request checked at the time it was made, in order (a
    // nonce seen twice is a replay).
    let mut sigs: HashMap<(String, String), Signatures> = HashMap::new();
    let mut nonces = botscope_httpsig::NonceMemory::new(MAX_SIGNED);
    for r in signed {
        let key = crawler_of(r.ip, r.user_agent.as_deref());
        let fields: Vec<(String, String)> = [
            ("signature", &r.signature),
            ("signature-input", &r.signature_input),
            ("signature-agent", &r.signature_agent),
        ]
        .into_iter()
        .filter_map(|(n, v)| v.clone().map(|v| (n.to_owned(), v)))
        .collect();
        let req = botscope_httpsig::Request::new(&r.method, "http", &r.host, &r.target, fields);
        let mut v = botscope_httpsig::verify_request(
            &req,
            keys,
            r.time,
            &botscope_httpsig::Policy::default(),
        );
        nonces.check(&mut v, r.time);
        let s = sigs.entry(key).or_default();
        s.signed += 1;
        match v.outcome {
            botscope_httpsig::Outcome::Verified => {
                s.verified += 1;
                if let Some(bot) = v
                    .identifier()
                    .and_then(|id| registry.signed_by_identifier(&id))
                    && !s.bots.contains(&bot.name)
                {
                    s.bots.push(bot.name.clone());
                }
            }
            botscope_httpsig::Outcome::Invalid => s.invalid += 1,
            botscope_httpsig::Outcome::Unverified => s.unverified += 1,
        }
        if v.outcome != botscope_httpsig::Outcome::Verified && s.first_failure.is_none() {
            s.first_failure = Some(format!("{} {}: {}", r.method, r.target, v.reason));
        }
        if let Some(a) = v.agent
            && s.agents.len() < 10
            && !s.agents.contains(&a)
        {
            s.agents.push(a);
        }
    }
    let mut crawlers: Vec<Crawler> = by_crawler
        .into_iter()
        .map(|(key, idx)| {
            let signatures = sigs.remove(&key);
            let (name, identity) = key;
            Crawler {
                signatures,
                ..judge(&design, &hits, name, identity, &idx)
            }
        })
        .collect();
    crawlers.sort_by(|a, b| {
        b.score
            .unwrap_or(-1.0)
            .total_cmp(&a.score.unwrap_or(-1.0))
            .then(b.requests.cmp(&a.requests))
            .then(a.name.cmp(&b.name))
    });
    Ok(Report {
        design,
        lines,
        malformed,
        other_hosts,
        crawlers,
    })
}

fn is_robots_path(b: Behaviour, path: &str) -> bool {
    path == "/robots.txt" || (b == Behaviour::Redirect && path == POLICY_PATH)
}

fn judge(design: &Design, hits: &[Hit], name: String, identity: String, idx: &[usize]) -> Crawler {
    let mut per_site: BTreeMap<usize, Vec<&Hit>> = BTreeMap::new();
    let mut uas: Vec<String> = Vec::new();
    let mut ips: Vec<String> = Vec::new();
    for &i in idx {
        let h = &hits[i];
        per_site.entry(h.site).or_default().push(h);
        if let Some(u) = &h.ua
            && uas.len() < 10
            && !uas.contains(u)
        {
            uas.push(u.clone());
        }
        let ip = h.ip.to_string();
        if ips.len() < 10 && !ips.contains(&ip) {
            ips.push(ip);
        }
    }
    let mut scores: HashMap<Check, Score> = CHECKS
        .iter()
        .map(|&c| {
            (
                c,
                Score {
                    check: c,
                    sites: 0,
                    passed: 0,
                    score: None,
                    evidence: Vec::new(),
                },
            )
        })
        .collect();
    let mut mark = |c: Check, pass: bool, evidence: Vec<String>| {
        let s = scores.get_mut(&c).expect("every check");
        s.sites += 1;
        if pass {
            s.passed += 1;
        }
        for e in evidence {
            if s.evidence.len() < EVIDENCE {
                s.evidence.push(e);
            }
        }
    };
    for (&si, site_hits) in &per_site {
        let site = &design.sites[si];
        let b = site.behaviour;
        let host = &site.host;
        // Log order is answer order; times are whole seconds.
        let mut hs = site_hits.clone();
        hs.sort_by_key(|h| h.time);
        let first = hs[0];
        mark(
            Check::RobotsFirst,
            first.path == "/robots.txt",
            if first.path == "/robots.txt" {
                Vec::new()
            } else {
                vec![format!("{host}: first request GET {}", first.path)]
            },
        );
        let pages: Vec<&&Hit> = hs.iter().filter(|h| !is_robots_path(b, &h.path)).collect();
        match b {
            Behaviour::Trap
            | Behaviour::AllowInDisallow
            | Behaviour::Wildcard
            | Behaviour::Redirect
            | Behaviour::OwnGroup
                if !pages.is_empty() =>
            {
                let ua = first.ua.as_deref();
                if b == Behaviour::OwnGroup && own_token(ua) == NOBODY {
                    continue;
                }
                let rules = design.rules(site, ua).unwrap_or_default();
                let m = Matcher::new(rules.as_bytes());
                let agent = ua.unwrap_or("");
                let bad: Vec<String> = pages
                    .iter()
                    .filter_map(|h| {
                        let v = m.check(agent, &h.path);
                        (!v.allowed).then(|| {
                            format!(
                                "{host}: GET {} ({})",
                                h.path,
                                v.rule
                                    .map(|r| rule_text(&rules, r.line))
                                    .unwrap_or_default()
                            )
                        })
                    })
                    .collect();
                let check = if b == Behaviour::OwnGroup {
                    Check::OwnGroup
                } else {
                    Check::ObeyedDisallow
                };
                mark(check, bad.is_empty(), bad);
            }
            Behaviour::CrawlDelay if hs.len() >= 2 => {
                let d = i64::from(design.crawl_delay);
                let bad: Vec<String> = hs
                    .windows(2)
                    .filter(|w| w[1].time - w[0].time < d)
                    .map(|w| {
                        format!(
                            "{host}: GET {} {} s after GET {} (Crawl-delay: {d})",
                            w[1].path,
                            w[1].time - w[0].time,
                            w[0].path
                        )
                    })
                    .collect();
                mark(Check::CrawlDelay, bad.is_empty(), bad);
            }
            Behaviour::ServerError => {
                let bad: Vec<String> = pages
                    .iter()
                    .map(|h| format!("{host}: GET {} after a 500 robots.txt", h.path))
                    .collect();
                mark(Check::StoppedOn5xx, bad.is_empty(), bad);
            }
            _ => {}
        }
    }
    let checks: Vec<Score> = CHECKS
        .iter()
        .map(|c| {
            let mut s = scores.remove(c).expect("every check");
            s.score = (s.sites > 0).then(|| s.passed as f64 / s.sites as f64);
            s
        })
        .collect();
    let judged: Vec<f64> = checks.iter().filter_map(|s| s.score).collect();
    let score =
        (!judged.is_empty()).then(|| 100.0 * judged.iter().sum::<f64>() / judged.len() as f64);
    Crawler {
        name,
        identity,
        user_agents: uas,
        addresses: ips,
        requests: idx.len() as u64,
        sites: per_site.len() as u64,
        checks,
        score,
        signatures: None,
    }
}

fn cell(s: &Score) -> String {
    match s.score {
        None => "-".to_owned(),
        Some(_) => format!("{}/{}", s.passed, s.sites),
    }
}

/// The report for a terminal: one row per crawler, then the evidence.
pub fn text(r: &Report) -> String {
    use std::fmt::Write;
    let f = botscope_text::field;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "honeypot: {} sites under {} (Crawl-delay {} s); {} lines, {} malformed, {} for other hosts",
        r.design.sites.len(),
        r.design.domain,
        r.design.crawl_delay,
        r.lines,
        r.malformed.values().sum::<u64>(),
        r.other_hosts
    );
    let name_w = r
        .crawlers
        .iter()
        .map(|c| f(&c.name).chars().count().min(40))
        .max()
        .unwrap_or(7)
        .max(7);
    let _ = write!(
        out,
        "\n{:<name_w$}  {:<12} {:>8} {:>5}",
        "crawler", "identity", "requests", "sites"
    );
    for c in CHECKS {
        let _ = write!(out, "  {:>16}", c.title());
    }
    let _ = writeln!(out, "  {:>5}  {:>6}", "score", "signed");
    for c in &r.crawlers {
        let name: String = f(&c.name).chars().take(40).collect();
        let _ = write!(
            out,
            "{name:<name_w$}  {:<12} {:>8} {:>5}",
            c.identity, c.requests, c.sites
        );
        for s in &c.checks {
            let _ = write!(out, "  {:>16}", cell(s));
        }
        let _ = writeln!(
            out,
            "  {:>5}  {:>6}",
            c.score
                .map_or_else(|| "-".to_owned(), |s| format!("{s:.0}")),
            c.signatures
                .as_ref()
                .map_or_else(|| "-".to_owned(), Signatures::cell)
        );
    }
    for c in &r.crawlers {
        let Some(s) = &c.signatures else { continue };
        let _ = writeln!(
            out,
            "\n{} ({}) signed {} requests as {}: {} verified, {} invalid, {} unverified{}{}",
            f(&c.name),
            c.identity,
            s.signed,
            f(&s.agents.join(", ")),
            s.verified,
            s.invalid,
            s.unverified,
            if s.bots.is_empty() {
                String::new()
            } else {
                format!("; the signature agent of {}", f(&s.bots.join(", ")))
            },
            s.first_failure
                .as_deref()
                .map(|w| format!("\n  first failure: {}", f(w)))
                .unwrap_or_default()
        );
    }
    for c in &r.crawlers {
        let failed: Vec<&Score> = c.checks.iter().filter(|s| !s.evidence.is_empty()).collect();
        if failed.is_empty() {
            continue;
        }
        let _ = writeln!(out, "\n{} ({}):", f(&c.name), c.identity);
        for s in failed {
            for e in &s.evidence {
                let _ = writeln!(out, "  {}: {}", s.check.as_str(), f(e));
            }
        }
    }
    out
}

/// The report as one self-contained HTML page (every string escaped by
/// the template engine, and strangers' control and bidi characters shown
/// as escapes).
pub fn html(r: &Report) -> String {
    use maud::{DOCTYPE, html};
    let f = botscope_text::field;
    let page = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { "Crawler ethics: botscope honeypot" }
                style {
                    "body{font:15px/1.5 system-ui,sans-serif;margin:2em;color:#222}"
                    "table{border-collapse:collapse}td,th{padding:.3em .7em;border-bottom:1px solid #ddd;text-align:left}"
                    "td.n{text-align:right}.pass{color:#176f2c}.fail{color:#b3261e;font-weight:600}"
                    "code{font-size:90%}.scroll{overflow-x:auto;max-width:100%}:focus-visible{outline:3px solid #1f5fa8;outline-offset:2px}"
                }
            }
            body {
                h1 { "Crawler ethics" }
                p {
                    (r.design.sites.len()) " sites under " code { (r.design.domain) }
                    " (Crawl-delay " (r.design.crawl_delay) " s); "
                    (r.lines) " log lines, " (r.malformed.values().sum::<u64>()) " malformed, "
                    (r.other_hosts) " for other hosts."
                }
                div.scroll tabindex="0" { table {
                    thead { tr {
                        th { "Crawler" } th { "Identity" } th { "Requests" } th { "Sites" }
                        @for c in CHECKS { th { (c.title()) } }
                        th { "Score" }
                        th title="signatures that held / signed requests (Web Bot Auth)" { "Signed" }
                    } }
                    tbody {
                        @for c in &r.crawlers {
                            tr {
                                td title=(c.user_agents.iter().map(|u| f(u)).collect::<Vec<_>>().join("\n")) { (f(&c.name)) }
                                td { (f(&c.identity)) }
                                td.n { (c.requests) }
                                td.n { (c.sites) }
                                @for s in &c.checks {
                                    @match s.score {
                                        None => td { "–" },
                                        Some(x) => td class=(if x >= 1.0 { "pass" } else { "fail" }) { (cell(s)) },
                                    }
                                }
                                td.n { (c.score.map_or_else(|| "–".to_owned(), |s| format!("{s:.0}"))) }
                                td.n title=(c.signatures.as_ref().map(|s| f(&s.agents.join(", ")).into_owned()).unwrap_or_default()) {
                                    (c.signatures.as_ref().map_or_else(|| "–".to_owned(), Signatures::cell))
                                }
                            }
                        }
                    }
                } }
                @if r.crawlers.iter().any(|c| c.signatures.is_some()) {
                    h2 { "Signed requests (Web Bot Auth)" }
                    ul {
                        @for c in &r.crawlers {
                            @if let Some(s) = &c.signatures {
                                li {
                                    b { (f(&c.name)) } " signed " (s.signed) " requests as "
                                    code { (f(&s.agents.join(", "))) } ": "
                                    (s.verified) " verified, " (s.invalid) " invalid, "
                                    (s.unverified) " unverified"
                                    @if !s.bots.is_empty() {
                                        " (the signature agent of " (f(&s.bots.join(", "))) ")"
                                    }
                                    @if let Some(w) = &s.first_failure {
                                        br; "first failure: " code { (f(w)) }
                                    }
                                }
                            }
                        }
                    }
                }
                @for c in &r.crawlers {
                    @if c.checks.iter().any(|s| !s.evidence.is_empty()) {
                        h2 { (f(&c.name)) " (" (f(&c.identity)) ")" }
                        ul {
                            @for s in &c.checks {
                                @for e in &s.evidence {
                                    li { b { (s.check.title()) } ": " code { (f(e)) } }
                                }
                            }
                        }
                    }
                }
                h2 { "What each site tests" }
                ul {
                    @for s in &r.design.sites {
                        li { code { (s.host) } ": " (s.behaviour.as_str()) }
                    }
                }
            }
        }
    };
    page.into_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_bounded_and_bad_ones_counted() {
        let design = Design::new(8, "hp.test", 2).expect("design");
        let good = "s0.hp.test:80 192.0.2.1 - - [24/Nov/2026:10:00:00 +0000] \"GET /robots.txt HTTP/1.1\" 200 80 \"-\" \"Bot/1.0\"\n";
        let mut log = String::new();
        log.push_str(good);
        log.push_str(&"x".repeat(MAX_LINE_BYTES * 3));
        log.push('\n');
        log.push_str("not a log line\n\n");
        log.push_str(&good.replace("s0.hp.test", "elsewhere.test"));
        log.push_str(good.trim_end());
        let r = read(std::io::Cursor::new(log.into_bytes()), &design).expect("read");
        assert_eq!(r.hits.len(), 2);
        assert_eq!(r.lines, 5);
        assert_eq!(r.other_hosts, 1);
        assert_eq!(r.malformed.values().sum::<u64>(), 2, "{:?}", r.malformed);
        assert_eq!(r.malformed.get("too-long"), Some(&1), "{:?}", r.malformed);
    }

    /// Found: bidi controls reached the HTML report raw. A crawler's name,
    /// User-Agent and evidence from a stranger's request are shown with
    /// their control and bidi characters escaped, in text and HTML alike.
    #[test]
    fn strangers_characters_are_escaped_in_the_reports() {
        let design = Design::new(8, "hp.test", 2).expect("design");
        let ua = "Evil\u{202e}gnp.exe/1.0 (\u{2067}x)";
        let mut log = String::new();
        for path in ["/robots.txt", "/trap/\u{202e}x", "/"] {
            log.push_str(&format!(
                "s1.hp.test:80 192.0.2.7 - - [24/Nov/2026:10:00:00 +0000] \"GET {path} HTTP/1.1\" 200 80 \"-\" \"{ua}\"\n"
            ));
        }
        let registry = Registry::bundled();
        let classifier = UaClassifier::bundled(&registry).expect("classifier");
        let r = report(
            std::io::Cursor::new(log.into_bytes()),
            design,
            &registry,
            &classifier,
        )
        .expect("report");
        assert!(
            !r.crawlers.is_empty(),
            "{} lines, {:?} malformed, {} elsewhere",
            r.lines,
            r.malformed,
            r.other_hosts
        );
        for out in [html(&r), text(&r)] {
            assert!(!out.contains('\u{202e}'), "{out}");
            assert!(!out.contains('\u{2067}'), "{out}");
            assert!(out.contains("\\u{202e}"), "{out}");
        }
    }
}
