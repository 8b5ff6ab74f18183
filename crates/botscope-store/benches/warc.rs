//! Reading WARC records (the `store import` hot path) beside the `warc`
//! crate, on the same in-memory file of robots.txt responses made from the
//! real files in examples/robots.

use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use botscope_store::warc::{Next, Reader, write_record};
use criterion::{Criterion, Throughput, criterion_group};

/// `n` response records cycling through the example files.
fn sample(n: usize) -> Vec<u8> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/robots");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.sort();
    let bodies: Vec<Vec<u8>> = files.iter().filter_map(|p| std::fs::read(p).ok()).collect();
    let mut out = Vec::new();
    for i in 0..n {
        let body = bodies
            .get(i % bodies.len().max(1))
            .cloned()
            .unwrap_or_default();
        let mut block = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )
        .into_bytes();
        block.extend_from_slice(&body);
        let fields = [
            ("WARC-Type", "response".to_owned()),
            ("WARC-Date", "2024-03-01T10:00:00Z".to_owned()),
            (
                "WARC-Record-ID",
                format!("<urn:uuid:00000000-0000-4000-8000-{i:012}>"),
            ),
            (
                "WARC-Target-URI",
                format!("https://site{i}.example/robots.txt"),
            ),
            (
                "Content-Type",
                "application/http; msgtype=response".to_owned(),
            ),
        ];
        let _ = write_record(&mut out, &fields, &block);
    }
    out
}

fn ours(data: &[u8]) -> usize {
    let mut r = Reader::new(data);
    let mut total = 0;
    while let Ok(Next::Record(rec)) = r.next_record() {
        total += rec.block.len() + rec.field("WARC-Target-URI").map_or(0, str::len);
    }
    total
}

fn peer(data: &[u8]) -> usize {
    let mut total = 0;
    for rec in warc::WarcReader::new(data).iter_records().flatten() {
        total += rec.body().len()
            + rec
                .header(warc::WarcHeader::TargetURI)
                .map_or(0, |u| u.len());
    }
    total
}

fn best_rate(bytes: usize, f: &mut impl FnMut() -> usize) -> f64 {
    let mut best = 0.0_f64;
    for _ in 0..5 {
        let start = Instant::now();
        let mut iters = 0u32;
        while start.elapsed() < Duration::from_millis(300) || iters < 2 {
            black_box(f());
            iters += 1;
        }
        best = best.max(bytes as f64 * f64::from(iters) / start.elapsed().as_secs_f64());
    }
    best
}

fn bench(c: &mut Criterion) {
    let data = sample(2000);
    assert_eq!(ours(&data), peer(&data), "both read the same records");
    let mut g = c.benchmark_group("warc read");
    g.throughput(Throughput::Bytes(data.len() as u64));
    g.bench_function("botscope warc::Reader", |b| {
        b.iter(|| ours(black_box(&data)))
    });
    g.bench_function("warc 0.4 WarcReader", |b| b.iter(|| peer(black_box(&data))));
    g.finish();
    let a = best_rate(data.len(), &mut || ours(&data));
    let b = best_rate(data.len(), &mut || peer(&data));
    println!();
    println!(
        "== WARC reading, {} records, {} bytes (single thread) ==",
        2000,
        data.len()
    );
    println!("{:<26} {:>10.0} MB/s", "botscope warc::Reader", a / 1e6);
    println!(
        "{:<26} {:>10.0} MB/s   ours is {:.2}x",
        "warc 0.4 WarcReader",
        b / 1e6,
        a / b
    );
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
