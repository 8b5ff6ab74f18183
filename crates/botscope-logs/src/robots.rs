//! The site's robots.txt over time: versions, each in force from its date,
//! answering the analysis's questions (was this request disallowed? what
//! Crawl-delay applied?).

use std::io::Read;
use std::path::{Path, PathBuf};

use std::collections::HashMap;
use std::sync::Mutex;

use botscope_accesslog::{Directive, Policy, RobotsTxtVersion, format_rfc3339};
use botscope_robotstxt::{
    DEFAULT_PARSE_CAP, MAX_LINE_LEN, Matcher, ParseOptions, Robots, Semantics, path_of,
};

use crate::Error;

/// One `--robots [DATE=]FILE`: a robots.txt file, in force from `from`
/// (seconds since the epoch; `None`: from the beginning).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RobotsSpec {
    /// In force from.
    pub from: Option<i64>,
    /// The file.
    pub path: PathBuf,
}

impl RobotsSpec {
    /// Reads `FILE` or `DATE=FILE` (DATE as YYYY-MM-DD or RFC 3339). A
    /// value with `=` whose left side is not a date is a file name when
    /// such a file exists.
    pub fn parse(spec: &str) -> Result<RobotsSpec, Error> {
        match spec.split_once('=') {
            Some((d, f)) => match parse_when(d) {
                Some(from) => Ok(RobotsSpec {
                    from: Some(from),
                    path: PathBuf::from(f),
                }),
                None if !Path::new(spec).exists() => Err(Error::NotADate {
                    what: format!("--robots {spec:?}"),
                    value: d.to_owned(),
                }),
                None => Ok(RobotsSpec {
                    from: None,
                    path: PathBuf::from(spec),
                }),
            },
            None => Ok(RobotsSpec {
                from: None,
                path: PathBuf::from(spec),
            }),
        }
    }
}

/// `YYYY-MM-DD` (midnight UTC) or RFC 3339 → seconds since the epoch.
pub fn parse_when(s: &str) -> Option<i64> {
    let s = s.trim();
    if s.len() == 10 {
        let d: jiff::civil::Date = s.parse().ok()?;
        let t = d.to_zoned(jiff::tz::TimeZone::UTC).ok()?.timestamp();
        return Some(t.as_second());
    }
    let t: jiff::Timestamp = s.parse().ok()?;
    Some(t.as_second())
}

/// The site's robots.txt versions, each in force from its date.
#[derive(Debug, Default)]
pub struct RobotsTxt {
    versions: Vec<(Option<i64>, Matcher)>,
    described: Vec<RobotsTxtVersion>,
    /// Per version, the paths its rules name (`$` dropped): what "some
    /// path closed" is tested on.
    rule_paths: Vec<Vec<Vec<u8>>>,
    /// Directive per (version, token), computed once.
    directives: Mutex<HashMap<(usize, Option<String>), Directive>>,
}

/// The paths the rules of `body` name, each once, as the matcher reads
/// them (`$` dropped, a missing leading `/` added).
fn rule_paths(body: &[u8], opts: &ParseOptions) -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for r in Robots::parse_with(body, opts).rules() {
        let p = r.normalized.trim();
        let p = p.strip_suffix('$').unwrap_or(p);
        if p.is_empty() || !seen.insert(p.to_owned()) {
            continue;
        }
        let mut path = Vec::with_capacity(p.len() + 1);
        if !p.starts_with('/') {
            path.push(b'/');
        }
        path.extend_from_slice(p.as_bytes());
        out.push(path);
    }
    out
}

