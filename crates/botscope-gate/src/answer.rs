//! One request's answer: the facts gathered from memory (the lists, the
//! client's identity, its signature, the robots.txt it is served), the
//! policy's decision, and the response the front server needs.
//!
//! - `GET /auth`, for nginx's `auth_request`, which passes on only 2xx,
//!   401 and 403: allow is 200, deny and limit are 403 (the decision in
//!   `X-Bot-Decision`, `Retry-After` for a limit: the documented
//!   configuration turns a limit into a 429), challenge is 401.
//! - `GET /forward-auth`, for proxies that pass the gate's own answer to
//!   the client (Caddy's `forward_auth`, Traefik's ForwardAuth): allow is
//!   200, deny 403, limit 429 with `Retry-After`, challenge 401, each with
//!   a short page saying why.

use std::borrow::Cow;
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use botscope_policy::{Action, Facts, Identity, Signature};

use crate::Gate;
use crate::identity::Known;
use crate::lists::{Category, Placed, choose};
use crate::signature::Checked;

/// One rule's decisions by action.
pub type Slot = Arc<[std::sync::atomic::AtomicU64; Action::ALL.len()]>;

/// Decisions counted by rule and action: a slot of atomic counters per
/// rule name, kept across reloads (a rule's count goes on when a reload
/// moves it); each snapshot holds its rules' slots in order, so a request
/// counts with one atomic addition and no lock.
#[derive(Debug, Default)]
pub struct Counters {
    by_rule: Mutex<HashMap<String, Slot>>,
}

impl Counters {
    /// The slots of `names`, in order (made for names not seen before).
    /// Names are the policy's (at most its rule count, plus `default` and
    /// `--deny`), never a client's text.
    pub fn slots<'n>(&self, names: impl Iterator<Item = &'n str>) -> Vec<Slot> {
        let mut m = self.by_rule.lock().unwrap_or_else(|p| p.into_inner());
        names
            .map(|n| m.entry(n.to_owned()).or_default().clone())
            .collect()
    }

    /// `(rule, action, count)` for every pair counted, sorted.
    pub fn snapshot(&self) -> Vec<(String, &'static str, u64)> {
        let m = self.by_rule.lock().unwrap_or_else(|p| p.into_inner());
        let mut out: Vec<(String, &'static str, u64)> = m
            .iter()
            .flat_map(|(rule, c)| {
                Action::ALL.iter().filter_map(move |(name, a)| {
                    let n = c[*a as usize].load(std::sync::atomic::Ordering::Relaxed);
                    (n > 0).then(|| (rule.clone(), *name, n))
                })
            })
            .collect();
        out.sort();
        out
    }
}

/// The names of the headers the gate reads and writes, made once (a name
/// given as a string is parsed and hashed again at every use).
mod names {
    use axum::http::HeaderName;

    macro_rules! names {
        ($($id:ident = $s:literal;)*) => {
            $(pub const $id: HeaderName = HeaderName::from_static($s);)*
        };
    }
    names! {
        X_BOT_CONTENT_USAGE = "x-bot-content-usage";
        CRAWLER_CHARGED = "crawler-charged";
        X_ORIGINAL_METHOD = "x-original-method";
        X_FORWARDED_METHOD = "x-forwarded-method";
        X_ORIGINAL_URI = "x-original-uri";
        X_FORWARDED_URI = "x-forwarded-uri";
        X_FORWARDED_PROTO = "x-forwarded-proto";
        X_ORIGINAL_HOST = "x-original-host";
        X_FORWARDED_HOST = "x-forwarded-host";
        SEC_FETCH_MODE = "sec-fetch-mode";
        SEC_FETCH_DEST = "sec-fetch-dest";
        X_BOT_CATEGORY = "x-bot-category";
        X_BOT_NAME = "x-bot-name";
        X_BOT_IDENTITY = "x-bot-identity";
        X_BOT_CLAIMED = "x-bot-claimed";
        X_BOT_DECISION = "x-bot-decision";
        X_BOT_RULE = "x-bot-rule";
        X_BOT_LABELS = "x-bot-labels";
        X_BOT_CHALLENGE = "x-bot-challenge";
        // The challenge the gate issued, for nginx to hand back to its
        // page (the rule it was issued by travels inside).
        X_BOT_CHALLENGE_TOKEN = "x-bot-challenge-token";
        X_BOT_SIGNATURE = "x-bot-signature";
        X_BOT_SIGNATURE_REASON = "x-bot-signature-reason";
        X_SIGNATURE_AGENT = "x-signature-agent";
        X_BOT_REPORT_ONLY = "x-bot-report-only";
        X_ROBOTS_FILE = "x-robots-file";
        // A page's trap links, for the front server to put in it.
        X_BOT_TRAP_LINKS = "x-bot-trap-links";
    }
}

use names::*;

/// A header's value as text (lossy), trimmed.
fn text<'h>(h: &'h HeaderMap, name: impl header::AsHeaderName) -> Option<Cow<'h, str>> {
    h.get(name)
        .map(|v| match String::from_utf8_lossy(v.as_bytes()) {
            Cow::Borrowed(b) => Cow::Borrowed(b.trim()),
            Cow::Owned(o) => Cow::Owned(o.trim().to_owned()),
        })
}

/// The request the front server asks about: its method and target, from
/// `X-Original-Method` and `X-Original-URI` (nginx, as documented) or
/// `X-Forwarded-Method` and `X-Forwarded-Uri` (Caddy, Traefik); `GET` and
/// `/` when neither is sent.
pub fn original(h: &HeaderMap) -> (Cow<'_, str>, Cow<'_, str>) {
    let method = text(h, X_ORIGINAL_METHOD)
        .or_else(|| text(h, X_FORWARDED_METHOD))
        .filter(|m| !m.is_empty())
        .unwrap_or(Cow::Borrowed("GET"));
    let target = text(h, X_ORIGINAL_URI)
        .or_else(|| text(h, X_FORWARDED_URI))
        .filter(|t| !t.is_empty())
        .unwrap_or(Cow::Borrowed("/"));
    (method, target)
}

