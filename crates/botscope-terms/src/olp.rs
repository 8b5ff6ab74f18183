//! RSL licence tokens as a site checks them: the `License` HTTP
//! authentication scheme of RSL's Crawler Authorization Protocol
//! (`Authorization: License <token>`; 401 or 402 with
//! `WWW-Authenticate: License …` and a `Link` to the licence), and the
//! Open License Protocol's token introspection (`POST /introspect` with
//! `token` and `resource`, RFC 7662 with OLP's `permitted`, `resource`
//! and `reason`). And the crawler's side: the `grant_type=rsl` token
//! request and its answer.
//!
//! Pure: the gate and the crawler do the I/O. A licence server's answer
//! is read fail-closed: anything but a well-formed `active: true,
//! permitted: true` for the resource asked is no licence, never a pass.
//!
//! ```
//! use botscope_terms::olp::{self, Presented};
//!
//! assert_eq!(olp::presented(&["License rsl_abc.DEF-1"]), Presented::Token("rsl_abc.DEF-1"));
//! assert_eq!(olp::presented(&["Bearer abc"]), Presented::None);
//! let i = olp::read_introspection(
//!     br#"{"active": true, "token_type": "rsl", "resource": "https://example.com/", "permitted": true}"#,
//!     "https://example.com/news/a",
//!     1_800_000_000,
//! );
//! assert_eq!(i, Ok(olp::Introspected::Permitted { until: None, covers: "https://example.com/".into() }));
//! ```

use std::fmt::Write as _;

/// The authentication scheme.
pub const SCHEME: &str = "License";
/// The longest token read (a longer credential is malformed).
pub const MAX_TOKEN_BYTES: usize = 4096;
/// The most of an introspection or token answer read.
pub const MAX_ANSWER_BYTES: usize = 64 * 1024;
/// OLP's grant type.
pub const GRANT_TYPE: &str = "rsl";

/// What a request's `Authorization` fields present.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Presented<'a> {
    /// No `License` credentials (none at all, or another scheme's).
    None,
    /// A licence token (RFC 7235 token68).
    Token(&'a str),
    /// `License` credentials that are not one token: why.
    Malformed(&'static str),
}

fn token68(t: &str) -> bool {
    let body = t.trim_end_matches('=');
    !body.is_empty()
        && body.bytes().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'+' | b'/')
        })
}

/// The licence token of a request's `Authorization` field values (the
/// scheme matched without regard to case, as RFC 9110 says). Two
/// `License` credentials are malformed, not a choice.
pub fn presented<'a>(values: &[&'a str]) -> Presented<'a> {
    let mut found = Presented::None;
    for v in values.iter().take(8) {
        let v = v.trim();
        let (scheme, rest) = v.split_once([' ', '\t']).unwrap_or((v, ""));
        if !scheme.eq_ignore_ascii_case(SCHEME) {
            continue;
        }
        if found != Presented::None {
            return Presented::Malformed("more than one License credential");
        }
        let t = rest.trim();
        found = if t.is_empty() {
            Presented::Malformed("License credentials without a token")
        } else if t.len() > MAX_TOKEN_BYTES {
            Presented::Malformed("a licence token longer than 4096 bytes")
        } else if !token68(t) {
            Presented::Malformed("a licence token with characters a token cannot hold")
        } else {
            Presented::Token(t)
        };
    }
    found
}

/// What a licence server's introspection answer says of a token for a
/// resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Introspected {
    /// Active, and its licence permits the resource: until `until` (Unix
    /// seconds, the answer's `exp`) when given; `covers` is the resource
    /// the server says the licence is for (the one asked, when it says
    /// none).
    Permitted {
        /// `exp`, when given.
        until: Option<i64>,
        /// The licensed resource.
        covers: String,
    },
    /// Active, but its licence does not permit the resource (the server's
    /// `reason`, or ours).
    NotPermitted(String),
    /// Not active: expired, revoked or never issued.
    Inactive,
}

/// Why an answer could not be read: the token is then not taken.
pub type AnswerError = String;

