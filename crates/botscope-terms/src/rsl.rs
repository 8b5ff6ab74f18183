//! RSL 1.0 documents (Really Simple Licensing, RSL-SPEC-1.0, 2025-11-06,
//! <https://rslstandard.org/rsl>): bytes in, the licences a site states and
//! what was wrong with them out. Never fails: a document that cannot be
//! read gives no licence and says why, with the line and column.
//!
//! Every element and attribute of the specification is read: `<rsl>`
//! (or an RSS feed carrying `rsl:` elements), `<content url server
//! encrypted lastmod>`, `<license>`, `<permits>` and `<prohibits>` by
//! `usage`, `user` and `geo`, `<payment type>` with `<amount currency>`,
//! `<standard>` and `<custom>`, `<legal type>`, `<copyright type email
//! url>`, `<terms>` and `<schema>`. Elements of other namespaces
//! (extensions such as OpenRSL's) are skipped, as XML namespaces allow.
//!
//! Cost is bounded by the input: at most [`MAX_BYTES`] are read, at most
//! [`MAX_NODES`] XML nodes built, elements nested at most [`MAX_DEPTH`]
//! deep, a `<content>` URL pattern is at most [`MAX_PATTERN_BYTES`] long,
//! and it is matched by the robots.txt engine: linear in the path and the
//! patterns however many `*` they hold ([`Document::content_for_counted`]).

use botscope_robotstxt::Matcher;
use serde::Serialize;

use crate::price::Price;

/// The RSL namespace.
pub const NAMESPACE: &str = "https://rslstandard.org/rsl";
/// The media type of an RSL document.
pub const MEDIA_TYPE: &str = "application/rsl+xml";
/// Bytes of a document read at most (larger: not read).
pub const MAX_BYTES: usize = 1 << 20;
/// XML nodes (elements, text, comments) built at most.
pub const MAX_NODES: u32 = 100_000;
/// Elements nested at most this deep.
pub const MAX_DEPTH: usize = 32;
/// Bytes of a `<content url>` pattern at most (longer: an error, and the
/// content is ignored, never cut to a broader pattern): longer than any
/// request line a server is asked to accept (RFC 9110: 8,000 octets).
pub const MAX_PATTERN_BYTES: usize = 8_192;
/// Values of one `<permits>` or `<prohibits>` read at most.
pub const MAX_VALUES: usize = 256;

/// RSL's usage vocabulary (RSL 1.0, section 3.4.1): `all` covers every
/// use, `ai-all` every AI use.
pub const USAGES: &[&str] = &[
    "all", "ai-all", "ai-train", "ai-input", "ai-index", "search",
];
/// RSL's user vocabulary (section 3.4.1).
pub const USERS: &[&str] = &[
    "commercial",
    "non-commercial",
    "education",
    "government",
    "personal",
];
/// Payment types (section 3.7); `free` when none is given.
pub const PAYMENTS: &[&str] = &[
    "purchase",
    "subscription",
    "training",
    "crawl",
    "use",
    "contribution",
    "attribution",
    "free",
];
/// Payment types of the drafts the Recommendation renamed.
const RETIRED_PAYMENTS: &[(&str, &str)] = &[("inference", "use")];

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing; nothing is lost.
    Info,
    /// Read, but not as the specification says, or a value is ignored.
    Warning,
    /// Something is lost: a licence, an element or the whole document.
    Error,
}

/// One finding, where it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// 1-based line.
    pub line: u32,
    /// 1-based column (characters).
    pub column: u32,
    /// How bad.
    pub severity: Severity,
    /// A short stable name (`missing-url`, `unknown-usage` …).
    pub code: &'static str,
    /// What, in a sentence.
    pub message: String,
}

/// Where a `<content>` applies: a path pattern on the document's own site
/// (`/news/*`), or a full URL (its origin and path pattern).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Scope {
    /// `scheme://host[:port]`, lower case, for a full URL; none for a path.
    pub origin: Option<String>,
    /// The path pattern, with RFC 9309's `*` and `$`.
    pub path: String,
}

/// A `<permits>` or `<prohibits>`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Terms {
    /// Line of the element.
    pub line: u32,
    /// `usage`, `user` or `geo`.
    pub kind: TermKind,
    /// Its values, trimmed (geo codes in upper case); unknown ones kept
    /// and diagnosed.
    pub values: Vec<String>,
}

/// What a `<permits>` or `<prohibits>` is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TermKind {
    /// Uses (`ai-train`, `search` …).
    Usage,
    /// Kinds of user (`commercial` …).
    User,
    /// Countries (ISO 3166-1 alpha-2).
    Geo,
}

