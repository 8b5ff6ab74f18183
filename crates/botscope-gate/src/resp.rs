//! The fleet's Redis spoken directly (RESP2, RFC-less but documented at
//! redis.io/docs/reference/protocol-spec), so that what Redis, or anyone
//! on the path to a plaintext `redis://`, sends back is bounded: each
//! exchange's answers are read within [`MAX_ANSWER_BYTES`], at most
//! [`MAX_ELEMENTS`] elements and one level of nesting; past that the
//! connection is dropped and the exchange is an error. A connection is
//! reused only after an exchange that ended cleanly.
//!
//! Connections: TCP (or TLS for `rediss://` and `valkeys://`, checked
//! against the system's trust store), `AUTH` and `SELECT` from the URL,
//! kept idle in a small pool; each exchange takes one, so exchanges never
//! wait on each other's answers.

use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

/// The most bytes one exchange's answers may take (the fleet's answers
/// are a few numbers, a 32-byte key or a reverse-DNS record of a few KB).
pub const MAX_ANSWER_BYTES: usize = 64 * 1024;
/// The most elements in one array answer.
pub const MAX_ELEMENTS: usize = 1024;
/// The longest status or error line.
const MAX_LINE: usize = 1024;
/// Idle connections kept.
const MAX_IDLE: usize = 64;

/// One answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// `$-1` or `*-1`.
    Nil,
    /// `:n`.
    Int(i64),
    /// `$n` and its bytes.
    Bulk(Vec<u8>),
    /// `+OK`.
    Status(String),
    /// `-ERR …`.
    Error(String),
    /// `*n` and its elements (no deeper arrays).
    Array(Vec<Value>),
}

impl Value {
    /// What it is, in a few words for a message (never its bytes whole:
    /// they are a stranger's).
    pub fn describe(&self) -> String {
        match self {
            Value::Nil => "nil".to_owned(),
            Value::Int(n) => format!("the number {n}"),
            Value::Bulk(b) => format!("a string of {} bytes", b.len()),
            Value::Status(s) => format!("the status `{}`", botscope_text::quoted(s)),
            Value::Error(e) => format!("the error `{}`", botscope_text::quoted(e)),
            Value::Array(a) => format!("a list of {}", a.len()),
        }
    }

    /// [`Value::describe`] of answers, joined.
    pub fn describe_all(v: &[Value]) -> String {
        let all: Vec<String> = v.iter().map(Value::describe).collect();
        format!("[{}]", all.join(", "))
    }
}

/// Why an exchange failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The connection: refused, reset, closed, TLS.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// An answer that is not RESP, or over the bounds.
    #[error("a malformed answer: {0}")]
    Malformed(String),
    /// Redis said no.
    #[error("Redis: {0}")]
    Refused(String),
}

impl Error {
    /// Whether the answer broke the protocol or the bounds (not the
    /// network).
    pub fn is_malformed(&self) -> bool {
        matches!(self, Error::Malformed(_))
    }
}

trait Stream: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send {}
impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send> Stream for T {}

type Conn = BufReader<Box<dyn Stream>>;

/// Where Redis is and how to log in.
#[derive(Debug, Clone)]
struct Target {
    host: String,
    port: u16,
    user: Option<String>,
    password: Option<String>,
    db: u32,
}

