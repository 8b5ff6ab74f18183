//! A whole harvest run: the hosts to (re)fetch chosen from the store's
//! memory ([`select`], pure), a checked DNS pool, DNS resolved ahead of
//! fetching, `concurrency` fetches at a time, and one writer recording
//! attempts in the store in batches (one transaction each) on a blocking
//! thread of the caller's runtime. A run that fails stays unfinished in the
//! store, so that `resume` continues it; a host fetched again adds an
//! attempt but never a second version of the same content.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use botscope_dns::{HickoryLookup, Pool, ServerCheck};
use botscope_store::{Attempt, NewRun, Previous, RunId, Store, content_hash};

use crate::{Config, Error, Fetch, Harvester, HostList};

/// Attempts per store transaction.
pub(crate) const BATCH: usize = 500;
/// The longest a result waits before its batch is written.
pub(crate) const FLUSH_EVERY: Duration = Duration::from_secs(1);
/// Check queries per nameserver before the run.
const PROBES: usize = 5;
/// Time for one check query.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// How a run goes.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// How each host is fetched.
    pub fetch: Config,
    /// Hosts fetched at once.
    pub concurrency: usize,
    /// Nameservers to check and use.
    pub nameservers: Vec<SocketAddr>,
    /// Continue the last unfinished run over the same host list.
    pub resume: bool,
    /// Skip hosts fetched more recently than this.
    pub refresh_older_than: Option<Duration>,
    /// What the host list is called (recorded with the run).
    pub input: String,
}

/// Counts of the attempts made.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    /// Attempts recorded.
    pub done: u64,
    /// By outcome (`parse`, `allow-all` …).
    pub outcomes: BTreeMap<String, u64>,
    /// By error class.
    pub errors: BTreeMap<String, u64>,
}

impl Tally {
    pub(crate) fn add(&mut self, a: &Attempt) {
        self.done += 1;
        *self.outcomes.entry(a.outcome.clone()).or_default() += 1;
        if let Some(e) = &a.error_class {
            *self.errors.entry(e.clone()).or_default() += 1;
        }
    }
}

impl std::fmt::Display for Tally {
    /// `parse 3, allow-all 1; errors: timeout 1`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let join = |m: &BTreeMap<String, u64>| {
            m.iter()
                .map(|(k, n)| format!("{k} {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        f.write_str(&join(&self.outcomes))?;
        if !self.errors.is_empty() {
            write!(f, "; errors: {}", join(&self.errors))?;
        }
        Ok(())
    }
}

/// Which hosts a run fetches.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    /// To fetch, in list order.
    pub todo: Vec<(Option<u64>, String)>,
    /// Already done in the run being resumed.
    pub already_done: u64,
    /// Fetched more recently than the refresh age.
    pub fresh: u64,
    /// Asked to be fetched later (`Retry-After` not yet passed).
    pub later: u64,
    /// Failed last time and still inside their backoff.
    pub backing_off: u64,
    /// Failed last time and retried now.
    pub retried: u64,
}

impl Selection {
    /// What a reader should know of the selection in `run`.
    pub fn notes(&self, run: RunId) -> Vec<String> {
        let mut v = Vec::new();
        if self.already_done > 0 {
            v.push(format!(
                "resuming run {run}: {} hosts already done",
                self.already_done
            ));
        }
        if self.fresh > 0 {
            v.push(format!(
                "{} hosts fetched more recently than --older-than, skipped",
                self.fresh
            ));
        }
        if self.later > 0 {
            v.push(format!(
                "{} hosts asked to be fetched later (Retry-After), skipped",
                self.later
            ));
        }
        if self.retried > 0 {
            v.push(format!(
                "{} hosts that failed last time retried",
                self.retried
            ));
        }
        if self.backing_off > 0 {
            v.push(format!(
                "{} hosts failing for a while wait out their backoff, skipped",
                self.backing_off
            ));
        }
        v
    }
}

/// `harvested N hosts in S s (R hosts/s): outcomes`.
impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let secs = self.elapsed.as_secs_f64();
        write!(
            f,
            "harvested {} hosts in {secs:.1} s ({:.0} hosts/s): {}",
            self.tally.done,
            self.tally.done as f64 / secs.max(1e-9),
            self.tally
        )
    }
}

/// The wait before retrying a host that failed (no response, 429, 5xx)
/// at its last attempt: as long as it has been failing, so the waits
/// double (0 after the first failure, then 1×, 2×, 4× the first gap …),
/// never longer than `refresh`.
pub fn backoff(p: &Previous, refresh: Duration) -> Option<Duration> {
    let (since, last) = (p.unreachable_since?, p.last_attempt?);
    let failing = Duration::from_secs(u64::try_from(last - since).unwrap_or(0));
    Some(failing.min(refresh))
}

