//! The site's robots.txt over time: versions, each in force from its date,
//! answering the analysis's questions (was this request disallowed? what
//! Crawl-delay applied?).

use std::io::Read;
use std::path::{Path, PathBuf};

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use botscope_accesslog::{Directive, Groups, Policy, RobotsTxtVersion, format_rfc3339};
use botscope_robotstxt::{
    DEFAULT_PARSE_CAP, IndexedSelection, MAX_LINE_LEN, Matcher, ParseOptions, Robots, Selection,
    Semantics, path_of, pick_name, product_token,
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
    directives: Mutex<HashMap<(usize, Option<String>), Directive, Seeded>>,
    /// Per version, its groups indexed for the requests' paths.
    indexes: Vec<Indexes>,
    /// The groups of the `*` agent (clients without a token) in every
    /// version.
    star: Groups,
    /// The groups of each token met so far, in every version (looked up
    /// per request's second by the Crawl-delay: a seeded fast hash, as
    /// for the agents themselves).
    tokens: Mutex<HashMap<String, Groups, Seeded>>,
}

type Seeded = foldhash::fast::RandomState;

/// One version's groups as requests are judged by them: each distinct
/// selection of groups indexed once ([`Matcher::index_selection`]), when
/// the first agent that makes it is met, so that a request costs a walk
/// along its path rather than a test of every rule of its groups.
#[derive(Debug)]
struct Indexes {
    /// Under the 1996 draft, the names the file gives agents
    /// ([`Matcher::names`]) in the order [`pick_name`] tries them, and
    /// each name's slot.
    names: Vec<Vec<u8>>,
    name_slots: Vec<u32>,
    /// Under Google's rules, each name's slot by the name (lower-cased):
    /// an agent's product token finds its name without a test of each.
    by_name: HashMap<Vec<u8>, u32>,
    /// The slot of an agent no name selects.
    unnamed: u32,
    /// Each distinct selection, indexed when first needed.
    slots: Vec<(Selection, OnceLock<IndexedSelection>)>,
    /// Each slot's Crawl-delay ([`Matcher::selection_crawl_delay`]).
    delays: Vec<Option<f64>>,
}

impl Indexes {
    fn new(m: &Matcher) -> Indexes {
        let mut slots: Vec<(Selection, OnceLock<IndexedSelection>)> = Vec::new();
        let mut slot_of: HashMap<Selection, u32> = HashMap::new();
        let mut slot = |sel: Selection| {
            *slot_of.entry(sel.clone()).or_insert_with(|| {
                slots.push((sel, OnceLock::new()));
                (slots.len() - 1) as u32
            })
        };
        let named: Vec<(Vec<u8>, u32)> = m
            .names()
            .into_iter()
            .map(|(n, sel)| (n, slot(sel)))
            .collect();
        let unnamed = slot(m.unnamed());
        let (mut names, mut name_slots, mut by_name) = (Vec::new(), Vec::new(), HashMap::new());
        match m.semantics() {
            Semantics::Google => by_name = named.into_iter().collect(),
            Semantics::Draft1996 => (names, name_slots) = named.into_iter().unzip(),
        }
        let delays = slots
            .iter()
            .map(|(sel, _)| m.selection_crawl_delay(sel))
            .collect();
        Indexes {
            names,
            name_slots,
            by_name,
            unnamed,
            slots,
            delays,
        }
    }

    /// The slot of `agent`'s selection (as [`Matcher::select`] makes it),
    /// indexed.
    fn slot(&self, m: &Matcher, agent: &str) -> u32 {
        let named = match m.semantics() {
            Semantics::Google => self
                .by_name
                .get(product_token(agent).to_ascii_lowercase().as_bytes())
                .copied(),
            Semantics::Draft1996 => {
                pick_name(Semantics::Draft1996, &self.names, agent).map(|i| self.name_slots[i])
            }
        };
        let slot = named.unwrap_or(self.unnamed);
        self.indexed(m, slot);
        slot
    }

