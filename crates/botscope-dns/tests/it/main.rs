//! botscope-dns against a fake resolver (cache, concurrency) and against a
//! real DNS server, dnsmasq, started on loopback for the FCrDNS cases.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use botscope_botid::{Registry, UaInfo, Verdict, verify};
use botscope_dns::{Cache, Fcrdns, HickoryLookup, Lookup, Timed};
use botscope_testkit::{Dnsmasq, free_port};

fn ip(s: &str) -> IpAddr {
    s.parse().expect("ip")
}

/// A resolver that counts calls and how many run at once.
#[derive(Default)]
struct Fake {
    calls: AtomicUsize,
    running: AtomicUsize,
    peak: AtomicUsize,
}

/// A handle the test keeps to read the counters.
struct FakeHandle(Arc<Fake>);

impl Lookup for FakeHandle {
    async fn reverse(&self, ip: IpAddr) -> Timed<String> {
        let f = &self.0;
        f.calls.fetch_add(1, Ordering::SeqCst);
        let now = f.running.fetch_add(1, Ordering::SeqCst) + 1;
        f.peak.fetch_max(now, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(20)).await;
        f.running.fetch_sub(1, Ordering::SeqCst);
        Timed {
            answer: Ok(vec![format!(
                "host-{}.example",
                ip.to_string().replace([':', '.'], "-")
            )]),
            ttl: Duration::from_secs(60),
        }
    }
    async fn forward(&self, _name: &str) -> Timed<IpAddr> {
        self.0.calls.fetch_add(1, Ordering::SeqCst);
        Timed {
            answer: Ok(vec![]),
            ttl: Duration::from_secs(60),
        }
    }
    async fn exists(&self, _name: &str) -> Result<bool, botscope_dns::DnsFailure> {
        self.0.calls.fetch_add(1, Ordering::SeqCst);
        Ok(true)
    }
}

/// Questions for `ips`, any domain.
fn any_domain(ips: &[IpAddr]) -> Vec<(IpAddr, Vec<String>)> {
    ips.iter().map(|ip| (*ip, Vec::new())).collect()
}

fn googlebot(ips: &[IpAddr]) -> Vec<(IpAddr, Vec<String>)> {
    ips.iter()
        .map(|ip| {
            (
                *ip,
                vec!["googlebot.com".to_owned(), "google.com".to_owned()],
            )
        })
        .collect()
}

/// A hostile reverse zone: many PTR names whose forward queries never
/// answer.
struct Hostile {
    forwards: Arc<AtomicUsize>,
}

impl Lookup for Hostile {
    async fn reverse(&self, _ip: IpAddr) -> Timed<String> {
        Timed {
            answer: Ok((0..20).map(|i| format!("n{i}.googlebot.com")).collect()),
            ttl: Duration::from_secs(60),
        }
    }
    async fn forward(&self, _name: &str) -> Timed<IpAddr> {
        self.forwards.fetch_add(1, Ordering::SeqCst);
        std::future::pending().await
    }
    async fn exists(&self, _name: &str) -> Result<bool, botscope_dns::DnsFailure> {
        Ok(true)
    }
}

/// On a paused clock: the names inside the domain are asked at once, at
/// most MAX_PTR_NAMES of them, and the address costs one deadline however
/// many names its zone lists.
#[tokio::test(start_paused = true)]
async fn a_hostile_reverse_zone_costs_one_deadline() {
    let forwards = Arc::new(AtomicUsize::new(0));
    let hostile = Hostile {
        forwards: forwards.clone(),
    };
    let f = Fcrdns::new(hostile, Cache::default(), 4).with_deadline(Duration::from_secs(3));
    let start = tokio::time::Instant::now();
    let ev = f
        .evidence(ip("192.0.2.9"), &["googlebot.com".to_owned()])
        .await;
    assert_eq!(start.elapsed(), Duration::from_secs(3), "one deadline");
    assert_eq!(
        forwards.load(Ordering::SeqCst),
        botscope_botid::MAX_PTR_NAMES
    );
    let registry = Registry::parse(
        "t",
        "bots:\n- name: Googlebot\n  fcrdns_hosts: [googlebot.com]\n",
    )
    .expect("registry");
    let v = verify(
        &registry,
        ip("192.0.2.9"),
        None,
        &claim(),
        Some(&ev),
        Default::default(),
    );
    assert_eq!(v.verdict, Verdict::Unverifiable, "{}", v.reason);
}

