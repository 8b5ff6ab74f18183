//! Key fetches under a botnet (issue 96, item 12), through the real
//! standalone gate: signed requests naming key directories that answer a
//! byte a second, from one network and from many, cannot keep a crawler's
//! first verification out.

use std::io::{BufReader, Write};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use botscope_gate::Config;
use botscope_gate::proxy::UpstreamConfig;
use botscope_httpsig::SigningKey;
use botscope_testkit::http::read_one;
use botscope_testkit::ipdb::{Canned, FileServer, TestCa};
use botscope_testkit::recorder::Recorder;

use super::{Running, serve, write};

/// Only a verified signature reaches the application.
const POLICY: &str = "version: 1\ndefault: deny\nrules:\n  - name: signed\n    action: allow\n    signature: verified\n";

pub(super) fn now() -> i64 {
    i64::try_from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs(),
    )
    .unwrap()
}

/// A key directory on HTTPS (loopback, `ca`) listing `key`; its URL.
pub(super) fn directory(ca: &TestCa, key: &SigningKey) -> (FileServer, String) {
    let server = FileServer::start_tls_canned(Default::default(), ca);
    let body = botscope_httpsig::Directory {
        keys: vec![(key.keyid(), key.public())],
        ..botscope_httpsig::Directory::default()
    }
    .to_json();
    server.set(
        "/.well-known/http-message-signatures-directory",
        Canned::ok(
            &[(
                "Content-Type",
                "application/http-message-signatures-directory+json",
            )],
            body.as_bytes(),
        ),
    );
    let url = server.url();
    (server, url)
}

/// The head of a request to `/` signed by `key` as `agent`.
fn signed(key: &SigningKey, agent: &str, nonce: &str) -> String {
    let req = botscope_httpsig::Request::new("GET", "http", "shop.example", "/", vec![]);
    let spec = botscope_httpsig::SignSpec::new(Some(agent), now() - 2, 300, Some(nonce.into()));
    let s = botscope_httpsig::sign_request(&req, key, &spec).unwrap();
    let fields: String = s
        .headers()
        .iter()
        .map(|(n, v)| format!("{n}: {v}\r\n"))
        .collect();
    format!("GET / HTTP/1.1\r\nHost: shop.example\r\n{fields}\r\n")
}

