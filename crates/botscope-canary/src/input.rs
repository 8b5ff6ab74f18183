//! Reading inputs for `find`: plain text, HTML (tags dropped, entities
//! decoded), JSON lines (each line's strings), and WET files (Common
//! Crawl's extracted text: each sighting names its record's
//! `WARC-Target-URI`). Streaming, from a reader the caller hands over:
//! memory is a chunk, the finder's window, a JSON line up to
//! [`MAX_JSON_LINE`] (a longer line is read as text) and the last
//! [`URIS`] record addresses.

use std::io::BufRead;

use crate::find::{Finder, Sighting};

/// The longest JSON line parsed (a longer one is read as text).
pub const MAX_JSON_LINE: usize = 8 << 20;
/// WET records whose address is kept for the sightings not yet reported.
pub const URIS: usize = 64;
/// The longest record address kept.
const MAX_URI: usize = 2_048;

/// What an input is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Plain text (UTF-8; other bytes read as U+FFFD).
    Text,
    /// HTML: tags and comments are separators, entities decoded.
    Html,
    /// JSON lines: the strings of each line (a line that is not JSON is
    /// read as text).
    Jsonl,
    /// A WET file (WARC conversion records).
    Wet,
}

impl Format {
    /// The format a name says (`.html`, `.htm`, `.jsonl`, `.json`,
    /// `.ndjson`, `.wet`, `.warc.wet`, any of them `.gz`), else text.
    pub fn of_name(name: &str) -> Format {
        let n = name.to_ascii_lowercase();
        let n = n.strip_suffix(".gz").unwrap_or(&n);
        if n.ends_with(".wet") || n.ends_with(".warc.wet") {
            Format::Wet
        } else if n.ends_with(".html") || n.ends_with(".htm") || n.ends_with(".xhtml") {
            Format::Html
        } else if n.ends_with(".jsonl") || n.ends_with(".ndjson") || n.ends_with(".json") {
            Format::Jsonl
        } else {
            Format::Text
        }
    }
}

/// What reading an input came to.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Read {
    /// Bytes read.
    pub bytes: u64,
    /// JSON lines that were not JSON, or too long (read as text).
    pub not_json: u64,
    /// WET records seen.
    pub records: u64,
}

/// A sighting, with the address of the WET record it was in.
#[derive(Debug, Clone)]
pub struct Found {
    /// The sighting.
    pub sighting: Sighting,
    /// Its WET record's `WARC-Target-URI`, when the input is WET.
    pub uri: Option<String>,
}

/// UTF-8 decoding across chunk boundaries.
#[derive(Debug, Default)]
struct Utf8 {
    carry: Vec<u8>,
}

impl Utf8 {
    /// Each character of `chunk` (at `offset`) with its offset; an
    /// incomplete sequence at the end waits for the next chunk.
    fn chars(&mut self, chunk: &[u8], offset: u64, each: &mut dyn FnMut(char, u64), last: bool) {
        let start = offset - self.carry.len() as u64;
        let mut b = std::mem::take(&mut self.carry);
        b.extend_from_slice(chunk);
        let mut i = 0;
        while i < b.len() {
            match std::str::from_utf8(&b[i..]) {
                Ok(s) => {
                    for (j, c) in s.char_indices() {
                        each(c, start + (i + j) as u64);
                    }
                    return;
                }
                Err(e) => {
                    let good = e.valid_up_to();
                    let s = std::str::from_utf8(&b[i..i + good]).unwrap_or("");
                    for (j, c) in s.char_indices() {
                        each(c, start + (i + j) as u64);
                    }
                    i += good;
                    match e.error_len() {
                        Some(n) => {
                            each('\u{FFFD}', start + i as u64);
                            i += n;
                        }
                        None if !last => {
                            self.carry = b[i..].to_vec();
                            return;
                        }
                        None => {
                            each('\u{FFFD}', start + i as u64);
                            return;
                        }
                    }
                }
            }
        }
    }
}

