//! botscope's command line: clap's derive types, the help text in their
//! doc comments. These types know nothing of the commands (they live in
//! their own crate, as in uv); `botscope::run` dispatches them.
//!
//! ```
//! use botscope_cli::{Cli, Command, RobotsCommand};
//! use clap::Parser;
//!
//! let cli = Cli::try_parse_from([
//!     "botscope", "robots", "check", "--robots", "robots.txt", "--agent", "Googlebot",
//!     "https://example.com/private/x",
//! ])?;
//! assert!(matches!(cli.command, Command::Robots(RobotsCommand::Check(_))));
//! assert!(Cli::try_parse_from(["botscope", "robots", "nonsense"]).is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

// A library speaks through its return values and the caller's writer,
// never by printing.
#![deny(clippy::print_stdout, clippy::print_stderr)]
// A doc comment on an argument struct would become help text: the
// variants and fields that use them carry the documentation.
#![allow(missing_docs)]
// In help text a URL in an example is plain text, not a link.
#![allow(rustdoc::bare_urls)]

use std::path::PathBuf;

use botscope_index::{FavorSort, Rank};
pub use botscope_robotstxt::Semantics;
use botscope_store::StoreLocator;
use clap::{Args, Parser, Subcommand, ValueEnum};

mod crawler;
mod research;
mod site;
mod values;
pub use crawler::*;
pub use research::*;
pub use site::*;
use values::*;

#[cfg(test)]
mod house_rules;

