//! The traps' catches as firewall batches (`botscope gate export nft`,
//! `… ipset`): read from a running gate or the fleet's state
//! ([`from_gate`], [`from_state`]), then, pure, a list of catches in and
//! the text of one batch out.
//!
//! nftables, in set-only mode: the owner's ruleset makes the table and
//! its four sets ([`nft_setup`] prints one) and decides what they do;
//! each flush is one `nft -f` transaction that empties each set and fills
//! it with the catches held now, each element with the time its catch has
//! left, so a catch renewed (a re-ban) gets its new time and one that
//! ended is gone, and the packet path never sees a set half-filled. The
//! sets are plain (no intervals: no element ever overlaps another):
//! addresses, /24 networks, IPv6 /64s and /48s, matched by masking the
//! source address.

use std::net::IpAddr;

/// One catch to ban.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The address (or network address) and its prefix: 32 or 24 (IPv4),
    /// 64 or 48 (IPv6).
    pub network: (IpAddr, u8),
    /// Seconds its catch has left.
    pub seconds: u64,
}

/// Catches read from the gate at most.
pub const MAX_ENTRIES: usize = 1_000_000;

/// Reads a Go duration as `cscli` and the gate write it (`23h59m10s`,
/// `5m0s`, `10s`, `1.5s`), in whole seconds (rounded up).
pub fn go_seconds(s: &str) -> Option<u64> {
    let mut total = 0f64;
    let mut rest = s;
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let n_end = rest.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
        let n: f64 = rest[..n_end].parse().ok()?;
        rest = &rest[n_end..];
        let (unit, len) = if rest.starts_with("ms") {
            (0.001, 2)
        } else if rest.starts_with('h') {
            (3600.0, 1)
        } else if rest.starts_with('m') {
            (60.0, 1)
        } else if rest.starts_with('s') {
            (1.0, 1)
        } else {
            return None;
        };
        total += n * unit;
        rest = &rest[len..];
    }
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    (0.0..1e12).contains(&total).then(|| total.ceil() as u64)
}

/// The entries of the gate's `/.botscope/blocklist.txt?format=json`:
/// each `value` (an address, or a network with its prefix) and its
/// `duration`. An item that does not read is an error that says which.
pub fn read_blocklist(json: &[u8]) -> Result<Vec<Entry>, String> {
    let v: serde_json::Value =
        serde_json::from_slice(json).map_err(|e| format!("not JSON: {e}"))?;
    let items = v.as_array().ok_or("not a JSON array")?;
    if items.len() > MAX_ENTRIES {
        return Err(format!(
            "{} items; at most {MAX_ENTRIES} are read",
            items.len()
        ));
    }
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let value = item["value"]
                .as_str()
                .ok_or(format!("item {i} has no value"))?;
            let network = parse_network(value).ok_or_else(|| {
                format!(
                    "item {i}: `{}` is not an address or network",
                    botscope_text::quoted(value)
                )
            })?;
            let seconds = item["duration"]
                .as_str()
                .and_then(go_seconds)
                .ok_or_else(|| format!("item {i}: its duration does not read"))?;
            Ok(Entry { network, seconds })
        })
        .collect()
}

/// `203.0.113.9`, `192.0.2.0/24`, `2001:db8::/64`, `2001:db8::/48`: the
/// prefixes the gate's catches have.
pub fn parse_network(s: &str) -> Option<(IpAddr, u8)> {
    let (ip, prefix) = match s.split_once('/') {
        Some((ip, p)) => (ip.parse::<IpAddr>().ok()?, p.parse::<u8>().ok()?),
        None => {
            let ip = s.parse::<IpAddr>().ok()?;
            (ip, if ip.is_ipv4() { 32 } else { 128 })
        }
    };
    let ok = match ip {
        IpAddr::V4(_) => matches!(prefix, 32 | 24),
        IpAddr::V6(_) => matches!(prefix, 64 | 48 | 128),
    };
    if !ok {
        return None;
    }
    // The network address: host bits cleared.
    let ip = match ip {
        IpAddr::V4(v4) => {
            let bits = u32::from(v4) & (u32::MAX << (32 - u32::from(prefix)));
            IpAddr::from(bits.to_be_bytes())
        }
        IpAddr::V6(v6) => {
            let keep = if prefix == 128 { 64 } else { prefix };
            let bits = u128::from(v6) & (u128::MAX << (128 - u32::from(keep)));
            IpAddr::from(bits.to_be_bytes())
        }
    };
    let prefix = if prefix == 128 { 64 } else { prefix };
    Some((ip, prefix))
}

