//! The SQLite store on real files.

use std::path::PathBuf;

use botscope_store::{Attempt, Headers, NewRun, SqliteStore, Store, StoreError, content_hash};

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("botscope-store-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir.join("store.db")
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
fn import_run(s: &mut SqliteStore, input: &str) -> botscope_store::RunId {
    s.begin_run(&NewRun {
        input: input.into(),
        input_hash: content_hash(input.as_bytes()),
        user_agent: String::new(),
        hosts: 0,
        started: 3_000,
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

fn versions(s: &SqliteStore) -> Vec<(String, i64, i64, String)> {
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
    let mut s = SqliteStore::open(&path).expect("open");
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
        versions(&s),
        vec![
            ("a.test".into(), 100, 200, "A".into()),
            ("a.test".into(), 300, 350, "B".into()),
            ("a.test".into(), 400, 400, "A".into()),
            ("b.test".into(), 400, 400, "A".into()),
        ]
    );
    let st = s.stats().expect("stats");
    assert_eq!(
        (st.sites, st.attempts, st.versions, st.bodies),
        (2, 7, 4, 2)
    );
    assert_eq!(st.body_bytes, 2);
    assert_eq!(st.sites_with_robots_txt, 2);
    assert_eq!(st.outcomes.get("parse"), Some(&2));
    // An older record (an import) joins the version it belongs to.
    s.record(None, &[ok("a.test", 50, "A")]).expect("record");
    assert_eq!(versions(&s)[0], ("a.test".into(), 50, 200, "A".into()));
    assert_eq!(s.stats().expect("stats").versions, 4);
}

#[test]
fn previous_state_for_the_next_fetch() {
    let path = temp("previous");
    let mut s = SqliteStore::open(&path).expect("open");
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
    let run = NewRun {
        input: "hosts.txt".into(),
        input_hash: content_hash(b"a.test\nb.test\n"),
        user_agent: "botscope-test".into(),
        hosts: 2,
        started: 10,
    };
    {
        let mut s = SqliteStore::open(&path).expect("open");
        let id = s.begin_run(&run).expect("run");
        s.record(Some(id), &[ok("a.test", 100, "A")])
            .expect("record");
        // Dropped without finishing: a crash.
    }
    let mut s = SqliteStore::open(&path).expect("reopen");
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
    assert!(matches!(
        SqliteStore::open_read(&temp("missing")),
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

    let mut t = SqliteStore::open(&temp("warc-b")).expect("open");
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
    let mut u = SqliteStore::open(&temp("warc-c")).expect("open");
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

    let mut t = SqliteStore::open(&temp("warc-std-b")).expect("open");
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