/// Chooses the hosts to fetch at `now`: not those done in the resumed run,
/// not those whose `Retry-After` has not passed, and with `refresh`, not
/// those fetched less than that long ago, unless the last attempt failed:
/// a failed host is retried once its [`backoff`] has passed.
pub fn select(
    hosts: Vec<(Option<u64>, String)>,
    done: &HashSet<String>,
    previous: &HashMap<String, Previous>,
    now: i64,
    refresh: Option<Duration>,
) -> Selection {
    let mut s = Selection::default();
    for (rank, host) in hosts {
        if done.contains(&host) {
            s.already_done += 1;
            continue;
        }
        if let Some(p) = previous.get(&host) {
            if p.retry_at.is_some_and(|r| r > now) {
                s.later += 1;
                continue;
            }
            if let (Some(age), Some(last)) = (refresh, p.last_attempt) {
                let since_last = now - last;
                if let Some(wait) = backoff(p, age) {
                    if since_last < wait.as_secs() as i64 {
                        s.backing_off += 1;
                        continue;
                    }
                    s.retried += 1;
                } else if since_last < age.as_secs() as i64 {
                    s.fresh += 1;
                    continue;
                }
            }
        }
        s.todo.push((rank, host));
    }
    s
}

/// What a run tells as it goes. Called from the runtime's threads.
pub trait Progress: Send + Sync {
    /// The selection is made; `total` hosts are to be fetched.
    fn selected(&self, run: RunId, selection: &Selection) {
        let _ = (run, selection);
    }
    /// A nameserver was checked (usable or left out, and why).
    fn nameserver(&self, check: &ServerCheck) {
        let _ = check;
    }
    /// A batch was written; the counts so far.
    fn recorded(&self, tally: &Tally) {
        let _ = tally;
    }
}

/// Progress that nobody watches.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;

impl Progress for NoProgress {}

/// How a run ended.
#[derive(Debug, Clone)]
pub struct Summary {
    /// The run.
    pub run: RunId,
    /// What was selected.
    pub selection: Selection,
    /// The attempts.
    pub tally: Tally,
    /// Time from the first fetch to the last record.
    pub elapsed: Duration,
}

/// Harvests the hosts of `list` into `store`, inside the caller's Tokio
/// runtime, and returns the summary. The store comes back with it.
pub async fn run<S: Store + Send + 'static>(
    list: HostList,
    mut store: S,
    config: RunConfig,
    progress: Arc<dyn Progress>,
) -> Result<(Summary, S), Error> {
    if list.hosts.is_empty() {
        return Err(Error::NoHosts(config.input));
    }
    let input_hash = content_hash(
        list.hosts
            .iter()
            .map(|(_, h)| h.as_str())
            .collect::<Vec<_>>()
            .join("\n")
            .as_bytes(),
    );
    let (run, done) = if config.resume {
        let run = store
            .unfinished_run(&input_hash)?
            .ok_or(Error::NothingToResume)?;
        (run, store.hosts_done(run)?)
    } else {
        let run = store.begin_run(&NewRun {
            input: config.input.clone(),
            input_hash,
            user_agent: config.fetch.user_agent.clone(),
            hosts: list.hosts.len() as u64,
            started: botscope_os::unix_now(),
            crawl: None,
        })?;
        (run, HashSet::new())
    };
    let previous = store.previous()?;
    let selection = select(
        list.hosts,
        &done,
        &previous,
        botscope_os::unix_now(),
        config.refresh_older_than,
    );
    progress.selected(run, &selection);
    let concurrency = config.concurrency.max(1);
    let started = Instant::now();

    // The writer: batches into the store, on a blocking thread.
    let (tx, rx) = crossbeam_channel::bounded::<Fetch>(concurrency * 4);
    let writer_progress = progress.clone();
    let writer = tokio::task::spawn_blocking(move || -> Result<(Tally, S), Error> {
        let mut tally = Tally::default();
        let mut batch: Vec<Attempt> = Vec::with_capacity(BATCH);
        let mut last = Instant::now();
        loop {
            let next = rx.recv_timeout(FLUSH_EVERY);
            let ended = matches!(next, Err(crossbeam_channel::RecvTimeoutError::Disconnected));
            // (Nothing is handed on without shared addresses.)
            if let Ok(Fetch::Done(a)) = next {
                tally.add(&a);
                batch.push(*a);
            }
            if !batch.is_empty() && (ended || batch.len() >= BATCH || last.elapsed() >= FLUSH_EVERY)
            {
                store.record(Some(run), &batch)?;
                batch.clear();
                last = Instant::now();
                writer_progress.recorded(&tally);
            }
            if ended {
                return Ok((tally, store));
            }
        }
    });
    let fetched = fetch_all(
        &selection.todo,
        previous,
        config,
        concurrency,
        tx,
        &*progress,
    )
    .await;
    let (tally, mut store) = writer.await.map_err(|_| Error::Writer)??;
    // A run that failed stays unfinished: resuming continues it.
    fetched?;
    store.finish_run(run, botscope_os::unix_now())?;
    Ok((
        Summary {
            run,
            selection,
            tally,
            elapsed: started.elapsed(),
        },
        store,
    ))
}

