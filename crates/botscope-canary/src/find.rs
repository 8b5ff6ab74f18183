//! Finding marks in text: the text normalised as it streams (NFKC's
//! compatibility forms, accents dropped, zero-width characters and soft
//! hyphens removed, case folded, every other character a separator), cut
//! into tokens; a code is `bsc` and a run of base32 letters read under the
//! key; a phrase is matched against the issuance record with at most one
//! of its three words changed, added or dropped, its two digits after
//! them as issued (common words of the list run together in prose often
//! enough; two digits more make a chance match a hundred times rarer).
//!
//! Cost: each input character is normalised once (its compatibility
//! decomposition, a few characters); each token is looked at a bounded
//! number of times: a word of the list looks up its pairs with the
//! window's earlier words (at most five), each naming at most
//! [`CANDIDATES`] phrases, and the phrases named in the last [`WINDOW`]
//! tokens are compared on at most three windows of five tokens; a code
//! candidate costs one base32 decode and two HMACs. Memory: the last [`WINDOW`] tokens and the token being read
//! (cut at [`MAX_TOKEN`] bytes), whatever the input's size. What is found
//! is handed to the caller as it is found, never kept.

use std::collections::HashMap;

use serde::Serialize;
use unicode_normalization::UnicodeNormalization as _;

use crate::code::{CanaryKey, MAX_CODE_LETTERS, Mark};
use crate::phrase::{Phrase, Token, distance, index};
pub use crate::record::{Issue, Served};

/// Tokens kept for phrase matching (a phrase with a word added is five).
pub const WINDOW: usize = 6;
/// Phrases compared per pair lookup at most.
pub const CANDIDATES: usize = 16;
/// Bytes around an exact phrase match within which near matches of
/// other phrases are not reported.
const NEAR: u64 = 64;
/// The longest token read (a longer run of letters is cut).
pub const MAX_TOKEN: usize = 4 + MAX_CODE_LETTERS;

/// One mark seen in the input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Sighting {
    /// `code` or `phrase`.
    pub kind: &'static str,
    /// The byte offset in the input where it starts.
    pub offset: u64,
    /// What was read there, normalised (`bsc-…`, or the phrase's words
    /// as they stand in the input).
    pub evidence: String,
    /// Tokens changed, added or dropped from the phrase issued (0 for a
    /// code).
    pub edits: usize,
    /// The phrase issued, for a phrase.
    pub phrase: Option<Phrase>,
    /// Whose page it was, and the period.
    pub mark: Mark,
    /// What the issuance record says of it, when it holds it.
    pub served: Option<Served>,
}

/// The issuance record as `find` reads it: marks by phrase, and the
/// phrases by each pair of their words.
#[derive(Debug, Default)]
pub struct Index {
    by_phrase: HashMap<Phrase, Vec<Issue>, foldhash::fast::RandomState>,
    by_mark: HashMap<Mark, Served, foldhash::fast::RandomState>,
    pairs: HashMap<(u16, u16), Vec<Phrase>, foldhash::fast::RandomState>,
}

impl Index {
    /// From the record's entries.
    pub fn new(issues: impl IntoIterator<Item = Issue>) -> Index {
        let mut ix = Index::default();
        for i in issues {
            ix.by_mark.insert(
                i.mark.clone(),
                Served {
                    first: i.first_served,
                    last: i.last_served,
                    pages: i.pages,
                },
            );
            let w = i.phrase.words;
            if !ix.by_phrase.contains_key(&i.phrase) {
                for pair in [(w[0], w[1]), (w[0], w[2]), (w[1], w[2])] {
                    ix.pairs.entry(pair).or_default().push(i.phrase);
                }
            }
            ix.by_phrase.entry(i.phrase).or_default().push(i);
        }
        ix
    }

    /// Entries read.
    pub fn len(&self) -> usize {
        self.by_mark.len()
    }

    /// Whether it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.by_mark.is_empty()
    }
}

