//! The shared frontier of harvest workers, in the PostgreSQL store: one
//! small row per host with its priority (rank), when it is next due, its
//! lease, and how it went last time; and one row per address with the
//! worker that may connect to it and when it may next be asked.
//!
//! A claim takes due hosts with `SELECT … FOR UPDATE SKIP LOCKED`, so
//! workers never wait on each other's rows, and moves their due time to
//! the lease's end: a worker that dies loses nothing, since its hosts fall
//! due again when the lease runs out. Renewing pushes the due time on.
//! Releasing writes the next due time from the re-crawl schedule
//! ([`next_due`]).
//!
//! The table is kept small (host, two times, a few counters) and its rows
//! are updated in place (fillfactor 70, aggressive autovacuum), so that
//! the dead tuples of a busy queue are cleared quickly.

use std::net::IpAddr;
use std::time::Duration;

use serde::Serialize;

use crate::Result;
#[cfg(feature = "db")]
use crate::pg::PgStore;

/// The default re-crawl period: monthly.
pub const MONTH: i64 = 30 * 86_400;

/// A claimed host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claimed {
    /// The host.
    pub host: String,
    /// Its rank, when a ranked list gave it.
    pub rank: Option<u64>,
    /// Failed fetches in a row before this one.
    pub failures: u32,
    /// The address it resolved to, when another worker handed it here.
    pub address: Option<String>,
}

/// How a claimed host's fetch went, for its next due time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Done {
    /// The host.
    pub host: String,
    /// When it was fetched (seconds since the epoch).
    pub time: i64,
    /// The fetch failed (no response, 429, 5xx).
    pub failed: bool,
    /// A new version was stored (the file changed).
    pub changed: bool,
    /// Not to be asked before this time (`Retry-After`).
    pub retry_at: Option<i64>,
    /// The address it was asked at, if any: its next claim goes to the
    /// worker the address falls to ([`address_owner`]).
    pub address: Option<IpAddr>,
}

/// A 31-bit key of an address, the same in every process and in SQL.
pub fn address_key(address: IpAddr) -> i64 {
    let octets = match address {
        IpAddr::V4(v) => v.to_ipv6_mapped().octets(),
        IpAddr::V6(v) => v.octets(),
    };
    key31(&octets)
}

fn key31(bytes: &[u8]) -> i64 {
    let h = crate::content_hash(bytes);
    i64::from(u32::from_le_bytes([h[0], h[1], h[2], h[3]]) >> 1)
}

/// The score of a worker for an address key (rendezvous hashing), as
/// `frontier_claim` computes it in SQL: no product overflows 63 bits.
fn share_score(key: i64, worker: &str) -> i64 {
    ((key ^ key31(worker.as_bytes())) * 2_654_435_761) % 4_294_967_291
}

/// The worker among `workers` an address (by [`address_key`]) falls to:
/// the highest score, ties to the greatest name. Every process that
/// knows the same names agrees; each gets about as many addresses; when
/// one comes or goes, only its own addresses move. `None` without
/// workers.
pub fn address_owner(key: i64, workers: &[String]) -> Option<&str> {
    workers
        .iter()
        .max_by(|a, b| {
            (share_score(key, a), a.as_bytes()).cmp(&(share_score(key, b), b.as_bytes()))
        })
        .map(String::as_str)
}

/// The re-crawl schedule (BotSeer's prioritised updating): monthly by
/// default; sooner for higher-ranked sites (the top thousand weekly, the
/// top hundred thousand fortnightly) and for a site whose file changed
/// last time (half the period); later for a site that failed (the period
/// doubled per failure in a row, at most four times); never before a
/// `Retry-After`.
pub fn next_due(period: i64, rank: Option<u64>, failures: u32, d: &Done) -> i64 {
    let mut p = period as f64;
    p *= match rank {
        Some(r) if r <= 1_000 => 0.25,
        Some(r) if r <= 100_000 => 0.5,
        _ => 1.0,
    };
    if d.changed {
        p *= 0.5;
    }
    if d.failed {
        p *= f64::from(1u32 << failures.min(2));
    }
    let due = d.time + (p as i64).max(60);
    d.retry_at.map_or(due, |r| due.max(r))
}

