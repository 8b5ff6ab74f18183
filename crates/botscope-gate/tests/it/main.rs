//! The gate on loopback: robots.txt per category, /auth, trusted proxies,
//! and reloads (on change and on failure) while requests keep coming.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod fleet;
mod keys;
mod licence;
mod pay;
mod standalone;
mod traps;

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use botscope_botid::IpRange;
use botscope_gate::{Category, Config, Server};
use botscope_testkit::http::{Res, read_response};

/// One request over a fresh connection, optionally as a proxy forwarding
/// for `client` (in `X-Real-IP`, as nginx writes it; an `X-Forwarded-For`
/// the client forged beside it is never read).
fn get(addr: SocketAddr, path: &str, client: Option<&str>) -> Res {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let fwd = client.map_or_else(String::new, |c| {
        format!("X-Forwarded-For: 66.249.66.1\r\nX-Real-IP: {c}\r\n")
    });
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: gate\r\n{fwd}Connection: close\r\n\r\n"
    )
    .unwrap();
    read_response(s, path)
}

fn write(dir: &Path, name: &str, body: &str) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join(name), body).unwrap();
}

fn robots(dir: &Path) {
    write(dir, "default.txt", "User-agent: *\nDisallow: /private/\n");
    write(dir, "all-ok-bots.txt", "User-agent: *\nAllow: /\n");
    write(
        dir,
        "googlebot.txt",
        "User-agent: Googlebot\nAllow: /\n# googlebot's\n",
    );
    write(dir, "suspect-bots.txt", "User-agent: *\nDisallow: /\n");
}

type Running = botscope_testkit::Spawned;

fn start(lists: &Path, robots_dir: &Path, trust: &[&str]) -> Running {
    start_with(lists, robots_dir, trust, None)
}

fn start_with(
    lists: &Path,
    robots_dir: &Path,
    trust: &[&str],
    signatures: Option<botscope_gate::signature::SignatureConfig>,
) -> Running {
    let config = Config {
        lists: Some(lists.to_path_buf()),
        trust_proxy: trust
            .iter()
            .map(|c| IpRange::parse_any(c).unwrap())
            .collect(),
        deny: vec![Category::Suspect],
        poll: Duration::from_millis(50),
        signatures,
        ..Config::new(robots_dir.to_path_buf())
    };
    serve(config)
}

/// Signatures checked against a registry of one bot, `name` of
/// `category`, whose agent is `agent`, its key directory fetched trusting
/// `ca` on loopback, with the gate's default bounds.
fn signatures_trusting(
    ca: &botscope_testkit::ipdb::TestCa,
    agent: &str,
    name: &str,
    category: &str,
) -> botscope_gate::signature::SignatureConfig {
    let registry = botscope_botid::Registry::parse(
        "test.yaml",
        &format!(
            "bots:\n- name: {name}\n  category: {category}\n  ua_tokens: [{name}]\n  signature_agents: ['{agent}']\n"
        ),
    )
    .unwrap();
    botscope_gate::signature::SignatureConfig {
        registry: Arc::new(registry),
        directory: botscope_http::directory::DirectoryConfig {
            trust: botscope_http::Trust {
                extra: botscope_http::certificates(ca.pem.as_bytes()).unwrap(),
                ..botscope_http::Trust::system()
            },
            allow_private: true,
            ..Default::default()
        },
        bounds: botscope_http::keycache::Bounds::default(),
    }
}

/// A gate with `config` on a free loopback port.
fn serve(config: Config) -> Running {
    botscope_testkit::spawn_server(Some(2), move |ready, stop| async move {
        let server = Server::bind(config, "127.0.0.1:0".parse().unwrap())
            .await
            .expect("bind");
        ready.send(server.local_addr());
        server.run(stop).await.unwrap();
    })
}

#[test]
fn each_category_gets_its_file_and_auth_answer() {
    let d = tempfile::tempdir().unwrap();
    let lists = d.path().join("lists");
    write(&lists, "all-ok-bots.txt", "66.249.66.1\n157.55.39.1\n");
    write(&lists, "googlebot.txt", "66.249.66.1\n");
    write(&lists, "other-bots.txt", "203.0.113.5\n");
    write(&lists, "suspect-bots.txt", "192.0.2.66\n2001:db8::66\n");
    let rd = d.path().join("robots");
    robots(&rd);
    let g = start(&lists, &rd, &["127.0.0.0/8"]);
    let cases = [
        (
            "66.249.66.1",
            "googlebot.txt",
            "all-ok-bots",
            "googlebot",
            200,
        ),
        ("157.55.39.1", "all-ok-bots.txt", "all-ok-bots", "", 200),
        ("203.0.113.5", "default.txt", "other-bots", "", 200),
        ("192.0.2.66", "suspect-bots.txt", "suspect-bots", "", 403),
        ("2001:db8::66", "suspect-bots.txt", "suspect-bots", "", 403),
        ("198.18.0.1", "default.txt", "none", "", 200),
    ];
    for (client, file, category, bot, auth) in cases {
        let r = get(g.addr, "/robots.txt", Some(client));
        assert_eq!(r.status, 200, "{client}");
        assert_eq!(r.header("x-robots-file"), Some(file), "{client}");
        assert_eq!(r.header("x-bot-category"), Some(category), "{client}");
        assert_eq!(r.header("cache-control"), Some("private"));
        let expected = std::fs::read_to_string(rd.join(file)).unwrap();
        assert_eq!(r.body, expected, "{client}");
        let a = get(g.addr, "/auth", Some(client));
        assert_eq!(a.status, auth, "{client}");
        assert_eq!(a.header("x-bot-category"), Some(category), "{client}");
        assert_eq!(a.header("x-bot-name"), Some(bot), "{client}");
    }
    // Without a forwarding header the client is the proxy itself.
    assert_eq!(
        get(g.addr, "/auth", None).header("x-bot-category"),
        Some("none")
    );
}

#[test]
fn forwarding_headers_count_only_from_trusted_proxies() {
    let d = tempfile::tempdir().unwrap();
    let lists = d.path().join("lists");
    write(&lists, "suspect-bots.txt", "192.0.2.66\n");
    let rd = d.path().join("robots");
    robots(&rd);
    // 127.0.0.1 is not trusted here: a spoofer cannot launder itself, and
    // cannot frame another address either.
    let g = start(&lists, &rd, &["10.0.0.0/8"]);
    let a = get(g.addr, "/auth", Some("192.0.2.66"));
    assert_eq!(a.status, 200);
    assert_eq!(a.header("x-bot-category"), Some("none"));
}

