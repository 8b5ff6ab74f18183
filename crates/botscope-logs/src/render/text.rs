//! The report as terminal tables.

use std::fmt::Write;

use botscope_accesslog::{ClientList, Report};

use super::robots_by_requests;

/// Human-readable byte count.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KB", "MB", "GB", "TB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1000.0 && u + 1 < UNITS.len() {
        v /= 1000.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

/// Lays out rows as aligned columns (numbers right-aligned). Cells are
/// strangers' bytes (User-Agents, paths, robot names): control and bidi
/// characters are escaped before the widths are measured.
fn table(out: &mut String, header: &[&str], rows: &[Vec<String>]) {
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            r.iter()
                .map(|c| botscope_text::field(c).into_owned())
                .collect()
        })
        .collect();
    let rows = rows.as_slice();
    let mut w: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let numeric: Vec<bool> = (0..header.len())
        .map(|i| {
            rows.iter().all(|r| {
                r[i].is_empty()
                    || r[i]
                        .chars()
                        .next()
                        .is_some_and(|c| c.is_ascii_digit() || c == '-')
                        && !r[i].contains('T')
            })
        })
        .collect();
    let line = |out: &mut String, cells: &[String]| {
        let mut s = String::new();
        for (i, c) in cells.iter().enumerate() {
            let pad = w[i] - c.chars().count();
            if i > 0 {
                s.push_str("  ");
            }
            if numeric[i] && i > 0 {
                s.push_str(&" ".repeat(pad));
                s.push_str(c);
            } else {
                s.push_str(c);
                if i + 1 < cells.len() {
                    s.push_str(&" ".repeat(pad));
                }
            }
        }
        let _ = writeln!(out, "{}", s.trim_end());
    };
    line(
        out,
        &header.iter().map(|h| (*h).to_owned()).collect::<Vec<_>>(),
    );
    for r in rows {
        line(out, r);
    }
}

/// At most `n` characters, with an ellipsis when cut.
fn shorten(s: &str, n: usize) -> String {
    if s.chars().count() > n {
        s.chars().take(n - 1).chain(['…']).collect()
    } else {
        s.to_owned()
    }
}

fn clients(out: &mut String, title: &str, l: &ClientList, limit: usize) {
    if l.total == 0 {
        return;
    }
    let _ = writeln!(
        out,
        "\n{title}: {} clients, {} requests{}",
        l.total,
        l.requests,
        if l.total as usize > limit {
            format!(" (top {limit} shown)")
        } else {
            String::new()
        }
    );
    let rows: Vec<Vec<String>> = l
        .clients
        .iter()
        .take(limit)
        .map(|c| {
            let ua = shorten(c.user_agent.as_deref().unwrap_or("-"), 40);
            let why = c
                .verification
                .clone()
                .into_iter()
                .chain(c.reasons.iter().map(|r| r.detail.clone()))
                .collect::<Vec<_>>()
                .join("; ");
            vec![c.ip.to_string(), c.requests.to_string(), ua, why]
        })
        .collect();
    table(out, &["ip", "requests", "user-agent", "why"], &rows);
}

/// Terminal tables.
pub fn text(r: &Report) -> String {
    let mut out = String::new();
    let period = r
        .period
        .as_ref()
        .map(|p| format!("{} to {}", p.first, p.last))
        .unwrap_or_else(|| "no requests".into());
    let _ = writeln!(
        out,
        "{} lines, {} parsed, {} not understood; {period}",
        r.lines.total, r.lines.parsed, r.lines.malformed
    );
    if r.lines.out_of_window > 0 {
        let _ = writeln!(
            out,
            "{} requests outside --since/--until",
            r.lines.out_of_window
        );
    }
    for i in &r.inputs {
        if let Some(e) = &i.error {
            let _ = writeln!(out, "input {}: {e} (after {} lines)", i.name, i.lines);
        }
    }
    let s = &r.site;
    let _ = writeln!(
        out,
        "{} requests, {} from {} clients ({} addresses); robots: {} of requests, {} of bytes",
        s.requests,
        bytes(s.bytes),
        s.clients,
        s.unique_ips,
        pct(s.robot_request_share),
        pct(s.robot_byte_share)
    );
    if !r.robots_txt.is_empty() {
        let _ = writeln!(
            out,
            "robots.txt: {} version(s); {} robot requests disallowed",
            r.robots_txt.len(),
            s.disallowed_requests
        );
    }
    out.push('\n');
    let rows: Vec<Vec<String>> = s
        .classes
        .iter()
        .map(|(k, v)| {
            vec![
                (*k).to_owned(),
                v.clients.to_string(),
                v.requests.to_string(),
                bytes(v.bytes),
            ]
        })
        .collect();
    table(&mut out, &["class", "clients", "requests", "bytes"], &rows);
    if !r.robots.is_empty() {
        let _ = writeln!(out, "\nrobots ({}):", r.robots.len());
        let rows: Vec<Vec<String>> = robots_by_requests(r)
            .iter()
            .map(|(name, b)| {
                vec![
                    shorten(name, 32),
                    b.category.clone().unwrap_or_else(|| "-".into()),
                    b.requests.to_string(),
                    b.sessions.to_string(),
                    b.unique_ips.to_string(),
                    bytes(b.bytes),
                    b.robots_txt_fetches.to_string(),
                    if b.judged_requests > 0 {
                        format!("{} ({})", b.disallowed_requests, pct(b.disallowed_share))
                    } else {
                        "-".into()
                    },
                    match b.pace.crawl_delay_s {
                        Some(d) => format!("{} (delay {d}s)", b.pace.crawl_delay_breaches),
                        None => "-".into(),
                    },
                    b.verification.verified.ips.to_string(),
                    b.verification.spoofed.ips.to_string(),
                    b.verification.unverifiable.ips.to_string(),
                    b.first_seen.clone(),
                    b.last_seen.clone(),
                ]
            })
            .collect();
        table(
            &mut out,
            &[
                "robot",
                "category",
                "requests",
                "sessions",
                "ips",
                "bytes",
                "robots.txt",
                "disallowed",
                "delay breaches",
                "verified",
                "spoofed",
                "unverifiable",
                "first seen",
                "last seen",
            ],
            &rows,
        );
    }
    clients(&mut out, "spoofed robots", &r.spoofed, 20);
    clients(&mut out, "undeclared robots", &r.undeclared_bots, 20);
    clients(&mut out, "scanners", &r.scanners, 20);
    clients(&mut out, "monitors", &r.monitors, 10);
    if !r.malformed.is_empty() {
        let _ = writeln!(out, "\nlines not understood:");
        let rows: Vec<Vec<String>> = r
            .malformed
            .iter()
            .map(|m| {
                vec![
                    m.reason.to_owned(),
                    m.count.to_string(),
                    m.sample_lines
                        .iter()
                        .map(u64::to_string)
                        .collect::<Vec<_>>()
                        .join(" "),
                ]
            })
            .collect();
        table(&mut out, &["reason", "lines", "first line numbers"], &rows);
    }
    // Whatever reached the text outside a table (input names, errors) is
    // escaped too; the tables' escapes are printable and pass unchanged.
    match botscope_text::terminal(&out) {
        std::borrow::Cow::Borrowed(_) => out,
        std::borrow::Cow::Owned(safe) => safe,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_counts() {
        assert_eq!(bytes(999), "999 B");
        assert_eq!(bytes(1_500_000), "1.5 MB");
        assert_eq!(shorten("abcdef", 4), "abc…");
    }
}
