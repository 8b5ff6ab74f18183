//! `botscope policy replay`: a policy run over an access log with the
//! log's own clock, so that a site owner sees what it would do before
//! switching it on. Each line becomes the facts the gate would gather
//! (identity judged offline from the published ranges and the owner
//! database, the lists, the site's robots.txt for the client's product
//! token, the log's time for rates) and goes through the same
//! [`botscope_policy::Policy::decide`] the gate calls.

use std::collections::{BTreeMap, HashSet};
use std::io::BufRead;
use std::net::IpAddr;
use std::sync::Arc;

use botscope_accesslog::{LogFormat, MAX_LINE_BYTES};
use botscope_policy::{Action, Facts, Policy, Rates};
use serde::Serialize;

use crate::identity::{Identities, IdentityConfig};
use crate::lists::Lists;

/// Distinct clients counted per rule at most (past it: "at least").
pub const MAX_CLIENTS_PER_RULE: usize = 100_000;
/// Bots named per rule at most (the most frequent first).
const BOTS_SHOWN: usize = 10;
/// Lines read to detect the log's format.
const SAMPLE: usize = 100;

/// What a replay is given.
pub struct ReplayConfig {
    /// The policy.
    pub policy: Arc<Policy>,
    /// How identity is judged (offline: no reverse DNS).
    pub identity: IdentityConfig,
    /// The site's robots.txt (for `robots: disallowed`).
    pub robots: Option<Vec<u8>>,
    /// The lists the gate would read.
    pub lists: Option<Lists>,
    /// The log's format (detected from its first lines when not given).
    pub format: Option<LogFormat>,
}

/// What one rule (or the default) caught.
#[derive(Debug, Clone, Serialize)]
pub struct RuleTally {
    /// The rule's name (`default` for the default).
    pub rule: String,
    /// Its action.
    pub action: &'static str,
    /// Requests it decided (for a `label` rule: requests it labelled).
    pub requests: u64,
    /// Distinct client addresses among them.
    pub clients: usize,
    /// Whether the count of clients stopped at its bound.
    pub clients_capped: bool,
    /// The claimed bots among them, most requests first.
    pub bots: Vec<(String, u64)>,
}

/// A replay's result.
#[derive(Debug, Clone, Serialize)]
pub struct Replayed {
    /// The policy file.
    pub policy: String,
    /// The format the log was read in.
    pub format: String,
    /// Lines read.
    pub lines: u64,
    /// Lines that are not a request in the format (counted, not used).
    pub malformed: u64,
    /// The first malformed line numbers.
    pub malformed_lines: Vec<u64>,
    /// Requests per action.
    pub actions: BTreeMap<&'static str, u64>,
    /// Per rule, in the policy's order, then the default.
    pub rules: Vec<RuleTally>,
}

#[derive(Default)]
struct Tally {
    requests: u64,
    clients: HashSet<IpAddr>,
    capped: bool,
    bots: BTreeMap<String, u64>,
}

impl Tally {
    fn add(&mut self, ip: IpAddr, bot: Option<&str>) {
        self.requests += 1;
        if self.clients.len() < MAX_CLIENTS_PER_RULE {
            self.clients.insert(ip);
        } else if !self.clients.contains(&ip) {
            self.capped = true;
        }
        if let Some(b) = bot
            && (self.bots.len() < 1_000 || self.bots.contains_key(b))
        {
            *self.bots.entry(b.to_owned()).or_default() += 1;
        }
    }

    fn out(self, rule: String, action: &'static str) -> RuleTally {
        let mut bots: Vec<(String, u64)> = self.bots.into_iter().collect();
        bots.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        bots.truncate(BOTS_SHOWN);
        RuleTally {
            rule,
            action,
            requests: self.requests,
            clients: self.clients.len(),
            clients_capped: self.capped,
            bots,
        }
    }
}

/// What can stop a replay.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// An input could not be read.
    #[error("failed to read {name}: {source}")]
    Read {
        /// The input.
        name: String,
        /// Why.
        source: std::io::Error,
    },
    /// No line of the first ones is a request in any known format.
    #[error(
        "{0}: no line of the first {SAMPLE} is a request in a known format (give --log-format)"
    )]
    Format(String),
    /// The User-Agent classifier could not be built.
    #[error(transparent)]
    Identity(#[from] botscope_botid::Error),
}

