//! `botscope robots …`: check, check-batch, lint, parse, meta, generate.

use std::io::{self, BufWriter, Read, Write};
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};
use botscope_robotstxt::{
    BatchChecker, Matcher, MetaReport, ParseOptions, Robots, Semantics, Severity,
};
use serde_json::json;

use crate::cli::{
    CheckArgs, CheckBatchArgs, FetchArgs, FileArgs, Format, GenerateArgs, LintArgs, LintFormat,
    MetaArgs, MinSeverity,
};
use crate::exit::ExitStatus;
use crate::settings::FetchSettings;

// A file read up to a cap keeps the line the cap cuts whole.
const _: () = assert!(crate::io::LINE_SLACK == botscope_robotstxt::MAX_LINE_LEN + 1);

/// The bytes of a robots.txt given as a file or, for an `http(s)://` URL,
/// fetched from the site as `harvest` fetches it (what was fetched, and
/// what it means, on standard error); and the size of the whole.
async fn robots_bytes(arg: &Path, fetch: &FetchArgs, max: Option<usize>) -> Result<(Vec<u8>, u64)> {
    let text = arg.to_string_lossy();
    if !(text.starts_with("http://") || text.starts_with("https://")) {
        return Ok(crate::io::read_limited(arg, max)?);
    }
    let fetch = FetchSettings::resolve(fetch, Semantics::Google, Duration::ZERO)?;
    let (servers, timeout) = (fetch.nameservers()?, fetch.config.connect_timeout);
    let f = botscope_harvest::fetch_robots_txt(&text, fetch.config, servers, timeout).await?;
    eprintln!("botscope: {}", botscope_text::field(&f.describe()));
    let total = f.attempt.bytes.max(f.robots_txt.len() as u64);
    Ok((f.robots_txt, total))
}

fn parse_file(path: &Path, opts: &ParseOptions) -> Result<Robots> {
    let (bytes, total) = crate::io::read_limited(path, opts.max_bytes)?;
    let mut robots = Robots::parse_with(&bytes, opts);
    robots.set_total_bytes(usize::try_from(total).unwrap_or(usize::MAX));
    Ok(robots)
}

/// `robots check`.
pub async fn check(a: &CheckArgs) -> Result<ExitStatus> {
    let opts = a.parse.options();
    let (bytes, _) = robots_bytes(&a.robots, &a.fetch, opts.max_bytes).await?;
    let semantics: Semantics = a.semantics;
    let m = Matcher::compile(&bytes, semantics, &opts);
    // Usage preferences (Content-Usage, Content-Signal) from the same
    // bytes, for the agent's groups as RFC 9309 selects them.
    let robots = Robots::parse_with(&bytes, &opts);
    let token = botscope_robotstxt::product_token(&a.agent);
    let mut out = BufWriter::new(io::stdout().lock());
    let mut all_allowed = true;
    for raw in &a.urls {
        let url = raw.to_string_lossy();
        let raw_bytes = botscope_text::os_bytes(raw);
        let path = botscope_robotstxt::path_of(&raw_bytes);
        let v = m.check_path(&a.agent, &path);
        let prefs = robots.preferences(token, &path, v.allowed);
        all_allowed &= v.allowed;
        match a.format {
            Format::Text => {
                write!(
                    out,
                    "{}\t{}\t{}",
                    v.word(),
                    botscope_text::field(&url),
                    botscope_text::field(&v.describe())
                )?;
                // After the verdict, when the file states them.
                if let Some(u) = &prefs.usage {
                    let shown = botscope_robotstxt::show_usage(u);
                    write!(out, "\tusage: {}", botscope_text::field(&shown))?;
                }
                if let Some(s) = &prefs.content_signal {
                    let shown = botscope_robotstxt::show_usage(s);
                    write!(out, "\tcontent-signal: {}", botscope_text::field(&shown))?;
                }
                writeln!(out)?;
            }
            Format::Json => {
                writeln!(out, "{}", v.check_json(&url, &a.agent, semantics, &prefs))?;
            }
        }
    }
    out.flush()?;
    Ok(if all_allowed {
        ExitStatus::Success
    } else {
        ExitStatus::Negative
    })
}