/// A Redis client with bounded answers.
pub struct Client {
    target: Target,
    tls: Option<tokio_rustls::TlsConnector>,
    idle: Mutex<Vec<Conn>>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("host", &self.target.host)
            .field("port", &self.target.port)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// For `redis://[USER:PASSWORD@]HOST[:PORT][/DB]` (`rediss://` over TLS;
    /// `valkey://`, `valkeys://` alike). Connects when first used.
    pub fn new(url: &str) -> Result<Client, String> {
        let u = url::Url::parse(url).map_err(|e| e.to_string())?;
        let tls = match u.scheme() {
            "redis" | "valkey" => false,
            "rediss" | "valkeys" => true,
            s => return Err(format!("{s}:// is not Redis (redis:// or rediss://)")),
        };
        let host = u
            .host_str()
            .filter(|h| !h.is_empty())
            .ok_or("no host")?
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned();
        let db = match u.path().trim_start_matches('/') {
            "" => 0,
            d => d
                .parse::<u32>()
                .map_err(|_| format!("`/{d}` is not a database number"))?,
        };
        let decode = |s: &str| {
            url::form_urlencoded::parse(format!("x={s}").as_bytes())
                .next()
                .map(|(_, v)| v.into_owned())
        };
        let target = Target {
            host,
            port: u.port().unwrap_or(6379),
            user: Some(u.username())
                .filter(|s| !s.is_empty())
                .and_then(decode),
            password: u.password().and_then(decode),
            db,
        };
        let connector = if tls {
            let mut cfg = botscope_http::Trust::system()
                .client_config()
                .map_err(|e| e.to_string())?;
            cfg.alpn_protocols.clear();
            Some(tokio_rustls::TlsConnector::from(std::sync::Arc::new(cfg)))
        } else {
            None
        };
        Ok(Client {
            target,
            tls: connector,
            idle: Mutex::new(Vec::new()),
        })
    }

    async fn connect(&self) -> Result<Conn, Error> {
        let t = &self.target;
        let tcp = tokio::net::TcpStream::connect((t.host.as_str(), t.port)).await?;
        tcp.set_nodelay(true)?;
        let stream: Box<dyn Stream> = match &self.tls {
            None => Box::new(tcp),
            Some(tls) => {
                let name = rustls::pki_types::ServerName::try_from(t.host.clone())
                    .map_err(|e| Error::Io(std::io::Error::other(e)))?;
                Box::new(tls.connect(name, tcp).await?)
            }
        };
        let mut conn = BufReader::with_capacity(8192, stream);
        let mut hello: Vec<Vec<Vec<u8>>> = Vec::new();
        if let Some(p) = &t.password {
            let mut auth = vec![b"AUTH".to_vec()];
            if let Some(u) = &t.user {
                auth.push(u.as_bytes().to_vec());
            }
            auth.push(p.as_bytes().to_vec());
            hello.push(auth);
        }
        if t.db != 0 {
            hello.push(vec![b"SELECT".to_vec(), t.db.to_string().into_bytes()]);
        }
        if !hello.is_empty() {
            for v in run(&mut conn, &hello).await? {
                match v {
                    Value::Status(_) => {}
                    Value::Error(e) => return Err(Error::Refused(e)),
                    other => {
                        return Err(Error::Malformed(format!(
                            "{} to AUTH or SELECT",
                            other.describe()
                        )));
                    }
                }
            }
        }
        Ok(conn)
    }

    /// Sends `commands` (each its arguments) on one connection and reads
    /// one answer each, within the bounds. An error answer is a
    /// [`Value::Error`] among them; a broken or oversized one an `Err`
    /// (and the connection is dropped).
    pub async fn exchange(&self, commands: &[Vec<Vec<u8>>]) -> Result<Vec<Value>, Error> {
        let idle = self.idle.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let mut conn = match idle {
            Some(c) => c,
            None => self.connect().await?,
        };
        let answers = run(&mut conn, commands).await?;
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        if idle.len() < MAX_IDLE {
            idle.push(conn);
        }
        Ok(answers)
    }

    /// Drops every idle connection (after Redis was seen to misbehave).
    pub fn forget(&self) {
        self.idle.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }
}

/// Writes the commands, reads as many answers.
async fn run(conn: &mut Conn, commands: &[Vec<Vec<u8>>]) -> Result<Vec<Value>, Error> {
    let mut out = Vec::new();
    for c in commands {
        out.extend_from_slice(format!("*{}\r\n", c.len()).as_bytes());
        for a in c {
            out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            out.extend_from_slice(a);
            out.extend_from_slice(b"\r\n");
        }
    }
    conn.get_mut().write_all(&out).await?;
    conn.get_mut().flush().await?;
    read_answers(conn, commands.len()).await
}

