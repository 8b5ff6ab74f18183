//! `botscope store`: totals, export and WARC import of the harvest store.
//! The formats are botscope-store's; this module opens files and prints.

use std::io::Write;

use anyhow::{Context, Result};
use botscope_robotstxt::FetchPolicy;
use botscope_store::{Frontier, NewRun, Store, StoreLocator, WarcSource, content_hash};

use crate::cli::{
    Format, FrontierAddArgs, FrontierStatsArgs, StoreCopyArgs, StoreExportArgs, StoreExportFormat,
    StoreImportArgs, StoreImportFormat, StoreStatsArgs, StoreSynthArgs,
};
use crate::exit::ExitStatus;

use botscope_os::unix_now as now;

/// `store stats`.
pub fn stats(a: &StoreStatsArgs) -> Result<ExitStatus> {
    let s = a.db.db.open_read()?;
    let st = s.stats()?;
    let mut out = std::io::stdout().lock();
    match a.format {
        Format::Json => writeln!(out, "{}", serde_json::to_string(&st)?)?,
        Format::Text => out.write_all(st.describe(&a.db.db.to_string()).as_bytes())?,
    }
    Ok(ExitStatus::Success)
}

/// `store export`.
pub fn export(a: &StoreExportArgs) -> Result<ExitStatus> {
    let s = a.db.db.open_read()?;
    match a.format {
        StoreExportFormat::Files => {
            let dir = a.out.as_deref().context("--format files needs --out DIR")?;
            let n = botscope_store::export_files(&s, dir)?;
            eprintln!("{n} versions written under {}", dir.display());
        }
        StoreExportFormat::Jsonl => {
            let mut out = crate::io::output(a.out.as_deref())?;
            let n = botscope_store::export_jsonl(&s, &mut out)?;
            out.finish()?;
            eprintln!("{n} versions exported");
        }
        StoreExportFormat::Parquet => {
            let path = a
                .out
                .as_deref()
                .context("--format parquet needs --out FILE")?;
            let file = botscope_os::AtomicFile::create(path)?;
            let (n, file) = botscope_store::export_parquet(&s, file)?;
            file.commit()?;
            eprintln!("{n} versions written to {}", path.display());
        }
        StoreExportFormat::Warc => {
            let gz = a
                .out
                .as_deref()
                .is_some_and(|p| p.extension().is_some_and(|e| e == "gz"));
            let source = a.db.db.to_string();
            let mut out = crate::io::output(a.out.as_deref())?;
            let n = botscope_store::export_warc(&s, &mut out, gz, &source, now())?;
            out.finish()?;
            eprintln!("{n} versions exported");
        }
    }
    Ok(ExitStatus::Success)
}

/// `store synth`: every crawl checked first (none may exist under
/// `--out`), then written.
pub fn synth(a: &StoreSynthArgs) -> Result<ExitStatus> {
    for (i, c) in a.crawl.iter().enumerate() {
        anyhow::ensure!(!a.crawl[..i].contains(c), "the crawl {c} is named twice");
        let dir = a.out.join("crawl-data").join(c);
        anyhow::ensure!(
            !dir.exists(),
            "{} exists: synth writes only new crawls (remove it, or choose another --out); \
             nothing was written",
            dir.display()
        );
    }
    let list = a.out.join("sites.csv");
    anyhow::ensure!(
        !list.exists(),
        "{} exists: synth writes only new files (remove it, or choose another --out); \
         nothing was written",
        list.display()
    );
    let corpus = botscope_web::demo::corpus();
    botscope_os::ensure_dir(&a.out).with_context(|| format!("making {}", a.out.display()))?;
    let mut file = botscope_os::AtomicFile::create(&list)?;
    file.write_all(botscope_store::synth::site_list(&corpus, a.seed, a.sites).as_bytes())?;
    file.commit()?;
    for (k, crawl) in a.crawl.iter().enumerate() {
        let start = botscope_store::synth::crawl_start(crawl)
            .context("a crawl is named CC-MAIN-YYYY-WW")?;
        let spec = botscope_store::synth::CrawlSpec {
            crawl: crawl.clone(),
            start,
            sites: a.sites,
            files: a.files,
            seed: a.seed,
        };
        let paths = botscope_store::synth::write_crawl(&corpus, &spec, &|_, _| k, &a.out)
            .with_context(|| format!("writing {crawl} under {}", a.out.display()))?;
        eprintln!(
            "{crawl}: {} captures in {} WARC {} under {}, listed in {}",
            a.sites,
            paths.len(),
            if paths.len() == 1 { "file" } else { "files" },
            a.out.join("crawl-data").join(crawl).display(),
            a.out
                .join("crawl-data")
                .join(crawl)
                .join("robotstxt.paths.gz")
                .display()
        );
    }
    eprintln!(
        "{}: the sites by rank, with a tokens column (`trends --rank-file … --weight tokens`)",
        list.display()
    );
    Ok(ExitStatus::Success)
}

