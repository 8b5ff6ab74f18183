//! The decision log: one JSON line per decision that is not `allow` (or
//! every one, with `all`), written by a thread of its own so that a
//! request never waits for the disk. The file is capped: past its size it
//! is renamed `FILE.1` (the previous `FILE.1` is dropped) and a new one is
//! started. A line the writer cannot take in time (its queue full) is
//! counted, never silently lost: `/healthz` and `/metrics` report them;
//! so is a line the disk refused (full, gone), with a warning in the log
//! at most once a minute. When the file is moved or removed (logrotate)
//! the writer notices within a second and opens a new one at the path, as
//! it does on SIGHUP.

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
    /// Lines the disk refused (full, the file gone, an I/O error).
    pub failed: Arc<AtomicU64>,
    /// Times the file was opened anew (moved or removed, or SIGHUP).
    pub reopened: Arc<AtomicU64>,
    /// Asks the writer to open the file anew before its next line.
    reopen: Arc<std::sync::atomic::AtomicBool>,
}

impl DecisionLog {
    /// Opens (appends to) the file and starts the writer thread. A path
    /// that is a symlink, or a file there (or at `FILE.1`, which rotation
    /// replaces) that is not a decision log, is refused: nothing of it is
    /// touched.
    pub fn open(cfg: &DecisionLogConfig) -> std::io::Result<DecisionLog> {
        DecisionLog::open_as(cfg, |b| b == b'{', "a decision log", "--decision-log")
    }

    /// Opens a log whose lines start with a byte `first` accepts (`what`
    /// it is, and the option naming it, for the refusal).
    fn open_as(
        cfg: &DecisionLogConfig,
        first: fn(u8) -> bool,
        what: &'static str,
        option: &'static str,
    ) -> std::io::Result<DecisionLog> {
        let mut rotated = cfg.path.as_os_str().to_owned();
        rotated.push(".1");
        for p in [cfg.path.as_path(), Path::new(&rotated)] {
            ours_or_absent(p, first, what, option)?;
        }
        let file = open_append(&cfg.path)?;
        let (tx, rx) = std::sync::mpsc::sync_channel(QUEUE);
        let log = DecisionLog {
            tx,
            all: cfg.all,
            written: Arc::default(),
            dropped: AtomicU64::new(0),
            rotations: Arc::default(),
            failed: Arc::default(),
            reopened: Arc::default(),
            reopen: Arc::default(),
        };
        let w = Writer {
            path: cfg.path.clone(),
            max: cfg.max_bytes.max(4096),
            written: log.written.clone(),
            rotations: log.rotations.clone(),
            failed: log.failed.clone(),
            reopened: log.reopened.clone(),
            reopen: log.reopen.clone(),
            kind: (first, what, option),
        };
        std::thread::Builder::new()
            .name("decision-log".into())
            .spawn(move || w.run(&rx, file))?;
        Ok(log)
    }

    /// Has the writer open the file anew before its next line (SIGHUP,
    /// after the file was moved away).
    pub fn reopen(&self) {
        self.reopen.store(true, Ordering::Relaxed);
    }

    /// Logs `a` (when it is logged at all).
    pub fn log(&self, a: &Answer, user_agent: &str, method: &str, path: &str) {
        if a.action == Action::Allow && !self.all {
            return;
        }
        let line = line(a, user_agent, method, path, &now_rfc3339());
        self.send(line);
    }

    /// A charge taken back: the application answered `status`, an error
    /// no crawler pays for (standalone only).
    pub fn uncharged(
        &self,
        a: &Answer,
        price: botscope_terms::Price,
        status: u16,
        method: &str,
        path: &str,
    ) {
        let line = serde_json::json!({
            "time": now_rfc3339(),
            "client": a.client.to_string(),
            "method": method,
            "path": path,
            "claimed_bot": a.bot,
            "signature": a.checked.as_ref().map(|c| serde_json::json!({
                "outcome": c.verdict.outcome.as_str(),
                "agent": c.verdict.agent,
            })),
            "rule": a.rule,
            "action": a.action.as_str(),
            "enforced": a.enforced,
            "pay": {"outcome": "uncharged", "price": price.to_string(), "status": status},
        })
        .to_string();
        self.send(line);
    }

    /// A stage of a challenge's funnel (logged whatever `all` says:
    /// `policy replay --funnel` reads them back).
    pub fn funnel(
        &self,
        client: std::net::IpAddr,
        rule: &str,
        stage: crate::funnel::Stage,
        path: &str,
    ) {
        self.send(crate::funnel::line(
            &now_rfc3339(),
            client,
            rule,
            stage,
            path,
        ));
    }

