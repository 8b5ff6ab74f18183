//! Verifying a Web Bot Auth request: which signature, which key, and
//! whether it holds.

use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasher, RandomState};

use base64::Engine as _;
use sfv::{BareItem, ListEntry};

use crate::base::{self, Input, MAX_SIGNATURES, Target};
use crate::keys::{Directory, PublicKey};
use crate::message::{Request, Response, field};
use crate::{Outcome, Reason};

/// The tag of a Web Bot Auth request signature.
pub const TAG_REQUEST: &str = "web-bot-auth";
/// The tag of a key directory's response signature.
pub const TAG_DIRECTORY: &str = "http-message-signatures-directory";

/// What a verifier accepts.
#[derive(Debug, Clone)]
pub struct Policy {
    /// Clock skew allowed, in seconds, on both `created` and `expires`.
    pub skew: i64,
    /// The longest validity (`expires` − `created`) accepted, in seconds.
    pub max_validity: i64,
    /// The tag a signature must carry to be considered.
    pub tag: String,
    /// Accept RFC 9421's published test keys ([`crate::keys::TEST_KEYS`]):
    /// for tests and for checking published vectors only; off, a
    /// signature made with one is invalid.
    pub allow_test_keys: bool,
}

impl Default for Policy {
    /// 60 s of skew, a day of validity (the draft RECOMMENDS `expires`
    /// no more than 24 hours after `created`), `tag="web-bot-auth"`,
    /// test keys refused.
    fn default() -> Self {
        Policy {
            skew: 60,
            max_validity: 24 * 3600,
            tag: TAG_REQUEST.to_owned(),
            allow_test_keys: false,
        }
    }
}

impl Policy {
    /// The default policy accepting the published test keys: for tests,
    /// and for checking the drafts' own vectors.
    pub fn with_test_keys() -> Policy {
        Policy {
            allow_test_keys: true,
            ..Policy::default()
        }
    }
}

/// What a key store says about (agent, keyid).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    /// The key.
    Key(PublicKey),
    /// The agent's keys are known and this keyid is not among them.
    NotListed,
    /// The agent's keys are not known (not fetched yet, or the fetch
    /// failed): the signature cannot be checked now.
    Unknown(String),
}

/// Keys by (agent identifier, keyid): never by keyid alone, so one agent
/// cannot sign with the key another one lists (the draft: "Key lookup
/// MUST be keyed on the (URL, key) pair"). An implementation is given the
/// `Signature-Agent` URL as sent (to fetch it) and keys what it holds by
/// its identifier ([`crate::agent::identifier`]).
pub trait Keys {
    /// The key `keyid` of `agent` (`None` for a request without a
    /// `Signature-Agent` URL to use: keys held by other means, found by
    /// their thumbprint alone).
    fn lookup(&self, agent: Option<&str>, keyid: &str) -> Lookup;
}

/// An in-memory key store: directories by agent identifier, and why an
/// agent's could not be had.
#[derive(Debug, Clone, Default)]
pub struct KeySet {
    agents: HashMap<Option<String>, Directory>,
    failed: HashMap<Option<String>, String>,
}

impl KeySet {
    /// An empty store.
    pub fn new() -> KeySet {
        KeySet::default()
    }

    /// Adds `agent`'s directory (`None`: keys for requests without a
    /// `Signature-Agent`, configured by hand), kept under its identifier.
    pub fn insert(&mut self, agent: Option<&str>, dir: Directory) {
        self.agents.insert(agent.map(crate::agent::identifier), dir);
    }

    /// Notes that `agent`'s directory could not be had, and why: its
    /// signatures are unverified with that reason.
    pub fn fail(&mut self, agent: Option<&str>, why: impl Into<String>) {
        self.failed
            .insert(agent.map(crate::agent::identifier), why.into());
    }

    /// Adds one key for `agent`.
    pub fn add_key(&mut self, agent: Option<&str>, key: PublicKey) {
        let d = self
            .agents
            .entry(agent.map(crate::agent::identifier))
            .or_default();
        d.keys.push((key.thumbprint(), key));
    }
}

impl Keys for KeySet {
    fn lookup(&self, agent: Option<&str>, keyid: &str) -> Lookup {
        let id = agent.map(crate::agent::identifier);
        match self.agents.get(&id) {
            Some(d) => d.key(keyid).cloned().map_or(Lookup::NotListed, Lookup::Key),
            None => Lookup::Unknown(match (self.failed.get(&id), agent) {
                (Some(why), Some(a)) => format!("the directory of {a}: {why}"),
                (Some(why), None) => why.clone(),
                (None, Some(a)) => format!("no directory of {a}"),
                (None, None) => "no keys for requests without Signature-Agent".into(),
            }),
        }
    }
}

