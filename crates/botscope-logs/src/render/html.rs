//! The report as one self-contained HTML page: inline CSS, inline SVG
//! charts, tables sortable by a small inline script. No external
//! resource of any kind, so the file opens anywhere, offline. Written
//! with maud: every value from the log is escaped by the template, and
//! control and bidi characters are shown as visible escapes (`\x1b`,
//! `\u{202e}`), so that an override cannot turn text around for the eye.

use std::fmt::Write;

use maud::{DOCTYPE, Markup, PreEscaped, Render, html};

use botscope_accesslog::{ClientList, Report};

use botscope_text::count;

use super::{RobotRow, bytes, robot_rows, robots_by_requests};

/// Text from strangers: HTML-escaped, with control and bidi characters
/// (but newline and tab) shown as visible escapes. The web pages use it too.
pub struct Text<'a>(pub &'a str);

impl Render for Text<'_> {
    fn render_to(&self, w: &mut String) {
        let _ = maud::Escaper::new(w).write_str(&botscope_text::terminal(self.0));
    }
}

const STYLE: &str = r#"
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em auto;padding:0 1.5em;max-width:1400px;color:#222;background:#fff}
.wide{overflow-x:auto;max-width:100%}
:focus-visible{outline:3px solid #1f5fa8;outline-offset:2px}
svg{max-width:100%;height:auto}
code.path{display:inline-block;max-width:42ch;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;vertical-align:bottom;word-break:normal}
td.ua{max-width:20em;overflow-wrap:break-word;word-break:normal}
td.why{max-width:20em}
td b{white-space:nowrap}
svg.hourly{width:100%;height:auto;display:block}
td.kw,span.kw{white-space:nowrap}td.paths code.path{max-width:30ch}
table.sortable th{white-space:normal}#robots td:first-child,#robots-answers td:first-child{max-width:20em;min-width:9em;overflow-wrap:break-word}
h3{font-size:1em;margin-top:1.2em}
.cols{display:flex;flex-wrap:wrap;gap:0 2em}.cols>div{flex:1 1 30em;min-width:0}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em}
table{border-collapse:collapse;margin:.5em 0;font-variant-numeric:tabular-nums}
th,td{border:1px solid #ccc;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#f0f0f0;cursor:pointer;user-select:none;white-space:nowrap}
th[aria-sort=ascending]::after{content:" \25B2"}th[aria-sort=descending]::after{content:" \25BC"}
td.n{text-align:right;white-space:nowrap}.muted{color:#666}.bad{color:#b00}
.legend span{display:inline-block;margin-right:1em}.legend i{display:inline-block;width:.8em;height:.8em;margin-right:.3em}
code{font-size:.92em;overflow-wrap:break-word}
svg.hourly.narrow{display:none}
@media (max-width:40rem){
svg.hourly.wide{display:none}svg.hourly.narrow{display:block}
.wide{overflow:visible}
table.sortable,table.sortable tbody,table.sortable tr,table.sortable td{display:block;max-width:none}
table.sortable thead{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
table.sortable tr{border-bottom:1px solid #ccc;padding:.3em 0}
table.sortable td{border:0;padding:1px 0;text-align:left;white-space:normal;min-width:0}
table.sortable td[data-label]::before{content:attr(data-label) ": ";font-weight:600}
}
.c-human{background:#4e79a7}.c-declared_bot{background:#59a14f}.c-undeclared_bot{background:#f28e2b}.c-scanner{background:#e15759}.c-monitor{background:#9c755f}
"#;

/// Sorts a table by the clicked header (numbers by `data-v`).
const SCRIPT: &str = r#"
(function(){
  function key(td){var v=td.getAttribute('data-v');return v===null?td.textContent:parseFloat(v);}
  // Each cell names its column, for the phone's layout (a row read as a
  // block, column by column).
  document.querySelectorAll('table.sortable').forEach(function(t){
    var names=[].map.call(t.querySelectorAll('thead th'),function(h){return h.textContent.trim();});
    t.querySelectorAll('tbody tr').forEach(function(r){
      [].forEach.call(r.cells,function(c,i){if(names[i]&&!c.hasAttribute('data-label'))c.setAttribute('data-label',names[i]);});
    });
  });
  document.querySelectorAll('table.sortable').forEach(function(t){
    t.querySelectorAll('th').forEach(function(th,i){
      th.addEventListener('click',function(){
        var asc=th.getAttribute('aria-sort')!=='ascending';
        t.querySelectorAll('th').forEach(function(h){h.removeAttribute('aria-sort');});
        th.setAttribute('aria-sort',asc?'ascending':'descending');
        var body=t.tBodies[0];var rows=Array.prototype.slice.call(body.rows);
        rows.sort(function(a,b){var x=key(a.cells[i]),y=key(b.cells[i]);
          var c=(typeof x==='number'&&typeof y==='number')?x-y:String(x).localeCompare(String(y));
          return asc?c:-c;});
        rows.forEach(function(r){body.appendChild(r);});
      });
    });
  });
  document.body.setAttribute('data-width',String(document.documentElement.scrollWidth));
  document.body.setAttribute('data-ready','1');
})();
"#;

/// Each class: its key (the JSON's), its colour, and its name for people.
const COLORS: [(&str, &str, &str); 5] = [
    ("human", "#4e79a7", "people"),
    ("declared_bot", "#59a14f", "declared robots"),
    ("undeclared_bot", "#f28e2b", "undeclared robots"),
    ("scanner", "#e15759", "scanners"),
    ("monitor", "#9c755f", "monitors"),
];

/// An RFC 3339 time as people read it: `2026-11-20 00:40` (UTC, to the
/// minute); anything else as it is.
fn short_time(t: &str) -> String {
    let b = t.as_bytes();
    if t.len() == 20 && b[10] == b'T' && b[19] == b'Z' {
        format!("{} {}", &t[..10], &t[11..16])
    } else {
        botscope_text::terminal(t).into_owned()
    }
}

/// A table cell of a time as [`short_time`] shows it, on one line, whole
/// in its title.
fn when(t: &str) -> Markup {
    let shown = short_time(t);
    // The date and the time may go on two lines; neither is broken.
    html! {
        td.when title=(Text(t)) {
            @for (k, part) in shown.split(' ').enumerate() {
                @if k > 0 { " " }
                span.kw { (part) }
            }
        }
    }
}

/// Words joined by hyphens kept whole where a line may break (`User-Agent`,
/// `robots.txt-breakers`): U+2011 in place of a hyphen between letters.
fn unbroken(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut prev = ' ';
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        if c == '-' && prev.is_alphanumeric() && it.peek().is_some_and(|n| n.is_alphanumeric()) {
            out.push('\u{2011}');
        } else {
            out.push(c);
        }
        prev = c;
    }
    out
}

/// Three values for a y axis from 0 to about `max`: 0, a round middle
/// and a round top at or above `max` (`0, 50, 100` for 87).
fn y_ticks(max: u64) -> [u64; 3] {
    let max = max.max(1);
    let mut step = 1u64;
    // The smallest round step (1, 2, 5 × 10ⁿ) with two steps reaching max.
    'find: for p in 0..19 {
        let ten = 10u64.pow(p);
        for m in [1, 2, 5] {
            if m * ten * 2 >= max {
                step = m * ten;
                break 'find;
            }
        }
    }
    [0, step, step * 2]
}

/// `20 Nov` (`20 Nov 2026` with `year`): a day's label on the chart.
fn day_label(day: i64, year: bool) -> String {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let iso = botscope_accesslog::format_rfc3339(day * 86_400);
    let month = iso
        .get(5..7)
        .and_then(|m| m.parse::<usize>().ok())
        .unwrap_or(1);
    let dom = iso
        .get(8..10)
        .and_then(|d| d.parse::<u32>().ok())
        .unwrap_or(1);
    let name = MONTHS[(month + 11) % 12];
    if year {
        format!("{dom} {name} {}", iso.get(..4).unwrap_or_default())
    } else {
        format!("{dom} {name}")
    }
}

/// A request path: one line, cut with an ellipsis when long, whole in its
/// title.
fn path(p: &str) -> Markup {
    html! { code.path title=(Text(p)) { (Text(p)) } }
}

/// A number cell, sortable by its value.
fn num(v: u64) -> Markup {
    html! { td.n data-v=(v) { (v) } }
}

/// A number cell showing `shown`, sortable by `v`.
fn num_f(v: f64, shown: &str) -> Markup {
    html! { td.n data-v=(v) { (Text(shown)) } }
}

/// One hour's bar: (class, top, height, requests) per class with requests,
/// stacked from the baseline `h` up, `max` requests reaching 0.
fn stack(x: &botscope_accesslog::Hour, max: f64, h: f64) -> Vec<(usize, f64, f64, u64)> {
    let vals = [
        x.human,
        x.declared_bot,
        x.undeclared_bot,
        x.scanner,
        x.monitor,
    ];
    let mut y = h;
    let mut out = Vec::new();
    for (k, v) in vals.into_iter().enumerate() {
        if v > 0 {
            let bh = v as f64 / max * h;
            y -= bh;
            out.push((k, y, bh, v));
        }
    }
    out
}

/// Bars the hourly chart draws at most: past them an hour's bar becomes
/// a bar of several hours, so that a log spanning years (or dated wrong)
/// makes a chart of a bounded size.
pub const MAX_BARS: i64 = 1_000;

/// Day marks the chart draws at most (past them, one every few days).
const MAX_DAY_MARKS: i64 = 100;

/// Hours per bar for a chart spanning `span` hours: 1, or as many as keep
/// it within [`MAX_BARS`].
pub fn hours_per_bar(span: i64) -> i64 {
    (span.max(1) + MAX_BARS - 1) / MAX_BARS
}

/// A stacked bar chart of requests per hour and class, each hour at its
/// time (an hour without requests is a gap; over [`MAX_BARS`] hours, a
/// bar holds several), the days marked and named (`20 Nov`, as many as
/// fit), a y axis of three round values; it takes the page's width.
fn hourly_chart(r: &Report) -> Markup {
    let times = || {
        r.hourly
            .iter()
            .filter_map(|x| botscope_accesslog::parse_iso_time(x.hour.as_bytes()))
            .map(|t| t.div_euclid(3600))
    };
    let span = match (times().min(), times().max()) {
        (Some(a), Some(b)) => b - a + 1,
        _ => 0,
    };
    let per_bar = hours_per_bar(span);
    html! {
        @if per_bar > 1 {
            p.muted { "The log spans " (count(u64::try_from(span).unwrap_or(0), "hour", "hours")) ": each bar is " (per_bar) " hours." }
        }
        (hourly_svg(r, 1000.0, 11.0, "wide"))
        (hourly_svg(r, 400.0, 12.0, "narrow"))
    }
}

/// The chart `w` units wide, its labels `font` units high (the narrow one
/// is shown on phones: its labels stay at least 10 px there).
fn hourly_svg(r: &Report, w: f64, font: f64, class: &str) -> Markup {
    let hours: Vec<(i64, &botscope_accesslog::Hour)> = r
        .hourly
        .iter()
        .filter_map(|x| {
            Some((
                botscope_accesslog::parse_iso_time(x.hour.as_bytes())?.div_euclid(3600),
                x,
            ))
        })
        .collect();
    let (Some(first), Some(last)) = (hours.first().map(|h| h.0), hours.last().map(|h| h.0)) else {
        return html! { p.muted { "No requests." } };
    };
    let per_bar = hours_per_bar(last - first + 1);
    // The bars: hours summed by bar, in order.
    let mut bars: Vec<(i64, botscope_accesslog::Hour)> = Vec::new();
    for (t, x) in &hours {
        let k = (t - first) / per_bar;
        match bars.last_mut() {
            Some((j, b)) if *j == k => {
                b.requests += x.requests;
                b.human += x.human;
                b.declared_bot += x.declared_bot;
                b.undeclared_bot += x.undeclared_bot;
                b.scanner += x.scanner;
                b.monitor += x.monitor;
            }
            _ => bars.push((k, (*x).clone())),
        }
    }
    let (h, pad, top) = (220.0_f64, 44.0_f64, 8.0_f64);
    let span = ((last - first) / per_bar + 1).max(1) as f64;
    let bw = (w - pad) / span;
    let peak = bars.iter().map(|x| x.1.requests).max().unwrap_or(1);
    let ticks = y_ticks(peak);
    let max = ticks[2] as f64;
    let y_of = |v: f64| h - v / max * (h - top);
    let f2 = |x: f64| format!("{x:.2}");
    // Day boundaries in the span (one every `step` days past
    // MAX_DAY_MARKS of them), named every `every` marks so that the names
    // (about 40 units wide, 70 with the year, given when the log spans
    // more than one) never meet.
    let (d0, d1) = (first.div_euclid(24), last.div_euclid(24));
    let step = ((d1 - d0 + 1) + MAX_DAY_MARKS - 1) / MAX_DAY_MARKS;
    let years = botscope_accesslog::format_rfc3339(first * 3600).get(..4)
        != botscope_accesslog::format_rfc3339(last * 3600).get(..4);
    let label_w = if years { 74.0 } else { 44.0 } * font / 11.0;
    let hour_w = bw / per_bar as f64;
    let every = ((label_w / (24.0 * step as f64 * hour_w)).ceil() as i64).max(1);
    let days: Vec<(i64, f64)> = (d0..=d1)
        .step_by(usize::try_from(step.max(1)).unwrap_or(1))
        .map(|d| (d, pad + ((d * 24 - first).max(0)) as f64 * hour_w))
        .collect();
    let bar_label = |x: &botscope_accesslog::Hour| {
        if per_bar == 1 {
            x.hour.clone()
        } else {
            format!("{} and the {} hours after", x.hour, per_bar - 1)
        }
    };
    html! {
        svg class={ "hourly " (class) } xmlns="http://www.w3.org/2000/svg" role="img"
            aria-label=(hourly_words(r, &hours, per_bar))
            viewBox={ "0 0 " (w) " " (h + 22.0) } preserveAspectRatio="xMinYMin meet" {
            @for t in ticks {
                @let y = y_of(t as f64);
                line x1=(pad) y1=(f2(y)) x2=(w) y2=(f2(y)) stroke=(if t == 0 { "#999" } else { "#e4e4e4" }) {}
                text x=(pad - 6.0) y=(f2(y + 4.0)) font-size=(font) text-anchor="end" { (t) }
            }
            @for (k, (d, x)) in days.iter().enumerate() {
                line x1=(f2(*x)) y1=(h) x2=(f2(*x)) y2=(h + 5.0) stroke="#999" {}
                @if k as i64 % every == 0 && *x + label_w - 4.0 <= w && (k > 0 || days.len() == 1 || days[1].1 - x >= label_w - 4.0) {
                    text x=(f2(*x + 2.0)) y=(h + 17.0) font-size=(font) { (day_label(*d, years)) }
                }
            }
            @for (t, x) in &bars {
                @for (k, y, bh, v) in stack(x, max, h - top) {
                    rect x=(f2(pad + *t as f64 * bw)) y=(f2(y + top)) width=(f2((bw - 0.5).max(0.5)))
                        height=(f2(bh)) fill=(COLORS[k].1) {
                        title { (Text(&bar_label(x))) " " (COLORS[k].2) ": " (v) }
                    }
                }
            }
        }
    }
}

/// The hourly chart in words, for a screen reader (the picture's text
/// alternative): its span, its busiest hour, and where the numbers per day
/// are.
fn hourly_words(r: &Report, hours: &[(i64, &botscope_accesslog::Hour)], per_bar: i64) -> String {
    let busiest = hours.iter().max_by_key(|x| (x.1.requests, -x.0));
    let bars = if per_bar > 1 {
        format!(" (each bar {per_bar} hours)")
    } else {
        String::new()
    };
    let mut s = format!(
        "Requests per hour by class (UTC){bars}, {} with requests from {} to {}",
        count(hours.len() as u64, "hour", "hours"),
        short_time(hours.first().map_or("", |x| x.1.hour.as_str())),
        short_time(hours.last().map_or("", |x| x.1.hour.as_str())),
    );
    if let Some((_, b)) = busiest {
        s.push_str(&format!(
            "; the busiest, {}, had {}",
            short_time(&b.hour),
            count(b.requests, "request", "requests")
        ));
    }
    if !r.daily.is_empty() {
        s.push_str("; the table Days gives the numbers per day and class");
    }
    s
}

/// Horizontal bars: requests per class.
fn class_chart(r: &Report) -> Markup {
    let total = r.site.requests.max(1) as f64;
    let words = COLORS
        .iter()
        .map(|(name, _, label)| {
            let v = r.site.classes.get(name).map_or(0, |c| c.requests);
            format!("{label} {v} ({:.1}%)", v as f64 / total * 100.0)
        })
        .collect::<Vec<_>>()
        .join(", ");
    html! {
        svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label={ "Requests by class: " (words) }
            width="370" height="110" viewBox="0 0 370 110" {
            @for (i, (name, color, label)) in COLORS.iter().enumerate() {
                @let v = r.site.classes.get(name).map_or(0, |c| c.requests);
                @let bw = v as f64 / total * 160.0;
                @let y = i as f64 * 21.0;
                text x="0" y=(format!("{:.0}", y + 13.0)) font-size="12" { (label) }
                rect x="120" y=(format!("{:.0}", y + 2.0)) width=(format!("{bw:.2}")) height="15" fill=(color) {}
                text x=(format!("{:.0}", 125.0 + bw)) y=(format!("{:.0}", y + 13.0)) font-size="12" {
                    (v) " (" (format!("{:.1}", v as f64 / total * 100.0)) "%)"
                }
            }
        }
    }
}

fn client_table(title: &str, id: &str, l: &ClientList) -> Markup {
    html! {
        h2 id={ (id) "-h" } {
            (title) " "
            span.muted {
                "(" (count(l.total, "client", "clients")) ", " (count(l.requests, "request", "requests"))
                @if (l.clients.len() as u64) < l.total {
                    "; the " (l.clients.len()) " largest shown"
                }
                ")"
            }
        }
        @if l.clients.is_empty() {
            p.muted { "None." }
        } @else {
            div.wide tabindex="0" { table.sortable.stack id=(id) {
                thead { tr {
                    th { "IP" } th { "Network" } th { "Requests" } th { "Sessions" } th { "Pages" }
                    th { "Bytes" } th { "User\u{2011}Agent" } th { "User\u{2011}Agent type" } th { "Reasons" }
                    th { "Samples" } th { "First seen" } th { "Last seen" }
                } }
                tbody {
                    @for c in &l.clients {
                        tr {
                            td { (c.ip) }
                            td { (Text(c.network().as_deref().unwrap_or("-"))) }
                            (num(c.requests)) (num(c.sessions)) (num(c.pages))
                            (num_f(c.bytes as f64, &bytes(c.bytes)))
                            td.ua { (Text(c.user_agent.as_deref().unwrap_or("-"))) }
                            td { (c.client_type) }
                            td.why {
                                @let closed = (c.disallowed_requests > 0).then(|| format!("{} of {} requests robots.txt closed", c.disallowed_requests, c.requests));
                                @let closed = closed.iter().map(|v| ("disallowed", v.as_str()));
                                // Only the spoofed list's verification refuted the claim.
                                @let label = if id == "spoofed" { "spoofed" } else { "verification" };
                                @let spoofed = c.verification.iter().map(|v| (label, v.as_str()));
                                // A spoofer's claim is its spoofed line: the
                                // "declared" one would say it again.
                                @let reasons = c.reasons.iter().filter(|r| id != "spoofed" || r.code != "declared").map(|r| (r.code, r.detail.as_str()));
                                @for (k, (label, detail)) in closed.chain(spoofed).chain(reasons).enumerate() {
                                    @if k > 0 { br; }
                                    b { (unbroken(label)) } ": " (Text(&unbroken(detail)))
                                }
                            }
                            td.paths {
                                @for (k, s) in c.samples.iter().enumerate() {
                                    @if k > 0 { br; }
                                    (path(s))
                                }
                            }
                            (when(&c.first_seen))
                            (when(&c.last_seen))
                        }
                    }
                }
            } }
        }
    }
}

/// The line that says how many robots have no entry of their own.
pub(crate) fn omitted_robots(o: &botscope_accesslog::OmittedRobots) -> String {
    format!(
        "{} more robots ({}, {}) are counted together: a report keeps {} robots (every registered one, then the most requests).",
        o.robots,
        count(o.clients, "client", "clients"),
        count(o.requests, "request", "requests"),
        botscope_accesslog::ROBOTS_CAP
    )
}

/// The line that says how many requests belong to no tracked client.
pub(crate) fn untracked(r: &Report) -> String {
    format!(
        "{} requests ({}) came from clients past the {} distinct clients the analysis tracks: they count for the site (requests, days, paths), not in any client, class or list.",
        r.untracked.requests,
        bytes(r.untracked.bytes),
        r.site.clients
    )
}

fn robots_table(r: &Report, o: &PageOptions) -> Markup {
    let opt = |v: Option<f64>| v.map(|d| d.to_string()).unwrap_or_else(|| "-".into());
    let robot = |row: &RobotRow| {
        html! {
            td {
                @if let Some(base) = o.robot_link {
                    a href={ (base) (botscope_text::url_component(row.name)) } { (Text(row.name)) }
                } @else {
                    (Text(row.name))
                }
                @if row.spoofed {
                    " " span.bad title="addresses that claimed this robot and are not its own" { "(spoofed)" }
                }
            }
        }
    };
    let rows = robot_rows(r);
    let any_signed = r.robots.values().any(|b| b.signatures.is_some());
    let none = || html! { td.n.muted data-v="-1" { "-" } };
    // Two tables of a dozen columns each, so that both fit a laptop's
    // screen: what each robot did, then how it was answered and verified.
    html! {
        h2 { "Robots " span.muted { "(" (r.robots.len()) ")" } }
        @if rows.iter().any(|row| row.spoofed) {
            p.muted { "A robot's row counts its own addresses; the addresses that claimed it falsely have a row of their own, marked (spoofed)." }
        }
        div.wide tabindex="0" { table.sortable.stack id="robots" {
            thead { tr {
                th { "Robot" } th { "Category" } th { "Requests" } th { "Sessions" } th { "IPs" }
                th { "UAs" } th { "Bytes" } th { "robots.txt" } th { "Disallowed" }
                th { "Disallowed %" } th { "Crawl\u{2011}delay" } th { "Delay breaches" }
                th { "Median gap (s)" }
            } }
            tbody {
                @for row in &rows {
                    @let (b, f) = (row.robot, row.figures);
                    tr {
                        (robot(row))
                        td { (Text(b.category.as_deref().unwrap_or("-"))) }
                        (num(f.requests)) (num(f.sessions)) (num(f.unique_ips)) (num(f.unique_uas))
                        (num_f(f.bytes as f64, &bytes(f.bytes)))
                        (num(f.robots_txt_fetches))
                        @if f.judged_requests > 0 {
                            (num(f.disallowed_requests))
                            (num_f(f.disallowed_share, &format!("{:.1}", f.disallowed_share * 100.0)))
                        } @else {
                            // No robots.txt was given: nothing was checked,
                            // which is not the same as nothing disallowed.
                            td.n.muted data-v="-1" title="no robots.txt was given to check against" { "not checked" }
                            (none())
                        }
                        @if row.spoofed {
                            (none()) (none()) (none())
                        } @else {
                            (num_f(b.pace.crawl_delay_s.unwrap_or(-1.0), &opt(b.pace.crawl_delay_s)))
                            (num(b.pace.crawl_delay_breaches))
                            (num_f(b.pace.median_gap_s.unwrap_or(-1.0), &opt(b.pace.median_gap_s)))
                        }
                    }
                }
            }
        } }
        @if r.robots_omitted.robots > 0 {
            p.muted { (omitted_robots(&r.robots_omitted)) }
        }
        @if r.untracked.requests > 0 {
            p.muted { (untracked(r)) }
        }
        h3 { "How they were answered and verified" }
        div.wide tabindex="0" { table.sortable.stack id="robots-answers" {
            thead { tr {
                th { "Robot" } th { "2xx" } th { "3xx" } th { "4xx" } th { "5xx" }
                th { "Verified IPs" } th { "Spoofed IPs" } th { "Unverifiable IPs" }
                @if any_signed { th title="requests whose signature verified / signed requests" { "Signed" } }
                th { "First seen" } th { "Last seen" } th { "Top paths" }
            } }
            tbody {
                @for row in &rows {
                    @let (b, f) = (row.robot, row.figures);
                    @let status = |k: &str| num(f.status.get(k).copied().unwrap_or(0));
                    @let (verified, spoofed, unverifiable) = if row.spoofed {
                        (0, f.unique_ips, 0)
                    } else {
                        (b.verification.verified.ips, b.verification.spoofed.ips, b.verification.unverifiable.ips)
                    };
                    tr {
                        (robot(row))
                        (status("2xx")) (status("3xx")) (status("4xx")) (status("5xx"))
                        (num(verified))
                        td class=(if spoofed > 0 { "n bad" } else { "n" })
                            data-v=(spoofed) { (spoofed) }
                        (num(unverifiable))
                        @if any_signed {
                            @if row.spoofed {
                                (none())
                            } @else {
                                @let s = b.signatures.unwrap_or_default();
                                td.n data-v=(s.signed) { (s.verified) " / " (s.signed) }
                            }
                        }
                        (when(&f.first_seen))
                        (when(&f.last_seen))
                        td.paths {
                            @if !row.spoofed {
                                @for (k, p) in b.top_paths.iter().take(5).enumerate() {
                                    @if k > 0 { br; }
                                    (path(&p.path)) " " (p.requests)
                                }
                            }
                        }
                    }
                }
            }
        } }
        @if let Some(note) = super::unverifiable_note_with(r, o.verify_hint) {
            p.muted { (Text(&note)) }
        }
    }
}

/// `n (p%)` of `of` as a cell sortable by the share; `-` with nothing to
/// count.
fn share_cell(n: u64, of: u64) -> Markup {
    if of == 0 {
        return html! { td.n data-v="-1" { "-" } };
    }
    let p = n as f64 / of as f64;
    html! { td.n data-v=(p) { (n) " (" (format!("{:.1}", p * 100.0)) "%)" } }
}

/// Compliance by strictness (Kim et al., 2025): all robots, then each;
/// and each robot's requests after robots.txt changed.
fn compliance_table(r: &Report) -> Markup {
    let row = |name: &str, u: &botscope_accesslog::Under| {
        html! {
            tr {
                td.kw { (Text(name)) }
                td.kw { (u.directive.as_str()) }
                (num(u.sessions))
                (share_cell(u.sessions_reading_robots_txt, u.sessions))
                @if u.directive.asks() {
                    (share_cell(u.compliant_sessions, u.sessions))
                } @else {
                    td.n data-v="-1" { "-" }
                }
                (num(u.closed_requests))
                (num(u.crawl_delay_breaches))
            }
        }
    };
    let robots = robots_by_requests(r);
    let changed: Vec<(&String, &botscope_accesslog::UnderVersion)> = if r.robots_txt.len() < 2 {
        Vec::new()
    } else {
        robots
            .iter()
            .flat_map(|(name, b)| {
                b.compliance
                    .iter()
                    .flat_map(|c| &c.by_version)
                    .filter(|v| v.version > 0)
                    .map(move |v| (*name, v))
            })
            .collect()
    };
    html! {
        @if !r.compliance.is_empty() {
            h2 id="compliance-h" { "robots.txt compliance by directive" }
            p.muted {
                "A robot's requests (spoofed addresses left out) split into sessions at "
                (botscope_accesslog::STUDY_SESSION_GAP / 60)
                " minutes without a request; a session is judged under what robots.txt asked of \
                 the robot when it began, and complies when it fetched no closed path and kept \
                 any Crawl-delay (Kim et al., 2025)."
            }
            div.wide tabindex="0" { table.sortable.stack id="compliance" {
                thead { tr {
                    th { "Robot" } th { "Directive" } th { "Sessions" } th { "Read robots.txt" }
                    th { "Compliant" } th { "Closed requests" } th { "Delay breaches" }
                } }
                tbody {
                    @for u in &r.compliance { (row("(all robots)", u)) }
                    @for (name, b) in &robots {
                        @if let Some(c) = &b.compliance {
                            @for u in &c.by_directive { (row(name, u)) }
                        }
                    }
                }
            } }
            @if !changed.is_empty() {
                h2 id="changed-h" { "After robots.txt changed" }
                div.wide tabindex="0" { table.sortable.stack id="changed" {
                    thead { tr {
                        th { "Robot" } th { "Version from" } th { "Requests" }
                        th { "Read it first" } th { "Closed requests" } th { "After reading it" }
                    } }
                    tbody {
                        @for (name, v) in &changed {
                            tr {
                                td { (Text(name)) }
                                td.when { (Text(v.from.as_deref().unwrap_or("the beginning"))) }
                                (num(v.requests))
                                td { (match v.read_first { Some(true) => "yes", Some(false) => "no", None => "-" }) }
                                td class=(if v.closed_requests > 0 { "n bad" } else { "n" })
                                    data-v=(v.closed_requests) { (v.closed_requests) }
                                (num(v.closed_after_reading))
                            }
                        }
                    }
                } }
            }
        }
    }
}

/// Stated versus enforced: verified robots' requests for closed paths, by
/// how the server answered them.
fn enforcement_table(r: &Report) -> Markup {
    let rows: Vec<(
        &String,
        &botscope_accesslog::Robot,
        &botscope_accesslog::Enforcement,
    )> = robots_by_requests(r)
        .into_iter()
        .filter_map(|(n, b)| Some((n, b, b.enforcement.as_ref()?)))
        .collect();
    html! {
        @if !rows.is_empty() {
            h2 id="enforcement-h" { "Stated versus enforced" }
            p.muted {
                "Requests from a robot's verified addresses for paths its robots.txt closed, \
                 by how the server answered them: a closed path answered 2xx is a policy \
                 stated and not enforced."
            }
            div.wide tabindex="0" { table.sortable.stack id="enforcement" {
                thead { tr {
                    th { "Robot" } th { "Category" } th { "Closed requests" }
                    th { "Answered 2xx" } th { "Otherwise" }
                } }
                tbody {
                    @for (name, b, e) in &rows {
                        tr {
                            td.kw { (Text(name)) }
                            td { (Text(b.category.as_deref().unwrap_or("-"))) }
                            (num(e.closed_requests))
                            (share_cell(e.answered(), e.closed_requests))
                            td {
                                @for (k, (what, n)) in e.answers.iter().filter(|(k, _)| **k != "answered").enumerate() {
                                    @if k > 0 { ", " }
                                    (what) " " (n)
                                }
                            }
                        }
                    }
                }
            } }
        }
    }
}

/// Signed requests by signature agent (Web Bot Auth), when there are any.
fn signatures_table(r: &Report) -> Markup {
    html! {
        @if !r.signature_agents.is_empty() {
            h2 id="signatures-h" { "Signed requests " span.muted { "(Web Bot Auth)" } }
            div.wide tabindex="0" { table.sortable.stack id="signatures" {
                thead { tr {
                    th { "Signature agent" } th { "Robot" } th { "Signed" } th { "Verified" }
                    th { "Invalid" } th { "Unverified" } th { "Why not verified" }
                } }
                tbody {
                    @for a in &r.signature_agents {
                        tr {
                            td.agent { (Text(&a.agent)) }
                            td { (Text(a.robot.as_deref().unwrap_or("-"))) }
                            (num(a.counts.signed)) (num(a.counts.verified))
                            td class=(if a.counts.invalid > 0 { "n bad" } else { "n" })
                                data-v=(a.counts.invalid) { (a.counts.invalid) }
                            (num(a.unverified))
                            td { (Text(&super::reasons(&a.reasons))) }
                        }
                    }
                }
            } }
        }
    }
}

/// A horizontal stacked bar: (class, left, width) for each class with
/// requests, `max` requests filling `width`.
fn bar(parts: &[u64], max: f64, width: f64) -> Vec<(usize, f64, f64)> {
    let mut x = 0.0;
    let mut out = Vec::new();
    for (k, v) in parts.iter().enumerate() {
        if *v > 0 {
            let w = *v as f64 / max * width;
            out.push((k, x, w));
            x += w;
        }
    }
    out
}

/// Requests, visitors, bytes and 404s per day, with the classes' shares.
fn days_table(r: &Report) -> Markup {
    let max = r.daily.iter().map(|d| d.requests).max().unwrap_or(1).max(1) as f64;
    html! {
        h2 { "Days " span.muted { "(UTC)" } }
        @if r.daily.is_empty() {
            p.muted { "No requests." }
        } @else {
            div.wide tabindex="0" { table.sortable.stack id="days" {
                thead { tr {
                    th { "Day" } th { "Requests" } th { "Visitors" } th { "Bytes" } th { "404" }
                    @for (_, _, label) in COLORS { th { (label) } }
                    th { "Requests by class" }
                } }
                tbody {
                    @for d in &r.daily {
                        @let parts = [d.human, d.declared_bot, d.undeclared_bot, d.scanner, d.monitor];
                        tr {
                            td.when { (Text(&d.day)) }
                            (num(d.requests)) (num(d.visitors))
                            (num_f(d.bytes as f64, &bytes(d.bytes))) (num(d.not_found))
                            @for v in parts { (num(v)) }
                            td {
                                // The row's cells give the numbers: the
                                // bar is for the eye only.
                                svg xmlns="http://www.w3.org/2000/svg" width="200" height="12"
                                    aria-hidden="true" {
                                    @for (k, x, w) in bar(&parts, max, 200.0) {
                                        rect x=(format!("{x:.2}")) y="0" width=(format!("{w:.2}"))
                                            height="12" fill=(COLORS[k].1) {}
                                    }
                                }
                            }
                        }
                    }
                }
            } }
        }
    }
}

/// A table of paths and their request counts.
fn paths_table(
    id: &str,
    title: &str,
    paths: &[botscope_accesslog::PathCount],
    approximate: bool,
) -> Markup {
    html! {
        div {
            h2 { (title) @if approximate { " " span.muted { "(counts are lower bounds)" } } }
            @if paths.is_empty() {
                p.muted { "None." }
            } @else {
                div.wide tabindex="0" { table.sortable.stack id=(id) {
                    thead { tr { th { "Path" } th { "Requests" } } }
                    tbody {
                        @for p in paths {
                            tr { td { (path(&p.path)) } (num(p.requests)) }
                        }
                    }
                } }
            }
        }
    }
}

/// Per virtual host, when the format logs one.
fn vhosts_table(r: &Report) -> Markup {
    html! {
        @if !r.vhosts.is_empty() {
            h2 { "Virtual hosts " span.muted { "(" (r.vhosts.len()) ")" } }
            div.wide tabindex="0" { table.sortable.stack id="vhosts" {
                thead { tr {
                    th { "Host" } th { "Requests" } th { "Bytes" } th { "Robot requests" }
                    th { "Robot %" } th { "Robot bytes" } th { "404" }
                } }
                tbody {
                    @for v in &r.vhosts {
                        @let share = if v.requests == 0 { 0.0 } else { v.robot_requests as f64 / v.requests as f64 };
                        tr {
                            td { (Text(&v.vhost)) }
                            (num(v.requests)) (num_f(v.bytes as f64, &bytes(v.bytes)))
                            (num(v.robot_requests))
                            (num_f(share, &format!("{:.1}", share * 100.0)))
                            (num_f(v.robot_bytes as f64, &bytes(v.robot_bytes)))
                            (num(v.not_found))
                        }
                    }
                }
            } }
        }
    }
}

/// How the page is made.
#[derive(Clone, Copy, Default)]
pub struct PageOptions<'a> {
    /// Each robot's name links to this prefix followed by the name
    /// (percent-encoded), e.g. a web application's crawler pages.
    pub robot_link: Option<&'a str>,
    /// Put first in the body, e.g. a web application's navigation.
    pub header: Option<&'a Markup>,
    /// Style rules added to the page's own (for the header's elements).
    pub style: Option<&'a str>,
    /// What decides the claims that could not be, in the words of where
    /// the report is read (a web application names its own flag); the
    /// command's by default.
    pub verify_hint: Option<&'a str>,
}

/// The whole page, standalone.
pub fn page(r: &Report) -> String {
    page_with(r, &PageOptions::default())
}

/// The whole page, made as `o` says.
pub fn page_with(r: &Report, o: &PageOptions) -> String {
    // Times as people read them, each kept on one line.
    let period = html! {
        @match &r.period {
            Some(p) => {
                span.kw title=(Text(&p.first)) { (short_time(&p.first)) } " to "
                span.kw title=(Text(&p.last)) { (short_time(&p.last)) } " UTC"
            }
            None => "no requests",
        }
    };
    let markup = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width,initial-scale=1";
                title { "botscope: robots in the access log" }
                style { (PreEscaped(STYLE)) @if let Some(extra) = o.style { (PreEscaped(extra)) } }
            }
            body {
                @if let Some(h) = o.header { (h) }
                h1 { "Robots in the access log" }
                p {
                    (r.lines.total) " lines read, " (r.lines.parsed) " parsed"
                    @if super::cut_short(r) > 0 { " (" (super::cut_short(r)) " cut short)" }
                    ", "
                    span class=(if r.lines.malformed > 0 { "bad" } else { "muted" }) {
                        (r.lines.malformed) " not understood"
                    }
                    "; " (period) "."
                    br;
                    (count(r.site.requests, "request", "requests")) " (" (bytes(r.site.bytes)) ") from "
                    (count(r.site.clients, "client", "clients")) " at "
                    (count(r.site.unique_ips, "address", "addresses")) ". Robots made "
                    b { (format!("{:.1}", r.site.robot_request_share * 100.0)) "%" }
                    " of the requests and "
                    b { (format!("{:.1}", r.site.robot_byte_share * 100.0)) "%" }
                    " of the bytes."
                }
                @for i in &r.inputs {
                    @if let Some(e) = &i.error {
                        p.bad {
                            (Text(&i.name)) ": " (Text(e)) " (the report covers the "
                            (i.lines) " lines before it)"
                        }
                    }
                }
                @if !r.robots_txt.is_empty() {
                    p {
                        "robots.txt: "
                        @for (k, v) in r.robots_txt.iter().enumerate() {
                            @if k > 0 { "; " }
                            code { (Text(&v.file)) }
                            " from " (Text(v.from.as_deref().unwrap_or("the beginning")))
                        }
                        ". " (r.site.disallowed_requests) " robot requests were disallowed."
                    }
                }
                h2 { "Requests per hour" }
                p.legend {
                    @for (name, _, label) in COLORS {
                        span { i class={ "c-" (name) } {} (label) }
                    }
                }
                (hourly_chart(r))
                h2 { "Requests by class" }
                (class_chart(r))
                (days_table(r))
                div.cols {
                    (paths_table("top-paths", "Most requested paths", &r.top_paths, r.top_paths_approximate))
                    (paths_table("not-found", "404 Not Found", &r.not_found, r.not_found_approximate))
                }
                (vhosts_table(r))
                (robots_table(r, o))
                (compliance_table(r))
                (enforcement_table(r))
                (signatures_table(r))
                (client_table("Spoofed robots", "spoofed", &r.spoofed))
                @if !r.robots_txt.is_empty() {
                    (client_table("Disobedient robots", "disobedient", &r.disobedient))
                    p.muted { "Robots whose address was not verified that asked for 3 or more paths robots.txt closed to them (" code { "disobedient-bots" } " in " code { "logs export-lists" } "): one that names itself, such as python-requests, as much as one with a browser's User-Agent." }
                }
                (client_table("Undeclared robots", "undeclared", &r.undeclared_bots))
                (client_table("Scanners", "scanners", &r.scanners))
                (client_table("Monitors", "monitors", &r.monitors))
                h2 { "Lines not understood or cut short" }
                @if r.malformed.is_empty() {
                    p.muted { "None." }
                } @else {
                    div.wide tabindex="0" { table.sortable.stack id="malformed" {
                        thead { tr { th { "Reason" } th { "Lines" } th { "First lines" } } }
                        tbody {
                            @for m in &r.malformed {
                                tr {
                                    td { (m.reason) }
                                    (num(m.count))
                                    td {
                                        @for (k, at) in super::sample_places(m).iter().enumerate() {
                                            @if k > 0 { ", " }
                                            code { (Text(at)) }
                                        }
                                    }
                                }
                            }
                        }
                    } }
                    p.muted {
                        (r.lines.malformed) " lines not understood"
                        @if super::cut_short(r) > 0 {
                            ", " (super::cut_short(r)) " cut short (read as far as they go, and counted)"
                        }
                        "."
                    }
                }
                p.muted {
                    "Schema " (r.schema) "; the JSON report ("
                    code { "--format json" }
                    ") has every figure."
                }
                script { (PreEscaped(SCRIPT)) }
            }
        }
    };
    let mut out = markup.into_string();
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_and_controls_are_shown() {
        let m = html! { p { (Text("<a href=\"x\">'&'</a>\u{1b}")) } };
        assert_eq!(
            m.into_string(),
            "<p>&lt;a href=&quot;x&quot;&gt;'&amp;'&lt;/a&gt;\\x1b</p>"
        );
        // A bidi override cannot make "coming from 127.0.0.1" of it.
        let m = html! { p { (Text("gnimoc \u{202E}1.0.0.721 morf")) } };
        assert_eq!(m.into_string(), "<p>gnimoc \\u{202e}1.0.0.721 morf</p>");
    }
}

#[cfg(test)]
mod chart_tests {
    use super::{day_label, short_time, y_ticks};

    #[test]
    fn the_charts_axes_read_as_people_read_them() {
        assert_eq!(y_ticks(87), [0, 50, 100]);
        assert_eq!(y_ticks(100), [0, 50, 100]);
        assert_eq!(y_ticks(101), [0, 100, 200]);
        assert_eq!(y_ticks(1), [0, 1, 2]);
        assert_eq!(y_ticks(0), [0, 1, 2]);
        assert_eq!(y_ticks(12_345), [0, 10_000, 20_000]);
        // 2026-11-20 is day 20,777 since the epoch.
        assert_eq!(day_label(20_777, false), "20 Nov");
        assert_eq!(day_label(20_777, true), "20 Nov 2026");
        assert_eq!(short_time("2026-11-20T00:40:59Z"), "2026-11-20 00:40");
        assert_eq!(short_time("not a time"), "not a time");
    }
}
