//! Harvest robots.txt at scale, politely.
//!
//! For each host: resolve through a checked pool of nameservers
//! ([`botscope_dns::Pool`]); refuse addresses that are not public unicast
//! (unless allowed, for tests); wait for the address's turn (one
//! connection at a time per address, and a minimum gap between hits, since
//! many hosts share an address); `GET https://HOST/robots.txt`, falling
//! back to `http://` when https cannot connect; follow redirects hop by
//! hop (each new host resolved and checked the same way); read at most the
//! size cap, decompressing gzip; and let the robots.txt engine's fetch
//! policy decide. Every attempt comes back as a [`botscope_store::Attempt`]
//! with its error class; nothing a server does stops the run, and every
//! host costs a bounded time (the total timeout) and memory (the cap).
//!
//! One site's robots.txt, fetched as the harvest fetches it (here from a
//! server on loopback, which the address guard refuses unless allowed):
//!
//! ```
//! use std::collections::HashMap;
//! use std::time::Duration;
//!
//! use botscope_harvest::{Config, fetch_robots_txt};
//!
//! let body = b"User-agent: *\nDisallow: /private\n".to_vec();
//! let site = botscope_testkit::ipdb::FileServer::start(HashMap::from([(
//!     "/robots.txt".to_owned(),
//!     body.clone(),
//! )]));
//! let cfg = Config {
//!     allow_private: true,
//!     ..Config::default()
//! };
//! let url = format!("{}/robots.txt", site.url());
//! // An address needs no nameserver; a name would be resolved through this one.
//! let dns = vec!["127.0.0.1:53".parse()?];
//! let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
//! let fetched = runtime.block_on(fetch_robots_txt(&url, cfg, dns, Duration::from_secs(5)))?;
//! assert_eq!(fetched.attempt.status, Some(200));
//! assert_eq!(fetched.attempt.outcome, "parse");
//! assert_eq!(fetched.robots_txt, body);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

// A library speaks through its return values and the caller's writer,
// never by printing.
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod one;
pub mod polite;
mod report;
mod run;
mod turns;
mod worker;

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use botscope_dns::{Lookup, Pool};
use botscope_robotstxt::{FetchAction, FetchPolicy, FetchResponse, decide_fetch};
use botscope_store::{Attempt, Headers, Hop, Previous};

pub use botscope_http::{
    DEFAULT_USER_AGENT, Exchange, FetchError, Roots, Trust, certificates, not_public,
};
pub use botscope_text::host_of;
// Host lists are read from strangers as text is: botscope-text reads them
// (the fuzz targets and the tools that only read a list need no network).
pub use botscope_text::hosts::{HostList, MAX_LINE, read_host_list};
pub use one::{Fetched, dns_pool, fetch_robots_txt};
pub use polite::{
    Crawler, Decision, DishonestUserAgent, FetchAll, Pay, PoliteConfig, RobotsLine, Signer,
    honest_user_agent,
};
pub use report::{FetchRecord, Redirect};
pub use run::{NoProgress, Progress, RunConfig, Selection, Summary, Tally, backoff, run, select};
pub use turns::{AddressHolds, KEEP, Owner, Sharing, YIELD, owner};
pub use worker::{WorkerConfig, WorkerSummary, work};

/// What stops a harvest (a host's failure never does: it is recorded as
/// the attempt's error class, [`FetchError`]).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The harvester could not be set up.
    #[error("{0}")]
    Setup(String),
    /// TLS could not be set up (the trust store, a certificate to trust).
    #[error(transparent)]
    Http(#[from] botscope_http::Error),
    /// The host list names no host.
    #[error("no host names in {0}")]
    NoHosts(String),
    /// `resume` without an unfinished run over this list.
    #[error("no unfinished run over this host list to resume")]
    NothingToResume,
    /// The store failed.
    #[error(transparent)]
    Store(#[from] botscope_store::StoreError),
    /// DNS could not be set up.
    #[error(transparent)]
    Dns(#[from] botscope_dns::Error),
    /// The writer stopped.
    #[error("the store writer stopped")]
    Writer,
    /// A single fetch the address guard refused (a loopback or private
    /// answer without `allow_private`): no site was asked at all.
    #[error("{0}")]
    Refused(String),
}

/// What became of a host given to [`Harvester::fetch_or_forward`].
#[derive(Debug, Clone)]
pub enum Fetch {
    /// Fetched (or failed): the attempt.
    Done(Box<Attempt>),
    /// Not fetched: another process holds its address.
    Forward {
        /// The host.
        host: String,
        /// The process that holds the address.
        holder: String,
        /// The address the host resolved to.
        address: IpAddr,
    },
}

/// The `Accept` header of a robots.txt request.
pub(crate) const ROBOTS_ACCEPT: &str = "text/plain, */*;q=0.1";

/// How a harvest behaves.
#[derive(Debug, Clone)]
pub struct Config {
    /// Sent with every request.
    pub user_agent: String,
    /// Time to connect (each address, each hop).
    pub connect_timeout: Duration,
    /// Time for the whole attempt, redirects included.
    pub total_timeout: Duration,
    /// Least time between two requests to the same address.
    pub ip_gap: Duration,
    /// Connect to loopback and private addresses (tests only).
    pub allow_private: bool,
    /// Port for `http://` URLs without one (80).
    pub http_port: u16,
    /// Port for `https://` URLs without one (443).
    pub https_port: u16,
    /// The fetch policy (redirect hops, size cap, status reading).
    pub policy: FetchPolicy,
    /// What HTTPS trusts: the system's store by default (as curl), or the
    /// bundled roots, and certificates added to them.
    pub trust: Trust,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            user_agent: DEFAULT_USER_AGENT.to_owned(),
            connect_timeout: Duration::from_secs(10),
            total_timeout: Duration::from_secs(30),
            ip_gap: Duration::from_secs(1),
            allow_private: false,
            http_port: 80,
            https_port: 443,
            policy: FetchPolicy::google(),
            trust: Trust::default(),
        }
    }
}

