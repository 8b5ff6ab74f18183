//! Splits robots.txt bytes into lines and lines into key and value.
//!
//! This is the one tokenizer of the crate: the parse tree, the compiled
//! matcher and lint all read its output. It reproduces the line handling of
//! Google's reference parser byte for byte, because verdicts depend on it:
//!
//! - a line ends at LF, CR or CRLF (a CRLF counts as one line end);
//! - a prefix of the UTF-8 byte order mark at the very start is skipped,
//!   even a partial one;
//! - a line is cut at its first NUL byte and after [`MAX_LINE_LEN`] bytes;
//! - everything from the first `#` is a comment;
//! - key and value are split at the first `:`, or, when there is no colon,
//!   at whitespace if the line holds exactly two words;
//! - leading and trailing ASCII whitespace is stripped from key and value.

/// Longest line the matcher reads, in bytes; the rest of a longer line is
/// ignored (the limit of Google's reference parser: 8 × 2083 − 1).
pub const MAX_LINE_LEN: usize = 2083 * 8 - 1;

const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// One physical line of the input.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RawLine<'a> {
    /// 1-based line number, counted the way Google's parser counts.
    pub number: u32,
    /// The line without its terminator.
    pub bytes: &'a [u8],
}

/// Number of leading bytes that are (a prefix of) a UTF-8 BOM and are skipped.
pub(crate) fn bom_len(input: &[u8]) -> usize {
    input
        .iter()
        .zip(BOM.iter())
        .take_while(|(a, b)| a == b)
        .count()
}

/// Calls `f` for every line of `input`, including empty ones and the final
/// line (which may be empty). Returns the number of lines.
#[cfg(test)]
pub(crate) fn for_each_line<'a>(input: &'a [u8], mut f: impl FnMut(RawLine<'a>)) -> u32 {
    for_each_line_hash(input, |l, _| f(l))
}

/// Like [`for_each_line`], giving with each line the place of its first
/// `#` (`None`: it has none), found in the same pass over the input.
pub(crate) fn for_each_line_hash<'a>(
    input: &'a [u8],
    mut f: impl FnMut(RawLine<'a>, Option<usize>),
) -> u32 {
    let start = bom_len(input);
    let body = &input[start..];
    let mut line_start = 0usize;
    let mut number = 0u32;
    let mut last_was_cr = false;
    let mut hash: Option<usize> = None;
    for i in memchr::memchr3_iter(b'\n', b'\r', b'#', body) {
        let end = body[i];
        if end == b'#' {
            hash.get_or_insert(i - line_start);
            last_was_cr = false;
            continue;
        }
        // The LF of a CRLF pair ends nothing: it only completes the CR.
        let crlf_continuation = i == line_start && last_was_cr && end == b'\n';
        if !crlf_continuation {
            number = number.saturating_add(1);
            f(
                RawLine {
                    number,
                    bytes: &body[line_start..i],
                },
                hash.take(),
            );
        }
        last_was_cr = end == b'\r';
        line_start = i + 1;
    }
    number = number.saturating_add(1);
    f(
        RawLine {
            number,
            bytes: &body[line_start..],
        },
        hash,
    );
    number
}

/// Number of line ends in `bytes`, counting a CRLF pair once.
pub(crate) fn count_line_ends(bytes: &[u8]) -> usize {
    let mut n = 0;
    let mut last_cr = false;
    for &b in bytes {
        match b {
            b'\n' if last_cr => last_cr = false,
            b'\n' => n += 1,
            b'\r' => {
                n += 1;
                last_cr = true;
            }
            _ => last_cr = false,
        }
    }
    n
}

/// What happened to a line before it was split into key and value.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct LineFlags {
    /// A NUL byte cut the line short.
    pub nul: bool,
    /// The line was longer than [`MAX_LINE_LEN`] and was cut.
    pub too_long: bool,
    /// Key and value were separated by whitespace instead of a colon.
    pub no_colon: bool,
}

/// A line split into key and value. Offsets are relative to the line start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct KeyValue<'a> {
    pub key: &'a [u8],
    pub key_start: usize,
    pub value: &'a [u8],
    pub value_start: usize,
    pub flags: LineFlags,
}

