//! The honeypot with two crawlers the test drives: botscope's polite
//! crawler, which must score full marks, and a rude one that ignores
//! robots.txt and its pace, which must score zero on every behaviour.
//! Names resolve through the simulated web's DNS responder to two
//! loopback addresses, and the honeypot listens on both.

use std::collections::{HashSet, VecDeque};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use botscope_dns::{HickoryLookup, Pool};
use botscope_harvest::{Config, Crawler, Decision, PoliteConfig};
use botscope_honeypot::report::{self, Check};
use botscope_honeypot::{Design, Honeypot, design_path};
use botscope_simweb::{Behaviour as SimBehaviour, Config as SimConfig, Sim, Site};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const POLITE: &str = "Mozilla/5.0 (compatible; PoliteBot/1.0; +https://example.org/politebot.html)";
const RUDE: &str = "RudeBot/0.1";

/// The links of a page: `href="…"`, as absolute URLs.
fn links(base: &str, html: &[u8]) -> Vec<String> {
    let base = url::Url::parse(base).expect("base");
    let text = String::from_utf8_lossy(html);
    text.split("href=\"")
        .skip(1)
        .filter_map(|s| s.split('"').next())
        .filter_map(|h| base.join(h).ok())
        .map(|u| u.to_string())
        .collect()
}

/// Breadth first from `seed`, every link once.
async fn crawl<F, Fut>(seed: String, mut get: F) -> usize
where
    F: FnMut(String) -> Fut,
    Fut: Future<Output = Option<Vec<u8>>>,
{
    let mut seen: HashSet<String> = HashSet::from([seed.clone()]);
    let mut queue = VecDeque::from([seed]);
    let mut fetched = 0;
    while let Some(u) = queue.pop_front() {
        let Some(body) = get(u.clone()).await else {
            continue;
        };
        fetched += 1;
        for l in links(&u, &body) {
            if seen.insert(l.clone()) {
                queue.push_back(l);
            }
        }
    }
    fetched
}

