//! The SQLite store.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, ErrorCode, OpenFlags, OptionalExtension, params};

use crate::{
    Attempt, CrawlSites, ImportMark, NewRun, Origin, Previous, Result, RunId, SiteHistory, Source,
    Stats, Store, StoreError, Version, VersionOp, content_hash,
};

/// Versions with their site, as the research index reads them.
const HISTORY: &str = "SELECT s.host, s.rank, v.url, v.first_seen, v.last_seen, v.hash, b.content,
        v.content_type, v.source, {SIGHTS}, v.absent
    FROM sites s JOIN versions v ON v.site_id = s.id JOIN bodies b ON b.hash = v.hash";

/// The [`HISTORY`] column of a site's crawl captures (see
/// [`crate::sights_of`]), asked only of a store that imported a crawl.
const SIGHTS: &str = "(SELECT group_concat(c.crawl || char(9) || c.time || char(9) || c.found,
        char(10))
    FROM crawl_sites c WHERE c.site_id = s.id)";

/// Migrations, in order; `PRAGMA user_version` is the number applied.
const MIGRATIONS: &[&str] = &[
    include_str!("../schema/sqlite/001.sql"),
    include_str!("../schema/sqlite/002.sql"),
    include_str!("../schema/sqlite/003.sql"),
    include_str!("../schema/sqlite/004.sql"),
    concat!(
        include_str!("../schema/sqlite/005.sql"),
        include_str!("../schema/sqlite/crawl_sites_fill.sql")
    ),
    include_str!("../schema/sqlite/006.sql"),
    include_str!("../schema/sqlite/007.sql"),
];

/// The greatest change mark given: to a site's versions, or to a crawl's
/// sights.
const CHANGE_MARK: &str = "SELECT max(coalesce((SELECT max(changed) FROM sites), 0),
    coalesce((SELECT max(changed) FROM crawl_counts), 0))";

/// Makes the crawls' sites and counts again from the attempts.
pub(crate) const CRAWL_SITES_FILL: &str = include_str!("../schema/sqlite/crawl_sites_fill.sql");

/// The schema version this build writes.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// A store in one SQLite file.
pub struct SqliteStore {
    conn: Connection,
    path: String,
}

fn classify(path: &str, e: rusqlite::Error) -> StoreError {
    let detail = e.to_string();
    match e.sqlite_error_code() {
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => StoreError::Locked {
            path: path.to_owned(),
        },
        Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => StoreError::Corrupt {
            path: path.to_owned(),
            detail,
        },
        _ => StoreError::Db {
            path: path.to_owned(),
            detail,
        },
    }
}

/// A path that exists and is not a regular file (a directory, a FIFO, a
/// device) refused in words before SQLite opens it: opening a FIFO would
/// wait for a writer, and SQLite's words for the others ("disk I/O
/// error", an old schema to migrate) mislead.
fn not_a_file(path: &Path, name: &str) -> Result<()> {
    match botscope_os::check_regular(path) {
        Err(e) if e.kind() == std::io::ErrorKind::InvalidInput => Err(StoreError::NotAFile {
            path: name.to_owned(),
            what: e.to_string(),
        }),
        _ => Ok(()),
    }
}

