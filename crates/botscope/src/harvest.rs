//! `botscope harvest`: robots.txt from many hosts into the store.
//!
//! Hosts are read and checked first (duplicates and junk lines are
//! reported, not fatal). Then three stages run side by side: DNS
//! resolution ahead of fetching, `--concurrency` fetchers, and one writer
//! that records attempts in the store in batches (one transaction each).
//! After a crash, `--resume` continues the same run: hosts with a
//! recorded attempt are skipped, and a host fetched again adds an attempt
//! but never a second version of the same content.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::IsTerminal;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::mpsc as std_mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};
use botscope_dns::{HickoryLookup, Pool};
use botscope_harvest::{Config, DEFAULT_USER_AGENT, Harvester, read_host_list};
use botscope_robotstxt::FetchPolicy;
use botscope_store::{Attempt, NewRun, Previous, SqliteStore, Store, content_hash};

use crate::cli::HarvestArgs;
use crate::exit::Outcome;

/// Attempts per store transaction.
const BATCH: usize = 500;
/// The longest a result waits before its batch is written.
const FLUSH_EVERY: Duration = Duration::from_secs(1);
/// Check queries per nameserver before the run.
const PROBES: usize = 5;

/// `30s`, `500ms`, `15m`, `12h`, `7d` (a bare number is seconds).
pub fn parse_duration(s: &str) -> Result<Duration> {
    let s = s.trim();
    let split = s
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(s.len());
    let (n, unit) = s.split_at(split);
    let n: f64 = n
        .parse()
        .with_context(|| format!("{s:?} is not a duration (such as 30s, 15m, 12h, 7d)"))?;
    let secs = match unit.trim() {
        "ms" => n / 1000.0,
        "" | "s" => n,
        "m" => n * 60.0,
        "h" => n * 3600.0,
        "d" => n * 86_400.0,
        u => bail!("{s:?}: unknown unit {u:?} (ms, s, m, h, d)"),
    };
    if !secs.is_finite() || secs < 0.0 {
        bail!("{s:?} is not a duration");
    }
    Ok(Duration::from_secs_f64(secs))
}

fn nameservers(args: &[String]) -> Result<Vec<SocketAddr>> {
    if args.is_empty() {
        return botscope_dns::system_nameservers().context("no --dns given");
    }
    botscope_dns::parse_nameservers(args).context("--dns")
}

/// Seconds since the epoch, now.
pub(crate) fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// Counts for the progress line and the summary.
#[derive(Debug, Default)]
struct Tally {
    done: u64,
    outcomes: BTreeMap<String, u64>,
    errors: BTreeMap<String, u64>,
}

impl Tally {
    fn add(&mut self, a: &Attempt) {
        self.done += 1;
        *self.outcomes.entry(a.outcome.clone()).or_default() += 1;
        if let Some(e) = &a.error_class {
            *self.errors.entry(e.clone()).or_default() += 1;
        }
    }

