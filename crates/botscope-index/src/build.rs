//! Building the index from the store, opening it, and bringing it up to the store.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use botscope_robotstxt::Semantics;
use botscope_store::{SiteHistory, Store, StoreError, Version};
use serde::Serialize;
use tantivy::schema::Field as TField;
use tantivy::{Index as TIndex, IndexSettings, IndexWriter, TantivyDocument, Term};

use crate::bias::Tilt;
use crate::doc::{BodyFields, host_suffixes, product_token};
use crate::engine::{
    BODY_CACHE, FOREVER, FORMAT, Index, Meta, WRITER_MEMORY, default_threads, io_err, par_map,
    read_any_meta, read_meta, tantivy_err,
};
use crate::error::{IndexError, Result};
use crate::schema::{Fields, schema, sem_index, too_complex_term};

/// What a build or update did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct BuildReport {
    /// Sites (re)indexed.
    pub sites: u64,
    /// Documents written (versions).
    pub documents: u64,
    /// Distinct bodies whose fields were computed.
    pub bodies: u64,
    /// Crawls whose membership was (re)written.
    pub crawls: u64,
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

pub(crate) fn dir_bytes(p: &Path) -> u64 {
    let files = |p: &Path| -> u64 {
        std::fs::read_dir(p)
            .map(|d| {
                d.filter_map(|e| e.ok()?.metadata().ok())
                    .filter(|m| m.is_file())
                    .map(|m| m.len())
                    .sum()
            })
            .unwrap_or(0)
    };
    files(p) + files(&p.join(crate::crawls::DIR))
}

/// Builds documents of sites and adds them, caching body fields by hash.
pub(crate) struct Feeder<'w> {
    pub(crate) writer: &'w IndexWriter,
    /// Threads computing each batch's fields.
    pub(crate) threads: usize,
    pub(crate) f: Fields,
    pub(crate) as_of: Option<i64>,
    pub(crate) cache: HashMap<[u8; 32], Arc<BodyFields>>,
    pub(crate) report: BuildReport,
    pub(crate) path: PathBuf,
    pub(crate) pending: Vec<SiteHistory>,
}

/// Sites whose body fields are computed together, on the feeder's threads.
pub(crate) const FEED_BATCH: usize = 512;

impl Feeder<'_> {
    /// Takes a site; its documents are added when the batch is full.
    pub(crate) fn push(&mut self, h: SiteHistory) -> Result<()> {
        self.pending.push(h);
        if self.pending.len() >= FEED_BATCH {
            self.flush()?;
        }
        Ok(())
    }

    /// Computes the fields of the batch's new bodies on its threads, then
    /// adds its documents in order.
    pub(crate) fn flush(&mut self) -> Result<()> {
        let batch = std::mem::take(&mut self.pending);
        let mut need: Vec<&Version> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for v in batch.iter().flat_map(|h| h.stream()) {
            if v.is_file() && !self.cache.contains_key(&v.hash) && seen.insert(v.hash) {
                need.push(v);
            }
        }
        if self.cache.len() + need.len() > BODY_CACHE {
            self.cache.clear();
        }
        self.report.bodies += need.len() as u64;
        let computed = par_map(self.threads, &need, |v| {
            Ok(Arc::new(BodyFields::of(&v.body)))
        })?;
        for (v, b) in need.iter().zip(computed) {
            self.cache.insert(v.hash, b);
        }
        for h in &batch {
            self.site(h)?;
        }
        Ok(())
    }

    pub(crate) fn fields(&mut self, v: &Version) -> Arc<BodyFields> {
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

    pub(crate) fn site(&mut self, h: &SiteHistory) -> Result<()> {
        self.report.sites += 1;
        // What the site serves: a user's submission is kept in the store
        // as its own source and never replaces a fetched version here. An
        // absence (the file gone, unreachable, moved) is no document: the
        // file before it ends there, marked with how.
        let versions = h.stream();
        let n = versions.len();
        for (i, v) in versions.iter().enumerate() {
            if !v.is_file() {
                continue;
            }
            let next = versions.get(i + 1);
            let until = next.map_or(FOREVER, |w| w.first_seen);
            if let Some(t) = self.as_of
                && !(v.first_seen <= t && t < until)
            {
                continue;
            }
            let latest = self.as_of.is_some() || i + 1 == n;
            let body = self.fields(v);
            let mut doc = document(&self.f, h, v, until, latest, &body);
            doc.add_u64(
                self.f.ended,
                crate::schema::ended_code(next.and_then(|w| w.absent)),
            );
            self.writer
                .add_document(doc)
                .map_err(tantivy_err(&self.path))?;
            self.report.documents += 1;
        }
        Ok(())
    }
}

/// The document of one version.
pub(crate) fn document(
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
    d.add_bytes(f.classes, &b.classes.encode());
    // The crawls that found it are kept beside the documents
    // (`crate::crawls`): a crawl that re-sees the site leaves them be.
    d
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
        Index::build_on(store, dir, as_of, default_threads(), progress)
    }

    /// [`Index::build`] on `threads` threads (the fields of each batch of
    /// sites, and tantivy's writer).
    pub fn build_on(
        store: &dyn Store,
        dir: &Path,
        as_of: Option<i64>,
        threads: usize,
        progress: &mut dyn FnMut(u64),
    ) -> Result<BuildReport> {
        let threads = threads.max(1);
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
            read_any_meta(&idx, dir)?;
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
            .writer_with_num_threads(threads, WRITER_MEMORY)
            .map_err(tantivy_err(&tmp))?;
        let mut feeder = Feeder {
            writer: &writer,
            threads,
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
        report.crawls = crate::crawls::write(store, &tmp, true)?;
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
            crawl_maps: Mutex::default(),
            threads: default_threads(),
        })
    }

    /// Sees the latest commit now (another handle, such as [`crate::submit`]'s,
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
            .writer_with_num_threads(self.threads, WRITER_MEMORY)
            .map_err(tantivy_err(&path))?;
        let mut feeder = Feeder {
            writer: &writer,
            threads: self.threads,
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
        // After the documents: a crash between leaves the crawls to the
        // next update, which reads those changed since they were read.
        report.crawls = crate::crawls::write(store, &path, false)?;
        self.meta = read_meta(&self.index, &path)?;
        self.reader.reload().map_err(tantivy_err(&path))?;
        report.bytes = dir_bytes(&path);
        Ok(report)
    }
}

pub(crate) fn sibling(dir: &Path, what: &str) -> PathBuf {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "index".into());
    dir.with_file_name(format!(".{name}.{what}"))
}

pub(crate) fn commit(
    writer: &mut IndexWriter,
    path: &Path,
    mark: i64,
    as_of: Option<i64>,
) -> Result<()> {
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
