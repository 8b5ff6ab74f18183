//! Text and CSV forms of the index's answers, for people (JSON is the
//! types' own serialisation). Names and lines come from strangers' files:
//! the caller escapes the text for its terminal; CSV cells are escaped
//! here.

use std::fmt::Write;

use crate::bias::{Decision, FileBias};
use crate::favor::FavorTable;
use crate::search::SearchResults;
use crate::trends::Trends;

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
                "{:w$}  {:>8}  {:>7}  {:>10}  {:>12.8}",
                r.robot, r.appeared, r.favored, r.disfavored, r.favorability
            );
        }
        o
    }

    /// Figure 5 as CSV with a header; N on every row, cells escaped.
    pub fn to_csv(&self) -> String {
        let mut o = String::from("robot,appeared,favored,disfavored,favorability,n\n");
        for r in &self.robots {
            let name = botscope_text::csv_cell(&r.robot).replace('"', "\"\"");
            let _ = writeln!(
                o,
                "\"{name}\",{},{},{},{},{}",
                r.appeared, r.favored, r.disfavored, r.favorability, self.n
            );
        }
        o
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
}

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
        for p in &self.periods {
            let _ = write!(o, "{}: {} sites with robots.txt", p.period, p.sites);
            if let Some(n) = p.no_robots_txt {
                let _ = write!(o, ", {n} without");
            }
            let _ = writeln!(o, "; shares of {}", p.denominator);
            let w = self
                .agents
                .iter()
                .map(|a| a.chars().count())
                .max()
                .unwrap_or(5)
                .max(5);
            let rows = p
                .agents
                .iter()
                .map(|(a, c)| (a.as_str(), c))
                .chain([("(group)", &p.group)]);
            for (a, c) in rows {
                let _ = writeln!(
                    o,
                    "  {a:w$}  full {:>6} {:>5.1}%  partial {:>6} {:>5.1}%  none {:>6} {:>5.1}%",
                    c.full,
                    share(c.full, p.denominator),
                    c.partial,
                    share(c.partial, p.denominator),
                    c.none,
                    share(c.none, p.denominator)
                );
            }
            let a = &p.preferences;
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
        o
    }

    /// CSV: one row per period and agent (`(group)` for the group).
    pub fn to_csv(&self) -> String {
        let mut o = String::from("period,end,agent,full,partial,none,no_robots_txt,denominator\n");
        for p in &self.periods {
            let rows = p
                .agents
                .iter()
                .map(|(a, c)| (a.as_str(), c))
                .chain([("(group)", &p.group)]);
            for (a, c) in rows {
                let name = botscope_text::csv_cell(a).replace('"', "\"\"");
                o.push_str(&format!(
                    "{},{},\"{name}\",{},{},{},{},{}\n",
                    p.period,
                    p.end,
                    c.full,
                    c.partial,
                    c.none,
                    p.no_robots_txt.map(|n| n.to_string()).unwrap_or_default(),
                    p.denominator
                ));
            }
        }
        o
    }
}
