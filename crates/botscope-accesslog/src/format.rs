//! Log formats: Apache `LogFormat` strings, nginx `log_format` strings,
//! the common presets, and JSON lines.

/// What a field of a log line holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Field {
    /// Client address (`%h`, `%a`, `$remote_addr`).
    RemoteAddr,
    /// `%l`.
    Ident,
    /// `%u`, `$remote_user`.
    User,
    /// `[%t]`, `$time_local` (`10/Oct/2000:13:55:36 -0700`).
    TimeClf,
    /// `$time_iso8601`.
    TimeIso,
    /// `%r`, `$request`: method, target and protocol.
    Request,
    /// `%m`, `$request_method`.
    Method,
    /// `%U%q`, `$request_uri`, `$uri`.
    Path,
    /// `%H`, `$server_protocol`.
    Protocol,
    /// `%>s`, `%s`, `$status`.
    Status,
    /// `%b`, `%B`, `%O`, `$body_bytes_sent`, `$bytes_sent`.
    Bytes,
    /// `%{Referer}i`, `$http_referer`.
    Referer,
    /// `%{User-Agent}i`, `$http_user_agent`.
    UserAgent,
    /// `%v`, `%V`, `$host`, `$server_name`, or `%v:%p` as in vhost_combined.
    VHost,
    /// `%D` (microseconds).
    DurationMicros,
    /// `%T`, `$request_time` (seconds, maybe fractional).
    DurationSeconds,
    /// `$scheme` (`https`), for signatures that cover `@target-uri`.
    Scheme,
    /// `%{Signature-Input}i`, `$http_signature_input` (RFC 9421).
    SignatureInput,
    /// `%{Signature}i`, `$http_signature`.
    Signature,
    /// `%{Signature-Agent}i`, `$http_signature_agent` (Web Bot Auth).
    SignatureAgent,
    /// Anything else: read and ignored.
    Ignored,
}

/// One piece of a format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Tok {
    Lit(Vec<u8>),
    Field(Field),
}

/// How the parser takes one token of a format, decided once per format
/// from the token and its neighbours ([`steps`]), not once per line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Step {
    /// Literal bytes; `last`: the format's last token (a truncated last
    /// field may leave it out).
    Lit { bytes: Vec<u8>, last: bool },
    /// A field after a `"`: to the next unescaped `"`; `last`: no field
    /// follows (only it may be cut off).
    Quoted { field: Field, last: bool },
    /// A field after a `[`: to the next `]`.
    Bracketed(Field),
    /// Any other field: to the first byte of the literal after it (`None`:
    /// to the end of the line), or, for `%t`, which prints its own
    /// brackets, bracketed when the line has a `[` there.
    Until { field: Field, stop: Option<u8> },
}

/// The steps of `tokens`.
fn steps(tokens: &[Tok]) -> Vec<Step> {
    tokens
        .iter()
        .enumerate()
        .map(|(k, tok)| match tok {
            Tok::Lit(l) => Step::Lit {
                bytes: l.clone(),
                last: k + 1 == tokens.len(),
            },
            Tok::Field(f) => {
                let field = *f;
                let prev = match k.checked_sub(1).map(|j| &tokens[j]) {
                    Some(Tok::Lit(l)) => l.last().copied(),
                    _ => None,
                };
                match prev {
                    Some(b'"') => Step::Quoted {
                        field,
                        last: tokens[k + 1..].iter().all(|t| matches!(t, Tok::Lit(_))),
                    },
                    Some(b'[') => Step::Bracketed(field),
                    _ => Step::Until {
                        field,
                        stop: match tokens.get(k + 1) {
                            Some(Tok::Lit(l)) => l.first().copied(),
                            _ => None,
                        },
                    },
                }
            }
        })
        .collect()
}

/// What can go wrong in this crate: only a log format string that cannot
/// be used (parsing a line never fails; it gives a `Malformed` reason).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A format string that cannot be used.
    #[error("{0}")]
    Format(String),
}

/// A compiled log format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogFormat {
    pub(crate) name: String,
    pub(crate) tokens: Vec<Tok>,
    /// How each token is parsed ([`steps`] of `tokens`).
    pub(crate) steps: Vec<Step>,
    /// The format has a time field (a line without one is malformed).
    pub(crate) needs_time: bool,
    pub(crate) json: bool,
    /// The format is one of the common log format's family, which a
    /// hand-written reader takes ([`Clf::of`]).
    pub(crate) clf: Option<Clf>,
}

