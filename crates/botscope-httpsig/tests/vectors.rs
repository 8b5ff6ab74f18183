//! The published vectors (RFC 9421 Appendix B, the Web Bot Auth draft's
//! appendix and its reference JSON, the signed key directory response),
//! byte for byte both ways, and each way a signature is refused.

use botscope_httpsig::base::{self, Target};
use botscope_httpsig::{
    AgentForm, Directory, KeySet, NonceMemory, Outcome, Policy, PublicKey, Reason, Request,
    Response, SignSpec, SigningKey, sign_directory, sign_request, verify_directory_response,
    verify_request,
};

/// RFC 9421 B.1.4 `test-key-ed25519`, as the RFC prints it.
const RFC_KEY_PEM: &str = "-----BEGIN PRIVATE KEY-----
MC4CAQAwBQYDK2VwBCIEIJ+DYvh6SEqVTm50DFtMDoQikTmiCqirVv9mWG9qfSnF
-----END PRIVATE KEY-----";
/// The same key as a JWK.
const RFC_KEY_JWK: &str = r#"{"kty":"OKP","crv":"Ed25519","kid":"test-key-ed25519","d":"n4Ni-HpISpVObnQMW0wOhCKROaIKqKtW_2ZYb2p9KcU","x":"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs"}"#;
/// Its JWK thumbprint: the keyid of every Web Bot Auth vector.
const KEYID: &str = "poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";
const AGENT: &str = "https://signature-agent.test";
const CREATED: i64 = 1_735_689_600;
const FAR: i64 = 4_889_289_600;

fn rfc_key() -> SigningKey {
    SigningKey::parse(RFC_KEY_PEM).expect("the RFC's key")
}

/// The vectors are valid for a century: a policy that accepts that.
fn lenient() -> Policy {
    Policy {
        max_validity: FAR - CREATED,
        ..Policy::with_test_keys()
    }
}

fn h(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
        .collect()
}

fn keys_for(agent: Option<&str>) -> KeySet {
    let mut k = KeySet::new();
    k.add_key(agent, rfc_key().public());
    k
}

#[test]
fn the_rfc_key_reads_from_pem_and_jwk_and_has_the_drafts_keyid() {
    let pem = rfc_key();
    let jwk = SigningKey::parse(RFC_KEY_JWK).expect("jwk");
    assert_eq!(pem.public(), jwk.public());
    assert_eq!(pem.keyid(), KEYID);
    let public: serde_json::Value = serde_json::from_str(RFC_KEY_JWK).expect("json");
    assert_eq!(
        PublicKey::from_jwk(&public).expect("public").thumbprint(),
        KEYID
    );
}

