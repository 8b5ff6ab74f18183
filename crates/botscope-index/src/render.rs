//! Text and table forms of the index's answers (JSON is the types' own
//! serialisation): text for people, a [`Table`] for CSV and Parquet. Names
//! and lines come from strangers' files: the caller escapes the text for
//! its terminal; the table's CSV escapes its cells.

use std::fmt::Write;

use botscope_text::{Cells, Table};

use crate::bias::{Decision, FileBias};
use crate::favor::FavorTable;
use crate::search::SearchResults;
use crate::trends::{Counts, Period, Trends};

fn decision(d: &Decision) -> String {
    match d.line {
        Some(l) => format!("line {l}"),
        None => "no rule".into(),
    }
}

/// The width of a robot-name column: its longest name, at least `robot`'s.
fn name_width<'a>(names: impl Iterator<Item = &'a str>) -> usize {
    names.map(|n| n.chars().count()).max().unwrap_or(5).max(5)
}

impl FileBias {
    /// BotSeer's "Analyze it!" for people: the bias of each named robot,
    /// then for each path of DIR who may fetch it and the deciding line.
    pub fn to_text(&self) -> String {
        let mut o = String::new();
        let rules = match self.semantics {
            botscope_robotstxt::Semantics::Google => "Google's rules (RFC 9309)",
            botscope_robotstxt::Semantics::Draft1996 => "the 1996 draft",
        };
        let site = self.site.as_deref().unwrap_or("file");
        if let Some(t) = &self.too_complex {
            let _ = writeln!(
                o,
                "{site}: {} paths in Allow and Disallow lines, read by {rules}\n{}",
                self.dir.len(),
                t.message()
            );
            return o;
        }
        let _ = writeln!(
            o,
            "{site}: {} paths in Allow and Disallow lines; the universal robot may fetch {}, read by {rules}",
            self.dir.len(),
            self.universal_allowed
        );
        if self.robots.is_empty() {
            let _ = writeln!(o, "no robot is named: no bias");
        } else {
            let w = name_width(self.robots.iter().map(|r| r.robot.as_str()));
            let _ = writeln!(o, "\n{:w$}  may fetch  bias  verdict", "robot");
            for r in &self.robots {
                let _ = writeln!(
                    o,
                    "{:w$}  {:>9}  {:>+4}  {}",
                    r.robot,
                    r.allowed,
                    r.bias,
                    r.verdict.as_str()
                );
            }
        }
        for p in &self.decisions {
            let _ = writeln!(o, "\n{}", p.path);
            let mut may = Vec::new();
            let mut may_not = Vec::new();
            let who = std::iter::once(("*", &p.universal))
                .chain(self.robots.iter().map(|r| r.robot.as_str()).zip(&p.robots));
            for (name, d) in who {
                let s = format!("{name} ({})", decision(d));
                if d.allowed {
                    may.push(s)
                } else {
                    may_not.push(s)
                }
            }
            if !may.is_empty() {
                let _ = writeln!(o, "  may fetch:     {}", may.join(", "));
            }
            if !may_not.is_empty() {
                let _ = writeln!(o, "  may not fetch: {}", may_not.join(", "));
            }
        }
        if self.decisions_omitted > 0 {
            let _ = writeln!(
                o,
                "\n{} more paths counted above and not listed (a table keeps at most {} decisions)",
                self.decisions_omitted,
                crate::bias::TABLE_CELLS
            );
        }
        o
    }
}

impl FavorTable {
    /// Figure 5 for people: one robot per line.
    pub fn to_text(&self) -> String {
        let mut o = String::new();
        let _ = writeln!(
            o,
            "N = {} files{}, as of {}, {} semantics",
            self.n,
            self.where_
                .as_ref()
                .map(|w| format!(" matching `{w}`"))
                .unwrap_or_default(),
            self.as_of,
            self.semantics
        );
        if self.not_computed > 0 {
            let _ = writeln!(
                o,
                "{} more files left out: their bias was not computed (too-complex)",
                self.not_computed
            );
        }
        let w = name_width(self.robots.iter().map(|r| r.robot.as_str()));
        let _ = writeln!(
            o,
            "{:w$}  appeared  favored  disfavored  favorability",
            "robot"
        );
        for r in &self.robots {
            let _ = writeln!(
                o,
                "{:w$}  {:>8}  {:>7}  {:>10}  {:>12.3}",
                r.robot, r.appeared, r.favored, r.disfavored, r.favorability
            );
        }
        o
    }

