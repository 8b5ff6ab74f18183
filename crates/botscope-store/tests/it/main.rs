//! The store on real files, and the same behaviours on a real PostgreSQL
//! server.

use std::path::{Path, PathBuf};

use botscope_store::{
    Attempt, Frontier, Headers, NewRun, PgStore, SqliteStore, Store, StoreError, content_hash,
};

/// Opens the store under test again (a new connection to the same store).
type Open<'a> = &'a mut dyn FnMut() -> Box<dyn Store>;

/// A behaviour test, run on each backend.
type Behaviour = fn(Open<'_>);

/// A store file's path in a directory of its own, removed when dropped.
struct Temp {
    path: PathBuf,
    _dir: tempfile::TempDir,
}

impl std::ops::Deref for Temp {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for Temp {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

fn temp(name: &str) -> Temp {
    let dir = tempfile::Builder::new()
        .prefix(&format!("botscope-store-{name}-"))
        .tempdir()
        .expect("temp dir");
    Temp {
        path: dir.path().join("store.db"),
        _dir: dir,
    }
}

fn ok(host: &str, time: i64, body: &str) -> Attempt {
    Attempt {
        host: host.into(),
        time,
        url: format!("https://{host}/robots.txt"),
        status: Some(200),
        headers: Headers {
            content_type: Some("text/plain".into()),
            etag: Some(format!("\"{time}\"")),
            ..Headers::default()
        },
        bytes: body.len() as u64,
        outcome: "parse".into(),
        reason: "success".into(),
        body: Some(body.as_bytes().to_vec()),
        ..Attempt::default()
    }
}

/// An import run named `input`, begun at 3,000.
fn import_run(s: &mut dyn Store, input: &str) -> botscope_store::RunId {
    s.begin_run(&NewRun {
        input: input.into(),
        input_hash: content_hash(input.as_bytes()),
        user_agent: String::new(),
        hosts: 0,
        started: 3_000,
        crawl: None,
    })
    .expect("run")
}

fn failed(host: &str, time: i64, status: Option<u16>) -> Attempt {
    Attempt {
        host: host.into(),
        time,
        url: format!("https://{host}/robots.txt"),
        status,
        error_class: status.is_none().then(|| "connect".into()),
        outcome: "disallow-all".into(),
        reason: "unreachable".into(),
        ..Attempt::default()
    }
}

fn versions(s: &dyn Store) -> Vec<(String, i64, i64, String)> {
    let mut v = Vec::new();
    s.each_version(&mut |x| {
        v.push((
            x.host,
            x.first_seen,
            x.last_seen,
            String::from_utf8_lossy(&x.body).into_owned(),
        ));
        Ok(())
    })
    .expect("versions");
    v
}

#[test]
fn a_version_only_when_the_content_changes() {
    let path = temp("versions");
    a_version_only_when_the_content_changes_in(&mut || {
        Box::new(SqliteStore::open(&path).expect("open"))
    });
}

fn a_version_only_when_the_content_changes_in(open: Open<'_>) {
    let mut s = open();
    s.record(None, &[ok("a.test", 100, "A")]).expect("record");
    s.record(
        None,
        &[ok("a.test", 200, "A"), failed("a.test", 250, Some(503))],
    )
    .expect("record");
    s.record(None, &[ok("a.test", 300, "B")]).expect("record");
    let mut not_modified = failed("a.test", 350, Some(304));
    not_modified.outcome = "use-cached-copy".into();
    s.record(None, &[not_modified]).expect("record");
    s.record(None, &[ok("a.test", 400, "A"), ok("b.test", 400, "A")])
        .expect("record");
    assert_eq!(
        versions(&*s),
        vec![
            ("a.test".into(), 100, 200, "A".into()),
            ("a.test".into(), 300, 350, "B".into()),
            ("a.test".into(), 400, 400, "A".into()),
            ("b.test".into(), 400, 400, "A".into()),
        ]
    );
    let st = s.stats().expect("stats");
    // The 503 is a version of its own (no file from 250 to 300), which
    // holds the empty body: three bodies, four files.
    assert_eq!(
        (st.sites, st.attempts, st.versions, st.bodies),
        (2, 7, 4, 3)
    );
    let h = s.site("a.test").expect("site").expect("known");
    let absent: Vec<(i64, Option<botscope_store::Absence>)> = h
        .versions
        .iter()
        .map(|v| (v.first_seen, v.absent))
        .collect();
    assert_eq!(
        absent,
        [
            (100, None),
            (250, Some(botscope_store::Absence::Unreachable)),
            (300, None),
            (400, None)
        ]
    );
    assert!(h.at(260).is_some_and(|v| !v.is_file() && v.body.is_empty()));
    assert_eq!(st.body_bytes, 2);
    assert_eq!(st.sites_with_robots_txt, 2);
    assert_eq!(st.outcomes.get("parse"), Some(&2));
    // An older record (an import) joins the version it belongs to.
    s.record(None, &[ok("a.test", 50, "A")]).expect("record");
    assert_eq!(versions(&*s)[0], ("a.test".into(), 50, 200, "A".into()));
    assert_eq!(s.stats().expect("stats").versions, 4);
}

#[test]
fn a_submission_is_a_stream_of_its_own() {
    let path = temp("submissions");
    a_submission_is_a_stream_of_its_own_in(&mut || {
        Box::new(SqliteStore::open(&path).expect("open"))
    });
}

/// A user's submission neither continues nor interrupts the versions
/// fetched from the site, leaves the site's fetch state alone, and is not
/// what the site serves.
fn a_submission_is_a_stream_of_its_own_in(open: Open<'_>) {
    let mut s = open();
    s.record(None, &[ok("a.test", 100, "A")]).expect("record");
    let before = s.previous().expect("previous")["a.test"].clone();
    let mut sub = ok("a.test", 200, "S");
    sub.status = None;
    sub.headers = Headers::default();
    sub.source = botscope_store::Source::Submitted;
    s.record(None, &[sub]).expect("record");
    assert_eq!(s.previous().expect("previous")["a.test"], before);
    // The next fetch of the same content continues the fetched version.
    s.record(None, &[ok("a.test", 300, "A")]).expect("record");
    assert_eq!(
        versions(&*s),
        vec![
            ("a.test".into(), 100, 300, "A".into()),
            ("a.test".into(), 200, 200, "S".into()),
        ]
    );
    let h = s.site("a.test").expect("site").expect("known");
    assert_eq!(h.at(i64::MAX).expect("in force").body, b"A");
    assert_eq!(h.stream().len(), 1);
}

#[test]
fn previous_state_for_the_next_fetch() {
    let path = temp("previous");
    previous_state_for_the_next_fetch_in(&mut || Box::new(SqliteStore::open(&path).expect("open")));
}

fn previous_state_for_the_next_fetch_in(open: Open<'_>) {
    let mut s = open();
    s.record(None, &[ok("a.test", 100, "A")]).expect("record");
    s.record(
        None,
        &[
            failed("a.test", 200, None),
            failed("a.test", 300, Some(500)),
        ],
    )
    .expect("record");
    s.record(None, &[failed("b.test", 300, None)])
        .expect("record");
    let p = s.previous().expect("previous");
    let a = &p["a.test"];
    assert_eq!(a.last_attempt, Some(300));
    assert!(a.has_copy);
    assert_eq!(a.etag.as_deref(), Some("\"100\""));
    assert_eq!(a.unreachable_since, Some(200));
    assert!(!p["b.test"].has_copy);
    s.record(None, &[ok("a.test", 400, "A")]).expect("record");
    assert_eq!(
        s.previous().expect("previous")["a.test"].unreachable_since,
        None
    );
}

#[test]
fn runs_resume_without_duplicate_versions() {
    let path = temp("resume");
    runs_resume_without_duplicate_versions_in(&mut || {
        Box::new(SqliteStore::open(&path).expect("open"))
    });
}

fn runs_resume_without_duplicate_versions_in(open: Open<'_>) {
    let run = NewRun {
        input: "hosts.txt".into(),
        input_hash: content_hash(b"a.test\nb.test\n"),
        user_agent: "botscope-test".into(),
        hosts: 2,
        started: 10,
        crawl: None,
    };
    {
        let mut s = open();
        let id = s.begin_run(&run).expect("run");
        s.record(Some(id), &[ok("a.test", 100, "A")])
            .expect("record");
        // Dropped without finishing: a crash.
    }
    let mut s = open();
    let id = s
        .unfinished_run(&run.input_hash)
        .expect("query")
        .expect("an unfinished run");
    let done = s.hosts_done(id).expect("done");
    assert!(done.contains("a.test") && !done.contains("b.test"));
    // The resumed run fetches a.test again anyway: no second version.
    s.record(Some(id), &[ok("a.test", 110, "A"), ok("b.test", 110, "B")])
        .expect("record");
    s.finish_run(id, 120).expect("finish");
    assert!(s.unfinished_run(&run.input_hash).expect("query").is_none());
    let st = s.stats().expect("stats");
    assert_eq!((st.versions, st.runs, st.unfinished_runs), (2, 1, 0));
}

#[test]
fn bad_files_give_clear_errors() {
    let path = temp("corrupt");
    std::fs::write(
        &path,
        b"this is not a database, just text ......................",
    )
    .expect("write");
    match SqliteStore::open(&path) {
        Err(e @ StoreError::Corrupt { .. }) => {
            assert!(e.to_string().contains("not a botscope store"))
        }
        Err(e) => panic!("wrong error: {e}"),
        Ok(_) => panic!("opened a text file"),
    }
    let missing = temp("missing");
    assert!(matches!(
        SqliteStore::open_read(&missing),
        Err(StoreError::Missing { .. })
    ));

    let path = temp("newer");
    drop(SqliteStore::open(&path).expect("open"));
    let c = rusqlite::Connection::open(&path).expect("raw");
    c.pragma_update(None, "user_version", 99).expect("pragma");
    drop(c);
    assert!(matches!(
        SqliteStore::open(&path),
        Err(StoreError::TooNew { found: 99, .. })
    ));
}

#[test]
fn a_locked_store_is_reported() {
    let path = temp("locked");
    drop(SqliteStore::open(&path).expect("open"));
    let holder = rusqlite::Connection::open(&path).expect("raw");
    holder.execute_batch("BEGIN IMMEDIATE").expect("lock");
    let mut s = SqliteStore::open(&path).expect("open while another reads");
    let e = s.record(None, &[ok("a.test", 1, "A")]).expect_err("locked");
    assert!(matches!(e, StoreError::Locked { .. }), "{e}");
    assert!(e.to_string().contains("locked"));
    holder.execute_batch("ROLLBACK").expect("unlock");
    s.record(None, &[ok("a.test", 1, "A")])
        .expect("record after the lock");
}

/// WARC in and out over plain readers and writers, as a web server or a
/// worker would call it: a store exported and imported into another gives
/// the same versions, and a damaged stream keeps what came before.
#[test]
fn warc_round_trip_in_memory() {
    let a = temp("warc-a");
    let mut s = SqliteStore::open(&a).expect("open");
    s.record(
        None,
        &[
            ok("a.test", 1_000, "User-agent: *\nDisallow: /x\n"),
            ok("a.test", 2_000, "User-agent: *\nDisallow: /y\n"),
            ok("b.test", 1_500, "User-agent: *\nAllow: /\n"),
        ],
    )
    .expect("record");
    let mut warc = Vec::new();
    let n = botscope_store::export_warc(&s, &mut warc, true, "a.db", 3_000).expect("export");
    assert_eq!(n, 3);

    let t_path = temp("warc-b");
    let mut t = SqliteStore::open(&t_path).expect("open");
    let run = import_run(&mut t, "import");
    let policy = botscope_robotstxt::FetchPolicy::google();
    let mut imp = botscope_store::Importer::new(&mut t, run, policy, 3_000);
    let reader = std::io::BufReader::new(flate2::read::MultiGzDecoder::new(&warc[..]));
    let mut notes = Vec::new();
    let damage = imp
        .import(reader, &mut |n| notes.push(n.to_owned()))
        .expect("import");
    assert!(damage.is_none() && notes.is_empty(), "{damage:?} {notes:?}");
    let counts = imp.finish().expect("finish");
    assert_eq!((counts.records, counts.robots, counts.other), (4, 3, 1));
    let bodies = |s: &SqliteStore| {
        versions(s)
            .into_iter()
            .map(|(h, first, _, body)| (h, first, body))
            .collect::<Vec<_>>()
    };
    assert_eq!(bodies(&t), bodies(&s));

    // Cut in the middle of the last record: the first ones are in.
    let mut plain = Vec::new();
    botscope_store::export_warc(&s, &mut plain, false, "a.db", 3_000).expect("export");
    let cut = &plain[..plain.len() - 20];
    let u_path = temp("warc-c");
    let mut u = SqliteStore::open(&u_path).expect("open");
    let run = import_run(&mut u, "cut");
    let mut imp = botscope_store::Importer::new(&mut u, run, policy, 3_000);
    let damage = imp.import(cut, &mut |_| {}).expect("import");
    assert!(damage.is_some(), "the cut is reported");
    assert_eq!(imp.finish().expect("finish").robots, 2);
}

/// The WARC export is standard: SHA-1 digests in base32, the response's
/// status and kept headers, `WARC-Truncated: length` on a capped body; and
/// importing it keeps a capped body `too-large`.
#[test]
fn warc_export_is_standard_and_keeps_truncation() {
    let a = temp("warc-std");
    let mut s = SqliteStore::open(&a).expect("open");
    let body = "User-agent: *\nDisallow: /x\n";
    let mut capped = ok("big.test", 1_000, body);
    capped.truncated = true;
    capped.error_class = Some("too-large".into());
    capped.headers.cache_control = Some("max-age=3600".into());
    s.record(None, &[ok("a.test", 1_000, body), capped])
        .expect("record");
    let mut warc = Vec::new();
    botscope_store::export_warc(&s, &mut warc, false, "a.db", 3_000).expect("export");
    let text = String::from_utf8_lossy(&warc);
    let digest = botscope_store::warc::sha1_digest(body.as_bytes());
    assert!(
        digest.starts_with("sha1:") && digest.len() == 37,
        "{digest}"
    );
    assert_eq!(
        text.matches(&format!("WARC-Payload-Digest: {digest}\r\n"))
            .count(),
        2
    );
    assert_eq!(text.matches("WARC-Block-Digest: sha1:").count(), 2);
    assert_eq!(text.matches("WARC-Truncated: length\r\n").count(), 1);
    assert!(text.contains("HTTP/1.1 200 OK\r\n"));
    assert!(
        text.contains("ETag: \"1000\"\r\n") && text.contains("Cache-Control: max-age=3600\r\n")
    );
    assert!(!text.contains("blake3:"));

    let t_path = temp("warc-std-b");
    let mut t = SqliteStore::open(&t_path).expect("open");
    let run = import_run(&mut t, "import");
    let policy = botscope_robotstxt::FetchPolicy::google();
    let mut imp = botscope_store::Importer::new(&mut t, run, policy, 3_000);
    imp.import(&warc[..], &mut |_| {}).expect("import");
    imp.finish().expect("finish");
    let (before, after) = (s.stats().expect("stats"), t.stats().expect("stats"));
    assert_eq!(after.errors.get("too-large"), Some(&1), "{after:?}");
    assert_eq!(
        before.errors.get("too-large"),
        after.errors.get("too-large")
    );
    // And a second export is the same file.
    let mut again = Vec::new();
    botscope_store::export_warc(&t, &mut again, false, "a.db", 3_000).expect("export");
    assert_eq!(again, warc);
}

/// The research index follows the change mark: a batch that adds or moves
/// a version, or changes the rank of a site with a copy, raises it; a
/// fetch that only confirms a version does not.
#[test]
fn the_change_mark_names_the_sites_to_reindex() {
    let path = temp("changes");
    the_change_mark_names_the_sites_to_reindex_in(&mut || {
        Box::new(SqliteStore::open(&path).expect("open"))
    });
}

fn the_change_mark_names_the_sites_to_reindex_in(open: Open<'_>) {
    let mut s = open();
    assert_eq!(s.change_mark().expect("mark"), 0);
    s.record(None, &[ok("a.test", 100, "A"), ok("b.test", 100, "B")])
        .expect("record");
    let m1 = s.change_mark().expect("mark");
    assert!(m1 > 0);
    s.record(None, &[ok("a.test", 200, "A"), failed("c.test", 200, None)])
        .expect("record");
    assert_eq!(s.change_mark().expect("mark"), m1, "nothing new to index");
    s.record(None, &[ok("b.test", 300, "B2")]).expect("record");
    let mut seen = Vec::new();
    let m2 = s
        .sites_changed(m1, &mut |h| {
            seen.push((h.host, h.versions.len()));
            Ok(())
        })
        .expect("changed");
    assert_eq!(seen, [("b.test".to_owned(), 2)]);
    assert!(m2 > m1);
    let mut all = Vec::new();
    s.sites_changed(0, &mut |h| {
        all.push(h.host);
        Ok(())
    })
    .expect("all");
    assert_eq!(
        all,
        ["a.test", "b.test"],
        "sites without a version are not listed"
    );
    // A new rank for a site with a copy is a change (the index ranks by it).
    let mut ranked = ok("a.test", 200, "A");
    ranked.rank = Some(7);
    s.record(None, &[ranked]).expect("record");
    let h = s.site("a.test").expect("site").expect("known");
    assert_eq!(h.rank, Some(7));
    assert!(s.change_mark().expect("mark") > m2);
    let b = s.site("b.test").expect("site").expect("known");
    assert_eq!(b.at(250).map(|v| &v.body[..]), Some(&b"B"[..]));
    assert_eq!(b.at(300).map(|v| &v.body[..]), Some(&b"B2"[..]));
    assert!(b.at(99).is_none());
    // A site that never served a file holds its absence, and no file.
    let c = s.site("c.test").expect("site").expect("known");
    assert!(c.versions.iter().all(|v| !v.is_file()), "{c:?}");
    assert_eq!(c.versions.len(), 1);
    assert!(s.site("nowhere.test").expect("site").is_none());
    // A cohort's sites known at a time: each host's first attempt, the
    // failed one's too; a host never seen is none.
    let hosts: Vec<String> = ["c.test", "nowhere.test", "a.test", "b.test"]
        .map(str::to_owned)
        .to_vec();
    assert_eq!(
        s.sites_added(&hosts).expect("added"),
        [Some(200), None, Some(100), Some(100)]
    );
    assert_eq!(s.sites_known_at(150).expect("known"), 2);
    assert_eq!(s.sites_added(&[]).expect("none"), []);
}

/// A file import: `HOST` and `HOST.txt` files and an exported `HOST/`
/// directory become versions with source `import`, dated as asked; junk
/// names are told and skipped; an export reads back the same.
#[test]
fn files_import_and_read_back() {
    let path = temp("files");
    let dir = path.with_file_name("in");
    std::fs::create_dir_all(dir.join("x.test")).expect("dir");
    std::fs::write(dir.join("a.test.txt"), "User-agent: *\nDisallow: /a\n").expect("write");
    std::fs::write(dir.join("b.test"), "User-agent: *\nDisallow: /b\n").expect("write");
    std::fs::write(dir.join("README"), "not a robots.txt").expect("write");
    std::fs::write(
        dir.join("x.test/20240301T100000Z-0011223344556677.txt"),
        "X1",
    )
    .expect("w");
    std::fs::write(
        dir.join("x.test/20240401T100000Z-8899aabbccddeeff.txt"),
        "X2",
    )
    .expect("w");
    std::fs::write(dir.join("big.test"), vec![b'#'; 600]).expect("write");
    let mut s = SqliteStore::open(&path).expect("open");
    let run = import_run(&mut s, "files");
    let mut notes = Vec::new();
    let n = botscope_store::import_files(
        &mut s,
        run,
        std::slice::from_ref(&dir),
        Some(5_000),
        500,
        &mut |m| notes.push(m.to_owned()),
    )
    .expect("import");
    assert_eq!((n.files, n.hosts, n.truncated), (5, 4, 1));
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].contains("README"));
    let v = versions(&s);
    let hosts: Vec<_> = v.iter().map(|x| (x.0.as_str(), x.1)).collect();
    assert_eq!(
        hosts,
        [
            ("a.test", 5_000),
            ("b.test", 5_000),
            ("big.test", 5_000),
            ("x.test", 5_000),
            ("x.test", 5_000)
        ],
        "--date dates every file, even the versions of an export"
    );
    let mut sources = Vec::new();
    s.each_version(&mut |x| {
        sources.push(x.source);
        assert!(x.origin.is_none(), "no response to speak of");
        Ok(())
    })
    .expect("versions");
    assert!(sources.iter().all(|&x| x == botscope_store::Source::Import));
    assert_eq!(
        s.previous().expect("prev")["a.test"].unreachable_since,
        None
    );

    // Without --date: exported names date their versions; an export of
    // the store reads back the same versions.
    let path2 = temp("files2");
    let mut s2 = SqliteStore::open(&path2).expect("open");
    let run = import_run(&mut s2, "files2");
    botscope_store::import_files(&mut s2, run, &[dir.join("x.test")], None, 500, &mut |_| {})
        .expect("import");
    let x = s2.site("x.test").expect("site").expect("known");
    let times: Vec<_> = x.versions.iter().map(|v| v.first_seen).collect();
    assert_eq!(times, [1_709_287_200, 1_711_965_600]);
    let path3 = temp("files3");
    let out = path3.with_file_name("out");
    botscope_store::export_files(&s2, &out).expect("export");
    let mut s3 = SqliteStore::open(&path3).expect("open");
    let run = import_run(&mut s3, "files3");
    botscope_store::import_files(&mut s3, run, &[out], None, 500, &mut |_| {}).expect("import");
    assert_eq!(versions(&s2), versions(&s3));
}

/// A store of schema version 1 gains the new columns: its versions are
/// harvests and are all due for indexing.
#[test]
fn version_one_stores_migrate() {
    let path = temp("v1");
    {
        let c = rusqlite::Connection::open(&path).expect("raw");
        c.execute_batch(
            "CREATE TABLE sites (id INTEGER PRIMARY KEY, host TEXT NOT NULL UNIQUE, rank INTEGER,
                added INTEGER NOT NULL, last_attempt INTEGER, last_outcome TEXT, last_status INTEGER,
                last_error_class TEXT, unreachable_since INTEGER,
                has_copy INTEGER NOT NULL DEFAULT 0, etag TEXT, last_modified TEXT, retry_at INTEGER);
             CREATE TABLE runs (id INTEGER PRIMARY KEY, started INTEGER NOT NULL, finished INTEGER,
                input TEXT NOT NULL, input_hash BLOB NOT NULL, user_agent TEXT NOT NULL,
                hosts INTEGER NOT NULL);
             CREATE TABLE bodies (hash BLOB PRIMARY KEY, size INTEGER NOT NULL,
                content BLOB NOT NULL) WITHOUT ROWID;
             CREATE TABLE attempts (id INTEGER PRIMARY KEY, run_id INTEGER, site_id INTEGER NOT NULL,
                time INTEGER NOT NULL, duration_ms INTEGER NOT NULL, url TEXT NOT NULL,
                redirects TEXT NOT NULL, address TEXT, status INTEGER, content_type TEXT,
                cache_control TEXT, expires TEXT, retry_after TEXT, last_modified TEXT, etag TEXT,
                bytes INTEGER NOT NULL, truncated INTEGER NOT NULL, error_class TEXT, error TEXT,
                outcome TEXT NOT NULL, reason TEXT NOT NULL, expires_in INTEGER, body_hash BLOB);
             CREATE INDEX attempts_site ON attempts(site_id, time);
             CREATE INDEX attempts_run ON attempts(run_id);
             CREATE TABLE versions (id INTEGER PRIMARY KEY, site_id INTEGER NOT NULL,
                hash BLOB NOT NULL, url TEXT NOT NULL, content_type TEXT,
                first_seen INTEGER NOT NULL, last_seen INTEGER NOT NULL);
             CREATE INDEX versions_site ON versions(site_id, first_seen);
             INSERT INTO sites(host, added, has_copy) VALUES ('old.test', 1, 1);
             INSERT INTO bodies VALUES (x'0000000000000000000000000000000000000000000000000000000000000000', 1, x'41');
             INSERT INTO versions(site_id, hash, url, first_seen, last_seen)
                VALUES (1, x'0000000000000000000000000000000000000000000000000000000000000000', 'https://old.test/robots.txt', 1, 1);
             PRAGMA user_version = 1;",
        )
        .expect("v1 schema");
    }
    assert!(
        SqliteStore::open_read(&path).is_err(),
        "reading does not migrate"
    );
    let s = SqliteStore::open(&path).expect("migrate");
    assert_eq!(
        s.stats().expect("stats").schema_version,
        botscope_store::SCHEMA_VERSION
    );
    assert_eq!(s.change_mark().expect("mark"), 1);
    let mut n = 0;
    s.each_version(&mut |v| {
        assert_eq!(v.source, botscope_store::Source::Harvest);
        n += 1;
        Ok(())
    })
    .expect("versions");
    assert_eq!(n, 1);
}

