//! `botscope terms` against a real HTTP server on loopback: a robots.txt
//! with a `License` line, Content-Usage and Content-Signal; the RSL licence
//! it names; a page with its own Content-Usage header. Each answer, its
//! reasons with their lines, the price, the conflicts and the exit status.

#![allow(clippy::unwrap_used)]

use botscope_testkit::ipdb::{Canned, FileServer};
use serde_json::Value;

use crate::{run, stderr, stdout};

const ROBOTS: &str = "License: /license.xml\n\
User-agent: *\n\
Content-Usage: / train-ai=n\n\
Content-Signal: search=yes, ai-train=no\n\
Allow: /\n\
Disallow: /private/\n\
\n\
User-agent: GPTBot\n\
Disallow: /\n";

const LICENCE: &str = r#"<rsl xmlns="https://rslstandard.org/rsl">
  <content url="/news/" server="https://olp.example.com">
    <license>
      <permits type="usage">ai-train</permits>
      <payment type="training"><amount currency="USD">0.05</amount></payment>
    </license>
  </content>
  <content url="/blog/">
    <license><permits type="usage">all</permits><payment type="free"/></license>
  </content>
  <content url="/closed/">
    <license><prohibits type="usage">ai-all</prohibits></license>
  </content>
</rsl>"#;

fn site() -> FileServer {
    let s = FileServer::start(Default::default());
    s.set(
        "/robots.txt",
        Canned::ok(&[("Content-Type", "text/plain")], ROBOTS.as_bytes()),
    );
    s.set(
        "/license.xml",
        Canned::ok(
            &[("Content-Type", "application/rsl+xml")],
            LICENCE.as_bytes(),
        ),
    );
    for page in ["/news/a", "/blog/x", "/closed/x", "/other"] {
        s.set(
            page,
            Canned::ok(&[("Content-Type", "text/html")], b"<p>page</p>"),
        );
    }
    s.set(
        "/news/b",
        Canned::ok(
            &[("Content-Type", "text/html"), ("Content-Usage", "search=n")],
            b"<p>page</p>",
        ),
    );
    s
}

fn terms(site: &FileServer, extra: &[&str]) -> (Option<i32>, Vec<Value>) {
    let mut args = vec![
        "terms",
        "--allow-private",
        "--user-agent",
        "TestBot/1.0 (+https://example.org/testbot)",
        "--min-gap",
        "10ms",
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    let urls: Vec<String> = args
        .iter()
        .filter(|a| a.starts_with('/'))
        .map(|p| format!("{}{p}", site.url()))
        .collect();
    let mut args: Vec<&str> = args.into_iter().filter(|a| !a.starts_with('/')).collect();
    args.extend(urls.iter().map(String::as_str));
    let o = run(&args);
    let lines = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l} {}", stderr(&o))))
        .collect();
    (o.status.code(), lines)
}

