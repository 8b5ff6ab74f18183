//! Canary tokens through the real standalone gate (`gate --upstream
//! --canary-key`), read back by `botscope canary find`.

#![allow(clippy::unwrap_used)]

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use botscope_testkit::http::Res;

use crate::standalone::{ask, spawn_gate};

const FIREFOX: &str = "Mozilla/5.0 (X11; Linux x86_64; rv:130.0) Gecko/20100101 Firefox/130.0";
const GOOGLEBOT: &str = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
const PAGE: &str = "<!doctype html><html><head><title>Shop <!--botscope:canary--></title></head><body><h1>Shop</h1><p>Our prices, this week.</p><footer><!--botscope:canary--></footer></body></html>";

/// The reference a page carries: its phrase and its code.
fn reference(r: &Res) -> (String, String) {
    let at = r.body.find("<footer>Reference: ").expect("a reference") + "<footer>Reference: ".len();
    let text = &r.body[at..at + r.body[at..].find("</footer>").expect("its end")];
    let (phrase, code) = text.rsplit_once(' ').expect("phrase and code");
    (phrase.to_owned(), code.to_owned())
}

/// `botscope canary find` over `stdin`: its exit code and output.
fn find(args: &[&str], stdin: &str) -> (i32, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_botscope"))
        .args(["canary", "find"])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    let out = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!out.to_lowercase().contains("trained"), "{out}");
    (o.status.code().unwrap_or(-1), out)
}

/// A guide's block of docs/canary.md (the first `lang` block after
/// `after`), its paths put under `dir` and the gate at `at`.
fn guide(after: &str, dir: &Path, at: Option<std::net::SocketAddr>) -> String {
    let mut b = botscope_testkit::doc_block("canary.md", after, "sh")
        .replace("/etc/botscope/", &format!("{}/", dir.display()));
    if let Some(at) = at {
        b = b.replace("http://127.0.0.1/", &format!("http://{at}/"));
    }
    b
}

/// A guide's block run by bash in `dir`, this build's `botscope` first on
/// the PATH: its output.
fn run(block: &str, dir: &Path) -> String {
    let o = crate::standalone::bash_in(block, dir);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "{block}\n{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!out.to_lowercase().contains("trained"), "{out}");
    out
}