impl SqliteStore {
    /// [`Store::record`], and the import's mark in the same transaction.
    fn record_marked(
        &mut self,
        run: Option<RunId>,
        batch: &[Attempt],
        import: Option<&ImportMark>,
    ) -> Result<()> {
        if batch.is_empty() && import.is_none() {
            return Ok(());
        }
        let path = self.path.clone();

        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(|e| classify(&path, e))?;
        let mark: i64 = tx
            .query_row(CHANGE_MARK, [], |r| r.get::<_, i64>(0))
            .map_err(|e| classify(&path, e))?
            + 1;
        // A crawl's capture changes the crawl's sights (marked on the
        // crawl, once a batch); its site changes only with its versions.
        let crawl: Option<String> = match run {
            None => None,
            Some(id) => tx
                .query_row("SELECT crawl FROM runs WHERE id = ?1", params![id], |r| {
                    r.get(0)
                })
                .optional()
                .map_err(|e| classify(&path, e))?
                .flatten(),
        };
        // The crawl's span and its sites new to it, written once a batch.
        let mut span: Option<(i64, i64)> = None;
        let mut new_sites = 0i64;
        for a in batch {
            let new =
                record_one(&tx, run, a, mark, crawl.as_deref()).map_err(|e| classify(&path, e))?;
            if crawl.is_some() {
                new_sites += i64::from(new);
                span = Some(span.map_or((a.time, a.time), |(f, l)| (f.min(a.time), l.max(a.time))));
            }
        }
        if let (Some(c), Some((first, last))) = (&crawl, span) {
            tx.prepare_cached(
                "INSERT INTO crawl_counts(crawl, first, last, sites, changed)
                 VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT(crawl) DO UPDATE SET first = min(first, excluded.first),
                    last = max(last, excluded.last), sites = sites + excluded.sites,
                    changed = excluded.changed",
            )
            .and_then(|mut st| st.execute(params![c, first, last, new_sites, mark]))
            .map_err(|e| classify(&path, e))?;
        }
        if let Some(m) = import {
            tx.execute(
                "INSERT INTO imports(name, crawl, run_id, records, robots, finished)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT(name) DO UPDATE SET crawl = excluded.crawl,
                    run_id = excluded.run_id, records = excluded.records,
                    robots = excluded.robots, finished = excluded.finished",
                params![
                    m.name,
                    m.crawl,
                    run,
                    m.records as i64,
                    m.robots as i64,
                    m.finished
                ],
            )
            .map_err(|e| classify(&path, e))?;
        }
        tx.commit().map_err(|e| classify(&path, e))
    }

    /// Opens (or creates) a store for writing, migrating it to the current
    /// schema.
    pub fn open(path: &Path) -> Result<SqliteStore> {
        let name = path.display().to_string();
        not_a_file(path, &name)?;
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| classify(&name, e))?;
        let mut s = SqliteStore { conn, path: name };
        s.setup(true)?;
        Ok(s)
    }

    /// Opens an existing store for reading only.
    pub fn open_read(path: &Path) -> Result<SqliteStore> {
        let name = path.display().to_string();
        if !path.exists() {
            return Err(StoreError::Missing { path: name });
        }
        not_a_file(path, &name)?;
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| classify(&name, e))?;
        let mut s = SqliteStore { conn, path: name };
        s.setup(false)?;
        Ok(s)
    }

    fn err(&self, e: rusqlite::Error) -> StoreError {
        classify(&self.path, e)
    }

    fn setup(&mut self, write: bool) -> Result<()> {
        self.conn
            .busy_timeout(Duration::from_secs(2))
            .map_err(|e| self.err(e))?;
        // Reading the schema version is the first access: a file that is
        // not a database fails here.
        let version: i64 = self
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(|e| self.err(e))?;
        let _: i64 = self
            .conn
            .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
            .map_err(|e| self.err(e))?;
        if version > SCHEMA_VERSION {
            return Err(StoreError::TooNew {
                path: self.path.clone(),
                found: version,
                known: SCHEMA_VERSION,
            });
        }
        if !write {
            if version < SCHEMA_VERSION {
                return Err(StoreError::Db {
                    path: self.path.clone(),
                    detail: format!(
                        "schema version {version}, older than {SCHEMA_VERSION}: open it for writing once (any harvest or import) to migrate"
                    ),
                });
            }
            return Ok(());
        }
        let mode: String = self
            .conn
            .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
            .map_err(|e| self.err(e))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(StoreError::Db {
                path: self.path.clone(),
                detail: format!("cannot use write-ahead logging (journal mode {mode})"),
            });
        }
        // A writer's pages: 128 MB of cache, and the log checkpointed every
        // 64 MB instead of 4 (a page that many batches touch is written
        // back once: imports go 14% faster, BENCHMARKS.md).
        self.conn
            .execute_batch(
                "PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON; PRAGMA cache_size=-131072;
                 PRAGMA wal_autocheckpoint=16384;",
            )
            .map_err(|e| self.err(e))?;
        for (i, m) in MIGRATIONS.iter().enumerate().skip(version as usize) {
            let tx = self
                .conn
                .transaction()
                .map_err(|e| classify(&self.path, e))?;
            tx.execute_batch(m).map_err(|e| classify(&self.path, e))?;
            tx.pragma_update(None, "user_version", i as i64 + 1)
                .map_err(|e| classify(&self.path, e))?;
            tx.commit().map_err(|e| classify(&self.path, e))?;
        }
        Ok(())
    }
}