    /// Slot `slot`'s index, made on first use (its cost is the rules of
    /// its groups, once).
    fn indexed(&self, m: &Matcher, slot: u32) -> &IndexedSelection {
        let (sel, ix) = &self.slots[slot as usize];
        ix.get_or_init(|| m.index_selection(sel, &mut 0))
    }
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
        let versions: Vec<(Option<i64>, Matcher)> = files
            .iter()
            .map(|(from, _, body)| (*from, Matcher::compile(body, semantics, &opts)))
            .collect();
        let indexes: Vec<Indexes> = versions.iter().map(|(_, m)| Indexes::new(m)).collect();
        let star: Groups = versions
            .iter()
            .zip(&indexes)
            .map(|((_, m), ix)| ix.slot(m, "*"))
            .collect();
        Ok(RobotsTxt {
            described: files
                .iter()
                .map(|(from, name, _)| RobotsTxtVersion {
                    file: name.clone(),
                    from: from.map(format_rfc3339),
                })
                .collect(),
            rule_paths: files.iter().map(|f| rule_paths(&f.2, &opts)).collect(),
            versions,
            directives: Mutex::default(),
            indexes,
            star,
            tokens: Mutex::default(),
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
        // One version, the common case: no search.
        if let [(from, _)] = &self.versions[..] {
            return from.is_none_or(|f| f <= t).then_some(0);
        }
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

    /// Found from the token's slot in the version in force (the groups
    /// are found once per token, as [`Policy::groups`] finds them).
    fn crawl_delay(&self, token: Option<&str>, time: i64) -> Option<f64> {
        let v = self.index_at(time)?;
        let slot = *self.groups(token)?.get(v)?;
        self.indexes[v].delays[slot as usize]
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

    /// Per version, the slot of the token's selection: found once per
    /// token (a lock and a table look-up per distinct User-Agent after
    /// that).
    fn groups(&self, token: Option<&str>) -> Option<Groups> {
        let Some(token) = token else {
            return Some(self.star.clone());
        };
        let mut tokens = self.tokens.lock().ok()?;
        if let Some(g) = tokens.get(token) {
            return Some(g.clone());
        }
        let g: Groups = self
            .versions
            .iter()
            .zip(&self.indexes)
            .map(|((_, m), ix)| ix.slot(m, token))
            .collect();
        tokens.insert(token.to_owned(), g.clone());
        Some(g)
    }

    fn disallowed_in(&self, groups: &Groups, target: &str, time: i64) -> Option<bool> {
        let v = self.index_at(time)?;
        let m = &self.versions[v].1;
        let ix = self.indexes[v].indexed(m, *groups.get(v)?);
        Some(!m.indexed_target_allowed(ix, target.as_bytes(), &mut 0))
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
    fn crawl_delays_found_once_are_the_matchers() {
        let bodies: [&[u8]; 2] = [
            b"User-agent: *\nDisallow: /a\nCrawl-delay: 2\n\nUser-agent: slowbot\nCrawl-delay: 9\n",
            b"User-agent: *\nDisallow: /x\nCrawl-delay: 5\n\nUser-agent: Googlebot\nDisallow: /g\n\n\
              User-agent: Bingbot\nCrawl-delay: 1.5\n",
        ];
        for semantics in [Semantics::Google, Semantics::Draft1996] {
            let files = vec![
                (None, "a".to_owned(), bodies[0].to_vec()),
                (Some(1000), "b".to_owned(), bodies[1].to_vec()),
            ];
            let v = RobotsTxt::new(files, semantics).expect("versions");
            for (t, body) in [(10, bodies[0]), (1000, bodies[1])] {
                let m = Matcher::compile(body, semantics, &ParseOptions::default());
                for token in [
                    None,
                    Some("Googlebot"),
                    Some("bingbot"),
                    Some("slowbot"),
                    Some("x"),
                ] {
                    // Twice: found, then remembered.
                    for _ in 0..2 {
                        assert_eq!(
                            v.crawl_delay(token, t),
                            m.crawl_delay(token.unwrap_or("*")),
                            "{semantics:?} {token:?} at {t}"
                        );
                    }
                }
            }
            assert_eq!(v.crawl_delay(Some("Bingbot"), 2000), Some(1.5));
            assert_eq!(v.crawl_delay(Some("slowbot"), 999), Some(9.0));
        }
        let none = versions(vec![(Some(1000), b"User-agent: *\nCrawl-delay: 3\n")]);
        assert_eq!(none.crawl_delay(None, 999), None, "nothing in force yet");
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

    /// A request judged by its token's groups found once
    /// ([`Policy::groups`], [`Policy::disallowed_in`]) gets the verdict it
    /// gets asked by its token, in every version, under both semantics.
    #[test]
    fn groups_found_once_judge_as_the_token_does() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/robots");
        let mut files: Vec<Vec<u8>> = std::fs::read_dir(dir)
            .expect("examples")
            .map(|e| std::fs::read(e.expect("entry").path()).expect("read"))
            .collect();
        files.push(
            b"User-agent: *\nDisallow: /*?*session=\nAllow: /a$\nDisallow: /a\n\nUser-agent: gptbot\nUser-agent: CCBot\nDisallow: /\nAllow: /public/*.html$\n".to_vec(),
        );
        let paths = [
            "/",
            "/a",
            "/a/b",
            "/b/shoes?_nkw=1",
            "/sch/i.html?_nkw=x&LH_BIN=1",
            "/brw/x",
            "/listing/123/stubs/4",
            "/search?q=robots",
            "/catalog/1/item-2?utm_source=news&session=0123",
            "/public/x.html",
            "/public/x.html?y",
            "/people/joe/circles",
            "http://example.com/feed/",
            "/%7Euser/ws/",
            "/robots.txt",
            "/a#b",
            "/#",
            "//example.com/a/b",
            "//example.com",
            "/brw/x#frag",
            "",
            "?q",
            "example.com/brw/",
        ];
        let tokens = [
            None,
            Some("*"),
            Some("Googlebot"),
            Some("googlebot-image"),
            Some("GPTBot"),
            Some("ccbot"),
            Some("bingbot"),
            Some("Mozilla"),
            Some("Spinn3r"),
            Some("Yahoo! Slurp"),
        ];
        for semantics in [Semantics::Google, Semantics::Draft1996] {
            for pair in files.windows(2) {
                let v = RobotsTxt::new(
                    vec![
                        (None, "old".to_owned(), pair[0].clone()),
                        (Some(1000), "new".to_owned(), pair[1].clone()),
                    ],
                    semantics,
                )
                .expect("versions");
                for token in tokens {
                    let g = v.groups(token).expect("groups");
                    assert_eq!(g.len(), 2, "a slot per version");
                    for path in paths {
                        for t in [0, 1000] {
                            assert_eq!(
                                v.disallowed_in(&g, path, t),
                                v.disallowed(token, path, t),
                                "{semantics:?} {token:?} {path} at {t}"
                            );
                        }
                    }
                }
            }
        }
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
