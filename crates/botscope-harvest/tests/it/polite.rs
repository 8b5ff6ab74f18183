//! The polite crawler against the simulated web: robots.txt first, its
//! verdicts with the deciding line, the pace per host (Crawl-delay,
//! Retry-After, one connection at a time) seen from the server side, and
//! the address guard.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use botscope_dns::{HickoryLookup, Pool};
use botscope_harvest::{Config, Crawler, Decision, PoliteConfig};
use botscope_simweb::{Behaviour, Config as SimConfig, Hit, Sim, Site};

const UA: &str = "PoliteBot/1.0 (+https://example.org/politebot.html)";

const RULES: &str = "User-agent: *\nDisallow: /private/\n\n# ours\nUser-agent: PoliteBot\nCrawl-delay: 0.4\nDisallow: /mine/\nAllow: /mine/ok\n";

fn site(name: &str, behaviour: Behaviour) -> Site {
    Site {
        name: name.into(),
        behaviour,
        tls: false,
    }
}

async fn sim() -> Sim {
    Sim::start(SimConfig {
        sites: vec![
            site("rules.test", Behaviour::Pages(RULES.into())),
            site("open.test", Behaviour::Status(404)),
            site("down.test", Behaviour::RetryAfter(503, 1)),
            site(
                "busy.test",
                Behaviour::Pages("User-agent: *\nDisallow:\n".into()),
            ),
        ],
        addresses: 2,
        corpus: Vec::new(),
    })
    .await
    .expect("sim")
}

async fn crawler(sim: &Sim, allow_private: bool) -> Crawler<HickoryLookup> {
    let lookup = HickoryLookup::new(&[sim.dns], Duration::from_secs(2)).expect("lookup");
    let (pool, _) = Pool::check(vec![(sim.dns, lookup)], &["rules.test".to_owned()])
        .await
        .expect("pool");
    Crawler::new(
        PoliteConfig {
            fetch: Config {
                user_agent: UA.into(),
                connect_timeout: Duration::from_secs(1),
                total_timeout: Duration::from_secs(5),
                allow_private,
                http_port: sim.http_port,
                ..Config::default()
            },
            min_gap: Duration::from_millis(150),
            ..PoliteConfig::default()
        },
        pool,
    )
    .expect("crawler")
}

/// The server's hits per host, in order.
fn by_host(hits: &[Hit]) -> HashMap<String, Vec<Hit>> {
    let mut m: HashMap<String, Vec<Hit>> = HashMap::new();
    for h in hits.iter().filter(|h| h.user_agent == UA) {
        m.entry(h.host.clone()).or_default().push(h.clone());
    }
    for v in m.values_mut() {
        v.sort_by_key(|h| h.start);
    }
    m
}

