//! The PostgreSQL store: the same tables and meaning as the SQLite one
//! (docs/store.md), for many harvest processes on many machines writing
//! one store. Batches are transactions; the change mark is taken under a
//! transaction-scoped advisory lock, so marks grow in commit order and an
//! index update that read up to a mark never misses a batch committed
//! with a smaller one.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use postgres::{Client, NoTls, Row, Transaction};

use crate::{
    Attempt, CrawlSites, ImportMark, NewRun, Origin, Previous, Result, RunId, SiteHistory, Source,
    Stats, Store, StoreError, Version, VersionOp, content_hash,
};

/// Migrations, in order; `botscope_schema.version` is the number applied.
const MIGRATIONS: &[&str] = &[
    include_str!("../schema/postgres/001.sql"),
    include_str!("../schema/postgres/002.sql"),
    include_str!("../schema/postgres/003.sql"),
    include_str!("../schema/postgres/004.sql"),
    include_str!("../schema/postgres/005.sql"),
    include_str!("../schema/postgres/006.sql"),
    concat!(
        include_str!("../schema/postgres/007.sql"),
        include_str!("../schema/postgres/crawl_sites_fill.sql")
    ),
    include_str!("../schema/postgres/008.sql"),
    include_str!("../schema/postgres/009.sql"),
];

/// The greatest change mark given: to a site's versions, or to a crawl's
/// sights.
const CHANGE_MARK: &str = "SELECT greatest(coalesce((SELECT max(changed) FROM sites), 0),
    coalesce((SELECT max(changed) FROM crawl_counts), 0))";

/// Makes the crawls' sites and counts again from the attempts.
pub(crate) const CRAWL_SITES_FILL: &str = include_str!("../schema/postgres/crawl_sites_fill.sql");

/// The PostgreSQL schema version this build writes.
pub const PG_SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// The advisory lock key of migrations and of the change mark
/// ("botscope" in ASCII, folded).
const LOCK_MIGRATE: i64 = 0x626f_7473_636f_7065;
const LOCK_MARK: i64 = LOCK_MIGRATE + 1;
/// The change mark of sites a batch changed, until its end takes the
/// next mark (never seen outside the batch's transaction).
const PENDING: i64 = -1;

/// Versions with their site, as the research index reads them.
const HISTORY: &str = "SELECT s.host, s.rank, v.url, v.first_seen, v.last_seen, v.hash, b.content,
        v.content_type, v.source, {SIGHTS}, v.absent
    FROM sites s JOIN versions v ON v.site_id = s.id JOIN bodies b ON b.hash = v.hash";

/// The [`HISTORY`] column of a site's crawl captures (see
/// [`crate::sights_of`]), asked only of a store that imported a crawl.
const SIGHTS: &str = "(SELECT string_agg(c.crawl || E'\\t' || c.time || E'\\t' || c.found::int,
        E'\\n')
    FROM crawl_sites c WHERE c.site_id = s.id)";

/// The columns of [`Previous`], read by [`previous_row`].
const PREVIOUS: &str = "SELECT host, last_attempt, etag, last_modified, has_copy,
        unreachable_since, retry_at";

fn previous_row(r: &Row) -> (String, Previous) {
    (
        r.get(0),
        Previous {
            last_attempt: r.get(1),
            etag: r.get(2),
            last_modified: r.get(3),
            has_copy: r.get(4),
            unreachable_since: r.get(5),
            retry_at: r.get(6),
        },
    )
}

/// True when `db` names a PostgreSQL store (`postgres://…`,
/// `postgresql://…`) rather than an SQLite file.
pub fn is_postgres_url(db: &str) -> bool {
    let lower = db.get(..13).unwrap_or(db).to_ascii_lowercase();
    lower.starts_with("postgres://") || lower.starts_with("postgresql://")
}

/// The URL with its password replaced by `***`, for messages.
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let (auth, host) = match rest.split_once('@') {
        Some((a, h)) if !a.contains('/') => (a, h),
        _ => return url.to_owned(),
    };
    match auth.split_once(':') {
        Some((user, _)) => format!("{scheme}://{user}:***@{host}"),
        None => url.to_owned(),
    }
}

/// A store in a PostgreSQL database.
pub struct PgStore {
    /// `None` only while the store is dropped.
    client: Mutex<Option<Client>>,
    /// How to connect again when the connection is lost.
    config: Box<postgres::Config>,
    name: String,
}

/// The connection, locked.
pub(crate) struct ClientGuard<'a>(std::sync::MutexGuard<'a, Option<Client>>);

impl std::ops::Deref for ClientGuard<'_> {
    type Target = Client;
    fn deref(&self) -> &Client {
        self.0
            .as_ref()
            .expect("the connection lives as long as the store")
    }
}

impl std::ops::DerefMut for ClientGuard<'_> {
    fn deref_mut(&mut self) -> &mut Client {
        self.0
            .as_mut()
            .expect("the connection lives as long as the store")
    }
}

impl Drop for PgStore {
    fn drop(&mut self) {
        // Closing the connection blocks on the driver's runtime too.
        let c = self
            .client
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        crate::pg_blocking(move || drop(c));
    }
}

/// Text PostgreSQL can hold: NUL bytes become U+FFFD.
fn text(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains('\0') {
        std::borrow::Cow::Owned(s.replace('\0', "\u{fffd}"))
    } else {
        std::borrow::Cow::Borrowed(s)
    }
}

fn opt_text(s: &Option<String>) -> Option<std::borrow::Cow<'_, str>> {
    s.as_deref().map(text)
}

impl PgStore {
    /// Connects to `url` and migrates the database to the current schema
    /// (creating the tables in an empty database).
    pub fn open(url: &str) -> Result<PgStore> {
        let s = Self::connect(url)?;
        s.setup(true)?;
        Ok(s)
    }

    /// Connects for reading; the schema must be current.
    pub fn open_read(url: &str) -> Result<PgStore> {
        let s = Self::connect(url)?;
        s.setup(false)?;
        Ok(s)
    }

    fn connect(url: &str) -> Result<PgStore> {
        let name = redact_url(url);
        let mut config: postgres::Config = url.parse().map_err(|e| StoreError::Db {
            path: name.clone(),
            detail: format!("not a PostgreSQL URL: {e}"),
        })?;
        if config.get_application_name().is_none() {
            config.application_name("botscope");
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(std::time::Duration::from_secs(10));
        }
        let client = config.connect(NoTls).map_err(|e| StoreError::Db {
            path: name.clone(),
            detail: format!("cannot connect: {}", describe(&e)),
        })?;
        Ok(PgStore {
            client: Mutex::new(Some(client)),
            config: Box::new(config),
            name,
        })
    }

