//! The standalone gate (`--upstream`) attacked from outside, with raw
//! sockets, in front of an application that records exactly what it
//! receives: nothing reaches the application unjudged (issue 96, items
//! 1–6).

use std::io::{BufReader, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::time::Duration;

use botscope_gate::Config;
use botscope_gate::proxy::{UpstreamConfig, UpstreamPath};
use botscope_testkit::http::{Res, read_one, read_response};
use botscope_testkit::recorder::{Recorder, Switch, Upgrades};

use super::{Running, serve, write};

const POLICY: &str = "version: 1\ndefault: allow\nrules:\n  - name: private\n    action: deny\n    path: [/private/]\n  - name: no-deletes\n    action: deny\n    method: DELETE\n";

/// A gate in front of `app` (its URL, with a prefix or not), with `policy`
/// and `more` set on the config.
fn gate_before(dir: &Path, app: &str, policy: &str, more: impl FnOnce(&mut Config)) -> Running {
    let rd = dir.join("robots");
    write(&rd, "default.txt", "User-agent: *\nDisallow: /private/\n");
    let path = dir.join("policy.yaml");
    std::fs::write(&path, policy).unwrap();
    let mut config = Config {
        policy: Some(path),
        upstream: Some(UpstreamConfig::new(url::Url::parse(app).unwrap())),
        ..Config::new(rd)
    };
    more(&mut config);
    serve(config)
}

/// One raw request (its whole head, as given) on a fresh connection
/// from 127.0.0.1, read to the close.
fn raw(to: SocketAddr, head: &str) -> Res {
    raw_from([127, 0, 0, 1], to, head.as_bytes())
}

fn raw_from(from: [u8; 4], to: SocketAddr, bytes: &[u8]) -> Res {
    let mut s = botscope_testkit::connect_from(from, to);
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(bytes).unwrap();
    read_response(s, &String::from_utf8_lossy(&bytes[..bytes.len().min(60)]))
}

fn get(to: SocketAddr, target: &str) -> Res {
    raw(
        to,
        &format!("GET {target} HTTP/1.1\r\nHost: shop.example\r\nConnection: close\r\n\r\n"),
    )
}

/// Waits a moment for what is in flight to reach the recorder.
fn settle() {
    std::thread::sleep(Duration::from_millis(100));
}

/// Item 1: an h2c upgrade is never passed on, and a 101 that is not a
/// WebSocket's never opens a tunnel.
#[test]
fn no_tunnel_but_a_websocket_one() {
    let dir = botscope_testkit::tempdir();
    // An application that switches to whatever it is asked.
    let app = Recorder::start(Some(Upgrades {
        switch: Switch::Echo,
        always: false,
    }));
    let g = gate_before(dir.path(), &app.url(), POLICY, |_| {});
    for upgrade in ["h2c", "h2c, websocket"] {
        app.clear();
        let mut s = TcpStream::connect(g.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        write!(
            s,
            "GET /ok HTTP/1.1\r\nHost: shop.example\r\nUpgrade: {upgrade}\r\nConnection: Upgrade, HTTP2-Settings\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n\r\n"
        )
        .unwrap();
        let mut r = BufReader::new(s.try_clone().unwrap());
        let first = read_one(&mut r).expect("an answer");
        if upgrade == "h2c" {
            // Not passed on: a plain request, and the connection stays
            // HTTP/1.1 to the gate, so the next request is judged.
            assert_eq!(first.status, 200, "{first:?}");
            let seen = app.seen();
            assert_eq!(seen.len(), 1);
            assert!(seen[0].header("upgrade").is_empty(), "{seen:?}");
            assert!(seen[0].header("http2-settings").is_empty(), "{seen:?}");
            write!(
                s,
                "GET /private/x HTTP/1.1\r\nHost: shop.example\r\nConnection: close\r\n\r\n"
            )
            .unwrap();
            let second = read_one(&mut r).expect("an answer");
            assert_eq!(second.status, 403, "{second:?}");
        } else {
            // Only the WebSocket is asked of the application.
            assert_eq!(first.status, 101, "{first:?}");
            assert_eq!(seen_upgrade(&app), ["websocket"]);
            let seen = app.seen();
            assert_eq!(seen[0].header("connection"), ["upgrade"], "{seen:?}");
        }
        settle();
        assert!(
            !app.lines().iter().any(|l| l.contains("/private/")),
            "{:?}",
            app.lines()
        );
    }
    // A WebSocket asked for, answered with a 101 naming another protocol
    // or none: 502, and nothing after it reaches the application.
    for switch in [Switch::Name("h2c"), Switch::Unnamed] {
        let app = Recorder::start(Some(Upgrades {
            switch,
            always: false,
        }));
        let dir = botscope_testkit::tempdir();
        let g = gate_before(dir.path(), &app.url(), POLICY, |_| {});
        let r = raw(
            g.addr,
            "GET /ws HTTP/1.1\r\nHost: shop.example\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\nGET /private/x HTTP/1.1\r\nHost: shop.example\r\n\r\n",
        );
        assert_eq!(r.status, 502, "{r:?}");
        settle();
        assert_eq!(app.lines(), ["GET /ws HTTP/1.1"]);
    }
    // An application that switches unasked: 502.
    let app = Recorder::start(Some(Upgrades {
        switch: Switch::Name("h2c"),
        always: true,
    }));
    let dir = botscope_testkit::tempdir();
    let g = gate_before(dir.path(), &app.url(), POLICY, |_| {});
    let r = raw(
        g.addr,
        "GET /ok HTTP/1.1\r\nHost: shop.example\r\n\r\nGET /private/x HTTP/1.1\r\nHost: shop.example\r\n\r\n",
    );
    assert_eq!(r.status, 502, "{r:?}");
    settle();
    assert_eq!(app.lines(), ["GET /ok HTTP/1.1"]);
}

fn seen_upgrade(app: &Recorder) -> Vec<String> {
    app.seen()
        .iter()
        .flat_map(|s| s.header("upgrade").into_iter().map(str::to_owned))
        .collect()
}

/// Item 1, the last sentence: a WebSocket tunnel holds its client's
/// connection slot.
#[test]
fn websocket_tunnels_count_against_the_clients_cap() {
    let dir = botscope_testkit::tempdir();
    let app = Recorder::start(Some(Upgrades {
        switch: Switch::Echo,
        always: false,
    }));
    let g = gate_before(dir.path(), &app.url(), POLICY, |c| {
        c.connections.per_client = 2;
    });
    let open = |from: [u8; 4]| {
        let mut s = botscope_testkit::connect_from(from, g.addr);
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        s.write_all(b"GET /ws HTTP/1.1\r\nHost: shop.example\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
            .unwrap();
        let mut r = BufReader::new(s.try_clone().unwrap());
        (s, read_one(&mut r))
    };
    let (_a, ra) = open([127, 0, 0, 7]);
    let (_b, rb) = open([127, 0, 0, 7]);
    assert_eq!(ra.unwrap().status, 101);
    assert_eq!(rb.unwrap().status, 101);
    // Two tunnels open: the client's third connection is refused.
    let (_c, rc) = open([127, 0, 0, 7]);
    assert!(rc.is_none(), "{rc:?}");
    // Another client is not.
    let (_d, rd) = open([127, 0, 0, 8]);
    assert_eq!(rd.unwrap().status, 101);
}

/// Item 2: every spelling stacks read differently is refused, in both
/// modes, and what passes reaches the application as the mode says.
#[test]
fn the_path_judged_is_the_path_served() {
    let app = Recorder::start(None);
    let d1 = botscope_testkit::tempdir();
    let as_sent = gate_before(d1.path(), &app.url(), POLICY, |_| {});
    let d2 = botscope_testkit::tempdir();
    let normalized = gate_before(d2.path(), &app.url(), POLICY, |c| {
        if let Some(u) = c.upstream.as_mut() {
            u.path = UpstreamPath::Normalized;
        }
    });
    let d3 = botscope_testkit::tempdir();
    let report_only = gate_before(d3.path(), &app.url(), POLICY, |c| c.report_only = true);
    for g in [&as_sent, &normalized, &report_only] {
        for t in [
            "/private;x=1/x",
            "/;x=1/private/x",
            "/x/..;/private/x",
            "/x/.;/../private/x",
            "/.well-known/..;/private/x",
            "/\\private/x",
            "/%5cprivate/x",
            "/x/%2e%2e%5cprivate/x",
            "/private./x",
            "/private%20/x",
            "/private%2e/x",
            "/private::$DATA/x",
            "/private%252fx",
            "/%252e%252e/private/x",
            "/%2570rivate/x",
            "/private%c0%afx",
            "/private%00/x",
            "/../private/x",
        ] {
            let r = get(g.addr, t);
            assert_eq!(r.status, 400, "{t}: {r:?}");
            assert!(r.body.starts_with("Bad request."), "{t}: {}", r.body);
        }
    }
    settle();
    assert!(app.lines().is_empty(), "{:?}", app.lines());
    // Spellings every stack reads as one path: judged as that path.
    for t in [
        "/%70rivate/x",
        "/a/../private/x",
        "//private/x",
        "/private%2Fx",
    ] {
        assert_eq!(get(as_sent.addr, t).status, 403, "{t}");
    }
    // Allowed: as sent, or exactly the path judged.
    for (t, normal) in [
        ("/shop/./%69tem?id=%41", "/shop/item?id=A"),
        ("/a//b/../c", "/a/c"),
    ] {
        app.clear();
        assert_eq!(get(as_sent.addr, t).status, 200, "{t}");
        assert_eq!(get(normalized.addr, t).status, 200, "{t}");
        settle();
        let targets: Vec<String> = app.seen().iter().map(|s| s.target().to_owned()).collect();
        assert_eq!(targets, [t, normal]);
    }
    // The gate's own paths, however spelled, are the gate's.
    app.clear();
    let r = get(as_sent.addr, "/%72obots.txt");
    assert_eq!(r.status, 200);
    assert!(r.body.contains("Disallow: /private/"), "{r:?}");
    settle();
    assert!(app.lines().is_empty(), "{:?}", app.lines());
}

/// Item 2, `path_case: insensitive`: `/PRIVATE/x` is `/private/x`, for
/// `path:` rules and for `robots: disallowed`.
#[test]
fn paths_without_case_when_the_application_routes_so() {
    let app = Recorder::start(None);
    let dir = botscope_testkit::tempdir();
    let policy = "version: 1\ndefault: allow\npath_case: insensitive\nrules:\n  - name: private\n    action: deny\n    path: [/Private/]\n  - name: closed\n    action: deny\n    robots: disallowed\n";
    let g = gate_before(dir.path(), &app.url(), policy, |c| {
        let rd = dir.path().join("robots");
        write(&rd, "default.txt", "User-agent: *\nDisallow: /Secret/\n");
        c.robots_dir = rd;
    });
    for t in [
        "/PRIVATE/x",
        "/private/x",
        "/pRiVaTe/x",
        "/SECRET/a",
        "/secret/a",
    ] {
        assert_eq!(get(g.addr, t).status, 403, "{t}");
    }
    assert_eq!(get(g.addr, "/public/x").status, 200);
    // Without it, case matters (the default, as nginx).
    let d2 = botscope_testkit::tempdir();
    let g = gate_before(d2.path(), &app.url(), POLICY, |_| {});
    assert_eq!(get(g.addr, "/PRIVATE/x").status, 200);
    assert_eq!(get(g.addr, "/private/x").status, 403);
}

/// Item 3: a path prefix confines.
#[test]
fn a_path_prefix_confines() {
    let app = Recorder::start(None);
    let dir = botscope_testkit::tempdir();
    let g = gate_before(dir.path(), &format!("{}/shop/", app.url()), POLICY, |_| {});
    for t in [
        "/../admin/x",
        "/%2e%2e/admin/x",
        "/a/../../admin/x",
        "/..%2fadmin/x",
    ] {
        assert_eq!(get(g.addr, t).status, 400, "{t}");
    }
    assert_eq!(get(g.addr, "/a/../b?q=1").status, 200);
    settle();
    let targets: Vec<String> = app.seen().iter().map(|s| s.target().to_owned()).collect();
    assert_eq!(targets, ["/shop/b?q=1"]);
}

/// Item 4: headers an application trusts for the client, the scheme or
/// the path, and a method override.
#[test]
fn headers_the_application_trusts_are_the_gates() {
    let app = Recorder::start(None);
    let dir = botscope_testkit::tempdir();
    let g = gate_before(dir.path(), &app.url(), POLICY, |c| {
        c.trust_proxy = vec![botscope_botid::IpRange::parse_any("127.0.0.9/32").unwrap()];
    });
    let forged = [
        ("Forwarded", "for=66.249.66.1;proto=https"),
        ("CF-Connecting-IP", "66.249.66.1"),
        ("True-Client-IP", "66.249.66.1"),
        ("X-Client-IP", "66.249.66.1"),
        ("Fastly-Client-IP", "66.249.66.1"),
        ("X-Cluster-Client-IP", "66.249.66.1"),
        ("X-ProxyUser-Ip", "66.249.66.1"),
        ("X-Forwarded-Port", "443"),
        ("X-Forwarded-Ssl", "on"),
        ("X-Forwarded-Scheme", "https"),
        ("X-Original-URL", "/private/x"),
        ("X-Rewrite-URL", "/private/x"),
    ];
    let head: String = forged
        .iter()
        .map(|(k, v)| format!("{k}: {v}\r\n"))
        .collect();
    let ask = |from: [u8; 4]| {
        app.clear();
        let r = raw_from(
            from,
            g.addr,
            format!("GET /page HTTP/1.1\r\nHost: shop.example\r\n{head}Connection: close\r\n\r\n")
                .as_bytes(),
        );
        assert_eq!(r.status, 200, "{r:?}");
        settle();
        app.seen().pop().unwrap()
    };
    // A stranger's: removed, and Forwarded written by the gate.
    let seen = ask([127, 0, 0, 3]);
    for (k, _) in &forged[1..] {
        assert!(seen.header(k).is_empty(), "{k}: {seen:?}");
    }
    assert_eq!(
        seen.header("forwarded"),
        ["for=127.0.0.3;host=shop.example;proto=http"]
    );
    assert_eq!(seen.header("x-forwarded-for"), ["127.0.0.3"]);
    // A trusted proxy's: kept, and its Forwarded extended.
    let seen = ask([127, 0, 0, 9]);
    for (k, v) in &forged[1..] {
        assert_eq!(seen.header(k), [*v], "{k}");
    }
    assert_eq!(
        seen.header("forwarded"),
        ["for=66.249.66.1;proto=https, for=127.0.0.9;host=shop.example;proto=http"]
    );
    // A method override is judged as the method.
    app.clear();
    for (over, want) in [
        ("X-HTTP-Method-Override: DELETE\r\n", 403),
        ("X-HTTP-Method: delete\r\n", 403),
        ("X-Method-Override: DELETE\r\n", 403),
        ("X-HTTP-Method-Override: PUT\r\n", 200),
        (
            "X-HTTP-Method-Override: PUT\r\nX-HTTP-Method: DELETE\r\n",
            400,
        ),
        ("X-HTTP-Method-Override: \r\n", 400),
    ] {
        let r = raw(
            g.addr,
            &format!(
                "POST /item HTTP/1.1\r\nHost: shop.example\r\n{over}Content-Length: 0\r\nConnection: close\r\n\r\n"
            ),
        );
        assert_eq!(r.status, want, "{over}: {r:?}");
    }
    settle();
    assert_eq!(app.lines().len(), 1, "{:?}", app.lines());
}

/// Item 5: `Host`, framing and the methods that are no request for a
/// page.
#[test]
fn host_and_framing() {
    let app = Recorder::start(None);
    let dir = botscope_testkit::tempdir();
    let g = gate_before(dir.path(), &app.url(), POLICY, |_| {});
    // `Connection` cannot make Host or Content-Length hop-by-hop.
    let r = raw(
        g.addr,
        "POST /form HTTP/1.1\r\nHost: shop.example\r\nConnection: close, Host, Content-Length\r\nContent-Length: 3\r\n\r\nabc",
    );
    assert_eq!(r.status, 200, "{r:?}");
    settle();
    let seen = app.seen().pop().unwrap();
    assert_eq!(seen.header("host"), ["shop.example"]);
    assert_eq!(seen.body, 3);
    app.clear();
    for (head, want) in [
        (
            "GET /a HTTP/1.1\r\nHost: shop.example\r\nHost: other.example\r\n\r\n",
            400,
        ),
        ("GET /a HTTP/1.1\r\n\r\n", 400),
        (
            "GET http://other.example/a HTTP/1.1\r\nHost: shop.example\r\n\r\n",
            400,
        ),
        (
            "CONNECT shop.example:443 HTTP/1.1\r\nHost: shop.example:443\r\n\r\n",
            405,
        ),
        ("GET * HTTP/1.1\r\nHost: shop.example\r\n\r\n", 400),
        (
            "POST /a HTTP/1.1\r\nHost: shop.example\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
            501,
        ),
        (
            "POST /a HTTP/1.1\r\nHost: shop.example\r\nTransfer-Encoding: chunked\r\n\r\n0x5\r\nhello\r\n0\r\n\r\n",
            400,
        ),
        (
            "POST /a HTTP/1.1\r\nHost: shop.example\r\nTransfer-Encoding: chunked\r\n\r\n-5\r\nhello\r\n0\r\n\r\n",
            400,
        ),
        (
            "POST /a HTTP/1.1\r\nHost: shop.example\r\nTransfer-Encoding: chunked\r\n\r\n10000000000000005\r\nhello\r\n0\r\n\r\n",
            400,
        ),
    ] {
        let r = raw(g.addr, head);
        assert_eq!(r.status, want, "{head:?}: {r:?}");
    }
    // Chunked beside a length: read by its chunks alone, the length not
    // passed on (RFC 9112, 6.3).
    app.clear();
    let r = raw(
        g.addr,
        "POST /te HTTP/1.1\r\nHost: shop.example\r\nTransfer-Encoding: chunked\r\nContent-Length: 50\r\nConnection: close\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
    );
    assert_eq!(r.status, 200, "{r:?}");
    settle();
    let seen = app.seen().pop().unwrap();
    assert!(seen.header("content-length").is_empty(), "{seen:?}");
    assert_eq!(seen.body, 3);
    // The same authority in both is one request.
    let r = raw(
        g.addr,
        "GET http://shop.example/abs HTTP/1.1\r\nHost: shop.example\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(r.status, 200, "{r:?}");
    let r = raw(
        g.addr,
        "OPTIONS * HTTP/1.1\r\nHost: shop.example\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(r.status, 200, "{r:?}");
    // A response with both framings reaches the client whole.
    let r = get(g.addr, "/te-and-cl");
    assert_eq!(r.status, 200);
    assert_eq!(r.body, "0123456789abcdef-the-whole-body");
    settle();
    // Only the good ones reached the application; no malformed body
    // counted against it.
    let targets: Vec<String> = app.seen().iter().map(|s| s.target().to_owned()).collect();
    assert!(
        targets
            .iter()
            .all(|t| ["/te", "/abs", "/te-and-cl"].contains(&t.as_str())),
        "{targets:?}"
    );
    let m = get(g.addr, "/.botscope/metrics").body;
    assert!(
        m.contains("botscope_gate_upstream_requests_total{outcome=\"unreachable\"} 0"),
        "{m}"
    );
}

/// Item 6: one request-head limit, on a fresh connection or not.
#[test]
fn one_head_limit_whatever_came_before() {
    let dir = botscope_testkit::tempdir();
    let rd = dir.path().join("robots");
    write(&rd, "default.txt", "User-agent: *\n");
    let g = serve(Config::new(rd));
    let request = |n: usize| {
        format!(
            "GET /auth HTTP/1.1\r\nHost: gate\r\nX-Original-URI: /\r\nX-Pad: {}\r\n\r\n",
            "a".repeat(n)
        )
    };
    for (n, want) in [(30_000, 200), (60_000, 200), (80_000, 431), (100_000, 431)] {
        // Fresh.
        let fresh = raw(g.addr, &request(n)).status;
        // Second on a kept-alive connection.
        let mut s = TcpStream::connect(g.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut r = BufReader::new(s.try_clone().unwrap());
        s.write_all(request(10).as_bytes()).unwrap();
        assert_eq!(read_one(&mut r).unwrap().status, 200);
        s.write_all(request(n).as_bytes()).unwrap();
        let second = read_one(&mut r).map_or(0, |r| r.status);
        assert_eq!((fresh, second), (want, want), "a head of {n} bytes");
    }
}
