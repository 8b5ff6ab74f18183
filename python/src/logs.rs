//! `botscope.parse_log_line` and `botscope.analyze_logs`: access logs
//! through the pipeline `botscope logs analyze` runs.

use std::path::PathBuf;

use botscope_accesslog::LogFormat;
use botscope_logs::{Job, Progress, RobotsSpec, RobotsTxt, Settings, Source};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyString;

use crate::convert::json_to_py;
use crate::registry::Registry;
use crate::{Error, MalformedLine};

/// A `--log-format` value: a preset (`combined`, `common`,
/// `vhost_combined`, `json`), an nginx `log_format` string or an Apache
/// `LogFormat` string.
fn log_format(spec: &str) -> PyResult<LogFormat> {
    LogFormat::from_spec(spec).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// One access-log line as a dict (`ip`, `time` in Unix seconds, `method`,
/// `path`, `protocol`, `status`, `bytes`, `referer`, `user_agent`,
/// `vhost`, `user`, `duration_us`, the signature headers when the format
/// logs them, and `truncated`), or `MalformedLine` with the reason's stable
/// name (`layout-mismatch`, `bad-time`, …). `line` is str or bytes (any
/// bytes: a log is a stranger's).
///
/// >>> parse_log_line('66.249.66.1 - - [17/May/2015:10:05:03 +0000] "GET / HTTP/1.1" 200 5 "-" "Googlebot/2.1"')["status"]
/// 200
#[pyfunction]
#[pyo3(signature = (line, format = "combined"))]
fn parse_log_line<'py>(
    py: Python<'py>,
    line: &Bound<'py, PyAny>,
    format: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let f = log_format(format)?;
    let bytes = crate::convert::bytes_of(line, "line")?;
    let bytes: &[u8] = &bytes;
    // A line read from a file keeps its end of line.
    let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    let r = f.parse_line(bytes).map_err(|reason| {
        MalformedLine::new_err((
            format!("not a {} log line: {}", f.name(), reason.as_str()),
            reason.as_str(),
        ))
    })?;
    let obj = serde_json::json!({
        "vhost": r.vhost,
        "ip": r.ip.to_string(),
        "user": r.user,
        "time": r.time,
        "method": r.method,
        "path": r.path,
        "protocol": r.protocol,
        "status": r.status,
        "bytes": r.bytes,
        "referer": r.referer,
        "user_agent": r.user_agent,
        "duration_us": r.duration_us,
        "signature_input": r.signed.input,
        "signature": r.signed.signature,
        "signature_agent": r.signed.agent,
        "truncated": r.truncated,
    });
    json_to_py(py, &obj)
}