/// Why a non-blank line yielded no key/value pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LineShape<'a> {
    /// Nothing but whitespace and comments.
    Blank { comment: bool },
    /// A key and a value.
    Pair(KeyValue<'a>),
    /// Text that is not `key: value` (no separator, or an empty key).
    Junk { flags: LineFlags },
}

/// ASCII whitespace as `absl::ascii_isspace` defines it.
#[inline]
pub(crate) fn is_space(b: u8) -> bool {
    // Bits 9..=13 (\t \n \v \f \r) and 32 (space).
    const MASK: u64 = (1 << 9) | (1 << 10) | (1 << 11) | (1 << 12) | (1 << 13) | (1 << 32);
    b < 64 && (MASK >> b) & 1 == 1
}

/// Returns `(start, end)` of `s[start..end]` without surrounding whitespace.
#[inline]
fn trim_range(s: &[u8], mut start: usize, mut end: usize) -> (usize, usize) {
    while start < end && is_space(s[start]) {
        start += 1;
    }
    while end > start && is_space(s[end - 1]) {
        end -= 1;
    }
    (start, end)
}

/// Nonzero when some byte of `x` equals `b` (the classic SWAR test; the
/// lowest flagged byte is exact).
#[inline]
pub(crate) fn has_byte(x: u64, b: u8) -> u64 {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let y = x ^ (LO * u64::from(b));
    y.wrapping_sub(LO) & !y & HI
}

/// A little-endian word of `s` at `i` (eight bytes there).
#[inline]
fn word_at(s: &[u8], i: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&s[i..i + 8]);
    u64::from_le_bytes(w)
}

