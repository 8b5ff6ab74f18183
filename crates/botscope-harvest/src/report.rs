//! What a fetch did, told: a line of detail for people, a record for
//! tools (`fetch --format json`), and where its body is saved under a
//! directory.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::polite::{Decision, Fetch, RobotsLine};

/// One fetch as `fetch --format json` prints it (the fields in name
/// order).
#[derive(Debug, Serialize)]
pub struct FetchRecord<'a> {
    /// Bytes of the body kept.
    pub bytes: Option<usize>,
    /// What the site charged (`crawler-charged`).
    pub charged: Option<String>,
    /// The robots.txt Content-Signal in force.
    pub content_signal: Option<&'a BTreeMap<String, String>>,
    /// `allowed`, `disallowed`, …
    pub decision: &'static str,
    /// Why no response came.
    pub error: Option<&'a str>,
    /// The URL answered.
    pub final_url: &'a str,
    /// Why the page was not paid for.
    pub pay_note: Option<&'a str>,
    /// Why robots.txt was unavailable or set no restrictions.
    pub reason: Option<&'a str>,
    /// Each redirect followed.
    pub redirects: Vec<Redirect<'a>>,
    /// The deciding robots.txt rule.
    pub rule: Option<&'a RobotsLine>,
    /// Where the body was saved.
    pub saved: Option<String>,
    /// The status code.
    pub status: Option<u16>,
    /// The body was longer than the cap.
    pub truncated: bool,
    /// The URL asked for.
    pub url: &'a str,
    /// The AI usage preferences that apply.
    pub usage: Option<&'a botscope_robotstxt::Usage>,
    /// Time spent waiting for turns, in milliseconds.
    pub waited_ms: u64,
}

/// A redirect followed.
#[derive(Debug, Serialize)]
pub struct Redirect<'a> {
    /// Its status code.
    pub status: u16,
    /// The URL it came from.
    pub url: &'a str,
}

/// A path segment reduced to safe bytes: `.` and `..` never names.
fn clean(s: &str) -> String {
    let safe = |c: char| {
        c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '~' | '%' | '+' | '=' | ',')
    };
    let out: String = s
        .chars()
        .map(|c| if safe(c) { c } else { '_' })
        .take(200)
        .collect();
    match out.as_str() {
        "" => "_".to_owned(),
        "." | ".." => out.replace('.', "_"),
        _ => out,
    }
}

impl Fetch {
    /// Where the body is saved under a directory: `HOST[_PORT]/PATH`, each
    /// segment reduced to safe bytes, `.` and `..` never used as names, a
    /// path ending in `/` saved as `index.html`, the query kept in the
    /// name. `None` without a body (or a final URL that does not read).
    pub fn save_path(&self) -> Option<PathBuf> {
        self.page.as_ref()?;
        let url = url::Url::parse(&self.final_url).ok()?;
        let mut host = clean(url.host_str().unwrap_or("_"));
        if let Some(p) = url.port() {
            host.push_str(&format!("_{p}"));
        }
        let mut p = PathBuf::from(host);
        let segments: Vec<&str> = url.path_segments().map(|s| s.collect()).unwrap_or_default();
        let (last, dirs) = segments.split_last().unwrap_or((&"", &[]));
        for s in dirs {
            p.push(clean(s));
        }
        let mut name = if last.is_empty() {
            "index.html".to_owned()
        } else {
            clean(last)
        };
        if let Some(q) = url.query() {
            name.push_str("%3F");
            name.push_str(&clean(q));
        }
        p.push(name);
        Some(p)
    }

    /// The rule, note, redirect, error, preferences and payment, `; `
    /// between (not escaped: the caller escapes for where it shows).
    pub fn detail(&self) -> String {
        let mut parts = Vec::new();
        match &self.decision {
            Decision::Allowed(Some(rule)) | Decision::Disallowed(rule) => {
                parts.push(rule.to_string());
            }
            Decision::Unavailable(why) => parts.push(why.clone()),
            _ => {}
        }
        parts.extend(self.robots_note.clone());
        if !self.redirects.is_empty() {
            parts.push(format!("redirected to {}", self.final_url));
        }
        parts.extend(self.error.clone());
        if let Some(u) = &self.usage {
            parts.push(format!("usage: {}", botscope_robotstxt::show_usage(u)));
        }
        if let Some(s) = &self.content_signal {
            let signal = botscope_robotstxt::show_usage(s);
            parts.push(format!("content-signal: {signal}"));
        }
        if let Some(p) = &self.charged {
            parts.push(format!("charged {p}"));
        }
        parts.extend(self.pay_note.clone());
        parts.join("; ")
    }

