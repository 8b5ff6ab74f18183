//! `botscope store`: totals, export and WARC import of the harvest store.
//! The formats are botscope-store's; this module opens files and prints.

use std::io::Write;

use anyhow::{Context, Result};
use botscope_robotstxt::FetchPolicy;
use botscope_store::{Frontier, Importer, NewRun, Store, StoreLocator, content_hash};

use crate::cli::{
    Format, FrontierAddArgs, FrontierStatsArgs, StoreCopyArgs, StoreExportArgs, StoreExportFormat,
    StoreImportArgs, StoreImportFormat, StoreStatsArgs,
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

/// `store import`.
pub fn import(a: &StoreImportArgs) -> Result<ExitStatus> {
    let mut store = a.db.db.open()?;
    let names: Vec<String> = a.files.iter().map(|f| f.display().to_string()).collect();
    let now = now();
    let run = store.begin_run(&NewRun {
        input: format!("import: {}", names.join(" ")),
        input_hash: content_hash(names.join("\n").as_bytes()),
        user_agent: String::new(),
        hosts: 0,
        started: now,
    })?;
    let mut damaged = false;
    if a.format == StoreImportFormat::Files {
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
    let mut importer = Importer::new(
        &mut store,
        run,
        FetchPolicy::for_semantics(a.semantics),
        now,
    );
    for f in &a.files {
        let name = f.display();
        let mut note = |what: &str| eprintln!("botscope: {name}: {what}");
        if let Some(e) = importer.import(crate::io::input_maybe_gzip(f)?, &mut note)? {
            damaged = true;
            eprintln!("botscope: warning: {name}: {e}; the records before it are imported");
        }
    }
    let n = importer.finish()?;
    store.finish_run(run, now)?;
    eprintln!("{n}");
    Ok(if damaged {
        ExitStatus::Damaged
    } else {
        ExitStatus::Success
    })
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
