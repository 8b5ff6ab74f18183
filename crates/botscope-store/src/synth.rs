//! A synthetic web of robots.txt files at BotSeer's scale, made from real
//! files: each site takes one file of a corpus (the real files of
//! `../shared/data/robotstxt/corpus`, or the 294 checked in under
//! `crates/botscope-robotstxt/tests/data/corpus`) and varies it
//! the ways real sites do — a `Sitemap:` line with its own host, the groups
//! of another site's file appended, a group for a named robot, a
//! `Crawl-delay`, or the file left as the template gave it. Host names mix
//! top-level domains (`.com` to `.gov` and country codes), `www.` or not;
//! ranks follow the generation order. One site in five has a second
//! version later (often a new block of an AI crawler), one in twenty a
//! third. Deterministic for a seed. The research benchmark and the
//! web application's demo are made with it.
//!
//! ```sh
//! cargo run --release -p botscope-store --example gen_store -- \
//!     --corpus ../shared/data/robotstxt/corpus --sites 2200000 --db botseer.db
//! ```

use std::path::Path;

use crate::{Attempt, Headers, NewRun, Source, Store, content_hash};

/// Files longer than this are cut at the last line break before it (18 of
/// the 11,767 corpus files are longer than 64 KiB).
pub const BODY_CAP: usize = 32 * 1024;

/// The first version's time: 2024-01-01T00:00:00Z.
pub const EPOCH: i64 = 1_704_067_200;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // splitmix64: every seed, 0 too, gives a full-period stream.
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len() as u64) as usize]
    }
}

const SYLLABLES: &[&str] = &[
    "net", "sun", "blue", "data", "web", "shop", "info", "tech", "home", "art", "city", "news",
    "star", "med", "green", "soft", "lab", "uni", "go", "max", "red", "north", "east", "book",
    "car", "food", "law", "bank", "travel", "music", "photo", "game", "health", "school", "sport",
    "media", "cloud", "land", "river", "stone", "gold", "silver", "jobs", "film", "forum",
];

/// Top-level domains with weights (per mille), roughly the mix of a
/// 2007 crawl of popular hosts.
const TLDS: &[(&str, u64)] = &[
    ("com", 500),
    ("org", 80),
    ("net", 80),
    ("edu", 30),
    ("gov", 20),
    ("de", 50),
    ("co.uk", 40),
    ("jp", 25),
    ("fr", 20),
    ("ru", 20),
    ("cn", 20),
    ("com.br", 15),
    ("it", 15),
    ("nl", 15),
    ("com.au", 10),
    ("ca", 10),
    ("us", 5),
    ("ca.gov", 5),
    ("ac.uk", 5),
    ("info", 15),
];

/// Robots a site may address by name, with what it tells them.
const NAMED: &[&str] = &[
    "msnbot",
    "Slurp",
    "Googlebot",
    "Teoma",
    "ia_archiver",
    "Baiduspider",
    "Yandex",
    "GPTBot",
    "CCBot",
    "Google-Extended",
    "ClaudeBot",
    "bingbot",
];
const PATHS: &[&str] = &[
    "/",
    "/cgi-bin/",
    "/private/",
    "/search",
    "",
    "/images/",
    "/*.pdf$",
];

/// Host number `i` (unique per `i`).
fn host(rng: &mut Rng, i: u64) -> String {
    let mut w = rng.below(1000);
    let tld = TLDS
        .iter()
        .find(|(_, p)| {
            if w < *p {
                true
            } else {
                w -= p;
                false
            }
        })
        .map_or("com", |(t, _)| t);
    let www = if rng.below(10) < 4 { "www." } else { "" };
    let a = rng.pick(SYLLABLES);
    let b = rng.pick(SYLLABLES);
    format!("{www}{a}{b}{}.{tld}", base36(i))
}

