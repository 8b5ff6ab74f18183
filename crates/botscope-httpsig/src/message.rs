//! The parts of an HTTP message a signature can cover (RFC 9421 §2).

use std::borrow::Cow;

/// A request as a signature sees it: its method, target and header fields.
/// Field names are compared without regard to case; several lines of one
/// field are combined as RFC 9421 §2.1 says (values trimmed, joined by
/// `, `).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The method, as sent (`GET`).
    pub method: String,
    /// `https` or `http`, lowercase.
    pub scheme: String,
    /// The authority, normalised ([`normalize_authority`]).
    pub authority: String,
    /// The path, never empty (`/`).
    pub path: String,
    /// The query without its `?`, if the target has one.
    pub query: Option<String>,
    /// The header fields, in order, as (name, value).
    pub headers: Vec<(String, String)>,
}

/// A response as a signature sees it, with the request it answers (for
/// components marked `req`, as a key directory's signature covers the
/// request's `@authority`).
#[derive(Debug, Clone, Copy)]
pub struct Response<'a> {
    /// The status code.
    pub status: u16,
    /// The header fields, in order, as (name, value).
    pub headers: &'a [(String, String)],
    /// The request this answers, if known.
    pub request: Option<&'a Request>,
}

/// `authority` as RFC 9421 §2.2.3 wants it: the host in lowercase, the
/// port left out when it is the scheme's default.
pub fn normalize_authority(scheme: &str, authority: &str) -> String {
    let a = authority.trim().to_ascii_lowercase();
    let default = match scheme.to_ascii_lowercase().as_str() {
        "https" => ":443",
        "http" => ":80",
        _ => return a,
    };
    match a.strip_suffix(default) {
        // Not the tail of an IPv6 literal's last group (`[::443]` has a
        // `]` before its port, `[::1]:443` loses `:443`).
        Some(host) if !host.is_empty() && (!host.starts_with('[') || host.ends_with(']')) => {
            host.to_owned()
        }
        _ => a,
    }
}

impl Request {
    /// A request from its method, scheme, `Host` (or `:authority`) and
    /// request target in origin form (`/path?query`), as a proxy sees it.
    pub fn new(
        method: &str,
        scheme: &str,
        authority: &str,
        target: &str,
        headers: Vec<(String, String)>,
    ) -> Request {
        let (path, query) = match target.split_once('?') {
            Some((p, q)) => (p, Some(q.to_owned())),
            None => (target, None),
        };
        let path = if path.is_empty() { "/" } else { path };
        let scheme = scheme.to_ascii_lowercase();
        Request {
            method: method.to_owned(),
            authority: normalize_authority(&scheme, authority),
            scheme,
            path: path.to_owned(),
            query,
            headers,
        }
    }

    /// A request for an absolute URI (`https://example.com/a?b`), or `None`
    /// when it is not one. A user and password in the URI are left out of
    /// the authority.
    pub fn from_uri(method: &str, uri: &str, headers: Vec<(String, String)>) -> Option<Request> {
        let (scheme, rest) = uri.split_once("://")?;
        if scheme.is_empty()
            || !scheme
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b))
        {
            return None;
        }
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let authority = &rest[..end];
        let authority = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        if authority.is_empty() {
            return None;
        }
        let target = &rest[end..];
        let target = target.split_once('#').map_or(target, |(t, _)| t);
        Some(Request::new(method, scheme, authority, target, headers))
    }

    /// The request target in origin form (`/path?query`).
    pub fn target(&self) -> String {
        match &self.query {
            Some(q) => format!("{}?{q}", self.path),
            None => self.path.clone(),
        }
    }

    /// The target URI (`https://example.com/path?query`).
    pub fn target_uri(&self) -> String {
        format!("{}://{}{}", self.scheme, self.authority, self.target())
    }

    /// The combined value of a header field, if the request has it.
    pub fn header(&self, name: &str) -> Option<Cow<'_, str>> {
        field(&self.headers, name)
    }
}

/// The largest request head [`Request::parse_head`] reads.
pub const MAX_HEAD_BYTES: usize = 64 * 1024;
/// The most header lines it reads.
pub const MAX_HEADER_LINES: usize = 256;

