//! The frontier in the process's memory: what the PostgreSQL frontier
//! does, statement for statement, over a map behind one lock. For tests
//! of what works a frontier (the harvest worker's turns, hand-overs and
//! leases) without a server, and for trying workers out on one machine.
//! Clones share one frontier, as connections to one database do. Nothing
//! is kept when the process ends.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::Result;
use crate::frontier::{
    Claimed, Done, Frontier, FrontierStats, address_key, address_owner, next_due, secs,
};

/// A frontier held in memory ([`Frontier`]); `Clone` shares it.
#[derive(Debug, Clone, Default)]
pub struct MemFrontier {
    state: Arc<Mutex<State>>,
}

#[derive(Debug, Default)]
struct State {
    /// Hosts by name (ordered, as a table scan would give them).
    hosts: BTreeMap<String, Host>,
    addresses: HashMap<String, Address>,
    /// Workers and when each was last heard from (ms).
    workers: BTreeMap<String, i64>,
}

#[derive(Debug, Clone)]
struct Host {
    rank: Option<u64>,
    due: i64,
    lease_worker: Option<String>,
    lease_until: Option<i64>,
    failures: u32,
    last_done: Option<i64>,
    forwarded: bool,
    forward_address: Option<String>,
    address_key: Option<i64>,
}

#[derive(Debug, Clone, Default)]
struct Address {
    worker: Option<String>,
    /// The end of the hold (ms).
    lease_until: Option<i64>,
    /// Not to be asked before (ms).
    next_ms: i64,
    /// When another worker last asked for it (ms).
    wanted: i64,
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX / 4)
}

/// The clock of address holds and workers' signs of life (ms), as the
/// server's clock is for PostgreSQL.
fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, millis)
}

