//! A request target as the front server serves it: the one spelling of a
//! path that every respelling of it comes to, so that a rule written for
//! `/private/` holds for `/./private/x`, `//private/x`, `/%70rivate/x`,
//! `/a/../private/x` and `/private%2Fx` alike.
//!
//! nginx (`$uri`) and Caddy (Go's `URL.Path`, cleaned by `file_server`)
//! decode every percent-encoded octet, `%2F` included, remove dot segments
//! and merge repeated slashes before they map a path to a file or a
//! `location`. The normal form here does the same to the path, except that
//! an octet whose decoding would change how the path reads (a reserved
//! character other than `/`, `%` itself, a control character, a byte
//! outside ASCII) stays encoded, in upper-case hexadecimal, as RFC 3986
//! 6.2.2.1 and RFC 9309 2.2.2 ask, so the result can still be matched
//! against robots.txt patterns. The query keeps its own structure: only
//! its unreserved octets are decoded (RFC 3986 6.2.2.2), which changes
//! nothing it means. A fragment is dropped (nginx ends the path there).
//!
//! ```
//! use botscope_policy::normalize_target;
//!
//! for spelling in [
//!     "/./private/x", "//private/x", "/%70rivate/x", "/a/../private/x",
//!     "/%2e/private/x", "/a/%2e%2e/private/x", "/index.html/../private/x",
//!     "/%2fprivate/x", "/private%2Fx", "/private/./x", "/private//x",
//! ] {
//!     assert_eq!(normalize_target(spelling), "/private/x", "{spelling}");
//! }
//! assert_eq!(normalize_target("/caf%c3%a9?q=%41%3d"), "/caf%C3%A9?q=A%3D");
//! assert_eq!(normalize_target("/shop/item?id=1"), "/shop/item?id=1");
//! ```
//!
//! Cost: one pass over the target and one over the path's segments, a
//! byte of output per byte of input at most three times over; a target
//! already in normal form (most of them) is returned as it came, without
//! copying.

use std::borrow::Cow;

/// Whether `b` is an RFC 3986 unreserved character.
fn unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

/// Whether `b` may stand in the normal form as it is (it is never written
/// percent-encoded there): unreserved, or a reserved or other printable
/// ASCII character that means itself in a path.
fn literal(b: u8) -> bool {
    b.is_ascii_graphic() && b != b'%' && b != b'#'
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

const HEX: &[u8; 16] = b"0123456789ABCDEF";

fn push_encoded(out: &mut Vec<u8>, b: u8) {
    out.extend_from_slice(&[b'%', HEX[usize::from(b >> 4)], HEX[usize::from(b & 15)]]);
}

/// Whether the escape at `p[i]` (a `%`) is one the normal form keeps:
/// two upper-case hexadecimal digits of an octet that is not decoded.
fn kept_escape(p: &[u8], i: usize, decoded: impl Fn(u8) -> bool) -> bool {
    let up = |b: u8| matches!(b, b'0'..=b'9' | b'A'..=b'F');
    match (p.get(i + 1), p.get(i + 2)) {
        (Some(&h), Some(&l)) if up(h) && up(l) => hex(h)
            .zip(hex(l))
            .is_some_and(|(h, l)| !decoded((h << 4) | l)),
        _ => false,
    }
}

/// Whether a path (without its query) is already in normal form: starts
/// with `/`, nothing outside printable ASCII, no escape that would be
/// decoded or is in lower case, no empty or dot segment.
fn is_normal_path(p: &[u8]) -> bool {
    if p.first() != Some(&b'/') {
        return false;
    }
    let mut prev = b'/';
    for (i, &b) in p.iter().enumerate().skip(1) {
        if b == b'%' {
            if !kept_escape(p, i, |c| unreserved(c) || c == b'/') {
                return false;
            }
        } else if !literal(b) {
            return false;
        }
        if prev == b'/' {
            // A segment starts here: empty (`//`) or a dot segment.
            if b == b'/' {
                return false;
            }
            if b == b'.' {
                let next = p.get(i + 1).copied();
                if matches!(next, None | Some(b'/'))
                    || (next == Some(b'.') && matches!(p.get(i + 2), None | Some(b'/')))
                {
                    return false;
                }
            }
        }
        prev = b;
    }
    true
}

fn is_normal_query(q: &[u8]) -> bool {
    q.iter()
        .enumerate()
        .all(|(i, &b)| literal(b) || (b == b'%' && kept_escape(q, i, unreserved)))
}

/// The normal form of a request target (origin form `/path?query`, or
/// an absolute URL, whose path and query are taken): what nginx and Caddy
/// serve for it, spelled one way. See the module's documentation.
pub fn normalize_target(target: &str) -> Cow<'_, str> {
    let bytes = target.as_bytes();
    // Origin form, the common case: judged in place when already normal.
    if bytes.first() == Some(&b'/') && !bytes.starts_with(b"//") {
        let end = memchr::memchr(b'#', bytes).unwrap_or(bytes.len());
        let (path, query) = match memchr::memchr(b'?', &bytes[..end]) {
            Some(q) => (&bytes[..q], &bytes[q + 1..end]),
            None => (&bytes[..end], &[][..]),
        };
        if end == bytes.len() && is_normal_path(path) && is_normal_query(query) {
            return Cow::Borrowed(target);
        }
    }
    let owned;
    let t: &[u8] = if bytes.first() == Some(&b'/') {
        bytes
    } else {
        // Absolute form (`http://host/p`), or something that is no target
        // at all: its path and query as robots.txt reads a URL.
        owned = botscope_robotstxt::path_of(bytes).into_owned();
        &owned
    };
    let end = memchr::memchr(b'#', t).unwrap_or(t.len());
    let (path, query) = match memchr::memchr(b'?', &t[..end]) {
        Some(q) => (&t[..q], Some(&t[q + 1..end])),
        None => (&t[..end], None),
    };
    let mut out = normal_path(path);
    if let Some(q) = query {
        out.push(b'?');
        normal_query(q, &mut out);
    }
    // Every byte pushed is printable ASCII.
    Cow::Owned(String::from_utf8(out).unwrap_or_default())
}