/// Two clients from different networks get different references, one
/// client the same on its next page and a new one in the next period; a
/// verified crawler's page is a browser's but for the reference; `find`
/// names the right client for a re-cased hyphenated phrase, a code in
/// zero-width characters, a copied page and a WET record, and nobody for
/// another key's reference. docs/canary.md's commands, as written.
#[test]
fn a_copied_page_names_the_client_it_was_served_to() {
    let dir = botscope_testkit::tempdir();
    let dir = dir.path();
    let (robots, policy) = crate::standalone::open_site(dir, "default: allow\nrules: []\n");
    run(&guide("## Plant", dir, None), dir);
    let key = dir.join("canary.key");
    assert_eq!(std::fs::read(&key).unwrap().len(), 32);
    // The guide's gate command: its flags but those the test sets.
    let block = guide("Start the gate in front of the site", dir, None);
    let words: Vec<String> = block
        .replace("\\\n", " ")
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    assert_eq!(words[..2], ["botscope", "gate"], "{block}");
    let mut flags: Vec<String> = Vec::new();
    let mut it = words.into_iter().skip(2);
    while let Some(w) = it.next() {
        if ["--upstream", "--listen", "--policy", "--robots-dir"].contains(&w.as_str()) {
            let _ = it.next();
        } else {
            flags.push(w);
        }
    }
    assert!(flags.contains(&"--canary-key".to_owned()), "{flags:?}");
    // A period of 3 s; Googlebot's address named by a proxy at 127.0.0.5.
    flags.extend(["--canary-period", "3s", "--trust-proxy", "127.0.0.5/32"].map(String::from));
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let app = botscope_testkit::page_server(PAGE);
    let (_gate, at) = spawn_gate(
        &robots,
        &policy,
        dir,
        &format!("http://{app}"),
        botscope_testkit::free_port(),
        &flags,
        &[],
    );
    let get = |from: [u8; 4], ua: &str, more: &str| {
        let r = ask(
            from,
            at,
            "GET /shop",
            &format!("User-Agent: {ua}\r\nAccept: text/html\r\n{more}"),
            b"",
        );
        assert_eq!(r.status, 200, "{r:?}");
        r
    };
    // Two networks of loopback: 127.0.1.0/24 and 127.0.2.0/24.
    let (a, b) = ([127, 0, 1, 7], [127, 0, 2, 9]);
    // One client: the same reference on its next page (a period's end
    // may fall between two pages once: then the next two agree).
    let mut pair = (get(a, FIREFOX, ""), get(a, FIREFOX, ""));
    if reference(&pair.0) != reference(&pair.1) {
        pair = (get(a, FIREFOX, ""), get(a, FIREFOX, ""));
    }
    assert_eq!(reference(&pair.0), reference(&pair.1));
    let first = pair.0;
    // Only the footer's slot: the title keeps its marker; the page is
    // private to its client.
    assert!(
        first
            .body
            .contains("<title>Shop <!--botscope:canary--></title>"),
        "{}",
        first.body
    );
    assert_eq!(first.header("cache-control"), Some("private, max-age=60"));
    // Another network, another reference.
    let other = get(b, FIREFOX, "");
    assert_ne!(reference(&other), reference(&first));
    // Googlebot (verified by Google's published range) gets the page a
    // browser gets, but for the reference.
    let google = get([127, 0, 0, 5], GOOGLEBOT, "X-Real-IP: 66.249.66.1\r\n");
    let (gp, gc) = reference(&google);
    let (fp, fc) = reference(&first);
    assert_ne!(gc, fc);
    assert_eq!(
        google.body.replace(&gp, "P").replace(&gc, "C"),
        first.body.replace(&fp, "P").replace(&fc, "C")
    );
    // The next period: a new reference for the same client.
    std::thread::sleep(Duration::from_millis(3_100));
    let later = get(a, FIREFOX, "");
    assert_ne!(reference(&later), reference(&first));

    // The issuance record, saved as the guide does.
    run(&guide("## Keep the issuance record", dir, Some(at)), dir);
    let record = std::fs::read_to_string(dir.join("canary-record.jsonl")).unwrap();
    assert!(record.lines().count() >= 4, "{record}");
    let args = [
        "--key",
        key.to_str().unwrap(),
        "--record",
        dir.join("canary-record.jsonl").to_str().unwrap(),
    ]
    .map(str::to_owned);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();

    // A re-cased, hyphenated phrase in an answer engine's reply, found by
    // the guide's command.
    let recased: Vec<String> = fp
        .split(' ')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map_or(String::new(), |f| f.to_uppercase().chain(c).collect())
        })
        .collect();
    std::fs::write(
        dir.join("replies.txt"),
        format!("As the shop says ({}), prices rose.\n", recased.join("-")),
    )
    .unwrap();
    let out = run(&guide("## Wait, then ask", dir, None), dir);
    assert!(out.contains("127.0.1.0/24 firefox"), "{out}");
    assert!(out.contains("1 mark seen in this input"), "{out}");
    // A code wrapped in zero-width characters.
    let wrapped: String = reference(&other)
        .1
        .chars()
        .flat_map(|c| [c, '\u{200B}'])
        .collect();
    let (code, out) = find(&args, &format!("cited: \u{2060}{wrapped}\n"));
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("127.0.2.0/24 firefox"), "{out}");
    // A copied page, from standard input, read as HTML.
    let (code, out) = find(
        &[&args[..], &["--as", "html", "--format", "json"]].concat(),
        &google.body,
    );
    assert_eq!(code, 0, "{out}");
    let line: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(line["client"]["kind"], "verified", "{out}");
    assert_eq!(line["client"]["bot"], "Googlebot", "{out}");
    assert_eq!(line["served"]["pages"], 1, "{out}");
    // A Common Crawl WET file, gzip, by the guide's command.
    let wet = format!(
        "WARC/1.0\r\nWARC-Type: conversion\r\nWARC-Target-URI: https://copies.example/a\r\nContent-Length: 5\r\n\r\nhello\r\n\r\nWARC/1.0\r\nWARC-Type: conversion\r\nWARC-Target-URI: https://copies.example/b\r\n\r\nShop. {}\r\n\r\n",
        reference(&other).1
    );
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(wet.as_bytes()).unwrap();
    std::fs::write(
        dir.join("CC-MAIN-20261201-00000.warc.wet.gz"),
        gz.finish().unwrap(),
    )
    .unwrap();
    let out = run(
        &guide("## Research: a Common Crawl segment", dir, None),
        dir,
    );
    let line: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(line["record_uri"], "https://copies.example/b", "{out}");
    assert_eq!(line["client"]["network"], "127.0.2.0", "{out}");
    // A reference made under another key is nobody's.
    let stranger = botscope_canary::CanaryKey::new(&[8; 32]).unwrap();
    let mark = botscope_canary::Mark::at(
        botscope_canary::Client::network("127.0.1.7".parse().unwrap(), None, FIREFOX),
        1_800_000_000,
        3,
    );
    let (code, out) = find(
        &args,
        &format!("{} {}", stranger.code(&mark), stranger.phrase(&mark)),
    );
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("no mark seen in this input"), "{out}");
}

