//! URL paths and pattern normalisation.

use std::borrow::Cow;

/// Extracts the part of a URL that robots.txt rules are matched against:
/// path, params and query, without scheme, authority and fragment. The
/// result always starts with `/`; a URL without a path, or one that cannot
/// be read, gives `/`.
///
/// This reproduces `GetPathParamsQuery` of Google's reference parser,
/// including its treatment of scheme-less (`example.com/a`) and relative
/// (`/a`, `//host/a`) input. The URL is taken as it is: percent-encoding is
/// not changed, since crawlers request URLs in their encoded form.
///
/// ```
/// use botscope_robotstxt::path_of;
/// assert_eq!(&*path_of(b"https://example.com/a/b?c=d#frag"), b"/a/b?c=d");
/// assert_eq!(&*path_of(b"example.com?q"), b"/?q");
/// assert_eq!(&*path_of(b"https://example.com"), b"/");
/// ```
pub fn path_of(url: &[u8]) -> Cow<'_, [u8]> {
    path_at(url, path_start(url))
}

/// Where [`path_of`]'s path starts in `url` (at a `/`, `?` or `;`), or
/// `None` when it has none (the path is then `/`).
pub(crate) fn path_start(url: &[u8]) -> Option<usize> {
    // Already a path (as a log's request target nearly always is): only
    // a `#` ends it early.
    if url.first() == Some(&b'/') && url.get(1) != Some(&b'/') {
        return Some(0);
    }
    let from = if url.starts_with(b"//") { 2 } else { 0 };
    let rest = &url[from..];
    // The first `/`, `?` or `;`. A scheme's `://` counts only before any
    // of them; since it holds a `/`, it is there exactly when that first
    // byte is the `/` of a `://`, and then the path starts at the next one.
    // A `#` before the path's start leaves none.
    let first = path_stop(rest, 0)?;
    let scheme = first >= 1 && rest[first - 1] == b':' && rest[first..].starts_with(b"//");
    let start = if scheme {
        path_stop(rest, first + 2)?
    } else {
        first
    };
    Some(from + start)
}

/// [`path_of`] for a URL whose path starts at `start` ([`path_start`]):
/// up to a `#`, a `/` put before a path that starts with `?` or `;`;
/// `/` for a URL without a path.
pub(crate) fn path_at(url: &[u8], start: Option<usize>) -> Cow<'_, [u8]> {
    let Some(start) = start else {
        return Cow::Borrowed(b"/");
    };
    let tail = &url[start..];
    let path = &tail[..crate::lexer::find_byte(tail, b'#').unwrap_or(tail.len())];
    match path.first() {
        Some(b'/') => Cow::Borrowed(path),
        _ => {
            let mut owned = Vec::with_capacity(path.len() + 1);
            owned.push(b'/');
            owned.extend_from_slice(path);
            Cow::Owned(owned)
        }
    }
}

/// The place of the first `/`, `?` or `;` of `s` from `from`, or `None`
/// when there is none or a `#` comes first (the fragment then holds the
/// path's start: there is no path). A scheme and a host are short: eight
/// bytes at a time, in place.
#[inline]
fn path_stop(s: &[u8], from: usize) -> Option<usize> {
    use crate::lexer::has_byte;
    let mut i = from;
    while let Some(word) = s.get(i..i + 8) {
        let mut w = [0u8; 8];
        w.copy_from_slice(word);
        let x = u64::from_le_bytes(w);
        // The lowest flagged byte of each test is exact, and so is the
        // lowest of all four.
        let m = has_byte(x, b'/') | has_byte(x, b'?') | has_byte(x, b';') | has_byte(x, b'#');
        if m != 0 {
            let j = i + (m.trailing_zeros() / 8) as usize;
            return (s[j] != b'#').then_some(j);
        }
        i += 8;
    }
    let j = i + s
        .get(i..)?
        .iter()
        .position(|&b| matches!(b, b'/' | b'?' | b';' | b'#'))?;
    (s[j] != b'#').then_some(j)
}

const HEX: &[u8; 16] = b"0123456789ABCDEF";

/// [`pattern_bits`]: the pattern has a `%`.
pub(crate) const HAS_PERCENT: u8 = 1;
/// [`pattern_bits`]: the pattern has a `*`.
pub(crate) const HAS_STAR: u8 = 2;
/// [`pattern_bits`]: the pattern has a byte outside ASCII.
pub(crate) const HAS_HIGH: u8 = 0x80;

