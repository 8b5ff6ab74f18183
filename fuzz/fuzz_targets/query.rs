//! BotSeer's query parser on arbitrary text: a query or an error whose
//! column lies inside the query (or just past it); the snippet and the
//! caret never panic either.
#![no_main]

use botscope_index::query::parse;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let q = String::from_utf8_lossy(data);
    match parse(&q) {
        Ok(parsed) => {
            let _ = parsed.robot();
            let _ = botscope_index::snippet(&q, &parsed.positive_clauses());
        }
        Err(e) => {
            let chars = q.chars().count();
            assert!(
                e.column >= 1 && e.column <= chars + 1,
                "column {} of {chars}",
                e.column
            );
            let _ = e.pointer(&q);
        }
    }
});