/// A token as read (its first [`SHOWN`] bytes, for the evidence), with
/// where it started.
#[derive(Debug, Clone, Copy)]
struct Read {
    text: [u8; SHOWN],
    len: u8,
    token: Token,
    offset: u64,
}

/// Bytes of a token kept for the evidence (a longer one is shown cut).
const SHOWN: usize = 16;

impl Read {
    fn text(&self) -> &str {
        std::str::from_utf8(&self.text[..usize::from(self.len)]).unwrap_or("")
    }
}

/// Finds marks in text handed to it piece by piece.
pub struct Finder<'k> {
    key: &'k CanaryKey,
    index: &'k Index,
    /// The token being read, and its start.
    cur: String,
    cur_at: u64,
    /// The last tokens.
    window: std::collections::VecDeque<Read>,
    /// The phrase last reported, and the token count then: a phrase is
    /// reported once where overlapping windows match it.
    reported: Vec<(Phrase, u64)>,
    tokens: u64,
    /// A code's `bsc` just read (its offset).
    prefix_at: Option<u64>,
    /// Phrases matched and not reported yet: the next token may match
    /// them better (the digits after the words).
    pending: Vec<Pending>,
    /// Phrases a pair of the window's words named, and when.
    live: Vec<(Phrase, u64)>,
}

/// A phrase matched: reported once the next token could not improve it.
#[derive(Debug)]
struct Pending {
    phrase: Phrase,
    edits: usize,
    offset: u64,
    evidence: String,
    /// The token count when it last matched.
    at: u64,
}

/// Characters dropped without a trace: zero-width spaces and joiners,
/// word joiners and invisible operators, the byte-order mark, the soft
/// hyphen, the Mongolian vowel separator, the combining grapheme joiner.
fn invisible(c: char) -> bool {
    matches!(c, '\u{200B}'..='\u{200F}' | '\u{2060}'..='\u{2064}' | '\u{FEFF}' | '\u{00AD}' | '\u{180E}' | '\u{034F}')
}

