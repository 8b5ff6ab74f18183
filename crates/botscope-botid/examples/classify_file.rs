//! Classifies every line of a file of User-Agents (one per line) and
//! prints how long it took and how many were robots: the per-string cost
//! of a log with many distinct User-Agents.
//!
//! ```sh
//! cargo run --release -p botscope-botid --example classify_file -- uas.txt
//! ```

use std::time::Instant;

use botscope_botid::{Registry, UaClassifier};

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: classify_file FILE");
        std::process::exit(2);
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(2);
        }
    };
    let uas: Vec<&str> = text.lines().collect();
    let registry = Registry::bundled();
    let t = Instant::now();
    let c = match UaClassifier::bundled(&registry) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    let built = t.elapsed();
    for round in 0..3 {
        let t = Instant::now();
        let bots = uas.iter().filter(|ua| c.classify(ua).is_bot).count();
        let e = t.elapsed();
        println!(
            "round {round}: {} User-Agents in {:.3} s ({:.2} µs each), {bots} robots (classifier built in {:.3} s)",
            uas.len(),
            e.as_secs_f64(),
            e.as_secs_f64() * 1e6 / uas.len().max(1) as f64,
            built.as_secs_f64()
        );
    }
}
