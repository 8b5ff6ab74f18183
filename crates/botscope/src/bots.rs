//! `botscope bots …`: the crawler registry.

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use std::net::IpAddr;

use botscope_botid::{BotEntry, IpRange, MAX_REGISTRY_BYTES, Registry, RegistryError};
use serde_json::json;

use crate::cli::{BotsListArgs, BotsShowArgs, BotsUpdateArgs, BotsValidateArgs, Format};
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

/// The user registry `bots update` writes, layered over the bundled one
/// whenever it exists: `$XDG_CONFIG_HOME/botscope/registry.yaml`, else
/// `~/.config/botscope/registry.yaml`.
pub fn user_registry_path() -> Option<PathBuf> {
    std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))
        .map(|d| d.join("botscope").join("registry.yaml"))
}

fn parse_file(path: &Path) -> Result<Registry> {
    let text = read_text(path)?;
    Registry::parse(&path.display().to_string(), &text)
        .map_err(|e| anyhow::anyhow!("invalid registry:\n{}", errors_text(&e)))
}

/// The bundled registry, with the user registry (if any) and then the file
/// given with `--registry` layered over it.
pub fn load_registry(user: Option<&PathBuf>) -> Result<Registry> {
    let mut r = Registry::bundled();
    if let Some(p) = user_registry_path().filter(|p| p.is_file()) {
        r = r.layered(parse_file(&p)?);
    }
    if let Some(path) = user {
        r = r.layered(parse_file(path)?);
    }
    Ok(r)
}

fn stem(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    name.split('.').next().unwrap_or_default().to_owned()
}

/// The bots a published list belongs to, from its file name: the bots
/// that name it among their `ip_sources`, else the bot (or token) of that
/// name, else the bots of that operator.
fn bots_for_file<'a>(registry: &'a Registry, path: &Path) -> Vec<&'a BotEntry> {
    let file = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let s = stem(path);
    let by_source: Vec<&BotEntry> = registry
        .bots()
        .iter()
        .filter(|b| {
            b.ip_sources.iter().any(|u| {
                u.rsplit('/')
                    .next()
                    .is_some_and(|last| last.to_ascii_lowercase() == file)
            })
        })
        .collect();
    if !by_source.is_empty() {
        return by_source;
    }
    let by_name: Vec<&BotEntry> = registry
        .bots()
        .iter()
        .filter(|b| {
            b.name.to_ascii_lowercase() == s
                || b.ua_tokens.iter().any(|t| t.to_ascii_lowercase() == s)
        })
        .collect();
    if !by_name.is_empty() {
        return by_name;
    }
    registry
        .bots()
        .iter()
        .filter(|b| {
            b.operator
                .as_deref()
                .is_some_and(|o| o.to_ascii_lowercase() == s)
        })
        .collect()
}

/// Files of a directory (sorted), or the one file.
fn list_files(from: &Path) -> Result<Vec<PathBuf>> {
    if !from.is_dir() {
        return Ok(vec![from.to_path_buf()]);
    }
    let mut v: Vec<PathBuf> = std::fs::read_dir(from)
        .with_context(|| format!("failed to read {}", from.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.is_file()
                && !p
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        })
        .collect();
    v.sort();
    Ok(v)
}

/// Single addresses go to `ip_list`, exact CIDR blocks to `cidr_list`,
/// the rest to `ip_ranges`.
fn place(b: &mut BotEntry, ranges: Vec<IpRange>) {
    b.ip_list.clear();
    b.ip_ranges.clear();
    b.cidr_list.clear();
    for r in ranges {
        match r {
            IpRange::V4(x, y) if x == y => b.ip_list.push(IpAddr::V4(x.into())),
            IpRange::V6(x, y) if x == y => b.ip_list.push(IpAddr::V6(x.into())),
            r if r.to_cidrs().len() == 1 => b.cidr_list.push(r),
            r => b.ip_ranges.push(r),
        }
    }
    b.ip_list.sort_unstable();
    b.ip_list.dedup();
    b.cidr_list.sort_unstable();
    b.cidr_list.dedup();
    b.ip_ranges.sort_unstable();
    b.ip_ranges.dedup();
}

/// `bots update --from FILE|DIR`.
pub fn update(a: &BotsUpdateArgs) -> Result<Outcome> {
    let out_path = match &a.out {
        Some(p) => p.clone(),
        None => user_registry_path().context("no HOME or XDG_CONFIG_HOME: give --out")?,
    };
    let existing = if out_path.is_file() {
        Some(parse_file(&out_path)?)
    } else {
        None
    };
    let current = match &existing {
        Some(user) => Registry::bundled().layered(user.clone()),
        None => Registry::bundled(),
    };
    let mut updated: Vec<BotEntry> = existing.map(|r| r.bots().to_vec()).unwrap_or_default();
    let mut failures = 0usize;
    let mut out = BufWriter::new(io::stdout().lock());
    for f in list_files(&a.from)? {
        let targets: Vec<BotEntry> = match &a.bot {
            Some(name) => vec![
                current
                    .get(name)
                    .cloned()
                    .with_context(|| format!("no bot named `{name}` in the registry"))?,
            ],
            None => bots_for_file(&current, &f).into_iter().cloned().collect(),
        };
        if targets.is_empty() {
            writeln!(
                out,
                "{}: cannot tell which bot publishes this list; give --bot NAME",
                f.display()
            )?;
            failures += 1;
            continue;
        }
        let (bytes, total) = crate::robots::read_limited(&f, Some(botscope_botid::MAX_LIST_BYTES))?;
        anyhow::ensure!(
            total as usize <= botscope_botid::MAX_LIST_BYTES,
            "{} is over {} bytes",
            f.display(),
            botscope_botid::MAX_LIST_BYTES
        );
        let got = botscope_botid::import_list(&String::from_utf8_lossy(&bytes));
        if got.ranges.is_empty() {
            writeln!(out, "{}: no addresses found; nothing changed", f.display())?;
            failures += 1;
            continue;
        }
        for mut t in targets {
            place(&mut t, got.ranges.clone());
            t.source = out_path.display().to_string();
            writeln!(
                out,
                "{} -> {}: {} address item(s)",
                f.display(),
                t.name,
                got.ranges.len()
            )?;
            match updated
                .iter_mut()
                .find(|b| b.name.eq_ignore_ascii_case(&t.name))
            {
                Some(slot) => *slot = t,
                None => updated.push(t),
            }
        }
        for (line, text) in got.skipped.iter().take(5) {
            writeln!(out, "  skipped line {line}: {text:?} is not an address")?;
        }
        if got.skipped.len() > 5 {
            writeln!(out, "  … {} more skipped", got.skipped.len() - 5)?;
        }
    }
    let text = Registry::with_entries(updated).to_yaml();
    Registry::parse("the updated registry", &text).map_err(|e| {
        anyhow::anyhow!(
            "internal: the updated registry does not read back:\n{}",
            errors_text(&e)
        )
    })?;
    let header = "# botscope user registry, written by `botscope bots update`; layered over the bundled one.\n";
    botscope_logs::lists::write_atomic(&out_path, format!("{header}{text}").as_bytes())?;
    writeln!(out, "wrote {}", out_path.display())?;
    out.flush()?;
    Ok(if failures > 0 {
        Outcome::Negative
    } else {
        Outcome::Ok
    })
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
