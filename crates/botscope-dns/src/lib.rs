//! The only crate of botscope that speaks DNS. It gathers the evidence for
//! forward-confirmed reverse DNS (PTR names of an address, then each name's
//! A/AAAA records) through `hickory-resolver`, behind the [`Lookup`] trait
//! so that the logic can be tested against a fake; keeps positive and
//! negative answers for their TTL in a cache that can be saved to disk;
//! and bounds how many lookups run at once. Whether the evidence verifies a
//! crawler is decided in `botscope-botid`.

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
pub use cache::Cache;
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
}

/// Gathers FCrDNS evidence with a cache and a concurrency bound.
#[derive(Debug)]
pub struct Fcrdns<L> {
    lookup: Arc<L>,
    cache: Arc<std::sync::Mutex<Cache>>,
    concurrency: usize,
}

impl<L: Lookup> Fcrdns<L> {
    /// Over `lookup`, with `cache`, at most `concurrency` addresses at once.
    pub fn new(lookup: L, cache: Cache, concurrency: usize) -> Self {
        Fcrdns {
            lookup: Arc::new(lookup),
            cache: Arc::new(std::sync::Mutex::new(cache)),
            concurrency: concurrency.max(1),
        }
    }

    /// The cache, for saving.
    pub fn cache(&self) -> std::sync::MutexGuard<'_, Cache> {
        self.cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Evidence for one address: the reverse lookup, then a forward lookup
    /// of every PTR name.
    pub async fn evidence(&self, ip: IpAddr) -> FcrdnsEvidence {
        gather(self.lookup.clone(), self.cache.clone(), ip).await
    }

    /// Evidence for many addresses, each once, at most `concurrency` at a
    /// time.
    pub async fn evidence_batch(&self, ips: &[IpAddr]) -> HashMap<IpAddr, FcrdnsEvidence> {
        let sem = Arc::new(tokio::sync::Semaphore::new(self.concurrency));
        let mut set = tokio::task::JoinSet::new();
        let mut distinct: Vec<IpAddr> = ips
            .iter()
            .map(|ip| botscope_botid::normalize(*ip))
            .collect();
        distinct.sort_unstable();
        distinct.dedup();
        for ip in distinct {
            let (lookup, cache, sem) = (self.lookup.clone(), self.cache.clone(), sem.clone());
            set.spawn(async move {
                let _permit = sem.acquire_owned().await;
                (ip, gather(lookup, cache, ip).await)
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

async fn gather<L: Lookup>(
    lookup: Arc<L>,
    cache: Arc<std::sync::Mutex<Cache>>,
    ip: IpAddr,
) -> FcrdnsEvidence {
    let now = SystemTime::now();
    let lock = || {
        cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    };
    let cached = lock().reverse(ip, now);
    let ptr = match cached {
        Some(a) => a,
        None => {
            let t = lookup.reverse(ip).await;
            lock().put_reverse(ip, &t, now);
            t.answer
        }
    };
    let mut forward = Vec::new();
    if let Ok(names) = &ptr {
        for name in names {
            let cached = lock().forward(name, now);
            let answer = match cached {
                Some(a) => a,
                None => {
                    let t = lookup.forward(name).await;
                    lock().put_forward(name, &t, now);
                    t.answer
                }
            };
            forward.push((name.clone(), answer));
        }
    }
    FcrdnsEvidence {
        ptr: Some(ptr),
        forward,
    }
}
