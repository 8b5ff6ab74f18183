//! `botscope store`: WARC import, totals, export in three formats, and a
//! WARC round trip, on real robots.txt files (examples/robots).

use std::io::Write;
use std::path::Path;
use std::process::Output;

use serde_json::Value;

use crate::{root, run as botscope, scratch as dir};

pub(crate) fn record(out: &mut Vec<u8>, fields: &[(&str, &str)], block: &[u8]) {
    let mut head = String::from("WARC/1.0\r\n");
    for (k, v) in fields {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n", block.len()));
    let mut rec = head.into_bytes();
    rec.extend_from_slice(block);
    rec.extend_from_slice(b"\r\n\r\n");
    // One gzip member per record, as Common Crawl writes them.
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&rec).expect("gz");
    out.extend(gz.finish().expect("gz"));
}

/// The real files of examples/robots, by host, in host order.
pub(crate) fn example_files() -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(root().join("examples/robots"))
        .expect("examples/robots")
        .map(|e| {
            let p = e.expect("entry").path();
            let host = p.file_stem().expect("name").to_string_lossy().into_owned();
            (host, std::fs::read(&p).expect("read"))
        })
        .collect();
    files.sort();
    files
}

/// The real files, and a WARC of them as a crawl archive has them:
/// warcinfo, request and metadata records around each response, a 404,
/// a chunked response and a page that is not robots.txt.
pub(crate) fn sample_warc() -> (Vec<(String, Vec<u8>)>, Vec<u8>) {
    let mut files = example_files();
    let mut w = Vec::new();
    record(&mut w, &[("WARC-Type", "warcinfo")], b"software: test\r\n");
    for (i, (host, body)) in files.iter().enumerate() {
        let uri = format!("https://{host}/robots.txt");
        let date = format!("2024-03-0{}T10:00:00Z", i % 9 + 1);
        record(
            &mut w,
            &[("WARC-Type", "request"), ("WARC-Target-URI", &uri)],
            format!("GET /robots.txt HTTP/1.1\r\nHost: {host}\r\n\r\n").as_bytes(),
        );
        let mut block = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nETag: \"{i}\"\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )
        .into_bytes();
        block.extend_from_slice(body);
        record(
            &mut w,
            &[
                ("WARC-Type", "response"),
                ("WARC-Target-URI", &uri),
                ("WARC-Date", &date),
                ("WARC-IP-Address", "192.0.2.1"),
            ],
            &block,
        );
        record(
            &mut w,
            &[("WARC-Type", "metadata"), ("WARC-Target-URI", &uri)],
            b"fetchTimeMs: 12\r\n",
        );
    }
    record(
        &mut w,
        &[
            ("WARC-Type", "response"),
            ("WARC-Target-URI", "http://missing.test/robots.txt"),
            ("WARC-Date", "2024-03-01T00:00:00Z"),
        ],
        b"HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\n\r\n<h1>no</h1>",
    );
    record(
        &mut w,
        &[
            ("WARC-Type", "response"),
            ("WARC-Target-URI", "http://chunked.test/robots.txt"),
            ("WARC-Date", "2024-03-01T00:00:00Z"),
        ],
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\ne\r\nUser-agent: *\n\r\nd\r\nDisallow: /x\n\r\n0\r\n\r\n",
    );
    record(
        &mut w,
        &[
            ("WARC-Type", "response"),
            ("WARC-Target-URI", "http://page.test/index.html"),
        ],
        b"HTTP/1.1 200 OK\r\n\r\n<html></html>",
    );
    files.push((
        "chunked.test".into(),
        b"User-agent: *\nDisallow: /x\n".to_vec(),
    ));
    files.sort();
    (files, w)
}

fn export(db: &str, format: &str, out: &Path) -> Output {
    botscope(&[
        "store",
        "export",
        "--db",
        db,
        "--format",
        format,
        "--out",
        out.to_str().expect("utf-8"),
    ])
}

