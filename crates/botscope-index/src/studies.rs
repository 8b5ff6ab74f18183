//! The published studies' own ways of judging a robots.txt, reproduced so
//! that their tables can be made again and set beside the exact engine's.
//! Pure: bytes in, values out; the cost of a file is bounded by its size
//! (see each function).
//!
//! - [`Method::Somesite`]: Liu et al., "Somesite I Used To Crawl" (IMC
//!   2025), as their script `robots_analysis_final.py` judges a site:
//!   Google's matcher asked about probes taken from the file's lines.
//! - [`Method::Cic`]: Longpre et al., "Consent in Crisis" (2024), as their
//!   parser `parse_robots.py` read files for the paper (before the fixes
//!   of their pull request #205): its own line reader, not Google's.
//!
//! ```
//! use botscope_index::{Restriction, studies};
//!
//! // Their script asks Google's matcher about `/` and every path the
//! // file names: `/private` is closed, so GPTBot is partially kept out.
//! let body = b"User-agent: *\nDisallow: /private\n";
//! let agents = ["GPTBot".to_owned()];
//! assert_eq!(studies::somesite(body, &agents), Some(vec![Restriction::Partial]));
//!
//! // Consent in Crisis's parser never groups consecutive User-agent
//! // lines: only the last of them gets the rules.
//! let body = b"User-agent: GPTBot\nUser-agent: CCBot\nDisallow: /\n";
//! let agents = ["GPTBot".to_owned(), "CCBot".to_owned()];
//! assert_eq!(studies::cic(body, &agents), [Restriction::None, Restriction::Full]);
//! ```

use std::collections::{BTreeSet, HashMap};

use botscope_robotstxt::{Matcher, ParseOptions, Semantics, path_of};

use crate::Restriction;

/// How a file's restriction of an agent is judged.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Method {
    /// botscope's: `/` closed is full; else partial when a path the file
    /// names is closed (under the chosen semantics); else none.
    #[default]
    Exact,
    /// Liu et al. (IMC 2025), as their script judges it ([`somesite`]).
    Somesite,
    /// Longpre et al. (2024), as their parser read files ([`cic`]).
    Cic,
}

impl Method {
    /// `exact`, `somesite` or `cic`.
    pub fn parse(s: &str) -> Option<Method> {
        match s {
            "exact" => Some(Method::Exact),
            "somesite" => Some(Method::Somesite),
            "cic" => Some(Method::Cic),
            _ => None,
        }
    }

    /// As [`Method::parse`] reads it.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Exact => "exact",
            Method::Somesite => "somesite",
            Method::Cic => "cic",
        }
    }

    /// The restriction of each of `agents` in `body`, judged this way
    /// (`Exact` under `semantics`; the studies' methods fix their own),
    /// and whether the method was past [`STUDY_WORK_CAP`] so that the
    /// exact engine's judgement stands in for it.
    pub fn judge(
        self,
        body: &[u8],
        agents: &[String],
        semantics: Semantics,
    ) -> (Vec<Restriction>, bool) {
        let judged = match self {
            Method::Exact => None,
            Method::Somesite => somesite_counted(body, agents, STUDY_WORK_CAP, &mut 0),
            Method::Cic => Some(cic(body, agents)),
        };
        match judged {
            Some(r) => (r, false),
            None => (
                crate::restrictions(body, agents, semantics),
                self != Method::Exact,
            ),
        }
    }
}

/// Counted work (matcher units) [`somesite`] spends on one file at most
/// (the budget the index spends on a file's classes): a file whose probes
/// need more is not judged the study's way.
pub const STUDY_WORK_CAP: u64 = crate::CLASS_WORK_CAP;

