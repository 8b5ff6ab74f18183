//! A store of either kind (SQLite or PostgreSQL), as `--db` names it:
//! the database backends, behind the default feature `db`.

use crate::pg::{PgStore, is_postgres_url};
use crate::sqlite::SqliteStore;
use crate::*;

/// A store of either kind, chosen by what `--db` names: a `postgres://`
/// (or `postgresql://`) URL, or an SQLite file.
pub enum AnyStore {
    /// One SQLite file.
    Sqlite(SqliteStore),
    /// A PostgreSQL database.
    Pg(Box<PgStore>),
}

/// Where a store is, as `--db` names it: an SQLite file, or a PostgreSQL
/// database (`postgres://USER@HOST/DB`, or `postgresql://`). Parsed once,
/// where the flags are read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreLocator {
    /// An SQLite file.
    Sqlite(std::path::PathBuf),
    /// A PostgreSQL connection URL.
    Postgres(String),
}

impl StoreLocator {
    /// Opens (or creates) the store for writing, migrating it.
    pub fn open(&self) -> Result<AnyStore> {
        Ok(match self {
            StoreLocator::Postgres(url) => {
                AnyStore::Pg(Box::new(pg_blocking(|| PgStore::open(url))?))
            }
            StoreLocator::Sqlite(path) => AnyStore::Sqlite(SqliteStore::open(path)?),
        })
    }

    /// Opens an existing store for reading.
    pub fn open_read(&self) -> Result<AnyStore> {
        Ok(match self {
            StoreLocator::Postgres(url) => {
                AnyStore::Pg(Box::new(pg_blocking(|| PgStore::open_read(url))?))
            }
            StoreLocator::Sqlite(path) => AnyStore::Sqlite(SqliteStore::open_read(path)?),
        })
    }

    /// True for a PostgreSQL database.
    pub fn is_postgres(&self) -> bool {
        matches!(self, StoreLocator::Postgres(_))
    }

    /// The SQLite file, when it is one.
    pub fn sqlite_path(&self) -> Option<&std::path::Path> {
        match self {
            StoreLocator::Sqlite(p) => Some(p),
            StoreLocator::Postgres(_) => None,
        }
    }

    /// The index directory beside the store (`DB.index`); a PostgreSQL
    /// store has none.
    pub fn index_beside(&self) -> Option<std::path::PathBuf> {
        self.sqlite_path().map(|p| {
            let mut s = p.as_os_str().to_owned();
            s.push(".index");
            std::path::PathBuf::from(s)
        })
    }
}

impl std::fmt::Display for StoreLocator {
    /// The path, or the URL with its password hidden.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreLocator::Sqlite(p) => write!(f, "{}", p.display()),
            StoreLocator::Postgres(url) => f.write_str(&redact_url(url)),
        }
    }
}

impl From<&std::path::Path> for StoreLocator {
    fn from(db: &std::path::Path) -> StoreLocator {
        match db.to_str().filter(|s| is_postgres_url(s)) {
            Some(url) => StoreLocator::Postgres(url.to_owned()),
            None => StoreLocator::Sqlite(db.to_path_buf()),
        }
    }
}

impl std::str::FromStr for StoreLocator {
    type Err = std::convert::Infallible;
    fn from_str(s: &str) -> std::result::Result<StoreLocator, Self::Err> {
        Ok(StoreLocator::from(std::path::Path::new(s)))
    }
}

impl AnyStore {
    /// Opens (or creates) the store `db` names for writing, migrating it.
    pub fn open(db: &std::path::Path) -> Result<AnyStore> {
        StoreLocator::from(db).open()
    }

    /// Opens an existing store for reading.
    pub fn open_read(db: &std::path::Path) -> Result<AnyStore> {
        StoreLocator::from(db).open_read()
    }

    /// True when `db` names a PostgreSQL database.
    pub fn is_postgres(db: &std::path::Path) -> bool {
        StoreLocator::from(db).is_postgres()
    }

    /// How `db` is named in messages (a URL's password hidden).
    pub fn display(db: &std::path::Path) -> String {
        StoreLocator::from(db).to_string()
    }
}

macro_rules! both {
    ($self:ident, $s:ident => $e:expr) => {
        match $self {
            AnyStore::Sqlite($s) => $e,
            AnyStore::Pg($s) => pg_blocking(|| $e),
        }
    };
}

/// Runs PostgreSQL work (the driver blocks on a runtime of its own) from
/// wherever the caller is: on a multi-threaded runtime's worker the
/// worker is handed over first, elsewhere it just runs. (A
/// current-thread runtime cannot lend its thread: call from
/// `spawn_blocking` there.)
pub fn pg_blocking<R>(f: impl FnOnce() -> R) -> R {
    match tokio::runtime::Handle::try_current().map(|h| h.runtime_flavor()) {
        Ok(tokio::runtime::RuntimeFlavor::MultiThread) => tokio::task::block_in_place(f),
        _ => f(),
    }
}

impl Store for AnyStore {
    fn begin_run(&mut self, run: &NewRun) -> Result<RunId> {
        both!(self, s => s.begin_run(run))
    }
    fn unfinished_run(&self, input_hash: &[u8; 32]) -> Result<Option<RunId>> {
        both!(self, s => s.unfinished_run(input_hash))
    }
    fn finish_run(&mut self, run: RunId, finished: i64) -> Result<()> {
        both!(self, s => s.finish_run(run, finished))
    }
    fn hosts_done(&self, run: RunId) -> Result<std::collections::HashSet<String>> {
        both!(self, s => s.hosts_done(run))
    }
    fn record(&mut self, run: Option<RunId>, batch: &[Attempt]) -> Result<()> {
        both!(self, s => s.record(run, batch))
    }
    fn previous(&self) -> Result<HashMap<String, Previous>> {
        both!(self, s => s.previous())
    }
    fn stats(&self) -> Result<Stats> {
        both!(self, s => s.stats())
    }
    fn each_version(&self, f: &mut dyn FnMut(Version) -> Result<()>) -> Result<()> {
        both!(self, s => s.each_version(f))
    }
    fn change_mark(&self) -> Result<i64> {
        both!(self, s => s.change_mark())
    }
    fn sites_changed(
        &self,
        mark: i64,
        f: &mut dyn FnMut(SiteHistory) -> Result<()>,
    ) -> Result<i64> {
        both!(self, s => s.sites_changed(mark, f))
    }
    fn site(&self, host: &str) -> Result<Option<SiteHistory>> {
        both!(self, s => s.site(host))
    }
    fn sites_known_at(&self, t: i64) -> Result<u64> {
        both!(self, s => s.sites_known_at(t))
    }
    fn sites_added(&self, hosts: &[String]) -> Result<Vec<Option<i64>>> {
        both!(self, s => s.sites_added(hosts))
    }
    fn crawl_found(&self, crawl: &str, f: &mut dyn FnMut(&str, i64) -> Result<()>) -> Result<()> {
        both!(self, s => s.crawl_found(crawl, f))
    }
    fn crawl_sites(&self, hosts: Option<&[String]>) -> Result<Vec<CrawlSites>> {
        both!(self, s => s.crawl_sites(hosts))
    }
    fn record_import(
        &mut self,
        run: Option<RunId>,
        batch: &[Attempt],
        mark: &ImportMark,
    ) -> Result<()> {
        both!(self, s => s.record_import(run, batch, mark))
    }
    fn imports(&self) -> Result<HashMap<String, ImportMark>> {
        both!(self, s => s.imports())
    }
}
