//! What the server keeps between requests: where the store and the index
//! are, the open index, the registry and IP-owner data, the analysed
//! logs, and a cache of the whole store's favourability.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use botscope_botid::Registry;
use botscope_index::{FavorTable, Index};
use botscope_ipdb::IpOwners;
use botscope_robotstxt::Semantics;
use botscope_store::{SqliteStore, Store};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

use crate::demo;
use crate::logs::LogView;
use crate::{Config, Error, Limits};

/// The application's state, shared by every request.
pub struct App {
    pub(crate) store: PathBuf,
    pub(crate) index_dir: PathBuf,
    pub(crate) index: Index,
    pub(crate) registry: Registry,
    pub(crate) owners: IpOwners,
    pub(crate) limits: Limits,
    pub(crate) fetch: botscope_harvest::Config,
    pub(crate) nameservers: Vec<SocketAddr>,
    pub(crate) threads: usize,
    /// Analysed logs, oldest first.
    pub(crate) logs: RwLock<Vec<Arc<LogView>>>,
    next_log: AtomicU32,
    /// One writer of the store and the index at a time.
    pub(crate) write: tokio::sync::Mutex<()>,
    /// The whole store's favourability per semantics, until the next
    /// submission.
    favor: Mutex<HashMap<&'static str, Arc<FavorTable>>>,
    pub(crate) limiter: Option<DefaultKeyedRateLimiter<IpAddr>>,
    /// The demo's directory (removed when the server ends).
    pub(crate) demo: Option<tempfile::TempDir>,
}

impl App {
    /// Opens (or builds) everything `config` names.
    pub async fn new(config: Config) -> Result<Arc<App>, Error> {
        let Config {
            db,
            index,
            registry,
            owners,
            limits,
            fetch,
            nameservers,
            demo_sites,
            threads,
        } = config;
        let (store, index_dir, demo) = match db {
            Some(db) => {
                let dir = index.unwrap_or_else(|| sibling(&db, ".index"));
                (db, dir, None)
            }
            None => {
                let dir = tempfile::Builder::new()
                    .prefix("botscope-demo-")
                    .tempdir()
                    .map_err(|source| Error::Io {
                        what: "cannot make the demo's directory".into(),
                        source,
                    })?;
                let d = demo::build_blocking(dir.path().to_path_buf(), demo_sites).await?;
                (d.db, d.index, Some(dir))
            }
        };
        let (s, d) = (store.clone(), index_dir.clone());
        let index = tokio::task::spawn_blocking(move || open_or_build(&s, &d))
            .await
            .map_err(|e| Error::Setup(format!("opening the index failed: {e}")))??;
        let limiter = NonZeroU32::new(limits.api_per_second).map(|rate| {
            let burst =
                NonZeroU32::new(limits.api_burst.max(limits.api_per_second)).unwrap_or(rate);
            RateLimiter::keyed(Quota::per_second(rate).allow_burst(burst))
        });
        let app = Arc::new(App {
            store,
            index_dir,
            index,
            registry,
            owners,
            limits,
            fetch,
            nameservers,
            threads: threads.max(1),
            logs: RwLock::new(Vec::new()),
            next_log: AtomicU32::new(1),
            write: tokio::sync::Mutex::new(()),
            favor: Mutex::new(HashMap::new()),
            limiter,
            demo,
        });
        if app.demo.is_some() {
            let a = app.clone();
            tokio::task::spawn_blocking(move || crate::logs::analyse_demo(&a))
                .await
                .map_err(|e| Error::Setup(format!("analysing the demo's logs failed: {e}")))??;
        }
        tracing::info!(
            store = %app.store.display(),
            index = %app.index_dir.display(),
            documents = app.index.documents(),
            demo = app.demo.is_some(),
            "ready"
        );
        Ok(app)
    }

    /// The store, opened for reading.
    pub(crate) fn store_read(&self) -> Result<SqliteStore, botscope_store::StoreError> {
        SqliteStore::open_read(&self.store)
    }

    /// Whether this is the demo.
    pub fn is_demo(&self) -> bool {
        self.demo.is_some()
    }

    /// The whole store's favourability (cached), or a subset's.
    pub(crate) fn favor(
        &self,
        where_: Option<&str>,
        as_of: Option<i64>,
        semantics: Semantics,
    ) -> botscope_index::Result<Arc<FavorTable>> {
        let whole = where_.is_none() && as_of.is_none();
        if whole && let Some(t) = self.lock_favor().get(semantics.as_str()) {
            return Ok(t.clone());
        }
        let t = Arc::new(self.index.favor(where_, as_of, semantics)?);
        if whole {
            self.lock_favor().insert(semantics.as_str(), t.clone());
        }
        Ok(t)
    }

    fn lock_favor(&self) -> std::sync::MutexGuard<'_, HashMap<&'static str, Arc<FavorTable>>> {
        self.favor.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// After a write: the index sees it, and the cache is dropped.
    pub(crate) fn changed(&self) {
        if let Err(e) = self.index.reload() {
            tracing::warn!("reloading the index: {e}");
        }
        self.lock_favor().clear();
    }

    /// Adds an analysed log; uploads beyond the limit push out the oldest
    /// upload. Returns its id.
    pub(crate) fn add_log(&self, mut view: LogView) -> u32 {
        let id = self.next_log.fetch_add(1, Ordering::Relaxed);
        view.id = id;
        let mut logs = self.logs.write().unwrap_or_else(|p| p.into_inner());
        logs.push(Arc::new(view));
        let uploads = logs.iter().filter(|l| l.uploaded).count();
        if uploads > self.limits.uploads_kept
            && let Some(i) = logs.iter().position(|l| l.uploaded)
        {
            logs.remove(i);
        }
        id
    }

    /// The analysed logs, oldest first.
    pub(crate) fn logs(&self) -> Vec<Arc<LogView>> {
        self.logs.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// One analysed log.
    pub(crate) fn log(&self, id: u32) -> Option<Arc<LogView>> {
        self.logs().into_iter().find(|l| l.id == id)
    }
}

/// `DB.index` beside `DB`.
fn sibling(db: &Path, suffix: &str) -> PathBuf {
    let mut s = db.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// Opens the index, building it first when there is none; an index behind
/// the store is brought up to it.
fn open_or_build(store: &Path, dir: &Path) -> Result<Index, Error> {
    let s = SqliteStore::open_read(store)?;
    if !dir.join("meta.json").is_file() {
        tracing::info!(index = %dir.display(), "building the research index");
        let r = Index::build(&s, dir, None, &mut |_| {})?;
        tracing::info!(index = %dir.display(), "{r}");
        return Ok(Index::open(dir)?);
    }
    let mut idx = Index::open(dir)?;
    if s.change_mark()? > idx.meta().mark {
        match idx.update(&s) {
            Ok(r) => tracing::info!(index = %dir.display(), "brought up to the store: {r}"),
            // Another process writes it: serve what it has.
            Err(botscope_index::IndexError::Locked { .. }) => {
                tracing::warn!(index = %dir.display(), "another process is writing the index; serving it as it is")
            }
            Err(e) => return Err(e.into()),
        }
        idx.reload()?;
    }
    Ok(idx)
}
