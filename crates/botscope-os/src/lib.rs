//! botscope's edge to the operating system: files and directories that
//! other people can touch, the clock, and the stop signals.
//!
//! - Every file botscope writes goes through [`write_atomic`] or
//!   [`AtomicFile`]: the bytes go to a temporary file created exclusively
//!   (a new random name, `O_EXCL`) beside the target, are synced, then
//!   renamed over it. A reader sees the old file or the new one, never half
//!   of one; a planted symlink at a predictable name is never written
//!   through; a command that fails half-way leaves the old file as it was.
//! - [`write_under`] writes below a directory (`fetch --out`,
//!   `store export --format files`), creating the directories between and
//!   refusing a symlink that leads out of it.
//! - [`Dir`] reads a directory that was resolved once (`gate --lists`,
//!   `--robots-dir`): every entry is read through that one resolved path,
//!   so a flipped generation link never mixes two generations; symlinks
//!   leading out of the directory and anything that is not a regular file
//!   (a FIFO would block a reader forever) are refused; reads are capped.
//! - [`LeasedDir`]: a working directory of this process (the web
//!   server's demo), locked while the process lives, removed when it
//!   ends; one left by a killed process is removed by the next.
//! - [`unix_now`]: the time, as every store and report records it.
//! - [`release_free_memory`]: the allocator's free memory given back
//!   after a large job (the one `unsafe` call of the workspace).
//! - [`Locations`]: where a user's registry, DNS cache and IP-owner
//!   databases live (the XDG base directories), for every front end.
//! - [`stdio`]: a command's inputs and outputs (`-`, gzip by its magic
//!   bytes, reads bounded by a cap, output written whole or not at all).
//! - `shutdown_signal` (feature `signal`): Ctrl-C or SIGTERM, for every
//!   long-running command.
//!
//! ```
//! let dir = tempfile::tempdir()?;
//! botscope_os::write_atomic(&dir.path().join("robots.txt"), b"User-agent: *\n")?;
//! let d = botscope_os::Dir::open(dir.path())?;
//! let entries = d.entries()?;
//! assert_eq!(entries.len(), 1);
//! assert_eq!(d.read(&entries[0], 500 * 1024)?, b"User-agent: *\n");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

// A library speaks through its return values and the caller's writer,
// never by printing.
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod lease;
#[cfg(feature = "signal")]
mod signal;
pub mod stdio;
pub use lease::LeasedDir;
#[cfg(feature = "signal")]
pub use signal::shutdown_signal;

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::path::{Component, Path, PathBuf};

/// Gives the system back the memory the allocator holds free, after a
/// large job whose structures were dropped (an uploaded log's analysis
/// in the web server). glibc's allocator keeps freed memory in the arena
/// of the thread that used it and returns only the free top of each
/// heap, so a server that analysed a log stayed resident at about the
/// analysis's size, and a little more after each of the next ones as
/// their threads landed in other arenas; `malloc_trim(0)` returns every
/// arena's free pages. It walks and locks the arenas in turn: call it
/// once a job is done, not per request. Returns whether anything went
/// back. Elsewhere (musl, other systems) it does nothing: their
/// allocators return memory on their own or have no such call.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
pub fn release_free_memory() -> bool {
    // SAFETY: `malloc_trim` takes no pointer and has no precondition;
    // glibc serialises it with every other allocator call.
    unsafe { libc::malloc_trim(0) == 1 }
}

/// See the glibc version: nothing to do here.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn release_free_memory() -> bool {
    false
}

/// Seconds since the Unix epoch, now (0 for a clock set before 1970).
pub fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// Where botscope keeps a user's files, as the XDG base directories say
/// (else under `HOME`); every front end (the command, the Python package)
/// reads the same ones.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Locations {
    /// The user registry `bots update` writes, layered over the bundled
    /// one: `$XDG_CONFIG_HOME/botscope/registry.yaml`, else
    /// `~/.config/botscope/registry.yaml`.
    pub user_registry: Option<PathBuf>,
    /// The DNS cache: `$XDG_CACHE_HOME/botscope/dns-cache.json`, else
    /// `~/.cache/botscope/dns-cache.json`.
    pub dns_cache: Option<PathBuf>,
    /// The IP-owner databases `data update` installs:
    /// `$XDG_DATA_HOME/botscope`, else `~/.local/share/botscope`.
    pub data_dir: Option<PathBuf>,
}

