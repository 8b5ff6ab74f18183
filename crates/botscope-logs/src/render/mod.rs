//! The report for people and programs: JSON (the documented schema),
//! terminal tables, CSV (one row per robot) and one self-contained HTML
//! page. The command line and the web server render through these.

mod csv;
mod html;
mod text;

use botscope_accesslog::{Figures, Report, Robot};

pub use csv::{CSV_COLUMNS, csv};
pub use html::{MAX_BARS, PageOptions, Text, hours_per_bar, page as html, page_with as html_with};
pub use text::{bytes, text, text_fit};

/// The JSON report, pretty-printed, with a final newline.
pub fn json(r: &Report) -> String {
    let mut s = serde_json::to_string_pretty(r).unwrap_or_default();
    s.push('\n');
    s
}

/// Robots, most requests under their name first (impostors' included;
/// ties by name).
pub fn robots_by_requests(r: &Report) -> Vec<(&String, &Robot)> {
    let mut v: Vec<(&String, &Robot)> = r.robots.iter().collect();
    v.sort_by(|a, b| {
        b.1.claimed_requests()
            .cmp(&a.1.claimed_requests())
            .then(a.0.cmp(b.0))
    });
    v
}

/// One row of a robots table: a robot's own addresses, or the addresses
/// that claimed it falsely, in a row of their own below it.
pub struct RobotRow<'a> {
    /// The robot's name.
    pub name: &'a str,
    /// The robot.
    pub robot: &'a Robot,
    /// What the row counts.
    pub figures: &'a Figures,
    /// The row is the impostors'.
    pub spoofed: bool,
}

impl RobotRow<'_> {
    /// The row's label: the robot's name, `NAME (spoofed)` for impostors.
    pub fn label(&self) -> std::borrow::Cow<'_, str> {
        if self.spoofed {
            format!("{} (spoofed)", self.name).into()
        } else {
            self.name.into()
        }
    }

    /// `own` or `spoofed` (the CSV's `claim` column).
    pub fn claim(&self) -> &'static str {
        if self.spoofed { "spoofed" } else { "own" }
    }
}

/// The rows of the robots tables, most requests first: each robot's own
/// row (left out when impostors alone used its name), then its
/// impostors' row when there were any.
pub fn robot_rows(r: &Report) -> Vec<RobotRow<'_>> {
    let mut rows = Vec::with_capacity(r.robots.len());
    for (name, b) in robots_by_requests(r) {
        if b.figures.requests > 0 || b.impostors.is_none() {
            rows.push(RobotRow {
                name,
                robot: b,
                figures: &b.figures,
                spoofed: false,
            });
        }
        if let Some(f) = &b.impostors {
            rows.push(RobotRow {
                name,
                robot: b,
                figures: f,
                spoofed: true,
            });
        }
    }
    rows
}

/// What to do about the addresses that claim a registered robot and could
/// not be decided, when there are any: they are neither cleared nor
/// listed as fakes, and the user should know which evidence decides them.
pub fn unverifiable_note(r: &Report) -> Option<String> {
    unverifiable_note_with(r, None)
}

/// [`unverifiable_note`], with `hint` (what decides such claims where the
/// report is read) in place of the command's flags.
pub fn unverifiable_note_with(r: &Report, hint: Option<&str>) -> Option<String> {
    let (ips, requests) = r.robots.values().fold((0, 0), |(i, q), b| {
        (
            i + b.verification.unverifiable.ips,
            q + b.verification.unverifiable.requests,
        )
    });
    const COMMAND: &str = "`botscope logs analyze --verify` checks them by forward-confirmed \
        reverse DNS (for robots whose operators document it), and `botscope data update` \
        installs the IP-owner database that tells an operator's network from a stranger's.";
    (ips > 0).then(|| {
        format!(
            "{} ({}) {} a registered robot but could not be decided, so {} called a fake: {}",
            botscope_text::count(ips, "address", "addresses"),
            botscope_text::count(requests, "request", "requests"),
            if ips == 1 { "claims" } else { "claim" },
            if ips == 1 {
                "it is not"
            } else {
                "none of them is"
            },
            hint.unwrap_or(COMMAND),
        )
    })
}

/// Reasons with their counts, most first: `expired 3, bad-signature 1`.
fn reasons(r: &std::collections::BTreeMap<String, u64>) -> String {
    let mut v: Vec<(&String, &u64)> = r.iter().collect();
    v.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    v.iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Lines read with their last field cut (truncated): parsed, and listed
/// with the lines not understood.
fn cut_short(r: &Report) -> u64 {
    let truncated = botscope_accesslog::Malformed::Truncated.as_str();
    r.malformed
        .iter()
        .filter(|m| m.reason == truncated)
        .map(|m| m.count)
        .sum()
}

/// Where the sample lines of a malformed count are: `input:line`, the
/// input named once for a run of lines in it (`access.log:4, 9, 12`).
fn sample_places(m: &botscope_accesslog::MalformedCount) -> Vec<String> {
    if m.samples.is_empty() {
        return m.sample_lines.iter().map(u64::to_string).collect();
    }
    let mut prev: Option<&str> = None;
    m.samples
        .iter()
        .map(|s| {
            let same = prev == Some(s.input.as_str());
            prev = Some(&s.input);
            if same {
                s.line.to_string()
            } else {
                format!("{}:{}", s.input, s.line)
            }
        })
        .collect()
}
