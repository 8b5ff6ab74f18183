//! `--upstream URL`: the gate on its own in front of an application, as a
//! reverse proxy. Each request is decided as `/forward-auth` decides the
//! request a front server asks about; what the policy lets through is
//! passed to the application, the rest answered here (403, 429 with
//! `Retry-After`, the challenge page). `/robots.txt` and `/.botscope/…`
//! are the gate's own.
//!
//! Built on hyper's client (hyper-util's pool, rustls for an https
//! upstream through the system's trust store): bodies are streamed both
//! ways, never held whole; hop-by-hop headers (RFC 9110, 7.6.1) are
//! removed both ways; `X-Forwarded-For`, `X-Forwarded-Proto`,
//! `X-Forwarded-Host` and `X-Real-IP` are set (a client's own are
//! replaced; a trusted proxy's are extended); the client's `X-Bot-*` and
//! label headers are replaced by the gate's; WebSocket (any `Upgrade`)
//! is passed through after the application's 101; upstream connections
//! are kept alive. An application that cannot be reached gets the client
//! a 502 with a short page, one too slow to answer a 504, a request body
//! over `--max-request-body` a 413.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Request, Response, StatusCode, Uri, header};
use axum::response::IntoResponse;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioIo};

use crate::Gate;
use crate::answer::{self, Front};

/// Where the application is and what a request to it may take.
#[derive(Debug, Clone)]
pub struct UpstreamConfig {
    /// The application (`http://` or `https://`, optionally with a path
    /// prefix every request's path is put under).
    pub url: url::Url,
    /// Time a connection to it may take (`--upstream-connect-timeout`).
    pub connect_timeout: Duration,
    /// Time from sending a request to its response's head
    /// (`--upstream-timeout`), the request body's sending included.
    pub response_timeout: Duration,
    /// The largest request body passed on (`--max-request-body`).
    pub max_request_body: u64,
    /// How long an idle connection to the application is kept.
    pub idle: Duration,
    /// Idle connections to the application kept at most.
    pub max_idle: usize,
    /// Upgraded connections (WebSockets) passed through at once at most.
    pub max_tunnels: usize,
    /// What an https upstream's certificate is checked against.
    pub trust: botscope_http::Trust,
}

impl UpstreamConfig {
    /// `url` with the defaults: 5 s to connect, 60 s to answer, 100 MiB
    /// of request body, idle connections kept 90 s (up to 256), 4,096
    /// tunnels, the system's trust store.
    pub fn new(url: url::Url) -> UpstreamConfig {
        UpstreamConfig {
            url,
            connect_timeout: Duration::from_secs(5),
            response_timeout: Duration::from_secs(60),
            max_request_body: 100 << 20,
            idle: Duration::from_secs(90),
            max_idle: 256,
            max_tunnels: 4096,
            trust: botscope_http::Trust::system(),
        }
    }
}

/// What happened to requests passed on, for `/metrics` and `/healthz`.
#[derive(Debug, Default)]
pub struct UpstreamStats {
    /// Answered by the application (any status).
    pub answered: AtomicU64,
    /// The application could not be reached (502).
    pub unreachable: AtomicU64,
    /// It did not answer in time (504).
    pub timed_out: AtomicU64,
    /// The request body was over the limit (413).
    pub too_large: AtomicU64,
    /// Connections upgraded (WebSockets) in all.
    pub upgraded: AtomicU64,
    /// Upgrades refused: as many tunnels open as allowed.
    pub tunnels_refused: AtomicU64,
}

/// The application behind the gate, and the pool of connections to it.
pub struct Upstream {
    client: Client<hyper_rustls::HttpsConnector<HttpConnector>, Body>,
    scheme: axum::http::uri::Scheme,
    authority: axum::http::uri::Authority,
    /// The URL's path without its last `/` (empty for none).
    prefix: String,
    cfg: UpstreamConfig,
    tunnels: Arc<tokio::sync::Semaphore>,
    /// What happened to requests passed on.
    pub stats: UpstreamStats,
}

