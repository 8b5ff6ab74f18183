//! AI usage preferences, in both dialects a site writes them:
//!
//! - the IETF aipref drafts: a statement of preference is a structured
//!   field dictionary of categories (`train-ai`, `ai-use`, `search`,
//!   draft-ietf-aipref-vocab-08 section 6.1) to the Tokens `y` or `n`,
//!   carried by a `Content-Usage` rule in a robots.txt group, with a path,
//!   and by the `Content-Usage` HTTP header (draft-ietf-aipref-attach-05);
//! - Cloudflare's Content Signals Policy: `Content-Signal: search=yes,
//!   ai-train=no` lines in robots.txt, a vocabulary of its own (`search`,
//!   `ai-input`, `ai-train`, each `yes` or `no`).
//!
//! For one agent and one path, the Content-Usage rule with the longest
//! matching path decides (byte length of the encoded path, as Allow and
//! Disallow); rules with paths of the same length combine per category
//! toward the restrictive (`n` wins), as the vocabulary combines
//! statements (vocab-08 section 5.1); a rule that cannot be read still
//! decides for its path, with every preference unknown; and a path the
//! agent may not crawl has no preference (`preferences.rs` decides for a
//! file, an agent and a path). Everything here is pure: strings in,
//! values out.

use std::collections::BTreeMap;

use serde::Serialize;

/// The usage categories of draft-ietf-aipref-vocab-08 (section 6.1): AI
/// Training, AI Use (added back in -08; -05 to -07 had only `train-ai` and
/// `search`) and Search.
pub const CATEGORIES: &[&str] = &["train-ai", "ai-use", "search"];

/// The vocabulary draft this module follows.
pub const VOCABULARY: &str = "draft-ietf-aipref-vocab-08";

/// Labels of earlier vocabulary drafts that the current one does not
/// define, each with what became of it. A reader ignores them (vocab-08
/// section 6.4: "any unknown labels MUST be ignored"); lint names them.
pub const RETIRED_CATEGORIES: &[(&str, &str)] = &[
    (
        "bots",
        "Automated Processing of -03 and -04, removed by draft-ietf-aipref-vocab-05",
    ),
    (
        "all",
        "Automated Processing of -02, renamed `bots` by draft-ietf-aipref-vocab-03 and removed by -05",
    ),
    (
        "train-genai",
        "Generative AI Training of -02 and -03, removed by draft-ietf-aipref-vocab-04; `train-ai` now covers generative models only",
    ),
    (
        "ai-output",
        "AI Output of -04, removed by draft-ietf-aipref-vocab-05",
    ),
    (
        "tdm",
        "a label of draft-ietf-aipref-vocab-01, replaced by draft-ietf-aipref-vocab-02",
    ),
    (
        "ai",
        "a label of draft-ietf-aipref-vocab-01, replaced by `train-ai` in draft-ietf-aipref-vocab-02",
    ),
    (
        "genai",
        "a label of draft-ietf-aipref-vocab-01, replaced by `train-genai` in draft-ietf-aipref-vocab-02, itself removed by -04",
    ),
    (
        "inference",
        "a label of draft-ietf-aipref-vocab-01, replaced by `ai-use` in draft-ietf-aipref-vocab-02",
    ),
];

/// What became of a retired label (`None`: not a label of any draft).
pub fn retired(label: &str) -> Option<&'static str> {
    RETIRED_CATEGORIES
        .iter()
        .find(|(l, _)| *l == label)
        .map(|(_, why)| *why)
}

/// The signals of Cloudflare's Content Signals Policy.
pub const SIGNALS: &[&str] = &["search", "ai-input", "ai-train"];

/// The values a Content Signal takes.
pub const SIGNAL_VALUES: &[&str] = &["yes", "no"];

/// The levels of the Content Signals `use` signal (Cloudflare, July 2026:
/// `use=reference`), from the most restrictive: `immediate` (interact,
/// store and reuse nothing), `reference` (index, excerpt, link back),
/// `full` (summarise and reproduce).
pub const USE_LEVELS: &[&str] = &["immediate", "reference", "full"];