impl<'k> Finder<'k> {
    /// With the site's key and its issuance record.
    pub fn new(key: &'k CanaryKey, index: &'k Index) -> Finder<'k> {
        Finder {
            key,
            index,
            cur: String::new(),
            cur_at: 0,
            window: std::collections::VecDeque::with_capacity(WINDOW + 1),
            reported: Vec::new(),
            tokens: 0,
            prefix_at: None,
            pending: Vec::new(),
            live: Vec::new(),
        }
    }

    /// Reads `text`, whose first byte is at `offset` of the input, telling
    /// `found` each mark as it is found.
    pub fn push(&mut self, text: &str, offset: u64, found: &mut dyn FnMut(Sighting)) {
        for (i, c) in text.char_indices() {
            self.push_char(c, offset + i as u64, found);
        }
    }

    /// Reads one character, at byte `at` of the input (a reader that
    /// decodes its input, HTML's entities or JSON's escapes, gives each
    /// character where its source began).
    pub fn push_char(&mut self, c: char, at: u64, found: &mut dyn FnMut(Sighting)) {
        if invisible(c) {
            return;
        }
        if c.is_ascii() {
            self.char(c.to_ascii_lowercase(), at, found);
            return;
        }
        for d in std::iter::once(c).nfkd() {
            if unicode_normalization::char::is_combining_mark(d) || invisible(d) {
                continue;
            }
            self.char(d.to_ascii_lowercase(), at, found);
        }
    }

    /// Ends the input: the last token is read.
    pub fn finish(&mut self, found: &mut dyn FnMut(Sighting)) {
        self.end_token(found);
        self.flush(true, found);
        self.window.clear();
        self.prefix_at = None;
    }

    fn char(&mut self, c: char, at: u64, found: &mut dyn FnMut(Sighting)) {
        if c.is_ascii_alphanumeric() {
            if self.cur.is_empty() {
                self.cur_at = at;
            }
            if self.cur.len() < MAX_TOKEN {
                self.cur.push(c);
            }
        } else {
            self.end_token(found);
        }
    }

    fn end_token(&mut self, found: &mut dyn FnMut(Sighting)) {
        if self.cur.is_empty() {
            return;
        }
        // The buffer is put back (cleared) when done: no allocation a
        // token.
        let text = std::mem::take(&mut self.cur);
        let at = self.cur_at;
        self.tokens += 1;
        if !self.pending.is_empty() {
            self.flush(false, found);
        }
        // A code: `bsc` then its letters, or `bsc` and its letters run
        // together (a pipeline that dropped the hyphen).
        if let Some(p) = self.prefix_at.take() {
            self.code(&text, p, found);
        }
        if text == "bsc" {
            self.prefix_at = Some(at);
        } else if let Some(rest) = text.strip_prefix("bsc")
            && rest.len() >= 16
        {
            self.code(rest, at, found);
        }
        let b = text.as_bytes();
        let token = if (3..=8).contains(&b.len())
            && b.iter().all(u8::is_ascii_lowercase)
            && let Some(w) = index(&text)
        {
            Token::Word(w)
        } else if !b.is_empty() && b.len() <= 2 && b.iter().all(u8::is_ascii_digit) {
            Token::Number(b.iter().fold(0, |n, d| n * 10 + u16::from(d - b'0')))
        } else {
            Token::Other
        };
        let mut shown = [0u8; SHOWN];
        let n = b.len().min(SHOWN);
        shown[..n].copy_from_slice(&b[..n]);
        if self.window.len() == WINDOW {
            self.window.pop_front();
        }
        self.window.push_back(Read {
            text: shown,
            len: u8::try_from(n).unwrap_or(0),
            token,
            offset: at,
        });
        self.cur = text;
        self.cur.clear();
        if !self.index.is_empty() && token != Token::Other {
            self.phrase();
        }
    }

    fn code(&mut self, letters: &str, at: u64, found: &mut dyn FnMut(Sighting)) {
        if letters.len() < 16
            || letters.len() > MAX_CODE_LETTERS
            || !letters
                .bytes()
                .all(|b| matches!(b, b'a'..=b'z' | b'2'..=b'7'))
        {
            return;
        }
        if let Some(mark) = self.key.decode(letters) {
            found(Sighting {
                kind: "code",
                offset: at,
                evidence: format!("{}{letters}", crate::code::PREFIX),
                edits: 0,
                phrase: None,
                served: self.index.by_mark.get(&mark).cloned(),
                mark,
            });
        }
    }

    /// The phrases the window's end can finish: those a pair of the
    /// window's words named, each looked up once, when its second word
    /// came.
    fn phrase(&mut self) {
        let n = self.window.len();
        let tokens = self.tokens;
        if let Token::Word(wb) = self.window[n - 1].token {
            for r in self.window.range(..n - 1) {
                let Token::Word(wa) = r.token else { continue };
                let Some(ps) = self.index.pairs.get(&(wa, wb)) else {
                    continue;
                };
                for p in ps.iter().take(CANDIDATES) {
                    if !self.live.iter().any(|(q, _)| q == p) {
                        self.live.push((*p, tokens));
                    }
                }
            }
        }
        self.live.retain(|(_, t)| tokens - t < WINDOW as u64);
        // A phrase ends with its two digits: they are not a word that may
        // change, so a match is judged where they stand.
        let Token::Number(digits) = self.window[n - 1].token else {
            return;
        };
        if self.live.is_empty() {
            return;
        }
        let candidates: Vec<Phrase> = self
            .live
            .iter()
            .filter(|(p, _)| u16::from(p.digits) == digits)
            .map(|(p, _)| *p)
            .collect();
        for p in candidates {
            if self
                .reported
                .iter()
                .any(|(q, t)| *q == p && self.tokens - t < WINDOW as u64)
            {
                continue;
            }
            let want = p.tokens();
            // Windows ending at the digits: the phrase with a word
            // dropped (3), as issued or with one changed (4), with one
            // added (5); the fewest edits, then the longest.
            let best = (3..=5)
                .filter(|len| *len <= n)
                .map(|len| {
                    let mut tokens = [Token::Other; 5];
                    for (t, r) in tokens.iter_mut().zip(self.window.range(n - len..)) {
                        *t = r.token;
                    }
                    (distance(&want, &tokens[..len]), std::cmp::Reverse(len))
                })
                .min();
            let Some((edits, std::cmp::Reverse(len))) = best.filter(|(d, _)| *d <= 1) else {
                continue;
            };
            let offset = self.window[n - len].offset;
            let evidence = self
                .window
                .range(n - len..)
                .map(Read::text)
                .collect::<Vec<_>>()
                .join(" ");
            let tokens = self.tokens;
            match self.pending.iter_mut().find(|q| q.phrase == p) {
                Some(q) => {
                    if edits < q.edits || (edits == q.edits && offset == q.offset) {
                        *q = Pending {
                            phrase: p,
                            edits,
                            offset,
                            evidence,
                            at: tokens,
                        };
                    }
                }
                None => self.pending.push(Pending {
                    phrase: p,
                    edits,
                    offset,
                    evidence,
                    at: tokens,
                }),
            }
        }
    }

    /// Reports the phrases the token just read did not improve (all of
    /// them at the end).
    fn flush(&mut self, all: bool, found: &mut dyn FnMut(Sighting)) {
        let tokens = self.tokens;
        let (due, keep): (Vec<Pending>, Vec<Pending>) = std::mem::take(&mut self.pending)
            .into_iter()
            .partition(|q| all || q.at + 1 < tokens);
        self.pending = keep;
        // A phrase matched exactly hides the near matches around it (two
        // phrases of a large record may differ by one word).
        let exact: Vec<u64> = due
            .iter()
            .filter(|q| q.edits == 0)
            .map(|q| q.offset)
            .collect();
        for q in due {
            if q.edits > 0 && exact.iter().any(|o| o.abs_diff(q.offset) <= NEAR) {
                continue;
            }
            self.reported.retain(|(_, t)| tokens - t < WINDOW as u64);
            self.reported.push((q.phrase, tokens));
            for issue in self.index.by_phrase.get(&q.phrase).into_iter().flatten() {
                found(Sighting {
                    kind: "phrase",
                    offset: q.offset,
                    evidence: q.evidence.clone(),
                    edits: q.edits,
                    phrase: Some(q.phrase),
                    mark: issue.mark.clone(),
                    served: Some(Served {
                        first: issue.first_served,
                        last: issue.last_served,
                        pages: issue.pages,
                    }),
                });
            }
        }
    }
}

