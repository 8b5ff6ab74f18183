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
use botscope_index::{FavorTable, Hit, Index, Rank, SearchRequest, Trends};
use botscope_ipdb::IpOwners;
use botscope_robotstxt::Semantics;
use botscope_store::{AnyStore, Store, StoreLocator};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

use crate::demo;
use crate::fail::Fail;
use crate::logview::{Analysis, LogView};
use crate::work::Work;
use crate::{Config, Error, Limits};

/// The application's state, shared by every request.
pub struct App {
    pub(crate) store: StoreLocator,
    pub(crate) index_dir: PathBuf,
    pub(crate) index: Index,
    pub(crate) registry: Registry,
    pub(crate) owners: IpOwners,
    pub(crate) limits: Limits,
    pub(crate) fetch: botscope_harvest::Config,
    pub(crate) nameservers: Vec<SocketAddr>,
    /// FCrDNS for uploads, and the most addresses asked per upload.
    pub(crate) dns: Option<(Arc<botscope_dns::DnsEvidence>, usize)>,
    pub(crate) threads: usize,
    /// Request work on blocking threads: `threads` at a time, first come
    /// first served, a bounded queue (see [`App::work`]).
    pub(crate) pool: Arc<Work>,
    /// Analysed logs, oldest first.
    pub(crate) logs: RwLock<Vec<Arc<LogView>>>,
    next_log: AtomicU32,
    /// One writer of the store and the index at a time.
    pub(crate) write: tokio::sync::Mutex<()>,
    /// Favourability per (query, time, semantics), until the next
    /// submission.
    favor: Memo<(Option<String>, Option<i64>, &'static str), FavorTable>,
    /// Trends charts per parameters (`api::trend_job`'s key), likewise.
    trends: Memo<String, Trends>,
    /// The sites favouring and disfavouring a robot (by its token), for
    /// its crawler page, likewise.
    sites: Memo<String, (Vec<Hit>, Vec<Hit>)>,
    /// Change feeds per question (`feeds::job`'s key), likewise.
    feeds: Memo<String, botscope_index::Changes>,
    pub(crate) limiter: Option<DefaultKeyedRateLimiter<IpAddr>>,
    /// The demo's directory (removed when the server ends).
    pub(crate) demo: Option<botscope_os::LeasedDir>,
}

impl App {
    /// Opens (or builds) everything `config` names.
    pub async fn new(config: Config) -> Result<Arc<App>, Error> {
        let Config {
            db,
            index,
            registry,
            mut owners,
            limits,
            fetch,
            nameservers,
            demo_sites,
            threads,
            verify_uploads,
        } = config;
        let dns = if verify_uploads > 0 {
            let config = botscope_dns::EvidenceConfig {
                servers: nameservers.clone(),
                timeout: std::time::Duration::from_secs(2),
                concurrency: 64,
                cache: None,
            };
            let dns = botscope_dns::DnsEvidence::new(&config)
                .await
                .map_err(|e| Error::Setup(format!("--verify-uploads: {e}")))?;
            Some((Arc::new(dns), verify_uploads))
        } else {
            None
        };
        let (store, index_dir, demo) = match db {
            Some(db) => {
                let dir = match index.or_else(|| db.index_beside()) {
                    Some(i) => i,
                    None => {
                        return Err(Error::Setup(
                            "a PostgreSQL store has no directory beside it: give --index DIR"
                                .into(),
                        ));
                    }
                };
                (db, dir, None)
            }
            None => {
                // Leased: removed when the server ends, or by the next
                // demo when this process is killed first.
                let dir =
                    botscope_os::LeasedDir::new("botscope-demo-").map_err(|source| Error::Io {
                        what: "cannot make the demo's directory".into(),
                        source,
                    })?;
                let d = demo::build_blocking(dir.path().to_path_buf(), demo_sites).await?;
                if !owners.has_places() {
                    owners = owners.with_places(demo::places()?);
                }
                (StoreLocator::Sqlite(d.db), d.index, Some(dir))
            }
        };
        let (s, d) = (store.clone(), index_dir.clone());
        let workers = threads.max(1);
        let index = tokio::task::spawn_blocking(move || open_or_build(&s, &d, workers))
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
            dns,
            threads: threads.max(1),
            pool: Arc::new(Work::new(threads.max(1), limits.queue)),
            logs: RwLock::new(Vec::new()),
            next_log: AtomicU32::new(1),
            write: tokio::sync::Mutex::new(()),
            favor: Memo::default(),
            trends: Memo::default(),
            sites: Memo::default(),
            feeds: Memo::default(),
            limiter,
            demo,
        });
        if app.demo.is_some() {
            let a = app.clone();
            let views = tokio::task::spawn_blocking(move || {
                let on = Analysis {
                    registry: &a.registry,
                    owners: &a.owners,
                    max_clients: a.limits.upload_clients,
                };
                crate::logview::analyse_demo(&on, a.threads)
            })
            .await
            .map_err(|e| Error::Setup(format!("analysing the demo's logs failed: {e}")))?;
            for v in views {
                app.add_log(v);
            }
        }
        tracing::info!(
            store = %app.store,
            index = %app.index_dir.display(),
            documents = app.index.documents(),
            demo = app.demo.is_some(),
            "ready"
        );
        Ok(app)
    }

    /// The store, opened for reading.
    pub(crate) fn store_read(&self) -> Result<AnyStore, botscope_store::StoreError> {
        self.store.open_read()
    }

    /// Runs a request's work on a blocking thread, at most `threads` of
    /// them at once and in arrival order (tokio's semaphore is fair). Without
    /// the bound, 32 concurrent searches on 2 cores share the CPU and every
    /// one of them finishes late; with it, each runs at full speed and the
    /// rest wait their turn, so latency follows the queue, not the crowd.
    /// The permit goes with the work, so a client that hangs up does not
    /// let more work start than there are threads.
    pub(crate) async fn work<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, Fail> {
        self.pool.run(1, f).await
    }

    /// Whether this is the demo.
    pub fn is_demo(&self) -> bool {
        self.demo.is_some()
    }

    /// The favourability of the store or a subset, computed once per
    /// parameters until the store changes.
    pub(crate) async fn favor(
        self: &Arc<Self>,
        where_: Option<String>,
        as_of: Option<i64>,
        semantics: Semantics,
    ) -> Result<Arc<FavorTable>, Fail> {
        let key = (where_.clone(), as_of, semantics.as_str());
        let a = self.clone();
        self.favor
            .get(&self.pool, key, move || {
                a.index
                    .favor(where_.as_deref(), as_of, semantics)
                    .map_err(|e| Fail::index(e, where_.as_deref().unwrap_or_default()))
            })
            .await
    }

    /// Restriction over time for a key that names its parameters,
    /// computed once until the store changes.
    pub(crate) async fn trends(
        &self,
        key: String,
        make: impl FnOnce() -> Result<Trends, Fail> + Send + 'static,
    ) -> Result<Arc<Trends>, Fail> {
        self.trends.get(&self.pool, key, make).await
    }

    /// A change feed's changes, computed once until the store changes.
    pub(crate) async fn changes(
        &self,
        key: String,
        make: impl FnOnce() -> Result<botscope_index::Changes, Fail> + Send + 'static,
    ) -> Result<Arc<botscope_index::Changes>, Fail> {
        self.feeds.get(&self.pool, key, make).await
    }

    /// The ten sites most favouring `token` and the ten disfavouring it
    /// most (each strongest first), computed once until the
    /// store changes: two searches over every file naming the robot are
    /// the crawler page's whole cost otherwise.
    pub(crate) async fn crawler_sites(
        self: &Arc<Self>,
        token: String,
    ) -> Result<Arc<(Vec<Hit>, Vec<Hit>)>, Fail> {
        let a = self.clone();
        let key = token.clone();
        self.sites
            .get(&self.pool, key, move || {
                let find = |modifier: &str, rank: Rank| {
                    let query = format!("{modifier}:{token}");
                    a.index
                        .search(&SearchRequest {
                            query: query.clone(),
                            rank,
                            limit: 10,
                            offset: 0,
                            semantics: Semantics::Google,
                            as_of: None,
                        })
                        .map(|r| r.hits)
                        .map_err(|e| Fail::index(e, &query))
                };
                Ok((
                    find("favor", Rank::Bias)?,
                    find("disfavor", Rank::LeastBias)?,
                ))
            })
            .await
    }

    /// After a write: the index sees it, and the cache is dropped.
    pub(crate) fn changed(&self) {
        if let Err(e) = self.index.reload() {
            tracing::warn!("reloading the index: {e}");
        }
        self.favor.clear();
        self.trends.clear();
        self.sites.clear();
        self.feeds.clear();
    }

    /// Adds an analysed log; uploads beyond the limit push out the oldest
    /// upload. Returns its id.
    pub(crate) fn add_log(&self, mut view: LogView) -> u32 {
        let id = self.next_log.fetch_add(1, Ordering::Relaxed);
        view.id = id;
        let mut logs = self.logs.write().unwrap_or_else(|p| p.into_inner());
        logs.push(Arc::new(view));
        // The oldest uploads go until the kept ones are within both the
        // count and the bytes (the newest is always kept); they are
        // dropped once the lock is released, not under it.
        let mut gone = Vec::new();
        loop {
            let uploads: Vec<&Arc<LogView>> = logs.iter().filter(|l| l.uploaded).collect();
            let bytes: usize = uploads.iter().map(|l| l.size).sum();
            let over = uploads.len() > self.limits.uploads_kept
                || (bytes > self.limits.uploads_bytes && uploads.len() > 1);
            match logs.iter().position(|l| l.uploaded) {
                Some(i) if over => gone.push(logs.remove(i)),
                _ => break,
            }
        }
        drop(logs);
        drop(gone);
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

/// Opens the index, building it first when there is none; an index behind
/// the store is brought up to it.
fn open_or_build(store: &StoreLocator, dir: &Path, threads: usize) -> Result<Index, Error> {
    let s = store.open_read()?;
    if !dir.join("meta.json").is_file() {
        tracing::info!(index = %dir.display(), "building the research index");
        let r = Index::build_on(&s, dir, None, threads, &mut |_| {})?;
        tracing::info!(index = %dir.display(), "{r}");
        let mut idx = Index::open(dir)?;
        idx.set_threads(threads);
        return Ok(idx);
    }
    let mut idx = Index::open(dir)?;
    idx.set_threads(threads);
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

/// One key's answer, once computed; its lock is held while computing.
type Cell<V> = Arc<tokio::sync::Mutex<Option<Arc<V>>>>;

/// What a memo holds for a key.
#[cfg(test)]
pub(crate) enum Peek<V> {
    Ready(Arc<V>),
    Running,
    Absent,
}

/// Answers computed once per key, until cleared: a request for a key being
/// computed waits (without holding a thread) for that computation instead
/// of starting its own (32 clients opening `/robots` at once cost one
/// computation). The computation runs in a task of its own, so a waiter
/// that goes away (a closed connection) does not throw the work away.
/// Failures are not kept. At most `Memo::CAP` keys are kept (keys come
/// from requests); beyond that the memo starts afresh.
struct Memo<K, V> {
    cells: Mutex<HashMap<K, Cell<V>>>,
}

impl<K, V> Default for Memo<K, V> {
    fn default() -> Self {
        Memo {
            cells: Mutex::new(HashMap::new()),
        }
    }
}

impl<K: std::hash::Hash + Eq, V: Send + Sync + 'static> Memo<K, V> {
    const CAP: usize = 64;

    async fn get(
        &self,
        pool: &Arc<Work>,
        key: K,
        make: impl FnOnce() -> Result<V, Fail> + Send + 'static,
    ) -> Result<Arc<V>, Fail> {
        let cell = {
            let mut cells = self.cells.lock().unwrap_or_else(|p| p.into_inner());
            if cells.len() >= Self::CAP && !cells.contains_key(&key) {
                cells.clear();
            }
            cells.entry(key).or_default().clone()
        };
        let mut slot = cell.lock_owned().await;
        if let Some(v) = &*slot {
            return Ok(v.clone());
        }
        let pool = pool.clone();
        tokio::spawn(async move {
            let v = Arc::new(pool.run_long(1, move |_, _| make()).await??);
            *slot = Some(v.clone());
            Ok(v)
        })
        .await
        .map_err(|e| Fail::Internal(format!("the work failed: {e}")))?
    }

    #[cfg(test)]
    fn peek(&self, key: &K) -> Peek<V> {
        let cell = match self
            .cells
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(key)
        {
            Some(c) => c.clone(),
            None => return Peek::Absent,
        };
        match cell.try_lock() {
            Ok(slot) => match &*slot {
                Some(v) => Peek::Ready(v.clone()),
                None => Peek::Absent,
            },
            Err(_) => Peek::Running,
        }
    }

    fn clear(&self) {
        self.cells.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_memo_computes_once_for_concurrent_askers_and_forgets_failures() {
        let memo: Arc<Memo<u32, u32>> = Arc::new(Memo::default());
        let pool = Arc::new(Work::new(2, 64));
        let runs = Arc::new(AtomicUsize::new(0));
        let tasks: Vec<_> = (0..8)
            .map(|_| {
                let (memo, runs, pool) = (memo.clone(), runs.clone(), pool.clone());
                tokio::spawn(async move {
                    memo.get(&pool, 1, move || {
                        runs.fetch_add(1, Ordering::SeqCst);
                        std::thread::sleep(std::time::Duration::from_millis(50));
                        Ok(7)
                    })
                    .await
                })
            })
            .collect();
        for t in tasks {
            assert_eq!(*t.await.unwrap().unwrap(), 7);
        }
        assert_eq!(runs.load(Ordering::SeqCst), 1, "one computation");
        assert!(matches!(memo.peek(&1), Peek::Ready(v) if *v == 7));
        assert!(matches!(memo.peek(&2), Peek::Absent));
        // A waiter that goes away does not lose the work.
        let (started_tx, started) = std::sync::mpsc::channel();
        let (go, go_rx) = std::sync::mpsc::channel::<()>();
        let slow = tokio::spawn({
            let (memo, pool) = (memo.clone(), pool.clone());
            async move {
                memo.get(&pool, 3, move || {
                    started_tx.send(()).unwrap();
                    go_rx.recv().unwrap();
                    Ok(30)
                })
                .await
            }
        });
        tokio::task::spawn_blocking(move || started.recv().unwrap())
            .await
            .unwrap();
        assert!(matches!(memo.peek(&3), Peek::Running));
        slow.abort();
        let _ = slow.await;
        go.send(()).unwrap();
        let v = memo
            .get(&pool, 3, || Err(Fail::Internal("computed twice".into())))
            .await;
        assert_eq!(*v.unwrap(), 30);
        // A failure is not kept: the next asker computes again.
        assert!(
            memo.get(&pool, 2, || Err(Fail::Internal("down".into())))
                .await
                .is_err()
        );
        assert_eq!(*memo.get(&pool, 2, || Ok(9)).await.unwrap(), 9);
        // Cleared after a write.
        memo.clear();
        assert!(matches!(memo.peek(&1), Peek::Absent));
        // Keys come from requests: the memo stays bounded.
        for k in 0..1000 {
            memo.get(&pool, k, move || Ok(k)).await.unwrap();
        }
        assert!(memo.cells.lock().unwrap().len() <= Memo::<u32, u32>::CAP);
    }

    /// A long job whose caller stops waiting (a deadline, a closed
    /// connection) is told so, and stops early.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_long_job_is_told_when_nobody_waits_any_more() {
        let pool = Arc::new(Work::new(2, 3));
        let (seen, seen_rx) = std::sync::mpsc::channel::<bool>();
        let job = pool.run_long(2, move |threads, cancel| {
            assert_eq!(threads, 1, "one thread stays for short requests");
            let t = std::time::Instant::now();
            while !cancel.is_set() && t.elapsed() < std::time::Duration::from_secs(20) {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            seen.send(cancel.is_set()).unwrap();
        });
        assert!(
            tokio::time::timeout(std::time::Duration::from_millis(100), job)
                .await
                .is_err()
        );
        let told = tokio::task::spawn_blocking(move || seen_rx.recv().unwrap())
            .await
            .unwrap();
        assert!(told, "the job saw the cancel");
        // Short requests kept their thread meanwhile, and have both again.
        assert_eq!(pool.run(2, || 7).await.unwrap(), 7);
    }

    /// Found: background computations and uploads ran outside the work
    /// threads' bound. Every job goes through one queue; past its bound a
    /// job is shed at once (503), and a job holding every thread waits
    /// for all of them.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_work_queue_is_bounded_and_sheds_load() {
        let pool = Arc::new(Work::new(2, 3));
        let (go, go_rx) = std::sync::mpsc::channel::<()>();
        let go_rx = Arc::new(Mutex::new(go_rx));
        // Two jobs hold both threads, three wait: the queue is full.
        let mut held = Vec::new();
        for _ in 0..5 {
            let (pool, rx) = (pool.clone(), go_rx.clone());
            held.push(tokio::spawn(async move {
                pool.run(1, move || rx.lock().unwrap().recv().unwrap())
                    .await
            }));
        }
        while pool.waiting.load(Ordering::SeqCst) < 3 {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        let shed = pool.run(1, || ()).await;
        assert!(
            matches!(&shed, Err(Fail::Busy(_))),
            "{:?}",
            shed.as_ref().err().map(Fail::detail)
        );
        let res = shed.unwrap_err().json();
        assert_eq!(res.status(), axum::http::StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(res.headers()[axum::http::header::RETRY_AFTER], "5");
        // A memo's background computation is a job like any other.
        let memo: Memo<u32, u32> = Memo::default();
        assert!(matches!(
            memo.get(&pool, 1, || Ok(1)).await,
            Err(Fail::Busy(_))
        ));
        for _ in 0..5 {
            go.send(()).unwrap();
        }
        for h in held {
            h.await.unwrap().unwrap();
        }
        // Empty again: a job using both threads runs.
        assert_eq!(pool.run(2, || 7).await.unwrap(), 7);
        assert_eq!(*memo.get(&pool, 1, || Ok(1)).await.unwrap(), 1);
    }
}
