//! Lines of a stranger's file read with a bound on what is kept.

use std::io::BufRead;

/// Reads one line (through its newline, or to the end of the input) and
/// appends it to `buf`, keeping at most `max` + 1 bytes there, so a caller
/// can tell a line over `max` bytes (newline included) without holding
/// it: the rest is read and dropped. Returns the bytes read (0 at the
/// end).
///
/// ```
/// let mut r: &[u8] = b"short\nfar too long\n";
/// let mut buf = Vec::new();
/// assert_eq!(botscope_text::read_line_capped(&mut r, &mut buf, 8).unwrap(), 6);
/// assert_eq!(buf, b"short\n");
/// buf.clear();
/// assert_eq!(botscope_text::read_line_capped(&mut r, &mut buf, 8).unwrap(), 13);
/// assert_eq!(buf, b"far too l");
/// ```
pub fn read_line_capped(
    r: &mut dyn BufRead,
    buf: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<usize> {
    let mut total = 0;
    loop {
        let chunk = match r.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            return Ok(total);
        }
        let (take, done) = match memchr::memchr(b'\n', chunk) {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        let room = (max + 1).saturating_sub(buf.len());
        buf.extend_from_slice(&chunk[..take.min(room)]);
        r.consume(take);
        total += take;
        if done {
            return Ok(total);
        }
    }
}
