//! botscope's store: the sites a harvest visits, every fetch attempt, and
//! robots.txt bodies stored once per distinct content (BLAKE3), with each
//! site's history as versions (first seen, last seen, content hash): a new
//! version only when the content changes.
//!
//! [`Store`] is the interface the harvester and the commands use;
//! [`SqliteStore`] implements it over one SQLite file (WAL, batched
//! transactions, versioned migrations; the schema is in
//! `docs/store.md`). A batch is one transaction: after a crash every
//! recorded batch is there, and a batch recorded again (a resumed run
//! fetching a host once more) adds an attempt but never a duplicate
//! version.
//!
//! [`PgStore`] is the same store on PostgreSQL, for many harvest workers
//! at once; they share a [`Frontier`] of hosts due ([`MemFrontier`] is
//! one in memory, for tests). [`StoreLocator`] reads `--db` (a path or a
//! `postgres://` URL) and opens either.
//!
//! [`warc`] reads and writes WARC records; [`Importer`] turns a WARC
//! stream (Common Crawl's robots.txt subsets) into attempts, and
//! [`export_jsonl`], [`export_files`] and [`export_warc`] write every
//! version out, all over plain `BufRead` / `Write`.
//!
//! ```
//! use botscope_store::{Attempt, SqliteStore, Store};
//!
//! let dir = botscope_testkit::tempdir();
//! let mut store = SqliteStore::open(&dir.path().join("robots.db"))?;
//! let fetch = |time: i64, body: &str| Attempt {
//!     host: "example.com".into(),
//!     url: "https://example.com/robots.txt".into(),
//!     time,
//!     status: Some(200),
//!     outcome: "parse".into(),
//!     reason: "success".into(),
//!     bytes: body.len() as u64,
//!     body: Some(body.as_bytes().to_vec()),
//!     ..Attempt::default()
//! };
//! // Three fetches, two distinct files: two versions of the site.
//! store.record(None, &[fetch(1_000, "User-agent: *\nDisallow: /a\n")])?;
//! store.record(None, &[fetch(2_000, "User-agent: *\nDisallow: /a\n")])?;
//! store.record(None, &[fetch(3_000, "User-agent: *\nDisallow: /b\n")])?;
//! let stats = store.stats()?;
//! assert_eq!((stats.sites, stats.attempts, stats.versions), (1, 3, 2));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

// A library speaks through its return values and the caller's writer,
// never by printing.
#![deny(clippy::print_stdout, clippy::print_stderr)]
// Without the stores (`db`), the helpers only they call are unused: the
// formats alone are compiled (the fuzz targets).
#![cfg_attr(not(feature = "db"), allow(dead_code))]

#[cfg(feature = "parquet")]
pub mod parquet_file;
pub mod synth;
pub mod warc;

#[cfg(feature = "db")]
mod any;
mod archive;
#[cfg(any(feature = "arrow", feature = "parquet"))]
mod columnar;
#[cfg(feature = "db")]
mod copy;
mod files;
mod frontier;
mod mem_frontier;
#[cfg(feature = "db")]
mod pg;
mod sources;
#[cfg(feature = "db")]
mod sqlite;
mod version;

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

#[cfg(feature = "db")]
pub use any::{AnyStore, StoreLocator, pg_blocking};
pub use archive::{
    ImportProgress, ImportSettings, Imported, Importer, InputResult, Opener, WarcInput, crawl_of,
    export_files, export_jsonl, export_warc, host_and_path, import_parallel, open_warc,
    read_captures,
};
#[cfg(feature = "parquet")]
pub use columnar::{EachVersion, export_parquet, versions_schema, write_table, write_versions};
#[cfg(feature = "arrow")]
pub use columnar::{arrow_schema, each_version_batch};
#[cfg(feature = "db")]
pub use copy::{Copied, copy};
pub use files::{FileImport, host_of_file_name, import_files};
pub use frontier::{
    Claimed, Done, Frontier, FrontierStats, MONTH, address_key, address_owner, next_due,
};
pub use mem_frontier::MemFrontier;
#[cfg(feature = "parquet")]
pub use parquet_file::{PARQUET_ROW_GROUP, PARQUET_ROW_GROUP_BYTES, ParquetWriter};
#[cfg(feature = "db")]
pub use pg::{PG_SCHEMA_VERSION, PgStore, is_postgres_url, redact_url};
pub use sources::{ImportSummary, WarcSource, warc_sources};
#[cfg(feature = "db")]
pub use sqlite::{SCHEMA_VERSION, SqliteStore};
pub use version::{Near, VersionOp, marks_index, next_version};

