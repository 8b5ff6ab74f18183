//! The research index on disk (tantivy): one document per stored version,
//! valid from its first fetch until the next version's; the version in
//! force at a time is the site's document for that time (BotSeer's
//! temporal data selection). Building and updating read the store; search
//! and favourability read only the index.
//!
//! This module holds the [`Index`] itself and what its parts share; one
//! concept per file beside it: `error`, `schema`, `build` (build, open,
//! update), `translate` (a parsed query to tantivy's), `search`,
//! `collector` (the versions in force), `favor`, `trends`, `submit`, and
//! `render` for the text and CSV forms.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use tantivy::{BitSet, Index as TIndex, IndexReader, index::SegmentId};

use crate::error::{IndexError, Result};
use crate::schema::Fields;

/// The index format this build writes (in the commit payload).
/// 2: each version's restriction classes and usage preferences in a
/// `classes` column. 3: the crawls that saw each version (`crawl`). 4: the
/// crawls kept beside the documents (`crawls/`), not in them. 5: a version
/// ends where the site's file went away (`ended`), which is no document.
pub(crate) const FORMAT: u32 = 5;
/// Distinct bodies whose fields are kept while building.
pub(crate) const BODY_CACHE: usize = 65_536;
/// The writer's memory, all threads.
pub(crate) const WRITER_MEMORY: usize = 256 * 1024 * 1024;
/// `until` of the latest version.
pub(crate) const FOREVER: i64 = i64::MAX;

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

/// `2024-03-01T10:00:00Z`.
pub fn rfc3339(t: i64) -> String {
    jiff::Timestamp::from_second(t).map_or_else(|_| t.to_string(), |ts| ts.to_string())
}

/// The research index in a directory.
pub struct Index {
    pub(crate) path: PathBuf,
    pub(crate) index: TIndex,
    pub(crate) reader: IndexReader,
    pub(crate) f: Fields,
    pub(crate) meta: Meta,
    /// The latest versions per segment (see [`Index::latest_sets`]).
    pub(crate) latest: Mutex<HashMap<SegmentId, Arc<BitSet>>>,
    /// Bias columns per (segment, semantics, robot), most recent first
    /// (see [`Index::bias_columns`]).
    pub(crate) biases: Mutex<BiasCache>,
    /// The crawls' maps loaded (see [`Index::crawl_map`]).
    pub(crate) crawl_maps: Mutex<crate::crawls::MapCache>,
    /// Threads for favourability, trends and updates.
    pub(crate) threads: usize,
}

pub(crate) type BiasCache = Vec<(SegmentId, usize, String, Arc<Vec<i32>>)>;

/// Memory the bias columns of [`Index::bias_columns`] keep at most (a
/// column is 4 bytes per document of its segment: 10 MB for 2.6 million).
pub(crate) const BIAS_CACHE_BYTES: usize = 64 << 20;

pub(crate) fn tantivy_err(path: &Path) -> impl Fn(tantivy::TantivyError) -> IndexError + '_ {
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

/// Reads the commit payload of an index directory: an index of ours of
/// any format (`build` replaces it), else not an index.
pub(crate) fn read_any_meta(index: &TIndex, path: &Path) -> Result<Meta> {
    let metas = index.load_metas().map_err(tantivy_err(path))?;
    metas
        .payload
        .as_deref()
        .and_then(|p| serde_json::from_str::<Meta>(p).ok())
        .filter(|m| (1..=FORMAT).contains(&m.format))
        .ok_or_else(|| IndexError::NotAnIndex {
            path: path.display().to_string(),
        })
}

/// Reads the commit payload of an index of this format (an earlier one is
/// told to be rebuilt).
pub(crate) fn read_meta(index: &TIndex, path: &Path) -> Result<Meta> {
    let meta = read_any_meta(index, path)?;
    if meta.format != FORMAT {
        return Err(IndexError::OldFormat {
            path: path.display().to_string(),
            format: meta.format,
        });
    }
    Ok(meta)
}

impl Index {
    /// Uses `n` threads (at least one) for favourability, trends and
    /// updates; by default one per core.
    pub fn set_threads(&mut self, n: usize) {
        self.threads = n.max(1);
    }

    pub(crate) fn err(&self) -> impl Fn(tantivy::TantivyError) -> IndexError + '_ {
        tantivy_err(&self.path)
    }
}

/// `f` of every item, on `threads` threads (the caller's one among them)
/// taking items in turn; results in item order, the first error returned.
pub(crate) fn par_map<T: Sync, U: Send>(
    threads: usize,
    items: &[T],
    f: impl Fn(&T) -> Result<U> + Sync,
) -> Result<Vec<U>> {
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
    let helpers = threads.clamp(1, items.len().max(1)) - 1;
    let mut all = std::thread::scope(|s| {
        let handles: Vec<_> = (0..helpers).map(|_| s.spawn(work)).collect();
        let mut mine = work();
        for h in handles {
            mine.extend(h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
        }
        mine
    });
    all.sort_by_key(|(i, _)| *i);
    all.into_iter().map(|(_, r)| r).collect()
}

/// The threads an index uses unless told: one per core.
pub(crate) fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
}

pub(crate) fn io_err(p: &Path, e: std::io::Error) -> IndexError {
    IndexError::Tantivy {
        path: p.display().to_string(),
        detail: e.to_string(),
    }
}
