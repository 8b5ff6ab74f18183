//! The shared frontier under load: claims per second with batches, with
//! 1, 2 and 4 claimers on one PostgreSQL server (started by the bench in a
//! temporary directory on loopback), each claim followed by the release
//! of its hosts as a worker does; and the same with a reader holding a
//! transaction open the whole time (the dead-tuple trap of SKIP LOCKED
//! queues). Published figures for SKIP LOCKED queues: pgqrs about 20,000
//! messages/s at batch 50 with 4 consumers; graphile-worker about 15,600
//! jobs/s unbatched.
//!
//! `cargo bench -p botscope-store --bench frontier [-- HOSTS]`

use std::time::{Duration, Instant};

use botscope_store::{Done, Frontier, MONTH, PgStore};
use botscope_testkit::pg::Postgres;

/// Claims (and releases) until the frontier has nothing due; returns the
/// hosts taken and the claims made.
fn drain(url: &str, worker: &str, batch: usize, now: i64) -> (u64, u64) {
    let s = PgStore::open(url).expect("open");
    let (mut hosts, mut claims) = (0u64, 0u64);
    loop {
        let c = s
            .frontier_claim(worker, batch, Duration::from_secs(600), now)
            .expect("claim");
        if c.is_empty() {
            return (hosts, claims);
        }
        let done: Vec<Done> = c
            .iter()
            .map(|c| Done {
                host: c.host.clone(),
                time: now,
                failed: false,
                changed: false,
                retry_at: None,
                address: None,
            })
            .collect();
        s.frontier_release(worker, &done, MONTH).expect("release");
        hosts += c.len() as u64;
        claims += 1;
    }
}

fn main() {
    let n: u64 = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(200_000);
    let pg = Postgres::start();
    let hosts: Vec<(Option<u64>, String)> = (0..n)
        .map(|i| (Some(i + 1), format!("host{i}.example")))
        .collect();
    println!("frontier of {n} hosts; each claim is followed by its release");
    println!("| claimers | batch | long reader | claims/s | hosts/s | dead tuples after |");
    println!("|---|---|---|---|---|---|");
    let mut round = 0;
    for (workers, batch, reader) in [
        (1, 1, false),
        (4, 1, false),
        (1, 50, false),
        (2, 50, false),
        (4, 50, false),
        (4, 500, false),
        (4, 50, true),
    ] {
        round += 1;
        let url = pg.create_db(&format!("bench{round}"));
        let s = PgStore::open(&url).expect("open");
        // Unbatched rounds take a tenth of the hosts (their rate is what
        // matters, not their length).
        let take = if batch == 1 { n / 10 } else { n };
        s.frontier_add(&hosts[..take as usize], 1_000).expect("add");
        // A reader holding one transaction open through the round.
        let holder = reader.then(|| {
            let url = url.clone();
            let (tx, rx) = std::sync::mpsc::channel::<()>();
            let t = std::thread::spawn(move || {
                let mut c = postgres::Client::connect(&url, postgres::NoTls).expect("connect");
                let mut t = c.transaction().expect("begin");
                t.query("SELECT count(*) FROM frontier", &[]).expect("read");
                let _ = rx.recv();
                drop(t);
            });
            (tx, t)
        });
        let started = Instant::now();
        let threads: Vec<_> = (0..workers)
            .map(|w| {
                let url = url.clone();
                std::thread::spawn(move || drain(&url, &format!("w{w}"), batch, 1_000))
            })
            .collect();
        let (mut got, mut claims) = (0, 0);
        for t in threads {
            let (h, c) = t.join().expect("claimer");
            got += h;
            claims += c;
        }
        let secs = started.elapsed().as_secs_f64();
        assert_eq!(got, take, "every host claimed once");
        if let Some((tx, t)) = holder {
            let _ = tx.send(());
            let _ = t.join();
        }
        let dead = s.frontier_stats(1_000).expect("stats").dead_tuples;
        println!(
            "| {workers} | {batch} | {} | {:.0} | {:.0} | {dead} |",
            if reader { "yes" } else { "no" },
            claims as f64 / secs,
            got as f64 / secs
        );
    }
}
