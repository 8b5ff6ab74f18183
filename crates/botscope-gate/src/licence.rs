//! Licence tokens (a policy's `license` rules): RSL's Crawler
//! Authorization Protocol as the gate applies it. A request a `license`
//! rule matches passes with `Authorization: License <token>` that the
//! licence server the site's RSL document names for the path
//! (`<content server>`) says, at its introspection endpoint, permits the
//! page; any other is answered 401 (402 when every licence for the page
//! is paid), 403 or 503 with `WWW-Authenticate: License …` and a `Link`
//! to the licence.
//!
//! Bounded: answers are kept (a permit until its `exp`, at most five
//! minutes; a refusal a minute) in a table of at most [`MAX_TOKENS`]
//! tokens; at most [`IN_FLIGHT`] introspections run at once, at most
//! [`PER_NETWORK`] for one client network (a /24 or /48), each within the
//! licence server's deadlines. A request past those bounds, or one the
//! server did not answer in time or answered in a way that does not read,
//! is refused (503, try again), never passed.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use botscope_http::olp::OlpConfig;
use botscope_terms::olp::{self, Introspected, Presented, Refusal};
use botscope_terms::rsl::Document;

/// Tokens whose answers are kept.
pub const MAX_TOKENS: usize = 10_000;
/// Introspections at once.
pub const IN_FLIGHT: usize = 8;
/// Introspections at once for one client network.
pub const PER_NETWORK: u8 = 2;
/// The longest a permit is kept.
pub const KEEP_PERMIT: Duration = Duration::from_secs(300);
/// How long a refusal is kept.
pub const KEEP_REFUSAL: Duration = Duration::from_secs(60);

/// What the gate found of a request's licence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Licensed {
    /// Its token permits the page (the licensed resource, as the server
    /// said it).
    Permitted(String),
    /// Refused: why, in the challenge's terms and in words; `paid` when
    /// every licence for the page costs money; `server` the licence
    /// server's token endpoint, when known.
    Refused {
        /// The challenge's error.
        refusal: Refusal,
        /// Why, in words (the gate's, or the licence server's `reason`).
        why: String,
        /// Every licence for the page is paid (402 rather than 401).
        paid: bool,
        /// Where a token is had.
        token_endpoint: Option<String>,
    },
}

impl Licensed {
    /// The status the client gets.
    pub fn status(&self) -> u16 {
        match self {
            Licensed::Permitted(_) => 200,
            Licensed::Refused { refusal, paid, .. } => refusal.status(*paid),
        }
    }

    /// The `WWW-Authenticate` value of a refusal.
    pub fn challenge(&self) -> Option<String> {
        match self {
            Licensed::Permitted(_) => None,
            Licensed::Refused {
                refusal,
                why,
                token_endpoint,
                ..
            } => Some(olp::challenge(*refusal, why, token_endpoint.as_deref())),
        }
    }

    /// The outcome's name, as logged and counted.
    pub fn outcome(&self) -> &'static str {
        match self {
            Licensed::Permitted(_) => "permitted",
            Licensed::Refused { refusal, .. } => refusal.code(),
        }
    }
}

/// What is kept of one token.
#[derive(Debug, Default)]
struct Kept {
    /// Resources its licence was said to cover, until when.
    permits: Vec<(String, Instant)>,
    /// The token is not active, until when.
    inactive: Option<Instant>,
    /// Resources it was refused, why, until when.
    refused: Vec<(String, String, Instant)>,
}

/// The site's licences and what licence servers said of tokens.
pub struct Licences {
    doc: Option<Arc<Document>>,
    cfg: OlpConfig,
    kept: Mutex<HashMap<[u8; 32], Kept>>,
    slots: tokio::sync::Semaphore,
    per_network: Mutex<HashMap<IpAddr, u8>>,
    /// Answers by outcome: permitted, then each refusal.
    counts: [AtomicU64; 5],
    /// Introspections asked of licence servers.
    pub asked: AtomicU64,
}

impl std::fmt::Debug for Licences {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Licences")
            .field("rsl", &self.doc.is_some())
            .finish_non_exhaustive()
    }
}

const REFUSALS: [Refusal; 4] = [
    Refusal::InvalidRequest,
    Refusal::InvalidToken,
    Refusal::InsufficientScope,
    Refusal::ServerError,
];

