//! The accept loop: what a stranger's connection may hold, through
//! `botscope_http::server` (at most `Limits::connections` connections at
//! once, `Limits::connections_per_client` from one address, an IPv6 client
//! by its /64; a request head within `Limits::header_timeout`, an idle
//! keep-alive connection closed after the same time; on shutdown the
//! requests in flight get `Limits::shutdown_grace`); and each request is
//! answered within its deadline ([`deadline`]).

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;

use axum::Router;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use hyper::body::Incoming;
use tower::ServiceExt;

use crate::{App, Limits};

/// Serves `router` on `listener` until `shutdown` completes.
pub(crate) async fn serve(
    listener: tokio::net::TcpListener,
    router: Router,
    limits: Limits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let connections = botscope_http::server::ConnectionLimits {
        connections: limits.connections,
        per_client: limits.connections_per_client,
        header_timeout: limits.header_timeout,
        // Every client of the web application is a stranger: its head
        // within `--header-timeout`, as before the gate's proxies had a
        // pool of their own.
        first_request: limits.header_timeout,
        shutdown_grace: limits.shutdown_grace,
        ..Default::default()
    };
    let service = move |peer, mut req: Request<Incoming>| {
        req.extensions_mut().insert(ConnectInfo(peer));
        let router = router.clone();
        async move {
            let res: Result<Response, Infallible> =
                router.oneshot(req.map(axum::body::Body::new)).await;
            res
        }
    };
    botscope_http::server::serve(listener, service, connections, shutdown).await
}

/// Answers 503 to a request not answered within its deadline
/// (`Limits::request_deadline`; `Limits::upload_deadline` for a log
/// upload), and drops its work: what runs on the work threads is bounded
/// by counted work of its own.
pub async fn deadline(State(app): State<Arc<App>>, req: Request, next: Next) -> Response {
    let upload = req.method() == Method::POST && req.uri().path() == "/logs";
    let limit = if upload {
        app.limits.upload_deadline
    } else {
        app.limits.request_deadline
    };
    match tokio::time::timeout(limit, next.run(req)).await {
        Ok(res) => res,
        Err(_) => {
            let mut res = (
                StatusCode::SERVICE_UNAVAILABLE,
                format!(
                    "the request was not answered within {} s and was stopped; try again later\n",
                    limit.as_secs()
                ),
            )
                .into_response();
            res.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("10"));
            res
        }
    }
}
