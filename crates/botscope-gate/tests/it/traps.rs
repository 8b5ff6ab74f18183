//! Trap links through the real standalone gate: the robots kind read from
//! the robots.txt it serves, a catch the policy refuses, exempt clients,
//! HEAD and prefetches, forged links, and the event log.

use std::net::SocketAddr;
use std::time::Duration;

use botscope_gate::Config;
use botscope_gate::proxy::UpstreamConfig;
use botscope_testkit::http::Res;
use botscope_testkit::recorder::Recorder;

use super::{serve, write};

const POLICY: &str = "version: 1
traps:
  kinds: [robots, anchor]
  exempt: [127.0.0.9]
default: allow
rules:
  - name: trapped
    trapped: [robots, anchor]
    action: deny
";

fn request(from: [u8; 4], to: SocketAddr, method: &str, target: &str, extra: &str) -> Res {
    let head = format!(
        "{method} {target} HTTP/1.1\r\nHost: shop.example\r\nUser-Agent: scraper/1.0\r\n{extra}Connection: close\r\n\r\n"
    );
    let mut s = botscope_testkit::connect_from(from, to);
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    std::io::Write::write_all(&mut s, head.as_bytes()).unwrap();
    botscope_testkit::http::read_response(s, target)
}

/// The event log once it holds `needle` (its writer is a thread of its
/// own), or as it is after five seconds.
fn log_with(path: &std::path::Path, needle: &str) -> String {
    let t = std::time::Instant::now();
    loop {
        let log = std::fs::read_to_string(path).unwrap_or_default();
        if log.contains(needle) || t.elapsed() > Duration::from_secs(5) {
            return log;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The trap lines of a served robots.txt: the prefix, the robots path.
fn trap_lines(robots: &str) -> (String, String) {
    let lines: Vec<&str> = robots
        .lines()
        .filter_map(|l| l.strip_prefix("Disallow: /t-"))
        .collect();
    assert!(lines.len() >= 2, "{robots}");
    let prefix = format!("/t-{}", lines[0]);
    let path = format!("/t-{}", lines[1]);
    assert!(
        path.starts_with(&prefix) && path.len() > prefix.len(),
        "{robots}"
    );
    (prefix, path)
}

#[test]
fn a_client_that_fetches_what_robots_txt_closes_is_caught_and_refused() {
    let app = Recorder::start(None);
    let d = botscope_testkit::tempdir();
    let rd = d.path().join("robots");
    write(
        &rd,
        "default.txt",
        "User-agent: GPTBot\nDisallow: /\n\nUser-agent: *\nDisallow: /private/\n",
    );
    std::fs::write(d.path().join("policy.yaml"), POLICY).unwrap();
    let events = d.path().join("events.log");
    let gate = serve(Config {
        policy: Some(d.path().join("policy.yaml")),
        upstream: Some(UpstreamConfig::new(url::Url::parse(&app.url()).unwrap())),
        events: Some(botscope_gate::decisions::DecisionLogConfig {
            path: events.clone(),
            all: true,
            max_bytes: 1 << 20,
        }),
        ..Config::new(rd)
    });
    let to = gate.addr;
    let robots = request([127, 0, 0, 2], to, "GET", "/robots.txt", "");
    assert_eq!(robots.status, 200);
    // Every group carries the trap lines, each right after its agents.
    assert_eq!(
        robots.body.matches("Disallow: /t-").count(),
        4,
        "{}",
        robots.body
    );
    let (prefix, path) = trap_lines(&robots.body);
    // The same prefix on the next read: one per deployment.
    assert_eq!(
        trap_lines(&request([127, 0, 0, 3], to, "GET", "/robots.txt", "").body),
        (prefix.clone(), path.clone())
    );

    // A person's browser reads pages: never caught.
    let scraper = [127, 0, 0, 2];
    assert_eq!(request(scraper, to, "GET", "/", "").status, 200);
    // A HEAD and a prefetch of the trap count nothing.
    assert_eq!(request(scraper, to, "HEAD", &path, "").status, 204);
    assert_eq!(
        request(scraper, to, "GET", &path, "Sec-Purpose: prefetch\r\n").status,
        204
    );
    assert_eq!(request(scraper, to, "GET", "/", "").status, 200);
    // Fetching the path only robots.txt names: caught at once, refused,
    // then refused everywhere; the application never saw the trap.
    let hit = request(scraper, to, "GET", &path, "");
    assert_eq!(hit.status, 403, "{}", hit.body);
    let after = request(scraper, to, "GET", "/", "");
    assert_eq!(after.status, 403);
    assert!(
        after
            .headers
            .iter()
            .any(|(n, v)| n.eq_ignore_ascii_case("x-bot-rule") && v == "trapped")
    );
    // Its neighbour at another address is not (one client never widens).
    assert_eq!(request([127, 0, 0, 3], to, "GET", "/", "").status, 200);
    // An exempt network's hit is logged exempt, never caught.
    assert_eq!(request([127, 0, 0, 9], to, "GET", &path, "").status, 404);
    assert_eq!(request([127, 0, 0, 9], to, "GET", "/", "").status, 200);
    // A link the gate never made: a strike at most, never a catch alone,
    // and a page that explains.
    let forged = request([127, 0, 0, 4], to, "GET", &format!("{prefix}made-up"), "");
    assert_eq!(forged.status, 404);
    assert!(forged.body.contains("trap for crawlers"), "{}", forged.body);
    for n in 0..5 {
        request(
            [127, 0, 0, 4],
            to,
            "GET",
            &format!("{prefix}forged-{n}"),
            "",
        );
    }
    assert_eq!(request([127, 0, 0, 4], to, "GET", "/", "").status, 200);
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        app.lines().iter().all(|l| !l.contains("/t-")),
        "{:?}",
        app.lines()
    );

    // The event log: time first, the literal address, one line each.
    let log = log_with(&events, " forged ");
    let lines: Vec<&str> = log.lines().collect();
    let catch: Vec<&&str> = lines.iter().filter(|l| l.contains(" catch ")).collect();
    assert_eq!(catch.len(), 1, "{log}");
    assert!(
        catch[0].contains(" catch kind=robots client=127.0.0.2 method=GET path=\""),
        "{log}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains(" refuse rule=\"trapped\" action=deny client=127.0.0.2")),
        "{log}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains(" exempt kind=robots client=127.0.0.9")),
        "{log}"
    );
    assert_eq!(
        lines.iter().filter(|l| l.contains(" forged ")).count(),
        6,
        "{log}"
    );
    for l in &lines {
        let time = l.split(' ').next().unwrap();
        assert!(time.parse::<jiff::Timestamp>().is_ok(), "{l}");
    }
    // The operators' blocklist: the address caught, as a line and as
    // `cscli decisions import` reads it.
    let list = request([127, 0, 0, 1], to, "GET", "/.botscope/blocklist.txt", "");
    assert_eq!((list.status, list.body.as_str()), (200, "127.0.0.2\n"));
    let json = request(
        [127, 0, 0, 1],
        to,
        "GET",
        "/.botscope/blocklist.txt?format=json",
        "",
    );
    let v: serde_json::Value = serde_json::from_str(&json.body).unwrap();
    let item = &v.as_array().unwrap()[0];
    assert_eq!(item["value"], "127.0.0.2");
    assert_eq!(item["scope"], "ip");
    assert_eq!(item["type"], "ban");
    assert_eq!(item["reason"], "botscope trap: robots");
    let d = item["duration"].as_str().unwrap();
    let (h, rest) = d.split_once('h').unwrap();
    let (m, s) = rest.split_once('m').unwrap();
    let secs: u64 = h.parse::<u64>().unwrap() * 3600
        + m.parse::<u64>().unwrap() * 60
        + s.trim_end_matches('s').parse::<u64>().unwrap();
    assert!((86_000..=86_400).contains(&secs), "{d}");
    // The metrics count hits and catches.
    let m = request([127, 0, 0, 1], to, "GET", "/.botscope/metrics", "");
    assert!(
        m.body
            .contains("botscope_gate_trap_catches_total{kind=\"robots\"} 1"),
        "{}",
        m.body
    );
    assert!(
        m.body.contains("botscope_gate_trap_exempt_total 1"),
        "{}",
        m.body
    );
}

