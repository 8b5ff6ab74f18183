//! `botscope robots …`: check, check-batch, lint, parse, meta.

use std::collections::HashMap;
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use botscope_robotstxt::{
    Diagnostic, Matcher, MetaReport, ParseOptions, Robots, Semantics, Severity, Verdict,
};
use serde_json::json;

use crate::cli::{CheckArgs, CheckBatchArgs, FileArgs, Format, MetaArgs};
use crate::exit::Outcome;

/// Reads a file (or stdin for `-`), keeping at most `limit` bytes plus one
/// line's worth past it, so that a huge file costs bounded memory; returns
/// the bytes and the total size.
pub fn read_limited(path: &Path, limit: Option<usize>) -> Result<(Vec<u8>, u64)> {
    let name = || {
        if path == Path::new("-") {
            "standard input".to_owned()
        } else {
            path.display().to_string()
        }
    };
    let mut reader: Box<dyn Read> = if path == Path::new("-") {
        Box::new(io::stdin().lock())
    } else {
        Box::new(std::fs::File::open(path).with_context(|| format!("failed to open {}", name()))?)
    };
    let mut buf = Vec::new();
    match limit {
        None => {
            reader
                .read_to_end(&mut buf)
                .with_context(|| format!("failed to read {}", name()))?;
            let n = buf.len() as u64;
            Ok((buf, n))
        }
        Some(cap) => {
            let keep = cap.saturating_add(botscope_robotstxt::MAX_LINE_LEN + 1) as u64;
            (&mut reader)
                .take(keep)
                .read_to_end(&mut buf)
                .with_context(|| format!("failed to read {}", name()))?;
            let rest = io::copy(&mut reader, &mut io::sink())
                .with_context(|| format!("failed to read {}", name()))?;
            let total = buf.len() as u64 + rest;
            Ok((buf, total))
        }
    }
}

fn parse_file(path: &Path, opts: &ParseOptions) -> Result<Robots> {
    let (bytes, total) = read_limited(path, opts.max_bytes)?;
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

fn describe(v: &Verdict<'_>) -> String {
    let group = match v.group {
        botscope_robotstxt::GroupMatch::Specific => "its own group",
        botscope_robotstxt::GroupMatch::Global => "the * group",
        botscope_robotstxt::GroupMatch::None => "no group",
    };
    match v.rule {
        Some(r) if r.pattern.is_empty() => format!(
            "line {}: {}: (empty, matches all) in {group}",
            r.line,
            r.kind.as_str()
        ),
        Some(r) => format!(
            "line {}: {}: {} in {group}",
            r.line,
            r.kind.as_str(),
            r.pattern_str()
        ),
        None => format!("no rule matched in {group}"),
    }
}

/// `robots check`.
pub fn check(a: &CheckArgs) -> Result<Outcome> {
    let opts = a.parse.options();
    let (bytes, _) = read_limited(&a.robots, opts.max_bytes)?;
    let semantics: Semantics = a.semantics.into();
    let m = Matcher::compile(&bytes, semantics, &opts);
    let mut out = BufWriter::new(io::stdout().lock());
    let mut all_allowed = true;
    for raw in &a.urls {
        let url = raw.to_string_lossy();
        let v = m.check_path(&a.agent, &botscope_robotstxt::path_of(&os_bytes(raw)));
        all_allowed &= v.allowed;
        match a.format {
            Format::Text => writeln!(out, "{}\t{url}\t{}", verdict_word(v.allowed), describe(&v))?,
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
        Outcome::Ok
    } else {
        Outcome::Negative
    })
}

/// Input read at a time by `check-batch`.
const BATCH_BYTES: usize = 1 << 20;
/// The longest query line held: longer ones are answered as malformed.
const MAX_QUERY_LINE: usize = 4 << 20;

/// The robots files a batch has named: each read and compiled once, found
/// again by its bytes (the last one without a lookup: queries of one file
/// usually come together).
#[derive(Default)]
struct Files {
    index: HashMap<Box<[u8]>, usize, foldhash::fast::RandomState>,
    compiled: Vec<Result<Matcher, String>>,
    last: Option<(Box<[u8]>, usize)>,
}

impl Files {
    fn get(
        &mut self,
        path: &[u8],
        opts: &ParseOptions,
        semantics: Semantics,
    ) -> &Result<Matcher, String> {
        if let Some((p, i)) = &self.last
            && **p == *path
        {
            return &self.compiled[*i];
        }
        let i = match self.index.get(path) {
            Some(&i) => i,
            None => {
                let m = read_limited(&bytes_to_path(path), opts.max_bytes)
                    .map(|(bytes, _)| Matcher::compile(&bytes, semantics, opts))
                    .map_err(|e| format!("{e:#}"));
                self.compiled.push(m);
                let i = self.compiled.len() - 1;
                self.index.insert(path.into(), i);
                i
            }
        };
        self.last = Some((path.into(), i));
        &self.compiled[i]
    }
}

/// `robots check-batch`: one pass, each robots file read and compiled the
/// first time a line names it; answers written straight to the output.
pub fn check_batch(a: &CheckBatchArgs) -> Result<Outcome> {
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
    let mut files = Files::default();
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
                    answer(&mut out, b"", &mut files, &opts, semantics, a.format)?;
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
            answer(&mut out, line, &mut files, &opts, semantics, a.format)?;
        }
        buf.drain(..whole);
        if ended {
            break;
        }
    }
    out.flush()?;
    Ok(Outcome::Ok)
}

