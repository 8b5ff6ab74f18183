//! Restriction trends: per period, how the versions in force then treat each agent.

use std::collections::{BTreeMap, HashMap};

use botscope_robotstxt::Semantics;
use serde::Serialize;
use tantivy::columnar::{BytesColumn, Column};
use tantivy::query::{EnableScoring, Query as TQuery};
use tantivy::schema::Value;
use tantivy::{BitSet, DocId, SegmentReader, TantivyDocument};

use crate::classes::{Decider, Stated, restriction_of};
use crate::cohort::Cohort;
use crate::engine::{BODY_CACHE, Index, io_err, par_map, rfc3339};
use crate::error::Result;
use crate::per_site::PerSite;
use crate::query::{self, Query};
use crate::studies::Method;

/// Restriction counts of one agent (or the group) in a period.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Files that close `/` to it.
    pub full: u64,
    /// Files that close some paths.
    pub partial: u64,
    /// Files that close nothing to it.
    pub none: u64,
}

impl Counts {
    pub(crate) fn add_n(&mut self, r: crate::Restriction, n: u64) {
        match r {
            crate::Restriction::Full => self.full += n,
            crate::Restriction::Partial => self.partial += n,
            crate::Restriction::None => self.none += n,
        }
    }
}

impl Counts {
    pub(crate) fn merge(&mut self, o: &Counts) {
        self.full += o.full;
        self.partial += o.partial;
        self.none += o.none;
    }
}

/// Adoption of AI usage preferences in a period: how many sites' files
/// state any (IETF Content-Usage rules, Cloudflare Content-Signal lines)
/// and which statements, each counted once per site.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Adoption {
    /// Sites whose file states a Content-Usage rule or a Content-Signal.
    pub any: u64,
    /// Sites with a Content-Usage rule.
    pub content_usage: u64,
    /// Sites with a Content-Signal line.
    pub content_signal: u64,
    /// Sites whose robots.txt names an RSL licence (`License:`).
    pub license: u64,
    /// Per statement (`usage:train-ai=n`, `signal:ai-train=no`), sites
    /// that make it somewhere in their file: only the vocabulary's
    /// categories and the policy's signals with their defined values.
    pub statements: BTreeMap<String, u64>,
}

/// The usage preferences and licence `body` states anywhere: a byte scan
/// first, the file parsed only when it names Content-Usage,
/// Content-Signal or License.
pub(crate) fn stated(body: &[u8]) -> Stated {
    let finder = |needle: &[u8]| {
        body.windows(needle.len())
            .any(|w| w.eq_ignore_ascii_case(needle))
    };
    if !finder(b"content-usage") && !finder(b"content-signal") && !finder(b"license") {
        return Stated::default();
    }
    Stated::of(&botscope_robotstxt::Robots::parse(body))
}

/// Adoption while it is counted: per statement bit.
#[derive(Clone, Default)]
pub(crate) struct AdoptionTally {
    any: u64,
    usage: u64,
    signal: u64,
    license: u64,
    statements: [u64; 16],
}

impl AdoptionTally {
    fn add_n(&mut self, s: &Stated, n: u64) {
        if s.usage || s.signal {
            self.any += n;
        }
        self.usage += u64::from(s.usage) * n;
        self.signal += u64::from(s.signal) * n;
        self.license += u64::from(s.license) * n;
        for (i, c) in self.statements.iter_mut().enumerate() {
            if s.statements & (1 << i) != 0 {
                *c += n;
            }
        }
    }

    fn merge(&mut self, o: &AdoptionTally) {
        self.any += o.any;
        self.usage += o.usage;
        self.signal += o.signal;
        self.license += o.license;
        for (a, b) in self.statements.iter_mut().zip(&o.statements) {
            *a += b;
        }
    }

    fn adoption(&self) -> Adoption {
        Adoption {
            any: self.any,
            content_usage: self.usage,
            content_signal: self.signal,
            license: self.license,
            statements: crate::classes::statements()
                .zip(self.statements)
                .filter(|(_, n)| *n > 0)
                .collect(),
        }
    }
}

/// A period's counts while they are made.
#[derive(Clone)]
pub(crate) struct Tally {
    pub(crate) sites: u64,
    pub(crate) agents: Vec<Counts>,
    pub(crate) group: Counts,
    pub(crate) preferences: AdoptionTally,
    /// The same sums of the sites' weights.
    pub(crate) weighted: WeightedTally,
    /// Per agent, sites a study's method judges otherwise than the exact
    /// engine.
    pub(crate) disagree: Vec<u64>,
    /// Sites a study's method was past its budget on.
    pub(crate) past_budget: u64,
}

#[derive(Clone, Default)]
pub(crate) struct WeightedTally {
    sites: f64,
    agents: Vec<Shares>,
    group: Shares,
}

/// Restriction weights of one agent (or the group) in a period: the sums
/// of the weights of the sites in each class.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Shares {
    /// Sites that close `/` to it.
    pub full: f64,
    /// Sites that close some paths.
    pub partial: f64,
    /// Sites that close nothing to it.
    pub none: f64,
}