/// An application of HTML pages on loopback: `/page` plain, `/gz`
/// gzip-encoded when the request accepts gzip; it records each request's
/// `Accept-Encoding`.
fn html_app() -> (SocketAddr, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use std::io::{BufRead, Write};
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { continue };
            let mut r = std::io::BufReader::new(s.try_clone().unwrap());
            let mut head = Vec::new();
            loop {
                let mut line = String::new();
                if r.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                head.push(line);
            }
            let target = head
                .first()
                .and_then(|l| l.split(' ').nth(1))
                .unwrap_or("/")
                .to_owned();
            let ae = head
                .iter()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("accept-encoding:")
                        .map(|v| v.trim().to_owned())
                })
                .unwrap_or_default();
            log.lock().unwrap().push(format!("{target} {ae}"));
            let page = b"<!doctype html><html><head><title>Shop</title></head><body><h1>Shop</h1><a href=\"/next\">next</a></body></html>";
            let (body, enc) = if target == "/gz" && ae.contains("gzip") {
                let mut e =
                    flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
                e.write_all(page).unwrap();
                (e.finish().unwrap(), "Content-Encoding: gzip\r\n")
            } else {
                (page.to_vec(), "")
            };
            let _ = write!(
                s,
                "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n{enc}ETag: \"v1\"\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = s.write_all(&body);
        }
    });
    (addr, seen)
}

/// The href of every `<a>` in `html`.
fn links(html: &str) -> Vec<String> {
    html.split("href=\"")
        .skip(1)
        .filter_map(|s| s.split('"').next())
        .map(str::to_owned)
        .collect()
}

/// A standalone gate in front of the application at `app` with `policy`
/// and its event log (returned), in `d`.
fn gate_with_events(
    d: &std::path::Path,
    app: SocketAddr,
    policy: &str,
) -> (super::Running, std::path::PathBuf) {
    let rd = d.join("robots");
    write(&rd, "default.txt", "User-agent: *\nDisallow: /private/\n");
    std::fs::write(d.join("policy.yaml"), policy).unwrap();
    let events = d.join("events.log");
    let gate = serve(Config {
        policy: Some(d.join("policy.yaml")),
        upstream: Some(UpstreamConfig::new(
            url::Url::parse(&format!("http://{app}/")).unwrap(),
        )),
        events: Some(botscope_gate::decisions::DecisionLogConfig {
            path: events.clone(),
            all: true,
            max_bytes: 1 << 20,
        }),
        ..Config::new(rd)
    });
    (gate, events)
}

