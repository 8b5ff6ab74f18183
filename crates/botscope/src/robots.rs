//! `botscope robots …`: check, check-batch, lint, parse, meta.

use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use botscope_robotstxt::{
    BatchChecker, Matcher, MetaReport, ParseOptions, Robots, Semantics, Severity, Verdict,
};
use serde_json::json;

use crate::cli::{CheckArgs, CheckBatchArgs, FileArgs, Format, MetaArgs};
use crate::exit::ExitStatus;

fn parse_file(path: &Path, opts: &ParseOptions) -> Result<Robots> {
    let (bytes, total) = crate::io::read_limited(path, opts.max_bytes)?;
    let mut robots = Robots::parse_with(&bytes, opts);
    robots.set_total_bytes(usize::try_from(total).unwrap_or(usize::MAX));
    Ok(robots)
}

fn verdict_word(allowed: bool) -> &'static str {
    if allowed { "allowed" } else { "disallowed" }
}

fn rule_json(v: &Verdict<'_>) -> serde_json::Value {
    match v.rule {
        Some(r) => json!({ "line": r.line, "kind": r.kind, "pattern": r.pattern_str() }),
        None => serde_json::Value::Null,
    }
}

/// `robots check`.
pub fn check(a: &CheckArgs) -> Result<ExitStatus> {
    let opts = a.parse.options();
    let (bytes, _) = crate::io::read_limited(&a.robots, opts.max_bytes)?;
    let semantics: Semantics = a.semantics.into();
    let m = Matcher::compile(&bytes, semantics, &opts);
    let mut out = BufWriter::new(io::stdout().lock());
    let mut all_allowed = true;
    for raw in &a.urls {
        let url = raw.to_string_lossy();
        let v = m.check_path(&a.agent, &botscope_robotstxt::path_of(&os_bytes(raw)));
        all_allowed &= v.allowed;
        match a.format {
            Format::Text => writeln!(
                out,
                "{}\t{}\t{}",
                verdict_word(v.allowed),
                botscope_text::field(&url),
                botscope_text::field(&v.describe())
            )?,
            Format::Json => {
                let obj = json!({
                    "url": url,
                    "agent": a.agent,
                    "semantics": semantics.as_str(),
                    "allowed": v.allowed,
                    "verdict": verdict_word(v.allowed),
                    "rule": rule_json(&v),
                    "group": v.group,
                });
                writeln!(out, "{obj}")?;
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

/// Input read at a time by `check-batch`.
const BATCH_BYTES: usize = 1 << 20;
/// The longest query line held: longer ones are answered as malformed.
const MAX_QUERY_LINE: usize = 4 << 20;

/// `robots check-batch`: one pass, each robots file read and compiled the
/// first time a line names it; answers written straight to the output.
pub fn check_batch(a: &CheckBatchArgs) -> Result<ExitStatus> {
    let opts = a.parse.options();
    let semantics: Semantics = a.semantics.into();
    let mut input: Box<dyn Read> = if a.input == Path::new("-") {
        Box::new(io::stdin().lock())
    } else {
        Box::new(
            std::fs::File::open(&a.input)
                .with_context(|| format!("failed to open {}", a.input.display()))?,
        )
    };
    let mut checker = BatchChecker::new(semantics, opts);
    let mut out = BufWriter::with_capacity(1 << 20, io::stdout().lock());
    let mut buf: Vec<u8> = Vec::with_capacity(BATCH_BYTES * 2);
    // Inside a line over the limit: its bytes are dropped up to its end.
    let mut skipping = false;
    loop {
        let start = buf.len();
        let n = (&mut input)
            .take(BATCH_BYTES as u64)
            .read_to_end(&mut buf)
            .context("failed to read the query input")?;
        let ended = n == 0;
        if skipping {
            match memchr::memchr(b'\n', &buf[start..]) {
                Some(i) => {
                    buf.drain(start..=start + i);
                    skipping = false;
                }
                None => {
                    buf.truncate(start);
                    if ended {
                        break;
                    }
                    continue;
                }
            }
        }
        // Whole lines; the rest waits for the next read (or is the last
        // line, without its newline, at the end).
        let whole = if ended {
            buf.len()
        } else {
            match memchr::memrchr(b'\n', &buf[start..]) {
                Some(i) => start + i + 1,
                None if buf.len() > MAX_QUERY_LINE => {
                    // A line that long is not a query: say so, hold nothing.
                    answer(&mut out, b"", &mut checker, opts, a.format)?;
                    buf.clear();
                    skipping = true;
                    continue;
                }
                None => continue,
            }
        };
        for line in buf[..whole].split_inclusive(|&b| b == b'\n') {
            let line = line.strip_suffix(b"\n").unwrap_or(line);
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            answer(&mut out, line, &mut checker, opts, a.format)?;
        }
        buf.drain(..whole);
        if ended {
            break;
        }
    }
    out.flush()?;
    Ok(ExitStatus::Success)
}

#[cfg(unix)]
fn os_bytes(s: &std::ffi::OsStr) -> std::borrow::Cow<'_, [u8]> {
    use std::os::unix::ffi::OsStrExt;
    std::borrow::Cow::Borrowed(s.as_bytes())
}

#[cfg(not(unix))]
fn os_bytes(s: &std::ffi::OsStr) -> std::borrow::Cow<'_, [u8]> {
    std::borrow::Cow::Owned(s.to_string_lossy().into_owned().into_bytes())
}

#[cfg(unix)]
fn bytes_to_path(b: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    PathBuf::from(std::ffi::OsStr::from_bytes(b))
}

#[cfg(not(unix))]
fn bytes_to_path(b: &[u8]) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(b).into_owned())
}

