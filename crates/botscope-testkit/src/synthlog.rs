//! A synthetic access log in the combined format, for benches and
//! end-to-end tests: humans browsing (pages with their assets, referers,
//! daytime), declared crawlers from their operators' addresses (robots.txt
//! first, steady pace), fake Googlebots from other addresses, scrapers with
//! browser User-Agents, vulnerability scanners, monitors, and a share of
//! malformed lines. Deterministic for a seed.
//!
//! ```sh
//! cargo run --release -p botscope-testkit --example gen_log -- --lines 2000000 --seed 1 > big.log
//! ```

use std::io::{BufWriter, Write};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len() as u64) as usize]
    }
}

const BROWSERS: &[&str] = &[
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15",
    "Mozilla/5.0 (X11; Linux x86_64; rv:132.0) Gecko/20100101 Firefox/132.0",
    "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1",
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Mobile Safari/537.36",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36 Edg/130.0.0.0",
];

/// Declared crawlers: User-Agent and a prefix of their published addresses.
const CRAWLERS: &[(&str, [u8; 3])] = &[
    (
        "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
        [66, 249, 66],
    ),
    (
        "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)",
        [157, 55, 39],
    ),
    (
        "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)",
        [20, 171, 207],
    ),
    (
        "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/13.1.1 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)",
        [17, 241, 75],
    ),
];

const PAGES: &[&str] = &[
    "/",
    "/about",
    "/blog/",
    "/blog/rust-robots",
    "/blog/crawl-budget",
    "/products/",
    "/products/widget?id=42",
    "/search?q=robots",
    "/contact",
    "/docs/getting-started",
    "/docs/api",
    "/private/report.pdf",
];
const ASSETS: &[&str] = &[
    "/static/app.css",
    "/static/app.js",
    "/static/logo.png",
    "/favicon.ico",
    "/static/font.woff2",
];
const SCANS: &[&str] = &[
    "/wp-login.php",
    "/.env",
    "/phpmyadmin/",
    "/admin/config.php",
    "/.git/config",
    "/cgi-bin/test.cgi",
    "/xmlrpc.php",
    "/vendor/phpunit/src/Util/PHP/eval-stdin.php",
    "/boaform/admin/formLogin",
    "/actuator/env",
];

/// `17/May/2015:10:05:03 +0000` for a Unix time, from the library's
/// RFC 3339 form (`2015-05-17T10:05:03Z`).
fn time(t: i64) -> String {
    const M: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let iso = botscope_accesslog::format_rfc3339(t);
    let month: usize = iso[5..7].parse().unwrap_or(1);
    format!(
        "{}/{}/{}:{} +0000",
        &iso[8..10],
        M[month - 1],
        &iso[..4],
        &iso[11..19]
    )
}

