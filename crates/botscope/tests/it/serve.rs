//! README's main command: `botscope serve` builds the demo, serves it,
//! logs each request on standard error, and stops cleanly on SIGTERM.

#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn get(addr: &str, path: &str) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let status = out.split(' ').nth(1).unwrap().parse().unwrap();
    (status, out)
}

/// `botscope serve --listen ADDR` with `args`, in a home of its own,
/// once it says it serves: the child, its standard error (read up to
/// there) and what it said so far.
struct Serving {
    child: std::process::Child,
    err: BufReader<std::process::ChildStderr>,
    seen: String,
    _home: tempfile::TempDir,
}

fn serve(addr: &str, args: &[&str]) -> Serving {
    let home = botscope_testkit::tempdir();
    let mut child = Command::new(env!("CARGO_BIN_EXE_botscope"))
        .args(["serve", "--listen", addr])
        .args(args)
        .env("HOME", home.path())
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_DATA_HOME")
        .env_remove("XDG_CACHE_HOME")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let started = Instant::now();
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        assert!(err.read_line(&mut line).unwrap() > 0, "serve ended: {seen}");
        seen.push_str(&line);
        if line.contains("serving on http://") {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(300), "{seen}");
    }
    Serving {
        child,
        err,
        seen,
        _home: home,
    }
}

#[test]
fn serve_runs_the_demo_and_stops_on_sigterm() {
    let port = botscope_testkit::free_port();
    let addr = format!("127.0.0.1:{port}");
    let Serving {
        mut child,
        mut err,
        seen,
        _home,
    } = serve(&addr, &["--demo-sites", "100", "--header-timeout", "1s"]);
    let (status, body) = get(&addr, "/search?q=site%3Aebay.com");
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("www.ebay.com"));
    let (status, body) = get(&addr, "/healthz");
    assert_eq!(status, 200);
    assert!(body.contains("\"status\":\"ok\""));
    // --header-timeout reaches the server: a connection that sends no
    // request is closed after about a second, not the default ten.
    let mut idle = TcpStream::connect(&addr).unwrap();
    idle.set_read_timeout(Some(Duration::from_secs(8))).unwrap();
    let opened = Instant::now();
    let mut buf = Vec::new();
    let _ = idle.read_to_end(&mut buf);
    assert!(
        opened.elapsed() < Duration::from_secs(8),
        "an idle connection was kept past --header-timeout"
    );
    let ok = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(ok.success());
    let mut rest = String::new();
    err.read_to_string(&mut rest).unwrap();
    let code = child.wait().unwrap();
    assert_eq!(code.code(), Some(0), "{seen}{rest}");
    // One line per request, on standard error.
    assert!(
        rest.contains("GET /search 200") || seen.contains("GET /search 200"),
        "{rest}"
    );
    assert!(rest.contains("shutting down"), "{rest}");
}

fn get_as(addr: &str, host: &str, path: &str, ua: &str) -> u16 {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: {ua}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out.split(' ').nth(1).unwrap().parse().unwrap()
}