    /// The URL, its password hidden.
    pub fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn err(&self, e: postgres::Error) -> StoreError {
        StoreError::Db {
            path: self.name.clone(),
            detail: describe(&e),
        }
    }

    /// The connection, connected again first when it was lost (a server
    /// restarted): the statement in progress then failed, and the caller's
    /// next one goes through. When the server is still away, the old
    /// connection stays and its statements fail with why.
    pub(crate) fn client(&self) -> ClientGuard<'_> {
        let mut g = self.client.lock().unwrap_or_else(|e| e.into_inner());
        if g.as_ref().is_some_and(Client::is_closed)
            && let Ok(fresh) = self.config.connect(NoTls)
        {
            // The old connection's close blocks on the driver's runtime.
            let old = g.replace(fresh);
            crate::pg_blocking(move || drop(old));
        }
        ClientGuard(g)
    }

    fn setup(&self, write: bool) -> Result<()> {
        let mut c = self.client();
        let exists: bool = c
            .query_one("SELECT to_regclass('botscope_schema') IS NOT NULL", &[])
            .map_err(|e| self.err(e))?
            .get(0);
        let version: i64 = if exists {
            c.query_one("SELECT version FROM botscope_schema", &[])
                .map_err(|e| self.err(e))?
                .get(0)
        } else {
            0
        };
        if version > PG_SCHEMA_VERSION {
            return Err(StoreError::TooNew {
                path: self.name.clone(),
                found: version,
                known: PG_SCHEMA_VERSION,
            });
        }
        if !write {
            if version < PG_SCHEMA_VERSION {
                return Err(StoreError::Db {
                    path: self.name.clone(),
                    detail: if version == 0 {
                        "no botscope store in this database (a harvest, import or `store copy` makes one)".into()
                    } else {
                        format!(
                            "schema version {version}, older than {PG_SCHEMA_VERSION}: open it for writing once to migrate"
                        )
                    },
                });
            }
            return Ok(());
        }
        if version == PG_SCHEMA_VERSION {
            return Ok(());
        }
        // One migrator at a time (workers start together).
        let mut tx = c.transaction().map_err(|e| self.err(e))?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&LOCK_MIGRATE])
            .map_err(|e| self.err(e))?;
        tx.batch_execute("CREATE TABLE IF NOT EXISTS botscope_schema (version BIGINT NOT NULL)")
            .map_err(|e| self.err(e))?;
        let now: Option<i64> = tx
            .query_opt("SELECT version FROM botscope_schema", &[])
            .map_err(|e| self.err(e))?
            .map(|r| r.get(0));
        if now.is_none() {
            tx.execute("INSERT INTO botscope_schema(version) VALUES (0)", &[])
                .map_err(|e| self.err(e))?;
        }
        for (i, m) in MIGRATIONS
            .iter()
            .enumerate()
            .skip(now.unwrap_or(0) as usize)
        {
            tx.batch_execute(m).map_err(|e| self.err(e))?;
            tx.execute(
                "UPDATE botscope_schema SET version = $1",
                &[&(i as i64 + 1)],
            )
            .map_err(|e| self.err(e))?;
        }
        tx.commit().map_err(|e| self.err(e))
    }

    /// Records a batch of attempts in one transaction, as
    /// [`Store::record`] does, and says for each whether it stored content
    /// other than the version in force before it (the file changed).
    pub fn record_batch(&self, run: Option<RunId>, batch: &[Attempt]) -> Result<Vec<bool>> {
        self.record_batch_marked(run, batch, None)
    }

    /// [`PgStore::record_batch`], and where an import stands in the same
    /// transaction.
    fn record_batch_marked(
        &self,
        run: Option<RunId>,
        batch: &[Attempt],
        import: Option<&ImportMark>,
    ) -> Result<Vec<bool>> {
        if batch.is_empty() && import.is_none() {
            return Ok(Vec::new());
        }
        let mut c = self.client();
        // The bodies first, once each, in a statement of their own and in
        // hash order: stored content is never wrong to keep, and writers
        // that store the same new file at once wait for each other only
        // for this statement, never in a cycle.
        // An absence holds the empty body.
        let mut bodies: Vec<([u8; 32], &[u8])> = batch
            .iter()
            .filter_map(|a| match (a.body.as_deref(), a.absence()) {
                (Some(b), _) => Some((content_hash(b), b)),
                (None, Some(_)) => Some((content_hash(b""), &b""[..])),
                (None, None) => None,
            })
            .collect();
        bodies.sort_unstable_by_key(|b| b.0);
        bodies.dedup_by(|a, b| a.0 == b.0);
        if !bodies.is_empty() {
            let bh: Vec<&[u8]> = bodies.iter().map(|(h, _)| &h[..]).collect();
            let bsize: Vec<i64> = bodies.iter().map(|(_, b)| b.len() as i64).collect();
            let bcontent: Vec<&[u8]> = bodies.iter().map(|(_, b)| *b).collect();
            c.execute(
                "INSERT INTO bodies(hash, size, content)
                 SELECT * FROM unnest($1::bytea[], $2::bigint[], $3::bytea[])
                 ON CONFLICT DO NOTHING",
                &[&bh, &bsize, &bcontent],
            )
            .map_err(|e| self.err(e))?;
        }
        let mut tx = c.transaction().map_err(|e| self.err(e))?;
        // A crawl's capture changes the crawl's sights (marked on the
        // crawl below); its site changes only with its versions.
        let crawl: Option<String> = match run {
            None => None,
            Some(id) => tx
                .query_opt("SELECT crawl FROM runs WHERE id = $1", &[&id])
                .map_err(|e| self.err(e))?
                .and_then(|r| r.get::<_, Option<String>>(0)),
        };
        let crawl_run = crawl.as_deref();
        let mut new_to_crawl = 0i64;
        // Runs of distinct hosts, in order: a host twice in a batch has its
        // attempts recorded one after the other. The sites they change are
        // marked [`PENDING`] until the end.
        let mut changed = Vec::with_capacity(batch.len());
        let mut sites = Vec::with_capacity(batch.len());
        let mut parts: Vec<Vec<&Attempt>> = vec![Vec::new()];
        let mut hosts = HashSet::new();
        for a in batch {
            if !hosts.insert(a.host.as_str()) {
                parts.push(Vec::new());
                hosts.clear();
                hosts.insert(a.host.as_str());
            }
            if let Some(part) = parts.last_mut() {
                part.push(a);
            }
        }
        for part in &parts {
            record_set(
                &mut tx,
                run,
                crawl_run,
                part,
                &mut changed,
                &mut sites,
                &mut new_to_crawl,
            )
            .map_err(|e| self.err(e))?;
        }
        // The crawl's span and its sites new to it, once a batch.
        let span = batch
            .iter()
            .map(|a| a.time)
            .min()
            .zip(batch.iter().map(|a| a.time).max());
        if let (Some(c), Some((first, last))) = (crawl_run, span) {
            tx.execute(
                "INSERT INTO crawl_counts(crawl, first, last, sites) VALUES ($1, $2, $3, $4)
                 ON CONFLICT (crawl) DO UPDATE SET
                    first = least(crawl_counts.first, EXCLUDED.first),
                    last = greatest(crawl_counts.last, EXCLUDED.last),
                    sites = crawl_counts.sites + EXCLUDED.sites",
                &[&c, &first, &last, &new_to_crawl],
            )
            .map_err(|e| self.err(e))?;
        }
        // Marks in commit order: the next mark is taken under a lock held
        // until the commit, so writers run side by side until here and a
        // batch that commits later always has a greater mark.
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&LOCK_MARK])
            .map_err(|e| self.err(e))?;
        // From a counter, not the sites' greatest mark: a batch that
        // changes every site would find none left to count from.
        let mark: i64 = tx
            .query_one(
                "UPDATE change_marks SET mark = mark + 1 RETURNING mark",
                &[],
            )
            .map_err(|e| self.err(e))?
            .get(0);
        tx.execute(
            "UPDATE sites SET changed = $3 WHERE id = ANY($1) AND changed = $2",
            &[&sites, &PENDING, &mark],
        )
        .map_err(|e| self.err(e))?;
        if let (Some(c), Some(_)) = (crawl_run, span) {
            tx.execute(
                "UPDATE crawl_counts SET changed = $2 WHERE crawl = $1",
                &[&c, &mark],
            )
            .map_err(|e| self.err(e))?;
        }
        if let Some(m) = import {
            tx.execute(
                "INSERT INTO imports(name, crawl, run_id, records, robots, finished)
                 VALUES ($1, $2, $3, $4, $5, $6)
                 ON CONFLICT (name) DO UPDATE SET crawl = excluded.crawl,
                    run_id = excluded.run_id, records = excluded.records,
                    robots = excluded.robots, finished = excluded.finished",
                &[
                    &m.name,
                    &m.crawl,
                    &run,
                    &(m.records as i64),
                    &(m.robots as i64),
                    &m.finished,
                ],
            )
            .map_err(|e| self.err(e))?;
        }
        tx.commit().map_err(|e| self.err(e))?;
        Ok(changed)
    }

    /// What the store remembers of these hosts (those it knows), for
    /// their next fetch: [`Store::previous`] for one batch.
    pub fn previous_of(&self, hosts: &[&str]) -> Result<HashMap<String, Previous>> {
        let rows = self
            .client()
            .query(
                &format!("{PREVIOUS} FROM sites WHERE host = ANY($1)"),
                &[&hosts],
            )
            .map_err(|e| self.err(e))?;
        Ok(rows.iter().map(previous_row).collect())
    }

    /// Runs a [`HISTORY`] query ordered by host, handing each site's
    /// versions to `f` together.
    fn histories(
        &self,
        tx: &mut Transaction<'_>,
        tail: &str,
        args: &[&(dyn postgres::types::ToSql + Sync)],
        f: &mut dyn FnMut(SiteHistory) -> Result<()>,
    ) -> Result<()> {
        let crawled: bool = tx
            .query_one(
                "SELECT EXISTS(SELECT 1 FROM runs WHERE crawl IS NOT NULL)",
                &[],
            )
            .map_err(|e| self.err(e))?
            .get(0);
        let sql = format!(
            "{} {tail}",
            HISTORY.replace("{SIGHTS}", if crawled { SIGHTS } else { "NULL::text" })
        );
        let rows = tx
            .query_raw(&sql, args.iter().copied())
            .map_err(|e| self.err(e))?;
        let mut rows = rows;
        let mut cur: Option<SiteHistory> = None;
        use postgres::fallible_iterator::FallibleIterator;
        while let Some(r) = rows.next().map_err(|e| self.err(e))? {
            let host: String = r.get(0);
            let v = Version {
                host: host.clone(),
                url: r.get(2),
                first_seen: r.get(3),
                last_seen: r.get(4),
                hash: self.hash(&r, 5)?,
                body: r.get(6),
                content_type: r.get(7),
                origin: None,
                source: Source::from_name(r.get::<_, &str>(8)),
                absent: r
                    .get::<_, Option<&str>>(10)
                    .and_then(crate::Absence::from_name),
            };
            if cur.as_ref().is_some_and(|c| c.host != host) {
                f(cur.take().expect("checked"))?;
            }
            let rank: Option<i64> = r.get(1);
            if cur.is_none() {
                let listed: Option<&str> = r.get(9);
                cur = Some(SiteHistory {
                    host,
                    rank: rank.map(|r| r.max(0) as u64),
                    versions: Vec::new(),
                    sights: crate::sights_of(listed),
                });
            }
            cur.as_mut().expect("set").versions.push(v);
        }
        if let Some(c) = cur {
            f(c)?;
        }
        Ok(())
    }

    /// A read-only transaction that sees one snapshot throughout.
    fn snapshot<'c>(&self, c: &'c mut Client) -> Result<Transaction<'c>> {
        c.build_transaction()
            .isolation_level(postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .map_err(|e| self.err(e))
    }

    fn hash(&self, r: &Row, i: usize) -> Result<[u8; 32]> {
        let h: Vec<u8> = r.get(i);
        h.try_into().map_err(|_| StoreError::Corrupt {
            path: self.name.clone(),
            detail: "a content hash that is not 32 bytes".into(),
        })
    }
}

