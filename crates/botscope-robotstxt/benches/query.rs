//! Query throughput on real files and URLs, after parsing: ours beside
//! `robotxt` and `texting_robots` on the same queries.

use std::collections::HashMap;
use std::hint::black_box;

use botscope_robotstxt::{Matcher, ParseOptions, Semantics, path_of};
use criterion::{Criterion, Throughput, criterion_group};

#[path = "common/mod.rs"]
mod common;

fn bench(c: &mut Criterion) {
    let corpus = common::load();
    let opts = ParseOptions::default();
    let ours: Vec<Matcher> = corpus
        .files
        .iter()
        .map(|(_, f)| Matcher::compile(f, Semantics::Google, &opts))
        .collect();
    // The peers bind the agent when parsing: one object per (file, agent).
    let mut rtxt: HashMap<(usize, &str), robotxt::Robots> = HashMap::new();
    let mut trob: HashMap<(usize, &str), texting_robots::Robot> = HashMap::new();
    for (i, agent, _) in &corpus.queries {
        let f = &corpus.files[*i].1;
        rtxt.entry((*i, agent.as_str()))
            .or_insert_with(|| robotxt::Robots::parse(f, agent.as_str()));
        if let Ok(r) = texting_robots::Robot::new(agent, f) {
            trob.entry((*i, agent.as_str())).or_insert(r);
        }
    }
    // Queries every peer can answer (texting_robots rejects a few files).
    let queries: Vec<(usize, &str, &str, String)> = corpus
        .queries
        .iter()
        .filter(|(i, a, _)| trob.contains_key(&(*i, a.as_str())))
        .map(|(i, a, u)| {
            (
                *i,
                a.as_str(),
                u.as_str(),
                String::from_utf8_lossy(&path_of(u.as_bytes())).into_owned(),
            )
        })
        .collect();
    let n = queries.len();
    let mut run_ours = || {
        for (i, a, u, _) in &queries {
            black_box(ours[*i].is_allowed(a, u));
        }
    };
    let mut run_ours_path = || {
        for (i, a, _, p) in &queries {
            black_box(ours[*i].check_path(a, p.as_bytes()).allowed);
        }
    };
    let mut run_robotxt = || {
        for (i, a, _, p) in &queries {
            black_box(rtxt[&(*i, *a)].is_allowed(p));
        }
    };
    let mut run_texting = || {
        for (i, a, u, _) in &queries {
            black_box(trob[&(*i, *a)].allowed(u));
        }
    };
    let mut g = c.benchmark_group("query");
    g.throughput(Throughput::Elements(n as u64));
    g.bench_function("botscope Matcher::is_allowed (URL)", |b| {
        b.iter(&mut run_ours)
    });
    g.bench_function("botscope Matcher::check_path (path)", |b| {
        b.iter(&mut run_ours_path)
    });
    g.bench_function("robotxt 0.7", |b| b.iter(&mut run_robotxt));
    g.bench_function("texting_robots 0.2", |b| b.iter(&mut run_texting));
    g.finish();

    let r = common::rates(
        n,
        &mut [
            ("ours", &mut run_ours),
            ("ours-path", &mut run_ours_path),
            ("robotxt", &mut run_robotxt),
            ("texting", &mut run_texting),
        ],
    );
    let files = corpus.files.len();
    // robotxt takes a path (extracted before timing), texting_robots a URL:
    // each is compared with ours on the same input.
    common::report(
        &format!("query by path: {n} real queries over {files} files"),
        "queries",
        ("botscope check_path", r[1]),
        &[("robotxt 0.7 is_allowed", r[2])],
    );
    common::report(
        &format!("query by URL: {n} real queries over {files} files"),
        "queries",
        ("botscope is_allowed", r[0]),
        &[("texting_robots 0.2 allowed", r[3])],
    );
}
criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
