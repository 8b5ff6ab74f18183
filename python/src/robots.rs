//! `botscope.Robots`, `botscope.bias` and `botscope.Favorability`: one
//! robots.txt body compiled once for verdicts (the parse tree for lint,
//! sitemaps and usage preferences made the first time one of them is
//! asked for), and the bias tables BotSeer measured.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use botscope_index::{FileBias, Tilt};
use botscope_robotstxt::{
    IndexedSelection, Matcher, ParseOptions, Robots as Tree, Selection, Semantics,
};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};

use crate::convert::{bytes_of, json_to_py, to_py};

/// The largest body `Robots` takes: 1 GiB, two thousand times the most a
/// crawler reads (RFC 9309's 500 KiB); the compiled rules address their
/// text with 32-bit offsets. A larger body raises `ValueError`.
pub const MAX_BODY_BYTES: usize = 1 << 30;

/// A body within [`MAX_BODY_BYTES`].
fn checked(body: &[u8]) -> PyResult<&[u8]> {
    if body.len() > MAX_BODY_BYTES {
        return Err(PyValueError::new_err(format!(
            "the body is {} bytes; botscope reads at most {MAX_BODY_BYTES} bytes of a robots.txt \
             (crawlers read 500 KiB, as Robots does unless max_bytes=None)",
            body.len()
        )));
    }
    Ok(body)
}

/// The bundled registry, read once: lint's list of crawler names written
/// as their operators document them.
fn bundled() -> &'static botscope_botid::Registry {
    static R: OnceLock<botscope_botid::Registry> = OnceLock::new();
    R.get_or_init(botscope_botid::Registry::bundled)
}

/// Agents whose groups a `Robots` keeps ready; past it the cache starts
/// over (a caller asking about thousands of agents pays selection again,
/// never unbounded memory).
const MAX_AGENTS: usize = 64;

/// Selections with at least this many rules are indexed by path once asked
/// about enough ([`Prepared`]): a query then walks its path through a trie
/// instead of testing each rule. Below it, testing the rules is faster
/// (on the shared corpus's queries the two meet near 200 rules).
const INDEX_FROM_RULES: usize = 256;

/// A unit of index building costs about four of testing rules (5.7 and
/// 1.4 ns on the shared corpus's queries of selections with 64 rules or
/// more, `examples/many_cost.rs`).
const INDEX_AFTER: u64 = 4;

/// Batches of at least this many URLs, or of this many bytes, are matched
/// without holding the interpreter.
const DETACH_FROM_URLS: usize = 64;
const DETACH_FROM_BYTES: usize = 64 * 1024;

/// The URLs of a batch as UTF-8 in one buffer, each followed by a line
/// feed; `ends[i]` is where URL `i` ends (its line feed), the next one
/// starts one byte further.
#[derive(Default)]
struct Urls {
    text: Vec<u8>,
    ends: Vec<usize>,
}

impl Urls {
    /// Reads a list, a tuple or any iterable of str (a str itself is
    /// refused: it is one URL, not many).
    fn read(obj: &Bound<'_, PyAny>) -> PyResult<Urls> {
        let len = match obj.cast::<PyList>() {
            Ok(list) => Some(list.len()),
            Err(_) => obj.cast::<PyTuple>().ok().map(|t| t.len()),
        };
        if let Some(n) = len {
            if let Some(joined) = Urls::joined(obj, n) {
                return Ok(joined);
            }
        } else if obj.is_instance_of::<PyString>() || obj.is_instance_of::<PyBytes>() {
            return Err(PyTypeError::new_err(format!(
                "urls must be a list of str, not {}",
                obj.get_type().name()?
            )));
        }
        let mut urls = Urls::default();
        urls.ends.reserve(len.unwrap_or(0));
        for u in obj.try_iter()? {
            urls.push(&u?)?;
        }
        Ok(urls)
    }

    /// A list or tuple of `n` str read in two calls, `"\n".join(urls)`
    /// and one UTF-8 encoding, instead of an encoding (a new bytes object)
    /// per URL. None, to be read URL by URL, when it cannot be: an item
    /// that is not a str, one without a UTF-8 form (lone surrogates; each
    /// of these is then named by the error the slow way raises), or one
    /// holding a line feed itself.
    fn joined(seq: &Bound<'_, PyAny>, n: usize) -> Option<Urls> {
        if n == 0 {
            return Some(Urls::default());
        }
        let py = seq.py();
        let joined = pyo3::intern!(py, "\n")
            .call_method1(pyo3::intern!(py, "join"), (seq,))
            .ok()?;
        let encoded = joined.cast::<PyString>().ok()?.encode_utf8().ok()?;
        let bytes = encoded.as_bytes();
        let mut text = Vec::with_capacity(bytes.len() + 1);
        text.extend_from_slice(bytes);
        text.push(b'\n');
        let ends: Vec<usize> = memchr::memchr_iter(b'\n', &text).collect();
        (ends.len() == n).then_some(Urls { text, ends })
    }

