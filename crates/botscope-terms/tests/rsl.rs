//! RSL documents: the specification's and its guides' own examples, read
//! as they mean; and hostile documents, each refused at a bounded cost
//! with a line and column, never a panic or a licence granted by mistake.

#![allow(clippy::unwrap_used)]

use botscope_terms::rsl::{Document, Grant, MAX_BYTES, MAX_DEPTH, MAX_NODES, Severity, TermKind};

fn codes(d: &Document) -> Vec<&'static str> {
    d.diagnostics.iter().map(|x| x.code).collect()
}

/// RSL 1.0's own site-wide example: no AI use at all.
#[test]
fn the_specifications_site_wide_prohibition() {
    let d = Document::parse(
        br#"<rsl xmlns="https://rslstandard.org/rsl">
  <content url="/">
    <license>
      <prohibits type="usage">ai-all</prohibits>
    </license>
  </content>
</rsl>"#,
    );
    assert!(d.diagnostics.is_empty(), "{:?}", d.diagnostics);
    let c = d.content_for("https://example.com", "/any/page").unwrap();
    assert_eq!(c.line, 2);
    let l = &c.licenses[0];
    for ai in ["ai-train", "ai-input", "ai-index", "ai-all"] {
        assert_eq!(l.grants(ai, None, None), Grant::Prohibits, "{ai}");
    }
    assert_eq!(l.grants("search", None, None), Grant::Permits);
    assert!(l.is_free());
}

/// RSL's guide to AI Preferences: a subscription licence for training,
/// written with the aipref label, and a custom rate card.
#[test]
fn the_ai_preferences_guide() {
    let d = Document::parse(
        br#"<rsl xmlns="https://rslstandard.org/rsl">
  <content url="/">
    <license>
      <permits type="usage">train-ai</permits>
      <payment type="subscription">
        <custom>https://your-website.com/contact-form.html</custom>
      </payment>
    </license>
  </content>
</rsl>"#,
    );
    assert_eq!(codes(&d), ["aipref-usage"]);
    let l = &d.contents[0].licenses[0];
    assert_eq!(l.permits[0].values, ["ai-train"]);
    assert_eq!(l.grants("ai-train", None, None), Grant::Permits);
    assert_eq!(l.grants("search", None, None), Grant::NotListed);
    assert!(!l.is_free());
    assert_eq!(l.price(), None, "a custom rate card states no amount");
    assert_eq!(
        l.payments[0].custom,
        ["https://your-website.com/contact-form.html"]
    );
}

/// A document with a licence server, paid crawling, paid training and a
/// free section, and an extension namespace's elements (OpenRSL's
/// published example): the extension is skipped, the longest pattern
/// decides.
#[test]
fn several_contents_a_licence_server_and_an_extension() {
    let d = Document::parse(
        br#"<?xml version="1.0" encoding="UTF-8"?>
<rsl xmlns="https://rslstandard.org/rsl" xmlns:openrsl="https://openrsl.org/ns/extensions">
  <content url="/" server="https://olp.example.com">
    <license>
      <permits type="usage">ai-index</permits>
      <prohibits type="usage">ai-train</prohibits>
      <payment type="crawl">
        <amount currency="USD">0.001</amount>
        <openrsl:binding scheme="pds" ref="offer-abc-123"/>
      </payment>
    </license>
  </content>
  <content url="/research/" server="https://olp.example.com">
    <license>
      <permits type="usage">ai-train</permits>
      <payment type="training">
        <amount currency="USD">10.00</amount>
      </payment>
    </license>
  </content>
  <content url="/open/">
    <license>
      <permits type="usage">all</permits>
      <payment type="free"/>
    </license>
  </content>
</rsl>"#,
    );
    assert!(d.diagnostics.is_empty(), "{:?}", d.diagnostics);
    assert_eq!(d.contents.len(), 3);
    let at = |p: &str| d.content_for("https://example.com", p).unwrap();
    let root = at("/blog/post");
    assert_eq!(root.server.as_deref(), Some("https://olp.example.com"));
    assert_eq!(root.licenses[0].price().unwrap().to_string(), "USD 0.001");
    assert_eq!(
        root.licenses[0].grants("ai-train", None, None),
        Grant::Prohibits
    );
    assert_eq!(
        root.licenses[0].grants("ai-index", None, None),
        Grant::Permits
    );
    let research = at("/research/paper");
    assert_eq!(research.url, "/research/");
    assert_eq!(
        research.licenses[0].price().unwrap().to_string(),
        "USD 10.00"
    );
    let open = at("/open/x");
    assert!(open.licenses[0].is_free());
    assert_eq!(
        open.licenses[0].grants("ai-train", None, None),
        Grant::Permits
    );
}

