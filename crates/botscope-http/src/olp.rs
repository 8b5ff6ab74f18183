//! An RSL licence server, asked as the Open License Protocol says: the
//! introspection endpoint (`POST {server}/introspect`, `token` and
//! `resource`, RFC 7662's form encoding) a site asks whether a presented
//! licence token permits a page, and the token endpoint (`POST
//! {server}/token`, `grant_type=rsl`, the `<license>` wanted and the
//! `resource`) a crawler acquires one at. Both authenticate the client
//! with HTTP Basic (`client_id:client_secret`), as OAuth 2.0's client
//! credentials do.
//!
//! Bounded like every fetch here: the address guard (unless private
//! addresses are allowed), no redirect followed, the head due by a
//! first-byte deadline (a server that trickles is given up on), the whole
//! exchange by a total one, the answer capped at 64 KiB. What the answer
//! means is botscope-terms' reading ([`botscope_terms::olp`]), fail-closed.

use std::net::IpAddr;
use std::time::{Duration, Instant};

use base64::Engine as _;
use botscope_terms::olp::{self, Introspected, Issued};

use crate::{FetchError, Request, Trust};

/// A licence server's client: how to reach one, and who we are to it.
#[derive(Debug, Clone)]
pub struct OlpConfig {
    /// Which authorities HTTPS trusts.
    pub trust: Trust,
    /// Connect to private and loopback addresses too (tests, a licence
    /// server on the site's own network).
    pub allow_private: bool,
    /// Time for the whole exchange.
    pub timeout: Duration,
    /// Time until the answer's head has come.
    pub first_byte: Duration,
    /// The `User-Agent` sent.
    pub user_agent: String,
    /// The client's credentials at the licence server
    /// (`client_id`, `client_secret`), sent with HTTP Basic.
    pub credentials: Option<(String, String)>,
}

impl Default for OlpConfig {
    fn default() -> Self {
        OlpConfig {
            trust: Trust::system(),
            allow_private: false,
            timeout: Duration::from_secs(5),
            first_byte: Duration::from_secs(2),
            user_agent: crate::DEFAULT_USER_AGENT.to_owned(),
            credentials: None,
        }
    }
}

/// Why a licence server gave no readable answer.
#[derive(Debug, thiserror::Error)]
pub enum OlpError {
    /// The server is not an http(s) URL.
    #[error("the licence server {0} is not an http(s) URL")]
    Url(String),
    /// Its address is one the guard refuses.
    #[error("the licence server {host} resolves to {ip} ({why}): not asked")]
    Private {
        /// The host.
        host: String,
        /// The address.
        ip: IpAddr,
        /// Why it is refused.
        why: &'static str,
    },
    /// The exchange failed.
    #[error("the licence server: {0}")]
    Fetch(#[from] FetchError),
    /// It answered with a status that is not an answer (a redirect, a 5xx).
    #[error("the licence server answered {0}")]
    Status(u16),
    /// Its answer could not be read.
    #[error("{0}")]
    Answer(String),
}

/// One `POST` of `form` to `url`.
async fn post(url: &url::Url, form: &str, cfg: &OlpConfig) -> Result<crate::Exchange, OlpError> {
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
            return Err(OlpError::Private { host, ip, why });
        }
    };
    let tls = cfg
        .trust
        .connector()
        .map_err(|e| FetchError::Tls(e.to_string()))?;
    let extra: Vec<(String, String)> = cfg
        .credentials
        .iter()
        .map(|(id, secret)| {
            let basic = base64::engine::general_purpose::STANDARD.encode(format!("{id}:{secret}"));
            ("authorization".to_owned(), format!("Basic {basic}"))
        })
        .collect();
    Ok(crate::exchange::post_form_by(
        Request {
            url,
            host: &host,
            ip,
            port,
            user_agent: &cfg.user_agent,
            accept: "application/json",
            if_none_match: None,
            if_modified_since: None,
            extra: &extra,
            cap: olp::MAX_ANSWER_BYTES,
            connect_timeout: cfg.timeout,
            deadline,
        },
        form,
        &tls,
        started + cfg.first_byte,
    )
    .await?)
}

/// Asks `server` whether `token` permits `resource` (a page's URL), at
/// `now` (Unix seconds, for the answer's `exp`).
pub async fn introspect(
    server: &str,
    token: &str,
    resource: &str,
    cfg: &OlpConfig,
    now: i64,
) -> Result<Introspected, OlpError> {
    let url = olp::endpoint(server, "introspect").ok_or_else(|| OlpError::Url(server.into()))?;
    let x = post(
        &url,
        &olp::form(&[("token", token), ("resource", resource)]),
        cfg,
    )
    .await?;
    if x.truncated {
        return Err(OlpError::Answer(
            "the introspection answer is longer than 64 KiB".into(),
        ));
    }
    match x.status {
        // RFC 7662 answers 200 for an inactive token too; a 401 is our
        // credentials refused.
        200 => olp::read_introspection(&x.body, resource, now).map_err(OlpError::Answer),
        400 | 401 => Err(OlpError::Answer(
            olp::read_token_answer(x.status, &x.body)
                .err()
                .unwrap_or_else(|| format!("the licence server answered {}", x.status)),
        )),
        s => Err(OlpError::Status(s)),
    }
}

/// Acquires a licence token for `resource` under `license` (the RSL
/// `<license>` element the crawler agrees to) from `server`.
pub async fn acquire(
    server: &str,
    license: &str,
    resource: &str,
    cfg: &OlpConfig,
) -> Result<Issued, OlpError> {
    let url = olp::endpoint(server, "token").ok_or_else(|| OlpError::Url(server.into()))?;
    let form = olp::form(&[
        ("grant_type", olp::GRANT_TYPE),
        ("license", license),
        ("resource", resource),
    ]);
    let x = post(&url, &form, cfg).await?;
    if x.truncated {
        return Err(OlpError::Answer(
            "the token answer is longer than 64 KiB".into(),
        ));
    }
    if (300..400).contains(&x.status) || x.status >= 500 {
        return Err(OlpError::Status(x.status));
    }
    olp::read_token_answer(x.status, &x.body).map_err(OlpError::Answer)
}
