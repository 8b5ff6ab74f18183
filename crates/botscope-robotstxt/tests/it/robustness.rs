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
