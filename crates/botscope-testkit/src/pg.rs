//! A real PostgreSQL server on 127.0.0.1 for the tests that need one: a
//! cluster made by `initdb` in a temporary directory and started on a free
//! port, as the unprivileged user `nobody` when the tests run as root (the
//! server refuses to run as root), and stopped by its PID. README's test
//! command installs Debian's `postgresql` when it is missing.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The directory of the newest installed server's programs
/// (`/usr/lib/postgresql/N/bin`), if there is one.
pub fn bin_dir() -> Option<PathBuf> {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| {
            let e = e.ok()?;
            let v: u32 = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").is_file().then_some((v, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, b)| b)
}

fn id(args: &[&str]) -> Option<u32> {
    let o = Command::new("id").args(args).output().ok()?;
    String::from_utf8_lossy(&o.stdout).trim().parse().ok()
}

/// A running PostgreSQL, stopped (by its PID) when dropped.
#[derive(Debug)]
pub struct Postgres {
    child: Option<Child>,
    port: u16,
    bin: PathBuf,
    /// `(uid, gid)` to run the server as, when the tests run as root.
    user: Option<(u32, u32)>,
    dir: tempfile::TempDir,
}

impl Postgres {
    /// Makes a cluster (user `botscope`, trust authentication on loopback)
    /// and starts it. Panics with the way to install it when PostgreSQL is
    /// missing.
    pub fn start() -> Postgres {
        let bin = bin_dir().expect(
            "PostgreSQL is needed (the test command in README installs Debian's postgresql)",
        );
        let dir = crate::tempdir();
        let user = if id(&["-u"]) == Some(0) {
            let uid = id(&["-u", "nobody"]).expect("the user nobody");
            let gid = id(&["-g", "nobody"]).expect("the group of nobody");
            std::os::unix::fs::chown(dir.path(), Some(uid), Some(gid)).expect("chown");
            Some((uid, gid))
        } else {
            None
        };
        let mut pg = Postgres {
            child: None,
            port: crate::free_port(),
            bin,
            user,
            dir,
        };
        let data = pg.data();
        let out = pg
            .command("initdb")
            .arg("-D")
            .arg(&data)
            .args([
                "-U",
                "botscope",
                "-A",
                "trust",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync",
            ])
            .output()
            .expect("initdb runs");
        assert!(
            out.status.success(),
            "initdb: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        pg.run();
        pg
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// A server program, run as the server's user.
    fn command(&self, program: &str) -> Command {
        let exe = self.bin.join(program);
        match self.user {
            Some((uid, gid)) => {
                let mut c = Command::new("setpriv");
                c.arg(format!("--reuid={uid}"))
                    .arg(format!("--regid={gid}"))
                    .arg("--clear-groups")
                    .arg("--")
                    .arg(exe);
                c
            }
            None => Command::new(exe),
        }
    }

    fn run(&mut self) {
        let child = self
            .command("postgres")
            .arg("-D")
            .arg(self.data())
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "-k"])
            .arg(self.dir.path())
            .args([
                "-c",
                "fsync=off",
                "-c",
                "synchronous_commit=off",
                "-c",
                "full_page_writes=off",
                "-c",
                "max_connections=200",
                "-c",
                "log_min_messages=fatal",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("postgres starts");
        self.child = Some(child);
        let started = Instant::now();
        loop {
            let ready = Command::new(self.bin.join("pg_isready"))
                .args(["-q", "-h", "127.0.0.1", "-p", &self.port.to_string()])
                .status()
                .is_ok_and(|s| s.success());
            if ready {
                return;
            }
            if let Some(Ok(Some(status))) = self.child.as_mut().map(Child::try_wait) {
                panic!("postgres exited: {status}");
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "postgres did not start"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The server's port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// A URL for database `db`.
    pub fn url(&self, db: &str) -> String {
        format!("postgres://botscope@127.0.0.1:{}/{db}", self.port)
    }

    /// Creates database `name` and returns its URL.
    pub fn create_db(&self, name: &str) -> String {
        let out = Command::new(self.bin.join("createdb"))
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "-U"])
            .args(["botscope", name])
            .output()
            .expect("createdb runs");
        assert!(
            out.status.success(),
            "createdb: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        self.url(name)
    }

    /// The server's PID.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Stops the server (a fast shutdown: SIGINT to its PID) and waits.
    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = Command::new("kill")
                .args(["-INT", &c.id().to_string()])
                .status();
            let started = Instant::now();
            while started.elapsed() < Duration::from_secs(30) {
                if let Ok(Some(_)) = c.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Stops the server and starts it again on the same port and data.
    pub fn restart(&mut self) {
        self.stop();
        // The port is free again once nothing listens on it.
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", self.port)).is_ok()
            && started.elapsed() < Duration::from_secs(10)
        {
            std::thread::sleep(Duration::from_millis(20));
        }
        self.run();
    }

    /// The cluster's directory.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        if let Some(c) = &self.child {
            // An immediate shutdown: the cluster is thrown away.
            let _ = Command::new("kill")
                .args(["-QUIT", &c.id().to_string()])
                .status();
        }
        if let Some(mut c) = self.child.take() {
            let _ = c.wait();
        }
    }
}