/// The server's message and detail, or the client's error.
fn describe(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => match db.detail() {
            Some(d) => format!("{} ({d})", db.message()),
            None => db.message().to_owned(),
        },
        None => {
            let mut s = e.to_string();
            let mut src = std::error::Error::source(e);
            while let Some(x) = src {
                s.push_str(": ");
                s.push_str(&x.to_string());
                src = x.source();
            }
            s
        }
    }
}

fn i(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Records `batch` (distinct hosts) in `tx` with a few set statements
/// rather than a few per attempt: the sites, the bodies, the attempts,
/// the versions in force around each attempt, then the versions and the
/// sites updated. Versions as in SQLite: the one in force continues when
/// the content is the same; else the next one may start earlier; else a
/// new one. Says for each attempt whether it stored content other than
/// the version in force before it.
/// A version (id and content hash) in force at some time, if any.
type VersionAt = Option<(i64, Vec<u8>)>;

fn record_set(
    tx: &mut Transaction<'_>,
    run: Option<RunId>,
    crawl: Option<&str>,
    batch: &[&Attempt],
    changed: &mut Vec<bool>,
    sites: &mut Vec<i64>,
    new_to_crawl: &mut i64,
) -> std::result::Result<(), postgres::Error> {
    let mark = PENDING;
    let owned = |s: &str| text(s).into_owned();
    let owned_opt = |s: &Option<String>| opt_text(s).map(std::borrow::Cow::into_owned);
    // The sites.
    let hosts: Vec<String> = batch.iter().map(|a| owned(&a.host)).collect();
    let ranks: Vec<Option<i64>> = batch.iter().map(|a| a.rank.map(i)).collect();
    let times: Vec<i64> = batch.iter().map(|a| a.time).collect();
    let ids: HashMap<String, i64> = tx
        .query(
            "INSERT INTO sites(host, rank, added)
             SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[])
             ON CONFLICT (host) DO UPDATE SET rank = coalesce(EXCLUDED.rank, sites.rank),
                changed = CASE WHEN EXCLUDED.rank IS NOT NULL
                               AND EXCLUDED.rank IS DISTINCT FROM sites.rank
                               AND sites.has_copy THEN $4 ELSE sites.changed END
             RETURNING host, id",
            &[&hosts, &ranks, &times, &mark],
        )?
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    let site: Vec<i64> = hosts.iter().map(|h| ids[h]).collect();
    // The bodies are stored (by the caller).
    let hashes: Vec<Option<[u8; 32]>> = batch
        .iter()
        .map(|a| a.body.as_ref().map(|b| content_hash(b)))
        .collect();
    // The attempts.
    let hash_col: Vec<Option<Vec<u8>>> = hashes.iter().map(|h| h.map(|h| h.to_vec())).collect();
    let col = |f: fn(&Attempt) -> &Option<String>| -> Vec<Option<String>> {
        batch.iter().map(|a| owned_opt(f(a))).collect()
    };
    tx.execute(
        "INSERT INTO attempts(run_id, site_id, time, duration_ms, url, redirects, address, status,
            content_type, cache_control, expires, retry_after, last_modified, etag, bytes,
            truncated, error_class, error, outcome, reason, expires_in, body_hash)
         SELECT $1, * FROM unnest($2::bigint[], $3::bigint[], $4::bigint[], $5::text[],
            $6::text[], $7::text[], $8::int[], $9::text[], $10::text[], $11::text[],
            $12::text[], $13::text[], $14::text[], $15::bigint[], $16::bool[], $17::text[],
            $18::text[], $19::text[], $20::text[], $21::bigint[], $22::bytea[])",
        &[
            &run,
            &site,
            &times,
            &batch.iter().map(|a| i(a.duration_ms)).collect::<Vec<_>>(),
            &batch.iter().map(|a| owned(&a.url)).collect::<Vec<_>>(),
            &batch
                .iter()
                .map(|a| {
                    owned(&serde_json::to_string(&a.redirects).unwrap_or_else(|_| "[]".into()))
                })
                .collect::<Vec<_>>(),
            &col(|a| &a.address),
            &batch
                .iter()
                .map(|a| a.status.map(i32::from))
                .collect::<Vec<_>>(),
            &col(|a| &a.headers.content_type),
            &col(|a| &a.headers.cache_control),
            &col(|a| &a.headers.expires),
            &col(|a| &a.headers.retry_after),
            &col(|a| &a.headers.last_modified),
            &col(|a| &a.headers.etag),
            &batch.iter().map(|a| i(a.bytes)).collect::<Vec<_>>(),
            &batch.iter().map(|a| a.truncated).collect::<Vec<_>>(),
            &col(|a| &a.error_class),
            &col(|a| &a.error),
            &batch.iter().map(|a| owned(&a.outcome)).collect::<Vec<_>>(),
            &batch.iter().map(|a| owned(&a.reason)).collect::<Vec<_>>(),
            &batch
                .iter()
                .map(|a| a.expires_in.map(i))
                .collect::<Vec<_>>(),
            &hash_col,
        ],
    )?;
    // The crawl's last capture of each site (at one second, one that
    // brought a file); the rows inserted are the sites new to it.
    if let Some(c) = crawl {
        let found: Vec<bool> = hashes.iter().map(Option::is_some).collect();
        for r in tx.query(
            "INSERT INTO crawl_sites(crawl, site_id, time, found)
             SELECT $1, * FROM unnest($2::bigint[], $3::bigint[], $4::bool[])
             ON CONFLICT (site_id, crawl) DO UPDATE SET time = EXCLUDED.time, found = EXCLUDED.found
                WHERE EXCLUDED.time > crawl_sites.time
                   OR (EXCLUDED.time = crawl_sites.time AND EXCLUDED.found AND NOT crawl_sites.found)
             RETURNING xmax = 0",
            &[&c, &site, &times, &found],
        )? {
            *new_to_crawl += i64::from(r.get::<_, bool>(0));
        }
    }
    // The versions in force at each attempt with a body or a 304, and the
    // next ones.
    // Each attempt's key: its body's hash, or the site's absence.
    let absent: Vec<Option<crate::Absence>> = batch
        .iter()
        .map(|a| a.absence().filter(|_| a.body.is_none()))
        .collect();
    let asks: Vec<usize> = (0..batch.len())
        .filter(|&k| hashes[k].is_some() || absent[k].is_some() || batch[k].status == Some(304))
        .collect();
    let mut around: HashMap<usize, (VersionAt, VersionAt)> = HashMap::new();
    if !asks.is_empty() {
        let ks: Vec<i32> = asks.iter().map(|&k| k as i32).collect();
        let ss: Vec<i64> = asks.iter().map(|&k| site[k]).collect();
        let ts: Vec<i64> = asks.iter().map(|&k| times[k]).collect();
        // A user's submission is a stream of its own: it never continues,
        // moves or interrupts the versions fetched from the site.
        let subs: Vec<bool> = asks
            .iter()
            .map(|&k| batch[k].source == Source::Submitted)
            .collect();
        for r in tx.query(
            "SELECT u.k, b.id, b.hash, a.id, a.hash, b.absent, a.absent
             FROM unnest($1::int[], $2::bigint[], $3::bigint[], $4::bool[]) AS u(k, site, t, sub)
             LEFT JOIN LATERAL (SELECT id, hash, absent FROM versions
                 WHERE site_id = u.site AND first_seen <= u.t
                    AND (source = 'submitted') = u.sub
                 ORDER BY first_seen DESC, id DESC LIMIT 1) b ON true
             LEFT JOIN LATERAL (SELECT id, hash, absent FROM versions
                 WHERE site_id = u.site AND first_seen > u.t
                    AND (source = 'submitted') = u.sub
                 ORDER BY first_seen ASC, id ASC LIMIT 1) a ON true",
            &[&ks, &ss, &ts, &subs],
        )? {
            let k = r.get::<_, i32>(0) as usize;
            let before = r
                .get::<_, Option<i64>>(1)
                .map(|id| (id, crate::version_key(r.get(2), r.get(5))));
            let after = r
                .get::<_, Option<i64>>(3)
                .map(|id| (id, crate::version_key(r.get(4), r.get(6))));
            around.insert(k, (before, after));
        }
    }
    let mut new_content = vec![false; batch.len()];
    let (mut seen_id, mut seen_t) = (Vec::new(), Vec::new());
    let (mut earlier_id, mut earlier_t) = (Vec::new(), Vec::new());
    let (mut nv_site, mut nv_hash, mut nv_url, mut nv_ct, mut nv_t, mut nv_src) = (
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
        Vec::new(),
    );
    let mut nv_absent: Vec<Option<String>> = Vec::new();
    let mut changed_sites = Vec::new();
    for &k in &asks {
        let a = batch[k];
        let (before, after) = around.remove(&k).unwrap_or((None, None));
        let near = before.as_ref().map(|(id, h)| (*id, &h[..]));
        let op = crate::next_version(
            before.as_ref().map(|(id, h)| (*id, &h[..])),
            after.as_ref().map(|(id, h)| (*id, &h[..])),
            match (&hashes[k], absent[k]) {
                (Some(h), _) => Some(&h[..]),
                (None, Some(x)) => Some(x.key()),
                (None, None) => None,
            },
            a.status,
        );
        match op {
            VersionOp::Keep => {}
            VersionOp::Continue(id) => {
                seen_id.push(id);
                seen_t.push(a.time);
            }
            VersionOp::StartEarlier(id) => {
                earlier_id.push(id);
                earlier_t.push(a.time);
            }
            VersionOp::Start { .. } => {
                nv_site.push(site[k]);
                nv_hash.push(hashes[k].unwrap_or_else(|| content_hash(b"")).to_vec());
                nv_absent.push(absent[k].map(|x| x.as_str().to_owned()));
                nv_url.push(owned(&a.url));
                nv_ct.push(if hashes[k].is_some() {
                    owned_opt(&a.headers.content_type)
                } else {
                    None
                });
                nv_t.push(a.time);
                nv_src.push(a.source.as_str().to_owned());
            }
        }
        if crate::marks_index(op, hashes[k].is_none(), near) {
            changed_sites.push(site[k]);
        }
        new_content[k] = op.new_content();
    }
    if !seen_id.is_empty() {
        tx.execute(
            "UPDATE versions v SET last_seen = greatest(v.last_seen, u.t)
             FROM unnest($1::bigint[], $2::bigint[]) AS u(id, t) WHERE v.id = u.id",
            &[&seen_id, &seen_t],
        )?;
    }
    if !earlier_id.is_empty() {
        tx.execute(
            "UPDATE versions v SET first_seen = u.t
             FROM unnest($1::bigint[], $2::bigint[]) AS u(id, t) WHERE v.id = u.id",
            &[&earlier_id, &earlier_t],
        )?;
    }
    if !nv_site.is_empty() {
        tx.execute(
            "INSERT INTO versions(site_id, hash, url, content_type, first_seen, last_seen, source,
                    absent)
             SELECT s, h, u, c, t, t, src, ab
             FROM unnest($1::bigint[], $2::bytea[], $3::text[], $4::text[], $5::bigint[],
                         $6::text[], $7::text[]) AS x(s, h, u, c, t, src, ab)",
            &[
                &nv_site, &nv_hash, &nv_url, &nv_ct, &nv_t, &nv_src, &nv_absent,
            ],
        )?;
    }
    if !changed_sites.is_empty() {
        tx.execute(
            "UPDATE sites SET changed = $2 WHERE id = ANY($1)",
            &[&changed_sites, &mark],
        )?;
    }
    // The sites' last attempt (a later one already recorded stays).
    tx.execute(
        "UPDATE sites s SET
            last_attempt = u.t, last_outcome = u.outcome, last_status = u.status,
            last_error_class = u.ec,
            unreachable_since = CASE WHEN u.unreach THEN coalesce(s.unreachable_since, u.t)
                                     ELSE NULL END,
            has_copy = s.has_copy OR u.body,
            etag = CASE WHEN u.body THEN u.etag ELSE s.etag END,
            last_modified = CASE WHEN u.body THEN u.lm ELSE s.last_modified END,
            retry_at = u.retry
         FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::int[], $5::text[], $6::bool[],
                     $7::bool[], $8::text[], $9::text[], $10::bigint[], $11::bool[])
              AS u(id, t, outcome, status, ec, unreach, body, etag, lm, retry, sub)
         WHERE s.id = u.id AND NOT u.sub
            AND (s.last_attempt IS NULL OR s.last_attempt <= u.t)",
        &[
            &site,
            &times,
            &batch.iter().map(|a| owned(&a.outcome)).collect::<Vec<_>>(),
            &batch
                .iter()
                .map(|a| a.status.map(i32::from))
                .collect::<Vec<_>>(),
            &col(|a| &a.error_class),
            &batch.iter().map(|a| a.unreachable()).collect::<Vec<_>>(),
            &hashes.iter().map(Option::is_some).collect::<Vec<_>>(),
            &col(|a| &a.headers.etag),
            &col(|a| &a.headers.last_modified),
            &batch
                .iter()
                .map(|a| {
                    matches!(a.status, Some(429 | 503))
                        .then(|| a.time + i(a.expires_in.unwrap_or(0)))
                })
                .collect::<Vec<_>>(),
            // A submission says nothing of what the site serves.
            &batch
                .iter()
                .map(|a| a.source == Source::Submitted)
                .collect::<Vec<_>>(),
        ],
    )?;
    changed.extend(new_content);
    sites.extend(site);
    Ok(())
}

