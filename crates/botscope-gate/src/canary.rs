//! Canary tokens in the pages the standalone gate passes (`--canary-key`):
//! where the owner's page holds the marker, a short visible reference
//! marked for the client the page goes to (its verified identity, else
//! its network, AS and User-Agent family) in the current period; the
//! issuance record that resolves the reference's phrase, bounded, and
//! exported to operators (`/.botscope/canary.jsonl`). Every visitor gets
//! the same slot: a search engine sees what a person sees, but for the
//! reference.

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
}

/// The canaries of a gate.
#[derive(Debug)]
pub struct Canaries {
    cfg: CanaryConfig,
    issued: Mutex<Recent<Mark, Served>>,
    /// What they did.
    pub counts: Counts,
}

impl Canaries {
    /// From `cfg`.
    pub fn new(cfg: CanaryConfig) -> Canaries {
        Canaries {
            issued: Mutex::new(Recent::new(cfg.records.max(2))),
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
        let mut r = self.issued.lock().unwrap_or_else(|p| p.into_inner());
        let s = match r.get(m) {
            Some(s) => Served {
                first: s.first,
                last: now.max(s.last),
                pages: s.pages.saturating_add(1),
            },
            None => Served {
                first: now,
                last: now,
                pages: 1,
            },
        };
        r.insert(m.clone(), s);
    }

    /// The issuance record: every mark held, with its phrase and code.
    pub fn record(&self) -> Vec<Issue> {
        let held: Vec<(Mark, Served)> = {
            let r = self.issued.lock().unwrap_or_else(|p| p.into_inner());
            r.entries().map(|(m, s)| (m.clone(), s.clone())).collect()
        };
        let mut out: Vec<Issue> = held
            .into_iter()
            .map(|(m, s)| Issue {
                phrase: self.cfg.key.phrase(&m),
                code: self.cfg.key.code(&m),
                mark: m,
                first_served: s.first,
                last_served: s.last,
                pages: s.pages,
            })
            .collect();
        out.sort_by(|a, b| (a.first_served, &a.code).cmp(&(b.first_served, &b.code)));
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

/// `/.botscope/canary.jsonl` (operators only): the issuance record, a
/// JSON line per mark held (`botscope canary find --record` reads it).
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
    let mut body = String::new();
    for i in g.canary.as_ref().map(|c| c.record()).unwrap_or_default() {
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
        let c = Canaries::new(CanaryConfig {
            records: 1_000,
            ..CanaryConfig::new(CanaryKey::new(&[1; 32]).expect("key"))
        });
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