/// A query line's robots path, agent and URL.
type Query<'a> = (&'a [u8], &'a [u8], &'a [u8]);

fn split_query(line: &[u8]) -> Result<Query<'_>, &'static str> {
    let mut it = line.splitn(3, |&b| b == b'\t');
    match (it.next(), it.next(), it.next()) {
        (Some(p), Some(agent), Some(url))
            if !p.is_empty() && memchr::memchr(b'\t', url).is_none() =>
        {
            Ok((p, agent, url))
        }
        _ => Err("malformed line: expected ROBOTS_PATH<TAB>AGENT<TAB>URL"),
    }
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
    files: &mut Files,
    opts: &ParseOptions,
    semantics: Semantics,
    format: Format,
) -> io::Result<()> {
    let error = |out: &mut dyn Write, reason: &str| match format {
        Format::Text => writeln!(out, "error\t{}", reason.replace(['\t', '\n'], " ")),
        Format::Json => writeln!(out, "{}", json!({ "verdict": "error", "reason": reason })),
    };
    let (path, agent, url) = match split_query(line) {
        Ok(q) => q,
        Err(e) => return error(out, e),
    };
    let m = match files.get(path, opts, semantics) {
        Ok(m) => m,
        Err(e) => return error(out, e),
    };
    let agent = String::from_utf8_lossy(agent);
    let v = m.check_path(&agent, &botscope_robotstxt::path_of(url));
    match format {
        Format::Text => out.write_all(if v.allowed {
            b"allowed\n"
        } else {
            b"disallowed\n"
        }),
        Format::Json => writeln!(
            out,
            "{}",
            json!({ "verdict": verdict_word(v.allowed), "rule": rule_json(&v), "group": v.group })
        ),
    }
}

fn print_diagnostics(out: &mut impl Write, file: &str, diags: &[Diagnostic]) -> io::Result<()> {
    for d in diags {
        writeln!(
            out,
            "{file}:{}:{}: {}[{} {}]: {}",
            d.line, d.column, d.severity, d.code, d.name, d.message
        )?;
        if let Some(s) = &d.suggestion {
            writeln!(out, "  help: {s}")?;
        }
    }
    Ok(())
}

fn display_name(p: &Path) -> String {
    if p == Path::new("-") {
        "<stdin>".to_owned()
    } else {
        p.display().to_string()
    }
}

