//! BotSeer's research index over robots.txt versions (Sun et al., 2007).
//!
//! [`bias`] is "Analyze it!": how a file treats each robot it names,
//! measured against the universal robot. [`Favorability`] adds files up
//! into BotSeer's Figure 5. Both are pure: bytes in, values out.
//!
//! ```
//! use botscope_index::{Favorability, bias};
//! use botscope_robotstxt::Semantics;
//!
//! let body = b"User-agent: *\nDisallow: /a\nDisallow: /b\n\nUser-agent: Googlebot\nDisallow: /b\n";
//! let b = bias(body, Semantics::Google);
//! assert_eq!(b.dir, ["/a", "/b"]);
//! assert_eq!(b.universal_allowed, 0);
//! assert_eq!(b.robots[0].robot, "googlebot");
//! assert_eq!(b.robots[0].bias, 1);
//!
//! let mut f = Favorability::new(Semantics::Google);
//! f.add(&b);
//! assert_eq!(f.table()[0].favorability, 1.0);
//! ```

// A library speaks through its return values and the caller's writer,
// never by printing.
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod bias;
#[cfg(feature = "engine")]
mod build;
#[cfg(feature = "engine")]
mod captures;
#[cfg(feature = "engine")]
mod changes;
mod classes;
mod cohort;
#[cfg(feature = "engine")]
mod collector;
mod compare;
#[cfg(feature = "engine")]
mod crawls;
mod doc;
#[cfg(feature = "engine")]
mod engine;
#[cfg(feature = "engine")]
mod error;
#[cfg(feature = "parquet")]
mod export;
#[cfg(feature = "engine")]
mod favor;
#[cfg(feature = "engine")]
mod per_site;
pub mod query;
#[cfg(feature = "engine")]
mod render;
#[cfg(feature = "engine")]
mod schema;
#[cfg(feature = "engine")]
mod search;
mod snippet;
pub mod studies;
#[cfg(feature = "engine")]
mod submit;
#[cfg(feature = "engine")]
mod translate;
#[cfg(feature = "engine")]
mod trends;

pub use bias::{
    BIAS_WORK_CAP, Decision, Detail, Favorability, FileBias, PathDecisions, RobotBias, RobotFavor,
    TABLE_CELLS, Tilt, TooComplex, bias, bias_of, bias_with, favorability,
};
#[cfg(feature = "engine")]
pub use build::BuildReport;
#[cfg(feature = "engine")]
pub use captures::{CaptureVerdict, WarcVerdicts, warc_verdicts};
#[cfg(feature = "engine")]
pub use changes::{
    AgentChange, ChangeRequest, Changes, Feed, Kind, MAX_CHANGES, SiteChange, feed_id,
};
pub use classes::{CLASS_NAME_BYTES, CLASS_WORK_CAP, Classes, Said, Stated};
pub use cohort::{COHORT_MAX_HOSTS, Cohort, CohortError, CohortSpec};
pub use compare::{
    BiasChange, Restriction, RuleLine, VerdictChange, VersionDiff, diff_versions, restrictions,
};
pub use doc::{BodyFields, host_suffixes, product_token};
#[cfg(feature = "engine")]
pub use engine::{Index, Meta, rfc3339};
#[cfg(feature = "engine")]
pub use error::{IndexError, Result};
#[cfg(feature = "parquet")]
pub use export::index_parquet_schema;
#[cfg(feature = "engine")]
pub use favor::{FavorSort, FavorTable, popularity};
#[cfg(feature = "engine")]
pub use per_site::{GROUP, PER_SITE_MAX_ROWS, PerSite, SiteRow};
#[cfg(feature = "engine")]
pub use search::{Hit, Rank, SearchRequest, SearchResults};
pub use snippet::snippet;
#[cfg(feature = "engine")]
pub use submit::{MAX_SUBMISSION, site_bias, submit};
#[cfg(feature = "engine")]
pub use trends::{
    Adoption, By, COHORT_MAX_BYTES, CohortInfo, Counts, Fractions, Period, ShareSet, Shares,
    Trends, TrendsPlan, TrendsRequest, WeightedPeriod, crawls_within, known_at, periods,
    read_cohort,
};
