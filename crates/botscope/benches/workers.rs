//! Harvest workers on one PostgreSQL frontier beside the single process
//! into SQLite, end to end on the simulated web (in this process, on the
//! same two cores): hosts per second for one process into SQLite, one
//! into PostgreSQL, and 1, 2 and 4 `--worker` processes sharing the
//! frontier. The total concurrency is the same in every row (512, split
//! between the workers), so the rows compare the machinery, not the
//! number of sockets.
//!
//! `cargo bench -p botscope --bench workers [-- HOSTS [CORPUS_DIR]]`

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Instant;

use botscope_simweb::{Config, Sim, bulk};
use botscope_testkit::pg::Postgres;

const BIN: &str = env!("CARGO_BIN_EXE_botscope");

fn main() {
    let mut args = std::env::args().skip(1).filter(|a| !a.starts_with("--"));
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let corpus_dir = args.next().map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/robots"),
        PathBuf::from,
    );
    let corpus = botscope_simweb::read_corpus(&corpus_dir);
    assert!(!corpus.is_empty(), "no files in {}", corpus_dir.display());
    let dir = tempfile::tempdir().expect("tempdir");
    let hosts = dir.path().join("hosts.txt");
    let sites = bulk(n, corpus.len());
    let list: String = sites.iter().map(|s| format!("{}\n", s.name)).collect();
    std::fs::write(&hosts, list).expect("hosts");
    let pg = Postgres::start();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let sim = rt
        .block_on(Sim::start(Config {
            sites,
            addresses: 1024,
            corpus,
        }))
        .expect("sim");
    let common = |db: &str| -> Vec<String> {
        [
            "--db",
            db,
            "--dns",
            &sim.dns.to_string(),
            "--allow-private",
            "--http-port",
            &sim.http_port.to_string(),
            "--https-port",
            &sim.https_port.to_string(),
            "--ip-gap",
            "100ms",
            "--no-progress",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect()
    };
    let run = |label: &str, procs: Vec<Vec<String>>, setup: &dyn Fn()| {
        setup();
        let started = Instant::now();
        let children: Vec<_> = procs
            .iter()
            .map(|a| {
                Command::new(BIN)
                    .args(a)
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .spawn()
                    .expect("spawn")
            })
            .collect();
        for c in children {
            let o = c.wait_with_output().expect("wait");
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        }
        let secs = started.elapsed().as_secs_f64();
        println!("| {label} | {secs:.1} s | {:.0} |", n as f64 / secs);
    };
    println!("{n} hosts, 1,024 addresses, --ip-gap 100ms, 512 connections in all");
    println!("| harvest | time | hosts/s |");
    println!("|---|---|---|");
    let sqlite = dir.path().join("h.db");
    let mut a = vec!["harvest".to_owned(), hosts.display().to_string()];
    a.extend(common(&sqlite.display().to_string()));
    a.extend(["--concurrency".into(), "512".into()]);
    run("one process, SQLite", vec![a], &|| {});
    let url = pg.create_db("single");
    let mut a = vec!["harvest".to_owned(), hosts.display().to_string()];
    a.extend(common(&url));
    a.extend(["--concurrency".into(), "512".into()]);
    run("one process, PostgreSQL", vec![a], &|| {});
    sizes(&url);
    for workers in [1usize, 2, 4] {
        let url = pg.create_db(&format!("workers{workers}"));
        let procs: Vec<Vec<String>> = (0..workers)
            .map(|w| {
                let mut a = vec!["harvest".to_owned()];
                a.extend(common(&url));
                a.extend([
                    "--worker".into(),
                    format!("w{w}"),
                    "--once".into(),
                    "--concurrency".into(),
                    (512 / workers).to_string(),
                    "--batch".into(),
                    "500".into(),
                ]);
                a
            })
            .collect();
        let add = || {
            let o = Command::new(BIN)
                .args([
                    "frontier",
                    "add",
                    &hosts.display().to_string(),
                    "--db",
                    &url,
                ])
                .output()
                .expect("frontier add");
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        };
        run(
            &format!(
                "{workers} worker{}, PostgreSQL frontier",
                if workers > 1 { "s" } else { "" }
            ),
            procs,
            &add,
        );
    }
    drop(sim);
}

/// Rows and bytes (heap, indexes and TOAST) per table of the store at
/// `url`, for the scale plan.
fn sizes(url: &str) {
    let Some(bin) = botscope_testkit::pg::bin_dir() else {
        return;
    };
    let o = Command::new(bin.join("psql"))
        .args([
            url,
            "-At",
            "-F",
            " | ",
            "-c",
            "SELECT relname, n_live_tup, pg_total_relation_size(relid)
             FROM pg_stat_user_tables ORDER BY pg_total_relation_size(relid) DESC",
        ])
        .output()
        .expect("psql");
    println!("\n| table | rows | bytes |\n|---|---|---|");
    for line in String::from_utf8_lossy(&o.stdout).lines() {
        println!("| {line} |");
    }
    println!();
}