/// The verdict on a message's signatures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// Verified, invalid or unverified.
    pub outcome: Outcome,
    /// Why (for `verified`: the signature that holds).
    pub reason: Reason,
    /// The label of the signature the verdict is about.
    pub label: Option<String>,
    /// The signature agent (URL) the signature names.
    pub agent: Option<String>,
    /// The keyid.
    pub keyid: Option<String>,
    /// `created`, `expires` and `nonce`.
    pub created: Option<i64>,
    /// See `created`.
    pub expires: Option<i64>,
    /// See `created`.
    pub nonce: Option<String>,
    /// The signature base that was built, for tracing.
    pub base: Option<String>,
    /// The names of the components the signature covers, as written
    /// (`@authority`, `signature-agent`, `crawler-max-price`), without
    /// their parameters.
    pub covered: Vec<String>,
    /// How `Signature-Agent` was written for this signature:
    /// `dictionary`, `legacy-string` (one sf-string, the earlier drafts'
    /// form) or `legacy-bare` (a URL outside any structured field).
    pub agent_form: Option<&'static str>,
    /// The agent URL resolved: what is fetched, the identifier keys are
    /// kept under, and how the value was read.
    pub agent_url: Option<crate::agent::AgentUrl>,
    /// The key was not had from the agent's URL but held by other means
    /// (`Keys::lookup(None, …)`): the signature is attributed to the key
    /// alone (the draft, "Discovery Failure": the verifier "MUST NOT
    /// attribute the request to that URL").
    pub key_alone: bool,
    /// What a reader should know that the outcome does not say (a member
    /// ignored for its parameters, no `Signature-Agent`, plain http).
    pub notes: Vec<String>,
    /// When the message has more than one signature tagged as looked
    /// for: each, checked on its own (the draft: "Verifiers MUST validate
    /// each signature independently"), in the message's order; this
    /// verdict is the first that holds, else the first invalid one, else
    /// the first. Empty otherwise ([`Verdict::each`] lists them all).
    pub signatures: Vec<Verdict>,
}

impl Verdict {
    /// A verdict with nothing but its outcome and reason.
    pub fn bare(outcome: Outcome, reason: Reason) -> Verdict {
        Verdict {
            outcome,
            reason,
            label: None,
            agent: None,
            keyid: None,
            created: None,
            expires: None,
            nonce: None,
            base: None,
            covered: Vec::new(),
            agent_form: None,
            agent_url: None,
            key_alone: false,
            notes: Vec::new(),
            signatures: Vec::new(),
        }
    }

    /// Who the signature is attributed to: the agent's identifier when its
    /// URL was resolved, else the key's JWK thumbprint as a URI (RFC 9278),
    /// as the draft says for a request with no URL to attribute to.
    pub fn identifier(&self) -> Option<String> {
        match (&self.agent_url, &self.keyid) {
            (Some(a), _) if !self.key_alone => Some(a.identifier.clone()),
            (_, Some(k)) => Some(format!("urn:ietf:params:oauth:jwk-thumbprint:sha-256:{k}")),
            _ => None,
        }
    }

    /// Every signature checked: `signatures`, or this verdict alone when
    /// it is about one signature (none when the message had none).
    pub fn each(&self) -> Vec<&Verdict> {
        if !self.signatures.is_empty() {
            self.signatures.iter().collect()
        } else if self.label.is_some() {
            vec![self]
        } else {
            Vec::new()
        }
    }

    /// The verdict as JSON: outcome, reason (its code and words), label,
    /// agent (as sent) and its form and reading, identifier, keyid, times
    /// (Unix seconds and RFC 3339), nonce and notes; `signatures` lists
    /// every signature the same way.
    pub fn to_json(&self) -> serde_json::Value {
        let mut v = serde_json::json!({
            "outcome": self.outcome.as_str(),
            "reason": self.reason.to_string(),
            "reason_code": self.reason.code(),
            "label": self.label,
            "agent": self.agent,
            "agent_form": self.agent_form,
            "reading": self.agent_url.as_ref().map(|a| a.reading.as_str()),
            "key_url": self.agent_url.as_ref().map(|a| a.fetch.clone()),
            "identifier": self.identifier(),
            "keyid": self.keyid,
            "created": self.created,
            "created_at": self.created.and_then(crate::rfc3339),
            "expires": self.expires,
            "expires_at": self.expires.and_then(crate::rfc3339),
            "nonce": self.nonce,
            "notes": self.notes,
        });
        if !self.signatures.is_empty() {
            v["signatures"] = self.signatures.iter().map(Verdict::to_json).collect();
        }
        v
    }

