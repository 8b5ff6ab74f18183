//! Bias of a file towards each robot it names (Sun et al., 2007, as fixed
//! in DESIGN.md), and favourability over a set of files.
//!
//! DIR is the set of distinct non-empty Allow and Disallow values of the
//! whole file, each taken as a URL path (a trailing `$` dropped, `*` kept as
//! a character). D_u is the part of DIR the universal robot may fetch (all
//! of DIR when the file has no `*` group), D_r the part robot r may fetch,
//! and bias(r, f) = |D_r| − |D_u|. The named robots of a file are its
//! User-agent values other than `*`, lower-cased and trimmed, each once; the
//! matcher is asked with the token by which that User-agent line is matched
//! (under Google's rules `MJ12bot` is matched as `MJ`), so that a group
//! always applies to the robot it names.
//!
//! Cost: robots whose User-agent lines select the same groups get the same
//! answers, so each path of DIR is matched once per distinct selection, not
//! once per robot. The work (rules looked at, bytes compared, cells of the
//! decision table) is counted; past [`BIAS_WORK_CAP`] units the table is
//! not computed and says so ([`FileBias::too_complex`]), whatever the file.

use std::collections::{BTreeMap, HashMap, HashSet};

use botscope_robotstxt::{Matcher, ParseOptions, Robots, Selection, Semantics, Verdict};
use serde::Serialize;

/// How a file treats a robot against the universal robot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Tilt {
    /// The robot may fetch more of DIR than the universal robot.
    Favored,
    /// Less.
    Disfavored,
    /// As much.
    Nobias,
}

impl Tilt {
    /// `favored`, `disfavored` or `nobias`.
    pub fn as_str(self) -> &'static str {
        match self {
            Tilt::Favored => "favored",
            Tilt::Disfavored => "disfavored",
            Tilt::Nobias => "nobias",
        }
    }

    /// The verdict of a bias: above, below or at zero.
    pub fn of(bias: i64) -> Tilt {
        match bias.signum() {
            1 => Tilt::Favored,
            -1 => Tilt::Disfavored,
            _ => Tilt::Nobias,
        }
    }
}

/// One named robot of a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RobotBias {
    /// The User-agent value, lower-cased and trimmed.
    pub robot: String,
    /// |D_r|: the paths of DIR it may fetch.
    pub allowed: usize,
    /// |D_r| − |D_u|.
    pub bias: i64,
    /// The sign of the bias, in words.
    pub verdict: Tilt,
}

/// One path of DIR for one robot: may it fetch it, and which line decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Decision {
    /// The path may be fetched.
    pub allowed: bool,
    /// The deciding line, if a rule matched.
    pub line: Option<u32>,
}

impl Decision {
    fn of(v: &Verdict<'_>) -> Decision {
        Decision {
            allowed: v.allowed,
            line: v.rule.as_ref().map(|r| r.line),
        }
    }
}

/// Who may fetch one path of DIR.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PathDecisions {
    /// The path.
    pub path: String,
    /// The universal robot's decision.
    pub universal: Decision,
    /// Each named robot's, in the order of [`FileBias::robots`].
    pub robots: Vec<Decision>,
}

/// Units of counted work one file's bias may take (rules looked at, 32-byte
/// blocks compared, decision cells filled; [`Matcher::check_selected_counted`]):
/// about a tenth of a second on one core. Every real file measured needs
/// far less (BENCHMARKS.md).
pub const BIAS_WORK_CAP: u64 = 10_000_000;

/// Why a file's bias was not computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TooComplex {
    /// The paths of DIR.
    pub paths: usize,
    /// The named robots.
    pub robots: usize,
    /// Distinct group selections among them (and the universal robot's).
    pub selections: usize,
    /// The budget that ran out, in units of counted work.
    pub budget: u64,
}

impl TooComplex {
    /// The diagnostic, for people.
    pub fn message(&self) -> String {
        format!(
            "too-complex: bias not computed ({} paths × {} robots in {} distinct rule sets exceed the budget of {} rule evaluations per file)",
            self.paths, self.robots, self.selections, self.budget
        )
    }
}

