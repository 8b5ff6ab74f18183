//! A raw HTTP/1.1 answer read off a connection, for tests that speak to a
//! server byte by byte (`Connection: close`; chunked bodies decoded).

use std::io::Read;

/// A response: status, headers in order, body as text.
#[derive(Debug, Clone)]
pub struct Res {
    /// The status code.
    pub status: u16,
    /// The headers, names as sent.
    pub headers: Vec<(String, String)>,
    /// The body (lossy UTF-8).
    pub body: String,
    /// The body's bytes (dechunked).
    pub raw_body: Vec<u8>,
}

impl Res {
    /// The first header called `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON (panics with the body when it is not).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }
}

/// Reads everything until the server closes and parses it; `what` names
/// the request in a panic.
pub fn read_response(mut s: impl Read, what: &str) -> Res {
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    parse_response(&raw, what)
}

/// Parses a whole response.
pub fn parse_response(raw: &[u8], what: &str) -> Res {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no response to {what}: {:?}", String::from_utf8_lossy(raw)));
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut body = raw[split + 4..].to_vec();
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line in the response to {what}: {head:?}"));
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect();
    if headers
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"))
    {
        body = dechunk(&body);
    }
    Res {
        status,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
        raw_body: body,
    }
}

fn dechunk(mut b: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(eol) = b.windows(2).position(|w| w == b"\r\n") {
        let n = usize::from_str_radix(String::from_utf8_lossy(&b[..eol]).trim(), 16).unwrap_or(0);
        if n == 0 || b.len() < eol + 2 + n {
            break;
        }
        out.extend_from_slice(&b[eol + 2..eol + 2 + n]);
        b = &b[(eol + 4 + n).min(b.len())..];
    }
    out
}

/// Reads one response off a kept-alive connection: its head, then as
/// much body as `Content-Length` or the chunks say (none for 1xx, 204 and
/// 304; to the end when neither is sent). `None` when the server closed
/// before a whole head.
pub fn read_one(r: &mut impl std::io::BufRead) -> Option<Res> {
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        let mut line = Vec::new();
        if r.read_until(b'\n', &mut line).ok()? == 0 {
            return None;
        }
        head.extend_from_slice(&line);
    }
    let mut res = parse_response(&head, "a kept-alive request");
    let mut body = Vec::new();
    let length = res
        .header("content-length")
        .and_then(|v| v.parse::<usize>().ok());
    let chunked = res
        .header("transfer-encoding")
        .is_some_and(|v| v.contains("chunked"));
    if (100..200).contains(&res.status) || res.status == 204 || res.status == 304 {
    } else if chunked {
        loop {
            let mut size = String::new();
            r.read_line(&mut size).ok()?;
            let n = usize::from_str_radix(size.trim().split(';').next().unwrap_or(""), 16).ok()?;
            let mut chunk = vec![0u8; n + 2];
            r.read_exact(&mut chunk).ok()?;
            if n == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..n]);
        }
    } else if let Some(n) = length {
        body.resize(n, 0);
        r.read_exact(&mut body).ok()?;
    } else {
        let _ = r.read_to_end(&mut body);
    }
    res.body = String::from_utf8_lossy(&body).into_owned();
    res.raw_body = body;
    Some(res)
}
