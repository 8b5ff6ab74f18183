//! The report as terminal tables.

use std::fmt::Write;

use botscope_text::count;

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

/// A cell that reads as a number (`543`, `99.0 MB`, `2 (50.0%)`, `4 (delay
/// 10s)`, `-`): right-aligned, never shortened. A time stamp or a sentence
/// that starts with a digit is text.
fn is_number_cell(c: &str) -> bool {
    c.is_empty()
        || c == "-"
        || c.chars().next().is_some_and(|f| f.is_ascii_digit())
            && !c.contains('T')
            && c.split_whitespace().count() <= 3
}

/// Text columns are shortened to this before columns are left out …
const COMFORTABLE_TEXT_COLUMN: usize = 24;
/// … and, when that is not enough, to this.
const MIN_TEXT_COLUMN: usize = 16;

/// Lays out rows as aligned columns (numbers right-aligned), within
/// `width` characters: the widest text column is shortened (with an
/// ellipsis) down to [`COMFORTABLE_TEXT_COLUMN`], then the columns of
/// `drop` are left out in that order, then text columns are shortened down
/// to [`MIN_TEXT_COLUMN`]. Cells are strangers' bytes (User-Agents, paths,
/// robot names): control and bidi characters are escaped before the
/// widths are measured.
fn table(out: &mut String, header: &[&str], rows: &[Vec<String>], width: usize, drop: &[usize]) {
    let mut keep: Vec<usize> = (0..header.len()).collect();
    let mut rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            r.iter()
                .map(|c| botscope_text::field(c).into_owned())
                .collect()
        })
        .collect();
    let text: Vec<bool> = (0..header.len())
        .map(|i| rows.iter().any(|r| !is_number_cell(&r[i])))
        .collect();
    let mut drops = drop.iter();
    let mut floor = COMFORTABLE_TEXT_COLUMN;
    loop {
        let widths: Vec<usize> = (0..header.len())
            .map(|i| {
                rows.iter()
                    .map(|r| r[i].chars().count())
                    .fold(header[i].chars().count(), usize::max)
            })
            .collect();
        let total: usize =
            keep.iter().map(|&i| widths[i]).sum::<usize>() + 2 * keep.len().saturating_sub(1);
        if total <= width {
            break;
        }
        let widest = keep
            .iter()
            .copied()
            .filter(|&i| text[i] && widths[i] > floor)
            .max_by_key(|&i| widths[i]);
        if let Some(i) = widest {
            let to = widths[i].saturating_sub(total - width).max(floor);
            for r in &mut rows {
                r[i] = shorten(&r[i], to);
            }
            continue;
        }
        match drops.next() {
            Some(d) => keep.retain(|i| i != d),
            None if floor > MIN_TEXT_COLUMN => floor = MIN_TEXT_COLUMN,
            None => break,
        }
    }
    let header: Vec<&str> = keep.iter().map(|&i| header[i]).collect();
    let rows: Vec<Vec<String>> = rows
        .into_iter()
        .map(|r| keep.iter().map(|&i| r[i].clone()).collect())
        .collect();
    let rows = rows.as_slice();
    let header = header.as_slice();
    let mut w: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let numeric: Vec<bool> = (0..header.len())
        .map(|i| rows.iter().all(|r| is_number_cell(&r[i])))
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

/// `text` in lines of at most `width` characters, broken at spaces (a
/// word longer than that stays whole).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    for word in text.split(' ') {
        if !cur.is_empty() && cur.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(word);
    }
    if !cur.is_empty() {
        lines.push(cur);
    }
    lines
}

fn clients(out: &mut String, title: &str, l: &ClientList, limit: usize, width: usize) {
    if l.total == 0 {
        return;
    }
    let _ = writeln!(
        out,
        "\n{title}: {}, {}{}",
        count(l.total, "client", "clients"),
        count(l.requests, "request", "requests"),
        if l.total as usize > limit {
            format!(" (top {limit} shown)")
        } else {
            String::new()
        }
    );
    let rows: Vec<(Vec<String>, String)> = l
        .clients
        .iter()
        .take(limit)
        .map(|c| {
            let ua = shorten(c.user_agent.as_deref().unwrap_or("-"), 40);
            let closed = (c.disallowed_requests > 0).then(|| {
                format!(
                    "{} of {} requests robots.txt closed",
                    c.disallowed_requests, c.requests
                )
            });
            let why = closed
                .into_iter()
                .chain(c.network().map(|n| format!("network: {n}")))
                .chain(c.verification.clone())
                // A spoofer's claim is its verification line: the
                // "declared" reason would say it again.
                .chain(
                    c.reasons
                        .iter()
                        .filter(|r| c.verification.is_none() || r.code != "declared")
                        .map(|r| r.detail.clone()),
                )
                .collect::<Vec<_>>()
                .join("; ");
            (vec![c.ip.to_string(), c.requests.to_string(), ua], why)
        })
        .collect();
    // The reasons go under each client, wrapped, so none is cut.
    let (cells, whys): (Vec<Vec<String>>, Vec<String>) = rows.into_iter().unzip();
    let mut t = String::new();
    table(
        &mut t,
        &["ip", "requests", "user-agent"],
        &cells,
        width,
        &[],
    );
    let mut lines = t.lines();
    if let Some(h) = lines.next() {
        let _ = writeln!(out, "{h}");
    }
    for (line, why) in lines.zip(whys) {
        let _ = writeln!(out, "{line}");
        for w in wrap(&botscope_text::field(&why), width.saturating_sub(4).max(20)) {
            let _ = writeln!(out, "    {w}");
        }
    }
}