/// The bias table of one file ("Analyze it!").
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FileBias {
    /// The site, when the caller knows it.
    pub site: Option<String>,
    /// The semantics the file was read with.
    pub semantics: Semantics,
    /// DIR, in file order.
    pub dir: Vec<String>,
    /// |D_u|.
    pub universal_allowed: usize,
    /// The named robots, in file order.
    pub robots: Vec<RobotBias>,
    /// Per path of DIR, each robot's decision and the deciding line.
    pub decisions: Vec<PathDecisions>,
    /// Paths of DIR whose row is left out of `decisions` (past
    /// [`TABLE_CELLS`], or all of them in a [`Detail::Summary`]); the
    /// robots' counts include them.
    pub decisions_omitted: usize,
    /// Units of counted work spent (at most the budget and one path's
    /// matching past it).
    #[serde(skip)]
    pub work: u64,
    /// Set when the file needed more work than [`BIAS_WORK_CAP`]: then
    /// `robots` and `decisions` are empty and no bias is claimed.
    pub too_complex: Option<TooComplex>,
}

impl FileBias {
    /// The bias was computed (the file was within the budget).
    pub fn computed(&self) -> bool {
        self.too_complex.is_none()
    }
}

/// The bias table of a robots.txt body under `semantics`.
pub fn bias(body: &[u8], semantics: Semantics) -> FileBias {
    let opts = ParseOptions::default();
    let robots = Robots::parse_with(body, &opts);
    let matcher = Matcher::compile(body, semantics, &opts);
    bias_of(&robots, &matcher)
}

/// The bias table of a parsed file and its compiled matcher (compiled from
/// the same bytes).
pub fn bias_of(robots: &Robots, matcher: &Matcher) -> FileBias {
    bias_with(robots, matcher, Detail::Table, BIAS_WORK_CAP)
}

/// [`bias_of`] keeping `detail`, within `cap` units of counted work.
pub fn bias_with(robots: &Robots, matcher: &Matcher, detail: Detail, cap: u64) -> FileBias {
    bias_and_classes(robots, matcher, detail, cap).0
}

/// [`bias_with`], and the restriction class of each selection it asked
/// about (`/` asked too), for [`crate::Classes`] to reuse.
pub(crate) fn bias_and_classes(
    robots: &Robots,
    matcher: &Matcher,
    detail: Detail,
    cap: u64,
) -> (FileBias, HashMap<Selection, crate::Restriction>) {
    let semantics = matcher.semantics();
    let dir = dir_of(robots);
    // The named robots, once each, with the name the matcher is asked.
    let mut named: Vec<(String, String)> = Vec::new();
    let mut names: HashSet<String> = HashSet::new();
    for ua in robots.groups.iter().flat_map(|g| g.user_agents.iter()) {
        let robot = ua.value.trim().to_ascii_lowercase();
        if ua.global || robot.is_empty() || !names.insert(robot.clone()) {
            continue;
        }
        let ask = match semantics {
            Semantics::Google if !ua.token.is_empty() => ua.token.clone(),
            _ => ua.value.trim().to_owned(),
        };
        named.push((robot, ask));
    }
    let universal = universal_name(robots, semantics);
    let mut classes = HashMap::new();
    let b = bias_within(
        semantics,
        dir,
        named,
        &universal,
        matcher,
        cap,
        detail,
        &mut classes,
    );
    (b, classes)
}

/// DIR: every distinct non-empty Allow and Disallow value, as written (a
/// trailing `$` dropped), with the path the matcher is asked for.
pub(crate) fn dir_of(robots: &Robots) -> Vec<(String, Vec<u8>)> {
    let mut dir: Vec<(String, Vec<u8>)> = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    for r in robots.rules() {
        let shown = r.pattern.trim();
        let shown = shown.strip_suffix('$').unwrap_or(shown);
        if shown.is_empty() || !seen.insert(shown.to_owned()) {
            continue;
        }
        let normalized = r.normalized.trim();
        let normalized = normalized.strip_suffix('$').unwrap_or(normalized);
        let mut path = Vec::with_capacity(normalized.len() + 1);
        if !normalized.starts_with('/') {
            path.push(b'/');
        }
        path.extend_from_slice(normalized.as_bytes());
        dir.push((shown.to_owned(), path));
    }
    dir
}

