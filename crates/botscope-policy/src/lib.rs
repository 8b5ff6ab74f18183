//! The site owner's policy for botscope's gate: YAML rules compiled once,
//! then one pure decision per request from facts the caller gathered
//! (identity, signature, lists, the robots.txt served, rates). The gate and
//! `policy replay` call the same [`Policy::decide`]: the owner sees what a
//! policy would do over last week's log before switching it on.
//!
//! Rules are tried in order; the first whose every given key holds
//! decides; a `label` rule adds its headers and goes on; `default` decides
//! what no rule matched. Parsing never fails on bad bytes: it returns the
//! findings, each with file, line and rule, and compiles nothing when one
//! is an error.
//!
//! ```
//! use botscope_policy::{Action, Facts, Identity, Rates, Signature, Trapped, parse};
//!
//! let registry = botscope_botid::Registry::bundled();
//! let text = "
//! rules:
//!   - name: fakes
//!     identity: spoofed
//!     action: deny
//!   - name: scrapers-too-fast
//!     category: unregistered-bot
//!     rate: 2/s per ip
//!     action: limit
//! default: allow
//! ";
//! let parsed = parse("policy.yaml", text, &registry);
//! assert!(parsed.findings.is_empty(), "{:?}", parsed.findings);
//! let policy = parsed.policy.expect("no error");
//! let rates = Rates::default();
//! let scraper = Facts {
//!     ip: "192.0.2.7".parse()?,
//!     method: "GET",
//!     path: "/shop/item/1",
//!     user_agent: "python-requests/2.31",
//!     identity: Identity::Unclaimed,
//!     bot: None,
//!     category: botscope_policy::UNREGISTERED_BOT,
//!     signature: Signature::None,
//!     asn: None,
//!     lists: 0,
//!     robots: None,
//!     now_ms: 1_000,
//!     navigation: true,
//!     passed: false,
//!     trapped: Trapped::NONE,
//! };
//! let answers: Vec<_> = (0..3).map(|_| policy.decide(&scraper, &rates)).collect();
//! assert_eq!(answers[0].action, Action::Allow);
//! assert_eq!(answers[2].action, Action::Limit);
//! assert_eq!(answers[2].rule, "scrapers-too-fast");
//! assert_eq!(answers[2].retry_after_ms, Some(500));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

// A library speaks through its return values, never by printing.
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod check;
pub mod forwarded;
mod model;
mod parse;
mod policy;
mod presets;
mod rate;
mod target;

pub use check::priced_but_closed;
pub use model::{
    Action, BROWSER, DISOBEDIENT, Decision, Facts, Identity, LISTS, Signature, TrapKind, Trapped,
    UNREGISTERED_BOT, list_bit,
};
pub use parse::{
    MAX_HOLD_MS, MAX_ITEMS, MAX_NAME_CHARS, MAX_PATTERN_BYTES, MAX_POLICY_BYTES, MAX_REGEX_BYTES,
    MAX_REGEX_CHARS, MAX_RULES, Parsed, categories, duration_ms, parse,
};
pub use policy::{
    Conditions, PASS_FACTOR, PathCase, PathSet, Policy, Refused, Rule, SUBRESOURCE_FACTOR, Tarpit,
    Traps, is_protocol_file, rule_id,
};
pub use presets::{PRESETS, preset};
pub use rate::{DEFAULT_MAX_KEYS, MAX_COUNT, Per, Rate, RateStore, Rates, network_of, shared_key};
pub use target::{
    Ambiguity, ambiguity, fold_case, is_navigation, normalize_pattern, normalize_target,
};

/// How much a finding matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// The policy cannot be used: the gate refuses it.
    Error,
    /// The policy works, but likely not as meant (a rule no request can
    /// reach).
    Warning,
}

impl Severity {
    /// `error` or `warning`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// One problem of a policy file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The file.
    pub file: String,
    /// The line (1-based; 0 for the whole file).
    pub line: u32,
    /// The rule, when the problem is in one.
    pub rule: Option<String>,
    /// Error or warning.
    pub severity: Severity,
    /// What is wrong, in a sentence (the file's own text in it escaped).
    pub message: String,
}

impl std::fmt::Display for Finding {
    /// `FILE:LINE: SEVERITY: rule NAME: MESSAGE`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", botscope_text::field(&self.file))?;
        if self.line > 0 {
            write!(f, ":{}", self.line)?;
        }
        write!(f, ": {}: ", self.severity.as_str())?;
        if let Some(r) = &self.rule {
            write!(f, "rule `{}`: ", botscope_text::field(r))?;
        }
        // Messages quote the file's text: whatever a message did not
        // escape itself is escaped here.
        f.write_str(&botscope_text::terminal(&self.message))
    }
}