/// botscope: robots.txt and web robots, for crawler authors, site operators
/// and researchers.
#[derive(Debug, Parser)]
#[command(name = "botscope", version, long_about = None, propagate_version = true)]
pub struct Cli {
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// robots.txt: check URLs, lint, parse, robots meta tags.
    #[command(subcommand)]
    Robots(RobotsCommand),
    /// The crawler registry: list, show, validate, update, export.
    #[command(subcommand)]
    Bots(BotsCommand),
    /// Who is this crawler really? IP and User-Agent against the registry.
    ///
    /// Exit status: 0 verified, 1 spoofed, 3 unverifiable, 4 unknown or not a bot, 2 error.
    /// With --batch: one JSON verdict per input line, in order; 1 if any is spoofed.
    /// With --request: the request head's Web Bot Auth signature too (its agent's key
    /// directory fetched over https), the User-Agent from the head, the address from IP or
    /// the head's X-Real-IP / X-Forwarded-For.
    ///
    /// Example: botscope verify 66.249.66.1 --ua 'Mozilla/5.0 (compatible; Googlebot/2.1)' --offline
    ///
    /// Example: botscope verify --request request.txt --trace
    Verify(VerifyArgs),
    /// Access logs: what robots do on a site, who is fake, who disobeys robots.txt.
    #[command(subcommand)]
    Logs(LogsCommand),
    /// Harvest robots.txt from many hosts into the store, politely.
    ///
    /// HOSTS has one host per line, or `rank,host` lines as top-sites lists ship
    /// (`-` for stdin); duplicates and junk lines are reported and skipped. Each
    /// host: https://HOST/robots.txt (http:// when https cannot connect), up to 5
    /// redirects, 500 KiB, the fetch policy's outcome recorded with the status,
    /// headers, redirect chain and error class. One connection at a time per
    /// address with --ip-gap between hits. Exit status: 0 done; 2 error.
    ///
    /// With --worker NAME and a PostgreSQL --db, the process works the store's
    /// shared frontier (`botscope frontier add`) beside any number of others:
    /// one worker per address at a time across all of them, leases that a dead
    /// worker's hosts outlive, the re-crawl schedule; SIGINT or SIGTERM stops
    /// claiming and finishes what is claimed.
    ///
    /// Example: botscope harvest top-1m.csv --db robots.db --concurrency 512
    ///
    /// Example: botscope harvest --db postgres://bot@db/robots --worker a1 --once
    Harvest(HarvestArgs),
    /// The shared frontier of harvest workers, in a PostgreSQL store.
    #[command(subcommand)]
    Frontier(FrontierCommand),
    /// The harvest store: totals, export, import of WARC files.
    #[command(subcommand)]
    Store(StoreCommand),
    /// IP-owner databases (AS number, organisation, country): update, status.
    #[command(subcommand)]
    Data(DataCommand),
    /// The research index of the store: build, update.
    #[command(subcommand)]
    Index(IndexCommand),
    /// Search the research index with BotSeer's fielded queries.
    ///
    /// Fields: botname:NAME, site:DOMAIN (whole labels from the right), disallow:PATH and
    /// allow:PATH (by prefix; `disallow:/` alone is exactly `/`; a value without a
    /// leading `/` matches path segments), delay:5, delay:>10, delay:[1 TO 5],
    /// favor:/disfavor:/nobias:ROBOT (its bias in the file), contain:universal,
    /// sitemap:URL (by prefix, `*` for any), signal:ai-train=no, crawl:CC-MAIN-2024-10
    /// (the version that crawl found, not the latest), and free words or
    /// "quoted phrases" of the file. AND by default, OR, -negation, (groups). Exit
    /// status: 0 hits; 1 none; 2 error (a malformed query names its column).
    ///
    /// Example: botscope search 'favor:googlebot site:gov' --index robots.db.index --rank bias
    Search(SearchArgs),
    /// BotSeer's "Analyze it!": the bias of a robots.txt towards each robot it names.
    ///
    /// DIR is every distinct Allow and Disallow value of the file; a robot's bias is
    /// the number of DIR paths it may fetch minus the number the universal robot (`*`)
    /// may: favored above 0, disfavored below.
    ///
    /// Example: botscope bias --site www.nasa.gov --db robots.db --semantics draft1996
    Bias(BiasArgs),
    /// Favourability of each robot over the indexed files (BotSeer's Figure 5).
    ///
    /// favorability = (files favouring it − files disfavouring it) / N, N every file of
    /// the set, naming the robot or not.
    ///
    /// Example: botscope favor --index robots.db.index --where 'site:gov' --format csv
    Favor(FavorArgs),
    /// How far robots.txt files keep agents out, period by period ("Consent in
    /// Crisis", with the exact engine).
    ///
    /// Per period, each site's version in force at its end: `full` when the agent may
    /// not fetch `/`, `partial` when some path of the file is closed to it, `none`
    /// otherwise; an agent without a group of its own meets `*`'s. The group row takes
    /// each site's strictest status. With --db and no --where, sites the store knew
    /// without a robots.txt are counted apart; the denominator is always printed.
    ///
    /// Example: botscope trends --category ai-training --db robots.db
    Trends(TrendsArgs),
    /// What sites' robots.txt newly say to each agent since a time: per new
    /// version, the agents it blocks more (`blocked`) or less (`allowed`) than
    /// the version before it (a site's first file against none), and the usage
    /// preferences it adds or drops; newest first, capped. Read from the research
    /// index (`index update` after a harvest or an import): run it after each
    /// harvest with the time the harvest started. Atom 1.0 for feed readers.
    ///
    /// Example: botscope watch --db robots.db --since 7d --agent GPTBot --format atom
    Watch(WatchArgs),
    /// What changed between two versions of a site: rules, verdicts, bias.
    ///
    /// Example: botscope diff --site www.nasa.gov --db robots.db --from 2007-01 --to 2008-01
    Diff(DiffArgs),
    /// Submit a robots.txt for a site (BotSeer's user submission): stored with
    /// source `submitted`, indexed at once, its bias printed.
    ///
    /// Example: botscope submit robots.txt --site www.example.com
    Submit(SubmitArgs),
    /// BotSeer in a browser: search, sites, bias, robots, crawlers, logs, submit,
    /// check, and the JSON API under /api.
    ///
    /// With no --db it serves a demo built at start from what the repository ships
    /// (the example robots.txt files and logs, and a synthetic web made from real
    /// files). With --db it serves that store and its index (DB.index beside it,
    /// built at start when missing). Logs go to standard error; Ctrl-C or SIGTERM
    /// stops it after the requests in flight.
    ///
    /// Example: botscope serve --db robots.db --listen 127.0.0.1:8080
    Serve(ServeArgs),
    /// Answer a web server per request: who the client is, and the site owner's policy's decision.
    ///
    /// Each request's client is judged as `verify` judges it, from memory and without
    /// waiting: the User-Agent's claim against the operators' published ranges, the
    /// request's Web Bot Auth signature, the owner database (`data update asn`) and the
    /// lists of --lists; a claim these do not decide is checked by reverse DNS in the
    /// background (`unverifiable` until it answers, never `spoofed` without evidence).
    /// With --policy, the site owner's rules decide each request (`botscope policy init`);
    /// without it, --deny does.
    ///
    /// `GET /auth` (nginx's auth_request): 200 allow, 403 deny and limit (with
    /// Retry-After), 401 challenge. `GET /forward-auth` (Caddy's forward_auth): 200,
    /// 403, 429 with Retry-After, 401, each with a short page. Both send X-Bot-Identity
    /// (verified, spoofed, unverifiable, unknown, unclaimed), X-Bot-Name, X-Bot-Category,
    /// X-Bot-Signature, X-Bot-Decision (allow, deny, limit, challenge) and X-Bot-Rule (the
    /// deciding rule). The request asked about comes from X-Original-URI and
    /// X-Original-Method (nginx) or X-Forwarded-Uri and X-Forwarded-Method (Caddy).
    /// `GET /robots.txt` returns the file of --robots-dir chosen for the client, most
    /// specific first: `<bot>.txt`, `all-ok-bots.txt`, `other-bots.txt`,
    /// `undeclared-bots.txt`, `disobedient-bots.txt`, `suspect-bots.txt`, else
    /// `default.txt`. Lists, files and the policy are reloaded atomically when they
    /// change and on SIGHUP; a reload that fails keeps the old state and says why in
    /// /healthz. A policy with an error stops the gate before it listens (exit 2).
    ///
    /// Example: botscope gate --policy /etc/botscope/policy.yaml --robots-dir /etc/botscope/robots --trust-proxy 127.0.0.1/32
    #[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
    Gate(Box<GateArgs>),
    /// Fetch URLs as a polite crawler: robots.txt first (cached by the fetch policy),
    /// matched with the User-Agent's product token, the host's pace kept.
    ///
    /// Prints per URL the decision (allowed, disallowed, unavailable) with the deciding
    /// robots.txt line, the time waited and the status. Between two requests to one host:
    /// the Crawl-delay (or Request-rate) of the group in force, at least --min-gap; one
    /// connection per host; Retry-After honoured. The User-Agent must name the robot and
    /// carry a contact URL. Exit status: 0 every URL fetched (and saved); 1 one was
    /// disallowed or unavailable, got no response or could not be saved; 2 error.
    ///
    /// With --signing-key and --signature-agent every request is signed (Web Bot Auth:
    /// HTTP Message Signatures over @authority and Signature-Agent, a fresh nonce each).
    ///
    /// Example: botscope fetch https://example.com/ https://example.com/about --user-agent "ExampleBot/1.0 (+https://example.org/bot.html)"
    Fetch(FetchPagesArgs),
    /// May a crawler use a page for a purpose, and on what terms? Reads the site's
    /// robots.txt (access, its Content-Usage rules and Content-Signal lines), the RSL
    /// licences its `License` lines name, and the page's own Content-Usage header, and
    /// prints one verdict per URL with each source's reason and line, what the use would
    /// cost, and where the sources disagree, which wins and why. Fetches politely, as
    /// `fetch` does. Exit status: 0 every use allowed; 1 one refused or the URL closed to
    /// the crawler; 3 one allowed only under a licence (to obtain or pay); 4 one no source
    /// decides; 2 error.
    ///
    /// Example: botscope terms https://example.com/news/today --use train-ai --agent GPTBot
    Terms(TermsArgs),
    /// What crawlers were charged: the `charged` lines of gate decision logs (less those the
    /// standalone gate took back), summed per agent, day and path (`--by`), with each
    /// currency's amount. Lines that cannot be read are counted on standard error. Exit
    /// status: 0 read; 2 error.
    ///
    /// Example: botscope ledger /var/log/botscope/decisions.jsonl --by agent,day --format csv
    Ledger(LedgerArgs),
    /// BotSeer's honeypot: sites whose robots.txt each test one behaviour, and a
    /// report that scores each crawler's ethics from the log.
    #[command(subcommand)]
    Honeypot(HoneypotCommand),
    /// Signing keys for Web Bot Auth (HTTP Message Signatures): a crawler's
    /// Ed25519 key and the key directory it publishes.
    #[command(subcommand)]
    Keys(KeysCommand),
    /// Canary tokens: where the pages the gate marked for a client
    /// (`gate --canary-key`) surface again.
    #[command(subcommand)]
    Canary(CanaryCommand),
    /// The site owner's policy `gate --policy` reads: start from a preset, check
    /// it, write the robots.txt that says what it enforces.
    #[command(subcommand)]
    Policy(PolicyCommand),
}

