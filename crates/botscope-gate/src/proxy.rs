//! `--upstream URL`: the gate on its own in front of an application, as a
//! reverse proxy. Each request is decided as `/forward-auth` decides the
//! request a front server asks about; what the policy lets through is
//! passed to the application, the rest answered here (403, 429 with
//! `Retry-After`, the challenge page). `/robots.txt` and `/.botscope/…`
//! are the gate's own.
//!
//! Nothing reaches the application but what was judged:
//! - a target that common stacks read differently (`;`, `\`, `%5C`, `%00`,
//!   double encoding, invalid UTF-8, a segment ending in `.` or a space,
//!   `::$`, dot segments above `/`: [`botscope_policy::ambiguity`]) is
//!   answered 400, in every mode; the application gets the target as sent
//!   (`--upstream-path as-sent`) or the path judged (`normalized`, and
//!   always under a path prefix);
//! - `CONNECT` is answered 405, `OPTIONS *` here, any other `*` 400; two
//!   `Host` lines, none in HTTP/1.1, or one that differs from an
//!   absolute-form target's authority, 400 (RFC 9112, 3.2); a transfer
//!   coding other than `chunked` 501 (a `Content-Length` beside
//!   `chunked` is dropped, RFC 9112 6.3); a malformed chunked body 400;
//! - only a WebSocket upgrade is passed on (`Upgrade: websocket`, every
//!   other token dropped, as nginx does), and the connection becomes a
//!   tunnel only when the application's 101 names `websocket`; any other
//!   101 is answered 502 and the connection closed. A tunnel counts
//!   against its client's connection cap;
//! - a method override header (`X-HTTP-Method-Override`, `X-HTTP-Method`,
//!   `X-Method-Override`) is judged as the method;
//! - headers an application reads as the client, the scheme or the path
//!   (`CF-Connecting-IP`, `True-Client-IP`, `X-Original-URL` …) are removed
//!   unless a `--trust-proxy` peer sent them; `Forwarded` (RFC 7239) and
//!   `X-Forwarded-For` are written by the gate (a trusted proxy's list
//!   kept and extended, a stranger's replaced), with `X-Forwarded-Proto`,
//!   `X-Forwarded-Host` and `X-Real-IP`; the client's `X-Bot-*` and label
//!   headers are replaced by the gate's.
//!
//! Built on hyper's client (hyper-util's pool, rustls for an https
//! upstream through the system's trust store): bodies are streamed both
//! ways, never held whole; hop-by-hop headers (RFC 9110, 7.6.1) are
//! removed both ways (never `Host` or `Content-Length`, whatever
//! `Connection` names); upstream connections are kept alive. An
//! application that cannot be reached gets the client a 502 with a short
//! page, one too slow to answer a 504, a request body over
//! `--max-request-body` a 413; a response with both `Transfer-Encoding`
//! and `Content-Length` is passed whole, without the length.

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
    /// The target the application receives (`--upstream-path`).
    pub path: UpstreamPath,
}

/// The target the application receives (`--upstream-path`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UpstreamPath {
    /// As the client sent it (`as-sent`, the default): once a target is
    /// known to mean one path to every common stack, the application
    /// reads it as it always has.
    #[default]
    AsSent,
    /// The path judged, in normal form, and the query (`normalized`):
    /// what the application serves is exactly what the policy judged.
    Normalized,
}

impl UpstreamPath {
    /// `as-sent` or `normalized`.
    pub fn parse(s: &str) -> Option<UpstreamPath> {
        match s {
            "as-sent" => Some(UpstreamPath::AsSent),
            "normalized" => Some(UpstreamPath::Normalized),
            _ => None,
        }
    }
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
            path: UpstreamPath::AsSent,
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
    /// Upgrades refused: as many tunnels open as allowed, or the
    /// client's connection cap reached.
    pub tunnels_refused: AtomicU64,
    /// Requests refused before they were judged (400, 405, 501): a target
    /// stacks read differently, framing, `Host`, a malformed body.
    pub bad_requests: AtomicU64,
    /// A 101 from the application that was not a WebSocket's (502).
    pub bad_upgrades: AtomicU64,
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

