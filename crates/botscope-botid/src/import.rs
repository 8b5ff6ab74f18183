//! Reading the address lists operators publish: Google-style JSON
//! (`{"prefixes":[{"ipv4Prefix":…},{"ipv6Prefix":…}]}`), JSON lists of
//! strings or of objects, and plain lists of CIDRs, ranges and addresses.
//! Real lists carry bare addresses, nulls, comments and stray invisible
//! characters; each is tolerated or reported, never fatal.

use crate::ipset::IpRange;

/// Largest list read.
pub const MAX_LIST_BYTES: usize = 64 * 1024 * 1024;

/// What one published list held.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Imported {
    /// The addresses, as ranges, in the order found.
    pub ranges: Vec<IpRange>,
    /// Items that are not addresses: (line, text).
    pub skipped: Vec<(usize, String)>,
}

/// Characters that appear in published lists and mean nothing: zero-width
/// spaces and joiners, byte order marks, no-break spaces.
fn invisible(c: char) -> bool {
    matches!(
        c,
        '\u{200b}' | '\u{200c}' | '\u{200d}' | '\u{2060}' | '\u{feff}' | '\u{a0}'
    )
}

fn clean(s: &str) -> String {
    s.chars()
        .filter(|c| !invisible(*c))
        .collect::<String>()
        .trim()
        .trim_matches(|c| c == '"' || c == '\'')
        .trim()
        .to_owned()
}

fn take(item: &str, line: usize, out: &mut Imported) {
    let t = clean(item);
    if t.is_empty() || t.eq_ignore_ascii_case("null") {
        return;
    }
    match IpRange::parse_any(&t) {
        Ok(r) => out.ranges.push(r),
        Err(_) => out.skipped.push((line, t.chars().take(80).collect())),
    }
}

fn from_json(v: &serde_json::Value, out: &mut Imported) {
    match v {
        serde_json::Value::Object(m) => {
            for key in [
                "ipv4Prefix",
                "ipv6Prefix",
                "prefix",
                "cidr",
                "ip",
                "ip_prefix",
                "ipv6_prefix",
                "address",
            ] {
                if let Some(serde_json::Value::String(s)) = m.get(key) {
                    take(s, 0, out);
                }
            }
            for (k, child) in m {
                if matches!(
                    child,
                    serde_json::Value::Array(_) | serde_json::Value::Object(_)
                ) && k != "creationTime"
                {
                    from_json(child, out);
                }
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|i| from_json(i, out)),
        serde_json::Value::String(s) => take(s, 0, out),
        _ => {}
    }
}

/// Reads one published list.
///
/// ```
/// use botscope_botid::import_list;
/// let google = r#"{"creationTime":"2026-01-01","prefixes":[{"ipv4Prefix":"66.249.64.0/27"},{"ipv6Prefix":"2001:4860:4801:10::/64"},null]}"#;
/// assert_eq!(import_list(google).ranges.len(), 2);
/// let plain = "# Bing\n157.55.39.0/24\n\u{200b}207.46.13.0/24\n40.77.167.1\nnot-an-ip\n";
/// let got = import_list(plain);
/// assert_eq!(got.ranges.len(), 3);
/// assert_eq!(got.skipped, [(5, "not-an-ip".to_owned())]);
/// ```
pub fn import_list(text: &str) -> Imported {
    let mut out = Imported::default();
    let trimmed = text.trim_start_matches(invisible).trim_start();
    if (trimmed.starts_with('{') || trimmed.starts_with('['))
        && let Ok(v) = serde_json::from_str::<serde_json::Value>(trimmed)
    {
        from_json(&v, &mut out);
        return out;
    }
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or_default();
        let line = line.split("//").next().unwrap_or_default();
        if line.contains(" - ") {
            take(line, i + 1, &mut out);
            continue;
        }
        for item in line
            .split([',', ';', ' ', '\t'])
            .filter(|s| !s.trim().is_empty())
        {
            take(item, i + 1, &mut out);
        }
    }
    out
}
