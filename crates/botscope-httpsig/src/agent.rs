//! A `Signature-Agent` member as draft-ietf-webbotauth-httpsig-protocol-01
//! reads it: an absolute `https` URL that a verifier fetches as sent and
//! reads as a JWK Set; the identifier is the URL it resolved, with any
//! query discarded, normalized as RFC 3986 sections 6.2.2 and 6.2.3 say,
//! so that two spellings of one URL are one identifier and a key is
//! looked up by (identifier, keyid), never by keyid alone.
//!
//! One reading the draft leaves to the verifier (a MAY): a bare origin
//! (`https://crawler.example`, the value most crawlers sent under the
//! earlier drafts) keeps meaning its well-known key directory, so
//! `https://crawler.example` and
//! `https://crawler.example/.well-known/http-message-signatures-directory`
//! are one identifier.
//!
//! Pure, bounded by the value's length: a URL is parsed by hand, one pass
//! per step.

use serde::Serialize;

/// The well-known path of a key directory (draft section 6, RFC 8615).
pub const WELL_KNOWN: &str = "/.well-known/http-message-signatures-directory";

/// The directory's media type, required at [`WELL_KNOWN`] only.
pub const DIRECTORY_MEDIA_TYPE: &str = "application/http-message-signatures-directory+json";

/// The media types a JWK Set at another URL may be served as.
pub const KEY_SET_MEDIA_TYPES: &[&str] = &[
    "application/jwk-set+json",
    "application/json",
    DIRECTORY_MEDIA_TYPE,
];

/// The longest agent URL read.
pub const MAX_AGENT_URL: usize = 2048;

/// How a `Signature-Agent` value was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reading {
    /// A bare origin, the earlier drafts' form: its well-known directory.
    Origin,
    /// The well-known directory URL itself.
    WellKnown,
    /// Another URL: a JWK Set, fetched as sent.
    KeySet,
}

impl Reading {
    /// `origin`, `well-known` or `key-set`.
    pub fn as_str(self) -> &'static str {
        match self {
            Reading::Origin => "origin",
            Reading::WellKnown => "well-known",
            Reading::KeySet => "key-set",
        }
    }

    /// The reading in words, for `--trace` and reports.
    pub fn describe(self) -> &'static str {
        match self {
            Reading::Origin => {
                "a bare origin (the earlier drafts' form), read as its well-known key directory"
            }
            Reading::WellKnown => "the well-known key directory URL",
            Reading::KeySet => "a JWK Set URL, fetched as sent",
        }
    }

    /// Whether the directory is at the well-known URI (its media type is
    /// then required, and a JWK's `kid` must be its thumbprint).
    pub fn well_known(self) -> bool {
        matches!(self, Reading::Origin | Reading::WellKnown)
    }
}

/// A `Signature-Agent` URL resolved.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct AgentUrl {
    /// The value as sent.
    pub sent: String,
    /// The URL fetched: the value as sent (less any fragment), or the
    /// well-known URL of a bare origin.
    pub fetch: String,
    /// The identifier: the fetched URL normalized, without its query.
    pub identifier: String,
    /// How the value was read.
    pub reading: Reading,
}

/// Resolves a `Signature-Agent` URL ([`AgentUrl`]); `Err` says why it is
/// not an absolute `https` URL with a host.
///
/// ```
/// use botscope_httpsig::agent::{Reading, resolve};
/// let a = resolve("https://Crawler.Example:443").unwrap();
/// assert_eq!(a.reading, Reading::Origin);
/// assert_eq!(a.identifier, "https://crawler.example/.well-known/http-message-signatures-directory");
/// let b = resolve("https://crawler.example/.well-known/http-message-signatures-directory?v=2").unwrap();
/// assert_eq!((b.reading, b.identifier), (Reading::WellKnown, a.identifier));
/// assert!(b.fetch.ends_with("?v=2"), "fetched as sent");
/// assert!(resolve("http://crawler.example").is_err());
/// ```
pub fn resolve(value: &str) -> Result<AgentUrl, String> {
    let sent = value.trim_matches([' ', '\t']);
    if sent.len() > MAX_AGENT_URL {
        return Err(format!(
            "the agent URL is {} bytes, more than {MAX_AGENT_URL}",
            sent.len()
        ));
    }
    let show = || printable(sent);
    if let Some(c) = sent.chars().find(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!("agent `{}` is not a URL: it holds {c:?}", show()));
    }
    let rest = match sent.get(..8) {
        Some(s) if s.eq_ignore_ascii_case("https://") => &sent[8..],
        _ => {
            let scheme = sent.split_once("://").map(|(s, _)| s);
            return Err(match scheme {
                Some(s) if s.eq_ignore_ascii_case("http") => format!(
                    "agent `{}`: key directories are fetched over https only (the draft: its scheme MUST be https)",
                    show()
                ),
                _ => format!("agent `{}` is not an absolute https URL", show()),
            });
        }
    };
    let rest = rest.split_once('#').map_or(rest, |(r, _)| r);
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let (path, query) = match tail.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (tail, None),
    };
    let authority =
        normalize_authority(authority).map_err(|e| format!("agent `{}`: {e}", show()))?;
    let path = normalize_path(path).map_err(|e| format!("agent `{}`: {e}", show()))?;
    if let Some(q) = query {
        check_chars(q, true).map_err(|e| format!("agent `{}`: {e}", show()))?;
    }
    let origin = format!("https://{authority}");
    let bare = path == "/" && query.is_none();
    let (reading, fetch, path) = if bare {
        (
            Reading::Origin,
            format!("{origin}{WELL_KNOWN}"),
            WELL_KNOWN.to_owned(),
        )
    } else {
        let reading = if path == WELL_KNOWN {
            Reading::WellKnown
        } else {
            Reading::KeySet
        };
        let fetch = sent.split_once('#').map_or(sent, |(f, _)| f).to_owned();
        (reading, fetch, path)
    };
    Ok(AgentUrl {
        sent: sent.to_owned(),
        fetch,
        identifier: format!("{origin}{path}"),
        reading,
    })
}

