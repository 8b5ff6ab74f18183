//! A robots.txt's `*` group asked about a file of paths (one a line)
//! through the path index, as `logs analyze --robots` asks it of every
//! request: nanoseconds a path (best of 600 passes, so that the paths
//! stay in cache as a log's just-parsed request does) and the work
//! counted, each path taken as a request target, its verdict only
//! ([`Matcher::indexed_target_allowed`], as `logs analyze` asks) and
//! with its rule ([`Matcher::check_indexed_target`]), and cut first
//! ([`path_of`], then [`Matcher::check_indexed`]).
//!
//! ```sh
//! awk -F'"' '{split($2,a," "); print a[2]}' access.log | head -5000 > paths.txt
//! cargo run --release -p botscope-robotstxt --example judge_paths -- examples/robots/www.ebay.com.txt paths.txt
//! ```

use std::time::Instant;

use botscope_robotstxt::{Matcher, ParseOptions, Semantics, path_of};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(robots), Some(paths)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: judge_paths ROBOTS.TXT PATHS");
        std::process::exit(2);
    };
    let read = |p: &str| {
        std::fs::read(p).unwrap_or_else(|e| {
            eprintln!("{p}: {e}");
            std::process::exit(2)
        })
    };
    let body = read(robots);
    let paths: Vec<Vec<u8>> = read(paths)
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(<[u8]>::to_vec)
        .collect();
    let m = Matcher::compile(&body, Semantics::Google, &ParseOptions::default());
    let ix = m.index_selection(&m.select("Mozilla/5.0"), &mut 0);
    let time = |judge: &dyn Fn(&[u8]) -> bool| {
        let (mut best, mut closed) = (f64::MAX, 0);
        for _ in 0..600 {
            let t = Instant::now();
            closed = 0;
            for p in &paths {
                closed += usize::from(!judge(p));
            }
            best = best.min(t.elapsed().as_secs_f64());
        }
        (best, closed)
    };
    let (allowed, closed) = time(&|p| m.indexed_target_allowed(&ix, p, &mut 0));
    let (target, closed_target) = time(&|p| m.check_indexed_target(&ix, p, &mut 0).allowed);
    let (cut, closed_cut) = time(&|p| m.check_indexed(&ix, &path_of(p), &mut 0).allowed);
    assert_eq!(closed, closed_target, "the verdict and the rule disagree");
    assert_eq!(closed, closed_cut, "the two ways disagree");
    let mut work = 0;
    for p in &paths {
        m.check_indexed_target(&ix, p, &mut work);
    }
    let n = paths.len().max(1) as f64;
    println!(
        "{} paths, {closed} closed: {:.1} ns a path as a target, the verdict only ({:.1} ns with \
         its rule, {:.1} ns cut first) and {:.1} units of work a path",
        paths.len(),
        allowed * 1e9 / n,
        target * 1e9 / n,
        cut * 1e9 / n,
        work as f64 / n
    );
}