/// Writes `lines` lines of the log for `seed` to `out`.
pub fn write(out: impl Write, lines: u64, seed: u64) -> std::io::Result<()> {
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut out = BufWriter::with_capacity(1 << 20, out);
    let mut t: i64 = 1_763_769_600; // 2025-11-22 00:00:00 UTC
    let mut written = 0u64;
    let site = "https://www.example.com";
    while written < lines {
        t += rng.below(3) as i64;
        let kind = rng.below(1000);
        let emit = |line: String, out: &mut BufWriter<_>| -> std::io::Result<()> {
            out.write_all(line.as_bytes())?;
            out.write_all(b"\n")
        };
        let clf = |ip: &str,
                   t: i64,
                   method: &str,
                   path: &str,
                   status: u16,
                   bytes: u64,
                   referer: &str,
                   ua: &str| {
            format!(
                "{ip} - - [{}] \"{method} {path} HTTP/1.1\" {status} {bytes} \"{referer}\" \"{ua}\"",
                time(t)
            )
        };
        match kind {
            // Humans: a page and its assets, with referers.
            0..=549 => {
                let ip = format!(
                    "{}.{}.{}.{}",
                    81 + rng.below(100),
                    rng.below(256),
                    rng.below(256),
                    1 + rng.below(254)
                );
                let ua = *rng.pick(BROWSERS);
                let page = *rng.pick(PAGES);
                emit(
                    clf(
                        &ip,
                        t,
                        "GET",
                        page,
                        200,
                        5_000 + rng.below(40_000),
                        "https://www.google.com/",
                        ua,
                    ),
                    &mut out,
                )?;
                written += 1;
                for _ in 0..rng.below(4) {
                    let asset = *rng.pick(ASSETS);
                    let status = if rng.below(5) == 0 { 304 } else { 200 };
                    emit(
                        clf(
                            &ip,
                            t + 1,
                            "GET",
                            asset,
                            status,
                            if status == 304 {
                                0
                            } else {
                                1_000 + rng.below(90_000)
                            },
                            &format!("{site}{page}"),
                            ua,
                        ),
                        &mut out,
                    )?;
                    written += 1;
                }
            }
            // Declared crawlers from their own addresses.
            550..=799 => {
                let (ua, net) = rng.pick(CRAWLERS);
                let ip = format!("{}.{}.{}.{}", net[0], net[1], net[2], 1 + rng.below(200));
                let path = if rng.below(20) == 0 {
                    "/robots.txt"
                } else {
                    *rng.pick(PAGES)
                };
                let status = if path.starts_with("/private") {
                    403
                } else {
                    200
                };
                emit(
                    clf(
                        &ip,
                        t,
                        "GET",
                        path,
                        status,
                        3_000 + rng.below(30_000),
                        "-",
                        ua,
                    ),
                    &mut out,
                )?;
                written += 1;
            }
            // Fake Googlebots from addresses Google does not publish.
            800..=829 => {
                let ip = format!(
                    "{}.{}.{}.{}",
                    45 + rng.below(10),
                    rng.below(256),
                    rng.below(256),
                    1 + rng.below(254)
                );
                emit(
                    clf(
                        &ip,
                        t,
                        "GET",
                        rng.pick::<&str>(PAGES),
                        200,
                        4_000 + rng.below(20_000),
                        "-",
                        CRAWLERS[0].0,
                    ),
                    &mut out,
                )?;
                written += 1;
            }
            // Scrapers with browser User-Agents: pages only, no referer, bursts.
            830..=909 => {
                let ip = format!(
                    "185.{}.{}.{}",
                    220 + rng.below(8),
                    rng.below(256),
                    1 + rng.below(254)
                );
                let ua = *rng.pick(BROWSERS);
                for k in 0..(5 + rng.below(20)) {
                    let page = format!("/products/widget?id={}", rng.below(100_000));
                    emit(
                        clf(
                            &ip,
                            t + k as i64,
                            "GET",
                            &page,
                            200,
                            8_000 + rng.below(20_000),
                            "-",
                            ua,
                        ),
                        &mut out,
                    )?;
                    written += 1;
                }
            }
            // Scanners: probes for known weak spots, mostly 404.
            910..=969 => {
                let ip = format!(
                    "{}.{}.{}.{}",
                    193 + rng.below(20),
                    rng.below(256),
                    rng.below(256),
                    1 + rng.below(254)
                );
                let ua = if rng.below(2) == 0 {
                    "Mozilla/5.0 zgrab/0.x"
                } else {
                    *rng.pick(BROWSERS)
                };
                for _ in 0..(3 + rng.below(8)) {
                    let method = if rng.below(4) == 0 { "HEAD" } else { "GET" };
                    emit(
                        clf(&ip, t, method, rng.pick::<&str>(SCANS), 404, 150, "-", ua),
                        &mut out,
                    )?;
                    written += 1;
                }
            }
            // Monitors: the same page, steadily.
            970..=994 => {
                emit(
                    clf(
                        "216.144.250.150",
                        t,
                        "HEAD",
                        "/",
                        200,
                        0,
                        "-",
                        "Mozilla/5.0+(compatible; UptimeRobot/2.0; http://www.uptimerobot.com/)",
                    ),
                    &mut out,
                )?;
                written += 1;
            }
            // Malformed lines: cut short, or not a log line at all.
            _ => {
                let good = clf("198.51.100.7", t, "GET", "/", 200, 10, "-", BROWSERS[0]);
                let bad = match rng.below(3) {
                    0 => good[..good.len() / 2].to_owned(),
                    1 => "GET / HTTP/1.1".to_owned(),
                    _ => good.replace("+0000", "+9999"),
                };
                emit(bad, &mut out)?;
                written += 1;
            }
        }
    }
    out.flush()
}

