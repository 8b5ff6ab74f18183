//! A harvest worker on the shared frontier of a PostgreSQL store: any
//! number of processes, on any number of machines, each claiming batches
//! of due hosts (`FOR UPDATE SKIP LOCKED`), renewing its leases while it
//! works, writing attempts in batches and releasing each host with its
//! next due time. Politeness per address holds across them: an address is
//! asked by one worker at a time, with the gap kept between workers
//! (`frontier_addresses`, on the server's clock).
//!
//! Three connections per worker: claims and renewals, the writer, and
//! the address holds, so that a long batch commit never delays a turn.
//! A worker that dies loses nothing: its hosts fall due again when their
//! lease runs out, and its addresses are free when their hold does. A
//! store that goes away (a server restart) is waited for, up to
//! [`STORE_PATIENCE`]; a batch whose commit was cut off is written again,
//! which adds attempts but never a second version of the same content.

use std::collections::HashSet;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use botscope_store::{
    Attempt, Done, Frontier, NewRun, PgStore, RunId, Store, StoreError, content_hash,
};

use crate::run::{BATCH, FLUSH_EVERY, Job, checked_pool, fetch_stream};
use crate::turns::{Acquired, AddressHolds, Owner, Sharing};
use crate::{Config, Error, Fetch, Harvester, Progress, Tally};

/// How long a worker waits for a store that does not answer before it
/// gives up.
pub const STORE_PATIENCE: Duration = Duration::from_secs(300);
/// How recent another worker's ask for an address must be to count.
const WANTED_WITHIN: Duration = Duration::from_secs(2);
/// How often a worker with hosts out looks for hosts handed to it.
const FORWARD_POLL: Duration = Duration::from_millis(250);
/// The longest a host to hand on waits for others to go with it.
const FORWARD_EVERY: Duration = Duration::from_millis(50);
/// Hosts handed on in one statement at most.
const FORWARD_BATCH: usize = 256;
/// How often a worker says it is at work, and hears who else is.
const BEAT_EVERY: Duration = Duration::from_secs(1);
/// A worker silent this long is taken to be gone: its addresses go to
/// the others (hosts handed to it meanwhile wait for their lease to run
/// out).
const LIVE: Duration = Duration::from_secs(10);
/// How often a worker gives back the addresses it no longer uses.
const SWEEP_EVERY: Duration = Duration::from_millis(200);
/// The wait between two tries at a store that does not answer.
const STORE_RETRY: Duration = Duration::from_secs(1);

/// How a worker goes.
#[derive(Debug, Clone)]
pub struct WorkerConfig {
    /// How each host is fetched.
    pub fetch: Config,
    /// Hosts fetched at once.
    pub concurrency: usize,
    /// Nameservers to check and use.
    pub nameservers: Vec<SocketAddr>,
    /// The worker's name, unique among the workers of the store.
    pub worker: String,
    /// Hosts per claim.
    pub batch: usize,
    /// How long a claim lasts without renewal (renewed every third of it).
    pub lease: Duration,
    /// The re-crawl period ([`botscope_store::next_due`]).
    pub period: Duration,
    /// Stop when the round is over (nothing due, nothing leased), rather
    /// than wait for hosts to fall due.
    pub once: bool,
    /// The wait between claims when nothing is due.
    pub idle: Duration,
}

/// How a worker's work ended.
#[derive(Debug, Clone)]
pub struct WorkerSummary {
    /// The run its attempts are recorded under.
    pub run: RunId,
    /// Hosts claimed.
    pub claimed: u64,
    /// Claims that returned hosts.
    pub claims: u64,
    /// The attempts.
    pub tally: Tally,
    /// Time from the start to the last record.
    pub elapsed: Duration,
}

/// `worker NAME: harvested N hosts in S s (R hosts/s), C claims: outcomes`.
impl std::fmt::Display for WorkerSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let secs = self.elapsed.as_secs_f64();
        write!(
            f,
            "harvested {} hosts in {secs:.1} s ({:.0} hosts/s), {} claims: {}",
            self.tally.done,
            self.tally.done as f64 / secs.max(1e-9),
            self.claims,
            self.tally
        )
    }
}