    /// [`Verdict::to_json`] of each signature ([`Verdict::each`]).
    pub fn each_json(&self) -> Vec<serde_json::Value> {
        self.each()
            .into_iter()
            .map(|v| {
                let mut j = v.to_json();
                if let Some(o) = j.as_object_mut() {
                    o.remove("signatures");
                }
                j
            })
            .collect()
    }
}

/// The `Signature-Agent` value a signature names, and how it was
/// written.
#[derive(Debug)]
struct Named {
    value: Option<String>,
    form: &'static str,
    note: Option<String>,
}

/// The agent a signature names: the `Signature-Agent` member its
/// `"signature-agent";key="…"` component selects (dictionary form), or the
/// field itself (the legacy form: one sf-string, or a bare URL). A member
/// that carries parameters names nothing (the draft: "A verifier MUST
/// ignore a member that carries parameters").
fn agent_of(req: &Request, input: &Input) -> Result<Option<Named>, Reason> {
    let Some(value) = req.header("signature-agent") else {
        return Ok(None);
    };
    let covered: Vec<&sfv::Item> = input
        .components
        .iter()
        .filter(|c| matches!(&c.bare_item, BareItem::String(s) if s.as_str() == "signature-agent"))
        .collect();
    if covered.is_empty() {
        // The draft: when the header is present, it must be covered.
        return Err(Reason::AgentNotCovered);
    }
    for c in covered {
        if let Some(BareItem::String(key)) = c.params.get("key") {
            let d = base::dictionary("Signature-Agent", &value)?;
            return match d.get(key.as_str()) {
                Some(ListEntry::Item(sfv::Item {
                    bare_item: BareItem::String(s),
                    params,
                })) if !params.is_empty() => {
                    let shown: Vec<String> = params
                        .iter()
                        .take(4)
                        .map(|(k, v)| match v {
                            BareItem::Token(t) => format!(";{}={}", k.as_str(), t.as_str()),
                            _ => format!(";{}", k.as_str()),
                        })
                        .collect();
                    Ok(Some(Named {
                        value: None,
                        form: "dictionary",
                        note: Some(format!(
                            "Signature-Agent member `{}` (\"{}\"{}) carries parameters: ignored, as draft-ietf-webbotauth-httpsig-protocol-01 requires (earlier drafts' `type=` members are no longer read)",
                            key.as_str(),
                            s.as_str().chars().take(200).collect::<String>(),
                            shown.concat()
                        )),
                    }))
                }
                Some(ListEntry::Item(sfv::Item {
                    bare_item: BareItem::String(s),
                    ..
                })) => Ok(Some(Named {
                    value: Some(s.as_str().to_owned()),
                    form: "dictionary",
                    note: None,
                })),
                Some(_) => Err(Reason::Malformed(format!(
                    "Signature-Agent `{}` is not a string",
                    key.as_str()
                ))),
                None => Err(Reason::ComponentMissing(format!(
                    "\"signature-agent\";key=\"{}\"",
                    key.as_str()
                ))),
            };
        }
    }
    if value.len() > base::MAX_FIELD_BYTES {
        return Err(Reason::Malformed("Signature-Agent is too long".into()));
    }
    let (agent, form) = legacy_agent(&value);
    Ok(Some(Named {
        value: Some(agent),
        form,
        note: None,
    }))
}

/// The agent of the legacy form `Signature-Agent: "https://…"`; some
/// agents send the URL bare (`<https://…>` or `https://…`).
fn legacy_agent(value: &str) -> (String, &'static str) {
    match sfv::Parser::new(value).parse::<sfv::Item>() {
        Ok(sfv::Item {
            bare_item: BareItem::String(s),
            ..
        }) => (s.as_str().to_owned(), "legacy-string"),
        _ => (
            value.trim_matches(['<', '>', ' ']).to_owned(),
            "legacy-bare",
        ),
    }
}

/// What one signature is checked against.
struct Context<'a> {
    target: Target<'a>,
    /// The request (the message itself, or the one a response answers).
    req: &'a Request,
    /// The `Signature` field.
    signatures: &'a str,
    keys: &'a dyn Keys,
    now: i64,
    policy: &'a Policy,
}

