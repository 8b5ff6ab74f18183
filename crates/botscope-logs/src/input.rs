//! Log input: files, stdin or any reader (plain or gzip, multi-member,
//! detected by magic bytes); cut into chunks of whole lines for the
//! parsing threads.
//! A line is never buffered past [`MAX_LINE_BYTES`]: a longer one (even a
//! gigabyte without a newline) is skipped to its end and counted.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::PathBuf;

use botscope_accesslog::MAX_LINE_BYTES;
use flate2::bufread::MultiGzDecoder;

use crate::Progress;

/// Where a log comes from.
pub enum Source {
    /// A file (plain or gzip).
    File(PathBuf),
    /// Standard input.
    Stdin,
    /// Any reader, with a name for the report.
    Reader(String, Box<dyn Read + Send>),
}

impl Source {
    /// `-` is standard input, anything else a file.
    pub fn from_arg(arg: impl Into<PathBuf>) -> Source {
        let p: PathBuf = arg.into();
        if p.as_os_str() == "-" {
            Source::Stdin
        } else {
            Source::File(p)
        }
    }

    /// The name the report gives it.
    pub fn name(&self) -> String {
        match self {
            Source::File(p) => p.display().to_string(),
            Source::Stdin => "-".to_owned(),
            Source::Reader(n, _) => n.clone(),
        }
    }

    /// Its size, when known before reading (for progress).
    pub fn size(&self) -> Option<u64> {
        match self {
            Source::File(p) => std::fs::metadata(p).ok().map(|m| m.len()),
            _ => None,
        }
    }
}

impl std::fmt::Debug for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Source({})", self.name())
    }
}

/// Bytes per chunk handed to a parsing thread.
pub const CHUNK_BYTES: usize = 1 << 20;

/// Whole lines of one input.
#[derive(Debug)]
pub struct Chunk {
    /// Line number (1-based, in its input) of the first line of its bytes.
    pub first_line: u64,
    /// The buffer: its first `len` bytes are the chunk's, the rest are
    /// left from earlier use (a recycled buffer is never zeroed again).
    data: Vec<u8>,
    len: usize,
    /// Line numbers of lines over the limit, skipped.
    pub too_long: Vec<u64>,
}

impl Chunk {
    /// Whole lines, each ending in `\n` (the last line of an input may
    /// lack it).
    pub fn bytes(&self) -> &[u8] {
        &self.data[..self.len]
    }

    /// The buffer, for [`chunks`] to fill again.
    pub fn into_buffer(self) -> Vec<u8> {
        self.data
    }
}

/// Opens an input; gzip is recognised by its magic bytes, whatever the
/// name. Raw bytes read are reported to `progress`.
pub fn open<'p>(source: Source, progress: &'p dyn Progress) -> io::Result<Box<dyn Read + 'p>> {
    let raw: Box<dyn Read + Send> = match source {
        Source::File(p) => Box::new(File::open(p)?),
        Source::Stdin => Box::new(io::stdin()),
        Source::Reader(_, r) => r,
    };
    // Small: it only sniffs the gzip magic and feeds the decoder. Plain
    // reads, asked in blocks larger than it, go past it straight into the
    // chunk's buffer once the sniffed head is drained.
    let mut buffered = BufReader::with_capacity(
        32 * 1024,
        Counting {
            inner: raw,
            progress,
        },
    );
    let head = buffered.fill_buf()?;
    if head.len() >= 2 && head[0] == 0x1f && head[1] == 0x8b {
        Ok(Box::new(MultiGzDecoder::new(buffered)))
    } else {
        Ok(Box::new(buffered))
    }
}

/// Reports raw bytes read (for a progress bar).
struct Counting<'p, R> {
    inner: R,
    progress: &'p dyn Progress,
}

impl<R: Read> Read for Counting<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.progress.stopped() {
            // Not `Interrupted`: readers retry that one.
            return Err(io::Error::other("stopped"));
        }
        let n = self.inner.read(buf)?;
        self.progress.read(n as u64);
        Ok(n)
    }
}

/// What reading one input gave.
#[derive(Debug, Default)]
pub struct ReadStats {
    /// Bytes read (decompressed).
    pub bytes: u64,
    /// Lines.
    pub lines: u64,
    /// The error that stopped reading, after everything before it was
    /// handed on.
    pub error: Option<String>,
}

/// Bytes asked of the reader at a time.
const BLOCK: usize = 256 * 1024;