#[test]
fn pages_carry_signed_links_that_catch_crude_extractors_and_link_followers() {
    let (app, seen) = html_app();
    let d = botscope_testkit::tempdir();
    let (gate, events) = gate_with_events(
        d.path(),
        app,
        "version: 1\ntraps:\n  kinds: [script, anchor]\ndefault: allow\nrules:\n  - name: trapped\n    trapped: any\n    action: deny\n",
    );
    let to = gate.addr;
    let page = "Accept: text/html\r\n";
    // A plain page: the links go before </body>, unique per page.
    let a = request([127, 0, 0, 2], to, "GET", "/page", page);
    assert_eq!(a.status, 200);
    assert!(
        a.body.contains("<script type=\"ignore\"><a href=\"/t-"),
        "{}",
        a.body
    );
    assert!(
        a.body
            .contains("hidden rel=\"nofollow\" tabindex=\"-1\">A trap for crawlers"),
        "{}",
        a.body
    );
    assert!(a.body.ends_with("</a></body></html>"), "{}", a.body);
    assert!(
        a.headers
            .iter()
            .any(|(n, v)| n.eq_ignore_ascii_case("etag") && v == "W/\"v1\"")
    );
    let b = request([127, 0, 0, 2], to, "GET", "/page", page);
    assert_ne!(
        links(&a.body)[1..],
        links(&b.body)[1..],
        "each page its own links"
    );
    // A gzip page is rewritten and stays gzip; the application was asked
    // for gzip or nothing.
    let gz = request(
        [127, 0, 0, 3],
        to,
        "GET",
        "/gz",
        "Accept: text/html\r\nAccept-Encoding: br, gzip\r\n",
    );
    assert_eq!(gz.status, 200);
    assert!(
        gz.headers
            .iter()
            .any(|(n, v)| n.eq_ignore_ascii_case("content-encoding") && v == "gzip")
    );
    let mut plain = String::new();
    std::io::Read::read_to_string(
        &mut flate2::read::GzDecoder::new(&gz.raw_body[..]),
        &mut plain,
    )
    .unwrap();
    assert!(
        plain.contains("<script type=\"ignore\">") && plain.ends_with("</body></html>"),
        "{plain}"
    );
    assert!(
        seen.lock().unwrap().iter().any(|l| l == "/gz gzip"),
        "{:?}",
        seen.lock().unwrap()
    );

    // A person's browser follows the visible link only: never caught.
    assert_eq!(
        request([127, 0, 0, 2], to, "GET", "/next", page).status,
        200
    );
    // A crude extractor follows the script link: caught at once.
    let l = links(&a.body);
    let (script, anchor) = (&l[1], &l[2]);
    let hit = request([127, 0, 0, 2], to, "GET", script, "");
    assert_eq!(hit.status, 403, "{}", hit.body);
    assert_eq!(
        request([127, 0, 0, 2], to, "GET", "/page", page).status,
        403
    );
    // A link follower: the first anchor explains, a second page's anchor
    // catches.
    let c = request([127, 0, 0, 4], to, "GET", "/page", page);
    let c2 = request([127, 0, 0, 4], to, "GET", "/page", page);
    let first = request([127, 0, 0, 4], to, "GET", &links(&c.body)[2], "");
    assert_eq!(first.status, 404);
    assert!(first.body.contains("trap for crawlers"));
    assert_eq!(
        request([127, 0, 0, 4], to, "GET", "/page", page).status,
        200
    );
    assert_eq!(
        request([127, 0, 0, 4], to, "GET", &links(&c2.body)[2], "").status,
        403
    );
    assert_eq!(
        request([127, 0, 0, 4], to, "GET", "/page", page).status,
        403
    );
    // A page harvested at one address, its anchor fetched from another
    // network: a strike there, logged with both.
    request([127, 0, 1, 5], to, "GET", anchor, "");
    // Forged tokens of every length, and a good token altered: nobody is
    // caught by them alone.
    let prefix = &script[..14];
    for n in [0, 1, 2, 40, 69, 70, 71, 300] {
        let t = format!("{prefix}{}", "A".repeat(n));
        assert!(request([127, 0, 0, 6], to, "GET", &t, "").status < 500);
    }
    let mut bad = script.clone().into_bytes();
    let last = bad.len() - 3;
    bad[last] = if bad[last] == b'A' { b'B' } else { b'A' };
    request(
        [127, 0, 0, 6],
        to,
        "GET",
        std::str::from_utf8(&bad).unwrap(),
        "",
    );
    assert_eq!(
        request([127, 0, 0, 6], to, "GET", "/page", page).status,
        200
    );

    let log = log_with(&events, "client=127.0.1.5 served_to");
    assert!(
        log.lines()
            .any(|l| l.contains(" catch kind=script client=127.0.0.2 ")),
        "{log}"
    );
    assert!(
        log.lines()
            .any(|l| l.contains(" strike kind=anchor client=127.0.0.4 ")),
        "{log}"
    );
    assert!(
        log.lines()
            .any(|l| l.contains(" catch kind=anchor client=127.0.0.4 ")),
        "{log}"
    );
    assert!(
        log.lines()
            .any(|l| l.contains(" strike kind=anchor client=127.0.1.5 served_to=127.0.0.0 ")),
        "{log}"
    );
    assert!(
        !log.lines()
            .any(|l| l.contains("catch") && l.contains("127.0.0.6")),
        "{log}"
    );
    let m = request([127, 0, 0, 1], to, "GET", "/.botscope/metrics", "");
    assert!(
        m.body
            .contains("botscope_gate_trap_catches_total{kind=\"script\"} 1"),
        "{}",
        m.body
    );
    assert!(
        m.body
            .contains("botscope_gate_trap_links_served_total{kind=\"anchor\"}"),
        "{}",
        m.body
    );
}