/// The path decoded as the front servers decode it, its dot segments
/// removed and its slashes merged, re-encoded where a byte would not read
/// as itself.
fn normal_path(path: &[u8]) -> Vec<u8> {
    // Decoded: every octet but those that would change the reading. `%`
    // stays `%25`: nginx decodes once, so `%2570` names a file `%70`, not
    // `p`. Bytes kept encoded are marked by a leading `%` already written
    // in upper case.
    let mut decoded: Vec<u8> = Vec::with_capacity(path.len() + 1);
    // A lone `%`, a control character, a space, a byte outside ASCII:
    // encoded, so that it reads as one octet.
    recode(path, &mut decoded, |c| unreserved(c) || c == b'/', literal);
    // Segments, with `.` and `..` resolved (RFC 3986 5.2.4) and empty ones
    // merged (nginx's merge_slashes). `..` above the root stays at the
    // root, as RFC 3986 resolves it.
    let mut segments: Vec<&[u8]> = Vec::new();
    let mut trailing = false;
    for seg in decoded.split(|&b| b == b'/') {
        trailing = false;
        match seg {
            b"" => trailing = true,
            b"." => trailing = true,
            b".." => {
                segments.pop();
                trailing = true;
            }
            s => segments.push(s),
        }
    }
    let mut out = Vec::with_capacity(decoded.len() + 1);
    for s in &segments {
        out.push(b'/');
        out.extend_from_slice(s);
    }
    if trailing || segments.is_empty() {
        out.push(b'/');
    }
    out
}

/// The query with its unreserved octets decoded and every other escape in
/// upper case; what is not printable ASCII encoded.
fn normal_query(q: &[u8], out: &mut Vec<u8>) {
    recode(q, out, unreserved, literal);
}