    /// The application's URI for a request's target: as sent, or as
    /// judged (in normal form) as `--upstream-path` says; under a path
    /// prefix always as judged, so that no spelling leaves the prefix.
    fn uri(&self, sent: &str) -> Option<Uri> {
        let target = if self.prefix.is_empty() && self.cfg.path == UpstreamPath::AsSent {
            std::borrow::Cow::Borrowed(sent)
        } else {
            botscope_policy::normalize_target(sent)
        };
        let target = if target.starts_with('/') {
            &target
        } else {
            "/"
        };
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

/// Headers a `Connection` header can never make hop-by-hop: the
/// request's authority and framing, which the application needs to read
/// the request at all.
const NEVER_HOP_BY_HOP: [HeaderName; 2] = [header::HOST, header::CONTENT_LENGTH];

/// The hop-by-hop headers (RFC 9110, 7.6.1), and the ones a `Connection`
/// header names (but `Host` and `Content-Length`), removed.
fn strip_hop_by_hop(h: &mut HeaderMap) {
    let named: Vec<HeaderName> = h
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|t| HeaderName::from_bytes(t.trim().as_bytes()).ok())
        .filter(|n| !NEVER_HOP_BY_HOP.contains(n))
        .collect();
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
}

/// Whether a header's comma-separated tokens include `want` (without
/// case; a protocol's `/version` ignored).
fn has_token(h: &HeaderMap, name: HeaderName, want: &str) -> bool {
    h.get_all(name)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|t| t.trim().split('/').next().unwrap_or(""))
        .any(|t| t.eq_ignore_ascii_case(want))
}

/// Whether the request asks for a WebSocket: `Connection` names `upgrade`
/// and `Upgrade` names `websocket`. Every other upgrade (`h2c`, TLS …) is
/// never passed on.
fn wants_websocket(h: &HeaderMap) -> bool {
    has_token(h, header::CONNECTION, "upgrade") && has_token(h, header::UPGRADE, "websocket")
}

/// The headers that name another method for the application (Symfony,
/// Laravel and Express read the first; OData the second).
const METHOD_OVERRIDES: [&str; 3] = [
    "x-http-method-override",
    "x-http-method",
    "x-method-override",
];

/// Headers an application reads as the client's address, the scheme, the
/// port or the path: only a `--trust-proxy` peer's are passed on.
const PROXY_ONLY: [&str; 15] = [
    "cf-connecting-ip",
    "true-client-ip",
    "x-client-ip",
    "fastly-client-ip",
    "x-cluster-client-ip",
    "x-proxyuser-ip",
    "x-original-forwarded-for",
    "x-forwarded-port",
    "x-forwarded-ssl",
    "x-forwarded-scheme",
    "x-forwarded-server",
    "x-forwarded-prefix",
    "x-host",
    "x-original-url",
    "x-rewrite-url",
];

/// The method the application will carry out: the request's, or the one
/// an override header names (upper-case, as the frameworks read it).
/// `Err` for overrides that disagree or are not a method token.
fn judged_method(
    req: &Request<hyper::body::Incoming>,
) -> Result<std::borrow::Cow<'_, str>, &'static str> {
    let mut chosen: Option<String> = None;
    for name in METHOD_OVERRIDES {
        for v in req.headers().get_all(name) {
            let v = v.to_str().map(str::trim).unwrap_or("");
            if v.is_empty()
                || v.len() > 32
                || !v
                    .bytes()
                    .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
            {
                return Err("a method override header that names no method");
            }
            let v = v.to_ascii_uppercase();
            match &chosen {
                Some(c) if *c != v => return Err("method override headers that disagree"),
                _ => chosen = Some(v),
            }
        }
    }
    Ok(chosen.map_or(
        std::borrow::Cow::Borrowed(req.method().as_str()),
        std::borrow::Cow::Owned,
    ))
}

