//! Harvest workers on one PostgreSQL frontier beside the single process
//! into SQLite, end to end on the simulated web (in this process, on the
//! same two cores): hosts per second for one process into SQLite, one
//! into PostgreSQL, and 1, 2 and 4 `--worker` processes sharing the
//! frontier. The total concurrency is the same in every row (512, split
//! between the workers), so the rows compare the machinery, not the
//! number of sockets.
//!
//! Each row also says where the CPU went, per 1,000 hosts: the botscope
//! processes, the PostgreSQL server and the simulated web (this process),
//! read from `/proc` every 100 ms. On one machine the rows share two
//! cores; the CPU per host says what each part needs when workers and the
//! server have machines of their own.
//!
//! Every worker row is run twice: the first round (no host's address
//! known yet, so hosts are handed to the worker their address falls to),
//! and the next round, all hosts due again with their last address known
//! (each worker claims the hosts of its own addresses).
//!
//! `cargo bench -p botscope --bench workers [-- HOSTS [CORPUS_DIR]]`;
//! `BENCH_WORKERS=2,4` runs only those worker rows.
//!
//! The real web is far: an exchange takes a round trip or more, and a
//! worker is bound by its sockets and by politeness long before its CPU.
//! `BENCH_LATENCY_MS=200` makes every simulated answer wait that long, and
//! `BENCH_CONNS=64` gives every process (the single ones and each worker)
//! that many connections of its own, as a worker on a machine of its own
//! has: then the rows show whether the shared frontier lets workers add
//! up, which on two shared cores with no latency they cannot (the cores
//! are the limit).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

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
    let latency_ms: u64 = std::env::var("BENCH_LATENCY_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    sim.set_latency(Duration::from_millis(latency_ms));
    let conns: Option<usize> = std::env::var("BENCH_CONNS")
        .ok()
        .and_then(|v| v.parse().ok());
    let bench = Bench {
        n,
        hosts,
        conns: conns.unwrap_or(512),
        common: [
            sim.fetch_flags(),
            vec!["--ip-gap".into(), "100ms".into(), "--no-progress".into()],
        ]
        .concat(),
        cpu: Cpu::start(),
    };
    let sockets = conns.map_or("512 connections in all".to_owned(), |c| {
        format!("{c} connections per process")
    });
    println!(
        "{n} hosts, 1,024 addresses, --ip-gap 100ms, answers after {latency_ms} ms, {sockets}"
    );
    println!(
        "| harvest | time | hosts/s | CPU ms per 1,000 hosts: botscope | PostgreSQL | simulated web |"
    );
    println!("|---|---|---|---|---|---|");
    let only: Option<Vec<usize>> = std::env::var("BENCH_WORKERS")
        .ok()
        .map(|v| v.split(',').filter_map(|w| w.trim().parse().ok()).collect());
    let mut single = None;
    if only.is_none() {
        let sqlite = dir.path().join("h.db");
        bench.row(
            "one process, SQLite",
            &[bench.single(&sqlite.display().to_string())],
            &|| {},
        );
        let url = pg.create_db("single");
        bench.row("one process, PostgreSQL", &[bench.single(&url)], &|| {});
        single = Some(url);
    }
    for workers in only.unwrap_or_else(|| vec![1, 2, 4]) {
        let url = pg.create_db(&format!("workers{workers}"));
        let procs: Vec<Vec<String>> = (0..workers)
            .map(|w| {
                let mut a = vec!["harvest".to_owned(), "--db".into(), url.clone()];
                a.extend(bench.common.iter().cloned());
                a.extend([
                    "--worker".into(),
                    format!("w{w}"),
                    "--once".into(),
                    "--concurrency".into(),
                    conns.unwrap_or(512 / workers).to_string(),
                    "--batch".into(),
                    "500".into(),
                ]);
                a
            })
            .collect();
        let add = || {
            let o = Command::new(BIN)
                .args(["frontier", "add"])
                .arg(&bench.hosts)
                .args(["--db", &url])
                .output()
                .expect("frontier add");
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        };
        let s = if workers > 1 { "s" } else { "" };
        bench.row(
            &format!("{workers} worker{s}, PostgreSQL frontier"),
            &procs,
            &add,
        );
        // The next round: every host due again, its last address known.
        let again = || psql(&url, "UPDATE frontier SET due = 0");
        bench.row(
            &format!("{workers} worker{s}, the next round"),
            &procs,
            &again,
        );
    }
    if let Some(url) = single {
        sizes(&url);
    }
    drop(sim);
}

