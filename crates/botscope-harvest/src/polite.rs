//! A polite crawler, as a library: before any URL is fetched, the site's
//! robots.txt is read (and cached) by the engine's fetch policy, the URL is
//! matched with the crawler's product token, and the host's pace is kept.
//!
//! - **robots.txt**: fetched per origin (scheme, host, port: RFC 9309
//!   2.3) at most once while its copy is fresh: the lifetime comes from
//!   the response's headers (24 hours by default, at most), redirects are
//!   followed as the policy says, a 4xx means no restrictions, and a 5xx
//!   or an unreachable site means nothing may be fetched
//!   ([`Decision::Unavailable`]) until a later fetch says otherwise.
//! - **Pace per host**: one connection at a time, and between the end of
//!   one exchange and the start of the next at least the `Crawl-delay` of
//!   the group in force (or the interval of its `Request-rate`), and never
//!   less than the configured minimum gap (1 s by default). A `Retry-After`
//!   on a 429 or 503 holds the host until the time it names. robots.txt
//!   requests keep the same pace: they are requests too.
//! - **Honest identity**: the User-Agent must name the robot with a product
//!   token and carry a contact URL ([`honest_user_agent`]).
//! - **Addresses**: the harvester's guard; loopback, private and reserved
//!   addresses are refused unless the configuration allows them (tests).
//!
//! [`Crawler::check`] answers without fetching the page (it may fetch
//! robots.txt); [`Crawler::fetch`] waits as told, fetches, follows
//! redirects (each hop checked the same way) and records `Retry-After`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use botscope_dns::{Lookup, Pool};
use botscope_robotstxt::{
    FetchAction, FetchResponse, Matcher, ParseOptions, Robots, RuleKind, decide_fetch, header,
    is_product_token, is_robots_txt_path, parse_retry_after, path_of, product_token,
};
use tokio::time::Instant;

use crate::{Config, Error, Harvester};

mod terms;
use botscope_http::{Exchange, FetchError};
pub use terms::{LicenceRead, TermsAsk, TermsReport};

/// The `Accept` header of a page request.
const PAGE_ACCEPT: &str = "text/html, application/xhtml+xml, */*;q=0.8";

/// The longest a `Crawl-delay` or `Retry-After` is taken to be.
const LONGEST_HOLD: Duration = Duration::from_secs(86_400);

/// How a polite crawler behaves.
#[derive(Debug, Clone)]
pub struct PoliteConfig {
    /// The fetch settings: User-Agent, timeouts, the address guard, ports,
    /// the fetch policy (its semantics are the matching semantics too),
    /// certificates to trust.
    pub fetch: Config,
    /// The least time between two requests to one host when robots.txt
    /// asks for none (or for less).
    pub min_gap: Duration,
    /// The longest [`Crawler::fetch`] waits for a host's turn; a site that
    /// asks for more (a long `Crawl-delay`, a far `Retry-After`) gives
    /// [`Decision::Unavailable`] instead of a hang.
    pub max_wait: Duration,
    /// Bytes of a page kept (the rest is not read).
    pub page_cap: usize,
    /// Hosts kept in memory; past it, idle hosts whose gap has passed are
    /// forgotten (costing at most an early robots.txt fetch).
    pub max_hosts: usize,
    /// Sign every request (robots.txt and pages) as this Web Bot Auth
    /// agent, if set.
    pub signer: Option<Signer>,
    /// Pay per crawl: offer this on every page request (needs `signer`:
    /// the offer is signed), within a budget.
    pub pay: Option<Pay>,
    /// Read each page's terms first and skip those they refuse for this
    /// purpose (or license only through a licence server we hold no
    /// credentials at).
    pub purpose: Option<botscope_terms::Purpose>,
    /// Acquire RSL licence tokens (OLP `grant_type=rsl`) from the licence
    /// servers the terms name, with these credentials, and send them as
    /// `Authorization: License <token>` (with `purpose`).
    pub licence: Option<botscope_http::olp::OlpConfig>,
}

/// What a crawler pays per page, and in all.
#[derive(Debug, Clone, Copy)]
pub struct Pay {
    /// Sent as a signed `crawler-max-price` on every page request: a
    /// priced page up to it is paid, its price charged.
    pub max_price: botscope_terms::Price,
    /// The most paid in all (in the same currency); a page whose maximum
    /// would pass it is not asked for.
    pub budget: Option<botscope_terms::Price>,
}

/// A Web Bot Auth identity: the key requests are signed with, and the
/// agent URL whose key directory lists it (`Signature-Agent`).
#[derive(Debug, Clone)]
pub struct Signer {
    /// The Ed25519 key.
    pub key: Arc<botscope_httpsig::SigningKey>,
    /// The agent URL (`https://…`).
    pub agent: String,
    /// How long each signature is valid (a minute by default).
    pub validity: Duration,
}

