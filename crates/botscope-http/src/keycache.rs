//! Key directories kept for a server that verifies signatures per
//! request (the gate): a request never waits for a fetch. An agent seen
//! for the first time is `unverified` while its directory is fetched in
//! the background; what is fetched is kept as long as its caching headers
//! say (within bounds), a failure at most 5 minutes. The number of agents
//! kept, the fetches in flight and each agent's refreshes are bounded, so
//! a flood of made-up agent URLs costs a bounded number of fetches and
//! entries, never a request's time.
//!
//! Agents whose directory was fetched are kept apart from the rest: those
//! failing or being fetched may hold at most a quarter of the table, and
//! a new one takes the place of the oldest failure, never of an agent
//! that was fetched. And one client network (a /24, a /48) may bring at
//! most [`NEW_AGENTS_PER_NETWORK`] new agents a minute: a flood of
//! made-up agents neither evicts the real ones nor locks new real ones
//! out for longer than a failure is kept.
//!
//! Fetch slots cannot be starved either: a client network has at most one
//! fetch in flight, and so has a directory host (the registry's agents
//! count against neither); a directory's response
//! head is due within the first-byte deadline (a server answering a byte a
//! second is dropped then, not at the whole fetch's timeout);
//! and [`Bounds::reserved`] slots are kept for the agents the registry
//! names, which no other agent takes, new or refreshed (an agent fetched
//! once whose directory then trickles held them by its refreshes).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use botscope_httpsig::{Directory, Keys, Lookup};

use crate::directory::{DirectoryConfig, MIN_KEEP, fetch_directory};

/// The bounds of a [`KeyCache`].
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// Agents kept at most (fetched, failed or being fetched).
    pub agents: usize,
    /// Fetches in flight at most.
    pub in_flight: usize,
    /// The shortest time between two fetches of one agent's directory.
    pub refresh: Duration,
    /// Of the fetches in flight, those kept for the registry's agents
    /// (every other agent, new or refreshed, gets the rest).
    pub reserved: usize,
}

impl Default for Bounds {
    /// 1,024 agents, 8 fetches at once of which 2 reserved, a minute
    /// between an agent's fetches.
    fn default() -> Self {
        Bounds {
            agents: 1024,
            in_flight: 8,
            refresh: MIN_KEEP,
            reserved: 2,
        }
    }
}

/// What fetches are under way: by client network and by directory host.
#[derive(Debug, Default)]
struct Flights {
    networks: std::collections::HashSet<IpAddr>,
    hosts: std::collections::HashSet<String>,
}

/// The host an agent's directory is fetched from (lower case).
fn host_of(agent: &str) -> String {
    url::Url::parse(agent)
        .ok()
        .and_then(|u| u.host_str().map(str::to_ascii_lowercase))
        .unwrap_or_else(|| agent.to_ascii_lowercase())
}

#[derive(Debug)]
enum State {
    Fetching,
    Ready(Arc<Directory>),
    Failed(String),
}

#[derive(Debug)]
struct Entry {
    state: State,
    /// When the answer goes stale (a failure: when to try again).
    until: Instant,
    /// When the last fetch started.
    fetched: Instant,
}

/// New agents one client network may bring in a minute.
pub const NEW_AGENTS_PER_NETWORK: u32 = 8;
/// Networks whose new agents are counted at most (the count restarts
/// when full).
const NETWORKS: usize = 4096;

/// The network a client is counted in: /24 for IPv4, /48 for IPv6.
fn network(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            IpAddr::from([o[0], o[1], o[2], 0])
        }
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => network(IpAddr::V4(v4)),
            None => {
                let mut s = v6.segments();
                for x in &mut s[3..] {
                    *x = 0;
                }
                IpAddr::from(s)
            }
        },
    }
}

/// Counters, for health pages.
#[derive(Debug, Default, serde::Serialize)]
pub struct CacheStats {
    /// Agents kept.
    pub agents: usize,
    /// Fetches started.
    pub fetches: u64,
    /// Fetches that failed.
    pub failures: u64,
    /// Lookups refused a fetch: too many agents or fetches in flight.
    pub refused: u64,
}

