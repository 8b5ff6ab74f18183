//! Web Bot Auth at the gate: `/auth` checks the signature of the request
//! nginx asks about (its `Signature`, `Signature-Input` and
//! `Signature-Agent`, and the original host and URI nginx passes), with
//! the agents' key directories kept by a [`KeyCache`] that fetches off
//! the request path, and a memory of nonces against replays.

use std::borrow::Cow;
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

/// One request's signature checks, waiting for a batch.
struct Job {
    prepared: botscope_httpsig::Prepared,
    reply: tokio::sync::oneshot::Sender<(botscope_httpsig::Prepared, Vec<bool>)>,
}

/// Requests' signature checks made together, per thread: the first
/// request on a thread to find no batch running there leads one, lets the
/// requests ready on its worker add theirs (one yield), then checks them
/// all in one batch on its own thread, where an Ed25519 check in a batch
/// of dozens costs about half of one alone. No thread is woken and
/// nothing is copied: each request's prepared checks travel to the leader
/// and back. Each worker thread batches its own requests (a slot of its
/// own), so that the workers check in parallel: with one batch for all,
/// a worker whose requests were all in the other's batch sat idle while
/// it ran.
struct Batcher {
    slots: Box<[Slot]>,
}

/// One thread's waiting jobs, and whether a leader is on its way.
#[derive(Default)]
struct Slot(Mutex<(Vec<Job>, bool)>);

/// Slots: threads beyond it share.
const SLOTS: usize = 16;

impl Default for Batcher {
    fn default() -> Batcher {
        Batcher {
            slots: (0..SLOTS).map(|_| Slot::default()).collect(),
        }
    }
}

impl std::fmt::Debug for Batcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Batcher").finish_non_exhaustive()
    }
}

/// This thread's slot: threads are numbered as they first batch.
fn this_slot() -> usize {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static SLOT: usize = NEXT.fetch_add(1, Ordering::Relaxed) % SLOTS;
    }
    SLOT.with(|s| *s)
}

impl Slot {
    fn lock(&self) -> std::sync::MutexGuard<'_, (Vec<Job>, bool)> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Checks the waiting jobs (at most [`BATCH`] checks; the rest wait
    /// for the next leader, whom the last of these elects) and answers
    /// them.
    fn run(&self) {
        let jobs: Vec<Job> = {
            let mut st = self.lock();
            let mut n = 0;
            let take =
                st.0.iter()
                    .take_while(|j| {
                        n += j.prepared.checks().len();
                        n <= BATCH || n == j.prepared.checks().len()
                    })
                    .count()
                    .max(1)
                    .min(st.0.len());
            let jobs: Vec<Job> = st.0.drain(..take).collect();
            // Whoever comes next leads the rest.
            st.1 = false;
            jobs
        };
        if jobs.is_empty() {
            return;
        }
        let flat: Vec<(&PublicKey, &[u8], &[u8])> =
            jobs.iter().flat_map(|j| j.prepared.checks()).collect();
        let results = botscope_httpsig::check_batch(&flat);
        drop(flat);
        let mut results = results.into_iter();
        for j in jobs {
            let mine: Vec<bool> = results.by_ref().take(j.prepared.checks().len()).collect();
            let _ = j.reply.send((j.prepared, mine));
        }
        // Jobs left past the batch: the next leader is elected among the
        // requests still to come, or here when none comes.
        let left = {
            let mut st = self.lock();
            let left = !st.0.is_empty() && !st.1;
            if left {
                st.1 = true;
            }
            left
        };
        if left {
            self.run();
        }
    }
}

/// A batch's leader: when its request is dropped while it yields (the
/// client went away), the batch is still checked, so that no other
/// request waits for a leader that is gone. It checks the slot it was
/// elected in, on whichever thread the request resumes.
struct Lead<'a>(&'a Slot);

impl Drop for Lead<'_> {
    fn drop(&mut self) {
        self.0.run();
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
    /// Requests' checks made together.
    batcher: Batcher,
}

/// What `/auth` says of a request's signature.
#[derive(Debug)]
pub struct Checked {
    /// The verdict.
    pub verdict: Verdict,
    /// The registered bot whose agent signed (when verified).
    pub bot: Option<String>,
}

/// A header's lines joined by `, `, each trimmed (borrowed when there is
/// one line of UTF-8, as there nearly always is).
fn header<'a>(h: &'a HeaderMap, name: &str) -> Option<Cow<'a, str>> {
    let mut out: Option<Cow<'a, str>> = None;
    for v in h.get_all(name) {
        let v = match String::from_utf8_lossy(v.as_bytes()) {
            Cow::Borrowed(b) => Cow::Borrowed(b.trim()),
            Cow::Owned(o) => Cow::Owned(o.trim().to_owned()),
        };
        match &mut out {
            Some(o) => {
                let o = o.to_mut();
                o.push_str(", ");
                o.push_str(&v);
            }
            None => out = Some(v),
        }
    }
    out
}

impl Signatures {
    /// Checking with `cfg`, fetching on the current runtime.
    pub fn new(cfg: SignatureConfig) -> Signatures {
        Signatures {
            // The registry's own agents may use the fetch slots a flood of
            // made-up agents cannot take.
            keys: KeyCache::with_priority(
                cfg.directory,
                cfg.bounds,
                cfg.registry
                    .bots()
                    .iter()
                    .flat_map(|b| b.signature_agents.iter().cloned())
                    .collect(),
            ),
            registry: cfg.registry,
            nonces: Mutex::new(NonceMemory::new(NONCES)),
            policy: Policy::default(),
            hasher: std::collections::hash_map::RandomState::new(),
            batcher: Batcher::default(),
        }
    }