/// Copies `src` to `out`: an escape (`%` and two hexadecimal digits) of an
/// octet `decoded` accepts is decoded, any other written in upper case; a
/// byte `keep` accepts is copied as it is, any other escaped.
fn recode(src: &[u8], out: &mut Vec<u8>, decoded: impl Fn(u8) -> bool, keep: impl Fn(u8) -> bool) {
    let mut i = 0;
    while i < src.len() {
        let b = src[i];
        if b == b'%'
            && let (Some(h), Some(l)) = (
                src.get(i + 1).copied().and_then(hex),
                src.get(i + 2).copied().and_then(hex),
            )
        {
            let c = (h << 4) | l;
            if decoded(c) {
                out.push(c);
            } else {
                push_encoded(out, c);
            }
            i += 3;
            continue;
        }
        if keep(b) {
            out.push(b);
        } else {
            push_encoded(out, b);
        }
        i += 1;
    }
}

/// A `path:` pattern (robots.txt syntax, with `*` and `$`) spelled as
/// the normal form spells paths: its percent-encoded unreserved octets and
/// `/` decoded, every other escape in upper case, so that `/%7Ejoe/`
/// matches what `/~joe/x` and `/%7ejoe/x` come to.
pub fn normalize_pattern(p: &str) -> Cow<'_, str> {
    if !p.contains('%') {
        return Cow::Borrowed(p);
    }
    let mut out = Vec::with_capacity(p.len());
    recode(
        p.as_bytes(),
        &mut out,
        |c| unreserved(c) || c == b'/',
        |_| true,
    );
    // Only ASCII was decoded; the rest is copied whole.
    Cow::Owned(String::from_utf8(out).unwrap_or_else(|_| p.to_owned()))
}

/// Why a request target is refused before it is judged: a spelling that
/// common application stacks read differently from each other and from
/// the normal form, so that the path judged need not be the path served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ambiguity {
    /// A `;` in the path: Tomcat, Jetty and Spring drop a segment's
    /// `;parameters` (`/private;x=1/x` is `/private/x` to them, a segment
    /// named `private;x=1` to nginx).
    Semicolon,
    /// A `\` or `%5C`: IIS and ASP.NET read it as `/`.
    Backslash,
    /// `%00`: C-based stacks end the path there.
    Nul,
    /// `%25` encoding an octet (`%2570`, `%252f`): stacks that decode
    /// twice read another path.
    DoubleEncoded,
    /// The decoded path is not UTF-8 (an overlong `%C0%AF` is `/` to some
    /// decoders).
    NotUtf8,
    /// A segment ending in `.` or a space: Windows drops them
    /// (`/private./x` is `/private/x` there).
    TrailingDotOrSpace,
    /// `::$` (`/private::$DATA`): an NTFS stream name of the file itself.
    StreamName,
    /// Dot segments that climb above `/` (`/../admin`): nginx refuses
    /// them, and under a path prefix they leave it.
    AboveRoot,
    /// Not a path (`*` for any method but `OPTIONS`, or no `/` first).
    NotAPath,
}

impl Ambiguity {
    /// A short reason, for the 400 page and the log.
    pub fn reason(self) -> &'static str {
        match self {
            Ambiguity::Semicolon => "a `;` in the path (path parameters)",
            Ambiguity::Backslash => "a backslash in the path",
            Ambiguity::Nul => "an encoded NUL in the path",
            Ambiguity::DoubleEncoded => "a `%25` encoding an octet (double encoding)",
            Ambiguity::NotUtf8 => "an overlong or invalid UTF-8 sequence in the path",
            Ambiguity::TrailingDotOrSpace => "a path segment ending in a dot or a space",
            Ambiguity::StreamName => "`::$` in the path (a stream name)",
            Ambiguity::AboveRoot => "dot segments climbing above `/`",
            Ambiguity::NotAPath => "a target that is not a path",
        }
    }

    /// A name for logs and metrics (`semicolon`, `backslash` …).
    pub fn as_str(self) -> &'static str {
        match self {
            Ambiguity::Semicolon => "semicolon",
            Ambiguity::Backslash => "backslash",
            Ambiguity::Nul => "nul",
            Ambiguity::DoubleEncoded => "double-encoded",
            Ambiguity::NotUtf8 => "not-utf8",
            Ambiguity::TrailingDotOrSpace => "trailing-dot-or-space",
            Ambiguity::StreamName => "stream-name",
            Ambiguity::AboveRoot => "above-root",
            Ambiguity::NotAPath => "not-a-path",
        }
    }
}