/// What the frontier holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FrontierStats {
    /// Hosts.
    pub hosts: u64,
    /// Never fetched.
    pub never_fetched: u64,
    /// Due now (and not leased).
    pub due: u64,
    /// Leased to a worker now.
    pub leased: u64,
    /// Whose lease ran out before they were released (a worker died).
    pub expired_leases: u64,
    /// Failing (one failure or more in a row).
    pub failing: u64,
    /// Due within the next day, week and month.
    pub due_within: [u64; 3],
    /// Leased hosts per worker.
    pub workers: Vec<(String, u64)>,
    /// Dead row versions in the table (vacuum's work), by the server's count.
    pub dead_tuples: u64,
}

impl FrontierStats {
    /// The counts for people, one per line.
    pub fn describe(&self, name: &str) -> String {
        let workers = if self.workers.is_empty() {
            "none".to_owned()
        } else {
            self.workers
                .iter()
                .map(|(w, n)| format!("{w} {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        format!(
            "frontier         {name}\n\
             hosts            {}\n\
             never fetched    {}\n\
             due now          {}\n\
             leased           {} ({} expired)\n\
             failing          {}\n\
             due in 1d/7d/30d {} / {} / {}\n\
             workers          {workers}\n\
             dead tuples      {}\n",
            self.hosts,
            self.never_fetched,
            self.due,
            self.leased,
            self.expired_leases,
            self.failing,
            self.due_within[0],
            self.due_within[1],
            self.due_within[2],
            self.dead_tuples
        )
    }
}

/// A claimed host from a row of `host, rank, failures`.
#[cfg(feature = "db")]
fn claimed(r: &postgres::Row, address: Option<String>) -> Claimed {
    Claimed {
        host: r.get(0),
        rank: r.get::<_, Option<i64>>(1).map(|r| r.max(0) as u64),
        failures: r.get::<_, i32>(2).max(0) as u32,
        address,
    }
}

/// Whole seconds of `d`, as the frontier's times are.
pub(crate) fn secs(d: Duration) -> i64 {
    i64::try_from(d.as_secs()).unwrap_or(i64::MAX / 4)
}

/// The shared frontier of harvest workers (PostgreSQL only): the hosts
/// due, their leases, the addresses each worker holds, the workers at
/// work. Blocking calls: make them off an async runtime's workers
/// (`pg_blocking`, or a blocking task).
pub trait Frontier {
    /// Adds hosts (`(rank, host)`), due at `now`; a host already there
    /// keeps its schedule and takes the new rank. Returns how many were
    /// new.
    fn frontier_add(&self, hosts: &[(Option<u64>, String)], now: i64) -> Result<u64>;

    /// Claims up to `batch` due hosts for `worker` for `lease`, most
    /// overdue first, then by rank. Hosts other workers hold are skipped,
    /// never waited for.
    fn frontier_claim(
        &self,
        worker: &str,
        batch: usize,
        lease: Duration,
        now: i64,
    ) -> Result<Vec<Claimed>> {
        self.frontier_claim_among(worker, &[], batch, lease, now)
    }

    /// [`Frontier::frontier_claim`] for one of `workers` (those at work,
    /// `worker` among them): only hosts whose last address falls to
    /// `worker` ([`address_owner`]) or whose address is not known, so
    /// that on a round after the first, hosts are fetched where their
    /// address is and seldom handed over. Without workers, any host.
    fn frontier_claim_among(
        &self,
        worker: &str,
        workers: &[String],
        batch: usize,
        lease: Duration,
        now: i64,
    ) -> Result<Vec<Claimed>>;

    /// Extends the leases `worker` holds on `hosts` (those it still works
    /// on) to `now + lease`; returns how many it still holds. A lease the
    /// worker has lost track of (a claim whose answer never came) is not
    /// renewed: it runs out, and the host is claimed again.
    fn frontier_renew(
        &self,
        worker: &str,
        hosts: &[&str],
        lease: Duration,
        now: i64,
    ) -> Result<u64>;

    /// Hands hosts `worker` holds to the workers that hold their
    /// addresses (`(host, to, address)`): their leases become the new holders',
    /// for `lease` from `now`, to be taken with
    /// [`Frontier::frontier_take_forwarded`]. A host whose lease `worker`
    /// no longer holds is left alone. Returns how many were handed on.
    fn frontier_forward(
        &self,
        worker: &str,
        hosts: &[(String, String, String)],
        lease: Duration,
        now: i64,
    ) -> Result<u64>;

    /// Takes the hosts other workers handed to `worker` (up to `limit`),
    /// renewing their lease.
    fn frontier_take_forwarded(
        &self,
        worker: &str,
        limit: usize,
        lease: Duration,
        now: i64,
    ) -> Result<Vec<Claimed>>;

    /// Releases hosts `worker` fetched, each due again by the schedule
    /// ([`next_due`] with `period`). A host whose lease another worker
    /// has taken since is left to that worker.
    fn frontier_release(&self, worker: &str, done: &[Done], period: i64) -> Result<u64>;

    /// Takes `address` for `worker` for `hold`, when no other worker
    /// holds it or its holder's hold ran out. Returns how long to wait
    /// before asking the address (until the last holder's end plus its
    /// gap), or, as the error, the worker that holds it; with `want` (the
    /// asker will wait for it, rather than hand its host to the holder),
    /// the holder is then told that the address is wanted
    /// ([`Frontier::addresses_wanted`]).
    /// One worker connects to an address at a time, whichever worker
    /// resolved the name. Taking an address again extends the hold.
    /// Times are the server's clock, so workers on machines whose clocks
    /// differ agree.
    fn address_acquire(
        &self,
        worker: &str,
        address: &str,
        hold: Duration,
        want: bool,
    ) -> Result<std::result::Result<Duration, String>>;

    /// Gives `address` back: the next holder waits `gap` from now (or
    /// longer, when an earlier release asked for more). False when
    /// `worker` no longer held it (its hold ran out and another took it),
    /// which changes nothing.
    fn address_release(&self, worker: &str, address: &str, gap: Duration) -> Result<bool> {
        Ok(self.addresses_release(worker, &[address], gap)? == 1)
    }

    /// Gives these addresses back at once ([`Frontier::address_release`]);
    /// returns how many `worker` still held.
    fn addresses_release(&self, worker: &str, addresses: &[&str], gap: Duration) -> Result<u64>;

    /// The addresses `worker` holds that another worker asked for in the
    /// last `within`.
    fn addresses_wanted(&self, worker: &str, within: Duration) -> Result<Vec<String>>;

    /// A sign of life from `worker`: returns the workers (itself among
    /// them) whose last sign is less than `within` old, by name. Times are
    /// the server's clock.
    fn workers_beat(&self, worker: &str, within: Duration) -> Result<Vec<String>>;

    /// `worker` stops: it leaves the workers at work, and the hosts handed
    /// to it that it has not taken are due again at once for any worker
    /// (rather than when their lease runs out). Returns how many.
    fn workers_leave(&self, worker: &str, now: i64) -> Result<u64>;

    /// True when a single round is over: no host is due and none is
    /// leased (a dead worker's hosts count until they are fetched).
    fn frontier_round_over(&self, now: i64) -> Result<bool>;

    /// The frontier's counts.
    fn frontier_stats(&self, now: i64) -> Result<FrontierStats>;
}

#[cfg(feature = "db")]
impl Frontier for PgStore {
    fn frontier_add(&self, hosts: &[(Option<u64>, String)], now: i64) -> Result<u64> {
        let mut added = 0u64;
        for chunk in hosts.chunks(10_000) {
            let names: Vec<&str> = chunk.iter().map(|(_, h)| h.as_str()).collect();
            let ranks: Vec<Option<i64>> = chunk
                .iter()
                .map(|(r, _)| r.map(|r| i64::try_from(r).unwrap_or(i64::MAX)))
                .collect();
            let n = self
                .client()
                .query_one(
                    "WITH new AS (
                        INSERT INTO frontier(host, rank, due)
                        SELECT h, r, $3 FROM unnest($1::text[], $2::bigint[]) AS u(h, r)
                        ON CONFLICT (host) DO UPDATE SET rank = coalesce(EXCLUDED.rank, frontier.rank)
                        RETURNING (xmax = 0) AS inserted)
                     SELECT count(*) FILTER (WHERE inserted) FROM new",
                    &[&names, &ranks, &now],
                )
                .map_err(|e| self.err(e))?
                .get::<_, i64>(0);
            added += n.max(0) as u64;
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
        let salts: Vec<i64> = workers.iter().map(|w| key31(w.as_bytes())).collect();
        let rows = self
            .client()
            .query(
                "UPDATE frontier f SET lease_worker = $1, lease_until = $3, due = $3,
                        forwarded = false, forward_address = NULL
                 FROM (SELECT host FROM frontier WHERE due <= $2
                         AND (address_key IS NULL OR cardinality($5::text[]) = 0
                              OR (SELECT w FROM unnest($5::text[], $6::bigint[]) AS m(w, salt)
                                  ORDER BY ((address_key # salt) * 2654435761) % 4294967291 DESC,
                                           w COLLATE \"C\" DESC
                                  LIMIT 1) = $1)
                       ORDER BY due, rank LIMIT $4 FOR UPDATE SKIP LOCKED) c
                 WHERE f.host = c.host
                 RETURNING f.host, f.rank, f.failures",
                &[&worker, &now, &until, &(batch as i64), &workers, &salts],
            )
            .map_err(|e| self.err(e))?;
        let mut out: Vec<Claimed> = rows.iter().map(|r| claimed(r, None)).collect();
        // RETURNING keeps no order: best rank first again.
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
        let n = self
            .client()
            .execute(
                "UPDATE frontier SET lease_until = $2, due = $2
                 WHERE host = ANY($4) AND lease_worker = $1 AND lease_until >= $3",
                &[&worker, &until, &now, &hosts],
            )
            .map_err(|e| self.err(e))?;
        Ok(n)
    }

    fn frontier_forward(
        &self,
        worker: &str,
        hosts: &[(String, String, String)],
        lease: Duration,
        now: i64,
    ) -> Result<u64> {
        if hosts.is_empty() {
            return Ok(0);
        }
        let until = now + secs(lease);
        let names: Vec<&str> = hosts.iter().map(|(h, _, _)| h.as_str()).collect();
        let to: Vec<&str> = hosts.iter().map(|(_, t, _)| t.as_str()).collect();
        let addresses: Vec<&str> = hosts.iter().map(|(_, _, a)| a.as_str()).collect();
        self.client()
            .execute(
                "UPDATE frontier f SET lease_worker = u.to_worker, lease_until = $3, due = $3,
                        forwarded = true, forward_address = u.address
                 FROM unnest($1::text[], $2::text[], $5::text[]) AS u(host, to_worker, address)
                 WHERE f.host = u.host AND f.lease_worker = $4",
                &[&names, &to, &until, &worker, &addresses],
            )
            .map_err(|e| self.err(e))
    }

    fn frontier_take_forwarded(
        &self,
        worker: &str,
        limit: usize,
        lease: Duration,
        now: i64,
    ) -> Result<Vec<Claimed>> {
        let until = now + secs(lease);
        let rows = self
            .client()
            .query(
                "UPDATE frontier f SET forwarded = false, forward_address = NULL,
                        lease_until = $2, due = $2
                 FROM (SELECT host, forward_address FROM frontier
                       WHERE lease_worker = $1 AND forwarded
                       LIMIT $3 FOR UPDATE SKIP LOCKED) c
                 WHERE f.host = c.host
                 RETURNING f.host, f.rank, f.failures, c.forward_address",
                &[&worker, &until, &(limit as i64)],
            )
            .map_err(|e| self.err(e))?;
        Ok(rows.iter().map(|r| claimed(r, r.get(3))).collect())
    }

    fn frontier_release(&self, worker: &str, done: &[Done], period: i64) -> Result<u64> {
        if done.is_empty() {
            return Ok(0);
        }
        let mut c = self.client();
        let mut tx = c.transaction().map_err(|e| self.err(e))?;
        let names: Vec<&str> = done.iter().map(|d| d.host.as_str()).collect();
        let rows = tx
            .query(
                "SELECT host, rank, failures FROM frontier
                 WHERE host = ANY($1) AND lease_worker = $2 FOR UPDATE",
                &[&names, &worker],
            )
            .map_err(|e| self.err(e))?;
        let known: std::collections::HashMap<String, (Option<u64>, u32)> = rows
            .iter()
            .map(|r| {
                (
                    r.get::<_, String>(0),
                    (
                        r.get::<_, Option<i64>>(1).map(|x| x.max(0) as u64),
                        r.get::<_, i32>(2).max(0) as u32,
                    ),
                )
            })
            .collect();
        let (mut hosts, mut dues, mut failures, mut times, mut changed, mut keys) = (
            Vec::new(),
            Vec::new(),
            Vec::new(),
            Vec::new(),
            Vec::new(),
            Vec::new(),
        );
        for d in done {
            let Some(&(rank, f)) = known.get(&d.host) else {
                continue;
            };
            let f = if d.failed { f.saturating_add(1) } else { 0 };
            hosts.push(d.host.as_str());
            dues.push(next_due(period, rank, f.saturating_sub(1), d));
            failures.push(i32::try_from(f).unwrap_or(i32::MAX));
            times.push(d.time);
            changed.push(d.changed);
            keys.push(d.address.map(address_key));
        }
        let n = tx
            .execute(
                "UPDATE frontier f SET due = u.due, failures = u.failures, last_done = u.t,
                        changed = u.changed, lease_worker = NULL, lease_until = NULL,
                        forwarded = false, address_key = coalesce(u.key, f.address_key)
                 FROM unnest($1::text[], $2::bigint[], $3::int[], $4::bigint[], $5::bool[],
                             $6::bigint[])
                      AS u(host, due, failures, t, changed, key)
                 WHERE f.host = u.host",
                &[&hosts, &dues, &failures, &times, &changed, &keys],
            )
            .map_err(|e| self.err(e))?;
        tx.commit().map_err(|e| self.err(e))?;
        Ok(n)
    }

    fn address_acquire(
        &self,
        worker: &str,
        address: &str,
        hold: Duration,
        want: bool,
    ) -> Result<std::result::Result<Duration, String>> {
        let hold_ms = i64::try_from(hold.as_millis()).unwrap_or(i64::MAX / 4);
        let mut c = self.client();
        let taken = c
            .query_opt(
                "INSERT INTO frontier_addresses(address, worker, lease_until, next_ms)
                 VALUES ($1, $2, (extract(epoch FROM clock_timestamp()) * 1000)::bigint + $3, 0)
                 ON CONFLICT (address) DO UPDATE
                    SET worker = EXCLUDED.worker, lease_until = EXCLUDED.lease_until
                    WHERE frontier_addresses.worker IS NULL
                       OR frontier_addresses.worker = EXCLUDED.worker
                       OR frontier_addresses.lease_until
                          < (extract(epoch FROM clock_timestamp()) * 1000)::bigint
                 RETURNING greatest(next_ms
                     - (extract(epoch FROM clock_timestamp()) * 1000)::bigint, 0)",
                &[&address, &worker, &hold_ms],
            )
            .map_err(|e| self.err(e))?
            .map(|r| Duration::from_millis(r.get::<_, i64>(0).max(0) as u64));
        if let Some(wait) = taken {
            return Ok(Ok(wait));
        }
        let holder = c
            .query_opt(
                if want {
                    "UPDATE frontier_addresses
                     SET wanted = (extract(epoch FROM clock_timestamp()) * 1000)::bigint
                     WHERE address = $1
                     RETURNING worker"
                } else {
                    "SELECT worker FROM frontier_addresses WHERE address = $1"
                },
                &[&address],
            )
            .map_err(|e| self.err(e))?
            .and_then(|r| r.get::<_, Option<String>>(0))
            .unwrap_or_default();
        Ok(Err(holder))
    }

    fn addresses_release(&self, worker: &str, addresses: &[&str], gap: Duration) -> Result<u64> {
        let gap_ms = i64::try_from(gap.as_millis()).unwrap_or(i64::MAX / 4);
        self.client()
            .execute(
                "UPDATE frontier_addresses
                 SET worker = NULL, lease_until = NULL, wanted = 0,
                     next_ms = greatest(next_ms,
                         (extract(epoch FROM clock_timestamp()) * 1000)::bigint + $3)
                 WHERE address = ANY($1) AND worker = $2",
                &[&addresses, &worker, &gap_ms],
            )
            .map_err(|e| self.err(e))
    }

    fn addresses_wanted(&self, worker: &str, within: Duration) -> Result<Vec<String>> {
        let ms = i64::try_from(within.as_millis()).unwrap_or(i64::MAX / 4);
        Ok(self
            .client()
            .query(
                "SELECT address FROM frontier_addresses
                 WHERE worker = $1
                   AND wanted > (extract(epoch FROM clock_timestamp()) * 1000)::bigint - $2",
                &[&worker, &ms],
            )
            .map_err(|e| self.err(e))?
            .iter()
            .map(|r| r.get(0))
            .collect())
    }

    fn workers_beat(&self, worker: &str, within: Duration) -> Result<Vec<String>> {
        let ms = i64::try_from(within.as_millis()).unwrap_or(i64::MAX / 4);
        let mut c = self.client();
        c.execute(
            "INSERT INTO frontier_workers(worker, seen)
             VALUES ($1, (extract(epoch FROM clock_timestamp()) * 1000)::bigint)
             ON CONFLICT (worker) DO UPDATE SET seen = EXCLUDED.seen",
            &[&worker],
        )
        .map_err(|e| self.err(e))?;
        Ok(c.query(
            "SELECT worker FROM frontier_workers
                 WHERE seen > (extract(epoch FROM clock_timestamp()) * 1000)::bigint - $1
                 ORDER BY worker",
            &[&ms],
        )
        .map_err(|e| self.err(e))?
        .iter()
        .map(|r| r.get(0))
        .collect())
    }

    fn workers_leave(&self, worker: &str, now: i64) -> Result<u64> {
        let mut c = self.client();
        let mut tx = c.transaction().map_err(|e| self.err(e))?;
        tx.execute("DELETE FROM frontier_workers WHERE worker = $1", &[&worker])
            .map_err(|e| self.err(e))?;
        let n = tx
            .execute(
                "UPDATE frontier SET lease_worker = NULL, lease_until = NULL, due = $2,
                        forwarded = false, forward_address = NULL
                 WHERE lease_worker = $1 AND forwarded",
                &[&worker, &now],
            )
            .map_err(|e| self.err(e))?;
        tx.commit().map_err(|e| self.err(e))?;
        Ok(n)
    }

    fn frontier_round_over(&self, now: i64) -> Result<bool> {
        Ok(!self
            .client()
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM frontier WHERE due <= $1 OR lease_worker IS NOT NULL)",
                &[&now],
            )
            .map_err(|e| self.err(e))?
            .get::<_, bool>(0))
    }

    fn frontier_stats(&self, now: i64) -> Result<FrontierStats> {
        let mut c = self.client();
        let r = c
            .query_one(
                "SELECT count(*),
                        count(*) FILTER (WHERE last_done IS NULL),
                        count(*) FILTER (WHERE due <= $1 AND lease_worker IS NULL),
                        count(*) FILTER (WHERE lease_worker IS NOT NULL AND lease_until >= $1),
                        count(*) FILTER (WHERE lease_worker IS NOT NULL AND lease_until < $1),
                        count(*) FILTER (WHERE failures > 0),
                        count(*) FILTER (WHERE due <= $1 + 86400),
                        count(*) FILTER (WHERE due <= $1 + 7 * 86400),
                        count(*) FILTER (WHERE due <= $1 + 30 * 86400)
                 FROM frontier",
                &[&now],
            )
            .map_err(|e| self.err(e))?;
        let n = |i: usize| r.get::<_, i64>(i).max(0) as u64;
        let workers = c
            .query(
                "SELECT lease_worker, count(*) FROM frontier WHERE lease_worker IS NOT NULL
                 GROUP BY 1 ORDER BY 2 DESC, 1",
                &[],
            )
            .map_err(|e| self.err(e))?
            .iter()
            .map(|w| (w.get::<_, String>(0), w.get::<_, i64>(1).max(0) as u64))
            .collect();
        let dead = c
            .query_opt(
                "SELECT n_dead_tup FROM pg_stat_user_tables WHERE relname = 'frontier'",
                &[],
            )
            .map_err(|e| self.err(e))?
            .map_or(0, |d| d.get::<_, i64>(0).max(0) as u64);
        Ok(FrontierStats {
            hosts: n(0),
            never_fetched: n(1),
            due: n(2),
            leased: n(3),
            expired_leases: n(4),
            failing: n(5),
            due_within: [n(6), n(7), n(8)],
            workers,
            dead_tuples: dead,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn done(failed: bool, changed: bool) -> Done {
        Done {
            host: "a.test".into(),
            time: 1_000,
            failed,
            changed,
            retry_at: None,
            address: None,
        }
    }

    #[test]
    fn the_schedule() {
        let base = next_due(MONTH, None, 0, &done(false, false)) - 1_000;
        assert_eq!(base, MONTH);
        assert_eq!(
            next_due(MONTH, Some(10), 0, &done(false, false)) - 1_000,
            MONTH / 4
        );
        assert_eq!(
            next_due(MONTH, Some(5_000), 0, &done(false, false)) - 1_000,
            MONTH / 2
        );
        assert_eq!(
            next_due(MONTH, None, 0, &done(false, true)) - 1_000,
            MONTH / 2
        );
        assert_eq!(next_due(MONTH, None, 0, &done(true, false)) - 1_000, MONTH);
        assert_eq!(
            next_due(MONTH, None, 1, &done(true, false)) - 1_000,
            2 * MONTH
        );
        assert_eq!(
            next_due(MONTH, None, 9, &done(true, false)) - 1_000,
            4 * MONTH
        );
        let mut r = done(true, false);
        r.retry_at = Some(1_000 + 5 * MONTH);
        assert_eq!(next_due(MONTH, None, 0, &r), 1_000 + 5 * MONTH);
        assert_eq!(
            next_due(1, None, 0, &done(false, false)),
            1_060,
            "at least a minute"
        );
    }
}