/// Room in a buffer: a chunk, one more block and the unterminated tail,
/// so that it never grows.
const BUFFER_BYTES: usize = CHUNK_BYTES + BLOCK + MAX_LINE_BYTES;

/// A buffer for [`chunks`]. It is zeroed once, here: reads go into it as
/// into any initialised slice, so a recycled buffer costs nothing to fill
/// again (a `Vec`'s spare room would be zeroed before every read).
pub fn buffer() -> Vec<u8> {
    vec![0; BUFFER_BYTES]
}

/// Reads into `buf` until it is full or the input ends (`Ok(0)`), as
/// `read_to_end` on a `take` would: the bytes read and the error that
/// stopped it, if any.
fn fill(r: &mut impl Read, buf: &mut [u8]) -> (usize, Option<io::Error>) {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return (n, Some(e)),
        }
    }
    (n, None)
}

/// Reads `r` to its end (or first error), handing chunks of whole lines to
/// `sink`; `fresh` supplies buffers (recycled ones, or [`buffer`]).
/// Returns what was read; a read error ends the input but everything
/// before it has been handed on.
pub fn chunks(
    mut r: impl Read,
    mut fresh: impl FnMut() -> Vec<u8>,
    mut sink: impl FnMut(Chunk) -> bool,
) -> ReadStats {
    let mut fresh = move || {
        let mut b = fresh();
        if b.len() < BUFFER_BYTES {
            b.resize(BUFFER_BYTES, 0);
        }
        b
    };
    let mut stats = ReadStats::default();
    let mut buf: Vec<u8> = fresh();
    // Bytes of `buf` in use.
    let mut len = 0usize;
    let mut line = 1u64; // number of the first line in buf
    let mut too_long: Vec<u64> = Vec::new();
    // Skipping the rest of an over-long line.
    let mut skipping = false;
    loop {
        // Straight into the chunk's buffer: no copy on the way.
        let old = len;
        let (n, err) = fill(&mut r, &mut buf[old..old + BLOCK]);
        len += n;
        stats.bytes += n as u64;
        if let Some(e) = &err {
            stats.error = Some(describe(e));
        }
        if skipping && n > 0 {
            match memchr::memchr(b'\n', &buf[old..len]) {
                Some(i) => {
                    skipping = false;
                    buf.copy_within(old + i + 1..len, old);
                    len -= i + 1;
                    line += 1;
                }
                None => len = old,
            }
        }
        // Cut over-long lines out of the unterminated tail.
        let tail_start = memchr::memrchr(b'\n', &buf[..len]).map_or(0, |i| i + 1);
        if len - tail_start > MAX_LINE_BYTES {
            too_long.push(line + count_lines(&buf[..tail_start]));
            len = tail_start;
            skipping = true;
        }
        if n == 0 || err.is_some() {
            break;
        }
        if len >= CHUNK_BYTES || skipping {
            let whole = memchr::memrchr(b'\n', &buf[..len]).map_or(0, |i| i + 1);
            if whole > 0 || !too_long.is_empty() {
                let mut next = fresh();
                next[..len - whole].copy_from_slice(&buf[whole..len]);
                let lines = count_lines(&buf[..whole]);
                let chunk = Chunk {
                    first_line: line,
                    data: std::mem::replace(&mut buf, next),
                    len: whole,
                    too_long: std::mem::take(&mut too_long),
                };
                len -= whole;
                stats.lines += lines + chunk.too_long.len() as u64;
                line += lines + chunk.too_long.len() as u64;
                // The over-long line's number was taken before the skip.
                if skipping {
                    line -= 1;
                }
                if !sink(chunk) {
                    return stats;
                }
            }
        }
    }
    if skipping {
        // The input ended inside an over-long line: it is counted.
        line += 1;
    }
    if len > 0 || !too_long.is_empty() {
        let data = &buf[..len];
        let lines = count_lines(data) + u64::from(len > 0 && data.last() != Some(&b'\n'));
        stats.lines += lines + too_long.len() as u64;
        sink(Chunk {
            first_line: line,
            data: buf,
            len,
            too_long,
        });
    }
    stats
}

fn count_lines(b: &[u8]) -> u64 {
    memchr::memchr_iter(b'\n', b).count() as u64
}

fn describe(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::UnexpectedEof => "the input ends early (a truncated gzip file?)".into(),
        io::ErrorKind::InvalidInput | io::ErrorKind::InvalidData => {
            format!("the input is damaged ({e})")
        }
        _ => e.to_string(),
    }
}

