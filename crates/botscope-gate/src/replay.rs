//! `botscope policy replay`: a policy run over an access log with the
//! log's own clock, so that a site owner sees what it would do before
//! switching it on. Each line becomes the facts the gate would gather
//! (identity judged offline from the published ranges and the owner
//! database, the lists, the site's robots.txt for the client's product
//! token, the log's time for rates) and goes through the same
//! [`botscope_policy::Policy::decide`] the gate calls.

use std::collections::BTreeMap;
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
/// Top clients shown per rule.
pub const TOP_CLIENTS: usize = 10;
/// Clients followed in detail per rule (the heaviest hitters, by the
/// space-saving algorithm: the top ones are among them).
const FOLLOWED: usize = 64;
/// Sample paths kept per top client.
const SAMPLE_PATHS: usize = 3;
/// Lines read to detect a log's format.
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
    /// The logs' format (each input's detected from its first lines when
    /// not given).
    pub format: Option<LogFormat>,
    /// Reverse-DNS evidence gathered beforehand by address (`--verify`:
    /// [`questions`], then the resolver): identity judged as the live gate
    /// judges it once its lookups have answered.
    pub evidence: Option<std::collections::HashMap<IpAddr, botscope_botid::FcrdnsEvidence>>,
    /// The gate's key (`--challenge-key`): with it, requests for the trap
    /// paths it derives catch clients as the gate's would, and the
    /// policy's `trapped:` rules decide as they did.
    pub trap_key: Option<Vec<u8>>,
}

/// One of the clients a rule caught most.
#[derive(Debug, Clone, Serialize)]
pub struct TopClient {
    /// The address.
    pub client: IpAddr,
    /// Requests of its the rule decided.
    pub requests: u64,
    /// The User-Agent of its first such request.
    pub user_agent: String,
    /// Its identity then.
    pub identity: &'static str,
    /// What the identity rests on (the verdict's reason).
    pub evidence: String,
    /// Its first distinct paths.
    pub paths: Vec<String>,
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
    /// The clients it caught most, most requests first.
    pub top: Vec<TopClient>,
    /// Why the rule could not be judged (it needs an input not given):
    /// `give --robots`, `give --lists`.
    pub not_judged: Option<&'static str>,
}

/// How one input was read.
#[derive(Debug, Clone, Serialize)]
pub struct Input {
    /// Its name.
    pub name: String,
    /// The format it was read in.
    pub format: String,
    /// Its lines.
    pub lines: u64,
}

/// A replay's result.
#[derive(Debug, Clone, Serialize)]
pub struct Replayed {
    /// The policy file.
    pub policy: String,
    /// The format the logs were read in (`, `-joined when they differ).
    pub format: String,
    /// Each input, with its own format.
    pub inputs: Vec<Input>,
    /// Lines read.
    pub lines: u64,
    /// Lines that are not a request in the format (counted, not used).
    pub malformed: u64,
    /// The first malformed line numbers.
    pub malformed_lines: Vec<u64>,
    /// Whether identity was judged with reverse DNS (`--verify`).
    pub verified: bool,
    /// Requests per action.
    pub actions: BTreeMap<&'static str, u64>,
    /// Per rule, in the policy's order, then the default.
    pub rules: Vec<RuleTally>,
}

/// One request decided, as the decision log would show it.
#[derive(Debug)]
pub struct Decided<'a> {
    /// The line's number, across the inputs.
    pub line: u64,
    /// The request's time (Unix seconds).
    pub time: i64,
    /// The client.
    pub client: IpAddr,
    /// The method.
    pub method: &'a str,
    /// The target.
    pub path: &'a str,
    /// The User-Agent.
    pub user_agent: &'a str,
    /// What identity judged.
    pub known: &'a crate::identity::Known,
    /// The deciding rule.
    pub rule: &'a str,
    /// The action.
    pub action: Action,
    /// For a limit: milliseconds until the client is under its rate.
    pub retry_after_ms: Option<u64>,
}

/// A client followed in detail.
struct Followed {
    client: IpAddr,
    /// Requests counted for it (an over-estimate by at most `error`).
    count: u64,
    error: u64,
    user_agent: String,
    identity: &'static str,
    evidence: String,
    paths: Vec<String>,
}

