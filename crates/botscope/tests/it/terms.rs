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
