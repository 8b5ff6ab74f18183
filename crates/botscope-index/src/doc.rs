//! What the index keeps of a robots.txt body: the values of each searchable
//! field and the bias tables under both semantics, computed once per
//! distinct body (pure: bytes in, values out).

use botscope_robotstxt::{Matcher, ParseOptions, Robots, RuleKind, Semantics};

use crate::bias::{BIAS_WORK_CAP, Detail, FileBias, Tilt, bias_and_classes};
use crate::classes::Classes;

/// The searchable values of one body.
#[derive(Debug, Clone, PartialEq)]
pub struct BodyFields {
    /// Every User-agent value, lower-cased and trimmed, and its product
    /// token (the value up to `/` or a space) when that differs.
    pub botnames: Vec<String>,
    /// Disallow values as written (trimmed), once each.
    pub disallow: Vec<String>,
    /// Allow values as written, once each.
    pub allow: Vec<String>,
    /// The `/`-separated segments of the Disallow values, lower-cased.
    pub disallow_segments: Vec<String>,
    /// The segments of the Allow values.
    pub allow_segments: Vec<String>,
    /// Every Crawl-delay, in seconds.
    pub delays: Vec<f64>,
    /// The file has a `*` group.
    pub universal: bool,
    /// Sitemap URLs, lower-cased.
    pub sitemaps: Vec<String>,
    /// Content-Signal entries as `name=value`, and each name alone,
    /// lower-cased; then Content-Usage preferences the same way, each
    /// behind `USAGE_TERM` (they share the `signal` field of the index).
    pub signals: Vec<String>,
    /// The bias under Google's rules (each robot's, no decision rows).
    pub google: FileBias,
    /// The bias under the 1996 draft.
    pub draft1996: FileBias,
    /// Every agent's restriction under both semantics, and the usage
    /// preferences stated.
    pub classes: Classes,
    /// The body as text (invalid UTF-8 replaced).
    pub text: String,
}

/// What a Content-Usage term starts with in the `signal` field: signal
/// names never hold `:`, so the two kinds of term cannot meet.
pub const USAGE_TERM: &str = "usage:";

/// The product token of a User-agent value: up to the first `/` or space.
pub fn product_token(value: &str) -> &str {
    value.split(['/', ' ', '\t']).next().unwrap_or(value)
}

/// Distinct non-empty strings in first-seen order, in time linear in
/// their number (a file naming 15,000 robots made a quadratic scan cost
/// seconds per document).
#[derive(Default)]
struct Unique {
    v: Vec<String>,
    seen: std::collections::HashSet<String>,
}

impl Unique {
    fn push(&mut self, s: String) {
        if !s.is_empty() && !self.seen.contains(&s) {
            self.seen.insert(s.clone());
            self.v.push(s);
        }
    }

    fn into_vec(self) -> Vec<String> {
        self.v
    }
}

fn segments(paths: &[String]) -> Vec<String> {
    let mut out = Unique::default();
    for p in paths {
        for s in p.split('/') {
            out.push(s.to_lowercase());
        }
    }
    out.into_vec()
}