/// Records one attempt; in a crawl's run, says whether the site is new to
/// the crawl.
fn record_one(
    tx: &rusqlite::Transaction<'_>,
    run: Option<RunId>,
    a: &Attempt,
    mark: i64,
    crawl: Option<&str>,
) -> rusqlite::Result<bool> {
    // `unseen`: no attempt of the site was recorded but submissions, so
    // it has no fetched version to look up (most of a first import).
    let (site_id, unseen): (i64, bool) = tx
        .prepare_cached(
            "INSERT INTO sites(host, rank, added, changed) VALUES (?1, ?2, ?3, 0)
             ON CONFLICT(host) DO UPDATE SET rank = coalesce(excluded.rank, rank),
                changed = CASE WHEN excluded.rank IS NOT NULL AND excluded.rank IS NOT rank
                               AND has_copy THEN ?4 ELSE changed END
             RETURNING id, last_attempt IS NULL",
        )?
        .query_row(
            params![a.host, a.rank.map(|r| r as i64), a.time, mark],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
    let hash = a.body.as_ref().map(|b| {
        let h = content_hash(b);
        (h, b)
    });
    if let Some((h, b)) = &hash {
        tx.prepare_cached("INSERT OR IGNORE INTO bodies(hash, size, content) VALUES (?1, ?2, ?3)")?
            .execute(params![&h[..], b.len() as i64, &b[..]])?;
    }
    let redirects = serde_json::to_string(&a.redirects).unwrap_or_else(|_| "[]".into());
    let h = &a.headers;
    tx.prepare_cached(
        "INSERT INTO attempts(run_id, site_id, time, duration_ms, url, redirects, address, status,
            content_type, cache_control, expires, retry_after, last_modified, etag, bytes,
            truncated, error_class, error, outcome, reason, expires_in, body_hash)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18,
            ?19, ?20, ?21, ?22)",
    )?
    .execute(params![
        run,
        site_id,
        a.time,
        a.duration_ms as i64,
        a.url,
        redirects,
        a.address,
        a.status,
        h.content_type,
        h.cache_control,
        h.expires,
        h.retry_after,
        h.last_modified,
        h.etag,
        a.bytes as i64,
        a.truncated,
        a.error_class,
        a.error,
        a.outcome,
        a.reason,
        a.expires_in.map(|s| s as i64),
        hash.as_ref().map(|(h, _)| h.to_vec()),
    ])?;
    // The crawl's last capture of the site (at one second, one that
    // brought a file).
    let mut new_to_crawl = false;
    if let Some(c) = crawl {
        let found = hash.is_some();
        new_to_crawl = tx
            .prepare_cached(
                "INSERT OR IGNORE INTO crawl_sites(crawl, site_id, time, found)
                 VALUES (?1, ?2, ?3, ?4)",
            )?
            .execute(params![c, site_id, a.time, found])?
            == 1;
        if !new_to_crawl {
            tx.prepare_cached(
                "UPDATE crawl_sites SET time = ?3, found = ?4
                 WHERE crawl = ?1 AND site_id = ?2 AND (time < ?3 OR (time = ?3 AND found < ?4))",
            )?
            .execute(params![c, site_id, a.time, found])?;
        }
    }
    // Versions: the one in force at this time (the latest that started no
    // later) continues when the content is the same; else the next one
    // may start earlier; else a new version starts.
    // A user's submission is a stream of its own: it never continues,
    // moves or interrupts the versions fetched from the site, nor they it.
    let submitted = a.source == Source::Submitted;
    let at = |sql: &str| -> rusqlite::Result<Option<(i64, Vec<u8>)>> {
        tx.prepare_cached(sql)?
            .query_row(params![site_id, a.time, submitted], |r| {
                Ok((r.get(0)?, crate::version_key(r.get(1)?, r.get(2)?)))
            })
            .optional()
    };
    // The attempt's key: its body's hash, or the site's absence.
    let absent = a.absence();
    let key: Option<&[u8]> = match (&hash, absent) {
        (Some((h, _)), _) => Some(&h[..]),
        (None, Some(x)) => Some(x.key()),
        (None, None) => None,
    };
    let lookup = submitted || !unseen;
    let before = if lookup {
        at(
            "SELECT id, hash, absent FROM versions WHERE site_id = ?1 AND first_seen <= ?2
            AND (source = 'submitted') = ?3
         ORDER BY first_seen DESC, id DESC LIMIT 1",
        )?
    } else {
        None
    };
    let after = match key {
        Some(_) if lookup => at(
            "SELECT id, hash, absent FROM versions WHERE site_id = ?1 AND first_seen > ?2
            AND (source = 'submitted') = ?3
             ORDER BY first_seen ASC, id ASC LIMIT 1",
        )?,
        _ => None,
    };
    let op = crate::next_version(
        before.as_ref().map(|(id, h)| (*id, &h[..])),
        after.as_ref().map(|(id, h)| (*id, &h[..])),
        key,
        a.status,
    );
    match op {
        VersionOp::Keep => {}
        VersionOp::Continue(id) => {
            tx.prepare_cached("UPDATE versions SET last_seen = max(last_seen, ?2) WHERE id = ?1")?
                .execute(params![id, a.time])?;
        }
        VersionOp::StartEarlier(id) => {
            tx.prepare_cached("UPDATE versions SET first_seen = ?2 WHERE id = ?1")?
                .execute(params![id, a.time])?;
        }
        VersionOp::Start { .. } => {
            // An absence holds the empty body.
            let stored = match &hash {
                Some((h, _)) => h.to_vec(),
                None => {
                    let empty = content_hash(b"");
                    tx.prepare_cached(
                        "INSERT OR IGNORE INTO bodies(hash, size, content) VALUES (?1, 0, ?2)",
                    )?
                    .execute(params![&empty[..], &b""[..]])?;
                    empty.to_vec()
                }
            };
            tx.prepare_cached(
                "INSERT INTO versions(site_id, hash, url, content_type, first_seen, last_seen,
                    source, absent)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?6, ?7)",
            )?
            .execute(params![
                site_id,
                stored,
                a.url,
                if hash.is_some() {
                    a.headers.content_type.as_deref()
                } else {
                    None
                },
                a.time,
                a.source.as_str(),
                absent.filter(|_| hash.is_none()).map(|x| x.as_str()),
            ])?;
        }
    }
    if crate::marks_index(
        op,
        hash.is_none(),
        before.as_ref().map(|(id, h)| (*id, &h[..])),
    ) {
        tx.prepare_cached("UPDATE sites SET changed = ?2 WHERE id = ?1")?
            .execute(params![site_id, mark])?;
    }
    if submitted {
        // A submission says nothing of what the site serves: its fetch
        // state stays.
        return Ok(new_to_crawl);
    }
    // The site's latest state, only from an attempt at least as recent.
    tx.prepare_cached(
        "UPDATE sites SET
            last_attempt = ?2, last_outcome = ?3, last_status = ?4, last_error_class = ?5,
            unreachable_since = CASE WHEN ?6 THEN coalesce(unreachable_since, ?2) ELSE NULL END,
            has_copy = has_copy OR ?7,
            etag = CASE WHEN ?8 THEN ?9 ELSE etag END,
            last_modified = CASE WHEN ?8 THEN ?10 ELSE last_modified END,
            retry_at = ?11
         WHERE id = ?1 AND (last_attempt IS NULL OR last_attempt <= ?2)",
    )?
    .execute(params![
        site_id,
        a.time,
        a.outcome,
        a.status,
        a.error_class,
        a.unreachable(),
        hash.is_some(),
        hash.is_some(),
        h.etag,
        h.last_modified,
        // Asked to come back later (429, 503 with Retry-After).
        matches!(a.status, Some(429 | 503)).then(|| a.time + a.expires_in.unwrap_or(0) as i64),
    ])?;
    Ok(new_to_crawl)
}

