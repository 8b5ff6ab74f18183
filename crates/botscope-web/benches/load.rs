//! The web application under load: a bounded number of requests per page
//! from 32 concurrent keep-alive clients on loopback, with requests/s and
//! latency percentiles per page; beside it, nginx serving the search page
//! as a static file under the same load (the ceiling of this load
//! generator and loopback on this machine).
//!
//! ```sh
//! # the research index's 2.2M sites (the figures of BENCHMARKS.md; the
//! # index DB.index is built at start when missing):
//! BOTSCOPE_BOTSEER_DB=/work/bench/botseer.db cargo bench -p botscope-web --bench load
//! # a quick run on the demo with 20,000 synthetic sites:
//! cargo bench -p botscope-web --bench load
//! ```
//!
//! `BOTSCOPE_LOAD_SCALE=F` multiplies every request count (default 1).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use botscope_web::{Config, Limits, Server};
use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

const CLIENTS: usize = 32;

/// The research index's example queries (BotSeer's and ours).
const QUERIES: &[&str] = &[
    "botname:msnbot",
    "favor:googlebot site:gov",
    "contain:universal site:gov disallow:/",
    "favor:googlebot disfavor:msnbot disfavor:slurp",
    "images private",
    "delay:>10",
];

fn enc(s: &str) -> String {
    botscope_text::url_component(s).to_string()
}

type Http = Client<HttpConnector, Empty<Bytes>>;

fn client() -> Http {
    let mut c = HttpConnector::new();
    c.set_nodelay(true);
    Client::builder(TokioExecutor::new())
        .pool_max_idle_per_host(CLIENTS)
        .build(c)
}

async fn fetch(c: &Http, url: &str) -> (u16, Bytes) {
    let res = c.get(url.parse().unwrap()).await.expect("request");
    let status = res.status().as_u16();
    let body = res.into_body().collect().await.expect("body").to_bytes();
    (status, body)
}

/// One page's figures.
struct Figures {
    requests: usize,
    errors: usize,
    secs: f64,
    p50: Duration,
    p99: Duration,
    max: Duration,
}

/// `count` requests spread over `urls` in turn, `CLIENTS` at a time,
/// after one warm-up round of each URL.
async fn load(c: &Http, urls: &[String], count: usize) -> Figures {
    for u in urls.iter().take(CLIENTS) {
        fetch(c, u).await;
    }
    let next = Arc::new(AtomicUsize::new(0));
    let urls = Arc::new(urls.to_vec());
    let start = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..CLIENTS {
        let (c, next, urls) = (c.clone(), next.clone(), urls.clone());
        tasks.push(tokio::spawn(async move {
            let mut times = Vec::new();
            let mut errors = 0;
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= count {
                    break;
                }
                let t = Instant::now();
                let (status, _) = fetch(&c, &urls[i % urls.len()]).await;
                times.push(t.elapsed());
                if status != 200 {
                    errors += 1;
                }
            }
            (times, errors)
        }));
    }
    let mut times = Vec::with_capacity(count);
    let mut errors = 0;
    for t in tasks {
        let (t, e) = t.await.unwrap();
        times.extend(t);
        errors += e;
    }
    let secs = start.elapsed().as_secs_f64();
    times.sort();
    let pct = |p: f64| times[((times.len() as f64 * p).ceil() as usize).clamp(1, times.len()) - 1];
    Figures {
        requests: times.len(),
        errors,
        secs,
        p50: pct(0.50),
        p99: pct(0.99),
        max: *times.last().unwrap(),
    }
}

fn ms(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1000.0)
}

fn row(page: &str, f: &Figures) {
    println!(
        "| {page} | {} | {} | {:.0} | {} | {} | {} |",
        f.requests,
        f.errors,
        f.requests as f64 / f.secs,
        ms(f.p50),
        ms(f.p99),
        ms(f.max)
    );
}

/// nginx serving `body` as a static file on loopback, stopped by its PID.
struct Nginx {
    child: Child,
    addr: SocketAddr,
    _dir: tempfile::TempDir,
}

