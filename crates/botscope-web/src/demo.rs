//! The demo the server builds when it is given no store: everything comes
//! from what the repository ships, embedded in the program.
//!
//! - the real robots.txt files of `examples/robots/`, each imported as its
//!   site's version (source `import`, dated 2025-06-01);
//! - a synthetic web of [`DEFAULT_SITES`] sites made from the real files
//!   of the robots.txt engine's test corpus ([`botscope_store::synth`]):
//!   host names, ranks, later versions (often a new block of an AI
//!   crawler) over 2024 and 2025;
//! - the access logs of `examples/logs/`, analysed offline (published
//!   addresses decide; no DNS query is sent);
//! - when no city database is installed, the places of those logs'
//!   addresses: the networks that hold them, cut from DB-IP's city
//!   database (`examples/geo/`, CC BY 4.0), so that the crawler pages'
//!   maps have something to show.

use std::path::PathBuf;

use botscope_store::{Attempt, NewRun, Source, SqliteStore, Store, content_hash};

use crate::Error;

mod files {
    include!(concat!(env!("OUT_DIR"), "/demo_files.rs"));
}

/// The real files the synthetic web is made from (the robots.txt
/// engine's test corpus, built in), each cut as
/// [`botscope_store::synth::cap`] cuts it.
pub fn corpus() -> Vec<Vec<u8>> {
    files::CORPUS
        .iter()
        .map(|(_, b)| botscope_store::synth::cap(b.to_vec()))
        .collect()
}

/// Synthetic sites in the demo by default: enough for favourability and
/// trends to mean something, built in a few seconds.
pub const DEFAULT_SITES: u64 = 2_000;

/// When the example files are dated: 2025-06-01T00:00:00Z.
pub const EXAMPLES_DATE: i64 = 1_748_736_000;

/// The example access logs: name and bytes.
pub fn logs() -> &'static [(&'static str, &'static [u8])] {
    files::LOGS
}

/// The demo's place table: DB-IP's networks that hold the example logs'
/// addresses (`crates/botscope-ipdb/examples/cut_city.rs` cuts it).
pub const PLACES: &str = include_str!("../../../examples/geo/dbip-city-lite-demo.csv");

/// [`PLACES`], read.
pub fn places() -> Result<botscope_ipdb::GeoDb, Error> {
    botscope_ipdb::GeoDb::from_table(PLACES)
        .map_err(|e| Error::Setup(format!("the demo's place table: {e}")))
}

/// What was built.
#[derive(Debug, Clone)]
pub struct Demo {
    /// The store.
    pub db: PathBuf,
    /// The research index (built by the server at start).
    pub index: PathBuf,
}

/// Writes the demo's store into `dir`: the example files, then the
/// synthetic web. The index is built by the caller.
pub fn build(dir: &std::path::Path, sites: u64) -> Result<Demo, Error> {
    let db = dir.join("demo.db");
    let mut store = SqliteStore::open(&db)?;
    let run = store.begin_run(&NewRun {
        input: "examples/robots".into(),
        input_hash: content_hash(b"examples/robots"),
        user_agent: "botscope demo".into(),
        hosts: files::ROBOTS.len() as u64,
        started: EXAMPLES_DATE,
        crawl: None,
    })?;
    let examples: Vec<Attempt> = files::ROBOTS
        .iter()
        .filter_map(|(name, body)| {
            let host = botscope_store::host_of_file_name(name)?;
            Some(Attempt {
                url: format!("https://{host}/robots.txt"),
                host,
                time: EXAMPLES_DATE,
                bytes: body.len() as u64,
                outcome: "parse".into(),
                reason: "imported from examples/robots".into(),
                body: Some(body.to_vec()),
                source: Source::Import,
                ..Attempt::default()
            })
        })
        .collect();
    store.record(Some(run), &examples)?;
    store.finish_run(run, EXAMPLES_DATE)?;
    botscope_store::synth::fill(&mut store, &corpus(), sites, 1, &mut |_| {})?;
    Ok(Demo {
        db,
        index: dir.join("demo.index"),
    })
}

/// [`build`] on a blocking thread.
pub(crate) async fn build_blocking(dir: PathBuf, sites: u64) -> Result<Demo, Error> {
    tracing::info!(dir = %dir.display(), sites, "building the demo");
    tokio::task::spawn_blocking(move || build(&dir, sites))
        .await
        .map_err(|e| Error::Setup(format!("building the demo failed: {e}")))?
}
