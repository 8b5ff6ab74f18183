//! The CPU a signed request's check costs the gate, without HTTP: 64
//! tasks on a runtime of two workers (as at 64 connections), each asking
//! `Signatures::check` about one pre-signed request after another; then
//! the same requests' parts alone (reading the fields and building the
//! base, the Ed25519 checks in batches).
//!
//! ```sh
//! cargo run --release -p botscope-gate --example check_cost
//! ```

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::http::{HeaderMap, HeaderName, HeaderValue};
use botscope_gate::signature::{SignatureConfig, Signatures};

const AGENT: &str = "https://agent.bench.example";
const TASKS: usize = 64;
const PER_TASK: usize = 3_000;

fn cpu_seconds() -> f64 {
    // utime + stime of this process, from /proc (Linux).
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|s| s.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}

fn main() {
    let now = botscope_os::unix_now();
    let key = botscope_httpsig::SigningKey::generate().expect("key");
    let heads: Vec<HeaderMap> = (0..TASKS * PER_TASK)
        .map(|i| {
            let req = botscope_httpsig::Request::new("GET", "https", "shop.example", "/", vec![]);
            let spec =
                botscope_httpsig::SignSpec::new(Some(AGENT), now, 3600, Some(format!("n-{i}")));
            let signed = botscope_httpsig::sign_request(&req, &key, &spec).expect("signed");
            let mut h = HeaderMap::new();
            for (name, value) in signed.headers() {
                h.append(
                    HeaderName::from_bytes(name.to_ascii_lowercase().as_bytes()).expect("name"),
                    HeaderValue::from_str(&value).expect("value"),
                );
            }
            h.insert("x-original-host", HeaderValue::from_static("shop.example"));
            h.insert("x-original-uri", HeaderValue::from_static("/"));
            h
        })
        .collect();
    let heads = Arc::new(heads);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let (cpu, wall, verified) = rt.block_on(async {
        let registry = botscope_botid::Registry::parse(
            "bench.yaml",
            &format!("bots:\n- name: SignedBot\n  category: ai-assistant\n  signature_agents: ['{AGENT}']\n"),
        )
        .expect("registry");
        let sigs = Arc::new(Signatures::new(SignatureConfig {
            registry: Arc::new(registry),
            directory: botscope_http::directory::DirectoryConfig::default(),
            bounds: botscope_http::keycache::Bounds::default(),
        }));
        let directory = botscope_httpsig::Directory {
            keys: vec![(key.keyid(), key.public())],
            ..botscope_httpsig::Directory::default()
        };
        sigs.keys()
            .insert(AGENT, directory, Duration::from_secs(3600));
        let (cpu, t) = (cpu_seconds(), Instant::now());
        let tasks: Vec<_> = (0..TASKS)
            .map(|k| {
                let (sigs, heads) = (sigs.clone(), heads.clone());
                tokio::spawn(async move {
                    let mut ok = 0usize;
                    for i in 0..PER_TASK {
                        let h = &heads[k * PER_TASK + i];
                        let client = std::net::IpAddr::from([192, 0, 2, (i % 250) as u8]);
                        let c = sigs.check(h, client, now).await;
                        ok += usize::from(c.bot.is_some());
                    }
                    ok
                })
            })
            .collect();
        let mut verified = 0;
        for t in tasks {
            verified += t.await.expect("task");
        }
        (cpu_seconds() - cpu, t.elapsed().as_secs_f64(), verified)
    });
    let n = (TASKS * PER_TASK) as f64;
    assert_eq!(verified, TASKS * PER_TASK, "every request verified");
    println!(
        "Signatures::check, {TASKS} tasks on 2 workers: {:.1} µs of CPU a request ({:.0} requests/s)",
        cpu * 1e6 / n,
        n / wall
    );
}
