//! draft-ietf-webbotauth-httpsig-protocol-01 (29 October 2026), rule by
//! rule: each test quotes the text it holds, and every MUST has a test
//! that a verifier breaking it would fail. The vectors (the draft's
//! appendix and cloudflare/web-bot-auth's JSON) are in
//! `data/web-bot-auth-vectors.json` and are checked at their own time.

use botscope_httpsig::{
    Directory, KeySet, Outcome, Policy, PublicKey, Reason, Request, Response, SignSpec, SigningKey,
    Verdict, sign_request, verify_directory_response, verify_request,
};
use serde_json::Value;

/// The vectors' `created`.
const CREATED: i64 = 1_735_689_600;
/// The far `expires` of the vectors that "do not age" (the year 2124).
const FAR: i64 = 4_889_289_600;
/// The agent every vector names.
const AGENT: &str = "https://signature-agent.test";
const AGENT_ID: &str = "https://signature-agent.test/.well-known/http-message-signatures-directory";

fn data() -> Value {
    serde_json::from_str(include_str!("data/web-bot-auth-vectors.json")).expect("vectors")
}

fn key(data: &Value, name: &str) -> PublicKey {
    PublicKey::from_jwk(&data["keys"][name]).expect("key")
}

/// The limit these checks are made under, stated: the vectors' own
/// validity (a century), as `verify --max-validity` takes it; the test
/// keys accepted, as `verify --allow-test-keys` does.
fn at_their_own_time() -> Policy {
    Policy {
        max_validity: FAR - CREATED,
        ..Policy::with_test_keys()
    }
}

fn request(v: &Value) -> Request {
    let mut headers = Vec::new();
    if let Some(a) = v["signature_agent"].as_str() {
        headers.push(("Signature-Agent".to_owned(), a.to_owned()));
    }
    for (name, field) in [
        ("Signature-Input", "signature_input"),
        ("Signature", "signature"),
    ] {
        headers.push((
            name.to_owned(),
            v[field].as_str().expect("field").to_owned(),
        ));
    }
    Request::new("GET", "https", "example.com", "/path/to/resource", headers)
}

/// The keys a verifier holds for a vector: from the agent's directory
/// when the request names one, else held by other means.
fn keys_for(v: &Value, key: PublicKey) -> KeySet {
    let mut keys = KeySet::new();
    let agent = v["signature_agent"].as_str().map(|_| AGENT);
    keys.add_key(agent, key);
    keys
}

#[test]
fn every_request_vector_verifies_at_its_own_time() {
    let data = data();
    let vectors = data["requests"].as_array().expect("requests");
    assert_eq!(vectors.len(), 8);
    for v in vectors {
        let name = v["name"].as_str().expect("name");
        let req = request(v);
        let keys = keys_for(v, key(&data, v["key"].as_str().expect("key")));
        let got = verify_request(&req, &keys, CREATED + 60, &at_their_own_time());
        assert_eq!(got.outcome, Outcome::Verified, "{name}: {}", got.reason);
        assert_eq!(got.agent_form, v["agent_form"].as_str(), "{name}");
        assert_eq!(got.each().len(), 1, "{name}: the signature is listed");
        assert!(got.signatures.is_empty(), "one signature is its own list");
        match v["signature_agent"].as_str() {
            Some(_) => {
                assert_eq!(got.identifier().as_deref(), Some(AGENT_ID), "{name}");
                let read = got.agent_url.as_ref().expect("read");
                assert_eq!(read.reading.as_str(), "origin", "{name}");
                assert!(got.notes.is_empty(), "{name}: {:?}", got.notes);
            }
            // "When No URL Is Available": "the header is absent. The
            // identifier is then the keyid thumbprint".
            None => {
                let id = got.identifier().expect("identifier");
                assert!(
                    id.starts_with("urn:ietf:params:oauth:jwk-thumbprint:sha-256:"),
                    "{name}: {id}"
                );
                assert!(id.ends_with(got.keyid.as_deref().expect("keyid")));
                assert!(
                    got.notes.iter().any(|n| n.contains("no Signature-Agent")),
                    "{name}: {:?}",
                    got.notes
                );
            }
        }
        // Under the default policy the same request is refused: the
        // century-long ones for their validity, the others for their key.
        let strict = verify_request(&req, &keys, CREATED + 60, &Policy::default());
        assert_eq!(strict.outcome, Outcome::Invalid, "{name}");
        let expires = v["signature_input"]
            .as_str()
            .expect("input")
            .contains(&format!("expires={FAR}"));
        assert_eq!(
            strict.reason.code(),
            if expires {
                "validity-too-long"
            } else {
                "test-key"
            },
            "{name}: {}",
            strict.reason
        );
    }
}