/// A layout of the common log format's family: Apache's `common`,
/// `combined` and `vhost_combined` and nginx's `combined`, i.e.
/// `[%v ]%h %l %u %t "%r" %>s %b[ "%{Referer}i" "%{User-Agent}i"]` (or
/// nginx's `$remote_addr - $remote_user [$time_local] …`). Nearly every
/// log is one of these: [`LogFormat::parse_line_into`] reads their plain
/// lines without going through the steps, and leaves every other line to
/// the steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Clf {
    /// A virtual host and a space first.
    pub(crate) vhost: bool,
    /// The Referer and User-Agent, quoted, last.
    pub(crate) agent: bool,
}

/// A token a [`Clf`] layout has at its place.
enum Want {
    F(Field),
    L(&'static str),
}

impl Clf {
    /// Apache's `%h %l %u %t "` and nginx's `$remote_addr - $remote_user
    /// [$time_local] "`.
    const HEADS: [&[Want]; 2] = {
        use Field::*;
        use Want::*;
        [
            &[
                F(RemoteAddr),
                L(" "),
                F(Ident),
                L(" "),
                F(User),
                L(" "),
                F(TimeClf),
                L(" \""),
            ],
            &[
                F(RemoteAddr),
                L(" - "),
                F(User),
                L(" ["),
                F(TimeClf),
                L("] \""),
            ],
        ]
    };
    /// `%r" %>s %b`.
    const REQUEST: &[Want] = &[
        Want::F(Field::Request),
        Want::L("\" "),
        Want::F(Field::Status),
        Want::L(" "),
        Want::F(Field::Bytes),
    ];
    /// ` "%{Referer}i" "%{User-Agent}i"`.
    const AGENT: &[Want] = &[
        Want::L(" \""),
        Want::F(Field::Referer),
        Want::L("\" \""),
        Want::F(Field::UserAgent),
        Want::L("\""),
    ];

    /// The layout `tokens` are, if they are one.
    fn of(tokens: &[Tok]) -> Option<Clf> {
        // `tokens` without `want` first, if they start with it.
        let after = |tokens: &'_ [Tok], want: &[Want]| -> Option<usize> {
            let same = |(t, w): (&Tok, &Want)| match (t, w) {
                (Tok::Field(f), Want::F(g)) => f == g,
                (Tok::Lit(l), Want::L(m)) => l == m.as_bytes(),
                _ => false,
            };
            (tokens.len() >= want.len() && tokens.iter().zip(want).all(same)).then_some(want.len())
        };
        let vhost = after(tokens, &[Want::F(Field::VHost), Want::L(" ")]);
        let rest = &tokens[vhost.unwrap_or(0)..];
        let head = Clf::HEADS.iter().find_map(|h| after(rest, h))?;
        let rest = &rest[head..];
        let rest = &rest[after(rest, Clf::REQUEST)?..];
        // Nothing after the size, or the Referer and User-Agent and
        // nothing after them.
        let agent = !rest.is_empty();
        if agent && after(rest, Clf::AGENT)? != rest.len() {
            return None;
        }
        Some(Clf {
            vhost: vhost.is_some(),
            agent,
        })
    }
}

/// Apache's combined format.
pub const COMBINED: &str = r#"%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i""#;
/// Apache's common format.
pub const COMMON: &str = r#"%h %l %u %t "%r" %>s %b"#;
/// Debian's vhost_combined format.
pub const VHOST_COMBINED: &str = r#"%v:%p %h %l %u %t "%r" %>s %O "%{Referer}i" "%{User-Agent}i""#;