impl Locations {
    /// From this process's environment (empty variables are unset).
    pub fn from_env() -> Locations {
        Locations::from_vars(|k| std::env::var_os(k))
    }

    /// From the variables `var` gives.
    ///
    /// ```
    /// let l = botscope_os::Locations::from_vars(|k| (k == "HOME").then(|| "/home/a".into()));
    /// assert_eq!(l.data_dir.unwrap(), std::path::Path::new("/home/a/.local/share/botscope"));
    /// ```
    pub fn from_vars(var: impl Fn(&str) -> Option<OsString>) -> Locations {
        let var = |k: &str| var(k).filter(|v| !v.is_empty()).map(PathBuf::from);
        let home = var("HOME");
        let under = |xdg: &str, fallback: &str| {
            var(xdg)
                .or_else(|| home.as_ref().map(|h| h.join(fallback)))
                .map(|d| d.join("botscope"))
        };
        Locations {
            user_registry: under("XDG_CONFIG_HOME", ".config").map(|d| d.join("registry.yaml")),
            dns_cache: under("XDG_CACHE_HOME", ".cache").map(|d| d.join("dns-cache.json")),
            data_dir: under("XDG_DATA_HOME", ".local/share"),
        }
    }
}

/// What went wrong, naming the path (escaped: names in a shared
/// directory are anyone's).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The operating system refused.
    #[error("{}: {source}", shown(path))]
    Io {
        /// Where.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// A symlink that leads out of the directory (or nowhere).
    #[error(
        "{} is a symbolic link that leads out of {}; refused",
        shown(path),
        shown(root)
    )]
    Escapes {
        /// The link.
        path: PathBuf,
        /// The directory it had to stay in.
        root: PathBuf,
    },
    /// A FIFO, socket, device or directory where a file was expected.
    #[error("{} is not a regular file; refused", shown(path))]
    NotRegular {
        /// Where.
        path: PathBuf,
    },
    /// A file where a directory was expected.
    #[error("{} is not a directory", shown(path))]
    NotADirectory {
        /// Where.
        path: PathBuf,
    },
    /// Over the size the reader allows.
    #[error("{} is over {}", shown(path), botscope_text::size(*cap))]
    TooBig {
        /// Where.
        path: PathBuf,
        /// The cap.
        cap: u64,
    },
    /// A relative path with `..`, a root or nothing in it.
    #[error("{} is not a relative path of plain names", shown(path))]
    BadName {
        /// The path.
        path: PathBuf,
    },
}

impl Error {
    /// As an I/O error, for callers whose errors carry one: the operating
    /// system's own error when there is one, else this error's words.
    pub fn into_io(self) -> io::Error {
        match self {
            Error::Io { source, .. } => source,
            other => io::Error::other(other.to_string()),
        }
    }
}

fn shown(p: &Path) -> String {
    botscope_text::field(&stdio::display(p)).into_owned()
}