impl Shares {
    fn add(&mut self, r: crate::Restriction, w: f64) {
        match r {
            crate::Restriction::Full => self.full += w,
            crate::Restriction::Partial => self.partial += w,
            crate::Restriction::None => self.none += w,
        }
    }

    fn merge(&mut self, o: &Shares) {
        self.full += o.full;
        self.partial += o.partial;
        self.none += o.none;
    }
}

/// One agent's (or the group's) classes as fractions (0 to 1) of a
/// period's sites.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Fractions {
    /// Closed fully.
    pub full: f64,
    /// Closed partly.
    pub partial: f64,
    /// Not closed.
    pub none: f64,
}

impl Fractions {
    /// `c` over `of` sites (all 0 when there are none).
    pub fn of(c: &Counts, of: u64) -> Fractions {
        let f = |n: u64| if of == 0 { 0.0 } else { n as f64 / of as f64 };
        Fractions {
            full: f(c.full),
            partial: f(c.partial),
            none: f(c.none),
        }
    }
}

/// A period's shares over one base, per agent and for the group.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ShareSet {
    /// Per agent.
    pub agents: BTreeMap<String, Fractions>,
    /// The group.
    pub group: Fractions,
}

impl ShareSet {
    fn of(agents: &BTreeMap<String, Counts>, group: &Counts, base: u64) -> ShareSet {
        ShareSet {
            agents: agents
                .iter()
                .map(|(a, c)| (a.clone(), Fractions::of(c, base)))
                .collect(),
            group: Fractions::of(group, base),
        }
    }
}

/// A period's counts weighted by the cohort's weight column.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WeightedPeriod {
    /// Weight of the sites with a robots.txt in force.
    pub sites: f64,
    /// Weight of the cohort's sites known by then without one (with a
    /// store).
    pub no_robots_txt: Option<f64>,
    /// The denominator of the weighted shares.
    pub denominator: f64,
    /// Per agent.
    pub agents: BTreeMap<String, Shares>,
    /// The group, strictest status per site.
    pub group: Shares,
}

/// The cohort a trend was counted over.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CohortInfo {
    /// The list it was read from.
    pub source: String,
    /// Hosts in it.
    pub hosts: u64,
    /// Of them, those the store knows (with a store).
    pub in_store: Option<u64>,
    /// The weight column, if weighted.
    pub weight: Option<String>,
}

impl Tally {
    pub(crate) fn new(agents: usize) -> Tally {
        Tally {
            sites: 0,
            agents: vec![Counts::default(); agents],
            group: Counts::default(),
            preferences: AdoptionTally::default(),
            disagree: vec![0; agents],
            past_budget: 0,
            weighted: WeightedTally {
                sites: 0.0,
                agents: vec![Shares::default(); agents],
                group: Shares::default(),
            },
        }
    }

    /// `n` sites' restrictions, one per agent, all alike, weighing `w` in
    /// all.
    pub(crate) fn add_n(&mut self, r: &[crate::Restriction], n: u64, w: f64) {
        let strictest = r.iter().copied().max().unwrap_or(crate::Restriction::None);
        self.sites += n;
        for (c, x) in self.agents.iter_mut().zip(r) {
            c.add_n(*x, n);
        }
        self.group.add_n(strictest, n);
        self.weighted.sites += w;
        for (c, x) in self.weighted.agents.iter_mut().zip(r) {
            c.add(*x, w);
        }
        self.weighted.group.add(strictest, w);
    }

    pub(crate) fn merge(&mut self, o: &Tally) {
        self.sites += o.sites;
        for (a, b) in self.agents.iter_mut().zip(&o.agents) {
            a.merge(b);
        }
        self.group.merge(&o.group);
        self.preferences.merge(&o.preferences);
        for (a, b) in self.disagree.iter_mut().zip(&o.disagree) {
            *a += b;
        }
        self.past_budget += o.past_budget;
        self.weighted.sites += o.weighted.sites;
        for (a, b) in self.weighted.agents.iter_mut().zip(&o.weighted.agents) {
            a.merge(b);
        }
        self.weighted.group.merge(&o.weighted.group);
    }
}

/// One period of a trend.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Period {
    /// `2024-03` (by month), `2024` (by year) or the crawl's name.
    pub period: String,
    /// Its last second (RFC 3339): each site's version in force then; by
    /// crawl, the crawl's last capture (each site counted as the crawl
    /// last saw it).
    pub end: String,
    /// Sites with a robots.txt in force (and matching `where`).
    pub sites: u64,
    /// Sites of the store known by then without a robots.txt in force
    /// (only without `where`, and with a store); by crawl, the sites the
    /// crawl captured without finding one.
    pub no_robots_txt: Option<u64>,
    /// The denominator of the shares: sites plus those without one.
    pub denominator: u64,
    /// Per agent.
    pub agents: BTreeMap<String, Counts>,
    /// The shares the papers print: of the sites with a robots.txt
    /// (`sites`).
    pub of_sites: ShareSet,
    /// The same over every site counted (`denominator`: with and without
    /// a robots.txt; the same as `of_sites` when the sites without one are
    /// not known).
    pub of_all: ShareSet,
    /// The group, strictest status of its agents per site.
    pub group: Counts,
    /// Sites (of `sites`) whose file states AI usage preferences, and which.
    pub preferences: Adoption,
    /// The same counts weighted by the cohort's weight column.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub weighted: Option<WeightedPeriod>,
    /// With a study's method: per agent, the sites (of `sites`) it judges
    /// otherwise than the exact engine under the same semantics.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disagree: Option<BTreeMap<String, u64>>,
    /// With a study's method: the sites (of `sites`) whose file needed
    /// more work than the method's budget
    /// ([`crate::studies::STUDY_WORK_CAP`]), counted as the exact engine
    /// judges them (and not among `disagree`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub past_budget: Option<u64>,
}

