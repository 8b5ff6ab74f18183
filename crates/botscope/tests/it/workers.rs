//! `botscope harvest --worker` processes sharing one PostgreSQL frontier,
//! against the simulated web: each host fetched exactly once in a round
//! and one connection at a time per address with the gap kept, whichever
//! worker asks (seen from the servers' side); a worker killed with -9
//! loses nothing; a PostgreSQL restart is waited out.

use std::collections::HashMap;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use botscope_simweb::{Behaviour, Config, Sim, Site, bulk};
use botscope_testkit::pg::Postgres;
use serde_json::Value;

use crate::scratch as dir;

/// Hosts with the bulk mix, but redirects only on the same host: a
/// redirect to another host would count as a second hit on that host.
fn sites(n: usize, corpus_len: usize) -> Vec<Site> {
    let mut v = bulk(n, corpus_len);
    for s in &mut v {
        if matches!(s.behaviour, Behaviour::RedirectTo(_)) {
            s.behaviour = Behaviour::RedirectChain(2);
        }
    }
    v
}

/// Sites whose robots.txt is parsed.
fn parsed(sites: &[Site]) -> u64 {
    sites
        .iter()
        .filter(|s| {
            matches!(
                s.behaviour,
                Behaviour::Robots(_)
                    | Behaviour::Held(_)
                    | Behaviour::Gzip
                    | Behaviour::Html
                    | Behaviour::RedirectChain(_)
            )
        })
        .count() as u64
}

fn worker_args(sim: &Sim, url: &str, name: &str, gap: &str, extra: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = ["harvest", "--db", url, "--worker", name]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    v.extend(sim.fetch_flags());
    v.extend(
        ["--ip-gap", gap, "--connect-timeout", "1s", "--no-progress"]
            .iter()
            .map(|s| (*s).to_owned()),
    );
    v.extend(extra.iter().map(|s| (*s).to_owned()));
    if !extra.contains(&"--timeout") {
        v.extend(["--timeout".to_owned(), "2s".to_owned()]);
    }
    v
}

fn spawn(args: &[String]) -> Child {
    crate::command()
        .command()
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn")
}

/// Waits for a worker off the runtime; its standard error, checked for
/// success.
async fn finish(child: Child) -> String {
    let o = tokio::task::spawn_blocking(move || child.wait_with_output())
        .await
        .expect("join")
        .expect("wait");
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{err}");
    err
}

/// Hosts a worker's summary says it harvested.
fn harvested(err: &str) -> u64 {
    err.split("harvested ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no summary in {err}"))
}

fn json(args: &[&str]) -> Value {
    let o = crate::run(args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).expect("json")
}

fn stats(url: &str) -> Value {
    json(&["store", "stats", "--format", "json", "--db", url])
}

fn frontier(url: &str) -> Value {
    json(&["frontier", "stats", "--format", "json", "--db", url])
}

/// Nothing due, nothing leased, every host fetched.
fn round_over(url: &str) {
    let f = frontier(url);
    assert_eq!(
        (
            f["due"].as_u64(),
            f["leased"].as_u64(),
            f["never_fetched"].as_u64()
        ),
        (Some(0), Some(0), Some(0)),
        "{f}"
    );
}