/// The DNS check, then resolution ahead of `concurrency` fetchers.
async fn fetch_all(
    todo: &[(Option<u64>, String)],
    previous: HashMap<String, Previous>,
    config: RunConfig,
    concurrency: usize,
    tx: crossbeam_channel::Sender<Fetch>,
    progress: &dyn Progress,
) -> Result<(), Error> {
    let names: Vec<&str> = todo.iter().map(|(_, h)| h.as_str()).collect();
    let pool = checked_pool(&config.nameservers, &names, progress).await?;
    let h = Arc::new(Harvester::new(config.fetch, pool)?);
    let (jobs_tx, jobs) = tokio::sync::mpsc::channel::<Job>(concurrency * 4);
    let mut previous = previous;
    let todo = todo.to_vec();
    let feeder = tokio::spawn(async move {
        for (rank, host) in todo {
            let previous = previous.remove(&host);
            let job = Job {
                rank,
                host,
                previous,
                address: None,
            };
            if jobs_tx.send(job).await.is_err() {
                return;
            }
        }
    });
    fetch_stream(h, jobs, concurrency, false, tx).await;
    let _ = feeder.await;
    Ok(())
}

/// The nameservers checked with up to [`PROBES`] of `hosts`' names
/// (address literals ask no nameserver, and a list of literals alone
/// needs no check at all).
pub(crate) async fn checked_pool(
    nameservers: &[SocketAddr],
    hosts: &[&str],
    progress: &dyn Progress,
) -> Result<Pool<HickoryLookup>, Error> {
    let probes: Vec<String> = hosts
        .iter()
        .filter(|h| {
            h.trim_matches(['[', ']'])
                .parse::<std::net::IpAddr>()
                .is_err()
        })
        .take(PROBES)
        .map(|h| (*h).to_owned())
        .collect();
    let mut lookups = Vec::new();
    for s in nameservers {
        lookups.push((*s, HickoryLookup::new(&[*s], PROBE_TIMEOUT)?));
    }
    let (pool, report) = Pool::check(lookups, &probes).await?;
    for r in &report {
        progress.nameserver(r);
    }
    Ok(pool)
}

/// A host to fetch, with what the store remembers of it.
#[derive(Debug)]
pub(crate) struct Job {
    pub rank: Option<u64>,
    pub host: String,
    pub previous: Option<Previous>,
    /// Already resolved (by the worker that handed the host over).
    pub address: Option<std::net::IpAddr>,
}

