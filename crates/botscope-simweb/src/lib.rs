//! A simulated web on loopback, for the harvester's tests and benches.
//!
//! One DNS responder (UDP) answers for N synthetic hosts, each mapped to
//! one of a set of loopback addresses (127.77.x.y), and HTTP servers on
//! each address answer by `Host` with the host's [`Behaviour`]: real
//! robots.txt files, every status the fetch policy reads, redirect
//! chains and loops, slow drips, silence, resets, huge and endless bodies,
//! gzip, HTML, invalid UTF-8, header floods, and https with a test CA.
//! Ports are below 32768, away from the ephemeral range that TIME_WAIT
//! fills in large runs. Everything stops when the [`Sim`] is dropped.

mod dns;
mod http;

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub use dns::DnsMode;

/// What a host does when asked for `/robots.txt`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Behaviour {
    /// 200 with the n-th file of the corpus (ETag, answers
    /// `If-None-Match` with 304).
    Robots(usize),
    /// This status with a short HTML body.
    Status(u16),
    /// This status (429, 503) with `Retry-After: secs`.
    RetryAfter(u16, u64),
    /// 301 to `http://HOST/robots.txt` on another host.
    RedirectTo(String),
    /// This many 302 hops on the same host, then a robots.txt.
    RedirectChain(u8),
    /// 302 back and forth forever.
    RedirectLoop,
    /// 200, then a byte every half second.
    SlowDrip,
    /// Reads the request, never answers.
    NoAnswer,
    /// Reads the request, resets the connection.
    Reset,
    /// 200 with a 10 MB body.
    Huge,
    /// 200, gzip-encoded robots.txt.
    Gzip,
    /// 200 with an HTML page as robots.txt.
    Html,
    /// 200 with bytes that are not UTF-8.
    InvalidUtf8,
    /// 200 with ten thousand headers.
    HeaderFlood,
    /// 200, chunked, without end.
    Endless,
    /// Reads the request and waits until [`Sim::release`], then answers as
    /// `Robots(n)`: a run that cannot finish until the test says so.
    Held(usize),
    /// A site with pages: `/robots.txt` is this text; `/status/N` answers
    /// status N (429 and 503 with `Retry-After: 1`); `/redirect/PATH`
    /// answers 302 to `/PATH`; `/usage/PREF/…` a page whose
    /// `Content-Usage` header is PREF (one field line per `+`-separated
    /// part); any other path is a small HTML page.
    Pages(String),
}

/// One request a server answered.
#[derive(Debug, Clone)]
pub struct Hit {
    /// The `Host` header's name (lower case, without port).
    pub host: String,
    /// The request target.
    pub path: String,
    /// The User-Agent.
    pub user_agent: String,
    /// The Web Bot Auth fields, as sent (`signature`, `signature-input`,
    /// `signature-agent`; none for an unsigned request).
    pub signature: Vec<(String, String)>,
    /// When the request head had been read.
    pub start: Instant,
    /// When the answer had been written.
    pub end: Instant,
}

/// One synthetic host.
#[derive(Debug, Clone)]
pub struct Site {
    /// Its name (`site12.test`).
    pub name: String,
    /// What it does.
    pub behaviour: Behaviour,
    /// Serves https (with the test CA) as well as http.
    pub tls: bool,
}

/// How to build the web.
#[derive(Debug, Clone)]
pub struct Config {
    /// The hosts.
    pub sites: Vec<Site>,
    /// How many loopback addresses to spread the hosts over.
    pub addresses: usize,
    /// robots.txt bodies for [`Behaviour::Robots`].
    pub corpus: Vec<Vec<u8>>,
}

/// Counters of what the servers saw.
#[derive(Debug, Default)]
pub struct Seen {
    /// Requests answered (any behaviour).
    pub requests: AtomicU64,
    /// Connections accepted.
    pub connections: AtomicU64,
    /// Requests for a path other than robots.txt or a redirect hop.
    pub other_paths: AtomicU64,
    per_ip: Mutex<HashMap<IpAddr, IpUse>>,
    user_agents: Mutex<HashMap<String, u64>>,
    hits: Mutex<Vec<Hit>>,
}

