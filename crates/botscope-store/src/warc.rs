//! WARC records (ISO 28500, WARC/1.0 and 1.1) as Common Crawl publishes
//! its robots.txt subsets: a `response` record per fetch, its block the
//! HTTP response as received. Reading is bounded: a record header over
//! [`MAX_HEADER_BYTES`] or a block over [`MAX_BLOCK_BYTES`] is skipped
//! and reported, never buffered; a damaged file yields the records before
//! the damage and then an error.

use std::io::{self, BufRead, Read, Write};

use crate::StoreError;

/// Longest record header (the named fields).
pub const MAX_HEADER_BYTES: usize = 64 * 1024;
/// Largest block kept; a larger one is skipped (robots.txt bodies are
/// parsed to 500 KiB, and Common Crawl truncates its payloads well below
/// this).
pub const MAX_BLOCK_BYTES: u64 = 16 * 1024 * 1024;

/// One record: its named fields and its block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// `WARC/1.0` or `WARC/1.1`.
    pub version: String,
    /// Named fields in order (names as written).
    pub fields: Vec<(String, String)>,
    /// The block.
    pub block: Vec<u8>,
}

impl Record {
    /// A field by name, case-insensitively.
    pub fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// What reading the next record gave.
#[derive(Debug)]
pub enum Next {
    /// A record.
    Record(Record),
    /// A record that was skipped, with the reason (over a size limit).
    Skipped(String),
    /// The end of the input.
    End,
}

/// Reads records one after the other from a (decompressed) stream.
pub struct Reader<R> {
    inner: R,
    offset: u64,
}

impl<R: BufRead> Reader<R> {
    /// A reader over `inner`.
    pub fn new(inner: R) -> Self {
        Reader { inner, offset: 0 }
    }

    fn line(&mut self, limit: usize) -> Result<Option<Vec<u8>>, StoreError> {
        let mut buf = Vec::new();
        let offset = self.offset;
        let n = (&mut self.inner)
            .take(limit as u64 + 1)
            .read_until(b'\n', &mut buf)
            .map_err(|source| StoreError::WarcRead { offset, source })?;
        self.offset += n as u64;
        if n == 0 {
            return Ok(None);
        }
        if buf.len() > limit {
            return Err(StoreError::WarcFormat {
                offset,
                what: "a header line over the size limit".into(),
            });
        }
        while matches!(buf.last(), Some(b'\n' | b'\r')) {
            buf.pop();
        }
        Ok(Some(buf))
    }

