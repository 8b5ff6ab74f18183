//! Positive and negative DNS answers kept for their TTL, saved to a JSON
//! file so that later runs reuse them. Failures (timeouts, SERVFAIL,
//! refused) are never kept.
//!
//! Every answer belongs to the resolver that gave it: a cache is scoped
//! ([`Cache::scoped`]) to the nameservers it asks, and reads and writes
//! only their answers. One file holds the answers of every resolver used
//! with it, each apart, so that a negative answer or a "zone known" from
//! one resolver is never taken as the evidence of another. A file written
//! before answers were scoped (version 0) names no resolver: its answers
//! are not used.

use std::collections::HashMap;
use std::net::IpAddr;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::{DnsAnswer, Error, Timed};

/// Entries kept at most; the soonest to expire go first.
const MAX_ENTRIES: usize = 1_000_000;
/// Largest cache file read.
const MAX_FILE_BYTES: u64 = 512 * 1024 * 1024;

/// The file's version: 1, answers keyed by their resolver.
const VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
struct Entry {
    /// Seconds since the Unix epoch after which the entry is stale.
    expires: u64,
    /// Seconds since the Unix epoch when it was answered (0: not known).
    #[serde(default, skip_serializing_if = "is_zero")]
    stored: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    names: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    addrs: Option<Vec<IpAddr>>,
}

