//! `botscope harvest` against the simulated web on loopback: a run into
//! the store, a conditional re-run, --refresh, and kill -9 then --resume.

use std::path::Path;
use std::process::{Output, Stdio};
use std::time::Duration;

use botscope_simweb::{Behaviour, Config, Sim, Site, bulk};
use serde_json::Value;

use crate::scratch as dir;

/// Runs botscope off the runtime (the simulated web answers meanwhile).
async fn botscope(args: Vec<String>) -> Output {
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        crate::run(&args)
    })
    .await
    .expect("join")
}

fn stats(d: &Path) -> Value {
    let o = crate::run(&[
        "store",
        "stats",
        "--format",
        "json",
        "--db",
        crate::arg(&d.join("h.db")),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).expect("json")
}

fn corpus() -> Vec<Vec<u8>> {
    let c = botscope_simweb::example_corpus();
    assert!(c.len() >= 4, "examples/robots");
    c
}

/// Sites whose robots.txt is parsed: served, or redirected to one served.
fn parsed(sites: &[Site]) -> u64 {
    let serves = |b: &Behaviour| {
        matches!(
            b,
            Behaviour::Robots(_) | Behaviour::Held(_) | Behaviour::Gzip | Behaviour::Html
        )
    };
    sites
        .iter()
        .filter(|s| match &s.behaviour {
            Behaviour::RedirectTo(t) => sites.iter().any(|x| &x.name == t && serves(&x.behaviour)),
            b => serves(b),
        })
        .count() as u64
}

fn args(sim: &Sim, d: &Path, hosts: &Path, extra: &[&str]) -> Vec<String> {
    let ca = d.join("ca.pem");
    std::fs::write(&ca, &sim.ca_pem).expect("ca");
    let mut v: Vec<String> = [
        "harvest",
        hosts.to_str().expect("utf-8"),
        "--db",
        d.join("h.db").to_str().expect("utf-8"),
        "--ca-file",
        ca.to_str().expect("utf-8"),
        "--ip-gap",
        "20ms",
        "--connect-timeout",
        "1s",
        "--no-progress",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    v.extend(sim.fetch_flags());
    if !extra.contains(&"--timeout") {
        v.extend(["--timeout".to_owned(), "2s".to_owned()]);
    }
    v.extend(extra.iter().map(|s| s.to_string()));
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn harvest_refetch_and_refresh() {
    let corpus = corpus();
    let mut sites = bulk(200, corpus.len());
    sites.push(Site {
        name: "secure.test".into(),
        behaviour: Behaviour::Robots(3),
        tls: true,
    });
    let parse_sites = parsed(&sites);
    let n = sites.len() as u64;
    let sim = Sim::start(Config {
        sites: sites.clone(),
        addresses: 32,
        corpus,
    })
    .await
    .expect("sim");
    let d = dir("run");
    let hosts = d.join("hosts.csv");
    let mut text = String::from("rank,domain\n");
    for (i, s) in sites.iter().enumerate() {
        text.push_str(&format!("{},{}\n", i + 1, s.name));
    }
    text.push_str("7,site6.test\nthis is junk\n");
    std::fs::write(&hosts, text).expect("hosts");

    let o = botscope(args(&sim, &d, &hosts, &["--concurrency", "64"])).await;
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("1 duplicate hosts skipped"), "{err}");
    assert!(err.contains("1 lines are not host names"), "{err}");
    assert!(err.contains(&format!("harvested {n} hosts")), "{err}");
    let s = stats(&d);
    assert_eq!(s["sites"], n);
    assert_eq!(s["attempts"], n);
    assert_eq!(s["unfinished_runs"], 0);
    assert_eq!(s["outcomes"]["parse"], parse_sites, "{s}");
    // One version per site with a robots.txt, bodies shared by content.
    assert_eq!(s["versions"], parse_sites);
    assert!(s["bodies"].as_u64().expect("bodies") < parse_sites);
    assert_eq!(s["outcomes"]["disallow-all"], 10, "the 503s: {s}");
    assert_eq!(sim.seen.max_concurrent_per_ip(), 1);

    // Again: unchanged files come back 304, no new versions; the 503s
    // asked for an hour's rest and are skipped.
    let o = botscope(args(&sim, &d, &hosts, &[])).await;
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("10 hosts asked to be fetched later"), "{err}");
    let s2 = stats(&d);
    assert_eq!(s2["versions"], parse_sites);
    assert_eq!(s2["attempts"], 2 * n - 10);
    assert!(
        s2["outcomes"]["use-cached-copy"].as_u64().unwrap_or(0) > 0,
        "{s2}"
    );

    // --refresh: nothing is older than an hour.
    let o = botscope(args(&sim, &d, &hosts, &["--refresh", "--older-than", "1h"])).await;
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("harvested 0 hosts"), "{err}");
    assert_eq!(stats(&d)["attempts"], 2 * n - 10);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_then_resume_loses_nothing_and_duplicates_nothing() {
    let corpus = corpus();
    // The last quarter of the hosts answer only once released: the first
    // run cannot finish, so it is always killed in the middle.
    let mut sites = bulk(120, corpus.len());
    for (i, s) in sites.iter_mut().enumerate().skip(90) {
        s.behaviour = Behaviour::Held(i % corpus.len());
    }
    let robots = parsed(&sites);
    let n = sites.len() as u64;
    let sim = Sim::start(Config {
        sites: sites.clone(),
        addresses: 8,
        corpus,
    })
    .await
    .expect("sim");
    let d = dir("resume");
    let hosts = d.join("hosts.txt");
    let text: String = sites.iter().map(|s| format!("{}\n", s.name)).collect();
    std::fs::write(&hosts, text).expect("hosts");
    let a = args(
        &sim,
        &d,
        &hosts,
        &["--concurrency", "8", "--timeout", "10m"],
    );
    let mut child = crate::command()
        .command()
        .args(&a)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    // Kill it once some batches are in (the bound is only for a run that
    // makes no progress at all).
    let mut polls = 0;
    loop {
        tokio::time::sleep(Duration::from_millis(200)).await;
        if d.join("h.db").exists() {
            let s = stats(&d);
            if s["attempts"].as_u64().unwrap_or(0) >= 10 {
                break;
            }
        }
        polls += 1;
        assert!(polls < 600, "no progress");
    }
    child.kill().expect("kill -9");
    let _ = child.wait();
    let s = stats(&d);
    let before = s["attempts"].as_u64().expect("attempts");
    assert!(
        (10..=90).contains(&before),
        "the held hosts are not done: {s}"
    );
    assert_eq!(s["unfinished_runs"], 1);

    sim.release();
    let o = botscope(args(&sim, &d, &hosts, &["--concurrency", "8", "--resume"])).await;
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("resuming run 1"), "{err}");
    let s = stats(&d);
    assert_eq!(s["runs"], 1);
    assert_eq!(s["unfinished_runs"], 0);
    assert_eq!(s["sites"], n);
    // Every host has its attempt; those done before the kill were not
    // fetched again (the resumed run did only the rest).
    assert_eq!(s["attempts"], n, "{s}");
    // One version per site that has a robots.txt: none lost, none twice.
    assert_eq!(s["versions"], robots, "{s}");
    assert_eq!(s["outcomes"]["parse"], robots, "{s}");
    assert_eq!(s["sites_with_robots_txt"], robots, "{s}");

    // Nothing to resume any more.
    let o = botscope(args(&sim, &d, &hosts, &["--resume"])).await;
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no unfinished run"));
}