impl Store for SqliteStore {
    fn begin_run(&mut self, run: &NewRun) -> Result<RunId> {
        crate::check_run(run)?;
        self.conn
            .execute(
                "INSERT INTO runs(started, input, input_hash, user_agent, hosts, crawl)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![
                    run.started,
                    run.input,
                    &run.input_hash[..],
                    run.user_agent,
                    run.hosts as i64,
                    run.crawl
                ],
            )
            .map_err(|e| self.err(e))?;
        Ok(self.conn.last_insert_rowid())
    }

    fn unfinished_run(&self, input_hash: &[u8; 32]) -> Result<Option<RunId>> {
        self.conn
            .query_row(
                "SELECT id FROM runs WHERE input_hash = ?1 AND finished IS NULL
                 ORDER BY id DESC LIMIT 1",
                params![&input_hash[..]],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.err(e))
    }

    fn finish_run(&mut self, run: RunId, finished: i64) -> Result<()> {
        self.conn
            .execute(
                "UPDATE runs SET finished = ?2 WHERE id = ?1",
                params![run, finished],
            )
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    fn hosts_done(&self, run: RunId) -> Result<HashSet<String>> {
        let mut st = self
            .conn
            .prepare(
                "SELECT DISTINCT s.host FROM attempts a JOIN sites s ON s.id = a.site_id
                 WHERE a.run_id = ?1",
            )
            .map_err(|e| self.err(e))?;
        let rows = st
            .query_map(params![run], |r| r.get::<_, String>(0))
            .map_err(|e| classify(&self.path, e))?;
        rows.collect::<rusqlite::Result<HashSet<String>>>()
            .map_err(|e| classify(&self.path, e))
    }

    fn record(&mut self, run: Option<RunId>, batch: &[Attempt]) -> Result<()> {
        self.record_marked(run, batch, None)
    }

    fn record_import(
        &mut self,
        run: Option<RunId>,
        batch: &[Attempt],
        mark: &ImportMark,
    ) -> Result<()> {
        self.record_marked(run, batch, Some(mark))
    }

    fn imports(&self) -> Result<HashMap<String, ImportMark>> {
        let mut st = self
            .conn
            .prepare("SELECT name, crawl, records, robots, finished FROM imports")
            .map_err(|e| self.err(e))?;
        let rows = st
            .query_map([], |r| {
                Ok(ImportMark {
                    name: r.get(0)?,
                    crawl: r.get(1)?,
                    records: r.get::<_, i64>(2)?.max(0) as u64,
                    robots: r.get::<_, i64>(3)?.max(0) as u64,
                    finished: r.get(4)?,
                })
            })
            .map_err(|e| self.err(e))?;
        let mut out = HashMap::new();
        for m in rows {
            let m = m.map_err(|e| self.err(e))?;
            out.insert(m.name.clone(), m);
        }
        Ok(out)
    }

    fn previous(&self) -> Result<HashMap<String, Previous>> {
        let mut st = self
            .conn
            .prepare(
                "SELECT host, last_attempt, etag, last_modified, has_copy, unreachable_since,
                        retry_at
                 FROM sites",
            )
            .map_err(|e| self.err(e))?;
        let rows = st
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    Previous {
                        last_attempt: r.get(1)?,
                        etag: r.get(2)?,
                        last_modified: r.get(3)?,
                        has_copy: r.get(4)?,
                        unreachable_since: r.get(5)?,
                        retry_at: r.get(6)?,
                    },
                ))
            })
            .map_err(|e| classify(&self.path, e))?;
        rows.collect::<rusqlite::Result<HashMap<_, _>>>()
            .map_err(|e| classify(&self.path, e))
    }

    fn stats(&self) -> Result<Stats> {
        let c = &self.conn;
        let schema_version = c
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(|e| self.err(e))?;
        Stats::gather(schema_version, |sql| {
            let mut st = c.prepare(sql).map_err(|e| classify(&self.path, e))?;
            let keyed = st.column_count() > 1;
            let rows = st
                .query_map([], |r| {
                    if keyed {
                        Ok((r.get::<_, Option<String>>(0)?, r.get::<_, i64>(1)?))
                    } else {
                        Ok((None, r.get::<_, i64>(0)?))
                    }
                })
                .map_err(|e| classify(&self.path, e))?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
                .map_err(|e| classify(&self.path, e))
        })
    }

    fn each_version(&self, f: &mut dyn FnMut(Version) -> Result<()>) -> Result<()> {
        // Sites in host order, each one's versions by its index: the rows
        // come in order as they are read, never sorted (a sort would hold
        // every body in a temporary tree, memory growing with the store).
        let mut st = self
            .conn
            .prepare(
                "SELECT s.host, v.url, v.first_seen, v.last_seen, v.hash, b.content, v.content_type,
                        a.status, a.cache_control, a.expires, a.last_modified, a.etag,
                        a.retry_after, a.truncated, v.source, a.outcome
                 FROM sites s CROSS JOIN versions v ON s.id = v.site_id
                 JOIN bodies b ON b.hash = v.hash
                 LEFT JOIN attempts a ON a.id = (
                     SELECT id FROM attempts
                     WHERE site_id = v.site_id AND body_hash = v.hash
                     ORDER BY time, id LIMIT 1)
                 WHERE v.absent IS NULL
                 ORDER BY s.host, v.first_seen, v.id",
            )
            .map_err(|e| self.err(e))?;
        let mut rows = st.query([]).map_err(|e| classify(&self.path, e))?;
        while let Some(r) = rows.next().map_err(|e| classify(&self.path, e))? {
            let hash: Vec<u8> = r.get(4).map_err(|e| classify(&self.path, e))?;
            let mut v = Version {
                host: r.get(0).map_err(|e| classify(&self.path, e))?,
                url: r.get(1).map_err(|e| classify(&self.path, e))?,
                first_seen: r.get(2).map_err(|e| classify(&self.path, e))?,
                last_seen: r.get(3).map_err(|e| classify(&self.path, e))?,
                hash: hash.try_into().map_err(|_| StoreError::Corrupt {
                    path: self.path.clone(),
                    detail: "a content hash that is not 32 bytes".into(),
                })?,
                body: r.get(5).map_err(|e| classify(&self.path, e))?,
                content_type: r.get(6).map_err(|e| classify(&self.path, e))?,
                origin: None,
                source: Source::from_name(
                    &r.get::<_, String>(14)
                        .map_err(|e| classify(&self.path, e))?,
                ),
                absent: None,
            };
            let status: Option<i64> = r.get(7).map_err(|e| classify(&self.path, e))?;
            if let Some(status) = status.and_then(|s| u16::try_from(s).ok()) {
                let mut headers = Vec::new();
                for (i, name) in (8..).zip(crate::ORIGIN_HEADERS) {
                    let value: Option<String> = r.get(i).map_err(|e| classify(&self.path, e))?;
                    if let Some(value) = value {
                        headers.push((name.to_owned(), value));
                    }
                }
                let truncated: Option<bool> = r.get(13).map_err(|e| classify(&self.path, e))?;
                let outcome: Option<String> = r.get(15).map_err(|e| classify(&self.path, e))?;
                v.origin = Some(Origin {
                    status,
                    headers,
                    truncated: truncated.unwrap_or(false),
                    outcome: outcome.unwrap_or_default(),
                });
            }
            f(v)?;
        }
        Ok(())
    }

    fn change_mark(&self) -> Result<i64> {
        self.conn
            .query_row(CHANGE_MARK, [], |r| r.get(0))
            .map_err(|e| self.err(e))
    }

    fn sites_changed(
        &self,
        mark: i64,
        f: &mut dyn FnMut(SiteHistory) -> Result<()>,
    ) -> Result<i64> {
        // One read transaction: the mark and the rows are one snapshot.
        self.conn.execute_batch("BEGIN").map_err(|e| self.err(e))?;
        let result = (|| {
            let now = self.change_mark()?;
            self.histories(
                "WHERE s.changed > ?1 AND s.changed <= ?2 ORDER BY s.host, v.first_seen, v.id",
                params![mark, now],
                f,
            )?;
            Ok(now)
        })();
        let _ = self.conn.execute_batch("COMMIT");
        result
    }

    fn sites_known_at(&self, t: i64) -> Result<u64> {
        self.conn
            .query_row(
                "SELECT count(*) FROM sites WHERE added <= ?1",
                params![t],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| n.max(0) as u64)
            .map_err(|e| self.err(e))
    }

    fn crawl_sites(&self, hosts: Option<&[String]>) -> Result<Vec<CrawlSites>> {
        let e = |e| classify(&self.path, e);
        let mut st = self
            .conn
            .prepare("SELECT crawl, first, last, sites, changed FROM crawl_counts ORDER BY crawl")
            .map_err(e)?;
        let mut out: Vec<CrawlSites> = st
            .query_map([], |r| {
                Ok(CrawlSites {
                    crawl: r.get(0)?,
                    first: r.get(1)?,
                    last: r.get(2)?,
                    sites: r.get::<_, i64>(3)?.max(0) as u64,
                    changed: r.get(4)?,
                    of_hosts: Vec::new(),
                })
            })
            .map_err(e)?
            .collect::<rusqlite::Result<_>>()
            .map_err(e)?;
        if let Some(hosts) = hosts {
            let mut q = self
                .conn
                .prepare_cached(
                    "SELECT c.crawl FROM sites s JOIN crawl_sites c ON c.site_id = s.id
                     WHERE s.host = ?1",
                )
                .map_err(e)?;
            let mut found = Vec::new();
            for (i, h) in hosts.iter().enumerate() {
                for crawl in q
                    .query_map(params![h], |r| r.get::<_, String>(0))
                    .map_err(e)?
                {
                    found.push((i, crawl.map_err(e)?));
                }
            }
            crate::restrict_to_hosts(&mut out, found);
        }
        Ok(out)
    }

    fn crawl_found(&self, crawl: &str, f: &mut dyn FnMut(&str, i64) -> Result<()>) -> Result<()> {
        // Hosts compare as bytes (SQLite's BINARY collation), the order
        // of the index's dictionaries.
        let mut st = self
            .conn
            .prepare(
                "SELECT s.host, c.time FROM crawl_sites c JOIN sites s ON s.id = c.site_id
                 WHERE c.crawl = ?1 AND c.found ORDER BY s.host",
            )
            .map_err(|e| self.err(e))?;
        let mut rows = st.query(params![crawl]).map_err(|e| self.err(e))?;
        while let Some(r) = rows.next().map_err(|e| self.err(e))? {
            let host: String = r.get(0).map_err(|e| self.err(e))?;
            f(&host, r.get(1).map_err(|e| self.err(e))?)?;
        }
        Ok(())
    }

    fn sites_added(&self, hosts: &[String]) -> Result<Vec<Option<i64>>> {
        let mut q = self
            .conn
            .prepare_cached("SELECT added FROM sites WHERE host = ?1")
            .map_err(|e| self.err(e))?;
        hosts
            .iter()
            .map(|h| {
                q.query_row(params![h], |r| r.get::<_, i64>(0))
                    .optional()
                    .map_err(|e| self.err(e))
            })
            .collect()
    }

    fn site(&self, host: &str) -> Result<Option<SiteHistory>> {
        let mut found = None;
        self.histories(
            "WHERE s.host = ?1 ORDER BY v.first_seen, v.id",
            params![host],
            &mut |h| {
                found = Some(h);
                Ok(())
            },
        )?;
        if found.is_none() {
            // A site without a version still has its rank.
            let rank: Option<Option<i64>> = self
                .conn
                .query_row(
                    "SELECT rank FROM sites WHERE host = ?1",
                    params![host],
                    |r| r.get(0),
                )
                .optional()
                .map_err(|e| self.err(e))?;
            found = rank.map(|rank| SiteHistory {
                host: host.to_owned(),
                rank: rank.map(|r| r.max(0) as u64),
                versions: Vec::new(),
                sights: Vec::new(),
            });
        }
        Ok(found)
    }
}

