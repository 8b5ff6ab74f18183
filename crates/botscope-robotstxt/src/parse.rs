//! The parse tree: groups, rules, extensions and diagnostics.

use serde::Serialize;

use crate::diagnostic::{Code, Diagnostic};
use crate::lexer::{KeyKind, KeyValue};
use crate::scan::{self, Event, Grouper, ParseOptions};
use crate::url::escape_pattern;

/// Allow or Disallow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RuleKind {
    /// `Allow`.
    Allow,
    /// `Disallow`.
    Disallow,
}

impl RuleKind {
    /// `Allow` or `Disallow`.
    pub fn as_str(self) -> &'static str {
        match self {
            RuleKind::Allow => "Allow",
            RuleKind::Disallow => "Disallow",
        }
    }
}

/// A value with the line it came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Located<T> {
    /// 1-based line number.
    pub line: u32,
    /// The value.
    pub value: T,
}

/// One `User-agent` line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UserAgent {
    /// 1-based line number.
    pub line: u32,
    /// The value as written (invalid UTF-8 replaced).
    pub value: String,
    /// The product token crawlers compare: the leading `[A-Za-z_-]` run
    /// (`bingbot` for `bingbot/2.0`), or `*`.
    pub token: String,
    /// True for `*`.
    pub global: bool,
}

/// One `Allow` or `Disallow` line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rule {
    /// 1-based line number.
    pub line: u32,
    /// Allow or Disallow.
    pub kind: RuleKind,
    /// The pattern as written (invalid UTF-8 replaced).
    pub pattern: String,
    /// The pattern as matched: `%xx` upper-cased, non-ASCII bytes
    /// percent-encoded.
    pub normalized: String,
}

/// `Request-rate: n/t`: at most `requests` requests every `seconds` seconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RequestRate {
    /// Requests allowed per period.
    pub requests: u32,
    /// Length of the period in seconds.
    pub seconds: f64,
}

/// One `name=value` of a `Content-Signal` line (`ai-train=no`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Signal {
    /// The signal, lower-cased (`search`, `ai-input`, `ai-train`).
    pub name: String,
    /// Its value, lower-cased (`yes`, `no`).
    pub value: String,
}

/// Reads a `Content-Signal` value: comma-separated `name=value` pairs.
/// `None` when a non-empty part has no `=`, or an empty name or value.
pub fn parse_content_signal(value: &str) -> Option<Vec<Signal>> {
    let mut out = Vec::new();
    for part in value.split(',') {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        let (name, v) = part.split_once('=')?;
        let (name, v) = (name.trim(), v.trim());
        if name.is_empty() || v.is_empty() {
            return None;
        }
        out.push(Signal {
            name: name.to_ascii_lowercase(),
            value: v.to_ascii_lowercase(),
        });
    }
    (!out.is_empty()).then_some(out)
}

/// A group: user agents and the rules and extensions that apply to them.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Group {
    /// The `User-agent` lines that open the group.
    pub user_agents: Vec<UserAgent>,
    /// Allow and Disallow lines, in file order.
    pub rules: Vec<Rule>,
    /// `Crawl-delay` in seconds.
    pub crawl_delay: Option<Located<f64>>,
    /// `Request-rate`.
    pub request_rate: Option<Located<RequestRate>>,
    /// `Visit-time`, as written (`0600-0845`).
    pub visit_time: Option<Located<String>>,
    /// `Content-Signal` lines, read.
    pub content_signals: Vec<Located<Vec<Signal>>>,
    /// `Content-Usage` rules, read (IETF aipref).
    pub content_usage: Vec<Located<crate::usage::UsageRule>>,
}

impl Group {
    /// True when the group applies to every crawler (`User-agent: *`).
    pub fn is_global(&self) -> bool {
        self.user_agents.iter().any(|u| u.global)
    }

    /// True when the group names `token` (case-insensitively).
    pub fn names(&self, token: &str) -> bool {
        self.user_agents
            .iter()
            .any(|u| !u.global && u.token.eq_ignore_ascii_case(token))
    }
}

