//! Compiles every file of a robots.txt corpus in a loop; for profiling.
//! `cargo run --release -p botscope-robotstxt --example compile_loop -- DIR [ROUNDS]`

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = args
        .next()
        .filter(|d| !d.is_empty())
        .unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/corpus").to_owned());
    let rounds: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(200);
    let files: Vec<Vec<u8>> = std::fs::read_dir(&dir)
        .expect("corpus dir")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().extension().is_some_and(|x| x == "txt"))
        .filter_map(|e| std::fs::read(e.path()).ok())
        .collect();
    let start = std::time::Instant::now();
    let mut rules = 0usize;
    for _ in 0..rounds {
        for f in &files {
            rules += botscope_robotstxt::Matcher::new(f).heap_size();
        }
    }
    let secs = start.elapsed().as_secs_f64();
    #[allow(clippy::cast_precision_loss)]
    let per_sec = (files.len() * rounds) as f64 / secs;
    println!(
        "{} files x {rounds}: {per_sec:.0} files/s ({rules})",
        files.len()
    );
}