/// Systems of the browsers of [`write_many_clients`] and [`write_many_agents`].
const SYSTEMS: &[&str] = &[
    "Windows NT 10.0; Win64; x64",
    "Macintosh; Intel Mac OS X 10_15_7",
    "X11; Linux x86_64",
    "Linux; Android 13; SM-S911B",
    "iPhone; CPU iPhone OS 17_1 like Mac OS X",
];

/// A browser's User-Agent (one in twenty Googlebot's): 20 versions of
/// five browsers on five systems, Chrome's with its full build number.
fn browser(rng: &mut Rng) -> String {
    let os = *rng.pick(SYSTEMS);
    match rng.below(20) {
        0..=11 => format!(
            "Mozilla/5.0 ({os}) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/{}.0.{}.{} Safari/537.36",
            100 + rng.below(32),
            4000 + rng.below(3000),
            rng.below(250)
        ),
        12..=15 => format!(
            "Mozilla/5.0 ({os}; rv:{v}.0) Gecko/20100101 Firefox/{v}.0",
            v = 100 + rng.below(33)
        ),
        16..=17 => format!(
            "Mozilla/5.0 ({os}) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/{}.{} Mobile/15E148 Safari/604.1",
            14 + rng.below(4),
            rng.below(7)
        ),
        18 => "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)".to_owned(),
        _ => format!(
            "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/{}.0.0.0 Mobile Safari/537.36 [FBAN/FB4A;FBAV/{}.0.0.{}.{};]",
            100 + rng.below(32),
            300 + rng.below(150),
            1 + rng.below(60),
            10 + rng.below(190)
        ),
    }
}

/// `n` clients: a random public-looking address with one or two browsers.
fn clients(rng: &mut Rng, n: usize, pool: usize) -> Vec<(String, Vec<String>)> {
    let pool: Vec<String> = (0..pool).map(|_| browser(rng)).collect();
    (0..n)
        .map(|_| {
            let ip = format!(
                "{}.{}.{}.{}",
                1 + rng.below(223),
                rng.below(256),
                rng.below(256),
                1 + rng.below(254)
            );
            let k = 1 + rng.below(2);
            let uas = (0..k)
                .map(|_| {
                    if pool.is_empty() {
                        browser(rng)
                    } else {
                        rng.pick(&pool).clone()
                    }
                })
                .collect();
            (ip, uas)
        })
        .collect()
}

/// The harder log of a busy site, for the bench beside GoAccess: `lines`
/// requests from 4,000 addresses, each with one or two browsers of its
/// own (20 versions of five browsers on five systems: thousands of
/// distinct User-Agents), interleaved at random (no run of one client),
/// long paths with query strings and referers from a site search (about
/// 320 bytes a line). Deterministic for a seed.
pub fn write_many_clients(out: impl Write, lines: u64, seed: u64) -> std::io::Result<()> {
    write_busy(
        out,
        lines,
        seed,
        4000,
        0,
        3,
        |rng, out, ip, ua, status, time| {
            writeln!(
                out,
                "{ip} - - [{time}] \"GET /catalog/{}/item-{}?utm_source=news&utm_medium=email&session={:016x} HTTP/1.1\" {status} {} \"https://www.example.com/search?q=item+{}&page={}\" \"{ua}\"",
                1 + rng.below(500),
                1 + rng.below(99_999),
                rng.next(),
                200 + rng.below(90_000),
                1 + rng.below(9_999),
                1 + rng.below(20),
            )
        },
    )
}

/// A busy site's log with as many addresses as a large site sees in a
/// few days, for the bench beside GoAccess: `lines` requests from
/// 200,000 addresses (five requests each on average, hours apart), each
/// with one or two of 4,000 browser builds (as [`write_many_clients`]
/// makes them), paths with a session in the query string (nearly every
/// path distinct), a referer from the site (about 240 bytes a line).
/// Deterministic for a seed.
pub fn write_many_addresses(out: impl Write, lines: u64, seed: u64) -> std::io::Result<()> {
    write_busy(
        out,
        lines,
        seed,
        200_000,
        4000,
        3,
        |rng, out, ip, ua, status, time| {
            writeln!(
                out,
                "{ip} - - [{time}] \"GET /catalog/{}/item-{}?session={:016x} HTTP/1.1\" {status} {} \"https://www.example.com/\" \"{ua}\"",
                1 + rng.below(500),
                1 + rng.below(99_999),
                rng.next(),
                200 + rng.below(90_000),
            )
        },
    )
}