/// Fetches robots.txt files.
pub struct Harvester<L> {
    cfg: Config,
    dns: Pool<L>,
    tls: botscope_http::TlsConnector,
    turns: turns::Turns,
    /// Answers resolved ahead of the fetch ([`Harvester::resolve_ahead`]),
    /// taken when the host is fetched.
    ahead: Mutex<HashMap<String, botscope_dns::Timed<IpAddr>>>,
}

fn unix(t: SystemTime) -> i64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

impl<L: Lookup> Harvester<L> {
    /// A harvester over a checked DNS pool.
    pub fn new(cfg: Config, dns: Pool<L>) -> Result<Self, Error> {
        let turns = turns::Turns::new(cfg.ip_gap);
        Self::with_turns(cfg, dns, turns)
    }

    /// A harvester whose per-address turns are shared with other
    /// processes (the frontier's workers).
    pub fn shared(cfg: Config, dns: Pool<L>, sharing: Sharing) -> Result<Self, Error> {
        let turns = turns::Turns::shared(cfg.ip_gap, sharing);
        Self::with_turns(cfg, dns, turns)
    }

    fn with_turns(cfg: Config, dns: Pool<L>, turns: turns::Turns) -> Result<Self, Error> {
        let tls = cfg.trust.connector()?;
        Ok(Harvester {
            turns,
            cfg,
            dns,
            tls,
            ahead: Mutex::new(HashMap::new()),
        })
    }

    /// Gives back the shared addresses idle here, or wanted by another
    /// process; nothing without sharing.
    pub async fn sweep(&self) {
        self.turns.sweep().await;
    }

    /// Gives back every shared address held and not in use.
    pub async fn give_back_addresses(&self) {
        self.turns.give_back_all().await;
    }

    /// The DNS pool (for its counters).
    pub fn dns(&self) -> &Pool<L> {
        &self.dns
    }

    /// Takes `ip` as `host`'s address for its next fetch (another process
    /// resolved it and handed the host here).
    pub fn known_address(&self, host: &str, ip: IpAddr) {
        self.ahead.lock().unwrap_or_else(|e| e.into_inner()).insert(
            host.to_owned(),
            botscope_dns::Timed {
                answer: Ok(vec![ip]),
                ttl: Duration::ZERO,
            },
        );
    }

    /// Resolves `host` now, for a fetch soon: DNS runs ahead of fetching.
    pub async fn resolve_ahead(&self, host: &str) {
        if host.parse::<IpAddr>().is_ok() {
            return;
        }
        let t = self.dns.resolve(host).await;
        self.ahead
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(host.to_owned(), t);
    }

    /// Resolves `host` and picks the address to connect to.
    async fn address(&self, host: &str) -> Result<IpAddr, FetchError> {
        if let Ok(ip) = host.trim_matches(['[', ']']).parse::<IpAddr>() {
            return self.check(ip);
        }
        let early = self
            .ahead
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(host);
        let t = match early {
            Some(t) => t,
            None => self.dns.resolve(host).await,
        };
        let addrs = t
            .answer
            .map_err(|f| FetchError::Dns(format!("{host}: {f}")))?;
        if addrs.is_empty() {
            return Err(FetchError::Dns(format!(
                "{host}: no such host (no A or AAAA records)"
            )));
        }
        // IPv4 first (a harvest's network may not route IPv6); the first
        // acceptable address.
        let mut sorted = addrs;
        sorted.sort_by_key(|a| a.is_ipv6());
        let mut last = None;
        for a in sorted {
            match self.check(a) {
                Ok(a) => return Ok(a),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| FetchError::Dns(format!("{host}: no address"))))
    }

