//! Many gates, one site: two gates behind one nginx upstream sharing their
//! state through a real Redis (Debian's redis-server), and each gate going
//! on without it when it stops or stalls, and back when it returns.

use std::io::Write;
use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};

use botscope_botid::IpRange;
use botscope_gate::Config;
use botscope_gate::state::StateConfig;
use botscope_testkit::http::{Res, read_response};

use super::{GOOGLEBOT, dns_identity, get_with, offline, serve, socket2_connect, write};

const BROWSER: &str = "Mozilla/5.0 (X11; Linux x86_64; rv:130.0) Gecko/20100101 Firefox/130.0";

/// The fleet's policy: ten pages a minute per address.
const PACED: &str =
    "default: allow\nrules:\n  - {name: pace, rate: 10/min per ip, action: limit}\n";

fn gate_config(dir: &Path, policy: &str, state: StateConfig) -> Config {
    let rd = dir.join("robots");
    write(&rd, "default.txt", "User-agent: *\nDisallow: /private/\n");
    let path = dir.join("policy.yaml");
    std::fs::write(&path, policy).unwrap();
    Config {
        trust_proxy: vec![IpRange::parse_any("127.0.0.1/32").unwrap()],
        identity: Some(offline()),
        policy: Some(path),
        state,
        operator_token: Some(OPERATOR_TOKEN.as_bytes().to_vec()),
        ..Config::new(rd)
    }
}

/// The fleet's operators' token.
const OPERATOR_TOKEN: &str = "fleet-operators-0123456789";

fn redis_state(r: &botscope_testkit::Redis) -> StateConfig {
    StateConfig::Redis {
        url: r.url(0),
        timeout: Duration::from_millis(50),
    }
}