/// Behind nginx as docs/gate.md configures it: the robots kind through
/// `/auth`, and the page links put in by `sub_filter`.
#[test]
fn nginx_puts_the_pages_links_in_and_refuses_what_they_catch() {
    use std::os::unix::fs::PermissionsExt;
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/gate.md"),
    )
    .unwrap();
    let at = doc.find("```nginx\n").expect("its nginx block") + "```nginx\n".len();
    let block = &doc[at..at + doc[at..].find("```").unwrap()];
    let d = tempfile::tempdir().unwrap();
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let g = super::policy_gate(
        d.path(),
        "default: allow\ntraps:\n  kinds: [robots, script, anchor]\nrules:\n  - {name: trapped, trapped: any, action: deny}\n",
    );
    let www = d.path().join("www");
    write(
        &www,
        "index.html",
        "<html><body><p>the site</p></body></html>\n",
    );
    for p in [&www, &www.join("index.html")] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let nginx = super::Nginx::start(block, g.addr, &www);
    let page = "Accept: text/html\r\nUser-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:130.0) Gecko/20100101 Firefox/130.0\r\n";
    let r = nginx.get("127.0.0.2", "/", page);
    assert_eq!(r.status, 200, "{r:?}");
    assert!(
        r.body.contains("<script type=\"ignore\"><a href=\"/t-"),
        "{}",
        r.body
    );
    assert!(r.body.contains("</a></body></html>"), "{}", r.body);
    let l = links(&r.body);
    // A crude extractor: caught through /auth, refused from then on.
    assert_eq!(nginx.get("127.0.0.2", &l[0], page).status, 403);
    assert_eq!(nginx.get("127.0.0.2", "/", page).status, 403);
    // Another client reads pages as a person does.
    assert_eq!(nginx.get("127.0.0.3", "/", page).status, 200);
    // The robots kind: the path only robots.txt names.
    let robots = nginx.get("127.0.0.4", "/robots.txt", "");
    let (_, path) = trap_lines(&robots.body);
    assert_eq!(nginx.get("127.0.0.4", &path, "").status, 403);
    assert_eq!(nginx.get("127.0.0.4", "/", page).status, 403);
    assert_eq!(nginx.get("127.0.0.3", "/", page).status, 200);
}

/// Debian's fail2ban with packaging/'s filter and jail, in a network
/// namespace of its own, reads the gate's event log and bans the client
/// a trap caught into an nftables set, and nobody else.
#[test]
fn fail2ban_bans_what_the_gate_caught_into_nftables() {
    use std::process::Command;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let d = tempfile::tempdir().unwrap();
    let conf = d.path().join("conf");
    let ok = Command::new("cp")
        .arg("-r")
        .arg("/etc/fail2ban")
        .arg(&conf)
        .status()
        .expect("Debian's fail2ban (the test command in README installs it)");
    assert!(ok.success());
    for f in std::fs::read_dir(conf.join("jail.d")).unwrap() {
        std::fs::remove_file(f.unwrap().path()).unwrap();
    }
    for f in ["filter.d/botscope-gate.conf", "jail.d/botscope-gate.conf"] {
        std::fs::copy(root.join("packaging/fail2ban").join(f), conf.join(f)).unwrap();
    }
    let events = d.path().join("events.log");
    let sock = d.path().join("f2b.sock");
    std::fs::write(
        conf.join("fail2ban.local"),
        format!(
            "[Definition]\nlogtarget = {}\nsocket = {}\npidfile = {}\ndbfile = :memory:\n",
            d.path().join("f2b.log").display(),
            sock.display(),
            d.path().join("f2b.pid").display()
        ),
    )
    .unwrap();
    std::fs::write(
        conf.join("jail.d/botscope-gate.local"),
        format!(
            "[botscope-gate]\nenabled = true\nlogpath = {}\n",
            events.display()
        ),
    )
    .unwrap();

    let rd = d.path().join("robots");
    write(&rd, "default.txt", "User-agent: *\nDisallow: /private/\n");
    std::fs::write(d.path().join("policy.yaml"), POLICY).unwrap();
    let app = Recorder::start(None);
    let gate = serve(Config {
        policy: Some(d.path().join("policy.yaml")),
        upstream: Some(UpstreamConfig::new(url::Url::parse(&app.url()).unwrap())),
        events: Some(botscope_gate::decisions::DecisionLogConfig {
            path: events.clone(),
            all: true,
            max_bytes: 1 << 20,
        }),
        ..Config::new(rd)
    });

    // Root makes a network namespace; anyone else, a user namespace with it.
    let root_user = Command::new("id").arg("-u").output().unwrap().stdout == b"0\n";
    let mut server = Command::new("unshare")
        .args(if root_user { &["-n"][..] } else { &["-rn"][..] })
        .args(["fail2ban-server", "-f", "-x", "-c"])
        .arg(&conf)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    struct Stop(std::process::Child);
    impl Drop for Stop {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let pid = server.id().to_string();
    let status = || {
        Command::new("fail2ban-client")
            .arg("-s")
            .arg(&sock)
            .args(["status", "botscope-gate"])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default()
    };
    let t = std::time::Instant::now();
    while !status().contains("Banned IP list") {
        if let Ok(Some(s)) = server.try_wait() {
            panic!("fail2ban-server exited: {s}");
        }
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "fail2ban never started"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let server = Stop(std::mem::replace(
        &mut server,
        Command::new("true").spawn().unwrap(),
    ));

    // A catch, the refusal it causes, an exempt client's hit.
    let to = gate.addr;
    let (_, path) = trap_lines(&request([127, 0, 0, 2], to, "GET", "/robots.txt", "").body);
    assert_eq!(request([127, 0, 0, 2], to, "GET", &path, "").status, 403);
    assert_eq!(request([127, 0, 0, 2], to, "GET", "/", "").status, 403);
    assert_eq!(request([127, 0, 0, 9], to, "GET", &path, "").status, 404);
    let t = std::time::Instant::now();
    while !status().contains("Banned IP list:\t127.0.0.2") {
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "{}\n{}",
            status(),
            std::fs::read_to_string(&events).unwrap()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(status().contains("Currently banned:\t1"), "{}", status());
    let set = Command::new("nsenter")
        .args(["-t", &pid, "-n"])
        .args(if root_user {
            &[][..]
        } else {
            &["-U", "--preserve-credentials"][..]
        })
        .args([
            "nft",
            "list",
            "set",
            "inet",
            "f2b-table",
            "addr-set-botscope-gate",
        ])
        .output()
        .unwrap();
    let set = String::from_utf8_lossy(&set.stdout);
    assert!(set.contains("elements = { 127.0.0.2 }"), "{set}");
    drop(server);
}

/// A site of a dozen pages, each linking to the next ones, whose script
/// prefetches every link on the page once it has loaded (as quicklink
/// and speculative loading do).
fn dozen_pages_app() -> SocketAddr {
    use std::io::{BufRead, Write};
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { continue };
            std::thread::spawn(move || {
                let mut r = std::io::BufReader::new(s.try_clone().unwrap());
                let mut first = String::new();
                let _ = r.read_line(&mut first);
                loop {
                    let mut line = String::new();
                    if r.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                }
                let target = first.split(' ').nth(1).unwrap_or("/").to_owned();
                let n: usize = target
                    .strip_prefix("/p/")
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(0);
                let links: String = (1..=3)
                    .map(|k| format!("<li><a href=\"/p/{}\">Page {}</a></li>", n + k, n + k))
                    .collect();
                let page = format!(
                    "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Page {n}</title></head>\
                     <body><main><h1>Page {n}</h1><p>Some text to read.</p><nav aria-label=\"next\"><ul>{links}</ul></nav></main>\
                     <script>addEventListener('load', () => {{ for (const a of document.querySelectorAll('a[href]')) {{ const l = document.createElement('link'); l.rel = 'prefetch'; l.href = a.href; document.head.appendChild(l); }} }});</script>\
                     </body></html>"
                );
                let _ = write!(
                    s,
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{page}",
                    page.len()
                );
            });
        }
    });
    addr
}

