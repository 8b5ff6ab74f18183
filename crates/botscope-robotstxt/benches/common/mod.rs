//! Shared bench data: real robots.txt files and the queries Google's
//! reference parser was asked about them.
//!
//! By default the checked-in subset under `tests/data` (294 files, 16,940
//! queries); set `BOTSCOPE_CORPUS=/path/to/shared/data/robotstxt` for the
//! whole corpus (11,766 files, 678,876 queries).

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Files and queries.
pub struct Corpus {
    /// (file name, bytes)
    pub files: Vec<(String, Vec<u8>)>,
    /// (file index, agent, url)
    pub queries: Vec<(usize, String, String)>,
}

/// Loads the corpus named by `BOTSCOPE_CORPUS`, or the checked-in subset.
pub fn load() -> Corpus {
    let (dir, verdicts) = match std::env::var_os("BOTSCOPE_CORPUS") {
        Some(root) => {
            let root = PathBuf::from(root);
            (root.join("corpus"), root.join("google_verdicts.tsv"))
        }
        None => {
            let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data");
            (root.join("corpus"), root.join("google_verdicts_subset.tsv"))
        }
    };
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("corpus dir")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".txt"))
        .collect();
    names.sort();
    let files: Vec<(String, Vec<u8>)> = names
        .into_iter()
        .map(|n| (n.clone(), std::fs::read(dir.join(&n)).expect("read")))
        .collect();
    let index: BTreeMap<&str, usize> = files
        .iter()
        .enumerate()
        .map(|(i, (n, _))| (n.as_str(), i))
        .collect();
    let text = std::fs::read_to_string(verdicts).expect("verdicts");
    let queries = text
        .lines()
        .skip(1)
        .filter_map(|l| {
            let mut f = l.split('\t');
            let (file, agent, url) = (f.next()?, f.next()?, f.next()?);
            Some((*index.get(file)?, agent.to_owned(), url.to_owned()))
        })
        .collect();
    Corpus { files, queries }
}

/// Measures each contender's rate (units per second) the robust way on a
/// noisy machine: contenders take turns, five rounds of about 300 ms each,
/// and each keeps its best round.
pub fn rates(units: usize, contenders: &mut [(&str, &mut dyn FnMut())]) -> Vec<f64> {
    let mut best = vec![0.0_f64; contenders.len()];
    for _ in 0..5 {
        for (i, (_, f)) in contenders.iter_mut().enumerate() {
            f();
            let start = Instant::now();
            let mut iters = 0u32;
            while start.elapsed() < Duration::from_millis(300) || iters < 2 {
                f();
                iters += 1;
            }
            let r = (units as f64 * f64::from(iters)) / start.elapsed().as_secs_f64();
            best[i] = best[i].max(r);
        }
    }
    best
}

/// Prints a comparison table: ours against each peer, with the ratio to
/// the fastest peer.
pub fn report(what: &str, unit: &str, ours: (&str, f64), peers: &[(&str, f64)]) {
    println!();
    println!("== {what} (single thread) ==");
    println!("{:<28} {:>14.0} {unit}/s", ours.0, ours.1);
    for (name, r) in peers {
        println!(
            "{:<28} {:>14.0} {unit}/s   ours is {:.2}x",
            name,
            r,
            ours.1 / r
        );
    }
    let best = peers.iter().map(|p| p.1).fold(0.0_f64, f64::max);
    println!("ratio to the fastest peer: {:.2}x", ours.1 / best);
}
