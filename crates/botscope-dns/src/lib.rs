//! The only crate of botscope that speaks DNS. It gathers the evidence for
//! forward-confirmed reverse DNS (PTR names of an address, then each name's
//! A/AAAA records) through `hickory-resolver`, behind the [`Lookup`] trait
//! so that the logic can be tested against a fake; keeps positive and
//! negative answers for their TTL in a cache that can be saved to disk;
//! and bounds how many lookups run at once. Whether the evidence verifies a
//! crawler is decided in `botscope-botid`.
//!
//! The evidence for one address, through a [`Lookup`] over a zone held in
//! memory (as tests do; [`HickoryLookup`] asks real servers), then judged:
//!
//! ```
//! use std::net::IpAddr;
//! use std::time::Duration;
//!
//! use botscope_dns::{Cache, DnsFailure, Fcrdns, Lookup, Timed};
//!
//! /// One crawler's PTR record and its address record.
//! struct Zone;
//!
//! const NAME: &str = "crawl-66-249-66-1.googlebot.com";
//!
//! impl Lookup for Zone {
//!     async fn reverse(&self, ip: IpAddr) -> Timed<String> {
//!         let names = if ip == IpAddr::from([66, 249, 66, 1]) {
//!             vec![NAME.to_owned()]
//!         } else {
//!             Vec::new()
//!         };
//!         Timed { answer: Ok(names), ttl: Duration::from_secs(300) }
//!     }
//!     async fn forward(&self, name: &str) -> Timed<IpAddr> {
//!         let addresses = if name == NAME { vec![IpAddr::from([66, 249, 66, 1])] } else { Vec::new() };
//!         Timed { answer: Ok(addresses), ttl: Duration::from_secs(300) }
//!     }
//!     async fn exists(&self, _: &str) -> Result<bool, DnsFailure> {
//!         Ok(true)
//!     }
//! }
//!
//! let dns = Fcrdns::new(Zone, Cache::default(), 8);
//! let domains = vec!["googlebot.com".to_owned()];
//! let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
//! for (ip, confirmed) in [([66, 249, 66, 1], true), ([203, 0, 113, 9], false)] {
//!     let ip = IpAddr::from(ip);
//!     let evidence = runtime.block_on(dns.evidence(ip, &domains));
//!     let judged = botscope_botid::check_fcrdns(ip, &domains, &evidence);
//!     assert_eq!(matches!(judged, botscope_botid::Fcrdns::Pass { .. }), confirmed, "{ip}: {judged:?}");
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

// A library speaks through its return values and the caller's writer,
// never by printing.
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod cache;
mod evidence;
mod hickory;
mod pool;
mod servers;

use std::collections::HashMap;
use std::future::Future;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

pub use botscope_botid::{DnsAnswer, DnsFailure, FcrdnsEvidence};
pub use cache::{Cache, resolver_scope};
pub use evidence::{DnsEvidence, EvidenceConfig};
pub use hickory::HickoryLookup;
pub use pool::{MAX_IN_FLIGHT, Pool, ServerCheck, ServerUse};
pub use servers::{parse_nameserver, parse_nameservers, system_nameservers};

/// What can go wrong.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The resolver could not be set up.
    #[error("{0}")]
    Config(String),
    /// The cache file could not be read or written.
    #[error("{0}")]
    Cache(String),
    /// No nameserver of the pool is usable.
    #[error("{0}")]
    Pool(String),
    /// Not a nameserver address.
    #[error("{0:?} is not a nameserver address (IP or IP:PORT)")]
    Nameserver(String),
    /// The system's DNS configuration could not be read.
    #[error("failed to read the system's DNS configuration: {0}")]
    System(String),
}

/// An answer with how long it may be kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Timed<T> {
    /// The records (empty for NXDOMAIN or no data), or the failure.
    pub answer: DnsAnswer<T>,
    /// How long the answer holds (0 for failures: never cached).
    pub ttl: Duration,
}

/// Asks DNS. Implemented over hickory-resolver by [`HickoryLookup`], and by
/// fakes in tests.
pub trait Lookup: Send + Sync + 'static {
    /// The PTR names of `ip`.
    fn reverse(&self, ip: IpAddr) -> impl Future<Output = Timed<String>> + Send;
    /// The A and AAAA records of `name`.
    fn forward(&self, name: &str) -> impl Future<Output = Timed<IpAddr>> + Send;
    /// Whether `name` exists for these servers: `Ok(true)` for records or
    /// NODATA, `Ok(false)` for NXDOMAIN. Asked of a bot's verification
    /// domains before a negative answer counts as evidence.
    fn exists(&self, name: &str) -> impl Future<Output = Result<bool, DnsFailure>> + Send;
}