impl Signer {
    /// The signature fields of a `GET` of `url` as sent to `authority`,
    /// at this moment, with a fresh nonce.
    pub fn headers(&self, url: &url::Url, authority: &str) -> Vec<(String, String)> {
        self.headers_with(url, authority, &[])
    }

    /// [`Signer::headers`], the signature covering the `fields` sent
    /// with the request too (`crawler-max-price`).
    pub fn headers_with(
        &self,
        url: &url::Url,
        authority: &str,
        fields: &[(String, String)],
    ) -> Vec<(String, String)> {
        let now = SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
        let target = &url[url::Position::BeforePath..url::Position::AfterQuery];
        let req =
            botscope_httpsig::Request::new("GET", url.scheme(), authority, target, fields.to_vec());
        let Ok(nonce) = botscope_httpsig::sign::nonce() else {
            return Vec::new();
        };
        let seconds = i64::try_from(self.validity.as_secs()).unwrap_or(60).max(1);
        let mut spec =
            botscope_httpsig::SignSpec::new(Some(&self.agent), now, seconds, Some(nonce));
        spec.covers = fields.iter().map(|(n, _)| n.to_ascii_lowercase()).collect();
        botscope_httpsig::sign_request(&req, &self.key, &spec)
            .map(|s| s.headers())
            .unwrap_or_default()
    }
}

impl Default for PoliteConfig {
    fn default() -> Self {
        PoliteConfig {
            fetch: Config::default(),
            min_gap: Duration::from_secs(1),
            max_wait: Duration::from_secs(600),
            page_cap: 10 * 1024 * 1024,
            max_hosts: 100_000,
            signer: None,
            pay: None,
            purpose: None,
            licence: None,
        }
    }
}

/// A robots.txt line that decided.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RobotsLine {
    /// The robots.txt it is in (after redirects).
    pub robots_url: String,
    /// 1-based line number.
    pub line: u32,
    /// The line as written (lossily decoded, trimmed).
    pub text: String,
}

impl std::fmt::Display for RobotsLine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} line {}: {}", self.robots_url, self.line, self.text)
    }
}

/// May the crawler fetch a URL now?
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Yes, now; with the rule that allowed it, when one matched.
    Allowed(Option<RobotsLine>),
    /// Allowed, but not before this much time.
    Wait(Duration),
    /// robots.txt forbids it, by this rule.
    Disallowed(RobotsLine),
    /// It may not be fetched for now: robots.txt is unreachable or a
    /// server error (RFC 9309 2.3.1.3–4), the URL or its address is not one
    /// to fetch, or the site asks for a longer wait than allowed.
    Unavailable(String),
}

impl Decision {
    /// `allowed`, `wait`, `disallowed` or `unavailable`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Decision::Allowed(_) => "allowed",
            Decision::Wait(_) => "wait",
            Decision::Disallowed(_) => "disallowed",
            Decision::Unavailable(_) => "unavailable",
        }
    }

    /// The deciding robots.txt line, when there is one.
    pub fn rule(&self) -> Option<&RobotsLine> {
        match self {
            Decision::Allowed(r) => r.as_ref(),
            Decision::Disallowed(r) => Some(r),
            _ => None,
        }
    }
}

/// A page's response.
#[derive(Debug, Clone)]
pub struct Page {
    /// The status code.
    pub status: u16,
    /// Headers, in order.
    pub headers: Vec<(String, String)>,
    /// The body, at most the page cap, decompressed.
    pub body: Vec<u8>,
    /// The body was longer than the cap.
    pub truncated: bool,
}

/// What [`Crawler::fetch`] did.
#[derive(Debug, Clone)]
pub struct Fetch {
    /// The URL asked for.
    pub url: String,
    /// The URL answered (after redirects).
    pub final_url: String,
    /// Redirects followed: each URL and its status.
    pub redirects: Vec<(String, u16)>,
    /// The decision for the last URL: allowed when it was fetched, else
    /// why not (never [`Decision::Wait`]: fetch waits).
    pub decision: Decision,
    /// Time spent waiting for turns (robots.txt's included).
    pub waited: Duration,
    /// Why there were no restrictions, when robots.txt set none (a 4xx
    /// answer, a redirect out of reach).
    pub robots_note: Option<String>,
    /// The response, when one came.
    pub page: Option<Page>,
    /// Why no response came, or why redirects stopped.
    pub error: Option<String>,
    /// The AI usage preferences that apply to what was fetched: the
    /// site's robots.txt Content-Usage rule for the URL combined with the
    /// response's `Content-Usage` header, toward the restrictive (`None`:
    /// neither states any).
    pub usage: Option<botscope_robotstxt::Usage>,
    /// The robots.txt Content-Signal in force for the crawler, if any.
    pub content_signal: Option<std::collections::BTreeMap<String, String>>,
    /// What the site charged for the page (`crawler-charged`), when it was
    /// paid.
    pub charged: Option<botscope_terms::Price>,
    /// Why the page was not paid for, or what the site's terms said, when
    /// that kept it from being fetched or paid.
    pub pay_note: Option<String>,
}