/// `lines` requests of `addresses` random clients (their browsers drawn
/// from a pool of `pool` when it is not 0), up to `step - 1`
/// seconds apart: each line's address, User-Agent, status and time are
/// drawn here, the rest of it by `line`.
fn write_busy(
    out: impl Write,
    lines: u64,
    seed: u64,
    addresses: usize,
    pool: usize,
    step: u64,
    mut line: impl FnMut(&mut Rng, &mut dyn Write, &str, &str, u16, &str) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let clients = clients(&mut rng, addresses, pool);
    let mut out = BufWriter::with_capacity(1 << 20, out);
    let mut t: i64 = 1_763_769_600; // 2025-11-22 00:00:00 UTC
    for _ in 0..lines {
        t += rng.below(step) as i64;
        let (ip, uas) = rng.pick(&clients);
        let ua = rng.pick(uas);
        let status = [200, 200, 200, 304, 404][rng.below(5) as usize];
        line(&mut rng, &mut out, ip, ua, status, &time(t))?;
    }
    out.flush()
}

/// The hardest log for per-client work, for the bench beside GoAccess:
/// `lines` requests from 200,000 addresses (five requests each on
/// average), each with its own browser build, so that most User-Agents
/// are met once or twice (184,379 distinct in 1,000,000 lines):
/// pages, assets and images of a shop and its blog, referers from the
/// site or a search engine (about 220 bytes a line). Deterministic for a
/// seed.
pub fn write_many_agents(out: impl Write, lines: u64, seed: u64) -> std::io::Result<()> {
    write_busy(
        out,
        lines,
        seed,
        200_000,
        0,
        2,
        |rng, out, ip, ua, status, time| {
            let path = match rng.below(5) {
                0 => format!("/products/{}", rng.below(99_999)),
                1 => format!(
                    "/blog/{}/{:02}/post-{}",
                    2020 + rng.below(6),
                    1 + rng.below(12),
                    rng.below(9_999)
                ),
                2 => format!("/static/css/app.{:03x}.css", rng.below(999)),
                3 => format!("/images/p/{}.jpg", rng.below(99_999)),
                _ => "/".to_owned(),
            };
            let referer = *rng.pick(&["-", "https://www.example.com/", "https://www.google.com/"]);
            writeln!(
                out,
                "{ip} - - [{time}] \"GET {path} HTTP/1.1\" {status} {} \"{referer}\" \"{ua}\"",
                200 + rng.below(90_000),
            )
        },
    )
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    /// The many-addresses log is what it says: deterministic, many
    /// addresses sharing a bounded pool of browsers, lines of about 260
    /// bytes; the pool leaves the other busy logs as they were.
    #[test]
    fn many_addresses_share_a_pool_of_browsers() {
        let mut a = Vec::new();
        super::write_many_addresses(&mut a, 20_000, 1).expect("write");
        let mut again = Vec::new();
        super::write_many_addresses(&mut again, 20_000, 1).expect("write");
        assert!(a == again, "not deterministic");
        let text = String::from_utf8(a).expect("utf-8");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 20_000);
        let addresses: HashSet<&str> = lines.iter().filter_map(|l| l.split(' ').next()).collect();
        let agents: HashSet<&str> = lines.iter().filter_map(|l| l.split('"').nth(5)).collect();
        assert!(addresses.len() > 18_000, "{} addresses", addresses.len());
        assert!(
            (500..=4000).contains(&agents.len()),
            "{} User-Agents",
            agents.len()
        );
        let mean = text.len() / lines.len();
        assert!((230..=290).contains(&mean), "{mean} bytes a line");
        // Each address keeps its browsers; many-clients' pool is its own.
        let mut clients = Vec::new();
        super::write_many_clients(&mut clients, 20_000, 1).expect("write");
        let clients = String::from_utf8(clients).expect("utf-8");
        let agents: HashSet<&str> = clients
            .lines()
            .filter_map(|l| l.split('"').nth(5))
            .collect();
        assert!(agents.len() > 4000, "{} User-Agents", agents.len());
    }
}
