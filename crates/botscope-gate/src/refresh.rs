//! The operators' published address lists, refreshed on a schedule
//! (`--refresh-lists DUR`) from the registry's `ip_sources` through the
//! shared HTTP client, with the sanity rules of `bots update`: a list
//! that is not a list, or that would take away more than half of a bot's
//! addresses, is refused and the bot keeps the list it had. The new
//! registry is swapped in whole; identities judged before are forgotten.
//!
//! The first refresh comes [`FIRST_AFTER`] after start, then one every
//! period. With a file to keep them in (`--refresh-keep`), the lists that
//! passed are written there (a registry layer, as `bots update` writes)
//! and read back at the next start, so a restart does not fall back to the
//! lists the binary shipped with.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How soon after start the first refresh comes.
pub const FIRST_AFTER: Duration = Duration::from_secs(10);

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
    /// Where the refreshed lists are kept across restarts (a registry
    /// layer), when given.
    pub keep: Option<PathBuf>,
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
    /// When the next one starts (RFC 3339).
    pub next: Option<String>,
    /// Where the lists are kept, and whether the last write failed.
    pub kept: Option<String>,
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
    if let Some(path) = &cfg.keep
        && state.applied > 0
    {
        state.kept = Some(match keep(path, &entries) {
            Ok(()) => path.display().to_string(),
            Err(e) => {
                state.problems.push(e.clone());
                e
            }
        });
    }
    let refreshed = registry.clone().layered(Registry::with_entries(entries));
    state.at = Some(crate::decisions::now_rfc3339());
    (refreshed, state)
}

const KEPT_HEADER: &str = "# botscope: the operators' published lists as the gate last refreshed them (--refresh-keep); a registry layer.\n";

/// Writes `entries` to `path` (atomically), unless a file there is not one
/// the gate wrote: that one is left as it is.
fn keep(path: &std::path::Path, entries: &[botscope_botid::BotEntry]) -> Result<(), String> {
    if let Ok(old) = std::fs::read(path)
        && !old.starts_with(KEPT_HEADER.as_bytes())
    {
        return Err(format!(
            "{}: not a file the gate wrote; left as it is (give another --refresh-keep)",
            path.display()
        ));
    }
    let text = Registry::with_entries(entries.to_vec()).to_yaml();
    botscope_os::write_atomic(path, format!("{KEPT_HEADER}{text}").as_bytes())
        .map_err(|e| format!("keeping the lists: {e}"))
}

/// The lists kept at `path` by an earlier run, layered over `registry`:
/// `Ok(None)` when there are none yet; an error names the file.
pub fn kept(registry: &Registry, path: &std::path::Path) -> Result<Option<Registry>, String> {
    let bytes = match botscope_os::read_file_capped(path, 64 << 20) {
        Ok(b) => b,
        Err(botscope_os::Error::Io { source, .. })
            if source.kind() == std::io::ErrorKind::NotFound =>
        {
            return Ok(None);
        }
        Err(e) => return Err(format!("--refresh-keep {e}")),
    };
    if !bytes.starts_with(KEPT_HEADER.as_bytes()) {
        return Err(format!(
            "--refresh-keep {}: not a file the gate wrote; left as it is",
            path.display()
        ));
    }
    let layer = Registry::parse(
        &path.display().to_string(),
        &String::from_utf8_lossy(&bytes),
    )
    .map_err(|e| {
        format!(
            "--refresh-keep {}: {}",
            path.display(),
            botscope_botid::errors_text(&e)
        )
    })?;
    Ok(Some(registry.clone().layered(layer)))
}

/// The state shared with `/healthz`.
pub type Shared = Arc<Mutex<RefreshState>>;