fn io_at(path: &Path) -> impl FnOnce(io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// A file's bytes, at most `cap` of them: past it [`Error::TooBig`],
/// having read no further. For the files a user names (a registry, a
/// list); `-` is the standard input.
pub fn read_capped(path: &Path, cap: u64) -> Result<Vec<u8>, Error> {
    let mut buf = Vec::new();
    let read = if path == Path::new("-") {
        io::stdin().lock().take(cap + 1).read_to_end(&mut buf)
    } else {
        File::open(path).and_then(|f| f.take(cap + 1).read_to_end(&mut buf))
    };
    read.map_err(io_at(path))?;
    if buf.len() as u64 > cap {
        return Err(Error::TooBig {
            path: path.to_path_buf(),
            cap,
        });
    }
    Ok(buf)
}

/// A regular file's bytes, at most `cap` of them (past it
/// [`Error::TooBig`]): a FIFO, socket, device or directory at `path` is
/// [`Error::NotRegular`], found without blocking (a FIFO with no writer
/// would hold the reader for ever). Symbolic links are followed. For the
/// files a long-running server reads again and again (a policy).
pub fn read_file_capped(path: &Path, cap: u64) -> Result<Vec<u8>, Error> {
    let f = open_follow_nonblocking(path).map_err(io_at(path))?;
    let meta = f.metadata().map_err(io_at(path))?;
    if !meta.is_file() {
        return Err(Error::NotRegular {
            path: path.to_path_buf(),
        });
    }
    let mut buf = Vec::new();
    f.take(cap + 1).read_to_end(&mut buf).map_err(io_at(path))?;
    if buf.len() as u64 > cap {
        return Err(Error::TooBig {
            path: path.to_path_buf(),
            cap,
        });
    }
    Ok(buf)
}

#[cfg(unix)]
fn open_follow_nonblocking(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    // Non-blocking: opening a FIFO does not wait for a writer; a regular
    // file's reads are not changed by the flag.
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
}

#[cfg(not(unix))]
fn open_follow_nonblocking(path: &Path) -> io::Result<File> {
    File::open(path)
}

/// A file being written: bytes go to an exclusive temporary file beside
/// `path`, which [`AtomicFile::commit`] renames over `path`. Dropped
/// without a commit, the temporary file is removed and `path` is left as
/// it was.
///
/// A stream the user names (`--out /dev/null`, `/dev/stdout`, a FIFO) is
/// written as it is: a character device or a FIFO at `path`, or reached
/// through a link in a directory only its owner (root) may change, such
/// as `/dev/stdout`. Renaming a file over `/dev/null` would replace the
/// device for every program on the machine.
pub struct AtomicFile {
    w: BufWriter<Target>,
    path: PathBuf,
}

/// Where an [`AtomicFile`]'s bytes go.
enum Target {
    Temp(tempfile::NamedTempFile),
    Stream(File),
}

impl Write for Target {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Target::Temp(f) => f.write(buf),
            Target::Stream(f) => f.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Target::Temp(f) => f.flush(),
            Target::Stream(f) => f.flush(),
        }
    }
}

/// `path` is a stream to write as it is (see [`AtomicFile`]).
#[cfg(unix)]
fn is_stream(path: &Path) -> bool {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let stream = |m: &std::fs::Metadata| {
        let t = m.file_type();
        t.is_char_device() || t.is_fifo()
    };
    let Ok(here) = std::fs::symlink_metadata(path) else {
        return false;
    };
    if stream(&here) {
        return true;
    }
    if !here.file_type().is_symlink() {
        return false;
    }
    // A link only root could have placed: its directory is root's and
    // no one else may write in it (not `/tmp`, where anyone may).
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let guarded = std::fs::metadata(dir).is_ok_and(|d| d.uid() == 0 && d.mode() & 0o022 == 0);
    guarded && std::fs::metadata(path).is_ok_and(|m| stream(&m))
}

#[cfg(not(unix))]
fn is_stream(_: &Path) -> bool {
    false
}

impl AtomicFile {
    /// Starts writing `path`, creating its directory when missing.
    pub fn create(path: &Path) -> Result<AtomicFile, Error> {
        if is_stream(path) {
            let f = std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .map_err(io_at(path))?;
            return Ok(AtomicFile {
                w: BufWriter::with_capacity(1 << 16, Target::Stream(f)),
                path: path.to_path_buf(),
            });
        }
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        std::fs::create_dir_all(dir).map_err(io_at(dir))?;
        let mut builder = tempfile::Builder::new();
        builder.prefix(".botscope-").suffix(".tmp");
        // Readable by others, as any file a command writes (not the
        // temporary file's owner-only mode).
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(std::fs::Permissions::from_mode(0o644));
        }
        let tmp = builder.tempfile_in(dir).map_err(io_at(dir))?;
        Ok(AtomicFile {
            w: BufWriter::with_capacity(1 << 16, Target::Temp(tmp)),
            path: path.to_path_buf(),
        })
    }

    /// The file this will become.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Syncs the bytes and renames the temporary file over the target (a
    /// symlink at the target is replaced, never followed); a stream is
    /// flushed.
    pub fn commit(self) -> Result<(), Error> {
        let path = self.path;
        let target = self
            .w
            .into_inner()
            .map_err(|e| io_at(&path)(e.into_error()))?;
        match target {
            Target::Temp(tmp) => {
                tmp.as_file().sync_all().map_err(io_at(&path))?;
                tmp.persist(&path).map_err(|e| io_at(&path)(e.error))?;
            }
            Target::Stream(mut f) => f.flush().map_err(io_at(&path))?,
        }
        Ok(())
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.w.write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.w.write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }
}

/// Writes `content` to `path` through an exclusive temporary file beside
/// it and one rename.
pub fn write_atomic(path: &Path, content: &[u8]) -> Result<(), Error> {
    let mut f = AtomicFile::create(path)?;
    f.write_all(content).map_err(io_at(path))?;
    f.commit()
}

