//! The usage preferences a parsed robots.txt states for one agent and one
//! path: its groups' Content-Usage rule with the longest matching path
//! (same-length paths combined toward the restrictive), only where the
//! agent may crawl, and the Content-Signal lines of its groups and of the
//! file's top (the vocabulary and its parsing are in `usage.rs`).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::parse::{Located, Robots, Signal};
use crate::usage::{USE_LEVELS, Usage, UsageRule, combine, signal_known};

/// The signals in force, combined: `no` is the restrictive one, and of
/// `use` levels the lowest. Only the policy's own vocabulary counts
/// (`search`, `ai-input`, `ai-train`, each `yes` or `no`; `use`,
/// `immediate`, `reference` or `full`); any other name or value is
/// unknown, not passed on.
fn combine_signals<'a>(
    statements: impl IntoIterator<Item = &'a Vec<Signal>>,
) -> BTreeMap<String, String> {
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    for s in statements {
        for sig in s.iter().filter(|s| signal_known(&s.name, &s.value)) {
            let level = |v: &str| USE_LEVELS.iter().position(|l| *l == v);
            match out.get_mut(&sig.name) {
                Some(old) if sig.name == "use" => {
                    // The most restrictive level stated.
                    if level(&sig.value) < level(old.as_str()) {
                        sig.value.clone_into(old);
                    }
                }
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
    /// for this path, or the agent may not crawl it; a category it lacks
    /// is unknown).
    pub usage: Option<Usage>,
    /// The lines of the Content-Usage rules that decided.
    pub usage_lines: Vec<u32>,
    /// Those of them that cannot be read: they decide with every
    /// preference unknown.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unreadable_lines: Vec<u32>,
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
        let signals: Vec<&Located<Vec<Signal>>> = self
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
            out.unreadable_lines = deciding
                .iter()
                .filter(|l| l.value.unreadable.is_some())
                .map(|l| l.line)
                .collect();
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
        let unknown = r.diagnostics.iter().find(|d| d.line == 6).expect("line 6");
        assert!(
            unknown
                .message
                .contains("removed by draft-ietf-aipref-vocab-04"),
            "the draft that dropped it: {}",
            unknown.message
        );
        // `/` has two rules of the same length: line 3 (read) and line 4
        // (cannot be read, so it adds nothing) and line 6 whose entries
        // all read as unknown.
        let p = r.preferences("x", b"/", true);
        let u = p.usage.expect("usage");
        assert_eq!(u.get("train-ai").map(String::as_str), Some("n"));
        assert!(!u.contains_key("train-genai"), "a retired label is ignored");
        assert!(!u.contains_key("search"), "a string is not the token y");
        assert!(!u.contains_key("ai-use"), "maybe is not the token y");
        assert_eq!(p.usage_lines, [3, 4, 6]);
        assert_eq!(p.unreadable_lines, [4]);
        let s = p.content_signal.expect("signal");
        assert_eq!(s["ai-train"], "no");
        assert!(
            !s.contains_key("ai-training") && !s.contains_key("search"),
            "names and values outside the policy are unknown, not passed on: {s:?}"
        );
    }

    /// draft-ietf-aipref-attach-05 section 3.4: the longest matching rule
    /// decides. A rule that cannot be read still covers its path, with
    /// every preference unknown, so the shorter `/` rule does not speak
    /// for `/x`.
    #[test]
    fn an_unreadable_rule_makes_its_own_path_unknown() {
        let r = Robots::parse(
            b"User-agent: *\nAllow: /\nContent-Usage: / train-ai=n\nContent-Usage: /x Train-AI=y\nContent-Usage: /y\n",
        );
        for path in [&b"/x/page"[..], b"/y"] {
            let p = r.preferences("x", path, true);
            assert_eq!(p.usage, Some(Usage::new()), "{path:?}: all unknown");
            assert_eq!(p.unreadable_lines, p.usage_lines);
        }
        let p = r.preferences("x", b"/z", true);
        assert_eq!(p.usage.expect("usage")["train-ai"], "n");
        assert!(p.unreadable_lines.is_empty());
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

    /// Cloudflare's managed robots.txt writes `use=reference` (July 2026):
    /// read without a warning, and of two levels the more restrictive.
    #[test]
    fn the_use_signal_of_cloudflares_managed_file() {
        let r = Robots::parse(
            b"Content-Signal: use=full\nUser-agent: *\nContent-Signal: search=yes,ai-train=no,use=reference\nAllow: /\nUser-agent: b\nContent-Signal: use=sometimes\n",
        );
        let warned: Vec<u32> = r.diagnostics.iter().map(|d| d.line).collect();
        assert_eq!(warned, [6], "{:?}", r.diagnostics);
        let s = r
            .preferences("Any", b"/", true)
            .content_signal
            .expect("signal");
        assert_eq!(s["use"], "reference");
        assert_eq!(s["ai-train"], "no");
        let s = r
            .preferences("b", b"/", true)
            .content_signal
            .expect("signal");
        assert_eq!(s["use"], "full", "an unknown level is not passed on");
    }
}
