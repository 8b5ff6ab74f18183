//! The gate protecting a site as docs/gate.md sets it up, side by side in
//! one run.
//!
//! - `front`: Debian's nginx with the guide's configuration (every request
//!   asks the gate through `auth_request`, a keep-alive upstream) serving a
//!   static page, loaded by wrk (2 threads, 64 connections) from 10,000
//!   clients (verified Googlebot and bingbot addresses, browsers each on a
//!   network of its own) named in `X-Forwarded-For` (nginx's `realip`
//!   module, as behind a CDN); the same nginx serving the same page alone;
//!   and the same front with the lists-only gate (no identity, no policy).
//!   Every answer is checked to be the page (wrk counts any other).
//! - `flood`: a million distinct addresses each claiming Googlebot, sent
//!   straight to the gate's `/auth` at a fixed rate, the gate asking a real
//!   dnsmasq for reverse DNS; meanwhile verified and unclaimed clients at a
//!   bounded rate, their p99 against the same traffic with no flood; the
//!   memory of the process and what the gate holds (from `/metrics`).
//!
//! - `walk`: the architecture's ceiling against the gate, interleaved:
//!   the same nginx front whose `auth_request` another nginx answers with
//!   `return 200`, and the gate with a 30-rule policy that every request
//!   walks to its end (no rule holds for the browsers of the load: paths,
//!   methods, networks, User-Agent patterns, categories, identities,
//!   lists, robots.txt and rates are all asked), twelve pairs of 3 s wrk
//!   runs in turn (the order flipped every pair); the gate's rate as a
//!   share of the ceiling's, over the run and per pair.
//!
//! - `standalone`: the gate on its own in front of an application (nginx
//!   serving the page, reached over a keep-alive pool) against nginx +
//!   `auth_request` + the gate in front of the same application (the
//!   guide's block, `location /` passed to it over keep-alive), both with
//!   the balanced policy and the `front` load; twelve pairs of 3 s wrk
//!   runs in turn, the order flipped every pair.
//!
//! ```sh
//! cargo bench -p botscope-gate --bench protect               # all four
//! cargo bench -p botscope-gate --bench protect -- standalone # or front, flood, walk
//! ```
//!
//! `BOTSCOPE_FLOOD=N` sets the flood's addresses (default 1,000,000),
//! `BOTSCOPE_FLOOD_RATE=R` its requests a second (default 20,000).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fmt::Write as _;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use botscope_botid::IpRange;
use botscope_gate::{Category, Config, Server};
use botscope_testkit::load::{Figures, Nginx, Target, client, fetch, paced};

const GOOGLEBOT: &str = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
const BINGBOT: &str = "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)";
const FIREFOX: &str = "Mozilla/5.0 (X11; Linux x86_64; rv:130.0) Gecko/20100101 Firefox/130.0";
const CHROME: &str = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";
/// Rounds of wrk over the fronts, in turn (the machine's noise between
/// consecutive rounds is larger than the policy's cost).
const ROUNDS: u32 = 3;
/// The page every client fetches (36 bytes, as in the `auth` bench).
const PAGE: &[u8] = b"<!doctype html><title>p</title>ok\n\n";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let only = |w: &str| {
        !args
            .iter()
            .any(|a| ["front", "flood", "walk", "standalone"].contains(&a.as_str()))
            || args.iter().any(|a| a == w)
    };
    let d = tempfile::tempdir().unwrap();
    let robots = d.path().join("robots");
    std::fs::create_dir_all(&robots).unwrap();
    std::fs::write(
        robots.join("default.txt"),
        "User-agent: *\nDisallow: /private/\n",
    )
    .unwrap();
    let policy = d.path().join("policy.yaml");
    std::fs::write(&policy, botscope_policy::preset("balanced").unwrap()).unwrap();
    if only("front") {
        front(d.path(), &robots, &policy);
    }
    if only("flood") {
        flood(&robots, &policy);
    }
    if only("walk") {
        walk(d.path(), &robots);
    }
    if only("standalone") {
        standalone(d.path(), &robots, &policy);
    }
}

