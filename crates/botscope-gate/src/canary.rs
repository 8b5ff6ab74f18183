//! Canary tokens in the pages the standalone gate passes (`--canary-key`):
//! where the owner's page holds the marker, a short visible reference
//! marked for the client the page goes to (its verified identity, else
//! its network, AS and User-Agent family) in the current period; the
//! issuance record that resolves the reference's phrase, bounded, and
//! exported to operators (`/.botscope/canary.jsonl`). Every visitor gets
//! the same slot: a search engine sees what a person sees, but for the
//! reference.
//!
//! A fleet (`--state redis`) keeps one record: each gate pushes the marks
//! it served since its last push every second (what it could not push is
//! kept, bounded as the record is, for the next), Redis merges them and
//! trims the record to its bound, least recently served first; the
//! export reads the fleet's record, or this gate's own when Redis cannot
//! be used, and says which.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use botscope_canary::find::Served;
use botscope_canary::{CanaryKey, Client, Issue, Mark};

use crate::recent::Recent;

/// The reference's words by default.
pub const DEFAULT_TEMPLATE: &str = "Reference: {phrase} {code}";
/// Marks held in the issuance record by default.
pub const DEFAULT_RECORDS: usize = 100_000;

/// How pages are marked.
#[derive(Debug, Clone)]
pub struct CanaryConfig {
    /// The site's canary key.
    pub key: CanaryKey,
    /// The reference's words: `{phrase}` and `{code}` are replaced.
    pub template: String,
    /// A mark's period: a client gets a new one each period.
    pub period: Duration,
    /// Marks held in the issuance record at most (the least recently
    /// served go first).
    pub records: usize,
}

impl CanaryConfig {
    /// With the defaults: the template above, a week, 100,000 marks.
    pub fn new(key: CanaryKey) -> CanaryConfig {
        CanaryConfig {
            key,
            template: DEFAULT_TEMPLATE.to_owned(),
            period: Duration::from_secs(7 * 86_400),
            records: DEFAULT_RECORDS,
        }
    }
}

/// What the canaries did, for `/metrics`.
#[derive(Debug, Default)]
pub struct Counts {
    /// HTML pages read for a slot.
    pub pages: AtomicU64,
    /// References placed.
    pub placed: AtomicU64,
    /// Markers left where no reference may stand (a heading, the head,
    /// a script …).
    pub refused: AtomicU64,
    /// Marks pushed to the fleet's record.
    pub pushed: AtomicU64,
    /// Pushes that failed (their marks kept for the next).
    pub push_failed: AtomicU64,
    /// Marks the fleet's record held at the last push.
    pub fleet_held: AtomicU64,
}

/// The canaries of a gate.
#[derive(Debug)]
pub struct Canaries {
    cfg: CanaryConfig,
    issued: Mutex<Recent<Mark, Served>>,
    /// In a fleet: what was served since the last push to the fleet's
    /// record (the pages counted since, first and last of those).
    unpushed: Option<Mutex<Recent<Mark, Served>>>,
    /// What they did.
    pub counts: Counts,
}

impl Canaries {
    /// From `cfg`; `fleet` when the record is shared through Redis.
    pub fn new(cfg: CanaryConfig, fleet: bool) -> Canaries {
        Canaries {
            issued: Mutex::new(Recent::new(cfg.records.max(2))),
            unpushed: fleet.then(|| Mutex::new(Recent::new(cfg.records.max(2)))),
            cfg,
            counts: Counts::default(),
        }
    }

    /// The mark of a page for `client` at `now` (Unix seconds), and the
    /// reference's HTML.
    pub fn mark(&self, client: Client, now: u64) -> (Mark, String) {
        let m = Mark::at(client, now, self.cfg.period.as_secs());
        let text = botscope_canary::slot::render(
            &self.cfg.template,
            &self.cfg.key.phrase(&m).to_string(),
            &self.cfg.key.code(&m),
        );
        (m, text)
    }

    /// A page marked with `m` was served at `now`.
    pub fn served(&self, m: &Mark, now: u64) {
        let one = Served {
            first: now,
            last: now,
            pages: 1,
        };
        add(&self.issued, m, &one);
        if let Some(u) = &self.unpushed {
            add(u, m, &one);
        }
    }