/// The frontier's address holds, for one worker.
struct PgHolds {
    /// Connections for the holds (one is picked per address).
    stores: Vec<PgStore>,
    worker: String,
    /// The workers at work (this one among them), as last heard.
    members: Mutex<Vec<String>>,
}

impl PgHolds {
    /// A sign of life, and the workers at work learnt.
    fn beat(&self) -> Result<(), StoreError> {
        let mut live = self.stores[0].workers_beat(&self.worker, LIVE)?;
        if !live.contains(&self.worker) {
            live.push(self.worker.clone());
        }
        *self.members.lock().unwrap_or_else(|e| e.into_inner()) = live;
        Ok(())
    }

    /// The workers at work, as last heard.
    fn members(&self) -> Vec<String> {
        self.members
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn store(&self, a: IpAddr) -> &PgStore {
        let k = match a {
            IpAddr::V4(v) => u32::from(v) as usize,
            IpAddr::V6(v) => u128::from(v) as usize,
        };
        &self.stores[k % self.stores.len()]
    }
}

impl AddressHolds for PgHolds {
    fn acquire(&self, a: IpAddr, hold: Duration, want: bool) -> Result<Acquired, StoreError> {
        match self
            .store(a)
            .address_acquire(&self.worker, &a.to_string(), hold, want)
        {
            Ok(Ok(wait)) => Ok(Acquired::Held(wait)),
            Ok(Err(holder)) => Ok(Acquired::Busy(holder)),
            Err(e) => Err(e),
        }
    }

    fn release(&self, addresses: &[IpAddr], gap: Duration) -> Result<(), StoreError> {
        let names: Vec<String> = addresses.iter().map(IpAddr::to_string).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let store = match addresses {
            [one] => self.store(*one),
            _ => &self.stores[0],
        };
        store.addresses_release(&self.worker, &names, gap).map(drop)
    }

    fn owner(&self, a: IpAddr) -> Owner {
        let members = self.members.lock().unwrap_or_else(|e| e.into_inner());
        match crate::turns::owner(a, &members) {
            None => Owner::Unknown,
            Some(w) if w == self.worker => Owner::Here,
            Some(w) => Owner::Elsewhere(w.to_owned()),
        }
    }

    fn wanted(&self) -> Result<Vec<IpAddr>, StoreError> {
        Ok(self.stores[0]
            .addresses_wanted(&self.worker, WANTED_WITHIN)?
            .iter()
            .filter_map(|a| a.parse().ok())
            .collect())
    }
}

/// Runs `f` on the blocking pool (the driver blocks).
async fn blocking<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
    match tokio::task::spawn_blocking(f).await {
        Ok(r) => r,
        Err(e) => std::panic::resume_unwind(e.into_panic()),
    }
}

/// Calls `f` until it succeeds, for at most [`STORE_PATIENCE`].
fn patiently<R>(mut f: impl FnMut() -> Result<R, StoreError>) -> Result<R, StoreError> {
    let start = Instant::now();
    loop {
        match f() {
            Ok(r) => return Ok(r),
            Err(e) if start.elapsed() >= STORE_PATIENCE => return Err(e),
            Err(_) => std::thread::sleep(STORE_RETRY),
        }
    }
}

