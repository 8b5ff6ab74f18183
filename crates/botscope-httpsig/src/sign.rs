//! Signing requests as a Web Bot Auth agent, and key directory responses.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use sfv::{BareItem, FieldType, Item, KeyRef, Parameters};

use crate::base::{self, Input, Target};
use crate::keys::SigningKey;
use crate::message::{Request, Response};
use crate::verify::{TAG_DIRECTORY, TAG_REQUEST, content_digest};
use crate::{Error, Reason};

/// How `Signature-Agent` is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentForm {
    /// `Signature-Agent: key="https://…"`, covered as
    /// `"signature-agent";key="key"` (the current draft).
    Dictionary(String),
    /// `Signature-Agent: "https://…"`, covered as `"signature-agent"` (the
    /// earlier drafts; what some verifiers still expect).
    Legacy,
}

/// What to sign with.
#[derive(Debug, Clone)]
pub struct SignSpec {
    /// The signature's label (`sig1`).
    pub label: String,
    /// The agent's URL (where its key directory is), if it names one.
    pub agent: Option<String>,
    /// How the agent is written.
    pub form: AgentForm,
    /// `created` and `expires`, Unix seconds.
    pub created: i64,
    /// See `created`.
    pub expires: i64,
    /// A fresh random value per request ([`nonce`]), if any.
    pub nonce: Option<String>,
    /// The tag (`web-bot-auth`).
    pub tag: String,
    /// Header fields the signature covers besides `@authority` and
    /// `Signature-Agent` (lower case: `crawler-max-price`); each must be
    /// in the request signed.
    pub covers: Vec<String>,
}

impl SignSpec {
    /// A spec for `agent` valid from `created` for `seconds`, in the
    /// dictionary form under the label `sig1`.
    pub fn new(agent: Option<&str>, created: i64, seconds: i64, nonce: Option<String>) -> SignSpec {
        SignSpec {
            label: "sig1".into(),
            agent: agent.map(str::to_owned),
            form: AgentForm::Dictionary("sig1".into()),
            created,
            expires: created + seconds,
            nonce,
            tag: TAG_REQUEST.into(),
            covers: Vec::new(),
        }
    }
}

/// The three header fields of a signed request, and the base signed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signed {
    /// `Signature-Agent`, when the spec names an agent.
    pub signature_agent: Option<String>,
    /// `Signature-Input`.
    pub signature_input: String,
    /// `Signature`.
    pub signature: String,
    /// The signature base.
    pub base: String,
}

impl Signed {
    /// The fields as (name, value) pairs, to add to the request.
    pub fn headers(&self) -> Vec<(String, String)> {
        let mut h = Vec::with_capacity(3);
        if let Some(a) = &self.signature_agent {
            h.push(("Signature-Agent".to_owned(), a.clone()));
        }
        h.push(("Signature-Input".to_owned(), self.signature_input.clone()));
        h.push(("Signature".to_owned(), self.signature.clone()));
        h
    }
}

/// A fresh nonce: 64 random bytes, base64.
pub fn nonce() -> Result<String, Error> {
    let mut b = [0u8; 64];
    ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut b)
        .map_err(|_| Error::Random)?;
    Ok(STANDARD.encode(b))
}

fn sf_key(k: &str) -> Result<sfv::Key, Reason> {
    KeyRef::from_str(k)
        .map(ToOwned::to_owned)
        .map_err(|e| Reason::Malformed(format!("`{k}` is not a structured-field key: {e}")))
}

fn string(s: &str) -> Result<BareItem, Reason> {
    sfv::String::from_string(s.to_owned())
        .map(BareItem::String)
        .map_err(|(e, _)| Reason::Malformed(format!("`{s}` is not a structured-field string: {e}")))
}

fn component(name: &str, params: &[(&str, BareItem)]) -> Result<Item, Reason> {
    let mut p = Parameters::new();
    for (k, v) in params {
        p.insert(sf_key(k)?, v.clone());
    }
    Ok(Item::with_params(string(name)?, p))
}

/// The signature parameters in the order the draft's examples give them.
fn params(
    created: i64,
    keyid: &str,
    expires: i64,
    nonce: Option<&str>,
    tag: &str,
) -> Result<Parameters, Reason> {
    let int = |i: i64| -> Result<BareItem, Reason> {
        sfv::Integer::try_from(i)
            .map(BareItem::Integer)
            .map_err(|e| Reason::Malformed(format!("{i}: {e}")))
    };
    let mut p = Parameters::new();
    p.insert(sf_key("created")?, int(created)?);
    p.insert(sf_key("keyid")?, string(keyid)?);
    p.insert(sf_key("alg")?, string("ed25519")?);
    p.insert(sf_key("expires")?, int(expires)?);
    if let Some(n) = nonce {
        p.insert(sf_key("nonce")?, string(n)?);
    }
    p.insert(sf_key("tag")?, string(tag)?);
    Ok(p)
}