/// Full URLs with wildcards (a licence editor's documented form), user
/// and geo terms, copyright, terms and schema, legal statements.
#[test]
fn full_urls_users_countries_and_the_rest() {
    let d = Document::parse(
        br#"<rsl xmlns="https://rslstandard.org/rsl">
  <content url="https://example.com/premium/*" encrypted="true" lastmod="2026-11-01T10:00:00Z">
    <copyright type="organization" email="rights@example.com" url="https://example.com">Example Media</copyright>
    <terms>https://example.com/terms</terms>
    <schema>https://example.com/schema.json</schema>
    <license>
      <permits type="usage">ai-input search</permits>
      <permits type="user">non-commercial
        education</permits>
      <prohibits type="geo">ru KP</prohibits>
      <legal type="warranty">ownership authority</legal>
      <payment type="use"><amount currency="EUR">0.05</amount></payment>
    </license>
  </content>
</rsl>"#,
    );
    assert!(d.diagnostics.is_empty(), "{:?}", d.diagnostics);
    let c = &d.contents[0];
    assert_eq!(c.scope.origin.as_deref(), Some("https://example.com"));
    assert_eq!(c.scope.path, "/premium/*");
    assert!(c.encrypted);
    assert_eq!(c.copyright.as_ref().unwrap().name, "Example Media");
    assert_eq!(c.terms, ["https://example.com/terms"]);
    let l = &c.licenses[0];
    assert_eq!(l.prohibits[0].kind, TermKind::Geo);
    assert_eq!(l.prohibits[0].values, ["RU", "KP"]);
    assert_eq!(l.legal[0].values, ["ownership", "authority"]);
    assert_eq!(
        l.grants("ai-input", Some("education"), Some("FR")),
        Grant::Permits
    );
    assert_eq!(
        l.grants("ai-input", Some("commercial"), Some("FR")),
        Grant::NotListed
    );
    assert_eq!(
        l.grants("ai-input", Some("education"), Some("ru")),
        Grant::Prohibits
    );
    assert_eq!(
        l.grants("ai-train", Some("education"), None),
        Grant::NotListed
    );
    // Another site's page is not this content's.
    assert!(d.content_for("https://example.org", "/premium/x").is_none());
    assert!(d.content_for("https://EXAMPLE.com", "/premium/x").is_some());
    assert!(d.content_for("https://example.com", "/free/x").is_none());
}

/// An RSS feed with the RSL module: its items' `rsl:content`.
#[test]
fn a_licence_feed() {
    let d = Document::parse(
        br#"<rss xmlns:rsl="https://rslstandard.org/rsl" version="2.0">
  <channel><title>News</title>
    <item><title>One</title><link>https://example.com/1</link>
      <rsl:content url="https://example.com/1">
        <rsl:license><rsl:permits type="usage">search</rsl:permits></rsl:license>
      </rsl:content>
    </item>
  </channel>
</rss>"#,
    );
    assert!(d.diagnostics.is_empty(), "{:?}", d.diagnostics);
    assert_eq!(d.contents.len(), 1);
    assert_eq!(d.contents[0].line, 4);
}

/// Mistakes a site makes, each named where it is.
#[test]
fn mistakes_are_named_with_their_place() {
    let d = Document::parse(
        br#"<rsl xmlns="https://rslstandard.org/rsl">
  <content>
    <license/>
  </content>
  <content url="news/" server="olp.example.com"/>
  <content url="/a/" server="http://olp.example.com" encrypted="yes" lastmod="yesterday">
    <license>
      <permits>search</permits>
      <permits type="usage">ai-everything</permits>
      <permits type="user">robots</permits>
      <permits type="geo">France</permits>
      <payment type="inference"/>
      <payment type="barter"><amount currency="usd">1</amount><amount currency="USD">1,5</amount></payment>
      <payment type="free"><amount currency="USD">1</amount></payment>
      <surprise/>
    </license>
  </content>
  <content url="/a/"><license/></content>
</rsl>"#,
    );
    let got: Vec<(u32, &str)> = d.diagnostics.iter().map(|x| (x.line, x.code)).collect();
    assert_eq!(
        got,
        [
            (2, "missing-url"),
            (5, "bad-url"),
            (6, "insecure-server"),
            (6, "bad-boolean"),
            (6, "bad-date"),
            (8, "missing-type"),
            (9, "unknown-usage"),
            (10, "unknown-user"),
            (11, "unknown-geo"),
            (12, "retired-payment"),
            (12, "no-price"),
            (13, "unknown-payment"),
            (13, "bad-amount"),
            (13, "bad-amount"),
            (13, "no-price"),
            (14, "free-with-amount"),
            (15, "unknown-element"),
            (7, "several-payments"),
            (18, "duplicate-content"),
        ],
        "{:#?}",
        d.diagnostics
    );
    // Columns are characters from 1.
    assert_eq!(d.diagnostics[0].column, 3);
    // The first of two identical contents applies.
    let c = d.content_for("https://example.com", "/a/b").unwrap();
    assert_eq!(c.line, 6);
}

