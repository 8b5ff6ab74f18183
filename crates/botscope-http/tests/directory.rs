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
        ..Directory::default()
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
    // Registered with its query: it answers only what is fetched as sent.
    server.set(
        "/jwks?v=2",
        Canned::ok(
            &[("Content-Type", "application/jwk-set+json; charset=utf-8")],
            body(&key).as_bytes(),
        ),
    );
    server.set(
        "/text",
        Canned::ok(&[("Content-Type", "text/plain")], body(&key).as_bytes()),
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
    // draft-ietf-webbotauth-httpsig-protocol-01: a Signature-Agent URL is
    // fetched as sent and read as a JWK Set; the directory media type is
    // required only at the well-known URI.
    for (path, reading) in [("/json", "key-set"), ("/jwks?v=2", "key-set")] {
        let got = fetch_directory(&format!("{base}{path}"), &cfg, NOW)
            .await
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        assert_eq!(got.agent.reading.as_str(), reading);
        assert_eq!(got.directory.key(&key.keyid()), Some(&key.public()));
        assert!(!got.agent.identifier.contains('?'), "the query is dropped");
    }
    let e = fails(fetch_directory(&format!("{base}/text"), &cfg, NOW).await);
    assert!(
        matches!(&e, DirectoryError::MediaType { got, .. } if got == "text/plain"),
        "{e}"
    );
    // At the well-known URI, the directory media type is required, and a
    // JWK's `kid` must be its thumbprint.
    let other = FileServer::start_tls_canned(HashMap::new(), &ca);
    other.set(
        WELL_KNOWN,
        Canned::ok(
            &[("Content-Type", "application/jwk-set+json")],
            body(&key).as_bytes(),
        ),
    );
    let e = fails(fetch_directory(&other.url(), &cfg, NOW).await);
    assert!(
        e.to_string()
            .contains("not application/http-message-signatures-directory+json"),
        "{e}"
    );
    let labelled = format!(
        r#"{{"keys":[{{"kty":"OKP","crv":"Ed25519","kid":"my-label","x":"{}"}}]}}"#,
        key.public().to_jwk()["x"].as_str().expect("x")
    );
    other.set(WELL_KNOWN, Canned::ok(&typed, labelled.as_bytes()));
    let got = fetch_directory(&other.url(), &cfg, NOW)
        .await
        .expect("read");
    assert!(
        got.directory.keys.is_empty(),
        "a kid that is not the thumbprint"
    );
    assert!(got.directory.skipped[0].contains("not its thumbprint"));
    other.set(
        "/labelled",
        Canned::ok(&[("Content-Type", "application/json")], labelled.as_bytes()),
    );
    let got = fetch_directory(&format!("{}/labelled", other.url()), &cfg, NOW)
        .await
        .expect("read");
    assert_eq!(
        got.directory.key(&key.keyid()),
        Some(&key.public()),
        "elsewhere a kid is its operator's label"
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
    assert!(
        e.to_string()
            .contains("signed by an authority not trusted here"),
        "{e}"
    );
    // A server whose certificate is a CA's: said in words.
    let bad_ca = TestCa::with_ca_as_server();
    let bad = FileServer::start_tls_canned(HashMap::new(), &bad_ca);
    let e = fails(fetch_directory(&bad.url(), &config(&bad_ca, true), NOW).await);
    assert!(
        e.to_string()
            .contains("the server's certificate for 127.0.0.1 is a CA certificate"),
        "{e}"
    );
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
            refresh: Duration::ZERO,
            reserved: 0,
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
    // Kept by identifier: the well-known URL spelled out, with a query,
    // is the same agent, not fetched again.
    let spelled = format!("{agent}/.well-known/http-message-signatures-directory?x=1");
    assert_eq!(
        keys.lookup(Some(&spelled), &key.keyid()),
        Lookup::Key(key.public())
    );
    assert_eq!(server.hits(), hits);
    // The draft, "Discovery Failure": a directory that fails to resolve
    // "MUST NOT evict a cached entry". Stale, refetched, failing: the keys
    // stay.
    server.set(
        WELL_KNOWN,
        Canned::status("503 Service Unavailable", &[], b""),
    );
    cache.expire();
    let before = cache.stats().failures;
    let mut refreshed = false;
    for _ in 0..200 {
        assert_eq!(
            keys.lookup(Some(&agent), &key.keyid()),
            Lookup::Key(key.public()),
            "a failed refresh keeps the key"
        );
        if cache.stats().failures > before {
            refreshed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(refreshed, "the refresh was tried and failed");
    assert_eq!(
        keys.lookup(Some(&agent), &key.keyid()),
        Lookup::Key(key.public())
    );
    // A directory that resolves without the key is evidence: it replaces
    // what was kept.
    let newer = SigningKey::generate().expect("key");
    server.set(
        WELL_KNOWN,
        signed(&newer, agent.trim_start_matches("https://")),
    );
    cache.expire();
    let mut replaced = false;
    for _ in 0..200 {
        if keys.lookup(Some(&agent), &key.keyid()) == Lookup::NotListed {
            replaced = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(replaced, "a resolved directory without the key removes it");
    // A flood of made-up agents: at most `agents` entries, each agent
    // fetched at most once, one at a time; the rest refused.
    for i in 0..50 {
        let _ = keys.lookup(Some(&format!("https://made-up-{i}.invalid")), "k");
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let stats = cache.stats();
    assert!(stats.agents <= 2, "{stats:?}");
    assert!(stats.refused > 0, "{stats:?}");
    assert!(stats.fetches <= 1 + 50, "{stats:?}");
}

/// Found by a probe of the gate: about 1,100 requests naming made-up
/// agents filled the cache with failures kept 5 minutes, evicting the
/// real agents and locking new ones out. Failures now hold at most a
/// quarter of the table and push out only older failures; one client
/// network brings at most a few new agents a minute.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn made_up_agents_crowd_out_neither_known_nor_new_real_agents() {
    use botscope_http::keycache::{Bounds, KeyCache, NEW_AGENTS_PER_NETWORK};
    use botscope_httpsig::{Keys, Lookup};
    let ca = TestCa::new();
    let real = |key: &SigningKey| {
        let server = FileServer::start_tls_canned(HashMap::new(), &ca);
        let agent = server.url();
        server.set(
            WELL_KNOWN,
            signed(key, agent.trim_start_matches("https://")),
        );
        (server, agent)
    };
    let (k1, k2) = (
        SigningKey::generate().expect("key"),
        SigningKey::generate().expect("key"),
    );
    let (_s1, first) = real(&k1);
    let (_s2, second) = real(&k2);
    let cache = KeyCache::new(
        config(&ca, true),
        Bounds {
            agents: 16,
            in_flight: 4,
            refresh: Duration::from_secs(60),
            reserved: 0,
        },
    );
    let client = |i: u32| std::net::IpAddr::from([198, 51, (i / 256) as u8, (i % 256) as u8]);
    let wait_for = |agent: String, keyid: String, from: std::net::IpAddr| {
        let cache = cache.clone();
        async move {
            for _ in 0..500 {
                if let Lookup::Key(k) = cache.keys_for(NOW, from).lookup(Some(&agent), &keyid) {
                    return k;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            panic!("{agent} never fetched: {:?}", cache.stats());
        }
    };
    assert_eq!(
        wait_for(first.clone(), k1.keyid(), client(0)).await,
        k1.public()
    );
    // A flood of made-up agents (refused connections on loopback), each
    // from another network so that no quota stops it.
    for i in 0..1_100u32 {
        let agent = format!("https://127.0.{}.{}:9/", i / 250, 1 + i % 250);
        let _ = cache
            .keys_for(NOW, client(256 * (i + 1)))
            .lookup(Some(&agent), "k");
        if i % 50 == 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    let stats = cache.stats();
    assert!(stats.agents <= 16, "{stats:?}");
    assert!(stats.failures > 4, "{stats:?}");
    // The known agent is still known, and a new real one gets in.
    assert_eq!(
        cache
            .keys_for(NOW, client(1))
            .lookup(Some(&first), &k1.keyid()),
        Lookup::Key(k1.public())
    );
    assert_eq!(
        wait_for(second.clone(), k2.keyid(), client(7)).await,
        k2.public()
    );
    // One network brings at most its quota of new agents a minute.
    let net = std::net::IpAddr::from([203, 0, 113, 1]);
    let refused: Vec<Lookup> = (0..NEW_AGENTS_PER_NETWORK + 3)
        .map(|i| {
            let l = cache
                .keys_for(NOW, net)
                .lookup(Some(&format!("https://127.9.0.{}:9/", i + 1)), "k");
            std::thread::sleep(Duration::from_millis(5));
            l
        })
        .collect();
    let last = refused.last().expect("answers");
    assert!(
        matches!(last, Lookup::Unknown(w) if w.contains("from this network")),
        "{last:?}"
    );
}

/// Found by a probe of the gate: two signed requests a second naming
/// agents whose directory servers answer a byte a second kept all 8 fetch
/// slots busy for their 10 s timeout, and no new genuine agent was
/// fetched. Now a client network and a directory host have one fetch in
/// flight each, a head is due within the first-byte deadline, and slots
/// are kept for the registry's agents.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_directories_cannot_starve_the_fetch_slots() {
    use botscope_http::keycache::{Bounds, KeyCache};
    use botscope_httpsig::{Keys, Lookup};
    let ca = TestCa::new();
    let slow: Vec<String> = (1..=10)
        .map(|i| {
            format!(
                "https://{}/",
                botscope_testkit::trickle(&format!("127.0.3.{i}"))
            )
        })
        .collect();
    let genuine: Vec<(FileServer, String, SigningKey)> = (0..9)
        .map(|_| {
            let key = SigningKey::generate().expect("key");
            let server = FileServer::start_tls_canned(HashMap::new(), &ca);
            let agent = server.url();
            server.set(
                WELL_KNOWN,
                signed(&key, agent.trim_start_matches("https://")),
            );
            (server, agent, key)
        })
        .collect();
    // The last genuine agent is the registry's.
    let registered = genuine[8].1.clone();
    let cache = KeyCache::with_priority(
        DirectoryConfig {
            first_byte: Duration::from_millis(500),
            ..config(&ca, true)
        },
        Bounds {
            agents: 1024,
            in_flight: 8,
            refresh: Duration::from_secs(60),
            reserved: 2,
        },
        vec![registered.clone()],
    );
    let net = |a: u8, b: u8| std::net::IpAddr::from([198, a, b, 1]);
    // Attackers name slow agents from `networks` networks, every 20 ms,
    // while `want` (agent, key, client) are looked up until fetched.
    let attack_while =
        |networks: u8, want: Vec<(String, String, std::net::IpAddr)>, within: u64| {
            let cache = cache.clone();
            let slow = slow.clone();
            async move {
                let started = std::time::Instant::now();
                let mut left = want;
                let mut i = 0usize;
                while !left.is_empty() {
                    assert!(
                        started.elapsed() < Duration::from_secs(within),
                        "{} genuine agents not fetched: {:?}",
                        left.len(),
                        cache.stats()
                    );
                    for n in 0..networks {
                        i += 1;
                        let agent = &slow[i % slow.len()];
                        let _ = cache
                            .keys_for(NOW, net(200, n))
                            .lookup(Some(&format!("{agent}?n={i}")), "k");
                    }
                    left.retain(|(agent, keyid, from)| {
                        !matches!(
                            cache.keys_for(NOW, *from).lookup(Some(agent), keyid),
                            Lookup::Key(_)
                        )
                    });
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            }
        };
    // Two attacking networks: eight genuine new agents are fetched.
    let want = genuine[..8]
        .iter()
        .enumerate()
        .map(|(i, (_, agent, key))| (agent.clone(), key.keyid(), net(1, i as u8)))
        .collect();
    attack_while(2, want, 4).await;
    // Thirty: every slot open to new agents is held, by turns; the
    // registry's agent is fetched on a kept slot.
    let (_, agent, key) = &genuine[8];
    attack_while(30, vec![(agent.clone(), key.keyid(), net(2, 1))], 4).await;
    let stats = cache.stats();
    assert!(stats.refused > 0, "{stats:?}");
}