#[test]
fn honeypot_serves_logs_and_reports() {
    let dir = botscope_testkit::tempdir();
    let log = dir.path().join("hp.log");
    let port = botscope_testkit::free_port();
    let addr = format!("127.0.0.1:{port}");
    let mut child = Command::new(env!("CARGO_BIN_EXE_botscope"))
        .args(["honeypot", "serve", "--sites", "8", "--domain", "hp.test"])
        .args(["--crawl-delay", "1", "--listen", &addr, "--log"])
        .arg(&log)
        .env("HOME", dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    assert!(err.read_line(&mut line).unwrap() > 0);
    assert!(line.contains("honeypot of 8 sites"), "{line}");
    let host = |i: u32| format!("s{i}.hp.test:{port}");
    // A crawler that reads robots.txt and stays out of the trap, and one
    // that walks straight in.
    let good = "GoodBot/1.0 (+https://example.org/goodbot)";
    assert_eq!(get_as(&addr, &host(0), "/robots.txt", good), 200);
    assert_eq!(get_as(&addr, &host(0), "/page/1", good), 200);
    assert_eq!(get_as(&addr, &host(5), "/robots.txt", good), 500);
    assert_eq!(get_as(&addr, &host(0), "/trap/1", "BadBot/6.6"), 200);
    assert_eq!(get_as(&addr, &host(5), "/page/1", "BadBot/6.6"), 200);
    assert_eq!(get_as(&addr, "elsewhere.test", "/", "BadBot/6.6"), 404);
    assert!(
        Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .unwrap()
            .success()
    );
    assert_eq!(child.wait().unwrap().code(), Some(0));

    let o = crate::run(&[
        "honeypot",
        "report",
        "--format",
        "json",
        "--log",
        crate::arg(&log),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["lines"], 6);
    assert_eq!(r["other_hosts"], 1);
    let crawlers = r["crawlers"].as_array().unwrap();
    assert_eq!(crawlers[0]["name"], "GoodBot");
    assert_eq!(crawlers[0]["score"], 100.0);
    assert_eq!(crawlers[1]["name"], "BadBot");
    assert_eq!(crawlers[1]["score"], 0.0);
    let o = crate::run(&["honeypot", "report", "--log", crate::arg(&log)]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("s0.hp.test: GET /trap/1 (Disallow: /trap/)"),
        "{text}"
    );
    let o = crate::run(&[
        "honeypot",
        "report",
        "--format",
        "html",
        "--log",
        crate::arg(&log),
    ]);
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("<!DOCTYPE html>"));
    let page = dir.path().join("report.html");
    std::fs::write(&page, &o.stdout).unwrap();
    crate::a11y::assert_accessible("the honeypot report", &page);

    // Without the sites file: a clear error, exit 2.
    std::fs::remove_file(dir.path().join("hp.log.sites.json")).unwrap();
    let o = crate::run(&["honeypot", "report", "--log", crate::arg(&log)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--sites"));
    // Bad flags: nothing is written.
    let o = crate::run(&[
        "honeypot",
        "serve",
        "--sites",
        "0",
        "--log",
        crate::arg(&dir.path().join("x.log")),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!dir.path().join("x.log").exists());
    // A log whose sites file describes other sites, or a file in the way:
    // refused, nothing written.
    for (what, sites) in [
        (
            "other",
            r#"{"domain":"other.test","crawl_delay":5,"sites":[]}"#,
        ),
        ("junk", "=cmd|' /C calc'!A0\n"),
    ] {
        let log = dir.path().join(format!("{what}.log"));
        let sites_file = dir.path().join(format!("{what}.log.sites.json"));
        std::fs::write(&sites_file, sites).unwrap();
        let o = crate::run(&[
            "honeypot",
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--log",
            crate::arg(&log),
        ]);
        assert_eq!(o.status.code(), Some(2), "{what}");
        assert!(!log.exists(), "{what}");
        assert_eq!(std::fs::read_to_string(&sites_file).unwrap(), sites);
    }
}

/// Found by a probe: `honeypot serve --log LOG` appended through a
/// symbolic link placed at LOG, so whoever placed it chose the file the
/// crawlers' lines went to. A link (and a FIFO) is refused before
/// anything is served, and the link's target is untouched.
#[test]
fn honeypot_refuses_a_log_that_is_a_symbolic_link() {
    let dir = botscope_testkit::tempdir();
    let target = dir.path().join("precious");
    std::fs::write(&target, b"keep\n").unwrap();
    let link = dir.path().join("hp.log");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let port = botscope_testkit::free_port();
    let mut child = Command::new(env!("CARGO_BIN_EXE_botscope"))
        .args(["honeypot", "serve", "--sites", "2", "--domain", "hp.test"])
        .args(["--listen", &format!("127.0.0.1:{port}"), "--log"])
        .arg(&link)
        .env("HOME", dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A server that accepted the link would serve until stopped: it is
    // stopped after a while, and the test fails on what it printed.
    for _ in 0..200 {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    if child.try_wait().unwrap().is_none() {
        let _ = child.kill();
    }
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("symbolic link"), "{err}");
    assert_eq!(std::fs::read(&target).unwrap(), b"keep\n");
}

/// The server's resident anonymous memory (its heap, not the pages of
/// its binary and of files it maps), from `/proc`.
fn resident_kb(pid: u32) -> u64 {
    status_field(pid, "RssAnon:")
}

/// A number of /proc/PID/status (its unit, kB, dropped).
fn status_field(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// Found: each upload of a large log left `serve` bigger (537, 576,
/// 576, 603 MB after four uploads of a log of a million clients): the
/// allocator kept what an analysis had freed in the arenas of the
/// threads that used it, and the next analysis's threads landed in
/// others. Now what an analysis frees goes back to the system when it
/// ends: uploads in a row leave the server about the size it was (this
/// log's analysis peaks about 190 MB above it; before, 125 to 170 MB of
/// that stayed after each upload; now 0 to 20 MB on a quiet machine, up
/// to about 50 beside other work). The upload's answer comes after the
/// oldest upload is let go and its memory given back too: measured
/// right after the answer, a CI run beside the rest of the suite once
/// found 46 and 77 MB more after the second and third uploads (not
/// reproduced alone; the eviction after the trim is the cause found in
/// the code). The bound, 96 MB, lies
/// between what stays now on a loaded machine (up to 34 MB beside six
/// busy loops) and what stayed before (125 MB and more).
#[test]
fn uploads_in_a_row_leave_the_server_its_size() {
    let port = botscope_testkit::free_port();
    let addr = format!("127.0.0.1:{port}");
    // Only the newest report kept: what stays is the server's own.
    let mut s = serve(&addr, &["--demo-sites", "5", "--uploads-memory", "1"]);
    let child = &mut s.child;
    // 150,000 clients, each a made-up robot: the heaviest shape an
    // upload has (a client, an agent and a robot's counters each).
    let mut log = Vec::new();
    for i in 0..150_000u32 {
        writeln!(
            log,
            "10.{}.{}.{} - - [24/Nov/2026:10:{:02}:{:02} +0000] \"GET /p/{i} HTTP/1.1\" 200 100 \"-\" \"Mozilla/5.0 (compatible; Made{i}Bot/1.0; +http://example.com/)\"",
            i >> 16,
            (i >> 8) & 255,
            i & 255,
            (i / 60) % 60,
            i % 60
        )
        .unwrap();
    }
    let boundary = "----botscopetestboundary";
    let mut body = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"log\"; filename=\"big.log\"\r\n\
         Content-Type: application/octet-stream\r\n\r\n"
    )
    .into_bytes();
    body.extend_from_slice(&log);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    let before = resident_kb(child.id());
    let mut after = Vec::new();
    let mut threads = Vec::new();
    for _ in 0..3 {
        let mut s = TcpStream::connect(&addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(300))).unwrap();
        write!(
            s,
            "POST /logs HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
             Content-Type: multipart/form-data; boundary={boundary}\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )
        .unwrap();
        s.write_all(&body).unwrap();
        let mut res = String::new();
        s.read_to_string(&mut res).unwrap();
        assert!(res.starts_with("HTTP/1.1 303"), "{res}");
        after.push(resident_kb(child.id()));
        threads.push(status_field(child.id(), "Threads:"));
    }
    let _ = child.kill();
    let _ = child.wait();
    for (k, kb) in after.iter().enumerate() {
        assert!(
            *kb < before + 96 * 1024,
            "after upload {}: {} MB, before the first {} MB (all: {:?} kB; threads after each: {:?})",
            k + 1,
            kb / 1024,
            before / 1024,
            after,
            threads
        );
    }
}
