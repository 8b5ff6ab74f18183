//! WARC records and the HTTP responses in them: any bytes give records,
//! skips or an error, never a panic, and a record's block is never larger
//! than its limit.
#![no_main]

use botscope_store::warc::{MAX_BLOCK_BYTES, Next, Reader, parse_http_response};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut r = Reader::new(data);
    for _ in 0..1000 {
        match r.next_record() {
            Ok(Next::Record(rec)) => {
                assert!(rec.block.len() as u64 <= MAX_BLOCK_BYTES);
                let _ = rec.field("WARC-Target-URI");
                if let Ok(resp) = parse_http_response(&rec.block, 64) {
                    assert!(resp.body.len() <= 64);
                    assert!((100..=999).contains(&resp.status));
                }
            }
            Ok(Next::Skipped(_)) => {}
            Ok(Next::End) | Err(_) => break,
        }
    }
    let _ = parse_http_response(data, 1024);
});
