//! `gate export nft` and `gate export ipset`: the trap catches of a
//! running gate (or of the fleet's state) into firewall sets.

use std::io::Write as _;
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};
use botscope_cli::{GateExport, GateExportArgs};
use botscope_gate::export::{Batch, Entry, ipset_batch, nft_batch, nft_setup};

use crate::exit::ExitStatus;

/// Bytes of the gate's blocklist read at most (a million catches).
const MAX_LIST: usize = 256 << 20;

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
        let shared = botscope_gate::state::Shared::new(url, std::time::Duration::from_secs(5))
            .map_err(|e| anyhow::anyhow!("--state: {e}"))?;
        let mut all = Vec::new();
        let mut from = 0;
        loop {
            let got = shared
                .catches_from(from)
                .await
                .context("--state: the fleet's catches could not be read")?;
            let full = got.len() >= botscope_gate::state::CATCHES_PER_READ;
            let last = got.last().map(|(_, at)| *at);
            all.extend(got);
            match last {
                Some(at) if full && at > from && all.len() < botscope_gate::export::MAX_ENTRIES => {
                    from = at
                }
                _ => break,
            }
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        return Ok(botscope_gate::export::from_fleet(&all, now));
    }
    let base = a.from.as_deref().context("--from or --state is needed")?;
    let url = url::Url::parse(base)
        .and_then(|u| u.join("/.botscope/blocklist.txt?format=json"))
        .with_context(|| format!("--from {}", botscope_text::field(base)))?;
    let host = url
        .host_str()
        .context("--from: a URL with a host")?
        .to_owned();
    let port = url
        .port_or_known_default()
        .context("--from: a URL with a port")?;
    let ip = tokio::net::lookup_host((host.trim_matches(['[', ']']), port))
        .await?
        .next()
        .with_context(|| format!("--from: {host} has no address"))?
        .ip();
    let extra = match &a.operator_token_file {
        Some(p) => vec![(
            "Authorization".to_owned(),
            format!(
                "Bearer {}",
                String::from_utf8_lossy(&crate::serve::operator_token(p)?)
            ),
        )],
        None => Vec::new(),
    };
    let tls = botscope_http::Trust::system().connector()?;
    let r = botscope_http::exchange(
        botscope_http::Request {
            url: &url,
            host: host.trim_matches(['[', ']']),
            ip,
            port,
            user_agent: botscope_http::DEFAULT_USER_AGENT,
            accept: "application/json",
            if_none_match: None,
            if_modified_since: None,
            extra: &extra,
            cap: MAX_LIST,
            connect_timeout: std::time::Duration::from_secs(5),
            deadline: std::time::Instant::now() + std::time::Duration::from_secs(60),
        },
        &tls,
    )
    .await
    .with_context(|| format!("--from: {url}"))?;
    if r.status != 200 || r.truncated {
        bail!(
            "--from: {url} answered {}{}",
            r.status,
            if r.truncated { " (too long)" } else { "" }
        );
    }
    botscope_gate::export::read_blocklist(&r.body)
        .map_err(|e| anyhow::anyhow!("--from: {url}: {e}"))
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
