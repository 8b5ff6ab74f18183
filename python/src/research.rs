//! `botscope.Store` and `botscope.Index` (the extension's halves; the
//! package wraps them with pyarrow and pandas): a harvested store's
//! versions, and the research index's search, favourability and trends.

use std::path::PathBuf;
use std::sync::Mutex;

use botscope_index::{FavorSort, Index as Idx, Rank, SearchRequest};
use botscope_store::{AnyStore, Store as _, StoreLocator, Version};
use crossbeam_channel::{Receiver, bounded};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use crate::convert::{error, semantics, table_columns, table_rows, time_arg, to_py, value_enum};

/// A version as a dict: `host`, `url`, `first_seen`, `last_seen` (Unix
/// seconds), `hash` (`blake3:…`), `content_type`, `body` (str, or bytes
/// when it is not UTF-8), `source`.
fn version_dict<'py>(py: Python<'py>, v: Version) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("host", v.host)?;
    d.set_item("url", v.url)?;
    d.set_item("first_seen", v.first_seen)?;
    d.set_item("last_seen", v.last_seen)?;
    d.set_item("hash", format!("blake3:{}", botscope_store::hex(&v.hash)))?;
    d.set_item("content_type", v.content_type)?;
    match String::from_utf8(v.body) {
        Ok(text) => d.set_item("body", text)?,
        Err(e) => d.set_item("body", PyBytes::new(py, e.as_bytes()))?,
    }
    d.set_item("source", v.source.as_str())?;
    d.set_item("absent", v.absent.map(|a| a.as_str()))?;
    Ok(d)
}

/// A store of harvested robots.txt versions: an SQLite file or a
/// `postgres://` URL, opened for reading.
#[pyclass(module = "botscope._botscope", name = "Store", frozen)]
pub struct Store {
    locator: StoreLocator,
    store: Mutex<AnyStore>,
}

impl Store {
    fn with<R>(&self, f: impl FnOnce(&AnyStore) -> R) -> R {
        let s = self
            .store
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&s)
    }
}

#[pymethods]
impl Store {
    #[new]
    fn new(py: Python<'_>, db: PathBuf) -> PyResult<Store> {
        let locator = StoreLocator::from(db.as_path());
        let store = py.detach(|| locator.open_read()).map_err(error)?;
        Ok(Store {
            locator,
            store: Mutex::new(store),
        })
    }

    /// What the store holds, as `botscope store stats --format json`.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let s = py.detach(|| self.with(|s| s.stats())).map_err(error)?;
        to_py(py, &s)
    }

    /// One site's versions, oldest first (dicts as `iter_versions` gives
    /// them), or None when the store does not know the host.
    fn site<'py>(&self, py: Python<'py>, host: &str) -> PyResult<Option<Bound<'py, PyList>>> {
        let host = host.trim().to_ascii_lowercase();
        let h = py.detach(|| self.with(|s| s.site(&host))).map_err(error)?;
        let Some(h) = h else { return Ok(None) };
        let list = PyList::empty(py);
        for v in h.versions {
            list.append(version_dict(py, v)?)?;
        }
        Ok(Some(list))
    }

    /// The versions' Arrow schema (the columns `botscope store export
    /// --format parquet` writes), as an IPC stream without batches.
    fn _arrow_schema<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let schema = botscope_store::arrow_schema();
        let bytes = arrow_ipc::writer::StreamWriter::try_new(Vec::new(), &schema)
            .and_then(|mut w| {
                w.finish()?;
                w.into_inner()
            })
            .map_err(|e| crate::Error::new_err(e.to_string()))?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// Every version as Arrow record batches of at most 8,192 rows or
    /// 8 MiB, each an IPC stream of its own, read on a connection of
    /// its own at most two batches ahead of the caller: memory bounded
    /// whatever the store's size.
    fn _arrow_batches(&self, py: Python<'_>) -> PyResult<ArrowBatches> {
        let locator = self.locator.clone();
        let (tx, rx) = bounded::<Result<Vec<u8>, String>>(2);
        let opened = py.detach(|| locator.open_read()).map_err(error)?;
        std::thread::spawn(move || {
            let stop = |e: String| botscope_store::StoreError::Write {
                what: "the Arrow stream".into(),
                source: std::io::Error::other(e),
            };
            let r = botscope_store::each_version_batch(&opened, &mut |b| {
                let mut w = arrow_ipc::writer::StreamWriter::try_new(Vec::new(), &b.schema())
                    .map_err(|e| stop(e.to_string()))?;
                w.write(&b).map_err(|e| stop(e.to_string()))?;
                w.finish().map_err(|e| stop(e.to_string()))?;
                let bytes = w.into_inner().map_err(|e| stop(e.to_string()))?;
                // The iterator was dropped: stop reading.
                tx.send(Ok(bytes)).map_err(|e| stop(e.to_string()))
            });
            if let Err(e) = r {
                let _ = tx.send(Err(crate::convert::message(&e)));
            }
        });
        Ok(ArrowBatches { rx: Mutex::new(rx) })
    }

    /// Every version, one dict at a time, read on a connection of its own
    /// (at most 64 versions ahead of the caller).
    fn iter_versions(&self, py: Python<'_>) -> PyResult<Versions> {
        let locator = self.locator.clone();
        let (tx, rx) = bounded::<Result<Version, String>>(64);
        let opened = py.detach(|| locator.open_read()).map_err(error)?;
        std::thread::spawn(move || {
            let r = opened.each_version(&mut |v| {
                // The iterator was dropped: stop reading.
                tx.send(Ok(v))
                    .map_err(|e| botscope_store::StoreError::Write {
                        what: "the versions' iterator".into(),
                        source: std::io::Error::other(e.to_string()),
                    })
            });
            if let Err(e) = r {
                let _ = tx.send(Err(crate::convert::message(&e)));
            }
        });
        Ok(Versions { rx: Mutex::new(rx) })
    }

    fn __repr__(&self) -> String {
        format!("<botscope.Store {}>", self.locator)
    }
}

