//! A cohort of sites for `trends`: a list of hosts (a news-site list), or
//! the top of a ranked list (Tranco: `rank,host`), each site with a weight
//! when a column gives one (Consent in Crisis weights by tokens). Pure: the
//! file's text in, the cohort or the line that is wrong out.

use std::collections::HashMap;

/// A cohort read from a list.
#[derive(Debug, Clone, PartialEq)]
pub struct Cohort {
    /// What the cohort was read from (shown in the results).
    pub source: String,
    /// The hosts, lower-cased, each once, in list order.
    pub hosts: Vec<String>,
    /// Each host's weight (the `--weight` column), in `hosts` order.
    pub weights: Option<Vec<f64>>,
    /// The weight column's name.
    pub weight_column: Option<String>,
    /// When the store first saw each host (`None`: never), in `hosts`
    /// order; set by the caller that has a store, for the denominators.
    pub added: Option<Vec<Option<i64>>>,
}

/// How to read a cohort list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CohortSpec {
    /// Keep the hosts ranked `1..=top` (needs a rank column).
    pub top: Option<u64>,
    /// The column holding each host's weight (needs a header line).
    pub weight: Option<String>,
    /// The list must have a rank column (`--rank-file`).
    pub ranked: bool,
}

/// A cohort list that cannot be read: which line and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CohortError {
    /// A line that does not hold what the list needs.
    #[error("{list}:{line}: {reason}")]
    Line {
        /// The list.
        list: String,
        /// 1-based.
        line: usize,
        /// What is wrong.
        reason: String,
    },
    /// The list as a whole cannot be used.
    #[error("{list}: {reason}")]
    List {
        /// The list.
        list: String,
        /// What is wrong.
        reason: String,
    },
}

/// Hosts a list may hold (a Tranco list is a million).
pub const COHORT_MAX_HOSTS: usize = 20_000_000;

fn is_number(s: &str) -> bool {
    s.parse::<f64>().is_ok_and(f64::is_finite)
}

impl Cohort {
    /// Reads a list: one host per line, or comma-separated rows (`rank,host`
    /// as Tranco writes them, `host,rank`, more columns beside). A first
    /// line naming a `host` (or `domain`, `site`) column is a header, and
    /// then `rank` and the weight column are found by name; without one,
    /// the host is the first field that is not a number and the rank the
    /// first that is. Blank lines and lines starting with `#` are skipped;
    /// a host listed twice counts once (its first line). Any other line
    /// that does not hold a host (or, where needed, a rank or a weight) is
    /// an error naming it: a cohort never loses members silently.
    pub fn parse(source: &str, text: &str, spec: &CohortSpec) -> Result<Cohort, CohortError> {
        let line_err = |line: usize, reason: String| CohortError::Line {
            list: source.to_owned(),
            line,
            reason,
        };
        let list_err = |reason: &str| CohortError::List {
            list: source.to_owned(),
            reason: reason.to_owned(),
        };
        let mut lines = text
            .lines()
            .enumerate()
            .map(|(i, l)| (i + 1, l.trim()))
            .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
            .peekable();
        let fields = |l: &str| -> Vec<String> {
            l.split(',')
                .map(|f| f.trim().trim_matches('"').trim().to_owned())
                .collect()
        };
        // The header, if the first line has one.
        let mut host_col = None;
        let mut rank_col = None;
        let mut weight_col = None;
        if let Some(&(_, first)) = lines.peek() {
            let names: Vec<String> = fields(first)
                .iter()
                .map(|f| f.to_ascii_lowercase())
                .collect();
            if let Some(h) = names
                .iter()
                .position(|n| matches!(n.as_str(), "host" | "domain" | "site"))
            {
                host_col = Some(h);
                rank_col = names.iter().position(|n| n == "rank");
                if let Some(w) = &spec.weight {
                    let w = w.to_ascii_lowercase();
                    weight_col = Some(names.iter().position(|n| *n == w).ok_or_else(|| {
                        list_err(&format!(
                            "no column `{w}` in the header ({})",
                            names.join(",")
                        ))
                    })?);
                }
                lines.next();
            }
        }
        if spec.weight.is_some() && weight_col.is_none() {
            return Err(list_err(
                "--weight needs a header line naming the columns (host,rank,WEIGHT)",
            ));
        }
        let needs_rank = spec.ranked || spec.top.is_some();
        let mut out = Cohort {
            source: source.to_owned(),
            hosts: Vec::new(),
            weights: weight_col.map(|_| Vec::new()),
            weight_column: spec.weight.clone(),
            added: None,
        };
        let mut seen: HashMap<String, ()> = HashMap::new();
        let mut ranked: Vec<(u64, usize)> = Vec::new();
        for (n, l) in lines {
            let f = fields(l);
            let host = match host_col {
                Some(c) => f.get(c).cloned().unwrap_or_default(),
                None => f
                    .iter()
                    .find(|x| !is_number(x))
                    .cloned()
                    .unwrap_or_default(),
            };
            // A name, an address or a URL, as harvest host lists are read.
            let Some(host) = botscope_text::host_of(&host) else {
                return Err(line_err(
                    n,
                    format!("`{}` holds no host name", l.escape_debug()),
                ));
            };
            let rank = match (host_col, rank_col) {
                (Some(_), Some(c)) => f.get(c).map(String::as_str),
                (Some(_), None) => None,
                (None, _) => f.iter().find(|x| is_number(x)).map(String::as_str),
            };
            let rank = match rank {
                Some(r) => Some(r.parse::<u64>().map_err(|_| {
                    line_err(
                        n,
                        format!("the rank `{}` is not a whole number", r.escape_debug()),
                    )
                })?),
                None if needs_rank => {
                    return Err(line_err(n, "no rank on this line".into()));
                }
                None => None,
            };
            if seen.insert(host.clone(), ()).is_some() {
                continue;
            }
            if out.hosts.len() >= COHORT_MAX_HOSTS {
                return Err(list_err(&format!("more than {COHORT_MAX_HOSTS} hosts")));
            }
            if let (Some(c), Some(w)) = (weight_col, out.weights.as_mut()) {
                let v = f.get(c).map(String::as_str).unwrap_or_default();
                match v.parse::<f64>() {
                    Ok(x) if x.is_finite() && x >= 0.0 => w.push(x),
                    _ => {
                        return Err(line_err(
                            n,
                            format!(
                                "the weight `{}` is not a number of 0 or more",
                                v.escape_debug()
                            ),
                        ));
                    }
                }
            }
            if let Some(r) = rank {
                ranked.push((r, out.hosts.len()));
            }
            out.hosts.push(host);
        }
        if let Some(top) = spec.top {
            let keep: Vec<usize> = {
                let mut k: Vec<usize> = ranked
                    .iter()
                    .filter(|(r, _)| *r >= 1 && *r <= top)
                    .map(|&(_, i)| i)
                    .collect();
                k.sort_unstable();
                k
            };
            out.hosts = keep.iter().map(|&i| out.hosts[i].clone()).collect();
            if let Some(w) = &out.weights {
                out.weights = Some(keep.iter().map(|&i| w[i]).collect());
            }
        }
        if out.hosts.is_empty() {
            return Err(list_err("no host in the list"));
        }
        Ok(out)
    }

