//! Key directories fetched from a real HTTPS server on loopback: the
//! signed directory verifies; a redirect, another media type, an oversized
//! or wrongly signed directory and an address the guard refuses do not.

use std::collections::HashMap;
use std::time::Duration;

use botscope_http::Trust;
use botscope_http::directory::{
    DEFAULT_KEEP, DirectoryConfig, DirectoryError, MEDIA_TYPE, WELL_KNOWN, fetch_directory,
};
use botscope_httpsig::{Directory, Outcome, Request, SigningKey, sign_directory};
use botscope_testkit::ipdb::{Canned, FileServer, TestCa};

const NOW: i64 = 1_780_000_000;

fn config(ca: &TestCa, allow_private: bool) -> DirectoryConfig {
    DirectoryConfig {
        trust: Trust {
            extra: botscope_http::certificates(ca.pem.as_bytes()).expect("ca"),
            ..Trust::system()
        },
        allow_private,
        timeout: Duration::from_secs(10),
        ..DirectoryConfig::default()
    }
}

fn body(key: &SigningKey) -> String {
    Directory {
        keys: vec![(key.keyid(), key.public())],
        skipped: Vec::new(),
    }
    .to_json()
}

/// `key`'s directory, its response signed for a request to `authority`.
fn signed(key: &SigningKey, authority: &str) -> Canned {
    let body = body(key);
    let req = Request::new("GET", "https", authority, WELL_KNOWN, Vec::new());
    let mut headers =
        sign_directory(&req, body.as_bytes(), &[key], NOW - 10, NOW + 3600).expect("sign");
    headers.push(("Content-Type".into(), MEDIA_TYPE.into()));
    headers.push(("Cache-Control".into(), "max-age=600".into()));
    Canned {
        status: "200 OK".into(),
        headers,
        body: body.into_bytes(),
    }
}

#[tokio::test]
async fn directories_over_https() {
    let ca = TestCa::new();
    let key = SigningKey::generate().expect("key");
    let server = FileServer::start_tls_canned(HashMap::new(), &ca);
    let base = server.url();
    let authority = base.trim_start_matches("https://").to_owned();
    let typed = [("Content-Type", MEDIA_TYPE)];
    server.set(WELL_KNOWN, signed(&key, &authority));
    server.set("/unsigned", Canned::ok(&typed, body(&key).as_bytes()));
    server.set("/wrong-host", signed(&key, "other.test"));
    server.set(
        "/redirect",
        Canned::status("302 Found", &[("Location", "https://elsewhere.test/")], b""),
    );
    server.set(
        "/json",
        Canned::ok(
            &[("Content-Type", "application/json")],
            body(&key).as_bytes(),
        ),
    );
    server.set("/large", Canned::ok(&typed, &vec![b' '; 70_000]));
    server.set("/missing-keys", Canned::ok(&typed, b"{}"));
    let cfg = config(&ca, true);

    let got = fetch_directory(&base, &cfg, NOW)
        .await
        .expect("the directory");
    assert_eq!(got.signature, Outcome::Verified);
    assert_eq!(got.directory.key(&key.keyid()), Some(&key.public()));
    assert_eq!(got.keep, Duration::from_secs(600));

    let got = fetch_directory(&format!("{base}/unsigned"), &cfg, NOW)
        .await
        .expect("unsigned");
    assert_eq!(got.signature, Outcome::Unverified);
    assert_eq!(got.keep, DEFAULT_KEEP);

    let fails = |r: Result<_, DirectoryError>| r.expect_err("an error");
    let e = fails(fetch_directory(&format!("{base}/redirect"), &cfg, NOW).await);
    assert!(
        matches!(e, DirectoryError::Redirect { status: 302, .. }),
        "{e}"
    );
    let e = fails(fetch_directory(&format!("{base}/json"), &cfg, NOW).await);
    assert!(
        matches!(&e, DirectoryError::MediaType(m) if m == "application/json"),
        "{e}"
    );
    let e = fails(fetch_directory(&format!("{base}/large"), &cfg, NOW).await);
    assert!(matches!(e, DirectoryError::TooLarge), "{e}");
    let e = fails(fetch_directory(&format!("{base}/missing-keys"), &cfg, NOW).await);
    assert!(matches!(e, DirectoryError::Parse(_)), "{e}");
    let e = fails(fetch_directory(&format!("{base}/wrong-host"), &cfg, NOW).await);
    assert!(matches!(e, DirectoryError::Signature(_)), "{e}");
    let e = fails(fetch_directory(&format!("{base}/nothing"), &cfg, NOW).await);
    assert!(matches!(e, DirectoryError::Status(404)), "{e}");

    // Without --allow-private, loopback is not fetched at all.
    let before = server.hits();
    let e = fails(fetch_directory(&base, &config(&ca, false), NOW).await);
    assert!(matches!(e, DirectoryError::Private { .. }), "{e}");
    assert!(e.to_string().contains("--allow-private"), "{e}");
    assert_eq!(server.hits(), before, "nothing was sent");
    // Plain http is refused before any connection.
    let e = fails(fetch_directory(&base.replace("https", "http"), &cfg, NOW).await);
    assert!(matches!(e, DirectoryError::Url(_)), "{e}");
    // A certificate the client does not trust.
    let untrusting = DirectoryConfig {
        trust: Trust::system(),
        ..cfg.clone()
    };
    let e = fails(fetch_directory(&base, &untrusting, NOW).await);
    assert!(matches!(e, DirectoryError::Fetch(_)), "{e}");
}

