//! Loads on loopback for the benches, and nginx serving a static file,
//! the ceiling of these load generators here.
//!
//! - [`load`]: closed loop, `clients` concurrent keep-alive connections
//!   send `count` requests as fast as they are answered: the most a
//!   server carries.
//! - [`paced`]: open loop at a bounded rate, as requests arrive in life:
//!   each request is due at its time whether or not the last one was
//!   answered, and its latency counts from when it was due (as wrk2
//!   counts), so a server that stalls cannot hide the queue it built.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::process::{Child, Command};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use http::Request;
use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

/// The HTTP client of the load.
pub type Http = Client<HttpConnector, Empty<Bytes>>;

/// A client keeping up to `clients` idle connections.
pub fn client(clients: usize) -> Http {
    let mut c = HttpConnector::new();
    c.set_nodelay(true);
    Client::builder(TokioExecutor::new())
        .pool_max_idle_per_host(clients)
        .build(c)
}

/// One request to send: a URL and its headers.
#[derive(Debug, Clone)]
pub struct Target {
    /// The URL.
    pub url: String,
    /// Extra headers.
    pub headers: Vec<(String, String)>,
}

impl Target {
    /// A plain GET of `url`.
    pub fn get(url: impl Into<String>) -> Target {
        Target {
            url: url.into(),
            headers: Vec::new(),
        }
    }
}

/// Sends `t` and returns the status and body.
pub async fn fetch(c: &Http, t: &Target) -> (u16, Bytes) {
    let mut r = Request::get(t.url.as_str());
    for (k, v) in &t.headers {
        r = r.header(k.as_str(), v.as_str());
    }
    let res = c
        .request(r.body(Empty::new()).expect("request"))
        .await
        .expect("response");
    let status = res.status().as_u16();
    let body = res.into_body().collect().await.expect("body").to_bytes();
    (status, body)
}

/// One run's figures.
#[derive(Debug, Clone)]
pub struct Figures {
    /// Requests answered.
    pub requests: usize,
    /// Answers other than 200 (and `also_ok`).
    pub errors: usize,
    /// Wall time.
    pub secs: f64,
    /// Median latency.
    pub p50: Duration,
    /// 99th percentile.
    pub p99: Duration,
    /// Slowest.
    pub max: Duration,
    /// For [`paced`]: how late the generator sent the 99th percentile
    /// request after it was due (its own share of the latency); zero for
    /// [`load`].
    pub late_p99: Duration,
}

impl Figures {
    /// The figures of a run's latencies, non-OK answers, wall time and,
    /// for [`paced`], how late each request was sent (empty for [`load`]).
    fn of(mut times: Vec<Duration>, errors: usize, secs: f64, mut late: Vec<Duration>) -> Figures {
        times.sort();
        late.sort();
        Figures {
            requests: times.len(),
            errors,
            secs,
            p50: pct(&times, 0.50),
            p99: pct(&times, 0.99),
            max: *times.last().expect("a request"),
            late_p99: if late.is_empty() {
                Duration::ZERO
            } else {
                pct(&late, 0.99)
            },
        }
    }

    /// Requests per second.
    pub fn rate(&self) -> f64 {
        self.requests as f64 / self.secs
    }

    /// A Markdown table row: label, requests, non-OK, rate, p50, p99, max.
    pub fn row(&self, label: &str) -> String {
        let ms = |d: Duration| format!("{:.2}", d.as_secs_f64() * 1000.0);
        format!(
            "| {label} | {} | {} | {:.0} | {} | {} | {} |",
            self.requests,
            self.errors,
            self.rate(),
            ms(self.p50),
            ms(self.p99),
            ms(self.max)
        )
    }
}

/// `count` requests spread over `targets` in turn, `clients` at a time,
/// after one warm-up round of each target (up to `clients`). A status in
/// `ok` is not an error.
pub async fn load(
    c: &Http,
    targets: &[Target],
    count: usize,
    clients: usize,
    ok: &[u16],
) -> Figures {
    for t in targets.iter().take(clients) {
        fetch(c, t).await;
    }
    let next = Arc::new(AtomicUsize::new(0));
    let targets = Arc::new(targets.to_vec());
    let ok = Arc::new(ok.to_vec());
    let start = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..clients {
        let (c, next, targets, ok) = (c.clone(), next.clone(), targets.clone(), ok.clone());
        tasks.push(tokio::spawn(async move {
            let mut times = Vec::new();
            let mut errors = 0;
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= count {
                    break;
                }
                let t = Instant::now();
                let (status, _) = fetch(&c, &targets[i % targets.len()]).await;
                times.push(t.elapsed());
                if status != 200 && !ok.contains(&status) {
                    errors += 1;
                }
            }
            (times, errors)
        }));
    }
    let mut times = Vec::with_capacity(count);
    let mut errors = 0;
    for t in tasks {
        let (t, e) = t.await.expect("a client");
        times.extend(t);
        errors += e;
    }
    Figures::of(times, errors, start.elapsed().as_secs_f64(), Vec::new())
}

type Sender = hyper::client::conn::http1::SendRequest<Empty<Bytes>>;

