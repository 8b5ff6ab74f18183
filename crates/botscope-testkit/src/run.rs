//! Running a command as a user runs it, hermetically: a home of its own
//! (no user registry or DNS cache from the machine), the workspace root as
//! its working directory, stdin fed from a thread.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A command to run.
#[derive(Debug)]
pub struct Run {
    cmd: Command,
    stdin: Vec<u8>,
}

impl Run {
    /// `exe` with a private home under `home`, run from the workspace root.
    pub fn new(exe: impl AsRef<Path>, home: &Path) -> Run {
        let mut cmd = Command::new(exe.as_ref());
        cmd.env("XDG_CONFIG_HOME", home.join("config"))
            .env("XDG_CACHE_HOME", home.join("cache"))
            .env("XDG_DATA_HOME", home.join("data"))
            .env("HOME", home)
            .env_remove("NO_COLOR")
            .current_dir(crate::root())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        Run {
            cmd,
            stdin: Vec::new(),
        }
    }

    /// Adds arguments.
    pub fn args<I, S>(mut self, args: I) -> Run
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.cmd.args(args.into_iter().map(Into::into));
        self
    }

    /// Sets an environment variable.
    pub fn env(mut self, k: &str, v: impl Into<OsString>) -> Run {
        self.cmd.env(k, v.into());
        self
    }

    /// Feeds `data` on standard input.
    pub fn stdin(mut self, data: impl Into<Vec<u8>>) -> Run {
        self.stdin = data.into();
        self
    }

    /// Runs to the end. Stdin is fed from a thread: the command may write
    /// before it has read everything, and a full pipe must not deadlock.
    pub fn output(mut self) -> Output {
        let data = std::mem::take(&mut self.stdin);
        self.output_with(move |mut input| {
            let _ = input.write_all(&data);
        })
    }

    /// Runs to the end, `feed` writing standard input from a thread (for
    /// inputs too large to hold).
    pub fn output_with(
        mut self,
        feed: impl FnOnce(std::process::ChildStdin) + Send + 'static,
    ) -> Output {
        let mut child = self.cmd.spawn().expect("spawn the command");
        let input = child.stdin.take().expect("stdin");
        let writer = std::thread::spawn(move || feed(input));
        let out = child.wait_with_output().expect("wait for the command");
        writer.join().expect("stdin writer");
        out
    }

    /// The underlying command (to spawn and kill it).
    pub fn command(self) -> Command {
        self.cmd
    }
}

/// Writes `body` to `dir/name` and returns the path.
pub fn write_file(dir: &Path, name: &str, body: &[u8]) -> PathBuf {
    let p = dir.join(name);
    if let Some(parent) = p.parent() {
        std::fs::create_dir_all(parent).expect("create the directory");
    }
    std::fs::write(&p, body).expect("write the file");
    p
}
