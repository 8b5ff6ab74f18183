//! `store copy`: every row of one store into another, SQLite to PostgreSQL
//! and back, ids kept, in chunks of one transaction each, so that a copy
//! that stops is resumed by running it again.
//!
//! Tables go in the order their references need (sites, runs, bodies,
//! attempts, versions), each in key order. A second run starts after the
//! last key the destination holds, once it has checked that this row is
//! the source's own: a destination holding another store is refused and
//! nothing is written. The tables derived from the attempts (each crawl's
//! sites and counts) are made again from them at the end.

use crate::{AnyStore, Result, StoreError};

/// A column's type, as both databases hold it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ty {
    /// BIGINT (SQLite INTEGER).
    Int,
    /// INTEGER (a status).
    Int32,
    /// TEXT.
    Text,
    /// BYTEA (SQLite BLOB).
    Blob,
    /// BOOLEAN (SQLite 0 or 1).
    Bool,
}

/// One value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Cell {
    Null,
    Int(i64),
    Text(String),
    Blob(Vec<u8>),
    Bool(bool),
}

/// A table and its columns; the first column is the key.
pub(crate) struct Table {
    pub name: &'static str,
    pub columns: &'static [(&'static str, Ty)],
}

/// Every table, in copy order.
pub(crate) const TABLES: &[Table] = &[
    Table {
        name: "sites",
        columns: &[
            ("id", Ty::Int),
            ("host", Ty::Text),
            ("rank", Ty::Int),
            ("added", Ty::Int),
            ("last_attempt", Ty::Int),
            ("last_outcome", Ty::Text),
            ("last_status", Ty::Int32),
            ("last_error_class", Ty::Text),
            ("unreachable_since", Ty::Int),
            ("has_copy", Ty::Bool),
            ("etag", Ty::Text),
            ("last_modified", Ty::Text),
            ("retry_at", Ty::Int),
            ("changed", Ty::Int),
        ],
    },
    Table {
        name: "runs",
        columns: &[
            ("id", Ty::Int),
            ("started", Ty::Int),
            ("finished", Ty::Int),
            ("input", Ty::Text),
            ("input_hash", Ty::Blob),
            ("user_agent", Ty::Text),
            ("hosts", Ty::Int),
            ("crawl", Ty::Text),
        ],
    },
    Table {
        name: "imports",
        columns: &[
            ("id", Ty::Int),
            ("name", Ty::Text),
            ("crawl", Ty::Text),
            ("run_id", Ty::Int),
            ("records", Ty::Int),
            ("robots", Ty::Int),
            ("finished", Ty::Int),
        ],
    },
    Table {
        name: "bodies",
        columns: &[("hash", Ty::Blob), ("size", Ty::Int), ("content", Ty::Blob)],
    },
    Table {
        name: "attempts",
        columns: &[
            ("id", Ty::Int),
            ("run_id", Ty::Int),
            ("site_id", Ty::Int),
            ("time", Ty::Int),
            ("duration_ms", Ty::Int),
            ("url", Ty::Text),
            ("redirects", Ty::Text),
            ("address", Ty::Text),
            ("status", Ty::Int32),
            ("content_type", Ty::Text),
            ("cache_control", Ty::Text),
            ("expires", Ty::Text),
            ("retry_after", Ty::Text),
            ("last_modified", Ty::Text),
            ("etag", Ty::Text),
            ("bytes", Ty::Int),
            ("truncated", Ty::Bool),
            ("error_class", Ty::Text),
            ("error", Ty::Text),
            ("outcome", Ty::Text),
            ("reason", Ty::Text),
            ("expires_in", Ty::Int),
            ("body_hash", Ty::Blob),
        ],
    },
    Table {
        name: "versions",
        columns: &[
            ("id", Ty::Int),
            ("site_id", Ty::Int),
            ("hash", Ty::Blob),
            ("url", Ty::Text),
            ("content_type", Ty::Text),
            ("first_seen", Ty::Int),
            ("last_seen", Ty::Int),
            ("source", Ty::Text),
            ("absent", Ty::Text),
        ],
    },
];

impl Table {
    /// `a, b, c`.
    pub fn column_list(&self) -> String {
        self.columns
            .iter()
            .map(|c| c.0)
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The key column.
    pub fn key(&self) -> &'static str {
        self.columns[0].0
    }
}