#[derive(Default)]
struct Tally {
    requests: u64,
    clients: std::collections::HashMap<IpAddr, u64>,
    capped: bool,
    bots: BTreeMap<String, u64>,
    followed: Vec<Followed>,
}

impl Tally {
    fn add(&mut self, ip: IpAddr, d: &Decided) {
        self.requests += 1;
        if self.clients.len() < MAX_CLIENTS_PER_RULE || self.clients.contains_key(&ip) {
            *self.clients.entry(ip).or_default() += 1;
        } else {
            self.capped = true;
        }
        if let Some(b) = d.known.bot.as_deref()
            && (self.bots.len() < 1_000 || self.bots.contains_key(b))
        {
            *self.bots.entry(b.to_owned()).or_default() += 1;
        }
        // Space-saving: a client followed is counted; a new one takes the
        // place of the least counted when all places are taken.
        if let Some(f) = self.followed.iter_mut().find(|f| f.client == ip) {
            f.count += 1;
            if f.paths.len() < SAMPLE_PATHS && !f.paths.iter().any(|p| p == d.path) {
                f.paths.push(cap(d.path, 200));
            }
            return;
        }
        let fresh = |count: u64, error: u64| Followed {
            client: ip,
            count,
            error,
            user_agent: cap(d.user_agent, 300),
            identity: d.known.identity.as_str(),
            evidence: d.known.evidence.reason.to_string(),
            paths: vec![cap(d.path, 200)],
        };
        if self.followed.len() < FOLLOWED {
            self.followed.push(fresh(1, 0));
        } else if let Some(min) = self.followed.iter_mut().min_by_key(|f| f.count) {
            let base = min.count;
            *min = fresh(base + 1, base);
        }
    }

    fn out(
        self,
        rule: String,
        action: &'static str,
        not_judged: Option<&'static str>,
    ) -> RuleTally {
        let mut bots: Vec<(String, u64)> = self.bots.into_iter().collect();
        bots.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        bots.truncate(BOTS_SHOWN);
        let clients = &self.clients;
        let mut top: Vec<TopClient> = self
            .followed
            .into_iter()
            .map(|f| TopClient {
                client: f.client,
                // The exact count where the client was counted; else the
                // estimate's lower bound.
                requests: clients.get(&f.client).copied().unwrap_or(f.count - f.error),
                user_agent: f.user_agent,
                identity: f.identity,
                evidence: f.evidence,
                paths: f.paths,
            })
            .collect();
        top.sort_by(|a, b| {
            b.requests
                .cmp(&a.requests)
                .then_with(|| a.client.cmp(&b.client))
        });
        top.truncate(TOP_CLIENTS);
        RuleTally {
            rule,
            action,
            requests: self.requests,
            clients: self.clients.len(),
            clients_capped: self.capped,
            bots,
            top,
            not_judged,
        }
    }
}

/// At most `n` bytes of `s` (on a character boundary).
fn cap(s: &str, n: usize) -> String {
    let mut end = s.len().min(n);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_owned()
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
    replay_with(cfg, inputs, &mut |_| {})
}