/// A store error: always says which file and what to do.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Another process holds the write lock.
    #[error("{path}: the store is locked by another process (is a harvest still running on it?)")]
    Locked {
        /// The store file.
        path: String,
    },
    /// The path is not a regular file (a directory, a FIFO, a device).
    #[error("{path}: {what}; a store is a file (give a file's path, or a new one)")]
    NotAFile {
        /// The store path.
        path: String,
        /// What is there, in words.
        what: String,
    },
    /// Not an SQLite file, or a damaged one.
    #[error("{path}: not a botscope store, or a damaged one ({detail})")]
    Corrupt {
        /// The store file.
        path: String,
        /// SQLite's words.
        detail: String,
    },
    /// Written by a newer botscope.
    #[error(
        "{path}: written by a newer botscope (schema version {found}; this one knows up to {known})"
    )]
    TooNew {
        /// The store file.
        path: String,
        /// The file's schema version.
        found: i64,
        /// The newest this build knows.
        known: i64,
    },
    /// The file does not exist (read-only opening).
    #[error("{path}: no such store")]
    Missing {
        /// The store file.
        path: String,
    },
    /// An input stopped at a limit set on it.
    #[error("{0}")]
    Limit(String),
    /// An input of an import could not be had (a file that cannot be
    /// read, a download that failed).
    #[error("{name}: {reason}")]
    Input {
        /// The input.
        name: String,
        /// Why.
        reason: String,
    },
    /// Writing what was read from the store failed (an export).
    #[error("failed to write {what}")]
    Write {
        /// Where.
        what: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Not a WARC record where one should start (reading stops there).
    #[error("not a WARC record at byte {offset}: {what}")]
    WarcFormat {
        /// Byte offset in the (decompressed) stream.
        offset: u64,
        /// What was wrong.
        what: String,
    },
    /// A WARC stream could not be read (or ended inside a record).
    #[error("reading failed at byte {offset}: {source}")]
    WarcRead {
        /// Byte offset in the (decompressed) stream.
        offset: u64,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// Any other database error.
    #[error("{path}: {detail}")]
    Db {
        /// The store file.
        path: String,
        /// What failed.
        detail: String,
    },
}

/// Results of store operations.
pub type Result<T> = std::result::Result<T, StoreError>;

/// A run's id.
pub type RunId = i64;

/// Where the import of one input stands ([`Store::record_import`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportMark {
    /// The input as named (a path or URL).
    pub name: String,
    /// The crawl it belongs to (`CC-MAIN-2024-10`), if known.
    pub crawl: Option<String>,
    /// Records read and stored so far, every kind.
    pub records: u64,
    /// robots.txt responses among them.
    pub robots: u64,
    /// When it was read to its end (`None`: not yet).
    pub finished: Option<i64>,
}

/// A harvest run about to start.
#[derive(Debug, Clone)]
pub struct NewRun {
    /// What the hosts came from (a file name, `-`, `import`).
    pub input: String,
    /// BLAKE3 of the host list, so that `--resume` finds the same run.
    pub input_hash: [u8; 32],
    /// The User-Agent sent.
    pub user_agent: String,
    /// Hosts in the input.
    pub hosts: u64,
    /// Start time (seconds since the epoch).
    pub started: i64,
    /// The crawl whose captures it imports (`CC-MAIN-2024-10`), if any:
    /// every attempt of the run belongs to it ([`Store::crawl_sites`],
    /// [`SiteHistory::sights`]). No control characters.
    pub crawl: Option<String>,
}

/// One redirect hop: the URL that answered and its status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hop {
    /// The URL requested.
    pub url: String,
    /// Its status (3xx).
    pub status: u16,
}

/// The response headers that matter for robots.txt.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Headers {
    /// `Content-Type`.
    pub content_type: Option<String>,
    /// `Cache-Control`.
    pub cache_control: Option<String>,
    /// `Expires`.
    pub expires: Option<String>,
    /// `Retry-After`.
    pub retry_after: Option<String>,
    /// `Last-Modified`.
    pub last_modified: Option<String>,
    /// `ETag`.
    pub etag: Option<String>,
}