/// A store's versions as Arrow IPC streams of one batch each, as
/// `Store.versions` reads them.
#[pyclass(module = "botscope._botscope", frozen)]
pub struct ArrowBatches {
    rx: Mutex<Receiver<Result<Vec<u8>, String>>>,
}

#[pymethods]
impl ArrowBatches {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyBytes>>> {
        receive(py, &self.rx)
            .transpose()
            .map(|b| b.map(|bytes| PyBytes::new(py, &bytes)))
    }
}

/// The versions of a store, as `Store.iter_versions` reads them.
#[pyclass(module = "botscope._botscope", frozen)]
pub struct Versions {
    rx: Mutex<Receiver<Result<Version, String>>>,
}

#[pymethods]
impl Versions {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        receive(py, &self.rx)
            .transpose()?
            .map(|v| version_dict(py, v))
            .transpose()
    }
}

/// The next item a reading thread sent, waited for without holding the
/// interpreter: None when the thread is done, its error as
/// `botscope.Error`.
fn receive<T: Send>(
    py: Python<'_>,
    rx: &Mutex<Receiver<Result<T, String>>>,
) -> Option<PyResult<T>> {
    let next = py.detach(|| {
        rx.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .recv()
            .ok()
    });
    next.map(|r| r.map_err(crate::Error::new_err))
}

/// A result: its rows (the command's CSV and Parquet columns), the column
/// names, and the whole result as the command's JSON.
type Result3<'py> = (Bound<'py, PyList>, Vec<String>, Bound<'py, PyAny>);

/// The research index `botscope index build` writes.
#[pyclass(module = "botscope._botscope", name = "Index", frozen)]
pub struct Index {
    index: Idx,
    path: PathBuf,
}

/// A query error with the query and a caret under the column, as the
/// command shows it.
fn query_error(e: botscope_index::IndexError, query: &str) -> PyErr {
    match e {
        botscope_index::IndexError::Query(q) => {
            PyValueError::new_err(format!("query: {q}\n{}", q.pointer(query)))
        }
        e => error(e),
    }
}

#[pymethods]
impl Index {
    #[new]
    #[pyo3(signature = (path, threads = None))]
    fn new(py: Python<'_>, path: PathBuf, threads: Option<usize>) -> PyResult<Index> {
        let mut index = py.detach(|| Idx::open(&path)).map_err(error)?;
        index.set_threads(
            threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
        );
        Ok(Index { index, path })
    }

    /// The first and last time the index covers (Unix seconds), or None
    /// when it is empty.
    fn span(&self) -> Option<(i64, i64)> {
        self.index.span()
    }