impl std::fmt::Debug for Upstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Upstream")
            .field("url", &self.cfg.url.as_str())
            .finish_non_exhaustive()
    }
}

/// Why an upstream cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("--upstream {url}: {why}")]
pub struct UpstreamError {
    url: String,
    why: String,
}

impl Upstream {
    /// The pool for `cfg.url` (checked: http or https, a host, no query,
    /// no user name).
    pub fn new(cfg: UpstreamConfig) -> Result<Upstream, UpstreamError> {
        let fail = |why: &str| UpstreamError {
            url: botscope_text::field(cfg.url.as_str()).to_string(),
            why: why.to_owned(),
        };
        let scheme = match cfg.url.scheme() {
            "http" => axum::http::uri::Scheme::HTTP,
            "https" => axum::http::uri::Scheme::HTTPS,
            _ => {
                return Err(fail(
                    "the application's URL starts with http:// or https://",
                ));
            }
        };
        if cfg.url.host_str().is_none_or(str::is_empty) {
            return Err(fail("the URL names no host"));
        }
        if cfg.url.query().is_some() || cfg.url.fragment().is_some() {
            return Err(fail("the URL takes no query or fragment"));
        }
        if !cfg.url.username().is_empty() || cfg.url.password().is_some() {
            return Err(fail("the URL takes no user name or password"));
        }
        let host = cfg.url.host_str().unwrap_or_default();
        let authority = match cfg.url.port() {
            Some(p) => format!("{host}:{p}"),
            None => host.to_owned(),
        };
        let authority = authority
            .parse::<axum::http::uri::Authority>()
            .map_err(|e| fail(&e.to_string()))?;
        let prefix = cfg.url.path().trim_end_matches('/').to_owned();
        let mut http = HttpConnector::new();
        http.enforce_http(false);
        http.set_nodelay(true);
        http.set_connect_timeout(Some(cfg.connect_timeout));
        http.set_keepalive(Some(Duration::from_secs(60)));
        let mut tls = cfg
            .trust
            .client_config()
            .map_err(|e| fail(&e.to_string()))?;
        // The connector offers HTTP/1.1 itself.
        tls.alpn_protocols.clear();
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http()
            .enable_http1()
            .wrap_connector(http);
        let client = Client::builder(TokioExecutor::new())
            .pool_idle_timeout(cfg.idle)
            .pool_max_idle_per_host(cfg.max_idle)
            .pool_timer(hyper_util::rt::TokioTimer::new())
            .build(connector);
        Ok(Upstream {
            client,
            scheme,
            authority,
            prefix,
            tunnels: Arc::new(tokio::sync::Semaphore::new(cfg.max_tunnels.max(1))),
            cfg,
            stats: UpstreamStats::default(),
        })
    }

    /// The application's URL.
    pub fn url(&self) -> &url::Url {
        &self.cfg.url
    }

    /// Upgraded connections open now.
    pub fn tunnels(&self) -> usize {
        self.cfg
            .max_tunnels
            .max(1)
            .saturating_sub(self.tunnels.available_permits())
    }

    /// The application's URI for a request's target.
    fn uri(&self, target: &str) -> Option<Uri> {
        let target = if target.starts_with('/') { target } else { "/" };
        let pq = format!("{}{target}", self.prefix);
        Uri::builder()
            .scheme(self.scheme.clone())
            .authority(self.authority.clone())
            .path_and_query(pq)
            .build()
            .ok()
    }
}

/// Whether a request is a gate path in front of an application:
/// `/robots.txt` and `/.botscope/…` (the challenge, the pass, and the
/// operators' `/.botscope/healthz` and `/.botscope/metrics`).
pub fn is_gate_path(path: &str) -> bool {
    path == "/robots.txt" || path.starts_with(crate::challenge::PREFIX)
}