/// The identifier of an agent URL ([`resolve`]), or the value itself when
/// it is not one (so that a key store still keeps such an agent apart).
pub fn identifier(value: &str) -> String {
    resolve(value).map_or_else(|_| value.to_owned(), |a| a.identifier)
}

/// At most 200 characters of a stranger's value, for messages.
fn printable(s: &str) -> String {
    let mut out: String = s.chars().take(200).collect();
    if out.len() < s.len() {
        out.push('…');
    }
    out
}

/// Host lowercased (RFC 3986 6.2.2.1), the default port and an empty one
/// dropped (6.2.3); no userinfo.
fn normalize_authority(a: &str) -> Result<String, String> {
    if a.is_empty() {
        return Err("no host".into());
    }
    if a.contains('@') {
        return Err("it carries credentials".into());
    }
    let (host, port) = if let Some(v6) = a.strip_prefix('[') {
        let (h, after) = v6
            .split_once(']')
            .ok_or_else(|| "an IPv6 literal without `]`".to_owned())?;
        if h.is_empty()
            || !h
                .bytes()
                .all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.')
        {
            return Err(format!("`[{h}]` is not an IPv6 literal"));
        }
        let port = match after {
            "" => None,
            p => Some(
                p.strip_prefix(':')
                    .ok_or_else(|| format!("`{after}` after the IPv6 literal"))?,
            ),
        };
        (format!("[{}]", h.to_ascii_lowercase()), port)
    } else {
        let (h, port) = match a.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (a, None),
        };
        if h.is_empty() {
            return Err("no host".into());
        }
        check_chars(h, false)?;
        (normalize_pct(h, true)?, port)
    };
    let port = match port {
        None | Some("") => None,
        Some(p) if p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit()) => {
            match p.parse::<u32>() {
                Ok(443) => None,
                Ok(n) if n <= 65535 => Some(n),
                _ => return Err(format!("port {p} is out of range")),
            }
        }
        Some(p) => return Err(format!("`{p}` is not a port")),
    };
    Ok(match port {
        Some(p) => format!("{host}:{p}"),
        None => host,
    })
}

/// Unreserved, sub-delims, `%`, and (outside a host) `:`, `@`, `/`, `?`.
fn check_chars(s: &str, path: bool) -> Result<(), String> {
    for c in s.chars() {
        let ok = c.is_ascii_alphanumeric()
            || "-._~!$&'()*+,;=%".contains(c)
            || (path && ":@/?".contains(c));
        if !ok {
            return Err(format!("{c:?} is not allowed in a URL"));
        }
    }
    Ok(())
}

/// Percent-encodings normalized (RFC 3986 6.2.2.1 and 6.2.2.2): hex in
/// uppercase, unreserved characters decoded; `lower` lowercases the rest
/// (a host).
fn normalize_pct(s: &str, lower: bool) -> Result<String, String> {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s
                .get(i + 1..i + 3)
                .filter(|h| h.bytes().all(|c| c.is_ascii_hexdigit()))
                .ok_or_else(|| "a `%` not followed by two hex digits".to_owned())?;
            let byte = u8::from_str_radix(hex, 16).map_err(|e| e.to_string())?;
            if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
                let c = char::from(byte);
                out.push(if lower { c.to_ascii_lowercase() } else { c });
            } else {
                out.push('%');
                out.push_str(&hex.to_ascii_uppercase());
            }
            i += 3;
        } else {
            let c = char::from(b[i]);
            out.push(if lower { c.to_ascii_lowercase() } else { c });
            i += 1;
        }
    }
    Ok(out)
}