/// Works the frontier of the PostgreSQL store at `url` as `config.worker`
/// until the round is over (`once`), `shutdown` completes, or the store
/// is gone for longer than five minutes. On shutdown, no new host
/// is claimed; those claimed are fetched, recorded and released.
pub async fn work(
    url: &str,
    config: WorkerConfig,
    progress: Arc<dyn Progress>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<WorkerSummary, Error> {
    let started = Instant::now();
    let open = |url: String| blocking(move || PgStore::open(&url));
    let mut writer_store = open(url.to_owned()).await?;
    let claims = Arc::new(open(url.to_owned()).await?);
    let holds = Arc::new(PgHolds {
        stores: vec![open(url.to_owned()).await?, open(url.to_owned()).await?],
        worker: config.worker.clone(),
        members: Mutex::default(),
    });
    let input = format!("frontier worker {}", config.worker);
    let new_run = NewRun {
        input_hash: content_hash(input.as_bytes()),
        input,
        user_agent: config.fetch.user_agent.clone(),
        hosts: 0,
        started: botscope_os::unix_now(),
        crawl: None,
    };
    let (run, mut writer_store) = blocking(move || {
        let run = writer_store.begin_run(&new_run);
        (run, writer_store)
    })
    .await;
    let run = run?;
    let concurrency = config.concurrency.max(1);
    let batch = config.batch.max(1);
    let worker = config.worker.clone();

    // Addresses are shared out among the workers at work: known before
    // the first claim (which takes the hosts of this worker's addresses),
    // and heard every second from here on.
    {
        let holds = holds.clone();
        blocking(move || patiently(|| holds.beat())).await?;
    }
    let heart = {
        let holds = holds.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(BEAT_EVERY).await;
                let holds = holds.clone();
                let _ = blocking(move || holds.beat()).await;
            }
        })
    };
    // The first claim: its names check the nameservers.
    let mut stop = Box::pin(shutdown);
    let mut first = Vec::new();
    loop {
        let (c, w, lease) = (claims.clone(), worker.clone(), config.lease);
        let members = holds.members();
        let got = blocking(move || {
            patiently(|| {
                c.frontier_claim_among(&w, &members, batch, lease, botscope_os::unix_now())
            })
        })
        .await?;
        if !got.is_empty() {
            first = got;
            break;
        }
        let c = claims.clone();
        if config.once
            && blocking(move || patiently(|| c.frontier_round_over(botscope_os::unix_now())))
                .await?
        {
            break;
        }
        tokio::select! {
            () = &mut stop => break,
            () = tokio::time::sleep(poll(&config)) => {}
        }
    }
    let mut summary = WorkerSummary {
        run,
        claimed: first.len() as u64,
        claims: u64::from(!first.is_empty()),
        tally: Tally::default(),
        elapsed: Duration::ZERO,
    };
    if first.is_empty() {
        heart.abort();
        let (c, w) = (claims.clone(), worker.clone());
        blocking(move || patiently(|| c.workers_leave(&w, botscope_os::unix_now()))).await?;
        blocking(move || writer_store.finish_run(run, botscope_os::unix_now())).await?;
        summary.elapsed = started.elapsed();
        return Ok(summary);
    }
    let names: Vec<&str> = first.iter().map(|c| c.host.as_str()).collect();
    let pool = checked_pool(&config.nameservers, &names, &*progress).await?;
    let gap = config.fetch.ip_gap;
    let need = config.fetch.total_timeout + gap + Duration::from_secs(1);
    let sharing = Sharing {
        holds: holds.clone(),
        hold: need * 2,
        need,
    };
    let h = Arc::new(Harvester::shared(config.fetch.clone(), pool, sharing)?);
    // Addresses idle here, or wanted by another worker, given back.
    let sweeper = {
        let h = h.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(SWEEP_EVERY).await;
                h.sweep().await;
            }
        })
    };
    // The hosts claimed and not yet released: the leases to renew.
    let working: Arc<Mutex<HashSet<String>>> =
        Arc::new(Mutex::new(first.iter().map(|c| c.host.clone()).collect()));

    // The writer: attempts recorded and their hosts released, in batches.
    let (tx, rx) = crossbeam_channel::bounded::<Fetch>(concurrency * 4);
    let writer = {
        let (progress, worker, working) = (progress.clone(), worker.clone(), working.clone());
        let period = i64::try_from(config.period.as_secs()).unwrap_or(i64::MAX / 4);
        let lease = config.lease;
        tokio::task::spawn_blocking(move || -> Result<Tally, Error> {
            let mut tally = Tally::default();
            let mut batch: Vec<Attempt> = Vec::with_capacity(BATCH);
            let mut forward: Vec<(String, String, String)> = Vec::new();
            let mut last = Instant::now();
            // Since when the oldest host to hand on waits.
            let mut forward_since = Instant::now();
            loop {
                let wait = if forward.is_empty() {
                    FLUSH_EVERY
                } else {
                    FORWARD_EVERY.saturating_sub(forward_since.elapsed())
                };
                let next = rx.recv_timeout(wait);
                let ended = matches!(next, Err(crossbeam_channel::RecvTimeoutError::Disconnected));
                match next {
                    Ok(Fetch::Done(a)) => {
                        tally.add(&a);
                        batch.push(*a);
                    }
                    Ok(Fetch::Forward {
                        host,
                        holder,
                        address,
                    }) => {
                        if forward.is_empty() {
                            forward_since = Instant::now();
                        }
                        forward.push((host, holder, address.to_string()));
                    }
                    Err(_) => {}
                }
                // Hosts handed on go soon, in batches: their new holder is
                // busy with their address now.
                if !forward.is_empty()
                    && (ended
                        || forward.len() >= FORWARD_BATCH
                        || forward_since.elapsed() >= FORWARD_EVERY)
                {
                    patiently(|| {
                        writer_store.frontier_forward(
                            &worker,
                            &forward,
                            lease,
                            botscope_os::unix_now(),
                        )
                    })?;
                    let mut w = working.lock().unwrap_or_else(|e| e.into_inner());
                    for (h, _, _) in forward.drain(..) {
                        w.remove(&h);
                    }
                }
                if !batch.is_empty()
                    && (ended || batch.len() >= BATCH || last.elapsed() >= FLUSH_EVERY)
                {
                    let changed = patiently(|| writer_store.record_batch(Some(run), &batch))?;
                    let done: Vec<Done> = batch
                        .iter()
                        .zip(changed)
                        .map(|(a, changed)| done(a, changed))
                        .collect();
                    patiently(|| writer_store.frontier_release(&worker, &done, period))?;
                    {
                        let mut w = working.lock().unwrap_or_else(|e| e.into_inner());
                        for d in &done {
                            w.remove(&d.host);
                        }
                    }
                    batch.clear();
                    last = Instant::now();
                    progress.recorded(&tally);
                }
                if ended {
                    patiently(|| writer_store.finish_run(run, botscope_os::unix_now()))?;
                    return Ok(tally);
                }
            }
        })
    };

    // Renewals: every third of the lease, while the worker holds hosts.
    let renewer = {
        let (c, w, lease) = (claims.clone(), worker.clone(), config.lease);
        let working = working.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(lease / 3).await;
                let (c, w) = (c.clone(), w.clone());
                let hosts: Vec<String> = working
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .iter()
                    .cloned()
                    .collect();
                let _ = blocking(move || {
                    let hosts: Vec<&str> = hosts.iter().map(String::as_str).collect();
                    c.frontier_renew(&w, &hosts, lease, botscope_os::unix_now())
                })
                .await;
            }
        })
    };

    // The claims, feeding the fetchers as they take hosts.
    let (jobs_tx, jobs) = tokio::sync::mpsc::channel::<Job>(batch);
    let producer = {
        let (claims, worker, config) = (claims.clone(), worker.clone(), config.clone());
        let (working, holds) = (working.clone(), holds.clone());
        tokio::spawn(async move {
            let (mut claimed, mut n_claims) = (0u64, 0u64);
            let mut next = first;
            let claiming = async {
                loop {
                    if !next.is_empty() {
                        let hosts: Vec<String> = next.iter().map(|c| c.host.clone()).collect();
                        let c = claims.clone();
                        let mut previous = blocking(move || {
                            let names: Vec<&str> = hosts.iter().map(String::as_str).collect();
                            patiently(|| c.previous_of(&names))
                        })
                        .await?;
                        for c in std::mem::take(&mut next) {
                            let job = Job {
                                rank: c.rank,
                                previous: previous.remove(&c.host),
                                address: c.address.as_deref().and_then(|a| a.parse().ok()),
                                host: c.host,
                            };
                            if jobs_tx.send(job).await.is_err() {
                                return Ok((claimed, n_claims));
                            }
                        }
                    }
                    // Stop claiming on shutdown (hosts handed here meanwhile
                    // run out of lease and are claimed again). Else first the
                    // hosts other workers handed here, then a claim, waiting
                    // when nothing is due.
                    if futures_now(&mut stop) {
                        return Ok((claimed, n_claims));
                    }
                    let (c, w, lease) = (claims.clone(), worker.clone(), config.lease);
                    next = blocking(move || {
                        patiently(|| {
                            c.frontier_take_forwarded(&w, batch, lease, botscope_os::unix_now())
                        })
                    })
                    .await?;
                    if !next.is_empty() {
                        taken(&working, &next);
                        continue;
                    }
                    let (c, w, lease) = (claims.clone(), worker.clone(), config.lease);
                    let members = holds.members();
                    next = blocking(move || {
                        patiently(|| {
                            c.frontier_claim_among(
                                &w,
                                &members,
                                batch,
                                lease,
                                botscope_os::unix_now(),
                            )
                        })
                    })
                    .await?;
                    if next.is_empty() {
                        let c = claims.clone();
                        if config.once
                            && blocking(move || {
                                patiently(|| c.frontier_round_over(botscope_os::unix_now()))
                            })
                            .await?
                        {
                            return Ok((claimed, n_claims));
                        }
                        // Short naps while this worker has hosts out, or
                        // while other workers are at work: they may hand it
                        // hosts meanwhile.
                        let busy = !working.lock().unwrap_or_else(|e| e.into_inner()).is_empty();
                        let others = holds.members().len() > 1;
                        let nap = if busy || others {
                            poll(&config).min(FORWARD_POLL)
                        } else {
                            poll(&config)
                        };
                        tokio::select! {
                            () = &mut stop => return Ok((claimed, n_claims)),
                            () = tokio::time::sleep(nap) => {}
                        }
                    } else {
                        claimed += next.len() as u64;
                        n_claims += 1;
                        taken(&working, &next);
                    }
                }
            };
            let r: Result<(u64, u64), StoreError> = claiming.await;
            // No more claims: the others stop handing hosts here, and those
            // handed here and not taken are due again for them.
            heart.abort();
            let w = worker.clone();
            let _ = blocking(move || {
                patiently(|| holds.stores[0].workers_leave(&w, botscope_os::unix_now()))
            })
            .await;
            r
        })
    };
    fetch_stream(h.clone(), jobs, concurrency, true, tx).await;
    let claimed: Result<(u64, u64), StoreError> = producer.await.map_err(|_| Error::Writer)?;
    let tally = writer.await.map_err(|_| Error::Writer)??;
    renewer.abort();
    sweeper.abort();
    // What this worker still holds is given back for the others (and
    // hosts handed here since it left are due again).
    h.give_back_addresses().await;
    {
        let (c, w) = (claims.clone(), worker.clone());
        let _ = blocking(move || c.workers_leave(&w, botscope_os::unix_now())).await;
    }
    let (more, n) = claimed?;
    summary.claimed += more;
    summary.claims += n;
    summary.tally = tally;
    summary.elapsed = started.elapsed();
    Ok(summary)
}

