//! The decision log: one JSON line per decision that is not `allow` (or
//! every one, with `all`), written by a thread of its own so that a
//! request never waits for the disk. The file is capped: past its size it
//! is renamed `FILE.1` (the previous `FILE.1` is dropped) and a new one is
//! started. A line the writer cannot take in time (its queue full) is
//! counted, never silently lost: `/healthz` and `/metrics` report them.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};

use botscope_policy::Action;

use crate::answer::Answer;

/// Lines waiting for the writer at most.
const QUEUE: usize = 16_384;

/// Where decisions are logged.
#[derive(Debug, Clone)]
pub struct DecisionLogConfig {
    /// The file.
    pub path: PathBuf,
    /// Log `allow` decisions too.
    pub all: bool,
    /// The size past which the file is rotated.
    pub max_bytes: u64,
}

/// The log's writer, fed through a bounded queue.
#[derive(Debug)]
pub struct DecisionLog {
    tx: SyncSender<String>,
    all: bool,
    /// Lines written.
    pub written: Arc<AtomicU64>,
    /// Lines dropped: the queue was full.
    pub dropped: AtomicU64,
    /// Rotations.
    pub rotations: Arc<AtomicU64>,
}

impl DecisionLog {
    /// Opens (appends to) the file and starts the writer thread. A path
    /// that is a symlink, or a file there (or at `FILE.1`, which rotation
    /// replaces) that is not a decision log, is refused: nothing of it is
    /// touched.
    pub fn open(cfg: &DecisionLogConfig) -> std::io::Result<DecisionLog> {
        let mut rotated = cfg.path.as_os_str().to_owned();
        rotated.push(".1");
        for p in [cfg.path.as_path(), Path::new(&rotated)] {
            ours_or_absent(p)?;
        }
        let file = open_append(&cfg.path)?;
        let (tx, rx) = std::sync::mpsc::sync_channel(QUEUE);
        let written = Arc::new(AtomicU64::new(0));
        let rotations = Arc::new(AtomicU64::new(0));
        let (w, r, path, max) = (
            written.clone(),
            rotations.clone(),
            cfg.path.clone(),
            cfg.max_bytes.max(4096),
        );
        std::thread::Builder::new()
            .name("decision-log".into())
            .spawn(move || writer(rx, file, &path, max, &w, &r))?;
        Ok(DecisionLog {
            tx,
            all: cfg.all,
            written,
            dropped: AtomicU64::new(0),
            rotations,
        })
    }

    /// Logs `a` (when it is logged at all).
    pub fn log(&self, a: &Answer, user_agent: &str, method: &str, path: &str) {
        if a.action == Action::Allow && !self.all {
            return;
        }
        let line = line(a, user_agent, method, path, &now_rfc3339());
        if let Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) = self.tx.try_send(line) {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Refuses `path` when it is a symlink, not a regular file, or a file
/// whose first byte is not a JSON object's (not a decision log).
fn ours_or_absent(path: &Path) -> std::io::Result<()> {
    let refuse = |why: &str| {
        Err(std::io::Error::other(format!(
            "{}: {why}; it is left as it is (give another --decision-log)",
            path.display()
        )))
    };
    let meta = match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
        Ok(m) => m,
    };
    if meta.file_type().is_symlink() {
        return refuse("a symlink");
    }
    if !meta.is_file() {
        return refuse("not a regular file");
    }
    let mut first = [0u8; 1];
    let n = std::io::Read::read(&mut std::fs::File::open(path)?, &mut first)?;
    if n == 1 && first[0] != b'{' {
        return refuse("not a decision log");
    }
    Ok(())
}

fn open_append(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
}

/// The log's line for one decision.
pub fn line(a: &Answer, user_agent: &str, method: &str, path: &str, time: &str) -> String {
    let v = a.known.as_ref().map(|k| &k.evidence);
    let body = serde_json::json!({
        "time": time,
        "client": a.client.to_string(),
        "method": method,
        "path": path,
        "user_agent": user_agent,
        "claimed_bot": a.bot,
        "identity": a.identity.map(|i| i.as_str()),
        "evidence": v.map(|v| serde_json::json!({
            "methods": v.methods,
            "reason": v.reason,
            "hostnames": v.hostnames,
            "asn": v.asn,
        })),
        "signature": a.checked.as_ref().map(|c| serde_json::json!({
            "outcome": c.verdict.outcome.as_str(),
            "agent": c.verdict.agent,
            "reason": crate::answer::signature_reason(&c.verdict.reason),
        })),
        "category": a.placed.category.as_str(),
        "rule": a.rule,
        "action": a.action.as_str(),
        "retry_after": a.retry_after,
    });
    body.to_string()
}

/// The time now as RFC 3339 (UTC, milliseconds).
pub fn now_rfc3339() -> String {
    format!("{:.3}", jiff::Timestamp::now())
}

fn writer(
    rx: Receiver<String>,
    file: std::fs::File,
    path: &Path,
    max: u64,
    written: &AtomicU64,
    rotations: &AtomicU64,
) {
    let mut size = file.metadata().map_or(0, |m| m.len());
    let mut out = std::io::BufWriter::new(file);
    while let Ok(first) = rx.recv() {
        let mut next = Some(first);
        while let Some(line) = next.take() {
            if size > 0 && size + line.len() as u64 + 1 > max {
                let _ = out.flush();
                let mut rotated = path.as_os_str().to_owned();
                rotated.push(".1");
                match std::fs::rename(path, &rotated).and_then(|()| open_append(path)) {
                    Ok(f) => {
                        out = std::io::BufWriter::new(f);
                        size = 0;
                        rotations.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(e) => tracing::warn!("decision log: rotating {}: {e}", path.display()),
                }
            }
            if writeln!(out, "{line}").is_ok() {
                size += line.len() as u64 + 1;
                written.fetch_add(1, Ordering::Relaxed);
            }
            next = rx.try_recv().ok();
        }
        let _ = out.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file in the way that is not a decision log, or a symlink, is
    /// refused and left as it was; a log of its own is appended to.
    #[test]
    fn a_file_in_the_way_is_refused_and_left_alone() {
        let d = tempfile::tempdir().expect("tmp");
        let cfg = |p: &Path| DecisionLogConfig {
            path: p.to_path_buf(),
            all: false,
            max_bytes: 1 << 20,
        };
        let notes = d.path().join("notes.txt");
        std::fs::write(&notes, "my notes\n").expect("w");
        let e = DecisionLog::open(&cfg(&notes)).expect_err("refused");
        assert!(e.to_string().contains("not a decision log"), "{e}");
        assert_eq!(std::fs::read_to_string(&notes).expect("r"), "my notes\n");
        let link = d.path().join("link.jsonl");
        std::os::unix::fs::symlink(&notes, &link).expect("link");
        let e = DecisionLog::open(&cfg(&link)).expect_err("refused");
        assert!(e.to_string().contains("symlink"), "{e}");
        // The rotation's target is checked too.
        let log = d.path().join("d.jsonl");
        std::fs::write(d.path().join("d.jsonl.1"), "keep me\n").expect("w");
        assert!(DecisionLog::open(&cfg(&log)).is_err());
        std::fs::remove_file(d.path().join("d.jsonl.1")).expect("rm");
        std::fs::write(&log, "{\"rule\":\"x\"}\n").expect("w");
        assert!(DecisionLog::open(&cfg(&log)).is_ok());
        assert!(DecisionLog::open(&cfg(&d.path().join("new.jsonl"))).is_ok());
    }
}
