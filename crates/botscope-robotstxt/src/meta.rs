//! Robots meta tags (`<meta name="robots" content="noindex">`) and the
//! `X-Robots-Tag` header: which indexing directives apply to an agent.
//!
//! HTML is read with a real HTML tokenizer (WHATWG rules, so comments,
//! scripts, odd quoting and broken markup are read as a browser reads
//! them). Directives from every source that applies to the agent (`robots`,
//! the agent's own name, un-prefixed and agent-prefixed headers) are
//! combined, and the most restrictive wins.

use html5gum::{DefaultEmitter, State, Token, Tokenizer};
use serde::Serialize;

use crate::agent::product_token;

/// `max-image-preview` values, least to most generous.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ImagePreview {
    /// No image preview.
    None,
    /// A default-size preview.
    Standard,
    /// A large preview.
    Large,
}

/// The combined directives for one agent. `false`/`None` means no
/// restriction was given.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct RobotsDirectives {
    /// Do not index the page (`noindex`, `none`).
    pub noindex: bool,
    /// Do not follow its links (`nofollow`, `none`).
    pub nofollow: bool,
    /// Do not show a cached copy.
    pub noarchive: bool,
    /// Do not show a snippet.
    pub nosnippet: bool,
    /// Do not index images on the page.
    pub noimageindex: bool,
    /// Do not offer a translation.
    pub notranslate: bool,
    /// Index the page's content when embedded in an iframe despite `noindex`.
    pub indexifembedded: bool,
    /// Longest snippet in characters (`-1`: no limit).
    pub max_snippet: Option<i64>,
    /// Largest image preview.
    pub max_image_preview: Option<ImagePreview>,
    /// Longest video preview in seconds (`-1`: no limit).
    pub max_video_preview: Option<i64>,
    /// Do not show the page after this date (as written).
    pub unavailable_after: Option<String>,
    /// The same date in seconds since the Unix epoch, when it can be read.
    pub unavailable_after_unix: Option<i64>,
    /// The date has passed (at the time given to [`MetaReport::as_of`]):
    /// the page is as good as `noindex` now, and `noindex` is set.
    pub unavailable_after_passed: bool,
}

/// Where a directive list came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MetaSource {
    /// `meta` or `header` (`content-usage` for a Content-Usage header).
    pub origin: &'static str,
    /// The meta name or header agent prefix (`robots`, `googlebot`, or `*`
    /// for a header without prefix).
    pub name: String,
    /// The directive list as written.
    pub content: String,
    /// 1-based line of the meta tag in the HTML (`null` for headers).
    pub line: Option<u32>,
}

/// Something odd in the directives.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MetaWarning {
    /// `unknown-directive`, `conflict`, `invalid-value`, `outside-head`,
    /// or `obsolete-directive`.
    pub code: &'static str,
    /// Where, as in [`MetaSource::line`] (`null` for headers).
    pub line: Option<u32>,
    /// What.
    pub message: String,
}

/// The result of reading robots directives for one agent.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct MetaReport {
    /// The agent the directives were combined for.
    pub agent: String,
    /// The combined, most restrictive directives.
    pub directives: RobotsDirectives,
    /// Every source that applies to the agent.
    pub sources: Vec<MetaSource>,
    /// Unknown directives, conflicts, bad values.
    pub warnings: Vec<MetaWarning>,
    /// AI usage preferences from the `Content-Usage` header
    /// (draft-ietf-aipref-attach-05; its field lines read as one
    /// Dictionary); `None` when the response has none, empty when it has
    /// one that cannot be read (every preference unknown).
    pub usage: Option<crate::usage::Usage>,
}

const KNOWN: &[&str] = &[
    "all",
    "none",
    "index",
    "noindex",
    "follow",
    "nofollow",
    "noarchive",
    "nocache",
    "nosnippet",
    "noimageindex",
    "notranslate",
    "indexifembedded",
    "max-snippet",
    "max-image-preview",
    "max-video-preview",
    "unavailable_after",
];
const OBSOLETE: &[&str] = &["noodp", "noydir", "noyaca"];

