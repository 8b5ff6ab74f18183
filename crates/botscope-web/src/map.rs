//! A world map as inline SVG: Natural Earth's 1:110m land (world-atlas's
//! TopoJSON, vendored) in an equirectangular projection, made once on the
//! server, with one mark per located address (the seed's figure 4).

use std::fmt::Write;
use std::sync::OnceLock;

use maud::{Markup, html};
use serde::Deserialize;

const LAND: &str = include_str!("../vendor/world-atlas-2.0.2/land-110m.json");

/// The map's width in SVG units (one per degree of longitude, times 2).
pub const WIDTH: f64 = 720.0;
/// Its height: latitudes 84°N to 60°S (no land south of it but
/// Antarctica, which is cut).
pub const HEIGHT: f64 = 288.0;
const NORTH: f64 = 84.0;

#[derive(Deserialize)]
struct Topology {
    transform: Transform,
    arcs: Vec<Vec<[i64; 2]>>,
    objects: Objects,
}

#[derive(Deserialize)]
struct Transform {
    scale: [f64; 2],
    translate: [f64; 2],
}

#[derive(Deserialize)]
struct Objects {
    land: Collection,
}

#[derive(Deserialize)]
struct Collection {
    geometries: Vec<Geometry>,
}

#[derive(Deserialize)]
#[serde(tag = "type")]
enum Geometry {
    Polygon { arcs: Vec<Vec<i64>> },
    MultiPolygon { arcs: Vec<Vec<Vec<i64>>> },
}

/// `(x, y)` on the map of a longitude and latitude.
pub fn project(lon: f64, lat: f64) -> (f64, f64) {
    ((lon + 180.0) * 2.0, (NORTH - lat) * 2.0)
}

/// The SVG path of the land (computed once).
pub fn land_path() -> &'static str {
    static PATH: OnceLock<String> = OnceLock::new();
    PATH.get_or_init(|| decode(LAND).unwrap_or_default())
}

/// TopoJSON → one SVG path: arcs are delta-encoded in quantized units;
/// a negative index `~i` walks arc `i` backwards.
fn decode(json: &str) -> Result<String, serde_json::Error> {
    let t: Topology = serde_json::from_str(json)?;
    let arcs: Vec<Vec<(f64, f64)>> = t
        .arcs
        .iter()
        .map(|arc| {
            let (mut x, mut y) = (0i64, 0i64);
            arc.iter()
                .map(|[dx, dy]| {
                    x += dx;
                    y += dy;
                    let lon = x as f64 * t.transform.scale[0] + t.transform.translate[0];
                    let lat = y as f64 * t.transform.scale[1] + t.transform.translate[1];
                    project(lon, lat)
                })
                .collect()
        })
        .collect();
    let mut out = String::new();
    let mut ring = |indices: &[i64]| {
        // Antarctica (wholly south of the map) is left out.
        let south = indices.iter().all(|&i| {
            let idx = if i < 0 { !i } else { i };
            usize::try_from(idx)
                .ok()
                .and_then(|k| arcs.get(k))
                .is_none_or(|a| a.iter().all(|p| p.1 > HEIGHT))
        });
        if south {
            return;
        }
        let mut first = true;
        let mut last_x = 0.0f64;
        for &i in indices {
            let (idx, rev) = if i < 0 { (!i, true) } else { (i, false) };
            let Some(arc) = usize::try_from(idx).ok().and_then(|k| arcs.get(k)) else {
                continue;
            };
            let pts: Box<dyn Iterator<Item = &(f64, f64)>> = if rev {
                Box::new(arc.iter().rev())
            } else {
                Box::new(arc.iter())
            };
            for (k, (x, y)) in pts.enumerate() {
                // Arcs share their end points: skip the repeated one.
                if k == 0 && !first {
                    continue;
                }
                let y = y.clamp(0.0, HEIGHT + 40.0);
                // A ring that crosses the antimeridian jumps across the
                // map: the jump is not drawn.
                let jump = !first && (x - last_x).abs() > WIDTH / 2.0;
                let _ = write!(
                    out,
                    "{}{x:.1},{y:.1}",
                    if first || jump { 'M' } else { 'L' }
                );
                first = false;
                last_x = *x;
            }
        }
        if !first {
            out.push('Z');
        }
    };
    for g in &t.objects.land.geometries {
        match g {
            Geometry::Polygon { arcs } => arcs.iter().for_each(|r| ring(r)),
            Geometry::MultiPolygon { arcs } => arcs.iter().flatten().for_each(|r| ring(r)),
        }
    }
    Ok(out)
}

