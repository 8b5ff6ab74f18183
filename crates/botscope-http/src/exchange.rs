//! One HTTP/1.1 exchange with one address: connect (TLS for https), send
//! `GET`, read the head (bounded) and at most the cap of the body
//! (decompressing gzip), all before a deadline.

use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::header::{self, HeaderValue};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;

/// Largest response head (status line and headers) read.
const MAX_HEAD_BYTES: usize = 64 * 1024;

/// Why an exchange gave no response; [`FetchError::class`] is the stable
/// name recorded.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// The name did not resolve.
    #[error("DNS: {0}")]
    Dns(String),
    /// The address is not one botscope connects to.
    #[error("{0}")]
    Refused(String),
    /// The connection could not be made, or was reset.
    #[error("connection: {0}")]
    Connect(String),
    /// No connection in time.
    #[error("connection: {0}")]
    ConnectTimeout(String),
    /// The TLS handshake failed.
    #[error("TLS: {0}")]
    Tls(String),
    /// The deadline passed.
    #[error("timeout: {0}")]
    Timeout(String),
    /// Not a usable HTTP response.
    #[error("protocol: {0}")]
    Protocol(String),
}

impl FetchError {
    /// `dns`, `refused`, `connect`, `timeout`, `tls` or `protocol`.
    pub fn class(&self) -> &'static str {
        match self {
            FetchError::Dns(_) => "dns",
            FetchError::Refused(_) => "refused",
            FetchError::Connect(_) => "connect",
            FetchError::ConnectTimeout(_) | FetchError::Timeout(_) => "timeout",
            FetchError::Tls(_) => "tls",
            FetchError::Protocol(_) => "protocol",
        }
    }

    /// True when https could not even connect (the cue to try http).
    pub fn cannot_connect(&self) -> bool {
        matches!(self, FetchError::Connect(_) | FetchError::ConnectTimeout(_))
    }
}

/// A response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exchange {
    /// The status code.
    pub status: u16,
    /// Headers, in order (values lossily decoded).
    pub headers: Vec<(String, String)>,
    /// The body, at most the cap, decompressed.
    pub body: Vec<u8>,
    /// The body's length as far as it matters: its size, or cap + 1 when
    /// it is longer.
    pub body_len: u64,
    /// The body is longer than the cap.
    pub truncated: bool,
}

/// What to ask, of whom: one `GET` of `url` from `ip:port`, `host` in
/// the `Host` header and the TLS name.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    /// The URL asked for (its path and query are sent).
    pub url: &'a url::Url,
    /// The host name (no brackets around an IPv6 address).
    pub host: &'a str,
    /// The address connected to (checked by the caller: see [`crate::not_public`]).
    pub ip: IpAddr,
    /// The port connected to.
    pub port: u16,
    /// The `User-Agent` header.
    pub user_agent: &'a str,
    /// The `Accept` header.
    pub accept: &'a str,
    /// `If-None-Match`, for a conditional request.
    pub if_none_match: Option<&'a str>,
    /// `If-Modified-Since`, for a conditional request.
    pub if_modified_since: Option<&'a str>,
    /// More header fields (a signed agent's `Signature-Agent`,
    /// `Signature-Input` and `Signature`); invalid ones are left out.
    pub extra: &'a [(String, String)],
    /// Bytes of body kept (after gzip decoding); the rest is not read.
    pub cap: usize,
    /// Time to connect.
    pub connect_timeout: Duration,
    /// When everything must be done: connect, TLS, head and body.
    pub deadline: Instant,
}

/// Aborts a task when dropped (the connection driver).
struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

fn io_error(e: &std::io::Error, what: &str) -> FetchError {
    use std::io::ErrorKind as K;
    match e.kind() {
        K::ConnectionReset | K::ConnectionAborted | K::BrokenPipe => {
            FetchError::Connect(format!("{what}: reset by the server"))
        }
        K::TimedOut => FetchError::Timeout(what.to_owned()),
        _ => FetchError::Connect(format!("{what}: {e}")),
    }
}

