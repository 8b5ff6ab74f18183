//! robots, bots, verify and export: output, exit codes, snapshots.

use std::io::Write;
use std::process::Stdio;

use crate::{botscope, stdout, tmp};

const EBAY: &str = "examples/robots/www.ebay.com.txt";

#[test]
fn check_text_names_verdict_and_line() {
    let o = botscope(
        &[
            "robots",
            "check",
            "--robots",
            EBAY,
            "--agent",
            "bingbot",
            "https://www.ebay.com/",
            "https://www.ebay.com/brw/x",
            "/b/shoes?_nkw=1",
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(1), "a disallowed URL exits 1");
    insta::assert_snapshot!(stdout(&o), @r"
    allowed	https://www.ebay.com/	no rule matched in the * group
    disallowed	https://www.ebay.com/brw/x	line 25: Disallow: /brw/ in the * group
    disallowed	/b/shoes?_nkw=1	line 22: Disallow: /b/*?*_nkw in the * group
    ");
}

#[test]
fn check_all_allowed_exits_0_and_reduces_user_agent_headers() {
    let ua = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
    let o = botscope(
        &[
            "robots",
            "check",
            "--robots",
            EBAY,
            "--agent",
            ua,
            "https://www.ebay.com/itm/1",
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("its own group"), "{}", stdout(&o));
}

#[test]
fn check_json_and_stdin() {
    let o = botscope(
        &[
            "robots",
            "check",
            "--robots",
            "-",
            "--agent",
            "FooBot",
            "--format",
            "json",
            "/private/x",
            "/public",
        ],
        b"User-agent: *\nDisallow: /private\n",
    );
    assert_eq!(o.status.code(), Some(1));
    insta::assert_snapshot!(stdout(&o), @r#"
    {"agent":"FooBot","allowed":false,"content_signal":null,"group":"global","rule":{"kind":"disallow","line":2,"pattern":"/private"},"semantics":"google","url":"/private/x","usage":null,"verdict":"disallowed"}
    {"agent":"FooBot","allowed":true,"content_signal":null,"group":"global","rule":null,"semantics":"google","url":"/public","usage":null,"verdict":"allowed"}
    "#);
}

#[test]
fn check_draft1996_first_match() {
    let body = b"User-agent: *\nDisallow: /a\nAllow: /a/b\n";
    let args = |sem| {
        vec![
            "robots",
            "check",
            "--robots",
            "-",
            "--agent",
            "x",
            "--semantics",
            sem,
            "/a/b",
        ]
    };
    assert_eq!(botscope(&args("google"), body).status.code(), Some(0));
    assert_eq!(botscope(&args("draft1996"), body).status.code(), Some(1));
}

#[test]
fn unreadable_file_is_exit_2_naming_the_file() {
    let o = botscope(
        &[
            "robots",
            "check",
            "--robots",
            "no/such/robots.txt",
            "--agent",
            "x",
            "/",
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("no/such/robots.txt"), "{err}");
    let o = botscope(&["robots", "lint", "no/such/file"], b"");
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn check_batch_keeps_order_and_reports_bad_lines() {
    let a = tmp("a.txt", b"User-agent: *\nDisallow: /private\n");
    let b = tmp("b.txt", b"User-agent: FooBot\nDisallow: /\n");
    let (a, b) = (a.display().to_string(), b.display().to_string());
    let input = format!(
        "{a}\tFooBot\thttps://x.test/private/1\n{b}\tFooBot\thttps://x.test/\n{b}\tBarBot\thttps://x.test/\nno/such/file\tFooBot\t/\nnot a query line\n{a}\tFooBot\t/public\n"
    );
    let o = botscope(&["robots", "check-batch", "-"], input.as_bytes());
    assert_eq!(o.status.code(), Some(0));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 6, "{out}");
    assert_eq!(&lines[..3], ["disallowed", "disallowed", "allowed"]);
    assert!(
        lines[3].starts_with("error\t") && lines[3].contains("no/such/file"),
        "{}",
        lines[3]
    );
    assert!(
        lines[4].starts_with("error\tmalformed line"),
        "{}",
        lines[4]
    );
    assert_eq!(lines[5], "allowed");
    let o = botscope(
        &["robots", "check-batch", "--format", "json", "-"],
        format!("{a}\tFooBot\t/private\n").as_bytes(),
    );
    insta::assert_snapshot!(stdout(&o), @r#"{"group":"global","rule":{"kind":"disallow","line":2,"pattern":"/private"},"verdict":"disallowed"}"#);
}

#[test]
fn check_batch_many_lines_in_order() {
    let a = tmp("many.txt", b"User-agent: *\nDisallow: /*/odd$\n");
    let a = a.display().to_string();
    let mut input = String::new();
    for i in 0..150_000 {
        let tail = if i % 2 == 1 { "odd" } else { "even" };
        input.push_str(&format!("{a}\tbot\t/{i}/{tail}\n"));
    }
    let o = botscope(&["robots", "check-batch", "-"], input.as_bytes());
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 150_000);
    for (i, l) in lines.iter().enumerate() {
        assert_eq!(
            *l,
            if i % 2 == 1 { "disallowed" } else { "allowed" },
            "line {i}"
        );
    }
}

const LINTY: &[u8] = b"Disallow: /early\nUser-agent: Googlebot/2.1\nDisalow: /tmp\nCrawl-delay: 5\nUser-agent: bingbot\nDisallow: private\nNoindex: /x\nSitemap: /sitemap.xml\n";

#[test]
fn lint_text_exit_1_on_errors() {
    let p = tmp("linty.txt", LINTY);
    let o = botscope(&["robots", "lint", &p.display().to_string()], b"");
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o).replace(&p.display().to_string(), "robots.txt");
    insta::assert_snapshot!(out);
}

#[test]
fn lint_json_has_codes_lines_columns() {
    let o = botscope(&["robots", "lint", "--format", "json", "-"], LINTY);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    let codes: Vec<(&str, u64)> = v["diagnostics"]
        .as_array()
        .expect("array")
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap_or_default(),
                d["line"].as_u64().unwrap_or_default(),
            )
        })
        .collect();
    assert!(
        codes.contains(&("R002", 1))
            && codes.contains(&("R005", 2))
            && codes.contains(&("R007", 6)),
        "{codes:?}"
    );
    assert!(v["errors"].as_u64().unwrap_or_default() >= 2);
}

#[test]
fn lint_clean_file_exit_0() {
    let o = botscope(
        &["robots", "lint", "examples/robots/www.bbc.co.uk.txt"],
        b"",
    );
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
}

#[test]
fn parse_json_shape() {
    let o = botscope(
        &["robots", "parse", "--format", "json", "-"],
        b"User-agent: a\nUser-agent: b/1.0\nCrawl-delay: 2\nDisallow: /x\nSitemap: https://s.test/m.xml\nfoo: bar\n",
    );
    assert_eq!(o.status.code(), Some(0));
    insta::assert_snapshot!(stdout(&o));
}

