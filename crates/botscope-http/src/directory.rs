//! A signed agent's key directory
//! (`/.well-known/http-message-signatures-directory`), fetched as Web Bot
//! Auth says: HTTPS only, the address guard, no redirect followed, the
//! media type checked, size and time capped, the response's own signature
//! checked when it carries one, and how long to keep the answer (HTTP
//! caching, bounded; a failure is kept at most 5 minutes).

use std::net::IpAddr;
use std::time::{Duration, Instant};

use botscope_httpsig::{Directory, Outcome, Policy, keys::MAX_DIRECTORY_BYTES};

use crate::{FetchError, Request, Trust, exchange, not_public};

/// The directory's path on the agent's origin.
pub const WELL_KNOWN: &str = "/.well-known/http-message-signatures-directory";
/// Its media type.
pub const MEDIA_TYPE: &str = "application/http-message-signatures-directory+json";
/// The longest a directory is kept, whatever its `Cache-Control` says.
pub const MAX_KEEP: Duration = Duration::from_secs(24 * 3600);
/// The shortest (a directory that says `no-store` is still not fetched
/// again for every request).
pub const MIN_KEEP: Duration = Duration::from_secs(60);
/// How long a directory without caching headers is kept.
pub const DEFAULT_KEEP: Duration = Duration::from_secs(3600);
/// How long a failure is kept before the next try.
pub const FAILURE_KEEP: Duration = Duration::from_secs(300);

/// How directories are fetched.
#[derive(Debug, Clone)]
pub struct DirectoryConfig {
    /// Which authorities HTTPS trusts.
    pub trust: Trust,
    /// Connect to private and loopback addresses too (tests, private
    /// deployments); off, only public unicast addresses.
    pub allow_private: bool,
    /// Time for the whole fetch.
    pub timeout: Duration,
    /// The `User-Agent` sent.
    pub user_agent: String,
}

impl Default for DirectoryConfig {
    fn default() -> Self {
        DirectoryConfig {
            trust: Trust::system(),
            allow_private: false,
            timeout: Duration::from_secs(10),
            user_agent: crate::DEFAULT_USER_AGENT.to_owned(),
        }
    }
}

/// Why a directory could not be had.
#[derive(Debug, thiserror::Error)]
pub enum DirectoryError {
    /// The agent is not an `https://` URL with a host.
    #[error("{0}")]
    Url(String),
    /// The host resolves to an address the guard refuses.
    #[error("{host} resolves to {ip} ({why}): not fetched (--allow-private lets it)")]
    Private {
        /// The host.
        host: String,
        /// The address.
        ip: IpAddr,
        /// What kind of address it is.
        why: &'static str,
    },
    /// No response.
    #[error("{0}")]
    Fetch(#[from] FetchError),
    /// A redirect: the draft lets none be followed.
    #[error("status {status}: a redirect{} (not followed)", location.as_deref().map(|l| format!(" to {l}")).unwrap_or_default())]
    Redirect {
        /// The status.
        status: u16,
        /// Where to.
        location: Option<String>,
    },
    /// A status other than 200.
    #[error("status {0}")]
    Status(u16),
    /// Another media type.
    #[error("media type `{0}`, not {MEDIA_TYPE}")]
    MediaType(String),
    /// More than [`MAX_DIRECTORY_BYTES`].
    #[error("more than {MAX_DIRECTORY_BYTES} bytes")]
    TooLarge,
    /// Not a directory.
    #[error("{0}")]
    Parse(String),
    /// The response is signed and the signature does not hold.
    #[error("the directory's signature: {0}")]
    Signature(String),
}

impl DirectoryError {
    /// How long this failure is kept before trying again: network trouble
    /// a minute, an answer that says no [`FAILURE_KEEP`].
    pub fn keep(&self) -> Duration {
        match self {
            DirectoryError::Fetch(_) => MIN_KEEP,
            _ => FAILURE_KEEP,
        }
    }
}

/// A directory fetched.
#[derive(Debug, Clone)]
pub struct Fetched {
    /// The URL fetched.
    pub url: String,
    /// The keys.
    pub directory: Directory,
    /// How long to keep it.
    pub keep: Duration,
    /// `verified` when the response is signed by a key it lists,
    /// `unverified` when it is not signed.
    pub signature: Outcome,
}

/// [`fetch_directory`] for a caller without a runtime (a log's parsing
/// thread): the fetch runs on a runtime of its own, made for it.
pub fn fetch_directory_blocking(
    agent: &str,
    cfg: &DirectoryConfig,
    now: i64,
) -> Result<Fetched, DirectoryError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| FetchError::Connect(format!("no runtime for the fetch: {e}")))?;
    rt.block_on(fetch_directory(agent, cfg, now))
}