/// Directories by agent identifier (draft-ietf-webbotauth-httpsig-protocol-01:
/// keys are looked up by (identifier, keyid)), fetched off the request
/// path.
#[derive(Debug)]
pub struct KeyCache {
    cfg: DirectoryConfig,
    bounds: Bounds,
    entries: Mutex<HashMap<String, Entry>>,
    /// New agents per client network this minute.
    newcomers: Mutex<(Instant, HashMap<IpAddr, u32>)>,
    in_flight: AtomicUsize,
    /// Fetches under way by client network and by host.
    flights: Mutex<Flights>,
    /// Agent identifiers the registry names: they may use the reserved
    /// slots.
    priority: std::collections::HashSet<String>,
    fetches: AtomicU64,
    failures: AtomicU64,
    refused: AtomicU64,
    runtime: Option<tokio::runtime::Handle>,
}

impl KeyCache {
    /// A cache fetching with `cfg` on the current Tokio runtime (none: it
    /// never fetches, every agent stays unknown).
    pub fn new(cfg: DirectoryConfig, bounds: Bounds) -> Arc<KeyCache> {
        KeyCache::with_priority(cfg, bounds, Vec::new())
    }

    /// [`KeyCache::new`], the agents `priority` names (URLs, as a
    /// registry's `signature_agents` lists them) fetched on the reserved
    /// slots too.
    pub fn with_priority(
        cfg: DirectoryConfig,
        bounds: Bounds,
        priority: Vec<String>,
    ) -> Arc<KeyCache> {
        Arc::new(KeyCache {
            cfg,
            bounds,
            entries: Mutex::new(HashMap::new()),
            newcomers: Mutex::new((Instant::now(), HashMap::new())),
            in_flight: AtomicUsize::new(0),
            flights: Mutex::new(Flights::default()),
            priority: priority
                .iter()
                .map(|a| botscope_httpsig::agent::identifier(a))
                .collect(),
            fetches: AtomicU64::new(0),
            failures: AtomicU64::new(0),
            refused: AtomicU64::new(0),
            runtime: tokio::runtime::Handle::try_current().ok(),
        })
    }

    /// Puts a directory in by hand (keys configured for an agent, tests),
    /// under the agent's identifier.
    pub fn insert(&self, agent: &str, dir: Directory, keep: Duration) {
        let now = Instant::now();
        self.lock().insert(
            botscope_httpsig::agent::identifier(agent),
            Entry {
                state: State::Ready(Arc::new(dir)),
                until: now + keep,
                fetched: now,
            },
        );
    }

    /// Makes every directory kept stale now: the next lookup of each
    /// fetches it again (an operator's reload; tests of refreshes).
    pub fn expire(&self) {
        let now = Instant::now();
        for e in self.lock().values_mut() {
            if !matches!(e.state, State::Fetching) {
                e.until = now;
            }
        }
    }

