//! IP lookups over every range the bundled registry publishes: the owner
//! index beside a linear `ipnet` scan, on the same probes.

use std::hint::black_box;
use std::net::IpAddr;
use std::time::{Duration, Instant};

use botscope_botid::{IpRange, Registry};
use criterion::{Criterion, Throughput, criterion_group};
use ipnet::IpNet;

fn probes(r: &Registry, n: usize) -> Vec<IpAddr> {
    // Half inside published ranges, half random addresses.
    let ranges: Vec<IpRange> = r.bots().iter().flat_map(|b| b.ranges()).collect();
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut rnd = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    (0..n)
        .map(|i| {
            if i % 2 == 0 {
                match ranges[(rnd() % ranges.len() as u64) as usize] {
                    IpRange::V4(a, b) => {
                        IpAddr::V4((a + (rnd() as u32) % (b - a).saturating_add(1).max(1)).into())
                    }
                    IpRange::V6(a, _) => IpAddr::V6(a.into()),
                }
            } else {
                IpAddr::V4((rnd() as u32).into())
            }
        })
        .collect()
}

fn best_rate(n: usize, mut f: impl FnMut()) -> f64 {
    let mut best = 0.0_f64;
    for _ in 0..5 {
        let start = Instant::now();
        let mut iters = 0u32;
        while start.elapsed() < Duration::from_millis(300) || iters < 2 {
            f();
            iters += 1;
        }
        best = best.max(n as f64 * f64::from(iters) / start.elapsed().as_secs_f64());
    }
    best
}

fn bench(c: &mut Criterion) {
    let r = Registry::bundled();
    let nets: Vec<IpNet> = r
        .bots()
        .iter()
        .flat_map(|b| b.ranges())
        .flat_map(|range| range.to_cidrs())
        .filter_map(|s| s.parse().ok())
        .collect();
    let probes = probes(&r, 10_000);
    let idx = r.ip_index();
    let mut run_ours = || {
        for ip in &probes {
            black_box(idx.lookup(*ip));
        }
    };
    let mut run_linear = || {
        for ip in &probes {
            black_box(nets.iter().any(|n| n.contains(ip)));
        }
    };
    let mut g = c.benchmark_group("ip lookup");
    g.throughput(Throughput::Elements(probes.len() as u64));
    g.bench_function("botscope IpIndex", |b| b.iter(&mut run_ours));
    g.bench_function("ipnet linear scan", |b| b.iter(&mut run_linear));
    g.finish();

    let ours = best_rate(probes.len(), &mut run_ours);
    let linear = best_rate(probes.len(), &mut run_linear);
    println!();
    println!(
        "== ip lookup over {} published CIDR blocks (single thread) ==",
        nets.len()
    );
    println!("{:<28} {:>14.0} lookups/s", "botscope IpIndex", ours);
    println!(
        "{:<28} {:>14.0} lookups/s   ours is {:.0}x",
        "ipnet linear scan",
        linear,
        ours / linear
    );
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
