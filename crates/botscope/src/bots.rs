//! `botscope bots …`: the crawler registry.

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use botscope_botid::{BotEntry, MAX_REGISTRY_BYTES, Registry, RegistryError};
use serde_json::json;

use crate::cli::{BotsListArgs, BotsShowArgs, BotsValidateArgs, Format};
use crate::exit::Outcome;

/// Reads a registry file's text, with a size limit.
fn read_text(path: &Path) -> Result<String> {
    let (bytes, total) = crate::robots::read_limited(path, Some(MAX_REGISTRY_BYTES))?;
    anyhow::ensure!(
        total as usize <= MAX_REGISTRY_BYTES,
        "{} is {total} bytes; the limit is {MAX_REGISTRY_BYTES}",
        path.display()
    );
    String::from_utf8(bytes).with_context(|| format!("{} is not UTF-8 text", path.display()))
}

fn errors_text(errors: &[RegistryError]) -> String {
    errors
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The bundled registry with the user's file layered over it.
pub fn load_registry(user: Option<&PathBuf>) -> Result<Registry> {
    let base = Registry::bundled();
    let Some(path) = user else { return Ok(base) };
    let text = read_text(path)?;
    let name = path.display().to_string();
    let over = Registry::parse(&name, &text)
        .map_err(|e| anyhow::anyhow!("invalid registry:\n{}", errors_text(&e)))?;
    Ok(base.layered(over))
}

fn verifiers(b: &BotEntry) -> String {
    let mut v = Vec::new();
    match &b.fcrdns_hosts {
        Some(h) if h.is_empty() => v.push("fcrdns(any)".to_owned()),
        Some(h) => v.push(format!("fcrdns({})", h.join(","))),
        None => {}
    }
    let n = b.ip_list.len() + b.ip_ranges.len() + b.cidr_list.len();
    if n > 0 {
        v.push(format!("ips({n})"));
    }
    if v.is_empty() {
        "-".to_owned()
    } else {
        v.join(" ")
    }
}

fn entry_json(b: &BotEntry) -> serde_json::Value {
    let mut v = serde_json::to_value(b).unwrap_or_default();
    if let Some(o) = v.as_object_mut() {
        o.insert("verifiers".into(), json!(verifiers(b)));
    }
    v
}

/// `bots list`.
pub fn list(a: &BotsListArgs) -> Result<Outcome> {
    let r = load_registry(a.registry.as_ref())?;
    let mut out = BufWriter::new(io::stdout().lock());
    for b in r.bots() {
        if let Some(c) = &a.category
            && b.category.map(|x| x.as_str()) != Some(c.as_str())
        {
            continue;
        }
        match a.format {
            Format::Text => writeln!(
                out,
                "{:<32} {:<14} {:<22} {}",
                b.name,
                b.category.map_or("-", |c| c.as_str()),
                b.operator
                    .as_deref()
                    .unwrap_or("-")
                    .chars()
                    .take(22)
                    .collect::<String>(),
                verifiers(b)
            )?,
            Format::Json => writeln!(out, "{}", entry_json(b))?,
        }
    }
    out.flush()?;
    Ok(Outcome::Ok)
}

/// `bots show NAME`.
pub fn show(a: &BotsShowArgs) -> Result<Outcome> {
    let r = load_registry(a.registry.as_ref())?;
    let b = r.get(&a.name).with_context(|| {
        format!(
            "no bot named `{}` in the registry (see `botscope bots list`)",
            a.name
        )
    })?;
    let mut out = BufWriter::new(io::stdout().lock());
    match a.format {
        Format::Json => writeln!(out, "{}", serde_json::to_string_pretty(&entry_json(b))?)?,
        Format::Text => {
            writeln!(out, "name: {}", b.name)?;
            let opt = |o: &Option<String>| o.clone().unwrap_or_else(|| "-".into());
            writeln!(out, "operator: {}", opt(&b.operator))?;
            writeln!(out, "category: {}", b.category.map_or("-", |c| c.as_str()))?;
            writeln!(out, "url: {}", opt(&b.url))?;
            writeln!(
                out,
                "respects robots.txt: {}",
                b.respects_robots_txt
                    .map_or("unknown".into(), |x| x.to_string())
            )?;
            writeln!(out, "user-agent tokens: {}", b.tokens().join(", "))?;
            match &b.fcrdns_hosts {
                None => writeln!(out, "fcrdns: not used")?,
                Some(h) if h.is_empty() => writeln!(out, "fcrdns: required, any domain")?,
                Some(h) => writeln!(out, "fcrdns: required, domains {}", h.join(", "))?,
            }
            let ranges: Vec<String> = b
                .ranges()
                .map(|r| {
                    serde_json::to_value(r)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_owned))
                        .unwrap_or_default()
                })
                .collect();
            writeln!(out, "published addresses: {}", ranges.len())?;
            for r in ranges.iter().take(a.limit) {
                writeln!(out, "  {r}")?;
            }
            if ranges.len() > a.limit {
                writeln!(out, "  … {} more (--limit)", ranges.len() - a.limit)?;
            }
            for s in &b.ip_sources {
                writeln!(out, "published at: {s}")?;
            }
            writeln!(out, "defined in: {}:{}", b.source, b.line)?;
        }
    }
    out.flush()?;
    Ok(Outcome::Ok)
}

/// `bots validate FILE`: exit 0 valid, 1 invalid, 2 unreadable.
pub fn validate(a: &BotsValidateArgs) -> Result<Outcome> {
    let text = read_text(&a.file)?;
    let name = if a.file == Path::new("-") {
        "<stdin>".to_owned()
    } else {
        a.file.display().to_string()
    };
    let mut out = BufWriter::new(io::stdout().lock());
    let outcome = match Registry::parse(&name, &text) {
        Ok(r) => {
            let without: Vec<&str> = r
                .bots()
                .iter()
                .filter(|b| b.fcrdns_hosts.is_none() && !b.has_ip_verifier())
                .map(|b| b.name.as_str())
                .collect();
            match a.format {
                Format::Text => {
                    writeln!(out, "{name}: valid, {} bot(s)", r.bots().len())?;
                    if !without.is_empty() {
                        writeln!(
                            out,
                            "note: {} bot(s) have no verifier and can only be claimed, never verified: {}",
                            without.len(),
                            without.join(", ")
                        )?;
                    }
                }
                Format::Json => writeln!(
                    out,
                    "{}",
                    json!({ "file": name, "valid": true, "bots": r.bots().len(), "unverifiable_bots": without, "errors": [] })
                )?,
            }
            Outcome::Ok
        }
        Err(errors) => {
            match a.format {
                Format::Text => {
                    for e in &errors {
                        writeln!(out, "{e}")?;
                    }
                    writeln!(out, "{name}: invalid, {} error(s)", errors.len())?;
                }
                Format::Json => {
                    let list: Vec<_> = errors.iter().map(|e| json!({ "file": e.file, "line": e.line, "bot": e.bot, "message": e.message })).collect();
                    writeln!(
                        out,
                        "{}",
                        json!({ "file": name, "valid": false, "errors": list })
                    )?;
                }
            }
            Outcome::Negative
        }
    };
    out.flush()?;
    Ok(outcome)
}