impl MemFrontier {
    /// An empty frontier.
    pub fn new() -> Self {
        Self::default()
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn claimed(host: &str, h: &Host, address: Option<String>) -> Claimed {
    Claimed {
        host: host.to_owned(),
        rank: h.rank,
        failures: h.failures,
        address,
    }
}

impl Frontier for MemFrontier {
    fn frontier_add(&self, hosts: &[(Option<u64>, String)], now: i64) -> Result<u64> {
        let mut st = self.state();
        let mut added = 0;
        for (rank, name) in hosts {
            match st.hosts.get_mut(name) {
                Some(h) => h.rank = rank.or(h.rank),
                None => {
                    st.hosts.insert(
                        name.clone(),
                        Host {
                            rank: *rank,
                            due: now,
                            lease_worker: None,
                            lease_until: None,
                            failures: 0,
                            last_done: None,
                            forwarded: false,
                            forward_address: None,
                            address_key: None,
                        },
                    );
                    added += 1;
                }
            }
        }
        Ok(added)
    }

    fn frontier_claim_among(
        &self,
        worker: &str,
        workers: &[String],
        batch: usize,
        lease: Duration,
        now: i64,
    ) -> Result<Vec<Claimed>> {
        let until = now + secs(lease);
        let mut st = self.state();
        // Due hosts whose address falls to this worker (or is unknown),
        // most overdue first, then by rank (unranked last).
        let mut due: Vec<(&String, i64, Option<u64>)> = st
            .hosts
            .iter()
            .filter(|(_, h)| {
                h.due <= now
                    && (workers.is_empty()
                        || h.address_key
                            .is_none_or(|k| address_owner(k, workers) == Some(worker)))
            })
            .map(|(name, h)| (name, h.due, h.rank))
            .collect();
        due.sort_by_key(|&(_, due, rank)| (due, rank.is_none(), rank));
        let names: Vec<String> = due
            .into_iter()
            .take(batch)
            .map(|(n, _, _)| n.clone())
            .collect();
        let mut out = Vec::with_capacity(names.len());
        for name in names {
            if let Some(h) = st.hosts.get_mut(&name) {
                h.lease_worker = Some(worker.to_owned());
                h.lease_until = Some(until);
                h.due = until;
                h.forwarded = false;
                h.forward_address = None;
                out.push(claimed(&name, h, None));
            }
        }
        out.sort_by_key(|c| (c.rank.is_none(), c.rank));
        Ok(out)
    }

    fn frontier_renew(
        &self,
        worker: &str,
        hosts: &[&str],
        lease: Duration,
        now: i64,
    ) -> Result<u64> {
        let until = now + secs(lease);
        let mut st = self.state();
        let mut n = 0;
        for name in hosts {
            if let Some(h) = st.hosts.get_mut(*name)
                && h.lease_worker.as_deref() == Some(worker)
                && h.lease_until.is_some_and(|u| u >= now)
            {
                h.lease_until = Some(until);
                h.due = until;
                n += 1;
            }
        }
        Ok(n)
    }

    fn frontier_forward(
        &self,
        worker: &str,
        hosts: &[(String, String, String)],
        lease: Duration,
        now: i64,
    ) -> Result<u64> {
        let until = now + secs(lease);
        let mut st = self.state();
        let mut n = 0;
        for (name, to, address) in hosts {
            if let Some(h) = st.hosts.get_mut(name)
                && h.lease_worker.as_deref() == Some(worker)
            {
                h.lease_worker = Some(to.clone());
                h.lease_until = Some(until);
                h.due = until;
                h.forwarded = true;
                h.forward_address = Some(address.clone());
                n += 1;
            }
        }
        Ok(n)
    }

    fn frontier_take_forwarded(
        &self,
        worker: &str,
        limit: usize,
        lease: Duration,
        now: i64,
    ) -> Result<Vec<Claimed>> {
        let until = now + secs(lease);
        let mut st = self.state();
        let mut out = Vec::new();
        for (name, h) in st.hosts.iter_mut() {
            if out.len() >= limit {
                break;
            }
            if h.forwarded && h.lease_worker.as_deref() == Some(worker) {
                let address = h.forward_address.take();
                h.forwarded = false;
                h.lease_until = Some(until);
                h.due = until;
                out.push(claimed(name, h, address));
            }
        }
        Ok(out)
    }

    fn frontier_release(&self, worker: &str, done: &[Done], period: i64) -> Result<u64> {
        let mut st = self.state();
        let mut n = 0;
        for d in done {
            let Some(h) = st.hosts.get_mut(&d.host) else {
                continue;
            };
            if h.lease_worker.as_deref() != Some(worker) {
                continue;
            }
            let failures = if d.failed {
                h.failures.saturating_add(1)
            } else {
                0
            };
            h.due = next_due(period, h.rank, failures.saturating_sub(1), d);
            h.failures = failures;
            h.last_done = Some(d.time);
            h.lease_worker = None;
            h.lease_until = None;
            h.forwarded = false;
            if let Some(a) = d.address {
                h.address_key = Some(address_key(a));
            }
            n += 1;
        }
        Ok(n)
    }

    fn address_acquire(
        &self,
        worker: &str,
        address: &str,
        hold: Duration,
        want: bool,
    ) -> Result<std::result::Result<Duration, String>> {
        let now = now_ms();
        let mut st = self.state();
        let a = st.addresses.entry(address.to_owned()).or_default();
        let free = match &a.worker {
            None => true,
            Some(w) => w == worker || a.lease_until.is_some_and(|u| u < now),
        };
        if free {
            a.worker = Some(worker.to_owned());
            a.lease_until = Some(now.saturating_add(millis(hold)));
            let wait = (a.next_ms - now).max(0);
            return Ok(Ok(Duration::from_millis(wait as u64)));
        }
        if want {
            a.wanted = now;
        }
        Ok(Err(a.worker.clone().unwrap_or_default()))
    }

    fn addresses_release(&self, worker: &str, addresses: &[&str], gap: Duration) -> Result<u64> {
        let next = now_ms().saturating_add(millis(gap));
        let mut st = self.state();
        let mut n = 0;
        for address in addresses {
            if let Some(a) = st.addresses.get_mut(*address)
                && a.worker.as_deref() == Some(worker)
            {
                a.worker = None;
                a.lease_until = None;
                a.wanted = 0;
                a.next_ms = a.next_ms.max(next);
                n += 1;
            }
        }
        Ok(n)
    }

    fn addresses_wanted(&self, worker: &str, within: Duration) -> Result<Vec<String>> {
        let since = now_ms() - millis(within);
        let st = self.state();
        let mut out: Vec<String> = st
            .addresses
            .iter()
            .filter(|(_, a)| a.worker.as_deref() == Some(worker) && a.wanted > since)
            .map(|(address, _)| address.clone())
            .collect();
        out.sort();
        Ok(out)
    }

    fn workers_beat(&self, worker: &str, within: Duration) -> Result<Vec<String>> {
        let now = now_ms();
        let mut st = self.state();
        st.workers.insert(worker.to_owned(), now);
        let since = now - millis(within);
        Ok(st
            .workers
            .iter()
            .filter(|&(_, &seen)| seen > since)
            .map(|(w, _)| w.clone())
            .collect())
    }

    fn workers_leave(&self, worker: &str, now: i64) -> Result<u64> {
        let mut st = self.state();
        st.workers.remove(worker);
        let mut n = 0;
        for h in st.hosts.values_mut() {
            if h.forwarded && h.lease_worker.as_deref() == Some(worker) {
                h.lease_worker = None;
                h.lease_until = None;
                h.due = now;
                h.forwarded = false;
                h.forward_address = None;
                n += 1;
            }
        }
        Ok(n)
    }

    fn frontier_round_over(&self, now: i64) -> Result<bool> {
        Ok(!self
            .state()
            .hosts
            .values()
            .any(|h| h.due <= now || h.lease_worker.is_some()))
    }

    fn frontier_stats(&self, now: i64) -> Result<FrontierStats> {
        let st = self.state();
        let mut s = FrontierStats::default();
        let mut per_worker: BTreeMap<&str, u64> = BTreeMap::new();
        for h in st.hosts.values() {
            s.hosts += 1;
            s.never_fetched += u64::from(h.last_done.is_none());
            s.due += u64::from(h.due <= now && h.lease_worker.is_none());
            if let Some(w) = &h.lease_worker {
                let live = h.lease_until.is_some_and(|u| u >= now);
                s.leased += u64::from(live);
                s.expired_leases += u64::from(!live);
                *per_worker.entry(w).or_default() += 1;
            }
            s.failing += u64::from(h.failures > 0);
            for (i, days) in [1, 7, 30].into_iter().enumerate() {
                s.due_within[i] += u64::from(h.due <= now + days * 86_400);
            }
        }
        let mut workers: Vec<(String, u64)> = per_worker
            .into_iter()
            .map(|(w, n)| (w.to_owned(), n))
            .collect();
        workers.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        s.workers = workers;
        Ok(s)
    }
}
