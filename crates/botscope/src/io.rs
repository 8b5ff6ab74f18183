//! Reading and writing for every command: `-` as standard input or
//! output, gzip recognised by its magic bytes, bounded reads.

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::path::Path;

use anyhow::{Context, Result};

/// How a path is named in messages.
pub fn display(path: &Path) -> String {
    if path == Path::new("-") {
        "standard input".to_owned()
    } else {
        path.display().to_string()
    }
}

/// A file, or standard input for `-`, buffered.
pub fn input(path: &Path) -> Result<Box<dyn BufRead>> {
    Ok(if path == Path::new("-") {
        Box::new(io::stdin().lock())
    } else {
        Box::new(BufReader::with_capacity(
            256 * 1024,
            File::open(path).with_context(|| format!("failed to open {}", path.display()))?,
        ))
    })
}

/// Like [`input`], decompressing gzip (several members) when the first
/// bytes say so, whatever the name.
pub fn input_maybe_gzip(path: &Path) -> Result<Box<dyn BufRead>> {
    let mut r = input(path)?;
    let head = r
        .fill_buf()
        .with_context(|| format!("failed to read {}", display(path)))?;
    Ok(if head.starts_with(&[0x1f, 0x8b]) {
        Box::new(BufReader::new(flate2::bufread::MultiGzDecoder::new(r)))
    } else {
        r
    })
}

/// A file to read, counted into `read` as its bytes are read, decompressed
/// when it is gzip (sniffed), in the store's error for an input.
pub fn counted_input_maybe_gzip(
    path: &Path,
    read: std::sync::Arc<std::sync::atomic::AtomicU64>,
) -> botscope_store::Result<Box<dyn BufRead + Send>> {
    let name = display(path).to_string();
    let file = File::open(path).map_err(|e| botscope_store::StoreError::Input {
        name: name.clone(),
        reason: format!("cannot read it: {e}"),
    })?;
    counted_maybe_gzip(&name, file, read)
}

/// A stream (a file, a download as it comes) counted into `read` as its
/// bytes are read, decompressed when it is gzip (sniffed).
pub fn counted_maybe_gzip(
    name: &str,
    input: impl Read + Send + 'static,
    read: std::sync::Arc<std::sync::atomic::AtomicU64>,
) -> botscope_store::Result<Box<dyn BufRead + Send>> {
    struct Counted<R>(R, std::sync::Arc<std::sync::atomic::AtomicU64>);
    impl<R: Read> Read for Counted<R> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.0.read(buf)?;
            self.1
                .fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed);
            Ok(n)
        }
    }
    let mut r = BufReader::with_capacity(256 * 1024, Counted(input, read));
    let gz = r
        .fill_buf()
        .map(|h| h.starts_with(&[0x1f, 0x8b]))
        .map_err(|e| botscope_store::StoreError::Input {
            name: name.to_owned(),
            reason: format!("cannot read it: {e}"),
        })?;
    Ok(if gz {
        Box::new(BufReader::with_capacity(
            256 * 1024,
            flate2::bufread::MultiGzDecoder::new(r),
        ))
    } else {
        Box::new(r)
    })
}