/// `robots lint`.
pub fn lint(a: &FileArgs) -> Result<Outcome> {
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
            print_diagnostics(&mut out, &name, &diags)?;
            writeln!(
                out,
                "{name}: {errors} error(s), {warnings} warning(s), {} note(s)",
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
        Outcome::Negative
    } else {
        Outcome::Ok
    })
}

/// `robots parse`.
pub fn parse(a: &FileArgs) -> Result<Outcome> {
    let robots = parse_file(&a.file, &a.parse.options())?;
    let mut out = BufWriter::new(io::stdout().lock());
    match a.format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut out, &robots)?;
            writeln!(out)?;
        }
        Format::Text => {
            let name = display_name(&a.file);
            writeln!(
                out,
                "{name}: {} bytes, {} lines, {} group(s), {} sitemap(s)",
                robots.total_bytes,
                robots.lines,
                robots.groups.len(),
                robots.sitemaps.len()
            )?;
            for g in &robots.groups {
                let agents: Vec<&str> = g.user_agents.iter().map(|u| u.value.as_str()).collect();
                writeln!(
                    out,
                    "group (line {}): {}",
                    g.user_agents[0].line,
                    agents.join(", ")
                )?;
                for r in &g.rules {
                    writeln!(out, "  {:>5}  {:<8} {}", r.line, r.kind.as_str(), r.pattern)?;
                }
                if let Some(c) = &g.crawl_delay {
                    writeln!(out, "  {:>5}  Crawl-delay {}", c.line, c.value)?;
                }
                if let Some(c) = &g.request_rate {
                    writeln!(
                        out,
                        "  {:>5}  Request-rate {}/{}s",
                        c.line, c.value.requests, c.value.seconds
                    )?;
                }
            }
            for s in &robots.sitemaps {
                writeln!(out, "sitemap (line {}): {}", s.line, s.value)?;
            }
            print_diagnostics(&mut out, &name, &robots.diagnostics)?;
        }
    }
    out.flush()?;
    Ok(Outcome::Ok)
}

/// `robots meta`.
pub fn meta(a: &MetaArgs) -> Result<Outcome> {
    let (html, _) = read_limited(&a.file, Some(16 * 1024 * 1024))?;
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
        Format::Text => {
            let d = &report.directives;
            let flags = [
                ("noindex", d.noindex),
                ("nofollow", d.nofollow),
                ("noarchive", d.noarchive),
                ("nosnippet", d.nosnippet),
                ("noimageindex", d.noimageindex),
                ("notranslate", d.notranslate),
                ("indexifembedded", d.indexifembedded),
            ];
            let mut parts: Vec<String> = flags
                .iter()
                .filter(|(_, on)| *on)
                .map(|(n, _)| (*n).to_owned())
                .collect();
            if let Some(n) = d.max_snippet {
                parts.push(format!("max-snippet:{n}"));
            }
            if let Some(p) = d.max_image_preview {
                parts.push(format!(
                    "max-image-preview:{}",
                    serde_json::to_value(p)?.as_str().unwrap_or_default()
                ));
            }
            if let Some(n) = d.max_video_preview {
                parts.push(format!("max-video-preview:{n}"));
            }
            if let Some(u) = &d.unavailable_after {
                parts.push(format!("unavailable_after:{u}"));
            }
            let summary = if parts.is_empty() {
                "index, follow (no restrictions)".to_owned()
            } else {
                parts.join(", ")
            };
            writeln!(out, "{}: {summary}", report.agent)?;
            for s in &report.sources {
                let place = if s.origin == "meta" {
                    format!("line {}", s.line)
                } else {
                    "header".to_owned()
                };
                writeln!(out, "  {place}: {} {:?}", s.name, s.content)?;
            }
            for w in &report.warnings {
                writeln!(out, "  warning[{}] line {}: {}", w.code, w.line, w.message)?;
            }
        }
    }
    out.flush()?;
    Ok(Outcome::Ok)
}
