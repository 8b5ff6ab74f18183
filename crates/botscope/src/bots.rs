//! `botscope bots …`: the crawler registry.

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use botscope_botid::{Registry, Update};

use crate::cli::{BotsListArgs, BotsShowArgs, BotsUpdateArgs, BotsValidateArgs, Format};
use crate::exit::ExitStatus;
use crate::settings::{Settings, parse_registry, registry_text};

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
    let bot = match &a.bot {
        Some(name) => Some(
            current
                .find(name)
                .cloned()
                .with_context(|| format!("no bot named `{name}` in the registry"))?,
        ),
        None => None,
    };
    let entries = existing.map(|r| r.bots().to_vec()).unwrap_or_default();
    let mut update = Update::new(&current, entries, out_path.display().to_string(), a.force);
    for f in list_files(&a.from)? {
        let (bytes, total) = crate::io::read_limited(&f, Some(botscope_botid::MAX_LIST_BYTES))?;
        anyhow::ensure!(
            total as usize <= botscope_botid::MAX_LIST_BYTES,
            "{} is over {}",
            f.display(),
            botscope_text::size(botscope_botid::MAX_LIST_BYTES as u64)
        );
        let name = f.display().to_string();
        update.apply(&name, &String::from_utf8_lossy(&bytes), bot.as_ref());
    }
    let mut out = BufWriter::new(io::stdout().lock());
    out.write_all(update.report.as_bytes())?;
    out.flush()?;
    if !update.refusals.is_empty() {
        for r in &update.refusals {
            eprintln!("botscope: error: {r}");
        }
        eprintln!("botscope: nothing was written");
        return Ok(ExitStatus::Error);
    }
    let unattributed = update.unattributed;
    let text = update.finish().map_err(|e| {
        anyhow::anyhow!(
            "internal: the updated registry does not read back:\n{}",
            botscope_botid::errors_text(&e)
        )
    })?;
    let header = "# botscope user registry, written by `botscope bots update`; layered over the bundled one.\n";
    botscope_os::write_atomic(&out_path, format!("{header}{text}").as_bytes())?;
    writeln!(out, "wrote {}", out_path.display())?;
    out.flush()?;
    Ok(if unattributed > 0 {
        ExitStatus::Negative
    } else {
        ExitStatus::Success
    })
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
            Format::Text => writeln!(out, "{}", b.list_line())?,
            Format::Json => writeln!(out, "{}", b.to_json())?,
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
        Format::Json => writeln!(out, "{}", serde_json::to_string_pretty(&b.to_json())?)?,
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
    let result = Registry::parse(&name, &text);
    let report = botscope_botid::validation_report(&name, &result, a.format == Format::Json);
    let mut out = BufWriter::new(io::stdout().lock());
    out.write_all(report.as_bytes())?;
    out.flush()?;
    Ok(match result {
        Ok(_) => ExitStatus::Success,
        Err(_) => ExitStatus::Negative,
    })
}
