//! Writes the synthetic access log to stdout (see `botscope_testkit::synthlog`).
//!
//! ```sh
//! cargo run --release -p botscope-testkit --example gen_log -- --lines 2000000 --seed 1 > big.log
//! # the bench's busy-site shape (`synthlog::write_many_clients`):
//! cargo run --release -p botscope-testkit --example gen_log -- --many-clients --lines 1000000 > many.log
//! # 200,000 addresses of browsers from a common pool (`synthlog::write_many_addresses`):
//! cargo run --release -p botscope-testkit --example gen_log -- --many-addresses --lines 1000000 > addresses.log
//! # 200,000 clients, most User-Agents met once or twice (`synthlog::write_many_agents`):
//! cargo run --release -p botscope-testkit --example gen_log -- --many-agents --lines 1000000 > agents.log
//! ```

fn arg(name: &str, default: u64) -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() -> std::io::Result<()> {
    let out = std::io::stdout().lock();
    let (lines, seed) = (arg("--lines", 100_000), arg("--seed", 1));
    if std::env::args().any(|a| a == "--many-clients") {
        botscope_testkit::synthlog::write_many_clients(out, lines, seed)
    } else if std::env::args().any(|a| a == "--many-addresses") {
        botscope_testkit::synthlog::write_many_addresses(out, lines, seed)
    } else if std::env::args().any(|a| a == "--many-agents") {
        botscope_testkit::synthlog::write_many_agents(out, lines, seed)
    } else {
        botscope_testkit::synthlog::write(out, lines, seed)
    }
}
