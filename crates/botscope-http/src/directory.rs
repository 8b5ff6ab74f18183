//! A signed agent's keys, fetched as draft-ietf-webbotauth-httpsig-protocol-01
//! says: the `Signature-Agent` URL fetched as sent and read as a JWK Set
//! (a bare origin, the earlier drafts' form, read as its well-known
//! directory `/.well-known/http-message-signatures-directory`); HTTPS
//! only, the address guard, no redirect followed, 200 only, the
//! directory media type required at the well-known URL (a JWK Set
//! elsewhere may be `application/jwk-set+json` or `application/json`),
//! size and time capped, the response's own signature checked when it
//! carries one, and how long to keep the answer (HTTP caching, bounded; a
//! failure is kept at most 5 minutes).

use std::net::IpAddr;
use std::time::{Duration, Instant};

use botscope_httpsig::{Directory, Outcome, Policy, keys::MAX_DIRECTORY_BYTES};

use crate::{FetchError, Request, Trust};

/// The directory's path on the agent's origin.
pub const WELL_KNOWN: &str = botscope_httpsig::agent::WELL_KNOWN;
/// Its media type (required at the well-known URL only).
pub const MEDIA_TYPE: &str = botscope_httpsig::agent::DIRECTORY_MEDIA_TYPE;
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
    /// Time until the response's head has come (name, connection, TLS and
    /// head): a directory server that answers a byte at a time is given up
    /// on then.
    pub first_byte: Duration,
    /// The `User-Agent` sent.
    pub user_agent: String,
    /// Accept RFC 9421's published test keys (tests and the drafts'
    /// vectors only): a directory response signed with one is checked
    /// rather than refused.
    pub allow_test_keys: bool,
}

impl Default for DirectoryConfig {
    fn default() -> Self {
        DirectoryConfig {
            trust: Trust::system(),
            allow_private: false,
            timeout: Duration::from_secs(10),
            first_byte: Duration::from_secs(3),
            user_agent: crate::DEFAULT_USER_AGENT.to_owned(),
            allow_test_keys: false,
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
    #[error(
        "{host} resolves to {ip} ({why}): key directories are fetched from public addresses only; --allow-private fetches from private and loopback addresses too"
    )]
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
    #[error("media type `{got}`, not {want}")]
    MediaType {
        /// The `Content-Type` served.
        got: String,
        /// What the URL must be served as.
        want: &'static str,
    },
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
    /// The agent URL as read: its identifier and reading.
    pub agent: botscope_httpsig::AgentUrl,
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

/// The URL to fetch for `agent` and how it was read: the value as sent
/// ([`botscope_httpsig::agent::resolve`]), or a bare origin's well-known
/// directory.
pub fn directory_url(
    agent: &str,
) -> Result<(url::Url, botscope_httpsig::AgentUrl), DirectoryError> {
    let a = botscope_httpsig::agent::resolve(agent).map_err(DirectoryError::Url)?;
    let url = url::Url::parse(&a.fetch)
        .map_err(|e| DirectoryError::Url(format!("agent `{}` is not a URL: {e}", a.sent)))?;
    Ok((url, a))
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
    let (url, read) = directory_url(agent)?;
    let host = url
        .host_str()
        .unwrap_or_default()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_owned();
    let port = url.port_or_known_default().unwrap_or(443);
    let started = Instant::now();
    let deadline = started + cfg.timeout;
    let ip = match crate::guard::resolve_guarded(&host, port, deadline, cfg.allow_private).await {
        Ok(ip) => ip,
        Err(crate::guard::Unresolved::Fetch(e)) => return Err(e.into()),
        Err(crate::guard::Unresolved::Private(ip, why)) => {
            return Err(DirectoryError::Private { host, ip, why });
        }
    };
    let tls = cfg
        .trust
        .connector()
        .map_err(|e| FetchError::Tls(e.to_string()))?;
    let x = crate::exchange::exchange_by(
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
        started + cfg.first_byte,
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
    // The directory media type is required at the well-known URL only; a
    // JWK Set elsewhere is read as one.
    let accepted = if read.reading.well_known() {
        essence == MEDIA_TYPE
    } else {
        botscope_httpsig::agent::KEY_SET_MEDIA_TYPES.contains(&essence.as_str())
    };
    if !accepted {
        return Err(DirectoryError::MediaType {
            got: media,
            want: if read.reading.well_known() {
                MEDIA_TYPE
            } else {
                "application/jwk-set+json or application/json"
            },
        });
    }
    if x.truncated {
        return Err(DirectoryError::TooLarge);
    }
    let directory = Directory::parse_as(&x.body, read.reading.well_known())
        .map_err(|e| DirectoryError::Parse(e.to_string()))?;
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
        &Policy {
            allow_test_keys: cfg.allow_test_keys,
            ..Policy::default()
        },
    );
    let signature = match v.outcome {
        Outcome::Invalid => return Err(DirectoryError::Signature(v.reason.to_string())),
        o => o,
    };
    Ok(Fetched {
        url: url.to_string(),
        agent: read,
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

/// Verifies `req`'s Web Bot Auth signature at `now` under `policy`, first
/// fetching the keys of each agent its `Signature-Agent` names (at most
/// [`botscope_httpsig::base::MAX_SIGNATURES`]); with `fetch` false none is
/// fetched and a signature stays unverified, unless `held` (keys held by
/// other means, a JWK Set given by hand) has its key: it then verifies,
/// attributed to the key alone.
pub async fn verify_request(
    req: &botscope_httpsig::Request,
    cfg: &DirectoryConfig,
    now: i64,
    fetch: bool,
    policy: &Policy,
    held: Option<&Directory>,
) -> (botscope_httpsig::Verdict, Vec<AgentKeys>) {
    let mut keys = botscope_httpsig::KeySet::new();
    if let Some(d) = held {
        keys.insert(None, d.clone());
    }
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
    let v = botscope_httpsig::verify_request(req, &keys, now, policy);
    (v, fetched)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let u = |a: &str| directory_url(a).map(|(u, r)| (u.to_string(), r.reading));
        assert_eq!(
            u("https://signature-agent.test").expect("url"),
            (
                "https://signature-agent.test/.well-known/http-message-signatures-directory".into(),
                botscope_httpsig::Reading::Origin
            )
        );
        assert_eq!(
            u("https://Agent.Example:8443/").expect("url").0,
            "https://agent.example:8443/.well-known/http-message-signatures-directory"
        );
        // Any other URL is fetched as sent, its query kept.
        assert_eq!(
            u("https://agent.example/keys/dir.json?v=2").expect("url"),
            (
                "https://agent.example/keys/dir.json?v=2".into(),
                botscope_httpsig::Reading::KeySet
            )
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
