//! Each crawl's membership, kept beside the documents.
//!
//! A version belongs to a crawl when the crawl's last capture of its site
//! found a robots.txt and was made while the version was in force
//! (`from <= time < until`). The crawls are not written into the
//! documents: a later crawl re-sees most sites unchanged, and writing its
//! name into their documents would reindex every one of them. Instead each
//! crawl is a map from host to its capture's time (`crawls/*.fst`, listed
//! with their names in `crawls/crawls.json`), written from the store when
//! the crawl changed ([`botscope_store::CrawlSites::changed`]), and looked
//! up from each segment's site dictionary when a query needs it: the cost
//! of an update follows the sites that changed and the crawls imported,
//! not the sites a crawl saw.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use botscope_store::{Store, StoreError};
use serde::{Deserialize, Serialize};
use tantivy::columnar::Column;
use tantivy::query::{
    BitSetDocSet, ConstScorer, EmptyScorer, EnableScoring, Explanation, Query, Scorer, Weight,
};
use tantivy::{BitSet, DocId, DocSet, Score, SegmentReader, TantivyError};

use crate::engine::{Index, io_err};
use crate::error::{IndexError, Result};

/// The directory of the crawls, in the index's.
pub(crate) const DIR: &str = "crawls";
const MANIFEST: &str = "crawls.json";

/// A site's time where the crawl did not find it.
pub(crate) const NOT_FOUND: i64 = i64::MIN;

/// What `crawls/crawls.json` lists.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub(crate) struct Manifest {
    /// The greatest crawl change mark read from the store.
    pub(crate) mark: i64,
    /// The crawls, by name.
    pub(crate) crawls: Vec<Entry>,
}

/// One crawl's map.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Entry {
    /// The crawl's name, as the store has it.
    pub(crate) name: String,
    /// Its map's file in [`DIR`] (never named after the crawl, whose name
    /// comes from strangers' files).
    pub(crate) file: String,
    /// The sites where it found a robots.txt.
    pub(crate) sites: u64,
}

fn bad(path: &Path, detail: String) -> IndexError {
    IndexError::Tantivy {
        path: path.display().to_string(),
        detail,
    }
}

/// The crawls of the index in `index_dir` (none when it has none).
pub(crate) fn read_manifest(index_dir: &Path) -> Result<Manifest> {
    let p = index_dir.join(DIR).join(MANIFEST);
    match std::fs::read(&p) {
        Ok(b) => serde_json::from_slice(&b).map_err(|e| bad(&p, e.to_string())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Manifest::default()),
        Err(e) => Err(io_err(&p, e)),
    }
}

/// Brings the crawls of the index in `index_dir` up to `store`: every
/// crawl with `all`, else those that changed since they were last read.
/// Each map is written to a new file, then the list moves to it at once,
/// so a reader sees the old crawls or the new ones. Returns the crawls
/// written.
pub(crate) fn write(store: &dyn Store, index_dir: &Path, all: bool) -> Result<u64> {
    let dir = index_dir.join(DIR);
    std::fs::create_dir_all(&dir).map_err(|e| io_err(&dir, e))?;
    let old = if all {
        Manifest::default()
    } else {
        read_manifest(index_dir)?
    };
    let listed = store.crawl_sites(None)?;
    let mut next = Manifest {
        mark: listed.iter().map(|c| c.changed).fold(old.mark, i64::max),
        crawls: Vec::with_capacity(listed.len()),
    };
    let mut written = 0;
    for (i, c) in listed.iter().enumerate() {
        let kept = old.crawls.iter().find(|e| e.name == c.crawl);
        if let Some(e) = kept
            && c.changed <= old.mark
        {
            next.crawls.push(e.clone());
            continue;
        }
        // A name of its own: the file the list names now stays whole
        // until the list moves.
        let file = format!("{}-{i}.fst", c.changed);
        let path = dir.join(&file);
        let sites = write_map(store, &c.crawl, &path)?;
        next.crawls.push(Entry {
            name: c.crawl.clone(),
            file,
            sites,
        });
        written += 1;
    }
    let tmp = dir.join(format!("{MANIFEST}.tmp"));
    let json = serde_json::to_vec(&next).map_err(|e| bad(&tmp, e.to_string()))?;
    std::fs::write(&tmp, json).map_err(|e| io_err(&tmp, e))?;
    let manifest = dir.join(MANIFEST);
    std::fs::rename(&tmp, &manifest).map_err(|e| io_err(&manifest, e))?;
    // Maps no longer listed.
    if let Ok(files) = std::fs::read_dir(&dir) {
        for f in files.flatten() {
            let name = f.file_name();
            let name = name.to_string_lossy();
            if name.ends_with(".fst") && !next.crawls.iter().any(|e| e.file == name) {
                let _ = std::fs::remove_file(f.path());
            }
        }
    }
    Ok(written)
}