/// How much of the table to keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detail {
    /// Per path, each robot's decision (at most [`TABLE_CELLS`] cells).
    Table,
    /// Only each robot's bias (what the index stores).
    Summary,
}

/// Decision cells a table keeps at most (8 bytes each); the paths past
/// them are counted in the bias and left out of
/// [`FileBias::decisions`] ([`FileBias::decisions_omitted`] says how many).
pub const TABLE_CELLS: usize = 1 << 20;

/// The table from DIR and the named robots, matching each path once per
/// distinct selection of groups, within `cap` units of counted work.
#[allow(clippy::too_many_arguments)]
fn bias_within(
    semantics: Semantics,
    dir: Vec<(String, Vec<u8>)>,
    named: Vec<(String, String)>,
    universal: &str,
    matcher: &Matcher,
    cap: u64,
    detail: Detail,
    classes: &mut HashMap<Selection, crate::Restriction>,
) -> FileBias {
    // Column 0 is the universal robot; robots sharing a selection share
    // a column.
    let mut work = 0u64;
    let mut columns: Vec<Selection> = vec![matcher.select_counted(universal, &mut work)];
    let mut column_of: HashMap<Selection, usize> = HashMap::new();
    column_of.insert(columns[0].clone(), 0);
    // Each distinct name is asked once: under Google's rules thousands of
    // lines may share one token, whose selection (every group naming it)
    // would otherwise be made, and held, once per line.
    let mut ask_ix: HashMap<&str, usize> = HashMap::new();
    let mut asks: Vec<&str> = Vec::new();
    let robot_ask: Vec<usize> = named
        .iter()
        .map(|(_, ask)| {
            *ask_ix.entry(ask.as_str()).or_insert_with(|| {
                asks.push(ask.as_str());
                asks.len() - 1
            })
        })
        .collect();
    let ask_column: Vec<usize> = matcher
        .select_many(&asks, &mut work)
        .into_iter()
        .map(|sel| {
            *column_of.entry(sel).or_insert_with_key(|sel| {
                columns.push(sel.clone());
                columns.len() - 1
            })
        })
        .collect();
    let robot_column: Vec<usize> = robot_ask.iter().map(|&a| ask_column[a]).collect();
    let rows_kept = match detail {
        Detail::Summary => 0,
        Detail::Table => (TABLE_CELLS / (named.len() + 1)).max(1).min(dir.len()),
    };
    let mut column_allowed = vec![0usize; columns.len()];
    let not_computed = |dir: &[(String, Vec<u8>)], work: u64| FileBias {
        site: None,
        semantics,
        dir: dir.iter().map(|(shown, _)| shown.clone()).collect(),
        universal_allowed: 0,
        robots: Vec::new(),
        decisions: Vec::new(),
        decisions_omitted: 0,
        work,
        too_complex: Some(TooComplex {
            paths: dir.len(),
            robots: named.len(),
            selections: columns.len(),
            budget: cap,
        }),
    };
    // Column by column: one selection's rules indexed once, every path
    // asked of it; the cells of the rows kept.
    let mut cells: Vec<Decision> = Vec::with_capacity(rows_kept * columns.len());
    for (c, sel) in columns.iter().enumerate() {
        if work > cap {
            return not_computed(&dir, work);
        }
        let ix = matcher.index_selection(sel, &mut work);
        let root_allowed = matcher.check_indexed(&ix, b"/", &mut work).allowed;
        for (i, (_, path)) in dir.iter().enumerate() {
            let d = Decision::of(&matcher.check_indexed(&ix, path, &mut work));
            column_allowed[c] += usize::from(d.allowed);
            if i < rows_kept {
                cells.push(d);
            }
            if work > cap {
                return not_computed(&dir, work);
            }
        }
        classes.insert(
            sel.clone(),
            if !root_allowed {
                crate::Restriction::Full
            } else if column_allowed[c] < dir.len() {
                crate::Restriction::Partial
            } else {
                crate::Restriction::None
            },
        );
    }
    let decisions: Vec<PathDecisions> = dir
        .iter()
        .take(rows_kept)
        .enumerate()
        .map(|(i, (shown, _))| PathDecisions {
            path: shown.clone(),
            universal: cells[i],
            robots: robot_column
                .iter()
                .map(|&c| cells[c * rows_kept + i])
                .collect(),
        })
        .collect();
    let universal_allowed = column_allowed[0];
    let robots = named
        .into_iter()
        .zip(&robot_column)
        .map(|((robot, _), &c)| {
            let allowed = column_allowed[c];
            let bias = allowed as i64 - universal_allowed as i64;
            RobotBias {
                robot,
                allowed,
                bias,
                verdict: Tilt::of(bias),
            }
        })
        .collect();
    let decisions_omitted = match detail {
        Detail::Table => dir.len() - decisions.len(),
        Detail::Summary => 0,
    };
    FileBias {
        site: None,
        semantics,
        dir: dir.into_iter().map(|(shown, _)| shown).collect(),
        universal_allowed,
        robots,
        decisions,
        decisions_omitted,
        work,
        too_complex: None,
    }
}