/// A `License` line (RSL 1.0, "Adding RSL to robots.txt"): the URL of an
/// RSL licence for the whole site, whatever group it stands in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LicenseLine {
    /// 1-based line number.
    pub line: u32,
    /// The URL as written (RSL asks for a full URL).
    pub url: String,
    /// True when it stands inside a group (it is still global).
    pub in_group: bool,
}

/// A line with a key no crawler reads, or one kept only for reporting.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OtherLine {
    /// 1-based line number.
    pub line: u32,
    /// The key as written.
    pub key: String,
    /// The value as written.
    pub value: String,
}

/// A parsed robots.txt file.
///
/// Parsing never fails: every input gives a value, and whatever could not
/// be understood is described in [`Robots::diagnostics`].
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Robots {
    /// Groups, grouped the way RFC 9309 and Google group them.
    pub groups: Vec<Group>,
    /// Allow and Disallow lines before any User-agent line (ignored by crawlers).
    pub orphan_rules: Vec<Rule>,
    /// `Sitemap` URLs (allowed anywhere in the file).
    pub sitemaps: Vec<Located<String>>,
    /// `License` lines: the site's RSL licences (global, wherever they
    /// stand).
    pub licenses: Vec<LicenseLine>,
    /// `Host` values.
    pub hosts: Vec<Located<String>>,
    /// `Clean-param` values.
    pub clean_params: Vec<Located<String>>,
    /// `Content-Signal` lines before any User-agent line (for every
    /// crawler), read.
    pub content_signals: Vec<Located<Vec<Signal>>>,
    /// Lines with unknown keys, `Noindex`, and extensions outside a group.
    pub other: Vec<OtherLine>,
    /// What the parser noticed, in line order.
    pub diagnostics: Vec<Diagnostic>,
    /// Size of the input in bytes.
    pub total_bytes: usize,
    /// Bytes parsed; less than `total_bytes` when the parse cap cut the file.
    pub parsed_bytes: usize,
    /// Number of lines parsed.
    pub lines: u32,
    /// True when the file starts with a UTF-8 byte order mark.
    pub bom: bool,
    /// The parse cap, when it cut the file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size_cap: Option<usize>,
}

/// 1-based character column of byte offset `at` in `line`.
pub(crate) fn column(line: &[u8], at: usize) -> u32 {
    let prefix = &line[..at.min(line.len())];
    let chars = prefix.iter().filter(|&&b| (b & 0xC0) != 0x80).count();
    u32::try_from(chars).unwrap_or(u32::MAX).saturating_add(1)
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

const KNOWN_KEYS: &[&str] = &[
    "user-agent",
    "allow",
    "disallow",
    "sitemap",
    "crawl-delay",
    "request-rate",
    "visit-time",
    "host",
    "clean-param",
    "license",
    "content-usage",
    "content-signal",
];

/// Optimal string alignment distance, ignoring ASCII case, for "did you
/// mean".
pub(crate) fn edit_distance(a: &[u8], b: &[u8]) -> usize {
    let lower = |x: &[u8]| String::from_utf8_lossy(x).to_ascii_lowercase();
    strsim::osa_distance(&lower(a), &lower(b))
}

/// The known key closest to `key`, if it is close enough to be a typo.
pub(crate) fn did_you_mean(key: &[u8]) -> Option<&'static str> {
    if key.len() > 40 {
        return None;
    }
    KNOWN_KEYS
        .iter()
        .map(|k| (edit_distance(key, k.as_bytes()), *k))
        .filter(|(d, k)| *d <= 2.max(k.len() / 4))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// Reads a decimal number of seconds (`10`, `0.5`).
pub(crate) fn parse_seconds(v: &str) -> Option<f64> {
    let v = v.trim();
    if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return None;
    }
    v.parse::<f64>().ok().filter(|x| x.is_finite())
}