/// The behaviours above on a real PostgreSQL server, a database each; and
/// what PostgreSQL adds: many writers, a URL that does not connect.
#[test]
fn postgres_behaves_like_sqlite() {
    let pg = botscope_testkit::pg::Postgres::start();
    let tests: [(&str, Behaviour); 7] = [
        ("versions", a_version_only_when_the_content_changes_in),
        ("submissions", a_submission_is_a_stream_of_its_own_in),
        ("previous", previous_state_for_the_next_fetch_in),
        ("resume", runs_resume_without_duplicate_versions_in),
        ("changes", the_change_mark_names_the_sites_to_reindex_in),
        ("imports", warc_imports_resume_by_file_in),
        ("crawls", each_capture_belongs_to_its_crawl_in),
    ];
    for (name, test) in tests {
        let url = pg.create_db(name);
        test(&mut || Box::new(PgStore::open(&url).expect("open")));
    }
    // A database without a store, read: a clear error; opened for
    // writing: made, and opened again without a second migration.
    let url = pg.create_db("empty");
    match PgStore::open_read(&url) {
        Err(e) => assert!(e.to_string().contains("no botscope store"), "{e}"),
        Ok(_) => panic!("an empty database read as a store"),
    }
    drop(PgStore::open(&url).expect("open"));
    let s = PgStore::open_read(&url).expect("read");
    assert_eq!(
        s.stats().expect("stats").schema_version,
        botscope_store::PG_SCHEMA_VERSION
    );
    // Four writers at once, each its own connection: every attempt in,
    // one version per content, change marks all distinct and ordered.
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let url = url.clone();
            std::thread::spawn(move || {
                let mut s = PgStore::open(&url).expect("open");
                for b in 0..10 {
                    let batch: Vec<Attempt> = (0..20)
                        .map(|k| ok(&format!("h{w}-{b}-{k}.test"), 100 + b, "same body"))
                        .collect();
                    s.record(None, &batch).expect("record");
                }
            })
        })
        .collect();
    for w in writers {
        w.join().expect("writer");
    }
    let st = s.stats().expect("stats");
    assert_eq!(
        (st.sites, st.attempts, st.versions, st.bodies),
        (800, 800, 800, 1)
    );
    assert_eq!(s.change_mark().expect("mark"), 40, "one mark per batch");
    // Text a stranger sent may hold NUL, which PostgreSQL text cannot.
    let mut w = PgStore::open(&url).expect("open");
    let mut nul = failed("nul.test", 500, None);
    nul.error = Some("bad\0byte".into());
    w.record(None, &[nul]).expect("record NUL");
    // A server that is not there: a clear error naming it, no password.
    let gone = format!(
        "postgres://botscope:secret@127.0.0.1:{}/x",
        botscope_testkit::free_port()
    );
    let e = PgStore::open(&gone).err().expect("no server").to_string();
    assert!(
        e.contains("cannot connect") && e.contains("***") && !e.contains("secret"),
        "{e}"
    );
}

