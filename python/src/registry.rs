//! `botscope.Registry`: who a User-Agent claims to be, and whether the
//! address proves it, as `botscope verify` decides.

use std::net::IpAddr;
use std::path::{Path, PathBuf};

use botscope_botid::{MAX_REGISTRY_BYTES, Owners, Registry as Reg, UaClassifier};
use botscope_dns::{DnsEvidence, EvidenceConfig};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::Error;
use crate::convert::{error, to_py};

/// A registry file, read within the size limit and validated.
fn read_registry(path: &Path) -> PyResult<Reg> {
    let path = &crate::convert::file_path(path.to_path_buf());
    let shown = path.display().to_string();
    let bytes = botscope_os::read_capped(path, MAX_REGISTRY_BYTES as u64)
        .map_err(|e| Error::new_err(e.to_string()))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| Error::new_err(format!("{shown} is not UTF-8 text")))?;
    Reg::parse(&shown, &text).map_err(|e| {
        Error::new_err(format!(
            "invalid registry:\n{}",
            botscope_botid::errors_text(&e)
        ))
    })
}

/// The bundled registry, the user's over it (unless `user` is false),
/// then `path`'s: the registry the command reads.
pub(crate) fn layered(
    places: &botscope_os::Locations,
    path: Option<&Path>,
    user: bool,
) -> PyResult<Reg> {
    let mut registry = Reg::bundled();
    if user && let Some(p) = places.user_registry.as_ref().filter(|p| p.is_file()) {
        registry = registry.layered(read_registry(p)?);
    }
    if let Some(p) = path {
        registry = registry.layered(read_registry(p)?);
    }
    Ok(registry)
}

/// The registry of known crawlers (bottica's format and botscope's
/// superset), with the User-Agent classifier and the IP-owner databases
/// `botscope data update` installed.
///
/// `Registry(path=None, user=True)`: the bundled registry, with the user
/// registry `botscope bots update` writes layered over it (unless
/// `user=False`), and then the file at `path`, as the command reads them.
///
/// >>> Registry().identify("Mozilla/5.0 (compatible; Googlebot/2.1)")["claimed_bot"]
/// 'Googlebot'
#[pyclass(module = "botscope", frozen)]
pub struct Registry {
    pub(crate) registry: Reg,
    classifier: UaClassifier,
    pub(crate) owners: botscope_ipdb::IpOwners,
    dns_cache: Option<PathBuf>,
}

impl Registry {
    /// The registry the command reads: the bundled one, the user's over
    /// it, then `path`'s.
    pub(crate) fn load(py: Python<'_>, path: Option<&Path>, user: bool) -> PyResult<Registry> {
        let places = botscope_os::Locations::from_env();
        let registry = layered(&places, path, user)?;
        let (classifier, owners) = py.detach(|| {
            let classifier = UaClassifier::bundled_on(&registry, 1);
            let owners = match &places.data_dir {
                Some(dir) => botscope_ipdb::DataDir::new(dir).open().0,
                None => botscope_ipdb::IpOwners::none(),
            };
            (classifier, owners)
        });
        Ok(Registry {
            classifier: classifier.map_err(error)?,
            registry,
            owners,
            dns_cache: places.dns_cache,
        })
    }
}

#[pymethods]
impl Registry {
    #[new]
    #[pyo3(signature = (path = None, user = true))]
    fn new(py: Python<'_>, path: Option<PathBuf>, user: bool) -> PyResult<Registry> {
        Registry::load(py, path.as_deref(), user)
    }

