//! Pay per crawl through the real standalone gate, in front of an
//! application that records what reaches it: a crawler written from
//! Cloudflare's documented flow (ask, read `crawler-price`, pay with a
//! signed `crawler-exact-price` or `crawler-max-price`, read
//! `crawler-charged`), and every documented error with its code and status.
//! An unsigned, unverified, unregistered or replayed request is never
//! charged and never passes as paid.

use std::io::{BufReader, Write};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use botscope_gate::Config;
use botscope_gate::proxy::UpstreamConfig;
use botscope_httpsig::SigningKey;
use botscope_testkit::http::{Res, read_one};
use botscope_testkit::ipdb::TestCa;
use botscope_testkit::recorder::Recorder;

use super::keys::{directory, now};
use super::{Running, serve, write};

/// Who signs a request: the key, its agent, the fields covered, the nonce.
type Signer<'a> = Option<(&'a SigningKey, &'a str, &'a [&'a str], &'a str)>;

/// A documented error: the fields sent, the signer, the status and the
/// `crawler-error` code.
type Case<'a> = (Vec<(&'a str, &'a str)>, Signer<'a>, u16, &'a str);

const POLICY: &str = "version: 1\ndefault: allow\nrules:\n  - name: news-for-a-fee\n    action: charge\n    price: USD 0.01\n    path: [/news/]\n";

/// One request to `/news/…` from 127.0.0.1: `fields` added, signed by
/// `key` as `agent` over `covers` (besides `@authority` and
/// `Signature-Agent`) when given, with `nonce`.
fn ask(gate: SocketAddr, path: &str, fields: &[(&str, &str)], signer: Signer<'_>) -> Res {
    send(gate, [127, 0, 0, 1], &head(path, fields, signer))
}

/// The request's head, signed as [`ask`] signs it.
fn head(path: &str, fields: &[(&str, &str)], signer: Signer<'_>) -> String {
    head_at("shop.example", path, fields, signer)
}

/// [`head`] for the site `host`.
fn head_at(host: &str, path: &str, fields: &[(&str, &str)], signer: Signer<'_>) -> String {
    let mut head = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n");
    for (n, v) in fields {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    if let Some((key, agent, covers, nonce)) = signer {
        let req = botscope_httpsig::Request::new(
            "GET",
            "http",
            host,
            path,
            fields
                .iter()
                .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
                .collect(),
        );
        let mut spec =
            botscope_httpsig::SignSpec::new(Some(agent), now() - 2, 300, Some(nonce.into()));
        spec.covers = covers.iter().map(|c| (*c).to_owned()).collect();
        let s = botscope_httpsig::sign_request(&req, key, &spec).expect("signed");
        for (n, v) in s.headers() {
            head.push_str(&format!("{n}: {v}\r\n"));
        }
    }
    head.push_str("\r\n");
    head
}

/// Sends `head` from the loopback address `from`.
fn send(gate: SocketAddr, from: [u8; 4], head: &str) -> Res {
    let mut s = botscope_testkit::connect_from(from, gate);
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    s.write_all(head.as_bytes()).expect("sent");
    read_one(&mut BufReader::new(&s)).expect("an answer")
}

fn h<'r>(r: &'r Res, name: &str) -> Option<&'r str> {
    r.header(name)
}

/// A crawler as Cloudflare's "Crawl pages" tells one to behave: ask; on a
/// 402 read `crawler-price`; if it is within `budget` (same currency),
/// ask again paying exactly that, signed over the price header; return
/// the answer and what it was charged.
fn documented_crawler(
    gate: SocketAddr,
    path: &str,
    key: &SigningKey,
    agent: &str,
    budget: &str,
    nonce: &str,
) -> (Res, Option<String>) {
    documented_crawler_via(
        &|p, f, s| ask(gate, p, f, s),
        path,
        key,
        agent,
        budget,
        nonce,
    )
}