/// The 24 AI User-Agents of "Somesite I Used To Crawl", as their scripts
/// pass them to Google's matcher (`Kangaroo Bot` with its space: a file's
/// `User-agent: Kangaroo Bot` reads as `Kangaroo`, which never equals it,
/// and `AI2Bot`'s file lines read as `AI`, so both meet only `*` groups).
pub const SOMESITE_AGENTS: [&str; 24] = [
    "Amazonbot",
    "AI2Bot",
    "anthropic-ai",
    "Applebot",
    "Applebot-Extended",
    "Bytespider",
    "CCBot",
    "ChatGPT-User",
    "Claude-Web",
    "ClaudeBot",
    "cohere-ai",
    "Diffbot",
    "FacebookBot",
    "Google-Extended",
    "GPTBot",
    "Kangaroo Bot",
    "Meta-ExternalAgent",
    "Meta-ExternalFetcher",
    "OAI-SearchBot",
    "omgili",
    "PerplexityBot",
    "Timpibot",
    "Webzio-Extended",
    "YouBot",
];

/// The 15 Common Crawl crawls "Somesite I Used To Crawl" judged.
pub const SOMESITE_CRAWLS: [&str; 15] = [
    "CC-MAIN-2022-05",
    "CC-MAIN-2022-21",
    "CC-MAIN-2022-40",
    "CC-MAIN-2023-06",
    "CC-MAIN-2023-14",
    "CC-MAIN-2023-23",
    "CC-MAIN-2023-40",
    "CC-MAIN-2023-50",
    "CC-MAIN-2024-10",
    "CC-MAIN-2024-18",
    "CC-MAIN-2024-22",
    "CC-MAIN-2024-26",
    "CC-MAIN-2024-33",
    "CC-MAIN-2024-38",
    "CC-MAIN-2024-42",
];

/// The dummy probe their script adds, for a file that closes everything
/// but `/$`.
pub const SOMESITE_DUMMY: &str = "/dummy-testing-path-54321";

/// Python's `str.isspace()` for one character (Rust's whitespace and the
/// four separators U+001C to U+001F).
fn py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// The probes their script asks about, as `get_all_paths_from_robots`
/// extracts them: the file split at `\n` only; a line whose lower case
/// holds `allow: ` (so also `disallow: `, anywhere in the line, comments
/// included) gives its second whitespace-separated field, if any; else a
/// line holding `allow:` gives what lies between its first and second
/// colon (untrimmed); then `/` and [`SOMESITE_DUMMY`], each once, one
/// trailing `$` dropped, `*` kept as it is. At most one probe per line.
pub fn somesite_probes(text: &str) -> Vec<String> {
    let mut all: BTreeSet<&str> = BTreeSet::new();
    for line in text.split('\n') {
        // The script's `line.lower()`: no character outside ASCII lowers
        // to a letter of `allow`, so an ASCII case-blind search finds the
        // same lines without a lowered copy of each.
        if has_allow(line, true) {
            if let Some(second) = line.split(py_space).filter(|f| !f.is_empty()).nth(1) {
                all.insert(second);
            }
        } else if has_allow(line, false)
            && let Some(between) = line.split(':').nth(1)
        {
            all.insert(between);
        }
    }
    all.insert("/");
    all.insert(SOMESITE_DUMMY);
    all.into_iter()
        .map(|p| p.strip_suffix('$').unwrap_or(p).to_owned())
        .collect()
}

/// `allow:` in `line`, its letters ASCII case-blind, followed by a space
/// when `space`: each `:` looked at once.
fn has_allow(line: &str, space: bool) -> bool {
    let b = line.as_bytes();
    b.iter().enumerate().any(|(i, &c)| {
        c == b':'
            && i >= 5
            && b[i - 5..i].eq_ignore_ascii_case(b"allow")
            && (!space || b.get(i + 1) == Some(&b' '))
    })
}

/// The restriction of each of `agents` in `body` as "Somesite I Used To
/// Crawl" judges it: Google's matcher is asked about `/` for the agent
/// (passed as it is), then about each of [`somesite_probes`] appended to
/// the site's origin (what the matcher then reads is the path Google's
/// `GetPathParamsQuery` takes from that URL, whatever the origin): with
/// `/` allowed the site is partially disallowed if any probe is closed,
/// else not at all; with `/` closed it is partially disallowed if any
/// probe is open, else fully. The file is read as botscope reads every
/// file (the first 500 KiB; bytes that are not UTF-8 are probed as
/// U+FFFD). Cost: one indexed match per probe per distinct group
/// selection, probes at most one per line; `None` when that is more than
/// [`STUDY_WORK_CAP`] units of counted work.
pub fn somesite(body: &[u8], agents: &[String]) -> Option<Vec<Restriction>> {
    somesite_counted(body, agents, STUDY_WORK_CAP, &mut 0)
}

