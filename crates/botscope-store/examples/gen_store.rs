//! Writes the synthetic web of robots.txt files into a store (see
//! `botscope_store::synth`).
//!
//! ```sh
//! cargo run --release -p botscope-store --example gen_store -- \
//!     --corpus ../shared/data/robotstxt/corpus --sites 2200000 --seed 1 --db botseer.db
//! ```

use std::path::PathBuf;

use botscope_testkit::example_arg as arg;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let corpus = botscope_testkit::example_corpus();
    let sites: u64 = arg("--sites").map_or(Ok(100_000), |s| s.parse())?;
    let seed: u64 = arg("--seed").map_or(Ok(1), |s| s.parse())?;
    let db = PathBuf::from(arg("--db").ok_or("--db FILE is required")?);
    if db.exists() {
        return Err(format!("{} exists: give a new file", db.display()).into());
    }
    let files = botscope_store::synth::corpus(&corpus)?;
    let mut store = botscope_store::SqliteStore::open(&db)?;
    botscope_store::synth::fill(&mut store, &files, sites, seed, &mut |n| {
        if n % 100_000 == 0 {
            eprintln!("{n} sites");
        }
    })?;
    Ok(())
}