/// The site's origin as the request names it. Behind a front server: the
/// scheme from `X-Forwarded-Proto` (else `https`), the host from
/// `X-Original-Host`, `X-Forwarded-Host` or `Host`. On its own in front of
/// an application (`standalone`), the forwarding headers count only from
/// a trusted proxy (`trusted`): else the scheme is its own (`http`) and
/// the host the `Host` field.
pub fn origin(h: &HeaderMap, standalone: bool, trusted: bool) -> String {
    let believed = !standalone || trusted;
    let scheme = match text(h, X_FORWARDED_PROTO).filter(|_| believed) {
        Some(p) if p.eq_ignore_ascii_case("http") => "http",
        Some(_) => "https",
        None if standalone => "http",
        None => "https",
    };
    let host = (believed)
        .then(|| text(h, X_ORIGINAL_HOST).or_else(|| text(h, X_FORWARDED_HOST)))
        .flatten()
        .or_else(|| text(h, header::HOST))
        .unwrap_or(Cow::Borrowed(""));
    let host: String = host
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '[' | ']'))
        .take(255)
        .collect::<String>()
        .to_ascii_lowercase();
    format!("{scheme}://{host}")
}

/// A User-Agent cut to what the classifier reads.
pub(crate) fn capped(ua: &str) -> &str {
    if ua.len() <= botscope_botid::MAX_UA_BYTES {
        return ua;
    }
    let mut end = botscope_botid::MAX_UA_BYTES;
    while !ua.is_char_boundary(end) {
        end -= 1;
    }
    &ua[..end]
}

/// Everything decided about one request.
#[derive(Debug)]
pub struct Answer {
    /// The client's address (the connection's, or a trusted proxy's word).
    pub client: IpAddr,
    /// Where the lists and the identity place the client.
    pub placed: Placed,
    /// Its identity, when identity is on.
    pub known: Option<Arc<Known>>,
    /// The identity after the signature (a registered agent's valid
    /// signature verifies its bot).
    pub identity: Option<Identity>,
    /// The bot claimed or signed as.
    pub bot: Option<String>,
    /// Its signature, when checked.
    pub checked: Option<Checked>,
    /// What to do.
    pub action: Action,
    /// The deciding rule.
    pub rule: String,
    /// For a limit: seconds until the client may come back.
    pub retry_after: Option<u64>,
    /// The `label` rules that matched, and their headers.
    pub labels: Vec<(String, Vec<(String, String)>)>,
    /// The client held a valid challenge pass (the challenge rules'
    /// rates were ten times higher for it).
    pub passed: bool,
    /// The action is carried out (false under `--report-only`: decided,
    /// logged and counted, then allowed).
    pub enforced: bool,
    /// For a `charge` rule: what the payment exchange comes to (a quote,
    /// a charge, or a documented error).
    pub pay: Option<botscope_terms::pay::Outcome>,
    /// For a `license` rule: what the licence token came to.
    pub licence: Option<crate::licence::Licensed>,
    /// For a `license` rule: the `Link` field to the site's licence, its
    /// URL absolute (RSL section 4.5) on the site's origin.
    pub licence_link: Option<String>,
    /// For a request under the trap prefix: what it was, what it came to.
    /// Such a request never reaches the application.
    pub trap: Option<(crate::trap::Hit, crate::trap::Outcome)>,
}

/// Whether the request is a prefetch (`Sec-Purpose: prefetch`, `Purpose:
/// prefetch`, `X-moz: prefetch`): a browser fetching ahead of a person,
/// which a trap never counts.
pub fn is_prefetch(h: &HeaderMap) -> bool {
    ["sec-purpose", "purpose", "x-moz", "x-purpose"]
        .iter()
        .any(|n| {
            h.get_all(*n).iter().any(|v| {
                v.to_str().is_ok_and(|v| {
                    v.split([';', ',']).any(|w| {
                        let w = w.trim();
                        w.eq_ignore_ascii_case("prefetch") || w.eq_ignore_ascii_case("preview")
                    })
                })
            })
        })
}

/// A trap hit: what it came to, counted ([`Catches::judge`](crate::trap::Catches::judge)).
#[allow(clippy::too_many_arguments)]
fn trap_hit(
    g: &Gate,
    t: &botscope_policy::Traps,
    hit: crate::trap::Hit,
    ip: IpAddr,
    h: &HeaderMap,
    method: &str,
    known_verified: bool,
    placed: &Placed,
    now_ms: u64,
) -> crate::trap::Outcome {
    let quiet = method.eq_ignore_ascii_case("HEAD") || is_prefetch(h);
    let exempt = known_verified || placed.category == Category::AllOk;
    g.traps.catches.judge(t, hit, ip, quiet, exempt, now_ms)
}

pub(crate) fn unix_now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Where the lists and the identity place a client: a verified identity
/// under its bot's name (evidence now beats an old list), a refuted one
/// with the suspects, an unproven claim or an unregistered robot with the
/// other robots, else where the lists put it.
pub fn place(
    lists: Placed,
    identity: Option<Identity>,
    category: &str,
    bot: Option<&str>,
) -> Placed {
    let at_least = |c: Category| Placed {
        category: lists.category.max(c),
        bot: None,
    };
    match identity {
        Some(Identity::Verified) => Placed {
            category: Category::AllOk,
            bot: bot.map(|b| Arc::from(botscope_botid::slug(b))),
        },
        Some(Identity::Spoofed) => at_least(Category::Suspect),
        Some(Identity::Unverifiable | Identity::Unknown) => at_least(Category::Other),
        Some(Identity::Unclaimed) if category == botscope_policy::UNREGISTERED_BOT => {
            at_least(Category::Other)
        }
        _ => lists,
    }
}

/// Decides the request a front server asks about (its method and target
/// from the headers `original` reads).
pub async fn decide(g: &Gate, peer: IpAddr, h: &HeaderMap) -> Answer {
    let (method, path) = original(h);
    decide_at(g, peer, h, &method, &path).await
}