/// Reads `n/t[s|m|h]` with an optional time range after it.
pub(crate) fn parse_request_rate(v: &str) -> Option<RequestRate> {
    let rate = v.split_whitespace().next()?;
    let (n, t) = rate.split_once('/')?;
    let requests: u32 = n.trim().parse().ok()?;
    let t = t.trim();
    let (num, unit) = match t.as_bytes().last()? {
        b's' | b'S' => (&t[..t.len() - 1], 1.0),
        b'm' | b'M' => (&t[..t.len() - 1], 60.0),
        b'h' | b'H' => (&t[..t.len() - 1], 3600.0),
        _ => (t, 1.0),
    };
    let seconds = parse_seconds(num)? * unit;
    (requests > 0 && seconds > 0.0).then_some(RequestRate { requests, seconds })
}

/// Reads `HHMM-HHMM`.
pub(crate) fn valid_visit_time(v: &str) -> bool {
    let ok = |s: &str| {
        s.len() == 4
            && s.bytes().all(|b| b.is_ascii_digit())
            && s[..2].parse::<u32>().is_ok_and(|h| h < 24)
            && s[2..].parse::<u32>().is_ok_and(|m| m < 60)
    };
    v.trim()
        .split_once('-')
        .is_some_and(|(a, b)| ok(a.trim()) && ok(b.trim()))
}

struct Builder<'a> {
    robots: Robots,
    grouper: Grouper,
    input: &'a [u8],
}