/// A person's browser (headless Chromium) reading a dozen pages, its
/// page's script prefetching every link, trap links included: never
/// caught; and axe-core finds nothing on a page with traps that it does
/// not find on the same page without.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_browser_reading_pages_is_never_caught() {
    use botscope_testkit::webdriver::Browser;
    let app = dozen_pages_app();
    let d = botscope_testkit::tempdir();
    let (gate, events) = gate_with_events(
        d.path(),
        app,
        "version: 1\ntraps:\n  kinds: [robots, script, anchor]\ndefault: allow\nrules:\n  - name: trapped\n    trapped: any\n    action: deny\n",
    );
    let b = Browser::start(1400, 1000).await;
    let mut with_traps = Vec::new();
    for n in 0..12 {
        b.client
            .goto(&format!("http://{}/p/{n}", gate.addr))
            .await
            .unwrap();
        let title = b.client.title().await.unwrap();
        assert_eq!(title, format!("Page {n}"), "page {n} was served");
        // Let the prefetches go out.
        tokio::time::sleep(Duration::from_millis(150)).await;
        if n == 0 {
            let html = b.client.source().await.unwrap();
            assert!(html.contains("<script type=\"ignore\">"), "{html}");
            with_traps = b.accessibility().await;
        }
    }
    // The same page straight from the application: axe-core's findings.
    b.client.goto(&format!("http://{app}/p/0")).await.unwrap();
    let without = b.accessibility().await;
    b.close().await;
    assert_eq!(
        with_traps, without,
        "the trap links add no accessibility problem"
    );
    let m = botscope_testkit::http::read_response(
        {
            let mut s = std::net::TcpStream::connect(gate.addr).unwrap();
            std::io::Write::write_all(
                &mut s,
                b"GET /.botscope/metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
            )
            .unwrap();
            s
        },
        "metrics",
    );
    for kind in ["robots", "script", "anchor"] {
        assert!(
            m.body.contains(&format!(
                "botscope_gate_trap_catches_total{{kind=\"{kind}\"}} 0"
            )),
            "{}\n{}",
            m.body,
            std::fs::read_to_string(&events).unwrap_or_default()
        );
    }
    let log = std::fs::read_to_string(&events).unwrap_or_default();
    assert!(
        !log.contains(" catch ") && !log.contains(" strike "),
        "{log}"
    );
    // The prefetches did ask for the anchor links: counted, nothing more.
    let hits = m
        .body
        .lines()
        .find_map(|l| l.strip_prefix("botscope_gate_trap_hits_total{kind=\"anchor\"} "))
        .and_then(|n| n.parse::<u64>().ok())
        .unwrap_or(0);
    assert!(hits >= 6, "{}", m.body);
}

