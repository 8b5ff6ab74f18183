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

#[test]
fn serve_runs_the_demo_and_stops_on_sigterm() {
    let home = botscope_testkit::tempdir();
    let port = botscope_testkit::free_port();
    let addr = format!("127.0.0.1:{port}");
    let mut child = Command::new(env!("CARGO_BIN_EXE_botscope"))
        .args(["serve", "--listen", &addr, "--demo-sites", "100"])
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
    let (status, body) = get(&addr, "/search?q=site%3Aebay.com");
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("www.ebay.com"));
    let (status, body) = get(&addr, "/healthz");
    assert_eq!(status, 200);
    assert!(body.contains("\"status\":\"ok\""));
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