/// A `<payment>`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Payment {
    /// Line of the element.
    pub line: u32,
    /// Its type (`free` when none is given).
    pub kind: String,
    /// `<amount>`s that could be read.
    pub amounts: Vec<Price>,
    /// `<standard>` rate cards (URLs).
    pub standard: Vec<String>,
    /// `<custom>` rate cards (URLs).
    pub custom: Vec<String>,
}

impl Payment {
    /// True for a licence that costs nothing (`free`, or `attribution`:
    /// paid in credit, not money).
    pub fn is_free(&self) -> bool {
        self.kind == "free" || (self.kind == "attribution" && self.amounts.is_empty())
    }
}

/// A `<legal>` statement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Legal {
    /// Line of the element.
    pub line: u32,
    /// Its `type`.
    pub kind: String,
    /// Its values.
    pub values: Vec<String>,
}

/// A `<license>`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct License {
    /// Line of the element.
    pub line: u32,
    /// What it permits.
    pub permits: Vec<Terms>,
    /// What it prohibits.
    pub prohibits: Vec<Terms>,
    /// What it costs (none: free).
    pub payments: Vec<Payment>,
    /// Its legal statements.
    pub legal: Vec<Legal>,
    /// The element as written (what a crawler sends a licence server's
    /// token endpoint to ask for this licence).
    #[serde(skip)]
    pub xml: String,
}

/// Who owns the rights (`<copyright>`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Copyright {
    /// `person` or `organization`, as written.
    pub kind: Option<String>,
    /// The owner's name (the element's text).
    pub name: String,
    /// `email`.
    pub email: Option<String>,
    /// `url`.
    pub url: Option<String>,
}

/// A `<content>`: an asset (or a pattern of them) and its licences.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Content {
    /// Line of the element.
    pub line: u32,
    /// `url`, as written.
    pub url: String,
    /// Where it applies.
    pub scope: Scope,
    /// `server`: the licence server to obtain a licence from (when given,
    /// a licence must be obtained even when it is free).
    pub server: Option<String>,
    /// `encrypted`.
    pub encrypted: bool,
    /// `lastmod`, as written.
    pub lastmod: Option<String>,
    /// Its licences.
    pub licenses: Vec<License>,
    /// `<copyright>`.
    pub copyright: Option<Copyright>,
    /// `<terms>` URLs.
    pub terms: Vec<String>,
    /// `<schema>` URLs.
    pub schema: Vec<String>,
}

/// A parsed RSL document.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Document {
    /// The `<content>` elements read, in document order.
    pub contents: Vec<Content>,
    /// What was noticed, in document order.
    pub diagnostics: Vec<Diagnostic>,
    /// Size of the input.
    pub bytes: usize,
    /// The contents' paths, compiled (origin-less patterns and full URLs
    /// alike by their path; the origin is checked after).
    #[serde(skip)]
    matcher: Option<Matcher>,
    /// For each compiled pattern line (from 2), the content it is.
    #[serde(skip)]
    lines: Vec<usize>,
}

struct Reader<'a> {
    doc: &'a roxmltree::Document<'a>,
    out: Vec<Diagnostic>,
}

impl Reader<'_> {
    fn at(&self, pos: usize) -> (u32, u32) {
        let p = self.doc.text_pos_at(pos);
        (p.row, p.col)
    }

    fn diag(
        &mut self,
        node: roxmltree::Node<'_, '_>,
        severity: Severity,
        code: &'static str,
        message: String,
    ) {
        let (line, column) = self.at(node.range().start);
        self.out.push(Diagnostic {
            line,
            column,
            severity,
            code,
            message,
        });
    }

    fn line(&self, node: roxmltree::Node<'_, '_>) -> u32 {
        self.at(node.range().start).0
    }
}

/// Shortens and cleans what is quoted back from the document.
fn shown(s: &str) -> String {
    let mut out: String = s
        .chars()
        .take(80)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if s.chars().count() > 80 {
        out.push('…');
    }
    out
}

/// The element's own text, trimmed.
fn text(node: roxmltree::Node<'_, '_>) -> String {
    node.children()
        .filter(roxmltree::Node::is_text)
        .filter_map(|n| n.text())
        .collect::<String>()
        .trim()
        .to_owned()
}

fn is_rsl(node: roxmltree::Node<'_, '_>, bare: bool) -> bool {
    node.is_element()
        && match node.tag_name().namespace() {
            Some(ns) => ns == NAMESPACE,
            None => bare,
        }
}

