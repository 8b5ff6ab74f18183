//! Who is this crawler really? The bot registry (the bottica format and a
//! superset of it), IP sets, and the verification decision. No I/O: files
//! and DNS answers come in as values.
//!
//! ```
//! use botscope_botid::{Owner, Registry, UaClassifier, Verdict, verify};
//!
//! let registry = Registry::bundled();
//! let classifier = UaClassifier::bundled(&registry)?;
//! let ua = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
//! let info = classifier.classify(ua);
//! assert_eq!(info.claimed_bot.as_deref(), Some("Googlebot"));
//!
//! // From an address Google publishes: the list is the evidence.
//! let v = verify(&registry, "66.249.66.1".parse()?, Some(ua), &info, None, Owner::default());
//! assert_eq!(v.verdict, Verdict::Verified);
//! // From anywhere else, with no DNS answer given, nothing proves it.
//! let v = verify(&registry, "203.0.113.9".parse()?, Some(ua), &info, None, Owner::default());
//! assert_ne!(v.verdict, Verdict::Verified);
//! println!("{}", v.reason);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

// A library speaks through its return values and the caller's writer,
// never by printing.
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod batch;
pub mod client;
mod export;
mod generate;
mod import;
mod ipset;
mod registry;
mod trace;
mod ua;
mod update;
mod verify;

/// What can go wrong in this crate. (A registry file's problems are not
/// one error but a list: [`Registry::parse`] returns every one.)
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// An address, range or CIDR block that cannot be read.
    #[error("{0}")]
    Ip(String),
    /// The User-Agent classifier's data cannot be compiled.
    #[error("failed to build the User-Agent classifier: {0}")]
    Classifier(String),
}

pub use batch::Batch;
pub use client::ClientType;
pub use export::{
    ALL_OK, CATEGORIES, DISOBEDIENT, Lists, OTHER, SUSPECT, UNDECLARED, read_verdicts, slug,
};
pub use generate::{
    Blocked, CHECK_WORK_CAP, GenerateError, Generated, MAX_GENERATED, Policy, gate_files, generate,
};
pub use import::{Change, Imported, MAX_LIST_BYTES, import_list, publishers_of};
pub use ipset::{IpIndex, IpIndexBuilder, IpRange, normalize, parse_ip};
pub use registry::{
    BUNDLED_REGISTRY, BotEntry, Category, Combine, MAX_REGISTRY_BYTES, NoRobot, Registry,
    RegistryError, errors_text, signature_agent, validation_report, yaml_error_line,
};
pub use trace::{reverse_name, trace};
pub use ua::{
    CRAWLER_PATTERNS, ISBOT_PATTERNS, MAX_UA_BYTES, OWN_PATTERNS, UAP_EXTRAS, UAP_REGEXES,
    UaClassifier, UaInfo, robot_name,
};
pub use update::Update;
pub use verify::{
    DnsAnswer, DnsFailure, Fcrdns, FcrdnsEvidence, LIST_STALE_AFTER, MAX_PTR_NAMES, NoOwners,
    Owner, Owners, SignatureEvidence, Verdict, Verification, check_fcrdns, dns_questions,
    fcrdns_domains, in_domain, names_to_confirm, trust_zones, verify, verify_at, wants_fcrdns,
    with_signature,
};
