//! The web application over loopback: a real server (the demo, built as
//! `botscope serve` builds it) and real HTTP requests; `browser` drives
//! headless Chromium through WebDriver for what only a browser shows
//! (layout, the Content-Security-Policy holding, no console error).

#![allow(clippy::unwrap_used, clippy::missing_panics_doc)]

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::sync::OnceLock;
use std::time::Duration;

use botscope_testkit::http::{Res, read_response};
use botscope_web::{Config, Limits, Server};

mod browser;
mod hostile;

/// A server on its own runtime thread, for the life of the test process.
type Running = botscope_testkit::Spawned;

fn start(config: Config) -> Running {
    botscope_testkit::spawn_server(Some(2), move |ready, stop| async move {
        let server = Server::bind(config, "127.0.0.1:0".parse().unwrap())
            .await
            .unwrap();
        ready.send(server.local_addr());
        server.run(stop).await.unwrap();
    })
}

/// Where an installed test city database places addresses of the
/// example logs (places of its own, so that a page shows which data
/// answered).
const PLACES: &[(&str, &str, &str, f64, f64)] = &[
    ("66.249.64.0/19", "US", "Test Place", 37.42, -122.08),
    ("157.55.0.0/16", "US", "Redmond", 47.67, -122.12),
];

/// The demo as `botscope serve` builds it with no IP-owner data installed:
/// its addresses placed by the demo's own table (`examples/geo/`).
fn demo_config() -> Config {
    Config {
        // Screenshots for the docs show the demo `botscope serve` builds;
        // the tests, a smaller one.
        demo_sites: if std::env::var_os("BOTSCOPE_SCREENSHOTS").is_some() {
            Config::demo().demo_sites
        } else {
            300
        },
        threads: 2,
        limits: Limits {
            api_per_second: 0,
            upload: 4 * 1024 * 1024,
            ..Limits::default()
        },
        ..Config::demo()
    }
}

/// The shared demo server.
fn demo() -> SocketAddr {
    static S: OnceLock<Running> = OnceLock::new();
    S.get_or_init(|| start(demo_config())).addr
}

/// A server for the tests that upload logs, so that the shared one's
/// crawler pages stay as the map tests read them.
/// It has a city database installed (an operator's, which the demo's
/// own table does not override).
fn uploads() -> SocketAddr {
    static S: OnceLock<Running> = OnceLock::new();
    S.get_or_init(|| {
        let geo =
            botscope_ipdb::GeoDb::from_bytes(botscope_testkit::ipdb::city_mmdb(false, PLACES))
                .unwrap();
        start(Config {
            demo_sites: 50,
            owners: botscope_ipdb::IpOwners::new(None, vec![geo]),
            ..demo_config()
        })
    })
    .addr
}

fn request(addr: SocketAddr, method: &str, path: &str, ctype: &str, body: &[u8]) -> Res {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
    let mut req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    if !ctype.is_empty() {
        req.push_str(&format!("Content-Type: {ctype}\r\n"));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes()).unwrap();
    // The server may answer (413) before it reads the whole body.
    let _ = s.write_all(body);
    read_response(s, path)
}

fn get(addr: SocketAddr, path: &str) -> Res {
    request(addr, "GET", path, "", b"")
}

fn post_json(addr: SocketAddr, path: &str, v: &serde_json::Value) -> Res {
    request(
        addr,
        "POST",
        path,
        "application/json",
        v.to_string().as_bytes(),
    )
}