/// RFC 9421 B.2.6: signing a request with Ed25519 (no tag, keyid not a
/// thumbprint): the base and the signature, checked directly.
#[test]
fn rfc9421_b26() {
    let req = Request::new(
        "POST",
        "https",
        "example.com",
        "/foo?param=Value&Pet=dog",
        h(&[
            ("Host", "example.com"),
            ("Date", "Tue, 20 Apr 2021 02:07:55 GMT"),
            ("Content-Type", "application/json"),
            (
                "Content-Digest",
                "sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:",
            ),
            ("Content-Length", "18"),
        ]),
    );
    let input = &base::inputs(r#"sig-b26=("date" "@method" "@path" "@authority" "content-type" "content-length");created=1618884473;keyid="test-key-ed25519""#).expect("input")[0];
    let b = base::signature_base(Target::Request(&req), input).expect("base");
    assert_eq!(
        b,
        "\"date\": Tue, 20 Apr 2021 02:07:55 GMT\n\
         \"@method\": POST\n\
         \"@path\": /foo\n\
         \"@authority\": example.com\n\
         \"content-type\": application/json\n\
         \"content-length\": 18\n\
         \"@signature-params\": (\"date\" \"@method\" \"@path\" \"@authority\" \"content-type\" \"content-length\");created=1618884473;keyid=\"test-key-ed25519\""
    );
    let sig = base::signature(
        "sig-b26=:wqcAqbmYJ2ji2glfAMaRy4gruYYnx2nEFN2HN6jrnDnQCK1u02Gb04v9EDgwUPiu4A0w6vuQv5lIp5WPpBKRCw==:",
        "sig-b26",
    )
    .expect("sig");
    assert!(rfc_key().public().verify(b.as_bytes(), &sig));
    // Ed25519 is deterministic: signing gives the RFC's bytes.
    assert_eq!(rfc_key().sign(b.as_bytes()), sig);
}

/// A Web Bot Auth vector: the request's headers, the time, and the
/// agent the signature must be reported for.
struct Vector {
    name: &'static str,
    agent_field: Option<&'static str>,
    input: &'static str,
    signature: &'static str,
    agent: Option<&'static str>,
}

const VECTORS: &[Vector] = &[
    // The draft's A.2.1: no Signature-Agent.
    Vector {
        name: "draft A.2.1",
        agent_field: None,
        input: r#"sig1=("@authority");created=1735689600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";alg="ed25519";expires=4889289600;nonce="g0iqFa9e1ffijlyOScDkXpfSmTbYpRNSGPJrQ1It20ahwgzB3jOUcdgLgFxUg7RMtW4V8IILaKKtA+YuSyIgJQ==";tag="web-bot-auth""#,
        signature: "sig1=:FFASViSdcgsyaqqYiCnkHreeZzbNKcTzDvZC5uVlP/dn9IbWj8j0o4wKFTH3rBnUiSUBduwm1Gp5VlIPCp01Ag==:",
        agent: None,
    },
    // The draft's A.2.3: the legacy string form of Signature-Agent.
    Vector {
        name: "draft A.2.3 (legacy Signature-Agent)",
        agent_field: Some(r#""https://signature-agent.test""#),
        input: r#"sig2=("@authority" "signature-agent");created=1735689600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";alg="ed25519";expires=1735693200;nonce="e8N7S2MFd/qrd6T2R3tdfAuuANngKI7LFtKYI/vowzk4lAZYadIX6wW25MwG7DCT9RUKAJ0qVkU0mEeLElW1qg==";tag="web-bot-auth""#,
        signature: "sig2=:jdq0SqOwHdyHr9+r5jw3iYZH6aNGKijYp/EstF4RQTQdi5N5YYKrD+mCT1HA1nZDsi6nJKuHxUi/5Syp3rLWBA==:",
        agent: Some(AGENT),
    },
    // The reference JSON (web_bot_auth_architecture_v2), no agent.
    Vector {
        name: "reference v2 sig1",
        agent_field: None,
        input: r#"sig1=("@authority");created=1735689600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";alg="ed25519";expires=4889289600;nonce="zIW8+cdmA3vdYagbxojpONwa/l0EKJ/O3/wD486VvsQjO/RxPaSt6ZxvQaMcQzNnqKN/mQ6hpGiFro2L2qkz5A==";tag="web-bot-auth""#,
        signature: "sig1=:QKN4fTdIYfh82fvoZCQiQA1weuozfCS/Led2zTMbewMMqH8PI2Wsy/5c4ao6B6D09nraNQdBNOADg8aM1MqfCg==:",
        agent: None,
    },
    // The reference JSON, dictionary form with its own member key.
    Vector {
        name: "reference v2 sig2 (dictionary Signature-Agent)",
        agent_field: Some(r#"agent2="https://signature-agent.test""#),
        input: r#"sig2=("@authority" "signature-agent";key="agent2");created=1735689600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";alg="ed25519";expires=4889289600;nonce="n9p433xm+NJ3ph3upfBIGmsuwHw387YV7Q/F+6BSpGCVjYCqQw6rznNA8PVVLySrAWsv0hQtFioQb6E1YsauiA==";tag="web-bot-auth""#,
        signature: "sig2=:RdNFx5Bj6au3YgAMQL/RzmUlZE8QZLIaXGRpw985hWnwPfMxT228NMk6ehRS1PSl4e8PhbNZACSanGdhEwYCCg==:",
        agent: Some(AGENT),
    },
];

fn vector_request(v: &Vector) -> Request {
    let mut headers = Vec::new();
    if let Some(a) = v.agent_field {
        headers.push(("Signature-Agent".to_owned(), a.to_owned()));
    }
    headers.push(("Signature-Input".to_owned(), v.input.to_owned()));
    headers.push(("Signature".to_owned(), v.signature.to_owned()));
    Request::new("GET", "https", "example.com", "/path/to/resource", headers)
}

#[test]
fn web_bot_auth_vectors_verify() {
    for v in VECTORS {
        let req = vector_request(v);
        let verdict = verify_request(&req, &keys_for(v.agent), CREATED + 60, &lenient());
        assert_eq!(
            verdict.outcome,
            Outcome::Verified,
            "{}: {}",
            v.name,
            verdict.reason
        );
        assert_eq!(verdict.agent.as_deref(), v.agent, "{}", v.name);
        assert_eq!(verdict.keyid.as_deref(), Some(KEYID), "{}", v.name);
        // The base is the draft's.
        let base = verdict.base.expect("base");
        let mut want = String::from("\"@authority\": example.com\n");
        if let Some(field) = v.agent_field {
            let id = v.input.split_once('(').map(|(_, r)| r).unwrap_or_default();
            let id = id.split(' ').nth(1).unwrap_or_default();
            let id = id.split_once(')').map_or(id, |(a, _)| a);
            want.push_str(&format!(
                "{id}: {}\n",
                field.split_once('=').map_or(field, |(_, u)| u)
            ));
        }
        want.push_str("\"@signature-params\": ");
        want.push_str(v.input.split_once('=').map(|(_, p)| p).unwrap_or_default());
        assert_eq!(base, want, "{}", v.name);
    }
}

#[test]
fn signing_reproduces_the_vectors() {
    let key = rfc_key();
    let req = Request::new("GET", "https", "example.com", "/path/to/resource", vec![]);
    for v in VECTORS {
        let (label, params) = v.input.split_once('=').expect("label");
        let param = |name: &str| -> String {
            let p = params
                .split(';')
                .find_map(|p| p.strip_prefix(&format!("{name}=")))
                .expect("param");
            p.trim_matches('"').to_owned()
        };
        let form = match v.agent_field {
            Some(f) if !f.starts_with('"') => {
                AgentForm::Dictionary(f.split_once('=').expect("key").0.to_owned())
            }
            _ => AgentForm::Legacy,
        };
        let spec = SignSpec {
            label: label.to_owned(),
            agent: v.agent.map(str::to_owned),
            form,
            created: param("created").parse().expect("created"),
            expires: param("expires").parse().expect("expires"),
            nonce: Some(param("nonce")),
            tag: "web-bot-auth".to_owned(),
            covers: Vec::new(),
        };
        let signed = sign_request(&req, &key, &spec).expect("sign");
        assert_eq!(signed.signature_input, v.input, "{}", v.name);
        assert_eq!(signed.signature, v.signature, "{}", v.name);
        assert_eq!(
            signed.signature_agent.as_deref(),
            v.agent_field,
            "{}",
            v.name
        );
    }
}

/// The draft's A.2.2 base (dictionary form, member `agent2`): its printed
/// signature does not verify against this base with the RFC key (A.2.1
/// and A.2.3 do, and the reference JSON the draft points to does), so
/// only the base is checked.
#[test]
fn draft_a22_base() {
    let input = r#"sig2=("@authority" "signature-agent";key="agent2");created=1735689600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";alg="ed25519";expires=4889289600;nonce="XeP72svPKNiGEg3aDE7WJuTpN69H08oMFqC8NLFy1MptpENAT3WZTYwK+MYdsFMlaqHCJGo9ZAhqer1NWY9Epg==";tag="web-bot-auth""#;
    let req = Request::new(
        "GET",
        "https",
        "example.com",
        "/",
        h(&[(
            "Signature-Agent",
            r#"agent2="https://signature-agent.test""#,
        )]),
    );
    let i = &base::inputs(input).expect("input")[0];
    assert_eq!(
        base::signature_base(Target::Request(&req), i).expect("base"),
        "\"@authority\": example.com\n\
         \"signature-agent\";key=\"agent2\": \"https://signature-agent.test\"\n\
         \"@signature-params\": (\"@authority\" \"signature-agent\";key=\"agent2\");created=1735689600;keyid=\"poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U\";alg=\"ed25519\";expires=4889289600;nonce=\"XeP72svPKNiGEg3aDE7WJuTpN69H08oMFqC8NLFy1MptpENAT3WZTYwK+MYdsFMlaqHCJGo9ZAhqer1NWY9Epg==\";tag=\"web-bot-auth\""
    );
}

const DIRECTORY_BODY: &str = r#"{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U","x":"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs","use":"sig"}]}"#;
const DIRECTORY_INPUT: &str = r#"binding0=("@authority";req "content-digest");created=1735689600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";alg="ed25519";expires=4889289600;tag="http-message-signatures-directory""#;
const DIRECTORY_SIGNATURE: &str = "binding0=:yiHq0TXrbpzbmlttAQMpYoAufitFJUWuNsakB7QQMoN0EHbo5o51bZRVR8az/ptTWCwllix9clrKXfGKwdPzBg==:";
const DIRECTORY_DIGEST: &str = "sha-256=:CADMT2aBdV/rqQr/NIru64ERQkCobVvllA4V0fLFDu0=:";

fn directory_request() -> Request {
    Request::new(
        "GET",
        "https",
        "signature-agent.test",
        "/.well-known/http-message-signatures-directory",
        vec![],
    )
}

#[test]
fn the_signed_directory_response_vector() {
    let req = directory_request();
    let headers = h(&[
        (
            "Content-Type",
            "application/http-message-signatures-directory+json",
        ),
        ("Content-Digest", DIRECTORY_DIGEST),
        ("Signature-Input", DIRECTORY_INPUT),
        ("Signature", DIRECTORY_SIGNATURE),
    ]);
    let resp = Response {
        status: 200,
        headers: &headers,
        request: Some(&req),
    };
    let v = verify_directory_response(
        &req,
        resp,
        DIRECTORY_BODY.as_bytes(),
        CREATED + 1,
        &lenient(),
    );
    assert_eq!(v.outcome, Outcome::Verified, "{}", v.reason);
    assert_eq!(
        v.base.as_deref(),
        Some(
            "\"@authority\";req: signature-agent.test\n\
             \"content-digest\": sha-256=:CADMT2aBdV/rqQr/NIru64ERQkCobVvllA4V0fLFDu0=:\n\
             \"@signature-params\": (\"@authority\";req \"content-digest\");created=1735689600;keyid=\"poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U\";alg=\"ed25519\";expires=4889289600;tag=\"http-message-signatures-directory\""
        )
    );
    // Signing gives the same fields.
    let key = rfc_key();
    let signed =
        sign_directory(&req, DIRECTORY_BODY.as_bytes(), &[&key], CREATED, FAR).expect("sign");
    assert_eq!(
        signed,
        h(&[
            ("Content-Digest", DIRECTORY_DIGEST),
            ("Signature-Input", DIRECTORY_INPUT),
            ("Signature", DIRECTORY_SIGNATURE),
        ])
    );
    // Another body under the same signature: the digest gives it away.
    let other = DIRECTORY_BODY.replace("\"use\":\"sig\"", "\"use\":\"sig\" ");
    let v = verify_directory_response(&req, resp, other.as_bytes(), CREATED + 1, &lenient());
    assert_eq!(
        (v.outcome, v.reason),
        (Outcome::Invalid, Reason::DigestMismatch)
    );
    // Served for another host, the signature does not hold.
    let elsewhere = Request::new(
        "GET",
        "https",
        "evil.test",
        "/.well-known/http-message-signatures-directory",
        vec![],
    );
    let resp = Response {
        request: Some(&elsewhere),
        ..resp
    };
    let v = verify_directory_response(
        &elsewhere,
        resp,
        DIRECTORY_BODY.as_bytes(),
        CREATED + 1,
        &lenient(),
    );
    assert_eq!(
        (v.outcome, v.reason),
        (Outcome::Invalid, Reason::BadSignature)
    );
    // An unsigned directory is unverified, not invalid.
    let plain = h(&[(
        "Content-Type",
        "application/http-message-signatures-directory+json",
    )]);
    let resp = Response {
        status: 200,
        headers: &plain,
        request: Some(&req),
    };
    let v = verify_directory_response(
        &req,
        resp,
        DIRECTORY_BODY.as_bytes(),
        CREATED + 1,
        &lenient(),
    );
    assert_eq!(
        (v.outcome, v.reason),
        (Outcome::Unverified, Reason::NoSignature)
    );
    assert_eq!(
        Directory::parse(DIRECTORY_BODY.as_bytes())
            .expect("dir")
            .keys[0]
            .0,
        KEYID
    );
}

/// A fresh signed request, an hour valid, and the keys that check it.
fn fresh(agent: Option<&str>, now: i64) -> (Request, KeySet) {
    let key = rfc_key();
    let mut req = Request::new("GET", "https", "example.com", "/page?x=1", vec![]);
    let spec = SignSpec::new(agent, now, 3600, Some("bm9uY2UtMQ==".into()));
    req.headers
        .extend(sign_request(&req, &key, &spec).expect("sign").headers());
    (req, keys_for(agent))
}

fn set(req: &mut Request, name: &str, value: &str) {
    req.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
    req.headers.push((name.to_owned(), value.to_owned()));
}

fn verdict(req: &Request, keys: &KeySet, now: i64) -> (Outcome, Reason) {
    let v = verify_request(req, keys, now, &Policy::with_test_keys());
    (v.outcome, v.reason)
}

#[test]
fn expired() {
    let (req, keys) = fresh(Some(AGENT), CREATED);
    assert_eq!(
        verdict(&req, &keys, CREATED + 3600 + 30).0,
        Outcome::Verified,
        "within the skew"
    );
    assert_eq!(
        verdict(&req, &keys, CREATED + 3600 + 61),
        (
            Outcome::Invalid,
            Reason::Expired {
                expires: CREATED + 3600,
                now: CREATED + 3661
            }
        )
    );
}

#[test]
fn created_in_the_future() {
    let (req, keys) = fresh(Some(AGENT), CREATED);
    assert_eq!(
        verdict(&req, &keys, CREATED - 30).0,
        Outcome::Verified,
        "within the skew"
    );
    assert_eq!(
        verdict(&req, &keys, CREATED - 120),
        (
            Outcome::Invalid,
            Reason::CreatedInFuture {
                created: CREATED,
                now: CREATED - 120
            }
        )
    );
}

#[test]
fn validity_too_long() {
    let v = &VECTORS[0];
    assert!(matches!(
        verdict(&vector_request(v), &keys_for(None), CREATED + 60),
        (Outcome::Invalid, Reason::ValidityTooLong { .. })
    ));
}

#[test]
fn wrong_tag() {
    let key = rfc_key();
    let mut req = Request::new("GET", "https", "example.com", "/", vec![]);
    let mut spec = SignSpec::new(Some(AGENT), CREATED, 60, None);
    spec.tag = "something-else".into();
    req.headers
        .extend(sign_request(&req, &key, &spec).expect("sign").headers());
    let (o, r) = verdict(&req, &keys_for(Some(AGENT)), CREATED);
    assert_eq!(o, Outcome::Unverified);
    assert_eq!(
        r,
        Reason::NotTagged {
            want: "web-bot-auth".into(),
            found: vec!["something-else".into()]
        }
    );
}

#[test]
fn authority_mismatch() {
    let (mut req, keys) = fresh(Some(AGENT), CREATED);
    req.authority = "other.example".into();
    assert_eq!(
        verdict(&req, &keys, CREATED),
        (Outcome::Invalid, Reason::BadSignature)
    );
}

#[test]
fn authority_not_covered() {
    let mut req = Request::new("GET", "https", "example.com", "/", vec![]);
    let i = &base::inputs(r#"sig1=("@method");created=1735689600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";expires=1735689660;tag="web-bot-auth""#).expect("input")[0];
    let b = base::signature_base(Target::Request(&req), i).expect("base");
    let sig = base64_sig(&rfc_key().sign(b.as_bytes()));
    set(
        &mut req,
        "Signature-Input",
        &format!("sig1={}", i.params_value()),
    );
    set(&mut req, "Signature", &format!("sig1=:{sig}:"));
    assert_eq!(
        verdict(&req, &keys_for(None), CREATED),
        (Outcome::Invalid, Reason::AuthorityNotCovered)
    );
}

fn base64_sig(b: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(b)
}

#[test]
fn agent_present_and_not_covered() {
    let (mut req, _) = fresh(None, CREATED);
    set(
        &mut req,
        "Signature-Agent",
        r#""https://signature-agent.test""#,
    );
    assert_eq!(
        verdict(&req, &keys_for(None), CREATED),
        (Outcome::Invalid, Reason::AgentNotCovered)
    );
}

#[test]
fn keyid_missing_from_the_directory() {
    let (req, _) = fresh(Some(AGENT), CREATED);
    // The agent's directory lists another key.
    let mut keys = KeySet::new();
    keys.add_key(Some(AGENT), SigningKey::generate().expect("key").public());
    assert_eq!(
        verdict(&req, &keys, CREATED),
        (
            Outcome::Invalid,
            Reason::KeyNotListed {
                agent: Some(AGENT.into())
            }
        )
    );
    // The key is listed by another agent only: not good for this one.
    let keys = keys_for(Some("https://other-agent.test"));
    assert!(matches!(
        verdict(&req, &keys, CREATED),
        (Outcome::Unverified, Reason::KeysUnknown(_))
    ));
}

#[test]
fn replayed_nonce() {
    let (req, keys) = fresh(Some(AGENT), CREATED);
    let mut memory = NonceMemory::new(16);
    let mut first = verify_request(&req, &keys, CREATED, &Policy::with_test_keys());
    memory.check(&mut first, CREATED);
    assert_eq!(first.outcome, Outcome::Verified);
    let mut again = verify_request(&req, &keys, CREATED + 5, &Policy::with_test_keys());
    memory.check(&mut again, CREATED + 5);
    assert_eq!(
        (again.outcome, again.reason),
        (Outcome::Invalid, Reason::Replayed)
    );
    // Once the signature has expired the nonce is forgotten (and the
    // signature refused for its age anyway).
    assert!(memory.admit(&first, CREATED + 3601));
    assert_eq!(memory.len(), 1);
}

#[test]
fn one_request_asked_about_twice_is_not_a_replay() {
    let (req, keys) = fresh(Some(AGENT), CREATED);
    let mut memory = NonceMemory::new(16);
    let v = verify_request(&req, &keys, CREATED, &Policy::with_test_keys());
    assert!(memory.admit_in(&v, CREATED, Some(7)));
    assert!(
        memory.admit_in(&v, CREATED + 2, Some(7)),
        "the same request, asked again"
    );
    assert!(
        !memory.admit_in(&v, CREATED + 2, Some(8)),
        "another client or request"
    );
    assert!(
        !memory.admit_in(&v, CREATED + 30, Some(7)),
        "past the grace"
    );
    assert!(!memory.admit(&v, CREATED + 1), "no context: no grace");
}

#[test]
fn nonce_memory_is_bounded() {
    let (req, keys) = fresh(Some(AGENT), CREATED);
    let mut memory = NonceMemory::new(3);
    let mut v = verify_request(&req, &keys, CREATED, &Policy::with_test_keys());
    for i in 0..10 {
        v.nonce = Some(format!("n{i}"));
        v.expires = Some(CREATED + 100 + i);
        assert!(memory.admit(&v, CREATED));
    }
    assert_eq!(memory.len(), 3);
    // The latest ones are kept.
    v.nonce = Some("n9".into());
    assert!(!memory.admit(&v, CREATED));
}

#[test]
fn one_nonce_of_different_agents_or_keys_is_no_replay() {
    // Nonces are kept as fingerprints of (agent, keyid, nonce): the parts
    // stay apart, however their text could be run together.
    let (req, keys) = fresh(Some(AGENT), CREATED);
    let mut memory = NonceMemory::new(64);
    let base = verify_request(&req, &keys, CREATED, &Policy::with_test_keys());
    let with = |agent: Option<&str>, keyid: &str, nonce: &str| {
        let mut v = base.clone();
        v.agent = agent.map(str::to_owned);
        v.keyid = Some(keyid.to_owned());
        v.nonce = Some(nonce.to_owned());
        v
    };
    let seen = [
        with(Some("https://a.example"), "k1", "n"),
        with(None, "k1", "n"),
        with(Some(""), "k1", "n"),
        with(Some("https://a.example"), "k1n", ""),
        with(Some("https://a.example"), "k", "1n"),
        with(Some("https://a.examplek1"), "", "n"),
        with(Some("https://b.example"), "k1", "n"),
        with(Some("https://a.example"), "k2", "n"),
        with(Some("https://a.example"), "k1", "m"),
    ];
    for v in &seen {
        assert!(
            memory.admit(v, CREATED),
            "{:?} {:?} {:?}",
            v.agent,
            v.keyid,
            v.nonce
        );
    }
    for v in &seen {
        assert!(!memory.admit(v, CREATED), "{:?} again", v.nonce);
    }
    assert_eq!(memory.len(), seen.len());
}

#[test]
fn hmac_is_refused() {
    let mut req = Request::new("GET", "https", "example.com", "/", vec![]);
    set(
        &mut req,
        "Signature-Input",
        r#"sig1=("@authority");created=1735689600;keyid="shared";alg="hmac-sha256";expires=1735689660;tag="web-bot-auth""#,
    );
    set(&mut req, "Signature", "sig1=:AAAA:");
    assert_eq!(
        verdict(&req, &keys_for(None), CREATED),
        (Outcome::Invalid, Reason::Hmac)
    );
}

#[test]
fn tampered_signature() {
    let (mut req, keys) = fresh(Some(AGENT), CREATED);
    let sig = req.header("signature").expect("sig");
    let flipped = if sig.contains("A") {
        sig.replacen('A', "B", 1)
    } else {
        sig.replacen(|c: char| c.is_ascii_alphabetic(), "A", 1)
    };
    set(&mut req, "Signature", &flipped);
    assert_eq!(verdict(&req, &keys, CREATED).0, Outcome::Invalid);
}

#[test]
fn malformed_structured_fields() {
    for (input, signature, agent) in [
        ("sig1=(\"@authority\";created=1", "sig1=:AAAA:", None),
        ("sig1=\"not a list\"", "sig1=:AAAA:", None),
        (
            "sig1=(@authority);tag=\"web-bot-auth\"",
            "sig1=:AAAA:",
            None,
        ),
        (
            "sig1=(\"@authority\");created=\"x\";keyid=\"k\";expires=1735689660;tag=\"web-bot-auth\"",
            "sig1=:AAAA:",
            None,
        ),
        (
            "sig1=(\"@authority\");created=1735689600;keyid=\"k\";expires=1735689660;tag=\"web-bot-auth\"",
            "sig1=AAAA",
            None,
        ),
        (
            "sig1=(\"@authority\" \"signature-agent\";key=\"a\");created=1735689600;keyid=\"k\";expires=1735689660;tag=\"web-bot-auth\"",
            "sig1=:AAAA:",
            Some("a=https://x"),
        ),
        (
            "sig1=(\"@authority\" \"@authority\");created=1735689600;keyid=\"k\";expires=1735689660;tag=\"web-bot-auth\"",
            "sig1=:AAAA:",
            None,
        ),
    ] {
        let mut req = Request::new("GET", "https", "example.com", "/", vec![]);
        if let Some(a) = agent {
            set(&mut req, "Signature-Agent", a);
        }
        set(&mut req, "Signature-Input", input);
        set(&mut req, "Signature", signature);
        let (o, r) = verdict(&req, &keys_for(None), CREATED);
        assert_eq!(o, Outcome::Invalid, "{input} → {r}");
        assert!(matches!(r, Reason::Malformed(_)), "{input} → {r:?}");
    }
    // Too long a field is refused before it is parsed.
    let mut req = Request::new("GET", "https", "example.com", "/", vec![]);
    set(
        &mut req,
        "Signature-Input",
        &format!("sig1=(\"{}\")", "a".repeat(base::MAX_FIELD_BYTES)),
    );
    set(&mut req, "Signature", "sig1=:AAAA:");
    assert!(matches!(
        verdict(&req, &keys_for(None), CREATED),
        (Outcome::Invalid, Reason::Malformed(_))
    ));
}

#[test]
fn missing_parameters() {
    for (input, missing) in [
        (
            r#"sig1=("@authority");created=1735689600;expires=1735689660;tag="web-bot-auth""#,
            "keyid",
        ),
        (
            r#"sig1=("@authority");keyid="k";expires=1735689660;tag="web-bot-auth""#,
            "created",
        ),
        (
            r#"sig1=("@authority");created=1735689600;keyid="k";tag="web-bot-auth""#,
            "expires",
        ),
    ] {
        let mut req = Request::new("GET", "https", "example.com", "/", vec![]);
        set(&mut req, "Signature-Input", input);
        set(&mut req, "Signature", "sig1=:AAAA:");
        assert_eq!(
            verdict(&req, &keys_for(None), CREATED),
            (Outcome::Invalid, Reason::MissingParam(missing))
        );
    }
}

#[test]
fn unsigned_and_unknown_keys_are_unverified() {
    let req = Request::new("GET", "https", "example.com", "/", vec![]);
    assert_eq!(
        verdict(&req, &KeySet::new(), CREATED),
        (Outcome::Unverified, Reason::NoSignature)
    );
    let (req, _) = fresh(Some(AGENT), CREATED);
    assert!(matches!(
        verdict(&req, &KeySet::new(), CREATED),
        (Outcome::Unverified, Reason::KeysUnknown(_))
    ));
}

#[test]
fn one_good_signature_among_bad_ones_verifies() {
    let (mut req, keys) = fresh(Some(AGENT), CREATED);
    let input = req.header("signature-input").expect("input").into_owned();
    let sig = req.header("signature").expect("sig").into_owned();
    set(
        &mut req,
        "Signature-Input",
        &format!("{}, {input}", input.replacen("sig1=", "bad=", 1)),
    );
    set(&mut req, "Signature", &format!("bad=:AAAA:, {sig}"));
    let v = verify_request(&req, &keys, CREATED, &Policy::with_test_keys());
    assert_eq!(
        (v.outcome, v.label.as_deref()),
        (Outcome::Verified, Some("sig1"))
    );
}

#[test]
fn batched_checks_agree_with_single_ones() {
    use botscope_httpsig::{check_batch, prepare_request};
    let keys: Vec<SigningKey> = (0..3)
        .map(|_| SigningKey::generate().expect("key"))
        .collect();
    let mut set = KeySet::new();
    let mut requests = Vec::new();
    for i in 0..40 {
        let key = &keys[i % 3];
        let agent = format!("https://agent{}.test", i % 3);
        set.add_key(Some(&agent), key.public());
        let mut req = Request::new("GET", "https", "example.com", &format!("/p{i}"), vec![]);
        let spec = SignSpec::new(Some(&agent), CREATED, 60, Some(format!("n{i}")));
        req.headers
            .extend(sign_request(&req, key, &spec).expect("sign").headers());
        if i % 7 == 3 {
            // Signed for another host.
            req.authority = "other.test".into();
        }
        requests.push(req);
    }
    let prepared: Vec<_> = requests
        .iter()
        .map(|r| prepare_request(r, &set, CREATED, &Policy::with_test_keys()))
        .collect();
    let checks: Vec<_> = prepared.iter().flat_map(|p| p.checks()).collect();
    assert_eq!(checks.len(), 40);
    let batch = check_batch(&checks);
    let single: Vec<bool> = checks.iter().map(|(k, m, s)| k.verify(m, s)).collect();
    assert_eq!(batch, single);
    assert_eq!(batch.iter().filter(|ok| !**ok).count(), 6);
    // All good: the batch holds as a whole.
    let good: Vec<_> = checks
        .iter()
        .zip(&single)
        .filter(|(_, ok)| **ok)
        .map(|(c, _)| *c)
        .collect();
    assert!(check_batch(&good).iter().all(|ok| *ok));
    // Each request's verdict from its share of the results.
    let mut at = 0;
    for (p, r) in prepared.into_iter().zip(&requests) {
        let n = p.checks().len();
        let v = p.finish(&batch[at..at + n]);
        at += n;
        let alone = verify_request(r, &set, CREATED, &Policy::with_test_keys());
        assert_eq!((v.outcome, v.reason), (alone.outcome, alone.reason));
    }
}
