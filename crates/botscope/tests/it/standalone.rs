//! `botscope gate --upstream`: the gate on its own in front of a real
//! application server (uvicorn, from the test venv), and behind Apache
//! (Debian's apache2 with mod_proxy) as docs/gate.md deploys it.

#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use botscope_testkit::http::{Res, read_response};

const GOOGLEBOT: &str = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
const BROWSER: &str = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Safari/537.36";

/// A child process stopped and reaped when dropped: asked to stop
/// (SIGTERM: Apache then stops its workers, which a SIGKILL of the parent
/// would leave running), killed when it has not within 5 s.
pub(crate) struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.0.id().to_string()])
            .status();
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(5) {
            if let Ok(Some(_)) = self.0.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn wait_listening(addr: SocketAddr, child: &mut Child, what: &str) {
    let t = Instant::now();
    while TcpStream::connect(addr).is_err() {
        if let Ok(Some(s)) = child.try_wait() {
            panic!("{what} exited: {s}");
        }
        assert!(t.elapsed() < Duration::from_secs(30), "{what} listens");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// tests/py/app.py under uvicorn on a free loopback port (with TLS when a
/// certificate authority is given).
fn app(tls: Option<(&botscope_testkit::ipdb::TestCa, &Path)>) -> (Proc, SocketAddr) {
    let port = botscope_testkit::free_port();
    let mut cmd = Command::new(crate::python());
    cmd.args(["-m", "uvicorn", "app:app", "--app-dir"])
        .arg(botscope_testkit::root().join("crates/botscope/tests/py"))
        .args(["--host", "127.0.0.1", "--port", &port.to_string()])
        .args([
            "--ws",
            "wsproto",
            "--no-access-log",
            "--log-level",
            "warning",
        ])
        .args(["--no-proxy-headers", "--timeout-keep-alive", "30"]);
    if let Some((ca, dir)) = tls {
        let (cert, key) = (dir.join("app.pem"), dir.join("app.key"));
        std::fs::write(&cert, &ca.server_chain_pem).unwrap();
        std::fs::write(&key, &ca.server_key_pem).unwrap();
        cmd.arg("--ssl-certfile")
            .arg(cert)
            .arg("--ssl-keyfile")
            .arg(key);
    }
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("uvicorn starts (the test command in README installs it in target/pyenv)");
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    wait_listening(addr, &mut child, "uvicorn");
    (Proc(child), addr)
}

/// The gate's robots.txt and the balanced policy in `dir`.
/// A site under `dir` whose robots.txt allows everything, with `policy`
/// as its policy: the robots directory and the policy's path.
pub(crate) fn open_site(dir: &Path, policy: &str) -> (PathBuf, PathBuf) {
    let robots = dir.join("robots");
    std::fs::create_dir_all(&robots).unwrap();
    std::fs::write(robots.join("default.txt"), "User-agent: *\nDisallow:\n").unwrap();
    let path = dir.join("policy.yaml");
    std::fs::write(&path, policy).unwrap();
    (robots, path)
}

fn site(dir: &Path) -> (PathBuf, PathBuf) {
    let robots = dir.join("robots");
    std::fs::create_dir_all(&robots).unwrap();
    std::fs::write(
        robots.join("default.txt"),
        "User-agent: *\nDisallow: /private/\n# the gate's\n",
    )
    .unwrap();
    let policy = dir.join("policy.yaml");
    let o = crate::botscope(
        &[
            "policy",
            "init",
            "--preset",
            "balanced",
            "--out",
            crate::arg(&policy),
        ],
        b"",
    );
    assert!(o.status.success(), "{}", crate::stderr(&o));
    (robots, policy)
}

/// `botscope gate --upstream URL` with `more` flags, once it listens; its
/// standard error is read on (never blocks it).
fn gate(dir: &Path, upstream: &str, more: &[&str], env: &[(&str, &str)]) -> (Proc, SocketAddr) {
    gate_with(dir, upstream, botscope_testkit::free_port(), more, env)
}

/// The same on `port`.
fn gate_at(dir: &Path, upstream: &str, port: u16, more: &[&str]) -> (Proc, SocketAddr) {
    gate_with(dir, upstream, port, more, &[])
}

fn gate_with(
    dir: &Path,
    upstream: &str,
    port: u16,
    more: &[&str],
    env: &[(&str, &str)],
) -> (Proc, SocketAddr) {
    std::fs::create_dir_all(dir).unwrap();
    let (robots, policy) = site(dir);
    spawn_gate(&robots, &policy, dir, upstream, port, more, env)
}

/// `botscope gate --upstream URL` with these robots and policy.
pub(crate) fn spawn_gate(
    robots: &Path,
    policy: &Path,
    dir: &Path,
    upstream: &str,
    port: u16,
    more: &[&str],
    env: &[(&str, &str)],
) -> (Proc, SocketAddr) {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_botscope"));
    cmd.args(["gate", "--upstream", upstream, "--no-signatures"])
        .args(["--listen", &addr.to_string()])
        .arg("--robots-dir")
        .arg(robots)
        .arg("--policy")
        .arg(policy)
        .args(more)
        .env("HOME", dir)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_DATA_HOME")
        .env_remove("XDG_CACHE_HOME")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        assert!(
            err.read_line(&mut line).unwrap() > 0,
            "the gate ended: {seen}"
        );
        seen.push_str(&line);
        if line.contains("in front of") {
            break;
        }
    }
    std::thread::spawn(move || {
        let mut sink = Vec::new();
        let _ = err.read_to_end(&mut sink);
    });
    wait_listening(addr, &mut child, "the gate");
    (Proc(child), addr)
}

/// One request from the loopback address `from`, with more header lines
/// and a body.
pub(crate) fn ask(from: [u8; 4], to: SocketAddr, head: &str, more: &str, body: &[u8]) -> Res {
    let mut s = botscope_testkit::connect_from(from, to);
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let length = if body.is_empty() {
        String::new()
    } else {
        format!("Content-Length: {}\r\n", body.len())
    };
    write!(
        s,
        "{head} HTTP/1.1\r\nHost: shop.example\r\n{more}{length}Connection: close\r\n\r\n"
    )
    .unwrap();
    // A server may answer (413) before it has read the whole body, and
    // stop reading: the answer is what counts.
    let _ = s.write_all(body);
    read_response(s, head)
}

fn page(to: SocketAddr, path: &str, ua: &str, more: &str) -> Res {
    ask(
        [127, 0, 0, 1],
        to,
        &format!("GET {path}"),
        &format!("User-Agent: {ua}\r\nAccept: text/html\r\n{more}"),
        b"",
    )
}

fn pattern(n: usize, step: usize) -> Vec<u8> {
    (0..n).map(|i| ((i * step) % 251) as u8).collect()
}

/// A WebSocket handshake and one masked text frame, echoed.
fn websocket_echo(to: SocketAddr, path: &str) -> String {
    let mut s = TcpStream::connect(to).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: shop.example\r\nUser-Agent: {BROWSER}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )
    .unwrap();
    let mut head = Vec::new();
    let mut b = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        s.read_exact(&mut b).unwrap();
        head.push(b[0]);
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    assert!(head.starts_with("HTTP/1.1 101"), "{head}");
    assert!(
        head.contains("s3pPLMBiTxaQ9kYGzzhZRbK+xOo="),
        "the application's accept key: {head}"
    );
    let text = b"hello through the gate";
    let mask = [1u8, 2, 3, 4];
    let mut frame = vec![0x81, 0x80 | text.len() as u8];
    frame.extend_from_slice(&mask);
    frame.extend(text.iter().enumerate().map(|(i, c)| c ^ mask[i % 4]));
    s.write_all(&frame).unwrap();
    let mut hdr = [0u8; 2];
    s.read_exact(&mut hdr).unwrap();
    assert_eq!(hdr[0], 0x81, "a text frame");
    let mut payload = vec![0u8; usize::from(hdr[1] & 0x7f)];
    s.read_exact(&mut payload).unwrap();
    String::from_utf8(payload).unwrap()
}

#[test]
fn the_gate_stands_in_front_of_an_application() {
    let dir = crate::scratch("standalone");
    let (application, app_addr) = app(None);
    // The fake Googlebot's address names another domain.
    let dns = botscope_testkit::Dnsmasq::start(&[
        "--local=/127.in-addr.arpa/",
        "--ptr-record=1.0.0.127.in-addr.arpa,crawl.fake.example",
    ]);
    // The guide's command, with a smaller body limit.
    let dns_addr = dns.addr().to_string();
    let flags = guide_flags("## On its own in front of an application", &dir);
    let mut more: Vec<&str> = flags.iter().map(String::as_str).collect();
    more.extend([
        "--max-request-body",
        "2MiB",
        "--upstream-timeout",
        "5s",
        "--dns",
        &dns_addr,
    ]);
    let (_gate, at) = gate(&dir, &format!("http://{app_addr}"), &more, &[]);
    // A page, as the application saw it: the client's address, not the
    // one it forged; the gate's word on it, not the client's.
    let r = page(
        at,
        "/shop?item=1",
        BROWSER,
        "X-Forwarded-For: 66.249.66.1\r\nX-Bot-Category: all-ok-bots\r\nX-Real-IP: 66.249.66.1\r\n",
    );
    assert_eq!(r.status, 200, "{r:?}");
    let seen = r.json();
    assert_eq!(seen["path"], "/shop");
    assert_eq!(seen["query"], "item=1");
    let h = &seen["headers"];
    assert_eq!(h["x-forwarded-for"], "127.0.0.1", "{h}");
    assert_eq!(h["x-real-ip"], "127.0.0.1", "{h}");
    assert_eq!(h["x-forwarded-proto"], "http");
    assert_eq!(h["x-forwarded-host"], "shop.example");
    assert_eq!(h["host"], "shop.example", "the site's own name");
    assert_eq!(h["x-bot-category"], "none", "a browser: {h}");
    assert_eq!(h["x-bot-identity"], "unclaimed", "{h}");
    assert_eq!(h["x-bot-decision"], "allow");
    assert!(
        h.get("connection").is_none_or(|c| c != "close"),
        "hop-by-hop: {h}"
    );
    // A fake Googlebot is refused by the gate once its reverse DNS is
    // known: the page is the gate's.
    let t = Instant::now();
    let mut r = page(at, "/shop", GOOGLEBOT, "");
    while r.status == 200 {
        assert_eq!(r.json()["headers"]["x-bot-identity"], "unverifiable");
        assert!(t.elapsed() < Duration::from_secs(10), "{r:?}");
        std::thread::sleep(Duration::from_millis(50));
        r = page(at, "/shop", GOOGLEBOT, "");
    }
    assert_eq!(r.status, 403, "{r:?}");
    assert_eq!(r.header("x-bot-rule"), Some("fake-crawlers"), "{r:?}");
    assert!(r.body.starts_with("Access refused."), "{}", r.body);
    // robots.txt is the gate's.
    let r = page(at, "/robots.txt", BROWSER, "");
    assert_eq!(r.status, 200);
    assert!(r.body.contains("# the gate's"), "{}", r.body);
    // 5 MiB streamed back intact.
    let r = page(at, "/big", BROWSER, "");
    assert_eq!(r.status, 200);
    assert_eq!(r.raw_body.len(), 5 * 1024 * 1024);
    assert!(r.raw_body == pattern(5 * 1024 * 1024, 7), "the file intact");
    // A 1 MB POST passed whole.
    let body = pattern(1_000_000, 13);
    let r = ask(
        [127, 0, 0, 1],
        at,
        "POST /echo",
        &format!("User-Agent: {BROWSER}\r\nContent-Type: application/octet-stream\r\n"),
        &body,
    );
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.json()["length"], 1_000_000);
    assert_eq!(r.json()["intact"], true);
    // Over --max-request-body: 413, declared or streamed.
    let big = pattern(3 << 20, 13);
    let r = ask(
        [127, 0, 0, 1],
        at,
        "POST /echo",
        &format!("User-Agent: {BROWSER}\r\n"),
        &big,
    );
    assert_eq!(r.status, 413, "{r:?}");
    let mut chunked = Vec::new();
    for c in big.chunks(256 * 1024) {
        chunked.extend_from_slice(format!("{:x}\r\n", c.len()).as_bytes());
        chunked.extend_from_slice(c);
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    let r = ask(
        [127, 0, 0, 1],
        at,
        "POST /echo",
        &format!("User-Agent: {BROWSER}\r\nTransfer-Encoding: chunked\r\n"),
        &chunked,
    );
    assert_eq!(r.status, 413, "{r:?}");
    // A WebSocket passed through both ways.
    assert_eq!(websocket_echo(at, "/ws"), "echo: hello through the gate");
    // Many requests on one upstream pool, from a kept-alive client.
    for i in 0..20 {
        let r = page(at, &format!("/n/{i}"), BROWSER, "");
        assert_eq!(r.status, 200, "{r:?}");
    }
    // The operators' view: upstream counts.
    let r = page(at, "/.botscope/metrics", BROWSER, "");
    assert_eq!(r.status, 200, "{r:?}");
    assert!(
        r.body
            .contains("botscope_gate_upstream_requests_total{outcome=\"too_large\"} 2"),
        "{}",
        r.body
    );
    // The application stopped: a short 502 page, and the gate answers on.
    drop(application);
    let r = page(at, "/shop", BROWSER, "");
    assert_eq!(r.status, 502, "{r:?}");
    assert!(r.body.starts_with("Bad gateway."), "{}", r.body);
    assert_eq!(page(at, "/robots.txt", BROWSER, "").status, 200);
}

#[test]
fn an_https_application_is_checked_against_the_systems_trust_store() {
    let dir = crate::scratch("standalone-tls");
    let ca = botscope_testkit::ipdb::TestCa::new();
    let (_app, app_addr) = app(Some((&ca, &dir)));
    let url = format!("https://localhost:{}", app_addr.port());
    // Trusted through SSL_CERT_FILE (the system's store as OpenSSL reads it).
    let bundle = dir.join("ca.pem");
    std::fs::write(&bundle, &ca.pem).unwrap();
    let (_g, at) = gate(
        &dir.join("trusted"),
        &url,
        &["--offline"],
        &[("SSL_CERT_FILE", crate::arg(&bundle))],
    );
    let r = page(at, "/over-tls", BROWSER, "");
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(r.json()["path"], "/over-tls");
    // Without it, the certificate is refused: 502, never the page.
    let other = botscope_testkit::ipdb::TestCa::new();
    let wrong = dir.join("other.pem");
    std::fs::write(&wrong, &other.pem).unwrap();
    let (_g, at) = gate(
        &dir.join("untrusted"),
        &url,
        &["--offline"],
        &[("SSL_CERT_FILE", crate::arg(&wrong))],
    );
    let r = page(at, "/over-tls", BROWSER, "");
    assert_eq!(r.status, 502, "{r:?}");
}

/// A guide's command run by bash, with the `botscope` this build made
/// first on the PATH.
fn bash(command: &str) -> std::process::Output {
    bash_in(command, Path::new("."))
}

/// [`bash`] in the directory `dir`.
pub(crate) fn bash_in(command: &str, dir: &Path) -> std::process::Output {
    Command::new("bash")
        .args(["-euo", "pipefail", "-c", command])
        .current_dir(dir)
        .env(
            "PATH",
            format!(
                "{}:{}",
                Path::new(env!("CARGO_BIN_EXE_botscope"))
                    .parent()
                    .unwrap()
                    .display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .output()
        .unwrap()
}

fn doc_block(after: &str, lang: &str) -> String {
    botscope_testkit::doc_block("gate.md", after, lang)
}

/// The flags of the guide's `botscope gate` command in the sh block after
/// `after`, but for those the tests set (`--upstream`, `--listen`,
/// `--policy`, `--robots-dir`), its paths put under `dir`.
fn guide_flags(after: &str, dir: &Path) -> Vec<String> {
    let cmd = doc_block(after, "sh");
    let words: Vec<String> = cmd
        .replace("\\\n", " ")
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    assert_eq!(words[..2], ["botscope", "gate"], "{cmd}");
    std::fs::write(dir.join("challenge.key"), [7u8; 32]).unwrap();
    let mut flags = Vec::new();
    let mut it = words.into_iter().skip(2);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--upstream" | "--listen" | "--policy" | "--robots-dir" => {
                let _ = it.next();
            }
            _ => flags.push(
                a.replace("/etc/botscope/", &format!("{}/", dir.display()))
                    .replace("/var/log/botscope/", &format!("{}/", dir.display())),
            ),
        }
    }
    flags
}

