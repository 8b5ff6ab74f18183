//! The gate: one small service a web server asks per request, answering
//! from the local lists `bots export` and `logs export-lists` write (ACAP's
//! crawler guidance, sections 3–4: the slow checking happens offline, the
//! per-request answer is a lookup).
//!
//! - `GET /robots.txt`: the robots.txt of `--robots-dir` chosen for the
//!   client's category, most specific first: `<bot>.txt` (the verified
//!   bot's list name as exported), `all-ok-bots.txt`, `other-bots.txt`,
//!   `undeclared-bots.txt`, `suspect-bots.txt`, else `default.txt`.
//! - `GET /auth`: 200, or 403 for a denied category (default:
//!   `suspect-bots`), with `X-Bot-Category` and `X-Bot-Name`, for nginx's
//!   `auth_request`; with signatures on, also `X-Bot-Signature:
//!   verified|invalid|unverified` for the request's Web Bot Auth signature
//!   and, when verified, `X-Signature-Agent` (a registered bot's signature
//!   makes it `all-ok-bots` under its name, whatever its address).
//! - `GET /healthz`: what is loaded, when, and the last reload error.
//!
//! The client is the connection's address, or `X-Real-IP` /
//! `X-Forwarded-For` only when the connection comes from a trusted proxy
//! network. Lists and robots files are read into memory and swapped in
//! whole when they change (polled) or on SIGHUP: a request sees the old
//! state or the new one, never a mix, and a reload that fails keeps the
//! old state and says why.
//!
//! What the gate answers for an address, from the lists as exported:
//!
//! ```
//! use std::net::IpAddr;
//! use std::time::Duration;
//!
//! use botscope_gate::{Category, Config, Gate, choose, default_deny};
//!
//! let dir = botscope_testkit::tempdir();
//! let (lists, robots) = (dir.path().join("lists"), dir.path().join("robots"));
//! for d in [&lists, &robots] {
//!     std::fs::create_dir_all(d)?;
//! }
//! std::fs::write(lists.join("all-ok-bots.txt"), "66.249.66.1\n")?;
//! std::fs::write(lists.join("googlebot.txt"), "66.249.66.1\n")?;
//! std::fs::write(lists.join("suspect-bots.txt"), "192.0.2.66\n")?;
//! std::fs::write(robots.join("default.txt"), "User-agent: *\nDisallow: /private/\n")?;
//! std::fs::write(robots.join("googlebot.txt"), "User-agent: *\nAllow: /\n")?;
//! let gate = Gate::new(Config {
//!     lists: Some(lists),
//!     ..Config::new(robots)
//! })?;
//! let now = gate.snapshot();
//! let google = now.lists.place(IpAddr::from([66, 249, 66, 1]));
//! assert_eq!(google.category, Category::AllOk);
//! assert_eq!(choose(&now.robots, &google).0, "googlebot");
//! let fake = now.lists.place(IpAddr::from([192, 0, 2, 66]));
//! assert!(default_deny().contains(&fake.category), "/auth answers 403");
//! assert_eq!(choose(&now.robots, &fake).0, "default");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

// A library speaks through its return values and the caller's writer,
// never by printing.
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod answer;
pub mod canary;
pub mod challenge;
pub mod charge;
pub mod crowdsec;
pub mod decisions;
pub mod export;
pub mod funnel;
pub mod identity;
pub mod inject;
pub mod ledger;
pub mod licence;
mod lists;
pub mod metrics;
pub mod proxy;
mod recent;
pub mod refresh;
pub mod replay;
pub mod resp;
pub mod signature;
pub mod startup;
pub mod state;
pub mod trap;

use std::collections::BTreeMap;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use arc_swap::ArcSwap;
use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use botscope_botid::IpRange;

pub use lists::{
    Category, Fingerprint, Lists, MAX_LIST_BYTES, MAX_ROBOTS_BYTES, Placed, Stamp, choose,
    fingerprint, read, read_robots,
};

