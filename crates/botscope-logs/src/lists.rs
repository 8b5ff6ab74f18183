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

/// Writes a file through an exclusive temporary sibling renamed over it
/// (creating the directory when needed). The file is readable by all
/// (`0644`), as the web server that reads a list runs as another user.
pub fn write_atomic(path: &Path, content: &[u8]) -> Result<(), Error> {
    Ok(botscope_os::write_atomic(path, content)?)
}

/// The file inside each generation that marks it as botscope's own: only
/// directories holding it are ever deleted.
pub const GENERATION_MARK: &str = ".botscope-generation";

/// `out` without trailing separators or `.` parts, so that `DIR/` is `DIR`
/// itself and never the directory a symlink `DIR` points at.
fn clean_path(out: &Path) -> Result<PathBuf, Error> {
    let p: PathBuf = out.components().collect();
    match p.file_name() {
        Some(_) => Ok(p),
        None => Err(Error::NotOurs { path: p }),
    }
}

/// True when `name` is a generation's name (`<nanos>-<pid>`).
fn generation_name(name: &str) -> bool {
    name.split_once('-').is_some_and(|(a, b)| {
        !a.is_empty()
            && !b.is_empty()
            && a.bytes().all(|c| c.is_ascii_digit())
            && b.bytes().all(|c| c.is_ascii_digit())
    })
}

/// What may be at `out`: nothing, or botscope's own symlink into
/// `gens` (relative, `<gens-name>/<generation>`, to a real directory).
#[cfg(unix)]
fn check_out(out: &Path, gens: &Path) -> Result<(), Error> {
    let not_ours = || Error::NotOurs {
        path: out.to_path_buf(),
    };
    let meta = match std::fs::symlink_metadata(out) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io_err(out)(e)),
        Ok(m) => m,
    };
    if !meta.file_type().is_symlink() {
        return Err(not_ours());
    }
    let target = std::fs::read_link(out).map_err(io_err(out))?;
    let mut parts = target.components();
    let ours = match (parts.next(), parts.next(), parts.next()) {
        (Some(std::path::Component::Normal(g)), Some(std::path::Component::Normal(n)), None) => {
            Some(g) == gens.file_name()
                && n.to_str().is_some_and(generation_name)
                && std::fs::symlink_metadata(gens.join(n)).is_ok_and(|m| m.is_dir())
        }
        _ => false,
    };
    if ours { Ok(()) } else { Err(not_ours()) }
}