/// Opens `path` to append to it, creating it, as a log writer should: a
/// symbolic link at `path` is refused (whoever placed it would choose the
/// file the lines go to), and so is anything but a regular file (a FIFO
/// would block the writer). The errors say what is at `path`.
pub fn open_append(path: &Path) -> io::Result<File> {
    let f = open_append_nofollow(path).map_err(|e| {
        if is_loop(&e) {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "it is a symbolic link; give the file itself (a link could send the lines to any file)",
            )
        } else {
            e
        }
    })?;
    let kind = f.metadata()?.file_type();
    if !kind.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("it is not a regular file ({})", file_kind(&kind)),
        ));
    }
    Ok(f)
}

/// Makes the directory `path` (and its parents) unless it is one already;
/// a link to a directory is used. Anything else at `path` is refused with
/// words that say what is there (`it is a symbolic link to x.txt, which
/// is not a directory`), never the system's "File exists".
pub fn ensure_dir(path: &Path) -> io::Result<()> {
    if let Ok(meta) = std::fs::symlink_metadata(path)
        && !std::fs::metadata(path).is_ok_and(|m| m.is_dir())
    {
        let what = if meta.file_type().is_symlink() {
            match std::fs::read_link(path) {
                Ok(t) if std::fs::metadata(path).is_ok() => format!(
                    "it is a symbolic link to {}, which is not a directory",
                    t.display()
                ),
                Ok(t) => format!(
                    "it is a symbolic link to {}, which does not exist",
                    t.display()
                ),
                Err(_) => "it is a symbolic link".to_owned(),
            }
        } else if meta.is_file() {
            "it is a file".to_owned()
        } else {
            format!("it is {}", file_kind(&meta.file_type()))
        };
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{what}; give a directory (or a new name)"),
        ));
    }
    std::fs::create_dir_all(path)
}

/// Checks that `path` (a link followed) is a regular file, without
/// opening it: opening a FIFO would wait for a writer, and reading a
/// device such as `/dev/zero` never ends. The error says what is there
/// (`it is a FIFO, not a regular file`); a missing path is `NotFound`.
pub fn check_regular(path: &Path) -> io::Result<()> {
    let kind = std::fs::metadata(path)?.file_type();
    if kind.is_file() {
        Ok(())
    } else {
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("it is {}, not a regular file", file_kind(&kind)),
        ))
    }
}

/// What a file that is not a regular one is, in words.
fn file_kind(kind: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO (a named pipe)";
        }
        if kind.is_socket() {
            return "a socket";
        }
        if kind.is_char_device() || kind.is_block_device() {
            return "a device";
        }
    }
    if kind.is_dir() {
        "a directory"
    } else {
        "not a file"
    }
}

#[cfg(unix)]
fn open_append_nofollow(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    // Non-blocking, so that a FIFO without a reader fails instead of
    // waiting; the flag does nothing to a regular file's writes.
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
}

#[cfg(not(unix))]
fn open_append_nofollow(path: &Path) -> io::Result<File> {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
}

/// The plain names of a relative path, or [`Error::BadName`].
fn plain_names(rel: &Path) -> Result<Vec<&std::ffi::OsStr>, Error> {
    let bad = || Error::BadName {
        path: rel.to_path_buf(),
    };
    let mut names = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(n) => names.push(n),
            Component::CurDir => {}
            _ => return Err(bad()),
        }
    }
    if names.is_empty() {
        return Err(bad());
    }
    Ok(names)
}