    /// The fetch as a record, with where its body was saved.
    pub fn record(&self, saved: Option<&Path>) -> FetchRecord<'_> {
        let reason = match &self.decision {
            Decision::Unavailable(why) => Some(why.as_str()),
            _ => self.robots_note.as_deref(),
        };
        let page = self.page.as_ref();
        FetchRecord {
            bytes: page.map(|p| p.body.len()),
            charged: self.charged.map(|p| p.to_string()),
            content_signal: self.content_signal.as_ref(),
            decision: self.decision.as_str(),
            error: self.error.as_deref(),
            final_url: &self.final_url,
            pay_note: self.pay_note.as_deref(),
            reason,
            redirects: self
                .redirects
                .iter()
                .map(|(url, status)| Redirect {
                    status: *status,
                    url,
                })
                .collect(),
            rule: self.decision.rule(),
            saved: saved.map(|p| p.display().to_string()),
            status: page.map(|p| p.status),
            truncated: page.is_some_and(|p| p.truncated),
            url: &self.url,
            usage: self.usage.as_ref(),
            waited_ms: u64::try_from(self.waited.as_millis()).unwrap_or(u64::MAX),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::polite::Page;

    fn fetched(url: &str) -> Fetch {
        Fetch {
            url: url.into(),
            final_url: url.into(),
            redirects: Vec::new(),
            decision: Decision::Allowed(None),
            waited: std::time::Duration::from_millis(1500),
            robots_note: None,
            page: Some(Page {
                status: 200,
                headers: Vec::new(),
                body: b"hi".to_vec(),
                truncated: false,
            }),
            error: None,
            usage: None,
            content_signal: None,
            charged: None,
            pay_note: None,
        }
    }

    #[test]
    fn save_paths_stay_inside() {
        let dir = Path::new("/out");
        let p = |u: &str| dir.join(fetched(u).save_path().expect(u));
        for (url, want) in [
            ("https://a.example/", "/out/a.example/index.html"),
            (
                "http://a.example:8080/x/y.html?q=1&r=<2>",
                "/out/a.example_8080/x/y.html%3Fq=1_r=%3C2%3E",
            ),
            ("https://a.example/%2e%2e/x", "/out/a.example/x"),
            ("https://a.example/a/../../b", "/out/a.example/b"),
            ("https://a.example/d/", "/out/a.example/d/index.html"),
            ("https://a.example/a//b", "/out/a.example/a/_/b"),
        ] {
            assert_eq!(p(url), Path::new(want), "{url}");
        }
        for u in ["https://a.example/..%2f..%2fetc/passwd", "https://[::1]/x"] {
            let got = p(u);
            assert!(got.starts_with(dir), "{u}: {got:?}");
            assert!(
                got.components()
                    .all(|c| !matches!(c, std::path::Component::ParentDir)),
                "{u}: {got:?}"
            );
        }
        let mut none = fetched("http://a.test/");
        none.page = None;
        assert_eq!(none.save_path(), None);
    }

    #[test]
    fn a_record_names_its_fields_in_order() {
        let mut f = fetched("http://a.test/");
        f.redirects.push(("http://a.test/old".into(), 301));
        let json =
            serde_json::to_value(f.record(Some(Path::new("out/a.test/index.html")))).expect("json");
        assert_eq!(json["decision"], "allowed");
        assert_eq!(json["waited_ms"], 1500);
        assert_eq!(json["bytes"], 2);
        assert_eq!(json["redirects"][0]["status"], 301);
        assert_eq!(json["saved"], "out/a.test/index.html");
        assert_eq!(f.detail(), "redirected to http://a.test/");
    }
}
