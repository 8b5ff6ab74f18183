//! Canary tokens through the real standalone gate (`gate --upstream
//! --canary-key`), read back by `botscope canary find`.

#![allow(clippy::unwrap_used)]

use std::io::Write as _;
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

#[test]
fn a_copied_page_names_the_client_it_was_served_to() {
    let dir = botscope_testkit::tempdir();
    let dir = dir.path();
    let robots = dir.join("robots");
    std::fs::create_dir_all(&robots).unwrap();
    std::fs::write(robots.join("default.txt"), "User-agent: *\nDisallow:\n").unwrap();
    let policy = dir.join("policy.yaml");
    std::fs::write(&policy, "default: allow\nrules: []\n").unwrap();
    let key = dir.join("canary.key");
    std::fs::write(&key, [7u8; 32]).unwrap();
    let app = botscope_testkit::page_server(PAGE);
    let (_gate, at) = spawn_gate(
        &robots,
        &policy,
        dir,
        &format!("http://{app}"),
        botscope_testkit::free_port(),
        &[
            "--canary-key",
            key.to_str().unwrap(),
            "--canary-period",
            "3s",
            "--trust-proxy",
            "127.0.0.1/32",
        ],
        &[],
    );
    let get = |client: &str, ua: &str| {
        let r = ask(
            [127, 0, 0, 1],
            at,
            "GET /shop",
            &format!("User-Agent: {ua}\r\nAccept: text/html\r\nX-Real-IP: {client}\r\n"),
            b"",
        );
        assert_eq!(r.status, 200, "{r:?}");
        r
    };
    // One client: the same reference on its next page (a period's end
    // may fall between two pages once: then the next two agree).
    let mut a = (get("198.51.100.7", FIREFOX), get("198.51.100.7", FIREFOX));
    if reference(&a.0) != reference(&a.1) {
        a = (get("198.51.100.7", FIREFOX), get("198.51.100.7", FIREFOX));
    }
    assert_eq!(reference(&a.0), reference(&a.1));
    let first = a.0;
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
    let other = get("203.0.113.9", FIREFOX);
    assert_ne!(reference(&other), reference(&first));
    // Googlebot (verified by Google's published range) gets the page a
    // browser gets, but for the reference.
    let google = get("66.249.66.1", GOOGLEBOT);
    let (gp, gc) = reference(&google);
    let (fp, fc) = reference(&first);
    assert_ne!(gc, fc);
    assert_eq!(
        google.body.replace(&gp, "P").replace(&gc, "C"),
        first.body.replace(&fp, "P").replace(&fc, "C")
    );
    // The next period: a new reference for the same client.
    std::thread::sleep(Duration::from_millis(3_100));
    let later = get("198.51.100.7", FIREFOX);
    assert_ne!(reference(&later), reference(&first));

    // The issuance record, as an operator saves it.
    // (From 127.0.0.2: 127.0.0.1 is the trusted proxy, which names no
    // operator.)
    let record = ask([127, 0, 0, 2], at, "GET /.botscope/canary.jsonl", "", b"");
    assert_eq!(record.status, 200);
    assert!(record.body.lines().count() >= 4, "{}", record.body);
    let record_file = dir.join("canary.jsonl");
    std::fs::write(&record_file, &record.body).unwrap();
    let args = [
        "--key",
        key.to_str().unwrap(),
        "--record",
        record_file.to_str().unwrap(),
    ];

    // A re-cased, hyphenated phrase in an answer engine's reply.
    let recased: Vec<String> = fp
        .split(' ')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map_or(String::new(), |f| f.to_uppercase().chain(c).collect())
        })
        .collect();
    let (code, out) = find(
        &args,
        &format!("As the shop says ({}), prices rose.\n", recased.join("-")),
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("198.51.100.0/24 firefox"), "{out}");
    assert!(out.contains("1 mark seen in this input"), "{out}");
    // A code wrapped in zero-width characters.
    let wrapped: String = reference(&other)
        .1
        .chars()
        .flat_map(|c| [c, '\u{200B}'])
        .collect();
    let (code, out) = find(&args, &format!("cited: \u{2060}{wrapped}\n"));
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("203.0.113.0/24 firefox"), "{out}");
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
    // A reference made under another key is nobody's.
    let stranger = botscope_canary::CanaryKey::new(&[8; 32]).unwrap();
    let mark = botscope_canary::Mark::at(
        botscope_canary::Client::network("198.51.100.7".parse().unwrap(), None, FIREFOX),
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