/// True for a Content Signal the policy defines with a value it defines:
/// `search`, `ai-input`, `ai-train` with `yes` or `no`, and `use` with one
/// of [`USE_LEVELS`].
pub fn signal_known(name: &str, value: &str) -> bool {
    if name == "use" {
        USE_LEVELS.contains(&value)
    } else {
        SIGNALS.contains(&name) && SIGNAL_VALUES.contains(&value)
    }
}

/// Longest preference value read (a robots.txt line is at most that long
/// anyway; an HTTP header may be longer and is refused past it).
pub const MAX_PREFERENCE_BYTES: usize = 8 * 1024;

/// A statement of preference: each category named with a `y` or `n`
/// Token, the keys as written (`{"train-ai": "n", "search": "y"}`).
pub type Usage = BTreeMap<String, String>;

/// A statement of preference read from its text, with what a reader
/// should know about it (each problem makes some preference unknown).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Preference {
    /// The categories with an explicit `y` or `n`.
    pub usage: Usage,
    /// Keys whose value is not the Token `y` or `n` (unknown, not an
    /// error), and categories no vocabulary defines.
    pub problems: Vec<String>,
}

/// Reads a statement of preference (the exemplary format: a structured
/// field dictionary, RFC 9651). `Err` when the text is not a dictionary:
/// then every preference is unknown, as the vocabulary says.
///
/// ```
/// use botscope_robotstxt::parse_preference;
/// let p = parse_preference("train-ai=n, search=y").unwrap();
/// assert_eq!(p.usage["train-ai"], "n");
/// assert!(parse_preference("Train-AI=n").is_err(), "keys are lowercase");
/// ```
pub fn parse_preference(value: &str) -> Result<Preference, BadPreference> {
    if value.len() > MAX_PREFERENCE_BYTES {
        return Err(BadPreference(format!(
            "{} bytes, more than {MAX_PREFERENCE_BYTES}",
            value.len()
        )));
    }
    let d: sfv::Dictionary = sfv::Parser::new(value)
        .parse()
        .map_err(|e| BadPreference(format!("not a structured-field dictionary ({e})")))?;
    let mut p = Preference::default();
    for (key, entry) in d {
        let key = key.as_str();
        let value = match entry {
            sfv::ListEntry::Item(sfv::Item {
                bare_item: sfv::BareItem::Token(t),
                ..
            }) if t.as_str() == "y" || t.as_str() == "n" => Some(t.as_str().to_owned()),
            _ => None,
        };
        if !CATEGORIES.contains(&key) {
            // Section 6.4: unknown labels MUST be ignored.
            p.problems.push(match retired(key) {
                Some(why) => format!(
                    "`{key}` is not a category of {VOCABULARY}: {why}; readers ignore it"
                ),
                None => format!(
                    "`{key}` is not a category of {VOCABULARY} (train-ai, ai-use, search); readers ignore it"
                ),
            });
            continue;
        }
        match value {
            Some(v) => {
                p.usage.insert(key.to_owned(), v);
            }
            None => p.problems.push(format!(
                "`{key}` has no `y` or `n` Token value: its preference is unknown"
            )),
        }
    }
    Ok(p)
}

/// One `Content-Usage` rule of a robots.txt group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UsageRule {
    /// The path pattern (`/` when the line gave none, as the first drafts
    /// allowed).
    pub path: String,
    /// Whether the line wrote a path.
    pub has_path: bool,
    /// The preference as written.
    pub preference: String,
    /// The categories it states (none when it cannot be read).
    pub usage: Usage,
    /// Why the preference cannot be read, when it cannot: the rule still
    /// decides for its path, with every preference unknown, so a shorter
    /// rule does not speak for that path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unreadable: Option<String>,
}

/// Why a `Content-Usage` value is not a statement of preference (too
/// large, not a structured-field dictionary, a path without one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadPreference(pub String);

impl std::fmt::Display for BadPreference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadPreference {}