    /// `botscope search`: the sites whose robots.txt matches `query` (the
    /// query language of docs/research.md: `agent:`, `disallow:`,
    /// `favor:`, `crawl:`, …).
    #[pyo3(signature = (query, limit = 10, offset = 0, rank = "relevance", semantics = "google", as_of = None))]
    #[allow(clippy::too_many_arguments)]
    fn _search<'py>(
        &self,
        py: Python<'py>,
        query: &str,
        limit: usize,
        offset: usize,
        rank: &str,
        semantics: &str,
        as_of: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Result3<'py>> {
        let req = SearchRequest {
            query: query.to_owned(),
            rank: value_enum::<Rank>("rank", rank)?,
            limit,
            offset,
            semantics: self::semantics(semantics)?,
            as_of: time_arg(as_of)?,
        };
        let r = py
            .detach(|| self.index.search(&req))
            .map_err(|e| query_error(e, query))?;
        let t = r.to_table();
        Ok((table_rows(py, &t)?, table_columns(&t), to_py(py, &r)?))
    }

    /// `botscope favor`: favourability per robot over the sites matching
    /// `where` (all when None).
    #[pyo3(signature = (where_ = None, as_of = None, semantics = "google", sort = "appeared", min_appeared = 0))]
    fn _favor<'py>(
        &self,
        py: Python<'py>,
        where_: Option<&str>,
        as_of: Option<&Bound<'py, PyAny>>,
        semantics: &str,
        sort: &str,
        min_appeared: u64,
    ) -> PyResult<Result3<'py>> {
        let sem = self::semantics(semantics)?;
        let sort = value_enum::<FavorSort>("sort", sort)?;
        let as_of = time_arg(as_of)?;
        let t = py
            .detach(|| self.index.favor(where_, as_of, sem))
            .map_err(|e| query_error(e, where_.unwrap_or_default()))?
            .sorted(sort, min_appeared);
        let table = t.to_table();
        Ok((
            table_rows(py, &table)?,
            table_columns(&table),
            to_py(py, &t)?,
        ))
    }

    /// `botscope trends`: per month, year or crawl and agent, the share
    /// of sites that block it wholly or partly; the agents given, and
    /// those of a registry category or operator; the sites of a list, or
    /// the top of a ranked list, optionally weighted by a column.
    #[pyo3(signature = (
        agents, by = "month", where_ = None, start = None, end = None, semantics = "google",
        db = None, category = None, operator = None, sites = None, rank_file = None, top = None,
        weight = None, method = "exact", per_site = false, max_rows = None,
    ))]
    #[allow(clippy::too_many_arguments)]
    fn _trends<'py>(
        &self,
        py: Python<'py>,
        agents: Vec<String>,
        by: &str,
        where_: Option<&str>,
        start: Option<&Bound<'py, PyAny>>,
        end: Option<&Bound<'py, PyAny>>,
        semantics: &str,
        db: Option<PathBuf>,
        category: Option<&str>,
        operator: Option<&str>,
        sites: Option<PathBuf>,
        rank_file: Option<PathBuf>,
        top: Option<u64>,
        weight: Option<String>,
        method: &str,
        per_site: bool,
        max_rows: Option<u64>,
    ) -> PyResult<Result3<'py>> {
        let Some(method) = botscope_index::studies::Method::parse(method) else {
            return Err(PyValueError::new_err(format!(
                "unknown method `{method}` (expected exact, somesite or cic)"
            )));
        };
        let mut agents: Vec<String> = agents.iter().map(|a| a.trim().to_owned()).collect();
        if agents.is_empty()
            && category.is_none()
            && operator.is_none()
            && method == botscope_index::studies::Method::Somesite
        {
            agents = botscope_index::studies::SOMESITE_AGENTS
                .iter()
                .map(|&a| a.to_owned())
                .collect();
        }
        if agents.iter().any(String::is_empty) {
            return Err(PyValueError::new_err("an agent is empty"));
        }
        if category.is_some() || operator.is_some() {
            let places = botscope_os::Locations::from_env();
            for t in crate::registry::layered(&places, None, true)?.agents(category, operator) {
                if !agents.iter().any(|x| x.eq_ignore_ascii_case(&t)) {
                    agents.push(t);
                }
            }
            if agents.is_empty() {
                return Err(PyValueError::new_err(
                    "no registry robot is in that category or run by that operator",
                ));
            }
        }
        if agents.is_empty() {
            return Err(PyValueError::new_err(
                "give at least one agent, a category or an operator",
            ));
        }
        let sem = self::semantics(semantics)?;
        let (start, end) = (time_arg(start)?, time_arg(end)?);
        let Some(by) = botscope_index::By::parse(by) else {
            return Err(PyValueError::new_err(format!(
                "unknown period `{by}` (expected month, year or crawl)"
            )));
        };
        if rank_file.is_some() != top.is_some() {
            return Err(PyValueError::new_err(
                "rank_file and top go together: the sites ranked 1 to top",
            ));
        }
        if top == Some(0) {
            return Err(PyValueError::new_err("top is at least 1"));
        }
        let ranked = rank_file.is_some();
        let cohort = match (sites, rank_file) {
            (Some(_), Some(_)) => {
                return Err(PyValueError::new_err("give sites or rank_file, not both"));
            }
            (Some(path), None) | (None, Some(path)) => {
                let spec = botscope_index::CohortSpec {
                    top,
                    weight,
                    ranked,
                };
                Some(
                    botscope_index::read_cohort(&crate::convert::file_path(path), &spec).map_err(
                        |e| match e {
                            botscope_index::IndexError::Cohort(c) => {
                                PyValueError::new_err(c.to_string())
                            }
                            e => error(e),
                        },
                    )?,
                )
            }
            (None, None) if weight.is_some() => {
                return Err(PyValueError::new_err(
                    "weight is a column of a list: give sites or rank_file",
                ));
            }
            (None, None) => None,
        };
        if by == botscope_index::By::Crawl && db.is_none() {
            return Err(PyValueError::new_err(
                "trends by crawl reads the crawls from the store: give db=",
            ));
        }
        let store = db
            .map(|d| StoreLocator::from(d.as_path()).open_read())
            .transpose()
            .map_err(error)?;
        let t = py
            .detach(move || {
                self.index.trends_over(
                    store.as_ref(),
                    botscope_index::TrendsPlan {
                        agents: &agents,
                        by,
                        from: start,
                        to: end,
                        where_,
                        semantics: sem,
                        cohort,
                        method,
                        per_site: per_site
                            .then(|| max_rows.unwrap_or(botscope_index::PER_SITE_MAX_ROWS)),
                    },
                )
            })
            .map_err(|e| query_error(e, where_.unwrap_or_default()))?;
        // Per site, the rows are the verdicts and the result the counts.
        let table = match &t.per_site {
            Some(rows) => rows.to_table(),
            None => t.to_table(),
        };
        Ok((
            table_rows(py, &table)?,
            table_columns(&table),
            to_py(py, &t)?,
        ))
    }

    fn __repr__(&self) -> String {
        format!("<botscope.Index {}>", self.path.display())
    }
}