impl Builder<'_> {
    fn diag(
        &mut self,
        code: Code,
        line: u32,
        bytes: &[u8],
        at: usize,
        msg: impl Into<String>,
    ) -> &mut Diagnostic {
        self.robots
            .diagnostics
            .push(Diagnostic::new(code, line, column(bytes, at), msg));
        let n = self.robots.diagnostics.len() - 1;
        &mut self.robots.diagnostics[n]
    }

    fn event(&mut self, ev: Event<'_>) {
        match ev {
            Event::Blank { .. } => {}
            Event::Junk { line, bytes, flags } => {
                self.flags(line, bytes, flags);
                let text = String::from_utf8_lossy(bytes);
                let shown: String = text.trim().chars().take(60).collect();
                let d = self.diag(
                    Code::MalformedLine,
                    line,
                    bytes,
                    0,
                    format!("line is not `key: value`: {shown:?}"),
                );
                d.suggestion = Some(
                    "write `Key: value`, or start the line with `#` to make it a comment".into(),
                );
            }
            Event::Pair {
                line,
                bytes,
                kind,
                typo,
                kv,
            } => {
                self.flags(line, bytes, kv.flags);
                if typo {
                    let canon = if kind == KeyKind::Unknown {
                        ""
                    } else {
                        kind.canonical()
                    };
                    let key = lossy(kv.key);
                    let value = lossy(kv.value);
                    // `Disallow https://host/path`: no colon after the key,
                    // and a URL where a path belongs.
                    let url_rest = key
                        .split_once(char::is_whitespace)
                        .map(|(_, scheme)| scheme.trim().to_ascii_lowercase())
                        .filter(|sch| (sch == "http" || sch == "https") && value.starts_with("//"));
                    let (message, help) = match url_rest {
                        Some(_) => {
                            let path = value[2..].find('/').map_or("/", |i| &value[2 + i..]);
                            (
                                format!(
                                    "`{key}:{value}` has no colon after `{canon}` and a full URL for a value: \
                                     Google reads `{canon}: {value}`, which matches no path of the site"
                                ),
                                format!("write `{canon}: {path}`"),
                            )
                        }
                        None => (
                            format!(
                                "`{key}` is read as `{canon}` by Google; other crawlers may ignore it"
                            ),
                            format!("write `{canon}`"),
                        ),
                    };
                    self.diag(Code::KeyTypo, line, bytes, kv.key_start, message)
                        .suggestion = Some(help);
                }
                self.pair(line, bytes, kind, &kv);
            }
        }
    }

    fn flags(&mut self, line: u32, bytes: &[u8], flags: crate::lexer::LineFlags) {
        if flags.nul {
            let at = memchr::memchr(0, bytes).unwrap_or(0);
            self.diag(
                Code::NulByte,
                line,
                bytes,
                at,
                "NUL byte: crawlers ignore the rest of the line",
            );
        }
        if flags.too_long {
            self.diag(
                Code::LineTooLong,
                line,
                bytes,
                crate::lexer::MAX_LINE_LEN,
                format!(
                    "line is {} bytes; crawlers read only the first {}",
                    bytes.len(),
                    crate::lexer::MAX_LINE_LEN
                ),
            );
        }
        if flags.no_colon {
            let at = bytes
                .iter()
                .position(|b| *b == b' ' || *b == b'\t')
                .unwrap_or(0);
            self.diag(
                Code::MissingColon,
                line,
                bytes,
                at,
                "no colon between key and value; Google accepts it, others may not",
            )
            .suggestion = Some("put a `:` after the key".into());
        }
    }

    fn current(&mut self) -> Option<&mut Group> {
        if self.grouper.in_group() {
            self.robots.groups.last_mut()
        } else {
            None
        }
    }

    fn pair(&mut self, line: u32, bytes: &[u8], kind: KeyKind, kv: &KeyValue<'_>) {
        let value = lossy(kv.value);
        match kind {
            KeyKind::UserAgent => {
                let (global, token) = scan::user_agent_token(kv.value);
                let ua = UserAgent {
                    line,
                    value,
                    token: lossy(token),
                    global,
                };
                if self.grouper.user_agent() {
                    self.robots.groups.push(Group::default());
                }
                if let Some(g) = self.robots.groups.last_mut() {
                    g.user_agents.push(ua);
                }
            }
            KeyKind::Allow | KeyKind::Disallow => {
                let rule = Rule {
                    line,
                    kind: if kind == KeyKind::Allow {
                        RuleKind::Allow
                    } else {
                        RuleKind::Disallow
                    },
                    pattern: value,
                    normalized: lossy(&escape_pattern(kv.value)),
                };
                if self.grouper.rule() {
                    if let Some(g) = self.robots.groups.last_mut() {
                        g.rules.push(rule);
                    }
                } else {
                    let msg = format!(
                        "{} before any User-agent line: crawlers ignore it",
                        rule.kind.as_str()
                    );
                    self.diag(Code::RuleOutsideGroup, line, bytes, kv.key_start, msg)
                        .suggestion = Some("add a `User-agent: *` line above it".into());
                    self.robots.orphan_rules.push(rule);
                }
            }
            KeyKind::Sitemap => self.robots.sitemaps.push(Located { line, value }),
            KeyKind::License => {
                let in_group = self.current().is_some();
                self.robots.licenses.push(LicenseLine {
                    line,
                    url: value,
                    in_group,
                });
            }
            KeyKind::Host => self.robots.hosts.push(Located { line, value }),
            KeyKind::CleanParam => self.robots.clean_params.push(Located { line, value }),
            KeyKind::ContentSignal => match parse_content_signal(&value) {
                Some(signals) => {
                    for sig in &signals {
                        let known =
                            crate::usage::SIGNALS.contains(&sig.name.as_str()) || sig.name == "use";
                        if !crate::usage::signal_known(&sig.name, &sig.value) {
                            let what = if sig.name == "use" {
                                format!(
                                    "Content-Signal `use={}`: the level is none of immediate, reference, full",
                                    sig.value
                                )
                            } else if known {
                                format!(
                                    "Content-Signal `{}={}`: the value is neither yes nor no",
                                    sig.name, sig.value
                                )
                            } else {
                                format!(
                                    "Content-Signal `{}` is not a signal of the policy (search, ai-input, ai-train, use)",
                                    sig.name
                                )
                            };
                            self.diag(Code::SignalUnknown, line, bytes, kv.value_start, what);
                        }
                    }
                    let l = Located {
                        line,
                        value: signals,
                    };
                    match self.current() {
                        Some(g) => g.content_signals.push(l),
                        None => self.robots.content_signals.push(l),
                    }
                }
                None => {
                    self.diag(
                        Code::InvalidValue,
                        line,
                        bytes,
                        kv.value_start,
                        format!("Content-Signal value `{value}` cannot be read"),
                    )
                    .suggestion =
                        Some("write `name=yes|no` pairs such as `search=yes, ai-train=no`".into());
                    self.robots.other.push(OtherLine {
                        line,
                        key: lossy(kv.key),
                        value,
                    });
                }
            },
            KeyKind::ContentUsage => self.content_usage(line, bytes, kv, value),
            KeyKind::CrawlDelay | KeyKind::RequestRate | KeyKind::VisitTime => {
                self.extension(line, bytes, kind, kv, value);
            }
            KeyKind::Noindex => {
                self.diag(Code::NoindexUnsupported, line, bytes, kv.key_start, "`Noindex` in robots.txt is not supported by Google (since 2019) nor by RFC 9309")
                    .suggestion = Some("use `<meta name=\"robots\" content=\"noindex\">` or an `X-Robots-Tag: noindex` header".into());
                self.robots.other.push(OtherLine {
                    line,
                    key: lossy(kv.key),
                    value,
                });
            }
            KeyKind::Unknown => {
                let key = lossy(kv.key);
                let d = self.diag(
                    Code::UnknownKey,
                    line,
                    bytes,
                    kv.key_start,
                    format!("unknown key `{key}`: crawlers ignore this line"),
                );
                if let Some(k) = did_you_mean(kv.key) {
                    d.suggestion = Some(format!("did you mean `{k}`?"));
                }
                self.robots.other.push(OtherLine { line, key, value });
            }
        }
    }

    /// A `Content-Usage` rule (draft-ietf-aipref-attach): kept in its
    /// group with the problems of its entries as diagnostics.
    fn content_usage(&mut self, line: u32, bytes: &[u8], kv: &KeyValue<'_>, value: String) {
        let at = kv.value_start;
        let (rule, problems) = crate::usage::parse_usage_rule(&value);
        if let Some(why) = &rule.unreadable {
            self.diag(
                Code::UsageMalformed,
                line,
                bytes,
                at,
                format!(
                    "Content-Usage `{value}` cannot be read: {why}; every preference for its path is unknown"
                ),
            )
            .suggestion = Some(
                "write a path and `category=y|n` pairs, such as `/ train-ai=n, search=y`".into(),
            );
        }
        for p in problems {
            self.diag(
                Code::UsageUnknown,
                line,
                bytes,
                at,
                format!("Content-Usage {p}"),
            );
        }
        if !rule.has_path && rule.unreadable.is_none() {
            self.diag(
                Code::UsageNoPath,
                line,
                bytes,
                at,
                "Content-Usage without a path: read as `/`; the attach draft requires one",
            )
            .suggestion = Some(format!("write `Content-Usage: / {}`", rule.preference));
        }
        // A rule that cannot be read still holds its path: a shorter rule
        // must not speak for what it covers.
        let unreadable = rule.unreadable.is_some();
        match self.current() {
            Some(g) => g.content_usage.push(Located { line, value: rule }),
            None => {
                if !unreadable {
                    self.diag(
                        Code::UsageOutsideGroup,
                        line,
                        bytes,
                        kv.key_start,
                        "Content-Usage before any User-agent line: it applies to no crawler",
                    )
                    .suggestion = Some("put it in a group, such as `User-agent: *`".into());
                }
                self.robots.other.push(OtherLine {
                    line,
                    key: lossy(kv.key),
                    value,
                });
            }
        }
    }

    fn extension(
        &mut self,
        line: u32,
        bytes: &[u8],
        kind: KeyKind,
        kv: &KeyValue<'_>,
        value: String,
    ) {
        let at = kv.value_start;
        let name = kind.canonical();
        let mut invalid = false;
        let mut duplicate = false;
        let in_group = self.grouper.in_group();
        if let Some(g) = self.current() {
            match kind {
                KeyKind::CrawlDelay => match parse_seconds(&value) {
                    Some(v) if g.crawl_delay.is_none() => {
                        g.crawl_delay = Some(Located { line, value: v })
                    }
                    Some(_) => duplicate = true,
                    None => invalid = true,
                },
                KeyKind::RequestRate => match parse_request_rate(&value) {
                    Some(v) if g.request_rate.is_none() => {
                        g.request_rate = Some(Located { line, value: v })
                    }
                    Some(_) => duplicate = true,
                    None => invalid = true,
                },
                _ => {
                    if !valid_visit_time(&value) {
                        invalid = true;
                    } else if g.visit_time.is_none() {
                        g.visit_time = Some(Located {
                            line,
                            value: value.clone(),
                        });
                    } else {
                        duplicate = true;
                    }
                }
            }
        }
        if invalid {
            let want = match kind {
                KeyKind::CrawlDelay => "a number of seconds such as `10` or `0.5`",
                KeyKind::RequestRate => "`requests/seconds` such as `1/5` or `1/10m`",
                _ => "a UTC time range such as `0600-0845`",
            };
            self.diag(
                Code::InvalidValue,
                line,
                bytes,
                at,
                format!("{name} value `{value}` cannot be read"),
            )
            .suggestion = Some(format!("write {want}"));
        }
        if duplicate {
            self.diag(
                Code::DuplicateExtension,
                line,
                bytes,
                kv.key_start,
                format!("second {name} in the same group; the first one counts"),
            );
        }
        if !in_group {
            self.diag(
                Code::ExtensionOutsideGroup,
                line,
                bytes,
                kv.key_start,
                format!("{name} before any User-agent line applies to no crawler"),
            )
            .suggestion = Some("move it into the group it is meant for".into());
            self.robots.other.push(OtherLine {
                line,
                key: lossy(kv.key),
                value,
            });
        }
    }

    fn finish(mut self, info: scan::ScanInfo) -> Robots {
        let r = &mut self.robots;
        r.total_bytes = info.total_bytes;
        r.parsed_bytes = info.parsed_bytes;
        r.lines = info.lines;
        r.bom = info.bom == 3;
        r.size_cap = info.cap;
        if info.bom > 0 {
            let msg = if info.bom == 3 {
                "file starts with a UTF-8 byte order mark; Google skips it, some crawlers read it as part of the first key"
            } else {
                "file starts with part of a UTF-8 byte order mark; Google skips it"
            };
            r.diagnostics.push(
                Diagnostic::new(Code::Bom, 1, 1, msg).suggest("save the file as UTF-8 without BOM"),
            );
        }
        if let Err(e) = std::str::from_utf8(self.input) {
            let at = e.valid_up_to();
            let before = &self.input[..at];
            let line =
                1 + u32::try_from(crate::lexer::count_line_ends(before)).unwrap_or(u32::MAX - 1);
            let start = memchr::memrchr2(b'\n', b'\r', before).map_or(0, |i| i + 1);
            let col = column(&self.input[start..], at - start);
            r.diagnostics.push(
                Diagnostic::new(Code::InvalidUtf8, line, col, "file is not valid UTF-8; patterns with these bytes are matched percent-encoded")
                    .suggest("save the file as UTF-8"),
            );
        }
        if looks_like_html(self.input) {
            r.diagnostics.push(
                Diagnostic::new(Code::HtmlContent, 1, 1, "file looks like HTML, not robots.txt: the server may be answering /robots.txt with a web page")
                    .suggest("serve a plain-text robots.txt, or a 404 when there is none"),
            );
        }
        if info.truncated() {
            let line = info.first_cut_line;
            let cap = r.size_cap.unwrap_or(info.parsed_bytes);
            r.diagnostics.push(
                Diagnostic::new(
                    Code::SizeCap,
                    line,
                    1,
                    size_cap_message(info.total_bytes, cap, line),
                )
                .suggest("shorten the file: merge rules with wildcards, drop duplicates"),
            );
        }
        r.diagnostics.sort_by_key(|d| (d.line, d.column));
        self.robots
    }
}

