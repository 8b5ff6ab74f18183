//! Writes synthetic Common-Crawl-shaped robots.txt WARC files: per capture
//! a request, a response and a metadata record, each its own gzip member
//! (as Common Crawl writes them), the responses' bodies the synthetic
//! web's real-file variations (`botscope_store::synth`), one in ten
//! a 404 page or a redirect; files named as a crawl's
//! (`CC-MAIN-…-robotstxt-NNNNN.warc.gz`), and a `robotstxt.paths` list of
//! them.
//!
//! ```sh
//! cargo run --release -p botscope-store --example gen_warc -- \
//!     --records 10000000 --files 100 --crawl CC-MAIN-2024-10 --out /work/bench/warc
//! ```
//!
//! `--later 1 --crawl CC-MAIN-2024-18 --date 2024-05-01` makes a later
//! crawl of the same sites, each with a history serving its next version.

use std::io::Write;
use std::path::PathBuf;

use botscope_store::warc::write_record;
use flate2::Compression;
use flate2::write::GzEncoder;

use botscope_testkit::example_arg as arg;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let corpus = botscope_testkit::example_corpus();
    let records: u64 = arg("--records").map_or(Ok(300_000), |s| s.parse())?;
    let files: u64 = arg("--files").map_or(Ok(10), |s| s.parse())?;
    let seed: u64 = arg("--seed").map_or(Ok(1), |s| s.parse())?;
    // A later crawl of the same sites: each site's next version (sites
    // with one version unchanged; one in five has more).
    let later: u64 = arg("--later").map_or(Ok(0), |s| s.parse())?;
    let crawl = arg("--crawl").unwrap_or_else(|| "CC-MAIN-2024-10".into());
    // The crawl's month: its captures are dated in it.
    let start = arg("--date").map_or(Ok(1_709_251_200), |s| {
        botscope_store::parse_time_arg(&s).map_err(|e| e.to_string())
    })?;
    let out = PathBuf::from(arg("--out").ok_or("--out DIR is required")?);
    std::fs::create_dir_all(&out)?;
    let corpus = botscope_store::synth::corpus(&corpus)?;
    let captures = records / 3;
    let per_file = captures.div_ceil(files.max(1));
    let mut paths = String::new();
    let mut site = 0u64;
    for f in 0..files {
        let name = format!("{crawl}-robotstxt-{f:05}.warc.gz");
        paths.push_str(&format!(
            "crawl-data/{crawl}/segments/1709000000000.{f}/robotstxt/{name}\n"
        ));
        let mut file = std::io::BufWriter::new(std::fs::File::create(out.join(&name))?);
        for _ in 0..per_file.min(captures.saturating_sub(site)) {
            let versions = botscope_store::synth::site(&corpus, seed, site);
            let v = &versions[(seed + site + later) as usize % versions.len()];
            let time = start + (site % (28 * 86_400)) as i64;
            let date = jiff::Timestamp::from_second(time)?.to_string();
            let uri = format!("https://{}/robots.txt", v.host);
            let id = |k: u64| format!("<urn:uuid:{:08x}-0000-4000-8000-{:012x}>", k, site);
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
                botscope_store::warc::reason_phrase(status),
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
                "GET /robots.txt HTTP/1.1\r\nUser-Agent: CCBot/2.0 (https://commoncrawl.org/faq/)\r\nAccept: text/html,*/*\r\nHost: {}\r\n\r\n",
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
                let mut gz = GzEncoder::new(Vec::new(), Compression::fast());
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
                write_record(&mut gz, &fields, block)?;
                file.write_all(&gz.finish()?)?;
            }
            site += 1;
        }
        file.flush()?;
        eprintln!("{name}: {site} captures so far");
    }
    std::fs::write(out.join("robotstxt.paths"), paths)?;
    Ok(())
}