impl SqliteStore {
    /// Runs a [`HISTORY`] query (`tail`: its conditions, ordered by
    /// host), handing each site's versions to `f` together.
    fn histories(
        &self,
        tail: &str,
        args: impl rusqlite::Params,
        f: &mut dyn FnMut(SiteHistory) -> Result<()>,
    ) -> Result<()> {
        let e = |e| classify(&self.path, e);
        let crawled: bool = self
            .conn
            .query_row(
                "SELECT EXISTS(SELECT 1 FROM runs WHERE crawl IS NOT NULL)",
                [],
                |r| r.get(0),
            )
            .map_err(e)?;
        let sql = format!(
            "{} {tail}",
            HISTORY.replace("{SIGHTS}", if crawled { SIGHTS } else { "NULL" })
        );
        let mut st = self.conn.prepare(&sql).map_err(e)?;
        let mut rows = st.query(args).map_err(e)?;
        let mut cur: Option<SiteHistory> = None;
        while let Some(r) = rows.next().map_err(e)? {
            let host: String = r.get(0).map_err(e)?;
            let hash: Vec<u8> = r.get(5).map_err(e)?;
            let v = Version {
                host: host.clone(),
                url: r.get(2).map_err(e)?,
                first_seen: r.get(3).map_err(e)?,
                last_seen: r.get(4).map_err(e)?,
                hash: hash.try_into().map_err(|_| StoreError::Corrupt {
                    path: self.path.clone(),
                    detail: "a content hash that is not 32 bytes".into(),
                })?,
                body: r.get(6).map_err(e)?,
                content_type: r.get(7).map_err(e)?,
                origin: None,
                source: Source::from_name(&r.get::<_, String>(8).map_err(e)?),
                absent: r
                    .get::<_, Option<String>>(10)
                    .map_err(e)?
                    .as_deref()
                    .and_then(crate::Absence::from_name),
            };
            if cur.as_ref().is_some_and(|c| c.host != host) {
                f(cur.take().expect("checked"))?;
            }
            let rank: Option<i64> = r.get(1).map_err(e)?;
            if cur.is_none() {
                let listed: Option<String> = r.get(9).map_err(e)?;
                cur = Some(SiteHistory {
                    host,
                    rank: rank.map(|r| r.max(0) as u64),
                    versions: Vec::new(),
                    sights: crate::sights_of(listed.as_deref()),
                });
            }
            cur.as_mut().expect("set").versions.push(v);
        }
        if let Some(c) = cur {
            f(c)?;
        }
        Ok(())
    }
}