/// Restriction of agents over time ("Consent in Crisis", exactly).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Trends {
    /// The semantics.
    pub semantics: &'static str,
    /// How each file's restriction is judged: `exact`, or a study's
    /// method (`somesite`, `cic`; [`crate::studies`]).
    pub method: &'static str,
    /// `month`, `year` or `crawl`.
    pub by: &'static str,
    /// The agents (robots.txt product tokens).
    pub agents: Vec<String>,
    /// The query selecting the sites.
    #[serde(rename = "where")]
    pub where_: Option<String>,
    /// The cohort of sites counted (`--sites`, `--rank-file`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cohort: Option<CohortInfo>,
    /// Versions whose restrictions were computed from their body, not
    /// read from the index: files past the index's work or name budget
    /// ([`crate::CLASS_WORK_CAP`], [`crate::CLASS_NAME_BYTES`]), and every
    /// version under a study's method; every other version's come from
    /// the classes stored when it was indexed.
    pub from_bodies: u64,
    /// Oldest first.
    pub periods: Vec<Period>,
    /// When asked ([`TrendsRequest::per_site`]), the verdict behind every
    /// count: a row per period, site and agent.
    #[serde(skip)]
    pub per_site: Option<PerSite>,
}

/// What [`Index::trends`] counts.
#[derive(Clone, Copy)]
pub struct TrendsRequest<'a> {
    /// The agents (robots.txt product tokens or User-Agent headers).
    pub agents: &'a [String],
    /// The periods: label and last second ([`periods`]).
    pub periods: &'a [(String, i64)],
    /// Only the sites matching this query.
    pub where_: Option<&'a str>,
    /// The semantics.
    pub semantics: Semantics,
    /// The sites the store knew at a time (for the sites without a
    /// robots.txt); not asked with `where_` or a cohort.
    pub known_at: Option<&'a dyn Fn(i64) -> Result<u64>>,
    /// Periods are years.
    pub yearly: bool,
    /// Only the cohort's sites, weighted by its weights.
    pub cohort: Option<&'a Cohort>,
    /// Periods are these crawls ([`botscope_store::Store::crawl_sites`],
    /// asked with the cohort's hosts when there is one), `periods` unused:
    /// each site counted as the crawl's last capture of it found it.
    pub crawls: Option<&'a [botscope_store::CrawlSites]>,
    /// How each file's restriction is judged.
    pub method: Method,
    /// Also the verdict behind every count, a row per period, site and
    /// agent ([`Trends::per_site`]), refused past this many rows.
    pub per_site: Option<u64>,
}

/// How a trends question divides time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum By {
    /// Calendar months (UTC).
    Month,
    /// Calendar years (UTC).
    Year,
    /// Each crawl the store imported, counting the sites it captured as
    /// it saw them.
    Crawl,
}

impl By {
    /// `month`, `year` or `crawl`.
    pub fn parse(s: &str) -> Option<By> {
        match s {
            "month" => Some(By::Month),
            "year" => Some(By::Year),
            "crawl" => Some(By::Crawl),
            _ => None,
        }
    }

    /// `month`, `year` or `crawl`, as [`By::parse`] reads it.
    pub fn as_str(self) -> &'static str {
        match self {
            By::Month => "month",
            By::Year => "year",
            By::Crawl => "crawl",
        }
    }
}

/// A whole trends question as `botscope trends` and the Python package
/// ask it ([`Index::trends_over`]): the periods, the store's part and the
/// cohort's are worked out from it.
#[derive(Debug, Clone)]
pub struct TrendsPlan<'a> {
    /// The agents (robots.txt product tokens or User-Agent headers).
    pub agents: &'a [String],
    /// The periods.
    pub by: By,
    /// The first period holds this time (default: the oldest version).
    pub from: Option<i64>,
    /// The last period holds this time (default: the newest version).
    pub to: Option<i64>,
    /// Only the sites matching this query.
    pub where_: Option<&'a str>,
    /// The semantics.
    pub semantics: Semantics,
    /// Only these sites, weighted by their weights.
    pub cohort: Option<Cohort>,
    /// How each file's restriction is judged.
    pub method: Method,
    /// Also the verdict behind every count, refused past this many rows
    /// ([`TrendsRequest::per_site`]).
    pub per_site: Option<u64>,
}

/// Largest cohort list read, in bytes: [`crate::COHORT_MAX_HOSTS`] hosts
/// with their rank and weight columns fit well within it.
pub const COHORT_MAX_BYTES: u64 = 1 << 30;