/// Debian's Apache with `site` (a documented block, its placeholders put
/// right), stopped by its PID when dropped.
fn apache(dir: &Path, site: &str) -> Proc {
    let modules = "/usr/lib/apache2/modules";
    let user = if nix_root() {
        "User nobody\nGroup nogroup\n"
    } else {
        ""
    };
    let conf = format!(
        "ServerRoot /etc/apache2\nServerName localhost\n{user}\
         DefaultRuntimeDir {d}\nPidFile {d}/apache.pid\nErrorLog {d}/error.log\nMutex file:{d} default\n\
         LoadModule mpm_event_module {modules}/mod_mpm_event.so\n\
         LoadModule authz_core_module {modules}/mod_authz_core.so\n\
         LoadModule mime_module {modules}/mod_mime.so\n\
         LoadModule dir_module {modules}/mod_dir.so\n\
         LoadModule proxy_module {modules}/mod_proxy.so\n\
         LoadModule proxy_http_module {modules}/mod_proxy_http.so\n\
         LoadModule headers_module {modules}/mod_headers.so\n\
         TypesConfig /etc/mime.types\n{site}",
        d = dir.display()
    );
    let path = dir.join("apache.conf");
    std::fs::write(&path, conf).unwrap();
    let exe = "/usr/sbin/apache2";
    assert!(
        Path::new(exe).exists(),
        "Apache is needed (the test command in README installs apache2)"
    );
    let child = Command::new(exe)
        .arg("-f")
        .arg(&path)
        .arg("-DFOREGROUND")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    Proc(child)
}