/// The place of the first `b` of `s`, found eight bytes at a time in
/// place for its first 64 bytes (a path, a field: a call to a vector
/// search costs more than such a search), then by `memchr`.
#[inline]
pub(crate) fn find_byte(s: &[u8], b: u8) -> Option<usize> {
    let mut i = 0;
    while i + 8 <= s.len() && i < 64 {
        let m = has_byte(word_at(s, i), b);
        if m != 0 {
            return Some(i + (m.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    if i < 64 {
        return s[i..].iter().position(|&c| c == b).map(|j| i + j);
    }
    memchr::memchr(b, &s[i..]).map(|j| i + j)
}

/// Splits one line into key and value the way Google's parser does.
pub(crate) fn split_line(line: &[u8]) -> LineShape<'_> {
    let mut colon = usize::MAX;
    // One pass: the first NUL (end of a C string) or `#` (comment) ends
    // the text; remember the first colon before it. Eight bytes at a time.
    let mut stop = usize::MAX;
    let n = line.len();
    // Offsets of the flagged bytes in the word at `at`, bytes below `from`
    // ignored (already scanned, and holding no match that could spill a
    // false flag into the bytes above).
    let mut word = |at: usize, from: usize, colon: &mut usize| -> bool {
        let mut w = [0u8; 8];
        w.copy_from_slice(&line[at..at + 8]);
        let x = u64::from_le_bytes(w);
        let keep = !0u64 << (8 * (from - at));
        let s = (has_byte(x, 0) | has_byte(x, b'#')) & keep;
        let s_at = if s == 0 {
            usize::MAX
        } else {
            at + (s.trailing_zeros() / 8) as usize
        };
        if *colon == usize::MAX {
            let c = has_byte(x, b':') & keep;
            if c != 0 {
                let c_at = at + (c.trailing_zeros() / 8) as usize;
                if c_at < s_at {
                    *colon = c_at;
                }
            }
        }
        if s != 0 {
            stop = s_at;
        }
        s != 0
    };
    if n >= 8 {
        let mut i = 0;
        let mut found = false;
        while i + 8 <= n {
            if word(i, i, &mut colon) {
                found = true;
                break;
            }
            i += 8;
        }
        // The tail: one more word, overlapping what was scanned.
        if !found && i < n {
            word(n - 8, i, &mut colon);
        }
    } else {
        for (j, &b) in line.iter().enumerate() {
            match b {
                0 | b'#' => {
                    stop = j;
                    break;
                }
                b':' if colon == usize::MAX => colon = j,
                _ => {}
            }
        }
    }
    split_known(line, stop, colon)
}

/// [`split_line`] for a line whose first NUL or `#` is known: at `stop`
/// (`None`: it has neither). Only the key is searched for its colon.
#[inline]
pub(crate) fn split_line_until(line: &[u8], stop: Option<usize>) -> LineShape<'_> {
    let text = &line[..stop.unwrap_or(line.len())];
    let colon = text.iter().position(|&b| b == b':').unwrap_or(usize::MAX);
    split_known(line, stop.unwrap_or(usize::MAX), colon)
}

/// The rest of [`split_line`] once the first NUL or `#` (`stop`,
/// `usize::MAX` for none) and the first colon before it (`colon`,
/// `usize::MAX` for none) are known.
#[inline]
fn split_known(line: &[u8], stop: usize, colon: usize) -> LineShape<'_> {
    let mut flags = LineFlags::default();
    let mut comment = false;
    let mut end = line.len();
    if stop != usize::MAX {
        end = stop;
        if line[stop] == 0 {
            flags.nul = true;
        } else {
            comment = true;
        }
    }
    if end > MAX_LINE_LEN {
        end = MAX_LINE_LEN;
        flags.too_long = true;
        comment = false;
    }
    let (start, end) = trim_range(line, 0, end);
    if start == end {
        return if flags.nul || flags.too_long {
            LineShape::Junk { flags }
        } else {
            LineShape::Blank { comment }
        };
    }
    let sep = if colon < end {
        colon
    } else {
        // Whitespace is accepted in place of the colon only when the line
        // is exactly two words.
        let body = &line[start..end];
        let Some(i) = body.iter().position(|&b| b == b' ' || b == b'\t') else {
            return LineShape::Junk { flags };
        };
        let after = &body[i..];
        let val = after
            .iter()
            .position(|&b| b != b' ' && b != b'\t')
            .unwrap_or(after.len());
        if after[val..].iter().any(|&b| b == b' ' || b == b'\t') {
            return LineShape::Junk { flags };
        }
        flags.no_colon = true;
        start + i
    };
    // `start` and `end` are already trimmed: the key needs trimming only
    // on its right, the value only on its left.
    let (ks, mut ke) = (start, sep);
    while ke > ks && is_space(line[ke - 1]) {
        ke -= 1;
    }
    if ks == ke {
        return LineShape::Junk { flags };
    }
    let (mut vs, ve) = (sep + 1, end.max(sep + 1));
    while vs < ve && is_space(line[vs]) {
        vs += 1;
    }
    LineShape::Pair(KeyValue {
        key: &line[ks..ke],
        key_start: ks,
        value: &line[vs..ve],
        value_start: vs,
        flags,
    })
}

/// The keys the parser knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum KeyKind {
    /// `User-agent`: starts a group.
    UserAgent,
    /// `Allow`: a rule.
    Allow,
    /// `Disallow`: a rule.
    Disallow,
    /// `Sitemap`: a sitemap URL, valid anywhere in the file.
    Sitemap,
    /// `Crawl-delay`: seconds between requests (not read by Google).
    CrawlDelay,
    /// `Request-rate`: requests per time span (not read by Google).
    RequestRate,
    /// `Visit-time`: hours in which to crawl (not read by Google).
    VisitTime,
    /// `Host`: the preferred host name (Yandex).
    Host,
    /// `Clean-param`: query parameters to ignore (Yandex).
    CleanParam,
    /// `Content-Signal`: what the content may be used for (Cloudflare's
    /// Content Signals Policy, 2025: `search=yes, ai-train=no`).
    ContentSignal,
    /// `Content-Usage`: AI usage preferences for a path (IETF aipref,
    /// draft-ietf-aipref-attach: `Content-Usage: / train-ai=n`).
    ContentUsage,
    /// `License`: the site's RSL licence (RSL 1.0: a full URL, global,
    /// not tied to any group).
    License,
    /// `Noindex`: never supported by RFC 9309; Google dropped it in 2019.
    Noindex,
    /// Any other key.
    Unknown,
}

