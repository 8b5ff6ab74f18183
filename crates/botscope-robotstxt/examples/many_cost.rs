//! What one agent's batch of URLs costs the matcher, by the number of
//! rules the agent gets: each (file, agent) of the corpus's queries is
//! selected once, then its URLs are asked by testing the rules in rank
//! order (`check_selected`) and through the path index
//! (`check_indexed`), whose building (`index_selection`, once a batch)
//! is shown apart. Callers choose between the two by rule count
//! (`INDEX_FROM_RULES` in the Python package).
//!
//! ```sh
//! BOTSCOPE_CORPUS=../shared/data/robotstxt \
//!     cargo run --release -p botscope-robotstxt --example many_cost
//! ```

use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::Instant;

use botscope_robotstxt::{Matcher, ParseOptions, Semantics, path_of};

#[path = "../benches/common/mod.rs"]
mod common;

/// Upper bounds (inclusive) of the rule-count classes.
const CLASSES: [usize; 8] = [0, 7, 31, 63, 127, 191, 255, usize::MAX];

fn main() {
    let corpus = common::load();
    let opts = ParseOptions::default();
    let matchers: Vec<Matcher> = corpus
        .files
        .iter()
        .map(|(_, f)| Matcher::compile(f, Semantics::Google, &opts))
        .collect();
    let mut batches: BTreeMap<(usize, &str), Vec<Vec<u8>>> = BTreeMap::new();
    for (i, agent, url) in &corpus.queries {
        batches
            .entry((*i, agent.as_str()))
            .or_default()
            .push(path_of(url.as_bytes()).into_owned());
    }
    let prepared: Vec<_> = batches
        .iter()
        .map(|((i, agent), paths)| {
            let m = &matchers[*i];
            let sel = m.select(agent);
            let t = Instant::now();
            let index = m.index_selection(&sel, &mut 0);
            let build = t.elapsed().as_nanos() as f64;
            let class = CLASSES
                .iter()
                .position(|&top| m.rules_in(&sel) <= top)
                .unwrap_or(CLASSES.len() - 1);
            (m, sel, index, class, paths, build)
        })
        .collect();
    for (m, sel, index, _, paths, _) in &prepared {
        for p in paths.iter() {
            assert_eq!(
                m.check_selected(sel, p).allowed,
                m.check_indexed(index, p, &mut 0).allowed,
                "the index and the rules in rank order disagree on {}",
                String::from_utf8_lossy(p)
            );
        }
    }
    let urls: Vec<&String> = corpus.queries.iter().map(|(_, _, u)| u).collect();
    for round in 1..=2 {
        let t = Instant::now();
        for u in &urls {
            black_box(path_of(u.as_bytes()));
        }
        let per_url = t.elapsed().as_nanos() as f64 / urls.len() as f64;
        println!("round {round}: path_of {per_url:.1} ns a URL");
        let mut selected = [0f64; CLASSES.len()];
        let mut indexed = [0f64; CLASSES.len()];
        let mut queries = [0usize; CLASSES.len()];
        let mut built = [0f64; CLASSES.len()];
        for (m, sel, index, class, paths, build) in &prepared {
            built[*class] += build;
            let t = Instant::now();
            for p in paths.iter() {
                black_box(m.check_selected(sel, p).allowed);
            }
            selected[*class] += t.elapsed().as_nanos() as f64;
            let t = Instant::now();
            for p in paths.iter() {
                black_box(m.check_indexed(index, p, &mut 0).allowed);
            }
            indexed[*class] += t.elapsed().as_nanos() as f64;
            queries[*class] += paths.len();
        }
        let all: usize = queries.iter().sum();
        println!(
            "  all {all} queries: rules in rank order {:.1} ns, index {:.1} ns + {:.1} ns building it",
            selected.iter().sum::<f64>() / all as f64,
            indexed.iter().sum::<f64>() / all as f64,
            built.iter().sum::<f64>() / all as f64
        );
        let mut low = 0;
        for (c, &top) in CLASSES.iter().enumerate() {
            if queries[c] > 0 {
                let n = queries[c] as f64;
                let top = if top == usize::MAX {
                    "…".to_owned()
                } else {
                    top.to_string()
                };
                println!(
                    "  {low:>3}–{top:<3} rules: {:>6} queries, rules in rank order {:>7.1} ns, index {:>7.1} ns + {:>7.1} ns building it",
                    queries[c],
                    selected[c] / n,
                    indexed[c] / n,
                    built[c] / n
                );
            }
            low = top.saturating_add(1);
        }
    }
}
