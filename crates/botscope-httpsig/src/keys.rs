//! Keys: JSON Web Keys (RFC 7517) of Ed25519 (RFC 8037) and RSA, their
//! SHA-256 thumbprints (RFC 7638, the `keyid` Web Bot Auth uses), key
//! directories and signing keys.

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use ring::signature::{self, KeyPair as _};

use crate::Error;

/// The largest key directory read, in bytes.
pub const MAX_DIRECTORY_BYTES: usize = 64 * 1024;
/// The most keys a directory may list.
pub const MAX_DIRECTORY_KEYS: usize = 64;

/// The published example keys of RFC 9421 (Appendix B.1), by JWK
/// thumbprint: anyone holds their private halves, so a signature made
/// with one proves nothing. draft-ietf-webbotauth-httpsig-protocol-01,
/// "Test and Demonstration Keys": "Verifiers SHOULD reject known test
/// keys"; botscope does, unless told it runs tests
/// ([`crate::Policy::allow_test_keys`]).
pub const TEST_KEYS: &[(&str, &str)] = &[
    (
        "poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U",
        "RFC 9421 B.1.4 test-key-ed25519",
    ),
    (
        "oD0HwocPBSfpNy5W3bpJeyFGY_IQ_YpqxSjQ3Yd-CLA",
        "RFC 9421 B.1.2 test-key-rsa-pss",
    ),
    (
        "BHj8s0GPnMEQtkaULIM-PLgEhLBbuGUQ1vMxmBWZzEo",
        "RFC 9421 B.1.1 test-key-rsa",
    ),
    (
        "ydQXMtvbsOsZyFir-Y7A8t7fKEM1gbKPvyFkdpu4fvI",
        "RFC 9421 B.1.3 test-key-ecc-p256",
    ),
];

/// Which published test key `thumbprint` is, if any.
pub fn test_key(thumbprint: &str) -> Option<&'static str> {
    TEST_KEYS
        .iter()
        .find(|(t, _)| *t == thumbprint)
        .map(|(_, name)| *name)
}

/// An Ed25519 public key: its 32 bytes, and the curve point they
/// decompress to (once, not per signature checked).
#[derive(Clone)]
pub struct Ed25519Key {
    bytes: [u8; 32],
    /// Shared: a key is cloned out of a directory per signature checked.
    point: Option<std::sync::Arc<ed25519_dalek::VerifyingKey>>,
}

impl Ed25519Key {
    /// The key of `bytes` (a point off the curve, or of small order,
    /// verifies nothing: such a key would let one signature pass for
    /// many messages).
    pub fn new(bytes: [u8; 32]) -> Ed25519Key {
        Ed25519Key {
            bytes,
            point: ed25519_dalek::VerifyingKey::from_bytes(&bytes)
                .ok()
                .filter(|p| !p.is_weak())
                .map(std::sync::Arc::new),
        }
    }

    /// The 32 bytes (the JWK `x`).
    pub fn bytes(&self) -> &[u8; 32] {
        &self.bytes
    }
}

impl PartialEq for Ed25519Key {
    fn eq(&self, o: &Self) -> bool {
        self.bytes == o.bytes
    }
}

impl Eq for Ed25519Key {}

impl std::fmt::Debug for Ed25519Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Ed25519Key({})", URL_SAFE_NO_PAD.encode(self.bytes))
    }
}

/// A public key that can check signatures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PublicKey {
    /// An Ed25519 key: `alg="ed25519"`.
    Ed25519(Ed25519Key),
    /// An RSA key (modulus and exponent, big-endian): `alg="rsa-pss-sha512"`.
    Rsa {
        /// The modulus.
        n: Vec<u8>,
        /// The public exponent.
        e: Vec<u8>,
    },
}

/// The signature algorithms (RFC 9421 §3.3) and whether they are accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Algorithm {
    /// `ed25519`.
    Ed25519,
    /// `rsa-pss-sha512`.
    RsaPssSha512,
}

impl Algorithm {
    /// The name in `alg`.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Ed25519 => "ed25519",
            Algorithm::RsaPssSha512 => "rsa-pss-sha512",
        }
    }
}

