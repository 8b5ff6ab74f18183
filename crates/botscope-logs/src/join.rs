//! The verification join: clients that claim a registered robot are
//! verified against its published addresses and, where DNS evidence is
//! given, forward-confirmed reverse DNS; the web-server lists follow from
//! the verdicts.

use std::collections::HashMap;
use std::hash::BuildHasher;
use std::net::IpAddr;

use botscope_accesslog::{Analysis, Check, Checked, Class, is_disobedient};
use botscope_botid::{
    FcrdnsEvidence, Lists, Owners, Registry, SignatureEvidence, UaInfo, Verdict, Verification,
};

/// Verdicts by client index.
pub type Checks = HashMap<usize, Checked, foldhash::fast::RandomState>;

/// The client type an [`Agent`](botscope_accesslog::Agent) carries, read
/// back into the classifier's type.
fn client_type_of(agent: &botscope_accesslog::Agent) -> botscope_botid::ClientType {
    botscope_botid::ClientType::ALL
        .iter()
        .copied()
        .find(|t| Some(t.as_str()) == agent.client_type)
        .unwrap_or_default()
}

/// What the verdict needs of each User-Agent that claims a registered
/// robot (the claim), by agent index, from the classification the parsing
/// threads already made. Few agents claim one: the clients of the others
/// are passed over without reading their agent.
fn claims(analysis: &Analysis) -> HashMap<usize, UaInfo, foldhash::fast::RandomState> {
    analysis
        .agents
        .iter()
        .enumerate()
        .filter(|(_, (ua, agent))| agent.registered && ua.is_some())
        .map(|(i, (_, agent))| {
            let info = UaInfo {
                is_bot: true,
                family: None,
                claimed_bot: agent.robot.clone(),
                reason: agent.reason.clone(),
                client_type: client_type_of(agent),
            };
            (i, info)
        })
        .collect()
}

/// The distinct addresses whose verdict would use FCrDNS, sorted, each
/// with the domains its claims are checked against.
pub fn dns_wanted(analysis: &Analysis, registry: &Registry) -> Vec<(IpAddr, Vec<String>)> {
    let infos = claims(analysis);
    botscope_botid::dns_questions(analysis.folded.clients.iter().filter_map(|c| {
        let info = infos.get(&c.agent())?;
        botscope_botid::fcrdns_domains(registry, c.ip, info).map(|d| (c.ip, d))
    }))
}

/// Verifies the clients that claim a registered robot, with the FCrDNS
/// `evidence` there is (none offline), and, when `lists`, sorts the
/// addresses into the web-server lists: verified robots, other robots
/// (robots.txt requesters count as robots, ACAP 3.1), undeclared robots,
/// disobedient robots (not verified, with at least
/// [`botscope_accesslog::DISOBEDIENT_REQUESTS`] requests robots.txt closed
/// to them, [`is_disobedient`]) and
/// suspects (spoofers and scanners).
pub fn verify_clients<S: BuildHasher>(
    analysis: &Analysis,
    registry: &Registry,
    evidence: &HashMap<IpAddr, FcrdnsEvidence, S>,
    owners: &dyn Owners,
    lists: bool,
) -> (Checks, Lists) {
    let infos = claims(analysis);
    let mut checks = Checks::default();
    let mut verdicts: Vec<Verification> = Vec::new();
    let mut scanners: Vec<IpAddr> = Vec::new();
    let mut undeclared: Vec<IpAddr> = Vec::new();
    let mut disobedient: Vec<IpAddr> = Vec::new();
    for (i, c) in analysis.folded.clients.iter().enumerate() {
        if lists && analysis.classes[i] == Class::Scanner {
            scanners.push(c.ip);
        }
        if lists && analysis.classes[i] == Class::UndeclaredBot {
            undeclared.push(c.ip);
        }
        // A signature that verified, from an agent the registry names,
        // is evidence for that robot whatever the User-Agent says.
        let signed = analysis.signed(i).and_then(|s| {
            let agent = s.verified_agent.as_deref()?;
            registry.signed_by(agent)?;
            Some(SignatureEvidence {
                outcome: "verified".into(),
                agent: Some(agent.to_owned()),
                keyid: None,
                reason: format!(
                    "{} of {} signed requests verified",
                    s.counts.verified, s.counts.signed
                ),
                bot: None,
                identifier: None,
                signatures: Vec::new(),
                notes: Vec::new(),
            })
        });
        let signed_info = signed.as_ref().map(|_| {
            let (_, agent) = analysis.agent_of(c);
            UaInfo {
                is_bot: true,
                family: None,
                claimed_bot: None,
                reason: agent.reason.clone(),
                client_type: client_type_of(agent),
            }
        });
        let check = infos.get(&c.agent()).or(signed_info.as_ref()).map(|info| {
            let mut v = botscope_botid::verify_at(
                registry,
                c.ip,
                analysis.agent_of(c).0,
                info,
                evidence.get(&c.ip),
                owners.owner_at(c.ip, c.last()),
                Some(c.last()),
            );
            if let Some(sig) = signed.clone() {
                botscope_botid::with_signature(registry, &mut v, sig);
            }
            let check = match v.verdict {
                Verdict::Verified => Check::Verified,
                Verdict::Spoofed => Check::Spoofed,
                _ => Check::Unverifiable,
            };
            let reason = v.reason.clone();
            if lists {
                verdicts.push(v);
            }
            Checked { check, reason }
        });
        if lists && check.is_none() && c.robots_txt > 0 {
            // A robots.txt requester is a robot (ACAP 3.1) even with a
            // browser's User-Agent.
            let (ua, agent) = analysis.agent_of(c);
            let info = UaInfo {
                is_bot: true,
                claimed_bot: None,
                family: None,
                reason: agent.reason.clone(),
                client_type: client_type_of(agent),
            };
            verdicts.push(botscope_botid::verify_at(
                registry,
                c.ip,
                ua,
                &info,
                None,
                owners.owner_at(c.ip, c.last()),
                Some(c.last()),
            ));
        }
        if lists
            && is_disobedient(
                analysis.classes[i],
                c.disallowed,
                check.as_ref().map(|k| k.check),
            )
        {
            disobedient.push(c.ip);
        }
        if let Some(k) = check {
            checks.insert(i, k);
        }
    }
    if !lists {
        return (checks, Lists::default());
    }
    let mut lists = Lists::from_verdicts(&verdicts);
    // Undeclared robots have a list of their own, unless another list
    // (a verdict, or the scanners below) already holds the address.
    for ip in undeclared {
        if !lists.all_ok.contains(&ip) && !lists.other.contains(&ip) && !lists.suspect.contains(&ip)
        {
            lists.undeclared.insert(ip);
        }
    }
    for ip in scanners {
        lists.all_ok.remove(&ip);
        lists.other.remove(&ip);
        lists.undeclared.remove(&ip);
        for set in lists.per_bot.values_mut() {
            set.remove(&ip);
        }
        lists.suspect.insert(ip);
    }
    lists.per_bot.retain(|_, s| !s.is_empty());
    for ip in disobedient {
        lists.add_disobedient(ip);
    }
    (checks, lists)
}
