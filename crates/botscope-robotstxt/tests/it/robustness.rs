//! No panic, whatever the input; bounded memory for compiled files.

use botscope_robotstxt::{Matcher, ParseOptions, Robots, Semantics, lint};

fn exercise(body: &[u8]) {
    let robots = Robots::parse(body);
    let _ = lint(&robots);
    for sem in [Semantics::Google, Semantics::Draft1996] {
        let m = Matcher::compile(body, sem, &ParseOptions::default());
        for url in URLS {
            let _ = m.check("Googlebot", url);
            let _ = m.check("Mozilla/5.0 (compatible; bingbot/2.0)", url);
        }
        let _ = m.crawl_delay("Googlebot");
        for raw in [
            &b"https://example.com/\xff\xfe?\x00"[..],
            b"\xc3",
            b"//\xff/",
            b"\xff://x/y",
        ] {
            let v = m.check_path("Googlebot", &botscope_robotstxt::path_of(raw));
            assert!(v.allowed || v.rule.is_some());
        }
    }
}

const URLS: &[&str] = &[
    "",
    "/",
    "relative/path",
    "example.com/a?b",
    "//example.com/x",
    "https://例え.jp/パス",
    "http://[2001:db8::1]:8080/x?y#z",
    "https://example.com/%zz%",
    "https://example.com/\u{fffd}",
    "mailto:a@b",
    "?",
    "#",
];

#[test]
fn every_corpus_file() {
    let dir = crate::data("corpus");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).expect("corpus dir") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "txt") {
            exercise(&std::fs::read(&path).expect("read"));
            n += 1;
        }
    }
    assert!(n > 250);
}

#[test]
fn hostile_inputs() {
    let mut big = Vec::new();
    while big.len() < 10 * 1024 * 1024 {
        big.extend_from_slice(b"User-agent: *\nDisallow: /*a*b*c*d*e*f*g*h*$\n");
    }
    let mut long_line = b"Disallow: /".to_vec();
    long_line.extend(std::iter::repeat_n(b'*', 1024 * 1024));
    let binary: Vec<u8> = (0..100_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let html = b"<!DOCTYPE html><html><head><title>Not found</title></head><body><p>User-agent: *</p></body></html>";
    for body in [
        &big[..],
        &long_line,
        &binary,
        html,
        b"\0\0\0",
        b"\xEF\xBB",
        b"\r\r\n\n\r",
        b"::::",
        b"*",
    ] {
        exercise(body);
    }
}

#[test]
fn compiled_size_is_at_most_twice_the_file() {
    let dir = crate::data("corpus");
    for entry in std::fs::read_dir(dir).expect("corpus dir") {
        let path = entry.expect("entry").path();
        if path.extension().is_none_or(|e| e != "txt") {
            continue;
        }
        let body = std::fs::read(&path).expect("read");
        let m = Matcher::compile(&body, Semantics::Google, &ParseOptions::unlimited());
        assert!(
            m.heap_size() <= 2 * body.len().max(1),
            "{}: {} bytes compiled from {}",
            path.display(),
            m.heap_size(),
            body.len()
        );
    }
}

/// Files made of the shortest rule lines there are, in one group big
/// enough to have its head filters kept apart: the compiled form stays
/// within three times the file (the fuzz target's bound), whatever the
/// lines' shape.
#[test]
fn dense_rules_compile_within_three_times_the_file() {
    for line in [
        &b"allow:\n"[..],
        b"allow:/\n",
        b"allow:*\n",
        b"allow:$\n",
        b"allow:/a\r",
        b"disallow:/ab\n",
        b"allow:/index.html\n",
        b"allow:\xc3\xa9\n",
    ] {
        for n in [1, 15, 16, 17, 1000] {
            let mut body = b"user-agent:a\n".to_vec();
            for _ in 0..n {
                body.extend_from_slice(line);
            }
            let m = Matcher::compile(&body, Semantics::Google, &ParseOptions::unlimited());
            assert!(
                m.heap_size() <= 3 * body.len() + 64,
                "{} lines of {:?}: {} bytes compiled from {}",
                n,
                String::from_utf8_lossy(line),
                m.heap_size(),
                body.len()
            );
        }
    }
}

/// The names of a file and the selection each makes give every agent's
/// selection without the file: the index stores them so that any agent's
/// restriction in any stored version is found without parsing it again.
#[test]
fn names_give_every_agents_selection() {
    use botscope_robotstxt::{Matcher, ParseOptions, Semantics, pick_name};
    let mut bodies: Vec<Vec<u8>> = Vec::new();
    for entry in std::fs::read_dir(crate::data("corpus")).expect("corpus dir") {
        bodies.push(std::fs::read(entry.expect("entry").path()).expect("read"));
    }
    bodies.push(
        b"User-agent: bot\nDisallow: /a\n\nUser-agent: googlebot\nUser-agent: GoogleBot\nDisallow: /\n\nUser-agent: *\nDisallow: /b\n"
            .to_vec(),
    );
    bodies
        .push(b"User-agent: *\nUser-agent: *\nDisallow: /x\n\nUser-agent: *\nAllow: /\n".to_vec());
    let mut checked = 0u64;
    for body in &bodies {
        for sem in [Semantics::Google, Semantics::Draft1996] {
            let m = Matcher::compile(body, sem, &ParseOptions::default());
            let names = m.names();
            let keys: Vec<&[u8]> = names.iter().map(|(n, _)| n.as_slice()).collect();
            let mut agents: Vec<String> = [
                "Googlebot",
                "googlebot-news",
                "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
                "GPTBot",
                "CCBot/2.0",
                "bingbot",
                "msnbot",
                "*",
                "",
                "Slurp",
                "ia_archiver",
                "anthropic-ai",
                "qqqqqqqq",
            ]
            .map(str::to_owned)
            .to_vec();
            for (n, _) in &names {
                let n = String::from_utf8_lossy(n).into_owned();
                agents.push(n.to_uppercase());
                agents.push(format!("{n}/1.0"));
                agents.push(format!("x{n}x"));
                agents.push(n);
            }
            for a in &agents {
                let want = m.select(a);
                let got =
                    pick_name(sem, &keys, a).map_or_else(|| m.unnamed(), |i| names[i].1.clone());
                assert_eq!(
                    got,
                    want,
                    "{sem:?} agent {a:?} in {}",
                    String::from_utf8_lossy(body)
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 10_000, "{checked}");
}