    fn check(&self, ip: IpAddr) -> Result<IpAddr, FetchError> {
        match not_public(ip) {
            Some(why) if !self.cfg.allow_private => Err(FetchError::Refused(format!(
                "{ip} is a {why} address: not connected to (--allow-private connects to \
                 private and loopback addresses)"
            ))),
            _ => Ok(ip),
        }
    }

    /// One exchange with `url` at the address its host resolves to, in the
    /// address's turn. The attempt's clock (`deadline`) starts at its first
    /// turn: waiting behind other hosts on the same address is not the
    /// site's time. With `fallback`, https that cannot connect is retried
    /// as http in the same turn; the URL actually asked is returned.
    /// The turn is left in `slot`: the next hop keeps it when it asks the
    /// same address, and the caller ends it.
    async fn exchange(
        &self,
        url: &url::Url,
        prev: Option<&Previous>,
        deadline: &mut Option<Instant>,
        fallback: bool,
        slot: &mut Option<turns::Turn>,
        give_up: bool,
    ) -> Result<(Option<IpAddr>, url::Url, Result<Exchange, FetchError>), (String, IpAddr)> {
        let host = url.host_str().unwrap_or_default().to_owned();
        let ip = match self.address(&host).await {
            Ok(ip) => ip,
            Err(e) => return Ok((None, url.clone(), Err(e))),
        };
        let held = slot.take();
        let wait = async move {
            match held {
                Some(mut t) if t.ip() == ip => {
                    t.again().await;
                    Ok(t)
                }
                Some(t) => {
                    t.end().await;
                    Ok(self.turns.take(ip).await)
                }
                None => self.turns.take_or_busy(ip, give_up).await,
            }
        };
        // Later hops wait within the attempt's time.
        let turn = match *deadline {
            None => wait.await.map_err(|holder| (holder, ip))?,
            Some(d) => match tokio::time::timeout_at(d.into(), wait).await {
                Ok(g) => g.map_err(|holder| (holder, ip))?,
                Err(_) => {
                    return Ok((
                        Some(ip),
                        url.clone(),
                        Err(FetchError::Timeout("waiting for the address's turn".into())),
                    ));
                }
            },
        };
        let deadline = *deadline.get_or_insert_with(|| Instant::now() + self.cfg.total_timeout);
        let mut url = url.clone();
        let mut r = self.one(&url, &host, ip, prev, deadline).await;
        // https cannot connect: http, in the same turn.
        if fallback
            && url.scheme() == "https"
            && r.as_ref().err().is_some_and(FetchError::cannot_connect)
        {
            let _ = url.set_scheme("http");
            r = self.one(&url, &host, ip, prev, deadline).await;
        }
        *slot = Some(turn);
        Ok((Some(ip), url, r))
    }

    async fn one(
        &self,
        url: &url::Url,
        host: &str,
        ip: IpAddr,
        prev: Option<&Previous>,
        deadline: Instant,
    ) -> Result<Exchange, FetchError> {
        let port = url.port().unwrap_or(if url.scheme() == "https" {
            self.cfg.https_port
        } else {
            self.cfg.http_port
        });
        // A conditional request only when a good copy is kept to fall back on.
        let copy = prev.filter(|p| p.has_copy);
        botscope_http::exchange(
            botscope_http::Request {
                url,
                host,
                ip,
                port,
                user_agent: &self.cfg.user_agent,
                accept: ROBOTS_ACCEPT,
                if_none_match: copy.and_then(|p| p.etag.as_deref()),
                if_modified_since: copy.and_then(|p| p.last_modified.as_deref()),
                extra: &[],
                cap: self.cfg.policy.size_cap,
                connect_timeout: self.cfg.connect_timeout,
                deadline,
            },
            &self.tls,
        )
        .await
    }

    /// Fetches `host`'s robots.txt and decides what it means.
    pub async fn fetch(&self, host: &str, rank: Option<u64>, prev: Option<&Previous>) -> Attempt {
        // Without giving up, the turn always comes.
        loop {
            if let Fetch::Done(a) = self.fetch_or_forward(host, rank, prev, false).await {
                return *a;
            }
        }
    }

    /// [`Harvester::fetch`]; with `forward` and shared addresses, when
    /// another process holds the host's address at the first ask, the
    /// host is not fetched here but is to be handed to that process.
    pub async fn fetch_or_forward(
        &self,
        host: &str,
        rank: Option<u64>,
        prev: Option<&Previous>,
        forward: bool,
    ) -> Fetch {
        let mut slot = None;
        let r = self.fetch_in(host, rank, prev, &mut slot, forward).await;
        if let Some(turn) = slot {
            turn.end().await;
        }
        match r {
            Ok(a) => Fetch::Done(Box::new(a)),
            Err((holder, address)) => Fetch::Forward {
                host: host.to_owned(),
                holder,
                address,
            },
        }
    }