/// A cohort list read from a file (at most [`COHORT_MAX_BYTES`]; bytes
/// that are not UTF-8 read as U+FFFD) and parsed as [`Cohort::parse`]
/// reads it.
pub fn read_cohort(path: &std::path::Path, spec: &crate::CohortSpec) -> Result<Cohort> {
    let bytes = botscope_os::read_capped(path, COHORT_MAX_BYTES)?;
    Ok(Cohort::parse(
        &path.display().to_string(),
        &String::from_utf8_lossy(&bytes),
        spec,
    )?)
}

/// The periods of trends by crawl: the crawls `store` imported whose last
/// capture falls within `from..=to` (either end open), each with the sites
/// it captured (only `hosts`, when given: a cohort's).
pub fn crawls_within<S: botscope_store::Store + ?Sized>(
    store: &S,
    hosts: Option<&[String]>,
    from: Option<i64>,
    to: Option<i64>,
) -> Result<Vec<botscope_store::CrawlSites>> {
    let mut c = store.crawl_sites(hosts)?;
    c.retain(|c| from.is_none_or(|f| c.last >= f) && to.is_none_or(|t| c.last <= t));
    Ok(c)
}

/// [`TrendsRequest::known_at`] from a store: the sites it knew at a time.
pub fn known_at<S: botscope_store::Store + ?Sized>(store: &S) -> impl Fn(i64) -> Result<u64> + '_ {
    move |t| Ok(store.sites_known_at(t)?)
}

/// Periods of `by` (`month` or `year`) covering `from..=to`: label and
/// last second.
pub fn periods(from: i64, to: i64, yearly: bool) -> Vec<(String, i64)> {
    use jiff::civil::Date;
    let day = |t: i64| {
        jiff::Timestamp::from_second(t)
            .map(|ts| ts.to_zoned(jiff::tz::TimeZone::UTC).date())
            .unwrap_or_default()
    };
    let (a, b) = (day(from.min(to)), day(to.max(from)));
    let mut cur = Date::new(a.year(), if yearly { 1 } else { a.month() }, 1).unwrap_or(a);
    let mut out = Vec::new();
    while cur <= b && out.len() < 12 * 200 {
        let next = if yearly {
            cur.checked_add(jiff::Span::new().years(1))
        } else {
            cur.checked_add(jiff::Span::new().months(1))
        };
        let Ok(next) = next else { break };
        let end = next
            .to_zoned(jiff::tz::TimeZone::UTC)
            .map(|z| z.timestamp().as_second() - 1)
            .unwrap_or(i64::MAX);
        let label = if yearly {
            format!("{:04}", cur.year())
        } else {
            format!("{:04}-{:02}", cur.year(), cur.month())
        };
        out.push((label, end));
        cur = next;
    }
    out
}

impl Index {
    /// The first and last version dates in the index.
    pub fn span(&self) -> Option<(i64, i64)> {
        let searcher = self.reader.searcher();
        let mut span: Option<(i64, i64)> = None;
        for seg in searcher.segment_readers() {
            let Ok(col) = seg.fast_fields().i64("from") else {
                continue;
            };
            let col = col.first_or_default_col(0);
            for d in 0..seg.max_doc() {
                if seg.is_deleted(d) {
                    continue;
                }
                let v = col.get_val(d);
                span = Some(span.map_or((v, v), |(a, b)| (a.min(v), b.max(v))));
            }
        }
        span
    }

    /// A [`TrendsPlan`] answered: its periods from the index's span, and
    /// with a store the sites without a robots.txt in the denominators,
    /// the cohort's sites as the store first saw them, and the crawls.
    pub fn trends_over<S: botscope_store::Store + ?Sized>(
        &self,
        store: Option<&S>,
        plan: TrendsPlan<'_>,
    ) -> Result<Trends> {
        let request = |s: String| crate::IndexError::Request(s);
        let Some((first, last)) = self.span() else {
            return Err(request(format!(
                "{}: the index is empty",
                self.path.display()
            )));
        };
        let yearly = plan.by == By::Year;
        let periods = periods(plan.from.unwrap_or(first), plan.to.unwrap_or(last), yearly);
        let mut cohort = plan.cohort;
        if let (Some(c), Some(s)) = (&mut cohort, store) {
            c.added = Some(s.sites_added(&c.hosts)?);
        }
        let crawls = match (plan.by, store) {
            (By::Crawl, None) => {
                return Err(request(
                    "trends by crawl reads the crawls from the store: give the store".into(),
                ));
            }
            (By::Crawl, Some(s)) => {
                let hosts = cohort.as_ref().map(|c| &c.hosts[..]);
                let c = crawls_within(s, hosts, plan.from, plan.to)?;
                if c.is_empty() {
                    return Err(request(format!(
                        "the store holds no crawl{}: `botscope store import --format warc` \
                         records each file's crawl (from its CC-MAIN name, or --crawl NAME)",
                        if plan.from.is_some() || plan.to.is_some() {
                            " in that span"
                        } else {
                            ""
                        }
                    )));
                }
                Some(c)
            }
            _ => None,
        };
        let known = store.map(known_at);
        self.trends(&TrendsRequest {
            agents: plan.agents,
            periods: &periods,
            where_: plan.where_,
            semantics: plan.semantics,
            known_at: known.as_ref().map(|k| k as _),
            yearly,
            cohort: cohort.as_ref(),
            crawls: crawls.as_deref(),
            method: plan.method,
            per_site: plan.per_site,
        })
    }

