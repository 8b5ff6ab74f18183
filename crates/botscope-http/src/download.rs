//! A file from a URL the user named (a data file such as an IP-owner
//! database, a crawl's WARC file; not a robots.txt): the bounded exchange,
//! the trust the caller chose, redirects followed. Whole ([`download`]:
//! no address guard, since the user chose the address as they would with
//! curl) or read as it comes ([`download_reader`]: its URLs can come from
//! a list someone else wrote, so every hop's addresses pass the address
//! guard unless the caller allows private ones).

use std::io::Read;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::BodyExt;

use crate::exchange::{Streamed, exchange_stream, read_body};
use crate::{Error, Request, Trust};

/// Redirect hops followed at most.
const MAX_HOPS: usize = 5;

/// Chunks of a streamed download waiting for its reader.
const CHUNKS_AHEAD: usize = 64;

/// Fetches `url` whole: http or https (trusting `trust`), up to 5
/// redirects, at most `cap` bytes (longer is an error: a cut file is not
/// the file), everything within `timeout`. A status other than 200 is an
/// error that names it.
pub async fn download(
    url: &str,
    cap: usize,
    timeout: Duration,
    user_agent: &str,
    trust: &Trust,
) -> Result<Vec<u8>, Error> {
    let deadline = Instant::now() + timeout;
    let (url, resp) = follow(url, timeout, deadline, user_agent, trust, true).await?;
    let work = read_body(resp.body, cap, resp.gzip);
    let (body, truncated) = match tokio::time::timeout_at(deadline.into(), work).await {
        Err(_) => return Err(failed(&url, "the download did not finish in time".into())),
        Ok(r) => r.map_err(|e| failed(&url, e.to_string()))?,
    };
    if truncated {
        return Err(failed(
            &url,
            format!(
                "the file is larger than {}",
                botscope_text::size(cap as u64)
            ),
        ));
    }
    Ok(body)
}

/// Fetches `url` as [`download`] does, but hands the body over as it
/// comes: a reader for a blocking thread (never one of `runtime`'s), fed
/// by a task on `runtime` at most 64 chunks ahead, so a file of any size
/// costs that much memory. The status and redirects are settled before
/// this returns; a body past `cap` bytes (as sent), a connection lost or
/// the `timeout` passed is an error of the reader's `read`, naming the
/// URL, never a short file read as whole. Dropping the reader ends the
/// download. A gzip `Content-Encoding` is decoded. Unless
/// `allow_private`, a host (of the URL or of a redirect) with a loopback,
/// private or otherwise not public address is refused before connecting.
pub fn download_reader(
    runtime: &tokio::runtime::Handle,
    url: &str,
    cap: u64,
    timeout: Duration,
    user_agent: &str,
    trust: &Trust,
    allow_private: bool,
) -> Result<Box<dyn Read + Send>, Error> {
    let deadline = Instant::now() + timeout;
    let (url, resp) = runtime.block_on(follow(
        url,
        timeout,
        deadline,
        user_agent,
        trust,
        allow_private,
    ))?;
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, String>>(CHUNKS_AHEAD);
    let Streamed {
        mut body,
        connection,
        gzip,
        ..
    } = resp;
    runtime.spawn(async move {
        let _connection = connection;
        let mut sent = 0u64;
        let until = tokio::time::Instant::from_std(deadline);
        loop {
            let frame = match tokio::time::timeout_at(until, body.frame()).await {
                Err(_) => Err(format!(
                    "stopped after {} s, the longest this download may take",
                    timeout.as_secs()
                )),
                Ok(None) => break,
                Ok(Some(Err(e))) => Err(format!("the connection failed: {e}")),
                Ok(Some(Ok(f))) => Ok(f),
            };
            let data = match frame {
                Err(e) => {
                    let _ = tx.send(Err(e)).await;
                    return;
                }
                Ok(f) => match f.into_data() {
                    Ok(d) => d,
                    Err(_) => continue,
                },
            };
            sent += data.len() as u64;
            if sent > cap {
                let _ = tx
                    .send(Err(format!(
                        "stopped after {}, the most this download may be",
                        botscope_text::size(cap)
                    )))
                    .await;
                return;
            }
            if tx.send(Ok(data)).await.is_err() {
                // The reader is gone: the download ends.
                return;
            }
        }
    });
    let reader = ChunkReader {
        rx,
        chunk: Bytes::new(),
        url: url.to_string(),
        failed: None,
    };
    Ok(if gzip {
        Box::new(flate2::read::MultiGzDecoder::new(reader))
    } else {
        Box::new(reader)
    })
}