/// Reads a `Content-Usage` value: `PATH PREFERENCE`, or a preference alone
/// (the path then is `/`), with the problems of its entries. A value with
/// no preference, or one that is not a dictionary, gives a rule with
/// `unreadable` set and no usage: it still holds its path.
///
/// ```
/// use botscope_robotstxt::parse_usage_rule;
/// let (rule, problems) = parse_usage_rule("/docs/ train-ai=n, bots=n");
/// assert_eq!((rule.path.as_str(), rule.usage.len()), ("/docs/", 1));
/// assert!(problems[0].contains("removed by draft-ietf-aipref-vocab-05"));
/// let (rule, _) = parse_usage_rule("/docs/ Train-AI=n");
/// assert_eq!(rule.path, "/docs/");
/// assert!(rule.unreadable.is_some() && rule.usage.is_empty());
/// ```
pub fn parse_usage_rule(value: &str) -> (UsageRule, Vec<String>) {
    let value = value.trim_matches([' ', '\t']);
    let (path, pref, has_path) = if value.starts_with('/') {
        match value.find([' ', '\t']) {
            Some(i) => (&value[..i], value[i..].trim_matches([' ', '\t']), true),
            None => (value, "", true),
        }
    } else {
        ("/", value, false)
    };
    let mut rule = UsageRule {
        path: path.to_owned(),
        has_path,
        preference: pref.to_owned(),
        usage: Usage::new(),
        unreadable: None,
    };
    if pref.is_empty() {
        rule.unreadable = Some("a path and no preference (`/ train-ai=n`)".into());
        return (rule, Vec::new());
    }
    match parse_preference(pref) {
        Ok(p) => {
            rule.usage = p.usage;
            (rule, p.problems)
        }
        Err(why) => {
            rule.unreadable = Some(why.0);
            (rule, Vec::new())
        }
    }
}

/// Reads the `Content-Usage` header fields of one response: their lines
/// combined into one field value (RFC 9110 section 5.3, joined with a
/// comma) and parsed as one Dictionary (RFC 9651 section 4.2), so a key
/// repeated in a later line replaces the earlier one, and a line that
/// breaks the Dictionary leaves every preference unknown (`Err`), as
/// draft-ietf-aipref-vocab-08 section 6.5 says of a failed parse.
///
/// ```
/// use botscope_robotstxt::parse_usage_header;
/// let p = parse_usage_header(&["train-ai=n", "search=y, train-ai=y"]).unwrap();
/// assert_eq!((p.usage["train-ai"].as_str(), p.usage["search"].as_str()), ("y", "y"));
/// assert!(parse_usage_header(&["train-ai=n", "Search=y"]).is_err());
/// ```
pub fn parse_usage_header<S: AsRef<str>>(lines: &[S]) -> Result<Preference, BadPreference> {
    let lines: Vec<&str> = lines
        .iter()
        .map(|l| l.as_ref().trim_matches([' ', '\t']))
        .filter(|l| !l.is_empty())
        .collect();
    if lines.is_empty() {
        return Ok(Preference::default());
    }
    parse_preference(&lines.join(", "))
}

/// Combines statements toward the restrictive: per category, `n` if any
/// says `n`, else `y`.
pub fn combine<'a>(statements: impl IntoIterator<Item = &'a Usage>) -> Usage {
    let mut out = Usage::new();
    for s in statements {
        for (k, v) in s {
            match out.get_mut(k) {
                Some(old) if old == "n" => {}
                Some(old) => v.clone_into(old),
                None => {
                    out.insert(k.clone(), v.clone());
                }
            }
        }
    }
    out
}

