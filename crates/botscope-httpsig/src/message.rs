//! The parts of an HTTP message a signature can cover (RFC 9421 §2).

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
    pub fn header(&self, name: &str) -> Option<String> {
        field(&self.headers, name)
    }
}

/// The combined value of the field `name` among `headers` (RFC 9421 §2.1:
/// each line's value trimmed, the lines joined by `, `).
pub fn field(headers: &[(String, String)], name: &str) -> Option<String> {
    let mut out: Option<String> = None;
    for (n, v) in headers {
        if n.eq_ignore_ascii_case(name) {
            // An obsolete line folding becomes a space.
            let v = v.trim_matches([' ', '\t']).replace(['\r', '\n'], " ");
            match &mut out {
                Some(o) => {
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