impl Headers {
    /// The headers that matter, looked up by name (`content-type` …).
    pub fn from_fn(get: impl Fn(&str) -> Option<String>) -> Headers {
        Headers {
            content_type: get("content-type"),
            cache_control: get("cache-control"),
            expires: get("expires"),
            retry_after: get("retry-after"),
            last_modified: get("last-modified"),
            etag: get("etag"),
        }
    }
}

/// One fetch of a site's robots.txt (or one imported record).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Attempt {
    /// The host asked for.
    pub host: String,
    /// Its rank in a ranked input.
    pub rank: Option<u64>,
    /// When (seconds since the epoch).
    pub time: i64,
    /// How long, in milliseconds.
    pub duration_ms: u64,
    /// The last URL requested.
    pub url: String,
    /// Redirects followed, in order.
    pub redirects: Vec<Hop>,
    /// The address connected to last.
    pub address: Option<String>,
    /// The final status, when a response came.
    pub status: Option<u16>,
    /// Headers of the final response.
    pub headers: Headers,
    /// Body bytes received (up to the cap).
    pub bytes: u64,
    /// The body was longer than the cap.
    pub truncated: bool,
    /// `dns`, `connect`, `tls`, `timeout`, `protocol`, `too-large`,
    /// `refused` (an address botscope does not connect to).
    pub error_class: Option<String>,
    /// The error in words.
    pub error: Option<String>,
    /// The fetch policy's action (`parse`, `allow-all`, `disallow-all`,
    /// `use-cached-copy`).
    pub outcome: String,
    /// The policy's reason.
    pub reason: String,
    /// Seconds the outcome holds.
    pub expires_in: Option<u64>,
    /// The body, when the policy parses it.
    pub body: Option<Vec<u8>>,
    /// Where the attempt comes from.
    pub source: Source,
}

/// Where a version comes from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// Fetched by a harvest.
    #[default]
    Harvest,
    /// A WARC record (Common Crawl's robots.txt subsets, an export).
    Warc,
    /// A file of a directory (`store import --format files`).
    Import,
    /// Given by a user (`botscope submit`, the web application).
    Submitted,
}

impl Source {
    /// Its name in the store.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Harvest => "harvest",
            Source::Warc => "warc",
            Source::Import => "import",
            Source::Submitted => "submitted",
        }
    }

    /// The source a stored name means (an unknown name is a harvest).
    pub fn from_name(s: &str) -> Source {
        match s {
            "warc" => Source::Warc,
            "import" => Source::Import,
            "submitted" => Source::Submitted,
            _ => Source::Harvest,
        }
    }
}

/// Why a site had no robots.txt at an attempt that followed a file: the
/// absence is a version of its own (an empty body and this mark), so the
/// file before it ends there and a return of the same file is a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Absence {
    /// A 4xx answer (but 429): the file is gone.
    Removed,
    /// No answer, a 429 or a 5xx.
    Unreachable,
    /// A redirect that ended nowhere: not followed (a crawl's capture of
    /// the 3xx), a loop, or past the hop limit.
    Moved,
}

impl Absence {
    /// `removed`, `unreachable` or `moved`.
    pub fn as_str(self) -> &'static str {
        match self {
            Absence::Removed => "removed",
            Absence::Unreachable => "unreachable",
            Absence::Moved => "moved",
        }
    }

    /// The absence a stored name means.
    pub fn from_name(s: &str) -> Option<Absence> {
        match s {
            "removed" => Some(Absence::Removed),
            "unreachable" => Some(Absence::Unreachable),
            "moved" => Some(Absence::Moved),
            _ => None,
        }
    }

    /// The key the version rule compares (never a 32-byte content hash).
    pub fn key(self) -> &'static [u8] {
        match self {
            Absence::Removed => b"absent:removed",
            Absence::Unreachable => b"absent:unreachable",
            Absence::Moved => b"absent:moved",
        }
    }
}

/// The version rule's key of a stored row: its content hash, or its
/// absence's key.
pub(crate) fn version_key(hash: Vec<u8>, absent: Option<String>) -> Vec<u8> {
    match absent.as_deref().and_then(Absence::from_name) {
        Some(a) => a.key().to_vec(),
        None => hash,
    }
}

