//! The accept loop: what a stranger's connection may hold. At most
//! `Limits::connections` connections at once, and
//! `Limits::connections_per_client` from one address (an IPv6 client by
//! its /64), so that one client's idle connections cannot keep others out
//! (the next are closed at once, with a log line at most once a second); a connection's request
//! head must arrive within `Limits::header_timeout`, and an idle
//! keep-alive connection is closed after the same time; each request is
//! answered within its deadline ([`deadline`]); on shutdown the requests
//! in flight get `Limits::shutdown_grace`, then the server returns
//! whatever is still running.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tower::ServiceExt;

use crate::{App, Limits};

/// Serves `router` on `listener` until `shutdown` completes.
pub(crate) async fn serve(
    listener: tokio::net::TcpListener,
    router: Router,
    limits: Limits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let slots = Arc::new(tokio::sync::Semaphore::new(limits.connections.max(1)));
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .max_buf_size(64 * 1024);
    let per_client: Arc<std::sync::Mutex<HashMap<IpAddr, usize>>> = Arc::default();
    let mut last_refusal: Option<Instant> = None;
    let mut refused = 0u64;
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            () = &mut shutdown => break,
            r = listener.accept() => match r {
                Ok(c) => c,
                Err(e) => {
                    // Out of descriptors, or a connection reset before it
                    // was taken: wait a little rather than spin.
                    tracing::warn!("accepting a connection: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let client = crate::guard::client_key(peer.ip());
        let mine = ClientSlot::take(&per_client, client, limits.connections_per_client);
        let slot = slots.clone().try_acquire_owned();
        let (Some(mine), Ok(slot)) = (mine, slot) else {
            refused += 1;
            if last_refusal.is_none_or(|t| t.elapsed() >= Duration::from_secs(1)) {
                tracing::warn!(
                    "connection limit reached ({} in all, {} per client): closed {refused} new connections (the last from {})",
                    limits.connections,
                    limits.connections_per_client,
                    peer.ip()
                );
                last_refusal = Some(Instant::now());
                refused = 0;
            }
            drop(stream);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let router = router.clone();
        let svc = hyper::service::service_fn(move |mut req: Request<Incoming>| {
            req.extensions_mut().insert(ConnectInfo(peer));
            let router = router.clone();
            async move {
                let res: Result<Response, Infallible> =
                    router.oneshot(req.map(axum::body::Body::new)).await;
                res
            }
        });
        let conn = graceful.watch(http.serve_connection(TokioIo::new(stream), svc));
        tokio::spawn(async move {
            let _slots = (slot, mine);
            let _ = conn.await;
        });
    }
    drop(listener);
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(limits.shutdown_grace) => {
            tracing::warn!(
                "requests still running {} s after the signal: stopping without them",
                limits.shutdown_grace.as_secs()
            );
        }
    }
    Ok(())
}

/// One of a client's connections, given back when dropped.
struct ClientSlot {
    map: Arc<std::sync::Mutex<HashMap<IpAddr, usize>>>,
    client: IpAddr,
}

impl ClientSlot {
    fn take(
        map: &Arc<std::sync::Mutex<HashMap<IpAddr, usize>>>,
        client: IpAddr,
        cap: usize,
    ) -> Option<ClientSlot> {
        let mut m = map.lock().unwrap_or_else(|p| p.into_inner());
        let n = m.entry(client).or_insert(0);
        if *n >= cap.max(1) {
            return None;
        }
        *n += 1;
        Some(ClientSlot {
            map: map.clone(),
            client,
        })
    }
}

impl Drop for ClientSlot {
    fn drop(&mut self) {
        let mut m = self.map.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = m.get_mut(&self.client) {
            *n -= 1;
            if *n == 0 {
                m.remove(&self.client);
            }
        }
    }
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