impl BodyFields {
    /// The fields of `body`, parsed once, its bias computed under both
    /// semantics.
    pub fn of(body: &[u8]) -> BodyFields {
        let opts = ParseOptions::default();
        let robots = Robots::parse_with(body, &opts);
        let mg = Matcher::compile(body, Semantics::Google, &opts);
        let md = Matcher::compile(body, Semantics::Draft1996, &opts);
        let (google, kg) = bias_and_classes(&robots, &mg, Detail::Summary, BIAS_WORK_CAP);
        let (draft1996, kd) = bias_and_classes(&robots, &md, Detail::Summary, BIAS_WORK_CAP);
        let classes = Classes::knowing(&robots, [&mg, &md], [kg, kd]);
        let mut f = BodyFields {
            botnames: Vec::new(),
            disallow: Vec::new(),
            allow: Vec::new(),
            disallow_segments: Vec::new(),
            allow_segments: Vec::new(),
            delays: Vec::new(),
            universal: robots.groups.iter().any(|g| g.is_global()),
            sitemaps: Vec::new(),
            signals: Vec::new(),
            google,
            draft1996,
            classes,
            text: String::from_utf8_lossy(body).into_owned(),
        };
        let mut botnames = Unique::default();
        let mut delays = std::collections::HashSet::new();
        for g in &robots.groups {
            for ua in &g.user_agents {
                let v = ua.value.trim().to_lowercase();
                botnames.push(product_token(&v).to_owned());
                botnames.push(v);
            }
            if let Some(d) = &g.crawl_delay
                && delays.insert(d.value.to_bits())
            {
                f.delays.push(d.value);
            }
        }
        f.botnames = botnames.into_vec();
        let (mut allow, mut disallow) = (Unique::default(), Unique::default());
        for r in robots.rules() {
            let v = r.pattern.trim().to_owned();
            match r.kind {
                RuleKind::Allow => allow.push(v),
                RuleKind::Disallow => disallow.push(v),
            }
        }
        f.allow = allow.into_vec();
        f.disallow = disallow.into_vec();
        f.disallow_segments = segments(&f.disallow);
        f.allow_segments = segments(&f.allow);
        let mut sitemaps = Unique::default();
        for s in &robots.sitemaps {
            sitemaps.push(s.value.trim().to_lowercase());
        }
        f.sitemaps = sitemaps.into_vec();
        let signals = robots
            .content_signals
            .iter()
            .chain(robots.groups.iter().flat_map(|g| g.content_signals.iter()));
        let mut names = Unique::default();
        for line in signals {
            for s in &line.value {
                let name = s.name.trim().to_lowercase();
                names.push(format!("{name}={}", s.value.trim().to_lowercase()));
                names.push(name);
            }
        }
        for rule in robots.groups.iter().flat_map(|g| g.content_usage.iter()) {
            for (k, v) in &rule.value.usage {
                names.push(format!("{USAGE_TERM}{k}={v}"));
                names.push(format!("{USAGE_TERM}{k}"));
            }
        }
        f.signals = names.into_vec();
        f
    }

    /// The bias table under `semantics`.
    pub fn bias(&self, semantics: Semantics) -> &FileBias {
        match semantics {
            Semantics::Google => &self.google,
            Semantics::Draft1996 => &self.draft1996,
        }
    }

    /// The robots of the table under `semantics` with `tilt`, each by its
    /// name and its product token.
    pub fn robots_with(&self, semantics: Semantics, tilt: Tilt) -> Vec<String> {
        let mut out = Unique::default();
        for r in self
            .bias(semantics)
            .robots
            .iter()
            .filter(|r| r.verdict == tilt)
        {
            out.push(product_token(&r.robot).to_owned());
            out.push(r.robot.clone());
        }
        out.into_vec()
    }
}

/// The labels of a host from the right: `www.nasa.gov` → `gov`,
/// `nasa.gov`, `www.nasa.gov`.
pub fn host_suffixes(host: &str) -> Vec<String> {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    let mut out = Vec::new();
    let mut at = host.len();
    loop {
        let start = host[..at].rfind('.').map_or(0, |i| i + 1);
        out.push(host[start..].to_owned());
        if start == 0 {
            break;
        }
        at = start - 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_of_a_file() {
        let body = b"User-agent: *\nDisallow: /cgi-bin/\nCrawl-delay: 10\n\n\
User-agent: Googlebot/2.1\nUser-agent: MSNBot\nAllow: /Private/Open\nDisallow: /private/\n\
Content-Signal: search=yes, ai-train=no\n\nSitemap: https://A.test/sitemap.xml\n";
        let f = BodyFields::of(body);
        assert_eq!(f.botnames, ["*", "googlebot", "googlebot/2.1", "msnbot"]);
        assert_eq!(f.disallow, ["/cgi-bin/", "/private/"]);
        assert_eq!(f.allow, ["/Private/Open"]);
        assert_eq!(f.disallow_segments, ["cgi-bin", "private"]);
        assert_eq!(f.allow_segments, ["private", "open"]);
        assert_eq!(f.delays, [10.0]);
        assert!(f.universal);
        assert_eq!(f.sitemaps, ["https://a.test/sitemap.xml"]);
        assert_eq!(
            f.signals,
            ["search=yes", "search", "ai-train=no", "ai-train"]
        );
        assert_eq!(
            f.robots_with(Semantics::Google, Tilt::Nobias),
            ["googlebot", "googlebot/2.1", "msnbot"],
            "2 of 3 paths each way"
        );
        assert!(f.robots_with(Semantics::Google, Tilt::Favored).is_empty());
    }

    #[test]
    fn suffixes() {
        assert_eq!(
            host_suffixes("www.NASA.gov"),
            ["gov", "nasa.gov", "www.nasa.gov"]
        );
        assert_eq!(host_suffixes("localhost"), ["localhost"]);
    }
}
