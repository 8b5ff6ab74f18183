//! Text for people: a verdict with its deciding line, diagnostics in the
//! compiler style, the outline of a parse, the summary of robots meta
//! directives. The command line and the web pages show the same words.

use std::fmt::Write;

use crate::{Diagnostic, GroupMatch, ImagePreview, MetaReport, Robots, Verdict};

impl Verdict<'_> {
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
            if let Some(c) = &g.request_rate {
                let _ = writeln!(
                    s,
                    "  {:>5}  Request-rate {}/{}s",
                    c.line, c.value.requests, c.value.seconds
                );
            }
        }
        for m in &self.sitemaps {
            let _ = writeln!(s, "sitemap (line {}): {}", m.line, m.value);
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
            parts.push(format!("unavailable_after:{u}"));
        }
        let summary = if parts.is_empty() {
            "index, follow (no restrictions)".to_owned()
        } else {
            parts.join(", ")
        };
        let mut s = format!("{}: {summary}\n", self.agent);
        for src in &self.sources {
            let place = if src.origin == "meta" {
                format!("line {}", src.line)
            } else {
                "header".to_owned()
            };
            let _ = writeln!(s, "  {place}: {} {:?}", src.name, src.content);
        }
        for w in &self.warnings {
            let _ = writeln!(s, "  warning[{}] line {}: {}", w.code, w.line, w.message);
        }
        s
    }
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
