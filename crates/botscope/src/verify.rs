//! `botscope verify`: who is this crawler really?

use std::collections::HashMap;
use std::io::{self, BufRead, BufWriter, Write};
use std::net::IpAddr;
use std::path::Path;

use anyhow::{Context, Result, bail};
use botscope_botid::{Batch, FcrdnsEvidence, Registry, UaClassifier, Verdict, parse_ip, verify};
use botscope_dns::{DnsEvidence, EvidenceConfig};

use crate::cli::{DnsArgs, Format, VerifyArgs};
use crate::exit::ExitStatus;
use crate::settings::Settings;

/// Exit status of `verify` for a verdict: 0 verified, 1 spoofed,
/// 3 unverifiable, 4 unknown or not a bot.
fn exit_of(v: Verdict) -> ExitStatus {
    match v {
        Verdict::Verified => ExitStatus::Success,
        Verdict::Spoofed => ExitStatus::Negative,
        Verdict::Unverifiable => ExitStatus::Unverifiable,
        Verdict::UnclaimedBotIp | Verdict::Unknown => ExitStatus::Unknown,
    }
}

/// `verify IP` and `verify --batch`.
pub async fn run(
    a: &VerifyArgs,
    settings: &Settings,
    dns: Option<&DnsEvidence>,
) -> Result<ExitStatus> {
    let registry = settings.registry(a.registry.as_ref())?;
    let ua_classifier = UaClassifier::bundled_on(&registry, settings.threads)?;
    match (&a.batch, &a.ip) {
        (Some(batch), None) => {
            batch_run(batch, &registry, &ua_classifier, dns, &settings.owners()).await
        }
        (None, Some(ip)) => {
            let ip = parse_ip(ip)?;
            let ua =
                a.ua.as_deref()
                    .map(|u| ua_classifier.classify(u))
                    .unwrap_or_default();
            let domains = botscope_botid::fcrdns_domains(&registry, ip, &ua);
            let evidence = match (dns, domains) {
                (Some(d), Some(domains)) => {
                    let ip = botscope_botid::normalize(ip);
                    gather(d, &[(ip, domains.to_vec())]).await.remove(&ip)
                }
                _ => None,
            };
            let owner = botscope_botid::Owners::owner(&settings.owners(), ip);
            let v = verify(
                &registry,
                ip,
                a.ua.as_deref(),
                &ua,
                evidence.as_ref(),
                owner,
            );
            if a.trace {
                let t = botscope_botid::trace(&registry, &ua, evidence.as_ref(), &v);
                eprint!("{}", botscope_text::terminal(&t));
            }
            let mut out = BufWriter::new(io::stdout().lock());
            match a.format {
                Format::Json => writeln!(out, "{}", serde_json::to_string(&v)?)?,
                Format::Text => writeln!(out, "{}", v.text_line())?,
            }
            out.flush()?;
            Ok(exit_of(v.verdict))
        }
        (Some(_), Some(_)) => bail!("give either an IP or --batch, not both"),
        (None, None) => bail!("give an IP, or --batch FILE"),
    }
}

/// Batch lines are `IP<TAB>USER-AGENT`; the output has one JSON verdict per
/// line, in order; a line that cannot be read gives an error record.
async fn batch_run(
    batch: &Path,
    registry: &Registry,
    c: &UaClassifier,
    dns: Option<&DnsEvidence>,
    owners: &botscope_ipdb::IpOwners,
) -> Result<ExitStatus> {
    let mut b = Batch::default();
    for (n, line) in crate::io::input(batch)?.split(b'\n').enumerate() {
        b.push_line(n + 1, &line.context("failed to read the batch input")?, c);
    }
    let want = b.dns_wanted(registry);
    let evidence = match dns {
        Some(d) if !want.is_empty() => gather(d, &want).await,
        _ => HashMap::new(),
    };
    let mut out = BufWriter::new(io::stdout().lock());
    let mut spoofed = false;
    for line in b.json_lines(registry, &evidence, owners) {
        spoofed |= line.1;
        writeln!(out, "{}", line.0)?;
    }
    out.flush()?;
    Ok(if spoofed {
        ExitStatus::Negative
    } else {
        ExitStatus::Success
    })
}

/// Evidence for the addresses, each checked against its domains; a cache
/// that cannot be saved is a warning.
pub async fn gather(
    d: &DnsEvidence,
    questions: &[(IpAddr, Vec<String>)],
) -> HashMap<IpAddr, FcrdnsEvidence> {
    let (ev, problem) = d.gather(questions).await;
    if let Some(e) = problem {
        eprintln!("botscope: warning: {e}");
    }
    ev
}

/// FCrDNS through the given nameservers (the system's when none), with
/// the on-disk cache unless `--no-dns-cache`.
pub async fn dns_evidence(a: &DnsArgs, settings: &Settings) -> Result<DnsEvidence> {
    let cache = (!a.no_dns_cache)
        .then(|| a.dns_cache.clone().or_else(|| settings.dns_cache.clone()))
        .flatten();
    let config = EvidenceConfig::from_flags(&a.servers, a.dns_timeout, a.concurrency, cache)?;
    Ok(DnsEvidence::new(&config).await?)
}

/// `verify`, choosing where DNS answers come from.
pub async fn cli(a: &VerifyArgs, settings: &Settings) -> Result<ExitStatus> {
    if a.offline {
        return run(a, settings, None).await;
    }
    let dns = dns_evidence(&a.dns, settings).await?;
    run(a, settings, Some(&dns)).await
}
