//! robots.txt files from a directory into the store: the layout
//! researchers keep (`HOST` or `HOST.txt`, one file per site), and the one
//! `store export --format files` writes (`HOST/FIRSTSEEN-HASH.txt`, one
//! file per version), so that an export reads back.

use std::path::{Path, PathBuf};

use crate::{Attempt, Result, RunId, Source, Store};

/// Attempts per store transaction.
const BATCH: usize = 1000;

/// The host a file name stands for: `HOST` or `HOST.txt`, lower-cased;
/// `None` when the name is not a host name with a dot (`README`,
/// `robots.txt`, `.hidden`).
pub fn host_of_file_name(name: &str) -> Option<String> {
    let host = name
        .strip_suffix(".txt")
        .unwrap_or(name)
        .to_ascii_lowercase();
    let labels: Vec<&str> = host.split('.').collect();
    let ok = labels.len() >= 2
        && labels.iter().all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && !l.starts_with('-')
                && l.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
        && host.len() <= 253
        && host != "robots.txt";
    ok.then_some(host)
}

/// `20240301T100000Z-0123456789abcdef.txt`: the time of an exported
/// version.
fn exported_time(name: &str) -> Option<i64> {
    let stamp = name.split('-').next()?;
    if stamp.len() != 16 {
        return None;
    }
    let iso = format!(
        "{}-{}-{}T{}:{}:{}Z",
        &stamp.get(0..4)?,
        &stamp.get(4..6)?,
        &stamp.get(6..8)?,
        &stamp.get(9..11)?,
        &stamp.get(11..13)?,
        &stamp.get(13..15)?
    );
    iso.parse::<jiff::Timestamp>().ok().map(|t| t.as_second())
}

/// Counts of a files import.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileImport {
    /// Files stored as versions.
    pub files: u64,
    /// Distinct hosts among them.
    pub hosts: u64,
    /// Files skipped (not a host name, unreadable), each told to `note`.
    pub skipped: u64,
    /// Files cut at the size cap (their start is stored, `too-large`).
    pub truncated: u64,
}

impl std::fmt::Display for FileImport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} files imported for {} hosts, {} skipped, {} cut at the size cap",
            self.files, self.hosts, self.skipped, self.truncated
        )
    }
}

/// One file to import: its host, its time, and where it is.
struct Item {
    host: String,
    time: Option<i64>,
    path: PathBuf,
}

/// The files under `arg`: a file, a directory of `HOST[.txt]` files, or a
/// directory of `HOST/` directories of exported versions.
fn collect(arg: &Path, items: &mut Vec<Item>, note: &mut dyn FnMut(&str)) {
    let name = |p: &Path| p.file_name().map(|n| n.to_string_lossy().into_owned());
    if !arg.is_dir() {
        let parent = arg.parent().and_then(name);
        let exported = name(arg)
            .as_deref()
            .and_then(exported_time)
            .zip(parent.as_deref().and_then(host_of_file_name));
        match (exported, name(arg).as_deref().and_then(host_of_file_name)) {
            // HOST/FIRSTSEEN-HASH.txt, as `store export --format files` writes.
            (Some((t, host)), _) => items.push(Item {
                host,
                time: Some(t),
                path: arg.to_path_buf(),
            }),
            (None, Some(host)) => items.push(Item {
                host,
                time: None,
                path: arg.to_path_buf(),
            }),
            _ => note(&format!(
                "{}: skipped, not named HOST, HOST.txt or HOST/FIRSTSEEN-HASH.txt",
                arg.display()
            )),
        }
        return;
    }
    let entries = match std::fs::read_dir(arg) {
        Ok(d) => d,
        Err(e) => return note(&format!("{}: skipped, {e}", arg.display())),
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        let Some(n) = name(&p) else { continue };
        if n.starts_with('.') {
            continue;
        }
        if p.is_dir() && host_of_file_name(&n).is_none() {
            note(&format!(
                "{}: skipped, a directory not named HOST",
                p.display()
            ));
        } else {
            collect(&p, items, note);
        }
    }
}

/// Imports robots.txt files into `run`, one version per file, source
/// `import`. Each is dated `date`, or by its exported name, or by its
/// modification time; a file over `size_cap` keeps its start, marked
/// `too-large`, as a harvest would. What is skipped is told to `note`.
pub fn import_files<S: Store + ?Sized>(
    store: &mut S,
    run: RunId,
    args: &[PathBuf],
    date: Option<i64>,
    size_cap: usize,
    note: &mut dyn FnMut(&str),
) -> Result<FileImport> {
    let mut items = Vec::new();
    for a in args {
        collect(a, &mut items, note);
    }
    let mut counts = FileImport::default();
    let mut hosts = std::collections::HashSet::new();
    let mut batch = Vec::with_capacity(BATCH);
    for it in items {
        let read = std::fs::File::open(&it.path).and_then(|f| {
            let mut body = Vec::new();
            std::io::Read::read_to_end(&mut std::io::Read::take(f, size_cap as u64 + 1), &mut body)
                .map(|_| body)
        });
        let mut body = match read {
            Ok(b) => b,
            Err(e) => {
                counts.skipped += 1;
                note(&format!("{}: skipped, {e}", it.path.display()));
                continue;
            }
        };
        let modified = || {
            let m = std::fs::metadata(&it.path)
                .and_then(|m| m.modified())
                .ok()?;
            let d = m.duration_since(std::time::UNIX_EPOCH).ok()?;
            i64::try_from(d.as_secs()).ok()
        };
        let time = date.or(it.time).or_else(modified).unwrap_or(0);
        let truncated = body.len() > size_cap;
        body.truncate(size_cap);
        counts.files += 1;
        counts.truncated += u64::from(truncated);
        hosts.insert(it.host.clone());
        batch.push(Attempt {
            url: format!("https://{}/robots.txt", it.host),
            host: it.host,
            time,
            bytes: body.len() as u64,
            truncated,
            error_class: truncated.then(|| "too-large".to_owned()),
            error: truncated.then(|| "the file was cut at the size cap; its start is kept".into()),
            outcome: "parse".into(),
            reason: "imported from a file".into(),
            body: Some(body),
            source: Source::Import,
            ..Attempt::default()
        });
        if batch.len() >= BATCH {
            store.record(Some(run), &batch)?;
            batch.clear();
        }
    }
    store.record(Some(run), &batch)?;
    counts.hosts = hosts.len() as u64;
    Ok(counts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_names() {
        assert_eq!(
            host_of_file_name("www.BBC.co.uk.txt").as_deref(),
            Some("www.bbc.co.uk")
        );
        assert_eq!(
            host_of_file_name("example.com").as_deref(),
            Some("example.com")
        );
        for bad in [
            "README",
            "robots.txt",
            ".hidden",
            "a..b",
            "-a.com",
            "a b.com",
            "x.txt.txt/",
        ] {
            assert_eq!(host_of_file_name(bad), None, "{bad}");
        }
        assert_eq!(
            exported_time("20240301T100000Z-0123456789abcdef.txt"),
            Some(1_709_287_200)
        );
        assert_eq!(exported_time("2024.txt"), None);
    }
}
