//! BotSeer in a browser: the web application over botscope's store,
//! research index and log analysis, with a JSON API beside every page.
//!
//! The pages are made on the server (maud: every value escaped by the
//! template) and carry no script; the maps and charts are inline SVG. The
//! work is the libraries': search, bias and favourability are
//! botscope-index's, the log reports botscope-logs', verification
//! botscope-botid's, fetching a robots.txt botscope-harvest's. This crate
//! maps requests to them, runs the heavy ones off the async threads, and
//! keeps what a server must: limits, a Content-Security-Policy without
//! `unsafe-inline`, per-address rate limiting on the API, request logs, a
//! graceful shutdown.
//!
//! With no store given, [`Server::bind`] builds a demo first
//! ([`demo::build`]): the example robots.txt files and logs the repository
//! ships, and a synthetic web made from its corpus of real files.
//!
//! The demo on a port of its own, asked over HTTP, then stopped:
//!
//! ```
//! use std::io::{Read, Write};
//!
//! let runtime = tokio::runtime::Runtime::new()?;
//! runtime.block_on(async {
//!     let mut config = botscope_web::Config::demo();
//!     config.demo_sites = 50;
//!     let server = botscope_web::Server::bind(config, "127.0.0.1:0".parse()?).await?;
//!     let addr = server.local_addr();
//!     let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
//!     let running = tokio::spawn(server.run(async {
//!         let _ = stopped.await;
//!     }));
//!     let answer = tokio::task::spawn_blocking(move || -> std::io::Result<String> {
//!         let mut s = std::net::TcpStream::connect(addr)?;
//!         s.write_all(b"GET /api/search?q=googlebot HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")?;
//!         let mut out = String::new();
//!         s.read_to_string(&mut out)?;
//!         Ok(out)
//!     })
//!     .await??;
//!     assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
//!     assert!(answer.contains("application/json"));
//!     let _ = stop.send(());
//!     running.await??;
//!     Ok::<(), Box<dyn std::error::Error + Send + Sync>>(())
//! })
//! .map_err(|e| e as Box<dyn std::error::Error>)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

// A library speaks through its return values and the caller's writer,
// never by printing.
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod api;
mod chart;
pub mod demo;
mod fail;
mod feeds;
mod guard;
mod layout;
mod logs;
mod logview;
mod map;
mod pages;
mod serve;
mod state;
mod work;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};

pub use state::App;

/// What can stop the server from starting.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The research index.
    #[error(transparent)]
    Index(#[from] botscope_index::IndexError),
    /// The store.
    #[error(transparent)]
    Store(#[from] botscope_store::StoreError),
    /// A file or socket.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// Why it failed.
        #[source]
        source: std::io::Error,
    },
    /// Anything else, said in words.
    #[error("{0}")]
    Setup(String),
}

/// Limits on what a client may send and how often.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Bytes of a form or JSON body.
    pub body: usize,
    /// Bytes of an uploaded access log (as sent: gzip counts compressed).
    pub upload: u64,
    /// Bytes of an uploaded log once decompressed.
    pub upload_unpacked: u64,
    /// Requests per second per client address (an IPv6 client by its /64),
    /// pages, API, submissions and uploads alike (0: no limit).
    pub api_per_second: u32,
    /// API requests a client may make at once before the rate applies.
    pub api_burst: u32,
    /// Uploaded log reports kept in memory (the oldest goes first).
    pub uploads_kept: usize,
    /// Bytes the kept reports may hold together (their rendered pages and
    /// data); the oldest uploads go first to stay within it.
    pub uploads_bytes: usize,
    /// Distinct clients an upload's analysis tracks; past them requests
    /// count for the site only and the report says how many.
    pub upload_clients: usize,
    /// Connections open at once; the next are closed at once.
    pub connections: usize,
    /// Connections open at once from one client address (an IPv6 client
    /// by its /64).
    pub connections_per_client: usize,
    /// Time a connection has to send a request's head, and an idle
    /// keep-alive connection to send its next one.
    pub header_timeout: Duration,
    /// Time a request has to be answered (its body read and its work
    /// done); past it, 503.
    pub request_deadline: Duration,
    /// The same for a log upload.
    pub upload_deadline: Duration,
    /// Time an upload may send nothing before it is dropped (the body's
    /// minimum rate).
    pub body_stall: Duration,
    /// Requests waiting for a work thread at most; past it, 503 with
    /// `Retry-After`.
    pub queue: usize,
    /// Time the requests in flight get after the stop signal.
    pub shutdown_grace: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            body: 2 * 1024 * 1024,
            upload: 256 * 1024 * 1024,
            upload_unpacked: 2 * 1024 * 1024 * 1024,
            api_per_second: 20,
            api_burst: 40,
            uploads_kept: 16,
            uploads_bytes: 256 * 1024 * 1024,
            upload_clients: 500_000,
            connections: 4096,
            connections_per_client: 64,
            header_timeout: Duration::from_secs(10),
            request_deadline: Duration::from_secs(30),
            upload_deadline: Duration::from_secs(300),
            body_stall: Duration::from_secs(10),
            queue: 64,
            shutdown_grace: Duration::from_secs(3),
        }
    }
}