/// The fleet's catches as Redis holds them (`address|kind|nonce|hold`,
/// with their time), as entries at `now_ms`: the latest catch of each
/// address counts; ended ones and members that do not read are left out.
pub fn from_fleet(members: &[(String, u64)], now_ms: u64) -> Vec<Entry> {
    let mut by: std::collections::HashMap<IpAddr, u64> = std::collections::HashMap::new();
    for (m, at) in members {
        let mut p = m.split('|');
        let (Some(ip), Some(_), Some(_), Some(hold)) = (p.next(), p.next(), p.next(), p.next())
        else {
            continue;
        };
        let (Ok(ip), Ok(hold)) = (ip.parse::<IpAddr>(), hold.parse::<u64>()) else {
            continue;
        };
        let until = at.saturating_add(hold);
        if until > now_ms {
            let e = by.entry(ip).or_default();
            *e = (*e).max(until);
        }
    }
    let mut out: Vec<Entry> = by
        .into_iter()
        .map(|(ip, until)| Entry {
            network: (ip, if ip.is_ipv4() { 32 } else { 64 }),
            seconds: (until - now_ms).div_ceil(1000),
        })
        .collect();
    out.sort_by_key(|e| e.network);
    out
}

/// Bytes of a gate's blocklist read at most (a million catches).
pub const MAX_LIST_BYTES: usize = 256 << 20;

/// One JSON exchange with `url` (a `GET`, or a `POST` of `json`), a
/// bearer `token` when there is one, its answer read within `cap` bytes
/// and `timeout`: the status and the body. The gate's exports (a gate's
/// blocklist, CrowdSec's Local API) speak through it.
pub(crate) async fn json_exchange(
    url: &url::Url,
    json: Option<&str>,
    token: Option<&str>,
    user_agent: &str,
    cap: usize,
    timeout: std::time::Duration,
    tls: &botscope_http::TlsConnector,
) -> Result<(u16, Vec<u8>), String> {
    let host = url
        .host_str()
        .ok_or("a URL with a host")?
        .trim_matches(['[', ']'])
        .to_owned();
    let port = url.port_or_known_default().ok_or("a URL with a port")?;
    let ip = tokio::net::lookup_host((host.as_str(), port))
        .await
        .map_err(|e| format!("{host}: {e}"))?
        .next()
        .ok_or_else(|| format!("{host} has no address"))?
        .ip();
    let extra: Vec<(String, String)> = token
        .map(|t| ("Authorization".to_owned(), format!("Bearer {t}")))
        .into_iter()
        .collect();
    let deadline = std::time::Instant::now() + timeout;
    let r = botscope_http::Request {
        url,
        host: &host,
        ip,
        port,
        user_agent,
        accept: "application/json",
        if_none_match: None,
        if_modified_since: None,
        extra: &extra,
        cap,
        connect_timeout: timeout.min(std::time::Duration::from_secs(5)),
        deadline,
    };
    let r = match json {
        Some(j) => botscope_http::post_json_by(r, j, tls, deadline).await,
        None => botscope_http::exchange(r, tls).await,
    }
    .map_err(|e| format!("{url}: {e}"))?;
    if r.truncated {
        return Err(format!("{url}: an answer over {cap} bytes"));
    }
    Ok((r.status, r.body))
}

/// The catches of the running gate at `base` (`http://HOST:PORT`): its
/// operators' blocklist (`/.botscope/blocklist.txt?format=json`), asked
/// with the operators' `token` when there is one.
pub async fn from_gate(base: &str, token: Option<&[u8]>) -> Result<Vec<Entry>, String> {
    let url = url::Url::parse(base)
        .and_then(|u| u.join("/.botscope/blocklist.txt?format=json"))
        .map_err(|e| format!("{}: {e}", botscope_text::quoted(base)))?;
    let tls = botscope_http::Trust::system()
        .connector()
        .map_err(|e| e.to_string())?;
    let token = token.map(String::from_utf8_lossy);
    let (status, body) = json_exchange(
        &url,
        None,
        token.as_deref(),
        botscope_http::DEFAULT_USER_AGENT,
        MAX_LIST_BYTES,
        std::time::Duration::from_secs(60),
        &tls,
    )
    .await?;
    if status != 200 {
        return Err(format!("{url} answered {status}"));
    }
    read_blocklist(&body).map_err(|e| format!("{url}: {e}"))
}

