//! Who a client is, at request time and without waiting: the request's
//! User-Agent judged as `botscope verify` judges it, from what is in
//! memory (the registry's published addresses, the owner database, the
//! reverse-DNS answers already in). A claim those do not decide starts a
//! reverse-DNS lookup in the background (bounded in number, each with a
//! deadline, its answer kept for its TTL but at least a minute), and the
//! request is answered with what is known now: `unverifiable` until the
//! answer comes, never `spoofed` without evidence.

use std::collections::HashSet;
use std::future::Future;
use std::hash::BuildHasher;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use botscope_botid::{FcrdnsEvidence, Owners, Registry, UaClassifier, Verdict, Verification};
use botscope_policy::{BROWSER, Identity, UNREGISTERED_BOT};

use crate::recent::Recent;

/// Identities kept by default (address and User-Agent pairs).
pub const DEFAULT_IDENTITIES: usize = 262_144;
/// Shards of the identities kept (a lock each).
const SHARDS: usize = 16;
/// Reverse-DNS answers kept by default (addresses).
pub const DEFAULT_EVIDENCE: usize = 262_144;
/// How long a lookup that failed (timeout, SERVFAIL) keeps its address
/// from being asked again.
pub const FAILURE_BACKOFF: Duration = Duration::from_secs(30);
/// The least time an answer is kept, whatever its TTL: a PTR answered
/// with TTL 0 (dnsmasq's default for its own records, and any zone its
/// owner controls) decides the identity that waited for it, rather than
/// sending every request back to an empty cache and a fresh lookup.
pub const EVIDENCE_FLOOR: Duration = Duration::from_secs(60);
/// The longest an identity is kept without a DNS answer behind it (the
/// published lists and the owner database can change on a reload).
const OFFLINE_LIFE: Duration = Duration::from_secs(600);

/// Gathers FCrDNS evidence for an address against domains, with how long
/// it holds (`None`: a failure, not to be kept).
pub type Lookup = Arc<
    dyn Fn(
            IpAddr,
            Vec<String>,
        ) -> Pin<Box<dyn Future<Output = (FcrdnsEvidence, Option<Duration>)> + Send>>
        + Send
        + Sync,
>;

/// Reverse DNS for the gate.
#[derive(Clone)]
pub struct DnsConfig {
    /// How evidence is gathered ([`hickory_lookup`] for real servers).
    pub lookup: Lookup,
    /// Lookups in flight at most; past it a claim waits for a later request.
    pub concurrency: usize,
    /// Answers kept at most.
    pub evidence: usize,
}

impl std::fmt::Debug for DnsConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DnsConfig")
            .field("concurrency", &self.concurrency)
            .field("evidence", &self.evidence)
            .finish_non_exhaustive()
    }
}

/// Reverse DNS over `servers` (the system's when empty), each address's
/// lookups within four times `timeout`; answers are cached for their TTL
/// (at most `evidence` of them).
pub fn hickory_lookup(
    servers: &[SocketAddr],
    timeout: Duration,
    evidence: usize,
) -> Result<Lookup, botscope_dns::Error> {
    let lookup = botscope_dns::HickoryLookup::new(servers, timeout)?;
    let f = Arc::new(
        botscope_dns::Fcrdns::new(lookup, botscope_dns::Cache::bounded(evidence * 2), 1)
            .with_deadline(timeout.saturating_mul(4)),
    );
    Ok(Arc::new(move |ip, domains| {
        let f = f.clone();
        Box::pin(async move { f.evidence_timed(ip, &domains).await })
    }))
}

/// How the gate tells who a client is.
#[derive(Clone)]
pub struct IdentityConfig {
    /// The registry (claims, published addresses, reverse-DNS domains).
    pub registry: Arc<Registry>,
    /// Who owns an address (the IP-owner databases), when installed.
    pub owners: Arc<dyn Owners + Send + Sync>,
    /// Reverse DNS (`None`: offline, as `verify --offline`).
    pub dns: Option<DnsConfig>,
    /// Identities kept at most.
    pub cache: usize,
}