/// The DNS cache.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Cache {
    version: u32,
    entries: HashMap<String, Entry>,
    /// Entries held at most while running (a long-lived process such as
    /// the gate); past it new answers are not kept. `None`: the file's
    /// [`MAX_ENTRIES`], enforced when loading and saving.
    #[serde(skip)]
    limit: Option<usize>,
    /// Answers not kept since the last sweep.
    #[serde(skip)]
    refused: usize,
    /// The resolver whose answers this cache reads and writes (the keys'
    /// prefix); empty: unscoped (one resolver per cache, in memory).
    #[serde(skip)]
    scope: String,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The scope of a set of nameservers: their addresses, sorted (the
/// system's, read from its configuration, when none is given).
pub fn resolver_scope(servers: &[std::net::SocketAddr]) -> String {
    let mut servers = if servers.is_empty() {
        match crate::system_nameservers() {
            Ok(s) if !s.is_empty() => s,
            _ => return "system".to_owned(),
        }
    } else {
        servers.to_vec()
    };
    servers.sort();
    servers.dedup();
    servers
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

fn secs(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_secs()
}

impl Cache {
    /// An empty cache that keeps at most `limit` entries: once full, new
    /// answers are used but not kept (expired ones are dropped first).
    pub fn bounded(limit: usize) -> Cache {
        Cache {
            limit: Some(limit),
            ..Cache::default()
        }
    }

    /// The same cache, reading and writing only the answers of the
    /// resolver `scope` names ([`resolver_scope`]).
    pub fn scoped(mut self, scope: &str) -> Cache {
        self.scope = scope.to_owned();
        self
    }

    /// The resolver this cache reads and writes for (empty: unscoped).
    pub fn scope(&self) -> &str {
        &self.scope
    }

    /// The key of a question for this cache's resolver.
    fn key(&self, kind: &str, what: &str) -> String {
        if self.scope.is_empty() {
            format!("{kind} {what}")
        } else {
            format!("@{} {kind} {what}", self.scope)
        }
    }

    /// How long the entry `key` has left, when it is live.
    fn left(&self, key: &str, now: SystemTime) -> Option<Duration> {
        self.get(key, now)
            .map(|e| Duration::from_secs(e.expires.saturating_sub(secs(now))))
    }

    /// How long ago the live entry `key` was answered, when known.
    fn age(&self, key: &str, now: SystemTime) -> Option<Duration> {
        self.get(key, now)
            .filter(|e| e.stored > 0)
            .map(|e| Duration::from_secs(secs(now).saturating_sub(e.stored)))
    }

    /// How long the cached reverse answer of `ip` has left.
    pub fn reverse_left(&self, ip: IpAddr, now: SystemTime) -> Option<Duration> {
        self.left(&self.key("ptr", &ip.to_string()), now)
    }

    /// How long the cached address answer of `name` has left.
    pub fn forward_left(&self, name: &str, now: SystemTime) -> Option<Duration> {
        self.left(&self.key("addr", &name.to_ascii_lowercase()), now)
    }

    /// How long ago the cached reverse answer of `ip` was given.
    pub fn reverse_age(&self, ip: IpAddr, now: SystemTime) -> Option<Duration> {
        self.age(&self.key("ptr", &ip.to_string()), now)
    }

    /// How long ago the cached address answer of `name` was given.
    pub fn forward_age(&self, name: &str, now: SystemTime) -> Option<Duration> {
        self.age(&self.key("addr", &name.to_ascii_lowercase()), now)
    }

    /// How long ago `zone` was seen to exist, when that is cached.
    pub fn zone_age(&self, zone: &str, now: SystemTime) -> Option<Duration> {
        self.age(&self.key("zone", &zone.to_ascii_lowercase()), now)
    }

    /// Reads a cache file; a missing file is an empty cache.
    pub fn load(path: &Path) -> Result<Cache, Error> {
        let meta = match std::fs::metadata(path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Cache::default()),
            Err(e) => {
                return Err(Error::Cache(format!(
                    "failed to read DNS cache {}: {e}",
                    path.display()
                )));
            }
        };
        if meta.len() > MAX_FILE_BYTES {
            return Err(Error::Cache(format!(
                "DNS cache {} is {} bytes, over the {MAX_FILE_BYTES} limit",
                path.display(),
                meta.len()
            )));
        }
        let text = std::fs::read(path).map_err(|e| {
            Error::Cache(format!("failed to read DNS cache {}: {e}", path.display()))
        })?;
        let mut c: Cache = serde_json::from_slice(&text).map_err(|e| {
            Error::Cache(format!(
                "{} is not a botscope DNS cache ({e}); it is left as it is \
                     (give another --dns-cache, or --no-dns-cache)",
                path.display()
            ))
        })?;
        if c.version < VERSION {
            // Answers that name no resolver: not evidence for any.
            c.entries.clear();
        }
        c.version = VERSION;
        c.prune(SystemTime::now());
        Ok(c)
    }

    /// Writes the cache: under an exclusive lock on `PATH.lock`, the file's
    /// current entries are merged in (another run may have saved since this
    /// one loaded; the later expiry wins), then the whole is written to a
    /// temporary file renamed into place. A file there that is not a cache
    /// is an error and stays as it is.
    pub fn save(&mut self, path: &Path) -> Result<(), Error> {
        if let Some(dir) = path.parent()
            && !dir.as_os_str().is_empty()
        {
            std::fs::create_dir_all(dir)
                .map_err(|e| Error::Cache(format!("failed to create {}: {e}", dir.display())))?;
        }
        let failed =
            |e: std::io::Error| Error::Cache(format!("failed to write {}: {e}", path.display()));
        let mut lock_name = path.as_os_str().to_owned();
        lock_name.push(".lock");
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&lock_name)
            .map_err(failed)?;
        lock.lock().map_err(failed)?;
        let on_disk = Cache::load(path)?;
        self.version = VERSION;
        for (k, e) in on_disk.entries {
            match self.entries.get(&k) {
                Some(mine) if mine.expires >= e.expires => {}
                _ => {
                    self.entries.insert(k, e);
                }
            }
        }
        self.prune(SystemTime::now());
        let text = serde_json::to_vec(self).map_err(|e| Error::Cache(e.to_string()))?;
        botscope_os::write_atomic(path, &text)
            .map_err(|e| Error::Cache(format!("failed to write {}: {e}", path.display())))?;
        drop(lock);
        Ok(())
    }

    /// Number of live entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn prune(&mut self, now: SystemTime) {
        let now = secs(now);
        self.entries.retain(|_, e| e.expires > now);
        if self.entries.len() > MAX_ENTRIES {
            let mut by_expiry: Vec<(u64, String)> = self
                .entries
                .iter()
                .map(|(k, e)| (e.expires, k.clone()))
                .collect();
            by_expiry.sort_unstable();
            for (_, k) in by_expiry.into_iter().take(self.entries.len() - MAX_ENTRIES) {
                self.entries.remove(&k);
            }
        }
    }

    fn get(&self, key: &str, now: SystemTime) -> Option<&Entry> {
        self.entries.get(key).filter(|e| e.expires > secs(now))
    }

    fn put(
        &mut self,
        key: String,
        ttl: Duration,
        now: SystemTime,
        names: Option<Vec<String>>,
        addrs: Option<Vec<IpAddr>>,
    ) {
        if ttl.is_zero() {
            return;
        }
        if let Some(limit) = self.limit
            && self.entries.len() >= limit
            && !self.entries.contains_key(&key)
        {
            // Dropping the expired ones costs the table's size: done only
            // when that frees room, at most once per limit/8 answers.
            self.refused += 1;
            if self.refused >= (limit / 8).max(1) {
                self.refused = 0;
                self.entries.retain(|_, e| e.expires > secs(now));
            }
            if self.entries.len() >= limit {
                return;
            }
        }
        self.entries.insert(
            key,
            Entry {
                expires: secs(now) + ttl.as_secs().max(1),
                stored: secs(now),
                names,
                addrs,
            },
        );
    }

    /// A live reverse answer for `ip`.
    pub fn reverse(&self, ip: IpAddr, now: SystemTime) -> Option<DnsAnswer<String>> {
        self.get(&self.key("ptr", &ip.to_string()), now)
            .and_then(|e| e.names.clone())
            .map(Ok)
    }

    /// Keeps a reverse answer (failures are not kept).
    pub fn put_reverse(&mut self, ip: IpAddr, t: &Timed<String>, now: SystemTime) {
        if let Ok(names) = &t.answer {
            let key = self.key("ptr", &ip.to_string());
            self.put(key, t.ttl, now, Some(names.clone()), None);
        }
    }

    /// A live forward answer for `name`.
    pub fn forward(&self, name: &str, now: SystemTime) -> Option<DnsAnswer<IpAddr>> {
        self.get(&self.key("addr", &name.to_ascii_lowercase()), now)
            .and_then(|e| e.addrs.clone())
            .map(Ok)
    }

    /// Keeps a forward answer (failures are not kept).
    pub fn put_forward(&mut self, name: &str, t: &Timed<IpAddr>, now: SystemTime) {
        if let Ok(addrs) = &t.answer {
            let key = self.key("addr", &name.to_ascii_lowercase());
            self.put(key, t.ttl, now, None, Some(addrs.clone()));
        }
    }
}