fn apache_field(directive: &str, arg: Option<&str>) -> Result<Field, Error> {
    let f = match (directive, arg.map(str::to_ascii_lowercase).as_deref()) {
        ("h" | "a", _) => Field::RemoteAddr,
        ("l", _) => Field::Ident,
        ("u", _) => Field::User,
        ("t", None) => Field::TimeClf,
        ("t", Some(_)) => Field::Ignored,
        ("r", _) => Field::Request,
        ("m", _) => Field::Method,
        ("U", _) => Field::Path,
        ("H", _) => Field::Protocol,
        ("s" | ">s" | "<s", _) => Field::Status,
        ("b" | "B" | "O" | "I" | "S", _) => Field::Bytes,
        ("i", Some("referer")) => Field::Referer,
        ("i", Some("user-agent")) => Field::UserAgent,
        ("i", Some("signature-input")) => Field::SignatureInput,
        ("i", Some("signature")) => Field::Signature,
        ("i", Some("signature-agent")) => Field::SignatureAgent,
        ("v" | "V", _) => Field::VHost,
        ("D", _) => Field::DurationMicros,
        ("T", None) => Field::DurationSeconds,
        ("i" | "o" | "e" | "n" | "C" | "x" | "^ti" | "^to", _) => Field::Ignored,
        ("A" | "f" | "k" | "L" | "P" | "p" | "q" | "R" | "X" | "T", _) => Field::Ignored,
        (d, _) => return Err(Error::Format(format!("unknown LogFormat directive `%{d}`"))),
    };
    Ok(f)
}

fn nginx_field(var: &str) -> Field {
    match var {
        "remote_addr" | "binary_remote_addr" | "realip_remote_addr" | "http_x_real_ip" => {
            Field::RemoteAddr
        }
        "remote_user" => Field::User,
        "time_local" => Field::TimeClf,
        "time_iso8601" => Field::TimeIso,
        "request" => Field::Request,
        "request_method" => Field::Method,
        "request_uri" | "uri" => Field::Path,
        "server_protocol" => Field::Protocol,
        "status" => Field::Status,
        "body_bytes_sent" | "bytes_sent" => Field::Bytes,
        "http_referer" => Field::Referer,
        "http_user_agent" => Field::UserAgent,
        "host" | "server_name" | "http_host" => Field::VHost,
        "request_time" => Field::DurationSeconds,
        "scheme" => Field::Scheme,
        "http_signature_input" => Field::SignatureInput,
        "http_signature" => Field::Signature,
        "http_signature_agent" => Field::SignatureAgent,
        _ => Field::Ignored,
    }
}

fn push_lit(tokens: &mut Vec<Tok>, b: &[u8]) {
    if b.is_empty() {
        return;
    }
    if let Some(Tok::Lit(l)) = tokens.last_mut() {
        l.extend_from_slice(b);
    } else {
        tokens.push(Tok::Lit(b.to_vec()));
    }
}

fn check(name: &str, tokens: Vec<Tok>) -> Result<LogFormat, Error> {
    // Two fields in a row cannot be told apart.
    for w in tokens.windows(2) {
        if let [Tok::Field(a), Tok::Field(b)] = w {
            return Err(Error::Format(format!(
                "fields {a:?} and {b:?} follow each other with nothing between them"
            )));
        }
    }
    if !tokens
        .iter()
        .any(|t| matches!(t, Tok::Field(Field::RemoteAddr)))
    {
        return Err(Error::Format(
            "the format has no client address (%h, %a or $remote_addr)".into(),
        ));
    }
    Ok(LogFormat {
        name: name.to_owned(),
        steps: steps(&tokens),
        clf: Clf::of(&tokens),
        needs_time: tokens
            .iter()
            .any(|t| matches!(t, Tok::Field(Field::TimeClf | Field::TimeIso))),
        tokens,
        json: false,
    })
}

