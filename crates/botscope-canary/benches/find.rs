//! `canary find`'s cost per byte, beside GNU grep on the same bytes: prose
//! (common words, one in eight of the phrase list, a real reference every
//! 64 KiB), and a hostile WET-like text of `BOTSCOPE_FIND_MB` MiB (64 by
//! default) of
//! words from the phrase list and others, with a million candidate
//! tokens (`bsc-` and base32 letters a key never made, and phrase-like
//! runs of list words and digits), 200 real codes and 200 real phrases
//! of a 100,000-mark record. Ours: the finder over the file, streamed
//! (peak memory from /proc). grep: `grep -c -E 'bsc-[a-z2-7]{16,}'`
//! over the same file, which finds candidate codes and nothing else (it
//! reads no phrase, normalises nothing, decodes nothing): the floor of a
//! scan, not a peer doing the same work.
//!
//! ```sh
//! cargo bench -p botscope-canary --bench find
//! ```

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write as _;
use std::time::Instant;

use botscope_canary::code::{CanaryKey, Client, Mark};
use botscope_canary::find::{Finder, Index};
use botscope_canary::input::{Format, scan};
use botscope_canary::phrase::word;
use botscope_canary::record::Issue;

fn main() {
    let mb: usize = std::env::var("BOTSCOPE_FIND_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64);
    let key = CanaryKey::new(&[3; 32]).unwrap();
    // A record of 100,000 marks.
    let issues: Vec<Issue> = (0..100_000u32)
        .map(|i| {
            let ip = std::net::IpAddr::from((i << 8 | 1).to_be_bytes());
            let m = Mark::at(Client::network(ip, None, "curl/8"), 1_800_000_000, 86_400);
            Issue::new(
                &key,
                m,
                &botscope_canary::find::Served {
                    first: 1,
                    last: 2,
                    pages: 1,
                },
            )
        })
        .collect();
    let t = Instant::now();
    let index = Index::new(issues.clone());
    let index_ms = t.elapsed().as_secs_f64() * 1e3;
    // The text.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("input.wet");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let target = mb << 20;
    let (mut written, mut candidates, mut planted) = (0usize, 0u64, 0u64);
    let per_candidate = target / 1_000_000;
    let mut since = 0usize;
    while written < target {
        let r = next();
        let piece = if since >= per_candidate {
            since = 0;
            candidates += 1;
            if candidates % 5_000 == 0 {
                planted += 1;
                let i = &issues[(r % issues.len() as u64) as usize];
                if planted % 2 == 0 {
                    format!(" {} ", i.code)
                } else {
                    format!(" {} ", i.phrase)
                }
            } else if r % 2 == 0 {
                let letters: String = (0..28)
                    .map(|k| {
                        b"abcdefghijklmnopqrstuvwxyz234567"[((r >> (k % 12 * 5)) as usize + k) % 32]
                            as char
                    })
                    .collect();
                format!(" bsc-{letters} ")
            } else {
                format!(
                    " {} {} {} {} ",
                    word((r % 2048) as u16),
                    word((r >> 11) as u16 % 2048),
                    word((r >> 22) as u16 % 2048),
                    r % 100
                )
            }
        } else if r % 3 == 0 {
            format!("{} ", word((r % 2048) as u16))
        } else if r % 17 == 0 {
            "\r\nWARC-Target-URI: https://example.org/page\r\n".to_owned()
        } else {
            ["the ", "of ", "page, ", "crawler ", "answer ", "Zurich "][(r % 6) as usize].to_owned()
        };
        since += piece.len();
        written += piece.len();
        f.write_all(piece.as_bytes()).unwrap();
    }
    f.flush().unwrap();
    drop(f);
    let bytes = std::fs::metadata(&path).unwrap().len();
    // Prose: sentences of common words, about one in eight of the list
    // (as English has them), a reference every 64 KiB.
    let prose_path = dir.path().join("prose.txt");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&prose_path).unwrap());
    let common = [
        "the", "of", "and", "to", "in", "is", "that", "for", "it", "as", "was", "with", "be", "by",
        "on", "not", "he", "this", "are", "or", "his", "from", "at", "which", "but", "have", "an",
        "had", "they", "you", "were", "their", "one", "all", "we", "can", "her", "has", "there",
        "been", "if", "more", "when", "will", "would", "who", "so", "no",
    ];
    let (mut w, mut next_ref) = (0usize, 0usize);
    while w < target {
        let r = next();
        let piece = if w >= next_ref {
            next_ref += 64 << 10;
            let i = &issues[(r % issues.len() as u64) as usize];
            format!("Reference: {} {}. ", i.phrase, i.code)
        } else if r % 8 == 0 {
            format!("{} ", word((r >> 8) as u16 % 2048))
        } else if r % 97 == 0 {
            "\n".to_owned()
        } else {
            format!("{} ", common[(r >> 8) as usize % common.len()])
        };
        w += piece.len();
        f.write_all(piece.as_bytes()).unwrap();
    }
    f.flush().unwrap();
    drop(f);
    let mut prose_best = f64::MAX;
    let mut prose_found = 0u64;
    for _ in 0..3 {
        let mut r =
            std::io::BufReader::with_capacity(1 << 16, std::fs::File::open(&prose_path).unwrap());
        let mut finder = Finder::new(&key, &index);
        let t = Instant::now();
        prose_found = 0;
        scan(&mut r, Format::Text, &mut finder, &mut |_| prose_found += 1).unwrap();
        prose_best = prose_best.min(t.elapsed().as_secs_f64());
    }

    let hwm = || -> u64 {
        std::fs::read_to_string("/proc/self/status")
            .unwrap()
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
            .unwrap_or(0)
    };
    let before = hwm();
    let mut best = f64::MAX;
    let mut found = 0u64;
    for _ in 0..3 {
        let mut r = std::io::BufReader::with_capacity(1 << 16, std::fs::File::open(&path).unwrap());
        let mut finder = Finder::new(&key, &index);
        let t = Instant::now();
        found = 0;
        scan(&mut r, Format::Wet, &mut finder, &mut |_| found += 1).unwrap();
        best = best.min(t.elapsed().as_secs_f64());
    }
    let after = hwm();
    let mut grep_best = f64::MAX;
    for _ in 0..3 {
        let t = Instant::now();
        let o = std::process::Command::new("grep")
            .args(["-c", "-E", "bsc-[a-z2-7]{16,}"])
            .arg(&path)
            .env("LC_ALL", "C")
            .output()
            .unwrap();
        assert!(o.status.success() || o.status.code() == Some(1));
        grep_best = grep_best.min(t.elapsed().as_secs_f64());
    }
    let mbs = |s: f64| bytes as f64 / s / (1 << 20) as f64;
    println!(
        "input: {:.0} MiB, {candidates} candidate tokens, {planted} real marks planted; record: 100,000 marks (indexed in {index_ms:.0} ms)",
        bytes as f64 / (1 << 20) as f64
    );
    println!(
        "prose: {:.2} s best of 3, {:.1} MiB/s, {:.1} ns a byte, {prose_found} sightings (a reference every 64 KiB)",
        prose_best,
        mbs(prose_best),
        prose_best * 1e9 / w as f64,
    );
    println!(
        "hostile mix: {:.2} s best of 3, {:.1} MiB/s, {:.1} ns a byte, {found} sightings; peak memory grew {} KiB while reading",
        best,
        mbs(best),
        best * 1e9 / bytes as f64,
        after.saturating_sub(before)
    );
    println!(
        "grep -c -E 'bsc-[a-z2-7]{{16,}}' (LC_ALL=C): {:.2} s, {:.1} MiB/s; find takes {:.1}x its time",
        grep_best,
        mbs(grep_best),
        best / grep_best
    );
    assert!(
        found >= planted,
        "every planted mark is found ({found} of {planted})"
    );
}