fn is_directive_name(s: &str) -> bool {
    let s = s.trim().to_ascii_lowercase();
    KNOWN.contains(&s.as_str()) || OBSOLETE.contains(&s.as_str())
}

/// Splits a directive list into `(name, value)` pairs. A comma inside an
/// `unavailable_after` date (`Wednesday, 03-Aug-22 …`) stays in the date.
fn split_directives(content: &str) -> Vec<(String, Option<String>)> {
    let mut out: Vec<(String, Option<String>)> = Vec::new();
    for piece in content.split(',') {
        let piece = piece.trim();
        if piece.is_empty() {
            continue;
        }
        let (name, value) = match piece.split_once(':') {
            Some((n, v)) => (n.trim(), Some(v.trim().to_owned())),
            None => (piece, None),
        };
        if !is_directive_name(name)
            && let Some((last, Some(v))) = out.last_mut()
            && last == "unavailable_after"
        {
            v.push_str(", ");
            v.push_str(piece);
            continue;
        }
        out.push((name.to_ascii_lowercase(), value));
    }
    out
}

/// A directive's value for a message: `` `abc` `` or `nothing`.
fn shown(v: Option<&str>) -> String {
    v.map_or_else(|| "nothing".to_owned(), |v| format!("`{v}`"))
}

/// Reads the dates Google accepts for `unavailable_after`: its own
/// documented form (`25 Jun 2010 15:00:00 PST`, RFC 822/2822 with or
/// without the weekday, zone names or offsets), RFC 850 and the other HTTP
/// dates, and ISO 8601 (`2026-09-21`, `2026-09-21T15:00:00Z`).
fn parse_date(s: &str) -> Option<i64> {
    if let Ok(z) = jiff::fmt::rfc2822::parse(s.trim()) {
        return Some(z.timestamp().as_second());
    }
    if let Ok(t) = httpdate::parse_http_date(s.trim()) {
        return t
            .duration_since(std::time::UNIX_EPOCH)
            .ok()
            .and_then(|d| i64::try_from(d.as_secs()).ok());
    }
    let s = s.trim();
    let num = |a: usize, b: usize| {
        s.get(a..b)
            .filter(|p| p.bytes().all(|c| c.is_ascii_digit()))
            .and_then(|p| p.parse::<i64>().ok())
    };
    let (y, m, d) = (num(0, 4)?, num(5, 7)?, num(8, 10)?);
    if s.as_bytes().get(4) != Some(&b'-')
        || s.as_bytes().get(7) != Some(&b'-')
        || !(1..=12).contains(&m)
        || !(1..=31).contains(&d)
    {
        return None;
    }
    let day = jiff::civil::Date::new(i16::try_from(y).ok()?, m as i8, d as i8).ok()?;
    let mut secs = day
        .to_zoned(jiff::tz::TimeZone::UTC)
        .ok()?
        .timestamp()
        .as_second();
    if matches!(s.as_bytes().get(10), Some(b'T' | b' ')) {
        let (h, mi) = (num(11, 13)?, num(14, 16)?);
        let sec = num(17, 19).unwrap_or(0);
        secs += h * 3600 + mi * 60 + sec;
    }
    Some(secs)
}

