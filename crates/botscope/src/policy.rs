//! `botscope policy`: start a policy from a preset, check one, and write
//! the robots.txt that says what it enforces.

use std::io::{self, Write};

use anyhow::{Context, Result};
use botscope_policy::Severity;

use crate::cli::{
    Format, PolicyCheckArgs, PolicyInitArgs, PolicyReplayArgs, PolicyRobotsArgs, ReplayFormat,
};
use crate::exit::ExitStatus;
use crate::settings::Settings;

/// `policy init`.
pub fn init(a: &PolicyInitArgs) -> Result<ExitStatus> {
    let text =
        botscope_policy::preset(&a.preset).with_context(|| format!("no preset {}", a.preset))?;
    match &a.out {
        Some(path) => {
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)
                .with_context(|| {
                    format!(
                        "failed to create {} (an existing file is never overwritten; nothing was written)",
                        crate::io::display(path)
                    )
                })?;
            f.write_all(text.as_bytes())
                .with_context(|| format!("failed to write {}", crate::io::display(path)))?;
            eprintln!(
                "botscope: wrote the {} policy to {}; check it with `botscope policy check {}`",
                a.preset,
                crate::io::display(path),
                crate::io::display(path)
            );
        }
        None => {
            let mut out = io::stdout().lock();
            out.write_all(text.as_bytes())?;
            out.flush()?;
        }
    }
    Ok(ExitStatus::Success)
}

/// A policy file's text (at most the size a policy may be) and the name
/// its findings use.
fn read(path: &std::path::Path) -> Result<(String, String)> {
    let max = botscope_policy::MAX_POLICY_BYTES;
    let (bytes, total) = crate::io::read_limited(path, Some(max + 1))?;
    anyhow::ensure!(
        total <= max as u64,
        "{} is {total} bytes; a policy is at most {max}",
        crate::io::display(path)
    );
    let name = if path == std::path::Path::new("-") {
        "<stdin>".to_owned()
    } else {
        path.display().to_string()
    };
    // As the gate reads it: bad bytes are characters the parser reports.
    Ok((name, String::from_utf8_lossy(&bytes).into_owned()))
}

/// A policy file compiled, or an error listing its errors (nothing is
/// done with a policy that has one).
fn compile(
    path: &std::path::Path,
    registry: &botscope_botid::Registry,
) -> Result<botscope_policy::Policy> {
    let (name, text) = read(path)?;
    let parsed = botscope_policy::parse(&name, &text, registry);
    match parsed.policy {
        Some(p) => Ok(p),
        None => {
            let errors: Vec<String> = parsed
                .findings
                .iter()
                .filter(|f| f.severity == Severity::Error)
                .map(ToString::to_string)
                .collect();
            anyhow::bail!(
                "the policy has errors; nothing was written:\n{}",
                botscope_text::terminal(&errors.join("\n"))
            )
        }
    }
}

/// `policy check`: 0 clean, 1 findings, 2 unreadable.
pub fn check(a: &PolicyCheckArgs, s: &Settings) -> Result<ExitStatus> {
    let registry = s.registry(a.registry.as_ref())?;
    let (name, text) = read(&a.file)?;
    let mut parsed = botscope_policy::parse(&name, &text, &registry);
    if let (Some(robots), Some(policy)) = (&a.robots, &parsed.policy) {
        let (body, _) =
            crate::io::read_limited(robots, Some(botscope_robotstxt::DEFAULT_PARSE_CAP))?;
        let more = botscope_policy::priced_but_closed(policy, &body);
        parsed.findings.extend(more);
        parsed.findings.sort_by_key(|f| f.line);
    }
    let mut out = io::BufWriter::new(io::stdout().lock());
    match a.format {
        Format::Json => {
            let findings: Vec<serde_json::Value> = parsed
                .findings
                .iter()
                .map(|f| {
                    serde_json::json!({
                        "file": f.file,
                        "line": f.line,
                        "rule": f.rule,
                        "severity": f.severity.as_str(),
                        "message": f.message,
                    })
                })
                .collect();
            let body = serde_json::json!({
                "file": name,
                "rules": parsed.policy.as_ref().map(|p| p.rules.len()),
                "findings": findings,
            });
            writeln!(out, "{body}")?;
        }
        Format::Text => {
            for f in &parsed.findings {
                writeln!(out, "{}", botscope_text::terminal(&f.to_string()))?;
            }
            let errors = parsed
                .findings
                .iter()
                .filter(|f| f.severity == Severity::Error)
                .count();
            let warnings = parsed.findings.len() - errors;
            match &parsed.policy {
                Some(p) if parsed.findings.is_empty() => writeln!(
                    out,
                    "{}: {} rules, default {}: clean",
                    botscope_text::field(&name),
                    p.rules.len(),
                    p.default.as_str()
                )?,
                _ => writeln!(
                    out,
                    "{}: {errors} error{}, {warnings} warning{}{}",
                    botscope_text::field(&name),
                    if errors == 1 { "" } else { "s" },
                    if warnings == 1 { "" } else { "s" },
                    if errors > 0 {
                        " (the gate refuses this policy)"
                    } else {
                        ""
                    }
                )?,
            }
        }
    }
    out.flush()?;
    Ok(if parsed.findings.is_empty() {
        ExitStatus::Success
    } else {
        ExitStatus::Negative
    })
}