/// Decides one request: `method` and `target` (path and query) as the
/// client sent them.
pub async fn decide_at(g: &Gate, peer: IpAddr, h: &HeaderMap, method: &str, path: &str) -> Answer {
    let started = std::time::Instant::now();
    let ip = g.client(peer, h);
    let snap = g.current.load();
    let user_agent = text(h, header::USER_AGENT).unwrap_or(Cow::Borrowed(""));
    let user_agent = capped(&user_agent);
    let known = g.identities.as_ref().map(|i| i.identify(ip, user_agent));
    let checked = match &g.signatures {
        Some(s) => Some(s.check(h, ip, crate::unix_now()).await),
        None => None,
    };
    let signed_bot = checked.as_ref().and_then(|c| c.bot.clone());
    let mut identity = known.as_ref().map(|k| k.identity);
    let mut bot = known.as_ref().and_then(|k| k.bot.clone());
    let mut category = known
        .as_ref()
        .map_or(botscope_policy::BROWSER, |k| k.category.as_str())
        .to_owned();
    // A registered agent's valid signature verifies its bot, whatever the
    // address or the User-Agent says (identity on or off).
    if let Some(b) = &signed_bot {
        identity = Some(Identity::Verified);
        if let Some(e) = g
            .identities
            .as_ref()
            .and_then(|i| i.registry().get(b).cloned())
        {
            category = e.category.map_or("other", |c| c.as_str()).to_owned();
        }
        bot = Some(b.clone());
    }
    let placed = place(snap.lists.place(ip), identity, &category, bot.as_deref());
    let signature = match checked.as_ref().map(|c| &c.verdict) {
        None => Signature::None,
        Some(v) if v.reason == botscope_httpsig::Reason::NoSignature => Signature::None,
        Some(v) => match v.outcome {
            botscope_httpsig::Outcome::Verified => Signature::Verified,
            botscope_httpsig::Outcome::Invalid => Signature::Invalid,
            botscope_httpsig::Outcome::Unverified => Signature::Unverified,
        },
    };
    // A pass is read only from a client that sends one (its HMAC checked):
    // it raises the challenge rules' rates tenfold.
    let passed = text(h, header::COOKIE).is_some_and(|c| {
        c.contains(crate::challenge::COOKIE)
            && g.challenges
                .passes(&c, ip, user_agent, unix_now_ms() / 1000)
                .is_some()
    });
    let navigation = botscope_policy::is_navigation(
        text(h, SEC_FETCH_MODE).as_deref(),
        text(h, SEC_FETCH_DEST).as_deref(),
        text(h, header::ACCEPT).as_deref(),
        path,
    );
    let trap_cfg = snap.policy.as_ref().and_then(|p| p.traps.as_ref());
    let now_ms = unix_now_ms();
    let mut trap = None;
    if let Some(t) = trap_cfg
        && let Some(hit) = g
            .traps
            .signer(&g.challenges.key())
            .hit(&botscope_policy::normalize_target(path), now_ms / 1000)
    {
        let verified = identity == Some(Identity::Verified);
        let outcome = trap_hit(g, t, hit, ip, h, method, verified, &placed, now_ms);
        if let Some(ev) = &g.events {
            ev.trap(ip, hit, outcome, method, path, user_agent);
        }
        if let crate::trap::Outcome::Caught(kind) = outcome
            && let Some(cs) = &g.crowdsec
        {
            cs.push(crate::crowdsec::Catch {
                ip: crate::trap::address_key(ip),
                kind,
                at_ms: now_ms,
                hold_ms: t.hold_ms,
            });
        }
        // Every gate of the fleet knows a catch within a second.
        if let crate::trap::Outcome::Caught(kind) = outcome
            && let Some(shared) = &g.shared
        {
            let nonce = u32::try_from(now_ms & 0xffff_ffff).unwrap_or(0) ^ u32::from(ip.is_ipv6());
            shared
                .push_catch(&crate::trap::member(ip, kind, nonce, t.hold_ms), t.hold_ms)
                .await;
        }
        trap = Some((hit, outcome));
    }
    let trapped = trap_cfg.map_or(botscope_policy::Trapped::NONE, |t| {
        g.traps.catches.trapped(ip, now_ms, t)
    });
    // The counters' slot of the deciding rule (see `Snapshot::counters`).
    let mut slot_of = 0;
    let mut price = None;
    // A challenge rule passed over by an `allow` before it: the funnel's
    // exempt, by reason.
    let mut exempt = None;
    let (action, rule, retry_after, labels) = match &snap.policy {
        Some(policy) => {
            let (served, _) = choose(&snap.robots, &placed);
            let matcher = snap.compiled.get(served).cloned();
            let token = known.as_ref().map_or("", |k| k.token.as_str());
            let closed = |p: &str| {
                matcher
                    .as_ref()
                    .is_some_and(|m| !m.check_path(token, p.as_bytes()).allowed)
            };
            macro_rules! facts {
                () => {
                    Facts {
                        ip,
                        method,
                        path,
                        user_agent,
                        identity: identity.unwrap_or(Identity::Unclaimed),
                        bot: bot.as_deref(),
                        category: &category,
                        signature,
                        asn: known.as_ref().and_then(|k| k.evidence.asn),
                        lists: snap.lists.bits(ip),
                        robots: matcher.as_ref().map(|_| &closed as &dyn Fn(&str) -> bool),
                        now_ms,
                        navigation,
                        passed,
                        trapped,
                    }
                };
            }
            // With a fleet's state: the rate keys the policy would count,
            // counted in Redis in one exchange; without it (or with Redis
            // not answering), in this gate's memory.
            // A walk that reached no rate is the decision itself.
            let d = match g.shared.as_ref().filter(|s| s.healthy()) {
                Some(shared) => {
                    let plan = crate::state::Plan::default();
                    let first = policy.decide(&facts!(), &plan);
                    let keys = plan.into_keys();
                    if keys.is_empty() {
                        first
                    } else {
                        match shared.rates(&keys).await {
                            Some(w) => policy.decide(&facts!(), &crate::state::Answered::new(w)),
                            None => policy.decide(&facts!(), &g.rates),
                        }
                    }
                }
                None => policy.decide(&facts!(), &g.rates),
            };
            slot_of = d.index.unwrap_or(policy.rules.len());
            if d.action == Action::Allow {
                exempt = policy
                    .exempted(&facts!(), &d)
                    .map(|(r, why)| (r.to_owned(), why.to_owned()));
            }
            price = d
                .index
                .and_then(|i| policy.rules.get(i))
                .and_then(|r| r.price);
            let labels = d
                .labels
                .iter()
                .filter_map(|&i| policy.rules.get(i))
                .map(|r| (r.name.clone(), r.headers.clone()))
                .collect();
            let retry = match d.action {
                // A limit by a rate: until the key is under it; else a minute.
                Action::Limit => Some(d.retry_after_ms.map_or(60, |ms| ms.div_ceil(1000).max(1))),
                _ => None,
            };
            (d.action, d.rule.to_owned(), retry, labels)
        }
        None if g.config.deny.contains(&placed.category) => {
            slot_of = 1;
            (Action::Deny, "--deny".to_owned(), None, Vec::new())
        }
        None => (Action::Allow, "default".to_owned(), None, Vec::new()),
    };
    if let Some(slot) = snap.counters.get(slot_of) {
        slot[action as usize].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
    if let Some((rule, why)) = &exempt {
        let stage = crate::funnel::Stage::Exempt(why);
        g.funnel.count(rule, stage);
        if let Some(log) = &g.decision_log {
            log.funnel(ip, rule, stage, path);
        }
    }
    let pay = (action == Action::Charge)
        .then_some(price)
        .flatten()
        .map(|price| crate::charge::outcome(price, h, checked.as_ref()));
    // Under --report-only nothing is charged: decided and logged, not
    // counted as money.
    if let Some(o) = pay.as_ref().filter(|_| !g.config.report_only) {
        g.charges.count(o);
    }
    let (licence, licence_link) = if action == Action::License {
        let authorization: Vec<&str> = h
            .get_all(header::AUTHORIZATION)
            .iter()
            .take(8)
            .map(|v| v.to_str().unwrap_or(""))
            .collect();
        let site = origin(
            h,
            g.upstream.is_some(),
            g.config.trust_proxy.iter().any(|r| r.contains(peer)),
        );
        let l = g
            .licences
            .check(&authorization, &site, path, ip, crate::unix_now())
            .await;
        let link = g
            .config
            .terms
            .rsl
            .as_ref()
            .map(|(p, _)| botscope_terms::olp::link(&format!("{site}{p}")));
        (Some(l), link)
    } else {
        (None, None)
    };
    if trapped.any() && !matches!(action, Action::Allow | Action::Label) {
        if let Some(ev) = &g.events {
            ev.refusal(ip, &rule, action, method, path);
        }
        // The tarpit: what a trap caught waits for its refusal.
        if !g.config.report_only
            && let Some(t) = trap_cfg
            && let Some((ms, _held)) = g.traps.tarpit(ip, now_ms, t)
        {
            tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
        }
    }
    let a = Answer {
        trap,
        licence,
        licence_link,
        client: ip,
        passed,
        placed,
        known,
        identity,
        bot,
        checked,
        action,
        rule,
        retry_after,
        labels,
        enforced: !g.config.report_only,
        pay,
    };
    g.latency.record(started.elapsed());
    if let Some(log) = &g.decision_log {
        log.log(&a, user_agent, method, path);
    }
    a
}

fn put(h: &mut HeaderMap, name: axum::http::HeaderName, value: &str) {
    // Values are printable ASCII already, or escaped here: registry
    // names and rule names are the owner's, reasons quote strangers.
    if value.len() <= 200 && value.bytes().all(|b| b.is_ascii_graphic() || b == b' ') {
        if let Ok(v) = HeaderValue::from_str(value) {
            h.insert(name, v);
        }
        return;
    }
    let v: String = value
        .chars()
        .take(200)
        .map(|c| {
            if c.is_ascii_graphic() || c == ' ' {
                c
            } else {
                '?'
            }
        })
        .collect();
    if let Ok(v) = HeaderValue::from_str(&v) {
        h.insert(name, v);
    }
}

/// The headers of every answer: who the client is and what was decided.
pub fn headers(h: &mut HeaderMap, a: &Answer) {
    h.insert(
        X_BOT_CATEGORY,
        HeaderValue::from_static(a.placed.category.as_str()),
    );
    put(h, X_BOT_NAME, a.placed.bot.as_deref().unwrap_or(""));
    if let Some(i) = a.identity {
        h.insert(X_BOT_IDENTITY, HeaderValue::from_static(i.as_str()));
    }
    if let Some(b) = &a.bot {
        put(h, X_BOT_CLAIMED, b);
    }
    h.insert(X_BOT_DECISION, HeaderValue::from_static(a.action.as_str()));
    put(h, X_BOT_RULE, &a.rule);
    if !a.labels.is_empty() {
        let names: Vec<&str> = a.labels.iter().map(|(n, _)| n.as_str()).collect();
        put(h, X_BOT_LABELS, &names.join(", "));
        for (_, hs) in &a.labels {
            for (k, v) in hs {
                if let (Ok(k), Ok(v)) = (
                    axum::http::HeaderName::from_bytes(k.as_bytes()),
                    HeaderValue::from_str(v),
                ) {
                    h.append(k, v);
                }
            }
        }
    }
    if let Some(s) = a.retry_after {
        h.insert(header::RETRY_AFTER, HeaderValue::from(s));
    }
    if a.passed {
        h.insert(X_BOT_CHALLENGE, HeaderValue::from_static("passed"));
    }
    if let Some(c) = &a.checked {
        h.insert(
            X_BOT_SIGNATURE,
            HeaderValue::from_static(c.verdict.outcome.as_str()),
        );
        if c.verdict.outcome != botscope_httpsig::Outcome::Verified {
            put(
                h,
                X_BOT_SIGNATURE_REASON,
                &signature_reason(&c.verdict.reason),
            );
        }
        if c.verdict.outcome == botscope_httpsig::Outcome::Verified
            && let Some(agent) = c.verdict.agent.as_deref()
        {
            put(h, X_SIGNATURE_AGENT, agent);
        }
    }
}

/// Why a signature did not verify, as a client may read it: what failed in
/// its own request, never what the gate's resolver or network answered for
/// a host the client chose (that would make the gate an oracle of its
/// internal DNS).
pub fn signature_reason(r: &botscope_httpsig::Reason) -> String {
    match r {
        botscope_httpsig::Reason::KeysUnknown(_) => {
            "keys not known: the agent's key directory is being fetched or could not be fetched"
                .to_owned()
        }
        other => other.to_string(),
    }
}

/// The page a refused, limited or challenged client reads (plain text:
/// nothing of the request is echoed).
fn page(a: &Answer) -> &'static str {
    match a.action {
        Action::Deny => {
            "Access refused.\n\nThis site's policy refuses this request. If you are a person, or run a crawler that follows robots.txt, contact the site's owner.\n"
        }
        Action::Limit => {
            "Too many requests.\n\nThis client sent more requests than this site takes; try again after the time in the Retry-After header.\n"
        }
        Action::Challenge => {
            "Verification needed.\n\nThis request looks automated; this site asks such clients to show they are a browser.\n"
        }
        Action::Charge => match &a.pay {
            Some(botscope_terms::pay::Outcome::Quote { .. }) => {
                "Payment required.\n\nThis page is priced for crawlers (see the crawler-price header): send crawler-exact-price or crawler-max-price, covered by a Web Bot Auth signature that verifies.\n"
            }
            _ => {
                "Payment not accepted.\n\nThe crawler-error header says why (pay per crawl over HTTP 402).\n"
            }
        },
        Action::License => match a.licence.as_ref().map(crate::licence::Licensed::status) {
            Some(402) => {
                "Licence required.\n\nThis page is licensed to crawlers for a fee (RSL): acquire a licence token from the licence server the WWW-Authenticate header names, and send it as `Authorization: License <token>`.\n"
            }
            Some(403) => {
                "Licence does not cover this page.\n\nThe licence token sent does not permit this page; the WWW-Authenticate header says why.\n"
            }
            Some(503) => {
                "Licence not checked.\n\nThe licence server could not be asked; try again in a moment.\n"
            }
            _ => {
                "Licence required.\n\nThis page is licensed to crawlers (RSL): acquire a licence token from the licence server the WWW-Authenticate header names, and send it as `Authorization: License <token>`.\n"
            }
        },
        Action::Allow | Action::Label => "",
    }
}

