//! Bytes from strangers (log fields, robots.txt lines, HTTP headers, DNS
//! names) made safe to show. A terminal obeys escape sequences, a
//! spreadsheet runs a cell that starts with `=`, and a bidi override turns
//! `127.0.0.1` around for the eye: every text output goes through here.
//! JSON output stays exact (its encoder escapes control characters).
//!
//! The escapes are visible and unambiguous enough to read: `\x1b` for C0
//! controls and DEL, `\u{85}` for C1 controls, `\u{202e}` for the bidi
//! controls (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C).
//!
//! ```
//! // A User-Agent that would clear the screen and a path that would run
//! // as a formula in a spreadsheet.
//! assert_eq!(botscope_text::field("evil\x1b[2Jbot"), "evil\\x1b[2Jbot");
//! assert_eq!(botscope_text::csv_cell("=HYPERLINK(\"x\")"), "'=HYPERLINK(\"x\")");
//! assert_eq!(botscope_text::csv_cell("-1.5"), "-1.5");
//! ```

// A library speaks through its return values and the caller's writer,
// never by printing.
#![deny(clippy::print_stdout, clippy::print_stderr)]

use std::borrow::Cow;
use std::fmt::Write;

pub mod hosts;
mod lines;
mod table;

pub use lines::read_line_capped;

pub use table::{Cells, Column, Table};

/// True for the characters that reorder text for the eye: the bidi
/// embeddings, overrides and isolates, and the directional marks.
pub fn is_bidi_control(c: char) -> bool {
    matches!(
        c,
        '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}'
    )
}

/// True for what a terminal or a reader must not get raw: C0 and C1
/// controls, DEL, bidi controls, and the line and paragraph separators.
pub fn is_unsafe(c: char) -> bool {
    c.is_control() || is_bidi_control(c) || matches!(c, '\u{2028}' | '\u{2029}')
}

fn escape_with(s: &str, keep: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !s.chars().any(|c| is_unsafe(c) && !keep(c)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if !is_unsafe(c) || keep(c) {
            out.push(c);
        } else if (c as u32) < 0x80 {
            let _ = write!(out, "\\x{:02x}", c as u32);
        } else {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
    }
    Cow::Owned(out)
}

/// One field of a line (a User-Agent, a path, a host name): every unsafe
/// character escaped, tab and newline included, so the field stays one
/// field on one line.
pub fn field(s: &str) -> Cow<'_, str> {
    escape_with(s, |_| false)
}

/// A stranger's value quoted in a message: [`field`] of at most
/// [`QUOTED_BYTES`] of it (cut at a character boundary), with the whole
/// length said when cut, so that a 200 KB value makes a line, not a page.
pub fn quoted(s: &str) -> Cow<'_, str> {
    if s.len() <= QUOTED_BYTES {
        return field(s);
    }
    let mut end = QUOTED_BYTES;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(format!("{}… ({} bytes)", field(&s[..end]), s.len()))
}

/// How much of a value [`quoted`] shows.
pub const QUOTED_BYTES: usize = 80;

/// A whole text for a terminal: unsafe characters escaped, but newlines
/// and tabs kept (they are the text's own layout).
pub fn terminal(s: &str) -> Cow<'_, str> {
    escape_with(s, |c| c == '\n' || c == '\t')
}

/// A CSV cell: a cell a spreadsheet would read as a formula (first
/// character `=`, `+`, `-`, `@`, tab or carriage return) gets a leading
/// `'`, as OWASP advises; numbers (`-1.5`) and a lone `-` stay as they are.
/// Unsafe characters are escaped too. The CSV writer quotes the result.
pub fn csv_cell(s: &str) -> Cow<'_, str> {
    let risky = match s.as_bytes().first() {
        Some(b'=' | b'+' | b'@' | b'\t' | b'\r') => true,
        Some(b'-') => s.len() > 1 && s.parse::<f64>().is_err(),
        _ => false,
    };
    let escaped = field(s);
    if risky {
        Cow::Owned(format!("'{escaped}"))
    } else {
        escaped
    }
}

/// A value for a URL's path segment or query: every byte but the
/// unreserved ones (`A-Z a-z 0-9 - . _ ~`) percent-encoded.
pub fn url_component(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// The bytes of an OS string (a command-line argument): exact on Unix,
/// lossy UTF-8 elsewhere.
#[cfg(unix)]
pub fn os_bytes(s: &std::ffi::OsStr) -> Cow<'_, [u8]> {
    use std::os::unix::ffi::OsStrExt;
    Cow::Borrowed(s.as_bytes())
}

/// The bytes of an OS string (a command-line argument): exact on Unix,
/// lossy UTF-8 elsewhere.
#[cfg(not(unix))]
pub fn os_bytes(s: &std::ffi::OsStr) -> Cow<'_, [u8]> {
    Cow::Owned(s.to_string_lossy().into_owned().into_bytes())
}

/// A path from bytes read from a file (a batch of queries): exact on
/// Unix, lossy UTF-8 elsewhere.
#[cfg(unix)]
pub fn path_from_bytes(b: &[u8]) -> std::path::PathBuf {
    use std::os::unix::ffi::OsStrExt;
    std::path::PathBuf::from(std::ffi::OsStr::from_bytes(b))
}

/// A path from bytes read from a file (a batch of queries): exact on
/// Unix, lossy UTF-8 elsewhere.
#[cfg(not(unix))]
pub fn path_from_bytes(b: &[u8]) -> std::path::PathBuf {
    std::path::PathBuf::from(String::from_utf8_lossy(b).into_owned())
}