fn nix_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// The guide's Apache in front of the gate, the gate in front of the
/// site (a second virtual host of the same Apache): pages pass, a fake
/// Googlebot whose forged `X-Forwarded-For` names Google's address is
/// still judged by its own, and `/robots.txt` is the gate's.
#[test]
fn the_gate_behind_apache_as_the_guide_deploys_it() {
    use std::os::unix::fs::PermissionsExt;
    let dir = crate::scratch("standalone-apache");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let www = dir.join("www");
    std::fs::create_dir_all(www.join("private")).unwrap();
    std::fs::write(www.join("index.html"), "<h1>the shop</h1>\n").unwrap();
    std::fs::write(www.join("private/a.html"), "secret\n").unwrap();
    for p in [&www, &www.join("private")] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let (front, backend, gate_port) = (
        botscope_testkit::free_port(),
        botscope_testkit::free_port(),
        botscope_testkit::free_port(),
    );
    let block = doc_block("### Behind Apache", "apache");
    let site = block
        .replace(
            "<VirtualHost *:80>",
            &format!("Listen 127.0.0.1:{front}\n<VirtualHost 127.0.0.1:{front}>"),
        )
        .replace("127.0.0.1:8091", &format!("127.0.0.1:{gate_port}"))
        .replace("127.0.0.1:8080", &format!("127.0.0.1:{backend}"))
        .replace("/var/www/html", &www.display().to_string());
    assert!(!site.contains(":80>") && !site.contains("8091"), "{site}");
    let mut apache = apache(&dir, &site);
    let front_addr = SocketAddr::from(([127, 0, 0, 1], front));
    wait_listening(front_addr, &mut apache.0, "apache");
    // The gate as the guide runs it, but for its paths and port.
    let flags = guide_flags("### Behind Apache", &dir);
    assert!(flags.contains(&"--client-header".to_owned()), "{flags:?}");
    let dns = botscope_testkit::Dnsmasq::start(&[
        "--local=/127.in-addr.arpa/",
        "--ptr-record=2.0.0.127.in-addr.arpa,crawl.fake.example",
    ]);
    let dns_addr = dns.addr().to_string();
    let mut more: Vec<&str> = flags.iter().map(String::as_str).collect();
    more.extend(["--dns", &dns_addr]);
    let (_gate, _) = gate_at(
        &dir.join("gate"),
        &format!("http://127.0.0.1:{backend}"),
        gate_port,
        &more,
    );
    let via = |from: [u8; 4], path: &str, ua: &str, more: &str| {
        ask(
            from,
            front_addr,
            &format!("GET {path}"),
            &format!("User-Agent: {ua}\r\nAccept: text/html\r\n{more}"),
            b"",
        )
    };
    let r = via([127, 0, 0, 2], "/", BROWSER, "");
    assert_eq!(r.status, 200, "{r:?}");
    assert!(r.body.contains("the shop"), "{}", r.body);
    assert_eq!(
        via([127, 0, 0, 2], "/private/a.html", BROWSER, "").status,
        200
    );
    let r = via([127, 0, 0, 2], "/robots.txt", BROWSER, "");
    assert!(r.body.contains("# the gate's"), "{r:?}");
    // A fake Googlebot at 127.0.0.2 forging Google's address: judged by
    // its own (Apache appends it), refused once its reverse DNS is known.
    let forged = "X-Forwarded-For: 66.249.66.1\r\n";
    let t = Instant::now();
    let mut r = via([127, 0, 0, 2], "/", GOOGLEBOT, forged);
    while r.status == 200 {
        assert!(t.elapsed() < Duration::from_secs(10), "{r:?}");
        std::thread::sleep(Duration::from_millis(50));
        r = via([127, 0, 0, 2], "/", GOOGLEBOT, forged);
    }
    assert_eq!(r.status, 403, "{r:?}");
    assert!(r.body.starts_with("Access refused."), "{}", r.body);
}