/// Writes `crawl`'s map from host to capture time at `path`; returns its
/// sites.
fn write_map(store: &dyn Store, crawl: &str, path: &Path) -> Result<u64> {
    let file = std::fs::File::create(path).map_err(|e| io_err(path, e))?;
    let mut map = tantivy_fst::MapBuilder::new(std::io::BufWriter::new(file))
        .map_err(|e| bad(path, e.to_string()))?;
    let mut failure = None;
    let mut sites = 0u64;
    let read = store.crawl_found(crawl, &mut |host, time| {
        // Out of order (a store that sorts hosts otherwise) is an error,
        // not a wrong map.
        if let Err(e) = map.insert(host, time as u64) {
            failure = Some(bad(path, format!("crawl {crawl:?}, host {host:?}: {e}")));
            return Err(StoreError::Db {
                path: String::new(),
                detail: "stopped".into(),
            });
        }
        sites += 1;
        Ok(())
    });
    if let Some(e) = failure {
        return Err(e);
    }
    read?;
    map.finish().map_err(|e| bad(path, e.to_string()))?;
    Ok(sites)
}

/// One crawl's map from host to the time of the capture that found its
/// robots.txt.
pub(crate) struct CrawlMap(tantivy_fst::Map<Vec<u8>>);

impl std::fmt::Debug for CrawlMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CrawlMap({} sites)", self.0.len())
    }
}

impl CrawlMap {
    /// Per site of the segment (its ord in the `site` column), the time
    /// this crawl found it ([`NOT_FOUND`]: it did not), and the column
    /// giving each document's site.
    pub(crate) fn site_times(
        &self,
        seg: &SegmentReader,
        path: &Path,
    ) -> Result<Option<(Vec<i64>, Column<u64>)>> {
        let Some(col) = seg
            .fast_fields()
            .str("site")
            .map_err(|e| bad(path, e.to_string()))?
        else {
            return Ok(None);
        };
        let dict = col.dictionary();
        let mut times = vec![NOT_FOUND; dict.num_terms()];
        let mut stream = dict.stream().map_err(|e| io_err(path, e))?;
        while stream.advance() {
            if let Some(t) = self.0.get(stream.key()) {
                times[stream.term_ord() as usize] = t as i64;
            }
        }
        Ok(Some((times, col.ords().clone())))
    }

    /// The segment's documents that belong to the crawl.
    fn members(&self, seg: &SegmentReader, path: &Path) -> Result<BitSet> {
        let max = seg.max_doc();
        let mut set = BitSet::with_max_value(max);
        let Some((times, sites)) = self.site_times(seg, path)? else {
            return Ok(set);
        };
        let ff = seg.fast_fields();
        let from = ff.i64("from").map_err(|e| bad(path, e.to_string()))?;
        let until = ff.i64("until").map_err(|e| bad(path, e.to_string()))?;
        for d in 0..max {
            if seg.is_deleted(d) {
                continue;
            }
            let Some(t) = sites.first(d).and_then(|o| times.get(o as usize).copied()) else {
                continue;
            };
            if t != NOT_FOUND
                && from.first(d).is_some_and(|f| f <= t)
                && until.first(d).is_some_and(|u| t < u)
            {
                set.insert(d);
            }
        }
        Ok(set)
    }
}

/// Several crawls' times of one segment's sites, for reading documents'
/// crawls one by one.
pub(crate) struct SegmentCrawls {
    /// Per crawl (the caller's key for it), its time per site ord.
    per: Vec<(usize, Vec<i64>)>,
    /// Each document's site.
    sites: Option<Column<u64>>,
}

