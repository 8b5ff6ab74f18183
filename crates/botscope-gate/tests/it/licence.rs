//! RSL licence tokens through the real standalone gate, checked with a
//! licence server on loopback written from the Open License Protocol's
//! text: no token (401, or 402 where every licence is paid), a token the
//! server says permits the page (passed, the answer kept), an unknown one
//! (401), one for another page (403), a malformed credential, a lying and
//! a trickling server (503, never a pass), and a flood of new tokens from
//! one network held to its share of the introspections.

use std::io::{BufReader, Write};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use botscope_gate::Config;
use botscope_gate::proxy::UpstreamConfig;
use botscope_testkit::http::{Res, read_one};
use botscope_testkit::olp::{LicenceServer, Mode};
use botscope_testkit::recorder::Recorder;

use super::{Running, serve, write};

const POLICY: &str = "version: 1\ndefault: allow\nrules:\n  - name: licensed\n    action: license\n    path: [/news/, /free/]\n";

fn rsl(server: &str) -> String {
    format!(
        r#"<rsl xmlns="https://rslstandard.org/rsl">
  <content url="http://shop.example/news/" server="{server}">
    <license>
      <permits type="usage">ai-train</permits>
      <payment type="crawl"><amount currency="USD">0.01</amount></payment>
    </license>
  </content>
  <content url="/free/" server="{server}">
    <license>
      <permits type="usage">all</permits>
    </license>
  </content>
</rsl>
"#
    )
}

/// `GET path` on shop.example from `from`, with more header lines.
fn get(gate: SocketAddr, from: [u8; 4], path: &str, more: &str) -> Res {
    let mut s = botscope_testkit::connect_from(from, gate);
    s.set_read_timeout(Some(Duration::from_secs(20)))
        .expect("timeout");
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: shop.example\r\nUser-Agent: LicensedBot/1.0\r\n{more}Connection: close\r\n\r\n"
    )
    .expect("sent");
    read_one(&mut BufReader::new(&s)).expect("an answer")
}

fn token(t: &str) -> String {
    format!("Authorization: License {t}\r\n")
}

fn challenge(r: &Res) -> &str {
    r.header("www-authenticate").unwrap_or("")
}

