//! The report as one self-contained HTML page: inline CSS, inline SVG
//! charts, tables sortable by a small inline script. No external
//! resource of any kind, so the file opens anywhere, offline.

use std::fmt::Write;

use botscope_accesslog::{ClientList, Report};

use super::render::{bytes, robots_by_requests};

/// Escapes text for HTML content and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() && c != '\n' && c != '\t' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = r#"
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;background:#fff}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em}
table{border-collapse:collapse;margin:.5em 0;font-variant-numeric:tabular-nums}
th,td{border:1px solid #ccc;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#f0f0f0;cursor:pointer;user-select:none;white-space:nowrap}
th[aria-sort=ascending]::after{content:" \25B2"}th[aria-sort=descending]::after{content:" \25BC"}
td.n{text-align:right}.muted{color:#777}.bad{color:#b00}
.legend span{display:inline-block;margin-right:1em}.legend i{display:inline-block;width:.8em;height:.8em;margin-right:.3em}
code{font-size:.92em;word-break:break-all}
"#;

/// Sorts a table by the clicked header (numbers by `data-v`).
const SCRIPT: &str = r#"
(function(){
  function key(td){var v=td.getAttribute('data-v');return v===null?td.textContent:parseFloat(v);}
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
  document.body.setAttribute('data-ready','1');
})();
"#;

const COLORS: [(&str, &str); 5] = [
    ("human", "#4e79a7"),
    ("declared_bot", "#59a14f"),
    ("undeclared_bot", "#f28e2b"),
    ("scanner", "#e15759"),
    ("monitor", "#9c755f"),
];

fn num(v: u64) -> String {
    format!("<td class=n data-v={v}>{v}</td>")
}

fn num_f(v: f64, shown: &str) -> String {
    format!("<td class=n data-v={v}>{}</td>", esc(shown))
}

/// A stacked bar chart of requests per hour and class.
fn hourly_chart(r: &Report) -> String {
    let hours = &r.hourly;
    if hours.is_empty() {
        return "<p class=muted>No requests.</p>".into();
    }
    let (w, h, pad) = (900.0_f64, 220.0_f64, 30.0_f64);
    let max = hours.iter().map(|x| x.requests).max().unwrap_or(1).max(1) as f64;
    let bw = (w - pad) / hours.len() as f64;
    let mut s = format!(
        "<svg xmlns='http://www.w3.org/2000/svg' role=img aria-label='Requests per hour by class' \
         width='{w}' height='{}' viewBox='0 0 {w} {}'>",
        h + 20.0,
        h + 20.0
    );
    let _ = write!(
        s,
        "<line x1='{pad}' y1='{h}' x2='{w}' y2='{h}' stroke='#999'/>\
         <text x='0' y='10' font-size='10'>{}</text><text x='0' y='{h}' font-size='10'>0</text>",
        max as u64
    );
    for (i, x) in hours.iter().enumerate() {
        let vals = [
            x.human,
            x.declared_bot,
            x.undeclared_bot,
            x.scanner,
            x.monitor,
        ];
        let mut y = h;
        for (k, v) in vals.iter().enumerate() {
            if *v == 0 {
                continue;
            }
            let bh = *v as f64 / max * (h - 10.0);
            y -= bh;
            let _ = write!(
                s,
                "<rect x='{:.2}' y='{:.2}' width='{:.2}' height='{:.2}' fill='{}'><title>{} {}: {}</title></rect>",
                pad + i as f64 * bw,
                y,
                (bw - 0.5).max(0.5),
                bh,
                COLORS[k].1,
                esc(&x.hour),
                COLORS[k].0,
                v
            );
        }
    }
    if let (Some(first), Some(last)) = (hours.first(), hours.last()) {
        let _ = write!(
            s,
            "<text x='{pad}' y='{}' font-size='10'>{}</text>\
             <text x='{w}' y='{}' font-size='10' text-anchor='end'>{}</text>",
            h + 14.0,
            esc(&first.hour),
            h + 14.0,
            esc(&last.hour)
        );
    }
    s.push_str("</svg>");
    s
}

/// Horizontal bars: requests per class.
fn class_chart(r: &Report) -> String {
    let total = r.site.requests.max(1) as f64;
    let mut s = String::from(
        "<svg xmlns='http://www.w3.org/2000/svg' role=img aria-label='Requests by class' width='600' height='110' viewBox='0 0 600 110'>",
    );
    for (i, (name, color)) in COLORS.iter().enumerate() {
        let v = r.site.classes.get(name).map_or(0, |c| c.requests);
        let bw = v as f64 / total * 400.0;
        let y = i as f64 * 21.0;
        let _ = write!(
            s,
            "<text x='0' y='{:.0}' font-size='12'>{name}</text>\
             <rect x='120' y='{:.0}' width='{bw:.2}' height='15' fill='{color}'/>\
             <text x='{:.0}' y='{:.0}' font-size='12'>{v} ({:.1}%)</text>",
            y + 13.0,
            y + 2.0,
            125.0 + bw,
            y + 13.0,
            v as f64 / total * 100.0
        );
    }
    s.push_str("</svg>");
    s
}

fn client_table(out: &mut String, title: &str, id: &str, l: &ClientList) {
    let _ = write!(
        out,
        "<h2 id={id}-h>{} <span class=muted>({} clients, {} requests{})</span></h2>",
        esc(title),
        l.total,
        l.requests,
        if (l.clients.len() as u64) < l.total {
            format!("; the {} largest shown", l.clients.len())
        } else {
            String::new()
        }
    );
    if l.clients.is_empty() {
        out.push_str("<p class=muted>None.</p>");
        return;
    }
    let _ = write!(
        out,
        "<table class=sortable id={id}><thead><tr><th>IP</th><th>Requests</th><th>Sessions</th>\
         <th>Pages</th><th>Bytes</th><th>User-Agent</th><th>Reasons</th><th>Samples</th>\
         <th>First seen</th><th>Last seen</th></tr></thead><tbody>"
    );
    for c in &l.clients {
        let reasons: Vec<String> = c
            .verification
            .iter()
            .map(|v| format!("<b>spoofed</b>: {}", esc(v)))
            .chain(
                c.reasons
                    .iter()
                    .map(|r| format!("<b>{}</b>: {}", esc(r.code), esc(&r.detail))),
            )
            .collect();
        let samples: Vec<String> = c
            .samples
            .iter()
            .map(|s| format!("<code>{}</code>", esc(s)))
            .collect();
        let _ = write!(
            out,
            "<tr><td>{}</td>{}{}{}{}<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&c.ip.to_string()),
            num(c.requests),
            num(c.sessions),
            num(c.pages),
            num_f(c.bytes as f64, &bytes(c.bytes)),
            esc(c.user_agent.as_deref().unwrap_or("-")),
            reasons.join("<br>"),
            samples.join("<br>"),
            esc(&c.first_seen),
            esc(&c.last_seen),
        );
    }
    out.push_str("</tbody></table>");
}

/// The whole page.
pub fn page(r: &Report) -> String {
    let mut o = String::with_capacity(64 * 1024);
    let _ = write!(
        o,
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8>\
         <meta name=viewport content='width=device-width,initial-scale=1'>\
         <title>botscope: robots in the access log</title><style>{STYLE}</style></head><body>"
    );
    o.push_str("<h1>Robots in the access log</h1>");
    let period = r
        .period
        .as_ref()
        .map(|p| format!("{} to {}", p.first, p.last))
        .unwrap_or_else(|| "no requests".into());
    let _ = write!(
        o,
        "<p>{} lines read, {} parsed, <span class={}>{} not understood</span>; {}.<br>\
         {} requests ({}) from {} clients at {} addresses. Robots made <b>{:.1}%</b> of the \
         requests and <b>{:.1}%</b> of the bytes.</p>",
        r.lines.total,
        r.lines.parsed,
        if r.lines.malformed > 0 {
            "bad"
        } else {
            "muted"
        },
        r.lines.malformed,
        esc(&period),
        r.site.requests,
        bytes(r.site.bytes),
        r.site.clients,
        r.site.unique_ips,
        r.site.robot_request_share * 100.0,
        r.site.robot_byte_share * 100.0
    );
    for i in &r.inputs {
        if let Some(e) = &i.error {
            let _ = write!(
                o,
                "<p class=bad>{}: {} (the report covers the {} lines before it)</p>",
                esc(&i.name),
                esc(e),
                i.lines
            );
        }
    }
    if !r.robots_txt.is_empty() {
        let v: Vec<String> = r
            .robots_txt
            .iter()
            .map(|v| {
                format!(
                    "<code>{}</code> from {}",
                    esc(&v.file),
                    esc(v.from.as_deref().unwrap_or("the beginning"))
                )
            })
            .collect();
        let _ = write!(
            o,
            "<p>robots.txt: {}. {} robot requests were disallowed.</p>",
            v.join("; "),
            r.site.disallowed_requests
        );
    }
    o.push_str("<h2>Requests per hour</h2><p class=legend>");
    for (name, color) in COLORS {
        let _ = write!(o, "<span><i style='background:{color}'></i>{name}</span>");
    }
    o.push_str("</p>");
    o.push_str(&hourly_chart(r));
    o.push_str("<h2>Requests by class</h2>");
    o.push_str(&class_chart(r));
    let _ = write!(
        o,
        "<h2>Robots <span class=muted>({})</span></h2>",
        r.robots.len()
    );
    o.push_str(
        "<table class=sortable id=robots><thead><tr><th>Robot</th><th>Category</th><th>Requests</th>\
         <th>Sessions</th><th>IPs</th><th>UAs</th><th>Bytes</th><th>robots.txt</th>\
         <th>Disallowed</th><th>Disallowed %</th><th>Crawl-delay</th><th>Delay breaches</th>\
         <th>Median gap (s)</th><th>2xx</th><th>3xx</th><th>4xx</th><th>5xx</th><th>Verified IPs</th>\
         <th>Spoofed IPs</th><th>Unverifiable IPs</th><th>First seen</th><th>Last seen</th>\
         <th>Top paths</th></tr></thead><tbody>",
    );
    for (name, b) in robots_by_requests(r) {
        let status = |k: &str| num(b.status.get(k).copied().unwrap_or(0));
        let top: Vec<String> = b
            .top_paths
            .iter()
            .take(5)
            .map(|p| format!("<code>{}</code> {}", esc(&p.path), p.requests))
            .collect();
        let _ = write!(
            o,
            "<tr><td>{}</td><td>{}</td>{}{}{}{}{}{}{}{}{}{}{}{}{}{}{}{}<td class={}>{}</td>{}<td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(name),
            esc(b.category.as_deref().unwrap_or("-")),
            num(b.requests),
            num(b.sessions),
            num(b.unique_ips),
            num(b.unique_uas),
            num_f(b.bytes as f64, &bytes(b.bytes)),
            num(b.robots_txt_fetches),
            num(b.disallowed_requests),
            num_f(
                b.disallowed_share,
                &format!("{:.1}", b.disallowed_share * 100.0)
            ),
            num_f(
                b.pace.crawl_delay_s.unwrap_or(-1.0),
                &b.pace
                    .crawl_delay_s
                    .map(|d| d.to_string())
                    .unwrap_or_else(|| "-".into())
            ),
            num(b.pace.crawl_delay_breaches),
            num_f(
                b.pace.median_gap_s.unwrap_or(-1.0),
                &b.pace
                    .median_gap_s
                    .map(|d| d.to_string())
                    .unwrap_or_else(|| "-".into())
            ),
            status("2xx"),
            status("3xx"),
            status("4xx"),
            status("5xx"),
            num(b.verification.verified.ips),
            if b.verification.spoofed.ips > 0 {
                "n bad"
            } else {
                "n"
            },
            b.verification.spoofed.ips,
            num(b.verification.unverifiable.ips),
            esc(&b.first_seen),
            esc(&b.last_seen),
            top.join("<br>"),
        );
    }
    o.push_str("</tbody></table>");
    client_table(&mut o, "Spoofed robots", "spoofed", &r.spoofed);
    client_table(
        &mut o,
        "Undeclared robots",
        "undeclared",
        &r.undeclared_bots,
    );
    client_table(&mut o, "Scanners", "scanners", &r.scanners);
    client_table(&mut o, "Monitors", "monitors", &r.monitors);
    o.push_str("<h2>Lines not understood</h2>");
    if r.malformed.is_empty() {
        o.push_str("<p class=muted>None.</p>");
    } else {
        o.push_str(
            "<table class=sortable id=malformed><thead><tr><th>Reason</th><th>Lines</th>\
             <th>First line numbers</th></tr></thead><tbody>",
        );
        for m in &r.malformed {
            let samples: Vec<String> = m.sample_lines.iter().map(u64::to_string).collect();
            let _ = write!(
                o,
                "<tr><td>{}</td>{}<td>{}</td></tr>",
                esc(m.reason),
                num(m.count),
                samples.join(" ")
            );
        }
        o.push_str("</tbody></table>");
    }
    let _ = writeln!(
        o,
        "<p class=muted>Schema {}; the JSON report (<code>--format json</code>) has every figure.</p>\
         <script>{SCRIPT}</script></body></html>",
        esc(r.schema)
    );
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes() {
        assert_eq!(
            esc("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
        assert_eq!(esc("a\u{1b}b"), "a\u{FFFD}b");
    }
}
