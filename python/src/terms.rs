//! `botscope.rsl` and `botscope.terms`: an RSL licence document read, and
//! the verdict `botscope terms` prints, from bytes the caller has
//! (botscope-terms: no fetching here).

use botscope_robotstxt::{Matcher, Robots};
use botscope_terms::rsl::Document;
use botscope_terms::{Ask, Purpose, Sources};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::convert::{bytes_of, to_py};

/// An RSL 1.0 licence document read as `botscope terms` reads it: its
/// `contents` (each with `url`, `scope`, `server`, `licenses` with their
/// `permits`, `prohibits`, `payments` and `legal`), and `diagnostics`
/// (line, column, severity, code, message). Never raises on bad bytes: a
/// document that cannot be read has no contents and says why.
#[pyfunction]
fn rsl<'py>(py: Python<'py>, body: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let bytes = bytes_of(body, "body")?;
    let doc = py.detach(|| Document::parse(&bytes));
    to_py(py, &doc)
}

/// The terms of one page for a crawler and a use, as `botscope terms`
/// decides them, from what the caller fetched: `robots` (the site's
/// robots.txt; None for none), the page's `url`, the `use` (`train-ai`,
/// `ai-use`, `ai-index`, `search`, or RSL's and Content-Signal's names),
/// the `agent`, the RSL `licence` document and its `licence_url`, the
/// page's `Content-Usage` `header` (a str or its field lines), and RSL's
/// `user` and `geo`. Returns the verdict: `answer` (`allowed`, `licence`,
/// `refused`, `not-crawlable`, `unknown`), `cost`, `licence`, `reasons`
/// (each with `source`, `line`, `says`, `text`) and `conflicts`.
#[pyfunction]
#[pyo3(signature = (robots, url, r#use, agent = "*", licence = None, licence_url = None, header = None, user = None, geo = None))]
#[allow(clippy::too_many_arguments)]
fn terms<'py>(
    py: Python<'py>,
    robots: Option<&Bound<'py, PyAny>>,
    url: &str,
    r#use: &str,
    agent: &str,
    licence: Option<&Bound<'py, PyAny>>,
    licence_url: Option<&str>,
    header: Option<&Bound<'py, PyAny>>,
    user: Option<&str>,
    geo: Option<&str>,
) -> PyResult<Bound<'py, PyAny>> {
    let purpose = Purpose::parse(r#use).ok_or_else(|| {
        PyValueError::new_err(format!(
            "use={:?}: one of train-ai (ai-train), ai-use (ai-input), ai-index, search",
            r#use
        ))
    })?;
    let parsed = url::Url::parse(url)
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https") && u.host_str().is_some())
        .ok_or_else(|| PyValueError::new_err(format!("{url:?} is not an http(s) URL")))?;
    let origin = parsed.origin().ascii_serialization();
    let path = String::from_utf8_lossy(&botscope_robotstxt::path_of(url.as_bytes())).into_owned();
    let robots_bytes = robots.map(|r| bytes_of(r, "robots")).transpose()?;
    let licence_bytes = licence.map(|l| bytes_of(l, "licence")).transpose()?;
    let header_usage = match header {
        None => None,
        Some(h) => {
            let lines: Vec<String> = match h.extract::<String>() {
                Ok(one) => vec![one],
                Err(_) => h.extract()?,
            };
            botscope_robotstxt::parse_usage_header(&lines)
                .ok()
                .map(|p| p.usage)
        }
    };
    let licence_url = licence_url.unwrap_or("licence").to_owned();
    let v = py.detach(|| {
        let tree = robots_bytes.as_deref().map(Robots::parse);
        let matcher = robots_bytes.as_deref().map(Matcher::new);
        let doc = licence_bytes.as_deref().map(Document::parse);
        botscope_terms::decide(
            &Ask {
                agent,
                origin: &origin,
                path: &path,
                purpose,
                user,
                geo,
            },
            &Sources {
                robots: tree.as_ref().zip(matcher.as_ref()),
                header: header_usage.as_ref(),
                licence: doc.as_ref().map(|d| (licence_url.as_str(), d)),
            },
        )
    });
    to_py(py, &v)
}

/// Adds the functions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(rsl, m)?)?;
    m.add_function(wrap_pyfunction!(terms, m)?)?;
    Ok(())
}
