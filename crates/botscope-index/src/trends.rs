//! Restriction trends: per period, how the versions in force then treat each agent.

use std::collections::{BTreeMap, HashMap};

use botscope_robotstxt::Semantics;
use serde::Serialize;
use tantivy::query::{EnableScoring, Query as TQuery};
use tantivy::schema::Value;
use tantivy::{DocId, SegmentReader, TantivyDocument};

use crate::engine::{BODY_CACHE, Index, io_err, par_map, rfc3339};
use crate::error::Result;
use crate::classes::Stated;
use crate::query::{self, Query};

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
    /// Per statement (`usage:train-ai=n`, `signal:ai-train=no`), sites
    /// that make it somewhere in their file: only the vocabulary's
    /// categories and the policy's signals with their defined values.
    pub statements: BTreeMap<String, u64>,
}

impl Adoption {
    fn add_n(&mut self, s: &Stated, n: u64) {
        if s.usage || s.signal {
            self.any += n;
        }
        self.content_usage += u64::from(s.usage) * n;
        self.content_signal += u64::from(s.signal) * n;
        for k in s.made() {
            *self.statements.entry(k).or_default() += n;
        }
    }

    fn merge(&mut self, o: &Adoption) {
        self.any += o.any;
        self.content_usage += o.content_usage;
        self.content_signal += o.content_signal;
        for (k, n) in &o.statements {
            *self.statements.entry(k.clone()).or_default() += n;
        }
    }
}

/// The usage preferences `body` states anywhere: a byte scan first, the
/// file parsed only when it names Content-Usage or Content-Signal.
pub(crate) fn stated(body: &[u8]) -> Stated {
    let finder = |needle: &[u8]| {
        body.windows(needle.len())
            .any(|w| w.eq_ignore_ascii_case(needle))
    };
    if !finder(b"content-usage") && !finder(b"content-signal") {
        return Stated::default();
    }
    Stated::of(&botscope_robotstxt::Robots::parse(body))
}

/// A period's counts while they are made.
#[derive(Clone)]
pub(crate) struct Tally {
    pub(crate) sites: u64,
    pub(crate) agents: Vec<Counts>,
    pub(crate) group: Counts,
    pub(crate) preferences: Adoption,
}

impl Tally {
    pub(crate) fn new(agents: usize) -> Tally {
        Tally {
            sites: 0,
            agents: vec![Counts::default(); agents],
            group: Counts::default(),
            preferences: Adoption::default(),
        }
    }

    /// `n` sites' restrictions, one per agent, all alike.
    pub(crate) fn add_n(&mut self, r: &[crate::Restriction], n: u64) {
        self.sites += n;
        for (c, x) in self.agents.iter_mut().zip(r) {
            c.add_n(*x, n);
        }
        self.group
            .add_n(r.iter().copied().max().unwrap_or(crate::Restriction::None), n);
    }

    pub(crate) fn merge(&mut self, o: &Tally) {
        self.sites += o.sites;
        for (a, b) in self.agents.iter_mut().zip(&o.agents) {
            a.merge(b);
        }
        self.group.merge(&o.group);
        self.preferences.merge(&o.preferences);
    }
}

/// One period of a trend.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Period {
    /// `2024-03` (by month) or `2024` (by year).
    pub period: String,
    /// Its last second (RFC 3339): each site's version in force then.
    pub end: String,
    /// Sites with a robots.txt in force (and matching `where`).
    pub sites: u64,
    /// Sites of the store known by then without a robots.txt in force
    /// (only without `where`, and with a store).
    pub no_robots_txt: Option<u64>,
    /// The denominator of the shares: sites plus those without one.
    pub denominator: u64,
    /// Per agent.
    pub agents: BTreeMap<String, Counts>,
    /// The group, strictest status of its agents per site.
    pub group: Counts,
    /// Sites (of `sites`) whose file states AI usage preferences, and which.
    pub preferences: Adoption,
}