    fn push(&mut self, url: &Bound<'_, PyAny>) -> PyResult<()> {
        let s = url
            .cast::<PyString>()
            .map_err(|_| match url.get_type().name() {
                Ok(t) => PyTypeError::new_err(format!("urls must hold str, not {t}")),
                Err(e) => e,
            })?;
        // A str with lone surrogates has no UTF-8 form: UnicodeEncodeError.
        self.text.extend_from_slice(s.encode_utf8()?.as_bytes());
        self.ends.push(self.text.len());
        self.text.push(b'\n');
        Ok(())
    }

    fn len(&self) -> usize {
        self.ends.len()
    }

    fn iter(&self) -> impl Iterator<Item = &[u8]> {
        let starts = std::iter::once(0).chain(self.ends.iter().map(|e| e + 1));
        starts.zip(&self.ends).map(|(a, &b)| &self.text[a..b])
    }
}

/// One agent's groups, and for a large selection asked about enough, their
/// rules indexed by path. The rules are tested one by one until that work
/// passes [`INDEX_AFTER`] times what building the index counts
/// (`index_cost`); then the index is built. One short batch thus never pays
/// for an index it cannot use, and many queries pay at most about twice
/// what the better of the two ways costs.
struct Prepared {
    sel: Selection,
    /// What building the index would count, times [`INDEX_AFTER`]; None
    /// for a selection too small to index (its queries count nothing).
    index_at: Option<u64>,
    /// The work spent testing rules one by one.
    spent: AtomicU64,
    /// Boxed: most agents never need one, and a (file, agent) pair's
    /// state stays small (a first query allocates it).
    index: OnceLock<Box<IndexedSelection>>,
}

/// An agent's key (what its selection depends on) and what it needs.
type AgentEntry = (Box<[u8]>, Arc<Prepared>);

/// A robots.txt file, parsed once and asked many times.
///
/// `Robots(body, semantics="google", max_bytes=DEFAULT_PARSE_CAP)`:
/// `body` is the file's text or bytes (any bytes: a file that is not
/// UTF-8 is read as Google's parser reads it). It is cut at the last
/// whole line within `max_bytes` bytes, as a crawler (and the `robots`
/// commands) read it: 500 KiB by default, so a stranger's huge body costs
/// no more than a crawler's read. `max_bytes=None` parses the whole body,
/// as Google's library does (at most `MAX_BODY_BYTES`).
/// `semantics` is `"google"` (RFC 9309 as Google's parser reads it) or
/// `"draft1996"` (the 1996 draft: first match wins, no wildcards).
///
/// >>> r = Robots("User-agent: *\nDisallow: /private\n")
/// >>> r.allowed("Googlebot", "https://example.com/private/x")
/// False
#[pyclass(module = "botscope", frozen)]
pub struct Robots {
    matcher: Matcher,
    /// The body as given, for the parse tree.
    body: Box<[u8]>,
    max_bytes: Option<usize>,
    /// The parse tree (lint, sitemaps, groups, usage preferences), made on
    /// first use: a loop asking verdicts never pays for it.
    tree: OnceLock<Tree>,
    semantics: Semantics,
    /// The agents asked about, by the key their selection depends on
    /// (a few, looked through in order: no hashing, one small allocation).
    agents: Mutex<Vec<AgentEntry>>,
    /// The last agent asked about, as the very str object it was given
    /// (a loop passes the same one): its groups without reading it again.
    last: Mutex<Option<(Py<PyString>, Arc<Prepared>)>>,
}

impl Robots {
    /// The parse tree, made the first time it is needed.
    fn tree(&self) -> &Tree {
        self.tree.get_or_init(|| {
            Tree::parse_with(
                &self.body,
                &ParseOptions {
                    max_bytes: self.max_bytes,
                },
            )
        })
    }

