//! The botscope command as a library: [`run`] takes parsed arguments and
//! the [`Settings`] resolved once, runs the command inside the caller's
//! Tokio runtime, and returns its [`ExitStatus`]. `main` only parses,
//! starts the runtime and maps the status to the process exit code; tests
//! call [`run`] in-process.
//!
//! ```
//! use botscope::cli::Cli;
//! use botscope::{ExitStatus, Settings};
//! use clap::Parser;
//!
//! let dir = botscope_testkit::tempdir();
//! let robots = dir.path().join("robots.txt");
//! std::fs::write(&robots, "User-agent: *\nDisallow: /private/\n")?;
//! let robots = robots.to_str().ok_or("path")?;
//! let check = |url: &str| -> anyhow::Result<ExitStatus> {
//!     let cli = Cli::try_parse_from([
//!         "botscope", "robots", "check", "--robots", robots, "--agent", "Googlebot", url,
//!     ])?;
//!     let runtime = tokio::runtime::Runtime::new()?;
//!     runtime.block_on(botscope::run(cli, &Settings::from_env()))
//! };
//! // The verdicts print on standard output; the status says them too.
//! assert_eq!(check("https://example.com/public")?, ExitStatus::Success);
//! assert_eq!(check("https://example.com/private/x")?, ExitStatus::Negative);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

/// The command-line types (their own crate).
pub use botscope_cli as cli;
mod exit;
use botscope_os::stdio as io;
mod progress;
mod settings;

mod bots;
mod canary;
mod data;
mod export;
mod fetch;
mod gate_export;
mod harvest;
mod honeypot;
mod keys;
mod ledger;
mod logs;
mod policy;
mod research;
mod robots;
mod serve;
mod stop;
mod store;
mod terms;
mod verify;

pub use exit::{ExitStatus, finish};
pub use settings::Settings;

use cli::{
    BotsCommand, CanaryCommand, Cli, Command, DataCommand, FrontierCommand, HoneypotCommand,
    IndexCommand, KeysCommand, LogsCommand, PolicyCommand, RobotsCommand, StoreCommand,
};

/// The command `cli` names as one boxed future: what `main` blocks on.
/// Boxed here, so that the command's whole tree of futures is compiled
/// once, with the library, and the binary only polls it.
pub fn task<'a>(
    cli: Cli,
    settings: &'a Settings,
) -> std::pin::Pin<Box<dyn Future<Output = anyhow::Result<ExitStatus>> + 'a>> {
    Box::pin(run(cli, settings))
}

/// Runs the command `cli` names.
pub async fn run(cli: Cli, settings: &Settings) -> anyhow::Result<ExitStatus> {
    let s = settings;
    match cli.command {
        Command::Robots(cmd) => match cmd {
            RobotsCommand::Check(a) => robots::check(&a).await,
            RobotsCommand::CheckBatch(a) => robots::check_batch(&a),
            RobotsCommand::Lint(a) => robots::lint(&a, s).await,
            RobotsCommand::Parse(a) => robots::parse(&a),
            RobotsCommand::Meta(a) => robots::meta(&a),
            RobotsCommand::Generate(a) => robots::generate(&a, s),
        },
        Command::Verify(a) => verify::cli(&a, s).await,
        Command::Logs(cmd) => match cmd {
            LogsCommand::Analyze(a) => logs::analyze(&a, s).await,
            LogsCommand::ExportLists(a) => logs::export_lists(&a, s).await,
        },
        Command::Harvest(a) => harvest::run(&a, s).await,
        Command::Frontier(FrontierCommand::Add(a)) => store::frontier_add(&a),
        Command::Frontier(FrontierCommand::Stats(a)) => store::frontier_stats(&a),
        Command::Store(cmd) => match cmd {
            StoreCommand::Stats(a) => store::stats(&a),
            StoreCommand::Export(a) => store::export(&a),
            StoreCommand::Import(a) => store::import(&a, s),
            StoreCommand::Synth(a) => store::synth(&a),
            StoreCommand::Copy(a) => store::copy(&a),
        },
        Command::Bots(cmd) => match cmd {
            BotsCommand::List(a) => bots::list(&a, s),
            BotsCommand::Show(a) => bots::show(&a, s),
            BotsCommand::Validate(a) => bots::validate(&a),
            BotsCommand::Export(a) => export::run(&a, s),
            BotsCommand::Update(a) => bots::update(&a, s),
        },
        Command::Data(cmd) => match cmd {
            DataCommand::Update(a) => data::update(&a, s).await,
            DataCommand::Status(a) => data::status(&a, s),
        },
        Command::Index(IndexCommand::Build(a)) => research::build(&a, s),
        Command::Index(IndexCommand::Update(a)) => research::update(&a),
        Command::Index(IndexCommand::Export(a)) => research::export(&a, s),
        Command::Search(a) => research::search(&a),
        Command::Bias(a) => research::bias(&a),
        Command::Favor(a) => research::favor(&a),
        Command::Submit(a) => research::submit(&a),
        Command::Trends(a) => research::trends(&a, s),
        Command::Watch(a) => research::watch(&a, s),
        Command::Diff(a) => research::diff(&a),
        Command::Serve(a) => serve::run(&a, s).await,
        Command::Gate(a) => serve::gate(&a, s).await,
        Command::Fetch(a) => fetch::run(&a).await,
        Command::Terms(a) => terms::run(&a).await,
        Command::Ledger(a) => ledger::run(&a),
        Command::Honeypot(HoneypotCommand::Serve(a)) => honeypot::serve(&a, s).await,
        Command::Honeypot(HoneypotCommand::Report(a)) => honeypot::report(&a, s).await,
        Command::Keys(KeysCommand::Generate(a)) => keys::generate(&a),
        Command::Keys(KeysCommand::Sign(a)) => keys::sign(&a),
        Command::Canary(CanaryCommand::Find(a)) => canary::find(&a),
        Command::Policy(PolicyCommand::Init(a)) => policy::init(&a),
        Command::Policy(PolicyCommand::Check(a)) => policy::check(&a, s),
        Command::Policy(PolicyCommand::Robots(a)) => policy::robots(&a, s),
        Command::Policy(PolicyCommand::Replay(a)) => policy::replay(&a, s).await,
    }
}