fn base36(mut n: u64) -> String {
    let mut s = Vec::new();
    loop {
        s.push(b"0123456789abcdefghijklmnopqrstuvwxyz"[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    s.reverse();
    String::from_utf8(s).unwrap_or_default()
}

/// Reads the `.txt` files of `dir` (and files named like hosts), sorted by
/// name, each cut at [`BODY_CAP`].
pub fn corpus(dir: &Path) -> std::io::Result<Vec<Vec<u8>>> {
    let mut names: Vec<_> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    names.sort();
    names.iter().map(|p| std::fs::read(p).map(cap)).collect()
}

/// `b` cut at the last line break before [`BODY_CAP`] when longer.
pub fn cap(mut b: Vec<u8>) -> Vec<u8> {
    if b.len() > BODY_CAP {
        let cut = b[..BODY_CAP]
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(BODY_CAP, |i| i + 1);
        b.truncate(cut);
    }
    b
}

/// One variation of `body` for `host`.
fn vary(rng: &mut Rng, files: &[Vec<u8>], host: &str, body: &[u8]) -> Vec<u8> {
    let mut out = body.to_vec();
    if !out.is_empty() && !out.ends_with(b"\n") {
        out.push(b'\n');
    }
    match rng.below(100) {
        0..35 => {}
        35..60 => {
            out.extend_from_slice(format!("\nSitemap: https://{host}/sitemap.xml\n").as_bytes())
        }
        60..75 => {
            out.push(b'\n');
            let other: &Vec<u8> = rng.pick(files);
            out.extend_from_slice(other);
        }
        75..85 => {
            let bot = rng.pick(NAMED);
            let path = rng.pick(PATHS);
            out.extend_from_slice(format!("\nUser-agent: {bot}\nDisallow: {path}\n").as_bytes());
        }
        85..95 => {
            let d = 1 + rng.below(60);
            out.extend_from_slice(
                format!("\nUser-agent: *\nCrawl-delay: {d}\nDisallow: /tmp/\n").as_bytes(),
            );
        }
        _ => {
            out = if rng.below(2) == 0 {
                b"User-agent: *\nDisallow:\n".to_vec()
            } else {
                Vec::new()
            };
        }
    }
    cap(out)
}

/// A later version of `body`: often a block of an AI crawler, else another
/// variation.
fn revise(rng: &mut Rng, files: &[Vec<u8>], host: &str, body: &[u8]) -> Vec<u8> {
    if rng.below(2) == 0 {
        let bot = rng.pick(&["GPTBot", "CCBot", "ClaudeBot", "Google-Extended"]);
        let mut out = body.to_vec();
        if !out.is_empty() && !out.ends_with(b"\n") {
            out.push(b'\n');
        }
        out.extend_from_slice(format!("\nUser-agent: {bot}\nDisallow: /\n").as_bytes());
        cap(out)
    } else {
        vary(rng, files, host, body)
    }
}

/// The versions of site `i` (rank `i + 1`), oldest first, as fetches.
pub fn site(files: &[Vec<u8>], seed: u64, i: u64) -> Vec<Attempt> {
    let mut rng = Rng(seed ^ i.wrapping_mul(0xd605_bbb5_8c8a_bd1d));
    let host = host(&mut rng, i);
    let base = rng.pick(files).clone();
    let mut body = vary(&mut rng, files, &host, &base);
    let mut time = EPOCH + rng.below(30 * 86_400) as i64;
    let versions = match rng.below(100) {
        0..5 => 3,
        5..20 => 2,
        _ => 1,
    };
    let mut out = Vec::with_capacity(versions);
    for v in 0..versions {
        if v > 0 {
            body = revise(&mut rng, files, &host, &body);
            time += (30 + rng.below(300)) as i64 * 86_400;
        }
        out.push(Attempt {
            host: host.clone(),
            rank: Some(i + 1),
            time,
            duration_ms: 40 + rng.below(400),
            url: format!("https://{host}/robots.txt"),
            address: Some(format!("192.0.2.{}", 1 + i % 254)),
            status: Some(200),
            headers: Headers {
                content_type: Some("text/plain".into()),
                ..Headers::default()
            },
            bytes: body.len() as u64,
            outcome: "parse".into(),
            reason: "2xx: the body is parsed".into(),
            body: Some(body.clone()),
            source: Source::Harvest,
            ..Attempt::default()
        });
    }
    out
}

/// Writes `sites` sites into `store` (one run), calling `progress` with
/// the sites written so far.
pub fn fill(
    store: &mut dyn Store,
    files: &[Vec<u8>],
    sites: u64,
    seed: u64,
    progress: &mut dyn FnMut(u64),
) -> crate::Result<()> {
    let run = store.begin_run(&NewRun {
        input: format!("synthetic:{sites}:{seed}"),
        input_hash: content_hash(format!("synthetic:{sites}:{seed}").as_bytes()),
        user_agent: "botscope-synth".into(),
        hosts: sites,
        started: EPOCH,
        crawl: None,
    })?;
    let mut batch = Vec::with_capacity(12_000);
    for i in 0..sites {
        batch.extend(site(files, seed, i));
        if batch.len() >= 10_000 {
            store.record(Some(run), &batch)?;
            batch.clear();
            progress(i + 1);
        }
    }
    store.record(Some(run), &batch)?;
    progress(sites);
    store.finish_run(run, EPOCH + 400 * 86_400)
}

/// One synthetic crawl of the synthetic web, as [`write_crawl`] writes it.
#[derive(Debug, Clone)]
pub struct CrawlSpec {
    /// Its name (`CC-MAIN-2024-10`): in the files' names, their paths and
    /// their warcinfo's `isPartOf`.
    pub crawl: String,
    /// Its first second: the captures are dated within 28 days of it.
    pub start: i64,
    /// The sites it captures: sites `0..sites` of the synthetic web.
    pub sites: u64,
    /// WARC files it is written in.
    pub files: u64,
    /// The synthetic web's seed.
    pub seed: u64,
}

/// Writes `spec`'s crawl under `out` as Common Crawl lays out a crawl's
/// robots.txt subset: `crawl-data/CRAWL/segments/SEGMENT/robotstxt/
/// CRAWL-robotstxt-NNNNN.warc.gz` files, each opening with a warcinfo
/// record (`isPartOf: CRAWL`), then per capture a request, a response and
/// a metadata record, each its own gzip member; one site in ten answers
/// 404, one in ten redirects. `version(site, versions)` picks which of
/// a site's versions (oldest first) the crawl finds. Returns the paths
/// list (`crawl-data/CRAWL/robotstxt.paths.gz` beside them, relative to
/// `out` as Common Crawl's are to its bucket).
pub fn write_crawl(
    files: &[Vec<u8>],
    spec: &CrawlSpec,
    version: &dyn Fn(u64, usize) -> usize,
    out: &Path,
) -> std::io::Result<Vec<String>> {
    use flate2::Compression;
    use flate2::write::GzEncoder;
    use std::io::Write;

    use crate::warc::write_record;

    let other = |e: jiff::Error| std::io::Error::other(e.to_string());
    let crawl = &spec.crawl;
    let captures = spec.sites;
    let per_file = captures.div_ceil(spec.files.max(1));
    let mut paths = Vec::new();
    let mut site = 0u64;
    let gz = |fields: &[(&str, String)], block: &[u8]| -> std::io::Result<Vec<u8>> {
        let mut gz = GzEncoder::new(Vec::new(), Compression::fast());
        write_record(&mut gz, fields, block)?;
        gz.finish()
    };
    for f in 0..spec.files.max(1) {
        let name = format!("{crawl}-robotstxt-{f:05}.warc.gz");
        let rel = format!(
            "crawl-data/{crawl}/segments/{}.{f}/robotstxt/{name}",
            spec.start * 1000
        );
        let path = out.join(&rel);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let mut file = std::io::BufWriter::new(std::fs::File::create(&path)?);
        let start = jiff::Timestamp::from_second(spec.start).map_err(other)?;
        let info = format!(
            "software: botscope-synth\r\nisPartOf: {crawl}\r\n\
             description: synthetic robots.txt captures\r\nformat: WARC File Format 1.1\r\n"
        );
        file.write_all(&gz(
            &[
                ("WARC-Type", "warcinfo".into()),
                ("WARC-Date", start.to_string()),
                ("WARC-Filename", name.clone()),
                (
                    "WARC-Record-ID",
                    format!("<urn:uuid:ffffffff-0000-4000-8000-{f:012x}>"),
                ),
                ("Content-Type", "application/warc-fields".into()),
            ],
            info.as_bytes(),
        )?)?;
        for _ in 0..per_file.min(captures.saturating_sub(site)) {
            let versions = self::site(files, spec.seed, site);
            let v = &versions[version(site, versions.len()).min(versions.len() - 1)];
            let time = spec.start + (site % (28 * 86_400)) as i64;
            let date = jiff::Timestamp::from_second(time)
                .map_err(other)?
                .to_string();
            let uri = format!("https://{}/robots.txt", v.host);
            let id = |k: u64| format!("<urn:uuid:{k:08x}-0000-4000-8000-{site:012x}>");
            let (status, body): (u16, Vec<u8>) = match site % 10 {
                0 => (
                    404,
                    b"<html><body><h1>Not Found</h1></body></html>".to_vec(),
                ),
                5 => (301, Vec::new()),
                _ => (200, v.body.clone().unwrap_or_default()),
            };
            let mut head = format!(
                "HTTP/1.1 {status} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n",
                crate::warc::reason_phrase(status),
                if status == 200 {
                    "text/plain"
                } else {
                    "text/html"
                },
                body.len()
            );
            if status == 301 {
                head.push_str(&format!("Location: https://www.{}/robots.txt\r\n", v.host));
            }
            head.push_str("\r\n");
            let mut response = head.into_bytes();
            response.extend_from_slice(&body);
            let request = format!(
                "GET /robots.txt HTTP/1.1\r\nUser-Agent: CCBot/2.0 (https://commoncrawl.org/faq/)\r\n\
                 Accept: text/html,*/*\r\nHost: {}\r\n\r\n",
                v.host
            );
            let metadata = format!("fetchTimeMs: {}\r\n", 40 + site % 400);
            let records: [(&str, &str, &[u8]); 3] = [
                (
                    "request",
                    "application/http; msgtype=request",
                    request.as_bytes(),
                ),
                ("response", "application/http; msgtype=response", &response),
                ("metadata", "application/warc-fields", metadata.as_bytes()),
            ];
            for (k, (kind, ctype, block)) in records.into_iter().enumerate() {
                let mut fields = vec![
                    ("WARC-Type", kind.to_owned()),
                    ("WARC-Date", date.clone()),
                    ("WARC-Record-ID", id(k as u64)),
                    ("WARC-Target-URI", uri.clone()),
                    ("Content-Type", ctype.to_owned()),
                ];
                if kind == "response" {
                    fields.push(("WARC-IP-Address", format!("192.0.2.{}", 1 + site % 254)));
                }
                file.write_all(&gz(&fields, block)?)?;
            }
            site += 1;
        }
        file.flush()?;
        paths.push(rel);
    }
    let list = out.join(format!("crawl-data/{crawl}/robotstxt.paths.gz"));
    let mut gz = GzEncoder::new(Vec::new(), Compression::default());
    for p in &paths {
        writeln!(gz, "{p}")?;
    }
    std::fs::write(list, gz.finish()?)?;
    Ok(paths)
}

/// The synthetic web's first `sites` sites as a ranked list a cohort is
/// read from (`trends --rank-file`): `rank,host,tokens` rows under that
/// header, `tokens` a made-up count of a corpus's tokens from the site,
/// falling with rank as a power law (as the token counts Consent in
/// Crisis weights by do), so that weighted shares differ from counts.
pub fn site_list(files: &[Vec<u8>], seed: u64, sites: u64) -> String {
    let mut out = String::from("rank,host,tokens\n");
    for i in 0..sites {
        let host = &site(files, seed, i)[0].host;
        let tokens = (50_000_000.0 / ((i + 1) as f64).powf(0.9)).round() as u64;
        out.push_str(&format!("{},{host},{tokens}\n", i + 1));
    }
    out
}

/// The first second of a Common Crawl crawl named `CC-MAIN-YYYY-WW`: the
/// Monday of ISO week `WW` of `YYYY`, 00:00 UTC.
pub fn crawl_start(name: &str) -> Option<i64> {
    let rest = name.strip_prefix("CC-MAIN-")?;
    let (y, w) = rest.split_once('-')?;
    let (y, w): (i16, i8) = (y.parse().ok()?, w.parse().ok()?);
    let date = jiff::civil::ISOWeekDate::new(y, w, jiff::civil::Weekday::Monday).ok()?;
    let day = jiff::civil::Date::from(date);
    Some(
        day.to_zoned(jiff::tz::TimeZone::UTC)
            .ok()?
            .timestamp()
            .as_second(),
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn files() -> Vec<Vec<u8>> {
        corpus(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("../botscope-robotstxt/tests/data/corpus"),
        )
        .unwrap()
    }

    #[test]
    fn deterministic_and_varied() {
        let f = files();
        assert!(f.len() > 100);
        let a: Vec<Vec<Attempt>> = (0..2000).map(|i| site(&f, 7, i)).collect();
        let b: Vec<Vec<Attempt>> = (0..2000).map(|i| site(&f, 7, i)).collect();
        assert_eq!(a, b, "same seed, same sites");
        let c = site(&f, 8, 5);
        assert_ne!(a[5], c, "another seed, other sites");
        let hosts: std::collections::HashSet<&str> = a.iter().map(|v| v[0].host.as_str()).collect();
        assert_eq!(hosts.len(), 2000, "hosts are unique");
        let bodies: std::collections::HashSet<&[u8]> = a
            .iter()
            .flatten()
            .filter_map(|x| x.body.as_deref())
            .collect();
        let versions: usize = a.iter().map(Vec::len).sum();
        assert!(versions > 2200 && versions < 2800, "{versions} versions");
        assert!(
            bodies.len() * 2 > versions,
            "most versions distinct: {} of {versions}",
            bodies.len()
        );
        assert!(hosts.iter().any(|h| h.ends_with(".gov")));
        assert!(
            a.iter()
                .flatten()
                .all(|x| x.body.as_ref().is_some_and(|b| b.len() <= BODY_CAP))
        );
        for v in &a {
            assert!(v.windows(2).all(|w| w[0].time < w[1].time));
        }
    }

    #[test]
    fn cap_cuts_at_a_line_break() {
        let long: Vec<u8> = "Disallow: /abcdefghij\n".repeat(3000).into_bytes();
        let c = cap(long);
        assert!(c.len() <= BODY_CAP && c.ends_with(b"\n"));
    }
}
