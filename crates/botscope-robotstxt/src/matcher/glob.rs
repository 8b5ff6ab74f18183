//! RFC 9309's pattern match (`*` any run of bytes, `$` at the very end
//! anchors the end), in time linear in the path and the pattern however
//! many wildcards a stranger writes.
//!
//! Each `*`-separated segment is searched once, leftmost, from where the
//! previous one ended: a leftmost match never loses a match a later place
//! would have found, so there is no backtracking (the exponential matching
//! of Protego's CVE-2026-55520 cannot happen here). Every function counts
//! the bytes it examines into `scanned`: at most the path's length plus
//! nine times the pattern's ([`SCAN_PER_PATTERN_BYTE`]), which the
//! matcher's work counter adds and the cost tests check.

/// How many path bytes a match may examine per pattern byte, beyond one
/// pass over the path: the segment search's tries compare a segment at up to eight
/// false starts, and its searcher reads the segment once more.
pub const SCAN_PER_PATTERN_BYTE: u64 = 9;

/// Google's pattern match: anchored at the start, `*` matches any run of
/// bytes, `$` at the very end anchors the end, and elsewhere `$` is a plain
/// character. Adds the bytes examined to `scanned`.
#[inline]
pub(super) fn glob_matches(path: &[u8], pat: &[u8], scanned: &mut u64) -> bool {
    let (body, anchored) = unanchored(pat);
    let start = memchr::memchr(b'*', body).unwrap_or(body.len());
    *scanned += start.min(path.len()) as u64;
    path.starts_with(&body[..start]) && glob_tail(path, start, &body[start..], anchored, scanned)
}

/// A pattern without its end anchor, and whether it had one.
#[inline]
pub(super) fn unanchored(pat: &[u8]) -> (&[u8], bool) {
    match pat.split_last() {
        Some((b'$', rest)) => (rest, true),
        _ => (pat, false),
    }
}

/// The rest of a wildcard match once `path[..pos]` has matched the
/// pattern's literal start: `rest` is what follows that start (empty, or
/// from its first `*`), without the end anchor. Adds the bytes examined
/// to `scanned`.
#[inline]
pub(super) fn glob_tail(
    path: &[u8],
    mut pos: usize,
    rest: &[u8],
    anchored: bool,
    scanned: &mut u64,
) -> bool {
    // `rest` is empty or starts with a `*`, as every segment after it.
    let mut rest = rest;
    while let Some((_, after)) = rest.split_first() {
        let (seg, next) =
            after.split_at(after.iter().position(|&b| b == b'*').unwrap_or(after.len()));
        rest = next;
        if rest.is_empty() && anchored {
            *scanned += seg.len() as u64;
            return path.len() >= pos + seg.len() && path.ends_with(seg);
        }
        if seg.is_empty() {
            continue;
        }
        match find(&path[pos..], seg, scanned) {
            Some(i) => pos += i + seg.len(),
            None => return false,
        }
    }
    !anchored || pos == path.len()
}

/// The first place of `needle` (not empty) in `hay`. A path is short
/// and a pattern's segment shorter: the places of the segment's first
/// byte are tried one by one, and only a path with many false starts
/// gets a substring searcher (whose set-up costs more than a few tries,
/// and whose search is linear however the bytes repeat). Adds the bytes
/// examined to `scanned`: the hay up to the match's end (or all of it),
/// a whole needle per try, and the needle once for the searcher.
fn find(hay: &[u8], needle: &[u8], scanned: &mut u64) -> Option<usize> {
    const TRIES: usize = 8;
    let (&first, _) = needle.split_first()?;
    let n = needle.len();
    let mut at = 0;
    for _ in 0..TRIES {
        let Some(off) = memchr::memchr(first, &hay[at..]) else {
            *scanned += (hay.len() - at) as u64;
            return None;
        };
        let i = at + off;
        *scanned += off as u64 + n as u64;
        if hay.len() - i < n {
            return None;
        }
        // The last byte first: most false starts end there, without a
        // call to compare the rest.
        if hay[i + n - 1] == needle[n - 1] && &hay[i..i + n] == needle {
            return Some(i);
        }
        at = i + 1;
    }
    let found = memchr::memmem::find(&hay[at..], needle);
    *scanned += n as u64 + found.map_or(hay.len() - at, |i| i + n) as u64;
    found.map(|i| at + i)
}