/// Pages a client at `from` gets through nginx before the first 429, of
/// `n` asked.
fn allowed_through(front: &botscope_testkit::load::Nginx, from: [u8; 4], n: usize) -> usize {
    let mut ok = 0;
    for _ in 0..n {
        let mut s = socket2_connect(from, front.addr);
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        write!(
            s,
            "GET /index.html HTTP/1.1\r\nHost: site\r\nUser-Agent: {BROWSER}\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let r = read_response(s, "/index.html");
        match r.status {
            200 => ok += 1,
            429 => {}
            other => panic!("{other}: {r:?}"),
        }
    }
    ok
}

fn decisions(gate: SocketAddr) -> u64 {
    let r = get_with(gate, "/metrics", "127.0.0.1", BROWSER, "");
    r.body
        .lines()
        .filter(|l| l.starts_with("botscope_gate_decisions_total{"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
        .sum()
}

fn healthz(gate: SocketAddr) -> serde_json::Value {
    get_with(gate, "/healthz", "127.0.0.1", BROWSER, "").json()
}

/// A client alternating between two gates (nginx's round robin) is held
/// to the policy's rate for the fleet with Redis, and gets twice it with
/// each gate counting alone.
#[test]
fn two_gates_behind_one_nginx_share_the_rate() {
    use std::os::unix::fs::PermissionsExt;
    let redis = botscope_testkit::Redis::start();
    let d = tempfile::tempdir().unwrap();
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let www = d.path().join("www");
    write(&www, "index.html", "the site\n");
    std::fs::set_permissions(&www, std::fs::Permissions::from_mode(0o755)).unwrap();
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/gate.md"))
            .unwrap();
    let at = doc.find("```nginx\n").unwrap() + "```nginx\n".len();
    let block = &doc[at..at + doc[at..].find("```").unwrap()];
    let fleet = |state: &dyn Fn() -> StateConfig, name: &str| {
        let a = serve(gate_config(
            &d.path().join(format!("{name}-a")),
            PACED,
            state(),
        ));
        let b = serve(gate_config(
            &d.path().join(format!("{name}-b")),
            PACED,
            state(),
        ));
        let front = botscope_testkit::load::Nginx::front_many(block, &[a.addr, b.addr], &www, "")
            .expect("nginx in front of two gates");
        (a, b, front)
    };
    let (a, b, front) = fleet(&|| redis_state(&redis), "shared");
    assert_eq!(
        allowed_through(&front, [127, 0, 0, 21], 30),
        10,
        "the fleet's rate"
    );
    // Both gates decided: the client did alternate.
    assert!(
        decisions(a.addr) >= 10 && decisions(b.addr) >= 10,
        "both gates asked"
    );
    assert_eq!(healthz(a.addr)["state"]["shared"], true);
    // Each gate alone: twice the rate.
    let (_a, _b, front) = fleet(&|| StateConfig::Memory, "alone");
    assert_eq!(
        allowed_through(&front, [127, 0, 0, 22], 30),
        20,
        "each gate's rate"
    );
}

/// Redis stopped: the gate answers on from its own memory, says so, and
/// goes back to Redis when it returns; Redis stalled: no request waits
/// for it past the bounded wait.
#[test]
fn a_fleet_outlives_its_redis() {
    let mut redis = botscope_testkit::Redis::start();
    let d = tempfile::tempdir().unwrap();
    let g = serve(gate_config(d.path(), PACED, redis_state(&redis)));
    let page = |ip: &str| get_with(g.addr, "/auth", ip, BROWSER, "");
    let r = page("192.0.2.1");
    assert_eq!(r.status, 200, "{r:?}");
    redis.stop();
    // Answered, every one, from memory: the limit still holds.
    let statuses: Vec<u16> = (0..12).map(|_| page("192.0.2.2").status).collect();
    assert_eq!(
        statuses.iter().filter(|s| **s == 200).count(),
        10,
        "{statuses:?}"
    );
    assert!(
        statuses.iter().all(|s| [200, 403].contains(s)),
        "{statuses:?}"
    );
    let h = healthz(g.addr);
    assert_eq!(h["state"]["shared"], false, "{h}");
    assert!(h["state"]["last_error"].is_string(), "{h}");
    let m = get_with(g.addr, "/metrics", "127.0.0.1", BROWSER, "").body;
    assert!(m.contains("botscope_gate_state_fallback 1"), "{m}");
    // Back when Redis is.
    redis.restart();
    let t = Instant::now();
    while healthz(g.addr)["state"]["shared"] != true {
        assert!(t.elapsed() < Duration::from_secs(10), "back to Redis");
        std::thread::sleep(Duration::from_millis(100));
    }
    let m = get_with(g.addr, "/metrics", "127.0.0.1", BROWSER, "").body;
    assert!(m.contains("botscope_gate_state_fallback 0"), "{m}");
    assert_eq!(page("192.0.2.3").status, 200);
    assert!(
        redis.command("DBSIZE").is_some_and(|n| n != ":0"),
        "the rates are in Redis again"
    );
    // Stalled (DEBUG SLEEP holds Redis for 3 s): a request is answered
    // before Redis answers the sleep.
    let addr = redis.addr();
    let sleeper = std::thread::spawn(move || {
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        s.write_all(b"DEBUG SLEEP 3\r\n").unwrap();
        let mut b = [0u8; 16];
        let _ = std::io::Read::read(&mut s, &mut b);
        Instant::now()
    });
    std::thread::sleep(Duration::from_millis(300));
    let r = page("192.0.2.4");
    let answered = Instant::now();
    let slept = sleeper.join().unwrap();
    assert_eq!(r.status, 200, "{r:?}");
    assert!(answered < slept, "the request did not wait for Redis");
}

/// What one gate learned, the other uses: a fake Googlebot's reverse DNS
/// (the second gate's resolver answers nothing), and a challenge pass
/// (one key for the fleet), revoked on one gate for both.
#[test]
fn evidence_and_passes_are_the_fleets() {
    let redis = botscope_testkit::Redis::start();
    let dns = botscope_testkit::Dnsmasq::start(&[
        "--local=/googlebot.com/",
        "--local=/113.0.203.in-addr.arpa/",
        "--host-record=googlebot.com,192.0.2.200",
        "--ptr-record=9.113.0.203.in-addr.arpa,crawl.fake.example",
    ]);
    let d = tempfile::tempdir().unwrap();
    let balanced = botscope_policy::preset("balanced").unwrap();
    // No key given: the fleet's, from Redis.
    let challenge = Some(botscope_gate::challenge::ChallengeConfig {
        delay: Duration::from_secs(1),
        ..botscope_gate::challenge::ChallengeConfig::new(Vec::new())
    });
    let mut with_dns = gate_config(&d.path().join("a"), balanced, redis_state(&redis));
    with_dns.identity = Some(dns_identity(&dns));
    with_dns.challenge = challenge.clone();
    let a = serve(with_dns);
    // The second gate's resolver: a port where nothing answers.
    let silent = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut deaf = gate_config(&d.path().join("b"), balanced, redis_state(&redis));
    deaf.identity = Some(botscope_gate::identity::IdentityConfig {
        dns: Some(botscope_gate::identity::DnsConfig {
            lookup: botscope_gate::identity::hickory_lookup(
                &[silent.local_addr().unwrap()],
                Duration::from_millis(200),
                1_000,
            )
            .unwrap(),
            concurrency: 4,
            evidence: 1_000,
        }),
        ..offline()
    });
    deaf.challenge = challenge;
    let b = serve(deaf);
    let ask = |g: SocketAddr| {
        get_with(
            g,
            "/auth",
            "203.0.113.9",
            GOOGLEBOT,
            "X-Original-URI: /a\r\n",
        )
    };
    let identity = |r: &Res| r.header("x-bot-identity").unwrap_or("").to_owned();
    let t = Instant::now();
    while identity(&ask(a.addr)) != "spoofed" {
        assert!(t.elapsed() < Duration::from_secs(10), "gate a learns");
        std::thread::sleep(Duration::from_millis(50));
    }
    let t = Instant::now();
    let mut r = ask(b.addr);
    while identity(&r) == "unverifiable" {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "gate b reads it: {r:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
        r = ask(b.addr);
    }
    assert_eq!(identity(&r), "spoofed", "{r:?}");
    assert_eq!(r.status, 403);
    let shared = healthz(b.addr)["state"]["shared_evidence"]
        .as_u64()
        .unwrap();
    assert!(shared >= 1, "read from the fleet");
    // A pass made by gate a holds on gate b (one key, from Redis).
    let client = "198.51.100.7";
    fleet_key(a.addr);
    fleet_key(b.addr);
    let cookie = earn_pass(a.addr, client);
    let with_pass = |g: SocketAddr| holds(g, client, &cookie);
    assert!(with_pass(b.addr));
    // Revoked on gate a: refused on gate b within its next poll. Only an
    // operator with the token revokes: a stranger named by the proxy,
    // the proxy naming no one, or an operator without the token cannot.
    std::thread::sleep(Duration::from_millis(1100));
    let revoke = |more: &str| {
        let mut s = socket2_connect([127, 0, 0, 1], a.addr);
        write!(
            s,
            "POST /.botscope/revoke-passes HTTP/1.1\r\nHost: gate\r\n{more}Content-Length: 0\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        read_response(s, "revoke")
    };
    let bearer = format!("Authorization: Bearer {OPERATOR_TOKEN}\r\n");
    for refused in [
        format!("X-Real-IP: 192.0.2.9\r\n{bearer}"),
        bearer.clone(),
        "X-Real-IP: 127.0.0.1\r\n".to_owned(),
    ] {
        assert_eq!(revoke(&refused).status, 403, "{refused}");
    }
    assert!(with_pass(b.addr));
    let r = revoke(&format!("X-Real-IP: 127.0.0.1\r\n{bearer}"));
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.json()["fleet"], true);
    let t = Instant::now();
    while with_pass(b.addr) {
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "revoked for the fleet"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Waits until the gate signs with the fleet's key (its `/healthz`
/// says so).
fn fleet_key(gate: SocketAddr) {
    let t = Instant::now();
    while healthz(gate)["challenge_key"] != "fleet" {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "the fleet's key adopted"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A challenge passed on `gate` by `client` (the no-JavaScript way,
/// after its one-second wait): the pass cookie.
fn earn_pass(gate: SocketAddr, client: &str) -> String {
    let page = get_with(gate, "/.botscope/challenge?back=/", client, BROWSER, "");
    let token = page
        .body
        .split("pass?t=")
        .nth(1)
        .and_then(|s| s.split('&').next())
        .unwrap()
        .to_owned();
    std::thread::sleep(Duration::from_millis(1100));
    let passed = get_with(
        gate,
        &format!("/.botscope/pass?t={token}&back=/"),
        client,
        BROWSER,
        "",
    );
    assert_eq!(passed.status, 303, "{passed:?}");
    passed
        .header("set-cookie")
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_owned()
}

/// Whether `gate` takes the pass `cookie` of `client`.
fn holds(gate: SocketAddr, client: &str, cookie: &str) -> bool {
    get_with(
        gate,
        "/auth",
        client,
        BROWSER,
        &format!("Cookie: {cookie}\r\nX-Original-URI: /x\r\n"),
    )
    .header("x-bot-challenge")
        == Some("passed")
}

/// A gate of the fleet with a one-second challenge and `key` (empty: the
/// fleet's, from Redis).
fn keyed_gate(
    dir: &Path,
    redis: &botscope_testkit::Redis,
    key: &[u8],
    revocations: Option<&Path>,
) -> super::Running {
    let mut c = gate_config(
        dir,
        botscope_policy::preset("balanced").unwrap(),
        redis_state(redis),
    );
    c.challenge = Some(botscope_gate::challenge::ChallengeConfig {
        delay: Duration::from_secs(1),
        revocations: revocations.map(Path::to_path_buf),
        ..botscope_gate::challenge::ChallengeConfig::new(key.to_vec())
    });
    serve(c)
}

/// Item 8 of the gate's attacks: one key for the fleet, kept when Redis
/// restarts without persistence (a gate started just after adopts the
/// fleet's, not its own) and adopted by a gate whose first exchange
/// found Redis stalled.
#[test]
fn the_fleet_keeps_one_key_through_restarts_and_stalls() {
    let mut redis = botscope_testkit::Redis::start();
    let d = tempfile::tempdir().unwrap();
    let a = keyed_gate(&d.path().join("a"), &redis, &[], None);
    let b = keyed_gate(&d.path().join("b"), &redis, &[], None);
    fleet_key(a.addr);
    fleet_key(b.addr);
    let client = "198.51.100.8";
    let cookie = earn_pass(a.addr, client);
    assert!(holds(b.addr, client, &cookie));
    // Redis restarted empty, and a gate started right after.
    redis.restart();
    let c = keyed_gate(&d.path().join("c"), &redis, &[], None);
    fleet_key(c.addr);
    std::thread::sleep(Duration::from_millis(1500));
    for g in [a.addr, b.addr, c.addr] {
        assert!(holds(g, client, &cookie), "{g}: the pass holds");
    }
    // Redis stalled while a gate starts: it signs with its own key, then
    // adopts the fleet's.
    let addr = redis.addr();
    let sleeper = std::thread::spawn(move || {
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        s.write_all(b"DEBUG SLEEP 2\r\n").unwrap();
        let mut b = [0u8; 16];
        let _ = std::io::Read::read(&mut s, &mut b);
    });
    std::thread::sleep(Duration::from_millis(200));
    let e = keyed_gate(&d.path().join("e"), &redis, &[], None);
    sleeper.join().unwrap();
    fleet_key(e.addr);
    assert!(holds(e.addr, client, &cookie), "adopted after the stall");
}

/// Item 9: a revocation survives the gate's restart (kept beside its key
/// file) and Redis's (written back by a gate that holds it, read by a
/// gate started after).
#[test]
fn revocations_survive_restarts_of_the_gate_and_of_redis() {
    let mut redis = botscope_testkit::Redis::start();
    let d = tempfile::tempdir().unwrap();
    let key = [7u8; 32];
    let kept = d.path().join("challenge.key.revoked");
    let client = "198.51.100.9";
    let mut a = keyed_gate(&d.path().join("a"), &redis, &key, Some(&kept));
    let cookie = earn_pass(a.addr, client);
    assert!(holds(a.addr, client, &cookie));
    std::thread::sleep(Duration::from_millis(1100));
    let mut s = socket2_connect([127, 0, 0, 1], a.addr);
    write!(
        s,
        "POST /.botscope/revoke-passes HTTP/1.1\r\nHost: gate\r\nX-Real-IP: 127.0.0.1\r\nAuthorization: Bearer {OPERATOR_TOKEN}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    assert_eq!(read_response(s, "revoke").status, 200);
    assert!(!holds(a.addr, client, &cookie));
    assert!(std::fs::read_to_string(&kept).is_ok_and(|t| t.trim().parse::<u64>().is_ok()));
    // The gate restarted with its key file: still revoked.
    a.stop();
    redis.restart();
    let a = keyed_gate(&d.path().join("a"), &redis, &key, Some(&kept));
    assert!(
        !holds(a.addr, client, &cookie),
        "revoked after the gate's restart"
    );
    // Redis restarted empty: the gate writes the time back, and a gate
    // started after (its own machine: no file) reads it there.
    let t = Instant::now();
    while redis
        .command("GET botscope:passes-revoked-before")
        .is_none_or(|v| !v.starts_with('$') || v == "$-1")
    {
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "written back to Redis"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let b = keyed_gate(&d.path().join("b"), &redis, &key, None);
    assert!(
        !holds(b.addr, client, &cookie),
        "revoked on a gate started after Redis's restart"
    );
    // A pass earned after the revocation holds on both.
    std::thread::sleep(Duration::from_millis(1100));
    let fresh = earn_pass(a.addr, client);
    assert!(holds(a.addr, client, &fresh) && holds(b.addr, client, &fresh));
}

/// What a lying Redis answers a command (its words): the bytes it sends
/// back, or `None` to stream `x` until the gate hangs up.
type Lie = fn(&[Vec<u8>]) -> Option<Vec<u8>>;

/// A server that speaks RESP and lies as `lie` says; the bytes it wrote
/// in all are counted.
fn lying_redis(lie: Lie) -> (SocketAddr, std::sync::Arc<std::sync::atomic::AtomicU64>) {
    use std::io::{BufRead, BufReader, Read};
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let sent = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let total = sent.clone();
    std::thread::spawn(move || {
        for conn in l.incoming() {
            let Ok(conn) = conn else { continue };
            let sent = total.clone();
            std::thread::spawn(move || {
                let mut out = conn.try_clone().unwrap();
                let mut r = BufReader::new(conn);
                loop {
                    let mut line = String::new();
                    if r.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let n: usize = line.trim().trim_start_matches('*').parse().unwrap_or(0);
                    let mut words = Vec::new();
                    for _ in 0..n {
                        let mut len = String::new();
                        let _ = r.read_line(&mut len);
                        let len: usize = len.trim().trim_start_matches('$').parse().unwrap_or(0);
                        let mut w = vec![0u8; len + 2];
                        if r.read_exact(&mut w).is_err() {
                            return;
                        }
                        w.truncate(len);
                        words.push(w);
                    }
                    match lie(&words) {
                        Some(b) => {
                            if out.write_all(&b).is_err() {
                                return;
                            }
                            sent.fetch_add(b.len() as u64, std::sync::atomic::Ordering::Relaxed);
                        }
                        None => {
                            let chunk = vec![b'x'; 64 * 1024];
                            let _ = out.write_all(b"$4000000000\r\n");
                            while out.write_all(&chunk).is_ok() {
                                sent.fetch_add(
                                    chunk.len() as u64,
                                    std::sync::atomic::Ordering::Relaxed,
                                );
                            }
                            return;
                        }
                    }
                }
            });
        }
    });
    (addr, sent)
}

fn pong_else(words: &[Vec<u8>], rest: Option<Vec<u8>>) -> Option<Vec<u8>> {
    if words
        .first()
        .is_some_and(|w| w.eq_ignore_ascii_case(b"PING"))
    {
        Some(b"+PONG\r\n".to_vec())
    } else {
        rest
    }
}

/// This process's resident memory, in KiB.
fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// Item 10 of the gate's attacks: a Redis that floods, or answers what
/// was not asked (an empty list to the rate script, the wrong types), is
/// read within a small bound, counted as malformed, and fallen back from
/// (rate limits hold in memory), and the gate does not flap back to it
/// every second.
#[test]
fn a_redis_that_lies_or_floods_is_not_believed() {
    let d = tempfile::tempdir().unwrap();
    let state = |addr: SocketAddr| StateConfig::Redis {
        url: format!("redis://{addr}/0"),
        timeout: Duration::from_millis(500),
    };
    // A flood: every answer a bulk string of 4 GB, streamed.
    let (flood, sent) = lying_redis(|w| pong_else(w, None));
    let before = rss_kib();
    let g = serve(gate_config(&d.path().join("flood"), PACED, state(flood)));
    for i in 0..20 {
        let r = get_with(g.addr, "/auth", &format!("192.0.2.{i}"), BROWSER, "");
        assert_eq!(r.status, 200, "{r:?}");
    }
    let h = healthz(g.addr);
    assert_eq!(h["state"]["shared"], false, "{h}");
    assert!(h["state"]["malformed"].as_u64() >= Some(1), "{h}");
    let grown = rss_kib().saturating_sub(before);
    assert!(
        grown < 64 * 1024,
        "the gate grew by {grown} KiB while Redis sent {} bytes",
        sent.load(std::sync::atomic::Ordering::Relaxed)
    );
    // An empty list for every script: rate limits hold (in memory), and
    // the fallback does not flap.
    let (empty, _) = lying_redis(|w| pong_else(w, Some(b"*0\r\n".to_vec())));
    let g = serve(gate_config(&d.path().join("empty"), PACED, state(empty)));
    let statuses: Vec<u16> = (0..12)
        .map(|_| get_with(g.addr, "/auth", "192.0.2.77", BROWSER, "").status)
        .collect();
    assert_eq!(
        statuses.iter().filter(|s| **s == 200).count(),
        10,
        "{statuses:?}"
    );
    let t = Instant::now();
    let mut i = 0u32;
    while t.elapsed() < Duration::from_secs(8) {
        i += 1;
        let _ = get_with(
            g.addr,
            "/auth",
            &format!("198.51.100.{}", i % 200),
            BROWSER,
            "",
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let h = healthz(g.addr);
    let fallbacks = h["state"]["fallbacks"].as_u64().unwrap();
    assert!(
        (1..=4).contains(&fallbacks),
        "{fallbacks} fallbacks in 8 s: {h}"
    );
    assert!(h["state"]["malformed"].as_u64() >= Some(1), "{h}");
    let m = get_with(g.addr, "/metrics", "127.0.0.1", BROWSER, "").body;
    assert!(
        !m.contains("botscope_gate_state_malformed_total 0\n"),
        "{m}"
    );
    // The wrong types (OK to everything): never taken back.
    let (wrong, _) = lying_redis(|w| pong_else(w, Some(b"+OK\r\n".to_vec())));
    let g = serve(gate_config(&d.path().join("wrong"), PACED, state(wrong)));
    for i in 0..30 {
        let _ = get_with(g.addr, "/auth", &format!("203.0.113.{i}"), BROWSER, "");
        std::thread::sleep(Duration::from_millis(100));
    }
    let h = healthz(g.addr);
    assert_eq!(h["state"]["shared"], false, "{h}");
    assert_eq!(h["state"]["fallbacks"], 1, "{h}");
    assert_eq!(h["state"]["recoveries"], 0, "{h}");
}

/// A client a trap caught on one gate is refused by the other gate of
/// the fleet within a second or two; a client never caught is not; a new
/// gate learns the catches already held.
#[test]
fn a_catch_on_one_gate_is_refused_by_the_other() {
    let redis = botscope_testkit::Redis::start();
    let d = tempfile::tempdir().unwrap();
    let policy = "default: allow\ntraps:\n  kinds: [robots]\nrules:\n  - {name: trapped, trapped: robots, action: deny}\n";
    // One key for the fleet, so one trap prefix.
    let key = d.path().join("key");
    std::fs::write(&key, [7u8; 32]).unwrap();
    let keyed = |name: &str| {
        let mut c = gate_config(&d.path().join(name), policy, redis_state(&redis));
        c.challenge = Some(botscope_gate::challenge::ChallengeConfig::new(vec![
            7u8;
            32
        ]));
        c
    };
    let a = serve(keyed("a"));
    let b = serve(keyed("b"));
    let robots = get_with(a.addr, "/robots.txt", "127.0.0.20", BROWSER, "");
    let path = robots
        .body
        .lines()
        .filter_map(|l| l.strip_prefix("Disallow: "))
        .filter(|p| p.starts_with("/t-"))
        .nth(1)
        .expect("the robots trap path")
        .to_owned();
    let ask = |g: SocketAddr, client: &str, path: &str| {
        get_with(
            g,
            "/auth",
            client,
            BROWSER,
            &format!("X-Original-URI: {path}\r\n"),
        )
        .status
    };
    assert_eq!(ask(b.addr, "127.0.0.21", "/"), 200);
    // Caught at gate a.
    assert_eq!(ask(a.addr, "127.0.0.21", &path), 403);
    assert_eq!(ask(a.addr, "127.0.0.21", "/"), 403);
    // Refused at gate b as soon as it has read the fleet's catches.
    let t = Instant::now();
    while ask(b.addr, "127.0.0.21", "/") != 403 {
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "gate b never learned the catch"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(ask(b.addr, "127.0.0.22", "/"), 200);
    // A gate started later learns it from the state.
    let c = serve(keyed("c"));
    let t = Instant::now();
    while ask(c.addr, "127.0.0.21", "/") != 403 {
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "gate c never learned the catch"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(ask(c.addr, "127.0.0.22", "/"), 200);
}