/// `policy robots`: the robots.txt that says what the policy refuses by
/// name everywhere, through `robots generate`'s generator.
pub fn robots(a: &PolicyRobotsArgs, s: &Settings) -> Result<ExitStatus> {
    let registry = s.registry(a.registry.as_ref())?;
    let policy = compile(&a.file, &registry)?;
    let refused = policy.refused();
    let base = match &a.base {
        Some(p) => {
            let (bytes, total) = crate::io::read_limited(p, Some(botscope_botid::MAX_GENERATED))?;
            anyhow::ensure!(
                total <= botscope_botid::MAX_GENERATED as u64,
                "{} is {}, over the {} crawlers read; nothing was written",
                crate::io::display(p),
                botscope_text::size(total),
                botscope_text::size(botscope_botid::MAX_GENERATED as u64)
            );
            Some(bytes)
        }
        None => None,
    };
    let category = |n: &String| {
        botscope_botid::Category::ALL
            .iter()
            .find(|(name, _)| name == n)
            .map(|(_, c)| *c)
    };
    let gen_policy = botscope_botid::Policy {
        allow: Vec::new(),
        block: refused.categories.iter().filter_map(category).collect(),
        block_bots: refused
            .bots
            .iter()
            .map(|b| {
                registry
                    .get(b)
                    .map_or_else(|| b.clone(), |e| e.name.clone())
            })
            .collect(),
        usage: Default::default(),
        license: Vec::new(),
    };
    let mut err = io::stderr().lock();
    let body = if gen_policy.block.is_empty() && gen_policy.block_bots.is_empty() {
        writeln!(
            err,
            "the policy refuses no crawler category or bot everywhere: robots.txt need not change"
        )?;
        base.unwrap_or_else(|| b"User-agent: *\nDisallow:\n".to_vec())
    } else {
        let g = botscope_botid::generate(&registry, &gen_policy, base.as_deref()).map_err(|e| {
            anyhow::anyhow!(
                "{}; nothing was written",
                botscope_text::field(&e.to_string())
            )
        })?;
        let tokens: usize = g.blocked.iter().map(|b| b.tokens.len()).sum();
        writeln!(
            err,
            "closed the site to {} bots ({tokens} tokens) the policy refuses everywhere; {} verdicts checked",
            g.blocked.len(),
            g.checked
        )?;
        g.text
    };
    for rule in &refused.unsaid {
        writeln!(
            err,
            "  rule `{}` refuses by more than a name (a path, an identity, a rate …): robots.txt cannot say it, the gate enforces it",
            botscope_text::field(rule)
        )?;
    }
    match &a.out {
        Some(p) => botscope_os::write_atomic(p, &body)?,
        None => {
            let mut out = io::stdout().lock();
            out.write_all(&body)?;
            out.flush()?;
        }
    }
    Ok(ExitStatus::Success)
}

/// A report to `out` (atomically) or standard output.
fn report(out: Option<&std::path::Path>, body: &str) -> Result<ExitStatus> {
    match out {
        Some(p) => botscope_os::write_atomic(p, body.as_bytes())?,
        None => {
            let mut out = io::stdout().lock();
            out.write_all(body.as_bytes())?;
            out.flush()?;
        }
    }
    Ok(ExitStatus::Success)
}

/// `policy replay --funnel`: the challenge funnel from decision logs.
fn funnel(
    a: &PolicyReplayArgs,
    policy: &botscope_policy::Policy,
    inputs: Vec<(String, Box<dyn io::BufRead>)>,
) -> Result<ExitStatus> {
    anyhow::ensure!(
        matches!(a.format, ReplayFormat::Text | ReplayFormat::Json),
        "--funnel reports as text or json"
    );
    let mut r = botscope_gate::funnel::read_log(inputs)?;
    r.add_rules(policy);
    let body = match a.format {
        ReplayFormat::Json => format!("{}\n", serde_json::to_string(&r)?),
        _ => botscope_text::terminal(&botscope_gate::funnel::text(&r)).into_owned(),
    };
    report(a.out.as_deref(), &body)
}

