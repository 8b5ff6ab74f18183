//! Trends per site: the verdict behind every count, a row per period,
//! site and agent, so that a reader can see which sites a share is made
//! of and which ones a study's method judges otherwise than the exact
//! engine.

use std::sync::Arc;

use botscope_text::{Cells, Table};
use serde::Serialize;
use serde::ser::{SerializeSeq, SerializeStruct, Serializer};

use crate::Restriction;

/// The agent column's value for the group (its agents' strictest
/// verdict), as in the trends table.
pub const GROUP: &str = "(group)";

/// Rows a per-site answer holds at most unless asked for more: each row
/// costs about a hundred bytes while it is made and written.
pub const PER_SITE_MAX_ROWS: u64 = 10_000_000;

/// One site's file in force in one period.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Found {
    /// The period's index (in the answer's order).
    pub(crate) period: u16,
    /// The site.
    pub(crate) host: Arc<str>,
    /// Per agent, the verdict of the method asked.
    pub(crate) verdicts: Arc<[Restriction]>,
    /// Per agent, the exact engine's verdict, under a study's method.
    pub(crate) exact: Option<Arc<[Restriction]>>,
    /// The study's method was past its budget: the exact engine's
    /// verdicts stand in.
    pub(crate) past_budget: bool,
    /// The site's weight in the cohort, when it has weights.
    pub(crate) weight: Option<f64>,
}

/// Per period, site and agent, the verdict counted: the rows behind a
/// [`crate::Trends`], sorted by period, site, then agent (the group last).
/// Only the sites with a robots.txt in force are rows; those without one
/// are counted in the period's `no_robots_txt` alone.
#[derive(Debug, Clone, PartialEq)]
pub struct PerSite {
    pub(crate) periods: Vec<(String, String)>,
    pub(crate) agents: Vec<String>,
    pub(crate) method: &'static str,
    pub(crate) weighted: bool,
    pub(crate) found: Vec<Found>,
}

/// One row of a [`PerSite`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SiteRow<'a> {
    /// The period's label (`2024-03`, `2024`, a crawl's name).
    pub period: &'a str,
    /// Its last second (RFC 3339).
    pub end: &'a str,
    /// The site.
    pub host: &'a str,
    /// The agent, or [`GROUP`].
    pub agent: &'a str,
    /// The method's verdict: `full`, `partial` or `none`.
    pub verdict: &'static str,
    /// With a study's method, the exact engine's verdict on the same file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exact: Option<&'static str>,
    /// With a study's method, whether it was past its budget on the file
    /// (the exact engine's verdict stands in).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub past_budget: Option<bool>,
    /// The site's weight, with a weighted cohort.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub weight: Option<f64>,
}

fn strictest(r: &[Restriction]) -> Restriction {
    r.iter().copied().max().unwrap_or(Restriction::None)
}

impl PerSite {
    /// How many rows: a row per period, site and agent, and the group's.
    pub fn len(&self) -> u64 {
        self.found.len() as u64 * (self.agents.len() as u64 + 1)
    }

    /// No row.
    pub fn is_empty(&self) -> bool {
        self.found.is_empty()
    }

    /// The rows, in order.
    pub fn rows(&self) -> impl Iterator<Item = SiteRow<'_>> + '_ {
        self.found.iter().flat_map(move |f| {
            let agents = self.agents.iter().enumerate().map(move |(i, a)| {
                self.row(
                    f,
                    a,
                    f.verdicts.get(i).copied().unwrap_or(Restriction::None),
                    f.exact.as_ref().and_then(|e| e.get(i).copied()),
                )
            });
            let group = self.row(
                f,
                GROUP,
                strictest(&f.verdicts),
                f.exact.as_deref().map(strictest),
            );
            agents.chain(std::iter::once(group))
        })
    }