/// The network a client's introspections are counted against.
fn network(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(v) => {
            let o = v.octets();
            IpAddr::from([o[0], o[1], o[2], 0])
        }
        IpAddr::V6(v) => {
            let s = v.segments();
            IpAddr::from([s[0], s[1], s[2], 0, 0, 0, 0, 0])
        }
    }
}

fn digest(token: &str) -> [u8; 32] {
    let d = ring::digest::digest(&ring::digest::SHA256, token.as_bytes());
    let mut out = [0u8; 32];
    out.copy_from_slice(d.as_ref());
    out
}

/// Frees a client network's introspection slot when dropped.
struct NetSlot<'a>(&'a Licences, IpAddr);

impl Drop for NetSlot<'_> {
    fn drop(&mut self) {
        let mut m = self.0.per_network.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = m.get_mut(&self.1) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                m.remove(&self.1);
            }
        }
    }
}

impl Licences {
    /// The licences of `rsl` (the site's RSL document), checked with the
    /// licence servers as `cfg` says.
    pub fn new(rsl: Option<&[u8]>, cfg: OlpConfig) -> Licences {
        Licences {
            doc: rsl.map(|b| Arc::new(Document::parse(b))),
            cfg,
            kept: Mutex::new(HashMap::new()),
            slots: tokio::sync::Semaphore::new(IN_FLIGHT),
            per_network: Mutex::new(HashMap::new()),
            counts: Default::default(),
            asked: AtomicU64::new(0),
        }
    }

    /// `(outcome, count)`: `permitted`, then each refusal's code.
    pub fn outcomes(&self) -> Vec<(&'static str, u64)> {
        let mut v = vec![("permitted", self.counts[0].load(Ordering::Relaxed))];
        for (i, r) in REFUSALS.iter().enumerate() {
            v.push((r.code(), self.counts[i + 1].load(Ordering::Relaxed)));
        }
        v
    }

    fn count(&self, l: &Licensed) {
        let i = match l {
            Licensed::Permitted(_) => 0,
            Licensed::Refused { refusal, .. } => {
                1 + REFUSALS.iter().position(|r| r == refusal).unwrap_or(0)
            }
        };
        self.counts[i].fetch_add(1, Ordering::Relaxed);
    }

    /// Checks the licence of a request for `path` on `origin`
    /// (`scheme://host`, the front server's), its `Authorization` field
    /// values `authorization`, from `client`, at `now` (Unix seconds).
    pub async fn check(
        &self,
        authorization: &[&str],
        origin: &str,
        path: &str,
        client: IpAddr,
        now: i64,
    ) -> Licensed {
        let l = self
            .check_uncounted(authorization, origin, path, client, now)
            .await;
        self.count(&l);
        l
    }

