//! Text for people: a verdict with its deciding line, diagnostics in the
//! compiler style, the outline of a parse, the summary of robots meta
//! directives. The command line and the web pages show the same words.

use std::fmt::Write;

use crate::{Diagnostic, GroupMatch, ImagePreview, MetaReport, Robots, Verdict};

impl Verdict<'_> {
    /// `allowed` or `disallowed`.
    pub fn word(&self) -> &'static str {
        if self.allowed {
            "allowed"
        } else {
            "disallowed"
        }
    }

    /// `{"verdict", "rule": {"line", "kind", "pattern"} | null, "group"}`,
    /// the JSON of `check` and `check-batch`.
    pub fn to_json(&self) -> serde_json::Value {
        let rule = match self.rule {
            Some(r) => {
                serde_json::json!({ "line": r.line, "kind": r.kind, "pattern": r.pattern_str() })
            }
            None => serde_json::Value::Null,
        };
        serde_json::json!({ "verdict": self.word(), "rule": rule, "group": self.group })
    }

    /// The whole answer `robots check --format json` gives for one URL:
    /// [`Verdict::to_json`] with the URL, the agent, the semantics, and the
    /// usage preferences the agent meets there.
    pub fn check_json(
        &self,
        url: &str,
        agent: &str,
        semantics: crate::Semantics,
        prefs: &crate::Preferences,
    ) -> serde_json::Value {
        let mut obj = self.to_json();
        obj["url"] = url.into();
        obj["agent"] = agent.into();
        obj["semantics"] = semantics.as_str().into();
        obj["allowed"] = self.allowed.into();
        obj["usage"] = serde_json::to_value(&prefs.usage).unwrap_or_default();
        obj["content_signal"] = serde_json::to_value(&prefs.content_signal).unwrap_or_default();
        obj
    }

    /// `line 2: disallow: /private in the * group`, or `no rule matched in
    /// its own group`.
    pub fn describe(&self) -> String {
        let group = match self.group {
            GroupMatch::Specific => "its own group",
            GroupMatch::Global => "the * group",
            GroupMatch::None => "no group",
        };
        match self.rule {
            Some(r) if r.pattern.is_empty() => format!(
                "line {}: {}: (empty, matches all) in {group}",
                r.line,
                r.kind.as_str()
            ),
            Some(r) => format!(
                "line {}: {}: {} in {group}",
                r.line,
                r.kind.as_str(),
                r.pattern_str()
            ),
            None => format!("no rule matched in {group}"),
        }
    }
}

impl Diagnostic {
    /// `FILE:LINE:COL: error[R002 rule-outside-group]: message`, and a
    /// `  help:` line when there is a suggestion; each line ends in `\n`.
    pub fn render(&self, file: &str) -> String {
        let mut s = format!(
            "{file}:{}:{}: {}[{} {}]: {}\n",
            self.line, self.column, self.severity, self.code, self.name, self.message
        );
        if let Some(h) = &self.suggestion {
            let _ = writeln!(s, "  help: {h}");
        }
        s
    }
}

impl Robots {
    /// The parse in a few lines: sizes, each group with its rules and
    /// extensions by line, sitemaps, then the parser's diagnostics.
    pub fn outline(&self, file: &str) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{file}: {} bytes, {} lines, {} group(s), {} sitemap(s)",
            self.total_bytes,
            self.lines,
            self.groups.len(),
            self.sitemaps.len()
        );
        for g in &self.groups {
            let agents: Vec<&str> = g.user_agents.iter().map(|u| u.value.as_str()).collect();
            let first = g.user_agents.first().map_or(0, |u| u.line);
            let _ = writeln!(s, "group (line {first}): {}", agents.join(", "));
            for r in &g.rules {
                let _ = writeln!(s, "  {:>5}  {:<8} {}", r.line, r.kind.as_str(), r.pattern);
            }
            if let Some(c) = &g.crawl_delay {
                let _ = writeln!(s, "  {:>5}  Crawl-delay {}", c.line, c.value);
            }
            for c in &g.content_signals {
                let _ = writeln!(s, "  {:>5}  Content-Signal {}", c.line, signals(&c.value));
            }
            if let Some(c) = &g.request_rate {
                let _ = writeln!(
                    s,
                    "  {:>5}  Request-rate {}/{}s",
                    c.line, c.value.requests, c.value.seconds
                );
            }
        }
        for c in &self.content_signals {
            let _ = writeln!(
                s,
                "content-signal (line {}, every crawler): {}",
                c.line,
                signals(&c.value)
            );
        }
        for m in &self.sitemaps {
            let _ = writeln!(s, "sitemap (line {}): {}", m.line, m.value);
        }
        for l in &self.licenses {
            let _ = writeln!(s, "license (line {}, every crawler): {}", l.line, l.url);
        }
        for d in &self.diagnostics {
            s.push_str(&d.render(file));
        }
        s
    }
}