fn claim() -> UaInfo {
    UaInfo {
        is_bot: true,
        family: None,
        claimed_bot: Some("Googlebot".into()),
        reason: None,
        client_type: botscope_botid::ClientType::Crawler,
    }
}

#[tokio::test]
async fn bounded_concurrency_each_address_once_and_cached() {
    let fake = Arc::new(Fake::default());
    let f = Fcrdns::new(FakeHandle(fake.clone()), Cache::default(), 3);
    let ips: Vec<IpAddr> = (1..=12)
        .map(|i| ip(&format!("192.0.2.{i}")))
        .chain([ip("::ffff:192.0.2.1")])
        .collect();
    let ev = f.evidence_batch(&any_domain(&ips)).await;
    assert_eq!(ev.len(), 12, "the mapped address is the same as 192.0.2.1");
    assert_eq!(
        fake.calls.load(Ordering::SeqCst),
        24 + 1,
        "one reverse and one forward per address, and once whether the reverse tree exists"
    );
    assert!(fake.peak.load(Ordering::SeqCst) <= 3, "at most 3 at once");
    let _ = f.evidence_batch(&any_domain(&ips)).await;
    assert_eq!(
        fake.calls.load(Ordering::SeqCst),
        25,
        "answers come from the cache"
    );
}

/// dnsmasq on loopback with the records of the FCrDNS cases.
fn dnsmasq() -> Dnsmasq {
    let records = [
        "--local=/googlebot.com/",
        "--local=/evilgooglebot.com/",
        "--local=/example.net/",
        "--local=/2.0.192.in-addr.arpa/",
        "--local=/8.b.d.0.1.0.0.2.ip6.arpa/",
        // the verification domain itself exists: negative answers count
        "--host-record=googlebot.com,192.0.2.200",
        // genuine, v4 and v6 (A/AAAA and PTR)
        "--host-record=crawl-192-0-2-1.googlebot.com,192.0.2.1",
        "--host-record=crawl-v6.googlebot.com,2001:db8::1",
        // PTR with no A record
        "--ptr-record=2.2.0.192.in-addr.arpa,noaddr.googlebot.com",
        // A pointing elsewhere
        "--ptr-record=3.2.0.192.in-addr.arpa,crawl-elsewhere.googlebot.com",
        "--address=/crawl-elsewhere.googlebot.com/198.51.100.9",
        // lookalike domain
        "--host-record=crawl.evilgooglebot.com,192.0.2.4",
        // two PTR names, one confirming
        "--ptr-record=5.2.0.192.in-addr.arpa,other.example.net",
        "--ptr-record=5.2.0.192.in-addr.arpa,crawl-5.googlebot.com",
        "--address=/crawl-5.googlebot.com/192.0.2.5",
        // 192.0.2.6 has no PTR: NXDOMAIN
    ];
    Dnsmasq::start(&records)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fcrdns_against_a_real_dns_server() {
    let server = dnsmasq();
    let addr = server.addr();
    let registry = Registry::parse(
        "t",
        "bots:\n- name: Googlebot\n  fcrdns_hosts: [googlebot.com, google.com]\n",
    )
    .expect("registry");
    let claim = claim();
    let lookup = HickoryLookup::new(&[addr], Duration::from_secs(2)).expect("resolver");
    let f = Fcrdns::new(lookup, Cache::default(), 4);
    let cases = [
        ("192.0.2.1", Verdict::Verified, "genuine v4"),
        ("2001:db8::1", Verdict::Verified, "genuine v6"),
        ("192.0.2.2", Verdict::Spoofed, "PTR with no A"),
        ("192.0.2.3", Verdict::Spoofed, "A pointing elsewhere"),
        ("192.0.2.4", Verdict::Spoofed, "lookalike domain"),
        ("192.0.2.5", Verdict::Verified, "two PTR names"),
        ("192.0.2.6", Verdict::Spoofed, "NXDOMAIN"),
    ];
    let ips: Vec<IpAddr> = cases.iter().map(|(a, _, _)| ip(a)).collect();
    let evidence = f.evidence_batch(&googlebot(&ips)).await;
    for (a, want, what) in cases {
        let v = verify(
            &registry,
            ip(a),
            None,
            &claim,
            evidence.get(&ip(a)),
            Default::default(),
        );
        assert_eq!(v.verdict, want, "{what} ({a}): {}", v.reason);
    }
    let v = verify(
        &registry,
        ip("192.0.2.5"),
        None,
        &claim,
        evidence.get(&ip("192.0.2.5")),
        Default::default(),
    );
    assert_eq!(v.hostnames, ["crawl-5.googlebot.com"]);
    assert!(!f.cache().is_empty(), "answers are cached");

    // A port where nothing answers: unverifiable, never spoofed.
    let dead = SocketAddr::from(([127, 0, 0, 1], free_port()));
    let lookup = HickoryLookup::new(&[dead], Duration::from_millis(500)).expect("resolver");
    let f = Fcrdns::new(lookup, Cache::default(), 4);
    let ev = f
        .evidence(ip("192.0.2.1"), &["googlebot.com".to_owned()])
        .await;
    let v = verify(
        &registry,
        ip("192.0.2.1"),
        None,
        &claim,
        Some(&ev),
        Default::default(),
    );
    assert_eq!(v.verdict, Verdict::Unverifiable, "{}", v.reason);
    assert!(f.cache().is_empty(), "failures are not cached");
    drop(server);
}

/// A resolver that says NXDOMAIN for every name (captive or broken): its
/// negative answers are not evidence, and none is cached.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resolver_that_denies_everything_is_not_evidence() {
    let server = Dnsmasq::start(&["--local=/#/"]);
    let registry = Registry::parse(
        "t",
        "bots:\n- name: Googlebot\n  fcrdns_hosts: [googlebot.com, google.com]\n",
    )
    .expect("registry");
    let lookup = HickoryLookup::new(&[server.addr()], Duration::from_secs(2)).expect("resolver");
    let f = Fcrdns::new(lookup, Cache::default(), 4);
    let a = ip("198.51.100.10");
    let ev = f.evidence_batch(&googlebot(&[a])).await;
    let ev = &ev[&a];
    assert_eq!(ev.ptr, Some(Ok(vec![])), "NXDOMAIN for the PTR");
    assert_eq!(
        ev.zones,
        [
            ("googlebot.com".to_owned(), Ok(false)),
            ("google.com".to_owned(), Ok(false))
        ]
    );
    let v = verify(&registry, a, None, &claim(), Some(ev), Default::default());
    assert_eq!(v.verdict, Verdict::Unverifiable, "{}", v.reason);
    assert!(f.cache().is_empty(), "nothing negative is cached");
    drop(server);
}