fn size_cap_message(total: usize, cap: usize, line: u32) -> String {
    format!(
        "file is {total} bytes; crawlers read at most {cap} bytes (RFC 9309 2.5), and line {line} \
         reaches past them: it and every line after it are ignored"
    )
}

/// True when the start of the file is an HTML document.
pub(crate) fn looks_like_html(input: &[u8]) -> bool {
    let start = input
        .iter()
        .position(|b| !b.is_ascii_whitespace() && !matches!(b, 0xEF | 0xBB | 0xBF))
        .unwrap_or(input.len());
    let head = &input[start..input.len().min(start + 1024)];
    head.first() == Some(&b'<')
        && [
            &b"<!doctype html"[..],
            b"<html",
            b"<head",
            b"<body",
            b"<?xml",
        ]
        .iter()
        .any(|t| head.windows(t.len()).any(|w| w.eq_ignore_ascii_case(t)))
}

impl Robots {
    /// Every Allow and Disallow line of the file in group order, the lines
    /// before any User-agent line last.
    pub fn rules(&self) -> impl Iterator<Item = &Rule> {
        self.groups
            .iter()
            .flat_map(|g| g.rules.iter())
            .chain(self.orphan_rules.iter())
    }

    /// Parses `input` with the default parse cap (500 KiB).
    ///
    /// ```
    /// use botscope_robotstxt::Robots;
    /// let robots = Robots::parse(b"User-agent: *\nDisallow: /private\nSitemap: https://example.com/s.xml\n");
    /// assert_eq!(robots.groups.len(), 1);
    /// assert_eq!(robots.groups[0].rules[0].pattern, "/private");
    /// assert_eq!(robots.sitemaps[0].value, "https://example.com/s.xml");
    /// ```
    pub fn parse(input: &[u8]) -> Robots {
        Robots::parse_with(input, &ParseOptions::default())
    }