/// Writes `content` at `root/rel` with [`write_atomic`], creating the
/// directories between. A directory on the way that is a symlink leading
/// out of `root` is refused ([`Error::Escapes`]), and so is `rel` with
/// `..` or a root. Returns `root/rel`.
pub fn write_under(root: &Path, rel: &Path, content: &[u8]) -> Result<PathBuf, Error> {
    let names = plain_names(rel)?;
    std::fs::create_dir_all(root).map_err(io_at(root))?;
    let base = std::fs::canonicalize(root).map_err(io_at(root))?;
    let (file, dirs) = names.split_last().ok_or_else(|| Error::BadName {
        path: rel.to_path_buf(),
    })?;
    let mut cur = base.clone();
    let mut shown_path = root.to_path_buf();
    for d in dirs {
        let p = cur.join(d);
        shown_path.push(d);
        let meta = match std::fs::symlink_metadata(&p) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                match std::fs::create_dir(&p) {
                    Ok(()) => {}
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                    Err(e) => return Err(io_at(&shown_path)(e)),
                }
                std::fs::symlink_metadata(&p).map_err(io_at(&shown_path))?
            }
            Err(e) => return Err(io_at(&shown_path)(e)),
            Ok(m) => m,
        };
        if meta.is_dir() {
            cur = p;
        } else if meta.file_type().is_symlink() {
            let escapes = || Error::Escapes {
                path: shown_path.clone(),
                root: root.to_path_buf(),
            };
            let t = std::fs::canonicalize(&p).map_err(|_| escapes())?;
            if !t.starts_with(&base) {
                return Err(escapes());
            }
            if !t.is_dir() {
                return Err(Error::NotADirectory { path: shown_path });
            }
            cur = t;
        } else {
            return Err(Error::NotADirectory { path: shown_path });
        }
    }
    write_atomic(&cur.join(file), content).map_err(|e| match e {
        Error::Io { source, .. } => Error::Io {
            path: root.join(rel),
            source,
        },
        other => other,
    })?;
    Ok(root.join(rel))
}

/// What an entry of a [`Dir`] is, symlinks inside the directory followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A regular file of this many bytes.
    File {
        /// Its size when listed.
        len: u64,
    },
    /// A directory inside.
    Dir,
    /// A FIFO, socket or device.
    Other,
    /// A symlink leading out of the directory, or nowhere.
    Escapes,
}

/// One entry of a [`Dir`].
#[derive(Debug, Clone)]
pub struct Entry {
    /// Its name in the directory.
    pub name: OsString,
    /// Where it is read from: inside the resolved directory, symlinks
    /// followed.
    pub path: PathBuf,
    /// What it is.
    pub kind: Kind,
}

impl Entry {
    /// The name as text (lossy).
    pub fn name_lossy(&self) -> String {
        self.name.to_string_lossy().into_owned()
    }
}

/// A directory resolved once: entries are listed and read through the
/// resolved path only.
#[derive(Debug, Clone)]
pub struct Dir {
    root: PathBuf,
}

fn kind_of(meta: &std::fs::Metadata) -> Kind {
    if meta.is_file() {
        Kind::File { len: meta.len() }
    } else if meta.is_dir() {
        Kind::Dir
    } else {
        Kind::Other
    }
}

impl Dir {
    /// Resolves `path` (a symlink such as a generation link is followed
    /// here, once).
    pub fn open(path: &Path) -> Result<Dir, Error> {
        let root = std::fs::canonicalize(path).map_err(io_at(path))?;
        let meta = std::fs::metadata(&root).map_err(io_at(path))?;
        if !meta.is_dir() {
            return Err(Error::NotADirectory {
                path: path.to_path_buf(),
            });
        }
        Ok(Dir { root })
    }

    /// The resolved directory.
    pub fn path(&self) -> &Path {
        &self.root
    }