/// A verified crawler that fetches a trap is logged exempt and never
/// caught; the same User-Agent from an address Google does not publish
/// is caught.
#[test]
fn a_verified_crawler_is_exempt() {
    let d = botscope_testkit::tempdir();
    let rd = d.path().join("robots");
    write(&rd, "default.txt", "User-agent: *\nDisallow: /private/\n");
    std::fs::write(d.path().join("policy.yaml"), POLICY).unwrap();
    let events = d.path().join("events.log");
    let gate = serve(Config {
        policy: Some(d.path().join("policy.yaml")),
        identity: Some(super::offline()),
        trust_proxy: vec![botscope_botid::IpRange::parse_any("127.0.0.1/32").unwrap()],
        events: Some(botscope_gate::decisions::DecisionLogConfig {
            path: events.clone(),
            all: true,
            max_bytes: 1 << 20,
        }),
        ..Config::new(rd)
    });
    let ask = |client: &str, path: &str| {
        super::get_with(
            gate.addr,
            "/auth",
            client,
            super::GOOGLEBOT,
            &format!("X-Original-URI: {path}\r\n"),
        )
    };
    let robots = super::get_with(
        gate.addr,
        "/robots.txt",
        "66.249.66.1",
        super::GOOGLEBOT,
        "",
    );
    let (_, path) = trap_lines(&robots.body);
    // Googlebot from Google's published range: exempt, still allowed.
    let r = ask("66.249.66.1", &path);
    assert_eq!(r.header("x-bot-identity"), Some("verified"), "{r:?}");
    assert_eq!(ask("66.249.66.1", "/").status, 200);
    // The same claim from elsewhere: spoofed, caught.
    assert_eq!(ask("203.0.113.50", &path).status, 403);
    assert_eq!(ask("203.0.113.50", "/").status, 403);
    let log = log_with(&events, " catch kind=robots client=203.0.113.50 ");
    assert!(
        log.contains(" exempt kind=robots client=66.249.66.1 "),
        "{log}"
    );
    assert!(
        log.contains(" catch kind=robots client=203.0.113.50 "),
        "{log}"
    );
    assert!(
        !log.contains("catch kind=robots client=66.249.66.1"),
        "{log}"
    );
}

/// The tarpit: a caught client's refusals wait a second, then twice as
/// long, up to the cap; past the refusals it may hold, one is sent at
/// once.
#[test]
fn the_tarpit_holds_a_caught_clients_refusals_within_its_bounds() {
    let d = botscope_testkit::tempdir();
    let rd = d.path().join("robots");
    write(&rd, "default.txt", "User-agent: *\nDisallow: /private/\n");
    std::fs::write(
        d.path().join("policy.yaml"),
        "default: allow\ntraps:\n  kinds: [robots]\n  tarpit: {max: 2s, held: 1}\nrules:\n  - {name: trapped, trapped: any, action: deny}\n",
    )
    .unwrap();
    let app = Recorder::start(None);
    let gate = serve(Config {
        policy: Some(d.path().join("policy.yaml")),
        upstream: Some(UpstreamConfig::new(url::Url::parse(&app.url()).unwrap())),
        ..Config::new(rd)
    });
    let to = gate.addr;
    let (_, path) = trap_lines(&request([127, 0, 0, 2], to, "GET", "/robots.txt", "").body);
    let timed = |from: [u8; 4], path: &str| {
        let t = std::time::Instant::now();
        let s = request(from, to, "GET", path, "").status;
        (s, t.elapsed())
    };
    // The catch's own refusal: a second; then two, and two (the cap).
    let (s, first) = timed([127, 0, 0, 2], &path);
    assert_eq!(s, 403);
    assert!(first >= Duration::from_millis(1_000), "{first:?}");
    let (_, second) = timed([127, 0, 0, 2], "/");
    assert!(second >= Duration::from_millis(2_000), "{second:?}");
    // A client never caught is not held.
    assert_eq!(request([127, 0, 0, 9], to, "GET", "/", "").status, 200);
    // Two refusals at once, one place: the second is sent while the
    // first still waits.
    let (tx, rx) = std::sync::mpsc::channel();
    let tx2 = tx.clone();
    let a = std::thread::spawn(move || {
        let r = request([127, 0, 0, 2], to, "GET", "/a", "");
        tx.send(("held", r.status)).unwrap();
    });
    std::thread::sleep(Duration::from_millis(300));
    let b = std::thread::spawn(move || {
        let r = request([127, 0, 0, 2], to, "GET", "/b", "");
        tx2.send(("at once", r.status)).unwrap();
    });
    let order: Vec<(&str, u16)> = (0..2).map(|_| rx.recv().unwrap()).collect();
    a.join().unwrap();
    b.join().unwrap();
    assert_eq!(order, [("at once", 403), ("held", 403)]);
}