/// One mark: where, its class (colour) and its title.
pub struct Mark {
    /// Longitude.
    pub lon: f64,
    /// Latitude.
    pub lat: f64,
    /// `verified`, `spoofed-disobeying`, `spoofed`, `other`.
    pub class: &'static str,
    /// The tooltip.
    pub title: String,
}

/// The map in words, for a screen reader: how many marks of each class,
/// and where the numbers are.
fn words(marks: &[Mark]) -> String {
    let mut parts = Vec::new();
    for (class, label) in [
        ("verified", "verified"),
        ("spoofed-disobeying", "spoofed and disobeying robots.txt"),
        ("spoofed", "spoofed"),
        ("other", "unverifiable"),
    ] {
        let n = marks.iter().filter(|m| m.class == class).count();
        if n > 0 {
            parts.push(format!("{n} {label}"));
        }
    }
    format!(
        "World map of {}: {}; the tables below list the addresses with their network and country",
        botscope_text::count(marks.len() as u64, "located address", "located addresses"),
        parts.join(", ")
    )
}

/// The map with its marks.
pub fn map(marks: &[Mark]) -> Markup {
    html! {
        svg.map viewBox={ "0 0 " (WIDTH) " " (HEIGHT) } role="img" aria-label=(words(marks)) {
            rect.sea x="0" y="0" width=(WIDTH) height=(HEIGHT) {}
            path.land d=(land_path()) {}
            @for m in marks {
                @let (x, y) = project(m.lon, m.lat);
                circle class={ "mark " (m.class) } cx=(format!("{x:.1}")) cy=(format!("{y:.1}")) r="4" {
                    title { (crate::layout::Text(&m.title)) }
                }
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_land_is_drawn() {
        let p = land_path();
        // Over a hundred rings of land at 1:110m, each closed (a ring
        // across the antimeridian starts again on the other side).
        let rings = p.matches('Z').count();
        assert!(rings > 100, "{rings} rings");
        assert!(p.matches('M').count() >= rings);
        assert!(p.len() > 20_000);
        // Nothing is drawn across the whole map.
        for sub in p.split('M').filter(|s| !s.is_empty()) {
            let xs: Vec<f64> = sub
                .trim_end_matches('Z')
                .split('L')
                .filter_map(|pt| pt.split(',').next()?.parse().ok())
                .collect();
            for w in xs.windows(2) {
                assert!((w[0] - w[1]).abs() <= WIDTH / 2.0, "{sub}");
            }
        }
    }

    #[test]
    fn the_map_in_words_counts_each_class() {
        let m = |class| Mark {
            lon: 0.0,
            lat: 0.0,
            class,
            title: String::new(),
        };
        let w = words(&[m("verified"), m("verified"), m("spoofed")]);
        assert!(
            w.starts_with("World map of 3 located addresses: 2 verified, 1 spoofed;"),
            "{w}"
        );
        assert!(words(&[m("other")]).contains("1 located address: 1 unverifiable"));
    }

    #[test]
    fn projection() {
        assert_eq!(project(-180.0, NORTH), (0.0, 0.0));
        assert_eq!(project(0.0, 0.0), (360.0, 168.0));
        assert_eq!(project(180.0, -60.0), (WIDTH, HEIGHT));
    }
}
