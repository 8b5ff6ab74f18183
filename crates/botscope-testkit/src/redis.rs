//! A real Redis server on 127.0.0.1 for the tests of the gate's shared
//! state: Debian's `redis-server` on a free port, nothing saved to disk,
//! stopped by its PID (and started again on the same port, for the tests
//! of a fleet outliving it). README's test command installs it.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running Redis, stopped when dropped.
#[derive(Debug)]
pub struct Redis {
    child: Option<Child>,
    port: u16,
    dir: tempfile::TempDir,
}

impl Redis {
    /// Starts one on a free loopback port. Panics with the way to install
    /// it when `redis-server` is missing.
    pub fn start() -> Redis {
        let mut r = Redis {
            child: None,
            port: crate::free_port(),
            dir: crate::tempdir(),
        };
        r.restart();
        r
    }

    /// Where it listens.
    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.port))
    }

    /// `redis://127.0.0.1:PORT/DB`.
    pub fn url(&self, db: u8) -> String {
        format!("redis://127.0.0.1:{}/{db}", self.port)
    }

    /// Stops it (SIGKILL: as a crash), waiting until it is gone.
    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Starts it (again) on its port, empty, and waits until it answers.
    pub fn restart(&mut self) {
        self.stop();
        let exe = ["/usr/bin/redis-server", "redis-server"]
            .into_iter()
            .find(|e| Command::new(e).arg("--version").output().is_ok())
            .expect("redis-server is needed (the test command in README installs Debian's redis-server)");
        let child = Command::new(exe)
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .args(["--enable-debug-command", "local"])
            .arg("--dir")
            .arg(self.dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server starts");
        self.child = Some(child);
        let t = Instant::now();
        while self.command("PING").as_deref() != Some("+PONG") {
            assert!(
                t.elapsed() < Duration::from_secs(20),
                "redis-server answers"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// One inline command, and the first line of its answer (`None` when
    /// it cannot be sent).
    pub fn command(&self, cmd: &str) -> Option<String> {
        let mut s = TcpStream::connect(self.addr()).ok()?;
        s.set_read_timeout(Some(Duration::from_secs(30))).ok()?;
        write!(s, "{cmd}\r\n").ok()?;
        let mut buf = [0u8; 4096];
        let n = s.read(&mut buf).ok()?;
        let line = String::from_utf8_lossy(&buf[..n]);
        Some(line.lines().next().unwrap_or("").to_owned())
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.stop();
    }
}