/// Row access both stores give the copy.
pub(crate) trait Rows {
    /// At most `limit` rows of `t` whose key is greater than `after`
    /// (from the start for `None`), in key order.
    fn rows_after(&self, t: &Table, after: Option<&Cell>, limit: usize) -> Result<Vec<Vec<Cell>>>;
    /// The row of `t` with the largest key.
    fn last_row(&self, t: &Table) -> Result<Option<Vec<Cell>>>;
    /// The row of `t` with this key.
    fn row(&self, t: &Table, key: &Cell) -> Result<Option<Vec<Cell>>>;
    /// Writes rows of `t` (ids as given) in one transaction.
    fn put_rows(&mut self, t: &Table, rows: &[Vec<Cell>]) -> Result<()>;
    /// Makes the tables derived from the attempts (each crawl's sites and
    /// counts) again, in one transaction.
    fn derive(&mut self) -> Result<()>;
}

impl Rows for AnyStore {
    fn rows_after(&self, t: &Table, after: Option<&Cell>, limit: usize) -> Result<Vec<Vec<Cell>>> {
        match self {
            AnyStore::Sqlite(s) => s.rows_after(t, after, limit),
            AnyStore::Pg(s) => crate::pg_blocking(|| s.rows_after(t, after, limit)),
        }
    }
    fn last_row(&self, t: &Table) -> Result<Option<Vec<Cell>>> {
        match self {
            AnyStore::Sqlite(s) => s.last_row(t),
            AnyStore::Pg(s) => crate::pg_blocking(|| s.last_row(t)),
        }
    }
    fn row(&self, t: &Table, key: &Cell) -> Result<Option<Vec<Cell>>> {
        match self {
            AnyStore::Sqlite(s) => s.row(t, key),
            AnyStore::Pg(s) => crate::pg_blocking(|| s.row(t, key)),
        }
    }
    fn put_rows(&mut self, t: &Table, rows: &[Vec<Cell>]) -> Result<()> {
        match self {
            AnyStore::Sqlite(s) => s.put_rows(t, rows),
            AnyStore::Pg(s) => crate::pg_blocking(|| s.put_rows(t, rows)),
        }
    }
    fn derive(&mut self) -> Result<()> {
        match self {
            AnyStore::Sqlite(s) => s.derive(),
            AnyStore::Pg(s) => crate::pg_blocking(|| s.derive()),
        }
    }
}

/// Rows per transaction.
const CHUNK: usize = 2_000;

/// What a copy did, per table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Copied {
    /// `(table, rows copied now, rows already there)`.
    pub tables: Vec<(&'static str, u64, u64)>,
}

impl std::fmt::Display for Copied {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self
            .tables
            .iter()
            .map(|(t, n, had)| {
                if *had > 0 {
                    format!("{t} {n} (resumed after {had})")
                } else {
                    format!("{t} {n}")
                }
            })
            .collect();
        write!(f, "copied {}", parts.join(", "))
    }
}

/// Copies every row of `from` into `to`, resuming where an earlier copy
/// stopped. `progress` hears `(table, rows copied)` after each chunk.
pub fn copy(
    from: &AnyStore,
    to: &mut AnyStore,
    progress: &mut dyn FnMut(&str, u64),
) -> Result<Copied> {
    let refuse = |detail: String| StoreError::Db {
        path: "the destination".into(),
        detail,
    };
    // Check every resume point before anything is written.
    let mut starts = Vec::new();
    for t in TABLES {
        let start = match to.last_row(t)? {
            None => None,
            Some(last) => {
                let key = last[0].clone();
                match from.row(t, &key)? {
                    Some(theirs) if theirs == last => Some(key),
                    _ => {
                        return Err(refuse(format!(
                            "it holds another store: its last row of {} is not the source's (copy into an empty database or file)",
                            t.name
                        )));
                    }
                }
            }
        };
        starts.push(start);
    }
    let mut out = Copied::default();
    for (t, start) in TABLES.iter().zip(starts) {
        let had = match &start {
            Some(k) => count_up_to(from, t, k)?,
            None => 0,
        };
        let mut after = start;
        let mut n = 0u64;
        loop {
            let rows = from.rows_after(t, after.as_ref(), CHUNK)?;
            let Some(last) = rows.last() else { break };
            after = Some(last[0].clone());
            to.put_rows(t, &rows)?;
            n += rows.len() as u64;
            progress(t.name, n);
        }
        out.tables.push((t.name, n, had));
    }
    // What the attempts imply, made from them rather than copied.
    to.derive()?;
    Ok(out)
}

/// Rows of `t` up to `key` (for the resume message).
fn count_up_to(s: &AnyStore, t: &Table, key: &Cell) -> Result<u64> {
    match s {
        AnyStore::Sqlite(s) => s.count_up_to(t, key),
        AnyStore::Pg(s) => crate::pg_blocking(|| s.count_up_to(t, key)),
    }
}
