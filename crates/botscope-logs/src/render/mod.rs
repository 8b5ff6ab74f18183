//! The report for people and programs: JSON (the documented schema),
//! terminal tables, CSV (one row per robot) and one self-contained HTML
//! page. The command line and the web server render through these.

mod csv;
mod html;
mod text;

use botscope_accesslog::{Report, Robot};

pub use csv::{CSV_COLUMNS, csv};
pub use html::page as html;
pub use text::{bytes, text, text_fit};

/// The JSON report, pretty-printed, with a final newline.
pub fn json(r: &Report) -> String {
    let mut s = serde_json::to_string_pretty(r).unwrap_or_default();
    s.push('\n');
    s
}

/// Robots, most requests first (ties by name).
pub fn robots_by_requests(r: &Report) -> Vec<(&String, &Robot)> {
    let mut v: Vec<(&String, &Robot)> = r.robots.iter().collect();
    v.sort_by(|a, b| b.1.requests.cmp(&a.1.requests).then(a.0.cmp(b.0)));
    v
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