/// `policy replay` with the gate's key: the access log of what the gate
/// decided, replayed, catches the same clients and decides as it did.
#[test]
fn replay_with_the_key_reproduces_the_catches() {
    let d = botscope_testkit::tempdir();
    let rd = d.path().join("robots");
    write(&rd, "default.txt", "User-agent: *\nDisallow: /private/\n");
    let policy = "default: allow\ntraps:\n  kinds: [robots, anchor]\nrules:\n  - {name: trapped, trapped: any, action: deny}\n";
    std::fs::write(d.path().join("policy.yaml"), policy).unwrap();
    let key = vec![9u8; 32];
    let gate = serve(Config {
        policy: Some(d.path().join("policy.yaml")),
        trust_proxy: vec![botscope_botid::IpRange::parse_any("127.0.0.1/32").unwrap()],
        challenge: Some(botscope_gate::challenge::ChallengeConfig::new(key.clone())),
        ..Config::new(rd)
    });
    let robots = super::get_with(gate.addr, "/robots.txt", "198.51.100.1", "x", "");
    let (prefix, path) = trap_lines(&robots.body);
    let asked = [
        ("198.51.100.1", "/".to_owned()),
        ("198.51.100.1", path.clone()),
        ("198.51.100.1", "/".to_owned()),
        ("198.51.100.2", format!("{prefix}forged")),
        ("198.51.100.2", "/".to_owned()),
        ("198.51.100.3", "/".to_owned()),
    ];
    let mut log = String::new();
    let mut live = Vec::new();
    for (ip, p) in &asked {
        let r = super::get_with(
            gate.addr,
            "/auth",
            ip,
            "scraper/1.0",
            &format!("X-Original-URI: {p}\r\n"),
        );
        live.push(r.header("x-bot-rule").unwrap_or("").to_owned());
        let when = jiff::Timestamp::now().strftime("%d/%b/%Y:%H:%M:%S +0000");
        log.push_str(&format!(
            "{ip} - - [{when}] \"GET {p} HTTP/1.1\" 200 10 \"-\" \"scraper/1.0\"\n"
        ));
    }
    assert_eq!(
        live,
        [
            "default", "trapped", "trapped", "default", "default", "default"
        ]
    );
    let parsed =
        botscope_policy::parse("policy.yaml", policy, &botscope_botid::Registry::bundled());
    let replay = |trap_key: Option<Vec<u8>>| {
        let cfg = botscope_gate::replay::ReplayConfig {
            policy: std::sync::Arc::new(parsed.policy.clone().unwrap()),
            identity: super::offline(),
            robots: None,
            lists: None,
            format: None,
            evidence: None,
            trap_key,
        };
        let mut rules = Vec::new();
        let input: Box<dyn std::io::BufRead> = Box::new(log.as_bytes());
        botscope_gate::replay::replay_with(cfg, vec![("log".into(), input)], &mut |d| {
            rules.push(d.rule.to_owned());
        })
        .unwrap();
        rules
    };
    assert_eq!(replay(Some(key)), live);
    // Without the key the trap paths are not known: nobody is caught.
    assert!(replay(None).iter().all(|r| r == "default"));
}

/// Debian's CrowdSec Local API on a loopback port, with a database and a
/// configuration of its own in `dir` (no Central API: nothing leaves the
/// machine), stopped by its PID when dropped.
struct Lapi {
    child: std::process::Child,
    config: std::path::PathBuf,
}