/// The standalone gate against nginx + `auth_request` + the gate, both in
/// front of one application, interleaved.
fn standalone(dir: &Path, robots: &Path, policy: &Path) {
    let Some((block, www)) = guide_site(dir, "standalone-www", "standalone") else {
        return;
    };
    let app = Nginx::start(PAGE).expect("nginx as the application");
    let auth_gate = spawn(Config {
        trust_proxy: vec![IpRange::parse_any("127.0.0.1/32").unwrap()],
        identity: Some(identity(None)),
        policy: Some(policy.to_path_buf()),
        ..Config::new(robots.to_path_buf())
    });
    // nginx passing what the gate allows to the application, over a pool.
    let with_app = format!(
        "upstream application {{ server {}; keepalive 64; }}\n{block}",
        app.addr
    );
    let pass = "location / { proxy_pass http://application; proxy_http_version 1.1; proxy_set_header Connection \"\"; }";
    let front = Nginx::front(
        &with_app,
        auth_gate.addr,
        &www,
        &format!("{REALIP}\n    {pass}"),
    )
    .expect("nginx in front");
    let alone = spawn(Config {
        trust_proxy: vec![IpRange::parse_any("127.0.0.1/32").unwrap()],
        client_header: "x-forwarded-for".to_owned(),
        identity: Some(identity(None)),
        policy: Some(policy.to_path_buf()),
        upstream: Some(botscope_gate::proxy::UpstreamConfig::new(
            format!("http://{}", app.addr).parse().unwrap(),
        )),
        ..Config::new(robots.to_path_buf())
    });
    let urls = [
        format!("http://{}/page.html", front.addr),
        format!("http://{}/page.html", alone.addr),
    ];
    let script = dir.join("standalone.lua");
    client_script(&script, &clients());
    for u in &urls {
        let _ = wrk(u, &script, 2);
    }
    const PAIRS: u32 = 12;
    const SECS: u32 = 3;
    println!(
        "\nnginx + auth_request + the gate, and the gate alone, in front of one application \
         (nginx serving a 36-byte page), interleaved: {PAIRS} pairs of {SECS} s runs, the order \
         flipped every pair; wrk -t2 -c64, the front bench's 10,000 clients, the balanced policy\n"
    );
    println!(
        "| pair | nginx + gate requests/s | gate alone requests/s | alone / nginx + gate | not the page |"
    );
    println!("|---:|---:|---:|---:|---:|");
    let (mut front_total, mut alone_total) = (0.0, 0.0);
    let mut ratios = Vec::new();
    let (mut p99_front, mut p99_alone) = (Vec::new(), Vec::new());
    for pair in 1..=PAIRS {
        let order: [usize; 2] = if pair % 2 == 1 { [0, 1] } else { [1, 0] };
        let mut w: [Option<Wrk>; 2] = [None, None];
        for k in order {
            w[k] = Some(wrk(&urls[k], &script, SECS));
        }
        let [Some(f), Some(a)] = w else {
            unreachable!()
        };
        ratios.push(a.rate / f.rate);
        front_total += f.rate;
        alone_total += a.rate;
        p99_front.push(f.p99_ms);
        p99_alone.push(a.p99_ms);
        println!(
            "| {pair} | {:.0} | {:.0} | {:.2} | {} of {} |",
            f.rate,
            a.rate,
            a.rate / f.rate,
            f.bad + a.bad,
            f.requests + a.requests
        );
    }
    ratios.sort_by(f64::total_cmp);
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    println!(
        "\nThe gate alone at {:.2}× the rate of nginx + auth_request + the gate over the run \
         (pairs {:.2}–{:.2}, median {:.2}); median p99 {:.2} ms alone, {:.2} ms behind nginx.",
        alone_total / front_total,
        ratios[0],
        ratios[ratios.len() - 1],
        ratios[ratios.len() / 2],
        median(&mut p99_alone),
        median(&mut p99_front),
    );
    for l in metrics(alone.addr, "botscope_gate_upstream_requests_total") {
        println!("    {l}");
    }
}