#[derive(Debug, Subcommand)]
pub enum LogsCommand {
    /// Analyse access logs: robots, sessions, verification, robots.txt compliance.
    ///
    /// FILEs may be plain or gzip (several members, any name), rotated and out of
    /// order; `-` or none reads stdin. Exit status: 0 report written; 3 report
    /// written but an input was damaged (a truncated gzip: everything before the
    /// damage is in the report); 2 error.
    ///
    /// Example: botscope logs analyze access.log access.log.1.gz --robots robots.txt --format html --out report.html
    Analyze(AnalyzeArgs),
    /// Write web-server lists from access logs (ACAP 4.3): verified robots.txt
    /// requesters into all-ok-bots/ and one directory per robot, unverified
    /// robots.txt requesters into other-bots/, browsers that crawl into
    /// undeclared-bots/, robots that are not verified and fetched at least 3
    /// paths robots.txt closed to them (python-requests, curl, a scraper naming
    /// itself, a crawler with a browser's User-Agent) into disobedient-bots/,
    /// spoofers and scanners into suspect-bots/. An address is listed where its
    /// worst finding puts it.
    ///
    /// Example: botscope logs export-lists access.log --out-dir /etc/botscope/lists
    ExportLists(ExportListsArgs),
}

/// Report format of `logs analyze`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum ReportFormat {
    /// Terminal tables.
    #[default]
    Text,
    /// The documented schema (docs/log-analysis.md).
    Json,
    /// One row per robot.
    Csv,
    /// One self-contained page: charts and sortable tables.
    Html,
}

