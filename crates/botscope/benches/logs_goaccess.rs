//! `logs analyze` beside GoAccess on the same synthetic combined log: wall
//! time of each whole process, GoAccess at its best (`TZ=UTC`: without it
//! glibc re-reads /etc/localtime for every line), five alternating rounds
//! (`BOTSCOPE_BENCH_ROUNDS`; the median is a middle one, so an odd number),
//! each botscope run against the GoAccess run before it, and botscope's
//! peak memory (from a run before any GoAccess run).
//!
//! Each run's processor time (user and system, every thread) is printed
//! beside its wall time, with the ratio of the two programs' processor
//! times. GoAccess runs on one thread and botscope on three (a reader and
//! two workers): the wall ratio counts botscope's second core, which a
//! neighbour holding a core takes away; the processor ratio does not
//! depend on it, and it is what the wall ratio falls to when botscope
//! gets one core.
//!
//! ```sh
//! cargo bench -p botscope --bench logs_goaccess                  # 2,000,000 lines
//! BOTSCOPE_LOG_LINES=500000 cargo bench -p botscope --bench logs_goaccess
//! BOTSCOPE_LOG_SHAPE=many-clients BOTSCOPE_LOG_LINES=1000000 cargo bench -p botscope --bench logs_goaccess
//! BOTSCOPE_LOG_SHAPE=many-agents BOTSCOPE_LOG_LINES=1000000 cargo bench -p botscope --bench logs_goaccess
//! BOTSCOPE_LOG_SHAPE=many-addresses BOTSCOPE_LOG_LINES=1000000 cargo bench -p botscope --bench logs_goaccess
//! ```
//!
//! `many-clients` is the harder log of a busy site
//! (`synthlog::write_many_clients`): 4,000 addresses with thousands of
//! distinct browser User-Agents, interleaved, lines of about 320 bytes.
//! `many-agents` (`synthlog::write_many_agents`) is harder still for the
//! per-client work: 200,000 addresses, each with its own browser build
//! (184,379 distinct User-Agents in 1,000,000 lines), lines of about
//! 220 bytes. `many-addresses` (`synthlog::write_many_addresses`) is a
//! large site's few days: 200,000 addresses sharing 4,000 browser builds
//! (2,876 distinct User-Agents in 1,000,000 lines), nearly every path
//! distinct, lines of about 260 bytes.
//!
//! `BOTSCOPE_BENCH_BUSY=1` runs the rounds beside a neighbour that holds
//! one core the whole time (a thread of the bench, spinning), as on a
//! busy machine: both programs share the machine with it.
//!
//! ```sh
//! BOTSCOPE_BENCH_BUSY=1 BOTSCOPE_LOG_SHAPE=many-addresses BOTSCOPE_LOG_LINES=1000000 cargo bench -p botscope --bench logs_goaccess
//! ```
//!
//! Each round also runs `logs analyze --robots FILE` (a real site's
//! robots.txt, `examples/robots/www.ebay.com.txt`: 160 lines, wildcard
//! rules at the root, so that every request is judged against them;
//! `BOTSCOPE_BENCH_ROBOTS=FILE` for another): its ratio to GoAccess, and
//! its time over the plain run's of the same round.
//!
//! GoAccess comes from Debian (`apt-get install goaccess`); without it only
//! botscope is timed.

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

mod common;

use nix::sys::resource::{UsageWho, getrusage};

use common::children_cpu;

/// What one whole process took: wall time and processor time.
#[derive(Clone, Copy)]
struct Took {
    wall: Duration,
    cpu: Duration,
}

fn timed(cmd: &mut Command) -> Took {
    let cpu = children_cpu();
    let t = Instant::now();
    let status = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("run");
    let wall = t.elapsed();
    assert!(status.success(), "{cmd:?}");
    Took {
        wall,
        cpu: children_cpu().saturating_sub(cpu),
    }
}

fn ours(log: &Path, out: &Path, robots: Option<&Path>) -> Took {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_botscope"));
    cmd.args(["logs", "analyze", "--format", "json", "--out"])
        .arg(out)
        .arg(log);
    if let Some(r) = robots {
        cmd.arg("--robots").arg(r);
    }
    timed(&mut cmd)
}

