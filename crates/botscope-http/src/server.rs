//! The accept loop of botscope's servers (the web application, the gate):
//! what a stranger's connection may hold. At most `connections` at once,
//! and `per_client` from one client (an IPv6 client by its /64), so that
//! one client's idle connections cannot keep others out. Peers the caller
//! exempts (a trusted front proxy) have a pool of their own, as large,
//! and are not counted per client: strangers filling theirs never keep
//! the front server out. When the strangers' pool is full, the idle
//! connection that waited longest is closed to make room (one busy with
//! a request is never cut); only when every one is busy is the new one
//! closed at once (with a log line at most once a second). A stranger's
//! request head must arrive within `first_request` (and so must every
//! head on its connection); an exempt peer's within `header_timeout`, the
//! time an idle keep-alive connection may stay. A request head over
//! [`MAX_HEAD_BYTES`] is answered 431 and its connection closed, whatever
//! the connection read before. A request counts as busy
//! until its response's body is sent (a long download is never cut to
//! make room). Connections may be upgraded (a WebSocket passed on by the
//! gate's proxy); an upgraded one leaves the pool, and its owner bounds
//! it, keeping the request's [`ConnectionHold`] so that it still counts
//! against its client's cap. On shutdown the requests in flight get `shutdown_grace`, then the
//! loop returns whatever is still running.

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
    /// Time a stranger's (not exempt) request head may take, the first
    /// and the next on the same connection.
    pub first_request: Duration,
    /// Peers with a pool of their own, not counted per client (a trusted
    /// front proxy).
    pub exempt: Arc<dyn Fn(IpAddr) -> bool + Send + Sync>,
}

impl std::fmt::Debug for ConnectionLimits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnectionLimits")
            .field("connections", &self.connections)
            .field("per_client", &self.per_client)
            .field("header_timeout", &self.header_timeout)
            .field("shutdown_grace", &self.shutdown_grace)
            .field("first_request", &self.first_request)
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
            first_request: Duration::from_secs(10),
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
    B: hyper::body::Body + Default + Send + Unpin + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let slots = Arc::new(tokio::sync::Semaphore::new(limits.connections.max(1)));
    let exempt_slots = Arc::new(tokio::sync::Semaphore::new(limits.connections.max(1)));
    // Every connection's task holds a sender: when the last is dropped,
    // all have ended. `stopping` tells them to finish what they serve.
    let (running, mut all_done) = tokio::sync::mpsc::channel::<()>(1);
    let (stopping, stop_rx) = tokio::sync::watch::channel(false);
    let builder = |timeout: Duration| {
        let mut http = hyper::server::conn::http1::Builder::new();
        http.timer(TokioTimer::new())
            .header_read_timeout(timeout)
            // Room for any head within MAX_HEAD_BYTES, whatever its
            // whitespace: the limit is the one counted below, never the
            // buffer's, which depends on what the connection read before.
            .max_buf_size(2 * MAX_HEAD_BYTES);
        http
    };
    let http_exempt = builder(limits.header_timeout);
    let http_stranger = builder(limits.first_request.min(limits.header_timeout));
    let per_client: Arc<std::sync::Mutex<HashMap<IpAddr, usize>>> = Arc::default();
    // Strangers' connections, oldest first, for making room.
    let mut open: std::collections::VecDeque<std::sync::Weak<Conn>> =
        std::collections::VecDeque::new();
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
        let exempt = (limits.exempt)(peer.ip());
        let mine = if exempt {
            Some(None)
        } else {
            ClientSlot::take(&per_client, client_key(peer.ip()), limits.per_client)
                .map(|s| Some(ConnectionHold(Arc::new(s))))
        };
        let slot = match (&mine, exempt) {
            (None, _) => None,
            (Some(_), true) => exempt_slots.clone().try_acquire_owned().ok(),
            (Some(_), false) => slots
                .clone()
                .try_acquire_owned()
                .ok()
                .or_else(|| make_room(&mut open)),
        };
        let (Some(mine), Some(slot)) = (mine, slot) else {
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
        let conn = Arc::new(Conn {
            slot: std::sync::Mutex::new(Some(slot)),
            busy: std::sync::atomic::AtomicUsize::new(0),
            stop: tokio::sync::Notify::new(),
        });
        if !exempt {
            // Closed ones are dropped from the front as room is made, and
            // all at once now and then: the queue stays within twice the
            // pool, at a constant cost per connection.
            if open.len() >= 2 * limits.connections.max(1) {
                open.retain(|c| c.strong_count() > 0);
            }
            open.push_back(Arc::downgrade(&conn));
        }
        let service = service.clone();
        let watch = conn.clone();
        let hold = mine.clone();
        let svc = hyper::service::service_fn(move |mut req: hyper::Request<Incoming>| {
            let busy = Busy::new(watch.clone());
            if let Some(h) = &hold {
                req.extensions_mut().insert(h.clone());
            }
            let too_large = head_bytes(&req) > MAX_HEAD_BYTES;
            let answer = (!too_large).then(|| service(peer, req));
            async move {
                let Some(answer) = answer else {
                    return Ok(head_too_large().map(|body| Tracked { body, _busy: busy }));
                };
                // Busy until the body is sent, not only the head.
                let r = answer.await;
                Ok::<_, Infallible>(match r {
                    Ok(res) => res.map(|body| Tracked { body, _busy: busy }),
                    Err(never) => match never {},
                })
            }
        });
        let http = if exempt { &http_exempt } else { &http_stranger };
        let served = http
            .serve_connection(TokioIo::new(stream), svc)
            .with_upgrades();
        let (running, mut stop_rx) = (running.clone(), stop_rx.clone());
        tokio::spawn(async move {
            let _client = mine;
            let _running = running;
            tokio::pin!(served);
            tokio::select! {
                _ = served.as_mut() => {}
                () = conn.stop.notified() => {}
                () = async { let _ = stop_rx.wait_for(|s| *s).await; } => {
                    served.as_mut().graceful_shutdown();
                    let _ = served.await;
                }
            }
            drop(conn);
        });
    }
    drop(listener);
    let _ = stopping.send(true);
    drop(running);
    tokio::select! {
        _ = all_done.recv() => {}
        () = tokio::time::sleep(limits.shutdown_grace) => {
            tracing::warn!(
                "requests still running {} s after the signal: stopping without them",
                limits.shutdown_grace.as_secs()
            );
        }
    }
    Ok(())
}