/// Why a User-Agent does not identify a robot honestly.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DishonestUserAgent {
    /// Nothing at all.
    #[error(
        "the User-Agent is empty: name the robot and give a contact URL, such as \"ExampleBot/1.0 (+https://example.org/bot.html)\""
    )]
    Empty,
    /// Over 512 bytes.
    #[error("the User-Agent is over 512 bytes")]
    TooLong,
    /// Control characters.
    #[error("the User-Agent has control characters")]
    Controls,
    /// No product token names the robot (only a browser's, or none).
    #[error(
        "{0:?} names no robot: give it a product token, such as \"ExampleBot/1.0\" (RFC 9309 2.2.1)"
    )]
    NoRobot(String),
    /// No contact URL.
    #[error(
        "{0:?} has no contact URL: add one, such as \"+https://example.org/bot.html\", a page that says what the robot does and how to stop it"
    )]
    NoContact(String),
}

/// Checks that a User-Agent identifies a robot honestly: a product token
/// that names it (`ExampleBot/1.0`; not only a browser's `Mozilla/5.0`)
/// and a contact URL (`+https://example.org/bot.html`) where a webmaster
/// reads what it does and how to stop it. Returns the product token that
/// robots.txt groups are matched against.
pub fn honest_user_agent(ua: &str) -> Result<String, DishonestUserAgent> {
    let ua = ua.trim();
    if ua.is_empty() {
        return Err(DishonestUserAgent::Empty);
    }
    if ua.len() > 512 {
        return Err(DishonestUserAgent::TooLong);
    }
    if ua.chars().any(char::is_control) {
        return Err(DishonestUserAgent::Controls);
    }
    // The robot's name stands outside its contact URL (`example.org/` is
    // not a product); the URL must name a host with a domain.
    let mut has_contact = false;
    let outside: String = ua
        .split_whitespace()
        .map(|w| {
            let w = w.trim_start_matches('+');
            match w.to_ascii_lowercase().find("http") {
                Some(i) if w[i..].contains("://") => {
                    let url = w[i..].trim_end_matches([';', ')', '"', '>', ',']);
                    has_contact |= url::Url::parse(url)
                        .ok()
                        .and_then(|u| u.host_str().map(|h| h.contains('.')))
                        == Some(true);
                    &w[..i]
                }
                _ => w,
            }
        })
        .collect::<Vec<_>>()
        .join(" ");
    let token = product_token(&outside);
    if !is_product_token(token) || token.eq_ignore_ascii_case("mozilla") {
        return Err(DishonestUserAgent::NoRobot(ua.to_owned()));
    }
    if !has_contact {
        return Err(DishonestUserAgent::NoContact(ua.to_owned()));
    }
    Ok(token.to_owned())
}

/// What robots.txt said for an origin.
#[derive(Debug)]
enum Rules {
    /// Rules to match.
    Parsed {
        matcher: Matcher,
        body: Vec<u8>,
        /// The pace the group in force asks for, and its line.
        delay: Option<(Duration, u32)>,
        /// The parse tree, kept when the file states usage preferences
        /// or names a licence.
        preferences: Option<Box<Robots>>,
    },
    /// No restrictions (4xx, no robots.txt).
    AllowAll(String),
    /// Nothing may be fetched.
    DisallowAll(String),
}

/// An origin's robots.txt, as cached.
#[derive(Debug)]
struct RobotsCopy {
    /// Where it was read (after redirects).
    url: String,
    rules: Rules,
    expires: Instant,
    /// Since when the site has answered with errors (for the policy's
    /// grace period), or `None` after a good answer.
    unreachable_since: Option<SystemTime>,
}

/// A host's pace.
#[derive(Debug, Default)]
struct Pace {
    last_end: Option<Instant>,
    not_before: Option<Instant>,
    /// From robots.txt: Crawl-delay or Request-rate.
    delay: Option<Duration>,
}

#[derive(Debug, Default)]
struct Host {
    /// Held for one exchange: one connection at a time.
    conn: Arc<tokio::sync::Mutex<()>>,
    pace: Mutex<Pace>,
    /// Per origin; held while robots.txt is fetched, so it is fetched once.
    robots: tokio::sync::Mutex<HashMap<String, Arc<RobotsCopy>>>,
}

/// A host's turn, held for one exchange; the exchange's end is recorded
/// when it is dropped.
struct Turn {
    _conn: tokio::sync::OwnedMutexGuard<()>,
    host: Arc<Host>,
}