fn theirs(log: &Path, out: &Path) -> Took {
    timed(
        Command::new("goaccess")
            .env("TZ", "UTC")
            .arg(log)
            .arg("--log-format=COMBINED")
            .arg("-o")
            .arg(out),
    )
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let lines: u64 = std::env::var("BOTSCOPE_LOG_LINES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000_000);
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("big.log");
    let f = std::fs::File::create(&log).expect("create");
    let shape = std::env::var("BOTSCOPE_LOG_SHAPE").unwrap_or_default();
    match shape.as_str() {
        "many-clients" => botscope_testkit::synthlog::write_many_clients(f, lines, 1),
        "many-agents" => botscope_testkit::synthlog::write_many_agents(f, lines, 1),
        "many-addresses" => botscope_testkit::synthlog::write_many_addresses(f, lines, 1),
        _ => botscope_testkit::synthlog::write(f, lines, 1),
    }
    .expect("write the log");
    let (ours_out, theirs_out) = (dir.path().join("ours.json"), dir.path().join("report.json"));
    let s = |d: Duration| format!("{:.2} s", d.as_secs_f64());
    // Peak memory first, while botscope is the only child so far.
    let first = ours(&log, &ours_out, None);
    let peak_kb = getrusage(UsageWho::RUSAGE_CHILDREN)
        .expect("getrusage")
        .max_rss();
    println!(
        "logs analyze, {lines} lines (seed 1{}), wall time per whole process:",
        if shape.is_empty() {
            String::new()
        } else {
            format!(", {shape}")
        }
    );
    println!(
        "  botscope alone: {} (processor {}), peak {} MB",
        s(first.wall),
        s(first.cpu),
        peak_kb / 1024
    );
    let has_goaccess = Command::new("goaccess")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|st| st.success());
    if !has_goaccess {
        println!("  goaccess not installed (apt-get install goaccess): no ratio");
        return;
    }
    let rounds: usize = std::env::var("BOTSCOPE_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|n| *n > 0)
        .unwrap_or(5);
    let ratio = |g: Duration, b: Duration| g.as_secs_f64() / b.as_secs_f64().max(1e-9);
    let busy = std::env::var("BOTSCOPE_BENCH_BUSY").is_ok_and(|v| v == "1");
    let stop = Arc::new(AtomicBool::new(false));
    let neighbour = busy.then(|| {
        println!("  beside a neighbour holding one core (BOTSCOPE_BENCH_BUSY=1):");
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut x = 0u64;
            while !stop.load(Ordering::Relaxed) {
                x = std::hint::black_box(x.wrapping_add(1));
            }
        })
    });
    let robots = std::env::var_os("BOTSCOPE_BENCH_ROBOTS")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/robots/www.ebay.com.txt")
        });
    println!("  --robots {}", robots.display());
    let (mut walls, mut cpus) = (Vec::new(), Vec::new());
    let (mut with_robots, mut over_plain) = (Vec::new(), Vec::new());
    for round in 1..=rounds {
        let g = theirs(&log, &theirs_out);
        let b = ours(&log, &ours_out, None);
        let r = ours(&log, &ours_out, Some(&robots));
        let (w, c) = (ratio(g.wall, b.wall), ratio(g.cpu, b.cpu));
        let (rw, over) = (ratio(g.wall, r.wall), ratio(r.wall, b.wall));
        println!(
            "  round {round}: goaccess (TZ=UTC) {} (processor {})  botscope {} (processor {})  \
             ratio {w:.1}x (processor {c:.1}x)  with --robots {} (processor {}) ratio {rw:.1}x, \
             {:+.0}% over the plain run",
            s(g.wall),
            s(g.cpu),
            s(b.wall),
            s(b.cpu),
            s(r.wall),
            s(r.cpu),
            (over - 1.0) * 100.0,
        );
        walls.push(w);
        cpus.push(c);
        with_robots.push(rw);
        over_plain.push(over);
    }
    stop.store(true, Ordering::Relaxed);
    if let Some(t) = neighbour {
        t.join().expect("the neighbour thread");
    }
    // The wall line as it always read; the processor line beside it.
    for (what, mut ratios) in [
        ("ratio", walls),
        ("processor-time ratio", cpus),
        ("ratio with --robots", with_robots),
    ] {
        ratios.sort_by(f64::total_cmp);
        println!(
            "  {what} (goaccess / botscope): median {:.1}x (lowest {:.1}x, highest {:.1}x)",
            ratios[ratios.len() / 2],
            ratios[0],
            ratios[ratios.len() - 1]
        );
    }
    over_plain.sort_by(f64::total_cmp);
    let pct = |x: f64| (x - 1.0) * 100.0;
    println!(
        "  --robots over the plain run: median {:+.0}% (lowest {:+.0}%, highest {:+.0}%)",
        pct(over_plain[over_plain.len() / 2]),
        pct(over_plain[0]),
        pct(over_plain[over_plain.len() - 1])
    );
}
