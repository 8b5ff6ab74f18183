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
//! statements; and a path the agent may not crawl has no preference.
//! Everything here is pure: strings in, values out.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::parse::{Located, Robots};

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
pub fn parse_preference(value: &str) -> Result<Preference, String> {
    if value.len() > MAX_PREFERENCE_BYTES {
        return Err(format!(
            "{} bytes, more than {MAX_PREFERENCE_BYTES}",
            value.len()
        ));
    }
    let d: sfv::Dictionary = sfv::Parser::new(value)
        .parse()
        .map_err(|e| format!("not a structured-field dictionary ({e})"))?;
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

/// Reads a `Content-Usage` value: `PATH PREFERENCE`, or a preference alone
/// (the path then is `/`). `Err` when there is no preference or it is not
/// a dictionary; the `Ok` value carries the problems of its entries.
pub fn parse_usage_rule(value: &str) -> Result<(UsageRule, Vec<String>), String> {
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
        return Err("a path and no preference (`/ train-ai=n`)".into());
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

/// A signal's value for combining: `no` is the restrictive one.
fn combine_signals<'a>(
    statements: impl IntoIterator<Item = &'a Vec<crate::parse::Signal>>,
) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for s in statements {
        for sig in s {
            match out.get_mut(&sig.name) {
                Some(old) if old == "no" => {}
                Some(old) => sig.value.clone_into(old),
                None => {
                    out.insert(sig.name.clone(), sig.value.clone());
                }
            }
        }
    }
    out
}

/// The preferences a site states for one agent and one path.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Preferences {
    /// The Content-Usage preference in force (`None`: the file states none
    /// for this path, or the agent may not crawl it).
    pub usage: Option<Usage>,
    /// The lines of the Content-Usage rules that decided.
    pub usage_lines: Vec<u32>,
    /// The Content-Signal in force for the agent (its groups' lines and
    /// those before any group), if any.
    pub content_signal: Option<BTreeMap<String, String>>,
    /// The lines of the Content-Signal entries.
    pub signal_lines: Vec<u32>,
}

impl Robots {
    /// The usage preferences for `token` (its groups as Google selects
    /// them) at `path` (the URL's path and query, as the matcher reads
    /// it), when `allowed` says the agent may crawl it. Cost: one pattern
    /// match per Content-Usage rule of the agent's groups.
    ///
    /// ```
    /// use botscope_robotstxt::Robots;
    /// let r = Robots::parse(b"User-Agent: *\nAllow: /\nContent-Usage: / train-ai=n\nContent-Usage: /ai-ok/ train-ai=y\n");
    /// let p = r.preferences("ExampleBot", b"/ai-ok/test", true);
    /// assert_eq!(p.usage.unwrap()["train-ai"], "y");
    /// assert_eq!(r.preferences("ExampleBot", b"/test", true).usage.unwrap()["train-ai"], "n");
    /// assert_eq!(r.preferences("ExampleBot", b"/test", false).usage, None);
    /// ```
    pub fn preferences(&self, token: &str, path: &[u8], allowed: bool) -> Preferences {
        let groups = self.groups_for(token);
        let mut out = Preferences::default();
        let signals: Vec<&Located<Vec<crate::parse::Signal>>> = self
            .content_signals
            .iter()
            .chain(groups.iter().flat_map(|g| g.content_signals.iter()))
            .collect();
        if !signals.is_empty() {
            out.content_signal = Some(combine_signals(signals.iter().map(|l| &l.value)));
            out.signal_lines = signals.iter().map(|l| l.line).collect();
        }
        if !allowed {
            return out;
        }
        let mut best: Option<usize> = None;
        let mut deciding: Vec<&Located<UsageRule>> = Vec::new();
        for l in groups.iter().flat_map(|g| g.content_usage.iter()) {
            let pat = crate::url::escape_pattern(l.value.path.as_bytes());
            if !crate::matcher::pattern_matches(path, &pat) {
                continue;
            }
            let len = pat.len();
            match best {
                Some(b) if len < b => {}
                Some(b) if len == b => deciding.push(l),
                _ => {
                    best = Some(len);
                    deciding.clear();
                    deciding.push(l);
                }
            }
        }
        if !deciding.is_empty() {
            out.usage = Some(combine(deciding.iter().map(|l| &l.value.usage)));
            out.usage_lines = deciding.iter().map(|l| l.line).collect();
        }
        out
    }

    /// Whether the file states any usage preference (a Content-Usage rule
    /// or a Content-Signal line) anywhere.
    pub fn states_preferences(&self) -> bool {
        !self.content_signals.is_empty()
            || self
                .groups
                .iter()
                .any(|g| !g.content_usage.is_empty() || !g.content_signals.is_empty())
    }
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
    use crate::Matcher;