/// The catches a fleet's gates put in its shared state (`redis://…`),
/// at `now_ms`.
pub async fn from_state(url: &str, now_ms: u64) -> Result<Vec<Entry>, String> {
    let shared = crate::state::Shared::new(url, std::time::Duration::from_secs(5))?;
    let mut all = Vec::new();
    let mut from = 0;
    loop {
        let got = shared
            .catches_from(from)
            .await
            .ok_or("the fleet's catches could not be read")?;
        let full = got.len() >= crate::state::CATCHES_PER_READ;
        let last = got.last().map(|(_, at)| *at);
        all.extend(got);
        match last {
            Some(at) if full && at > from && all.len() < MAX_ENTRIES => from = at,
            _ => break,
        }
    }
    Ok(from_fleet(&all, now_ms))
}

/// The four sets of `set` (its name's stem): addresses, /24s, /64s, /48s.
fn set_names(set: &str) -> [String; 4] {
    [
        format!("{set}_v4"),
        format!("{set}_v4_24"),
        format!("{set}_v6_64"),
        format!("{set}_v6_48"),
    ]
}

fn slot(e: &Entry) -> usize {
    match e.network {
        (IpAddr::V4(_), 32) => 0,
        (IpAddr::V4(_), _) => 1,
        (IpAddr::V6(_), 64) => 2,
        _ => 3,
    }
}

/// A ruleset that makes `table` (family `inet`) with the sets `set`
/// names, each of at most `size` elements with timeouts, and drops what
/// comes from them (the owner may change the chain: the exporter only
/// fills the sets).
pub fn nft_setup(table: &str, set: &str, size: usize) -> String {
    let [v4, v4_24, v6_64, v6_48] = set_names(set);
    format!(
        "table inet {table} {{
\tset {v4} {{ type ipv4_addr; flags timeout; size {size}; }}
\tset {v4_24} {{ type ipv4_addr; flags timeout; size {size}; }}
\tset {v6_64} {{ type ipv6_addr; flags timeout; size {size}; }}
\tset {v6_48} {{ type ipv6_addr; flags timeout; size {size}; }}
\tchain input {{
\t\ttype filter hook input priority filter - 5; policy accept;
\t\tip saddr @{v4} drop
\t\tip saddr & 255.255.255.0 @{v4_24} drop
\t\tip6 saddr & ffff:ffff:ffff:ffff:: @{v6_64} drop
\t\tip6 saddr & ffff:ffff:ffff:: @{v6_48} drop
\t}}
}}
"
    )
}

/// The entries by set, each set's longest catches first and at most
/// `max` of them; how many each holds, and how many were left out.
fn per_set(entries: &[Entry], max: usize) -> ([Vec<&Entry>; 4], [usize; 4], usize) {
    let mut per: [Vec<&Entry>; 4] = Default::default();
    for e in entries {
        per[slot(e)].push(e);
    }
    let mut put = [0; 4];
    let mut left_out = 0;
    for (i, list) in per.iter_mut().enumerate() {
        list.sort_by(|a, b| b.seconds.cmp(&a.seconds).then(a.network.cmp(&b.network)));
        left_out += list.len().saturating_sub(max);
        list.truncate(max);
        put[i] = list.len();
    }
    (per, put, left_out)
}

/// What a batch holds, and what it left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Batch {
    /// The batch's text.
    pub text: String,
    /// Elements put in, by set.
    pub put: [usize; 4],
    /// Elements left out: their set was full (at most `max` each).
    pub left_out: usize,
}

/// One `nft -f` transaction: each of `set`'s sets in `table` emptied and
/// filled with `entries` (at most `max` a set, the longest catches
/// first), each element with its time left.
pub fn nft_batch(table: &str, set: &str, entries: &[Entry], max: usize) -> Batch {
    let (per, put, left_out) = per_set(entries, max);
    let mut text = String::new();
    for (name, list) in set_names(set).iter().zip(&per) {
        text.push_str(&format!("flush set inet {table} {name}\n"));
        for chunk in list.chunks(512) {
            let items: Vec<String> = chunk
                .iter()
                .map(|e| format!("{} timeout {}s", e.network.0, e.seconds.max(1)))
                .collect();
            text.push_str(&format!(
                "add element inet {table} {name} {{ {} }}\n",
                items.join(", ")
            ));
        }
    }
    Batch {
        text,
        put,
        left_out,
    }
}

