//! The slot: where the owner's page says the reference goes, the comment
//! [`MARKER`], replaced as the page streams by the reference's text. Only
//! in the body's visible text: a marker inside a tag (an attribute such
//! as `alt`), in the head, a title, a heading, a script (structured data
//! is one), a style, a template, a text area, SVG or MathML, or an element
//! carrying microdata (`itemprop`) is left as it is (a comment, unseen)
//! and counted.
//!
//! Cost: each byte looked at once by a small state machine (runs of text,
//! quoted values and comments skipped by `memchr`); at most the marker's
//! length held back between chunks; the open elements that
//! forbid a slot, at most [`MAX_DEPTH`] of them (past it, nothing more is
//! placed in the page).

/// What the owner writes where the reference goes.
pub const MARKER: &[u8] = b"<!--botscope:canary-->";
/// Forbidding elements kept open at most.
pub const MAX_DEPTH: usize = 64;
/// The longest tag name read.
const MAX_NAME: usize = 16;

/// Elements whose content is text to the parser: nothing in them is a
/// tag or a comment until their end tag.
const RAW: &[&[u8]] = &[
    b"script",
    b"style",
    b"textarea",
    b"title",
    b"xmp",
    b"noscript",
    b"iframe",
    b"noembed",
    b"noframes",
];
/// Elements no reference may stand in.
const FORBIDDEN: &[&[u8]] = &[
    b"head",
    b"h1",
    b"h2",
    b"h3",
    b"h4",
    b"h5",
    b"h6",
    b"template",
    b"svg",
    b"math",
    b"select",
    b"option",
    b"button",
    b"label",
    b"summary",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Text,
    /// After `<`.
    Open,
    /// After `<!`, `<!-`.
    Bang,
    /// A comment's start, held while it may be the marker.
    Hold,
    /// In a comment; the last two bytes.
    Comment([u8; 2]),
    /// `<!DOCTYPE …>`, `<?…>`: until `>`.
    Decl,
    /// Reading a tag's name.
    Name {
        closing: bool,
    },
    /// In a tag after its name: its quote, if in one.
    Tag {
        closing: bool,
        quote: Option<u8>,
    },
    /// In a raw-text element: how much of `</name` matched.
    Raw(usize),
}

/// The slot filler of one page.
#[derive(Debug)]
pub struct Slot {
    text: Vec<u8>,
    state: State,
    held: Vec<u8>,
    name: Vec<u8>,
    /// The raw-text element open.
    raw: Vec<u8>,
    /// The last bytes of a tag outside quotes, lower case (`itemprop`).
    recent: [u8; 8],
    itemprop: bool,
    self_closing: bool,
    open: Vec<Vec<u8>>,
    /// Past [`MAX_DEPTH`]: nothing more is placed.
    lost: bool,
    /// References placed.
    pub placed: u32,
    /// Markers left in an element no reference may stand in (a marker in
    /// an attribute or a raw-text element is text there, not a marker).
    pub refused: u32,
}

/// `s` escaped for HTML text.
pub fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// The owner's template (`Reference: {phrase} {code}`) with the mark's
/// phrase and code, escaped for HTML.
pub fn render(template: &str, phrase: &str, code: &str) -> String {
    escape(&template.replace("{phrase}", phrase).replace("{code}", code))
}

impl Slot {
    /// To put `text` (HTML, escaped already) where the page's markers
    /// are.
    pub fn new(text: String) -> Slot {
        Slot {
            text: text.into_bytes(),
            state: State::Text,
            held: Vec::new(),
            name: Vec::new(),
            raw: Vec::new(),
            recent: [0; 8],
            itemprop: false,
            self_closing: false,
            open: Vec::new(),
            lost: false,
            placed: 0,
            refused: 0,
        }
    }

    /// The bytes to send for the next chunk of the page.
    pub fn push(&mut self, chunk: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(chunk.len() + self.held.len());
        let mut i = 0;
        while i < chunk.len() {
            // Runs no state changes within are passed whole: text and
            // raw-text elements up to a `<`, a quoted attribute value up
            // to its quote, a comment up to its next dash.
            let skip = match self.state {
                State::Text | State::Raw(0) => memchr::memchr(b'<', &chunk[i..]),
                State::Tag { quote: Some(q), .. } => memchr::memchr(q, &chunk[i..]),
                State::Comment([a, b]) if a != b'-' && b != b'-' => {
                    memchr::memchr(b'-', &chunk[i..])
                }
                State::Tag { quote: None, .. } => {
                    let n =
                        memchr::memchr3(b'"', b'\'', b'>', &chunk[i..]).unwrap_or(chunk.len() - i);
                    if n > 0 {
                        self.tag_run(&chunk[i..i + n]);
                    }
                    Some(n)
                }
                _ => Some(0),
            };
            let n = match skip {
                Some(0) => {
                    self.byte(chunk[i], &mut out);
                    i += 1;
                    continue;
                }
                Some(n) => n,
                None => chunk.len() - i,
            };
            out.extend_from_slice(&chunk[i..i + n]);
            i += n;
            // A comment's run held no dash: its end is still to come.
            if let State::Comment(_) = self.state {
                self.state = State::Comment(*b"xx");
            }
        }
        out
    }

