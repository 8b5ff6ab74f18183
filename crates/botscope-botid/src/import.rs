//! Reading the address lists operators publish: Google-style JSON
//! (`{"prefixes":[{"ipv4Prefix":…},{"ipv6Prefix":…}]}`), JSON lists of
//! strings or of objects, and plain lists of CIDRs, ranges and addresses.
//! Real lists carry bare addresses, nulls, comments and stray invisible
//! characters; each is tolerated or reported, never fatal.

use std::net::IpAddr;

use crate::ipset::IpRange;
use crate::registry::{BotEntry, Combine, Registry};

/// Largest list read.
pub const MAX_LIST_BYTES: usize = 64 * 1024 * 1024;

/// What one published list held.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Imported {
    /// The addresses, as ranges, in the order found.
    pub ranges: Vec<IpRange>,
    /// Items that are not addresses: (line, text).
    pub skipped: Vec<(usize, String)>,
    /// Lines (or JSON values) that are addresses and nothing else: a list
    /// with none is not a list, whatever address-like token its junk holds.
    pub address_lines: usize,
}

/// The widest block a crawler list may hold: an IPv4 /8, an IPv6 /19. A
/// wider one (a default route, `0.0.0.0/1`) is junk, not a crawler's.
const WIDEST_V4: u128 = 1 << 24;
const WIDEST_V6: u128 = 1 << (128 - 19);

/// True when `r` can be a crawler's addresses: not the unspecified
/// address, not wider than [`WIDEST_V4`] or [`WIDEST_V6`].
fn plausible(r: &IpRange) -> bool {
    let (lo, hi, widest) = match *r {
        IpRange::V4(a, b) => (u128::from(a), u128::from(b), WIDEST_V4),
        IpRange::V6(a, b) => (a, b, WIDEST_V6),
    };
    !(lo == 0 && hi == 0) && hi - lo < widest
}

/// What replacing `old` with `new` changes: the items added and removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Change {
    /// In `new`, not in `old`.
    pub added: Vec<IpRange>,
    /// In `old`, not in `new`.
    pub removed: Vec<IpRange>,
}

impl Change {
    /// Compares two lists item by item.
    pub fn between(old: &[IpRange], new: &[IpRange]) -> Change {
        let o: std::collections::BTreeSet<IpRange> = old.iter().copied().collect();
        let n: std::collections::BTreeSet<IpRange> = new.iter().copied().collect();
        Change {
            added: n.difference(&o).copied().collect(),
            removed: o.difference(&n).copied().collect(),
        }
    }

    /// True when more than half of `old`'s items would go.
    pub fn shrinks_by_half(&self, old_len: usize) -> bool {
        old_len > 0 && self.removed.len() * 2 > old_len
    }
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

/// Reads one item: an address is kept, anything else but a null is
/// reported; true when it was an address.
fn take(item: &str, line: usize, out: &mut Imported) -> bool {
    let t = clean(item);
    if t.is_empty() || t.eq_ignore_ascii_case("null") {
        return false;
    }
    match IpRange::parse_any(&t) {
        Ok(r) if plausible(&r) => {
            out.ranges.push(r);
            true
        }
        _ => {
            out.skipped.push((line, t.chars().take(80).collect()));
            false
        }
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
                if let Some(serde_json::Value::String(s)) = m.get(key)
                    && take(s, 0, out)
                {
                    out.address_lines += 1;
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
        serde_json::Value::String(s) if take(s, 0, out) => out.address_lines += 1,
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
            if take(line, i + 1, &mut out) {
                out.address_lines += 1;
            }
            continue;
        }
        let (mut items, mut good) = (0, 0);
        for item in line
            .split([',', ';', ' ', '\t'])
            .filter(|s| !clean(s).is_empty())
        {
            items += 1;
            if take(item, i + 1, &mut out) {
                good += 1;
            }
        }
        if items > 0 && good == items {
            out.address_lines += 1;
        }
    }
    out
}

/// The bots a published list belongs to, from its file name
/// (`googlebot.json`, `gptbot.json`, `bingbot.ips`): the bots that name a
/// file of that name among their `ip_sources`, else the bot (or
/// User-Agent token) named like the file's stem, else the bots of the
/// operator named so.
pub fn publishers_of<'r>(registry: &'r Registry, file_name: &str) -> Vec<&'r BotEntry> {
    let file = file_name.to_ascii_lowercase();
    let stem = file.split('.').next().unwrap_or_default();
    let by_source: Vec<&BotEntry> = registry
        .bots()
        .iter()
        .filter(|b| {
            b.ip_sources.iter().any(|u| {
                u.rsplit('/')
                    .next()
                    .is_some_and(|last| last.to_ascii_lowercase() == file)
            })
        })
        .collect();
    if !by_source.is_empty() {
        return by_source;
    }
    let by_name: Vec<&BotEntry> = registry
        .bots()
        .iter()
        .filter(|b| {
            b.name.to_ascii_lowercase() == stem
                || b.ua_tokens.iter().any(|t| t.to_ascii_lowercase() == stem)
        })
        .collect();
    if !by_name.is_empty() {
        return by_name;
    }
    registry
        .bots()
        .iter()
        .filter(|b| {
            b.operator
                .as_deref()
                .is_some_and(|o| o.to_ascii_lowercase() == stem)
        })
        .collect()
}