/// A robot name that no group of the file names: under Google's rules no
/// group's token equals it; under the 1996 draft no User-agent value is a
/// substring of it. It is a run of one letter that no value consists of.
fn universal_name(robots: &Robots, semantics: Semantics) -> String {
    let values: Vec<String> = robots
        .groups
        .iter()
        .flat_map(|g| g.user_agents.iter())
        .filter(|u| !u.global)
        .map(|u| u.value.trim().to_ascii_lowercase())
        .collect();
    let tokens: Vec<String> = robots
        .groups
        .iter()
        .flat_map(|g| g.user_agents.iter())
        .map(|u| u.token.to_ascii_lowercase())
        .collect();
    for c in "qxzjkvwybfghmp".chars() {
        let name: String = std::iter::repeat_n(c, 8).collect();
        let free = match semantics {
            Semantics::Google => !tokens.contains(&name),
            Semantics::Draft1996 => values
                .iter()
                .all(|v| v.is_empty() || !name.contains(v.as_str())),
        };
        if free {
            return name;
        }
    }
    // Every candidate named: the file names runs of 14 letters; a name of
    // two letters alternating is no run.
    "qxqxqxqxqxqxqxqx".to_owned()
}

/// One robot over a set of files (BotSeer's Figure 5).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RobotFavor {
    /// The robot (a User-agent value, lower-cased).
    pub robot: String,
    /// Files naming it.
    pub appeared: u64,
    /// Files with a positive bias towards it.
    pub favored: u64,
    /// Files with a negative bias towards it.
    pub disfavored: u64,
    /// (favored − disfavored) / N, N being every file of the set.
    pub favorability: f64,
}

/// Favourability over a set of files: add each file's bias table once.
#[derive(Debug, Clone, PartialEq)]
pub struct Favorability {
    semantics: Semantics,
    n: u64,
    /// Per robot: appeared, favored, disfavored.
    robots: BTreeMap<String, [u64; 3]>,
}

impl Favorability {
    /// An empty set read with `semantics`.
    pub fn new(semantics: Semantics) -> Favorability {
        Favorability {
            semantics,
            n: 0,
            robots: BTreeMap::new(),
        }
    }

    /// The semantics of the bias tables added.
    pub fn semantics(&self) -> Semantics {
        self.semantics
    }

    /// N: the files added, whether they name a robot or not.
    pub fn n(&self) -> u64 {
        self.n
    }

    /// Adds one file; a file whose bias was not computed is left out of N.
    pub fn add(&mut self, f: &FileBias) {
        if !f.computed() {
            return;
        }
        self.n += 1;
        for r in &f.robots {
            self.add_robot(&r.robot, r.verdict);
        }
    }

    /// Adds one named robot of a file already counted in N (for callers
    /// that store the verdicts rather than the tables).
    pub fn add_robot(&mut self, robot: &str, verdict: Tilt) {
        self.add_robots(robot, verdict, 1);
    }

    /// Adds `files` files naming `robot` with the same verdict.
    pub fn add_robots(&mut self, robot: &str, verdict: Tilt, files: u64) {
        let c = match self.robots.get_mut(robot) {
            Some(c) => c,
            None => self.robots.entry(robot.to_owned()).or_default(),
        };
        c[0] += files;
        match verdict {
            Tilt::Favored => c[1] += files,
            Tilt::Disfavored => c[2] += files,
            Tilt::Nobias => {}
        }
    }

