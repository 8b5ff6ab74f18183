//! What marking a page costs the standalone gate: a 48 KiB HTML page with
//! the canary marker in its footer, streamed in 16 KiB chunks, passed as
//! it is (what an unmarked page costs: the chunks handed on) and marked
//! (the client's mark, its code and phrase, the slot filler over every
//! byte, the issuance record updated), identity and gzip (gzip decoded
//! and encoded again, as the gate does for any page it rewrites). 20,000
//! pages each, alternating in blocks, one thread.
//!
//! ```sh
//! cargo bench -p botscope-gate --bench canary
//! ```

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write as _;
use std::time::{Duration, Instant};

use botscope_canary::{CanaryKey, Client};
use botscope_gate::canary::{Canaries, CanaryConfig};
use botscope_gate::inject::Rewriter;

const PAGES: usize = 20_000;
const BLOCK: usize = 1_000;

fn page() -> Vec<u8> {
    let mut p = b"<!doctype html><html><head><title>Shop</title><link rel=stylesheet href=/s.css></head><body><main>".to_vec();
    while p.len() < 48 * 1024 {
        p.extend_from_slice(b"<article class=\"item\"><h2>An item</h2><p>Its description, a few words <a href=\"/item\">and a link</a>.</p></article>\n");
    }
    p.extend_from_slice(
        b"</main><footer>Example Shop <!--botscope:canary--></footer></body></html>",
    );
    p
}

fn main() {
    let canaries = Canaries::new(CanaryConfig::new(CanaryKey::new(&[5; 32]).unwrap()), false);
    let plain = page();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&plain).unwrap();
    let gzipped = gz.finish().unwrap();
    for (label, body, gzip) in [("identity", &plain, false), ("gzip", &gzipped, true)] {
        let (mut passed, mut marked) = (Duration::ZERO, Duration::ZERO);
        let mut out_bytes = 0usize;
        for n in 0..PAGES {
            let mark = (n / BLOCK) % 2 == 1;
            let t = Instant::now();
            if mark {
                let ip = std::net::IpAddr::from([198, 51, (n >> 8) as u8, n as u8]);
                let (m, text) = canaries.mark(
                    Client::network(ip, None, "Mozilla/5.0 Firefox/130.0"),
                    1_800_000_000,
                );
                let mut rw =
                    Rewriter::page(None, Some(botscope_canary::slot::Slot::new(text)), gzip);
                for c in body.chunks(16 * 1024) {
                    out_bytes += rw.push(c).unwrap().len();
                }
                out_bytes += rw.finish().unwrap().len();
                if rw.slots().0 > 0 {
                    canaries.served(&m, 1_800_000_000);
                }
                marked += t.elapsed();
            } else {
                for c in body.chunks(16 * 1024) {
                    out_bytes += std::hint::black_box(axum::body::Bytes::copy_from_slice(c)).len();
                }
                passed += t.elapsed();
            }
        }
        let per = |d: Duration| d.as_secs_f64() * 1e6 / (PAGES / 2) as f64;
        println!(
            "{label}: passed {:.1} µs a page, marked {:.1} µs a page (+{:.1} µs, {:.0} MiB/s marked); {} bytes out",
            per(passed),
            per(marked),
            per(marked) - per(passed),
            (body.len() * PAGES / 2) as f64 / marked.as_secs_f64() / (1 << 20) as f64,
            out_bytes
        );
    }
    println!("issuance record: {} marks held", canaries.held());
}