/// A request the gate answers before judging it: its framing, its `Host`,
/// its method or its target is one the application may read otherwise
/// (RFC 9112, 3.2 and 6.1), or it is the server's own (`OPTIONS *`).
fn framing(req: &Request<hyper::body::Incoming>) -> Option<Response<Body>> {
    if req.method() == axum::http::Method::CONNECT {
        let mut r = short_page(
            StatusCode::METHOD_NOT_ALLOWED,
            "Method not allowed.\n\nThis site is no proxy: CONNECT is not served.\n",
        );
        r.headers_mut().insert(
            header::ALLOW,
            HeaderValue::from_static("GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS"),
        );
        return Some(close(r));
    }
    if req.uri().path() == "*" || req.uri().path_and_query().is_none() {
        if req.method() == axum::http::Method::OPTIONS && req.uri().path() == "*" {
            let mut r = StatusCode::OK.into_response();
            r.headers_mut()
                .insert(header::CONTENT_LENGTH, HeaderValue::from_static("0"));
            return Some(r);
        }
        return Some(bad_request("a target that is not a path"));
    }
    let h = req.headers();
    let mut hosts = h.get_all(header::HOST).iter();
    let host = hosts.next();
    if hosts.next().is_some() {
        return Some(bad_request("two Host header lines"));
    }
    if host.is_none() && req.version() == axum::http::Version::HTTP_11 {
        return Some(bad_request("no Host header"));
    }
    if let (Some(authority), Some(host)) = (req.uri().authority(), host)
        && !host
            .as_bytes()
            .eq_ignore_ascii_case(authority.as_str().as_bytes())
    {
        return Some(bad_request(
            "a Host that differs from the target's authority",
        ));
    }
    // (hyper has read a chunked body's framing by its chunks alone and
    // dropped a `Content-Length` beside it, as RFC 9112 6.3 asks.)
    let other_coding = h
        .get_all(header::TRANSFER_ENCODING)
        .iter()
        .flat_map(|v| v.as_bytes().split(|&c| c == b','))
        .any(|t| !t.trim_ascii().eq_ignore_ascii_case(b"chunked"));
    if other_coding {
        let r = short_page(
            StatusCode::NOT_IMPLEMENTED,
            "Not implemented.\n\nThis site reads request bodies sent plain or chunked only.\n",
        );
        return Some(close(r));
    }
    None
}

/// A response after which the connection is closed.
fn close(mut r: Response<Body>) -> Response<Body> {
    r.headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    r
}

/// 400 with the reason, the connection closed.
fn bad_request(why: &str) -> Response<Body> {
    close(short_page(
        StatusCode::BAD_REQUEST,
        format!("Bad request.\n\nThis site does not serve {why}.\n"),
    ))
}

/// The client's request body, its errors (a malformed chunk, a reset)
/// marked as the client's: answered 400, never counted against the
/// application.
struct FromClient(hyper::body::Incoming);

/// An error of the client's request body.
#[derive(Debug, thiserror::Error)]
#[error("the client's request body: {0}")]
struct ClientBodyError(hyper::Error);

impl hyper::body::Body for FromClient {
    type Data = axum::body::Bytes;
    type Error = ClientBodyError;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Self::Data>, Self::Error>>> {
        std::pin::Pin::new(&mut self.0)
            .poll_frame(cx)
            .map_err(ClientBodyError)
    }

    fn is_end_stream(&self) -> bool {
        self.0.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.0.size_hint()
    }
}

