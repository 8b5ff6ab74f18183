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
//!
//! ```
//! use botscope_honeypot::{Behaviour, Design};
//!
//! let design = Design::new(8, "trap.example", 10)?;
//! let (i, site) = design.site("S0.Trap.Example:8080").ok_or("no site")?;
//! assert_eq!((i, site.behaviour), (0, Behaviour::Trap));
//! let rules = design.rules(site, Some("Googlebot/2.1")).ok_or("no rules")?;
//! assert!(rules.contains("Disallow: /trap/"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

// A library speaks through its return values and the caller's writer,
// never by printing.
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod design;
pub mod report;
pub mod server;

pub use design::{Behaviour, Design, DesignError};
pub use report::{
    Check, Report, Signatures, SignedRequest, read_signed, report, report_signed, signed_agents,
};
pub use server::{Error, Honeypot, design_path, signatures_path};
