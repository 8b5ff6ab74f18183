//! The harvester against the simulated web on loopback: every behaviour
//! gives the outcome RFC 9309 prescribes, with its error class, in bounded
//! time; politeness and address safety hold.

mod polite;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use botscope_dns::{HickoryLookup, Pool};
use botscope_harvest::{Config, DEFAULT_USER_AGENT, Harvester};
use botscope_simweb::{Behaviour, Config as SimConfig, DnsMode, Sim, Site};
use botscope_store::{Attempt, Previous};
use rustls_pki_types::CertificateDer;
use rustls_pki_types::pem::PemObject;

fn corpus() -> Vec<Vec<u8>> {
    let c = botscope_simweb::example_corpus();
    assert!(c.len() >= 4, "examples/robots");
    c
}

fn site(name: &str, behaviour: Behaviour, tls: bool) -> Site {
    Site {
        name: name.into(),
        behaviour,
        tls,
    }
}

const TOTAL: Duration = Duration::from_secs(3);
/// Only a harvester that never returns takes this long.
const HUNG: Duration = Duration::from_secs(300);
const GAP: Duration = Duration::from_millis(150);

async fn harvester(sim: &Sim, allow_private: bool) -> Harvester<HickoryLookup> {
    harvester_trusting(sim, allow_private, true).await
}

