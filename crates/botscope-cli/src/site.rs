//! The site operator's commands: `gate`, `policy`, `canary`, `honeypot`.

use super::*;

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
