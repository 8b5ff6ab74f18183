//! The trends chart as inline SVG: per period, the share of sites whose
//! robots.txt keeps the robot (or the group) out fully, partially, or not
//! at all, stacked to 100%.

use maud::{Markup, html};

use botscope_index::{Counts, Trends};

const W: f64 = 720.0;
const H: f64 = 240.0;
const LEFT: f64 = 40.0;
const BOTTOM: f64 = 40.0;

/// The counts a chart shows for a period: one agent's, or the group's.
fn counts<'a>(t: &'a Trends, p: &'a botscope_index::Period) -> &'a Counts {
    match t.agents.as_slice() {
        [one] => p.agents.get(one).unwrap_or(&p.group),
        _ => &p.group,
    }
}

/// The stacked bars.
pub fn trends(t: &Trends) -> Markup {
    let n = t.periods.len().max(1) as f64;
    let slot = (W - LEFT) / n;
    let bar = (slot * 0.8).max(1.0);
    let plot = H - BOTTOM;
    // Label at most ~12 periods.
    let every = (t.periods.len() / 12).max(1);
    html! {
        svg.chart viewBox={ "0 0 " (W) " " (H) } role="img" aria-label="Restriction over time" {
            @for pct in [0u32, 25, 50, 75, 100] {
                @let y = plot - plot * f64::from(pct) / 100.0;
                line.grid x1=(LEFT) x2=(W) y1=(format!("{y:.1}")) y2=(format!("{y:.1}")) {}
                text.axis x=(LEFT - 4.0) y=(format!("{:.1}", y + 4.0)) text-anchor="end" { (pct) "%" }
            }
            @for (i, p) in t.periods.iter().enumerate() {
                @let c = counts(t, p);
                @let total = (c.full + c.partial + c.none).max(1) as f64;
                @let x = LEFT + slot * i as f64 + (slot - bar) / 2.0;
                @let hf = plot * c.full as f64 / total;
                @let hp = plot * c.partial as f64 / total;
                @let hn = plot * c.none as f64 / total;
                g.period data-period=(p.period) {
                    title { (p.period) ": " (c.full) " full, " (c.partial) " partial, " (c.none) " none of " (p.sites) " sites" }
                    rect.full x=(format!("{x:.1}")) y=(format!("{:.1}", plot - hf)) width=(format!("{bar:.1}")) height=(format!("{hf:.1}")) {}
                    rect.partial x=(format!("{x:.1}")) y=(format!("{:.1}", plot - hf - hp)) width=(format!("{bar:.1}")) height=(format!("{hp:.1}")) {}
                    rect.none x=(format!("{x:.1}")) y=(format!("{:.1}", plot - hf - hp - hn)) width=(format!("{bar:.1}")) height=(format!("{hn:.1}")) {}
                    @if i % every == 0 {
                        text.axis x=(format!("{:.1}", x + bar / 2.0)) y=(format!("{:.1}", plot + 16.0)) text-anchor="middle" { (p.period) }
                    }
                }
            }
        }
        p.legend {
            span { i.full {} "full (Disallow: /)" }
            span { i.partial {} "partial" }
            span { i.none {} "none" }
        }
    }
}