/// What can stop the gate or a reload.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file or link refused: a symlink leading out of its directory,
    /// or something that is not a regular file.
    #[error(transparent)]
    Refused(#[from] botscope_os::Error),
    /// A list or robots file that is not what it should be.
    #[error("{}{}: {what}", shown(path), if *line > 0 { format!(":{line}") } else { String::new() })]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The line (0 for the whole file).
        line: usize,
        /// What is wrong.
        what: String,
    },
    /// A directory with neither layout.
    #[error(
        "{}: no lists here (neither `all-ok-bots.txt` … as `bots export --format plain` writes, nor `all-ok-bots/` … as `--format apache-dirs` writes)",
        shown(path)
    )]
    NoLists {
        /// The directory.
        path: PathBuf,
    },
    /// `--robots-dir` without `default.txt`.
    #[error(
        "{} is missing: the file served to every client no list names",
        shown(path)
    )]
    NoDefault {
        /// The file that should be there.
        path: PathBuf,
    },
    /// The listening socket.
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// The server stopped on an error.
    #[error("the server stopped: {0}")]
    Serve(std::io::Error),
    /// A policy with an error (every error, a line each).
    #[error("the policy is refused:\n{0}")]
    Policy(String),
    /// The User-Agent classifier could not be built.
    #[error(transparent)]
    Identity(#[from] botscope_botid::Error),
    /// The system's random source failed.
    #[error("the system's random source failed")]
    Random,
    /// The decision log cannot be opened.
    #[error("the decision log: {0}")]
    DecisionLog(String),
    /// The application behind the gate cannot be used.
    #[error(transparent)]
    Upstream(#[from] proxy::UpstreamError),
    /// The shared state cannot be set up.
    #[error("--state {0}")]
    State(String),
    /// A file changed while it was read (it is read again once it holds
    /// still).
    #[error("{0}")]
    Changing(String),
}

/// How long watched files must hold still after a change before they are
/// read: an editor or a script rewriting the policy in place is never
/// read half-way.
pub const HOLD_STILL: Duration = Duration::from_millis(500);

/// A path in a message: file names in a lists directory are anyone's, so
/// control characters are shown escaped.
fn shown(p: &std::path::Path) -> String {
    botscope_text::field(&p.display().to_string()).to_string()
}

/// The gate's settings.
#[derive(Debug, Clone)]
pub struct Config {
    /// The lists (`--lists`), when given.
    pub lists: Option<PathBuf>,
    /// The robots.txt files (`--robots-dir`).
    pub robots_dir: PathBuf,
    /// Proxies whose `client_header` is believed.
    pub trust_proxy: Vec<IpRange>,
    /// The one header, lower-case, that carries the client's address from
    /// a trusted proxy (`--client-header`, default `x-real-ip`): a single
    /// address, or for `x-forwarded-for` and `forwarded` (RFC 7239's
    /// `for=`) the rightmost hop that is not a trusted proxy. No other
    /// header is read: a client's own
    /// `X-Real-IP` or `X-Forwarded-For` passed on by a front server that
    /// writes the other one is never believed.
    pub client_header: String,
    /// Categories `/auth` answers 403 (default: `suspect-bots`).
    pub deny: Vec<Category>,
    /// How often the directories are checked for changes.
    pub poll: Duration,
    /// Web Bot Auth signatures checked at `/auth` (none: not checked).
    pub signatures: Option<signature::SignatureConfig>,
    /// Request-time identity from the User-Agent (none: the lists alone
    /// place a client, as before policies).
    pub identity: Option<identity::IdentityConfig>,
    /// The site owner's policy (`--policy`); none: `deny` decides.
    pub policy: Option<PathBuf>,
    /// Rate keys held at most (`--max-rate-keys`).
    pub rate_keys: usize,
    /// The decision log (`--decision-log`), when kept.
    pub decision_log: Option<decisions::DecisionLogConfig>,
    /// The event log (`--events`): trap catches and the refusals they
    /// caused, a line each, for fail2ban.
    pub events: Option<decisions::DecisionLogConfig>,
    /// The CrowdSec sink (`--crowdsec`): each catch pushed to a Local API
    /// as an alert.
    pub crowdsec: Option<crowdsec::CrowdsecConfig>,
    /// The operators' lists refreshed on a schedule (`--refresh-lists`).
    pub refresh: Option<refresh::RefreshConfig>,
    /// How challenges are made (`--challenge-key` …); none, or an empty
    /// key: a key made at start.
    pub challenge: Option<challenge::ChallengeConfig>,
    /// Decide, log and count, but always allow (`--report-only`): for the
    /// first days of a deployment.
    pub report_only: bool,
    /// What connections may hold (`--max-connections`,
    /// `--max-connections-per-client`, `--header-timeout`); the trusted
    /// proxies are not counted per client.
    pub connections: botscope_http::server::ConnectionLimits,
    /// The application the gate stands in front of (`--upstream`): what
    /// the policy allows is passed to it; none: the gate answers a front
    /// server's questions.
    pub upstream: Option<proxy::UpstreamConfig>,
    /// What many gates share (`--state`): memory (the default), or Redis.
    pub state: state::StateConfig,
    /// Who may read `/healthz` and `/metrics` and revoke passes
    /// (`--operators`, default loopback): judged on the client the gate
    /// names, never on a trusted proxy standing in for an unnamed one.
    pub operators: Vec<IpRange>,
    /// The operators' token (`--operator-token-file`): revoking passes
    /// needs it (`Authorization: Bearer …`) besides an operator's
    /// address; through a trusted proxy that names no client, it alone
    /// lets the operators' pages be read.
    pub operator_token: Option<Vec<u8>>,
    /// The site's terms the gate states: its RSL licence, served at a
    /// path, and a `Content-Usage` for the pages it passes.
    pub terms: SiteTerms,
    /// Canary tokens in the pages passed (`--canary-key`, standalone).
    pub canary: Option<canary::CanaryConfig>,
}

/// The site's terms as the gate states them.
#[derive(Debug, Clone, Default)]
pub struct SiteTerms {
    /// The RSL licence document (checked when it was read) and the path it
    /// is served at (`/license.xml`).
    pub rsl: Option<(String, Arc<Vec<u8>>)>,
    /// A `Content-Usage` value (aipref) for the pages passed that carry
    /// none of their own.
    pub content_usage: Option<String>,
    /// How the licence servers the RSL document names are asked about the
    /// tokens `license` rules check (and the gate's credentials there).
    pub licence_server: botscope_http::olp::OlpConfig,
}

impl SiteTerms {
    /// True for the path the licence is served at.
    pub fn serves(&self, path: &str) -> bool {
        self.rsl.as_ref().is_some_and(|(p, _)| p == path)
    }
}

/// The default `--operators`: loopback.
pub fn default_operators() -> Vec<IpRange> {
    ["127.0.0.0/8", "::1/128"]
        .iter()
        .filter_map(|c| IpRange::parse_any(c).ok())
        .collect()
}

impl Config {
    /// Serving `robots_dir`, no lists, no identity, no policy, no
    /// signatures: the rest set with the struct's fields.
    pub fn new(robots_dir: PathBuf) -> Config {
        Config {
            lists: None,
            robots_dir,
            trust_proxy: Vec::new(),
            client_header: DEFAULT_CLIENT_HEADER.to_owned(),
            deny: default_deny(),
            poll: Duration::from_secs(1),
            signatures: None,
            identity: None,
            policy: None,
            rate_keys: botscope_policy::DEFAULT_MAX_KEYS,
            decision_log: None,
            events: None,
            crowdsec: None,
            refresh: None,
            challenge: None,
            report_only: false,
            connections: botscope_http::server::ConnectionLimits {
                header_timeout: Duration::from_secs(60),
                ..Default::default()
            },
            upstream: None,
            terms: SiteTerms::default(),
            state: state::StateConfig::Memory,
            operators: default_operators(),
            operator_token: None,
            canary: None,
        }
    }

    /// What the reloads watch.
    fn watched(&self) -> Vec<&std::path::Path> {
        let mut w: Vec<&std::path::Path> = vec![&self.robots_dir];
        w.extend(self.lists.as_deref());
        w.extend(self.policy.as_deref());
        w
    }
}

/// Everything a request reads, swapped in whole.
#[derive(Debug)]
pub struct Snapshot {
    /// The lists (empty without `--lists`).
    pub lists: Lists,
    /// The robots.txt files by name.
    pub robots: BTreeMap<String, Arc<[u8]>>,
    /// The same, compiled for `robots: disallowed` rules.
    pub compiled: BTreeMap<String, Arc<botscope_robotstxt::Matcher>>,
    /// The policy, when one is given.
    pub policy: Option<Arc<botscope_policy::Policy>>,
    /// Its warnings (rules no request can reach), as read.
    pub policy_warnings: Vec<String>,
    /// Every header a `label` rule of the policy sets: sent empty when no
    /// label sets it, so that a front server copying it to the
    /// application (Caddy's `copy_headers`) never passes on a client's own
    /// or a placeholder.
    pub label_names: Vec<axum::http::HeaderName>,
    /// The decision counters of the policy's rules in order, then
    /// `default`; without a policy, `default` and `--deny`.
    pub counters: Vec<answer::Slot>,
    /// When they were read.
    pub loaded: SystemTime,
}

/// The gate's state, shared by every request.
pub struct Gate {
    config: Config,
    /// Swapped whole on reload; a request reads it without a lock.
    current: ArcSwap<Snapshot>,
    /// The fingerprint of what `current` was read from.
    seen: Mutex<Fingerprint>,
    /// A change seen and not loaded yet: its fingerprint, and since when
    /// the files have held still at it.
    pending: Mutex<Option<(Fingerprint, std::time::Instant)>>,
    /// `config.client_header`, parsed once.
    client_header: axum::http::HeaderName,
    /// The last reload's failure, until one succeeds.
    last_error: Mutex<Option<String>>,
    reloads: std::sync::atomic::AtomicU64,
    signatures: Option<signature::Signatures>,
    identities: Option<identity::Identities>,
    rates: botscope_policy::Rates,
    /// Decisions counted, for `/metrics`.
    pub counters: answer::Counters,
    /// The challenge funnel per rule, for `/metrics`.
    pub funnel: funnel::Funnel,
    /// Payment answers counted, and the amounts charged.
    pub charges: charge::Charges,
    /// The site's licences, and what licence servers said of tokens.
    pub licences: licence::Licences,
    /// How long decisions took.
    pub latency: metrics::Latency,
    /// The decision log, when one is kept.
    pub decision_log: Option<decisions::DecisionLog>,
    /// The event log (`--events`), when one is kept.
    pub events: Option<decisions::EventLog>,
    /// The trap paths and what they caught.
    pub traps: trap::TrapState,
    /// The CrowdSec sink, when there is one.
    pub crowdsec: Option<crowdsec::Crowdsec>,
    /// Canary tokens, when pages are marked.
    pub canary: Option<Arc<canary::Canaries>>,
    /// Challenges and passes.
    pub challenges: challenge::Challenges,
    /// The last refresh of the operators' lists.
    pub refreshed: refresh::Shared,
    /// The application behind the gate (`--upstream`), when there is one.
    pub upstream: Option<proxy::Upstream>,
    /// The fleet's shared state (`--state redis://…`), when there is one.
    pub shared: Option<Arc<state::Shared>>,
    /// Where the challenge key came from: [`KEY_OWN`], [`KEY_FLEET`] or
    /// [`KEY_GIVEN`].
    key_source: std::sync::atomic::AtomicU8,
    /// When the gate was made (a new gate claims the fleet's key only
    /// after [`CLAIM_KEY_AFTER`]).
    started: std::time::Instant,
}

/// The challenge key: made by this gate at start.
const KEY_OWN: u8 = 0;
/// The fleet's, read from (or put in) Redis.
const KEY_FLEET: u8 = 1;
/// `--challenge-key FILE`'s.
const KEY_GIVEN: u8 = 2;

/// How long a new gate waits before it puts its own key in an empty
/// Redis: running gates, which put the fleet's key back every second,
/// win the race after a Redis restart.
pub const CLAIM_KEY_AFTER: Duration = Duration::from_secs(3);

fn load(config: &Config, counters: &answer::Counters) -> Result<Snapshot, Error> {
    let robots = read_robots(&config.robots_dir)?;
    let (policy, policy_warnings) = match &config.policy {
        Some(path) => {
            let registry = config.identity.as_ref().map_or_else(
                || Arc::new(botscope_botid::Registry::bundled()),
                |i| i.registry.clone(),
            );
            let (p, w) = read_policy(path, &registry)?;
            (Some(Arc::new(p)), w)
        }
        None => (None, Vec::new()),
    };
    // `robots: disallowed` compares as the policy's `path_case:` says.
    let case = policy
        .as_ref()
        .map_or(botscope_policy::PathCase::Sensitive, |p| p.path_case);
    let compiled = robots
        .iter()
        .map(|(k, v)| {
            let m = match case {
                botscope_policy::PathCase::Sensitive => botscope_robotstxt::Matcher::new(v),
                botscope_policy::PathCase::Insensitive => botscope_robotstxt::Matcher::new(
                    botscope_policy::fold_case(&String::from_utf8_lossy(v)).as_bytes(),
                ),
            };
            (k.clone(), Arc::new(m))
        })
        .collect();
    let counters = match &policy {
        Some(p) => counters.slots(
            p.rules
                .iter()
                .map(|r| r.name.as_str())
                .chain(std::iter::once("default")),
        ),
        None => counters.slots(["default", "--deny"].into_iter()),
    };
    let mut label_names: Vec<axum::http::HeaderName> = Vec::new();
    for r in policy.iter().flat_map(|p| p.rules.iter()) {
        for (k, _) in &r.headers {
            if let Ok(n) = axum::http::HeaderName::from_bytes(k.as_bytes())
                && !label_names.contains(&n)
            {
                label_names.push(n);
            }
        }
    }
    Ok(Snapshot {
        label_names,
        counters,
        lists: match &config.lists {
            Some(l) => read(l)?,
            None => Lists::from_entries(Vec::new(), "none"),
        },
        robots,
        compiled,
        policy,
        policy_warnings,
        loaded: SystemTime::now(),
    })
}

/// Reads and compiles a policy file: refused (with every error, each with
/// file, line and rule) when it has an error; its warnings returned.
pub fn read_policy(
    path: &std::path::Path,
    registry: &botscope_botid::Registry,
) -> Result<(botscope_policy::Policy, Vec<String>), Error> {
    // A regular file only: a FIFO there would hold a worker and every
    // later reload.
    let bytes = botscope_os::read_file_capped(path, botscope_policy::MAX_POLICY_BYTES as u64 + 1)?;
    // Read twice: a file being rewritten in place is not read half-way.
    let again = botscope_os::read_file_capped(path, botscope_policy::MAX_POLICY_BYTES as u64 + 1)?;
    if again != bytes {
        return Err(Error::Changing(format!(
            "{} changed while it was read",
            shown(path)
        )));
    }
    let text = String::from_utf8_lossy(&bytes);
    let parsed = botscope_policy::parse(&path.display().to_string(), &text, registry);
    let (errors, warnings): (Vec<_>, Vec<_>) = parsed
        .findings
        .iter()
        .partition(|f| f.severity == botscope_policy::Severity::Error);
    match parsed.policy {
        Some(p) if errors.is_empty() => Ok((p, warnings.iter().map(ToString::to_string).collect())),
        _ => Err(Error::Policy(
            errors
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("\n"),
        )),
    }
}

impl Gate {
    /// Reads the lists and the robots files; an error here stops the
    /// gate before it listens.
    pub fn new(config: Config) -> Result<Arc<Gate>, Error> {
        let counters = answer::Counters::default();
        // Files being written as the gate starts: read again until they
        // hold still while read (for two seconds at most, then refused:
        // never a snapshot read while they changed).
        let mut tries = 0;
        let (seen, snap) = loop {
            let seen = fingerprint(&config.watched());
            let loaded = load(&config, &counters);
            let stable = fingerprint(&config.watched()) == seen;
            match loaded {
                Ok(snap) if stable => break (seen, snap),
                Err(e) if stable && !matches!(e, Error::Changing(_)) => return Err(e),
                _ if tries >= 20 => {
                    return Err(Error::Changing(
                        "the policy, lists or robots files kept changing while they were read (replace them by rename)".to_owned(),
                    ));
                }
                _ => {}
            }
            tries += 1;
            std::thread::sleep(HOLD_STILL / 5);
        };
        let client_header = axum::http::HeaderName::from_bytes(config.client_header.as_bytes())
            .unwrap_or(axum::http::HeaderName::from_static(DEFAULT_CLIENT_HEADER));
        for w in &snap.policy_warnings {
            tracing::warn!("{w}");
        }
        tracing::info!(
            lists = %config.lists.as_deref().map_or_else(|| "(none)".into(), |l| l.display().to_string()),
            layout = snap.lists.layout,
            entries = snap.lists.total(),
            robots = snap.robots.len(),
            "loaded"
        );
        let signatures = config.signatures.clone().map(signature::Signatures::new);
        let shared = match &config.state {
            state::StateConfig::Memory => None,
            state::StateConfig::Redis { url, timeout } => {
                if tokio::runtime::Handle::try_current().is_err() {
                    return Err(Error::State(
                        "redis: the gate is set up outside a Tokio runtime".to_owned(),
                    ));
                }
                Some(state::Shared::new(url, *timeout).map_err(Error::State)?)
            }
        };
        // Reverse DNS through the fleet: evidence one gate gathered, the
        // others use.
        let mut identity = config.identity.clone();
        if let (Some(shared), Some(dns)) = (&shared, identity.as_mut().and_then(|i| i.dns.as_mut()))
        {
            dns.lookup = state::shared_lookup(dns.lookup.clone(), shared.clone());
        }
        let identities = identity.map(identity::Identities::new).transpose()?;
        let upstream = config
            .upstream
            .clone()
            .map(proxy::Upstream::new)
            .transpose()?;
        let given_key = config.challenge.as_ref().is_some_and(|c| !c.key.is_empty());
        let fleet = shared.is_some();
        Ok(Arc::new(Gate {
            upstream,
            shared,
            key_source: std::sync::atomic::AtomicU8::new(if given_key {
                KEY_GIVEN
            } else {
                KEY_OWN
            }),
            started: std::time::Instant::now(),
            rates: botscope_policy::Rates::new(config.rate_keys),
            identities,
            counters,
            funnel: funnel::Funnel::default(),
            charges: charge::Charges::default(),
            licences: licence::Licences::new(
                config.terms.rsl.as_ref().map(|(_, b)| b.as_slice()),
                config.terms.licence_server.clone(),
            ),
            latency: metrics::Latency::default(),
            refreshed: refresh::Shared::default(),
            challenges: {
                let mut c = (config.challenge.clone())
                    .unwrap_or_else(|| challenge::ChallengeConfig::new(Vec::new()));
                if c.key.is_empty() {
                    c.key = random_key()?;
                }
                challenge::Challenges::new(c)
            },
            decision_log: config
                .decision_log
                .as_ref()
                .map(decisions::DecisionLog::open)
                .transpose()
                .map_err(|e| Error::DecisionLog(e.to_string()))?,
            events: config
                .events
                .as_ref()
                .map(decisions::EventLog::open)
                .transpose()
                .map_err(|e| Error::DecisionLog(e.to_string()))?,
            traps: trap::TrapState::default(),
            crowdsec: config.crowdsec.clone().map(crowdsec::Crowdsec::start),
            canary: config
                .canary
                .clone()
                .map(|c| Arc::new(canary::Canaries::new(c, fleet))),
            config,
            current: ArcSwap::from_pointee(snap),
            seen: Mutex::new(seen),
            pending: Mutex::new(None),
            client_header,
            last_error: Mutex::new(None),
            reloads: std::sync::atomic::AtomicU64::new(0),
            signatures,
        }))
    }

    /// What requests see now.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.current.load_full()
    }

    /// Reads everything again and swaps it in; on failure keeps the old
    /// state, records and logs why, and returns the error. Files that
    /// change while they are read are not swapped in
    /// ([`Error::Changing`]): the next poll reads them once they hold
    /// still.
    pub fn reload(&self) -> Result<(), Error> {
        self.reload_from(fingerprint(&self.config.watched()))
    }

    /// [`Gate::reload`], with the fingerprint taken before reading.
    fn reload_from(&self, seen: Fingerprint) -> Result<(), Error> {
        let loaded = load(&self.config, &self.counters).and_then(|snap| {
            if fingerprint(&self.config.watched()) == seen {
                Ok(snap)
            } else {
                Err(Error::Changing(
                    "the files changed while they were read".to_owned(),
                ))
            }
        });
        match loaded {
            Err(e @ Error::Changing(_)) => {
                // Not an error of the files: the old state stays, and the
                // change is read again once it holds still.
                tracing::debug!("reload put off: {e}");
                *self.pending.lock().unwrap_or_else(|p| p.into_inner()) = None;
                Err(e)
            }
            Ok(snap) => {
                for w in &snap.policy_warnings {
                    tracing::warn!("{w}");
                }
                tracing::info!(
                    layout = snap.lists.layout,
                    entries = snap.lists.total(),
                    robots = snap.robots.len(),
                    "reloaded"
                );
                self.current.store(Arc::new(snap));
                *self.seen.lock().unwrap_or_else(|p| p.into_inner()) = seen;
                *self.last_error.lock().unwrap_or_else(|p| p.into_inner()) = None;
                self.reloads
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                Ok(())
            }
            Err(e) => {
                tracing::warn!("reload failed, the lists loaded before stay in use: {e}");
                *self.seen.lock().unwrap_or_else(|p| p.into_inner()) = seen;
                *self.last_error.lock().unwrap_or_else(|p| p.into_inner()) = Some(e.to_string());
                Err(e)
            }
        }
    }

    /// Reloads when what is watched changed since the last reading and
    /// has held still since ([`HOLD_STILL`], or one poll when longer): a
    /// file rewritten in place is never read half-written.
    pub fn reload_if_changed(&self) {
        let now = fingerprint(&self.config.watched());
        if *self.seen.lock().unwrap_or_else(|p| p.into_inner()) == now {
            *self.pending.lock().unwrap_or_else(|p| p.into_inner()) = None;
            return;
        }
        let settle = HOLD_STILL.max(self.config.poll);
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        match &*pending {
            Some((fp, since)) if *fp == now => {
                if since.elapsed() >= settle {
                    *pending = None;
                    drop(pending);
                    let _ = self.reload_from(now);
                }
            }
            _ => *pending = Some((now, std::time::Instant::now())),
        }
    }

    /// The client's address: the connection's, or the one a trusted proxy
    /// writes in the configured header (`X-Real-IP` by default; for
    /// `X-Forwarded-For`, the last hop that is not itself a trusted
    /// proxy). A trusted proxy that sends no address there stands for the
    /// client itself.
    pub fn client(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        self.named_client(peer, headers)
            .unwrap_or_else(|stand_in| stand_in)
    }

    /// [`Gate::client`], told apart: `Ok` when the client is known (the
    /// peer is no trusted proxy, or a trusted proxy names it), `Err` with
    /// the proxy that stands in for it when a trusted proxy names no one
    /// (its header missing, doubled or unparseable, or only proxies in
    /// its chain). What only an operator may do is never granted to a
    /// stand-in.
    pub fn named_client(&self, peer: IpAddr, headers: &HeaderMap) -> Result<IpAddr, IpAddr> {
        let trusted = |ip: IpAddr| self.config.trust_proxy.iter().any(|r| r.contains(ip));
        if !trusted(peer) {
            return Ok(peer);
        }
        let parse = |s: &str| s.trim().parse::<IpAddr>().ok();
        let values = headers
            .get_all(&self.client_header)
            .iter()
            .filter_map(|v| v.to_str().ok());
        let hops: Vec<Option<IpAddr>> = match self.client_header.as_str() {
            "x-forwarded-for" => values.flat_map(|v| v.split(',')).map(parse).collect(),
            // RFC 7239: each element's `for=`.
            "forwarded" => botscope_policy::forwarded::hops(values).collect(),
            _ => {
                // One address, written by the proxy: one value, or nothing
                // believed (two values mean a client's own got through).
                let mut values = headers.get_all(&self.client_header).iter();
                return match (values.next(), values.next()) {
                    (Some(v), None) => v.to_str().ok().and_then(parse).ok_or(peer),
                    _ => Err(peer),
                };
            }
        };
        // From the right, where the trusted proxies appended: the first
        // hop that is not one of them is the client. What stands left of a
        // hop that is not an address was written by someone untrusted.
        let mut client = peer;
        for hop in hops.into_iter().rev() {
            match hop {
                Some(ip) if !trusted(ip) => return Ok(ip),
                Some(ip) => client = ip,
                None => break,
            }
        }
        Err(client)
    }

    /// The signature checking, when on.
    pub fn signatures(&self) -> Option<&signature::Signatures> {
        self.signatures.as_ref()
    }

    /// Where the challenge key came from: `own`, `fleet` or `given`.
    pub fn key_source(&self) -> &'static str {
        match self.key_source.load(std::sync::atomic::Ordering::Relaxed) {
            KEY_FLEET => "fleet",
            KEY_GIVEN => "given",
            _ => "own",
        }
    }

    /// What the fleet shares, made one again with Redis (every second, and
    /// at start): the challenge key (without `--challenge-key`: the one
    /// Redis holds adopted, or this gate's put back when Redis lost it,
    /// e.g. restarted without persistence), and the revocation time (the
    /// later of Redis's and this gate's wins: a later one in Redis is
    /// adopted and kept on disk, a later one here is written back).
    pub async fn sync_with_fleet(&self) {
        let Some(shared) = &self.shared else {
            return;
        };
        if !shared.healthy() {
            return;
        }
        let source = self.key_source.load(std::sync::atomic::Ordering::Relaxed);
        if source != KEY_GIVEN {
            let mine = self.challenges.key();
            let claim = source == KEY_FLEET || self.started.elapsed() >= CLAIM_KEY_AFTER;
            if let Some(Some(k)) = shared.fleet_key(&mine, claim).await {
                if k != *mine {
                    self.challenges.set_key(&k);
                    tracing::info!("adopted the fleet's challenge key");
                }
                self.key_source
                    .store(KEY_FLEET, std::sync::atomic::Ordering::Relaxed);
            }
        }
        // The fleet's trap catches since the last read.
        let snap = self.current.load();
        if let Some(t) = snap.policy.as_ref().and_then(|p| p.traps.as_ref()) {
            let now_ms = answer::unix_now_ms();
            for _ in 0..8 {
                let from = self.traps.read_from(now_ms, t);
                let Some(read) = shared.catches_from(from).await else {
                    break;
                };
                let full = read.len() >= state::CATCHES_PER_READ;
                let new = self.traps.take_fleets(&read, t);
                if !full || new == 0 {
                    break;
                }
            }
        }
        // The canary marks served here since the last push.
        if let Some(c) = &self.canary {
            c.push(shared).await;
        }
        if let Some(theirs) = shared.revoked_before().await {
            let ours = self.challenges.revoked_before();
            if theirs > ours {
                self.challenges.revoke_before(theirs);
                self.challenges.keep_revocation();
            } else if ours > theirs {
                shared.revoke_before(ours).await;
            }
        }
    }
}

fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

async fn healthz(
    State(g): State<Arc<Gate>>,
    axum::extract::ConnectInfo(peer): axum::extract::ConnectInfo<SocketAddr>,
    req: Request,
) -> Response {
    // As /metrics: the lists, the policy and the load are the operator's.
    if let Some(refused) =
        metrics::operators_only(&g, peer, req.headers(), "healthz", metrics::Operator::Read)
    {
        return refused;
    }
    let snap = g.snapshot();
    // RFC 3339, as every time the gate shows.
    let loaded = jiff::Timestamp::try_from(snap.loaded)
        .map(|t| format!("{t:.0}"))
        .unwrap_or_default();
    let body = serde_json::json!({
        "layout": snap.lists.layout,
        "entries": snap.lists.total(),
        "lists": snap.lists.counts,
        "robots": snap.robots.keys().collect::<Vec<_>>(),
        "loaded": loaded,
        "reloads": g.reloads.load(std::sync::atomic::Ordering::Relaxed),
        "report_only": g.config.report_only,
        "last_error": *g.last_error.lock().unwrap_or_else(|p| p.into_inner()),
        "signature_agents": g.signatures.as_ref().map(signature::Signatures::stats),
        "policy": g.config.policy.as_ref().map(|p| serde_json::json!({
            "file": p.display().to_string(),
            "rules": snap.policy.as_ref().map_or(0, |p| p.rules.len()),
            "warnings": snap.policy_warnings,
        })),
        "identities": g.identities.as_ref().map(|i| serde_json::json!({
            "held": i.held(),
            "lookups_in_flight": i.in_flight(),
            "lookups_started": i.stats.started.load(std::sync::atomic::Ordering::Relaxed),
            "lookups_busy": i.stats.busy.load(std::sync::atomic::Ordering::Relaxed),
            "lookups_answered": i.stats.answered.load(std::sync::atomic::Ordering::Relaxed),
            "lookups_failed": i.stats.failed.load(std::sync::atomic::Ordering::Relaxed),
        })),
        "rate_keys": g.rates.len(),
        "state": match &g.shared {
            None => serde_json::json!({"kind": "memory"}),
            Some(s) => serde_json::json!({
                "kind": "redis",
                "url": s.url(),
                "shared": s.healthy(),
                "errors": s.stats.errors.load(std::sync::atomic::Ordering::Relaxed),
                "malformed": s.stats.malformed.load(std::sync::atomic::Ordering::Relaxed),
                "fallbacks": s.stats.fallbacks.load(std::sync::atomic::Ordering::Relaxed),
                "recoveries": s.stats.recoveries.load(std::sync::atomic::Ordering::Relaxed),
                "shared_rates": s.stats.shared_rates.load(std::sync::atomic::Ordering::Relaxed),
                "shared_evidence": s.stats.shared_evidence.load(std::sync::atomic::Ordering::Relaxed),
                "last_error": s.last_error(),
            }),
        },
        "passes_revoked_before": g.challenges.revoked_before(),
        "challenge_key": g.key_source(),
        "upstream": g.upstream.as_ref().map(|u| serde_json::json!({
            "url": u.url().as_str(),
            "answered": u.stats.answered.load(std::sync::atomic::Ordering::Relaxed),
            "unreachable": u.stats.unreachable.load(std::sync::atomic::Ordering::Relaxed),
            "timed_out": u.stats.timed_out.load(std::sync::atomic::Ordering::Relaxed),
            "too_large": u.stats.too_large.load(std::sync::atomic::Ordering::Relaxed),
            "upgraded": u.stats.upgraded.load(std::sync::atomic::Ordering::Relaxed),
            "tunnels": u.tunnels(),
        })),
        "lists_refresh": g.config.refresh.as_ref().map(|_| {
            g.refreshed.lock().unwrap_or_else(|p| p.into_inner()).clone()
        }),
        "decision_log": g.decision_log.as_ref().map(|l| serde_json::json!({
            "written": l.written.load(std::sync::atomic::Ordering::Relaxed),
            "dropped": l.dropped.load(std::sync::atomic::Ordering::Relaxed),
            "rotations": l.rotations.load(std::sync::atomic::Ordering::Relaxed),
            "failed": l.failed.load(std::sync::atomic::Ordering::Relaxed),
            "reopened": l.reopened.load(std::sync::atomic::Ordering::Relaxed),
        })),
    });
    (
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// The gate's routes.
pub fn router(g: Arc<Gate>) -> Router {
    let router = Router::new()
        .route("/robots.txt", get(answer::robots_txt))
        .route("/auth", get(answer::auth))
        .route("/forward-auth", get(answer::forward_auth))
        .route("/metrics", get(metrics::metrics))
        .route("/.botscope/challenge", get(answer::challenge_page))
        .route("/.botscope/pass", get(answer::pass))
        .route("/healthz", get(healthz))
        .route("/.botscope/healthz", get(healthz))
        .route("/.botscope/metrics", get(metrics::metrics))
        .route("/.botscope/blocklist.txt", get(metrics::blocklist))
        .route("/.botscope/canary.jsonl", get(canary::record_page))
        .route(
            "/.botscope/revoke-passes",
            axum::routing::post(answer::revoke_passes),
        );
    let router = match &g.config.terms.rsl {
        Some((path, _)) => router.route(path, get(answer::licence)),
        None => router,
    };
    router.with_state(g)
}

/// A gate bound to its address, ready to run.
pub struct Server {
    listener: tokio::net::TcpListener,
    gate: Arc<Gate>,
}

impl Server {
    /// Loads the lists and the robots files, then binds `listen`.
    pub async fn bind(config: Config, listen: SocketAddr) -> Result<Server, Error> {
        let given_key = config.challenge.as_ref().is_some_and(|c| !c.key.is_empty());
        let gate = Gate::new(config)?;
        // Without --challenge-key, a fleet signs passes with one key: the
        // one in Redis when there is one (else claimed a little later,
        // so that running gates put the fleet's back first).
        // The fleet's revocations too, before the first request.
        if gate.shared.is_some() {
            gate.sync_with_fleet().await;
            if !given_key && gate.key_source() != "fleet" {
                tracing::warn!(
                    "the shared state holds no challenge key yet, or does not answer: this gate signs passes with a key of its own until it adopts the fleet's (every second it asks)"
                );
            }
        }
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .map_err(|source| Error::Listen {
                addr: listen,
                source,
            })?;
        Ok(Server { listener, gate })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.listener
            .local_addr()
            .unwrap_or_else(|_| SocketAddr::from(([127, 0, 0, 1], 0)))
    }

    /// The gate's state.
    pub fn gate(&self) -> &Arc<Gate> {
        &self.gate
    }

    /// Serves until `shutdown` completes, reloading on change (polled)
    /// and on SIGHUP.
    pub async fn run(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), Error> {
        let g = self.gate.clone();
        let poll = g.config.poll.max(Duration::from_millis(50));
        let watcher = tokio::spawn(async move {
            #[cfg(unix)]
            let mut hup =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()).ok();
            let mut tick = tokio::time::interval(poll);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                #[cfg(unix)]
                let hangup = async {
                    match hup.as_mut() {
                        Some(s) => {
                            s.recv().await;
                        }
                        None => std::future::pending::<()>().await,
                    }
                };
                #[cfg(not(unix))]
                let hangup = std::future::pending::<()>();
                let g = g.clone();
                tokio::select! {
                    _ = tick.tick() => {
                        let _ = tokio::task::spawn_blocking(move || g.reload_if_changed()).await;
                    }
                    () = hangup => {
                        tracing::info!("SIGHUP: reloading, and opening the decision log anew");
                        if let Some(l) = &g.decision_log {
                            l.reopen();
                        }
                        if let Some(l) = &g.events {
                            l.0.reopen();
                        }
                        let _ = tokio::task::spawn_blocking(move || g.reload()).await;
                    }
                }
            }
        });
        // Connections within bounds (the front proxies it trusts are not
        // counted per client: nginx's keep-alive pool is one peer); answers
        // are one small segment each, sent at once (no delay).
        let trusted = self.gate.config.trust_proxy.clone();
        let limits = botscope_http::server::ConnectionLimits {
            exempt: Arc::new(move |ip| trusted.iter().any(|r| r.contains(ip))),
            ..self.gate.config.connections.clone()
        };
        let state_task = self.gate.shared.clone().map(|shared| {
            let g = self.gate.clone();
            tokio::spawn(async move {
                let mut tick = tokio::time::interval(Duration::from_secs(1));
                tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                loop {
                    tick.tick().await;
                    shared.check().await;
                    g.sync_with_fleet().await;
                }
            })
        });
        let refresher = self
            .gate
            .config
            .refresh
            .clone()
            .filter(|_| self.gate.identities.is_some())
            .map(|cfg| tokio::spawn(refresh_lists(self.gate.clone(), cfg)));
        let gate = self.gate.clone();
        let app = router(self.gate);
        let service = move |peer: SocketAddr, mut req: Request<hyper::body::Incoming>| {
            // The front server's question, every request of the site: answered
            // straight (`/auth`, `/forward-auth`, a GET), the rest through
            // the router. In front of an application, every request but the
            // gate's own paths is decided and passed on.
            // The gate's own paths however spelled (`/%72obots.txt`):
            // routed as judged.
            let standalone = match &gate.upstream {
                None => false,
                Some(_) => {
                    let sent = req.uri().path_and_query().map_or("/", |p| p.as_str());
                    let normal = botscope_policy::normalize_target(sent);
                    let path = normal.split('?').next().unwrap_or("/");
                    let own = proxy::is_gate_path(path) || gate.config.terms.serves(path);
                    if own
                        && normal != sent
                        && let Ok(uri) = normal.parse::<axum::http::Uri>()
                    {
                        *req.uri_mut() = uri;
                    }
                    !own
                }
            };
            let front = match (req.method(), req.uri().path()) {
                _ if gate.upstream.is_some() => None,
                (&axum::http::Method::GET, "/auth") => Some(answer::Front::AuthRequest),
                (&axum::http::Method::GET, "/forward-auth") => Some(answer::Front::Forward),
                _ => None,
            };
            let (app, gate) = (app.clone(), gate.clone());
            async move {
                if standalone && let Some(up) = &gate.upstream {
                    return Ok(proxy::handle(&gate, up, peer, req).await);
                }
                if let Some(front) = front {
                    return Ok::<_, std::convert::Infallible>(
                        answer::answer(&gate, peer, req.headers(), front).await,
                    );
                }
                req.extensions_mut()
                    .insert(axum::extract::ConnectInfo(peer));
                use tower::ServiceExt;
                app.oneshot(req.map(axum::body::Body::new)).await
            }
        };
        let r = botscope_http::server::serve(self.listener, service, limits, shutdown)
            .await
            .map_err(Error::Serve);
        watcher.abort();
        if let Some(t) = refresher {
            t.abort();
        }
        if let Some(t) = state_task {
            t.abort();
        }
        r
    }
}