impl Store for PgStore {
    fn begin_run(&mut self, run: &NewRun) -> Result<RunId> {
        crate::check_run(run)?;
        let row = self
            .client()
            .query_one(
                "INSERT INTO runs(started, input, input_hash, user_agent, hosts, crawl)
                 VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
                &[
                    &run.started,
                    &text(&run.input),
                    &&run.input_hash[..],
                    &text(&run.user_agent),
                    &i(run.hosts),
                    &run.crawl,
                ],
            )
            .map_err(|e| self.err(e))?;
        Ok(row.get(0))
    }

    fn unfinished_run(&self, input_hash: &[u8; 32]) -> Result<Option<RunId>> {
        Ok(self
            .client()
            .query_opt(
                "SELECT id FROM runs WHERE input_hash = $1 AND finished IS NULL
                 ORDER BY id DESC LIMIT 1",
                &[&&input_hash[..]],
            )
            .map_err(|e| self.err(e))?
            .map(|r| r.get(0)))
    }

    fn finish_run(&mut self, run: RunId, finished: i64) -> Result<()> {
        self.client()
            .execute(
                "UPDATE runs SET finished = $2 WHERE id = $1",
                &[&run, &finished],
            )
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    fn hosts_done(&self, run: RunId) -> Result<HashSet<String>> {
        let rows = self
            .client()
            .query(
                "SELECT DISTINCT s.host FROM attempts a JOIN sites s ON s.id = a.site_id
                 WHERE a.run_id = $1",
                &[&run],
            )
            .map_err(|e| self.err(e))?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }

    fn record(&mut self, run: Option<RunId>, batch: &[Attempt]) -> Result<()> {
        self.record_batch(run, batch).map(drop)
    }

    fn record_import(
        &mut self,
        run: Option<RunId>,
        batch: &[Attempt],
        mark: &ImportMark,
    ) -> Result<()> {
        self.record_batch_marked(run, batch, Some(mark)).map(drop)
    }

    fn imports(&self) -> Result<HashMap<String, ImportMark>> {
        let rows = self
            .client()
            .query(
                "SELECT name, crawl, records, robots, finished FROM imports",
                &[],
            )
            .map_err(|e| self.err(e))?;
        Ok(rows
            .iter()
            .map(|r| {
                let m = ImportMark {
                    name: r.get(0),
                    crawl: r.get(1),
                    records: r.get::<_, i64>(2).max(0) as u64,
                    robots: r.get::<_, i64>(3).max(0) as u64,
                    finished: r.get(4),
                };
                (m.name.clone(), m)
            })
            .collect())
    }

    fn previous(&self) -> Result<HashMap<String, Previous>> {
        let rows = self
            .client()
            .query(&format!("{PREVIOUS} FROM sites"), &[])
            .map_err(|e| self.err(e))?;
        Ok(rows.iter().map(previous_row).collect())
    }

    fn stats(&self) -> Result<Stats> {
        let mut c = self.client();
        let schema_version: i64 = c
            .query_one("SELECT version FROM botscope_schema", &[])
            .map(|r| r.get::<_, i64>(0))
            .map_err(|e| self.err(e))?;
        Stats::gather(schema_version, |sql| {
            let rows = c.query(sql, &[]).map_err(|e| self.err(e))?;
            Ok(rows
                .iter()
                .map(|r| {
                    if r.len() > 1 {
                        (r.get::<_, Option<String>>(0), r.get::<_, i64>(1))
                    } else {
                        (None, r.get::<_, i64>(0))
                    }
                })
                .collect())
        })
    }

    fn each_version(&self, f: &mut dyn FnMut(Version) -> Result<()>) -> Result<()> {
        let mut c = self.client();
        let mut tx = self.snapshot(&mut c)?;
        let mut rows = tx
            .query_raw(
                "SELECT s.host, v.url, v.first_seen, v.last_seen, v.hash, b.content, v.content_type,
                        a.status, a.cache_control, a.expires, a.last_modified, a.etag,
                        a.retry_after, a.truncated, v.source, a.outcome
                 FROM versions v JOIN sites s ON s.id = v.site_id JOIN bodies b ON b.hash = v.hash
                 LEFT JOIN LATERAL (
                     SELECT * FROM attempts
                     WHERE site_id = v.site_id AND body_hash = v.hash
                     ORDER BY time, id LIMIT 1) a ON true
                 WHERE v.absent IS NULL
                 ORDER BY s.host, v.first_seen, v.id",
                std::iter::empty::<i64>(),
            )
            .map_err(|e| self.err(e))?;
        use postgres::fallible_iterator::FallibleIterator;
        while let Some(r) = rows.next().map_err(|e| self.err(e))? {
            let mut v = Version {
                host: r.get(0),
                url: r.get(1),
                first_seen: r.get(2),
                last_seen: r.get(3),
                hash: self.hash(&r, 4)?,
                body: r.get(5),
                content_type: r.get(6),
                origin: None,
                source: Source::from_name(r.get::<_, &str>(14)),
                absent: None,
            };
            let status: Option<i32> = r.get(7);
            if let Some(status) = status.and_then(|s| u16::try_from(s).ok()) {
                let mut headers = Vec::new();
                for (i, name) in (8..).zip(crate::ORIGIN_HEADERS) {
                    if let Some(value) = r.get::<_, Option<String>>(i) {
                        headers.push((name.to_owned(), value));
                    }
                }
                v.origin = Some(Origin {
                    status,
                    headers,
                    truncated: r.get::<_, Option<bool>>(13).unwrap_or(false),
                    outcome: r.get::<_, Option<String>>(15).unwrap_or_default(),
                });
            }
            f(v)?;
        }
        drop(rows);
        tx.commit().map_err(|e| self.err(e))
    }

    fn change_mark(&self) -> Result<i64> {
        Ok(self
            .client()
            .query_one(CHANGE_MARK, &[])
            .map_err(|e| self.err(e))?
            .get(0))
    }

    fn sites_changed(
        &self,
        mark: i64,
        f: &mut dyn FnMut(SiteHistory) -> Result<()>,
    ) -> Result<i64> {
        let mut c = self.client();
        let mut tx = self.snapshot(&mut c)?;
        let now: i64 = tx
            .query_one(CHANGE_MARK, &[])
            .map_err(|e| self.err(e))?
            .get(0);
        self.histories(
            &mut tx,
            "WHERE s.changed > $1 AND s.changed <= $2 ORDER BY s.host, v.first_seen, v.id",
            &[&mark, &now],
            f,
        )?;
        tx.commit().map_err(|e| self.err(e))?;
        Ok(now)
    }

    fn site(&self, host: &str) -> Result<Option<SiteHistory>> {
        let mut c = self.client();
        let mut tx = c.transaction().map_err(|e| self.err(e))?;
        let mut found = None;
        self.histories(
            &mut tx,
            "WHERE s.host = $1 ORDER BY v.first_seen, v.id",
            &[&host],
            &mut |h| {
                found = Some(h);
                Ok(())
            },
        )?;
        if found.is_none() {
            let rank: Option<Option<i64>> = tx
                .query_opt("SELECT rank FROM sites WHERE host = $1", &[&host])
                .map_err(|e| self.err(e))?
                .map(|r| r.get(0));
            found = rank.map(|rank| SiteHistory {
                host: host.to_owned(),
                rank: rank.map(|r| r.max(0) as u64),
                versions: Vec::new(),
                sights: Vec::new(),
            });
        }
        tx.commit().map_err(|e| self.err(e))?;
        Ok(found)
    }

    fn sites_known_at(&self, t: i64) -> Result<u64> {
        Ok(self
            .client()
            .query_one("SELECT count(*) FROM sites WHERE added <= $1", &[&t])
            .map_err(|e| self.err(e))?
            .get::<_, i64>(0)
            .max(0) as u64)
    }

    fn crawl_found(&self, crawl: &str, f: &mut dyn FnMut(&str, i64) -> Result<()>) -> Result<()> {
        use postgres::fallible_iterator::FallibleIterator;
        let mut c = self.client();
        let mut tx = self.snapshot(&mut c)?;
        // Hosts compared as bytes, the order of the index's dictionaries.
        let mut rows = tx
            .query_raw(
                "SELECT s.host, c.time FROM crawl_sites c JOIN sites s ON s.id = c.site_id
                 WHERE c.crawl = $1 AND c.found ORDER BY s.host COLLATE \"C\"",
                [&crawl as &(dyn postgres::types::ToSql + Sync)],
            )
            .map_err(|e| self.err(e))?;
        while let Some(r) = rows.next().map_err(|e| self.err(e))? {
            f(r.get::<_, &str>(0), r.get(1))?;
        }
        drop(rows);
        tx.commit().map_err(|e| self.err(e))
    }

    fn crawl_sites(&self, hosts: Option<&[String]>) -> Result<Vec<CrawlSites>> {
        let mut c = self.client();
        let mut out: Vec<CrawlSites> = c
            .query(
                "SELECT crawl, first, last, sites, changed FROM crawl_counts
                 ORDER BY crawl COLLATE \"C\"",
                &[],
            )
            .map_err(|e| self.err(e))?
            .iter()
            .map(|r| CrawlSites {
                crawl: r.get(0),
                first: r.get(1),
                last: r.get(2),
                sites: r.get::<_, i64>(3).max(0) as u64,
                changed: r.get(4),
                of_hosts: Vec::new(),
            })
            .collect();
        if let Some(hosts) = hosts {
            let pos: HashMap<&str, usize> = hosts
                .iter()
                .enumerate()
                .map(|(i, h)| (h.as_str(), i))
                .collect();
            let mut found = Vec::new();
            for chunk in hosts.chunks(10_000) {
                for row in c
                    .query(
                        "SELECT s.host, c.crawl FROM sites s JOIN crawl_sites c ON c.site_id = s.id
                         WHERE s.host = ANY($1)",
                        &[&chunk],
                    )
                    .map_err(|e| self.err(e))?
                {
                    if let Some(&i) = pos.get(row.get::<_, &str>(0)) {
                        found.push((i, row.get::<_, String>(1)));
                    }
                }
            }
            crate::restrict_to_hosts(&mut out, found);
        }
        Ok(out)
    }

    fn sites_added(&self, hosts: &[String]) -> Result<Vec<Option<i64>>> {
        let mut added: HashMap<String, i64> = HashMap::new();
        let mut c = self.client();
        for chunk in hosts.chunks(10_000) {
            for row in c
                .query(
                    "SELECT host, added FROM sites WHERE host = ANY($1)",
                    &[&chunk],
                )
                .map_err(|e| self.err(e))?
            {
                added.insert(row.get(0), row.get(1));
            }
        }
        Ok(hosts.iter().map(|h| added.get(h).copied()).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        assert!(is_postgres_url("postgres://u@h/db"));
        assert!(is_postgres_url("PostgreSQL://h/db"));
        assert!(!is_postgres_url("robots.db"));
        assert!(!is_postgres_url("postgres.db"));
        assert_eq!(
            redact_url("postgres://user:secret@host:5432/db"),
            "postgres://user:***@host:5432/db"
        );
        assert_eq!(
            redact_url("postgres://user@host/db"),
            "postgres://user@host/db"
        );
        assert_eq!(
            redact_url("postgres://host/db?x=@"),
            "postgres://host/db?x=@"
        );
    }
}

mod rows {
    //! Raw rows for `store copy`.

    use postgres::types::ToSql;

    use super::{PgStore, text};
    use crate::Result;
    use crate::copy::{Cell, Table, Ty};

    /// A value as the column's type takes it.
    fn param(c: &Cell, ty: Ty) -> Box<dyn ToSql + Sync> {
        match (c, ty) {
            (Cell::Null, Ty::Int) => Box::new(None::<i64>),
            (Cell::Null, Ty::Int32) => Box::new(None::<i32>),
            (Cell::Null, Ty::Text) => Box::new(None::<String>),
            (Cell::Null, Ty::Blob) => Box::new(None::<Vec<u8>>),
            (Cell::Null, Ty::Bool) => Box::new(None::<bool>),
            (Cell::Int(i), Ty::Int32) => Box::new(i32::try_from(*i).unwrap_or(i32::MAX)),
            (Cell::Int(i), Ty::Bool) => Box::new(*i != 0),
            (Cell::Int(i), _) => Box::new(*i),
            (Cell::Bool(b), Ty::Int | Ty::Int32) => Box::new(i64::from(*b)),
            (Cell::Bool(b), _) => Box::new(*b),
            (Cell::Text(s), Ty::Blob) => Box::new(s.as_bytes().to_vec()),
            (Cell::Text(s), _) => Box::new(text(s).into_owned()),
            (Cell::Blob(b), Ty::Text) => Box::new(text(&String::from_utf8_lossy(b)).into_owned()),
            (Cell::Blob(b), _) => Box::new(b.clone()),
        }
    }

    fn cells(t: &Table, r: &postgres::Row) -> Vec<Cell> {
        t.columns
            .iter()
            .enumerate()
            .map(|(i, (_, ty))| match ty {
                Ty::Int => r.get::<_, Option<i64>>(i).map_or(Cell::Null, Cell::Int),
                Ty::Int32 => r
                    .get::<_, Option<i32>>(i)
                    .map_or(Cell::Null, |v| Cell::Int(i64::from(v))),
                Ty::Text => r.get::<_, Option<String>>(i).map_or(Cell::Null, Cell::Text),
                Ty::Blob => r
                    .get::<_, Option<Vec<u8>>>(i)
                    .map_or(Cell::Null, Cell::Blob),
                Ty::Bool => r.get::<_, Option<bool>>(i).map_or(Cell::Null, Cell::Bool),
            })
            .collect()
    }

    impl PgStore {
        fn select(
            &self,
            t: &Table,
            filter: &str,
            args: &[Box<dyn ToSql + Sync>],
        ) -> Result<Vec<Vec<Cell>>> {
            let sql = format!("SELECT {} FROM {} {filter}", t.column_list(), t.name);
            let refs: Vec<&(dyn ToSql + Sync)> = args.iter().map(|b| &**b).collect();
            let rows = self.client().query(&sql, &refs).map_err(|e| self.err(e))?;
            Ok(rows.iter().map(|r| cells(t, r)).collect())
        }

        fn key_param(t: &Table, k: &Cell) -> Box<dyn ToSql + Sync> {
            param(k, t.columns[0].1)
        }

        pub(crate) fn rows_after(
            &self,
            t: &Table,
            after: Option<&Cell>,
            limit: usize,
        ) -> Result<Vec<Vec<Cell>>> {
            let key = t.key();
            let limit: Box<dyn ToSql + Sync> = Box::new(limit as i64);
            match after {
                None => self.select(t, &format!("ORDER BY {key} LIMIT $1"), &[limit]),
                Some(k) => self.select(
                    t,
                    &format!("WHERE {key} > $2 ORDER BY {key} LIMIT $1"),
                    &[limit, Self::key_param(t, k)],
                ),
            }
        }

        pub(crate) fn last_row(&self, t: &Table) -> Result<Option<Vec<Cell>>> {
            let key = t.key();
            Ok(self
                .select(t, &format!("ORDER BY {key} DESC LIMIT 1"), &[])?
                .pop())
        }

        pub(crate) fn row(&self, t: &Table, k: &Cell) -> Result<Option<Vec<Cell>>> {
            let key = t.key();
            Ok(self
                .select(t, &format!("WHERE {key} = $1"), &[Self::key_param(t, k)])?
                .pop())
        }

        pub(crate) fn count_up_to(&self, t: &Table, k: &Cell) -> Result<u64> {
            let sql = format!("SELECT count(*) FROM {} WHERE {} <= $1", t.name, t.key());
            let p = Self::key_param(t, k);
            Ok(self
                .client()
                .query_one(&sql, &[&*p])
                .map_err(|e| self.err(e))?
                .get::<_, i64>(0)
                .max(0) as u64)
        }

        pub(crate) fn derive(&mut self) -> Result<()> {
            let mut c = self.client();
            let mut tx = c.transaction().map_err(|e| self.err(e))?;
            tx.batch_execute(super::CRAWL_SITES_FILL)
                .map_err(|e| self.err(e))?;
            tx.commit().map_err(|e| self.err(e))
        }

        pub(crate) fn put_rows(&mut self, t: &Table, rows: &[Vec<Cell>]) -> Result<()> {
            let mut c = self.client();
            let mut tx = c.transaction().map_err(|e| self.err(e))?;
            let marks: Vec<String> = (1..=t.columns.len()).map(|i| format!("${i}")).collect();
            let sql = format!(
                "INSERT INTO {}({}) VALUES ({})",
                t.name,
                t.column_list(),
                marks.join(", ")
            );
            let st = tx.prepare(&sql).map_err(|e| self.err(e))?;
            for r in rows {
                let params: Vec<Box<dyn ToSql + Sync>> = r
                    .iter()
                    .zip(t.columns)
                    .map(|(c, (_, ty))| param(c, *ty))
                    .collect();
                let refs: Vec<&(dyn ToSql + Sync)> = params.iter().map(|b| &**b).collect();
                tx.execute(&st, &refs).map_err(|e| self.err(e))?;
            }
            if t.key() == "id" {
                // New rows after the copy take the next ids.
                tx.execute(
                    &format!(
                        "SELECT setval(pg_get_serial_sequence('{0}', 'id'), (SELECT max(id) FROM {0}))",
                        t.name
                    ),
                    &[],
                )
                .map_err(|e| self.err(e))?;
            }
            if t.name == "sites" {
                // Marks given after the copy follow the copied ones.
                tx.execute(
                    "UPDATE change_marks SET mark = greatest(mark,
                        (SELECT coalesce(max(changed), 0) FROM sites))",
                    &[],
                )
                .map_err(|e| self.err(e))?;
            }
            tx.commit().map_err(|e| self.err(e))
        }
    }
}