    fn send(&self, line: String) {
        if let Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) = self.tx.try_send(line) {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// The event log (`--events FILE`): one line per trap hit that came to
/// something (a catch, a strike, a forged link, an exempt client) and per
/// refusal of a client a trap caught, for fail2ban and its kin: the time
/// (RFC 3339, UTC) first, then the event, then `key=value` fields, the
/// client's address literal, every stranger's value quoted and escaped:
///
/// ```text
/// 2026-12-06T18:20:00Z catch kind=robots client=203.0.113.9 method=GET path="/t-…/…" ua="curl/8.5"
/// 2026-12-06T18:20:01Z refuse rule="trapped" action=deny client=203.0.113.9 method=GET path="/"
/// ```
///
/// Written as the decision log is (a thread, a bounded queue, lines it
/// cannot take counted, rotation, reopening).
#[derive(Debug)]
pub struct EventLog(pub DecisionLog);

impl EventLog {
    /// Opens (appends to) `cfg.path`; a file there that is not an event
    /// log (its first byte not a digit) or a symlink is refused.
    pub fn open(cfg: &DecisionLogConfig) -> std::io::Result<EventLog> {
        DecisionLog::open_as(cfg, |b| b.is_ascii_digit(), "an event log", "--events").map(EventLog)
    }

    /// A trap hit.
    pub fn trap(
        &self,
        client: std::net::IpAddr,
        hit: crate::trap::Hit,
        outcome: crate::trap::Outcome,
        method: &str,
        path: &str,
        user_agent: &str,
    ) {
        use crate::trap::{Hit, Outcome};
        let kind = match (outcome, hit) {
            (Outcome::Caught(k), _) => k.as_str(),
            (_, Hit::Robots) => "robots",
            (_, Hit::Link(l)) => l.kind.as_str(),
            (_, Hit::Expired) => "expired",
            (_, Hit::Unknown) => "unknown",
        };
        if outcome == Outcome::Ignored {
            return;
        }
        // A good link fetched from another network than the page went to
        // (a fleet harvesting with one address, fetching with others):
        // both are logged.
        let served = match hit {
            Hit::Link(l) if l.network != botscope_policy::network_of(client).0 => {
                format!(" served_to={}", l.network)
            }
            _ => String::new(),
        };
        self.0.send(format!(
            "{} {} kind={kind} client={}{served} method={} path=\"{}\" ua=\"{}\"",
            now_rfc3339(),
            outcome.as_str(),
            botscope_botid::normalize(client),
            botscope_text::field(&method.chars().take(16).collect::<String>()),
            quote(path),
            quote(user_agent),
        ));
    }

    /// A refusal of a client a trap caught.
    pub fn refusal(
        &self,
        client: std::net::IpAddr,
        rule: &str,
        action: Action,
        method: &str,
        path: &str,
    ) {
        self.0.send(format!(
            "{} refuse rule=\"{}\" action={} client={} method={} path=\"{}\"",
            now_rfc3339(),
            quote(rule),
            action.as_str(),
            botscope_botid::normalize(client),
            botscope_text::field(&method.chars().take(16).collect::<String>()),
            quote(path),
        ));
    }
}

/// A stranger's value inside `"…"`: escaped, a quote as `\x22`, at most
/// 1 KiB.
fn quote(s: &str) -> String {
    let mut end = s.len().min(1024);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    botscope_text::field(&s[..end]).replace('"', "\\x22")
}

/// Refuses `path` when it is a symlink, not a regular file, or a file
/// whose first byte `first_ok` refuses (not a log of this kind).
fn ours_or_absent(
    path: &Path,
    first_ok: fn(u8) -> bool,
    what: &str,
    option: &str,
) -> std::io::Result<()> {
    let refuse = |why: &str| {
        Err(std::io::Error::other(format!(
            "{}: {why}; it is left as it is (give another {option})",
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
    if n == 1 && !first_ok(first[0]) {
        return refuse(&format!("not {what}"));
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
        "enforced": a.enforced,
        "pay": a.pay.as_ref().map(pay_json),
        "licence": a.licence.as_ref().map(|l| match l {
            crate::licence::Licensed::Permitted(covers) => serde_json::json!({
                "outcome": "permitted", "covers": covers,
            }),
            crate::licence::Licensed::Refused { why, .. } => serde_json::json!({
                "outcome": l.outcome(), "status": l.status(), "reason": why,
            }),
        }),
    });
    body.to_string()
}

/// A payment answer as the log keeps it: `outcome` (`quote`, `charged`,
/// `error`), the `price` (`USD 0.01`), `code` for an error; the ledger
/// sums the `charged` lines less the `uncharged` ones.
fn pay_json(o: &botscope_terms::pay::Outcome) -> serde_json::Value {
    use botscope_terms::pay::Outcome;
    match o {
        Outcome::Quote { price } => {
            serde_json::json!({"outcome": "quote", "price": price.to_string()})
        }
        Outcome::Charged { price, by } => {
            serde_json::json!({"outcome": "charged", "price": price.to_string(), "by": by})
        }
        Outcome::Error { code, price, why } => serde_json::json!({
            "outcome": "error",
            "code": code.as_str(),
            "price": price.map(|p| p.to_string()),
            "why": why,
        }),
    }
}

/// The time now as RFC 3339 (UTC, milliseconds).
pub fn now_rfc3339() -> String {
    format!("{:.3}", jiff::Timestamp::now())
}

/// The writer thread's state.
struct Writer {
    path: PathBuf,
    max: u64,
    written: Arc<AtomicU64>,
    rotations: Arc<AtomicU64>,
    failed: Arc<AtomicU64>,
    reopened: Arc<AtomicU64>,
    reopen: Arc<std::sync::atomic::AtomicBool>,
    /// The check of a file found at the path: its first byte, what it is,
    /// the option naming it.
    kind: (fn(u8) -> bool, &'static str, &'static str),
}

/// The file's identity, to tell when the path names another file.
#[cfg(unix)]
fn identity(m: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (m.dev(), m.ino())
}

#[cfg(not(unix))]
fn identity(m: &std::fs::Metadata) -> (u64, u64) {
    (m.len(), 0)
}

impl Writer {
    fn run(&self, rx: &Receiver<String>, file: std::fs::File) {
        let mut file = file;
        let mut size = file.metadata().map_or(0, |m| m.len());
        let mut checked = std::time::Instant::now();
        let mut last_warning: Option<std::time::Instant> = None;
        let mut buf: Vec<u8> = Vec::with_capacity(64 * 1024);
        loop {
            let first = match rx.recv_timeout(std::time::Duration::from_secs(1)) {
                Ok(l) => Some(l),
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => None,
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
            };
            // Moved or removed (logrotate), or asked (SIGHUP): a new file
            // at the path. Checked at most once a second.
            let asked = self.reopen.swap(false, Ordering::Relaxed);
            if asked || checked.elapsed() >= std::time::Duration::from_secs(1) {
                checked = std::time::Instant::now();
                let moved = match (std::fs::metadata(&self.path), file.metadata()) {
                    (Ok(at_path), Ok(open)) => identity(&at_path) != identity(&open),
                    _ => true,
                };
                if asked || moved {
                    match ours_or_absent(&self.path, self.kind.0, self.kind.1, self.kind.2)
                        .and_then(|()| open_append(&self.path))
                    {
                        Ok(f) => {
                            size = f.metadata().map_or(0, |m| m.len());
                            file = f;
                            self.reopened.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(e) => self.warn(&mut last_warning, &format!("reopening: {e}")),
                    }
                }
            }
            let Some(first) = first else { continue };
            let mut lines = 0u64;
            let mut next = Some(first);
            while let Some(line) = next.take() {
                let pending = size + buf.len() as u64;
                if pending > 0 && pending + line.len() as u64 + 1 > self.max {
                    size += self.put(&mut file, &mut buf, &mut lines, &mut last_warning);
                    let mut rotated = self.path.as_os_str().to_owned();
                    rotated.push(".1");
                    match std::fs::rename(&self.path, &rotated)
                        .and_then(|()| open_append(&self.path))
                    {
                        Ok(f) => {
                            file = f;
                            size = 0;
                            self.rotations.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(e) => self.warn(&mut last_warning, &format!("rotating: {e}")),
                    }
                }
                buf.extend_from_slice(line.as_bytes());
                buf.push(b'\n');
                lines += 1;
                if buf.len() >= 64 * 1024 {
                    size += self.put(&mut file, &mut buf, &mut lines, &mut last_warning);
                }
                next = rx.try_recv().ok();
            }
            size += self.put(&mut file, &mut buf, &mut lines, &mut last_warning);
        }
    }

    /// Writes the buffered lines: counted written when the disk took
    /// them, failed when it did not. Returns the bytes written.
    fn put(
        &self,
        file: &mut std::fs::File,
        buf: &mut Vec<u8>,
        lines: &mut u64,
        last_warning: &mut Option<std::time::Instant>,
    ) -> u64 {
        if buf.is_empty() {
            return 0;
        }
        let n = buf.len() as u64;
        let r = file.write_all(buf);
        buf.clear();
        let taken = std::mem::take(lines);
        match r {
            Ok(()) => {
                self.written.fetch_add(taken, Ordering::Relaxed);
                n
            }
            Err(e) => {
                self.failed.fetch_add(taken, Ordering::Relaxed);
                self.warn(last_warning, &format!("{taken} lines not written: {e}"));
                0
            }
        }
    }

    /// A warning, at most once a minute.
    fn warn(&self, last: &mut Option<std::time::Instant>, what: &str) {
        if last.is_none_or(|t| t.elapsed() >= std::time::Duration::from_secs(60)) {
            tracing::warn!(
                "decision log {}: {what} (failed so far: {})",
                self.path.display(),
                self.failed.load(Ordering::Relaxed)
            );
            *last = Some(std::time::Instant::now());
        }
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

    fn wait_for(what: &str, cond: impl Fn() -> bool) {
        let t = std::time::Instant::now();
        while !cond() {
            assert!(t.elapsed() < std::time::Duration::from_secs(10), "{what}");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// Found by a probe: on a full disk the log said `written` 179 and
    /// `dropped` 0 after 113,733 denials. A line the disk refuses is now
    /// counted as failed, never as written.
    #[test]
    fn lines_the_disk_refuses_are_counted() {
        let d = tempfile::tempdir().expect("tmp");
        let path = d.path().join("d.jsonl");
        std::fs::write(&path, "").expect("w");
        // A handle the writes fail on, at the path (no reopening).
        let file = std::fs::File::open(&path).expect("open");
        let (tx, rx) = std::sync::mpsc::sync_channel(16);
        let w = Writer {
            path: path.clone(),
            max: 1 << 20,
            written: Arc::default(),
            rotations: Arc::default(),
            failed: Arc::default(),
            reopened: Arc::default(),
            reopen: Arc::default(),
            kind: (|b| b == b'{', "a decision log", "--decision-log"),
        };
        let (written, failed) = (w.written.clone(), w.failed.clone());
        let t = std::thread::spawn(move || w.run(&rx, file));
        for i in 0..3 {
            tx.send(format!("{{\"n\":{i}}}")).expect("send");
        }
        drop(tx);
        t.join().expect("writer");
        assert_eq!(failed.load(Ordering::Relaxed), 3);
        assert_eq!(written.load(Ordering::Relaxed), 0);
    }

    /// Found by a probe: after logrotate moved the file, lines went on
    /// into the moved file. The writer opens a new one at the path, and
    /// on SIGHUP.
    #[test]
    fn a_moved_log_is_opened_anew() {
        let d = tempfile::tempdir().expect("tmp");
        let path = d.path().join("d.jsonl");
        let log = DecisionLog::open(&DecisionLogConfig {
            path: path.clone(),
            all: true,
            max_bytes: 1 << 20,
        })
        .expect("open");
        log.tx.send("{\"n\":1}".into()).expect("send");
        wait_for("written", || log.written.load(Ordering::Relaxed) == 1);
        std::fs::rename(&path, d.path().join("d.jsonl.2026-12-01")).expect("mv");
        wait_for("reopened after the move", || {
            let _ = log.tx.try_send("{\"n\":2}".into());
            std::fs::read_to_string(&path).is_ok_and(|t| t.contains("\"n\":2"))
        });
        assert!(log.reopened.load(Ordering::Relaxed) >= 1);
        let moved = std::fs::read_to_string(d.path().join("d.jsonl.2026-12-01")).expect("r");
        assert!(moved.starts_with("{\"n\":1}\n"), "{moved}");
        let before = log.reopened.load(Ordering::Relaxed);
        log.reopen();
        log.tx.send("{\"n\":3}".into()).expect("send");
        wait_for("reopened on request", || {
            log.reopened.load(Ordering::Relaxed) > before
        });
        assert_eq!(log.failed.load(Ordering::Relaxed), 0);
    }
}