    /// For each period, how many files keep each agent out fully,
    /// partially or not at all, and the group's strictest status per site.
    pub fn trends(&self, r: &TrendsRequest<'_>) -> Result<Trends> {
        let TrendsRequest {
            agents,
            periods,
            where_,
            semantics,
            known_at,
            yearly,
            cohort,
            crawls,
            method,
            per_site,
        } = *r;
        let exact = method == Method::Exact;
        let by_crawl: Vec<(String, i64)>;
        let periods = match crawls {
            Some(c) => {
                by_crawl = c.iter().map(|c| (c.crawl.clone(), c.last)).collect();
                &by_crawl[..]
            }
            None => periods,
        };
        if periods.len() >= usize::from(u16::MAX) {
            return Err(crate::IndexError::Request(format!(
                "{} periods: at most 65,534 are counted",
                periods.len()
            )));
        }
        let parsed = where_.map_or(Ok(Query::All), query::parse)?;
        let mut cohort_hosts: Vec<(&str, f64)> = cohort
            .map(|c| c.weight_of().into_iter().collect())
            .unwrap_or_default();
        cohort_hosts.sort_unstable_by(|a, b| a.0.cmp(b.0));
        let searcher = self.reader.searcher();
        // A version is in force at `t` when `from <= t < until`: over
        // the periods' ends, sorted, that is a run of them, found from the
        // two fast columns; the query (time-free) is matched once.
        let mut order: Vec<usize> = (0..periods.len()).collect();
        order.sort_by_key(|&i| periods[i].1);
        let ends: Vec<i64> = order.iter().map(|&i| periods[i].1).collect();
        // By crawl: each crawl's sorted position, by name.
        // By crawl: each crawl's sorted position and its map (a crawl the
        // index has not read yet counts no file).
        let mut crawl_maps = Vec::new();
        if crawls.is_some() {
            for (pos, &i) in order.iter().enumerate() {
                if let Some(m) = self.crawl_map(&periods[i].0)? {
                    crawl_maps.push((pos, m));
                }
            }
        }
        let matching = match parsed {
            Query::All => None,
            ref q => Some(
                self.translate(q, semantics)?
                    .weight(EnableScoring::disabled_from_searcher(&searcher))
                    .map_err(self.err())?,
            ),
        };
        let decider = Decider::new(semantics, agents);
        // Per segment: each document's run of periods, its site's weight
        // in the cohort, and its stored classes (one value per distinct
        // file, read once, then kept once per distinct answer); counted per
        // (answer, run). A document whose classes were not kept (past the
        // budget) is read and matched as a file.
        let count =
            |seg: &SegmentReader| -> Result<(Vec<Tally>, u64, Vec<crate::per_site::Found>)> {
                let max = seg.max_doc();
                let wanted = match &matching {
                    None => None,
                    Some(w) => {
                        let mut set = BitSet::with_max_value(max);
                        w.for_each_no_score(seg, &mut |docs| {
                            for &d in docs {
                                set.insert(d);
                            }
                        })
                        .map_err(self.err())?;
                        Some(set)
                    }
                };
                let ff = seg.fast_fields();
                let from = ff.i64("from").map_err(self.err())?;
                let until = ff.i64("until").map_err(self.err())?;
                let site_col = match (cohort, per_site) {
                    (None, None) => None,
                    _ => ff.str("site").map_err(self.err())?,
                };
                let site_ords = site_col.as_ref().map(|c| c.ords().clone());
                let site_weight: Option<Vec<f64>> = match cohort {
                    None => None,
                    Some(_) => match &site_col {
                        None => Some(Vec::new()),
                        Some(col) => {
                            let dict = col.dictionary();
                            let mut w = vec![f64::NAN; dict.num_terms()];
                            let mut stream = dict.stream().map_err(|e| io_err(&self.path, e))?;
                            let mut at = 0;
                            while at < cohort_hosts.len() && stream.advance() {
                                let key = stream.key();
                                while at < cohort_hosts.len() && cohort_hosts[at].0.as_bytes() < key
                                {
                                    at += 1;
                                }
                                if at < cohort_hosts.len() && cohort_hosts[at].0.as_bytes() == key {
                                    w[stream.term_ord() as usize] = cohort_hosts[at].1;
                                }
                            }
                            Some(w)
                        }
                    },
                };
                // By crawl: per crawl (its sorted position), when it found each
                // of the segment's sites.
                let seg_crawls = match crawls {
                    None => None,
                    Some(_) => Some(crate::crawls::SegmentCrawls::of(
                        seg,
                        &crawl_maps,
                        &self.path,
                    )?),
                };
                let column = ff.bytes("classes").map_err(self.err())?;
                let no_ords = Column::build_empty_column(max);
                let ords = column.as_ref().map_or(&no_ords, BytesColumn::ords);
                // Pass 1, by blocks of documents: each counted document's
                // stored value (NONE: none), run of periods and weight.
                const NONE: u32 = u32::MAX;
                let mut docs: Vec<(DocId, u32, u16, u16, f64, u64)> = Vec::new();
                // Per-site rows this segment makes (refused past the cap
                // before any is made).
                let row_width = agents.len() as u64 + 1;
                let mut rows = 0u64;
                let mut needed = BitSet::with_max_value(
                    u32::try_from(column.as_ref().map_or(0, BytesColumn::num_terms))
                        .unwrap_or(u32::MAX),
                );
                const BLOCK: u32 = 4096;
                let (mut f, mut u, mut o, mut so) = (
                    vec![0i64; BLOCK as usize],
                    vec![0i64; BLOCK as usize],
                    vec![NONE as u64; BLOCK as usize],
                    vec![u64::MAX; BLOCK as usize],
                );
                let mut runs: Vec<(u16, u16)> = Vec::new();
                for start in (0..max).step_by(BLOCK as usize) {
                    let n = (max - start).min(BLOCK) as usize;
                    read_block(&from, start, &mut f[..n], 0);
                    read_block(&until, start, &mut u[..n], i64::MAX);
                    read_block(ords, start, &mut o[..n], u64::from(NONE));
                    if let Some(s) = &site_ords {
                        read_block(s, start, &mut so[..n], u64::MAX);
                    }
                    for i in 0..n {
                        let d = start + i as u32;
                        if seg.is_deleted(d) || wanted.as_ref().is_some_and(|w| !w.contains(d)) {
                            continue;
                        }
                        // Its runs of periods: by date, the periods it is in
                        // force at the end of; by crawl, each crawl that found
                        // it, a period alone.
                        runs.clear();
                        match &seg_crawls {
                            None => {
                                let lo = ends.partition_point(|&e| e < f[i]);
                                let hi = ends.partition_point(|&e| e < u[i]);
                                if lo < hi {
                                    runs.push((lo as u16, hi as u16));
                                }
                            }
                            Some(c) => runs
                                .extend(c.found(d, f[i], u[i]).map(|p| (p as u16, p as u16 + 1))),
                        }
                        if runs.is_empty() {
                            continue;
                        }
                        let weight = match &site_weight {
                            None => 1.0,
                            Some(w) => match w.get(so[i] as usize) {
                                Some(&x) if !x.is_nan() => x,
                                _ => continue,
                            },
                        };
                        // A study's method judges every file from its body.
                        let ord = if exact {
                            u32::try_from(o[i]).unwrap_or(NONE)
                        } else {
                            NONE
                        };
                        if ord != NONE {
                            needed.insert(ord);
                        }
                        if let Some(cap) = per_site {
                            rows += runs
                                .iter()
                                .map(|&(lo, hi)| u64::from(hi - lo) * row_width)
                                .sum::<u64>();
                            if rows > cap {
                                return Err(too_many_rows(cap));
                            }
                        }
                        docs.extend(runs.iter().map(|&(lo, hi)| (d, ord, lo, hi, weight, so[i])));
                    }
                }
                // Pass 2: the needed stored values, read in dictionary order,
                // each decided once; equal answers share an index.
                const UNKNOWN: u32 = u32::MAX;
                let mut state = vec![UNKNOWN; needed.max_value() as usize];
                let mut answers: FoldMap<Vec<u8>, u32> = FoldMap::default();
                if let Some(c) = &column {
                    let mut stream = c.dictionary().stream().map_err(|e| io_err(&self.path, e))?;
                    let mut key = Vec::new();
                    while stream.advance() {
                        let ord = stream.term_ord() as u32;
                        if !needed.contains(ord) {
                            continue;
                        }
                        if let Some(st) = decider.decide(stream.key(), &mut key) {
                            key.push(
                                u8::from(st.usage)
                                    | (u8::from(st.signal) << 1)
                                    | (u8::from(st.license) << 2),
                            );
                            key.extend_from_slice(&st.statements.to_le_bytes());
                            let next = answers.len() as u32;
                            state[ord as usize] = *answers.entry(key.clone()).or_insert(next);
                        }
                    }
                }
                // Pass 3: counted per (answer, run of periods).
                let mut counts: FoldMap<u64, (u64, f64)> = FoldMap::default();
                let mut unkept: Vec<(DocId, u16, u16, f64, u64)> = Vec::new();
                // Per site: its site, run and answer.
                let mut known: Vec<(u64, u16, u16, u32, f64)> = Vec::new();
                for &(d, ord, lo, hi, weight, site) in &docs {
                    let a = if ord == NONE {
                        UNKNOWN
                    } else {
                        state[ord as usize]
                    };
                    if a == UNKNOWN {
                        unkept.push((d, lo, hi, weight, site));
                        continue;
                    }
                    if per_site.is_some() {
                        known.push((site, lo, hi, a, weight));
                    }
                    let c = counts
                        .entry((u64::from(a) << 32) | (u64::from(lo) << 16) | u64::from(hi))
                        .or_default();
                    c.0 += 1;
                    c.1 += weight;
                }
                drop(docs);
                let mut by_answer: Vec<(Vec<crate::Restriction>, Stated)> =
                    vec![(Vec::new(), Stated::default()); answers.len()];
                for (k, &i) in &answers {
                    let n = agents.len();
                    by_answer[i as usize] = (
                        k[..n].iter().map(|&b| restriction_of(b)).collect(),
                        Stated {
                            usage: k[n] & 1 != 0,
                            signal: k[n] & 2 != 0,
                            license: k[n] & 4 != 0,
                            statements: u16::from_le_bytes([k[n + 1], k[n + 2]]),
                        },
                    );
                }
                // Per answer, the runs summed into each period (a difference
                // array over the sorted periods), then each answer added once
                // per period it is in.
                let np = ends.len();
                let mut diff: Vec<(i64, f64)> = vec![(0, 0.0); by_answer.len() * (np + 1)];
                for (&k, &(n, w)) in &counts {
                    let a = (k >> 32) as usize;
                    let (lo, hi) = (((k >> 16) & 0xFFFF) as usize, (k & 0xFFFF) as usize);
                    let row = &mut diff[a * (np + 1)..(a + 1) * (np + 1)];
                    row[lo].0 += n as i64;
                    row[lo].1 += w;
                    row[hi].0 -= n as i64;
                    row[hi].1 -= w;
                }
                let mut tally = vec![Tally::new(agents.len()); periods.len()];
                for (a, (r, st)) in by_answer.iter().enumerate() {
                    let (mut n, mut w) = (0i64, 0.0f64);
                    for (pos, &p) in order.iter().enumerate() {
                        let x = diff[a * (np + 1) + pos];
                        n += x.0;
                        w += x.1;
                        if n > 0 {
                            tally[p].add_n(r, n as u64, w);
                            tally[p].preferences.add_n(st, n as u64);
                        }
                    }
                }
                // The rows: each site's host read once from the dictionary.
                let weighted = cohort.is_some_and(|c| c.weights.is_some());
                let mut found: Vec<crate::per_site::Found> = Vec::new();
                let mut hosts: FoldMap<u64, std::sync::Arc<str>> = FoldMap::default();
                let mut host_of = |ord: u64| -> Result<std::sync::Arc<str>> {
                    if let Some(h) = hosts.get(&ord) {
                        return Ok(h.clone());
                    }
                    let mut s = String::new();
                    if let Some(c) = &site_col {
                        c.ord_to_str(ord, &mut s)
                            .map_err(|e| io_err(&self.path, e))?;
                    }
                    let h: std::sync::Arc<str> = s.into();
                    hosts.insert(ord, h.clone());
                    Ok(h)
                };
                let mut add_found = |found: &mut Vec<crate::per_site::Found>,
                                     site: u64,
                                     lo: u16,
                                     hi: u16,
                                     verdicts: &std::sync::Arc<[crate::Restriction]>,
                                     exact: Option<&std::sync::Arc<[crate::Restriction]>>,
                                     past_budget: bool,
                                     weight: f64|
                 -> Result<()> {
                    let host = host_of(site)?;
                    for &p in &order[usize::from(lo)..usize::from(hi)] {
                        found.push(crate::per_site::Found {
                            period: p as u16,
                            host: host.clone(),
                            verdicts: verdicts.clone(),
                            exact: exact.cloned(),
                            past_budget,
                            weight: weighted.then_some(weight),
                        });
                    }
                    Ok(())
                };
                if per_site.is_some() {
                    let shared: Vec<std::sync::Arc<[crate::Restriction]>> =
                        by_answer.iter().map(|(r, _)| r[..].into()).collect();
                    for &(site, lo, hi, a, weight) in &known {
                        add_found(
                            &mut found,
                            site,
                            lo,
                            hi,
                            &shared[a as usize],
                            None,
                            false,
                            weight,
                        )?;
                    }
                }
                drop(known);
                if !unkept.is_empty() {
                    let store = seg
                        .get_store_reader(16)
                        .map_err(|e| io_err(&self.path, e))?;
                    type Judged = (
                        std::sync::Arc<[crate::Restriction]>,
                        Stated,
                        Option<std::sync::Arc<[crate::Restriction]>>,
                        bool,
                    );
                    let mut cache: HashMap<Vec<u8>, Judged> = HashMap::new();
                    for &(d, lo, hi, weight, site) in &unkept {
                        let doc: TantivyDocument = store.get(d).map_err(self.err())?;
                        let hash = doc
                            .get_first(self.f.hash)
                            .and_then(|v| v.as_bytes())
                            .unwrap_or_default();
                        let r = match cache.get(hash) {
                            Some(r) => r.clone(),
                            None => {
                                let body = doc
                                    .get_first(self.f.body)
                                    .and_then(|v| v.as_str())
                                    .unwrap_or_default();
                                let body = body.as_bytes();
                                let (judged, past) = method.judge(body, agents, semantics);
                                // The exact engine's verdicts, where they may
                                // differ (a study's method within its budget).
                                let other = if exact || past {
                                    None
                                } else {
                                    Some(crate::restrictions(body, agents, semantics).into())
                                };
                                let r = (judged.into(), stated(body), other, past);
                                if cache.len() < BODY_CACHE {
                                    cache.insert(hash.to_vec(), r.clone());
                                }
                                r
                            }
                        };
                        for &p in &order[usize::from(lo)..usize::from(hi)] {
                            tally[p].add_n(&r.0, 1, weight);
                            tally[p].preferences.add_n(&r.1, 1);
                            if let Some(other) = &r.2 {
                                for ((d, x), y) in
                                    tally[p].disagree.iter_mut().zip(&*r.0).zip(&**other)
                                {
                                    *d += u64::from(x != y);
                                }
                            }
                            tally[p].past_budget += u64::from(r.3);
                        }
                        if per_site.is_some() {
                            add_found(&mut found, site, lo, hi, &r.0, r.2.as_ref(), r.3, weight)?;
                        }
                    }
                }
                Ok((tally, unkept.len() as u64, found))
            };
        let mut total = vec![Tally::new(agents.len()); periods.len()];
        let mut from_bodies = 0;
        let mut found = Vec::new();
        for (seg, unkept, f) in par_map(self.threads, searcher.segment_readers(), count)? {
            from_bodies += unkept;
            found.extend(f);
            if let Some(cap) = per_site
                && found.len() as u64 * (agents.len() as u64 + 1) > cap
            {
                return Err(too_many_rows(cap));
            }
            for (t, s) in total.iter_mut().zip(seg) {
                t.merge(&s);
            }
        }
        let mut out = Vec::with_capacity(periods.len());
        for ((label, end), t) in periods.iter().zip(total) {
            let mut p = Period {
                period: label.clone(),
                end: rfc3339(*end),
                sites: t.sites,
                no_robots_txt: None,
                denominator: 0,
                agents: agents.iter().cloned().zip(t.agents).collect(),
                of_sites: ShareSet::default(),
                of_all: ShareSet::default(),
                group: t.group,
                preferences: t.preferences.adoption(),
                weighted: None,
                disagree: (!exact).then(|| agents.iter().cloned().zip(t.disagree).collect()),
                past_budget: (!exact).then_some(t.past_budget),
            };
            // The sites known then: the cohort's (from the store's first
            // sight of each), else the store's; by crawl, the sites it
            // captured (of the cohort's).
            let captured = crawls.and_then(|c| c.get(out.len()));
            let known = match (where_, cohort, captured) {
                (Some(_), _, _) => None,
                (None, Some(c), Some(cr)) => Some(c.known_in(&cr.of_hosts)),
                (None, None, Some(cr)) => Some((cr.sites, 0.0)),
                (None, Some(c), None) => c.known_at(*end),
                (None, None, None) => match known_at {
                    Some(k) => Some((k(*end)?, 0.0)),
                    None => None,
                },
            };
            if let Some((n, _)) = known {
                p.no_robots_txt = Some(n.saturating_sub(p.sites));
            }
            p.denominator = p.sites + p.no_robots_txt.unwrap_or(0);
            p.of_sites = ShareSet::of(&p.agents, &p.group, p.sites);
            p.of_all = ShareSet::of(&p.agents, &p.group, p.denominator);
            if cohort.is_some_and(|c| c.weights.is_some()) {
                let w = t.weighted;
                let without = known.map(|(_, kw)| (kw - w.sites).max(0.0));
                p.weighted = Some(WeightedPeriod {
                    sites: w.sites,
                    no_robots_txt: without,
                    denominator: w.sites + without.unwrap_or(0.0),
                    agents: agents.iter().cloned().zip(w.agents).collect(),
                    group: w.group,
                });
            }
            out.push(p);
        }
        let per_site = per_site.map(|_| {
            found.sort_unstable_by(|a, b| (a.period, &a.host).cmp(&(b.period, &b.host)));
            PerSite {
                periods: out
                    .iter()
                    .map(|p| (p.period.clone(), p.end.clone()))
                    .collect(),
                agents: agents.to_vec(),
                method: method.as_str(),
                weighted: cohort.is_some_and(|c| c.weights.is_some()),
                found,
            }
        });
        Ok(Trends {
            per_site,
            semantics: semantics.as_str(),
            method: method.as_str(),
            by: match (crawls, yearly) {
                (Some(_), _) => "crawl",
                (None, true) => "year",
                (None, false) => "month",
            },
            agents: agents.to_vec(),
            where_: where_.map(str::to_owned),
            cohort: cohort.map(|c| CohortInfo {
                source: c.source.clone(),
                hosts: c.hosts.len() as u64,
                in_store: c
                    .added
                    .as_ref()
                    .map(|a| a.iter().filter(|x| x.is_some()).count() as u64),
                weight: c.weight_column.clone(),
            }),
            from_bodies,
            periods: out,
        })
    }
}

/// A per-site answer past its cap.
fn too_many_rows(cap: u64) -> crate::IndexError {
    crate::IndexError::Request(format!(
        "the per-site rows are more than {cap} (a row per period, site and agent): \
         narrow them with --from/--to, --where, --sites or fewer agents, or raise --max-rows"
    ))
}

type FoldMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// The first value of each document of `col` from `start`, `missing`
/// where a document has none.
fn read_block<T>(col: &Column<T>, start: DocId, out: &mut [T], missing: T)
where
    T: PartialOrd + Copy + std::fmt::Debug + Send + Sync + 'static,
{
    if col.get_cardinality() == tantivy::columnar::Cardinality::Full {
        col.values.get_range(u64::from(start), out);
    } else {
        for (i, x) in out.iter_mut().enumerate() {
            *x = col.first(start + i as DocId).unwrap_or(missing);
        }
    }
}
