//! Fielded search: the hits among the versions in force, ranked, with their snippets and biases.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Instant;

use botscope_robotstxt::Semantics;
use serde::Serialize;
use tantivy::collector::{Count, FilterCollector, TopDocs};
use tantivy::query::{Query as TQuery, TermQuery};
use tantivy::schema::{Field as TField, IndexRecordOption, Value};
use tantivy::{
    BitSet, DocAddress, DocId, Searcher, SegmentReader, TantivyDocument, Term, index::SegmentId,
};

use crate::collector::Latest;
use crate::engine::{BIAS_CACHE_BYTES, Index, rfc3339};
use crate::error::{IndexError, Result};
use crate::favor::popularity;
use crate::query::{self, Clause};
use crate::schema::sem_index;
use crate::snippet::snippet;

/// How hits are ordered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Rank {
    /// Text relevance (BM25).
    #[default]
    Relevance,
    /// The bias of the robot the query names, most favoured first.
    Bias,
    /// The bias of the robot the query names, least favoured first (the
    /// sites that disfavour it most).
    LeastBias,
    /// Relevance weighted by the site's popularity (its rank in the host
    /// list), as BotSeer combined PageRank with tf-idf.
    Site,
}

/// A search.
#[derive(Debug, Clone)]
pub struct SearchRequest {
    /// The query text.
    pub query: String,
    /// The order of hits.
    pub rank: Rank,
    /// Hits returned at most.
    pub limit: usize,
    /// Hits skipped.
    pub offset: usize,
    /// The semantics of `favor:`, `disfavor:`, `nobias:` and the bias.
    pub semantics: Semantics,
    /// The time whose versions are searched (default: the latest).
    pub as_of: Option<i64>,
}

/// One hit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hit {
    /// The host.
    pub site: String,
    /// The score the hits are ordered by.
    pub score: f64,
    /// The site's rank in the harvested host list.
    pub rank: Option<u64>,
    /// When this version was first fetched (RFC 3339).
    pub fetched: String,
    /// The bias of each robot the file names.
    pub bias: BTreeMap<String, i64>,
    /// The lines the query matched (`N: line`).
    pub snippet: String,
    /// The URL of the version.
    pub url: String,
    /// Where the version comes from.
    pub source: String,
}

/// The answer to a search.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchResults {
    /// The query as given.
    pub query: String,
    /// Documents matching.
    pub total: u64,
    /// Milliseconds taken.
    pub took_ms: f64,
    /// The hits of the page asked.
    pub hits: Vec<Hit>,
}

impl Index {
    /// Runs a search.
    pub fn search(&self, req: &SearchRequest) -> Result<SearchResults> {
        let started = Instant::now();
        let parsed = query::parse(&req.query)?;
        let q = self.translate(&parsed, req.semantics)?;
        let by_crawl = parsed.requires_crawl();
        let searcher = self.reader.searcher();
        let limit = req.limit.max(1);
        let top = TopDocs::with_limit(limit).and_offset(req.offset);
        let (total, docs): (usize, Vec<(f64, DocAddress)>) = match req.rank {
            Rank::Relevance => {
                let (n, d) = self.search_in_force(
                    &searcher,
                    &q,
                    req.as_of,
                    by_crawl,
                    (Count, top.order_by_score()),
                )?;
                (n, d.into_iter().map(|(s, a)| (f64::from(s), a)).collect())
            }
            Rank::Site => {
                let c = top.tweak_score(move |seg: &SegmentReader| {
                    let ranks = seg
                        .fast_fields()
                        .u64("rank")
                        .ok()
                        .map(|c| c.first_or_default_col(u64::MAX));
                    move |doc: DocId, score: f32| {
                        let r = ranks.as_ref().map_or(u64::MAX, |c| c.get_val(doc));
                        f64::from(score) * (1.0 + popularity(r))
                    }
                });
                self.search_in_force(&searcher, &q, req.as_of, by_crawl, (Count, c))?
            }
            Rank::Bias | Rank::LeastBias => {
                let least = req.rank == Rank::LeastBias;
                let robot = parsed
                    .robot()
                    .ok_or_else(|| {
                        IndexError::Request(
                            "--rank bias orders by the bias of the robot the query names: add botname:, favor:, disfavor: or nobias:".into(),
                        )
                    })?
                    .to_owned();
                let sets = self.bias_columns(&searcher, sem_index(req.semantics), &robot);
                let c = top.tweak_score(move |seg: &SegmentReader| {
                    let biases = sets.get(&seg.segment_id()).cloned().unwrap_or_default();
                    move |doc: DocId, score: f32| {
                        // Files without a bias for the robot come last
                        // either way.
                        let b = match biases.get(doc as usize).copied() {
                            Some(b) if b != i32::MIN => {
                                if least {
                                    -i64::from(b)
                                } else {
                                    i64::from(b)
                                }
                            }
                            _ => i64::MIN,
                        };
                        (b, score)
                    }
                });
                let (n, d) =
                    self.search_in_force(&searcher, &q, req.as_of, by_crawl, (Count, c))?;
                let bias = |b: i64| if least && b != i64::MIN { -b } else { b };
                (
                    n,
                    d.into_iter()
                        .map(|((b, _), a)| (bias(b) as f64, a))
                        .collect(),
                )
            }
        };
        let clauses = parsed.positive_clauses();
        let mut hits = Vec::with_capacity(docs.len());
        for (score, addr) in docs {
            hits.push(self.hit(&searcher, addr, score, req.semantics, &clauses)?);
        }
        Ok(SearchResults {
            query: req.query.clone(),
            total: total as u64,
            took_ms: started.elapsed().as_secs_f64() * 1000.0,
            hits,
        })
    }