fn answer(
    out: &mut impl Write,
    line: &[u8],
    checker: &mut BatchChecker,
    opts: ParseOptions,
    format: Format,
) -> io::Result<()> {
    let load = |path: &[u8]| {
        crate::io::read_limited(&bytes_to_path(path), opts.max_bytes)
            .map(|(bytes, _)| bytes)
            .map_err(|e| format!("{e:#}"))
    };
    match (checker.check(line, load), format) {
        (Ok(v), Format::Text) => out.write_all(if v.allowed {
            b"allowed\n"
        } else {
            b"disallowed\n"
        }),
        (Ok(v), Format::Json) => writeln!(
            out,
            "{}",
            json!({ "verdict": verdict_word(v.allowed), "rule": rule_json(&v), "group": v.group })
        ),
        (Err(e), Format::Text) => writeln!(out, "error\t{}", botscope_text::field(e)),
        (Err(e), Format::Json) => writeln!(out, "{}", json!({ "verdict": "error", "reason": e })),
    }
}

fn display_name(p: &Path) -> String {
    if p == Path::new("-") {
        "<stdin>".to_owned()
    } else {
        p.display().to_string()
    }
}

/// `robots lint`.
pub fn lint(a: &FileArgs) -> Result<ExitStatus> {
    let robots = parse_file(&a.file, &a.parse.options())?;
    let diags = botscope_robotstxt::lint(&robots);
    let errors = diags
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    let warnings = diags
        .iter()
        .filter(|d| d.severity == Severity::Warning)
        .count();
    let mut out = BufWriter::new(io::stdout().lock());
    let name = display_name(&a.file);
    match a.format {
        Format::Text => {
            // Diagnostics quote the file's lines: escaped for the terminal.
            for d in &diags {
                out.write_all(botscope_text::terminal(&d.render(&name)).as_bytes())?;
            }
            writeln!(
                out,
                "{}: {errors} error(s), {warnings} warning(s), {} note(s)",
                botscope_text::field(&name),
                diags.len() - errors - warnings
            )?;
        }
        Format::Json => {
            let obj = json!({ "file": name, "errors": errors, "warnings": warnings, "diagnostics": diags });
            writeln!(out, "{obj}")?;
        }
    }
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
        }
    }
    let mut out = BufWriter::new(io::stdout().lock());
    match a.format {
        Format::Json => writeln!(out, "{}", serde_json::to_string(&report)?)?,
        Format::Text => out.write_all(botscope_text::terminal(&report.summary()).as_bytes())?,
    }
    out.flush()?;
    Ok(ExitStatus::Success)
}