/// Which front server asks, and so which statuses it can pass on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Front {
    /// nginx's `auth_request`: 2xx, 401 and 403 only, no page.
    AuthRequest,
    /// Caddy's `forward_auth`: the gate's status and page reach the client.
    Forward,
}

/// The policy's label headers that no label set here, sent empty.
pub(crate) fn blank_labels(g: &Gate, h: &mut HeaderMap) {
    for n in &g.current.load().label_names {
        if !h.contains_key(n) {
            h.insert(n.clone(), HeaderValue::from_static(""));
        }
    }
}

pub(crate) async fn answer(g: &Gate, peer: SocketAddr, h: &HeaderMap, front: Front) -> Response {
    let a = decide(g, peer.ip(), h).await;
    let (method, uri) = original(h);
    let mut r = respond(g, &a, h, front, &uri);
    // A page's trap links, for the front server to put in it (nginx's
    // `sub_filter`): on an allowed GET of a page, when the policy
    // switches `script` or `anchor` links on.
    if r.status().is_success()
        && a.trap.is_none()
        && method == "GET"
        && let Some(v) = trap_links(g, &a, h, &uri)
    {
        r.headers_mut().insert(X_BOT_TRAP_LINKS, v);
    }
    // A front server's copy of a header the gate did not set must not be
    // the client's own, nor (Caddy 2.6's `copy_headers`) the text of its
    // placeholder: on a 2xx (what a front server copies from), each is
    // sent, empty when unset.
    for n in [
        X_BOT_IDENTITY,
        X_BOT_CONTENT_USAGE,
        CRAWLER_CHARGED,
        header::LINK,
    ] {
        if r.status().is_success() && !r.headers().contains_key(&n) {
            r.headers_mut().insert(n, HeaderValue::from_static(""));
        }
    }
    r
}

