//! An RSL licence server on loopback, written from the Open License
//! Protocol's text: `POST /token` (`grant_type=rsl`, `license`,
//! `resource`) issues `rsl_…` tokens; `POST /introspect` (`token`,
//! `resource`, RFC 7662 form encoding) answers `active`, `token_type`,
//! `resource`, `permitted` and `reason`; both want HTTP Basic client
//! credentials. It can also misbehave: trickle its answer a byte a
//! second, or answer a fixed body (a lie) to every introspection.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;

/// How the server answers introspections.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    /// As the protocol says.
    Honest,
    /// A byte a second, never finishing in time.
    Trickle,
    /// This body, status 200, whatever was asked.
    Lie(String),
}

/// A token it issued or was told of: active or not, the resource its
/// licence covers (an origin and a path prefix).
#[derive(Debug, Clone)]
struct Issued {
    active: bool,
    covers: String,
}

#[derive(Debug)]
struct State {
    tokens: HashMap<String, Issued>,
    mode: Mode,
    clients: Vec<(String, String)>,
    licenses: Vec<String>,
}

/// The server, stopped with the test (its threads end when their
/// connections do).
pub struct LicenceServer {
    /// Where it listens.
    pub addr: SocketAddr,
    state: Arc<Mutex<State>>,
    introspections: Arc<AtomicUsize>,
}

impl LicenceServer {
    /// On a free loopback port, for the client `client_id:client_secret`.
    pub fn start(client_id: &str, client_secret: &str) -> LicenceServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        let state = Arc::new(Mutex::new(State {
            tokens: HashMap::new(),
            mode: Mode::Honest,
            clients: vec![(client_id.to_owned(), client_secret.to_owned())],
            licenses: Vec::new(),
        }));
        let introspections = Arc::new(AtomicUsize::new(0));
        let (s, n) = (state.clone(), introspections.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { continue };
                let (s, n) = (s.clone(), n.clone());
                std::thread::spawn(move || {
                    let _ = serve(conn, &s, &n);
                });
            }
        });
        LicenceServer {
            addr,
            state,
            introspections,
        }
    }

    /// Its URL (a `<content server>` attribute).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Accepts another client's credentials too.
    pub fn add_client(&self, client_id: &str, client_secret: &str) {
        self.lock()
            .clients
            .push((client_id.to_owned(), client_secret.to_owned()));
    }

    /// Makes `token` active for what starts with `covers`.
    pub fn grant(&self, token: &str, covers: &str) {
        self.lock().tokens.insert(
            token.to_owned(),
            Issued {
                active: true,
                covers: covers.to_owned(),
            },
        );
    }

    /// Revokes `token`.
    pub fn revoke(&self, token: &str) {
        if let Some(t) = self.lock().tokens.get_mut(token) {
            t.active = false;
        }
    }

    /// From now on, answers introspections as `mode` says.
    pub fn set_mode(&self, mode: Mode) {
        self.lock().mode = mode;
    }

    /// Introspections asked so far.
    pub fn introspections(&self) -> usize {
        self.introspections.load(Ordering::SeqCst)
    }

    /// The `license` of every token request, in order.
    pub fn licenses_asked(&self) -> Vec<String> {
        self.lock().licenses.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn answer(conn: &mut TcpStream, status: u16, body: &str) -> std::io::Result<()> {
    write!(
        conn,
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

fn serve(mut conn: TcpStream, state: &Mutex<State>, n: &AtomicUsize) -> std::io::Result<()> {
    conn.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut r = BufReader::new(conn.try_clone()?);
    let mut line = String::new();
    r.read_line(&mut line)?;
    let mut length = 0usize;
    let mut auth = String::new();
    loop {
        let mut h = String::new();
        r.read_line(&mut h)?;
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            match k.to_ascii_lowercase().as_str() {
                "content-length" => length = v.trim().parse().unwrap_or(0),
                "authorization" => v.trim().clone_into(&mut auth),
                _ => {}
            }
        }
    }
    let mut body = vec![0; length.min(1 << 20)];
    r.read_exact(&mut body)?;
    let form: HashMap<String, String> = url::form_urlencoded::parse(&body).into_owned().collect();
    let path = line.split(' ').nth(1).unwrap_or("").to_owned();
    let mut st = state.lock().unwrap_or_else(|p| p.into_inner());
    let known = st.clients.iter().any(|(id, secret)| {
        auth == format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(format!("{id}:{secret}"))
        )
    });
    if !known {
        drop(st);
        return answer(
            &mut conn,
            401,
            r#"{"error": "invalid_client", "error_description": "Client authentication failed"}"#,
        );
    }
    match path.as_str() {
        "/introspect" => {
            n.fetch_add(1, Ordering::SeqCst);
            match st.mode.clone() {
                Mode::Trickle => {
                    drop(st);
                    for b in b"HTTP/1.1 200 OK\r\n".iter() {
                        conn.write_all(&[*b])?;
                        std::thread::sleep(Duration::from_secs(1));
                    }
                    Ok(())
                }
                Mode::Lie(body) => {
                    drop(st);
                    answer(&mut conn, 200, &body)
                }
                Mode::Honest => {
                    let (Some(token), Some(resource)) = (form.get("token"), form.get("resource"))
                    else {
                        drop(st);
                        return answer(
                            &mut conn,
                            400,
                            r#"{"error": "invalid_request", "error_description": "Missing required parameter"}"#,
                        );
                    };
                    let body = match st.tokens.get(token) {
                        Some(t) if t.active => {
                            let permitted = resource.starts_with(&t.covers);
                            serde_json::json!({
                                "active": true,
                                "token_type": "rsl",
                                "license": "<license><permits type=\"usage\">ai-train</permits></license>",
                                "resource": t.covers,
                                "permitted": permitted,
                                "reason": if permitted { None } else { Some("License does not cover this resource") },
                            })
                        }
                        _ => serde_json::json!({"active": false}),
                    };
                    drop(st);
                    answer(&mut conn, 200, &body.to_string())
                }
            }
        }
        "/token" => {
            if form.get("grant_type").map(String::as_str) != Some("rsl") {
                drop(st);
                return answer(
                    &mut conn,
                    400,
                    r#"{"error": "unsupported_grant_type", "error_description": "grant_type must be rsl"}"#,
                );
            }
            let (Some(license), Some(resource)) = (form.get("license"), form.get("resource"))
            else {
                drop(st);
                return answer(
                    &mut conn,
                    400,
                    r#"{"error": "invalid_request", "error_description": "The request is missing a required parameter."}"#,
                );
            };
            st.licenses.push(license.clone());
            let covers = url::Url::parse(resource)
                .map(|u| format!("{}/", u.origin().ascii_serialization()))
                .unwrap_or_default();
            let token = format!("rsl_{}", st.tokens.len() + 1);
            st.tokens.insert(
                token.clone(),
                Issued {
                    active: true,
                    covers,
                },
            );
            drop(st);
            answer(
                &mut conn,
                200,
                &serde_json::json!({"access_token": token, "token_type": "rsl", "expires_in": 3600})
                    .to_string(),
            )
        }
        _ => {
            drop(st);
            answer(&mut conn, 404, r#"{"error": "not_found"}"#)
        }
    }
}
