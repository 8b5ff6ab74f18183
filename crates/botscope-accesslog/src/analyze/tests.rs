//! Tests of the aggregation and classification.

use std::borrow::Cow;
use std::net::IpAddr;

use super::client::SEG;
use super::*;
use crate::Record;

#[test]
fn append_kept_keeps_order_and_full_segments() {
    let mk = |n: u32| Client::new(IpAddr::from(n.to_be_bytes()), n, 0);
    let mut a = Clients::default();
    for n in 0..10 {
        a.push(mk(n));
    }
    let mut b = Clients::default();
    let total = 2 * SEG as u32 + 100;
    for n in 0..total {
        b.push(mk(1000 + n));
    }
    let keep: Vec<bool> = (0..total).map(|n| n % 3 != 1).collect();
    a.append_kept(b.segs, &keep);
    let want: Vec<u32> = (0..10)
        .chain((0..total).filter(|n| n % 3 != 1).map(|n| 1000 + n))
        .collect();
    let got: Vec<u32> = a.iter().map(|c| c.agent).collect();
    assert_eq!(got.len(), want.len());
    assert!(got == want, "order differs");
    assert_eq!(a.len(), want.len());
    let (last, full) = a.segs.split_last().expect("segments");
    assert!(full.iter().all(|s| s.len() == SEG) && last.len() <= SEG);
    for (i, n) in want.iter().enumerate() {
        assert_eq!(a[i].agent, *n);
    }
}

#[test]
fn client_record_stays_small() {
    // Memory is bounded by distinct clients: this is the price of one,
    // three cache lines; what every request touches is in the first two.
    assert!(size_of::<Client>() <= 192, "{}", size_of::<Client>());
    assert!(std::mem::offset_of!(Client, more_paths) < 128);
}

struct Ua;
impl Identify for Ua {
    fn identify(&self, ua: Option<&str>) -> Agent {
        match ua {
            Some(u) if u.contains("Googlebot") => Agent {
                robot: Some("Googlebot".into()),
                registered: true,
                token: Some("Googlebot".into()),
                ..Agent::default()
            },
            Some(u) if u.contains("UptimeRobot") => Agent {
                robot: Some("UptimeRobot".into()),
                monitor: true,
                ..Agent::default()
            },
            _ => Agent::default(),
        }
    }
}

/// Disallows /private for everyone.
struct Rules;
impl Policy for Rules {
    fn disallowed(&self, _: Option<&str>, target: &str, _: i64) -> Option<bool> {
        Some(target.starts_with("/private"))
    }
    fn crawl_delay(&self, _: Option<&str>, _: i64) -> Option<f64> {
        Some(10.0)
    }
}

fn rec<'a>(
    ip: &str,
    t: i64,
    method: &'a str,
    path: &'a str,
    referer: bool,
    ua: &'a str,
) -> Record<'a> {
    Record {
        vhost: None,
        ip: ip.parse().expect("ip"),
        user: None,
        time: t,
        method: Cow::Borrowed(method),
        path: Cow::Borrowed(path),
        protocol: Cow::Borrowed("HTTP/1.1"),
        status: if path.contains("wp-") { 404 } else { 200 },
        bytes: 100,
        referer: referer.then_some(Cow::Borrowed("https://example.com/")),
        user_agent: (!ua.is_empty()).then_some(Cow::Borrowed(ua)),
        duration_us: None,
        signed: Default::default(),
        truncated: false,
    }
}

const FIREFOX: &str = "Mozilla/5.0 (X11; Linux x86_64; rv:132.0) Gecko/20100101 Firefox/132.0";

fn sample() -> Vec<Record<'static>> {
    let mut v = Vec::new();
    // A human: two visits a day apart, pages with assets and referers.
    for day in 0..2 {
        let t = 1_000_000 + day * 86_400;
        v.push(rec("192.0.2.1", t, "GET", "/", true, FIREFOX));
        v.push(rec("192.0.2.1", t + 1, "GET", "/app.css", true, FIREFOX));
        v.push(rec("192.0.2.1", t + 60, "GET", "/about", true, FIREFOX));
        v.push(rec("192.0.2.1", t + 61, "GET", "/logo.png", true, FIREFOX));
    }
    // A scraper with a browser User-Agent: 12 pages in 12 seconds.
    for k in 0..12 {
        v.push(rec(
            "198.51.100.9",
            1_000_100 + k,
            "GET",
            "/products?id=1",
            false,
            FIREFOX,
        ));
    }
    // A scanner.
    for p in ["/wp-login.php", "/.env", "/wp-admin/"] {
        v.push(rec("203.0.113.5", 1_000_200, "GET", p, false, FIREFOX));
    }
    // Googlebot, into a disallowed area, too fast for its Crawl-delay.
    v.push(rec(
        "66.249.66.1",
        1_000_300,
        "GET",
        "/robots.txt",
        false,
        "Googlebot/2.1",
    ));
    v.push(rec(
        "66.249.66.1",
        1_000_301,
        "GET",
        "/private/a",
        false,
        "Googlebot/2.1",
    ));
    v.push(rec(
        "66.249.66.1",
        1_000_302,
        "GET",
        "/",
        false,
        "Googlebot/2.1",
    ));
    // A monitor, every 5 minutes for an hour.
    for k in 0..12 {
        v.push(rec(
            "192.0.2.77",
            1_000_000 + k * 300,
            "HEAD",
            "/",
            false,
            "UptimeRobot/2.0",
        ));
    }
    // A client without a User-Agent.
    v.push(rec("192.0.2.99", 1_000_000, "GET", "/", false, ""));
    v
}