/// The address and the request (origin form, `Host`, the target's
/// headers) of a target.
fn raw_request(t: &Target) -> (SocketAddr, Request<Empty<Bytes>>) {
    let u = url::Url::parse(&t.url).expect("a target URL");
    let addr = u
        .socket_addrs(|| Some(80))
        .expect("a target address")
        .into_iter()
        .next()
        .expect("an address");
    let path = match u.query() {
        Some(q) => format!("{}?{q}", u.path()),
        None => u.path().to_owned(),
    };
    let mut r = Request::get(path).header("host", addr.to_string());
    for (k, v) in &t.headers {
        r = r.header(k.as_str(), v.as_str());
    }
    (addr, r.body(Empty::new()).expect("request"))
}

/// A keep-alive HTTP/1 connection of its own to `addr`.
async fn connect(addr: SocketAddr) -> Sender {
    let tcp = tokio::net::TcpStream::connect(addr).await.expect("connect");
    tcp.set_nodelay(true).expect("nodelay");
    let (s, conn) = hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(tcp))
        .await
        .expect("handshake");
    tokio::spawn(conn);
    s
}

/// Sends a copy of `req` on `s` and reads the whole answer; its status.
async fn send(s: &mut Sender, req: &Request<Empty<Bytes>>) -> u16 {
    let mut r = Request::new(Empty::new());
    *r.uri_mut() = req.uri().clone();
    *r.headers_mut() = req.headers().clone();
    s.ready().await.expect("connection ready");
    let res = s.send_request(r).await.expect("response");
    let status = res.status().as_u16();
    res.into_body().collect().await.expect("body");
    status
}

/// The `p`-th quantile of sorted `times`.
fn pct(times: &[Duration], p: f64) -> Duration {
    times[((times.len() as f64 * p).ceil() as usize).clamp(1, times.len()) - 1]
}

/// `count` requests over `targets` in turn at `rate` a second, open loop,
/// on `clients` keep-alive connections to each target's address, each
/// opened and warmed up (one request) before the clock starts.
/// Request i is due at `i / rate` seconds; a pacing thread hands each out
/// when due (to about 0.1 ms: the thread sleeps between batches), the
/// first free connection sends it, and its latency runs from when it was
/// due to the end of its answer. When every connection is busy, requests
/// queue and their wait counts. Run it on a runtime of its own thread
/// (current-thread) so that the generator takes one core at most.
pub async fn paced(
    targets: &[Target],
    rate: f64,
    count: usize,
    clients: usize,
    ok: &[u16],
) -> Figures {
    // Requests built once; each connection is its own (no pool between
    // the generator and the socket), opened before the clock starts.
    let requests: Arc<Vec<(SocketAddr, Request<Empty<Bytes>>)>> =
        Arc::new(targets.iter().map(raw_request).collect());
    let mut warm = Vec::with_capacity(clients);
    for _ in 0..clients {
        let mut conns: HashMap<SocketAddr, Sender> = HashMap::new();
        for (addr, req) in requests.iter() {
            if !conns.contains_key(addr) {
                let mut s = connect(*addr).await;
                send(&mut s, req).await;
                conns.insert(*addr, s);
            }
        }
        warm.push(conns);
    }
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<(usize, Instant)>();
    let start = Instant::now() + Duration::from_millis(20);
    let pacer = std::thread::spawn(move || {
        let due = |i: usize| start + Duration::from_secs_f64(i as f64 / rate);
        let mut i = 0;
        while i < count {
            let now = Instant::now();
            while i < count && due(i) <= now {
                if tx.send((i, due(i))).is_err() {
                    return;
                }
                i += 1;
            }
            if i < count {
                std::thread::sleep(due(i).saturating_duration_since(Instant::now()));
            }
        }
    });
    let rx = Arc::new(tokio::sync::Mutex::new(rx));
    let ok = Arc::new(ok.to_vec());
    let mut tasks = Vec::new();
    for mut conns in warm {
        let (rx, requests, ok) = (rx.clone(), requests.clone(), ok.clone());
        tasks.push(tokio::spawn(async move {
            let (mut times, mut late) = (Vec::new(), Vec::new());
            let mut errors = 0;
            loop {
                let job = rx.lock().await.recv().await;
                let Some((i, due)) = job else { break };
                late.push(Instant::now().saturating_duration_since(due));
                let (addr, req) = &requests[i % requests.len()];
                let status = match conns.get_mut(addr) {
                    Some(s) if !s.is_closed() => send(s, req).await,
                    _ => {
                        let mut s = connect(*addr).await;
                        let status = send(&mut s, req).await;
                        conns.insert(*addr, s);
                        status
                    }
                };
                times.push(Instant::now().saturating_duration_since(due));
                if status != 200 && !ok.contains(&status) {
                    errors += 1;
                }
            }
            (times, late, errors)
        }));
    }
    let (mut times, mut late) = (Vec::with_capacity(count), Vec::with_capacity(count));
    let mut errors = 0;
    for t in tasks {
        let (t, l, e) = t.await.expect("a client");
        times.extend(t);
        late.extend(l);
        errors += e;
    }
    let secs = start.elapsed().as_secs_f64();
    pacer.join().expect("the pacer");
    Figures::of(times, errors, secs, late)
}

