//! `botscope store`: totals, export and WARC import of the harvest store.
//! The formats are botscope-store's; this module opens files and prints.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::Path;
use std::time::UNIX_EPOCH;

use anyhow::{Context, Result};
use botscope_robotstxt::FetchPolicy;
use botscope_store::{Importer, NewRun, SqliteStore, Store, content_hash};

use crate::cli::{Format, StoreExportArgs, StoreExportFormat, StoreImportArgs, StoreStatsArgs};
use crate::exit::Outcome;

/// Seconds since the epoch, now.
fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// `store stats`.
pub fn stats(a: &StoreStatsArgs) -> Result<Outcome> {
    let s = SqliteStore::open_read(&a.db.db)?;
    let st = s.stats()?;
    let mut out = std::io::stdout().lock();
    match a.format {
        Format::Json => writeln!(out, "{}", serde_json::to_string(&st)?)?,
        Format::Text => {
            let sorted = |m: &std::collections::HashMap<String, u64>| {
                let mut v: Vec<_> = m.iter().collect();
                v.sort_by(|x, y| y.1.cmp(x.1).then(x.0.cmp(y.0)));
                v.iter()
                    .map(|(k, n)| format!("{k} {n}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            writeln!(out, "store            {}", a.db.db.display())?;
            writeln!(out, "schema version   {}", st.schema_version)?;
            writeln!(out, "sites            {}", st.sites)?;
            writeln!(out, "  with robots.txt {}", st.sites_with_robots_txt)?;
            writeln!(out, "attempts         {}", st.attempts)?;
            writeln!(
                out,
                "runs             {} ({} unfinished)",
                st.runs, st.unfinished_runs
            )?;
            writeln!(out, "versions         {}", st.versions)?;
            writeln!(
                out,
                "distinct bodies  {} ({} bytes)",
                st.bodies, st.body_bytes
            )?;
            writeln!(out, "latest outcome   {}", sorted(&st.outcomes))?;
            writeln!(out, "latest status    {}", sorted(&st.statuses))?;
            writeln!(out, "latest error     {}", sorted(&st.errors))?;
        }
    }
    Ok(Outcome::Ok)
}

/// `store export`.
pub fn export(a: &StoreExportArgs) -> Result<Outcome> {
    let s = SqliteStore::open_read(&a.db.db)?;
    match a.format {
        StoreExportFormat::Files => {
            let dir = a.out.as_deref().context("--format files needs --out DIR")?;
            let n = botscope_store::export_files(&s, dir)?;
            eprintln!("{n} versions written under {}", dir.display());
        }
        StoreExportFormat::Jsonl => {
            let n = botscope_store::export_jsonl(&s, &mut *output(a.out.as_deref())?)?;
            eprintln!("{n} versions exported");
        }
        StoreExportFormat::Warc => {
            let gz = a
                .out
                .as_deref()
                .is_some_and(|p| p.extension().is_some_and(|e| e == "gz"));
            let source = a.db.db.display().to_string();
            let mut out = output(a.out.as_deref())?;
            let n = botscope_store::export_warc(&s, &mut *out, gz, &source, now())?;
            eprintln!("{n} versions exported");
        }
    }
    Ok(Outcome::Ok)
}

fn output(path: Option<&Path>) -> Result<Box<dyn Write>> {
    Ok(match path {
        Some(p) => Box::new(BufWriter::new(
            File::create(p).with_context(|| format!("cannot create {}", p.display()))?,
        )),
        None => Box::new(BufWriter::new(std::io::stdout().lock())),
    })
}

fn open_input(p: &Path) -> Result<Box<dyn BufRead>> {
    let f = File::open(p).with_context(|| format!("cannot open {}", p.display()))?;
    let mut r = BufReader::with_capacity(256 * 1024, f);
    let head = r.fill_buf()?;
    Ok(if head.starts_with(&[0x1f, 0x8b]) {
        Box::new(BufReader::new(flate2::bufread::MultiGzDecoder::new(r)))
    } else {
        Box::new(r)
    })
}

/// `store import`.
pub fn import(a: &StoreImportArgs) -> Result<Outcome> {
    let mut store = SqliteStore::open(&a.db.db)?;
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
    let mut importer = Importer::new(
        &mut store,
        run,
        FetchPolicy::for_semantics(a.semantics.into()),
        now,
    );
    for f in &a.files {
        let name = f.display();
        let mut note = |what: &str| eprintln!("botscope: {name}: {what}");
        if let Some(e) = importer.import(open_input(f)?, &mut note)? {
            damaged = true;
            eprintln!("botscope: warning: {name}: {e}; the records before it are imported");
        }
    }
    let n = importer.finish()?;
    store.finish_run(run, now)?;
    eprintln!(
        "{} records read: {} robots.txt responses imported, {} other records, {} skipped, {} unreadable",
        n.records, n.robots, n.other, n.skipped, n.bad_http
    );
    Ok(if damaged {
        Outcome::Code(3)
    } else {
        Outcome::Ok
    })
}
