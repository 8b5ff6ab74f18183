//! A command's files: `-` as standard input or output, gzip recognised
//! by its magic bytes whatever the name, reads bounded by a cap, output
//! written whole or not at all.
//!
//! ```
//! use std::io::{Read, Write};
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("out.txt");
//! let mut out = botscope_os::stdio::output(Some(&path))?;
//! out.write_all(b"User-agent: *\nDisallow: /private\n")?;
//! out.finish()?;
//! let (kept, total) = botscope_os::stdio::read_limited(&path, Some(4))?;
//! assert_eq!(total, 33);
//! assert_eq!(&kept[..4], b"User"); // and one line's worth past the cap
//! let mut text = String::new();
//! botscope_os::stdio::input_maybe_gzip(&path)?.read_to_string(&mut text)?;
//! assert!(text.ends_with("/private\n"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::{AtomicFile, Error, io_at};

/// The bytes [`read_limited`] keeps past its cap: one line's worth, the
/// longest line a robots.txt reader reads (RFC 9309's 2,083-byte URLs
/// eight times over) and its end, so that a file cut at the cap still
/// holds its last rule whole.
pub const LINE_SLACK: usize = 2083 * 8;

/// A reader's buffer: large enough that a log or a WARC file is read in
/// few system calls.
const BUFFER: usize = 256 * 1024;

/// How a path is named in messages: `-` is the standard input.
pub fn display(path: &Path) -> String {
    if path == Path::new("-") {
        "standard input".to_owned()
    } else {
        path.display().to_string()
    }
}

/// A file, or standard input for `-`, buffered.
pub fn input(path: &Path) -> Result<Box<dyn BufRead>, Error> {
    Ok(if path == Path::new("-") {
        Box::new(io::stdin().lock())
    } else {
        Box::new(BufReader::with_capacity(
            BUFFER,
            File::open(path).map_err(io_at(path))?,
        ))
    })
}

/// Like [`input`], decompressing gzip (several members) when the first
/// bytes say so, whatever the name.
pub fn input_maybe_gzip(path: &Path) -> Result<Box<dyn BufRead>, Error> {
    let mut r = input(path)?;
    let gz = r
        .fill_buf()
        .map_err(io_at(path))?
        .starts_with(&[0x1f, 0x8b]);
    Ok(if gz {
        Box::new(BufReader::new(flate2::bufread::MultiGzDecoder::new(r)))
    } else {
        r
    })
}

/// A stream (a file, a download as it comes) counted into `read` as its
/// bytes are read (for a progress bar of the compressed bytes),
/// decompressed when it is gzip (sniffed).
pub fn counted_maybe_gzip(
    input: impl Read + Send + 'static,
    read: Arc<AtomicU64>,
) -> io::Result<Box<dyn BufRead + Send>> {
    struct Counted<R>(R, Arc<AtomicU64>);
    impl<R: Read> Read for Counted<R> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.0.read(buf)?;
            self.1.fetch_add(n as u64, Ordering::Relaxed);
            Ok(n)
        }
    }
    let mut r = BufReader::with_capacity(BUFFER, Counted(input, read));
    let gz = r.fill_buf()?.starts_with(&[0x1f, 0x8b]);
    Ok(if gz {
        Box::new(BufReader::with_capacity(
            BUFFER,
            flate2::bufread::MultiGzDecoder::new(r),
        ))
    } else {
        Box::new(r)
    })
}