/// A stranger's connection: its slot of the pool (taken away when it is
/// closed to make room), whether a request is in flight, and how to close
/// it.
struct Conn {
    slot: std::sync::Mutex<Option<tokio::sync::OwnedSemaphorePermit>>,
    busy: std::sync::atomic::AtomicUsize,
    stop: tokio::sync::Notify,
}

/// A request in flight on a connection, for as long as it is answered.
struct Busy(Arc<Conn>);

impl Busy {
    fn new(c: Arc<Conn>) -> Busy {
        c.busy.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        Busy(c)
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0
            .busy
            .fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
    }
}

/// A response body, and the request it answers counted busy until it
/// ends.
struct Tracked<B> {
    body: B,
    _busy: Busy,
}

impl<B: hyper::body::Body + Unpin> hyper::body::Body for Tracked<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Self::Data>, Self::Error>>> {
        std::pin::Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.body.size_hint()
    }
}

/// Closes the idle stranger's connection that waited longest and hands
/// its slot over: at most a few connections are looked at (busy ones go to
/// the back), so the work per new connection is bounded.
fn make_room(
    open: &mut std::collections::VecDeque<std::sync::Weak<Conn>>,
) -> Option<tokio::sync::OwnedSemaphorePermit> {
    for _ in 0..16 {
        let c = open.pop_front()?;
        let Some(c) = c.upgrade() else { continue };
        if c.busy.load(std::sync::atomic::Ordering::Acquire) > 0 {
            open.push_back(Arc::downgrade(&c));
            continue;
        }
        let slot = c.slot.lock().unwrap_or_else(|p| p.into_inner()).take();
        c.stop.notify_one();
        if slot.is_some() {
            return slot;
        }
    }
    None
}

/// The largest request head taken, counted as [`head_bytes`] counts it:
/// past it, 431 and the connection closed, the same on a fresh connection
/// as on one that served requests before.
pub const MAX_HEAD_BYTES: usize = 64 * 1024;

/// A request's head as sent, but for the optional whitespace around
/// header values: the request line and every header line with their
/// line ends.
pub fn head_bytes<B>(req: &hyper::Request<B>) -> usize {
    let u = req.uri();
    let target = u.scheme_str().map_or(0, |s| s.len() + 3)
        + u.authority().map_or(0, |a| a.as_str().len())
        + u.path_and_query().map_or(0, |p| p.as_str().len());
    let line = req.method().as_str().len() + 1 + target.max(1) + " HTTP/1.1\r\n".len();
    req.headers()
        .iter()
        .map(|(k, v)| k.as_str().len() + 2 + v.len() + 2)
        .sum::<usize>()
        + line
        + 2
}

/// 431 with an empty body, the connection closed after it.
fn head_too_large<B: Default>() -> hyper::Response<B> {
    let mut r = hyper::Response::new(B::default());
    *r.status_mut() = hyper::StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE;
    r.headers_mut().insert(
        hyper::header::CONNECTION,
        hyper::header::HeaderValue::from_static("close"),
    );
    r
}

/// A stranger's connection counted against its client's cap
/// (`per_client`), in each of its requests' extensions: a handler that
/// takes the connection over (an upgrade to a WebSocket, which leaves the
/// pool) keeps a clone for as long as it holds it, so that the client's
/// tunnels count against the same cap as its connections. Given back
/// when the last clone is dropped.
#[derive(Clone)]
pub struct ConnectionHold(Arc<ClientSlot>);

impl std::fmt::Debug for ConnectionHold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("ConnectionHold")
            .field(&self.0.client)
            .finish()
    }
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