impl SegmentCrawls {
    /// The times of `maps` (each with the caller's key) for `seg`'s sites.
    pub(crate) fn of(
        seg: &SegmentReader,
        maps: &[(usize, Arc<CrawlMap>)],
        path: &Path,
    ) -> Result<SegmentCrawls> {
        let mut per = Vec::with_capacity(maps.len());
        let mut sites = None;
        for (key, map) in maps {
            if let Some((times, col)) = map.site_times(seg, path)? {
                per.push((*key, times));
                sites = Some(col);
            }
        }
        Ok(SegmentCrawls { per, sites })
    }

    /// The keys of the crawls that found document `d`, in force over
    /// `from..until`.
    pub(crate) fn found(&self, d: DocId, from: i64, until: i64) -> impl Iterator<Item = usize> {
        let site = self.sites.as_ref().and_then(|c| c.first(d));
        self.per.iter().filter_map(move |(key, times)| {
            let t = *times.get(site? as usize)?;
            (t != NOT_FOUND && from <= t && t < until).then_some(*key)
        })
    }
}

/// The versions a crawl found (`crawl:NAME`): none when the index holds
/// no such crawl.
#[derive(Clone, Debug)]
pub(crate) struct CrawlQuery {
    pub(crate) map: Option<Arc<CrawlMap>>,
    pub(crate) path: PathBuf,
}

impl Query for CrawlQuery {
    fn weight(&self, _: EnableScoring<'_>) -> tantivy::Result<Box<dyn Weight>> {
        Ok(Box::new(self.clone()))
    }
}

impl Weight for CrawlQuery {
    fn scorer(&self, reader: &SegmentReader, boost: Score) -> tantivy::Result<Box<dyn Scorer>> {
        let Some(map) = &self.map else {
            return Ok(Box::new(EmptyScorer));
        };
        let set = map
            .members(reader, &self.path)
            .map_err(|e| TantivyError::InternalError(e.to_string()))?;
        Ok(Box::new(ConstScorer::new(BitSetDocSet::from(set), boost)))
    }

    fn explain(&self, reader: &SegmentReader, doc: DocId) -> tantivy::Result<Explanation> {
        let mut s = self.scorer(reader, 1.0)?;
        if s.doc() <= doc && s.seek(doc) == doc {
            Ok(Explanation::new("the crawl found this version", 1.0))
        } else {
            Err(TantivyError::InvalidArgument(format!(
                "document {doc} is not of the crawl"
            )))
        }
    }
}

/// Loaded maps, by file.
pub(crate) type MapCache = HashMap<String, Arc<CrawlMap>>;

impl Index {
    /// The crawls the index holds, by name.
    #[cfg_attr(not(feature = "parquet"), allow(dead_code))]
    pub(crate) fn crawl_list(&self) -> Result<Vec<Entry>> {
        Ok(read_manifest(&self.path)?.crawls)
    }

    /// The map of crawl `name`, if the index holds it.
    pub(crate) fn crawl_map(&self, name: &str) -> Result<Option<Arc<CrawlMap>>> {
        let manifest = read_manifest(&self.path)?;
        let Some(e) = manifest.crawls.iter().find(|e| e.name == name) else {
            return Ok(None);
        };
        let mut cache = self.crawl_maps.lock().unwrap_or_else(|p| p.into_inner());
        // Only the maps listed now are kept.
        cache.retain(|file, _| manifest.crawls.iter().any(|e| &e.file == file));
        if let Some(m) = cache.get(&e.file) {
            return Ok(Some(m.clone()));
        }
        let path = self.path.join(DIR).join(&e.file);
        let bytes = std::fs::read(&path).map_err(|err| io_err(&path, err))?;
        let map = tantivy_fst::Map::from_bytes(bytes).map_err(|err| bad(&path, err.to_string()))?;
        let map = Arc::new(CrawlMap(map));
        cache.insert(e.file.clone(), map.clone());
        Ok(Some(map))
    }

    /// The query of the versions crawl `name` found.
    pub(crate) fn crawl_query(&self, name: &str) -> Result<CrawlQuery> {
        Ok(CrawlQuery {
            map: self.crawl_map(name)?,
            path: self.path.clone(),
        })
    }
}