#[test]
fn licence_tokens_through_the_standalone_gate() {
    let dir = botscope_testkit::tempdir();
    let olp = LicenceServer::start("gate", "s3cret");
    let app = Recorder::start(None);
    let rd = dir.path().join("robots");
    write(
        &rd,
        "default.txt",
        "User-agent: *\nAllow: /\nLicense: http://shop.example/license.xml\n",
    );
    let policy = dir.path().join("policy.yaml");
    std::fs::write(&policy, POLICY).unwrap();
    let log = dir.path().join("decisions.jsonl");
    let g: Running = serve(Config {
        policy: Some(policy),
        upstream: Some(UpstreamConfig::new(url::Url::parse(&app.url()).unwrap())),
        decision_log: Some(botscope_gate::decisions::DecisionLogConfig {
            path: log.clone(),
            all: false,
            max_bytes: 1 << 20,
        }),
        terms: botscope_gate::SiteTerms {
            rsl: Some((
                "/license.xml".into(),
                Arc::new(rsl(&olp.url()).into_bytes()),
            )),
            licence_server: botscope_http::olp::OlpConfig {
                allow_private: true,
                credentials: Some(("gate".into(), "s3cret".into())),
                ..Default::default()
            },
            ..Default::default()
        },
        ..Config::new(rd)
    });
    let at = g.addr;
    let reached = |path: &str| app.lines().iter().any(|l| l.contains(path));
    // No token: 402 where the licence is paid, 401 where it is free; the
    // challenge names where a token is had, the Link the licence.
    let r = get(at, [127, 0, 0, 1], "/news/a", "");
    assert_eq!(r.status, 402, "{r:?}");
    assert_eq!(
        challenge(&r),
        format!(
            "License error=\"invalid_request\", error_description=\"Access to this resource requires a valid license\", authorization_uri=\"{}/token\"",
            olp.url()
        )
    );
    assert_eq!(
        r.header("link"),
        Some("<http://shop.example/license.xml>; rel=\"license\"; type=\"application/rsl+xml\"")
    );
    assert!(r.body.starts_with("Licence required."), "{}", r.body);
    let r = get(at, [127, 0, 0, 1], "/free/a", "");
    assert_eq!(r.status, 401, "{r:?}");
    assert!(challenge(&r).contains("invalid_request"), "{r:?}");
    // What no rule covers, and the licence itself, are served to all.
    assert_eq!(get(at, [127, 0, 0, 1], "/about", "").status, 200);
    let r = get(at, [127, 0, 0, 1], "/license.xml", "");
    assert_eq!(r.status, 200);
    assert!(r.body.contains("rslstandard.org"), "{}", r.body);
    assert!(
        !reached("/news/") && !reached("/free/"),
        "{:?}",
        app.lines()
    );
    // A token the server says permits the page: passed, the licence
    // linked; the answer is kept for the pages it covers.
    olp.grant("rsl_good", "http://shop.example/news/");
    let r = get(at, [127, 0, 0, 1], "/news/a", &token("rsl_good"));
    assert_eq!(r.status, 200, "{r:?}");
    assert!(r.body.contains("GET /news/a"), "{}", r.body);
    assert!(
        r.header("link")
            .is_some_and(|l| l.contains("rel=\"license\"")),
        "{r:?}"
    );
    assert_eq!(olp.introspections(), 1);
    let r = get(at, [127, 0, 0, 1], "/news/b?page=2", &token("rsl_good"));
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(olp.introspections(), 1, "kept");
    // The same token for a page its licence does not cover: 403.
    let r = get(at, [127, 0, 0, 1], "/free/a", &token("rsl_good"));
    assert_eq!(r.status, 403, "{r:?}");
    assert!(challenge(&r).contains("insufficient_scope"), "{r:?}");
    assert!(
        challenge(&r).contains("does not cover http://shop.example/free/a"),
        "{r:?}"
    );
    // A stranger's forwarding headers do not make the page another
    // site's (whose licence a token might hold).
    olp.grant("rsl_other_site", "https://other.example/");
    let r = get(
        at,
        [127, 0, 0, 1],
        "/free/a",
        &format!(
            "{}X-Forwarded-Host: other.example\r\nX-Original-Host: other.example\r\nX-Forwarded-Proto: https\r\n",
            token("rsl_other_site")
        ),
    );
    assert_eq!(r.status, 403, "{r:?}");
    assert!(
        challenge(&r).contains("http://shop.example/free/a"),
        "{r:?}"
    );
    // A token the server does not know: 401, and kept.
    let before = olp.introspections();
    for _ in 0..3 {
        let r = get(at, [127, 0, 0, 1], "/news/a", &token("rsl_forged"));
        assert_eq!(r.status, 401, "{r:?}");
        assert!(challenge(&r).contains("invalid_token"), "{r:?}");
    }
    assert_eq!(olp.introspections(), before + 1);
    // Malformed credentials are refused without asking.
    for bad in [
        "Authorization: License\r\n",
        "Authorization: License a b\r\n",
        "Authorization: License rsl_good\r\nAuthorization: License rsl_good\r\n",
    ] {
        let r = get(at, [127, 0, 0, 1], "/news/a", bad);
        assert_eq!(r.status, 402, "{bad}: {r:?}");
        assert!(challenge(&r).contains("invalid_request"), "{bad}: {r:?}");
    }
    // Another scheme's credentials are no licence.
    let r = get(
        at,
        [127, 0, 0, 1],
        "/news/a",
        "Authorization: Bearer rsl_good\r\n",
    );
    assert_eq!(r.status, 402, "{r:?}");
    // A server that lies is never a pass: an answer without `permitted`
    // refuses, one that does not read is a 503.
    olp.set_mode(Mode::Lie(r#"{"active": true}"#.into()));
    let r = get(at, [127, 0, 0, 1], "/news/a", &token("rsl_lie1"));
    assert_eq!(r.status, 403, "{r:?}");
    for lie in [
        r#"{"active": true, "permitted": "true"}"#,
        r#"{"active": 1, "permitted": true}"#,
        "<html>yes</html>",
    ] {
        olp.set_mode(Mode::Lie(lie.into()));
        let r = get(
            at,
            [127, 0, 0, 1],
            "/news/a",
            &token(&format!("rsl_lie{}", lie.len())),
        );
        assert_eq!(r.status, 503, "{lie}: {r:?}");
        assert!(challenge(&r).contains("server_error"), "{r:?}");
        assert_eq!(r.header("retry-after"), Some("5"), "{r:?}");
    }
    // One that trickles: given up on at the first-byte deadline, refused;
    // while two introspections of one network hang, a fourth from it is
    // refused at once, and another network's is still asked.
    olp.set_mode(Mode::Trickle);
    let started = Instant::now();
    let hung: Vec<_> = (0..2)
        .map(|i| {
            std::thread::spawn(move || {
                get(
                    at,
                    [127, 0, 9, 1],
                    "/news/a",
                    &token(&format!("rsl_slow{i}")),
                )
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let t = Instant::now();
    let r = get(at, [127, 0, 9, 2], "/news/a", &token("rsl_slow9"));
    assert_eq!(r.status, 503, "{r:?}");
    assert!(challenge(&r).contains("too many licence checks"), "{r:?}");
    assert!(t.elapsed() < Duration::from_secs(1), "{:?}", t.elapsed());
    let other = get(at, [127, 0, 8, 1], "/news/a", &token("rsl_slow8"));
    assert_eq!(other.status, 503, "{other:?}");
    assert!(
        challenge(&other).contains("could not be asked"),
        "{other:?}"
    );
    for h in hung {
        let r = h.join().unwrap();
        assert_eq!(r.status, 503, "{r:?}");
    }
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
    // Nothing of all that reached the application.
    let news: Vec<String> = app
        .lines()
        .into_iter()
        .filter(|l| l.contains("/news/") || l.contains("/free/"))
        .collect();
    assert_eq!(news.len(), 2, "{news:?}");
    // The log and the metrics say what was decided.
    std::thread::sleep(Duration::from_millis(300));
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(
        lines.iter().any(|l| l["licence"]["outcome"] == "permitted"
            && l["licence"]["covers"] == "http://shop.example/news/"),
        "{lines:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l["licence"]["outcome"] == "insufficient_scope"
                && l["licence"]["status"] == 403)
    );
    let mut s = std::net::TcpStream::connect(at).unwrap();
    s.write_all(b"GET /.botscope/metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    let m = botscope_testkit::http::read_response(s, "metrics").body;
    assert!(
        m.contains("botscope_gate_licence_total{outcome=\"permitted\"} 2\n"),
        "{m}"
    );
    assert!(
        m.contains("botscope_gate_licence_total{outcome=\"invalid_token\"} 3\n"),
        "{m}"
    );
}

/// The same behind nginx and Caddy as docs/gate.md configures them: the
/// refusals reach the client with their status, challenge, `Link` and
/// page; a licensed page is served with its `Link`.
#[test]
fn licence_tokens_behind_nginx_and_caddy_as_the_guide_configures_them() {
    let dir = tempfile::tempdir().unwrap();
    let olp = LicenceServer::start("gate", "s3cret");
    let rd = dir.path().join("robots");
    write(&rd, "default.txt", "User-agent: *\nAllow: /\n");
    let policy = dir.path().join("policy.yaml");
    std::fs::write(&policy, POLICY).unwrap();
    // Relative content URLs: the origin is the one the front server
    // accepted.
    let doc = rsl(&olp.url()).replace("http://shop.example/news/", "/news/");
    let g: Running = serve(Config {
        policy: Some(policy),
        terms: botscope_gate::SiteTerms {
            rsl: Some(("/license.xml".into(), Arc::new(doc.into_bytes()))),
            licence_server: botscope_http::olp::OlpConfig {
                allow_private: true,
                credentials: Some(("gate".into(), "s3cret".into())),
                ..Default::default()
            },
            ..Default::default()
        },
        ..Config::new(rd.clone())
    });
    let (nginx, caddy) = super::guide_fronts(
        dir.path(),
        &[("news/a.html", "news a\n"), ("free/a.html", "free a\n")],
        g.addr,
        &rd,
    );

    for (front, at, host) in [
        ("nginx", nginx.0.addr, "shop.example".to_owned()),
        ("caddy", caddy.addr, caddy.addr.to_string()),
    ] {
        olp.set_mode(Mode::Honest);
        let link =
            format!("<http://{host}/license.xml>; rel=\"license\"; type=\"application/rsl+xml\"");
        let link = Some(link.as_str());
        let get = |path: &str, more: &str| {
            let mut s = botscope_testkit::connect_from([127, 0, 0, 1], at);
            s.set_read_timeout(Some(Duration::from_secs(20)))
                .expect("timeout");
            write!(
                s,
                "GET {path} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: LicensedBot/1.0\r\n{more}Connection: close\r\n\r\n"
            )
            .expect("sent");
            read_one(&mut BufReader::new(&s)).expect("an answer")
        };
        let r = get("/news/a.html", "");
        assert_eq!(r.status, 402, "{front}: {r:?}");
        assert!(
            challenge(&r).starts_with("License error=\"invalid_request\""),
            "{front}: {r:?}"
        );
        assert_eq!(r.header("link"), link, "{front}: {r:?}");
        assert!(r.body.starts_with("Licence required."), "{front}: {r:?}");
        let r = get("/free/a.html", "");
        assert_eq!(r.status, 401, "{front}: {r:?}");
        assert!(challenge(&r).contains("invalid_request"), "{front}: {r:?}");
        assert!(r.body.starts_with("Licence required."), "{front}: {r:?}");
        let good = format!("rsl_{front}");
        olp.grant(&good, &format!("http://{host}/news/"));
        let r = get("/news/a.html", &token(&good));
        assert_eq!(
            (r.status, r.body.as_str()),
            (200, "news a\n"),
            "{front}: {r:?}"
        );
        assert_eq!(r.header("link"), link, "{front}: {r:?}");
        let r = get("/free/a.html", &token(&good));
        assert_eq!(r.status, 403, "{front}: {r:?}");
        assert!(
            challenge(&r).contains("insufficient_scope"),
            "{front}: {r:?}"
        );
        let r = get("/news/a.html", &token("rsl_unknown"));
        assert_eq!(r.status, 401, "{front}: {r:?}");
        assert!(challenge(&r).contains("invalid_token"), "{front}: {r:?}");
        olp.set_mode(Mode::Lie("[]".into()));
        let r = get("/news/a.html", &token(&format!("{good}_new")));
        assert_eq!(r.status, 503, "{front}: {r:?}");
        assert_eq!(r.header("retry-after"), Some("5"), "{front}: {r:?}");
        assert!(challenge(&r).contains("server_error"), "{front}: {r:?}");
        // A page no rule covers carries no Link.
        let r = get("/", "");
        assert_eq!(r.header("link"), None, "{front}: {r:?}");
    }
}
