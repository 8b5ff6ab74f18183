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
///
/// A file is read straight into the result (no buffer between, no size
/// query: open, the reads, close), as a bulk check reads thousands of
/// small files; a first guess of 16 KiB holds most robots.txt files, a
/// larger one grows.
pub fn read_limited(path: &Path, limit: Option<usize>) -> Result<(Vec<u8>, u64)> {
    let failed = || format!("failed to read {}", display(path));
    let keep = limit.map_or(u64::MAX, |cap| {
        cap.saturating_add(botscope_robotstxt::MAX_LINE_LEN + 1) as u64
    });
    let mut reader: Box<dyn Read> = if path == Path::new("-") {
        Box::new(io::stdin().lock())
    } else {
        Box::new(File::open(path).with_context(|| format!("failed to open {}", path.display()))?)
    };
    let mut buf = Vec::with_capacity(usize::try_from(keep.min(16 * 1024)).unwrap_or(16 * 1024));
    (&mut reader)
        .take(keep)
        .read_to_end(&mut buf)
        .with_context(failed)?;
    let mut total = buf.len() as u64;
    if total == keep {
        total += io::copy(&mut reader, &mut io::sink()).with_context(failed)?;
    }
    Ok((buf, total))
}