/// Hostile documents: each refused with an error at its place, at a cost
/// bounded by the caps, and never a licence.
#[test]
fn hostile_documents_are_refused_at_bounded_cost() {
    let refused = |input: &[u8], code: &str| {
        let d = Document::parse(input);
        assert!(d.contents.is_empty(), "{code}: licensed something");
        let e = d
            .diagnostics
            .iter()
            .find(|x| x.severity == Severity::Error)
            .unwrap_or_else(|| panic!("{code}: no error: {:?}", d.diagnostics));
        assert_eq!(e.code, code, "{:?}", d.diagnostics);
        e.clone()
    };
    // Over the size read.
    let mut big = b"<rsl xmlns=\"https://rslstandard.org/rsl\">".to_vec();
    big.resize(MAX_BYTES + 1, b' ');
    refused(&big, "too-large");
    // Nested a thousand deep (within the size): refused at the first
    // element past the depth.
    let deep = format!(
        "<rsl xmlns=\"https://rslstandard.org/rsl\">{}{}</rsl>",
        "<content url=\"/\">".repeat(1000),
        "</content>".repeat(1000)
    );
    let e = refused(deep.as_bytes(), "too-deep");
    assert_eq!(e.line, 1);
    assert!(e.column > 1 && usize::try_from(e.column).unwrap() < 20 * (MAX_DEPTH + 2));
    // Nested a hundred thousand deep, as small as it gets.
    let deeper = format!("{}{}", "<a>".repeat(100_000), "</a>".repeat(100_000));
    let d = Document::parse(deeper.as_bytes());
    assert!(d.contents.is_empty());
    assert!(d.diagnostics.iter().any(|x| x.severity == Severity::Error));
    // More nodes than are built.
    let wide = format!(
        "<rsl xmlns=\"https://rslstandard.org/rsl\">{}</rsl>",
        "<x/>".repeat(usize::try_from(MAX_NODES).unwrap() + 1)
    );
    refused(wide.as_bytes(), "xml");
    // A billion laughs: no DTD at all.
    let laughs = br#"<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>
<rsl xmlns="https://rslstandard.org/rsl"><content url="/">&lol2;</content></rsl>"#;
    let e = refused(laughs, "xml");
    assert_eq!(e.line, 2);
    // Not UTF-8: the place of the first bad byte.
    let e = refused(
        "<rsl xmlns=\"https://rslstandard.org/rsl\">\n  <content url=\"/é"
            .bytes()
            .chain(*b"\xff\"/></rsl>")
            .collect::<Vec<u8>>()
            .as_slice(),
        "not-utf8",
    );
    assert_eq!((e.line, e.column), (2, 19));
    // Not XML; not RSL; RSL in another namespace.
    let e = refused(
        b"<rsl xmlns=\"https://rslstandard.org/rsl\">\n<content url=\"/\">\n</rsl>",
        "xml",
    );
    assert_eq!(e.line, 3);
    refused(b"<html><body>hello</body></html>", "not-rsl");
    refused(
        b"<rsl xmlns=\"https://example.com/rsl\"><content url=\"/\"/></rsl>",
        "namespace",
    );
    refused(b"", "xml");
    refused(
        b"<rsl xmlns=\"https://rslstandard.org/rsl\"/>",
        "no-content",
    );
    // Stranger's text is quoted short and without control characters.
    let long = format!(
        "<rsl xmlns=\"https://rslstandard.org/rsl\"><content url=\"/\"><license><permits type=\"usage\">{}\u{1b}[31m</permits></license></content></rsl>",
        "x".repeat(10_000)
    );
    let d = Document::parse(long.as_bytes());
    let m = &d.diagnostics[0].message;
    assert!(m.len() < 300 && !m.contains('\u{1b}'), "{m}");
    // A name the parser quotes back (a closing tag that does not match a
    // long opening one) is shortened too (found by the fuzz target).
    let long_tag = format!(
        "<rsl xmlns=\"https://rslstandard.org/rsl\"><content url=\"/\"><license><per{}mits type=\"usage\">x</permits></license></content></rsl>",
        "\u{fffd}".repeat(5_000)
    );
    let e = refused(long_tag.as_bytes(), "xml");
    assert!(e.message.len() < 400, "{}", e.message);
    // Values of one element are capped.
    let many = format!(
        "<rsl xmlns=\"https://rslstandard.org/rsl\"><content url=\"/\"><license><prohibits type=\"geo\">{}</prohibits></license></content></rsl>",
        "FR ".repeat(10_000)
    );
    let d = Document::parse(many.as_bytes());
    assert_eq!(d.contents[0].licenses[0].prohibits[0].values.len(), 256);
    assert!(codes(&d).contains(&"too-many-values"));
}