/// The values of a list: RSL 1.0 separates them with spaces (section
/// 3.5), RSL 0.9 with commas; either is read.
fn list(body: &str) -> impl Iterator<Item = &str> {
    body.split(|c: char| c == ',' || c.is_ascii_whitespace())
        .filter(|v| !v.is_empty())
}

/// A `scheme://authority/path` URL split into its lower-case origin and
/// its path (at least `/`); none unless http or https with a host.
fn split_url(url: &str) -> Option<(String, String)> {
    let (scheme, rest) = url.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return None;
    }
    let (host, path) = match rest.find(['/', '?']) {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    if host.is_empty() || host.contains(['@', ' ', '*']) {
        return None;
    }
    let path = if path.starts_with('?') {
        format!("/{path}")
    } else {
        path.to_owned()
    };
    Some((format!("{scheme}://{}", host.to_ascii_lowercase()), path))
}

/// True for an absolute http(s) URL with a host.
fn is_absolute(url: &str) -> bool {
    split_url(url).is_some()
}

/// `YYYY-MM-DDTHH:MM:SS` with a zone (RFC 3339), by shape.
fn looks_rfc3339(s: &str) -> bool {
    let b = s.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|x| x.iter().all(u8::is_ascii_digit));
    b.len() >= 20
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && matches!(b[10], b'T' | b't' | b' ')
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19)
        && (s.ends_with(['Z', 'z']) || s[19..].contains(['+', '-']))
}