/// Clients on `networks` (127.N.n.1, one kept-alive connection each)
/// sending, until stopped, requests signed as the agents `agents` names
/// (each request a new agent of one of those directories). Counts the
/// requests answered.
struct Flood {
    stop: Arc<AtomicBool>,
    sent: Arc<AtomicU64>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Flood {
    fn start(gate: SocketAddr, first: u8, networks: u8, agents: Vec<String>) -> Flood {
        let stop = Arc::new(AtomicBool::new(false));
        let sent = Arc::new(AtomicU64::new(0));
        let key = Arc::new(SigningKey::generate().unwrap());
        let agents = Arc::new(agents);
        // Two threads share the networks: the machine has two cores.
        let threads = (0..2u8)
            .map(|t| {
                let (stop, sent, key, agents) =
                    (stop.clone(), sent.clone(), key.clone(), agents.clone());
                std::thread::spawn(move || {
                    let mine: Vec<u8> = (0..networks).filter(|n| n % 2 == t).collect();
                    let mut conns: Vec<_> = mine
                        .iter()
                        .map(|&n| {
                            let s = botscope_testkit::connect_from([127, first, n, 1], gate);
                            s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
                            (s.try_clone().unwrap(), BufReader::new(s))
                        })
                        .collect();
                    let mut i = 0usize;
                    while !stop.load(Ordering::Relaxed) {
                        for (w, r) in &mut conns {
                            i += 1;
                            let agent = format!("{}?n={t}-{i}", agents[i % agents.len()]);
                            w.write_all(signed(&key, &agent, &format!("{t}-{i}")).as_bytes())
                                .unwrap();
                            let res = read_one(r).expect("an answer");
                            assert_eq!(res.status, 403, "a flood's request: {res:?}");
                            sent.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                })
            })
            .collect();
        Flood {
            stop,
            sent,
            threads,
        }
    }

    /// Stops the flood; the requests it sent.
    fn end(self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads {
            t.join().expect("the flood's thread");
        }
        self.sent.load(Ordering::Relaxed)
    }
}

/// Signed requests from `from` as `agent`, one every 50 ms, until one
/// reaches the application (verified), within `within`; how long it took.
fn verified_within(
    gate: SocketAddr,
    from: [u8; 4],
    key: &SigningKey,
    agent: &str,
    within: Duration,
) -> Duration {
    let started = Instant::now();
    let mut i = 0;
    loop {
        i += 1;
        let s = botscope_testkit::connect_from(from, gate);
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        (&s).write_all(signed(key, agent, &format!("{from:?}-{i}")).as_bytes())
            .unwrap();
        let r = read_one(&mut BufReader::new(&s)).expect("an answer");
        if r.status == 200 {
            return started.elapsed();
        }
        assert_eq!(r.status, 403, "{r:?}");
        assert!(
            started.elapsed() < within,
            "{agent} from {from:?} not verified within {within:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The signature counters of the gate's health page.
fn refused(gate: SocketAddr) -> u64 {
    let mut s = std::net::TcpStream::connect(gate).unwrap();
    s.write_all(
        b"GET /.botscope/healthz HTTP/1.1\r\nHost: shop.example\r\nConnection: close\r\n\r\n",
    )
    .unwrap();
    let r = botscope_testkit::http::read_response(s, "healthz");
    assert_eq!(r.status, 200, "{r:?}");
    r.json()["signature_agents"]["refused"]
        .as_u64()
        .unwrap_or_else(|| panic!("{}", r.body))
}

#[test]
fn slow_key_directories_from_many_networks_cannot_starve_a_crawlers_first_verification() {
    let dir = botscope_testkit::tempdir();
    let ca = TestCa::new();
    // Twelve directory hosts that answer a byte a second.
    let slow: Vec<String> = (1..=12)
        .map(|i| {
            format!(
                "https://{}/",
                botscope_testkit::trickle(&format!("127.0.3.{i}"))
            )
        })
        .collect();
    // A crawler the registry names, and one it does not.
    let (registered_key, unlisted_key) = (
        SigningKey::generate().unwrap(),
        SigningKey::generate().unwrap(),
    );
    let (_registered_dir, registered) = directory(&ca, &registered_key);
    let (_unlisted_dir, unlisted) = directory(&ca, &unlisted_key);
    let app = Recorder::start(None);
    let rd = dir.path().join("robots");
    write(&rd, "default.txt", "User-agent: *\nAllow: /\n");
    let policy = dir.path().join("policy.yaml");
    std::fs::write(&policy, POLICY).unwrap();
    // The gate's own defaults: 8 fetches at once, 2 kept for the
    // registry; a head due in 3 s, a fetch in 10 s.
    let g: Running = serve(Config {
        policy: Some(policy),
        upstream: Some(UpstreamConfig::new(url::Url::parse(&app.url()).unwrap())),
        signatures: Some(super::signatures_trusting(
            &ca,
            &registered,
            "SignedBot",
            "ai-assistant",
        )),
        ..Config::new(rd)
    });

    // One network naming every slow directory, and thirty networks
    // naming one: each holds one fetch slot at a time, and a crawler no
    // registry names is fetched beside them, before any slot a slow
    // directory holds is given back (its head is due in 3 s,
    // the floods started a second before).
    let one_network = Flood::start(g.addr, 30, 1, slow.clone());
    let one_directory = Flood::start(g.addr, 31, 30, slow[..1].to_vec());
    std::thread::sleep(Duration::from_secs(1));
    let took1 = verified_within(
        g.addr,
        [127, 40, 0, 1],
        &unlisted_key,
        &unlisted,
        Duration::from_millis(1500),
    );
    let sent = one_network.end() + one_directory.end();
    eprintln!("unlisted crawler verified after {took1:?} beside floods of {sent} requests");
    assert!(sent > 100, "the floods sent {sent} requests");

    // A botnet: sixty networks naming the twelve slow directories, every
    // slot open to unlisted agents held by turns. The registry's crawler
    // is verified at once, on a slot kept for it, as early.
    let before = refused(g.addr);
    let botnet = Flood::start(g.addr, 32, 60, slow.clone());
    std::thread::sleep(Duration::from_secs(1));
    let took = verified_within(
        g.addr,
        [127, 41, 0, 1],
        &registered_key,
        &registered,
        Duration::from_millis(1500),
    );
    let sent = botnet.end();
    assert!(sent > 100, "the botnet sent {sent} requests");
    // The botnet was refused fetches: it did contend for the slots.
    assert!(refused(g.addr) > before, "no fetch refused to the botnet");
    eprintln!("registered crawler verified after {took:?} under a botnet of {sent} requests");
    // Only the two crawlers' requests reached the application.
    let seen = app.seen();
    assert_eq!(seen.len(), 2, "{:?}", app.lines());
    assert!(
        seen.iter().all(|s| s.header("signature-agent").len() == 1),
        "{:?}",
        app.lines()
    );
}