mod rows {
    //! Raw rows for `store copy`.

    use rusqlite::types::{Value, ValueRef};

    use super::{SqliteStore, classify};
    use crate::Result;
    use crate::copy::{Cell, Table, Ty};

    fn to_value(c: &Cell) -> Value {
        match c {
            Cell::Null => Value::Null,
            Cell::Int(i) => Value::Integer(*i),
            Cell::Bool(b) => Value::Integer(i64::from(*b)),
            Cell::Text(s) => Value::Text(s.clone()),
            Cell::Blob(b) => Value::Blob(b.clone()),
        }
    }

    fn cells(t: &Table, r: &rusqlite::Row<'_>) -> rusqlite::Result<Vec<Cell>> {
        let mut out = Vec::with_capacity(t.columns.len());
        for (i, (_, ty)) in t.columns.iter().enumerate() {
            out.push(match r.get_ref(i)? {
                ValueRef::Null => Cell::Null,
                ValueRef::Integer(n) if *ty == Ty::Bool => Cell::Bool(n != 0),
                ValueRef::Integer(n) => Cell::Int(n),
                ValueRef::Real(f) => Cell::Int(f as i64),
                ValueRef::Text(b) => Cell::Text(String::from_utf8_lossy(b).into_owned()),
                ValueRef::Blob(b) => Cell::Blob(b.to_vec()),
            });
        }
        Ok(out)
    }