/// `_warc_verdicts`' answer: the Arrow stream, its captures, the counts
/// read and the damage met.
type Judged<'py> = (Bound<'py, PyBytes>, u64, Bound<'py, PyAny>, Option<String>);

/// Each robots.txt capture of the WARC file at `path` (gzip or not),
/// read as `botscope store import` reads it and judged per agent by each
/// method: `(stream, captures, counts, damage)`, the captures one Arrow IPC stream
/// in the columns of `botscope.spark`'s captures (no Python object per
/// capture: Spark's `mapInArrow` takes the batch as it is). A capture's
/// crawl is its file's `isPartOf`, else the `CC-MAIN-…` name in `name`
/// (where the file came from; `path` when not given), else `name`;
/// `file` is the file's place among the job's (the later one keeps a
/// site captured in two files at one second). What
/// `botscope.spark` runs in its executors, one call per file, without the
/// GIL.
#[pyfunction]
#[pyo3(signature = (path, agents, methods, semantics = "google", name = None, file = 0))]
fn _warc_verdicts<'py>(
    py: Python<'py>,
    path: PathBuf,
    agents: Vec<String>,
    methods: Vec<String>,
    semantics: &str,
    name: Option<String>,
    file: i32,
) -> PyResult<Judged<'py>> {
    let sem = crate::convert::semantics(semantics)?;
    let methods = methods
        .iter()
        .map(|m| {
            botscope_index::studies::Method::parse(m).ok_or_else(|| {
                PyValueError::new_err(format!(
                    "unknown method `{m}` (expected exact, somesite or cic)"
                ))
            })
        })
        .collect::<PyResult<Vec<_>>>()?;
    if agents.is_empty() {
        return Err(PyValueError::new_err("no agents: name at least one"));
    }
    let name = name.unwrap_or_else(|| path.display().to_string());
    let (stream, n, counts, damage) = py
        .detach(|| {
            let input = botscope_store::open_warc(&path)?;
            let got = botscope_index::warc_verdicts(
                input,
                &agents,
                &methods,
                sem,
                &botscope_robotstxt::FetchPolicy::for_semantics(sem),
                &mut |_| {},
            );
            let n = got.captures.len() as u64;
            let stream =
                crate::arrow::captures(&got.captures, agents.len(), methods.len(), &name, file)
                    .map_err(|e| {
                        botscope_store::StoreError::Limit(format!(
                            "{name}: the captures as Arrow: {e}"
                        ))
                    })?;
            Ok::<_, botscope_store::StoreError>((stream, n, got.counts, got.damage))
        })
        .map_err(error)?;
    let counts = serde_json::json!({
        "records": counts.records,
        "robots": counts.robots,
        "other": counts.other,
        "skipped": counts.skipped,
        "unreadable": counts.bad_http,
    });
    Ok((
        PyBytes::new(py, &stream),
        n,
        to_py(py, &counts)?,
        damage.map(|d| d.to_string()),
    ))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add(
        "SOMESITE_AGENTS",
        botscope_index::studies::SOMESITE_AGENTS.to_vec(),
    )?;
    m.add_function(wrap_pyfunction!(_warc_verdicts, m)?)?;
    m.add_class::<Store>()?;
    m.add_class::<Versions>()?;
    m.add_class::<ArrowBatches>()?;
    m.add_class::<Index>()
}
