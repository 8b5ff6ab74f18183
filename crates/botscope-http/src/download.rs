//! A whole file from a URL the user named (a data file such as an
//! IP-owner database, not a robots.txt): the bounded exchange, the trust
//! the caller chose, redirects followed; no address guard, since the user
//! chose the address as they would with curl.

use std::time::{Duration, Instant};

use crate::{Error, Request, Trust, exchange};

/// Redirect hops followed at most.
const MAX_HOPS: usize = 5;

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
    let tls = trust.connector()?;
    let deadline = Instant::now() + timeout;
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
        let ip = match host.parse() {
            Ok(ip) => ip,
            Err(_) => tokio::net::lookup_host((host.as_str(), port))
                .await
                .map_err(|e| Error::Download {
                    url: url.to_string(),
                    reason: format!("cannot resolve {host}: {e}"),
                })?
                .next()
                .ok_or_else(|| Error::Download {
                    url: url.to_string(),
                    reason: format!("{host} has no address"),
                })?
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
                if_none_match: None,
                if_modified_since: None,
                extra: &[],
                cap,
                connect_timeout: timeout,
                deadline,
            },
            &tls,
        )
        .await
        .map_err(|e| Error::Download {
            url: url.to_string(),
            reason: e.to_string(),
        })?;
        let fail = |reason: String| Error::Download {
            url: url.to_string(),
            reason,
        };
        match x.status {
            200 if x.truncated => {
                return Err(fail(format!("the file is larger than {} MiB", cap >> 20)));
            }
            200 => return Ok(x.body),
            301 | 302 | 303 | 307 | 308 => {
                let to = x
                    .headers
                    .iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case("location"))
                    .map(|(_, v)| v.clone())
                    .ok_or_else(|| fail("redirect without Location".into()))?;
                url = url
                    .join(&to)
                    .map_err(|e| fail(format!("bad redirect {to:?}: {e}")))?;
            }
            s => return Err(fail(format!("HTTP status {s}"))),
        }
    }
    Err(Error::Download {
        url: url.to_string(),
        reason: format!("more than {MAX_HOPS} redirects"),
    })
}
