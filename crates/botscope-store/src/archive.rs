//! Versions in and out of the store over plain readers and writers: WARC
//! responses in (each robots.txt response an attempt, its outcome from the
//! fetch policy), and every version out as JSON lines, files or WARC.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::Path;
use std::time::{Duration, UNIX_EPOCH};

use base64::Engine;
use botscope_robotstxt::{FetchAction, FetchPolicy, FetchResponse, decide_fetch};

use crate::warc::{self, Next, Reader};
use crate::{Attempt, Headers, ImportMark, NewRun, Result, RunId, Store, StoreError, hex};

/// Attempts per store transaction when importing.
const BATCH: usize = 5000;

/// `2024-03-01T10:00:00Z`.
pub(crate) fn rfc3339(t: i64) -> String {
    jiff::Timestamp::from_second(t).map_or_else(|_| t.to_string(), |ts| ts.to_string())
}

fn parse_time(s: &str) -> Option<i64> {
    s.trim()
        .parse::<jiff::Timestamp>()
        .ok()
        .map(|t| t.as_second())
}

/// Host and path of an `http(s)://host[:port]/path` URI.
pub fn host_and_path(uri: &str) -> Option<(String, &str)> {
    let uri = uri.trim().trim_start_matches('<').trim_end_matches('>');
    let rest = uri
        .strip_prefix("https://")
        .or_else(|| uri.strip_prefix("http://"))?;
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let authority = authority.rsplit('@').next().unwrap_or(authority);
    let host = if let Some(v6) = authority.strip_prefix('[') {
        v6.split(']').next()?.to_owned()
    } else {
        authority.split(':').next()?.to_owned()
    };
    (!host.is_empty()).then(|| {
        (
            host.to_ascii_lowercase(),
            if path.is_empty() { "/" } else { path },
        )
    })
}

/// Counts of an import.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Imported {
    /// Records read.
    pub records: u64,
    /// robots.txt responses imported.
    pub robots: u64,
    /// Other records (requests, metadata, other URLs).
    pub other: u64,
    /// Records skipped (too large, malformed header).
    pub skipped: u64,
    /// robots.txt response records without a readable HTTP response.
    pub bad_http: u64,
}

impl std::fmt::Display for Imported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} records read: {} robots.txt responses imported, {} other records, {} skipped, {} unreadable",
            self.records, self.robots, self.other, self.skipped, self.bad_http
        )
    }
}

/// Imports WARC streams into one run of a store, in batches.
pub struct Importer<'s, S: Store + ?Sized> {
    store: &'s mut S,
    run: RunId,
    policy: FetchPolicy,
    now: i64,
    batch: Vec<Attempt>,
    /// What was read so far.
    pub counts: Imported,
}

impl<'s, S: Store + ?Sized> Importer<'s, S> {
    /// Imports into `run`; responses are judged by `policy`; records
    /// without a date are dated `now`.
    pub fn new(store: &'s mut S, run: RunId, policy: FetchPolicy, now: i64) -> Self {
        Importer {
            store,
            run,
            policy,
            now,
            batch: Vec::with_capacity(BATCH),
            counts: Imported::default(),
        }
    }

    /// Reads one stream to its end. `note` hears of each record skipped
    /// and each response that cannot be read. A damaged stream ends early
    /// with the error returned; the records before it are imported.
    pub fn import(
        &mut self,
        input: impl BufRead,
        note: &mut dyn FnMut(&str),
    ) -> Result<Option<StoreError>> {
        let (policy, now) = (self.policy, self.now);
        let mut counts = std::mem::take(&mut self.counts);
        let damage = read_attempts(
            input,
            &policy,
            now,
            (0, u64::MAX),
            &mut counts,
            note,
            &mut |a, _, _| {
                self.batch.push(a);
                if self.batch.len() >= BATCH {
                    self.store.record(Some(self.run), &self.batch)?;
                    self.batch.clear();
                }
                Ok(())
            },
        );
        self.counts = counts;
        damage
    }