fn hyper_error(e: &hyper::Error) -> FetchError {
    let mut src: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(e);
    while let Some(s) = src {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            return io_error(io, "during the response");
        }
        src = s.source();
    }
    if e.is_parse() && e.to_string().contains("too large") {
        FetchError::Protocol("the response head is too large".into())
    } else if e.is_parse() {
        FetchError::Protocol(format!("not an HTTP response ({e})"))
    } else if e.is_incomplete_message() {
        FetchError::Protocol("the connection closed before the response was complete".into())
    } else {
        FetchError::Protocol(e.to_string())
    }
}

/// The TCP connection of `r`, within its connect timeout and deadline.
async fn connect(r: &Request<'_>) -> Result<TcpStream, FetchError> {
    let addr = SocketAddr::new(r.ip, r.port);
    let left = r.deadline.saturating_duration_since(Instant::now());
    let tcp =
        match tokio::time::timeout(r.connect_timeout.min(left), TcpStream::connect(addr)).await {
            Err(_) => {
                return Err(FetchError::ConnectTimeout(format!(
                    "{addr}: no answer in time"
                )));
            }
            Ok(Err(e)) => return Err(FetchError::Connect(format!("{addr}: {e}"))),
            Ok(Ok(s)) => s,
        };
    let _ = tcp.set_nodelay(true);
    Ok(tcp)
}

/// Runs one exchange: connect (TLS for `https`), send the `GET`, read the
/// head (at most 64 KiB) and at most `r.cap` bytes of body, decompressing
/// gzip, all before `r.deadline`.
pub async fn exchange(
    r: Request<'_>,
    tls: &tokio_rustls::TlsConnector,
) -> Result<Exchange, FetchError> {
    let deadline = r.deadline;
    exchange_by(r, tls, deadline).await
}

/// [`exchange`], with the response head due by `head_by` (a first-byte
/// deadline: a server that trickles its answer a byte at a time is given
/// up on then, not at `r.deadline`).
pub async fn exchange_by(
    r: Request<'_>,
    tls: &tokio_rustls::TlsConnector,
    head_by: Instant,
) -> Result<Exchange, FetchError> {
    exchange_with(r, None, tls, head_by).await
}

/// [`exchange_by`] as a `POST` of the form `form`
/// (`application/x-www-form-urlencoded`): an OAuth-style endpoint's
/// exchange (RSL's licence servers). Never retried.
pub async fn post_form_by(
    r: Request<'_>,
    form: &str,
    tls: &tokio_rustls::TlsConnector,
    head_by: Instant,
) -> Result<Exchange, FetchError> {
    exchange_with(
        r,
        Some((
            Bytes::copy_from_slice(form.as_bytes()),
            "application/x-www-form-urlencoded",
        )),
        tls,
        head_by,
    )
    .await
}

/// [`exchange_by`] as a `POST` of the JSON text `json`
/// (`application/json`): an API's exchange (a CrowdSec Local API's).
/// Never retried.
pub async fn post_json_by(
    r: Request<'_>,
    json: &str,
    tls: &tokio_rustls::TlsConnector,
    head_by: Instant,
) -> Result<Exchange, FetchError> {
    exchange_with(
        r,
        Some((Bytes::copy_from_slice(json.as_bytes()), "application/json")),
        tls,
        head_by,
    )
    .await
}

async fn exchange_with(
    r: Request<'_>,
    form: Option<(Bytes, &'static str)>,
    tls: &tokio_rustls::TlsConnector,
    head_by: Instant,
) -> Result<Exchange, FetchError> {
    let (cap, deadline) = (r.cap, r.deadline);
    let resp = match tokio::time::timeout_at(
        head_by.min(deadline).into(),
        exchange_stream_with(r, form, tls),
    )
    .await
    {
        Ok(r) => r?,
        Err(_) => {
            return Err(FetchError::Timeout(
                "no response head in time (first-byte deadline)".into(),
            ));
        }
    };
    let body = tokio::time::timeout_at(deadline.into(), read_body(resp.body, cap, resp.gzip));
    let (body, truncated) = match body.await {
        Ok(x) => x?,
        Err(_) => return Err(total_timeout()),
    };
    drop(resp.connection);
    Ok(Exchange {
        status: resp.status,
        headers: resp.headers,
        body_len: if truncated {
            cap as u64 + 1
        } else {
            body.len() as u64
        },
        body,
        truncated,
    })
}

fn total_timeout() -> FetchError {
    FetchError::Timeout("the response did not come in time (total timeout)".into())
}

/// A response whose body is still to be read: its head, and the body as
/// it comes ([`exchange_stream`]).
pub struct Streamed {
    /// The status code.
    pub status: u16,
    /// Headers, in order (values lossily decoded).
    pub headers: Vec<(String, String)>,
    /// The body is gzip-encoded (`Content-Encoding`).
    pub gzip: bool,
    /// The body, frame by frame.
    pub body: hyper::body::Incoming,
    /// Drives the connection while the body is read; dropped, it ends it.
    pub connection: ConnectionGuard,
}

/// Keeps a streamed response's connection going; dropping it closes it.
pub struct ConnectionGuard(#[allow(dead_code)] AbortOnDrop);

impl std::fmt::Debug for Streamed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Streamed")
            .field("status", &self.status)
            .field("headers", &self.headers)
            .field("gzip", &self.gzip)
            .finish_non_exhaustive()
    }
}