/// `robots check-batch`: one pass, each robots file read and compiled the
/// first time a line names it; answers written straight to the output.
pub fn check_batch(a: &CheckBatchArgs) -> Result<ExitStatus> {
    let opts = a.parse.options();
    let input: Box<dyn Read> = if a.input == Path::new("-") {
        Box::new(io::stdin().lock())
    } else {
        Box::new(
            std::fs::File::open(&a.input)
                .with_context(|| format!("failed to open {}", a.input.display()))?,
        )
    };
    let mut checker = BatchChecker::new(a.semantics, opts);
    let mut out = BufWriter::with_capacity(1 << 20, io::stdout().lock());
    let mut files = crate::io::DirOpener::default();
    let load = |path: &[u8], buf: &mut Vec<u8>| {
        let path = botscope_text::path_from_bytes(path);
        let f = files
            .open(&path)
            .map_err(|e| format!("failed to open {}: {e}", path.display()))?;
        crate::io::read_limited_into(f, opts.max_bytes, buf)
            .map(drop)
            .map_err(|e| format!("failed to read {}: {e}", path.display()))
    };
    checker
        .run(input, &mut out, a.format == Format::Json, load)
        .context("failed to read the query input or write the answers")?;
    out.flush()?;
    // The compiled files die with the process, which ends now: freeing
    // them one by one would cost a bulk audit 2% of its time.
    std::mem::forget(checker);
    Ok(ExitStatus::Success)
}

fn display_name(p: &Path) -> String {
    if p == Path::new("-") {
        "<stdin>".to_owned()
    } else {
        p.display().to_string()
    }
}

/// `robots lint`.
pub async fn lint(a: &LintArgs, s: &crate::settings::Settings) -> Result<ExitStatus> {
    let opts = a.parse.options();
    let (bytes, total) = robots_bytes(&a.file, &a.fetch, opts.max_bytes).await?;
    let mut robots = Robots::parse_with(&bytes, &opts);
    robots.set_total_bytes(usize::try_from(total).unwrap_or(usize::MAX));
    // A crawler's name as its operator documents it (`AI2Bot`) is written
    // as the operator asks: a note, not a warning to rewrite it.
    let registry = s.registry(None)?;
    let diags = botscope_robotstxt::lint_with(&robots, &|v| registry.documents_token(v));
    let min = match a.min_severity {
        MinSeverity::Note => Severity::Info,
        MinSeverity::Warning => Severity::Warning,
        MinSeverity::Error => Severity::Error,
    };
    let errors = diags
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    let name = display_name(&a.file);
    let text = match a.format {
        // Diagnostics quote the file's lines: escaped for the terminal.
        LintFormat::Text => {
            let report = botscope_robotstxt::lint_report(&diags, &name, min);
            botscope_text::terminal(&report).into_owned()
        }
        LintFormat::Json => {
            let shown: Vec<_> = diags.iter().filter(|d| d.severity >= min).collect();
            let warnings = diags
                .iter()
                .filter(|d| d.severity == Severity::Warning)
                .count();
            let obj = json!({ "file": name, "errors": errors, "warnings": warnings, "diagnostics": shown });
            format!("{obj}\n")
        }
        LintFormat::Sarif => format!("{}\n", botscope_robotstxt::lint_sarif(&diags, &name, min)),
    };
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(if errors > 0 {
        ExitStatus::Negative
    } else {
        ExitStatus::Success
    })
}

/// `robots parse`.
pub fn parse(a: &FileArgs) -> Result<ExitStatus> {
    let robots = parse_file(&a.file, &a.parse.options())?;
    let mut out = BufWriter::new(io::stdout().lock());
    match a.format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut out, &robots)?;
            writeln!(out)?;
        }
        Format::Text => out.write_all(
            botscope_text::terminal(&robots.outline(&display_name(&a.file))).as_bytes(),
        )?,
    }
    out.flush()?;
    Ok(ExitStatus::Success)
}