/// The directory URL of `agent`: its origin's well-known path, or the
/// agent URL itself when it names a path of its own.
pub fn directory_url(agent: &str) -> Result<url::Url, DirectoryError> {
    let url = url::Url::parse(agent.trim())
        .map_err(|e| DirectoryError::Url(format!("agent `{agent}` is not a URL: {e}")))?;
    if url.scheme() != "https" {
        return Err(DirectoryError::Url(format!(
            "agent `{agent}`: key directories are fetched over https only"
        )));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(DirectoryError::Url(format!("agent `{agent}` has no host")));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(DirectoryError::Url(format!(
            "agent `{agent}` carries credentials"
        )));
    }
    if url.path() == "/" || url.path().is_empty() {
        let mut u = url.clone();
        u.set_path(WELL_KNOWN);
        u.set_query(None);
        u.set_fragment(None);
        return Ok(u);
    }
    let mut u = url;
    u.set_fragment(None);
    Ok(u)
}

/// How long `Cache-Control` lets the directory be kept, within
/// [`MIN_KEEP`] and [`MAX_KEEP`].
pub fn keep_for(headers: &[(String, String)]) -> Duration {
    let cc = botscope_httpsig::message::field(headers, "cache-control").unwrap_or_default();
    let mut keep = None;
    for d in cc.split(',') {
        let d = d.trim().to_ascii_lowercase();
        if d == "no-store" || d == "no-cache" {
            keep = Some(Duration::ZERO);
        } else if let Some(v) = d.strip_prefix("max-age=")
            && keep != Some(Duration::ZERO)
        {
            keep = v.trim_matches('"').parse().ok().map(Duration::from_secs);
        }
    }
    keep.unwrap_or(DEFAULT_KEEP).clamp(MIN_KEEP, MAX_KEEP)
}

/// Fetches `agent`'s key directory at `now` (Unix seconds, for the
/// response's signature).
pub async fn fetch_directory(
    agent: &str,
    cfg: &DirectoryConfig,
    now: i64,
) -> Result<Fetched, DirectoryError> {
    let url = directory_url(agent)?;
    let host = url
        .host_str()
        .unwrap_or_default()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_owned();
    let port = url.port_or_known_default().unwrap_or(443);
    let deadline = Instant::now() + cfg.timeout;
    let ips: Vec<IpAddr> = match host.parse::<IpAddr>() {
        Ok(ip) => vec![ip],
        Err(_) => tokio::time::timeout_at(
            deadline.into(),
            tokio::net::lookup_host((host.as_str(), port)),
        )
        .await
        .map_err(|_| FetchError::Timeout(format!("resolving {host}")))?
        .map_err(|e| FetchError::Dns(format!("{host}: {e}")))?
        .map(|a| a.ip())
        .collect(),
    };
    // Every address is checked: a name that also points inside is not
    // fetched at all.
    if !cfg.allow_private {
        for ip in &ips {
            if let Some(why) = not_public(*ip) {
                return Err(DirectoryError::Private { host, ip: *ip, why });
            }
        }
    }
    let ip = *ips
        .first()
        .ok_or_else(|| FetchError::Dns(format!("{host} has no address")))?;
    let tls = cfg
        .trust
        .connector()
        .map_err(|e| FetchError::Tls(e.to_string()))?;
    let x = exchange(
        Request {
            url: &url,
            host: &host,
            ip,
            port,
            user_agent: &cfg.user_agent,
            accept: MEDIA_TYPE,
            if_none_match: None,
            if_modified_since: None,
            extra: &[],
            cap: MAX_DIRECTORY_BYTES,
            connect_timeout: cfg.timeout,
            deadline,
        },
        &tls,
    )
    .await?;
    let header = |name: &str| {
        botscope_httpsig::message::field(&x.headers, name).map(std::borrow::Cow::into_owned)
    };
    match x.status {
        200 => {}
        s @ 300..=399 => {
            return Err(DirectoryError::Redirect {
                status: s,
                location: header("location"),
            });
        }
        s => return Err(DirectoryError::Status(s)),
    }
    let media = header("content-type").unwrap_or_default();
    let essence = media
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    if essence != MEDIA_TYPE {
        return Err(DirectoryError::MediaType(media));
    }
    if x.truncated {
        return Err(DirectoryError::TooLarge);
    }
    let directory = Directory::parse(&x.body).map_err(|e| DirectoryError::Parse(e.to_string()))?;
    // The request as the directory's signature covers it (`@authority`).
    let request = botscope_httpsig::Request::new(
        "GET",
        "https",
        &url[url::Position::BeforeHost..url::Position::AfterPort],
        &url[url::Position::BeforePath..url::Position::AfterQuery],
        Vec::new(),
    );
    let v = botscope_httpsig::verify_directory_response(
        &request,
        botscope_httpsig::Response {
            status: x.status,
            headers: &x.headers,
            request: Some(&request),
        },
        &x.body,
        now,
        &Policy::default(),
    );
    let signature = match v.outcome {
        Outcome::Invalid => return Err(DirectoryError::Signature(v.reason.to_string())),
        o => o,
    };
    Ok(Fetched {
        url: url.to_string(),
        directory,
        keep: keep_for(&x.headers),
        signature,
    })
}