    /// The counters.
    pub fn stats(&self) -> CacheStats {
        CacheStats {
            agents: self.lock().len(),
            fetches: self.fetches.load(Ordering::Relaxed),
            failures: self.failures.load(Ordering::Relaxed),
            refused: self.refused.load(Ordering::Relaxed),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The keys as a verifier sees them at `now_unix` (the time a fetched
    /// directory's own signature is checked at).
    pub fn keys(self: &Arc<Self>, now_unix: i64) -> CacheKeys {
        CacheKeys {
            cache: self.clone(),
            now_unix,
            client: None,
        }
    }

    /// [`KeyCache::keys`] for a request from `client`: the new agents its
    /// network brings are counted.
    pub fn keys_for(self: &Arc<Self>, now_unix: i64, client: IpAddr) -> CacheKeys {
        CacheKeys {
            cache: self.clone(),
            now_unix,
            client: Some(client),
        }
    }

    /// Counts a new agent from `client`'s network; false past its quota.
    fn welcome(&self, client: Option<IpAddr>, now: Instant) -> bool {
        let Some(client) = client else { return true };
        let mut n = self.newcomers.lock().unwrap_or_else(|p| p.into_inner());
        if now.duration_since(n.0) >= Duration::from_secs(60) || n.1.len() >= NETWORKS {
            *n = (now, HashMap::new());
        }
        let count = n.1.entry(network(client)).or_insert(0);
        if *count >= NEW_AGENTS_PER_NETWORK {
            return false;
        }
        *count += 1;
        true
    }

    /// Makes room for a new agent that is not fetched yet: stale entries
    /// go first; then, when the unproven (failing or being fetched) hold
    /// their quarter or the table is full, the oldest failure. An agent
    /// whose directory was fetched is never pushed out.
    fn room(&self, entries: &mut HashMap<String, Entry>, now: Instant) -> Result<(), &'static str> {
        let unproven = |e: &Entry| !matches!(e.state, State::Ready(_));
        let quarter = (self.bounds.agents / 4).max(1);
        let count =
            |entries: &HashMap<String, Entry>| entries.values().filter(|e| unproven(e)).count();
        if entries.len() < self.bounds.agents && count(entries) < quarter {
            return Ok(());
        }
        entries.retain(|_, e| e.until > now || matches!(e.state, State::Fetching));
        if entries.len() < self.bounds.agents && count(entries) < quarter {
            return Ok(());
        }
        let oldest = entries
            .iter()
            .filter(|(_, e)| matches!(e.state, State::Failed(_)))
            .min_by_key(|(_, e)| e.fetched)
            .map(|(k, _)| k.clone());
        match oldest {
            Some(k) => {
                entries.remove(&k);
                Ok(())
            }
            None if entries.len() >= self.bounds.agents => Err("too many signature agents"),
            None => Err("key directory fetches busy"),
        }
    }

    /// Takes a fetch slot (of the first `limit`) for the directory host
    /// `host` and the client network `net`, unless either has a fetch
    /// under way (none: not counted).
    fn claim(
        &self,
        host: Option<&str>,
        net: Option<IpAddr>,
        limit: usize,
    ) -> Result<(), &'static str> {
        let mut f = self.flights.lock().unwrap_or_else(|p| p.into_inner());
        if host.is_some_and(|h| f.hosts.contains(h)) {
            return Err("a fetch from this directory host is under way");
        }
        if net.is_some_and(|n| f.networks.contains(&n)) {
            return Err("a fetch for this client network is under way");
        }
        self.in_flight
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < limit).then_some(n + 1)
            })
            .map_err(|_| "key directory fetches busy")?;
        if let Some(h) = host {
            f.hosts.insert(h.to_owned());
        }
        if let Some(n) = net {
            f.networks.insert(n);
        }
        Ok(())
    }

    /// Gives back what [`KeyCache::claim`] took.
    fn release(&self, host: Option<&str>, net: Option<IpAddr>) {
        let mut f = self.flights.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(h) = host {
            f.hosts.remove(h);
        }
        if let Some(n) = net {
            f.networks.remove(&n);
        }
        self.in_flight.fetch_sub(1, Ordering::AcqRel);
    }

    /// Starts a fetch of `agent` (the URL as sent; kept under its
    /// identifier `id`) unless a bound forbids it; `entries` is the locked
    /// map. The answer for now.
    fn start(
        self: &Arc<Self>,
        entries: &mut HashMap<String, Entry>,
        (id, agent): (&str, &str),
        now: Instant,
        now_unix: i64,
        client: Option<IpAddr>,
    ) -> Result<(), &'static str> {
        let Some(rt) = &self.runtime else {
            return Err("no runtime to fetch with");
        };
        // A registry agent may use every slot; any other agent, new or
        // refreshed, leaves the reserved ones (an agent fetched once whose
        // directory then trickles must not hold them by its refreshes).
        let favoured = self.priority.contains(id);
        let limit = if favoured {
            self.bounds.in_flight
        } else {
            self.bounds
                .in_flight
                .saturating_sub(self.bounds.reserved)
                .max(1)
        };
        // One fetch in flight per directory host and per client network.
        // The registry's agents are counted against neither: a client
        // cannot hold them back by naming made-up agents on the same
        // host, and each has at most one fetch in flight of its own.
        let host = (!favoured).then(|| host_of(agent));
        let net = client.filter(|_| !favoured).map(network);
        if let Err(why) = self.claim(host.as_deref(), net, limit) {
            self.refused.fetch_add(1, Ordering::Relaxed);
            return Err(why);
        }
        // A new agent needs room, and its network's quota: counted only
        // for a fetch that starts.
        if !entries.contains_key(id) {
            let why = match self.room(entries, now) {
                Err(why) => Some(why),
                Ok(()) if !self.welcome(client, now) => {
                    Some("too many new signature agents from this network")
                }
                Ok(()) => None,
            };
            if let Some(why) = why {
                self.release(host.as_deref(), net);
                self.refused.fetch_add(1, Ordering::Relaxed);
                return Err(why);
            }
        }
        self.fetches.fetch_add(1, Ordering::Relaxed);
        let previous = entries.insert(
            id.to_owned(),
            Entry {
                state: State::Fetching,
                until: now + self.cfg.timeout,
                fetched: now,
            },
        );
        let me = self.clone();
        let agent = agent.to_owned();
        let id = id.to_owned();
        rt.spawn(async move {
            let got = fetch_directory(&agent, &me.cfg, now_unix).await;
            let done = Instant::now();
            let entry = match got {
                Ok(f) => Entry {
                    state: State::Ready(Arc::new(f.directory)),
                    until: done + f.keep,
                    fetched: now,
                },
                Err(e) => {
                    me.failures.fetch_add(1, Ordering::Relaxed);
                    tracing::debug!(agent = %botscope_text::field(&agent), "key directory: {e}");
                    // A directory that fails to resolve is not evidence
                    // (the draft, "Discovery Failure": it "MUST NOT evict
                    // a cached entry"): the keys known stay, less those
                    // whose own `exp` has passed, and the fetch is tried
                    // again after the failure's wait. A first fetch that
                    // fails is remembered as a failure.
                    match previous {
                        Some(Entry {
                            state: State::Ready(d),
                            ..
                        }) => Entry {
                            state: State::Ready(Arc::new(d.without_expired(now_unix))),
                            until: done + e.keep(),
                            fetched: now,
                        },
                        _ => Entry {
                            state: State::Failed(e.to_string()),
                            until: done + e.keep(),
                            fetched: now,
                        },
                    }
                }
            };
            me.lock().insert(id, entry);
            me.release(host.as_deref(), net);
        });
        Ok(())
    }
}

