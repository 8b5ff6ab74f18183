//! Web Bot Auth at the gate: `/auth` checks the signature of the request
//! nginx asks about (its `Signature`, `Signature-Input` and
//! `Signature-Agent`, and the original host and URI nginx passes), with
//! the agents' key directories kept by a [`KeyCache`] that fetches off
//! the request path, and a memory of nonces against replays.

use std::sync::{Arc, Mutex};

use axum::http::HeaderMap;
use botscope_botid::Registry;
use botscope_http::directory::DirectoryConfig;
use botscope_http::keycache::{Bounds, CacheStats, KeyCache};
use botscope_httpsig::{NonceMemory, Outcome, Policy, PublicKey, Verdict};

/// Nonces remembered at most (a signature's validity window, bounded).
pub const NONCES: usize = 65_536;
/// Signature checks made in one batch at most.
pub const BATCH: usize = 64;
/// Requests waiting for the checking thread at most; past it a request's
/// signature is checked on its own worker.
const QUEUE: usize = 4096;

/// One request's signature checks, sent to the checking thread.
struct Job {
    checks: Vec<(PublicKey, Vec<u8>, Vec<u8>)>,
    reply: tokio::sync::oneshot::Sender<Vec<bool>>,
}

/// The checking thread: it takes whatever requests are waiting (up to
/// [`BATCH`] checks) and checks their signatures in one batch, so that
/// under load each check costs about half of what it costs alone, and
/// with one request waiting it checks that one at once.
fn checker(rx: std::sync::mpsc::Receiver<Job>) {
    while let Ok(first) = rx.recv() {
        let mut n = first.checks.len();
        let mut jobs = vec![first];
        while n < BATCH {
            match rx.try_recv() {
                Ok(j) => {
                    n += j.checks.len();
                    jobs.push(j);
                }
                Err(_) => break,
            }
        }
        let flat: Vec<(&PublicKey, &[u8], &[u8])> = jobs
            .iter()
            .flat_map(|j| {
                j.checks
                    .iter()
                    .map(|(k, m, s)| (k, m.as_slice(), s.as_slice()))
            })
            .collect();
        let mut results = botscope_httpsig::check_batch(&flat).into_iter();
        drop(flat);
        for j in jobs {
            let mine: Vec<bool> = results.by_ref().take(j.checks.len()).collect();
            let _ = j.reply.send(mine);
        }
    }
}

/// How the gate checks signatures.
#[derive(Debug, Clone)]
pub struct SignatureConfig {
    /// Which bot each signature agent is (`signature_agents`).
    pub registry: Arc<Registry>,
    /// How key directories are fetched.
    pub directory: DirectoryConfig,
    /// The key cache's bounds.
    pub bounds: Bounds,
}

/// The gate's signature checking.
#[derive(Debug)]
pub struct Signatures {
    registry: Arc<Registry>,
    keys: Arc<KeyCache>,
    nonces: Mutex<NonceMemory>,
    policy: Policy,
    /// Keyed per process: request contexts are hashed with it.
    hasher: std::collections::hash_map::RandomState,
    /// To the checking thread (none: it could not be started).
    checker: Option<std::sync::mpsc::SyncSender<Job>>,
}

/// What `/auth` says of a request's signature.
#[derive(Debug)]
pub struct Checked {
    /// The verdict.
    pub verdict: Verdict,
    /// The registered bot whose agent signed (when verified).
    pub bot: Option<String>,
}

fn header(h: &HeaderMap, name: &str) -> Option<String> {
    let mut out: Option<String> = None;
    for v in h.get_all(name) {
        let v = String::from_utf8_lossy(v.as_bytes());
        match &mut out {
            Some(o) => {
                o.push_str(", ");
                o.push_str(v.trim());
            }
            None => out = Some(v.trim().to_owned()),
        }
    }
    out
}

