//! The gate under load: `GET /auth` and `GET /robots.txt` from 64
//! concurrent keep-alive clients on loopback, each request as a trusted
//! proxy forwarding for a different client address, against lists of a
//! million addresses; beside it, nginx serving a static file under the
//! same load (the pair's other half: the gate must not be what limits
//! it).
//!
//! Two loads: closed loop (the most each carries at 64 connections), then
//! open loop at bounded rates, a quarter, a half and three quarters of
//! nginx's static rate, on both (latency counted from when each request
//! was due; the generator on one thread of its own).
//!
//! ```sh
//! cargo bench -p botscope-gate --bench auth
//! ```
//!
//! `BOTSCOPE_LOAD_SCALE=F` multiplies every request count (default 1).
//! `cargo bench -p botscope-gate --bench auth -- signed` runs the signed
//! closed loop alone (to profile it). `-- parts` runs the closed loops
//! that bound the signed rate: unsigned requests, the signed requests to a
//! second gate that does not check signatures (what carrying the three
//! fields costs the gate and the generator), the signed requests checked,
//! and the Ed25519 checks alone in batches; it prints the highest share of
//! the unsigned rate that a check costing nothing but its curve
//! arithmetic would allow on this machine's cores.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use botscope_botid::IpRange;
use botscope_gate::{Category, Config, Server};
use botscope_testkit::load::{Figures, Nginx, Target, client, load, paced};

const CLIENTS: usize = 64;
/// The signature agent of the signed requests.
const AGENT: &str = "https://agent.bench.example";
/// Distinct signed requests (each its own nonce), sent in turn.
const SIGNED: usize = 20_000;
/// Addresses in the lists.
const LISTED: u32 = 1_000_000;

