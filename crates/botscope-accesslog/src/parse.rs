//! One log line → one record, or the reason it is not one.

use std::borrow::Cow;
use std::net::IpAddr;

use crate::format::{Clf, Field, LogFormat, Step};
use crate::time::{parse_clf_time, parse_iso_time};

use crate::record::{MAX_LINE_BYTES, Malformed, Record};

fn text(b: &[u8]) -> Cow<'_, str> {
    // Valid UTF-8 (nearly every field) is checked by the fast validator;
    // only invalid bytes take the replacing path.
    match std::str::from_utf8(b) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(b),
    }
}

/// A line checked once as a whole: valid UTF-8 (so every field is a
/// slice of it, with no check of its own) and whether it has a backslash
/// at all (else no field needs unescaping).
struct Checked<'a> {
    bytes: &'a [u8],
    text: Option<&'a str>,
    escapes: bool,
}

impl<'a> Checked<'a> {
    /// `bytes`, whose backslashes [`scan`] found (or not).
    fn new(bytes: &'a [u8], escapes: bool) -> Self {
        Checked {
            bytes,
            // SIMD validation: on the benched logs' lines, two thirds of
            // the standard library's time.
            text: simdutf8::basic::from_utf8(bytes).ok(),
            escapes,
        }
    }

    /// `raw` (a slice of the line) as text.
    fn text(&self, raw: &'a [u8]) -> Cow<'a, str> {
        if let Some(s) = self.text {
            let start = (raw.as_ptr() as usize).wrapping_sub(self.bytes.as_ptr() as usize);
            if let Some(t) = start
                .checked_add(raw.len())
                .and_then(|end| s.get(start..end))
            {
                return Cow::Borrowed(t);
            }
        }
        text(raw)
    }

    /// `raw` unescaped ([`unescape`]).
    fn unescaped(&self, raw: &'a [u8]) -> Cow<'a, str> {
        if self.escapes {
            unescape(raw)
        } else {
            self.text(raw)
        }
    }
}

/// What one pass over a line finds: (a NUL or a control byte other than
/// tab, which no log line has; a backslash, so that some field may need
/// unescaping). Eight bytes at a time, without a branch per word.
fn scan(b: &[u8]) -> (bool, bool) {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    const BACKSLASH: u64 = LO * b'\\' as u64;
    let (mut low, mut backslash) = (0u64, 0u64);
    let mut words = b.chunks_exact(8);
    for c in &mut words {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        let x = u64::from_le_bytes(w);
        // Some byte < 0x20; some byte equal to `\` (both exact as to
        // whether there is one).
        low |= x.wrapping_sub(LO * 0x20) & !x & HI;
        let y = x ^ BACKSLASH;
        backslash |= y.wrapping_sub(LO) & !y & HI;
    }
    let rest = words.remainder();
    let control = |&c: &u8| c < 0x20 && c != b'\t';
    // A tab is below 0x20 too: a word that has one is looked at again.
    let control = (low != 0 && b.iter().any(control)) || rest.iter().any(control);
    (control, backslash != 0 || rest.contains(&b'\\'))
}

/// Undoes the escaping web servers apply to quoted fields: `\"`, `\\`,
/// `\xHH` (Apache and nginx).
fn unescape(b: &[u8]) -> Cow<'_, str> {
    if memchr::memchr(b'\\', b).is_none() {
        return text(b);
    }
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 1 < b.len() {
            match b[i + 1] {
                b'x' if i + 3 < b.len()
                    && b[i + 2].is_ascii_hexdigit()
                    && b[i + 3].is_ascii_hexdigit() =>
                {
                    let h = |c: u8| (c as char).to_digit(16).unwrap_or(0) as u8;
                    out.push((h(b[i + 2]) << 4) | h(b[i + 3]));
                    i += 4;
                    continue;
                }
                c @ (b'"' | b'\\') => {
                    out.push(c);
                    i += 2;
                    continue;
                }
                b'n' => {
                    out.push(b'\n');
                    i += 2;
                    continue;
                }
                b't' => {
                    out.push(b'\t');
                    i += 2;
                    continue;
                }
                _ => {}
            }
        }
        out.push(b[i]);
        i += 1;
    }
    Cow::Owned(String::from_utf8_lossy(&out).into_owned())
}