    async fn check_uncounted(
        &self,
        authorization: &[&str],
        origin: &str,
        path: &str,
        client: IpAddr,
        now: i64,
    ) -> Licensed {
        let refused = |refusal, why: &str, paid, token_endpoint| Licensed::Refused {
            refusal,
            why: why.to_owned(),
            paid,
            token_endpoint,
        };
        let content = self
            .doc
            .as_ref()
            .and_then(|d| d.content_for(origin, path.split('?').next().unwrap_or(path)));
        let Some((content, server)) =
            content.and_then(|c| c.server.as_deref().map(|s| (c, s.to_owned())))
        else {
            return refused(
                Refusal::InvalidRequest,
                "no licence server grants licences for this page",
                false,
                None,
            );
        };
        let paid = !content.licenses.is_empty() && content.licenses.iter().all(|l| !l.is_free());
        let token_endpoint = olp::endpoint(&server, "token").map(|u| u.to_string());
        // The resource asked about: the content's own origin when its URL
        // is absolute (never a Host the client chose), else the request's.
        let base = url::Url::parse(&content.url)
            .ok()
            .filter(|u| u.has_host())
            .map_or_else(|| origin.to_owned(), |u| u.origin().ascii_serialization());
        let resource = format!("{base}{path}");
        let token = match olp::presented(authorization) {
            Presented::None => {
                return refused(
                    Refusal::InvalidRequest,
                    "Access to this resource requires a valid license",
                    paid,
                    token_endpoint,
                );
            }
            Presented::Malformed(why) => {
                return refused(Refusal::InvalidRequest, why, paid, token_endpoint);
            }
            Presented::Token(t) => t,
        };
        let key = digest(token);
        let at = Instant::now();
        if let Some(l) = self.kept_answer(&key, &resource, at, &token_endpoint) {
            return l;
        }
        // Bounded: one network's share, then the gate's.
        let net = network(client);
        {
            let mut m = self.per_network.lock().unwrap_or_else(|p| p.into_inner());
            let n = m.entry(net).or_default();
            if *n >= PER_NETWORK {
                return refused(
                    Refusal::ServerError,
                    "too many licence checks from this network at once: try again in a moment",
                    paid,
                    token_endpoint,
                );
            }
            *n += 1;
        }
        let _net = NetSlot(self, net);
        let Ok(_slot) = self.slots.try_acquire() else {
            return refused(
                Refusal::ServerError,
                "the licence server is busy: try again in a moment",
                paid,
                token_endpoint,
            );
        };
        self.asked.fetch_add(1, Ordering::Relaxed);
        let answer =
            botscope_http::olp::introspect(&server, token, &resource, &self.cfg, now).await;
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        if kept.len() >= MAX_TOKENS && !kept.contains_key(&key) {
            // Full: the oldest answers go first, at most a tenth at a time.
            let now = Instant::now();
            kept.retain(|_, k| {
                k.permits.iter().any(|(_, t)| *t > now)
                    || k.inactive.is_some_and(|t| t > now)
                    || k.refused.iter().any(|(_, _, t)| *t > now)
            });
            if kept.len() >= MAX_TOKENS {
                let drop: Vec<[u8; 32]> = kept.keys().take(MAX_TOKENS / 10).copied().collect();
                for k in drop {
                    kept.remove(&k);
                }
            }
        }
        match answer {
            Ok(Introspected::Permitted { until, covers }) => {
                let left = until.map_or(KEEP_PERMIT, |u| {
                    Duration::from_secs(u64::try_from(u.saturating_sub(now)).unwrap_or(0))
                });
                let k = kept.entry(key).or_default();
                if k.permits.len() < 8 {
                    k.permits.push((covers.clone(), at + left.min(KEEP_PERMIT)));
                }
                Licensed::Permitted(covers)
            }
            Ok(Introspected::Inactive) => {
                kept.entry(key).or_default().inactive = Some(at + KEEP_REFUSAL);
                refused(
                    Refusal::InvalidToken,
                    "the licence token is expired, revoked or unknown",
                    false,
                    token_endpoint,
                )
            }
            Ok(Introspected::NotPermitted(why)) => {
                let k = kept.entry(key).or_default();
                if k.refused.len() < 8 {
                    k.refused.push((resource, why.clone(), at + KEEP_REFUSAL));
                }
                refused(Refusal::InsufficientScope, &why, false, token_endpoint)
            }
            Err(e) => {
                tracing::warn!(server = %botscope_text::field(&server), error = %e, "licence check failed");
                refused(
                    Refusal::ServerError,
                    "the licence server could not be asked: try again in a moment",
                    paid,
                    token_endpoint,
                )
            }
        }
    }

    /// A kept answer for `key` and `resource`, when one holds.
    fn kept_answer(
        &self,
        key: &[u8; 32],
        resource: &str,
        at: Instant,
        token_endpoint: &Option<String>,
    ) -> Option<Licensed> {
        let kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        let k = kept.get(key)?;
        if k.inactive.is_some_and(|t| t > at) {
            return Some(Licensed::Refused {
                refusal: Refusal::InvalidToken,
                why: "the licence token is expired, revoked or unknown".into(),
                paid: false,
                token_endpoint: token_endpoint.clone(),
            });
        }
        if let Some((_, why, _)) = k.refused.iter().find(|(r, _, t)| *t > at && r == resource) {
            return Some(Licensed::Refused {
                refusal: Refusal::InsufficientScope,
                why: why.clone(),
                paid: false,
                token_endpoint: token_endpoint.clone(),
            });
        }
        k.permits
            .iter()
            .find(|(c, t)| *t > at && olp::covers(c, resource))
            .map(|(c, _)| Licensed::Permitted(c.clone()))
    }
}