    fn codes(r: &Robots) -> Vec<(u32, &'static str)> {
        r.diagnostics
            .iter()
            .map(|d| (d.line, d.code.as_str()))
            .collect()
    }

    /// The attach draft's example file and its table of paths.
    #[test]
    fn the_attach_drafts_example() {
        let body = b"User-Agent: *\nAllow: /\nDisallow: /never/\nContent-Usage: / train-ai=n\nContent-Usage: /ai-ok/ train-ai=y\n\nUser-Agent: ExampleBot\nAllow: /\nContent-Usage: / train-ai=y\n";
        let r = Robots::parse(body);
        assert!(codes(&r).is_empty(), "{:?}", r.diagnostics);
        let m = Matcher::new(body);
        let at = |agent: &str, path: &str| {
            let allowed = m.check(agent, path).allowed;
            r.preferences(agent, path.as_bytes(), allowed)
                .usage
                .map(|u| u["train-ai"].clone())
        };
        assert_eq!(at("OtherBot", "/test").as_deref(), Some("n"));
        assert_eq!(
            at("OtherBot", "/never/test"),
            None,
            "not crawlable: no preference"
        );
        assert_eq!(at("OtherBot", "/ai-ok/test").as_deref(), Some("y"));
        assert_eq!(at("ExampleBot", "/never/test").as_deref(), Some("y"));
        let p = r.preferences("OtherBot", b"/ai-ok/x", true);
        assert_eq!(p.usage_lines, [5]);
    }

    #[test]
    fn same_length_paths_combine_toward_the_restrictive() {
        let r = Robots::parse(
            b"User-agent: *\nContent-Usage: /a train-ai=y, search=y\nContent-Usage: /a train-ai=n\nContent-Usage: /ab* ai-use=y\nContent-Usage: /*.pdf$ train-ai=y\n",
        );
        let p = r.preferences("x", b"/a/b", true);
        let u = p.usage.expect("usage");
        assert_eq!(u["train-ai"], "n");
        assert_eq!(u["search"], "y");
        assert!(!u.contains_key("ai-use"), "{u:?}");
        let p = r.preferences("x", b"/abc", true);
        assert_eq!(p.usage.expect("usage")["ai-use"], "y");
        let p = r.preferences("x", b"/doc.pdf", true);
        assert_eq!(p.usage.expect("usage")["train-ai"], "y");
        assert_eq!(r.preferences("x", b"/doc.pdf?x", true).usage, None);
    }

    #[test]
    fn malformed_and_unknown_entries_are_diagnosed() {
        let r = Robots::parse(
            b"Content-Usage: / train-ai=n\nUser-agent: *\nContent-Usage: train-ai=n\nContent-Usage: / Train-AI=n\nContent-Usage: /x\nContent-Usage: / train-genai=n, search=\"y\", ai-use=maybe\nContent-Signal: ai-train=no, ai-training=no, search=perhaps\n",
        );
        assert_eq!(
            codes(&r),
            [
                (1, "R034"),
                (3, "R033"),
                (4, "R031"),
                (5, "R031"),
                (6, "R032"),
                (6, "R032"),
                (6, "R032"),
                (7, "R035"),
                (7, "R035"),
            ]
        );
        // What could be read still counts: the rule without a path, and the
        // earlier draft's category (kept as written).
        let p = r.preferences("x", b"/", true);
        let u = p.usage.expect("usage");
        assert_eq!(u.get("train-ai").map(String::as_str), Some("n"));
        assert_eq!(u.get("train-genai").map(String::as_str), Some("n"));
        assert!(!u.contains_key("search"), "a string is not the token y");
        assert_eq!(p.content_signal.expect("signal")["ai-train"], "no");
    }

    #[test]
    fn signals_of_the_agents_groups_and_before_any_group() {
        let r = Robots::parse(
            b"Content-Signal: search=yes\nUser-agent: *\nContent-Signal: ai-train=yes\nAllow: /\nUser-agent: GPTBot\nContent-Signal: ai-train=no, search=no\n",
        );
        let p = r.preferences("GPTBot", b"/", false);
        let s = p.content_signal.expect("signal");
        assert_eq!((s["ai-train"].as_str(), s["search"].as_str()), ("no", "no"));
        assert_eq!(p.signal_lines, [1, 6]);
        let s = r
            .preferences("Other", b"/", true)
            .content_signal
            .expect("signal");
        assert_eq!(
            (s["ai-train"].as_str(), s["search"].as_str()),
            ("yes", "yes")
        );
        assert!(r.states_preferences());
        assert!(!Robots::parse(b"User-agent: *\nDisallow: /\n").states_preferences());
    }

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