/// A short page of the gate's own, never cached.
fn short_page(status: StatusCode, text: impl Into<String>) -> Response<Body> {
    let mut r = (status, text.into()).into_response();
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

/// Whether the error chain holds an error of type `E`.
fn caused_by<E: std::error::Error + 'static>(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cur = Some(e);
    while let Some(e) = cur {
        if e.is::<E>() {
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
    let refuse = |r: Response<Body>| {
        up.stats.bad_requests.fetch_add(1, Ordering::Relaxed);
        r
    };
    if let Some(r) = framing(&req) {
        return if r.status().is_success() {
            r
        } else {
            refuse(r)
        };
    }
    let target = req
        .uri()
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_owned();
    if let Some(why) = botscope_policy::ambiguity(&target) {
        tracing::debug!(
            "400 for {}: {}",
            botscope_text::quoted(&target),
            why.reason()
        );
        return refuse(bad_request(why.reason()));
    }
    let method = match judged_method(&req) {
        Ok(m) => m,
        Err(why) => return refuse(bad_request(why)),
    };
    let a = answer::decide_at(g, peer.ip(), req.headers(), &method, &target).await;
    let method = method.into_owned();
    // A charge paid passes like an allow; the application's answer then
    // carries `crawler-charged` (when it is not an error: no crawler pays
    // for one).
    let paid = a
        .pay
        .as_ref()
        .and_then(botscope_terms::pay::Outcome::charged);
    // So does a licence token the licence server says permits the page.
    let licensed = matches!(a.licence, Some(crate::licence::Licensed::Permitted(_)));
    let refused = !(matches!(
        a.action,
        botscope_policy::Action::Allow | botscope_policy::Action::Label
    ) || paid.is_some()
        || licensed);
    // A trap path never reaches the application.
    if (refused && a.enforced) || a.trap.is_some() {
        return answer::respond(g, &a, req.headers(), Front::Forward, &target);
    }
    // A WebSocket, and nothing else, is ever upgraded: the client's side,
    // and its hold on its connection cap.
    let websocket = wants_websocket(req.headers());
    let client_side = websocket.then(|| hyper::upgrade::on(&mut req));
    let hold = req
        .extensions()
        .get::<botscope_http::server::ConnectionHold>()
        .cloned();
    let (mut parts, body) = req.into_parts();
    let Some(uri) = up.uri(&target) else {
        return refuse(bad_request("this target"));
    };
    strip_hop_by_hop(&mut parts.headers);
    let trusted = g.config.trust_proxy.iter().any(|r| r.contains(peer.ip()));
    forwarding_headers(g, &mut parts.headers, peer, &a, trusted);
    let user_agent = parts
        .headers
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .map(|ua| answer::capped(ua).to_owned())
        .unwrap_or_default();
    let links = crate::inject::plan(g, &a, &method, &target, &mut parts.headers, &user_agent);
    if websocket {
        parts
            .headers
            .insert(header::CONNECTION, HeaderValue::from_static("upgrade"));
        parts
            .headers
            .insert(header::UPGRADE, HeaderValue::from_static("websocket"));
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
    let out = Request::from_parts(
        parts,
        Body::new(http_body_util::Limited::new(FromClient(body), limit)),
    );
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
        Ok(Err(e)) if caused_by::<http_body_util::LengthLimitError>(&e) => {
            up.stats.too_large.fetch_add(1, Ordering::Relaxed);
            return short_page(
                StatusCode::PAYLOAD_TOO_LARGE,
                "Request body too large.\n\nThis site takes smaller bodies than this request's.\n",
            );
        }
        Ok(Err(e)) if caused_by::<ClientBodyError>(&e) => {
            tracing::debug!("400: {}", chain(&e));
            return refuse(bad_request("a malformed request body"));
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
    if res.status() == StatusCode::SWITCHING_PROTOCOLS {
        // A tunnel only for the WebSocket asked for and granted: any
        // other 101 would carry requests no one judges.
        let granted = websocket && has_token(res.headers(), header::UPGRADE, "websocket");
        let Some(client_side) = client_side.filter(|_| granted) else {
            up.stats.bad_upgrades.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(
                "the application at {} switched protocols without a WebSocket asked for and named: 502",
                up.cfg.url
            );
            return close(short_page(
                StatusCode::BAD_GATEWAY,
                "Bad gateway.\n\nThe site's application answered with an upgrade this site does not pass on.\n",
            ));
        };
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
            // The tunnel holds its client's connection slot as long as it
            // is open.
            let (_permit, _hold) = (permit, hold);
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
    // Read as chunked (RFC 9112, 6.3): a length beside it is not the
    // body's, and would cut it.
    if parts.headers.contains_key(header::TRANSFER_ENCODING) {
        parts.headers.remove(header::CONTENT_LENGTH);
    }
    strip_hop_by_hop(&mut parts.headers);
    // The site's stated usage preferences, on a page that states none.
    if let Some(cu) = g.config.terms.content_usage.as_deref()
        && !parts.headers.contains_key("content-usage")
        && let Ok(v) = HeaderValue::from_str(cu)
    {
        parts
            .headers
            .insert(HeaderName::from_static("content-usage"), v);
    }
    // A licensed page links its licence (RSL's Crawler Authorization
    // Protocol).
    if licensed
        && let Some(v) = a
            .licence_link
            .as_deref()
            .and_then(|v| HeaderValue::from_str(v).ok())
    {
        parts.headers.append(header::LINK, v);
    }
    if let Some(price) = paid.filter(|_| a.enforced) {
        if parts.status.as_u16() < 400 {
            if let Ok(v) = HeaderValue::from_str(&price.to_string()) {
                parts.headers.insert(
                    HeaderName::from_static(botscope_terms::pay::CRAWLER_CHARGED),
                    v,
                );
            }
        } else {
            // Counted as charged when decided; taken back.
            g.charges.uncharged(price);
            if let Some(log) = &g.decision_log {
                log.uncharged(&a, price, parts.status.as_u16(), &method, &target);
            }
        }
    }
    let body = crate::inject::wrap(&mut parts, body, links, &g.traps.catches.counts);
    Response::from_parts(parts, body)
}

/// The headers the application reads about the client: where it is and
/// what the gate decided (a client's own `X-Bot-*` and label headers
/// replaced; the client-address, scheme and path headers only a trusted
/// proxy may send removed from a stranger's request).
fn forwarding_headers(
    g: &Gate,
    h: &mut HeaderMap,
    peer: SocketAddr,
    a: &answer::Answer,
    trusted: bool,
) {
    let xff = HeaderName::from_static("x-forwarded-for");
    let fwd = HeaderName::from_static("forwarded");
    let proto = HeaderName::from_static("x-forwarded-proto");
    let fhost = HeaderName::from_static("x-forwarded-host");
    let real = HeaderName::from_static("x-real-ip");
    // A trusted proxy's chains are extended by its own address; a
    // stranger's are not believed.
    let kept = |h: &HeaderMap, name: &HeaderName| -> Vec<String> {
        if !trusted {
            return Vec::new();
        }
        h.get_all(name)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .map(str::to_owned)
            .collect()
    };
    let extend = |h: &mut HeaderMap, name: &HeaderName, before: Vec<String>, hop: String| {
        let mut chain = before.join(", ");
        if !chain.is_empty() {
            chain.push_str(", ");
        }
        chain.push_str(&hop);
        h.remove(name);
        if let Ok(v) = HeaderValue::from_str(&chain) {
            h.insert(name.clone(), v);
        }
    };
    let before = kept(h, &xff);
    extend(h, &xff, before, peer.ip().to_string());
    let host = h
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let before = kept(h, &fwd);
    extend(
        h,
        &fwd,
        before,
        botscope_policy::forwarded::element(peer.ip(), "http", host.as_deref()),
    );
    if !trusted {
        for n in PROXY_ONLY {
            h.remove(n);
        }
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
    fn hop_by_hop_headers_go_but_never_host_or_the_length() {
        let mut h = HeaderMap::new();
        h.insert(
            header::CONNECTION,
            HeaderValue::from_static("keep-alive, Upgrade, X-Secret, Host, content-length"),
        );
        h.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
        h.insert("x-secret", HeaderValue::from_static("1"));
        h.insert("keep-alive", HeaderValue::from_static("timeout=5"));
        h.insert(header::TE, HeaderValue::from_static("trailers"));
        h.insert(header::ACCEPT, HeaderValue::from_static("*/*"));
        h.insert(header::HOST, HeaderValue::from_static("shop.example"));
        h.insert(header::CONTENT_LENGTH, HeaderValue::from_static("3"));
        assert!(wants_websocket(&h));
        strip_hop_by_hop(&mut h);
        assert_eq!(h.len(), 3, "{h:?}");
        for kept in [header::ACCEPT, header::HOST, header::CONTENT_LENGTH] {
            assert!(h.contains_key(&kept), "{kept}");
        }
    }

    #[test]
    fn only_a_websocket_is_an_upgrade() {
        let with = |c: &'static str, u: &'static str| {
            let mut h = HeaderMap::new();
            h.insert(header::CONNECTION, HeaderValue::from_static(c));
            h.insert(header::UPGRADE, HeaderValue::from_static(u));
            wants_websocket(&h)
        };
        assert!(with("Upgrade", "websocket"));
        assert!(with("keep-alive, upgrade", "h2c, WebSocket/13"));
        assert!(!with("Upgrade, HTTP2-Settings", "h2c"));
        assert!(!with("Upgrade", "TLS/1.2"));
        // An Upgrade the Connection header does not name is no upgrade.
        assert!(!with("keep-alive", "websocket"));
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
            u.uri("/a/./%62?b=1").unwrap().to_string(),
            "http://127.0.0.1:8000/a/./%62?b=1",
            "as sent"
        );
        let mut cfg = UpstreamConfig::new(url::Url::parse("http://127.0.0.1:8000").unwrap());
        cfg.path = UpstreamPath::Normalized;
        let n = Upstream::new(cfg).unwrap();
        assert_eq!(
            n.uri("/a/./%62?b=1").unwrap().to_string(),
            "http://127.0.0.1:8000/a/b?b=1",
            "as judged"
        );
        // Under a prefix, always as judged.
        let u = up("https://app.example/shop/").unwrap();
        assert_eq!(
            u.uri("/x/../a").unwrap().to_string(),
            "https://app.example/shop/a"
        );
        assert!(is_gate_path("/robots.txt") && is_gate_path("/.botscope/pass"));
        assert!(!is_gate_path("/robots.txt.bak") && !is_gate_path("/.botscopex"));
    }
}