    /// The latest versions of each segment of `searcher`, as bit sets:
    /// read once from the `latest` postings of a segment and kept while
    /// the segment lives (segments never change; sets of segments merged
    /// away are dropped here).
    pub(crate) fn latest_sets(
        &self,
        searcher: &Searcher,
    ) -> Result<HashMap<SegmentId, Arc<BitSet>>> {
        let mut cache = self.latest.lock().unwrap_or_else(|p| p.into_inner());
        let live: Vec<SegmentId> = searcher
            .segment_readers()
            .iter()
            .map(SegmentReader::segment_id)
            .collect();
        cache.retain(|id, _| live.contains(id));
        let term = Term::from_field_text(self.f.latest, "1");
        for seg in searcher.segment_readers() {
            if cache.contains_key(&seg.segment_id()) {
                continue;
            }
            let mut set = BitSet::with_max_value(seg.max_doc());
            let inv = seg.inverted_index(self.f.latest).map_err(self.err())?;
            if let Some(mut p) = inv
                .read_postings(&term, IndexRecordOption::Basic)
                .map_err(|e| self.err()(e.into()))?
            {
                let mut d = tantivy::DocSet::doc(&p);
                while d != tantivy::TERMINATED {
                    set.insert(d);
                    d = tantivy::DocSet::advance(&mut p);
                }
            }
            cache.insert(seg.segment_id(), Arc::new(set));
        }
        Ok(cache.clone())
    }

    /// The bias of `robot` per segment of `searcher` (semantics `k`), as
    /// dense columns: read from the postings once per segment and kept,
    /// the most recently used first, up to [`BIAS_CACHE_BYTES`].
    pub(crate) fn bias_columns(
        &self,
        searcher: &Searcher,
        k: usize,
        robot: &str,
    ) -> HashMap<SegmentId, Arc<Vec<i32>>> {
        let field = self.f.bias[k];
        let mut out = HashMap::new();
        for seg in searcher.segment_readers() {
            let id = seg.segment_id();
            let cached = {
                let mut cache = self.biases.lock().unwrap_or_else(|p| p.into_inner());
                let hit = cache
                    .iter()
                    .position(|(i, kk, r, _)| *i == id && *kk == k && r == robot);
                hit.map(|i| {
                    let e = cache.remove(i);
                    let col = e.3.clone();
                    cache.insert(0, e);
                    col
                })
            };
            let col = match cached {
                Some(c) => c,
                None => {
                    let col = Arc::new(segment_biases(seg, field, robot).unwrap_or_default());
                    let mut cache = self.biases.lock().unwrap_or_else(|p| p.into_inner());
                    cache.insert(0, (id, k, robot.to_owned(), col.clone()));
                    let mut bytes = 0;
                    cache.retain(|e| {
                        bytes += e.3.len() * 4;
                        bytes <= BIAS_CACHE_BYTES
                    });
                    col
                }
            };
            out.insert(id, col);
        }
        out
    }

    /// Runs `collector` over the documents of `q` in force at `as_of`
    /// (default: the latest versions). The versions in force are picked
    /// as hits are collected (the latest through [`Index::latest_sets`],
    /// another date through the `from` and `until` columns), not by
    /// intersecting the query with the postings of every latest version:
    /// most documents are latest, and seeking through that list cost
    /// more than the query itself (`botname:msnbot` 4.0 → 0.9 ms on 2.2M
    /// sites). An index built at one date holds only versions in force.
    /// `by_crawl`: the query requires a crawl
    /// ([`crate::query::Query::requires_crawl`]),
    /// which picks each site's version itself; no date is then asked.
    pub(crate) fn search_in_force<C>(
        &self,
        searcher: &Searcher,
        q: &dyn TQuery,
        as_of: Option<i64>,
        by_crawl: bool,
        collector: C,
    ) -> Result<C::Fruit>
    where
        C: tantivy::collector::Collector + Send + Sync,
    {
        let r = match as_of {
            // The versions a crawl found, or the only ones there are.
            None if by_crawl || self.meta.as_of.is_some() => searcher.search(q, &collector),
            None => {
                let sets = self.latest_sets(searcher)?;
                searcher.search(q, &Latest { sets, collector })
            }
            Some(t) => searcher.search(
                q,
                &FilterCollector::new(
                    "from".into(),
                    move |f: i64| f <= t,
                    FilterCollector::new("until".into(), move |u: i64| u > t, collector),
                ),
            ),
        };
        r.map_err(self.err())
    }

