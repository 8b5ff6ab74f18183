//! `botscope harvest`: robots.txt from many hosts into the store. The run
//! is botscope-harvest's; this module reads the host list, turns the flags
//! into its configuration, and draws the progress and the summary.

use std::io::IsTerminal;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use botscope_dns::ServerCheck;
use botscope_harvest::{
    Config, DEFAULT_USER_AGENT, Progress, RunConfig, RunError, Selection, Tally, read_host_list,
};
use botscope_robotstxt::FetchPolicy;
use botscope_store::{RunId, SqliteStore};

use crate::cli::HarvestArgs;
use crate::exit::Outcome;

/// `30s`, `500ms`, `15m`, `12h`, `7d` (a bare number is seconds).
pub fn parse_duration(s: &str) -> Result<Duration> {
    let s = s.trim();
    let split = s
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(s.len());
    let (n, unit) = s.split_at(split);
    let n: f64 = n
        .parse()
        .with_context(|| format!("{s:?} is not a duration (such as 30s, 15m, 12h, 7d)"))?;
    let secs = match unit.trim() {
        "ms" => n / 1000.0,
        "" | "s" => n,
        "m" => n * 60.0,
        "h" => n * 3600.0,
        "d" => n * 86_400.0,
        u => bail!("{s:?}: unknown unit {u:?} (ms, s, m, h, d)"),
    };
    if !secs.is_finite() || secs < 0.0 {
        bail!("{s:?} is not a duration");
    }
    Ok(Duration::from_secs_f64(secs))
}

fn nameservers(args: &[String]) -> Result<Vec<SocketAddr>> {
    if args.is_empty() {
        return botscope_dns::system_nameservers().context("no --dns given");
    }
    botscope_dns::parse_nameservers(args).context("--dns")
}

/// What the run says as it goes: notes on standard error, a bar on a
/// terminal.
struct Bar(Option<indicatif::ProgressBar>);

impl Progress for Bar {
    fn selected(&self, run: RunId, s: &Selection) {
        if s.already_done > 0 {
            eprintln!(
                "botscope: resuming run {run}: {} hosts already done",
                s.already_done
            );
        }
        if s.fresh > 0 {
            eprintln!(
                "botscope: {} hosts fetched more recently than --older-than, skipped",
                s.fresh
            );
        }
        if s.later > 0 {
            eprintln!(
                "botscope: {} hosts asked to be fetched later (Retry-After), skipped",
                s.later
            );
        }
        if let Some(pb) = &self.0 {
            pb.set_length(s.todo.len() as u64);
        }
    }

    fn nameserver(&self, r: &ServerCheck) {
        if !r.usable {
            eprintln!(
                "botscope: nameserver {} left out: {}",
                r.addr,
                r.problem.as_deref().unwrap_or("?")
            );
        }
    }

    fn recorded(&self, tally: &Tally) {
        if let Some(pb) = &self.0 {
            pb.set_position(tally.done);
            pb.set_message(tally.to_string());
        }
    }
}

fn bar(disabled: bool) -> Bar {
    Bar((!disabled && std::io::stderr().is_terminal()).then(|| {
        let pb = indicatif::ProgressBar::new(0);
        pb.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} {per_sec} ETA {eta}\n{msg}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        pb.set_draw_target(indicatif::ProgressDrawTarget::stderr());
        pb
    }))
}

/// `harvest`.
pub async fn run(a: &HarvestArgs) -> Result<Outcome> {
    let list = if a.hosts.as_os_str() == "-" {
        read_host_list(std::io::stdin().lock()).context("reading the host list")?
    } else {
        let f = std::fs::File::open(&a.hosts)
            .with_context(|| format!("cannot open {}", a.hosts.display()))?;
        read_host_list(std::io::BufReader::new(f))
            .with_context(|| format!("reading {}", a.hosts.display()))?
    };
    if list.duplicates > 0 {
        eprintln!("botscope: {} duplicate hosts skipped", list.duplicates);
    }
    if list.junk_count > 0 {
        let samples: Vec<String> = list
            .junk
            .iter()
            .map(|(n, l)| format!("line {n}: {l:?}"))
            .collect();
        eprintln!(
            "botscope: {} lines are not host names, skipped ({})",
            list.junk_count,
            samples.join("; ")
        );
    }
    if list.hosts.is_empty() {
        bail!("no host names in {}", a.hosts.display());
    }
    let store = SqliteStore::open(&a.db.db)?;
    let mut extra_roots = Vec::new();
    if let Some(ca) = &a.ca_file {
        use rustls_pki_types::pem::PemObject;
        let pem = std::fs::read(ca).with_context(|| format!("cannot read {}", ca.display()))?;
        for c in rustls_pki_types::CertificateDer::pem_slice_iter(&pem) {
            extra_roots
                .push(c.with_context(|| format!("{}: not a PEM certificate", ca.display()))?);
        }
    }
    let config = RunConfig {
        fetch: Config {
            user_agent: a
                .user_agent
                .clone()
                .unwrap_or_else(|| DEFAULT_USER_AGENT.to_owned()),
            connect_timeout: parse_duration(&a.connect_timeout)?,
            total_timeout: parse_duration(&a.timeout)?,
            ip_gap: parse_duration(&a.ip_gap)?,
            allow_private: a.allow_private,
            http_port: a.http_port,
            https_port: a.https_port,
            policy: FetchPolicy::for_semantics(a.semantics.into()),
            extra_roots,
        },
        concurrency: a.concurrency.max(1),
        nameservers: nameservers(&a.dns)?,
        resume: a.resume,
        refresh_older_than: if a.refresh {
            a.older_than.as_deref().map(parse_duration).transpose()?
        } else {
            None
        },
        input: a.hosts.display().to_string(),
    };
    let progress = Arc::new(bar(a.no_progress));
    let (summary, _) = match botscope_harvest::run(list, store, config, progress.clone()).await {
        Ok(done) => done,
        Err(RunError::NothingToResume) => bail!(
            "--resume: no unfinished run over this host list in {}",
            a.db.db.display()
        ),
        Err(e) => return Err(e.into()),
    };
    if let Some(pb) = &progress.0 {
        pb.finish_and_clear();
    }
    let secs = summary.elapsed.as_secs_f64();
    eprintln!(
        "harvested {} hosts in {:.1} s ({:.0} hosts/s): {}",
        summary.tally.done,
        secs,
        summary.tally.done as f64 / secs.max(1e-9),
        summary.tally
    );
    Ok(Outcome::Ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30s").ok(), Some(Duration::from_secs(30)));
        assert_eq!(
            parse_duration("500ms").ok(),
            Some(Duration::from_millis(500))
        );
        assert_eq!(
            parse_duration("7d").ok(),
            Some(Duration::from_secs(7 * 86400))
        );
        assert_eq!(parse_duration("90").ok(), Some(Duration::from_secs(90)));
        assert!(parse_duration("soon").is_err());
        assert!(parse_duration("5y").is_err());
    }
}
