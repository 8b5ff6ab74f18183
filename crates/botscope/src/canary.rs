//! `botscope canary find`: the references of the gate's marked pages,
//! found in text, HTML, JSON lines or WET files.

use std::io::Write as _;

use anyhow::{Context, Result};
use botscope_canary::input::{Format, scan};
use botscope_canary::{CanaryKey, Finder, Index};

use crate::cli::{CanaryFindArgs, CanaryInput, Format as Out};
use crate::exit::ExitStatus;

/// Entries of an issuance record read at most.
const MAX_RECORD: usize = 1_000_000;

/// `canary find`.
pub fn find(a: &CanaryFindArgs) -> Result<ExitStatus> {
    let key = CanaryKey::new(&botscope_gate::startup::key_file("--key", &a.key)?)?;
    let index = match &a.record {
        Some(p) => {
            let mut r = crate::io::input_maybe_gzip(p)?;
            let read = botscope_canary::record::read(&mut r, MAX_RECORD)
                .with_context(|| format!("failed to read {}", crate::io::display(p)))?;
            if read.malformed > 0 || read.over > 0 {
                tracing::warn!(
                    "{}: {} lines are not a record's entry, {} entries past {MAX_RECORD} not read",
                    crate::io::display(p),
                    read.malformed,
                    read.over
                );
            }
            Index::new(read.issues)
        }
        None => Index::default(),
    };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let (mut marks, mut bytes) = (0u64, 0u64);
    let mut failed = None;
    for p in &a.inputs {
        let name = crate::io::display(p).to_string();
        let format = match a.read_as {
            CanaryInput::Auto => Format::of_name(&name),
            CanaryInput::Text => Format::Text,
            CanaryInput::Html => Format::Html,
            CanaryInput::Jsonl => Format::Jsonl,
            CanaryInput::Wet => Format::Wet,
        };
        let mut r = crate::io::input_maybe_gzip(p)?;
        let mut finder = Finder::new(&key, &index);
        let read = scan(&mut r, format, &mut finder, &mut |f| {
            marks += 1;
            let line = match a.format {
                Out::Text => botscope_canary::report::text(&name, &f),
                Out::Json => botscope_canary::report::json(&name, &f).to_string(),
            };
            if failed.is_none()
                && let Err(e) = writeln!(out, "{line}")
            {
                failed = Some(e);
            }
        })
        .with_context(|| format!("failed to read {name}"))?;
        bytes += read.bytes;
    }
    if let Some(e) = failed {
        return Err(e.into());
    }
    let summary = botscope_canary::report::summary(marks, bytes);
    match a.format {
        Out::Text => writeln!(out, "{summary}")?,
        Out::Json => eprintln!("{summary}"),
    }
    out.flush()?;
    Ok(if marks > 0 {
        ExitStatus::Success
    } else {
        ExitStatus::Negative
    })
}