/// The agent URLs a request's `Signature-Agent` names (every string
/// member of the dictionary form, or the legacy single value), at most
/// [`MAX_SIGNATURES`]: the directories to fetch before verifying.
pub fn signature_agents(req: &Request) -> Vec<String> {
    req.header("signature-agent")
        .map_or_else(Vec::new, |v| agents_in(&v))
}

/// The agent URLs a `Signature-Agent` value names ([`signature_agents`]).
pub fn agents_in(value: &str) -> Vec<String> {
    if value.len() > base::MAX_FIELD_BYTES {
        return Vec::new();
    }
    if let Ok(d) = sfv::Parser::new(value).parse::<sfv::Dictionary>() {
        // Members with parameters are ignored: nothing is fetched for them.
        let agents: Vec<String> = d
            .values()
            .filter_map(|e| match e {
                ListEntry::Item(sfv::Item {
                    bare_item: BareItem::String(s),
                    params,
                }) if params.is_empty() => Some(s.as_str().to_owned()),
                _ => None,
            })
            .take(MAX_SIGNATURES)
            .collect();
        if !agents.is_empty() || !d.is_empty() {
            return agents;
        }
    }
    vec![legacy_agent(value).0]
}

/// Checks one signature input up to the cryptography: `Ok` with the key
/// and the signature to check over the base (in `v`), `Err` with the
/// outcome and reason.
fn check_one(
    cx: &Context<'_>,
    input: &Input,
    v: &mut Verdict,
) -> Result<(PublicKey, Vec<u8>), (Outcome, Reason)> {
    let Context {
        target,
        req,
        signatures: signature_field,
        keys,
        now,
        policy,
    } = *cx;
    let invalid = |r: Reason| (Outcome::Invalid, r);
    v.label = Some(input.label.clone());
    // The agent the signature names, known before any check can fail: an
    // expired or malformed signature still says whose it claims to be.
    if let Ok(Some(Named {
        value: Some(value), ..
    })) = agent_of(req, input)
    {
        v.agent = Some(value);
    }
    v.created = input.int("created").map_err(invalid)?;
    v.expires = input.int("expires").map_err(invalid)?;
    v.nonce = input.string("nonce").map_err(invalid)?.map(str::to_owned);
    v.keyid = input.string("keyid").map_err(invalid)?.map(str::to_owned);
    let keyid = v
        .keyid
        .clone()
        .ok_or(invalid(Reason::MissingParam("keyid")))?;
    let created = v.created.ok_or(invalid(Reason::MissingParam("created")))?;
    let expires = v.expires.ok_or(invalid(Reason::MissingParam("expires")))?;
    let alg = input.string("alg").map_err(invalid)?.map(str::to_owned);
    if let Some(a) = &alg {
        if a.starts_with("hmac") {
            return Err(invalid(Reason::Hmac));
        }
        if a != "ed25519" && a != "rsa-pss-sha512" {
            return Err(invalid(Reason::UnsupportedAlgorithm(a.clone())));
        }
    }
    if created > now + policy.skew {
        return Err(invalid(Reason::CreatedInFuture { created, now }));
    }
    if expires <= created {
        return Err(invalid(Reason::Malformed(
            "`expires` is not after `created`".into(),
        )));
    }
    if expires + policy.skew < now {
        return Err(invalid(Reason::Expired { expires, now }));
    }
    if expires - created > policy.max_validity {
        return Err(invalid(Reason::ValidityTooLong {
            seconds: expires - created,
            max: policy.max_validity,
        }));
    }
    if matches!(target, Target::Request(_))
        && !input.covers("@authority")
        && !input.covers("@target-uri")
    {
        return Err(invalid(Reason::AuthorityNotCovered));
    }
    if let Target::Request(r) = target
        && r.scheme.eq_ignore_ascii_case("http")
    {
        v.notes.push(
            "sent over plain http: anyone on the path could copy it and replay it until it expires (the draft: an origin SHOULD refuse signatures over an unsecured channel)".into(),
        );
    }
    match agent_of(req, input).map_err(invalid)? {
        Some(named) => {
            v.agent_form = Some(named.form);
            v.notes.extend(named.note);
            if let Some(value) = named.value {
                v.agent_url = Some(crate::agent::resolve(&value).map_err(|e| {
                    invalid(Reason::Malformed(format!(
                        "Signature-Agent: {e} (the draft: an absolute https URI)"
                    )))
                })?);
                v.agent = Some(value);
            }
        }
        None if matches!(target, Target::Request(_)) && policy.tag == TAG_REQUEST => {
            v.notes.push(
                "no Signature-Agent: the draft requires one on every signed request; the signature can only be attributed to its key (its thumbprint)".into(),
            );
        }
        None => {}
    }
    let base = base::signature_base(target, input).map_err(invalid)?;
    let sig = base::signature(signature_field, &input.label).map_err(invalid)?;
    v.base = Some(base);
    v.covered = input
        .components
        .iter()
        .filter_map(|c| match &c.bare_item {
            BareItem::String(s) => Some(s.as_str().to_owned()),
            _ => None,
        })
        .collect();
    let key = match keys.lookup(v.agent.as_deref(), &keyid) {
        Lookup::Key(k) => k,
        Lookup::NotListed => {
            return Err(invalid(Reason::KeyNotListed {
                agent: v.agent.clone(),
            }));
        }
        // The agent's keys are not had: a key held by other means may
        // still verify, attributed to the key alone.
        Lookup::Unknown(_)
            if v.agent.is_some()
                && let Lookup::Key(k) = keys.lookup(None, &keyid) =>
        {
            v.key_alone = true;
            v.notes.push(format!(
                "the keys of {} were not had from it; verified with a key held by other means, so attributed to the key alone",
                v.agent.as_deref().unwrap_or_default().chars().take(200).collect::<String>()
            ));
            k
        }
        Lookup::Unknown(why) => {
            let why = match (v.agent.is_none(), v.agent_form) {
                (true, Some("dictionary")) => format!(
                    "its Signature-Agent member is ignored (it carries parameters), so there is no URL to fetch keys from; {why}"
                ),
                _ => why,
            };
            return Err((Outcome::Unverified, Reason::KeysUnknown(why)));
        }
    };
    if !policy.allow_test_keys
        && let Some(name) = crate::keys::test_key(&keyid)
    {
        return Err(invalid(Reason::TestKey(name)));
    }
    if let Some(a) = &alg
        && a != key.algorithm().name()
    {
        return Err(invalid(Reason::AlgorithmMismatch {
            alg: a.clone(),
            key: key.algorithm().name(),
        }));
    }
    Ok((key, sig))
}