impl PublicKey {
    /// The algorithm this key signs with.
    pub fn algorithm(&self) -> Algorithm {
        match self {
            PublicKey::Ed25519(_) => Algorithm::Ed25519,
            PublicKey::Rsa { .. } => Algorithm::RsaPssSha512,
        }
    }

    /// The JWK SHA-256 thumbprint (RFC 7638), base64url without padding:
    /// the hash of the required members in lexicographic order, no
    /// whitespace (`{"crv":"Ed25519","kty":"OKP","x":"…"}`).
    pub fn thumbprint(&self) -> String {
        let canonical = match self {
            PublicKey::Ed25519(k) => format!(
                r#"{{"crv":"Ed25519","kty":"OKP","x":"{}"}}"#,
                URL_SAFE_NO_PAD.encode(k.bytes)
            ),
            PublicKey::Rsa { n, e } => format!(
                r#"{{"e":"{}","kty":"RSA","n":"{}"}}"#,
                URL_SAFE_NO_PAD.encode(e),
                URL_SAFE_NO_PAD.encode(n)
            ),
        };
        URL_SAFE_NO_PAD.encode(ring::digest::digest(
            &ring::digest::SHA256,
            canonical.as_bytes(),
        ))
    }

    /// An Ed25519 key's curve point (none for RSA, or a key that verifies
    /// nothing).
    pub(crate) fn point(&self) -> Option<&ed25519_dalek::VerifyingKey> {
        match self {
            PublicKey::Ed25519(k) => k.point.as_deref(),
            PublicKey::Rsa { .. } => None,
        }
    }

    /// Whether `sig` is this key's signature of `message`. Ed25519 as RFC
    /// 8032 says it (ed25519-dalek: the signature's scalar reduced; keys
    /// of small order are refused when read), at about 60% of ring's cost.
    pub fn verify(&self, message: &[u8], sig: &[u8]) -> bool {
        match self {
            PublicKey::Ed25519(k) => {
                let (Some(point), Ok(sig)) = (&k.point, ed25519_dalek::Signature::from_slice(sig))
                else {
                    return false;
                };
                ed25519_dalek::Verifier::verify(point.as_ref(), message, &sig).is_ok()
            }
            PublicKey::Rsa { n, e } => signature::RsaPublicKeyComponents { n, e }
                .verify(&signature::RSA_PSS_2048_8192_SHA512, message, sig)
                .is_ok(),
        }
    }

    /// The key as a public JWK, with its thumbprint as `kid`.
    pub fn to_jwk(&self) -> serde_json::Value {
        match self {
            PublicKey::Ed25519(k) => serde_json::json!({
                "kty": "OKP",
                "crv": "Ed25519",
                "kid": self.thumbprint(),
                "x": URL_SAFE_NO_PAD.encode(k.bytes),
                "use": "sig",
            }),
            PublicKey::Rsa { n, e } => serde_json::json!({
                "kty": "RSA",
                "kid": self.thumbprint(),
                "n": URL_SAFE_NO_PAD.encode(n),
                "e": URL_SAFE_NO_PAD.encode(e),
                "use": "sig",
            }),
        }
    }

    /// A public key from a JWK object. Private members are ignored; keys of
    /// other types, curves or uses (`"use":"enc"`) are refused.
    pub fn from_jwk(jwk: &serde_json::Value) -> Result<PublicKey, Error> {
        let s = |k: &str| jwk.get(k).and_then(serde_json::Value::as_str);
        let b64 = |k: &str| -> Result<Vec<u8>, Error> {
            let v = s(k).ok_or_else(|| Error::Jwk(format!("no `{k}`")))?;
            URL_SAFE_NO_PAD
                .decode(v.trim_end_matches('='))
                .map_err(|_| Error::Jwk(format!("`{k}` is not base64url")))
        };
        if let Some(u) = s("use")
            && u != "sig"
        {
            return Err(Error::Jwk(format!("a key for `{u}`, not for signatures")));
        }
        match (s("kty"), s("crv")) {
            (Some("OKP"), Some("Ed25519")) => {
                let x = b64("x")?;
                let x: [u8; 32] = x
                    .try_into()
                    .map_err(|_| Error::Jwk("an Ed25519 `x` is 32 bytes".into()))?;
                let key = Ed25519Key::new(x);
                if key.point.is_none() {
                    return Err(Error::Jwk(
                        "an Ed25519 `x` off the curve or of small order".into(),
                    ));
                }
                Ok(PublicKey::Ed25519(key))
            }
            (Some("RSA"), _) => {
                let (n, e) = (b64("n")?, b64("e")?);
                // ring takes 2048 to 8192 bits.
                let bits = n.iter().skip_while(|b| **b == 0).count() * 8;
                if !(2048..=8192).contains(&bits) {
                    return Err(Error::Jwk(format!("an RSA key of {bits} bits")));
                }
                Ok(PublicKey::Rsa { n, e })
            }
            (Some("OKP"), crv) => Err(Error::Jwk(format!(
                "curve {} (only Ed25519)",
                crv.unwrap_or("none")
            ))),
            (kty, _) => Err(Error::Jwk(format!(
                "key type {} (only OKP Ed25519 and RSA)",
                kty.unwrap_or("none")
            ))),
        }
    }
}