    /// The entries, sorted by name. Listing never fails on an entry: a
    /// symlink out is [`Kind::Escapes`], and the caller refuses it where
    /// the name matters.
    pub fn entries(&self) -> Result<Vec<Entry>, Error> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(&self.root).map_err(io_at(&self.root))? {
            let e = e.map_err(io_at(&self.root))?;
            let name = e.file_name();
            let path = self.root.join(&name);
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue; // removed meanwhile
            };
            let (path, kind) = if meta.file_type().is_symlink() {
                match std::fs::canonicalize(&path) {
                    Ok(t) if t.starts_with(&self.root) && t != self.root => {
                        match std::fs::metadata(&t) {
                            Ok(m) => (t, kind_of(&m)),
                            Err(_) => (path, Kind::Escapes),
                        }
                    }
                    _ => (path, Kind::Escapes),
                }
            } else {
                (path, kind_of(&meta))
            };
            out.push(Entry { name, path, kind });
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }

    /// Refuses an entry that is a symlink leading out of the directory (or
    /// nowhere), or neither a regular file nor a directory.
    pub fn check(&self, e: &Entry) -> Result<(), Error> {
        match e.kind {
            Kind::Escapes => Err(Error::Escapes {
                path: self.root.join(&e.name),
                root: self.root.clone(),
            }),
            Kind::Other => Err(Error::NotRegular {
                path: self.root.join(&e.name),
            }),
            Kind::File { .. } | Kind::Dir => Ok(()),
        }
    }

    /// The bytes of a file entry, at most `cap` of them ([`Error::TooBig`]
    /// past it). The file is opened without following a symlink and
    /// without blocking, then checked to be a regular file, so a swap
    /// after listing is refused too.
    pub fn read(&self, e: &Entry, cap: u64) -> Result<Vec<u8>, Error> {
        self.check(e)?;
        if e.kind == Kind::Dir {
            return Err(Error::NotRegular {
                path: self.root.join(&e.name),
            });
        }
        let mut f = open_nofollow(&e.path).map_err(|err| {
            if is_loop(&err) {
                Error::Escapes {
                    path: self.root.join(&e.name),
                    root: self.root.clone(),
                }
            } else {
                io_at(&e.path)(err)
            }
        })?;
        let meta = f.metadata().map_err(io_at(&e.path))?;
        if !meta.is_file() {
            return Err(Error::NotRegular {
                path: e.path.clone(),
            });
        }
        if meta.len() > cap {
            return Err(Error::TooBig {
                path: e.path.clone(),
                cap,
            });
        }
        let mut buf = Vec::with_capacity(meta.len() as usize);
        (&mut f)
            .take(cap + 1)
            .read_to_end(&mut buf)
            .map_err(io_at(&e.path))?;
        if buf.len() as u64 > cap {
            return Err(Error::TooBig {
                path: e.path.clone(),
                cap,
            });
        }
        Ok(buf)
    }

    /// A directory entry as a [`Dir`] of its own, bound to stay inside
    /// this one.
    pub fn subdir(&self, e: &Entry) -> Result<Dir, Error> {
        self.check(e)?;
        match e.kind {
            Kind::Dir => Ok(Dir {
                root: e.path.clone(),
            }),
            _ => Err(Error::NotADirectory {
                path: self.root.join(&e.name),
            }),
        }
    }
}

#[cfg(unix)]
fn open_nofollow(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
}

#[cfg(not(unix))]
fn open_nofollow(path: &Path) -> io::Result<File> {
    File::open(path)
}

#[cfg(unix)]
fn is_loop(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::ELOOP)
}