/// nginx serving `body` as a static file on loopback with its documented
/// fast settings (a worker per core, sendfile, keep-alive, no access
/// log), stopped by its PID when dropped.
pub struct Nginx {
    child: Child,
    /// Where it listens.
    pub addr: SocketAddr,
    _dir: tempfile::TempDir,
}

impl Nginx {
    /// Starts it, or `None` when nginx is not installed or does not start.
    pub fn start(body: &[u8]) -> Option<Nginx> {
        let dir = tempfile::tempdir().ok()?;
        // Its workers may run as another user: let them read the page.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).ok()?;
        std::fs::write(dir.path().join("page.html"), body).ok()?;
        let port = free_tcp_port()?;
        let server = format!(
            "server {{ listen 127.0.0.1:{port}; root {}; default_type text/html; }}",
            dir.path().display()
        );
        Nginx::launch(dir, port, &server)
    }

    /// nginx with a `server` block of a guide in front of the gate at
    /// `gate`, its placeholders put right (`127.0.0.1:8091`: the gate;
    /// `listen 80;`: a free loopback port; `/var/www/html`: `www`), with
    /// `extra` added to the block's `server` (e.g. `real_ip_header`).
    /// `None` when nginx is not installed, does not start, or the block
    /// lacks a placeholder.
    pub fn front(
        block: &str,
        gate: SocketAddr,
        www: &std::path::Path,
        extra: &str,
    ) -> Option<Nginx> {
        Nginx::front_many(block, &[gate], www, extra)
    }

    /// [`Nginx::front`] with the upstream's one `server 127.0.0.1:8091;`
    /// line made one line per gate of `gates` (a fleet nginx balances
    /// over, round robin).
    pub fn front_many(
        block: &str,
        gates: &[SocketAddr],
        www: &std::path::Path,
        extra: &str,
    ) -> Option<Nginx> {
        if !block.contains("127.0.0.1:8091") || !block.contains("listen 80;") || gates.is_empty() {
            return None;
        }
        let dir = tempfile::tempdir().ok()?;
        let port = free_tcp_port()?;
        let servers: Vec<String> = gates.iter().map(|g| format!("server {g};")).collect();
        let server = block
            .replace("server 127.0.0.1:8091;", &servers.join("\n    "))
            .replace("127.0.0.1:8091", &gates[0].to_string())
            .replace(
                "listen 80;",
                &format!("listen 127.0.0.1:{port};\n    {extra}"),
            )
            .replace("/var/www/html", &www.display().to_string());
        Nginx::launch(dir, port, &server)
    }

    /// nginx with the `server` block `server` (`{port}` in it: the free
    /// loopback port it listens on), in the same fast settings.
    pub fn serving(server: &str) -> Option<Nginx> {
        let dir = tempfile::tempdir().ok()?;
        let port = free_tcp_port()?;
        Nginx::launch(dir, port, &server.replace("{port}", &port.to_string()))
    }

    /// Runs nginx in `dir` with `server` inside its fast `http` settings
    /// and waits until it listens on `port`.
    fn launch(dir: tempfile::TempDir, port: u16, server: &str) -> Option<Nginx> {
        let exe = ["nginx", "/usr/sbin/nginx"]
            .into_iter()
            .find(|e| Command::new(e).arg("-v").output().is_ok())?;
        let d = dir.path().display();
        let conf = format!(
            "worker_processes auto;\npid {d}/nginx.pid;\nerror_log stderr error;\ndaemon off;\n\
             events {{ worker_connections 1024; }}\n\
             http {{\n access_log off;\n sendfile on;\n tcp_nopush on;\n tcp_nodelay on;\n\
             keepalive_requests 100000;\n open_file_cache max=16;\n\
             client_body_temp_path {d}/tmp; proxy_temp_path {d}/tmp; fastcgi_temp_path {d}/tmp;\n\
             uwsgi_temp_path {d}/tmp; scgi_temp_path {d}/tmp;\n{server}\n}}\n"
        );
        std::fs::write(dir.path().join("nginx.conf"), conf).ok()?;
        let mut child = Command::new(exe)
            .arg("-p")
            .arg(dir.path())
            .arg("-c")
            .arg(dir.path().join("nginx.conf"))
            .spawn()
            .ok()?;
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().ok()?;
        for _ in 0..200 {
            if std::net::TcpStream::connect(addr).is_ok() {
                return Some(Nginx {
                    child,
                    addr,
                    _dir: dir,
                });
            }
            if let Ok(Some(_)) = child.try_wait() {
                return None;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = child.kill();
        let _ = child.wait();
        None
    }

    /// The static page's URL.
    pub fn url(&self) -> String {
        format!("http://{}/page.html", self.addr)
    }
}

/// A free TCP port on 127.0.0.1.
fn free_tcp_port() -> Option<u16> {
    Some(
        std::net::TcpListener::bind("127.0.0.1:0")
            .ok()?
            .local_addr()
            .ok()?
            .port(),
    )
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-QUIT", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
    }
}