    fn line(&self) -> String {
        let join = |m: &BTreeMap<String, u64>| {
            m.iter()
                .map(|(k, n)| format!("{k} {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        if self.errors.is_empty() {
            join(&self.outcomes)
        } else {
            format!("{}; errors: {}", join(&self.outcomes), join(&self.errors))
        }
    }
}

/// `harvest`.
pub async fn run(a: &HarvestArgs) -> Result<Outcome> {
    let list = if a.hosts.as_os_str() == "-" {
        read_host_list(std::io::stdin().lock()).context("reading the host list")?
    } else {
        let f = std::fs::File::open(&a.hosts)
            .with_context(|| format!("cannot open {}", a.hosts.display()))?;
        read_host_list(std::io::BufReader::new(f))
            .with_context(|| format!("reading {}", a.hosts.display()))?
    };
    if list.duplicates > 0 {
        eprintln!("botscope: {} duplicate hosts skipped", list.duplicates);
    }
    if list.junk_count > 0 {
        let samples: Vec<String> = list
            .junk
            .iter()
            .map(|(n, l)| format!("line {n}: {l:?}"))
            .collect();
        eprintln!(
            "botscope: {} lines are not host names, skipped ({})",
            list.junk_count,
            samples.join("; ")
        );
    }
    if list.hosts.is_empty() {
        bail!("no host names in {}", a.hosts.display());
    }
    let input_hash = content_hash(
        list.hosts
            .iter()
            .map(|(_, h)| h.as_str())
            .collect::<Vec<_>>()
            .join("\n")
            .as_bytes(),
    );
    let mut store = SqliteStore::open(&a.db.db)?;
    let user_agent = a
        .user_agent
        .clone()
        .unwrap_or_else(|| DEFAULT_USER_AGENT.to_owned());
    let (run, done) = if a.resume {
        let Some(run) = store.unfinished_run(&input_hash)? else {
            bail!(
                "--resume: no unfinished run over this host list in {}",
                a.db.db.display()
            );
        };
        (run, store.hosts_done(run)?)
    } else {
        let run = store.begin_run(&NewRun {
            input: a.hosts.display().to_string(),
            input_hash,
            user_agent: user_agent.clone(),
            hosts: list.hosts.len() as u64,
            started: now(),
        })?;
        (run, HashSet::new())
    };
    let previous: HashMap<String, Previous> = store.previous()?;
    let older_than = a.older_than.as_deref().map(parse_duration).transpose()?;
    let t = now();
    let mut skipped_fresh = 0u64;
    let mut skipped_later = 0u64;
    let todo: Vec<(Option<u64>, String)> = list
        .hosts
        .into_iter()
        .filter(|(_, h)| !done.contains(h))
        .filter(|(_, h)| {
            let Some(p) = previous.get(h) else {
                return true;
            };
            if p.retry_at.is_some_and(|r| r > t) {
                // The site asked to come back later (429/503 Retry-After).
                skipped_later += 1;
                return false;
            }
            match (a.refresh, older_than, p.last_attempt) {
                (true, Some(age), Some(last)) if t - last < age.as_secs() as i64 => {
                    skipped_fresh += 1;
                    false
                }
                _ => true,
            }
        })
        .collect();
    if !done.is_empty() {
        eprintln!(
            "botscope: resuming run {run}: {} hosts already done",
            done.len()
        );
    }
    if skipped_fresh > 0 {
        eprintln!(
            "botscope: {skipped_fresh} hosts fetched more recently than --older-than, skipped"
        );
    }
    if skipped_later > 0 {
        eprintln!(
            "botscope: {skipped_later} hosts asked to be fetched later (Retry-After), skipped"
        );
    }
    let mut extra_roots = Vec::new();
    if let Some(ca) = &a.ca_file {
        use rustls_pki_types::pem::PemObject;
        let pem = std::fs::read(ca).with_context(|| format!("cannot read {}", ca.display()))?;
        for c in rustls_pki_types::CertificateDer::pem_slice_iter(&pem) {
            extra_roots
                .push(c.with_context(|| format!("{}: not a PEM certificate", ca.display()))?);
        }
    }
    let cfg = Config {
        user_agent,
        connect_timeout: parse_duration(&a.connect_timeout)?,
        total_timeout: parse_duration(&a.timeout)?,
        ip_gap: parse_duration(&a.ip_gap)?,
        allow_private: a.allow_private,
        http_port: a.http_port,
        https_port: a.https_port,
        policy: FetchPolicy::for_semantics(a.semantics.into()),
        extra_roots,
    };
    let servers = nameservers(&a.dns)?;
    let total = todo.len() as u64;
    let started = Instant::now();
    let (tx, rx) = std_mpsc::sync_channel::<Attempt>(a.concurrency.max(1) * 4);
    let pb = (!a.no_progress && std::io::stderr().is_terminal()).then(|| {
        let pb = indicatif::ProgressBar::new(total);
        pb.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} {per_sec} ETA {eta}\n{msg}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        pb.set_draw_target(indicatif::ProgressDrawTarget::stderr());
        pb
    });
    // The writer: batches into the store, on its own thread.
    let writer_pb = pb.clone();
    let writer = std::thread::spawn(move || -> Result<(Tally, SqliteStore)> {
        let mut tally = Tally::default();
        let mut batch: Vec<Attempt> = Vec::with_capacity(BATCH);
        let mut last = Instant::now();
        loop {
            let next = rx.recv_timeout(FLUSH_EVERY);
            let ended = matches!(next, Err(std_mpsc::RecvTimeoutError::Disconnected));
            if let Ok(a) = next {
                tally.add(&a);
                batch.push(a);
            }
            if !batch.is_empty() && (ended || batch.len() >= BATCH || last.elapsed() >= FLUSH_EVERY)
            {
                store.record(Some(run), &batch)?;
                batch.clear();
                last = Instant::now();
                if let Some(pb) = &writer_pb {
                    pb.set_position(tally.done);
                    pb.set_message(tally.line());
                }
            }
            if ended {
                return Ok((tally, store));
            }
        }
    });
    let concurrency = a.concurrency.max(1);
    let fetched: Result<()> = async move {
        let probes: Vec<String> = todo.iter().take(PROBES).map(|(_, h)| h.clone()).collect();
        let timeout = Duration::from_secs(2);
        let mut lookups = Vec::new();
        for s in &servers {
            lookups.push((*s, HickoryLookup::new(&[*s], timeout)?));
        }
        let (pool, report) = Pool::check(lookups, &probes).await?;
        for r in report.iter().filter(|r| !r.usable) {
            eprintln!(
                "botscope: nameserver {} left out: {}",
                r.addr,
                r.problem.as_deref().unwrap_or("?")
            );
        }
        let h = Arc::new(Harvester::new(cfg, pool)?);
        let previous = Arc::new(previous);
        // DNS ahead of fetching: hosts go to the fetchers once resolved.
        let (ready_tx, ready_rx) =
            tokio::sync::mpsc::channel::<(Option<u64>, String)>(concurrency * 4);
        let resolver = {
            let h = h.clone();
            tokio::spawn(async move {
                let mut set = tokio::task::JoinSet::new();
                for (rank, host) in todo {
                    while set.len() >= concurrency * 2 {
                        if let Some(Ok(item)) = set.join_next().await
                            && ready_tx.send(item).await.is_err()
                        {
                            return;
                        }
                    }
                    let h = h.clone();
                    set.spawn(async move {
                        h.resolve_ahead(&host).await;
                        (rank, host)
                    });
                }
                while let Some(r) = set.join_next().await {
                    if let Ok(item) = r
                        && ready_tx.send(item).await.is_err()
                    {
                        return;
                    }
                }
            })
        };
        let ready_rx = Arc::new(tokio::sync::Mutex::new(ready_rx));
        let mut fetchers = Vec::new();
        for _ in 0..concurrency {
            let (h, rx, tx, previous) = (h.clone(), ready_rx.clone(), tx.clone(), previous.clone());
            fetchers.push(tokio::spawn(async move {
                loop {
                    let next = rx.lock().await.recv().await;
                    let Some((rank, host)) = next else { break };
                    let attempt = h.fetch(&host, rank, previous.get(&host)).await;
                    let tx = tx.clone();
                    // The writer may be busy committing: wait off the runtime.
                    if !tokio::task::spawn_blocking(move || tx.send(attempt).is_ok())
                        .await
                        .unwrap_or(false)
                    {
                        break;
                    }
                }
            }));
        }
        drop(tx);
        let _ = resolver.await;
        for f in fetchers {
            let _ = f.await;
        }
        Ok(())
    }
    .await;
    let (tally, mut store) = writer
        .join()
        .map_err(|_| anyhow::anyhow!("the store writer stopped"))??;
    // A run that failed stays unfinished: --resume continues it.
    fetched?;
    store.finish_run(run, now())?;
    if let Some(pb) = pb {
        pb.finish_and_clear();
    }
    let secs = started.elapsed().as_secs_f64();
    eprintln!(
        "harvested {} hosts in {:.1} s ({:.0} hosts/s): {}",
        tally.done,
        secs,
        tally.done as f64 / secs.max(1e-9),
        tally.line()
    );
    Ok(Outcome::Ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30s").ok(), Some(Duration::from_secs(30)));
        assert_eq!(
            parse_duration("500ms").ok(),
            Some(Duration::from_millis(500))
        );
        assert_eq!(
            parse_duration("7d").ok(),
            Some(Duration::from_secs(7 * 86400))
        );
        assert_eq!(parse_duration("90").ok(), Some(Duration::from_secs(90)));
        assert!(parse_duration("soon").is_err());
        assert!(parse_duration("5y").is_err());
    }
}
