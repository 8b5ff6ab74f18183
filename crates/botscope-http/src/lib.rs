//! botscope's HTTP client, shared by every part that fetches: the
//! harvester and `fetch`, `robots check URL`, `data update`, and the key
//! directories of signed agents.
//!
//! ```
//! use std::net::IpAddr;
//!
//! // A stranger's robots.txt may redirect anywhere: not to the inside.
//! assert!(botscope_http::not_public(IpAddr::from([10, 0, 0, 1])).is_some());
//! assert!(botscope_http::not_public(IpAddr::from([127, 0, 0, 1])).is_some());
//! assert_eq!(botscope_http::not_public(IpAddr::from([93, 184, 215, 14])), None);
//! ```
//!
//! - [`exchange`]: one HTTP/1.1 `GET` with one address, TLS for `https`,
//!   the head bounded (64 KiB), the body read up to a cap (gzip decoded,
//!   its wire size bounded too), everything before a deadline. Errors are
//!   classed ([`FetchError::class`]) so a harvest can record them.
//! - [`Trust`]: which authorities HTTPS trusts, the system's store
//!   (`SSL_CERT_FILE`, `SSL_CERT_DIR`) by default, or botscope's bundled
//!   roots for answers that do not depend on the machine.
//! - [`not_public`]: the guard on addresses: a fetch on a stranger's
//!   behalf connects to public unicast addresses only.
//! - [`download`]: a whole file from a URL the user gave;
//!   [`download_reader`] the same read as it comes, for files too large to
//!   hold (a crawl's WARC files).
//! - [`directory::fetch_directory`]: a signed agent's key directory, as
//!   Web Bot Auth fetches it (https only, the guard, no redirect, the
//!   media type, its own signature, how long to keep it).
//! - [`olp`]: an RSL licence server's introspection and token endpoints.
//!
//! Name resolution is the caller's (a harvest uses its checked DNS pool),
//! so the same exchange serves a crawler and a one-off download.

// A library speaks through its return values and the caller's writer,
// never by printing.
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod directory;
mod download;
mod exchange;
mod guard;
pub mod keycache;
pub mod olp;
pub mod server;
mod tls;

pub use download::{download, download_reader};
pub use exchange::{
    ConnectionGuard, Exchange, FetchError, Request, Streamed, exchange, exchange_by,
    exchange_stream, post_form_by, post_json_by,
};
pub use guard::not_public;
pub use tls::{Roots, Trust, certificates};
pub use tokio_rustls::TlsConnector;

/// The User-Agent botscope sends unless told otherwise: its name, version
/// and where to read what it does.
pub const DEFAULT_USER_AGENT: &str = concat!(
    "botscope/",
    env!("CARGO_PKG_VERSION"),
    " (robots.txt research; +https://github.com/botscope/botscope/blob/main/docs/harvest.md)"
);

/// Why a client could not be made or a download failed (a harvested
/// site's failure is a [`FetchError`], recorded, not this).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// TLS could not be set up (the trust store, a certificate to trust).
    #[error("TLS: {0}")]
    Tls(String),
    /// Not a URL this client fetches.
    #[error("{0}")]
    Url(String),
    /// The download failed: no response, a status other than 200, a file
    /// over the cap.
    #[error("{url}: {reason}")]
    Download {
        /// The URL (the last hop's).
        url: String,
        /// What went wrong.
        reason: String,
    },
}