/// Why a request head could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeadError {
    /// Over [`MAX_HEAD_BYTES`] or [`MAX_HEADER_LINES`].
    #[error("the request head is larger than {0}")]
    TooLarge(&'static str),
    /// The request line is not `METHOD TARGET HTTP/x.y`.
    #[error("line 1: not a request line (METHOD TARGET HTTP/1.1): {0:?}")]
    RequestLine(String),
    /// A header line is not `Name: value`.
    #[error("line {line}: not a header field: {text:?}")]
    Header {
        /// Its line number.
        line: usize,
        /// The line (cut to 80 characters).
        text: String,
    },
    /// No `Host` and no absolute target: no authority to check against.
    #[error("no Host header and no absolute target: the authority is unknown")]
    NoAuthority,
}

impl Request {
    /// Reads an HTTP/1.1 request head as a proxy saw it: the request line
    /// and the header fields, up to the first empty line (a body after it
    /// is ignored). Lines may end in CRLF or LF; an obsolete folded line
    /// continues the field before it. The authority is the absolute
    /// target's, else `Host`'s; `scheme` is the one the request came over
    /// (`X-Forwarded-Proto` when the head has it).
    pub fn parse_head(head: &[u8], scheme: &str) -> Result<Request, HeadError> {
        if head.len() > MAX_HEAD_BYTES {
            return Err(HeadError::TooLarge("64 KiB"));
        }
        let text = String::from_utf8_lossy(head);
        let mut lines = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
        // Blank lines before the request line are tolerated (RFC 9112 §2.2).
        let first = lines
            .by_ref()
            .find(|l| !l.trim().is_empty())
            .ok_or_else(|| HeadError::RequestLine(String::new()))?;
        let cut = |l: &str| l.chars().take(80).collect::<String>();
        let parts: Vec<&str> = first.split(' ').filter(|p| !p.is_empty()).collect();
        let [method, target, version] = parts[..] else {
            return Err(HeadError::RequestLine(cut(first)));
        };
        if !version.starts_with("HTTP/") || !method.bytes().all(is_tchar) {
            return Err(HeadError::RequestLine(cut(first)));
        }
        let mut headers: Vec<(String, String)> = Vec::new();
        for (i, line) in lines.enumerate() {
            if line.is_empty() {
                break;
            }
            if headers.len() >= MAX_HEADER_LINES {
                return Err(HeadError::TooLarge("256 header lines"));
            }
            if line.starts_with([' ', '\t']) {
                match headers.last_mut() {
                    Some((_, v)) => {
                        v.push(' ');
                        v.push_str(line.trim());
                        continue;
                    }
                    None => {
                        return Err(HeadError::Header {
                            line: i + 2,
                            text: cut(line),
                        });
                    }
                }
            }
            match line.split_once(':') {
                Some((name, value)) if !name.is_empty() && name.bytes().all(is_tchar) => {
                    headers.push((name.to_owned(), value.trim().to_owned()));
                }
                _ => {
                    return Err(HeadError::Header {
                        line: i + 2,
                        text: cut(line),
                    });
                }
            }
        }
        let scheme = field(&headers, "x-forwarded-proto")
            .map(|p| {
                p.split(',')
                    .next()
                    .unwrap_or_default()
                    .trim()
                    .to_ascii_lowercase()
            })
            .filter(|p| p == "https" || p == "http")
            .unwrap_or_else(|| scheme.to_ascii_lowercase());
        if target.contains("://") {
            return Request::from_uri(method, target, headers)
                .ok_or_else(|| HeadError::RequestLine(cut(first)));
        }
        let host = field(&headers, "host")
            .ok_or(HeadError::NoAuthority)?
            .into_owned();
        Ok(Request::new(method, &scheme, &host, target, headers))
    }
}