/// What a pattern contains, eight bytes at a time.
#[inline]
pub(crate) fn pattern_bits(p: &[u8]) -> u8 {
    let (mut pct, mut star, mut high) = (0u64, 0u64, 0u64);
    let mut words = p.chunks_exact(8);
    for w in &mut words {
        let mut a = [0u8; 8];
        a.copy_from_slice(w);
        let x = u64::from_le_bytes(a);
        pct |= crate::lexer::has_byte(x, b'%');
        star |= crate::lexer::has_byte(x, b'*');
        high |= x & 0x8080_8080_8080_8080;
    }
    let mut bits = (u8::from(pct != 0) * HAS_PERCENT)
        | (u8::from(star != 0) * HAS_STAR)
        | (u8::from(high != 0) * HAS_HIGH);
    for &b in words.remainder() {
        bits |=
            (u8::from(b == b'%') * HAS_PERCENT) | (u8::from(b == b'*') * HAS_STAR) | (b & HAS_HIGH);
    }
    bits
}

#[inline]
fn hex_val(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Normalises an Allow/Disallow pattern the way Google does before
/// matching: `%xx` escapes get upper-case hex digits and every byte outside
/// ASCII is percent-encoded (`/SanJoséSellers` becomes
/// `/SanJos%C3%A9Sellers`). Returns the input unchanged when nothing needs
/// doing.
///
/// ```
/// use botscope_robotstxt::escape_pattern;
/// assert_eq!(&*escape_pattern("/á%aa".as_bytes()), b"/%C3%A1%AA");
/// ```
pub fn escape_pattern(src: &[u8]) -> Cow<'_, [u8]> {
    // Most patterns are plain ASCII without escapes.
    if pattern_bits(src) & (HAS_PERCENT | HAS_HIGH) == 0 {
        return Cow::Borrowed(src);
    }
    let is_escape = |i: usize| {
        src[i] == b'%'
            && src.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
            && src.get(i + 2).is_some_and(u8::is_ascii_hexdigit)
    };
    let mut needs = false;
    let mut extra = 0usize;
    let mut i = 0;
    while i < src.len() {
        if is_escape(i) {
            needs |= src[i + 1].is_ascii_lowercase() || src[i + 2].is_ascii_lowercase();
            i += 3;
            continue;
        }
        if src[i] & 0x80 != 0 {
            needs = true;
            extra += 2;
        }
        i += 1;
    }
    if !needs {
        return Cow::Borrowed(src);
    }
    let mut out = Vec::with_capacity(src.len() + extra);
    let mut i = 0;
    while i < src.len() {
        if is_escape(i) {
            out.extend_from_slice(&[
                b'%',
                src[i + 1].to_ascii_uppercase(),
                src[i + 2].to_ascii_uppercase(),
            ]);
            i += 3;
            continue;
        }
        let b = src[i];
        if b & 0x80 != 0 {
            out.extend_from_slice(&[b'%', HEX[usize::from(b >> 4)], HEX[usize::from(b & 0xF)]]);
        } else {
            out.push(b);
        }
        i += 1;
    }
    Cow::Owned(out)
}

/// How [`Recoded`] rewrites `%XX` escapes and other bytes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Recoding {
    /// [`escape_pattern`]: `%xx` upper-cased, non-ASCII bytes encoded.
    Escape,
    /// The 1996 draft: `%XX` decoded, except `%2F`, which stays an escape.
    DraftDecode,
}

/// Iterates over the bytes of a path or pattern in a canonical form
/// without building it.
#[derive(Clone)]
pub(crate) struct Recoded<'a> {
    src: &'a [u8],
    pos: usize,
    mode: Recoding,
    pending: [u8; 2],
    npending: u8,
}

impl<'a> Recoded<'a> {
    pub(crate) fn new(src: &'a [u8], mode: Recoding) -> Self {
        Recoded {
            src,
            pos: 0,
            mode,
            pending: [0; 2],
            npending: 0,
        }
    }

    fn emit(&mut self, first: u8, rest: [u8; 2]) -> Option<u8> {
        self.pending = rest;
        self.npending = 2;
        Some(first)
    }
}

impl Iterator for Recoded<'_> {
    type Item = u8;
    #[inline]
    fn next(&mut self) -> Option<u8> {
        if self.npending > 0 {
            let b = self.pending[2 - usize::from(self.npending)];
            self.npending -= 1;
            return Some(b);
        }
        let b = *self.src.get(self.pos)?;
        self.pos += 1;
        let escape = if b == b'%' {
            match (
                self.src.get(self.pos).copied(),
                self.src.get(self.pos + 1).copied(),
            ) {
                (Some(h), Some(l)) if h.is_ascii_hexdigit() && l.is_ascii_hexdigit() => {
                    Some((h, l))
                }
                _ => None,
            }
        } else {
            None
        };
        match (self.mode, escape) {
            (Recoding::Escape, Some((h, l))) => {
                self.pos += 2;
                self.emit(b'%', [h.to_ascii_uppercase(), l.to_ascii_uppercase()])
            }
            (Recoding::Escape, None) if b & 0x80 != 0 => {
                self.emit(b'%', [HEX[usize::from(b >> 4)], HEX[usize::from(b & 0xF)]])
            }
            (Recoding::DraftDecode, Some((h, l))) => {
                self.pos += 2;
                let v = (hex_val(h).unwrap_or(0) << 4) | hex_val(l).unwrap_or(0);
                if v == b'/' {
                    self.emit(b'%', [b'2', b'F'])
                } else {
                    Some(v)
                }
            }
            _ => Some(b),
        }
    }
}

