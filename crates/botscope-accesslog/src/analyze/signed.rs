//! Signed requests (HTTP Message Signatures, Web Bot Auth): what a
//! caller's [`SignatureCheck`] made of each, tallied per client and per
//! signature agent.

use std::collections::BTreeMap;

use super::Map;
use crate::Record;

/// Distinct signature agents tallied on their own; the requests of the
/// others count under [`OTHER_AGENTS`], so made-up agent URLs cannot
/// multiply the counters.
pub const MAX_SIGNATURE_AGENTS: usize = 64;

/// The agent the agents past [`MAX_SIGNATURE_AGENTS`] count under.
pub const OTHER_AGENTS: &str = "(other agents)";

/// The agent of signed requests that named none.
pub const NO_AGENT: &str = "(no Signature-Agent)";

/// Distinct reasons kept per agent; the rest count under `other`.
const MAX_REASONS: usize = 8;

/// What a check made of a signed request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SignatureOutcome {
    /// A signature verified with a key of the agent's directory.
    Verified,
    /// A signature that does not verify, or breaks the protocol's rules.
    Invalid,
    /// Not decided: no key known, a directory that could not be fetched,
    /// or not checked at all.
    Unverified,
}

/// One signed request's verdict, from the caller's check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignatureSeen {
    /// The outcome.
    pub outcome: SignatureOutcome,
    /// The signature agent (its URL as the request named it, normalised),
    /// if it named one.
    pub agent: Option<String>,
    /// Why it is not verified (a stable code and its detail).
    pub reason: Option<String>,
}

/// Checks a signed request; implemented by the caller over the signature
/// verifier and the agents' key directories. Called only for records that
/// carry a signature ([`crate::Signed::is_signed`]).
pub trait SignatureCheck: Sync {
    /// The verdict on `r`'s signature, at the time the log gives.
    fn check(&self, r: &Record<'_>) -> SignatureSeen;
}

/// Counts of one client's or one agent's signed requests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct SignatureCounts {
    /// Requests that carried a signature.
    pub signed: u64,
    /// Of them, verified.
    pub verified: u64,
    /// Of them, invalid.
    pub invalid: u64,
}

impl SignatureCounts {
    /// Requests neither verified nor invalid.
    pub fn unverified(&self) -> u64 {
        self.signed - self.verified - self.invalid
    }

    pub(crate) fn add(&mut self, outcome: SignatureOutcome) {
        self.signed += 1;
        match outcome {
            SignatureOutcome::Verified => self.verified += 1,
            SignatureOutcome::Invalid => self.invalid += 1,
            SignatureOutcome::Unverified => {}
        }
    }

    pub(crate) fn merge(&mut self, o: &SignatureCounts) {
        self.signed += o.signed;
        self.verified += o.verified;
        self.invalid += o.invalid;
    }
}

/// One client's signed requests.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClientSignatures {
    /// Its requests.
    pub counts: SignatureCounts,
    /// The first agent whose signature verified on its requests.
    pub verified_agent: Option<Box<str>>,
}

impl ClientSignatures {
    pub(crate) fn add(&mut self, seen: &SignatureSeen) {
        self.counts.add(seen.outcome);
        if seen.outcome == SignatureOutcome::Verified && self.verified_agent.is_none() {
            self.verified_agent = seen.agent.as_deref().map(Into::into);
        }
    }

    pub(crate) fn merge(&mut self, o: ClientSignatures) {
        self.counts.merge(&o.counts);
        if self.verified_agent.is_none() {
            self.verified_agent = o.verified_agent;
        }
    }
}

/// One signature agent's tally.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentTally {
    /// Its requests.
    pub counts: SignatureCounts,
    /// Why requests were not verified, with how many each.
    pub reasons: BTreeMap<String, u64>,
}

impl AgentTally {
    fn add_reason(&mut self, reason: &str, n: u64) {
        let key = if self.reasons.len() < MAX_REASONS || self.reasons.contains_key(reason) {
            reason
        } else {
            "other"
        };
        match self.reasons.get_mut(key) {
            Some(c) => *c += n,
            None => {
                self.reasons.insert(key.to_owned(), n);
            }
        }
    }

    fn merge(&mut self, o: AgentTally) {
        self.counts.merge(&o.counts);
        for (r, n) in o.reasons {
            self.add_reason(&r, n);
        }
    }
}

/// Signed requests by agent, bounded.
#[derive(Debug, Default)]
pub(crate) struct Agents {
    pub(crate) by_agent: Map<Box<str>, AgentTally>,
}

impl Agents {
    fn tally(&mut self, agent: &str) -> &mut AgentTally {
        let key: &str =
            if self.by_agent.len() < MAX_SIGNATURE_AGENTS || self.by_agent.contains_key(agent) {
                agent
            } else {
                OTHER_AGENTS
            };
        if !self.by_agent.contains_key(key) {
            self.by_agent.insert(key.into(), AgentTally::default());
        }
        self.by_agent.get_mut(key).expect("inserted above")
    }

    pub(crate) fn add(&mut self, seen: &SignatureSeen) {
        let t = self.tally(seen.agent.as_deref().unwrap_or(NO_AGENT));
        t.counts.add(seen.outcome);
        if let Some(r) = &seen.reason
            && seen.outcome != SignatureOutcome::Verified
        {
            t.add_reason(r, 1);
        }
    }

    pub(crate) fn merge(&mut self, o: Agents) {
        for (agent, tally) in o.by_agent {
            self.tally(&agent).merge(tally);
        }
    }
}

/// No check: every signed request is counted, none decided.
pub(crate) fn unchecked() -> SignatureSeen {
    SignatureSeen {
        outcome: SignatureOutcome::Unverified,
        agent: None,
        reason: Some("not-checked".into()),
    }
}
