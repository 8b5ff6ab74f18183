//! What strangers' connections may hold: idle and slow connections are
//! closed and capped per client, posts from other sites are refused.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use botscope_web::{Config, Limits};

/// A small server with short timeouts, of its own.
fn hostile() -> SocketAddr {
    static S: std::sync::OnceLock<crate::Running> = std::sync::OnceLock::new();
    S.get_or_init(|| {
        crate::start(Config {
            demo_sites: 20,
            threads: 2,
            limits: Limits {
                api_per_second: 0,
                header_timeout: Duration::from_secs(1),
                connections_per_client: 32,
                upload_clients: 3000,
                uploads_bytes: 1,
                ..Limits::default()
            },
            ..Config::demo()
        })
    })
    .addr
}

/// Reads until the server closes the connection (or `limit` passes).
fn closed_within(s: &mut TcpStream, limit: Duration) -> bool {
    s.set_read_timeout(Some(limit)).unwrap();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return true,
            Err(_) => return false,
        }
    }
}

/// Found: `serve` had no header or idle timeout, and about 20,000 idle
/// connections exhausted its descriptors; `/healthz` stopped answering.
/// Now 2,000 idle connections from one address hold 32 slots at most, are
/// closed when their head does not come, and `/healthz` answers others
/// meanwhile.
#[test]
fn idle_connections_are_closed_and_cannot_keep_others_out() {
    let addr = hostile();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let idle: Vec<tokio::net::TcpStream> = rt.block_on(async {
        let mut v = Vec::new();
        for _ in 0..2_000 {
            let sock = tokio::net::TcpSocket::new_v4().unwrap();
            sock.bind("127.0.0.2:0".parse().unwrap()).unwrap();
            if let Ok(s) = sock.connect(addr).await {
                v.push(s);
            }
        }
        v
    });
    assert!(idle.len() >= 1_900, "{} connections made", idle.len());
    let mut worst = Duration::ZERO;
    for _ in 0..20 {
        let t = Instant::now();
        let r = crate::get(addr, "/healthz");
        worst = worst.max(t.elapsed());
        assert_eq!(r.status, 200, "{}", r.body);
    }
    eprintln!(
        "/healthz beside 2,000 idle connections: slowest of 20 in {:.1} ms",
        worst.as_secs_f64() * 1e3
    );
    // Every idle connection is closed: past the cap at once, the others
    // when their head does not come within the second.
    let mut idle: Vec<TcpStream> = idle.into_iter().map(|s| s.into_std().unwrap()).collect();
    for s in &mut idle {
        s.set_nonblocking(false).unwrap();
    }
    let mut open = 0;
    for s in &mut idle {
        if !closed_within(s, Duration::from_secs(5)) {
            open += 1;
        }
    }
    assert_eq!(open, 0, "idle connections left open");
}

/// A keep-alive connection that goes quiet after its answer is closed too.
#[test]
fn idle_keep_alive_connections_are_closed() {
    let addr = hostile();
    let mut s = TcpStream::connect(addr).unwrap();
    s.write_all(format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\n\r\n").as_bytes())
        .unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut buf = [0u8; 4096];
    let n = s.read(&mut buf).unwrap();
    assert!(
        buf[..n].starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&buf[..n])
    );
    assert!(closed_within(&mut s, Duration::from_secs(5)), "still open");
    // A head sent byte by byte too slowly is cut off as well.
    let mut slow = TcpStream::connect(addr).unwrap();
    slow.write_all(b"GET /healthz HTTP/1.1\r\n").unwrap();
    assert!(closed_within(&mut slow, Duration::from_secs(5)));
}