impl std::fmt::Debug for IdentityConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IdentityConfig")
            .field("bots", &self.registry.bots().len())
            .field("dns", &self.dns)
            .field("cache", &self.cache)
            .finish_non_exhaustive()
    }
}

/// What a verdict rests on, as the decision log shows it: the verdict's
/// methods, reason, host names and AS, without what the request itself
/// holds (the User-Agent) or names the log does not show. Kept per
/// identity, so kept small.
#[derive(Debug)]
pub struct Evidence {
    /// The methods that decided (`ip`, `fcrdns`, `asn`, `signature`).
    pub methods: Box<[Box<str>]>,
    /// Why, in one sentence.
    pub reason: Box<str>,
    /// Host names reverse DNS gave.
    pub hostnames: Box<[Box<str>]>,
    /// The address's AS, when an owner database knows it.
    pub asn: Option<u32>,
}

impl Evidence {
    /// The evidence of `v`.
    pub fn of(v: &Verification) -> Evidence {
        let boxed = |s: &[String]| s.iter().map(|x| Box::from(x.as_str())).collect();
        Evidence {
            methods: boxed(&v.methods),
            reason: v.reason.as_str().into(),
            hostnames: boxed(&v.hostnames),
            asn: v.owner.asn,
        }
    }
}

/// What the gate knows of a client (address and User-Agent).
#[derive(Debug)]
pub struct Known {
    /// What the verdict (as `verify` gives it) rests on.
    pub evidence: Evidence,
    /// The identity the policy reads.
    pub identity: Identity,
    /// The registered bot claimed (registry name).
    pub bot: Option<String>,
    /// The registry's category of the claimed bot, or `unregistered-bot`,
    /// or `browser`.
    pub category: String,
    /// The product token robots.txt is read for.
    pub token: String,
    /// The lookup it waits for (its key among the lookups in flight).
    waits_for: Option<(IpAddr, u64)>,
    expires: Instant,
}

impl Known {
    /// Whether reverse DNS was asked and had not answered when it was
    /// judged.
    pub fn pending(&self) -> bool {
        self.waits_for.is_some()
    }
}

/// Lookup counters, for `/healthz` and `/metrics`.
#[derive(Debug, Default)]
pub struct LookupStats {
    /// Lookups started.
    pub started: AtomicU64,
    /// Claims that found every lookup slot busy (asked again later).
    pub busy: AtomicU64,
    /// Lookups that answered.
    pub answered: AtomicU64,
    /// Lookups that failed (timeout, SERVFAIL, refused).
    pub failed: AtomicU64,
}

/// One shard of the identities: by (address, User-Agent key).
type KnownShard = Recent<(IpAddr, u64), Arc<Known>>;

/// Reverse-DNS evidence per (address, domains), with its expiry.
type EvidenceCache = Recent<(IpAddr, u64), (Arc<FcrdnsEvidence>, Instant)>;

struct Dns {
    lookup: Lookup,
    slots: Arc<tokio::sync::Semaphore>,
    /// Evidence per (address, domains), with its expiry.
    evidence: Arc<Mutex<EvidenceCache>>,
    /// Lookups in flight (at most the slots).
    pending: Arc<Mutex<HashSet<(IpAddr, u64)>>>,
}

/// What asking for a lookup did.
enum Asked {
    /// A lookup is under way.
    Pending,
    /// Every slot was busy: none was started.
    Busy,
}

/// Request-time identity.
pub struct Identities {
    registry: arc_swap::ArcSwap<Registry>,
    classifier: UaClassifier,
    owners: Arc<dyn Owners + Send + Sync>,
    dns: Option<Dns>,
    /// Identities by (address, User-Agent), in shards (one lock each) so
    /// that the workers seldom wait for each other.
    known: Box<[Mutex<KnownShard>]>,
    hasher: foldhash::fast::RandomState,
    /// Reverse-DNS lookups.
    pub stats: Arc<LookupStats>,
    /// Evidence gathered beforehand, by address (a replay's `--verify`):
    /// used when reverse DNS is not asked here.
    given: Option<Arc<std::collections::HashMap<IpAddr, FcrdnsEvidence>>>,
}

