//! What a log line becomes: a [`Record`], or why it is not one
//! ([`Malformed`]); both line readers (the formats' and JSON's) make them.

use std::borrow::Cow;
use std::net::IpAddr;

/// Longest line read; longer lines are malformed (`too-long`).
pub const MAX_LINE_BYTES: usize = 64 * 1024;

/// One request of an access log. Text borrows from the line when it needs
/// no unescaping and is valid UTF-8.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record<'a> {
    /// The virtual host (with `:port` when the format has it).
    pub vhost: Option<Cow<'a, str>>,
    /// The client address.
    pub ip: IpAddr,
    /// The authenticated user.
    pub user: Option<Cow<'a, str>>,
    /// Seconds since the Unix epoch.
    pub time: i64,
    /// Request method (`GET`); the whole request line when it has no spaces.
    pub method: Cow<'a, str>,
    /// Request target (path and query).
    pub path: Cow<'a, str>,
    /// Protocol (`HTTP/1.1`), empty for HTTP/0.9-style requests.
    pub protocol: Cow<'a, str>,
    /// Response status.
    pub status: u16,
    /// Response bytes (0 for `-`).
    pub bytes: u64,
    /// Referer, unless `-`.
    pub referer: Option<Cow<'a, str>>,
    /// User-Agent, unless `-`.
    pub user_agent: Option<Cow<'a, str>>,
    /// Time to serve, in microseconds, when logged.
    pub duration_us: Option<u64>,
    /// The request's HTTP message signature headers, when the format
    /// logs them (all `None` otherwise).
    pub signed: Signed<'a>,
    /// The line ended inside its last quoted field; the record holds what
    /// was there (and the line is counted as `truncated`).
    pub truncated: bool,
}

impl Record<'_> {
    /// A record of nothing: no address (0.0.0.0), no time (0), every
    /// text empty or absent; what [`crate::LogFormat::parse_line_into`]
    /// starts from.
    pub fn blank() -> Record<'static> {
        Record {
            vhost: None,
            ip: IpAddr::from([0, 0, 0, 0]),
            user: None,
            time: 0,
            method: Cow::Borrowed(""),
            path: Cow::Borrowed(""),
            protocol: Cow::Borrowed(""),
            status: 0,
            bytes: 0,
            referer: None,
            user_agent: None,
            duration_us: None,
            signed: Signed::default(),
            truncated: false,
        }
    }
}

/// The headers a signed request (RFC 9421, Web Bot Auth) carries, and
/// what else its signature base may need, as a log line has them; `-`
/// and empty values are `None`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Signed<'a> {
    /// `Signature-Input`.
    pub input: Option<Cow<'a, str>>,
    /// `Signature`.
    pub signature: Option<Cow<'a, str>>,
    /// `Signature-Agent`.
    pub agent: Option<Cow<'a, str>>,
    /// The scheme (`$scheme`): `https` is assumed when not logged.
    pub scheme: Option<Cow<'a, str>>,
}

impl Signed<'_> {
    /// Whether the request carried a signature (both of its headers).
    pub fn is_signed(&self) -> bool {
        self.input.is_some() && self.signature.is_some()
    }
}

/// Why a line is not a record. The names are stable (reports count them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Malformed {
    /// Nothing but whitespace.
    Empty,
    /// Over [`MAX_LINE_BYTES`].
    TooLong,
    /// NUL or other bytes no log line has.
    Binary,
    /// A quoted field is not closed and more fields should follow.
    UnterminatedQuote,
    /// The line does not follow the format's layout.
    LayoutMismatch,
    /// The client address is not an IP address.
    BadAddress,
    /// The time cannot be read or is out of range.
    BadTime,
    /// The status is not a 3-digit number.
    BadStatus,
    /// A number field (bytes, duration) is not a number.
    BadNumber,
    /// A JSON line is not a JSON object.
    BadJson,
    /// A field the record needs is missing (JSON).
    MissingField,
    /// A recovered record whose last quoted field was cut off.
    Truncated,
    /// A time no access log of today's web holds: before 1990, or after
    /// the analysis's own time (two days of clock skew allowed). A clock
    /// gone wrong or a forged line: counted, never charted.
    ImplausibleTime,
}

impl Malformed {
    /// Every reason.
    pub const ALL: &'static [Malformed] = &[
        Malformed::Empty,
        Malformed::TooLong,
        Malformed::Binary,
        Malformed::UnterminatedQuote,
        Malformed::LayoutMismatch,
        Malformed::BadAddress,
        Malformed::BadTime,
        Malformed::BadStatus,
        Malformed::BadNumber,
        Malformed::BadJson,
        Malformed::MissingField,
        Malformed::Truncated,
        Malformed::ImplausibleTime,
    ];

    /// The stable name, such as `bad-time`.
    pub fn as_str(self) -> &'static str {
        match self {
            Malformed::Empty => "empty",
            Malformed::TooLong => "too-long",
            Malformed::Binary => "binary",
            Malformed::UnterminatedQuote => "unterminated-quote",
            Malformed::LayoutMismatch => "layout-mismatch",
            Malformed::BadAddress => "bad-address",
            Malformed::BadTime => "bad-time",
            Malformed::BadStatus => "bad-status",
            Malformed::BadNumber => "bad-number",
            Malformed::BadJson => "bad-json",
            Malformed::MissingField => "missing-field",
            Malformed::Truncated => "truncated",
            Malformed::ImplausibleTime => "implausible-time",
        }
    }
}