/// `robots meta`.
pub fn meta(a: &MetaArgs) -> Result<ExitStatus> {
    let (html, _) = crate::io::read_limited(&a.file, Some(16 * 1024 * 1024))?;
    let mut report = MetaReport::from_html(&html, &a.agent);
    for h in &a.headers {
        let (name, value) = h
            .split_once(':')
            .with_context(|| format!("header {h:?} is not `Name: value`"))?;
        if name.trim().eq_ignore_ascii_case("x-robots-tag") {
            report.add_header(value);
        } else if name.trim().eq_ignore_ascii_case("content-usage") {
            report.add_usage_header(value.trim());
        }
    }
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    report.as_of(now.map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX)));
    let mut out = BufWriter::new(io::stdout().lock());
    match a.format {
        Format::Json => writeln!(out, "{}", serde_json::to_string(&report)?)?,
        Format::Text => out.write_all(botscope_text::terminal(&report.summary()).as_bytes())?,
    }
    out.flush()?;
    Ok(ExitStatus::Success)
}

/// `robots generate`: the policy's robots.txt, checked, then written (or
/// nothing written, exit 2).
pub fn generate(a: &GenerateArgs, settings: &crate::settings::Settings) -> Result<ExitStatus> {
    let registry = settings.registry(a.registry.as_ref())?;
    let category = |n: &String| {
        botscope_botid::Category::ALL
            .iter()
            .find(|(name, _)| name == n)
            .map(|(_, c)| *c)
            .with_context(|| format!("unknown category {n}"))
    };
    let policy = botscope_botid::Policy {
        allow: a.allow.iter().map(category).collect::<Result<_>>()?,
        block: a.block.iter().map(category).collect::<Result<_>>()?,
        block_bots: a.block_bots.clone(),
        usage: a.usage.clone().unwrap_or_default(),
        license: a.license.clone(),
    };
    let base = match &a.base {
        Some(p) => {
            let (bytes, total) = crate::io::read_limited(p, Some(botscope_botid::MAX_GENERATED))?;
            if total > botscope_botid::MAX_GENERATED as u64 {
                anyhow::bail!(
                    "{} is {}, over the {} crawlers read; nothing was written",
                    crate::io::display(p),
                    botscope_text::size(total),
                    botscope_text::size(botscope_botid::MAX_GENERATED as u64)
                );
            }
            Some(bytes)
        }
        None => None,
    };
    let g = botscope_botid::generate(&registry, &policy, base.as_deref()).map_err(|e| {
        anyhow::anyhow!(
            "{}; nothing was written",
            botscope_text::field(&e.to_string())
        )
    })?;
    match (&a.out, &a.out_dir) {
        (Some(p), _) => botscope_os::write_atomic(p, &g.text)?,
        (None, Some(_)) => {}
        (None, None) => {
            let mut out = io::stdout().lock();
            out.write_all(&g.text)?;
            out.flush()?;
        }
    }
    if let Some(dir) = &a.out_dir {
        for (name, body) in botscope_botid::gate_files(&g) {
            botscope_os::write_atomic(&dir.join(name), &body)?;
        }
    }
    let mut err = io::stderr().lock();
    let tokens: usize = g.blocked.iter().map(|b| b.tokens.len()).sum();
    writeln!(
        err,
        "blocked {} bots ({tokens} tokens); {} line(s) of the base commented out; {} verdicts checked",
        g.blocked.len(),
        g.commented.len(),
        g.checked
    )?;
    for (line, why) in &g.commented {
        writeln!(err, "  base line {line}: {}", botscope_text::field(why))?;
    }
    for n in &g.notes {
        writeln!(err, "  note: {}", botscope_text::field(n))?;
    }
    Ok(ExitStatus::Success)
}