/// Without the namespace the document is read and the mistake named (an
/// RSL reader that checks the namespace would skip it).
#[test]
fn a_document_without_its_namespace() {
    let d = Document::parse(b"<rsl><content url=\"/\"><license><permits type=\"usage\">search</permits></license></content></rsl>");
    assert_eq!(codes(&d), ["namespace"]);
    assert_eq!(d.contents.len(), 1);
}

/// RSL 1.0 separates a list's values with spaces (section 3.5); RSL 0.9
/// wrote commas. Both are read; the commas are named.
#[test]
fn lists_of_rsl_1_0_and_0_9() {
    let one = Document::parse(
        br#"<rsl xmlns="https://rslstandard.org/rsl"><content url="/"><license><permits type="usage">ai-train search</permits></license></content></rsl>"#,
    );
    assert!(one.diagnostics.is_empty(), "{:?}", one.diagnostics);
    assert_eq!(
        one.contents[0].licenses[0].permits[0].values,
        ["ai-train", "search"]
    );
    let old = Document::parse(
        br#"<rsl xmlns="https://rslstandard.org/rsl"><content url="/"><license><permits type="usage">ai-train, search</permits></license></content></rsl>"#,
    );
    assert_eq!(
        old.contents[0].licenses[0].permits[0].values,
        ["ai-train", "search"]
    );
    assert_eq!(codes(&old), ["comma-list"]);
}

/// Protego's CVE-2026-55520 class (many `*` made matching exponential) in
/// a stranger's RSL: a `<content url>` of 50,000 wildcards is over
/// `MAX_PATTERN_BYTES`, an error and ignored (never cut to a broader
/// pattern that would put other pages under its licence); one near the
/// limit (4,000 `*a`) against a long path is matched in counted work
/// linear in the path and the pattern.
#[test]
fn a_content_pattern_of_many_wildcards_costs_linear_work_or_is_ignored() {
    use botscope_terms::rsl::MAX_PATTERN_BYTES;
    let doc = |pattern: &str| {
        Document::parse(
            format!(
                r#"<rsl xmlns="https://rslstandard.org/rsl">
  <content url="/free/"><license><permits type="usage">all</permits></license></content>
  <content url="{pattern}"><license><prohibits type="usage">ai-all</prohibits></license></content>
</rsl>"#
            )
            .as_bytes(),
        )
    };
    let d = doc(&format!("/free/{}*b", "*a".repeat(50_000)));
    assert_eq!(codes(&d), ["long-url"]);
    assert!(
        d.diagnostics[0].message.len() < 300,
        "{}",
        d.diagnostics[0].message
    );
    let far = format!("/free/{}b", "a".repeat(60_000));
    assert_eq!(d.content_for("https://example.com", &far).unwrap().line, 2);

    let pattern = format!("/free/{}*b", "*a".repeat(4_000));
    assert!(pattern.len() <= MAX_PATTERN_BYTES);
    let d = doc(&pattern);
    assert!(d.diagnostics.is_empty(), "{:?}", d.diagnostics);
    let mut works = Vec::new();
    for m in [60_000, 120_000] {
        // `ab` then `a`s and no `b` after them: every segment found, then
        // the path searched to its end.
        let path = format!("/free/ab{}", "a".repeat(m));
        let mut work = 0;
        let c = d
            .content_for_counted("https://example.com", &path, &mut work)
            .unwrap();
        assert_eq!(c.line, 2);
        // Each of the two patterns may read the whole path.
        let bound = (2 * path.len() as u64
            + (botscope_robotstxt::SCAN_PER_PATTERN_BYTE + 1) * pattern.len() as u64)
            / 32
            + 64;
        assert!(work <= bound, "{m}: {work} units, bound {bound}");
        assert!(
            work >= m as u64 / 32,
            "{m}: {work} units: the search is counted"
        );
        works.push(work);
        let closed = format!("{path}b");
        assert_eq!(
            d.content_for("https://example.com", &closed).unwrap().line,
            3
        );
    }
    assert!(works[1] <= 2 * works[0] + 64, "{works:?}: not linear");
}

/// The path asked about is a path, never read as a URL: `//cdn.example/
/// free/x` is not `/free/x` (a scheme-relative reading would hand it the
/// free content's licence).
#[test]
fn a_path_with_two_slashes_is_not_read_as_a_url() {
    let d = Document::parse(
        br#"<rsl xmlns="https://rslstandard.org/rsl">
  <content url="/free/"><license><permits type="usage">all</permits></license></content>
</rsl>"#,
    );
    assert!(d.content_for("https://example.com", "/free/x").is_some());
    assert!(
        d.content_for("https://example.com", "//cdn.example/free/x")
            .is_none()
    );
}