impl RobotsDirectives {
    fn apply(
        &mut self,
        name: &str,
        value: Option<&str>,
        line: Option<u32>,
        warnings: &mut Vec<MetaWarning>,
    ) {
        let warn = |w: &mut Vec<MetaWarning>, code, message: String| {
            w.push(MetaWarning {
                code,
                line,
                message,
            })
        };
        let number = |v: Option<&str>| {
            v.and_then(|v| v.trim().parse::<i64>().ok())
                .filter(|n| *n >= -1)
        };
        let min_limit = |cur: Option<i64>, new: i64| match cur {
            None | Some(-1) => Some(new),
            Some(c) if new == -1 => Some(c),
            Some(c) => Some(c.min(new)),
        };
        match name {
            "all" | "index" | "follow" => {}
            "none" => {
                self.noindex = true;
                self.nofollow = true;
            }
            "noindex" => self.noindex = true,
            "nofollow" => self.nofollow = true,
            "noarchive" | "nocache" => self.noarchive = true,
            "nosnippet" => self.nosnippet = true,
            "noimageindex" => self.noimageindex = true,
            "notranslate" => self.notranslate = true,
            "indexifembedded" => self.indexifembedded = true,
            "max-snippet" => match number(value) {
                Some(n) => self.max_snippet = min_limit(self.max_snippet, n),
                None => warn(
                    warnings,
                    "invalid-value",
                    format!(
                        "max-snippet needs a number of characters or -1, got {}",
                        shown(value)
                    ),
                ),
            },
            "max-video-preview" => match number(value) {
                Some(n) => self.max_video_preview = min_limit(self.max_video_preview, n),
                None => warn(
                    warnings,
                    "invalid-value",
                    format!(
                        "max-video-preview needs a number of seconds or -1, got {}",
                        shown(value)
                    ),
                ),
            },
            "max-image-preview" => {
                let v = match value.map(|v| v.trim().to_ascii_lowercase()).as_deref() {
                    Some("none") => Some(ImagePreview::None),
                    Some("standard") => Some(ImagePreview::Standard),
                    Some("large") => Some(ImagePreview::Large),
                    _ => None,
                };
                match v {
                    Some(v) => {
                        self.max_image_preview =
                            Some(self.max_image_preview.map_or(v, |c| c.min(v)))
                    }
                    None => warn(
                        warnings,
                        "invalid-value",
                        format!(
                            "max-image-preview needs none, standard or large, got {}",
                            shown(value)
                        ),
                    ),
                }
            }
            "unavailable_after" => {
                let raw = value.unwrap_or_default().to_owned();
                match parse_date(&raw) {
                    Some(t) => {
                        if self.unavailable_after_unix.is_none_or(|c| t < c) {
                            self.unavailable_after_unix = Some(t);
                            self.unavailable_after = Some(raw);
                        }
                    }
                    None => {
                        warn(
                            warnings,
                            "invalid-value",
                            format!("unavailable_after date {raw:?} cannot be read"),
                        );
                        if self.unavailable_after.is_none() {
                            self.unavailable_after = Some(raw);
                        }
                    }
                }
            }
            n if OBSOLETE.contains(&n) => {
                warn(
                    warnings,
                    "obsolete-directive",
                    format!("`{n}` is obsolete and ignored by search engines"),
                );
            }
            n => warn(
                warnings,
                "unknown-directive",
                format!("unknown directive `{n}`"),
            ),
        }
    }
}

fn add_list(report: &mut MetaReport, content: &str, line: Option<u32>) {
    let pairs = split_directives(content);
    let has = |n: &str| pairs.iter().any(|(k, _)| k == n);
    for (pos, neg) in [
        ("index", "noindex"),
        ("follow", "nofollow"),
        ("all", "none"),
        ("all", "noindex"),
        ("all", "nofollow"),
    ] {
        if has(pos) && has(neg) {
            report.warnings.push(MetaWarning {
                code: "conflict",
                line,
                message: format!("`{pos}` and `{neg}` together: the more restrictive `{neg}` wins"),
            });
        }
    }
    for (name, value) in &pairs {
        report
            .directives
            .apply(name, value.as_deref(), line, &mut report.warnings);
    }
}

fn name_applies(name: &str, agent: &str) -> bool {
    name.eq_ignore_ascii_case("robots") || (!agent.is_empty() && name.eq_ignore_ascii_case(agent))
}