impl Document {
    /// Reads an RSL document. Never fails: see [`Document::diagnostics`].
    pub fn parse(input: &[u8]) -> Document {
        let mut d = Document {
            bytes: input.len(),
            ..Document::default()
        };
        let whole = |code, message: String| Diagnostic {
            line: 1,
            column: 1,
            severity: Severity::Error,
            code,
            message,
        };
        if input.len() > MAX_BYTES {
            d.diagnostics.push(whole(
                "too-large",
                format!(
                    "the document is {} bytes, over the {} read: not read",
                    input.len(),
                    MAX_BYTES
                ),
            ));
            return d;
        }
        let text = match std::str::from_utf8(input) {
            Ok(t) => t.strip_prefix('\u{feff}').unwrap_or(t),
            Err(e) => {
                let at = e.valid_up_to();
                let before = &input[..at];
                let line = 1 + before.iter().filter(|&&b| b == b'\n').count();
                // Columns count characters: the prefix is valid UTF-8.
                let last = before.rsplit(|&b| b == b'\n').next().unwrap_or(&[]);
                let col = std::str::from_utf8(last).map_or(last.len(), |l| l.chars().count()) + 1;
                d.diagnostics.push(Diagnostic {
                    line: u32::try_from(line).unwrap_or(u32::MAX),
                    column: u32::try_from(col).unwrap_or(u32::MAX),
                    severity: Severity::Error,
                    code: "not-utf8",
                    message:
                        "the document is not UTF-8 (an RSL document is XML in UTF-8): not read"
                            .into(),
                });
                return d;
            }
        };
        let opts = roxmltree::ParsingOptions {
            allow_dtd: false,
            nodes_limit: MAX_NODES,
            ..roxmltree::ParsingOptions::default()
        };
        let doc = match roxmltree::Document::parse_with_options(text, opts) {
            Ok(doc) => doc,
            Err(e) => {
                let mut pos = e.pos();
                if matches!(e, roxmltree::Error::DtdDetected) {
                    // roxmltree names the document's start: name the DOCTYPE.
                    if let Some(at) = text.find("<!DOCTYPE") {
                        let before = &text[..at];
                        pos.row =
                            u32::try_from(1 + before.matches('\n').count()).unwrap_or(u32::MAX);
                        let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count());
                        pos.col = u32::try_from(col + 1).unwrap_or(u32::MAX);
                    }
                }
                let message = match e {
                    roxmltree::Error::NodesLimitReached => {
                        format!("more than {MAX_NODES} XML nodes: not read")
                    }
                    roxmltree::Error::DtdDetected => {
                        "a DOCTYPE: an RSL document has none (entities are not expanded): not read"
                            .into()
                    }
                    // The parser's message quotes names from the
                    // document: shortened like every quote.
                    e => format!("not well-formed XML ({}): not read", shown(&e.to_string())),
                };
                d.diagnostics.push(Diagnostic {
                    line: pos.row,
                    column: pos.col,
                    severity: Severity::Error,
                    code: "xml",
                    message,
                });
                return d;
            }
        };
        // Depth, in one pass: each node's depth is its parent's plus one.
        let mut depth = vec![0u16; doc.descendants().count() + 1];
        for n in doc.descendants() {
            let here = n.parent().map_or(0, |p| depth[p.id().get_usize()] + 1);
            depth[n.id().get_usize()] = here;
            if usize::from(here) > MAX_DEPTH {
                let p = doc.text_pos_at(n.range().start);
                d.diagnostics.push(Diagnostic {
                    line: p.row,
                    column: p.col,
                    severity: Severity::Error,
                    code: "too-deep",
                    message: format!("elements nested more than {MAX_DEPTH} deep: not read"),
                });
                return d;
            }
        }
        let mut r = Reader {
            doc: &doc,
            out: Vec::new(),
        };
        let root = doc.root_element();
        let contents: Vec<roxmltree::Node<'_, '_>> = match (
            root.tag_name().name(),
            root.tag_name().namespace(),
        ) {
            ("rsl", Some(NAMESPACE)) => root.children().filter(|n| is_rsl(*n, false)).collect(),
            ("rsl", None) => {
                r.diag(
                    root,
                    Severity::Error,
                    "namespace",
                    format!(
                        "<rsl> without xmlns=\"{NAMESPACE}\": read, but RSL readers may ignore it"
                    ),
                );
                root.children().filter(|n| is_rsl(*n, true)).collect()
            }
            ("rsl", Some(other)) => {
                r.diag(
                    root,
                    Severity::Error,
                    "namespace",
                    format!(
                        "<rsl> in the namespace `{}`, not {NAMESPACE}: not read",
                        shown(other)
                    ),
                );
                Vec::new()
            }
            _ => {
                // A feed (RSS with the RSL module) or another document
                // carrying RSL elements: every <content> of the namespace.
                let found: Vec<_> = root
                    .descendants()
                    .filter(|n| is_rsl(*n, false) && n.tag_name().name() == "content")
                    .collect();
                if found.is_empty() {
                    r.diag(
                        root,
                        Severity::Error,
                        "not-rsl",
                        format!(
                            "the root element is <{}>, not <rsl xmlns=\"{NAMESPACE}\">, and it carries no RSL <content>",
                            shown(root.tag_name().name())
                        ),
                    );
                }
                found
            }
        };
        let mut seen_urls: Vec<(String, u32)> = Vec::new();
        for n in contents {
            match n.tag_name().name() {
                "content" => {
                    if let Some(c) = read_content(&mut r, n) {
                        if let Some((_, first)) = seen_urls.iter().find(|(u, _)| *u == c.url) {
                            let first = *first;
                            r.diag(
                                n,
                                Severity::Warning,
                                "duplicate-content",
                                format!(
                                    "a second <content url=\"{}\"> (the first is line {first}): each must name a distinct asset; the first applies",
                                    shown(&c.url)
                                ),
                            );
                        } else {
                            seen_urls.push((c.url.clone(), c.line));
                        }
                        d.contents.push(c);
                    }
                }
                other => unknown_element(&mut r, n, other, "rsl"),
            }
        }
        if d.contents.is_empty() && r.out.iter().all(|x| x.severity < Severity::Error) {
            r.diag(
                root,
                Severity::Error,
                "no-content",
                "no <content>: the document licenses nothing".into(),
            );
        }
        d.diagnostics = r.out;
        d.compile();
        d
    }

    /// Compiles the contents' patterns into one robots.txt matcher: each
    /// a `Disallow` line, so the verdict's rule names the content with
    /// the longest matching pattern (RFC 9309 section 2.2.2), as RSL asks
    /// (`url` "follows the URL-matching rules of the Robots Exclusion
    /// Protocol").
    fn compile(&mut self) {
        let mut text = String::from("user-agent: *\n");
        let mut seen = std::collections::HashSet::new();
        for (i, c) in self.contents.iter().enumerate() {
            let key = (c.scope.origin.clone(), c.scope.path.clone());
            if !seen.insert(key) {
                continue;
            }
            text.push_str("disallow: ");
            text.push_str(&c.scope.path);
            text.push('\n');
            self.lines.push(i);
        }
        self.matcher = Some(Matcher::new(text.as_bytes()));
    }

    /// The `<content>` that applies to `url` (a full URL, or a path on
    /// the document's own site, `origin` being that site's
    /// `scheme://host`): the longest matching pattern among those of the
    /// URL's origin or of no origin; at equal length the first.
    pub fn content_for(&self, origin: &str, path: &str) -> Option<&Content> {
        self.content_for_counted(origin, path, &mut 0)
    }

    /// [`Document::content_for`], adding its work to `work` in the robots.txt
    /// engine's units (a wildcard match examines at most the path plus
    /// [`botscope_robotstxt::SCAN_PER_PATTERN_BYTE`] times the pattern, a
    /// unit per 32 bytes).
    pub fn content_for_counted(
        &self,
        origin: &str,
        path: &str,
        work: &mut u64,
    ) -> Option<&Content> {
        let m = self.matcher.as_ref()?;
        let origin = origin.to_ascii_lowercase();
        // Full-URL contents of other origins must not win: check in two
        // passes, the best match first, then the others' when it is of
        // another origin (rare: a document naming several sites).
        let v = path_check(m, path, work);
        let rule = v
            .rule
            .filter(|r| r.kind == botscope_robotstxt::RuleKind::Disallow)?;
        let idx = *self
            .lines
            .get(usize::try_from(rule.line).ok()?.checked_sub(2)?)?;
        let best = &self.contents[idx];
        let mine = |c: &Content| c.scope.origin.as_deref().is_none_or(|o| o == origin);
        if mine(best) {
            return Some(best);
        }
        // Another origin's pattern matched longest: fall back to the
        // contents that are ours, one matcher each (bounded by the
        // document's size).
        let mut found: Option<(usize, &Content)> = None;
        for c in self.contents.iter().filter(|c| mine(c)) {
            let one =
                Matcher::new(format!("user-agent: *\ndisallow: {}\n", c.scope.path).as_bytes());
            if !path_check(&one, path, work).allowed {
                let len = c.scope.path.len();
                if found.is_none_or(|(l, _)| len > l) {
                    found = Some((len, c));
                }
            }
        }
        found.map(|(_, c)| c)
    }
}

