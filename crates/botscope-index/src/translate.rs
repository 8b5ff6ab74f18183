//! A parsed query (`crate::query`) turned into tantivy's, with the versions in force.

use std::ops::Bound as StdBound;

use botscope_robotstxt::Semantics;
use tantivy::Term;
use tantivy::query::{
    AllQuery, BooleanQuery, ConstScoreQuery, EmptyQuery, InvertedIndexRangeQuery, Occur,
    PhraseQuery, Query as TQuery, RangeQuery, RegexQuery, TermQuery,
};
use tantivy::schema::{Field as TField, IndexRecordOption};

use crate::engine::Index;
use crate::error::Result;
use crate::query::{Bound, Clause, Field, Query};
use crate::schema::sem_index;

impl Index {
    /// The filter of the versions in force at `as_of` (default: latest).
    pub(crate) fn in_force(&self, as_of: Option<i64>) -> Box<dyn TQuery> {
        match as_of {
            None => Box::new(TermQuery::new(
                Term::from_field_text(self.f.latest, "1"),
                IndexRecordOption::Basic,
            )),
            Some(t) => Box::new(BooleanQuery::intersection(vec![
                Box::new(RangeQuery::new(
                    StdBound::Unbounded,
                    StdBound::Included(Term::from_field_i64(self.f.from, t)),
                )),
                Box::new(RangeQuery::new(
                    StdBound::Excluded(Term::from_field_i64(self.f.until, t)),
                    StdBound::Unbounded,
                )),
            ])),
        }
    }

    /// A parsed query as tantivy's, restricted to the versions in force.
    pub(crate) fn compile(
        &self,
        q: &Query,
        semantics: Semantics,
        as_of: Option<i64>,
    ) -> Result<Box<dyn TQuery>> {
        let inner = self.translate(q, semantics)?;
        // A crawl picks each site's version itself.
        if as_of.is_none() && q.requires_crawl() {
            return Ok(inner);
        }
        Ok(Box::new(BooleanQuery::new(vec![
            (Occur::Must, inner),
            (
                Occur::Must,
                Box::new(ConstScoreQuery::new(self.in_force(as_of), 0.0)),
            ),
        ])))
    }

    pub(crate) fn translate(&self, q: &Query, sem: Semantics) -> Result<Box<dyn TQuery>> {
        Ok(match q {
            Query::All => Box::new(AllQuery),
            Query::Clause(c) => self.clause(c, sem)?,
            Query::Or(v) => Box::new(BooleanQuery::new(
                v.iter()
                    .map(|q| Ok((Occur::Should, self.translate(q, sem)?)))
                    .collect::<Result<Vec<_>>>()?,
            )),
            Query::And(v) => {
                let mut parts = Vec::new();
                for q in v {
                    parts.push(match q {
                        Query::Not(n) => (Occur::MustNot, self.translate(n, sem)?),
                        q => (Occur::Must, self.translate(q, sem)?),
                    });
                }
                if parts.iter().all(|(o, _)| *o == Occur::MustNot) {
                    parts.push((Occur::Must, Box::new(AllQuery)));
                }
                Box::new(BooleanQuery::new(parts))
            }
            Query::Not(n) => Box::new(BooleanQuery::new(vec![
                (Occur::Must, Box::new(AllQuery)),
                (Occur::MustNot, self.translate(n, sem)?),
            ])),
        })
    }

    pub(crate) fn clause(&self, c: &Clause, sem: Semantics) -> Result<Box<dyn TQuery>> {
        let f = &self.f;
        let term = |field: TField, v: &str| -> Box<dyn TQuery> {
            Box::new(TermQuery::new(
                Term::from_field_text(field, v),
                IndexRecordOption::WithFreqs,
            ))
        };
        let prefix = |field: TField, v: &str| -> Result<Box<dyn TQuery>> {
            let pattern = format!("{}.*", regex_syntax::escape(v));
            RegexQuery::from_pattern(&pattern, field)
                .map(|q| Box::new(q) as Box<dyn TQuery>)
                .map_err(self.err())
        };
        let path = |raw: TField, seg: TField, v: &str| -> Result<Box<dyn TQuery>> {
            if v == "/" {
                Ok(term(raw, v))
            } else if v.starts_with(['/', '*']) {
                prefix(raw, v)
            } else {
                // Segments: every one present, in any path of the file.
                let segs: Vec<String> = v
                    .split('/')
                    .filter(|s| !s.is_empty())
                    .map(str::to_lowercase)
                    .collect();
                Ok(match segs.len() {
                    0 => Box::new(EmptyQuery),
                    1 => term(seg, &segs[0]),
                    _ => Box::new(BooleanQuery::intersection(
                        segs.iter().map(|s| term(seg, s)).collect(),
                    )),
                })
            }
        };
        let k = sem_index(sem);
        Ok(match c {
            Clause::Term(field, v) => match field {
                Field::Botname => term(f.botname, v),
                Field::Site => term(f.suffix, v),
                Field::Disallow => path(f.disallow, f.disallow_seg, v)?,
                Field::Allow => path(f.allow, f.allow_seg, v)?,
                Field::Favor => term(f.tilt[k][0], v),
                Field::Disfavor => term(f.tilt[k][1], v),
                Field::Nobias => term(f.tilt[k][2], v),
                Field::Contain => term(f.contain, v),
                Field::Sitemap if v == "*" => prefix(f.sitemap, "")?,
                Field::Sitemap => prefix(f.sitemap, v)?,
                Field::Signal => term(f.signal, v),
                Field::Usage => term(f.signal, &format!("{}{v}", crate::doc::USAGE_TERM)),
                Field::Crawl => Box::new(self.crawl_query(v)?),
                Field::Delay => Box::new(EmptyQuery),
            },
            Clause::Delay(lo, hi) => {
                let b = |x: &Bound| match *x {
                    Bound::Open => StdBound::Unbounded,
                    Bound::Inclusive(v) => StdBound::Included(Term::from_field_f64(f.delay, v)),
                    Bound::Exclusive(v) => StdBound::Excluded(Term::from_field_f64(f.delay, v)),
                };
                // Through the term dictionary, not the fast column: a
                // file has few distinct delays, so the union of their
                // postings is far cheaper than a scan of every document's
                // value (29 ms against 3 on 2.2M sites, `delay:>10`).
                match (lo, hi) {
                    (Bound::Open, Bound::Open) => Box::new(InvertedIndexRangeQuery::new(
                        StdBound::Included(Term::from_field_f64(f.delay, f64::MIN)),
                        StdBound::Unbounded,
                    )),
                    _ => Box::new(InvertedIndexRangeQuery::new(b(lo), b(hi))),
                }
            }
            Clause::Word(w) => term(f.body, w),
            Clause::Phrase(ws) => Box::new(PhraseQuery::new(
                ws.iter()
                    .map(|w| Term::from_field_text(f.body, w))
                    .collect(),
            )),
        })
    }
}