/// A multipart form: `(name, file name, bytes)`.
fn multipart(fields: &[(&str, Option<&str>, &[u8])]) -> (String, Vec<u8>) {
    let boundary = "----botscopetestboundary7MA4YWxkTrZu0gW";
    let mut body = Vec::new();
    for (name, file, data) in fields {
        body.extend_from_slice(format!("--{boundary}\r\n").as_bytes());
        match file {
            Some(f) => body.extend_from_slice(
                format!("Content-Disposition: form-data; name=\"{name}\"; filename=\"{f}\"\r\nContent-Type: application/octet-stream\r\n\r\n").as_bytes(),
            ),
            None => body.extend_from_slice(
                format!("Content-Disposition: form-data; name=\"{name}\"\r\n\r\n").as_bytes(),
            ),
        }
        body.extend_from_slice(data);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

fn pct(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

const PAGES: &[&str] = &[
    "/",
    "/search",
    "/search?q=favor%3Agooglebot",
    "/site/www.ebay.com",
    "/site/www.ebay.com/bias",
    "/robots",
    "/robots?sort=favorability&semantics=draft1996",
    "/robots?agent=GPTBot",
    "/crawler/Googlebot",
    "/crawlers",
    "/crawlers?category=ai-search",
    "/logs",
    "/logs/1",
    "/submit",
    "/check",
    "/api",
];

#[test]
fn every_page_renders_with_a_strict_policy() {
    let addr = demo();
    for p in PAGES {
        let r = get(addr, p);
        assert_eq!(r.status, 200, "{p}: {}", r.body);
        assert!(
            r.header("content-type").unwrap().starts_with("text/html"),
            "{p}"
        );
        let csp = r.header("content-security-policy").unwrap();
        assert!(
            !csp.contains("unsafe-inline") && !csp.contains("unsafe-eval"),
            "{p}: {csp}"
        );
        assert!(csp.contains("default-src 'none'"), "{p}: {csp}");
        assert_eq!(r.header("x-content-type-options"), Some("nosniff"));
        // The pages carry no inline style or script (the log report's are
        // allowed by their hashes).
        if !p.starts_with("/logs/") {
            assert!(!r.body.contains("<script"), "{p}");
            assert!(!r.body.contains("style=\""), "{p}");
            assert!(!r.body.contains("<style"), "{p}");
            // Navigation on every page.
            for nav in ["/search", "/robots", "/logs", "/submit", "/check", "/api"] {
                assert!(
                    r.body.contains(&format!("href=\"{nav}\"")),
                    "{p} lacks {nav}"
                );
            }
        }
    }
    assert_eq!(get(addr, "/static/style.css").status, 200);
    let h = get(addr, "/healthz");
    assert_eq!(h.status, 200);
    assert!(h.json()["documents"].as_u64().unwrap() > 300);
    let nf = get(addr, "/no/such/page");
    assert_eq!(nf.status, 404);
    assert!(nf.body.contains("Not found"));
    // A path from a request never reaches the file system.
    for p in [
        "/site/..%2F..%2Fetc%2Fpasswd",
        "/static/..%2Fsrc%2Flib.rs",
        "/site/%2Fetc%2Fpasswd/robots.txt",
    ] {
        let r = get(addr, p);
        assert_eq!(r.status, 404, "{p}");
        assert!(!r.body.contains("root:x:0"), "{p}");
    }
}

#[test]
fn search_answers_as_the_command_does() {
    let addr = demo();
    let r = get(addr, "/api/search?q=site%3Aebay.com&limit=5");
    assert_eq!(r.status, 200, "{}", r.body);
    let v = r.json();
    for k in ["query", "total", "took_ms", "hits"] {
        assert!(v.get(k).is_some(), "{k} missing: {v}");
    }
    assert_eq!(v["total"], 1);
    let hit = &v["hits"][0];
    assert_eq!(hit["site"], "www.ebay.com");
    for k in ["site", "score", "rank", "fetched", "bias", "snippet"] {
        assert!(hit.get(k).is_some(), "{k} missing: {hit}");
    }
    // Seed queries: each hit names the robot, or is under the domain.
    let r = get(addr, "/api/search?q=botname%3Agooglebot&limit=50").json();
    assert!(r["total"].as_u64().unwrap() > 5, "{r}");
    for h in r["hits"].as_array().unwrap() {
        assert!(
            h["snippet"]
                .as_str()
                .unwrap()
                .to_lowercase()
                .contains("googlebot"),
            "{h}"
        );
    }
    let r = get(addr, "/api/search?q=favor%3Agooglebot&rank=bias&limit=50").json();
    let hits = r["hits"].as_array().unwrap();
    assert!(!hits.is_empty(), "{r}");
    let mut last = i64::MAX;
    for h in hits {
        let b = h["bias"]["googlebot"].as_i64().unwrap();
        assert!(b > 0 && b <= last, "ranked by bias: {h}");
        last = b;
    }
    // The page shows the same sites, and links each to its file and its bias.
    let page = get(addr, "/search?q=favor%3Agooglebot&rank=bias");
    for h in hits.iter().take(20) {
        let site = h["site"].as_str().unwrap();
        assert!(
            page.body.contains(&format!("href=\"/site/{site}\"")),
            "{site}"
        );
        assert!(
            page.body
                .contains(&format!("href=\"/site/{site}/bias?as_of=")),
            "{site}"
        );
    }
    assert!(page.body.contains(&format!("<b>{}</b> sites", r["total"])));
    // A malformed query names its column, on the page and in the API.
    let bad = get(addr, "/api/search?q=%28botname%3Agooglebot");
    assert_eq!(bad.status, 400);
    assert!(
        bad.json()["error"].as_str().unwrap().contains('^'),
        "{}",
        bad.body
    );
    let bad = get(addr, "/search?q=%28botname%3Agooglebot");
    assert_eq!(bad.status, 400);
    assert!(bad.body.contains("class=\"error\""));
    assert_eq!(get(addr, "/api/search?q=x&rank=popular").status, 400);
}

#[test]
fn robots_table_sorts_by_each_column() {
    let addr = demo();
    let col = |sort: &str, key: &str| -> Vec<serde_json::Value> {
        let v = get(addr, &format!("/api/favor?sort={sort}")).json();
        v["robots"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r[key].clone())
            .collect()
    };
    for key in ["appeared", "favored", "disfavored", "favorability"] {
        let xs: Vec<f64> = col(key, key).iter().map(|x| x.as_f64().unwrap()).collect();
        assert!(xs.len() > 10);
        assert!(xs.windows(2).all(|w| w[0] >= w[1]), "{key} not descending");
    }
    let names: Vec<String> = col("robot", "robot")
        .iter()
        .map(|x| x.as_str().unwrap().to_owned())
        .collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
    let by_appeared_api: Vec<String> = col("appeared", "robot")
        .iter()
        .map(|x| pct(x.as_str().unwrap()))
        .collect();
    // The page's order follows the sort, and each robot links to its page.
    let order = |sort: &str| -> Vec<String> {
        let body = get(addr, &format!("/robots?sort={sort}&rows=all")).body;
        body.split("<td><a href=\"/crawler/")
            .skip(1)
            .map(|s| s.split('"').next().unwrap().to_owned())
            .collect()
    };
    let by_appeared = order("appeared");
    let by_name = order("robot");
    assert_eq!(by_appeared.len(), by_name.len());
    assert_ne!(by_appeared, by_name, "sorting reorders the table");
    assert_eq!(by_name, names.iter().map(|n| pct(n)).collect::<Vec<_>>());
    assert_eq!(by_appeared, by_appeared_api);
    // Without `rows=all`, the first 25 and a link to the rest.
    let body = get(addr, "/robots?sort=robot").body;
    assert_eq!(body.matches("<td><a href=\"/crawler/").count(), 25);
    assert!(body.contains("rows=all"), "a link to the rest");
    // Figure 5's formula over the whole set.
    let v = get(addr, "/api/favor").json();
    let n = v["n"].as_f64().unwrap();
    for r in v["robots"].as_array().unwrap() {
        let f = (r["favored"].as_f64().unwrap() - r["disfavored"].as_f64().unwrap()) / n;
        assert!((f - r["favorability"].as_f64().unwrap()).abs() < 1e-12);
    }
    // The trends chart draws one bar group per period.
    let t = get(addr, "/api/trends?agent=GPTBot").json();
    let periods = t["periods"].as_array().unwrap().len();
    assert!(periods > 3, "{t}");
    let page = get(addr, "/robots?agent=GPTBot").body;
    assert_eq!(page.matches("<g class=\"period\"").count(), periods);
    // Its numbers are a table too (the chart's text alternative), one row
    // per period with the API's counts.
    let table = page
        .split_once("<table class=\"trends\">")
        .and_then(|(_, t)| t.split_once("</table>"))
        .map(|(t, _)| t)
        .expect("the chart's table");
    assert!(table.contains("<caption>"), "{table}");
    for p in t["periods"].as_array().unwrap() {
        let c = &p["agents"]["GPTBot"];
        let without = p["no_robots_txt"]
            .as_u64()
            .map_or("–".to_owned(), |n| n.to_string());
        let row = format!(
            "<tr><th scope=\"row\">{}</th><td class=\"n\">{}</td><td class=\"n\">{without}</td><td class=\"n\">{} ",
            p["period"].as_str().unwrap(),
            p["sites"],
            c["full"]
        );
        assert!(table.contains(&row), "{row} in {table}");
    }
    assert_eq!(get(addr, "/api/favor?sort=size").status, 400);
    // The chart is computed on request, from the stored classes.
    let first = get(addr, "/robots?agent=ClaudeBot").body;
    assert!(first.contains("<g class=\"period\""), "{first}");
}

/// Trends by imported crawl: a store with two crawls (each capturing
/// some sites, one site twice) is answered as `botscope trends --by crawl`
/// answers it (the one library call), on the API and on the page, whose
/// form keeps the choice and whose sort links keep it too. A store without
/// crawls, or a `by` nobody knows, is a 400 that says why.
#[test]
fn trends_by_crawl_answer_as_the_command_does() {
    use botscope_store::{Attempt, NewRun, Source, Store};
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("store.db");
    let mut s = botscope_store::SqliteStore::open(&db).unwrap();
    let bodies: [&[u8]; 3] = [
        b"User-agent: GPTBot\nDisallow: /\n",
        b"User-agent: GPTBot\nDisallow: /private/\n",
        b"License: https://x.example/license.xml\nUser-agent: *\nContent-Signal: search=yes, ai-train=no\nAllow: /\n",
    ];
    for k in 0..2usize {
        let crawl = format!("CC-MAIN-2024-{:02}", 10 + 8 * k);
        let t0 = 1_710_000_000 + k as i64 * 5_000_000;
        let run = s
            .begin_run(&NewRun {
                input: crawl.clone(),
                input_hash: botscope_store::content_hash(crawl.as_bytes()),
                user_agent: String::new(),
                hosts: 0,
                started: t0,
                crawl: Some(crawl.clone()),
            })
            .unwrap();
        let mut batch = Vec::new();
        for i in 0..12usize {
            let host = format!("site{i}.example");
            let body = (i + k) % 4 != 3;
            let at = |time: i64, body: Option<&[u8]>| Attempt {
                host: host.clone(),
                time,
                url: format!("https://{host}/robots.txt"),
                status: Some(if body.is_some() { 200 } else { 404 }),
                outcome: if body.is_some() { "parse" } else { "allow-all" }.into(),
                reason: "test".into(),
                bytes: body.map_or(0, |b| b.len() as u64),
                body: body.map(<[u8]>::to_vec),
                source: Source::Warc,
                ..Attempt::default()
            };
            batch.push(at(t0 + i as i64, body.then_some(bodies[(i + k) % 3])));
            if i == 5 {
                // Captured again: the later capture decides.
                batch.push(at(t0 + 100, Some(bodies[0])));
            }
        }
        s.record(Some(run), &batch).unwrap();
        s.finish_run(run, t0).unwrap();
    }
    let ix = dir.path().join("store.index");
    botscope_index::Index::build(&s, &ix, None, &mut |_| {}).unwrap();
    let agents = vec!["GPTBot".to_owned()];
    // GPTBot by crawl under a method, as the library answers it.
    let by_crawl = |s: &botscope_store::SqliteStore, method| {
        botscope_index::Index::open(&ix)
            .unwrap()
            .trends_over(
                Some(s),
                botscope_index::TrendsPlan {
                    agents: &agents,
                    by: botscope_index::By::Crawl,
                    from: None,
                    to: None,
                    where_: None,
                    semantics: botscope_robotstxt::Semantics::Google,
                    cohort: None,
                    method,
                    per_site: None,
                },
            )
            .unwrap()
    };
    let want = by_crawl(&s, Default::default());
    drop(s);
    let running = start(Config {
        db: Some(botscope_store::StoreLocator::Sqlite(db)),
        index: Some(ix.clone()),
        ..demo_config()
    });
    let addr = running.addr;
    let r = get(addr, "/api/trends?agent=GPTBot&by=crawl");
    assert_eq!(r.status, 200, "{}", r.body);
    let got = r.json();
    assert_eq!(got, serde_json::to_value(&want).unwrap());
    let periods: Vec<&str> = got["periods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["period"].as_str().unwrap())
        .collect();
    assert_eq!(periods, ["CC-MAIN-2024-10", "CC-MAIN-2024-18"]);
    assert_eq!(got["by"], "crawl");
    let page = get(addr, "/robots?agent=GPTBot&by=crawl").body;
    assert!(
        page.contains("<g class=\"period\" data-period=\"CC-MAIN-2024-18\""),
        "{page}"
    );
    assert!(page.contains("per crawl."), "{page}");
    // The terms the files state, per crawl, as `trends --directive` counts
    // them.
    let licence = botscope_index::directives(&want, botscope_index::Directive::License);
    let last = licence.rows.last().unwrap();
    assert!(last.sites > 0, "{licence:?}");
    let at = page.find("id=\"terms\"").expect("the terms table");
    let table = &page[at..at + page[at..].find("</table>").unwrap()];
    assert!(table.contains(&format!("{:.1}%", last.share)), "{table}");
    assert!(table.contains("<td>CC-MAIN-2024-18</td>"), "{table}");
    assert!(page.contains("<code>signal:ai-train=no</code>"), "{page}");
    assert!(page.contains("<option value=\"crawl\" selected>"), "{page}");
    assert!(
        page.contains("by=crawl&amp;sort=robot"),
        "sort links keep by: {page}"
    );
    // site2 answered 404 to the second crawl: its page shows that it had
    // no robots.txt from then, with nothing to check or lint, and the
    // file before it among the versions.
    let gone = get(addr, "/site/site2.example").body;
    assert!(
        gone.contains("the site had no robots.txt (removed)"),
        "{gone}"
    );
    assert!(
        !gone.contains("Check a URL") && !gone.contains("lint diagnostics"),
        "{gone}"
    );
    assert!(gone.contains("no robots.txt: removed)"), "{gone}");
    // The shares the page prints are the command's: of the sites with a
    // robots.txt, then of every site the crawl captured.
    let text = want.to_text();
    for p in got["periods"].as_array().unwrap() {
        let share = |of: &str| {
            let f = p[of]["agents"]["GPTBot"]["full"].as_f64().unwrap();
            format!("{:.1}%", f * 100.0)
        };
        let (of_sites, of_all) = (share("of_sites"), share("of_all"));
        assert_ne!(of_sites, of_all, "{p}");
        let n = p["agents"]["GPTBot"]["full"].as_u64().unwrap();
        assert!(
            page.contains(&format!(
                "{n} <span class=\"muted\">({of_sites} · {of_all})</span>"
            )),
            "{of_sites} {of_all}: {page}"
        );
        assert!(
            text.contains(&format!("full {n:>6} {of_sites:>6} {of_all:>6}")),
            "{text}"
        );
    }
    // The studies' methods, as the library answers them; a method that is
    // none of the three is a 400, not the exact method in silence.
    for method in [
        botscope_index::studies::Method::Somesite,
        botscope_index::studies::Method::Cic,
    ] {
        let store = botscope_store::SqliteStore::open(&dir.path().join("store.db")).unwrap();
        let want = by_crawl(&store, method);
        let url = format!(
            "/api/trends?agent=GPTBot&by=crawl&method={}",
            method.as_str()
        );
        let r = get(addr, &url);
        assert_eq!(r.status, 200, "{}", r.body);
        assert_eq!(r.json(), serde_json::to_value(&want).unwrap(), "{url}");
        assert_eq!(r.json()["method"], method.as_str());
        let page = get(
            addr,
            &format!("/robots?agent=GPTBot&by=crawl&method={}", method.as_str()),
        )
        .body;
        assert!(
            page.contains(&format!("<option value=\"{}\" selected>", method.as_str())),
            "{page}"
        );
        assert!(
            page.contains(&format!("method={}&amp;sort=robot", method.as_str())),
            "sort links keep the method: {page}"
        );
    }
    let page = get(addr, "/robots?agent=GPTBot&by=crawl&method=cic").body;
    assert!(
        page.contains("as Consent in Crisis&#39;s parser read it")
            || page.contains("as Consent in Crisis's parser read it"),
        "{page}"
    );
    for bad in [
        "/api/trends?agent=GPTBot&method=exactly",
        "/robots?agent=GPTBot&method=CIC2",
    ] {
        let r = get(addr, bad);
        assert_eq!(r.status, 400, "{bad}: {}", r.body);
        assert!(r.body.contains("exact, somesite or cic"), "{}", r.body);
    }
    // Without a choice, by month over this short span.
    assert_eq!(get(addr, "/api/trends?agent=GPTBot").json()["by"], "month");
    // The demo's store imported no crawl.
    let r = get(demo(), "/api/trends?agent=GPTBot&by=crawl");
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(r.body.contains("the store holds no crawl"), "{}", r.body);
    let r = get(demo(), "/api/trends?agent=GPTBot&by=week");
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(r.body.contains("month, year or crawl"), "{}", r.body);
}

#[test]
fn site_page_checks_lints_and_diffs() {
    let addr = demo();
    let r = get(addr, "/site/www.ebay.com?agent=bingbot&url=%2Fbrw%2Fx");
    assert_eq!(r.status, 200);
    // Line numbers, the deciding line highlighted, both semantics.
    assert!(r.body.contains("id=\"L1\""));
    assert!(
        r.body.contains("class=\"hit\""),
        "deciding line highlighted"
    );
    assert!(r.body.contains("decides (Google)"));
    let api = get(addr, "/api/site/www.ebay.com?agent=bingbot&url=%2Fbrw%2Fx").json();
    let check = api["check"].as_array().unwrap();
    assert_eq!(check.len(), 2);
    assert_eq!(check[0]["semantics"], "google");
    assert_eq!(check[1]["semantics"], "draft1996");
    assert_eq!(check[0]["allowed"], false, "{api}");
    // A synthetic site with several versions has a timeline and a diff.
    let sites = get(addr, "/api/search?q=contain%3Auniversal&limit=300").json();
    let multi = sites["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["site"].as_str().unwrap().to_owned())
        .find(|s| {
            get(addr, &format!("/api/site/{s}")).json()["versions"]
                .as_array()
                .is_some_and(|v| v.len() > 1)
        })
        .expect("a site with two versions");
    let page = get(addr, &format!("/site/{multi}"));
    assert!(page.body.contains("<svg class=\"timeline\""));
    assert!(page.body.matches("<circle class=\"version").count() >= 2);
    assert!(page.body.contains("Compare versions"));
    let v = get(addr, &format!("/api/site/{multi}")).json();
    assert!(v["diff"].is_object(), "{v}");
    // The raw file: plain text in a sandbox.
    let raw = get(addr, "/site/www.ebay.com/robots.txt");
    assert_eq!(raw.status, 200);
    assert!(
        raw.header("content-type")
            .unwrap()
            .starts_with("text/plain")
    );
    assert!(
        raw.header("content-security-policy")
            .unwrap()
            .contains("sandbox")
    );
    assert_eq!(
        raw.body,
        String::from_utf8_lossy(
            &std::fs::read(botscope_testkit::root().join("examples/robots/www.ebay.com.txt"))
                .unwrap()
        )
    );
    // "Analyze it!" in both semantics, as `botscope bias --format json`.
    let b = get(addr, "/api/bias?site=www.ebay.com").json();
    let body =
        std::fs::read(botscope_testkit::root().join("examples/robots/www.ebay.com.txt")).unwrap();
    let mut want = botscope_index::bias(&body, botscope_robotstxt::Semantics::Google);
    want.site = Some("www.ebay.com".into());
    assert_eq!(b, serde_json::to_value(&want).unwrap());
    let page = get(addr, "/site/www.ebay.com/bias?semantics=draft1996");
    assert!(page.body.contains("<b>1996 draft</b>"));
    assert_eq!(get(addr, "/site/no-such-host.example").status, 404);
    assert_eq!(get(addr, "/api/bias?site=no-such-host.example").status, 404);
}

/// Bytes meant to run or to fool: script, HTML, terminal escapes, bidi.
const HOSTILE: &str = "User-agent: <script>alert(1)</script>\nDisallow: /\"><img src=x onerror=alert(2)>\n# \u{1b}[31mred\u{1b}[0m \u{202e}txt.exe\nUser-agent: *\nDisallow: /private/\n";

/// Found: a cross-origin form post replaced what search and bias call a
/// site's robots.txt. A submission is kept as its own source, listed as
/// submitted, and never replaces the fetched version in search, bias or
/// the site page.
#[test]
fn a_submission_never_replaces_what_the_site_serves() {
    let server = start(Config {
        demo_sites: 50,
        ..demo_config()
    });
    let addr = server.addr;
    let hits = get(addr, "/api/search?q=disallow%3A%2F&limit=1").json();
    let host = hits["hits"][0]["site"].as_str().unwrap().to_owned();
    let before = get(addr, &format!("/api/site/{host}")).json();
    let bias_before = get(addr, &format!("/api/bias?site={host}")).json();
    assert_ne!(before["source"], "submitted");
    let r = post_json(
        addr,
        "/api/submit",
        &serde_json::json!({"site": host, "robots_txt": "User-agent: *\nDisallow: /submitted-zzq\n"}),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    let after = get(addr, &format!("/api/site/{host}")).json();
    assert_eq!(after["shown"], before["shown"], "{after}");
    assert_eq!(after["source"], before["source"]);
    assert_eq!(after["body"], before["body"]);
    let versions = after["versions"].as_array().unwrap();
    assert_eq!(
        versions.len(),
        before["versions"].as_array().unwrap().len() + 1
    );
    assert!(versions.iter().any(|v| v["source"] == "submitted"));
    assert_eq!(
        get(addr, &format!("/api/bias?site={host}")).json(),
        bias_before
    );
    let s = get(addr, "/api/search?q=disallow%3A%2Fsubmitted-zzq").json();
    assert_eq!(s["total"], 0, "{s}");
    let page = get(addr, &format!("/site/{host}"));
    assert!(page.body.contains("submitted by users"), "the page says so");
    // A site never fetched is known by its submission.
    let r = post_json(
        addr,
        "/api/submit",
        &serde_json::json!({"site": "never-fetched.example", "robots_txt": "User-agent: *\nDisallow: /only-zzq\n"}),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    let s = get(addr, "/api/search?q=disallow%3A%2Fonly-zzq").json();
    assert_eq!(s["total"], 1, "{s}");
    assert_eq!(
        get(addr, "/api/site/never-fetched.example").json()["source"],
        "submitted"
    );
}

#[test]
fn submitted_files_are_data_only() {
    // A server of its own: the shared one's robots table stays as the
    // sorting tests read it.
    let server = start(Config {
        demo_sites: 50,
        ..demo_config()
    });
    let addr = server.addr;
    let r = post_json(
        addr,
        "/api/submit",
        &serde_json::json!({"site": "Hostile.Example.ORG", "robots_txt": HOSTILE}),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    let b = r.json();
    assert_eq!(b["site"], "hostile.example.org");
    assert_eq!(b["robots"][0]["robot"], "<script>alert(1)</script>");
    // Indexed at once.
    let s = get(addr, "/api/search?q=site%3Ahostile.example.org").json();
    assert_eq!(s["total"], 1, "{s}");
    // The page shows it at once, escaped, the controls visible.
    for p in [
        "/site/hostile.example.org",
        "/site/hostile.example.org/bias",
        "/search?q=site%3Ahostile.example.org",
        "/crawler/%3Cscript%3Ealert(1)%3C%2Fscript%3E",
    ] {
        let page = get(addr, p);
        assert_eq!(page.status, 200, "{p}");
        assert!(!page.body.contains("<script"), "{p}");
        assert!(!page.body.contains("<img"), "{p}");
        assert!(!page.body.contains('\u{1b}'), "{p}");
        assert!(!page.body.contains('\u{202e}'), "{p}");
    }
    let page = get(addr, "/site/hostile.example.org");
    assert!(page.body.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(page.body.contains("\\x1b[31mred"));
    assert!(page.body.contains("\\u{202e}"));
    // The form posts the same way.
    let (ct, body) = multipart(&[
        ("site", None, b"form.example.net"),
        (
            "robots_txt",
            None,
            b"User-agent: *\nDisallow: /a\n\nUser-agent: Googlebot\nDisallow:\n",
        ),
        ("file", Some(""), b""),
    ]);
    let r = request(addr, "POST", "/submit", &ct, &body);
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.body.contains("href=\"/site/form.example.net\""));
    assert!(r.body.contains("favored"));
    // Refused before anything is written: not a host, too large, empty.
    let bad = post_json(
        addr,
        "/api/submit",
        &serde_json::json!({"site": "not a host/", "robots_txt": "User-agent: *\n"}),
    );
    assert_eq!(bad.status, 400, "{}", bad.body);
    let big = "Disallow: /x\n".repeat(50_000);
    let bad = post_json(
        addr,
        "/api/submit",
        &serde_json::json!({"site": "big.example", "robots_txt": big}),
    );
    assert_eq!(bad.status, 413, "{}", bad.body);
    // The limit in the unit it is set in.
    assert!(
        bad.body.contains("over the 500 KiB crawlers read"),
        "{}",
        bad.body
    );
    assert_eq!(
        get(addr, "/api/search?q=site%3Abig.example").json()["total"],
        0
    );
    let bad = post_json(
        addr,
        "/api/submit",
        &serde_json::json!({"site": "empty.example", "robots_txt": "  \n"}),
    );
    assert_eq!(bad.status, 400);
    let bad = request(
        addr,
        "POST",
        "/api/submit",
        "application/json",
        b"{not json",
    );
    assert_eq!(bad.status, 400);
    // A body over the limit is refused whole.
    let huge = vec![b'a'; 3 * 1024 * 1024];
    let bad = request(addr, "POST", "/api/submit", "application/json", &huge);
    assert_eq!(bad.status, 413);
}

fn gzip(b: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(b).unwrap();
    e.finish().unwrap()
}

#[test]
fn an_uploaded_log_gives_the_report() {
    let addr = uploads();
    let log = std::fs::read(
        botscope_testkit::root().join("examples/logs/elastic_examples_apache_logs.log"),
    )
    .unwrap();
    let (ct, body) = multipart(&[("log", Some("apache_logs.gz"), &gzip(&log))]);
    let r = request(addr, "POST", "/logs", &ct, &body);
    assert_eq!(r.status, 303, "{}", r.body);
    let loc = r.header("location").unwrap().to_owned();
    assert!(loc.starts_with("/logs/"));
    let page = get(addr, &loc);
    assert_eq!(page.status, 200);
    assert!(page.body.contains("Robots in the access log"));
    assert!(
        page.body.contains("10000 lines read"),
        "the whole log was read"
    );
    // Its inline style and script are allowed by hash, nothing else.
    let csp = page.header("content-security-policy").unwrap();
    assert!(
        csp.contains("script-src 'sha256-") && csp.contains("style-src 'sha256-"),
        "{csp}"
    );
    assert!(!csp.contains("unsafe-inline"));
    assert!(!page.body.contains("style=\""));
    // The same report as the command line's JSON.
    let id = loc.trim_start_matches("/logs/");
    let json = get(addr, &format!("/api/logs/{id}")).json();
    assert_eq!(json["schema"], "botscope.logs/1");
    assert_eq!(json["lines"]["total"], 10000);
    let list = get(addr, "/api/logs").json();
    assert!(
        list["logs"].as_array().unwrap().iter().any(|l| l["id"]
            .as_u64()
            .map(|n| n.to_string())
            .as_deref()
            == Some(id))
    );
    // Robots link to their crawler pages.
    assert!(page.body.contains("href=\"/crawler/"), "robots linked");
    // The undecided claims' note names what this server can do about
    // them, not only the command's flag.
    assert!(
        page.body.contains("could not be decided")
            && page.body.contains("botscope serve --verify-uploads"),
        "the note speaks of the server"
    );
    // A log carrying script and a bidi override is shown as data (a line
    // with terminal escapes is not a log line: the parser counts it).
    let hostile = "203.0.113.9 - - [10/Oct/2025:13:55:36 +0000] \"GET /<script>alert(1)</script> HTTP/1.1\" 404 12 \"-\" \"Mozilla/5.0 (compatible; Googlebot/2.1; \u{202e}<img src=x onerror=alert(3)>)\"\n".repeat(3);
    let (ct, body) = multipart(&[("log", Some("<b>x</b>.log"), hostile.as_bytes())]);
    let r = request(addr, "POST", "/logs", &ct, &body);
    assert_eq!(r.status, 303, "{}", r.body);
    let page = get(addr, r.header("location").unwrap());
    assert!(!page.body.contains("<script>alert"));
    assert!(!page.body.contains("<img"));
    assert!(!page.body.contains('\u{202e}'));
    let list = get(addr, "/logs").body;
    assert!(list.contains("&lt;b&gt;x&lt;/b&gt;.log"));
    // Found by a probe: a line dated 1970 and one dated 9999 made a
    // 202 MB report (a bar and a day mark for every day between). Such
    // times are malformed lines now, counted, and the report is small.
    let mut ages = String::new();
    for when in ["01/Jan/1970:00:00:00", "31/Dec/9999:23:59:59"] {
        ages.push_str(&format!(
            "198.51.100.9 - - [{when} +0000] \"GET / HTTP/1.1\" 200 5 \"-\" \"Mozilla/5.0\"\n"
        ));
    }
    ages.push_str("198.51.100.9 - - [10/Oct/2025:13:55:36 +0000] \"GET / HTTP/1.1\" 200 5 \"-\" \"Mozilla/5.0\"\n");
    let (ct, body) = multipart(&[("log", Some("ages.log"), ages.as_bytes())]);
    let r = request(addr, "POST", "/logs", &ct, &body);
    assert_eq!(r.status, 303, "{}", r.body);
    let page = get(addr, r.header("location").unwrap());
    assert!(page.body.len() < 200_000, "{} bytes", page.body.len());
    assert!(
        page.body.contains("implausible-time"),
        "the two lines counted"
    );
    // Not a log: refused, nothing kept. (Other tests upload to this
    // server meanwhile: the refused names are what must be absent.)
    let (ct, body) = multipart(&[("log", Some("x.bin"), &[0u8, 1, 2, 3, 255, 254].repeat(1000))]);
    let r = request(addr, "POST", "/logs", &ct, &body);
    assert_eq!(r.status, 422, "{}", r.body);
    // Over the upload limit (4 MiB here): refused, nothing kept.
    let big = vec![b'x'; 5 * 1024 * 1024];
    let (ct, body) = multipart(&[("log", Some("big.log"), &big)]);
    let r = request(addr, "POST", "/logs", &ct, &body);
    assert_eq!(r.status, 413, "{}", r.body);
    assert!(r.body.contains("limit of 4 MiB"), "{}", r.body);
    let logs = get(addr, "/api/logs").json();
    let names: Vec<&str> = logs["logs"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|l| l["name"].as_str())
        .collect();
    assert!(
        !names.contains(&"x.bin") && !names.contains(&"big.log"),
        "{names:?}"
    );
}

#[test]
fn crawler_page_maps_each_located_address() {
    let addr = demo();
    let m = get(addr, "/api/crawler/googlebot").json();
    assert_eq!(m["name"], "Googlebot");
    assert_eq!(m["registry"]["operator"], "Google");
    assert!(
        m["favor"]["appeared"].as_u64().unwrap() > 0,
        "{}",
        m["favor"]
    );
    let logs = m["logs"].as_array().unwrap();
    assert!(!logs.is_empty(), "the demo's logs show Googlebot");
    let addrs: Vec<&serde_json::Value> = logs
        .iter()
        .flat_map(|l| l["addresses"].as_array().unwrap())
        .collect();
    // With no city database installed, the demo's own table (cut from
    // DB-IP's for the example logs) places every one of them.
    let located = addrs.iter().filter(|a| a["latitude"].is_f64()).count();
    assert!(
        located > 1 && located == addrs.len(),
        "{located} of {}",
        addrs.len()
    );
    // The log's own Googlebot addresses are Google's (published list).
    assert!(addrs.iter().any(|a| a["ip"] == "66.249.73.135"
        && a["verdict"] == "verified"
        && a["country"] == "US"
        && a["city"] == "Mountain View"));
    let page = get(addr, "/crawler/googlebot").body;
    assert_eq!(page.matches("<circle class=\"mark ").count(), located);
    assert!(page.contains("<path class=\"land\""));
    // DB-IP's licence: a link back on every page that shows its data.
    assert!(
        page.contains("<a href=\"https://db-ip.com\">IP Geolocation by DB-IP</a>, CC BY 4.0"),
        "the geolocation data is attributed"
    );
    assert!(m["credits"][0].as_str().unwrap().contains("DB-IP"));
    // An installed city database answers instead of the demo's table,
    // and its places are the only ones shown.
    let other = get(uploads(), "/api/crawler/googlebot").json();
    let theirs: Vec<&serde_json::Value> = other["logs"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|l| l["addresses"].as_array().unwrap())
        .filter(|a| a["latitude"].is_f64())
        .collect();
    assert!(!theirs.is_empty());
    assert!(
        theirs.iter().all(|a| a["city"] == "Test Place"),
        "{theirs:?}"
    );
    assert!(
        !get(uploads(), "/crawler/googlebot")
            .body
            .contains("db-ip.com")
    );
    assert!(page.contains("class=\"mark verified\""));
    // The sites that favour it are sites whose bias towards it is positive.
    for h in m["favoring"].as_array().unwrap() {
        assert!(h["score"].as_f64().unwrap() > 0.0, "{h}");
    }
    // A robot nothing knows (no registry entry, no file, no log) is a 404
    // that says so.
    let u = get(addr, "/crawler/nosuchbot-42");
    assert_eq!(u.status, 404);
    assert!(u.body.contains("no crawler named"));
}

#[test]
fn check_answers_both_semantics_with_lint() {
    let addr = demo();
    let robots = "User-agent: *\nDisallow: /private\nAllow: /private/open\nDisallow /typo\n";
    let r = post_json(
        addr,
        "/api/check",
        &serde_json::json!({"robots_txt": robots, "agent": "Googlebot", "urls": ["/private/x", "/private/open/a", "https://example.com/"]}),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    let v = r.json();
    let res = v["results"].as_array().unwrap();
    assert_eq!(res[0]["google"]["allowed"], false);
    assert_eq!(res[0]["google"]["line"], 2);
    assert_eq!(res[1]["google"]["allowed"], true);
    assert_eq!(res[1]["google"]["line"], 3);
    // The 1996 draft: the first matching rule wins.
    assert_eq!(res[1]["draft1996"]["allowed"], false);
    assert_eq!(res[2]["google"]["allowed"], true);
    assert!(
        v["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["line"] == 4),
        "{v}"
    );
    // A crawler's name as its operator writes it is a note, as in `robots
    // lint`; a made-up one of the same shape is a warning.
    let r = post_json(
        addr,
        "/api/check",
        &serde_json::json!({"robots_txt": "User-agent: AI2Bot\nUser-agent: Zz9Bot\nDisallow: /\n", "agent": "AI2Bot", "urls": ["/"]}),
    );
    let v = r.json();
    let r006: Vec<(u64, String)> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "R006")
        .map(|d| {
            (
                d["line"].as_u64().unwrap(),
                d["severity"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        r006,
        [(1, "info".to_owned()), (2, "warning".to_owned())],
        "{v}"
    );
    let form = format!(
        "robots_txt={}&agent=Googlebot&urls={}",
        pct(robots),
        pct("/private/x\n/private/open/a")
    );
    let page = request(
        addr,
        "POST",
        "/check",
        "application/x-www-form-urlencoded",
        form.as_bytes(),
    );
    assert_eq!(page.status, 200);
    assert!(page.body.contains("id=\"verdicts\""));
    assert!(page.body.contains("class=\"hit\""));
    // The default fetch guard refuses loopback: an error, not a verdict.
    let r = post_json(
        addr,
        "/api/check",
        &serde_json::json!({"url": format!("http://{addr}/"), "agent": "x", "urls": ["/"]}),
    );
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(
        post_json(
            addr,
            "/api/check",
            &serde_json::json!({"agent": "x", "urls": ["/"]})
        )
        .status,
        400
    );
}

#[test]
fn check_fetches_a_robots_txt_by_url() {
    // A server allowed to fetch from loopback (as tests and private
    // networks need), and a site on loopback to fetch from.
    let site = botscope_testkit::ipdb::FileServer::start(
        [(
            "/robots.txt".to_owned(),
            b"User-agent: *\nDisallow: /no/\n".to_vec(),
        )]
        .into(),
    );
    let port: u16 = site
        .url()
        .rsplit(':')
        .next()
        .unwrap()
        .trim_end_matches('/')
        .parse()
        .unwrap();
    let mut config = demo_config();
    config.demo_sites = 20;
    config.fetch.allow_private = true;
    config.fetch.http_port = port;
    // Nothing listens for https: the fetch falls back to http.
    config.fetch.https_port = botscope_testkit::free_port();
    config.limits.api_per_second = 2;
    config.limits.api_burst = 2;
    let s = start(config);
    let r = post_json(
        s.addr,
        "/api/check",
        &serde_json::json!({"url": format!("http://127.0.0.1:{port}/"), "agent": "bot", "urls": ["/no/x", "/yes"]}),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    let v = r.json();
    assert!(v["fetched"].as_str().unwrap().contains("200"), "{v}");
    assert_eq!(v["results"][0]["google"]["allowed"], false);
    assert_eq!(v["results"][1]["google"]["allowed"], true);
    // Per-address rate limit (2 a second here), on the API and the pages
    // alike; the health check is not limited.
    let codes: Vec<u16> = (0..4).map(|_| get(s.addr, "/api/logs").status).collect();
    assert!(codes.contains(&429), "{codes:?}");
    let limited = (0..4)
        .map(|_| get(s.addr, "/api/logs"))
        .find(|r| r.status == 429)
        .unwrap();
    assert!(limited.header("retry-after").is_some());
    let pages: Vec<u16> = (0..4).map(|_| get(s.addr, "/logs").status).collect();
    assert!(pages.contains(&429), "{pages:?}");
    assert!((0..8).all(|_| get(s.addr, "/healthz").status == 200));
}

#[test]
fn the_api_is_documented_route_by_route() {
    let addr = demo();
    let spec = get(addr, "/api/openapi.json").json();
    assert_eq!(spec["openapi"], "3.1.0");
    let documented: std::collections::BTreeSet<String> =
        spec["paths"].as_object().unwrap().keys().cloned().collect();
    let src = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/src/lib.rs")).unwrap();
    let routed: std::collections::BTreeSet<String> = src
        .split(".route(\"")
        .skip(1)
        .map(|s| s.split('"').next().unwrap().to_owned())
        // The catch-all is the JSON 404 of every other address.
        .filter(|r| r.starts_with("/api/") && !r.contains('*'))
        .collect();
    assert_eq!(documented, routed);
    let page = get(addr, "/api").body;
    for p in &documented {
        assert!(page.contains(p.as_str()), "{p}");
    }
}

#[test]
fn vendored_files_are_as_recorded() {
    use sha2::Digest;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("vendor");
    let table = std::fs::read_to_string(dir.join("VENDOR.md")).unwrap();
    let mut checked = 0;
    for line in table.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let file = cells[1].trim_matches('`');
        let want = cells[5].trim_matches('`');
        let got = sha2::Sha256::digest(std::fs::read(dir.join(file)).unwrap());
        let got: String = got.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(got, want, "{file}");
        checked += 1;
    }
    assert!(checked > 0);
}

/// The API answers in JSON wherever it is asked: an address it does not
/// have and a crawler nobody knows are JSON 404s, not an HTML page or a 200
/// full of nulls.
#[test]
fn the_api_answers_unknowns_with_json_404s() {
    let addr = demo();
    for p in [
        "/api/no-such-call",
        "/api/site",
        "/api/crawler/NoSuchBotAnywhere",
    ] {
        let r = get(addr, p);
        assert_eq!(r.status, 404, "{p}: {}", r.body);
        assert!(
            r.header("content-type")
                .is_some_and(|c| c.starts_with("application/json")),
            "{p}"
        );
        assert!(
            r.json()["error"].as_str().is_some_and(|e| !e.is_empty()),
            "{p}"
        );
    }
    let r = get(addr, "/crawler/NoSuchBotAnywhere");
    assert_eq!(r.status, 404);
    assert!(r.body.contains("no crawler named"), "{}", r.body);
    // A crawler of the registry that no file names is still found.
    assert_eq!(get(addr, "/api/crawler/GPTBot").status, 200);
}

/// A robots.txt that states AI usage preferences in both dialects (the
/// attach draft's example, with Cloudflare's line).
const PREFERENCES: &str = "License: https://preferences.example/licensing/terms-for-ai-crawlers/license.xml\nUser-Agent: *\nAllow: /\nDisallow: /never/\nContent-Usage: / train-ai=n\nContent-Usage: /ai-ok/ train-ai=y\nContent-Signal: search=yes, ai-train=no\n\nUser-Agent: ExampleBot\nAllow: /\nContent-Usage: / train-ai=y\n";

/// A server of its own with a site that states AI usage preferences.
fn preferences_server() -> SocketAddr {
    static S: OnceLock<Running> = OnceLock::new();
    S.get_or_init(|| {
        let s = start(Config {
            demo_sites: 50,
            ..demo_config()
        });
        let r = post_json(
            s.addr,
            "/api/submit",
            &serde_json::json!({"site": "preferences.example", "robots_txt": PREFERENCES}),
        );
        assert_eq!(r.status, 200, "{}", r.body);
        s
    })
    .addr
}

#[test]
fn the_site_page_shows_usage_preferences_beside_the_checker() {
    let addr = preferences_server();
    let v = get(
        addr,
        "/api/site/preferences.example?agent=OtherBot&url=%2Fai-ok%2Fpage",
    )
    .json();
    let p = &v["check_preferences"];
    assert_eq!(p["usage"], serde_json::json!({"train-ai": "y"}), "{v}");
    assert_eq!(p["usage_lines"], serde_json::json!([6]));
    assert_eq!(
        p["content_signal"],
        serde_json::json!({"search": "yes", "ai-train": "no"})
    );
    let lines: Vec<u64> = v["stated"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["line"].as_u64().unwrap())
        .collect();
    assert_eq!(lines, [1, 5, 6, 7, 11]);
    assert_eq!(v["stated"][0]["kind"], "License");
    // Where the agent may not crawl, no preference applies.
    let v = get(
        addr,
        "/api/site/preferences.example?agent=OtherBot&url=%2Fnever%2Fx",
    )
    .json();
    assert_eq!(v["check_preferences"]["usage"], serde_json::Value::Null);
    let page = get(
        addr,
        "/site/preferences.example?agent=OtherBot&url=%2Fnever%2Fx",
    );
    assert!(
        page.body.contains("the agent may not crawl this URL"),
        "{}",
        page.body
    );
    // Searchable by field.
    let s = get(addr, "/api/search?q=usage%3Atrain-ai%3Dn").json();
    assert_eq!(s["total"], 1, "{s}");
    let s = get(addr, "/api/search?q=signal%3Aai-train%3Dno").json();
    assert_eq!(s["total"], 1, "{s}");
}

/// Reads an Atom feed with feedparser, as feed readers do
/// (`crates/botscope/tests/py/read_atom.py`, in the venv the test command
/// makes, or `BOTSCOPE_PYTHON`).
fn read_atom(feed: &str) -> serde_json::Value {
    let root = botscope_testkit::root();
    let py = std::env::var_os("BOTSCOPE_PYTHON")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| root.join("target/pyenv/bin/python"));
    let mut child = std::process::Command::new(&py)
        .arg(root.join("crates/botscope/tests/py/read_atom.py"))
        .arg("-")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{}: {e} (scripts/test makes the venv)", py.display()));
    child
        .stdin
        .take()
        .unwrap()
        .write_all(feed.as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(
        o.status.success(),
        "{}\n{feed}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

/// The change feeds: per search query, per crawler and per site, each
/// valid Atom 1.0 as a feed reader reads it, newest first, capped, linked
/// from the pages they follow.
#[test]
fn change_feeds_are_atom_a_reader_reads() {
    let addr = demo();
    let feed = |path: &str| {
        let r = get(addr, path);
        assert_eq!(r.status, 200, "{path}: {}", r.body);
        assert_eq!(
            r.header("content-type"),
            Some("application/atom+xml; charset=utf-8"),
            "{path}"
        );
        read_atom(&r.body)
    };
    let q = feed(&format!("/search/feed.atom?q={}", pct("botname:gptbot")));
    let entries = q["entries"].as_array().unwrap();
    assert!(
        !entries.is_empty() && entries.len() <= 100,
        "{}",
        entries.len()
    );
    let times: Vec<&str> = entries
        .iter()
        .map(|e| e["updated"].as_str().unwrap())
        .collect();
    assert!(
        times.windows(2).all(|w| w[0] >= w[1]),
        "newest first: {times:?}"
    );
    assert_eq!(q["self"], "/search/feed.atom?q=botname%3Agptbot");
    // Each entry links the site's page; the site's own feed holds it.
    let link = entries[0]["link"].as_str().unwrap();
    let host = link.strip_prefix("/site/").expect("a site page");
    let s = feed(&format!("/site/{host}/feed.atom"));
    assert!(
        s["entries"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["id"] == entries[0]["id"]),
        "{s}"
    );
    assert_eq!(s["title"], format!("robots.txt changes of {host}"));
    let c = feed("/crawler/GPTBot/feed.atom");
    assert_eq!(c["title"], "sites that started blocking GPTBot");
    for e in c["entries"].as_array().unwrap() {
        assert!(
            e["title"].as_str().unwrap().contains("blocked GPTBot"),
            "{e}"
        );
    }
    assert!(!c["entries"].as_array().unwrap().is_empty());
    // The same question, the same feed id; another, another.
    assert_eq!(feed("/crawler/GPTBot/feed.atom")["id"], c["id"]);
    assert_ne!(q["id"], c["id"]);
    // Linked from the pages.
    assert!(
        get(addr, &format!("/site/{host}"))
            .body
            .contains(&format!("href=\"/site/{host}/feed.atom\""))
    );
    assert!(
        get(addr, "/crawler/GPTBot")
            .body
            .contains("href=\"/crawler/GPTBot/feed.atom\"")
    );
    assert!(
        get(addr, "/search?q=botname%3Agptbot")
            .body
            .contains("href=\"/search/feed.atom?q=botname%3Agptbot\"")
    );
    // Each page with a feed announces it in its head, titled as the feed
    // is, for a reader's autodiscovery.
    for (page, title, href) in [
        (
            format!("/site/{host}"),
            format!("robots.txt changes of {host}"),
            format!("/site/{host}/feed.atom"),
        ),
        (
            "/crawler/GPTBot".to_owned(),
            "sites that started blocking GPTBot".to_owned(),
            "/crawler/GPTBot/feed.atom".to_owned(),
        ),
        (
            "/search?q=botname%3Agptbot".to_owned(),
            "robots.txt changes matching botname:gptbot".to_owned(),
            "/search/feed.atom?q=botname%3Agptbot".to_owned(),
        ),
    ] {
        let body = get(addr, &page).body;
        let head = &body[..body.find("</head>").expect("a head")];
        assert!(
            head.contains(&format!(
                "<link rel=\"alternate\" type=\"application/atom+xml\" title=\"{title}\" href=\"{href}\">"
            )),
            "{page}: {head}"
        );
    }
    assert!(!get(addr, "/").body.contains("rel=\"alternate\""));
    // Entry ids name the version: site, time and content.
    for e in entries {
        let id = e["id"].as_str().unwrap();
        assert!(
            id.contains("/robots.txt#") && id.contains(";blake3="),
            "{id}"
        );
    }
    // A query the index refuses is a 400, not a feed.
    assert_eq!(get(addr, "/search/feed.atom?q=%28").status, 400);
    assert_eq!(get(addr, "/search/feed.atom").status, 400);
}

/// An upload judged against the site's robots.txt, sent with it or taken
/// from the store; without one the report says "not checked", never "0 of
/// 0"; a site the store does not hold is refused in words.
#[test]
fn an_upload_is_judged_against_the_sites_robots_txt() {
    let addr = uploads();
    let robots = b"User-agent: *\nDisallow: /private/\n";
    let r = post_json(
        addr,
        "/api/submit",
        &serde_json::json!({"site": "judged.example", "robots_txt": std::str::from_utf8(robots).unwrap()}),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    let mut log = String::new();
    for s in 0..6 {
        log += &format!(
            "192.0.2.77 - - [20/Nov/2026:10:00:{s:02} +0000] \"GET /private/{s} HTTP/1.1\" 200 10 \"-\" \"python-requests/2.32.3\"\n"
        );
    }
    let upload = |fields: &[(&str, Option<&str>, &[u8])]| {
        let (ct, body) = multipart(fields);
        request(addr, "POST", "/logs", &ct, &body)
    };
    let report = |r: &Res| uploaded_report(addr, r);
    // Without: nothing judged, and the page says so.
    let plain = upload(&[("log", Some("plain.log"), log.as_bytes())]);
    let page = get(addr, plain.header("location").unwrap()).body;
    let j = report(&plain);
    assert_eq!(j["robots"]["python-requests"]["judged_requests"], 0);
    assert!(page.contains("not checked"), "the report says not checked");
    // A file sent with the log.
    let j = report(&upload(&[
        ("log", Some("with-file.log"), log.as_bytes()),
        ("robots", Some("robots.txt"), robots),
    ]));
    assert_eq!(
        j["robots"]["python-requests"]["disallowed_requests"], 6,
        "{}",
        j["robots"]
    );
    assert_eq!(j["disobedient"]["total"], 1);
    // The site's versions from the store.
    let j = report(&upload(&[
        ("log", Some("with-site.log"), log.as_bytes()),
        ("site", None, b"judged.example"),
    ]));
    assert_eq!(
        j["robots"]["python-requests"]["disallowed_requests"], 6,
        "{}",
        j["robots_txt"]
    );
    assert!(
        j["robots_txt"][0]["file"]
            .as_str()
            .unwrap()
            .contains("judged.example"),
        "{}",
        j["robots_txt"]
    );
    // A site the store does not hold, or both at once: refused in words.
    let r = upload(&[
        ("log", Some("x.log"), log.as_bytes()),
        ("site", None, b"never-stored.example"),
    ]);
    assert_eq!(r.status, 422, "{}", r.body);
    assert!(
        r.body
            .contains("holds no robots.txt of never-stored.example"),
        "{}",
        r.body
    );
    let r = upload(&[
        ("log", Some("x.log"), log.as_bytes()),
        ("robots", Some("robots.txt"), robots),
        ("site", None, b"judged.example"),
    ]);
    assert_eq!(r.status, 400, "{}", r.body);
    // The crawler page of a log read without one says "not checked".
    let page = get(addr, "/crawler/python-requests");
    assert_eq!(page.status, 200);
    assert!(page.body.contains("not checked"), "{}", page.body);
    assert!(!page.body.contains(" of 0<"), "no 0 of 0");
}

/// `/crawlers`: the registry as a directory, in the navigation, each
/// crawler linked to its page, filtered by category, with the JSON beside
/// it; `/robots` shows the category its chart uses.
#[test]
fn the_crawler_directory_lists_the_registry() {
    let addr = demo();
    let api = get(addr, "/api/crawlers").json();
    let all = api["crawlers"].as_array().unwrap();
    assert_eq!(api["total"].as_u64(), Some(all.len() as u64));
    assert!(all.len() > 150, "{}", all.len());
    let g = all.iter().find(|c| c["name"] == "Googlebot").unwrap();
    assert_eq!(g["operator"], "Google");
    assert_eq!(g["category"], "search");
    assert_eq!(g["page"], "/crawler/Googlebot");
    let by: Vec<&str> = g["verified_by"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    assert!(
        by.contains(&"published addresses") && by.contains(&"reverse DNS"),
        "{by:?}"
    );
    assert!(g["list_as_of"].as_str().is_some_and(|d| d.len() == 10));
    let ai = get(addr, "/api/crawlers?category=ai-search").json();
    let ai = ai["crawlers"].as_array().unwrap();
    assert!(ai.iter().any(|c| c["name"] == "OAI-SearchBot"));
    assert!(ai.iter().all(|c| c["category"] == "ai-search"));
    let bad = get(addr, "/api/crawlers?category=nope");
    assert_eq!(bad.status, 400, "{}", bad.body);
    let page = get(addr, "/crawlers");
    assert_eq!(page.status, 200);
    assert!(
        page.body
            .contains("<a href=\"/crawler/Googlebot\">Googlebot</a>")
    );
    assert!(
        page.body.contains("href=\"/crawlers\""),
        "in the navigation"
    );
    assert_eq!(page.body.matches("<tr>").count(), all.len() + 1);
    // The robots page's menu shows the category its chart uses.
    let robots = get(addr, "/robots").body;
    assert!(
        robots.contains("<option value=\"ai-training\" selected>"),
        "the chart's category is shown"
    );
}

/// docs/web.md lists a screenshot of every page the browser test checks,
/// at both widths, and every file in docs/screenshots (made by
/// `scripts/screenshots`).
#[test]
fn the_web_guide_lists_every_screenshot() {
    let root = botscope_testkit::root();
    let guide = std::fs::read_to_string(root.join("docs/web.md")).unwrap();
    let listed: std::collections::BTreeSet<String> = guide
        .split("](screenshots/")
        .skip(1)
        .filter_map(|s| s.split(')').next())
        .map(str::to_owned)
        .collect();
    let files: std::collections::BTreeSet<String> =
        std::fs::read_dir(root.join("docs/screenshots"))
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
    assert_eq!(listed, files, "docs/web.md's table and docs/screenshots");
    for p in PAGES {
        for w in ["desktop", "phone"] {
            assert!(
                files.contains(&browser::shot_name(p, w)),
                "{p} at {w}: run scripts/screenshots"
            );
        }
    }
}

/// The report (JSON) of the upload that answered `r`: its redirect
/// followed to the API.
fn uploaded_report(addr: SocketAddr, r: &Res) -> serde_json::Value {
    assert_eq!(r.status, 303, "{}", r.body);
    let id = r
        .header("location")
        .unwrap()
        .trim_start_matches("/logs/")
        .to_owned();
    get(addr, &format!("/api/logs/{id}")).json()
}

/// `serve --verify-uploads`: an upload's claimed robots are checked by
/// forward-confirmed reverse DNS, as `logs analyze --verify` checks them
/// (here through a real dnsmasq that knows googlebot.com and has no PTR
/// for the fakes); without it they stay undecided.
#[test]
fn uploads_are_verified_by_dns_when_the_owner_asks() {
    let server = botscope_testkit::Dnsmasq::start(&[
        "--local=/googlebot.com/",
        "--local=/google.com/",
        "--local=/in-addr.arpa/",
        "--host-record=googlebot.com,192.0.2.200",
    ]);
    let log = std::fs::read(
        botscope_testkit::root().join("examples/logs/elastic_examples_apache_logs.log"),
    )
    .unwrap();
    let upload = |addr: SocketAddr| {
        let (ct, body) = multipart(&[("log", Some("apache.log"), &log)]);
        uploaded_report(addr, &request(addr, "POST", "/logs", &ct, &body))
    };
    let checked = start(Config {
        demo_sites: 20,
        nameservers: vec![server.addr()],
        verify_uploads: 5000,
        ..demo_config()
    });
    let r = upload(checked.addr);
    let g = &r["robots"]["Googlebot"];
    assert_eq!(
        g["verification"]["spoofed"]["ips"], 4,
        "{}",
        g["verification"]
    );
    assert_eq!(g["impostors"]["unique_ips"], 4, "{}", g["impostors"]);
    drop(checked);
    let unchecked = start(Config {
        demo_sites: 20,
        ..demo_config()
    });
    let r = upload(unchecked.addr);
    let g = &r["robots"]["Googlebot"];
    assert_eq!(g["verification"]["spoofed"]["ips"], 0);
    assert_eq!(g["verification"]["unverifiable"]["ips"], 4);
}