impl MetaReport {
    /// The directives as they stand at `now` (Unix seconds): an
    /// `unavailable_after` date in the past makes the page `noindex` now.
    pub fn as_of(&mut self, now: i64) {
        if self
            .directives
            .unavailable_after_unix
            .is_some_and(|t| t <= now)
        {
            self.directives.unavailable_after_passed = true;
            self.directives.noindex = true;
        }
    }

    /// Reads the robots meta tags of `html` that apply to `agent` (a
    /// product token or a whole User-Agent header).
    ///
    /// ```
    /// use botscope_robotstxt::MetaReport;
    /// let html = br#"<html><head><META NAME="robots" CONTENT="noarchive">
    ///   <meta name=googlebot content="noindex, max-snippet:20"></head></html>"#;
    /// let r = MetaReport::from_html(html, "Googlebot");
    /// assert!(r.directives.noindex && r.directives.noarchive);
    /// assert_eq!(r.directives.max_snippet, Some(20));
    /// assert!(!MetaReport::from_html(html, "bingbot").directives.noindex);
    /// ```
    pub fn from_html(html: &[u8], agent: &str) -> MetaReport {
        let mut r = MetaReport {
            agent: product_token(agent).to_owned(),
            ..MetaReport::default()
        };
        r.add_html(html);
        r
    }

    /// Adds the meta tags of an HTML document.
    pub fn add_html(&mut self, html: &[u8]) {
        let agent = self.agent.clone();
        let mut tokenizer =
            Tokenizer::new_with_emitter(html, DefaultEmitter::<usize>::new_with_span());
        let mut in_body = false;
        // Line numbers from tag offsets, counted incrementally.
        let (mut line, mut counted_to) = (1u32, 0usize);
        while let Some(Ok(token)) = tokenizer.next() {
            match token {
                Token::StartTag(tag) => {
                    let name = tag.name.0.to_ascii_lowercase();
                    if let Some(state) = next_state(&name) {
                        tokenizer.set_state(state);
                    }
                    match name.as_slice() {
                        b"body" => in_body = true,
                        b"meta" => {
                            let attr = |k: &[u8]| {
                                tag.attributes
                                    .iter()
                                    .find(|(n, _)| n.0.eq_ignore_ascii_case(k))
                                    .map(|(_, v)| String::from_utf8_lossy(&v.value.0).into_owned())
                            };
                            let (Some(meta_name), Some(content)) =
                                (attr(b"name"), attr(b"content"))
                            else {
                                continue;
                            };
                            let meta_name = meta_name.trim().to_owned();
                            if !name_applies(&meta_name, &agent) {
                                continue;
                            }
                            let at = tag.span.start.min(html.len()).max(counted_to);
                            let ends = crate::lexer::count_line_ends(&html[counted_to..at]);
                            line = line.saturating_add(u32::try_from(ends).unwrap_or(u32::MAX));
                            counted_to = at;
                            if in_body {
                                self.warnings.push(MetaWarning {
                                    code: "outside-head",
                                    line: Some(line),
                                    message: "robots meta tag in the body: it belongs in <head>"
                                        .into(),
                                });
                            }
                            add_list(self, &content, Some(line));
                            self.sources.push(MetaSource {
                                origin: "meta",
                                name: meta_name,
                                content,
                                line: Some(line),
                            });
                        }
                        _ => {}
                    }
                }
                Token::EndTag(tag) if tag.name.0.eq_ignore_ascii_case(b"head") => in_body = true,
                _ => {}
            }
        }
    }

    /// Reads `X-Robots-Tag` header values (without the header name) that
    /// apply to `agent`. A value may start with an agent prefix
    /// (`googlebot: noindex`); one without applies to all.
    ///
    /// ```
    /// use botscope_robotstxt::MetaReport;
    /// let r = MetaReport::from_headers(&["noarchive", "googlebot: noindex, nofollow", "otherbot: noimageindex"], "Googlebot");
    /// assert!(r.directives.noindex && r.directives.nofollow && r.directives.noarchive);
    /// assert!(!r.directives.noimageindex);
    /// ```
    pub fn from_headers(values: &[&str], agent: &str) -> MetaReport {
        let mut r = MetaReport {
            agent: product_token(agent).to_owned(),
            ..MetaReport::default()
        };
        for v in values {
            r.add_header(v);
        }
        r
    }

