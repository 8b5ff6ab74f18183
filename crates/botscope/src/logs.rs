//! `botscope logs`: access logs in, a report on robots out (and the
//! web-server lists). The pipeline is botscope-logs'; this module turns
//! arguments into its settings, draws the progress bar, gathers DNS
//! evidence when asked, and writes what comes out.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Result;
use botscope_logs::{
    InputProblem, Job, Outcome as Analysed, Progress, RobotsSpec, RobotsTxt,
    Settings as ReadSettings, Source, Warning,
};

use crate::cli::{AnalyzeArgs, ExportListsArgs, LogInputArgs, ReportFormat};
use crate::exit::ExitStatus;
use crate::settings::Settings;

/// A progress bar on a terminal; warnings on standard error.
struct Bar(Option<indicatif::ProgressBar>);

impl Progress for Bar {
    fn read(&self, n: u64) {
        if let Some(pb) = &self.0 {
            pb.inc(n);
        }
    }

    fn warn(&self, w: &Warning) {
        let line = format!("botscope: warning: {w}");
        match &self.0 {
            Some(pb) => pb.println(line),
            None => eprintln!("{line}"),
        }
    }
}

/// Key directories fetched while the log is read (`--verify`).
struct Fetch(botscope_http::directory::DirectoryConfig);

impl botscope_logs::Directories for Fetch {
    fn fetch(&self, agent: &str) -> Result<botscope_httpsig::Directory, String> {
        botscope_http::directory::fetch_directory_blocking(agent, &self.0, botscope_os::unix_now())
            .map(|f| f.directory)
            .map_err(|e| e.to_string())
    }
}

/// Reads, analyses and verifies; `lists`: also prepare the export lists.
async fn run(a: &LogInputArgs, lists: bool, settings: &Settings) -> Result<Analysed> {
    let registry = settings.registry(a.registry.as_ref())?;
    let specs = a
        .robots
        .iter()
        .map(|s| RobotsSpec::parse(s))
        .collect::<Result<Vec<_>, _>>()?;
    let robots = RobotsTxt::load(&specs, a.semantics)?;
    let job = Job::new(&registry, robots, settings.threads)?;
    let read_settings = ReadSettings {
        format: a.log_format.clone(),
        window: botscope_accesslog::Window {
            since: a.since,
            until: a.until,
        },
        threads: a.threads.unwrap_or(settings.threads).max(1),
        max_clients: usize::try_from(a.max_clients).unwrap_or(usize::MAX),
        keep_threads: false,
    };
    let files: Vec<PathBuf> = if a.files.is_empty() {
        if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
            eprintln!(
                "botscope: reading a log from standard input (give FILE..., or end with Ctrl-D)"
            );
        }
        vec![PathBuf::from("-")]
    } else {
        a.files.clone()
    };
    let sources: Vec<Source> = files.into_iter().map(Source::from_arg).collect();
    let total = sources.iter().filter_map(Source::size).sum();
    let bar = Bar(crate::progress::bar(
        settings,
        a.no_progress,
        total,
        "{spinner} [{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} {bytes_per_sec} ETA {eta}",
    ));
    let read = if a.verify {
        let fetch = Fetch(crate::settings::directory_config(&a.directories)?);
        job.read_signed(sources, &read_settings, &bar, &fetch)?
    } else {
        job.read(sources, &read_settings, &bar)?
    };
    if let Some(pb) = &bar.0 {
        pb.finish_and_clear();
    }
    let evidence = if a.verify {
        let want = job.dns_wanted(&read);
        if want.is_empty() {
            Default::default()
        } else {
            let dns = crate::verify::dns_evidence(&a.dns, settings).await?;
            crate::verify::gather(&dns, &want).await
        }
    } else {
        Default::default()
    };
    Ok(job.finish(read, &evidence, &settings.owners(), lists))
}

fn emit(out: Option<&Path>, content: &str) -> Result<()> {
    match out {
        Some(p) => botscope_os::write_atomic(p, content.as_bytes())?,
        None => {
            let mut o = std::io::stdout().lock();
            o.write_all(content.as_bytes())?;
            o.flush()?;
        }
    }
    Ok(())
}

fn status(o: &Analysed) -> ExitStatus {
    if o.damaged {
        ExitStatus::Damaged
    } else {
        ExitStatus::Success
    }
}

/// Checks the outcome before anything is written: an input that could
/// not be read (exit 4) or a window that holds no request (exit 2) writes
/// no report and no list, so a wrong flag never replaces a good report.
fn refused(o: &Analysed) -> Option<ExitStatus> {
    let problem = o.problem()?;
    eprintln!("botscope: error: {problem}");
    Some(match problem {
        InputProblem::Unreadable { .. } => ExitStatus::Unreadable,
        InputProblem::EmptyWindow { .. } => ExitStatus::Error,
    })
}

/// `logs analyze`.
pub async fn analyze(a: &AnalyzeArgs, settings: &Settings) -> Result<ExitStatus> {
    let o = run(&a.input, a.export.is_some(), settings).await?;
    if let Some(code) = refused(&o) {
        return Ok(code);
    }
    let text = match a.format {
        ReportFormat::Json => botscope_logs::render::json(&o.report),
        ReportFormat::Csv => botscope_logs::render::csv(&o.report),
        // The terminal's width on a terminal, 100 columns otherwise.
        ReportFormat::Text => botscope_logs::render::text_fit(
            &o.report,
            match (&a.out, terminal_size::terminal_size()) {
                (None, Some((w, _))) => usize::from(w.0).max(60),
                _ => 100,
            },
        ),
        ReportFormat::Html => botscope_logs::render::html(&o.report),
    };
    emit(a.out.as_deref(), &text)?;
    if let Some(dir) = &a.export {
        botscope_logs::lists::write_dirs(dir, &o.lists)?;
        eprintln!("{}: {}", dir.display(), o.lists.summary());
    }
    let code = status(&o);
    // Freed (or not) where the process ends.
    settings.leftovers.keep(o);
    Ok(code)
}

/// `logs export-lists`.
pub async fn export_lists(a: &ExportListsArgs, settings: &Settings) -> Result<ExitStatus> {
    let o = run(&a.input, true, settings).await?;
    if let Some(code) = refused(&o) {
        return Ok(code);
    }
    botscope_logs::lists::write_dirs(&a.out_dir, &o.lists)?;
    println!("{}: {}", a.out_dir.display(), o.lists.summary());
    Ok(status(&o))
}

#[cfg(test)]
mod tests {
    /// `--max-clients`'s default is the library's.
    #[test]
    fn the_default_client_cap_is_the_librarys() {
        use clap::Parser;
        let cli = botscope_cli::Cli::try_parse_from(["botscope", "logs", "analyze", "x.log"])
            .expect("arguments");
        let botscope_cli::Command::Logs(botscope_cli::LogsCommand::Analyze(a)) = cli.command else {
            panic!("logs analyze");
        };
        assert_eq!(
            a.input.max_clients as usize,
            botscope_accesslog::MAX_CLIENTS
        );
    }
}