impl Drop for Turn {
    fn drop(&mut self) {
        lock(&self.host.pace).last_end = Some(Instant::now());
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The fetches of [`Crawler::fetch_all`], in the order the URLs were given.
pub struct FetchAll {
    rx: tokio::sync::mpsc::UnboundedReceiver<(usize, Fetch)>,
    done: Vec<Option<Fetch>>,
    next: usize,
}

impl FetchAll {
    /// The next URL's fetch, once it and every earlier one are done;
    /// `None` after the last (or when a host's task stopped early).
    pub async fn next(&mut self) -> Option<Fetch> {
        loop {
            if let Some(f) = self.done.get_mut(self.next).and_then(Option::take) {
                self.next += 1;
                return Some(f);
            }
            let (i, f) = self.rx.recv().await?;
            if let Some(slot) = self.done.get_mut(i) {
                *slot = Some(f);
            }
        }
    }
}

/// A polite crawler. Share it (`Arc`) between tasks: hosts are paced
/// across all of them.
pub struct Crawler<L> {
    h: Harvester<L>,
    token: String,
    min_gap: Duration,
    max_wait: Duration,
    page_cap: usize,
    max_hosts: usize,
    signer: Option<Signer>,
    hosts: Mutex<HashMap<String, Arc<Host>>>,
    /// Licence documents read (RSL), by URL.
    licences: terms::Licences,
    pay: Option<Pay>,
    purpose: Option<botscope_terms::Purpose>,
    /// Licence servers are asked for tokens so, when set.
    licence: Option<botscope_http::olp::OlpConfig>,
    /// Licence tokens acquired.
    tokens: terms::Tokens,
    /// Millionths spent, in the currency of `pay`'s maximum.
    spent: Mutex<u64>,
}

impl<L: Lookup> Crawler<L> {
    /// A crawler over a checked DNS pool; refuses a dishonest User-Agent
    /// ([`honest_user_agent`]).
    pub fn new(cfg: PoliteConfig, dns: Pool<L>) -> Result<Self, Error> {
        let token =
            honest_user_agent(&cfg.fetch.user_agent).map_err(|e| Error::Setup(e.to_string()))?;
        if cfg.pay.is_some() && cfg.signer.is_none() {
            return Err(Error::Setup(
                "paying needs a signer: a price offered unsigned is never accepted (and never should be)".into(),
            ));
        }
        if let Some(Pay {
            max_price,
            budget: Some(b),
        }) = cfg.pay
            && b.currency != max_price.currency
        {
            return Err(Error::Setup(format!(
                "the budget is in {}, the maximum price in {}",
                b.currency, max_price.currency
            )));
        }
        Ok(Crawler {
            h: Harvester::new(cfg.fetch, dns)?,
            token,
            min_gap: cfg.min_gap,
            max_wait: cfg.max_wait,
            page_cap: cfg.page_cap,
            signer: cfg.signer,
            max_hosts: cfg.max_hosts.max(1),
            hosts: Mutex::default(),
            licences: terms::Licences::default(),
            pay: cfg.pay,
            purpose: cfg.purpose,
            licence: cfg.licence,
            tokens: terms::Tokens::default(),
            spent: Mutex::new(0),
        })
    }

    /// The product token robots.txt is matched with.
    pub fn product_token(&self) -> &str {
        &self.token
    }

    fn host(&self, name: &str) -> Arc<Host> {
        let mut hosts = lock(&self.hosts);
        if hosts.len() >= self.max_hosts && !hosts.contains_key(name) {
            self.forget_idle(&mut hosts);
        }
        hosts.entry(name.to_owned()).or_default().clone()
    }

    /// Bounds the memory of a long crawl: hosts nobody is using whose gap
    /// has passed are forgotten, those whose robots.txt copies expired
    /// first. Forgetting costs at most an early robots.txt fetch; it never
    /// shortens a gap, since only hosts whose gap has passed go.
    fn forget_idle(&self, hosts: &mut HashMap<String, Arc<Host>>) {
        let now = Instant::now();
        let idle = |h: &Arc<Host>| {
            Arc::strong_count(h) == 1 && self.ready_at(&lock(&h.pace)).is_none_or(|t| t <= now)
        };
        hosts.retain(|_, h| {
            !(idle(h)
                && h.robots
                    .try_lock()
                    .is_ok_and(|r| r.values().all(|c| c.expires <= now)))
        });
        if hosts.len() >= self.max_hosts {
            hosts.retain(|_, h| !idle(h));
        }
    }

    /// The gap a host asks for now.
    fn gap(&self, pace: &Pace) -> Duration {
        pace.delay.unwrap_or_default().max(self.min_gap)
    }

    /// When the host may next be asked.
    fn ready_at(&self, pace: &Pace) -> Option<Instant> {
        let after_last = pace.last_end.map(|t| t + self.gap(pace));
        after_last.max(pace.not_before)
    }

    /// Waits for `host`'s turn, up to `max_wait` from `since`.
    async fn turn(&self, name: &str, since: Instant) -> Result<Turn, String> {
        let host = self.host(name);
        let conn = host.conn.clone().lock_owned().await;
        loop {
            let at = self.ready_at(&lock(&host.pace));
            match at {
                Some(at) if at > Instant::now() => {
                    if at.duration_since(since) > self.max_wait {
                        return Err(format!(
                            "{name} asks for a wait of {} (Crawl-delay, Request-rate or Retry-After), longer than the {} allowed",
                            secs(at.duration_since(Instant::now())),
                            secs(self.max_wait)
                        ));
                    }
                    tokio::time::sleep_until(at).await;
                }
                _ => break,
            }
        }
        Ok(Turn { _conn: conn, host })
    }

    /// Records a `Retry-After` of a 429 or 503 answer.
    fn retry_after(&self, host: &Host, x: &Exchange) {
        if !matches!(x.status, 429 | 503) {
            return;
        }
        let Some(v) = x
            .headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("retry-after"))
            .map(|(_, v)| v)
        else {
            return;
        };
        if let Some(d) = parse_retry_after(v, SystemTime::now()) {
            let until = Instant::now() + d.min(LONGEST_HOLD);
            let mut p = lock(&host.pace);
            p.not_before = Some(p.not_before.map_or(until, |t| t.max(until)));
        }
    }

    /// One exchange with `url`'s host (its turn must be held).
    async fn exchange(
        &self,
        url: &url::Url,
        cap: usize,
        accept: &str,
        deadline: std::time::Instant,
    ) -> Result<Exchange, FetchError> {
        self.exchange_with(url, cap, accept, deadline, &[]).await
    }

    /// [`Crawler::exchange`] with `fields` added to the request (and
    /// covered by its signature).
    async fn exchange_with(
        &self,
        url: &url::Url,
        cap: usize,
        accept: &str,
        deadline: std::time::Instant,
        fields: &[(String, String)],
    ) -> Result<Exchange, FetchError> {
        let host = url.host_str().unwrap_or_default();
        let ip = self.h.address(host).await?;
        let cfg = &self.h.cfg;
        let port = url.port().unwrap_or(if url.scheme() == "https" {
            cfg.https_port
        } else {
            cfg.http_port
        });
        // Signed over the authority the `Host` field carries.
        let signature = match &self.signer {
            Some(s) => {
                let authority = match url.port() {
                    Some(p) => format!("{host}:{p}"),
                    None => host.to_owned(),
                };
                let mut all = fields.to_vec();
                all.extend(s.headers_with(url, &authority, fields));
                all
            }
            None => fields.to_vec(),
        };
        botscope_http::exchange(
            botscope_http::Request {
                url,
                host: host.trim_matches(['[', ']']),
                ip,
                port,
                user_agent: &cfg.user_agent,
                accept,
                if_none_match: None,
                if_modified_since: None,
                extra: &signature,
                cap,
                connect_timeout: cfg.connect_timeout,
                deadline,
            },
            &self.h.tls,
        )
        .await
    }

    /// The fresh robots.txt of `url`'s origin, fetched when there is none.
    async fn robots(
        &self,
        url: &url::Url,
        waited: &mut Duration,
    ) -> Result<Arc<RobotsCopy>, String> {
        let name = url.host_str().unwrap_or_default().to_owned();
        let origin = url.origin().ascii_serialization();
        let host = self.host(&name);
        let mut copies = host.robots.lock().await;
        let old = copies.get(&origin).cloned();
        if let Some(c) = &old
            && c.expires > Instant::now()
        {
            return Ok(c.clone());
        }
        let copy = Arc::new(self.fetch_robots(url, old.as_deref(), waited).await?);
        if let Rules::Parsed { delay, .. } = &copy.rules {
            lock(&host.pace).delay = delay.map(|d| d.0);
        } else {
            lock(&host.pace).delay = None;
        }
        copies.insert(origin, copy.clone());
        Ok(copy)
    }

    async fn fetch_robots(
        &self,
        page: &url::Url,
        old: Option<&RobotsCopy>,
        waited: &mut Duration,
    ) -> Result<RobotsCopy, String> {
        let policy = &self.h.cfg.policy;
        let mut url = page
            .join("/robots.txt")
            .map_err(|e| format!("no robots.txt URL for {page}: {e}"))?;
        let now = SystemTime::now();
        let unreachable_for = old
            .and_then(|o| o.unreachable_since)
            .and_then(|t| now.duration_since(t).ok())
            .unwrap_or_default();
        let has_cached_copy = old.is_some_and(|o| matches!(o.rules, Rules::Parsed { .. }));
        let deadline = std::time::Instant::now() + self.h.cfg.total_timeout;
        let mut hops = 0u8;
        loop {
            let name = url.host_str().unwrap_or_default().to_owned();
            let asked = Instant::now();
            let turn = self.turn(&name, asked).await?;
            *waited += asked.elapsed();
            let r = self
                .exchange(&url, policy.size_cap, crate::ROBOTS_ACCEPT, deadline)
                .await;
            if let Ok(x) = &r {
                self.retry_after(&turn.host, x);
            }
            drop(turn);
            let (x, error) = match r {
                Ok(x) => (Some(x), None),
                Err(e) => (None, Some(e)),
            };
            let headers: Vec<(&str, &str)> = x
                .as_ref()
                .map(|x| {
                    x.headers
                        .iter()
                        .map(|(k, v)| (k.as_str(), v.as_str()))
                        .collect()
                })
                .unwrap_or_default();
            let decision = decide_fetch(
                policy,
                &FetchResponse {
                    status: x.as_ref().map(|x| x.status),
                    headers: &headers,
                    redirect_hops: hops,
                    body_len: x.as_ref().map_or(0, |x| x.body_len),
                    unreachable_for,
                    has_cached_copy,
                    now,
                },
            );
            let what = match (&x, &error) {
                (Some(x), _) => format!("{url} answered {}", x.status),
                (None, Some(e)) => format!("{url}: {e}"),
                (None, None) => url.to_string(),
            };
            let expires = Instant::now() + decision.expires_in;
            let good = x.as_ref().is_some_and(|x| x.status < 500);
            let unreachable_since = if good {
                None
            } else {
                Some(old.and_then(|o| o.unreachable_since).unwrap_or(now))
            };
            let copy = |rules| RobotsCopy {
                url: url.to_string(),
                rules,
                expires,
                unreachable_since,
            };
            return Ok(match decision.action {
                FetchAction::FollowRedirect { location } => match url.join(&location) {
                    Ok(next)
                        if matches!(next.scheme(), "http" | "https")
                            && next.host_str().is_some() =>
                    {
                        url = next;
                        hops = hops.saturating_add(1);
                        continue;
                    }
                    _ => copy(Rules::AllowAll(format!(
                        "{what}, a redirect to {location:?}, not an http(s) URL: no restrictions"
                    ))),
                },
                FetchAction::Parse { max_bytes, .. } => {
                    let body = x.map(|x| x.body).unwrap_or_default();
                    let body = body[..max_bytes.min(body.len())].to_vec();
                    copy(self.parse(body))
                }
                FetchAction::AllowAll => {
                    copy(Rules::AllowAll(format!("{what}: {}", decision.reason)))
                }
                FetchAction::DisallowAll => {
                    copy(Rules::DisallowAll(format!("{what}: {}", decision.reason)))
                }
                FetchAction::UseCachedCopy => match old {
                    Some(RobotsCopy {
                        url: old_url,
                        rules: Rules::Parsed { body, .. },
                        ..
                    }) => RobotsCopy {
                        url: old_url.clone(),
                        ..copy(self.parse(body.clone()))
                    },
                    _ => copy(Rules::AllowAll(format!("{what}: {}", decision.reason))),
                },
            });
        }
    }

    /// Rules from a robots.txt body, with the pace its group in force asks.
    fn parse(&self, body: Vec<u8>) -> Rules {
        let semantics = self.h.cfg.policy.semantics;
        let matcher = Matcher::compile(&body, semantics, &ParseOptions::default());
        let robots = Robots::parse(&body);
        let groups = robots.groups_for(&self.token);
        let delay = match matcher.crawl_delay(&self.token) {
            Some(d) if d.is_finite() && d > 0.0 => {
                let line = groups
                    .iter()
                    .find_map(|g| g.crawl_delay.as_ref().map(|c| c.line))
                    .unwrap_or(0);
                Some((
                    Duration::from_secs_f64(d.min(LONGEST_HOLD.as_secs_f64())),
                    line,
                ))
            }
            _ => groups.iter().find_map(|g| {
                let r = g.request_rate.as_ref()?;
                let per = r.value.seconds / f64::from(r.value.requests.max(1));
                (per.is_finite() && per > 0.0).then(|| {
                    (
                        Duration::from_secs_f64(per.min(LONGEST_HOLD.as_secs_f64())),
                        r.line,
                    )
                })
            }),
        };
        Rules::Parsed {
            matcher,
            body,
            delay,
            preferences: (robots.states_preferences() || !robots.licenses.is_empty())
                .then(|| Box::new(robots)),
        }
    }

    /// The robots.txt verdict for `url`, without the pace.
    async fn verdict(
        &self,
        url: &url::Url,
        waited: &mut Duration,
        note: &mut Option<String>,
        prefs: &mut Option<botscope_robotstxt::Preferences>,
    ) -> Decision {
        if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
            return Decision::Unavailable(format!("{url} is not an http(s) URL"));
        }
        let path = path_of(url.as_str().as_bytes());
        if is_robots_txt_path(&path) {
            // RFC 9309 2.2.2: robots.txt itself is always allowed.
            return Decision::Allowed(None);
        }
        let copy = match self.robots(url, waited).await {
            Ok(c) => c,
            Err(why) => return Decision::Unavailable(why),
        };
        match &copy.rules {
            Rules::AllowAll(why) => {
                *note = Some(why.clone());
                Decision::Allowed(None)
            }
            Rules::DisallowAll(why) => Decision::Unavailable(why.clone()),
            Rules::Parsed {
                matcher,
                body,
                preferences,
                ..
            } => {
                let v = matcher.check_path(&self.token, &path);
                if let Some(r) = preferences {
                    *prefs = Some(r.preferences(&self.token, &path, v.allowed));
                }
                let line = v.rule.map(|r| RobotsLine {
                    robots_url: copy.url.clone(),
                    line: r.line,
                    text: line_text(body, r.line).unwrap_or_else(|| {
                        let kind = match r.kind {
                            RuleKind::Allow => "Allow",
                            RuleKind::Disallow => "Disallow",
                        };
                        format!("{kind}: {}", r.pattern_str())
                    }),
                });
                match (v.allowed, line) {
                    (true, line) => Decision::Allowed(line),
                    (false, Some(line)) => Decision::Disallowed(line),
                    (false, None) => Decision::Unavailable("disallowed without a rule".into()),
                }
            }
        }
    }