/// How a crawler reaches the site: a path, its fields, its signer.
type Via<'a> = &'a dyn Fn(&str, &[(&str, &str)], Signer<'_>) -> Res;

/// [`documented_crawler`] through `ask`.
fn documented_crawler_via(
    ask: Via<'_>,
    path: &str,
    key: &SigningKey,
    agent: &str,
    budget: &str,
    nonce: &str,
) -> (Res, Option<String>) {
    let first = ask(path, &[], None);
    if first.status != 402 {
        return (first, None);
    }
    let price = h(&first, "crawler-price")
        .expect("a 402 names its price")
        .to_owned();
    let quoted = botscope_terms::Price::parse_header(&price).expect("a price");
    let max = botscope_terms::Price::parse_header(budget).expect("a budget");
    if quoted.currency != max.currency || quoted.millionths > max.millionths {
        return (first, None);
    }
    let paid = ask(
        path,
        &[("crawler-exact-price", &price)],
        Some((key, agent, &["crawler-exact-price"], nonce)),
    );
    let charged = h(&paid, "crawler-charged").map(str::to_owned);
    (paid, charged)
}

#[test]
fn pay_per_crawl_through_the_standalone_gate() {
    let dir = botscope_testkit::tempdir();
    let ca = TestCa::new();
    let key = SigningKey::generate().unwrap();
    let (_dir_server, agent) = directory(&ca, &key);
    let stranger_key = SigningKey::generate().unwrap();
    let (_stranger_server, stranger) = directory(&ca, &stranger_key);
    let app = Recorder::start(None);
    let rd = dir.path().join("robots");
    write(&rd, "default.txt", "User-agent: *\nAllow: /\n");
    let policy = dir.path().join("policy.yaml");
    std::fs::write(&policy, POLICY).unwrap();
    let log = dir.path().join("decisions.jsonl");
    let g: Running = serve(Config {
        policy: Some(policy),
        upstream: Some(UpstreamConfig::new(url::Url::parse(&app.url()).unwrap())),
        decision_log: Some(botscope_gate::decisions::DecisionLogConfig {
            path: log.clone(),
            all: false,
            max_bytes: 1 << 20,
        }),
        signatures: Some(super::signatures_trusting(
            &ca,
            &agent,
            "PayingBot",
            "ai-training",
        )),
        ..Config::new(rd)
    });
    let at = g.addr;
    // The first request of anyone: the price, and nothing reaches the
    // application. robots.txt is never priced; nor is what no rule prices.
    let r = ask(at, "/news/a", &[], None);
    assert_eq!(
        (r.status, h(&r, "crawler-price")),
        (402, Some("USD 0.01")),
        "{r:?}"
    );
    assert!(r.body.contains("Payment required"), "{}", r.body);
    assert_eq!(ask(at, "/robots.txt", &[], None).status, 200);
    assert_eq!(ask(at, "/about", &[], None).status, 200);
    assert!(
        app.lines().iter().all(|l| !l.contains("/news/")),
        "{:?}",
        app.lines()
    );
    // Until the agent's keys are in, a signed payment is not accepted.
    let started = Instant::now();
    let mut n = 0;
    loop {
        n += 1;
        let r = ask(
            at,
            "/news/warmup",
            &[("crawler-max-price", "USD 1.00")],
            Some((&key, &agent, &["crawler-max-price"], &format!("warm{n}"))),
        );
        if r.status == 200 {
            assert_eq!(h(&r, "crawler-charged"), Some("USD 0.01"), "{r:?}");
            break;
        }
        assert_eq!(
            (r.status, h(&r, "crawler-error")),
            (400, Some("StrongAuthRequired")),
            "{r:?}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the agent never verified"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // The documented crawler pays exactly the price it was quoted.
    let (r, charged) = documented_crawler(at, "/news/b", &key, &agent, "USD 0.05", "doc1");
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(charged.as_deref(), Some("USD 0.01"));
    assert!(
        r.body.contains("GET /news/b"),
        "the application's page: {}",
        r.body
    );
    // Within a smaller budget it does not pay.
    let (r, charged) = documented_crawler(at, "/news/c", &key, &agent, "USD 0.001", "doc2");
    assert_eq!((r.status, charged), (402, None));
    // Every documented error, with its code and status; none reaches the
    // application or is charged.
    let before = app.lines().len();
    let signed = |covers: &'static [&'static str], nonce: &'static str| {
        Some((&key, agent.as_str(), covers, nonce))
    };
    let cases: Vec<Case<'_>> = vec![
        (
            vec![("crawler-max-price", "USD 1")],
            None,
            400,
            "StrongAuthRequired",
        ),
        (
            vec![
                ("crawler-exact-price", "USD 0.01"),
                ("crawler-max-price", "USD 1"),
            ],
            signed(&["crawler-exact-price", "crawler-max-price"], "e1"),
            400,
            "ConflictingPriceHeaders",
        ),
        (
            vec![("crawler-max-price", "1 USD")],
            signed(&["crawler-max-price"], "e2"),
            400,
            "InvalidCrawlerPriceValue",
        ),
        (
            vec![("crawler-max-price", "USD 1e3")],
            signed(&["crawler-max-price"], "e3"),
            400,
            "InvalidCrawlerPriceValue",
        ),
        (
            vec![("crawler-exact-price", "USD 0.02")],
            signed(&["crawler-exact-price"], "e4"),
            402,
            "InvalidCrawlerExactPrice",
        ),
        (
            vec![("crawler-exact-price", "EUR 0.01")],
            signed(&["crawler-exact-price"], "e5"),
            402,
            "InvalidCrawlerExactPrice",
        ),
        (
            vec![("crawler-max-price", "USD 0.005")],
            signed(&["crawler-max-price"], "e6"),
            402,
            "InvalidCrawlerMaxPrice",
        ),
        // Signed, but not over the price: anyone on the path could add it.
        (
            vec![("crawler-max-price", "USD 1")],
            signed(&[], "e7"),
            400,
            "InvalidSignature",
        ),
        // A valid signature by an agent no registry names.
        (
            vec![("crawler-max-price", "USD 1")],
            Some((
                &stranger_key,
                stranger.as_str(),
                &["crawler-max-price"][..],
                "e8",
            )),
            400,
            "StrongAuthRequired",
        ),
    ];
    for (fields, signer, status, code) in cases {
        let r = ask(at, "/news/err", &fields, signer);
        assert_eq!(
            (r.status, h(&r, "crawler-error")),
            (status, Some(code)),
            "{fields:?}: {r:?}"
        );
        assert_eq!(h(&r, "crawler-charged"), None);
        if status == 402 {
            assert_eq!(h(&r, "crawler-price"), Some("USD 0.01"), "{r:?}");
        }
    }
    assert_eq!(app.lines().len(), before, "{:?}", app.lines());
    // A paid request replayed from elsewhere is not paid again (nor
    // served).
    let paid = head(
        "/news/replayed",
        &[("crawler-max-price", "USD 1")],
        Some((&key, &agent, &["crawler-max-price"], "r1")),
    );
    assert_eq!(
        h(&send(at, [127, 0, 0, 1], &paid), "crawler-charged"),
        Some("USD 0.01")
    );
    let again = send(at, [127, 0, 0, 9], &paid);
    assert_eq!(
        (again.status, h(&again, "crawler-error")),
        (400, Some("InvalidSignature")),
        "{again:?}"
    );
    let before = app.lines().len();
    // The stranger's keys may still have been on their way: asked again
    // once they are in, it is still refused.
    std::thread::sleep(Duration::from_millis(300));
    let r = ask(
        at,
        "/news/err",
        &[("crawler-max-price", "USD 1")],
        Some((&stranger_key, &stranger, &["crawler-max-price"], "e9")),
    );
    assert_eq!(h(&r, "crawler-error"), Some("StrongAuthRequired"), "{r:?}");
    assert_eq!(app.lines().len(), before, "{:?}", app.lines());
    // An error page of the application is not charged: the charge is
    // taken back and logged so.
    let r = ask(
        at,
        "/news/missing",
        &[("crawler-max-price", "USD 1")],
        Some((&key, &agent, &["crawler-max-price"], "m1")),
    );
    assert_eq!((r.status, h(&r, "crawler-charged")), (404, None), "{r:?}");
    // The decision log: three charges stand (the warm-up, the documented
    // crawler's, the one replayed), one taken back.
    std::thread::sleep(Duration::from_millis(300));
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let count = |o: &str| lines.iter().filter(|l| l["pay"]["outcome"] == o).count();
    assert_eq!((count("charged"), count("uncharged")), (4, 1), "{lines:?}");
    assert!(
        lines
            .iter()
            .any(|l| l["pay"]["code"] == "ConflictingPriceHeaders")
    );
    // The ledger of that log: one agent, three charges, USD 0.03.
    let mut ledger = botscope_gate::ledger::Ledger::new(&[botscope_gate::ledger::Key::Agent]);
    for l in std::fs::read_to_string(&log).unwrap().lines() {
        ledger.add(l);
    }
    let rows = ledger.rows();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].agent.as_deref(), Some(agent.as_str()));
    assert_eq!(rows[0].charges, 3);
    assert_eq!(rows[0].amounts[0].to_string(), "USD 0.03");
    // The metrics say the same.
    let mut s = std::net::TcpStream::connect(at).unwrap();
    s.write_all(
        b"GET /.botscope/metrics HTTP/1.1\r\nHost: shop.example\r\nConnection: close\r\n\r\n",
    )
    .unwrap();
    let m = botscope_testkit::http::read_response(s, "metrics").body;
    assert!(
        m.contains("botscope_gate_pay_total{outcome=\"charged\"} 3\n"),
        "{m}"
    );
    assert!(
        m.contains("botscope_gate_pay_total{outcome=\"uncharged\"} 1\n"),
        "{m}"
    );
    assert!(
        m.contains("botscope_gate_charged_total{currency=\"USD\"} 0.030000\n"),
        "{m}"
    );
}