/// The vectors that expire do, and the message gives the times as RFC
/// 3339.
#[test]
fn the_legacy_vectors_expire_an_hour_after_they_were_made() {
    let data = data();
    let v = &data["requests"][3];
    let keys = keys_for(v, key(&data, "ed25519"));
    let got = verify_request(&request(v), &keys, CREATED + 7200, &at_their_own_time());
    assert_eq!(got.outcome, Outcome::Invalid);
    assert!(matches!(got.reason, Reason::Expired { .. }));
    assert_eq!(
        got.reason.to_string(),
        "expired at 2025-01-01T01:00:00Z (now 2025-01-01T02:00:00Z)"
    );
    let json = got.to_json();
    assert_eq!(json["expires_at"], "2025-01-01T01:00:00Z");
    assert_eq!(json["created_at"], "2025-01-01T00:00:00Z");
    // An invalid signature keeps the agent it names: whose it claims to
    // be is what a site owner reads first.
    let mut named = request(v);
    if v["signature_agent"].as_str().is_none() {
        named
            .headers
            .push(("Signature-Agent".to_owned(), format!("\"{AGENT}\"")));
    }
    let got = verify_request(&named, &keys, CREATED + 7200, &at_their_own_time());
    assert_eq!(got.outcome, Outcome::Invalid);
    assert!(got.agent.is_some(), "{:?}", got.reason);
}

/// "Signed Directory Response": its signature, over `@authority;req` and
/// `content-digest`, holds with the key it lists.
#[test]
fn the_signed_directory_response_vector() {
    let data = data();
    for v in data["directory_responses"].as_array().expect("dirs") {
        let s = |k: &str| v[k].as_str().expect(k).to_owned();
        let req = Request::new(
            "GET",
            "https",
            &s("authority"),
            "/.well-known/http-message-signatures-directory",
            Vec::new(),
        );
        let headers = vec![
            ("Content-Digest".to_owned(), s("content_digest")),
            ("Signature-Input".to_owned(), s("signature_input")),
            ("Signature".to_owned(), s("signature")),
        ];
        let response = |headers: &[(String, String)]| {
            verify_directory_response(
                &req,
                Response {
                    status: 200,
                    headers,
                    request: Some(&req),
                },
                s("body").as_bytes(),
                CREATED + 60,
                &at_their_own_time(),
            )
        };
        let got = response(&headers);
        assert_eq!(got.outcome, Outcome::Verified, "{}", got.reason);
        // "A verifier MUST reject a directory response signature whose
        // `created` is in the future".
        let early = verify_directory_response(
            &req,
            Response {
                status: 200,
                headers: &headers,
                request: Some(&req),
            },
            s("body").as_bytes(),
            CREATED - 3600,
            &at_their_own_time(),
        );
        assert_eq!(early.outcome, Outcome::Invalid);
        assert!(matches!(early.reason, Reason::CreatedInFuture { .. }));
        // "MUST validate the `Content-Digest` field against the response
        // body".
        let mut tampered = headers.clone();
        tampered[0].1 = "sha-256=:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=:".into();
        assert_eq!(response(&tampered).reason, Reason::DigestMismatch);
    }
}