/// The cache a server verifies with: the first lookup of an agent does
/// not wait (unverified, fetching), later ones find the key; the number
/// of agents and of fetches in flight is bounded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_key_cache_fetches_off_the_request_path_within_bounds() {
    use botscope_http::keycache::{Bounds, KeyCache};
    use botscope_httpsig::{Keys, Lookup};
    let ca = TestCa::new();
    let key = SigningKey::generate().expect("key");
    let server = FileServer::start_tls_canned(HashMap::new(), &ca);
    let agent = server.url();
    server.set(
        WELL_KNOWN,
        signed(&key, agent.trim_start_matches("https://")),
    );
    let cache = KeyCache::new(
        config(&ca, true),
        Bounds {
            agents: 2,
            in_flight: 1,
            refresh: Duration::from_secs(60),
        },
    );
    let keys = cache.keys(NOW);
    let first = keys.lookup(Some(&agent), &key.keyid());
    assert!(
        matches!(&first, Lookup::Unknown(w) if w.contains("being fetched")),
        "{first:?}"
    );
    // While it is in flight, another agent is refused a fetch (one at a
    // time), and nothing waits.
    let other = keys.lookup(Some("https://127.0.0.1:9/"), "k");
    assert!(matches!(&other, Lookup::Unknown(_)), "{other:?}");
    let mut found = None;
    for _ in 0..200 {
        match keys.lookup(Some(&agent), &key.keyid()) {
            Lookup::Key(k) => {
                found = Some(k);
                break;
            }
            _ => tokio::time::sleep(Duration::from_millis(10)).await,
        }
    }
    assert_eq!(found, Some(key.public()));
    assert_eq!(
        keys.lookup(Some(&agent), "someone-elses-key"),
        Lookup::NotListed
    );
    let hits = server.hits();
    for _ in 0..100 {
        let _ = keys.lookup(Some(&agent), &key.keyid());
    }
    assert_eq!(server.hits(), hits, "a kept directory is not fetched again");
    // A flood of made-up agents: at most `agents` entries, the rest refused.
    for i in 0..50 {
        let _ = keys.lookup(Some(&format!("https://made-up-{i}.invalid")), "k");
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let stats = cache.stats();
    assert!(stats.agents <= 2, "{stats:?}");
    assert!(stats.refused > 0, "{stats:?}");
    assert!(stats.fetches <= 3 + 2, "{stats:?}");
}