struct Bench {
    n: usize,
    hosts: PathBuf,
    /// Connections of a single process.
    conns: usize,
    common: Vec<String>,
    cpu: Cpu,
}

impl Bench {
    /// A plain harvest of the list into `db`.
    fn single(&self, db: &str) -> Vec<String> {
        let mut a = vec![
            "harvest".to_owned(),
            self.hosts.display().to_string(),
            "--db".into(),
            db.to_owned(),
        ];
        a.extend(self.common.iter().cloned());
        a.extend(["--concurrency".into(), self.conns.to_string()]);
        a
    }

    /// Runs `procs` at once (after `setup`) and prints their row.
    fn row(&self, label: &str, procs: &[Vec<String>], setup: &dyn Fn()) {
        setup();
        let before = self.cpu.now();
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
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(o.status.success(), "{err}");
            for line in err.lines().filter(|l| l.starts_with("worker ")) {
                eprintln!("  {line}");
            }
        }
        let secs = started.elapsed().as_secs_f64();
        let used = self.cpu.since(&before);
        let per = |part: &str| used.get(part).copied().unwrap_or(0.0) * 1e6 / self.n as f64;
        println!(
            "| {label} | {secs:.1} s | {:.0} | {:.0} | {:.0} | {:.0} |",
            self.n as f64 / secs,
            per("botscope"),
            per("postgres"),
            per("sim"),
        );
    }
}

/// CPU seconds per part of the machine, sampled from `/proc`: the last
/// seen total of every process, so that one that exits keeps what it used
/// (up to the last sample).
struct Cpu {
    seen: Arc<Mutex<HashMap<u32, (&'static str, f64)>>>,
    stop: Arc<AtomicBool>,
}

impl Cpu {
    fn start() -> Cpu {
        let tick = Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .ok()
            .and_then(|o| {
                String::from_utf8_lossy(&o.stdout)
                    .trim()
                    .parse::<f64>()
                    .ok()
            })
            .unwrap_or(100.0);
        let cpu = Cpu {
            seen: Arc::default(),
            stop: Arc::default(),
        };
        let (seen, stop) = (cpu.seen.clone(), cpu.stop.clone());
        let me = std::process::id();
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let now = sample(me, tick);
                seen.lock().expect("cpu").extend(now);
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        cpu
    }

    fn now(&self) -> HashMap<u32, (&'static str, f64)> {
        self.seen.lock().expect("cpu").clone()
    }

    /// CPU seconds per part since `before`.
    fn since(&self, before: &HashMap<u32, (&'static str, f64)>) -> HashMap<&'static str, f64> {
        std::thread::sleep(Duration::from_millis(150));
        let mut out = HashMap::new();
        for (pid, (part, t)) in self.now() {
            let was = before.get(&pid).map_or(0.0, |b| b.1);
            *out.entry(part).or_default() += t - was;
        }
        out
    }
}

impl Drop for Cpu {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Every process of a part, with its CPU seconds so far.
fn sample(me: u32, tick: f64) -> Vec<(u32, (&'static str, f64))> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| {
        let pid: u32 = e.ok()?.file_name().to_str()?.parse().ok()?;
        let stat =
            std::fs::read_to_string(Path::new("/proc").join(pid.to_string()).join("stat")).ok()?;
        let (head, rest) = stat.rsplit_once(')')?;
        let comm = head.split_once('(')?.1;
        let part = if pid == me {
            "sim"
        } else if comm == "botscope" {
            "botscope"
        } else if comm == "postgres" {
            "postgres"
        } else {
            return None;
        };
        let f: Vec<&str> = rest.split_whitespace().collect();
        let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
        Some((pid, (part, ticks / tick)))
    })
    .collect()
}

/// Runs `sql` on the database at `url`.
fn psql(url: &str, sql: &str) {
    let bin = botscope_testkit::pg::bin_dir().expect("PostgreSQL");
    let o = Command::new(bin.join("psql"))
        .args([url, "-q", "-c", sql])
        .output()
        .expect("psql");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
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