/// A key directory (`/.well-known/http-message-signatures-directory`, a
/// JWK Set): the keys it lists, by thumbprint. Keys it cannot use are
/// counted, not fatal.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Directory {
    /// (thumbprint, key), in the directory's order.
    pub keys: Vec<(String, PublicKey)>,
    /// Entries left out, with the reason.
    pub skipped: Vec<String>,
    /// The keys that say when they stop being valid (JWK `exp`, Unix
    /// seconds), by thumbprint.
    pub expires: Vec<(String, i64)>,
}

impl Directory {
    /// Parses a directory body (`{"keys": [JWK, …]}`), at most
    /// [`MAX_DIRECTORY_BYTES`] and [`MAX_DIRECTORY_KEYS`] keys. A JWK Set
    /// at another URL than the well-known one: a `kid` is its operator's
    /// label, and keys are found by thumbprint.
    pub fn parse(body: &[u8]) -> Result<Directory, Error> {
        Directory::parse_as(body, false)
    }

    /// [`Directory::parse`] for a directory served at the well-known URI
    /// when `well_known`: there a JWK's `kid`, when present, MUST be its
    /// thumbprint (draft-ietf-webbotauth-httpsig-protocol-01, "Key
    /// Distribution and Discovery"), and a key whose `kid` is not is
    /// left out, with the reason.
    ///
    /// ```
    /// use botscope_httpsig::Directory;
    /// let body = br#"{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"my-key","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}"#;
    /// assert_eq!(Directory::parse_as(body, false).unwrap().keys.len(), 1);
    /// let d = Directory::parse_as(body, true).unwrap();
    /// assert!(d.keys.is_empty() && d.skipped[0].contains("not its thumbprint"));
    /// ```
    pub fn parse_as(body: &[u8], well_known: bool) -> Result<Directory, Error> {
        if body.len() > MAX_DIRECTORY_BYTES {
            return Err(Error::Directory(format!(
                "{} bytes, more than {MAX_DIRECTORY_BYTES}",
                body.len()
            )));
        }
        let v: serde_json::Value =
            serde_json::from_slice(body).map_err(|e| Error::Directory(format!("not JSON: {e}")))?;
        let keys = v
            .get("keys")
            .and_then(serde_json::Value::as_array)
            .ok_or_else(|| Error::Directory("no `keys` array".into()))?;
        if keys.len() > MAX_DIRECTORY_KEYS {
            return Err(Error::Directory(format!(
                "{} keys, more than {MAX_DIRECTORY_KEYS}",
                keys.len()
            )));
        }
        let mut d = Directory::default();
        for (i, k) in keys.iter().enumerate() {
            match PublicKey::from_jwk(k) {
                Ok(key) => {
                    let thumbprint = key.thumbprint();
                    if well_known
                        && let Some(kid) = k.get("kid")
                        && kid.as_str() != Some(thumbprint.as_str())
                    {
                        let kid = kid.as_str().map_or_else(|| kid.to_string(), str::to_owned);
                        let kid: String = kid.chars().take(80).collect();
                        d.skipped.push(format!(
                            "key {i}: its kid `{kid}` is not its thumbprint `{thumbprint}` (at the well-known URL it must be)"
                        ));
                        continue;
                    }
                    if let Some(exp) = k.get("exp").and_then(serde_json::Value::as_i64) {
                        d.expires.push((thumbprint.clone(), exp));
                    }
                    d.keys.push((thumbprint, key));
                }
                Err(e) => d.skipped.push(format!("key {i}: {e}")),
            }
        }
        Ok(d)
    }