#[test]
fn lists_reload_on_change_without_a_failed_request_and_a_bad_reload_keeps_the_old() {
    let d = tempfile::tempdir().unwrap();
    let lists = d.path().join("lists");
    write(&lists, "suspect-bots.txt", "192.0.2.66\n");
    let rd = d.path().join("robots");
    robots(&rd);
    let g = start(&lists, &rd, &["127.0.0.0/8"]);
    assert_eq!(get(g.addr, "/auth", Some("192.0.2.66")).status, 403);
    assert_eq!(get(g.addr, "/auth", Some("192.0.2.77")).status, 200);

    // Requests keep coming from four threads while the lists change.
    let done = Arc::new(AtomicBool::new(false));
    let odd = Arc::new(AtomicUsize::new(0));
    let seen = Arc::new(AtomicUsize::new(0));
    let load: Vec<_> = (0..4)
        .map(|_| {
            let (done, odd, seen, addr) = (done.clone(), odd.clone(), seen.clone(), g.addr);
            std::thread::spawn(move || {
                while !done.load(Ordering::Relaxed) {
                    let r = get(addr, "/auth", Some("192.0.2.66"));
                    if !matches!(r.status, 200 | 403) {
                        odd.fetch_add(1, Ordering::Relaxed);
                    }
                    seen.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    let wait_for = |what: &str, f: &dyn Fn() -> bool| {
        let t = Instant::now();
        while !f() {
            assert!(t.elapsed() < Duration::from_secs(10), "{what}");
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    for round in 0..6 {
        // Move 192.0.2.66 between suspect-bots and other-bots, and back.
        let (from, to) = if round % 2 == 0 {
            ("suspect-bots.txt", "other-bots.txt")
        } else {
            ("other-bots.txt", "suspect-bots.txt")
        };
        let tmp = lists.join(".next");
        std::fs::write(&tmp, "192.0.2.66\n").unwrap();
        std::fs::rename(&tmp, lists.join(to)).unwrap();
        std::fs::write(lists.join(from), "").unwrap();
        let want = if to == "other-bots.txt" { 200 } else { 403 };
        wait_for("the change is seen", &|| {
            get(g.addr, "/auth", Some("192.0.2.66")).status == want
        });
    }
    done.store(true, Ordering::Relaxed);
    for t in load {
        t.join().unwrap();
    }
    assert_eq!(odd.load(Ordering::Relaxed), 0);
    assert!(seen.load(Ordering::Relaxed) > 0);

    // Now 192.0.2.66 is suspect. A junk line: the reload fails, the old
    // lists stay, and /healthz says why.
    assert_eq!(get(g.addr, "/auth", Some("192.0.2.66")).status, 403);
    write(
        &lists,
        "other-bots.txt",
        "192.0.2.1\n<script>not an address\n",
    );
    wait_for("the failure is reported", &|| {
        get(g.addr, "/healthz", Some("127.0.0.1"))
            .body
            .contains("other-bots.txt:2")
    });
    assert_eq!(get(g.addr, "/auth", Some("192.0.2.66")).status, 403);
    assert_eq!(
        get(g.addr, "/auth", Some("192.0.2.1")).header("x-bot-category"),
        Some("none")
    );
    // A robots directory without default.txt is refused the same way
    // (the list fixed meanwhile is not taken either: all or nothing).
    write(&lists, "other-bots.txt", "192.0.2.1\n");
    std::fs::remove_file(rd.join("default.txt")).unwrap();
    wait_for("the missing default is reported", &|| {
        get(g.addr, "/healthz", Some("127.0.0.1"))
            .body
            .contains("default.txt is missing")
    });
    assert!(
        get(g.addr, "/robots.txt", Some("198.18.0.1"))
            .body
            .contains("/private/")
    );
    assert_eq!(
        get(g.addr, "/auth", Some("192.0.2.1")).header("x-bot-category"),
        Some("none")
    );
    // Fixed: everything reloads, and the error clears.
    robots(&rd);
    wait_for("the fix is loaded", &|| {
        get(g.addr, "/auth", Some("192.0.2.1")).header("x-bot-category") == Some("other-bots")
    });
    assert!(
        get(g.addr, "/healthz", Some("127.0.0.1"))
            .body
            .contains("\"last_error\":null")
    );
}

#[test]
fn apache_dirs_generations_switch_atomically() {
    let d = tempfile::tempdir().unwrap();
    let gens = d.path().join("crawlers.generations");
    let make = |name: &str, ip: &str, list: &str| {
        let g = gens.join(name);
        std::fs::create_dir_all(g.join(list)).unwrap();
        for c in [
            "all-ok-bots",
            "other-bots",
            "undeclared-bots",
            "suspect-bots",
        ] {
            std::fs::create_dir_all(g.join(c)).unwrap();
        }
        std::fs::write(g.join(list).join(ip), b"").unwrap();
    };
    make("1-1", "66.249.66.1", "googlebot");
    std::fs::write(gens.join("1-1/all-ok-bots/66.249.66.1"), b"").unwrap();
    let link = d.path().join("crawlers");
    std::os::unix::fs::symlink("crawlers.generations/1-1", &link).unwrap();
    let rd = d.path().join("robots");
    robots(&rd);
    let g = start(&link, &rd, &["127.0.0.1/32"]);
    let r = get(g.addr, "/robots.txt", Some("66.249.66.1"));
    assert_eq!(r.header("x-robots-file"), Some("googlebot.txt"));
    // A new generation where the address is a spoofer, swapped in by
    // one rename of the link, as `bots export` does.
    make("2-1", "66.249.66.1", "suspect-bots");
    let tmp = d.path().join("crawlers.link");
    std::os::unix::fs::symlink("crawlers.generations/2-1", &tmp).unwrap();
    std::fs::rename(&tmp, &link).unwrap();
    let t = Instant::now();
    while get(g.addr, "/auth", Some("66.249.66.1")).status != 403 {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "the new generation is seen"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let r = get(g.addr, "/robots.txt", Some("66.249.66.1"));
    assert_eq!(r.header("x-robots-file"), Some("suspect-bots.txt"));
}

/// The nginx configuration of docs/web-server-lists.md, as written there,
/// in front of the gate: a verified Googlebot, a spoofer and an unknown
/// client (each from its own loopback address) get their robots.txt and
/// their answer through nginx.
#[test]
fn nginx_with_the_documented_configuration() {
    use std::os::unix::fs::PermissionsExt;
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/web-server-lists.md"),
    )
    .unwrap();
    let section = &doc[doc.find("## The gate").expect("the gate's section")..];
    let at = section.find("```nginx\n").expect("its nginx block") + "```nginx\n".len();
    let block = &section[at..at + section[at..].find("```").unwrap()];

    let d = tempfile::tempdir().unwrap();
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let lists = d.path().join("lists");
    write(&lists, "all-ok-bots.txt", "127.0.0.2\n");
    write(&lists, "googlebot.txt", "127.0.0.2\n");
    write(&lists, "suspect-bots.txt", "127.0.0.3\n");
    let rd = d.path().join("robots");
    robots(&rd);
    // A signed agent: its key directory on HTTPS (loopback, a test CA),
    // named by a registry entry.
    let ca = botscope_testkit::ipdb::TestCa::new();
    let key = botscope_httpsig::SigningKey::generate().unwrap();
    let keys_server = botscope_testkit::ipdb::FileServer::start_tls_canned(Default::default(), &ca);
    let agent = keys_server.url();
    let now = i64::try_from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs(),
    )
    .unwrap();
    let body = botscope_httpsig::Directory {
        keys: vec![(key.keyid(), key.public())],
        ..botscope_httpsig::Directory::default()
    }
    .to_json();
    keys_server.set(
        "/.well-known/http-message-signatures-directory",
        botscope_testkit::ipdb::Canned::ok(
            &[(
                "Content-Type",
                "application/http-message-signatures-directory+json",
            )],
            body.as_bytes(),
        ),
    );
    let signatures = signatures_trusting(&ca, &agent, "SignedBot", "ai-assistant");
    let g = start_with(&lists, &rd, &["127.0.0.1/32"], Some(signatures));
    let www = d.path().join("www");
    write(&www, "index.html", "the site\n");
    for p in [&www, &www.join("index.html")] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let nginx = Nginx::start(block, g.addr, &www);
    let from_with = |from: &str, path: &str, more: &str| nginx.get(from, path, more);
    let from = |addr: &str, path: &str| from_with(addr, path, "");
    let file = |name: &str| std::fs::read_to_string(rd.join(name)).unwrap();
    // Verified Googlebot.
    let r = from("127.0.0.2", "/robots.txt");
    assert_eq!(
        (r.status, r.body.as_str()),
        (200, file("googlebot.txt").as_str())
    );
    let r = from("127.0.0.2", "/");
    assert_eq!((r.status, r.body.as_str()), (200, "the site\n"));
    assert_eq!(r.header("x-bot-category"), Some("all-ok-bots"));
    assert_eq!(r.header("x-bot-name"), Some("googlebot"));
    // A spoofer: its own file, and nothing else.
    let r = from("127.0.0.3", "/robots.txt");
    assert_eq!(
        (r.status, r.body.as_str()),
        (200, file("suspect-bots.txt").as_str())
    );
    assert_eq!(from("127.0.0.3", "/").status, 403);
    // Anyone else.
    let r = from("127.0.0.4", "/robots.txt");
    assert_eq!(
        (r.status, r.body.as_str()),
        (200, file("default.txt").as_str())
    );
    let r = from("127.0.0.4", "/");
    assert_eq!(r.status, 200);
    assert_eq!(r.header("x-bot-category"), Some("none"));
    assert_eq!(r.header("x-bot-signature"), Some("unverified"));

    // A signed crawler, from an address no list names: its first request
    // is unverified while the gate fetches its directory, then verified.
    let signed = |host: &str, nonce: &str| -> String {
        let req = botscope_httpsig::Request::new("GET", "http", host, "/", vec![]);
        let spec =
            botscope_httpsig::SignSpec::new(Some(&agent), now - 2, 300, Some(nonce.to_owned()));
        let s = botscope_httpsig::sign_request(&req, &key, &spec).unwrap();
        s.headers()
            .iter()
            .map(|(n, v)| format!("{n}: {v}\r\n"))
            .collect()
    };
    let mut verified = None;
    for i in 0..200 {
        let r = from_with("127.0.0.5", "/", &signed("site", &format!("n{i}")));
        assert_eq!(r.status, 200);
        if r.header("x-bot-signature") == Some("verified") {
            verified = Some(r);
            break;
        }
        assert_eq!(
            r.header("x-bot-signature"),
            Some("unverified"),
            "{:?}",
            r.header("x-bot-signature-reason")
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let r = verified.expect("verified once the directory is in");
    assert_eq!(r.header("x-signature-agent"), Some(agent.as_str()));
    assert_eq!(r.header("x-bot-category"), Some("all-ok-bots"));
    assert_eq!(r.header("x-bot-name"), Some("signedbot"));
    // nginx asks twice about `/` (again after the internal redirect to
    // index.html): one request, not a replay. The same signed fields sent
    // again from another address are a replay.
    let again = signed("site", "replayed");
    assert_eq!(
        from_with("127.0.0.5", "/", &again).header("x-bot-signature"),
        Some("verified")
    );
    let r = from_with("127.0.0.6", "/", &again);
    assert_eq!(r.header("x-bot-signature"), Some("invalid"));
    assert_eq!(r.header("x-bot-category"), Some("none"));
    // Signed for another site: invalid.
    let r = from_with("127.0.0.5", "/", &signed("elsewhere", "n-other"));
    assert_eq!(r.header("x-bot-signature"), Some("invalid"));
}

const GOOGLEBOT: &str = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";

/// A request as nginx's documented configuration sends it: the client's
/// address in `X-Real-IP`, the original request in `X-Original-URI` and
/// `X-Original-Method` (or Caddy's `X-Forwarded-Uri`).
fn ask(addr: SocketAddr, endpoint: &str, client: &str, ua: &str, uri: &str) -> Res {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let original = if endpoint == "/forward-auth" {
        format!("X-Forwarded-Method: GET\r\nX-Forwarded-Uri: {uri}\r\n")
    } else {
        format!("X-Original-Method: GET\r\nX-Original-URI: {uri}\r\n")
    };
    write!(
        s,
        "GET {endpoint} HTTP/1.1\r\nHost: gate\r\nX-Real-IP: {client}\r\nUser-Agent: {ua}\r\n{original}Connection: close\r\n\r\n"
    )
    .unwrap();
    read_response(s, endpoint)
}

fn h<'r>(r: &'r Res, name: &str) -> &'r str {
    r.header(name).unwrap_or("")
}

/// The gate judges each request's claim as `verify` does, without
/// waiting: published ranges at once; reverse DNS (a real dnsmasq) in the
/// background, `unverifiable` until it answers, then verified or
/// spoofed; and the balanced preset decides on it, on robots.txt and on
/// rates, saying which rule decided.
#[test]
fn identity_at_request_time_and_the_balanced_policy() {
    let server = botscope_testkit::Dnsmasq::start(&[
        "--local=/googlebot.com/",
        "--local=/100.51.198.in-addr.arpa/",
        "--local=/113.0.203.in-addr.arpa/",
        "--host-record=googlebot.com,192.0.2.200",
        "--host-record=crawl-198-51-100-10.googlebot.com,198.51.100.10",
    ]);
    let d = tempfile::tempdir().unwrap();
    let rd = d.path().join("robots");
    robots(&rd);
    // The site's own robots.txt closes /cart/ to everyone.
    write(&rd, "default.txt", "User-agent: *\nDisallow: /cart/\n");
    let policy = d.path().join("policy.yaml");
    std::fs::write(&policy, botscope_policy::preset("balanced").unwrap()).unwrap();
    let config = Config {
        trust_proxy: vec![IpRange::parse_any("127.0.0.1/32").unwrap()],
        poll: Duration::from_millis(50),
        identity: Some(dns_identity(&server)),
        policy: Some(policy),
        ..Config::new(rd.clone())
    };
    let g = serve(config);

    // A real Googlebot from Google's published ranges: verified at once,
    // its name given, its own robots.txt served (no list needed).
    let r = ask(g.addr, "/auth", "66.249.66.200", GOOGLEBOT, "/products");
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(h(&r, "x-bot-identity"), "verified");
    assert_eq!(h(&r, "x-bot-name"), "googlebot");
    assert_eq!(h(&r, "x-bot-category"), "all-ok-bots");
    assert_eq!(h(&r, "x-bot-decision"), "allow");
    assert_eq!(h(&r, "x-bot-rule"), "verified-crawlers");
    let r = ask(
        g.addr,
        "/robots.txt",
        "66.249.66.200",
        GOOGLEBOT,
        "/robots.txt",
    );
    assert_eq!(h(&r, "x-robots-file"), "googlebot.txt", "{r:?}");

    // Googlebot from outside the ranges: unverifiable while reverse DNS
    // is asked (allowed, never refused for it), then verified.
    let first = ask(g.addr, "/auth", "198.51.100.10", GOOGLEBOT, "/a");
    assert_eq!(h(&first, "x-bot-identity"), "unverifiable", "{first:?}");
    assert_eq!(first.status, 200);
    // A fake from an address no log has seen: unverifiable, then spoofed
    // on the resolver's evidence (no PTR record, in a zone it answers
    // for), then refused.
    let fake = ask(g.addr, "/auth", "203.0.113.9", GOOGLEBOT, "/a");
    assert_eq!(h(&fake, "x-bot-identity"), "unverifiable", "{fake:?}");
    let t = Instant::now();
    let (mut real, mut fake) = (first, fake);
    while h(&real, "x-bot-identity") == "unverifiable"
        || h(&fake, "x-bot-identity") == "unverifiable"
    {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "reverse DNS answers: {real:?} {fake:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
        real = ask(g.addr, "/auth", "198.51.100.10", GOOGLEBOT, "/a");
        fake = ask(g.addr, "/auth", "203.0.113.9", GOOGLEBOT, "/a");
    }
    assert_eq!(h(&real, "x-bot-identity"), "verified", "{real:?}");
    assert_eq!(
        (real.status, h(&real, "x-bot-rule")),
        (200, "verified-crawlers")
    );
    assert_eq!(h(&fake, "x-bot-identity"), "spoofed", "{fake:?}");
    assert_eq!(fake.status, 403);
    assert_eq!(h(&fake, "x-bot-decision"), "deny");
    assert_eq!(h(&fake, "x-bot-rule"), "fake-crawlers");
    assert_eq!(h(&fake, "x-bot-category"), "suspect-bots");
    // Even a fake reads robots.txt.
    let r = ask(g.addr, "/auth", "203.0.113.9", GOOGLEBOT, "/robots.txt");
    assert_eq!((r.status, h(&r, "x-bot-rule")), (200, "protocol-files"));

    // A robot no registry names: its own category; robots.txt closes
    // /cart/ to it, so the gate refuses /cart/ and serves the rest.
    let py = "python-requests/2.31.0";
    let r = ask(g.addr, "/auth", "192.0.2.50", py, "/cart/1?x=2");
    assert_eq!(
        (r.status, h(&r, "x-bot-rule")),
        (403, "robots-txt-breakers"),
        "{r:?}"
    );
    assert_eq!(h(&r, "x-bot-identity"), "unclaimed");
    assert_eq!(h(&r, "x-bot-category"), "other-bots");
    let r = ask(g.addr, "/forward-auth", "192.0.2.50", py, "/cart/2");
    assert_eq!(
        (r.status, h(&r, "x-bot-rule")),
        (403, "robots-txt-breakers"),
        "{r:?}"
    );
    assert!(r.body.contains("Access refused"), "{}", r.body);
    // … and at a person's pace: a burst of 60, then one a second.
    let answers: Vec<Res> = (0..62)
        .map(|i| ask(g.addr, "/auth", "192.0.2.51", py, &format!("/item/{i}")))
        .collect();
    assert!(
        answers[..60].iter().all(|r| r.status == 200),
        "{:?}",
        answers[59]
    );
    let limited = &answers[61];
    assert_eq!(limited.status, 403, "{limited:?}");
    assert_eq!(h(limited, "x-bot-decision"), "limit");
    assert_eq!(h(limited, "x-bot-rule"), "unregistered-robots-too-fast");
    assert_eq!(h(limited, "retry-after"), "1");
    // Caddy's forward_auth passes the gate's own status on: 429.
    let r = ask(g.addr, "/forward-auth", "192.0.2.51", py, "/item/x");
    assert_eq!((r.status, h(&r, "retry-after")), (429, "1"), "{r:?}");

    // A person's browser: unclaimed, allowed by default.
    let r = ask(
        g.addr,
        "/auth",
        "192.0.2.60",
        "Mozilla/5.0 (X11; Linux x86_64) Firefox/130.0",
        "/cart/1",
    );
    assert_eq!(
        (r.status, h(&r, "x-bot-rule"), h(&r, "x-bot-identity")),
        (200, "default", "unclaimed")
    );

    let health: serde_json::Value =
        serde_json::from_str(&get(g.addr, "/healthz", Some("127.0.0.1")).body).unwrap();
    assert_eq!(health["policy"]["rules"], 13, "{health}");
    // Times as RFC 3339, as everywhere the gate shows one.
    assert!(
        health["loaded"]
            .as_str()
            .is_some_and(|t| t.ends_with('Z') && t.parse::<jiff::Timestamp>().is_ok()),
        "{health}"
    );
    assert!(
        health["identities"]["lookups_answered"].as_u64().unwrap() >= 2,
        "{health}"
    );
}

/// Found by a probe: a PTR answered with TTL 0 (dnsmasq's default; any
/// zone its owner controls) kept a fake Googlebot `unverifiable`, and
/// allowed, for ever, one lookup per request. An answer now decides the
/// identity that waited for it and holds for a minute at least.
#[test]
fn an_answer_with_ttl_0_decides_and_is_kept() {
    let server = botscope_testkit::Dnsmasq::start_with_ttl(
        0,
        &[
            "--local=/googlebot.com/",
            "--local=/113.0.203.in-addr.arpa/",
            "--host-record=googlebot.com,192.0.2.200",
            "--ptr-record=9.113.0.203.in-addr.arpa,crawl.fake.example",
        ],
    );
    let d = tempfile::tempdir().unwrap();
    let rd = d.path().join("robots");
    robots(&rd);
    let policy = d.path().join("policy.yaml");
    std::fs::write(&policy, botscope_policy::preset("balanced").unwrap()).unwrap();
    let g = serve(Config {
        trust_proxy: vec![IpRange::parse_any("127.0.0.1/32").unwrap()],
        identity: Some(dns_identity(&server)),
        policy: Some(policy),
        ..Config::new(rd)
    });
    let t = Instant::now();
    let mut r = ask(g.addr, "/auth", "203.0.113.9", GOOGLEBOT, "/a");
    while h(&r, "x-bot-identity") == "unverifiable" {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "the answer decides: {r:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
        r = ask(g.addr, "/auth", "203.0.113.9", GOOGLEBOT, "/a");
    }
    assert_eq!(h(&r, "x-bot-identity"), "spoofed", "{r:?}");
    // Twenty more requests: refused on the answer held, no new lookup.
    let health = || -> serde_json::Value {
        serde_json::from_str(&get(g.addr, "/healthz", Some("127.0.0.1")).body).unwrap()
    };
    let started = health()["identities"]["lookups_started"].as_u64().unwrap();
    for _ in 0..20 {
        let r = ask(g.addr, "/auth", "203.0.113.9", GOOGLEBOT, "/b");
        assert_eq!(
            (r.status, h(&r, "x-bot-identity"), h(&r, "x-bot-rule")),
            (403, "spoofed", "fake-crawlers"),
            "{r:?}"
        );
    }
    assert_eq!(
        health()["identities"]["lookups_started"].as_u64().unwrap(),
        started,
        "no lookup per request"
    );
}

/// Found by a probe: 24,000 idle connections exhausted the gate's
/// descriptors and `/auth` stopped answering. Connections are now
/// bounded in all and per client, and an idle one is closed after the
/// header timeout.
#[test]
fn idle_connections_cannot_lock_the_gate() {
    let d = tempfile::tempdir().unwrap();
    let rd = d.path().join("robots");
    robots(&rd);
    let config = Config {
        connections: botscope_http::server::ConnectionLimits {
            connections: 64,
            per_client: 8,
            header_timeout: Duration::from_millis(500),
            ..Default::default()
        },
        ..Config::new(rd)
    };
    let g = serve(config);
    // One client opens 200 connections and sends nothing.
    let idle: Vec<TcpStream> = (0..200)
        .map(|_| TcpStream::connect(g.addr).unwrap())
        .collect();
    // Another client (another loopback address) is still answered.
    let from = |ip: [u8; 4]| {
        let s = socket2_connect(ip, g.addr);
        let mut s = s;
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        write!(
            s,
            "GET /auth HTTP/1.1\r\nHost: gate\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        read_response(s, "/auth")
    };
    assert_eq!(from([127, 0, 0, 2]).status, 200);
    let closed = |idle: &mut [TcpStream]| -> usize {
        let mut n = 0;
        for s in idle.iter_mut() {
            s.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
            if matches!(std::io::Read::read(s, &mut [0u8; 16]), Ok(0)) {
                n += 1;
            }
        }
        n
    };
    let mut idle = idle;
    // Past its 8, the client's connections were closed at once …
    assert_eq!(closed(&mut idle), 192);
    // … and the 8 after the header timeout.
    std::thread::sleep(Duration::from_millis(1_500));
    assert_eq!(closed(&mut idle), 200);
    assert_eq!(from([127, 0, 0, 1]).status, 200);
}

/// Found by a probe: 8,000 idle connections from 250 addresses filled the
/// gate's pool, and nginx, its trusted front, could no longer connect (500
/// for every page). The trusted proxies now have a pool of their own, a
/// stranger's first request has a short deadline, and a full pool closes
/// its longest-idle stranger to let a new one in.
#[test]
fn strangers_cannot_keep_the_front_server_out() {
    let d = tempfile::tempdir().unwrap();
    let rd = d.path().join("robots");
    robots(&rd);
    let g = serve(Config {
        trust_proxy: vec![IpRange::parse_any("127.0.0.1/32").unwrap()],
        connections: botscope_http::server::ConnectionLimits {
            connections: 64,
            per_client: 8,
            header_timeout: Duration::from_secs(60),
            first_request: Duration::from_millis(800),
            ..Default::default()
        },
        ..Config::new(rd)
    });
    let ask = |from: [u8; 4]| {
        let mut s = socket2_connect(from, g.addr);
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        write!(
            s,
            "GET /auth HTTP/1.1\r\nHost: gate\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        read_response(s, "/auth")
    };
    // Thirty strangers, eight idle connections each: past the pool.
    let idle: Vec<TcpStream> = (0..30u8)
        .flat_map(|i| (0..8).map(move |_| socket2_connect([127, 0, 3, i + 1], g.addr)))
        .collect();
    std::thread::sleep(Duration::from_millis(100));
    // The trusted front is answered, over as many connections as it needs …
    let front: Vec<TcpStream> = (0..40)
        .map(|_| socket2_connect([127, 0, 0, 1], g.addr))
        .collect();
    assert_eq!(ask([127, 0, 0, 1]).status, 200);
    // … and so is a new stranger, for whom an idle one made room.
    assert_eq!(ask([127, 0, 4, 1]).status, 200);
    // Strangers idle past the first request's deadline are closed; the
    // front's idle connections are not.
    std::thread::sleep(Duration::from_millis(1_500));
    let closed = |conns: &[TcpStream]| {
        conns
            .iter()
            .filter(|s| {
                let mut s = *s;
                s.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
                match std::io::Read::read(&mut s, &mut [0u8; 16]) {
                    Ok(n) => n == 0,
                    Err(e) => !matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ),
                }
            })
            .count()
    };
    assert_eq!(closed(&idle), idle.len());
    assert_eq!(closed(&front), 0);
}

/// A TCP connection to `to` from the loopback address `ip`.
fn socket2_connect(ip: [u8; 4], to: SocketAddr) -> TcpStream {
    botscope_testkit::connect_from(ip, to)
}

/// Every decision that is not `allow` is one JSON line of the decision log
/// (rotated past its size), and `/metrics` counts decisions by rule and
/// action in Prometheus's format.
#[test]
fn the_decision_log_and_the_metrics() {
    let d = tempfile::tempdir().unwrap();
    let rd = d.path().join("robots");
    robots(&rd);
    let policy = d.path().join("policy.yaml");
    std::fs::write(&policy, botscope_policy::preset("balanced").unwrap()).unwrap();
    let log = d.path().join("decisions.jsonl");
    let config = Config {
        trust_proxy: vec![IpRange::parse_any("127.0.0.1/32").unwrap()],
        identity: Some(offline()),
        policy: Some(policy),
        decision_log: Some(botscope_gate::decisions::DecisionLogConfig {
            path: log.clone(),
            all: false,
            max_bytes: 10_240,
        }),
        ..Config::new(rd)
    };
    let g = serve(config);
    let py = "python-requests/2.31.0";
    for i in 0..40 {
        let r = ask(g.addr, "/auth", "192.0.2.50", py, &format!("/private/{i}"));
        assert_eq!(r.status, 403);
    }
    // Allowed requests are not logged.
    let r = ask(g.addr, "/auth", "66.249.66.1", GOOGLEBOT, "/a");
    assert_eq!(r.status, 200);
    let rotated = d.path().join("decisions.jsonl.1");
    let t = Instant::now();
    let lines = || {
        let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
        format!("{}{}", read(&rotated), read(&log))
    };
    while lines().lines().count() < 40 {
        assert!(t.elapsed() < Duration::from_secs(10), "{}", lines());
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(rotated.exists(), "rotated past 10 KiB");
    assert!(std::fs::metadata(&log).unwrap().len() <= 10_240);
    let all = lines();
    assert_eq!(all.lines().count(), 40, "{all}");
    let first: serde_json::Value = serde_json::from_str(all.lines().next().unwrap()).unwrap();
    assert_eq!(first["client"], "192.0.2.50");
    assert_eq!(first["user_agent"], py);
    assert_eq!(first["path"], "/private/0");
    assert_eq!(first["identity"], "unclaimed");
    assert_eq!(first["rule"], "robots-txt-breakers");
    assert_eq!(first["action"], "deny");
    assert!(first["time"].as_str().unwrap().ends_with('Z'), "{first}");

    let m = get(g.addr, "/metrics", Some("127.0.0.1"));
    assert_eq!(m.status, 200);
    assert!(
        m.body.contains(
            "botscope_gate_decisions_total{rule=\"robots-txt-breakers\",action=\"deny\"} 40"
        ),
        "{}",
        m.body
    );
    assert!(
        m.body.contains(
            "botscope_gate_decisions_total{rule=\"verified-crawlers\",action=\"allow\"} 1"
        ),
        "{}",
        m.body
    );
    assert!(
        m.body.contains("botscope_gate_decision_seconds_count 41"),
        "{}",
        m.body
    );
    assert!(
        m.body
            .contains("botscope_gate_decision_log_lines_total{fate=\"dropped\"} 0"),
        "{}",
        m.body
    );
}

/// Replay and the gate call one decision function: the same requests,
/// sent to a running gate and replayed from a log of them, get the same
/// rule and action, one by one.
#[test]
fn replay_decides_as_the_gate_does() {
    let d = tempfile::tempdir().unwrap();
    let rd = d.path().join("robots");
    std::fs::create_dir_all(&rd).unwrap();
    let site_robots = "User-agent: *\nDisallow: /cart/\n\nUser-agent: GPTBot\nDisallow: /\n";
    write(&rd, "default.txt", site_robots);
    let lists = d.path().join("lists");
    write(&lists, "suspect-bots.txt", "203.0.113.66\n");
    write(&lists, "undeclared-bots.txt", "198.51.100.77\n");
    // The balanced preset without its rates (the gate counts them in its
    // own time, a replay in the log's), and a label.
    let text: String = botscope_policy::preset("balanced")
        .unwrap()
        .replace("rate: 60/min per ip", "method: [POST]")
        .replace("rate: 600/min per ip", "path: /slow/")
        .replace("rate: 3000/min per network", "method: [DELETE]")
        .replace(
            "rules:\n",
            "rules:\n  - name: tag-api\n    path: /api/\n    action: label\n    headers: {X-Api: '1'}\n",
        );
    let policy = d.path().join("policy.yaml");
    std::fs::write(&policy, &text).unwrap();
    let identity = || botscope_gate::identity::IdentityConfig {
        registry: Arc::new(botscope_botid::Registry::bundled()),
        owners: Arc::new(botscope_botid::NoOwners),
        dns: None,
        cache: 1_000,
    };
    let config = Config {
        lists: Some(lists.clone()),
        trust_proxy: vec![IpRange::parse_any("127.0.0.1/32").unwrap()],
        identity: Some(identity()),
        policy: Some(policy.clone()),
        ..Config::new(rd.clone())
    };
    let g = serve(config);
    let gpt = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)";
    let firefox = "Mozilla/5.0 (X11; Linux x86_64; rv:130.0) Gecko/20100101 Firefox/130.0";
    let requests = [
        ("66.249.66.1", GOOGLEBOT, "/a"),
        ("66.249.66.1", GOOGLEBOT, "/cart/1"),
        ("203.0.113.9", GOOGLEBOT, "/a"),
        ("203.0.113.66", firefox, "/a"),
        ("198.51.100.77", firefox, "/a"),
        ("198.51.100.78", firefox, "/slow/x"),
        ("192.0.2.50", "python-requests/2.31.0", "/cart/2"),
        ("192.0.2.50", "python-requests/2.31.0", "/api/items"),
        ("192.0.2.51", "curl/8.5.0", "/robots.txt"),
        ("192.0.2.52", gpt, "/page"),
        ("192.0.2.53", firefox, "/feed"),
        ("192.0.2.53", firefox, "/api/x"),
    ];
    let mut log = String::new();
    let mut from_gate = Vec::new();
    for (ip, ua, path) in requests {
        let r = ask(g.addr, "/auth", ip, ua, path);
        from_gate.push((
            h(&r, "x-bot-rule").to_owned(),
            h(&r, "x-bot-decision").to_owned(),
        ));
        log.push_str(&format!(
            "{ip} - - [27/Nov/2026:10:00:00 +0000] \"GET {path} HTTP/1.1\" 200 10 \"-\" \"{ua}\"\n"
        ));
    }
    let parsed = botscope_policy::parse("policy.yaml", &text, &botscope_botid::Registry::bundled());
    let cfg = botscope_gate::replay::ReplayConfig {
        policy: Arc::new(parsed.policy.unwrap()),
        identity: identity(),
        robots: Some(site_robots.as_bytes().to_vec()),
        lists: Some(botscope_gate::read(&lists).unwrap()),
        format: None,
        evidence: None,
        trap_key: None,
    };
    let mut replayed = Vec::new();
    let input: Box<dyn std::io::BufRead> = Box::new(log.as_bytes());
    let r = botscope_gate::replay::replay_with(cfg, vec![("log".into(), input)], &mut |d| {
        replayed.push((d.rule.to_owned(), d.action.as_str().to_owned()));
    })
    .unwrap();
    assert_eq!(replayed, from_gate);
    // The cases reach the rules they were written for.
    let rules: Vec<&str> = replayed.iter().map(|(r, _)| r.as_str()).collect();
    for want in [
        "verified-crawlers",
        "robots-txt-breakers",
        "known-spoofers-and-scanners",
        "browsers-your-logs-caught-crawling",
        "browsers-too-fast",
        "protocol-files",
        "feeds",
        "default",
    ] {
        assert!(rules.contains(&want), "{want}: {rules:?}");
    }
    assert_eq!(r.lines, 12);
    let labelled = r.rules.iter().find(|t| t.rule == "tag-api").unwrap();
    assert_eq!(labelled.requests, 2);
    let html = botscope_gate::replay::html(&r);
    assert!(html.contains("<caption>Requests by rule"), "{html}");
}

/// One GET through the gate with extra header lines.
fn get_with(addr: SocketAddr, target: &str, client: &str, ua: &str, extra: &str) -> Res {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "GET {target} HTTP/1.1\r\nHost: gate\r\nX-Real-IP: {client}\r\nUser-Agent: {ua}\r\n{extra}Connection: close\r\n\r\n"
    )
    .unwrap();
    read_response(s, target)
}

/// The challenge's round trip: a browser fetching like a scraper gets
/// the page (no `noindex`, its way on without JavaScript after the wait,
/// or at once with the proof of work); the pass it earns lets it through
/// where the policy would challenge it, on its network and User-Agent only.
#[test]
fn a_challenge_is_passed_with_or_without_javascript() {
    let d = tempfile::tempdir().unwrap();
    let rd = d.path().join("robots");
    robots(&rd);
    let policy = d.path().join("policy.yaml");
    std::fs::write(
        &policy,
        "default: allow\nrules:\n  - name: fast-browsers\n    category: browser\n    rate: 2/min per ip\n    action: challenge\n",
    )
    .unwrap();
    let config = Config {
        trust_proxy: vec![IpRange::parse_any("127.0.0.1/32").unwrap()],
        identity: Some(offline()),
        policy: Some(policy),
        challenge: Some(botscope_gate::challenge::ChallengeConfig {
            delay: Duration::from_secs(1),
            difficulty: 8,
            ..botscope_gate::challenge::ChallengeConfig::new(vec![42; 32])
        }),
        ..Config::new(rd)
    };
    let g = serve(config);
    let firefox = "Mozilla/5.0 (X11; Linux x86_64; rv:130.0) Gecko/20100101 Firefox/130.0";
    let fa = |client: &str, ua: &str, extra: &str| {
        get_with(
            g.addr,
            "/forward-auth",
            client,
            ua,
            &format!("X-Forwarded-Uri: /shop?page=3\r\n{extra}"),
        )
    };
    assert_eq!(fa("192.0.2.7", firefox, "").status, 200);
    assert_eq!(fa("192.0.2.7", firefox, "").status, 200);
    let page = fa("192.0.2.7", firefox, "");
    assert_eq!(page.status, 401, "{page:?}");
    assert_eq!(h(&page, "x-bot-decision"), "challenge");
    assert!(
        page.body.contains("Checking your browser") && page.body.contains("<main>"),
        "{}",
        page.body
    );
    assert!(!page.body.to_lowercase().contains("noindex"));
    // nginx's auth_request gets a 401 too.
    let r = ask(g.addr, "/auth", "192.0.2.7", firefox, "/shop");
    assert_eq!((r.status, h(&r, "x-bot-decision")), (401, "challenge"));
    // The way on: the pass link of the page.
    let at = page
        .body
        .find("href=\"/.botscope/pass?")
        .expect("the link on")
        + "href=\"".len();
    let link = page.body[at..at + page.body[at..].find('"').unwrap()].replace("&amp;", "&");
    // Too early: the page again, saying so.
    let early = get_with(g.addr, &link, "192.0.2.7", firefox, "");
    assert_eq!(early.status, 401);
    assert!(
        early
            .body
            .contains("the wait is not over yet: 1 second left"),
        "{}",
        early.body
    );
    std::thread::sleep(Duration::from_millis(1_100));
    // From another network the token is not this client's.
    let moved = get_with(g.addr, &link, "198.51.100.7", firefox, "");
    assert!(
        moved.body.contains("another connection or browser"),
        "{}",
        moved.body
    );
    let ok = get_with(g.addr, &link, "192.0.2.7", firefox, "");
    assert_eq!(ok.status, 303, "{ok:?}");
    assert_eq!(h(&ok, "location"), "/shop?page=3");
    let cookie = h(&ok, "set-cookie");
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Lax"),
        "{cookie}"
    );
    let pass = cookie.split(';').next().unwrap().to_owned();
    // The pass lets it through where it was challenged, from its network …
    let r = fa("192.0.2.7", firefox, &format!("Cookie: {pass}\r\n"));
    assert_eq!(
        (r.status, h(&r, "x-bot-challenge")),
        (200, "passed"),
        "{r:?}"
    );
    for _ in 0..2 {
        let _ = fa("192.0.2.8", firefox, "");
    }
    let r = fa("192.0.2.8", firefox, &format!("Cookie: {pass}\r\n"));
    assert_eq!(
        (r.status, h(&r, "x-bot-challenge")),
        (200, "passed"),
        "{r:?}"
    );
    // … but not from another network, another browser, or forged.
    for (client, ua, cookie) in [
        ("198.51.100.7", firefox, pass.clone()),
        ("192.0.2.7", "Mozilla/5.0 Chrome/131.0", pass.clone()),
        ("192.0.2.7", firefox, pass.replace('.', ".0")),
        (
            "192.0.2.7",
            firefox,
            "botscope_pass=99999999999.00000000000000000000000000000000".to_owned(),
        ),
    ] {
        for _ in 0..3 {
            let _ = fa(client, ua, "");
        }
        let r = fa(client, ua, &format!("Cookie: {cookie}\r\n"));
        assert_eq!(r.status, 401, "{client} {ua} {cookie}: {r:?}");
    }
    // The proof of work passes at once.
    let token_at = link.find("t=").unwrap() + 2;
    let token = &link[token_at..token_at + link[token_at..].find('&').unwrap()];
    let seed = token
        .split("%2E")
        .nth(1)
        .or_else(|| token.split('.').nth(1))
        .unwrap();
    let fresh = fa("192.0.2.9", firefox, "");
    let fresh = if fresh.status == 200 {
        fa("192.0.2.9", firefox, "")
    } else {
        fresh
    };
    let fresh = if fresh.status == 200 {
        fa("192.0.2.9", firefox, "")
    } else {
        fresh
    };
    assert_eq!(fresh.status, 401);
    let at = fresh.body.find("var seed='").unwrap() + "var seed='".len();
    let seed9 = &fresh.body[at..at + fresh.body[at..].find('\'').unwrap()];
    assert_ne!(seed9, seed, "each client its own seed");
    let n = (0u64..)
        .find(|n| {
            let d = ring_digest(&format!("{seed9}:{n}"));
            d[0] == 0
        })
        .unwrap();
    let at = fresh.body.find("href=\"/.botscope/pass?").unwrap() + "href=\"".len();
    let link9 = fresh.body[at..at + fresh.body[at..].find('"').unwrap()].replace("&amp;", "&");
    let ok = get_with(g.addr, &format!("{link9}&n={n}"), "192.0.2.9", firefox, "");
    assert_eq!(ok.status, 303, "{ok:?}");
}

fn ring_digest(s: &str) -> Vec<u8> {
    use sha2::Digest;
    sha2::Sha256::digest(s.as_bytes()).to_vec()
}

/// Debian's nginx with a documented `server` block (its placeholders put
/// right: the gate's address, a free port, the site's root), stopped by
/// its PID when dropped.
struct Nginx(botscope_testkit::load::Nginx);

impl Nginx {
    fn start(block: &str, gate: SocketAddr, www: &Path) -> Nginx {
        Nginx(
            botscope_testkit::load::Nginx::front(block, gate, www, "").expect(
                "nginx starts with the documented block (the test command in README installs nginx)",
            ),
        )
    }

    /// A request from `from` (a loopback address of its own), with more
    /// header lines.
    fn get(&self, from: &str, path: &str, more: &str) -> Res {
        let ip: std::net::Ipv4Addr = from.parse().unwrap();
        let mut s = socket2_connect(ip.octets(), self.0.addr);
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        write!(
            s,
            "GET {path} HTTP/1.1\r\nHost: site\r\n{more}Connection: close\r\n\r\n"
        )
        .unwrap();
        read_response(s, path)
    }
}

/// The documented nginx configuration of docs/gate.md in front of the
/// gate with a policy: allow, the refusal page, a 429 with Retry-After,
/// and the challenge's round trip with its pass.
#[test]
fn nginx_with_the_policy_configuration_of_the_gate_guide() {
    use std::os::unix::fs::PermissionsExt;
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/gate.md"))
            .unwrap();
    let at = doc.find("```nginx\n").expect("its nginx block") + "```nginx\n".len();
    let block = &doc[at..at + doc[at..].find("```").unwrap()];
    let d = tempfile::tempdir().unwrap();
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let g = policy_gate(d.path(), GUIDE_POLICY);
    let www = d.path().join("www");
    write(&www, "index.html", "the site\n");
    write(&www, "shop.html", "the shop\n");
    write(&www.join("private"), "x", "the secret\n");
    for p in [
        &www,
        &www.join("index.html"),
        &www.join("shop.html"),
        &www.join("private"),
        &www.join("private/x"),
    ] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let nginx = Nginx::start(block, g.addr, &www);
    no_way_around(|from, path, more| {
        let ip = std::net::Ipv4Addr::from(from).to_string();
        nginx.get(&ip, path, more)
    });
    let ua = |ua: &str| format!("User-Agent: {ua}\r\n");
    let py = ua("python-requests/2.31.0");
    // robots.txt reaches everyone; a robot breaking it is refused.
    let r = nginx.get("127.0.0.2", "/robots.txt", &py);
    assert_eq!(
        (r.status, r.body.as_str()),
        (200, "User-agent: *\nDisallow: /private/\n")
    );
    let r = nginx.get("127.0.0.2", "/private/x", &py);
    assert_eq!(r.status, 403, "{r:?}");
    assert!(r.body.contains("refused"), "{}", r.body);
    assert_eq!(r.header("x-bot-rule"), Some("breakers"));
    // Over its rate: 429 with Retry-After.
    let answers: Vec<Res> = (0..3)
        .map(|_| nginx.get("127.0.0.3", "/shop.html", &py))
        .collect();
    assert_eq!(answers[0].status, 200, "{:?}", answers[0]);
    assert_eq!(answers[0].body, "the shop\n");
    let r = &answers[2];
    assert_eq!(r.status, 429, "{r:?}");
    assert!(
        r.header("retry-after")
            .is_some_and(|s| s.parse::<u64>().is_ok_and(|s| s >= 1)),
        "{r:?}"
    );
    // A browser too fast: the challenge page, then its pass.
    let firefox = ua("Mozilla/5.0 (X11; Linux x86_64; rv:130.0) Gecko/20100101 Firefox/130.0");
    let _ = nginx.get("127.0.0.4", "/shop.html", &firefox);
    let _ = nginx.get("127.0.0.4", "/shop.html", &firefox);
    let page = nginx.get("127.0.0.4", "/shop.html?x=1", &firefox);
    assert_eq!(page.status, 401, "{page:?}");
    assert!(page.body.contains("Checking your browser"), "{}", page.body);
    let at = page
        .body
        .find("href=\"/.botscope/pass?")
        .expect("the way on")
        + "href=\"".len();
    let link = page.body[at..at + page.body[at..].find('"').unwrap()].replace("&amp;", "&");
    std::thread::sleep(Duration::from_millis(1_100));
    let ok = nginx.get("127.0.0.4", &link, &firefox);
    assert_eq!(ok.status, 303, "{ok:?}");
    assert_eq!(ok.header("location"), Some("/shop.html?x=1"));
    let cookie = ok
        .header("set-cookie")
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_owned();
    let r = nginx.get(
        "127.0.0.4",
        "/shop.html?x=1",
        &format!("{firefox}Cookie: {cookie}\r\n"),
    );
    assert_eq!((r.status, r.body.as_str()), (200, "the shop\n"), "{r:?}");
    // Without the pass, still challenged.
    let r = nginx.get("127.0.0.4", "/shop.html", &firefox);
    assert_eq!(r.status, 401);
    // The pass raises the page rate tenfold (2 a minute: 20), then the
    // client is challenged again.
    let with_pass = format!("{firefox}Cookie: {cookie}\r\n");
    let pages: Vec<u16> = (0..22)
        .map(|_| nginx.get("127.0.0.4", "/shop.html", &with_pass).status)
        .collect();
    assert!(pages[..19].iter().all(|s| *s == 200), "{pages:?}");
    assert_eq!(pages[21], 401, "{pages:?}");
    // Subresources are never answered with the challenge: a browser over
    // its page rate still gets its images, and past ten times the rate a
    // 429, not the challenge page.
    let image = format!("{firefox}Sec-Fetch-Dest: image\r\nSec-Fetch-Mode: no-cors\r\n");
    let page = format!("{firefox}Sec-Fetch-Dest: document\r\nSec-Fetch-Mode: navigate\r\n");
    let _ = nginx.get("127.0.0.5", "/shop.html", &page);
    let _ = nginx.get("127.0.0.5", "/shop.html", &page);
    assert_eq!(nginx.get("127.0.0.5", "/shop.html", &page).status, 401);
    let images: Vec<u16> = (0..22)
        .map(|_| nginx.get("127.0.0.5", "/index.html", &image).status)
        .collect();
    assert!(images[..19].iter().all(|s| *s == 200), "{images:?}");
    assert_eq!(images[21], 429, "{images:?}");
    // A browser's protocol file: passed over by the rule, counted exempt.
    let _ = nginx.get("127.0.0.6", "/.well-known/security.txt", &firefox);
    // The funnel behind nginx: every challenge issued at /auth is viewed
    // on the next request (error_page's), under the rule that issued it
    // (the token handed back in X-Bot-Challenge-Token), none under no
    // rule; the one pass was answered and given.
    let m = get(g.addr, "/metrics", Some("127.0.0.1")).body;
    let stage = |rule: &str, stage: &str| funnel_stage(&m, rule, stage);
    let issued = stage("fast-browsers", "issued");
    assert!(issued >= 4, "{m}");
    assert_eq!(stage("fast-browsers", "viewed"), issued, "{m}");
    assert_eq!(stage("-", "viewed"), 0, "{m}");
    assert_eq!(stage("fast-browsers", "answered"), 1, "{m}");
    assert_eq!(stage("fast-browsers", "passed"), 1, "{m}");
    assert_eq!(
        metric(
            &m,
            "botscope_gate_challenge_exempt_total{rule=\"fast-browsers\",reason=\"protocol-files\"}"
        ),
        1,
        "{m}"
    );
}

/// A sample's value in Prometheus text (0 when absent).
fn metric(m: &str, sample: &str) -> u64 {
    let needle = format!("{sample} ");
    m.lines()
        .find_map(|l| l.strip_prefix(&needle))
        .map_or(0, |n| n.parse().unwrap())
}

/// A stage of a rule's challenge funnel in Prometheus text.
fn funnel_stage(m: &str, rule: &str, stage: &str) -> u64 {
    metric(
        m,
        &format!("botscope_gate_challenge_funnel_total{{rule=\"{rule}\",stage=\"{stage}\"}}"),
    )
}

/// The policy the front-server tests run: robots.txt and the protocol
/// files for all, robots that break robots.txt refused, `/private/`
/// refused to everyone, robots and browsers each at 2 a minute.
const GUIDE_POLICY: &str = "default: allow\nrules:\n  - {name: protocol-files, path: [/robots.txt, /.well-known/], action: allow}\n  - {name: breakers, category: [unregistered-bot], robots: disallowed, action: deny}\n  - {name: private, path: /private/, action: deny}\n  - {name: slow-robots, category: unregistered-bot, rate: 2/min per ip, action: limit}\n  - {name: fast-browsers, category: browser, rate: 2/min per ip, action: challenge}\n";

/// Found by a probe through the guide's configurations: respelled paths
/// were served past `path:` and `robots: disallowed`, and a client's own
/// `X-Real-IP` made it Googlebot and escaped every rate. `get(from, path,
/// header lines)` asks the front server from a loopback address of its
/// own; the site serves `/private/x` and the policy is [`GUIDE_POLICY`].
fn no_way_around(get: impl Fn([u8; 4], &str, &str) -> Res) {
    let py = "User-Agent: python-requests/2.31.0\r\n";
    let firefox =
        "User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:130.0) Gecko/20100101 Firefox/130.0\r\n";
    // Spellings both servers serve as /private/x: refused by the rule
    // that names the path, for a robot (robots.txt) and a browser (path).
    let served = [
        "/private/x",
        "/./private/x",
        "//private/x",
        "/%70rivate/x",
        "/a/../private/x",
        "/%2e/private/x",
        "/a/%2e%2e/private/x",
        "/index.html/../private/x",
        "/%2fprivate/x",
        "/private%2Fx",
        "/private/./x",
        "/private//x",
        "/%2F%2Fprivate%2Fx",
    ];
    // Spellings a server may refuse or map elsewhere: never the page.
    let others = [
        "/../private/x",
        "/%2570rivate/x",
        "/private/x/..%2Fx",
        "/PRIVATE/x",
    ];
    for (n, path) in served.iter().chain(&others).enumerate() {
        let from = [127, 0, 1, u8::try_from(n).unwrap() + 1];
        for (ua, rule) in [(py, "breakers"), (firefox, "private")] {
            let r = get(from, path, ua);
            assert!(
                !r.body.contains("the secret"),
                "{path} served past the gate as {ua}: {r:?}"
            );
            if served.contains(path) {
                assert_eq!(r.status, 403, "{path} as {ua}: {r:?}");
                assert_eq!(r.header("x-bot-rule"), Some(rule), "{path}: {r:?}");
            }
        }
    }
    // A client's own X-Real-IP or X-Forwarded-For (one hop, several)
    // never makes it Googlebot's address …
    let googlebot =
        "User-Agent: Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)\r\n";
    for forged in [
        "X-Real-IP: 66.249.66.1\r\n",
        "X-Forwarded-For: 66.249.66.1\r\n",
        "X-Forwarded-For: 66.249.66.1, 66.249.66.2\r\n",
        "X-Real-IP: 66.249.66.1\r\nX-Forwarded-For: 66.249.66.1\r\n",
    ] {
        let r = get(
            [127, 0, 2, 1],
            "/shop.html",
            &format!("{googlebot}{forged}"),
        );
        assert_ne!(
            r.header("x-bot-identity"),
            Some("verified"),
            "{forged}: {r:?}"
        );
    }
    // … nor a new client at every request: the rate holds.
    let answers: Vec<Res> = (0..3)
        .map(|i| {
            let forged = format!(
                "X-Real-IP: 198.51.100.{i}\r\nX-Forwarded-For: 203.0.113.{i}, 192.0.2.{i}\r\n"
            );
            get([127, 0, 2, 2], "/shop.html", &format!("{py}{forged}"))
        })
        .collect();
    assert_eq!(answers[0].status, 200, "{:?}", answers[0]);
    assert_eq!(answers[2].status, 429, "{:?}", answers[2]);
    assert_eq!(answers[2].header("x-bot-rule"), Some("slow-robots"));
}

/// The documented Caddy configuration of docs/gate.md in front of the
/// gate: `forward_auth` passes the gate's own answers on (403 with its
/// page, 429 with Retry-After, the challenge page), and the gate's pages
/// under `/.botscope/` set the pass.
#[test]
fn caddy_with_the_configuration_of_the_gate_guide() {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/gate.md"))
            .unwrap();
    let at = doc.find("```caddyfile\n").expect("its Caddyfile") + "```caddyfile\n".len();
    let block = &doc[at..at + doc[at..].find("```").unwrap()];
    let d = tempfile::tempdir().unwrap();
    let g = policy_gate(d.path(), GUIDE_POLICY);
    let www = d.path().join("www");
    write(&www, "shop.html", "the shop\n");
    write(&www.join("private"), "x", "the secret\n");
    // The web root's own robots.txt, drifted from the gate's: crawlers
    // must get the gate's.
    write(&www, "robots.txt", "User-agent: *\nAllow: /\n");
    let caddy = Caddy::start(block, g.addr, &www, &d.path().join("robots"));
    let get = |from: [u8; 4], path: &str, more: &str| caddy.get(from, path, more);
    let py = "User-Agent: python-requests/2.31.0\r\n";
    let r = get([127, 0, 0, 2], "/private/x", py);
    assert_eq!(r.status, 403, "{r:?}");
    assert!(r.body.contains("Access refused"), "{}", r.body);
    // The robots.txt crawlers read is the one the gate enforces.
    let r = get([127, 0, 0, 2], "/robots.txt", py);
    assert_eq!(
        (r.status, r.body.as_str()),
        (200, "User-agent: *\nDisallow: /private/\n"),
        "{r:?}"
    );
    no_way_around(|from, path, more| get(from, path, more));
    let answers: Vec<Res> = (0..3)
        .map(|_| get([127, 0, 0, 3], "/shop.html", py))
        .collect();
    assert_eq!(
        (answers[0].status, answers[0].body.as_str()),
        (200, "the shop\n"),
        "{:?}",
        answers[0]
    );
    // The decision reaches the client on a 2xx too, once.
    assert_eq!(answers[0].header("x-bot-identity"), Some("unclaimed"));
    assert_eq!(answers[0].header("x-bot-rule"), Some("default"));
    for r in [&answers[0], &answers[2]] {
        let rules = r
            .headers
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case("x-bot-rule"))
            .count();
        assert_eq!(rules, 1, "{r:?}");
    }
    assert_eq!(
        answers[2].header("x-bot-rule"),
        Some("slow-robots"),
        "{:?}",
        answers[2]
    );
    assert_eq!(answers[2].status, 429, "{:?}", answers[2]);
    assert!(
        answers[2].header("retry-after").is_some(),
        "{:?}",
        answers[2]
    );
    let firefox =
        "User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:130.0) Gecko/20100101 Firefox/130.0\r\n";
    let _ = get([127, 0, 0, 4], "/shop.html", firefox);
    let _ = get([127, 0, 0, 4], "/shop.html", firefox);
    let page = get([127, 0, 0, 4], "/shop.html", firefox);
    assert_eq!(page.status, 401, "{page:?}");
    let at = page
        .body
        .find("href=\"/.botscope/pass?")
        .expect("the way on")
        + "href=\"".len();
    let link = page.body[at..at + page.body[at..].find('"').unwrap()].replace("&amp;", "&");
    std::thread::sleep(Duration::from_millis(1_100));
    let ok = get([127, 0, 0, 4], &link, firefox);
    assert_eq!(ok.status, 303, "{ok:?}");
    let cookie = ok
        .header("set-cookie")
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_owned();
    let r = get(
        [127, 0, 0, 4],
        "/shop.html",
        &format!("{firefox}Cookie: {cookie}\r\n"),
    );
    assert_eq!((r.status, r.body.as_str()), (200, "the shop\n"), "{r:?}");
    // The funnel behind Caddy: the page is viewed in the request that
    // issued it, under its rule.
    let m = get_metrics(g.addr);
    let issued = funnel_stage(&m, "fast-browsers", "issued");
    assert!(issued >= 1, "{m}");
    assert_eq!(funnel_stage(&m, "fast-browsers", "viewed"), issued, "{m}");
    assert_eq!(funnel_stage(&m, "fast-browsers", "passed"), 1, "{m}");
}

fn get_metrics(gate: SocketAddr) -> String {
    get(gate, "/metrics", Some("127.0.0.1")).body
}

/// Debian's Caddy with a documented Caddyfile, its placeholders put right
/// (`127.0.0.1:8091`: the gate; `:80`: a free loopback port;
/// `127.0.0.1:8092`: another; `/var/www/html` and
/// `/etc/botscope/robots`), stopped by its PID when dropped.
struct Caddy {
    child: std::process::Child,
    addr: SocketAddr,
    _dir: tempfile::TempDir,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Caddy {
    fn start(block: &str, gate: SocketAddr, www: &Path, robots: &Path) -> Caddy {
        let d = tempfile::tempdir().unwrap();
        let (port, spare) = (free_port(), free_port());
        let site = block
            .replace(":80 {", &format!("http://127.0.0.1:{port} {{"))
            .replace("127.0.0.1:8091", &gate.to_string())
            .replace("127.0.0.1:8092", &format!("127.0.0.1:{spare}"))
            .replace("/var/www/html", &www.display().to_string())
            .replace("/etc/botscope/robots", &robots.display().to_string());
        assert_ne!(site, block, "the placeholders are in the documented block");
        let caddyfile = d.path().join("Caddyfile");
        std::fs::write(
            &caddyfile,
            format!("{{\n  admin off\n  auto_https off\n}}\n{site}"),
        )
        .unwrap();
        let exe = ["/usr/bin/caddy", "caddy"]
            .into_iter()
            .find(|p| {
                std::process::Command::new(p)
                    .arg("version")
                    .output()
                    .is_ok()
            })
            .expect("Caddy is needed (the test command in README installs it)");
        let child = std::process::Command::new(exe)
            .args(["run", "--adapter", "caddyfile", "--config"])
            .arg(&caddyfile)
            .env("HOME", d.path())
            .env("XDG_DATA_HOME", d.path().join("data"))
            .env("XDG_CONFIG_HOME", d.path().join("config"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("caddy starts");
        let mut caddy = Caddy {
            child,
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
            _dir: d,
        };
        let t = Instant::now();
        // The spare site listens too, when the block has one.
        let spare_site = block.contains("http://127.0.0.1:8092");
        while TcpStream::connect(caddy.addr).is_err()
            || (spare_site && TcpStream::connect(("127.0.0.1", spare)).is_err())
        {
            if let Ok(Some(s)) = caddy.child.try_wait() {
                panic!("caddy exited: {s}");
            }
            assert!(t.elapsed() < Duration::from_secs(20), "caddy listens");
            std::thread::sleep(Duration::from_millis(50));
        }
        caddy
    }

    /// A request from `from` (a loopback address of its own), with more
    /// header lines.
    fn get(&self, from: [u8; 4], path: &str, more: &str) -> Res {
        let mut s = socket2_connect(from, self.addr);
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        write!(
            s,
            "GET {path} HTTP/1.1\r\nHost: {}\r\n{more}Connection: close\r\n\r\n",
            self.addr
        )
        .unwrap();
        read_response(s, path)
    }
}

impl Drop for Caddy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The site `files` (path, body) under `dir`/www, readable by the
/// servers' workers, in front of the gate at `gate` behind the guide's
/// nginx and Caddy (robots from `robots`).
fn guide_fronts(
    dir: &Path,
    files: &[(&str, &str)],
    gate: SocketAddr,
    robots: &Path,
) -> (Nginx, Caddy) {
    use std::os::unix::fs::PermissionsExt;
    let open = |p: &Path, mode| {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
    };
    open(dir, 0o755);
    let www = dir.join("www");
    for (path, body) in files {
        let file = www.join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, body).unwrap();
        open(&file, 0o644);
        let mut d = file.parent().unwrap();
        while d.starts_with(&www) {
            open(d, 0o755);
            d = d.parent().unwrap();
        }
    }
    (
        Nginx::start(&doc_block("## nginx", "nginx"), gate, &www),
        Caddy::start(&doc_block("## Caddy", "caddyfile"), gate, &www, robots),
    )
}

/// The block of docs/gate.md that follows `after` and opens with
/// "```lang".
fn doc_block(after: &str, lang: &str) -> String {
    botscope_testkit::doc_block("gate.md", after, lang)
}

/// Found by a probe: with the gate stopped, the guide's nginx answered
/// 500 for every page and 502 for `/robots.txt`, and Caddy 502. Both
/// guides now fail open (and offer to fail closed), and `/robots.txt` and
/// the feeds keep answering either way.
#[test]
fn a_stopped_gate_does_not_stop_the_site() {
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::tempdir().unwrap();
    let g = policy_gate(d.path(), "default: allow\nrules: []\n");
    let www = d.path().join("www");
    write(&www, "index.html", "the site\n");
    write(&www, "feed.xml", "<feed/>\n");
    write(&www, "robots.txt", "User-agent: *\nAllow: /\n");
    let rd = d.path().join("robots");
    for p in [d.path(), &www, &rd] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    for f in [
        www.join("index.html"),
        www.join("feed.xml"),
        rd.join("default.txt"),
    ] {
        std::fs::set_permissions(f, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let robots = "User-agent: *\nDisallow: /private/\n";
    let nginx_open =
        doc_block("## nginx", "nginx").replace("/etc/botscope/robots", &rd.display().to_string());
    let closed_location = doc_block("### When the gate is down", "nginx");
    let open_location = "    location @botscope_unavailable {\n        return 204;\n    }\n";
    assert!(nginx_open.contains(open_location), "the fail-open location");
    let nginx_closed = nginx_open.replace(open_location, &closed_location);
    let caddy_open = doc_block("## Caddy", "caddyfile");
    let caddy_closed = {
        let last = "    handle {\n        respond 200\n    }\n";
        assert!(caddy_open.contains(last), "the fail-open handle");
        caddy_open.replace(last, &doc_block("To fail closed instead", "caddyfile"))
    };
    let gate = g.addr;
    let nginx = [
        Nginx::start(&nginx_open, gate, &www),
        Nginx::start(&nginx_closed, gate, &www),
    ];
    let caddy = [
        Caddy::start(&caddy_open, gate, &www, &rd),
        Caddy::start(&caddy_closed, gate, &www, &rd),
    ];
    type Front<'a> = (&'a str, Box<dyn Fn(&str) -> Res + 'a>);
    let fronts: Vec<Front> = vec![
        (
            "nginx, fail open",
            Box::new(|p: &str| nginx[0].get("127.0.0.9", p, "")),
        ),
        (
            "nginx, fail closed",
            Box::new(|p: &str| nginx[1].get("127.0.0.9", p, "")),
        ),
        (
            "Caddy, fail open",
            Box::new(|p: &str| caddy[0].get([127, 0, 0, 9], p, "")),
        ),
        (
            "Caddy, fail closed",
            Box::new(|p: &str| caddy[1].get([127, 0, 0, 9], p, "")),
        ),
    ];
    // With the gate up: the page, the gate's robots.txt, the feed.
    for (name, get) in &fronts {
        let r = get("/");
        assert_eq!(
            (r.status, r.body.as_str()),
            (200, "the site\n"),
            "{name}: {r:?}"
        );
        let r = get("/robots.txt");
        assert_eq!((r.status, r.body.as_str()), (200, robots), "{name}: {r:?}");
    }
    drop(g);
    for (name, get) in &fronts {
        let closed = name.ends_with("closed");
        let r = get("/");
        if closed {
            assert_eq!(r.status, 503, "{name}: {r:?}");
            assert!(r.header("retry-after").is_some(), "{name}: {r:?}");
            assert!(!r.body.contains("the site"), "{name}: {r:?}");
        } else {
            assert_eq!(
                (r.status, r.body.as_str()),
                (200, "the site\n"),
                "{name}: {r:?}"
            );
        }
        // The site's robots.txt is the gate's default.txt, never the web
        // root's drifted copy; the feed answers.
        let r = get("/robots.txt");
        assert_eq!((r.status, r.body.as_str()), (200, robots), "{name}: {r:?}");
        let r = get("/feed.xml");
        assert_eq!(
            (r.status, r.body.as_str()),
            (200, "<feed/>\n"),
            "{name}: {r:?}"
        );
    }
}

/// A `label` header reaches the application only when a label set it:
/// behind Caddy's `copy_headers`, a header the gate did not send reached
/// it as the literal placeholder `{http.reverse_proxy.header.…}`. The
/// gate now sends every label header of the policy, empty when unset,
/// and a client's own copy never gets through.
#[test]
fn label_headers_reach_the_application_only_when_set() {
    use std::io::{BufRead, BufReader};
    let d = tempfile::tempdir().unwrap();
    let g = policy_gate(
        d.path(),
        "default: allow\nrules:\n  - {name: tag-python, user_agent: '^python', headers: {X-Crawler-Kind: python}, action: label}\n",
    );
    // The application: answers with the request's header lines.
    let app = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let app_addr = app.local_addr().unwrap();
    std::thread::spawn(move || {
        for conn in app.incoming() {
            let Ok(conn) = conn else { return };
            let mut head = String::new();
            let mut r = BufReader::new(conn.try_clone().unwrap());
            loop {
                let mut l = String::new();
                if r.read_line(&mut l).unwrap_or(0) == 0 || l == "\r\n" {
                    break;
                }
                head.push_str(&l);
            }
            let mut w = conn;
            let _ = write!(
                w,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{head}",
                head.len()
            );
        }
    });
    let block = format!(
        ":80 {{\n    forward_auth 127.0.0.1:8091 {{\n        uri /forward-auth\n        header_up X-Real-IP {{remote_host}}\n        copy_headers X-Bot-Rule X-Crawler-Kind\n    }}\n    reverse_proxy {app_addr}\n}}\n"
    );
    let caddy = Caddy::start(&block, g.addr, d.path(), d.path());
    let seen = |ua: &str| {
        let r = caddy.get(
            [127, 0, 0, 7],
            "/",
            &format!("User-Agent: {ua}\r\nX-Crawler-Kind: forged\r\n"),
        );
        assert_eq!(r.status, 200, "{r:?}");
        r.body
            .lines()
            .find(|l| l.to_ascii_lowercase().starts_with("x-crawler-kind:"))
            .map(|l| l["x-crawler-kind:".len()..].trim().to_owned())
    };
    assert_eq!(seen("python-requests/2.31").as_deref(), Some("python"));
    let browser = seen("Mozilla/5.0 (X11; Linux x86_64; rv:130.0) Gecko/20100101 Firefox/130.0");
    assert!(
        browser.as_deref().is_none_or(str::is_empty),
        "the application saw {browser:?}"
    );
}

/// Report-only: the first week of a deployment. Every request is decided,
/// logged and counted, and allowed; what would have been done is in
/// `X-Bot-Report-Only` and the decision log.
#[test]
fn report_only_decides_logs_counts_and_allows() {
    let d = tempfile::tempdir().unwrap();
    let rd = d.path().join("robots");
    robots(&rd);
    let policy = d.path().join("policy.yaml");
    std::fs::write(
        &policy,
        "default: allow\nrules:\n  - {name: no-curl, user_agent: '^curl/', action: deny}\n  - {name: slow, rate: 1/min per ip, action: limit}\n",
    )
    .unwrap();
    let log = d.path().join("decisions.jsonl");
    let g = serve(Config {
        trust_proxy: vec![IpRange::parse_any("127.0.0.1/32").unwrap()],
        policy: Some(policy),
        report_only: true,
        decision_log: Some(botscope_gate::decisions::DecisionLogConfig {
            path: log.clone(),
            all: false,
            max_bytes: 1 << 20,
        }),
        ..Config::new(rd)
    });
    for endpoint in ["/auth", "/forward-auth"] {
        let r = ask(g.addr, endpoint, "192.0.2.1", "curl/8.5.0", "/");
        assert_eq!(r.status, 200, "{r:?}");
        assert_eq!(h(&r, "x-bot-decision"), "allow");
        assert_eq!(h(&r, "x-bot-report-only"), "deny");
        assert_eq!(h(&r, "x-bot-rule"), "no-curl");
    }
    let _ = ask(g.addr, "/forward-auth", "192.0.2.2", "Firefox", "/");
    let r = ask(g.addr, "/forward-auth", "192.0.2.2", "Firefox", "/");
    assert_eq!(
        (r.status, h(&r, "x-bot-report-only")),
        (200, "limit"),
        "{r:?}"
    );
    assert!(r.header("retry-after").is_none(), "{r:?}");
    let health: serde_json::Value =
        serde_json::from_str(&get(g.addr, "/healthz", Some("127.0.0.1")).body).unwrap();
    assert_eq!(health["report_only"], true, "{health}");
    let metrics = get(g.addr, "/metrics", Some("127.0.0.1")).body;
    assert!(
        metrics.contains("botscope_gate_decisions_total{rule=\"no-curl\",action=\"deny\"} 2"),
        "{metrics}"
    );
    let t = Instant::now();
    let lines = loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        if text.lines().count() >= 3 {
            break text;
        }
        assert!(t.elapsed() < Duration::from_secs(10), "{text}");
        std::thread::sleep(Duration::from_millis(50));
    };
    for line in lines.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["enforced"], false, "{v}");
        assert_ne!(v["action"], "allow", "{v}");
    }
}

/// A policy edited into an error is not taken: the gate keeps deciding
/// with the one before and says why in /healthz; fixed, it is taken.
#[test]
fn a_broken_policy_reload_keeps_the_old_one_and_says_why() {
    let d = tempfile::tempdir().unwrap();
    let rd = d.path().join("robots");
    robots(&rd);
    let policy = d.path().join("policy.yaml");
    std::fs::write(
        &policy,
        "default: allow\nrules:\n  - {name: no-curl, user_agent: '^curl/', action: deny}\n",
    )
    .unwrap();
    let config = Config {
        trust_proxy: vec![IpRange::parse_any("127.0.0.1/32").unwrap()],
        poll: Duration::from_millis(50),
        policy: Some(policy.clone()),
        ..Config::new(rd)
    };
    let g = serve(config);
    let curl = |g: &Running| ask(g.addr, "/auth", "192.0.2.1", "curl/8.5.0", "/");
    assert_eq!(curl(&g).status, 403);
    std::fs::write(&policy, "rules:\n  - {name: no-curl, user_agent: '^curl/', action: deny}\n  - {name: oops, action: maybe}\ndefault: allow\n").unwrap();
    let t = Instant::now();
    let health = loop {
        let h: serde_json::Value =
            serde_json::from_str(&get(g.addr, "/healthz", Some("127.0.0.1")).body).unwrap();
        if !h["last_error"].is_null() {
            break h;
        }
        assert!(t.elapsed() < Duration::from_secs(10), "{h}");
        std::thread::sleep(Duration::from_millis(50));
    };
    let why = health["last_error"].as_str().unwrap();
    assert!(
        why.contains("policy.yaml:3: error: rule `oops`: `action` must be one of"),
        "{why}"
    );
    assert_eq!(curl(&g).status, 403, "the old policy still decides");
    std::fs::write(
        &policy,
        "default: allow\nrules:\n  - {name: all-welcome, action: allow}\n",
    )
    .unwrap();
    let t = Instant::now();
    while curl(&g).status != 200 {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "the fixed policy is taken"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let h: serde_json::Value =
        serde_json::from_str(&get(g.addr, "/healthz", Some("127.0.0.1")).body).unwrap();
    assert!(h["last_error"].is_null(), "{h}");
    // Found by a probe: a FIFO at the policy's path blocked a worker and
    // every later reload. It is refused at once, and a policy put back
    // afterwards is taken.
    std::fs::remove_file(&policy).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(&policy)
        .status()
        .unwrap();
    assert!(made.success());
    let t = Instant::now();
    let why = loop {
        let h: serde_json::Value =
            serde_json::from_str(&get(g.addr, "/healthz", Some("127.0.0.1")).body).unwrap();
        if let Some(e) = h["last_error"].as_str() {
            break e.to_owned();
        }
        assert!(t.elapsed() < Duration::from_secs(10), "{h}");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(why.contains("is not a regular file; refused"), "{why}");
    assert_eq!(curl(&g).status, 200, "the policy before still decides");
    std::fs::remove_file(&policy).unwrap();
    std::fs::write(
        &policy,
        "default: allow\nrules:\n  - {name: no-curl, user_agent: '^curl/', action: deny}\n",
    )
    .unwrap();
    let t = Instant::now();
    while curl(&g).status != 403 {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "a reload after the FIFO"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The operators' lists refreshed on a schedule: a crawler's new address
/// verifies once its list says so; a list that would lose more than half
/// of the addresses, or is not a list, is refused and the one before kept.
#[test]
fn published_lists_are_refreshed_with_the_sanity_rules_of_bots_update() {
    use botscope_testkit::ipdb::{Canned, FileServer};
    let server = FileServer::start(std::collections::HashMap::new());
    let list =
        |ips: &[&str]| Canned::ok(&[("Content-Type", "text/plain")], ips.join("\n").as_bytes());
    server.set(
        "/listbot.txt",
        list(&["192.0.2.1", "192.0.2.2", "192.0.2.3", "192.0.2.4"]),
    );
    // Only this registry: the bundled one's sources are on the internet.
    let registry = botscope_botid::Registry::parse(
        "t.yaml",
        &format!(
            "bots:\n- name: ListBot\n  category: search\n  ua_tokens: [ListBot]\n  ip_list: [192.0.2.1, 192.0.2.2, 192.0.2.3, 192.0.2.4]\n  ip_sources: ['{}/listbot.txt']\n",
            server.url()
        ),
    )
    .unwrap();
    let d = tempfile::tempdir().unwrap();
    let rd = d.path().join("robots");
    robots(&rd);
    let config = Config {
        trust_proxy: vec![IpRange::parse_any("127.0.0.1/32").unwrap()],
        identity: Some(botscope_gate::identity::IdentityConfig {
            registry: Arc::new(registry),
            owners: Arc::new(botscope_botid::NoOwners),
            dns: None,
            cache: 1_000,
        }),
        refresh: Some(botscope_gate::refresh::RefreshConfig {
            every: Duration::from_millis(200),
            timeout: Duration::from_secs(5),
            trust: botscope_http::Trust::system(),
            user_agent: "botscope-test".into(),
            keep: Some(d.path().join("lists.yaml")),
        }),
        ..Config::new(rd.clone())
    };
    let shipped = registry_of(&config);
    let g = serve(config);
    let ua = "ListBot/1.0 (+https://example.org/listbot)";
    let identity = |ip: &str| h(&ask(g.addr, "/auth", ip, ua, "/"), "x-bot-identity").to_owned();
    assert_eq!(identity("192.0.2.1"), "verified");
    assert_eq!(identity("192.0.2.9"), "spoofed");
    // The operator adds an address.
    server.set(
        "/listbot.txt",
        list(&[
            "192.0.2.1",
            "192.0.2.2",
            "192.0.2.3",
            "192.0.2.4",
            "192.0.2.9",
        ]),
    );
    let t = Instant::now();
    while identity("192.0.2.9") != "verified" {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "the new list is taken"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // Kept on disk: the next start reads the list last fetched.
    let health: serde_json::Value =
        serde_json::from_str(&get(g.addr, "/healthz", Some("127.0.0.1")).body).unwrap();
    assert!(
        health["lists_refresh"]["next"]
            .as_str()
            .is_some_and(|t| t.parse::<jiff::Timestamp>().is_ok()),
        "{health}"
    );
    let restarted = botscope_gate::refresh::kept(&shipped, &d.path().join("lists.yaml"))
        .unwrap()
        .expect("kept");
    let g2 = serve(Config {
        trust_proxy: vec![IpRange::parse_any("127.0.0.1/32").unwrap()],
        identity: Some(botscope_gate::identity::IdentityConfig {
            registry: Arc::new(restarted),
            owners: Arc::new(botscope_botid::NoOwners),
            dns: None,
            cache: 1_000,
        }),
        ..Config::new(rd)
    });
    assert_eq!(
        h(
            &ask(g2.addr, "/auth", "192.0.2.9", ua, "/"),
            "x-bot-identity"
        ),
        "verified"
    );
    drop(g2);
    // A file there that the gate did not write is never read or replaced.
    let mine = d.path().join("mine.yaml");
    std::fs::write(&mine, "bots: []\n").unwrap();
    let e = botscope_gate::refresh::kept(&shipped, &mine).unwrap_err();
    assert!(e.contains("not a file the gate wrote"), "{e}");
    // A list that would drop four of five addresses is refused: kept.
    server.set("/listbot.txt", list(&["192.0.2.1"]));
    let t = Instant::now();
    let health = loop {
        let h: serde_json::Value =
            serde_json::from_str(&get(g.addr, "/healthz", Some("127.0.0.1")).body).unwrap();
        if h["lists_refresh"]["problems"]
            .as_array()
            .is_some_and(|p| !p.is_empty())
        {
            break h;
        }
        assert!(t.elapsed() < Duration::from_secs(10), "{h}");
        std::thread::sleep(Duration::from_millis(50));
    };
    let problem = health["lists_refresh"]["problems"][0].as_str().unwrap();
    assert!(problem.contains("more than half"), "{problem}");
    assert_eq!(identity("192.0.2.9"), "verified");
    // Junk instead of a list: refused too.
    server.set(
        "/listbot.txt",
        Canned::ok(
            &[("Content-Type", "text/html")],
            b"<html>maintenance</html>",
        ),
    );
    std::thread::sleep(Duration::from_millis(600));
    assert_eq!(identity("192.0.2.3"), "verified");
}

/// The registry a config judges identity with.
fn registry_of(c: &Config) -> botscope_botid::Registry {
    (*c.identity.as_ref().unwrap().registry).clone()
}

/// The front-server tests' gate: `policy` (YAML), identity offline, a
/// challenge of one second, and a robots.txt closing `/private/`.
fn policy_gate(dir: &Path, policy: &str) -> Running {
    let rd = dir.join("robots");
    write(&rd, "default.txt", "User-agent: *\nDisallow: /private/\n");
    let path = dir.join("policy.yaml");
    std::fs::write(&path, policy).unwrap();
    let config = Config {
        trust_proxy: vec![IpRange::parse_any("127.0.0.1/32").unwrap()],
        identity: Some(offline()),
        policy: Some(path),
        challenge: Some(botscope_gate::challenge::ChallengeConfig {
            delay: Duration::from_secs(1),
            ..botscope_gate::challenge::ChallengeConfig::new(vec![9; 32])
        }),
        ..Config::new(rd)
    };
    serve(config)
}

/// Identity from the bundled registry, reverse DNS through `server`.
fn dns_identity(server: &botscope_testkit::Dnsmasq) -> botscope_gate::identity::IdentityConfig {
    let lookup =
        botscope_gate::identity::hickory_lookup(&[server.addr()], Duration::from_secs(2), 1_000)
            .unwrap();
    botscope_gate::identity::IdentityConfig {
        registry: Arc::new(botscope_botid::Registry::bundled()),
        owners: Arc::new(botscope_botid::NoOwners),
        dns: Some(botscope_gate::identity::DnsConfig {
            lookup,
            concurrency: 4,
            evidence: 1_000,
        }),
        cache: 10_000,
    }
}

/// Identity from the bundled registry, offline (no reverse DNS).
fn offline() -> botscope_gate::identity::IdentityConfig {
    botscope_gate::identity::IdentityConfig {
        registry: Arc::new(botscope_botid::Registry::bundled()),
        owners: Arc::new(botscope_botid::NoOwners),
        dns: None,
        cache: 1_000,
    }
}