/// cloudflare/web-bot-auth's Signature-Agent parsing vectors, read as
/// draft-01 rules: "A verifier MUST ignore a member that carries
/// parameters".
#[test]
fn signature_agent_headers() {
    let data = data();
    for v in data["signature_agent_headers"].as_array().expect("headers") {
        let want: Vec<String> = v["agents"]
            .as_array()
            .expect("agents")
            .iter()
            .map(|a| a.as_str().expect("agent").to_owned())
            .collect();
        assert_eq!(
            botscope_httpsig::agents_in(v["header"].as_str().expect("header")),
            want,
            "{}",
            v["name"]
        );
    }
}

// The rules, each with a request signed here (a fresh key: no test key).

const NOW: i64 = 1_800_000_000;

fn signed(agent_field: Option<&str>, agent: Option<&str>, key: &SigningKey) -> Request {
    let req = Request::new("GET", "https", "example.com", "/", Vec::new());
    let spec = SignSpec::new(agent, NOW - 10, 300, Some("bm9uY2U=".into()));
    let s = sign_request(&req, key, &spec).expect("sign");
    let mut sent = req.clone();
    sent.headers.extend(s.headers());
    if let Some(f) = agent_field {
        for h in &mut sent.headers {
            if h.0.eq_ignore_ascii_case("signature-agent") {
                f.clone_into(&mut h.1);
            }
        }
    }
    sent
}

fn check(req: &Request, keys: &KeySet) -> Verdict {
    verify_request(req, keys, NOW, &Policy::default())
}

/// "Its member values MUST be String Items that contain an absolute URI,
/// whose scheme MUST be `https`."
#[test]
fn a_member_that_is_not_an_https_url_is_refused() {
    let key = SigningKey::generate().expect("key");
    for bad in ["http://crawler.example", "crawler.example", "https://"] {
        // Signed over the bad value, so only the URL rule can refuse it.
        let req = signed(None, Some(bad), &key);
        let mut keys = KeySet::new();
        keys.add_key(Some(bad), key.public());
        let v = check(&req, &keys);
        assert_eq!(v.outcome, Outcome::Invalid, "{bad}: {}", v.reason);
        assert!(
            v.reason.to_string().contains("absolute https"),
            "{bad}: {}",
            v.reason
        );
    }
}

/// "Dictionary members MUST NOT carry parameters. A verifier MUST ignore a
/// member that carries parameters." A signature whose only way to its
/// keys is such a member is not verified, even when the verifier holds
/// that URL's keys.
#[test]
fn a_member_with_parameters_is_ignored() {
    let key = SigningKey::generate().expect("key");
    let agent = "https://crawler.example";
    let req = Request::new("GET", "https", "example.com", "/", Vec::new());
    let mut spec = SignSpec::new(Some(agent), NOW - 10, 300, None);
    spec.form = botscope_httpsig::AgentForm::Dictionary("agent1".into());
    let s = sign_request(&req, &key, &spec).expect("sign");
    // The signer adds `;type=directory` (earlier drafts) and signs that.
    let field = format!("agent1=\"{agent}\";type=directory");
    let input = s.signature_input.clone();
    let mut with_params = req.clone();
    with_params
        .headers
        .push(("Signature-Agent".into(), field.clone()));
    let base = botscope_httpsig::base::signature_base(
        botscope_httpsig::base::Target::Request(&with_params),
        &botscope_httpsig::base::inputs(&input).expect("input")[0],
    )
    .expect("base");
    let sig = base64_sig(&key.sign(base.as_bytes()));
    with_params.headers.push(("Signature-Input".into(), input));
    with_params
        .headers
        .push(("Signature".into(), format!("sig1=:{sig}:")));
    let mut keys = KeySet::new();
    keys.add_key(Some(agent), key.public());
    let v = check(&with_params, &keys);
    assert_ne!(v.outcome, Outcome::Verified, "{}", v.reason);
    assert_eq!(v.outcome, Outcome::Unverified);
    assert!(v.agent.is_none(), "no agent URL is taken from it");
    assert!(
        v.notes.iter().any(|n| n.contains("carries parameters")),
        "{:?}",
        v.notes
    );
    assert!(v.reason.to_string().contains("ignored"), "{}", v.reason);
    assert!(botscope_httpsig::signature_agents(&with_params).is_empty());
    // The same member without its parameter verifies.
    let plain = signed(None, Some(agent), &key);
    assert_eq!(check(&plain, &keys).outcome, Outcome::Verified);
}

