//! One site's robots.txt, fetched for a person (`robots check --robots
//! URL`, `robots lint URL`) as Google's tester does: the harvester's fetch,
//! its policy and its address guard, then the file the policy says to use.

use std::net::SocketAddr;

use botscope_dns::{HickoryLookup, Pool};
use botscope_store::Attempt;

use crate::{Config, Error, Harvester};

/// A fetched robots.txt and what it means.
#[derive(Debug, Clone)]
pub struct Fetched {
    /// The rules to apply: the body when the policy parses it; empty for
    /// allow-all (4xx); `Disallow: /` for everyone when the site cannot be
    /// read (5xx, unreachable: RFC 9309 2.3.1.3–4).
    pub robots_txt: Vec<u8>,
    /// The attempt as the harvest records it.
    pub attempt: Attempt,
}

impl Fetched {
    /// One line for people: `https://host/robots.txt: 200, 1234 bytes
    /// (parse)`, or the error and what it means.
    pub fn describe(&self) -> String {
        let a = &self.attempt;
        let status = a
            .status
            .map_or_else(|| "no response".to_owned(), |s| s.to_string());
        let error = a
            .error
            .as_deref()
            .map(|e| format!(": {e}"))
            .unwrap_or_default();
        format!(
            "{}: {status}, {} bytes{error}; {} ({})",
            a.url, a.bytes, a.outcome, a.reason
        )
    }
}

/// The host (and port, when given) of `url` (`https://example.com/x`,
/// `example.com`), and whether the URL said `http://`.
fn site_of(url: &str) -> Option<(String, Option<u16>, bool)> {
    let (plain, rest) = match url.split_once("://") {
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case("http") => (true, rest),
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case("https") => (false, rest),
        Some(_) => return None,
        None => (false, url),
    };
    let authority = rest.split(['/', '?', '#']).next()?;
    let authority = authority.rsplit('@').next()?;
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(':') && p.bytes().all(|b| b.is_ascii_digit()) => {
            (h, Some(p.parse().ok()?))
        }
        _ => (authority, None),
    };
    let host = crate::host_of(host)?;
    Some((host, port, plain))
}

/// A DNS pool over `nameservers` (the system's when empty) for a few
/// lookups: no check queries, each name asked of the first server that
/// answers.
pub async fn dns_pool(
    nameservers: Vec<SocketAddr>,
    timeout: std::time::Duration,
) -> Result<Pool<HickoryLookup>, Error> {
    let servers = if nameservers.is_empty() {
        botscope_dns::system_nameservers()?
    } else {
        nameservers
    };
    let mut lookups = Vec::new();
    for s in &servers {
        lookups.push((*s, HickoryLookup::new(&[*s], timeout)?));
    }
    let (pool, _) = Pool::check(lookups, &[]).await?;
    Ok(pool)
}

/// Fetches the robots.txt of the site of `url` through `nameservers` (the
/// system's when empty), with the harvest's fetch, policy and guard. An
/// address the guard refuses is an error, not a site's answer.
pub async fn fetch_robots_txt(
    url: &str,
    mut cfg: Config,
    nameservers: Vec<SocketAddr>,
    timeout: std::time::Duration,
) -> Result<Fetched, Error> {
    let (host, port, plain) = site_of(url)
        .ok_or_else(|| Error::Setup(format!("{url:?} is not an http(s) URL or host")))?;
    if let Some(p) = port {
        if plain {
            cfg.http_port = p;
        } else {
            cfg.https_port = p;
        }
    }
    let h = Harvester::new(cfg, dns_pool(nameservers, timeout).await?)?;
    let mut attempt = h.fetch(&host, None, None).await;
    // The harvest keys a site by its host; the user asked this port.
    if let Some(p) = port
        && let Ok(mut u) = url::Url::parse(&attempt.url)
        && u.set_port(Some(p)).is_ok()
    {
        attempt.url = u.to_string();
    }
    if attempt.error_class.as_deref() == Some(crate::FetchError::Refused(String::new()).class()) {
        return Err(Error::Refused(attempt.error.unwrap_or_default()));
    }
    let robots_txt = match (&attempt.body, attempt.outcome.as_str()) {
        (Some(body), _) => body.clone(),
        (None, "disallow-all") => b"User-agent: *\nDisallow: /\n".to_vec(),
        _ => Vec::new(),
    };
    Ok(Fetched {
        robots_txt,
        attempt,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sites_of_urls() {
        assert_eq!(
            site_of("https://Example.COM/robots.txt"),
            Some(("example.com".into(), None, false))
        );
        assert_eq!(
            site_of("http://example.com:8080/x?y"),
            Some(("example.com".into(), Some(8080), true))
        );
        assert_eq!(
            site_of("example.com"),
            Some(("example.com".into(), None, false))
        );
        assert_eq!(site_of("ftp://example.com/"), None);
        assert_eq!(
            site_of("https://user@example.com/"),
            Some(("example.com".into(), None, false))
        );
    }
}