impl RobotsTxt {
    /// Versions from bytes: `(from, name, body)`. At most one may be
    /// undated (it is in force before the first dated one).
    pub fn new(
        mut files: Vec<(Option<i64>, String, Vec<u8>)>,
        semantics: Semantics,
    ) -> Result<RobotsTxt, Error> {
        files.sort_by_key(|f| f.0);
        if files.iter().filter(|f| f.0.is_none()).count() > 1 {
            return Err(Error::UndatedVersions);
        }
        let opts = ParseOptions::default();
        Ok(RobotsTxt {
            described: files
                .iter()
                .map(|(from, name, _)| RobotsTxtVersion {
                    file: name.clone(),
                    from: from.map(format_rfc3339),
                })
                .collect(),
            rule_paths: files.iter().map(|f| rule_paths(&f.2, &opts)).collect(),
            versions: files
                .into_iter()
                .map(|(from, _, body)| (from, Matcher::compile(&body, semantics, &opts)))
                .collect(),
            directives: Mutex::default(),
        })
    }

    /// Reads the files of `specs` (each up to the parse cap).
    pub fn load(specs: &[RobotsSpec], semantics: Semantics) -> Result<RobotsTxt, Error> {
        let mut files = Vec::with_capacity(specs.len());
        for s in specs {
            let body = read_capped(&s.path).map_err(|source| Error::Read {
                path: s.path.clone(),
                source,
            })?;
            files.push((s.from, s.path.display().to_string(), body));
        }
        RobotsTxt::new(files, semantics)
    }

    /// The versions, for the report.
    pub fn described(&self) -> &[RobotsTxtVersion] {
        &self.described
    }

    fn at(&self, t: i64) -> Option<&Matcher> {
        self.index_at(t).map(|i| &self.versions[i].1)
    }

    fn index_at(&self, t: i64) -> Option<usize> {
        self.versions
            .iter()
            .rposition(|(from, _)| from.is_none_or(|f| f <= t))
    }

    /// What version `i` asks of `token`'s group (`None`: the `*` group):
    /// `/` closed, some path its rules name closed, a Crawl-delay, or
    /// nothing. Costs one indexed check per rule path.
    fn directive_of(&self, i: usize, token: Option<&str>) -> Directive {
        let m = &self.versions[i].1;
        let agent = token.unwrap_or("*");
        let sel = m.select(agent);
        let ix = m.index_selection(&sel, &mut 0);
        let mut work = 0;
        if !m.check_indexed(&ix, b"/", &mut work).allowed {
            Directive::DisallowAll
        } else if self.rule_paths[i]
            .iter()
            .any(|p| !m.check_indexed(&ix, p, &mut work).allowed)
        {
            Directive::DisallowSome
        } else if m.crawl_delay(agent).is_some_and(|d| d > 0.0) {
            Directive::CrawlDelay
        } else {
            Directive::Nothing
        }
    }
}

/// A robots.txt file, up to the parse cap and the line it ends in.
fn read_capped(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut buf = Vec::new();
    std::fs::File::open(path)?
        .take((DEFAULT_PARSE_CAP + MAX_LINE_LEN + 1) as u64)
        .read_to_end(&mut buf)?;
    Ok(buf)
}

impl Policy for RobotsTxt {
    fn disallowed(&self, token: Option<&str>, target: &str, time: i64) -> Option<bool> {
        let m = self.at(time)?;
        let path = path_of(target.as_bytes());
        Some(!m.check_path(token.unwrap_or("*"), &path).allowed)
    }

    fn crawl_delay(&self, token: Option<&str>, time: i64) -> Option<f64> {
        self.at(time)?.crawl_delay(token.unwrap_or("*"))
    }

    fn directive(&self, token: Option<&str>, time: i64) -> Directive {
        let Some(i) = self.index_at(time) else {
            return Directive::Unknown;
        };
        let key = (i, token.map(str::to_owned));
        if let Some(d) = self
            .directives
            .lock()
            .ok()
            .and_then(|m| m.get(&key).copied())
        {
            return d;
        }
        let d = self.directive_of(i, token);
        if let Ok(mut m) = self.directives.lock() {
            m.insert(key, d);
        }
        d
    }

    fn version(&self, time: i64) -> Option<(usize, Option<i64>)> {
        self.index_at(time).map(|i| (i, self.versions[i].0))
    }