    /// The bytes that end the page (what was held back).
    pub fn finish(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.held)
    }

    fn allowed(&self) -> bool {
        self.open.is_empty() && !self.lost
    }

    fn byte(&mut self, b: u8, out: &mut Vec<u8>) {
        match self.state {
            State::Text => {
                if b == b'<' {
                    self.held.push(b);
                    self.state = State::Open;
                } else {
                    out.push(b);
                }
            }
            State::Open => {
                if b == b'!' {
                    self.held.push(b);
                    self.state = State::Bang;
                    return;
                }
                out.append(&mut self.held);
                if b == b'/' {
                    out.push(b);
                    self.name.clear();
                    self.state = State::Name { closing: true };
                } else if b.is_ascii_alphabetic() {
                    out.push(b);
                    self.name.clear();
                    self.name.push(b.to_ascii_lowercase());
                    self.itemprop = false;
                    self.self_closing = false;
                    self.recent = [0; 8];
                    self.state = State::Name { closing: false };
                } else if b == b'?' {
                    out.push(b);
                    self.state = State::Decl;
                } else {
                    self.state = State::Text;
                    self.byte(b, out);
                }
            }
            State::Bang => {
                self.held.push(b);
                match self.held.as_slice() {
                    b"<!-" => {}
                    b"<!--" => self.state = State::Hold,
                    _ => {
                        out.append(&mut self.held);
                        self.state = if b == b'>' { State::Text } else { State::Decl };
                    }
                }
            }
            State::Hold => {
                self.held.push(b);
                if self.held.as_slice() == MARKER {
                    self.held.clear();
                    if self.allowed() {
                        out.extend_from_slice(&self.text);
                        self.placed += 1;
                    } else {
                        out.extend_from_slice(MARKER);
                        self.refused += 1;
                    }
                    self.state = State::Text;
                } else if !MARKER.starts_with(&self.held) {
                    let n = self.held.len();
                    let tail = [self.held[n - 2], self.held[n - 1]];
                    out.append(&mut self.held);
                    self.state = if tail == *b"->" && n >= 7 && b == b'>' {
                        State::Text
                    } else {
                        State::Comment(tail)
                    };
                }
            }
            State::Comment(tail) => {
                out.push(b);
                self.state = if b == b'>' && tail == *b"--" {
                    State::Text
                } else {
                    State::Comment([tail[1], b])
                };
            }
            State::Decl => {
                out.push(b);
                if b == b'>' {
                    self.state = State::Text;
                }
            }
            State::Name { closing } => {
                out.push(b);
                if b.is_ascii_alphanumeric() || b == b'-' || b == b':' {
                    if self.name.len() < MAX_NAME {
                        self.name.push(b.to_ascii_lowercase());
                    }
                    return;
                }
                if closing {
                    self.close();
                }
                self.state = State::Tag {
                    closing,
                    quote: None,
                };
                self.in_tag(b, closing, None);
            }
            State::Tag { closing, quote } => {
                out.push(b);
                self.in_tag(b, closing, quote);
            }
            State::Raw(matched) => {
                out.push(b);
                let want = |i: usize| match i {
                    0 => Some(b'<'),
                    1 => Some(b'/'),
                    i => self.raw.get(i - 2).copied(),
                };
                let m = if want(matched) == Some(b.to_ascii_lowercase()) {
                    matched + 1
                } else if b == b'<' {
                    1
                } else {
                    0
                };
                if m == self.raw.len() + 2 {
                    self.state = State::Tag {
                        closing: true,
                        quote: None,
                    };
                } else {
                    self.state = State::Raw(m);
                }
            }
        }
    }

    /// A byte inside a tag after its name.
    fn in_tag(&mut self, b: u8, closing: bool, quote: Option<u8>) {
        if let Some(q) = quote {
            if b == q {
                self.state = State::Tag {
                    closing,
                    quote: None,
                };
            }
            return;
        }
        match b {
            b'"' | b'\'' => {
                self.state = State::Tag {
                    closing,
                    quote: Some(b),
                };
            }
            b'>' => {
                self.state = State::Text;
                if !closing {
                    self.opened();
                }
            }
            _ => {
                self.self_closing = b == b'/';
                self.recent.rotate_left(1);
                self.recent[7] = b.to_ascii_lowercase();
                if &self.recent == b"itemprop" {
                    self.itemprop = true;
                }
            }
        }
    }

    /// A run of a tag's bytes outside quotes and before its end: what
    /// [`Slot::in_tag`] would make of them one by one.
    fn tag_run(&mut self, run: &[u8]) {
        // `itemprop` across the run's start (the last bytes kept), or in it.
        let mut edge = [0u8; 15];
        edge[..7].copy_from_slice(&self.recent[1..]);
        let k = run.len().min(8);
        edge[7..7 + k].copy_from_slice(&run[..k]);
        if edge[..7 + k]
            .windows(8)
            .chain(run.windows(8))
            .any(|w| w.eq_ignore_ascii_case(b"itemprop"))
        {
            self.itemprop = true;
        }
        for &b in &run[run.len().saturating_sub(8)..] {
            self.recent.rotate_left(1);
            self.recent[7] = b.to_ascii_lowercase();
        }
        self.self_closing = run.last() == Some(&b'/');
    }

    /// A start tag ended.
    fn opened(&mut self) {
        let name = self.name.as_slice();
        if name == b"body" {
            self.open.retain(|n| n.as_slice() != b"head");
        }
        if RAW.contains(&name) {
            self.raw = self.name.clone();
            self.state = State::Raw(0);
            return;
        }
        const VOID: &[&[u8]] = &[
            b"area", b"base", b"br", b"col", b"embed", b"hr", b"img", b"input", b"link", b"meta",
            b"source", b"track", b"wbr",
        ];
        let forbids = FORBIDDEN.contains(&name) || self.itemprop;
        if forbids && !VOID.contains(&name) && !self.self_closing {
            if self.open.len() < MAX_DEPTH {
                self.open.push(self.name.clone());
            } else {
                self.lost = true;
            }
        }
    }

    /// An end tag's name read: the nearest open element of that name
    /// closes.
    fn close(&mut self) {
        if let Some(i) = self.open.iter().rposition(|n| *n == self.name) {
            self.open.truncate(i);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fill(page: &str, step: usize) -> (String, u32, u32) {
        let mut s = Slot::new("REF".into());
        let mut out = Vec::new();
        for c in page.as_bytes().chunks(step.max(1)) {
            out.extend(s.push(c));
        }
        out.extend(s.finish());
        (
            String::from_utf8(out).unwrap_or_default(),
            s.placed,
            s.refused,
        )
    }

    #[test]
    fn the_reference_goes_in_visible_text_only() {
        let m = "<!--botscope:canary-->";
        let page = format!(
            "<!DOCTYPE html><html><head><title>{m}</title><meta name=x content=\"{m}\"></head>\
             <body><h1>Title {m}</h1><img alt=\"{m}\" src=a.png>\
             <script type=\"application/ld+json\">{{\"x\":\"{m}\"}}</script>\
             <p itemprop=\"name\">{m}</p><!-- a comment <p> --><!---->\
             <p>Text</p><footer>Reference: {m}</footer><h2>x</h2><p>{m}</p></body></html>"
        );
        for step in [1, 2, 3, 7, 64, 10_000] {
            let (out, placed, refused) = fill(&page, step);
            assert_eq!((placed, refused), (2, 2), "step {step}: {out}");
            assert!(out.contains("<footer>Reference: REF</footer>"), "{out}");
            assert!(out.contains("<p>REF</p>"), "{out}");
            assert!(out.contains(&format!("<title>{m}</title>")), "{out}");
            assert!(out.contains(&format!("alt=\"{m}\"")), "{out}");
            assert!(out.contains(&format!("<h1>Title {m}</h1>")), "{out}");
            assert!(
                out.contains(&format!("<p itemprop=\"name\">{m}</p>")),
                "{out}"
            );
            // Everything else as it was.
            let back = out.replace("REF", m);
            assert_eq!(back, page);
        }
        // Without a head's end, the body still takes it.
        let (out, placed, _) = fill(&format!("<head><title>t</title><body><p>{m}"), 5);
        assert_eq!(
            (out.as_str(), placed),
            ("<head><title>t</title><body><p>REF", 1)
        );
        // A marker cut short, or a page ending inside it, is passed as is.
        for page in [
            "<p><!--botscope:cana",
            "<p><!--botscope:canary-",
            "a < b <!-x> <!--->",
        ] {
            let (out, placed, _) = fill(page, 3);
            assert_eq!((out.as_str(), placed), (page, 0));
        }
    }

    #[test]
    fn the_owners_text_is_escaped() {
        assert_eq!(
            render(
                "<b>Ref</b>: {phrase} & {code}",
                "cabin orbit lunar 42",
                "bsc-x"
            ),
            "&lt;b&gt;Ref&lt;/b&gt;: cabin orbit lunar 42 &amp; bsc-x"
        );
    }
}