/// `store copy`: SQLite to PostgreSQL and back gives the same export; a
/// copy that stopped resumes; a destination holding another store is
/// refused untouched.
#[test]
fn copy_to_postgres_and_back() {
    use botscope_store::AnyStore;
    let pg = botscope_testkit::pg::Postgres::start();
    let a = temp("copy-a");
    {
        let mut s = SqliteStore::open(&a).expect("open");
        let run = import_run(&mut s, "copy");
        let mut batch = Vec::new();
        for i in 0..2_500i64 {
            let host = format!("h{}.test", i % 900);
            batch.push(if i % 7 == 0 {
                failed(&host, 100 + i, if i % 2 == 0 { Some(503) } else { None })
            } else {
                let mut x = ok(
                    &host,
                    100 + i,
                    &format!("User-agent: *\nDisallow: /{}\n", i % 300),
                );
                x.rank = Some(i as u64 % 50);
                x.redirects = vec![botscope_store::Hop {
                    url: format!("http://{host}/robots.txt"),
                    status: 301,
                }];
                x
            });
        }
        s.record(Some(run), &batch).expect("record");
        s.finish_run(run, 9_000).expect("finish");
    }
    let export = |s: &AnyStore| {
        let mut out = Vec::new();
        botscope_store::export_jsonl(s, &mut out).expect("export");
        out
    };
    let src = AnyStore::open_read(&a).expect("read");
    let want = export(&src);
    assert!(want.len() > 10_000);
    let url = pg.create_db("copy");
    let pg_path = PathBuf::from(&url);
    let mut dst = AnyStore::open(&pg_path).expect("pg");
    let done = botscope_store::copy(&src, &mut dst, &mut |_, _| {}).expect("copy");
    assert!(done.to_string().starts_with("copied sites 900"), "{done}");
    assert_eq!(export(&dst), want);
    assert_eq!(
        src.stats().expect("stats").attempts,
        dst.stats().expect("stats").attempts
    );
    // A copy that stopped: the last rows of two tables gone.
    {
        let mut c = postgres::Client::connect(&url, postgres::NoTls).expect("connect");
        c.batch_execute(
            "DELETE FROM versions WHERE id > (SELECT max(id) - 100 FROM versions);
             DELETE FROM attempts WHERE id > 1000;",
        )
        .expect("cut");
    }
    let again = botscope_store::copy(&src, &mut dst, &mut |_, _| {}).expect("resume");
    let resumed = again.to_string();
    assert!(
        resumed.contains("attempts 1500 (resumed after 1000)"),
        "{resumed}"
    );
    assert!(resumed.contains("versions 100 (resumed after"), "{resumed}");
    assert!(resumed.contains("sites 0"), "{resumed}");
    assert_eq!(export(&dst), want);
    // New rows after a copy take new ids.
    let mut w = AnyStore::open(&pg_path).expect("pg");
    w.record(None, &[ok("new.test", 20_000, "new")])
        .expect("record after copy");
    // And back into a new SQLite file: the same export.
    let b = temp("copy-b");
    let mut back = AnyStore::open(&b).expect("sqlite");
    let src2 = AnyStore::open_read(&pg_path).expect("read pg");
    botscope_store::copy(&src2, &mut back, &mut |_, _| {}).expect("copy back");
    let got2 = String::from_utf8(export(&back)).expect("utf-8");
    let (with_new, without): (Vec<&str>, Vec<&str>) =
        got2.lines().partition(|l| l.contains("\"new.test\""));
    assert_eq!(with_new.len(), 1);
    assert_eq!(
        without.join("\n") + "\n",
        String::from_utf8(want).expect("utf-8")
    );
    // Another store as the destination: refused, nothing written.
    let other = temp("copy-other");
    {
        let mut s = SqliteStore::open(&other).expect("open");
        s.record(None, &[ok("zzz.test", 1, "other")])
            .expect("record");
    }
    let mut o = AnyStore::open(&other).expect("open");
    let e = botscope_store::copy(&src, &mut o, &mut |_, _| {})
        .expect_err("refused")
        .to_string();
    assert!(e.contains("another store"), "{e}");
    drop(o);
    let o = AnyStore::open_read(&other).expect("read");
    let st = o.stats().expect("stats");
    assert_eq!((st.sites, st.attempts), (1, 1));
}