/// A statement or a signal map as text: `train-ai=n, search=y`.
pub fn show(m: &BTreeMap<String, String>) -> String {
    m.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Maps an IETF statement to Cloudflare's signals (`train-ai` →
/// `ai-train`, `ai-use` → `ai-input`, `search` → `search`; `y`/`n` →
/// `yes`/`no`), for files that state both.
pub fn usage_to_signals(usage: &Usage) -> Vec<(String, String)> {
    usage
        .iter()
        .filter_map(|(k, v)| {
            let name = match k.as_str() {
                "train-ai" => "ai-train",
                "ai-use" => "ai-input",
                "search" => "search",
                _ => return None,
            };
            Some((
                name.to_owned(),
                if v == "y" { "yes" } else { "no" }.to_owned(),
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_values() {
        let p = parse_preference("train-ai=n, search=y;v=1, ai-use").expect("dict");
        assert_eq!(p.usage.len(), 2);
        assert_eq!(p.problems.len(), 1);
        assert!(parse_preference("train-ai=n,").is_err());
        assert!(parse_preference(&"a=y,".repeat(3000)).is_err(), "size cap");
        assert_eq!(
            usage_to_signals(&p.usage),
            [
                ("search".to_owned(), "yes".to_owned()),
                ("ai-train".to_owned(), "no".to_owned())
            ]
        );
    }

    /// A statement's text and the usage it reads as (`None`: unreadable).
    type Case<'a> = (&'a str, Option<&'a [(&'a str, &'a str)]>);

    /// draft-ietf-aipref-vocab-08, section 6.5: "If the value is a Token
    /// with a value of `y` ... allow"; "`n` ... disallow"; "Otherwise, the
    /// preference for that category is unknown", including "values that
    /// are not Tokens, and Token values that are other than `y` or `n`";
    /// "If the parsing of the Dictionary fails, preferences are unknown.
    /// This includes where keys include uppercase characters".
    #[test]
    fn the_processing_algorithm() {
        let cases: &[Case<'_>] = &[
            (
                "train-ai=y, search=n",
                Some(&[("train-ai", "y"), ("search", "n")]),
            ),
            ("ai-use=n", Some(&[("ai-use", "n")])),
            ("train-ai=\"n\"", Some(&[])),
            ("train-ai=N", Some(&[])),
            ("train-ai=yes, search=?1", Some(&[])),
            ("Train-AI=n", None),
            ("train-ai=n, SEARCH=y", None),
            ("train-ai=n;", None),
            // Section 6.5.1: the last of a repeated key applies.
            ("train-ai=y, train-ai, search=n, search=\"n\"", Some(&[])),
            // Section 6.5.2: parameters are ignored, only the selected
            // value's apply.
            ("train-ai;allow=n, train-ai=y", Some(&[("train-ai", "y")])),
            ("train-ai=n;x=1", Some(&[("train-ai", "n")])),
            // Section 6.4: unknown labels MUST be ignored.
            (
                "bots=n, all=n, train-genai=n, ai-output=n, foo=n",
                Some(&[]),
            ),
        ];
        for (text, want) in cases {
            let got = parse_preference(text).ok().map(|p| p.usage);
            let want = want.map(|w| {
                w.iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect::<Usage>()
            });
            assert_eq!(got, want, "{text}");
        }
    }

    #[test]
    fn retired_labels_name_the_draft_that_dropped_them() {
        let p = parse_preference("bots=n, train-genai=n, ai-output=y, all=n, inference=n, zzz=n")
            .expect("dict");
        assert!(p.usage.is_empty());
        let joined = p.problems.join("\n");
        for (label, draft) in [
            ("bots", "draft-ietf-aipref-vocab-05"),
            ("train-genai", "draft-ietf-aipref-vocab-04"),
            ("ai-output", "draft-ietf-aipref-vocab-05"),
            ("all", "draft-ietf-aipref-vocab-03"),
            ("inference", "draft-ietf-aipref-vocab-02"),
        ] {
            let line = p
                .problems
                .iter()
                .find(|l| l.starts_with(&format!("`{label}`")))
                .unwrap_or_else(|| panic!("{label}: {joined}"));
            assert!(line.contains(draft), "{line}");
        }
        assert!(joined.contains("`zzz` is not a category of draft-ietf-aipref-vocab-08"));
        for (name, _) in RETIRED_CATEGORIES {
            assert!(!CATEGORIES.contains(name), "{name}");
        }
    }

    /// RFC 9651 section 4.2: the field lines of one field are combined
    /// before parsing, so a later line's key replaces an earlier one, and
    /// one bad line fails the whole field.
    #[test]
    fn header_lines_are_one_dictionary() {
        let p = parse_usage_header(&["train-ai=n", " ", "train-ai=y, search=n"]).expect("dict");
        assert_eq!(p.usage["train-ai"], "y");
        assert_eq!(p.usage["search"], "n");
        assert!(parse_usage_header(&["train-ai=n", "search=\"y"]).is_err());
        assert!(
            parse_usage_header::<&str>(&[])
                .expect("none")
                .usage
                .is_empty()
        );
    }
}