impl Attempt {
    /// The site's robots.txt is absent at this attempt: no body, and an
    /// answer that says so (a 4xx, a 5xx or 429, no answer, a redirect that
    /// ended nowhere). A 304, an address botscope refused, a submission
    /// and any attempt with a body are not absences.
    pub fn absence(&self) -> Option<Absence> {
        if self.body.is_some() || self.source == Source::Submitted {
            return None;
        }
        match self.status {
            Some(304) => None,
            Some(429) => Some(Absence::Unreachable),
            Some(s) if (300..400).contains(&s) => Some(Absence::Moved),
            Some(s) if (400..500).contains(&s) => Some(Absence::Removed),
            Some(s) if s >= 500 => Some(Absence::Unreachable),
            Some(_) => None,
            None => match self.error_class.as_deref() {
                Some("refused") => None,
                _ => Some(Absence::Unreachable),
            },
        }
    }

    /// True when the attempt counts toward "unreachable" (no response,
    /// 429 or 5xx). A body without a status (a file imported or
    /// submitted) is not a failed fetch.
    pub fn unreachable(&self) -> bool {
        match self.status {
            None => self.body.is_none(),
            Some(s) => s == 429 || (500..=599).contains(&s),
        }
    }
}

/// What the store remembers of a site, for the next fetch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Previous {
    /// The last attempt's time.
    pub last_attempt: Option<i64>,
    /// `ETag` of the last good copy.
    pub etag: Option<String>,
    /// `Last-Modified` of the last good copy.
    pub last_modified: Option<String>,
    /// A good copy exists.
    pub has_copy: bool,
    /// Unreachable since (the first unreachable attempt after the last
    /// reachable one).
    pub unreachable_since: Option<i64>,
    /// Not to be fetched before this time (the last answer was 429 or 503
    /// with `Retry-After`).
    pub retry_at: Option<i64>,
}

/// A stored version of a site's robots.txt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    /// The host.
    pub host: String,
    /// The URL it was fetched from (the end of the redirects).
    pub url: String,
    /// First seen (seconds since the epoch).
    pub first_seen: i64,
    /// Last seen.
    pub last_seen: i64,
    /// BLAKE3 of the body.
    pub hash: [u8; 32],
    /// The body.
    pub body: Vec<u8>,
    /// Content type of the response that first gave it.
    pub content_type: Option<String>,
    /// The response that first gave it, when the store has one (a file
    /// imported or submitted has none).
    pub origin: Option<Origin>,
    /// Where the version comes from.
    pub source: Source,
    /// The site had no robots.txt from `first_seen` ([`Absence`]): the
    /// body is empty and `hash` is the empty body's.
    pub absent: Option<Absence>,
}

impl Version {
    /// A robots.txt file (not an absence).
    pub fn is_file(&self) -> bool {
        self.absent.is_none()
    }
}

/// A site's history, for the research index: its rank and every version,
/// oldest first (without origins).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteHistory {
    /// The host.
    pub host: String,
    /// Its rank in a ranked host list, when one gave it.
    pub rank: Option<u64>,
    /// Its versions by first seen.
    pub versions: Vec<Version>,
    /// Its last capture in each crawl that saw it, by crawl name.
    pub sights: Vec<CrawlSight>,
}

/// A site's last capture in one crawl ([`NewRun::crawl`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrawlSight {
    /// The crawl.
    pub crawl: String,
    /// When the capture was made.
    pub time: i64,
    /// It brought a robots.txt (a body to parse): the version in force at
    /// `time` is what the site served the crawl.
    pub found: bool,
}

/// The sites one crawl saw ([`Store::crawl_sites`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrawlSites {
    /// The crawl.
    pub crawl: String,
    /// Its first capture.
    pub first: i64,
    /// Its last capture.
    pub last: i64,
    /// Distinct sites it captured (of the hosts asked, when asked).
    pub sites: u64,
    /// The change mark of the last batch that added to or changed its
    /// sights ([`Store::change_mark`]'s scale): an index whose crawls
    /// were read at a mark below it reads them again.
    pub changed: i64,
    /// With hosts asked: the positions of those it captured.
    pub of_hosts: Vec<usize>,
}