/// Reads an introspection answer for `resource` (the URL asked about) at
/// `now` (Unix seconds). Fail-closed: `active` must be a boolean;
/// `permitted` must be `true` for a pass (missing, it is no permission);
/// an `exp` in the past is inactive; a `token_type` other than `rsl` or a
/// `resource` that does not cover the one asked (another origin, another
/// path) is no permission.
pub fn read_introspection(
    body: &[u8],
    resource: &str,
    now: i64,
) -> Result<Introspected, AnswerError> {
    if body.len() > MAX_ANSWER_BYTES {
        return Err("the introspection answer is longer than 64 KiB".into());
    }
    let v: serde_json::Value = serde_json::from_slice(body)
        .map_err(|e| format!("the introspection answer is not JSON ({e})"))?;
    let o = v
        .as_object()
        .ok_or("the introspection answer is not a JSON object")?;
    if let Some(e) = o.get("error") {
        return Err(format!(
            "the licence server answered an error: {}",
            e.as_str().unwrap_or("(not a string)")
        ));
    }
    match o.get("active") {
        Some(serde_json::Value::Bool(true)) => {}
        Some(serde_json::Value::Bool(false)) => return Ok(Introspected::Inactive),
        Some(_) => return Err("`active` is not a boolean".into()),
        None => return Err("the introspection answer has no `active`".into()),
    }
    if let Some(exp) = o.get("exp") {
        match exp.as_i64() {
            Some(t) if t <= now => return Ok(Introspected::Inactive),
            Some(_) => {}
            None => return Err("`exp` is not a number of seconds".into()),
        }
    }
    match o.get("token_type").map(|t| t.as_str()) {
        None | Some(Some("rsl")) => {}
        Some(t) => {
            return Ok(Introspected::NotPermitted(format!(
                "the token is of type {}, not an RSL licence token",
                t.unwrap_or("(not a string)")
            )));
        }
    }
    let covers = match o.get("resource") {
        None => resource.to_owned(),
        Some(serde_json::Value::String(r)) if covers(r, resource) => r.clone(),
        Some(serde_json::Value::String(r)) => {
            return Ok(Introspected::NotPermitted(format!(
                "the licence is for {}, which does not cover {}",
                clip(r),
                clip(resource)
            )));
        }
        Some(_) => return Err("`resource` is not a string".into()),
    };
    match o.get("permitted") {
        Some(serde_json::Value::Bool(true)) => Ok(Introspected::Permitted {
            until: o.get("exp").and_then(serde_json::Value::as_i64),
            covers,
        }),
        Some(serde_json::Value::Bool(false)) => Ok(Introspected::NotPermitted(
            o.get("reason").and_then(|r| r.as_str()).map_or_else(
                || "the licence does not permit this resource".to_owned(),
                clip,
            ),
        )),
        Some(_) => Err("`permitted` is not a boolean".into()),
        None => Ok(Introspected::NotPermitted(
            "the licence server did not say the licence permits this resource".into(),
        )),
    }
}

/// A stranger's text cut to 200 characters, control characters dropped.
fn clip(s: &str) -> String {
    s.chars().filter(|c| !c.is_control()).take(200).collect()
}

/// True when the licensed resource `licensed` covers `asked`: the same
/// origin, and `asked`'s path within `licensed`'s (the whole path, or
/// the start of it ending at a `/`).
pub fn covers(licensed: &str, asked: &str) -> bool {
    let (Ok(l), Ok(a)) = (url::Url::parse(licensed), url::Url::parse(asked)) else {
        return false;
    };
    if l.origin() != a.origin() {
        return false;
    }
    let (lp, ap) = (l.path(), a.path());
    ap == lp || (ap.starts_with(lp) && (lp.ends_with('/') || ap[lp.len()..].starts_with('/')))
}

/// Why a request is refused its licensed resource, as the
/// `WWW-Authenticate: License` challenge says it (RFC 6750's codes, which
/// the License scheme shares).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// No licence token (or a malformed one): 401, or 402 when every
    /// licence for the resource is paid.
    InvalidRequest,
    /// The token is not active (expired, revoked, unknown): 401.
    InvalidToken,
    /// The token's licence does not cover this resource: 403.
    InsufficientScope,
    /// The licence server could not be asked: 503, try again.
    ServerError,
}

