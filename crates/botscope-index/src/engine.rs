//! The research index on disk (tantivy): one document per stored version,
//! valid from its first fetch until the next version's; the version in
//! force at a time is the site's document for that time (BotSeer's
//! temporal data selection). Building and updating read the store; search
//! and favourability read only the index.

use std::collections::{BTreeMap, HashMap};
use std::ops::Bound as StdBound;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use botscope_robotstxt::Semantics;
use botscope_store::{SiteHistory, Store, StoreError, Version};
use serde::{Deserialize, Serialize};
use tantivy::collector::{Count, FilterCollector, TopDocs};
use tantivy::query::{
    AllQuery, BooleanQuery, ConstScoreQuery, EmptyQuery, EnableScoring, InvertedIndexRangeQuery,
    Occur, PhraseQuery, Query as TQuery, RangeQuery, RegexQuery, TermQuery,
};
use tantivy::schema::{
    FAST, Field as TField, INDEXED, IndexRecordOption, STORED, STRING, Schema, TEXT, Value,
};
use tantivy::{
    BitSet, DocAddress, DocId, Index as TIndex, IndexReader, IndexSettings, IndexWriter, Searcher,
    SegmentReader, TantivyDocument, Term, index::SegmentId,
};

use crate::bias::{Favorability, RobotFavor, Tilt};
use crate::doc::{BodyFields, host_suffixes, product_token};
use crate::query::{self, Bound, Clause, Field, Query, QueryError};
use crate::snippet::snippet;

/// The index format this build writes (in the commit payload).
const FORMAT: u32 = 1;
/// Distinct bodies whose fields are kept while building.
const BODY_CACHE: usize = 65_536;
/// The writer's memory, all threads.
const WRITER_MEMORY: usize = 256 * 1024 * 1024;
/// `until` of the latest version.
const FOREVER: i64 = i64::MAX;

/// An index error: always says which directory and what to do.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// Not a botscope index (and not empty): nothing is written there.
    #[error(
        "{path}: not a botscope index (and not empty); give a new directory or an index built by `botscope index build`"
    )]
    NotAnIndex {
        /// The directory.
        path: String,
    },
    /// No index there.
    #[error("{path}: no index here; build one with `botscope index build --db DB --index {path}`")]
    Missing {
        /// The directory.
        path: String,
    },
    /// Another process is writing the index.
    #[error("{path}: another process is writing this index")]
    Locked {
        /// The directory.
        path: String,
    },
    /// A query that cannot be read.
    #[error("{0}")]
    Query(#[from] QueryError),
    /// A request that cannot be answered as asked.
    #[error("{0}")]
    Request(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The index failed.
    #[error("{path}: {detail}")]
    Tantivy {
        /// The directory.
        path: String,
        /// tantivy's words.
        detail: String,
    },
}

/// Results of index operations.
pub type Result<T> = std::result::Result<T, IndexError>;

/// What a commit records: where in the store the index is, and what it
/// holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Meta {
    /// The index format.
    pub format: u32,
    /// The store's change mark the index has reached.
    pub mark: i64,
    /// The time the index was built for (`--as-of`): one version per site
    /// in force then; `None`: every version.
    pub as_of: Option<i64>,
    /// When the last commit was made.
    pub committed: i64,
}

/// The schema's fields.
#[derive(Clone, Copy)]
struct Fields {
    site: TField,
    suffix: TField,
    botname: TField,
    disallow: TField,
    allow: TField,
    disallow_seg: TField,
    allow_seg: TField,
    delay: TField,
    contain: TField,
    sitemap: TField,
    signal: TField,
    /// favor, disfavor, nobias under Google's rules, then the 1996 draft.
    tilt: [[TField; 3]; 2],
    /// `robot\x01bias` (names) and `token\x02bias` (product tokens).
    bias: [TField; 2],
    bias_json: TField,
    body: TField,
    from: TField,
    until: TField,
    latest: TField,
    rank: TField,
    source: TField,
    url: TField,
    hash: TField,
}