    /// Pushes what this gate served since its last push to the fleet's
    /// record; what cannot be pushed now is kept for the next push
    /// (false then).
    pub async fn push(&self, shared: &crate::state::Shared) -> bool {
        let Some(u) = &self.unpushed else {
            return false;
        };
        let taken: Vec<(Mark, Served)> = {
            let mut r = u.lock().unwrap_or_else(|p| p.into_inner());
            let all = r.entries().map(|(m, s)| (m.clone(), s.clone())).collect();
            r.clear();
            all
        };
        let mut rest = taken.as_slice();
        while !rest.is_empty() {
            let (now, later) = rest.split_at(rest.len().min(crate::state::CANARY_PER_PUSH));
            let marks: Vec<(String, u64, u64, u64)> = now
                .iter()
                .map(|(m, s)| (self.cfg.key.code(m), s.first, s.last, s.pages))
                .collect();
            match shared.push_marks(self.cfg.records, &marks).await {
                Some(held) => {
                    self.counts
                        .pushed
                        .fetch_add(now.len() as u64, Ordering::Relaxed);
                    self.counts.fleet_held.store(held, Ordering::Relaxed);
                    rest = later;
                }
                None => {
                    self.counts.push_failed.fetch_add(1, Ordering::Relaxed);
                    for (m, s) in rest {
                        add(u, m, s);
                    }
                    return false;
                }
            }
        }
        true
    }

    /// The fleet's issuance record, this gate's marks pushed first; `None`
    /// when Redis cannot be used now or does not answer as asked (read in
    /// steps, at most as many marks as the record may hold and a bounded
    /// number of steps).
    pub async fn fleet_record(&self, shared: &crate::state::Shared) -> Option<Vec<Issue>> {
        if !self.push(shared).await {
            return None;
        }
        // HSCAN's steps go through the hash's table, at most about twice
        // the marks it may hold (plus a push's) over the fields a step asks.
        let most = self.cfg.records.max(2);
        let mut steps = most / 8 + 64;
        let mut seen: std::collections::HashMap<String, Issue> = std::collections::HashMap::new();
        let mut cursor = "0".to_owned();
        let mut strangers = 0u64;
        loop {
            let (next, marks) = shared.read_marks(&cursor).await?;
            for (code, v) in marks {
                let n: Vec<u64> = v.split(' ').filter_map(|x| x.parse().ok()).collect();
                let (Some(mark), [first, last, pages]) = (self.cfg.key.decode(&code), &n[..])
                else {
                    strangers += 1;
                    continue;
                };
                let served = Served {
                    first: *first,
                    last: *last,
                    pages: *pages,
                };
                seen.insert(code, Issue::new(&self.cfg.key, mark, &served));
            }
            steps -= 1;
            if next == "0" {
                break;
            }
            if steps == 0 || seen.len() > most.saturating_mul(2) {
                tracing::warn!(
                    "the fleet's canary record did not end within its bound: this gate's own is exported"
                );
                return None;
            }
            cursor = next;
        }
        if strangers > 0 {
            tracing::warn!(
                "the fleet's canary record holds {strangers} marks this gate's key did not make (every gate needs the same --canary-key): left out"
            );
        }
        let mut out: Vec<Issue> = seen.into_values().collect();
        sort(&mut out);
        Some(out)
    }

    /// The issuance record: every mark held, with its phrase and code.
    pub fn record(&self) -> Vec<Issue> {
        let held: Vec<(Mark, Served)> = {
            let r = self.issued.lock().unwrap_or_else(|p| p.into_inner());
            r.entries().map(|(m, s)| (m.clone(), s.clone())).collect()
        };
        let mut out: Vec<Issue> = held
            .into_iter()
            .map(|(m, s)| Issue::new(&self.cfg.key, m, &s))
            .collect();
        sort(&mut out);
        out
    }