fn dash_none(v: Cow<'_, str>) -> Option<Cow<'_, str>> {
    if v.is_empty() || v == "-" {
        None
    } else {
        Some(v)
    }
}

/// Decimal digits (an optional `+` first, as the standard library's
/// reading allows) → the number; `None` past `u64`.
pub(crate) fn decimal(v: &[u8]) -> Option<u64> {
    let d = v.strip_prefix(b"+").unwrap_or(v);
    if d.is_empty() {
        return None;
    }
    // Up to 19 digits cannot pass `u64::MAX`: no check a digit (a size
    // or a status, every line).
    if d.len() <= 19 {
        let mut acc = 0u64;
        for &c in d {
            let x = c.wrapping_sub(b'0');
            if x > 9 {
                return None;
            }
            acc = acc * 10 + u64::from(x);
        }
        return Some(acc);
    }
    let mut acc = 0u64;
    for &c in d {
        let x = c.wrapping_sub(b'0');
        if x > 9 {
            return None;
        }
        acc = acc.checked_mul(10)?.checked_add(u64::from(x))?;
    }
    Some(acc)
}

fn number(v: &[u8]) -> Result<u64, Malformed> {
    if v == b"-" {
        return Ok(0);
    }
    decimal(v).ok_or(Malformed::BadNumber)
}

fn status(v: &[u8]) -> Result<u16, Malformed> {
    // Three digits, the first not 0: nearly every line.
    if let [a, b, c] = *v {
        let (a, b, c) = (
            a.wrapping_sub(b'0'),
            b.wrapping_sub(b'0'),
            c.wrapping_sub(b'0'),
        );
        if (1..=9).contains(&a) && b <= 9 && c <= 9 {
            return Ok(u16::from(a) * 100 + u16::from(b) * 10 + u16::from(c));
        }
    }
    match decimal(v) {
        Some(s @ 100..=999) => Ok(s as u16),
        _ => Err(Malformed::BadStatus),
    }
}

/// Dotted-quad IPv4 without the general parser (most log lines): four
/// numbers of one to three digits, no leading zero, each at most 255, as
/// the standard library reads them (`None` sends anything else to it).
/// An octet at a time, without a branch per byte class.
fn ipv4(v: &[u8]) -> Option<std::net::Ipv4Addr> {
    if v.len() < 7 || v.len() > 15 {
        return None;
    }
    let digit = |i: usize| v.get(i).map(|c| c.wrapping_sub(b'0')).filter(|&d| d <= 9);
    let mut o = [0u8; 4];
    let mut i = 0;
    for (k, octet) in o.iter_mut().enumerate() {
        if k > 0 {
            if v.get(i) != Some(&b'.') {
                return None;
            }
            i += 1;
        }
        let mut acc = u16::from(digit(i)?);
        i += 1;
        for _ in 0..2 {
            let Some(d) = digit(i) else { break };
            // `0` alone is an octet; `01` is not.
            if acc == 0 {
                return None;
            }
            acc = acc * 10 + u16::from(d);
            i += 1;
        }
        *octet = u8::try_from(acc).ok()?;
    }
    (i == v.len()).then_some(o.into())
}

fn address(v: &[u8]) -> Result<IpAddr, Malformed> {
    if let Some(a) = ipv4(v) {
        return Ok(IpAddr::V4(a));
    }
    let s = std::str::from_utf8(v).map_err(|_| Malformed::BadAddress)?;
    let ip: IpAddr = s
        .trim_matches(|c| c == '[' || c == ']')
        .parse()
        .map_err(|_| Malformed::BadAddress)?;
    Ok(match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    })
}

/// Splits `GET /path HTTP/1.1`.
fn request<'a>(v: Cow<'a, str>) -> (Cow<'a, str>, Cow<'a, str>, Cow<'a, str>) {
    let split = |s: &str| -> Option<(usize, usize)> {
        // Byte scans: the request line is short, a call to memchr costs
        // more than the loop.
        let b = s.as_bytes();
        let a = b.iter().position(|&c| c == b' ')?;
        let z = b.iter().rposition(|&c| c == b' ')?;
        Some((a, z))
    };
    match v {
        Cow::Borrowed(s) => match split(s) {
            Some((a, b)) if a < b => (
                Cow::Borrowed(&s[..a]),
                Cow::Borrowed(&s[a + 1..b]),
                Cow::Borrowed(&s[b + 1..]),
            ),
            Some((a, _)) => (
                Cow::Borrowed(&s[..a]),
                Cow::Borrowed(&s[a + 1..]),
                Cow::Borrowed(""),
            ),
            None => (Cow::Borrowed(s), Cow::Borrowed(""), Cow::Borrowed("")),
        },
        Cow::Owned(s) => match split(&s) {
            Some((a, b)) if a < b => (
                s[..a].to_owned().into(),
                s[a + 1..b].to_owned().into(),
                s[b + 1..].to_owned().into(),
            ),
            Some((a, _)) => (
                s[..a].to_owned().into(),
                s[a + 1..].to_owned().into(),
                Cow::Borrowed(""),
            ),
            None => (Cow::Owned(s), Cow::Borrowed(""), Cow::Borrowed("")),
        },
    }
}

/// Reads a quoted field starting after its opening quote: up to the first
/// unescaped `"`. Returns (value, index after the closing quote), or `None`
/// when the line ends first.
fn quoted(line: &[u8], start: usize) -> Option<(&[u8], usize)> {
    let mut i = start;
    while i < line.len() {
        i += memchr::memchr2(b'\\', b'"', &line[i..])?;
        match line[i] {
            b'\\' => i += 2,
            _ => return Some((&line[start..i], i + 1)),
        }
    }
    None
}