    /// Finishes `p`'s checks in a batch with other requests' (see
    /// [`Batcher`]).
    async fn verify(&self, p: botscope_httpsig::Prepared) -> Verdict {
        if p.checks().is_empty() {
            return p.finish(&[]);
        }
        let (reply, answer) = tokio::sync::oneshot::channel();
        let slot = &self.batcher.slots[this_slot()];
        let lead = {
            let mut st = slot.lock();
            st.0.push(Job { prepared: p, reply });
            !std::mem::replace(&mut st.1, true)
        };
        if lead {
            let guard = Lead(slot);
            // The requests ready on this worker add their checks.
            tokio::task::yield_now().await;
            drop(guard);
        }
        match answer.await {
            Ok((p, results)) => p.finish(&results),
            // The batch never lost a job; should it, nothing was checked.
            Err(_) => Verdict::bare(
                Outcome::Unverified,
                botscope_httpsig::Reason::KeysUnknown("the check was not made".into()),
            ),
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
        let target = header(h, "x-original-uri").unwrap_or(Cow::Borrowed("/"));
        let method = header(h, "x-original-method").unwrap_or(Cow::Borrowed("GET"));
        let scheme = header(h, "x-forwarded-proto")
            .filter(|p| p == "http")
            .unwrap_or(Cow::Borrowed("https"));
        // Only the fields a Web Bot Auth signature may cover are read:
        // the pay-per-crawl price fields among them (a payment counts
        // only when its signature covers its price).
        let mut fields = Vec::with_capacity(6);
        for name in [
            "signature",
            "signature-input",
            "signature-agent",
            "user-agent",
            "crawler-exact-price",
            "crawler-max-price",
        ] {
            if let Some(v) = header(h, name) {
                fields.push((name.to_owned(), v.into_owned()));
            }
        }
        let req = botscope_httpsig::Request::new(&method, &scheme, &authority, &target, fields);
        let prepared = botscope_httpsig::prepare_request(
            &req,
            &self.keys.keys_for(now, client),
            now,
            &self.policy,
        );
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
        // By identifier: the URL resolved, normalized (a bare origin and
        // its well-known URL are one agent).
        let bot = match (&verdict.outcome, verdict.identifier()) {
            (Outcome::Verified, Some(id)) => self
                .registry
                .signed_by_identifier(&id)
                .map(|b| b.name.clone()),
            _ => None,
        };
        Checked { verdict, bot }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use axum::http::{HeaderName, HeaderValue};

    use super::*;

    const AGENT: &str = "https://agent.test.example";

    /// Many requests at once on two workers, a third of them tampered
    /// with: batches form on both threads, and each request gets its own
    /// signature's answer.
    #[test]
    fn concurrent_checks_each_get_their_own_answer() {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        let now = 1_790_000_000;
        let key = botscope_httpsig::SigningKey::generate().expect("key");
        let requests: Vec<(HeaderMap, bool)> = (0..600)
            .map(|i| {
                let req = botscope_httpsig::Request::new("GET", "https", "shop.test", "/", vec![]);
                let spec =
                    botscope_httpsig::SignSpec::new(Some(AGENT), now, 300, Some(format!("n-{i}")));
                let signed = botscope_httpsig::sign_request(&req, &key, &spec).expect("signed");
                let tampered = i % 3 == 0;
                let mut h = HeaderMap::new();
                for (name, mut value) in signed.headers() {
                    if tampered && name == "Signature" {
                        // A byte of the signature itself (`sig1=:…:`).
                        let at = value.find(':').expect("colon") + 5;
                        let c = if &value[at..=at] == "A" { "B" } else { "A" };
                        value.replace_range(at..=at, c);
                    }
                    h.append(
                        HeaderName::from_bytes(name.to_ascii_lowercase().as_bytes()).expect("name"),
                        HeaderValue::from_str(&value).expect("value"),
                    );
                }
                h.insert("x-original-host", HeaderValue::from_static("shop.test"));
                (h, !tampered)
            })
            .collect();
        let answers = rt.block_on(async {
            let registry = Registry::parse(
                "t.yaml",
                &format!("bots:\n- name: SignedBot\n  category: ai-assistant\n  signature_agents: ['{AGENT}']\n"),
            )
            .expect("registry");
            let sigs = Arc::new(Signatures::new(SignatureConfig {
                registry: Arc::new(registry),
                directory: DirectoryConfig::default(),
                bounds: Bounds::default(),
            }));
            let directory = botscope_httpsig::Directory {
                keys: vec![(key.keyid(), key.public())],
                ..botscope_httpsig::Directory::default()
            };
            sigs.keys()
                .insert(AGENT, directory, Duration::from_secs(3600));
            let tasks: Vec<_> = requests
                .iter()
                .enumerate()
                .map(|(i, (h, _))| {
                    let (sigs, h) = (sigs.clone(), h.clone());
                    let client = std::net::IpAddr::from([192, 0, 2, (i % 250) as u8]);
                    tokio::spawn(async move { sigs.check(&h, client, now).await })
                })
                .collect();
            let mut answers = Vec::new();
            for t in tasks {
                answers.push(t.await.expect("task"));
            }
            answers
        });
        for (i, ((_, good), a)) in requests.iter().zip(&answers).enumerate() {
            if *good {
                assert_eq!(
                    a.verdict.outcome,
                    Outcome::Verified,
                    "request {i}: {:?}",
                    a.verdict
                );
                assert_eq!(a.bot.as_deref(), Some("SignedBot"));
            } else {
                assert_eq!(
                    a.verdict.outcome,
                    Outcome::Invalid,
                    "request {i}: {:?}",
                    a.verdict
                );
                assert_eq!(a.bot, None);
            }
        }
    }
}