/// The frontier: hosts added once with their ranks, claimed by rank with
/// SKIP LOCKED (two workers never get the same host), leases renewed,
/// an expired lease's hosts claimed again, releases scheduled, a round
/// that ends only when nothing is due or leased.
#[test]
fn the_frontier_shares_hosts_between_workers() {
    let pg = botscope_testkit::pg::Postgres::start();
    let url = pg.create_db("frontier");
    frontier_shares_hosts(move || PgStore::open(&url).expect("open"));
}

/// The in-memory frontier behaves as PostgreSQL's, on the same test.
#[test]
fn the_in_memory_frontier_shares_hosts_between_workers() {
    let m = botscope_store::MemFrontier::new();
    frontier_shares_hosts(move || m.clone());
}

/// `open` connects to one frontier (each call a new connection).
fn frontier_shares_hosts<F: Frontier>(open: impl Fn() -> F + Clone + Send + 'static) {
    use std::time::Duration;
    let s = open();
    let hosts: Vec<(Option<u64>, String)> = (0..1_000u64)
        .map(|i| (Some(1_000 - i), format!("h{i}.test")))
        .collect();
    assert_eq!(s.frontier_add(&hosts, 100).expect("add"), 1_000);
    assert_eq!(s.frontier_add(&hosts[..10], 100).expect("again"), 0);
    let st = s.frontier_stats(100).expect("stats");
    assert_eq!((st.hosts, st.due, st.never_fetched), (1_000, 1_000, 1_000));
    // Best rank first.
    let lease = Duration::from_secs(60);
    let first = s.frontier_claim("w1", 5, lease, 100).expect("claim");
    assert_eq!(first[0].host, "h999.test");
    assert_eq!(first[0].rank, Some(1));
    // Four workers claiming at once never share a host. They start
    // together once connected, and each one's first claim is in before
    // any goes on, so that a slow start cannot leave one without hosts.
    let (connected, first_in) = (
        std::sync::Arc::new(std::sync::Barrier::new(4)),
        std::sync::Arc::new(std::sync::Barrier::new(4)),
    );
    let threads: Vec<_> = (0..4)
        .map(|w| {
            let open = open.clone();
            let (connected, first_in) = (connected.clone(), first_in.clone());
            std::thread::spawn(move || {
                let s = open();
                let mut mine = Vec::new();
                connected.wait();
                for round in 0.. {
                    if round == 1 {
                        first_in.wait();
                    }
                    let c = s
                        .frontier_claim(&format!("t{w}"), 37, Duration::from_secs(60), 100)
                        .expect("claim");
                    if c.is_empty() && round > 0 {
                        break;
                    }
                    mine.extend(c.into_iter().map(|c| c.host));
                }
                mine
            })
        })
        .collect();
    let claims: Vec<Vec<String>> = threads
        .into_iter()
        .map(|t| t.join().expect("worker"))
        .collect();
    let mut all: Vec<String> = claims.concat();
    let n = all.len();
    all.sort();
    all.dedup();
    assert_eq!((n, all.len()), (995, 995), "each host once");
    assert!(
        claims.iter().all(|c| !c.is_empty()),
        "every worker got some"
    );
    let st = s.frontier_stats(100).expect("stats");
    assert_eq!((st.due, st.leased), (0, 1_000));
    assert!(!s.frontier_round_over(100).expect("round"));
    // w1 renews the hosts it works on (one it lost track of is left to
    // run out); t0..t3 "die". After the lease, their hosts are due again.
    let mine: Vec<&str> = first[..4].iter().map(|c| c.host.as_str()).collect();
    assert_eq!(s.frontier_renew("w1", &mine, lease, 150).expect("renew"), 4);
    assert_eq!(
        s.frontier_renew("t0", &mine, lease, 150).expect("not t0's"),
        0
    );
    assert_eq!(s.frontier_stats(170).expect("stats").expired_leases, 996);
    let again = s.frontier_claim("w2", 2_000, lease, 170).expect("claim");
    assert_eq!(again.len(), 996);
    assert!(
        again
            .iter()
            .all(|c| first[..4].iter().all(|f| f.host != c.host)),
        "w1's renewed leases are kept"
    );
    assert!(again.iter().any(|c| c.host == first[4].host));
    // A late release by a dead worker does not touch w2's lease.
    let late = botscope_store::Done {
        host: again[0].host.clone(),
        time: 171,
        failed: false,
        changed: true,
        retry_at: None,
        address: None,
    };
    assert_eq!(
        s.frontier_release("t0", &[late], botscope_store::MONTH)
            .expect("release"),
        0
    );
    // Releases: scheduled by rank, change and failure.
    let done: Vec<botscope_store::Done> = again
        .iter()
        .enumerate()
        .map(|(i, c)| botscope_store::Done {
            host: c.host.clone(),
            time: 200,
            failed: i % 2 == 0,
            changed: false,
            retry_at: None,
            address: None,
        })
        .collect();
    assert_eq!(
        s.frontier_release("w2", &done, botscope_store::MONTH)
            .expect("release"),
        996
    );
    let w1: Vec<botscope_store::Done> = first
        .iter()
        .map(|c| botscope_store::Done {
            host: c.host.clone(),
            time: 200,
            failed: false,
            changed: true,
            retry_at: Some(200 + 90 * 86_400),
            address: None,
        })
        .collect();
    s.frontier_release("w1", &w1, botscope_store::MONTH)
        .expect("release");
    assert!(s.frontier_round_over(200).expect("round"));
    let st = s.frontier_stats(200).expect("stats");
    assert_eq!(
        (st.leased, st.due, st.never_fetched, st.failing),
        (0, 0, 0, 498)
    );
    // Addresses: one holder at a time; the next waits for the last one's
    // end plus its gap; an expired holder is taken over and its late
    // release changes nothing.
    let ip = "192.0.2.7";
    let ms = Duration::from_millis;
    let minute = Duration::from_secs(60);
    assert_eq!(
        s.address_acquire("w1", ip, minute, true).expect("acquire"),
        Ok(ms(0))
    );
    assert_eq!(
        s.address_acquire("w2", ip, minute, false).expect("acquire"),
        Err("w1".to_owned())
    );
    assert!(
        s.addresses_wanted("w1", minute).expect("wanted").is_empty(),
        "an ask that hands its host over does not want the address"
    );
    assert_eq!(
        s.address_acquire("w2", ip, minute, true).expect("acquire"),
        Err("w1".to_owned())
    );
    assert_eq!(
        s.addresses_wanted("w1", Duration::from_secs(2))
            .expect("wanted"),
        vec![ip.to_owned()],
        "the holder hears that w2 asked"
    );
    assert!(s.addresses_wanted("w2", minute).expect("wanted").is_empty());
    assert_eq!(
        s.address_acquire("w1", ip, minute, true).expect("again"),
        Ok(ms(0))
    );
    assert!(s.address_release("w1", ip, ms(400)).expect("release"));
    let wait = s.address_acquire("w2", ip, ms(300), true).expect("acquire");
    assert!(
        wait.as_ref().is_ok_and(|&w| w > ms(200) && w <= ms(400)),
        "the gap of the last holder: {wait:?}"
    );
    std::thread::sleep(ms(450));
    assert_eq!(
        s.address_acquire("w1", ip, minute, true)
            .expect("take over"),
        Ok(ms(0)),
        "w2's hold ran out, and so did the gap"
    );
    assert!(!s.address_release("w2", ip, minute).expect("late release"));
    assert!(s.address_release("w1", ip, ms(5_000)).expect("release"));
    let wait = s.address_acquire("w3", ip, minute, true).expect("acquire");
    assert!(wait.as_ref().is_ok_and(|&w| w > ms(4_000)), "{wait:?}");
    assert!(s.address_release("w3", ip, ms(0)).expect("release"));
    let wait = s.address_acquire("w1", ip, minute, true).expect("acquire");
    assert!(
        wait.as_ref().is_ok_and(|&w| w > ms(4_000)),
        "never earlier than a release asked: {wait:?}"
    );
    // Top-thousand hosts every 7.5 days (a quarter month); the Retry-After
    // ones in 90 days.
    assert_eq!(st.due_within[1], 0);
    assert_eq!(st.due_within[2], 996);
}