    /// Counts `files` more files in N without their robots.
    pub fn add_files(&mut self, files: u64) {
        self.n += files;
    }

    /// Takes another set's counts in (sets counted apart, e.g. per thread).
    pub fn merge(&mut self, o: &Favorability) {
        self.n += o.n;
        for (r, c) in &o.robots {
            let m = self.robots.entry(r.clone()).or_default();
            for k in 0..3 {
                m[k] += c[k];
            }
        }
    }

    /// Every robot, most files naming it first (ties by name).
    pub fn table(&self) -> Vec<RobotFavor> {
        let mut v: Vec<RobotFavor> = self
            .robots
            .iter()
            .map(|(robot, c)| RobotFavor {
                robot: robot.clone(),
                appeared: c[0],
                favored: c[1],
                disfavored: c[2],
                favorability: favorability(c[1], c[2], self.n),
            })
            .collect();
        v.sort_by(|a, b| {
            b.appeared
                .cmp(&a.appeared)
                .then_with(|| a.robot.cmp(&b.robot))
        });
        v
    }
}

/// (favored − disfavored) / n; 0 for an empty set.
pub fn favorability(favored: u64, disfavored: u64, n: u64) -> f64 {
    if n == 0 {
        return 0.0;
    }
    (favored as f64 - disfavored as f64) / n as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn robot<'a>(b: &'a FileBias, name: &str) -> &'a RobotBias {
        b.robots
            .iter()
            .find(|r| r.robot == name)
            .unwrap_or_else(|| panic!("{name} in {:?}", b.robots))
    }

    /// The paper's own figures check the formula.
    #[test]
    fn the_papers_numbers() {
        assert!((favorability(604, 45, 7341) - 0.076_147_66).abs() < 5e-9);
        assert!((favorability(3, 233, 7341) + 0.031_330_88).abs() < 5e-9);
        assert_eq!(favorability(1, 0, 0), 0.0);
    }

    #[test]
    fn favored_disfavored_and_no_bias() {
        let body = b"User-agent: *\nDisallow: /private/\nDisallow: /tmp/\n\n\
User-agent: Googlebot\nDisallow: /tmp/\n\n\
User-agent: BadBot\nDisallow: /\n\n\
User-agent: msnbot\nDisallow: /private/\nDisallow: /tmp/\n";
        let b = bias(body, Semantics::Google);
        assert_eq!(b.dir, ["/private/", "/tmp/", "/"]);
        // The universal robot may fetch `/` only ("/" is a path of DIR and
        // no `*` rule covers it).
        assert_eq!(b.universal_allowed, 1);
        assert_eq!(robot(&b, "googlebot").bias, 1);
        assert_eq!(robot(&b, "googlebot").verdict, Tilt::Favored);
        assert_eq!(robot(&b, "badbot").bias, -1);
        assert_eq!(robot(&b, "badbot").verdict, Tilt::Disfavored);
        assert_eq!(robot(&b, "msnbot").verdict, Tilt::Nobias);
        // The deciding lines are kept for the text form.
        let tmp = &b.decisions[1];
        assert_eq!(tmp.path, "/tmp/");
        assert_eq!(tmp.universal.line, Some(3));
        assert_eq!(tmp.robots[0].line, Some(6));
    }

    /// Without a `*` group the universal robot may fetch all of DIR.
    #[test]
    fn no_universal_group() {
        let b = bias(b"User-agent: GPTBot\nDisallow: /\n", Semantics::Google);
        assert_eq!(b.universal_allowed, 1);
        assert_eq!(robot(&b, "gptbot").bias, -1);
    }

    /// A User-agent value is asked by the token that matches its line.
    #[test]
    fn robots_are_asked_by_their_token() {
        let body = b"User-agent: *\nDisallow: /\n\nUser-agent: MJ12bot\nAllow: /\n\nUser-agent: msn/crawler\nAllow: /\n";
        let b = bias(body, Semantics::Google);
        assert_eq!(robot(&b, "mj12bot").verdict, Tilt::Favored);
        assert_eq!(robot(&b, "msn/crawler").verdict, Tilt::Favored);
        let d = bias(body, Semantics::Draft1996);
        assert_eq!(robot(&d, "mj12bot").verdict, Tilt::Favored);
        assert_eq!(robot(&d, "msn/crawler").verdict, Tilt::Favored);
    }

    /// Longest match (Google) against first match (1996 draft).
    #[test]
    fn semantics_differ() {
        let body =
            b"User-agent: *\nDisallow: /\n\nUser-agent: googlebot\nDisallow: /a\nAllow: /a/b\n";
        let g = bias(body, Semantics::Google);
        assert_eq!(g.dir, ["/", "/a", "/a/b"]);
        // Google: googlebot may fetch `/` and `/a/b`.
        assert_eq!(robot(&g, "googlebot").allowed, 2);
        // The draft: `/a` decides `/a/b` first.
        let d = bias(body, Semantics::Draft1996);
        assert_eq!(robot(&d, "googlebot").allowed, 1);
        assert_eq!(d.universal_allowed, 0);
    }

    /// `$` dropped, `*` kept, empty values left out, each value once,
    /// each robot once, `*` not a robot.
    #[test]
    fn dir_and_names() {
        let body = b"User-agent: *\nDisallow: /*.pdf$\nDisallow:\nAllow: /x$\nDisallow: /x\n\nUser-agent: Foo\nUser-agent: FOO \nDisallow: /*.pdf\n";
        let b = bias(body, Semantics::Google);
        assert_eq!(b.dir, ["/*.pdf", "/x"]);
        assert_eq!(b.robots.len(), 1);
        assert_eq!(b.robots[0].robot, "foo");
    }

    /// The universal robot is named by no group, under either semantics.
    #[test]
    fn the_universal_robot_is_nobody_named() {
        let body = b"User-agent: q\nUser-agent: qqqqqqqq\nDisallow: /\n\nUser-agent: *\nAllow: /\n";
        for s in [Semantics::Google, Semantics::Draft1996] {
            let b = bias(body, s);
            assert_eq!(b.universal_allowed, 1, "{s:?}");
            assert_eq!(robot(&b, "q").bias, -1, "{s:?}");
        }
    }

    /// One group named by `agents` User-agent lines over `rules` Disallow
    /// lines, as a stranger may submit it.
    fn one_group(agents: usize, rules: usize) -> Vec<u8> {
        let mut b = Vec::new();
        for i in 0..agents {
            b.extend_from_slice(format!("User-agent: b{i}\n").as_bytes());
        }
        for i in 0..rules {
            b.extend_from_slice(format!("Disallow: /p{i}\n").as_bytes());
        }
        b
    }

    /// Found: a 33 KB file of one group of 1,000 User-agent lines over
    /// 1,000 rules took minutes (about n⁴: every robot, every path, every
    /// line naming the token, every rule). Robots that select the same
    /// groups share one evaluation: a few million units of work.
    #[test]
    fn robots_sharing_a_group_share_one_evaluation() {
        let body = one_group(1_000, 1_000);
        for sem in [Semantics::Google, Semantics::Draft1996] {
            let opts = ParseOptions::default();
            let robots = Robots::parse_with(&body, &opts);
            let m = Matcher::compile(&body, sem, &opts);
            let b = bias_with(&robots, &m, Detail::Table, 3_000_000);
            assert!(b.computed(), "{sem:?}: {:?}", b.too_complex);
            assert!(b.work <= 3_000_000, "{sem:?}: {} units", b.work);
            assert_eq!(b.robots.len(), 1_000);
            assert_eq!(b.universal_allowed, 1_000, "no `*` group");
            for r in &b.robots {
                assert_eq!(
                    (r.allowed, r.bias, r.verdict),
                    (0, -1_000, Tilt::Disfavored),
                    "{sem:?} {}",
                    r.robot
                );
            }
            assert_eq!(b.decisions.len(), 1_000);
            // `/p999`: the longest match under Google's rules, the first
            // (`/p9`) under the draft's.
            let line = if sem == Semantics::Google {
                2_000
            } else {
                1_010
            };
            assert_eq!(b.decisions[999].robots[999].line, Some(line));
            assert_eq!(b.decisions_omitted, 0);
        }
    }

    /// Found: 12,000 groups `User-agent: botN` (one token, `bot`, under
    /// Google's rules) made the token's selection of 12,000 groups once
    /// per line: 1.4 × 10⁸ units and 630 MB. Each distinct name is asked
    /// once.
    #[test]
    fn lines_sharing_a_token_are_selected_once() {
        let mut body = Vec::new();
        for i in 0..12_000u32 {
            body.extend_from_slice(format!("User-agent: bot{i}\nDisallow: /x{i}\n\n").as_bytes());
        }
        let b = bias(&body, Semantics::Google);
        assert!(b.computed(), "{:?}", b.too_complex);
        assert!(b.work < 2_000_000, "{} units", b.work);
        assert_eq!(b.robots.len(), 12_000);
        assert!(b.robots.iter().all(|r| r.bias == -12_000));
    }

    /// Past the budget the bias is not computed, says so and claims
    /// nothing; favourability leaves the file out of N.
    #[test]
    fn too_complex_files_say_so() {
        // 5,000 groups of distinct tokens, each with a rule of its own: 5,000
        // distinct rule sets over 5,000 paths.
        let mut body = b"User-agent: *\nDisallow: /\n\n".to_vec();
        for i in 0..5_000u32 {
            let name: String = (0..4)
                .map(|k| char::from(b'a' + ((i / 26u32.pow(k)) % 26) as u8))
                .collect();
            body.extend_from_slice(format!("User-agent: x{name}\nDisallow: /{i}\n\n").as_bytes());
        }
        let b = bias(&body, Semantics::Google);
        let t = b.too_complex.expect("too complex");
        assert_eq!((t.paths, t.robots, t.budget), (5_001, 5_000, BIAS_WORK_CAP));
        assert!(t.selections > 1_000);
        assert!(b.work <= BIAS_WORK_CAP + 100_000, "{} units", b.work);
        assert!(b.robots.is_empty() && b.decisions.is_empty());
        assert!(t.message().starts_with("too-complex: bias not computed"));
        assert!(b.to_text().contains("too-complex"));
        let mut f = Favorability::new(Semantics::Google);
        f.add(&b);
        assert_eq!(f.n(), 0);
        // A small budget makes any file too complex, and a file within it
        // is computed as before.
        let small = b"User-agent: *\nDisallow: /a\n\nUser-agent: g\nDisallow:\n";
        let opts = ParseOptions::default();
        let m = Matcher::compile(small, Semantics::Google, &opts);
        let robots = Robots::parse_with(small, &opts);
        assert!(!bias_with(&robots, &m, Detail::Table, 1).computed());
        let full = bias_with(&robots, &m, Detail::Table, BIAS_WORK_CAP);
        assert_eq!(full, bias(small, Semantics::Google));
        assert_eq!(full.robots[0].bias, 1);
        let summary = bias_with(&robots, &m, Detail::Summary, BIAS_WORK_CAP);
        assert_eq!(summary.robots, full.robots);
        assert!(summary.decisions.is_empty());
    }

    #[test]
    fn favorability_over_a_set() {
        let mut f = Favorability::new(Semantics::Google);
        let favors = bias(
            b"User-agent: *\nDisallow: /\n\nUser-agent: googlebot\nAllow: /\n",
            Semantics::Google,
        );
        let shuns = bias(b"User-agent: googlebot\nDisallow: /\n", Semantics::Google);
        let silent = bias(b"User-agent: *\nDisallow: /cgi-bin/\n", Semantics::Google);
        f.add(&favors);
        f.add(&favors);
        f.add(&shuns);
        f.add(&silent);
        assert_eq!(f.n(), 4);
        let t = f.table();
        assert_eq!(t.len(), 1);
        assert_eq!((t[0].appeared, t[0].favored, t[0].disfavored), (3, 2, 1));
        assert!((t[0].favorability - 0.25).abs() < 1e-12);
        let mut g = Favorability::new(Semantics::Google);
        g.merge(&f);
        g.add_files(4);
        assert!((g.table()[0].favorability - 0.125).abs() < 1e-12);
        let json = serde_json::to_value(&favors).expect("json");
        assert_eq!(json["robots"][0]["verdict"], "favored");
        assert_eq!(json["semantics"], "google");
    }
}