/// A host name from a field of a list someone made: a name, an address,
/// or a URL (lowercased, without a trailing dot); `None` when it is not
/// one. Harvest host lists and research cohorts read hosts with it.
///
/// ```
/// assert_eq!(botscope_text::host_of("https://WWW.BBC.co.uk./news").as_deref(), Some("www.bbc.co.uk"));
/// assert_eq!(botscope_text::host_of("=cmd|' /C calc'!A0"), None);
/// ```
pub fn host_of(field: &str) -> Option<String> {
    let f = field.trim().trim_matches('"');
    let f = f
        .strip_prefix("https://")
        .or_else(|| f.strip_prefix("http://"))
        .unwrap_or(f);
    let f = f.split(['/', '?', '#']).next().unwrap_or_default();
    let f = f.trim_end_matches('.').to_ascii_lowercase();
    if f.is_empty() || f.len() > 253 {
        return None;
    }
    if f.parse::<std::net::IpAddr>().is_ok() {
        return Some(f);
    }
    let ok = f.split('.').all(|l| {
        !l.is_empty()
            && l.len() <= 63
            && !l.starts_with('-')
            && !l.ends_with('-')
            && l.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    });
    (ok && f.contains('.')).then_some(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_components() {
        assert_eq!(
            url_component("Googlebot-Image_2.1~x"),
            "Googlebot-Image_2.1~x"
        );
        assert_eq!(url_component("a b/c?d=e&f#g"), "a%20b%2Fc%3Fd%3De%26f%23g");
        assert_eq!(url_component("../etc"), "..%2Fetc");
        assert_eq!(url_component("é\u{1b}"), "%C3%A9%1B");
    }

    #[test]
    fn terminal_escapes() {
        assert_eq!(field("plain text/1.0"), "plain text/1.0");
        assert!(matches!(field("plain"), Cow::Borrowed(_)));
        assert_eq!(field("a\x1b[2Jb"), "a\\x1b[2Jb");
        assert_eq!(field("\x1b]0;title\x07"), "\\x1b]0;title\\x07");
        assert_eq!(field("del\x7f"), "del\\x7f");
        assert_eq!(field("c1\u{9b}31m"), "c1\\u{9b}31m");
        assert_eq!(field("tab\there\nnl"), "tab\\x09here\\x0anl");
        assert_eq!(terminal("tab\there\nnl\r"), "tab\there\nnl\\x0d");
        // The bidi override that shows "coming from 127.0.0.1".
        assert_eq!(
            field("gnimoc \u{202E}1.0.0.721 morf"),
            "gnimoc \\u{202e}1.0.0.721 morf"
        );
        for c in [
            '\u{202A}', '\u{2066}', '\u{2069}', '\u{200F}', '\u{061C}', '\u{2028}',
        ] {
            assert!(field(&c.to_string()).starts_with("\\u{"), "{c:?}");
        }
        assert_eq!(field("naïve café 日本"), "naïve café 日本");
    }

    #[test]
    fn csv_formulas() {
        assert_eq!(csv_cell("=HYPERLINK(\"x\")"), "'=HYPERLINK(\"x\")");
        assert_eq!(csv_cell("+1+1"), "'+1+1");
        assert_eq!(csv_cell("@SUM(A1)"), "'@SUM(A1)");
        assert_eq!(
            csv_cell("-2+3+cmd|' /C calc'!A0"),
            "'-2+3+cmd|' /C calc'!A0"
        );
        assert_eq!(csv_cell("\tx"), "'\\x09x");
        assert_eq!(csv_cell("-"), "-");
        assert_eq!(csv_cell("-1.5"), "-1.5");
        assert_eq!(csv_cell("Googlebot"), "Googlebot");
        assert_eq!(csv_cell("a=b"), "a=b");
    }
}

/// `n` and the noun in its number: `1 client`, `2 clients`, `0 clients`.
pub fn count(n: u64, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

/// A size as a person reads a limit: in the binary unit it was most
/// likely set in (`256 MiB`, `2 GiB`, `512 KiB`, `1 byte`, `100 bytes`),
/// one decimal when it is not a whole number of that unit (`1.5 GiB`).
pub fn size(n: u64) -> String {
    const UNITS: [(u64, &str); 4] = [
        (1 << 40, "TiB"),
        (1 << 30, "GiB"),
        (1 << 20, "MiB"),
        (1 << 10, "KiB"),
    ];
    for (unit, name) in UNITS {
        if n >= unit {
            return if n.is_multiple_of(unit) {
                format!("{} {name}", n / unit)
            } else {
                format!("{:.1} {name}", n as f64 / unit as f64)
            };
        }
    }
    if n == 1 {
        "1 byte".into()
    } else {
        format!("{n} bytes")
    }
}

#[cfg(test)]
mod size_tests {
    #[test]
    fn sizes_read_in_their_unit() {
        for (n, want) in [
            (0, "0 bytes"),
            (1, "1 byte"),
            (1000, "1000 bytes"),
            (512 << 10, "512 KiB"),
            (256 << 20, "256 MiB"),
            (2 << 30, "2 GiB"),
            (3 << 29, "1.5 GiB"),
            (64 << 40, "64 TiB"),
        ] {
            assert_eq!(super::size(n), want);
        }
    }
}