async fn harvester_trusting(
    sim: &Sim,
    allow_private: bool,
    trust: bool,
) -> Harvester<HickoryLookup> {
    let lookup = HickoryLookup::new(&[sim.dns], Duration::from_secs(2)).expect("lookup");
    let (pool, _) = Pool::check(vec![(sim.dns, lookup)], &["plain.test".to_owned()])
        .await
        .expect("pool");
    let ca = CertificateDer::from_pem_slice(sim.ca_pem.as_bytes()).expect("CA");
    Harvester::new(
        Config {
            connect_timeout: Duration::from_secs(1),
            total_timeout: TOTAL,
            ip_gap: GAP,
            allow_private,
            http_port: sim.http_port,
            https_port: sim.https_port,
            trust: botscope_harvest::Trust {
                roots: botscope_harvest::Roots::Bundled,
                extra: if trust { vec![ca] } else { Vec::new() },
            },
            ..Config::default()
        },
        pool,
    )
    .expect("harvester")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_behaviour_gets_its_outcome() {
    let corpus = corpus();
    let sites = vec![
        site("plain.test", Behaviour::Robots(0), false),
        site("secure.test", Behaviour::Robots(2), true),
        site("s404.test", Behaviour::Status(404), false),
        site("s410.test", Behaviour::Status(410), false),
        site("s401.test", Behaviour::Status(401), false),
        site("s403.test", Behaviour::Status(403), false),
        site("s500.test", Behaviour::Status(500), false),
        site("s429.test", Behaviour::RetryAfter(429, 7200), false),
        site("s503.test", Behaviour::RetryAfter(503, 600), false),
        site(
            "moved.test",
            Behaviour::RedirectTo("plain.test".into()),
            false,
        ),
        site("hops3.test", Behaviour::RedirectChain(3), false),
        site("hops6.test", Behaviour::RedirectChain(6), false),
        site("loop.test", Behaviour::RedirectLoop, false),
        site("drip.test", Behaviour::SlowDrip, false),
        site("silent.test", Behaviour::NoAnswer, false),
        site("reset.test", Behaviour::Reset, false),
        site("huge.test", Behaviour::Huge, false),
        site("gzip.test", Behaviour::Gzip, false),
        site("html.test", Behaviour::Html, false),
        site("latin1.test", Behaviour::InvalidUtf8, false),
        site("flood.test", Behaviour::HeaderFlood, false),
        site("endless.test", Behaviour::Endless, false),
    ];
    let names: Vec<String> = sites.iter().map(|s| s.name.clone()).collect();
    let sim = Sim::start(SimConfig {
        sites,
        addresses: 64,
        corpus: corpus.clone(),
    })
    .await
    .expect("sim");
    let h = Arc::new(harvester(&sim, true).await);
    let mut tasks = Vec::new();
    for n in names.iter().cloned().chain(["nowhere.test".to_owned()]) {
        let h = h.clone();
        tasks.push(tokio::spawn(async move {
            (n.clone(), h.fetch(&n, None, None).await)
        }));
    }
    // Every host ends (a timeout, not a hang): the bound is only for a
    // harvester that never returns.
    let got: HashMap<String, Attempt> = tokio::time::timeout(HUNG, async {
        let mut got = HashMap::new();
        for t in tasks {
            let (n, a) = t.await.expect("task");
            got.insert(n, a);
        }
        got
    })
    .await
    .expect("the harvester hangs");
    let a = |n: &str| got.get(n).unwrap_or_else(|| panic!("{n}"));
    let outcome = |n: &str| {
        (
            a(n).outcome.as_str(),
            a(n).error_class.as_deref(),
            a(n).status,
        )
    };

    let p = a("plain.test");
    assert_eq!(outcome("plain.test"), ("parse", None, Some(200)));
    assert_eq!(p.body.as_deref(), Some(&corpus[0][..]));
    assert!(
        p.url.starts_with("http://plain.test"),
        "https refused, then http: {}",
        p.url
    );
    assert_eq!(p.headers.etag.as_deref(), Some("\"r0\""));
    assert!(
        p.address
            .as_deref()
            .is_some_and(|x| x.starts_with("127.77."))
    );

    let s = a("secure.test");
    assert_eq!(
        outcome("secure.test"),
        ("parse", None, Some(200)),
        "{:?}",
        s.error
    );
    assert!(s.url.starts_with("https://secure.test"), "{}", s.url);
    assert_eq!(s.body.as_deref(), Some(&corpus[2][..]));

    for n in ["s404.test", "s410.test", "s401.test", "s403.test"] {
        assert_eq!(outcome(n).0, "allow-all", "{n}");
        assert!(a(n).body.is_none());
    }
    assert_eq!(outcome("s500.test"), ("disallow-all", None, Some(500)));
    assert_eq!(outcome("s429.test"), ("disallow-all", None, Some(429)));
    assert_eq!(a("s429.test").expires_in, Some(7200));
    assert_eq!(a("s429.test").headers.retry_after.as_deref(), Some("7200"));
    assert_eq!(a("s503.test").expires_in, Some(600));

    let m = a("moved.test");
    assert_eq!(outcome("moved.test"), ("parse", None, Some(200)));
    assert_eq!(m.redirects.len(), 1);
    assert_eq!(m.redirects[0].status, 301);
    assert!(m.url.contains("plain.test"), "{}", m.url);
    assert_eq!(m.body.as_deref(), Some(&corpus[0][..]));
    assert_eq!(outcome("hops3.test").0, "parse");
    assert_eq!(a("hops3.test").redirects.len(), 3);
    // Five hops are followed; the sixth redirect means unavailable.
    assert_eq!(outcome("hops6.test").0, "allow-all");
    assert_eq!(a("hops6.test").redirects.len(), 5);
    assert_eq!(outcome("loop.test").0, "allow-all");

    for n in ["drip.test", "silent.test"] {
        assert_eq!(outcome(n).0, "disallow-all", "{n}");
        assert_eq!(outcome(n).1, Some("timeout"), "{n}");
    }
    assert_eq!(outcome("reset.test").0, "disallow-all");
    assert_eq!(
        outcome("reset.test").1,
        Some("connect"),
        "{:?}",
        a("reset.test").error
    );

    let cap = 500 * 1024;
    for n in ["huge.test", "endless.test"] {
        assert_eq!(outcome(n), ("parse", Some("too-large"), Some(200)), "{n}");
        assert!(a(n).truncated, "{n}");
        assert_eq!(a(n).body.as_ref().map(Vec::len), Some(cap), "{n}");
    }
    assert_eq!(a("gzip.test").body.as_deref(), Some(&corpus[1][..]));
    assert_eq!(outcome("html.test").0, "parse");
    assert_eq!(
        a("html.test").headers.content_type.as_deref(),
        Some("text/html; charset=utf-8")
    );
    assert!(
        a("latin1.test")
            .body
            .as_ref()
            .is_some_and(|b| b.contains(&0xe9))
    );
    assert_eq!(
        outcome("flood.test").1,
        Some("protocol"),
        "{:?}",
        a("flood.test").error
    );
    assert_eq!(outcome("flood.test").0, "disallow-all");
    assert_eq!(outcome("nowhere.test"), ("disallow-all", Some("dns"), None));

    // Politeness: one connection at a time per address (the gap between
    // turns is checked on a paused clock in the harvester's unit tests).
    assert_eq!(sim.seen.max_concurrent_per_ip(), 1);
    assert!(
        sim.seen.min_gap_per_ip().is_some(),
        "some address was hit twice"
    );
    // Honest identity, and nothing but robots.txt asked for.
    let uas = sim.seen.user_agents();
    assert_eq!(
        uas.keys().collect::<Vec<_>>(),
        vec![&DEFAULT_USER_AGENT.to_owned()]
    );
    assert_eq!(
        sim.seen
            .other_paths
            .load(std::sync::atomic::Ordering::Relaxed),
        0
    );

    // A conditional fetch of an unchanged file: 304, the copy stays.
    let prev = Previous {
        last_attempt: Some(0),
        etag: Some("\"r0\"".into()),
        has_copy: true,
        ..Previous::default()
    };
    let again = h.fetch("plain.test", None, Some(&prev)).await;
    assert_eq!(
        (again.status, again.outcome.as_str()),
        (Some(304), "use-cached-copy")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unsafe_addresses_are_refused_and_liars_left_out() {
    let mut sim = Sim::start(SimConfig {
        sites: vec![
            site("plain.test", Behaviour::Robots(0), false),
            site("secure.test", Behaviour::Robots(1), true),
        ],
        addresses: 4,
        corpus: corpus(),
    })
    .await
    .expect("sim");
    // Public addresses only: a name resolving to loopback or a private
    // network is recorded as refused, and nothing connects.
    let h = harvester(&sim, false).await;
    let before = sim
        .seen
        .connections
        .load(std::sync::atomic::Ordering::Relaxed);
    for n in ["a.loopback.test", "b.private.test", "plain.test"] {
        let a = h.fetch(n, None, None).await;
        assert_eq!(
            a.error_class.as_deref(),
            Some("refused"),
            "{n}: {:?}",
            a.error
        );
        assert_eq!(a.outcome, "disallow-all");
    }
    assert_eq!(
        sim.seen
            .connections
            .load(std::sync::atomic::Ordering::Relaxed),
        before
    );

    // The DNS pool: a lying server and a dead one are left out.
    let liar = sim.extra_dns(DnsMode::Lying).await.expect("liar");
    let dead = sim.extra_dns(DnsMode::Dead).await.expect("dead");
    let honest2 = sim.extra_dns(DnsMode::Honest).await.expect("honest");
    let t = Duration::from_millis(500);
    let servers = vec![
        (sim.dns, HickoryLookup::new(&[sim.dns], t).expect("l")),
        (liar, HickoryLookup::new(&[liar], t).expect("l")),
        (dead, HickoryLookup::new(&[dead], t).expect("l")),
        (honest2, HickoryLookup::new(&[honest2], t).expect("l")),
    ];
    let (pool, report) = Pool::check(
        servers,
        &["plain.test".to_owned(), "nothing.test".to_owned()],
    )
    .await
    .expect("pool");
    let mut used = pool.servers();
    used.sort();
    let mut want = vec![sim.dns, honest2];
    want.sort();
    assert_eq!(used, want, "{report:?}");
    assert!(report.iter().any(|r| r.addr == liar && !r.usable));
    assert!(report.iter().any(|r| r.addr == dead && !r.usable));
    let r = pool.resolve("plain.test").await;
    assert_eq!(r.answer.expect("answer"), vec![sim.addresses["plain.test"]]);
}

/// A whole run as the library runs it, into a real store file: every host
/// once, the store's memory honoured on the next run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_into_a_store_then_a_refresh() {
    use botscope_harvest::{HostList, NoProgress, RunConfig, run};
    use botscope_store::{SqliteStore, Store};
    let sites = botscope_simweb::bulk(60, corpus().len());
    let sim = Sim::start(SimConfig {
        sites: sites.clone(),
        addresses: 8,
        corpus: corpus(),
    })
    .await
    .expect("sim");
    let dir = botscope_testkit::tempdir();
    let db = dir.path().join("h.db");
    let list = HostList {
        hosts: sites.iter().map(|s| (None, s.name.clone())).collect(),
        ..HostList::default()
    };
    let config = RunConfig {
        fetch: Config {
            connect_timeout: Duration::from_secs(1),
            total_timeout: TOTAL,
            ip_gap: Duration::from_millis(20),
            allow_private: true,
            http_port: sim.http_port,
            https_port: sim.https_port,
            trust: botscope_harvest::Trust {
                roots: botscope_harvest::Roots::Bundled,
                extra: vec![CertificateDer::from_pem_slice(sim.ca_pem.as_bytes()).expect("CA")],
            },
            ..Config::default()
        },
        concurrency: 16,
        nameservers: vec![sim.dns],
        resume: false,
        refresh_older_than: None,
        input: "hosts".into(),
    };
    let store = SqliteStore::open(&db).expect("store");
    let (summary, store) = run(list.clone(), store, config.clone(), Arc::new(NoProgress))
        .await
        .expect("run");
    assert_eq!(summary.tally.done, 60);
    assert_eq!(summary.selection.todo.len(), 60);
    let stats = store.stats().expect("stats");
    assert_eq!(
        (stats.sites, stats.attempts, stats.unfinished_runs),
        (60, 60, 0)
    );
    assert_eq!(
        sim.seen.max_concurrent_per_ip(),
        1,
        "one connection per address"
    );
    drop(store);

    // Nothing is older than an hour: a refresh fetches nothing.
    let refresh = RunConfig {
        refresh_older_than: Some(Duration::from_secs(3600)),
        ..config
    };
    let store = SqliteStore::open(&db).expect("store");
    let (summary, store) = run(list, store, refresh, Arc::new(NoProgress))
        .await
        .expect("run");
    assert_eq!(summary.tally.done, 0);
    assert!(summary.selection.fresh + summary.selection.later == 60);
    assert_eq!(store.stats().expect("stats").attempts, 60);
}