/// Runs one exchange up to the response head (connect, TLS, request, head
/// before `r.deadline`), leaving the body to the caller: a download too
/// large to hold is read as it comes. `r.cap` is not applied.
pub async fn exchange_stream(
    r: Request<'_>,
    tls: &tokio_rustls::TlsConnector,
) -> Result<Streamed, FetchError> {
    exchange_stream_with(r, None, tls).await
}

async fn exchange_stream_with(
    r: Request<'_>,
    form: Option<(Bytes, &'static str)>,
    tls: &tokio_rustls::TlsConnector,
) -> Result<Streamed, FetchError> {
    let tcp = connect(&r).await?;
    let head = if r.url.scheme() == "https" {
        let name = rustls_pki_types::ServerName::try_from(r.host.to_owned())
            .map_err(|e| FetchError::Tls(format!("{}: {e}", r.host)))?;
        let stream = match tokio::time::timeout_at(r.deadline.into(), tls.connect(name, tcp)).await
        {
            Err(_) => return Err(FetchError::Timeout("during the TLS handshake".into())),
            Ok(Err(e)) => {
                let detail = match e.get_ref() {
                    Some(inner) => match inner.downcast_ref::<rustls::Error>() {
                        Some(t) => tls_in_words(t, r.host),
                        None => inner.to_string(),
                    },
                    None => e.to_string(),
                };
                return Err(FetchError::Tls(detail));
            }
            Ok(Ok(s)) => s,
        };
        tokio::time::timeout_at(r.deadline.into(), respond(stream, &r, form)).await
    } else {
        tokio::time::timeout_at(r.deadline.into(), respond(tcp, &r, form)).await
    };
    head.unwrap_or_else(|_| Err(total_timeout()))
}

/// Sends the request over `io` and reads the response head.
async fn respond<S>(
    io: S,
    r: &Request<'_>,
    form: Option<(Bytes, &'static str)>,
) -> Result<Streamed, FetchError>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (mut sender, conn) = hyper::client::conn::http1::Builder::new()
        .max_buf_size(MAX_HEAD_BYTES)
        .handshake::<_, http_body_util::Full<Bytes>>(TokioIo::new(io))
        .await
        .map_err(|e| hyper_error(&e))?;
    let driver = AbortOnDrop(
        tokio::spawn(async move {
            let _ = conn.await;
        })
        .abort_handle(),
    );
    let host = match r.url.port() {
        Some(p) => format!("{}:{p}", r.host),
        None => r.host.to_owned(),
    };
    let path = match r.url.query() {
        Some(q) => format!("{}?{q}", r.url.path()),
        None => r.url.path().to_owned(),
    };
    let method = if form.is_some() {
        hyper::Method::POST
    } else {
        hyper::Method::GET
    };
    let mut req = hyper::Request::builder()
        .method(method)
        .uri(path)
        .header(header::HOST, host)
        .header(header::USER_AGENT, r.user_agent)
        .header(header::ACCEPT, r.accept)
        .header(header::ACCEPT_ENCODING, "gzip")
        .header(header::CONNECTION, "close");
    if let Some(v) = r.if_none_match.and_then(|v| HeaderValue::from_str(v).ok()) {
        req = req.header(header::IF_NONE_MATCH, v);
    }
    if let Some(v) = r
        .if_modified_since
        .and_then(|v| HeaderValue::from_str(v).ok())
    {
        req = req.header(header::IF_MODIFIED_SINCE, v);
    }
    for (name, value) in r.extra {
        if let (Ok(n), Ok(v)) = (
            header::HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            req = req.header(n, v);
        }
    }
    if let Some((_, content_type)) = &form {
        req = req.header(header::CONTENT_TYPE, *content_type);
    }
    let req = req
        .body(http_body_util::Full::new(
            form.map(|(b, _)| b).unwrap_or_default(),
        ))
        .map_err(|e| FetchError::Protocol(format!("cannot make the request: {e}")))?;
    let resp = sender
        .send_request(req)
        .await
        .map_err(|e| hyper_error(&e))?;
    let status = resp.status().as_u16();
    let headers: Vec<(String, String)> = resp
        .headers()
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_owned(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    let gzip = resp
        .headers()
        .get(header::CONTENT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "gzip" | "x-gzip"));
    Ok(Streamed {
        status,
        headers,
        gzip,
        body: resp.into_body(),
        connection: ConnectionGuard(driver),
    })
}

/// Reads at most `cap` bytes of body (after gzip decoding), and a bounded
/// amount of wire data.
pub(crate) async fn read_body(
    mut body: hyper::body::Incoming,
    cap: usize,
    gzip: bool,
) -> Result<(Vec<u8>, bool), FetchError> {
    // A gzip stream that decodes to little may still be long: its wire
    // size is bounded too.
    let wire_limit = if gzip {
        cap.saturating_mul(16)
    } else {
        cap + 1
    };
    let mut wire = 0usize;
    let mut out: Vec<u8> = Vec::new();
    let mut dec = gzip.then(|| flate2::write::MultiGzDecoder::new(Vec::new()));
    let mut over = false;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| hyper_error(&e))?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        wire += data.len();
        match &mut dec {
            Some(d) => {
                if d.write_all(&data).is_err() {
                    // A damaged stream keeps what decoded before it.
                    break;
                }
                if d.get_ref().len() > cap {
                    over = true;
                    break;
                }
            }
            None => {
                let room = (cap + 1).saturating_sub(out.len());
                out.extend_from_slice(&data[..data.len().min(room)]);
                if out.len() > cap {
                    over = true;
                    break;
                }
            }
        }
        if wire >= wire_limit {
            over = true;
            break;
        }
    }
    if let Some(mut d) = dec {
        // What decoded so far, whether or not the stream ended.
        let _ = d.flush();
        out = std::mem::take(d.get_mut());
    }
    let truncated = over || out.len() > cap;
    out.truncate(cap);
    Ok((out, truncated))
}