impl KeyKind {
    /// The canonical spelling of the key.
    pub fn canonical(self) -> &'static str {
        match self {
            KeyKind::UserAgent => "User-agent",
            KeyKind::Allow => "Allow",
            KeyKind::Disallow => "Disallow",
            KeyKind::Sitemap => "Sitemap",
            KeyKind::CrawlDelay => "Crawl-delay",
            KeyKind::RequestRate => "Request-rate",
            KeyKind::VisitTime => "Visit-time",
            KeyKind::Host => "Host",
            KeyKind::CleanParam => "Clean-param",
            KeyKind::ContentSignal => "Content-Signal",
            KeyKind::ContentUsage => "Content-Usage",
            KeyKind::License => "License",
            KeyKind::Noindex => "Noindex",
            KeyKind::Unknown => "",
        }
    }

    /// True for the keys Google's parser treats as unknown (no effect on
    /// groups or matching).
    pub fn is_extension(self) -> bool {
        !matches!(
            self,
            KeyKind::UserAgent | KeyKind::Allow | KeyKind::Disallow | KeyKind::Sitemap
        )
    }
}

/// `key | 0x20 == canon` for keys of 4 to 16 bytes, with two overlapping
/// word loads instead of a byte loop. `canon` is lower-case.
#[inline]
fn lower_eq(key: &[u8], canon: &[u8]) -> bool {
    debug_assert_eq!(key.len(), canon.len());
    let n = key.len();
    if n >= 8 {
        let w = |s: &[u8], at: usize| {
            let mut a = [0u8; 8];
            a.copy_from_slice(&s[at..at + 8]);
            u64::from_le_bytes(a)
        };
        const M: u64 = 0x2020_2020_2020_2020;
        (w(key, 0) | M) == w(canon, 0) && (w(key, n - 8) | M) == w(canon, n - 8)
    } else {
        let w = |s: &[u8], at: usize| {
            let mut a = [0u8; 4];
            a.copy_from_slice(&s[at..at + 4]);
            u32::from_le_bytes(a)
        };
        const M: u32 = 0x2020_2020;
        (w(key, 0) | M) == w(canon, 0) && (w(key, n - 4) | M) == w(canon, n - 4)
    }
}

#[inline]
fn starts_with_ci(s: &[u8], prefix: &[u8]) -> bool {
    s.len() >= prefix.len() && s[..prefix.len()].eq_ignore_ascii_case(prefix)
}