/// Pay per crawl behind nginx and Caddy, configured as docs/gate.md
/// configures them: the quote's 402 with its price and page, the paid
/// page with `crawler-charged` (on a successful answer only), the
/// documented errors with their status and code, and the site's
/// `Content-Usage` on its pages.
#[test]
fn pay_per_crawl_behind_nginx_and_caddy_as_the_guide_configures_them() {
    let dir = tempfile::tempdir().unwrap();
    let ca = TestCa::new();
    let key = SigningKey::generate().unwrap();
    let (_dir_server, agent) = directory(&ca, &key);
    let rd = dir.path().join("robots");
    write(&rd, "default.txt", "User-agent: *\nAllow: /\n");
    let policy = dir.path().join("policy.yaml");
    std::fs::write(&policy, POLICY).unwrap();
    let g: Running = serve(Config {
        policy: Some(policy),
        signatures: Some(super::signatures_trusting(
            &ca,
            &agent,
            "PayingBot",
            "ai-training",
        )),
        terms: botscope_gate::SiteTerms {
            content_usage: Some("train-ai=n".into()),
            ..Default::default()
        },
        ..Config::new(rd.clone())
    });
    let (nginx, caddy) = super::guide_fronts(
        dir.path(),
        &[
            ("news/a.html", "news a\n"),
            ("news/b.html", "news b\n"),
            ("about.html", "about\n"),
        ],
        g.addr,
        &rd,
    );
    for (front, at, host) in [
        ("nginx", nginx.0.addr, "shop.example".to_owned()),
        ("caddy", caddy.addr, caddy.addr.to_string()),
    ] {
        let via = |p: &str, f: &[(&str, &str)], s: Signer<'_>| {
            send(at, [127, 0, 0, 1], &head_at(&host, p, f, s))
        };
        // The quote: 402, the price, the gate's page; nothing charged.
        let r = via("/news/a.html", &[], None);
        assert_eq!(
            (r.status, h(&r, "crawler-price"), h(&r, "crawler-charged")),
            (402, Some("USD 0.01"), None),
            "{front}: {r:?}"
        );
        assert!(
            r.body
                .starts_with("Payment required.\n\nThis page is priced"),
            "{front}: {}",
            r.body
        );
        assert_eq!(h(&r, "crawler-error"), None, "{front}: {r:?}");
        // What no rule prices is served, with the site's preferences.
        let r = via("/about.html", &[], None);
        assert_eq!((r.status, r.body.as_str()), (200, "about\n"), "{front}");
        assert_eq!(h(&r, "content-usage"), Some("train-ai=n"), "{front}: {r:?}");
        assert_eq!(h(&r, "crawler-charged"), None, "{front}: {r:?}");
        // Once the agent's keys are in, the documented crawler pays.
        let started = Instant::now();
        let mut n = 0;
        let (r, charged) = loop {
            n += 1;
            let (r, charged) = documented_crawler_via(
                &via,
                "/news/b.html",
                &key,
                &agent,
                "USD 0.05",
                &format!("{front}-doc{n}"),
            );
            if r.status != 400 || started.elapsed() > Duration::from_secs(10) {
                break (r, charged);
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        assert_eq!(
            (r.status, r.body.as_str(), charged.as_deref()),
            (200, "news b\n", Some("USD 0.01")),
            "{front}: {r:?}"
        );
        // The documented errors, each with its status and code.
        let r = via("/news/a.html", &[("crawler-max-price", "USD 1")], None);
        assert_eq!(
            (r.status, h(&r, "crawler-error")),
            (400, Some("StrongAuthRequired")),
            "{front}: {r:?}"
        );
        assert!(
            r.body.starts_with("Payment not accepted."),
            "{front}: {r:?}"
        );
        let nonce = format!("{front}-low");
        let r = via(
            "/news/a.html",
            &[("crawler-max-price", "USD 0.005")],
            Some((&key, &agent, &["crawler-max-price"], &nonce)),
        );
        assert_eq!(
            (r.status, h(&r, "crawler-error"), h(&r, "crawler-price")),
            (402, Some("InvalidCrawlerMaxPrice"), Some("USD 0.01")),
            "{front}: {r:?}"
        );
        assert!(
            r.body.starts_with("Payment not accepted."),
            "{front}: {r:?}"
        );
        // A client's own crawler-charged never reads as paid.
        let r = via("/about.html", &[("crawler-charged", "USD 9.99")], None);
        assert_eq!(h(&r, "crawler-charged"), None, "{front}: {r:?}");
        // A paid request the site answers with an error is not shown as
        // charged.
        let nonce = format!("{front}-missing");
        let r = via(
            "/news/missing.html",
            &[("crawler-max-price", "USD 1")],
            Some((&key, &agent, &["crawler-max-price"], &nonce)),
        );
        assert_eq!(
            (r.status, h(&r, "crawler-charged")),
            (404, None),
            "{front}: {r:?}"
        );
    }
}