#[test]
fn workers_hand_hosts_over_say_who_is_at_work_and_leave() {
    let pg = botscope_testkit::pg::Postgres::start();
    let url = pg.create_db("hand_over");
    hand_hosts_over(&PgStore::open(&url).expect("open"));
}

/// The in-memory frontier hands hosts over as PostgreSQL's does.
#[test]
fn the_in_memory_frontier_hands_hosts_over() {
    hand_hosts_over(&botscope_store::MemFrontier::new());
}

fn hand_hosts_over(s: &impl Frontier) {
    use std::time::Duration;
    let minute = Duration::from_secs(60);
    assert_eq!(s.workers_beat("w1", minute).expect("beat"), ["w1"]);
    assert_eq!(s.workers_beat("w2", minute).expect("beat"), ["w1", "w2"]);
    std::thread::sleep(Duration::from_millis(30));
    assert_eq!(
        s.workers_beat("w2", Duration::from_millis(20))
            .expect("beat"),
        ["w2"],
        "w1 fell silent"
    );
    let hosts: Vec<(Option<u64>, String)> = (0..3).map(|i| (None, format!("h{i}.test"))).collect();
    s.frontier_add(&hosts, 100).expect("add");
    let claimed = s.frontier_claim("w1", 10, minute, 100).expect("claim");
    assert_eq!(claimed.len(), 3);
    let over = |h: &str| (h.to_owned(), "w2".to_owned(), "192.0.2.9".to_owned());
    assert_eq!(
        s.frontier_forward("w1", &[over("h0.test"), over("h1.test")], minute, 100)
            .expect("forward"),
        2
    );
    assert_eq!(
        s.frontier_forward("w3", &[over("h2.test")], minute, 100)
            .expect("not w3's"),
        0
    );
    let taken = s
        .frontier_take_forwarded("w2", 1, minute, 101)
        .expect("take");
    assert_eq!(taken.len(), 1);
    assert_eq!(taken[0].address.as_deref(), Some("192.0.2.9"));
    assert!(
        s.frontier_claim("w2", 10, minute, 101)
            .expect("claim")
            .is_empty()
    );
    // w2 leaves: the host handed to it and not taken is due again for
    // anyone at once; the one it took stays its own.
    assert_eq!(s.workers_leave("w2", 102).expect("leave"), 1);
    assert_eq!(s.workers_beat("w1", minute).expect("beat"), ["w1"]);
    let again = s.frontier_claim("w1", 10, minute, 102).expect("claim");
    assert_eq!(again.len(), 1);
    assert_ne!(again[0].host, taken[0].host);
    assert!(again[0].address.is_none());
    // Released with the address it was asked at, a host is claimed next
    // round only by the worker its address falls to, among those at work.
    let ip: std::net::IpAddr = "192.0.2.9".parse().expect("ip");
    let done = botscope_store::Done {
        host: again[0].host.clone(),
        time: 103,
        failed: false,
        changed: false,
        retry_at: None,
        address: Some(ip),
    };
    assert_eq!(s.frontier_release("w1", &[done], 0).expect("release"), 1);
    let workers = vec!["w1".to_owned(), "w2".to_owned()];
    let owner = botscope_store::address_owner(botscope_store::address_key(ip), &workers)
        .expect("owner")
        .to_owned();
    let other = if owner == "w1" { "w2" } else { "w1" };
    // (Due a minute after, with the leases of the others run out.)
    let host = again[0].host.clone();
    let got = |w: &str| -> Vec<String> {
        s.frontier_claim_among(w, &workers, 10, minute, 170)
            .expect("claim")
            .into_iter()
            .map(|c| c.host)
            .collect()
    };
    assert!(!got(other).contains(&host), "not {other}'s address");
    assert_eq!(got(&owner), [host]);
}