/// One signature left to check: its key and bytes, the base in its
/// verdict (which says `verified` if the check holds).
#[derive(Debug)]
struct Pending {
    verdict: Verdict,
    key: PublicKey,
    signature: Vec<u8>,
}

/// A message's signatures checked up to the cryptography: what is left
/// is a signature check per candidate ([`Prepared::checks`]), which a
/// server may batch across requests ([`check_batch`]) before
/// [`Prepared::finish`].
#[derive(Debug)]
pub struct Prepared {
    /// Per tagged signature, in order: its failure, or its check.
    steps: Vec<Step>,
}

/// A tagged signature: checked but for the cryptography, or failed.
#[derive(Debug)]
enum Step {
    Pending(Pending),
    Failed(Verdict),
}

impl Prepared {
    fn done(v: Verdict) -> Prepared {
        Prepared {
            steps: vec![Step::Failed(v)],
        }
    }

    /// The checks left, in order: (key, signature base, signature).
    pub fn checks(&self) -> Vec<(&PublicKey, &[u8], &[u8])> {
        self.steps
            .iter()
            .filter_map(|s| match s {
                Step::Pending(p) => Some(p),
                Step::Failed(_) => None,
            })
            .map(|p| {
                (
                    &p.key,
                    p.verdict.base.as_deref().unwrap_or_default().as_bytes(),
                    p.signature.as_slice(),
                )
            })
            .collect()
    }

    /// The verdict, given the result of each of [`Prepared::checks`] in
    /// order: verified when one holds (the first); else invalid when one
    /// is wrong (the first); else unverified. Every signature's own
    /// verdict is in its `signatures`.
    pub fn finish(self, results: &[bool]) -> Verdict {
        let mut results = results.iter();
        let all: Vec<Verdict> = self
            .steps
            .into_iter()
            .map(|step| match step {
                Step::Pending(mut p) => {
                    if !results.next().copied().unwrap_or(false) {
                        p.verdict.outcome = Outcome::Invalid;
                        p.verdict.reason = Reason::BadSignature;
                    }
                    p.verdict
                }
                Step::Failed(v) => v,
            })
            .collect();
        // Verified first; invalid outranks unverified: a wrong signature
        // is worth reporting over one that could not be checked.
        let rank = |v: &Verdict| match v.outcome {
            Outcome::Verified => 0,
            Outcome::Invalid => 1,
            Outcome::Unverified => 2,
        };
        let Some(best) = all
            .iter()
            .enumerate()
            .min_by_key(|(i, v)| (rank(v), *i))
            .map(|(i, _)| i)
        else {
            return Verdict::bare(Outcome::Unverified, Reason::NoSignature);
        };
        if all.len() == 1 {
            // One signature: it is its own list ([`Verdict::each`]).
            return all
                .into_iter()
                .next()
                .unwrap_or_else(|| Verdict::bare(Outcome::Unverified, Reason::NoSignature));
        }
        let mut top = all[best].clone();
        top.signatures = all;
        top
    }

