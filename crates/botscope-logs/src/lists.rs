//! Writing the lists a web server consults per request. Every format is
//! replaced atomically: a reader sees the old lists or the new ones, never
//! a mix, and a failed write leaves the old ones in place.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use botscope_botid::Lists;

use crate::Error;

fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path
        .file_name()
        .map(std::ffi::OsString::from)
        .unwrap_or_default();
    name.push(suffix);
    path.with_file_name(name)
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Write {
        path: path.to_path_buf(),
        source,
    }
}

/// Writes a file through a temporary sibling renamed over it (creating
/// the directory when needed). The file is readable by all (`0644`), as
/// the web server that reads a list runs as another user.
pub fn write_atomic(path: &Path, content: &[u8]) -> Result<(), Error> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir).map_err(io_err(dir))?;
    let mut builder = tempfile::Builder::new();
    builder.prefix(".botscope-");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o644));
    }
    let mut tmp = builder.tempfile_in(dir).map_err(io_err(dir))?;
    tmp.write_all(content).map_err(io_err(path))?;
    tmp.as_file().sync_all().map_err(io_err(path))?;
    tmp.persist(path).map_err(|e| Error::Write {
        path: path.to_path_buf(),
        source: e.error,
    })?;
    Ok(())
}

/// The apache-dirs layout: one empty file per address under
/// `all-ok-bots/`, `<bot>/`, `other-bots/` and `suspect-bots/`. The tree
/// is built as a new generation beside `out`, then the symlink `out` is
/// pointed at it in one rename; older generations are removed. A real
/// directory at `out` (not made by botscope) is moved aside first.
#[cfg(unix)]
pub fn write_dirs(out: &Path, lists: &Lists) -> Result<(), Error> {
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
        std::fs::create_dir_all(gen_dir.join(cat)).map_err(io_err(&gen_dir))?;
    }
    for (cat, ip) in lists.entries() {
        let dir = gen_dir.join(&cat);
        std::fs::create_dir_all(&dir).map_err(io_err(&dir))?;
        std::fs::File::create(dir.join(ip.to_string())).map_err(io_err(&dir))?;
    }
    if let Ok(meta) = std::fs::symlink_metadata(out)
        && !meta.file_type().is_symlink()
    {
        if !meta.is_dir() {
            return Err(Error::NotOurs {
                path: out.to_path_buf(),
            });
        }
        std::fs::rename(out, gens.join(format!("previous-{stamp}"))).map_err(io_err(out))?;
    }
    let link = sibling(out, &format!(".link-{}", std::process::id()));
    let _ = std::fs::remove_file(&link);
    // Relative to the link's own directory, so the tree can be moved.
    let target = Path::new(gens.file_name().unwrap_or_default()).join(&gen_name);
    std::os::unix::fs::symlink(&target, &link).map_err(io_err(&link))?;
    std::fs::rename(&link, out).map_err(io_err(out))?;
    for entry in std::fs::read_dir(&gens).map_err(io_err(&gens))? {
        let p = entry.map_err(io_err(&gens))?.path();
        if p != gen_dir {
            let _ = std::fs::remove_dir_all(&p);
        }
    }
    Ok(())
}

/// The apache-dirs layout needs symbolic links.
#[cfg(not(unix))]
pub fn write_dirs(_out: &Path, _lists: &Lists) -> Result<(), Error> {
    Err(Error::Unsupported(
        "apache-dirs needs symbolic links (Unix)",
    ))
}

/// One address per line, one file per list, in `dir`.
pub fn write_plain(dir: &Path, lists: &Lists) -> Result<(), Error> {
    std::fs::create_dir_all(dir).map_err(io_err(dir))?;
    for (name, content) in lists.plain() {
        write_atomic(&dir.join(name), content.as_bytes())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_and_leaves_no_temporary() {
        let d = botscope_testkit::tempdir();
        let p = d.path().join("sub/map.txt");
        write_atomic(&p, b"one\n").expect("write");
        write_atomic(&p, b"two\n").expect("write");
        assert_eq!(std::fs::read(&p).expect("read"), b"two\n");
        let names: Vec<_> = std::fs::read_dir(d.path().join("sub"))
            .expect("dir")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names, ["map.txt"]);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&p).expect("meta").permissions().mode();
            assert_eq!(mode & 0o777, 0o644, "readable by the web server");
        }
    }

    #[cfg(unix)]
    #[test]
    fn dirs_swap_generations() {
        let d = botscope_testkit::tempdir();
        let out = d.path().join("crawlers");
        let mut lists = Lists::default();
        lists.suspect.insert("192.0.2.1".parse().expect("ip"));
        write_dirs(&out, &lists).expect("first");
        assert!(out.join("suspect-bots/192.0.2.1").is_file());
        lists.suspect.clear();
        lists.other.insert("192.0.2.2".parse().expect("ip"));
        write_dirs(&out, &lists).expect("second");
        assert!(!out.join("suspect-bots/192.0.2.1").exists());
        assert!(out.join("other-bots/192.0.2.2").is_file());
        let gens = std::fs::read_dir(d.path().join("crawlers.generations"))
            .expect("gens")
            .count();
        assert_eq!(gens, 1, "older generations are removed");
    }
}