/// `path` (a path as given, never read as a URL: `//x` is the path
/// `//x`) against a matcher's `*` groups, its work added to `work`.
fn path_check<'m>(m: &'m Matcher, path: &str, work: &mut u64) -> botscope_robotstxt::Verdict<'m> {
    let sel = m.select_counted("*", work);
    m.check_selected_counted(&sel, path.as_bytes(), work)
}

/// An element `parent` does not have: warned of and skipped.
fn unknown_element(r: &mut Reader<'_>, ch: roxmltree::Node<'_, '_>, name: &str, parent: &str) {
    let name = shown(name);
    r.diag(
        ch,
        Severity::Warning,
        "unknown-element",
        format!("<{name}> is not an element of <{parent}>: ignored"),
    );
}

/// An element whose text is a URL (`<terms>`, `<schema>`, `<standard>`,
/// `<custom>`): its text, warned of unless a full http(s) URL.
fn url_text(r: &mut Reader<'_>, ch: roxmltree::Node<'_, '_>) -> String {
    let t = text(ch);
    if !is_absolute(&t) {
        r.diag(
            ch,
            Severity::Warning,
            "bad-url",
            format!(
                "<{}> `{}` is not a full http(s) URL",
                ch.tag_name().name(),
                shown(&t)
            ),
        );
    }
    t
}