impl BotEntry {
    /// Replaces the published addresses with `ranges`: single addresses
    /// go to `ip_list`, exact CIDR blocks to `cidr_list`, the rest to
    /// `ip_ranges`, each sorted without duplicates.
    pub fn set_ranges(&mut self, ranges: Vec<IpRange>) {
        self.ip_list.clear();
        self.ip_ranges.clear();
        self.cidr_list.clear();
        for r in ranges {
            match r {
                IpRange::V4(x, y) if x == y => self.ip_list.push(IpAddr::V4(x.into())),
                IpRange::V6(x, y) if x == y => self.ip_list.push(IpAddr::V6(x.into())),
                r if r.to_cidrs().len() == 1 => self.cidr_list.push(r),
                r => self.ip_ranges.push(r),
            }
        }
        self.ip_list.sort_unstable();
        self.ip_list.dedup();
        self.cidr_list.sort_unstable();
        self.cidr_list.dedup();
        self.ip_ranges.sort_unstable();
        self.ip_ranges.dedup();
    }

    /// The entry for people: one `key: value` line each, at most `limit`
    /// published addresses listed.
    pub fn describe(&self, limit: usize) -> String {
        use std::fmt::Write;
        let opt = |o: &Option<String>| o.clone().unwrap_or_else(|| "-".into());
        let mut s = format!("name: {}\n", self.name);
        let _ = writeln!(s, "operator: {}", opt(&self.operator));
        let _ = writeln!(s, "category: {}", self.category.map_or("-", |c| c.as_str()));
        let _ = writeln!(s, "url: {}", opt(&self.url));
        let respects = self
            .respects_robots_txt
            .map_or("unknown".into(), |x| x.to_string());
        let _ = writeln!(s, "respects robots.txt: {respects}");
        let _ = writeln!(s, "user-agent tokens: {}", self.tokens().join(", "));
        let _ = match &self.fcrdns_hosts {
            None => writeln!(s, "fcrdns: not used"),
            Some(h) if h.is_empty() => writeln!(s, "fcrdns: required, any domain"),
            Some(h) => writeln!(s, "fcrdns: required, domains {}", h.join(", ")),
        };
        if self.fcrdns_hosts.is_some() && self.has_ip_verifier() {
            let _ = match self.verify {
                Combine::AnyOf => writeln!(
                    s,
                    "verify: any-of (published addresses, or FCrDNS for an address outside them)"
                ),
                Combine::AllOf => writeln!(s, "verify: all-of (published addresses and FCrDNS)"),
            };
        }
        let ranges: Vec<String> = self.ranges().map(|r| r.written()).collect();
        let _ = writeln!(s, "published addresses: {}", ranges.len());
        for r in ranges.iter().take(limit) {
            let _ = writeln!(s, "  {r}");
        }
        if ranges.len() > limit {
            let _ = writeln!(s, "  … {} more (--limit)", ranges.len() - limit);
        }
        for src in &self.ip_sources {
            let _ = writeln!(s, "published at: {src}");
        }
        let _ = writeln!(s, "defined in: {}:{}", self.source, self.line);
        s
    }

    /// One line of `bots list`: name, category, operator, verifiers, in
    /// columns.
    pub fn list_line(&self) -> String {
        let operator: String = self
            .operator
            .as_deref()
            .unwrap_or("-")
            .chars()
            .take(22)
            .collect();
        format!(
            "{:<32} {:<14} {:<22} {}",
            self.name,
            self.category.map_or("-", |c| c.as_str()),
            operator,
            self.verifiers_summary()
        )
    }

    /// The entry as JSON, with its verifiers in a few words.
    pub fn to_json(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(self).unwrap_or_default();
        if let Some(o) = v.as_object_mut() {
            o.insert("verifiers".into(), self.verifiers_summary().into());
        }
        v
    }

    /// The verifiers in a few words: `fcrdns(googlebot.com,google.com)
    /// ips(164)`, `fcrdns(any)`, or `-`.
    pub fn verifiers_summary(&self) -> String {
        let mut v = Vec::new();
        match &self.fcrdns_hosts {
            Some(h) if h.is_empty() => v.push("fcrdns(any)".to_owned()),
            Some(h) => v.push(format!("fcrdns({})", h.join(","))),
            None => {}
        }
        let n = self.ip_list.len() + self.ip_ranges.len() + self.cidr_list.len();
        if n > 0 {
            v.push(format!("ips({n})"));
        }
        match (v.len(), self.verify) {
            (0, _) => "-".to_owned(),
            (2, Combine::AnyOf) => v.join(" or "),
            _ => v.join(" "),
        }
    }
}