    /// May `url` be fetched now? Fetches the site's robots.txt when no
    /// fresh copy is cached (that request keeps the host's pace too).
    pub async fn check(&self, url: &str) -> Decision {
        let url = match url::Url::parse(url) {
            Ok(u) => u,
            Err(e) => return Decision::Unavailable(format!("{url:?} is not a URL: {e}")),
        };
        let mut waited = Duration::ZERO;
        match self.verdict(&url, &mut waited, &mut None, &mut None).await {
            Decision::Allowed(rule) => {
                let host = self.host(url.host_str().unwrap_or_default());
                let busy = host.conn.try_lock().is_err();
                let pace = lock(&host.pace);
                let now = Instant::now();
                let left = self
                    .ready_at(&pace)
                    .map_or(Duration::ZERO, |t| t.saturating_duration_since(now));
                if busy {
                    Decision::Wait(left.max(self.gap(&pace)))
                } else if left > Duration::ZERO {
                    Decision::Wait(left)
                } else {
                    Decision::Allowed(rule)
                }
            }
            d => d,
        }
    }

    /// Fetches every URL of `urls`: each host's URLs one after another,
    /// the hosts side by side (a task per host on the caller's runtime),
    /// the results given back in the order of `urls` as soon as the
    /// earlier ones are in.
    pub fn fetch_all(self: &Arc<Self>, urls: Vec<String>) -> FetchAll
    where
        L: 'static,
    {
        let mut per_host: HashMap<String, Vec<(usize, String)>> = HashMap::new();
        for (i, u) in urls.into_iter().enumerate() {
            let host = url::Url::parse(&u)
                .ok()
                .and_then(|p| p.host_str().map(str::to_owned))
                .unwrap_or_default();
            per_host.entry(host).or_default().push((i, u));
        }
        let total = per_host.values().map(Vec::len).sum();
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        for (_, list) in per_host {
            let c = self.clone();
            let tx = tx.clone();
            tokio::spawn(async move {
                for (i, u) in list {
                    let f = c.fetch(&u).await;
                    if tx.send((i, f)).is_err() {
                        return;
                    }
                }
            });
        }
        FetchAll {
            rx,
            done: (0..total).map(|_| None).collect(),
            next: 0,
        }
    }