/// A 30-rule policy no browser request of the load meets: each walks every
/// rule to the default.
const WALKED: &str = "rules:
  - {name: protocol-files, path: [/robots.txt, /.well-known/], action: allow}
  - {name: fake-crawlers, identity: spoofed, action: deny}
  - {name: known-spoofers, list: suspect-bots, action: deny}
  - {name: robots-txt-breakers, category: [search, ai-training, seo, other, unregistered-bot], robots: disallowed, action: deny}
  - {name: known-breakers, list: disobedient-bots, action: deny}
  - {name: verified-crawlers, identity: verified, action: allow}
  - {name: signed-agents, signature: verified, action: allow}
  - {name: feeds, path: [/feed, /rss, /atom, '*.rss$', '*.atom$', '/*/feed/', '*/index.xml$'], action: allow}
  - {name: unproven, identity: unverifiable, rate: 120/min per ip, action: limit}
  - {name: admin, path: [/admin/, /wp-admin/, /wp-login.php], action: deny}
  - {name: api-writes, path: /api/, method: [POST, PUT, DELETE], rate: 30/min per ip, action: limit}
  - {name: office, network: [198.51.100.0/24, 2001:db8:100::/48], action: allow}
  - {name: cloud, asn: [14061, 16509, 14618, 8075], action: challenge}
  - {name: headless, user_agent: '(?i)headless|phantomjs|puppeteer|playwright', action: challenge}
  - {name: old-browsers, user_agent: 'MSIE [5-8]\\.', action: challenge}
  - {name: scanners, path: ['*.env$', '*.git/', '*.sql$', '/phpmyadmin/'], action: deny}
  - {name: seo-pace, category: seo, rate: 10/min per identity, action: limit}
  - {name: archives, category: archive, action: allow}
  - {name: social, category: social, action: allow}
  - {name: monitors, category: monitoring, rate: 60/min per ip, action: limit}
  - {name: assistants, category: ai-assistant, rate: 60/min per identity, action: limit}
  - {name: training, category: ai-training, action: deny}
  - {name: search-pages, path: /search, category: browser, rate: 30/min per ip, action: challenge}
  - {name: downloads, path: ['*.zip$', '*.tar.gz$'], rate: 20/min per ip, action: limit}
  - {name: posts, method: POST, category: unregistered-bot, action: deny}
  - {name: unknown-claims, identity: unknown, rate: 30/min per ip, action: limit}
  - {name: robots-too-fast, category: unregistered-bot, rate: 60/min per ip, action: limit}
  - {name: caught-crawling, category: browser, list: undeclared-bots, action: challenge}
  - {name: browsers-too-fast, category: browser, rate: 100000/min per ip, action: challenge}
  - {name: network-flood, rate: 1000000/min per network, action: limit}
default: allow
";

fn walk(dir: &Path, robots: &Path) {
    let Some((block, www)) = guide_site(dir, "walk-www", "walk") else {
        return;
    };
    let registry = botscope_botid::Registry::bundled();
    let parsed = botscope_policy::parse("walk.yaml", WALKED, &registry);
    let compiled = parsed.policy.expect("the walked policy compiles");
    assert_eq!(compiled.rules.len(), 30);
    let policy = dir.join("walk.yaml");
    std::fs::write(&policy, WALKED).unwrap();
    let gate = spawn(Config {
        trust_proxy: vec![IpRange::parse_any("127.0.0.1/32").unwrap()],
        identity: Some(identity(None)),
        policy: Some(policy),
        ..Config::new(robots.to_path_buf())
    });
    let trivial = trivial_auth();
    let fronts = [
        (
            "nginx + `return 200` of another nginx (the ceiling)",
            Nginx::front(block, trivial.addr, &www, REALIP).expect("nginx in front"),
        ),
        (
            "nginx + the gate, 30 rules walked",
            Nginx::front(block, gate.addr, &www, REALIP).expect("nginx in front"),
        ),
    ];
    // Browsers only, each on a /24 of its own: no rule holds for them.
    let browsers: Vec<(Ipv4Addr, &str)> = (0..10_000u32)
        .map(|i| {
            let ip = Ipv4Addr::from(0x5000_0000 + i * 256 + 7);
            (ip, if i % 2 == 0 { FIREFOX } else { CHROME })
        })
        .collect();
    let script = dir.join("walk.lua");
    client_script(&script, &browsers);
    for (_, n) in &fronts {
        let _ = wrk(&format!("http://{}/page.html", n.addr), &script, 2);
    }
    // Short runs in turn, the order flipped every pair (ceiling, gate,
    // gate, ceiling …): the machine's drift over a run, larger than the
    // difference measured, falls on both alike.
    const PAIRS: u32 = 12;
    const SECS: u32 = 3;
    println!(
        "\nThe ceiling and the gate walking 30 rules, interleaved: {PAIRS} pairs of {SECS} s runs, \
         the order flipped every pair; wrk -t2 -c64, 10,000 browsers\n"
    );
    println!("| pair | ceiling requests/s | gate requests/s | gate / ceiling | not the page |");
    println!("|---:|---:|---:|---:|---:|");
    let mut ratios = Vec::new();
    let (mut ceiling_total, mut gate_total) = (0.0, 0.0);
    for pair in 1..=PAIRS {
        let order: [usize; 2] = if pair % 2 == 1 { [0, 1] } else { [1, 0] };
        let mut w: [Option<Wrk>; 2] = [None, None];
        for k in order {
            w[k] = Some(wrk(
                &format!("http://{}/page.html", fronts[k].1.addr),
                &script,
                SECS,
            ));
        }
        let [Some(c), Some(g)] = w else {
            unreachable!()
        };
        let ratio = g.rate / c.rate;
        ratios.push(ratio);
        ceiling_total += c.rate;
        gate_total += g.rate;
        println!(
            "| {pair} | {:.0} | {:.0} | {:.0}% | {} of {} |",
            c.rate,
            g.rate,
            100.0 * ratio,
            c.bad + g.bad,
            c.requests + g.requests
        );
    }
    ratios.sort_by(f64::total_cmp);
    println!(
        "\nThe gate at {:.1}% of the ceiling over the run (pairs: {:.0}%–{:.0}%, median {:.0}%).",
        100.0 * gate_total / ceiling_total,
        100.0 * ratios[0],
        100.0 * ratios[ratios.len() - 1],
        100.0 * ratios[ratios.len() / 2]
    );
    for l in metrics(gate.addr, "botscope_gate_decisions_total") {
        println!("    {l}");
    }
}

