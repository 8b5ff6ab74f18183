//! The honeypot's server: every listener answers every site by `Host`,
//! and every request is logged in Debian's vhost_combined format (Apache's
//! combined with `%v:%p` in front), one line written per request.

use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Body;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderValue, header};
use axum::response::Response;

use crate::design::Design;

/// What stops the honeypot.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be written.
    #[error("{0}: {1}")]
    File(String, std::io::Error),
    /// An address could not be listened on.
    #[error("cannot listen on {0}: {1}")]
    Bind(SocketAddr, std::io::Error),
    /// The log's sites file describes other sites.
    #[error(
        "{0} describes other sites: this log holds another honeypot's requests (give a new --log, or the same --sites, --domain and --crawl-delay)"
    )]
    OtherDesign(String),
    /// A file in the way of the sites file.
    #[error("{0} is in the way: it is not a honeypot's sites file (give another --log)")]
    NotADesign(String),
    /// Serving failed.
    #[error("serving: {0}")]
    Serve(std::io::Error),
}

/// Where signed requests' fields are written beside the log:
/// `LOG.signatures.jsonl`, one JSON object per signed request (the log
/// line's format has no room for them), for the report to verify.
pub fn signatures_path(log: &Path) -> PathBuf {
    let mut s = log.as_os_str().to_owned();
    s.push(".signatures.jsonl");
    PathBuf::from(s)
}

/// Where the design is written beside the log: `LOG.sites.json`.
pub fn design_path(log: &Path) -> PathBuf {
    let mut s = log.as_os_str().to_owned();
    s.push(".sites.json");
    PathBuf::from(s)
}

struct Shared {
    design: Design,
    log: Mutex<std::fs::File>,
    /// The signed requests' fields (opened at the first one).
    signatures: Mutex<Option<std::fs::File>>,
    signatures_path: PathBuf,
}

#[derive(Clone)]
struct Listener {
    shared: Arc<Shared>,
    port: u16,
}

