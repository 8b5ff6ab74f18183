//! The Web Bot Auth header parsers and verifier on arbitrary fields: the
//! input as a request head, and its first lines as `Signature-Input`, `Signature`,
//! `Signature-Agent`, the authority and the target. A verdict always comes
//! back, its signature base bounded by the fields' size, and a request
//! botscope signs for any agent URL verifies. The agent URL reader and
//! the key directory reader on the same bytes: an identifier normalizes
//! to itself, and never panics.
#![no_main]

use botscope_httpsig::{
    KeySet, Outcome, Policy, Request, SignSpec, SigningKey, sign_request, verify_request,
};
use libfuzzer_sys::fuzz_target;

/// RFC 9421's test key (its seed): fixed, so runs reproduce.
const SEED: [u8; 32] = [
    0x9f, 0x83, 0x62, 0xf8, 0x7a, 0x48, 0x4a, 0x95, 0x4e, 0x6e, 0x74, 0x0c, 0x5b, 0x4c, 0x0e, 0x84,
    0x22, 0x91, 0x39, 0xa2, 0x0a, 0xa8, 0xab, 0x56, 0xff, 0x66, 0x58, 0x6f, 0x6a, 0x7d, 0x29, 0xc5,
];

fuzz_target!(|data: &[u8]| {
    // The whole input as a request head (`verify --request`): a request
    // or a reason, and a verdict for it.
    if let Ok(req) = Request::parse_head(data, "https") {
        let _ = verify_request(
            &req,
            &KeySet::new(),
            1_735_689_600,
            &Policy::with_test_keys(),
        );
        assert!(req.headers.len() <= botscope_httpsig::message::MAX_HEADER_LINES);
    }
    let text = String::from_utf8_lossy(data);
    if let Ok(a) = botscope_httpsig::agent::resolve(&text) {
        assert!(a.identifier.starts_with("https://") && !a.identifier.contains('?'));
        let again = botscope_httpsig::agent::identifier(&a.identifier);
        assert_eq!(botscope_httpsig::agent::identifier(&again), again);
    }
    for well_known in [false, true] {
        if let Ok(d) = botscope_httpsig::Directory::parse_as(data, well_known) {
            assert!(d.keys.len() <= botscope_httpsig::keys::MAX_DIRECTORY_KEYS);
        }
    }
    let mut lines = text.split('\n');
    let mut next = || lines.next().unwrap_or("").to_owned();
    let (input, signature, agent, authority, target) = (next(), next(), next(), next(), next());
    let mut headers = vec![
        ("Signature-Input".to_owned(), input),
        ("Signature".to_owned(), signature),
    ];
    if !agent.is_empty() {
        headers.push(("Signature-Agent".to_owned(), agent.clone()));
    }
    let req = Request::new("GET", "https", &authority, &target, headers);
    let Ok(key) = SigningKey::from_seed(&SEED) else {
        return;
    };
    let mut keys = KeySet::new();
    keys.add_key(None, key.public());
    keys.add_key(Some(agent.as_str()), key.public());
    let v = verify_request(&req, &keys, 1_735_689_600, &Policy::with_test_keys());
    if let Some(b) = &v.base {
        assert!(
            b.len() <= 32 * (data.len() + 256),
            "base of {} bytes",
            b.len()
        );
    }
    // Our own signature over the same request verifies, for any agent
    // string that is a structured-field string and an https URL (draft-01:
    // "an absolute URI, whose scheme MUST be https"); any other is
    // refused as such.
    let plain = Request::new("GET", "https", &authority, &target, Vec::new());
    let spec = SignSpec::new(
        Some(agent.as_str()),
        1_735_689_600,
        60,
        Some("bm9uY2U=".into()),
    );
    if let Ok(signed) = sign_request(&plain, &key, &spec) {
        let mut sent = plain.clone();
        sent.headers.extend(signed.headers());
        let v = verify_request(&sent, &keys, 1_735_689_610, &Policy::with_test_keys());
        if botscope_httpsig::agent::resolve(&agent).is_ok() {
            assert_eq!(v.outcome, Outcome::Verified, "{}", v.reason);
        } else {
            assert_eq!(v.outcome, Outcome::Invalid, "{}", v.reason);
        }
    }
});