/// A WARC input of `bytes` named `name` (its crawl from the name).
fn warc_input(name: &str, bytes: Vec<u8>) -> botscope_store::WarcInput<'static> {
    botscope_store::WarcInput {
        name: name.into(),
        crawl: botscope_store::crawl_of(name),
        max_records: None,
        open: Box::new(move || {
            Ok(Box::new(std::io::Cursor::new(bytes)) as Box<dyn std::io::BufRead + Send>)
        }),
    }
}

/// Imports as Google reads robots.txt, undated records at 2033-05-18.
fn import_settings() -> botscope_store::ImportSettings {
    botscope_store::ImportSettings {
        policy: botscope_robotstxt::FetchPolicy::google(),
        now: 2_000_000_000,
        readers: 2,
    }
}

#[test]
fn each_capture_belongs_to_its_crawl() {
    use botscope_store::AnyStore;
    let path = temp("crawls");
    each_capture_belongs_to_its_crawl_in(&mut || Box::new(SqliteStore::open(&path).expect("open")));
    // Each crawl's sites are kept at import: a copy makes them again from
    // the attempts, and so does the migration of a store made before.
    let hosts = ["a.test".to_owned(), "c.test".to_owned()];
    let facts = |s: &dyn Store| {
        // The marks are the store's own: a copy or a migration gives
        // its own.
        let unmarked = |v: Vec<botscope_store::CrawlSites>| {
            v.into_iter()
                .map(|c| botscope_store::CrawlSites { changed: 0, ..c })
                .collect::<Vec<_>>()
        };
        let c = unmarked(s.crawl_sites(None).expect("crawls"));
        let h = unmarked(s.crawl_sites(Some(&hosts)).expect("crawls"));
        let sights = s.site("c.test").expect("site").expect("known").sights;
        (c, h, sights)
    };
    let want = facts(&SqliteStore::open_read(&path).expect("read"));
    assert_eq!(want.0.len(), 2);
    let copied = temp("crawls-copy");
    {
        let src = AnyStore::open_read(&path).expect("read");
        let mut dst = AnyStore::open(&copied).expect("open");
        botscope_store::copy(&src, &mut dst, &mut |_, _| {}).expect("copy");
    }
    assert_eq!(facts(&SqliteStore::open_read(&copied).expect("read")), want);
    {
        let c = rusqlite::Connection::open(&copied).expect("open");
        c.execute_batch(
            "DROP TABLE crawl_sites; DROP TABLE crawl_counts;
             ALTER TABLE versions DROP COLUMN absent; PRAGMA user_version = 4;",
        )
        .expect("downgrade");
    }
    assert_eq!(facts(&SqliteStore::open(&copied).expect("migrate")), want);
}