    /// Fetches `url` as robots.txt and the host's pace allow, waiting as
    /// told; follows redirects (up to the policy's hops), each hop
    /// checked in turn.
    pub async fn fetch(&self, url: &str) -> Fetch {
        let mut out = Fetch {
            url: url.to_owned(),
            final_url: url.to_owned(),
            redirects: Vec::new(),
            decision: Decision::Unavailable(String::new()),
            waited: Duration::ZERO,
            robots_note: None,
            page: None,
            error: None,
            usage: None,
            content_signal: None,
            charged: None,
            pay_note: None,
        };
        let mut u = match url::Url::parse(url) {
            Ok(u) => u,
            Err(e) => {
                out.decision = Decision::Unavailable(format!("{url:?} is not a URL: {e}"));
                return out;
            }
        };
        loop {
            out.final_url = u.to_string();
            out.robots_note = None;
            let mut prefs = None;
            out.decision = self
                .verdict(&u, &mut out.waited, &mut out.robots_note, &mut prefs)
                .await;
            let prefs = prefs.unwrap_or_default();
            (out.usage, out.content_signal) = (prefs.usage, prefs.content_signal);
            if !matches!(out.decision, Decision::Allowed(_)) {
                return out;
            }
            // The site's terms for the purpose (a licence token acquired
            // where they say so), and the price offered.
            let licence = match self.terms_step(&u).await {
                Ok(l) => l,
                Err(why) => {
                    out.decision = Decision::Unavailable(why);
                    return out;
                }
            };
            let offer = match self.offer() {
                Ok(o) => o,
                Err(why) => {
                    out.decision = Decision::Unavailable(why);
                    return out;
                }
            };
            let name = u.host_str().unwrap_or_default().to_owned();
            let asked = Instant::now();
            let turn = match self.turn(&name, asked).await {
                Ok(t) => t,
                Err(why) => {
                    self.settle(offer.as_ref(), None);
                    out.decision = Decision::Unavailable(why);
                    return out;
                }
            };
            out.waited += asked.elapsed();
            let deadline = std::time::Instant::now() + self.h.cfg.total_timeout;
            let mut fields = offer.as_ref().map(|o| o.fields()).unwrap_or_default();
            if let Some((_, token)) = &licence {
                fields.push(("authorization".to_owned(), format!("License {token}")));
            }
            let r = self
                .exchange_with(&u, self.page_cap, PAGE_ACCEPT, deadline, &fields)
                .await;
            if let Ok(x) = &r {
                self.retry_after(&turn.host, x);
            }
            drop(turn);
            let x = match r {
                Ok(x) => x,
                Err(e) => {
                    self.settle(offer.as_ref(), None);
                    out.error = Some(e.to_string());
                    return out;
                }
            };
            (out.charged, out.pay_note) = self.settle(offer.as_ref(), Some(&x));
            if let Some(note) = self.licence_answer(licence.as_ref(), &x) {
                out.pay_note = Some(note);
            }
            let headers: Vec<(&str, &str)> = x
                .headers
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect();
            let location = header(&headers, "location").map(str::to_owned);
            // The response's own statement joins the file's.
            // Its field lines are one Dictionary (RFC 9651 section 4.2).
            let usage_lines: Vec<&str> = headers
                .iter()
                .filter(|(k, _)| k.eq_ignore_ascii_case("content-usage"))
                .map(|(_, v)| *v)
                .collect();
            if !usage_lines.is_empty()
                && let Ok(p) = botscope_robotstxt::parse_usage_header(&usage_lines)
            {
                let file = out.usage.take().unwrap_or_default();
                let both = botscope_robotstxt::combine_usage([&file, &p.usage]);
                out.usage = (!both.is_empty()).then_some(both);
            }
            out.page = Some(Page {
                status: x.status,
                headers: x.headers,
                body: x.body,
                truncated: x.truncated,
            });
            let Some(location) = location.filter(|_| (300..400).contains(&x.status)) else {
                return out;
            };
            if out.redirects.len() >= usize::from(self.h.cfg.policy.max_redirects) {
                out.error = Some(format!(
                    "more than {} redirects",
                    self.h.cfg.policy.max_redirects
                ));
                return out;
            }
            match u.join(&location) {
                Ok(next)
                    if matches!(next.scheme(), "http" | "https") && next.host_str().is_some() =>
                {
                    out.redirects.push((u.to_string(), x.status));
                    u = next;
                }
                _ => {
                    out.error = Some(format!("a redirect to {location:?}, not an http(s) URL"));
                    return out;
                }
            }
        }
    }
}