impl Signatures {
    /// Checking with `cfg`, fetching on the current runtime.
    pub fn new(cfg: SignatureConfig) -> Signatures {
        Signatures {
            registry: cfg.registry,
            keys: KeyCache::new(cfg.directory, cfg.bounds),
            nonces: Mutex::new(NonceMemory::new(NONCES)),
            policy: Policy::default(),
            hasher: std::collections::hash_map::RandomState::new(),
            checker: {
                let (tx, rx) = std::sync::mpsc::sync_channel(QUEUE);
                std::thread::Builder::new()
                    .name("signature checks".into())
                    .spawn(move || checker(rx))
                    .ok()
                    .map(|_| tx)
            },
        }
    }

    /// Finishes `p`'s checks on the checking thread (batched with other
    /// requests'), or here when it is busy or gone.
    async fn verify(&self, p: botscope_httpsig::Prepared) -> Verdict {
        let checks: Vec<(PublicKey, Vec<u8>, Vec<u8>)> = p
            .checks()
            .into_iter()
            .map(|(k, m, s)| (k.clone(), m.to_vec(), s.to_vec()))
            .collect();
        if checks.is_empty() {
            return p.finish(&[]);
        }
        let Some(tx) = &self.checker else {
            return p.verify();
        };
        let (reply, answer) = tokio::sync::oneshot::channel();
        if tx.try_send(Job { checks, reply }).is_err() {
            return p.verify();
        }
        match answer.await {
            Ok(results) => p.finish(&results),
            Err(_) => p.verify(),
        }
    }

    /// The key cache (to put keys in by hand, and for its counters).
    pub fn keys(&self) -> &Arc<KeyCache> {
        &self.keys
    }

    /// The key cache's counters.
    pub fn stats(&self) -> CacheStats {
        self.keys.stats()
    }

    /// Checks the signature of the request `/auth` is asked about, at
    /// `now` (Unix seconds): the authority from `X-Original-Host` (else
    /// `Host`), the target from `X-Original-URI`, the method from
    /// `X-Original-Method` (else `GET`), the scheme from
    /// `X-Forwarded-Proto` (else `https`).
    pub async fn check(&self, h: &HeaderMap, client: std::net::IpAddr, now: i64) -> Checked {
        if !h.contains_key("signature-input") && !h.contains_key("signature") {
            return Checked {
                verdict: Verdict::bare(Outcome::Unverified, botscope_httpsig::Reason::NoSignature),
                bot: None,
            };
        }
        let authority = header(h, "x-original-host")
            .or_else(|| header(h, "host"))
            .unwrap_or_default();
        let target = header(h, "x-original-uri").unwrap_or_else(|| "/".to_owned());
        let method = header(h, "x-original-method").unwrap_or_else(|| "GET".to_owned());
        let scheme = header(h, "x-forwarded-proto")
            .filter(|p| p == "http")
            .unwrap_or_else(|| "https".to_owned());
        // Only the fields a Web Bot Auth signature may cover are read.
        let mut fields = Vec::with_capacity(4);
        for name in [
            "signature",
            "signature-input",
            "signature-agent",
            "user-agent",
        ] {
            if let Some(v) = header(h, name) {
                fields.push((name.to_owned(), v));
            }
        }
        let req = botscope_httpsig::Request::new(&method, &scheme, &authority, &target, fields);
        let prepared =
            botscope_httpsig::prepare_request(&req, &self.keys.keys(now), now, &self.policy);
        let mut verdict = self.verify(prepared).await;
        // nginx asks again about one request after an internal redirect:
        // the same client sending the same request is not a replay.
        let context = {
            use std::hash::BuildHasher;
            self.hasher.hash_one((client, &method, &authority, &target))
        };
        self.nonces
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .check_in(&mut verdict, now, Some(context));
        let bot = match (&verdict.outcome, &verdict.agent) {
            (Outcome::Verified, Some(a)) => self.registry.signed_by(a).map(|b| b.name.clone()),
            _ => None,
        };
        Checked { verdict, bot }
    }
}
