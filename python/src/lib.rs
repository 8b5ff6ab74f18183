//! botscope for Python: the `botscope._botscope` extension module under
//! the `botscope` package (python/botscope). Thin over the library crates:
//! every answer is the library's, every error its message; the module only
//! converts arguments and results and lets go of the interpreter lock
//! while a batch runs.

// A library speaks through its return values, never by printing.
#![deny(clippy::print_stdout, clippy::print_stderr)]

use pyo3::prelude::*;

mod arrow;
mod convert;
mod logs;
mod registry;
mod research;
mod robots;
mod sign;
mod terms;

pyo3::create_exception!(
    _botscope,
    Error,
    pyo3::exceptions::PyException,
    "What botscope's libraries refuse, with their message: a store or index that cannot be opened, a query that does not parse, a log that cannot be read, a registry file that is not valid."
);

pyo3::create_exception!(
    _botscope,
    MalformedLine,
    pyo3::exceptions::PyValueError,
    "A log line that is not a request of its format; `args[1]` is the reason's stable name (`layout-mismatch`, `bad-time`, …)."
);

/// The extension module.
#[pymodule]
fn _botscope(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("Error", py.get_type::<Error>())?;
    m.add("MalformedLine", py.get_type::<MalformedLine>())?;
    m.add("MAX_BODY_BYTES", robots::MAX_BODY_BYTES)?;
    m.add("DEFAULT_PARSE_CAP", botscope_robotstxt::DEFAULT_PARSE_CAP)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    robots::register(m)?;
    registry::register(m)?;
    logs::register(m)?;
    research::register(m)?;
    terms::register(m)?;
    sign::register(m)?;
    Ok(())
}
