//! Interoperability with an independent implementation, PyPI's
//! `http-message-signatures` (in the venv the test command makes,
//! `target/pyenv`): it signs, botscope verifies; botscope signs, it
//! verifies; both `Signature-Agent` forms, and a tampered request
//! refused by each.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use base64::Engine as _;
use botscope_httpsig::{
    AgentForm, KeySet, Outcome, Policy, Request, SignSpec, SigningKey, sign_request, verify_request,
};

fn python() -> PathBuf {
    if let Some(p) = std::env::var_os("BOTSCOPE_PYTHON") {
        return p.into();
    }
    let venv = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/pyenv/bin/python");
    assert!(
        venv.exists(),
        "{} is missing: the test command in README (scripts/test) makes it with http-message-signatures",
        venv.display()
    );
    venv
}

fn run(mode: &str, input: &serde_json::Value) -> serde_json::Value {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/interop.py");
    let mut child = Command::new(python())
        .arg(script)
        .arg(mode)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.to_string().as_bytes())
        .expect("write");
    let out = child.wait_with_output().expect("python ends");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("json")
}

fn now() -> i64 {
    i64::try_from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("clock")
            .as_secs(),
    )
    .expect("time")
}

const AGENT: &str = "https://crawler.example";
const URL: &str = "https://shop.example:8443/item?id=7";

fn seed(key: &SigningKey) -> String {
    let jwk: serde_json::Value = serde_json::from_str(&key.to_private_jwk()).expect("jwk");
    jwk["d"].as_str().expect("d").to_owned()
}

#[test]
fn it_signs_botscope_verifies() {
    let key = SigningKey::generate().expect("key");
    let mut keys = KeySet::new();
    keys.add_key(Some(AGENT), key.public());
    let t = now();
    for (agent_field, components) in [
        (
            format!("sig1=\"{AGENT}\""),
            serde_json::json!(["@authority", "\"signature-agent\";key=\"sig1\""]),
        ),
        (
            format!("\"{AGENT}\""),
            serde_json::json!(["@authority", "signature-agent"]),
        ),
    ] {
        let headers = run(
            "sign",
            &serde_json::json!({
                "d": seed(&key), "keyid": key.keyid(), "url": URL,
                "signature_agent": agent_field, "components": components,
                "created": t, "expires": t + 60, "nonce": "bm9uY2UtcHk=",
            }),
        );
        let fields: Vec<(String, String)> = headers
            .as_object()
            .expect("headers")
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned()))
            .collect();
        let req = Request::from_uri("GET", URL, fields.clone()).expect("request");
        let v = verify_request(&req, &keys, t + 1, &Policy::default());
        assert_eq!(
            v.outcome,
            Outcome::Verified,
            "{agent_field}: {} {headers}",
            v.reason
        );
        assert_eq!(v.agent.as_deref(), Some(AGENT));
        // Another host: refused.
        let other =
            Request::from_uri("GET", "https://other.example/item?id=7", fields).expect("request");
        assert_eq!(
            verify_request(&other, &keys, t + 1, &Policy::default()).outcome,
            Outcome::Invalid
        );
    }
}

#[test]
fn botscope_signs_it_verifies() {
    let key = SigningKey::generate().expect("key");
    let x = match key.public() {
        botscope_httpsig::PublicKey::Ed25519(k) => {
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(k.bytes())
        }
        botscope_httpsig::PublicKey::Rsa { .. } => unreachable!("an Ed25519 key"),
    };
    for form in [AgentForm::Dictionary("sig1".into()), AgentForm::Legacy] {
        let req = Request::from_uri("GET", URL, Vec::new()).expect("request");
        let mut spec = SignSpec::new(Some(AGENT), now(), 60, Some("bm9uY2UtcnM=".into()));
        spec.form = form.clone();
        let signed = sign_request(&req, &key, &spec).expect("sign");
        let headers: serde_json::Map<String, serde_json::Value> = signed
            .headers()
            .into_iter()
            .map(|(k, v)| (k, serde_json::Value::from(v)))
            .collect();
        let r = run(
            "verify",
            &serde_json::json!({"x": x, "url": URL, "headers": headers}),
        );
        assert_eq!(r["ok"], true, "{form:?}: {r}");
        let r = run(
            "verify",
            &serde_json::json!({"x": x, "url": "https://other.example/", "headers": headers}),
        );
        assert_eq!(r["ok"], false, "{form:?}: another host is refused: {r}");
    }
}