    /// The directory less the keys whose `exp` is before `now`.
    pub fn without_expired(&self, now: i64) -> Directory {
        let gone = |t: &str| self.expires.iter().any(|(k, exp)| k == t && *exp < now);
        Directory {
            keys: self
                .keys
                .iter()
                .filter(|(t, _)| !gone(t))
                .cloned()
                .collect(),
            skipped: self.skipped.clone(),
            expires: self.expires.clone(),
        }
    }

    /// The key whose thumbprint is `keyid`.
    pub fn key(&self, keyid: &str) -> Option<&PublicKey> {
        self.keys.iter().find(|(t, _)| t == keyid).map(|(_, k)| k)
    }

    /// The directory as published: a JWK Set.
    pub fn to_json(&self) -> String {
        let keys: Vec<serde_json::Value> = self.keys.iter().map(|(_, k)| k.to_jwk()).collect();
        serde_json::json!({ "keys": keys }).to_string()
    }
}

/// An Ed25519 signing key.
pub struct SigningKey {
    pair: signature::Ed25519KeyPair,
    seed: [u8; 32],
    /// Worked out once: every signature names it, and the public point
    /// it comes from costs a field exponentiation to decompress.
    keyid: String,
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the private half.
        f.debug_struct("SigningKey")
            .field("keyid", &self.keyid())
            .finish_non_exhaustive()
    }
}

impl SigningKey {
    /// The key of a 32-byte seed (the JWK `d`).
    pub fn from_seed(seed: &[u8]) -> Result<SigningKey, Error> {
        let seed: [u8; 32] = seed
            .try_into()
            .map_err(|_| Error::Jwk("an Ed25519 private key is 32 bytes".into()))?;
        let pair = signature::Ed25519KeyPair::from_seed_unchecked(&seed)
            .map_err(|e| Error::Jwk(format!("Ed25519 key: {e}")))?;
        let mut key = SigningKey {
            pair,
            seed,
            keyid: String::new(),
        };
        key.keyid = key.public().thumbprint();
        Ok(key)
    }