/// Every mark in `text` (one piece, from offset 0).
pub fn find_all(key: &CanaryKey, index: &Index, text: &str) -> Vec<Sighting> {
    let mut out = Vec::new();
    let mut f = Finder::new(key, index);
    f.push(text, 0, &mut |s| out.push(s));
    f.finish(&mut |s| out.push(s));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::code::Client;

    fn setup() -> (CanaryKey, Mark, Mark, Index) {
        let key = CanaryKey::new(&[3; 32]).expect("key");
        let google = Mark::at(
            Client::Verified {
                bot: "Googlebot".into(),
            },
            1_800_000_000,
            86_400,
        );
        let scraper = Mark::at(
            Client::network(
                "203.0.113.9".parse().unwrap_or([0, 0, 0, 0].into()),
                None,
                "python-requests/2.31",
            ),
            1_800_000_000,
            86_400,
        );
        let issues = [&google, &scraper].map(|m| Issue {
            phrase: key.phrase(m),
            code: key.code(m),
            mark: (*m).clone(),
            first_served: 1_800_000_100,
            last_served: 1_800_000_200,
            pages: 3,
        });
        (key, google, scraper, Index::new(issues))
    }

    #[test]
    fn codes_are_found_however_they_were_dressed() {
        let (key, google, _, ix) = setup();
        let code = key.code(&google);
        let letters = &code[4..];
        let zw: String = letters.chars().flat_map(|c| [c, '\u{200B}']).collect();
        let full_width: String = code
            .chars()
            .map(|c| match c {
                'a'..='z' => char::from_u32(u32::from(c) - 0x61 + 0xFF41).unwrap_or(c),
                _ => c,
            })
            .collect();
        for text in [
            format!("see {code}."),
            format!("SEE {}", code.to_ascii_uppercase()),
            format!("x bsc-{zw} y"),
            format!("x bsc\u{2011}{letters} y"),
            format!("bsc{letters}"),
            full_width.clone(),
        ] {
            let s = find_all(&key, &ix, &text);
            assert_eq!(s.len(), 1, "{text:?}: {s:?}");
            assert_eq!(s[0].mark, google);
            assert_eq!(s[0].kind, "code");
            assert_eq!(s[0].served.as_ref().map(|x| x.pages), Some(3));
        }
        let s = find_all(&key, &ix, &format!("0123456789 {code}"));
        assert_eq!(s[0].offset, 11);
        // Another key's code is nobody's.
        let other = CanaryKey::new(&[4; 32]).expect("key");
        assert!(find_all(&key, &ix, &other.code(&google)).is_empty());
    }

    #[test]
    fn phrases_are_found_with_one_word_changed_added_or_dropped() {
        let (key, google, scraper, ix) = setup();
        let p = key.phrase(&scraper).to_string();
        let words: Vec<&str> = p.split(' ').collect();
        let hyphenated = words
            .iter()
            .map(|w| {
                let mut c = w.chars();
                c.next()
                    .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                    .unwrap_or_default()
            })
            .collect::<Vec<_>>()
            .join("-");
        for text in [
            format!("Ref: {p}."),
            format!("reference {hyphenated} end"),
            format!("{} {} {}", words[0], words[2], words[3]),
            format!("{} zebra {} {}", words[0], words[2], words[3]),
            format!("{} {} really {} {}", words[0], words[1], words[2], words[3]),
        ] {
            let s = find_all(&key, &ix, &text);
            assert_eq!(s.len(), 1, "{text:?}: {s:?}");
            assert_eq!(s[0].mark, scraper);
            assert_eq!(s[0].kind, "phrase");
        }
        // Two changes are not the phrase; nor are its words without its
        // digits, or with others.
        for far in [
            format!("{} zebra zoo {}", words[0], words[3]),
            format!("{} {} {}.", words[0], words[1], words[2]),
            format!(
                "{} {} {} {}",
                words[0],
                words[1],
                words[2],
                (words[3].parse::<u8>().unwrap_or(0) + 1) % 100
            ),
        ] {
            assert!(find_all(&key, &ix, &far).is_empty(), "{far}");
        }
        // The other mark's phrase names the other client.
        let g = key.phrase(&google).to_string();
        let s = find_all(&key, &ix, &g);
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].mark, google);
        // Two phrases one word apart: the exact one is named, not both.
        let near = Phrase {
            words: [
                key.phrase(&scraper).words[0],
                key.phrase(&scraper).words[1],
                (key.phrase(&scraper).words[2] + 1) % 2_048,
            ],
            digits: key.phrase(&scraper).digits,
        };
        let mut issues: Vec<Issue> = [&scraper]
            .map(|m| Issue {
                phrase: key.phrase(m),
                code: key.code(m),
                mark: (*m).clone(),
                first_served: 1,
                last_served: 2,
                pages: 1,
            })
            .to_vec();
        issues.push(Issue {
            phrase: near,
            code: key.code(&google),
            mark: google.clone(),
            first_served: 1,
            last_served: 2,
            pages: 1,
        });
        let both = Index::new(issues);
        let s = find_all(&key, &both, &p);
        assert_eq!(s.len(), 1, "{s:?}");
        assert_eq!((s[0].edits, &s[0].mark), (0, &scraper));
        // Without the record, a phrase says nothing.
        assert!(find_all(&key, &Index::default(), &p).is_empty());
    }
}