/// A site's last capture per crawl, from the column of a history query
/// that lists its crawl captures (`crawl\ttime\tfound` lines).
pub(crate) fn sights_of(listed: Option<&str>) -> Vec<CrawlSight> {
    let mut last: std::collections::BTreeMap<&str, (i64, bool)> = Default::default();
    for line in listed.unwrap_or_default().split('\n') {
        let mut f = line.rsplitn(3, '\t');
        let (Some(found), Some(time), Some(crawl)) = (f.next(), f.next(), f.next()) else {
            continue;
        };
        let Ok(time) = time.parse::<i64>() else {
            continue;
        };
        let found = matches!(found, "1" | "t" | "true");
        let e = last.entry(crawl).or_insert((time, found));
        // The last capture wins; of two at one second, one that found.
        if time > e.0 || (time == e.0 && found) {
            *e = (time, found);
        }
    }
    last.into_iter()
        .map(|(crawl, (time, found))| CrawlSight {
            crawl: crawl.to_owned(),
            time,
            found,
        })
        .collect()
}

/// Keeps, of each crawl's sites, the hosts asked that it captured: `found`
/// holds (position in the hosts asked, crawl) pairs, each once.
pub(crate) fn restrict_to_hosts(
    out: &mut [CrawlSites],
    found: impl IntoIterator<Item = (usize, String)>,
) {
    let at: HashMap<String, usize> = out
        .iter()
        .enumerate()
        .map(|(i, c)| (c.crawl.clone(), i))
        .collect();
    for (i, crawl) in found {
        if let Some(&k) = at.get(&crawl) {
            out[k].of_hosts.push(i);
        }
    }
    for c in out {
        c.of_hosts.sort_unstable();
        c.sites = c.of_hosts.len() as u64;
    }
}

/// A run's crawl name, checked before it is stored.
pub(crate) fn check_run(run: &NewRun) -> Result<()> {
    match &run.crawl {
        Some(c) => check_crawl_name(c).map_err(|e| StoreError::Input {
            name: run.input.clone(),
            reason: e.to_string(),
        }),
        None => Ok(()),
    }
}

/// A crawl name a run may carry: 1 to 200 bytes, no control characters.
pub fn check_crawl_name(name: &str) -> std::result::Result<(), BadCrawlName> {
    if name.is_empty() || name.len() > 200 || name.chars().any(char::is_control) {
        Err(BadCrawlName(name.chars().take(60).collect()))
    } else {
        Ok(())
    }
}

/// A crawl name with control characters, empty or too long.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a crawl name is 1 to 200 bytes without control characters: {0:?}")]
pub struct BadCrawlName(pub String);

impl SiteHistory {
    /// The versions that say what the site serves, oldest first: those
    /// fetched or imported, absences among them. A user's submission never
    /// replaces them; a site where no file was ever fetched or imported
    /// has its submissions, when it has any.
    pub fn stream(&self) -> Vec<&Version> {
        let (observed, submitted): (Vec<&Version>, Vec<&Version>) = self
            .versions
            .iter()
            .partition(|v| v.source != Source::Submitted);
        if observed.iter().any(|v| v.is_file()) || submitted.is_empty() {
            observed
        } else {
            submitted
        }
    }

    /// The version in force at `t`: the latest of [`SiteHistory::stream`]
    /// first seen no later.
    pub fn at(&self, t: i64) -> Option<&Version> {
        self.stream().into_iter().rev().find(|v| v.first_seen <= t)
    }
}

/// The response headers a version's origin keeps, in the order the
/// stores select them.
pub(crate) const ORIGIN_HEADERS: [&str; 5] = [
    "Cache-Control",
    "Expires",
    "Last-Modified",
    "ETag",
    "Retry-After",
];

/// What the store keeps of the response that first gave a version.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Origin {
    /// HTTP status.
    pub status: u16,
    /// The response headers the store keeps (`Cache-Control`, `Expires`,
    /// `Last-Modified`, `ETag`, `Retry-After`), as received.
    pub headers: Vec<(String, String)>,
    /// The body was cut at the size cap: the version holds its start.
    pub truncated: bool,
    /// What the fetch policy made of the response (`parse`,
    /// `allow-all`, …), as the attempt recorded it.
    pub outcome: String,
}