/// Whether an origin-form target (`/path?query`, as a client sent it)
/// means one path to every common application stack: `None`, or the first
/// reason it may not. Only the path is read (a query is the application's
/// to parse). Checked: `;`, `\` and `%5C`, `%00`, a `%25` before two
/// hexadecimal digits, a decoded path that is not UTF-8 (overlong forms
/// included), a segment ending in `.` or a space (`.` and `..` themselves
/// are dot segments, resolved), `::$`, and `..` above the root.
///
/// ```
/// use botscope_policy::{Ambiguity, ambiguity};
/// assert_eq!(ambiguity("/shop/item?id=1;2"), None);
/// assert_eq!(ambiguity("/a/../b/%2e/c"), None);
/// assert_eq!(ambiguity("/private;x=1/x"), Some(Ambiguity::Semicolon));
/// assert_eq!(ambiguity("/x/%2e%2e%5cprivate/x"), Some(Ambiguity::Backslash));
/// assert_eq!(ambiguity("/private%2e/x"), Some(Ambiguity::TrailingDotOrSpace));
/// assert_eq!(ambiguity("/a/../../admin"), Some(Ambiguity::AboveRoot));
/// ```
///
/// Cost: one pass over the path, and one over its decoded bytes.
pub fn ambiguity(target: &str) -> Option<Ambiguity> {
    let bytes = target.as_bytes();
    if bytes.first() != Some(&b'/') {
        return Some(Ambiguity::NotAPath);
    }
    let end = memchr::memchr2(b'?', b'#', bytes).unwrap_or(bytes.len());
    let path = &bytes[..end];
    let mut decoded: Vec<u8> = Vec::with_capacity(path.len());
    let mut i = 0;
    while i < path.len() {
        let b = path[i];
        match b {
            b';' => return Some(Ambiguity::Semicolon),
            b'\\' => return Some(Ambiguity::Backslash),
            0 => return Some(Ambiguity::Nul),
            b'%' => {
                if let (Some(h), Some(l)) = (
                    path.get(i + 1).copied().and_then(hex),
                    path.get(i + 2).copied().and_then(hex),
                ) {
                    let c = (h << 4) | l;
                    match c {
                        0 => return Some(Ambiguity::Nul),
                        b'\\' => return Some(Ambiguity::Backslash),
                        b'%' if path.get(i + 3).copied().and_then(hex).is_some()
                            && path.get(i + 4).copied().and_then(hex).is_some() =>
                        {
                            return Some(Ambiguity::DoubleEncoded);
                        }
                        _ => {}
                    }
                    decoded.push(c);
                    i += 3;
                    continue;
                }
                decoded.push(b);
            }
            _ => decoded.push(b),
        }
        i += 1;
    }
    if std::str::from_utf8(&decoded).is_err() {
        return Some(Ambiguity::NotUtf8);
    }
    if memchr::memmem::find(&decoded, b"::$").is_some() {
        return Some(Ambiguity::StreamName);
    }
    let mut depth: usize = 0;
    for seg in decoded.split(|&b| b == b'/').skip(1) {
        match seg {
            b"" | b"." => {}
            b".." => match depth.checked_sub(1) {
                Some(d) => depth = d,
                None => return Some(Ambiguity::AboveRoot),
            },
            s if matches!(s.last(), Some(b'.' | b' ')) => {
                return Some(Ambiguity::TrailingDotOrSpace);
            }
            _ => depth += 1,
        }
    }
    None
}

/// A path in normal form with its ASCII letters in lower case, but for the
/// hexadecimal digits of its escapes (`/Caf%C3%A9` is `/caf%C3%A9`): how
/// `path_case: insensitive` compares paths, patterns and robots.txt rules,
/// for applications that route without case.
pub fn fold_case(s: &str) -> Cow<'_, str> {
    let b = s.as_bytes();
    let upper_outside_escape = |i: usize| {
        b[i].is_ascii_uppercase() && !(i >= 1 && b[i - 1] == b'%') && !(i >= 2 && b[i - 2] == b'%')
    };
    if !(0..b.len()).any(upper_outside_escape) {
        return Cow::Borrowed(s);
    }
    let out: Vec<u8> = (0..b.len())
        .map(|i| {
            if upper_outside_escape(i) {
                b[i].to_ascii_lowercase()
            } else {
                b[i]
            }
        })
        .collect();
    // Only ASCII letters changed.
    Cow::Owned(String::from_utf8(out).unwrap_or_else(|_| s.to_owned()))
}