/// The apache-dirs layout: one empty file per address under
/// `all-ok-bots/`, `<bot>/`, `other-bots/`, `undeclared-bots/` and
/// `suspect-bots/`. The tree
/// is built as a new generation in `OUT.generations/` (marked with
/// [`GENERATION_MARK`]), then the symlink `out` is pointed at it in one
/// rename; older marked generations are removed.
///
/// Checked before anything is written: `out` must be absent or botscope's
/// own generation symlink, and `OUT.generations` absent or a real
/// directory (never followed through a symlink). A refused `out` is left
/// exactly as it was, and a generation that fails half-way is removed.
#[cfg(unix)]
pub fn write_dirs(out: &Path, lists: &Lists) -> Result<(), Error> {
    let out = clean_path(out)?;
    let out = out.as_path();
    let gens = sibling(out, ".generations");
    check_out(out, &gens)?;
    match std::fs::symlink_metadata(&gens) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(&gens).map_err(io_err(&gens))?;
        }
        Err(e) => return Err(io_err(&gens)(e)),
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Err(Error::NotOurs { path: gens }),
    }
    let stamp = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let gen_name = format!("{stamp}-{}", std::process::id());
    let gen_dir = gens.join(&gen_name);
    std::fs::create_dir(&gen_dir).map_err(io_err(&gen_dir))?;
    let built = (|| {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(gen_dir.join(GENERATION_MARK))
            .and_then(|mut f| f.write_all(b"botscope apache-dirs generation\n"))
            .map_err(io_err(&gen_dir))?;
        for cat in botscope_botid::CATEGORIES {
            std::fs::create_dir_all(gen_dir.join(cat)).map_err(io_err(&gen_dir))?;
        }
        for (cat, ip) in lists.entries() {
            let dir = gen_dir.join(&cat);
            std::fs::create_dir_all(&dir).map_err(io_err(&dir))?;
            // Created new in a directory made for this generation; an
            // address listed twice is one file.
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(dir.join(ip.to_string()))
            {
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(io_err(&dir)(e)),
            }
        }
        let link = sibling(out, &format!(".link-{}", std::process::id()));
        let _ = std::fs::remove_file(&link);
        // Relative to the link's own directory, so the tree can be moved.
        let target = Path::new(gens.file_name().unwrap_or_default()).join(&gen_name);
        std::os::unix::fs::symlink(&target, &link).map_err(io_err(&link))?;
        std::fs::rename(&link, out).map_err(|e| {
            let _ = std::fs::remove_file(&link);
            io_err(out)(e)
        })
    })();
    if let Err(e) = built {
        let _ = std::fs::remove_dir_all(&gen_dir);
        return Err(e);
    }
    for entry in std::fs::read_dir(&gens).map_err(io_err(&gens))? {
        let p = entry.map_err(io_err(&gens))?.path();
        let ours = std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_dir())
            && std::fs::symlink_metadata(p.join(GENERATION_MARK)).is_ok_and(|m| m.is_file());
        if p != gen_dir && ours {
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
    botscope_os::ensure_dir(dir).map_err(io_err(dir))?;
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

    /// `--out` for plain lists onto a link to a file, a dangling link or a
    /// file: refused in words, the link and its target untouched.
    #[cfg(unix)]
    #[test]
    fn plain_lists_refuse_what_is_not_a_directory() {
        let d = botscope_testkit::tempdir();
        let target = d.path().join("target.txt");
        std::fs::write(&target, b"keep\n").expect("write");
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&target, &link).expect("link");
        let dangling = d.path().join("dangling");
        std::os::unix::fs::symlink(d.path().join("nowhere"), &dangling).expect("link");
        let lists = Lists::default();
        for (p, want) in [
            (&link, "which is not a directory"),
            (&dangling, "which does not exist"),
            (&target, "it is a file"),
        ] {
            let e = write_plain(p, &lists).expect_err("refused");
            let e = format!(
                "{e}: {}",
                std::error::Error::source(&e).map_or(String::new(), ToString::to_string)
            );
            assert!(e.contains(want) && e.contains("give a directory"), "{e}");
            assert!(!e.contains("os error"), "{e}");
        }
        assert_eq!(std::fs::read(&target).expect("read"), b"keep\n");
        assert!(std::fs::symlink_metadata(&dangling).is_ok_and(|m| m.file_type().is_symlink()));
        assert!(!d.path().join("nowhere").exists());
        // A link to a directory is followed, as a user who keeps lists
        // elsewhere expects.
        let real = d.path().join("real");
        std::fs::create_dir(&real).expect("dir");
        let to_dir = d.path().join("to-dir");
        std::os::unix::fs::symlink(&real, &to_dir).expect("link");
        write_plain(&to_dir, &lists).expect("written");
        assert!(std::fs::read_dir(&real).expect("dir").next().is_some());
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

    /// A real directory at `--out` (with or without a trailing slash), a
    /// symlink elsewhere, or a `DIR.generations` symlink: refused, nothing
    /// touched, nothing created.
    #[cfg(unix)]
    #[test]
    fn dirs_never_touch_what_botscope_did_not_make() {
        let d = botscope_testkit::tempdir();
        let mut lists = Lists::default();
        lists.suspect.insert("192.0.2.1".parse().expect("ip"));
        let out = d.path().join("mine");
        std::fs::create_dir_all(out.join("sub")).expect("dir");
        std::fs::write(out.join("notes.txt"), b"notes").expect("write");
        std::fs::write(out.join("sub/keep.conf"), b"keep").expect("write");
        let listing = || {
            let mut v: Vec<String> = walk(d.path());
            v.sort();
            v
        };
        let before = listing();
        for arg in [out.clone(), d.path().join("mine/"), d.path().join("mine/.")] {
            let e = write_dirs(&arg, &lists).expect_err("a real directory");
            assert!(matches!(e, Error::NotOurs { .. }), "{e}");
            assert_eq!(listing(), before, "{}", arg.display());
        }
        // A symlink to some other directory.
        let link = d.path().join("elsewhere");
        std::os::unix::fs::symlink(&out, &link).expect("symlink");
        assert!(write_dirs(&link, &lists).is_err());
        assert!(write_dirs(&d.path().join("elsewhere/"), &lists).is_err());
        // A planted `X.generations` symlink is never followed.
        let x = d.path().join("x");
        std::os::unix::fs::symlink(&out, d.path().join("x.generations")).expect("symlink");
        assert!(write_dirs(&x, &lists).is_err());
        assert!(!x.exists());
        assert_eq!(
            std::fs::read(out.join("sub/keep.conf")).expect("kept"),
            b"keep"
        );
        assert_eq!(
            std::fs::read(out.join("notes.txt")).expect("kept"),
            b"notes"
        );
        // Only marked generations are removed: a user's folder in the
        // generations directory stays.
        let ok = d.path().join("ok");
        write_dirs(&ok, &lists).expect("first");
        std::fs::create_dir(d.path().join("ok.generations/user-folder")).expect("dir");
        write_dirs(&d.path().join("ok/"), &lists).expect("second, with a slash");
        assert!(d.path().join("ok.generations/user-folder").is_dir());
        assert!(ok.join("suspect-bots/192.0.2.1").is_file());
    }

    /// A bot whose directory cannot be made leaves no half-built generation
    /// and the old lists in place.
    #[cfg(unix)]
    #[test]
    fn a_failed_generation_leaves_the_old_one() {
        let d = botscope_testkit::tempdir();
        let out = d.path().join("crawlers");
        let mut lists = Lists::default();
        lists.suspect.insert("192.0.2.1".parse().expect("ip"));
        write_dirs(&out, &lists).expect("first");
        lists
            .per_bot
            .entry("x".repeat(300))
            .or_default()
            .insert("192.0.2.9".parse().expect("ip"));
        assert!(
            write_dirs(&out, &lists).is_err(),
            "a 300-byte directory name"
        );
        assert!(out.join("suspect-bots/192.0.2.1").is_file(), "old lists");
        assert_eq!(
            std::fs::read_dir(d.path().join("crawlers.generations"))
                .expect("gens")
                .count(),
            1
        );
    }

    fn walk(dir: &Path) -> Vec<String> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(dir).expect("dir").flatten() {
            let p = e.path();
            out.push(p.display().to_string());
            if std::fs::symlink_metadata(&p).is_ok_and(|m| m.is_dir()) {
                out.extend(walk(&p));
            }
        }
        out
    }
}