    /// Writes what is left and returns the counts.
    pub fn finish(self) -> Result<Imported> {
        self.store.record(Some(self.run), &self.batch)?;
        Ok(self.counts)
    }
}

/// Reads one WARC stream to its end as [`Importer::import`] reads it,
/// without a store: each robots.txt response's attempt (its outcome from
/// `policy`, its body cut at the size cap) goes to `each`, with the crawl
/// the last `warcinfo` record named (its `isPartOf` field), and every
/// record is counted in `counts`. `note` hears of each record skipped and
/// each response that cannot be read. A damaged stream ends early with the
/// error returned (`Ok(Some(_))`); an error of `each` stops the reading.
pub fn read_captures(
    input: impl BufRead,
    policy: &FetchPolicy,
    now: i64,
    counts: &mut Imported,
    note: &mut dyn FnMut(&str),
    each: &mut dyn FnMut(Attempt, Option<&str>) -> Result<()>,
) -> Result<Option<StoreError>> {
    read_attempts(
        input,
        policy,
        now,
        (0, u64::MAX),
        counts,
        note,
        &mut |a, _, part_of| each(a, part_of),
    )
}

/// A WARC file to read, decompressed when it is gzip (its first bytes
/// say so, whatever its name; each record its own member, as Common Crawl
/// writes them).
pub fn open_warc(path: &Path) -> Result<Box<dyn BufRead + Send>> {
    let err = |e: std::io::Error| StoreError::Input {
        name: path.display().to_string(),
        reason: e.to_string(),
    };
    let mut r =
        std::io::BufReader::with_capacity(256 * 1024, std::fs::File::open(path).map_err(err)?);
    let gzip = r.fill_buf().map_err(err)?.starts_with(&[0x1f, 0x8b]);
    Ok(if gzip {
        Box::new(std::io::BufReader::new(
            flate2::bufread::MultiGzDecoder::new(r),
        ))
    } else {
        Box::new(r)
    })
}

/// The `isPartOf` field of a `warcinfo` record's block
/// (`application/warc-fields`), if it names one.
fn is_part_of(rec: &warc::Record) -> Option<String> {
    let text = std::str::from_utf8(&rec.block).ok()?;
    text.lines().find_map(|line| {
        let (k, v) = line.split_once(':')?;
        let v = v.trim();
        (k.trim().eq_ignore_ascii_case("isPartOf")
            && !v.is_empty()
            && !v.chars().any(char::is_control))
        .then(|| v.to_owned())
    })
}

/// What [`read_attempts`] hands each attempt to: with the counts so far
/// and the crawl the last warcinfo record named.
type EachAttempt<'a> = dyn FnMut(Attempt, &Imported, Option<&str>) -> Result<()> + 'a;

