//! The version rule, once for every backend: a site's robots.txt gets a
//! new version only when its content changes. Each stream (fetched from
//! the site, or submitted by a user) keeps its own versions.

/// A stored version near an attempt: its id and content hash.
pub type Near<'a> = Option<(i64, &'a [u8])>;

/// What one attempt does to the versions of its site's stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VersionOp {
    /// Nothing (no body and not a 304, or a 304 with no version in force).
    Keep,
    /// The version in force (this id) continues: it was seen again at the
    /// attempt's time.
    Continue(i64),
    /// The next version (this id) has the same content: it starts at the
    /// attempt's time instead (an import of older captures).
    StartEarlier(i64),
    /// A new version starts at the attempt's time. `replaces`: another
    /// version was in force before it.
    Start {
        /// Another version was in force at the attempt's time.
        replaces: bool,
    },
}

impl VersionOp {
    /// The site's content as of some time changed (its change mark is set).
    pub fn marks_change(self) -> bool {
        matches!(self, VersionOp::StartEarlier(_) | VersionOp::Start { .. })
    }

    /// The content in force changed (what `record` reports per attempt):
    /// a version moved earlier, or one replaced another.
    pub fn new_content(self) -> bool {
        matches!(
            self,
            VersionOp::StartEarlier(_) | VersionOp::Start { replaces: true }
        )
    }
}

/// Whether `op` changes what the index holds of the site: always for a
/// file; for an absence, only when a file was in force before it (an
/// absence after nothing, or after another absence, ends no file).
pub fn marks_index(op: VersionOp, absence: bool, before: Near<'_>) -> bool {
    op.marks_change() && (!absence || before.is_some_and(|(_, k)| k.len() == 32))
}

/// The rule. `before` is the stream's version in force at the attempt's
/// time (the latest that started no later), `after` the next one (the
/// earliest that starts later), each with its key; `body_hash` the
/// attempt's key: its content hash when it brought a body, its
/// [`crate::Absence::key`] when the site had no robots.txt (an absence is
/// a version like a file), `status` its status. The version in force continues
/// when the content is the same; else the next one starts earlier when it
/// has that content; else a new version starts. A 304 says the version in
/// force is still there.
pub fn next_version(
    before: Near<'_>,
    after: Near<'_>,
    body_hash: Option<&[u8]>,
    status: Option<u16>,
) -> VersionOp {
    match body_hash {
        Some(h) => match (before, after) {
            (Some((id, b)), _) if b == h => VersionOp::Continue(id),
            (_, Some((id, a))) if a == h => VersionOp::StartEarlier(id),
            _ => VersionOp::Start {
                replaces: before.is_some(),
            },
        },
        None => match (status, before) {
            (Some(304), Some((id, _))) => VersionOp::Continue(id),
            _ => VersionOp::Keep,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule() {
        let (a, b) = (&b"A"[..], &b"B"[..]);
        let gone = crate::Absence::Removed.key();
        use VersionOp::*;
        for (before, after, body, status, want) in [
            // The first version of a site.
            (None, None, Some(a), Some(200), Start { replaces: false }),
            // The same content again continues it.
            (Some((1, a)), None, Some(a), Some(200), Continue(1)),
            // New content replaces it.
            (
                Some((1, a)),
                None,
                Some(b),
                Some(200),
                Start { replaces: true },
            ),
            // An older capture of the next version's content moves it earlier.
            (None, Some((2, b)), Some(b), Some(200), StartEarlier(2)),
            (
                Some((1, a)),
                Some((2, b)),
                Some(b),
                Some(200),
                StartEarlier(2),
            ),
            // The one in force wins over the next when both match.
            (Some((1, a)), Some((2, a)), Some(a), Some(200), Continue(1)),
            // An older capture of other content is a version between.
            (
                Some((1, a)),
                Some((2, a)),
                Some(b),
                Some(200),
                Start { replaces: true },
            ),
            (
                None,
                Some((2, a)),
                Some(b),
                Some(200),
                Start { replaces: false },
            ),
            // A 304 continues the version in force; without one, nothing.
            (Some((1, a)), None, None, Some(304), Continue(1)),
            (None, Some((2, a)), None, Some(304), Keep),
            // No key otherwise: nothing.
            (Some((1, a)), None, None, Some(404), Keep),
            // An absence is a version: it replaces the file, continues
            // itself, and the file's return is a change again.
            (
                Some((1, a)),
                None,
                Some(gone),
                Some(404),
                Start { replaces: true },
            ),
            (Some((2, gone)), None, Some(gone), Some(404), Continue(2)),
            (
                Some((2, gone)),
                None,
                Some(a),
                Some(200),
                Start { replaces: true },
            ),
            (None, None, Some(gone), Some(404), Start { replaces: false }),
            (Some((1, a)), None, None, None, Keep),
        ] {
            let got = next_version(before, after, body, status);
            assert_eq!(got, want, "{before:?} {after:?} {body:?} {status:?}");
        }
        assert!(Start { replaces: false }.marks_change());
        assert!(!Start { replaces: false }.new_content());
        assert!(StartEarlier(1).new_content() && StartEarlier(1).marks_change());
        assert!(!Continue(1).marks_change() && !Keep.new_content());
    }
}
