//! A site's terms for crawlers, read exactly: RSL 1.0 licence documents
//! ([`rsl`]) and prices ([`price`]) as the pay-per-crawl headers and RSL
//! state them. No I/O: bytes in, values and diagnostics out; every read is
//! bounded by the size of what is read.
//!
//! ```
//! use botscope_terms::rsl::{Document, Grant};
//!
//! let doc = Document::parse(br#"<rsl xmlns="https://rslstandard.org/rsl">
//!   <content url="/news/*">
//!     <license>
//!       <permits type="usage">search ai-input</permits>
//!       <payment type="crawl"><amount currency="USD">0.001</amount></payment>
//!     </license>
//!   </content>
//! </rsl>"#);
//! assert!(doc.diagnostics.is_empty());
//! let c = doc.content_for("https://example.com", "/news/today").unwrap();
//! assert_eq!(c.licenses[0].grants("ai-input", None, None), Grant::Permits);
//! assert_eq!(c.licenses[0].grants("ai-train", None, None), Grant::NotListed);
//! assert_eq!(c.licenses[0].price().unwrap().to_string(), "USD 0.001");
//! ```

#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod olp;
pub mod pay;
pub mod price;
pub mod rsl;
pub mod verdict;

pub use price::{Currency, Price, PriceError};
pub use verdict::{Answer, Ask, Purpose, Sources, Verdict, decide};