#[test]
fn terms_read_from_robots_txt_the_licence_and_the_page() {
    let s = site();
    // Training on /news/: the licence permits it at a price, from its
    // server, over the preferences that refuse it.
    let (code, v) = terms(&s, &["--use", "train-ai", "/news/a"]);
    assert_eq!(code, Some(3), "{v:?}");
    let x = &v[0]["verdict"];
    assert_eq!(x["answer"], "licence");
    assert_eq!(x["cost"]["amount"], "0.05");
    assert_eq!(x["cost"]["currency"], "USD");
    assert_eq!(x["licence"]["server"], "https://olp.example.com");
    assert_eq!(x["licence"]["content_line"], 2);
    let sources: Vec<(&str, u64)> = x["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["source"].as_str().unwrap(),
                r["line"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(
        sources,
        [
            ("robots", 5),
            ("content-usage", 3),
            ("content-signal", 4),
            ("licence", 3)
        ]
    );
    assert!(
        x["conflicts"][0].as_str().unwrap().contains("section 5.2"),
        "{x}"
    );
    assert_eq!(
        v[0]["licences"][0]["url"],
        format!("{}/license.xml", s.url())
    );
    // Free on /blog/; refused on /closed/; closed to GPTBot; /private/
    // closed by robots.txt.
    let (code, v) = terms(
        &s,
        &["--use", "ai-train", "/blog/x", "/closed/x", "/private/x"],
    );
    assert_eq!(code, Some(1));
    let answers: Vec<&str> = v
        .iter()
        .map(|l| l["verdict"]["answer"].as_str().unwrap())
        .collect();
    assert_eq!(answers, ["allowed", "refused", "not-crawlable"]);
    let (code, v) = terms(&s, &["--use", "train-ai", "--agent", "GPTBot", "/blog/x"]);
    assert_eq!(code, Some(1));
    assert_eq!(v[0]["verdict"]["answer"], "not-crawlable");
    assert_eq!(v[0]["verdict"]["reasons"][0]["line"], 9);
    // Search: no licence content lists it for /news/ (refused), whatever
    // the page says; elsewhere Content-Signal allows it, and the page's
    // own header refuses it.
    let (code, v) = terms(&s, &["--use", "search", "/other", "/news/b"]);
    assert_eq!(code, Some(1));
    assert_eq!(v[0]["verdict"]["answer"], "allowed");
    assert_eq!(v[1]["verdict"]["answer"], "refused");
    let header = v[1]["verdict"]["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["source"] == "content-usage-header" && r["says"] == "refuses");
    assert!(header, "{}", v[1]);
    // The text form: the verdict, then each reason with its line.
    let o = run(&[
        "terms",
        "--allow-private",
        "--user-agent",
        "TestBot/1.0 (+https://example.org/testbot)",
        "--use",
        "train-ai",
        "--no-page",
        &format!("{}/news/a", s.url()),
    ]);
    let out = stdout(&o);
    assert!(out.starts_with("licence\t"), "{out}");
    assert!(out.contains("\tUSD 0.05\n"), "{out}");
    assert!(
        out.contains("  Content-Usage line 3: train-ai=n\n"),
        "{out}"
    );
    assert!(out.contains("  conflict: "), "{out}");
}

/// A licence that cannot be read never passes as free: the use is
/// unknown, and says why.
#[test]
fn an_unreadable_licence_is_no_free_pass() {
    let s = FileServer::start(Default::default());
    s.set(
        "/robots.txt",
        Canned::ok(&[], b"License: /gone.xml\nLicense: /broken.xml\nUser-agent: *\nContent-Usage: / train-ai=y\n"),
    );
    s.set(
        "/broken.xml",
        Canned::ok(
            &[],
            b"<rsl xmlns=\"https://rslstandard.org/rsl\"><content url=\"/\">",
        ),
    );
    s.set("/p", Canned::ok(&[], b"page"));
    let (code, v) = terms(&s, &["--use", "train-ai", "--no-page", "/p"]);
    assert_eq!(code, Some(4), "{v:?}");
    let x = &v[0];
    assert_eq!(x["verdict"]["answer"], "unknown");
    assert_eq!(x["licences"][0]["error"], "answered 404");
    let diag = &x["licences"][1]["document"]["diagnostics"][0];
    assert_eq!(diag["code"], "xml");
    assert_eq!(diag["line"], 1);
}

/// `botscope ledger` over a decision log: charges less those taken back,
/// per agent and day, in CSV (a path that looks like a formula made safe)
/// and JSON; lines that cannot be read counted on standard error.
#[test]
fn the_ledger_sums_a_decision_log() {
    let line = |t: &str, agent: &str, path: &str, outcome: &str, price: &str| {
        format!(
            "{{\"time\":\"{t}\",\"path\":\"{path}\",\"signature\":{{\"agent\":\"{agent}\"}},\"pay\":{{\"outcome\":\"{outcome}\",\"price\":\"{price}\"}}}}\n"
        )
    };
    let mut log = String::new();
    log += &line(
        "2026-12-06T08:00:00.000Z",
        "https://a.example",
        "/news/1",
        "charged",
        "USD 0.01",
    );
    log += &line(
        "2026-12-06T08:01:00.000Z",
        "https://a.example",
        "/news/2",
        "charged",
        "USD 0.01",
    );
    log += &line(
        "2026-12-06T08:01:01.000Z",
        "https://a.example",
        "/news/2",
        "uncharged",
        "USD 0.01",
    );
    log += &line(
        "2026-12-07T08:00:00.000Z",
        "https://b.example",
        "=HYPERLINK(1)",
        "charged",
        "EUR 1",
    );
    log += &line(
        "2026-12-07T08:00:01.000Z",
        "https://b.example",
        "/x",
        "quote",
        "EUR 1",
    );
    log += "{\"pay\":{\"outcome\":\"charged\",\"price\":\"free\"}}\n";
    log += &"y".repeat(200_000);
    log += "\nnot json\n";
    let file = crate::tmp("ledger.jsonl", log.as_bytes());
    let o = run(&["ledger", crate::arg(&file), "--format", "csv"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "agent,day,charges,currency,amount\nhttps://a.example,2026-12-06,1,USD,0.01\nhttps://b.example,2026-12-07,1,EUR,1.00\n"
    );
    let err = stderr(&o);
    assert!(
        err.contains("8 line(s) read, 5 payment(s), 3 not read"),
        "{err}"
    );
    assert!(
        err.contains("1 too-long") && err.contains("1 not-json") && err.contains("1 bad-payment"),
        "{err}"
    );
    let o = run(&[
        "ledger",
        crate::arg(&file),
        "--by",
        "path",
        "--format",
        "csv",
    ]);
    assert!(
        stdout(&o).contains("'=HYPERLINK(1),1,EUR,1.00\n"),
        "{}",
        stdout(&o)
    );
    let o = run(&[
        "ledger",
        crate::arg(&file),
        "--by",
        "agent",
        "--format",
        "json",
    ]);
    let rows: Vec<Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["agent"], "https://a.example");
    assert_eq!(rows[0]["charges"], 1);
    assert_eq!(rows[0]["amounts"][0]["amount"], "0.01");
    let o = run(&["ledger", crate::arg(&file), "--by", "agent,week"]);
    assert_eq!(o.status.code(), Some(2));
}

/// A crawler that pays: `botscope fetch --max-price --budget`, signing
/// with a key `keys generate` made, through `botscope gate --upstream`
/// whose policy charges `/news/`: each page paid its price (not the
/// maximum), no page asked for past the budget, the decision log's ledger
/// the same sum; `--use train-ai` skips what the site's terms refuse.
#[test]
fn a_crawler_pays_within_its_budget_through_the_gate() {
    use std::net::SocketAddr;
    let d = crate::scratch("pay-per-crawl");
    let o = run(&["keys", "generate", "--out", crate::arg(&d.join("keys"))]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let ca = botscope_testkit::ipdb::TestCa::new();
    let keys = FileServer::start_tls_canned(Default::default(), &ca);
    keys.set(
        "/.well-known/http-message-signatures-directory",
        Canned::ok(
            &[(
                "Content-Type",
                "application/http-message-signatures-directory+json",
            )],
            &std::fs::read(d.join("keys/http-message-signatures-directory")).unwrap(),
        ),
    );
    let agent = keys.url();
    std::fs::write(d.join("ca.pem"), &ca.pem).unwrap();
    std::fs::write(
        d.join("registry.yaml"),
        format!("bots:\n- name: PayingBot\n  category: ai-training\n  ua_tokens: [PayingBot]\n  signature_agents: ['{agent}']\n"),
    )
    .unwrap();
    std::fs::create_dir_all(d.join("robots")).unwrap();
    std::fs::write(
        d.join("robots/default.txt"),
        "User-agent: *\nAllow: /\nContent-Usage: /no-training/ train-ai=n\n",
    )
    .unwrap();
    std::fs::write(
        d.join("policy.yaml"),
        "version: 1\ndefault: allow\nrules:\n  - name: news-for-a-fee\n    action: charge\n    price: USD 0.01\n    path: [/news/]\n",
    )
    .unwrap();
    let app = FileServer::start(Default::default());
    for page in [
        "/news/warm",
        "/news/1",
        "/news/2",
        "/news/3",
        "/news/4",
        "/news/5",
        "/news/6",
        "/other",
        "/no-training/x",
    ] {
        app.set(
            page,
            Canned::ok(&[("Content-Type", "text/html")], b"<p>page</p>"),
        );
    }
    let port = botscope_testkit::free_port();
    let gate_addr = SocketAddr::from(([127, 0, 0, 1], port));
    let log = d.join("decisions.jsonl");
    let mut gate = std::process::Command::new(env!("CARGO_BIN_EXE_botscope"))
        .args([
            "gate",
            "--upstream",
            &s_url(&app),
            "--listen",
            &gate_addr.to_string(),
        ])
        .arg("--robots-dir")
        .arg(d.join("robots"))
        .arg("--policy")
        .arg(d.join("policy.yaml"))
        .arg("--registry")
        .arg(d.join("registry.yaml"))
        .arg("--ca-file")
        .arg(d.join("ca.pem"))
        .arg("--decision-log")
        .arg(&log)
        .args(["--allow-private", "--offline"])
        .env("HOME", &d)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    listening(gate_addr);
    let key_file = d.join("keys/signing-key.jwk");
    let fetch = |extra: &[&str], urls: &[&str]| {
        let mut args = vec![
            "fetch",
            "--allow-private",
            "--min-gap",
            "10ms",
            "--format",
            "json",
            "--user-agent",
            "PayingBot/1.0 (+https://crawler.example/bot)",
            "--signing-key",
            crate::arg(&key_file),
            "--signature-agent",
            &agent,
        ];
        args.extend_from_slice(extra);
        let urls: Vec<String> = urls
            .iter()
            .map(|u| format!("http://{gate_addr}{u}"))
            .collect();
        args.extend(urls.iter().map(String::as_str));
        let o = run(&args);
        let lines: Vec<Value> = stdout(&o)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        (o, lines)
    };
    // The first signed request finds the agent's keys unknown: refused,
    // never charged; then they are in.
    let (_, lines) = fetch(&["--max-price", "USD 0.02"], &["/news/warm"]);
    assert!(lines[0]["charged"].is_null(), "{:?}", lines[0]);
    let t = std::time::Instant::now();
    while keys.hits() == 0 {
        assert!(t.elapsed() < std::time::Duration::from_secs(10));
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    // At most USD 0.02 a page, USD 0.05 in all: four pages at USD 0.01,
    // the fifth's maximum would pass the budget.
    let (o, lines) = fetch(
        &["--max-price", "USD 0.02", "--budget", "USD 0.05"],
        &["/news/1", "/news/2", "/news/3", "/news/4", "/news/5"],
    );
    let charged: Vec<&str> = lines
        .iter()
        .map(|l| l["charged"].as_str().unwrap_or("-"))
        .collect();
    assert_eq!(
        charged,
        ["USD 0.01", "USD 0.01", "USD 0.01", "USD 0.01", "-"],
        "{lines:?}"
    );
    assert_eq!(lines[0]["status"], 200);
    assert_eq!(lines[4]["decision"], "unavailable");
    assert!(
        lines[4]["reason"].as_str().unwrap().contains("budget"),
        "{}",
        lines[4]
    );
    assert!(
        stderr(&o).contains("fetch: charged USD 0.04 in all"),
        "{}",
        stderr(&o)
    );
    // Offering too little: the 402 is reported, not retried.
    let (_, lines) = fetch(&["--max-price", "USD 0.005"], &["/news/6"]);
    assert_eq!(lines[0]["status"], 402);
    let note = lines[0]["pay_note"].as_str().unwrap();
    assert!(
        note.contains("crawler-price USD 0.01") && note.contains("InvalidCrawlerMaxPrice"),
        "{note}"
    );
    // --use train-ai: a page the terms refuse is not fetched.
    let (_, lines) = fetch(&["--use", "train-ai"], &["/no-training/x", "/other"]);
    assert_eq!(lines[0]["decision"], "unavailable");
    assert!(
        lines[0]["reason"]
            .as_str()
            .unwrap()
            .contains("refuse train-ai"),
        "{}",
        lines[0]
    );
    assert_eq!(lines[1]["status"], 200);
    // The gate's ledger: four charges, USD 0.04.
    std::thread::sleep(std::time::Duration::from_millis(300));
    let o = run(&[
        "ledger",
        crate::arg(&log),
        "--by",
        "agent",
        "--format",
        "csv",
    ]);
    assert_eq!(
        stdout(&o),
        format!("agent,charges,currency,amount\n{agent},4,USD,0.04\n")
    );
    let _ = gate.kill();
    let _ = gate.wait();
}

fn s_url(s: &FileServer) -> String {
    s.url()
}

/// The site states its terms through the gate (`--rsl`, `--content-usage`)
/// and a crawler learns them (`botscope terms` against the gate): the
/// licence served as `application/rsl+xml`, the header on every page that
/// states none. A licence with an error, or preferences that do not read,
/// start nothing.
#[test]
fn the_gate_states_the_sites_terms_and_terms_reads_them() {
    use std::net::SocketAddr;
    let d = crate::scratch("gate-states-terms");
    std::fs::create_dir_all(d.join("robots")).unwrap();
    let port = botscope_testkit::free_port();
    let gate_addr = SocketAddr::from(([127, 0, 0, 1], port));
    std::fs::write(
        d.join("robots/default.txt"),
        format!("License: http://{gate_addr}/license.xml\nUser-agent: *\nAllow: /\n"),
    )
    .unwrap();
    std::fs::write(d.join("license.xml"), LICENCE).unwrap();
    std::fs::write(
        d.join("policy.yaml"),
        "version: 1\ndefault: allow\nrules: []\n",
    )
    .unwrap();
    let app = FileServer::start(Default::default());
    app.set("/news/a", Canned::ok(&[], b"news"));
    app.set(
        "/own",
        Canned::ok(&[("Content-Usage", "train-ai=y")], b"own"),
    );
    let gate = |extra: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_botscope"))
            .args([
                "gate",
                "--upstream",
                &app.url(),
                "--listen",
                &gate_addr.to_string(),
            ])
            .arg("--robots-dir")
            .arg(d.join("robots"))
            .arg("--policy")
            .arg(d.join("policy.yaml"))
            .args(["--offline", "--no-signatures"])
            .args(extra)
            .env("HOME", &d)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    // Refused before anything starts.
    std::fs::write(
        d.join("broken.xml"),
        "<rsl xmlns=\"https://rslstandard.org/rsl\">\n<content url=\"/\">\n</rsl>",
    )
    .unwrap();
    let o = gate(&["--rsl", crate::arg(&d.join("broken.xml"))])
        .wait_with_output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("broken.xml:3:"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = gate(&["--content-usage", "Train-AI=n"])
        .wait_with_output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    // Stated.
    let mut g = gate(&[
        "--rsl",
        crate::arg(&d.join("license.xml")),
        "--content-usage",
        "train-ai=n, search=y",
    ]);
    listening(gate_addr);
    let get = |path: &str| {
        let mut s = std::net::TcpStream::connect(gate_addr).unwrap();
        std::io::Write::write_all(
            &mut s,
            format!("GET {path} HTTP/1.1\r\nHost: site\r\nConnection: close\r\n\r\n").as_bytes(),
        )
        .unwrap();
        botscope_testkit::http::read_response(s, path)
    };
    let r = get("/license.xml");
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("application/rsl+xml"));
    assert_eq!(r.body, LICENCE);
    assert_eq!(
        get("/news/a").header("content-usage"),
        Some("search=y, train-ai=n")
    );
    assert_eq!(
        get("/own").header("content-usage"),
        Some("train-ai=y"),
        "the page's own stays"
    );
    // A crawler learns them.
    let o = run(&[
        "terms",
        "--allow-private",
        "--min-gap",
        "10ms",
        "--user-agent",
        "TestBot/1.0 (+https://example.org/testbot)",
        "--use",
        "train-ai",
        "--format",
        "json",
        &format!("http://{gate_addr}/news/a"),
        &format!("http://{gate_addr}/other"),
    ]);
    let v: Vec<Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(v[0]["verdict"]["answer"], "licence", "{}", v[0]);
    assert_eq!(v[0]["verdict"]["cost"]["amount"], "0.05");
    // Elsewhere no licence content: the page's header refuses training.
    assert_eq!(v[1]["verdict"]["answer"], "refused", "{}", v[1]);
    assert!(
        v[1]["verdict"]["reasons"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["source"] == "content-usage-header"),
        "{}",
        v[1]
    );
    let _ = g.kill();
    let _ = g.wait();
}

/// Waits (up to 20 s) until something listens at `addr`.
fn listening(addr: std::net::SocketAddr) {
    let t = std::time::Instant::now();
    while std::net::TcpStream::connect(addr).is_err() {
        assert!(
            t.elapsed() < std::time::Duration::from_secs(20),
            "the gate listens"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// RSL licence tokens end to end, through the binaries: the gate's
/// `license` rule asks for a token on `/news/`; `fetch --use train-ai
/// --license-credentials` reads the site's licence, acquires a token at
/// the licence server it names (OLP, with the `<license>` it agrees to)
/// and presents it; the gate introspects it and serves the page. Without
/// credentials the crawler says where a token is had; without `--use` it
/// reports the site's challenge. Credentials that do not read start
/// nothing.
#[test]
fn a_crawler_acquires_a_licence_token_and_the_gate_checks_it() {
    use botscope_testkit::olp::LicenceServer;
    use std::net::SocketAddr;
    let d = crate::scratch("licence-tokens");
    let olp = LicenceServer::start("gate", "gate-secret");
    olp.add_client("crawler", "crawler-secret");
    std::fs::write(d.join("gate.credentials"), "gate:gate-secret\n").unwrap();
    std::fs::write(d.join("crawler.credentials"), "crawler:crawler-secret\n").unwrap();
    let port = botscope_testkit::free_port();
    let gate_addr = SocketAddr::from(([127, 0, 0, 1], port));
    std::fs::create_dir_all(d.join("robots")).unwrap();
    std::fs::write(
        d.join("robots/default.txt"),
        format!("User-agent: *\nAllow: /\nLicense: http://{gate_addr}/license.xml\n"),
    )
    .unwrap();
    std::fs::write(
        d.join("license.xml"),
        format!(
            r#"<rsl xmlns="https://rslstandard.org/rsl">
  <content url="/news/" server="{}">
    <license>
      <permits type="usage">ai-train search</permits>
    </license>
  </content>
</rsl>
"#,
            olp.url()
        ),
    )
    .unwrap();
    std::fs::write(
        d.join("policy.yaml"),
        "version: 1\ndefault: allow\nrules:\n  - name: licensed-news\n    action: license\n    path: [/news/]\n",
    )
    .unwrap();
    let app = FileServer::start(Default::default());
    app.set(
        "/news/1",
        Canned::ok(&[("Content-Type", "text/html")], b"<p>news</p>"),
    );
    let gate_args = |credentials: &str| {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_botscope"));
        c.args([
            "gate",
            "--upstream",
            &s_url(&app),
            "--listen",
            &gate_addr.to_string(),
        ])
        .arg("--robots-dir")
        .arg(d.join("robots"))
        .arg("--policy")
        .arg(d.join("policy.yaml"))
        .arg("--rsl")
        .arg(d.join("license.xml"))
        .arg("--license-credentials")
        .arg(d.join(credentials))
        .args(["--allow-private", "--offline"])
        .env("HOME", &d);
        c
    };
    // Credentials that do not read: nothing starts.
    std::fs::write(d.join("bad.credentials"), "no colon here\n").unwrap();
    let o = gate_args("bad.credentials").output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("CLIENT_ID:CLIENT_SECRET"),
        "{}",
        stderr(&o)
    );
    let mut gate = gate_args("gate.credentials")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    listening(gate_addr);
    let url = format!("http://{gate_addr}/news/1");
    let fetch = |extra: &[&str]| {
        let mut args = vec![
            "fetch",
            "--allow-private",
            "--min-gap",
            "10ms",
            "--format",
            "json",
            "--user-agent",
            "LicensedBot/1.0 (+https://crawler.example/bot)",
        ];
        args.extend_from_slice(extra);
        args.push(&url);
        let o = run(&args);
        let line: Value =
            serde_json::from_str(stdout(&o).lines().next().unwrap_or("null")).unwrap();
        (o, line)
    };
    // No purpose: the site's challenge is reported, not retried.
    let (_, l) = fetch(&[]);
    assert_eq!(l["status"], 401, "{l}");
    assert!(
        l["pay_note"]
            .as_str()
            .is_some_and(|n| n.contains("RSL licence token") && n.contains("invalid_request")),
        "{l}"
    );
    // A purpose, no credentials: where a token is had.
    let (_, l) = fetch(&["--use", "train-ai"]);
    assert_eq!(l["decision"], "unavailable", "{l}");
    assert!(
        l["reason"]
            .as_str()
            .is_some_and(|r| r.contains(&olp.url()) && r.contains("--license-credentials")),
        "{l}"
    );
    // With credentials: a token acquired with the licence agreed to,
    // presented, checked, the page served.
    let creds = crate::arg(&d.join("crawler.credentials")).to_owned();
    let (o, l) = fetch(&["--use", "train-ai", "--license-credentials", &creds]);
    assert_eq!(o.status.code(), Some(0), "{l} {}", stderr(&o));
    assert_eq!(
        (l["status"].as_u64(), l["decision"].as_str()),
        (Some(200), Some("allowed")),
        "{l}"
    );
    let asked = olp.licenses_asked();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(
        asked[0].starts_with("<license>") && asked[0].contains("ai-train search"),
        "{asked:?}"
    );
    assert_eq!(olp.introspections(), 1);
    // Credentials the licence server refuses: no token, the page not asked.
    std::fs::write(d.join("wrong.credentials"), "crawler:wrong\n").unwrap();
    let wrong = crate::arg(&d.join("wrong.credentials")).to_owned();
    let (_, l) = fetch(&["--use", "train-ai", "--license-credentials", &wrong]);
    assert_eq!(l["decision"], "unavailable", "{l}");
    assert!(
        l["reason"]
            .as_str()
            .is_some_and(|r| r.contains("no licence token") && r.contains("invalid_client")),
        "{l}"
    );
    let _ = gate.kill();
    let _ = gate.wait();
}
