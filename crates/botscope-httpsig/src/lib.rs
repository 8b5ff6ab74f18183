//! HTTP Message Signatures (RFC 9421) as Web Bot Auth uses them
//! (`draft-ietf-webbotauth-httpsig-protocol`): a crawler signs each
//! request with an Ed25519 key, names its key directory in
//! `Signature-Agent`, and a site checks the signature with the key the
//! directory lists under the signature's `keyid` (the key's JWK SHA-256
//! thumbprint).
//!
//! Pure: no I/O, no clock. The caller gives the request's parts, the time
//! and the keys (a [`Keys`] store: by agent URL and keyid, never by keyid
//! alone), and gets a [`Verdict`]: `verified`, `invalid` (with what is
//! wrong) or `unverified` (no signature, or keys not known yet), kept
//! apart as the draft keeps them. Header fields are bounded
//! ([`base::MAX_FIELD_BYTES`], [`base::MAX_SIGNATURES`],
//! [`base::MAX_COMPONENTS`]); a request costs at most that many
//! signature checks.
//!
//! ```
//! use botscope_httpsig::{KeySet, Outcome, Policy, Reason, Request, SignSpec, SigningKey,
//!     sign_request, verify_request};
//! // The crawler's side.
//! let key = SigningKey::generate().unwrap();
//! let agent = "https://crawler.example";
//! let mut req = Request::new("GET", "https", "example.com", "/", vec![]);
//! let spec = SignSpec::new(Some(agent), 1_735_689_600, 60, Some("bm9uY2U=".into()));
//! req.headers.extend(sign_request(&req, &key, &spec).unwrap().headers());
//! // The site's: the agent's directory lists the key.
//! let mut keys = KeySet::new();
//! keys.add_key(Some(agent), key.public());
//! let v = verify_request(&req, &keys, 1_735_689_610, &Policy::default());
//! assert_eq!(v.outcome, Outcome::Verified);
//! assert_eq!(v.keyid, Some(key.keyid()));
//! // A minute and more after it expired, the same request is refused.
//! let v = verify_request(&req, &keys, 1_735_689_800, &Policy::default());
//! assert_eq!(v.outcome, Outcome::Invalid);
//! assert!(matches!(v.reason, Reason::Expired { .. }));
//! ```

#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod agent;
pub mod base;
pub mod keys;
pub mod message;
pub mod sign;
pub mod verify;

pub use agent::{AgentUrl, Reading};
pub use keys::{Algorithm, Directory, Ed25519Key, PublicKey, SigningKey, TEST_KEYS, test_key};
pub use message::{HeadError, Request, Response, normalize_authority};
pub use sign::{AgentForm, SignSpec, Signed, sign_directory, sign_request};
pub use verify::{
    KeySet, Keys, Lookup, NonceMemory, Policy, Prepared, TAG_DIRECTORY, TAG_REQUEST, Verdict,
    agents_in, check_batch, check_content_digest, content_digest, prepare_request,
    signature_agents, verify_directory_response, verify_request,
};

/// The three outcomes of checking a signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// A signature holds with a key its agent lists.
    Verified,
    /// A signature is there and is wrong (expired, tampered, malformed, a
    /// key its agent does not list). Not, by itself, evidence of spoofing.
    Invalid,
    /// No signature to check, or its keys are not known (yet).
    Unverified,
}