/// The 1996 draft's canonical form of a path, as a vector.
pub(crate) fn draft_canonical(src: &[u8]) -> Vec<u8> {
    Recoded::new(src, Recoding::DraftDecode).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `path_of` as it was first written (a search for each of its
    /// bytes), the reference the word-at-a-time version is held to.
    fn reference_path_of(url: &[u8]) -> Vec<u8> {
        if url.first() == Some(&b'/') && url.get(1) != Some(&b'/') {
            return url[..memchr::memchr(b'#', url).unwrap_or(url.len())].to_vec();
        }
        let from = if url.starts_with(b"//") { 2 } else { 0 };
        let rest = &url[from..];
        let Some(first) = memchr::memchr3(b'/', b'?', b';', rest) else {
            return b"/".to_vec();
        };
        let scheme = first >= 1 && rest[first - 1] == b':' && rest[first..].starts_with(b"//");
        let path_start = if scheme {
            match memchr::memchr3(b'/', b'?', b';', &rest[first + 2..]) {
                Some(i) => first + 2 + i,
                None => return b"/".to_vec(),
            }
        } else {
            first
        };
        let hash = memchr::memchr(b'#', rest);
        if hash.is_some_and(|h| h < path_start) {
            return b"/".to_vec();
        }
        let path = &rest[path_start..hash.unwrap_or(rest.len())];
        if path[0] != b'/' {
            return [b"/", path].concat();
        }
        path.to_vec()
    }

    #[test]
    fn paths_as_the_reference_finds_them() {
        // Every string of up to five bytes from the bytes that matter,
        // after prefixes that put them at every place of a word.
        let alphabet: &[u8] = b"/?;#:a";
        let mut urls: Vec<Vec<u8>> = vec![Vec::new()];
        let mut level = vec![Vec::new()];
        for _ in 0..5 {
            level = level
                .iter()
                .flat_map(|u: &Vec<u8>| {
                    alphabet.iter().map(move |&b| [u.as_slice(), &[b]].concat())
                })
                .collect();
            urls.extend(level.iter().cloned());
        }
        let prefixes = [
            &b""[..],
            b"https://",
            b"//",
            b"a://",
            b"https://h",
            b"https://hos",
            b"https://host.exa",
            b"xxxxxxx",
        ];
        for prefix in prefixes {
            for u in &urls {
                let url = [prefix, u.as_slice()].concat();
                assert_eq!(
                    &*path_of(&url),
                    reference_path_of(&url).as_slice(),
                    "{}",
                    String::from_utf8_lossy(&url)
                );
            }
        }
    }

    #[test]
    fn draft_decoding_keeps_encoded_slash() {
        assert_eq!(
            draft_canonical(b"/%7efred/hi%2fthere%41"),
            b"/~fred/hi%2FthereA".to_vec()
        );
        assert_eq!(draft_canonical(b"/100%"), b"/100%".to_vec());
        assert_eq!(draft_canonical(b"/%zz"), b"/%zz".to_vec());
    }

    #[test]
    fn escaped_bytes_equal_escape_pattern() {
        for p in [
            &b"/caf\xc3\xa9/%aa%2f%zz%"[..],
            b"",
            b"%",
            b"\xff",
            b"/plain",
            b"%a\xff",
        ] {
            let lazy: Vec<u8> = Recoded::new(p, Recoding::Escape).collect();
            assert_eq!(lazy, escape_pattern(p).into_owned(), "{p:?}");
        }
    }

    #[test]
    fn path_edge_cases() {
        assert_eq!(&*path_of(b"http://a.b/x#y"), b"/x");
        assert_eq!(&*path_of(b"http://a.b#y/x"), b"/");
        assert_eq!(&*path_of(b"http://[::1]:80/x?y"), b"/x?y");
        assert_eq!(&*path_of(b"a;b"), b"/;b");
        // `://` is a scheme's only before the first `/`, `?` or `;`.
        assert_eq!(&*path_of(b"a:/b"), b"/b");
        assert_eq!(&*path_of(b"a://b"), b"/");
        assert_eq!(&*path_of(b"a://b;c"), b"/;c");
        assert_eq!(&*path_of(b"x;a://b/c"), b"/;a://b/c");
        assert_eq!(&*path_of(b"?://x/y"), b"/?://x/y");
        assert_eq!(&*path_of(b"a://#/b"), b"/");
        assert_eq!(&*path_of(b"\xff\xfe/\xff"), b"/\xff");
    }
}
