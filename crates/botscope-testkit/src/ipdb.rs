//! Small IP-owner databases built by the tests (an ASN CSV, MaxMind DB
//! files, an npm-style package of them) and a static HTTP server on
//! loopback to fetch them from.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use maxminddb_writer::paths::IpAddrWithMask;

/// A MaxMind DB file in ip-location-db's flat city layout: each network
/// (`"203.0.113.0/24"`) with its country code, city and coordinates.
pub fn city_mmdb(ipv6: bool, rows: &[(&str, &str, &str, f64, f64)]) -> Vec<u8> {
    let mut db = maxminddb_writer::Database::default();
    db.metadata.ip_version = if ipv6 {
        maxminddb_writer::metadata::IpVersion::V6
    } else {
        maxminddb_writer::metadata::IpVersion::V4
    };
    db.metadata.database_type = "city test".into();
    db.metadata.binary_format_major_version = 2;
    db.metadata.build_epoch = 1_780_000_000;
    for (net, country, city, lat, lon) in rows {
        let mut rec = HashMap::new();
        rec.insert("country_code", serde_json::Value::from(*country));
        rec.insert("city", serde_json::Value::from(*city));
        rec.insert("latitude", serde_json::Value::from(*lat));
        rec.insert("longitude", serde_json::Value::from(*lon));
        let r = db.insert_value(rec).unwrap();
        db.insert_node(net.parse::<IpAddrWithMask>().unwrap(), r);
    }
    db.write_to(Vec::new()).unwrap()
}

/// An npm package tarball (`package/NAME` members, gzip'd tar).
pub fn npm_tgz(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut ar = tar::Builder::new(Vec::new());
    for (name, data) in files {
        let mut h = tar::Header::new_ustar();
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        h.set_cksum();
        ar.append_data(&mut h, format!("package/{name}"), *data)
            .unwrap();
    }
    let tar = ar.into_inner().unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&tar).unwrap();
    gz.finish().unwrap()
}

/// A certificate authority of the tests' own and a server configuration
/// whose certificate, signed by it, names `127.0.0.1` and `localhost`: what
/// an inspecting proxy or a private network presents, trusted only by a
/// client told to.
pub struct TestCa {
    /// The authority's certificate (PEM), for `SSL_CERT_FILE` or `--ca-file`.
    pub pem: String,
    /// The server's certificate chain (PEM: its own, then the authority's),
    /// for a real server started by a test (uvicorn's `--ssl-certfile`).
    pub server_chain_pem: String,
    /// The server's private key (PKCS#8 PEM), for the same.
    pub server_key_pem: String,
    server: Arc<rustls::ServerConfig>,
}

impl TestCa {
    /// A new authority and server certificate.
    pub fn new() -> TestCa {
        TestCa::make(false)
    }

    /// An authority whose server certificate is itself marked as a CA
    /// (basic constraints `CA:TRUE`): what a misconfigured server presents,
    /// refused by a client that checks.
    pub fn with_ca_as_server() -> TestCa {
        TestCa::make(true)
    }

    fn make(leaf_is_ca: bool) -> TestCa {
        let ca_key = rcgen::KeyPair::generate().unwrap();
        let mut ca = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca.distinguished_name
            .push(rcgen::DnType::CommonName, "botscope test proxy CA");
        let ca_cert = ca.self_signed(&ca_key).unwrap();
        let issuer = rcgen::Issuer::new(ca, ca_key);
        let leaf_key = rcgen::KeyPair::generate().unwrap();
        let mut leaf =
            rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
                .unwrap();
        if leaf_is_ca {
            leaf.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        }
        let leaf = leaf.signed_by(&leaf_key, &issuer).unwrap();
        let server_chain_pem = format!("{}{}", leaf.pem(), ca_cert.pem());
        let server_key_pem = leaf_key.serialize_pem();
        let key = rustls::pki_types::PrivateKeyDer::try_from(leaf_key.serialize_der()).unwrap();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let server = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![leaf.der().clone(), ca_cert.der().clone()], key)
            .unwrap();
        TestCa {
            pem: ca_cert.pem(),
            server_chain_pem,
            server_key_pem,
            server: Arc::new(server),
        }
    }
}

impl Default for TestCa {
    fn default() -> Self {
        TestCa::new()
    }
}

/// A response a [`FileServer`] gives for a path: its status line's code
/// and reason, its headers and body.
#[derive(Debug, Clone)]
pub struct Canned {
    /// `200 OK`, `302 Found`, …
    pub status: String,
    /// Headers besides `Content-Length` and `Connection`.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl Canned {
    /// `200 OK` with `body` and `headers`.
    pub fn ok(headers: &[(&str, &str)], body: &[u8]) -> Canned {
        Canned::status("200 OK", headers, body)
    }