/// The same for `ipset restore`: each set made if missing (`-exist`), a
/// new one filled beside it and swapped in whole, so that a reader never
/// sees it half-filled.
pub fn ipset_batch(set: &str, entries: &[Entry], max: usize) -> Batch {
    let names = set_names(set);
    let kinds = [
        ("hash:ip", "inet"),
        ("hash:net", "inet"),
        ("hash:net", "inet6"),
        ("hash:net", "inet6"),
    ];
    let (per, put, left_out) = per_set(entries, max);
    let mut text = String::new();
    for (i, (name, list)) in names.iter().zip(&per).enumerate() {
        let (kind, family) = kinds[i];
        let name = name.replace('_', "-");
        let fresh = format!("{name}-new");
        let opts = format!("{kind} family {family} timeout 0 maxelem {max}");
        text.push_str(&format!("create {name} {opts} -exist\n"));
        text.push_str(&format!("create {fresh} {opts} -exist\nflush {fresh}\n"));
        for e in list {
            let v = match e.network {
                (ip, 32) if ip.is_ipv4() => ip.to_string(),
                (ip, n) => format!("{ip}/{n}"),
            };
            text.push_str(&format!(
                "add {fresh} {v} timeout {} -exist\n",
                e.seconds.max(1)
            ));
        }
        text.push_str(&format!("swap {fresh} {name}\ndestroy {fresh}\n"));
    }
    Batch {
        text,
        put,
        left_out,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(s: &str, seconds: u64) -> Entry {
        Entry {
            network: parse_network(s).expect(s),
            seconds,
        }
    }

    #[test]
    fn go_durations_read_back() {
        for (s, want) in [
            ("23h59m10s", 86_350),
            ("5m0s", 300),
            ("10s", 10),
            ("1.5s", 2),
            ("2h", 7200),
        ] {
            assert_eq!(go_seconds(s), Some(want), "{s}");
        }
        for s in ["", "h", "10", "10x", "-1s", "1e400s"] {
            assert_eq!(go_seconds(s), None, "{s}");
        }
    }

    #[test]
    fn networks_are_the_gates_prefixes_only() {
        assert_eq!(
            parse_network("192.0.2.7"),
            Some(("192.0.2.7".parse().expect("ip"), 32))
        );
        assert_eq!(
            parse_network("192.0.2.7/24"),
            Some(("192.0.2.0".parse().expect("ip"), 24))
        );
        assert_eq!(
            parse_network("2001:db8:1:2:3::9"),
            Some(("2001:db8:1:2::".parse().expect("ip"), 64))
        );
        for bad in [
            "192.0.2.0/8",
            "0.0.0.0/0",
            "::/0",
            "x",
            "2001:db8::/7",
            "1.2.3.4/33",
        ] {
            assert_eq!(parse_network(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_batch_empties_and_fills_each_set_within_its_size() {
        let entries = [
            e("203.0.113.9", 100),
            e("203.0.113.10", 50),
            e("203.0.113.11", 200),
            e("192.0.2.0/24", 10),
            e("2001:db8:1:2::/64", 20),
            e("2001:db8:1::/48", 30),
        ];
        let b = nft_batch("botscope", "trapped", &entries, 2);
        assert_eq!(b.put, [2, 1, 1, 1]);
        assert_eq!(b.left_out, 1);
        assert!(b.text.starts_with("flush set inet botscope trapped_v4\nadd element inet botscope trapped_v4 { 203.0.113.11 timeout 200s, 203.0.113.9 timeout 100s }\n"), "{}", b.text);
        assert!(
            b.text
                .contains("add element inet botscope trapped_v6_48 { 2001:db8:1:: timeout 30s }")
        );
        assert_eq!(b.text.matches("flush set").count(), 4);
        let i = ipset_batch("trapped", &entries, 2);
        assert!(
            i.text
                .contains("add trapped-v4-24-new 192.0.2.0/24 timeout 10 -exist"),
            "{}",
            i.text
        );
        assert!(i.text.contains("swap trapped-v4-new trapped-v4\n"));
    }

    #[test]
    fn the_gates_json_and_the_fleets_members_read() {
        let json = br#"[{"value":"203.0.113.9","scope":"ip","type":"ban","duration":"23h59m10s","reason":"botscope trap: robots"},{"value":"192.0.2.0/24","scope":"range","type":"ban","duration":"10s","reason":"x"}]"#;
        assert_eq!(
            read_blocklist(json).expect("reads"),
            [e("203.0.113.9", 86_350), e("192.0.2.0/24", 10)]
        );
        for bad in [
            &b"{}"[..],
            b"[{\"value\":\"x\",\"duration\":\"1s\"}]",
            b"[{\"value\":\"1.2.3.4\",\"duration\":\"soon\"}]",
            b"nope",
        ] {
            assert!(read_blocklist(bad).is_err());
        }
        let members = [
            ("203.0.113.9|robots|00000001|60000".to_owned(), 1_000),
            ("203.0.113.9|script|00000002|60000".to_owned(), 5_000),
            ("198.51.100.1|robots|00000003|1000".to_owned(), 1_000),
            ("junk".to_owned(), 1_000),
        ];
        assert_eq!(from_fleet(&members, 10_000), [e("203.0.113.9", 55)]);
    }
}
