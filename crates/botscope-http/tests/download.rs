//! Files downloaded from a real HTTP server on loopback, whole and as they
//! come: the same bytes either way, through a redirect and a gzip
//! `Content-Encoding`; a status, a file over the cap and a reader dropped
//! half-way end cleanly.

use std::collections::HashMap;
use std::io::Read;
use std::time::Duration;

use botscope_http::{Trust, download, download_reader};
use botscope_testkit::ipdb::{Canned, FileServer};

#[test]
fn files_come_whole_or_as_they_come() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    // 24 MiB of bytes that do not repeat in short runs.
    let mut big = Vec::with_capacity(24 << 20);
    let mut x = 0x9e37_79b9_u32;
    while big.len() < 24 << 20 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        big.extend_from_slice(&x.to_le_bytes());
    }
    let small = b"WARC/1.1\r\n".repeat(1000);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, &small).expect("gzip");
    let gz = gz.finish().expect("gzip");
    let server = FileServer::start(HashMap::from([("/big.warc".to_owned(), big.clone())]));
    server.set(
        "/moved",
        Canned::status("302 Found", &[("Location", "/big.warc")], b""),
    );
    server.set("/encoded", Canned::ok(&[("Content-Encoding", "gzip")], &gz));
    let base = server.url();
    let trust = Trust::system();
    let open = |path: &str, cap: u64| {
        download_reader(
            rt.handle(),
            &format!("{base}{path}"),
            cap,
            Duration::from_secs(60),
            "test",
            &trust,
            true,
        )
    };
    let read_all = |mut r: Box<dyn Read + Send>| {
        let mut out = Vec::new();
        r.read_to_end(&mut out).map(|_| out)
    };
    // As it comes, through a redirect: every byte.
    let got = read_all(open("/moved", 64 << 20).expect("open")).expect("read");
    assert!(got == big, "{} of {} bytes", got.len(), big.len());
    // Whole: the same.
    let whole = rt
        .block_on(download(
            &format!("{base}/big.warc"),
            64 << 20,
            Duration::from_secs(60),
            "test",
            &trust,
        ))
        .expect("download");
    assert!(whole == big);
    // A gzip Content-Encoding is decoded.
    assert_eq!(
        read_all(open("/encoded", 1 << 20).expect("open")).expect("read"),
        small
    );
    // Over the cap: an error of the read, naming the URL, never a short
    // file read as whole.
    let e = read_all(open("/big.warc", 1 << 20).expect("open")).expect_err("over the cap");
    assert!(e.to_string().contains("stopped after 1 MiB"), "{e}");
    assert!(e.to_string().contains("/big.warc"), "{e}");
    // A status other than 200: before any reading.
    let e = open("/missing", 1 << 20).err().expect("404");
    assert!(e.to_string().contains("404"), "{e}");
    // A reader dropped half-way ends its download; the next one works.
    let mut r = open("/big.warc", 64 << 20).expect("open");
    let mut part = vec![0u8; 1 << 16];
    r.read_exact(&mut part).expect("part");
    assert_eq!(&part[..], &big[..1 << 16]);
    drop(r);
    let got = read_all(open("/big.warc", 64 << 20).expect("open")).expect("read");
    assert_eq!(got.len(), big.len());
    // The address guard: loopback is refused unless allowed, in words
    // that name the flag, before any byte is asked for.
    let guarded = download_reader(
        rt.handle(),
        &format!("{base}/big.warc"),
        64 << 20,
        Duration::from_secs(60),
        "test",
        &trust,
        false,
    );
    let e = guarded.err().expect("refused").to_string();
    assert!(
        e.contains("loopback") && e.contains("--allow-private"),
        "{e}"
    );
    // A server that never ends a body is cut at the time limit.
    let slow = download_reader(
        rt.handle(),
        &format!("{base}/big.warc"),
        64 << 20,
        Duration::from_millis(1),
        "test",
        &trust,
        true,
    );
    if let Ok(r) = slow {
        let e = read_all(r).expect_err("over the time");
        assert!(
            e.to_string().contains("longest this download may take"),
            "{e}"
        );
    }
}
