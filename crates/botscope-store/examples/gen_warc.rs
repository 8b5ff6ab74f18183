//! Writes synthetic Common-Crawl-shaped robots.txt WARC files
//! ([`botscope_store::synth::write_crawl`], as `botscope store synth`
//! does, at a benchmark's scale): per capture a request, a response and a
//! metadata record, each its own gzip member (as Common Crawl writes
//! them), the responses' bodies the synthetic web's real-file variations,
//! one in ten a 404 page or a redirect; laid out as a crawl's
//! (`crawl-data/CRAWL/segments/…/robotstxt/CRAWL-robotstxt-NNNNN.warc.gz`
//! and `crawl-data/CRAWL/robotstxt.paths.gz`).
//!
//! ```sh
//! cargo run --release -p botscope-store --example gen_warc -- \
//!     --records 10000000 --files 100 --crawl CC-MAIN-2024-10 --out /work/bench/warc
//! ```
//!
//! `--later 1 --crawl CC-MAIN-2024-18 --date 2024-05-01` makes a later
//! crawl of the same sites, each with a history serving its next version.

use std::path::PathBuf;

use botscope_testkit::example_arg as arg;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let corpus = botscope_testkit::example_corpus();
    let records: u64 = arg("--records").map_or(Ok(300_000), |s| s.parse())?;
    let files: u64 = arg("--files").map_or(Ok(10), |s| s.parse())?;
    let seed: u64 = arg("--seed").map_or(Ok(1), |s| s.parse())?;
    // A later crawl of the same sites: each site's next version (sites
    // with one version unchanged; one in five has more).
    let later: u64 = arg("--later").map_or(Ok(0), |s| s.parse())?;
    let crawl = arg("--crawl").unwrap_or_else(|| "CC-MAIN-2024-10".into());
    // The crawl's month: its captures are dated in it.
    let start = arg("--date").map_or(Ok(1_709_251_200), |s| {
        botscope_store::parse_time_arg(&s).map_err(|e| e.to_string())
    })?;
    let out = PathBuf::from(arg("--out").ok_or("--out DIR is required")?);
    let corpus = botscope_store::synth::corpus(&corpus)?;
    let spec = botscope_store::synth::CrawlSpec {
        crawl,
        start,
        sites: records / 3,
        files,
        seed,
    };
    let version = |site: u64, n: usize| (seed + site + later) as usize % n;
    let paths = botscope_store::synth::write_crawl(&corpus, &spec, &version, &out)?;
    eprintln!(
        "{} files, {} captures under {}",
        paths.len(),
        spec.sites,
        out.display()
    );
    Ok(())
}