/// docs/gate.md's fleet command, but for its paths: the gate shares its
/// state with the Redis it names.
#[test]
fn the_guides_fleet_command_shares_its_state() {
    let dir = crate::scratch("fleet-guide");
    let redis = botscope_testkit::Redis::start();
    let (robots, policy) = site(&dir);
    let block = doc_block("## A fleet: many gates, one site", "sh");
    assert!(block.contains("redis://10.0.0.5:6379/0"), "{block}");
    let port = botscope_testkit::free_port();
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let args: Vec<String> = block
        .replace("\\\n", " ")
        .replace("redis://10.0.0.5:6379/0", &redis.url(0))
        .replace("/etc/botscope/policy.yaml", crate::arg(&policy))
        .replace("/etc/botscope/robots", crate::arg(&robots))
        .split_whitespace()
        .skip(1)
        .map(str::to_owned)
        .collect();
    let token = dir.join("operator.token");
    std::fs::write(&token, "0123456789abcdef0123456789abcdef\n").unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_botscope"))
        .args(&args)
        .args(["--listen", &addr.to_string(), "--offline"])
        .arg("--operator-token-file")
        .arg(&token)
        .env("HOME", &dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_listening(addr, &mut child, "the gate");
    let _gate = Proc(child);
    let get = |path: &str, more: &str| {
        ask(
            [127, 0, 0, 1],
            addr,
            &format!("GET {path}"),
            &format!("User-Agent: {BROWSER}\r\n{more}"),
            b"",
        )
    };
    assert_eq!(get("/auth", "X-Real-IP: 192.0.2.9\r\n").status, 200);
    // The operators' view, from the gate's own machine (a client the
    // proxy names is refused it).
    assert_eq!(get("/healthz", "X-Real-IP: 192.0.2.9\r\n").status, 403);
    // Loopback is a trusted proxy here: a request it names no client for
    // is no operator's; naming the operator's address, it is.
    assert_eq!(get("/healthz", "").status, 403);
    let h = get("/healthz", "X-Real-IP: 127.0.0.1\r\n").json();
    assert_eq!(h["state"]["kind"], "redis", "{h}");
    assert_eq!(h["state"]["shared"], true, "{h}");
    assert!(
        redis
            .command("DBSIZE")
            .is_some_and(|n| n.starts_with(':') && n != ":0"),
        "the gate's keys are in Redis"
    );
    // "Who is an operator": the guide's two commands, as written.
    let cmds = doc_block("### Who is an operator", "sh")
        .replace("/var/lib/botscope/operator.token", crate::arg(&token))
        .replace("127.0.0.1:8091", &addr.to_string());
    let lines: Vec<&str> = cmds.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 2, "{cmds}");
    let run = |line: &str| {
        let o = Command::new("bash")
            .args(["-euo", "pipefail", "-c", line])
            .output()
            .unwrap();
        assert!(o.status.success(), "{line}: {}", crate::stderr(&o));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let health: serde_json::Value = serde_json::from_str(&run(lines[0])).unwrap();
    assert_eq!(health["state"]["kind"], "redis", "{health}");
    let revoked: serde_json::Value = serde_json::from_str(&run(lines[1])).unwrap();
    assert_eq!(revoked["fleet"], true, "{revoked}");
    // Without the token, no revoking.
    let r = ask(
        [127, 0, 0, 1],
        addr,
        "POST /.botscope/revoke-passes",
        "X-Real-IP: 127.0.0.1\r\n",
        b"",
    );
    assert_eq!(r.status, 403, "{r:?}");
}

/// A gate whose policy refuses `/private/` (and `path_case:` as given)
/// in front of `upstream`.
fn closing_gate(dir: &Path, upstream: &str, case: &str, more: &[&str]) -> (Proc, SocketAddr) {
    let (robots, _) = site(dir);
    let policy = dir.join("closing.yaml");
    std::fs::write(
        &policy,
        format!(
            "version: 1\ndefault: allow\npath_case: {case}\nrules:\n  - name: private\n    action: deny\n    path: [/private/]\n"
        ),
    )
    .unwrap();
    spawn_gate(
        &robots,
        &policy,
        dir,
        upstream,
        botscope_testkit::free_port(),
        more,
        &[],
    )
}

/// Tomcat from Debian's package, its default servlet serving `root`, on
/// a free loopback port.
fn tomcat(dir: &Path, root: &Path) -> (Proc, SocketAddr) {
    let home = Path::new("/usr/share/tomcat10");
    assert!(
        home.join("bin/catalina.sh").exists(),
        "Tomcat is needed (the test command in README installs Debian's tomcat10-common)"
    );
    let port = botscope_testkit::free_port();
    let base = dir.join("tomcat");
    for d in ["conf", "logs", "temp", "work", "webapps"] {
        std::fs::create_dir_all(base.join(d)).unwrap();
    }
    std::fs::write(
        base.join("conf/server.xml"),
        format!(
            r#"<Server port="-1" shutdown="SHUTDOWN"><Service name="Catalina">
<Connector port="{port}" address="127.0.0.1" protocol="HTTP/1.1"/>
<Engine name="Catalina" defaultHost="localhost"><Host name="localhost" appBase="webapps" unpackWARs="false" autoDeploy="false"/></Engine>
</Service></Server>"#
        ),
    )
    .unwrap();
    std::fs::write(
        base.join("conf/web.xml"),
        r#"<web-app xmlns="https://jakarta.ee/xml/ns/jakartaee" version="6.0">
<servlet><servlet-name>default</servlet-name><servlet-class>org.apache.catalina.servlets.DefaultServlet</servlet-class><load-on-startup>1</load-on-startup></servlet>
<servlet-mapping><servlet-name>default</servlet-name><url-pattern>/</url-pattern></servlet-mapping>
</web-app>"#,
    )
    .unwrap();
    std::os::unix::fs::symlink(root, base.join("webapps/ROOT")).unwrap();
    let mut child = Command::new(home.join("bin/catalina.sh"))
        .arg("run")
        .env("CATALINA_HOME", home)
        .env("CATALINA_BASE", &base)
        .env("CATALINA_PID", base.join("tomcat.pid"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    wait_listening(addr, &mut child, "tomcat");
    (Proc(child), addr)
}

fn raw_get(to: SocketAddr, target: &str) -> Res {
    ask([127, 0, 0, 1], to, &format!("GET {target}"), "", b"")
}

/// Tomcat drops `;` path parameters (and reads `..;` as `..`): every
/// such spelling of a closed file, which Tomcat itself serves, is
/// refused by the gate in front of it, whatever `--upstream-path`.
#[test]
fn tomcat_never_serves_a_closed_file_for_a_semicolon_spelling() {
    let dir = crate::scratch("standalone-tomcat");
    let root = dir.join("root");
    std::fs::create_dir_all(root.join("private")).unwrap();
    std::fs::create_dir_all(root.join("x")).unwrap();
    std::fs::write(root.join("private/x"), "secret\n").unwrap();
    std::fs::write(root.join("ok"), "ok\n").unwrap();
    let (_tomcat, app) = tomcat(&dir, &root);
    let spellings = [
        "/private;x=1/x",
        "/;x=1/private/x",
        "/x/..;/private/x",
        "/x/.;/../private/x",
    ];
    // Tomcat itself serves the closed file for each.
    for t in spellings {
        assert_eq!(raw_get(app, t).body, "secret\n", "{t}");
    }
    for mode in ["as-sent", "normalized"] {
        let (_g, at) = closing_gate(
            &dir.join(mode),
            &format!("http://{app}"),
            "sensitive",
            &["--offline", "--upstream-path", mode],
        );
        assert_eq!(raw_get(at, "/ok").body, "ok\n", "{mode}");
        assert_eq!(raw_get(at, "/private/x").status, 403, "{mode}");
        for t in spellings {
            let r = raw_get(at, t);
            assert_eq!(r.status, 400, "{mode} {t}: {r:?}");
            assert!(!r.body.contains("secret"), "{mode} {t}");
        }
    }
}

/// Express routes without case by default: under `path_case:
/// insensitive` the gate closes `/PRIVATE/x` as `/private/x`, which
/// Express serves for both.
#[test]
fn express_routes_without_case_and_the_policy_follows() {
    let dir = crate::scratch("standalone-express");
    let modules = botscope_testkit::root().join("target/express/node_modules");
    assert!(
        modules.join("express").exists(),
        "Express is needed (the test command in README installs it in target/express)"
    );
    let port = botscope_testkit::free_port();
    let script = dir.join("app.js");
    std::fs::write(
        &script,
        format!(
            "const express = require({m:?});\nconst app = express();\napp.get('/private/x', (req, res) => res.send('secret'));\napp.get('/public/x', (req, res) => res.send('public'));\napp.listen({port}, '127.0.0.1');\n",
            m = modules.join("express").display().to_string()
        ),
    )
    .unwrap();
    let mut child = Command::new("node")
        .arg(&script)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let app = SocketAddr::from(([127, 0, 0, 1], port));
    wait_listening(app, &mut child, "express");
    let _express = Proc(child);
    // Express serves the closed route whatever its case.
    assert_eq!(raw_get(app, "/PRIVATE/x").body, "secret");
    let (_g, at) = closing_gate(
        &dir.join("insensitive"),
        &format!("http://{app}"),
        "insensitive",
        &["--offline"],
    );
    for t in ["/private/x", "/PRIVATE/x", "/Private/X"] {
        let r = raw_get(at, t);
        assert_eq!(r.status, 403, "{t}: {r:?}");
    }
    assert_eq!(raw_get(at, "/PUBLIC/x").body, "public");
    // As nginx compares (the default), `/PRIVATE/x` is another path: the
    // owner of an Express site says `insensitive`.
    let (_g, at) = closing_gate(
        &dir.join("sensitive"),
        &format!("http://{app}"),
        "sensitive",
        &["--offline"],
    );
    assert_eq!(raw_get(at, "/PRIVATE/x").body, "secret");
}

/// scripts/gate-attacks.py, the operator's check of their own
/// deployment: every line ok against the gate; against the application
/// alone, where nothing is closed, it says so and exits 2.
#[test]
fn the_operators_attack_script_finds_no_way_around() {
    let dir = crate::scratch("standalone-attacks");
    let app =
        botscope_testkit::recorder::Recorder::start(Some(botscope_testkit::recorder::Upgrades {
            switch: botscope_testkit::recorder::Switch::Echo,
            always: false,
        }));
    let (_g, at) = closing_gate(&dir, &app.url(), "sensitive", &["--offline"]);
    // The guide's command, at this gate.
    let cmd = doc_block("To check a deployment from outside", "sh");
    let words: Vec<String> = cmd
        .replace("http://127.0.0.1:8091", &format!("http://{at}"))
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    assert_eq!(words[..2], ["python3", "scripts/gate-attacks.py"], "{cmd}");
    let script = botscope_testkit::root().join(&words[1]);
    let o = Command::new(&words[0])
        .arg(&script)
        .args(&words[2..])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}{}", crate::stderr(&o));
    assert!(out.lines().count() >= 30, "{out}");
    assert!(!out.contains("FAIL"), "{out}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("ok") && l.contains("revoke-passes")),
        "{out}"
    );
    assert!(
        !app.lines().iter().any(|l| l.contains("private")),
        "{:?}",
        app.lines()
    );
    let o = Command::new("python3")
        .arg(&script)
        .arg(app.url())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", crate::stderr(&o));
}

/// Waits up to five seconds for `done` (a new policy read), else fails
/// with `what`.
fn read_within(done: impl Fn() -> bool, what: &str) {
    let t = Instant::now();
    while !done() {
        assert!(t.elapsed() < Duration::from_secs(5), "{what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A policy that refuses `/p/40` (its last rule) and `/{tag}/`, with
/// `default: allow` first: every prefix of it that is a valid policy
/// allows `/p/40`.
fn versioned_policy(tag: &str) -> String {
    let mut p =
        format!("default: allow\nrules:\n  - name: {tag}\n    action: deny\n    path: [/{tag}/]\n");
    for i in 1..=40 {
        p.push_str(&format!(
            "  - name: p{i}\n    action: deny\n    path: [/p/{i}$]\n"
        ));
    }
    p
}

/// Rewrites `path` in place, a line at a time (as `echo … >>` in a loop,
/// or an editor saving over the file).
fn rewrite_in_place(path: &Path, text: &str) {
    use std::io::Write as _;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(path)
        .unwrap();
    for (i, line) in text.split_inclusive('\n').enumerate() {
        f.write_all(line.as_bytes()).unwrap();
        if i % 8 == 7 {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

/// Item 7 of the gate's attacks: a policy rewritten in place, over and
/// over or once at a time, is never served half-written (every answer
/// comes from the old policy or the new one), a file replaced with the
/// same size and modification time is read, a policy without `default:`
/// is refused, and the guide's replacement by rename runs as written.
#[test]
fn a_policy_rewritten_in_place_is_never_read_half_written() {
    let dir = crate::scratch("standalone-rewrites");
    let app = botscope_testkit::recorder::Recorder::start(None);
    let (robots, _) = site(&dir);
    let policy = dir.join("policy.yaml");
    let (a, b) = (versioned_policy("a"), versioned_policy("b"));
    std::fs::write(&policy, &a).unwrap();
    let (_g, at) = spawn_gate(
        &robots,
        &policy,
        &dir,
        &app.url(),
        botscope_testkit::free_port(),
        &["--offline", "--poll", "0.05"],
        &[],
    );
    let status = |t: &str| raw_get(at, t).status;
    assert_eq!(
        (status("/a/x"), status("/b/x"), status("/p/40")),
        (403, 200, 403)
    );
    // Load on /p/40, which both versions refuse, while writers rewrite.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let load = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let (mut asked, mut passed) = (0u32, 0u32);
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                asked += 1;
                if raw_get(at, "/p/40").status != 403 {
                    passed += 1;
                }
            }
            (asked, passed)
        })
    };
    // Continuous rewrites for three seconds, then eight single ones.
    let t = Instant::now();
    let mut n = 0;
    while t.elapsed() < Duration::from_secs(3) {
        rewrite_in_place(&policy, if n % 2 == 0 { &b } else { &a });
        n += 1;
    }
    for i in 0..8 {
        rewrite_in_place(&policy, if i % 2 == 0 { &a } else { &b });
        std::thread::sleep(Duration::from_millis(700));
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let (asked, passed) = load.join().unwrap();
    assert!(asked > 50, "{asked} requests");
    assert_eq!(
        passed, 0,
        "{passed} of {asked} answers allowed what neither version allows"
    );
    // The last version written (b) is the one served.
    assert_eq!((status("/a/x"), status("/b/x")), (200, 403));
    // Replaced by a file of the same size and modification time.
    let c = versioned_policy("c");
    assert_eq!(c.len(), b.len());
    let other = dir.join("c.yaml");
    std::fs::write(&other, &c).unwrap();
    let ok = Command::new("touch")
        .arg("-r")
        .arg(&policy)
        .arg(&other)
        .status()
        .unwrap();
    assert!(ok.success());
    let ok = Command::new("cp")
        .arg("-p")
        .arg(&other)
        .arg(&policy)
        .status()
        .unwrap();
    assert!(ok.success());
    read_within(|| status("/c/x") == 403, "a cp -p copy is never read");
    assert_eq!(status("/b/x"), 200);
    // A policy without `default:` is refused; the one before stays.
    std::fs::write(&policy, "rules:\n  - {name: d, action: deny, path: /d/}\n").unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!((status("/c/x"), status("/d/x")), (403, 200));
    let h = raw_get(at, "/.botscope/healthz").json();
    assert!(
        h["last_error"]
            .as_str()
            .is_some_and(|e| e.contains("no `default:`")),
        "{h}"
    );
    // The guide's way: a new file checked, then renamed over the old.
    let cmd = doc_block("**Replacing the policy.**", "sh")
        .replace("/etc/botscope/", &format!("{}/", dir.display()));
    std::fs::write(dir.join("policy.yaml.new"), versioned_policy("e")).unwrap();
    let o = bash(&cmd);
    assert!(o.status.success(), "{}", crate::stderr(&o));
    read_within(|| status("/e/x") == 403, "the renamed file is never read");
    assert!(
        !app.lines().iter().any(|l| l.contains("/p/40")),
        "{:?}",
        app.lines()
    );
}

/// `gate export nft` keeps real nftables sets (in a network namespace the
/// test makes) filled with a running gate's catches: the setup it prints
/// loads, a flush puts each catch with its time left, a renewed catch
/// gets its new time, a full set leaves the rest out (exit 1), and a
/// ruleset without the table refuses the batch with nothing changed
/// (exit 2).
#[test]
fn export_nft_fills_the_sets_with_the_gates_catches() {
    let dir = botscope_testkit::tempdir();
    let dir = dir.path();
    let robots = dir.join("robots");
    std::fs::create_dir_all(&robots).unwrap();
    std::fs::write(
        robots.join("default.txt"),
        "User-agent: *\nDisallow: /private/\n",
    )
    .unwrap();
    let policy = dir.join("policy.yaml");
    std::fs::write(
        &policy,
        "default: allow\ntraps:\n  kinds: [robots]\n  hold: 1h\nrules:\n  - {name: trapped, trapped: any, action: deny}\n",
    )
    .unwrap();
    let app = botscope_testkit::recorder::Recorder::start(None);
    let (_gate, at) = spawn_gate(
        &robots,
        &policy,
        dir,
        &app.url(),
        botscope_testkit::free_port(),
        &[],
        &[],
    );
    let body = ask([127, 0, 0, 1], at, "GET /robots.txt", "", b"").body;
    let trap = body
        .lines()
        .filter_map(|l| l.strip_prefix("Disallow: "))
        .filter(|p| p.starts_with("/t-"))
        .nth(1)
        .unwrap()
        .to_owned();
    for from in [[127, 0, 0, 2], [127, 0, 0, 3]] {
        assert_eq!(ask(from, at, &format!("GET {trap}"), "", b"").status, 403);
    }

    // A network namespace held open by a sleeping process; nft runs in
    // it through a wrapper the export is given as its program.
    let root_user = Command::new("id").arg("-u").output().unwrap().stdout == b"0\n";
    let mut holder = Command::new("unshare")
        .args(if root_user { &["-n"][..] } else { &["-rn"][..] })
        .args(["sleep", "300"])
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let nft = dir.join("nft-in-ns");
    std::fs::write(
        &nft,
        format!(
            "#!/bin/sh\nexec nsenter -t {} -n {} /usr/sbin/nft \"$@\"\n",
            holder.id(),
            if root_user {
                ""
            } else {
                "-U --preserve-credentials"
            }
        ),
    )
    .unwrap();
    std::fs::set_permissions(&nft, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let list = || {
        let o = Command::new(&nft)
            .args(["list", "set", "inet", "botscope", "trapped_v4"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let url = format!("http://{at}");
    let export = |more: &[&str]| {
        crate::botscope(
            &[
                &[
                    "gate",
                    "export",
                    "nft",
                    "--from",
                    &url,
                    "--program",
                    crate::arg(&nft),
                ],
                more,
            ]
            .concat(),
            b"",
        )
    };
    // Without the table: refused, nothing changed, exit 2.
    let o = export(&[]);
    assert_eq!(o.status.code(), Some(2), "{}", crate::stderr(&o));
    assert!(
        crate::stderr(&o).contains("--print-setup"),
        "{}",
        crate::stderr(&o)
    );
    // The setup, then a flush.
    let setup = crate::botscope(
        &[
            "gate",
            "export",
            "nft",
            "--print-setup",
            "--max-elements",
            "8",
        ],
        b"",
    );
    let mut load = Command::new(&nft)
        .args(["-f", "-"])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    load.stdin.take().unwrap().write_all(&setup.stdout).unwrap();
    assert!(load.wait().unwrap().success(), "{}", crate::stdout(&setup));
    let o = export(&[]);
    assert_eq!(o.status.code(), Some(0), "{}", crate::stderr(&o));
    let set = list();
    assert!(
        set.contains("127.0.0.2 timeout ") && set.contains("127.0.0.3 timeout "),
        "{set}"
    );
    assert!(
        set.contains("timeout 1h") || set.contains("timeout 59m"),
        "{set}"
    );
    // A set that holds one: the other left out, exit 1.
    let o = export(&["--max-elements", "1"]);
    assert_eq!(o.status.code(), Some(1), "{}", crate::stderr(&o));
    assert!(
        crate::stderr(&o).contains("1 catches left out"),
        "{}",
        crate::stderr(&o)
    );
    assert_eq!(list().matches(" timeout ").count(), 1, "{}", list());
    // The ipset form, printed.
    let o = crate::botscope(&["gate", "export", "ipset", "--from", &url, "--print"], b"");
    assert!(
        crate::stdout(&o).contains("add trapped-v4-new 127.0.0.2 timeout "),
        "{}",
        crate::stdout(&o)
    );
    let _ = holder.kill();
    let _ = holder.wait();
}

/// The challenge funnel through the real standalone gate: each stage
/// counted under the rule that issued the challenge (the rule travels in
/// the token), a forged token under none, requests the rule passed over
/// counted exempt by what let them through; and `policy replay --funnel`
/// over the decision log gives back what `/metrics` counted.
#[test]
fn the_challenge_funnel_per_rule_and_its_replay() {
    let dir = botscope_testkit::tempdir();
    let dir = dir.path();
    let (robots, policy) = open_site(
        dir,
        "default: allow\nrules:\n  - {name: protocol-files, path: [/robots.txt, /.well-known/], action: allow}\n  - {name: fast-browsers, category: browser, rate: 2/min per ip, action: challenge}\n  - {name: shop, category: browser, path: /shop/, action: challenge}\n",
    );
    let log = dir.join("decisions.jsonl");
    let app = botscope_testkit::recorder::Recorder::start(None);
    let (_gate, at) = spawn_gate(
        &robots,
        &policy,
        dir,
        &app.url(),
        botscope_testkit::free_port(),
        &[
            "--challenge-delay",
            "1s",
            "--challenge-difficulty",
            "8",
            "--decision-log",
            log.to_str().unwrap(),
        ],
        &[],
    );
    let from = |ip: u8, target: &str| {
        ask(
            [127, 0, 0, ip],
            at,
            &format!("GET {target}"),
            &format!("User-Agent: {BROWSER}\r\nAccept: text/html\r\n"),
            b"",
        )
    };
    // Issued and viewed in one request.
    assert_eq!(from(4, "/a").status, 200);
    assert_eq!(from(4, "/a").status, 200);
    let page = from(4, "/a");
    assert_eq!(page.status, 401, "{page:?}");
    let at_link = page.body.find("href=\"/.botscope/pass?").unwrap() + "href=\"".len();
    let link =
        page.body[at_link..at_link + page.body[at_link..].find('"').unwrap()].replace("&amp;", "&");
    // Too early, a proof of work that does not hold, the token from
    // another browser, a forged one.
    assert_eq!(from(4, &link).status, 401);
    let token = link
        .split(['?', '&'])
        .find_map(|p| p.strip_prefix("t="))
        .unwrap()
        .to_owned();
    let seed = token.split('.').nth(1).unwrap();
    let bad = (0u64..)
        .find(|n| {
            let d = ring::digest::digest(&ring::digest::SHA256, format!("{seed}:{n}").as_bytes());
            d.as_ref()[0] != 0
        })
        .unwrap();
    assert_eq!(from(4, &format!("{link}&n={bad}")).status, 401);
    let other_browser = ask(
        [127, 0, 0, 4],
        at,
        &format!("GET {link}"),
        "User-Agent: Mozilla/5.0 (Windows NT 10.0) Firefox/130.0\r\n",
        b"",
    );
    assert_eq!(other_browser.status, 401);
    assert_eq!(from(4, "/.botscope/pass?t=1.x.y.z&back=/").status, 401);
    // After the wait: the pass.
    std::thread::sleep(Duration::from_millis(1_100));
    let ok = from(4, &link);
    assert_eq!(ok.status, 303, "{ok:?}");
    // Passed over: a browser's protocol file, under its rate.
    assert_eq!(from(6, "/.well-known/security.txt").status, 200);
    // Another rule's challenge.
    assert_eq!(from(7, "/shop/x").status, 401);

    let metrics = ask([127, 0, 0, 1], at, "GET /.botscope/metrics", "", b"").body;
    let want = [
        "botscope_gate_challenge_funnel_total{rule=\"fast-browsers\",stage=\"issued\"} 1",
        "botscope_gate_challenge_funnel_total{rule=\"fast-browsers\",stage=\"viewed\"} 1",
        "botscope_gate_challenge_funnel_total{rule=\"fast-browsers\",stage=\"answered\"} 4",
        "botscope_gate_challenge_funnel_total{rule=\"fast-browsers\",stage=\"passed\"} 1",
        "botscope_gate_challenge_failed_total{rule=\"fast-browsers\",reason=\"too-early\"} 1",
        "botscope_gate_challenge_failed_total{rule=\"fast-browsers\",reason=\"no-work\"} 1",
        "botscope_gate_challenge_failed_total{rule=\"fast-browsers\",reason=\"elsewhere\"} 1",
        "botscope_gate_challenge_failed_total{rule=\"-\",reason=\"forged\"} 1",
        "botscope_gate_challenge_exempt_total{rule=\"fast-browsers\",reason=\"protocol-files\"} 1",
        "botscope_gate_challenge_funnel_total{rule=\"shop\",stage=\"issued\"} 1",
        "botscope_gate_challenge_funnel_total{rule=\"shop\",stage=\"viewed\"} 1",
    ];
    for w in want {
        assert!(metrics.contains(w), "{w}\n{metrics}");
    }

    // The replay of the decision log: the same figures (its writer is a
    // thread: wait for the last line).
    let t = Instant::now();
    while !std::fs::read_to_string(&log)
        .unwrap_or_default()
        .contains("\"rule\":\"shop\"")
    {
        assert!(t.elapsed() < Duration::from_secs(10));
        std::thread::sleep(Duration::from_millis(20));
    }
    let replay = |format: &str| {
        Command::new(env!("CARGO_BIN_EXE_botscope"))
            .args(["policy", "replay", "--funnel", "--format", format])
            .arg(&policy)
            .arg(&log)
            .output()
            .unwrap()
    };
    let o = replay("json");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["malformed"], 0);
    let prom = |rule: &str, stage: &str| -> u64 {
        let needle =
            format!("botscope_gate_challenge_funnel_total{{rule=\"{rule}\",stage=\"{stage}\"}} ");
        metrics
            .lines()
            .find_map(|l| l.strip_prefix(&needle))
            .map_or(0, |n| n.parse().unwrap())
    };
    for rule in ["fast-browsers", "shop", "-"] {
        for stage in ["issued", "viewed", "answered", "passed"] {
            assert_eq!(
                r["rules"][rule][stage].as_u64().unwrap_or(0),
                prom(rule, stage),
                "{rule} {stage}: {r}"
            );
        }
    }
    assert_eq!(r["rules"]["fast-browsers"]["failed"]["no-work"], 1);
    assert_eq!(r["rules"]["-"]["failed"]["forged"], 1);
    assert_eq!(r["rules"]["fast-browsers"]["exempt"]["protocol-files"], 1);
    // The text report, by the command docs/gate.md shows.
    let command = doc_block("### The challenge funnel, per rule", "sh")
        .replace("/etc/botscope/policy.yaml", policy.to_str().unwrap())
        .replace("/var/log/botscope/decisions.jsonl", log.to_str().unwrap());
    assert!(
        command.starts_with("botscope policy replay --funnel "),
        "{command}"
    );
    let o = bash(&command);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(
        text.contains(
            "fast-browsers\n  issued 1  viewed 1  answered 4  passed 1  failed 3  solve rate 100.0%"
        ),
        "{text}"
    );
    // --funnel reports as text or JSON only; its logs must be readable.
    let o = replay("html");
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("--funnel reports as text or json"));
}
