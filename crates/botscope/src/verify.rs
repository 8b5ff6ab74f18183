//! `botscope verify`: who is this crawler really?

use std::collections::HashMap;
use std::io::{self, BufRead, BufWriter, Write};
use std::net::IpAddr;
use std::path::Path;

use anyhow::{Context, Result, bail};
use botscope_botid::{
    FcrdnsEvidence, Registry, UaClassifier, UaInfo, Verdict, Verification, parse_ip, verify,
};
use botscope_dns::{DnsEvidence, EvidenceConfig};
use serde_json::json;

use crate::cli::{DnsArgs, Format, VerifyArgs};
use crate::exit::Outcome;

/// Exit status of `verify` for a verdict: 0 verified, 1 spoofed,
/// 3 unverifiable, 4 unknown or not a bot.
fn exit_of(v: Verdict) -> Outcome {
    match v {
        Verdict::Verified => Outcome::Ok,
        Verdict::Spoofed => Outcome::Negative,
        Verdict::Unverifiable => Outcome::Code(3),
        Verdict::UnclaimedBotIp | Verdict::Unknown => Outcome::Code(4),
    }
}

fn print(out: &mut impl Write, v: &Verification, format: Format) -> io::Result<()> {
    match format {
        Format::Json => writeln!(out, "{}", serde_json::to_string(v).unwrap_or_default()),
        Format::Text => {
            let claimed = v.claimed_bot.as_deref().unwrap_or("-");
            writeln!(
                out,
                "{}\t{}\t{claimed}\t{}",
                v.verdict.as_str(),
                v.ip,
                v.reason
            )
        }
    }
}

/// The classifier over the registry (built once per run).
pub fn classifier(registry: &Registry) -> Result<UaClassifier> {
    UaClassifier::bundled(registry)
        .map_err(|e| anyhow::anyhow!("failed to build the User-Agent classifier: {e}"))
}

/// `verify IP` and `verify --batch`.
pub async fn run(a: &VerifyArgs, dns: Option<&DnsEvidence>) -> Result<Outcome> {
    let registry = crate::bots::load_registry(a.registry.as_ref())?;
    let ua_classifier = classifier(&registry)?;
    match (&a.batch, &a.ip) {
        (Some(batch), None) => batch_run(batch, &registry, &ua_classifier, dns).await,
        (None, Some(ip)) => {
            let ip = parse_ip(ip).map_err(|e| anyhow::anyhow!("{e}"))?;
            let ua =
                a.ua.as_deref()
                    .map(|u| ua_classifier.classify(u))
                    .unwrap_or_default();
            let evidence = match dns {
                Some(d) if botscope_botid::wants_fcrdns(&registry, ip, &ua) => {
                    gather(d, &[ip]).await.remove(&ip)
                }
                _ => None,
            };
            let v = verify(&registry, ip, a.ua.as_deref(), &ua, evidence.as_ref());
            let mut out = BufWriter::new(io::stdout().lock());
            print(&mut out, &v, a.format)?;
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
) -> Result<Outcome> {
    let input: Box<dyn BufRead> = if batch == Path::new("-") {
        Box::new(io::stdin().lock())
    } else {
        Box::new(io::BufReader::new(
            std::fs::File::open(batch)
                .with_context(|| format!("failed to open {}", batch.display()))?,
        ))
    };
    // Read all lines (bounded per line), classify each distinct UA once,
    // resolve each distinct address once.
    let mut rows: Vec<Result<(IpAddr, Option<String>), String>> = Vec::new();
    for (n, line) in input.split(b'\n').enumerate() {
        let mut line = line.context("failed to read the batch input")?;
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        if line.is_empty() {
            rows.push(Err(format!("line {}: empty line", n + 1)));
            continue;
        }
        let text = String::from_utf8_lossy(&line);
        let (ip, ua) = match text.split_once('\t') {
            Some((ip, ua)) => (ip, Some(ua.to_owned())),
            None => (text.as_ref(), None),
        };
        rows.push(
            parse_ip(ip)
                .map(|ip| (ip, ua))
                .map_err(|e| format!("line {}: {e}", n + 1)),
        );
    }
    let mut uas: HashMap<String, UaInfo> = HashMap::new();
    for (_, ua) in rows.iter().flatten() {
        if let Some(u) = ua
            && !uas.contains_key(u)
        {
            uas.insert(u.clone(), c.classify(u));
        }
    }
    let none = UaInfo::default();
    let info = |ua: &Option<String>| ua.as_ref().and_then(|u| uas.get(u)).unwrap_or(&none);
    let mut want: Vec<IpAddr> = rows
        .iter()
        .flatten()
        .filter(|(ip, ua)| botscope_botid::wants_fcrdns(registry, *ip, info(ua)))
        .map(|(ip, _)| *ip)
        .collect();
    want.sort_unstable();
    want.dedup();
    let evidence = match dns {
        Some(d) if !want.is_empty() => gather(d, &want).await,
        _ => HashMap::new(),
    };
    let mut out = BufWriter::new(io::stdout().lock());
    let mut worst = Outcome::Ok;
    for row in &rows {
        match row {
            Ok((ip, ua)) => {
                let v = verify(registry, *ip, ua.as_deref(), info(ua), evidence.get(ip));
                if v.verdict == Verdict::Spoofed {
                    worst = Outcome::Negative;
                }
                writeln!(out, "{}", serde_json::to_string(&v)?)?;
            }
            Err(e) => writeln!(out, "{}", json!({ "verdict": "error", "reason": e }))?,
        }
    }
    out.flush()?;
    Ok(worst)
}

/// Evidence for `ips`; a cache that cannot be saved is a warning.
pub async fn gather(d: &DnsEvidence, ips: &[IpAddr]) -> HashMap<IpAddr, FcrdnsEvidence> {
    let (ev, problem) = d.gather(ips).await;
    if let Some(e) = problem {
        eprintln!("botscope: warning: {e}");
    }
    ev
}

/// Where the DNS cache lives by default.
fn default_cache_path() -> Option<std::path::PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".cache")))?;
    Some(base.join("botscope").join("dns-cache.json"))
}

/// FCrDNS through the given nameservers (the system's when none), with
/// the on-disk cache unless `--no-dns-cache`.
pub async fn dns_evidence(a: &DnsArgs) -> Result<DnsEvidence> {
    let config = EvidenceConfig {
        servers: botscope_dns::parse_nameservers(&a.servers).context("--dns")?,
        timeout: std::time::Duration::from_secs_f64(a.dns_timeout.max(0.1)),
        concurrency: a.concurrency.max(1),
        cache: if a.no_dns_cache {
            None
        } else {
            a.dns_cache.clone().or_else(default_cache_path)
        },
    };
    let (dns, problem) = DnsEvidence::new(&config).await?;
    if let Some(e) = problem {
        eprintln!("botscope: warning: {e}; starting with an empty DNS cache");
    }
    Ok(dns)
}

/// `verify`, choosing where DNS answers come from.
pub async fn cli(a: &VerifyArgs) -> Result<Outcome> {
    if a.offline {
        return run(a, None).await;
    }
    let dns = dns_evidence(&a.dns).await?;
    run(a, Some(&dns)).await
}