impl MetaReport {
    /// `Googlebot: noindex, max-snippet:50`, then one line per source
    /// (meta tag by line, or header) and per warning.
    pub fn summary(&self) -> String {
        let d = &self.directives;
        let flags = [
            ("noindex", d.noindex),
            ("nofollow", d.nofollow),
            ("noarchive", d.noarchive),
            ("nosnippet", d.nosnippet),
            ("noimageindex", d.noimageindex),
            ("notranslate", d.notranslate),
            ("indexifembedded", d.indexifembedded),
        ];
        let mut parts: Vec<String> = flags
            .iter()
            .filter(|(_, on)| *on)
            .map(|(n, _)| (*n).to_owned())
            .collect();
        if let Some(n) = d.max_snippet {
            parts.push(format!("max-snippet:{n}"));
        }
        if let Some(p) = d.max_image_preview {
            let p = match p {
                ImagePreview::None => "none",
                ImagePreview::Standard => "standard",
                ImagePreview::Large => "large",
            };
            parts.push(format!("max-image-preview:{p}"));
        }
        if let Some(n) = d.max_video_preview {
            parts.push(format!("max-video-preview:{n}"));
        }
        if let Some(u) = &d.unavailable_after {
            if d.unavailable_after_passed {
                parts.push(format!("noindex now (unavailable_after {u} has passed)"));
            } else {
                parts.push(format!("unavailable_after:{u}"));
            }
        }
        let summary = if parts.is_empty() {
            "index, follow (no restrictions)".to_owned()
        } else {
            parts.join(", ")
        };
        let mut s = format!("{}: {summary}\n", self.agent);
        if let Some(u) = &self.usage {
            let _ = writeln!(s, "  usage: {}", crate::usage::show(u));
        }
        let place =
            |line: Option<u32>| line.map_or_else(|| "header".to_owned(), |l| format!("line {l}"));
        for src in &self.sources {
            let _ = writeln!(s, "  {}: {} {:?}", place(src.line), src.name, src.content);
        }
        for w in &self.warnings {
            let _ = writeln!(s, "  warning[{}] {}: {}", w.code, place(w.line), w.message);
        }
        s
    }
}

/// How many diagnostics of one code are shown before the rest are folded
/// into one line.
pub const SHOWN_PER_CODE: usize = 3;

/// `robots lint` for people: the diagnostics at `min` severity or above
/// in line order, a code seen more than [`SHOWN_PER_CODE`] times shown
/// that often and the rest folded into one line with their line numbers,
/// then the summary line (`FILE: 1 error, 2 warnings, 44 info`, the
/// severities' own words, counting every diagnostic, shown or not).
pub fn lint_report(diags: &[Diagnostic], file: &str, min: crate::Severity) -> String {
    use std::collections::HashMap;
    let mut s = String::new();
    let mut seen: HashMap<crate::Code, usize> = HashMap::new();
    let mut folded: Vec<(crate::Code, Vec<u32>)> = Vec::new();
    for d in diags.iter().filter(|d| d.severity >= min) {
        let n = seen.entry(d.code).or_insert(0);
        *n += 1;
        if *n <= SHOWN_PER_CODE {
            s.push_str(&d.render(file));
            continue;
        }
        match folded.iter_mut().find(|(c, _)| *c == d.code) {
            Some((_, lines)) => lines.push(d.line),
            None => folded.push((d.code, vec![d.line])),
        }
    }
    for (code, lines) in &folded {
        let shown: Vec<String> = lines.iter().take(10).map(u32::to_string).collect();
        let more = if lines.len() > 10 { ", …" } else { "" };
        let _ = writeln!(
            s,
            "{file}: … {} more {}[{} {}] at lines {}{more}",
            lines.len(),
            code.severity(),
            code.as_str(),
            code.name(),
            shown.join(", ")
        );
    }
    let count = |sev: crate::Severity| diags.iter().filter(|d| d.severity == sev).count();
    let (errors, warnings) = (
        count(crate::Severity::Error),
        count(crate::Severity::Warning),
    );
    let _ = writeln!(
        s,
        "{file}: {errors} error{}, {warnings} warning{}, {} info",
        if errors == 1 { "" } else { "s" },
        if warnings == 1 { "" } else { "s" },
        count(crate::Severity::Info)
    );
    s
}