impl Refusal {
    /// The challenge's `error` code.
    pub fn code(self) -> &'static str {
        match self {
            Refusal::InvalidRequest => "invalid_request",
            Refusal::InvalidToken => "invalid_token",
            Refusal::InsufficientScope => "insufficient_scope",
            Refusal::ServerError => "server_error",
        }
    }

    /// The status of the answer (`paid`: every licence for the resource
    /// costs money).
    pub fn status(self, paid: bool) -> u16 {
        match self {
            Refusal::InvalidRequest if paid => 402,
            Refusal::InvalidRequest | Refusal::InvalidToken => 401,
            Refusal::InsufficientScope => 403,
            Refusal::ServerError => 503,
        }
    }
}

/// The `WWW-Authenticate` value: `License error="…",
/// error_description="…"`, and where a token is had
/// (`authorization_uri`, the licence server's token endpoint) when known.
/// Quotes and backslashes in the description are escaped.
pub fn challenge(r: Refusal, description: &str, authorization_uri: Option<&str>) -> String {
    let mut s = format!("{SCHEME} error=\"{}\"", r.code());
    let quoted = |t: &str| -> String {
        t.chars()
            .filter(|c| c.is_ascii_graphic() || *c == ' ')
            .take(200)
            .flat_map(|c| match c {
                '"' | '\\' => vec!['\\', c],
                c => vec![c],
            })
            .collect()
    };
    let _ = write!(s, ", error_description=\"{}\"", quoted(description));
    if let Some(u) = authorization_uri {
        let _ = write!(s, ", authorization_uri=\"{}\"", quoted(u));
    }
    s
}

/// The `Link` to the licence: `<url>; rel="license";
/// type="application/rsl+xml"`.
pub fn link(licence: &str) -> String {
    format!(
        "<{licence}>; rel=\"license\"; type=\"{}\"",
        crate::rsl::MEDIA_TYPE
    )
}

/// An endpoint of a licence server: `server` (the `<content server>`
/// attribute, an origin and maybe a path) joined with `/token`,
/// `/introspect` or `/key`; `None` when `server` is not an http(s) URL.
pub fn endpoint(server: &str, name: &str) -> Option<url::Url> {
    let mut u = url::Url::parse(server.trim()).ok()?;
    if !matches!(u.scheme(), "http" | "https") || u.host_str().is_none() {
        return None;
    }
    u.set_query(None);
    u.set_fragment(None);
    let path = format!("{}/{name}", u.path().trim_end_matches('/'));
    u.set_path(&path);
    Some(u)
}

/// `application/x-www-form-urlencoded` of `pairs`.
pub fn form(pairs: &[(&str, &str)]) -> String {
    url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs)
        .finish()
}

/// A token the licence server issued (`POST /token`, `grant_type=rsl`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Issued {
    /// `access_token`.
    pub token: String,
    /// `expires_in` (seconds; 0 or none: the server gave no lifetime).
    pub expires_in: Option<u64>,
}