/// The shortest time from one answer's end to the next request's start,
/// asserting that no two overlap.
fn min_gap(hits: &[Hit]) -> Option<Duration> {
    hits.windows(2)
        .map(|w| {
            assert!(w[1].start >= w[0].end, "two requests at once: {w:?}");
            w[1].start - w[0].end
        })
        .min()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn obeys_its_group_and_keeps_the_pace() {
    let sim = sim().await;
    let c = Arc::new(crawler(&sim, true).await);
    assert_eq!(c.product_token(), "PoliteBot");
    let urls = [
        "http://rules.test/a",
        "http://rules.test/private/x",
        "http://rules.test/mine/x",
        "http://rules.test/mine/ok",
        "http://rules.test/b",
        "http://rules.test/c",
        "http://open.test/page",
        "http://down.test/page",
    ];
    let tasks: Vec<_> = urls
        .iter()
        .map(|u| {
            let c = c.clone();
            let u = u.to_string();
            tokio::spawn(async move { c.fetch(&u).await })
        })
        .collect();
    let mut got = HashMap::new();
    for (u, t) in urls.iter().zip(tasks) {
        got.insert(*u, t.await.expect("task"));
    }
    // Its own group applies, not `*`'s.
    let private = &got["http://rules.test/private/x"];
    assert_eq!(private.decision, Decision::Allowed(None));
    assert_eq!(private.page.as_ref().map(|p| p.status), Some(200));
    match &got["http://rules.test/mine/x"].decision {
        Decision::Disallowed(line) => {
            assert_eq!(line.line, 7);
            assert_eq!(line.text, "Disallow: /mine/");
            assert_eq!(line.robots_url, "http://rules.test/robots.txt");
        }
        d => panic!("{d:?}"),
    }
    assert!(got["http://rules.test/mine/x"].page.is_none());
    match &got["http://rules.test/mine/ok"].decision {
        Decision::Allowed(Some(line)) => assert_eq!(line.text, "Allow: /mine/ok"),
        d => panic!("{d:?}"),
    }
    // A 404 robots.txt: no restrictions, said why.
    let open = &got["http://open.test/page"];
    assert_eq!(open.decision, Decision::Allowed(None));
    assert!(
        open.robots_note
            .as_deref()
            .unwrap_or_default()
            .contains("404"),
        "{open:?}"
    );
    // A 503 robots.txt: nothing may be fetched.
    assert!(
        matches!(&got["http://down.test/page"].decision, Decision::Unavailable(w) if w.contains("503")),
        "{:?}",
        got["http://down.test/page"]
    );

    // The server's side.
    let hits = by_host(&sim.seen.hits());
    for (host, hs) in &hits {
        assert_eq!(hs[0].path, "/robots.txt", "{host}: robots.txt first");
        assert_eq!(
            hs.iter().filter(|h| h.path == "/robots.txt").count(),
            1,
            "{host}: robots.txt once"
        );
    }
    let rules = &hits["rules.test"];
    let paths: Vec<&str> = rules.iter().map(|h| h.path.as_str()).collect();
    assert!(!paths.contains(&"/mine/x"), "{paths:?}");
    assert_eq!(rules.len(), 6, "robots.txt and five pages: {paths:?}");
    // Crawl-delay 0.4 s between every two requests, robots.txt's included.
    let gap = min_gap(&rules[1..]).expect("gaps");
    assert!(gap >= Duration::from_millis(399), "{gap:?}");
    // The minimum gap elsewhere (robots.txt to the page).
    let open = &hits["open.test"];
    assert_eq!(open.len(), 2);
    assert!(min_gap(open).expect("gap") >= Duration::from_millis(149));
    assert_eq!(
        hits["down.test"]
            .iter()
            .map(|h| h.path.as_str())
            .collect::<Vec<_>>(),
        ["/robots.txt"],
        "nothing after a 503 robots.txt"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waits_as_told() {
    let sim = sim().await;
    let c = crawler(&sim, true).await;
    // After a fetch, the next one must wait for the gap.
    let first = c.fetch("http://busy.test/one").await;
    assert_eq!(first.page.map(|p| p.status), Some(200));
    match c.check("http://busy.test/two").await {
        Decision::Wait(d) => assert!(d > Duration::ZERO && d <= Duration::from_millis(150)),
        d => panic!("{d:?}"),
    }
    // Retry-After: 1 on a 429 holds the host for a second.
    let busy = c.fetch("http://busy.test/status/429").await;
    assert_eq!(busy.page.map(|p| p.status), Some(429));
    match c.check("http://busy.test/two").await {
        Decision::Wait(d) => assert!(d > Duration::from_millis(700), "{d:?}"),
        d => panic!("{d:?}"),
    }
    let next = c.fetch("http://busy.test/two").await;
    assert!(next.waited > Duration::from_millis(700), "{next:?}");
    assert_eq!(next.page.map(|p| p.status), Some(200));
    // A redirect is followed, the target checked in turn.
    let moved = c.fetch("http://busy.test/redirect/there").await;
    assert_eq!(moved.redirects.len(), 1);
    assert_eq!(moved.final_url, "http://busy.test/there");
    assert_eq!(moved.page.map(|p| p.status), Some(200));
    let hits = by_host(&sim.seen.hits());
    let busy = &hits["busy.test"];
    let after_429 = busy
        .windows(2)
        .find(|w| w[0].path == "/status/429")
        .expect("a request after the 429");
    assert!(after_429[1].start - after_429[0].end >= Duration::from_millis(900));
    assert!(min_gap(busy).expect("gaps") >= Duration::from_millis(149));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refuses_private_addresses_and_dishonest_agents() {
    let sim = sim().await;
    let c = crawler(&sim, false).await;
    let f = c.fetch("http://rules.test/a").await;
    assert!(
        matches!(&f.decision, Decision::Unavailable(w) if w.contains("loopback")),
        "{f:?}"
    );
    assert!(sim.seen.hits().is_empty(), "nothing was asked");
    assert!(matches!(
        c.check("ftp://rules.test/a").await,
        Decision::Unavailable(_)
    ));

    let lookup = HickoryLookup::new(&[sim.dns], Duration::from_secs(2)).expect("lookup");
    let (pool, _) = Pool::check(vec![(sim.dns, lookup)], &[])
        .await
        .expect("pool");
    let e = Crawler::new(
        PoliteConfig {
            fetch: Config {
                user_agent: "Mozilla/5.0 (Windows NT 10.0; Win64; x64)".into(),
                ..Config::default()
            },
            ..PoliteConfig::default()
        },
        pool,
    )
    .err()
    .expect("refused");
    assert!(e.to_string().contains("names no robot"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forgets_idle_hosts_but_never_their_gap() {
    let sim = sim().await;
    let lookup = HickoryLookup::new(&[sim.dns], Duration::from_secs(2)).expect("lookup");
    let (pool, _) = Pool::check(vec![(sim.dns, lookup)], &[])
        .await
        .expect("pool");
    let c = Crawler::new(
        PoliteConfig {
            fetch: Config {
                user_agent: UA.into(),
                allow_private: true,
                http_port: sim.http_port,
                ..Config::default()
            },
            min_gap: Duration::from_millis(150),
            max_hosts: 1,
            ..PoliteConfig::default()
        },
        pool,
    )
    .expect("crawler");
    assert!(c.fetch("http://busy.test/one").await.page.is_some());
    // busy.test is still within its gap: kept while open.test is fetched.
    assert!(c.fetch("http://open.test/page").await.page.is_some());
    assert!(matches!(
        c.check("http://busy.test/two").await,
        Decision::Allowed(_) | Decision::Wait(_)
    ));
    tokio::time::sleep(Duration::from_millis(200)).await;
    // Now idle past its gap: forgotten when a third host comes, so its
    // robots.txt is asked again, and the gap still holds.
    assert!(c.fetch("http://rules.test/a").await.page.is_some());
    assert!(c.fetch("http://busy.test/two").await.page.is_some());
    let hits = by_host(&sim.seen.hits());
    let busy: Vec<&str> = hits["busy.test"].iter().map(|h| h.path.as_str()).collect();
    assert_eq!(busy, ["/robots.txt", "/one", "/robots.txt", "/two"]);
    assert!(min_gap(&hits["busy.test"]).expect("gaps") >= Duration::from_millis(149));
    assert!(min_gap(&hits["open.test"]).expect("gaps") >= Duration::from_millis(149));
}
