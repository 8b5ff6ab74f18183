//! `scripts/package`: the Debian package built, installed by dpkg into an
//! empty root, its binary run with the configuration it ships, and its
//! systemd unit checked by `systemd-analyze verify` and `security`.

#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::Command;

fn run(cmd: &mut Command) -> std::process::Output {
    let o = cmd.output().unwrap();
    assert!(
        o.status.success(),
        "{cmd:?}: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// What a Debian system with systemd has besides the package: the shell
/// and `kill` the unit runs, and systemd's own units (`sysinit.target` …).
fn like_a_debian_system(root: &Path) {
    std::fs::create_dir_all(root.join("bin")).unwrap();
    for exe in ["sh", "kill"] {
        std::fs::copy(Path::new("/bin").join(exe), root.join("bin").join(exe)).unwrap();
    }
    let units = root.join("usr/lib/systemd/system");
    std::fs::create_dir_all(&units).unwrap();
    for e in std::fs::read_dir("/lib/systemd/system").unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() {
            std::fs::copy(e.path(), units.join(e.file_name())).unwrap();
        }
    }
}

#[test]
fn the_package_installs_runs_and_its_unit_is_sandboxed() {
    let dir = crate::scratch("package");
    let o = run(
        Command::new(botscope_testkit::root().join("scripts/package"))
            .args([
                "--binary",
                env!("CARGO_BIN_EXE_botscope"),
                "--fast",
                "--out",
            ])
            .arg(dir.join("out")),
    );
    let deb = String::from_utf8(o.stdout).unwrap().trim().to_owned();
    assert!(deb.ends_with(".deb") && Path::new(&deb).is_file(), "{deb}");
    // docs/gate.md's install block names this package and this unit.
    let doc = std::fs::read_to_string(botscope_testkit::root().join("docs/gate.md")).unwrap();
    let block = &doc[doc.find("## Install").unwrap()..];
    let block = &block[..block.find("\n```\n").unwrap()];
    let name = Path::new(&deb).file_name().unwrap().to_str().unwrap();
    assert!(
        block.contains(&format!("apt install ./target/debian/{name}")),
        "{name} in {block}"
    );
    assert!(
        block.contains("systemctl enable --now botscope-gate\n")
            || block.ends_with("botscope-gate")
    );
    // Into an empty root, as dpkg installs it.
    let root = dir.join("root");
    for d in ["var/lib/dpkg/info", "var/lib/dpkg/updates"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    std::fs::write(root.join("var/lib/dpkg/status"), "").unwrap();
    run(Command::new("dpkg")
        .arg(format!("--root={}", root.display()))
        .args(["--log=/dev/null", "--force-depends", "-i", &deb]));
    let listed = run(Command::new("dpkg")
        .arg(format!("--root={}", root.display()))
        .args(["-L", "botscope"]));
    let listed = String::from_utf8(listed.stdout).unwrap();
    for f in [
        "/usr/bin/botscope",
        "/lib/systemd/system/botscope-gate.service",
        "/etc/botscope/policy.yaml",
        "/etc/botscope/gate.env",
        "/etc/botscope/robots/default.txt",
        "/usr/share/doc/botscope/gate.md",
        "/usr/share/botscope/monitoring/botscope-gate.rules.yml",
        "/usr/share/botscope/monitoring/botscope-gate.dashboard.json",
        "/etc/fail2ban/filter.d/botscope-gate.conf",
        "/etc/fail2ban/jail.d/botscope-gate.conf",
    ] {
        assert!(listed.lines().any(|l| l == f), "{f} in {listed}");
    }
    // The fail2ban filter as installed reads the gate's catches, and
    // nothing else, with Debian's fail2ban-regex.
    let events = dir.join("events.log");
    std::fs::write(
        &events,
        "2026-12-06T17:20:00Z catch kind=robots client=203.0.113.9 method=GET path=\"/t-a/b\" ua=\"x\"\n\
         2026-12-06T17:20:01Z refuse rule=\"trapped\" action=deny client=203.0.113.9 method=GET path=\"/\"\n",
    )
    .unwrap();
    let regex = run(Command::new("fail2ban-regex")
        .args(["-o", "<ip> <time>"])
        .arg(&events)
        .arg(root.join("etc/fail2ban/filter.d/botscope-gate.conf")));
    assert_eq!(
        String::from_utf8_lossy(&regex.stdout).trim(),
        "203.0.113.9 1796577600"
    );
    // The configuration is the user's: dpkg keeps their edits.
    let conffiles =
        std::fs::read_to_string(root.join("var/lib/dpkg/info/botscope.conffiles")).unwrap();
    assert!(
        conffiles.contains("/etc/botscope/policy.yaml"),
        "{conffiles}"
    );
    // The installed binary runs, and the shipped policy is one it takes.
    let bin = root.join("usr/bin/botscope");
    let v = run(Command::new(&bin).arg("--version"));
    assert!(
        String::from_utf8_lossy(&v.stdout).starts_with("botscope "),
        "{v:?}"
    );
    let policy = root.join("etc/botscope/policy.yaml");
    run(Command::new(&bin).args(["policy", "check"]).arg(&policy));
    // The unit: each setting the sandbox needs.
    let unit_path = root.join("lib/systemd/system/botscope-gate.service");
    let unit = std::fs::read_to_string(&unit_path).unwrap();
    for setting in [
        "DynamicUser=yes",
        "NoNewPrivileges=yes",
        "ProtectSystem=strict",
        "ProtectHome=yes",
        "PrivateTmp=yes",
        "CapabilityBoundingSet=\n",
        "StateDirectory=botscope",
        "LogsDirectory=botscope",
        "ConfigurationDirectory=botscope",
        "ExecReload=/bin/kill -HUP $MAINPID",
        "Restart=on-failure",
    ] {
        assert!(unit.contains(setting), "{setting:?} in the unit");
    }
    // The gate as the unit starts it (its paths under the root; the
    // state directory's key made as ExecStartPre makes it).
    let exec = unit
        .split("ExecStart=")
        .nth(1)
        .unwrap()
        .split("\nExecReload")
        .next()
        .unwrap()
        .replace("\\\n", " ");
    let rooted = |p: &str| p.replacen('/', &format!("{}/", root.display()), 1);
    let state = root.join("var/lib/botscope");
    std::fs::create_dir_all(&state).unwrap();
    std::fs::create_dir_all(root.join("var/log/botscope")).unwrap();
    std::fs::write(state.join("challenge.key"), [5u8; 32]).unwrap();
    // The operators' token as ExecStartPre makes it: 64 hexadecimal digits.
    let pre = unit
        .lines()
        .find(|l| l.starts_with("ExecStartPre=") && l.contains("operator.token"))
        .expect("the token's ExecStartPre");
    let script = pre
        .split_once("-c '")
        .and_then(|(_, s)| s.strip_suffix('\''))
        .expect("sh -c '…'")
        .replace("/var/lib/botscope/", &format!("{}/", state.display()));
    run(Command::new("sh").args(["-c", &script]));
    let token = std::fs::read_to_string(state.join("operator.token")).unwrap();
    assert!(
        token.len() == 64 && token.bytes().all(|b| b.is_ascii_hexdigit()),
        "{token:?}"
    );
    let port = botscope_testkit::free_port();
    let mut args: Vec<String> = exec
        .split_whitespace()
        .skip(1)
        .filter(|a| *a != "$BOTSCOPE_GATE_ARGS")
        .map(|a| {
            if a.starts_with('/') {
                rooted(a)
            } else {
                a.to_owned()
            }
        })
        .collect();
    // gate.env's flags as shipped, but for its address.
    let env = std::fs::read_to_string(root.join("etc/botscope/gate.env")).unwrap();
    let shipped: Vec<String> = env
        .lines()
        .find_map(|l| l.strip_prefix("BOTSCOPE_GATE_ARGS="))
        .expect("BOTSCOPE_GATE_ARGS in gate.env")
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    let mut it = shipped.into_iter();
    while let Some(a) = it.next() {
        if a == "--listen" {
            let _ = it.next();
        } else {
            args.push(a);
        }
    }
    assert!(args.iter().any(|a| a == "--trust-proxy"), "{args:?}");
    args.extend([
        "--listen".into(),
        format!("127.0.0.1:{port}"),
        "--offline".into(),
    ]);
    // `--refresh-lists` would fetch the operators' lists: not here.
    if let Some(i) = args.iter().position(|a| a == "--refresh-lists") {
        args.drain(i..i + 4);
    }
    let mut gate = Command::new(&bin)
        .args(&args)
        .env("HOME", &state)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let t = std::time::Instant::now();
    while std::net::TcpStream::connect(addr).is_err() {
        if let Ok(Some(s)) = gate.try_wait() {
            panic!("the installed gate exited: {s} ({args:?})");
        }
        assert!(t.elapsed() < std::time::Duration::from_secs(20));
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    use std::io::Write;
    write!(
        s,
        "GET /robots.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let r = botscope_testkit::http::read_response(s, "/robots.txt");
    // Its metrics, read with the token through the loopback it trusts.
    let metrics = |more: &str| {
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        write!(
            s,
            "GET /metrics HTTP/1.1\r\nHost: x\r\n{more}Connection: close\r\n\r\n"
        )
        .unwrap();
        botscope_testkit::http::read_response(s, "/metrics").status
    };
    let with_token = metrics(&format!("Authorization: Bearer {token}\r\n"));
    let without = metrics("");
    let _ = gate.kill();
    let _ = gate.wait();
    assert_eq!(r.status, 200);
    assert_eq!((with_token, without), (200, 403));
    assert_eq!(
        r.body,
        std::fs::read_to_string(root.join("etc/botscope/robots/default.txt")).unwrap()
    );
    // systemd's own checks, in the installed root.
    like_a_debian_system(&root);
    let root_arg = format!("--root={}", root.display());
    let o = run(Command::new("systemd-analyze").args([
        "verify",
        &root_arg,
        "/lib/systemd/system/botscope-gate.service",
    ]));
    assert!(
        o.stderr.is_empty() && o.stdout.is_empty(),
        "systemd-analyze verify: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    // Exposure at most 3.0 of 10 ("OK"): `--threshold` counts tenths.
    run(Command::new("systemd-analyze").args([
        "security",
        "--offline=true",
        &root_arg,
        "--threshold=30",
        "--no-pager",
        "/lib/systemd/system/botscope-gate.service",
    ]));
}

/// The metric names an expression reads (`botscope_gate_…`, a histogram's
/// series by its family).
fn metric_names(expr: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = expr;
    while let Some(at) = rest.find("botscope_gate_") {
        let tail = &rest[at..];
        let end = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(tail.len());
        let name = &tail[..end];
        let family = ["_bucket", "_sum", "_count"]
            .iter()
            .find_map(|s| name.strip_suffix(s))
            .unwrap_or(name);
        out.push(family.to_owned());
        rest = &tail[end..];
    }
    out
}

/// The shipped Prometheus rules pass `promtool check rules` and their unit
/// tests (`promtool test rules`), and every metric they and the Grafana
/// dashboard read is one a running gate exports.
#[test]
fn the_alerts_and_the_dashboard_read_metrics_the_gate_exports() {
    let monitoring = botscope_testkit::root().join("packaging/monitoring");
    let promtool = ["/usr/bin/promtool", "promtool"]
        .into_iter()
        .find(|p| Command::new(p).arg("--version").output().is_ok())
        .expect("promtool is needed (the test command in README installs prometheus)");
    let o = run(Command::new(promtool)
        .args(["check", "rules", "botscope-gate.rules.yml"])
        .current_dir(&monitoring));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("SUCCESS"),
        "{o:?}"
    );
    run(Command::new(promtool)
        .args(["test", "rules", "botscope-gate.rules.test.yml"])
        .current_dir(&monitoring));
    // A gate with every family: a decision log, identity, an upstream,
    // the fleet's state.
    let redis = botscope_testkit::Redis::start();
    let dir = crate::scratch("monitoring");
    let robots = dir.join("robots");
    std::fs::create_dir_all(&robots).unwrap();
    std::fs::write(robots.join("default.txt"), "User-agent: *\nAllow: /\n").unwrap();
    let port = botscope_testkit::free_port();
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let mut gate = Command::new(env!("CARGO_BIN_EXE_botscope"))
        .args(["gate", "--offline", "--listen", &addr.to_string()])
        .arg("--robots-dir")
        .arg(&robots)
        .arg("--decision-log")
        .arg(dir.join("decisions.jsonl"))
        .args(["--upstream", "http://127.0.0.1:9"])
        .args(["--state", &redis.url(0)])
        .env("HOME", &dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let t = std::time::Instant::now();
    while std::net::TcpStream::connect(addr).is_err() {
        assert!(t.elapsed() < std::time::Duration::from_secs(20));
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    use std::io::Write;
    write!(
        s,
        "GET /.botscope/metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let exported = botscope_testkit::http::read_response(s, "metrics").body;
    let _ = gate.kill();
    let _ = gate.wait();
    let families: Vec<&str> = exported
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(families.len() > 5, "{exported}");
    let rules = std::fs::read_to_string(monitoring.join("botscope-gate.rules.yml")).unwrap();
    let dashboard: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(monitoring.join("botscope-gate.dashboard.json")).unwrap(),
    )
    .unwrap();
    let mut exprs = vec![rules];
    for p in dashboard["panels"].as_array().unwrap() {
        for t in p["targets"].as_array().unwrap() {
            exprs.push(t["expr"].as_str().unwrap().to_owned());
        }
    }
    let mut read = 0;
    for e in &exprs {
        for name in metric_names(e) {
            read += 1;
            assert!(
                families.contains(&name.as_str()),
                "{name} is read but not exported ({families:?})"
            );
        }
    }
    assert!(read > 10, "{read} metric reads");
}