/// A TLS failure in words a person can act on (the server's certificate
/// problems above all), the library's own text after it.
pub fn tls_in_words(e: &rustls::Error, host: &str) -> String {
    use rustls::CertificateError as C;
    let words = match e {
        rustls::Error::InvalidCertificate(c) => match c {
            C::Expired | C::ExpiredContext { .. } => {
                format!("the server's certificate for {host} has expired")
            }
            C::NotValidYet | C::NotValidYetContext { .. } => {
                format!("the server's certificate for {host} is not valid yet")
            }
            C::UnknownIssuer => format!(
                "the server's certificate for {host} is signed by an authority not trusted here (--ca-file adds one, --tls-roots chooses the roots)"
            ),
            C::NotValidForName | C::NotValidForNameContext { .. } => {
                format!("the server's certificate is not for {host}")
            }
            C::Revoked => format!("the server's certificate for {host} is revoked"),
            C::BadSignature => {
                format!("the server's certificate for {host} has a signature that does not hold")
            }
            C::BadEncoding => format!("the server's certificate for {host} cannot be read"),
            C::InvalidPurpose | C::InvalidPurposeContext { .. } => format!(
                "the server's certificate for {host} is not for a web server (its key usage)"
            ),
            C::Other(o) if format!("{o:?}").contains("CaUsedAsEndEntity") => {
                format!("the server's certificate for {host} is a CA certificate, not a server's")
            }
            _ => format!("the server's certificate for {host} is not accepted"),
        },
        rustls::Error::NoCertificatesPresented => {
            format!("the server at {host} presented no certificate")
        }
        rustls::Error::AlertReceived(a) => {
            format!("the server at {host} refused the TLS handshake ({a:?})")
        }
        _ => format!("TLS with {host} failed"),
    };
    format!("{words}: {e}")
}