/// `store import`.
pub fn import(a: &StoreImportArgs, s: &crate::Settings) -> Result<ExitStatus> {
    // Every input is there before the store is touched: a mistyped name
    // costs nothing. (`warc`: URLs are fetched when their turn comes.)
    let sources = if a.format == StoreImportFormat::Warc {
        let list = match &a.list {
            Some(list) => {
                let mut text = String::new();
                crate::io::input_maybe_gzip(list)?
                    .read_to_string(&mut text)
                    .with_context(|| format!("cannot read {}", list.display()))?;
                Some(text)
            }
            None => None,
        };
        botscope_store::warc_sources(&a.files, list.as_deref(), &a.base)
    } else {
        a.files.iter().cloned().map(WarcSource::Path).collect()
    };
    for src in &sources {
        if let WarcSource::Path(f) = src
            && f.as_os_str() != "-"
            && !f.exists()
        {
            anyhow::bail!("{}: no such file or directory", f.display());
        }
    }
    let mut store = a.db.db.open()?;
    let names: Vec<String> = a.files.iter().map(|f| f.display().to_string()).collect();
    let now = now();
    let new_run = NewRun {
        input: format!("import: {}", names.join(" ")),
        input_hash: content_hash(names.join("\n").as_bytes()),
        user_agent: String::new(),
        hosts: 0,
        started: now,
        crawl: None,
    };
    let mut damaged = false;
    if a.format == StoreImportFormat::Files {
        let run = store.begin_run(&new_run)?;
        let cap = FetchPolicy::for_semantics(a.semantics).size_cap;
        let mut note = |what: &str| {
            damaged = true;
            eprintln!("botscope: {}", botscope_text::field(what));
        };
        let n = botscope_store::import_files(&mut store, run, &a.files, a.date, cap, &mut note)?;
        store.finish_run(run, now)?;
        eprintln!("{n}");
        return Ok(if damaged {
            ExitStatus::Damaged
        } else {
            ExitStatus::Success
        });
    }
    // WARC: the files read and decompressed on reader threads, written
    // here; a bar of the compressed bytes read when standard error is a
    // terminal.
    let total: u64 = sources
        .iter()
        .filter_map(|s| match s {
            WarcSource::Path(f) => std::fs::metadata(f).ok().map(|m| m.len()),
            WarcSource::Url(_) => None,
        })
        .sum();
    let read = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let trust = crate::settings::trust(&a.tls)?;
    let runtime = tokio::runtime::Handle::current();
    let inputs: Vec<botscope_store::WarcInput<'_>> = sources
        .iter()
        .map(|src| {
            let read = read.clone();
            let (name, open): (String, botscope_store::Opener<'_>) = match src {
                // Known by its full path: a re-run from elsewhere, or
                // naming it another way, resumes the same import.
                WarcSource::Path(f) => (
                    std::fs::canonicalize(f)
                        .unwrap_or_else(|_| f.clone())
                        .display()
                        .to_string(),
                    Box::new(move || {
                        std::fs::File::open(f)
                            .and_then(|file| crate::io::counted_maybe_gzip(file, read))
                            .map_err(|e| unreadable(&crate::io::display(f), &e))
                    }),
                ),
                WarcSource::Url(u) => {
                    let (trust, runtime) = (trust.clone(), runtime.clone());
                    (
                        u.clone(),
                        Box::new(move || {
                            // Read as it comes: a crawl's file is never
                            // held whole.
                            let body = botscope_http::download_reader(
                                &runtime,
                                u,
                                a.max_download,
                                a.download_timeout,
                                botscope_http::DEFAULT_USER_AGENT,
                                &trust,
                                a.allow_private,
                            )
                            .map_err(|e| {
                                botscope_store::StoreError::Input {
                                    name: u.clone(),
                                    // The URL once: a redirect's last hop is
                                    // named only when it is another.
                                    reason: match e {
                                        botscope_http::Error::Download { url, reason }
                                            if url == *u =>
                                        {
                                            reason
                                        }
                                        e => e.to_string(),
                                    },
                                }
                            })?;
                            crate::io::counted_maybe_gzip(body, read).map_err(|e| unreadable(u, &e))
                        }),
                    )
                }
            };
            botscope_store::WarcInput {
                crawl: a.crawl.clone().or_else(|| botscope_store::crawl_of(&name)),
                max_records: matches!(src, WarcSource::Url(_)).then_some(a.max_records),
                name,
                open,
            }
        })
        .collect();
    let bar = crate::progress::bar(
        s,
        false,
        total,
        "{bar:30} {bytes}/{total_bytes} {msg} ETA {eta}",
    );
    let started = std::time::Instant::now();
    let how = botscope_store::ImportSettings {
        policy: FetchPolicy::for_semantics(a.semantics),
        now,
        readers: s.threads.max(2) - 1,
    };
    let mut note = |what: &str| eprintln!("botscope: {}", botscope_text::field(what));
    let results =
        botscope_store::import_parallel(&mut store, &new_run, &how, inputs, &mut note, &mut |p| {
            if let Some(b) = &bar {
                let secs = started.elapsed().as_secs_f64().max(0.001);
                b.set_position(read.load(std::sync::atomic::Ordering::Relaxed));
                b.set_message(format!(
                    "{} records ({:.0}/s), {} robots.txt, {}/{} files",
                    p.counts.records,
                    p.counts.records as f64 / secs,
                    p.counts.robots,
                    p.done,
                    p.inputs
                ));
            }
        })?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let summary = botscope_store::ImportSummary::of(&results);
    if summary.already > 0 {
        let n = summary.already;
        eprintln!("botscope: {n} files were imported before: passed over");
    }
    for note in &summary.notes {
        eprintln!("botscope: {note}");
    }
    let (total, damaged) = (summary.total, damaged || summary.damaged);
    let secs = started.elapsed().as_secs_f64();
    eprintln!(
        "{total} ({}, {:.1} s, {:.0} records/s)",
        botscope_text::count(results.len() as u64, "file", "files"),
        secs,
        total.records as f64 / secs.max(0.001)
    );
    Ok(if damaged {
        ExitStatus::Damaged
    } else {
        ExitStatus::Success
    })
}

