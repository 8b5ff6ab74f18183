//! `botscope store`: totals, export and WARC import of the harvest store.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::Path;
use std::time::{Duration, UNIX_EPOCH};

use anyhow::{Context, Result};
use botscope_accesslog::{format_rfc3339, parse_iso_time};
use botscope_robotstxt::{FetchPolicy, FetchResponse, decide_fetch};
use botscope_store::warc::{self, Next};
use botscope_store::{Attempt, Headers, NewRun, SqliteStore, Store, content_hash, hex};

use crate::cli::{Format, StoreExportArgs, StoreExportFormat, StoreImportArgs, StoreStatsArgs};
use crate::exit::Outcome;

/// Attempts per transaction when importing.
const BATCH: usize = 1000;

/// Seconds since the epoch, now.
fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// `store stats`.
pub fn stats(a: &StoreStatsArgs) -> Result<Outcome> {
    let s = SqliteStore::open_read(&a.db.db)?;
    let st = s.stats()?;
    let mut out = std::io::stdout().lock();
    match a.format {
        Format::Json => writeln!(out, "{}", serde_json::to_string(&st)?)?,
        Format::Text => {
            let sorted = |m: &std::collections::HashMap<String, u64>| {
                let mut v: Vec<_> = m.iter().collect();
                v.sort_by(|x, y| y.1.cmp(x.1).then(x.0.cmp(y.0)));
                v.iter()
                    .map(|(k, n)| format!("{k} {n}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            writeln!(out, "store            {}", a.db.db.display())?;
            writeln!(out, "schema version   {}", st.schema_version)?;
            writeln!(out, "sites            {}", st.sites)?;
            writeln!(out, "  with robots.txt {}", st.sites_with_robots_txt)?;
            writeln!(out, "attempts         {}", st.attempts)?;
            writeln!(
                out,
                "runs             {} ({} unfinished)",
                st.runs, st.unfinished_runs
            )?;
            writeln!(out, "versions         {}", st.versions)?;
            writeln!(
                out,
                "distinct bodies  {} ({} bytes)",
                st.bodies, st.body_bytes
            )?;
            writeln!(out, "latest outcome   {}", sorted(&st.outcomes))?;
            writeln!(out, "latest status    {}", sorted(&st.statuses))?;
            writeln!(out, "latest error     {}", sorted(&st.errors))?;
        }
    }
    Ok(Outcome::Ok)
}

/// Standard base64 (RFC 4648), for bodies that are not UTF-8.
fn base64(b: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::with_capacity(b.len().div_ceil(3) * 4);
    for c in b.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= c.len() {
                s.push(char::from(A[(n >> (18 - 6 * i) & 63) as usize]));
            } else {
                s.push('=');
            }
        }
    }
    s
}

fn compact_time(t: i64) -> String {
    format_rfc3339(t).replace(['-', ':'], "")
}

/// `store export`.
pub fn export(a: &StoreExportArgs) -> Result<Outcome> {
    let s = SqliteStore::open_read(&a.db.db)?;
    let mut count = 0u64;
    match a.format {
        StoreExportFormat::Files => {
            let dir = a.out.as_deref().context("--format files needs --out DIR")?;
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            s.each_version(&mut |v| {
                // Host names from the store are checked before they become
                // path components.
                if v.host.is_empty()
                    || v.host.starts_with('.')
                    || v.host.contains(['/', '\\', '\0'])
                {
                    return Ok(());
                }
                let d = dir.join(&v.host);
                std::fs::create_dir_all(&d).map_err(|e| format!("{}: {e}", d.display()))?;
                let f = d.join(format!(
                    "{}-{}.txt",
                    compact_time(v.first_seen),
                    &hex(&v.hash)[..16]
                ));
                std::fs::write(&f, &v.body).map_err(|e| format!("{}: {e}", f.display()))?;
                count += 1;
                Ok(())
            })?;
            eprintln!("{count} versions written under {}", dir.display());
        }
        StoreExportFormat::Jsonl => {
            let mut out = output(a.out.as_deref())?;
            s.each_version(&mut |v| {
                let mut o = serde_json::json!({
                    "host": v.host,
                    "url": v.url,
                    "first_seen": format_rfc3339(v.first_seen),
                    "last_seen": format_rfc3339(v.last_seen),
                    "hash": format!("blake3:{}", hex(&v.hash)),
                    "content_type": v.content_type,
                });
                match std::str::from_utf8(&v.body) {
                    Ok(text) => o["body"] = text.into(),
                    Err(_) => o["body_base64"] = base64(&v.body).into(),
                }
                writeln!(out, "{o}").map_err(|e| e.to_string())?;
                count += 1;
                Ok(())
            })?;
            out.flush()?;
        }
        StoreExportFormat::Warc => {
            let gz = a
                .out
                .as_deref()
                .is_some_and(|p| p.extension().is_some_and(|e| e == "gz"));
            let mut out = output(a.out.as_deref())?;
            let mut put = |fields: &[(&str, String)], block: &[u8]| -> std::io::Result<()> {
                if gz {
                    // One gzip member per record, as WARC readers expect.
                    let mut e =
                        flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
                    warc::write_record(&mut e, fields, block)?;
                    out.write_all(&e.finish()?)
                } else {
                    warc::write_record(&mut out, fields, block)
                }
            };
            let now = now();
            let info = format!(
                "software: botscope {}\r\nformat: WARC File Format 1.1\r\ndescription: robots.txt versions from {}\r\n",
                env!("CARGO_PKG_VERSION"),
                a.db.db.display()
            );
            put(
                &[
                    ("WARC-Type", "warcinfo".into()),
                    ("WARC-Date", format_rfc3339(now)),
                    (
                        "WARC-Record-ID",
                        warc::record_id(&content_hash(info.as_bytes()), "warcinfo"),
                    ),
                    ("Content-Type", "application/warc-fields".into()),
                ],
                info.as_bytes(),
            )?;
            s.each_version(&mut |v| {
                let mut block = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: {}\r\nContent-Length: {}\r\n\r\n",
                    v.content_type
                        .as_deref()
                        .unwrap_or("text/plain")
                        .replace(['\r', '\n'], ""),
                    v.body.len()
                )
                .into_bytes();
                block.extend_from_slice(&v.body);
                put(
                    &[
                        ("WARC-Type", "response".into()),
                        ("WARC-Date", format_rfc3339(v.first_seen)),
                        (
                            "WARC-Record-ID",
                            warc::record_id(&v.hash, &format!("{} {}", v.host, v.first_seen)),
                        ),
                        ("WARC-Target-URI", v.url.clone()),
                        ("WARC-Payload-Digest", format!("blake3:{}", hex(&v.hash))),
                        ("Content-Type", "application/http; msgtype=response".into()),
                    ],
                    &block,
                )
                .map_err(|e| e.to_string())?;
                count += 1;
                Ok(())
            })?;
            out.flush()?;
        }
    }
    if a.format != StoreExportFormat::Files {
        eprintln!("{count} versions exported");
    }
    Ok(Outcome::Ok)
}

