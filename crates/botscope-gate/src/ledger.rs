//! The ledger: what crawlers were charged, summed from decision logs.
//! A `charged` line adds its price, an `uncharged` line (the standalone
//! gate took a charge back) takes it away; rows by agent, day and path, as
//! asked. Pure over lines: the caller reads the files. Bounded: a line
//! longer than [`MAX_LINE`] is malformed, and at most [`MAX_ROWS`]
//! distinct rows are kept (past them, the lines are counted as over).

use std::collections::BTreeMap;

use botscope_terms::{Currency, Price};
use serde::Serialize;

/// Longest decision-log line read.
pub const MAX_LINE: usize = 64 * 1024;
/// Distinct rows kept at most.
pub const MAX_ROWS: usize = 1_000_000;

/// What a row is keyed by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Key {
    /// The paying agent (its signature agent URL, else the bot claimed).
    Agent,
    /// The UTC day (`2026-12-06`).
    Day,
    /// The path asked for.
    Path,
}

impl Key {
    /// Reads `agent`, `day` or `path`.
    pub fn parse(s: &str) -> Option<Key> {
        match s {
            "agent" => Some(Key::Agent),
            "day" => Some(Key::Day),
            "path" => Some(Key::Path),
            _ => None,
        }
    }
}

/// One row: its key values, the requests charged and the amount per
/// currency.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Row {
    /// The agent, when keyed by it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The day, when keyed by it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub day: Option<String>,
    /// The path, when keyed by it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Requests charged (less those taken back).
    pub charges: i64,
    /// Amounts by currency, as `Price`s.
    pub amounts: Vec<Price>,
}

/// Why a line was not counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Malformed {
    /// Over [`MAX_LINE`] bytes.
    TooLong,
    /// Not a JSON object.
    NotJson,
    /// A payment line without a readable price or time.
    BadPayment,
}

type RowKey = (Option<String>, Option<String>, Option<String>);

/// The sums.
#[derive(Debug, Default)]
pub struct Ledger {
    by: Vec<Key>,
    rows: BTreeMap<RowKey, (i64, BTreeMap<Currency, i128>)>,
    /// Lines read.
    pub lines: u64,
    /// Lines with a payment outcome of `charged` or `uncharged`.
    pub payments: u64,
    /// Lines not counted, by why.
    pub malformed: BTreeMap<Malformed, u64>,
    /// Payment lines past [`MAX_ROWS`] distinct rows (not counted).
    pub over: u64,
}

impl Ledger {
    /// A ledger keyed by `by` (in that order; none: one row for all).
    pub fn new(by: &[Key]) -> Ledger {
        let mut by = by.to_vec();
        by.dedup();
        Ledger {
            by,
            ..Ledger::default()
        }
    }

