//! The phrase: three words of a fixed list (BIP-0039's English 2,048) and
//! two digits, `cabin orbit lunar 42`. Words survive a tokeniser and a
//! paraphrase better than a code: `find` matches a phrase with one word
//! changed, added or dropped, re-cased and re-hyphenated.

use std::collections::HashMap;
use std::sync::OnceLock;

use serde::Serialize;

const WORDS_TEXT: &str = include_str!("../data/words.txt");
/// Words in the list.
pub const WORDS: usize = 2_048;

type Words = (
    Vec<&'static str>,
    HashMap<&'static str, u16, foldhash::fast::FixedState>,
);

fn list() -> &'static Words {
    static LIST: OnceLock<Words> = OnceLock::new();
    LIST.get_or_init(|| {
        let words: Vec<&str> = WORDS_TEXT
            .lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty())
            .collect();
        let index = words
            .iter()
            .enumerate()
            .filter_map(|(i, w)| Some((*w, u16::try_from(i).ok()?)))
            .collect();
        (words, index)
    })
}

/// The word at `i` of the list.
pub fn word(i: u16) -> &'static str {
    list().0.get(usize::from(i)).copied().unwrap_or("")
}

/// The place of `w` (lower case) in the list.
pub fn index(w: &str) -> Option<u16> {
    list().1.get(w).copied()
}

/// Three words and two digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Phrase {
    /// The words' places in the list.
    pub words: [u16; 3],
    /// 0 to 99.
    pub digits: u8,
}

impl Phrase {
    /// From a digest's first bytes (11 bits a word, then the digits).
    pub fn from_digest(d: &[u8]) -> Phrase {
        let at = |i: usize| u16::from_be_bytes([d[i], d[i + 1]]) % 2_048;
        Phrase {
            words: [at(0), at(2), at(4)],
            digits: d[6] % 100,
        }
    }

    /// Its tokens as `find` reads text: the three words, then the digits.
    pub fn tokens(&self) -> [Token; 4] {
        [
            Token::Word(self.words[0]),
            Token::Word(self.words[1]),
            Token::Word(self.words[2]),
            Token::Number(u16::from(self.digits)),
        ]
    }

    /// From its text (`cabin orbit lunar 42`, any case or separators).
    pub fn parse(s: &str) -> Option<Phrase> {
        let mut t = s
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|x| !x.is_empty());
        let mut words = [0u16; 3];
        for w in &mut words {
            *w = index(&t.next()?.to_ascii_lowercase())?;
        }
        let digits: u8 = t.next()?.parse().ok().filter(|d| *d < 100)?;
        t.next().is_none().then_some(Phrase { words, digits })
    }
}

impl std::fmt::Display for Phrase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {} {} {:02}",
            word(self.words[0]),
            word(self.words[1]),
            word(self.words[2]),
            self.digits
        )
    }
}

impl<'de> serde::Deserialize<'de> for Phrase {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Phrase, D::Error> {
        let s = String::deserialize(d)?;
        Phrase::parse(&s).ok_or_else(|| serde::de::Error::custom(format!("not a phrase: {s:?}")))
    }
}

impl Serialize for Phrase {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// A token of normalised text, as phrases are compared: a word of the
/// list, a number below 100, or anything else.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Token {
    /// A word of the list (its place).
    Word(u16),
    /// A number of one or two digits.
    Number(u16),
    /// Anything else.
    Other,
}

/// The edit distance of `a` and `b` in tokens (substitutions, insertions,
/// deletions), up to 2 (2 means "2 or more").
pub fn distance(a: &[Token], b: &[Token]) -> usize {
    let (n, m) = (a.len(), b.len());
    if n.abs_diff(m) >= 2 {
        return 2;
    }
    // Small: a phrase has 4 tokens and a window at most 5.
    if m > 7 || n > 7 {
        return 2;
    }
    let mut prev = [0usize; 8];
    let mut cur = [0usize; 8];
    for (j, p) in prev.iter_mut().enumerate().take(m + 1) {
        *p = j;
    }
    for i in 1..=n {
        cur[0] = i;
        for j in 1..=m {
            let sub = prev[j - 1] + usize::from(a[i - 1] != b[j - 1]);
            cur[j] = sub.min(prev[j] + 1).min(cur[j - 1] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[m].min(2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_is_bip39s_and_phrases_read_back() {
        assert_eq!(list().0.len(), WORDS);
        assert_eq!((word(0), word(2_047)), ("abandon", "zoo"));
        assert_eq!(index("zoo"), Some(2_047));
        let p = Phrase::from_digest(&[0, 0, 0xff, 0xff, 0, 5, 142, 0]);
        assert_eq!(p.to_string(), "abandon zoo absent 42");
        assert_eq!(Phrase::parse("Abandon-ZOO-absent-42"), Some(p));
        assert_eq!(Phrase::parse("abandon zoo absent"), None);
        assert_eq!(Phrase::parse("abandon zoo notaword 42"), None);
        assert_eq!(Phrase::parse("abandon zoo absent 142"), None);
    }

    #[test]
    fn distances_count_one_word_changed_added_or_dropped() {
        let p = Phrase::parse("cabin orbit lunar 42").map(|p| p.tokens());
        let p = p.as_ref().map_or(&[][..], |t| &t[..]);
        let w = |s: &str| Token::Word(index(s).unwrap_or(0));
        let n = Token::Number(42);
        assert_eq!(distance(p, p), 0);
        assert_eq!(distance(p, &[w("cabin"), w("zoo"), w("lunar"), n]), 1);
        assert_eq!(distance(p, &[w("cabin"), w("lunar"), n]), 1);
        assert_eq!(
            distance(p, &[w("cabin"), w("orbit"), Token::Other, w("lunar"), n]),
            1
        );
        assert_eq!(distance(p, &[w("cabin"), w("zoo"), w("zoo"), n]), 2);
        assert_eq!(distance(p, &[n]), 2);
    }
}