impl std::fmt::Debug for Identities {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Identities").finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The identity the policy reads, from a verdict.
pub fn identity_of(v: &Verification) -> Identity {
    match v.verdict {
        Verdict::Verified => Identity::Verified,
        Verdict::Spoofed => Identity::Spoofed,
        Verdict::Unverifiable => Identity::Unverifiable,
        Verdict::Unknown if v.claimed_bot.is_some() => Identity::Unknown,
        Verdict::Unknown | Verdict::UnclaimedBotIp => Identity::Unclaimed,
    }
}

impl Identities {
    /// Compiles the User-Agent classifier (once) and sets the caches up.
    pub fn new(cfg: IdentityConfig) -> Result<Identities, botscope_botid::Error> {
        let classifier = UaClassifier::bundled(&cfg.registry)?;
        Ok(Identities {
            classifier,
            owners: cfg.owners,
            dns: cfg.dns.map(|d| Dns {
                lookup: d.lookup,
                slots: Arc::new(tokio::sync::Semaphore::new(d.concurrency.max(1))),
                evidence: Arc::new(Mutex::new(Recent::new(d.evidence.max(2)))),
                pending: Arc::new(Mutex::new(HashSet::new())),
            }),
            known: (0..SHARDS)
                .map(|_| Mutex::new(Recent::new((cfg.cache / SHARDS).max(2))))
                .collect(),
            hasher: foldhash::fast::RandomState::default(),
            registry: arc_swap::ArcSwap::new(cfg.registry),
            stats: Arc::new(LookupStats::default()),
            given: None,
        })
    }

    /// Judges with `evidence` (reverse DNS gathered beforehand, by
    /// address) where reverse DNS is not asked here: a replay's
    /// `--verify`, deciding as the live gate did.
    pub fn with_evidence(
        mut self,
        evidence: std::collections::HashMap<IpAddr, FcrdnsEvidence>,
    ) -> Identities {
        self.given = Some(Arc::new(evidence));
        self
    }

    /// The registry identities are judged with now.
    pub fn registry(&self) -> Arc<Registry> {
        self.registry.load_full()
    }

    /// Judges from now on with `registry` (the operators' lists refreshed:
    /// the same bots and names, new addresses), forgetting what was judged.
    pub fn set_registry(&self, registry: Arc<Registry>) {
        self.registry.store(registry);
        self.forget();
    }

    /// Identities held.
    pub fn held(&self) -> usize {
        self.known.iter().map(|s| lock(s).len()).sum()
    }

    /// Reverse-DNS lookups in flight.
    pub fn in_flight(&self) -> usize {
        self.dns.as_ref().map_or(0, |d| lock(&d.pending).len())
    }

    /// Who `ip` sending `user_agent` is, now. Must be called inside a Tokio
    /// runtime when reverse DNS is on (a lookup it starts runs there).
    pub fn identify(&self, ip: IpAddr, user_agent: &str) -> Arc<Known> {
        self.identify_at(ip, user_agent, None)
    }

    /// [`Identities::identify`] for a request made at `when` (Unix
    /// seconds; a replayed log's line): a published list dated long after
    /// it says nothing of an address it lacks (botid's `verify_at`).
    pub fn identify_at(&self, ip: IpAddr, user_agent: &str, when: Option<i64>) -> Arc<Known> {
        let ip = botscope_botid::normalize(ip);
        let ua_key = self
            .hasher
            .hash_one((user_agent, when.map(|w| w.div_euclid(86_400))));
        let now = Instant::now();
        // The shard from the keyed hash of the User-Agent and the address's
        // bits, mixed (no second pass over the key).
        let ip_bits = match ip {
            IpAddr::V4(a) => u64::from(u32::from(a)),
            IpAddr::V6(a) => {
                let n = u128::from(a);
                (n as u64) ^ ((n >> 64) as u64)
            }
        };
        let mixed = (ua_key ^ ip_bits).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let shard = &self.known[(mixed >> 60) as usize % SHARDS];
        if let Some(k) = lock(shard).get(&(ip, ua_key))
            && k.expires > now
            && !self.answered(&k)
        {
            return k;
        }
        let known = Arc::new(self.judge(ip, user_agent, now, when));
        lock(shard).insert((ip, ua_key), known.clone());
        known
    }