    /// A new random key.
    pub fn generate() -> Result<SigningKey, Error> {
        let mut seed = [0u8; 32];
        ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut seed)
            .map_err(|_| Error::Random)?;
        SigningKey::from_seed(&seed)
    }

    /// Reads a private key file: a JWK with `d` (as `keys generate` writes
    /// it), or a PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`, as RFC 9421's
    /// test key is given).
    pub fn parse(text: &str) -> Result<SigningKey, Error> {
        let t = text.trim();
        if t.starts_with('{') {
            let v: serde_json::Value =
                serde_json::from_str(t).map_err(|e| Error::Jwk(format!("not JSON: {e}")))?;
            if v.get("kty").and_then(serde_json::Value::as_str) != Some("OKP")
                || v.get("crv").and_then(serde_json::Value::as_str) != Some("Ed25519")
            {
                return Err(Error::Jwk("only Ed25519 keys sign".into()));
            }
            let d = v
                .get("d")
                .and_then(serde_json::Value::as_str)
                .ok_or_else(|| Error::Jwk("no private `d`: a public key cannot sign".into()))?;
            let d = URL_SAFE_NO_PAD
                .decode(d.trim_end_matches('='))
                .map_err(|_| Error::Jwk("`d` is not base64url".into()))?;
            let key = SigningKey::from_seed(&d)?;
            // A JWK that also gives `x` must give this key's.
            if let Some(x) = v.get("x").and_then(serde_json::Value::as_str)
                && URL_SAFE_NO_PAD
                    .decode(x.trim_end_matches('='))
                    .ok()
                    .as_deref()
                    != Some(key.pair.public_key().as_ref())
            {
                return Err(Error::Jwk("`x` is not the public half of `d`".into()));
            }
            return Ok(key);
        }
        let body = t
            .strip_prefix("-----BEGIN PRIVATE KEY-----")
            .and_then(|r| r.strip_suffix("-----END PRIVATE KEY-----"))
            .ok_or_else(|| {
                Error::Jwk("neither a JWK nor a PKCS#8 `BEGIN PRIVATE KEY` PEM".into())
            })?;
        let der: String = body.chars().filter(|c| !c.is_ascii_whitespace()).collect();
        let der = STANDARD
            .decode(der)
            .map_err(|_| Error::Jwk("the PEM is not base64".into()))?;
        // PKCS#8 of Ed25519 (RFC 8410): the seed is the last 32 bytes of
        // the OCTET STRING inside the privateKey OCTET STRING; ring checks
        // the structure.
        signature::Ed25519KeyPair::from_pkcs8_maybe_unchecked(&der)
            .map_err(|e| Error::Jwk(format!("PKCS#8 Ed25519 key: {e}")))?;
        let seed = der
            .get(16..48)
            .ok_or_else(|| Error::Jwk("PKCS#8 key too short".into()))?;
        let key = SigningKey::from_seed(seed)?;
        Ok(key)
    }

    /// The public half.
    pub fn public(&self) -> PublicKey {
        let mut x = [0u8; 32];
        x.copy_from_slice(self.pair.public_key().as_ref());
        PublicKey::Ed25519(Ed25519Key::new(x))
    }

    /// The keyid: the public key's JWK thumbprint.
    pub fn keyid(&self) -> String {
        self.keyid.clone()
    }

    /// Signs `message`.
    pub fn sign(&self, message: &[u8]) -> Vec<u8> {
        self.pair.sign(message).as_ref().to_vec()
    }

    /// The private JWK (`kty`, `crv`, `kid`, `x`, `d`), as a key file holds it.
    pub fn to_private_jwk(&self) -> String {
        let mut v = self.public().to_jwk();
        v["d"] = URL_SAFE_NO_PAD.encode(self.seed).into();
        serde_json::to_string_pretty(&v).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc8037_thumbprint() {
        // RFC 8037 Appendix A.3.
        let jwk = serde_json::json!({"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"});
        let k = PublicKey::from_jwk(&jwk).expect("key");
        assert_eq!(
            k.thumbprint(),
            "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k"
        );
    }

    #[test]
    fn jwk_refusals() {
        for (jwk, says) in [
            (
                serde_json::json!({"kty":"OKP","crv":"X25519","x":"AAAA"}),
                "curve X25519",
            ),
            (serde_json::json!({"kty":"oct","k":"AAAA"}), "key type oct"),
            (
                serde_json::json!({"kty":"OKP","crv":"Ed25519","x":"AAAA"}),
                "32 bytes",
            ),
            (serde_json::json!({"kty":"OKP","crv":"Ed25519"}), "no `x`"),
            // The identity point: of small order.
            (
                serde_json::json!({"kty":"OKP","crv":"Ed25519","x":"AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}),
                "small order",
            ),
            (
                serde_json::json!({"kty":"OKP","crv":"Ed25519","use":"enc","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}),
                "for `enc`",
            ),
        ] {
            let e = PublicKey::from_jwk(&jwk).expect_err("refused").to_string();
            assert!(e.contains(says), "{e}");
        }
    }

    #[test]
    fn directory_limits_and_skips() {
        let d = Directory::parse(br#"{"keys":[{"kty":"oct","k":"x"},{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}"#).expect("dir");
        assert_eq!(d.keys.len(), 1);
        assert_eq!(d.skipped.len(), 1);
        assert!(
            d.key("kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k")
                .is_some()
        );
        assert!(Directory::parse(b"[]").is_err());
        assert!(Directory::parse(&vec![b' '; MAX_DIRECTORY_BYTES + 1]).is_err());
        let many = format!(
            r#"{{"keys":[{}]}}"#,
            vec!["{}"; MAX_DIRECTORY_KEYS + 1].join(",")
        );
        assert!(Directory::parse(many.as_bytes()).is_err());
    }

    #[test]
    fn generated_keys_round_trip() {
        let k = SigningKey::generate().expect("key");
        let back = SigningKey::parse(&k.to_private_jwk()).expect("parse");
        assert_eq!(back.keyid(), k.keyid());
        let sig = k.sign(b"message");
        assert!(k.public().verify(b"message", &sig));
        assert!(!k.public().verify(b"other", &sig));
        assert!(!format!("{k:?}").contains("seed"));
    }
}