    /// The next record.
    pub fn next_record(&mut self) -> Result<Next, StoreError> {
        // Blank lines between records (the record end is two CRLFs).
        let start;
        let version = loop {
            let at = self.offset;
            match self.line(MAX_HEADER_BYTES)? {
                None => return Ok(Next::End),
                Some(l) if l.is_empty() => continue,
                Some(l) => {
                    start = at;
                    break l;
                }
            }
        };
        let version = String::from_utf8_lossy(&version).into_owned();
        if !version.starts_with("WARC/") {
            return Err(StoreError::WarcFormat {
                offset: start,
                what: format!(
                    "expected a `WARC/` version line, found {:?}",
                    clip(&version)
                ),
            });
        }
        let mut fields: Vec<(String, String)> = Vec::new();
        let mut header_bytes = 0usize;
        loop {
            let Some(l) = self.line(MAX_HEADER_BYTES)? else {
                return Err(StoreError::WarcRead {
                    offset: self.offset,
                    source: io::ErrorKind::UnexpectedEof.into(),
                });
            };
            if l.is_empty() {
                break;
            }
            header_bytes += l.len();
            if header_bytes > MAX_HEADER_BYTES {
                return Err(StoreError::WarcFormat {
                    offset: start,
                    what: "a record header over the size limit".into(),
                });
            }
            let l = String::from_utf8_lossy(&l).into_owned();
            if l.starts_with([' ', '\t']) {
                // A continuation line.
                if let Some((_, v)) = fields.last_mut() {
                    v.push(' ');
                    v.push_str(l.trim());
                }
                continue;
            }
            let Some((k, v)) = l.split_once(':') else {
                return Err(StoreError::WarcFormat {
                    offset: start,
                    what: format!("a header line without a colon: {:?}", clip(&l)),
                });
            };
            fields.push((k.trim().to_owned(), v.trim().to_owned()));
        }
        let len = fields
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
            .and_then(|(_, v)| v.parse::<u64>().ok())
            .ok_or_else(|| StoreError::WarcFormat {
                offset: start,
                what: "no valid Content-Length".into(),
            })?;
        if len > MAX_BLOCK_BYTES {
            let offset = self.offset;
            let skipped = io::copy(&mut (&mut self.inner).take(len), &mut io::sink())
                .map_err(|source| StoreError::WarcRead { offset, source })?;
            self.offset += skipped;
            if skipped < len {
                return Err(StoreError::WarcRead {
                    offset: self.offset,
                    source: io::ErrorKind::UnexpectedEof.into(),
                });
            }
            return Ok(Next::Skipped(format!(
                "record at byte {start}: a block of {len} bytes, over the {MAX_BLOCK_BYTES}-byte limit"
            )));
        }
        let mut block = Vec::with_capacity(len as usize);
        let offset = self.offset;
        let got = (&mut self.inner)
            .take(len)
            .read_to_end(&mut block)
            .map_err(|source| StoreError::WarcRead { offset, source })?;
        self.offset += got as u64;
        if (got as u64) < len {
            return Err(StoreError::WarcRead {
                offset: self.offset,
                source: io::ErrorKind::UnexpectedEof.into(),
            });
        }
        Ok(Next::Record(Record {
            version,
            fields,
            block,
        }))
    }
}

fn clip(s: &str) -> &str {
    let mut end = s.len().min(60);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// The longest HTTP head read.
const MAX_HTTP_HEAD: usize = 64 * 1024;
/// Header fields read at most.
const MAX_HTTP_FIELDS: usize = 256;

/// An HTTP response from a record's block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpResponse {
    /// The status code.
    pub status: u16,
    /// Headers in order.
    pub headers: Vec<(String, String)>,
    /// The body, de-chunked and decompressed when the headers say so.
    pub body: Vec<u8>,
}

impl HttpResponse {
    /// A header by name, case-insensitively.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Why a record's block is not an HTTP response.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadResponse(pub String);

/// Reads the HTTP response in a block (`HTTP/1.1 200 OK`, headers, body).
/// The body is cut at `cap` bytes (after de-chunking and decompression).
pub fn parse_http_response(block: &[u8], cap: usize) -> Result<HttpResponse, BadResponse> {
    read_response(block, cap).map_err(BadResponse)
}

fn read_response(block: &[u8], cap: usize) -> Result<HttpResponse, String> {
    let head = &block[..block.len().min(MAX_HTTP_HEAD)];
    if !head.starts_with(b"HTTP/") {
        let line = head.split(|&b| b == b'\n').next().unwrap_or_default();
        return Err(format!(
            "not an HTTP status line: {:?}",
            clip(&String::from_utf8_lossy(line))
        ));
    }
    // Archives record HTTP/2 and HTTP/3 responses with their own version
    // in the status line; httparse reads HTTP/1.x, so such a head is read
    // as HTTP/1.1 (the fields are the same).
    let version_end = head.iter().position(|&b| b == b' ').unwrap_or(head.len());
    let fixed: Vec<u8>;
    let (input, shift) = match &head[..version_end] {
        b"HTTP/1.0" | b"HTTP/1.1" => (head, 0),
        _ => {
            fixed = [&b"HTTP/1.1"[..], &head[version_end..]].concat();
            (&fixed[..], version_end)
        }
    };
    let mut fields = [httparse::EMPTY_HEADER; MAX_HTTP_FIELDS];
    let mut resp = httparse::Response::new(&mut fields);
    let parsed = httparse::ParserConfig::default()
        .allow_multiple_spaces_in_response_status_delimiters(true)
        .allow_obsolete_multiline_headers_in_responses(true)
        .allow_spaces_after_header_name_in_responses(true)
        .parse_response(&mut resp, input);
    let head_len = match parsed {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Err("no end of the HTTP header".into()),
        Err(httparse::Error::Status | httparse::Error::Version) => {
            let line = head.split(|&b| b == b'\n').next().unwrap_or_default();
            return Err(format!(
                "no status code in {:?}",
                clip(String::from_utf8_lossy(line).trim_end())
            ));
        }
        Err(e) => return Err(format!("an HTTP header that cannot be read ({e})")),
    };
    let status = resp
        .code
        .filter(|s| (100..=999).contains(s))
        .ok_or("no status code")?;
    let headers: Vec<(String, String)> = resp
        .headers
        .iter()
        .map(|h| {
            (
                h.name.to_owned(),
                String::from_utf8_lossy(h.value).trim().to_owned(),
            )
        })
        .collect();
    // Where the body starts in the block.
    let body_start = if shift > 0 {
        head_len - "HTTP/1.1".len() + shift
    } else {
        head_len
    };
    let mut r = HttpResponse {
        status,
        headers,
        body: Vec::new(),
    };
    let raw = block.get(body_start..).unwrap_or_default();
    let chunked = r
        .header("transfer-encoding")
        .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
    let body = if chunked {
        dechunk(raw, cap.saturating_mul(4).max(cap))
    } else {
        raw.to_vec()
    };
    let gzip = r
        .header("content-encoding")
        .is_some_and(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "gzip" | "x-gzip"));
    let mut body = if gzip {
        let mut out = Vec::new();
        // A damaged stream keeps what was decoded before the damage.
        let _ = flate2::read::MultiGzDecoder::new(&body[..])
            .take(cap as u64 + 1)
            .read_to_end(&mut out);
        out
    } else {
        body
    };
    body.truncate(cap);
    r.body = body;
    Ok(r)
}

fn find(h: &[u8], n: &[u8]) -> Option<usize> {
    h.windows(n.len()).position(|w| w == n)
}

/// Undoes chunked transfer coding, keeping at most `limit` bytes; a cut
/// stream keeps what came before the cut.
fn dechunk(mut b: &[u8], limit: usize) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(eol) = find(b, b"\n") {
        let size_text = String::from_utf8_lossy(&b[..eol]);
        let size_text = size_text.trim().split(';').next().unwrap_or_default();
        let Ok(size) = usize::from_str_radix(size_text.trim(), 16) else {
            break;
        };
        b = &b[eol + 1..];
        if size == 0 {
            break;
        }
        let take = size.min(b.len());
        out.extend_from_slice(&b[..take]);
        if out.len() >= limit {
            out.truncate(limit);
            break;
        }
        b = &b[take..];
        b = b
            .strip_prefix(b"\r\n")
            .or_else(|| b.strip_prefix(b"\n"))
            .unwrap_or(b);
    }
    out
}