/// Refreshes the operators' lists every `cfg.every` (the first time soon
/// after start), swapping the new registry in when a list changed.
async fn refresh_lists(g: Arc<Gate>, cfg: refresh::RefreshConfig) {
    let Some(ids) = g.identities.as_ref() else {
        return;
    };
    let every = cfg.every.max(Duration::from_millis(100));
    let first = refresh::FIRST_AFTER.min(every);
    let next_at = |after: Duration| {
        jiff::Timestamp::now()
            .checked_add(jiff::SignedDuration::try_from(after).unwrap_or_default())
            .map(|t| format!("{t:.0}"))
            .ok()
    };
    g.refreshed.lock().unwrap_or_else(|p| p.into_inner()).next = next_at(first);
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + first, every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let (registry, mut state) = refresh::refresh(&ids.registry(), &cfg).await;
        state.next = next_at(every);
        for p in &state.problems {
            tracing::warn!("lists refresh: {p}; the list before is kept");
        }
        tracing::info!(applied = state.applied, "lists refreshed");
        if state.applied > 0 {
            ids.set_registry(Arc::new(registry));
        }
        *g.refreshed.lock().unwrap_or_else(|p| p.into_inner()) = state;
    }
}

/// 32 random bytes: a challenge key for this process.
fn random_key() -> Result<Vec<u8>, Error> {
    use ring::rand::SecureRandom;
    let mut key = vec![0u8; 32];
    ring::rand::SystemRandom::new()
        .fill(&mut key)
        .map_err(|_| Error::Random)?;
    Ok(key)
}

