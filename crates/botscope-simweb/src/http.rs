//! The HTTP(S) servers: a request head is read (bounded), the host's
//! behaviour written byte for byte, so that misbehaviour (silence, resets,
//! drips, floods) is exactly what a test asks for.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpListener;

use crate::{Behaviour, Shared, Site};

/// The test CA (PEM) and a server configuration whose certificate, signed
/// by it, names every TLS host.
pub(crate) fn test_tls(sites: &[Site]) -> std::io::Result<(String, Arc<rustls::ServerConfig>)> {
    let err = |e: rcgen::Error| std::io::Error::other(e.to_string());
    let ca_key = rcgen::KeyPair::generate().map_err(err)?;
    let mut ca = rcgen::CertificateParams::new(Vec::<String>::new()).map_err(err)?;
    ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(rcgen::DnType::CommonName, "botscope simulated web test CA");
    let ca_cert = ca.self_signed(&ca_key).map_err(err)?;
    let issuer = rcgen::Issuer::new(ca, ca_key);
    let mut names: Vec<String> = sites
        .iter()
        .filter(|s| s.tls)
        .map(|s| s.name.clone())
        .collect();
    if names.is_empty() {
        names.push("none.test".into());
    }
    let leaf_key = rcgen::KeyPair::generate().map_err(err)?;
    let leaf = rcgen::CertificateParams::new(names)
        .map_err(err)?
        .signed_by(&leaf_key, &issuer)
        .map_err(err)?;
    let key = rustls::pki_types::PrivateKeyDer::try_from(leaf_key.serialize_der())
        .map_err(std::io::Error::other)?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let cfg = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(std::io::Error::other)?
        .with_no_client_auth()
        .with_single_cert(vec![leaf.der().clone(), ca_cert.der().clone()], key)
        .map_err(std::io::Error::other)?;
    Ok((ca_cert.pem(), Arc::new(cfg)))
}

/// Accepts connections until the web stops.
pub(crate) async fn serve(
    listener: TcpListener,
    shared: Arc<Shared>,
    tls: Option<Arc<rustls::ServerConfig>>,
) {
    let acceptor = tls.map(tokio_rustls::TlsAcceptor::from);
    while !shared.stop.load(Ordering::Relaxed) {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let shared = shared.clone();
        let acceptor = acceptor.clone();
        let local = stream.local_addr().map(|a| a.ip()).ok();
        tokio::spawn(async move {
            let Some(ip) = local else { return };
            shared.seen.open(ip);
            match acceptor {
                Some(a) => {
                    if let Ok(Ok(mut s)) =
                        tokio::time::timeout(Duration::from_secs(10), a.accept(stream)).await
                    {
                        handle(&mut s, &shared).await;
                    }
                }
                None => {
                    let mut stream = stream;
                    if handle(&mut stream, &shared).await {
                        // Closing with linger 0 sends a reset.
                        let _ = stream.set_zero_linger();
                    }
                }
            }
            shared.seen.close(ip);
        });
    }
}

/// Reads the request head: (path, host, user agent, if-none-match).
/// A request head's parts: the target, the host (lower case, no port), the
/// User-Agent, `If-None-Match`, and the signature fields (`Signature`,
/// `Signature-Input`, `Signature-Agent`) as sent.
type Head = (
    String,
    String,
    String,
    Option<String>,
    Vec<(String, String)>,
);