impl Outcome {
    /// `verified`, `invalid` or `unverified`.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Verified => "verified",
            Outcome::Invalid => "invalid",
            Outcome::Unverified => "unverified",
        }
    }
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a verdict is what it is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Reason {
    /// The signature holds.
    #[error("the signature holds")]
    Holds,
    /// No `Signature-Input` and `Signature`.
    #[error("no signature")]
    NoSignature,
    /// Signatures, none with the tag looked for.
    #[error("no signature tagged `{want}` (tags: {})", found.join(", "))]
    NotTagged {
        /// The tag wanted.
        want: String,
        /// The tags found (`none` for a signature without one).
        found: Vec<String>,
    },
    /// A field or parameter does not parse as it must.
    #[error("malformed: {0}")]
    Malformed(String),
    /// A required parameter is missing.
    #[error("no `{0}` parameter")]
    MissingParam(&'static str),
    /// `created` is later than now (beyond the skew allowed).
    #[error("created {} is in the future (now {})", show_time(*created), show_time(*now))]
    CreatedInFuture {
        /// `created`.
        created: i64,
        /// The verifier's time.
        now: i64,
    },
    /// `expires` has passed (beyond the skew allowed).
    #[error("expired at {} (now {})", show_time(*expires), show_time(*now))]
    Expired {
        /// `expires`.
        expires: i64,
        /// The verifier's time.
        now: i64,
    },
    /// The validity window is longer than the policy accepts.
    #[error("valid for {}, more than the {} accepted (the draft RECOMMENDS at most 24 hours)", show_span(*seconds), show_span(*max))]
    ValidityTooLong {
        /// `expires` − `created`.
        seconds: i64,
        /// The longest accepted.
        max: i64,
    },
    /// Neither `@authority` nor `@target-uri` is covered.
    #[error("the signature covers neither @authority nor @target-uri")]
    AuthorityNotCovered,
    /// `Signature-Agent` is present and not covered.
    #[error("Signature-Agent is present and not covered by the signature")]
    AgentNotCovered,
    /// A covered component is not in the message.
    #[error("covered component {0} is not in the message")]
    ComponentMissing(String),
    /// A covered component this verifier does not derive.
    #[error("unsupported component {0}")]
    UnsupportedComponent(String),
    /// HMAC: a shared secret proves nothing about who signed.
    #[error("HMAC signatures are refused (a shared secret identifies no agent)")]
    Hmac,
    /// An algorithm other than `ed25519` and `rsa-pss-sha512`.
    #[error("unsupported algorithm `{0}`")]
    UnsupportedAlgorithm(String),
    /// `alg` names another algorithm than the key's.
    #[error("alg `{alg}` but the key is {key}")]
    AlgorithmMismatch {
        /// `alg`.
        alg: String,
        /// The key's algorithm.
        key: &'static str,
    },
    /// The agent's keys are known and the keyid is not among them.
    #[error("keyid not in the directory of {}", agent.as_deref().unwrap_or("(no agent)"))]
    KeyNotListed {
        /// The agent.
        agent: Option<String>,
    },
    /// The agent's keys are not known.
    #[error("keys not known: {0}")]
    KeysUnknown(String),
    /// The signature does not match the base with the key.
    #[error("the signature does not match")]
    BadSignature,
    /// `Content-Digest` does not match the body.
    #[error("Content-Digest does not match the body")]
    DigestMismatch,
    /// The nonce was seen before, inside its validity window.
    #[error("nonce replayed")]
    Replayed,
    /// The key is one of RFC 9421's published test keys: anyone can sign
    /// with it.
    #[error(
        "the key is {0}, a published test key anyone can sign with (the draft: verifiers SHOULD reject known test keys)"
    )]
    TestKey(&'static str),
}

/// Unix seconds as RFC 3339 (`2025-01-01T00:00:00Z`), `None` out of
/// range.
pub fn rfc3339(t: i64) -> Option<String> {
    jiff::Timestamp::from_second(t).ok().map(|t| t.to_string())
}

/// A time for a message: RFC 3339, or the seconds when out of range.
fn show_time(t: i64) -> String {
    rfc3339(t).unwrap_or_else(|| format!("{t} (Unix seconds)"))
}

/// A span for a message: days, hours, minutes or seconds.
fn show_span(s: i64) -> String {
    match s {
        s if s >= 86_400 && s % 86_400 == 0 => format!("{} day(s)", s / 86_400),
        s if s >= 3600 && s % 3600 == 0 => format!("{} hour(s)", s / 3600),
        s if s >= 60 && s % 60 == 0 => format!("{} minute(s)", s / 60),
        s => format!("{s} s"),
    }
}

impl Reason {
    /// A stable code for counting reasons (the message has the details).
    pub fn code(&self) -> &'static str {
        match self {
            Reason::Holds => "holds",
            Reason::NoSignature => "no-signature",
            Reason::NotTagged { .. } => "not-tagged",
            Reason::Malformed(_) => "malformed",
            Reason::MissingParam(_) => "missing-parameter",
            Reason::CreatedInFuture { .. } => "created-in-future",
            Reason::Expired { .. } => "expired",
            Reason::ValidityTooLong { .. } => "validity-too-long",
            Reason::AuthorityNotCovered => "authority-not-covered",
            Reason::AgentNotCovered => "agent-not-covered",
            Reason::ComponentMissing(_) => "component-missing",
            Reason::UnsupportedComponent(_) => "unsupported-component",
            Reason::Hmac => "hmac",
            Reason::UnsupportedAlgorithm(_) => "unsupported-algorithm",
            Reason::AlgorithmMismatch { .. } => "algorithm-mismatch",
            Reason::KeyNotListed { .. } => "key-not-listed",
            Reason::KeysUnknown(_) => "keys-unknown",
            Reason::BadSignature => "bad-signature",
            Reason::DigestMismatch => "digest-mismatch",
            Reason::Replayed => "replayed",
            Reason::TestKey(_) => "test-key",
        }
    }
}

/// Errors of key handling.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A JWK or key file that cannot be used.
    #[error("key: {0}")]
    Jwk(String),
    /// A key directory that cannot be read.
    #[error("key directory: {0}")]
    Directory(String),
    /// The system's random source failed.
    #[error("the system's random source failed")]
    Random,
}