    /// Adds a `Content-Usage` header field line (AI usage preferences).
    /// The lines of a response are one field: they are read together as
    /// one Dictionary (RFC 9651 section 4.2, as
    /// draft-ietf-aipref-attach-05 carries it), so a later line's key
    /// replaces an earlier one's and a line that breaks the Dictionary
    /// leaves every preference unknown (a warning).
    ///
    /// ```
    /// use botscope_robotstxt::MetaReport;
    /// let mut r = MetaReport::from_html(b"", "GPTBot");
    /// r.add_usage_header("train-ai=n, search=y");
    /// assert_eq!(r.usage.as_ref().unwrap()["train-ai"], "n");
    /// r.add_usage_header("train-ai=y");
    /// assert_eq!(r.usage.as_ref().unwrap()["train-ai"], "y", "one dictionary: the last key wins");
    /// ```
    pub fn add_usage_header(&mut self, value: &str) {
        self.sources.push(MetaSource {
            origin: "header",
            name: "content-usage".into(),
            line: None,
            content: value.to_owned(),
        });
        let lines: Vec<&str> = self
            .sources
            .iter()
            .filter(|s| s.origin == "header" && s.name == "content-usage")
            .map(|s| s.content.as_str())
            .collect();
        let parsed = crate::usage::parse_usage_header(&lines);
        self.warnings
            .retain(|w| w.code != "usage-unknown" && w.code != "usage-malformed");
        match parsed {
            Ok(p) => {
                for problem in p.problems {
                    self.warnings.push(MetaWarning {
                        code: "usage-unknown",
                        line: None,
                        message: format!("Content-Usage {problem}"),
                    });
                }
                self.usage = Some(p.usage);
            }
            Err(why) => {
                self.usage = Some(crate::usage::Usage::new());
                self.warnings.push(MetaWarning {
                    code: "usage-malformed",
                    line: None,
                    message: format!(
                        "Content-Usage `{}` cannot be read: {why}; every preference is unknown",
                        lines.join(", ")
                    ),
                });
            }
        }
    }

    /// Adds one `X-Robots-Tag` value.
    pub fn add_header(&mut self, value: &str) {
        // Sections start with `agent:` where `agent` is not a directive.
        let mut sections: Vec<(String, String)> = Vec::new();
        let mut current = ("*".to_owned(), String::new());
        for piece in value.split(',') {
            let trimmed = piece.trim();
            if let Some((head, rest)) = trimmed.split_once(':')
                && !is_directive_name(head)
                && !head.trim().is_empty()
                && head
                    .trim()
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
                && !current
                    .1
                    .trim_end()
                    .to_ascii_lowercase()
                    .contains("unavailable_after")
            {
                if !current.1.trim().is_empty() {
                    sections.push(std::mem::take(&mut current));
                }
                current = (head.trim().to_owned(), rest.trim().to_owned());
                continue;
            }
            if !current.1.is_empty() {
                current.1.push(',');
            }
            current.1.push_str(piece);
        }
        if !current.1.trim().is_empty() {
            sections.push(current);
        }
        let agent = self.agent.clone();
        for (name, content) in sections {
            if name == "*" || name_applies(&name, &agent) {
                let content = content.trim().to_owned();
                add_list(self, &content, None);
                self.sources.push(MetaSource {
                    origin: "header",
                    name,
                    content,
                    line: None,
                });
            }
        }
    }
}

