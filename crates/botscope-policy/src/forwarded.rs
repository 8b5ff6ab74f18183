//! RFC 7239's `Forwarded` header, read and written: the `for=` of each
//! element (`--client-header Forwarded`), and the element the gate adds
//! for its own hop.
//!
//! ```
//! use std::net::IpAddr;
//! use botscope_policy::forwarded::{element, hops};
//!
//! let v = r#"for=192.0.2.60;proto=http, for="[2001:db8:cafe::17]:4711", for=unknown"#;
//! let got: Vec<Option<IpAddr>> = hops([v]).collect();
//! assert_eq!(got, [Some("192.0.2.60".parse().unwrap()), Some("2001:db8:cafe::17".parse().unwrap()), None]);
//! assert_eq!(element("2001:db8::1".parse().unwrap(), "http", Some("shop.example:8080")),
//!            r#"for="[2001:db8::1]";host="shop.example:8080";proto=http"#);
//! ```
//!
//! Cost: one pass over the header's bytes; quoted strings are read as
//! RFC 9110 reads them (a `,` or `;` inside one is text).

use std::net::IpAddr;

/// The `for=` of each element of the `Forwarded` values, in order (left
/// to right): an address (`192.0.2.1`, `"192.0.2.1:80"`, `"[2001:db8::1]"`,
/// `"[2001:db8::1]:443"`), or `None` for an element without one, or with
/// `unknown`, an obfuscated name (`_hidden`) or anything else.
pub fn hops<'a>(values: impl IntoIterator<Item = &'a str>) -> impl Iterator<Item = Option<IpAddr>> {
    values.into_iter().flat_map(elements)
}

/// The elements of one value, each its `for=` address.
fn elements(v: &str) -> Vec<Option<IpAddr>> {
    let b = v.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut current: Option<IpAddr> = None;
    let mut seen_for = false;
    loop {
        // One `name=value` pair.
        while i < b.len() && matches!(b[i], b' ' | b'\t') {
            i += 1;
        }
        let name_start = i;
        while i < b.len() && !matches!(b[i], b'=' | b';' | b',') {
            i += 1;
        }
        let name = v[name_start..i].trim();
        let mut value = String::new();
        if i < b.len() && b[i] == b'=' {
            i += 1;
            while i < b.len() && matches!(b[i], b' ' | b'\t') {
                i += 1;
            }
            if i < b.len() && b[i] == b'"' {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if b[i] == b'\\' && i + 1 < b.len() {
                        i += 1;
                    }
                    value.push(char::from(b[i]));
                    i += 1;
                }
                i += 1;
                while i < b.len() && !matches!(b[i], b';' | b',') {
                    i += 1;
                }
            } else {
                let start = i;
                while i < b.len() && !matches!(b[i], b';' | b',') {
                    i += 1;
                }
                value.push_str(v[start..i].trim());
            }
        }
        if name.eq_ignore_ascii_case("for") {
            // Twice in one element: neither is believed.
            current = if seen_for { None } else { address(&value) };
            seen_for = true;
        }
        match b.get(i) {
            Some(b';') => i += 1,
            Some(b',') => {
                out.push(current.take());
                seen_for = false;
                i += 1;
            }
            _ => {
                out.push(current.take());
                return out;
            }
        }
    }
}

/// A node's address: `192.0.2.1`, `192.0.2.1:80`, `[2001:db8::1]`,
/// `[2001:db8::1]:443`.
fn address(node: &str) -> Option<IpAddr> {
    if let Some(rest) = node.strip_prefix('[') {
        let (ip, after) = rest.split_once(']')?;
        if !(after.is_empty() || after.starts_with(':')) {
            return None;
        }
        return ip.parse::<std::net::Ipv6Addr>().ok().map(IpAddr::V6);
    }
    let host = node.split_once(':').map_or(node, |(h, _)| h);
    host.parse::<std::net::Ipv4Addr>().ok().map(IpAddr::V4)
}

/// Whether `s` may stand as a token (RFC 9110 `tchar`s), unquoted.
fn token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|c| c.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&c))
}

/// A value as a token, or quoted (`"` and `\` escaped).
fn value(s: &str) -> String {
    if token(s) {
        return s.to_owned();
    }
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// The element the gate appends for the connection it took: `for=` the
/// peer (an IPv6 address quoted in brackets), `host=` the request's
/// `Host` when it has one, `proto=`.
pub fn element(peer: IpAddr, proto: &str, host: Option<&str>) -> String {
    let node = match peer {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => format!("\"[{v6}]\""),
    };
    let mut out = format!("for={node}");
    if let Some(h) = host.filter(|h| !h.is_empty()) {
        out.push_str(";host=");
        out.push_str(&value(h));
    }
    out.push_str(";proto=");
    out.push_str(&value(proto));
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn ip(s: &str) -> Option<IpAddr> {
        s.parse().ok()
    }

    /// RFC 7239's own examples (sections 4 and 7.1), and what a client
    /// may try.
    #[test]
    fn the_rfcs_examples_and_a_strangers_tricks() {
        for (v, want) in [
            (r#"for="_gazonk""#, vec![None]),
            (
                r#"For="[2001:db8:cafe::17]:4711""#,
                vec![ip("2001:db8:cafe::17")],
            ),
            (
                "for=192.0.2.60;proto=http;by=203.0.113.43",
                vec![ip("192.0.2.60")],
            ),
            (
                "for=192.0.2.43, for=198.51.100.17",
                vec![ip("192.0.2.43"), ip("198.51.100.17")],
            ),
            (
                r#"for=192.0.2.43,for="[2001:db8:cafe::17]",for=unknown"#,
                vec![ip("192.0.2.43"), ip("2001:db8:cafe::17"), None],
            ),
            (r#"for="192.0.2.1:8080""#, vec![ip("192.0.2.1")]),
            // A comma inside a quoted string is text: one element.
            (r#"for="x, for=1.2.3.4""#, vec![None]),
            // `for` twice in one element: neither.
            ("for=192.0.2.1;for=192.0.2.2", vec![None]),
            ("proto=https", vec![None]),
            ("", vec![None]),
            ("for=[::1]junk", vec![None]),
            ("for=999.1.1.1", vec![None]),
        ] {
            let got: Vec<_> = hops([v]).collect();
            assert_eq!(got, want, "{v}");
        }
        let two: Vec<_> = hops(["for=192.0.2.1", "for=192.0.2.2"]).collect();
        assert_eq!(two, [ip("192.0.2.1"), ip("192.0.2.2")]);
    }

    #[test]
    fn the_gates_element_quotes_what_is_not_a_token() {
        assert_eq!(
            element("192.0.2.1".parse().unwrap(), "http", Some("shop.example")),
            "for=192.0.2.1;host=shop.example;proto=http"
        );
        assert_eq!(
            element("192.0.2.1".parse().unwrap(), "http", Some("a\"b\\c")),
            r#"for=192.0.2.1;host="a\"b\\c";proto=http"#
        );
        assert_eq!(
            element("::1".parse().unwrap(), "http", None),
            r#"for="[::1]";proto=http"#
        );
        // What the gate writes, it reads back.
        let e = element("2001:db8::5".parse().unwrap(), "http", Some("h:1"));
        assert_eq!(hops([e.as_str()]).collect::<Vec<_>>(), [ip("2001:db8::5")]);
    }
}