/// One path, or a list of them.
fn paths(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<PathBuf>> {
    if obj.is_instance_of::<PyString>() || obj.hasattr("__fspath__")? {
        return Ok(vec![crate::convert::file_path(obj.extract()?)]);
    }
    let mut out = Vec::new();
    for p in obj
        .try_iter()
        .map_err(|_| PyTypeError::new_err(format!("{what} must be a path or a list of paths")))?
    {
        out.push(crate::convert::file_path(p?.extract()?));
    }
    Ok(out)
}

/// Reads access logs (plain or gzip) and reports on the robots in them, as
/// `botscope logs analyze --format json` does (schema `botscope.logs/1`):
/// lines read and malformed (counted per reason), each robot's requests,
/// verification, pace and, with `robots`, the requests its robots.txt
/// disallowed.
///
/// `robots`: the site's robots.txt, a path or a list of `DATE=PATH`
/// versions (each in force from its date). `format`: as for
/// `parse_log_line`, detected per file when None. `since`/`until`: the
/// window (Unix seconds or dates). `registry`: a `Registry` (the default
/// one when None). Offline: the published lists and the address's owner
/// decide verification, as with `botscope logs analyze` without `--verify`.
/// Runs without holding the interpreter, on every core.
///
/// An input nothing of which could be read, or a window with no request,
/// raises `botscope.Error` (the command writes no report then either).
#[pyfunction]
#[pyo3(signature = (paths, robots = None, format = None, since = None, until = None, registry = None, threads = None))]
#[allow(clippy::too_many_arguments)]
fn analyze_logs<'py>(
    py: Python<'py>,
    paths: &Bound<'py, PyAny>,
    robots: Option<&Bound<'py, PyAny>>,
    format: Option<&str>,
    since: Option<&Bound<'py, PyAny>>,
    until: Option<&Bound<'py, PyAny>>,
    registry: Option<Py<Registry>>,
    threads: Option<usize>,
) -> PyResult<Bound<'py, PyAny>> {
    let files = self::paths(paths, "paths")?;
    if files.is_empty() {
        return Err(PyValueError::new_err("give at least one log file"));
    }
    // Regular files only, checked without opening them: a FIFO would wait
    // for a writer and /dev/zero never ends.
    // (A missing file is told by the reading, as the command tells it.)
    for f in &files {
        if let Err(e) = botscope_os::check_regular(f)
            && e.kind() == std::io::ErrorKind::InvalidInput
        {
            return Err(PyValueError::new_err(format!(
                "{}: {e}; analyze_logs reads log files (save a pipe's output to a file first)",
                f.display()
            )));
        }
    }
    let specs = match robots.filter(|r| !r.is_none()) {
        None => Vec::new(),
        Some(r) => {
            let list: Vec<String> = if r.is_instance_of::<PyString>() || r.hasattr("__fspath__")? {
                vec![r.extract::<PathBuf>()?.to_string_lossy().into_owned()]
            } else {
                r.extract()?
            };
            list.iter()
                .map(|s| RobotsSpec::parse(s).map_err(|e| PyValueError::new_err(e.to_string())))
                .collect::<PyResult<Vec<_>>>()?
        }
    };
    let format = format.map(log_format).transpose()?;
    let window = botscope_accesslog::Window {
        since: crate::convert::time_arg(since)?,
        until: crate::convert::time_arg(until)?,
    };
    let registry = match registry {
        Some(r) => r,
        None => Py::new(py, Registry::load(py, None, true)?)?,
    };
    let reg = registry.get();
    let threads = threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    let semantics = botscope_robotstxt::Semantics::Google;
    let stop = Interruptible::default();
    let work = || -> Result<_, String> {
        let robots = RobotsTxt::load(&specs, semantics).map_err(|e| crate::convert::message(&e))?;
        let job =
            Job::new(&reg.registry, robots, threads).map_err(|e| crate::convert::message(&e))?;
        let settings = Settings {
            format,
            window,
            threads,
            max_clients: botscope_accesslog::MAX_CLIENTS,
            keep_threads: false,
        };
        let sources = files.into_iter().map(Source::File).collect();
        let read = job
            .read(sources, &settings, &stop)
            .map_err(|e| crate::convert::message(&e))?;
        if stop.stopped() {
            return Err("interrupted".into());
        }
        // Offline: no FCrDNS evidence.
        let no_dns =
            std::collections::HashMap::<std::net::IpAddr, botscope_botid::FcrdnsEvidence>::new();
        Ok(job.finish(read, &no_dns, &reg.owners, false))
    };
    // The work on a thread of its own, the caller's thread looking for
    // Ctrl-C meanwhile: a KeyboardInterrupt stops the reading and is
    // raised.
    let outcome = std::thread::scope(|s| {
        let handle = s.spawn(work);
        loop {
            py.detach(|| {
                let t = std::time::Instant::now();
                while !handle.is_finished() && t.elapsed() < std::time::Duration::from_millis(50) {
                    std::thread::sleep(std::time::Duration::from_millis(2));
                }
            });
            if let Err(e) = py.check_signals() {
                stop.0.store(true, std::sync::atomic::Ordering::Relaxed);
                let _ = handle.join();
                return Err(e);
            }
            if handle.is_finished() {
                return handle
                    .join()
                    .unwrap_or_else(|p| std::panic::resume_unwind(p))
                    .map_err(Error::new_err);
            }
        }
    })?;
    if let Some(problem) = outcome.problem() {
        return Err(Error::new_err(problem.to_string()));
    }
    let warning = py.get_type::<pyo3::exceptions::PyRuntimeWarning>();
    for w in &outcome.warnings {
        let text = std::ffi::CString::new(w.to_string().replace('\0', " ")).unwrap_or_default();
        PyErr::warn(py, &warning, &text, 1)?;
    }
    crate::convert::json_text_to_py(py, &botscope_logs::render::json(&outcome.report))
}

/// Progress that ends the reading once Ctrl-C was pressed.
#[derive(Default)]
struct Interruptible(std::sync::atomic::AtomicBool);

impl Progress for Interruptible {
    fn stopped(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(parse_log_line, m)?)?;
    m.add_function(wrap_pyfunction!(analyze_logs, m)?)
}
