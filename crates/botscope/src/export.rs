//! `botscope bots export`: verdicts to the lists a web server reads per
//! request. Every format is replaced atomically: a reader sees the old
//! lists or the new ones, never a mix.

use anyhow::{Context, Result};
use botscope_botid::{Lists, read_verdicts};
use botscope_logs::lists::{write_dirs, write_plain};
use botscope_os::write_atomic;

use crate::cli::{BotsExportArgs, ExportFormat};
use crate::exit::ExitStatus;
use crate::settings::Settings;

/// `bots export`.
pub fn run(a: &BotsExportArgs, settings: &Settings) -> Result<ExitStatus> {
    let (verdicts, skipped) = read_verdicts(crate::io::input(&a.verdicts)?)
        .with_context(|| format!("failed to read {}", crate::io::display(&a.verdicts)))?;
    // Input that holds no verdict at all (a wrong file) must not empty the
    // lists a web server reads.
    anyhow::ensure!(
        !verdicts.is_empty(),
        "{} holds no verdict ({skipped} line(s) that are not one; `botscope verify --batch` \
         writes them); the lists are left as they are",
        crate::io::display(&a.verdicts)
    );
    let lists = Lists::from_verdicts(&verdicts);
    match a.format {
        ExportFormat::ApacheDirs => write_dirs(&a.out, &lists)?,
        ExportFormat::ApacheRewritemap => write_atomic(&a.out, lists.rewritemap().as_bytes())?,
        ExportFormat::NginxGeo => {
            let registry = settings.registry(a.registry.as_ref())?;
            write_atomic(&a.out, lists.nginx_geo(&registry, &a.variable).as_bytes())?;
        }
        ExportFormat::Plain => write_plain(&a.out, &lists)?,
    }
    println!(
        "{}: {}{}",
        a.out.display(),
        lists.summary(),
        if skipped > 0 {
            format!("; {skipped} input line(s) were not verdicts and were skipped")
        } else {
            String::new()
        }
    );

    Ok(ExitStatus::Success)
}