/// Restriction of agents over time ("Consent in Crisis", exactly).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Trends {
    /// The semantics.
    pub semantics: &'static str,
    /// `month` or `year`.
    pub by: &'static str,
    /// The agents (robots.txt product tokens).
    pub agents: Vec<String>,
    /// The query selecting the sites.
    #[serde(rename = "where")]
    pub where_: Option<String>,
    /// Versions whose restrictions were computed from their body, not
    /// read from the index: files past the index's work or name budget
    /// ([`crate::CLASS_WORK_CAP`], [`crate::CLASS_NAME_BYTES`]); every
    /// other version's come from the classes stored when it was indexed.
    pub from_bodies: u64,
    /// Oldest first.
    pub periods: Vec<Period>,
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

    /// For each period, how many files keep each agent out fully,
    /// partially or not at all, and the group's strictest status per site.
    /// `known_at(t)` counts the sites the store knew at `t` (for the sites
    /// without a robots.txt); it is not asked with `where_`.
    pub fn trends(
        &self,
        agents: &[String],
        periods: &[(String, i64)],
        where_: Option<&str>,
        semantics: Semantics,
        known_at: Option<&dyn Fn(i64) -> Result<u64>>,
        yearly: bool,
    ) -> Result<Trends> {
        let parsed = where_.map_or(Ok(Query::All), query::parse)?;
        let searcher = self.reader.searcher();
        let weights = periods
            .iter()
            .map(|(_, end)| {
                self.compile(&parsed, semantics, Some(*end))?
                    .weight(EnableScoring::disabled_from_searcher(&searcher))
                    .map_err(self.err())
            })
            .collect::<Result<Vec<_>>>()?;
        let words = periods.len().div_ceil(64).max(1);
        // Per segment: the periods each document is in force and matching
        // in; then each document's stored classes (one value per distinct
        // file, decoded once) counted once per distinct set of periods.
        // A document whose classes were not kept (past the budget) is read
        // and matched as a file.
        let count = |seg: &SegmentReader| -> Result<(Vec<Tally>, u64)> {
            let max = seg.max_doc() as usize;
            let mut member = vec![0u64; max * words];
            for (p, w) in weights.iter().enumerate() {
                w.for_each_no_score(seg, &mut |docs| {
                    for &d in docs {
                        member[d as usize * words + p / 64] |= 1 << (p % 64);
                    }
                })
                .map_err(self.err())?;
            }
            let mut tally = vec![Tally::new(agents.len()); periods.len()];
            let column = seg
                .fast_fields()
                .bytes("classes")
                .map_err(self.err())?;
            // Per distinct stored value: its index in `decided`, or
            // UNKNOWN (not kept), or UNSEEN.
            const UNSEEN: u32 = u32::MAX;
            const UNKNOWN: u32 = u32::MAX - 1;
            let mut state = vec![UNSEEN; column.as_ref().map_or(0, |c| c.num_terms())];
            let mut decided: Vec<(Vec<crate::Restriction>, Stated)> = Vec::new();
            let mut patterns: HashMap<Vec<u64>, u32> = HashMap::new();
            let mut counts: HashMap<(u32, u32), u64> = HashMap::new();
            let mut unkept: Vec<DocId> = Vec::new();
            let mut buf = Vec::new();
            for d in 0..max {
                let bits = &member[d * words..(d + 1) * words];
                if bits.iter().all(|&b| b == 0) || seg.is_deleted(d as DocId) {
                    continue;
                }
                let ord = column.as_ref().and_then(|c| c.ords().first(d as DocId));
                let Some((c, ord)) = column.as_ref().zip(ord) else {
                    unkept.push(d as DocId);
                    continue;
                };
                let slot = &mut state[ord as usize];
                if *slot == UNSEEN {
                    buf.clear();
                    c.ord_to_bytes(ord, &mut buf)
                        .map_err(|e| io_err(&self.path, e))?;
                    *slot = match crate::Classes::decode(&buf).and_then(|k| {
                        Some((k.restrictions(semantics, agents)?, k.stated))
                    }) {
                        Some(x) => {
                            decided.push(x);
                            (decided.len() - 1) as u32
                        }
                        None => UNKNOWN,
                    };
                }
                if *slot == UNKNOWN {
                    unkept.push(d as DocId);
                    continue;
                }
                let pattern = match patterns.get(bits) {
                    Some(&p) => p,
                    None => {
                        let p = patterns.len() as u32;
                        patterns.insert(bits.to_vec(), p);
                        p
                    }
                };
                *counts.entry((*slot, pattern)).or_default() += 1;
            }
            let mut by_pattern: Vec<&[u64]> = vec![&[]; patterns.len()];
            for (bits, &p) in &patterns {
                by_pattern[p as usize] = bits;
            }
            for (&(k, pattern), &n) in &counts {
                let (r, st) = &decided[k as usize];
                let bits = by_pattern[pattern as usize];
                for (p, t) in tally.iter_mut().enumerate() {
                    if bits[p / 64] & (1 << (p % 64)) != 0 {
                        t.add_n(r, n);
                        t.preferences.add_n(st, n);
                    }
                }
            }
            if !unkept.is_empty() {
                let store = seg
                    .get_store_reader(16)
                    .map_err(|e| io_err(&self.path, e))?;
                let mut cache: HashMap<Vec<u8>, (Vec<crate::Restriction>, Stated)> =
                    HashMap::new();
                for &d in &unkept {
                    let bits = &member[d as usize * words..(d as usize + 1) * words];
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
                            let r = (
                                crate::restrictions(body.as_bytes(), agents, semantics),
                                stated(body.as_bytes()),
                            );
                            if cache.len() < BODY_CACHE {
                                cache.insert(hash.to_vec(), r.clone());
                            }
                            r
                        }
                    };
                    for (p, t) in tally.iter_mut().enumerate() {
                        if bits[p / 64] & (1 << (p % 64)) != 0 {
                            t.add_n(&r.0, 1);
                            t.preferences.add_n(&r.1, 1);
                        }
                    }
                }
            }
            Ok((tally, unkept.len() as u64))
        };
        let mut total = vec![Tally::new(agents.len()); periods.len()];
        let mut from_bodies = 0;
        for (seg, unkept) in par_map(self.threads, searcher.segment_readers(), count)? {
            from_bodies += unkept;
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
                group: t.group,
                preferences: t.preferences,
            };
            if where_.is_none()
                && let Some(known) = known_at
            {
                p.no_robots_txt = Some(known(*end)?.saturating_sub(p.sites));
            }
            p.denominator = p.sites + p.no_robots_txt.unwrap_or(0);
            out.push(p);
        }
        Ok(Trends {
            semantics: semantics.as_str(),
            by: if yearly { "year" } else { "month" },
            agents: agents.to_vec(),
            where_: where_.map(str::to_owned),
            from_bodies,
            periods: out,
        })
    }
}