async fn read_head<S: AsyncRead + Unpin>(s: &mut S) -> Option<Head> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 2048];
    let read = async {
        loop {
            let n = s.read(&mut chunk).await.ok()?;
            if n == 0 {
                return None;
            }
            buf.extend_from_slice(&chunk[..n]);
            if buf.windows(4).any(|w| w == b"\r\n\r\n") {
                return Some(());
            }
            if buf.len() > 16 * 1024 {
                return None;
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(10), read)
        .await
        .ok()??;
    let head = String::from_utf8_lossy(&buf);
    let mut lines = head.split("\r\n");
    let path = lines.next()?.split_whitespace().nth(1)?.to_owned();
    let (mut host, mut ua, mut inm) = (String::new(), String::new(), None);
    let mut signature = Vec::new();
    for l in lines {
        if let Some((k, v)) = l.split_once(':') {
            match k.trim().to_ascii_lowercase().as_str() {
                name @ ("signature" | "signature-input" | "signature-agent") => {
                    signature.push((name.to_owned(), v.trim().to_owned()));
                }
                "host" => {
                    host = v
                        .trim()
                        .split(':')
                        .next()
                        .unwrap_or_default()
                        .to_ascii_lowercase()
                }
                "user-agent" => ua = v.trim().to_owned(),
                "if-none-match" => inm = Some(v.trim().to_owned()),
                _ => {}
            }
        }
    }
    Some((path, host, ua, inm, signature))
}

fn response(status: u16, headers: &[(&str, String)], body: &[u8]) -> Vec<u8> {
    let reason = match status {
        200 => "OK",
        301 => "Moved Permanently",
        302 => "Found",
        304 => "Not Modified",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        410 => "Gone",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Status",
    };
    let mut out = format!("HTTP/1.1 {status} {reason}\r\nConnection: close\r\n");
    for (k, v) in headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    if status != 304 {
        out.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    out.push_str("\r\n");
    let mut out = out.into_bytes();
    out.extend_from_slice(body);
    out
}

fn html(status: u16) -> Vec<u8> {
    response(
        status,
        &[("Content-Type", "text/html".into())],
        format!("<html><body><h1>{status}</h1></body></html>").as_bytes(),
    )
}

/// An answer of a [`Behaviour::Pages`] site.
fn page(path: &str, robots: &str) -> Vec<u8> {
    if path == "/robots.txt" {
        return response(
            200,
            &[("Content-Type", "text/plain".into())],
            robots.as_bytes(),
        );
    }
    if let Some(code) = path
        .strip_prefix("/status/")
        .and_then(|c| c.parse::<u16>().ok())
        .filter(|c| (200..600).contains(c))
    {
        let mut headers = vec![("Content-Type", "text/html".to_owned())];
        if matches!(code, 429 | 503) {
            headers.push(("Retry-After", "1".into()));
        }
        return response(code, &headers, format!("<h1>{code}</h1>").as_bytes());
    }
    if let Some(to) = path.strip_prefix("/redirect/") {
        return response(302, &[("Location", format!("/{to}"))], b"");
    }
    if let Some(rest) = path.strip_prefix("/usage/") {
        // The page states AI usage preferences in its header: the path's
        // next segment, `train-ai=n` and such, one field line per
        // `+`-separated part.
        let pref = rest.split('/').next().unwrap_or_default();
        let mut headers = vec![("Content-Type", "text/html; charset=utf-8".to_owned())];
        headers.extend(pref.split('+').map(|p| ("Content-Usage", p.to_owned())));
        return response(200, &headers, b"<p>usage</p>");
    }
    response(
        200,
        &[("Content-Type", "text/html; charset=utf-8".into())],
        b"<!doctype html><html><body><a href=\"/\">home</a></body></html>",
    )
}

/// Records a request when the answer is done.
struct Record<'a> {
    seen: &'a crate::Seen,
    hit: Option<crate::Hit>,
}

impl Drop for Record<'_> {
    fn drop(&mut self) {
        if let Some(mut h) = self.hit.take() {
            h.end = std::time::Instant::now();
            self.seen.hit(h);
        }
    }
}