fn read_content(r: &mut Reader<'_>, n: roxmltree::Node<'_, '_>) -> Option<Content> {
    let line = r.line(n);
    let Some(url) = n.attribute("url").map(str::trim) else {
        r.diag(
            n,
            Severity::Error,
            "missing-url",
            "<content> without `url`: it names no asset and is ignored".into(),
        );
        return None;
    };
    if url.len() > MAX_PATTERN_BYTES {
        r.diag(
            n,
            Severity::Error,
            "long-url",
            format!(
                "<content url=\"{}\"> is {} bytes, over the {MAX_PATTERN_BYTES}-byte limit: ignored",
                shown(url),
                url.len()
            ),
        );
        return None;
    }
    if url.is_empty() || url.contains(['\n', '\r', '#']) || url.bytes().any(|b| b < 0x20) {
        r.diag(
            n,
            Severity::Error,
            "bad-url",
            format!(
                "<content url=\"{}\"> is not a path or URL (empty, a control character or `#`): ignored",
                shown(url)
            ),
        );
        return None;
    }
    let scope = if url.starts_with('/') {
        Scope {
            origin: None,
            path: url.to_owned(),
        }
    } else if let Some((origin, path)) = split_url(url) {
        Scope {
            origin: Some(origin),
            path,
        }
    } else {
        r.diag(
            n,
            Severity::Error,
            "bad-url",
            format!(
                "<content url=\"{}\"> is neither a path starting with `/` nor a full http(s) URL: ignored",
                shown(url)
            ),
        );
        return None;
    };
    let server = n.attribute("server").map(|s| s.trim().to_owned());
    if let Some(s) = &server {
        if !is_absolute(s) {
            r.diag(
                n,
                Severity::Error,
                "bad-server",
                format!(
                    "`server=\"{}\"` is not a full http(s) URL: no licence can be obtained from it",
                    shown(s)
                ),
            );
        } else if s.to_ascii_lowercase().starts_with("http://") {
            r.diag(
                n,
                Severity::Warning,
                "insecure-server",
                format!("`server=\"{}\"` is plain http: licence tokens would cross the network in the clear", shown(s)),
            );
        }
    }
    let encrypted = match n.attribute("encrypted").map(str::trim) {
        None | Some("false") => false,
        Some("true") => true,
        Some(other) => {
            r.diag(
                n,
                Severity::Warning,
                "bad-boolean",
                format!(
                    "`encrypted=\"{}\"` is neither true nor false: read as false",
                    shown(other)
                ),
            );
            false
        }
    };
    let lastmod = n.attribute("lastmod").map(|s| s.trim().to_owned());
    if let Some(l) = lastmod.as_deref().filter(|l| !looks_rfc3339(l)) {
        r.diag(
            n,
            Severity::Warning,
            "bad-date",
            format!("`lastmod=\"{}\"` is not an RFC 3339 date-time", shown(l)),
        );
    }
    for a in n.attributes() {
        if a.namespace().is_none() && !["url", "server", "encrypted", "lastmod"].contains(&a.name())
        {
            r.diag(
                n,
                Severity::Info,
                "unknown-attribute",
                format!(
                    "<content {}=…> is not an attribute of RSL 1.0: ignored",
                    shown(a.name())
                ),
            );
        }
    }
    let mut c = Content {
        line,
        url: url.to_owned(),
        scope,
        server,
        encrypted,
        lastmod,
        licenses: Vec::new(),
        copyright: None,
        terms: Vec::new(),
        schema: Vec::new(),
    };
    for ch in n.children().filter(|x| x.is_element()) {
        if !is_rsl(ch, n.tag_name().namespace().is_none()) {
            continue;
        }
        match ch.tag_name().name() {
            "license" => c.licenses.push(read_license(r, ch)),
            "copyright" => {
                if c.copyright.is_some() {
                    r.diag(
                        ch,
                        Severity::Warning,
                        "duplicate-copyright",
                        "a second <copyright>: the first applies".into(),
                    );
                    continue;
                }
                let name = text(ch);
                if name.is_empty()
                    && ch.attribute("email").is_none()
                    && ch.attribute("url").is_none()
                {
                    r.diag(
                        ch,
                        Severity::Warning,
                        "empty-copyright",
                        "<copyright> names no one".into(),
                    );
                }
                let kind = ch.attribute("type").map(str::to_owned);
                if let Some(k) = kind
                    .as_deref()
                    .filter(|k| *k != "person" && *k != "organization")
                {
                    r.diag(
                        ch,
                        Severity::Warning,
                        "unknown-copyright-type",
                        format!(
                            "<copyright type=\"{}\"> is neither person nor organization",
                            shown(k)
                        ),
                    );
                }
                c.copyright = Some(Copyright {
                    kind,
                    name,
                    email: ch.attribute("email").map(str::to_owned),
                    url: ch.attribute("url").map(str::to_owned),
                });
            }
            "terms" | "schema" => {
                let t = url_text(r, ch);
                if ch.tag_name().name() == "terms" {
                    c.terms.push(t);
                } else {
                    c.schema.push(t);
                }
            }
            other => unknown_element(r, ch, other, "content"),
        }
    }
    if c.licenses.is_empty() {
        r.diag(
            n,
            Severity::Warning,
            "no-license",
            format!(
                "<content url=\"{}\"> has no <license>: it grants nothing",
                shown(url)
            ),
        );
    }
    Some(c)
}