/// A line of a [`Clf`] layout into `rec` (blank), read as the steps read
/// it, for a line the whole-line checks passed that has no escape and is
/// UTF-8 (`text`). `None` where the line is anything but the plain case
/// (an identity other than `-`, a time other than `[` and 26 bytes, a
/// missing quote, a field the steps would refuse...): the steps then
/// read it, and give its error if it has one. Every field is cut where
/// the steps cut it and read by the same function.
fn parse_clf<'a>(clf: Clf, line: &'a [u8], text: &'a str, rec: &mut Record<'a>) -> Option<()> {
    // Unquoted fields are short: a byte loop beats memchr.
    let until = |p: usize, stop: u8| -> Option<usize> {
        line.get(p..)?
            .iter()
            .position(|&c| c == stop)
            .map(|e| p + e)
    };
    let mut p = 0;
    if clf.vhost {
        let e = until(p, b' ')?;
        rec.vhost = dash_none(Cow::Borrowed(text.get(p..e)?));
        p = e + 1;
    }
    let e = until(p, b' ')?;
    rec.ip = address(&line[p..e]).ok()?;
    p = e + 1;
    // ` - `: Apache's `%l` as nearly every server writes it, nginx's
    // literal.
    if line.get(p..p + 2)? != b"- " {
        return None;
    }
    p += 2;
    let e = until(p, b' ')?;
    rec.user = dash_none(Cow::Borrowed(text.get(p..e)?));
    p = e + 1;
    // `[`, the time's 26 bytes, `] "`. A time that reads has no `]` of
    // its own: the steps' search for the `]` ends where this one does.
    if line.get(p) != Some(&b'[') || line.get(p + 27..p + 30)? != b"] \"" {
        return None;
    }
    rec.time = parse_clf_time(&line[p + 1..p + 27])?;
    p += 30;
    // Quoted fields end at the next quote: the line has no escape.
    let e = p + memchr::memchr(b'"', line.get(p..)?)?;
    let v = text.get(p..e)?;
    if v != "-" {
        (rec.method, rec.path, rec.protocol) = request(Cow::Borrowed(v));
    }
    if line.get(e + 1) != Some(&b' ') {
        return None;
    }
    p = e + 2;
    let e = until(p, b' ')?;
    rec.status = status(&line[p..e]).ok()?;
    p = e + 1;
    if !clf.agent {
        // `%b` is last: the rest of the line.
        rec.bytes = number(line.get(p..)?).ok()?;
        return Some(());
    }
    let e = until(p, b' ')?;
    rec.bytes = number(&line[p..e]).ok()?;
    if line.get(e + 1) != Some(&b'"') {
        return None;
    }
    p = e + 2;
    let e = p + memchr::memchr(b'"', line.get(p..)?)?;
    rec.referer = dash_none(Cow::Borrowed(text.get(p..e)?));
    if line.get(e + 1..e + 3)? != b" \"" {
        return None;
    }
    p = e + 3;
    // The User-Agent's closing quote ends the line.
    let e = line.len().checked_sub(1)?;
    if e < p || line[e] != b'"' || memchr::memchr(b'"', &line[p..e]).is_some() {
        return None;
    }
    rec.user_agent = dash_none(Cow::Borrowed(text.get(p..e)?));
    Some(())
}