#[test]
fn bad_host_lists_and_stores() {
    let d = dir("bad");
    let hosts = d.join("hosts.txt");
    std::fs::write(&hosts, "not a host\n\u{1}\u{2}\n").expect("hosts");
    let o = crate::command()
        .command()
        .args(["harvest", hosts.to_str().expect("utf-8"), "--db"])
        .arg(d.join("h.db"))
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("2 lines are not host names") && err.contains("no host names"),
        "{err}"
    );
    // A store that is not one: a clear error before any fetch.
    std::fs::write(&hosts, "a.test\n").expect("hosts");
    let db = d.join("junk.db");
    std::fs::write(&db, vec![7u8; 8192]).expect("db");
    let o = crate::command()
        .command()
        .args(["harvest", hosts.to_str().expect("utf-8"), "--db"])
        .arg(&db)
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("not a botscope store") && !err.contains("panicked"),
        "{err}"
    );
}

#[test]
fn durations_are_checked_before_any_work() {
    let d = dir("durations");
    let hosts = d.join("hosts.txt");
    std::fs::write(&hosts, "a.test\n").expect("hosts");
    let db = d.join("h.db");
    for bad in [
        &["--ip-gap", "soon"][..],
        &["--timeout", "5q"],
        &["--refresh", "--older-than=-1s"],
        &["--ip-gap", "99999999999999999999"],
        &["--timeout", "1000000000y"],
    ] {
        let mut args = vec!["harvest", crate::arg(&hosts), "--db", crate::arg(&db)];
        args.extend_from_slice(bad);
        let o = crate::run(&args);
        assert_eq!(o.status.code(), Some(2), "{bad:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("is not a duration") && !err.contains("panicked"),
            "{bad:?}: {err}"
        );
    }
    assert!(!db.exists(), "nothing written for a bad flag");
}