/// The pipelines' source: inside whatever runtime the caller has (here a
/// current-thread one, as a test or a small server runs), answers kept in
/// the cache file and used by the next source even with DNS gone.
#[tokio::test]
async fn evidence_source_persists_its_cache() {
    use botscope_dns::{DnsEvidence, EvidenceConfig};
    let dir = botscope_testkit::tempdir();
    let cache = dir.path().join("cache/dns.json");
    let server = dnsmasq();
    let config = EvidenceConfig {
        servers: vec![server.addr()],
        timeout: Duration::from_secs(2),
        concurrency: 4,
        cache: Some(cache.clone()),
    };
    let dns = DnsEvidence::new(&config)
        .await
        .expect("no cache yet is an empty one");
    let (ev, problem) = dns
        .gather(&googlebot(&[ip("192.0.2.1"), ip("192.0.2.6")]))
        .await;
    assert!(problem.is_none(), "{problem:?}");
    assert_eq!(
        ev[&ip("192.0.2.1")].ptr,
        Some(Ok(vec!["crawl-192-0-2-1.googlebot.com".to_owned()]))
    );
    assert!(cache.is_file(), "the cache is saved");
    drop(server);

    // The server is gone; its answers come from the file, marked so.
    let gone = EvidenceConfig {
        timeout: Duration::from_millis(300),
        ..config.clone()
    };
    let dns = DnsEvidence::new(&gone).await.expect("source");
    let (again, _) = dns
        .gather(&googlebot(&[ip("192.0.2.1"), ip("192.0.2.6")]))
        .await;
    for a in [ip("192.0.2.1"), ip("192.0.2.6")] {
        let (mut cached, mut asked) = (again[&a].clone(), ev[&a].clone());
        assert!(
            cached
                .cached
                .iter()
                .any(|(q, age)| q == "PTR" && age.is_some()),
            "{cached:?}"
        );
        (cached.cached, asked.cached) = (Vec::new(), Vec::new());
        assert_eq!(cached, asked);
    }

    // Another resolver never reads them: a negative answer or a "zone
    // known" of one resolver is no evidence of another's.
    let dead = EvidenceConfig {
        servers: vec![SocketAddr::from(([127, 0, 0, 1], free_port()))],
        ..gone.clone()
    };
    let dns = DnsEvidence::new(&dead).await.expect("source");
    let (other, _) = dns
        .gather(&googlebot(&[ip("192.0.2.1"), ip("192.0.2.6")]))
        .await;
    for a in [ip("192.0.2.1"), ip("192.0.2.6")] {
        assert!(matches!(other[&a].ptr, Some(Err(_))), "{:?}", other[&a]);
        assert!(other[&a].cached.is_empty(), "{:?}", other[&a]);
    }
    // A cache written before answers named their resolver: not used.
    let text = std::fs::read_to_string(&cache).expect("read");
    let v: serde_json::Value = serde_json::from_str(&text).expect("json");
    assert_eq!(v["version"], 1, "{v}");
    let unscoped: serde_json::Map<String, serde_json::Value> = v["entries"]
        .as_object()
        .expect("entries")
        .iter()
        .map(|(k, e)| {
            (
                k.rsplit_once(' ')
                    .map_or(k.clone(), |(_, w)| format!("ptr {w}")),
                e.clone(),
            )
        })
        .collect();
    std::fs::write(
        &cache,
        serde_json::json!({"version": 0, "entries": unscoped}).to_string(),
    )
    .expect("write");
    let dns = DnsEvidence::new(&gone).await.expect("source");
    let (old, _) = dns.gather(&googlebot(&[ip("192.0.2.1")])).await;
    assert!(matches!(old[&ip("192.0.2.1")].ptr, Some(Err(_))), "{old:?}");
    let dead = gone;

    // A file that is not a cache (a log given by mistake): an error, and
    // the file is never overwritten.
    let log = b"127.0.0.1 - - [01/Jan/2020:00:00:00 +0000] \"GET / HTTP/1.1\" 200 1\n";
    std::fs::write(&cache, log).expect("write");
    let e = DnsEvidence::new(&dead).await.expect_err("not a cache");
    assert!(e.to_string().contains("is not a botscope DNS cache"), "{e}");
    assert_eq!(std::fs::read(&cache).expect("read"), log);
}

