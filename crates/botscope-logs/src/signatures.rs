//! Signed requests in a log (Web Bot Auth): each checked at the time the
//! log gives, with the key directories of the agents it names, fetched
//! once per agent by the caller's [`Directories`] while the log is read.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use botscope_accesslog::{
    MAX_SIGNATURE_AGENTS, Record, SignatureCheck, SignatureOutcome, SignatureSeen,
};
use botscope_httpsig::{Directory, Keys, Lookup, Outcome, Policy, Reason};

/// Where the agents' key directories come from.
pub trait Directories: Sync {
    /// `agent`'s key directory, or why it cannot be had. Called at most
    /// once per agent, from a parsing thread, which waits for it (the
    /// caller bounds the time).
    fn fetch(&self, agent: &str) -> Result<Directory, String>;
}

/// No directory is fetched: signed requests are counted, and unverified.
#[derive(Debug, Clone, Copy, Default)]
pub struct Offline;

impl Directories for Offline {
    fn fetch(&self, _: &str) -> Result<Directory, String> {
        Err("offline (--verify fetches the agents' key directories)".into())
    }
}

type Slot = Arc<OnceLock<Result<Directory, String>>>;

/// Checks the signed requests of a log with the directories of the agents
/// they name: at most [`MAX_SIGNATURE_AGENTS`] directories, each fetched
/// once; the cost per signed request is its header parsing and one
/// signature verification.
pub struct LogSignatures<'a> {
    directories: &'a dyn Directories,
    slots: Mutex<HashMap<String, Slot>>,
    policy: Policy,
}

impl std::fmt::Debug for LogSignatures<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogSignatures")
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

impl<'a> LogSignatures<'a> {
    /// A checker that fetches directories through `directories`.
    pub fn new(directories: &'a dyn Directories) -> LogSignatures<'a> {
        LogSignatures {
            directories,
            slots: Mutex::new(HashMap::new()),
            policy: Policy::default(),
        }
    }

    /// The directory of `agent`: fetched by the first thread that asks,
    /// waited for by the others; past [`MAX_SIGNATURE_AGENTS`] agents,
    /// none is fetched.
    fn directory(&self, agent: &str) -> Result<Slot, String> {
        // Kept by identifier (two spellings of one URL are one agent),
        // fetched as first sent.
        let id = botscope_httpsig::agent::identifier(agent);
        let slot = {
            let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
            match slots.get(&id) {
                Some(s) => s.clone(),
                None if slots.len() >= MAX_SIGNATURE_AGENTS => {
                    return Err(format!(
                        "more than {MAX_SIGNATURE_AGENTS} signature agents in the log: \
                         no more directories fetched"
                    ));
                }
                None => slots.entry(id).or_default().clone(),
            }
        };
        slot.get_or_init(|| self.directories.fetch(agent));
        Ok(slot)
    }
}

impl Keys for LogSignatures<'_> {
    fn lookup(&self, agent: Option<&str>, keyid: &str) -> Lookup {
        let Some(agent) = agent else {
            return Lookup::Unknown("no keys for requests without Signature-Agent".into());
        };
        match self.directory(agent) {
            Err(why) => Lookup::Unknown(why),
            Ok(slot) => match slot.get() {
                Some(Ok(d)) => d.key(keyid).cloned().map_or(Lookup::NotListed, Lookup::Key),
                Some(Err(why)) => Lookup::Unknown(format!("the directory of {agent}: {why}")),
                None => Lookup::Unknown(format!("the directory of {agent} was not fetched")),
            },
        }
    }
}

/// The request a log line describes, as a signature base sees it: the
/// scheme logged (`https` when not), the virtual host as the authority,
/// and the signature headers.
fn request(r: &Record<'_>) -> botscope_httpsig::Request {
    let s = &r.signed;
    let mut headers: Vec<(String, String)> = Vec::with_capacity(3);
    for (name, v) in [
        ("Signature-Input", &s.input),
        ("Signature", &s.signature),
        ("Signature-Agent", &s.agent),
    ] {
        if let Some(v) = v {
            headers.push((name.to_owned(), v.to_string()));
        }
    }
    let host = r.vhost.as_deref().unwrap_or_default();
    headers.push(("Host".to_owned(), host.to_owned()));
    botscope_httpsig::Request::new(
        &r.method,
        s.scheme.as_deref().unwrap_or("https"),
        host,
        &r.path,
        headers,
    )
}

impl SignatureCheck for LogSignatures<'_> {
    fn check(&self, r: &Record<'_>) -> SignatureSeen {
        let agents = r
            .signed
            .agent
            .as_deref()
            .map(botscope_httpsig::agents_in)
            .unwrap_or_default();
        if r.vhost.is_none() {
            // Without the host the signature base cannot be rebuilt.
            return SignatureSeen {
                outcome: SignatureOutcome::Unverified,
                agent: agents.into_iter().next(),
                reason: Some("the log format has no host ($host or %v)".into()),
            };
        }
        let v = botscope_httpsig::verify_request(&request(r), self, r.time, &self.policy);
        let outcome = match v.outcome {
            Outcome::Verified => SignatureOutcome::Verified,
            Outcome::Invalid => SignatureOutcome::Invalid,
            Outcome::Unverified => SignatureOutcome::Unverified,
        };
        let reason = match &v.reason {
            Reason::Holds => None,
            Reason::KeysUnknown(why) => Some(why.clone()),
            r => Some(r.code().to_owned()),
        };
        SignatureSeen {
            outcome,
            agent: v.agent.or_else(|| agents.into_iter().next()),
            reason,
        }
    }
}