/// Totals for `store stats`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Stats {
    /// Schema version of the file.
    pub schema_version: i64,
    /// Sites.
    pub sites: u64,
    /// Sites with at least one robots.txt version.
    pub sites_with_robots_txt: u64,
    /// Fetch attempts.
    pub attempts: u64,
    /// Runs (harvests and imports).
    pub runs: u64,
    /// Runs not finished (interrupted; `--resume` continues the last).
    pub unfinished_runs: u64,
    /// Versions.
    pub versions: u64,
    /// Distinct bodies.
    pub bodies: u64,
    /// Bytes of distinct bodies.
    pub body_bytes: u64,
    /// Latest outcome per site, counted.
    pub outcomes: HashMap<String, u64>,
    /// Latest error class per site, counted.
    pub errors: HashMap<String, u64>,
    /// Latest status class per site (`2xx` …, `none`), counted.
    pub statuses: HashMap<String, u64>,
}

/// Rows of a `stats` query: a key (absent for a plain count) and a count.
pub(crate) type CountRows = Vec<(Option<String>, i64)>;

impl Stats {
    /// The totals, from the queries both backends run the same way:
    /// `rows` runs one (a `count` in one column, or a key and a count).
    pub(crate) fn gather(
        schema_version: i64,
        mut rows: impl FnMut(&str) -> Result<CountRows>,
    ) -> Result<Stats> {
        let mut count = |sql: &str| -> Result<u64> {
            Ok(rows(sql)?
                .first()
                .map_or(0, |(_, n)| u64::try_from(*n).unwrap_or(0)))
        };
        let sites = count("SELECT count(*) FROM sites")?;
        let sites_with_robots_txt =
            count("SELECT count(DISTINCT site_id) FROM versions WHERE absent IS NULL")?;
        let attempts = count("SELECT count(*) FROM attempts")?;
        let runs = count("SELECT count(*) FROM runs")?;
        let unfinished_runs = count("SELECT count(*) FROM runs WHERE finished IS NULL")?;
        let versions = count("SELECT count(*) FROM versions WHERE absent IS NULL")?;
        let bodies = count("SELECT count(*) FROM bodies")?;
        let body_bytes = count("SELECT CAST(coalesce(sum(size), 0) AS BIGINT) FROM bodies")?;
        let mut group = |sql: &str| -> Result<HashMap<String, u64>> {
            Ok(rows(sql)?
                .into_iter()
                .map(|(k, n)| {
                    (
                        k.unwrap_or_else(|| "none".into()),
                        u64::try_from(n).unwrap_or(0),
                    )
                })
                .collect())
        };
        Ok(Stats {
            schema_version,
            sites,
            sites_with_robots_txt,
            attempts,
            runs,
            unfinished_runs,
            versions,
            bodies,
            body_bytes,
            outcomes: group(
                "SELECT last_outcome, count(*) FROM sites WHERE last_attempt IS NOT NULL
                 GROUP BY last_outcome",
            )?,
            errors: group(
                "SELECT last_error_class, count(*) FROM sites WHERE last_error_class IS NOT NULL
                 GROUP BY last_error_class",
            )?,
            statuses: group(
                "SELECT CASE WHEN last_status IS NULL THEN 'none'
                        ELSE CAST(last_status / 100 AS TEXT) || 'xx' END, count(*)
                 FROM sites WHERE last_attempt IS NOT NULL GROUP BY 1",
            )?,
        })
    }