/// Identity from the bundled registry: published ranges (no DNS), or
/// reverse DNS through `dns`.
fn identity(dns: Option<SocketAddr>) -> botscope_gate::identity::IdentityConfig {
    botscope_gate::identity::IdentityConfig {
        registry: Arc::new(botscope_botid::Registry::bundled()),
        owners: Arc::new(botscope_botid::NoOwners),
        dns: dns.map(|server| botscope_gate::identity::DnsConfig {
            lookup: botscope_gate::identity::hickory_lookup(
                &[server],
                Duration::from_secs(2),
                262_144,
            )
            .unwrap(),
            concurrency: 32,
            evidence: 262_144,
        }),
        // `gate`'s default (--max-identities).
        cache: 262_144,
    }
}

/// The gate on a runtime of its own (two workers, as on this machine).
fn spawn(config: Config) -> botscope_testkit::Spawned {
    botscope_testkit::spawn_server(Some(2), move |ready, stop| async move {
        let server = Server::bind(config, "127.0.0.1:0".parse().unwrap())
            .await
            .expect("gate");
        ready.send(server.local_addr());
        server.run(stop).await.unwrap();
    })
}

/// The lines of the gate's `/metrics` that start with `prefix`.
fn metrics(gate: SocketAddr, prefix: &str) -> Vec<String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (_, body) = rt.block_on(fetch(
        &client(1),
        &Target::get(format!("http://{gate}/.botscope/metrics")),
    ));
    String::from_utf8_lossy(&body)
        .lines()
        .filter(|l| l.starts_with(prefix))
        .map(str::to_owned)
        .collect()
}

/// An open loop's row: label, requests, errors, p50, p99, max, and how
/// late the generator sent its 99th percentile.
fn open_row(label: &str, f: &Figures) -> String {
    let ms = |d: Duration| format!("{:.2}", d.as_secs_f64() * 1000.0);
    format!(
        "| {label} | {} | {} | {} | {} | {} | {} |",
        f.requests,
        f.errors,
        ms(f.p50),
        ms(f.p99),
        ms(f.max),
        ms(f.late_p99)
    )
}

// ---------------------------------------------------------------- front

/// wrk's figures: requests a second, p99, answers that were not 2xx/3xx.
struct Wrk {
    rate: f64,
    p50_ms: f64,
    p99_ms: f64,
    requests: u64,
    bad: u64,
}

/// `12.3us`, `1.02ms`, `1.1s` in milliseconds.
fn ms(s: &str) -> f64 {
    let (n, unit) = s.split_at(s.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(s.len()));
    let n: f64 = n.parse().unwrap_or(f64::NAN);
    match unit {
        "us" => n / 1000.0,
        "ms" => n,
        "s" => n * 1000.0,
        "m" => n * 60_000.0,
        _ => f64::NAN,
    }
}

