//! Favourability over a set of sites (BotSeer's Figure 5), from the stored bias terms.

use botscope_robotstxt::Semantics;
use serde::Serialize;
use tantivy::query::{EnableScoring, Query as TQuery};
use tantivy::schema::IndexRecordOption;
use tantivy::{SegmentReader, Term};

use crate::bias::{Favorability, RobotFavor, Tilt};
use crate::engine::{Index, io_err, par_map, rfc3339};
use crate::error::Result;
use crate::query::{self, Query};
use crate::schema::{sem_index, too_complex_term};

/// Favourability over a set (BotSeer's Figure 5).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FavorTable {
    /// Files in the set (N), not counting those whose bias was not
    /// computed.
    pub n: u64,
    /// Files of the set left out of N because their bias was not computed
    /// (`contain:too-complex`).
    pub not_computed: u64,
    /// The semantics.
    pub semantics: &'static str,
    /// The time the set is taken at (RFC 3339), or `latest`.
    pub as_of: String,
    /// The query selecting the set, if any.
    #[serde(rename = "where")]
    pub where_: Option<String>,
    /// Per robot.
    pub robots: Vec<RobotFavor>,
}

/// How a favourability table is sorted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum FavorSort {
    /// Files naming the robot, most first.
    #[default]
    Appeared,
    /// Files favouring it.
    Favored,
    /// Files disfavouring it.
    Disfavored,
    /// Favourability, highest first.
    Favorability,
}

impl Index {
    /// Favourability of every robot over the files matching `where_` (all
    /// when `None`) in force at `as_of`, from the bias stored per file.
    pub fn favor(
        &self,
        where_: Option<&str>,
        as_of: Option<i64>,
        semantics: Semantics,
    ) -> Result<FavorTable> {
        let parsed = where_.map_or(Ok(Query::All), query::parse)?;
        let q = self.compile(&parsed, semantics, as_of)?;
        let searcher = self.reader.searcher();
        let weight = q
            .weight(EnableScoring::disabled_from_searcher(&searcher))
            .map_err(self.err())?;
        let field = self.f.bias[sem_index(semantics)];
        let segments = searcher.segment_readers();
        let count = |seg: &SegmentReader| -> Result<(Favorability, u64)> {
            let mut set = vec![false; seg.max_doc() as usize];
            let mut fav = Favorability::new(semantics);
            let alive = seg.alive_bitset();
            let mut n = 0u64;
            weight
                .for_each_no_score(seg, &mut |docs| {
                    for &d in docs {
                        if alive.is_none_or(|a| a.is_alive(d)) {
                            set[d as usize] = true;
                            n += 1;
                        }
                    }
                })
                .map_err(self.err())?;
            // Files whose bias was not computed are not in N.
            let inv = seg.inverted_index(self.f.contain).map_err(self.err())?;
            let term = Term::from_field_text(self.f.contain, too_complex_term(semantics));
            let mut skipped = 0u64;
            if let Some(info) = inv
                .get_term_info(&term)
                .map_err(|e| io_err(&self.path, e))?
            {
                let mut postings = inv
                    .read_postings_from_terminfo(&info, IndexRecordOption::Basic)
                    .map_err(|e| io_err(&self.path, e))?;
                let mut d = tantivy::DocSet::doc(&postings);
                while d != tantivy::TERMINATED {
                    if std::mem::take(&mut set[d as usize]) {
                        skipped += 1;
                    }
                    d = tantivy::DocSet::advance(&mut postings);
                }
            }
            fav.add_files(n - skipped);
            let inv = seg.inverted_index(field).map_err(self.err())?;
            let mut stream = inv.terms().stream().map_err(|e| io_err(&self.path, e))?;
            while stream.advance() {
                let key = stream.key();
                let Some(sep) = key.iter().rposition(|&b| b == 1) else {
                    continue; // a product-token alias
                };
                let (Ok(robot), Some(bias)) = (
                    std::str::from_utf8(&key[..sep]),
                    std::str::from_utf8(&key[sep + 1..])
                        .ok()
                        .and_then(|b| b.parse::<i64>().ok()),
                ) else {
                    continue;
                };
                let mut postings = inv
                    .read_postings_from_terminfo(stream.value(), IndexRecordOption::Basic)
                    .map_err(|e| io_err(&self.path, e))?;
                let mut c = 0u64;
                let mut d = tantivy::DocSet::doc(&postings);
                while d != tantivy::TERMINATED {
                    c += u64::from(set[d as usize]);
                    d = tantivy::DocSet::advance(&mut postings);
                }
                if c > 0 {
                    fav.add_robots(robot, Tilt::of(bias), c);
                }
            }
            Ok((fav, skipped))
        };
        let mut total = Favorability::new(semantics);
        let mut not_computed = 0;
        for (r, skipped) in par_map(self.threads, segments, count)? {
            total.merge(&r);
            not_computed += skipped;
        }
        Ok(FavorTable {
            n: total.n(),
            not_computed,
            semantics: semantics.as_str(),
            as_of: as_of.map_or_else(|| "latest".to_owned(), rfc3339),
            where_: where_.map(str::to_owned),
            robots: total.table(),
        })
    }
}

impl FavorTable {
    /// Keeps robots named in at least `min` files, sorted by `by` (ties by
    /// files naming the robot, then name).
    pub fn sorted(mut self, by: FavorSort, min: u64) -> FavorTable {
        self.robots.retain(|r| r.appeared >= min);
        let key = |r: &RobotFavor| match by {
            FavorSort::Appeared => r.appeared as f64,
            FavorSort::Favored => r.favored as f64,
            FavorSort::Disfavored => r.disfavored as f64,
            FavorSort::Favorability => r.favorability,
        };
        self.robots.sort_by(|a, b| {
            key(b)
                .total_cmp(&key(a))
                .then(b.appeared.cmp(&a.appeared))
                .then_with(|| a.robot.cmp(&b.robot))
        });
        self
    }
}

/// A site's popularity from its rank: 1 for the first, ½ for the tenth,
/// ¼ for the 1,000th, 0 when unranked.
pub fn popularity(rank: u64) -> f64 {
    if rank == u64::MAX || rank == 0 {
        return 0.0;
    }
    1.0 / (1.0 + (rank as f64).log10())
}