    /// Whether the lookup a pending identity waits for has answered.
    fn answered(&self, k: &Known) -> bool {
        match (&self.dns, k.waits_for) {
            (Some(dns), Some(key)) => !lock(&dns.pending).contains(&key),
            _ => false,
        }
    }

    fn judge(&self, ip: IpAddr, user_agent: &str, now: Instant, when: Option<i64>) -> Known {
        let registry = self.registry.load();
        let ua = self.classifier.classify(user_agent);
        let owner = match when {
            Some(w) => self.owners.owner_at(ip, w),
            None => self.owners.owner(ip),
        };
        let domains = botscope_botid::fcrdns_domains(&registry, ip, &ua);
        let mut waits_for = None;
        let mut expires = now + OFFLINE_LIFE;
        let evidence = match (&self.dns, domains) {
            (Some(dns), Some(domains)) => {
                let key = (ip, self.hasher.hash_one(domains));
                let held = lock(&dns.evidence).get(&key);
                match held {
                    Some((ev, until)) if until > now => {
                        expires = expires.min(until);
                        Some(ev)
                    }
                    _ => {
                        match self.ask(dns, key, ip, domains) {
                            Asked::Pending => waits_for = Some(key),
                            // Every slot busy: judged again within a second.
                            Asked::Busy => expires = now + Duration::from_secs(1),
                        }
                        None
                    }
                }
            }
            (None, Some(_)) => self
                .given
                .as_ref()
                .and_then(|g| g.get(&ip))
                .map(|e| Arc::new(e.clone())),
            _ => None,
        };
        let mut v = botscope_botid::verify_at(
            &registry,
            ip,
            Some(user_agent),
            &ua,
            evidence.as_deref(),
            owner,
            when,
        );
        if waits_for.is_some() {
            v.reason = format!("{}; reverse DNS is being asked", v.reason);
        }
        let identity = identity_of(&v);
        let entry = v.claimed_bot.as_deref().and_then(|b| registry.get(b));
        let category = match (entry, ua.is_bot) {
            (Some(e), _) => e.category.map_or("other", |c| c.as_str()).to_owned(),
            (None, true) => UNREGISTERED_BOT.to_owned(),
            (None, false) => BROWSER.to_owned(),
        };
        Known {
            identity,
            bot: entry.map(|e| e.name.clone()),
            category,
            token: botscope_robotstxt::product_token(user_agent).to_owned(),
            waits_for,
            expires,
            evidence: Evidence::of(&v),
        }
    }

    /// Starts a lookup for `key` unless one is under way or every slot is
    /// busy.
    fn ask(&self, dns: &Dns, key: (IpAddr, u64), ip: IpAddr, domains: &[String]) -> Asked {
        if lock(&dns.pending).contains(&key) {
            return Asked::Pending;
        }
        let Ok(permit) = dns.slots.clone().try_acquire_owned() else {
            self.stats.busy.fetch_add(1, Ordering::Relaxed);
            return Asked::Busy;
        };
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return Asked::Busy;
        };
        lock(&dns.pending).insert(key);
        self.stats.started.fetch_add(1, Ordering::Relaxed);
        let (lookup, evidence, pending, stats) = (
            dns.lookup.clone(),
            dns.evidence.clone(),
            dns.pending.clone(),
            self.stats.clone(),
        );
        let domains = domains.to_vec();
        rt.spawn(async move {
            let (ev, life) = lookup(ip, domains).await;
            let now = Instant::now();
            let until = match life {
                Some(l) => {
                    stats.answered.fetch_add(1, Ordering::Relaxed);
                    now + l.max(EVIDENCE_FLOOR)
                }
                None => {
                    stats.failed.fetch_add(1, Ordering::Relaxed);
                    now + FAILURE_BACKOFF
                }
            };
            lock(&evidence).insert(key, (Arc::new(ev), until));
            lock(&pending).remove(&key);
            drop(permit);
        });
        Asked::Pending
    }

    /// Forgets every identity (the registry or the lists changed).
    pub fn forget(&self) {
        for shard in &self.known {
            lock(shard).clear();
        }
    }
}