impl Cache {
    /// True when `zone` was seen to exist and the entry is live.
    pub fn knows_zone(&self, zone: &str, now: SystemTime) -> bool {
        self.get(&self.key("zone", &zone.to_ascii_lowercase()), now)
            .is_some()
    }

    /// Keeps that `zone` exists, for `ttl`.
    pub fn put_zone(&mut self, zone: &str, ttl: Duration, now: SystemTime) {
        let key = self.key("zone", &zone.to_ascii_lowercase());
        self.put(key, ttl, now, None, None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DnsFailure;

    #[test]
    fn ttls_negative_answers_and_failures() {
        let mut c = Cache::default();
        let now = SystemTime::now();
        let ip: IpAddr = "192.0.2.1".parse().expect("ip");
        c.put_reverse(
            ip,
            &Timed {
                answer: Ok(vec!["a.example".into()]),
                ttl: Duration::from_secs(60),
            },
            now,
        );
        c.put_forward(
            "none.example",
            &Timed {
                answer: Ok(vec![]),
                ttl: Duration::from_secs(30),
            },
            now,
        );
        c.put_forward(
            "fail.example",
            &Timed {
                answer: Err(DnsFailure::Timeout),
                ttl: Duration::from_secs(30),
            },
            now,
        );
        assert_eq!(c.reverse(ip, now), Some(Ok(vec!["a.example".to_owned()])));
        assert_eq!(
            c.forward("NONE.example", now),
            Some(Ok(vec![])),
            "negative answers are kept"
        );
        assert_eq!(c.forward("fail.example", now), None, "failures are not");
        assert_eq!(
            c.forward("none.example", now + Duration::from_secs(31)),
            None,
            "expired"
        );
        assert!(c.reverse(ip, now + Duration::from_secs(59)).is_some());
    }

    /// Two runs that loaded the same cache and save in turn: the second
    /// keeps the first one's answers.
    #[test]
    fn concurrent_runs_merge_on_save() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("dns.json");
        let now = SystemTime::now();
        let t = |n: &str| Timed {
            answer: Ok(vec![n.to_owned()]),
            ttl: Duration::from_secs(600),
        };
        let (a, b): (IpAddr, IpAddr) = (
            "192.0.2.1".parse().expect("ip"),
            "192.0.2.2".parse().expect("ip"),
        );
        let mut one = Cache::load(&path).expect("empty");
        let mut two = Cache::load(&path).expect("empty");
        one.put_reverse(a, &t("a.example"), now);
        two.put_reverse(b, &t("b.example"), now);
        one.save(&path).expect("save");
        two.save(&path).expect("save");
        let back = Cache::load(&path).expect("load");
        assert_eq!(back.reverse(a, now), Some(Ok(vec!["a.example".to_owned()])));
        assert_eq!(back.reverse(b, now), Some(Ok(vec!["b.example".to_owned()])));
        // A file that is not a cache is never replaced by a save either.
        std::fs::write(&path, b"access log").expect("write");
        assert!(one.save(&path).is_err());
        assert_eq!(std::fs::read(&path).expect("read"), b"access log");
    }

    #[test]
    fn persists_and_survives_damage() {
        let dir = std::env::temp_dir().join(format!("botscope-dns-cache-{}", std::process::id()));
        let path = dir.join("cache.json");
        let mut c = Cache::default();
        let ip: IpAddr = "2001:db8::1".parse().expect("ip");
        c.put_reverse(
            ip,
            &Timed {
                answer: Ok(vec!["v6.example".into()]),
                ttl: Duration::from_secs(600),
            },
            SystemTime::now(),
        );
        c.save(&path).expect("save");
        let back = Cache::load(&path).expect("load");
        assert_eq!(
            back.reverse(ip, SystemTime::now()),
            Some(Ok(vec!["v6.example".to_owned()]))
        );
        std::fs::write(&path, b"{not json").expect("write");
        assert!(
            Cache::load(&path)
                .expect_err("not a cache")
                .to_string()
                .contains("is not a botscope DNS cache")
        );
        assert!(
            Cache::load(&dir.join("missing.json"))
                .expect("missing is empty")
                .is_empty()
        );
        let _ = std::fs::remove_dir_all(dir);
    }
}