#[derive(Debug, Default, Clone, Copy)]
struct IpUse {
    active: u32,
    max_active: u32,
    last_end: Option<Instant>,
    min_gap: Option<Duration>,
}

impl Seen {
    /// The most connections open at once to one address.
    pub fn max_concurrent_per_ip(&self) -> u32 {
        let m = self.per_ip.lock().unwrap_or_else(|e| e.into_inner());
        m.values().map(|u| u.max_active).max().unwrap_or(0)
    }

    /// The shortest time between one connection to an address closing and
    /// the next one opening.
    pub fn min_gap_per_ip(&self) -> Option<Duration> {
        let m = self.per_ip.lock().unwrap_or_else(|e| e.into_inner());
        m.values().filter_map(|u| u.min_gap).min()
    }

    /// User-Agents seen, with counts.
    pub fn user_agents(&self) -> HashMap<String, u64> {
        self.user_agents
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Every request answered, in the order the answers ended.
    pub fn hits(&self) -> Vec<Hit> {
        self.hits.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub(crate) fn hit(&self, h: Hit) {
        self.hits.lock().unwrap_or_else(|e| e.into_inner()).push(h);
    }

    fn open(&self, ip: IpAddr) {
        self.connections.fetch_add(1, Ordering::Relaxed);
        let mut m = self.per_ip.lock().unwrap_or_else(|e| e.into_inner());
        let u = m.entry(ip).or_default();
        if u.active == 0
            && let Some(end) = u.last_end
        {
            let gap = end.elapsed();
            u.min_gap = Some(u.min_gap.map_or(gap, |g| g.min(gap)));
        }
        u.active += 1;
        u.max_active = u.max_active.max(u.active);
    }

    fn close(&self, ip: IpAddr) {
        let mut m = self.per_ip.lock().unwrap_or_else(|e| e.into_inner());
        let u = m.entry(ip).or_default();
        u.active = u.active.saturating_sub(1);
        u.last_end = Some(Instant::now());
    }

    fn agent(&self, ua: &str) {
        let mut m = self.user_agents.lock().unwrap_or_else(|e| e.into_inner());
        *m.entry(ua.to_owned()).or_default() += 1;
    }
}

pub(crate) struct Shared {
    pub sites: HashMap<String, (Behaviour, IpAddr)>,
    pub corpus: Vec<Vec<u8>>,
    pub seen: Arc<Seen>,
    pub stop: AtomicBool,
    /// Microseconds every answer waits before it is written.
    pub latency_us: AtomicU64,
    /// Becomes true when the held hosts may answer.
    pub released: tokio::sync::watch::Receiver<bool>,
}

/// The running web.
pub struct Sim {
    /// The DNS responder.
    pub dns: SocketAddr,
    /// The http port on every address.
    pub http_port: u16,
    /// The https port on the addresses of TLS hosts.
    pub https_port: u16,
    /// The test CA's certificate (PEM) to trust.
    pub ca_pem: String,
    /// What the servers saw.
    pub seen: Arc<Seen>,
    /// The address of each host.
    pub addresses: HashMap<String, IpAddr>,
    shared: Arc<Shared>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
    release: tokio::sync::watch::Sender<bool>,
}

impl Sim {
    /// The flags that point a botscope command at this web: its DNS
    /// responder, loopback allowed, its ports (`--ca-file` aside, since
    /// the CA is a file the caller writes).
    pub fn fetch_flags(&self) -> Vec<String> {
        vec![
            "--dns".into(),
            self.dns.to_string(),
            "--allow-private".into(),
            "--http-port".into(),
            self.http_port.to_string(),
            "--https-port".into(),
            self.https_port.to_string(),
        ]
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        for t in &self.tasks {
            t.abort();
        }
    }
}

/// The i-th simulated address: 127.77.x.y (never 127.0.0.1, so that a
/// harvest that connects to 127.0.0.1 shows).
pub fn address(i: usize) -> IpAddr {
    let i = i + 1;
    IpAddr::V4(Ipv4Addr::new(127, 77, (i >> 8) as u8, (i & 0xff) as u8))
}

/// Ports to try for a server: below 32768, spread by the process id so
/// that parallel test processes rarely collide.
fn candidate_ports(salt: u16) -> Vec<u16> {
    let base = 20000
        + ((std::process::id() as u16)
            .wrapping_mul(7)
            .wrapping_add(salt)
            % 12000);
    (0..400u16)
        .map(|k| 20000 + (base - 20000 + k * 29) % 12000)
        .collect()
}

impl Sim {
    /// Makes every answer from now on wait `d` after its request was read,
    /// as a far server's round trip and think time do: a harvest then
    /// waits on the network, not on the cores.
    pub fn set_latency(&self, d: Duration) {
        let us = u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
        self.shared.latency_us.store(us, Ordering::Relaxed);
    }

    /// Lets the [`Behaviour::Held`] hosts answer, now and from then on.
    pub fn release(&self) {
        let _ = self.release.send(true);
    }

    /// Starts the DNS responder and the servers. Must run inside a Tokio
    /// runtime.
    pub async fn start(cfg: Config) -> std::io::Result<Sim> {
        let n = cfg.addresses.max(2);
        // TLS hosts live on the first half of the addresses (which also
        // listen for https), the others on the second half (on all of them
        // when no host has TLS): https to a plain host is refused, as on a
        // site without https.
        let tls_addrs = if cfg.sites.iter().any(|s| s.tls) {
            n / 2
        } else {
            0
        };
        let mut sites = HashMap::new();
        let mut addresses = HashMap::new();
        let (mut ti, mut pi) = (0usize, 0usize);
        for s in &cfg.sites {
            let ip = if s.tls {
                ti += 1;
                address((ti - 1) % tls_addrs.max(1))
            } else {
                pi += 1;
                address(tls_addrs + (pi - 1) % (n - tls_addrs))
            };
            sites.insert(s.name.to_ascii_lowercase(), (s.behaviour.clone(), ip));
            addresses.insert(s.name.to_ascii_lowercase(), ip);
        }
        let seen = Arc::new(Seen::default());
        let (release, released) = tokio::sync::watch::channel(false);
        let shared = Arc::new(Shared {
            sites,
            corpus: cfg.corpus,
            seen: seen.clone(),
            stop: AtomicBool::new(false),
            latency_us: AtomicU64::new(0),
            released,
        });
        let mut tasks = Vec::new();
        let dns_sock = {
            let mut last = None;
            let mut sock = None;
            for p in candidate_ports(1) {
                match tokio::net::UdpSocket::bind(SocketAddr::new(address(0), p)).await {
                    Ok(s) => {
                        sock = Some(s);
                        break;
                    }
                    Err(e) => last = Some(e),
                }
            }
            sock.ok_or_else(|| last.unwrap_or_else(|| std::io::Error::other("no DNS port")))?
        };
        let dns = dns_sock.local_addr()?;
        tasks.push(tokio::spawn(dns::serve(
            dns_sock,
            shared.clone(),
            DnsMode::Honest,
        )));
        // One port for all addresses: find one free on the first address,
        // then bind it everywhere.
        let (ca_pem, tls) = http::test_tls(&cfg.sites)?;
        let mut http_port = 0;
        let mut https_port = 0;
        'ports: for (hp, sp) in candidate_ports(2)
            .into_iter()
            .zip(candidate_ports(3).into_iter().rev())
        {
            if hp == sp || hp == dns.port() {
                continue;
            }
            let mut listeners = Vec::new();
            for i in 0..n {
                let ip = address(i);
                let Ok(l) = tokio::net::TcpListener::bind(SocketAddr::new(ip, hp)).await else {
                    continue 'ports;
                };
                listeners.push((l, None));
                if i < tls_addrs {
                    let Ok(l) = tokio::net::TcpListener::bind(SocketAddr::new(ip, sp)).await else {
                        continue 'ports;
                    };
                    listeners.push((l, Some(tls.clone())));
                }
            }
            for (l, tls) in listeners {
                tasks.push(tokio::spawn(http::serve(l, shared.clone(), tls)));
            }
            http_port = hp;
            https_port = sp;
            break;
        }
        if http_port == 0 {
            return Err(std::io::Error::other("no free ports below 32768"));
        }
        Ok(Sim {
            dns,
            http_port,
            https_port,
            ca_pem,
            seen,
            addresses,
            shared,
            tasks,
            release,
        })
    }

    /// Another DNS responder for the same hosts, honest or not.
    pub async fn extra_dns(&mut self, mode: DnsMode) -> std::io::Result<SocketAddr> {
        let mut last = None;
        for p in candidate_ports(5 + self.tasks.len() as u16) {
            match tokio::net::UdpSocket::bind(SocketAddr::new(address(0), p)).await {
                Ok(s) => {
                    let a = s.local_addr()?;
                    self.tasks
                        .push(tokio::spawn(dns::serve(s, self.shared.clone(), mode)));
                    return Ok(a);
                }
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| std::io::Error::other("no DNS port")))
    }
}

/// The files of a directory, in name order (the corpus for
/// [`Behaviour::Robots`]); unreadable entries are left out.
pub fn read_corpus(dir: &std::path::Path) -> Vec<Vec<u8>> {
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.retain(|p| p.is_file());
    files.sort();
    files.iter().filter_map(|p| std::fs::read(p).ok()).collect()
}

/// The real robots.txt files shipped in the repository's examples/robots.
pub fn example_corpus() -> Vec<Vec<u8>> {
    read_corpus(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/robots"))
}

/// `n` hosts `site0.test` … with a realistic mix: most serve a robots.txt
/// from the corpus, the rest 404, 403, 503 with Retry-After, redirects
/// to another host, gzip, HTML; no host is slow (for benches).
pub fn bulk(n: usize, corpus_len: usize) -> Vec<Site> {
    (0..n)
        .map(|i| {
            let behaviour = match i % 20 {
                0..=11 => Behaviour::Robots(i % corpus_len.max(1)),
                12 | 13 => Behaviour::Status(404),
                14 => Behaviour::Status(403),
                15 => Behaviour::RetryAfter(503, 3600),
                16 => Behaviour::RedirectTo(format!("site{}.test", (i + 1) % n)),
                17 => Behaviour::Gzip,
                18 => Behaviour::Html,
                _ => Behaviour::Status(410),
            };
            Site {
                name: format!("site{i}.test"),
                behaviour,
                tls: false,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// Asks `host` for its robots.txt and returns the time to the whole
    /// answer and its status line.
    async fn ask(sim: &Sim, host: &str) -> (Duration, String) {
        let ip = sim.addresses[host];
        let t = Instant::now();
        let mut s = tokio::net::TcpStream::connect((ip, sim.http_port))
            .await
            .expect("connect");
        let req = format!("GET /robots.txt HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
        s.write_all(req.as_bytes()).await.expect("write");
        let mut out = Vec::new();
        s.read_to_end(&mut out).await.expect("read");
        let text = String::from_utf8_lossy(&out);
        (t.elapsed(), text.lines().next().unwrap_or("").to_owned())
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn answers_wait_the_latency_set() {
        let sim = Sim::start(Config {
            sites: bulk(2, 1),
            addresses: 2,
            corpus: vec![b"User-agent: *\nDisallow: /x\n".to_vec()],
        })
        .await
        .expect("sim");
        let (_, status) = ask(&sim, "site0.test").await;
        assert_eq!(status, "HTTP/1.1 200 OK");
        sim.set_latency(Duration::from_millis(300));
        let (slow, status) = ask(&sim, "site0.test").await;
        assert_eq!(status, "HTTP/1.1 200 OK");
        // A floor the answer cannot beat, not a ceiling a busy machine
        // could break.
        assert!(
            slow >= Duration::from_millis(300),
            "{slow:?} with 300 ms set"
        );
        sim.set_latency(Duration::ZERO);
        assert_eq!(sim.shared.latency_us.load(Ordering::Relaxed), 0);
        let (_, status) = ask(&sim, "site1.test").await;
        assert_eq!(status, "HTTP/1.1 200 OK");
    }
}