/// How the server is set up.
pub struct Config {
    /// The store (an SQLite file or a PostgreSQL database); `None`: the demo.
    pub db: Option<botscope_store::StoreLocator>,
    /// The research index; default `DB.index` beside the store, built at
    /// start when missing.
    pub index: Option<PathBuf>,
    /// The crawler registry (bundled, with the user's layered over it).
    pub registry: botscope_botid::Registry,
    /// The IP-owner databases (network, country, coordinates).
    pub owners: botscope_ipdb::IpOwners,
    /// Limits.
    pub limits: Limits,
    /// How `/check` fetches a robots.txt given by URL (the harvester's
    /// fetch and its address guard).
    pub fetch: botscope_harvest::Config,
    /// Nameservers for those fetches (the system's when empty).
    pub nameservers: Vec<SocketAddr>,
    /// Synthetic sites in the demo.
    pub demo_sites: u64,
    /// Threads for log analysis.
    pub threads: usize,
    /// Uploaded logs' claimed robots checked by forward-confirmed reverse
    /// DNS through `nameservers`, as `logs analyze --verify` checks them,
    /// at most this many addresses per upload; 0: not at all (a public
    /// server would send DNS queries about addresses strangers chose).
    pub verify_uploads: usize,
}

impl Config {
    /// The demo, with the bundled registry and no IP-owner data.
    pub fn demo() -> Config {
        Config {
            db: None,
            index: None,
            registry: botscope_botid::Registry::bundled(),
            owners: botscope_ipdb::IpOwners::none(),
            limits: Limits::default(),
            fetch: botscope_harvest::Config::default(),
            nameservers: Vec::new(),
            demo_sites: demo::DEFAULT_SITES,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            verify_uploads: 0,
        }
    }
}

/// Every route: the pages, their JSON twins under `/api`, and the rest.
pub fn router(app: Arc<App>) -> Router {
    let limits = app.limits;
    let api = Router::new()
        .route("/api/search", get(api::search))
        .route("/api/site/{host}", get(api::site))
        .route("/api/bias", get(api::bias))
        .route("/api/favor", get(api::favor))
        .route("/api/trends", get(api::trends))
        .route("/api/crawler/{name}", get(api::crawler))
        .route("/api/crawlers", get(api::crawlers))
        .route("/api/logs", get(api::logs))
        .route("/api/logs/{id}", get(api::log))
        .route("/api/submit", post(api::submit))
        .route("/api/check", post(api::check))
        .route("/api/openapi.json", get(api::openapi))
        .route("/api/{*rest}", axum::routing::any(api::not_found));
    let upload = Router::new()
        .route("/logs", get(logs::list).post(logs::upload))
        .layer(DefaultBodyLimit::max(
            usize::try_from(limits.upload).unwrap_or(usize::MAX),
        ));
    let open = Router::new()
        .route("/healthz", get(pages::healthz))
        .route("/static/style.css", get(pages::style))
        .route("/static/favicon.svg", get(pages::favicon));
    Router::new()
        .route("/", get(pages::home))
        .route("/search", get(pages::search))
        .route("/site/{host}", get(pages::site))
        .route("/site/{host}/robots.txt", get(pages::raw))
        .route("/site/{host}/feed.atom", get(feeds::site))
        .route("/crawler/{name}/feed.atom", get(feeds::crawler))
        .route("/search/feed.atom", get(feeds::search))
        .route("/site/{host}/bias", get(pages::bias))
        .route("/robots", get(pages::robots))
        .route("/crawler/{name}", get(pages::crawler))
        .route("/crawlers", get(pages::crawlers))
        .route("/logs/{id}", get(logs::report))
        .route("/submit", get(pages::submit_form).post(pages::submit))
        .route("/check", get(pages::check_form).post(pages::check))
        .route("/api", get(pages::api_doc))
        .merge(api)
        .layer(DefaultBodyLimit::max(limits.body))
        .merge(upload)
        .fallback(pages::not_found)
        .layer(axum::middleware::from_fn(guard::same_origin))
        .layer(axum::middleware::from_fn_with_state(
            app.clone(),
            guard::rate_limit,
        ))
        .merge(open)
        .layer(axum::middleware::from_fn_with_state(
            app.clone(),
            serve::deadline,
        ))
        .layer(axum::middleware::from_fn(guard::headers))
        .layer(axum::middleware::from_fn(guard::log))
        .with_state(app)
}

/// A server bound to its address, ready to run.
pub struct Server {
    listener: tokio::net::TcpListener,
    app: Arc<App>,
}

impl Server {
    /// Builds the demo (without a store), opens the store and the index
    /// (building the index when missing), analyses the demo's logs, and
    /// binds `listen`.
    pub async fn bind(config: Config, listen: SocketAddr) -> Result<Server, Error> {
        let app = App::new(config).await?;
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .map_err(|source| Error::Io {
                what: format!("cannot listen on {listen}"),
                source,
            })?;
        Ok(Server { listener, app })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.listener
            .local_addr()
            .unwrap_or_else(|_| SocketAddr::from(([127, 0, 0, 1], 0)))
    }

    /// The application's state.
    pub fn app(&self) -> &Arc<App> {
        &self.app
    }

    /// Serves until `shutdown` completes, then lets the requests in
    /// flight finish (within `Limits::shutdown_grace`).
    pub async fn run(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), Error> {
        let limits = self.app.limits;
        serve::serve(self.listener, router(self.app), limits, shutdown)
            .await
            .map_err(|source| Error::Io {
                what: "the server stopped".into(),
                source,
            })
    }
}