fn signature_field(label: &str, sig: &[u8]) -> String {
    format!("{label}=:{}:", STANDARD.encode(sig))
}

/// Signs `req` as `spec` says: covers `@authority`, and `Signature-Agent`
/// when there is an agent.
///
/// ```
/// use botscope_httpsig::{KeySet, Outcome, Policy, Request, SignSpec, SigningKey, sign_request, verify_request};
/// let key = SigningKey::generate().unwrap();
/// let mut req = Request::new("GET", "https", "example.com", "/page", vec![]);
/// let spec = SignSpec::new(Some("https://crawler.example"), 1_735_689_600, 300, None);
/// let signed = sign_request(&req, &key, &spec).unwrap();
/// req.headers.extend(signed.headers());
/// let mut keys = KeySet::new();
/// keys.add_key(Some("https://crawler.example"), key.public());
/// let v = verify_request(&req, &keys, 1_735_689_660, &Policy::default());
/// assert_eq!(v.outcome, Outcome::Verified);
/// assert_eq!(v.agent.as_deref(), Some("https://crawler.example"));
/// ```
pub fn sign_request(req: &Request, key: &SigningKey, spec: &SignSpec) -> Result<Signed, Reason> {
    let mut components = vec![component("@authority", &[])?];
    let mut signature_agent = None;
    if let Some(agent) = &spec.agent {
        let (value, c) = match &spec.form {
            AgentForm::Dictionary(k) => {
                let mut d = sfv::Dictionary::new();
                d.insert(sf_key(k)?, sfv::ListEntry::Item(Item::new(string(agent)?)));
                (
                    d.serialize().unwrap_or_default(),
                    component("signature-agent", &[("key", string(k)?)])?,
                )
            }
            AgentForm::Legacy => (
                Item::new(string(agent)?).serialize(),
                component("signature-agent", &[])?,
            ),
        };
        signature_agent = Some(value);
        components.push(c);
    }
    for name in &spec.covers {
        components.push(component(&name.to_ascii_lowercase(), &[])?);
    }
    let input = Input {
        label: spec.label.clone(),
        components,
        params: params(
            spec.created,
            &key.keyid(),
            spec.expires,
            spec.nonce.as_deref(),
            &spec.tag,
        )?,
    };
    // The base is built over the request as it will be sent: with its
    // Signature-Agent (a previous one replaced).
    let mut sent = req.clone();
    sent.headers
        .retain(|(n, _)| !n.eq_ignore_ascii_case("signature-agent"));
    if let Some(a) = &signature_agent {
        sent.headers.push(("Signature-Agent".into(), a.clone()));
    }
    let base = base::signature_base(Target::Request(&sent), &input)?;
    let sig = key.sign(base.as_bytes());
    Ok(Signed {
        signature_agent,
        signature_input: format!("{}={}", spec.label, input.params_value()),
        signature: signature_field(&spec.label, &sig),
        base,
    })
}

/// The header fields of a signed key directory response for a request
/// to `authority`: `Content-Digest` and one signature per key (labels
/// `binding0`, `binding1`, …), each covering `"@authority";req` and
/// `content-digest`, tagged `http-message-signatures-directory`.
pub fn sign_directory(
    request: &Request,
    body: &[u8],
    keys: &[&SigningKey],
    created: i64,
    expires: i64,
) -> Result<Vec<(String, String)>, Reason> {
    let digest = content_digest(body);
    let headers = vec![("Content-Digest".to_owned(), digest.clone())];
    let response = Response {
        status: 200,
        headers: &headers,
        request: Some(request),
    };
    let (mut inputs, mut sigs) = (Vec::new(), Vec::new());
    for (i, k) in keys.iter().enumerate() {
        let label = format!("binding{i}");
        let input = Input {
            label: label.clone(),
            components: vec![
                component("@authority", &[("req", BareItem::Boolean(true))])?,
                component("content-digest", &[])?,
            ],
            params: params(created, &k.keyid(), expires, None, TAG_DIRECTORY)?,
        };
        let base = base::signature_base(Target::Response(response), &input)?;
        inputs.push(format!("{label}={}", input.params_value()));
        sigs.push(signature_field(&label, &k.sign(base.as_bytes())));
    }
    let mut out = headers;
    out.push(("Signature-Input".into(), inputs.join(", ")));
    out.push(("Signature".into(), sigs.join(", ")));
    Ok(out)
}