/// An input that could not be read, in the store's words.
fn unreadable(name: &str, e: &std::io::Error) -> botscope_store::StoreError {
    botscope_store::StoreError::Input {
        name: name.to_owned(),
        reason: format!("cannot read it: {e}"),
    }
}

/// `store copy`.
pub fn copy(a: &StoreCopyArgs) -> Result<ExitStatus> {
    let (from, to) = (a.from.to_string(), a.to.to_string());
    anyhow::ensure!(from != to, "--from and --to are the same store ({from})");
    let src = a.from.open_read()?;
    let mut dst = a.to.open()?;
    let mut last = std::time::Instant::now();
    let done = botscope_store::copy(&src, &mut dst, &mut |table, n| {
        if last.elapsed() > std::time::Duration::from_secs(2) {
            eprintln!("botscope: {table}: {n} rows");
            last = std::time::Instant::now();
        }
    })
    .with_context(|| format!("copying {from} to {to}"))?;
    eprintln!("botscope: {done}");
    Ok(ExitStatus::Success)
}

/// The PostgreSQL store `db` names, for the frontier.
fn frontier_store(db: &StoreLocator) -> Result<botscope_store::PgStore> {
    let StoreLocator::Postgres(url) = db else {
        anyhow::bail!(
            "{db}: the frontier lives in a PostgreSQL store: give --db postgres://USER@HOST/DB"
        );
    };
    Ok(botscope_store::PgStore::open(url)?)
}

/// `frontier add`.
pub fn frontier_add(a: &FrontierAddArgs) -> Result<ExitStatus> {
    anyhow::ensure!(
        a.db.is_postgres(),
        "{}: the frontier lives in a PostgreSQL store: give --db postgres://USER@HOST/DB",
        a.db
    );
    // The list is read and checked before the store is touched.
    let list = botscope_harvest::read_host_list(crate::io::input(&a.hosts)?)
        .with_context(|| format!("failed to read {}", crate::io::display(&a.hosts)))?;
    for note in list.notes() {
        eprintln!("botscope: {note}");
    }
    anyhow::ensure!(
        !list.hosts.is_empty(),
        "no host names in {}",
        crate::io::display(&a.hosts)
    );
    let hosts = list.hosts;
    let n = botscope_store::pg_blocking(|| -> Result<u64> {
        let s = frontier_store(&a.db)?;
        Ok(s.frontier_add(&hosts, now())?)
    })?;
    eprintln!(
        "botscope: {} hosts: {n} new, {} already in the frontier",
        hosts.len(),
        hosts.len() as u64 - n
    );
    Ok(ExitStatus::Success)
}

/// `frontier stats`.
pub fn frontier_stats(a: &FrontierStatsArgs) -> Result<ExitStatus> {
    let st = botscope_store::pg_blocking(|| -> Result<botscope_store::FrontierStats> {
        let s = frontier_store(&a.db)?;
        Ok(s.frontier_stats(now())?)
    })?;
    let mut out = std::io::stdout().lock();
    match a.format {
        Format::Json => writeln!(out, "{}", serde_json::to_string(&st)?)?,
        Format::Text => out.write_all(st.describe(&a.db.to_string()).as_bytes())?,
    }
    Ok(ExitStatus::Success)
}