/// A rude GET: no robots.txt, no pause, straight to the address.
async fn rude_get(addr: SocketAddr, url: &str) -> Option<Vec<u8>> {
    let u = url::Url::parse(url).ok()?;
    let host = u.host_str()?;
    let mut target = u.path().to_owned();
    if let Some(q) = u.query() {
        target.push('?');
        target.push_str(q);
    }
    let mut s = tokio::net::TcpStream::connect(addr).await.ok()?;
    let req = format!(
        "GET {target} HTTP/1.1\r\nHost: {host}:{}\r\nUser-Agent: {RUDE}\r\nConnection: close\r\n\r\n",
        addr.port()
    );
    s.write_all(req.as_bytes()).await.ok()?;
    let mut out = Vec::new();
    s.read_to_end(&mut out).await.ok()?;
    let split = out.windows(4).position(|w| w == b"\r\n\r\n")?;
    Some(out[split + 4..].to_vec())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn polite_scores_full_marks_and_rude_scores_zero() {
    let design = Design::new(8, "hp.test", 1).expect("design");
    // The DNS responder of the simulated web knows the sites' names.
    let sim = Sim::start(SimConfig {
        sites: design
            .sites
            .iter()
            .map(|s| Site {
                name: s.host.clone(),
                behaviour: SimBehaviour::Status(404),
                tls: false,
            })
            .collect(),
        addresses: 2,
        corpus: Vec::new(),
    })
    .await
    .expect("sim");
    let mut ips: Vec<std::net::IpAddr> = sim.addresses.values().copied().collect();
    ips.sort();
    ips.dedup();
    assert_eq!(ips.len(), 2);
    let dir = tempfile::tempdir().expect("dir");
    let log = dir.path().join("honeypot.log");
    // One port on both addresses.
    let mut bound = None;
    for _ in 0..50 {
        let first = tokio::net::TcpListener::bind(SocketAddr::new(ips[0], 0))
            .await
            .expect("bind");
        let port = first.local_addr().expect("addr").port();
        drop(first);
        let listen: Vec<SocketAddr> = ips.iter().map(|&ip| SocketAddr::new(ip, port)).collect();
        if let Ok(h) = Honeypot::bind(design.clone(), &listen, &log).await {
            bound = Some((h, port));
            break;
        }
    }
    let (honeypot, port) = bound.expect("a port free on both addresses");
    assert_eq!(honeypot.local_addrs().len(), 2);
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(honeypot.run(async move {
        let _ = stop_rx.await;
    }));

    // The polite crawler, from the first site, signing its requests.
    let key = Arc::new(botscope_httpsig::SigningKey::generate().expect("key"));
    let agent = "https://politebot.example";
    let lookup = HickoryLookup::new(&[sim.dns], Duration::from_secs(2)).expect("lookup");
    let (pool, _) = Pool::check(vec![(sim.dns, lookup)], &[])
        .await
        .expect("pool");
    let polite = Arc::new(
        Crawler::new(
            PoliteConfig {
                fetch: Config {
                    user_agent: POLITE.into(),
                    allow_private: true,
                    http_port: port,
                    connect_timeout: Duration::from_secs(1),
                    total_timeout: Duration::from_secs(5),
                    ..Config::default()
                },
                min_gap: Duration::from_millis(50),
                signer: Some(botscope_harvest::Signer {
                    key: key.clone(),
                    agent: agent.into(),
                    validity: Duration::from_secs(60),
                }),
                ..PoliteConfig::default()
            },
            pool,
        )
        .expect("crawler"),
    );
    let seed = format!("http://s0.hp.test:{port}/");
    let p = polite.clone();
    let fetched = crawl(seed.clone(), move |u| {
        let p = p.clone();
        async move {
            let f = p.fetch(&u).await;
            match (&f.decision, f.page) {
                (Decision::Allowed(_), Some(page)) if page.status == 200 => Some(page.body),
                _ => None,
            }
        }
    })
    .await;
    assert!(
        fetched > 20,
        "the polite crawler reached the sites: {fetched}"
    );

    // The rude crawler, from the same seed.
    let addr_of = |u: &str| {
        let host = url::Url::parse(u).ok()?.host_str()?.to_owned();
        Some(SocketAddr::new(*sim.addresses.get(&host)?, port))
    };
    let fetched = crawl(seed, |u| {
        let addr = addr_of(&u);
        async move { rude_get(addr?, &u).await }
    })
    .await;
    assert!(fetched > 40, "the rude crawler took everything: {fetched}");

    let _ = stop_tx.send(());
    server.await.expect("join").expect("served");

    // The report, from the log and the design written beside it.
    let written: Design =
        serde_json::from_slice(&std::fs::read(design_path(&log)).expect("design file"))
            .expect("design json");
    assert_eq!(written, design);
    let registry = botscope_botid::Registry::bundled();
    let classifier = botscope_botid::UaClassifier::bundled(&registry).expect("classifier");
    let (signed, bad) =
        report::read_signed(&botscope_honeypot::signatures_path(&log)).expect("signatures");
    assert_eq!(bad, 0);
    assert_eq!(report::signed_agents(&signed), [agent]);
    let mut keys = botscope_httpsig::KeySet::new();
    keys.add_key(Some(agent), key.public());
    let r = report::report_signed(
        std::io::BufReader::new(std::fs::File::open(&log).expect("log")),
        written,
        &registry,
        &classifier,
        &signed,
        &keys,
    )
    .expect("report");
    assert!(r.malformed.is_empty(), "{:?}", r.malformed);
    assert_eq!(r.other_hosts, 0);
    let by = |name: &str| {
        r.crawlers
            .iter()
            .find(|c| c.name == name)
            .unwrap_or_else(|| panic!("{name} in {:#?}", r.crawlers))
    };
    let polite = by("PoliteBot");
    let rude = by("RudeBot");
    println!("{}", report::text(&r));
    assert_eq!(polite.sites, 8);
    assert_eq!(rude.sites, 8);
    for c in [polite, rude] {
        assert_eq!(c.identity, "unknown", "{c:?}");
        for s in &c.checks {
            assert!(s.sites > 0, "{} judged for {}", s.check.as_str(), c.name);
        }
    }
    for s in &polite.checks {
        assert_eq!(s.score, Some(1.0), "polite, {}: {:?}", s.check.as_str(), s);
    }
    assert_eq!(polite.score, Some(100.0));
    // Every request of the polite crawler was signed and verified; the
    // rude one signed nothing.
    let sigs = polite.signatures.as_ref().expect("signed");
    assert_eq!(sigs.signed, polite.requests);
    assert_eq!(sigs.verified, polite.requests, "{sigs:?}");
    assert_eq!(sigs.agents, [agent]);
    assert!(rude.signatures.is_none());
    assert!(report::text(&r).contains("PoliteBot (unknown) signed"));
    assert!(report::html(&r).contains(&sigs.cell()));
    for s in &rude.checks {
        assert_eq!(s.score, Some(0.0), "rude, {}: {:?}", s.check.as_str(), s);
        assert!(!s.evidence.is_empty());
    }
    assert_eq!(rude.score, Some(0.0));
    assert_eq!(r.crawlers[0].name, "PoliteBot", "best first");
    // Each behaviour judged where it should be.
    let sites_of = |c: &report::Crawler, k: Check| {
        c.checks
            .iter()
            .find(|s| s.check == k)
            .map(|s| s.sites)
            .expect("check")
    };
    assert_eq!(sites_of(rude, Check::RobotsFirst), 8);
    assert_eq!(sites_of(rude, Check::ObeyedDisallow), 4);
    assert_eq!(sites_of(polite, Check::StoppedOn5xx), 1);

    // The other renderings.
    let text = report::text(&r);
    assert!(
        text.contains("PoliteBot") && text.contains("RudeBot"),
        "{text}"
    );
    let html = report::html(&r);
    assert!(html.contains("<td class=\"pass\">8/8</td>"), "{html}");
    let json = serde_json::to_value(&r).expect("json");
    assert_eq!(json["crawlers"][0]["checks"][0]["check"], "robots-first");
}