/// The hop-by-hop headers (RFC 9110, 7.6.1), and the ones a `Connection`
/// header names, removed. Returns the `Upgrade` asked for, when the
/// connection asked for one.
fn strip_hop_by_hop(h: &mut HeaderMap) -> Option<HeaderValue> {
    let named: Vec<HeaderName> = h
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|t| HeaderName::from_bytes(t.trim().as_bytes()).ok())
        .collect();
    let upgrade = named
        .contains(&header::UPGRADE)
        .then(|| h.get(header::UPGRADE).cloned())
        .flatten();
    for n in named {
        h.remove(n);
    }
    for n in [
        header::CONNECTION,
        header::TE,
        header::TRAILER,
        header::TRANSFER_ENCODING,
        header::UPGRADE,
        header::PROXY_AUTHENTICATE,
        header::PROXY_AUTHORIZATION,
    ] {
        h.remove(n);
    }
    h.remove("keep-alive");
    h.remove("proxy-connection");
    upgrade
}

/// A short page of the gate's own, never cached.
fn short_page(status: StatusCode, text: &'static str) -> Response<Body> {
    let mut r = (status, text).into_response();
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

/// Reads and drops what a refused request still sends, for a while (at
/// most 2 s and 16 MiB), as servers close after an early answer: a client
/// still writing its body reads the answer instead of a reset connection.
fn linger(mut body: hyper::body::Incoming) {
    use http_body_util::BodyExt;
    tokio::spawn(async move {
        let mut left: usize = 16 << 20;
        let _ = tokio::time::timeout(Duration::from_secs(2), async {
            while let Some(Ok(frame)) = body.frame().await {
                let n = frame.data_ref().map_or(0, |d| d.len());
                left = left.saturating_sub(n);
                if left == 0 {
                    break;
                }
            }
        })
        .await;
    });
}

/// Whether the error came from the request body's limit.
fn over_limit(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cur = Some(e);
    while let Some(e) = cur {
        if e.is::<http_body_util::LengthLimitError>() {
            return true;
        }
        cur = e.source();
    }
    false
}

/// The error and its causes, on one line (for the log).
fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut parts = vec![e.to_string()];
    let mut cur = e.source();
    while let Some(c) = cur {
        let s = c.to_string();
        if !parts.iter().any(|p| p.contains(&s)) {
            parts.push(s);
        }
        cur = c.source();
    }
    parts.join(": ")
}

