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
// Without the index (`engine`), the helpers only it calls are unused.
#![cfg_attr(not(feature = "engine"), allow(dead_code))]

mod bias;
mod classes;
mod cohort;
mod compare;
mod doc;
#[cfg(feature = "parquet")]
mod export;
pub mod query;
mod snippet;
pub mod studies;

pub use bias::{
    BIAS_WORK_CAP, Decision, Detail, Favorability, FileBias, PathDecisions, RobotBias, RobotFavor,
    TABLE_CELLS, Tilt, TooComplex, bias, bias_of, bias_with, favorability,
};
pub use classes::{CLASS_NAME_BYTES, CLASS_WORK_CAP, Classes, Said, Stated};
pub use cohort::{COHORT_MAX_HOSTS, Cohort, CohortError, CohortSpec};
pub use compare::{
    BiasChange, Restriction, RuleLine, VerdictChange, VersionDiff, diff_versions, restrictions,
};
pub use doc::{BodyFields, host_suffixes, product_token};
#[cfg(feature = "parquet")]
pub use export::index_parquet_schema;
pub use snippet::snippet;

// The index itself (tantivy over a store), the default feature `engine`;
// without it the crate is the pure analyses above.
macro_rules! engine {
    ($($item:item)*) => { $( #[cfg(feature = "engine")] $item )* };
}
engine! {
    mod build;
    mod captures;
    mod changes;
    mod collector;
    mod crawls;
    mod directives;
    mod engine;
    mod error;
    mod favor;
    mod per_site;
    mod render;
    mod schema;
    mod search;
    mod submit;
    mod translate;
    mod trends;

    pub use build::BuildReport;
    pub use captures::{CaptureVerdict, WarcVerdicts, warc_verdicts};
    pub use changes::{
        AgentChange, ChangeRequest, Changes, Feed, Kind, MAX_CHANGES, SiteChange, feed_id,
    };
    pub use directives::{Directive, DirectiveRow, Directives, directives};
    pub use engine::{Index, Meta, rfc3339};
    pub use error::{IndexError, Result};
    pub use favor::{FavorSort, FavorTable, popularity};
    pub use per_site::{GROUP, PER_SITE_MAX_ROWS, PerSite, SiteRow};
    pub use search::{Hit, Rank, SearchRequest, SearchResults};
    pub use submit::{MAX_SUBMISSION, site_bias, submit};
    pub use trends::{
        Adoption, By, COHORT_MAX_BYTES, CohortInfo, Counts, Fractions, Period, ShareSet, Shares,
        Trends, TrendsPlan, TrendsRequest, WeightedPeriod, crawls_within, known_at, periods,
        read_cohort,
    };
}