    /// Each host's weight (1 without a weight column), by host.
    pub(crate) fn weight_of(&self) -> HashMap<&str, f64> {
        self.hosts
            .iter()
            .enumerate()
            .map(|(i, h)| (h.as_str(), self.weights.as_ref().map_or(1.0, |w| w[i])))
            .collect()
    }

    /// The cohort's sites at these positions (those a crawl saw), and
    /// their weight.
    pub(crate) fn known_in(&self, at: &[usize]) -> (u64, f64) {
        let w = at
            .iter()
            .map(|&i| self.weights.as_ref().map_or(1.0, |x| x[i]))
            .sum();
        (at.len() as u64, w)
    }

    /// The cohort's sites the store knew at `t`, and their weight.
    pub(crate) fn known_at(&self, t: i64) -> Option<(u64, f64)> {
        let added = self.added.as_ref()?;
        let mut n = 0;
        let mut w = 0.0;
        for (i, a) in added.iter().enumerate() {
            if a.is_some_and(|a| a <= t) {
                n += 1;
                w += self.weights.as_ref().map_or(1.0, |x| x[i]);
            }
        }
        Some((n, w))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_as_people_have_them() {
        let plain = Cohort::parse(
            "news.txt",
            "# news\nNYTimes.com\n\nbbc.co.uk.\nhttps://nytimes.com/\n",
            &CohortSpec::default(),
        )
        .expect("plain");
        assert_eq!(plain.hosts, ["nytimes.com", "bbc.co.uk"]);
        assert_eq!(plain.weights, None);
        let tranco = "1,google.com\n2,facebook.com\n3,amazonaws.com\n";
        let top = Cohort::parse(
            "tranco.csv",
            tranco,
            &CohortSpec {
                top: Some(2),
                ranked: true,
                ..CohortSpec::default()
            },
        )
        .expect("tranco");
        assert_eq!(top.hosts, ["google.com", "facebook.com"]);
        let weighted = "host,rank,tokens\na.test,2,10.5\nb.test,1,3\nc.test,3,0\n";
        let w = Cohort::parse(
            "c4.csv",
            weighted,
            &CohortSpec {
                top: Some(2),
                weight: Some("tokens".into()),
                ranked: true,
            },
        )
        .expect("weighted");
        assert_eq!(w.hosts, ["a.test", "b.test"]);
        assert_eq!(w.weights, Some(vec![10.5, 3.0]));
        assert_eq!(w.weight_of()["a.test"], 10.5);
    }

    #[test]
    fn wrong_lines_are_named() {
        let spec = CohortSpec::default();
        let e = Cohort::parse("l", "a.test\n=cmd|' /C calc'!A0\n", &spec).expect_err("refused");
        assert!(e.to_string().starts_with("l:2: "), "{e}");
        let e = Cohort::parse(
            "l",
            "1,a.test\nb.test\n",
            &CohortSpec {
                ranked: true,
                ..spec.clone()
            },
        )
        .expect_err("refused");
        assert_eq!(e.to_string(), "l:2: no rank on this line");
        let e = Cohort::parse(
            "l",
            "host,w\na.test,-1\n",
            &CohortSpec {
                weight: Some("w".into()),
                ..spec.clone()
            },
        )
        .expect_err("refused");
        assert!(e.to_string().starts_with("l:2: the weight `-1`"), "{e}");
        let e = Cohort::parse(
            "l",
            "a.test\n",
            &CohortSpec {
                weight: Some("w".into()),
                ..spec.clone()
            },
        )
        .expect_err("refused");
        assert!(e.to_string().contains("needs a header"), "{e}");
        assert!(Cohort::parse("l", "# nothing\n", &spec).is_err());
        assert!(
            Cohort::parse(
                "l",
                "1,a.test\n",
                &CohortSpec {
                    top: Some(0),
                    ..spec
                }
            )
            .is_err()
        );
    }
}