fn add(d: &Path, url: &str, sites: &[Site]) {
    let hosts = d.join("hosts.txt");
    let list: String = sites.iter().map(|s| format!("{}\n", s.name)).collect();
    std::fs::write(&hosts, list).expect("hosts");
    let o = crate::run(&["frontier", "add", crate::arg(&hosts), "--db", url]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// robots.txt requests per host, as the servers saw them.
fn robots_hits(sim: &Sim) -> HashMap<String, u32> {
    let mut m = HashMap::new();
    for h in sim.seen.hits() {
        if h.path == "/robots.txt" {
            *m.entry(h.host).or_default() += 1;
        }
    }
    m
}

fn corpus() -> Vec<Vec<u8>> {
    let c = botscope_simweb::example_corpus();
    assert!(c.len() >= 4, "examples/robots");
    c
}

async fn postgres() -> Postgres {
    tokio::task::spawn_blocking(Postgres::start)
        .await
        .expect("postgres")
}

/// 2 and then 4 workers, 20,000 hosts each time: every host fetched
/// exactly once, never two connections to one address, the gap kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_share_the_frontier_politely() {
    let pg = postgres().await;
    let corpus = corpus();
    let n = 20_000;
    let all = sites(n, corpus.len());
    // The gap is generous: the servers see a connection close when their
    // task gets to it, which on two busy cores can be tens of
    // milliseconds after the worker has read the answer.
    let gap = Duration::from_millis(100);
    for workers in [2usize, 4] {
        let sim = Sim::start(Config {
            sites: all.clone(),
            addresses: 200,
            corpus: corpus.clone(),
        })
        .await
        .expect("sim");
        let url = pg.create_db(&format!("workers{workers}"));
        let d = dir(&format!("workers{workers}"));
        add(&d, &url, &all);
        let started = Instant::now();
        let children: Vec<Child> = (0..workers)
            .map(|w| {
                spawn(&worker_args(
                    &sim,
                    &url,
                    &format!("w{w}"),
                    "100ms",
                    &[
                        "--once",
                        "--concurrency",
                        "128",
                        "--batch",
                        "200",
                        "--user-agent",
                        &format!("botscope-test/w{w}"),
                        // Four workers, PostgreSQL and the web on two
                        // cores: answers can be slow.
                        "--timeout",
                        "20s",
                    ],
                ))
            })
            .collect();
        let mut total = 0;
        for c in children {
            let err = finish(c).await;
            let h = harvested(&err);
            assert!(h > 0, "every worker had work: {err}");
            total += h;
        }
        eprintln!(
            "{workers} workers: {n} hosts in {:.1} s",
            started.elapsed().as_secs_f64()
        );
        assert_eq!(total, n as u64);
        // Exactly one attempt per host in the round; from the servers'
        // side, no host asked twice, and every host asked but those whose
        // name did not resolve in time (the simulated DNS drops queries
        // when two busy cores cannot keep up: recorded as `dns`).
        let s = stats(&url);
        assert_eq!(
            (s["sites"].as_u64(), s["attempts"].as_u64()),
            (Some(n as u64), Some(n as u64)),
            "{s}"
        );
        let unresolved = s["errors"]["dns"].as_u64().unwrap_or(0);
        assert_eq!(
            s["errors"].as_object().map(|e| e.len()),
            Some(usize::from(unresolved > 0)),
            "no other failure: {s}"
        );
        assert!(unresolved <= n as u64 / 100, "{s}");
        let hits = robots_hits(&sim);
        assert_eq!(hits.len() as u64, n as u64 - unresolved, "every host asked");
        let twice: Vec<_> = hits.iter().filter(|(_, c)| **c != 1).take(5).collect();
        assert!(twice.is_empty(), "asked more than once: {twice:?}");
        // Politeness across the workers, from the servers' side.
        assert_eq!(sim.seen.max_concurrent_per_ip(), 1);
        // The gap, as the start of one request to the start of the next on
        // one address: a server records the end of an answer only when its
        // task runs again, which on two busy cores can be a hundred
        // milliseconds after the worker has read it.
        let mut by_ip: HashMap<std::net::IpAddr, Vec<botscope_simweb::Hit>> = HashMap::new();
        for h in sim.seen.hits() {
            by_ip.entry(sim.addresses[&h.host]).or_default().push(h);
        }
        let mut closest: Option<(Duration, botscope_simweb::Hit, botscope_simweb::Hit)> = None;
        for (_, mut v) in by_ip {
            v.sort_by_key(|h| h.start);
            for w in v.windows(2) {
                let g = w[1].start.saturating_duration_since(w[0].start);
                if closest.as_ref().is_none_or(|(c, ..)| g < *c) {
                    closest = Some((g, w[0].clone(), w[1].clone()));
                }
            }
        }
        let (g, first, next) = closest.expect("addresses asked twice");
        assert!(
            g >= gap / 2,
            "{g:?} between two requests to one address: {first:?} then {next:?}"
        );
        assert!(
            s["versions"].as_u64().unwrap_or(0) + unresolved >= parsed(&all),
            "{s}"
        );
        assert_eq!(
            s["versions"], s["outcomes"]["parse"],
            "one version per parsed file: {s}"
        );
        assert_eq!(s["runs"], workers, "{s}");
        assert_eq!(s["unfinished_runs"], 0, "{s}");
        round_over(&url);
    }
}

/// A worker killed with -9 in the middle: another takes its hosts once
/// their lease runs out; nothing lost, no version twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_worker_loses_nothing() {
    let pg = postgres().await;
    let corpus = corpus();
    let all = sites(600, corpus.len());
    let sim = Sim::start(Config {
        sites: all.clone(),
        addresses: 8,
        corpus,
    })
    .await
    .expect("sim");
    let url = pg.create_db("killed");
    let d = dir("workers-killed");
    add(&d, &url, &all);
    let lease = ["--lease", "4s", "--batch", "50", "--concurrency", "8"];
    let mut a = spawn(&worker_args(&sim, &url, "doomed", "100ms", &lease));
    let started = Instant::now();
    loop {
        tokio::time::sleep(Duration::from_millis(100)).await;
        if stats(&url)["attempts"].as_u64().unwrap_or(0) >= 40 {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(60), "no progress");
    }
    a.kill().expect("kill -9");
    let _ = a.wait();
    let f = frontier(&url);
    let leased = f["leased"].as_u64().expect("leased");
    assert!(leased > 0, "the dead worker held hosts: {f}");
    assert_eq!(f["workers"][0][0], "doomed", "{f}");
    let before = stats(&url)["attempts"].as_u64().expect("attempts");

    let mut b = lease.to_vec();
    b.push("--once");
    let err = finish(spawn(&worker_args(&sim, &url, "heir", "100ms", &b))).await;
    assert!(harvested(&err) >= 600 - before, "{err}");
    let s = stats(&url);
    assert_eq!(s["sites"], 600, "{s}");
    assert_eq!(s["versions"], parsed(&all), "no version lost or twice: {s}");
    assert_eq!(s["sites_with_robots_txt"], parsed(&all), "{s}");
    let hits = robots_hits(&sim);
    assert_eq!(hits.len(), 600, "every host asked");
    round_over(&url);
    assert_eq!(sim.seen.max_concurrent_per_ip(), 1);
}