/// Writes one record: the version line, the fields (Content-Length is
/// added), the block and the two CRLFs that end it.
pub fn write_record(
    out: &mut (impl Write + ?Sized),
    fields: &[(&str, String)],
    block: &[u8],
) -> io::Result<()> {
    let mut head = String::from("WARC/1.1\r\n");
    for (k, v) in fields {
        // Field values never carry line breaks.
        let v: String = v.chars().filter(|c| !matches!(c, '\r' | '\n')).collect();
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n", block.len()));
    out.write_all(head.as_bytes())?;
    out.write_all(block)?;
    out.write_all(b"\r\n\r\n")
}

/// `sha1:` and the SHA-1 of `bytes` in base32 (RFC 4648, no padding is
/// needed for 20 bytes), the digest form WARC 1.1 and the tools that read
/// it (warcio, pywb, wget) expect in `WARC-Payload-Digest`.
pub fn sha1_digest(bytes: &[u8]) -> String {
    use sha1::Digest;
    const ALPHABET: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let d = sha1::Sha1::digest(bytes);
    let mut out = String::from("sha1:");
    // 160 bits in 32 groups of five.
    let mut acc: u64 = 0;
    let mut n = 0u32;
    for &b in d.iter() {
        acc = (acc << 8) | u64::from(b);
        n += 8;
        while n >= 5 {
            n -= 5;
            out.push(ALPHABET[((acc >> n) & 31) as usize] as char);
        }
    }
    out
}

/// The reason phrase of the common statuses a robots.txt fetch stores.
pub fn reason_phrase(status: u16) -> &'static str {
    match status {
        200 => "OK",
        203 => "Non-Authoritative Information",
        206 => "Partial Content",
        _ => "",
    }
}

