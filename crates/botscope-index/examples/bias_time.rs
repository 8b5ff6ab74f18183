//! Times the bias of every file of a folder under both semantics (what
//! `index build` computes per distinct body), twice, and prints the
//! counted work beside it.
//!
//! ```sh
//! cargo run --release -p botscope-index --example bias_time -- ../shared/data/robotstxt/corpus
//! ```

use std::time::Instant;

use botscope_robotstxt::Semantics;

fn main() -> std::io::Result<()> {
    let Some(dir) = std::env::args_os().nth(1) else {
        eprintln!("usage: bias_time DIR");
        std::process::exit(2);
    };
    let mut files = Vec::new();
    for e in std::fs::read_dir(dir)? {
        files.push(std::fs::read(e?.path())?);
    }
    for round in 1..=2 {
        let t = Instant::now();
        let mut work = 0u64;
        for body in &files {
            for sem in [Semantics::Google, Semantics::Draft1996] {
                work += botscope_index::bias(body, sem).work;
            }
        }
        println!(
            "round {round}: bias of {} files under both semantics in {:.3} s, {work} units of work",
            files.len(),
            t.elapsed().as_secs_f64()
        );
    }
    Ok(())
}