/// HTML to characters: tags and comments are separators; entities are
/// decoded (numeric ones and the usual names; others left as written).
#[derive(Debug, Default)]
struct Html {
    state: HtmlState,
    entity: String,
    entity_at: u64,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum HtmlState {
    #[default]
    Text,
    Tag(Option<char>),
    Comment(u8),
    Entity,
}

impl Html {
    fn char(&mut self, c: char, at: u64, out: &mut dyn FnMut(char, u64)) {
        match self.state {
            HtmlState::Text => match c {
                '<' => self.state = HtmlState::Tag(None),
                '&' => {
                    self.entity.clear();
                    self.entity_at = at;
                    self.state = HtmlState::Entity;
                }
                c => out(c, at),
            },
            HtmlState::Tag(quote) => {
                match (quote, c) {
                    (Some(q), c) if c == q => self.state = HtmlState::Tag(None),
                    (Some(_), _) => {}
                    (None, '"' | '\'') => self.state = HtmlState::Tag(Some(c)),
                    (None, '>') => {
                        self.state = HtmlState::Text;
                        out(' ', at);
                    }
                    (None, '-') if self.entity == "!-" => {
                        self.state = HtmlState::Comment(0);
                    }
                    (None, c) => {
                        // `<!--` starts a comment: the first bytes are kept.
                        if self.entity.len() < 2 {
                            self.entity.push(c);
                        }
                    }
                }
                if !matches!(self.state, HtmlState::Tag(_)) {
                    self.entity.clear();
                }
            }
            HtmlState::Comment(dashes) => {
                self.state = match c {
                    '-' => HtmlState::Comment(dashes.saturating_add(1)),
                    '>' if dashes >= 2 => {
                        out(' ', at);
                        HtmlState::Text
                    }
                    _ => HtmlState::Comment(0),
                };
            }
            HtmlState::Entity => {
                if c == ';' {
                    let decoded = decode_entity(&self.entity);
                    self.state = HtmlState::Text;
                    match decoded {
                        Some(d) => out(d, self.entity_at),
                        None => {
                            out('&', self.entity_at);
                            for (i, e) in self.entity.clone().chars().enumerate() {
                                out(e, self.entity_at + 1 + i as u64);
                            }
                            out(';', at);
                        }
                    }
                    self.entity.clear();
                } else if (c.is_ascii_alphanumeric() || c == '#') && self.entity.len() < 10 {
                    self.entity.push(c);
                } else {
                    // Not an entity: what was read is text.
                    self.state = HtmlState::Text;
                    out('&', self.entity_at);
                    for (i, e) in std::mem::take(&mut self.entity).chars().enumerate() {
                        out(e, self.entity_at + 1 + i as u64);
                    }
                    self.char(c, at, out);
                }
            }
        }
    }
}

/// An entity's character: `#NNN`, `#xHH`, or one of the usual names.
fn decode_entity(e: &str) -> Option<char> {
    if let Some(hex) = e.strip_prefix("#x").or_else(|| e.strip_prefix("#X")) {
        return u32::from_str_radix(hex, 16).ok().and_then(char::from_u32);
    }
    if let Some(dec) = e.strip_prefix('#') {
        return dec.parse::<u32>().ok().and_then(char::from_u32);
    }
    Some(match e {
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "quot" => '"',
        "apos" => '\'',
        "nbsp" => '\u{A0}',
        "shy" => '\u{AD}',
        "zwsp" | "ZeroWidthSpace" => '\u{200B}',
        "zwj" => '\u{200D}',
        "zwnj" => '\u{200C}',
        "hyphen" | "dash" => '\u{2010}',
        "ndash" => '\u{2013}',
        "mdash" => '\u{2014}',
        _ => return None,
    })
}

/// Reads `r` as `format` into `finder`, telling `found` each sighting.
pub fn scan(
    r: &mut dyn BufRead,
    format: Format,
    finder: &mut Finder<'_>,
    found: &mut dyn FnMut(Found),
) -> std::io::Result<Read> {
    let mut read = Read::default();
    let mut uris: std::collections::VecDeque<(u64, String)> = std::collections::VecDeque::new();
    let mut tell = |s: Sighting, uris: &std::collections::VecDeque<(u64, String)>| {
        let uri = uris
            .iter()
            .rev()
            .find(|(at, _)| *at <= s.offset)
            .map(|(_, u)| u.clone());
        found(Found { sighting: s, uri });
    };
    match format {
        Format::Jsonl => {
            let mut line = Vec::new();
            loop {
                line.clear();
                let start = read.bytes;
                let n = botscope_text::read_line_capped(r, &mut line, MAX_JSON_LINE)?;
                if n == 0 {
                    break;
                }
                read.bytes += n as u64;
                let parsed = (line.len() <= MAX_JSON_LINE)
                    .then(|| serde_json::from_slice::<serde_json::Value>(&line).ok())
                    .flatten();
                match parsed {
                    Some(v) => strings(&v, &mut |s| {
                        for c in s.chars() {
                            finder.push_char(c, start, &mut |x| tell(x, &uris));
                        }
                        finder.push_char('\n', start, &mut |x| tell(x, &uris));
                    }),
                    None => {
                        if !line.trim_ascii().is_empty() {
                            read.not_json += 1;
                        }
                        let mut u = Utf8::default();
                        u.chars(
                            &line,
                            start,
                            &mut |c, at| finder.push_char(c, at, &mut |x| tell(x, &uris)),
                            true,
                        );
                    }
                }
            }
        }
        Format::Text | Format::Html | Format::Wet => {
            let mut u = Utf8::default();
            let mut h = Html::default();
            // WET: the start of the current line, to catch its headers.
            let mut head = String::new();
            let mut line_at = 0u64;
            loop {
                let chunk = r.fill_buf()?;
                let last = chunk.is_empty();
                let at = read.bytes;
                let n = chunk.len();
                let mut each = |c: char, pos: u64| {
                    if format == Format::Wet {
                        if c == '\n' {
                            if let Some(uri) = head.strip_prefix("WARC-Target-URI:") {
                                if uris.len() == URIS {
                                    uris.pop_front();
                                }
                                uris.push_back((line_at, uri.trim().to_owned()));
                                read.records += 1;
                            }
                            head.clear();
                            line_at = pos + 1;
                        } else if head.len() < 16
                            || (head.len() < MAX_URI && head.starts_with("WARC-Target-URI:"))
                        {
                            // A line's start, and the whole of an address.
                            head.push(c);
                        }
                    }
                    if format == Format::Html {
                        h.char(c, pos, &mut |d, p| {
                            finder.push_char(d, p, &mut |x| tell(x, &uris))
                        });
                    } else {
                        finder.push_char(c, pos, &mut |x| tell(x, &uris));
                    }
                };
                u.chars(chunk, at, &mut each, last);
                if last {
                    break;
                }
                r.consume(n);
                read.bytes += n as u64;
            }
        }
    }
    finder.finish(&mut |x| tell(x, &uris));
    Ok(read)
}

/// Every string of a JSON value (keys too), in order.
fn strings(v: &serde_json::Value, each: &mut dyn FnMut(&str)) {
    match v {
        serde_json::Value::String(s) => each(s),
        serde_json::Value::Array(a) => a.iter().for_each(|x| strings(x, each)),
        serde_json::Value::Object(o) => o.iter().for_each(|(k, x)| {
            each(k);
            strings(x, each);
        }),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::code::{CanaryKey, Client, Mark};
    use crate::find::Index;
    use crate::record::Issue;

    fn found(text: &[u8], format: Format) -> (Vec<Found>, Read) {
        let key = CanaryKey::new(&[7; 32]).expect("key");
        let ix = Index::new([issue(&key)]);
        let mut f = Finder::new(&key, &ix);
        let mut out = Vec::new();
        let mut r = std::io::BufReader::with_capacity(7, text);
        let read = scan(&mut r, format, &mut f, &mut |x| out.push(x)).expect("read");
        (out, read)
    }

    fn mark() -> Mark {
        Mark::at(
            Client::Verified {
                bot: "ClaudeBot".into(),
            },
            1_800_000_000,
            86_400,
        )
    }

    fn issue(key: &CanaryKey) -> Issue {
        let served = crate::find::Served {
            first: 1,
            last: 2,
            pages: 1,
        };
        Issue::new(key, mark(), &served)
    }

    #[test]
    fn each_format_gives_its_text() {
        let key = CanaryKey::new(&[7; 32]).expect("key");
        let i = issue(&key);
        let code = &i.code;
        let phrase = i.phrase.to_string();
        let dashed = phrase.replace(' ', "&#8209;");
        let html = format!(
            "<p title=\"{code}x\">Ref: <b>{}</b>{}</p><!-- {code}y --><p>{dashed}</p>",
            &code[..8],
            &code[8..]
        );
        let (f, _) = found(html.as_bytes(), Format::Html);
        let kinds: Vec<&str> = f.iter().map(|x| x.sighting.kind).collect();
        // The code split by a tag is two tokens: the attribute's and the
        // comment's are not the page's text.
        assert_eq!(kinds, ["phrase"], "{f:?}");
        let html = format!("<p>Ref:&nbsp;{code}&amp;</p>");
        let (f, _) = found(html.as_bytes(), Format::Html);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].sighting.offset, 13);

        let jsonl = format!(
            "{{\"a\":1}}\nnot json {code}\n{{\"text\":\"see \\u200b{}\"}}\n",
            phrase.replace(' ', "-")
        );
        let (f, read) = found(jsonl.as_bytes(), Format::Jsonl);
        assert_eq!(read.not_json, 1);
        assert_eq!(f.len(), 2, "{f:?}");
        assert_eq!(f[0].sighting.kind, "code");
        assert_eq!(
            f[1].sighting.offset,
            (jsonl.find("{\"text").unwrap_or(0)) as u64
        );

        let wet = format!(
            "WARC/1.0\r\nWARC-Type: conversion\r\nWARC-Target-URI: https://a.example/x\r\n\r\nnothing\r\n\r\nWARC/1.0\r\nWARC-Target-URI: https://b.example/y\r\n\r\ncopied: {code}\r\n"
        );
        let (f, read) = found(wet.as_bytes(), Format::Wet);
        assert_eq!(read.records, 2);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].uri.as_deref(), Some("https://b.example/y"));
        // Invalid UTF-8 is a separator, never an error.
        let mut bad = b"\xff\xfe".to_vec();
        bad.extend_from_slice(code.as_bytes());
        bad.extend_from_slice(b"\xc3");
        let (f, read) = found(&bad, Format::Text);
        assert_eq!((f.len(), read.bytes), (1, bad.len() as u64));
        assert_eq!(f[0].sighting.offset, 2);
        assert_eq!(Format::of_name("CC-MAIN-1.warc.wet.gz"), Format::Wet);
        assert_eq!(Format::of_name("answers.jsonl"), Format::Jsonl);
        assert_eq!(Format::of_name("page.HTML"), Format::Html);
        assert_eq!(Format::of_name("-"), Format::Text);
    }
}