fn schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let s = |b: &mut tantivy::schema::SchemaBuilder, n: &str| b.add_text_field(n, STRING);
    let f = Fields {
        site: b.add_text_field("site", STRING | STORED | FAST),
        suffix: s(&mut b, "suffix"),
        botname: b.add_text_field("botname", STRING | FAST),
        disallow: s(&mut b, "disallow"),
        allow: s(&mut b, "allow"),
        disallow_seg: s(&mut b, "disallow_seg"),
        allow_seg: s(&mut b, "allow_seg"),
        delay: b.add_f64_field("delay", INDEXED | FAST),
        contain: s(&mut b, "contain"),
        sitemap: s(&mut b, "sitemap"),
        signal: s(&mut b, "signal"),
        tilt: [
            [
                s(&mut b, "favor_g"),
                s(&mut b, "disfavor_g"),
                s(&mut b, "nobias_g"),
            ],
            [
                s(&mut b, "favor_d"),
                s(&mut b, "disfavor_d"),
                s(&mut b, "nobias_d"),
            ],
        ],
        bias: [s(&mut b, "bias_g"), s(&mut b, "bias_d")],
        bias_json: b.add_text_field("bias_json", STORED),
        body: b.add_text_field("body", TEXT | STORED),
        from: b.add_i64_field("from", INDEXED | FAST | STORED),
        until: b.add_i64_field("until", INDEXED | FAST | STORED),
        latest: s(&mut b, "latest"),
        rank: b.add_u64_field("rank", FAST | STORED),
        source: b.add_text_field("source", STRING | STORED),
        url: b.add_text_field("url", STORED),
        hash: b.add_bytes_field("hash", STORED),
    };
    (b.build(), f)
}

/// The `contain` term of a file whose bias under `s` was not computed.
fn too_complex_term(s: Semantics) -> &'static str {
    match s {
        Semantics::Google => "too-complex:google",
        Semantics::Draft1996 => "too-complex:draft1996",
    }
}

fn sem_index(s: Semantics) -> usize {
    match s {
        Semantics::Google => 0,
        Semantics::Draft1996 => 1,
    }
}

/// `2024-03-01T10:00:00Z`.
pub fn rfc3339(t: i64) -> String {
    jiff::Timestamp::from_second(t).map_or_else(|_| t.to_string(), |ts| ts.to_string())
}

/// What a build or update did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct BuildReport {
    /// Sites (re)indexed.
    pub sites: u64,
    /// Documents written (versions).
    pub documents: u64,
    /// Distinct bodies whose fields were computed.
    pub bodies: u64,
    /// The store's change mark reached.
    pub mark: i64,
    /// Bytes of the index directory after the commit.
    pub bytes: u64,
}

impl std::fmt::Display for BuildReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} sites, {} documents ({} distinct bodies analysed), {} bytes on disk",
            self.sites, self.documents, self.bodies, self.bytes
        )
    }
}

/// The research index in a directory.
pub struct Index {
    path: PathBuf,
    index: TIndex,
    reader: IndexReader,
    f: Fields,
    meta: Meta,
    /// The latest versions per segment (see [`Index::latest_sets`]).
    latest: Mutex<HashMap<SegmentId, Arc<BitSet>>>,
    /// Bias columns per (segment, semantics, robot), most recent first
    /// (see [`Index::bias_columns`]).
    biases: Mutex<BiasCache>,
}

type BiasCache = Vec<(SegmentId, usize, String, Arc<Vec<i32>>)>;

/// Memory the bias columns of [`Index::bias_columns`] keep at most (a
/// column is 4 bytes per document of its segment: 10 MB for 2.6 million).
const BIAS_CACHE_BYTES: usize = 64 << 20;

fn tantivy_err(path: &Path) -> impl Fn(tantivy::TantivyError) -> IndexError + '_ {
    move |e| match e {
        tantivy::TantivyError::LockFailure(..) => IndexError::Locked {
            path: path.display().to_string(),
        },
        e => IndexError::Tantivy {
            path: path.display().to_string(),
            detail: e.to_string(),
        },
    }
}

