//! Parse-only throughput: real robots.txt files to a queryable value,
//! ours beside `robotxt` and `texting_robots` on the same files.

use std::hint::black_box;

use botscope_robotstxt::{Matcher, ParseOptions, Robots, Semantics};
use criterion::{Criterion, Throughput, criterion_group};

#[path = "common/mod.rs"]
mod common;

fn bench(c: &mut Criterion) {
    let corpus = common::load();
    let files = &corpus.files;
    let n = files.len();
    let opts = ParseOptions::default();
    let mut g = c.benchmark_group("parse");
    g.throughput(Throughput::Elements(n as u64));
    g.bench_function("botscope Matcher::compile", |b| {
        b.iter(|| {
            files
                .iter()
                .for_each(|(_, f)| drop(black_box(Matcher::compile(f, Semantics::Google, &opts))))
        })
    });
    g.bench_function("botscope Robots::parse (full tree)", |b| {
        b.iter(|| {
            files
                .iter()
                .for_each(|(_, f)| drop(black_box(Robots::parse_with(f, &opts))))
        })
    });
    g.bench_function("robotxt 0.7", |b| {
        b.iter(|| {
            files
                .iter()
                .for_each(|(_, f)| drop(black_box(robotxt::Robots::parse(f, "Googlebot"))))
        })
    });
    g.bench_function("texting_robots 0.2", |b| {
        b.iter(|| {
            files
                .iter()
                .for_each(|(_, f)| drop(black_box(texting_robots::Robot::new("Googlebot", f))))
        })
    });
    g.finish();

    let mut run_ours = || {
        files
            .iter()
            .for_each(|(_, f)| drop(black_box(Matcher::compile(f, Semantics::Google, &opts))))
    };
    let mut run_robotxt = || {
        files
            .iter()
            .for_each(|(_, f)| drop(black_box(robotxt::Robots::parse(f, "Googlebot"))))
    };
    let mut run_texting = || {
        files
            .iter()
            .for_each(|(_, f)| drop(black_box(texting_robots::Robot::new("Googlebot", f))))
    };
    let r = common::rates(
        n,
        &mut [
            ("ours", &mut run_ours),
            ("robotxt", &mut run_robotxt),
            ("texting", &mut run_texting),
        ],
    );
    let (ours, robotxt, texting) = (r[0], r[1], r[2]);
    let bytes: usize = files.iter().map(|(_, f)| f.len()).sum();
    common::report(
        &format!("parse: {n} real files, {bytes} bytes"),
        "files",
        ("botscope", ours),
        &[("robotxt 0.7", robotxt), ("texting_robots 0.2", texting)],
    );
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
