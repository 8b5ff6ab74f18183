//! Log timestamps: the common log format's `10/Oct/2000:13:55:36 -0700`
//! and ISO 8601.

/// Days from 1970-01-01 to a civil date.
pub(crate) fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Seconds since the epoch → `2015-05-17T10:05:03Z` (UTC).
pub fn format_rfc3339(t: i64) -> String {
    let days = t.div_euclid(86_400);
    let secs = t.rem_euclid(86_400);
    // Civil from days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

/// One to 18 decimal digits (no sign) → the number.
fn digits(b: &[u8]) -> Option<i64> {
    if b.len() > 18 || b.first() == Some(&b'+') {
        return None;
    }
    // 18 digits fit in an `i64`.
    crate::parse::decimal(b).and_then(|n| i64::try_from(n).ok())
}

fn offset(b: &[u8]) -> Option<i64> {
    if b.is_empty() || b == b"Z" || b == b"z" {
        return Some(0);
    }
    let (sign, rest) = match b.first()? {
        b'+' => (1, &b[1..]),
        b'-' => (-1, &b[1..]),
        _ => return None,
    };
    let (h, m) = match rest {
        [h0, h1, b':', m0, m1] | [h0, h1, m0, m1] => (digits(&[*h0, *h1])?, digits(&[*m0, *m1])?),
        _ => return None,
    };
    (h <= 14 && m < 60).then_some(sign * (h * 3600 + m * 60))
}

/// Days in month `mo` (1–12) of year `y`.
fn days_in(y: i64, mo: i64) -> i64 {
    match mo {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

fn to_unix(y: i64, mo: i64, d: i64, h: i64, mi: i64, s: i64, off: i64) -> Option<i64> {
    let ok = (1970..=9999).contains(&y)
        && (1..=12).contains(&mo)
        && d >= 1
        // Every month has 28 days: most dates need no calendar.
        && (d <= 28 || d <= days_in(y, mo))
        && h < 24
        && mi < 60
        && s <= 60;
    ok.then(|| days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + s - off)
}

/// Two ASCII digits as a number.
fn two(a: u8, b: u8) -> Option<i64> {
    let (a, b) = (a.wrapping_sub(b'0'), b.wrapping_sub(b'0'));
    (a <= 9 && b <= 9).then(|| i64::from(a) * 10 + i64::from(b))
}

/// A month's three letters (any case) → 1–12.
fn month3(b: [u8; 3]) -> Option<i64> {
    Some(match [b[0] | 0x20, b[1] | 0x20, b[2] | 0x20] {
        [b'j', b'a', b'n'] => 1,
        [b'f', b'e', b'b'] => 2,
        [b'm', b'a', b'r'] => 3,
        [b'a', b'p', b'r'] => 4,
        [b'm', b'a', b'y'] => 5,
        [b'j', b'u', b'n'] => 6,
        [b'j', b'u', b'l'] => 7,
        [b'a', b'u', b'g'] => 8,
        [b's', b'e', b'p'] => 9,
        [b'o', b'c', b't'] => 10,
        [b'n', b'o', b'v'] => 11,
        [b'd', b'e', b'c'] => 12,
        _ => return None,
    })
}

/// `17/May/2015:10:05:03 +0000` → seconds since the epoch (years
/// 1970–9999). Fixed places, read once each (the most common field of
/// the most common formats).
pub fn parse_clf_time(b: &[u8]) -> Option<i64> {
    let b = b.strip_prefix(b"[").unwrap_or(b);
    let b = b.strip_suffix(b"]").unwrap_or(b);
    // A log's lines share their day and zone: the last day read on this
    // thread, whose date and zone were read in full, answers for the
    // time of day alone.
    let day = day_key(b);
    if let (Some(day), Some(&[b':', h0, h1, b':', i0, i1, b':', s0, s1])) = (day, b.get(11..20))
        && let Some((key, base)) = LAST_DAY.get()
        && key == day
    {
        let (h, mi, s) = (two(h0, h1)?, two(i0, i1)?, two(s0, s1)?);
        return (h < 24 && mi < 60 && s <= 60).then(|| base + h * 3600 + mi * 60 + s);
    }
    let t = parse_clf_time_whole(b)?;
    if let Some(day) = day {
        // The day's first second, less the zone's offset: `t` less the
        // time of day, which the whole reading found valid.
        let of_day = |i: usize| i64::from(b[i] - b'0') * 10 + i64::from(b[i + 1] - b'0');
        LAST_DAY.set(Some((
            day,
            t - (of_day(12) * 3600 + of_day(15) * 60 + of_day(18)),
        )));
    }
    Some(t)
}

std::thread_local! {
    /// [`parse_clf_time`]'s last day: its key ([`day_key`]) and its
    /// first second less the zone's offset.
    static LAST_DAY: std::cell::Cell<Option<([u8; 17], i64)>> = const { std::cell::Cell::new(None) };
}

/// The day and zone of a time in the common log format: `17/May/2015`
/// and ` +0000` (a zone of exactly that shape; `None` for any other).
fn day_key(b: &[u8]) -> Option<[u8; 17]> {
    if b.len() != 26 || b[20] != b' ' || !matches!(b[21], b'+' | b'-') {
        return None;
    }
    let mut k = [0u8; 17];
    k[..11].copy_from_slice(&b[..11]);
    k[11..].copy_from_slice(&b[20..]);
    Some(k)
}

/// [`parse_clf_time`] without the day it remembers: every field read,
/// the same answer (checked against it by the tests and the fuzz target
/// `log_line`). Takes the time without brackets.
pub fn parse_clf_time_whole(b: &[u8]) -> Option<i64> {
    let head: &[u8; 20] = b.get(..20)?.try_into().ok()?;
    let [
        d0,
        d1,
        b'/',
        m0,
        m1,
        m2,
        b'/',
        y0,
        y1,
        y2,
        y3,
        b':',
        h0,
        h1,
        b':',
        i0,
        i1,
        b':',
        s0,
        s1,
    ] = *head
    else {
        return None;
    };
    let d = two(d0, d1)?;
    let mo = month3([m0, m1, m2])?;
    let y = two(y0, y1)? * 100 + two(y2, y3)?;
    let (h, mi, s) = (two(h0, h1)?, two(i0, i1)?, two(s0, s1)?);
    let off = match &b[20..] {
        [] => 0,
        b" +0000" => 0,
        [b' ', rest @ ..] => offset(rest)?,
        _ => return None,
    };
    to_unix(y, mo, d, h, mi, s, off)
}

/// `2015-05-17T10:05:03+00:00` (fractions and `Z` allowed) → seconds.
pub fn parse_iso_time(b: &[u8]) -> Option<i64> {
    if b.len() < 19
        || b[4] != b'-'
        || b[7] != b'-'
        || !matches!(b[10], b'T' | b't' | b' ')
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let (y, mo, d) = (digits(&b[..4])?, digits(&b[5..7])?, digits(&b[8..10])?);
    let (h, mi, s) = (
        digits(&b[11..13])?,
        digits(&b[14..16])?,
        digits(&b[17..19])?,
    );
    let mut rest = &b[19..];
    if rest.first() == Some(&b'.') {
        let n = rest[1..].iter().take_while(|c| c.is_ascii_digit()).count();
        rest = &rest[1 + n..];
    }
    to_unix(y, mo, d, h, mi, s, offset(rest)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn month(b: &[u8]) -> Option<i64> {
        const M: [&[u8; 3]; 12] = [
            b"jan", b"feb", b"mar", b"apr", b"may", b"jun", b"jul", b"aug", b"sep", b"oct", b"nov",
            b"dec",
        ];
        let lower: [u8; 3] = match b {
            [a, b, c] => [a | 0x20, b | 0x20, c | 0x20],
            _ => return None,
        };
        M.iter().position(|m| **m == lower).map(|i| i as i64 + 1)
    }

    /// The reading by general parts that [`parse_clf_time`] replaced.
    fn reference_clf(b: &[u8]) -> Option<i64> {
        let b = b.strip_prefix(b"[").unwrap_or(b);
        let b = b.strip_suffix(b"]").unwrap_or(b);
        if b.len() < 20
            || b[2] != b'/'
            || b[6] != b'/'
            || b[11] != b':'
            || b[14] != b':'
            || b[17] != b':'
        {
            return None;
        }
        let (d, mo, y) = (digits(&b[..2])?, month(&b[3..6])?, digits(&b[7..11])?);
        let (h, mi, s) = (
            digits(&b[12..14])?,
            digits(&b[15..17])?,
            digits(&b[18..20])?,
        );
        let off = match b.get(20) {
            None => 0,
            Some(b' ') => offset(&b[21..])?,
            Some(_) => return None,
        };
        to_unix(y, mo, d, h, mi, s, off)
    }

    /// The day a thread remembers answers as the whole reading does:
    /// times of the remembered day valid and not, the same day in another
    /// zone or with another separator, a day that does not exist, and
    /// days in turn, in three orders.
    #[test]
    fn a_remembered_day_reads_as_the_whole() {
        let times: [&[u8]; 16] = [
            b"17/May/2015:10:05:03 +0000",
            b"17/May/2015:23:59:60 +0000",
            b"17/May/2015:24:00:00 +0000",
            b"17/May/2015:23:60:00 +0000",
            b"17/May/2015:23:59:61 +0000",
            b"17/May/2015:2x:00:00 +0000",
            b"17/May/2015:00:00:00 -0700",
            b"17/May/2015:00:00:00 +0000",
            b"17/May/2015 00:00:00 +0000",
            b"17/May/2015:00-00:00 +0000",
            b"29/Feb/2015:00:00:00 +0000",
            b"29/Feb/2015:00:00:01 +0000",
            b"29/Feb/2016:12:00:00 +0000",
            b"[17/May/2015:10:05:04 +0000]",
            b"17/May/2015:10:05:04 +00:00",
            b"17/May/2015:10:05:04 +1500",
        ];
        for round in 0..3 {
            for k in 0..times.len() {
                let t = times[(k * (round + 1)) % times.len()];
                assert_eq!(
                    parse_clf_time(t),
                    reference_clf(t),
                    "{}",
                    String::from_utf8_lossy(t)
                );
            }
        }
        // A valid time after the day was remembered, read from it.
        assert_eq!(
            parse_clf_time(b"17/May/2015:10:05:03 +0000"),
            Some(1431857103)
        );
        assert_eq!(
            parse_clf_time(b"17/May/2015:10:05:04 +0000"),
            Some(1431857104)
        );
    }

    /// Every byte of valid times replaced by each byte that matters, cut
    /// at every length, bracketed or not: the same reading as the general
    /// parts give.
    #[test]
    fn clf_time_reads_as_the_reference() {
        let seeds: [&[u8]; 6] = [
            b"17/May/2015:10:05:03 +0000",
            b"29/Feb/2016:23:59:60 -0700",
            b"31/DEC/9999:23:59:59 +14:00",
            b"01/jan/1970:00:00:00 Z",
            b"10/Oct/2000:13:55:36",
            b"30/Feb/2016:00:00:00 +0000",
        ];
        let bytes: &[u8] = b"0123456789/: +-ZzjanJANfebFEBmaysepdecx[]\x00\xff";
        let mut checked = 0;
        for seed in seeds {
            for form in [seed.to_vec(), [b"[", seed, b"]"].concat()] {
                for cut in 0..=form.len() {
                    let t = &form[..cut];
                    assert_eq!(
                        parse_clf_time(t),
                        reference_clf(t),
                        "{}",
                        String::from_utf8_lossy(t)
                    );
                    checked += 1;
                }
                for i in 0..form.len() {
                    for &c in bytes {
                        let mut t = form.clone();
                        t[i] = c;
                        assert_eq!(
                            parse_clf_time(&t),
                            reference_clf(&t),
                            "{}",
                            String::from_utf8_lossy(&t)
                        );
                        let mut t = form.clone();
                        t.insert(i, c);
                        assert_eq!(
                            parse_clf_time(&t),
                            reference_clf(&t),
                            "{}",
                            String::from_utf8_lossy(&t)
                        );
                        checked += 2;
                    }
                }
            }
        }
        assert!(checked > 5_000, "{checked}");
        // Every month, in three cases, and one that is none.
        for (i, m) in [
            "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
        ]
        .iter()
        .enumerate()
        {
            for m in [m.to_string(), m.to_uppercase(), m.to_lowercase()] {
                let t = format!("01/{m}/2020:00:00:00 +0000");
                assert_eq!(parse_clf_time(t.as_bytes()), reference_clf(t.as_bytes()));
                assert_eq!(month(m.as_bytes()), Some(i as i64 + 1));
            }
        }
        assert_eq!(
            parse_clf_time(b"01/Jun/2020:00:00:00 +0000").map(|t| t % 86_400),
            Some(0)
        );
        assert_eq!(parse_clf_time(b"01/Jum/2020:00:00:00 +0000"), None);
    }

    #[test]
    fn rfc3339_round_trip() {
        for t in [0, 1_431_857_103, 951_782_400, 253_402_300_799] {
            assert_eq!(parse_iso_time(format_rfc3339(t).as_bytes()), Some(t), "{t}");
        }
        assert_eq!(format_rfc3339(1_431_857_103), "2015-05-17T10:05:03Z");
    }

    #[test]
    fn clf_and_iso() {
        assert_eq!(
            parse_clf_time(b"10/Oct/2000:13:55:36 -0700"),
            Some(971_211_336)
        );
        assert_eq!(
            parse_clf_time(b"[29/Feb/2016:00:00:00 +0000]"),
            Some(1_456_704_000)
        );
        assert_eq!(parse_clf_time(b"30/Feb/2016:00:00:00 +0000"), None);
        assert_eq!(
            parse_clf_time(b"17/May/1969:10:05:03 +0000"),
            None,
            "before the epoch"
        );
        assert_eq!(parse_clf_time(b"17/May/2015:10:05:03 +9999"), None);
        assert_eq!(parse_iso_time(b"2000-10-10T20:55:36Z"), Some(971_211_336));
        assert_eq!(
            parse_iso_time(b"2000-10-10T13:55:36.123-07:00"),
            Some(971_211_336)
        );
        assert_eq!(parse_iso_time(b"2000-13-10T13:55:36Z"), None);
    }
}