fn base64_sig(b: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(b)
}

/// "Key lookup MUST be keyed on the (URL, key) pair, not on the key
/// alone." A key one agent lists does not verify a signature naming
/// another.
#[test]
fn keys_are_looked_up_by_url_and_keyid() {
    let key = SigningKey::generate().expect("key");
    let req = signed(None, Some("https://victim.example"), &key);
    let mut keys = KeySet::new();
    keys.add_key(Some("https://attacker.example"), key.public());
    keys.insert(Some("https://victim.example"), Directory::default());
    let v = check(&req, &keys);
    assert_eq!(v.outcome, Outcome::Invalid);
    assert!(matches!(v.reason, Reason::KeyNotListed { .. }));
}

/// "Identifiers are compared after normalization as described in Section
/// 6.2.2 of [URI] and Section 6.2.3 of [URI]" and "The URL the verifier
/// resolved is the identifier, with any query discarded": keys kept for
/// one spelling serve another.
#[test]
fn spellings_of_one_agent_share_its_keys() {
    let key = SigningKey::generate().expect("key");
    let mut keys = KeySet::new();
    keys.add_key(Some("https://Crawler.Example:443/"), key.public());
    for sent in [
        "https://crawler.example",
        "https://crawler.example/.well-known/http-message-signatures-directory",
        "https://crawler.example/.well-known/./http-message-signatures-directory?v=2",
    ] {
        let v = check(&signed(None, Some(sent), &key), &keys);
        assert_eq!(v.outcome, Outcome::Verified, "{sent}: {}", v.reason);
        assert_eq!(
            v.identifier().as_deref(),
            Some("https://crawler.example/.well-known/http-message-signatures-directory"),
            "{sent}"
        );
    }
    // Another path is another agent.
    let v = check(
        &signed(None, Some("https://crawler.example/other.json"), &key),
        &keys,
    );
    assert_ne!(v.outcome, Outcome::Verified);
}

/// "A verifier MUST NOT attribute a request to a `Signature-Agent` URL
/// unless it made this association" ("Discovery Failure": "It may still
/// verify the signature if it holds the key by other means, in which case
/// the identifier is the thumbprint").
#[test]
fn a_key_held_by_other_means_attributes_to_the_key_alone() {
    let key = SigningKey::generate().expect("key");
    let req = signed(None, Some("https://crawler.example"), &key);
    let mut keys = KeySet::new();
    keys.fail(Some("https://crawler.example"), "connection refused");
    keys.add_key(None, key.public());
    let v = check(&req, &keys);
    assert_eq!(v.outcome, Outcome::Verified, "{}", v.reason);
    assert!(v.key_alone);
    assert_eq!(
        v.identifier(),
        Some(format!(
            "urn:ietf:params:oauth:jwk-thumbprint:sha-256:{}",
            key.keyid()
        ))
    );
    // Without that key, it is unverified, not invalid: a failed fetch is
    // not evidence about the signer.
    let mut none = KeySet::new();
    none.fail(Some("https://crawler.example"), "connection refused");
    assert_eq!(check(&req, &none).outcome, Outcome::Unverified);
}