/// The trap links of a page asked about through a front server, as a
/// header value (the HTML of [`Signer::snippet`](crate::trap::Signer::snippet)).
fn trap_links(g: &Gate, a: &Answer, h: &HeaderMap, uri: &str) -> Option<HeaderValue> {
    use botscope_policy::TrapKind;
    let snap = g.current.load();
    let t = snap.policy.as_ref()?.traps.as_ref()?;
    if !(t.has(TrapKind::Script) || t.has(TrapKind::Anchor)) {
        return None;
    }
    let navigation = botscope_policy::is_navigation(
        text(h, SEC_FETCH_MODE).as_deref(),
        text(h, SEC_FETCH_DEST).as_deref(),
        text(h, header::ACCEPT).as_deref(),
        uri,
    );
    if !navigation {
        return None;
    }
    let ua = text(h, header::USER_AGENT).unwrap_or(Cow::Borrowed(""));
    let mut nonce = [0u8; 4];
    ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut nonce).ok()?;
    let snippet = g.traps.signer(&g.challenges.key()).snippet(
        t,
        a.client,
        capped(&ua),
        unix_now_ms() / 1000,
        u32::from_be_bytes(nonce),
    );
    for (_, k) in [TrapKind::ALL[1], TrapKind::ALL[2]] {
        if t.has(k) {
            g.traps.catches.counts.served[k as usize]
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }
    HeaderValue::from_str(&snippet).ok()
}

