//! Values across the boundary: bodies in (str or bytes), JSON values and
//! result tables out, library errors as exceptions with their messages.

use std::borrow::Cow;

use botscope_text::{Cells, Table};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};

use crate::Error;

/// An error and its causes, as the command line prints them
/// (`outer: inner: innermost`).
pub fn message(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let s = c.to_string();
        if !text.contains(&s) {
            text.push_str(": ");
            text.push_str(&s);
        }
        cause = c.source();
    }
    text
}

/// A library error as `botscope.Error`.
pub fn error(e: impl std::error::Error + 'static) -> PyErr {
    Error::new_err(message(&e))
}

/// A path a caller gave, as a file: the libraries read standard input for
/// `-`, as the command's arguments mean it, but a call from Python never
/// does (it would block on, or consume, the interpreter's own input).
pub fn file_path(p: std::path::PathBuf) -> std::path::PathBuf {
    if p.as_os_str() == "-" {
        std::path::Path::new(".").join(p)
    } else {
        p
    }
}

/// The bytes of a `str` (UTF-8) or `bytes` argument, borrowed when they
/// are bytes; `what` names the argument in the error.
pub fn bytes_of<'a>(obj: &'a Bound<'_, PyAny>, what: &str) -> PyResult<Cow<'a, [u8]>> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(Cow::Borrowed(b.as_bytes()));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        // A str with lone surrogates has no UTF-8 form: UnicodeEncodeError.
        return Ok(Cow::Owned(s.to_cow()?.into_owned().into_bytes()));
    }
    Err(PyTypeError::new_err(format!(
        "{what} must be str or bytes, not {}",
        obj.get_type().name()?
    )))
}

/// A JSON value as Python objects (dicts, lists, str, int, float, bool,
/// None).
pub fn json_to_py<'py>(py: Python<'py>, v: &serde_json::Value) -> PyResult<Bound<'py, PyAny>> {
    pythonize::pythonize(py, v).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// A serializable value as Python objects, field by field in the order
/// the command's `--format json` writes them.
pub fn to_py<'py>(py: Python<'py>, v: &impl serde::Serialize) -> PyResult<Bound<'py, PyAny>> {
    pythonize::pythonize(py, v).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// JSON text as Python objects, keys in the text's order (`json.loads`).
pub fn json_text_to_py<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    py.import("json")?.call_method1("loads", (text,))
}

/// A result table as a list of dicts, one per row, keyed by the columns'
/// names (the command's CSV and Parquet columns), in column order.
pub fn table_rows<'py>(py: Python<'py>, t: &Table) -> PyResult<Bound<'py, PyList>> {
    let rows = PyList::empty(py);
    for r in 0..t.rows() {
        let row = PyDict::new(py);
        for c in &t.columns {
            let cell: Bound<'py, PyAny> = match &c.cells {
                Cells::Text(v) | Cells::Label(v) => v[r].as_deref().into_pyobject(py)?.into_any(),
                Cells::Count(v) => v[r].into_pyobject(py)?.into_any(),
                Cells::Real(v) => v[r].into_pyobject(py)?.into_any(),
            };
            row.set_item(&c.name, cell)?;
        }
        rows.append(row)?;
    }
    Ok(rows)
}

/// The column names of a table.
pub fn table_columns(t: &Table) -> Vec<String> {
    t.columns.iter().map(|c| c.name.clone()).collect()
}

/// A semantics name (`google`, `draft1996`) as the library's value.
pub fn semantics(name: &str) -> PyResult<botscope_robotstxt::Semantics> {
    name.parse().map_err(PyValueError::new_err)
}

/// A flag value of the command line (`--rank`, `--sort`) as its enum.
pub fn value_enum<T: clap::ValueEnum>(what: &str, name: &str) -> PyResult<T> {
    T::from_str(name, true).map_err(|_| {
        let names: Vec<String> = T::value_variants()
            .iter()
            .filter_map(|v| v.to_possible_value().map(|p| p.get_name().to_owned()))
            .collect();
        PyValueError::new_err(format!(
            "unknown {what} `{name}` (expected one of {})",
            names.join(", ")
        ))
    })
}

/// A time argument: Unix seconds, or a date or RFC 3339 time as the
/// command line reads it (`2024-03-01`).
pub fn time_arg(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<i64>> {
    let Some(obj) = obj.filter(|o| !o.is_none()) else {
        return Ok(None);
    };
    if let Ok(s) = obj.extract::<i64>() {
        return Ok(Some(s));
    }
    if let Ok(text) = obj.extract::<String>() {
        return botscope_store::parse_time_arg(&text)
            .map(Some)
            .map_err(|e| PyValueError::new_err(e.to_string()));
    }
    // datetime.date and datetime.datetime: their ISO form.
    if obj.hasattr("isoformat")? {
        let text: String = obj.call_method0("isoformat")?.extract()?;
        return botscope_store::parse_time_arg(&text)
            .map(Some)
            .map_err(|e| PyValueError::new_err(e.to_string()));
    }
    Err(PyTypeError::new_err(format!(
        "a time must be Unix seconds, a date string or a datetime, not {}",
        obj.get_type().name()?
    )))
}