fn read_terms(r: &mut Reader<'_>, n: roxmltree::Node<'_, '_>) -> Option<Terms> {
    let what = n.tag_name().name();
    let kind = match n.attribute("type").map(str::trim) {
        Some("usage") => TermKind::Usage,
        Some("user") => TermKind::User,
        Some("geo") => TermKind::Geo,
        Some(other) => {
            r.diag(
                n,
                Severity::Error,
                "unknown-type",
                format!(
                    "<{what} type=\"{}\"> is none of usage, user, geo: ignored",
                    shown(other)
                ),
            );
            return None;
        }
        None => {
            r.diag(
                n,
                Severity::Error,
                "missing-type",
                format!("<{what}> without `type` (usage, user or geo): ignored"),
            );
            return None;
        }
    };
    let body = text(n);
    let mut values = Vec::new();
    if body.contains(',') {
        r.diag(
            n,
            Severity::Warning,
            "comma-list",
            format!("<{what}> separates its values with commas, as RSL 0.9 did: RSL 1.0 separates them with spaces (read either way)"),
        );
    }
    for v in list(&body) {
        if values.len() == MAX_VALUES {
            r.diag(
                n,
                Severity::Error,
                "too-many-values",
                format!("<{what}> lists more than {MAX_VALUES} values: the rest are ignored"),
            );
            break;
        }
        let v = match kind {
            TermKind::Usage if v == "train-ai" => {
                // The aipref label, as RSL's own guide to AI Preferences
                // writes it: read as RSL's `ai-train`.
                r.diag(
                    n,
                    Severity::Warning,
                    "aipref-usage",
                    "usage `train-ai` is the aipref label: read as RSL's `ai-train`".into(),
                );
                "ai-train".to_owned()
            }
            TermKind::Usage if !USAGES.contains(&v) => {
                r.diag(
                    n,
                    Severity::Warning,
                    "unknown-usage",
                    format!(
                        "usage `{}` is not in RSL's vocabulary: it matches no use",
                        shown(v)
                    ),
                );
                v.to_owned()
            }
            TermKind::User if !USERS.contains(&v) => {
                r.diag(
                    n,
                    Severity::Warning,
                    "unknown-user",
                    format!(
                        "user `{}` is not in RSL's vocabulary: it matches no user",
                        shown(v)
                    ),
                );
                v.to_owned()
            }
            TermKind::Geo => {
                let up = v.to_ascii_uppercase();
                if up.len() != 2 || !up.bytes().all(|b| b.is_ascii_uppercase()) {
                    r.diag(
                        n,
                        Severity::Warning,
                        "unknown-geo",
                        format!(
                            "geo `{}` is not an ISO 3166-1 alpha-2 code: it matches no country",
                            shown(v)
                        ),
                    );
                }
                up
            }
            _ => v.to_owned(),
        };
        values.push(v);
    }
    if values.is_empty() {
        r.diag(
            n,
            Severity::Warning,
            "empty-terms",
            format!(
                "<{what} type=\"{}\"> lists nothing",
                n.attribute("type").unwrap_or("")
            ),
        );
    }
    Some(Terms {
        line: r.line(n),
        kind,
        values,
    })
}

fn read_payment(r: &mut Reader<'_>, n: roxmltree::Node<'_, '_>) -> Payment {
    let kind = n.attribute("type").map_or("free", str::trim).to_owned();
    let kind = match RETIRED_PAYMENTS.iter().find(|(old, _)| *old == kind) {
        Some((old, new)) => {
            r.diag(
                n,
                Severity::Warning,
                "retired-payment",
                format!("<payment type=\"{old}\"> is a draft's name: RSL 1.0 calls it `{new}`; read as {new}"),
            );
            (*new).to_owned()
        }
        None => {
            if !PAYMENTS.contains(&kind.as_str()) {
                r.diag(
                    n,
                    Severity::Warning,
                    "unknown-payment",
                    format!(
                        "<payment type=\"{}\"> is not an RSL payment type",
                        shown(&kind)
                    ),
                );
            }
            kind
        }
    };
    let mut p = Payment {
        line: r.line(n),
        kind,
        amounts: Vec::new(),
        standard: Vec::new(),
        custom: Vec::new(),
    };
    for ch in n.children().filter(|x| x.is_element()) {
        if !is_rsl(ch, n.tag_name().namespace().is_none()) {
            continue;
        }
        match ch.tag_name().name() {
            "amount" => {
                let cur = ch.attribute("currency").unwrap_or("");
                match Price::new(cur, &text(ch)) {
                    Ok(price) => p.amounts.push(price),
                    Err(e) => r.diag(
                        ch,
                        Severity::Error,
                        "bad-amount",
                        format!(
                            "<amount currency=\"{}\"> cannot be read: {e}; ignored",
                            shown(cur)
                        ),
                    ),
                }
            }
            "standard" | "custom" => {
                let t = url_text(r, ch);
                if ch.tag_name().name() == "standard" {
                    p.standard.push(t);
                } else {
                    p.custom.push(t);
                }
            }
            other => unknown_element(r, ch, other, "payment"),
        }
    }
    let paid = !matches!(p.kind.as_str(), "free" | "attribution");
    if paid && p.amounts.is_empty() && p.standard.is_empty() && p.custom.is_empty() {
        r.diag(
            n,
            Severity::Warning,
            "no-price",
            format!(
                "<payment type=\"{}\"> states no <amount>, <standard> or <custom>: the price is unknown",
                shown(&p.kind)
            ),
        );
    }
    if p.kind == "free" && !p.amounts.is_empty() {
        r.diag(
            n,
            Severity::Warning,
            "free-with-amount",
            "<payment type=\"free\"> with an <amount>: free, the amount ignored".into(),
        );
        p.amounts.clear();
    }
    p
}