/// The answer to a front server (or, standalone, to the client) for a
/// decided request whose target was `uri`.
pub(crate) fn respond(g: &Gate, a: &Answer, h: &HeaderMap, front: Front, uri: &str) -> Response {
    if let Some((_, outcome)) = a.trap
        && (g.config.report_only || matches!(a.action, Action::Allow | Action::Label))
    {
        return trap_page(a, outcome, front);
    }
    if g.config.report_only {
        // Decided, logged and counted; allowed. The front server and the
        // application see what would have been done.
        let mut r = StatusCode::OK.into_response();
        headers(r.headers_mut(), a);
        blank_labels(g, r.headers_mut());
        r.headers_mut()
            .insert(X_BOT_DECISION, HeaderValue::from_static("allow"));
        r.headers_mut().insert(
            X_BOT_REPORT_ONLY,
            HeaderValue::from_static(a.action.as_str()),
        );
        r.headers_mut().remove(header::RETRY_AFTER);
        return r;
    }
    let paid = a
        .pay
        .as_ref()
        .and_then(botscope_terms::pay::Outcome::charged);
    let licensed = a.licence.as_ref().map(crate::licence::Licensed::status);
    let status = match (a.action, front) {
        (Action::Allow | Action::Label, _) => StatusCode::OK,
        (Action::Charge, _) if paid.is_some() => StatusCode::OK,
        (Action::License, _) if licensed == Some(200) => StatusCode::OK,
        // As a payment's: nginx passes on 403, the status travels in
        // X-Bot-Pay-Status.
        (Action::License, Front::AuthRequest) => StatusCode::FORBIDDEN,
        (Action::License, Front::Forward) => licensed
            .and_then(|s| StatusCode::from_u16(s).ok())
            .unwrap_or(StatusCode::UNAUTHORIZED),
        // nginx's auth_request passes on 401 and 403 only: the payment
        // status travels in X-Bot-Pay-Status for the configuration to use.
        (Action::Charge, Front::AuthRequest) => StatusCode::FORBIDDEN,
        (Action::Charge, Front::Forward) => a
            .pay
            .as_ref()
            .and_then(|o| StatusCode::from_u16(o.status()).ok())
            .unwrap_or(StatusCode::PAYMENT_REQUIRED),
        (Action::Deny, _) | (Action::Limit, Front::AuthRequest) => StatusCode::FORBIDDEN,
        (Action::Limit, Front::Forward) => StatusCode::TOO_MANY_REQUESTS,
        (Action::Challenge, _) => StatusCode::UNAUTHORIZED,
    };
    let issued = (a.action == Action::Challenge)
        .then(|| botscope_policy::rule_id(&a.rule))
        .map(|rule| {
            g.funnel.count(&a.rule, crate::funnel::Stage::Issued);
            let ua = text(h, header::USER_AGENT).unwrap_or(Cow::Borrowed(""));
            g.challenges
                .token(a.client, capped(&ua), unix_now_ms() / 1000, Some(rule))
        });
    let mut r = match (front, a.action) {
        (Front::AuthRequest, Action::Challenge) => {
            // nginx hands the token to the page (`error_page 401`):
            // the view is counted there, under the token's rule.
            let mut r = status.into_response();
            if let Some(v) = issued
                .as_deref()
                .and_then(|t| HeaderValue::from_str(t).ok())
            {
                r.headers_mut().insert(X_BOT_CHALLENGE_TOKEN, v);
            }
            r
        }
        (Front::AuthRequest, _) => status.into_response(),
        (Front::Forward, Action::Charge) if paid.is_some() => status.into_response(),
        (Front::Forward, Action::License) if licensed == Some(200) => status.into_response(),
        (Front::Forward, Action::Challenge) => {
            let ua = text(h, header::USER_AGENT).unwrap_or(Cow::Borrowed(""));
            let token = issued.unwrap_or_default();
            g.funnel.count(&a.rule, crate::funnel::Stage::Viewed);
            if let Some(log) = &g.decision_log {
                log.funnel(a.client, &a.rule, crate::funnel::Stage::Viewed, uri);
            }
            let mut html =
                crate::challenge::page(&g.challenges, &token, &crate::challenge::back(uri), None);
            // The challenge page always carries the trap links a page
            // would (a scraper that solves it still follows them).
            if let Some(t) = g
                .current
                .load()
                .policy
                .as_ref()
                .and_then(|p| p.traps.as_ref())
            {
                let now = unix_now_ms() / 1000;
                let nonce = u32::try_from(unix_now_ms() & 0xffff_ffff).unwrap_or(0);
                let snippet = g.traps.signer(&g.challenges.key()).snippet(
                    t,
                    a.client,
                    capped(&ua),
                    now,
                    nonce,
                );
                let mut rw = crate::inject::Rewriter::new(snippet, false);
                if let (Ok(mut out), Ok(end)) = (rw.push(html.as_bytes()), rw.finish()) {
                    out.extend(end);
                    html = String::from_utf8(out).unwrap_or(html);
                }
            }
            challenge_response(status, html)
        }
        (Front::Forward, _) => {
            let mut r = (status, page(a)).into_response();
            let h = r.headers_mut();
            h.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/plain; charset=utf-8"),
            );
            h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            r
        }
    };
    headers(r.headers_mut(), a);
    crate::charge::headers(r.headers_mut(), a.pay.as_ref());
    licence_headers(r.headers_mut(), a);
    if let Some(cu) = g.config.terms.content_usage.as_deref()
        && let Ok(v) = HeaderValue::from_str(cu)
    {
        // For the front server to add to the page (nginx's
        // `auth_request_set`, Caddy's `copy_headers`).
        r.headers_mut().insert(X_BOT_CONTENT_USAGE, v);
    }
    blank_labels(g, r.headers_mut());
    r
}

/// The answer to a trap path the policy lets through: never the
/// application's page. nginx's `auth_request` hears 403; standalone and
/// Caddy, a page that says what the link is (404), or 204 to a prefetch.
fn trap_page(a: &Answer, outcome: crate::trap::Outcome, front: Front) -> Response {
    let mut r = match front {
        Front::AuthRequest => StatusCode::FORBIDDEN.into_response(),
        Front::Forward if outcome == crate::trap::Outcome::Ignored => {
            StatusCode::NO_CONTENT.into_response()
        }
        Front::Forward => {
            let mut r = (StatusCode::NOT_FOUND, TRAP_PAGE).into_response();
            r.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/plain; charset=utf-8"),
            );
            r
        }
    };
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r.headers_mut().insert(
        header::HeaderName::from_static("x-robots-tag"),
        HeaderValue::from_static("noindex, nofollow"),
    );
    headers(r.headers_mut(), a);
    r
}

/// What a person who follows a trap link reads.
const TRAP_PAGE: &str = "Nothing here: this address is a trap for crawlers.\n\nIt is linked only where a person does not see it, and robots.txt tells every crawler to keep out of it. If you are a person and followed it by accident, nothing has happened: go back to the page you came from.\n";

