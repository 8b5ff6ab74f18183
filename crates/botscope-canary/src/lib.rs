//! Canary tokens: a page marked for the client it was served to, and the
//! mark found again where the page surfaces (an AI answer engine's reply,
//! a scraped dataset).
//!
//! - [`code`]: the mark of a client in a period, as a code the site's key
//!   alone reads back, and as a phrase.
//! - [`phrase`]: three words of a fixed list and two digits.
//! - [`record`]: the issuance record, which resolves phrases.
//! - [`find`]: marks in text, normalised as it streams.
//! - [`slot`]: the reference put where the owner's page says, in its
//!   visible text only.
//!
//! Pure: no I/O but the reader a caller hands [`record::read`]. A mark
//! says a page was taken by (or for) a client, not what it was used for.

pub mod code;
pub mod find;
pub mod input;
pub mod phrase;
pub mod record;
pub mod report;
pub mod slot;

pub use code::{CanaryKey, Client, Family, Mark};
pub use find::{Finder, Index, Sighting};
pub use phrase::Phrase;
pub use record::Issue;