    /// Marks held.
    pub fn held(&self) -> usize {
        self.issued.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// Counts a page's slot filler when the page is done.
    pub fn count(&self, placed: u32, refused: u32) {
        self.counts.pages.fetch_add(1, Ordering::Relaxed);
        self.counts
            .placed
            .fetch_add(u64::from(placed), Ordering::Relaxed);
        self.counts
            .refused
            .fetch_add(u64::from(refused), Ordering::Relaxed);
    }
}

/// Adds `one` to `m`'s entry in `r`.
fn add(r: &Mutex<Recent<Mark, Served>>, m: &Mark, one: &Served) {
    let mut r = r.lock().unwrap_or_else(|p| p.into_inner());
    let s = match r.get(m) {
        Some(s) => Served {
            first: s.first.min(one.first),
            last: one.last.max(s.last),
            pages: s.pages.saturating_add(one.pages),
        },
        None => one.clone(),
    };
    r.insert(m.clone(), s);
}

/// The record's order: by first served, then code.
fn sort(out: &mut [Issue]) {
    out.sort_by(|a, b| (a.first_served, &a.code).cmp(&(b.first_served, &b.code)));
}

/// `/.botscope/canary.jsonl` (operators only): the issuance record, a
/// JSON line per mark held (`botscope canary find --record` reads it):
/// the fleet's when the gate shares Redis and can use it now, else this
/// gate's own, said in `Botscope-Canary-Record` (`fleet`, `this-gate`).
pub(crate) async fn record_page(
    axum::extract::State(g): axum::extract::State<std::sync::Arc<crate::Gate>>,
    axum::extract::ConnectInfo(peer): axum::extract::ConnectInfo<std::net::SocketAddr>,
    req: axum::extract::Request,
) -> axum::response::Response {
    use axum::http::{HeaderValue, header};
    use axum::response::IntoResponse as _;
    if let Some(refused) = crate::metrics::operators_only(
        &g,
        peer,
        req.headers(),
        "the canary record",
        crate::metrics::Operator::Read,
    ) {
        return refused;
    }
    let (record, source) = match (&g.canary, &g.shared) {
        (Some(c), Some(shared)) => match c.fleet_record(shared).await {
            Some(r) => (r, "fleet"),
            None => (c.record(), "this-gate"),
        },
        (Some(c), None) => (c.record(), "this-gate"),
        (None, _) => (Vec::new(), "this-gate"),
    };
    let mut body = String::new();
    for i in record {
        if let Ok(l) = serde_json::to_string(&i) {
            body.push_str(&l);
            body.push('\n');
        }
    }
    let mut r = body.into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/jsonl"),
    );
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r.headers_mut()
        .insert("botscope-canary-record", HeaderValue::from_static(source));
    r
}

/// Who a page goes to, as a mark names it: the verified bot's name, else
/// the client's network, AS and User-Agent family.
pub fn client_of(a: &crate::answer::Answer, user_agent: &str) -> Client {
    match (&a.identity, &a.bot) {
        (Some(botscope_policy::Identity::Verified), Some(bot)) => {
            Client::Verified { bot: bot.clone() }
        }
        _ => Client::network(
            a.client,
            a.known.as_ref().and_then(|k| k.evidence.asn),
            user_agent,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_record_is_bounded_under_a_flood_of_new_clients() {
        let c = Canaries::new(
            CanaryConfig {
                records: 1_000,
                ..CanaryConfig::new(CanaryKey::new(&[1; 32]).expect("key"))
            },
            true,
        );
        let (first, _) = c.mark(
            Client::Verified {
                bot: "Googlebot".into(),
            },
            1_800_000_000,
        );
        c.served(&first, 1_800_000_000);
        for i in 0..100_000u32 {
            let ip = std::net::IpAddr::from(i.to_be_bytes().map(|b| b | 1));
            let (m, text) = c.mark(Client::network(ip, None, "curl/8"), 1_800_000_000);
            assert!(
                text.starts_with("Reference: ") && text.contains("bsc-"),
                "{text}"
            );
            c.served(&m, 1_800_000_001);
            // Googlebot comes back now and then: it stays.
            if i % 100 == 0 {
                c.served(&first, 1_800_000_002);
            }
            assert!(c.held() <= 1_000);
            assert!(
                c.unpushed
                    .as_ref()
                    .is_some_and(|u| u.lock().expect("lock").len() <= 1_000)
            );
        }
        let record = c.record();
        assert!(record.len() <= 1_000);
        let g = record.iter().find(|i| i.mark == first).expect("kept");
        assert_eq!(
            (g.first_served, g.last_served, g.pages),
            (1_800_000_000, 1_800_000_002, 1_001)
        );
    }
}
