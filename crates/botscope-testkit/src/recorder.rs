//! An application that records exactly what it receives: each request's
//! line and header lines as they came over the wire, on loopback, from
//! raw sockets (no HTTP library to normalise them). It answers `404` to a
//! target ending in `/missing`, and otherwise `200` with
//! the request line as its body; `/te-and-cl` with both
//! `Transfer-Encoding: chunked` and a `Content-Length` shorter than the
//! body; a request with an `Upgrade` header (or every request, as set)
//! with `101 Switching Protocols`, after which it reads the connection on
//! as further HTTP/1.1 requests, as a server that took a tunnel would.
//! What a gate in front of it let through is then [`Recorder::lines`].

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What the application names in its 101.
#[derive(Debug, Clone)]
pub enum Switch {
    /// The first token of the client's `Upgrade`.
    Echo,
    /// This protocol, whatever was asked.
    Name(&'static str),
    /// No `Upgrade` header in the 101.
    Unnamed,
}

/// When the application answers 101.
#[derive(Debug, Clone)]
pub struct Upgrades {
    /// The protocol named.
    pub switch: Switch,
    /// 101 even to a request without `Upgrade` (an application that
    /// switches on its own).
    pub always: bool,
}

/// One request as received.
#[derive(Debug, Clone)]
pub struct Seen {
    /// The request line (`GET /x HTTP/1.1`).
    pub line: String,
    /// The header lines, name and value as sent.
    pub headers: Vec<(String, String)>,
    /// The body's length as read (chunks decoded).
    pub body: usize,
    /// Received after a 101 on its connection.
    pub tunneled: bool,
}

impl Seen {
    /// The values of a header (name without case).
    pub fn header(&self, name: &str) -> Vec<&str> {
        self.headers
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
            .collect()
    }

    /// The request target.
    pub fn target(&self) -> &str {
        self.line.split(' ').nth(1).unwrap_or("")
    }
}

/// The recording application, stopped when dropped.
pub struct Recorder {
    /// Where it listens.
    pub addr: SocketAddr,
    seen: Arc<Mutex<Vec<Seen>>>,
    stop: Arc<std::sync::atomic::AtomicBool>,
}

impl Recorder {
    /// On a free loopback port, answering 101 as `upgrades` says (none:
    /// never).
    pub fn start(upgrades: Option<Upgrades>) -> Recorder {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (s, st) = (seen.clone(), stop.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if st.load(std::sync::atomic::Ordering::Relaxed) {
                    return;
                }
                let Ok(conn) = conn else { continue };
                let (s, u) = (s.clone(), upgrades.clone());
                std::thread::spawn(move || {
                    let _ = serve(conn, &s, u.as_ref());
                });
            }
        });
        Recorder { addr, seen, stop }
    }

    /// Every request received so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    /// Their request lines.
    pub fn lines(&self) -> Vec<String> {
        self.seen().into_iter().map(|s| s.line).collect()
    }

    /// Forgets what was received.
    pub fn clear(&self) {
        self.seen.lock().unwrap().clear();
    }

    /// The application's URL (`http://127.0.0.1:PORT`).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let _ = TcpStream::connect(self.addr);
    }
}

/// Serves one connection until it closes.
fn serve(
    conn: TcpStream,
    seen: &Mutex<Vec<Seen>>,
    upgrades: Option<&Upgrades>,
) -> std::io::Result<()> {
    conn.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut out = conn.try_clone()?;
    let mut r = BufReader::new(conn);
    let mut tunneled = false;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let line = line.trim_end().to_owned();
        if line.is_empty() {
            continue;
        }
        let mut headers = Vec::new();
        loop {
            let mut h = String::new();
            if r.read_line(&mut h)? == 0 {
                return Ok(());
            }
            let h = h.trim_end_matches(['\r', '\n']);
            if h.is_empty() {
                break;
            }
            let (k, v) = h.split_once(':').unwrap_or((h, ""));
            headers.push((k.to_owned(), v.trim().to_owned()));
        }
        let mut req = Seen {
            line,
            headers,
            body: 0,
            tunneled,
        };
        let chunked = req
            .header("transfer-encoding")
            .iter()
            .any(|v| v.to_ascii_lowercase().contains("chunked"));
        if chunked {
            loop {
                let mut size = String::new();
                r.read_line(&mut size)?;
                let n = usize::from_str_radix(size.trim().split(';').next().unwrap_or(""), 16)
                    .unwrap_or(0);
                let mut chunk = vec![0u8; n + 2];
                r.read_exact(&mut chunk)?;
                req.body += n;
                if n == 0 {
                    break;
                }
            }
        } else if let Some(n) = req
            .header("content-length")
            .first()
            .and_then(|v| v.parse::<usize>().ok())
        {
            let mut body = vec![0u8; n];
            r.read_exact(&mut body)?;
            req.body = n;
        }
        let asked = req.header("upgrade").first().map(|v| (*v).to_owned());
        let target = req.target().to_owned();
        let answer = req.line.clone();
        seen.lock().unwrap().push(req);
        match (upgrades, &asked) {
            (Some(u), Some(_)) | (Some(u @ Upgrades { always: true, .. }), None) => {
                let name = match &u.switch {
                    Switch::Echo => asked
                        .as_deref()
                        .and_then(|a| a.split(',').next())
                        .map(|a| a.trim().to_owned()),
                    Switch::Name(n) => Some((*n).to_owned()),
                    Switch::Unnamed => None,
                };
                let up = name.map_or_else(String::new, |n| format!("Upgrade: {n}\r\n"));
                write!(
                    out,
                    "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\n{up}\r\n"
                )?;
                tunneled = true;
            }
            _ if target.ends_with("/missing") => {
                write!(
                    out,
                    "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 10\r\n\r\nnot found\n"
                )?;
            }
            _ if target == "/te-and-cl" => {
                let body = "0123456789abcdef-the-whole-body";
                write!(
                    out,
                    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n{:x}\r\n{body}\r\n0\r\n\r\n",
                    body.len()
                )?;
            }
            _ => {
                write!(
                    out,
                    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n{answer}",
                    answer.len()
                )?;
            }
        }
        out.flush()?;
    }
}
