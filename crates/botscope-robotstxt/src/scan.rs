//! The single pass over the input that every consumer shares: the parse
//! tree ([`crate::Robots`]), the compiled matcher ([`crate::Matcher`]) and,
//! through the tree, lint. Like Google's callback parser it accepts any
//! bytes and reports each line as an event.

use crate::lexer::{self, KeyKind, KeyValue, LineFlags, LineShape};

/// Default parse cap: RFC 9309 section 2.5 requires crawlers to parse at
/// least 500 kibibytes.
pub const DEFAULT_PARSE_CAP: usize = 500 * 1024;

/// How much of the input to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParseOptions {
    /// Bytes to parse; `None` reads everything (as Google's reference
    /// library does: its fetcher applies the cap, not its parser). The cut
    /// falls at the end of the last complete line within the cap, so that a
    /// rule is never shortened into a broader one.
    pub max_bytes: Option<usize>,
}

impl Default for ParseOptions {
    fn default() -> Self {
        ParseOptions {
            max_bytes: Some(DEFAULT_PARSE_CAP),
        }
    }
}

impl ParseOptions {
    /// No cap at all.
    pub fn unlimited() -> Self {
        ParseOptions { max_bytes: None }
    }
}

/// One line, as the consumers see it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Event<'a> {
    /// Only whitespace, or only a comment.
    Blank { comment: bool },
    /// A line that is not `key: value`.
    Junk {
        line: u32,
        bytes: &'a [u8],
        flags: LineFlags,
    },
    /// A `key: value` line.
    Pair {
        line: u32,
        bytes: &'a [u8],
        kind: KeyKind,
        typo: bool,
        kv: KeyValue<'a>,
    },
}

/// What the scan saw of the input as a whole.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ScanInfo {
    /// Bytes of input.
    pub total_bytes: usize,
    /// Bytes parsed (less than `total_bytes` when the cap cut the file).
    pub parsed_bytes: usize,
    /// Lines parsed.
    pub lines: u32,
    /// Length of the skipped byte order mark (or prefix of one).
    pub bom: usize,
    /// The cap, when it cut the file.
    pub cap: Option<usize>,
    /// The first line the cap left out (1-based), when it cut the file.
    pub first_cut_line: u32,
}

impl ScanInfo {
    pub(crate) fn truncated(&self) -> bool {
        self.parsed_bytes < self.total_bytes
    }
}

/// Where the cap cuts `input`: after the last line end within the cap.
pub(crate) fn cut_point(input: &[u8], opts: &ParseOptions) -> usize {
    match opts.max_bytes {
        Some(cap) if input.len() > cap => {
            memchr::memrchr2(b'\n', b'\r', &input[..cap]).map_or(0, |i| i + 1)
        }
        _ => input.len(),
    }
}

/// Scans `input` and calls `f` for every line.
pub(crate) fn scan<'a>(
    input: &'a [u8],
    opts: &ParseOptions,
    mut f: impl FnMut(Event<'a>),
) -> ScanInfo {
    let cut = cut_point(input, opts);
    let body = &input[..cut];
    // A file without a NUL (nearly every one) has each line's end of
    // text found with its line end: the line's first `#`.
    let nul = memchr::memchr(0, body).is_some();
    let each = |raw: lexer::RawLine<'a>, hash: Option<usize>| {
        let shape = if nul {
            lexer::split_line(raw.bytes)
        } else {
            lexer::split_line_until(raw.bytes, hash)
        };
        let ev = match shape {
            LineShape::Blank { comment } => Event::Blank { comment },
            LineShape::Junk { flags } => Event::Junk {
                line: raw.number,
                bytes: raw.bytes,
                flags,
            },
            LineShape::Pair(kv) => {
                let (kind, typo) = lexer::classify_key(kv.key);
                Event::Pair {
                    line: raw.number,
                    bytes: raw.bytes,
                    kind,
                    typo,
                    kv,
                }
            }
        };
        f(ev);
    };
    let lines = lexer::for_each_line_hash(body, each);
    let truncated = cut < input.len();
    // The cut is at a line end: the lines before it are whole.
    let line_ends = if truncated {
        let lf = memchr::memchr_iter(b'\n', body).count();
        let lone_cr = memchr::memchr_iter(b'\r', body)
            .filter(|&i| body.get(i + 1) != Some(&b'\n'))
            .count();
        u32::try_from(lf + lone_cr).unwrap_or(u32::MAX)
    } else {
        0
    };
    ScanInfo {
        total_bytes: input.len(),
        parsed_bytes: cut,
        lines,
        bom: lexer::bom_len(body),
        cap: if truncated { opts.max_bytes } else { None },
        first_cut_line: line_ends.saturating_add(1),
    }
}

/// Tracks where groups begin, by Google's rule: a User-agent line starts a
/// new group only when an Allow or Disallow line came after the previous
/// User-agent line. Other lines (Sitemap, Crawl-delay, unknown keys) do not
/// end a group, so a User-agent line after them joins the same group.
#[derive(Debug, Default)]
pub(crate) struct Grouper {
    in_group: bool,
    seen_rule: bool,
}

impl Grouper {
    /// A User-agent line: returns true when it starts a new group.
    pub(crate) fn user_agent(&mut self) -> bool {
        let new = !self.in_group || self.seen_rule;
        self.in_group = true;
        self.seen_rule = false;
        new
    }

    /// An Allow or Disallow line: returns true when it belongs to a group.
    pub(crate) fn rule(&mut self) -> bool {
        if self.in_group {
            self.seen_rule = true;
        }
        self.in_group
    }

    /// True inside a group.
    pub(crate) fn in_group(&self) -> bool {
        self.in_group
    }
}

/// Google's reading of a user-agent value: `*` (alone or followed by
/// whitespace) is the global agent; otherwise the product token is the
/// longest prefix of `[A-Za-z_-]` characters.
pub(crate) fn user_agent_token(value: &[u8]) -> (bool, &[u8]) {
    if value.first() == Some(&b'*') && (value.len() == 1 || lexer::is_space(value[1])) {
        return (true, b"*");
    }
    let end = value
        .iter()
        .position(|&b| !(b.is_ascii_alphabetic() || b == b'-' || b == b'_'))
        .unwrap_or(value.len());
    (false, &value[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cap_cuts_at_line_end() {
        let input = b"User-agent: *\nDisallow: /private\n";
        assert_eq!(
            cut_point(
                input,
                &ParseOptions {
                    max_bytes: Some(20)
                }
            ),
            14
        );
        assert_eq!(cut_point(input, &ParseOptions { max_bytes: Some(5) }), 0);
        assert_eq!(cut_point(input, &ParseOptions::unlimited()), input.len());
    }

    #[test]
    fn tokens() {
        assert_eq!(user_agent_token(b"*"), (true, &b"*"[..]));
        assert_eq!(user_agent_token(b"* foo"), (true, &b"*"[..]));
        assert_eq!(user_agent_token(b"*foo"), (false, &b""[..]));
        assert_eq!(user_agent_token(b"bingbot/2.0"), (false, &b"bingbot"[..]));
        assert_eq!(user_agent_token(b"Foo Bar"), (false, &b"Foo"[..]));
    }

    #[test]
    fn sitemap_does_not_end_a_group() {
        let mut g = Grouper::default();
        assert!(g.user_agent());
        assert!(!g.user_agent());
        assert!(g.rule());
        assert!(g.user_agent());
    }
}