/// Every line of `inputs` that parses, in order, with its input's format
/// (`format`, or each input's detected from its first lines).
fn each_request(
    inputs: Vec<(String, Box<dyn BufRead + '_>)>,
    format: Option<&LogFormat>,
    on_input: &mut dyn FnMut(&str, &LogFormat),
    one: &mut dyn FnMut(&LogFormat, &[u8]),
) -> Result<(), ReplayError> {
    let mut line = Vec::new();
    for (name, mut reader) in inputs {
        let mut read = |buf: &mut Vec<u8>| {
            buf.clear();
            botscope_text::read_line_capped(&mut reader, buf, MAX_LINE_BYTES).map_err(|source| {
                ReplayError::Read {
                    name: name.clone(),
                    source,
                }
            })
        };
        // Without a format, each input's first lines pick its own (then
        // are replayed).
        let mut head: Vec<Vec<u8>> = Vec::new();
        let detected;
        let fmt = match format {
            Some(f) => f,
            None => {
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
                detected = botscope_accesslog::detect(&sample)
                    .ok_or_else(|| ReplayError::Format(name.clone()))?;
                &detected
            }
        };
        on_input(&name, fmt);
        for l in &head {
            one(fmt, l);
        }
        while read(&mut line)? > 0 {
            one(fmt, &line);
        }
    }
    Ok(())
}

/// The reverse-DNS questions a replay with `--verify` needs answered: each
/// address whose claim the published lists and the owner database leave
/// undecided, with the domains to check it against (as the gate would
/// ask them). At most `max` addresses (past it, the rest stay undecided).
pub fn questions(
    identity: IdentityConfig,
    format: Option<&LogFormat>,
    inputs: Vec<(String, Box<dyn BufRead + '_>)>,
    max: usize,
) -> Result<Vec<(IpAddr, Vec<String>)>, ReplayError> {
    let classifier = botscope_botid::UaClassifier::bundled(&identity.registry)?;
    let registry = identity.registry.clone();
    let mut seen: std::collections::HashMap<(IpAddr, u64), ()> = std::collections::HashMap::new();
    let hasher = foldhash::fast::RandomState::default();
    let mut out: BTreeMap<IpAddr, Vec<String>> = BTreeMap::new();
    each_request(inputs, format, &mut |_, _| {}, &mut |fmt, l| {
        let Ok(rec) = fmt.parse_line(trim_eol(l)) else {
            return;
        };
        let ua = crate::answer::capped(rec.user_agent.as_deref().unwrap_or(""));
        let key = (rec.ip, std::hash::BuildHasher::hash_one(&hasher, ua));
        if seen.len() >= 1 << 20 || seen.insert(key, ()).is_some() {
            return;
        }
        let info = classifier.classify(ua);
        let Some(domains) = botscope_botid::fcrdns_domains(&registry, rec.ip, &info) else {
            return;
        };
        let offline = botscope_botid::verify_at(
            &registry,
            rec.ip,
            Some(ua),
            &info,
            None,
            identity.owners.owner_at(rec.ip, rec.time),
            Some(rec.time),
        );
        if offline.verdict != botscope_botid::Verdict::Unverifiable {
            return;
        }
        if out.len() < max || out.contains_key(&rec.ip) {
            let d = out.entry(rec.ip).or_default();
            for x in domains {
                if !d.contains(x) {
                    d.push(x.clone());
                }
            }
        }
    })?;
    Ok(out.into_iter().collect())
}

/// [`replay`], telling `each` every decision.
pub fn replay_with(
    cfg: ReplayConfig,
    inputs: Vec<(String, Box<dyn BufRead + '_>)>,
    each: &mut dyn FnMut(&Decided),
) -> Result<Replayed, ReplayError> {
    let verified = cfg.evidence.is_some();
    let mut identities = Identities::new(cfg.identity)?;
    if let Some(ev) = cfg.evidence {
        identities = identities.with_evidence(ev);
    }
    let matcher = cfg.robots.as_deref().map(botscope_robotstxt::Matcher::new);
    let empty = Lists::from_entries(Vec::new(), "none");
    let lists = cfg.lists.as_ref().unwrap_or(&empty);
    let rates = Rates::default();
    let policy = &cfg.policy;
    // The traps, as the gate keyed them.
    let traps = policy.traps.as_ref().zip(cfg.trap_key.as_deref());
    let signer = traps.map(|(_, k)| crate::trap::Signer::new(k));
    let catches = crate::trap::Catches::default();
    let mut tallies: Vec<Tally> = (0..=policy.rules.len()).map(|_| Tally::default()).collect();
    let mut actions: BTreeMap<&'static str, u64> = BTreeMap::new();
    let (mut lines, mut malformed, mut malformed_lines) = (0u64, 0u64, Vec::new());
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
        let now_ms = u64::try_from(rec.time).unwrap_or(0).saturating_mul(1000);
        let mut trapped = botscope_policy::Trapped::NONE;
        if let (Some((t, _)), Some(signer)) = (traps, signer.as_ref()) {
            let target = botscope_policy::normalize_target(&rec.path);
            if let Some(hit) = signer.hit(&target, now_ms / 1000) {
                let exempt = known.identity == botscope_policy::Identity::Verified
                    || lists.place(rec.ip).category == crate::Category::AllOk;
                let quiet = rec.method.eq_ignore_ascii_case("HEAD");
                catches.judge(t, hit, rec.ip, quiet, exempt, now_ms);
            }
            trapped = catches.trapped(rec.ip, now_ms, t);
        }
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
            now_ms,
            navigation: botscope_policy::is_navigation(None, None, None, &rec.path),
            passed: false,
            trapped,
        };
        let d = policy.decide(&facts, &rates);
        let decided = Decided {
            line: lines,
            time: rec.time,
            client: rec.ip,
            method: &rec.method,
            path: &rec.path,
            user_agent: ua,
            known: &known,
            rule: d.rule,
            action: d.action,
            retry_after_ms: d.retry_after_ms,
        };
        each(&decided);
        for &i in &d.labels {
            tallies[i].add(rec.ip, &decided);
        }
        tallies[d.index.unwrap_or(policy.rules.len())].add(rec.ip, &decided);
        *actions.entry(d.action.as_str()).or_default() += 1;
    };
    // Each input, its format and its lines.
    let inputs_read: std::cell::RefCell<Vec<Input>> = std::cell::RefCell::default();
    each_request(
        inputs,
        cfg.format.as_ref(),
        &mut |name, fmt| {
            inputs_read.borrow_mut().push(Input {
                name: name.to_owned(),
                format: fmt.name().to_owned(),
                lines: 0,
            });
        },
        &mut |fmt, l| {
            one(fmt, l);
            if let Some(last) = inputs_read.borrow_mut().last_mut() {
                last.lines += 1;
            }
        },
    )?;
    let mut rules = Vec::with_capacity(tallies.len());
    for (i, t) in tallies.into_iter().enumerate() {
        match policy.rules.get(i) {
            Some(r) => {
                let not_judged = if r.when.robots.is_some() && matcher.is_none() {
                    Some("give --robots")
                } else if r.when.list.is_some() && cfg.lists.is_none() {
                    Some("give --lists")
                } else {
                    None
                };
                rules.push(t.out(r.name.clone(), r.action.as_str(), not_judged));
            }
            None => rules.push(t.out("default".to_owned(), policy.default.as_str(), None)),
        }
    }
    let inputs = inputs_read.into_inner();
    let mut formats: Vec<&str> = Vec::new();
    for i in &inputs {
        if !formats.contains(&i.format.as_str()) {
            formats.push(&i.format);
        }
    }
    Ok(Replayed {
        policy: policy.file.clone(),
        format: if formats.is_empty() {
            "none".to_owned()
        } else {
            formats.join(", ")
        },
        inputs: inputs.clone(),
        lines,
        malformed,
        malformed_lines,
        verified,
        actions,
        rules,
    })
}

fn trim_eol(l: &[u8]) -> &[u8] {
    let l = l.strip_suffix(b"\n").unwrap_or(l);
    l.strip_suffix(b"\r").unwrap_or(l)
}

/// Top clients shown per rule in the text report.
const TOP_IN_TEXT: usize = 3;

/// The replay as text: a line per rule that caught anything, with the
/// clients it caught most.
pub fn text(r: &Replayed) -> String {
    use std::fmt::Write as _;
    let mut o = String::new();
    let total: u64 = r.actions.values().sum();
    let _ = writeln!(
        o,
        "{} lines ({} format), {} requests replayed, {} malformed{}",
        r.lines,
        r.format,
        total,
        r.malformed,
        if r.verified {
            ", identity verified by reverse DNS"
        } else {
            ""
        }
    );
    if r.inputs.len() > 1 {
        for i in &r.inputs {
            let _ = writeln!(
                o,
                "  {}: {} lines, {} format",
                botscope_text::field(&i.name),
                i.lines,
                i.format
            );
        }
    }
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
        for c in t.top.iter().take(TOP_IN_TEXT) {
            let _ = writeln!(
                o,
                "  {}\t{} requests\t{}\t{} ({})\t{}",
                c.client,
                c.requests,
                botscope_text::field(&c.user_agent),
                c.identity,
                botscope_text::field(&c.evidence),
                botscope_text::field(&c.paths.join(" "))
            );
        }
    }
    let not_judged: Vec<String> = r
        .rules
        .iter()
        .filter_map(|t| t.not_judged.map(|why| format!("{} ({why})", t.rule)))
        .collect();
    if !not_judged.is_empty() {
        let _ = writeln!(
            o,
            "\nnot judged: {}",
            botscope_text::field(&not_judged.join(", "))
        );
    }
    let idle: Vec<&str> = r
        .rules
        .iter()
        .filter(|t| t.requests == 0 && t.not_judged.is_none())
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

/// One request as a JSON line, in the decision log's fields (the `time`
/// from the log), for `--format jsonl`.
pub fn jsonl(d: &Decided) -> String {
    let e = &d.known.evidence;
    let time = jiff::Timestamp::from_second(d.time)
        .map(|t| format!("{t:.3}"))
        .unwrap_or_default();
    serde_json::json!({
        "time": time,
        "line": d.line,
        "client": d.client.to_string(),
        "method": d.method,
        "path": d.path,
        "user_agent": d.user_agent,
        "claimed_bot": d.known.bot,
        "identity": d.known.identity.as_str(),
        "evidence": {
            "methods": e.methods,
            "reason": e.reason,
            "hostnames": e.hostnames,
            "asn": e.asn,
        },
        "category": d.known.category,
        "rule": d.rule,
        "action": d.action.as_str(),
        "retry_after": d.retry_after_ms.map(|ms| ms.div_ceil(1000).max(1)),
    })
    .to_string()
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
                    table class="stack" {
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
                                    td class="k" data-label="rule" { (t.rule) }
                                    td class="k" data-label="action" { (t.action) }
                                    td class="n" data-label="requests" { (t.requests) }
                                    td class="n" data-label="clients" { (t.clients) @if t.clients_capped { "+" } }
                                    td data-label="bots" {
                                        @for (i, (b, n)) in t.bots.iter().enumerate() {
                                            @if i > 0 { ", " }
                                            span class="k" { (b) " (" (n) ")" }
                                        }
                                        @if let Some(why) = t.not_judged {
                                            "not judged: " (why)
                                        }
                                    }
                                }
                            }
                        }
                    }
                    @for t in r.rules.iter().filter(|t| !t.top.is_empty() && t.action != "allow") {
                        section class="top" {
                            h2 { "Clients " (t.rule) " caught most (" (t.action) ")" }
                            ol {
                                @for c in &t.top {
                                    li {
                                        p {
                                            strong class="ip" { (c.client) }
                                            " · " (c.requests) " requests · " (c.identity)
                                        }
                                        p class="ua" { (c.user_agent) }
                                        p class="small" { (c.evidence) }
                                        p class="ua" {
                                            @for (i, p) in c.paths.iter().enumerate() {
                                                @if i > 0 { br; }
                                                (p)
                                            }
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
th,td{text-align:left;padding:.25rem .5rem;border-bottom:1px solid #767676;vertical-align:top;overflow-wrap:break-word}\
th{white-space:nowrap}\
.k{white-space:nowrap}\
.n{text-align:right;white-space:nowrap}\
@media (max-width:40rem){\
table.stack,table.stack caption,table.stack tbody,table.stack tr,table.stack td{display:block;width:auto}\
table.stack thead{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}\
table.stack tr{border-bottom:1px solid #767676;padding:.35rem 0}\
table.stack td{border:0;padding:.05rem 0;text-align:left}\
table.stack td::before{content:attr(data-label) \": \";font-weight:600}\
}\
.ip{white-space:nowrap}\
.top h2{font-size:1rem;margin:1.5rem 0 .5rem}\
.top ol{padding-left:1.5rem;margin:0}\
.top li{border-bottom:1px solid #767676;padding:.25rem 0}\
.top p{margin:.15rem 0}\
.ua{overflow-wrap:anywhere;word-break:normal}\
.small{color:#555;font-size:.875rem}";