/// A [`KeyCache`] as a verifier's key store, at one time.
#[derive(Debug, Clone)]
pub struct CacheKeys {
    cache: Arc<KeyCache>,
    now_unix: i64,
    client: Option<IpAddr>,
}

impl Keys for CacheKeys {
    fn lookup(&self, agent: Option<&str>, keyid: &str) -> Lookup {
        let Some(agent) = agent else {
            return Lookup::Unknown("no Signature-Agent: no directory to look in".into());
        };
        // Kept by identifier, fetched as sent.
        let id = botscope_httpsig::agent::identifier(agent);
        let c = &self.cache;
        let now = Instant::now();
        let mut entries = c.lock();
        let (known, due) = match entries.get(&id) {
            Some(e) => {
                let answer = match &e.state {
                    State::Ready(d) => {
                        Some(d.key(keyid).cloned().map_or(Lookup::NotListed, Lookup::Key))
                    }
                    State::Failed(why) if e.until > now => {
                        Some(Lookup::Unknown(format!("the directory of {agent}: {why}")))
                    }
                    State::Fetching => Some(Lookup::Unknown(format!(
                        "the directory of {agent} is being fetched"
                    ))),
                    State::Failed(_) => None,
                };
                let due = e.until <= now
                    && !matches!(e.state, State::Fetching)
                    && now.duration_since(e.fetched) >= c.bounds.refresh;
                (answer, due)
            }
            None => (None, true),
        };
        if due {
            let started = c.start(&mut entries, (&id, agent), now, self.now_unix, self.client);
            if known.is_none() {
                return Lookup::Unknown(match started {
                    Ok(()) => format!("the directory of {agent} is being fetched"),
                    Err(why) => format!("the directory of {agent} is not fetched: {why}"),
                });
            }
        }
        known.unwrap_or_else(|| Lookup::Unknown(format!("the directory of {agent} is not known")))
    }
}