fn wrk(url: &str, script: &Path, secs: u32) -> Wrk {
    let o = Command::new("wrk")
        .args(["-t2", "-c64", &format!("-d{secs}s"), "--latency", "-s"])
        .arg(script)
        .arg(url)
        .output()
        .expect("wrk (apt-get install wrk)");
    let out = String::from_utf8_lossy(&o.stdout);
    let field = |prefix: &str| {
        out.lines()
            .map(str::trim)
            .find_map(|l| l.strip_prefix(prefix))
            .map(|v| v.split_whitespace().next().unwrap_or("").to_owned())
    };
    let requests = out
        .lines()
        .find(|l| l.contains(" requests in "))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    Wrk {
        rate: field("Requests/sec:")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.0),
        p50_ms: field("50%").map_or(f64::NAN, |v| ms(&v)),
        p99_ms: field("99%").map_or(f64::NAN, |v| ms(&v)),
        requests,
        bad: field("Non-2xx or 3xx responses:")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0),
    }
}

/// The clients of the load: (address, User-Agent).
fn clients() -> Vec<(Ipv4Addr, &'static str)> {
    (0..10_000u32)
        .map(|i| match i % 8 {
            // Googlebot's published 66.249.64.0/22 (its first 768 addresses are
            // in the list), bingbot's 157.55.39.0/24.
            0 | 1 => (Ipv4Addr::from(0x42f9_4000 + i % 768), GOOGLEBOT),
            2 => (Ipv4Addr::from(0x9d37_2700 + i % 256), BINGBOT),
            // Browsers, each on a /24 of its own (under the rates of the
            // balanced preset at this load).
            k => (
                Ipv4Addr::from(0x5000_0000 + i * 256 + 7),
                if k % 2 == 0 { FIREFOX } else { CHROME },
            ),
        })
        .collect()
}

/// The guide's nginx block (docs/gate.md), and the site it serves: the
/// page under `dir/name`, readable by nginx's workers; `None` without wrk.
fn guide_site(dir: &Path, name: &str, what: &str) -> Option<(&'static str, std::path::PathBuf)> {
    use std::os::unix::fs::PermissionsExt;
    if Command::new("wrk").arg("-v").output().is_err() {
        println!("{what}: wrk not found (apt-get install wrk); skipped");
        return None;
    }
    let doc = include_str!("../../../docs/gate.md");
    let at = doc.find("```nginx\n").expect("the guide's nginx block") + "```nginx\n".len();
    let block = &doc[at..at + doc[at..].find("```").unwrap()];
    let www = dir.join(name);
    std::fs::create_dir_all(&www).unwrap();
    std::fs::write(www.join("page.html"), PAGE).unwrap();
    for p in [dir, &www, &www.join("page.html")] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    Some((block, www))
}

/// Clients named by X-Forwarded-For, as a CDN in front names them.
const REALIP: &str = "set_real_ip_from 127.0.0.1; real_ip_header X-Forwarded-For;";

/// The cheapest answer `auth_request` can get: nginx's own `return 200`
/// (what the architecture costs, whoever answers).
fn trivial_auth() -> Nginx {
    Nginx::serving("server { listen 127.0.0.1:{port}; access_log off; location / { return 200; } }")
        .expect("nginx")
}

/// wrk's script sending the page request as each of `clients` in turn
/// (its address in `X-Forwarded-For`).
fn client_script(path: &Path, clients: &[(Ipv4Addr, &str)]) {
    let mut lua = String::from("local c = {\n");
    for (ip, ua) in clients {
        writeln!(lua, "  {{\"{ip}\", \"{ua}\"}},").unwrap();
    }
    lua.push_str(
        "}\nlocal i = 0\nrequest = function()\n  i = i + 1\n  local x = c[(i % #c) + 1]\n  \
         return wrk.format(\"GET\", \"/page.html\", {[\"X-Forwarded-For\"] = x[1], [\"User-Agent\"] = x[2]})\nend\n",
    );
    std::fs::write(path, lua).unwrap();
}