/// Whether `pat` (escaped as [`crate::url::escape_pattern`] does) matches
/// `path` under RFC 9309's rules, for the rules the matcher does not
/// compile (Content-Usage).
pub(crate) fn pattern_matches(path: &[u8], pat: &[u8]) -> bool {
    glob_matches(path, pat, &mut 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(path: &[u8], pat: &[u8]) -> bool {
        let mut scanned = 0;
        let m = glob_matches(path, pat, &mut scanned);
        assert!(
            scanned <= path.len() as u64 + SCAN_PER_PATTERN_BYTE * pat.len() as u64,
            "{scanned} bytes examined for {} and {}",
            path.len(),
            pat.len()
        );
        m
    }

    /// The reference: RFC 9309's match by dynamic programming over every
    /// (pattern, path) position pair.
    fn reference(path: &[u8], pat: &[u8]) -> bool {
        let (body, anchored) = unanchored(pat);
        // reach[j]: the pattern so far can end at path[..j].
        let mut reach = vec![false; path.len() + 1];
        reach[0] = true;
        for &c in body {
            let mut next = vec![false; path.len() + 1];
            if c == b'*' {
                let mut any = false;
                for j in 0..=path.len() {
                    any |= reach[j];
                    next[j] = any;
                }
            } else {
                for j in 0..path.len() {
                    next[j + 1] = reach[j] && path[j] == c;
                }
            }
            reach = next;
        }
        if anchored {
            reach[path.len()]
        } else {
            reach.iter().any(|&r| r)
        }
    }

    #[test]
    fn find_agrees_with_a_substring_search() {
        // False starts past the tries before the searcher takes over, a
        // needle at the very end, one cut off by the end, repeats.
        let hay = b"/aaaaaaaaaaaaaaaaaaaab/sess/session=1/x?a=1&ab=2aab";
        for needle in [
            &b"ab"[..],
            b"aab",
            b"session=",
            b"sess",
            b"aab=",
            b"b",
            b"/",
            b"zz",
            b"aaaaaaaaaaaaaaaaaaaaab",
            b"aaaaaaaaaaaaaaaaaaaaaab",
            b"2aab",
            b"2aabb",
        ] {
            for from in 0..hay.len() {
                let h = &hay[from..];
                let want = h.windows(needle.len()).position(|w| w == needle);
                let mut scanned = 0;
                assert_eq!(find(h, needle, &mut scanned), want, "{needle:?} in {h:?}");
                assert!(scanned <= (h.len() + 9 * needle.len()) as u64);
            }
        }
        assert_eq!(find(b"", b"a", &mut 0), None);
        assert_eq!(find(b"abc", b"", &mut 0), None);
    }

    #[test]
    fn glob_semantics() {
        assert!(matches(b"/foo/bar/qux", b"/foo/*/qux"));
        assert!(!matches(b"/foo/quz", b"/foo/*/qux"));
        assert!(matches(b"/a.php", b"/*.php$"));
        assert!(!matches(b"/a.php?x", b"/*.php$"));
        assert!(matches(b"/a.php.php", b"/*.php$"));
        assert!(matches(b"/anything", b"*"));
        assert!(matches(b"/x", b"*$"));
        assert!(matches(b"/a$b/c", b"/a$*/c"));
        assert!(matches(b"/fish.php", b"/fish*.php"));
        assert!(!matches(b"/Fish.PHP", b"/fish*.php"));
    }

    /// Every pattern of up to five bytes over `/ab*$` against every path
    /// of up to six bytes over `/ab`: the leftmost, non-backtracking match
    /// answers as the full dynamic programme.
    #[test]
    fn agrees_with_the_dynamic_programme_everywhere_small() {
        fn all(alphabet: &[u8], max: usize) -> Vec<Vec<u8>> {
            let mut out = vec![Vec::new()];
            let mut layer = vec![Vec::new()];
            for _ in 0..max {
                let mut next = Vec::new();
                for w in &layer {
                    for &c in alphabet {
                        let mut v = w.clone();
                        v.push(c);
                        next.push(v);
                    }
                }
                out.extend(next.iter().cloned());
                layer = next;
            }
            out
        }
        let paths = all(b"/ab", 6);
        let mut n = 0;
        for pat in all(b"/ab*$", 5) {
            for path in &paths {
                assert_eq!(
                    matches(path, &pat),
                    reference(path, &pat),
                    "{:?} against {:?}",
                    String::from_utf8_lossy(&pat),
                    String::from_utf8_lossy(path)
                );
                n += 1;
            }
        }
        assert!(n > 3_000_000, "{n}");
    }

    /// 50,000 wildcards in one pattern (more than a robots.txt line
    /// holds) against paths of 150,000 and 300,000 bytes: within the
    /// bound, and twice the input examines twice the bytes.
    #[test]
    fn tens_of_thousands_of_wildcards_examine_a_bounded_number_of_bytes() {
        let mut seen = Vec::new();
        for n in [25_000, 50_000] {
            let mut pat = b"/".to_vec();
            for _ in 0..n {
                pat.extend_from_slice(b"*a");
            }
            pat.extend_from_slice(b"*b");
            let mut path = b"/".to_vec();
            path.extend(std::iter::repeat_n(b'a', 3 * n));
            let mut scanned = 0;
            assert!(!glob_matches(&path, &pat, &mut scanned));
            assert!(scanned <= path.len() as u64 + SCAN_PER_PATTERN_BYTE * pat.len() as u64);
            assert!(
                scanned >= path.len() as u64,
                "{scanned}: the search for `b` is counted"
            );
            path.push(b'b');
            assert!(matches(&path, &pat));
            seen.push(scanned);
        }
        assert!(seen[1] <= 2 * seen[0] + 2, "{seen:?}");
    }
}