/// A record id from a digest: `<urn:uuid:…>` shaped like a version 8 UUID.
pub fn record_id(digest: &[u8; 32], salt: &str) -> String {
    let mut h = blake3::Hasher::new();
    h.update(digest);
    h.update(salt.as_bytes());
    let b = h.finalize();
    let b = b.as_bytes();
    let hex: String = b[..16].iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "<urn:uuid:{}-{}-8{}-{}-{}>",
        &hex[..8],
        &hex[8..12],
        &hex[13..16],
        &hex[16..20],
        &hex[20..32]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha1_digests_in_base32() {
        // Known values: warcio's digest of an empty payload, and of "abc".
        assert_eq!(sha1_digest(b""), "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ");
        assert_eq!(sha1_digest(b"abc"), "sha1:VGMT4NSHA2AWVOR6EVYXQUGCNSONBWE5");
    }

    fn read_all(data: &[u8]) -> (Vec<Record>, Vec<String>, Option<String>) {
        let mut r = Reader::new(data);
        let (mut recs, mut skipped) = (Vec::new(), Vec::new());
        loop {
            match r.next_record() {
                Ok(Next::Record(x)) => recs.push(x),
                Ok(Next::Skipped(why)) => skipped.push(why),
                Ok(Next::End) => return (recs, skipped, None),
                Err(e) => return (recs, skipped, Some(e.to_string())),
            }
        }
    }

    #[test]
    fn round_trip() {
        let mut out = Vec::new();
        let http =
            b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nUser-agent: *\nDisallow: /x\n";
        write_record(
            &mut out,
            &[
                ("WARC-Type", "response".into()),
                ("WARC-Target-URI", "https://example.com/robots.txt".into()),
            ],
            http,
        )
        .expect("write");
        write_record(&mut out, &[("WARC-Type", "warcinfo".into())], b"x").expect("write");
        let (recs, skipped, err) = read_all(&out);
        assert!(err.is_none() && skipped.is_empty());
        assert_eq!(recs.len(), 2);
        assert_eq!(recs[0].field("warc-type"), Some("response"));
        assert_eq!(recs[0].block, http);
        let resp = parse_http_response(&recs[0].block, 500 * 1024).expect("http");
        assert_eq!(resp.status, 200);
        assert_eq!(resp.header("content-type"), Some("text/plain"));
        assert_eq!(resp.body, b"User-agent: *\nDisallow: /x\n");
    }

    #[test]
    fn damage_keeps_what_came_before() {
        let mut out = Vec::new();
        write_record(
            &mut out,
            &[("WARC-Type", "response".into())],
            b"HTTP/1.1 404 Not Found\r\n\r\n",
        )
        .expect("write");
        let whole = out.len();
        write_record(
            &mut out,
            &[("WARC-Type", "response".into())],
            b"HTTP/1.1 200 OK\r\n\r\nabc",
        )
        .expect("write");
        let (recs, _, err) = read_all(&out[..whole + 40]);
        assert_eq!(recs.len(), 1);
        assert!(err.is_some());
        let (recs, _, err) = read_all(b"GET / HTTP/1.1\r\n\r\n");
        assert!(recs.is_empty());
        assert!(err.expect("error").contains("WARC/"));
    }

    #[test]
    fn oversized_block_is_skipped_not_buffered() {
        let big = format!(
            "WARC/1.0\r\nWARC-Type: response\r\nContent-Length: {}\r\n\r\n",
            MAX_BLOCK_BYTES + 1
        );
        let mut data = big.into_bytes();
        data.extend(std::iter::repeat_n(b'x', (MAX_BLOCK_BYTES + 1) as usize));
        data.extend_from_slice(b"\r\n\r\n");
        let (recs, skipped, err) = read_all(&data);
        assert!(recs.is_empty() && err.is_none());
        assert_eq!(skipped.len(), 1);
    }

    #[test]
    fn chunked_and_gzip_bodies() {
        let block = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nUser-\r\n3\r\nage\r\n0\r\n\r\n";
        let r = parse_http_response(block, 100).expect("http");
        assert_eq!(r.body, b"User-age");
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(b"Disallow: /\n").expect("gz");
        let mut block = b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n\r\n".to_vec();
        block.extend(gz.finish().expect("gz"));
        let r = parse_http_response(&block, 100).expect("http");
        assert_eq!(r.body, b"Disallow: /\n");
        let r = parse_http_response(b"HTTP/1.1 200 OK\r\n\r\n0123456789", 4).expect("http");
        assert_eq!(r.body, b"0123");
        assert!(parse_http_response(b"garbage", 4).is_err());
        assert!(parse_http_response(b"HTTP/1.1 abc\r\n\r\n", 4).is_err());
    }

    #[test]
    fn http2_heads_folded_fields_and_bare_newlines() {
        let r = parse_http_response(
            b"HTTP/2 200\r\ncontent-type: text/plain\r\n\r\nUser-agent: *\n",
            100,
        )
        .expect("http/2");
        assert_eq!(
            (r.status, r.header("Content-Type")),
            (200, Some("text/plain"))
        );
        assert_eq!(r.body, b"User-agent: *\n");
        let r = parse_http_response(b"HTTP/1.0 404 Not Found\nX-A: one\n two\n\nbody", 100)
            .expect("folded, LF only");
        assert_eq!(r.status, 404);
        assert_eq!(r.body, b"body");
        assert!(r.header("x-a").is_some_and(|v| v.starts_with("one")));
        let e = parse_http_response(b"HTTP/1.1 200 OK\r\nX: y\r\n", 100).expect_err("no end");
        assert_eq!(e.to_string(), "no end of the HTTP header");
    }

    #[test]
    fn record_ids_look_like_uuids() {
        let id = record_id(&[7; 32], "a");
        assert_eq!(id.len(), "<urn:uuid:>".len() + 36);
        assert_ne!(id, record_id(&[7; 32], "b"));
    }
}