/// Hosts now this worker's to fetch, renew and release.
fn taken(working: &Mutex<HashSet<String>>, hosts: &[botscope_store::Claimed]) {
    working
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .extend(hosts.iter().map(|c| c.host.clone()));
}

/// True when `f` has completed (polled once, without waiting).
fn futures_now<F: Future<Output = ()> + Unpin>(f: &mut F) -> bool {
    let waker = std::task::Waker::noop();
    let mut cx = std::task::Context::from_waker(waker);
    std::pin::Pin::new(f).poll(&mut cx).is_ready()
}

/// The wait between claims that found nothing: in a single round, short
/// (another worker's hosts may fall due when its lease runs out).
fn poll(config: &WorkerConfig) -> Duration {
    if config.once {
        (config.lease / 4).clamp(Duration::from_millis(200), Duration::from_secs(5))
    } else {
        config.idle
    }
}

/// How an attempt went, for its host's next due time.
fn done(a: &Attempt, changed: bool) -> Done {
    Done {
        host: a.host.clone(),
        time: a.time,
        failed: a.unreachable(),
        changed,
        retry_at: matches!(a.status, Some(429 | 503))
            .then(|| a.time + i64::try_from(a.expires_in.unwrap_or(0)).unwrap_or(0)),
        address: a.address.as_deref().and_then(|s| s.parse().ok()),
    }
}
