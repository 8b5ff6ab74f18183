//! `botscope honeypot serve` and `honeypot report`: the sites and the
//! scoring are botscope-honeypot's; this module checks the flags, starts
//! the log output and prints the report.

use std::io::Write;

use anyhow::{Context, Result};
use botscope_honeypot::report as ethics;
use botscope_honeypot::{Design, Honeypot, design_path};

use crate::cli::{HoneypotFormat, HoneypotReportArgs, HoneypotServeArgs};
use crate::exit::ExitStatus;
use crate::settings::Settings;

/// The largest sites file read.
const MAX_DESIGN_BYTES: u64 = 16 << 20;

/// `honeypot serve`.
pub async fn serve(a: &HoneypotServeArgs, s: &Settings) -> Result<ExitStatus> {
    let design = Design::new(a.sites, &a.domain, a.crawl_delay)?;
    crate::serve::log_to_stderr(s);
    let h = Honeypot::bind(design, &a.listen, &a.log).await?;
    let stop = crate::stop::stop_signal();
    let addrs: Vec<String> = h.local_addrs().iter().map(ToString::to_string).collect();
    eprintln!(
        "botscope: honeypot of {} sites (s0.{} … s{}.{}) on {}; logging to {} (Ctrl-C to stop)",
        h.design().sites.len(),
        h.design().domain,
        h.design().sites.len() - 1,
        h.design().domain,
        addrs.join(", "),
        a.log.display()
    );
    h.run(stop).await?;
    Ok(ExitStatus::Success)
}

/// `honeypot report`.
pub async fn report(a: &HoneypotReportArgs, s: &Settings) -> Result<ExitStatus> {
    let sites = a.sites.clone().unwrap_or_else(|| design_path(&a.log));
    let (bytes, total) = crate::io::read_limited(&sites, Some(MAX_DESIGN_BYTES as usize)).context(
        "the honeypot's sites (written by `honeypot serve` beside its log; or give --sites)",
    )?;
    anyhow::ensure!(
        total <= MAX_DESIGN_BYTES,
        "{}: over {MAX_DESIGN_BYTES} bytes",
        sites.display()
    );
    let design: Design = serde_json::from_slice(&bytes)
        .with_context(|| format!("{}: not a honeypot's sites file", sites.display()))?;
    // The sites file is checked the way serve checks its flags.
    let check = Design::new(design.sites.len(), &design.domain, design.crawl_delay)
        .map_err(|e| anyhow::anyhow!("{}: {e}", sites.display()))?;
    anyhow::ensure!(
        check == design,
        "{}: not the sites `honeypot serve` writes",
        sites.display()
    );
    let registry = s.registry(a.registry.as_ref())?;
    let classifier = botscope_botid::UaClassifier::bundled_on(&registry, s.threads)?;
    // Signed requests, recorded beside the log, and their agents' keys.
    let sig_path = a
        .signatures
        .clone()
        .unwrap_or_else(|| botscope_honeypot::signatures_path(&a.log));
    let (signed, bad) = botscope_honeypot::read_signed(&sig_path)
        .with_context(|| format!("cannot read {}", sig_path.display()))?;
    if bad > 0 {
        eprintln!(
            "botscope: {}: {bad} lines are not signed-request records (left out)",
            sig_path.display()
        );
    }
    let cfg = crate::settings::directory_config(&a.directories)?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    let mut keys = botscope_httpsig::KeySet::new();
    for agent in botscope_honeypot::signed_agents(&signed) {
        if a.offline {
            keys.fail(Some(&agent), "--offline: its key directory was not fetched");
            continue;
        }
        match botscope_http::directory::fetch_directory(&agent, &cfg, now).await {
            Ok(d) => keys.insert(Some(&agent), d.directory),
            Err(e) => keys.fail(Some(&agent), e.to_string()),
        }
    }
    let input = crate::io::input_maybe_gzip(&a.log)?;
    let r = ethics::report_signed(input, design, &registry, &classifier, &signed, &keys)
        .with_context(|| format!("failed to read {}", crate::io::display(&a.log)))?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    match a.format {
        HoneypotFormat::Text => out.write_all(ethics::text(&r).as_bytes())?,
        HoneypotFormat::Json => writeln!(out, "{}", serde_json::to_string_pretty(&r)?)?,
        HoneypotFormat::Html => out.write_all(ethics::html(&r).as_bytes())?,
    }
    out.flush()?;
    Ok(ExitStatus::Success)
}