fn stats(db: &str) -> Value {
    let o = botscope(&["store", "stats", "--db", db, "--format", "json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).expect("stats json")
}

/// The sample WARC imported into `DIR/a.db`: the files, the store, and
/// what the import said.
fn import_sample(d: &Path) -> (Vec<(String, Vec<u8>)>, std::path::PathBuf, Output) {
    let (files, warc) = sample_warc();
    let input = d.join("crawl.warc.gz");
    std::fs::write(&input, &warc).expect("write");
    let db = d.join("a.db");
    let o = botscope(&[
        "store",
        "import",
        "--db",
        db.to_str().expect("utf-8"),
        "--format",
        "warc",
        input.to_str().expect("utf-8"),
    ]);
    (files, db, o)
}

#[test]
fn import_export_round_trip() {
    let d = dir("roundtrip");
    let (files, db, o) = import_sample(&d);
    let dbs = db.to_str().expect("utf-8");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains(&format!(
            "{} robots.txt responses imported",
            files.len() + 1
        )),
        "{err}"
    );
    let s = stats(dbs);
    assert_eq!(s["versions"], files.len() as u64);
    assert_eq!(s["sites"], files.len() as u64 + 1);
    assert_eq!(s["outcomes"]["allow-all"], 1);
    assert_eq!(s["outcomes"]["parse"], files.len() as u64);

    // JSON lines: every body back, byte for byte.
    let o = botscope(&["store", "export", "--db", dbs, "--format", "jsonl"]);
    assert!(o.status.success());
    let lines: Vec<Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    assert_eq!(lines.len(), files.len());
    for (v, (host, body)) in lines.iter().zip(&files) {
        assert_eq!(v["host"], host.as_str());
        let got = match v.get("body") {
            Some(Value::String(s)) => s.as_bytes().to_vec(),
            _ => panic!("{host}: no text body"),
        };
        assert_eq!(&got, body, "{host}");
        assert!(v["hash"].as_str().expect("hash").starts_with("blake3:"));
    }

    // Files.
    let out = d.join("files");
    let o = export(dbs, "files", &out);
    assert!(o.status.success());
    for (host, body) in &files {
        let entries: Vec<_> = std::fs::read_dir(out.join(host))
            .expect("host dir")
            .collect();
        assert_eq!(entries.len(), 1, "{host}");
        let p = entries[0].as_ref().expect("entry").path();
        assert_eq!(&std::fs::read(p).expect("read"), body, "{host}");
    }

    // WARC out, WARC in: the same versions in a new store.
    let w = d.join("out.warc.gz");
    let o = export(dbs, "warc", &w);
    assert!(o.status.success());
    let db2 = d.join("b.db");
    let db2s = db2.to_str().expect("utf-8");
    let o = botscope(&[
        "store",
        "import",
        "--db",
        db2s,
        "--format",
        "warc",
        w.to_str().expect("utf-8"),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o1 = botscope(&["store", "export", "--db", dbs, "--format", "jsonl"]);
    let o2 = botscope(&["store", "export", "--db", db2s, "--format", "jsonl"]);
    let strip = |o: &Output| -> Vec<Value> {
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(|l| {
                let mut v: Value = serde_json::from_str(l).expect("json");
                v["content_type"] = Value::Null;
                v
            })
            .collect()
    };
    assert_eq!(strip(&o1), strip(&o2));

    // Importing the same file again adds attempts, not versions.
    let o = botscope(&[
        "store",
        "import",
        "--db",
        dbs,
        "--format",
        "warc",
        d.join("crawl.warc.gz").to_str().expect("utf-8"),
    ]);
    assert!(o.status.success());
    assert_eq!(stats(dbs)["versions"], files.len() as u64);
}

#[test]
fn damaged_and_bad_inputs() {
    let d = dir("bad");
    let (_, warc) = sample_warc();
    // Cut in the middle: the records before the damage are imported, exit 3.
    let cut = d.join("cut.warc.gz");
    std::fs::write(&cut, &warc[..warc.len() * 2 / 3]).expect("write");
    let db = d.join("a.db");
    let dbs = db.to_str().expect("utf-8");
    let o = botscope(&[
        "store",
        "import",
        "--db",
        dbs,
        "--format",
        "warc",
        cut.to_str().expect("utf-8"),
    ]);
    assert_eq!(
        o.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let n = stats(dbs)["versions"].as_u64().expect("versions");
    assert!(n > 0, "{n}");

    // Not a WARC file.
    let junk = d.join("junk.warc");
    std::fs::write(&junk, b"\x00\x01binary junk\xff\xfe").expect("write");
    let o = botscope(&[
        "store",
        "import",
        "--db",
        dbs,
        "--format",
        "warc",
        junk.to_str().expect("utf-8"),
    ]);
    assert_eq!(o.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not a WARC record"));

    // A store that is not one.
    let notdb = d.join("not.db");
    std::fs::write(&notdb, vec![b'x'; 4096]).expect("write");
    for args in [
        vec!["store", "stats", "--db", notdb.to_str().expect("utf-8")],
        vec![
            "store",
            "import",
            "--db",
            notdb.to_str().expect("utf-8"),
            "--format",
            "warc",
            cut.to_str().expect("utf-8"),
        ],
    ] {
        let o = botscope(&args);
        assert_eq!(o.status.code(), Some(2));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("not a botscope store"), "{err}");
        assert!(!err.contains("panicked"));
    }
    let o = botscope(&[
        "store",
        "stats",
        "--db",
        d.join("none.db").to_str().expect("utf-8"),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no such store"));
}

/// `store export --format parquet`, read back by pyarrow and by DuckDB:
/// the rows, values and types of the JSON-lines export, Zstd, and a body
/// that is not UTF-8 in `body_binary`.
#[test]
fn parquet_export_reads_back_in_pyarrow_and_duckdb() {
    let d = dir("parquet");
    let (files, db, o) = import_sample(&d);
    let dbs = db.to_str().expect("utf-8");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // A file whose bytes are not UTF-8 (Latin-1), imported from a directory.
    let latin = d.join("latin");
    std::fs::create_dir_all(&latin).expect("dir");
    std::fs::write(
        latin.join("latin1.example.txt"),
        b"User-agent: *\nDisallow: /caf\xe9\n",
    )
    .expect("write");
    let o = botscope(&[
        "store",
        "import",
        "--db",
        dbs,
        "--format",
        "files",
        latin.to_str().expect("utf-8"),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    let o = botscope(&["store", "export", "--db", dbs, "--format", "jsonl"]);
    assert!(o.status.success());
    let lines: Vec<Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    assert_eq!(lines.len(), files.len() + 1);

    let out = d.join("versions.parquet");
    let o = export(dbs, "parquet", &out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let got = crate::python_json("read_parquet.py", &out);
    let rows = got["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), lines.len());
    let secs = |v: &Value| {
        jiff::Timestamp::strptime(
            "%Y-%m-%dT%H:%M:%S%:z",
            v.as_str().expect("time").replace('Z', "+00:00"),
        )
        .expect("rfc3339")
        .as_second()
    };
    for (r, l) in rows.iter().zip(&lines) {
        for k in ["host", "url", "hash", "content_type", "body", "body_base64"] {
            let want = &l[k];
            let have = if k == "body_base64" {
                &r["body_binary"]
            } else {
                &r[k]
            };
            assert_eq!(have, want, "{k} of {}", l["host"]);
        }
        assert_eq!(r["first_seen"], secs(&l["first_seen"]), "{}", l["host"]);
        assert_eq!(r["last_seen"], secs(&l["last_seen"]), "{}", l["host"]);
    }
    let latin = rows
        .iter()
        .find(|r| r["host"] == "latin1.example")
        .expect("the Latin-1 file");
    assert_eq!(
        (&latin["body"], &latin["source"], &latin["status"]),
        (&Value::Null, &Value::from("import"), &Value::Null)
    );
    let fetched = rows
        .iter()
        .find(|r| r["source"] == "warc")
        .expect("a WARC version");
    assert_eq!(
        (
            &fetched["status"],
            &fetched["outcome"],
            &fetched["truncated"]
        ),
        (
            &Value::from(200),
            &Value::from("parse"),
            &Value::from(false)
        )
    );
    assert_eq!(got["codecs"], serde_json::json!(["ZSTD"]));
    assert_eq!(got["row_groups"], 1);
    let schema: Vec<(String, String)> = got["schema"]
        .as_array()
        .expect("schema")
        .iter()
        .map(|f| {
            (
                f[0].as_str().expect("name").to_owned(),
                f[1].as_str().expect("type").to_owned(),
            )
        })
        .collect();
    assert_eq!(
        schema.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
        [
            "host",
            "url",
            "first_seen",
            "last_seen",
            "hash",
            "content_type",
            "body",
            "body_binary",
            "status",
            "outcome",
            "truncated",
            "source"
        ]
    );
    assert_eq!(schema[2].1, "timestamp[ms, tz=UTC]");
    // DuckDB: the same rows, the bodies' text, the types a query sees.
    let duck = &got["duckdb"];
    assert_eq!(duck["rows"], lines.len());
    assert_eq!(duck["bodies"], files.len());
    assert_eq!(duck["binary"], 1);
    assert_eq!(duck["hosts"], files.len() + 1);
    let chars: usize = files
        .iter()
        .map(|(_, b)| String::from_utf8_lossy(b).chars().count())
        .sum();
    assert_eq!(duck["body_chars"], chars);
    assert_eq!(duck["types"]["first_seen"], "TIMESTAMP WITH TIME ZONE");
    assert_eq!(duck["types"]["status"], "USMALLINT");
    // No --out: refused, nothing written.
    let o = botscope(&["store", "export", "--db", dbs, "--format", "parquet"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--out FILE"));
}

/// Many WARC files at once, read on reader threads: plain and gzip, one
/// cut short (reported for that file, the others whole, exit 3), the same
/// captures in several files stored once; a missing file is refused before
/// the store is touched.
#[test]
fn many_warc_files_import_together() {
    let d = dir("warc-many");
    // The sample is gzip, a member per record (as Common Crawl writes).
    let (files, gz) = sample_warc();
    let mut warc = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(&gz[..]), &mut warc)
        .expect("gunzip");
    let plain = d.join("a.warc");
    std::fs::write(&plain, &warc).expect("write");
    let zipped = d.join("b.warc.gz");
    std::fs::write(&zipped, &gz).expect("write");
    let cut = d.join("c.warc.gz");
    std::fs::write(&cut, &gz[..gz.len() / 2]).expect("write");
    let db = d.join("many.db");
    let dbs = db.to_str().expect("utf-8");
    let arg = |p: &Path| p.to_str().expect("utf-8").to_owned();
    // `store import --format warc` of these files into `db`.
    let import = |db: &str, files: &[&Path]| {
        let mut args = vec!["store", "import", "--db", db, "--format", "warc"]
            .into_iter()
            .map(str::to_owned)
            .collect::<Vec<_>>();
        args.extend(files.iter().map(|f| arg(f)));
        botscope(&args.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let missing = d.join("nowhere.warc.gz");
    let o = import(dbs, &[&plain, &missing]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("nowhere.warc.gz"));
    assert!(!db.exists(), "nothing was written");
    let o = import(dbs, &[&plain, &zipped, &cut]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(
        err.contains("c.warc.gz") && err.contains("the records before it are imported"),
        "{err}"
    );
    assert!(err.contains("(3 files, "), "{err}");
    let s = stats(dbs);
    assert_eq!(s["versions"], files.len() as u64, "each content once");
    assert_eq!(s["sites"], files.len() as u64 + 1);
    // Read twice in full, and the start of the third.
    let read: u64 = err
        .split(" records read")
        .next()
        .and_then(|x| x.rsplit(['\n', ' ']).next())
        .and_then(|n| n.parse().ok())
        .expect("records read");
    let one = {
        let single = d.join("one.db");
        let o = import(single.to_str().expect("utf-8"), &[&plain]);
        assert!(o.status.success());
        String::from_utf8_lossy(&o.stderr)
            .split(" records read")
            .next()
            .and_then(|x| x.rsplit(['\n', ' ']).next())
            .and_then(|n| n.parse::<u64>().ok())
            .expect("records read")
    };
    assert!(read > 2 * one && read < 3 * one, "{read} of {one} × 3");
    // Again: the files read to their end are passed over, the cut one
    // read again from where its import stopped; nothing stored twice.
    let attempts = stats(dbs)["attempts"].clone();
    let o = import(dbs, &[&plain, &zipped, &cut]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(
        err.contains("2 files were imported before: passed over"),
        "{err}"
    );
    assert!(err.contains("c.warc.gz: resumed after the "), "{err}");
    assert_eq!(stats(dbs)["attempts"], attempts);
}

/// A crawl's list of WARC files, as Common Crawl publishes it
/// (`robotstxt.paths.gz`: paths relative to its data server), fetched from
/// a server on loopback: every listed file imported, a missing one
/// reported for itself (exit 3), and the next run passes over what is in.
#[test]
fn a_list_of_warc_urls_imports_from_a_server() {
    let d = dir("warc-list");
    let (files, gz) = sample_warc();
    let a = "crawl-data/CC-MAIN-2024-10/segments/1/robotstxt/a.warc.gz";
    let b = "crawl-data/CC-MAIN-2024-10/segments/2/robotstxt/b.warc.gz";
    let server = botscope_testkit::ipdb::FileServer::start(
        [(format!("/{a}"), gz.clone()), (format!("/{b}"), gz.clone())]
            .into_iter()
            .collect(),
    );
    let mut paths = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    writeln!(
        paths,
        "{a}\n{b}\ncrawl-data/CC-MAIN-2024-10/segments/3/robotstxt/gone.warc.gz"
    )
    .expect("list");
    let list = d.join("robotstxt.paths.gz");
    std::fs::write(&list, paths.finish().expect("gzip")).expect("write");
    let db = d.join("list.db");
    let dbs = db.to_str().expect("utf-8");
    let base = format!("{}/", server.url());
    let import_with = |extra: &[&str]| {
        let mut args = vec![
            "store",
            "import",
            "--db",
            dbs,
            "--format",
            "warc",
            "--list",
            list.to_str().expect("utf-8"),
            "--base",
            &base,
        ];
        args.extend_from_slice(extra);
        botscope(&args)
    };
    // Loopback is refused as every other fetch refuses it, in words that
    // name the flag, and nothing is asked of the server.
    let o = import_with(&[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(
        err.contains("(loopback)") && err.contains("--allow-private"),
        "{err}"
    );
    assert_eq!(server.hits(), 0, "{err}");
    let import = || import_with(&["--allow-private"]);
    let o = import();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(err.contains("gone.warc.gz") && err.contains("404"), "{err}");
    assert!(err.contains("(3 files, "), "{err}");
    let first = stats(dbs);
    assert_eq!(first["versions"], files.len() as u64, "{first}");
    let hits = server.hits();
    let o = import();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("2 files were imported before: passed over"),
        "{err}"
    );
    assert_eq!(
        server.hits(),
        hits + 1,
        "only the missing file is asked again"
    );
    assert_eq!(stats(dbs)["attempts"], first["attempts"]);
}

/// A server whose WARC file does not end where a crawl's would: each URL
/// is stopped at the records, bytes or time its flags allow, with words
/// that say which, the records before it kept, exit 3.
#[test]
fn a_warc_url_is_stopped_at_its_limits() {
    let d = dir("warc-limits");
    let (_, gz) = sample_warc();
    // The same file many times over: far more records than the caps let in.
    let endless: Vec<u8> = gz.repeat(200);
    let server = botscope_testkit::ipdb::FileServer::start(
        [("/endless.warc.gz".to_owned(), endless)]
            .into_iter()
            .collect(),
    );
    let url = format!("{}/endless.warc.gz", server.url());
    let db = d.join("limits.db");
    let dbs = db.to_str().expect("utf-8");
    let import_into = |db: &str, flags: &[&str]| {
        let mut args = vec![
            "store",
            "import",
            "--db",
            db,
            "--format",
            "warc",
            "--allow-private",
        ];
        args.extend_from_slice(flags);
        args.push(&url);
        botscope(&args)
    };
    let import = |flags: &[&str]| import_into(dbs, flags);
    let o = import(&["--max-records", "10"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(err.contains("stopped after 10 records"), "{err}");
    assert!(err.contains("10 records read"), "{err}");
    let d2 = d.join("bytes.db");
    let o = import_into(d2.to_str().expect("utf-8"), &["--max-download", "64KiB"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(err.contains("stopped after 64 KiB"), "{err}");
}

/// `--out` onto a symbolic link where a directory is wanted (`store
/// export --format files`, `bots export --format plain`): refused in words
/// that say what is there, the link and its target untouched, exit 2.
#[cfg(unix)]
#[test]
fn out_onto_a_link_says_what_is_there() {
    let d = dir("out-link");
    let (_, db, _) = import_sample(&d);
    let target = d.join("target.txt");
    std::fs::write(&target, b"keep\n").expect("write");
    let link = d.join("link");
    std::os::unix::fs::symlink(&target, &link).expect("link");
    let dangling = d.join("dangling");
    std::os::unix::fs::symlink(d.join("nowhere"), &dangling).expect("link");
    let verdicts = d.join("verdicts.jsonl");
    std::fs::write(
        &verdicts,
        botscope(&[
            "verify",
            "66.249.66.1",
            "--ua",
            "Googlebot/2.1",
            "--format",
            "json",
        ])
        .stdout,
    )
    .expect("write");
    for (out, want) in [
        (&link, "which is not a directory"),
        (&dangling, "which does not exist"),
    ] {
        for o in [
            export(db.to_str().expect("utf-8"), "files", out),
            botscope(&[
                "bots",
                "export",
                "--verdicts",
                verdicts.to_str().expect("utf-8"),
                "--format",
                "plain",
                "--out",
                out.to_str().expect("utf-8"),
            ]),
        ] {
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{err}");
            assert!(
                err.contains(want) && err.contains("give a directory"),
                "{err}"
            );
            assert!(!err.contains("os error"), "{err}");
        }
    }
    assert_eq!(std::fs::read(&target).expect("read"), b"keep\n");
    assert!(!d.join("nowhere").exists());
}
