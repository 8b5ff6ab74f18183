//! `botscope fetch`: URLs fetched by botscope-harvest's polite crawler
//! (`Crawler::fetch_all`: hosts side by side, a host's URLs in order);
//! this module checks the flags, prints the outcomes in the order given
//! and saves bodies.

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use botscope_harvest::polite::Fetch;
use botscope_harvest::{Crawler, PoliteConfig, dns_pool, honest_user_agent};

use crate::cli::{FetchPagesArgs, Format};
use crate::exit::ExitStatus;
use crate::settings::FetchSettings;

/// Saves a body under `--out`: a directory symlink planted there that
/// leads out of it is refused (bodies are strangers' bytes and stay
/// where they were sent).
fn save(dir: &Path, f: &Fetch) -> Result<Option<PathBuf>> {
    let Some((rel, page)) = f.save_path().zip(f.page.as_ref()) else {
        return Ok(None);
    };
    Ok(Some(botscope_os::write_under(dir, &rel, &page.body)?))
}

/// `fetch`.
pub async fn run(a: &FetchPagesArgs) -> Result<ExitStatus> {
    // Everything is checked before anything is asked.
    let settings = FetchSettings::resolve(&a.fetch, a.semantics, Duration::ZERO)?;
    let nameservers = settings.nameservers()?;
    let fetch = settings.config;
    honest_user_agent(&fetch.user_agent)?;
    let mut urls = Vec::new();
    for u in &a.urls {
        match url::Url::parse(u) {
            Ok(p) if matches!(p.scheme(), "http" | "https") && p.host_str().is_some() => {
                urls.push(p)
            }
            _ => bail!(
                "{} is not an http(s) URL",
                botscope_text::field(&format!("{u:?}"))
            ),
        }
    }
    let signer = match (&a.signing_key, &a.signature_agent) {
        (Some(file), Some(agent)) => Some(
            crate::keys::signer(file, agent, a.signature_validity)
                .context("--signing-key and --signature-agent")?,
        ),
        _ => None,
    };
    if let (Some(max), Some(b)) = (a.max_price, a.budget)
        && max.currency != b.currency
    {
        bail!(
            "--budget is in {}, --max-price in {}: one currency",
            b.currency,
            max.currency
        );
    }
    let cfg = PoliteConfig {
        min_gap: a.min_gap,
        max_wait: a.max_wait,
        signer,
        pay: a.max_price.map(|max_price| botscope_harvest::Pay {
            max_price,
            budget: a.budget,
        }),
        purpose: a.purpose.map(crate::terms::purpose),
        licence: match &a.license_credentials {
            None => None,
            Some(file) => Some(botscope_http::olp::OlpConfig {
                trust: fetch.trust.clone(),
                allow_private: fetch.allow_private,
                user_agent: fetch.user_agent.clone(),
                credentials: Some(crate::settings::licence_credentials(file)?),
                ..Default::default()
            }),
        },
        ..PoliteConfig {
            fetch,
            ..PoliteConfig::default()
        }
    };
    let pool = dns_pool(nameservers, cfg.fetch.connect_timeout).await?;
    let crawler = Arc::new(Crawler::new(cfg, pool)?);

    let mut all = crawler.fetch_all(urls.iter().map(ToString::to_string).collect());
    let mut next = 0;
    let mut out = BufWriter::new(io::stdout().lock());
    let mut all_fetched = true;
    // Printed in the order given, as soon as the earlier ones are.
    while let Some(mut f) = all.next().await {
        next += 1;
        all_fetched &= f.page.is_some();
        // A body that cannot be saved (a file in the way, no room) is
        // that URL's failure, told on its line; the others go on.
        let saved = match a.out.as_deref().map(|dir| save(dir, &f)) {
            Some(Ok(p)) => p,
            Some(Err(e)) => {
                all_fetched = false;
                let why = format!("not saved: {e:#}");
                f.error = Some(match f.error.take() {
                    Some(before) => format!("{before}; {why}"),
                    None => why,
                });
                None
            }
            None => None,
        };
        match a.format {
            Format::Text => writeln!(
                out,
                "{}\t{}\t{}\twaited {:.2}s\t{}\t{}",
                f.decision.as_str(),
                f.page
                    .as_ref()
                    .map_or_else(|| "-".to_owned(), |p| p.status.to_string()),
                f.page
                    .as_ref()
                    .map_or_else(|| "-".to_owned(), |p| format!("{} B", p.body.len())),
                f.waited.as_secs_f64(),
                botscope_text::field(&f.url),
                botscope_text::field(&f.detail()),
            )?,
            Format::Json => writeln!(
                out,
                "{}",
                serde_json::to_string(&f.record(saved.as_deref()))?
            )?,
        }
        out.flush()?;
    }
    if let Some(spent) = crawler.spent() {
        eprintln!("fetch: charged {spent} in all");
    }
    Ok(if all_fetched && next == urls.len() {
        ExitStatus::Success
    } else {
        ExitStatus::Negative
    })
}
