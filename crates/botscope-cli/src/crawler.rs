//! The crawler author's commands: `robots`, `fetch`, `terms`, `ledger`,
//! `keys`, and the flags every fetch shares.

use super::*;

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