/// Two crawls imported, each file's captures in its crawl's run: the store
/// says which sites each crawl saw (every outcome), each site's last
/// capture per crawl and whether it found a file; a crawl that sees a
/// site's file again (the same version going on) still marks the site
/// changed, so that an index update learns of the crawl.
fn each_capture_belongs_to_its_crawl_in(open: Open<'_>) {
    use botscope_store::warc::write_record;
    let t = |s: &str| botscope_store::parse_time_arg(s).expect("time");
    let file = |captures: &[(&str, &str, u16, &str)]| {
        let mut warc = Vec::new();
        for (host, date, status, body) in captures {
            write_record(
                &mut warc,
                &[
                    ("WARC-Type", "response".into()),
                    ("WARC-Target-URI", format!("https://{host}/robots.txt")),
                    ("WARC-Date", (*date).to_owned()),
                ],
                format!(
                    "HTTP/1.1 {status} X\r\nContent-Length: {}\r\n\r\n{body}",
                    body.len()
                )
                .as_bytes(),
            )
            .expect("write");
        }
        warc
    };
    let input = warc_input;
    let how = import_settings();
    let run = NewRun {
        input: "import".into(),
        input_hash: content_hash(b"import"),
        user_agent: String::new(),
        hosts: 0,
        started: 1,
        crawl: None,
    };
    let (x, y, z) = (
        "User-agent: *\nDisallow: /x\n",
        "User-agent: *\nDisallow: /y\n",
        "User-agent: *\nDisallow: /z\n",
    );
    let a = file(&[
        ("a.test", "2024-03-01T00:00:00Z", 200, x),
        ("b.test", "2024-03-02T00:00:00Z", 404, "gone"),
        ("c.test", "2024-03-03T00:00:00Z", 200, y),
    ]);
    let b = file(&[
        ("a.test", "2024-05-01T00:00:00Z", 200, x),
        ("b.test", "2024-05-02T00:00:00Z", 200, z),
        ("c.test", "2024-05-03T00:00:00Z", 200, y),
        ("c.test", "2024-05-04T00:00:00Z", 404, "gone"),
    ]);
    let mut s = open();
    assert!(s.crawl_sites(None).expect("crawls").is_empty());
    let r = botscope_store::import_parallel(
        &mut *s,
        &run,
        &how,
        vec![input("crawl-data/CC-MAIN-2024-10/robotstxt/a.warc", a)],
        &mut |_| {},
        &mut |_| {},
    )
    .expect("import");
    assert!(r[0].damage.is_none());
    let mark = s.change_mark().expect("mark");
    botscope_store::import_parallel(
        &mut *s,
        &run,
        &how,
        vec![input("crawl-data/CC-MAIN-2024-18/robotstxt/b.warc", b)],
        &mut |_| {},
        &mut |_| {},
    )
    .expect("import");
    let crawls = s.crawl_sites(None).expect("crawls");
    let got: Vec<(&str, i64, i64, u64)> = crawls
        .iter()
        .map(|c| (c.crawl.as_str(), c.first, c.last, c.sites))
        .collect();
    assert_eq!(
        got,
        [
            ("CC-MAIN-2024-10", t("2024-03-01"), t("2024-03-03"), 3),
            ("CC-MAIN-2024-18", t("2024-05-01"), t("2024-05-04"), 3),
        ]
    );
    let hosts = [
        "b.test".to_owned(),
        "nowhere.test".to_owned(),
        "c.test".to_owned(),
    ];
    let of: Vec<(u64, Vec<usize>)> = s
        .crawl_sites(Some(&hosts))
        .expect("crawls")
        .into_iter()
        .map(|c| (c.sites, c.of_hosts))
        .collect();
    assert_eq!(of, [(2, vec![0, 2]), (2, vec![0, 2])]);
    // Each site's last capture per crawl.
    let mut sights = std::collections::BTreeMap::new();
    s.sites_changed(0, &mut |h| {
        let v: Vec<(String, i64, bool)> = h
            .sights
            .iter()
            .map(|c| (c.crawl.clone(), c.time, c.found))
            .collect();
        sights.insert(h.host, v);
        Ok(())
    })
    .expect("histories");
    let c = |crawl: &str, time: &str, found: bool| (crawl.to_owned(), t(time), found);
    assert_eq!(
        sights["a.test"],
        [
            c("CC-MAIN-2024-10", "2024-03-01", true),
            c("CC-MAIN-2024-18", "2024-05-01", true)
        ]
    );
    assert_eq!(
        sights["b.test"],
        [
            c("CC-MAIN-2024-10", "2024-03-02", false),
            c("CC-MAIN-2024-18", "2024-05-02", true)
        ]
    );
    assert_eq!(
        sights["c.test"],
        [
            c("CC-MAIN-2024-10", "2024-03-03", true),
            c("CC-MAIN-2024-18", "2024-05-04", false)
        ]
    );
    // The second crawl changed the versions of b.test (its first file)
    // and c.test (its file gone); a.test's goes on: the crawl itself is
    // marked changed, and lists the sites it found a file at, in byte
    // order.
    let mut changed = Vec::new();
    s.sites_changed(mark, &mut |h| {
        changed.push(h.host);
        Ok(())
    })
    .expect("changed");
    assert_eq!(changed, ["b.test", "c.test"]);
    let crawls = s.crawl_sites(None).expect("crawls");
    assert!(
        crawls
            .iter()
            .all(|c| c.changed <= s.change_mark().expect("mark"))
    );
    assert!(
        crawls
            .iter()
            .any(|c| c.crawl == "CC-MAIN-2024-18" && c.changed > mark)
    );
    let mut found = Vec::new();
    s.crawl_found("CC-MAIN-2024-18", &mut |h, t| {
        found.push((h.to_owned(), t));
        Ok(())
    })
    .expect("found");
    assert_eq!(
        found,
        [
            ("a.test".to_owned(), sights["a.test"][1].1),
            ("b.test".to_owned(), sights["b.test"][1].1)
        ]
    );
    // Each crawl's run is finished and named.
    assert_eq!(s.imports().expect("imports").len(), 2);
    // A crawl name with a control character is refused.
    let bad = NewRun {
        crawl: Some("CC\nMAIN".into()),
        ..run.clone()
    };
    assert!(s.begin_run(&bad).is_err());
}