/// PostgreSQL restarted while two workers run: they wait for it, go on,
/// and finish the round with nothing lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_outlive_a_postgres_restart() {
    let mut pg = postgres().await;
    let corpus = corpus();
    let all = sites(3_000, corpus.len());
    let sim = Sim::start(Config {
        sites: all.clone(),
        addresses: 16,
        corpus,
    })
    .await
    .expect("sim");
    let url = pg.create_db("restart");
    let d = dir("workers-restart");
    add(&d, &url, &all);
    let flags = [
        "--once",
        "--lease",
        "6s",
        "--concurrency",
        "32",
        "--batch",
        "100",
    ];
    let children: Vec<Child> = (0..2)
        .map(|w| spawn(&worker_args(&sim, &url, &format!("r{w}"), "50ms", &flags)))
        .collect();
    let started = Instant::now();
    loop {
        tokio::time::sleep(Duration::from_millis(100)).await;
        if stats(&url)["attempts"].as_u64().unwrap_or(0) >= 300 {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(60), "no progress");
    }
    let pg = tokio::task::spawn_blocking(move || {
        pg.restart();
        pg
    })
    .await
    .expect("restart");
    let mut total = 0;
    for c in children {
        total += harvested(&finish(c).await);
    }
    assert!(total >= 3_000, "{total}");
    let s = stats(&url);
    assert_eq!(s["sites"], 3_000, "{s}");
    assert_eq!(s["versions"], parsed(&all), "{s}");
    let hits = robots_hits(&sim);
    assert_eq!(hits.len(), 3_000, "every host asked");
    round_over(&url);
    assert_eq!(sim.seen.max_concurrent_per_ip(), 1);
    drop(pg);
}

/// Refusals before anything is touched: --worker on an SQLite store,
/// a bad name, a lease too short, no host list without --worker.
#[test]
fn worker_flags_are_checked() {
    let d = dir("workers-flags");
    let db = d.join("h.db");
    let o = crate::run(&["harvest", "--db", crate::arg(&db), "--worker", "w1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        crate::stderr(&o).contains("PostgreSQL"),
        "{}",
        crate::stderr(&o)
    );
    assert!(!db.exists(), "nothing created");
    let url = "postgres://nobody@127.0.0.1:9/none";
    let o = crate::run(&["harvest", "--db", url, "--worker", "a\u{1}b"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        crate::stderr(&o).contains("--worker"),
        "{}",
        crate::stderr(&o)
    );
    let o = crate::run(&["harvest", "--db", url, "--worker", "w", "--lease", "1s"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        crate::stderr(&o).contains("--lease"),
        "{}",
        crate::stderr(&o)
    );
    let o = crate::run(&["harvest", "--db", crate::arg(&db)]);
    assert_eq!(o.status.code(), Some(2));
    let o = crate::run(&["harvest", "--db", crate::arg(&db), "--once"]);
    assert_eq!(o.status.code(), Some(2), "--once needs --worker");
}