    /// What a User-Agent says: `is_bot`, `client_type` (`browser`,
    /// `crawler`, `feed-reader`, `preview`, `library`, `os-service`,
    /// `media-player`, `headless`, `monitor`, `scanner` or `unknown`), the
    /// registered bot it names (`claimed_bot`, with its `category` and
    /// `operator`), `family` (uap-core's), and `reason` (why it is taken
    /// for a robot).
    fn identify<'py>(&self, py: Python<'py>, user_agent: &str) -> PyResult<Bound<'py, PyAny>> {
        let ua = self.classifier.classify(user_agent);
        let entry = ua.claimed_bot.as_deref().and_then(|b| self.registry.get(b));
        let obj = serde_json::json!({
            "user_agent": user_agent,
            "is_bot": ua.is_bot,
            "client_type": ua.client_type,
            "claimed_bot": ua.claimed_bot,
            "category": entry.and_then(|e| e.category),
            "operator": entry.and_then(|e| e.operator.as_deref()),
            "family": self.classifier.family(user_agent),
            "reason": ua.reason,
        });
        crate::convert::json_to_py(py, &obj)
    }

    /// The verdict on a client, as `botscope verify IP --ua UA --format
    /// json` gives it: `verdict` (`verified`, `spoofed`, `unverifiable`,
    /// `unclaimed-bot-ip`, `unknown`), the claimed bot, and every piece of
    /// evidence (the published list, FCrDNS, the address's owner).
    ///
    /// `offline=True` (the default) asks no DNS: the published lists and
    /// the owner decide. `offline=False` confirms the address's reverse
    /// name forward (FCrDNS) through `nameservers` (`"127.0.0.1:53"`, …;
    /// the system's when empty), with the command's DNS cache.
    #[pyo3(signature = (ip, user_agent = None, offline = true, nameservers = Vec::new(), timeout = 5.0))]
    fn verify<'py>(
        &self,
        py: Python<'py>,
        ip: &str,
        user_agent: Option<&str>,
        offline: bool,
        nameservers: Vec<String>,
        timeout: f64,
    ) -> PyResult<Bound<'py, PyAny>> {
        let ip: IpAddr =
            botscope_botid::parse_ip(ip).map_err(|e| PyValueError::new_err(e.to_string()))?;
        let ua = user_agent
            .map(|u| self.classifier.classify(u))
            .unwrap_or_default();
        // The DNS settings are checked whether or not this address needs
        // DNS: a wrong argument is an error every time.
        let config = match offline {
            true => None,
            false => Some(
                EvidenceConfig::from_flags(&nameservers, timeout, 4, self.dns_cache.clone())
                    .map_err(|e| PyValueError::new_err(e.to_string()))?,
            ),
        };
        let domains = botscope_botid::fcrdns_domains(&self.registry, ip, &ua);
        let evidence = match (config, domains) {
            (Some(config), Some(domains)) => {
                let question = vec![(ip, domains.to_vec())];
                let (mut found, problem) = py.detach(|| fcrdns(&config, &question))?;
                if let Some(p) = problem {
                    // The answers stand; the cache could not be saved.
                    let warning = py.get_type::<pyo3::exceptions::PyRuntimeWarning>();
                    PyErr::warn(
                        py,
                        &warning,
                        &std::ffi::CString::new(p).unwrap_or_default(),
                        1,
                    )?;
                }
                found.remove(&ip)
            }
            _ => None,
        };
        let owner = self.owners.owner(ip);
        let v = botscope_botid::verify(
            &self.registry,
            ip,
            user_agent,
            &ua,
            evidence.as_ref(),
            owner,
        );
        to_py(py, &v)
    }

    /// The registry's robots, as `botscope bots list --format json` lists
    /// them.
    fn bots<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let all: Vec<serde_json::Value> =
            self.registry.bots().iter().map(|b| b.to_json()).collect();
        to_py(py, &all)
    }

    /// The robots.txt tokens of the robots in `category` (`ai-training`,
    /// `search`, …) or run by `operator` (case-insensitively), as `trends
    /// --category` follows them. An unknown category is a `ValueError`.
    #[pyo3(signature = (category = None, operator = None))]
    fn agents(&self, category: Option<&str>, operator: Option<&str>) -> PyResult<Vec<String>> {
        if let Some(c) = category
            && !botscope_botid::Category::ALL.iter().any(|(n, _)| *n == c)
        {
            let names: Vec<&str> = botscope_botid::Category::ALL
                .iter()
                .map(|(n, _)| *n)
                .collect();
            return Err(PyValueError::new_err(format!(
                "unknown category `{c}` (expected one of {})",
                names.join(", ")
            )));
        }
        Ok(self.registry.agents(category, operator))
    }

    fn __len__(&self) -> usize {
        self.registry.bots().len()
    }
}

/// The evidence each address's DNS gives.
type Evidence = std::collections::HashMap<IpAddr, botscope_botid::FcrdnsEvidence>;

/// FCrDNS evidence for the questions, on a runtime of its own, and why the
/// DNS cache could not be saved, if it could not.
fn fcrdns(
    config: &EvidenceConfig,
    questions: &[(IpAddr, Vec<String>)],
) -> PyResult<(Evidence, Option<String>)> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::new_err(format!("cannot start the DNS runtime: {e}")))?;
    rt.block_on(async {
        let dns = DnsEvidence::new(config).await.map_err(error)?;
        let (evidence, problem) = dns.gather(questions).await;
        Ok((evidence, problem.map(|p| crate::convert::message(&p))))
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Registry>()
}
