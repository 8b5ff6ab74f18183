//! RSL documents and prices from arbitrary bytes: the bytes as a document,
//! and inside a valid `<rsl><content><license>` (so the fuzzer reaches the
//! vocabulary and payments); each gives contents and diagnostics, never a
//! panic. Its cost bound: at most one diagnostic per byte of input (plus
//! one), each message short, each place inside the input; a content found
//! for a path is one of the document's. The first line as a price header:
//! a price read prints as a header that reads back as the same price.
//! The bytes as a licence server's answers (OLP introspection and token)
//! and the first line as an `Authorization` field: a permit is only ever
//! for a resource that covers the page asked about, an issued token is one
//! an `Authorization: License` field carries back, a token presented is
//! at most 4 KiB of token68.
#![no_main]

use botscope_terms::Price;
use botscope_terms::olp::{self, Introspected, Presented};
use botscope_terms::rsl::Document;
use libfuzzer_sys::fuzz_target;

fn check(input: &[u8]) {
    let d = Document::parse(input);
    assert!(
        d.diagnostics.len() <= input.len() + 1,
        "{} diagnostics",
        d.diagnostics.len()
    );
    let lines = 1 + input.iter().filter(|&&b| b == b'\n').count();
    for x in &d.diagnostics {
        assert!(x.message.len() <= 400, "{}", x.message);
        assert!(!x.message.chars().any(char::is_control), "{:?}", x.message);
        assert!(
            x.line >= 1 && usize::try_from(x.line).unwrap() <= lines,
            "{x:?}"
        );
        assert!(x.column >= 1, "{x:?}");
    }
    for path in ["/", "/a/b", "/news/today?x=1"] {
        if let Some(c) = d.content_for("https://example.com", path) {
            assert!(d.contents.iter().any(|o| std::ptr::eq(o, c)));
        }
    }
}

fuzz_target!(|data: &[u8]| {
    check(data);
    let text = String::from_utf8_lossy(data);
    let wrapped = format!(
        "<rsl xmlns=\"https://rslstandard.org/rsl\"><content url=\"/\"><license>{text}</license></content></rsl>"
    );
    check(wrapped.as_bytes());
    let first = text.lines().next().unwrap_or("");
    if let Ok(p) = Price::parse_header(first) {
        assert_eq!(Price::parse_header(&p.to_string()), Ok(p), "{first:?}");
    }
    let asked = "https://example.com/news/a";
    if let Ok(Introspected::Permitted { covers, .. }) =
        olp::read_introspection(data, asked, 1_800_000_000)
    {
        assert!(olp::covers(&covers, asked), "{covers:?}");
    }
    if let Ok(i) = olp::read_token_answer(200, data) {
        let field = format!("License {}", i.token);
        assert_eq!(
            olp::presented(&[&field]),
            Presented::Token(i.token.as_str())
        );
    }
    if let Presented::Token(t) = olp::presented(&[first]) {
        assert!(
            t.len() <= olp::MAX_TOKEN_BYTES && !t.contains([' ', '\t', '"']),
            "{t:?}"
        );
    }
});