impl LogFormat {
    /// The format's name (a preset name, or the string it came from).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The bytes of a line's client address, found without parsing the
    /// line, when the format puts the address after nothing but fields
    /// without spaces of their own and literals (`combined`, `common`,
    /// `vhost_combined`): to share a log's clients out between threads.
    /// Any bytes a line gives will do (a line whose address is written two
    /// ways only costs a merge); `None` for other formats (JSON) and for a
    /// line without that many spaces.
    ///
    /// ```
    /// use botscope_accesslog::LogFormat;
    /// let f = LogFormat::preset("vhost_combined").unwrap();
    /// let line = br#"example.org:443 203.0.113.9 - - [17/May/2015:10:05:03 +0000] "GET / HTTP/1.1" 200 5 "-" "curl/8""#;
    /// assert_eq!(f.client_key(line), Some(&b"203.0.113.9"[..]));
    /// assert_eq!(LogFormat::json().client_key(b"{}"), None);
    /// // A time (spaces of its own) before the address: no key.
    /// let t = LogFormat::apache("%t %h").unwrap();
    /// assert_eq!(t.client_key(b"[17/May/2015:10:05:03 +0000] 203.0.113.9"), None);
    /// ```
    pub fn client_key<'a>(&self, line: &'a [u8]) -> Option<&'a [u8]> {
        let mut rest = line;
        for _ in 0..self.spaces_before_address()? {
            rest = &rest[memchr::memchr(b' ', rest)? + 1..];
        }
        // An address is short: a byte loop beats memchr's start.
        let end = rest.iter().position(|&c| c == b' ').unwrap_or(rest.len());
        Some(&rest[..end])
    }

    /// Whether [`LogFormat::client_key`] finds addresses in this format's
    /// lines.
    pub fn has_client_key(&self) -> bool {
        self.spaces_before_address().is_some()
    }

    /// Spaces before the client address on every line of this format, when
    /// only literals and fields without spaces come before it.
    fn spaces_before_address(&self) -> Option<usize> {
        if self.json {
            return None;
        }
        let mut spaces = 0;
        for t in &self.tokens {
            match t {
                Tok::Field(Field::RemoteAddr) => return Some(spaces),
                Tok::Field(
                    Field::VHost | Field::Ident | Field::User | Field::Scheme | Field::Status,
                ) => {}
                Tok::Field(_) => return None,
                Tok::Lit(l) => spaces += l.iter().filter(|&&c| c == b' ').count(),
            }
        }
        None
    }

    /// Compiles an Apache `LogFormat` string.
    ///
    /// ```
    /// use botscope_accesslog::LogFormat;
    /// assert!(LogFormat::apache(r#"%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i""#).is_ok());
    /// assert!(LogFormat::apache("%h %Z").is_err());
    /// ```
    pub fn apache(spec: &str) -> Result<LogFormat, Error> {
        let mut tokens = Vec::new();
        let b = spec.as_bytes();
        let mut i = 0;
        while i < b.len() {
            if b[i] != b'%' {
                let start = i;
                while i < b.len() && b[i] != b'%' {
                    i += 1;
                }
                // `\"` in a LogFormat given on a command line means `"`.
                let lit = spec[start..i].replace("\\\"", "\"").replace("\\t", "\t");
                push_lit(&mut tokens, lit.as_bytes());
                continue;
            }
            i += 1;
            if b.get(i) == Some(&b'%') {
                push_lit(&mut tokens, b"%");
                i += 1;
                continue;
            }
            // Conditions (`%400,501{User-agent}i`) and modifiers (`%>s`, `%<s`).
            while i < b.len() && (b[i].is_ascii_digit() || b[i] == b',' || b[i] == b'!') {
                i += 1;
            }
            let mut arg = None;
            if b.get(i) == Some(&b'{') {
                let end = spec[i..]
                    .find('}')
                    .map(|e| i + e)
                    .ok_or_else(|| Error::Format(format!("unclosed `{{` in `{spec}`")))?;
                arg = Some(&spec[i + 1..end]);
                i = end + 1;
            }
            let mut d_end = i;
            while d_end < b.len() && (b[d_end] == b'>' || b[d_end] == b'<' || b[d_end] == b'^') {
                d_end += 1;
            }
            if d_end < b.len() {
                d_end += if b[d_end] == b't' && b[i..d_end].contains(&b'^') {
                    2
                } else {
                    1
                };
            }
            let mut d_end = d_end.min(b.len());
            // A directive letter may be any character: never cut one.
            while !spec.is_char_boundary(d_end) {
                d_end += 1;
            }
            if i >= d_end {
                return Err(Error::Format(format!("`%` at the end of `{spec}`")));
            }
            let directive = &spec[i..d_end];
            tokens.push(Tok::Field(apache_field(directive, arg)?));
            i = d_end;
        }
        // `%v:%p` is the virtual host and port, read as one field.
        let mut merged = Vec::new();
        let mut k = 0;
        while k < tokens.len() {
            if let (
                Some(Tok::Field(Field::VHost)),
                Some(Tok::Lit(l)),
                Some(Tok::Field(Field::Ignored)),
            ) = (tokens.get(k), tokens.get(k + 1), tokens.get(k + 2))
                && l == b":"
            {
                merged.push(Tok::Field(Field::VHost));
                k += 3;
                continue;
            }
            merged.push(tokens[k].clone());
            k += 1;
        }
        check(spec, merged)
    }

    /// Compiles an nginx `log_format` string (`$var` and `${var}`).
    ///
    /// ```
    /// use botscope_accesslog::LogFormat;
    /// let f = LogFormat::nginx(r#"$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent""#);
    /// assert!(f.is_ok());
    /// ```
    pub fn nginx(spec: &str) -> Result<LogFormat, Error> {
        let mut tokens = Vec::new();
        let b = spec.as_bytes();
        let mut i = 0;
        while i < b.len() {
            if b[i] != b'$' {
                let start = i;
                while i < b.len() && b[i] != b'$' {
                    i += 1;
                }
                push_lit(&mut tokens, &b[start..i]);
                continue;
            }
            i += 1;
            let (name, next) = if b.get(i) == Some(&b'{') {
                let end = spec[i..]
                    .find('}')
                    .map(|e| i + e)
                    .ok_or_else(|| Error::Format(format!("unclosed `${{` in `{spec}`")))?;
                (&spec[i + 1..end], end + 1)
            } else {
                let end = b[i..]
                    .iter()
                    .position(|c| !(c.is_ascii_alphanumeric() || *c == b'_'))
                    .map_or(b.len(), |e| i + e);
                (&spec[i..end], end)
            };
            if name.is_empty() {
                return Err(Error::Format(format!(
                    "`$` without a variable name in `{spec}`"
                )));
            }
            tokens.push(Tok::Field(nginx_field(name)));
            i = next;
        }
        check(spec, tokens)
    }

    /// JSON lines, one object per line, with the usual key names.
    pub fn json() -> LogFormat {
        LogFormat {
            name: "json".into(),
            tokens: Vec::new(),
            steps: Vec::new(),
            needs_time: false,
            json: true,
            clf: None,
        }
    }

    /// The same format read by its steps alone, without the hand-written
    /// reader of the common log format's family: what that reader is
    /// checked against (tests and fuzzing).
    #[doc(hidden)]
    pub fn by_steps(mut self) -> LogFormat {
        self.clf = None;
        self
    }

    /// A preset by name: `combined`, `common`, `vhost_combined`, `json`.
    pub fn preset(name: &str) -> Option<LogFormat> {
        let (spec, label) = match name {
            "combined" => (COMBINED, "combined"),
            "common" => (COMMON, "common"),
            "vhost_combined" => (VHOST_COMBINED, "vhost_combined"),
            "json" => return Some(LogFormat::json()),
            _ => return None,
        };
        LogFormat::apache(spec).ok().map(|mut f| {
            f.name = label.into();
            f
        })
    }

    /// Reads a user's `--log-format`: a preset name, an nginx string (it has
    /// `$`), or an Apache string.
    pub fn from_spec(spec: &str) -> Result<LogFormat, Error> {
        if let Some(p) = LogFormat::preset(spec.trim()) {
            return Ok(p);
        }
        if spec.contains('$') && !spec.contains('%') {
            LogFormat::nginx(spec)
        } else {
            LogFormat::apache(spec)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_compile() {
        for p in ["combined", "common", "vhost_combined", "json"] {
            assert!(LogFormat::preset(p).is_some(), "{p}");
        }
        let v = LogFormat::preset("vhost_combined").expect("vhost");
        assert_eq!(v.tokens[0], Tok::Field(Field::VHost));
    }

    #[test]
    fn directives() {
        let f =
            LogFormat::apache(r#"%a %{X-Forwarded-For}i [%t] "%m %U%q %H" %>s %B %D %T %{ms}T"#);
        assert!(f.is_err(), "%U%q: two fields with nothing between");
        let f = LogFormat::apache(r#"%a [%t] "%r" %>s %B %D %{ms}T %400,501{User-agent}i"#)
            .expect("ok");
        assert!(f.tokens.contains(&Tok::Field(Field::DurationMicros)));
        assert!(f.tokens.contains(&Tok::Field(Field::UserAgent)));
        assert!(LogFormat::apache("%h %Z").is_err());
        assert!(LogFormat::apache("%h %{Referer").is_err());
        // Regression (log_line fuzz target): a non-ASCII directive.
        assert!(LogFormat::apache("%h %é x").is_err());
        assert!(LogFormat::apache("%h %{x}ü").is_err());
        assert!(LogFormat::apache("%u %t").is_err(), "no client address");
        assert!(LogFormat::nginx("$remote_addr ${").is_err());
        assert!(LogFormat::from_spec("$remote_addr [$time_local] \"$request\" $status").is_ok());
    }
}