    /// Checks what is left here and now ([`Prepared::finish`]).
    pub fn verify(self) -> Verdict {
        let results: Vec<bool> = self
            .checks()
            .iter()
            .map(|(k, m, s)| k.verify(m, s))
            .collect();
        self.finish(&results)
    }
}

/// Checks many signatures at once: the Ed25519 ones in one batch
/// (ed25519-dalek's batch equation, about half the cost of checking each
/// when there are dozens; when the batch fails, each is checked alone to
/// find which), the others one by one. The results, in order.
///
/// The batch equation is the cofactored one: it may accept a signature
/// whose `R` carries a small torsion component, which a check alone
/// refuses. Such a signature is still one the key's owner made (of the
/// same base, nonce included): it passes for no other message.
pub fn check_batch(checks: &[(&PublicKey, &[u8], &[u8])]) -> Vec<bool> {
    let mut out = vec![false; checks.len()];
    let mut at = Vec::new();
    let (mut msgs, mut sigs, mut keys) = (Vec::new(), Vec::new(), Vec::new());
    for (i, (k, m, s)) in checks.iter().enumerate() {
        match (k.point(), ed25519_dalek::Signature::from_slice(s)) {
            (Some(point), Ok(sig)) => {
                at.push(i);
                msgs.push(*m);
                sigs.push(sig);
                keys.push(*point);
            }
            (None, _) if matches!(k, PublicKey::Rsa { .. }) => out[i] = k.verify(m, s),
            _ => {}
        }
    }
    let all = match at.len() {
        0 => return out,
        1 => false,
        _ => ed25519_dalek::verify_batch(&msgs, &sigs, &keys).is_ok(),
    };
    for &i in &at {
        out[i] = all || {
            let (k, m, s) = checks[i];
            k.verify(m, s)
        };
    }
    out
}

/// The signatures of `target` tagged `policy.tag` at `now` (Unix
/// seconds), checked up to the cryptography. At most [`MAX_SIGNATURES`]
/// are looked at. Replayed nonces are the caller's to catch
/// ([`NonceMemory`]), as it keeps the state.
fn prepare_target(
    target: Target<'_>,
    req: &Request,
    keys: &dyn Keys,
    now: i64,
    policy: &Policy,
) -> Prepared {
    let headers = match target {
        Target::Request(r) => r.headers.as_slice(),
        Target::Response(r) => r.headers,
    };
    let (Some(input_field), Some(sig_field)) = (
        field(headers, "signature-input"),
        field(headers, "signature"),
    ) else {
        let reason = if field(headers, "signature-input").is_some()
            || field(headers, "signature").is_some()
        {
            return Prepared::done(Verdict::bare(
                Outcome::Invalid,
                Reason::Malformed("Signature-Input without Signature, or the other way".into()),
            ));
        } else {
            Reason::NoSignature
        };
        return Prepared::done(Verdict::bare(Outcome::Unverified, reason));
    };
    let inputs = match base::inputs(&input_field) {
        Ok(i) => i,
        Err(r) => return Prepared::done(Verdict::bare(Outcome::Invalid, r)),
    };
    let tagged: Vec<&Input> = inputs
        .iter()
        .filter(|i| i.string("tag").ok().flatten() == Some(policy.tag.as_str()))
        .take(MAX_SIGNATURES)
        .collect();
    if tagged.is_empty() {
        let tags: Vec<String> = inputs
            .iter()
            .map(|i| i.string("tag").ok().flatten().unwrap_or("none").to_owned())
            .collect();
        return Prepared::done(Verdict::bare(
            Outcome::Unverified,
            Reason::NotTagged {
                want: policy.tag.clone(),
                found: tags,
            },
        ));
    }
    let cx = Context {
        target,
        req,
        signatures: &sig_field,
        keys,
        now,
        policy,
    };
    let steps = tagged
        .into_iter()
        .map(|input| {
            let mut v = Verdict::bare(Outcome::Verified, Reason::Holds);
            match check_one(&cx, input, &mut v) {
                Ok((key, signature)) => Step::Pending(Pending {
                    verdict: v,
                    key,
                    signature,
                }),
                Err((outcome, reason)) => {
                    v.outcome = outcome;
                    v.reason = reason;
                    Step::Failed(v)
                }
            }
        })
        .collect();
    Prepared { steps }
}