/// Reads the token endpoint's answer (its status and body): the token, or
/// the server's error (`error` and `error_description`) in words.
pub fn read_token_answer(status: u16, body: &[u8]) -> Result<Issued, AnswerError> {
    if body.len() > MAX_ANSWER_BYTES {
        return Err("the token answer is longer than 64 KiB".into());
    }
    let v: serde_json::Value = serde_json::from_slice(body)
        .map_err(|e| format!("the token answer (status {status}) is not JSON ({e})"))?;
    if let Some(e) = v.get("error") {
        let code = e.as_str().map_or_else(|| "(not a string)".to_owned(), clip);
        let why = v
            .get("error_description")
            .and_then(|d| d.as_str())
            .map(|d| format!(": {}", clip(d)))
            .unwrap_or_default();
        return Err(format!("the licence server refused ({status} {code}){why}"));
    }
    if status != 200 {
        return Err(format!("the licence server answered {status}"));
    }
    let token = v
        .get("access_token")
        .and_then(|t| t.as_str())
        .ok_or("the token answer has no access_token")?;
    if token.len() > MAX_TOKEN_BYTES || !token68(token) {
        return Err("the access_token is not a token an Authorization field can carry".into());
    }
    match v.get("token_type").and_then(|t| t.as_str()) {
        Some(t) if t.eq_ignore_ascii_case("rsl") || t.eq_ignore_ascii_case(SCHEME) => {}
        Some(t) => return Err(format!("the token is of type {}, not rsl", clip(t))),
        None => return Err("the token answer has no token_type".into()),
    }
    Ok(Issued {
        token: token.to_owned(),
        expires_in: v
            .get("expires_in")
            .and_then(serde_json::Value::as_u64)
            .filter(|s| *s > 0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const AT: i64 = 1_800_000_000;

    #[test]
    fn credentials_are_read_as_rfc_9110_says() {
        assert_eq!(presented(&[]), Presented::None);
        assert_eq!(presented(&["Basic dXNlcjpwYXNz"]), Presented::None);
        assert_eq!(presented(&["license  abc=="]), Presented::Token("abc=="));
        assert_eq!(
            presented(&["Basic x", "LICENSE rsl_1"]),
            Presented::Token("rsl_1")
        );
        assert!(matches!(presented(&["License"]), Presented::Malformed(_)));
        assert!(matches!(
            presented(&["License a b"]),
            Presented::Malformed(_)
        ));
        assert!(matches!(
            presented(&["License a\"b"]),
            Presented::Malformed(_)
        ));
        assert!(matches!(
            presented(&["License a", "License b"]),
            Presented::Malformed(_)
        ));
        let long = format!("License {}", "a".repeat(MAX_TOKEN_BYTES + 1));
        assert!(matches!(presented(&[&long]), Presented::Malformed(_)));
    }

    /// The OLP specification's own examples: its successful, denied and
    /// expired answers.
    #[test]
    fn the_specifications_introspection_examples() {
        let ok = br#"{"active": true, "token_type": "rsl", "license": "<license>...</license>", "resource": "https://example.com/", "permitted": true}"#;
        assert_eq!(
            read_introspection(ok, "https://example.com/article/abc", AT),
            Ok(Introspected::Permitted {
                until: None,
                covers: "https://example.com/".into()
            })
        );
        // Its denied example names another site's resource: not ours.
        let denied = br#"{"active": true, "token_type": "rsl", "license": "<license>...</license>", "resource": "https://test.com/", "permitted": false, "reason": "License does not cover this resource"}"#;
        assert!(matches!(
            read_introspection(denied, "https://example.com/article/abc", AT),
            Ok(Introspected::NotPermitted(_))
        ));
        let denied = br#"{"active": true, "token_type": "rsl", "resource": "https://example.com/", "permitted": false, "reason": "License does not cover this resource"}"#;
        assert_eq!(
            read_introspection(denied, "https://example.com/article/abc", AT),
            Ok(Introspected::NotPermitted(
                "License does not cover this resource".into()
            ))
        );
        assert_eq!(
            read_introspection(br#"{"active": false}"#, "https://example.com/a", AT),
            Ok(Introspected::Inactive)
        );
    }

    /// A server that lies or breaks: never a pass.
    #[test]
    fn a_lying_or_broken_answer_is_never_a_pass() {
        let asked = "https://example.com/news/a";
        for (body, what) in [
            (&br#"{"active": true}"#[..], "no permitted"),
            (br#"{"active": true, "permitted": "true"}"#, "a string"),
            (br#"{"active": "yes", "permitted": true}"#, "active a string"),
            (br#"{"permitted": true}"#, "no active"),
            (br#"[true]"#, "not an object"),
            (b"<html>ok</html>", "not JSON"),
            (br#"{"active": true, "permitted": true, "exp": 1}"#, "expired"),
            (br#"{"active": true, "permitted": true, "exp": "never"}"#, "exp a string"),
            (br#"{"active": true, "permitted": true, "token_type": "Bearer"}"#, "a bearer token"),
            (br#"{"active": true, "permitted": true, "resource": "https://example.com.evil/"}"#, "another origin"),
            (br#"{"active": true, "permitted": true, "resource": "https://example.com/newsroom/"}"#, "another path"),
            (br#"{"active": true, "permitted": true, "resource": "https://example.com/news/a/b"}"#, "a narrower one"),
            (br#"{"error": "server_error"}"#, "an error"),
        ] {
            let r = read_introspection(body, asked, AT);
            assert!(
                !matches!(r, Ok(Introspected::Permitted { .. })),
                "{what}: {r:?}"
            );
        }
        let huge = format!(
            "{{\"active\": true, \"permitted\": true, \"x\": \"{}\"}}",
            "a".repeat(MAX_ANSWER_BYTES)
        );
        assert!(read_introspection(huge.as_bytes(), asked, AT).is_err());
        assert!(matches!(
            read_introspection(
                br#"{"active": true, "permitted": true, "exp": 1800000600, "resource": "https://example.com/news"}"#,
                asked,
                AT
            ),
            Ok(Introspected::Permitted { until: Some(1_800_000_600), .. })
        ));
    }

    #[test]
    fn coverage_is_by_origin_and_whole_path_segments() {
        assert!(covers("https://example.com/", "https://example.com/a/b"));
        assert!(covers("https://example.com", "https://example.com/a"));
        assert!(covers(
            "https://example.com/news",
            "https://example.com/news/a"
        ));
        assert!(covers(
            "https://example.com/news/",
            "https://example.com/news/a"
        ));
        assert!(!covers(
            "https://example.com/news",
            "https://example.com/newsroom"
        ));
        assert!(!covers("http://example.com/", "https://example.com/a"));
        assert!(!covers(
            "https://example.com:8443/",
            "https://example.com/a"
        ));
        assert!(!covers("not a url", "https://example.com/a"));
    }

    #[test]
    fn challenges_quote_what_they_say() {
        assert_eq!(
            challenge(
                Refusal::InvalidRequest,
                "Access to this resource requires a valid license",
                Some("https://olp.example.com/token")
            ),
            "License error=\"invalid_request\", error_description=\"Access to this resource requires a valid license\", authorization_uri=\"https://olp.example.com/token\""
        );
        assert_eq!(
            challenge(Refusal::InsufficientScope, "a \"quoted\"\n\\ reason", None),
            "License error=\"insufficient_scope\", error_description=\"a \\\"quoted\\\"\\\\ reason\""
        );
        assert_eq!(Refusal::InvalidRequest.status(true), 402);
        assert_eq!(Refusal::InvalidRequest.status(false), 401);
        assert_eq!(Refusal::InvalidToken.status(true), 401);
        assert_eq!(Refusal::InsufficientScope.status(false), 403);
        assert_eq!(
            link("https://example.com/license.xml"),
            "<https://example.com/license.xml>; rel=\"license\"; type=\"application/rsl+xml\""
        );
    }

    #[test]
    fn endpoints_join_the_servers_path() {
        let e = |s, n| endpoint(s, n).map(|u| u.to_string());
        assert_eq!(
            e("https://rslcollective.org/api", "token").as_deref(),
            Some("https://rslcollective.org/api/token")
        );
        assert_eq!(
            e("https://olp.example.com", "introspect").as_deref(),
            Some("https://olp.example.com/introspect")
        );
        assert_eq!(
            e("https://olp.example.com/api/?x=1", "token").as_deref(),
            Some("https://olp.example.com/api/token")
        );
        assert_eq!(e("ftp://olp.example.com", "token"), None);
        assert_eq!(e("/relative", "token"), None);
    }

    /// The OLP specification's token answer and error example.
    #[test]
    fn token_answers() {
        assert_eq!(
            read_token_answer(
                200,
                br#"{"access_token": "rsl_cnNsLWNsaWVudC0xMjM6czNjcjN0S0VZ", "token_type": "rsl", "expires_in": 0}"#
            ),
            Ok(Issued {
                token: "rsl_cnNsLWNsaWVudC0xMjM6czNjcjN0S0VZ".into(),
                expires_in: None
            })
        );
        let e = read_token_answer(
            400,
            br#"{"error": "invalid_request", "error_description": "The request is missing a required parameter."}"#,
        )
        .expect_err("refused");
        assert!(
            e.contains("invalid_request") && e.contains("missing"),
            "{e}"
        );
        assert!(
            read_token_answer(200, br#"{"access_token": "a b", "token_type": "rsl"}"#).is_err()
        );
        assert!(
            read_token_answer(200, br#"{"access_token": "a", "token_type": "Bearer"}"#).is_err()
        );
        assert!(read_token_answer(500, b"oops").is_err());
    }
}