/// A list of address literals asks no nameserver: a dead `--dns` is no
/// reason to fail.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_of_literals_needs_no_nameserver() {
    let sim = Sim::start(Config {
        sites: bulk(2, 1),
        addresses: 2,
        corpus: corpus(),
    })
    .await
    .expect("sim");
    let d = dir("literals");
    let hosts = d.join("hosts.txt");
    std::fs::write(&hosts, "127.0.0.1\n").expect("hosts");
    let dead = format!("127.0.0.1:{}", botscope_testkit::free_port());
    let mut a = args(&sim, &d, &hosts, &[]);
    let i = a.iter().position(|x| x == "--dns").expect("--dns") + 1;
    a[i] = dead;
    let o = botscope(a).await;
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let s = stats(&d);
    assert_eq!(
        (&s["sites"], &s["attempts"]),
        (&Value::from(1), &Value::from(1)),
        "{s}"
    );
}

/// `robots check --robots URL` and `robots lint URL` fetch the live file
/// as the harvest does (same policy, same address guard), as Google's
/// tester does: 5xx means disallow-all, 4xx allow-all, loopback refused
/// unless allowed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn robots_check_and_lint_fetch_a_url() {
    let site = |name: &str, behaviour| Site {
        name: name.into(),
        behaviour,
        tls: true,
    };
    let sim = Sim::start(Config {
        sites: vec![
            site("good.test", Behaviour::Robots(0)),
            site("down.test", Behaviour::Status(503)),
            site("gone.test", Behaviour::Status(404)),
        ],
        addresses: 2,
        corpus: vec![b"User-agent: *\nDisallow: /private\nDisallow: /private\n".to_vec()],
    })
    .await
    .expect("sim");
    let d = dir("robots-url");
    let ca = d.join("ca.pem");
    std::fs::write(&ca, &sim.ca_pem).expect("ca");
    let (dns, https) = (sim.dns.to_string(), sim.https_port.to_string());
    let fetch = |extra: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
        v.extend(
            [
                "--dns",
                &dns,
                "--https-port",
                &https,
                "--ca-file",
                ca.to_str().expect("utf-8"),
                "--timeout",
                "5s",
                "--allow-private",
            ]
            .iter()
            .map(|s| s.to_string()),
        );
        v
    };
    let check = |url: &str| {
        fetch(&[
            "robots",
            "check",
            "--robots",
            url,
            "--agent",
            "Googlebot",
            "/private/x",
            "/public",
        ])
    };
    let o = botscope(check("https://good.test/")).await;
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.starts_with("disallowed\t/private/x\tline 2"), "{out}");
    assert!(out.contains("allowed\t/public\t"), "{out}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("https://good.test/robots.txt: 200"));
    let o = botscope(check("https://down.test/robots.txt")).await;
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("disallowed\t/public"),
        "5xx is disallow-all: {out}"
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("503"));
    let o = botscope(check("https://gone.test/robots.txt")).await;
    assert_eq!(o.status.code(), Some(0), "4xx is allow-all");
    let o = botscope(fetch(&["robots", "lint", "https://good.test/robots.txt"])).await;
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("[R025 duplicate-rule]") && out.contains("0 errors, 1 warning,"),
        "{out}"
    );
    // Without --allow-private the guard refuses a loopback answer, and
    // says which flag would let it.
    let mut args = check("https://good.test/");
    args.retain(|a| a != "--allow-private");
    let o = botscope(args).await;
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("loopback") && err.contains("--allow-private"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetch_as_a_polite_crawler() {
    let sim = Sim::start(Config {
        sites: vec![
            Site {
                name: "pages.test".into(),
                behaviour: Behaviour::Pages(
                    "User-agent: *\nDisallow: /private/\n\nUser-agent: TestBot\nCrawl-delay: 0.3\nDisallow: /no/\nContent-Usage: / train-ai=n\nContent-Usage: /a/ train-ai=y\n".into(),
                ),
                tls: false,
            },
            Site {
                name: "down.test".into(),
                behaviour: Behaviour::Status(500),
                tls: false,
            },
        ],
        addresses: 2,
        corpus: Vec::new(),
    })
    .await
    .expect("sim");
    let d = dir("fetch");
    let out = d.join("pages");
    let common = |extra: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = [
            "fetch",
            "--dns",
            &sim.dns.to_string(),
            "--allow-private",
            "--http-port",
            &sim.http_port.to_string(),
            "--connect-timeout",
            "1s",
            "--min-gap",
            "100ms",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    let o = botscope(common(&[
        "--user-agent",
        "TestBot/2.0 (+https://example.org/testbot)",
        "--format",
        "json",
        "--out",
        crate::arg(&out),
        "http://pages.test/a/",
        "http://pages.test/no/x",
        "http://pages.test/private/y?z=1",
        "http://down.test/page",
        "http://pages.test/usage/train-ai=y,search=n",
        "http://pages.test/usage/search=n+search=y",
    ]))
    .await;
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "one disallowed: {err}");
    let lines: Vec<Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    assert_eq!(lines.len(), 6, "{lines:?}");
    assert_eq!(lines[0]["url"], "http://pages.test/a/");
    assert_eq!(lines[0]["decision"], "allowed");
    assert_eq!(lines[0]["status"], 200);
    assert_eq!(lines[1]["decision"], "disallowed");
    assert_eq!(lines[1]["rule"]["line"], 6);
    assert_eq!(lines[1]["rule"]["text"], "Disallow: /no/");
    assert!(lines[1]["status"].is_null());
    // Its own group, not `*`'s; the Crawl-delay kept.
    assert_eq!(lines[2]["decision"], "allowed");
    assert!(
        lines[2]["waited_ms"].as_u64().expect("ms") >= 250,
        "{}",
        lines[2]
    );
    assert_eq!(lines[3]["decision"], "unavailable");
    assert!(lines[3]["reason"].as_str().expect("reason").contains("500"));
    // The site's usage preferences for what was fetched, and none for
    // what may not be.
    assert_eq!(lines[0]["usage"], serde_json::json!({"train-ai": "y"}));
    assert!(lines[1]["usage"].is_null());
    assert_eq!(lines[2]["usage"], serde_json::json!({"train-ai": "n"}));
    // A page's own Content-Usage header joins the file's statement,
    // toward the restrictive.
    assert_eq!(
        lines[4]["usage"],
        serde_json::json!({"train-ai": "n", "search": "n"})
    );
    // Its field lines are one Dictionary (RFC 9651 section 4.2): the
    // later `search=y` replaces `search=n`.
    assert_eq!(
        lines[5]["usage"],
        serde_json::json!({"train-ai": "n", "search": "y"})
    );
    assert!(out.join("pages.test/a/index.html").is_file());
    assert!(out.join("pages.test/private/y%3Fz=1").is_file());
    let paths: Vec<String> = sim
        .seen
        .hits()
        .iter()
        .filter(|h| h.host == "pages.test")
        .map(|h| h.path.clone())
        .collect();
    assert_eq!(
        paths,
        [
            "/robots.txt",
            "/a/",
            "/private/y?z=1",
            "/usage/train-ai=y,search=n",
            "/usage/search=n+search=y"
        ]
    );

    // Text: one line per URL, the deciding line shown.
    let o = botscope(common(&[
        "--user-agent",
        "TestBot/2.0 (+https://example.org/testbot)",
        "http://pages.test/no/again",
    ]))
    .await;
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.starts_with("disallowed\t-\t-\t") && text.contains("line 6: Disallow: /no/"),
        "{text}"
    );

    // A file in the way of a body: that URL says so, the file stays as it
    // was, the next URL is still fetched and saved.
    std::fs::write(out.join("pages.test/in-the-way"), "mine").expect("file");
    let o = botscope(common(&[
        "--user-agent",
        "TestBot/2.0 (+https://example.org/testbot)",
        "--out",
        crate::arg(&out),
        "http://pages.test/in-the-way/x",
        "http://pages.test/after",
    ]))
    .await;
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(
        text.lines().next().unwrap_or("").contains("not saved"),
        "{text}"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("pages.test/in-the-way")).expect("read"),
        "mine"
    );
    assert!(out.join("pages.test/after").is_file());

    // Found: a directory symlink planted inside `--out` was followed and
    // the body written outside. It is refused, nothing lands outside.
    #[cfg(unix)]
    {
        let outside = d.join("outside");
        std::fs::create_dir_all(&outside).expect("dir");
        std::os::unix::fs::symlink(&outside, out.join("pages.test/planted")).expect("link");
        let o = botscope(common(&[
            "--user-agent",
            "TestBot/2.0 (+https://example.org/testbot)",
            "--out",
            crate::arg(&out),
            "http://pages.test/planted/x",
        ]))
        .await;
        let text = String::from_utf8_lossy(&o.stdout);
        assert_eq!(o.status.code(), Some(1), "{text}");
        assert!(
            text.contains("not saved") && text.contains("leads out of"),
            "{text}"
        );
        assert_eq!(std::fs::read_dir(&outside).expect("dir").count(), 0);
    }

    // A User-Agent without a contact URL, or a bad URL: refused before
    // anything is asked. The hits of the runs above are let come in
    // first (the simulated web records them as it answers).
    let mut before = sim.seen.hits().len();
    loop {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let now = sim.seen.hits().len();
        if now == before {
            break;
        }
        before = now;
    }
    for bad in [
        vec!["--user-agent", "TestBot/2.0", "http://pages.test/a"],
        vec![
            "--user-agent",
            "TestBot/2.0 (+https://example.org/testbot)",
            "http://pages.test/a",
            "file:///etc/passwd",
        ],
    ] {
        let o = botscope(common(&bad)).await;
        assert_eq!(o.status.code(), Some(2), "{bad:?}");
        assert!(!String::from_utf8_lossy(&o.stderr).is_empty());
    }
    assert_eq!(sim.seen.hits().len(), before);
}