/// Answers one request; true when the connection is to be reset.
async fn handle<S: AsyncRead + AsyncWrite + Unpin>(s: &mut S, shared: &Shared) -> bool {
    let Some((path, host, ua, inm, signature)) = read_head(s).await else {
        return false;
    };
    shared.seen.requests.fetch_add(1, Ordering::Relaxed);
    shared.seen.agent(&ua);
    let now = std::time::Instant::now();
    let _record = Record {
        seen: &shared.seen,
        hit: Some(crate::Hit {
            host: host.clone(),
            path: path.clone(),
            user_agent: ua.clone(),
            signature,
            start: now,
            end: now,
        }),
    };
    let Some((behaviour, _)) = shared.sites.get(&host) else {
        let _ = s.write_all(&html(404)).await;
        return false;
    };
    let latency = shared.latency_us.load(Ordering::Relaxed);
    if latency > 0 {
        tokio::time::sleep(Duration::from_micros(latency)).await;
    }
    let robots = |i: usize| shared.corpus.get(i).cloned().unwrap_or_default();
    let hop = path
        .strip_prefix("/hop/")
        .and_then(|n| n.parse::<u8>().ok());
    if path != "/robots.txt"
        && hop.is_none()
        && path != "/loop"
        && !matches!(behaviour, Behaviour::Pages(_))
    {
        shared.seen.other_paths.fetch_add(1, Ordering::Relaxed);
    }
    let held;
    let behaviour = match behaviour {
        Behaviour::Held(i) => {
            let mut rx = shared.released.clone();
            if rx.wait_for(|r| *r).await.is_err() {
                return false;
            }
            held = Behaviour::Robots(*i);
            &held
        }
        b => b,
    };
    let out: Vec<u8> = match behaviour {
        Behaviour::Held(_) => return false,
        Behaviour::Robots(i) => {
            let etag = format!("\"r{i}\"");
            if inm.as_deref() == Some(etag.as_str()) {
                response(304, &[("ETag", etag)], b"")
            } else {
                response(
                    200,
                    &[
                        ("Content-Type", "text/plain".into()),
                        ("ETag", etag),
                        ("Cache-Control", "max-age=86400".into()),
                    ],
                    &robots(*i),
                )
            }
        }
        Behaviour::Status(code) => html(*code),
        Behaviour::Pages(robots) => page(&path, robots),
        Behaviour::RetryAfter(code, secs) => response(
            *code,
            &[("Retry-After", secs.to_string()), ("Content-Type", "text/html".into())],
            b"<h1>busy</h1>",
        ),
        Behaviour::RedirectTo(to) => response(
            301,
            &[("Location", format!("http://{to}/robots.txt"))],
            b"",
        ),
        Behaviour::RedirectChain(n) => {
            let at = hop.unwrap_or(0);
            if at < *n {
                response(302, &[("Location", format!("/hop/{}", at + 1))], b"")
            } else {
                response(200, &[("Content-Type", "text/plain".into())], &robots(0))
            }
        }
        Behaviour::RedirectLoop => {
            let to = if path == "/loop" { "/robots.txt" } else { "/loop" };
            response(302, &[("Location", to.into())], b"")
        }
        Behaviour::SlowDrip => {
            let head = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100000\r\n\r\n";
            if s.write_all(head).await.is_err() {
                return false;
            }
            for _ in 0..1000 {
                tokio::time::sleep(Duration::from_millis(500)).await;
                if s.write_all(b"#").await.is_err() || s.flush().await.is_err() {
                    return false;
                }
            }
            return false;
        }
        Behaviour::NoAnswer => {
            // Hold the connection, say nothing, until the client leaves.
            let mut b = [0u8; 64];
            let _ = tokio::time::timeout(Duration::from_secs(120), s.read(&mut b)).await;
            return false;
        }
        Behaviour::Reset => return true,
        Behaviour::Huge => {
            let len = 10 * 1024 * 1024;
            let head = format!("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {len}\r\n\r\n");
            if s.write_all(head.as_bytes()).await.is_err() {
                return false;
            }
            let line = b"Disallow: /a-long-list-of-paths/that-goes-on-and-on\n";
            let block: Vec<u8> = line.iter().copied().cycle().take(64 * 1024).collect();
            let mut sent = 0;
            while sent < len {
                let n = block.len().min(len - sent);
                if s.write_all(&block[..n]).await.is_err() {
                    return false;
                }
                sent += n;
            }
            let _ = s.flush().await;
            return false;
        }
        Behaviour::Gzip => {
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            let _ = gz.write_all(&robots(1));
            let body = gz.finish().unwrap_or_default();
            response(
                200,
                &[
                    ("Content-Type", "text/plain".into()),
                    ("Content-Encoding", "gzip".into()),
                ],
                &body,
            )
        }
        Behaviour::Html => response(
            200,
            &[("Content-Type", "text/html; charset=utf-8".into())],
            b"<!doctype html><html><head><title>Welcome</title></head><body><p>User-agent: * is not here</p></body></html>",
        ),
        Behaviour::InvalidUtf8 => response(
            200,
            &[("Content-Type", "text/plain".into())],
            b"User-agent: *\nDisallow: /caf\xe9\nDisallow: /\xff\xfe/\n",
        ),
        Behaviour::HeaderFlood => {
            let flood: Vec<(&str, String)> = (0..10_000).map(|i| ("X-Flood", format!("{i:08}"))).collect();
            response(200, &flood, b"User-agent: *\nDisallow:\n")
        }
        Behaviour::Endless => {
            let head = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n";
            if s.write_all(head).await.is_err() {
                return false;
            }
            let chunk = format!("{:x}\r\n{}\r\n", 8192, "x".repeat(8192));
            loop {
                if s.write_all(chunk.as_bytes()).await.is_err() {
                    return false;
                }
            }
        }
    };
    let _ = s.write_all(&out).await;
    let _ = s.flush().await;
    let _ = s.shutdown().await;
    false
}