impl Nginx {
    fn start(body: &[u8]) -> Option<Nginx> {
        let exe = ["nginx", "/usr/sbin/nginx"]
            .into_iter()
            .find(|e| Command::new(e).arg("-v").output().is_ok())?;
        let dir = tempfile::tempdir().ok()?;
        // Its workers may run as another user: let them read the page.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).ok()?;
        std::fs::write(dir.path().join("page.html"), body).ok()?;
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .ok()?
            .local_addr()
            .ok()?
            .port();
        let d = dir.path().display();
        // Its documented fast settings for static files: a worker per
        // core, sendfile, keep-alive, no access log.
        let conf = format!(
            "worker_processes auto;\npid {d}/nginx.pid;\nerror_log stderr error;\ndaemon off;\n\
             events {{ worker_connections 1024; }}\n\
             http {{\n access_log off;\n sendfile on;\n tcp_nopush on;\n tcp_nodelay on;\n\
             keepalive_requests 100000;\n open_file_cache max=16;\n\
             client_body_temp_path {d}/tmp; proxy_temp_path {d}/tmp; fastcgi_temp_path {d}/tmp;\n\
             uwsgi_temp_path {d}/tmp; scgi_temp_path {d}/tmp;\n\
             server {{ listen 127.0.0.1:{port}; root {d}; default_type text/html; }}\n}}\n"
        );
        std::fs::write(dir.path().join("nginx.conf"), conf).ok()?;
        let child = Command::new(exe)
            .arg("-p")
            .arg(dir.path())
            .arg("-c")
            .arg(dir.path().join("nginx.conf"))
            .spawn()
            .ok()?;
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().ok()?;
        for _ in 0..100 {
            if std::net::TcpStream::connect(addr).is_ok() {
                return Some(Nginx {
                    child,
                    addr,
                    _dir: dir,
                });
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        None
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-QUIT", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
    }
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else is taken.
    let scale: f64 = std::env::var("BOTSCOPE_LOAD_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0);
    let n = |k: usize| ((k as f64 * scale) as usize).max(CLIENTS);
    let db = std::env::var_os("BOTSCOPE_BOTSEER_DB").map(PathBuf::from);
    let config = Config {
        db: db.clone(),
        demo_sites: 20_000,
        threads: 2,
        limits: Limits {
            api_per_second: 0,
            ..Limits::default()
        },
        ..Config::demo()
    };
    // The server on a runtime of its own with a worker per core, as
    // `botscope serve` runs it.
    let (tx, rx) = std::sync::mpsc::channel();
    let started = Instant::now();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let server = Server::bind(config, "127.0.0.1:0".parse().unwrap())
                .await
                .expect("server");
            tx.send(server.local_addr()).unwrap();
            server.run(std::future::pending()).await.unwrap();
        });
    });
    let addr: SocketAddr = rx.recv().expect("the server started");
    eprintln!(
        "server ready in {:.1} s on {addr} ({})",
        started.elapsed().as_secs_f64(),
        db.as_ref()
            .map_or("demo, 20,000 synthetic sites".to_owned(), |p| p
                .display()
                .to_string())
    );
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        let c = client();
        let base = format!("http://{addr}");
        // Steady state: the `/robots` chart the server starts computing
        // at start, and the favourability table, are ready.
        let t = Instant::now();
        fetch(&c, &format!("{base}/api/trends")).await;
        eprintln!(
            "trends chart ready after {:.1} s more",
            t.elapsed().as_secs_f64()
        );
        let t = Instant::now();
        fetch(&c, &format!("{base}/api/favor")).await;
        eprintln!("favourability in {:.2} s", t.elapsed().as_secs_f64());
        // Hosts to show: the sites a query finds.
        let (_, body) = fetch(
            &c,
            &format!("{base}/api/search?q={}&limit=200", enc("botname:googlebot")),
        )
        .await;
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
        let hosts: Vec<String> = v["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["site"].as_str().unwrap().to_owned())
            .collect();
        assert!(!hosts.is_empty(), "the store has sites naming Googlebot");
        let search: Vec<String> = QUERIES
            .iter()
            .map(|q| format!("{base}/search?q={}", enc(q)))
            .collect();
        let api: Vec<String> = QUERIES
            .iter()
            .map(|q| format!("{base}/api/search?q={}", enc(q)))
            .collect();
        let ranked: Vec<String> = ["favor:googlebot site:gov", "botname:msnbot"]
            .iter()
            .flat_map(|q| ["bias", "site"].map(|r| format!("{base}/search?q={}&rank={r}", enc(q))))
            .collect();
        let site: Vec<String> = hosts
            .iter()
            .map(|h| format!("{base}/site/{}", enc(h)))
            .collect();
        let bias: Vec<String> = hosts
            .iter()
            .map(|h| format!("{base}/site/{}/bias", enc(h)))
            .collect();
        let one = |p: &str| vec![format!("{base}{p}")];
        let pages: Vec<(&str, Vec<String>, usize)> = vec![
            ("`/search` (6 queries)", search.clone(), n(3000)),
            ("`/search` ranked by bias / site", ranked, n(1000)),
            ("`/api/search` (6 queries)", api, n(3000)),
            ("`/site/HOST` (200 hosts)", site, n(2000)),
            ("`/site/HOST/bias`", bias, n(2000)),
            ("`/crawler/Googlebot`", one("/crawler/Googlebot"), n(200)),
            ("`/robots`", one("/robots"), n(100)),
            ("`/check` (form)", one("/check"), n(5000)),
            ("`/healthz`", one("/healthz"), n(10000)),
            ("`/static/style.css`", one("/static/style.css"), n(10000)),
        ];
        println!("\n{CLIENTS} concurrent clients, keep-alive, loopback\n");
        println!("| page | requests | non-200 | requests/s | p50 ms | p99 ms | max ms |");
        println!("|---|---:|---:|---:|---:|---:|---:|");
        let mut search_rate = 0.0;
        for (label, urls, count) in &pages {
            let f = load(&c, urls, *count).await;
            if label.starts_with("`/search` (") {
                search_rate = f.requests as f64 / f.secs;
            }
            row(label, &f);
        }
        // The peer: the same search page as a static file from nginx.
        let (_, page) = fetch(&c, &search[1]).await;
        match Nginx::start(&page) {
            Some(ng) => {
                let url = vec![format!("http://{}/page.html", ng.addr)];
                let f = load(&c, &url, n(10000)).await;
                row(
                    &format!(
                        "nginx: the search page as a static file ({} bytes)",
                        page.len()
                    ),
                    &f,
                );
                println!(
                    "\n`/search` runs its query for each request at {:.1}% of nginx's static rate.",
                    100.0 * search_rate / (f.requests as f64 / f.secs)
                );
            }
            None => println!("\n(nginx not found: no static-file baseline)"),
        }
    });
}