/// The header a trusted proxy writes the client's address in, unless
/// `--client-header` says another.
pub const DEFAULT_CLIENT_HEADER: &str = "x-real-ip";

/// The default `--deny`: spoofers and scanners.
pub fn default_deny() -> Vec<Category> {
    vec![Category::Suspect]
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn the_client_is_the_rightmost_untrusted_hop() {
        let d = tempfile::tempdir().expect("tmp");
        let (lists, robots) = (d.path().join("lists"), d.path().join("robots"));
        for dir in [&lists, &robots] {
            std::fs::create_dir(dir).expect("dir");
        }
        std::fs::write(lists.join("other-bots.txt"), "192.0.2.1\n").expect("w");
        std::fs::write(robots.join("default.txt"), "User-agent: *\n").expect("w");
        let g = Gate::new(Config {
            lists: Some(lists),
            trust_proxy: vec![IpRange::parse_any("10.0.0.0/8").expect("cidr")],
            ..Config::new(robots)
        })
        .expect("gate");
        let ip = |s: &str| s.parse::<IpAddr>().expect("ip");
        let with = |name: &'static str, value: &str| {
            let mut h = HeaderMap::new();
            h.insert(name, HeaderValue::from_str(value).expect("value"));
            h
        };
        let proxy = ip("10.0.0.1");
        // X-Real-IP, the default: what the proxy wrote, and nothing else.
        assert_eq!(
            g.client(proxy, &with("x-real-ip", "198.51.100.9")),
            ip("198.51.100.9")
        );
        assert_eq!(
            g.client(proxy, &with("x-forwarded-for", "192.0.2.66")),
            proxy
        );
        let mut two = with("x-real-ip", "192.0.2.66");
        two.append("x-real-ip", HeaderValue::from_static("198.51.100.9"));
        assert_eq!(g.client(proxy, &two), proxy, "two values: none believed");
        assert_eq!(g.client(proxy, &with("x-real-ip", "junk")), proxy);
        let g = Gate::new(Config {
            client_header: "x-forwarded-for".into(),
            ..g.config.clone()
        })
        .expect("gate");
        let xff = |v: &str| g.client(proxy, &with("x-forwarded-for", v));
        assert_eq!(xff("198.51.100.7"), ip("198.51.100.7"));
        // A claim left of the client, and proxies right of it.
        assert_eq!(
            xff("192.0.2.66, 198.51.100.7, 10.0.0.2"),
            ip("198.51.100.7")
        );
        // Junk left of the client cannot hide it.
        assert_eq!(
            xff("192.0.2.66, not-an-ip, 198.51.100.7"),
            ip("198.51.100.7")
        );
        // Junk right after the proxies: the client is unknown, the last
        // proxy stands for it, never the claim left of the junk.
        assert_eq!(xff("192.0.2.66, junk, 10.0.0.2"), ip("10.0.0.2"));
        assert_eq!(xff("junk"), proxy);
        // X-Real-IP is not read when X-Forwarded-For is the header.
        assert_eq!(g.client(proxy, &with("x-real-ip", "198.51.100.9")), proxy);
        // RFC 7239's Forwarded: the rightmost `for=` that is not a
        // trusted proxy, quoted IPv6 and ports read.
        let g = Gate::new(Config {
            client_header: "forwarded".into(),
            ..g.config.clone()
        })
        .expect("gate");
        let fwd = |v: &str| g.client(proxy, &with("forwarded", v));
        assert_eq!(
            fwd("for=192.0.2.66, for=\"[2001:db8::7]:4711\";proto=https"),
            ip("2001:db8::7")
        );
        assert_eq!(
            fwd("for=192.0.2.66, for=\"198.51.100.7:80\", for=10.0.0.2"),
            ip("198.51.100.7")
        );
        assert_eq!(
            fwd("for=192.0.2.66, for=unknown, for=10.0.0.2"),
            ip("10.0.0.2")
        );
        assert_eq!(fwd("proto=https"), proxy);
        assert_eq!(
            g.client(proxy, &with("x-forwarded-for", "198.51.100.7")),
            proxy
        );
        // From an untrusted peer the headers mean nothing.
        let peer = ip("203.0.113.5");
        assert_eq!(g.client(peer, &with("x-real-ip", "192.0.2.66")), peer);
        assert_eq!(g.client(peer, &with("x-forwarded-for", "192.0.2.66")), peer);
    }

    /// `/healthz`, `/metrics` and revoking passes are the operators':
    /// judged on the client the gate names, never on a trusted proxy
    /// standing in for an unnamed one; acting needs the token too.
    #[test]
    fn health_metrics_and_revoking_are_the_operators() {
        use metrics::Operator::{Act, Read};
        let d = tempfile::tempdir().expect("tmp");
        std::fs::write(d.path().join("default.txt"), "User-agent: *\n").expect("w");
        let g = Gate::new(Config {
            trust_proxy: vec![
                IpRange::parse_any("10.0.0.0/8").expect("cidr"),
                IpRange::parse_any("127.0.0.1/32").expect("cidr"),
            ],
            operators: vec![
                IpRange::parse_any("127.0.0.0/8").expect("cidr"),
                IpRange::parse_any("192.0.2.7/32").expect("cidr"),
            ],
            operator_token: Some(b"0123456789abcdef".to_vec()),
            ..Config::new(d.path().to_path_buf())
        })
        .expect("gate");
        let at = |s: &str| s.parse::<SocketAddr>().expect("addr");
        let h = |pairs: &[(&'static str, &str)]| {
            let mut h = HeaderMap::new();
            for (k, v) in pairs {
                h.append(*k, HeaderValue::from_str(v).expect("value"));
            }
            h
        };
        let token = ("authorization", "Bearer 0123456789abcdef");
        let ok = |peer: &str, headers: &HeaderMap, need| {
            metrics::operators_only(&g, at(peer), headers, "healthz", need).is_none()
        };
        // An operator's own address, or one a trusted proxy names.
        assert!(ok("[::ffff:127.0.0.2]:1", &h(&[]), Read));
        assert!(ok("192.0.2.7:1", &h(&[]), Read));
        assert!(ok("10.1.2.3:1", &h(&[("x-real-ip", "192.0.2.7")]), Read));
        assert!(ok("127.0.0.1:1", &h(&[("x-real-ip", "127.0.0.1")]), Read));
        // A stranger, directly or named by a trusted proxy.
        assert!(!ok("192.0.2.1:1", &h(&[]), Read));
        assert!(!ok("192.0.2.1:1", &h(&[token]), Read));
        assert!(!ok(
            "10.1.2.3:1",
            &h(&[("x-real-ip", "198.51.100.1")]),
            Read
        ));
        assert!(!ok(
            "127.0.0.1:1",
            &h(&[("x-real-ip", "198.51.100.1"), token]),
            Read
        ));
        // A trusted proxy that names no one (missing, doubled, junk) is
        // no operator, even on loopback; the token lets it read.
        for unnamed in [
            h(&[]),
            h(&[("x-real-ip", "127.0.0.1"), ("x-real-ip", "127.0.0.1")]),
            h(&[("x-real-ip", "junk")]),
        ] {
            assert!(!ok("127.0.0.1:1", &unnamed, Read), "{unnamed:?}");
            assert!(!ok("10.1.2.3:1", &unnamed, Read), "{unnamed:?}");
        }
        assert!(ok("127.0.0.1:1", &h(&[token]), Read));
        assert!(!ok(
            "127.0.0.1:1",
            &h(&[("authorization", "Bearer 0123456789abcdeX")]),
            Read
        ));
        // Acting: an operator's address and the token.
        assert!(ok("192.0.2.7:1", &h(&[token]), Act));
        assert!(!ok("192.0.2.7:1", &h(&[]), Act));
        assert!(!ok("127.0.0.1:1", &h(&[token]), Act), "unnamed");
        assert!(ok(
            "127.0.0.1:1",
            &h(&[("x-real-ip", "127.0.0.1"), token]),
            Act
        ));
        // Without a token file, nobody revokes.
        let g = Gate::new(Config {
            operator_token: None,
            ..g.config.clone()
        })
        .expect("gate");
        let r = metrics::operators_only(&g, at("192.0.2.7:1"), &h(&[token]), "revoke-passes", Act)
            .expect("refused");
        assert_eq!(r.status(), axum::http::StatusCode::FORBIDDEN);
    }
}
