//! AI usage preferences, in both dialects a site writes them:
//!
//! - the IETF aipref drafts: a statement of preference is a structured
//!   field dictionary of categories (`train-ai`, `ai-use`, `search`) to
//!   `y` or `n` (draft-ietf-aipref-vocab), carried by a `Content-Usage`
//!   rule in a robots.txt group, with a path, and by the `Content-Usage`
//!   HTTP header (draft-ietf-aipref-attach);
//! - Cloudflare's Content Signals Policy: `Content-Signal: search=yes,
//!   ai-train=no` lines in robots.txt.
//!
//! For one agent and one path, the Content-Usage rule with the longest
//! matching path decides (byte length of the encoded path, as Allow and
//! Disallow); rules with paths of the same length combine per category
//! toward the restrictive (`n` wins), as the vocabulary combines
//! statements; and a path the agent may not crawl has no preference
//! (`preferences.rs` decides for a file, an agent and a path). Everything
//! here is pure: strings in, values out.

use std::collections::BTreeMap;

use serde::Serialize;

/// The usage categories of draft-ietf-aipref-vocab.
pub const CATEGORIES: &[&str] = &["train-ai", "ai-use", "search"];

/// Labels of earlier vocabulary drafts, still found in files: read, and
/// flagged by lint as not in the current vocabulary.
pub const FORMER_CATEGORIES: &[&str] = &["train-genai", "bots", "ai-output"];

/// The signals of Cloudflare's Content Signals Policy.
pub const SIGNALS: &[&str] = &["search", "ai-input", "ai-train"];

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
        let known = CATEGORIES.contains(&key);
        match entry {
            sfv::ListEntry::Item(sfv::Item {
                bare_item: sfv::BareItem::Token(t),
                ..
            }) if t.as_str() == "y" || t.as_str() == "n" => {
                if !known {
                    p.problems.push(if FORMER_CATEGORIES.contains(&key) {
                        format!("`{key}` is a category of an earlier vocabulary draft, not of the current one")
                    } else {
                        format!("`{key}` is not a category of the vocabulary (train-ai, ai-use, search)")
                    });
                }
                p.usage.insert(key.to_owned(), t.as_str().to_owned());
            }
            _ => p.problems.push(format!(
                "`{key}` has no `y` or `n` token value: its preference is unknown"
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
    /// The categories it states.
    pub usage: Usage,
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
/// (the path then is `/`). `Err` when there is no preference or it is not
/// a dictionary; the `Ok` value carries the problems of its entries.
pub fn parse_usage_rule(value: &str) -> Result<(UsageRule, Vec<String>), BadPreference> {
    let value = value.trim_matches([' ', '\t']);
    let (path, pref, has_path) = if value.starts_with('/') {
        match value.find([' ', '\t']) {
            Some(i) => (&value[..i], value[i..].trim_matches([' ', '\t']), true),
            None => (value, "", true),
        }
    } else {
        ("/", value, false)
    };
    if pref.is_empty() {
        return Err(BadPreference(
            "a path and no preference (`/ train-ai=n`)".into(),
        ));
    }
    let p = parse_preference(pref)?;
    Ok((
        UsageRule {
            path: path.to_owned(),
            has_path,
            preference: pref.to_owned(),
            usage: p.usage,
        },
        p.problems,
    ))
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
}
