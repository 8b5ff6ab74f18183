//! `botscope ledger`: decision logs read line by line (each line within
//! botscope-gate's `ledger::MAX_LINE`, the rest of a longer one skipped),
//! summed by botscope-gate's `Ledger`, printed.

use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::path::Path;

use anyhow::{Context, Result, bail};
use botscope_gate::ledger::{Key, Ledger, MAX_LINE};

use crate::cli::{LedgerArgs, LedgerFormat};
use crate::exit::ExitStatus;

/// Feeds every line of `r` to `ledger`; a line past `MAX_LINE` is given
/// as its first `MAX_LINE + 1` bytes (counted as too long), its rest
/// skipped.
fn feed(r: impl Read, ledger: &mut Ledger) -> io::Result<()> {
    let mut r = BufReader::with_capacity(1 << 16, r);
    let mut line = Vec::with_capacity(4096);
    loop {
        line.clear();
        let n = r
            .by_ref()
            .take(MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut line)?;
        if n == 0 {
            return Ok(());
        }
        if line.last() != Some(&b'\n') && line.len() > MAX_LINE {
            // Skip to the end of this line.
            let mut rest = Vec::new();
            loop {
                rest.clear();
                let m = r.by_ref().take(1 << 16).read_until(b'\n', &mut rest)?;
                if m == 0 || rest.last() == Some(&b'\n') {
                    break;
                }
            }
        }
        ledger.add(&String::from_utf8_lossy(&line));
    }
}

/// `ledger`.
pub fn run(a: &LedgerArgs) -> Result<ExitStatus> {
    let mut keys = Vec::new();
    for k in a.by.split(',').map(str::trim).filter(|k| !k.is_empty()) {
        match Key::parse(k) {
            Some(k) => keys.push(k),
            None => bail!(
                "--by {}: the keys are agent, day and path",
                botscope_text::field(k)
            ),
        }
    }
    let mut ledger = Ledger::new(&keys);
    for f in &a.files {
        if f == Path::new("-") {
            feed(io::stdin().lock(), &mut ledger).context("failed to read standard input")?;
        } else {
            let file = std::fs::File::open(f)
                .with_context(|| format!("failed to open {}", crate::io::display(f)))?;
            feed(file, &mut ledger)
                .with_context(|| format!("failed to read {}", crate::io::display(f)))?;
        }
    }
    let mut out = BufWriter::new(io::stdout().lock());
    let rows = ledger.rows();
    let keyed = |k: Key| ledger.keys().contains(&k);
    match a.format {
        LedgerFormat::Json => {
            for r in &rows {
                writeln!(out, "{}", serde_json::to_string(r)?)?;
            }
        }
        LedgerFormat::Csv => {
            let mut head: Vec<&str> = Vec::new();
            for (k, name) in [
                (Key::Agent, "agent"),
                (Key::Day, "day"),
                (Key::Path, "path"),
            ] {
                if keyed(k) {
                    head.push(name);
                }
            }
            head.extend(["charges", "currency", "amount"]);
            writeln!(out, "{}", head.join(","))?;
            for r in &rows {
                let mut cells: Vec<String> = Vec::new();
                for v in [&r.agent, &r.day, &r.path].into_iter().flatten() {
                    cells.push(csv(v));
                }
                for p in &r.amounts {
                    let mut line = cells.clone();
                    line.push(r.charges.to_string());
                    line.push(p.currency.to_string());
                    line.push(p.amount());
                    writeln!(out, "{}", line.join(","))?;
                }
            }
        }
        LedgerFormat::Text => {
            for r in &rows {
                let mut parts: Vec<String> = [&r.agent, &r.day, &r.path]
                    .into_iter()
                    .flatten()
                    .map(|v| botscope_text::field(if v.is_empty() { "-" } else { v }).into_owned())
                    .collect();
                parts.push(format!("{} charge(s)", r.charges));
                let amounts: Vec<String> = r.amounts.iter().map(ToString::to_string).collect();
                parts.push(amounts.join(" + "));
                writeln!(out, "{}", parts.join("\t"))?;
            }
        }
    }
    out.flush()?;
    let bad: u64 = ledger.malformed.values().sum();
    eprintln!(
        "ledger: {} line(s) read, {} payment(s), {bad} not read{}",
        ledger.lines,
        ledger.payments,
        if ledger.over > 0 {
            format!(
                ", {} past the {} rows kept",
                ledger.over,
                botscope_gate::ledger::MAX_ROWS
            )
        } else {
            String::new()
        }
    );
    for (why, n) in &ledger.malformed {
        eprintln!(
            "  {n} {}",
            serde_json::to_value(why)?.as_str().unwrap_or("?")
        );
    }
    Ok(ExitStatus::Success)
}

/// A CSV cell: quoted when it holds a comma, a quote or a line break, and
/// never read as a formula.
fn csv(s: &str) -> String {
    let s = botscope_text::csv_cell(s);
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.into_owned()
    }
}