/// "Verifiers MUST validate each signature independently against its own
/// covered components and its own key", and "A verifier MUST NOT
/// attribute a signature to a member that signature does not cover."
#[test]
fn each_signature_is_checked_and_listed_on_its_own() {
    let a = SigningKey::generate().expect("key");
    let b = SigningKey::generate().expect("key");
    let req = Request::new("GET", "https", "example.com", "/", Vec::new());
    let mut sa = SignSpec::new(Some("https://a.example"), NOW - 10, 300, None);
    sa.label = "a".into();
    sa.form = botscope_httpsig::AgentForm::Dictionary("a".into());
    let mut sb = SignSpec::new(Some("https://b.example"), NOW - 10, 300, None);
    sb.label = "b".into();
    sb.form = botscope_httpsig::AgentForm::Dictionary("b".into());
    let signed_a = sign_request(&req, &a, &sa).expect("sign");
    let signed_b = sign_request(&req, &b, &sb).expect("sign");
    let mut sent = req.clone();
    sent.headers = vec![
        (
            "Signature-Agent".into(),
            "a=\"https://a.example\", b=\"https://b.example\"".into(),
        ),
        (
            "Signature-Input".into(),
            format!("{}, {}", signed_a.signature_input, signed_b.signature_input),
        ),
        (
            "Signature".into(),
            format!("{}, {}", signed_a.signature, signed_b.signature),
        ),
    ];
    // Only b's keys are known; a's directory lists another key.
    let mut keys = KeySet::new();
    keys.insert(Some("https://a.example"), Directory::default());
    keys.add_key(Some("https://b.example"), b.public());
    let v = check(&sent, &keys);
    assert_eq!(v.outcome, Outcome::Verified);
    assert_eq!(v.label.as_deref(), Some("b"));
    assert_eq!(
        v.agent.as_deref(),
        Some("https://b.example"),
        "b's own member"
    );
    let listed: Vec<(Option<&str>, Outcome, Option<&str>)> = v
        .signatures
        .iter()
        .map(|s| (s.label.as_deref(), s.outcome, s.agent.as_deref()))
        .collect();
    assert_eq!(
        listed,
        [
            (Some("a"), Outcome::Invalid, Some("https://a.example")),
            (Some("b"), Outcome::Verified, Some("https://b.example")),
        ]
    );
    let json = v.to_json();
    assert_eq!(json["signatures"].as_array().expect("list").len(), 2);
    assert_eq!(json["signatures"][0]["reason_code"], "key-not-listed");
}

/// "Test keys, including the example keys in [HTTP-MESSAGE-SIGNATURES],
/// MUST NOT be used in production. Verifiers SHOULD reject known test
/// keys": refused unless the policy is told it runs tests.
#[test]
fn test_keys_are_refused_outside_tests() {
    let data = data();
    let v = &data["requests"][3];
    let keys = keys_for(v, key(&data, "ed25519"));
    let policy = Policy {
        max_validity: FAR - CREATED,
        ..Policy::default()
    };
    let got = verify_request(&request(v), &keys, CREATED + 60, &policy);
    assert_eq!(got.outcome, Outcome::Invalid);
    assert_eq!(
        got.reason,
        Reason::TestKey("RFC 9421 B.1.4 test-key-ed25519")
    );
    assert!(got.reason.to_string().contains("anyone can sign with"));
    for (thumbprint, _) in botscope_httpsig::TEST_KEYS {
        assert!(botscope_httpsig::test_key(thumbprint).is_some());
    }
    assert_eq!(
        key(&data, "rsa-pss").thumbprint(),
        botscope_httpsig::TEST_KEYS[1].0
    );
}

/// "An origin SHOULD refuse Signature headers when communicated over an
/// unsecured channel": botscope reports it (a verifier behind a proxy that
/// ends TLS often sees `http`), and the note says so.
#[test]
fn a_signature_over_plain_http_is_reported() {
    let key = SigningKey::generate().expect("key");
    let mut req = signed(None, Some("https://crawler.example"), &key);
    req.scheme = "http".into();
    let mut keys = KeySet::new();
    keys.add_key(Some("https://crawler.example"), key.public());
    let v = check(&req, &keys);
    assert!(
        v.notes.iter().any(|n| n.contains("plain http")),
        "{:?}",
        v.notes
    );
}