/// Line `n` (1-based) of `body`, trimmed; lines end at LF, CR LF or CR.
fn line_text(body: &[u8], n: u32) -> Option<String> {
    let mut line = 1u32;
    let mut start = 0usize;
    let mut i = 0usize;
    while i <= body.len() {
        let end = i == body.len() || matches!(body[i], b'\n' | b'\r');
        if end {
            if line == n {
                return Some(String::from_utf8_lossy(&body[start..i]).trim().to_owned());
            }
            if i + 1 < body.len() && body[i] == b'\r' && body[i + 1] == b'\n' {
                i += 1;
            }
            line += 1;
            start = i + 1;
        }
        i += 1;
    }
    None
}

/// `1.5s`.
fn secs(d: Duration) -> String {
    format!("{:.1}s", d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn honest_user_agents() {
        for ok in [
            "ExampleBot/1.0 (+https://example.org/bot.html)",
            "Mozilla/5.0 (compatible; DanBot/1.0; +http://www.dancryer.com/about-danbot)",
            crate::DEFAULT_USER_AGENT,
        ] {
            assert!(honest_user_agent(ok).is_ok(), "{ok}");
        }
        assert_eq!(
            honest_user_agent("Mozilla/5.0 (compatible; DanBot/1.0; +http://www.dancryer.com/x)"),
            Ok("DanBot".to_owned())
        );
        for bad in [
            "",
            "ExampleBot/1.0",
            "ExampleBot/1.0 (contact: me)",
            "ExampleBot/1.0 (+https://localhost)",
            "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36 +https://example.org",
            "Example Bot 1.0 +https://example.org/",
            "ExampleBot/1.0 (+https://example.org/)\r\nX-Evil: 1",
        ] {
            assert!(honest_user_agent(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn lines_of_a_body() {
        let b = b"a\nb\r\nc\rd\n\ne";
        let got: Vec<Option<String>> = (1..=7).map(|n| line_text(b, n)).collect();
        assert_eq!(
            got,
            vec![
                Some("a".into()),
                Some("b".into()),
                Some("c".into()),
                Some("d".into()),
                Some(String::new()),
                Some("e".into()),
                None
            ]
        );
    }
}