#[test]
fn warc_imports_resume_by_file() {
    let path = temp("imports");
    warc_imports_resume_by_file_in(&mut || Box::new(SqliteStore::open(&path).expect("open")));
}

/// A WARC input's import stands in the store beside its records: an
/// import cut short resumes after the last batch stored (no capture twice),
/// one read to its end is passed over, and each keeps its crawl.
fn warc_imports_resume_by_file_in(open: Open<'_>) {
    use botscope_store::warc::write_record;
    let mut warc = Vec::new();
    let mut cuts = Vec::new();
    for i in 0..10 {
        let uri = format!("https://h{i}.test/robots.txt");
        write_record(
            &mut warc,
            &[
                ("WARC-Type", "request".into()),
                ("WARC-Target-URI", uri.clone()),
            ],
            b"GET /robots.txt HTTP/1.1\r\n\r\n",
        )
        .expect("write");
        let body = format!("User-agent: *\nDisallow: /{i}\n");
        write_record(
            &mut warc,
            &[
                ("WARC-Type", "response".into()),
                ("WARC-Target-URI", uri),
                ("WARC-Date", format!("2024-03-0{}T00:00:00Z", 1 + i % 9)),
            ],
            format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            )
            .as_bytes(),
        )
        .expect("write");
        cuts.push(warc.len());
    }
    let name = "crawl-data/CC-MAIN-2024-10/robotstxt/one.warc";
    let input = |bytes: Vec<u8>| warc_input(name, bytes);
    let how = import_settings();
    let mut s = open();
    let run = &NewRun {
        input: "import".into(),
        input_hash: content_hash(b"import"),
        user_agent: String::new(),
        hosts: 0,
        started: 1,
        crawl: None,
    };
    // Cut in the middle of the fifth capture: four stored, not finished.
    let cut = warc[..cuts[3] + 40].to_vec();
    let r = botscope_store::import_parallel(
        &mut *s,
        run,
        &how,
        vec![input(cut)],
        &mut |_| {},
        &mut |_| {},
    )
    .expect("import");
    assert!(r[0].damage.is_some());
    assert_eq!(r[0].counts.robots, 4);
    let marks = s.imports().expect("imports");
    assert_eq!(marks[name].records, 8);
    assert_eq!(marks[name].finished, None);
    assert_eq!(marks[name].crawl.as_deref(), Some("CC-MAIN-2024-10"));
    // The whole file: resumed after the eight records stored.
    let r = botscope_store::import_parallel(
        &mut *s,
        run,
        &how,
        vec![input(warc.clone())],
        &mut |_| {},
        &mut |_| {},
    )
    .expect("import");
    assert_eq!(
        (r[0].resumed_after, r[0].counts.robots, r[0].already),
        (8, 6, false)
    );
    assert!(r[0].damage.is_none());
    let st = s.stats().expect("stats");
    assert_eq!((st.attempts, st.versions), (10, 10), "no capture twice");
    let marks = s.imports().expect("imports");
    assert_eq!((marks[name].records, marks[name].robots), (20, 10));
    assert_eq!(marks[name].finished, Some(2_000_000_000));
    // Again: passed over.
    let r = botscope_store::import_parallel(
        &mut *s,
        run,
        &how,
        vec![input(warc)],
        &mut |_| {},
        &mut |_| {},
    )
    .expect("import");
    assert!(r[0].already);
    assert_eq!(s.stats().expect("stats").attempts, 10);
}