/// A token character (RFC 9110 §5.6.2).
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// The combined value of the field `name` among `headers` (RFC 9421 §2.1:
/// each line's value trimmed, the lines joined by `, `).
pub fn field<'a>(headers: &'a [(String, String)], name: &str) -> Option<Cow<'a, str>> {
    let mut out: Option<Cow<'a, str>> = None;
    for (n, v) in headers {
        if n.eq_ignore_ascii_case(name) {
            let v = v.trim_matches([' ', '\t']);
            // An obsolete line folding becomes a space.
            let v = if v.contains(['\r', '\n']) {
                Cow::Owned(v.replace(['\r', '\n'], " "))
            } else {
                Cow::Borrowed(v)
            };
            match &mut out {
                Some(o) => {
                    let o = o.to_mut();
                    o.push_str(", ");
                    o.push_str(&v);
                }
                None => out = Some(v),
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn authority_is_normalised() {
        for (scheme, a, want) in [
            ("https", "Example.COM", "example.com"),
            ("https", "example.com:443", "example.com"),
            ("http", "example.com:80", "example.com"),
            ("http", "example.com:443", "example.com:443"),
            ("https", "[::1]:443", "[::1]"),
            ("https", "[::443]", "[::443]"),
            ("http", "127.0.0.1:8080", "127.0.0.1:8080"),
        ] {
            assert_eq!(normalize_authority(scheme, a), want, "{scheme} {a}");
        }
    }

    #[test]
    fn uri_parts() {
        let r = Request::from_uri(
            "GET",
            "https://user:pw@Example.com:443/a/b?x=1#frag",
            vec![],
        )
        .expect("uri");
        assert_eq!(
            (r.authority.as_str(), r.path.as_str(), r.query.as_deref()),
            ("example.com", "/a/b", Some("x=1"))
        );
        assert_eq!(r.target_uri(), "https://example.com/a/b?x=1");
        let r = Request::from_uri("GET", "http://[::1]:9000", vec![]).expect("uri");
        assert_eq!((r.authority.as_str(), r.path.as_str()), ("[::1]:9000", "/"));
        assert!(Request::from_uri("GET", "/relative", vec![]).is_none());
        assert!(Request::from_uri("GET", "https:///x", vec![]).is_none());
    }

    #[test]
    fn request_heads() {
        let r = Request::parse_head(
            b"GET /a?b=1 HTTP/1.1\r\nHost: Example.com:443\r\nX-Folded: one\r\n two\r\n\r\nbody",
            "https",
        )
        .expect("head");
        assert_eq!(r.authority, "example.com");
        assert_eq!(r.target(), "/a?b=1");
        assert_eq!(r.header("x-folded").as_deref(), Some("one two"));
        let r = Request::parse_head(b"GET https://a.example/x HTTP/1.1\n\n", "http").expect("abs");
        assert_eq!(
            (r.scheme.as_str(), r.authority.as_str()),
            ("https", "a.example")
        );
        let r = Request::parse_head(
            b"GET / HTTP/1.1\nHost: a\nX-Forwarded-Proto: http\n",
            "https",
        )
        .expect("proto");
        assert_eq!(r.scheme, "http");
        for (bad, want) in [
            (&b"GET /\n"[..], "request line"),
            (b"GET / HTTP/1.1\nno colon\n", "line 2"),
            (b"GET / HTTP/1.1\n", "authority"),
            (b"GET / HTTP/1.1\n bad fold\n", "line 2"),
            (b"", "request line"),
        ] {
            let e = Request::parse_head(bad, "https")
                .expect_err("refused")
                .to_string();
            assert!(e.contains(want), "{e}");
        }
        let many = format!("GET / HTTP/1.1\nHost: a\n{}", "X: y\n".repeat(300));
        assert!(Request::parse_head(many.as_bytes(), "https").is_err());
        assert!(Request::parse_head(&vec![b'a'; MAX_HEAD_BYTES + 1], "https").is_err());
    }

    #[test]
    fn field_lines_combine() {
        let h = vec![
            ("Accept".to_owned(), " text/html ".to_owned()),
            ("X-Other".to_owned(), "x".to_owned()),
            ("accept".to_owned(), "*/*".to_owned()),
        ];
        assert_eq!(field(&h, "ACCEPT").as_deref(), Some("text/html, */*"));
        assert_eq!(field(&h, "missing"), None);
    }
}
