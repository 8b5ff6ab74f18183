//! `robots check-batch`'s engine over a query file, with a plain loader,
//! answers to standard output; for profiling the batch without building
//! the whole binary.
//! `cargo run --release -p botscope-robotstxt --example batch_loop -- QUERIES > /dev/null`

use std::io::{BufWriter, Read};

use botscope_robotstxt::{BatchChecker, ParseOptions, Semantics};

fn main() {
    let q = std::env::args().nth(1).expect("QUERIES");
    let input = std::fs::File::open(q).expect("queries");
    let mut checker = BatchChecker::new(Semantics::Google, ParseOptions::unlimited());
    let mut out = BufWriter::with_capacity(1 << 20, std::io::stdout().lock());
    let load = |path: &[u8], buf: &mut Vec<u8>| {
        let path = std::str::from_utf8(path).map_err(|e| e.to_string())?;
        std::fs::File::open(path)
            .and_then(|mut f| f.read_to_end(buf))
            .map(drop)
            .map_err(|e| e.to_string())
    };
    checker.run(input, &mut out, false, load).expect("run");
    eprintln!("answers reused: {}", checker.reused());
    std::mem::forget(checker);
}
