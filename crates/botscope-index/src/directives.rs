//! `trends --directive`: per period, the share of sites whose robots.txt
//! states one kind of term (an RSL `License:` line, Content-Usage rules,
//! Content-Signal lines) and each of its statements, with the change since
//! the period before, read from the trends' adoption counts.

use std::fmt::Write;

use botscope_text::{Cells, Table};
use serde::Serialize;

use crate::trends::Trends;

/// Which directive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Directive {
    /// `License:` (RSL).
    License,
    /// `Content-Usage` (IETF aipref).
    ContentUsage,
    /// `Content-Signal` (Cloudflare).
    ContentSignal,
}

impl Directive {
    /// Reads `license`, `content-usage` or `content-signal`.
    pub fn parse(s: &str) -> Option<Directive> {
        match s {
            "license" => Some(Directive::License),
            "content-usage" => Some(Directive::ContentUsage),
            "content-signal" => Some(Directive::ContentSignal),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Directive::License => "license",
            Directive::ContentUsage => "content-usage",
            Directive::ContentSignal => "content-signal",
        }
    }

    /// The statement prefix of its values (`usage:`, `signal:`).
    fn prefix(self) -> Option<&'static str> {
        match self {
            Directive::License => None,
            Directive::ContentUsage => Some("usage:"),
            Directive::ContentSignal => Some("signal:"),
        }
    }
}

/// One row: a period, a value (`any`, or a statement), its sites, their
/// share of the sites with a robots.txt, and the change since the
/// period before.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DirectiveRow {
    /// The period.
    pub period: String,
    /// The directive.
    pub directive: &'static str,
    /// `any` (the directive at all), or a statement (`usage:train-ai=n`).
    pub value: String,
    /// Sites stating it.
    pub sites: u64,
    /// Sites with a robots.txt in the period.
    pub of: u64,
    /// `sites` as a percentage of `of`.
    pub share: f64,
    /// The share's change since the period before, in percentage points
    /// (none for the first period).
    pub change: Option<f64>,
}

/// The rows of `--directive`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Directives {
    /// The rows, by period, then value.
    pub rows: Vec<DirectiveRow>,
}

/// The rows for `d` over the periods of `t`.
pub fn directives(t: &Trends, d: Directive) -> Directives {
    let pct = |n: u64, of: u64| if of == 0 { 0.0 } else { 100.0 * n as f64 / of as f64 };
    // Every value any period names, so each period has a row per value.
    let mut values: Vec<String> = vec!["any".to_owned()];
    if let Some(prefix) = d.prefix() {
        for p in &t.periods {
            for k in p.preferences.statements.keys() {
                if k.starts_with(prefix) && !values.contains(k) {
                    values.push(k.clone());
                }
            }
        }
        values[1..].sort();
    }
    let mut rows = Vec::new();
    let mut before: Vec<Option<f64>> = vec![None; values.len()];
    for p in &t.periods {
        let a = &p.preferences;
        for (i, v) in values.iter().enumerate() {
            let sites = match (d, v.as_str()) {
                (Directive::License, _) => a.license,
                (Directive::ContentUsage, "any") => a.content_usage,
                (Directive::ContentSignal, "any") => a.content_signal,
                _ => a.statements.get(v).copied().unwrap_or(0),
            };
            let share = pct(sites, p.sites);
            rows.push(DirectiveRow {
                period: p.period.clone(),
                directive: d.name(),
                value: v.clone(),
                sites,
                of: p.sites,
                share,
                change: before[i].map(|b| share - b),
            });
            before[i] = Some(share);
        }
    }
    Directives { rows }
}

impl Directives {
    /// A line per row.
    pub fn to_text(&self) -> String {
        let mut o = String::new();
        for r in &self.rows {
            let change = r
                .change
                .map_or_else(String::new, |c| format!(" ({c:+.1} pt)"));
            let _ = writeln!(
                o,
                "{}\t{} {}\t{} of {} sites\t{:.1}%{change}",
                r.period,
                r.directive,
                botscope_text::field(&r.value),
                r.sites,
                r.of,
                r.share
            );
        }
        o
    }

    /// The rows as columns (CSV, Parquet).
    pub fn to_table(&self) -> Table {
        let r = &self.rows;
        let mut t = Table::default();
        t.push("period", Cells::Label(r.iter().map(|x| Some(x.period.clone())).collect()));
        t.push("directive", Cells::Label(r.iter().map(|x| Some(x.directive.to_owned())).collect()));
        t.push("value", Cells::Text(r.iter().map(|x| Some(x.value.clone())).collect()));
        t.push("sites", Cells::Count(r.iter().map(|x| Some(x.sites)).collect()));
        t.push("of", Cells::Count(r.iter().map(|x| Some(x.of)).collect()));
        t.push("share", Cells::Real(r.iter().map(|x| Some(x.share)).collect()));
        t.push("change", Cells::Real(r.iter().map(|x| x.change).collect()));
        t
    }
}