/// Fetches the hosts of `jobs` as they come, DNS resolved ahead of
/// `concurrency` fetchers, each attempt (or with `forward`, a host handed
/// on, [`Harvester::fetch_or_forward`]) sent to the writer `tx`; returns
/// when `jobs` is closed and every fetch is over.
pub(crate) async fn fetch_stream(
    h: Arc<Harvester<HickoryLookup>>,
    mut jobs: tokio::sync::mpsc::Receiver<Job>,
    concurrency: usize,
    forward: bool,
    tx: crossbeam_channel::Sender<Fetch>,
) {
    let (ready_tx, mut ready_rx) = tokio::sync::mpsc::channel::<Job>(concurrency * 4);
    let resolver = {
        let h = h.clone();
        tokio::spawn(async move {
            // Resolved hosts go on as soon as they are (a worker's jobs
            // never close while its hosts are out), at most twice
            // `concurrency` resolving at once.
            let mut set = tokio::task::JoinSet::new();
            let mut open = true;
            while open || !set.is_empty() {
                tokio::select! {
                    biased;
                    Some(r) = set.join_next(), if !set.is_empty() => {
                        if let Ok(job) = r
                            && ready_tx.send(job).await.is_err()
                        {
                            return;
                        }
                    }
                    job = jobs.recv(), if open && set.len() < concurrency * 2 => match job {
                        Some(job) => {
                            let h = h.clone();
                            set.spawn(async move {
                                match job.address {
                                    Some(ip) => h.known_address(&job.host, ip),
                                    None => h.resolve_ahead(&job.host).await,
                                }
                                job
                            });
                        }
                        None => open = false,
                    },
                }
            }
        })
    };
    // At most `concurrency` fetches at once, each sending its attempt to
    // the writer (off the runtime: the writer may be busy committing).
    let permits = Arc::new(tokio::sync::Semaphore::new(concurrency));
    let mut fetches = tokio::task::JoinSet::new();
    while let Some(job) = ready_rx.recv().await {
        let Ok(permit) = permits.clone().acquire_owned().await else {
            break;
        };
        let (h, tx) = (h.clone(), tx.clone());
        fetches.spawn(async move {
            // A host handed here is not handed on again: it waits for its
            // address (which then is wanted from its holder), so that no
            // host goes round between workers.
            let forward = forward && job.address.is_none();
            let f = h
                .fetch_or_forward(&job.host, job.rank, job.previous.as_ref(), forward)
                .await;
            let _ = tokio::task::spawn_blocking(move || tx.send(f).is_ok()).await;
            drop(permit);
        });
        // Reap what has finished, so the set stays small.
        while fetches.try_join_next().is_some() {}
    }
    drop(tx);
    let _ = resolver.await;
    while fetches.join_next().await.is_some() {}
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts(names: &[&str]) -> Vec<(Option<u64>, String)> {
        names.iter().map(|n| (None, (*n).to_owned())).collect()
    }

    #[test]
    fn selection_for_resume_refresh_and_retry_after() {
        let now = 1_000_000;
        let mut previous = HashMap::new();
        let seen = |last: i64, retry_at: Option<i64>| Previous {
            last_attempt: Some(last),
            retry_at,
            ..Previous::default()
        };
        previous.insert("old.test".to_owned(), seen(now - 7200, None));
        previous.insert("recent.test".to_owned(), seen(now - 60, None));
        previous.insert("busy.test".to_owned(), seen(now - 7200, Some(now + 10)));
        previous.insert("rested.test".to_owned(), seen(now - 7200, Some(now - 1)));
        let done: HashSet<String> = ["done.test".to_owned()].into();
        let all = hosts(&[
            "new.test",
            "done.test",
            "old.test",
            "recent.test",
            "busy.test",
            "rested.test",
        ]);

        let s = select(all.clone(), &done, &previous, now, None);
        let names: Vec<&str> = s.todo.iter().map(|(_, h)| h.as_str()).collect();
        assert_eq!(
            names,
            ["new.test", "old.test", "recent.test", "rested.test"]
        );
        assert_eq!((s.already_done, s.later, s.fresh), (1, 1, 0));

        let s = select(all, &done, &previous, now, Some(Duration::from_secs(3600)));
        let names: Vec<&str> = s.todo.iter().map(|(_, h)| h.as_str()).collect();
        assert_eq!(
            names,
            ["new.test", "old.test", "rested.test"],
            "list order kept"
        );
        assert_eq!((s.already_done, s.later, s.fresh), (1, 1, 1));
    }

    /// Every host failed a minute ago: a refresh retries them at once; one
    /// failing for two hours waits two hours (capped by the refresh age).
    #[test]
    fn failed_hosts_are_retried_with_backoff() {
        let now = 1_000_000;
        let failed = |since: i64, last: i64| Previous {
            last_attempt: Some(last),
            unreachable_since: Some(since),
            ..Previous::default()
        };
        let mut previous = HashMap::new();
        previous.insert("once.test".to_owned(), failed(now - 60, now - 60));
        previous.insert("long.test".to_owned(), failed(now - 7260, now - 60));
        previous.insert("long-ago.test".to_owned(), failed(now - 10_000, now - 8000));
        previous.insert(
            "fine.test".to_owned(),
            Previous {
                last_attempt: Some(now - 60),
                ..Previous::default()
            },
        );
        let all = hosts(&["once.test", "long.test", "long-ago.test", "fine.test"]);
        let day = Duration::from_secs(86_400);
        let s = select(all.clone(), &HashSet::new(), &previous, now, Some(day));
        let names: Vec<&str> = s.todo.iter().map(|(_, h)| h.as_str()).collect();
        assert_eq!(names, ["once.test", "long-ago.test"]);
        assert_eq!((s.retried, s.backing_off, s.fresh), (2, 1, 1));
        assert_eq!(
            backoff(&previous["long.test"], day),
            Some(Duration::from_secs(7200))
        );
        assert_eq!(
            backoff(&previous["long.test"], Duration::from_secs(600)),
            Some(Duration::from_secs(600)),
            "never longer than the refresh age"
        );
        assert_eq!(backoff(&previous["fine.test"], day), None);
    }
}