/// Reads `n` answers off `r`, within the bounds of one exchange
/// ([`MAX_ANSWER_BYTES`] in all, [`MAX_ELEMENTS`] an array, no nesting):
/// each byte read once, nothing allocated past the bounds.
pub async fn read_answers<R>(r: &mut R, n: usize) -> Result<Vec<Value>, Error>
where
    R: tokio::io::AsyncBufRead + Unpin + Send,
{
    let mut budget = MAX_ANSWER_BYTES;
    let mut answers = Vec::with_capacity(n.min(MAX_ELEMENTS));
    for _ in 0..n {
        answers.push(read_value(r, &mut budget, 0).await?);
    }
    Ok(answers)
}

/// One line (without its CRLF), counted against the budget.
async fn read_line<R>(conn: &mut R, budget: &mut usize) -> Result<String, Error>
where
    R: tokio::io::AsyncBufRead + Unpin + Send,
{
    let mut line = Vec::new();
    let cap = MAX_LINE.min(*budget) + 2;
    let n = (&mut *conn)
        .take(u64::try_from(cap).unwrap_or(u64::MAX))
        .read_until(b'\n', &mut line)
        .await?;
    if n == 0 {
        return Err(Error::Io(std::io::ErrorKind::UnexpectedEof.into()));
    }
    if !line.ends_with(b"\r\n") {
        return Err(Error::Malformed(format!(
            "a line over {} bytes, or cut",
            cap - 2
        )));
    }
    *budget = budget.saturating_sub(n);
    line.truncate(line.len() - 2);
    String::from_utf8(line).map_err(|_| Error::Malformed("a line that is not UTF-8".into()))
}

fn number(s: &str) -> Result<i64, Error> {
    s.parse::<i64>()
        .map_err(|_| Error::Malformed(format!("`{}` is not a number", botscope_text::quoted(s))))
}

/// One value; arrays only at the top.
fn read_value<'a, R>(
    conn: &'a mut R,
    budget: &'a mut usize,
    depth: u8,
) -> Pin<Box<dyn Future<Output = Result<Value, Error>> + Send + 'a>>
where
    R: tokio::io::AsyncBufRead + Unpin + Send,
{
    Box::pin(async move {
        let line = read_line(conn, budget).await?;
        let (kind, rest) = line.split_at_checked(1).unwrap_or(("", ""));
        match kind {
            "+" => Ok(Value::Status(rest.to_owned())),
            "-" => Ok(Value::Error(rest.to_owned())),
            ":" => Ok(Value::Int(number(rest)?)),
            "$" => {
                let n = number(rest)?;
                if n == -1 {
                    return Ok(Value::Nil);
                }
                let n = usize::try_from(n)
                    .map_err(|_| Error::Malformed(format!("a bulk length of {n}")))?;
                if n + 2 > *budget {
                    return Err(Error::Malformed(format!(
                        "an answer of {n} bytes, over {MAX_ANSWER_BYTES} for the exchange"
                    )));
                }
                let mut b = vec![0u8; n + 2];
                conn.read_exact(&mut b).await?;
                *budget -= n + 2;
                if !b.ends_with(b"\r\n") {
                    return Err(Error::Malformed("a bulk string without its CRLF".into()));
                }
                b.truncate(n);
                Ok(Value::Bulk(b))
            }
            "*" => {
                let n = number(rest)?;
                if n == -1 {
                    return Ok(Value::Nil);
                }
                let n = usize::try_from(n)
                    .ok()
                    .filter(|&n| n <= MAX_ELEMENTS)
                    .ok_or_else(|| Error::Malformed(format!("an array of {n} elements")))?;
                if depth > 0 {
                    return Err(Error::Malformed("an array inside an array".into()));
                }
                let mut v = Vec::with_capacity(n);
                for _ in 0..n {
                    v.push(read_value(conn, budget, depth + 1).await?);
                }
                Ok(Value::Array(v))
            }
            _ => Err(Error::Malformed(format!(
                "`{}` starts no RESP value",
                botscope_text::quoted(&line)
            ))),
        }
    })
}