/// A `license` rule's answer fields: the `Link` to the licence, and for a
/// refusal the `WWW-Authenticate: License` challenge, its status in
/// `X-Bot-Pay-Status` (for nginx) and `Retry-After` on a 503.
pub(crate) fn licence_headers(h: &mut HeaderMap, a: &Answer) {
    let Some(l) = &a.licence else { return };
    if let Some(v) = a
        .licence_link
        .as_deref()
        .and_then(|v| HeaderValue::from_str(v).ok())
    {
        h.insert(header::LINK, v);
    }
    if let Some(c) = l.challenge()
        && let Ok(v) = HeaderValue::from_str(&c)
    {
        h.insert(header::WWW_AUTHENTICATE, v);
        h.insert(
            crate::charge::X_BOT_PAY_STATUS,
            HeaderValue::from(l.status()),
        );
        if l.status() == 503 {
            h.insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
        }
    }
}

/// `GET /auth` (nginx `auth_request`).
pub(crate) async fn auth(
    State(g): State<Arc<Gate>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    req: Request,
) -> Response {
    answer(&g, peer, req.headers(), Front::AuthRequest).await
}

/// `GET /forward-auth` (Caddy's `forward_auth`, Traefik's ForwardAuth):
/// the status and page the client gets.
pub(crate) async fn forward_auth(
    State(g): State<Arc<Gate>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    req: Request,
) -> Response {
    answer(&g, peer, req.headers(), Front::Forward).await
}