/// What `logs analyze` and `logs export-lists` read.
#[derive(Debug, Clone, Args)]
pub struct LogInputArgs {
    /// Log files (plain or gzip); `-` for stdin (the default).
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// The log format: combined, common, vhost_combined, json, an Apache LogFormat
    /// string or an nginx log_format string; detected from the first lines if absent.
    #[arg(long, value_name = "SPEC", value_parser = log_format_arg)]
    pub log_format: Option<botscope_accesslog::LogFormat>,
    /// The site's robots.txt, `FILE` or `DATE=FILE` (in force from DATE, YYYY-MM-DD
    /// or RFC 3339); repeat for several dated versions.
    #[arg(long = "robots", value_name = "[DATE=]FILE")]
    pub robots: Vec<String>,
    /// robots.txt semantics for the compliance check.
    #[arg(long, value_enum, default_value_t)]
    pub semantics: Semantics,
    /// Check claimed robots with forward-confirmed reverse DNS as well as the
    /// published address lists (distinct addresses, concurrently, cached), and
    /// signed requests (when the log format has $http_signature,
    /// $http_signature_input and $http_signature_agent) with their agents' key
    /// directories.
    #[arg(long)]
    pub verify: bool,
    #[command(flatten)]
    pub dns: DnsArgs,
    #[command(flatten)]
    pub directories: KeyDirectoryArgs,
    /// A registry file layered over the bundled one.
    #[arg(long, value_name = "FILE")]
    pub registry: Option<PathBuf>,
    /// Only requests at or after this time (2007-03-01, 2007-03 or RFC 3339).
    #[arg(long, value_name = "TIME", value_parser = time_arg)]
    pub since: Option<i64>,
    /// Only requests before this time (2007-03-01, 2007-03 or RFC 3339).
    #[arg(long, value_name = "TIME", value_parser = time_arg)]
    pub until: Option<i64>,
    /// Parsing threads (default: one per core).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Distinct clients (address + User-Agent) tracked at most; past them
    /// requests count for the site only and the report's `untracked` says
    /// how many. Bounds memory (about 0.5-1 KB per client).
    #[arg(long, value_name = "N", default_value_t = 4_000_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_clients: u64,
    /// Never show a progress bar (it only shows on a terminal anyway).
    #[arg(long)]
    pub no_progress: bool,
}

