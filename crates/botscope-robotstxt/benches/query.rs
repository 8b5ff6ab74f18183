//! Query throughput on real files and URLs, after parsing: ours beside
//! `robotxt` and `texting_robots` on the same queries.

use std::collections::HashMap;
use std::hint::black_box;

use botscope_robotstxt::{Matcher, ParseOptions, Semantics, path_of};
use criterion::{Criterion, Throughput, criterion_group};

#[path = "common.rs"]
mod common;

fn bench(c: &mut Criterion) {
    let corpus = common::load();
    let opts = ParseOptions::default();
    let ours: Vec<Matcher> = corpus.files.iter().map(|(_, f)| Matcher::compile(f, Semantics::Google, &opts)).collect();
    // The peers bind the agent when parsing: one object per (file, agent).
    let mut rtxt: HashMap<(usize, &str), robotxt::Robots> = HashMap::new();
    let mut trob: HashMap<(usize, &str), texting_robots::Robot> = HashMap::new();
    for (i, agent, _) in &corpus.queries {
        let f = &corpus.files[*i].1;
        rtxt.entry((*i, agent.as_str())).or_insert_with(|| robotxt::Robots::parse(f, agent.as_str()));
        if let Ok(r) = texting_robots::Robot::new(agent, f) {
            trob.entry((*i, agent.as_str())).or_insert(r);
        }
    }
    // Queries every peer can answer (texting_robots rejects a few files).
    let queries: Vec<(usize, &str, &str, String)> = corpus
        .queries
        .iter()
        .filter(|(i, a, _)| trob.contains_key(&(*i, a.as_str())))
        .map(|(i, a, u)| (*i, a.as_str(), u.as_str(), String::from_utf8_lossy(&path_of(u.as_bytes())).into_owned()))
        .collect();
    let n = queries.len();
    let run_ours = || {
        for (i, a, u, _) in &queries {
            black_box(ours[*i].is_allowed(a, u));
        }
    };
    let run_robotxt = || {
        for (i, a, _, p) in &queries {
            black_box(rtxt[&(*i, *a)].is_allowed(p));
        }
    };
    let run_texting = || {
        for (i, a, u, _) in &queries {
            black_box(trob[&(*i, *a)].allowed(u));
        }
    };
    let mut g = c.benchmark_group("query");
    g.throughput(Throughput::Elements(n as u64));
    g.bench_function("botscope Matcher::is_allowed", |b| b.iter(run_ours));
    g.bench_function("robotxt 0.7", |b| b.iter(run_robotxt));
    g.bench_function("texting_robots 0.2", |b| b.iter(run_texting));
    g.finish();

    let r_ours = common::rate(n, run_ours);
    let r_rtxt = common::rate(n, run_robotxt);
    let r_trob = common::rate(n, run_texting);
    common::report(
        &format!("query: {n} real queries over {} files", corpus.files.len()),
        "queries",
        ("botscope", r_ours),
        &[("robotxt 0.7", r_rtxt), ("texting_robots 0.2", r_trob)],
    );
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
