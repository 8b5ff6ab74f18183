//! The cost budget of one file's analysis: bias (both semantics) and
//! every query stay within counted work bounded by the file's size,
//! whatever its shape. The input is read two ways: as a robots.txt, and
//! as a recipe that builds a pathological one (many agents sharing a
//! token, many groups, many rules, long patterns of `*`, duplication).
#![no_main]

use botscope_index::{BIAS_WORK_CAP, Detail, bias_with};
use botscope_robotstxt::{Matcher, ParseOptions, Robots, Semantics};
use libfuzzer_sys::fuzz_target;

/// A file built from the first bytes of the input.
fn recipe(data: &[u8]) -> Vec<u8> {
    let at = |i: usize| usize::from(data.get(i).copied().unwrap_or(0));
    let agents = at(0) * 16;
    let groups = at(1) * 4 + 1;
    let rules = at(2) * 8;
    let stars = at(3) % 64;
    let dup = at(4) % 8 + 1;
    let shared = at(5) % 2 == 0;
    let mut b = Vec::new();
    for g in 0..groups {
        for a in 0..agents / groups {
            let name = if shared {
                format!("b{a}")
            } else {
                format!(
                    "x{}{}",
                    char::from(b'a' + (g % 26) as u8),
                    char::from(b'a' + (a % 26) as u8)
                )
            };
            b.extend_from_slice(format!("User-agent: {name}\n").as_bytes());
        }
        for r in 0..rules / groups {
            for _ in 0..dup {
                b.extend_from_slice(b"Disallow: /");
                for _ in 0..stars {
                    b.extend_from_slice(b"a*");
                }
                b.extend_from_slice(format!("p{r}\n").as_bytes());
            }
        }
        if g % 3 == 0 {
            b.extend_from_slice(b"User-agent: *\nAllow: /p1\n");
        }
        if b.len() > 512_000 {
            break;
        }
    }
    b
}

fuzz_target!(|data: &[u8]| {
    for body in [data.to_vec(), recipe(data)] {
        let opts = ParseOptions::default();
        let robots = Robots::parse_with(&body, &opts);
        for sem in [Semantics::Google, Semantics::Draft1996] {
            let m = Matcher::compile(&body, sem, &opts);
            let b = bias_with(&robots, &m, Detail::Summary, BIAS_WORK_CAP);
            // Past the cap by at most one path's matching or one index.
            let slack = 4 * (body.len() as u64 + 64) * 64;
            assert!(
                b.work <= BIAS_WORK_CAP + slack,
                "{} units for {} bytes",
                b.work,
                body.len()
            );
            if b.computed() {
                for r in &b.robots {
                    assert!(r.allowed <= b.dir.len());
                }
            } else {
                assert!(b.robots.is_empty());
            }
            for agent in ["b", "b1", "xaa", "Googlebot"] {
                let mut work = 0;
                let _ = m.check_counted(agent, "/p1/aaaa", &mut work);
                assert!(
                    work <= (body.len() as u64 + 64) * 4,
                    "{work} units for one query on {} bytes",
                    body.len()
                );
            }
        }
    }
});