/// [`somesite`] within `cap` units of work, adding the work done to
/// `work` (at most `cap` plus one index or one probe's match).
pub fn somesite_counted(
    body: &[u8],
    agents: &[String],
    cap: u64,
    work: &mut u64,
) -> Option<Vec<Restriction>> {
    let opts = ParseOptions::default();
    let m = Matcher::compile(body, Semantics::Google, &opts);
    let cut = opts.max_bytes.map_or(body.len(), |c| c.min(body.len()));
    let text = String::from_utf8_lossy(&body[..cut]);
    let paths: Vec<Vec<u8>> = somesite_probes(&text)
        .into_iter()
        .map(|p| path_of(format!("https://site.invalid{p}").as_bytes()).into_owned())
        .collect();
    let asks: Vec<&str> = agents.iter().map(String::as_str).collect();
    let sels = m.select_many(&asks, work);
    let mut known: HashMap<&botscope_robotstxt::Selection, Restriction> = HashMap::new();
    let mut out = Vec::with_capacity(sels.len());
    for sel in &sels {
        if let Some(r) = known.get(sel) {
            out.push(*r);
            continue;
        }
        let ix = m.index_selection(sel, work);
        let root = m.check_indexed(&ix, b"/", work).allowed;
        let mut other = false;
        for p in &paths {
            if *work > cap {
                return None;
            }
            if m.check_indexed(&ix, p, work).allowed != root {
                other = true;
                break;
            }
        }
        if *work > cap {
            return None;
        }
        let r = match (root, other) {
            (true, false) => Restriction::None,
            (false, false) => Restriction::Full,
            (_, true) => Restriction::Partial,
        };
        known.insert(sel, r);
        out.push(r);
    }
    Some(out)
}

/// Where the first line break of Python's `splitlines()` is in `text`,
/// and its length in bytes: `\n`, `\r`, `\x0b`, `\x0c`, `\x1c` to `\x1e`,
/// U+0085, U+2028, U+2029. Found by bytes (a break's first byte is one
/// of nine), not by decoding every character.
fn line_break(text: &str) -> Option<(usize, usize)> {
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\n' | b'\r' | 0x0b | 0x0c | 0x1c..=0x1e => return Some((i, 1)),
            0xc2 if b.get(i + 1) == Some(&0x85) => return Some((i, 2)),
            0xe2 if b.get(i + 1) == Some(&0x80) && matches!(b.get(i + 2), Some(0xa8 | 0xa9)) => {
                return Some((i, 3));
            }
            _ => i += 1,
        }
    }
    None
}

/// One agent's lines in [`CicRules`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct CicAgent {
    allow: Vec<String>,
    disallow: Vec<String>,
}

/// A file as Consent in Crisis's parser read it: for each User-agent
/// value as written, its Allow and Disallow values.
#[derive(Debug, Clone, Default)]
pub struct CicRules {
    agents: HashMap<String, CicAgent>,
}

