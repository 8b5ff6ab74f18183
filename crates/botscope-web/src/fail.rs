//! Why a request was not answered, as a status and words, and the
//! blocking threads work runs on.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use botscope_index::IndexError;

/// Why a request was not answered.
#[derive(Debug)]
pub enum Fail {
    /// The request cannot be answered as asked (400).
    BadRequest(String),
    /// Nothing there (404).
    NotFound(String),
    /// Over a limit (413).
    TooLarge(String),
    /// The server failed (500; 502 for a fetch).
    Internal(String),
    /// Too much work waiting (503, with `Retry-After`).
    Busy(String),
}

impl Fail {
    /// What went wrong, in words.
    pub fn detail(&self) -> &str {
        match self {
            Fail::BadRequest(s)
            | Fail::NotFound(s)
            | Fail::TooLarge(s)
            | Fail::Internal(s)
            | Fail::Busy(s) => s,
        }
    }

    pub(crate) fn status(&self) -> StatusCode {
        match self {
            Fail::BadRequest(_) => StatusCode::BAD_REQUEST,
            Fail::NotFound(_) => StatusCode::NOT_FOUND,
            Fail::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            Fail::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
            Fail::Busy(_) => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    /// `Retry-After` on a 503.
    pub(crate) fn retry_after(&self, mut res: Response) -> Response {
        if matches!(self, Fail::Busy(_)) {
            res.headers_mut().insert(
                axum::http::header::RETRY_AFTER,
                axum::http::HeaderValue::from_static("5"),
            );
        }
        res
    }

    /// The failure as JSON: `{"error": …}`.
    pub fn json(self) -> Response {
        let res = (
            self.status(),
            Json(serde_json::json!({ "error": self.detail() })),
        )
            .into_response();
        self.retry_after(res)
    }

    pub(crate) fn index(e: IndexError, query: &str) -> Fail {
        match e {
            IndexError::Query(q) => Fail::BadRequest(format!("query: {q}\n{}", q.pointer(query))),
            IndexError::Request(s) => Fail::BadRequest(s),
            // The cause names the server's files: it goes to the log.
            e => {
                tracing::error!("the index failed: {e}");
                Fail::Internal("the research index failed; the server's log has the cause".into())
            }
        }
    }
}

impl From<botscope_store::StoreError> for Fail {
    fn from(e: botscope_store::StoreError) -> Fail {
        // The cause names the server's files: it goes to the log.
        tracing::error!("the store failed: {e}");
        Fail::Internal("the store failed; the server's log has the cause".into())
    }
}

/// Runs `f` on a blocking thread.
pub async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, Fail> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| Fail::Internal(format!("the work failed: {e}")))
}
