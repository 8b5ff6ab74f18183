//! robots.txt for crawlers, webmasters and researchers: parse, match,
//! fetch policy, lint, and robots meta tags. No I/O: bytes in, values out.
//!
//! Parsing never fails. Every input, however broken, gives a value and a
//! list of diagnostics. One tokenizer feeds everything: the parse tree
//! ([`Robots`]), the compiled [`Matcher`], and [`lint`].
//!
//! ```
//! use botscope_robotstxt::{Matcher, Robots, Semantics, ParseOptions, lint};
//!
//! let body = b"User-agent: *\nDisallow: /search\nAllow: /search/about\n\nUser-agent: GPTBot\nDisallow: /\n";
//!
//! // Crawler: compile once, ask many times.
//! let m = Matcher::new(body);
//! assert!(!m.is_allowed("Googlebot", "https://example.com/search?q=1"));
//! assert!(m.is_allowed("Googlebot", "https://example.com/search/about"));
//! assert!(!m.is_allowed("Mozilla/5.0 (compatible; GPTBot/1.2)", "https://example.com/"));
//!
//! // The 1996 draft: first match in file order wins.
//! let old = Matcher::compile(body, Semantics::Draft1996, &ParseOptions::default());
//! assert!(!old.is_allowed("somebot", "/search/about"));
//!
//! // Webmaster: what is in the file, and what is wrong with it.
//! let robots = Robots::parse(body);
//! assert_eq!(robots.groups.len(), 2);
//! assert!(lint(&robots).iter().all(|d| d.severity < botscope_robotstxt::Severity::Error));
//! ```

// A library speaks through its return values and the caller's writer,
// never by printing.
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod agent;
mod batch;
mod diagnostic;
mod fetch;
mod lexer;
mod lint;
mod matcher;
mod meta;
mod parse;
mod preferences;
mod scan;
mod text;
mod usage;
pub use text::{SHOWN_PER_CODE, lint_json, lint_report, lint_sarif};
mod url;

pub use agent::{is_product_token, product_token};
pub use batch::{BatchChecker, MALFORMED, RECENT};
pub use diagnostic::{Code, Diagnostic, Severity};
pub use fetch::{
    FetchAction, FetchDecision, FetchPolicy, FetchResponse, cache_lifetime, decide_fetch, header,
    is_robots_txt_path, parse_retry_after,
};
pub use lexer::{KeyKind, MAX_LINE_LEN};
pub use lint::{lint, lint_counted, lint_with};
pub use matcher::{
    GroupMatch, IndexedSelection, MatchedRule, Matcher, SCAN_PER_PATTERN_BYTE, Selection,
    Semantics, Verdict, pick_name,
};
pub use meta::{ImagePreview, MetaReport, MetaSource, MetaWarning, RobotsDirectives};
pub use parse::{
    Group, LicenseLine, Located, OtherLine, RequestRate, Robots, Rule, RuleKind, Signal, UserAgent,
    parse_content_signal,
};
pub use preferences::Preferences;
pub use scan::{DEFAULT_PARSE_CAP, ParseOptions};
pub use url::{escape_pattern, path_of};
pub use usage::{
    BadPreference, CATEGORIES, MAX_PREFERENCE_BYTES, Preference, RETIRED_CATEGORIES, SIGNAL_VALUES,
    SIGNALS, USE_LEVELS, Usage, UsageRule, VOCABULARY, combine as combine_usage, parse_preference,
    parse_usage_header, parse_usage_rule, retired, show as show_usage, signal_known,
    usage_to_signals,
};