/// A command from its words.
pub fn cmd<const N: usize>(words: [&[u8]; N]) -> Vec<Vec<u8>> {
    words.iter().map(|w| w.to_vec()).collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// A server that answers every connection with `bytes`, whatever it
    /// was asked.
    async fn liar(bytes: Vec<u8>) -> String {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = l.accept().await {
                let b = bytes.clone();
                tokio::spawn(async move {
                    let mut buf = [0u8; 4096];
                    let _ = s.read(&mut buf).await;
                    let _ = s.write_all(&b).await;
                    let _ = s.shutdown().await;
                });
            }
        });
        format!("redis://{addr}")
    }

    async fn ask(answer: &[u8]) -> Result<Vec<Value>, Error> {
        let c = Client::new(&liar(answer.to_vec()).await).unwrap();
        c.exchange(&[cmd([b"GET", b"k"])]).await
    }

    #[tokio::test]
    async fn answers_are_read_within_their_bounds() {
        assert_eq!(
            ask(b"$3\r\nabc\r\n").await.unwrap(),
            [Value::Bulk(b"abc".to_vec())]
        );
        assert_eq!(ask(b"$-1\r\n").await.unwrap(), [Value::Nil]);
        assert_eq!(
            ask(b"*2\r\n:-1\r\n:40\r\n").await.unwrap(),
            [Value::Array(vec![Value::Int(-1), Value::Int(40)])]
        );
        assert_eq!(
            ask(b"-ERR no\r\n").await.unwrap(),
            [Value::Error("ERR no".into())]
        );
        // A huge bulk string is refused before it is read.
        let e = ask(b"$1000000000\r\n").await.unwrap_err();
        assert!(e.is_malformed(), "{e}");
        // So is a stream of small elements adding up past the bound.
        let mut many = b"*1000\r\n".to_vec();
        for _ in 0..1000 {
            many.extend_from_slice(format!("${}\r\n{}\r\n", 100, "x".repeat(100)).as_bytes());
        }
        assert!(ask(&many).await.unwrap_err().is_malformed());
        // Too many elements, nesting, an endless line, junk.
        assert!(ask(b"*100000\r\n").await.unwrap_err().is_malformed());
        assert!(ask(b"*1\r\n*1\r\n:1\r\n").await.unwrap_err().is_malformed());
        let endless = vec![b'+'; 100_000];
        assert!(ask(&endless).await.unwrap_err().is_malformed());
        assert!(ask(b"?what\r\n").await.unwrap_err().is_malformed());
        assert!(ask(b":twelve\r\n").await.unwrap_err().is_malformed());
        // Cut short: the connection's error.
        assert!(matches!(ask(b"$10\r\nabc").await, Err(Error::Io(_))));
    }

    #[test]
    fn urls_name_the_server_the_login_and_the_database() {
        let c = Client::new("redis://user:p%40ss@10.0.0.5:6380/3").unwrap();
        assert_eq!(c.target.host, "10.0.0.5");
        assert_eq!(c.target.port, 6380);
        assert_eq!(c.target.user.as_deref(), Some("user"));
        assert_eq!(c.target.password.as_deref(), Some("p@ss"));
        assert_eq!(c.target.db, 3);
        assert!(c.tls.is_none());
        assert!(Client::new("rediss://[::1]/").unwrap().tls.is_some());
        assert!(Client::new("http://x/").is_err());
        assert!(Client::new("redis://x/db").is_err());
    }
}