    /// Reads one decision-log line.
    pub fn add(&mut self, line: &str) {
        self.lines += 1;
        if line.trim().is_empty() {
            return;
        }
        if line.len() > MAX_LINE {
            *self.malformed.entry(Malformed::TooLong).or_default() += 1;
            return;
        }
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            *self.malformed.entry(Malformed::NotJson).or_default() += 1;
            return;
        };
        if !v.is_object() {
            *self.malformed.entry(Malformed::NotJson).or_default() += 1;
            return;
        }
        // A decision of --report-only was logged, never charged.
        if v["enforced"] == serde_json::Value::Bool(false) {
            return;
        }
        let sign = match v["pay"]["outcome"].as_str() {
            Some("charged") => 1,
            Some("uncharged") => -1,
            _ => return,
        };
        self.payments += 1;
        let price = v["pay"]["price"]
            .as_str()
            .and_then(|p| Price::parse_header(p).ok());
        let day = v["time"]
            .as_str()
            .filter(|t| t.len() >= 10 && t.is_char_boundary(10))
            .map(|t| &t[..10]);
        let (Some(price), Some(day)) = (price, day) else {
            *self.malformed.entry(Malformed::BadPayment).or_default() += 1;
            return;
        };
        let agent = v["signature"]["agent"]
            .as_str()
            .or_else(|| v["claimed_bot"].as_str())
            .unwrap_or("");
        let path = v["path"].as_str().unwrap_or("");
        let pick = |k: Key, s: &str| self.by.contains(&k).then(|| s.to_owned());
        let key = (
            pick(Key::Agent, agent),
            pick(Key::Day, day),
            pick(Key::Path, path),
        );
        if !self.rows.contains_key(&key) && self.rows.len() >= MAX_ROWS {
            self.over += 1;
            return;
        }
        let row = self.rows.entry(key).or_default();
        row.0 += sign;
        *row.1.entry(price.currency).or_default() +=
            i128::from(sign) * i128::from(price.millionths);
    }

    /// The rows, sorted by their keys.
    pub fn rows(&self) -> Vec<Row> {
        self.rows
            .iter()
            .map(|((agent, day, path), (charges, amounts))| Row {
                agent: agent.clone(),
                day: day.clone(),
                path: path.clone(),
                charges: *charges,
                amounts: amounts
                    .iter()
                    .filter_map(|(c, n)| {
                        u64::try_from(*n).ok().map(|m| Price {
                            currency: *c,
                            millionths: m,
                        })
                    })
                    .collect(),
            })
            .collect()
    }

    /// The keys asked, in order.
    pub fn keys(&self) -> &[Key] {
        &self.by
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charges_less_those_taken_back() {
        let mut l = Ledger::new(&[Key::Agent, Key::Day]);
        let line = |t: &str, agent: &str, outcome: &str, price: &str| {
            format!(
                r#"{{"time":"{t}","path":"/news/a","signature":{{"agent":"{agent}"}},"pay":{{"outcome":"{outcome}","price":"{price}"}}}}"#
            )
        };
        for s in [
            line(
                "2026-12-06T08:00:00.000Z",
                "https://a.example",
                "charged",
                "USD 0.01",
            ),
            line(
                "2026-12-06T09:00:00.000Z",
                "https://a.example",
                "charged",
                "USD 0.01",
            ),
            line(
                "2026-12-06T09:00:01.000Z",
                "https://a.example",
                "uncharged",
                "USD 0.01",
            ),
            line(
                "2026-12-07T00:00:00.000Z",
                "https://a.example",
                "charged",
                "EUR 0.5",
            ),
            line(
                "2026-12-06T10:00:00.000Z",
                "https://b.example",
                "charged",
                "USD 0.001",
            ),
            line(
                "2026-12-06T10:00:00.000Z",
                "https://b.example",
                "quote",
                "USD 0.001",
            ),
            r#"{"time":"2026-12-06","pay":{"outcome":"charged","price":"USD one"}}"#.to_owned(),
            r#"{"time":"2026-12-06T11:00:00.000Z","enforced":false,"signature":{"agent":"https://a.example"},"pay":{"outcome":"charged","price":"USD 5"}}"#.to_owned(),
            "not json".to_owned(),
            "x".repeat(MAX_LINE + 1),
        ] {
            l.add(&s);
        }
        let rows = l.rows();
        type Shown<'a> = (Option<&'a str>, Option<&'a str>, i64, Vec<String>);
        let shown: Vec<Shown<'_>> = rows
            .iter()
            .map(|r| {
                (
                    r.agent.as_deref(),
                    r.day.as_deref(),
                    r.charges,
                    r.amounts.iter().map(ToString::to_string).collect(),
                )
            })
            .collect();
        assert_eq!(
            shown,
            [
                (
                    Some("https://a.example"),
                    Some("2026-12-06"),
                    1,
                    vec!["USD 0.01".to_owned()]
                ),
                (
                    Some("https://a.example"),
                    Some("2026-12-07"),
                    1,
                    vec!["EUR 0.50".to_owned()]
                ),
                (
                    Some("https://b.example"),
                    Some("2026-12-06"),
                    1,
                    vec!["USD 0.001".to_owned()]
                ),
            ]
        );
        assert_eq!(l.lines, 10);
        assert_eq!(l.malformed.get(&Malformed::BadPayment), Some(&1));
        assert_eq!(l.malformed.get(&Malformed::NotJson), Some(&1));
        assert_eq!(l.malformed.get(&Malformed::TooLong), Some(&1));
    }
}
