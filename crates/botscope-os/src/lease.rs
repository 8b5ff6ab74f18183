//! Working directories that outlive no one: a directory a process makes
//! for itself (the web server's demo) holds a lock on a file inside for
//! as long as the process lives. A process killed before it could remove
//! its directory leaves it unlocked, and the next one to make a directory
//! of that kind removes it.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// The file inside a leased directory whose lock says its owner lives.
const OWNER: &str = ".owner";

/// A directory left unlocked is removed once it has not changed for this
/// long: one just made may not hold its lock yet.
const SETTLED: Duration = Duration::from_secs(60);

/// A directory from before leases (no owner file) is removed once it has
/// not changed for this long.
const UNLEASED: Duration = Duration::from_secs(24 * 3600);

/// A new directory of this process, removed when dropped (or, should the
/// process be killed first, by the next [`LeasedDir::new_in`] of the same
/// prefix).
///
/// ```
/// let parent = tempfile::tempdir()?;
/// let a = botscope_os::LeasedDir::new_in(parent.path(), "demo-")?;
/// // Held: another directory of the same kind leaves it alone.
/// let b = botscope_os::LeasedDir::new_in(parent.path(), "demo-")?;
/// assert!(a.path().is_dir() && b.path().is_dir());
/// let gone = a.path().to_path_buf();
/// drop(a);
/// assert!(!gone.exists());
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug)]
pub struct LeasedDir {
    // The lock goes before the directory is removed.
    _owner: File,
    dir: tempfile::TempDir,
}

impl LeasedDir {
    /// A new directory `prefix…` in the system's temporary directory.
    pub fn new(prefix: &str) -> io::Result<LeasedDir> {
        LeasedDir::new_in(&std::env::temp_dir(), prefix)
    }

    /// A new directory `prefix…` in `parent`, after removing the ones of
    /// that prefix whose owners are gone: their owner file unlocked and
    /// nothing changed in them for a minute, or, from before leases, no
    /// owner file and nothing changed for a day.
    pub fn new_in(parent: &Path, prefix: &str) -> io::Result<LeasedDir> {
        sweep(parent, prefix);
        let dir = tempfile::Builder::new().prefix(prefix).tempdir_in(parent)?;
        let owner = File::options()
            .write(true)
            .create_new(true)
            .open(dir.path().join(OWNER))?;
        owner.try_lock().map_err(|e| match e {
            std::fs::TryLockError::Error(e) => e,
            std::fs::TryLockError::WouldBlock => {
                io::Error::new(io::ErrorKind::WouldBlock, "a new directory's lock is held")
            }
        })?;
        Ok(LeasedDir { _owner: owner, dir })
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// Removes the directories `prefix…` in `parent` that no live process
/// holds: their owner file unlocked and nothing changed in them for a
/// minute, or, from before leases, no owner file and nothing changed for
/// a day. Symbolic links and what cannot be removed are left alone.
/// Returns the directories removed.
fn sweep(parent: &Path, prefix: &str) -> Vec<PathBuf> {
    let mut removed = Vec::new();
    let Ok(entries) = std::fs::read_dir(parent) else {
        return removed;
    };
    let now = SystemTime::now();
    let age = |m: &std::fs::Metadata| {
        m.modified()
            .ok()
            .and_then(|t| now.duration_since(t).ok())
            .unwrap_or_default()
    };
    for e in entries.flatten() {
        if !e.file_name().to_string_lossy().starts_with(prefix) {
            continue;
        }
        let path = e.path();
        // Not followed: a link planted under the prefix is not ours.
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if !meta.is_dir() {
            continue;
        }
        let gone = match File::open(path.join(OWNER)) {
            // Locked while its owner removes it, so that no new owner
            // takes it meanwhile.
            Ok(owner) => {
                if age(&meta) >= SETTLED && owner.try_lock().is_ok() {
                    let r = std::fs::remove_dir_all(&path);
                    drop(owner);
                    r.is_ok()
                } else {
                    false
                }
            }
            Err(err) if err.kind() == io::ErrorKind::NotFound && age(&meta) >= UNLEASED => {
                std::fs::remove_dir_all(&path).is_ok()
            }
            Err(_) => false,
        };
        if gone {
            removed.push(path);
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn aged(path: &Path, by: Duration) {
        let t = SystemTime::now() - by;
        File::open(path)
            .and_then(|f| f.set_modified(t))
            .expect("set mtime");
    }

    #[test]
    fn a_dead_owners_directory_goes_and_a_live_ones_stays() {
        let parent = tempfile::tempdir().expect("tmp");
        let live = LeasedDir::new_in(parent.path(), "demo-").expect("live");
        // A directory whose owner was killed: the owner file, unlocked.
        let dead = parent.path().join("demo-dead");
        std::fs::create_dir(&dead).expect("dir");
        std::fs::write(dead.join(OWNER), b"").expect("owner");
        std::fs::write(dead.join("store.db"), b"x").expect("file");
        // One from before leases, old and recent.
        let (old, recent) = (
            parent.path().join("demo-old"),
            parent.path().join("demo-new"),
        );
        for d in [&old, &recent] {
            std::fs::create_dir(d).expect("dir");
        }
        // Another prefix, and a link under ours.
        let other = parent.path().join("other-dead");
        std::fs::create_dir(&other).expect("dir");
        std::fs::write(other.join(OWNER), b"").expect("owner");
        #[cfg(unix)]
        std::os::unix::fs::symlink(&other, parent.path().join("demo-link")).expect("link");

        // Just made, even unlocked: not yet.
        assert!(sweep(parent.path(), "demo-").is_empty());
        for d in [live.path(), &dead, &other] {
            aged(d, 2 * SETTLED);
        }
        aged(&old, 2 * UNLEASED);
        aged(&recent, UNLEASED / 2);
        let mut removed = sweep(parent.path(), "demo-");
        removed.sort();
        assert_eq!(removed, [dead.clone(), old.clone()]);
        assert!(live.path().join(OWNER).is_file(), "the live one stays");
        assert!(recent.is_dir() && other.is_dir());
        #[cfg(unix)]
        assert!(parent.path().join("demo-link").symlink_metadata().is_ok());

        // Its owner gone (dropped), a live directory is removed at once.
        let path = live.path().to_path_buf();
        drop(live);
        assert!(!path.exists());
    }

    #[test]
    fn a_new_directory_sweeps_before_it_is_made() {
        let parent = tempfile::tempdir().expect("tmp");
        let dead = parent.path().join("demo-dead");
        std::fs::create_dir(&dead).expect("dir");
        std::fs::write(dead.join(OWNER), b"").expect("owner");
        aged(&dead, 2 * SETTLED);
        let d = LeasedDir::new_in(parent.path(), "demo-").expect("new");
        assert!(!dead.exists());
        assert!(d.path().starts_with(parent.path()));
    }
}