fn main() {
    let scale: f64 = std::env::var("BOTSCOPE_LOAD_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0);
    let n = |k: usize| ((k as f64 * scale) as usize).max(CLIENTS);
    let d = tempfile::tempdir().unwrap();
    let lists = d.path().join("lists");
    std::fs::create_dir_all(&lists).unwrap();
    // A million verified, other and suspect addresses in 10.0.0.0/8,
    // Googlebot's published /19, and 200 verified Googlebot addresses.
    let (mut ok, mut other, mut suspect, mut google) =
        (String::new(), String::new(), String::new(), String::new());
    for i in 0..LISTED {
        let ip = std::net::Ipv4Addr::from(0x0a00_0000 + i * 7);
        let list = match i % 10 {
            0..=5 => &mut ok,
            6..=8 => &mut other,
            _ => &mut suspect,
        };
        writeln!(list, "{ip}").unwrap();
    }
    for i in 0..200u32 {
        let ip = std::net::Ipv4Addr::from(0x42f9_4000 + i);
        writeln!(ok, "{ip}").unwrap();
        writeln!(google, "{ip}").unwrap();
    }
    for (name, body) in [
        ("all-ok-bots.txt", &ok),
        ("other-bots.txt", &other),
        ("suspect-bots.txt", &suspect),
        ("googlebot.txt", &google),
    ] {
        std::fs::write(lists.join(name), body).unwrap();
    }
    let robots = d.path().join("robots");
    std::fs::create_dir_all(&robots).unwrap();
    for (name, body) in [
        ("default.txt", "User-agent: *\nDisallow: /private/\n"),
        ("all-ok-bots.txt", "User-agent: *\nAllow: /\n"),
        ("googlebot.txt", "User-agent: Googlebot\nAllow: /\n"),
        ("suspect-bots.txt", "User-agent: *\nDisallow: /\n"),
    ] {
        std::fs::write(robots.join(name), body).unwrap();
    }
    let unchecking = Config {
        lists: Some(lists.clone()),
        trust_proxy: vec![IpRange::parse_any("127.0.0.1/32").unwrap()],
        deny: vec![Category::Suspect],
        ..Config::new(robots.clone())
    };
    let config = Config {
        lists: Some(lists),
        trust_proxy: vec![IpRange::parse_any("127.0.0.1/32").unwrap()],
        deny: vec![Category::Suspect],
        signatures: Some(botscope_gate::signature::SignatureConfig {
            registry: std::sync::Arc::new(
                botscope_botid::Registry::parse(
                    "bench.yaml",
                    &format!(
                        "bots:\n- name: SignedBot\n  category: ai-assistant\n  signature_agents: ['{AGENT}']\n"
                    ),
                )
                .unwrap(),
            ),
            directory: botscope_http::directory::DirectoryConfig::default(),
            bounds: botscope_http::keycache::Bounds::default(),
        }),
        ..Config::new(robots)
    };
    let key = botscope_httpsig::SigningKey::generate().unwrap();
    let directory = botscope_httpsig::Directory {
        keys: vec![(key.keyid(), key.public())],
        ..botscope_httpsig::Directory::default()
    };
    let started = Instant::now();
    // The gate on a runtime of its own, as `botscope gate` runs it.
    let gate = botscope_testkit::spawn_server(None, move |ready, stop| async move {
        let server = Server::bind(config, "127.0.0.1:0".parse().unwrap())
            .await
            .expect("gate");
        // The agent's keys are in, as once its directory has been fetched.
        server
            .gate()
            .signatures()
            .expect("signatures on")
            .keys()
            .insert(AGENT, directory, Duration::from_secs(3600));
        ready.send(server.local_addr());
        server.run(stop).await.unwrap();
    });
    let addr = gate.addr;
    eprintln!(
        "gate ready in {:.2} s with {} listed addresses",
        started.elapsed().as_secs_f64(),
        LISTED + 400
    );
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    // Clients: listed addresses of every list, Googlebot, and strangers.
    let targets = |path: &str| -> Vec<Target> {
        (0..1000u32)
            .map(|i| {
                let ip = match i % 4 {
                    0 => std::net::Ipv4Addr::from(0x0a00_0000 + (i * 7919 % LISTED) * 7),
                    1 => std::net::Ipv4Addr::from(0x42f9_4000 + i % 200),
                    2 => std::net::Ipv4Addr::from(0xc633_6400 + i),
                    _ => std::net::Ipv4Addr::from(0x0a00_0001 + i * 7),
                };
                Target {
                    url: format!("http://{addr}{path}"),
                    headers: vec![("X-Real-IP".into(), ip.to_string())],
                }
            })
            .collect()
    };
    // Signed requests as nginx passes them to /auth: the crawler's three
    // fields and the original host, each with a nonce of its own (after
    // one round the same nonce comes back: a replay, answered `invalid`
    // after the same signature check).
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let signed_targets = |path: &str| -> Vec<Target> {
        (0..SIGNED)
            .map(|i| {
                let req =
                    botscope_httpsig::Request::new("GET", "https", "shop.example", "/", vec![]);
                let spec = botscope_httpsig::SignSpec::new(
                    Some(AGENT),
                    now,
                    3600,
                    Some(format!("nonce-{i}")),
                );
                let signed = botscope_httpsig::sign_request(&req, &key, &spec).unwrap();
                let mut headers = signed.headers();
                headers.push(("X-Original-Host".into(), "shop.example".into()));
                headers.push(("X-Original-URI".into(), "/".into()));
                headers.push((
                    "X-Real-IP".into(),
                    std::net::Ipv4Addr::from(0xc633_6400 + i as u32 % 1000).to_string(),
                ));
                Target {
                    url: format!("http://{addr}{path}"),
                    headers,
                }
            })
            .collect()
    };
    let signed = signed_targets("/auth");
    if std::env::args().skip(1).any(|a| a == "parts") {
        parts(&rt, unchecking, &key, &targets("/auth"), &signed, n);
        return;
    }
    if std::env::args().skip(1).any(|a| a == "signed") {
        let f = rt.block_on(load(&client(CLIENTS), &signed, n(100_000), CLIENTS, &[403]));
        println!("{}", f.row("gate `GET /auth`, signed (Ed25519)"));
        return;
    }
    let nginx = Nginx::start(b"User-agent: *\nDisallow: /private/\n");
    let (auth, static_rate) = rt.block_on(async {
        let c = client(CLIENTS);
        println!("\n{CLIENTS} concurrent clients, keep-alive, loopback\n");
        println!("| what | requests | non-200/403 | requests/s | p50 ms | p99 ms | max ms |");
        println!("|---|---:|---:|---:|---:|---:|---:|");
        let auth = load(&c, &targets("/auth"), n(200_000), CLIENTS, &[403]).await;
        println!("{}", auth.row("gate `GET /auth`"));
        let signed_auth = load(&c, &signed, n(100_000), CLIENTS, &[403]).await;
        println!("{}", signed_auth.row("gate `GET /auth`, signed (Ed25519)"));
        let robots = load(&c, &targets("/robots.txt"), n(100_000), CLIENTS, &[]).await;
        println!("{}", robots.row("gate `GET /robots.txt`"));
        let static_rate = match &nginx {
            Some(ng) => {
                let f = load(&c, &[Target::get(ng.url())], n(200_000), CLIENTS, &[]).await;
                println!("{}", f.row("nginx: a static file (36 bytes)"));
                println!(
                    "\nThe gate's /auth runs at {:.0}% of nginx's static rate.",
                    100.0 * auth.rate() / f.rate()
                );
                println!(
                    "Signed requests run at {:.0}% of the unsigned /auth rate.",
                    100.0 * signed_auth.rate() / auth.rate()
                );
                Some(f.rate())
            }
            None => {
                println!("\n(nginx not found: no static-file baseline)");
                None
            }
        };
        (auth, static_rate)
    });
    drop(rt);
    // Open loop: the generator on one thread, requests due at a fixed rate.
    let base = static_rate.unwrap_or_else(|| auth.rate());
    let paced_rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    paced_rt.block_on(async {
        println!(
            "\nBounded load, open loop: {CLIENTS} connections, requests due at a fixed rate \
             (a share of {:.0}/s, {}'s closed-loop rate), latency from when each was due\n",
            base,
            if static_rate.is_some() { "nginx static" } else { "the gate" }
        );
        println!(
            "| what | rate | requests | non-200/403 | requests/s | p50 ms | p99 ms | max ms | generator late p99 ms |"
        );
        println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
        let row = |label: &str, share: f64, f: &Figures| {
            let ms = |d: Duration| format!("{:.2}", d.as_secs_f64() * 1000.0);
            println!(
                "| {label} | {:.0}% | {} | {} | {:.0} | {} | {} | {} | {} |",
                share * 100.0,
                f.requests,
                f.errors,
                f.rate(),
                ms(f.p50),
                ms(f.p99),
                ms(f.max),
                ms(f.late_p99)
            );
        };
        for share in [0.25, 0.5, 0.75] {
            let rate = base * share;
            let count = n((rate * 8.0) as usize);
            let f = paced(&targets("/auth"), rate, count, CLIENTS, &[403]).await;
            row("gate `GET /auth`", share, &f);
            let f = paced(&signed, rate, count, CLIENTS, &[403]).await;
            row("gate `GET /auth`, signed", share, &f);
            if let Some(ng) = &nginx {
                let f = paced(&[Target::get(ng.url())], rate, count, CLIENTS, &[]).await;
                row("nginx static", share, &f);
            }
        }
    });
}

/// The closed loops that bound the signed rate (`-- parts`).
fn parts(
    rt: &tokio::runtime::Runtime,
    unchecking: Config,
    key: &botscope_httpsig::SigningKey,
    unsigned: &[Target],
    signed: &[Target],
    n: impl Fn(usize) -> usize,
) {
    let plain = botscope_testkit::spawn_server(None, move |ready, stop| async move {
        let server = Server::bind(unchecking, "127.0.0.1:0".parse().unwrap())
            .await
            .expect("gate");
        ready.send(server.local_addr());
        server.run(stop).await.unwrap();
    });
    // The same signed requests, to the gate that does not check them.
    let carried: Vec<Target> = signed
        .iter()
        .map(|t| Target {
            url: format!("http://{}/auth", plain.addr),
            headers: t.headers.clone(),
        })
        .collect();
    let (u, c, s) = rt.block_on(async {
        let c = client(CLIENTS);
        println!("| what | requests | non-200/403 | requests/s | p50 ms | p99 ms | max ms |");
        println!("|---|---:|---:|---:|---:|---:|---:|");
        let u = load(&c, unsigned, n(200_000), CLIENTS, &[403]).await;
        println!("{}", u.row("gate `GET /auth`"));
        let carried = load(&c, &carried, n(100_000), CLIENTS, &[403]).await;
        println!(
            "{}",
            carried.row("signed requests, to a gate that does not check them")
        );
        let s = load(&c, signed, n(100_000), CLIENTS, &[403]).await;
        println!("{}", s.row("signed requests, checked"));
        (u.rate(), carried.rate(), s.rate())
    });
    // The curve arithmetic alone: checks in batches of 8 (a batch under
    // load at 64 connections holds about 10).
    let now = botscope_os::unix_now();
    let mut keys = botscope_httpsig::KeySet::new();
    keys.add_key(Some(AGENT), key.public());
    let prepared: Vec<_> = (0..8)
        .map(|i| {
            let req = botscope_httpsig::Request::new("GET", "https", "shop.example", "/", vec![]);
            let spec =
                botscope_httpsig::SignSpec::new(Some(AGENT), now, 300, Some(format!("p{i}")));
            let signed = botscope_httpsig::sign_request(&req, key, &spec).unwrap();
            let req = botscope_httpsig::Request::new(
                "GET",
                "https",
                "shop.example",
                "/",
                signed.headers(),
            );
            botscope_httpsig::prepare_request(
                &req,
                &keys,
                now,
                &botscope_httpsig::Policy::default(),
            )
        })
        .collect();
    let flat: Vec<_> = prepared.iter().flat_map(|p| p.checks()).collect();
    let rounds = 4_000;
    let t = Instant::now();
    for _ in 0..rounds {
        assert!(botscope_httpsig::check_batch(&flat).iter().all(|&b| b));
    }
    let check = t.elapsed().as_secs_f64() / (rounds * flat.len()) as f64;
    // Two cores busy: each request costs 2 / rate seconds of CPU.
    let cores = 2.0;
    let ceiling = cores / (cores / c + check);
    println!(
        "\nCPU a request (both cores, gate and generator): unsigned {:.1} µs, \
         signed and not checked {:.1} µs, signed and checked {:.1} µs; \
         an Ed25519 check in a batch of 8: {:.1} µs.",
        1e6 * cores / u,
        1e6 * cores / c,
        1e6 * cores / s,
        1e6 * check
    );
    println!(
        "Signed and checked: {:.0}% of the unsigned rate. With nothing but the curve \
         arithmetic added to carrying the fields, at most {:.0}/s = {:.0}%.",
        100.0 * s / u,
        ceiling,
        100.0 * ceiling / u
    );
}