    fn judges(&self) -> bool {
        !self.versions.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn versions(v: Vec<(Option<i64>, &[u8])>) -> RobotsTxt {
        let files = v
            .into_iter()
            .map(|(f, b)| (f, "robots.txt".to_owned(), b.to_vec()))
            .collect();
        RobotsTxt::new(files, Semantics::Google).expect("versions")
    }

    #[test]
    fn versions_pick_the_one_in_force() {
        let v = versions(vec![
            (None, b"User-agent: *\nDisallow: /old\n"),
            (
                Some(1000),
                b"User-agent: *\nDisallow: /new\nCrawl-delay: 5\n\nUser-agent: Googlebot\nDisallow: /g\n",
            ),
        ]);
        assert_eq!(v.disallowed(None, "/old/x", 999), Some(true));
        assert_eq!(v.disallowed(None, "/old/x", 1000), Some(false));
        assert_eq!(v.disallowed(None, "/new", 1000), Some(true));
        assert_eq!(v.disallowed(Some("Googlebot"), "/new", 1000), Some(false));
        assert_eq!(v.disallowed(Some("Googlebot"), "/g?x", 2000), Some(true));
        assert_eq!(
            v.disallowed(Some("Googlebot"), "http://example.com/g", 2000),
            Some(true)
        );
        assert_eq!(v.crawl_delay(None, 1000), Some(5.0));
        assert_eq!(v.crawl_delay(None, 10), None);
        let dated = versions(vec![(Some(1000), b"User-agent: *\nDisallow: /\n")]);
        assert_eq!(
            dated.disallowed(None, "/", 999),
            None,
            "nothing in force yet"
        );
    }

    #[test]
    fn directives_by_strictness() {
        let v = versions(vec![
            (
                None,
                b"User-agent: *\nDisallow:\nCrawl-delay: 5\n\nUser-agent: Googlebot\nAllow: /\n",
            ),
            (
                Some(1000),
                b"User-agent: *\nDisallow: /private$\n\nUser-agent: GPTBot\nDisallow: /\n",
            ),
        ]);
        assert_eq!(v.directive(None, 0), Directive::CrawlDelay);
        assert_eq!(v.directive(Some("Googlebot"), 0), Directive::Nothing);
        assert_eq!(v.directive(None, 1000), Directive::DisallowSome);
        assert_eq!(v.directive(Some("GPTBot"), 1000), Directive::DisallowAll);
        assert_eq!(v.directive(Some("GPTBot"), 5), Directive::CrawlDelay);
        assert_eq!(v.version(999), Some((0, None)));
        assert_eq!(v.version(1000), Some((1, Some(1000))));
        let dated = versions(vec![(Some(1000), b"User-agent: *\nDisallow: /\n")]);
        assert_eq!(dated.directive(None, 999), Directive::Unknown);
        assert_eq!(dated.version(999), None);
    }

    #[test]
    fn two_undated_versions_are_an_error() {
        let files = vec![
            (None, "a".to_owned(), Vec::new()),
            (None, "b".to_owned(), Vec::new()),
        ];
        assert!(matches!(
            RobotsTxt::new(files, Semantics::Google),
            Err(Error::UndatedVersions)
        ));
    }

    #[test]
    fn dates() {
        assert_eq!(parse_when("2015-05-17"), Some(1_431_820_800));
        assert_eq!(parse_when("2015-05-17T10:00:00Z"), Some(1_431_856_800));
        assert_eq!(parse_when("2015-05-17T12:00:00+02:00"), Some(1_431_856_800));
        assert_eq!(parse_when("yesterday"), None);
        assert_eq!(
            RobotsSpec::parse("2015-05-17=r.txt").ok(),
            Some(RobotsSpec {
                from: Some(1_431_820_800),
                path: "r.txt".into()
            })
        );
        assert!(matches!(
            RobotsSpec::parse("soon=r.txt"),
            Err(Error::NotADate { .. })
        ));
    }
}