    impl SqliteStore {
        fn select(&self, t: &Table, filter: &str, args: &[Value]) -> Result<Vec<Vec<Cell>>> {
            let sql = format!("SELECT {} FROM {} {filter}", t.column_list(), t.name);
            let e = |e| classify(&self.path, e);
            let mut st = self.conn.prepare(&sql).map_err(e)?;
            let rows = st
                .query_map(rusqlite::params_from_iter(args.iter()), |r| cells(t, r))
                .map_err(e)?;
            rows.collect::<rusqlite::Result<Vec<_>>>().map_err(e)
        }

        pub(crate) fn rows_after(
            &self,
            t: &Table,
            after: Option<&Cell>,
            limit: usize,
        ) -> Result<Vec<Vec<Cell>>> {
            let key = t.key();
            match after {
                None => self.select(
                    t,
                    &format!("ORDER BY {key} LIMIT ?1"),
                    &[Value::Integer(limit as i64)],
                ),
                Some(k) => self.select(
                    t,
                    &format!("WHERE {key} > ?2 ORDER BY {key} LIMIT ?1"),
                    &[Value::Integer(limit as i64), to_value(k)],
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
                .select(t, &format!("WHERE {key} = ?1"), &[to_value(k)])?
                .pop())
        }

        pub(crate) fn count_up_to(&self, t: &Table, k: &Cell) -> Result<u64> {
            let sql = format!("SELECT count(*) FROM {} WHERE {} <= ?1", t.name, t.key());
            self.conn
                .query_row(&sql, [to_value(k)], |r| r.get::<_, i64>(0))
                .map(|n| n.max(0) as u64)
                .map_err(|e| classify(&self.path, e))
        }

        pub(crate) fn derive(&mut self) -> Result<()> {
            let e = |e| classify(&self.path, e);
            let tx = self.conn.transaction().map_err(e)?;
            tx.execute_batch(super::CRAWL_SITES_FILL).map_err(e)?;
            tx.commit().map_err(e)
        }

        pub(crate) fn put_rows(&mut self, t: &Table, rows: &[Vec<Cell>]) -> Result<()> {
            let path = self.path.clone();
            let e = |e| classify(&path, e);
            let tx = self.conn.transaction().map_err(e)?;
            {
                let marks: Vec<String> = (1..=t.columns.len()).map(|i| format!("?{i}")).collect();
                let sql = format!(
                    "INSERT INTO {}({}) VALUES ({})",
                    t.name,
                    t.column_list(),
                    marks.join(", ")
                );
                let mut st = tx.prepare(&sql).map_err(e)?;
                for r in rows {
                    st.execute(rusqlite::params_from_iter(r.iter().map(to_value)))
                        .map_err(e)?;
                }
            }
            tx.commit().map_err(e)
        }
    }
}