/// `policy replay`: the policy over access logs, in log time.
pub async fn replay(a: &PolicyReplayArgs, s: &Settings) -> Result<ExitStatus> {
    let registry = std::sync::Arc::new(s.registry(a.registry.as_ref())?);
    let policy = compile(&a.file, &registry)?;
    let robots = match &a.robots {
        Some(p) => Some(crate::io::read_limited(p, Some(botscope_robotstxt::DEFAULT_PARSE_CAP))?.0),
        None => None,
    };
    let lists = match &a.lists {
        Some(d) => Some(botscope_gate::read(d)?),
        None => None,
    };
    let open_all = || -> Result<Vec<(String, Box<dyn io::BufRead>)>> {
        let mut inputs: Vec<(String, Box<dyn io::BufRead>)> = Vec::new();
        for p in &a.logs {
            let source = botscope_logs::Source::from_arg(p);
            let name = source.name();
            let r = botscope_logs::open(source, &botscope_logs::NoProgress)
                .with_context(|| format!("failed to open {}", crate::io::display(p)))?;
            inputs.push((name, Box::new(io::BufReader::with_capacity(1 << 16, r))));
        }
        Ok(inputs)
    };
    if a.funnel {
        return funnel(a, &policy, open_all()?);
    }
    let identity = || botscope_gate::identity::IdentityConfig {
        registry: registry.clone(),
        owners: std::sync::Arc::new(s.owners()),
        dns: None,
        cache: botscope_gate::identity::DEFAULT_IDENTITIES,
    };
    anyhow::ensure!(
        a.verify || (a.dns.servers.is_empty() && a.dns.dns_cache.is_none()),
        "--dns and --dns-cache are for --verify"
    );
    // --verify: the claims the lists leave undecided, asked of the
    // resolver first (the logs read once for the questions).
    let evidence = if a.verify {
        anyhow::ensure!(
            a.logs.iter().all(|p| p.as_os_str() != "-"),
            "--verify reads the logs twice: give files, not - (standard input)"
        );
        let questions = botscope_gate::replay::questions(
            identity(),
            a.log_format.as_ref(),
            open_all()?,
            botscope_gate::identity::DEFAULT_EVIDENCE,
        )?;
        let dns = crate::verify::dns_evidence(&a.dns, s).await?;
        Some(crate::verify::gather(&dns, &questions).await)
    } else {
        None
    };
    let cfg = botscope_gate::replay::ReplayConfig {
        policy: std::sync::Arc::new(policy),
        identity: identity(),
        robots,
        lists,
        format: a.log_format.clone(),
        evidence,
        trap_key: a
            .challenge_key
            .as_deref()
            .map(|p| botscope_gate::startup::key_file("--challenge-key", p))
            .transpose()?,
    };
    let body = if a.format == ReplayFormat::Jsonl {
        // A line per request, streamed to the output as decided.
        let mut file = a
            .out
            .as_ref()
            .map(|p| botscope_os::AtomicFile::create(p))
            .transpose()?;
        let mut stdout = io::BufWriter::new(io::stdout().lock());
        let mut failed: Option<io::Error> = None;
        botscope_gate::replay::replay_with(cfg, open_all()?, &mut |d| {
            let line = botscope_gate::replay::jsonl(d);
            let w: &mut dyn Write = match file.as_mut() {
                Some(f) => f,
                None => &mut stdout,
            };
            if failed.is_none()
                && let Err(e) = writeln!(w, "{line}")
            {
                failed = Some(e);
            }
        })?;
        if let Some(e) = failed {
            return Err(e.into());
        }
        // The file replaces the one at --out only when whole.
        match file {
            Some(f) => f.commit()?,
            None => stdout.flush()?,
        }
        return Ok(ExitStatus::Success);
    } else {
        let r = botscope_gate::replay::replay(cfg, open_all()?)?;
        match a.format {
            ReplayFormat::Text | ReplayFormat::Jsonl => {
                botscope_text::terminal(&botscope_gate::replay::text(&r)).into_owned()
            }
            ReplayFormat::Json => format!("{}\n", serde_json::to_string(&r)?),
            ReplayFormat::Html => botscope_gate::replay::html(&r),
        }
    };
    report(a.out.as_deref(), &body)
}
