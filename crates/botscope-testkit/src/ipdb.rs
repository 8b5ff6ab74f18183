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

/// A static HTTP/1.1 server on 127.0.0.1: path → body, 404 otherwise;
/// counts the requests. Stops with the process (tests are short).
pub struct FileServer {
    addr: SocketAddr,
    hits: Arc<AtomicU64>,
}

impl FileServer {
    /// Serves `files` (paths start with `/`).
    pub fn start(files: HashMap<String, Vec<u8>>) -> FileServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let hits = Arc::new(AtomicU64::new(0));
        let counter = hits.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                counter.fetch_add(1, Ordering::SeqCst);
                let mut r = BufReader::new(conn.try_clone().unwrap());
                let mut line = String::new();
                if r.read_line(&mut line).is_err() {
                    continue;
                }
                let path = line.split_whitespace().nth(1).unwrap_or("/").to_owned();
                let mut h = String::new();
                while r.read_line(&mut h).is_ok_and(|n| n > 2) {
                    h.clear();
                }
                let mut w = conn;
                let (status, body) = match files.get(&path) {
                    Some(b) => ("200 OK", b.as_slice()),
                    None => ("404 Not Found", b"not found".as_slice()),
                };
                let _ = write!(
                    w,
                    "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = w.write_all(body);
            }
        });
        FileServer { addr, hits }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Requests served so far.
    pub fn hits(&self) -> u64 {
        self.hits.load(Ordering::SeqCst)
    }
}
