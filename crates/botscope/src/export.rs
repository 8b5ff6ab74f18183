//! `botscope bots export`: verdicts to the lists a web server reads per
//! request. Every format is replaced atomically: a reader sees the old
//! lists or the new ones, never a mix.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};
use botscope_botid::{Lists, Verification};

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

fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path
        .file_name()
        .map(std::ffi::OsString::from)
        .unwrap_or_default();
    name.push(suffix);
    path.with_file_name(name)
}

/// Writes a file by writing a temporary sibling and renaming it over.
pub fn write_atomic(path: &Path, content: &str) -> Result<()> {
    if let Some(dir) = path.parent()
        && !dir.as_os_str().is_empty()
    {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("failed to create {}", dir.display()))?;
    }
    let tmp = sibling(path, &format!(".tmp-{}", std::process::id()));
    std::fs::write(&tmp, content).with_context(|| format!("failed to write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("failed to replace {}", path.display()))
}

/// Builds the directory tree in a new generation beside `out`, then points
/// the symlink `out` at it in one rename; older generations are removed.
#[cfg(unix)]
pub fn write_dirs(out: &Path, lists: &Lists) -> Result<()> {
    let gens = sibling(out, ".generations");
    let stamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let gen_name = format!("{stamp}-{}", std::process::id());
    let gen_dir = gens.join(&gen_name);
    for cat in [
        botscope_botid::ALL_OK,
        botscope_botid::OTHER,
        botscope_botid::SUSPECT,
    ] {
        std::fs::create_dir_all(gen_dir.join(cat))
            .with_context(|| format!("failed to create {}", gen_dir.display()))?;
    }
    for (cat, ip) in lists.entries() {
        let dir = gen_dir.join(&cat);
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("failed to create {}", dir.display()))?;
        std::fs::File::create(dir.join(ip.to_string()))
            .with_context(|| format!("failed to write in {}", dir.display()))?;
    }
    // A real directory where the link goes (not made by botscope): move it
    // into the generations so the link can take its place.
    if let Ok(meta) = std::fs::symlink_metadata(out)
        && !meta.file_type().is_symlink()
    {
        if !meta.is_dir() {
            bail!(
                "{} exists and is not a directory botscope made",
                out.display()
            );
        }
        std::fs::rename(out, gens.join(format!("previous-{stamp}")))
            .with_context(|| format!("failed to move {} aside", out.display()))?;
    }
    let link = sibling(out, &format!(".link-{}", std::process::id()));
    let _ = std::fs::remove_file(&link);
    // Relative to the link's own directory, so the tree can be moved.
    let target = Path::new(gens.file_name().unwrap_or_default()).join(&gen_name);
    std::os::unix::fs::symlink(&target, &link)
        .with_context(|| format!("failed to create {}", link.display()))?;
    std::fs::rename(&link, out).with_context(|| format!("failed to swap {} in", out.display()))?;
    for entry in
        std::fs::read_dir(&gens).with_context(|| format!("failed to read {}", gens.display()))?
    {
        let p = entry?.path();
        if p != gen_dir {
            let _ = std::fs::remove_dir_all(&p);
        }
    }
    Ok(())
}

#[cfg(not(unix))]
pub fn write_dirs(_out: &Path, _lists: &Lists) -> Result<()> {
    bail!("apache-dirs needs symbolic links (Unix)")
}

/// `bots export`.
pub fn run(a: &BotsExportArgs) -> Result<Outcome> {
    let (verdicts, skipped) = read_verdicts(&a.verdicts)?;
    let lists = Lists::from_verdicts(&verdicts);
    match a.format {
        ExportFormat::ApacheDirs => write_dirs(&a.out, &lists)?,
        ExportFormat::ApacheRewritemap => write_atomic(&a.out, &lists.rewritemap())?,
        ExportFormat::NginxGeo => {
            let registry = crate::bots::load_registry(a.registry.as_ref())?;
            write_atomic(&a.out, &lists.nginx_geo(&registry, &a.variable))?;
        }
        ExportFormat::Plain => {
            std::fs::create_dir_all(&a.out)
                .with_context(|| format!("failed to create {}", a.out.display()))?;
            for (name, content) in lists.plain() {
                write_atomic(&a.out.join(name), &content)?;
            }
        }
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
