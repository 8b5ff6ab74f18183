//! `botscope bots export`: verdicts to the lists a web server reads per
//! request. Every format is replaced atomically: a reader sees the old
//! lists or the new ones, never a mix.

use std::io::BufRead;
use std::path::Path;

use anyhow::{Context, Result};
use botscope_botid::{Lists, Verification};
use botscope_logs::lists::{write_atomic, write_dirs, write_plain};

use crate::cli::{BotsExportArgs, ExportFormat};
use crate::exit::Outcome;

/// Reads `verify --batch` output: one JSON verdict per line; error records
/// and unreadable lines are counted, not used.
fn read_verdicts(path: &Path) -> Result<(Vec<Verification>, usize)> {
    let input: Box<dyn BufRead> = if path == Path::new("-") {
        Box::new(std::io::stdin().lock())
    } else {
        Box::new(std::io::BufReader::new(
            std::fs::File::open(path)
                .with_context(|| format!("failed to open {}", path.display()))?,
        ))
    };
    let (mut out, mut skipped) = (Vec::new(), 0usize);
    for line in input.split(b'\n') {
        let line = line.with_context(|| format!("failed to read {}", path.display()))?;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<Verification>(&line) {
            Ok(v) => out.push(v),
            Err(_) => skipped += 1,
        }
    }
    Ok((out, skipped))
}

/// `bots export`.
pub fn run(a: &BotsExportArgs) -> Result<Outcome> {
    let (verdicts, skipped) = read_verdicts(&a.verdicts)?;
    let lists = Lists::from_verdicts(&verdicts);
    match a.format {
        ExportFormat::ApacheDirs => write_dirs(&a.out, &lists)?,
        ExportFormat::ApacheRewritemap => write_atomic(&a.out, lists.rewritemap().as_bytes())?,
        ExportFormat::NginxGeo => {
            let registry = crate::bots::load_registry(a.registry.as_ref())?;
            write_atomic(&a.out, lists.nginx_geo(&registry, &a.variable).as_bytes())?;
        }
        ExportFormat::Plain => write_plain(&a.out, &lists)?,
    }
    println!(
        "{}: {} verified ({} bots), {} other, {} suspect{}",
        a.out.display(),
        lists.all_ok.len(),
        lists.per_bot.len(),
        lists.other.len(),
        lists.suspect.len(),
        if skipped > 0 {
            format!("; {skipped} input line(s) were not verdicts and were skipped")
        } else {
            String::new()
        }
    );
    Ok(Outcome::Ok)
}