/// Reads one WARC stream to its end, handing each robots.txt response's
/// attempt to `each` (with the crawl the last warcinfo record named) and
/// counting every record in `counts`. `note` hears of each record skipped
/// and each response that cannot be read. A damaged stream ends early with
/// the error returned (`Ok(Some(_))`); an error of `each` stops the
/// reading. `(skip, limit)`: the records an earlier import stored, passed
/// over; past `limit` records read (those passed over included) the
/// stream is stopped, as damaged.
#[allow(clippy::too_many_arguments)]
fn read_attempts(
    input: impl BufRead,
    policy: &FetchPolicy,
    now: i64,
    (mut skip, limit): (u64, u64),
    counts: &mut Imported,
    note: &mut dyn FnMut(&str),
    each: &mut EachAttempt<'_>,
) -> Result<Option<StoreError>> {
    let mut reader = Reader::new(input);
    let mut part_of: Option<String> = None;
    let mut read = 0u64;
    loop {
        if read >= limit {
            return Ok(Some(StoreError::Limit(format!(
                "stopped after {limit} records, the most this input may hold"
            ))));
        }
        read += 1;
        let rec = match reader.next_record() {
            Ok(Next::Record(r)) => r,
            Ok(Next::Skipped(_)) if skip > 0 => {
                skip -= 1;
                continue;
            }
            Ok(Next::Skipped(why)) => {
                counts.skipped += 1;
                note(&format!("skipped a {why}"));
                continue;
            }
            Ok(Next::End) => return Ok(None),
            Err(e) => return Ok(Some(e)),
        };
        // Records stored by an earlier import of this input.
        if skip > 0 {
            skip -= 1;
            continue;
        }
        counts.records += 1;
        if rec.field("WARC-Type") == Some("warcinfo") {
            part_of = is_part_of(&rec).or(part_of);
        }
        let Some((host, path)) = rec
            .field("WARC-Target-URI")
            .and_then(host_and_path)
            .filter(|_| rec.field("WARC-Type") == Some("response"))
        else {
            counts.other += 1;
            continue;
        };
        if !botscope_robotstxt::is_robots_txt_path(path.as_bytes()) {
            counts.other += 1;
            continue;
        }
        let time = rec.field("WARC-Date").and_then(parse_time).unwrap_or(now);
        let resp = match warc::parse_http_response(&rec.block, policy.size_cap + 1) {
            Ok(r) => r,
            Err(why) => {
                counts.bad_http += 1;
                note(&format!(
                    "a response record for {host} without a readable HTTP response ({why})"
                ));
                continue;
            }
        };
        counts.robots += 1;
        each(
            attempt(policy, host, time, &rec, resp),
            counts,
            part_of.as_deref(),
        )?;
    }
}

/// The Common Crawl crawl a path or URL names (`CC-MAIN-2024-10` in
/// `crawl-data/CC-MAIN-2024-10/segments/…`), if any.
pub fn crawl_of(name: &str) -> Option<String> {
    let at = name.find("CC-MAIN-")?;
    let rest = &name.as_bytes()[at + 8..];
    let digits = |r: &[u8]| r.iter().all(u8::is_ascii_digit);
    (rest.len() >= 7 && digits(&rest[..4]) && rest[4] == b'-' && digits(&rest[5..7]))
        .then(|| name[at..at + 15].to_owned())
}

/// One input of [`import_parallel`]: its name (for notes) and how to open
/// it (decompressed), on a reader thread.
pub struct WarcInput<'a> {
    /// Shown in notes, and the key of its import's mark: a later import
    /// of the same name resumes it, or skips it when it was finished.
    pub name: String,
    /// The crawl it belongs to.
    pub crawl: Option<String>,
    /// Records read at most (skipped ones included); past them the input
    /// is stopped as damaged, the records before it imported.
    pub max_records: Option<u64>,
    /// Opens the stream.
    pub open: Opener<'a>,
}

/// How a [`WarcInput`] is opened, on a reader thread.
pub type Opener<'a> = Box<dyn FnOnce() -> Result<Box<dyn BufRead + Send>> + Send + 'a>;

/// How [`import_parallel`] reads.
#[derive(Debug, Clone)]
pub struct ImportSettings {
    /// Judges each response (its outcome, the size cap).
    pub policy: FetchPolicy,
    /// The date of a record without one.
    pub now: i64,
    /// Reader threads.
    pub readers: usize,
}

/// How an import is going (for a progress line).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportProgress {
    /// Counts so far, every input.
    pub counts: Imported,
    /// Inputs finished, of `inputs`.
    pub done: usize,
    /// Inputs in all.
    pub inputs: usize,
}

/// What became of one input of [`import_parallel`].
#[derive(Debug)]
pub struct InputResult {
    /// Its name.
    pub name: String,
    /// Its counts.
    pub counts: Imported,
    /// It could not be opened, or was damaged (the records before the
    /// damage are imported).
    pub damage: Option<StoreError>,
    /// An earlier import read it to its end: it was not read again.
    pub already: bool,
    /// Records an earlier, unfinished import stored: passed over.
    pub resumed_after: u64,
}

/// Messages from the reader threads to the writer.
enum Msg {
    /// An input's attempts, and its counts when the batch was full.
    Batch(usize, Vec<Attempt>, Imported),
    Note(String),
    Done(usize, Imported, Option<StoreError>),
}