    /// The totals for people, one per line, for the store called `name`;
    /// counts by outcome, status and error most frequent first.
    pub fn describe(&self, name: &str) -> String {
        let sorted = |m: &HashMap<String, u64>| {
            let mut v: Vec<_> = m.iter().collect();
            v.sort_by(|x, y| y.1.cmp(x.1).then(x.0.cmp(y.0)));
            v.iter()
                .map(|(k, n)| format!("{k} {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        format!(
            "store            {name}\n\
             schema version   {}\n\
             sites            {}\n  \
             with robots.txt {}\n\
             attempts         {}\n\
             runs             {} ({} unfinished)\n\
             versions         {}\n\
             distinct bodies  {} ({} bytes)\n\
             latest outcome   {}\n\
             latest status    {}\n\
             latest error     {}\n",
            self.schema_version,
            self.sites,
            self.sites_with_robots_txt,
            self.attempts,
            self.runs,
            self.unfinished_runs,
            self.versions,
            self.bodies,
            self.body_bytes,
            sorted(&self.outcomes),
            sorted(&self.statuses),
            sorted(&self.errors)
        )
    }
}

/// Where harvests and imports keep what they found.
pub trait Store {
    /// Starts a run.
    fn begin_run(&mut self, run: &NewRun) -> Result<RunId>;
    /// The latest unfinished run over the same input, if any.
    fn unfinished_run(&self, input_hash: &[u8; 32]) -> Result<Option<RunId>>;
    /// Marks a run finished.
    fn finish_run(&mut self, run: RunId, finished: i64) -> Result<()>;
    /// Hosts with a recorded attempt in `run`.
    fn hosts_done(&self, run: RunId) -> Result<std::collections::HashSet<String>>;
    /// Records attempts in one transaction: all or none.
    fn record(&mut self, run: Option<RunId>, batch: &[Attempt]) -> Result<()>;
    /// Records attempts (as [`Store::record`]) and, in the same
    /// transaction, where the import of their input stands: an import
    /// stopped anywhere resumes after the last batch stored.
    fn record_import(
        &mut self,
        run: Option<RunId>,
        batch: &[Attempt],
        mark: &ImportMark,
    ) -> Result<()>;
    /// Every input imported or being imported, by name.
    fn imports(&self) -> Result<HashMap<String, ImportMark>>;
    /// What is known of every site, by host.
    fn previous(&self) -> Result<HashMap<String, Previous>>;
    /// Totals.
    fn stats(&self) -> Result<Stats>;
    /// Every version, by host then time.
    fn each_version(&self, f: &mut dyn FnMut(Version) -> Result<()>) -> Result<()>;
    /// The store's change mark: it grows with every batch that adds or
    /// moves a version or changes a site's rank.
    fn change_mark(&self) -> Result<i64>;
    /// The history of each site changed after `mark` (every site with a
    /// version for 0), by host, up to the current mark, read in one
    /// snapshot; returns that mark.
    fn sites_changed(&self, mark: i64, f: &mut dyn FnMut(SiteHistory) -> Result<()>)
    -> Result<i64>;
    /// One site's history, if the store knows the host.
    fn site(&self, host: &str) -> Result<Option<SiteHistory>>;
    /// Sites first seen (attempted or imported) no later than `t`.
    fn sites_known_at(&self, t: i64) -> Result<u64>;
    /// When each of `hosts` was first seen (as for
    /// [`Store::sites_known_at`]), in order; `None` for a host the store
    /// does not know. A cohort's sites known at a time are counted from it.
    fn sites_added(&self, hosts: &[String]) -> Result<Vec<Option<i64>>>;
    /// Every crawl imported ([`NewRun::crawl`]), by name: its span and the
    /// sites it captured, every outcome; with `hosts`, only those (and
    /// which of them).
    fn crawl_sites(&self, hosts: Option<&[String]>) -> Result<Vec<CrawlSites>>;
    /// The sites where `crawl`'s last capture found a robots.txt, with that
    /// capture's time, in ascending byte order of host (the order of an
    /// index's term dictionaries), one snapshot.
    fn crawl_found(&self, crawl: &str, f: &mut dyn FnMut(&str, i64) -> Result<()>) -> Result<()>;
}

/// A time given on a command line: RFC 3339 (`2007-03-01T00:00:00Z`), a
/// date (`2007-03-01`, midnight UTC), or a month (`2007-03`, its first day),
/// as seconds since the epoch.
pub fn parse_time_arg(s: &str) -> std::result::Result<i64, BadTime> {
    let s = s.trim();
    if let Ok(t) = s.parse::<jiff::Timestamp>() {
        return Ok(t.as_second());
    }
    let day = if s.len() == 7 {
        format!("{s}-01")
    } else {
        s.to_owned()
    };
    day.parse::<jiff::civil::Date>()
        .ok()
        .and_then(|d| d.to_zoned(jiff::tz::TimeZone::UTC).ok())
        .map(|z| z.timestamp().as_second())
        .ok_or_else(|| BadTime(s.to_owned()))
}

/// A time argument that is none of the forms [`parse_time_arg`] reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a time: give 2007-03-01, 2007-03 or 2007-03-01T12:00:00Z")]
pub struct BadTime(pub String);

/// BLAKE3 of a body, as stored.
pub fn content_hash(body: &[u8]) -> [u8; 32] {
    *blake3::hash(body).as_bytes()
}

/// A hash in hex.
pub fn hex(h: &[u8]) -> String {
    h.iter().map(|b| format!("{b:02x}")).collect()
}