#[derive(Debug, Args)]
pub struct AnalyzeArgs {
    #[command(flatten)]
    pub input: LogInputArgs,
    /// Report format.
    #[arg(long, value_enum, default_value_t)]
    pub format: ReportFormat,
    /// Write the report to PATH (atomically) instead of stdout.
    #[arg(long, value_name = "PATH")]
    pub out: Option<PathBuf>,
    /// Also write the web-server lists (as `logs export-lists`) into DIR.
    #[arg(long, value_name = "DIR")]
    pub export: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ExportListsArgs {
    #[command(flatten)]
    pub input: LogInputArgs,
    /// The directory to write (replaced in one step; see docs/web-server-lists.md).
    #[arg(long, value_name = "DIR")]
    pub out_dir: PathBuf,
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The client's address (IPv4 or IPv6).
    #[arg(value_name = "IP", required_unless_present_any = ["batch", "request"])]
    pub ip: Option<String>,
    /// The client's User-Agent.
    #[arg(long, value_name = "UA")]
    pub ua: Option<String>,
    /// Lines `IP<TAB>USER-AGENT` from FILE (or `-`); distinct addresses are resolved once.
    #[arg(long, value_name = "FILE", conflicts_with = "ip")]
    pub batch: Option<PathBuf>,
    /// An HTTP/1.1 request head from FILE (or `-`): the request line and the header
    /// fields as a proxy saw them (at most 64 KiB). Its signature (Signature,
    /// Signature-Input, Signature-Agent) is verified with the agent's key directory.
    #[arg(long, value_name = "FILE", conflicts_with = "batch")]
    pub request: Option<PathBuf>,
    /// The scheme the request came over (the head's X-Forwarded-Proto wins).
    #[arg(long, value_name = "SCHEME", default_value = "https", value_parser = ["https", "http"], requires = "request")]
    pub scheme: String,
    #[command(flatten)]
    pub directories: KeyDirectoryArgs,
    /// Check the signature at this time instead of now (RFC 3339, a date, or Unix
    /// seconds): a saved request, or a draft's vector, at its own time.
    #[arg(long, value_name = "TIME", value_parser = at_arg, requires = "request")]
    pub at: Option<i64>,
    /// The longest validity (`expires` − `created`) a signature may have (the draft
    /// RECOMMENDS at most 24 hours; the drafts' vectors are valid for a century).
    #[arg(long, value_name = "DUR", default_value = "24h", value_parser = validity_arg, requires = "request")]
    pub max_validity: i64,
    /// Keys held by other means: a JWK Set (JSON) file. A signature whose agent's
    /// directory is not had verifies with one of these, attributed to the key alone
    /// (its thumbprint), never to the agent URL.
    #[arg(long, value_name = "FILE", requires = "request")]
    pub keys: Option<PathBuf>,
    /// Accept RFC 9421's published test keys (to check the drafts' vectors); refused
    /// by default, as the draft says, since anyone can sign with them.
    #[arg(long, requires = "request")]
    pub allow_test_keys: bool,
    /// A registry file layered over the bundled one.
    #[arg(long, value_name = "FILE")]
    pub registry: Option<PathBuf>,
    /// Use the published IP sets only; never send a DNS query (nor fetch a key
    /// directory).
    #[arg(long)]
    pub offline: bool,
    /// Print each step to standard error, as `dig` shows it: the claim, the
    /// published list, the PTR question, A/AAAA per name, the comparison.
    #[arg(long, conflicts_with = "batch")]
    pub trace: bool,
    #[command(flatten)]
    pub dns: DnsArgs,
    /// Output format (batch output is always JSON).
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

/// Where DNS answers come from (`verify`, `logs analyze --verify`).
#[derive(Debug, Clone, Args)]
pub struct DnsArgs {
    /// Nameserver to ask, `IP:PORT` (repeatable); default: the system's.
    #[arg(long = "dns", value_name = "ADDR")]
    pub servers: Vec<String>,
    /// Seconds to wait for a DNS answer.
    #[arg(long, value_name = "SECONDS", default_value_t = 3.0)]
    pub dns_timeout: f64,
    /// Addresses resolved at once.
    #[arg(long, value_name = "N", default_value_t = 32)]
    pub concurrency: usize,
    /// The DNS cache file (default: ~/.cache/botscope/dns-cache.json); answers are kept for their TTL across runs.
    #[arg(long, value_name = "FILE")]
    pub dns_cache: Option<PathBuf>,
    /// Keep no DNS cache on disk.
    #[arg(long)]
    pub no_dns_cache: bool,
}

#[derive(Debug, Subcommand)]
pub enum BotsCommand {
    /// List the registry's bots: name, category, operator, verifiers.
    ///
    /// Example: botscope bots list --category ai-training
    List(BotsListArgs),
    /// Show one bot (names compare case-insensitively).
    ///
    /// Example: botscope bots show googlebot
    Show(BotsShowArgs),
    /// Check a registry file (bottica format): every error with file, line and bot.
    ///
    /// Exit status: 0 valid, 1 invalid, 2 unreadable.
    ///
    /// Example: botscope bots validate my-bots.yaml
    Validate(BotsValidateArgs),
    /// Write the lists a web server consults per request (see docs/web-server-lists.md).
    ///
    /// Input: `botscope verify --batch` output. Output replaced atomically.
    ///
    /// Example: botscope bots export --verdicts verdicts.jsonl --format apache-dirs --out /var/lib/botscope/crawlers
    Export(BotsExportArgs),
    /// Import operators' published address lists into the user registry, so lists refresh without a rebuild.
    ///
    /// Reads Google-style JSON (`{"prefixes":[{"ipv4Prefix":…}]}`), JSON lists and plain CIDR/IP lists;
    /// the bot is told by the file name (googlebot.json, gptbot.json, bingbot.ips …) or --bot.
    /// Exit status: 0 all imported, 1 some file could not be used, 2 error.
    ///
    /// Example: botscope bots update --from ./lists/
    Update(BotsUpdateArgs),
}

#[derive(Debug, Args)]
pub struct BotsUpdateArgs {
    /// A published list, or a directory of them.
    #[arg(long, value_name = "FILE|DIR")]
    pub from: PathBuf,
    /// The bot the list(s) belong to, when the file name does not tell.
    #[arg(long, value_name = "NAME")]
    pub bot: Option<String>,
    /// The user registry to write (default: ~/.config/botscope/registry.yaml, layered automatically).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Accept a list that removes more than half of a bot's address items.
    #[arg(long)]
    pub force: bool,
}

/// List formats for web servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// One empty file per IP under `all-ok-bots/`, `<bot>/`, `other-bots/`, `undeclared-bots/`, `disobedient-bots/`, `suspect-bots/` (Apache `RewriteCond … -f`).
    ApacheDirs,
    /// An Apache `RewriteMap` text map: IP -> verified:BOT | other | undeclared | disobedient | suspect.
    ApacheRewritemap,
    /// An nginx `geo` block, with the registry's published CIDRs.
    NginxGeo,
    /// One address per line, one file per category.
    Plain,
}

#[derive(Debug, Args)]
pub struct BotsExportArgs {
    /// Verdicts, as `botscope verify --batch` writes them (or `-`).
    #[arg(long, value_name = "FILE")]
    pub verdicts: PathBuf,
    /// The list format.
    #[arg(long, value_enum)]
    pub format: ExportFormat,
    /// Where to write: a directory (apache-dirs, plain) or a file.
    #[arg(long, value_name = "PATH")]
    pub out: PathBuf,
    /// nginx-geo: the variable the geo block sets.
    #[arg(long, default_value = "botscope_crawler")]
    pub variable: String,
    /// A registry file layered over the bundled one (nginx-geo's published CIDRs).
    #[arg(long, value_name = "FILE")]
    pub registry: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct BotsListArgs {
    /// A registry file layered over the bundled one (its entries replace same-named ones).
    #[arg(long, value_name = "FILE")]
    pub registry: Option<PathBuf>,
    /// Only bots of this category.
    #[arg(long, value_parser = category_names())]
    pub category: Option<String>,
    /// Output format (json: one object per line).
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

#[derive(Debug, Args)]
pub struct BotsShowArgs {
    /// The bot's name.
    pub name: String,
    /// A registry file layered over the bundled one.
    #[arg(long, value_name = "FILE")]
    pub registry: Option<PathBuf>,
    /// Published addresses to print.
    #[arg(long, default_value_t = 20)]
    pub limit: usize,
    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

#[derive(Debug, Args)]
pub struct BotsValidateArgs {
    /// The registry file, or `-` for standard input.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum Format {
    /// For people.
    #[default]
    Text,
    /// For programs: stable field names, one JSON value per line or per run.
    Json,
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// clap's own checks of the whole command line: no two flags with one
    /// name, defaults that parse, `requires` that name real arguments.
    #[test]
    fn the_command_line_is_consistent() {
        super::Cli::command().debug_assert();
    }

    /// Durations, kinds and trust roots are values when a command sees
    /// them: clap parses and checks them, the command does not.
    #[test]
    fn values_are_parsed_by_the_command_line() {
        use clap::Parser;
        let cli = |args: &[&str]| super::Cli::try_parse_from(["botscope"].iter().chain(args));
        let Ok(super::Cli {
            command: super::Command::Data(super::DataCommand::Update(u)),
        }) = cli(&[
            "data",
            "update",
            "city",
            "--timeout",
            "10m",
            "--tls-roots",
            "bundled",
        ])
        else {
            panic!("data update did not parse");
        };
        assert_eq!(u.what, [botscope_ipdb::Kind::City]);
        assert_eq!(u.timeout, std::time::Duration::from_secs(600));
        assert_eq!(u.tls.tls_roots, botscope_http::Roots::Bundled);
        for bad in [
            &["data", "update", "--timeout", "0"][..],
            &["data", "update", "--timeout", "2d"],
            &["data", "update", "asn", "--tls-roots", "webpki"],
            &["data", "update", "country"],
        ] {
            assert!(cli(bad).is_err(), "{bad:?} was taken");
        }
    }
}
