//! The trends chart as inline SVG: per period, the share of sites whose
//! robots.txt keeps the robot (or the group) out fully, partially, or not
//! at all, stacked to 100%.

use maud::{Markup, html};

use botscope_index::{Counts, Fractions, Trends};

const W: f64 = 720.0;
const H: f64 = 240.0;
const LEFT: f64 = 40.0;
const RIGHT: f64 = 8.0;
/// Room above the plot for the top label (`100%`).
const TOP: f64 = 10.0;
const BOTTOM: f64 = 40.0;
/// The width an axis label takes per character (11 px text), generously.
const CHAR: f64 = 7.0;

/// The counts a chart shows for a period: one agent's, or the group's.
fn counts<'a>(t: &'a Trends, p: &'a botscope_index::Period) -> &'a Counts {
    match t.agents.as_slice() {
        [one] => p.agents.get(one).unwrap_or(&p.group),
        _ => &p.group,
    }
}

/// The shares the chart shows for a period, as the command prints them:
/// of the sites with a robots.txt, and of every site counted.
fn shares(t: &Trends, p: &botscope_index::Period) -> (Fractions, Fractions) {
    let pick = |s: &botscope_index::ShareSet| match t.agents.as_slice() {
        [one] => s.agents.get(one).copied().unwrap_or(s.group),
        _ => s.group,
    };
    (pick(&p.of_sites), pick(&p.of_all))
}

/// A fraction as the command prints it (`11.7%`).
fn pct(f: f64) -> String {
    format!("{:.1}%", f * 100.0)
}

/// Every how many periods a label is written so that labels never meet:
/// the widest label plus a gap fits in that many slots.
pub fn label_every(labels: &[&str], slot: f64) -> usize {
    let widest = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0) as f64 * CHAR;
    (((widest + 2.0 * CHAR) / slot.max(0.1)).ceil() as usize).max(1)
}

/// The chart in words, for a screen reader (the picture's text
/// alternative): each period's shares.
fn words(t: &Trends) -> String {
    let mut s =
        String::from("Restriction over time, share of the sites with a robots.txt per period");
    for p in &t.periods {
        let (f, a) = shares(t, p);
        s.push_str(&format!(
            "; {}: {} full, {} partial, {} none of {} sites with a robots.txt",
            p.period,
            pct(f.full),
            pct(f.partial),
            pct(f.none),
            p.sites
        ));
        if p.denominator != p.sites {
            s.push_str(&format!(" ({} full of all {})", pct(a.full), p.denominator));
        }
    }
    s
}

/// The stacked bars, their legend, and their numbers as a table.
pub fn trends(t: &Trends) -> Markup {
    let n = t.periods.len().max(1) as f64;
    let slot = (W - LEFT - RIGHT) / n;
    let bar = (slot * 0.8).max(1.0);
    let plot = H - BOTTOM - TOP;
    let labels: Vec<&str> = t.periods.iter().map(|p| p.period.as_str()).collect();
    let every = label_every(&labels, slot);
    // A label is centred under its bar, but kept inside the picture.
    let label_x = |x: f64, label: &str| {
        let half = label.chars().count() as f64 * CHAR / 2.0;
        x.clamp(LEFT.max(half), W - half)
    };
    // On a phone the chart scrolls sideways rather than shrink its labels
    // below reading size.
    html! {
        div.wide tabindex="0" { svg.chart viewBox={ "0 0 " (W) " " (H) } role="img" aria-label=(words(t)) {
            @for pct in [0u32, 25, 50, 75, 100] {
                @let y = TOP + plot - plot * f64::from(pct) / 100.0;
                line.grid x1=(LEFT) x2=(W - RIGHT) y1=(format!("{y:.1}")) y2=(format!("{y:.1}")) {}
                text.axis x=(LEFT - 4.0) y=(format!("{:.1}", y + 4.0)) text-anchor="end" { (pct) "%" }
            }
            @for (i, p) in t.periods.iter().enumerate() {
                @let c = counts(t, p);
                @let total = (c.full + c.partial + c.none).max(1) as f64;
                @let x = LEFT + slot * i as f64 + (slot - bar) / 2.0;
                @let hf = plot * c.full as f64 / total;
                @let hp = plot * c.partial as f64 / total;
                @let hn = plot * c.none as f64 / total;
                @let base = TOP + plot;
                g.period data-period=(p.period) {
                    title { (p.period) ": " (c.full) " full, " (c.partial) " partial, " (c.none) " none of " (p.sites) " sites" }
                    rect.full x=(format!("{x:.1}")) y=(format!("{:.1}", base - hf)) width=(format!("{bar:.1}")) height=(format!("{hf:.1}")) {}
                    rect.partial x=(format!("{x:.1}")) y=(format!("{:.1}", base - hf - hp)) width=(format!("{bar:.1}")) height=(format!("{hp:.1}")) {}
                    rect.none x=(format!("{x:.1}")) y=(format!("{:.1}", base - hf - hp - hn)) width=(format!("{bar:.1}")) height=(format!("{hn:.1}")) {}
                    @if i % every == 0 {
                        text.axis x=(format!("{:.1}", label_x(x + bar / 2.0, &p.period))) y=(format!("{:.1}", base + 20.0)) text-anchor="middle" { (p.period) }
                    }
                }
            }
        } }
        p.legend {
            span { i.full {} "full (Disallow: /)" }
            span { i.partial {} "partial" }
            span { i.none {} "none" }
        }
        // The chart's numbers as a table, for a screen reader and for
        // whoever wants the figures.
        details.numbers {
            summary { "The chart's numbers" }
            p.muted { "Each share: of the sites with a robots.txt · of all sites counted, those without one too." }
            div.wide tabindex="0" { table.trends {
                caption { "Sites per period, by class" }
                thead { tr { th scope="col" { "Period" } th scope="col" { "Sites" } th scope="col" { "Without" } th scope="col" { "Full" } th scope="col" { "Partial" } th scope="col" { "None" } } }
                tbody {
                    @for p in &t.periods {
                        @let c = counts(t, p);
                        @let (f, a) = shares(t, p);
                        tr {
                            th scope="row" { (p.period) }
                            td.n { (p.sites) }
                            td.n { @if let Some(n) = p.no_robots_txt { (n) } @else { "–" } }
                            @for (v, of_sites, of_all) in [(c.full, f.full, a.full), (c.partial, f.partial, a.partial), (c.none, f.none, a.none)] {
                                td.n { (v) " " span.muted { "(" (pct(of_sites)) @if p.denominator != p.sites { " · " (pct(of_all)) } ")" } }
                            }
                        }
                    }
                }
            } }
        }
    }
}