impl Drop for Lapi {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Lapi {
    fn start(dir: &std::path::Path) -> Lapi {
        use std::process::Command;
        std::fs::create_dir_all(dir).unwrap();
        let etc = dir.join("etc");
        let ok = Command::new("cp")
            .arg("-r")
            .arg("/etc/crowdsec")
            .arg(&etc)
            .status()
            .expect("Debian's crowdsec (the test command in README installs it)");
        assert!(ok.success());
        let _ = std::fs::remove_file(etc.join("config.yaml.local"));
        for d in ["data", "log"] {
            std::fs::create_dir_all(dir.join(d)).unwrap();
        }
        let port = botscope_testkit::free_port();
        let url = format!("http://127.0.0.1:{port}/");
        let d = dir.display();
        let config = etc.join("config.yaml");
        std::fs::write(
            &config,
            format!(
                "common:\n  daemonize: false\n  log_media: file\n  log_level: info\n  log_dir: {d}/log/\n  working_dir: .\n\
                 config_paths:\n  config_dir: {d}/etc/\n  data_dir: {d}/data/\n  simulation_path: {d}/etc/simulation.yaml\n  hub_dir: /var/lib/crowdsec/hub/\n  index_path: /var/lib/crowdsec/hub/.index.json\n  notification_dir: {d}/etc/notifications/\n  plugin_dir: /usr/lib/crowdsec/plugins/\n\
                 crowdsec_service:\n  acquisition_path: {d}/etc/acquis.yaml\n\
                 cscli:\n  output: human\n\
                 db_config:\n  type: sqlite\n  db_path: {d}/data/crowdsec.db\n  use_wal: false\n\
                 api:\n  client:\n    credentials_path: {d}/etc/local_api_credentials.yaml\n  server:\n    log_level: info\n    listen_uri: 127.0.0.1:{port}\n    profiles_path: {d}/etc/profiles.yaml\n    trusted_ips:\n      - 127.0.0.1\n\
                 prometheus:\n  enabled: false\n"
            ),
        )
        .unwrap();
        std::fs::write(
            etc.join("local_api_credentials.yaml"),
            format!("url: {url}\nlogin: x\npassword: y\n"),
        )
        .unwrap();
        let child = Command::new("crowdsec")
            .arg("-c")
            .arg(&config)
            .arg("-no-cs")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let mut lapi = Lapi { child, config };
        let t = std::time::Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Ok(Some(s)) = lapi.child.try_wait() {
                panic!("crowdsec exited: {s}");
            }
            assert!(
                t.elapsed() < Duration::from_secs(30),
                "the Local API never listened"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        // cscli's own machine, for `decisions list`.
        lapi.cscli(
            &["machines", "add", "cscli-local", "--auto", "--force", "-f"],
            Some(&etc.join("local_api_credentials.yaml")),
        );
        lapi
    }

    fn cscli(&self, args: &[&str], file: Option<&std::path::Path>) -> String {
        let mut c = std::process::Command::new("cscli");
        c.arg("-c").arg(&self.config).args(args);
        if let Some(f) = file {
            c.arg(f);
        }
        let o = c.output().unwrap();
        assert!(
            o.status.success(),
            "cscli {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    }
}

/// The CrowdSec sink against Debian's real Local API: the gate logs in as
/// a machine and pushes a catch as an alert without a decision; the
/// default profile makes the ban `cscli decisions list -a` shows, and a
/// client never caught has none.
#[test]
fn a_catch_becomes_a_crowdsec_decision() {
    let d = botscope_testkit::tempdir();
    let lapi = Lapi::start(&d.path().join("crowdsec"));
    let creds = d.path().join("gate-machine.yaml");
    lapi.cscli(
        &["machines", "add", "botscope-gate", "--auto", "-f"],
        Some(&creds),
    );
    let rd = d.path().join("robots");
    write(&rd, "default.txt", "User-agent: *\nDisallow: /private/\n");
    std::fs::write(d.path().join("policy.yaml"), POLICY).unwrap();
    let app = Recorder::start(None);
    let mut cfg =
        botscope_gate::crowdsec::CrowdsecConfig::read(&std::fs::read_to_string(&creds).unwrap())
            .unwrap();
    cfg.timeout = Duration::from_secs(5);
    let gate = serve(Config {
        policy: Some(d.path().join("policy.yaml")),
        upstream: Some(UpstreamConfig::new(url::Url::parse(&app.url()).unwrap())),
        crowdsec: Some(cfg),
        ..Config::new(rd)
    });
    let to = gate.addr;
    let (_, path) = trap_lines(&request([127, 0, 0, 2], to, "GET", "/robots.txt", "").body);
    assert_eq!(request([127, 0, 0, 2], to, "GET", &path, "").status, 403);
    assert_eq!(request([127, 0, 0, 3], to, "GET", "/", "").status, 200);
    let t = std::time::Instant::now();
    let list = loop {
        let l = lapi.cscli(&["decisions", "list", "-a", "-o", "json"], None);
        if l.contains("127.0.0.2") || t.elapsed() > Duration::from_secs(20) {
            break l;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let v: serde_json::Value = serde_json::from_str(&list).unwrap_or_default();
    let alerts = v.as_array().cloned().unwrap_or_default();
    let m = request([127, 0, 0, 1], to, "GET", "/.botscope/metrics", "");
    let exports: Vec<&str> = m
        .body
        .lines()
        .filter(|l| l.starts_with("botscope_gate_export"))
        .collect();
    assert_eq!(alerts.len(), 1, "{list}\n{exports:?}");
    let a = &alerts[0];
    assert_eq!(a["scenario"], "botscope/trap-robots", "{list}");
    assert_eq!(a["machine_id"], "botscope-gate");
    let decision = &a["decisions"][0];
    assert_eq!(
        (decision["value"].as_str(), decision["type"].as_str()),
        (Some("127.0.0.2"), Some("ban")),
        "{list}"
    );
    assert!(!list.contains("127.0.0.3"));
    assert!(
        m.body
            .contains("botscope_gate_exports_total{sink=\"crowdsec\",outcome=\"sent\"} 1"),
        "{}",
        m.body
    );
}

/// A Local API that trickles its answer a byte a second, or answers with
/// what is not a login or a list of alert ids: each catch is counted
/// failed after its tries, within the timeout each, and the gate goes on
/// answering.
#[test]
fn a_crowdsec_that_trickles_or_lies_is_counted_failed() {
    use std::io::{Read, Write};
    for lie in [false, true] {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        std::thread::spawn(move || {
            for s in l.incoming() {
                let Ok(mut s) = s else { continue };
                std::thread::spawn(move || {
                    let mut buf = [0u8; 4096];
                    let _ = s.read(&mut buf);
                    if lie {
                        let body = if buf.starts_with(b"POST /v1/watchers/login") {
                            "{\"token\":\"t\"}"
                        } else {
                            "{\"ids\":7}"
                        };
                        let _ = write!(
                            s,
                            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                            body.len()
                        );
                    } else {
                        for b in b"HTTP/1.1 200 OK\r\n" {
                            if s.write_all(&[*b]).is_err() {
                                return;
                            }
                            std::thread::sleep(Duration::from_secs(1));
                        }
                    }
                });
            }
        });
        let d = botscope_testkit::tempdir();
        let rd = d.path().join("robots");
        write(&rd, "default.txt", "User-agent: *\nDisallow: /private/\n");
        std::fs::write(d.path().join("policy.yaml"), POLICY).unwrap();
        let app = Recorder::start(None);
        let mut cfg = botscope_gate::crowdsec::CrowdsecConfig::read(&format!(
            "url: http://{addr}\nlogin: m\npassword: p\n"
        ))
        .unwrap();
        cfg.timeout = Duration::from_millis(300);
        let gate = serve(Config {
            policy: Some(d.path().join("policy.yaml")),
            upstream: Some(UpstreamConfig::new(url::Url::parse(&app.url()).unwrap())),
            crowdsec: Some(cfg),
            ..Config::new(rd)
        });
        let to = gate.addr;
        let (_, path) = trap_lines(&request([127, 0, 0, 2], to, "GET", "/robots.txt", "").body);
        assert_eq!(request([127, 0, 0, 2], to, "GET", &path, "").status, 403);
        let t = std::time::Instant::now();
        loop {
            // The gate answers meanwhile.
            assert_eq!(request([127, 0, 0, 3], to, "GET", "/", "").status, 200);
            let m = request([127, 0, 0, 1], to, "GET", "/.botscope/metrics", "");
            if m.body
                .contains("botscope_gate_exports_total{sink=\"crowdsec\",outcome=\"failed\"} 1")
            {
                assert!(m.body.contains("outcome=\"sent\"} 0"), "{}", m.body);
                break;
            }
            assert!(
                t.elapsed() < Duration::from_secs(20),
                "lie {lie}: {}",
                m.body
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}