/// How long one address may take, all lookups together, unless set.
pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(10);

/// How long a zone known to exist is kept.
const ZONE_TTL: Duration = Duration::from_secs(3600);

/// Gathers FCrDNS evidence with a cache and a concurrency bound.
#[derive(Debug)]
pub struct Fcrdns<L> {
    lookup: Arc<L>,
    cache: Arc<std::sync::Mutex<Cache>>,
    concurrency: usize,
    deadline: Duration,
}

impl<L: Lookup> Fcrdns<L> {
    /// Over `lookup`, with `cache`, at most `concurrency` addresses at once,
    /// each within [`DEFAULT_DEADLINE`].
    pub fn new(lookup: L, cache: Cache, concurrency: usize) -> Self {
        Fcrdns {
            lookup: Arc::new(lookup),
            cache: Arc::new(std::sync::Mutex::new(cache)),
            concurrency: concurrency.max(1),
            deadline: DEFAULT_DEADLINE,
        }
    }

    /// Bounds each address, all its lookups together, by `deadline`: what
    /// has not answered by then is a timeout.
    #[must_use]
    pub fn with_deadline(mut self, deadline: Duration) -> Self {
        self.deadline = deadline;
        self
    }

    /// The cache, for saving.
    pub fn cache(&self) -> std::sync::MutexGuard<'_, Cache> {
        self.cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Evidence for one address checked against `domains` (any domain
    /// when empty): the reverse lookup, a forward lookup of each PTR name
    /// inside the domains (at most [`botscope_botid::MAX_PTR_NAMES`], at
    /// once), and, after a negative answer, whether the servers know the
    /// domains.
    pub async fn evidence(&self, ip: IpAddr, domains: &[String]) -> FcrdnsEvidence {
        self.evidence_timed(ip, domains).await.0
    }

    /// [`Fcrdns::evidence`], with how long it holds: the shortest lifetime
    /// of the answers it rests on (what is left of cached ones), `None`
    /// when one of them is a failure (a timeout, SERVFAIL: never kept).
    pub async fn evidence_timed(
        &self,
        ip: IpAddr,
        domains: &[String],
    ) -> (FcrdnsEvidence, Option<Duration>) {
        let job = Job {
            lookup: self.lookup.clone(),
            cache: self.cache.clone(),
            deadline: tokio::time::Instant::now() + self.deadline,
        };
        let mut life = Life::default();
        let ev = job.gather_timed(ip, domains, &mut life).await;
        (ev, life.get())
    }

    /// Evidence for many addresses, each once, at most `concurrency` at a
    /// time; each with the domains to check it against.
    pub async fn evidence_batch(
        &self,
        questions: &[(IpAddr, Vec<String>)],
    ) -> HashMap<IpAddr, FcrdnsEvidence> {
        let sem = Arc::new(tokio::sync::Semaphore::new(self.concurrency));
        let mut set = tokio::task::JoinSet::new();
        let questions =
            botscope_botid::dns_questions(questions.iter().map(|(ip, d)| (*ip, d.as_slice())));
        for (ip, domains) in questions {
            let (lookup, cache, sem) = (self.lookup.clone(), self.cache.clone(), sem.clone());
            let deadline = self.deadline;
            set.spawn(async move {
                let _permit = sem.acquire_owned().await;
                let job = Job {
                    lookup,
                    cache,
                    deadline: tokio::time::Instant::now() + deadline,
                };
                (ip, job.gather(ip, &domains).await)
            });
        }
        let mut out = HashMap::new();
        while let Some(done) = set.join_next().await {
            if let Ok((ip, ev)) = done {
                out.insert(ip, ev);
            }
        }
        out
    }
}

/// What a lookup that missed its deadline gives: a failure, never kept.
fn timed_out<T>() -> Timed<T> {
    Timed {
        answer: Err(DnsFailure::Timeout),
        ttl: Duration::ZERO,
    }
}

/// The shortest lifetime among the answers evidence rests on.
#[derive(Debug, Default)]
struct Life {
    shortest: Option<Duration>,
    failed: bool,
}

impl Life {
    fn answer<T>(&mut self, answer: &DnsAnswer<T>, ttl: Option<Duration>) {
        match (answer, ttl) {
            (Err(_), _) => self.failed = true,
            (Ok(_), Some(t)) => {
                self.shortest = Some(self.shortest.map_or(t, |s| s.min(t)));
            }
            (Ok(_), None) => {}
        }
    }

