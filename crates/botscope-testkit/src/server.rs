//! A server under test on a Tokio runtime of its own thread, as the
//! command runs it, its address sent back once it listens.

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::time::Duration;

/// Where the server says it listens.
pub struct Ready(std::sync::mpsc::Sender<SocketAddr>);

impl Ready {
    /// The server listens on `addr`.
    pub fn send(self, addr: SocketAddr) {
        let _ = self.0.send(addr);
    }
}

/// Completes when the test stops the server (never for a server kept for
/// the whole test binary).
pub type Stop = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// A running server.
pub struct Spawned {
    /// Where it listens.
    pub addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Spawned {
    /// Stops the server and waits for its thread.
    pub fn stop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Runs `serve` on a runtime of its own (`workers` threads, or one per
/// core) and returns once it sent its address through [`Ready`]; it runs
/// until [`Stop`] completes (on [`Spawned::stop`] or drop).
///
/// ```ignore
/// let s = spawn_server(Some(2), |ready, stop| async move {
///     let server = Server::bind(config, "127.0.0.1:0".parse().unwrap()).await.unwrap();
///     ready.send(server.local_addr());
///     server.run(stop).await.unwrap();
/// });
/// ```
pub fn spawn_server<F, Fut>(workers: Option<usize>, serve: F) -> Spawned
where
    F: FnOnce(Ready, Stop) -> Fut + Send + 'static,
    Fut: Future<Output = ()>,
{
    let (tx, rx) = std::sync::mpsc::channel();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let thread = std::thread::spawn(move || {
        let mut b = tokio::runtime::Builder::new_multi_thread();
        if let Some(n) = workers {
            b.worker_threads(n);
        }
        let rt = b.enable_all().build().expect("a Tokio runtime");
        let stop: Stop = Box::pin(async move {
            let _ = stopped.await;
        });
        rt.block_on(serve(Ready(tx), stop));
    });
    let addr = rx
        .recv_timeout(Duration::from_secs(300))
        .expect("the server did not start within 300 s");
    Spawned {
        addr,
        stop: Some(stop),
        thread: Some(thread),
    }
}

/// A TCP connection to `to` from the loopback address `ip` (a client of
/// its own: 127.0.0.2, 127.0.0.3 …).
pub fn connect_from(ip: [u8; 4], to: SocketAddr) -> std::net::TcpStream {
    let s = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
        .block_on(async {
            let sock = tokio::net::TcpSocket::new_v4().expect("a socket");
            sock.bind(SocketAddr::from((ip, 0))).expect("bind");
            sock.connect(to)
                .await
                .expect("connect")
                .into_std()
                .expect("a std stream")
        });
    s.set_nonblocking(false).expect("blocking");
    s
}

/// A "directory server" on `host` that accepts every connection and
/// answers a byte a second: the head of a TLS record that never ends
/// (what a slow or hostile key directory does to a fetcher).
pub fn trickle(host: &str) -> SocketAddr {
    use std::io::Write;
    let listener = std::net::TcpListener::bind((host, 0)).expect("bind");
    let addr = listener.local_addr().expect("addr");
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { return };
            std::thread::spawn(move || {
                for b in [0x16u8, 0x03, 0x03, 0x40, 0x00].into_iter().chain([0; 25]) {
                    if conn.write_all(&[b]).is_err() {
                        return;
                    }
                    std::thread::sleep(Duration::from_secs(1));
                }
            });
        }
    });
    addr
}

/// An application on loopback that answers every request with `page`
/// (HTML, 200, `Cache-Control: public, max-age=60`) and closes the
/// connection: the site behind a standalone gate.
pub fn page_server(page: &str) -> SocketAddr {
    use std::io::{BufRead, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    let page = page.to_owned();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { return };
            let page = page.clone();
            std::thread::spawn(move || {
                let Ok(read) = conn.try_clone() else { return };
                let mut r = std::io::BufReader::new(read);
                let mut line = String::new();
                while r.read_line(&mut line).unwrap_or(0) > 0 && line != "\r\n" {
                    line.clear();
                }
                let _ = write!(
                    conn,
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nCache-Control: public, max-age=60\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{page}",
                    page.len()
                );
            });
        }
    });
    addr
}
