//! A real DNS server, dnsmasq, on 127.0.0.1 for the tests that need one.

use std::net::{SocketAddr, TcpListener, UdpSocket};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A port below 32768 free for both UDP and TCP on 127.0.0.1.
pub fn free_port() -> u16 {
    // Each call starts further on, so that servers started at once in one
    // process (before any has bound its port) never get the same one.
    static CALLS: std::sync::atomic::AtomicU16 = std::sync::atomic::AtomicU16::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let start = 20_000 + ((std::process::id() % 10_000) as u16 + call.wrapping_mul(97)) % 12_000;
    (start..32_000)
        .chain(20_000..start)
        .find(|&p| {
            UdpSocket::bind(("127.0.0.1", p)).is_ok() && TcpListener::bind(("127.0.0.1", p)).is_ok()
        })
        .expect("a free port below 32768")
}

/// A dnsmasq on 127.0.0.1 answering only from its arguments (no
/// upstream, no hosts file), stopped by its PID when dropped.
#[derive(Debug)]
pub struct Dnsmasq {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Dnsmasq {
    /// Starts dnsmasq with `records` (`--host-record=…`, `--ptr-record=…`,
    /// `--local=/zone/` …) and waits until it listens. Its answers carry a
    /// TTL of 300 s, as a real zone's do.
    pub fn start(records: &[&str]) -> Dnsmasq {
        Dnsmasq::start_with_ttl(300, records)
    }

    /// [`Dnsmasq::start`], its own records answered with TTL `ttl` (0:
    /// dnsmasq's default, which any zone's owner may choose too).
    pub fn start_with_ttl(ttl: u32, records: &[&str]) -> Dnsmasq {
        let port = free_port();
        let dir = crate::tempdir();
        let child = Command::new("dnsmasq")
            .args([
                "--keep-in-foreground",
                "--no-resolv",
                "--no-hosts",
                "--conf-file=/dev/null",
                "--bind-interfaces",
                "--listen-address=127.0.0.1",
                "--user=root",
            ])
            .arg(format!("--local-ttl={ttl}"))
            .arg(format!("--port={port}"))
            .arg(format!("--pid-file={}", dir.path().join("pid").display()))
            .args(records)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("dnsmasq is needed (the test command in README installs dnsmasq-base)");
        for _ in 0..100 {
            if UdpSocket::bind(("127.0.0.1", port)).is_err() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Dnsmasq {
            child,
            port,
            _dir: dir,
        }
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.port))
    }
}

impl Drop for Dnsmasq {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
