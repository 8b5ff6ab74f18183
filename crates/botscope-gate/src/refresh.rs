//! The operators' published address lists, refreshed on a schedule
//! (`--refresh-lists DUR`) from the registry's `ip_sources` through the
//! shared HTTP client, with the sanity rules of `bots update`: a list
//! that is not a list, or that would take away more than half of a bot's
//! addresses, is refused and the bot keeps the list it had. The new
//! registry is swapped in whole; identities judged before are forgotten.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use botscope_botid::{Registry, Update};

/// How lists are refreshed.
#[derive(Debug, Clone)]
pub struct RefreshConfig {
    /// How often.
    pub every: Duration,
    /// How long one list may take.
    pub timeout: Duration,
    /// What HTTPS trusts.
    pub trust: botscope_http::Trust,
    /// The User-Agent the gate fetches with.
    pub user_agent: String,
}

/// The last refresh, for `/healthz`.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct RefreshState {
    /// When it ended (RFC 3339).
    pub at: Option<String>,
    /// Lists fetched and applied.
    pub applied: usize,
    /// What was refused or failed, a line each (the old list kept).
    pub problems: Vec<String>,
}

/// One refresh of every list of `registry`: the registry with the lists
/// that passed, and what happened.
pub async fn refresh(registry: &Registry, cfg: &RefreshConfig) -> (Registry, RefreshState) {
    let mut update = Update::new(registry, Vec::new(), "--refresh-lists".to_owned(), false);
    let mut state = RefreshState::default();
    // Every list at once (a registry names a few dozen), applied in order.
    let sources: Vec<(&botscope_botid::BotEntry, &String)> = registry
        .bots()
        .iter()
        .flat_map(|b| b.ip_sources.iter().map(move |u| (b, u)))
        .collect();
    let fetched = futures_util::future::join_all(sources.iter().map(|(_, url)| {
        botscope_http::download(
            url,
            botscope_botid::MAX_LIST_BYTES,
            cfg.timeout,
            &cfg.user_agent,
            &cfg.trust,
        )
    }))
    .await;
    for ((bot, url), got) in sources.into_iter().zip(fetched) {
        match got {
            Ok(body) => {
                let before = update.refusals.len();
                update.apply(url, &String::from_utf8_lossy(&body), Some(bot));
                if update.refusals.len() == before {
                    state.applied += 1;
                }
            }
            Err(e) => state.problems.push(format!(
                "{}: {url}: {}",
                bot.name,
                botscope_text::field(&e.to_string())
            )),
        }
    }
    state.problems.extend(update.refusals.iter().cloned());
    let entries = update.into_entries();
    let refreshed = registry.clone().layered(Registry::with_entries(entries));
    state.at = Some(crate::decisions::now_rfc3339());
    (refreshed, state)
}

/// The state shared with `/healthz`.
pub type Shared = Arc<Mutex<RefreshState>>;
