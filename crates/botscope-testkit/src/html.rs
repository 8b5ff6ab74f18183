//! HTML normalised for snapshots: one token per line, attributes sorted
//! and shown with their decoded values, character references decoded. Two
//! documents that a browser reads the same way (quoted or unquoted
//! attributes, `&#39;` or `'`) give the same text; a changed word, tag,
//! attribute or value shows. A self-closed element (`<rect/>`, as in SVG)
//! reads as an element with nothing inside, as browsers build it.

use std::fmt::Write;

use html5gum::{Token, Tokenizer};

/// Elements that never have content or an end tag.
const VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
    "wbr",
];

/// The token stream of `html`, one token per line.
pub fn normalize_html(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let s = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    for token in Tokenizer::new(html).flatten() {
        match token {
            Token::StartTag(t) => {
                let _ = write!(out, "<{}", s(&t.name));
                for (k, v) in &t.attributes {
                    let _ = write!(out, " {}={:?}", s(k), s(v));
                }
                out.push_str(">\n");
                let name = s(&t.name);
                if t.self_closing && !VOID.contains(&name.as_str()) {
                    let _ = writeln!(out, "</{name}>");
                }
            }
            Token::EndTag(t) => {
                let _ = writeln!(out, "</{}>", s(&t.name));
            }
            Token::String(text) => {
                let text = s(&text);
                if !text.is_empty() {
                    let _ = writeln!(out, "{text:?}");
                }
            }
            Token::Comment(c) => {
                let _ = writeln!(out, "<!--{}-->", s(&c));
            }
            Token::Doctype(d) => {
                let _ = writeln!(out, "<!DOCTYPE {}>", s(&d.name));
            }
            Token::Error(e) => {
                let _ = writeln!(out, "error: {}", e.value);
            }
        }
    }
    // Adjacent text tokens are one text: the tokenizer may split a run of
    // text at character references.
    let mut merged = String::with_capacity(out.len());
    let mut pending: Option<String> = None;
    for line in out.lines() {
        if let Some(text) = line.strip_prefix('"').and_then(|l| l.strip_suffix('"')) {
            pending.get_or_insert_with(String::new).push_str(text);
            continue;
        }
        if let Some(t) = pending.take() {
            let _ = writeln!(merged, "\"{t}\"");
        }
        let _ = writeln!(merged, "{line}");
    }
    if let Some(t) = pending.take() {
        let _ = writeln!(merged, "\"{t}\"");
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_does_not_matter_content_does() {
        let a = normalize_html("<td class=n data-v=3>it&#39;s &amp; 3</td>");
        let b = normalize_html("<td data-v=\"3\" class=\"n\">it's &amp; 3</td>");
        assert_eq!(a, b);
        let c = normalize_html("<td data-v=\"4\" class=\"n\">it's &amp; 3</td>");
        assert_ne!(a, c);
        assert_eq!(
            normalize_html("<svg><rect x='1'/><br/></svg>"),
            normalize_html("<svg><rect x=\"1\"></rect><br></svg>")
        );
    }
}