fn challenge_response(status: StatusCode, html: String) -> Response {
    let mut r = (status, html).into_response();
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

/// The query's parameter `name`, decoded, if present.
fn param(query: &str, name: &str) -> Option<String> {
    url::form_urlencoded::parse(query.as_bytes())
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

/// `GET /.botscope/challenge`: the challenge page for this client (nginx
/// sends a challenged request here; the way back is its original URI, or
/// `back`).
pub(crate) async fn challenge_page(
    State(g): State<Arc<Gate>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    req: Request,
) -> Response {
    let h = req.headers();
    let ip = g.client(peer.ip(), h);
    let ua = text(h, header::USER_AGENT).unwrap_or(Cow::Borrowed(""));
    let query = req.uri().query().unwrap_or("");
    let back = param(query, "back")
        .or_else(|| text(h, X_ORIGINAL_URI).map(Cow::into_owned))
        .unwrap_or_else(|| "/".to_owned());
    let ua = capped(&ua);
    let now = unix_now_ms() / 1000;
    // The token /auth issued, handed back by nginx: its rule's view. A
    // token that is not this client's, or expired, is not used.
    let given = text(h, X_BOT_CHALLENGE_TOKEN).and_then(|t| {
        match g.challenges.check_token(&t, None, ip, ua, now) {
            (Some(rule), Ok(()) | Err(crate::challenge::Refused::TooEarly)) => {
                Some((t.into_owned(), rule))
            }
            _ => None,
        }
    });
    let (token, rule) = match given {
        Some((t, rule)) => (t, rule),
        None => (g.challenges.token(ip, ua, now, None), None),
    };
    let snap = g.current.load();
    let name = crate::funnel::rule_name(snap.policy.as_deref(), Some(rule));
    g.funnel.count(name, crate::funnel::Stage::Viewed);
    if let Some(log) = &g.decision_log {
        log.funnel(ip, name, crate::funnel::Stage::Viewed, &back);
    }
    // Never a 2xx: the page is not the content the address holds, and no
    // crawler or cache may take it for it.
    challenge_response(
        StatusCode::UNAUTHORIZED,
        crate::challenge::page(&g.challenges, &token, &crate::challenge::back(&back), None),
    )
}

/// `GET /.botscope/pass?t=TOKEN[&n=WORK]&back=URI`: a token that holds
/// (after the wait, or with its proof of work) sets the pass and goes
/// back; one that does not gets the page again, saying why.
pub(crate) async fn pass(
    State(g): State<Arc<Gate>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    req: Request,
) -> Response {
    let h = req.headers();
    let ip = g.client(peer.ip(), h);
    let ua = text(h, header::USER_AGENT).unwrap_or(Cow::Borrowed(""));
    let ua = capped(&ua);
    let query = req.uri().query().unwrap_or("");
    let back = crate::challenge::back(&param(query, "back").unwrap_or_else(|| "/".to_owned()));
    let token = param(query, "t").unwrap_or_default();
    let work = param(query, "n").and_then(|n| n.parse::<u64>().ok());
    let now = unix_now_ms() / 1000;
    let (rule, checked) = g.challenges.check_token(&token, work, ip, ua, now);
    // The passes a network was given this hour: the fleet's count, or
    // this gate's.
    let checked = match checked {
        Ok(()) => {
            let shared = match &g.shared {
                Some(s) => {
                    let (net, _) = botscope_policy::network_of(ip);
                    s.may_give(net, now / 3600, crate::challenge::PASSES_PER_NETWORK_HOUR)
                        .await
                }
                None => None,
            };
            if shared.unwrap_or_else(|| g.challenges.may_give(ip, now)) {
                Ok(())
            } else {
                Err(crate::challenge::Refused::Quota)
            }
        }
        Err(e) => Err(e),
    };
    // The funnel: answered, passed or failed by reason, under the
    // token's rule (none for a forged token).
    let snap = g.current.load();
    let name = crate::funnel::rule_name(snap.policy.as_deref(), rule);
    let stage = match checked {
        Ok(()) => crate::funnel::Stage::Passed,
        Err(why) => crate::funnel::Stage::Failed(why),
    };
    g.funnel.count(name, stage);
    if let Some(log) = &g.decision_log {
        log.funnel(ip, name, stage, "/.botscope/pass");
    }
    let rule = rule.flatten();
    match checked {
        Ok(()) => {
            let pass = g.challenges.pass(ip, ua, now, rule);
            let life = g.challenges.config().pass_life.as_secs();
            let secure = text(h, X_FORWARDED_PROTO).is_some_and(|p| p == "https");
            let cookie = format!(
                "{}={pass}; Path=/; Max-Age={life}; HttpOnly; SameSite=Lax{}",
                crate::challenge::COOKIE,
                if secure { "; Secure" } else { "" }
            );
            let mut r = StatusCode::SEE_OTHER.into_response();
            let rh = r.headers_mut();
            if let (Ok(loc), Ok(c)) = (HeaderValue::from_str(&back), HeaderValue::from_str(&cookie))
            {
                rh.insert(header::LOCATION, loc);
                rh.insert(header::SET_COOKIE, c);
            }
            rh.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            r
        }
        Err(why) => {
            // Too early: the same token, whose wait is running, and the
            // time left; else a new one.
            let left = g.challenges.wait_left(&token, now);
            let (token, why) =
                if work.is_none() && left > 0 && why == crate::challenge::Refused::TooEarly {
                    let s = if left == 1 { "" } else { "s" };
                    (token, format!("{}: {left} second{s} left", why.as_str()))
                } else {
                    // A new token, still the rule's.
                    (
                        g.challenges.token(ip, ua, now, rule),
                        why.as_str().to_owned(),
                    )
                };
            challenge_response(
                StatusCode::UNAUTHORIZED,
                crate::challenge::page(&g.challenges, &token, &back, Some(&why)),
            )
        }
    }
}

/// `POST /.botscope/revoke-passes` (operators only): every pass given
/// until now stops holding, on this gate and, with `--state redis`, on
/// every gate of the fleet.
pub(crate) async fn revoke_passes(
    State(g): State<Arc<Gate>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    req: Request,
) -> Response {
    if let Some(refused) = crate::metrics::operators_only(
        &g,
        peer,
        req.headers(),
        "revoke-passes",
        crate::metrics::Operator::Act,
    ) {
        return refused;
    }
    let now = unix_now_ms() / 1000;
    g.challenges.revoke_before(now);
    g.challenges.keep_revocation();
    let shared = match &g.shared {
        Some(s) => Some(s.revoke_before(now).await),
        None => None,
    };
    let body = serde_json::json!({"revoked_before": now, "fleet": shared});
    (
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// `GET /robots.txt`: the file of the client's place, most specific first.
/// The site's RSL licence (`--rsl`), at its path: `application/rsl+xml`,
/// to anyone (robots.txt names it for every crawler), kept an hour.
pub(crate) async fn licence(State(g): State<Arc<Gate>>) -> Response {
    let Some((_, body)) = &g.config.terms.rsl else {
        return StatusCode::NOT_FOUND.into_response();
    };
    (
        [
            (header::CONTENT_TYPE, botscope_terms::rsl::MEDIA_TYPE),
            (header::CACHE_CONTROL, "public, max-age=3600"),
        ],
        body.as_ref().clone(),
    )
        .into_response()
}

pub(crate) async fn robots_txt(
    State(g): State<Arc<Gate>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    req: Request,
) -> Response {
    let ip = g.client(peer.ip(), req.headers());
    let snap = g.current.load();
    let user_agent = text(req.headers(), header::USER_AGENT).unwrap_or(Cow::Borrowed(""));
    let known = g
        .identities
        .as_ref()
        .map(|i| i.identify(ip, capped(&user_agent)));
    let placed = match &known {
        Some(k) => place(
            snap.lists.place(ip),
            Some(k.identity),
            &k.category,
            k.bot.as_deref(),
        ),
        None => snap.lists.place(ip),
    };
    let (file, body) = choose(&snap.robots, &placed);
    let traps = snap.policy.as_ref().and_then(|p| p.traps.as_ref());
    let body: Vec<u8> = match (traps, snap.robots.get(file)) {
        (Some(_), Some(arc)) => {
            let paths = g.traps.paths(&g.challenges.key());
            g.traps.served(arc, &paths).to_vec()
        }
        (Some(_), None) => g.traps.paths(&g.challenges.key()).inject(body),
        (None, _) => body.to_vec(),
    };
    let mut r = (StatusCode::OK, body).into_response();
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    // One client's file must not be served to another by a shared cache.
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("private"));
    h.insert(
        X_BOT_CATEGORY,
        HeaderValue::from_static(placed.category.as_str()),
    );
    put(h, X_BOT_NAME, placed.bot.as_deref().unwrap_or(""));
    if let Some(k) = &known {
        h.insert(
            X_BOT_IDENTITY,
            HeaderValue::from_static(k.identity.as_str()),
        );
    }
    put(h, X_ROBOTS_FILE, &format!("{file}.txt"));
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by a probe: `X-Bot-Signature-Reason` repeated what the gate's
    /// resolver answered for a host the client chose.
    #[test]
    fn signature_reasons_say_what_failed_not_what_the_resolver_knows() {
        let r = botscope_httpsig::Reason::KeysUnknown(
            "the directory of https://internal.corp.example/: 10.1.2.3 is a private address".into(),
        );
        let shown = signature_reason(&r);
        assert!(
            !shown.contains("10.1.2.3") && !shown.contains("internal"),
            "{shown}"
        );
        assert!(shown.starts_with("keys not known"), "{shown}");
        // Reasons about the client's own fields stay as they are.
        let r = botscope_httpsig::Reason::Expired { expires: 1, now: 2 };
        assert_eq!(signature_reason(&r), r.to_string());
    }

    #[test]
    fn query_parameters_are_decoded_whatever_their_bytes() {
        assert_eq!(
            param("t=a.b&back=%2Fshop%3Fx%3D1", "back").as_deref(),
            Some("/shop?x=1")
        );
        assert_eq!(param("back=%", "back").as_deref(), Some("%"));
        assert_eq!(param("back=%Zé%é", "back").as_deref(), Some("%Zé%é"));
        assert_eq!(param("n=5", "t"), None);
    }

    #[test]
    fn the_request_asked_about_comes_from_either_front_server() {
        let mut h = HeaderMap::new();
        assert_eq!(original(&h), (Cow::Borrowed("GET"), Cow::Borrowed("/")));
        h.insert("x-forwarded-uri", HeaderValue::from_static("/caddy?q=1"));
        h.insert("x-forwarded-method", HeaderValue::from_static("POST"));
        assert_eq!(
            original(&h),
            (Cow::Borrowed("POST"), Cow::Borrowed("/caddy?q=1"))
        );
        h.insert("x-original-uri", HeaderValue::from_static("/nginx"));
        h.insert("x-original-method", HeaderValue::from_static("HEAD"));
        assert_eq!(
            original(&h),
            (Cow::Borrowed("HEAD"), Cow::Borrowed("/nginx"))
        );
    }
}
