//! `botscope bots …`: the crawler registry.

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use botscope_botid::{BotEntry, IpRange, Registry, publishers_of};
use serde_json::json;

use crate::cli::{BotsListArgs, BotsShowArgs, BotsUpdateArgs, BotsValidateArgs, Format};
use crate::exit::ExitStatus;
use crate::settings::{Settings, errors_text, parse_registry, registry_text};

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

/// `bots update --from FILE|DIR`.
pub fn update(a: &BotsUpdateArgs, settings: &Settings) -> Result<ExitStatus> {
    let out_path = match &a.out {
        Some(p) => p.clone(),
        None => settings
            .user_registry
            .clone()
            .context("no HOME or XDG_CONFIG_HOME: give --out")?,
    };
    let existing = if out_path.is_file() {
        Some(parse_registry(&out_path)?)
    } else {
        None
    };
    let current = match &existing {
        Some(user) => Registry::bundled().layered(user.clone()),
        None => Registry::bundled(),
    };
    let mut updated: Vec<BotEntry> = existing.map(|r| r.bots().to_vec()).unwrap_or_default();
    let mut failures = 0usize;
    let mut refusals: Vec<String> = Vec::new();
    let mut out = BufWriter::new(io::stdout().lock());
    for f in list_files(&a.from)? {
        let targets: Vec<BotEntry> = match &a.bot {
            Some(name) => vec![
                current
                    .get(name)
                    .cloned()
                    .with_context(|| format!("no bot named `{name}` in the registry"))?,
            ],
            None => {
                let name = f
                    .file_name()
                    .map(|n| n.to_string_lossy())
                    .unwrap_or_default();
                publishers_of(&current, &name)
                    .into_iter()
                    .cloned()
                    .collect()
            }
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
        let (bytes, total) = crate::io::read_limited(&f, Some(botscope_botid::MAX_LIST_BYTES))?;
        anyhow::ensure!(
            total as usize <= botscope_botid::MAX_LIST_BYTES,
            "{} is over {} bytes",
            f.display(),
            botscope_botid::MAX_LIST_BYTES
        );
        let got = botscope_botid::import_list(&String::from_utf8_lossy(&bytes));
        if got.address_lines == 0 {
            // Junk, a binary file, the wrong file: refuse the whole update.
            refusals.push(format!(
                "{}: no line is an address ({} item(s) that are not); is this the list?",
                f.display(),
                got.skipped.len()
            ));
            continue;
        }
        for mut t in targets {
            let old: Vec<IpRange> = t.ranges().collect();
            t.set_ranges(got.ranges.clone());
            let new: Vec<IpRange> = t.ranges().collect();
            let change = botscope_botid::Change::between(&old, &new);
            writeln!(
                out,
                "{} -> {}: {} address item(s), {} added, {} removed",
                f.display(),
                t.name,
                new.len(),
                change.added.len(),
                change.removed.len()
            )?;
            for (sign, items) in [("+", &change.added), ("-", &change.removed)] {
                for r in items.iter().take(5) {
                    writeln!(out, "  {sign} {}", r.written())?;
                }
                if items.len() > 5 {
                    writeln!(out, "  {sign} … {} more", items.len() - 5)?;
                }
            }
            if change.shrinks_by_half(old.len()) && !a.force {
                refusals.push(format!(
                    "{}: would remove {} of {}'s {} address item(s), more than half; \
                     give --force if the operator really shrank its list",
                    f.display(),
                    change.removed.len(),
                    t.name,
                    old.len()
                ));
                continue;
            }
            t.source = out_path.display().to_string();
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
    if !refusals.is_empty() {
        out.flush()?;
        for r in &refusals {
            eprintln!("botscope: error: {r}");
        }
        eprintln!("botscope: nothing was written");
        return Ok(ExitStatus::Error);
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
        ExitStatus::Negative
    } else {
        ExitStatus::Success
    })
}

fn entry_json(b: &BotEntry) -> serde_json::Value {
    let mut v = serde_json::to_value(b).unwrap_or_default();
    if let Some(o) = v.as_object_mut() {
        o.insert("verifiers".into(), json!(b.verifiers_summary()));
    }
    v
}

/// `bots list`.
pub fn list(a: &BotsListArgs, settings: &Settings) -> Result<ExitStatus> {
    let r = settings.registry(a.registry.as_ref())?;
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
                b.verifiers_summary()
            )?,
            Format::Json => writeln!(out, "{}", entry_json(b))?,
        }
    }
    out.flush()?;
    Ok(ExitStatus::Success)
}

/// `bots show NAME`.
pub fn show(a: &BotsShowArgs, settings: &Settings) -> Result<ExitStatus> {
    let r = settings.registry(a.registry.as_ref())?;
    let b = r.find(&a.name).with_context(|| {
        format!(
            "no bot named `{}` in the registry, by name or User-Agent token (see `botscope bots list`)",
            a.name
        )
    })?;
    let mut out = BufWriter::new(io::stdout().lock());
    match a.format {
        Format::Json => writeln!(out, "{}", serde_json::to_string_pretty(&entry_json(b))?)?,
        Format::Text => out.write_all(b.describe(a.limit).as_bytes())?,
    }
    out.flush()?;
    Ok(ExitStatus::Success)
}

/// `bots validate FILE`: exit 0 valid, 1 invalid, 2 unreadable.
pub fn validate(a: &BotsValidateArgs) -> Result<ExitStatus> {
    let text = registry_text(&a.file)?;
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
            ExitStatus::Success
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
            ExitStatus::Negative
        }
    };
    out.flush()?;
    Ok(outcome)
}