fn output(path: Option<&Path>) -> Result<Box<dyn Write>> {
    Ok(match path {
        Some(p) => Box::new(BufWriter::new(
            File::create(p).with_context(|| format!("cannot create {}", p.display()))?,
        )),
        None => Box::new(BufWriter::new(std::io::stdout().lock())),
    })
}

/// Counts of an import.
#[derive(Debug, Default)]
struct Imported {
    records: u64,
    robots: u64,
    other: u64,
    skipped: u64,
    bad_http: u64,
}

/// Host and path of an `http(s)://host[:port]/path` URI.
fn host_and_path(uri: &str) -> Option<(String, &str)> {
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

fn open_input(p: &Path) -> Result<Box<dyn BufRead>> {
    let f = File::open(p).with_context(|| format!("cannot open {}", p.display()))?;
    let mut r = BufReader::with_capacity(256 * 1024, f);
    let head = r.fill_buf()?;
    Ok(if head.starts_with(&[0x1f, 0x8b]) {
        Box::new(BufReader::new(flate2::bufread::MultiGzDecoder::new(r)))
    } else {
        Box::new(r)
    })
}

/// `store import`.
pub fn import(a: &StoreImportArgs) -> Result<Outcome> {
    let mut store = SqliteStore::open(&a.db.db)?;
    let policy = FetchPolicy::for_semantics(a.semantics.into());
    let names: Vec<String> = a.files.iter().map(|f| f.display().to_string()).collect();
    let now = now();
    let run = store.begin_run(&NewRun {
        input: format!("import: {}", names.join(" ")),
        input_hash: content_hash(names.join("\n").as_bytes()),
        user_agent: String::new(),
        hosts: 0,
        started: now,
    })?;
    let mut n = Imported::default();
    let mut damaged = false;
    let mut batch: Vec<Attempt> = Vec::with_capacity(BATCH);
    for f in &a.files {
        let mut reader = warc::Reader::new(open_input(f)?);
        loop {
            let rec = match reader.next_record() {
                Ok(Next::Record(r)) => r,
                Ok(Next::Skipped(why)) => {
                    n.skipped += 1;
                    eprintln!("botscope: {}: skipped a {why}", f.display());
                    continue;
                }
                Ok(Next::End) => break,
                Err(e) => {
                    damaged = true;
                    eprintln!(
                        "botscope: warning: {}: {e}; the records before it are imported",
                        f.display()
                    );
                    break;
                }
            };
            n.records += 1;
            let Some((host, path)) = rec
                .field("WARC-Target-URI")
                .and_then(host_and_path)
                .filter(|_| rec.field("WARC-Type") == Some("response"))
            else {
                n.other += 1;
                continue;
            };
            if !botscope_robotstxt::is_robots_txt_path(path.as_bytes()) {
                n.other += 1;
                continue;
            }
            let time = rec
                .field("WARC-Date")
                .and_then(|d| parse_iso_time(d.as_bytes()))
                .unwrap_or(now);
            let resp = match warc::parse_http_response(&rec.block, policy.size_cap + 1) {
                Ok(r) => r,
                Err(why) => {
                    n.bad_http += 1;
                    eprintln!(
                        "botscope: {}: a response record for {host} without a readable HTTP response ({why})",
                        f.display()
                    );
                    continue;
                }
            };
            n.robots += 1;
            batch.push(attempt(&policy, host, time, &rec, resp));
            if batch.len() >= BATCH {
                store.record(Some(run), &batch)?;
                batch.clear();
            }
        }
    }
    store.record(Some(run), &batch)?;
    store.finish_run(run, now)?;
    eprintln!(
        "{} records read: {} robots.txt responses imported, {} other records, {} skipped, {} unreadable",
        n.records, n.robots, n.other, n.skipped, n.bad_http
    );
    Ok(if damaged {
        Outcome::Code(3)
    } else {
        Outcome::Ok
    })
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
    let parse = matches!(
        decision.action,
        botscope_robotstxt::FetchAction::Parse { .. }
    );
    let truncated = resp.body.len() > policy.size_cap;
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
        error_class: None,
        error: None,
        outcome: decision.action.as_str().to_owned(),
        reason: decision.reason.to_owned(),
        expires_in: Some(decision.expires_in.as_secs()),
        body: parse.then_some(body),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc4648() {
        for (i, o) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(i.as_bytes()), o);
        }
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
}
