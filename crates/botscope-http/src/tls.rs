//! Which certificate authorities HTTPS trusts: the system's store (and
//! `SSL_CERT_FILE` / `SSL_CERT_DIR` when set), as curl, pip and cargo do,
//! or the Mozilla roots built into botscope, plus certificates a user
//! names.

use std::sync::Arc;

use rustls_pki_types::CertificateDer;

use crate::Error;

/// The certificate authorities a client starts from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Roots {
    /// The system's store: the files named by `SSL_CERT_FILE` and
    /// `SSL_CERT_DIR` when either is set (only them), else the platform's
    /// (on Linux the distribution's bundle, found as OpenSSL finds it). A
    /// machine with no store at all gets the bundled roots.
    #[default]
    System,
    /// The Mozilla roots built into botscope (webpki-roots): the same
    /// answer on every machine, whatever its store holds.
    Bundled,
}

impl Roots {
    /// `system` or `bundled`.
    pub fn parse(s: &str) -> Option<Roots> {
        match s {
            "system" => Some(Roots::System),
            "bundled" => Some(Roots::Bundled),
            _ => None,
        }
    }

    /// `system` or `bundled`.
    pub fn name(self) -> &'static str {
        match self {
            Roots::System => "system",
            Roots::Bundled => "bundled",
        }
    }
}

/// What HTTPS trusts: the roots and certificates added to them.
#[derive(Debug, Clone, Default)]
pub struct Trust {
    /// Where the roots come from.
    pub roots: Roots,
    /// Certificates trusted besides the roots (`--ca-file`).
    pub extra: Vec<CertificateDer<'static>>,
}

impl Trust {
    /// The system's store and nothing more.
    pub fn system() -> Trust {
        Trust::default()
    }

    /// A TLS client over these roots, speaking HTTP/1.1.
    pub fn connector(&self) -> Result<tokio_rustls::TlsConnector, Error> {
        Ok(tokio_rustls::TlsConnector::from(Arc::new(
            self.client_config()?,
        )))
    }

    /// The TLS client's settings over these roots, offering HTTP/1.1.
    pub fn client_config(&self) -> Result<rustls::ClientConfig, Error> {
        let mut roots = match self.roots {
            Roots::Bundled => {
                let mut r = rustls::RootCertStore::empty();
                r.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
                r
            }
            Roots::System => system_roots()?,
        };
        for c in &self.extra {
            roots
                .add(c.clone())
                .map_err(|e| Error::Tls(format!("a certificate to trust is not usable: {e}")))?;
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| Error::Tls(e.to_string()))?
            .with_root_certificates(roots)
            .with_no_client_auth();
        tls.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(tls)
    }
}

/// The environment variables that replace the platform's store.
const CERT_VARS: [&str; 2] = ["SSL_CERT_FILE", "SSL_CERT_DIR"];

/// The system's roots, read once per process (the bundle is a few hundred
/// KB of PEM; a server that fetches per request does not parse it per
/// request).
fn system_roots() -> Result<rustls::RootCertStore, Error> {
    static ROOTS: std::sync::OnceLock<Result<rustls::RootCertStore, String>> =
        std::sync::OnceLock::new();
    ROOTS
        .get_or_init(load_system_roots)
        .clone()
        .map_err(Error::Tls)
}

/// Reads the system's roots. Certificates it cannot parse are skipped (a
/// bundle often carries a few); a store set by `SSL_CERT_FILE` or
/// `SSL_CERT_DIR` that gives none is an error naming them, since the user
/// chose it.
fn load_system_roots() -> Result<rustls::RootCertStore, String> {
    let mut store = rustls::RootCertStore::empty();
    let found = rustls_native_certs::load_native_certs();
    let (added, _unparsable) = store.add_parsable_certificates(found.certs);
    if added > 0 {
        return Ok(store);
    }
    let set: Vec<String> = CERT_VARS
        .iter()
        .filter_map(|v| std::env::var_os(v).map(|p| format!("{v}={}", p.to_string_lossy())))
        .collect();
    if set.is_empty() {
        store.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        return Ok(store);
    }
    let why = found
        .errors
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ");
    Err(format!(
        "{} gives no certificate to trust{}",
        set.join(" and "),
        if why.is_empty() {
            String::new()
        } else {
            format!(" ({why})")
        }
    ))
}

/// The certificates of a PEM file (to trust besides the roots).
pub fn certificates(pem: &[u8]) -> Result<Vec<CertificateDer<'static>>, Error> {
    use rustls_pki_types::pem::PemObject;
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| Error::Tls(format!("not a PEM certificate: {e}")))?;
    if certs.is_empty() {
        return Err(Error::Tls("no PEM certificate in the file".into()));
    }
    Ok(certs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_by_name() {
        for r in [Roots::System, Roots::Bundled] {
            assert_eq!(Roots::parse(r.name()), Some(r));
        }
        assert_eq!(Roots::parse("webpki"), None);
    }

    #[test]
    fn certificates_refuse_what_is_not_pem() {
        assert!(certificates(b"").is_err());
        assert!(certificates(b"hello").is_err());
        let broken = b"-----BEGIN CERTIFICATE-----\n!!!\n-----END CERTIFICATE-----\n";
        assert!(certificates(broken).is_err());
    }

    #[test]
    fn bundled_roots_make_a_client() {
        let t = Trust {
            roots: Roots::Bundled,
            extra: Vec::new(),
        };
        assert!(t.connector().is_ok());
    }
}