fn front(dir: &Path, robots: &Path, policy: &Path) {
    let Some((block, www)) = guide_site(dir, "www", "front") else {
        return;
    };
    // The lists `logs export-lists` writes: 100,000 addresses in
    // 10.0.0.0/8, and the Googlebot addresses of the load as verified.
    let lists = dir.join("lists");
    std::fs::create_dir_all(&lists).unwrap();
    let (mut ok, mut other, mut suspect) = (String::new(), String::new(), String::new());
    for i in 0..100_000u32 {
        let ip = Ipv4Addr::from(0x0a00_0000 + i * 7);
        let list = match i % 10 {
            0..=5 => &mut ok,
            6..=8 => &mut other,
            _ => &mut suspect,
        };
        writeln!(list, "{ip}").unwrap();
    }
    for (name, body) in [
        ("all-ok-bots.txt", &ok),
        ("other-bots.txt", &other),
        ("suspect-bots.txt", &suspect),
    ] {
        std::fs::write(lists.join(name), body).unwrap();
    }
    let trust = vec![IpRange::parse_any("127.0.0.1/32").unwrap()];
    let lists_only = spawn(Config {
        lists: Some(lists.clone()),
        trust_proxy: trust.clone(),
        deny: vec![Category::Suspect],
        ..Config::new(robots.to_path_buf())
    });
    let with_policy = spawn(Config {
        lists: Some(lists),
        trust_proxy: trust,
        identity: Some(identity(None)),
        policy: Some(policy.to_path_buf()),
        ..Config::new(robots.to_path_buf())
    });
    let realip = REALIP;
    let trivial = trivial_auth();
    let fronts = [
        (
            "nginx alone, the static page",
            Nginx::start(PAGE).expect("nginx"),
        ),
        (
            "nginx + `return 200` of another nginx as the gate",
            Nginx::front(block, trivial.addr, &www, realip).expect("nginx in front"),
        ),
        (
            "nginx + the gate, lists only",
            Nginx::front(block, lists_only.addr, &www, realip).expect("nginx in front"),
        ),
        (
            "nginx + the gate, balanced policy",
            Nginx::front(block, with_policy.addr, &www, realip).expect("nginx in front"),
        ),
    ];
    let script = dir.join("clients.lua");
    client_script(&script, &clients());
    // What the policy decides for each kind of client, through nginx.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    for (ip, ua) in [
        ("66.249.66.200", GOOGLEBOT),
        ("157.55.39.9", BINGBOT),
        ("80.1.2.7", FIREFOX),
    ] {
        let t = Target {
            url: format!("http://{}/page.html", fronts[3].1.addr),
            headers: vec![
                ("X-Forwarded-For".into(), ip.into()),
                ("User-Agent".into(), ua.into()),
            ],
        };
        let (status, body) = rt.block_on(fetch(&client(1), &t));
        assert_eq!((status, &body[..]), (200, PAGE), "{ip} {ua}");
    }
    println!(
        "\nThrough nginx with docs/gate.md's configuration; wrk -t2 -c64 -d8s over 10,000 clients; \
         {ROUNDS} rounds, after a warm-up\n"
    );
    println!("| what | round | requests/s | p50 ms | p99 ms | not the page |");
    println!("|---|---:|---:|---:|---:|---:|");
    let mut rates = [0.0f64; 4];
    for (_, n) in &fronts {
        let _ = wrk(&format!("http://{}/page.html", n.addr), &script, 2);
    }
    for round in 1..=ROUNDS {
        for (k, (label, n)) in fronts.iter().enumerate() {
            let w = wrk(&format!("http://{}/page.html", n.addr), &script, 8);
            println!(
                "| {label} | {round} | {:.0} | {:.2} | {:.2} | {} of {} |",
                w.rate, w.p50_ms, w.p99_ms, w.bad, w.requests
            );
            rates[k] += w.rate / f64::from(ROUNDS);
        }
    }
    println!(
        "\nProtected (balanced policy) at {:.0}% of nginx alone and {:.0}% of nginx answering \
         its own auth_request; the policy costs {:.1}% against the lists-only gate (which runs \
         at {:.0}% of nginx alone).",
        100.0 * rates[3] / rates[0],
        100.0 * rates[3] / rates[1],
        100.0 * (1.0 - rates[3] / rates[2]),
        100.0 * rates[2] / rates[0]
    );
    // A bounded load, open loop (latency from when each request was due,
    // as wrk2 counts): the tail a site sees below saturation.
    let rate = (rates[3] / 2.0).round();
    println!(
        "\nOpen loop at {rate:.0} requests/s (half the protected rate), 8 s, 64 connections, \
         the same clients:\n"
    );
    println!(
        "| what | requests | not the page | p50 ms | p99 ms | max ms | generator late p99 ms |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    let clients = clients();
    for (label, n) in &fronts {
        let targets: Vec<Target> = clients
            .iter()
            .take(2_000)
            .map(|(ip, ua)| Target {
                url: format!("http://{}/page.html", n.addr),
                headers: vec![
                    ("X-Forwarded-For".into(), ip.to_string()),
                    ("User-Agent".into(), (*ua).into()),
                ],
            })
            .collect();
        let f = rt.block_on(paced(&targets, rate, (rate * 8.0) as usize, 64, &[]));
        println!("{}", open_row(label, &f));
    }
    for l in metrics(with_policy.addr, "botscope_gate_decisions_total") {
        println!("    {l}");
    }
}