    /// A response with `status` (`302 Found`).
    pub fn status(status: &str, headers: &[(&str, &str)], body: &[u8]) -> Canned {
        Canned {
            status: status.to_owned(),
            headers: headers
                .iter()
                .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
                .collect(),
            body: body.to_vec(),
        }
    }
}

/// A static HTTP/1.1 server on 127.0.0.1: path → body, 404 otherwise;
/// counts the requests; plain or over TLS. Stops with the process (tests
/// are short).
pub struct FileServer {
    addr: SocketAddr,
    hits: Arc<AtomicU64>,
    tls: bool,
    files: Arc<std::sync::RwLock<HashMap<String, Canned>>>,
}

impl FileServer {
    /// Serves `files` (paths start with `/`) over plain HTTP.
    pub fn start(files: HashMap<String, Vec<u8>>) -> FileServer {
        FileServer::serve(plain(files), None)
    }

    /// Serves `files` over HTTPS with `ca`'s server certificate.
    pub fn start_tls(files: HashMap<String, Vec<u8>>, ca: &TestCa) -> FileServer {
        FileServer::serve(plain(files), Some(ca.server.clone()))
    }

    /// Serves canned responses (status, headers, body) over HTTPS with
    /// `ca`'s server certificate.
    pub fn start_tls_canned(responses: HashMap<String, Canned>, ca: &TestCa) -> FileServer {
        FileServer::serve(responses, Some(ca.server.clone()))
    }

    fn serve(files: HashMap<String, Canned>, tls: Option<Arc<rustls::ServerConfig>>) -> FileServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let hits = Arc::new(AtomicU64::new(0));
        let counter = hits.clone();
        let is_tls = tls.is_some();
        let files = Arc::new(std::sync::RwLock::new(files));
        let shared = files.clone();
        std::thread::spawn(move || {
            let files = shared;
            for conn in listener.incoming().flatten() {
                counter.fetch_add(1, Ordering::SeqCst);
                let _ = conn.set_read_timeout(Some(std::time::Duration::from_secs(10)));
                match &tls {
                    Some(cfg) => {
                        let Ok(server) = rustls::ServerConnection::new(cfg.clone()) else {
                            continue;
                        };
                        let mut stream = rustls::StreamOwned::new(server, conn);
                        answer(&mut stream, &files);
                        stream.conn.send_close_notify();
                        let _ = stream.flush();
                    }
                    None => {
                        let mut conn = conn;
                        answer(&mut conn, &files);
                    }
                }
            }
        });
        FileServer {
            addr,
            hits,
            tls: is_tls,
            files,
        }
    }

    /// Serves `response` at `path` from now on (for answers that name the
    /// server's own address).
    pub fn set(&self, path: &str, response: Canned) {
        if let Ok(mut f) = self.files.write() {
            f.insert(path.to_owned(), response);
        }
    }

    /// `http://127.0.0.1:PORT` (`https://` over TLS).
    pub fn url(&self) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://{}", self.addr)
    }

    /// Requests served so far (TLS connections the client gave up on
    /// included).
    pub fn hits(&self) -> u64 {
        self.hits.load(Ordering::SeqCst)
    }
}

/// Plain files as `200 OK` responses.
fn plain(files: HashMap<String, Vec<u8>>) -> HashMap<String, Canned> {
    files
        .into_iter()
        .map(|(p, body)| (p, Canned::ok(&[], &body)))
        .collect()
}

/// Reads one request's head from `conn` and answers it from `files`.
fn answer<S: std::io::Read + Write>(
    conn: &mut S,
    files: &std::sync::RwLock<HashMap<String, Canned>>,
) {
    let mut r = BufReader::new(&mut *conn);
    let mut line = String::new();
    if r.read_line(&mut line).is_err() {
        return;
    }
    let path = line.split_whitespace().nth(1).unwrap_or("/").to_owned();
    let mut h = String::new();
    while r.read_line(&mut h).is_ok_and(|n| n > 2) {
        h.clear();
    }
    drop(r);
    let missing = Canned::status("404 Not Found", &[], b"not found");
    let c = files
        .read()
        .ok()
        .and_then(|f| f.get(&path).cloned())
        .unwrap_or(missing);
    let mut head = format!("HTTP/1.1 {}\r\n", c.status);
    for (n, v) in &c.headers {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    let _ = write!(
        conn,
        "{head}Content-Length: {}\r\nConnection: close\r\n\r\n",
        c.body.len()
    );
    let _ = conn.write_all(&c.body);
    let _ = conn.flush();
}
