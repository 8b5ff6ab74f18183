//! The accept loop of botscope's servers (the web application, the gate):
//! what a stranger's connection may hold. At most `connections` at once,
//! and `per_client` from one client (an IPv6 client by its /64; peers the
//! caller exempts, such as a trusted front proxy, are not counted per
//! client), so that one client's idle connections cannot keep others out
//! (the next are closed at once, with a log line at most once a second);
//! a connection's request head must arrive within `header_timeout`, and
//! an idle keep-alive connection is closed after the same time; on
//! shutdown the requests in flight get `shutdown_grace`, then the loop
//! returns whatever is still running.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};

/// What connections may hold.
#[derive(Clone)]
pub struct ConnectionLimits {
    /// Connections open at once.
    pub connections: usize,
    /// Connections open at once from one client.
    pub per_client: usize,
    /// Time a request head may take, and an idle keep-alive connection
    /// may stay.
    pub header_timeout: Duration,
    /// Time the requests in flight get on shutdown.
    pub shutdown_grace: Duration,
    /// Peers not counted per client (a trusted front proxy).
    pub exempt: Arc<dyn Fn(IpAddr) -> bool + Send + Sync>,
}

impl std::fmt::Debug for ConnectionLimits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnectionLimits")
            .field("connections", &self.connections)
            .field("per_client", &self.per_client)
            .field("header_timeout", &self.header_timeout)
            .field("shutdown_grace", &self.shutdown_grace)
            .finish_non_exhaustive()
    }
}

impl Default for ConnectionLimits {
    /// 4,096 connections, 64 per client, 10 s for a head, 3 s of grace.
    fn default() -> Self {
        ConnectionLimits {
            connections: 4096,
            per_client: 64,
            header_timeout: Duration::from_secs(10),
            shutdown_grace: Duration::from_secs(3),
            exempt: Arc::new(|_| false),
        }
    }
}

/// The client a connection counts for: the address, an IPv6 one by its
/// /64 (one subscriber's block).
pub fn client_key(ip: IpAddr) -> IpAddr {
    let ip = match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    };
    match ip {
        IpAddr::V6(v6) => {
            let bits = u128::from(v6) & !((1u128 << 64) - 1);
            IpAddr::V6(std::net::Ipv6Addr::from(bits))
        }
        v4 => v4,
    }
}

/// Serves each connection of `listener` with `service` (given the peer's
/// address) until `shutdown` completes, within `limits`.
pub async fn serve<S, F, B>(
    listener: tokio::net::TcpListener,
    service: S,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()>
where
    S: Fn(SocketAddr, hyper::Request<Incoming>) -> F + Clone + Send + Sync + 'static,
    F: Future<Output = Result<hyper::Response<B>, Infallible>> + Send + 'static,
    B: hyper::body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
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
        let mine = if (limits.exempt)(peer.ip()) {
            Some(None)
        } else {
            ClientSlot::take(&per_client, client_key(peer.ip()), limits.per_client).map(Some)
        };
        let slot = slots.clone().try_acquire_owned();
        let (Some(mine), Ok(slot)) = (mine, slot) else {
            refused += 1;
            if last_refusal.is_none_or(|t| t.elapsed() >= Duration::from_secs(1)) {
                tracing::warn!(
                    "connection limit reached ({} in all, {} per client): closed {refused} new connections (the last from {})",
                    limits.connections,
                    limits.per_client,
                    peer.ip()
                );
                last_refusal = Some(Instant::now());
                refused = 0;
            }
            drop(stream);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let service = service.clone();
        let svc =
            hyper::service::service_fn(move |req: hyper::Request<Incoming>| service(peer, req));
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