/// Found: a cross-origin POST to `/submit` was accepted. A form posted
/// from another site is refused; this server's own pages and clients
/// that are not browsers are not.
#[test]
fn posts_from_other_sites_are_refused() {
    let addr = hostile();
    let body = b"site=example.org&robots=User-agent%3A+*%0ADisallow%3A+%2F";
    let post = |origin: Option<&str>, fetch_site: Option<&str>| {
        let mut s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        let mut req = format!(
            "POST /check HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n",
            body.len()
        );
        if let Some(o) = origin {
            req.push_str(&format!("Origin: {o}\r\n"));
        }
        if let Some(f) = fetch_site {
            req.push_str(&format!("Sec-Fetch-Site: {f}\r\n"));
        }
        req.push_str("\r\n");
        s.write_all(req.as_bytes()).unwrap();
        s.write_all(body).unwrap();
        botscope_testkit::http::read_response(s, "/check")
    };
    let r = post(Some("https://evil.example"), Some("cross-site"));
    assert_eq!(r.status, 403, "{}", r.body);
    assert_eq!(post(Some("null"), None).status, 403);
    assert_eq!(
        post(Some(&format!("http://{addr}")), Some("same-site")).status,
        403
    );
    // Chromium's own form posts under `no-referrer`.
    assert_ne!(post(Some("null"), Some("same-origin")).status, 403);
    assert_eq!(post(None, Some("cross-site")).status, 403);
    assert_ne!(
        post(Some(&format!("http://{addr}")), Some("same-origin")).status,
        403
    );
    assert_ne!(
        post(None, None).status,
        403,
        "a client that is not a browser"
    );
}

/// Found: a query of 700 wildcards answered 500 with the index's path and
/// the regular expression's error. It is a 400 naming the limit, and no
/// answer names a server path.
#[test]
fn a_huge_query_is_a_client_error_that_names_no_path() {
    let addr = hostile();
    let q = format!("disallow:/{}", "a*".repeat(700));
    for path in ["/search", "/api/search"] {
        let r = crate::get(addr, &format!("{path}?q={}", crate::pct(&q)));
        assert_eq!(r.status, 400, "{path}: {}", r.body);
        assert!(r.body.contains("over 512 bytes"), "{path}: {}", r.body);
        assert!(
            !r.body.contains("/tmp") && !r.body.contains("index"),
            "{path}: {}",
            r.body
        );
    }
    // Just under the limit, the same shape is answered.
    let q = format!("disallow:/{}", "a*".repeat(250));
    let r = crate::get(addr, &format!("/api/search?q={}", crate::pct(&q)));
    assert_eq!(r.status, 200, "{}", r.body);
}

/// Found: an upload of a million distinct made-up robots held gigabytes
/// (a report entry, a page section and a path counter per robot) and
/// kept them. Now the analysis tracks a bounded number of clients, the
/// report a bounded number of robots, each counting the rest together;
/// and the kept reports are bounded in bytes, the oldest going first.
#[test]
fn an_upload_of_made_up_clients_is_bounded_and_says_so() {
    let addr = hostile();
    let mut log = String::new();
    for i in 0..4000u32 {
        log.push_str(&format!(
            "10.{}.{}.{} - - [24/Nov/2026:10:{:02}:00 +0000] \"GET /p/{i} HTTP/1.1\" 200 100 \"-\" \"Mozilla/5.0 (compatible; Made{i}Bot/1.0; +http://example.com/)\"\n",
            i >> 16,
            (i >> 8) & 255,
            i & 255,
            i % 60
        ));
    }
    let (ct, body) = crate::multipart(&[("log", Some("made-up.log"), log.as_bytes())]);
    let first = crate::request(addr, "POST", "/logs", &ct, &body);
    assert_eq!(first.status, 303, "{}", first.body);
    let first = first.header("location").unwrap().to_owned();
    let id = first.trim_start_matches("/logs/");
    let json = crate::get(addr, &format!("/api/logs/{id}")).json();
    assert_eq!(json["site"]["requests"], 4000);
    assert_eq!(json["site"]["clients"], 3000);
    assert_eq!(json["untracked"]["requests"], 1000);
    assert_eq!(json["robots"].as_object().unwrap().len(), 1000);
    assert_eq!(json["robots_omitted"]["robots"], 2000);
    assert_eq!(json["robots_omitted"]["requests"], 2000);
    let page = crate::get(addr, &first);
    assert_eq!(page.status, 200);
    assert!(page.body.contains("2000 more robots"), "the page says so");
    assert!(page.body.contains("1000 requests"), "the page says so");
    // A second upload: the kept reports are over their bytes, the oldest
    // goes.
    let (ct, body) = crate::multipart(&[("log", Some("second.log"), &log.as_bytes()[..2000])]);
    let second = crate::request(addr, "POST", "/logs", &ct, &body);
    assert_eq!(second.status, 303, "{}", second.body);
    let second = second.header("location").unwrap().to_owned();
    assert_eq!(crate::get(addr, &second).status, 200);
    assert_eq!(crate::get(addr, &first).status, 404);
}
