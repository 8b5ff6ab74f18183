//! Many `IP<TAB>USER-AGENT` questions at once: each line read, each
//! distinct User-Agent classified once, the distinct addresses that need
//! FCrDNS named (the caller resolves them, each once), then one verdict
//! per line, in order. No I/O.

use std::collections::HashMap;
use std::net::IpAddr;

use crate::{
    FcrdnsEvidence, Owners, Registry, UaClassifier, UaInfo, Verification, parse_ip, verify,
};

/// The lines of a batch, read.
#[derive(Debug, Default)]
pub struct Batch {
    rows: Vec<Result<(IpAddr, Option<String>), String>>,
    infos: HashMap<String, UaInfo>,
}

impl Batch {
    /// Reads line `n` (1-based): `IP<TAB>USER-AGENT` or `IP`; a line that
    /// cannot be read becomes an error row with its reason.
    pub fn push_line(&mut self, n: usize, line: &[u8], classifier: &UaClassifier) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            self.rows.push(Err(format!("line {n}: empty line")));
            return;
        }
        let text = String::from_utf8_lossy(line);
        let (ip, ua) = match text.split_once('\t') {
            Some((ip, ua)) => (ip, Some(ua.to_owned())),
            None => (text.as_ref(), None),
        };
        if let Some(u) = &ua
            && !self.infos.contains_key(u)
        {
            self.infos.insert(u.clone(), classifier.classify(u));
        }
        self.rows.push(
            parse_ip(ip)
                .map(|ip| (ip, ua))
                .map_err(|e| format!("line {n}: {e}")),
        );
    }

    fn info(&self, ua: &Option<String>) -> Option<&UaInfo> {
        ua.as_ref().and_then(|u| self.infos.get(u))
    }

    /// The distinct addresses whose verdict would use FCrDNS, sorted,
    /// each with the domains to check.
    pub fn dns_wanted(&self, registry: &Registry) -> Vec<(IpAddr, Vec<String>)> {
        let none = UaInfo::default();
        crate::dns_questions(self.rows.iter().flatten().filter_map(|(ip, ua)| {
            crate::fcrdns_domains(registry, *ip, self.info(ua).unwrap_or(&none)).map(|d| (*ip, d))
        }))
    }

    /// One verdict per line, in order, or the reason the line could not
    /// be read.
    pub fn verdicts<'s, 'e, S: std::hash::BuildHasher>(
        &'s self,
        registry: &'e Registry,
        evidence: &'e HashMap<IpAddr, FcrdnsEvidence, S>,
        owners: &'e dyn Owners,
    ) -> impl Iterator<Item = Result<Verification, &'s str>> + use<'s, 'e, S> {
        let none = UaInfo::default();
        self.rows.iter().map(move |row| match row {
            Ok((ip, ua)) => Ok(verify(
                registry,
                *ip,
                ua.as_deref(),
                self.info(ua).unwrap_or(&none),
                evidence.get(ip),
                owners.owner(*ip),
            )),
            Err(e) => Err(e.as_str()),
        })
    }
}

impl Batch {
    /// The verdicts as JSON lines, in order (`{"verdict": "error",
    /// "reason": …}` for a line that could not be read), each with
    /// whether it is `spoofed`.
    pub fn json_lines<'s, 'e, S: std::hash::BuildHasher>(
        &'s self,
        registry: &'e Registry,
        evidence: &'e HashMap<IpAddr, FcrdnsEvidence, S>,
        owners: &'e dyn Owners,
    ) -> impl Iterator<Item = (String, bool)> + use<'s, 'e, S> {
        self.verdicts(registry, evidence, owners).map(|v| match v {
            Ok(v) => (
                serde_json::to_string(&v).unwrap_or_default(),
                v.verdict == crate::Verdict::Spoofed,
            ),
            Err(e) => (
                serde_json::json!({ "verdict": "error", "reason": e }).to_string(),
                false,
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Verdict;

    #[test]
    fn lines_in_order_with_errors() {
        let registry = Registry::bundled();
        let c = UaClassifier::bundled(&registry).expect("classifier");
        let mut b = Batch::default();
        let lines: [&[u8]; 5] = [
            b"66.249.66.1\tMozilla/5.0 (compatible; Googlebot/2.1)\r",
            b"",
            b"not-an-ip\tx",
            b"192.0.2.9",
            b"198.51.100.10\tMozilla/5.0 (compatible; Googlebot/2.1)",
        ];
        for (i, l) in lines.iter().enumerate() {
            b.push_line(i + 1, l, &c);
        }
        // A published address settles an any-of bot; another asks DNS.
        assert_eq!(
            b.dns_wanted(&registry),
            vec![(
                "198.51.100.10".parse::<IpAddr>().expect("ip"),
                vec!["googlebot.com".to_owned(), "google.com".to_owned()]
            )]
        );
        let v: Vec<_> = b
            .verdicts(&registry, &HashMap::new(), &crate::NoOwners)
            .collect();
        assert_eq!(v.len(), 5);
        assert_eq!(
            v[4].as_ref().map(|x| x.verdict),
            Ok(Verdict::Unverifiable),
            "outside the list and no DNS: never spoofed"
        );
        assert_eq!(v[0].as_ref().map(|x| x.verdict), Ok(Verdict::Verified));
        assert_eq!(v[1].as_ref().err(), Some(&"line 2: empty line"));
        assert!(v[2].as_ref().is_err_and(|e| e.starts_with("line 3:")));
        assert!(v[3].is_ok());
    }
}