/// A path normalized: its percent-encodings (6.2.2.1, 6.2.2.2), its dot
/// segments removed (6.2.2.3, RFC 3986 5.2.4), empty read as `/` (6.2.3).
fn normalize_path(p: &str) -> Result<String, String> {
    check_chars(p, true)?;
    let p = normalize_pct(p, false)?;
    if p.is_empty() {
        return Ok("/".into());
    }
    // RFC 3986 5.2.4, on segments.
    let mut out: Vec<&str> = Vec::new();
    let segments: Vec<&str> = p.split('/').skip(1).collect();
    let last = segments.len().saturating_sub(1);
    for (i, seg) in segments.iter().enumerate() {
        let dot = match *seg {
            "." => true,
            ".." => {
                out.pop();
                true
            }
            s => {
                out.push(s);
                false
            }
        };
        // A path ending in a dot segment ends in `/`.
        if i == last && dot {
            out.push("");
        }
    }
    Ok(format!("/{}", out.join("/")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 3986 6.2.2 and 6.2.3: the spellings of one identifier.
    #[test]
    fn spellings_of_one_identifier() {
        let id = |s: &str| resolve(s).map(|a| a.identifier);
        let same = [
            "https://crawler.example",
            "https://crawler.example/",
            "HTTPS://CRAWLER.EXAMPLE:443",
            "https://crawler.example:/",
            "https://crawler.example/.well-known/http-message-signatures-directory",
            "https://crawler.example/.well-known/./http-message-signatures-directory",
            "https://crawler.example/a/../.well-known/http-message-signatures-directory",
            "https://crawler.example/.well-known/http-message-signatures-director%79",
            "https://crawler.example/.well-known/http-message-signatures-directory?v=1",
            "https://crawler.example/.well-known/http-message-signatures-directory#k",
        ];
        for s in same {
            assert_eq!(
                id(s).as_deref(),
                Ok("https://crawler.example/.well-known/http-message-signatures-directory"),
                "{s}"
            );
        }
        for (sent, want) in [
            (
                "https://crawler.example/keys/%7ejwks.json?x=1",
                "https://crawler.example/keys/~jwks.json",
            ),
            (
                "https://crawler.example/a%2fb%c3%a9",
                "https://crawler.example/a%2Fb%C3%A9",
            ),
            (
                "https://crawler.example:8443/k/",
                "https://crawler.example:8443/k/",
            ),
            ("https://[2001:DB8::1]/k/.", "https://[2001:db8::1]/k/"),
        ] {
            assert_eq!(id(sent).as_deref(), Ok(want), "{sent}");
        }
        // A different path is a different identifier, a query is not.
        assert_ne!(id("https://a.example/k1"), id("https://a.example/k2"));
        assert_ne!(id("https://a.example/K"), id("https://a.example/k"));
    }

    #[test]
    fn readings_and_what_is_fetched() {
        let a = resolve("https://a.example").expect("origin");
        assert_eq!(a.reading, Reading::Origin);
        assert_eq!(a.fetch, format!("https://a.example{WELL_KNOWN}"));
        let a = resolve("https://a.example/jwks.json?v=3#x").expect("key set");
        assert_eq!(a.reading, Reading::KeySet);
        assert_eq!(a.fetch, "https://a.example/jwks.json?v=3");
        assert_eq!(a.identifier, "https://a.example/jwks.json");
        assert!(!a.reading.well_known());
        // The root with a query is not a bare origin: fetched as sent.
        let a = resolve("https://a.example/?keys").expect("query");
        assert_eq!(a.reading, Reading::KeySet);
    }

    #[test]
    fn what_is_not_an_agent_url() {
        for bad in [
            "http://a.example",
            "a.example",
            "ftp://a.example",
            "https://",
            "https:///x",
            "https://u:p@a.example",
            "https://a.example:99999/",
            "https://a.example:8x/",
            "https://a b.example/",
            "https://a.example/%zz",
            "https://a.example/\u{7}",
            "https://[zz]/",
            "https://a<b.example/",
        ] {
            assert!(resolve(bad).is_err(), "{bad}");
        }
        assert!(resolve(&format!("https://a.example/{}", "a".repeat(MAX_AGENT_URL))).is_err());
        assert!(
            resolve("http://a.example")
                .expect_err("refused")
                .contains("https only")
        );
        // Not an agent URL: the value keeps an identifier of its own.
        assert_eq!(identifier("not a url"), "not a url");
    }
}