    /// What `agent`'s verdicts need.
    fn prepared(&self, agent: &str) -> Arc<Prepared> {
        // Google selects by the product token, case-insensitively; the
        // 1996 draft by a case-insensitive substring of the whole name.
        let key: Box<[u8]> = match self.semantics {
            Semantics::Google => botscope_robotstxt::product_token(agent).as_bytes(),
            Semantics::Draft1996 => agent.as_bytes(),
        }
        .to_ascii_lowercase()
        .into_boxed_slice();
        let mut agents = self
            .agents
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((_, p)) = agents.iter().find(|(k, _)| **k == *key) {
            return Arc::clone(p);
        }
        let sel = self.matcher.select(agent);
        let index_at = (self.matcher.rules_in(&sel) >= INDEX_FROM_RULES)
            .then(|| INDEX_AFTER * self.matcher.index_cost(&sel));
        let p = Arc::new(Prepared {
            sel,
            index_at,
            spent: AtomicU64::new(0),
            index: OnceLock::new(),
        });
        if agents.len() >= MAX_AGENTS {
            agents.clear();
        }
        if agents.is_empty() {
            agents.reserve_exact(4);
        }
        agents.push((key, Arc::clone(&p)));
        p
    }

    /// What the agent given as this str object needs.
    fn prepared_for(&self, agent: &Bound<'_, PyString>) -> PyResult<Arc<Prepared>> {
        let mut last = self
            .last
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((o, p)) = &*last
            && o.is(agent)
        {
            return Ok(Arc::clone(p));
        }
        let p = self.prepared(&agent.to_cow()?);
        *last = Some((agent.clone().unbind(), Arc::clone(&p)));
        Ok(p)
    }

    /// The verdict on `path` for a prepared agent.
    fn decide(&self, p: &Prepared, path: &[u8]) -> bool {
        if let Some(ix) = p.index.get() {
            return self.matcher.check_indexed(ix, path, &mut 0).allowed;
        }
        let Some(index_at) = p.index_at else {
            return self.matcher.check_selected(&p.sel, path).allowed;
        };
        let mut work = 0;
        let allowed = self
            .matcher
            .check_selected_counted(&p.sel, path, &mut work)
            .allowed;
        if p.spent.fetch_add(work, Ordering::Relaxed) + work >= index_at {
            p.index
                .get_or_init(|| Box::new(self.matcher.index_selection(&p.sel, &mut 0)));
        }
        allowed
    }
}

#[pymethods]
impl Robots {
    #[new]
    #[pyo3(signature = (body, semantics = "google", max_bytes = Some(botscope_robotstxt::DEFAULT_PARSE_CAP)))]
    fn new(
        py: Python<'_>,
        body: &Bound<'_, PyAny>,
        semantics: &str,
        max_bytes: Option<usize>,
    ) -> PyResult<Robots> {
        let sem = crate::convert::semantics(semantics)?;
        let bytes = bytes_of(body, "body")?;
        // What is read, within the limit (and the byte past it, which
        // tells the parser whether the last line within it is whole): a
        // body cut at `max_bytes` is never refused for its tail.
        let read = bytes
            .len()
            .min(max_bytes.map_or(usize::MAX, |m| m.saturating_add(1)));
        let bytes = checked(&bytes[..read])?;
        let opts = ParseOptions { max_bytes };
        // A large file is compiled without holding the interpreter.
        Ok(py.detach(|| Robots {
            matcher: Matcher::compile(bytes, sem, &opts),
            body: bytes.into(),
            max_bytes,
            tree: OnceLock::new(),
            semantics: sem,
            agents: Mutex::default(),
            last: Mutex::new(None),
        }))
    }