    /// Figure 5 as a table: a row per robot, N on every row.
    pub fn to_table(&self) -> Table {
        let r = &self.robots;
        let count = |f: &dyn Fn(&crate::bias::RobotFavor) -> u64| {
            Cells::Count(r.iter().map(|x| Some(f(x))).collect())
        };
        let mut t = Table::default();
        t.push(
            "robot",
            Cells::Text(r.iter().map(|x| Some(x.robot.clone())).collect()),
        );
        t.push("appeared", count(&|x| x.appeared));
        t.push("favored", count(&|x| x.favored));
        t.push("disfavored", count(&|x| x.disfavored));
        t.push(
            "favorability",
            Cells::Real(r.iter().map(|x| Some(x.favorability)).collect()),
        );
        t.push("n", count(&|_| self.n));
        t
    }
}

impl SearchResults {
    /// Hits for people: the count and time, then each site with its
    /// rank, date, the bias of the robots it names and the lines matched.
    pub fn to_text(&self, offset: usize) -> String {
        let mut o = String::new();
        let _ = writeln!(
            o,
            "{} sites match `{}` ({:.1} ms){}",
            self.total,
            self.query,
            self.took_ms,
            if self.hits.is_empty() {
                String::new()
            } else {
                format!("; {}–{}", offset + 1, offset + self.hits.len())
            }
        );
        for (i, h) in self.hits.iter().enumerate() {
            let rank = h.rank.map(|r| format!("rank {r}, ")).unwrap_or_default();
            let _ = writeln!(
                o,
                "\n{}. {}  ({rank}fetched {}, score {:.3})",
                offset + i + 1,
                h.site,
                h.fetched,
                h.score
            );
            if !h.bias.is_empty() {
                let b: Vec<String> = h.bias.iter().map(|(r, v)| format!("{r} {v:+}")).collect();
                let _ = writeln!(o, "   bias: {}", b.join(", "));
            }
            for l in h.snippet.lines() {
                let _ = writeln!(o, "   {l}");
            }
        }
        o
    }