impl CicRules {
    /// Reads `text` line by line as `parse_robots_txt` did for the paper:
    /// lines split as Python's `splitlines()` splits them and stripped; a
    /// line starting `User-agent:` (exactly so cased) names the one agent
    /// later lines apply to, its value kept as written (comments too); a
    /// line starting `Allow:` or `Disallow:` (so cased) adds its value,
    /// everything after the first colon, stripped; an empty line or one
    /// starting `#` ends the agent's lines; every other line is ignored.
    /// Only `keep` (and `*`) are kept. Cost: linear in the text.
    pub fn parse(text: &str, keep: &[String]) -> CicRules {
        let mut agents: HashMap<String, CicAgent> = HashMap::new();
        let mut current: Option<String> = None;
        let mut rest = text;
        while !rest.is_empty() {
            let (raw, next) = match line_break(rest) {
                Some((i, n)) => {
                    let mut j = i + n;
                    if rest.as_bytes()[i] == b'\r' && rest.as_bytes().get(j) == Some(&b'\n') {
                        j += 1;
                    }
                    (&rest[..i], &rest[j..])
                }
                None => (rest, ""),
            };
            rest = next;
            let line = raw.trim_matches(py_space);
            if let Some(v) = line.strip_prefix("User-agent:") {
                let name = v.trim_matches(py_space);
                if name == "*" || keep.iter().any(|k| k == name) {
                    agents.entry(name.to_owned()).or_default();
                    current = Some(name.to_owned());
                } else {
                    // A name not asked about still takes the lines after it.
                    current = Some(String::new());
                }
            } else if let (Some(who), true) = (
                &current,
                line.starts_with("Allow:") || line.starts_with("Disallow:"),
            ) {
                let (key, value) = line.split_once(':').unwrap_or((line, ""));
                let value = value.trim_matches(py_space).to_owned();
                if let Some(a) = agents.get_mut(who.as_str()).filter(|_| !who.is_empty()) {
                    if key == "Allow" {
                        a.allow.push(value);
                    } else {
                        a.disallow.push(value);
                    }
                }
            } else if line.is_empty() || line.starts_with('#') {
                current = None;
            }
        }
        CicRules { agents }
    }

    /// `agent`'s class as `interpret_robots` gave it: its own lines if the
    /// file names it exactly (case and all), else the `*` lines. Values
    /// holding `?` are set aside; none when no Disallow is left, when the
    /// only one is empty, or when the Allow values equal the Disallow
    /// values; full when a Disallow is `/` and no Allow is left; else some.
    pub fn restriction(&self, agent: &str) -> Restriction {
        match self.agents.get(agent).or_else(|| self.agents.get("*")) {
            Some(a) => a.class(),
            None => Restriction::None,
        }
    }
}

impl CicAgent {
    /// [`CicRules::restriction`] of the agent whose lines these are.
    fn class(&self) -> Restriction {
        let disallow: Vec<&str> = self
            .disallow
            .iter()
            .map(String::as_str)
            .filter(|x| !x.contains('?'))
            .collect();
        let allow: Vec<&str> = self
            .allow
            .iter()
            .map(String::as_str)
            .filter(|x| !x.contains('?'))
            .collect();
        if disallow.is_empty() || disallow == [""] || allow == disallow {
            Restriction::None
        } else if disallow.iter().any(|x| x.trim_matches(py_space) == "/") && allow.is_empty() {
            Restriction::Full
        } else {
            Restriction::Partial
        }
    }
}