/// Decides a request and passes it to the application, or answers it.
pub(crate) async fn handle(
    g: &Gate,
    up: &Upstream,
    peer: SocketAddr,
    mut req: Request<hyper::body::Incoming>,
) -> Response<Body> {
    let target = req
        .uri()
        .path_and_query()
        .map_or_else(|| "/".to_owned(), |p| p.as_str().to_owned());
    let a = answer::decide_at(g, peer.ip(), req.headers(), req.method().as_str(), &target).await;
    let refused = !matches!(
        a.action,
        botscope_policy::Action::Allow | botscope_policy::Action::Label
    );
    if refused && a.enforced {
        return answer::respond(g, &a, req.headers(), Front::Forward, &target);
    }
    // What the client asked to upgrade to, and its side of the upgrade.
    let wants_upgrade = req.headers().contains_key(header::UPGRADE);
    let client_side = wants_upgrade.then(|| hyper::upgrade::on(&mut req));
    let (mut parts, body) = req.into_parts();
    let Some(uri) = up.uri(&target) else {
        return short_page(StatusCode::BAD_REQUEST, "Bad request.\n");
    };
    let upgrade = strip_hop_by_hop(&mut parts.headers);
    let trusted = g.config.trust_proxy.iter().any(|r| r.contains(peer.ip()));
    forwarding_headers(g, &mut parts.headers, peer, &a, trusted);
    if let Some(u) = &upgrade {
        parts
            .headers
            .insert(header::CONNECTION, HeaderValue::from_static("upgrade"));
        parts.headers.insert(header::UPGRADE, u.clone());
    }
    if !parts.headers.contains_key(header::HOST)
        && let Ok(h) = HeaderValue::from_str(up.authority.as_str())
    {
        parts.headers.insert(header::HOST, h);
    }
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > up.cfg.max_request_body) {
        up.stats.too_large.fetch_add(1, Ordering::Relaxed);
        linger(body);
        return short_page(
            StatusCode::PAYLOAD_TOO_LARGE,
            "Request body too large.\n\nThis site takes smaller bodies than this request's.\n",
        );
    }
    let limit = usize::try_from(up.cfg.max_request_body).unwrap_or(usize::MAX);
    parts.uri = uri;
    parts.version = axum::http::Version::HTTP_11;
    let out = Request::from_parts(parts, Body::new(http_body_util::Limited::new(body, limit)));
    let sent = tokio::time::timeout(up.cfg.response_timeout, up.client.request(out)).await;
    let mut res = match sent {
        Err(_) => {
            up.stats.timed_out.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(
                "the application at {} did not answer within {} s",
                up.cfg.url,
                up.cfg.response_timeout.as_secs()
            );
            return short_page(
                StatusCode::GATEWAY_TIMEOUT,
                "Gateway timeout.\n\nThe site's application did not answer in time; try again later.\n",
            );
        }
        Ok(Err(e)) if over_limit(&e) => {
            up.stats.too_large.fetch_add(1, Ordering::Relaxed);
            return short_page(
                StatusCode::PAYLOAD_TOO_LARGE,
                "Request body too large.\n\nThis site takes smaller bodies than this request's.\n",
            );
        }
        Ok(Err(e)) => {
            up.stats.unreachable.fetch_add(1, Ordering::Relaxed);
            tracing::warn!("the application at {}: {}", up.cfg.url, chain(&e));
            return short_page(
                StatusCode::BAD_GATEWAY,
                "Bad gateway.\n\nThe site's application cannot be reached just now; try again later.\n",
            );
        }
        Ok(Ok(res)) => res,
    };
    up.stats.answered.fetch_add(1, Ordering::Relaxed);
    if res.status() == StatusCode::SWITCHING_PROTOCOLS
        && let (Some(client_side), Some(_)) = (client_side, &upgrade)
    {
        let Ok(permit) = up.tunnels.clone().try_acquire_owned() else {
            up.stats.tunnels_refused.fetch_add(1, Ordering::Relaxed);
            return short_page(
                StatusCode::SERVICE_UNAVAILABLE,
                "Service unavailable.\n\nToo many open connections; try again later.\n",
            );
        };
        up.stats.upgraded.fetch_add(1, Ordering::Relaxed);
        let app_side = hyper::upgrade::on(&mut res);
        tokio::spawn(async move {
            let _permit = permit;
            let (Ok(c), Ok(a)) = tokio::join!(client_side, app_side) else {
                return;
            };
            let (mut c, mut a) = (TokioIo::new(c), TokioIo::new(a));
            let _ = tokio::io::copy_bidirectional(&mut c, &mut a).await;
        });
        let (parts, _) = res.into_parts();
        return Response::from_parts(parts, Body::empty());
    }
    let (mut parts, body) = res.into_parts();
    strip_hop_by_hop(&mut parts.headers);
    Response::from_parts(parts, Body::new(body))
}