    /// A row per hit of the page: the hit's fields as its JSON names them,
    /// `bias` as `robot=bias` pairs (`googlebot=-4, bingbot=1`).
    pub fn to_table(&self) -> Table {
        let h = &self.hits;
        let text = |f: &dyn Fn(&crate::search::Hit) -> String| {
            Cells::Text(h.iter().map(|x| Some(f(x))).collect())
        };
        let mut t = Table::default();
        t.push("site", text(&|x| x.site.clone()));
        t.push(
            "score",
            Cells::Real(h.iter().map(|x| Some(x.score)).collect()),
        );
        t.push("rank", Cells::Count(h.iter().map(|x| x.rank).collect()));
        t.push("fetched", text(&|x| x.fetched.clone()));
        t.push(
            "bias",
            text(&|x| {
                x.bias
                    .iter()
                    .map(|(r, v)| format!("{r}={v}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            }),
        );
        t.push("snippet", text(&|x| x.snippet.clone()));
        t.push("url", text(&|x| x.url.clone()));
        t.push("source", text(&|x| x.source.clone()));
        t
    }
}

/// A trends table's row: the period, the agent and its counts.
type Row<'a> = (&'a Period, &'a str, &'a Counts);

impl Trends {
    /// For people: per period the denominator, then each agent's and the
    /// group's counts and shares.
    pub fn to_text(&self) -> String {
        use std::fmt::Write;
        let mut o = String::new();
        let share = |n: u64, d: u64| {
            if d == 0 {
                0.0
            } else {
                100.0 * n as f64 / d as f64
            }
        };
        match self.method {
            "somesite" => o.push_str(
                "method: Somesite I Used To Crawl (Liu et al., IMC 2025), as their script judges \
                 (probes of the file's lines, Google's matcher)\n",
            ),
            "cic" => o.push_str(
                "method: Consent in Crisis (Longpre et al., 2024), as their parser read files \
                 (all, some, none as full, partial, none)\n",
            ),
            _ => {}
        }
        if let Some(c) = &self.cohort {
            let _ = write!(o, "cohort: {} hosts of {}", c.hosts, c.source);
            if let Some(n) = c.in_store {
                let _ = write!(o, ", {n} known to the store");
            }
            if let Some(w) = &c.weight {
                let _ = write!(o, "; weighted by {w}");
            }
            let _ = writeln!(o);
        }
        for p in &self.periods {
            // A crawl's name comes from the store: escaped for the terminal.
            let _ = write!(
                o,
                "{}: {} sites with robots.txt",
                botscope_text::field(&p.period),
                p.sites
            );
            // The papers' shares are of the sites with a robots.txt; the
            // shares of every site counted follow when they differ.
            let both = p.denominator != p.sites;
            if let Some(n) = p.no_robots_txt {
                let _ = write!(o, ", {n} without");
            }
            if both {
                let _ = writeln!(
                    o,
                    "; shares of the {} with robots.txt, then of all {}",
                    p.sites, p.denominator
                );
            } else {
                let _ = writeln!(o, "; shares of {}", p.denominator);
            }
            let w = self
                .agents
                .iter()
                .map(|a| a.chars().count())
                .max()
                .unwrap_or(0)
                .max("(group)".len());
            let rows = p
                .agents
                .iter()
                .map(|(a, c)| (a.as_str(), c))
                .chain([("(group)", &p.group)]);
            for (a, c) in rows {
                let cell = |n: u64| {
                    if both {
                        format!(
                            "{n:>6} {:>5.1}% {:>5.1}%",
                            share(n, p.sites),
                            share(n, p.denominator)
                        )
                    } else {
                        format!("{n:>6} {:>5.1}%", share(n, p.denominator))
                    }
                };
                let _ = writeln!(
                    o,
                    "  {a:w$}  full {}  partial {}  none {}",
                    cell(c.full),
                    cell(c.partial),
                    cell(c.none)
                );
                if let Some(n) = p.disagree.as_ref().and_then(|d| d.get(a)) {
                    let _ = writeln!(
                        o,
                        "  {:w$}  judged otherwise by the exact engine: {n} {} ({:.1}% of {})",
                        "",
                        if *n == 1 { "site" } else { "sites" },
                        share(*n, p.sites),
                        p.sites
                    );
                }
                if let Some(wp) = &p.weighted {
                    let s = if a == "(group)" {
                        Some(&wp.group)
                    } else {
                        wp.agents.get(a)
                    };
                    if let Some(s) = s {
                        let ws = |x: f64| {
                            if wp.denominator > 0.0 {
                                100.0 * x / wp.denominator
                            } else {
                                0.0
                            }
                        };
                        // Under the shares of all (the weighted
                        // denominator counts the sites without one).
                        let (lead, gap1, gap2) = if both { (7, 24, 21) } else { (0, 17, 14) };
                        let _ = writeln!(
                            o,
                            "  {:w$}  weighted    {:lead$}{:>5.1}%{:gap1$}{:>5.1}%{:gap2$}{:>5.1}%",
                            "",
                            "",
                            ws(s.full),
                            "",
                            ws(s.partial),
                            "",
                            ws(s.none)
                        );
                    }
                }
            }
            if let Some(n) = p.past_budget.filter(|&n| n > 0) {
                let _ = writeln!(
                    o,
                    "  {n} {} past the method's work budget, counted as the exact engine judges {}",
                    if n == 1 {
                        "site's file was"
                    } else {
                        "sites' files were"
                    },
                    if n == 1 { "it" } else { "them" }
                );
            }
            let a = &p.preferences;
            if a.license > 0 {
                let _ = writeln!(
                    o,
                    "  licences (RSL License lines): {} sites {:.1}%",
                    a.license,
                    share(a.license, p.denominator)
                );
            }
            if a.any > 0 {
                let which: Vec<String> = a
                    .statements
                    .iter()
                    .map(|(k, n)| format!("{k} {n}"))
                    .collect();
                let _ = writeln!(
                    o,
                    "  usage preferences: {} sites {:.1}% (Content-Usage {}, Content-Signal {}){}",
                    a.any,
                    share(a.any, p.denominator),
                    a.content_usage,
                    a.content_signal,
                    if which.is_empty() {
                        String::new()
                    } else {
                        format!(": {}", which.join(", "))
                    }
                );
            }
        }
        if self.from_bodies > 0 && self.method == "exact" {
            let _ = writeln!(
                o,
                "{} versions past the index's budget were read from their files",
                self.from_bodies
            );
        }
        o
    }

    /// A row per period and agent (`(group)` for the group).
    pub fn to_table(&self) -> Table {
        let rows: Vec<Row<'_>> = self
            .periods
            .iter()
            .flat_map(|p| {
                p.agents
                    .iter()
                    .map(move |(a, c)| (p, a.as_str(), c))
                    .chain([(p, "(group)", &p.group)])
            })
            .collect();
        let text =
            |f: &dyn Fn(&Row<'_>) -> String| Cells::Text(rows.iter().map(|r| Some(f(r))).collect());
        let count =
            |f: &dyn Fn(&Row<'_>) -> Option<u64>| Cells::Count(rows.iter().map(f).collect());
        let label = |f: &dyn Fn(&Row<'_>) -> String| {
            Cells::Label(rows.iter().map(|r| Some(f(r))).collect())
        };
        let mut t = Table::default();
        t.push("period", label(&|r| r.0.period.clone()));
        t.push("end", label(&|r| r.0.end.clone()));
        t.push("agent", text(&|r| r.1.to_owned()));
        t.push("full", count(&|r| Some(r.2.full)));
        t.push("partial", count(&|r| Some(r.2.partial)));
        t.push("none", count(&|r| Some(r.2.none)));
        t.push("no_robots_txt", count(&|r| r.0.no_robots_txt));
        t.push("denominator", count(&|r| Some(r.0.denominator)));
        if self.periods.iter().any(|p| p.disagree.is_some()) {
            t.push(
                "disagree_with_exact",
                count(&|r| r.0.disagree.as_ref().and_then(|d| d.get(r.1)).copied()),
            );
        }
        if self.periods.iter().any(|p| p.past_budget.is_some()) {
            // Per period: the sites whose file was past the method's
            // budget, judged by the exact engine instead.
            t.push("past_budget", count(&|r| r.0.past_budget));
        }
        if self.periods.iter().any(|p| p.weighted.is_some()) {
            let shares = |r: &Row<'_>| {
                r.0.weighted.as_ref().and_then(|w| {
                    if r.1 == "(group)" {
                        Some(w.group)
                    } else {
                        w.agents.get(r.1).copied()
                    }
                })
            };
            let real =
                |f: &dyn Fn(&Row<'_>) -> Option<f64>| Cells::Real(rows.iter().map(f).collect());
            t.push("weighted_full", real(&|r| shares(r).map(|s| s.full)));
            t.push("weighted_partial", real(&|r| shares(r).map(|s| s.partial)));
            t.push("weighted_none", real(&|r| shares(r).map(|s| s.none)));
            t.push(
                "weighted_denominator",
                real(&|r| r.0.weighted.as_ref().map(|w| w.denominator)),
            );
        }
        t.push("sites", count(&|r| Some(r.0.sites)));
        // The shares: of the sites with a robots.txt (the papers'), and
        // of every site counted.
        let of = |s: &crate::ShareSet, agent: &str| -> crate::Fractions {
            if agent == "(group)" {
                s.group
            } else {
                s.agents.get(agent).copied().unwrap_or_default()
            }
        };
        let real =
            |f: &dyn Fn(&Row<'_>) -> f64| Cells::Real(rows.iter().map(|r| Some(f(r))).collect());
        t.push("full_of_sites", real(&|r| of(&r.0.of_sites, r.1).full));
        t.push(
            "partial_of_sites",
            real(&|r| of(&r.0.of_sites, r.1).partial),
        );
        t.push("none_of_sites", real(&|r| of(&r.0.of_sites, r.1).none));
        t.push("full_of_all", real(&|r| of(&r.0.of_all, r.1).full));
        t.push("partial_of_all", real(&|r| of(&r.0.of_all, r.1).partial));
        t.push("none_of_all", real(&|r| of(&r.0.of_all, r.1).none));
        t
    }
}
