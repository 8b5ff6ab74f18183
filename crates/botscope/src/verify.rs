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
    if let Some(path) = &a.request {
        return request_run(a, settings, &registry, &ua_classifier, dns, path).await;
    }
    match (&a.batch, &a.ip) {
        (Some(batch), None) => {
            batch_run(batch, &registry, &ua_classifier, dns, &settings.owners()).await
        }
        (None, Some(ip)) => {
            let ip = parse_ip(ip)?;
            let v = single(
                a,
                settings,
                &registry,
                &ua_classifier,
                dns,
                ip,
                a.ua.as_deref(),
            )
            .await;
            print_verdict(a, &v)
        }
        (Some(_), Some(_)) => bail!("give either an IP or --batch, not both"),
        (None, None) => bail!("give an IP, or --batch FILE"),
    }
}

/// The verdict on one address and User-Agent, with the FCrDNS evidence
/// gathered when `dns` is given; `--trace` prints its steps.
async fn single(
    a: &VerifyArgs,
    settings: &Settings,
    registry: &Registry,
    ua_classifier: &UaClassifier,
    dns: Option<&DnsEvidence>,
    ip: IpAddr,
    user_agent: Option<&str>,
) -> botscope_botid::Verification {
    let ua = user_agent
        .map(|u| ua_classifier.classify(u))
        .unwrap_or_default();
    let domains = botscope_botid::fcrdns_domains(registry, ip, &ua);
    let evidence = match (dns, domains) {
        (Some(d), Some(domains)) => {
            let ip = botscope_botid::normalize(ip);
            gather(d, &[(ip, domains.to_vec())]).await.remove(&ip)
        }
        _ => None,
    };
    let owner = botscope_botid::Owners::owner(&settings.owners(), ip);
    let v = verify(registry, ip, user_agent, &ua, evidence.as_ref(), owner);
    if a.trace {
        let t = botscope_botid::trace(registry, &ua, evidence.as_ref(), &v);
        eprint!("{}", botscope_text::terminal(&t));
    }
    v
}

/// Prints a verdict as `--format` says; its exit status.
fn print_verdict(a: &VerifyArgs, v: &botscope_botid::Verification) -> Result<ExitStatus> {
    let mut out = BufWriter::new(io::stdout().lock());
    match a.format {
        Format::Json => writeln!(out, "{}", serde_json::to_string(v)?)?,
        Format::Text => {
            writeln!(out, "{}", v.text_line())?;
            if let Some(s) = &v.signature {
                writeln!(
                    out,
                    "signature\t{}\t{}\t{}\t{}",
                    s.outcome,
                    botscope_text::field(s.agent.as_deref().unwrap_or("-")),
                    botscope_text::field(s.keyid.as_deref().unwrap_or("-")),
                    botscope_text::field(&s.reason)
                )?;
            }
        }
    }
    out.flush()?;
    Ok(exit_of(v.verdict))
}

/// `verify --request`: the head read, the client's address and
/// User-Agent taken from it, the signature checked with the agents' key
/// directories (fetched unless `--offline`), one verdict with every piece
/// of evidence.
async fn request_run(
    a: &VerifyArgs,
    settings: &Settings,
    registry: &Registry,
    ua_classifier: &UaClassifier,
    dns: Option<&DnsEvidence>,
    path: &Path,
) -> Result<ExitStatus> {
    // Past the limit the head is refused by its parser (too large).
    let (head, _) = crate::io::read_limited(path, Some(botscope_httpsig::message::MAX_HEAD_BYTES))?;
    let req = botscope_httpsig::Request::parse_head(&head, &a.scheme)
        .with_context(|| format!("{}: not a request head", path.display()))?;
    let ip = match &a.ip {
        Some(ip) => parse_ip(ip)?,
        None => {
            let from_head = req.header("x-real-ip").map(|h| h.into_owned()).or_else(|| {
                req.header("x-forwarded-for")
                    .and_then(|f| f.split(',').next().map(|s| s.trim().to_owned()))
            });
            match from_head {
                Some(h) => {
                    parse_ip(&h).with_context(|| format!("the head's client address `{h}`"))?
                }
                None => bail!(
                    "the request head names no client address (X-Real-IP, X-Forwarded-For): give IP"
                ),
            }
        }
    };
    let user_agent =
        a.ua.clone()
            .or_else(|| req.header("user-agent").map(|h| h.into_owned()));
    let mut v = single(
        a,
        settings,
        registry,
        ua_classifier,
        dns,
        ip,
        user_agent.as_deref(),
    )
    .await;
    let now = a.at.unwrap_or_else(botscope_os::unix_now);
    let mut cfg = crate::settings::directory_config(&a.directories)?;
    cfg.allow_test_keys = a.allow_test_keys;
    let policy = botscope_httpsig::Policy {
        max_validity: a.max_validity,
        allow_test_keys: a.allow_test_keys,
        ..botscope_httpsig::Policy::default()
    };
    let held = match &a.keys {
        Some(path) => {
            let bytes =
                botscope_os::read_capped(path, botscope_httpsig::keys::MAX_DIRECTORY_BYTES as u64)?;
            Some(
                botscope_httpsig::Directory::parse(&bytes)
                    .with_context(|| format!("--keys {}: not a JWK Set", path.display()))?,
            )
        }
        None => None,
    };
    let (s, fetched) = botscope_http::directory::verify_request(
        &req,
        &cfg,
        now,
        !a.offline,
        &policy,
        held.as_ref(),
    )
    .await;
    if a.trace {
        if let Some(t) = a.at.and_then(botscope_httpsig::rfc3339) {
            eprintln!("checked at {t} (--at)");
        }
        for f in &fetched {
            match &f.directory {
                Ok(d) => eprintln!(
                    "keys of {} ({}): fetched {}; identifier {}; {} key(s){}; the response's own signature {}",
                    botscope_text::field(&f.agent),
                    d.agent.reading.describe(),
                    botscope_text::field(&d.url),
                    botscope_text::field(&d.agent.identifier),
                    d.directory.keys.len(),
                    if d.directory.skipped.is_empty() {
                        String::new()
                    } else {
                        format!(
                            " ({} left out: {})",
                            d.directory.skipped.len(),
                            botscope_text::field(&d.directory.skipped.join("; "))
                        )
                    },
                    d.signature
                ),
                Err(e) => eprintln!(
                    "keys of {}: {}",
                    botscope_text::field(&f.agent),
                    botscope_text::field(&e.to_string())
                ),
            }
        }
        for sig in s.each() {
            eprintln!(
                "signature {}: {} ({}){}{}",
                botscope_text::field(sig.label.as_deref().unwrap_or("-")),
                sig.outcome,
                botscope_text::field(&sig.reason.to_string()),
                match (&sig.agent_form, &sig.agent_url) {
                    (Some(form), Some(u)) =>
                        format!("; Signature-Agent {form}, {}", u.reading.describe()),
                    (Some(form), None) => format!("; Signature-Agent {form}"),
                    _ => String::new(),
                },
                sig.identifier()
                    .map(|i| format!("; identifier {}", botscope_text::field(&i)))
                    .unwrap_or_default()
            );
            for n in &sig.notes {
                eprintln!("  note: {}", botscope_text::field(n));
            }
            if let Some(base) = &sig.base {
                eprintln!("signature base ({}):", sig.label.as_deref().unwrap_or("-"));
                eprintln!("{}", botscope_text::terminal(base));
            }
        }
    }
    botscope_botid::with_signature(
        registry,
        &mut v,
        botscope_botid::SignatureEvidence::from_verdict(&s),
    );
    print_verdict(a, &v)
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
