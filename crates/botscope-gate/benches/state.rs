//! What sharing the state costs a decision: the gate's decision in
//! process (`answer::decide_at`, as each request makes it) with `--state
//! memory` and with `--state redis://` on a real redis-server on loopback,
//! interleaved, for browsers from 10,000 addresses under a policy whose
//! two rates every request reaches (one Redis exchange per decision).
//! Single decisions timed one by one (p50, p99), then 32 at a time.
//!
//! ```sh
//! cargo bench -p botscope-gate --bench state
//! ```

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::http::{HeaderMap, HeaderValue};
use botscope_gate::state::StateConfig;
use botscope_gate::{Config, Gate};

const POLICY: &str = "rules:
  - {name: fake-crawlers, identity: spoofed, action: deny}
  - {name: admin, path: [/admin/, /wp-login.php], action: deny}
  - {name: browsers-too-fast, category: browser, rate: 100000/min per ip, action: challenge}
  - {name: network-flood, rate: 1000000/min per network, action: limit}
default: allow
";
const FIREFOX: &str = "Mozilla/5.0 (X11; Linux x86_64; rv:130.0) Gecko/20100101 Firefox/130.0";
const ROUNDS: usize = 6;
const PER_ROUND: usize = 5_000;

fn gate(dir: &std::path::Path, state: StateConfig) -> Arc<Gate> {
    let robots = dir.join("robots");
    std::fs::create_dir_all(&robots).unwrap();
    std::fs::write(robots.join("default.txt"), "User-agent: *\nAllow: /\n").unwrap();
    let policy = dir.join("policy.yaml");
    std::fs::write(&policy, POLICY).unwrap();
    Gate::new(Config {
        identity: Some(botscope_gate::identity::IdentityConfig {
            registry: Arc::new(botscope_botid::Registry::bundled()),
            owners: Arc::new(botscope_botid::NoOwners),
            dns: None,
            cache: 262_144,
        }),
        policy: Some(policy),
        state,
        ..Config::new(robots)
    })
    .unwrap()
}

fn headers() -> HeaderMap {
    let mut h = HeaderMap::new();
    h.insert("user-agent", HeaderValue::from_static(FIREFOX));
    h.insert("accept", HeaderValue::from_static("text/html"));
    h
}

fn pct(v: &mut [Duration], p: f64) -> f64 {
    v.sort();
    v[((v.len() as f64 - 1.0) * p) as usize].as_secs_f64() * 1e6
}

async fn one_by_one(g: &Gate, h: &HeaderMap, from: usize) -> Vec<Duration> {
    let mut t = Vec::with_capacity(PER_ROUND);
    for i in 0..PER_ROUND {
        let n = u32::try_from((from + i) % 10_000).unwrap();
        let ip = std::net::IpAddr::from(std::net::Ipv4Addr::from(0x5000_0000 + n * 256 + 7));
        let s = Instant::now();
        let a = botscope_gate::answer::decide_at(g, ip, h, "GET", "/page.html").await;
        t.push(s.elapsed());
        assert_eq!(a.rule, "default");
    }
    t
}

async fn at_once(g: &Arc<Gate>, h: &HeaderMap, from: usize) -> Vec<Duration> {
    let mut tasks = Vec::new();
    for w in 0..32 {
        let (g, h) = (g.clone(), h.clone());
        tasks.push(tokio::spawn(async move {
            let mut t = Vec::new();
            for i in (w..PER_ROUND).step_by(32) {
                let n = u32::try_from((from + i) % 10_000).unwrap();
                let ip =
                    std::net::IpAddr::from(std::net::Ipv4Addr::from(0x5000_0000 + n * 256 + 7));
                let s = Instant::now();
                let _ = botscope_gate::answer::decide_at(&g, ip, &h, "GET", "/page.html").await;
                t.push(s.elapsed());
            }
            t
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    all
}

fn main() {
    let redis = botscope_testkit::Redis::start();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let d = tempfile::tempdir().unwrap();
        let memory = gate(&d.path().join("memory"), StateConfig::Memory);
        let shared = gate(
            &d.path().join("redis"),
            StateConfig::Redis {
                url: redis.url(0),
                timeout: Duration::from_millis(50),
            },
        );
        let h = headers();
        // Warm-up: identities cached, the script loaded.
        let _ = one_by_one(&memory, &h, 0).await;
        let _ = one_by_one(&shared, &h, 0).await;
        for (label, concurrent) in [("one at a time", false), ("32 at a time", true)] {
            let (mut m, mut r) = (Vec::new(), Vec::new());
            for round in 0..ROUNDS {
                let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
                for k in order {
                    let g = if k == 0 { &memory } else { &shared };
                    let t = if concurrent {
                        at_once(g, &h, round * PER_ROUND).await
                    } else {
                        one_by_one(g, &h, round * PER_ROUND).await
                    };
                    if k == 0 { m.extend(t) } else { r.extend(t) }
                }
            }
            let (m50, m99) = (pct(&mut m, 0.5), pct(&mut m, 0.99));
            let (r50, r99) = (pct(&mut r, 0.5), pct(&mut r, 0.99));
            println!(
                "{label}, {} decisions each, {ROUNDS} interleaved rounds:\n\
                 | state | p50 µs | p99 µs |\n|---|---:|---:|\n\
                 | memory | {m50:.1} | {m99:.1} |\n| redis (loopback) | {r50:.1} | {r99:.1} |\n\
                 added by Redis: p50 {:.1} µs, p99 {:.1} µs\n",
                m.len(),
                r50 - m50,
                r99 - m99
            );
        }
        let st = shared.shared.as_ref().unwrap();
        assert!(st.healthy(), "Redis answered throughout");
        println!(
            "rate decisions made in Redis: {}, errors: {}",
            st.stats
                .shared_rates
                .load(std::sync::atomic::Ordering::Relaxed),
            st.stats.errors.load(std::sync::atomic::Ordering::Relaxed)
        );
    });
}