#[test]
fn meta_html_and_headers() {
    let p = tmp("page.html", b"<html><head><meta name=robots content=\"noarchive, bogus\"><meta name=googlebot content=noindex></head></html>");
    let o = botscope(
        &[
            "robots",
            "meta",
            "--agent",
            "Googlebot",
            "--header",
            "X-Robots-Tag: googlebot: nofollow",
            "--header",
            "Cache-Control: no-cache",
            &p.display().to_string(),
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(0));
    insta::assert_snapshot!(stdout(&o));
}

#[test]
fn broken_pipe_is_not_an_error() {
    let a = tmp("pipe.txt", b"User-agent: *\nDisallow: /x\n");
    let mut input = String::new();
    for _ in 0..200_000 {
        input.push_str(&format!("{}\tbot\t/x\n", a.display()));
    }
    let mut child = crate::command()
        .command()
        .args(["robots", "check-batch", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    drop(child.stdout.take());
    let o = child.wait_with_output().expect("wait");
    let _ = writer.join();
    assert!(
        o.status.code() == Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[cfg(unix)]
#[test]
fn check_accepts_urls_that_are_not_utf8() {
    use std::os::unix::ffi::OsStrExt;
    let robots = tmp("bytes.txt", b"User-agent: *\nDisallow: /caf\xe9\n");
    let o = crate::command()
        .command()
        .args(["robots", "check", "--agent", "x", "--robots"])
        .arg(&robots)
        .arg(std::ffi::OsStr::from_bytes(b"/caf%E9/\xff"))
        .arg(std::ffi::OsStr::from_bytes(b"/\xff"))
        .output()
        .expect("run");
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let out = stdout(&o);
    assert!(
        out.starts_with("disallowed\t/caf%E9/\u{fffd}\tline 2"),
        "{out}"
    );
    assert!(
        out.lines().nth(1).is_some_and(|l| l.starts_with("allowed")),
        "{out}"
    );
}

#[test]
fn bots_list_show_and_case_insensitive_names() {
    let o = botscope(&["bots", "list", "--format", "json"], b"");
    assert_eq!(o.status.code(), Some(0));
    let names: Vec<String> = stdout(&o)
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).expect("json")["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    for want in [
        "Googlebot",
        "bingbot",
        "GPTBot",
        "ClaudeBot",
        "PerplexityBot",
        "CCBot",
        "Bytespider",
        "meta-externalagent",
    ] {
        assert!(names.iter().any(|n| n == want), "{want} missing");
    }
    let o = botscope(&["bots", "show", "baiduspider"], b"");
    assert_eq!(o.status.code(), Some(0));
    assert!(
        stdout(&o).starts_with("name: Baiduspider\n"),
        "{}",
        stdout(&o)
    );
    let o = botscope(&["bots", "show", "NoSuchBot"], b"");
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn bots_validate_reports_file_line_bot() {
    let bad = tmp("bad-registry.yaml", b"bots:\n- name: ok\n  fcrdns_hosts: []\n- name: broken\n  ip_ranges:\n    - min: 10.0.0.9\n      max: 10.0.0.1\n  cidr_list: [300.1.1.0/24]\n  colour: blue\n");
    let o = botscope(&["bots", "validate", &bad.display().to_string()], b"");
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o).replace(&bad.display().to_string(), "bad.yaml");
    insta::assert_snapshot!(out, @r"
    bad.yaml:6: bot `broken`: ip_ranges: range min 10.0.0.9 is greater than max 10.0.0.1
    bad.yaml:8: bot `broken`: cidr_list: `300.1.1.0/24` is not a CIDR block: the address cannot be read
    bad.yaml:9: bot `broken`: unknown key `colour`
    bad.yaml: invalid, 3 errors
    ");
    let o = botscope(
        &[
            "bots",
            "validate",
            "crates/botscope-botid/tests/data/bottica.yaml",
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(0));
    let o = botscope(&["bots", "validate", "-"], b"\xff\xfe\x00garbage");
    assert_eq!(o.status.code(), Some(2), "binary input is a clear error");
}

#[test]
fn user_registry_layers_over_the_bundled_one() {
    let mine = tmp("mine.yaml", b"bots:\n- name: googlebot\n  operator: Me\n  ip_list: [192.0.2.1]\n- name: MyCrawler\n  category: archive\n  fcrdns_hosts: [crawl.example.org]\n");
    let o = botscope(
        &[
            "bots",
            "show",
            "Googlebot",
            "--registry",
            &mine.display().to_string(),
        ],
        b"",
    );
    assert!(stdout(&o).contains("operator: Me"), "{}", stdout(&o));
    let o = botscope(
        &[
            "bots",
            "list",
            "--category",
            "archive",
            "--registry",
            &mine.display().to_string(),
        ],
        b"",
    );
    assert!(stdout(&o).contains("MyCrawler"), "{}", stdout(&o));
}

const GOOGLEBOT_UA: &str =
    "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";

#[test]
fn verify_offline_exit_codes() {
    let code = |args: &[&str]| botscope(args, b"").status.code();
    assert_eq!(
        code(&["verify", "66.249.66.1", "--ua", GOOGLEBOT_UA, "--offline"]),
        Some(0),
        "published Googlebot address"
    );
    assert_eq!(
        code(&["verify", "203.0.113.9", "--ua", "GPTBot/1.2", "--offline"]),
        Some(1),
        "GPTBot outside its list"
    );
    assert_eq!(
        code(&[
            "verify",
            "203.0.113.9",
            "--ua",
            "Mozilla/5.0 (compatible; Baiduspider/2.0)",
            "--offline"
        ]),
        Some(3),
        "FCrDNS only, offline"
    );
    assert_eq!(
        code(&[
            "verify",
            "203.0.113.9",
            "--ua",
            "Mozilla/5.0 (X11; Linux x86_64) Firefox/120.0",
            "--offline"
        ]),
        Some(4)
    );
    assert_eq!(
        code(&[
            "verify",
            "66.249.66.1",
            "--ua",
            "Mozilla/5.0 (X11; Linux x86_64) Firefox/120.0",
            "--offline"
        ]),
        Some(4),
        "unclaimed bot ip"
    );
    assert_eq!(code(&["verify", "not-an-ip", "--offline"]), Some(2));
}

#[test]
fn verify_json_fields() {
    let o = botscope(
        &[
            "verify",
            "::ffff:66.249.66.1",
            "--ua",
            GOOGLEBOT_UA,
            "--offline",
            "--format",
            "json",
        ],
        b"",
    );
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    for key in [
        "ip",
        "user_agent",
        "is_bot",
        "client_type",
        "claimed_bot",
        "category",
        "verdict",
        "methods",
        "hostnames",
        "reason",
    ] {
        assert!(v.get(key).is_some(), "{key} missing from {v}");
    }
    assert_eq!(v["ip"], "66.249.66.1", "IPv4-mapped IPv6 is IPv4");
    assert_eq!(v["verdict"], "verified");
    assert_eq!(v["claimed_bot"], "Googlebot");
    assert_eq!(v["category"], "search");
    assert_eq!(v["client_type"], "crawler");
}

#[test]
fn verify_batch_in_order_with_error_records() {
    let input = format!(
        "66.249.66.1\t{GOOGLEBOT_UA}\n999.1.1.1\t{GOOGLEBOT_UA}\n\n203.0.113.5\tGPTBot/1.2\n2001:db8::1\tcurl/8.0\n66.249.66.1\t{}\n",
        "x".repeat(100_000)
    );
    let mut input = input.into_bytes();
    input.extend_from_slice(b"192.0.2.200\tGPTBot/1.2 \xff\xfe\n\x00\x01garbage\n");
    let o = botscope(&["verify", "--batch", "-", "--offline"], &input);
    assert_eq!(
        o.status.code(),
        Some(1),
        "a spoofed line makes the batch exit 1"
    );
    let verdicts: Vec<String> = stdout(&o)
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).expect("json")["verdict"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    assert_eq!(
        verdicts,
        [
            "verified",
            "error",
            "error",
            "spoofed",
            "unknown",
            "unclaimed-bot-ip",
            "spoofed",
            "error"
        ]
    );
}

#[test]
fn verify_with_dns_that_does_not_answer_is_unverifiable() {
    let port = {
        let start = 20_000 + (std::process::id() % 10_000) as u16;
        (start..32_000)
            .find(|&p| std::net::UdpSocket::bind(("127.0.0.1", p)).is_ok())
            .expect("free port")
    };
    let dns = format!("127.0.0.1:{port}");
    let ua = "Mozilla/5.0 (compatible; Baiduspider/2.0; +http://www.baidu.com/search/spider.html)";
    let o = botscope(
        &[
            "verify",
            "192.0.2.1",
            "--ua",
            ua,
            "--dns",
            &dns,
            "--dns-timeout",
            "0.5",
            "--no-dns-cache",
            "--format",
            "json",
        ],
        b"",
    );
    assert_eq!(
        o.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    assert_eq!(v["verdict"], "unverifiable");
    assert_eq!(v["methods"], serde_json::json!(["fcrdns"]));
}

/// `verify --batch --offline` of `lines` (`IP<TAB>UA`), written to a file.
fn offline_verdicts(name: &str, lines: &str) -> std::path::PathBuf {
    let o = botscope(&["verify", "--batch", "-", "--offline"], lines.as_bytes());
    tmp(name, &o.stdout)
}

/// `bots export --verdicts VERDICTS --format FORMAT --out OUT`.
fn bots_export(
    verdicts: &std::path::Path,
    format: &str,
    out: &std::path::Path,
) -> std::process::Output {
    botscope(
        &[
            "bots",
            "export",
            "--verdicts",
            crate::arg(verdicts),
            "--format",
            format,
            "--out",
            crate::arg(out),
        ],
        b"",
    )
}

#[cfg(unix)]
#[test]
fn bots_export_formats_and_atomic_swap() {
    let vfile = offline_verdicts(
        "verdicts.jsonl",
        &format!(
            "66.249.66.1\t{GOOGLEBOT_UA}\n192.0.2.9\tGPTBot/1.2\n66.249.66.2\tFirefox/120.0\n"
        ),
    );
    let root = crate::scratch("export");
    let out = root.join("lists/crawlers");
    let export = |format: &str, out: &std::path::Path| {
        let o = bots_export(&vfile, format, out);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
    };
    export("apache-dirs", &out);
    assert!(out.join("all-ok-bots/66.249.66.1").is_file());
    assert!(out.join("googlebot/66.249.66.1").is_file());
    assert!(out.join("suspect-bots/192.0.2.9").is_file());
    assert!(out.join("other-bots/66.249.66.2").is_file());
    // A second export replaces the tree: one generation left, stale entries gone.
    std::fs::write(out.join("suspect-bots/203.0.113.7"), b"").expect("stale entry");
    export("apache-dirs", &out);
    assert!(!out.join("suspect-bots/203.0.113.7").exists());
    assert_eq!(
        std::fs::read_dir(root.join("lists/crawlers.generations"))
            .expect("gens")
            .count(),
        1
    );
    export("apache-rewritemap", &root.join("crawlers.map"));
    let map = std::fs::read_to_string(root.join("crawlers.map")).expect("map");
    assert!(
        map.contains("66.249.66.1 verified:googlebot\n") && map.contains("192.0.2.9 suspect\n"),
        "{map}"
    );
    export("nginx-geo", &root.join("geo.conf"));
    let geo = std::fs::read_to_string(root.join("geo.conf")).expect("geo");
    assert!(
        geo.contains("geo $botscope_crawler {")
            && geo.contains("published:googlebot;")
            && geo.contains("66.249.66.1/32 verified:googlebot;")
    );
    export("plain", &root.join("plain"));
    assert_eq!(
        std::fs::read_to_string(root.join("plain/suspect-bots.txt")).expect("plain"),
        "192.0.2.9\n"
    );
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn bots_update_imports_published_lists() {
    let dir = crate::scratch("update");
    let lists = dir.join("lists");
    std::fs::create_dir_all(&lists).expect("dir");
    std::fs::write(lists.join("gptbot.json"), "{\"creationTime\":\"x\",\"prefixes\":[{\"ipv4Prefix\":\"192.0.2.0/24\"},null,{\"ipv6Prefix\":\"2001:db8::/32\u{200b}\"}]}").expect("json");
    std::fs::write(lists.join("mystery.txt"), "198.51.100.7\n").expect("txt");
    let out = dir.join("registry.yaml");
    let o = botscope(
        &[
            "bots",
            "update",
            "--from",
            &lists.display().to_string(),
            "--out",
            &out.display().to_string(),
            "--force",
        ],
        b"",
    );
    assert_eq!(
        o.status.code(),
        Some(1),
        "the unattributed file is reported: {}",
        stdout(&o)
    );
    assert!(
        stdout(&o).contains("mystery.txt: cannot tell which bot"),
        "{}",
        stdout(&o)
    );
    let reg = out.display().to_string();
    let ok = botscope(
        &[
            "verify",
            "192.0.2.77",
            "--ua",
            "GPTBot/1.2",
            "--offline",
            "--registry",
            &reg,
        ],
        b"",
    );
    assert_eq!(ok.status.code(), Some(0), "{}", stdout(&ok));
    // --bot for a file the name does not tell; a second run keeps the first's import.
    let o = botscope(
        &[
            "bots",
            "update",
            "--from",
            &lists.join("mystery.txt").display().to_string(),
            "--bot",
            "ClaudeBot",
            "--out",
            &reg,
            "--force",
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let claude = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)";
    assert_eq!(
        botscope(
            &[
                "verify",
                "198.51.100.7",
                "--ua",
                claude,
                "--offline",
                "--registry",
                &reg
            ],
            b""
        )
        .status
        .code(),
        Some(0)
    );
    assert_eq!(
        botscope(
            &[
                "verify",
                "192.0.2.77",
                "--ua",
                "GPTBot/1.2",
                "--offline",
                "--registry",
                &reg
            ],
            b""
        )
        .status
        .code(),
        Some(0)
    );
    assert_eq!(
        botscope(&["bots", "validate", &reg], b"").status.code(),
        Some(0)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn check_batch_answers_an_endless_line_as_malformed_and_goes_on() {
    let robots = tmp("batch-long.txt", b"User-agent: *\nDisallow: /x\n");
    let mut input = b"junk\n".to_vec();
    input.extend(std::iter::repeat_n(b'x', 10 << 20));
    input.extend_from_slice(format!("\n{}\tbot\t/x\n", robots.display()).as_bytes());
    let o = botscope(&["robots", "check-batch", "-"], &input);
    assert_eq!(o.status.code(), Some(0));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert!(lines[0].starts_with("error\tmalformed line"));
    assert!(lines[1].starts_with("error\tmalformed line"));
    assert_eq!(lines[2], "disallowed");
}

#[cfg(unix)]
#[test]
fn bots_export_of_a_file_without_verdicts_changes_nothing() {
    let verdicts = offline_verdicts(
        "export-good.jsonl",
        &format!("66.249.66.1\t{GOOGLEBOT_UA}\n"),
    );
    let out = crate::scratch("export-refuse").join("crawlers");
    let map = out.with_extension("map");
    let export = bots_export;
    assert_eq!(
        export(&verdicts, "apache-dirs", &out).status.code(),
        Some(0)
    );
    assert_eq!(
        export(&verdicts, "apache-rewritemap", &map).status.code(),
        Some(0)
    );
    let before = std::fs::read(&map).expect("map");
    let listed =
        |dir: &std::path::Path| std::fs::read_dir(dir.join("googlebot")).map(|d| d.count());
    assert_eq!(listed(&out).ok(), Some(1));
    // A wrong file (an access log, say): exit 2, nothing touched.
    let wrong = tmp(
        "export-wrong.log",
        b"127.0.0.1 - - [01/Jan/2020:00:00:00 +0000] \"GET / HTTP/1.1\" 200 1\n",
    );
    for (format, to) in [("apache-dirs", &out), ("apache-rewritemap", &map)] {
        let o = export(&wrong, format, to);
        assert_eq!(o.status.code(), Some(2), "{format}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("holds no verdict"),
            "{format}"
        );
    }
    assert_eq!(std::fs::read(&map).expect("map"), before);
    assert_eq!(listed(&out).ok(), Some(1), "the lists stay");
}

#[test]
fn a_file_that_is_not_a_dns_cache_is_never_overwritten() {
    let log = b"127.0.0.1 - - [01/Jan/2020:00:00:00 +0000] \"GET / HTTP/1.1\" 200 1\n".repeat(100);
    let file = tmp("mylog.log", &log);
    let dns = format!("127.0.0.1:{}", botscope_testkit::free_port());
    let o = botscope(
        &[
            "verify",
            "66.249.66.1",
            "--ua",
            GOOGLEBOT_UA,
            "--dns",
            &dns,
            "--dns-timeout",
            "0.3",
            "--dns-cache",
            crate::arg(&file),
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("is not a botscope DNS cache"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(std::fs::read(&file).expect("read"), log, "untouched");
}

/// Google documents reverse DNS or its list as alternatives: a Googlebot
/// from outside the list with a genuine PTR whose A record points back is
/// verified; a resolver that denies every name is not evidence.
#[test]
fn verify_googlebot_outside_its_list_asks_dns() {
    let server = botscope_testkit::Dnsmasq::start(&[
        "--local=/googlebot.com/",
        "--local=/100.51.198.in-addr.arpa/",
        "--host-record=googlebot.com,192.0.2.200",
        "--host-record=crawl-198-51-100-10.googlebot.com,198.51.100.10",
    ]);
    let dns = server.addr().to_string();
    let verify = |ip: &str, dns: &str, extra: &[&str]| {
        let mut args = vec![
            "verify",
            ip,
            "--ua",
            GOOGLEBOT_UA,
            "--dns",
            dns,
            "--no-dns-cache",
            "--dns-timeout",
            "2",
            "--format",
            "json",
        ];
        args.extend_from_slice(extra);
        let o = botscope(&args, b"");
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
        (o, v)
    };
    let (o, v) = verify("198.51.100.10", &dns, &["--trace"]);
    assert_eq!(o.status.code(), Some(0), "{v}");
    assert_eq!(v["verdict"], "verified");
    assert_eq!(
        v["hostnames"],
        serde_json::json!(["crawl-198-51-100-10.googlebot.com"])
    );
    let trace = String::from_utf8_lossy(&o.stderr);
    for step in [
        ";; published addresses: 198.51.100.10 is in none of",
        ";; QUESTION: 10.100.51.198.in-addr.arpa.\tIN\tPTR",
        "10.100.51.198.in-addr.arpa.\tIN\tPTR\tcrawl-198-51-100-10.googlebot.com.",
        ";; QUESTION: crawl-198-51-100-10.googlebot.com.\tIN\tA/AAAA",
        "crawl-198-51-100-10.googlebot.com.\tIN\tA\t198.51.100.10",
        ";; compare: 198.51.100.10 is among the addresses of",
        ";; verdict: verified",
    ] {
        assert!(trace.contains(step), "{step:?} missing from:\n{trace}");
    }
    // No PTR, from a resolver that knows googlebot.com: spoofed.
    let (o, v) = verify("198.51.100.11", &dns, &[]);
    assert_eq!(
        (o.status.code(), v["verdict"].as_str()),
        (Some(1), Some("spoofed")),
        "{v}"
    );
    drop(server);

    // A resolver that says NXDOMAIN for every name: unverifiable (exit 3).
    let broken = botscope_testkit::Dnsmasq::start(&["--local=/#/"]);
    let (o, v) = verify("198.51.100.10", &broken.addr().to_string(), &["--trace"]);
    assert_eq!(o.status.code(), Some(3), "{v}");
    assert_eq!(v["verdict"], "unverifiable");
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("NXDOMAIN: this resolver's negative answers are not evidence"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // Offline, outside the list: unverifiable, never spoofed.
    let o = botscope(
        &["verify", "198.51.100.10", "--ua", GOOGLEBOT_UA, "--offline"],
        b"",
    );
    assert_eq!(o.status.code(), Some(3));
    assert!(stdout(&o).starts_with("unverifiable\t198.51.100.10\tGooglebot\t"));
}

/// Found by a probe: the on-disk DNS cache was shared across resolvers,
/// so that after one resolver's negative answer (and its "zone known"),
/// `verify` through another that answers nothing said `spoofed`. Answers
/// now belong to their resolver, and `--trace` says which came from the
/// cache and how old they are.
#[test]
fn verify_evidence_belongs_to_the_resolver_that_gave_it() {
    let server = botscope_testkit::Dnsmasq::start(&[
        "--local=/googlebot.com/",
        "--local=/100.51.198.in-addr.arpa/",
        "--host-record=googlebot.com,192.0.2.200",
    ]);
    let dir = botscope_testkit::tempdir();
    let cache = dir.path().join("dns-cache.json");
    let verify = |dns: &str| {
        let o = botscope(
            &[
                "verify",
                "198.51.100.11",
                "--ua",
                GOOGLEBOT_UA,
                "--dns",
                dns,
                "--dns-cache",
                crate::arg(&cache),
                "--dns-timeout",
                "1",
                "--trace",
                "--format",
                "json",
            ],
            b"",
        );
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
        (
            o.status.code(),
            v,
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let dns = server.addr().to_string();
    let (code, v, trace) = verify(&dns);
    assert_eq!(
        (code, v["verdict"].as_str()),
        (Some(1), Some("spoofed")),
        "{v}"
    );
    assert!(!trace.contains("from the cache"), "{trace}");
    // Asked again: the same resolver's answers, from the cache.
    let (code, v, trace) = verify(&dns);
    assert_eq!(
        (code, v["verdict"].as_str()),
        (Some(1), Some("spoofed")),
        "{v}"
    );
    assert!(
        trace.contains(";; (from the cache: this resolver's answer of"),
        "{trace}"
    );
    // Another resolver, one that says NXDOMAIN for every name: its own
    // answers are no evidence, and the first one's are not its.
    let broken = botscope_testkit::Dnsmasq::start(&["--local=/#/"]);
    let (code, v, trace) = verify(&broken.addr().to_string());
    assert_eq!(
        (code, v["verdict"].as_str()),
        (Some(3), Some("unverifiable")),
        "{v}\n{trace}"
    );
    assert!(!trace.contains("from the cache"), "{trace}");
    // And one that answers nothing at all: unverifiable too.
    drop(server);
    let silent = format!("127.0.0.1:{}", botscope_testkit::free_port());
    let (code, v, _) = verify(&silent);
    assert_eq!(
        (code, v["verdict"].as_str()),
        (Some(3), Some("unverifiable")),
        "{v}"
    );
}

/// A mention is not a claim: Feedly is "like FeedFetcher-Google", and
/// claims only Feedly.
#[test]
fn verify_a_mention_is_not_a_claim() {
    let o = botscope(
        &[
            "verify",
            "65.19.138.34",
            "--ua",
            "Feedly/1.0 (+http://www.feedly.com/fetcher.html; like FeedFetcher-Google)",
            "--offline",
            "--format",
            "json",
        ],
        b"",
    );
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    // Feedly claims Feedly (its own token, a registry entry with no
    // verifier), never the Google fetcher it is `like`.
    assert_eq!(v["claimed_bot"], "Feedly", "{v}");
    assert_eq!(v["category"], "feed", "{v}");
    assert_eq!(v["client_type"], "feed-reader", "{v}");
    assert_eq!(v["verdict"], "unknown", "{v}");
    assert_eq!(v["reason"], "Feedly has no verifier in the registry");
    assert_eq!(o.status.code(), Some(4));
}

/// `bots export --format apache-dirs --out DIR` with DIR an ordinary
/// directory: exit 2, its files untouched, nothing made beside it.
#[cfg(unix)]
#[test]
fn bots_export_never_deletes_a_real_directory() {
    let vfile = offline_verdicts(
        "verdicts-real-dir.jsonl",
        &format!("66.249.66.1\t{GOOGLEBOT_UA}\n"),
    );
    let root = crate::scratch("export-real-dir");
    let dir = root.join("www");
    std::fs::create_dir_all(dir.join("sub")).expect("dir");
    std::fs::write(dir.join("notes.txt"), b"notes").expect("write");
    std::fs::write(dir.join("sub/keep.conf"), b"keep").expect("write");
    for out in [dir.display().to_string(), format!("{}/", dir.display())] {
        let o = bots_export(&vfile, "apache-dirs", std::path::Path::new(&out));
        assert_eq!(o.status.code(), Some(2), "{out}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("is not a directory botscope made"),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(
            std::fs::read(dir.join("notes.txt")).expect("kept"),
            b"notes"
        );
        assert_eq!(
            std::fs::read(dir.join("sub/keep.conf")).expect("kept"),
            b"keep"
        );
        assert!(!root.join("www.generations").exists());
    }
}

/// A robots.txt that carries terminal escapes never sends them raw.
#[test]
fn robots_text_output_escapes_the_file() {
    let f = tmp(
        "escapes-robots.txt",
        b"User-agent: *\nDisallow: /\x1b]0;owned\x07\nAllow /\xe2\x80\xaex\n",
    );
    for args in [
        vec!["robots", "lint", crate::arg(&f)],
        vec!["robots", "parse", crate::arg(&f)],
        vec![
            "robots",
            "check",
            "--robots",
            crate::arg(&f),
            "--agent",
            "x",
            "/\u{1b}[2J",
        ],
    ] {
        let o = botscope(&args, b"");
        let out = stdout(&o);
        assert!(
            !out.contains('\u{1b}') && !out.contains('\u{7}') && !out.contains('\u{202e}'),
            "{args:?}: {out:?}"
        );
    }
    let o = botscope(&["robots", "parse", crate::arg(&f)], b"");
    assert!(stdout(&o).contains("/\\x1b]0;owned\\x07"), "{}", stdout(&o));
}

/// The nginx-geo export passes `nginx -t` (Debian's nginx, installed by the
/// test command) with no duplicate-network warning, even for an address
/// the registry publishes as a single address and the verdicts verify.
#[test]
fn nginx_geo_passes_nginx_t() {
    let vfile = offline_verdicts(
        "verdicts-geo.jsonl",
        &format!(
            "66.249.66.1\t{GOOGLEBOT_UA}\n3.18.12.63\tStripe/1.0 (+https://stripe.com/docs/webhooks)\n192.0.2.9\tGPTBot/1.2\n66.249.66.1\tGPTBot/1.2\n"
        ),
    );
    let root = crate::scratch("nginx-geo");
    let geo = root.join("crawlers.conf");
    let o = bots_export(&vfile, "nginx-geo", &geo);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let text = std::fs::read_to_string(&geo).expect("geo");
    assert!(
        text.contains("3.18.12.63/32 verified:stripe;"),
        "the log's value wins"
    );
    let conf = root.join("nginx.conf");
    std::fs::write(
        &conf,
        format!(
            "pid {}/nginx.pid;\nerror_log stderr;\nevents {{}}\nhttp {{\n    include {};\n}}\n",
            root.display(),
            geo.display()
        ),
    )
    .expect("conf");
    let nginx = ["/usr/sbin/nginx", "nginx"]
        .into_iter()
        .find(|p| std::process::Command::new(p).arg("-v").output().is_ok())
        .expect("nginx is needed (the test command in README installs it)");
    let o = std::process::Command::new(nginx)
        .args(["-t", "-e", "stderr", "-p"])
        .arg(&root)
        .arg("-c")
        .arg(&conf)
        .output()
        .expect("nginx -t");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(!err.contains("duplicate"), "{err}");
}

/// Junk is not a list: refused, nothing written, never `::` or a default
/// route; a list that would remove more than half of a bot's addresses
/// needs `--force`; what changes is printed.
#[test]
fn bots_update_refuses_junk_and_shrinking_lists() {
    let dir = crate::scratch("update-junk");
    std::fs::create_dir_all(&dir).expect("dir");
    let out = dir.join("registry.yaml");
    std::fs::write(&out, "bots: []\n").expect("registry");
    let mut noise = Vec::new();
    let mut x: u32 = 7;
    for _ in 0..200_000 {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
        noise.push((x >> 16) as u8);
    }
    // Address-like tokens inside junk lines, and a default route.
    noise.extend_from_slice(b"\nzz :: 0.0.0.0/0 qq\n::/0\n");
    let junk = tmp("random.bin", &noise);
    let update = |from: &std::path::Path, extra: &[&str]| {
        let mut args = vec![
            "bots",
            "update",
            "--from",
            crate::arg(from),
            "--bot",
            "Googlebot",
            "--out",
            crate::arg(&out),
        ];
        args.extend_from_slice(extra);
        botscope(&args, b"")
    };
    let o = update(&junk, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no line is an address"));
    assert_eq!(
        std::fs::read(&out).expect("registry"),
        b"bots: []\n",
        "nothing written"
    );
    // A real but much shorter list: refused without --force.
    let short = tmp("googlebot-short.txt", b"66.249.66.0/24\n");
    let o = update(&short, &[]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("more than half") && err.contains("--force"),
        "{err}"
    );
    assert!(
        stdout(&o).contains("removed"),
        "the change is shown: {}",
        stdout(&o)
    );
    assert_eq!(std::fs::read(&out).expect("registry"), b"bots: []\n");
    let o = update(&short, &["--force"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let text = std::fs::read_to_string(&out).expect("registry");
    assert!(text.contains("66.249.66.0/24"), "{text}");
    assert!(!text.contains("'::'") && !text.contains("0.0.0.0/0"));
}

#[test]
fn bots_list_and_show_find_what_users_type() {
    let o = botscope(&["bots", "list", "--category", "foo"], b"");
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("search") && err.contains("ai-training"),
        "{err}"
    );
    let o = botscope(&["bots", "show", "Googlebot-Image"], b"");
    assert_eq!(o.status.code(), Some(0));
    assert!(
        stdout(&o).starts_with("name: Googlebot\n"),
        "{}",
        stdout(&o)
    );
}

/// `robots lint` on README's example: repeated notes folded into one line,
/// `--min-severity`, SARIF for CI; the R021 and size-cap messages say
/// what happened.
#[test]
fn robots_lint_reads_well() {
    let etsy = "examples/robots/www.etsy.com.txt";
    let o = botscope(&["robots", "lint", etsy], b"");
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(out.matches("[R008 redundant-rule]: ").count(), 3, "{out}");
    assert!(
        out.contains("… 41 more info[R008 redundant-rule] at lines 162, 163"),
        "{out}"
    );
    assert!(
        out.ends_with("www.etsy.com.txt: 0 errors, 1 warning, 44 info\n"),
        "{out}"
    );
    let o = botscope(&["robots", "lint", etsy, "--min-severity", "warning"], b"");
    assert_eq!(stdout(&o).lines().filter(|l| l.contains("R008")).count(), 0);
    assert!(stdout(&o).contains("R006"));
    let o = botscope(&["robots", "lint", etsy, "--format", "sarif"], b"");
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("sarif");
    assert_eq!(v["version"], "2.1.0");
    let results = v["runs"][0]["results"].as_array().expect("results");
    assert_eq!(results.len(), 45);
    assert_eq!(results[0]["ruleId"], "R006");
    assert_eq!(results[0]["level"], "warning");
    assert_eq!(
        results[0]["locations"][0]["physicalLocation"]["region"]["startLine"],
        1
    );
    assert!(
        v["runs"][0]["tool"]["driver"]["rules"]
            .as_array()
            .is_some_and(|r| r.len() == 2)
    );

    let f = tmp(
        "r021.txt",
        b"User-agent: *\nDisallow https://example.com/private\n",
    );
    let out = stdout(&botscope(&["robots", "lint", crate::arg(&f)], b""));
    assert!(
        out.contains("has no colon after `Disallow` and a full URL"),
        "{out}"
    );
    assert!(out.contains("help: write `Disallow: /private`"), "{out}");
    let f = tmp(
        "one-line.txt",
        b"User-agent: * Disallow: /aaaaaaaaaaaaaaaaaaaaaaaaaa",
    );
    let out = stdout(&botscope(
        &["robots", "lint", crate::arg(&f), "--max-bytes", "10"],
        b"",
    ));
    assert!(out.contains(":1:1: error[R014 size-cap]"), "{out}");
    assert!(
        out.contains("at most 10 bytes") && !out.contains("first 0"),
        "{out}"
    );
}

#[test]
fn robots_generate_blocks_a_category_and_keeps_the_base() {
    let out = crate::scratch("generate").join("robots.txt");
    let o = botscope(
        &[
            "robots",
            "generate",
            "--block",
            "ai-training",
            "--allow",
            "search",
            "ai-assistant",
            "--block-bot",
            "AhrefsBot",
            "--base",
            EBAY,
            "--out",
            crate::arg(&out),
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(0), "{}", crate::stderr(&o));
    let text = std::fs::read_to_string(&out).expect("written");
    assert!(
        text.contains("# ai-training: crawlers that collect training data"),
        "{text}"
    );
    assert!(text.contains("User-agent: GPTBot\n"), "{text}");
    assert!(
        text.contains("# AhrefsBot: blocked by name (--block-bot AhrefsBot)"),
        "{text}"
    );
    assert!(
        crate::stderr(&o).contains("verdicts checked"),
        "{}",
        crate::stderr(&o)
    );
    let check = |agent: &str, url: &str| {
        crate::run(&[
            "robots",
            "check",
            "--robots",
            crate::arg(&out),
            "--agent",
            agent,
            url,
        ])
        .status
        .code()
    };
    let base = |agent: &str, url: &str| {
        crate::run(&["robots", "check", "--robots", EBAY, "--agent", agent, url])
            .status
            .code()
    };
    assert_eq!(check("GPTBot", "https://www.ebay.com/"), Some(1));
    assert_eq!(check("AhrefsBot", "https://www.ebay.com/itm/1"), Some(1));
    for url in [
        "https://www.ebay.com/",
        "https://www.ebay.com/brw/x",
        "/b/shoes?_nkw=1",
    ] {
        assert_eq!(check("bingbot", url), base("bingbot", url), "{url}");
        assert_eq!(
            check("ChatGPT-User", url),
            base("ChatGPT-User", url),
            "{url}"
        );
    }

    // The per-category files the gate serves.
    let dir = crate::scratch("generate-gate");
    let o = botscope(
        &[
            "robots",
            "generate",
            "--block",
            "ai-training",
            "--base",
            EBAY,
            "--out-dir",
            crate::arg(&dir),
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(0), "{}", crate::stderr(&o));
    assert!(o.stdout.is_empty(), "only the directory is written");
    let same = botscope(
        &[
            "robots",
            "generate",
            "--block",
            "ai-training",
            "--base",
            EBAY,
        ],
        b"",
    );
    assert!(!same.stdout.is_empty());
    assert_eq!(
        std::fs::read(dir.join("default.txt")).expect("default"),
        same.stdout
    );
    for f in [
        "all-ok-bots.txt",
        "other-bots.txt",
        "suspect-bots.txt",
        "gptbot.txt",
    ] {
        assert!(dir.join(f).is_file(), "{f}");
    }

    // Refused: nothing written over the file that is there.
    for args in [
        &["--block", "search", "--allow", "search"][..],
        &["--block-bot", "not a bot"][..],
        &[][..],
    ] {
        let mut a = vec!["robots", "generate", "--out", crate::arg(&out)];
        a.extend_from_slice(args);
        let o = crate::run(&a);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", crate::stderr(&o));
        assert!(
            crate::stderr(&o).contains("nothing was written"),
            "{}",
            crate::stderr(&o)
        );
        assert_eq!(std::fs::read_to_string(&out).expect("kept"), text);
    }
}

#[test]
fn serve_limits_are_checked_before_it_starts() {
    for (flag, value, says) in [
        ("--request-timeout", "0s", "above 0"),
        ("--header-timeout", "soon", "not a duration"),
        ("--uploads-memory", "lots", "not a size"),
        ("--max-connections", "0", "0"),
    ] {
        let o = botscope(&["serve", "--listen", "127.0.0.1:1", flag, value], b"");
        assert_eq!(o.status.code(), Some(2), "{flag} {value}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(flag) && err.contains(says), "{flag}: {err}");
    }
}

#[test]
fn help_says_what_the_tool_is() {
    let o = botscope(&["--help"], b"");
    assert_eq!(o.status.code(), Some(0));
    let out = stdout(&o);
    assert!(
        out.starts_with("botscope: robots.txt and web robots, for crawler authors"),
        "{out}"
    );
    assert!(!out.contains("clap"), "{out}");
}

/// What `robots generate` writes lints clean: a crawler's name written as
/// its operator documents it (`AI2Bot`) is a note, not a warning.
#[test]
fn generated_files_lint_clean() {
    let out = crate::scratch("generate-lint").join("robots.txt");
    let o = botscope(
        &[
            "robots",
            "generate",
            "--block",
            "ai-training",
            "--out",
            out.to_str().expect("utf-8"),
        ],
        b"",
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = botscope(&["robots", "lint", out.to_str().expect("utf-8")], b"");
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{text}");
    assert!(text.contains("0 errors, 0 warnings"), "{text}");
    // The file has such names, and lint says what Google reads of them.
    let o = botscope(
        &[
            "robots",
            "lint",
            out.to_str().expect("utf-8"),
            "--min-severity",
            "note",
        ],
        b"",
    );
    assert!(
        stdout(&o).contains("Google's rules read only"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn keys_generate_writes_a_private_key_and_its_directory_and_never_overwrites() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = crate::scratch("keys").join("bot");
    let o = crate::run(&[
        "keys",
        "generate",
        "--out",
        crate::arg(&dir),
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", crate::stderr(&o));
    let summary: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    let key_file = dir.join("signing-key.jwk");
    let mode = std::fs::metadata(&key_file)
        .expect("key")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "the private key is its owner's alone");
    let key =
        botscope_httpsig::SigningKey::parse(&std::fs::read_to_string(&key_file).expect("read"))
            .expect("a key");
    assert_eq!(summary["keyid"], key.keyid());
    let published = std::fs::read(dir.join("http-message-signatures-directory")).expect("dir");
    let directory = botscope_httpsig::Directory::parse(&published).expect("a directory");
    assert_eq!(directory.key(&key.keyid()), Some(&key.public()));
    assert!(
        !String::from_utf8_lossy(&published).contains("\"d\""),
        "no private half published"
    );
    // A second run writes nothing.
    let before = std::fs::read(&key_file).expect("read");
    let o = crate::run(&["keys", "generate", "--out", crate::arg(&dir)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        crate::stderr(&o).contains("not overwriting"),
        "{}",
        crate::stderr(&o)
    );
    assert_eq!(std::fs::read(&key_file).expect("read"), before);
}

/// `verify --request`: a request signed by an agent whose key directory
/// is served over HTTPS on loopback, the agent named by a registry entry.
/// A loopback HTTPS server publishing `key` in a signed key directory at
/// the well-known path, and the test CA it trusts.
fn key_directory(
    key: &botscope_httpsig::SigningKey,
) -> (
    botscope_testkit::ipdb::FileServer,
    botscope_testkit::ipdb::TestCa,
) {
    use botscope_httpsig::{Directory, Request, sign_directory};
    use botscope_testkit::ipdb::{Canned, FileServer, TestCa};
    let ca = TestCa::new();
    let server = FileServer::start_tls_canned(std::collections::HashMap::new(), &ca);
    let now = botscope_os::unix_now();
    let body = Directory {
        keys: vec![(key.keyid(), key.public())],
        ..Directory::default()
    }
    .to_json();
    let dir_req = Request::new(
        "GET",
        "https",
        server.url().trim_start_matches("https://"),
        "/.well-known/http-message-signatures-directory",
        Vec::new(),
    );
    let mut headers =
        sign_directory(&dir_req, body.as_bytes(), &[key], now - 10, now + 3600).expect("sign");
    headers.push((
        "Content-Type".into(),
        "application/http-message-signatures-directory+json".into(),
    ));
    server.set(
        "/.well-known/http-message-signatures-directory",
        Canned {
            status: "200 OK".into(),
            headers,
            body: body.into_bytes(),
        },
    );
    (server, ca)
}

#[test]
fn verify_request_checks_the_signature_with_the_agents_directory() {
    use botscope_httpsig::{Request, SignSpec, SigningKey, sign_request};
    let key = SigningKey::generate().expect("key");
    let (server, ca) = key_directory(&key);
    let agent = server.url();
    let now = botscope_os::unix_now();
    let ca_file = tmp("webbotauth-ca.pem", ca.pem.as_bytes());
    let registry = tmp(
        "webbotauth.yaml",
        format!("bots:\n- name: SignedBot\n  category: ai-assistant\n  ua_tokens: [SignedBot]\n  signature_agents: ['{agent}']\n").as_bytes(),
    );
    let signed_head = |host: &str| {
        let req = Request::new("GET", "https", "shop.example", "/item?id=7", Vec::new());
        let spec = SignSpec::new(Some(&agent), now - 5, 300, Some("bm9uY2UtY2xp".into()));
        let s = sign_request(&req, &key, &spec).expect("sign");
        let mut head = format!(
            "GET /item?id=7 HTTP/1.1\r\nHost: {host}\r\nUser-Agent: SignedBot/1.0\r\nX-Forwarded-For: 203.0.113.9, 10.0.0.1\r\n"
        );
        for (n, v) in s.headers() {
            head.push_str(&format!("{n}: {v}\r\n"));
        }
        head.push_str("\r\n");
        head
    };
    let run = |head: &str, extra: &[&str]| {
        let mut args = vec![
            "verify",
            "--request",
            "-",
            "--registry",
            crate::arg(&registry),
            "--ca-file",
            crate::arg(&ca_file),
            "--allow-private",
            "--format",
            "json",
            "--no-dns-cache",
        ];
        args.extend_from_slice(extra);
        let o = botscope(&args, head.as_bytes());
        let v: serde_json::Value = serde_json::from_str(&stdout(&o))
            .unwrap_or_else(|e| panic!("{e}: {} {}", stdout(&o), crate::stderr(&o)));
        (o.status.code(), v)
    };
    let (code, v) = run(&signed_head("shop.example"), &[]);
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["verdict"], "verified");
    assert_eq!(v["ip"], "203.0.113.9");
    assert_eq!(v["claimed_bot"], "SignedBot");
    assert_eq!(v["methods"][0], "signature");
    assert_eq!(v["signature"]["outcome"], "verified");
    assert_eq!(v["signature"]["agent"], agent.as_str());
    assert_eq!(v["signature"]["keyid"], key.keyid());
    assert_eq!(v["signature"]["bot"], "SignedBot");
    // The identifier the registry matched, and every signature listed.
    let well_known = format!("{agent}/.well-known/http-message-signatures-directory");
    assert_eq!(v["signature"]["identifier"], well_known.as_str());
    assert_eq!(v["signature"]["signatures"][0]["reading"], "origin");
    assert_eq!(v["signature"]["signatures"][0]["agent_form"], "dictionary");
    assert!(
        v["signature"]["signatures"][0]["expires_at"]
            .as_str()
            .is_some_and(|t| t.ends_with('Z'))
    );
    // A crawler that moves to sending its well-known URL keeps its name:
    // the registry matches identifiers (draft-01), not spellings.
    let moved = {
        let req = Request::new("GET", "https", "shop.example", "/item?id=7", Vec::new());
        let spec = SignSpec::new(Some(&well_known), now - 5, 300, Some("bW92ZWQ=".into()));
        let s = sign_request(&req, &key, &spec).expect("sign");
        let mut head = "GET /item?id=7 HTTP/1.1\r\nHost: shop.example\r\nUser-Agent: SignedBot/1.0\r\nX-Forwarded-For: 203.0.113.9\r\n".to_owned();
        for (n, v) in s.headers() {
            head.push_str(&format!("{n}: {v}\r\n"));
        }
        head + "\r\n"
    };
    let (code, v) = run(&moved, &[]);
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["signature"]["bot"], "SignedBot", "{v}");
    assert_eq!(v["signature"]["signatures"][0]["reading"], "well-known");
    // Without --allow-private the loopback directory is not fetched, and
    // the reason says which flag would.
    let mut strict = vec![
        "verify",
        "--request",
        "-",
        "--registry",
        crate::arg(&registry),
        "--ca-file",
        crate::arg(&ca_file),
        "--format",
        "json",
        "--no-dns-cache",
    ];
    let o = botscope(&strict, signed_head("shop.example").as_bytes());
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    assert_eq!(v["signature"]["outcome"], "unverified", "{v}");
    let reason = v["signature"]["reason"].as_str().expect("reason");
    assert!(
        reason.contains("(loopback)") && reason.contains("--allow-private"),
        "{reason}"
    );
    strict.clear();
    // The same signature sent to another host does not hold.
    let (_, v) = run(&signed_head("other.example"), &[]);
    assert_eq!(v["signature"]["outcome"], "invalid");
    assert_ne!(v["verdict"], "verified");
    // Offline, nothing is fetched: the signature is unverified.
    let hits = server.hits();
    let (_, v) = run(&signed_head("shop.example"), &["--offline"]);
    assert_eq!(v["signature"]["outcome"], "unverified");
    assert_eq!(server.hits(), hits);
    // --at: the draft's own vector (draft-01, Ed25519, dictionary form),
    // checked at its own time with the RFC 9421 test key held by hand:
    // verified, attributed to the key alone (its directory is not
    // fetched), and only with the test key allowed and the century-long
    // validity it has.
    let vector = "GET /path/to/resource HTTP/1.1\r\nHost: example.com\r\nSignature-Agent: sig2=\"https://signature-agent.test\"\r\nSignature-Input: sig2=(\"@authority\" \"signature-agent\";key=\"sig2\");created=1735689600;keyid=\"poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U\";alg=\"ed25519\";expires=4889289600;nonce=\"n9p433xm+NJ3ph3upfBIGmsuwHw387YV7Q/F+6BSpGCVjYCqQw6rznNA8PVVLySrAWsv0hQtFioQb6E1YsauiA==\";tag=\"web-bot-auth\"\r\nSignature: sig2=:CGokAoY/FrPpyuzTe1Fb2kLTAH9Idw6qSFd1+D77r1firsMRCxeuLu5e6O+ek3zQgDMAzjiXtLVfqE00xnABCQ==:\r\n\r\n";
    let rfc_keys = tmp(
        "rfc9421-keys.json",
        br#"{"keys":[{"kty":"OKP","crv":"Ed25519","x":"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs"}]}"#,
    );
    let at = |extra: &[&str]| {
        let mut args = vec![
            "verify",
            "192.0.2.1",
            "--request",
            "-",
            "--offline",
            "--keys",
            crate::arg(&rfc_keys),
            "--at",
            "2025-01-01T00:01:00Z",
            "--format",
            "json",
        ];
        args.extend_from_slice(extra);
        let o = botscope(&args, vector.as_bytes());
        serde_json::from_str::<serde_json::Value>(&stdout(&o))
            .unwrap_or_else(|e| panic!("{e}: {}", crate::stderr(&o)))
    };
    let v = at(&["--allow-test-keys", "--max-validity", "100y"]);
    assert_eq!(v["signature"]["outcome"], "verified", "{v}");
    assert_eq!(
        v["signature"]["identifier"],
        "urn:ietf:params:oauth:jwk-thumbprint:sha-256:poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U"
    );
    assert!(v["signature"]["bot"].is_null());
    let v = at(&["--max-validity", "100y"]);
    assert_eq!(v["signature"]["outcome"], "invalid");
    assert!(
        v["signature"]["reason"]
            .as_str()
            .expect("r")
            .contains("test key"),
        "{v}"
    );
    let v = at(&["--allow-test-keys"]);
    assert_eq!(
        v["signature"]["reason"],
        "valid for 36500 day(s), more than the 1 day(s) accepted (the draft RECOMMENDS at most 24 hours)"
    );
    // The trace shows the signature base.
    let mut args = vec![
        "verify",
        "--request",
        "-",
        "--registry",
        crate::arg(&registry),
        "--ca-file",
        crate::arg(&ca_file),
        "--allow-private",
        "--trace",
        "--no-dns-cache",
    ];
    let o = botscope(&args, signed_head("shop.example").as_bytes());
    let err = crate::stderr(&o);
    assert!(err.contains("\"@authority\": shop.example"), "{err}");
    assert!(
        err.contains(
            "a bare origin (the earlier drafts' form), read as its well-known key directory"
        ),
        "{err}"
    );
    assert!(stdout(&o).contains("signature\tverified"), "{}", stdout(&o));
    // A head that is not one is an error, exit 2.
    args.truncate(3);
    let o = botscope(&args, b"not a request\n");
    assert_eq!(o.status.code(), Some(2));
    assert!(
        crate::stderr(&o).contains("not a request head"),
        "{}",
        crate::stderr(&o)
    );
}

#[test]
fn logs_analyze_verifies_signed_requests_with_the_agents_directory() {
    use botscope_httpsig::{Request, SignSpec, SigningKey, sign_request};
    let key = SigningKey::generate().expect("key");
    let (server, ca) = key_directory(&key);
    let agent = server.url();
    let ca_file = tmp("logs-webbotauth-ca.pem", ca.pem.as_bytes());
    let registry = tmp(
        "logs-webbotauth.yaml",
        format!("bots:\n- name: SignedBot\n  category: ai-assistant\n  ua_tokens: [SignedBot]\n  signature_agents: ['{agent}']\n").as_bytes(),
    );
    // A JSON log, as nginx writes one with `escape=json`: three signed
    // requests (one to a host its signature does not name), one unsigned.
    let t = 1_700_000_000;
    let req = Request::new("GET", "https", "shop.example", "/", Vec::new());
    let spec = SignSpec::new(Some(&agent), t - 5, 300, Some("bm9uY2U".into()));
    let signed = sign_request(&req, &key, &spec).expect("sign");
    let mut log = String::new();
    for (k, host) in ["shop.example", "shop.example", "other.example", ""]
        .iter()
        .enumerate()
    {
        let mut line = serde_json::json!({
            "remote_addr": "203.0.113.9",
            "time_iso8601": botscope_accesslog::format_rfc3339(t + k as i64),
            "request": "GET / HTTP/1.1",
            "status": 200,
            "http_user_agent": "SignedBot/1.0",
            "host": if host.is_empty() { "shop.example" } else { host },
        });
        if !host.is_empty() {
            for (n, v) in signed.headers() {
                line[format!("http_{}", n.to_ascii_lowercase().replace('-', "_"))] = v.into();
            }
        }
        log.push_str(&line.to_string());
        log.push('\n');
    }
    let log_file = tmp("signed.jsonl", log.as_bytes());
    let run = |extra: &[&str]| {
        let mut args = vec![
            "logs",
            "analyze",
            crate::arg(&log_file),
            "--registry",
            crate::arg(&registry),
            "--ca-file",
            crate::arg(&ca_file),
            "--allow-private",
            "--format",
            "json",
            "--no-progress",
        ];
        args.extend_from_slice(extra);
        let o = botscope(&args, b"");
        assert_eq!(o.status.code(), Some(0), "{}", crate::stderr(&o));
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
        v
    };
    let v = run(&["--verify"]);
    let a = &v["signature_agents"][0];
    assert_eq!(a["agent"], agent.as_str(), "{v}");
    assert_eq!(a["robot"], "SignedBot");
    assert_eq!(
        (
            a["signed"].as_u64(),
            a["verified"].as_u64(),
            a["invalid"].as_u64()
        ),
        (Some(3), Some(2), Some(1))
    );
    assert_eq!(a["reasons"]["bad-signature"], 1);
    let bot = &v["robots"]["SignedBot"];
    assert_eq!(bot["signatures"]["signed"], 3);
    assert_eq!(bot["signatures"]["verified"], 2);
    assert_eq!(bot["verification"]["verified"]["ips"], 1, "{bot}");
    // Without --verify no directory is fetched: counted, undecided.
    let hits = server.hits();
    let v = run(&[]);
    assert_eq!(v["signature_agents"][0]["verified"], 0);
    assert_eq!(v["signature_agents"][0]["signed"], 3);
    assert_eq!(server.hits(), hits);
}

#[test]
fn robots_check_reports_usage_preferences_after_the_verdict() {
    let robots = tmp(
        "usage-robots.txt",
        b"User-Agent: *\nAllow: /\nDisallow: /never/\nContent-Usage: / train-ai=n\nContent-Usage: /ai-ok/ train-ai=y, search=y\nContent-Signal: search=yes, ai-train=no\n",
    );
    let args = |fmt: &'static str| {
        vec![
            "robots",
            "check",
            "--robots",
            crate::arg(&robots),
            "--agent",
            "ExampleBot",
            "--format",
            fmt,
            "https://a.example/test",
            "https://a.example/never/test",
            "https://a.example/ai-ok/test",
        ]
    };
    let o = botscope(&args("json"), b"");
    assert_eq!(o.status.code(), Some(1), "one URL is disallowed");
    let rows: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    assert_eq!(rows[0]["usage"], serde_json::json!({"train-ai": "n"}));
    assert_eq!(
        rows[1]["usage"],
        serde_json::Value::Null,
        "not crawlable: no preference"
    );
    assert_eq!(
        rows[2]["usage"],
        serde_json::json!({"train-ai": "y", "search": "y"})
    );
    for r in &rows {
        assert_eq!(
            r["content_signal"],
            serde_json::json!({"search": "yes", "ai-train": "no"})
        );
    }
    let text = stdout(&botscope(&args("text"), b""));
    let first = text.lines().next().expect("a line");
    assert!(
        first.starts_with("allowed\thttps://a.example/test\t")
            && first.ends_with("\tusage: train-ai=n\tcontent-signal: ai-train=no, search=yes"),
        "{text}"
    );
    // The header, as `robots meta` reads it.
    let page = tmp("usage-page.html", b"<html><head></head></html>");
    let o = botscope(
        &[
            "robots",
            "meta",
            crate::arg(&page),
            "--agent",
            "GPTBot",
            "--header",
            "Content-Usage: train-ai=n, search=y",
            "--format",
            "json",
        ],
        b"",
    );
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    assert_eq!(
        v["usage"],
        serde_json::json!({"train-ai": "n", "search": "y"}),
        "{v}"
    );
    // Repeated field lines are one Dictionary: the later key wins, a
    // retired label is ignored and named, and one line that breaks the
    // Dictionary leaves everything unknown.
    let meta = |headers: &[&str]| {
        let mut args = vec!["robots", "meta", crate::arg(&page), "--agent", "GPTBot"];
        for h in headers {
            args.extend(["--header", h]);
        }
        args.extend(["--format", "json"]);
        let o = botscope(&args, b"");
        serde_json::from_str::<serde_json::Value>(&stdout(&o)).expect("json")
    };
    let v = meta(&[
        "Content-Usage: train-ai=n, bots=n",
        "Content-Usage: train-ai=y",
    ]);
    assert_eq!(v["usage"], serde_json::json!({"train-ai": "y"}), "{v}");
    assert!(
        v["warnings"]
            .to_string()
            .contains("draft-ietf-aipref-vocab-05"),
        "{v}"
    );
    let v = meta(&["Content-Usage: train-ai=n", "Content-Usage: Search=y"]);
    assert_eq!(v["usage"], serde_json::json!({}), "{v}");
    assert!(v["warnings"].to_string().contains("usage-malformed"), "{v}");
    // `robots generate --usage` writes both forms, and refuses what it cannot read.
    let o = botscope(&["robots", "generate", "--usage", "train-ai=n"], b"");
    assert_eq!(o.status.code(), Some(0), "{}", crate::stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("Content-Usage: / train-ai=n\nContent-Signal: ai-train=no\n"),
        "{out}"
    );
    let o = botscope(&["robots", "generate", "--usage", "train-genai=n"], b"");
    assert_eq!(o.status.code(), Some(2));
    assert!(stdout(&o).is_empty());
}