/// Evidence comes with how long it holds: the shortest TTL of the answers
/// it rests on (dnsmasq gives 300 s), what is left of it when cached, and
/// none after a failure. A bounded cache keeps no more than its bound.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn evidence_holds_for_its_answers_ttl_and_a_bounded_cache_stays_bounded() {
    let server = dnsmasq();
    let lookup = HickoryLookup::new(&[server.addr()], Duration::from_secs(2)).expect("resolver");
    let f = Fcrdns::new(lookup, Cache::bounded(3), 4);
    let domains = vec!["googlebot.com".to_owned()];
    let (ev, life) = f.evidence_timed(ip("192.0.2.1"), &domains).await;
    assert!(ev.ptr.as_ref().is_some_and(|p| p.is_ok()), "{ev:?}");
    let life = life.expect("answers hold");
    assert!(
        life > Duration::from_secs(250) && life <= Duration::from_secs(300),
        "{life:?}"
    );
    // Asked again: from the cache, with what is left.
    let (_, again) = f.evidence_timed(ip("192.0.2.1"), &domains).await;
    assert!(again.expect("cached") <= life);
    // Many addresses: the cache holds at most its bound.
    for a in [
        "192.0.2.2",
        "192.0.2.3",
        "192.0.2.5",
        "192.0.2.6",
        "2001:db8::1",
    ] {
        let _ = f.evidence_timed(ip(a), &domains).await;
    }
    assert!(f.cache().len() <= 3, "{}", f.cache().len());
    // A failure holds for no time at all.
    let dead = SocketAddr::from(([127, 0, 0, 1], free_port()));
    let lookup = HickoryLookup::new(&[dead], Duration::from_millis(300)).expect("resolver");
    let f = Fcrdns::new(lookup, Cache::bounded(10), 1);
    let (_, life) = f.evidence_timed(ip("192.0.2.1"), &domains).await;
    assert_eq!(life, None);
}