/// The terms the files state, per period: the share of the sites with a
/// robots.txt naming an RSL licence, stating Content-Usage, stating
/// Content-Signal (`trends --directive`), and each statement in the last
/// period.
pub fn terms_stated(t: &Trends) -> Markup {
    use botscope_index::{Directive, directives};
    let kinds = [
        (Directive::License, "RSL licence"),
        (Directive::ContentUsage, "Content-Usage"),
        (Directive::ContentSignal, "Content-Signal"),
    ];
    let tables: Vec<_> = kinds.iter().map(|(d, _)| directives(t, *d)).collect();
    let cell = |r: &botscope_index::DirectiveRow| {
        html! {
            td.n title={ (r.sites) " of " (r.of) " sites" } {
                (format!("{:.1}%", r.share))
                @if let Some(c) = r.change { " " span.muted { (format!("({c:+.1})")) } }
            }
        }
    };
    let last = t.periods.last().map(|p| p.period.as_str());
    let statements: Vec<&botscope_index::DirectiveRow> = tables[1..]
        .iter()
        .flat_map(|d| d.rows.iter())
        .filter(|r| Some(r.period.as_str()) == last && r.value != "any" && r.sites > 0)
        .collect();
    let stated = tables.iter().any(|d| d.rows.iter().any(|r| r.sites > 0));
    let latest: Vec<&botscope_index::DirectiveRow> = tables
        .iter()
        .filter_map(|d| {
            d.rows
                .iter()
                .find(|r| Some(r.period.as_str()) == last && r.value == "any")
        })
        .collect();
    html! {
        h2 { "Terms stated over time" }
        @if !stated {
            p { "No file of the set names an RSL licence (" code { "License:" } ") or states AI usage preferences (" code { "Content-Usage" } ", " code { "Content-Signal" } ") in any period." }
        } @else {
        p { "Share of the sites with a robots.txt whose file names an RSL licence (" code { "License:" } "), states AI usage preferences (" code { "Content-Usage" } ", IETF aipref) or Cloudflare's " code { "Content-Signal" } ", per " (t.by) "."
            @if let Some(last) = last {
                " In " (last) ": "
                @for (i, ((_, name), r)) in kinds.iter().zip(&latest).enumerate() {
                    @if i > 0 { " · " }
                    (name) " " b { (format!("{:.1}%", r.share)) }
                }
                "."
            }
        }
        details.numbers { summary { "Every period" } p.muted { "In brackets, the change since the period before, in points." }
        div.wide tabindex="0" { table.terms id="terms" {
            thead { tr { th { "Period" } @for (_, name) in &kinds { th { (name) } } } }
            tbody {
                @for p in &t.periods {
                    tr {
                        td { (p.period) }
                        @for d in &tables {
                            @if let Some(r) = d.rows.iter().find(|r| r.period == p.period && r.value == "any") { (cell(r)) } @else { td {} }
                        }
                    }
                }
            }
        } } }
        @if let (Some(last), false) = (last, statements.is_empty()) {
            p.muted { "Statements in " (last) ": "
                @for (i, r) in statements.iter().enumerate() {
                    @if i > 0 { " · " }
                    code { (crate::layout::Text(&r.value)) } " " (format!("{:.1}%", r.share))
                }
            }
        }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found: monthly labels ran into each other (`2024-012024-02…`).
    #[test]
    fn labels_are_thinned_to_never_meet() {
        let months: Vec<String> = (0..36)
            .map(|i| format!("{}-{:02}", 2023 + i / 12, i % 12 + 1))
            .collect();
        let labels: Vec<&str> = months.iter().map(String::as_str).collect();
        let slot = (W - LEFT - RIGHT) / labels.len() as f64;
        let every = label_every(&labels, slot);
        assert!(every as f64 * slot >= 7.0 * CHAR, "{every} × {slot}");
        assert_eq!(label_every(&["2024"], 600.0), 1);
    }
}