    /// `"google"` or `"draft1996"`.
    #[getter]
    fn semantics(&self) -> &'static str {
        self.semantics.as_str()
    }

    /// May `agent` fetch `url`? `agent` is a product token (`Googlebot`)
    /// or a whole User-Agent header; `url` is an absolute URL or a path.
    fn allowed(&self, agent: &Bound<'_, PyString>, url: &str) -> PyResult<bool> {
        let p = self.prepared_for(agent)?;
        Ok(self.decide(&p, &botscope_robotstxt::path_of(url.as_bytes())))
    }

    /// `allowed` for many URLs of one agent (a list, tuple or any
    /// iterable of str), the agent's groups selected once: a list of
    /// bools in order. A batch of many URLs is answered without holding
    /// the interpreter.
    fn allowed_many(
        &self,
        py: Python<'_>,
        agent: &Bound<'_, PyString>,
        urls: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<bool>> {
        let p = self.prepared_for(agent)?;
        let urls = Urls::read(urls)?;
        let run = || {
            urls.iter()
                .map(|u| self.decide(&p, &botscope_robotstxt::path_of(u)))
                .collect()
        };
        // Handing the interpreter over and back costs more than a short
        // batch's matching.
        Ok(
            if urls.len() >= DETACH_FROM_URLS || urls.text.len() >= DETACH_FROM_BYTES {
                py.detach(run)
            } else {
                run()
            },
        )
    }

    /// The verdict with its reason, as `botscope robots check --format
    /// json` gives it: `verdict` (`allowed`/`disallowed`), `allowed`, the
    /// deciding `rule` (`line`, `kind`, `pattern`) or None, the `group`
    /// that applied (`specific`, `global`, `none`), a `reason` for people,
    /// and the `usage` and `content_signal` preferences in force.
    fn explain<'py>(&self, py: Python<'py>, agent: &str, url: &str) -> PyResult<Bound<'py, PyAny>> {
        let path = botscope_robotstxt::path_of(url.as_bytes());
        let v = self.matcher.check_path(agent, &path);
        let prefs =
            self.tree()
                .preferences(botscope_robotstxt::product_token(agent), &path, v.allowed);
        let mut obj = v.check_json(url, agent, self.semantics, &prefs);
        obj["reason"] = v.describe().into();
        json_to_py(py, &obj)
    }

    /// The usage preferences the file states for `agent` at `url`
    /// (draft-ietf-aipref-attach's `Content-Usage` rules and the
    /// `Content-Signal` lines): `usage` (category to `y`/`n`, or None when
    /// no rule applies or the agent may not crawl the URL), `usage_lines`,
    /// `content_signal` and `signal_lines`.
    fn usage<'py>(&self, py: Python<'py>, agent: &str, url: &str) -> PyResult<Bound<'py, PyAny>> {
        let path = botscope_robotstxt::path_of(url.as_bytes());
        let allowed = self.matcher.check_path(agent, &path).allowed;
        let prefs =
            self.tree()
                .preferences(botscope_robotstxt::product_token(agent), &path, allowed);
        to_py(py, &prefs)
    }

    /// The Crawl-delay for `agent`, in seconds, or None.
    fn crawl_delay(&self, agent: &str) -> Option<f64> {
        self.matcher.crawl_delay(agent)
    }

    /// The `Sitemap` URLs, in file order.
    #[getter]
    fn sitemaps(&self) -> Vec<String> {
        self.tree()
            .sitemaps
            .iter()
            .map(|s| s.value.clone())
            .collect()
    }

    /// The groups as `botscope robots parse --format json` gives them.
    #[getter]
    fn groups<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &self.tree().groups)
    }

    /// The parse tree as `botscope robots parse --format json` gives it.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, self.tree())
    }

    /// What is wrong with the file, as `botscope robots lint --format json`
    /// lists it: dicts with `code`, `severity`, `line`, `message`, …
    fn lint<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let registry = bundled();
        let diags = py.detach(|| {
            botscope_robotstxt::lint_with(self.tree(), &|v| registry.documents_token(v))
        });
        to_py(py, &diags)
    }

    fn __repr__(&self) -> String {
        format!(
            "<botscope.Robots: {} groups, {} rules, {}>",
            self.tree().groups.len(),
            self.tree()
                .groups
                .iter()
                .map(|g| g.rules.len())
                .sum::<usize>(),
            self.semantics.as_str()
        )
    }
}

/// The AI usage preferences of a response's `Content-Usage` header
/// (draft-ietf-aipref-attach-05), read as `botscope robots meta` and
/// `botscope fetch` read them: `lines` are its field lines (a str for one),
/// read together as one structured-field Dictionary (RFC 9651 section
/// 4.2: a later key replaces an earlier one). Returns `usage` (category to
/// `y`/`n`; a category it lacks is unknown), `problems` (entries read as
/// unknown, labels the vocabulary does not define, with the draft that
/// dropped them) and `error` (why nothing could be read, else None).
#[pyfunction]
fn content_usage<'py>(py: Python<'py>, lines: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let lines: Vec<String> = match lines.extract::<String>() {
        Ok(one) => vec![one],
        Err(_) => lines.extract()?,
    };
    // Past MAX_PREFERENCE_BYTES in all, the value is refused unread.
    let obj = match botscope_robotstxt::parse_usage_header(&lines) {
        Ok(p) => serde_json::json!({"usage": p.usage, "problems": p.problems, "error": null}),
        Err(e) => serde_json::json!({"usage": {}, "problems": [], "error": e.to_string()}),
    };
    json_to_py(py, &obj)
}

