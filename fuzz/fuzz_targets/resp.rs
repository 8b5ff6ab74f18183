//! The fleet's Redis answers from arbitrary bytes (what a Redis, or anyone
//! on the path to a plaintext `redis://`, may send): three answers read
//! within the exchange's bounds, or an error; never a panic, never more
//! than [`MAX_ANSWER_BYTES`] of bulk data or [`MAX_ELEMENTS`] elements an
//! array (its cost bound: each byte read once).
#![no_main]

use botscope_gate::resp::{MAX_ANSWER_BYTES, MAX_ELEMENTS, Value, read_answers};
use libfuzzer_sys::fuzz_target;

thread_local! {
    static RUNTIME: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
}

fn bytes(v: &Value) -> usize {
    match v {
        Value::Bulk(b) => b.len(),
        Value::Status(s) | Value::Error(s) => s.len(),
        Value::Array(a) => {
            assert!(a.len() <= MAX_ELEMENTS, "{} elements", a.len());
            a.iter()
                .map(|x| {
                    assert!(!matches!(x, Value::Array(_)), "nested");
                    bytes(x)
                })
                .sum()
        }
        Value::Nil | Value::Int(_) => 0,
    }
}

fuzz_target!(|data: &[u8]| {
    let mut r = data;
    let got = RUNTIME.with(|rt| rt.block_on(read_answers(&mut r, 3)));
    if let Ok(answers) = got {
        assert_eq!(answers.len(), 3);
        let total: usize = answers.iter().map(bytes).sum();
        assert!(total <= MAX_ANSWER_BYTES, "{total} bytes");
        assert!(
            data.len() - r.len() <= MAX_ANSWER_BYTES + 4096,
            "read past the bound"
        );
    }
});