fn dir_bytes(p: &Path) -> u64 {
    std::fs::read_dir(p)
        .map(|d| {
            d.filter_map(|e| e.ok()?.metadata().ok())
                .filter(|m| m.is_file())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

/// Reads the commit payload of an index directory.
fn read_meta(index: &TIndex, path: &Path) -> Result<Meta> {
    let metas = index.load_metas().map_err(tantivy_err(path))?;
    metas
        .payload
        .as_deref()
        .and_then(|p| serde_json::from_str::<Meta>(p).ok())
        .filter(|m| m.format == FORMAT)
        .ok_or_else(|| IndexError::NotAnIndex {
            path: path.display().to_string(),
        })
}

/// Builds documents of sites and adds them, caching body fields by hash.
struct Feeder<'w> {
    writer: &'w IndexWriter,
    f: Fields,
    as_of: Option<i64>,
    cache: HashMap<[u8; 32], Arc<BodyFields>>,
    report: BuildReport,
    path: PathBuf,
    pending: Vec<SiteHistory>,
}

/// Sites whose body fields are computed together, on two threads.
const FEED_BATCH: usize = 512;

impl Feeder<'_> {
    /// Takes a site; its documents are added when the batch is full.
    fn push(&mut self, h: SiteHistory) -> Result<()> {
        self.pending.push(h);
        if self.pending.len() >= FEED_BATCH {
            self.flush()?;
        }
        Ok(())
    }

    /// Computes the fields of the batch's new bodies on two threads, then
    /// adds its documents in order.
    fn flush(&mut self) -> Result<()> {
        let batch = std::mem::take(&mut self.pending);
        let mut need: Vec<&Version> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for v in batch.iter().flat_map(|h| h.stream()) {
            if !self.cache.contains_key(&v.hash) && seen.insert(v.hash) {
                need.push(v);
            }
        }
        if self.cache.len() + need.len() > BODY_CACHE {
            self.cache.clear();
        }
        self.report.bodies += need.len() as u64;
        let computed = par_map(&need, |v| Ok(Arc::new(BodyFields::of(&v.body))))?;
        for (v, b) in need.iter().zip(computed) {
            self.cache.insert(v.hash, b);
        }
        for h in &batch {
            self.site(h)?;
        }
        Ok(())
    }

    fn fields(&mut self, v: &Version) -> Arc<BodyFields> {
        if let Some(b) = self.cache.get(&v.hash) {
            return b.clone();
        }
        if self.cache.len() >= BODY_CACHE {
            self.cache.clear();
        }
        self.report.bodies += 1;
        let b = Arc::new(BodyFields::of(&v.body));
        self.cache.insert(v.hash, b.clone());
        b
    }

    fn site(&mut self, h: &SiteHistory) -> Result<()> {
        self.report.sites += 1;
        // What the site serves: a user's submission is kept in the store
        // as its own source and never replaces a fetched version here.
        let versions = h.stream();
        let n = versions.len();
        for (i, v) in versions.iter().enumerate() {
            let until = versions.get(i + 1).map_or(FOREVER, |w| w.first_seen);
            if let Some(t) = self.as_of
                && !(v.first_seen <= t && t < until)
            {
                continue;
            }
            let latest = self.as_of.is_some() || i + 1 == n;
            let body = self.fields(v);
            let doc = document(&self.f, h, v, until, latest, &body);
            self.writer
                .add_document(doc)
                .map_err(tantivy_err(&self.path))?;
            self.report.documents += 1;
        }
        Ok(())
    }
}

/// The document of one version.
fn document(
    f: &Fields,
    h: &SiteHistory,
    v: &Version,
    until: i64,
    latest: bool,
    b: &BodyFields,
) -> TantivyDocument {
    let mut d = TantivyDocument::default();
    d.add_text(f.site, &h.host);
    for s in host_suffixes(&h.host) {
        d.add_text(f.suffix, &s);
    }
    let texts: [(TField, &[String]); 7] = [
        (f.botname, &b.botnames),
        (f.disallow, &b.disallow),
        (f.allow, &b.allow),
        (f.disallow_seg, &b.disallow_segments),
        (f.allow_seg, &b.allow_segments),
        (f.sitemap, &b.sitemaps),
        (f.signal, &b.signals),
    ];
    for (field, values) in texts {
        for x in values {
            d.add_text(field, x);
        }
    }
    for &x in &b.delays {
        d.add_f64(f.delay, x);
    }
    if b.universal {
        d.add_text(f.contain, "universal");
    }
    for sem in [Semantics::Google, Semantics::Draft1996] {
        if !b.bias(sem).computed() {
            d.add_text(f.contain, too_complex_term(sem));
        }
    }
    if !b.google.computed() || !b.draft1996.computed() {
        d.add_text(f.contain, "too-complex");
    }
    let mut json = serde_json::Map::new();
    for sem in [Semantics::Google, Semantics::Draft1996] {
        let k = sem_index(sem);
        for (j, tilt) in [Tilt::Favored, Tilt::Disfavored, Tilt::Nobias]
            .into_iter()
            .enumerate()
        {
            for r in b.robots_with(sem, tilt) {
                d.add_text(f.tilt[k][j], &r);
            }
        }
        let table = b.bias(sem);
        let mut per = serde_json::Map::new();
        // Looked up, not scanned: a file may name thousands of robots.
        let named: std::collections::HashSet<&str> =
            table.robots.iter().map(|o| o.robot.as_str()).collect();
        for r in &table.robots {
            d.add_text(f.bias[k], format!("{}\u{1}{}", r.robot, r.bias));
            let token = product_token(&r.robot);
            if token != r.robot && !named.contains(token) {
                d.add_text(f.bias[k], format!("{token}\u{2}{}", r.bias));
            }
            per.insert(r.robot.clone(), r.bias.into());
        }
        json.insert(sem.as_str().to_owned(), per.into());
    }
    d.add_text(f.bias_json, serde_json::Value::Object(json).to_string());
    d.add_text(f.body, &b.text);
    d.add_i64(f.from, v.first_seen);
    d.add_i64(f.until, until);
    if latest {
        d.add_text(f.latest, "1");
    }
    d.add_u64(f.rank, h.rank.unwrap_or(u64::MAX));
    d.add_text(f.source, v.source.as_str());
    d.add_text(f.url, &v.url);
    d.add_bytes(f.hash, &v.hash[..]);
    d
}

/// How hits are ordered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
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
    /// Builds the index of `store` in `dir`, replacing the index there (a
    /// directory that holds something else is refused). With `as_of`, each
    /// site's version in force then; else every version.
    pub fn build(
        store: &dyn Store,
        dir: &Path,
        as_of: Option<i64>,
        progress: &mut dyn FnMut(u64),
    ) -> Result<BuildReport> {
        // A file (or anything but a directory) in the way is the user's:
        // it is neither read as an index nor moved aside.
        if dir.exists() && !dir.is_dir() {
            return Err(IndexError::NotAnIndex {
                path: dir.display().to_string(),
            });
        }
        let occupied = std::fs::read_dir(dir).is_ok_and(|mut d| d.next().is_some());
        if occupied {
            // Only an index of ours is replaced.
            let idx = TIndex::open_in_dir(dir).map_err(|_| IndexError::NotAnIndex {
                path: dir.display().to_string(),
            })?;
            read_meta(&idx, dir)?;
        }
        let tmp = sibling(dir, "building");
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(&tmp).map_err(|e| io_err(&tmp, e))?;
        let (schema, f) = schema();
        let settings = IndexSettings {
            docstore_blocksize: 64 * 1024,
            ..IndexSettings::default()
        };
        let index = TIndex::builder()
            .schema(schema)
            .settings(settings)
            .create_in_dir(&tmp)
            .map_err(tantivy_err(&tmp))?;
        let mut writer: IndexWriter = index
            .writer_with_num_threads(2, WRITER_MEMORY)
            .map_err(tantivy_err(&tmp))?;
        let mut feeder = Feeder {
            writer: &writer,
            f,
            as_of,
            cache: HashMap::new(),
            report: BuildReport::default(),
            path: tmp.clone(),
            pending: Vec::new(),
        };
        let mut failure = None;
        let mark = store.sites_changed(0, &mut |h| {
            if let Err(e) = feeder.push(h) {
                failure = Some(e);
                return Err(StoreError::Db {
                    path: String::new(),
                    detail: "stopped".into(),
                });
            }
            progress(feeder.report.sites);
            Ok(())
        });
        if let Some(e) = failure {
            return Err(e);
        }
        let mark = mark?;
        feeder.flush()?;
        let mut report = std::mem::take(&mut feeder.report);
        report.mark = mark;
        commit(&mut writer, &tmp, mark, as_of)?;
        writer.wait_merging_threads().map_err(tantivy_err(&tmp))?;
        // Swap the new index in.
        if dir.exists() {
            let old = sibling(dir, "old");
            let _ = std::fs::remove_dir_all(&old);
            std::fs::rename(dir, &old).map_err(|e| io_err(dir, e))?;
            std::fs::rename(&tmp, dir).map_err(|e| io_err(dir, e))?;
            let _ = std::fs::remove_dir_all(&old);
        } else {
            std::fs::rename(&tmp, dir).map_err(|e| io_err(dir, e))?;
        }
        report.bytes = dir_bytes(dir);
        Ok(report)
    }

    /// Opens an index for searching.
    pub fn open(dir: &Path) -> Result<Index> {
        if !dir.join("meta.json").is_file() {
            return Err(if dir.exists() {
                IndexError::NotAnIndex {
                    path: dir.display().to_string(),
                }
            } else {
                IndexError::Missing {
                    path: dir.display().to_string(),
                }
            });
        }
        let index = TIndex::open_in_dir(dir).map_err(tantivy_err(dir))?;
        let meta = read_meta(&index, dir)?;
        let (schema, f) = schema();
        if index.schema() != schema {
            return Err(IndexError::NotAnIndex {
                path: dir.display().to_string(),
            });
        }
        let reader = index.reader().map_err(tantivy_err(dir))?;
        Ok(Index {
            path: dir.to_path_buf(),
            index,
            reader,
            f,
            meta,
            latest: Mutex::default(),
            biases: Mutex::default(),
        })
    }

    /// Sees the latest commit now (another handle, such as [`submit`]'s,
    /// may have written one); searches see it within a second anyway.
    pub fn reload(&self) -> Result<()> {
        self.reader.reload().map_err(self.err())
    }

    /// What the last commit recorded.
    pub fn meta(&self) -> Meta {
        self.meta
    }

    /// Documents (versions) in the index.
    pub fn documents(&self) -> u64 {
        self.reader.searcher().num_docs()
    }

    /// Brings the index up to the store: the sites changed since the last
    /// commit are indexed again, in one commit (a crash before it leaves
    /// the index as it was, and the next update does the work again).
    pub fn update(&mut self, store: &dyn Store) -> Result<BuildReport> {
        let path = self.path.clone();
        let mut writer: IndexWriter = self
            .index
            .writer_with_num_threads(2, WRITER_MEMORY)
            .map_err(tantivy_err(&path))?;
        let mut feeder = Feeder {
            writer: &writer,
            f: self.f,
            as_of: self.meta.as_of,
            cache: HashMap::new(),
            report: BuildReport::default(),
            path: path.clone(),
            pending: Vec::new(),
        };
        let mut failure = None;
        let site = self.f.site;
        let mark = store.sites_changed(self.meta.mark, &mut |h| {
            feeder
                .writer
                .delete_term(Term::from_field_text(site, &h.host));
            if let Err(e) = feeder.push(h) {
                failure = Some(e);
                return Err(StoreError::Db {
                    path: String::new(),
                    detail: "stopped".into(),
                });
            }
            Ok(())
        });
        if let Some(e) = failure {
            return Err(e);
        }
        let mark = mark?;
        feeder.flush()?;
        let mut report = std::mem::take(&mut feeder.report);
        report.mark = mark;
        commit(&mut writer, &path, mark, self.meta.as_of)?;
        writer.wait_merging_threads().map_err(tantivy_err(&path))?;
        self.meta = read_meta(&self.index, &path)?;
        self.reader.reload().map_err(tantivy_err(&path))?;
        report.bytes = dir_bytes(&path);
        Ok(report)
    }

    fn err(&self) -> impl Fn(tantivy::TantivyError) -> IndexError + '_ {
        tantivy_err(&self.path)
    }

    /// The filter of the versions in force at `as_of` (default: latest).
    fn in_force(&self, as_of: Option<i64>) -> Box<dyn TQuery> {
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
    fn compile(
        &self,
        q: &Query,
        semantics: Semantics,
        as_of: Option<i64>,
    ) -> Result<Box<dyn TQuery>> {
        let inner = self.translate(q, semantics)?;
        Ok(Box::new(BooleanQuery::new(vec![
            (Occur::Must, inner),
            (
                Occur::Must,
                Box::new(ConstScoreQuery::new(self.in_force(as_of), 0.0)),
            ),
        ])))
    }

    fn translate(&self, q: &Query, sem: Semantics) -> Result<Box<dyn TQuery>> {
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

    fn clause(&self, c: &Clause, sem: Semantics) -> Result<Box<dyn TQuery>> {
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

    /// Runs a search.
    pub fn search(&self, req: &SearchRequest) -> Result<SearchResults> {
        let started = Instant::now();
        let parsed = query::parse(&req.query)?;
        let q = self.translate(&parsed, req.semantics)?;
        let searcher = self.reader.searcher();
        let limit = req.limit.max(1);
        let top = TopDocs::with_limit(limit).and_offset(req.offset);
        let (total, docs): (usize, Vec<(f64, DocAddress)>) = match req.rank {
            Rank::Relevance => {
                let (n, d) =
                    self.search_in_force(&searcher, &q, req.as_of, (Count, top.order_by_score()))?;
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
                self.search_in_force(&searcher, &q, req.as_of, (Count, c))?
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
                let (n, d) = self.search_in_force(&searcher, &q, req.as_of, (Count, c))?;
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
    fn latest_sets(&self, searcher: &Searcher) -> Result<HashMap<SegmentId, Arc<BitSet>>> {
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
    fn bias_columns(
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
    fn search_in_force<C>(
        &self,
        searcher: &Searcher,
        q: &dyn TQuery,
        as_of: Option<i64>,
        collector: C,
    ) -> Result<C::Fruit>
    where
        C: tantivy::collector::Collector + Send + Sync,
    {
        let r = match (as_of, self.meta.as_of) {
            (None, Some(_)) => searcher.search(q, &collector),
            (None, None) => {
                let sets = self.latest_sets(searcher)?;
                searcher.search(q, &Latest { sets, collector })
            }
            (Some(t), _) => searcher.search(
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

    fn hit(
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
        for (r, skipped) in par_map(segments, count)? {
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

/// Per document of a segment, the bias of `robot` (by name, else by
/// product token).
/// `f` of every item, on two threads taking items in turn; results in
/// item order, the first error returned.
fn par_map<T: Sync, U: Send>(items: &[T], f: impl Fn(&T) -> Result<U> + Sync) -> Result<Vec<U>> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let work = || {
        let mut out = Vec::new();
        loop {
            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let Some(x) = items.get(i) else {
                break;
            };
            out.push((i, f(x)));
        }
        out
    };
    let mut all = std::thread::scope(|s| {
        let h = s.spawn(work);
        let mut mine = work();
        mine.extend(h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
        mine
    });
    all.sort_by_key(|(i, _)| *i);
    all.into_iter().map(|(_, r)| r).collect()
}

/// A collector that passes on only the latest versions (the bit sets of
/// [`Index::latest_sets`]).
struct Latest<C> {
    sets: HashMap<SegmentId, Arc<BitSet>>,
    collector: C,
}

struct LatestSegment<S> {
    set: Option<Arc<BitSet>>,
    inner: S,
    block: Vec<DocId>,
}

impl<C: tantivy::collector::Collector> tantivy::collector::Collector for Latest<C> {
    type Fruit = C::Fruit;
    type Child = LatestSegment<C::Child>;

    fn for_segment(&self, ord: u32, seg: &SegmentReader) -> tantivy::Result<Self::Child> {
        Ok(LatestSegment {
            set: self.sets.get(&seg.segment_id()).cloned(),
            inner: self.collector.for_segment(ord, seg)?,
            block: Vec::new(),
        })
    }

    fn requires_scoring(&self) -> bool {
        self.collector.requires_scoring()
    }

    fn merge_fruits(
        &self,
        fruits: Vec<<C::Child as tantivy::collector::SegmentCollector>::Fruit>,
    ) -> tantivy::Result<C::Fruit> {
        self.collector.merge_fruits(fruits)
    }
}

impl<S: tantivy::collector::SegmentCollector> tantivy::collector::SegmentCollector
    for LatestSegment<S>
{
    type Fruit = S::Fruit;

    fn collect(&mut self, doc: DocId, score: tantivy::Score) {
        if self.set.as_ref().is_some_and(|s| s.contains(doc)) {
            self.inner.collect(doc, score);
        }
    }

    fn collect_block(&mut self, docs: &[DocId]) {
        let Some(set) = &self.set else { return };
        self.block.clear();
        self.block.extend(docs.iter().filter(|&&d| set.contains(d)));
        if !self.block.is_empty() {
            self.inner.collect_block(&self.block);
        }
    }

    fn harvest(self) -> S::Fruit {
        self.inner.harvest()
    }
}

/// The bias of `robot` in every document of a segment that has one
/// (`i32::MIN` elsewhere), read from the postings of its bias terms. A
/// dense column, not a map: a robot such as Googlebot has a bias in most
/// documents, and filling a hash map with millions of entries per search
/// cost more than the search.
fn segment_biases(seg: &SegmentReader, field: TField, robot: &str) -> Option<Vec<i32>> {
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

fn sibling(dir: &Path, what: &str) -> PathBuf {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "index".into());
    dir.with_file_name(format!(".{name}.{what}"))
}

fn io_err(p: &Path, e: std::io::Error) -> IndexError {
    IndexError::Tantivy {
        path: p.display().to_string(),
        detail: e.to_string(),
    }
}

fn commit(writer: &mut IndexWriter, path: &Path, mark: i64, as_of: Option<i64>) -> Result<()> {
    let meta = Meta {
        format: FORMAT,
        mark,
        as_of,
        committed: botscope_os::unix_now(),
    };
    let mut prepared = writer.prepare_commit().map_err(tantivy_err(path))?;
    prepared.set_payload(&serde_json::to_string(&meta).unwrap_or_default());
    prepared.commit().map_err(tantivy_err(path))?;
    Ok(())
}

/// The largest robots.txt accepted from a user: the size crawlers read.
pub const MAX_SUBMISSION: usize = botscope_robotstxt::DEFAULT_PARSE_CAP;

/// BotSeer's user submission: stores `body` as the `submitted` version of
/// `site` at `time`, brings the index in `dir` up to date (building it
/// when there is none), and returns the file's bias under `semantics`.
/// A host name that is not one, or a body over [`MAX_SUBMISSION`], is
/// refused before anything is written.
pub fn submit(
    store: &mut dyn Store,
    dir: &Path,
    site: &str,
    body: &[u8],
    semantics: Semantics,
    time: i64,
) -> Result<crate::FileBias> {
    let host = botscope_store::host_of_file_name(site)
        .filter(|h| !site.ends_with(".txt") || h.ends_with(".txt"))
        .ok_or_else(|| {
            IndexError::Request(format!(
                "`{}` is not a host name (such as www.example.com)",
                botscope_text::field(site)
            ))
        })?;
    if body.len() > MAX_SUBMISSION {
        return Err(IndexError::Request(format!(
            "the file is {} bytes, over the {MAX_SUBMISSION} bytes crawlers read",
            body.len()
        )));
    }
    // Check the index before the store is written.
    let existing = if dir.join("meta.json").is_file() {
        Some(Index::open(dir)?)
    } else {
        None
    };
    store.record(
        None,
        &[botscope_store::Attempt {
            host: host.clone(),
            time,
            url: format!("https://{host}/robots.txt"),
            bytes: body.len() as u64,
            outcome: "parse".into(),
            reason: "submitted by a user".into(),
            body: Some(body.to_vec()),
            source: botscope_store::Source::Submitted,
            ..botscope_store::Attempt::default()
        }],
    )?;
    match existing {
        Some(mut idx) => {
            idx.update(&*store)?;
        }
        None => {
            Index::build(&*store, dir, None, &mut |_| {})?;
        }
    }
    let mut b = crate::bias(body, semantics);
    b.site = Some(host);
    Ok(b)
}

/// The bias of the version of `host` in force at `as_of` (default: the
/// latest) in the store; `None` when the store has no version then.
pub fn site_bias(
    store: &dyn Store,
    host: &str,
    as_of: Option<i64>,
    semantics: Semantics,
) -> Result<Option<crate::FileBias>> {
    let host = host.trim().to_ascii_lowercase();
    let Some(h) = store.site(&host)? else {
        return Ok(None);
    };
    Ok(h.at(as_of.unwrap_or(FOREVER)).map(|v| {
        let mut b = crate::bias(&v.body, semantics);
        b.site = Some(host.clone());
        b
    }))
}

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
    fn add(&mut self, r: crate::Restriction) {
        match r {
            crate::Restriction::Full => self.full += 1,
            crate::Restriction::Partial => self.partial += 1,
            crate::Restriction::None => self.none += 1,
        }
    }
}

impl Counts {
    fn merge(&mut self, o: &Counts) {
        self.full += o.full;
        self.partial += o.partial;
        self.none += o.none;
    }
}

/// A period's counts while they are made.
#[derive(Clone)]
struct Tally {
    sites: u64,
    agents: Vec<Counts>,
    group: Counts,
}

impl Tally {
    fn new(agents: usize) -> Tally {
        Tally {
            sites: 0,
            agents: vec![Counts::default(); agents],
            group: Counts::default(),
        }
    }

    /// One site's restrictions, one per agent.
    fn add(&mut self, r: &[crate::Restriction]) {
        self.sites += 1;
        for (c, x) in self.agents.iter_mut().zip(r) {
            c.add(*x);
        }
        self.group
            .add(r.iter().copied().max().unwrap_or(crate::Restriction::None));
    }

    fn merge(&mut self, o: &Tally) {
        self.sites += o.sites;
        for (a, b) in self.agents.iter_mut().zip(&o.agents) {
            a.merge(b);
        }
        self.group.merge(&o.group);
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
        // in, then each such document read once (in store order, each
        // block decompressed once) and its restrictions added to them.
        let count = |seg: &SegmentReader| -> Result<Vec<Tally>> {
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
            let store = seg
                .get_store_reader(16)
                .map_err(|e| io_err(&self.path, e))?;
            let mut cache: HashMap<Vec<u8>, Vec<crate::Restriction>> = HashMap::new();
            for d in 0..max {
                let bits = &member[d * words..(d + 1) * words];
                if bits.iter().all(|&b| b == 0) || seg.is_deleted(d as DocId) {
                    continue;
                }
                let doc: TantivyDocument = store.get(d as DocId).map_err(self.err())?;
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
                        let r = crate::restrictions(body.as_bytes(), agents, semantics);
                        if cache.len() < BODY_CACHE {
                            cache.insert(hash.to_vec(), r.clone());
                        }
                        r
                    }
                };
                for (p, t) in tally.iter_mut().enumerate() {
                    if bits[p / 64] & (1 << (p % 64)) != 0 {
                        t.add(&r);
                    }
                }
            }
            Ok(tally)
        };
        let mut total = vec![Tally::new(agents.len()); periods.len()];
        for seg in par_map(searcher.segment_readers(), count)? {
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
            periods: out,
        })
    }
}

impl Trends {
    /// For people: per period the denominator, then each agent's and the
    /// group's counts and shares.
    pub fn to_text(&self) -> String {
        use std::fmt::Write;
        let mut o = String::new();
        let share = |n: u64, d: u64| {
            if d == 0 {
                0.0
            } else {
                100.0 * n as f64 / d as f64
            }
        };
        for p in &self.periods {
            let _ = write!(o, "{}: {} sites with robots.txt", p.period, p.sites);
            if let Some(n) = p.no_robots_txt {
                let _ = write!(o, ", {n} without");
            }
            let _ = writeln!(o, "; shares of {}", p.denominator);
            let w = self
                .agents
                .iter()
                .map(|a| a.chars().count())
                .max()
                .unwrap_or(5)
                .max(5);
            let rows = p
                .agents
                .iter()
                .map(|(a, c)| (a.as_str(), c))
                .chain([("(group)", &p.group)]);
            for (a, c) in rows {
                let _ = writeln!(
                    o,
                    "  {a:w$}  full {:>6} {:>5.1}%  partial {:>6} {:>5.1}%  none {:>6} {:>5.1}%",
                    c.full,
                    share(c.full, p.denominator),
                    c.partial,
                    share(c.partial, p.denominator),
                    c.none,
                    share(c.none, p.denominator)
                );
            }
        }
        o
    }

    /// CSV: one row per period and agent (`(group)` for the group).
    pub fn to_csv(&self) -> String {
        let mut o = String::from("period,end,agent,full,partial,none,no_robots_txt,denominator\n");
        for p in &self.periods {
            let rows = p
                .agents
                .iter()
                .map(|(a, c)| (a.as_str(), c))
                .chain([("(group)", &p.group)]);
            for (a, c) in rows {
                let name = botscope_text::csv_cell(a).replace('"', "\"\"");
                o.push_str(&format!(
                    "{},{},\"{name}\",{},{},{},{},{}\n",
                    p.period,
                    p.end,
                    c.full,
                    c.partial,
                    c.none,
                    p.no_robots_txt.map(|n| n.to_string()).unwrap_or_default(),
                    p.denominator
                ));
            }
        }
        o
    }
}
