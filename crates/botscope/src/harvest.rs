//! `botscope harvest`: robots.txt from many hosts into the store. The run
//! is botscope-harvest's; this module reads the host list, turns the flags
//! into its configuration, and draws the progress and the summary.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use botscope_dns::ServerCheck;
use botscope_harvest::{Progress, RunConfig, Selection, Tally, read_host_list};
use botscope_store::{Frontier, RunId, StoreLocator};

use crate::cli::HarvestArgs;
use crate::exit::ExitStatus;
use crate::settings::{FetchSettings, Settings};

/// What the run says as it goes: notes on standard error, a bar on a
/// terminal.
struct Bar(Option<indicatif::ProgressBar>);

impl Progress for Bar {
    fn selected(&self, run: RunId, s: &Selection) {
        for note in s.notes(run) {
            eprintln!("botscope: {note}");
        }
        if let Some(pb) = &self.0 {
            pb.set_length(s.todo.len() as u64);
        }
    }

    fn nameserver(&self, r: &ServerCheck) {
        if !r.usable {
            eprintln!(
                "botscope: nameserver {} left out: {}",
                r.addr,
                r.problem.as_deref().unwrap_or("?")
            );
        }
    }

    fn recorded(&self, tally: &Tally) {
        if let Some(pb) = &self.0 {
            pb.set_position(tally.done);
            pb.set_message(tally.to_string());
        }
    }
}

/// The host list of `path`, its notes told; empty is an error.
fn host_list(path: &std::path::Path) -> Result<botscope_harvest::HostList> {
    let list = read_host_list(crate::io::input(path)?)
        .with_context(|| format!("failed to read {}", crate::io::display(path)))?;
    for note in list.notes() {
        eprintln!("botscope: {note}");
    }
    if list.hosts.is_empty() {
        bail!("no host names in {}", crate::io::display(path));
    }
    Ok(list)
}

/// `harvest`.
pub async fn run(a: &HarvestArgs, settings: &Settings) -> Result<ExitStatus> {
    if let Some(worker) = &a.worker {
        return work(a, worker, settings).await;
    }
    let Some(hosts) = &a.hosts else {
        bail!("give a host list (or --worker NAME to work a PostgreSQL frontier)");
    };
    let list = host_list(hosts)?;
    let fetch = FetchSettings::resolve(&a.fetch, a.semantics, a.ip_gap)?;
    let config = RunConfig {
        nameservers: fetch.nameservers()?,
        fetch: fetch.config,
        concurrency: a.concurrency.max(1),
        resume: a.resume,
        refresh_older_than: if a.refresh { a.older_than } else { None },
        input: hosts.display().to_string(),
    };
    // Everything is checked before the store is opened (or created).
    let store = a.db.db.open()?;
    let progress = Arc::new(Bar(crate::progress::bar(
        settings,
        a.no_progress,
        0,
        "{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} {per_sec} ETA {eta}\n{msg}",
    )));
    let (summary, _) = match botscope_harvest::run(list, store, config, progress.clone()).await {
        Ok(done) => done,
        Err(botscope_harvest::Error::NothingToResume) => bail!(
            "--resume: no unfinished run over this host list in {}",
            a.db.db
        ),
        Err(e) => return Err(e.into()),
    };
    if let Some(pb) = &progress.0 {
        pb.finish_and_clear();
    }
    eprintln!("{summary}");
    Ok(ExitStatus::Success)
}

/// `harvest --worker NAME`: the shared frontier of a PostgreSQL store.
async fn work(a: &HarvestArgs, worker: &str, settings: &Settings) -> Result<ExitStatus> {
    anyhow::ensure!(
        a.db.db.is_postgres(),
        "{}: --worker works the shared frontier of a PostgreSQL store: give --db postgres://USER@HOST/DB",
        a.db.db
    );
    anyhow::ensure!(
        !worker.trim().is_empty() && worker.len() <= 200 && !worker.chars().any(char::is_control),
        "--worker: a name of 1 to 200 characters, without control characters"
    );
    let lease = a.lease;
    anyhow::ensure!(
        lease >= Duration::from_secs(3),
        "--lease: at least 3s (it is renewed every third)"
    );
    let fetch = FetchSettings::resolve(&a.fetch, a.semantics, a.ip_gap)?;
    let config = botscope_harvest::WorkerConfig {
        nameservers: fetch.nameservers()?,
        fetch: fetch.config,
        concurrency: a.concurrency.max(1),
        worker: worker.to_owned(),
        batch: a.batch.clamp(1, 100_000),
        lease,
        period: a.period,
        once: a.once,
        idle: a.idle,
    };
    // Everything is checked before the store is touched.
    let list = a.hosts.as_deref().map(host_list).transpose()?;
    let url = match &a.db.db {
        StoreLocator::Postgres(url) => url.clone(),
        StoreLocator::Sqlite(_) => unreachable!("checked above"),
    };
    if let Some(list) = list {
        let n = botscope_store::pg_blocking(|| -> Result<u64> {
            let s = botscope_store::PgStore::open(&url)?;
            Ok(s.frontier_add(&list.hosts, botscope_os::unix_now())?)
        })?;
        eprintln!(
            "botscope: {} hosts: {n} new in the frontier",
            list.hosts.len()
        );
    }
    let stop = crate::stop::stop_signal();
    let progress = Arc::new(Bar(crate::progress::bar(
        settings,
        a.no_progress,
        0,
        "{spinner} [{elapsed_precise}] {pos} hosts {per_sec}\n{msg}",
    )));
    let summary = botscope_harvest::work(&url, config, progress.clone(), stop).await?;
    if let Some(pb) = &progress.0 {
        pb.finish_and_clear();
    }
    eprintln!("worker {worker}: {summary}");
    Ok(ExitStatus::Success)
}
