//! `gate export nft` and `gate export ipset`: the trap catches of a
//! running gate (or of the fleet's state) into firewall sets.

use std::io::Write as _;
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};
use botscope_cli::{GateExport, GateExportArgs};
use botscope_gate::export::{Batch, Entry, ipset_batch, nft_batch, nft_setup};

use crate::exit::ExitStatus;

pub async fn run(e: &GateExport) -> Result<ExitStatus> {
    let (a, nft) = match e {
        GateExport::Nft(a) => (a, true),
        GateExport::Ipset(a) => (a, false),
    };
    let max = usize::try_from(a.max_elements)?;
    if a.print_setup {
        if !nft {
            bail!("--print-setup is nftables's: ipset makes its sets in each batch");
        }
        print!("{}", nft_setup(&a.table, &a.set, max));
        return Ok(ExitStatus::Success);
    }
    loop {
        // Read first, whole: a source that fails changes nothing.
        let entries = read(a).await?;
        let b = if nft {
            nft_batch(&a.table, &a.set, &entries, max)
        } else {
            ipset_batch(&a.set, &entries, max)
        };
        apply(a, nft, &b)?;
        if b.left_out > 0 {
            eprintln!(
                "botscope: {} catches left out: a set holds at most {max} (--max-elements)",
                b.left_out
            );
        }
        let Some(every) = a.every else {
            return Ok(if b.left_out > 0 {
                ExitStatus::Negative
            } else {
                ExitStatus::Success
            });
        };
        tokio::time::sleep(every).await;
    }
}

async fn read(a: &GateExportArgs) -> Result<Vec<Entry>> {
    if let Some(url) = &a.state {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        return botscope_gate::export::from_state(url, now)
            .await
            .map_err(|e| anyhow::anyhow!("--state: {e}"));
    }
    let base = a.from.as_deref().context("--from or --state is needed")?;
    let token = a
        .operator_token_file
        .as_deref()
        .map(botscope_gate::startup::operator_token)
        .transpose()?;
    botscope_gate::export::from_gate(base, token.as_deref())
        .await
        .map_err(|e| anyhow::anyhow!("--from: {e}"))
}

fn apply(a: &GateExportArgs, nft: bool, b: &Batch) -> Result<()> {
    if a.print {
        print!("{}", b.text);
        return Ok(());
    }
    let program = a
        .program
        .clone()
        .unwrap_or_else(|| if nft { "nft" } else { "ipset" }.into());
    let args: &[&str] = if nft { &["-f", "-"] } else { &["restore"] };
    let mut child = Command::new(&program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("{} could not be run", program.display()))?;
    child
        .stdin
        .take()
        .context("stdin")?
        .write_all(b.text.as_bytes())?;
    let out = child.wait_with_output()?;
    if !out.status.success() {
        bail!(
            "{} refused the batch (nothing changed{}): {}",
            program.display(),
            if nft {
                "; does the table exist? --print-setup prints one"
            } else {
                ""
            },
            botscope_text::terminal(String::from_utf8_lossy(&out.stderr).trim())
        );
    }
    Ok(())
}
