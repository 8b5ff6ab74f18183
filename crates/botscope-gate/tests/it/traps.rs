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
    let log = std::fs::read_to_string(&events).unwrap();
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
