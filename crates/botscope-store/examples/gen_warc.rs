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
//! With `--changed PCT` only that share of the sites serves its next
//! version (at most 20: one site in five has more than one); the others
//! serve what the first crawl found, as a month of the real web does
//! (a few percent of sites change their robots.txt between crawls).

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
    // The share of sites a later crawl finds changed, as a fraction of
    // the sites that have another version to serve.
    let changed: Option<f64> = match arg("--changed") {
        None => None,
        Some(s) => {
            let pct: f64 = s.parse()?;
            if !(0.0..=20.0).contains(&pct) {
                return Err(format!("--changed {s}: a percentage from 0 to 20").into());
            }
            Some(pct / 20.0)
        }
    };
    let corpus = botscope_store::synth::corpus(&corpus)?;
    let spec = botscope_store::synth::CrawlSpec {
        crawl,
        start,
        sites: records / 3,
        files,
        seed,
    };
    let version = |site: u64, n: usize| {
        let moves = match changed {
            None => true,
            // Spread over the sites, not the first ones in a row.
            Some(share) => {
                let at = (site.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 11) as f64;
                at < share * (1u64 << 53) as f64
            }
        };
        (seed + site + if moves { later } else { 0 }) as usize % n
    };
    let paths = botscope_store::synth::write_crawl(&corpus, &spec, &version, &out)?;
    eprintln!(
        "{} files, {} captures under {}",
        paths.len(),
        spec.sites,
        out.display()
    );
    Ok(())
}