fn run(records: &[Record<'_>], threads: usize) -> Analysis {
    let mut parts = Vec::new();
    for t in 0..threads {
        let mut a = Analyzer::new(&Ua, &Rules, Window::default());
        for (i, r) in records.iter().enumerate() {
            if i % threads == t {
                a.record(r, i as u64 + 1);
            }
        }
        parts.push(a.into_partial());
    }
    Partial::finish_all(parts, threads)
}

fn class_of(a: &Analysis, ip: &str) -> (Class, Vec<&'static str>) {
    let ip: IpAddr = ip.parse().expect("ip");
    let i = a
        .folded
        .clients
        .iter()
        .position(|c| c.ip == ip)
        .expect("client");
    let (class, reasons) = a.reasons(i);
    (class, reasons.iter().map(|r| r.code).collect())
}

#[test]
fn classes_with_reasons() {
    let a = run(&sample(), 1);
    assert_eq!(class_of(&a, "192.0.2.1"), (Class::Human, vec![]));
    let (c, r) = class_of(&a, "198.51.100.9");
    assert_eq!(c, Class::UndeclaredBot);
    assert_eq!(r, ["no-assets", "no-referer", "fast"]);
    let (c, r) = class_of(&a, "203.0.113.5");
    assert_eq!(c, Class::Scanner);
    assert_eq!(r, ["probes", "errors"]);
    assert_eq!(class_of(&a, "66.249.66.1").0, Class::DeclaredBot);
    assert_eq!(class_of(&a, "192.0.2.77").0, Class::Monitor);
    assert_eq!(
        class_of(&a, "192.0.2.99"),
        (Class::UndeclaredBot, vec!["no-ua"])
    );
    let g = a
        .folded
        .clients
        .iter()
        .position(|c| c.ip.to_string() == "66.249.66.1")
        .expect("g");
    assert_eq!(a.folded.clients[g].robots_txt, 1);
    assert_eq!(
        (a.folded.clients[g].judged, a.folded.clients[g].disallowed),
        (2, 1)
    );
    assert_eq!(a.disallowed_examples(g)[0].target, "/private/a");
    let human = a
        .folded
        .clients
        .iter()
        .position(|c| c.ip.to_string() == "192.0.2.1")
        .map(|i| a.folded.clients.history(i))
        .expect("h");
    assert_eq!(human.session_count(), 2);
    assert_eq!((human.pages, human.assets), (4, 4));
    // The analysis keeps the class alone (its reasons unwritten); the
    // report's reasons come with the same class, for every client.
    for i in 0..a.folded.clients.len() {
        assert_eq!(a.classes[i], a.reasons(i).0, "client {i}");
    }
}

fn summary(a: &Analysis) -> Vec<String> {
    let mut v: Vec<String> = a
        .folded
        .clients
        .iter()
        .enumerate()
        .map(|(i, _)| {
            let c = a.folded.clients.history(i);
            let (class, reasons) = a.reasons(i);
            let mut hours = Vec::new();
            c.each_hour(|h, n| hours.push((h, n)));
            format!(
                "{} {:?} {} {} {:?} {:?} {:?} {:?}",
                c.ip,
                a.agent_of(&c).0,
                c.requests,
                class.as_str(),
                reasons,
                c.sessions().collect::<Vec<_>>(),
                hours,
                (c.first(), c.last(), c.distinct_paths(), c.status)
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn order_and_threads_do_not_change_the_result() {
    let records = sample();
    let base = summary(&run(&records, 1));
    let mut shuffled = records.clone();
    // A fixed permutation: reverse, then interleave.
    shuffled.reverse();
    let (a, b) = shuffled.split_at(shuffled.len() / 2);
    let mixed: Vec<Record<'_>> = a
        .iter()
        .zip(b)
        .flat_map(|(x, y)| [y.clone(), x.clone()])
        .chain(b.iter().skip(a.len()).cloned())
        .collect();
    assert_eq!(mixed.len(), records.len());
    for threads in [1, 2, 3, 7] {
        assert_eq!(summary(&run(&mixed, threads)), base, "{threads} threads");
    }
}

#[test]
fn sessions_join_when_a_gap_is_filled() {
    let mut s = Spans::new(0, 1, 1);
    s.add(3000, true);
    s.add(6000, true);
    assert_eq!(s.len(), 3);
    // 1500 is within 30 minutes of 0 and of 3000: the first two join.
    s.add(1500, false);
    assert_eq!(s.len(), 2);
    assert_eq!(
        *s.iter().next().expect("a span"),
        Span {
            start: 0,
            end: 3000,
            requests: 3,
            pages: 2
        }
    );
    s.add(4500, false);
    assert_eq!(
        s.iter().copied().collect::<Vec<_>>(),
        [Span {
            start: 0,
            end: 6000,
            requests: 5,
            pages: 3
        }]
    );
    // Exactly 30 minutes apart is still the same session.
    let mut t = Spans::new(0, 1, 0);
    t.add(SESSION_GAP, false);
    t.add(2 * SESSION_GAP + 1, false);
    assert_eq!(t.len(), 2);
}

/// Times in any order give the sessions that sorting them and cutting at
/// every gap over [`SESSION_GAP`] gives; hours likewise.
#[test]
fn sessions_and_hours_match_a_sorted_count_in_any_order() {
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    let mut next = |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    };
    for round in 0..200 {
        let n = 1 + next(60) as usize;
        let spread = [4_000, 40_000, 400_000][round % 3];
        let times: Vec<(i64, bool)> = (0..n)
            .map(|_| (next(spread) as i64, next(2) == 0))
            .collect();
        let mut spans = Spans::new(times[0].0, 1, u32::from(times[0].1));
        let mut hours = Hours::new(hour_of(times[0].0), 1);
        for &(t, page) in &times[1..] {
            spans.add(t, page);
            hours.add(hour_of(t), 1);
        }
        let mut sorted = times.clone();
        sorted.sort();
        let mut want: Vec<Span> = Vec::new();
        for &(t, page) in &sorted {
            match want.last_mut() {
                Some(s) if t <= s.end + SESSION_GAP => {
                    s.end = t;
                    s.requests += 1;
                    s.pages += u32::from(page);
                }
                _ => want.push(Span {
                    start: t,
                    end: t,
                    requests: 1,
                    pages: u32::from(page),
                }),
            }
        }
        assert_eq!(spans.iter().copied().collect::<Vec<_>>(), want, "{times:?}");
        assert_eq!(spans.len(), want.len());
        let mut want_hours: Vec<(i64, u32)> = Vec::new();
        for &(t, _) in &sorted {
            let h = i64::from(hour_of(t));
            match want_hours.last_mut() {
                Some(last) if last.0 == h => last.1 += 1,
                _ => want_hours.push((h, 1)),
            }
        }
        let mut got = Vec::new();
        hours.each(|h, n| got.push((h, n)));
        assert_eq!(got, want_hours);
        // Stepping, with what is set aside settled now and then (as the
        // fold's trail does), gives the same.
        let mut lazy = Spans::new(times[0].0, 1, u32::from(times[0].1));
        let mut lazy_hours = Hours::new(hour_of(times[0].0), 1);
        let (mut aside, mut aside_hours) = (Vec::new(), Vec::new());
        let every = 1 + round % 9;
        for (i, &(t, page)) in times[1..].iter().enumerate() {
            aside.extend(lazy.step(t, page));
            aside_hours.extend(lazy_hours.step(hour_of(t), 1));
            if i % every == every - 1 {
                lazy.settle(&mut aside);
                lazy_hours.settle(&mut aside_hours);
                aside.clear();
                aside_hours.clear();
            }
        }
        lazy.settle(&mut aside);
        lazy_hours.settle(&mut aside_hours);
        assert_eq!(lazy.iter().copied().collect::<Vec<_>>(), want, "{times:?}");
        let mut got = Vec::new();
        lazy_hours.each(|h, n| got.push((h, n)));
        assert_eq!(got, want_hours);
        // Merging two halves gives the same.
        let (a, b) = times.split_at(n / 2);
        if let (Some(fa), Some(fb)) = (a.first(), b.first()) {
            let mut sa = Spans::new(fa.0, 1, u32::from(fa.1));
            a[1..].iter().for_each(|&(t, p)| sa.add(t, p));
            let mut sb = Spans::new(fb.0, 1, u32::from(fb.1));
            b[1..].iter().for_each(|&(t, p)| sb.add(t, p));
            sa.merge(&sb);
            assert_eq!(sa.iter().copied().collect::<Vec<_>>(), want);
        }
    }
}

#[test]
fn top_paths_stay_bounded_and_keep_the_heavy_hitters() {
    let mut t = TopPaths::default();
    for i in 0..20_000u32 {
        t.add(&format!("/p/{i}"), 1);
        if i % 10 == 0 {
            t.add("/hot", 1);
        }
    }
    assert!(t.len() <= TOP_PATHS_CAP);
    assert!(t.approximate);
    assert_eq!(t.top(1)[0], ("/hot", 2000));
}

/// Merging two full counters keeps the same paths whatever order their
/// tables hold them in (each counter hashes with a seed of its own): the
/// same log gives the same top paths every time.
#[test]
fn merged_top_paths_do_not_depend_on_table_order() {
    let merged = || {
        let (mut a, mut b) = (TopPaths::default(), TopPaths::default());
        for i in 0..TOP_PATHS_CAP as u32 {
            a.add(&format!("/a/{i}"), 1);
            b.add(&format!("/b/{i}"), 1 + u64::from(i % 3 == 0));
        }
        a.merge(b);
        let mut all: Vec<(String, u64)> = a
            .top(usize::MAX)
            .into_iter()
            .map(|(p, n)| (p.to_owned(), n))
            .collect();
        all.sort();
        all
    };
    let first = merged();
    assert!(first.len() <= TOP_PATHS_CAP);
    for _ in 0..5 {
        assert_eq!(merged(), first);
    }
}

#[test]
fn seconds_fold_counts() {
    let mut s = Seconds::default();
    for t in (0..5000).rev() {
        s.push(t / 2, t % 10 == 0, t % 2 == 1);
    }
    let v = s.sorted();
    assert_eq!(v.len(), 2500);
    assert!(v.iter().all(|p| p.requests == 2 && p.closed == 1));
    assert_eq!(v.iter().map(|p| p.robots_txt).sum::<u32>(), 500);
    assert!(v.windows(2).all(|w| w[0].t < w[1].t));
}

#[test]
fn window_skips_and_counts() {
    let mut a = Analyzer::new(
        &Ua,
        &NoPolicy,
        Window {
            since: Some(1_000_100),
            until: Some(1_000_200),
        },
    );
    for (i, r) in sample().iter().enumerate() {
        a.record(r, i as u64 + 1);
    }
    let p = a.into_partial();
    assert_eq!(p.folded.records, sample().len() as u64);
    assert_eq!(p.folded.records - p.folded.out_of_window, 12);
}

/// A busy site: thousands of clients, each seen by every thread, their
/// requests hours apart (a session each) and out of order. The last fold
/// merges the clients both sides have on several threads; any number of
/// threads gives what one does.
#[test]
fn many_shared_clients_fold_alike_on_any_number_of_threads() {
    let ips: Vec<String> = (0..3000u32)
        .map(|n| format!("10.{}.{}.{}", n >> 16, (n >> 8) & 255, n & 255))
        .collect();
    let mut records = Vec::new();
    for round in 0..6i64 {
        for (n, ip) in ips.iter().enumerate() {
            // Rounds 2 hours apart, the odd ones earlier than the even.
            let t = 1_000_000 + (if round % 2 == 0 { round } else { 10 - round }) * 7_200;
            let ua = if n % 7 == 0 { "Googlebot/2.1" } else { FIREFOX };
            records.push(rec(ip, t + n as i64, "GET", "/page", false, ua));
        }
    }
    let base = summary(&run(&records, 1));
    assert_eq!(base.len(), 3000);
    assert!(base[0].contains("start"), "sessions listed: {}", base[0]);
    for threads in [2, 3] {
        assert_eq!(summary(&run(&records, threads)), base, "{threads} threads");
    }
}

/// A request between an earlier session and the latest, after the earlier
/// one was settled, joins all three on the next settling, even when
/// nothing else was set aside meanwhile.
#[test]
fn a_late_request_joins_a_settled_session() {
    let mut s = Spans::new(0, 1, 0);
    let mut aside: Vec<Span> = s.step(2_000, false).into_iter().collect();
    s.settle(&mut aside);
    assert_eq!(s.len(), 2);
    let mut aside: Vec<Span> = s.step(1_000, false).into_iter().collect();
    s.settle(&mut aside);
    assert_eq!(
        s.iter().copied().collect::<Vec<_>>(),
        [Span {
            start: 0,
            end: 2_000,
            requests: 3,
            pages: 0
        }]
    );
}

/// Two IPv6 clients whose addresses share a key in the client index
/// (found by trying addresses), with the same User-Agent, stay two
/// clients whether their records are folded one at a time or looked up
/// ahead: the index's candidate is confirmed by the whole address.
#[test]
fn addresses_sharing_a_key_stay_apart() {
    let mut seen = HashMap::new();
    let (a, b) = (0u32..)
        .find_map(|n| {
            let ip = IpAddr::from(std::net::Ipv6Addr::new(
                0x2001,
                0xdb8,
                0,
                0,
                0,
                0,
                (n >> 16) as u16,
                n as u16,
            ));
            seen.insert(fold::ip_key(ip), ip).map(|other| (other, ip))
        })
        .expect("a shared key");
    assert_ne!(a, b);
    assert_eq!(fold::ip_key(a), fold::ip_key(b));
    let (a, b) = (a.to_string(), b.to_string());
    let records: Vec<Record<'_>> = (0..40)
        .map(|k| {
            let ip = if k % 3 == 0 { &a } else { &b };
            rec(ip, 1_000_000 + k, "GET", "/", false, FIREFOX)
        })
        .collect();
    let one_at_a_time = summary(&run(&records, 1));
    let mut an = Analyzer::new(&Ua, &Rules, Window::default());
    let numbered: Vec<(Record<'_>, u64)> = records.iter().cloned().zip(1..).collect();
    an.record_all(&numbered);
    let ahead = summary(&Partial::finish_all(vec![an.into_partial()], 1));
    assert_eq!(one_at_a_time.len(), 2, "{one_at_a_time:?}");
    assert_eq!(ahead, one_at_a_time);
    assert!(
        ahead
            .iter()
            .any(|s| s.starts_with(&format!("{a} ")) && s.contains(" 14 "))
    );
}

/// What the clients set aside, left beside them at the end of the fold
/// and read by [`Clients::history`], reads as the same sessions, hours,
/// classes and counts as when it is taken back into each client first:
/// on one thread, across a merge with clients on both sides, past a
/// client cap (clients of the other side dropped), and on the index path
/// of three threads. Times come in any order, hours and days apart.
#[test]
fn set_aside_histories_read_as_settled() {
    let mut records = Vec::new();
    let mut x: u64 = 7;
    for k in 0..6_000u32 {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let ip = format!("10.0.{}.{}", (x >> 40) % 4, (x >> 33) % 100);
        let t = 1_000_000 + ((x >> 20) % 400_000) as i64;
        let ua = if k % 5 == 0 { "Googlebot/2.1" } else { FIREFOX };
        records.push(rec(&ip, t, "GET", "/page", k % 3 == 0, ua));
    }
    // Records shared out by line (clients on every thread) or by
    // address (each client on one thread, as the reading pipeline shares
    // out the common formats).
    let by_address = |r: &Record<'_>| match r.ip {
        IpAddr::V4(a) => usize::from(a.octets()[3]),
        IpAddr::V6(_) => 0,
    };
    let cases = [
        (1, MAX_CLIENTS, false),
        (2, MAX_CLIENTS, false),
        (2, MAX_CLIENTS, true),
        (2, 500, false),
        (2, 300, true),
        (3, MAX_CLIENTS, false),
    ];
    for (threads, cap, split) in cases {
        let partials = |settled: bool| -> Vec<Partial> {
            (0..threads)
                .map(|t| {
                    let mut a = Analyzer::new(&Ua, &Rules, Window::default()).with_max_clients(cap);
                    for (i, r) in records.iter().enumerate() {
                        if (if split { by_address(r) } else { i }) % threads == t {
                            a.record(r, i as u64 + 1);
                        }
                    }
                    let mut p = a.into_partial();
                    if settled {
                        p.folded.clients.take_back_all();
                    }
                    p
                })
                .collect()
        };
        let aside = partials(false);
        assert!(
            aside
                .iter()
                .all(|p| !p.folded.clients.spans.is_empty() && !p.folded.clients.hours.is_empty()),
            "{threads} threads: something set aside"
        );
        let lazy = Partial::finish_all(aside, threads);
        let settled = Partial::finish_all(partials(true), threads);
        assert!(lazy.folded.clients.len() > 100, "{threads} threads");
        assert_eq!(
            summary(&lazy),
            summary(&settled),
            "{threads} threads, cap {cap}, by address: {split}"
        );
    }
}
