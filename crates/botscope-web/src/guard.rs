//! What every response carries and every request meets: security headers
//! (a Content-Security-Policy without `unsafe-inline`), a log line per
//! request, per-address rate limiting, and refusal of posts from other
//! sites.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::App;

/// The policy of every page: nothing but this server's stylesheet and
/// images; no script at all; forms post only here.
pub const CSP: &str = "default-src 'none'; style-src 'self'; img-src 'self' data:; \
                       form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/// Adds the security headers a response does not set itself.
pub async fn headers(req: Request, next: Next) -> Response {
    let mut res = next.run(req).await;
    let h = res.headers_mut();
    let set = |h: &mut axum::http::HeaderMap, k: HeaderName, v: &'static str| {
        if !h.contains_key(&k) {
            h.insert(k, HeaderValue::from_static(v));
        }
    };
    set(h, header::CONTENT_SECURITY_POLICY, CSP);
    set(h, header::X_CONTENT_TYPE_OPTIONS, "nosniff");
    set(h, header::REFERRER_POLICY, "no-referrer");
    set(h, header::X_FRAME_OPTIONS, "DENY");
    set(
        h,
        HeaderName::from_static("cross-origin-opener-policy"),
        "same-origin",
    );
    set(h, header::CACHE_CONTROL, "no-store");
    res
}

/// One line per request on standard error: address, method, path,
/// status, milliseconds.
pub async fn log(req: Request, next: Next) -> Response {
    let started = Instant::now();
    let peer = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip().to_string())
        .unwrap_or_else(|| "-".into());
    let method = req.method().clone();
    // Paths come from strangers: escaped for the terminal.
    let path = botscope_text::field(req.uri().path()).into_owned();
    let res = next.run(req).await;
    tracing::info!(
        target: "botscope_web::access",
        "{peer} {method} {path} {} {:.1}ms",
        res.status().as_u16(),
        started.elapsed().as_secs_f64() * 1000.0
    );
    res
}

/// The key an address is rate-limited by: an IPv4 address itself, an IPv6
/// one by its /64 (one subscriber's network, which holds as many
/// addresses as it likes).
pub fn client_key(ip: std::net::IpAddr) -> std::net::IpAddr {
    botscope_http::server::client_key(ip)
}

/// Refuses (403) a form or upload posted from another site: a browser
/// says where a request comes from in `Sec-Fetch-Site` (and `Origin`); a
/// request that is not `same-origin`, or names another origin than this
/// server's own `Host`, did not come from its pages. Clients that are not browsers send
/// neither and are let through (the API is for them).
pub async fn same_origin(req: Request, next: Next) -> Response {
    if req.method() == axum::http::Method::POST {
        let h = req.headers();
        let host = h.get(header::HOST).and_then(|v| v.to_str().ok());
        let origin = h.get(header::ORIGIN).and_then(|v| v.to_str().ok());
        let site = h.get("sec-fetch-site").and_then(|v| v.to_str().ok());
        // A browser's own word first: `Sec-Fetch-Site` (the pages send
        // `no-referrer`, so Chromium's `Origin` of a form post is `null`).
        let foreign = match (site, origin) {
            (Some(site), _) => site != "same-origin" && site != "none",
            (None, Some(o)) => {
                let authority = o.split_once("://").map_or(o, |(_, rest)| rest);
                host.is_none_or(|h| !authority.eq_ignore_ascii_case(h))
            }
            (None, None) => false,
        };
        if foreign {
            return (
                StatusCode::FORBIDDEN,
                "a form of another site posted here: refused (post from this server's own pages)\n",
            )
                .into_response();
        }
    }
    next.run(req).await
}

/// Answers 429 with `Retry-After` to an address over its rate.
pub async fn rate_limit(State(app): State<Arc<App>>, req: Request, next: Next) -> Response {
    let peer = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0);
    if let (Some(limiter), Some(peer)) = (&app.limiter, peer) {
        let ip = client_key(peer.ip());
        if let Err(not_until) = limiter.check_key(&ip) {
            let wait = not_until.wait_time_from(governor::clock::Clock::now(
                &governor::clock::DefaultClock::default(),
            ));
            let secs = wait.as_secs() + 1;
            let mut res = (
                StatusCode::TOO_MANY_REQUESTS,
                axum::Json(serde_json::json!({
                    "error": format!("too many requests from {ip}: at most {} a second; try again in {secs} s", app.limits.api_per_second)
                })),
            )
                .into_response();
            if let Ok(v) = HeaderValue::from_str(&secs.to_string()) {
                res.headers_mut().insert(header::RETRY_AFTER, v);
            }
            return res;
        }
        if limiter.len() > 100_000 {
            limiter.retain_recent();
        }
    }
    next.run(req).await
}