    /// Parses `input` with the given options.
    pub fn parse_with(input: &[u8], opts: &ParseOptions) -> Robots {
        let mut b = Builder {
            robots: Robots::default(),
            grouper: Grouper::default(),
            input,
        };
        let info = scan::scan(input, opts, |ev| b.event(ev));
        b.finish(info)
    }

    /// Records the size of the whole file when only its start was given to
    /// the parser (a reader that stops past the cap to bound memory).
    pub fn set_total_bytes(&mut self, total: usize) {
        if total <= self.total_bytes {
            return;
        }
        self.total_bytes = total;
        match self
            .diagnostics
            .iter_mut()
            .find(|d| d.code == Code::SizeCap)
        {
            Some(d) => {
                d.message =
                    size_cap_message(total, self.size_cap.unwrap_or(self.parsed_bytes), d.line);
            }
            None => {
                let line = self.lines.saturating_add(1);
                let msg = size_cap_message(total, self.parsed_bytes, line);
                self.diagnostics
                    .push(Diagnostic::new(Code::SizeCap, line, 1, msg));
            }
        }
    }

    /// True when the parse cap cut the file.
    pub fn truncated(&self) -> bool {
        self.parsed_bytes < self.total_bytes
    }

    /// The groups that apply to `token` under Google's rules: every group
    /// naming it, or, when none does, every `*` group.
    pub fn groups_for(&self, token: &str) -> Vec<&Group> {
        let named: Vec<&Group> = self.groups.iter().filter(|g| g.names(token)).collect();
        if named.is_empty() {
            self.groups.iter().filter(|g| g.is_global()).collect()
        } else {
            named
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(r: &Robots) -> Vec<&'static str> {
        r.diagnostics.iter().map(|d| d.code.as_str()).collect()
    }

    #[test]
    fn groups_extensions_and_sitemaps() {
        let r = Robots::parse(
            b"Sitemap: https://a.example/s1.xml\nUser-agent: a\nCrawl-delay: 2.5\nUser-agent: b\nDisallow: /x\n\
              Request-rate: 1/10m\nUser-agent: *\nAllow: /\nsitemap: /rel.xml\nHost: a.example\nClean-param: ref /x\n",
        );
        assert_eq!(r.groups.len(), 2);
        assert_eq!(
            r.groups[0].user_agents.len(),
            2,
            "Crawl-delay does not end a group"
        );
        assert_eq!(r.groups[0].crawl_delay.as_ref().map(|c| c.value), Some(2.5));
        assert_eq!(
            r.groups[0].request_rate.as_ref().map(|c| c.value.seconds),
            Some(600.0)
        );
        assert_eq!(r.sitemaps.len(), 2);
        assert_eq!(r.hosts[0].value, "a.example");
        assert_eq!(r.clean_params[0].value, "ref /x");
        assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
    }

    #[test]
    fn content_signals() {
        let r = Robots::parse(
            b"Content-Signal: search=yes\nUser-agent: *\nContent-Signal: Search=Yes, ai-train=no,\nContent-Signal: junk\nAllow: /\nUser-agent: x\n",
        );
        assert_eq!(r.content_signals.len(), 1);
        assert_eq!(r.content_signals[0].line, 1);
        // The signal does not end the group: `User-agent: x` after the
        // rule starts a new one, as without it.
        assert_eq!(r.groups.len(), 2);
        let g = &r.groups[0];
        assert_eq!(g.rules.len(), 1);
        assert_eq!(g.content_signals.len(), 1);
        let names: Vec<String> = g.content_signals[0]
            .value
            .iter()
            .map(|s| format!("{}={}", s.name, s.value))
            .collect();
        assert_eq!(names, ["search=yes", "ai-train=no"]);
        assert!(
            r.diagnostics
                .iter()
                .any(|d| d.line == 4 && d.message.contains("Content-Signal value `junk`"))
        );
        assert!(!r.diagnostics.iter().any(|d| d.code == Code::UnknownKey));
        assert_eq!(parse_content_signal("a=b, =c"), None);
        assert_eq!(parse_content_signal(" , "), None);
    }

    #[test]
    fn diagnostics_name_lines() {
        let r = Robots::parse(b"Disallow: /a\nUser-agent: *\nDissallow: /b\nFoo: bar\nCrawl-delay: soon\nNoindex: /c\ngarbage\n");
        assert_eq!(
            codes(&r),
            vec!["R002", "R021", "R001", "R019", "R013", "R026"]
        );
        assert_eq!(r.diagnostics[0].line, 1);
        assert_eq!(r.diagnostics[2].line, 4);
        assert_eq!(r.orphan_rules.len(), 1);
        assert_eq!(r.groups[0].rules[0].pattern, "/b");
    }

    #[test]
    fn did_you_mean_finds_typos() {
        assert_eq!(did_you_mean(b"Dissalow"), Some("disallow"));
        assert_eq!(did_you_mean(b"User-agnet"), Some("user-agent"));
        assert_eq!(did_you_mean(b"Crawl-dealy"), Some("crawl-delay"));
        assert_eq!(did_you_mean(b"Xyzzy"), None);
    }

    #[test]
    fn cap_is_reported() {
        let mut input = b"User-agent: *\n".to_vec();
        for i in 0..100 {
            input.extend_from_slice(format!("Disallow: /{i}\n").as_bytes());
        }
        let r = Robots::parse_with(
            &input,
            &ParseOptions {
                max_bytes: Some(100),
            },
        );
        assert!(r.truncated());
        assert!(codes(&r).contains(&"R014"));
        assert!(r.groups[0].rules.iter().all(|x| x.pattern.len() >= 2));
    }

    #[test]
    fn invalid_utf8_and_bom() {
        let r = Robots::parse(b"\xEF\xBB\xBFUser-agent: *\nDisallow: /caf\xE9\n");
        assert!(r.bom);
        assert_eq!(codes(&r), vec!["R015", "R016"]);
        assert_eq!(r.diagnostics[1].line, 2);
        assert_eq!(r.groups[0].rules[0].normalized, "/caf%E9");
    }
}