#[cfg(not(unix))]
fn is_loop(_: &io::Error) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found: `logs analyze --out /dev/null` run as root renamed a
    /// regular file over `/dev/null`, and every program on the machine
    /// then wrote into that file. A FIFO, a character device and a link
    /// to one that only root could have placed are written as they are;
    /// a link in a directory anyone may write is still replaced, never
    /// followed.
    #[cfg(unix)]
    #[test]
    fn a_stream_the_user_names_is_written_not_replaced() {
        use std::os::unix::fs::{FileTypeExt, PermissionsExt};
        let dir = tempfile::tempdir().expect("dir");
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo");
        assert!(made.success());
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(fifo).expect("read the fifo"))
        };
        write_atomic(&fifo, b"through the pipe\n").expect("written");
        let kind = std::fs::symlink_metadata(&fifo)
            .expect("still there")
            .file_type();
        assert!(kind.is_fifo(), "the FIFO is still a FIFO");
        assert_eq!(reader.join().expect("reader"), b"through the pipe\n");
        // A device node (root may make one): written, still a device.
        let null = dir.path().join("null");
        let root = std::process::Command::new("mknod")
            .arg(&null)
            .args(["c", "1", "3"])
            .status()
            .is_ok_and(|s| s.success());
        if root {
            write_atomic(&null, b"gone").expect("written");
            let kind = std::fs::symlink_metadata(&null).expect("there").file_type();
            assert!(kind.is_char_device(), "the device is still a device");
            // A link to it in a directory only root may change (as
            // /dev/stdout is): followed.
            let guarded = dir.path().join("guarded");
            std::fs::create_dir(&guarded).expect("dir");
            std::fs::set_permissions(&guarded, std::fs::Permissions::from_mode(0o755))
                .expect("mode");
            let link = guarded.join("out");
            std::os::unix::fs::symlink(&null, &link).expect("link");
            write_atomic(&link, b"gone").expect("written");
            assert!(
                std::fs::symlink_metadata(&link)
                    .expect("there")
                    .file_type()
                    .is_symlink()
            );
        }
        // A link to the FIFO where anyone may write: replaced, not
        // followed (whoever placed it does not choose where bytes go).
        let open = dir.path().join("open");
        std::fs::create_dir(&open).expect("dir");
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).expect("mode");
        let planted = open.join("report.json");
        std::os::unix::fs::symlink(&fifo, &planted).expect("link");
        write_atomic(&planted, b"{}").expect("written");
        let kind = std::fs::symlink_metadata(&planted)
            .expect("there")
            .file_type();
        assert!(kind.is_file(), "the planted link was replaced by the file");
        assert_eq!(std::fs::read(&planted).expect("read"), b"{}");
    }

    #[test]
    fn open_append_refuses_a_link_and_what_is_not_a_file() {
        let dir = std::env::temp_dir().join(format!("botscope-os-append-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("dir");
        let log = dir.join("a.log");
        open_append(&log)
            .and_then(|mut f| f.write_all(b"one\n"))
            .expect("created");
        open_append(&log)
            .and_then(|mut f| f.write_all(b"two\n"))
            .expect("appended");
        assert_eq!(std::fs::read(&log).expect("read"), b"one\ntwo\n");
        // A link placed where the log goes: refused, its target untouched.
        let target = dir.join("target");
        std::fs::write(&target, b"keep\n").expect("target");
        let link = dir.join("link.log");
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(&target, &link).expect("link");
            let e = open_append(&link).expect_err("a link");
            assert!(e.to_string().contains("symbolic link"), "{e}");
            assert_eq!(std::fs::read(&target).expect("read"), b"keep\n");
            let fifo = dir.join("fifo");
            let made = std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .expect("mkfifo runs");
            assert!(made.success());
            assert!(open_append(&fifo).is_err(), "a FIFO without a reader");
        }
        let e = open_append(&dir).expect_err("a directory");
        assert!(!e.to_string().is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .expect("dir")
            .map(|e| e.expect("e").file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_capped_read_stops_past_its_cap() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("r.yaml");
        std::fs::write(&p, b"12345").expect("write");
        assert_eq!(read_capped(&p, 5).expect("within"), b"12345");
        let e = read_capped(&p, 4).expect_err("over");
        assert!(matches!(e, Error::TooBig { cap: 4, .. }), "{e}");
        assert!(e.to_string().ends_with("r.yaml is over 4 bytes"), "{e}");
        assert_eq!(botscope_text::size(256 << 20), "256 MiB");
        let e = read_capped(&dir.path().join("none"), 4).expect_err("missing");
        assert!(matches!(e, Error::Io { .. }), "{e}");
    }

    #[test]
    fn atomic_write_replaces_and_leaves_no_temporary() {
        let d = tempfile::tempdir().expect("tmp");
        let p = d.path().join("out.txt");
        write_atomic(&p, b"one\n").expect("write");
        write_atomic(&p, b"two\n").expect("write");
        assert_eq!(std::fs::read(&p).expect("read"), b"two\n");
        assert_eq!(names(d.path()), ["out.txt"]);
    }

    #[test]
    fn an_uncommitted_file_leaves_the_old_one() {
        let d = tempfile::tempdir().expect("tmp");
        let p = d.path().join("list.txt");
        std::fs::write(&p, b"kept\n").expect("write");
        {
            let mut f = AtomicFile::create(&p).expect("create");
            f.write_all(b"half").expect("write");
        }
        assert_eq!(std::fs::read(&p).expect("read"), b"kept\n");
        assert_eq!(names(d.path()), ["list.txt"]);
    }

    /// Found: `honeypot serve` wrote `LOG.sites.json.tmp` through a
    /// planted symlink. No predictable name is written to, and a symlink
    /// at the target itself is replaced, not followed.
    #[cfg(unix)]
    #[test]
    fn planted_symlinks_are_never_written_through() {
        let d = tempfile::tempdir().expect("tmp");
        let secret = d.path().join("secret");
        std::fs::write(&secret, b"secret\n").expect("write");
        let target = d.path().join("LOG.sites.json");
        for planted in ["LOG.sites.json.tmp", ".botscope-.tmp"] {
            std::os::unix::fs::symlink(&secret, d.path().join(planted)).expect("link");
        }
        write_atomic(&target, b"{}").expect("write");
        assert_eq!(std::fs::read(&secret).expect("read"), b"secret\n");
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&secret, &link).expect("link");
        write_atomic(&link, b"new").expect("write");
        assert_eq!(std::fs::read(&secret).expect("read"), b"secret\n");
        assert!(std::fs::symlink_metadata(&link).expect("m").is_file());
    }

    /// Found: `fetch --out` followed a directory symlink planted inside
    /// `--out` and wrote outside it.
    #[cfg(unix)]
    #[test]
    fn writing_under_a_directory_stays_inside_it() {
        let d = tempfile::tempdir().expect("tmp");
        let out = d.path().join("out");
        let outside = d.path().join("outside");
        std::fs::create_dir_all(&out).expect("dir");
        std::fs::create_dir_all(&outside).expect("dir");
        std::os::unix::fs::symlink(&outside, out.join("example.com")).expect("link");
        let e = write_under(&out, Path::new("example.com/robots.txt"), b"x").expect_err("escape");
        assert!(matches!(e, Error::Escapes { .. }), "{e}");
        assert!(e.to_string().contains("leads out of"), "{e}");
        assert!(names(&outside).is_empty());
        // A link inside the directory is followed.
        std::fs::create_dir_all(out.join("real")).expect("dir");
        std::os::unix::fs::symlink("real", out.join("alias")).expect("link");
        let p = write_under(&out, Path::new("alias/a/b.txt"), b"ok").expect("inside");
        assert_eq!(p, out.join("alias/a/b.txt"));
        assert_eq!(
            std::fs::read(out.join("real/a/b.txt")).expect("read"),
            b"ok"
        );
        for bad in ["../x", "/etc/x", ""] {
            assert!(matches!(
                write_under(&out, Path::new(bad), b"x"),
                Err(Error::BadName { .. })
            ));
        }
    }

    /// Found: the gate served a symlink to a secret file as `/robots.txt`.
    #[cfg(unix)]
    #[test]
    fn reading_refuses_links_out_and_what_is_not_a_file() {
        let d = tempfile::tempdir().expect("tmp");
        let dir = d.path().join("robots");
        std::fs::create_dir_all(&dir).expect("dir");
        std::fs::write(d.path().join("secret"), b"root:x:0:0\n").expect("write");
        std::os::unix::fs::symlink(d.path().join("secret"), dir.join("default.txt")).expect("l");
        std::fs::write(dir.join("real.txt"), b"User-agent: *\n").expect("write");
        std::os::unix::fs::symlink("real.txt", dir.join("alias.txt")).expect("l");
        let fifo = dir.join("fifo.txt");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .is_ok_and(|s| s.success());
        let dd = Dir::open(&dir).expect("open");
        let entries = dd.entries().expect("entries");
        let get = |n: &str| entries.iter().find(|e| e.name == n).expect("entry").clone();
        let e = dd.read(&get("default.txt"), 1000).expect_err("escapes");
        assert!(matches!(e, Error::Escapes { .. }), "{e}");
        assert!(!e.to_string().contains("root:x"));
        assert_eq!(
            dd.read(&get("alias.txt"), 1000).expect("read"),
            b"User-agent: *\n"
        );
        assert!(matches!(
            dd.read(&get("real.txt"), 5),
            Err(Error::TooBig { cap: 5, .. })
        ));
        if made {
            assert_eq!(get("fifo.txt").kind, Kind::Other);
            assert!(matches!(
                dd.read(&get("fifo.txt"), 1000),
                Err(Error::NotRegular { .. })
            ));
        }
    }

    /// A generation link flipped after opening: reads keep to the
    /// generation resolved at open.
    #[cfg(unix)]
    #[test]
    fn one_generation_is_read_through_one_resolved_path() {
        let d = tempfile::tempdir().expect("tmp");
        for (g, body) in [("g1", "one"), ("g2", "two")] {
            std::fs::create_dir_all(d.path().join(g)).expect("dir");
            std::fs::write(d.path().join(g).join("list.txt"), body).expect("w");
        }
        let link = d.path().join("current");
        std::os::unix::fs::symlink("g1", &link).expect("link");
        let dd = Dir::open(&link).expect("open");
        let entries = dd.entries().expect("entries");
        std::fs::remove_file(&link).expect("rm");
        std::os::unix::fs::symlink("g2", &link).expect("link");
        assert_eq!(dd.read(&entries[0], 100).expect("read"), b"one");
        assert_eq!(dd.entries().expect("again")[0].path, entries[0].path);
    }
}