fn read_license(r: &mut Reader<'_>, n: roxmltree::Node<'_, '_>) -> License {
    let mut l = License {
        line: r.line(n),
        permits: Vec::new(),
        prohibits: Vec::new(),
        payments: Vec::new(),
        legal: Vec::new(),
        xml: n
            .document()
            .input_text()
            .get(n.range())
            .unwrap_or_default()
            .to_owned(),
    };
    for ch in n.children().filter(|x| x.is_element()) {
        if !is_rsl(ch, n.tag_name().namespace().is_none()) {
            continue;
        }
        match ch.tag_name().name() {
            "permits" => l.permits.extend(read_terms(r, ch)),
            "prohibits" => l.prohibits.extend(read_terms(r, ch)),
            "payment" => {
                let p = read_payment(r, ch);
                l.payments.push(p);
            }
            "legal" => {
                let kind = ch.attribute("type").unwrap_or("").trim().to_owned();
                if kind.is_empty() {
                    r.diag(
                        ch,
                        Severity::Warning,
                        "missing-type",
                        "<legal> without `type`".into(),
                    );
                }
                let values = list(&text(ch))
                    .take(MAX_VALUES)
                    .map(str::to_owned)
                    .collect();
                l.legal.push(Legal {
                    line: r.line(ch),
                    kind,
                    values,
                });
            }
            other => unknown_element(r, ch, other, "license"),
        }
    }
    if l.payments.len() > 1 {
        r.diag(
            n,
            Severity::Info,
            "several-payments",
            format!(
                "{} <payment> elements: any one of them licenses the use",
                l.payments.len()
            ),
        );
    }
    l
}

/// True when `listed` (an RSL usage value) covers the use `asked`: the
/// same value, `all` (every use) or `ai-all` (every AI use).
pub fn usage_covers(listed: &str, asked: &str) -> bool {
    listed == asked
        || listed == "all"
        || (listed == "ai-all" && matches!(asked, "ai-all" | "ai-train" | "ai-input" | "ai-index"))
}

/// What one licence says of a use by a user in a country.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Grant {
    /// The licence permits it (nothing prohibits it, and any `permits` of
    /// each kind lists it).
    Permits,
    /// A `prohibits` lists it (prohibitions win over permissions).
    Prohibits,
    /// The licence's `permits` of some kind do not list it.
    NotListed,
}

impl License {
    /// What this licence says of `usage` (RSL's vocabulary) by `user` (or
    /// none: not asked) in `geo` (ISO 3166-1 alpha-2, or none). A kind
    /// the licence does not restrict is permitted.
    pub fn grants(&self, usage: &str, user: Option<&str>, geo: Option<&str>) -> Grant {
        let hit = |t: &Terms| match t.kind {
            TermKind::Usage => t.values.iter().any(|v| usage_covers(v, usage)),
            TermKind::User => user.is_some_and(|u| t.values.iter().any(|v| v == u)),
            TermKind::Geo => {
                geo.is_some_and(|g| t.values.iter().any(|v| v.eq_ignore_ascii_case(g)))
            }
        };
        if self.prohibits.iter().any(hit) {
            return Grant::Prohibits;
        }
        for kind in [TermKind::Usage, TermKind::User, TermKind::Geo] {
            let mut listed = self.permits.iter().filter(|t| t.kind == kind).peekable();
            if listed.peek().is_some() && !listed.any(hit) {
                // A user or country not asked cannot be shown to be
                // listed: only usage is always asked.
                let asked = match kind {
                    TermKind::Usage => true,
                    TermKind::User => user.is_some(),
                    TermKind::Geo => geo.is_some(),
                };
                if asked {
                    return Grant::NotListed;
                }
            }
        }
        Grant::Permits
    }

    /// The cheapest price among its payments' amounts in `currency` (or
    /// any, when none is given); none for a free licence or one whose
    /// price is not stated as an amount.
    pub fn price(&self) -> Option<Price> {
        self.payments
            .iter()
            .flat_map(|p| p.amounts.iter())
            .min_by_key(|p| (p.currency, p.millionths))
            .copied()
    }

    /// True when using it costs nothing: no payment, or a free one.
    pub fn is_free(&self) -> bool {
        self.payments.is_empty() || self.payments.iter().any(Payment::is_free)
    }
}