/// `--db postgres://…`: a harvest into PostgreSQL, its totals, a copy to
/// SQLite with the same export, and the research index built from it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn harvest_into_postgres() {
    let corpus = corpus();
    let sites = bulk(120, corpus.len());
    let sim = Sim::start(Config {
        sites: sites.clone(),
        addresses: 16,
        corpus,
    })
    .await
    .expect("sim");
    let pg = tokio::task::spawn_blocking(botscope_testkit::pg::Postgres::start)
        .await
        .expect("postgres");
    let url = pg.create_db("harvest");
    let d = dir("pg");
    let hosts = d.join("hosts.txt");
    let list: String = sites.iter().map(|s| format!("{}\n", s.name)).collect();
    std::fs::write(&hosts, list).expect("hosts");
    let mut a = args(&sim, &d, &hosts, &[]);
    let at = a.iter().position(|x| x == "--db").expect("--db");
    a[at + 1] = url.clone();
    let o = botscope(a).await;
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stats = |db: &str| {
        let o = crate::run(&["store", "stats", "--format", "json", "--db", db]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        serde_json::from_slice::<Value>(&o.stdout).expect("json")
    };
    let s = stats(&url);
    assert_eq!(s["sites"], 120);
    assert_eq!(s["attempts"], 120);
    assert_eq!(s["versions"], parsed(&sites));
    let copy = d.join("copy.db");
    let o = crate::run(&["store", "copy", "--from", &url, "--to", crate::arg(&copy)]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let export = |db: &str| {
        let o = crate::run(&["store", "export", "--format", "jsonl", "--db", db]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        o.stdout
    };
    assert_eq!(export(&url), export(crate::arg(&copy)));
    assert_eq!(stats(crate::arg(&copy))["versions"], s["versions"]);
    // The same copy again: refused? No: resumed with nothing to do.
    let o = crate::run(&["store", "copy", "--from", &url, "--to", crate::arg(&copy)]);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("copied sites 0"));
    // The research index from PostgreSQL.
    let index = d.join("pg.index");
    let o = crate::run(&[
        "index",
        "build",
        "--db",
        &url,
        "--index",
        crate::arg(&index),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = crate::run(&["search", "site:site0.test", "--index", crate::arg(&index)]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // The frontier: hosts added once, junk told; an SQLite store refused.
    let ranked = d.join("ranked.csv");
    std::fs::write(
        &ranked,
        "rank,domain\n1,site0.test\n2,site1.test\nnot a host\n3,site0.test\n",
    )
    .expect("list");
    let o = crate::run(&["frontier", "add", crate::arg(&ranked), "--db", &url]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("2 hosts: 2 new"), "{err}");
    let o = crate::run(&["frontier", "stats", "--format", "json", "--db", &url]);
    let st: Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(
        (st["hosts"].as_u64(), st["due"].as_u64()),
        (Some(2), Some(2))
    );
    let o = crate::run(&["frontier", "stats", "--db", crate::arg(&copy)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("PostgreSQL"));
    // A PostgreSQL URL that does not connect: exit 2, the password hidden.
    let bad = format!(
        "postgres://botscope:hunter2@127.0.0.1:{}/x",
        botscope_testkit::free_port()
    );
    let o = crate::run(&["store", "stats", "--db", &bad]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("cannot connect") && !err.contains("hunter2"),
        "{err}"
    );
    drop(pg);
}

/// `fetch --signing-key --signature-agent`: every request the crawler
/// sends (robots.txt and pages) carries a Web Bot Auth signature that
/// holds, as the server saw it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetch_signs_every_request() {
    let sim = Sim::start(Config {
        sites: vec![Site {
            name: "pages.test".into(),
            behaviour: Behaviour::Pages("User-agent: *\nDisallow: /private/\n".into()),
            tls: false,
        }],
        addresses: 1,
        corpus: Vec::new(),
    })
    .await
    .expect("sim");
    let d = dir("fetch-signed");
    let o = botscope(
        ["keys", "generate", "--out", crate::arg(&d.join("keys"))]
            .iter()
            .map(|s| s.to_string())
            .collect(),
    )
    .await;
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let key_file = d.join("keys/signing-key.jwk");
    let key =
        botscope_httpsig::SigningKey::parse(&std::fs::read_to_string(&key_file).expect("key"))
            .expect("a key");
    let agent = "https://crawler.example";
    let o = botscope(
        [
            "fetch",
            "--dns",
            &sim.dns.to_string(),
            "--allow-private",
            "--http-port",
            &sim.http_port.to_string(),
            "--min-gap",
            "50ms",
            "--user-agent",
            "SignedBot/1.0 (+https://crawler.example/bot)",
            "--signing-key",
            crate::arg(&key_file),
            "--signature-agent",
            agent,
            "http://pages.test/a",
            "http://pages.test/b?x=1",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
    )
    .await;
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let mut keys = botscope_httpsig::KeySet::new();
    keys.add_key(Some(agent), key.public());
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs() as i64;
    let hits: Vec<_> = sim
        .seen
        .hits()
        .into_iter()
        .filter(|h| h.host == "pages.test")
        .collect();
    let paths: Vec<&str> = hits.iter().map(|h| h.path.as_str()).collect();
    assert_eq!(paths, ["/robots.txt", "/a", "/b?x=1"]);
    let mut nonces = std::collections::HashSet::new();
    for h in &hits {
        assert_eq!(h.signature.len(), 3, "{h:?}");
        let req =
            botscope_httpsig::Request::new("GET", "http", &h.host, &h.path, h.signature.clone());
        let v = botscope_httpsig::verify_request(
            &req,
            &keys,
            now,
            &botscope_httpsig::Policy::default(),
        );
        assert_eq!(
            v.outcome,
            botscope_httpsig::Outcome::Verified,
            "{}: {}",
            h.path,
            v.reason
        );
        assert_eq!(v.agent.as_deref(), Some(agent));
        assert!(
            nonces.insert(v.nonce.clone().expect("a nonce")),
            "a fresh nonce each"
        );
    }
    // The same fetch without a key signs nothing.
    let o = botscope(
        [
            "fetch",
            "--dns",
            &sim.dns.to_string(),
            "--allow-private",
            "--http-port",
            &sim.http_port.to_string(),
            "--user-agent",
            "SignedBot/1.0 (+https://crawler.example/bot)",
            "http://pages.test/c",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
    )
    .await;
    assert_eq!(o.status.code(), Some(0));
    let last = sim
        .seen
        .hits()
        .into_iter()
        .rfind(|h| h.path == "/c")
        .expect("hit");
    assert!(last.signature.is_empty());
}

/// `robots lint URL`'s status line names the URL as asked, its port kept
/// (a site on another port is another site).
#[test]
fn the_status_line_keeps_the_port() {
    let server = botscope_testkit::ipdb::FileServer::start(
        [(
            "/robots.txt".to_owned(),
            b"User-agent: *\nDisallow: /x\n".to_vec(),
        )]
        .into_iter()
        .collect(),
    );
    let url = format!("{}/robots.txt", server.url());
    assert!(url.rsplit(':').next().is_some_and(|p| p != "80/robots.txt"));
    let o = crate::run(&["robots", "lint", &url, "--allow-private"]);
    let err = crate::stderr(&o);
    assert!(err.contains(&format!("botscope: {url}: 200, ")), "{err}");
}