/// The lines of a chunk: (line number, bytes without `\r\n`). Over-long
/// lines come back as `None` at their place.
pub fn lines(chunk: &Chunk) -> impl Iterator<Item = (u64, Option<&[u8]>)> {
    let mut too_long = chunk.too_long.iter().peekable();
    let mut n = chunk.first_line;
    let mut rest: &[u8] = chunk.bytes();
    std::iter::from_fn(move || {
        if let Some(&&t) = too_long.peek()
            && t == n
        {
            too_long.next();
            n += 1;
            return Some((t, None));
        }
        if rest.is_empty() {
            // Over-long lines at the very end.
            let t = *too_long.next()?;
            return Some((t, None));
        }
        let (line, next) = match memchr::memchr(b'\n', rest) {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, &rest[rest.len()..]),
        };
        rest = next;
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let this = n;
        n += 1;
        // An over-long line that arrived whole within one read.
        Some((this, (line.len() <= MAX_LINE_BYTES).then_some(line)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    type Lines = Vec<(u64, Option<Vec<u8>>)>;

    fn all(data: &[u8]) -> (Lines, ReadStats) {
        let mut out = Vec::new();
        // Feed through a reader that returns 7 bytes at a time.
        struct Slow<'a>(&'a [u8]);
        impl Read for Slow<'_> {
            fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
                let n = self.0.len().min(7).min(b.len());
                b[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let stats = chunks(Slow(data), buffer, |c| {
            out.extend(lines(&c).map(|(n, l)| (n, l.map(<[u8]>::to_vec))));
            true
        });
        (out, stats)
    }

    #[test]
    fn numbering_with_long_lines() {
        let long = vec![b'x'; MAX_LINE_BYTES + 10];
        let mut data = b"a\r\nb\n".to_vec();
        data.extend_from_slice(&long);
        data.extend_from_slice(b"\nc\n");
        data.extend_from_slice(&long);
        let (v, stats) = all(&data);
        assert_eq!(
            v,
            vec![
                (1, Some(b"a".to_vec())),
                (2, Some(b"b".to_vec())),
                (3, None),
                (4, Some(b"c".to_vec())),
                (5, None),
            ]
        );
        assert_eq!(stats.lines, 5);
        assert!(stats.error.is_none());
    }

    #[test]
    fn recycled_buffers_leave_nothing_behind() {
        // Buffers handed back full of an earlier chunk's bytes (newlines
        // here): only what was read this time is in a chunk.
        let mut data = Vec::new();
        for i in 0..300_000 {
            data.extend_from_slice(format!("line {i}\n").as_bytes());
        }
        data.extend_from_slice(b"last");
        let mut got = Vec::new();
        let stale = || vec![b'\n'; CHUNK_BYTES];
        let stats = chunks(&data[..], stale, |c| {
            got.extend_from_slice(c.bytes());
            true
        });
        assert_eq!(got, data);
        assert_eq!(stats.lines, 300_001);
        assert_eq!(stats.bytes, data.len() as u64);
    }

    #[test]
    fn last_line_without_newline() {
        let (v, stats) = all(b"a\nb");
        assert_eq!(v, vec![(1, Some(b"a".to_vec())), (2, Some(b"b".to_vec()))]);
        assert_eq!(stats.lines, 2);
    }

    #[test]
    fn truncated_gzip_keeps_what_came_before() {
        use std::io::Write;
        let mut text = Vec::new();
        for i in 0..20_000 {
            writeln!(text, "line {i}").expect("write");
        }
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&text).expect("gz");
        let whole = gz.finish().expect("gz");
        // Two members, then cut the second one short.
        let mut two = whole.clone();
        two.extend_from_slice(&whole[..whole.len() / 2]);
        let dir = botscope_testkit::tempdir();
        let path = dir.path().join("trunc.gz");
        std::fs::write(&path, &two).expect("write");
        let r = open(Source::File(path), &crate::NoProgress).expect("open");
        let mut got = 0u64;
        let stats = chunks(r, buffer, |c| {
            got += lines(&c).count() as u64;
            true
        });
        assert!(stats.error.is_some(), "{stats:?}");
        assert!(
            got > 20_000,
            "the first member and part of the second: {got}"
        );
        assert_eq!(got, stats.lines);
    }
}
