//! The trap links from strangers' bytes: any bytes as a request path under
//! the trap prefix (a forged link of any length), as a robots.txt the gate
//! serves with its trap lines, as an HTML page streamed through the link
//! rewriter in chunks the first byte chooses, and as the gate's blocklist
//! (JSON) and a Go duration for `gate export`; and as a challenge token, a
//! `Cookie` header with passes, and a decision log read back for the
//! challenge funnel. Checks: a path is one check
//! (a good link only when the gate made it); every group of the served
//! robots.txt disallows the trap paths and the rest reads as before; the
//! rewritten page is the page with the snippet put in once, its size the
//! page's plus the snippet's; the blocklist reads or says why; a token or
//! a pass the gate never made never holds, and a forged token names no
//! rule; every line of a log is counted, read or malformed. Cost: each
//! input byte handled a bounded number of times (the rewriter looks at a
//! byte once, holding six).
#![no_main]

use botscope_gate::challenge::{ChallengeConfig, Challenges};
use botscope_gate::export::{go_seconds, nft_batch, read_blocklist};
use botscope_gate::inject::Rewriter;
use botscope_gate::trap::{Hit, Signer};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let s = Signer::new(b"a fuzzing key of thirty-two bytes!!");
    let text = String::from_utf8_lossy(data);
    let path = format!("{}{}", s.paths().prefix, text);
    match s.hit(&path, 1_000_000) {
        Some(Hit::Link(_)) => panic!("a link the gate never made: {path}"),
        Some(_) => {}
        None => panic!("a path under the prefix is the traps'"),
    }
    // The robots.txt the gate serves.
    let body = &data[..data.len().min(8 * 1024)];
    let served = s.paths().inject(body);
    assert!(
        served.len() <= 2 * body.len() + 4096,
        "{} from {}",
        served.len(),
        body.len()
    );
    let m = botscope_robotstxt::Matcher::new(&served);
    for agent in ["Googlebot", "SomeBot", "*"] {
        assert!(!m.check_path(agent, s.paths().robots.as_bytes()).allowed);
    }
    // The rewriter, in chunks.
    let step = usize::from(data.first().copied().unwrap_or(1)).max(1);
    let mut rw = Rewriter::new("<i>T</i>".to_owned(), false);
    let mut out = Vec::new();
    for c in data.chunks(step) {
        out.extend(rw.push(c).expect("identity never fails"));
    }
    out.extend(rw.finish().expect("identity never fails"));
    assert_eq!(out.len(), data.len() + 8);
    let at = memchr::memmem::find(&out, b"<i>T</i>").expect("the snippet is in");
    let mut back = out[..at].to_vec();
    back.extend_from_slice(&out[at + 8..]);
    assert_eq!(back, data);
    // gzip that is not: an error, never a panic.
    let mut gz = Rewriter::new(String::new(), true);
    let _ = gz.push(data).and_then(|_| gz.finish());
    // The blocklist and durations.
    if let Ok(entries) = read_blocklist(data) {
        let b = nft_batch("botscope", "trapped", &entries, 16);
        assert!(b.put.iter().all(|&n| n <= 16));
    }
    let _ = go_seconds(&text);
    // Challenge tokens and passes the gate never made.
    let c = Challenges::new(ChallengeConfig::new(vec![7; 32]));
    let ip = std::net::IpAddr::from([192, 0, 2, 1]);
    let (rule, outcome) = c.check_token(&text, Some(1), ip, "ua", 1_000_000);
    assert!(outcome.is_err(), "a token the gate never made: {text}");
    assert!(rule.is_none() || c.token_rule(&text).is_some());
    assert_eq!(c.passes(&text, ip, "ua", 1_000_000), None);
    // A decision log read back: every line counted.
    let read = botscope_gate::funnel::read_log(vec![("fuzz".into(), Box::new(data))])
        .expect("bytes in memory read");
    assert!(read.malformed <= read.lines);
});
