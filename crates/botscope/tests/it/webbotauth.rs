//! Web Bot Auth end to end, every part a real one: `botscope keys
//! generate` makes the crawler's key, its directory is published over
//! HTTPS (loopback, a test CA), `botscope fetch` signs every request it
//! sends through nginx, which asks `botscope gate` about each (the
//! documented `auth_request` block) before passing it to `botscope
//! honeypot serve`; then the gate's verdicts in nginx's log, the
//! honeypot's report and `logs analyze` on that log all say the crawler
//! proved who it is.

use std::net::{IpAddr, SocketAddr, TcpStream};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use botscope_simweb::{Behaviour, Config as SimConfig, Sim, Site};

use crate::{arg, run, scratch, stderr, stdout};

/// A child process stopped when the test ends, however it ends: SIGTERM
/// (nginx's master takes its workers down with it; botscope's servers
/// finish what they write), then SIGKILL after 5 s.
struct Stop(Child);

impl Drop for Stop {
    fn drop(&mut self) {
        let _ = std::process::Command::new("kill")
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

fn spawn(args: &[&str]) -> Stop {
    Stop(
        crate::command()
            .command()
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn botscope"),
    )
}

/// Waits until `addr` accepts connections.
fn listening(addr: SocketAddr, child: &mut Stop, what: &str) {
    let t = Instant::now();
    while TcpStream::connect(addr).is_err() {
        if let Ok(Some(s)) = child.0.try_wait() {
            panic!("{what} exited: {s}");
        }
        assert!(t.elapsed() < Duration::from_secs(20), "{what} listens");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn free_port(ip: IpAddr) -> u16 {
    std::net::TcpListener::bind(SocketAddr::new(ip, 0))
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

/// The `location = /.botscope-auth` block of docs/web-server-lists.md, as
/// written there.
fn documented_auth_block() -> String {
    let doc = std::fs::read_to_string(crate::root().join("docs/web-server-lists.md")).expect("doc");
    let section = &doc[doc.find("## The gate").expect("the gate's section")..];
    let at = section
        .find("    location = /.botscope-auth {")
        .expect("its auth block");
    let end = at + section[at..].find("\n    }\n").expect("its end") + "\n    }\n".len();
    section[at..end].to_owned()
}

const LOG_FORMAT: &str = r#"$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" "$http_host" "$http_signature_input" "$http_signature" "$http_signature_agent" "$bot_signature""#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signed_crawl_is_verified_through_nginx_and_the_gate_into_the_honeypot() {
    let d = scratch("webbotauth-e2e");
    std::fs::set_permissions(&d, std::os::unix::fs::PermissionsExt::from_mode(0o755)).ok();
    // The crawler's key, and its directory on HTTPS.
    let o = run(&["keys", "generate", "--out", arg(&d.join("keys"))]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let key_file = d.join("keys/signing-key.jwk");
    let directory =
        std::fs::read(d.join("keys/http-message-signatures-directory")).expect("directory file");
    let ca = botscope_testkit::ipdb::TestCa::new();
    let keys_server = botscope_testkit::ipdb::FileServer::start_tls_canned(Default::default(), &ca);
    keys_server.set(
        "/.well-known/http-message-signatures-directory",
        botscope_testkit::ipdb::Canned::ok(
            &[(
                "Content-Type",
                "application/http-message-signatures-directory+json",
            )],
            &directory,
        ),
    );
    let agent = keys_server.url();
    let ca_file = d.join("ca.pem");
    std::fs::write(&ca_file, &ca.pem).expect("ca");
    let registry = d.join("registry.yaml");
    std::fs::write(
        &registry,
        format!("bots:\n- name: SignedBot\n  category: ai-assistant\n  ua_tokens: [SignedBot]\n  signature_agents: ['{agent}']\n"),
    )
    .expect("registry");

    // The honeypot, behind nginx.
    let hp_addr = SocketAddr::new([127, 0, 0, 1].into(), free_port([127, 0, 0, 1].into()));
    let hp_log = d.join("honeypot.log");
    let mut honeypot = spawn(&[
        "honeypot",
        "serve",
        "--sites",
        "8",
        "--domain",
        "hp.test",
        "--listen",
        &hp_addr.to_string(),
        "--log",
        arg(&hp_log),
    ]);
    listening(hp_addr, &mut honeypot, "the honeypot");

    // The gate, with the registry that names the agent.
    let lists = d.join("lists");
    let robots_dir = d.join("robots");
    std::fs::create_dir_all(&lists).expect("lists");
    std::fs::create_dir_all(&robots_dir).expect("robots");
    std::fs::write(lists.join("all-ok-bots.txt"), "").expect("list");
    std::fs::write(robots_dir.join("default.txt"), "User-agent: *\nDisallow:\n").expect("robots");
    let gate_addr = SocketAddr::new([127, 0, 0, 1].into(), free_port([127, 0, 0, 1].into()));
    let mut gate = spawn(&[
        "gate",
        "--lists",
        arg(&lists),
        "--robots-dir",
        arg(&robots_dir),
        "--listen",
        &gate_addr.to_string(),
        "--trust-proxy",
        "127.0.0.1/32",
        "--registry",
        arg(&registry),
        "--allow-private",
        "--ca-file",
        arg(&ca_file),
    ]);
    listening(gate_addr, &mut gate, "the gate");

    // The sites' names resolve (the simulated web's DNS responder) to a
    // loopback address of their own, where nginx listens.
    let sim = Sim::start(SimConfig {
        sites: (0..8)
            .map(|i| Site {
                name: format!("s{i}.hp.test"),
                behaviour: Behaviour::Status(404),
                tls: false,
            })
            .collect(),
        addresses: 1,
        corpus: Vec::new(),
    })
    .await
    .expect("sim");
    let site_ip = sim.addresses["s0.hp.test"];
    let port = free_port(site_ip);
    let nginx_addr = SocketAddr::new(site_ip, port);
    let dd = d.display();
    let conf = format!(
        "worker_processes 1;\npid {dd}/nginx.pid;\nerror_log stderr error;\ndaemon off;\n\
         events {{ worker_connections 64; }}\n\
         http {{\n\
         client_body_temp_path {dd}/tmp; proxy_temp_path {dd}/tmp; fastcgi_temp_path {dd}/tmp;\n\
         uwsgi_temp_path {dd}/tmp; scgi_temp_path {dd}/tmp;\n\
         upstream botscope_gate {{ server {gate_addr}; keepalive 16; }}\n\
         server {{\n    listen {nginx_addr};\n\
             location / {{\n        auth_request /.botscope-auth;\n\
                 auth_request_set $bot_signature $upstream_http_x_bot_signature;\n\
                 auth_request_set $signature_agent $upstream_http_x_signature_agent;\n\
                 proxy_pass http://{hp_addr};\n        proxy_set_header Host $http_host;\n\
                 proxy_set_header X-Bot-Signature $bot_signature;\n    }}\n\
         {auth}\n}}\n\
         log_format signed '{LOG_FORMAT}';\n\
         access_log {dd}/access.log signed;\n}}\n",
        auth = documented_auth_block(),
    );
    std::fs::create_dir_all(d.join("tmp")).expect("tmp");
    std::fs::write(d.join("nginx.conf"), conf).expect("conf");
    let exe = ["/usr/sbin/nginx", "nginx"]
        .into_iter()
        .find(|p| std::process::Command::new(p).arg("-v").output().is_ok())
        .expect("nginx is needed (the test command in README installs it)");
    let mut nginx = Stop(
        std::process::Command::new(exe)
            .arg("-p")
            .arg(&d)
            .arg("-c")
            .arg(d.join("nginx.conf"))
            .spawn()
            .expect("nginx starts"),
    );
    listening(nginx_addr, &mut nginx, "nginx");

    // The crawl, signed: twice, so that the second finds the agent's keys
    // in the gate (its first request is unverified while they are fetched,
    // off the request's path).
    let crawl = |pass: &str| {
        let port = port.to_string();
        let dns = sim.dns.to_string();
        let key = arg(&key_file).to_owned();
        let agent = agent.clone();
        let pass = pass.to_owned();
        std::thread::spawn(move || {
            run(&[
                "fetch",
                "--dns",
                &dns,
                "--allow-private",
                "--http-port",
                &port,
                "--min-gap",
                "200ms",
                "--user-agent",
                "SignedBot/1.0 (+https://crawler.example/bot)",
                "--signing-key",
                &key,
                "--signature-agent",
                &agent,
                &format!("http://s0.hp.test/?pass={pass}"),
                &format!("http://s1.hp.test/?pass={pass}"),
                &format!("http://s2.hp.test/?pass={pass}"),
            ])
        })
        .join()
        .expect("fetch")
    };
    let o = crawl("1");
    assert!(o.status.code().is_some_and(|c| c < 2), "{}", stderr(&o));
    let t = Instant::now();
    while keys_server.hits() == 0 {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "the gate fetches the agent's keys"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let o = crawl("2");
    assert!(o.status.code().is_some_and(|c| c < 2), "{}", stderr(&o));
    drop(nginx);

    // nginx's log: the gate's verdict on every signed request of the
    // second pass is `verified`.
    let log = std::fs::read_to_string(d.join("access.log")).expect("access log");
    // (s1's robots.txt keeps every crawler out of `/`: no page there.)
    let pages: Vec<&str> = log.lines().filter(|l| l.contains("pass=2")).collect();
    assert_eq!(pages.len(), 2, "{log}");
    // Every request after the first pass's last one: robots.txt and pages.
    let lines: Vec<&str> = log.lines().collect();
    let last_first = lines
        .iter()
        .rposition(|l| l.contains("pass=1"))
        .expect("pass 1");
    let second = &lines[last_first + 1..];
    assert!(second.len() >= 4, "{log}");
    for l in second {
        assert!(l.ends_with("\"verified\""), "the gate verified it: {l}");
        assert!(l.contains("web-bot-auth"), "signed: {l}");
    }
    assert!(
        !log.lines().any(|l| l.ends_with("\"invalid\"")),
        "no signature was invalid: {log}"
    );

    // The honeypot's report: the crawler signed, and its signatures held.
    drop(gate);
    drop(honeypot);
    let o = run(&[
        "honeypot",
        "report",
        "--log",
        arg(&hp_log),
        "--registry",
        arg(&registry),
        "--allow-private",
        "--ca-file",
        arg(&ca_file),
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    let crawler = v["crawlers"]
        .as_array()
        .expect("crawlers")
        .iter()
        .find(|c| c["signatures"]["signed"].as_u64().unwrap_or(0) > 0)
        .unwrap_or_else(|| panic!("a crawler that signed: {v}"));
    assert_eq!(
        crawler["signatures"]["verified"], crawler["signatures"]["signed"],
        "{crawler}"
    );

    // `logs analyze` on nginx's log: every signed request verified with
    // the agent's keys, the agent the registry names.
    let o = run(&[
        "logs",
        "analyze",
        arg(&d.join("access.log")),
        "--log-format",
        LOG_FORMAT,
        "--registry",
        arg(&registry),
        "--verify",
        "--allow-private",
        "--ca-file",
        arg(&ca_file),
        "--format",
        "json",
        "--no-progress",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).expect("json");
    let a = &v["signature_agents"][0];
    assert_eq!(a["agent"], agent.as_str(), "{v}");
    assert_eq!(a["robot"], "SignedBot");
    assert!(a["signed"].as_u64().unwrap_or(0) >= 6, "{a}");
    assert_eq!(a["verified"], a["signed"], "{a}");
}

/// docs/crawling.md's local recipe, run as written: a key set served by
/// real Caddy over HTTPS on localhost (its local CA), a request signed by
/// `keys sign`, and `verify --request` finding the key at the JWK Set URL
/// (draft-ietf-webbotauth-httpsig-protocol-01: fetched as sent, read as a
/// JWK Set, `application/json` accepted away from the well-known URI). The
/// only changes: a free port for 8443, a wait for it instead of `sleep 2`,
/// and Caddy stopped at the end.
#[test]
fn the_local_key_directory_recipe_runs_as_written() {
    let doc = std::fs::read_to_string(crate::root().join("docs/crawling.md")).expect("doc");
    let marker = "<!-- run by: the_local_key_directory_recipe_runs_as_written -->";
    let at = doc.find(marker).expect("the recipe");
    let start = at + doc[at..].find("```sh\n").expect("its block") + "```sh\n".len();
    let block = &doc[start..start + doc[start..].find("```").expect("its end")];
    assert_eq!(block.lines().count(), 5, "five lines, as promised");
    let caddy = ["/usr/bin/caddy", "caddy"]
        .into_iter()
        .find(|p| {
            std::process::Command::new(p)
                .arg("version")
                .output()
                .is_ok()
        })
        .expect("Caddy is needed (the test command in README installs it)");
    let d = scratch("key-directory-recipe");
    let bin = d.join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_botscope"), bin.join("botscope")).expect("link");
    std::os::unix::fs::symlink(caddy_path(caddy), bin.join("caddy")).expect("link");
    let port = free_port(IpAddr::from([127, 0, 0, 1]));
    let wait = format!(
        "& for i in $(seq 300); do (exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && break; sleep 0.1; done"
    );
    let script = block
        .replace("8443", &port.to_string())
        .replace("& sleep 2", &wait);
    assert_ne!(script, block);
    let o = std::process::Command::new("timeout")
        .args([
            "120",
            "bash",
            "-c",
            &format!("{script}\nkill %1 2>/dev/null; wait\n"),
        ])
        .current_dir(&d)
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .env("HOME", &d)
        .env("XDG_CONFIG_HOME", d.join("config"))
        .output()
        .expect("bash");
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    let agent = format!("https://localhost:{port}/jwks.json");
    assert!(
        out.contains(&format!("signature\tverified\t{agent}\t")),
        "{out}\n{err}"
    );
    assert!(err.contains("a JWK Set URL, fetched as sent"), "{err}");
    assert!(err.contains(&format!("identifier {agent}")), "{err}");
    assert!(d.join("request.txt").is_file());
}

/// The executable `caddy` names (a full path for the symlink).
fn caddy_path(name: &str) -> std::path::PathBuf {
    if name.starts_with('/') {
        return name.into();
    }
    let o = std::process::Command::new("sh")
        .args(["-c", "command -v caddy"])
        .output()
        .expect("sh");
    String::from_utf8_lossy(&o.stdout).trim().into()
}