    pub(crate) fn hit(
        &self,
        searcher: &Searcher,
        addr: DocAddress,
        score: f64,
        sem: Semantics,
        clauses: &[&Clause],
    ) -> Result<Hit> {
        let d: TantivyDocument = searcher.doc(addr).map_err(self.err())?;
        let text = |f: TField| {
            d.get_first(f)
                .and_then(|v| v.as_str())
                .unwrap_or_default()
                .to_owned()
        };
        let body = text(self.f.body);
        let all: serde_json::Value =
            serde_json::from_str(&text(self.f.bias_json)).unwrap_or_default();
        let bias = all[sem.as_str()]
            .as_object()
            .map(|m| {
                m.iter()
                    .map(|(k, v)| (k.clone(), v.as_i64().unwrap_or(0)))
                    .collect()
            })
            .unwrap_or_default();
        let rank = d
            .get_first(self.f.rank)
            .and_then(|v| v.as_u64())
            .filter(|&r| r != u64::MAX);
        let from = d
            .get_first(self.f.from)
            .and_then(|v| v.as_i64())
            .unwrap_or(0);
        Ok(Hit {
            site: text(self.f.site),
            score,
            rank,
            fetched: rfc3339(from),
            bias,
            snippet: snippet(&body, clauses),
            url: text(self.f.url),
            source: text(self.f.source),
        })
    }

    /// The stored versions of one site: `(from, until, body)`, oldest first.
    pub fn site_versions(&self, host: &str) -> Result<Vec<(i64, i64, String)>> {
        let searcher = self.reader.searcher();
        let q = TermQuery::new(
            Term::from_field_text(self.f.site, &host.to_ascii_lowercase()),
            IndexRecordOption::Basic,
        );
        let docs = searcher
            .search(&q, &TopDocs::with_limit(10_000).order_by_score())
            .map_err(self.err())?;
        let mut out = Vec::new();
        for (_, a) in docs {
            let d: TantivyDocument = searcher.doc(a).map_err(self.err())?;
            let num = |f: TField| d.get_first(f).and_then(|v| v.as_i64()).unwrap_or(0);
            let body = d
                .get_first(self.f.body)
                .and_then(|v| v.as_str())
                .unwrap_or_default()
                .to_owned();
            out.push((num(self.f.from), num(self.f.until), body));
        }
        out.sort_by_key(|x| x.0);
        Ok(out)
    }
}

/// The bias of `robot` in every document of a segment that has one
/// (`i32::MIN` elsewhere), read from the postings of its bias terms. A
/// dense column, not a map: a robot such as Googlebot has a bias in most
/// documents, and filling a hash map with millions of entries per search
/// cost more than the search.
pub(crate) fn segment_biases(seg: &SegmentReader, field: TField, robot: &str) -> Option<Vec<i32>> {
    let inv = seg.inverted_index(field).ok()?;
    let mut out = vec![i32::MIN; seg.max_doc() as usize];
    for sep in ['\u{2}', '\u{1}'] {
        let lo = format!("{robot}{sep}");
        let hi = format!("{robot}{}", char::from_u32(sep as u32 + 1).unwrap_or(sep));
        let mut stream = inv.terms().range().ge(&lo).lt(&hi).into_stream().ok()?;
        while stream.advance() {
            let bias: i64 = std::str::from_utf8(&stream.key()[lo.len()..])
                .ok()?
                .parse()
                .ok()?;
            let bias =
                i32::try_from(bias).unwrap_or(if bias < 0 { i32::MIN + 1 } else { i32::MAX });
            let mut p = inv
                .read_postings_from_terminfo(stream.value(), IndexRecordOption::Basic)
                .ok()?;
            let mut d = tantivy::DocSet::doc(&p);
            while d != tantivy::TERMINATED {
                // Names (read last) win over product tokens.
                if let Some(slot) = out.get_mut(d as usize) {
                    *slot = bias;
                }
                d = tantivy::DocSet::advance(&mut p);
            }
        }
    }
    Some(out)
}
