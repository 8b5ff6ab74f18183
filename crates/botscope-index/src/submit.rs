//! A user's submission: stored as its own stream, indexed at once, its bias returned.

use std::path::Path;

use botscope_robotstxt::Semantics;
use botscope_store::Store;

use crate::engine::{FOREVER, Index};
use crate::error::{IndexError, Result};

/// The largest robots.txt accepted from a user: the size crawlers read.
pub const MAX_SUBMISSION: usize = botscope_robotstxt::DEFAULT_PARSE_CAP;

/// BotSeer's user submission: stores `body` as the `submitted` version of
/// `site` at `time`, brings the index in `dir` up to date (building it
/// when there is none), and returns the file's bias under `semantics`.
/// A host name that is not one, or a body over [`MAX_SUBMISSION`], is
/// refused before anything is written.
pub fn submit(
    store: &mut dyn Store,
    dir: &Path,
    site: &str,
    body: &[u8],
    semantics: Semantics,
    time: i64,
) -> Result<crate::FileBias> {
    let host = botscope_store::host_of_file_name(site)
        .filter(|h| !site.ends_with(".txt") || h.ends_with(".txt"))
        .ok_or_else(|| {
            IndexError::Request(format!(
                "`{}` is not a host name (such as www.example.com)",
                botscope_text::field(site)
            ))
        })?;
    if body.len() > MAX_SUBMISSION {
        return Err(IndexError::Request(format!(
            "the file is {} bytes, over the {} crawlers read",
            body.len(),
            botscope_text::size(MAX_SUBMISSION as u64)
        )));
    }
    // Check the index before the store is written.
    let existing = if dir.join("meta.json").is_file() {
        Some(Index::open(dir)?)
    } else {
        None
    };
    store.record(
        None,
        &[botscope_store::Attempt {
            host: host.clone(),
            time,
            url: format!("https://{host}/robots.txt"),
            bytes: body.len() as u64,
            outcome: "parse".into(),
            reason: "submitted by a user".into(),
            body: Some(body.to_vec()),
            source: botscope_store::Source::Submitted,
            ..botscope_store::Attempt::default()
        }],
    )?;
    match existing {
        Some(mut idx) => {
            idx.update(&*store)?;
        }
        None => {
            Index::build(&*store, dir, None, &mut |_| {})?;
        }
    }
    let mut b = crate::bias(body, semantics);
    b.site = Some(host);
    Ok(b)
}

/// The bias of the version of `host` in force at `as_of` (default: the
/// latest) in the store; `None` when the store has no version then.
pub fn site_bias(
    store: &dyn Store,
    host: &str,
    as_of: Option<i64>,
    semantics: Semantics,
) -> Result<Option<crate::FileBias>> {
    let host = host.trim().to_ascii_lowercase();
    let Some(h) = store.site(&host)? else {
        return Ok(None);
    };
    Ok(h.at(as_of.unwrap_or(FOREVER))
        .filter(|v| v.is_file())
        .map(|v| {
            let mut b = crate::bias(&v.body, semantics);
            b.site = Some(host.clone());
            b
        }))
}