/// A fleet keeps one issuance record in Redis: a page served by one gate
/// resolves through the record another gate exports; the record keeps
/// its bound under new clients from both gates; with Redis gone, a gate
/// exports its own record and says so.
#[test]
fn a_fleet_keeps_one_issuance_record() {
    let dir = botscope_testkit::tempdir();
    let dir = dir.path();
    let (robots, policy) = crate::standalone::open_site(dir, "default: allow\nrules: []\n");
    let key = dir.join("canary.key");
    std::fs::write(&key, [3u8; 32]).unwrap();
    let mut redis = botscope_testkit::Redis::start();
    let url = redis.url(0);
    let app = botscope_testkit::page_server(PAGE);
    let flags = [
        "--canary-key",
        key.to_str().unwrap(),
        "--canary-records",
        "6",
        "--state",
        &url,
    ];
    let spawn = || {
        spawn_gate(
            &robots,
            &policy,
            dir,
            &format!("http://{app}"),
            botscope_testkit::free_port(),
            &flags,
            &[],
        )
    };
    let ((_one, one), (_two, two)) = (spawn(), spawn());
    let page = |gate, from: [u8; 4]| {
        let r = ask(
            from,
            gate,
            "GET /shop",
            &format!("User-Agent: {FIREFOX}\r\nAccept: text/html\r\n"),
            b"",
        );
        assert_eq!(r.status, 200, "{r:?}");
        reference(&r)
    };
    let record = |gate| {
        let r = ask([127, 0, 0, 1], gate, "GET /.botscope/canary.jsonl", "", b"");
        assert_eq!(r.status, 200, "{r:?}");
        (
            r.header("botscope-canary-record").unwrap_or("").to_owned(),
            r.body,
        )
    };
    // A client of the second gate, resolved through the first's record
    // (the second pushes its marks within a second).
    let (phrase, _) = page(two, [127, 0, 3, 4]);
    let _ = page(one, [127, 0, 4, 4]);
    let t = std::time::Instant::now();
    let (source, body) = loop {
        let (source, body) = record(one);
        if body.contains(&phrase) || t.elapsed() > Duration::from_secs(10) {
            break (source, body);
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(source, "fleet", "{body}");
    assert!(body.contains(&phrase), "{body}");
    std::fs::write(dir.join("record.jsonl"), &body).unwrap();
    let (code, out) = find(
        &[
            "--key",
            key.to_str().unwrap(),
            "--record",
            dir.join("record.jsonl").to_str().unwrap(),
        ],
        &format!("the reply cites {phrase}\n"),
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("127.0.3.0/24 firefox"), "{out}");
    // New clients on both gates: the fleet's record holds six at most,
    // and the most recent.
    for i in 0..20u8 {
        let _ = page(if i % 2 == 0 { one } else { two }, [127, 0, 10 + i, 1]);
    }
    // The last a second later (the record is ordered by the second a
    // mark was last served).
    std::thread::sleep(Duration::from_millis(1_100));
    let (last, _) = page(two, [127, 0, 99, 1]);
    std::thread::sleep(Duration::from_millis(1_500));
    let (source, body) = record(one);
    assert_eq!(source, "fleet", "{body}");
    assert!(body.lines().count() <= 6, "{body}");
    assert!(body.contains(&last), "{body}");
    assert_eq!(
        redis.command("ZCARD botscope:canary-order").as_deref(),
        Some(":6")
    );
    assert_eq!(
        redis.command("HLEN botscope:canary-record").as_deref(),
        Some(":6")
    );
    // Redis gone: the gate's own record, said.
    redis.stop();
    let _ = page(one, [127, 0, 5, 5]);
    let (source, body) = record(one);
    assert_eq!(source, "this-gate", "{body}");
    assert!(body.lines().count() >= 1, "{body}");
}