    async fn fetch_in(
        &self,
        host: &str,
        rank: Option<u64>,
        prev: Option<&Previous>,
        slot: &mut Option<turns::Turn>,
        forward: bool,
    ) -> Result<Attempt, (String, IpAddr)> {
        let started = Instant::now();
        let now = SystemTime::now();
        let mut deadline: Option<Instant> = None;
        let mut attempt = Attempt {
            host: host.to_owned(),
            rank,
            time: unix(now),
            ..Attempt::default()
        };
        let mut url = match url::Url::parse(&format!("https://{host}/robots.txt")) {
            Ok(u) if u.host_str().is_some() => u,
            _ => {
                attempt.url = format!("https://{host}/robots.txt");
                return Ok(self.failed(
                    attempt,
                    FetchError::Dns(format!("{host:?} is not a host name")),
                    started,
                    prev,
                    now,
                ));
            }
        };
        loop {
            let first_hop = attempt.redirects.is_empty();
            let (ip, used, r) = self
                .exchange(
                    &url,
                    prev,
                    &mut deadline,
                    first_hop,
                    slot,
                    forward && first_hop,
                )
                .await?;
            url = used;
            attempt.address = ip.map(|i| i.to_string());
            attempt.url = url.to_string();
            let x = match r {
                Ok(x) => x,
                Err(e) => return Ok(self.failed(attempt, e, started, prev, now)),
            };
            let headers: Vec<(&str, &str)> = x
                .headers
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect();
            let decision = self.decide(
                Some(x.status),
                &headers,
                x.body_len,
                attempt.redirects.len(),
                prev,
                now,
            );
            if let FetchAction::FollowRedirect { location } = &decision.action {
                attempt.redirects.push(Hop {
                    url: url.to_string(),
                    status: x.status,
                });
                match url.join(location) {
                    Ok(next)
                        if matches!(next.scheme(), "http" | "https")
                            && next.host_str().is_some() =>
                    {
                        url = next;
                        continue;
                    }
                    _ => {
                        return Ok(self.failed(
                            attempt,
                            FetchError::Protocol(format!(
                                "a redirect to {location:?}, not an http(s) URL"
                            )),
                            started,
                            prev,
                            now,
                        ));
                    }
                }
            }
            attempt.status = Some(x.status);
            attempt.headers =
                Headers::from_fn(|k| botscope_robotstxt::header(&headers, k).map(str::to_owned));
            attempt.bytes = x.body.len() as u64;
            attempt.truncated = x.truncated;
            if x.truncated {
                attempt.error_class = Some("too-large".into());
                attempt.error = Some(format!(
                    "the body is over {} bytes; its start is kept",
                    self.cfg.policy.size_cap
                ));
            }
            attempt.outcome = decision.action.as_str().to_owned();
            attempt.reason = decision.reason.to_owned();
            attempt.expires_in = Some(decision.expires_in.as_secs());
            if matches!(decision.action, FetchAction::Parse { .. }) {
                attempt.body = Some(x.body);
            }
            attempt.duration_ms = started.elapsed().as_millis() as u64;
            return Ok(attempt);
        }
    }

    /// The fetch policy's decision, with what the store knows of the site.
    fn decide(
        &self,
        status: Option<u16>,
        headers: &[(&str, &str)],
        body_len: u64,
        hops: usize,
        prev: Option<&Previous>,
        now: SystemTime,
    ) -> botscope_robotstxt::FetchDecision {
        decide_fetch(
            &self.cfg.policy,
            &FetchResponse {
                status,
                headers,
                redirect_hops: u8::try_from(hops).unwrap_or(u8::MAX),
                body_len,
                unreachable_for: unreachable_for(prev, now),
                has_cached_copy: prev.is_some_and(|p| p.has_copy),
                now,
            },
        )
    }

    fn failed(
        &self,
        mut attempt: Attempt,
        e: FetchError,
        started: Instant,
        prev: Option<&Previous>,
        now: SystemTime,
    ) -> Attempt {
        let decision = self.decide(None, &[], 0, attempt.redirects.len(), prev, now);
        attempt.error_class = Some(e.class().to_owned());
        attempt.error = Some(e.to_string());
        attempt.outcome = decision.action.as_str().to_owned();
        attempt.reason = decision.reason.to_owned();
        attempt.expires_in = Some(decision.expires_in.as_secs());
        attempt.duration_ms = started.elapsed().as_millis() as u64;
        attempt
    }
}

/// How long the site has been unreachable, counting this attempt.
fn unreachable_for(prev: Option<&Previous>, now: SystemTime) -> Duration {
    prev.and_then(|p| p.unreachable_since)
        .map_or(Duration::ZERO, |t| {
            Duration::from_secs((unix(now) - t).max(0) as u64)
        })
}