/// Classifies a key. The second value is true when the spelling is not the
/// canonical one but Google accepts it anyway (a prefix match or a frequent
/// typo such as `Dissallow`).
pub(crate) fn classify_key(key: &[u8]) -> (KeyKind, bool) {
    const UA: [&[u8]; 3] = [b"user-agent", b"useragent", b"user agent"];
    const DISALLOW: [&[u8]; 6] = [
        b"disallow",
        b"dissallow",
        b"dissalow",
        b"disalow",
        b"diasllow",
        b"disallaw",
    ];
    const SITEMAP: [&[u8]; 2] = [b"sitemap", b"site-map"];
    // Fast path for the canonical spellings, in any case: OR-ing 0x20
    // lower-cases letters and leaves `-` alone (the only other byte it
    // turns into `-` is CR, which never occurs inside a line).
    match key.len() {
        8 if lower_eq(key, b"disallow") => return (KeyKind::Disallow, false),
        5 if lower_eq(key, b"allow") => return (KeyKind::Allow, false),
        10 if lower_eq(key, b"user-agent") => return (KeyKind::UserAgent, false),
        7 if lower_eq(key, b"sitemap") => return (KeyKind::Sitemap, false),
        _ => {}
    }
    let exact = |canon: &[u8]| key.eq_ignore_ascii_case(canon);
    // The order of the checks is Google's; the first letter only skips
    // checks that cannot match.
    match key.first().map(u8::to_ascii_lowercase) {
        Some(b'u') if UA.iter().any(|p| starts_with_ci(key, p)) => {
            return (KeyKind::UserAgent, !exact(b"user-agent"));
        }
        Some(b'a') if starts_with_ci(key, b"allow") => return (KeyKind::Allow, !exact(b"allow")),
        Some(b'd') if DISALLOW.iter().any(|p| starts_with_ci(key, p)) => {
            return (KeyKind::Disallow, !exact(b"disallow"));
        }
        Some(b's') if SITEMAP.iter().any(|p| starts_with_ci(key, p)) => {
            return (KeyKind::Sitemap, !exact(b"sitemap"));
        }
        _ => {}
    }
    let ext: &[(&[u8], KeyKind)] = &[
        (b"crawl-delay", KeyKind::CrawlDelay),
        (b"crawl_delay", KeyKind::CrawlDelay),
        (b"crawldelay", KeyKind::CrawlDelay),
        (b"request-rate", KeyKind::RequestRate),
        (b"visit-time", KeyKind::VisitTime),
        (b"host", KeyKind::Host),
        (b"clean-param", KeyKind::CleanParam),
        (b"content-signal", KeyKind::ContentSignal),
        (b"content-usage", KeyKind::ContentUsage),
        (b"license", KeyKind::License),
        (b"noindex", KeyKind::Noindex),
    ];
    for (spelling, kind) in ext {
        if key.eq_ignore_ascii_case(spelling) {
            return (
                *kind,
                !key.eq_ignore_ascii_case(kind.canonical().as_bytes()),
            );
        }
    }
    (KeyKind::Unknown, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_byte_finds_the_first_one_at_every_place() {
        // Lengths past the 64 bytes searched in place, the byte at each
        // place, twice, or nowhere; bytes beside it that the word test
        // must not take for it (its neighbours, high bytes).
        for len in 0..150 {
            for filler in [b'a', b'#' ^ 1, b'#' + 1, 0x80 | b'#', 0] {
                let mut s = vec![filler; len];
                assert_eq!(find_byte(&s, b'#'), None, "{len} {filler}");
                for at in 0..len {
                    s[at] = b'#';
                    if at + 3 < len {
                        s[at + 3] = b'#';
                    }
                    assert_eq!(find_byte(&s, b'#'), Some(at), "{len} {filler} {at}");
                    s.fill(filler);
                }
            }
        }
    }

    fn lines(input: &[u8]) -> Vec<(u32, Vec<u8>)> {
        let mut out = Vec::new();
        for_each_line(input, |l| out.push((l.number, l.bytes.to_vec())));
        out
    }

    #[test]
    fn line_endings_cr_lf_crlf() {
        let got = lines(b"a\nb\rc\r\nd\n\re");
        let want: Vec<(u32, Vec<u8>)> = vec![
            (1, b"a".to_vec()),
            (2, b"b".to_vec()),
            (3, b"c".to_vec()),
            (4, b"d".to_vec()),
            (5, b"".to_vec()),
            (6, b"e".to_vec()),
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn partial_bom_is_skipped() {
        assert_eq!(bom_len(b"\xEF\xBB\xBFx"), 3);
        assert_eq!(bom_len(b"\xEF\xBBx"), 2);
        assert_eq!(bom_len(b"\xEFx"), 1);
        assert_eq!(bom_len(b"x\xEF"), 0);
        assert_eq!(lines(b"\xEF\xBBUA")[0].1, b"UA".to_vec());
    }

    fn pair(line: &[u8]) -> Option<(Vec<u8>, Vec<u8>, bool)> {
        match split_line(line) {
            LineShape::Pair(kv) => Some((kv.key.to_vec(), kv.value.to_vec(), kv.flags.no_colon)),
            _ => None,
        }
    }

    #[test]
    fn separators() {
        assert_eq!(
            pair(b"  Disallow :  /x  # c"),
            Some((b"Disallow".to_vec(), b"/x".to_vec(), false))
        );
        assert_eq!(
            pair(b"disallow /x"),
            Some((b"disallow".to_vec(), b"/x".to_vec(), true))
        );
        assert_eq!(pair(b"disallow /x /y"), None);
        assert_eq!(pair(b"disallow"), None);
        assert_eq!(pair(b": /x"), None);
        assert_eq!(
            pair(b"Disallow: /a\0/b"),
            Some((b"Disallow".to_vec(), b"/a".to_vec(), false))
        );
        assert!(matches!(
            split_line(b"   # only a comment"),
            LineShape::Blank { comment: true }
        ));
        assert!(matches!(
            split_line(b""),
            LineShape::Blank { comment: false }
        ));
    }

    /// The word-at-a-time scan against a byte-at-a-time reading of the
    /// same rules, over every placement of the special bytes.
    #[test]
    fn word_scan_matches_byte_scan() {
        fn reference(line: &[u8]) -> Option<(Vec<u8>, Vec<u8>)> {
            let end = line
                .iter()
                .position(|&b| b == 0 || b == b'#')
                .unwrap_or(line.len())
                .min(MAX_LINE_LEN);
            let text = &line[..end];
            let trim = |s: &[u8]| -> Vec<u8> {
                let a = s.iter().position(|&b| !is_space(b)).unwrap_or(s.len());
                let z = s.iter().rposition(|&b| !is_space(b)).map_or(a, |z| z + 1);
                s[a..z.max(a)].to_vec()
            };
            let t = trim(text);
            let (k, v) = match t.iter().position(|&b| b == b':') {
                Some(c) => (trim(&t[..c]), trim(&t[c + 1..])),
                None => {
                    let words: Vec<&[u8]> = t
                        .split(|&b| b == b' ' || b == b'\t')
                        .filter(|w| !w.is_empty())
                        .collect();
                    if words.len() != 2 {
                        return None;
                    }
                    (words[0].to_vec(), words[1].to_vec())
                }
            };
            (!k.is_empty()).then_some((k, v))
        }
        let alphabet: &[u8] = b"a:# \0";
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        for len in 0..=19 {
            for _ in 0..2000 {
                let line: Vec<u8> = (0..len)
                    .map(|_| {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        alphabet[(state % alphabet.len() as u64) as usize]
                    })
                    .collect();
                let shape = split_line(&line);
                // Told where the first `#` is (a line without a NUL), the
                // split is the same.
                if !line.contains(&0) {
                    let hash = line.iter().position(|&b| b == b'#');
                    assert_eq!(split_line_until(&line, hash), shape);
                }
                let got = match shape {
                    LineShape::Pair(kv) => Some((kv.key.to_vec(), kv.value.to_vec())),
                    _ => None,
                };
                assert_eq!(
                    got,
                    reference(&line),
                    "{:?}",
                    String::from_utf8_lossy(&line)
                );
            }
        }
    }

    #[test]
    fn long_lines_are_cut() {
        let mut line = b"Disallow: /".to_vec();
        line.extend(std::iter::repeat_n(b'a', 20_000));
        let LineShape::Pair(kv) = split_line(&line) else {
            panic!("not a pair")
        };
        assert!(kv.flags.too_long);
        assert_eq!(kv.value.len(), MAX_LINE_LEN - b"Disallow: ".len());
    }

    #[test]
    fn keys_and_typos() {
        assert_eq!(classify_key(b"USER-AGENT"), (KeyKind::UserAgent, false));
        assert_eq!(classify_key(b"useragent"), (KeyKind::UserAgent, true));
        assert_eq!(classify_key(b"user agent"), (KeyKind::UserAgent, true));
        assert_eq!(classify_key(b"Dissallow"), (KeyKind::Disallow, true));
        assert_eq!(classify_key(b"allowed"), (KeyKind::Allow, true));
        assert_eq!(classify_key(b"Site-map"), (KeyKind::Sitemap, true));
        assert_eq!(classify_key(b"crawl-Delay"), (KeyKind::CrawlDelay, false));
        assert_eq!(classify_key(b"crawldelay"), (KeyKind::CrawlDelay, true));
        assert_eq!(classify_key(b"foo"), (KeyKind::Unknown, false));
    }
}
