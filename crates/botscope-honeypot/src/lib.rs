//! botscope's honeypot (BotSeer's design, seed 004 4.2): "a set of sites
//! where each site is configured with a distinct regulation specification
//! using the robots exclusion protocol in order to capture specific
//! behaviors of web crawlers".
//!
//! [`design`] holds the sites as values: eight behaviours (a disallowed
//! trap, a group of the crawler's own, a Crawl-delay, an Allow inside a
//! Disallow, wildcards and `$`, a 500 robots.txt, a 404 robots.txt, a
//! redirected robots.txt), site i testing the (i mod 8)-th. [`server`]
//! answers them by `Host` and logs every request in vhost_combined format;
//! [`mod@report`] reads the log back and scores each crawler.

// A library speaks through its return values and the caller's writer,
// never by printing.
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod design;
pub mod report;
pub mod server;

pub use design::{Behaviour, Design, DesignError};
pub use report::{Check, Report, report};
pub use server::{Error, Honeypot, design_path};