/// Runs `cfg.policy` over the lines of `inputs` (each a name and a
/// reader, read in order: the log's time drives the rates).
pub fn replay(
    cfg: ReplayConfig,
    inputs: Vec<(String, Box<dyn BufRead + '_>)>,
) -> Result<Replayed, ReplayError> {
    replay_with(cfg, inputs, &mut |_, _, _| {})
}

/// [`replay`], telling `each` every decision: the line's number (across
/// the inputs), the deciding rule's name and the action.
pub fn replay_with(
    cfg: ReplayConfig,
    inputs: Vec<(String, Box<dyn BufRead + '_>)>,
    each: &mut dyn FnMut(u64, &str, Action),
) -> Result<Replayed, ReplayError> {
    let identities = Identities::new(cfg.identity)?;
    let matcher = cfg.robots.as_deref().map(botscope_robotstxt::Matcher::new);
    let empty = Lists::from_entries(Vec::new(), "none");
    let lists = cfg.lists.as_ref().unwrap_or(&empty);
    let rates = Rates::default();
    let policy = &cfg.policy;
    let mut tallies: Vec<Tally> = (0..=policy.rules.len()).map(|_| Tally::default()).collect();
    let mut actions: BTreeMap<&'static str, u64> = BTreeMap::new();
    let (mut lines, mut malformed, mut malformed_lines) = (0u64, 0u64, Vec::new());
    let mut format = cfg.format;
    // One line of the log: parsed, turned into facts, decided, tallied.
    let mut one = |fmt: &LogFormat, l: &[u8]| {
        lines += 1;
        let text = trim_eol(l);
        if text.is_empty() {
            return;
        }
        let Ok(rec) = fmt.parse_line(text) else {
            malformed += 1;
            if malformed_lines.len() < 5 {
                malformed_lines.push(lines);
            }
            return;
        };
        let ua = crate::answer::capped(rec.user_agent.as_deref().unwrap_or(""));
        let known = identities.identify_at(rec.ip, ua, Some(rec.time));
        let closed = |p: &str| {
            matcher
                .as_ref()
                .is_some_and(|m| !m.check_path(&known.token, p.as_bytes()).allowed)
        };
        let facts = Facts {
            ip: rec.ip,
            method: &rec.method,
            path: &rec.path,
            user_agent: ua,
            identity: known.identity,
            bot: known.bot.as_deref(),
            category: &known.category,
            signature: botscope_policy::Signature::None,
            asn: known.evidence.asn,
            lists: lists.bits(rec.ip),
            robots: matcher.as_ref().map(|_| &closed as &dyn Fn(&str) -> bool),
            now_ms: u64::try_from(rec.time).unwrap_or(0).saturating_mul(1000),
            navigation: botscope_policy::is_navigation(None, None, None, &rec.path),
            passed: false,
        };
        let d = policy.decide(&facts, &rates);
        each(lines, d.rule, d.action);
        for &i in &d.labels {
            tallies[i].add(rec.ip, known.bot.as_deref());
        }
        tallies[d.index.unwrap_or(policy.rules.len())].add(rec.ip, known.bot.as_deref());
        *actions.entry(d.action.as_str()).or_default() += 1;
    };
    let mut line = Vec::new();
    for (name, mut reader) in inputs {
        let mut read = |buf: &mut Vec<u8>| {
            buf.clear();
            read_line(&mut reader, buf).map_err(|source| ReplayError::Read {
                name: name.clone(),
                source,
            })
        };
        // Without a format, the first lines pick one (then are replayed).
        let mut head: Vec<Vec<u8>> = Vec::new();
        if format.is_none() {
            while head.len() < SAMPLE {
                let mut l = Vec::new();
                if read(&mut l)? == 0 {
                    break;
                }
                head.push(l);
            }
            if head.is_empty() {
                continue;
            }
            let sample: Vec<&[u8]> = head.iter().map(|l| trim_eol(l)).collect();
            format = Some(
                botscope_accesslog::detect(&sample)
                    .ok_or_else(|| ReplayError::Format(name.clone()))?,
            );
        }
        let Some(fmt) = format.as_ref() else { continue };
        for l in &head {
            one(fmt, l);
        }
        while read(&mut line)? > 0 {
            one(fmt, &line);
        }
    }
    let mut rules = Vec::with_capacity(tallies.len());
    for (i, t) in tallies.into_iter().enumerate() {
        match policy.rules.get(i) {
            Some(r) => rules.push(t.out(r.name.clone(), r.action.as_str())),
            None => rules.push(t.out("default".to_owned(), policy.default.as_str())),
        }
    }
    Ok(Replayed {
        policy: policy.file.clone(),
        format: format.map_or_else(|| "none".to_owned(), |f| f.name().to_owned()),
        lines,
        malformed,
        malformed_lines,
        actions,
        rules,
    })
}

/// One line (with its end) into `buf`, at most [`MAX_LINE_BYTES`] kept:
/// the rest of a longer line is read and dropped (the line is then
/// malformed). The bytes read, 0 at the end.
fn read_line(r: &mut dyn BufRead, buf: &mut Vec<u8>) -> std::io::Result<usize> {
    let mut total = 0;
    loop {
        let chunk = r.fill_buf()?;
        if chunk.is_empty() {
            return Ok(total);
        }
        let (take, done) = match memchr::memchr(b'\n', chunk) {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        let room = (MAX_LINE_BYTES + 1).saturating_sub(buf.len());
        buf.extend_from_slice(&chunk[..take.min(room)]);
        r.consume(take);
        total += take;
        if done {
            return Ok(total);
        }
    }
}

fn trim_eol(l: &[u8]) -> &[u8] {
    let l = l.strip_suffix(b"\n").unwrap_or(l);
    l.strip_suffix(b"\r").unwrap_or(l)
}

/// The replay as text: a line per rule that caught anything.
pub fn text(r: &Replayed) -> String {
    use std::fmt::Write as _;
    let mut o = String::new();
    let total: u64 = r.actions.values().sum();
    let _ = writeln!(
        o,
        "{} lines ({} format), {} requests replayed, {} malformed",
        r.lines, r.format, total, r.malformed
    );
    let actions: Vec<String> = r.actions.iter().map(|(a, n)| format!("{a} {n}")).collect();
    let _ = writeln!(o, "decisions: {}", actions.join(", "));
    let _ = writeln!(o, "\nrule\taction\trequests\tclients\tbots");
    for t in r.rules.iter().filter(|t| t.requests > 0) {
        let bots: Vec<String> = t.bots.iter().map(|(b, n)| format!("{b} ({n})")).collect();
        let _ = writeln!(
            o,
            "{}\t{}\t{}\t{}{}\t{}",
            botscope_text::field(&t.rule),
            t.action,
            t.requests,
            t.clients,
            if t.clients_capped { "+" } else { "" },
            if bots.is_empty() {
                "-".to_owned()
            } else {
                botscope_text::field(&bots.join(", ")).into_owned()
            }
        );
    }
    let idle: Vec<&str> = r
        .rules
        .iter()
        .filter(|t| t.requests == 0)
        .map(|t| t.rule.as_str())
        .collect();
    if !idle.is_empty() {
        let _ = writeln!(
            o,
            "\nno request reached: {}",
            botscope_text::field(&idle.join(", "))
        );
    }
    o
}

/// Whether any request would be refused, limited or challenged.
pub fn acts(r: &Replayed) -> bool {
    r.actions
        .iter()
        .any(|(a, n)| *n > 0 && *a != Action::Allow.as_str())
}

/// The replay as one HTML page (the template engine escapes every value).
pub fn html(r: &Replayed) -> String {
    let total: u64 = r.actions.values().sum();
    let page = maud::html! {
        (maud::DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { "Policy replay: " (r.policy) }
                style { (maud::PreEscaped(CSS)) }
            }
            body {
                main {
                    h1 { "What the policy would do" }
                    p {
                        (r.policy) " over " (r.lines) " log lines (" (r.format) " format): "
                        (total) " requests replayed, " (r.malformed) " lines malformed."
                    }
                    table {
                        caption { "Requests by decision" }
                        thead { tr { th scope="col" { "decision" } th scope="col" class="n" { "requests" } } }
                        tbody {
                            @for (a, n) in &r.actions {
                                tr { td { (a) } td class="n" { (n) } }
                            }
                        }
                    }
                    table {
                        caption { "Requests by rule, in the policy's order" }
                        thead {
                            tr {
                                th scope="col" { "rule" }
                                th scope="col" { "action" }
                                th scope="col" class="n" { "requests" }
                                th scope="col" class="n" { "clients" }
                                th scope="col" { "bots" }
                            }
                        }
                        tbody {
                            @for t in &r.rules {
                                tr {
                                    td { (t.rule) }
                                    td { (t.action) }
                                    td class="n" { (t.requests) }
                                    td class="n" { (t.clients) @if t.clients_capped { "+" } }
                                    td {
                                        @for (i, (b, n)) in t.bots.iter().enumerate() {
                                            @if i > 0 { ", " }
                                            (b) " (" (n) ")"
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    };
    page.into_string()
}

const CSS: &str = "body{font:16px/1.5 system-ui,sans-serif;color:#1a1a1a;background:#fff;margin:0}\
main{max-width:60rem;margin:0 auto;padding:1rem}\
table{border-collapse:collapse;margin:1rem 0;width:100%}\
caption{text-align:left;font-weight:600;padding:.25rem 0}\
th,td{text-align:left;padding:.25rem .5rem;border-bottom:1px solid #767676;vertical-align:top;overflow-wrap:anywhere}\
.n{text-align:right;white-space:nowrap}";