/// Tokenizer state after a start tag: raw text inside `<script>`,
/// `<style>` and friends, so that markup in them is not read as tags.
fn next_state(tag: &[u8]) -> Option<State> {
    match tag {
        b"noscript" => None,
        other => html5gum::naive_next_state(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messy_html() {
        let html = b"<!doctype html><html><head>\n<!-- <meta name=robots content=noindex> -->\n\
            <script>document.write('<meta name=robots content=nofollow>')</script>\n\
            <meta content='noarchive' name='ROBOTS'>\n<meta name=\"robots\" content=\"max-image-preview:large, max-image-preview:standard\">\n\
            <meta name=robots content=\"index, noindex, sparkle\"\n</head><body><meta name=robots content=nosnippet></body>";
        let r = MetaReport::from_html(html, "anybot");
        let d = &r.directives;
        assert!(d.noarchive && d.noindex && d.nosnippet);
        assert!(!d.nofollow, "markup in comments and scripts is not a tag");
        assert_eq!(d.max_image_preview, Some(ImagePreview::Standard));
        let codes: Vec<&str> = r.warnings.iter().map(|w| w.code).collect();
        assert!(
            codes.contains(&"conflict")
                && codes.contains(&"unknown-directive")
                && codes.contains(&"outside-head"),
            "{codes:?}"
        );
        assert_eq!(r.sources[0].line, Some(4));
    }

    #[test]
    fn most_restrictive_limits() {
        let r = MetaReport::from_headers(
            &[
                "max-snippet:-1, max-snippet:50",
                "max-snippet:120, max-video-preview:-1",
                "max-video-preview:10",
            ],
            "x",
        );
        assert_eq!(r.directives.max_snippet, Some(50));
        assert_eq!(r.directives.max_video_preview, Some(10));
    }

    #[test]
    fn unavailable_after_dates() {
        let r = MetaReport::from_headers(
            &[
                "unavailable_after: Wednesday, 03-Aug-22 15:00:00 GMT",
                "unavailable_after: 2020-09-21",
            ],
            "x",
        );
        assert_eq!(
            r.directives.unavailable_after.as_deref(),
            Some("2020-09-21")
        );
        assert_eq!(r.directives.unavailable_after_unix, Some(1_600_646_400));
        assert!(r.warnings.is_empty(), "{:?}", r.warnings);
        // Google's documented form, RFC 850 and RFC 822 with a zone name.
        for (date, unix) in [
            ("25 Jun 2010 15:00:00 PST", 1_277_506_800),
            ("Friday, 25-Jun-10 15:00:00 GMT", 1_277_478_000),
            ("Fri, 25 Jun 2010 15:00:00 -0700", 1_277_503_200),
            ("2010-06-25T15:00:00Z", 1_277_478_000),
        ] {
            let mut r = MetaReport::from_headers(
                &[&format!("googlebot: unavailable_after: {date}")],
                "googlebot",
            );
            assert_eq!(r.directives.unavailable_after_unix, Some(unix), "{date}");
            assert!(r.warnings.is_empty(), "{date}: {:?}", r.warnings);
            // A past date is noindex now; a future one is not yet.
            r.as_of(unix - 1);
            assert!(!r.directives.noindex, "{date}");
            r.as_of(unix + 1);
            assert!(r.directives.noindex && r.directives.unavailable_after_passed);
            assert!(r.summary().contains("noindex now"), "{}", r.summary());
        }
        // Messages name the value, not Rust's debug text; headers have no line.
        let r = MetaReport::from_headers(&["max-snippet: abc"], "x");
        assert_eq!(r.warnings[0].line, None);
        assert!(
            r.warnings[0].message.ends_with("got `abc`"),
            "{}",
            r.warnings[0].message
        );
        assert!(
            r.summary().contains("warning[invalid-value] header:"),
            "{}",
            r.summary()
        );
        assert!(!r.summary().contains("line 0"));
    }

    #[test]
    fn none_means_noindex_nofollow() {
        let r = MetaReport::from_html(b"<meta name=robots content=NONE>", "x");
        assert!(r.directives.noindex && r.directives.nofollow);
    }
}