/// `robots lint --format json`: `{"file", "errors", "warnings",
/// "diagnostics"}`, the diagnostics at `min` or above, the counts of all.
pub fn lint_json(diags: &[Diagnostic], file: &str, min: crate::Severity) -> serde_json::Value {
    let count = |sev: crate::Severity| diags.iter().filter(|d| d.severity == sev).count();
    let shown: Vec<&Diagnostic> = diags.iter().filter(|d| d.severity >= min).collect();
    serde_json::json!({
        "file": file,
        "errors": count(crate::Severity::Error),
        "warnings": count(crate::Severity::Warning),
        "diagnostics": shown,
    })
}

/// The diagnostics at `min` or above as a SARIF 2.1.0 log, the format code
/// scanning in CI reads: one run, the rules by code, one result each.
pub fn lint_sarif(diags: &[Diagnostic], file: &str, min: crate::Severity) -> serde_json::Value {
    use serde_json::json;
    let level = |s: crate::Severity| match s {
        crate::Severity::Error => "error",
        crate::Severity::Warning => "warning",
        crate::Severity::Info => "note",
    };
    let shown: Vec<&Diagnostic> = diags.iter().filter(|d| d.severity >= min).collect();
    let mut codes: Vec<crate::Code> = shown.iter().map(|d| d.code).collect();
    codes.sort_unstable();
    codes.dedup();
    let rules: Vec<serde_json::Value> = codes
        .iter()
        .map(|c| {
            json!({
                "id": c.as_str(),
                "name": c.name(),
                "shortDescription": { "text": c.name().replace('-', " ") },
                "helpUri": format!(
                    "{}/blob/main/docs/lint-codes.md#{}",
                    env!("CARGO_PKG_REPOSITORY"),
                    c.as_str().to_ascii_lowercase()
                ),
                "defaultConfiguration": { "level": level(c.severity()) },
            })
        })
        .collect();
    let results: Vec<serde_json::Value> = shown
        .iter()
        .map(|d| {
            let mut message = d.message.clone();
            if let Some(h) = &d.suggestion {
                message.push_str(" (");
                message.push_str(h);
                message.push(')');
            }
            json!({
                "ruleId": d.code.as_str(),
                "ruleIndex": codes.iter().position(|c| *c == d.code),
                "level": level(d.severity),
                "message": { "text": message },
                "locations": [{
                    "physicalLocation": {
                        "artifactLocation": { "uri": file },
                        "region": { "startLine": d.line.max(1), "startColumn": d.column.max(1) },
                    }
                }],
            })
        })
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "botscope",
                "informationUri": env!("CARGO_PKG_REPOSITORY"),
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "results": results,
        }],
    })
}

/// `search=yes, ai-train=no`.
fn signals(v: &[crate::Signal]) -> String {
    v.iter()
        .map(|x| format!("{}={}", x.name, x.value))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use crate::{Matcher, MetaReport, Robots};

    #[test]
    fn words_for_people() {
        let m = Matcher::new(b"User-agent: *\nDisallow: /private\n");
        assert_eq!(
            m.check_path("bot", b"/private/x").describe(),
            "line 2: Disallow: /private in the * group"
        );
        assert_eq!(
            m.check_path("bot", b"/open").describe(),
            "no rule matched in the * group"
        );
        let r = Robots::parse(b"Disallow: /x\nUser-agent: a\nDisallow: /y\n");
        let outline = r.outline("robots.txt");
        assert!(outline.starts_with("robots.txt: "), "{outline}");
        assert!(
            outline.contains("group (line 2): a\n      3  Disallow /y\n"),
            "{outline}"
        );
        let meta = MetaReport::from_html(
            b"<meta name=robots content='noindex, max-image-preview:large'>",
            "Googlebot",
        );
        assert!(
            meta.summary()
                .starts_with("Googlebot: noindex, max-image-preview:large\n"),
            "{}",
            meta.summary()
        );
    }
}