/// Where a command's output goes: a file written whole through
/// [`botscope_os::AtomicFile`] (replaced only by [`Output::finish`], so a
/// command that fails half-way leaves the old file), or standard output.
pub enum Output {
    /// A file being written.
    File(botscope_os::AtomicFile),
    /// Standard output, buffered.
    Stdout(BufWriter<io::StdoutLock<'static>>),
}

impl Output {
    /// Puts the file in place, or flushes standard output.
    pub fn finish(self) -> Result<()> {
        match self {
            Output::File(f) => Ok(f.commit()?),
            Output::Stdout(mut w) => Ok(w.flush()?),
        }
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Output::File(f) => f.write(buf),
            Output::Stdout(w) => w.write(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Output::File(f) => f.write_all(buf),
            Output::Stdout(w) => w.write_all(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Output::File(f) => f.flush(),
            Output::Stdout(w) => w.flush(),
        }
    }
}

/// The output at `path`, or standard output.
pub fn output(path: Option<&Path>) -> Result<Output> {
    Ok(match path {
        Some(p) => Output::File(botscope_os::AtomicFile::create(p)?),
        None => Output::Stdout(BufWriter::new(io::stdout().lock())),
    })
}

/// Reads a file (or stdin for `-`), keeping at most `limit` bytes plus one
/// line's worth past it, so that a huge file costs bounded memory; returns
/// the bytes and the total size.
pub fn read_limited(path: &Path, limit: Option<usize>) -> Result<(Vec<u8>, u64)> {
    let mut buf = Vec::new();
    let total = if path == Path::new("-") {
        read_limited_into(io::stdin().lock(), limit, &mut buf)
    } else {
        let f = File::open(path).with_context(|| format!("failed to open {}", path.display()))?;
        read_limited_into(f, limit, &mut buf)
    }
    .with_context(|| format!("failed to read {}", display(path)))?;
    Ok((buf, total))
}

/// [`read_limited`]'s reading, appended to `buf`; returns the total size.
///
/// The bytes go straight into `buf` (no buffer between, no size query:
/// open, the reads, close), as a bulk check reads thousands of small
/// files; a first guess of 16 KiB holds most robots.txt files, a larger
/// one grows.
pub fn read_limited_into(
    mut reader: impl Read,
    limit: Option<usize>,
    buf: &mut Vec<u8>,
) -> io::Result<u64> {
    let keep = limit.map_or(u64::MAX, |cap| {
        cap.saturating_add(botscope_robotstxt::MAX_LINE_LEN + 1) as u64
    });
    buf.reserve(usize::try_from(keep.min(16 * 1024)).unwrap_or(16 * 1024));
    let start = buf.len();
    (&mut reader).take(keep).read_to_end(buf)?;
    let mut total = (buf.len() - start) as u64;
    if total == keep {
        total += io::copy(&mut reader, &mut io::sink())?;
    }
    Ok(total)
}

/// Opens files by path, keeping the directory of the last one open: a bulk
/// check opens thousands of files in a few directories, and each open then
/// looks up one name where a whole path would walk every directory of it.
/// (The directory is the one that was there at its first file: a bulk
/// audit reads a corpus that is not being moved under it.)
#[derive(Default)]
pub struct DirOpener {
    dir: Option<(std::path::PathBuf, std::os::fd::OwnedFd)>,
}

impl DirOpener {
    /// The file at `path`, for reading.
    pub fn open(&mut self, path: &Path) -> io::Result<File> {
        use nix::fcntl::{OFlag, openat};
        use nix::sys::stat::Mode;
        let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
            return File::open(path);
        };
        if parent.as_os_str().is_empty() {
            return File::open(path);
        }
        let fd = match &self.dir {
            Some((p, fd)) if p == parent => fd,
            _ => {
                let flags = OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
                let fd = nix::fcntl::open(parent, flags, Mode::empty())?;
                &self.dir.insert((parent.to_owned(), fd)).1
            }
        };
        let f = openat(fd, name, OFlag::O_RDONLY | OFlag::O_CLOEXEC, Mode::empty())?;
        Ok(File::from(f))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(o: &mut DirOpener, p: &Path) -> io::Result<Vec<u8>> {
        let mut buf = Vec::new();
        read_limited_into(o.open(p)?, None, &mut buf)?;
        Ok(buf)
    }

    #[test]
    fn files_opened_through_a_kept_directory_are_the_files_named() {
        let d = tempfile::tempdir().expect("tempdir");
        for (dir, name, body) in [("a", "x", "ax"), ("a", "y", "ay"), ("b", "x", "bx")] {
            std::fs::create_dir_all(d.path().join(dir)).expect("mkdir");
            std::fs::write(d.path().join(dir).join(name), body).expect("write");
        }
        let mut o = DirOpener::default();
        for (p, want) in [("a/x", "ax"), ("a/y", "ay"), ("b/x", "bx"), ("a/x", "ax")] {
            assert_eq!(read(&mut o, &d.path().join(p)).expect(p), want.as_bytes());
        }
        let e = read(&mut o, &d.path().join("a/none")).expect_err("missing");
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        let e = read(&mut o, &d.path().join("c/x")).expect_err("missing directory");
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        // A directory named as a file opens and does not read.
        assert!(read(&mut o, &d.path().join("a/..")).is_err());
        assert!(read(&mut o, d.path()).is_err());
    }

    #[test]
    fn a_limited_read_keeps_the_limit_and_a_line_and_counts_everything() {
        let body = vec![b'x'; botscope_robotstxt::MAX_LINE_LEN * 3];
        let mut buf = b"kept".to_vec();
        let total = read_limited_into(&body[..], Some(10), &mut buf).expect("read");
        assert_eq!(total, body.len() as u64);
        assert_eq!(buf.len(), 4 + 10 + botscope_robotstxt::MAX_LINE_LEN + 1);
        assert!(buf.starts_with(b"kept"));
    }
}