    fn row<'a>(
        &'a self,
        f: &'a Found,
        agent: &'a str,
        verdict: Restriction,
        exact: Option<Restriction>,
    ) -> SiteRow<'a> {
        let study = self.method != "exact";
        let (period, end) = &self.periods[usize::from(f.period)];
        SiteRow {
            period,
            end,
            host: &f.host,
            agent,
            verdict: verdict.as_str(),
            exact: study.then(|| exact.unwrap_or(verdict).as_str()),
            past_budget: study.then_some(f.past_budget),
            weight: f.weight,
        }
    }

    /// The sites whose verdict for `agent` (or [`GROUP`]) the study's
    /// method and the exact engine disagree on, per period: the sites
    /// behind `disagree_with_exact`.
    pub fn disagreeing<'a>(&'a self, agent: &'a str) -> impl Iterator<Item = SiteRow<'a>> + 'a {
        self.rows()
            .filter(move |r| r.agent == agent && r.exact.is_some_and(|e| e != r.verdict))
    }

    /// The rows as a table (`botscope trends --per-site --format csv`):
    /// `period, end, host, agent, verdict`, then with a study's method
    /// `exact` and `past_budget` (0 or 1), then with a weighted cohort
    /// `weight`.
    pub fn to_table(&self) -> Table {
        let study = self.method != "exact";
        let n = self.len() as usize;
        let (mut period, mut end, mut host, mut agent, mut verdict) = (
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
        );
        let (mut exact, mut past, mut weight) = (Vec::new(), Vec::new(), Vec::new());
        for r in self.rows() {
            period.push(Some(r.period.to_owned()));
            end.push(Some(r.end.to_owned()));
            host.push(Some(r.host.to_owned()));
            agent.push(Some(r.agent.to_owned()));
            verdict.push(Some(r.verdict.to_owned()));
            if study {
                exact.push(r.exact.map(str::to_owned));
                past.push(r.past_budget.map(u64::from));
            }
            if self.weighted {
                weight.push(r.weight);
            }
        }
        let mut t = Table::default();
        t.push("period", Cells::Label(period));
        t.push("end", Cells::Label(end));
        t.push("host", Cells::Text(host));
        t.push("agent", Cells::Text(agent));
        t.push("verdict", Cells::Label(verdict));
        if study {
            t.push("exact", Cells::Label(exact));
            t.push("past_budget", Cells::Count(past));
        }
        if self.weighted {
            t.push("weight", Cells::Real(weight));
        }
        t
    }

    /// For people: a line per row, aligned.
    pub fn to_text(&self) -> String {
        use std::fmt::Write;
        let study = self.method != "exact";
        let w = |f: &dyn Fn(&SiteRow<'_>) -> usize, head: &str| {
            self.rows()
                .map(|r| f(&r))
                .max()
                .unwrap_or(0)
                .max(head.len())
        };
        let wp = w(&|r| r.period.chars().count(), "period");
        let wh = w(&|r| botscope_text::terminal(r.host).chars().count(), "host");
        let wa = w(
            &|r| botscope_text::terminal(r.agent).chars().count(),
            "agent",
        );
        let mut o = String::new();
        let _ = write!(
            o,
            "{:wp$}  {:wh$}  {:wa$}  verdict",
            "period", "host", "agent"
        );
        if study {
            o.push_str("  exact    past budget");
        }
        o.push('\n');
        for r in self.rows() {
            let _ = write!(
                o,
                "{:wp$}  {:wh$}  {:wa$}  {:7}",
                r.period,
                botscope_text::terminal(r.host),
                botscope_text::terminal(r.agent),
                r.verdict
            );
            if let (Some(e), Some(p)) = (r.exact, r.past_budget) {
                let _ = write!(o, "  {e:7}  {}", if p { "yes" } else { "no" });
            }
            let trimmed = o.trim_end_matches(' ').len();
            o.truncate(trimmed);
            o.push('\n');
        }
        o
    }
}

/// `{"method", "agents", "periods", "rows": [...]}`, the rows written one
/// by one.
impl Serialize for PerSite {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        struct Rows<'a>(&'a PerSite);
        impl Serialize for Rows<'_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut seq = s.serialize_seq(usize::try_from(self.0.len()).ok())?;
                for r in self.0.rows() {
                    seq.serialize_element(&r)?;
                }
                seq.end()
            }
        }
        let mut st = s.serialize_struct("PerSite", 3)?;
        st.serialize_field("method", self.method)?;
        st.serialize_field("agents", &self.agents)?;
        st.serialize_field("rows", &Rows(self))?;
        st.end()
    }
}
