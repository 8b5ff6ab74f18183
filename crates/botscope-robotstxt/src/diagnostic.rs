//! Diagnostics: what the parser and lint have to say about a file.

use std::fmt;

/// How much a diagnostic matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing; nothing is wrong.
    Info,
    /// Probably not what the author meant, or read differently by crawlers.
    Warning,
    /// Part of the file has no effect or is misread.
    Error,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        })
    }
}

macro_rules! codes {
    ($( $(#[$doc:meta])* $variant:ident = $code:literal, $slug:literal, $sev:ident; )*) => {
        /// A stable diagnostic code. The `R` numbers never change meaning.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Code {
            $( $(#[$doc])* $variant, )*
        }

        impl Code {
            /// Every code, in number order.
            pub const ALL: &'static [Code] = &[$(Code::$variant),*];

            /// The stable code, such as `R001`.
            pub fn as_str(self) -> &'static str {
                match self { $(Code::$variant => $code,)* }
            }

            /// A short kebab-case name, such as `unknown-key`.
            pub fn name(self) -> &'static str {
                match self { $(Code::$variant => $slug,)* }
            }

            /// The severity a diagnostic with this code has.
            pub fn severity(self) -> Severity {
                match self { $(Code::$variant => Severity::$sev,)* }
            }
        }
    };
}

codes! {
    /// A key no crawler reads.
    UnknownKey = "R001", "unknown-key", Warning;
    /// An Allow or Disallow line before any User-agent line: ignored.
    RuleOutsideGroup = "R002", "rule-outside-group", Error;
    /// A group with user agents but no rules: it allows everything, and
    /// for a named agent it overrides the `*` group.
    EmptyGroup = "R003", "empty-group", Warning;
    /// The same user agent names several groups; crawlers merge them.
    DuplicateGroup = "R004", "duplicate-group", Warning;
    /// A user-agent value with a version (`Googlebot/2.1`).
    UserAgentVersion = "R005", "user-agent-version", Warning;
    /// A user-agent value with spaces or other characters outside `[A-Za-z_-]`.
    UserAgentChars = "R006", "user-agent-chars", Warning;
    /// A pattern that does not start with `/` or `*`: it can never match.
    PatternStart = "R007", "pattern-start", Error;
    /// A rule that can never change a verdict.
    RedundantRule = "R008", "redundant-rule", Info;
    /// Allow and Disallow with the same pattern: Allow wins, the Disallow has no effect.
    AllowDisallowTie = "R009", "allow-disallow-tie", Warning;
    /// A User-agent line after a non-rule line continues the same group.
    GroupContinuation = "R010", "group-continuation", Warning;
    /// Crawl-delay: Google ignores it.
    CrawlDelayIgnored = "R011", "crawl-delay-ignored", Info;
    /// A Sitemap value that is not an absolute URL.
    SitemapRelative = "R012", "sitemap-relative", Error;
    /// Noindex in robots.txt: not supported.
    NoindexUnsupported = "R013", "noindex-unsupported", Warning;
    /// The file is larger than the parse cap; the rest is ignored.
    SizeCap = "R014", "size-cap", Error;
    /// The file starts with a UTF-8 byte order mark.
    Bom = "R015", "bom", Info;
    /// The file is not valid UTF-8.
    InvalidUtf8 = "R016", "invalid-utf8", Warning;
    /// A pattern with non-ASCII characters that are not percent-encoded.
    NonAsciiPath = "R017", "non-ascii-path", Info;
    /// A rule about `/robots.txt`: crawlers always fetch it.
    RobotsTxtRule = "R018", "robots-txt-rule", Warning;
    /// A value that cannot be read (Crawl-delay, Request-rate, Visit-time).
    InvalidValue = "R019", "invalid-value", Error;
    /// Key and value separated by whitespace instead of a colon.
    MissingColon = "R020", "missing-colon", Warning;
    /// A misspelt key that Google accepts but other crawlers may not.
    KeyTypo = "R021", "key-typo", Warning;
    /// A line longer than the matcher reads.
    LineTooLong = "R022", "line-too-long", Warning;
    /// A NUL byte: the rest of the line is ignored.
    NulByte = "R023", "nul-byte", Warning;
    /// The file looks like HTML, not robots.txt.
    HtmlContent = "R024", "html-content", Error;
    /// The same rule twice for the same agent.
    DuplicateRule = "R025", "duplicate-rule", Warning;
    /// A line that is neither blank, a comment, nor `key: value`.
    MalformedLine = "R026", "malformed-line", Warning;
    /// An extension given twice in one group; the first one counts.
    DuplicateExtension = "R027", "duplicate-extension", Warning;
    /// A group extension (Crawl-delay, Request-rate) before any User-agent line.
    ExtensionOutsideGroup = "R028", "extension-outside-group", Warning;
    /// A user-agent value no crawler can match (empty, or not starting with a letter).
    UserAgentInvalid = "R029", "user-agent-invalid", Warning;
    /// So many agents share groups that checking every agent's rule set
    /// would take longer than the file is worth; the rest were not checked.
    LintBudget = "R030", "lint-budget", Info;
    /// A Content-Usage rule that cannot be read (no preference, or one that
    /// is not a structured-field dictionary): every preference is unknown.
    UsageMalformed = "R031", "usage-malformed", Error;
    /// A Content-Usage entry the vocabulary does not define, or whose value
    /// is not `y` or `n`: that preference is unknown.
    UsageUnknown = "R032", "usage-unknown", Warning;
    /// A Content-Usage rule without a path: read as `/`, but the attach
    /// draft requires one.
    UsageNoPath = "R033", "usage-no-path", Warning;
    /// A Content-Usage rule outside any group: it applies to no crawler.
    UsageOutsideGroup = "R034", "usage-outside-group", Error;
    /// A Content-Signal entry the policy does not define (search,
    /// ai-input, ai-train) or whose value is not `yes` or `no`.
    SignalUnknown = "R035", "signal-unknown", Warning;
    /// A License value that is not a full URL: RSL 1.0 requires one.
    LicenseRelative = "R036", "license-relative", Warning;
    /// The same License URL twice.
    LicenseRepeated = "R037", "license-repeated", Warning;
    /// A License line inside a group: it is global all the same.
    LicenseInGroup = "R038", "license-in-group", Warning;
    /// A License URL with a scheme no crawler fetches a licence from.
    LicenseScheme = "R039", "license-scheme", Error;
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// One finding about one place in a file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Diagnostic {
    /// Stable code.
    pub code: Code,
    /// Kebab-case name of the code.
    pub name: &'static str,
    /// Severity of the code.
    pub severity: Severity,
    /// 1-based line number (0 for the whole file).
    pub line: u32,
    /// 1-based column, in characters (0 for the whole line or file).
    pub column: u32,
    /// What is wrong, in one sentence.
    pub message: String,
    /// What to do about it, when there is something to do.
    pub suggestion: Option<String>,
}

impl Diagnostic {
    /// A diagnostic with the code's severity.
    pub fn new(code: Code, line: u32, column: u32, message: impl Into<String>) -> Self {
        Diagnostic {
            code,
            name: code.name(),
            severity: code.severity(),
            line,
            column,
            message: message.into(),
            suggestion: None,
        }
    }

    /// Adds a suggestion.
    #[must_use]
    pub fn suggest(mut self, suggestion: impl Into<String>) -> Self {
        self.suggestion = Some(suggestion.into());
        self
    }
}

/// `line:column: severity[CODE name]: message`, then `  help: …` on a
/// second line when there is a suggestion.
impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: {}[{} {}]: {}",
            self.line, self.column, self.severity, self.code, self.name, self.message
        )?;
        if let Some(s) = &self.suggestion {
            write!(f, "\n  help: {s}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_is_documented() {
        let doc = include_str!("../../../docs/lint-codes.md");
        for c in Code::ALL {
            let row = format!("| {} | `{}` | {} |", c.as_str(), c.name(), c.severity());
            assert!(doc.contains(&row), "docs/lint-codes.md lacks {row}");
        }
    }

    #[test]
    fn codes_are_unique_and_ordered() {
        let mut seen = std::collections::HashSet::new();
        for (i, c) in Code::ALL.iter().enumerate() {
            assert_eq!(c.as_str(), format!("R{:03}", i + 1));
            assert!(seen.insert(c.name()), "duplicate name {}", c.name());
        }
    }
}