/// The blocking side of [`download_reader`].
struct ChunkReader {
    rx: tokio::sync::mpsc::Receiver<Result<Bytes, String>>,
    chunk: Bytes,
    url: String,
    /// An error met, returned again on every later read.
    failed: Option<String>,
}

impl Read for ChunkReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            if let Some(e) = &self.failed {
                return Err(std::io::Error::other(format!("{}: {e}", self.url)));
            }
            if !self.chunk.is_empty() {
                let n = buf.len().min(self.chunk.len());
                buf[..n].copy_from_slice(&self.chunk.split_to(n));
                return Ok(n);
            }
            match self.rx.blocking_recv() {
                Some(Ok(b)) => self.chunk = b,
                Some(Err(e)) => self.failed = Some(e),
                None => return Ok(0),
            }
        }
    }
}

fn failed(url: &url::Url, reason: String) -> Error {
    Error::Download {
        url: url.to_string(),
        reason,
    }
}

/// Follows `url` to a 200 response (its head), at most [`MAX_HOPS`]
/// redirects; any other status is an error naming it. Unless
/// `allow_private`, every address of every hop's host must be public.
async fn follow(
    url: &str,
    timeout: Duration,
    deadline: Instant,
    user_agent: &str,
    trust: &Trust,
    allow_private: bool,
) -> Result<(url::Url, Streamed), Error> {
    let tls = trust.connector()?;
    let mut url = url::Url::parse(url).map_err(|e| Error::Url(format!("{url}: {e}")))?;
    for _ in 0..=MAX_HOPS {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(Error::Url(format!(
                "{url}: only http and https are fetched"
            )));
        }
        let host = url
            .host_str()
            .ok_or_else(|| Error::Url(format!("{url}: no host")))?
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned();
        let port = url.port_or_known_default().unwrap_or(80);
        let ips: Vec<std::net::IpAddr> = match host.parse() {
            Ok(ip) => vec![ip],
            Err(_) => tokio::net::lookup_host((host.as_str(), port))
                .await
                .map_err(|e| failed(&url, format!("cannot resolve {host}: {e}")))?
                .map(|a| a.ip())
                .collect(),
        };
        // Every address is checked: a name that also points inside is not
        // fetched at all.
        if !allow_private {
            for ip in &ips {
                if let Some(why) = crate::not_public(*ip) {
                    return Err(failed(
                        &url,
                        format!(
                            "{} ({why}): files are fetched from public addresses only; \
                             --allow-private fetches from private and loopback addresses too",
                            if host == ip.to_string() {
                                ip.to_string()
                            } else {
                                format!("{host} is {ip}")
                            }
                        ),
                    ));
                }
            }
        }
        let ip = *ips
            .first()
            .ok_or_else(|| failed(&url, format!("{host} has no address")))?;
        let x = exchange_stream(
            Request {
                url: &url,
                host: &host,
                ip,
                port,
                user_agent,
                accept: "*/*",
                if_none_match: None,
                if_modified_since: None,
                extra: &[],
                cap: 0,
                connect_timeout: timeout,
                deadline,
            },
            &tls,
        )
        .await
        .map_err(|e| failed(&url, e.to_string()))?;
        match x.status {
            200 => return Ok((url, x)),
            301 | 302 | 303 | 307 | 308 => {
                let to = x
                    .headers
                    .iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case("location"))
                    .map(|(_, v)| v.clone())
                    .ok_or_else(|| failed(&url, "redirect without Location".into()))?;
                url = url
                    .join(&to)
                    .map_err(|e| failed(&url, format!("bad redirect {to:?}: {e}")))?;
            }
            s => return Err(failed(&url, format!("HTTP status {s}"))),
        }
    }
    Err(failed(&url, format!("more than {MAX_HOPS} redirects")))
}
