//! Canary tokens from strangers' bytes: any bytes as an HTML page through
//! the slot filler in chunks the first byte chooses, as text the finder
//! reads (split where the second byte says), as a code, and as an
//! issuance record read back. Checks: the filled page is the page with
//! each placed marker replaced and nothing else changed; a code the key
//! never made reads as nothing; the finder reports only what the key or
//! the record vouches for, at offsets inside the input; every record
//! line is an entry, malformed or over. Cost: the slot and the finder
//! look at each byte a bounded number of times (the finder's work per
//! token is bounded by its pair and candidate limits), held back at most
//! the marker's length.
#![no_main]

use botscope_canary::code::{CanaryKey, Client, Mark};
use botscope_canary::find::{Finder, Index};
use botscope_canary::record::Issue;
use botscope_canary::slot::{MARKER, Slot};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The slot, in chunks.
    let text = "\u{1}REF\u{1}";
    let step = usize::from(data.first().copied().unwrap_or(1)).max(1);
    let mut s = Slot::new(text.to_owned());
    let mut out = Vec::new();
    for c in data.chunks(step) {
        out.extend(s.push(c));
    }
    out.extend(s.finish());
    let placed = s.placed as usize;
    assert_eq!(
        out.len() + placed * MARKER.len(),
        data.len() + placed * text.len()
    );
    if memchr::memmem::find(data, text.as_bytes()).is_none() {
        let mut back = Vec::new();
        let mut rest = &out[..];
        while let Some(i) = memchr::memmem::find(rest, text.as_bytes()) {
            back.extend_from_slice(&rest[..i]);
            back.extend_from_slice(MARKER);
            rest = &rest[i + text.len()..];
        }
        back.extend_from_slice(rest);
        assert_eq!(back, data);
    }

    // The finder, with a record of one mark.
    let key = CanaryKey::new(&[9; 32]).expect("key");
    let mark = Mark::at(
        Client::Verified {
            bot: "Googlebot".into(),
        },
        1_800_000_000,
        86_400,
    );
    let issue = Issue {
        phrase: key.phrase(&mark),
        code: key.code(&mark),
        mark: mark.clone(),
        first_served: 1,
        last_served: 2,
        pages: 1,
    };
    let ix = Index::new([issue]);
    let input = String::from_utf8_lossy(data);
    let cut = usize::from(data.get(1).copied().unwrap_or(0)) * input.len() / 256;
    let cut = (0..=cut)
        .rev()
        .find(|&i| input.is_char_boundary(i))
        .unwrap_or(0);
    let mut f = Finder::new(&key, &ix);
    let mut seen = Vec::new();
    f.push(&input[..cut], 0, &mut |s| seen.push(s));
    f.push(&input[cut..], cut as u64, &mut |s| seen.push(s));
    f.finish(&mut |s| seen.push(s));
    for s in &seen {
        assert_eq!(s.mark, mark, "only the record's or the key's marks");
        assert!((s.offset as usize) < input.len().max(1));
        assert!(s.edits <= 1);
    }
    // A code reads only as a mark the key made: this input is not one.
    if let Some(m) = key.decode(&input) {
        assert_eq!(m, mark, "{input}");
    }
    // The record read back.
    let r = botscope_canary::record::read(&mut &data[..], 16).expect("bytes in memory read");
    assert!(r.issues.len() <= 16);
});