/// Where a command's output goes: a file written whole through
/// [`AtomicFile`] (replaced only by [`Output::finish`], so a command that
/// fails half-way leaves the old file), or standard output.
pub enum Output {
    /// A file being written.
    File(AtomicFile),
    /// Standard output, buffered.
    Stdout(BufWriter<io::StdoutLock<'static>>),
}

impl Output {
    /// Puts the file in place, or flushes standard output.
    pub fn finish(self) -> Result<(), Error> {
        match self {
            Output::File(f) => f.commit(),
            Output::Stdout(mut w) => w.flush().map_err(io_at(Path::new("-"))),
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
pub fn output(path: Option<&Path>) -> Result<Output, Error> {
    Ok(match path {
        Some(p) => Output::File(AtomicFile::create(p)?),
        None => Output::Stdout(BufWriter::new(io::stdout().lock())),
    })
}

/// Reads a file (or standard input for `-`), keeping at most `limit`
/// bytes and [`LINE_SLACK`] past them, so that a huge file costs bounded
/// memory; returns the bytes kept and the total size.
pub fn read_limited(path: &Path, limit: Option<usize>) -> Result<(Vec<u8>, u64), Error> {
    let mut buf = Vec::new();
    let total = if path == Path::new("-") {
        read_limited_into(io::stdin().lock(), limit, &mut buf)
    } else {
        File::open(path).and_then(|f| read_limited_into(f, limit, &mut buf))
    }
    .map_err(io_at(path))?;
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
    let keep = limit.map_or(u64::MAX, |cap| cap.saturating_add(LINE_SLACK) as u64);
    buf.reserve(usize::try_from(keep.min(16 * 1024)).unwrap_or(16 * 1024));
    let start = buf.len();
    (&mut reader).take(keep).read_to_end(buf)?;
    let mut total = (buf.len() - start) as u64;
    if total == keep {
        total += io::copy(&mut reader, &mut io::sink())?;
    }
    Ok(total)
}

/// What is wrong at a path a flag names, in words (`no such file`, `not
/// a directory`, `permission denied`, …): `None` when it is what the
/// flag needs, a directory (`dir`) or a regular file.
pub fn wrong_at(path: &Path, dir: bool) -> Option<String> {
    match std::fs::metadata(path) {
        Ok(m) if dir && m.is_dir() => None,
        Ok(m) if !dir && m.is_file() => None,
        Ok(_) if dir => Some("not a directory".into()),
        Ok(_) => Some("not a regular file".into()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Some(
            if dir {
                "no such directory"
            } else {
                "no such file"
            }
            .into(),
        ),
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => Some("permission denied".into()),
        Err(e) => Some(e.to_string()),
    }
}

/// Opens files by path, keeping the directory of the last one open: a bulk
/// check opens thousands of files in a few directories, and each open then
/// looks up one name where a whole path would walk every directory of it.
/// (The directory is the one that was there at its first file: a bulk
/// audit reads a corpus that is not being moved under it.)
#[derive(Default)]
pub struct DirOpener {
    dir: Option<(PathBuf, std::os::fd::OwnedFd)>,
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
        let body = vec![b'x'; LINE_SLACK * 3];
        let mut buf = b"kept".to_vec();
        let total = read_limited_into(&body[..], Some(10), &mut buf).expect("read");
        assert_eq!(total, body.len() as u64);
        assert_eq!(buf.len(), 4 + 10 + LINE_SLACK);
        assert!(buf.starts_with(b"kept"));
    }

    #[test]
    fn gzip_is_known_by_its_bytes_and_counted_as_read() {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(b"one\ntwo\n").expect("gzip");
        let gz = gz.finish().expect("gzip");
        for (body, want) in [(gz.clone(), "one\ntwo\n"), (b"plain\n".to_vec(), "plain\n")] {
            let read = Arc::new(AtomicU64::new(0));
            let mut text = String::new();
            counted_maybe_gzip(io::Cursor::new(body.clone()), read.clone())
                .expect("open")
                .read_to_string(&mut text)
                .expect("read");
            assert_eq!(text, want);
            assert_eq!(read.load(Ordering::Relaxed), body.len() as u64);
        }
    }

    #[test]
    fn what_is_wrong_at_a_path_is_said() {
        let d = tempfile::tempdir().expect("tempdir");
        let f = d.path().join("f");
        std::fs::write(&f, b"x").expect("write");
        assert_eq!(wrong_at(d.path(), true), None);
        assert_eq!(wrong_at(&f, false), None);
        assert_eq!(wrong_at(&f, true).as_deref(), Some("not a directory"));
        assert_eq!(
            wrong_at(d.path(), false).as_deref(),
            Some("not a regular file")
        );
        let none = d.path().join("none");
        assert_eq!(wrong_at(&none, true).as_deref(), Some("no such directory"));
        assert_eq!(wrong_at(&none, false).as_deref(), Some("no such file"));
    }
}