/// Escapes a quoted log field as Apache does: `"` and `\` with a
/// backslash, control and non-ASCII bytes as `\xHH`.
fn escape(out: &mut String, bytes: &[u8]) {
    for &b in bytes {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
}

/// One vhost_combined line: the listener's port, the client, the `Host`,
/// the request line, (status, bytes sent), Referer and User-Agent.
fn log_line(
    port: u16,
    peer: SocketAddr,
    host: &str,
    request: &str,
    (status, bytes): (u16, usize),
    referer: Option<&[u8]>,
    ua: Option<&[u8]>,
) -> String {
    let time = jiff::Timestamp::now().strftime("%d/%b/%Y:%H:%M:%S +0000");
    let mut line = String::with_capacity(256);
    // %v is the server's name for the site: the Host's name, or `-`.
    let vhost: String = crate::design::host_name(host)
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
        .take(200)
        .collect();
    line.push_str(if vhost.is_empty() { "-" } else { &vhost });
    line.push_str(&format!(
        ":{} {} - - [{time}] \"",
        port,
        peer.ip().to_canonical()
    ));
    escape(&mut line, request.as_bytes());
    line.push_str(&format!("\" {status} {bytes} \""));
    match referer {
        Some(r) => escape(&mut line, r),
        None => line.push('-'),
    }
    line.push_str("\" \"");
    match ua {
        Some(u) => escape(&mut line, u),
        None => line.push('-'),
    }
    line.push_str("\"\n");
    line
}

async fn handle(
    State(l): State<Listener>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    req: Request,
) -> Response {
    let headers = req.headers();
    let host = headers
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .or_else(|| req.uri().authority().map(|a| a.as_str()))
        .unwrap_or("")
        .to_owned();
    let ua = headers
        .get(header::USER_AGENT)
        .map(|v| v.as_bytes().to_vec());
    let referer = headers.get(header::REFERER).map(|v| v.as_bytes().to_vec());
    let target = req
        .uri()
        .path_and_query()
        .map_or_else(|| "/".to_owned(), |p| p.as_str().to_owned());
    let ua_text = ua.as_deref().map(String::from_utf8_lossy);
    let head = req.method() == axum::http::Method::HEAD;
    let answer = if req.method() == axum::http::Method::GET || head {
        l.shared.design.answer(&host, &target, ua_text.as_deref())
    } else {
        crate::design::Answer {
            status: 405,
            content_type: "text/plain; charset=utf-8",
            location: None,
            body: b"GET only\n".to_vec(),
        }
    };
    let request = format!("{} {} {:?}", req.method(), target, req.version());
    let sent = if head { 0 } else { answer.body.len() };
    let line = log_line(
        l.port,
        peer,
        &host,
        &request,
        (answer.status, sent),
        referer.as_deref(),
        ua.as_deref(),
    );
    {
        let mut f = l.shared.log.lock().unwrap_or_else(|e| e.into_inner());
        if let Err(e) = f.write_all(line.as_bytes()) {
            tracing::error!("cannot write the log: {e}");
        }
    }
    if headers.contains_key("signature-input") || headers.contains_key("signature") {
        let field = |name: &str| {
            headers.get(name).map(|v| {
                String::from_utf8_lossy(v.as_bytes())
                    .chars()
                    .take(8192)
                    .collect::<String>()
            })
        };
        let record = crate::report::SignedRequest {
            time: jiff::Timestamp::now().as_second(),
            ip: peer.ip().to_canonical(),
            user_agent: ua_text.as_deref().map(str::to_owned),
            method: req.method().as_str().to_owned(),
            host: host.chars().take(300).collect(),
            target: target.chars().take(8192).collect(),
            signature: field("signature"),
            signature_input: field("signature-input"),
            signature_agent: field("signature-agent"),
        };
        if let Ok(mut json) = serde_json::to_string(&record) {
            json.push('\n');
            let mut f = l
                .shared
                .signatures
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            if f.is_none() {
                *f = botscope_os::open_append(&l.shared.signatures_path)
                    .map_err(|e| tracing::error!("cannot open the signatures file: {e}"))
                    .ok();
            }
            if let Some(file) = f.as_mut()
                && let Err(e) = file.write_all(json.as_bytes())
            {
                tracing::error!("cannot write the signatures file: {e}");
            }
        }
    }
    let mut r = Response::new(if head {
        Body::empty()
    } else {
        Body::from(answer.body)
    });
    *r.status_mut() =
        axum::http::StatusCode::from_u16(answer.status).unwrap_or(axum::http::StatusCode::OK);
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(answer.content_type),
    );
    if let Some(loc) = answer.location.and_then(|v| HeaderValue::from_str(&v).ok()) {
        r.headers_mut().insert(header::LOCATION, loc);
    }
    r
}

/// A bound honeypot.
pub struct Honeypot {
    shared: Arc<Shared>,
    listeners: Vec<tokio::net::TcpListener>,
}

impl Honeypot {
    /// Binds every address, opens the log (appending) and writes the
    /// design beside it (`LOG.sites.json`), so that the report judges
    /// from the same sites.
    pub async fn bind(
        design: Design,
        listen: &[SocketAddr],
        log: &Path,
    ) -> Result<Honeypot, Error> {
        let shown = |p: &Path| botscope_text::field(&p.display().to_string()).into_owned();
        // A log that already holds another design's requests would be
        // judged against the wrong sites: refused before anything is
        // written.
        let dp = design_path(log);
        let read = std::fs::File::open(&dp).and_then(|f| {
            let mut bytes = Vec::new();
            std::io::Read::read_to_end(&mut std::io::Read::take(f, 16 << 20), &mut bytes)
                .map(|_| bytes)
        });
        match read {
            Ok(bytes) => match serde_json::from_slice::<Design>(&bytes) {
                Ok(old) if old == design => {}
                Ok(_) => return Err(Error::OtherDesign(shown(&dp))),
                Err(_) => return Err(Error::NotADesign(shown(&dp))),
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::File(shown(&dp), e)),
        }
        let mut listeners = Vec::new();
        for a in listen {
            listeners.push(
                tokio::net::TcpListener::bind(a)
                    .await
                    .map_err(|e| Error::Bind(*a, e))?,
            );
        }
        let file = botscope_os::open_append(log).map_err(|e| Error::File(shown(log), e))?;
        let json = serde_json::to_vec_pretty(&design).unwrap_or_default();
        botscope_os::write_atomic(&dp, &json).map_err(|e| Error::File(shown(&dp), e.into_io()))?;
        Ok(Honeypot {
            shared: Arc::new(Shared {
                design,
                log: Mutex::new(file),
                signatures: Mutex::new(None),
                signatures_path: signatures_path(log),
            }),
            listeners,
        })
    }