/// Imports many WARC inputs: `readers` threads take the
/// inputs in turn, decompress and read them, and hand batches of attempts
/// to the calling thread, which alone writes to the store (in one
/// transaction per batch). At most twice `readers` batches wait, so memory
/// stays bounded whatever the inputs' sizes. Captures of one site met in
/// any order give the versions the store's rule gives them in time order.
/// `note` hears (on the calling thread) of records skipped and responses
/// unreadable, named by input; `progress` after each batch written.
/// Returns each input's result, in input order; a store error stops the
/// import (the batches before it are in). The inputs of each crawl go in
/// a run of their own, begun (from `run`, with the crawl's name) when its
/// first batch comes and finished at the end, so that every capture
/// belongs to its crawl.
pub fn import_parallel<S: Store + ?Sized>(
    store: &mut S,
    run: &NewRun,
    how: &ImportSettings,
    inputs: Vec<WarcInput<'_>>,
    note: &mut dyn FnMut(&str),
    progress: &mut dyn FnMut(&ImportProgress),
) -> Result<Vec<InputResult>> {
    let (policy, now, readers) = (&how.policy, how.now, how.readers);
    let n = inputs.len();
    let names: Vec<String> = inputs.iter().map(|i| i.name.clone()).collect();
    let crawls: Vec<Option<String>> = inputs.iter().map(|i| i.crawl.clone()).collect();
    // Where earlier imports of these inputs stopped.
    let known = store.imports()?;
    let before: Vec<Option<ImportMark>> = names.iter().map(|m| known.get(m).cloned()).collect();
    let already: Vec<bool> = before
        .iter()
        .map(|b| b.as_ref().is_some_and(|m| m.finished.is_some()))
        .collect();
    let skips: Vec<u64> = before
        .iter()
        .map(|b| b.as_ref().map_or(0, |m| m.records))
        .collect();
    let queue = std::sync::Mutex::new(
        inputs
            .into_iter()
            .enumerate()
            .filter(|(i, _)| !already[*i])
            .map(|(i, input)| (i, input, skips[i])),
    );
    let mark = |i: usize, c: &Imported, finished: Option<i64>| ImportMark {
        name: names[i].clone(),
        crawl: crawls[i].clone(),
        records: skips[i] + c.records,
        robots: before[i].as_ref().map_or(0, |m| m.robots) + c.robots,
        finished,
    };
    let readers = readers.clamp(1, n.max(1));
    let (tx, rx) = std::sync::mpsc::sync_channel::<Msg>(2 * readers);
    let stop = std::sync::atomic::AtomicBool::new(false);
    let mut results: Vec<Option<(Imported, Option<StoreError>)>> = (0..n).map(|_| None).collect();
    let mut runs: HashMap<Option<String>, RunId> = HashMap::new();
    let mut run_of = |store: &mut S, i: usize| -> Result<RunId> {
        if let Some(&id) = runs.get(&crawls[i]) {
            return Ok(id);
        }
        let id = store.begin_run(&NewRun {
            crawl: crawls[i].clone(),
            ..run.clone()
        })?;
        runs.insert(crawls[i].clone(), id);
        Ok(id)
    };
    let mut state = ImportProgress {
        inputs: n,
        done: already.iter().filter(|a| **a).count(),
        ..ImportProgress::default()
    };
    let outcome = std::thread::scope(|s| -> Result<()> {
        for _ in 0..readers {
            let tx = tx.clone();
            let (queue, stop) = (&queue, &stop);
            s.spawn(move || {
                loop {
                    let next = queue.lock().unwrap_or_else(|p| p.into_inner()).next();
                    let Some((i, input, skip)) = next else { break };
                    let mut counts = Imported::default();
                    let name = input.name;
                    let damage = match (input.open)() {
                        Err(e) => Some(e),
                        Ok(stream) => {
                            let mut batch = Vec::with_capacity(BATCH);
                            let mut note = |what: &str| {
                                let _ = tx.send(Msg::Note(format!("{name}: {what}")));
                            };
                            let r = read_attempts(
                                stream,
                                policy,
                                now,
                                (skip, input.max_records.unwrap_or(u64::MAX)),
                                &mut counts,
                                &mut note,
                                &mut |a, so_far, _| {
                                    if stop.load(std::sync::atomic::Ordering::Relaxed) {
                                        return Err(StoreError::Db {
                                            path: String::new(),
                                            detail: "stopped".into(),
                                        });
                                    }
                                    batch.push(a);
                                    if batch.len() >= BATCH {
                                        let full = std::mem::replace(
                                            &mut batch,
                                            Vec::with_capacity(BATCH),
                                        );
                                        tx.send(Msg::Batch(i, full, so_far.clone())).map_err(
                                            |_| StoreError::Db {
                                                path: String::new(),
                                                detail: "stopped".into(),
                                            },
                                        )?;
                                    }
                                    Ok(())
                                },
                            );
                            if !batch.is_empty() {
                                let _ = tx.send(Msg::Batch(i, batch, counts.clone()));
                            }
                            match r {
                                Ok(d) => d,
                                Err(_) => break,
                            }
                        }
                    };
                    if tx.send(Msg::Done(i, counts, damage)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        for msg in rx.iter() {
            // A batch, or an input read to its end (a later import passes
            // it over), written with the input's mark.
            let (i, batch, mark) = match msg {
                Msg::Note(t) => {
                    note(&t);
                    continue;
                }
                Msg::Batch(i, b, so_far) => (i, b, mark(i, &so_far, None)),
                Msg::Done(i, counts, damage) => {
                    let m = mark(i, &counts, damage.is_none().then_some(now));
                    add(&mut state.counts, &counts);
                    state.done += 1;
                    results[i] = Some((counts, damage));
                    (i, Vec::new(), m)
                }
            };
            let written =
                run_of(store, i).and_then(|id| store.record_import(Some(id), &batch, &mark));
            if let Err(e) = written {
                stop.store(true, std::sync::atomic::Ordering::Relaxed);
                // Drain so that no reader waits on a full channel.
                for _ in rx.iter() {}
                return Err(e);
            }
            progress(&state);
        }
        Ok(())
    });
    outcome?;
    let mut ids: Vec<RunId> = runs.into_values().collect();
    ids.sort_unstable();
    for id in ids {
        store.finish_run(id, now)?;
    }
    Ok(names
        .into_iter()
        .zip(results)
        .enumerate()
        .map(|(i, (name, r))| {
            let (counts, damage) = r.unwrap_or_default();
            InputResult {
                name,
                counts,
                damage,
                already: already[i],
                resumed_after: if already[i] { 0 } else { skips[i] },
            }
        })
        .collect())
}

fn add(total: &mut Imported, c: &Imported) {
    total.records += c.records;
    total.robots += c.robots;
    total.other += c.other;
    total.skipped += c.skipped;
    total.bad_http += c.bad_http;
}

/// The attempt an imported response stands for.
fn attempt(
    policy: &FetchPolicy,
    host: String,
    time: i64,
    rec: &warc::Record,
    resp: warc::HttpResponse,
) -> Attempt {
    let headers: Vec<(&str, &str)> = resp
        .headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let at = UNIX_EPOCH + Duration::from_secs(time.max(0) as u64);
    let decision = decide_fetch(
        policy,
        &FetchResponse {
            status: Some(resp.status),
            headers: &headers,
            redirect_hops: 0,
            body_len: resp.body.len() as u64,
            unreachable_for: Duration::ZERO,
            has_cached_copy: false,
            now: at,
        },
    );
    let get = |k: &str| resp.header(k).map(str::to_owned);
    let parse = matches!(decision.action, FetchAction::Parse { .. });
    // Cut here, or cut when it was fetched (`WARC-Truncated`): either way
    // the body is the start of a larger one, and stays `too-large`.
    let truncated = resp.body.len() > policy.size_cap || rec.field("WARC-Truncated").is_some();
    let mut body = resp.body.clone();
    body.truncate(policy.size_cap);
    Attempt {
        host,
        rank: None,
        time,
        duration_ms: 0,
        url: rec
            .field("WARC-Target-URI")
            .unwrap_or_default()
            .trim_matches(['<', '>'])
            .to_owned(),
        redirects: Vec::new(),
        address: rec.field("WARC-IP-Address").map(str::to_owned),
        status: Some(resp.status),
        headers: Headers::from_fn(get),
        bytes: body.len() as u64,
        truncated,
        error_class: truncated.then(|| "too-large".to_owned()),
        error: truncated.then(|| "the body was cut at the size cap; its start is kept".to_owned()),
        outcome: decision.action.as_str().to_owned(),
        reason: decision.reason.to_owned(),
        expires_in: Some(decision.expires_in.as_secs()),
        body: parse.then_some(body),
        source: crate::Source::Warc,
    }
}

fn write_err(what: &str) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |source| StoreError::Write {
        what: what.to_owned(),
        source,
    }
}

/// Every version as one JSON object per line (host, url, first_seen,
/// last_seen, hash, content_type, and body, or body_base64 when the body is
/// not UTF-8). Returns the number written.
pub fn export_jsonl<S: Store + ?Sized>(store: &S, out: &mut dyn Write) -> Result<u64> {
    let mut count = 0u64;
    store.each_version(&mut |v| {
        let mut o = serde_json::json!({
            "host": v.host,
            "url": v.url,
            "first_seen": rfc3339(v.first_seen),
            "last_seen": rfc3339(v.last_seen),
            "hash": format!("blake3:{}", hex(&v.hash)),
            "content_type": v.content_type,
        });
        match std::str::from_utf8(&v.body) {
            Ok(text) => o["body"] = text.into(),
            Err(_) => {
                o["body_base64"] = base64::engine::general_purpose::STANDARD
                    .encode(&v.body)
                    .into();
            }
        }
        writeln!(out, "{o}").map_err(write_err("the JSON lines"))?;
        count += 1;
        Ok(())
    })?;
    out.flush().map_err(write_err("the JSON lines"))?;
    Ok(count)
}

/// Every version as `DIR/HOST/FIRSTSEEN-HASH.txt` (the first 16 hex digits
/// of the hash). Host names that cannot be a path component are skipped.
pub fn export_files<S: Store + ?Sized>(store: &S, dir: &Path) -> Result<u64> {
    let dir_text = dir.display().to_string();
    botscope_os::ensure_dir(dir).map_err(write_err(&dir_text))?;
    let mut count = 0u64;
    store.each_version(&mut |v| {
        // Host names from the store are checked before they become path
        // components.
        if v.host.is_empty() || v.host.starts_with('.') || v.host.contains(['/', '\\', '\0']) {
            return Ok(());
        }
        let rel = Path::new(&v.host).join(format!(
            "{}-{}.txt",
            rfc3339(v.first_seen).replace(['-', ':'], ""),
            &hex(&v.hash)[..16]
        ));
        // Through one helper: a directory symlink planted under `dir`
        // that leads out of it is refused, and a file is replaced whole.
        botscope_os::write_under(dir, &rel, &v.body).map_err(|e| StoreError::Write {
            what: dir.join(&rel).display().to_string(),
            source: std::io::Error::other(e),
        })?;
        count += 1;
        Ok(())
    })?;
    Ok(count)
}

/// Every version as a WARC/1.1 response record after a warcinfo record
/// naming `source`; with `gzip`, one gzip member per record, as WARC
/// readers expect. Returns the number of versions written.
pub fn export_warc<S: Store + ?Sized>(
    store: &S,
    out: &mut dyn Write,
    gzip: bool,
    source: &str,
    now: i64,
) -> Result<u64> {
    let mut put = |fields: &[(&str, String)], block: &[u8]| -> std::io::Result<()> {
        if gzip {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            warc::write_record(&mut e, fields, block)?;
            out.write_all(&e.finish()?)
        } else {
            warc::write_record(&mut *out, fields, block)
        }
    };
    let info = format!(
        "software: botscope {}\r\nformat: WARC File Format 1.1\r\ndescription: robots.txt versions from {source}\r\n",
        env!("CARGO_PKG_VERSION"),
    );
    put(
        &[
            ("WARC-Type", "warcinfo".into()),
            ("WARC-Date", rfc3339(now)),
            (
                "WARC-Record-ID",
                warc::record_id(&crate::content_hash(info.as_bytes()), "warcinfo"),
            ),
            ("Content-Type", "application/warc-fields".into()),
        ],
        info.as_bytes(),
    )
    .map_err(write_err("the WARC file"))?;
    let mut count = 0u64;
    // A version without its attempt (imported from files) was served as is.
    let as_served = crate::Origin {
        status: 200,
        ..crate::Origin::default()
    };
    store.each_version(&mut |v| {
        let clean = |s: &str| s.replace(['\r', '\n'], "");
        let origin = v.origin.as_ref().unwrap_or(&as_served);
        let mut head = format!(
            "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n",
            origin.status,
            warc::reason_phrase(origin.status),
            clean(v.content_type.as_deref().unwrap_or("text/plain")),
            v.body.len()
        );
        for (k, val) in &origin.headers {
            head.push_str(&format!("{k}: {}\r\n", clean(val)));
        }
        head.push_str("\r\n");
        let mut block = head.into_bytes();
        block.extend_from_slice(&v.body);
        let mut fields = vec![
            ("WARC-Type", "response".into()),
            ("WARC-Date", rfc3339(v.first_seen)),
            (
                "WARC-Record-ID",
                warc::record_id(&v.hash, &format!("{} {}", v.host, v.first_seen)),
            ),
            ("WARC-Target-URI", v.url.clone()),
            ("WARC-Payload-Digest", warc::sha1_digest(&v.body)),
            ("WARC-Block-Digest", warc::sha1_digest(&block)),
            ("Content-Type", "application/http; msgtype=response".into()),
        ];
        if origin.truncated {
            // The body was cut at the size cap when it was fetched.
            fields.push(("WARC-Truncated", "length".into()));
        }
        put(&fields, &block).map_err(write_err("the WARC file"))?;
        count += 1;
        Ok(())
    })?;
    out.flush().map_err(write_err("the WARC file"))?;
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crawl_names() {
        assert_eq!(
            crawl_of("crawl-data/CC-MAIN-2024-10/segments/1/robotstxt/x.warc.gz").as_deref(),
            Some("CC-MAIN-2024-10")
        );
        assert_eq!(
            crawl_of("/data/CC-MAIN-2023-50-robotstxt-00001.warc.gz").as_deref(),
            Some("CC-MAIN-2023-50")
        );
        assert_eq!(crawl_of("CC-MAIN-20x4-10"), None);
        assert_eq!(crawl_of("x.warc.gz"), None);
    }

    #[test]
    fn uris() {
        assert_eq!(
            host_and_path("http://Example.COM:8080/robots.txt"),
            Some(("example.com".into(), "/robots.txt"))
        );
        assert_eq!(
            host_and_path("<https://[2001:db8::1]/robots.txt>"),
            Some(("2001:db8::1".into(), "/robots.txt"))
        );
        assert_eq!(
            host_and_path("https://a.test"),
            Some(("a.test".into(), "/"))
        );
        assert_eq!(host_and_path("ftp://a.test/robots.txt"), None);
    }

    #[test]
    fn times() {
        assert_eq!(rfc3339(1_709_287_200), "2024-03-01T10:00:00Z");
        assert_eq!(parse_time("2024-03-01T10:00:00Z"), Some(1_709_287_200));
        assert_eq!(parse_time("2024-03-01T11:00:00+01:00"), Some(1_709_287_200));
        assert_eq!(parse_time("yesterday"), None);
    }
}