/// The bias of one file, as `botscope bias FILE --format json` gives it.
fn file_bias(body: &[u8], sem: Semantics) -> FileBias {
    botscope_index::bias(body, sem)
}

/// BotSeer's bias of one robots.txt: for each robot it names, whether the
/// file favours it, disfavours it or neither, compared with the `*` group
/// (`botscope bias FILE --format json`).
#[pyfunction]
#[pyo3(signature = (body, semantics = "google"))]
fn bias<'py>(
    py: Python<'py>,
    body: &Bound<'py, PyAny>,
    semantics: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let sem = crate::convert::semantics(semantics)?;
    let bytes = bytes_of(body, "body")?;
    let bytes = checked(&bytes)?;
    let b = py.detach(|| file_bias(bytes, sem));
    to_py(py, &b)
}

/// Favourability over a set of files, as BotSeer defined it:
/// (favoured − disfavoured) / N per robot, N being every file added.
///
/// >>> f = Favorability()
/// >>> f.add("User-agent: Googlebot\nAllow: /\n\nUser-agent: *\nDisallow: /\n")
/// >>> f.table()[0]["robot"], f.n
/// ('googlebot', 1)
#[pyclass(module = "botscope")]
pub struct Favorability {
    inner: botscope_index::Favorability,
}

#[pymethods]
impl Favorability {
    #[new]
    #[pyo3(signature = (semantics = "google"))]
    fn new(semantics: &str) -> PyResult<Favorability> {
        Ok(Favorability {
            inner: botscope_index::Favorability::new(crate::convert::semantics(semantics)?),
        })
    }

    /// Adds one file's body (str or bytes).
    fn add(&mut self, py: Python<'_>, body: &Bound<'_, PyAny>) -> PyResult<()> {
        let bytes = bytes_of(body, "body")?;
        let bytes = checked(&bytes)?;
        let sem = self.inner.semantics();
        let b = py.detach(|| file_bias(bytes, sem));
        self.inner.add(&b);
        Ok(())
    }

    /// Adds many bodies, their bias computed without holding the
    /// interpreter.
    fn add_many(&mut self, py: Python<'_>, bodies: &Bound<'_, PyAny>) -> PyResult<()> {
        let mut owned: Vec<Vec<u8>> = Vec::new();
        for b in bodies.try_iter()? {
            let b = b?;
            let bytes = bytes_of(&b, "body")?;
            owned.push(checked(&bytes)?.to_vec());
        }
        let sem = self.inner.semantics();
        let biases: Vec<FileBias> = py.detach(|| owned.iter().map(|b| file_bias(b, sem)).collect());
        for b in &biases {
            self.inner.add(b);
        }
        Ok(())
    }

    /// Adds a bias table `botscope.bias` returned (or the command's JSON).
    fn add_bias(&mut self, bias: &Bound<'_, PyDict>) -> PyResult<()> {
        let robots = bias
            .get_item("robots")?
            .ok_or_else(|| PyValueError::new_err("a bias table has a `robots` list"))?;
        // A file past the work budget claims no bias and is left out of N.
        if matches!(bias.get_item("too_complex")?, Some(c) if !c.is_none()) {
            return Ok(());
        }
        self.inner.add_files(1);
        for r in robots.cast::<PyList>()?.iter() {
            let name: String = r.get_item("robot")?.extract()?;
            let verdict: String = r.get_item("verdict")?.extract()?;
            let tilt = match verdict.as_str() {
                "favored" => Tilt::Favored,
                "disfavored" => Tilt::Disfavored,
                "nobias" => Tilt::Nobias,
                other => {
                    return Err(PyValueError::new_err(format!(
                        "unknown verdict `{other}` (expected favored, disfavored or nobias)"
                    )));
                }
            };
            self.inner.add_robot(&name, tilt);
        }
        Ok(())
    }

    /// Folds another set in.
    fn merge(&mut self, other: PyRef<'_, Favorability>) {
        self.inner.merge(&other.inner);
    }

    /// N: the files added.
    #[getter]
    fn n(&self) -> u64 {
        self.inner.n()
    }

    /// Every robot (`robot`, `appeared`, `favored`, `disfavored`,
    /// `favorability`), most files naming it first.
    fn table<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &self.inner.table())
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Robots>()?;
    m.add_class::<Favorability>()?;
    m.add_function(wrap_pyfunction!(bias, m)?)?;
    m.add_function(wrap_pyfunction!(content_usage, m)?)?;
    Ok(())
}
