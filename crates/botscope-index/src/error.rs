//! What can go wrong with the index: always says which directory and what to do.

use botscope_store::StoreError;

use crate::query::QueryError;

/// An index error: always says which directory and what to do.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// Not a botscope index (and not empty): nothing is written there.
    #[error(
        "{path}: not a botscope index (and not empty); give a new directory or an index built by `botscope index build`"
    )]
    NotAnIndex {
        /// The directory.
        path: String,
    },
    /// An index of an earlier format: searching and updating it would
    /// miss what this version keeps.
    #[error(
        "{path}: an index of an earlier format ({format}); rebuild it with `botscope index build --db DB --index {path}`"
    )]
    OldFormat {
        /// The directory.
        path: String,
        /// Its format.
        format: u32,
    },
    /// No index there.
    #[error("{path}: no index here; build one with `botscope index build --db DB --index {path}`")]
    Missing {
        /// The directory.
        path: String,
    },
    /// Another process is writing the index.
    #[error("{path}: another process is writing this index")]
    Locked {
        /// The directory.
        path: String,
    },
    /// A query that cannot be read.
    #[error("{0}")]
    Query(#[from] QueryError),
    /// A request that cannot be answered as asked.
    #[error("{0}")]
    Request(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A cohort list that cannot be used.
    #[error(transparent)]
    Cohort(#[from] crate::cohort::CohortError),
    /// A file that cannot be read.
    #[error(transparent)]
    File(#[from] botscope_os::Error),
    /// The index failed.
    #[error("{path}: {detail}")]
    Tantivy {
        /// The directory.
        path: String,
        /// tantivy's words.
        detail: String,
    },
}

/// Results of index operations.
pub type Result<T> = std::result::Result<T, IndexError>;
