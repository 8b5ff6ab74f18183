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
use botscope_harvest::{Crawler, Decision, PoliteConfig, dns_pool, honest_user_agent};
use serde_json::json;

use crate::cli::{FetchPagesArgs, Format};
use crate::exit::ExitStatus;
use crate::settings::FetchSettings;

/// Where a body of `url` is saved under `--out`: HOST[_PORT]/PATH, each
/// segment reduced to safe bytes, `.` and `..` never used as names, a
/// path ending in `/` saved as `index.html`, the query kept in the name.
fn save_rel(url: &url::Url) -> PathBuf {
    fn clean(s: &str) -> String {
        let out: String = s
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric()
                    || matches!(c, '.' | '-' | '_' | '~' | '%' | '+' | '=' | ',')
                {
                    c
                } else {
                    '_'
                }
            })
            .take(200)
            .collect();
        match out.as_str() {
            "" => "_".to_owned(),
            "." | ".." => out.replace('.', "_"),
            _ => out,
        }
    }
    let mut host = clean(url.host_str().unwrap_or("_"));
    if let Some(p) = url.port() {
        host.push_str(&format!("_{p}"));
    }
    let mut p = PathBuf::from(host);
    let segments: Vec<&str> = url.path_segments().map(|s| s.collect()).unwrap_or_default();
    let (last, dirs) = segments.split_last().unwrap_or((&"", &[]));
    for s in dirs {
        p.push(clean(s));
    }
    let mut name = if last.is_empty() {
        "index.html".to_owned()
    } else {
        clean(last)
    };
    if let Some(q) = url.query() {
        name.push_str("%3F");
        name.push_str(&clean(q));
    }
    p.push(name);
    p
}

fn save(dir: &Path, f: &Fetch) -> Result<Option<PathBuf>> {
    let Some(page) = &f.page else {
        return Ok(None);
    };
    let Ok(url) = url::Url::parse(&f.final_url) else {
        return Ok(None);
    };
    // A directory symlink planted under `--out` that leads out of it is
    // refused: bodies are strangers' bytes and stay where they were sent.
    let path = botscope_os::write_under(dir, &save_rel(&url), &page.body)?;
    Ok(Some(path))
}

fn detail(f: &Fetch) -> String {
    let mut parts = Vec::new();
    match &f.decision {
        Decision::Allowed(Some(rule)) | Decision::Disallowed(rule) => parts.push(rule.to_string()),
        Decision::Unavailable(why) => parts.push(why.clone()),
        _ => {}
    }
    if let Some(note) = &f.robots_note {
        parts.push(note.clone());
    }
    if !f.redirects.is_empty() {
        parts.push(format!("redirected to {}", f.final_url));
    }
    if let Some(e) = &f.error {
        parts.push(e.clone());
    }
    if let Some(u) = &f.usage {
        parts.push(format!("usage: {}", botscope_robotstxt::show_usage(u)));
    }
    if let Some(s) = &f.content_signal {
        parts.push(format!(
            "content-signal: {}",
            botscope_robotstxt::show_usage(s)
        ));
    }
    if let Some(p) = &f.charged {
        parts.push(format!("charged {p}"));
    }
    if let Some(n) = &f.pay_note {
        parts.push(n.clone());
    }
    parts.join("; ")
}

fn to_json(f: &Fetch, saved: Option<&Path>) -> serde_json::Value {
    let reason = match &f.decision {
        Decision::Unavailable(why) => Some(why.as_str()),
        _ => f.robots_note.as_deref(),
    };
    json!({
        "url": f.url,
        "final_url": f.final_url,
        "decision": f.decision.as_str(),
        "rule": f.decision.rule(),
        "reason": reason,
        "waited_ms": f.waited.as_millis() as u64,
        "status": f.page.as_ref().map(|p| p.status),
        "bytes": f.page.as_ref().map(|p| p.body.len()),
        "truncated": f.page.as_ref().is_some_and(|p| p.truncated),
        "redirects": f.redirects.iter().map(|(u, s)| json!({"url": u, "status": s})).collect::<Vec<_>>(),
        "error": f.error,
        "saved": saved.map(|p| p.display().to_string()),
        "usage": f.usage,
        "content_signal": f.content_signal,
        "charged": f.charged.map(|p| p.to_string()),
        "pay_note": f.pay_note,
    })
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
                botscope_text::field(&detail(&f)),
            )?,
            Format::Json => writeln!(out, "{}", to_json(&f, saved.as_deref()))?,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn save_paths_stay_inside() {
        let dir = Path::new("/out");
        let p = |u: &str| dir.join(save_rel(&url::Url::parse(u).expect(u)));
        assert_eq!(
            p("https://a.example/"),
            Path::new("/out/a.example/index.html")
        );
        assert_eq!(
            p("http://a.example:8080/x/y.html?q=1&r=<2>"),
            Path::new("/out/a.example_8080/x/y.html%3Fq=1_r=%3C2%3E")
        );
        assert_eq!(
            p("https://a.example/%2e%2e/x"),
            Path::new("/out/a.example/x")
        );
        assert_eq!(
            p("https://a.example/a/../../b"),
            Path::new("/out/a.example/b")
        );
        assert_eq!(
            p("https://a.example/d/"),
            Path::new("/out/a.example/d/index.html")
        );
        assert_eq!(
            p("https://a.example/a//b"),
            Path::new("/out/a.example/a/_/b")
        );
        for u in ["https://a.example/..%2f..%2fetc/passwd", "https://[::1]/x"] {
            let got = p(u);
            assert!(got.starts_with(dir), "{u}: {got:?}");
            assert!(
                got.components()
                    .all(|c| !matches!(c, std::path::Component::ParentDir)),
                "{u}: {got:?}"
            );
        }
    }
}
