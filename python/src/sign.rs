//! `botscope.Signer`: Web Bot Auth for a crawler written in Python. Each
//! request is signed as `botscope fetch --signing-key` signs it (HTTP
//! Message Signatures over `@authority` and `Signature-Agent`, Ed25519,
//! tagged `web-bot-auth`, a fresh nonce each), by botscope-httpsig.

use std::time::{SystemTime, UNIX_EPOCH};

use botscope_httpsig::{Request, SignSpec, SigningKey, sign_request};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// Signs requests with a Web Bot Auth key: `key` is the key file's text
/// (a JWK as `botscope keys generate` writes it, or a PKCS#8 PEM),
/// `agent` the https URL whose key directory lists the key (sent as
/// `Signature-Agent`), `validity` how long each signature holds.
///
/// >>> s = Signer(open("keys/signing-key.jwk").read(), "https://crawler.example")  # doctest: +SKIP
/// >>> s.sign("GET", "https://example.com/page")  # doctest: +SKIP
/// [('Signature-Agent', 'sig1="https://crawler.example"'), ('Signature-Input', 'sig1=(...'), ('Signature', 'sig1=:...:')]
#[pyclass(module = "botscope._botscope", frozen)]
pub struct Signer {
    key: SigningKey,
    agent: Option<String>,
    validity: i64,
}

#[pymethods]
impl Signer {
    #[new]
    #[pyo3(signature = (key, agent = None, validity = 60.0))]
    fn new(key: &str, agent: Option<&str>, validity: f64) -> PyResult<Self> {
        let key = SigningKey::parse(key)
            .map_err(|e| PyValueError::new_err(format!("the signing key: {e}")))?;
        if let Some(a) = agent {
            botscope_httpsig::agent::resolve(a)
                .map_err(|e| PyValueError::new_err(format!("agent={a:?}: {e}")))?;
        }
        if !(validity.is_finite() && (1.0..=86_400.0).contains(&validity)) {
            return Err(PyValueError::new_err(
                "validity is between 1 second and 24 hours (the draft's most)",
            ));
        }
        Ok(Signer {
            key,
            agent: agent.map(str::to_owned),
            // Whole seconds: `created` and `expires` are integers.
            #[allow(clippy::cast_possible_truncation)]
            validity: validity.round() as i64,
        })
    }

    /// The key's JWK SHA-256 thumbprint: the `keyid` its signatures carry.
    #[getter]
    fn keyid(&self) -> String {
        self.key.keyid()
    }

    /// The agent URL sent as `Signature-Agent`, or None.
    #[getter]
    fn agent(&self) -> Option<String> {
        self.agent.clone()
    }

    /// The header fields that sign a request of `method` to `url` (an
    /// absolute http(s) URL): `Signature-Agent` (with an agent),
    /// `Signature-Input` and `Signature`, as (name, value) pairs. `covers`
    /// are (name, value) fields sent with the request that the signature
    /// covers too (`crawler-max-price`); `created` is the signing time in
    /// Unix seconds (now by default).
    #[pyo3(signature = (method, url, covers = Vec::new(), created = None))]
    fn sign(
        &self,
        method: &str,
        url: &str,
        covers: Vec<(String, String)>,
        created: Option<i64>,
    ) -> PyResult<Vec<(String, String)>> {
        let u = url::Url::parse(url)
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https") && u.host_str().is_some())
            .ok_or_else(|| PyValueError::new_err(format!("{url:?} is not an http(s) URL")))?;
        let host = u.host_str().unwrap_or_default();
        let authority = match u.port() {
            Some(p) => format!("{host}:{p}"),
            None => host.to_owned(),
        };
        let target = &u[url::Position::BeforePath..url::Position::AfterQuery];
        let req = Request::new(method, u.scheme(), &authority, target, covers.clone());
        let now = created.unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
        });
        let nonce = botscope_httpsig::sign::nonce()
            .map_err(|e| PyValueError::new_err(format!("no random nonce: {e}")))?;
        let mut spec = SignSpec::new(self.agent.as_deref(), now, self.validity, Some(nonce));
        spec.covers = covers.iter().map(|(n, _)| n.to_ascii_lowercase()).collect();
        sign_request(&req, &self.key, &spec)
            .map(|s| s.headers())
            .map_err(|e| PyValueError::new_err(format!("cannot sign: {e}")))
    }

    fn __repr__(&self) -> String {
        format!(
            "Signer(keyid={:?}, agent={:?}, validity={})",
            self.key.keyid(),
            self.agent,
            self.validity
        )
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Signer>()
}