/// Signed requests (Web Bot Auth): by signature agent, then by robot.
fn signatures(out: &mut String, r: &Report, width: usize) {
    if r.signature_agents.is_empty() {
        return;
    }
    let _ = writeln!(out, "\nsigned requests by signature agent:");
    let rows: Vec<Vec<String>> = r
        .signature_agents
        .iter()
        .map(|a| {
            vec![
                shorten(&a.agent, 48),
                a.robot.clone().unwrap_or_else(|| "-".into()),
                a.counts.signed.to_string(),
                a.counts.verified.to_string(),
                a.counts.invalid.to_string(),
                a.unverified.to_string(),
                super::reasons(&a.reasons),
            ]
        })
        .collect();
    table(
        out,
        &[
            "agent",
            "robot",
            "signed",
            "verified",
            "invalid",
            "unverified",
            "why not verified",
        ],
        &rows,
        width,
        &[6, 1],
    );
    let robots: Vec<Vec<String>> = robots_by_requests(r)
        .iter()
        .filter_map(|(name, b)| {
            let s = b.signatures?;
            Some(vec![
                shorten(name, 32),
                b.claimed_requests().to_string(),
                s.signed.to_string(),
                s.verified.to_string(),
                s.invalid.to_string(),
            ])
        })
        .collect();
    if !robots.is_empty() {
        let _ = writeln!(out, "\nsigned requests by robot:");
        table(
            out,
            &["robot", "requests", "signed", "verified", "invalid"],
            &robots,
            width,
            &[],
        );
    }
}

/// `n (p%)` of `of`, or `-` when there is nothing to count.
fn share(n: u64, of: u64) -> String {
    if of == 0 {
        "-".into()
    } else {
        format!("{n} ({})", pct(n as f64 / of as f64))
    }
}

/// Compliance by strictness (all robots, then each), and what each robot
/// did after robots.txt changed.
fn compliance(out: &mut String, r: &Report, width: usize) {
    if r.compliance.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\nrobots.txt compliance by directive (sessions end after {} minutes without a \
         request; each is judged under the directive in force when it began):",
        botscope_accesslog::STUDY_SESSION_GAP / 60
    );
    let header = [
        "robot",
        "directive",
        "sessions",
        "read robots.txt",
        "compliant",
        "closed requests",
        "delay breaches",
    ];
    let row = |name: &str, u: &botscope_accesslog::Under| {
        vec![
            shorten(name, 32),
            u.directive.as_str().to_owned(),
            u.sessions.to_string(),
            share(u.sessions_reading_robots_txt, u.sessions),
            if u.directive.asks() {
                share(u.compliant_sessions, u.sessions)
            } else {
                "-".into()
            },
            u.closed_requests.to_string(),
            u.crawl_delay_breaches.to_string(),
        ]
    };
    let mut rows: Vec<Vec<String>> = r
        .compliance
        .iter()
        .map(|u| row("(all robots)", u))
        .collect();
    for (name, b) in robots_by_requests(r) {
        if let Some(c) = &b.compliance {
            rows.extend(c.by_directive.iter().map(|u| row(name, u)));
        }
    }
    table(out, &header, &rows, width, &[6]);
    enforcement(out, r, width);
    if r.robots_txt.len() < 2 {
        return;
    }
    let rows: Vec<Vec<String>> = robots_by_requests(r)
        .into_iter()
        .flat_map(|(name, b)| {
            b.compliance
                .iter()
                .flat_map(|c| &c.by_version)
                .filter(|v| v.version > 0)
                .map(move |v| {
                    vec![
                        shorten(name, 32),
                        v.from.clone().unwrap_or_else(|| "the beginning".into()),
                        v.requests.to_string(),
                        match v.read_first {
                            Some(true) => "yes".into(),
                            Some(false) => "no".into(),
                            None => "-".into(),
                        },
                        v.closed_requests.to_string(),
                        v.closed_after_reading.to_string(),
                    ]
                })
        })
        .collect();
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(out, "\nafter robots.txt changed:");
    table(
        out,
        &[
            "robot",
            "version from",
            "requests",
            "read it first",
            "closed requests",
            "after reading it",
        ],
        &rows,
        width,
        &[],
    );
}