// ---------------------------------------------------------------- flood

/// The process's resident memory now and at its peak, in MiB.
fn memory() -> (f64, f64) {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kb = |k: &str| {
        s.lines()
            .find_map(|l| l.strip_prefix(k))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(f64::NAN)
            / 1024.0
    };
    (kb("VmRSS:"), kb("VmHWM:"))
}

/// Verified Googlebots and unclaimed browsers at `rate` a second for 8 s.
fn steady(gate: SocketAddr, rate: f64) -> Figures {
    let targets = steady_targets(gate);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(paced(&targets, rate, (rate * 8.0) as usize, 16, &[]))
}

/// Verified Googlebots and unclaimed browsers, 500 of each.
fn steady_targets(gate: SocketAddr) -> Vec<Target> {
    (0..1000u32)
        .map(|i| {
            let (ip, ua) = if i % 2 == 0 {
                (Ipv4Addr::from(0x42f9_4000 + i / 2), GOOGLEBOT)
            } else {
                (Ipv4Addr::from(0x5000_0000 + i * 256 + 7), FIREFOX)
            };
            Target {
                url: format!("http://{gate}/auth"),
                headers: vec![
                    ("X-Real-IP".into(), ip.to_string()),
                    ("User-Agent".into(), ua.into()),
                ],
            }
        })
        .collect()
}

/// What the gate answers the steady clients that it does not allow.
fn explain(gate: SocketAddr) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let c = client(1);
    let mut seen = std::collections::BTreeMap::<String, usize>::new();
    for t in steady_targets(gate) {
        let (status, body) = rt.block_on(fetch(&c, &t));
        if status != 200 {
            let body = String::from_utf8_lossy(&body);
            *seen
                .entry(format!(
                    "{status} {} {} {}",
                    t.headers[0].1,
                    &t.headers[1].1[..40],
                    body.chars().take(80).collect::<String>()
                ))
                .or_default() += 1;
        }
    }
    println!("Not allowed after the flood: {seen:#?}");
}