impl LogFormat {
    /// Parses one line (without its line end).
    ///
    /// ```
    /// use botscope_accesslog::LogFormat;
    /// let f = LogFormat::preset("combined").unwrap();
    /// let line = br#"66.249.66.1 - - [17/May/2015:10:05:03 +0000] "GET /robots.txt HTTP/1.1" 200 52 "-" "Mozilla/5.0 (compatible; Googlebot/2.1)""#;
    /// let r = f.parse_line(line).unwrap();
    /// assert_eq!((r.path.as_ref(), r.status, r.bytes), ("/robots.txt", 200, 52));
    /// assert_eq!(r.time, 1431857103);
    /// assert!(r.referer.is_none());
    /// ```
    pub fn parse_line<'a>(&self, line: &'a [u8]) -> Result<Record<'a>, Malformed> {
        let mut rec = Record::blank();
        self.parse_line_into(line, &mut rec)?;
        Ok(rec)
    }

    /// Parses one line into `rec`, as [`LogFormat::parse_line`] does: on
    /// success `rec` is the line's record, every field set (a field the
    /// format lacks is blank); on an error it holds no meaning. Reusing a
    /// record spares a reader of many lines a copy of each.
    ///
    /// ```
    /// use botscope_accesslog::{LogFormat, Record};
    /// let f = LogFormat::preset("combined").unwrap();
    /// let mut r = Record::blank();
    /// let line = br#"66.249.66.1 - - [17/May/2015:10:05:03 +0000] "GET /a HTTP/1.1" 200 52 "-" "Googlebot/2.1""#;
    /// f.parse_line_into(line, &mut r).unwrap();
    /// assert_eq!((r.path.as_ref(), r.user_agent.as_deref()), ("/a", Some("Googlebot/2.1")));
    /// ```
    pub fn parse_line_into<'a>(
        &self,
        line: &'a [u8],
        rec: &mut Record<'a>,
    ) -> Result<(), Malformed> {
        if line.len() > MAX_LINE_BYTES {
            return Err(Malformed::TooLong);
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            return Err(Malformed::Empty);
        }
        let (control, escapes) = scan(line);
        if control {
            return Err(Malformed::Binary);
        }
        if self.json {
            *rec = crate::json::parse_json_line(line)?;
            return Ok(());
        }
        *rec = Record::blank();
        let checked = Checked::new(line, escapes);
        if let (Some(clf), Some(text), false) = (self.clf, checked.text, escapes) {
            if parse_clf(clf, line, text, rec).is_some() {
                return Ok(());
            }
            *rec = Record::blank();
        }
        let (mut have_ip, mut have_time) = (false, false);
        let mut p = 0usize;
        for step in &self.steps {
            let (f, raw) = match step {
                Step::Lit { bytes: l, last } => {
                    // Literals are a byte or a few: compared inline.
                    let rest = &line[p..];
                    if rest.len() < l.len() || !l.iter().zip(rest).all(|(a, b)| a == b) {
                        // A truncated last field may leave the closing quote out.
                        if rec.truncated && *last {
                            break;
                        }
                        return Err(Malformed::LayoutMismatch);
                    }
                    p += l.len();
                    continue;
                }
                Step::Quoted { field, last } => match quoted(line, p) {
                    Some((v, after_quote)) => {
                        p = after_quote - 1;
                        (field, v)
                    }
                    None => {
                        // Only the last field may be cut off.
                        if !last {
                            return Err(Malformed::UnterminatedQuote);
                        }
                        rec.truncated = true;
                        let v = &line[p..];
                        p = line.len();
                        (field, v)
                    }
                },
                Step::Bracketed(field) => match memchr::memchr(b']', &line[p..]) {
                    Some(e) => {
                        let v = &line[p..p + e];
                        p += e;
                        (field, v)
                    }
                    None => return Err(Malformed::LayoutMismatch),
                },
                // `%t` prints its own brackets.
                Step::Until {
                    field: field @ Field::TimeClf,
                    ..
                } if line.get(p) == Some(&b'[') => match memchr::memchr(b']', &line[p + 1..]) {
                    Some(e) => {
                        let v = &line[p + 1..p + 1 + e];
                        p += e + 2;
                        (field, v)
                    }
                    None => return Err(Malformed::LayoutMismatch),
                },
                Step::Until { field, stop } => match stop {
                    // Unquoted fields are short (an address, a status, a
                    // size): a byte loop beats memchr.
                    Some(stop) => match line[p..].iter().position(|c| c == stop) {
                        Some(e) => {
                            let v = &line[p..p + e];
                            p += e;
                            (field, v)
                        }
                        None => return Err(Malformed::LayoutMismatch),
                    },
                    None => {
                        let v = &line[p..];
                        p = line.len();
                        (field, v)
                    }
                },
            };
            match f {
                Field::RemoteAddr => {
                    rec.ip = address(raw)?;
                    have_ip = true;
                }
                Field::Ident | Field::Ignored => {}
                Field::User => rec.user = dash_none(checked.text(raw)),
                Field::TimeClf => {
                    rec.time = parse_clf_time(raw).ok_or(Malformed::BadTime)?;
                    have_time = true;
                }
                Field::TimeIso => {
                    rec.time = parse_iso_time(raw).ok_or(Malformed::BadTime)?;
                    have_time = true;
                }
                Field::Request => {
                    let v = checked.unescaped(raw);
                    if v != "-" {
                        (rec.method, rec.path, rec.protocol) = request(v);
                    }
                }
                Field::Method => rec.method = checked.text(raw),
                Field::Path => rec.path = checked.unescaped(raw),
                Field::Protocol => rec.protocol = checked.text(raw),
                Field::Status => rec.status = status(raw)?,
                Field::Bytes => rec.bytes = number(raw)?,
                Field::Referer => rec.referer = dash_none(checked.unescaped(raw)),
                Field::UserAgent => rec.user_agent = dash_none(checked.unescaped(raw)),
                Field::VHost => rec.vhost = dash_none(checked.text(raw)),
                Field::DurationMicros => rec.duration_us = Some(number(raw)?),
                Field::Scheme => rec.signed.scheme = dash_none(checked.text(raw)),
                Field::SignatureInput => {
                    rec.signed.input = dash_none(checked.unescaped(raw));
                }
                Field::Signature => {
                    rec.signed.signature = dash_none(checked.unescaped(raw));
                }
                Field::SignatureAgent => {
                    rec.signed.agent = dash_none(checked.unescaped(raw));
                }
                Field::DurationSeconds => {
                    let s = std::str::from_utf8(raw)
                        .ok()
                        .and_then(|s| s.parse::<f64>().ok())
                        .filter(|x| x.is_finite() && *x >= 0.0);
                    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                    let us = (s.ok_or(Malformed::BadNumber)? * 1e6) as u64;
                    rec.duration_us = Some(us);
                }
            }
        }
        if p < line.len() && !rec.truncated {
            // Trailing text the format does not describe.
            if !line[p..].iter().all(u8::is_ascii_whitespace) {
                return Err(Malformed::LayoutMismatch);
            }
        }
        if !have_ip || (self.needs_time && !have_time) {
            return Err(Malformed::MissingField);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Signed;

    /// The hand-written reader of the common log format's family reads
    /// every line as the steps do, in the four layouts it takes: the
    /// example logs' lines, and each changed in the ways that send a line
    /// back to the steps (or nearly do). It fails if the reader cuts a
    /// field elsewhere than the steps, or takes a line the steps refuse.
    #[test]
    fn the_common_formats_read_as_their_steps_read() {
        let logs: [&[u8]; 3] = [
            include_bytes!("../../../examples/logs/elastic_examples_apache_logs.log"),
            include_bytes!("../../../examples/logs/nielsbasjes_logparser_hackers-access.log"),
            include_bytes!("../../../examples/logs/pypi_apachelogs-0.6.1_vhost_combined.log"),
        ];
        let formats = [
            LogFormat::preset("combined").expect("preset"),
            LogFormat::preset("common").expect("preset"),
            LogFormat::preset("vhost_combined").expect("preset"),
            LogFormat::nginx(
                r#"$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent""#,
            )
            .expect("nginx"),
        ];
        let steps: Vec<LogFormat> = formats.iter().map(|f| f.clone().by_steps()).collect();
        for f in &formats {
            assert!(f.clf.is_some(), "{} is read by hand", f.name());
        }
        // Neither a format with more fields or fewer nor JSON is.
        for spec in [
            r#"%h %l %u %t "%r" %>s %b %D"#,
            r#"%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i" %D"#,
            r#"%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i"%D"#,
            r#"%h %l %u %t "%r" %>s %b "%{Referer}i""#,
            r#"%h %l %u %t "%r" %>s"#,
            r#"%v %h %l %u %t "%r" %>s %b "%{User-Agent}i" "%{Referer}i""#,
        ] {
            assert!(
                LogFormat::apache(spec).expect("apache").clf.is_none(),
                "{spec}"
            );
        }
        assert!(LogFormat::json().clf.is_none());
        let variants = |l: &[u8], k: usize| -> Vec<Vec<u8>> {
            let mut v = vec![l.to_vec()];
            if !k.is_multiple_of(5) {
                return v;
            }
            let cut = |n: usize| l[..n.min(l.len())].to_vec();
            v.extend([
                cut(l.len().saturating_sub(1)),
                cut(l.len() / 2),
                cut(40),
                cut(29),
            ]);
            v.push([l, b" "].concat());
            v.push([l, b" x"].concat());
            v.push([b"example.org:80 ", l].concat());
            // One byte changed, at a place that moves with the line.
            for c in [b']', b'"', b' ', b'-', b'x', b'\\', b'[', 0xff] {
                for at in [k % 97, 16 + k % 13, 28, 29, l.len().saturating_sub(2)] {
                    if at < l.len() {
                        let mut m = l.to_vec();
                        m[at] = c;
                        v.push(m);
                    }
                }
            }
            // An IPv6 client, an identity, a user, a quoted quote.
            let text = String::from_utf8_lossy(l);
            for (from, to) in [
                (" - - ", " x - "),
                (" - - ", " - alice "),
                (" - - ", " -  "),
                ("HTTP/1.1\"", "HTTP/1.1\\\""),
                ("\"-\"", "\"\""),
                ("+0000]", "+00:00]"),
            ] {
                v.push(text.replacen(from, to, 1).into_bytes());
            }
            v.push(format!("2001:db8::1{}", &text[text.find(' ').unwrap_or(0)..]).into_bytes());
            v
        };
        let mut by_hand = 0;
        for (k, line) in logs
            .iter()
            .flat_map(|l| l.split(|&c| c == b'\n'))
            .enumerate()
        {
            for v in variants(line, k) {
                for (f, s) in formats.iter().zip(&steps) {
                    let got = f.parse_line(&v);
                    assert_eq!(
                        got,
                        s.parse_line(&v),
                        "{}: {}",
                        f.name(),
                        String::from_utf8_lossy(&v)
                    );
                    let mut r = Record::blank();
                    if let (Some(clf), Ok(text)) = (f.clf, std::str::from_utf8(&v))
                        && !v.contains(&b'\\')
                        && parse_clf(clf, &v, text, &mut r).is_some()
                    {
                        assert_eq!(Ok(r), got);
                        by_hand += 1;
                    }
                }
            }
        }
        // Most lines of the example logs (combined) are read by hand.
        assert!(by_hand > 20_000, "{by_hand} lines read by hand");
    }

    /// A record parsed into again holds the new line alone: nothing of
    /// the line before (a field the format lacks, escaped text, a
    /// truncated end), whatever came between, as `parse_line` reads it.
    #[test]
    fn a_reused_record_keeps_nothing_of_the_line_before() {
        let vhost = LogFormat::preset("vhost_combined").expect("preset");
        let combined = LogFormat::preset("combined").expect("preset");
        let lines: [(&LogFormat, &[u8]); 5] = [
            (
                &vhost,
                br#"example.org:443 192.0.2.1 - alice [17/May/2015:10:05:03 +0000] "GET /a\x41 HTTP/1.1" 200 5 "http://r/" "UA \"one\"""#,
            ),
            (&combined, b"not a log line"),
            (
                &combined,
                br#"192.0.2.2 - - [17/May/2015:10:05:04 +0000] "GET /b HTTP/1.1" 404 - "-" "cut"#,
            ),
            (
                &combined,
                br#"192.0.2.3 - - [17/May/2015:10:05:05 +0000] "HEAD / HTTP/1.0" 301 0 "-" "-""#,
            ),
            (&LogFormat::json(), br#"{"remote_addr":"192.0.2.4","status":200}"#),
        ];
        let mut reused = Record::blank();
        for (format, line) in lines {
            let fresh = format.parse_line(line);
            let again = format.parse_line_into(line, &mut reused);
            match fresh {
                Ok(r) => {
                    assert_eq!(again, Ok(()));
                    assert_eq!(reused, r, "{}", String::from_utf8_lossy(line));
                }
                Err(e) => assert_eq!(again, Err(e)),
            }
        }
        assert!(reused.vhost.is_none() && reused.user_agent.is_none());
    }

    /// Sizes and statuses read as the standard library reads them.
    #[test]
    fn numbers_read_as_the_standard_library_reads_them() {
        let cases = [
            "0",
            "7",
            "200",
            "+200",
            "-200",
            "+",
            "",
            "-",
            " 1",
            "1 ",
            "0x10",
            "00000000000000000000000042",
            "18446744073709551615",
            "18446744073709551616",
            "99999999999999999999",
            "1e3",
            "١٢",
            "099",
            "999",
            "1000",
            "65535",
            "65536",
            "100",
            "99",
            "1999999999999999999",
            "9999999999999999999",
            "+9999999999999999999",
            "10000000000000000000",
            "999999999999999999x",
            "12345678901234567x9",
        ];
        for c in cases {
            let want = if c == "-" {
                Some(0)
            } else {
                c.parse::<u64>().ok()
            };
            assert_eq!(number(c.as_bytes()).ok(), want, "{c:?}");
            let want = c.parse::<u16>().ok().filter(|s| (100..=999).contains(s));
            assert_eq!(status(c.as_bytes()).ok(), want, "{c:?}");
        }
        assert_eq!(number(b"\xff1"), Err(Malformed::BadNumber));
    }

    #[test]
    fn signature_headers_in_nginx_apache_and_json_logs() {
        let input = r#"sig1=("@authority" "signature-agent";key="sig1");created=1700000000;keyid="k";tag="web-bot-auth""#;
        let nginx = LogFormat::nginx(
            r#"$remote_addr [$time_local] "$request" $status $body_bytes_sent "$http_user_agent" $scheme "$http_signature_input" "$http_signature" "$http_signature_agent""#,
        )
        .expect("nginx");
        // nginx writes `"` as `\x22`.
        let line = format!(
            r#"192.0.2.1 [14/Nov/2023:22:13:20 +0000] "GET / HTTP/1.1" 200 5 "Bot/1" https "{}" "sig1=:AAAA:" "sig1=\x22https://bot.example\x22""#,
            input.replace('"', "\\x22")
        );
        let r = nginx.parse_line(line.as_bytes()).expect("line");
        assert_eq!(r.signed.input.as_deref(), Some(input));
        assert_eq!(r.signed.signature.as_deref(), Some("sig1=:AAAA:"));
        assert_eq!(
            r.signed.agent.as_deref(),
            Some(r#"sig1="https://bot.example""#)
        );
        assert_eq!(r.signed.scheme.as_deref(), Some("https"));
        assert!(r.signed.is_signed());
        // Unsigned: `-` is no header.
        let line = r#"192.0.2.1 [14/Nov/2023:22:13:20 +0000] "GET / HTTP/1.1" 200 5 "Bot/1" http "-" "-" "-""#;
        let r = nginx.parse_line(line.as_bytes()).expect("line");
        assert_eq!(
            r.signed,
            Signed {
                scheme: Some("http".into()),
                ..Signed::default()
            }
        );
        assert!(!r.signed.is_signed());
        // Apache writes `"` as `\"`.
        let apache = LogFormat::apache(
            r#"%h %l %u %t "%r" %>s %b "%{Signature-Input}i" "%{Signature}i" "%{Signature-Agent}i""#,
        )
        .expect("apache");
        let line = format!(
            r#"192.0.2.1 - - [14/Nov/2023:22:13:20 +0000] "GET / HTTP/1.1" 200 5 "{}" "sig1=:AAAA:" "-""#,
            input.replace('"', "\\\"")
        );
        let r = apache.parse_line(line.as_bytes()).expect("line");
        assert_eq!(r.signed.input.as_deref(), Some(input));
        assert_eq!(r.signed.agent, None);
        let json = serde_json::json!({
            "remote_addr": "192.0.2.1", "time_iso8601": "2023-11-14T22:13:20+00:00",
            "request": "GET / HTTP/1.1", "status": 200,
            "http_signature_input": input, "http_signature": "sig1=:AAAA:",
            "http_signature_agent": "\"https://bot.example\""
        })
        .to_string();
        let r = LogFormat::json().parse_line(json.as_bytes()).expect("json");
        assert_eq!(r.signed.input.as_deref(), Some(input));
        assert_eq!(r.signed.agent.as_deref(), Some("\"https://bot.example\""));
    }

    #[test]
    fn control_bytes_and_backslashes() {
        assert_eq!(
            scan(b"plain text\twith a tab, and \xc3\xa9 bytes over 0x80 ......"),
            (false, false)
        );
        for n in [1, 7, 8, 9, 16, 40, 43] {
            for i in 0..n {
                let mut v = vec![b'a'; n];
                for (byte, want) in [
                    (0, (true, false)),
                    (0x1f, (true, false)),
                    (b'\t', (false, false)),
                    (0x9f, (false, false)),
                    (0xdc, (false, false)),
                    (b'\\', (false, true)),
                    (b'\\' ^ 0x80, (false, false)),
                ] {
                    v[i] = byte;
                    assert_eq!(scan(&v), want, "{byte:#x} at {i} of {n}");
                }
                // A tab beside a control byte.
                v[i] = 0x01;
                if n > 1 {
                    v[(i + 1) % n] = b'\t';
                }
                assert!(scan(&v).0, "{i} of {n}");
            }
        }
    }

    #[test]
    fn ipv4_fast_path_agrees_with_std() {
        for s in [
            "1.2.3.4",
            "255.255.255.255",
            "0.0.0.0",
            "256.1.1.1",
            "01.2.3.4",
            "1.2.3",
            "1.2.3.4.5",
            "1..3.4",
            "1.2.3.",
            ".1.2.3",
            "1.2.3.4 ",
            "1234.1.1.1",
            "10.0.0.100",
            "::1",
            "1.2.3.4\t",
            "1.2.3.4 5",
            "001.2.3.4",
            "1.2.3.04",
            "1.2.3.255",
            "1.2.3.256",
            "999.999.999.999",
        ] {
            assert_eq!(ipv4(s.as_bytes()), s.parse().ok(), "{s}");
        }
        // Strings of digits, dots and a few others, from a fixed seed.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let alphabet = b"0123456789..... x";
        for _ in 0..200_000 {
            let x = next();
            let len = (x % 17) as usize;
            let s: String = (0..len)
                .map(|k| alphabet[((x >> (4 + 3 * k)) as usize + k) % alphabet.len()] as char)
                .collect();
            assert_eq!(ipv4(s.as_bytes()), s.parse().ok(), "{s:?}");
        }
        // Four parts of one to four digits, some with leading zeros, some
        // past 255: every one a near miss or an address.
        let mut valid = 0;
        for _ in 0..200_000 {
            let x = next();
            let parts: Vec<String> = (0..4)
                .map(|k| {
                    let r = x >> (16 * k);
                    match r % 8 {
                        0 => format!("0{}", r % 10),
                        1 => format!("{}", r % 1000),
                        2 => format!("{}", r % 10_000),
                        _ => format!("{}", (r >> 3) % 256),
                    }
                })
                .collect();
            let s = parts.join(".");
            valid += usize::from(s.parse::<std::net::Ipv4Addr>().is_ok());
            assert_eq!(ipv4(s.as_bytes()), s.parse().ok(), "{s:?}");
        }
        assert!(valid > 20_000, "{valid} addresses");
    }

    fn combined() -> LogFormat {
        LogFormat::preset("combined").expect("combined")
    }

    #[test]
    fn escapes_dashes_ipv6() {
        let r = combined()
            .parse_line(br#"2001:db8::1 - bob [01/Jan/2020:00:00:00 +0100] "GET /a\"b HTTP/1.0" 404 - "-" "UA \"quoted\" \\ \x41""#)
            .expect("line");
        assert_eq!(r.ip, "2001:db8::1".parse::<IpAddr>().expect("ip"));
        assert_eq!(r.user.as_deref(), Some("bob"));
        assert_eq!(r.path, "/a\"b");
        assert_eq!(r.bytes, 0);
        assert_eq!(r.user_agent.as_deref(), Some("UA \"quoted\" \\ A"));
        assert_eq!(r.time, 1_577_833_200);
    }

    #[test]
    fn fields_borrow_from_a_clean_line_and_survive_bad_bytes() {
        let f = combined();
        let r = f
            .parse_line(
                "192.0.2.1 - - [01/Jan/2020:00:00:00 +0000] \"GET /caf\u{e9} HTTP/1.1\" 200 5 \"https://r.test/\" \"Bot/1.0\"".as_bytes(),
            )
            .expect("line");
        assert!(matches!(r.path, Cow::Borrowed("/caf\u{e9}")));
        assert!(matches!(r.user_agent, Some(Cow::Borrowed("Bot/1.0"))));
        assert!(matches!(r.referer, Some(Cow::Borrowed("https://r.test/"))));
        // Bytes that are not UTF-8 in one field: that field is replaced,
        // the others are still read as written.
        let r = f
            .parse_line(b"192.0.2.1 - - [01/Jan/2020:00:00:00 +0000] \"GET /a HTTP/1.1\" 200 5 \"-\" \"Bot\xff/1.0\"")
            .expect("line");
        assert_eq!(r.path, "/a");
        assert_eq!(r.user_agent.as_deref(), Some("Bot\u{fffd}/1.0"));
        // An escape in one field: the others borrow.
        let r = f
            .parse_line(br#"192.0.2.1 - - [01/Jan/2020:00:00:00 +0000] "GET /a HTTP/1.1" 200 5 "-" "Bot \"x\"""#)
            .expect("line");
        assert!(matches!(r.path, Cow::Borrowed("/a")));
        assert_eq!(r.user_agent.as_deref(), Some("Bot \"x\""));
    }

    #[test]
    fn malformed_reasons() {
        let f = combined();
        let cases: &[(&[u8], Malformed)] = &[
            (b"", Malformed::Empty),
            (b"Bad line", Malformed::BadAddress),
            (b"host.example - - [17/May/2015:10:05:03 +0000] \"GET / HTTP/1.1\" 200 1 \"-\" \"x\"", Malformed::BadAddress),
            (b"1.2.3.4 - - [17/Mai/2015:10:05:03 +0000] \"GET / HTTP/1.1\" 200 1 \"-\" \"x\"", Malformed::BadTime),
            (b"1.2.3.4 - - [17/May/2015:25:05:03 +0000] \"GET / HTTP/1.1\" 200 1 \"-\" \"x\"", Malformed::BadTime),
            (b"1.2.3.4 - - [17/May/2015:10:05:03 +0000] \"GET / HTTP/1.1\" 2000 1 \"-\" \"x\"", Malformed::BadStatus),
            (b"1.2.3.4 - - [17/May/2015:10:05:03 +0000] \"GET / HTTP/1.1\" 200 1x \"-\" \"x\"", Malformed::BadNumber),
            (b"1.2.3.4 - - [17/May/2015:10:05:03 +0000] \"GET / HTTP/1.1 200 1 \"-\" \"x\"", Malformed::LayoutMismatch),
            (b"1.2.3.4 - - [17/May/2015:10:05:03 +0000] \"GET / HTTP/1.1\" 200 1 \"-\" \"x\" extra", Malformed::LayoutMismatch),
            (b"\x16\x03\x01\x00\xa5\x01", Malformed::Binary),
        ];
        for (line, want) in cases {
            assert_eq!(
                f.parse_line(line).err(),
                Some(*want),
                "{:?}",
                String::from_utf8_lossy(line)
            );
        }
        let long = vec![b'a'; MAX_LINE_BYTES + 1];
        assert_eq!(f.parse_line(&long).err(), Some(Malformed::TooLong));
    }

    #[test]
    fn truncated_last_field_is_recovered() {
        let r = combined()
            .parse_line(b"46.118.127.106 - - [20/May/2015:12:05:17 +0000] \"GET /x HTTP/1.1\" 200 235 \"-\" \"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html")
            .expect("recovered");
        assert!(r.truncated);
        assert!(
            r.user_agent
                .as_deref()
                .is_some_and(|u| u.contains("Googlebot/2.1"))
        );
    }

    #[test]
    fn junk_request_lines_are_records() {
        let r = combined()
            .parse_line(
                b"1.2.3.4 - - [17/May/2015:10:05:03 +0000] \"\\x16\\x03\\x01\" 400 0 \"-\" \"-\"",
            )
            .expect("record");
        assert_eq!((r.status, r.path.as_ref()), (400, ""));
    }
}