/// What fetching one agent's directory gave.
#[derive(Debug)]
pub struct AgentKeys {
    /// The agent.
    pub agent: String,
    /// Its directory, or why there is none.
    pub directory: Result<Fetched, DirectoryError>,
}

/// Verifies `req`'s Web Bot Auth signature at `now`, first fetching the
/// key directory of each agent its `Signature-Agent` names (at most
/// [`botscope_httpsig::base::MAX_SIGNATURES`]); with `fetch` false none
/// is fetched and a signature stays unverified.
pub async fn verify_request(
    req: &botscope_httpsig::Request,
    cfg: &DirectoryConfig,
    now: i64,
    fetch: bool,
) -> (botscope_httpsig::Verdict, Vec<AgentKeys>) {
    let mut keys = botscope_httpsig::KeySet::new();
    let mut fetched = Vec::new();
    if req.header("signature-input").is_some() {
        for agent in botscope_httpsig::signature_agents(req) {
            if !fetch {
                keys.fail(Some(&agent), "offline: its key directory was not fetched");
                continue;
            }
            let got = fetch_directory(&agent, cfg, now).await;
            match &got {
                Ok(d) => keys.insert(Some(&agent), d.directory.clone()),
                Err(e) => keys.fail(Some(&agent), e.to_string()),
            }
            fetched.push(AgentKeys {
                agent,
                directory: got,
            });
        }
    }
    let v = botscope_httpsig::verify_request(req, &keys, now, &Policy::default());
    (v, fetched)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let u = |a: &str| directory_url(a).map(|u| u.to_string());
        assert_eq!(
            u("https://signature-agent.test").expect("url"),
            "https://signature-agent.test/.well-known/http-message-signatures-directory"
        );
        assert_eq!(
            u("https://Agent.Example:8443/").expect("url"),
            "https://agent.example:8443/.well-known/http-message-signatures-directory"
        );
        assert_eq!(
            u("https://agent.example/keys/dir.json").expect("url"),
            "https://agent.example/keys/dir.json"
        );
        for bad in [
            "http://agent.example",
            "agent.example",
            "https://u:p@agent.example",
            "ftp://x",
        ] {
            assert!(u(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn caching() {
        let h = |v: &str| vec![("Cache-Control".to_owned(), v.to_owned())];
        assert_eq!(keep_for(&[]), DEFAULT_KEEP);
        assert_eq!(keep_for(&h("max-age=600")), Duration::from_secs(600));
        assert_eq!(keep_for(&h("public, max-age=99999999")), MAX_KEEP);
        assert_eq!(keep_for(&h("no-store")), MIN_KEEP);
        assert_eq!(keep_for(&h("max-age=5")), MIN_KEEP);
    }
}
