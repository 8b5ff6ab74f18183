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