fn flood(robots: &Path, policy: &Path) {
    let total: usize = std::env::var("BOTSCOPE_FLOOD")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let rate: f64 = std::env::var("BOTSCOPE_FLOOD_RATE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000.0);
    if Command::new("dnsmasq").arg("--version").output().is_err() {
        println!("flood: dnsmasq not found (apt-get install dnsmasq-base); skipped");
        return;
    }
    // A resolver that knows none of the flood's addresses (no upstream):
    // every claim costs a real lookup.
    let dns = botscope_testkit::Dnsmasq::start(&[]);
    let gate = spawn(Config {
        trust_proxy: vec![IpRange::parse_any("127.0.0.1/32").unwrap()],
        identity: Some(identity(Some(dns.addr()))),
        policy: Some(policy.to_path_buf()),
        ..Config::new(robots.to_path_buf())
    });
    let steady_rate = 2_000.0;
    let _ = steady(gate.addr, steady_rate);
    let idle = steady(gate.addr, steady_rate);
    let (rss0, _) = memory();
    println!(
        "\nA flood of {total} distinct addresses claiming Googlebot at {rate:.0}/s to /auth \
         (reverse DNS through dnsmasq, 32 lookups at most); verified Googlebots and unclaimed \
         browsers at {steady_rate:.0}/s beside it, open loop, 8 s a run\n"
    );
    println!(
        "| steady traffic | requests | errors | p50 ms | p99 ms | max ms | generator late p99 ms |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    let row = |label: &str, f: &Figures| println!("{}", open_row(label, f));
    row("idle", &idle);
    let addr = gate.addr;
    // The same load from 1,000 addresses the gate already knows: what the
    // load costs the steady traffic on these two cores, novelty apart.
    let known = 20 * rate as usize;
    let (repeat, sent) = start_flood(addr, known, rate, Some(1_000));
    beside(&repeat, &sent, addr, steady_rate, &|run, _| {
        format!("beside the same load from 1,000 known addresses, run {run}")
    });
    let _ = repeat.join().unwrap();
    let (flooder, sent) = start_flood(addr, total, rate, None);
    let peak_rss = beside(&flooder, &sent, addr, steady_rate, &|run, sent| {
        format!("during the flood of new addresses, run {run} (at {sent} addresses)")
    })
    .max(rss0);
    let (secs, statuses) = flooder.join().unwrap();
    let after = steady(addr, steady_rate);
    row("after the flood", &after);
    if after.errors > 0 {
        explain(addr);
    }
    let (rss, hwm) = memory();
    println!(
        "\nThe flood: {total} requests in {secs:.1} s ({:.0}/s), answers {statuses:?}.",
        total as f64 / secs
    );
    println!(
        "Memory of the process (gate, generator, resolver client): {rss0:.0} MiB before, \
         {peak_rss:.0} MiB at most during, {rss:.0} MiB after (peak resident {hwm:.0} MiB)."
    );
    println!("What the gate holds and asked:");
    for prefix in [
        "botscope_gate_identities",
        "botscope_gate_rate_keys",
        "botscope_gate_identity_lookups_total",
    ] {
        for l in metrics(addr, prefix) {
            println!("    {l}");
        }
    }
    drop(dns);
}

/// Runs of the steady traffic while `flood` lasts (a run that ends after
/// it is not shown), each labelled `label(run, requests sent)`; the
/// process's highest resident memory (MiB) meanwhile.
fn beside(
    flood: &Flood,
    sent: &AtomicUsize,
    gate: SocketAddr,
    rate: f64,
    label: &dyn Fn(usize, usize) -> String,
) -> f64 {
    let (mut peak, mut run) = (0.0f64, 0);
    while !flood.is_finished() {
        let f = steady(gate, rate);
        run += 1;
        if !flood.is_finished() {
            println!(
                "{}",
                open_row(&label(run, sent.load(Ordering::Relaxed)), &f)
            );
        }
        peak = peak.max(memory().0);
    }
    peak
}

type Flood = std::thread::JoinHandle<(f64, std::collections::BTreeMap<u16, usize>)>;

/// `total` requests claiming Googlebot to the gate's `/auth` at `rate` a
/// second, from distinct addresses over every /24 of 11.0.0.0/8 or, with
/// `cycle`, from that many addresses in turn; with the count sent so far.
fn start_flood(
    addr: SocketAddr,
    total: usize,
    rate: f64,
    cycle: Option<usize>,
) -> (Flood, Arc<AtomicUsize>) {
    let sent = Arc::new(AtomicUsize::new(0));
    let flooder = {
        let sent = sent.clone();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let c = client(32);
                let next = Arc::new(AtomicUsize::new(0));
                let start = tokio::time::Instant::now();
                let mut tasks = Vec::new();
                for _ in 0..32 {
                    let (c, next, sent) = (c.clone(), next.clone(), sent.clone());
                    tasks.push(tokio::spawn(async move {
                        let mut statuses = std::collections::BTreeMap::<u16, usize>::new();
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            if i >= total {
                                break;
                            }
                            tokio::time::sleep_until(
                                start + Duration::from_secs_f64(i as f64 / rate),
                            )
                            .await;
                            // Distinct addresses over every /24 of 11.0.0.0/8:
                            // an odd multiplier is one-to-one modulo 2^24.
                            let n = cycle.map_or(i, |c| i % c) as u32;
                            let ip = Ipv4Addr::from(
                                0x0b00_0000 | (n.wrapping_mul(0x9e37_79b1) & 0x00ff_ffff),
                            );
                            let t = Target {
                                url: format!("http://{addr}/auth"),
                                headers: vec![
                                    ("X-Real-IP".into(), ip.to_string()),
                                    ("User-Agent".into(), GOOGLEBOT.into()),
                                ],
                            };
                            let (status, _) = fetch(&c, &t).await;
                            *statuses.entry(status).or_default() += 1;
                            sent.fetch_add(1, Ordering::Relaxed);
                        }
                        statuses
                    }));
                }
                let mut all = std::collections::BTreeMap::<u16, usize>::new();
                for t in tasks {
                    for (s, n) in t.await.unwrap() {
                        *all.entry(s).or_default() += n;
                    }
                }
                (start.elapsed().as_secs_f64(), all)
            })
        })
    };
    (flooder, sent)
}