/// [`prepare_target`], checked here and now.
fn verify_target(
    target: Target<'_>,
    req: &Request,
    keys: &dyn Keys,
    now: i64,
    policy: &Policy,
) -> Verdict {
    prepare_target(target, req, keys, now, policy).verify()
}

/// A request's Web Bot Auth signatures at `now`, checked up to the
/// cryptography ([`Prepared`]): for a server that batches the checks.
pub fn prepare_request(req: &Request, keys: &dyn Keys, now: i64, policy: &Policy) -> Prepared {
    prepare_target(Target::Request(req), req, keys, now, policy)
}

/// Verifies a request's Web Bot Auth signature at `now` (Unix seconds).
///
/// ```
/// use botscope_httpsig::{KeySet, Outcome, Policy, Request, Reason, verify_request};
/// let req = Request::new("GET", "https", "example.com", "/", vec![]);
/// let v = verify_request(&req, &KeySet::new(), 1_735_689_600, &Policy::default());
/// assert_eq!((v.outcome, v.reason), (Outcome::Unverified, Reason::NoSignature));
/// ```
pub fn verify_request(req: &Request, keys: &dyn Keys, now: i64, policy: &Policy) -> Verdict {
    verify_target(Target::Request(req), req, keys, now, policy)
}

/// Verifies a key directory response: its `Content-Digest` matches the
/// body, and a signature tagged `http-message-signatures-directory`,
/// covering the request's `@authority` (`;req`), holds with a key the
/// directory itself lists. `Unverified` when the response is not signed.
pub fn verify_directory_response(
    request: &Request,
    response: Response<'_>,
    body: &[u8],
    now: i64,
    policy: &Policy,
) -> Verdict {
    let dir = match Directory::parse(body) {
        Ok(d) => d,
        Err(e) => return Verdict::bare(Outcome::Invalid, Reason::Malformed(e.to_string())),
    };
    if let Some(digest) = field(response.headers, "content-digest")
        && let Err(r) = check_content_digest(&digest, body)
    {
        return Verdict::bare(Outcome::Invalid, r);
    }
    let mut keys = KeySet::new();
    keys.insert(None, dir);
    let policy = Policy {
        tag: TAG_DIRECTORY.to_owned(),
        ..policy.clone()
    };
    // The directory's keys sign for the directory itself: looked up
    // without an agent.
    let bare = Request {
        headers: Vec::new(),
        ..request.clone()
    };
    let mut v = verify_target(Target::Response(response), &bare, &keys, now, &policy);
    if v.outcome == Outcome::Verified
        && !v
            .base
            .as_deref()
            .is_some_and(|b| b.lines().any(|l| l.starts_with("\"@authority\";req: ")))
    {
        v.outcome = Outcome::Invalid;
        v.reason = Reason::AuthorityNotCovered;
    }
    v
}

/// Checks a `Content-Digest` (RFC 9530) against `body`: every `sha-256`
/// and `sha-512` member must match, and one must be there.
pub fn check_content_digest(value: &str, body: &[u8]) -> Result<(), Reason> {
    let d = base::dictionary("Content-Digest", value)?;
    let mut checked = false;
    for (alg, entry) in &d {
        let algorithm = match alg.as_str() {
            "sha-256" => &ring::digest::SHA256,
            "sha-512" => &ring::digest::SHA512,
            _ => continue,
        };
        let ListEntry::Item(sfv::Item {
            bare_item: BareItem::ByteSequence(want),
            ..
        }) = entry
        else {
            return Err(Reason::Malformed(format!(
                "Content-Digest `{}` is not a byte sequence",
                alg.as_str()
            )));
        };
        if ring::digest::digest(algorithm, body).as_ref() != want.as_slice() {
            return Err(Reason::DigestMismatch);
        }
        checked = true;
    }
    if checked {
        Ok(())
    } else {
        Err(Reason::Malformed(
            "Content-Digest has no sha-256 or sha-512".into(),
        ))
    }
}

/// A `Content-Digest` value for `body` (`sha-256=:…:`).
pub fn content_digest(body: &[u8]) -> String {
    format!(
        "sha-256=:{}:",
        base64::engine::general_purpose::STANDARD
            .encode(ring::digest::digest(&ring::digest::SHA256, body))
    )
}