/// Extensions of what a page loads rather than what a person opens.
const SUBRESOURCE_EXTENSIONS: [&str; 22] = [
    "css", "js", "mjs", "map", "png", "jpg", "jpeg", "gif", "webp", "avif", "svg", "ico", "bmp",
    "woff", "woff2", "ttf", "otf", "eot", "mp4", "webm", "mp3", "ogg",
];

/// Whether a request is a page a person navigates to, rather than a
/// subresource a page loads (an image, a stylesheet, a script, a font, a
/// fetch). A browser says so in its fetch metadata (`Sec-Fetch-Dest:
/// document`, `Sec-Fetch-Mode: navigate`); without it (an older browser,
/// a robot, a log line), an `Accept` that names HTML is a page, one that
/// names only an image, a stylesheet, a script, JSON or a font is not, and
/// else the path's extension decides. What nothing marks as a subresource
/// is a page: a client cannot escape a page rate by sending no headers.
///
/// ```
/// use botscope_policy::is_navigation;
/// assert!(is_navigation(Some("navigate"), Some("document"), None, "/gallery"));
/// assert!(!is_navigation(Some("no-cors"), Some("image"), None, "/thumb/1"));
/// assert!(is_navigation(None, None, Some("text/html,*/*;q=0.8"), "/a"));
/// assert!(!is_navigation(None, None, Some("image/avif,image/webp,*/*"), "/a"));
/// assert!(!is_navigation(None, None, None, "/static/app.js?v=3"));
/// assert!(is_navigation(None, None, None, "/shop/item?id=1"));
/// ```
pub fn is_navigation(
    sec_fetch_mode: Option<&str>,
    sec_fetch_dest: Option<&str>,
    accept: Option<&str>,
    path: &str,
) -> bool {
    if let Some(dest) = sec_fetch_dest.map(str::trim).filter(|d| !d.is_empty()) {
        return ["document", "iframe", "frame", "fencedframe"]
            .iter()
            .any(|d| dest.eq_ignore_ascii_case(d));
    }
    if let Some(mode) = sec_fetch_mode.map(str::trim).filter(|m| !m.is_empty()) {
        return mode.eq_ignore_ascii_case("navigate")
            || mode.eq_ignore_ascii_case("nested-navigate");
    }
    if let Some(accept) = accept {
        let contains = |needle: &str| {
            accept
                .as_bytes()
                .windows(needle.len())
                .any(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
        };
        if contains("text/html") || contains("application/xhtml") {
            return true;
        }
        let first = accept.split(',').next().unwrap_or("").trim().as_bytes();
        let starts =
            |p: &str| first.len() >= p.len() && first[..p.len()].eq_ignore_ascii_case(p.as_bytes());
        if [
            "image/",
            "text/css",
            "application/json",
            "application/javascript",
            "text/javascript",
            "font/",
            "audio/",
            "video/",
        ]
        .iter()
        .any(|p| starts(p))
        {
            return false;
        }
    }
    let p = path.split(['?', '#']).next().unwrap_or(path);
    let last = p.rsplit('/').next().unwrap_or(p);
    match last.rsplit_once('.') {
        Some((_, ext)) => !SUBRESOURCE_EXTENSIONS
            .iter()
            .any(|e| ext.eq_ignore_ascii_case(e)),
        None => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every spelling of a denied `/private/x` found through the guide's
    /// nginx and Caddy configurations, and more of the same kinds.
    #[test]
    fn every_respelling_of_a_path_comes_to_one() {
        for s in [
            "/private/x",
            "/./private/x",
            "//private/x",
            "/%70rivate/x",
            "/%50rivate/x".replace("%50", "%70").as_str(),
            "/a/../private/x",
            "/%2e/private/x",
            "/%2E/private/x",
            "/a/%2e%2e/private/x",
            "/a/.%2e/private/x",
            "/index.html/../private/x",
            "/%2fprivate/x",
            "/private%2Fx",
            "/private%2fx",
            "/../private/x",
            "/../../private/x",
            "///private///x",
            "/private/x#frag",
            "http://example.com/private/x",
            "https://example.com//./private/x",
            "/%70%72%69%76%61%74%65/%78",
        ] {
            assert_eq!(normalize_target(s), "/private/x", "{s}");
        }
    }

    #[test]
    fn what_would_read_otherwise_stays_encoded() {
        // `%25` is `%`: decoding it would make a second escape.
        assert_eq!(normalize_target("/%2570rivate/x"), "/%2570rivate/x");
        // A reserved character: `?` in a path is not a query.
        assert_eq!(normalize_target("/a%3fb?c"), "/a%3Fb?c");
        // Outside ASCII, and spaces and controls: one octet each.
        assert_eq!(normalize_target("/caf\u{e9}"), "/caf%C3%A9");
        assert_eq!(normalize_target("/a b\t"), "/a%20b%09");
        // A lone `%` is a `%`.
        assert_eq!(normalize_target("/100%"), "/100%25");
        assert_eq!(normalize_target("/%zz"), "/%25zz");
        assert_eq!(normalize_target("/%4"), "/%254");
    }

    #[test]
    fn trailing_slashes_and_the_root_are_kept() {
        for (from, to) in [
            ("/", "/"),
            ("", "/"),
            ("/.", "/"),
            ("/..", "/"),
            ("/a/", "/a/"),
            ("/a/.", "/a/"),
            ("/a/b/..", "/a/"),
            ("/a//", "/a/"),
            ("/a?", "/a?"),
            ("/.?x=1", "/?x=1"),
            ("/.hidden/x", "/.hidden/x"),
            ("/..x/y", "/..x/y"),
            ("/a.../b", "/a.../b"),
        ] {
            assert_eq!(normalize_target(from), to, "{from:?}");
        }
    }

    #[test]
    fn the_query_keeps_its_structure() {
        // Dots and slashes in a query are not segments.
        assert_eq!(normalize_target("/s?q=../x//y"), "/s?q=../x//y");
        assert_eq!(normalize_target("/s?q=%2e%2E%2f%7e"), "/s?q=..%2F~");
        assert_eq!(normalize_target("/s?a=1&b=%c3%a9"), "/s?a=1&b=%C3%A9");
        // The first `?` ends the path, even after an encoded one.
        assert_eq!(normalize_target("/a%3F?b?c"), "/a%3F?b?c");
    }

    #[test]
    fn a_target_in_normal_form_is_not_copied() {
        for s in [
            "/",
            "/shop/item?id=1&x=%2F",
            "/a.b/c..d/.e",
            "/x/?q=a/../b",
            "/caf%C3%A9/%3F",
        ] {
            assert!(
                matches!(normalize_target(s), Cow::Borrowed(_)),
                "{s} is copied"
            );
        }
        // ... and `%2F` in a query is already normal: it was kept above.
        assert_eq!(
            normalize_target("/shop/item?id=1&x=%2F"),
            "/shop/item?id=1&x=%2F"
        );
    }

    #[test]
    fn patterns_are_spelled_as_paths_are() {
        assert_eq!(normalize_pattern("/%7Ejoe/"), "/~joe/");
        assert_eq!(normalize_pattern("/a%2fb*%3f$"), "/a/b*%3F$");
        assert_eq!(normalize_pattern("/caf\u{e9}%e9"), "/caf\u{e9}%E9");
        assert!(matches!(normalize_pattern("/private/"), Cow::Borrowed(_)));
    }

    /// Every spelling of issue 96's list, and its neighbours that mean one
    /// path everywhere.
    #[test]
    fn spellings_stacks_read_differently_are_named() {
        use Ambiguity::*;
        for (t, want) in [
            ("/private;x=1/x", Semicolon),
            ("/.well-known/..;/private/x", Semicolon),
            ("/;x=1/private/x", Semicolon),
            ("/x/.;/../private/x", Semicolon),
            ("/\\private/x", Backslash),
            ("/%5cprivate/x", Backslash),
            ("/%5Cprivate/x", Backslash),
            ("/x/%2e%2e%5cprivate/x", Backslash),
            ("/private./x", TrailingDotOrSpace),
            ("/private%20/x", TrailingDotOrSpace),
            ("/private%2e/x", TrailingDotOrSpace),
            ("/private%2E", TrailingDotOrSpace),
            ("/a/...", TrailingDotOrSpace),
            ("/private::$DATA/x", StreamName),
            ("/private%3a%3a$DATA/x", StreamName),
            ("/private%252fx", DoubleEncoded),
            ("/%252e%252e/private/x", DoubleEncoded),
            ("/%2570rivate/x", DoubleEncoded),
            ("/private%c0%afx", NotUtf8),
            ("/private%e9/x", NotUtf8),
            ("/private%00/x", Nul),
            ("/private\0/x", Nul),
            ("/../admin/x", AboveRoot),
            ("/%2e%2e/admin/x", AboveRoot),
            ("/a/..%2f..%2fadmin", AboveRoot),
            ("/a/b/../../../admin", AboveRoot),
            ("*", NotAPath),
            ("", NotAPath),
            ("admin", NotAPath),
        ] {
            assert_eq!(ambiguity(t), Some(want), "{t}");
        }
        for t in [
            "/",
            "/private/x",
            "/a/../private/x",
            "/./private//x",
            "/%70rivate/x",
            "/private%2Fx",
            "/caf%C3%A9/x",
            "/caf\u{e9}",
            "/.hidden/x",
            "/..x/y",
            "/a.b/c",
            "/a/b/..",
            "/100%",
            "/%25zz",
            "/a:b/c",
            "/s?q=a;b\\c%00%2570&x=../../..",
            "/p#a;b",
        ] {
            assert_eq!(ambiguity(t), None, "{t}");
        }
    }

    #[test]
    fn case_is_folded_but_for_escapes() {
        assert_eq!(fold_case("/PRIVATE/X?Q=A"), "/private/x?q=a");
        assert_eq!(fold_case("/Caf%C3%A9/%2F"), "/caf%C3%A9/%2F");
        assert!(matches!(fold_case("/private/%C3%A9"), Cow::Borrowed(_)));
    }

    /// Normalising twice changes nothing (the normal form is a fixed
    /// point), over a grid of awkward bytes.
    #[test]
    fn the_normal_form_is_a_fixed_point() {
        let parts = [
            "/", "//", ".", "..", "%2e", "%2F", "%25", "%", "a", "?", "#", "\u{e9}", " ", "%7E",
            "~",
        ];
        for a in parts {
            for b in parts {
                for c in parts {
                    let t = format!("/{a}{b}{c}/{c}{a}");
                    let once = normalize_target(&t).into_owned();
                    assert_eq!(normalize_target(&once), once, "{t:?}");
                    assert!(once.starts_with('/'), "{t:?} -> {once:?}");
                }
            }
        }
    }

    /// The fuzz target's properties over many random targets: the normal
    /// form starts with `/`, is printable ASCII, is its own normal form,
    /// holds no empty or dot segment, and is at most three bytes a byte.
    #[test]
    fn random_targets_keep_the_fuzz_targets_properties() {
        let pieces = [
            "/", ".", "..", "%", "%2", "%2e", "%2E", "%2f", "%2F", "%25", "%3f", "?", "#", "a",
            "~", "\u{e9}", " ", "\t", "\0", "%c3", "%a9", "http://h", "//", "*", "$",
        ];
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..20_000 {
            let mut t = String::new();
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            for k in 0..(x % 12) {
                t.push_str(pieces[((x >> (k * 5)) % pieces.len() as u64) as usize]);
            }
            let once = normalize_target(&t).into_owned();
            assert!(once.starts_with('/'), "{t:?} -> {once:?}");
            assert!(once.bytes().all(|b| b.is_ascii_graphic()), "{once:?}");
            assert!(once.len() <= 3 * t.len() + 1, "{t:?} -> {once:?}");
            assert_eq!(normalize_target(&once), once, "{t:?}");
            let path = once.split('?').next().unwrap_or("");
            assert!(!path.contains("//"), "{t:?} -> {once:?}");
            for seg in path.split('/').skip(1) {
                assert!(seg != "." && seg != "..", "{t:?} -> {once:?}");
            }
        }
    }
}
