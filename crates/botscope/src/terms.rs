//! `botscope terms`: the polite crawler's reading of each page's terms
//! (botscope-harvest's `Crawler::terms`, deciding with botscope-terms),
//! printed.

use std::io::{self, BufWriter, Write};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Result, bail};
use botscope_harvest::polite::{TermsAsk, TermsReport};
use botscope_harvest::{Crawler, PoliteConfig, dns_pool, honest_user_agent};
use botscope_terms::{Answer, Purpose};

use crate::cli::{Format, TermsArgs, UseArg};
use crate::exit::ExitStatus;
use crate::settings::FetchSettings;

/// The purpose a `--use` names.
pub(crate) fn purpose(u: UseArg) -> Purpose {
    match u {
        UseArg::TrainAi => Purpose::TrainAi,
        UseArg::AiUse => Purpose::AiUse,
        UseArg::AiIndex => Purpose::AiIndex,
        UseArg::Search => Purpose::Search,
    }
}

/// The verdict line, then a line per reason and per conflict.
fn text(r: &TermsReport, out: &mut impl Write) -> io::Result<()> {
    let v = &r.verdict;
    let field = |s: &str| botscope_text::field(s).into_owned();
    let cost = v
        .cost
        .map_or_else(String::new, |p| format!("\t{}", field(&p.to_string())));
    writeln!(
        out,
        "{}\t{}\t{}\t{}{cost}",
        v.answer.as_str(),
        field(&r.url),
        v.purpose.as_str(),
        field(&r.agent)
    )?;
    for x in &v.reasons {
        let at = x.line.map_or_else(String::new, |l| format!(" line {l}"));
        writeln!(out, "  {}{at}: {}", x.source.as_str(), field(&x.text))?;
    }
    for c in &v.conflicts {
        writeln!(out, "  conflict: {}", field(c))?;
    }
    for l in &r.licences {
        if let Some(d) = &l.document {
            let errors = d
                .diagnostics
                .iter()
                .filter(|x| x.severity == botscope_terms::rsl::Severity::Error)
                .count();
            if errors > 0 {
                writeln!(
                    out,
                    "  licence {}: {errors} error(s) in the document (see --format json)",
                    field(&l.url)
                )?;
            }
        }
    }
    Ok(())
}

/// `terms`.
pub async fn run(a: &TermsArgs) -> Result<ExitStatus> {
    let settings = FetchSettings::resolve(
        &a.fetch,
        botscope_robotstxt::Semantics::Google,
        Duration::ZERO,
    )?;
    let nameservers = settings.nameservers()?;
    let fetch = settings.config;
    honest_user_agent(&fetch.user_agent)?;
    for u in &a.urls {
        match url::Url::parse(u) {
            Ok(p) if matches!(p.scheme(), "http" | "https") && p.host_str().is_some() => {}
            _ => bail!(
                "{} is not an http(s) URL",
                botscope_text::field(&format!("{u:?}"))
            ),
        }
    }
    let cfg = PoliteConfig {
        min_gap: a.min_gap,
        ..PoliteConfig {
            fetch,
            ..PoliteConfig::default()
        }
    };
    let pool = dns_pool(nameservers, cfg.fetch.connect_timeout).await?;
    let crawler = Arc::new(Crawler::new(cfg, pool)?);
    let ask = TermsAsk {
        agent: a.agent.as_deref(),
        purpose: purpose(a.purpose),
        user: a.user.as_deref(),
        geo: a.geo.as_deref(),
        page: !a.no_page,
    };
    let mut out = BufWriter::new(io::stdout().lock());
    let mut worst = ExitStatus::Success;
    for u in &a.urls {
        let r = crawler.terms(u, ask).await;
        let status = match r.verdict.answer {
            Answer::NotCrawlable | Answer::Refused => ExitStatus::Negative,
            Answer::Licence => ExitStatus::Licence,
            Answer::Unknown => ExitStatus::Unknown,
            Answer::Allowed => ExitStatus::Success,
        };
        let rank = |s: ExitStatus| match s {
            ExitStatus::Negative => 3,
            ExitStatus::Licence => 2,
            ExitStatus::Unknown => 1,
            _ => 0,
        };
        if rank(status) > rank(worst) {
            worst = status;
        }
        match a.format {
            Format::Text => text(&r, &mut out)?,
            Format::Json => writeln!(out, "{}", serde_json::to_string(&r)?)?,
        }
        out.flush()?;
    }
    Ok(worst)
}