/// Seconds within which one request asked about again (same nonce, same
/// context) is not a replay.
pub const REPEAT_GRACE: i64 = 5;

/// Nonces seen, each kept until its signature expires: a second request
/// with the same (agent, keyid, nonce) inside the validity window is a
/// replay. At most `capacity` are kept; when full, the one that expires
/// first is forgotten (a flood of valid signatures needs valid keys).
#[derive(Debug)]
pub struct NonceMemory {
    capacity: usize,
    /// (agent, keyid, nonce) → (expires, insertion number, the request's
    /// context, when first seen).
    seen: HashMap<NonceKey, (i64, u64, Option<u64>, i64)>,
    by_expiry: BTreeMap<(i64, u64), NonceKey>,
    next: u64,
    /// Two independently keyed hashers: an (agent, keyid, nonce) is kept
    /// as its 128-bit fingerprint, nothing copied per request. Keyed per
    /// process, so no one can make two nonces collide on purpose; by
    /// chance, a new nonce is taken for one of the 65,536 the gate keeps
    /// once in 2^112.
    hashers: (RandomState, RandomState),
}

/// An (agent, keyid, nonce)'s fingerprint.
type NonceKey = (u64, u64);

impl NonceMemory {
    /// A memory of at most `capacity` nonces.
    pub fn new(capacity: usize) -> NonceMemory {
        NonceMemory {
            capacity: capacity.max(1),
            seen: HashMap::new(),
            by_expiry: BTreeMap::new(),
            next: 0,
            hashers: (RandomState::new(), RandomState::new()),
        }
    }

    fn key(&self, agent: Option<&str>, keyid: &str, nonce: &str) -> NonceKey {
        let k = (agent, keyid, nonce);
        (self.hashers.0.hash_one(k), self.hashers.1.hash_one(k))
    }

    /// Nonces kept now.
    pub fn len(&self) -> usize {
        self.seen.len()
    }

    /// No nonce kept.
    pub fn is_empty(&self) -> bool {
        self.seen.is_empty()
    }

    /// Checks a verified signature's nonce and remembers it: `false` when
    /// it was seen before and has not expired. A verdict without a nonce
    /// passes (the draft lets agents leave it out).
    pub fn admit(&mut self, v: &Verdict, now: i64) -> bool {
        self.admit_in(v, now, None)
    }

    /// [`NonceMemory::admit`] for a server asked about one request more
    /// than once (nginx's `auth_request` asks again after an internal
    /// redirect, to `index.html` say): the same nonce in the same
    /// `context` (a hash of the client's address and the request as
    /// sent) within [`REPEAT_GRACE`] seconds of its first sight is the
    /// same request, not a replay.
    pub fn admit_in(&mut self, v: &Verdict, now: i64, context: Option<u64>) -> bool {
        let (Some(nonce), Some(keyid), Some(expires)) = (&v.nonce, &v.keyid, v.expires) else {
            return true;
        };
        // Expired entries go first.
        while let Some(entry) = self.by_expiry.first_entry() {
            if entry.key().0 >= now {
                break;
            }
            let k = entry.remove();
            self.seen.remove(&k);
        }
        let key = self.key(v.agent.as_deref(), keyid, nonce);
        if let Some(&(_, _, first_context, first)) = self.seen.get(&key) {
            return context.is_some() && first_context == context && now - first <= REPEAT_GRACE;
        }
        if self.seen.len() >= self.capacity
            && let Some((_, k)) = self.by_expiry.pop_first()
        {
            self.seen.remove(&k);
        }
        self.next += 1;
        self.seen.insert(key, (expires, self.next, context, now));
        self.by_expiry.insert((expires, self.next), key);
        true
    }

    /// [`NonceMemory::admit`] applied to a verdict: a verified signature
    /// whose nonce was seen becomes invalid (`nonce replayed`).
    pub fn check(&mut self, v: &mut Verdict, now: i64) {
        self.check_in(v, now, None);
    }

    /// [`NonceMemory::admit_in`] applied to a verdict.
    pub fn check_in(&mut self, v: &mut Verdict, now: i64, context: Option<u64>) {
        if v.outcome == Outcome::Verified && !self.admit_in(v, now, context) {
            v.outcome = Outcome::Invalid;
            v.reason = Reason::Replayed;
            for s in v.signatures.iter_mut().filter(|s| s.label == v.label) {
                s.outcome = Outcome::Invalid;
                s.reason = Reason::Replayed;
            }
        }
    }
}
