//! `robots check-batch` beside robotxt 0.7 in a plain single-threaded loop
//! over the same queries: each a whole process, its CPU time (user + system)
//! measured by the kernel, best and median of eleven alternating rounds
//! (a run moves by a tenth or more on a busy machine), and the ratio.
//!
//! The peer's loop reads each robots file once, parses it once per agent
//! (robotxt binds the agent when parsing), extracts the URL's path and
//! queries, writing `allowed` / `disallowed` lines as ours does; it gets
//! the same conveniences as ours (foldhash maps, the last file remembered).
//!
//! ```sh
//! BOTSCOPE_CORPUS=../shared/data/robotstxt cargo bench -p botscope --bench check_batch
//! cargo bench -p botscope --bench check_batch     # the checked-in subset
//! ```

use std::collections::HashMap;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

mod common;

/// Alternating rounds of each side.
const ROUNDS: usize = 11;

use common::children_cpu;

type Map<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// The robotxt loop, in this process (run as a child of the bench).
fn peer(queries: &Path) {
    let mut text = Vec::new();
    std::fs::File::open(queries)
        .and_then(|mut f| f.read_to_end(&mut text))
        .expect("queries");
    let mut files: Map<Vec<u8>, Vec<u8>> = Map::default();
    let mut parsed: Map<(Vec<u8>, Vec<u8>), robotxt::Robots> = Map::default();
    let mut last: Option<(Vec<u8>, Vec<u8>)> = None;
    let mut out = BufWriter::with_capacity(1 << 20, std::io::stdout().lock());
    for line in text.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let mut f = line.splitn(3, |&b| b == b'\t');
        let (Some(path), Some(agent), Some(url)) = (f.next(), f.next(), f.next()) else {
            let _ = out.write_all(b"error\n");
            continue;
        };
        // The same file and agent as the last line: no lookup, nothing
        // allocated.
        if !last
            .as_ref()
            .is_some_and(|(p, a)| p.as_slice() == path && a.as_slice() == agent)
        {
            let key = (path.to_vec(), agent.to_vec());
            if !parsed.contains_key(&key) {
                let body = files.entry(path.to_vec()).or_insert_with(|| {
                    std::fs::read(String::from_utf8_lossy(path).as_ref()).unwrap_or_default()
                });
                let agent = String::from_utf8_lossy(agent);
                parsed.insert(key.clone(), robotxt::Robots::parse(body, agent.as_ref()));
            }
            last = Some(key);
        }
        let robots = &parsed[last.as_ref().expect("set above")];
        let p = botscope_robotstxt::path_of(url);
        let allowed = robots.is_allowed(&String::from_utf8_lossy(&p));
        let _ = out.write_all(if allowed {
            b"allowed\n"
        } else {
            b"disallowed\n"
        });
    }
    let _ = out.flush();
}

/// Runs `cmd` to the end (output to /dev/null) and returns its CPU time.
fn cpu_of(cmd: &mut Command) -> Duration {
    let before = children_cpu();
    let status = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .status()
        .expect("run");
    assert!(status.success(), "{cmd:?}");
    children_cpu() - before
}

/// `ROBOTS_PATH<TAB>AGENT<TAB>URL` lines from a verdicts file.
fn queries(root: &Path, dir: &Path) -> (PathBuf, usize) {
    let (corpus, verdicts) = if root.join("google_verdicts.tsv").is_file() {
        (root.join("corpus"), root.join("google_verdicts.tsv"))
    } else {
        (root.join("corpus"), root.join("google_verdicts_subset.tsv"))
    };
    let text = std::fs::read_to_string(&verdicts).expect("verdicts");
    let corpus = corpus.canonicalize().expect("corpus");
    let mut out = String::with_capacity(text.len() * 2);
    let mut n = 0;
    for l in text.lines().skip(1) {
        let mut f = l.split('\t');
        if let (Some(file), Some(agent), Some(url)) = (f.next(), f.next(), f.next()) {
            out.push_str(&format!("{}/{file}\t{agent}\t{url}\n", corpus.display()));
            n += 1;
        }
    }
    let q = dir.join("q.tsv");
    std::fs::write(&q, out).expect("write queries");
    (q, n)
}

fn main() {
    if let Some(q) = std::env::var_os("BOTSCOPE_BENCH_PEER") {
        peer(Path::new(&q));
        return;
    }
    // `cargo bench` passes `--bench`; a test run (`cargo test --benches`)
    // does not, and only checks that the bench starts.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    // A relative BOTSCOPE_CORPUS is read from the workspace root (cargo
    // runs benches in the package's directory).
    let workspace = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let root = std::env::var_os("BOTSCOPE_CORPUS").map_or_else(
        || workspace.join("crates/botscope-robotstxt/tests/data"),
        |r| {
            let r = PathBuf::from(r);
            if r.is_relative() && !r.exists() {
                workspace.join(r)
            } else {
                r
            }
        },
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let (q, n) = queries(&root, dir.path());
    let me = std::env::current_exe().expect("self");
    let ours = || {
        cpu_of(
            Command::new(env!("CARGO_BIN_EXE_botscope"))
                .args(["robots", "check-batch", "--max-bytes", "0"])
                .arg(&q),
        )
    };
    let theirs = || cpu_of(Command::new(&me).env("BOTSCOPE_BENCH_PEER", &q));
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        a.push(ours());
        b.push(theirs());
    }
    a.sort();
    b.sort();
    let s = |d: Duration| format!("{:.3} s", d.as_secs_f64());
    println!("check-batch, {n} queries, whole-process CPU (user + system), {ROUNDS} rounds:");
    println!(
        "  botscope check-batch   best {}  median {}",
        s(a[0]),
        s(a[ROUNDS / 2])
    );
    println!(
        "  robotxt 0.7 loop       best {}  median {}",
        s(b[0]),
        s(b[ROUNDS / 2])
    );
    println!(
        "  ratio (robotxt / botscope): best {:.2}x  median {:.2}x",
        b[0].as_secs_f64() / a[0].as_secs_f64().max(1e-9),
        b[ROUNDS / 2].as_secs_f64() / a[ROUNDS / 2].as_secs_f64().max(1e-9)
    );
}
