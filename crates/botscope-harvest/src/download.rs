//! A whole file from a URL the user named (a data file such as an
//! IP-owner database, not a robots.txt): the harvester's exchange, its
//! TLS roots and its bounds, without its address guard, since the user
//! chose the address as they would with curl.

use std::time::{Duration, Instant};

use crate::fetch::{Request, exchange};
use crate::{Error, FetchError};

/// Redirect hops followed at most.
const MAX_HOPS: usize = 5;

/// Fetches `url` whole: http or https (Web PKI roots), up to 5 redirects,
/// at most `cap` bytes (longer is an error: a cut file is not the file),
/// everything within `timeout`. A status other than 200 is an error that
/// names it.
pub async fn download(
    url: &str,
    cap: usize,
    timeout: Duration,
    user_agent: &str,
) -> Result<Vec<u8>, Error> {
    let tls = crate::tls_connector(&[])?;
    let deadline = Instant::now() + timeout;
    let mut url = url::Url::parse(url).map_err(|e| Error::Setup(format!("{url}: {e}")))?;
    for _ in 0..=MAX_HOPS {
        let fail = |e: FetchError| Error::Setup(format!("{url}: {e}"));
        if !matches!(url.scheme(), "http" | "https") {
            return Err(Error::Setup(format!(
                "{url}: only http and https are fetched"
            )));
        }
        let host = url
            .host_str()
            .ok_or_else(|| Error::Setup(format!("{url}: no host")))?
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned();
        let port = url.port_or_known_default().unwrap_or(80);
        let ip = match host.parse() {
            Ok(ip) => ip,
            Err(_) => tokio::net::lookup_host((host.as_str(), port))
                .await
                .map_err(|e| Error::Setup(format!("{url}: cannot resolve {host}: {e}")))?
                .next()
                .ok_or_else(|| Error::Setup(format!("{url}: {host} has no address")))?
                .ip(),
        };
        let x = exchange(
            Request {
                url: &url,
                host: &host,
                ip,
                port,
                user_agent,
                accept: "*/*",
                conditional: None,
                cap,
                connect_timeout: timeout,
                deadline,
            },
            &tls,
        )
        .await
        .map_err(fail)?;
        match x.status {
            200 if x.truncated => {
                return Err(Error::Setup(format!(
                    "{url}: the file is larger than {} MiB",
                    cap >> 20
                )));
            }
            200 => return Ok(x.body),
            301 | 302 | 303 | 307 | 308 => {
                let to = x
                    .headers
                    .iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case("location"))
                    .map(|(_, v)| v.clone())
                    .ok_or_else(|| Error::Setup(format!("{url}: redirect without Location")))?;
                url = url
                    .join(&to)
                    .map_err(|e| Error::Setup(format!("{url}: bad redirect {to:?}: {e}")))?;
            }
            s => return Err(Error::Setup(format!("{url}: HTTP status {s}"))),
        }
    }
    Err(Error::Setup(format!(
        "{url}: more than {MAX_HOPS} redirects"
    )))
}