/// Stated versus enforced: verified robots' requests for closed paths, by
/// how the server answered them.
fn enforcement(out: &mut String, r: &Report, width: usize) {
    let rows: Vec<Vec<String>> = robots_by_requests(r)
        .into_iter()
        .filter_map(|(name, b)| {
            let e = b.enforcement.as_ref()?;
            let other: Vec<String> = e
                .answers
                .iter()
                .filter(|(k, _)| **k != "answered")
                .map(|(k, n)| format!("{k} {n}"))
                .collect();
            Some(vec![
                shorten(name, 32),
                b.category.clone().unwrap_or_else(|| "-".into()),
                e.closed_requests.to_string(),
                share(e.answered(), e.closed_requests),
                if other.is_empty() {
                    "-".into()
                } else {
                    other.join(", ")
                },
            ])
        })
        .collect();
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\nstated versus enforced (requests for closed paths from verified addresses):"
    );
    table(
        out,
        &[
            "robot",
            "category",
            "closed requests",
            "answered 2xx",
            "otherwise",
        ],
        &rows,
        width,
        &[],
    );
}

/// Terminal tables, fitted to 100 columns (what `text` writes when the
/// output is not a terminal).
pub fn text(r: &Report) -> String {
    text_fit(r, 100)
}

/// Terminal tables, each fitted to `width` columns: long names are
/// shortened, then the least needed columns left out (first and last
/// seen, sessions, Crawl-delay breaches, category, robots.txt fetches).
pub fn text_fit(r: &Report, width: usize) -> String {
    let mut out = String::new();
    let period = r
        .period
        .as_ref()
        .map(|p| format!("{} to {}", p.first, p.last))
        .unwrap_or_else(|| "no requests".into());
    let cut = super::cut_short(r);
    let cut_note = if cut > 0 {
        format!(" ({cut} cut short)")
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "{} lines, {} parsed{cut_note}, {} not understood; {period}",
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
        "{}, {} from {} ({}); robots: {} of requests, {} of bytes",
        count(s.requests, "request", "requests"),
        bytes(s.bytes),
        count(s.clients, "client", "clients"),
        count(s.unique_ips, "address", "addresses"),
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
    table(
        &mut out,
        &["class", "clients", "requests", "bytes"],
        &rows,
        width,
        &[],
    );
    if !r.robots.is_empty() {
        let _ = writeln!(out, "\nrobots ({}):", r.robots.len());
        let rows: Vec<Vec<String>> = super::robot_rows(r)
            .iter()
            .map(|row| {
                let (b, f) = (row.robot, row.figures);
                let own = !row.spoofed;
                let (verified, spoofed, unverifiable) = if own {
                    let v = &b.verification;
                    (v.verified.ips, v.spoofed.ips, v.unverifiable.ips)
                } else {
                    (0, f.unique_ips, 0)
                };
                vec![
                    shorten(&row.label(), 32),
                    b.category.clone().unwrap_or_else(|| "-".into()),
                    f.requests.to_string(),
                    f.sessions.to_string(),
                    f.unique_ips.to_string(),
                    bytes(f.bytes),
                    f.robots_txt_fetches.to_string(),
                    if f.judged_requests > 0 {
                        format!("{} ({})", f.disallowed_requests, pct(f.disallowed_share))
                    } else {
                        "-".into()
                    },
                    match b.pace.crawl_delay_s {
                        Some(d) if own => format!("{} (delay {d}s)", b.pace.crawl_delay_breaches),
                        _ => "-".into(),
                    },
                    verified.to_string(),
                    spoofed.to_string(),
                    unverifiable.to_string(),
                    f.first_seen.clone(),
                    f.last_seen.clone(),
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
            width,
            &[12, 13, 3, 8, 1, 6, 11],
        );
        if r.robots_omitted.robots > 0 {
            let _ = writeln!(out, "{}", super::html::omitted_robots(&r.robots_omitted));
        }
        if let Some(note) = super::unverifiable_note(r) {
            let _ = writeln!(out, "{note}");
        }
    }
    compliance(&mut out, r, width);
    if r.untracked.requests > 0 {
        let _ = writeln!(out, "\n{}", super::html::untracked(r));
    }
    signatures(&mut out, r, width);
    clients(&mut out, "spoofed robots", &r.spoofed, 20, width);
    clients(
        &mut out,
        "disobedient robots (not verified, 3 or more requests robots.txt closed)",
        &r.disobedient,
        20,
        width,
    );
    clients(&mut out, "undeclared robots", &r.undeclared_bots, 20, width);
    clients(&mut out, "scanners", &r.scanners, 20, width);
    clients(&mut out, "monitors", &r.monitors, 10, width);
    if !r.malformed.is_empty() {
        let _ = writeln!(out, "\nlines not understood or cut short:");
        let rows: Vec<Vec<String>> = r
            .malformed
            .iter()
            .map(|m| vec![m.reason.to_owned(), m.count.to_string()])
            .collect();
        let mut t = String::new();
        table(&mut t, &["reason", "lines"], &rows, width, &[]);
        let mut lines = t.lines();
        if let Some(h) = lines.next() {
            let _ = writeln!(out, "{h}");
        }
        // The first lines go under each reason, whole: an input name is
        // not cut, even when it is wider than the terminal.
        for (line, m) in lines.zip(&r.malformed) {
            let _ = writeln!(out, "{line}");
            let places = super::sample_places(m).join(", ");
            let _ = writeln!(out, "    first: {}", botscope_text::field(&places));
        }
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