    fn get(&self) -> Option<Duration> {
        if self.failed { None } else { self.shortest }
    }
}

/// One address's lookups.
struct Job<L> {
    lookup: Arc<L>,
    cache: Arc<std::sync::Mutex<Cache>>,
    deadline: tokio::time::Instant,
}

impl<L: Lookup> Job<L> {
    fn lock(&self) -> std::sync::MutexGuard<'_, Cache> {
        self.cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    async fn gather(&self, ip: IpAddr, domains: &[String]) -> FcrdnsEvidence {
        self.gather_timed(ip, domains, &mut Life::default()).await
    }

    async fn gather_timed(
        &self,
        ip: IpAddr,
        domains: &[String],
        life: &mut Life,
    ) -> FcrdnsEvidence {
        let now = SystemTime::now();
        let ip = botscope_botid::normalize(ip);
        let cached = {
            let c = self.lock();
            c.reverse(ip, now)
                .map(|a| (a, c.reverse_left(ip, now), c.reverse_age(ip, now)))
        };
        // Negative answers are kept only once the servers proved they know
        // the domains; positive ones at once.
        let mut negative_ptr = None;
        let mut from_cache = Vec::new();
        let ptr = match cached {
            Some((a, left, age)) => {
                life.answer(&a, left);
                from_cache.push(("PTR".to_owned(), age));
                a
            }
            None => {
                let t = tokio::time::timeout_at(self.deadline, self.lookup.reverse(ip))
                    .await
                    .unwrap_or_else(|_| timed_out());
                life.answer(&t.answer, Some(t.ttl));
                if matches!(&t.answer, Ok(n) if n.is_empty()) {
                    negative_ptr = Some(t.clone());
                } else {
                    self.lock().put_reverse(ip, &t, now);
                }
                t.answer
            }
        };
        let mut ev = FcrdnsEvidence {
            ptr: Some(ptr.clone()),
            cached: from_cache,
            ..FcrdnsEvidence::default()
        };
        let mut negative_forward = Vec::new();
        if let Ok(names) = &ptr {
            let names: Vec<String> = names
                .iter()
                .map(|n| n.trim_end_matches('.').to_ascii_lowercase())
                .collect();
            let mut set = tokio::task::JoinSet::new();
            for (i, name) in botscope_botid::names_to_confirm(&names, domains)
                .into_iter()
                .enumerate()
            {
                let cached = {
                    let c = self.lock();
                    c.forward(name, now)
                        .map(|a| (a, c.forward_left(name, now), c.forward_age(name, now)))
                };
                if let Some((a, left, age)) = cached {
                    life.answer(&a, left);
                    ev.cached.push((format!("A/AAAA {name}"), age));
                    ev.forward.push((name.clone(), a));
                    continue;
                }
                let (lookup, name, deadline) = (self.lookup.clone(), name.clone(), self.deadline);
                set.spawn(async move {
                    let t = tokio::time::timeout_at(deadline, lookup.forward(&name))
                        .await
                        .unwrap_or_else(|_| timed_out());
                    (i, name, t)
                });
            }
            let mut asked = Vec::new();
            while let Some(done) = set.join_next().await {
                if let Ok(x) = done {
                    asked.push(x);
                }
            }
            asked.sort_by_key(|(i, _, _)| *i);
            for (_, name, t) in asked {
                life.answer(&t.answer, Some(t.ttl));
                if matches!(&t.answer, Ok(a) if a.is_empty()) {
                    negative_forward.push((name.clone(), t.clone()));
                } else {
                    self.lock().put_forward(&name, &t, now);
                }
                ev.forward.push((name, t.answer));
            }
        }
        let negative = matches!(&ptr, Ok(n) if n.is_empty())
            || ev
                .forward
                .iter()
                .any(|(_, a)| matches!(a, Ok(x) if x.is_empty()));
        if negative {
            for zone in botscope_botid::trust_zones(ip, domains) {
                let known = {
                    let c = self.lock();
                    c.knows_zone(&zone, now).then(|| c.zone_age(&zone, now))
                };
                let r = if let Some(age) = known {
                    ev.cached.push((format!("SOA {zone}"), age));
                    Ok(true)
                } else {
                    tokio::time::timeout_at(self.deadline, self.lookup.exists(&zone))
                        .await
                        .unwrap_or(Err(DnsFailure::Timeout))
                };
                if r.is_err() {
                    life.failed = true;
                }
                let trusted = r == Ok(true);
                ev.zones.push((zone.clone(), r));
                if trusted {
                    let mut cache = self.lock();
                    cache.put_zone(&zone, ZONE_TTL, now);
                    if let Some(t) = &negative_ptr {
                        cache.put_reverse(ip, t, now);
                    }
                    for (name, t) in &negative_forward {
                        cache.put_forward(name, t, now);
                    }
                    break;
                }
            }
        }
        ev
    }
}