    /// The bound addresses.
    pub fn local_addrs(&self) -> Vec<SocketAddr> {
        self.listeners
            .iter()
            .filter_map(|l| l.local_addr().ok())
            .collect()
    }

    /// The sites.
    pub fn design(&self) -> &Design {
        &self.shared.design
    }

    /// Serves until `shutdown` completes, then finishes the requests in
    /// flight.
    pub async fn run(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), Error> {
        let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
        let mut tasks = Vec::new();
        for listener in self.listeners {
            let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
            let app = Router::new().fallback(handle).with_state(Listener {
                shared: self.shared.clone(),
                port,
            });
            let mut rx = stop_rx.clone();
            tasks.push(tokio::spawn(async move {
                axum::serve(
                    listener,
                    app.into_make_service_with_connect_info::<SocketAddr>(),
                )
                .with_graceful_shutdown(async move {
                    let _ = rx.wait_for(|s| *s).await;
                })
                .await
            }));
        }
        shutdown.await;
        let _ = stop_tx.send(true);
        for t in tasks {
            match t.await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => return Err(Error::Serve(e)),
                Err(e) => return Err(Error::Serve(std::io::Error::other(e))),
            }
        }
        let f = self.shared.log.lock().unwrap_or_else(|e| e.into_inner());
        f.sync_all().map_err(|e| Error::File("the log".into(), e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_fields_are_escaped() {
        let line = log_line(
            8080,
            "[::ffff:127.0.0.1]:5000".parse().expect("addr"),
            "S1.hp.test:8080",
            "GET /a\"b HTTP/1.1",
            (200, 12),
            None,
            Some(b"Bot \"x\"\n\\ \xff"),
        );
        assert!(
            line.starts_with("s1.hp.test:8080 127.0.0.1 - - ["),
            "{line}"
        );
        assert!(
            line.ends_with(
                "] \"GET /a\\\"b HTTP/1.1\" 200 12 \"-\" \"Bot \\\"x\\\"\\x0a\\\\ \\xff\"\n"
            ),
            "{line}"
        );
        let f = botscope_accesslog::LogFormat::apache(botscope_accesslog::VHOST_COMBINED)
            .expect("format");
        let r = f.parse_line(line.trim_end().as_bytes()).expect("parsed");
        assert_eq!(r.user_agent.as_deref(), Some("Bot \"x\"\n\\ \u{fffd}"));
        assert_eq!(r.path, "/a\"b");
    }

    /// Found: `honeypot serve` wrote `LOG.sites.json.tmp` through a
    /// planted symlink (`std::fs::write` on a predictable name).
    #[cfg(unix)]
    #[test]
    fn the_design_is_never_written_through_a_planted_link() {
        let d = tempfile::tempdir().expect("tmp");
        let secret = d.path().join("secret");
        std::fs::write(&secret, "keep\n").expect("w");
        let log = d.path().join("hp.log");
        std::os::unix::fs::symlink(&secret, d.path().join("hp.log.sites.json.tmp")).expect("l");
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("rt");
        let design = Design::new(8, "hp.test", 2).expect("design");
        let listen = ["127.0.0.1:0".parse().expect("addr")];
        rt.block_on(Honeypot::bind(design, &listen, &log))
            .expect("bind");
        assert_eq!(std::fs::read_to_string(&secret).expect("read"), "keep\n");
        assert!(
            std::fs::read_to_string(design_path(&log))
                .expect("design")
                .contains("hp.test")
        );
    }
}