/// The restriction of each of `agents` in `body` as Consent in Crisis's
/// parser judged it ([`CicRules`]): `all` is full, `some` partial, `none`
/// none. The whole body is read (bytes that are not UTF-8 as U+FFFD), in
/// time linear in its size.
pub fn cic(body: &[u8], agents: &[String]) -> Vec<Restriction> {
    let rules = CicRules::parse(&String::from_utf8_lossy(body), agents);
    // Most agents meet the `*` lines: their class is found once.
    let star = rules.restriction("*");
    agents
        .iter()
        .map(|a| rules.agents.get(a.as_str()).map_or(star, CicAgent::class))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(m: Method, body: &str, agent: &str) -> Restriction {
        let (r, past) = m.judge(body.as_bytes(), &[agent.to_owned()], Semantics::Google);
        assert!(!past);
        r[0]
    }
    const SOMESITE: Method = Method::Somesite;
    const CIC: Method = Method::Cic;

    #[test]
    fn probes_are_taken_as_their_script_takes_them() {
        let text = "User-agent: *\nDisallow: /a$\nAllow:/b:c\r\n# allow: everything\nDisallow: \nDisallow:\n";
        assert_eq!(
            somesite_probes(text),
            ["", "/", "/a", "/b", SOMESITE_DUMMY, "allow:"]
        );
        // Case is the script's `lower()`'s: any case of ASCII, and a line
        // whose other characters lower to more bytes (`İ`) or are not
        // ASCII at all still probes its field.
        assert_eq!(
            somesite_probes("DISALLOW: /X\nİ aLLoW: /ü\ndisallow\u{212A}: /k\nALLOW:/q\n"),
            ["/", "/X", SOMESITE_DUMMY, "/q", "aLLoW:"]
        );
    }

    #[test]
    fn somesite_verdicts() {
        use Restriction::*;
        // `/` closed, nothing open: full.
        assert_eq!(
            one(SOMESITE, "User-agent: *\nDisallow: /\n", "GPTBot"),
            Full
        );
        // `/` closed but an Allow opens a path: partial.
        assert_eq!(
            one(
                SOMESITE,
                "User-agent: *\nDisallow: /\nAllow: /pub\n",
                "GPTBot"
            ),
            Partial
        );
        // Everything closed but `/$`: `/` is open, the dummy path closed.
        assert_eq!(
            one(
                SOMESITE,
                "User-agent: *\nDisallow: /\nAllow: /$\n",
                "GPTBot"
            ),
            Partial
        );
        // Nothing said: none.
        assert_eq!(one(SOMESITE, "User-agent: *\nAllow: /\n", "GPTBot"), None);
        // Kangaroo Bot never meets its own group.
        let k = "User-agent: Kangaroo Bot\nDisallow: /\n";
        assert_eq!(one(SOMESITE, k, "Kangaroo Bot"), None);
        assert_eq!(
            crate::restrictions(k.as_bytes(), &["Kangaroo".into()], Semantics::Google),
            [Full]
        );
        // A rule whose wildcard probe is literal: `/*.php` closes `/*.php`.
        assert_eq!(
            one(SOMESITE, "User-agent: *\nDisallow: /*.php\n", "GPTBot"),
            Partial
        );
    }

    #[test]
    fn cic_splits_lines_as_splitlines_does() {
        use Restriction::*;
        let gpt = |body: &str| cic(body.as_bytes(), &["GPTBot".to_owned()])[0];
        for br in [
            "\n", "\r", "\r\n", "\u{0b}", "\u{0c}", "\u{1c}", "\u{1d}", "\u{1e}", "\u{85}",
            "\u{2028}", "\u{2029}",
        ] {
            assert_eq!(
                gpt(&format!("User-agent: GPTBot{br}Disallow: /{br}")),
                Full,
                "{br:?}"
            );
            // Two breaks are an empty line between, which ends the agent's lines.
            assert_eq!(
                gpt(&format!("User-agent: GPTBot{br}{br}Disallow: /{br}")),
                None,
                "{br:?}"
            );
        }
        // Other characters, and the bytes of breaks out of order, are text.
        assert_eq!(gpt("User-agent: GPTBot\u{2027}Disallow: /"), None);
        assert_eq!(gpt("User-agent: GPTBot\u{a0}\nDisallow: /é\u{85}"), Partial);
        // The `*` lines' class is every agent's that the file does not name.
        let agents = ["GPTBot".to_owned(), "CCBot".to_owned(), "Other".to_owned()];
        let body = "User-agent: *\nDisallow: /\n\nUser-agent: CCBot\nDisallow: /x\n";
        assert_eq!(cic(body.as_bytes(), &agents), [Full, Partial, Full]);
    }

    #[test]
    fn cic_reads_files_as_the_paper_did() {
        use Restriction::*;
        // Case matters: `User-Agent:` is not read, so nothing is closed.
        assert_eq!(one(CIC, "User-Agent: *\nDisallow: /\n", "GPTBot"), None);
        // An agent named exactly gets its lines; another case falls to `*`.
        let f = "User-agent: GPTBot\nDisallow: /\n\nUser-agent: *\nDisallow: /tmp\n";
        assert_eq!(one(CIC, f, "GPTBot"), Full);
        assert_eq!(one(CIC, f, "gptbot"), Partial);
        // A comment after `/` makes it some, an Allow makes it some.
        assert_eq!(one(CIC, "User-agent: *\nDisallow: / # all\n", "X"), Partial);
        assert_eq!(
            one(CIC, "User-agent: *\nDisallow: /\nAllow: /a\n", "X"),
            Partial
        );
        // Values with `?` are set aside; equal Allow and Disallow are none.
        assert_eq!(one(CIC, "User-agent: *\nDisallow: /?q\n", "X"), None);
        assert_eq!(
            one(CIC, "User-agent: *\nDisallow: /a\nAllow: /a\n", "X"),
            None
        );
        // A blank line ends the agent's lines.
        assert_eq!(one(CIC, "User-agent: *\n\nDisallow: /\n", "X"), None);
        // A named agent with no lines is none, not `*`'s.
        assert_eq!(
            one(
                CIC,
                "User-agent: GPTBot\n\nUser-agent: *\nDisallow: /\n",
                "GPTBot"
            ),
            None
        );
        // `\r` alone splits lines, as splitlines() splits them.
        assert_eq!(one(CIC, "User-agent: *\rDisallow: /\r", "X"), Full);
        // No file rules at all: none.
        assert_eq!(one(CIC, "", "X"), None);
    }

    #[test]
    fn a_file_past_the_budget_is_judged_by_the_exact_engine() {
        // Many wildcard Allow lines that never close anything: every probe
        // is asked about, each against every rule.
        let mut body = String::from("User-agent: *\n");
        for i in 0..3000 {
            body.push_str(&format!("Allow: /*a*b*c*d*{i}\n"));
        }
        let agents = ["GPTBot".to_owned()];
        let mut work = 0;
        assert_eq!(
            somesite_counted(body.as_bytes(), &agents, 10_000, &mut work),
            None
        );
        assert!(work < 10_000 + 3000 * 64, "{work}");
        let (r, past) = Method::Somesite.judge(body.as_bytes(), &agents, Semantics::Google);
        assert_eq!(r, [Restriction::None]);
        assert!(past || somesite(body.as_bytes(), &agents).is_some());
    }

    /// The choices docs/studies.md states ("Every choice stated"), each
    /// under the three methods.
    #[test]
    fn each_stated_choice_holds() {
        use Restriction::*;
        let all = |body: &str| {
            [Method::Exact, SOMESITE, CIC].map(|m| {
                let (r, past) = m.judge(body.as_bytes(), &["GPTBot".to_owned()], Semantics::Google);
                assert!(!past);
                r[0]
            })
        };
        // A byte-order mark: RFC 9309's parser and Google's matcher skip
        // it; Consent in Crisis's parser got `requests`' text, which keeps
        // it, and its first line then does not start `User-agent:`.
        assert_eq!(
            all("\u{feff}User-agent: GPTBot\nDisallow: /\n"),
            [Full, Full, None]
        );
        // Without the mark, all three agree.
        assert_eq!(all("User-agent: GPTBot\nDisallow: /\n"), [Full, Full, Full]);
        // CR-only line ends: lines to RFC 9309, to Google's matcher and to
        // splitlines(); one line to Somesite's probes (split at `\n`),
        // whose second field (`GPTBot`) probes `/`.
        assert_eq!(all("User-agent: GPTBot\rDisallow: /\r"), [Full, Full, Full]);
        assert_eq!(
            somesite_probes("User-agent: GPTBot\rDisallow: /\r"),
            ["/", SOMESITE_DUMMY, "GPTBot"]
        );
        // A tab after `Disallow:`: whitespace to every parser; Somesite's
        // probe is what lies between the colons (`\t/`), whose path is `/`.
        assert_eq!(
            all("User-agent: GPTBot\nDisallow:\t/\n"),
            [Full, Full, Full]
        );
        assert_eq!(
            somesite_probes("User-agent: GPTBot\nDisallow:\t/\n"),
            ["\t/", "/", SOMESITE_DUMMY]
        );
    }

    #[test]
    fn methods_parse_as_they_print() {
        for m in [Method::Exact, Method::Somesite, Method::Cic] {
            assert_eq!(Method::parse(m.as_str()), Some(m));
        }
        assert_eq!(Method::parse("google"), None);
    }
}