/// The headers the application reads about the client: where it is and
/// what the gate decided (a client's own `X-Bot-*` and label headers
/// replaced).
fn forwarding_headers(
    g: &Gate,
    h: &mut HeaderMap,
    peer: SocketAddr,
    a: &answer::Answer,
    trusted: bool,
) {
    let xff = HeaderName::from_static("x-forwarded-for");
    let proto = HeaderName::from_static("x-forwarded-proto");
    let fhost = HeaderName::from_static("x-forwarded-host");
    let real = HeaderName::from_static("x-real-ip");
    // A trusted proxy's chain is extended by its own address; a
    // stranger's is not believed.
    let before: Vec<String> = if trusted {
        h.get_all(&xff)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .map(str::to_owned)
            .collect()
    } else {
        Vec::new()
    };
    let mut chain = before.join(", ");
    if !chain.is_empty() {
        chain.push_str(", ");
    }
    chain.push_str(&peer.ip().to_string());
    h.remove(&xff);
    if let Ok(v) = HeaderValue::from_str(&chain) {
        h.insert(xff, v);
    }
    if !(trusted && h.contains_key(&proto)) {
        h.insert(proto, HeaderValue::from_static("http"));
    }
    if !(trusted && h.contains_key(&fhost)) {
        match h.get(header::HOST).cloned() {
            Some(host) => {
                h.insert(fhost, host);
            }
            None => {
                h.remove(fhost);
            }
        }
    }
    if let Ok(v) = HeaderValue::from_str(&a.client.to_string()) {
        h.insert(real, v);
    }
    // The gate's word on the client, never the client's.
    let own: Vec<HeaderName> = h
        .keys()
        .filter(|k| k.as_str().starts_with("x-bot-") || k.as_str() == "x-signature-agent")
        .cloned()
        .collect();
    for k in own {
        h.remove(k);
    }
    for n in &g.snapshot().label_names {
        h.remove(n);
    }
    answer::headers(h, a);
    answer::blank_labels(g, h);
    h.remove(header::RETRY_AFTER);
    if !a.enforced {
        h.insert(
            HeaderName::from_static("x-bot-decision"),
            HeaderValue::from_static("allow"),
        );
        h.insert(
            HeaderName::from_static("x-bot-report-only"),
            HeaderValue::from_static(a.action.as_str()),
        );
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn hop_by_hop_headers_go_and_the_upgrade_is_kept_apart() {
        let mut h = HeaderMap::new();
        h.insert(
            header::CONNECTION,
            HeaderValue::from_static("keep-alive, Upgrade, X-Secret"),
        );
        h.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
        h.insert("x-secret", HeaderValue::from_static("1"));
        h.insert("keep-alive", HeaderValue::from_static("timeout=5"));
        h.insert(header::TE, HeaderValue::from_static("trailers"));
        h.insert(header::ACCEPT, HeaderValue::from_static("*/*"));
        let up = strip_hop_by_hop(&mut h);
        assert_eq!(up, Some(HeaderValue::from_static("websocket")));
        assert_eq!(h.len(), 1, "{h:?}");
        assert!(h.contains_key(header::ACCEPT));
        // An Upgrade the Connection header does not name is no upgrade.
        let mut h = HeaderMap::new();
        h.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
        assert_eq!(strip_hop_by_hop(&mut h), None);
        assert!(h.is_empty());
    }

    #[test]
    fn upstream_urls_are_checked_and_targets_put_under_the_prefix() {
        let up = |u: &str| Upstream::new(UpstreamConfig::new(url::Url::parse(u).unwrap()));
        for bad in [
            "ftp://app/",
            "http://app/?q=1",
            "http://user@app/",
            "file:///tmp",
        ] {
            assert!(up(bad).is_err(), "{bad}");
        }
        let u = up("http://127.0.0.1:8000").unwrap();
        assert_eq!(
            u.uri("/a?b=1").unwrap().to_string(),
            "http://127.0.0.1:8000/a?b=1"
        );
        let u = up("https://app.example/shop/").unwrap();
        assert_eq!(
            u.uri("/a").unwrap().to_string(),
            "https://app.example/shop/a"
        );
        assert_eq!(u.uri("*").unwrap().to_string(), "https://app.example/shop/");
        assert!(is_gate_path("/robots.txt") && is_gate_path("/.botscope/pass"));
        assert!(!is_gate_path("/robots.txt.bak") && !is_gate_path("/.botscopex"));
    }
}
