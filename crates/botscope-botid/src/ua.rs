//! User-Agent → is it a robot, and which registered bot does it claim?
//!
//! Sources, in order: the registry's product tokens (a fast Aho-Corasick
//! pass; a token must stand as a whole word); isbot's patterns; the
//! crawler-user-agents patterns. uap-core's parsers, with the bottica extras
//! taking priority, give the family. The first that fires
//! gives the reason.
//!
//! Patterns are not all equal evidence. isbot's generic words and shapes
//! (`download`, `news`, `chromeframe`, a bare `name/version`) also occur in
//! browsers, media players and apps; they count only when uap-core cannot
//! name the client as a browser or app. Text that names a device or an app
//! package (the model slot of an Android platform comment,
//! `com.google.android.youtube`) is no evidence at all.

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, MatchKind};
use marked_yaml::Node;
use regex::RegexSet;
use serde::Serialize;
use ua_parser::{Regexes, user_agent};

use crate::registry::Registry;

/// uap-core's `regexes.yaml`, shipped with botscope.
pub const UAP_REGEXES: &str = include_str!("../data/uap_regexes.yaml");
/// The bottica extras to uap-core.
pub const UAP_EXTRAS: &str = include_str!("../data/uap_extras.yaml");
/// crawler-user-agents patterns, one regex per line.
pub const CRAWLER_PATTERNS: &str = include_str!("../data/crawler_patterns.txt");
/// isbot's patterns, a JSON list of regex fragments (matched ignoring case).
pub const ISBOT_PATTERNS: &str = include_str!("../data/isbot_patterns.json");
/// botscope's own robot patterns (data/own_patterns.txt), made from the
/// design halves of the labelled sets; added to any pattern list.
pub const OWN_PATTERNS: &str = include_str!("../data/own_patterns.txt");

/// Tokens shorter than this claim a bot only when written in the
/// registry's case.
pub const MIN_CASELESS_TOKEN: usize = 7;

/// Longest User-Agent examined; the rest is ignored (real ones are under 1 KB).
pub const MAX_UA_BYTES: usize = 8 * 1024;

/// What a User-Agent says about its sender.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct UaInfo {
    /// The User-Agent is a robot's.
    pub is_bot: bool,
    /// uap-core's `user_agent.family`, when the decision looked it up (a
    /// generic pattern matched); [`UaClassifier::family`] gives it always.
    pub family: Option<String>,
    /// The registered bot the User-Agent names (registry name).
    pub claimed_bot: Option<String>,
    /// Why it is taken for a robot.
    pub reason: Option<String>,
    /// The kind of client ([`crate::ClientType`]): a registered bot's
    /// from its category, else from the words that name a kind (a feed
    /// reader, a library, a monitor …), else `crawler` for a robot,
    /// `browser` for a person's browser or app, `unknown` when nothing
    /// says.
    pub client_type: crate::ClientType,
}

/// uap-core's parsers: compiled at once, or at their first use. Most
/// User-Agents are decided without them (neither benched log needs them
/// at all), so a log's analysis neither waits for them nor shares its
/// cores with their compiling (70 ms of CPU); the first decision that
/// needs them waits for them once.
struct Uap {
    ready: std::sync::OnceLock<user_agent::Extractor<'static>>,
    /// The regexes and extras, compiled at the first use.
    sources: Option<(&'static str, &'static str)>,
}

impl Uap {
    fn ready(e: user_agent::Extractor<'static>) -> Uap {
        Uap {
            ready: std::sync::OnceLock::from(e),
            sources: None,
        }
    }

    fn lazy(regexes: &'static str, extras_text: &'static str) -> Uap {
        Uap {
            ready: std::sync::OnceLock::new(),
            sources: Some((regexes, extras_text)),
        }
    }

    /// The parsers (compiled now if not yet; other threads wait for the
    /// one compiling). The bundled ones always compile (a test builds
    /// them); if others fail, none match.
    fn get(&self) -> &user_agent::Extractor<'static> {
        self.ready.get_or_init(|| {
            self.sources
                .and_then(|(regexes, extras)| compile_uap(regexes, extras).ok())
                .unwrap_or_else(|| {
                    user_agent::Builder::new()
                        .build()
                        .unwrap_or_else(|_| unreachable!("an empty parser set builds"))
                })
        })
    }
}

fn compile_uap(regexes: &str, extras_text: &str) -> Result<user_agent::Extractor<'static>, String> {
    let regexes: Regexes<'static> =
        marked_yaml::from_yaml(0, regexes).map_err(|e| format!("uap regexes: {e}"))?;
    let mut ua_parsers = extras(extras_text)?;
    ua_parsers.extend(regexes.user_agent_parsers);
    user_agent::Builder::new()
        .push_all(ua_parsers)
        .map_err(|e| format!("uap user agent parsers: {e}"))?
        .build()
        .map_err(|e| format!("uap user agent parsers: {e}"))
}

/// A pattern's reason in words: the text of the User-Agent it matched
/// (`its User-Agent says "bot"`), cut at 40 characters.
fn says(found: Option<&str>) -> String {
    match found.map(str::trim).filter(|m| !m.is_empty()) {
        Some(m) => {
            let cut: String = m.chars().take(40).collect();
            let more = if cut.len() < m.len() { "…" } else { "" };
            format!("its User-Agent says \"{cut}{more}\"")
        }
        None => "its User-Agent has the shape of a robot's".to_owned(),
    }
}

/// Classifies User-Agent strings. Build once; `classify` is read-only and
/// can be shared across threads.
pub struct UaClassifier {
    ua: Uap,
    /// isbot's patterns the regex crate compiles (`isbot_text`), the
    /// relaxed forms of the others (`isbot_fancy`), then the crawler
    /// patterns (`pattern_text`), in one set: a string none matches (a
    /// browser's) is searched once, and one that some do is searched
    /// once more for which.
    robot_patterns: RegexSet,
    pattern_text: Vec<String>,
    isbot_text: Vec<String>,
    /// For each pattern of `isbot_text`: it is a generic word or shape.
    isbot_generic: Vec<bool>,
    /// Each pattern of `isbot_text`, then of `pattern_text`, compiled alone the
    /// first time it decides (to quote what it matched in a reason).
    alone: Vec<std::sync::OnceLock<Option<regex::Regex>>>,
    /// isbot's patterns that need look-around, each with its genericity.
    /// In `robot_patterns` each stands without its look-arounds, which
    /// matches whatever the whole pattern matches and more: the
    /// backtracking engine runs only for a pattern whose relaxed form
    /// matches (most User-Agents match none, and the engine is slow).
    isbot_fancy: Vec<(fancy_regex::Regex, bool)>,
    /// uap-core families of automated clients (bots, HTTP libraries).
    automation: regex::Regex,
    /// Device-model slots and app package names: text that is no evidence.
    neutral: regex::Regex,
    tokens: AhoCorasick,
    /// For each token pattern: the bot's registry name.
    token_bot: Vec<String>,
    /// For each token pattern: the token as the registry writes it.
    token_text: Vec<String>,
    /// For each token pattern: the bot's category's client type.
    token_type: Vec<crate::ClientType>,
    /// The words that name a kind of client ([`crate::client::KEYWORDS`]).
    kinds: AhoCorasick,
    /// For each of them: its type, its type's rank in
    /// [`crate::client::KEYWORDS`] (the lower wins) and whether it must
    /// start a word.
    kind_of: Vec<(crate::ClientType, usize, bool)>,
    /// The tokens and the words together, asked only whether either
    /// occurs: a string with neither (a browser's, nearly every distinct
    /// one in a busy log) is settled in one pass instead of two.
    any: AhoCorasick,
}

impl std::fmt::Debug for UaClassifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UaClassifier")
            .field("patterns", &self.pattern_text.len())
            .field("isbot", &(self.isbot_text.len() + self.isbot_fancy.len()))
            .field("tokens", &self.token_bot.len())
            .finish()
    }
}

/// crawler-user-agents patterns that also match in-app browsers (isbot's
/// browser fixtures: Viber, Slack, Firefox's fetch library). `Sogou` also names Sogou's browser (`SogouMobileBrowser`, `SogouMSE`);
/// Sogou's spiders say `spider`.
const PATTERNS_THAT_MATCH_BROWSERS: &[&str] = &["Fetch\\/", "Viber", "Sogou"];

/// isbot's patterns that are ordinary words or shapes of client software:
/// browsers with plugins (`chromeframe`), download managers, media and
/// podcast players, news and RSS apps, Java phones, app names with only a
/// version. They are evidence only when uap-core cannot name the client.
pub const GENERIC_ISBOT_PATTERNS: &[&str] = &[
    "^[\\w \\.\\-\\(?:\\):%]+(?:/v?\\d+(?:\\.\\d+)?(?:\\.\\d{1,10})*?)?(?:,|$)",
    "^[\\w\\-]+/[\\w]+$",
    "^\\w+/[\\w\\(\\)]*$",
    "^\\w+/\\d\\.\\d\\s\\([\\w@]+\\)$",
    "^[^ ]{50,}$",
    "^\\d+\\b",
    "\\(\\)",
    "\\b\\w+\\.ai",
    "(?:^|[^g])news(?!sapphire)",
    "24x7",
    "capture",
    "catch",
    "chromeframe",
    "discovery",
    "download",
    "java(?!;)",
    "manager",
    "parser",
    "radar",
    "server",
    "sogou",
    "torrent",
];

/// uap-core families that name automated clients rather than browsers or
/// apps: its bot matchers yield the bot's own name, its library parsers the
/// library's.
const AUTOMATION_FAMILY: &str = r"(?i)bot|spider|crawl|scrape|archiver|indexer|pinger|synthetic|http|request|curl|wget|sdk|python|java|phantom|httrack|openvas|monitis|site24x7|proxy|pingdom|ptst|datanyze|statuscake|externalhit|nutch|fetch|boto|\bcli\b|client|library|headless|update|cryptoapi|powershell";

/// Text that is no evidence of automation: the device model and build of an
/// Android platform comment (`Android 7.0; M bot Tab 103 Build/N9F27F`), and
/// an app's reverse-DNS package name (`com.google.android.youtube`).
const NEUTRAL_TEXT: &str = r"Android[ /]?[\d.]*;(?:\s*(?:U|[a-z]{2,3}(?:[-_][A-Za-z]{2,4})?);)*\s*(?P<model>[^;)\[]+?(?:\s*;?\s*Build/[^;)]*)?)\s*[;)]|(?:^|[\s;(\[,])(?P<package>(?:com|org|net|tv|io|air\.com)\.[A-Za-z][\w]*(?:\.[A-Za-z_][\w]*)+)";

/// Words one of which every match of [`NEUTRAL_TEXT`] holds (a test
/// keeps the two together).
const NEUTRAL_HINTS: [&str; 6] = ["Android", "com.", "org.", "net.", "tv.", "io."];

/// Whether `text` holds one of [`NEUTRAL_HINTS`]: a word, or a label
/// and its dot looked for at each dot (a few in a User-Agent, found with
/// the standard library's byte search), where an automaton over the six
/// would step through every byte.
fn holds_a_hint(text: &str) -> bool {
    let dotted = |h: &str| h.ends_with('.');
    NEUTRAL_HINTS.iter().any(|h| !dotted(h) && text.contains(h))
        || text.match_indices('.').any(|(i, _)| {
            NEUTRAL_HINTS
                .iter()
                .any(|h| dotted(h) && text[..=i].ends_with(h))
        })
}

/// The patterns of `set` that match `text`, in order. The set is asked
/// whether anything matches first: most strings (browsers') match none,
/// and asking which is a search for every pattern and a walk over all.
fn which(set: &RegexSet, text: &str) -> Vec<usize> {
    if set.is_match(text) {
        set.matches(text).into_iter().collect()
    } else {
        Vec::new()
    }
}

/// Escapes a `-` that follows a class escape (`\\w-`, `\\d-`) inside a
/// bracket expression, as JavaScript reads it.
fn js_class_dashes(p: &str) -> String {
    let mut out = String::with_capacity(p.len());
    let (mut in_class, mut escaped, mut prev_class_escape) = (false, false, false);
    for c in p.chars() {
        if escaped {
            out.push(c);
            escaped = false;
            prev_class_escape = in_class && matches!(c, 'w' | 'W' | 'd' | 'D' | 's' | 'S');
            continue;
        }
        match c {
            '\\' => escaped = true,
            '[' => in_class = true,
            ']' => in_class = false,
            '-' if in_class && prev_class_escape => {
                out.push_str("\\-");
                prev_class_escape = false;
                continue;
            }
            _ => {}
        }
        prev_class_escape = false;
        out.push(c);
    }
    out
}

/// Reads uap extras: `user_agent_parsers` with `regex` and either
/// `family_replacement` or `family_name`.
fn extras(text: &str) -> Result<Vec<user_agent::Parser<'static>>, String> {
    let root = marked_yaml::parse_yaml(0, text).map_err(|e| format!("uap extras: {e}"))?;
    let Some(list) = root
        .as_mapping()
        .and_then(|m| m.get_sequence("user_agent_parsers"))
    else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for item in list.iter() {
        let Some(m) = item.as_mapping() else { continue };
        let get = |k: &str| {
            m.get_node(k)
                .and_then(Node::as_scalar)
                .map(|s| s.as_str().to_owned())
        };
        let Some(regex) = get("regex") else {
            return Err("uap extras: a parser without `regex`".into());
        };
        out.push(user_agent::Parser {
            regex: regex.into(),
            family_replacement: get("family_replacement")
                .or_else(|| get("family_name"))
                .map(Into::into),
            ..user_agent::Parser::default()
        });
    }
    Ok(out)
}

/// `p` without its look-around groups (`(?=…)`, `(?!…)`, `(?<=…)`,
/// `(?<!…)`): a pattern that matches wherever `p` does. Escapes and
/// bracket classes are skipped over whole.
fn without_lookaround(p: &str) -> String {
    let b = p.as_bytes();
    let mut out = String::with_capacity(p.len());
    let mut i = 0;
    // Start of the copied run not yet written.
    let mut from = 0;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'[' => i = class_end(b, i),
            b'(' if ["(?=", "(?!", "(?<=", "(?<!"]
                .iter()
                .any(|l| b[i..].starts_with(l.as_bytes())) =>
            {
                out.push_str(&p[from..i]);
                let mut depth = 0usize;
                while i < b.len() {
                    match b[i] {
                        b'\\' => i += 1,
                        b'[' => {
                            i = class_end(b, i);
                            continue;
                        }
                        b'(' => depth += 1,
                        b')' => {
                            depth -= 1;
                            if depth == 0 {
                                i += 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                    i += 1;
                }
                from = i.min(b.len());
            }
            _ => i += 1,
        }
    }
    out.push_str(p.get(from..).unwrap_or(""));
    out
}

/// The index just past the bracket class that opens at `b[i]`.
fn class_end(b: &[u8], mut i: usize) -> usize {
    i += 1;
    if b.get(i) == Some(&b'^') {
        i += 1;
    }
    // A `]` first in the class is a literal.
    if b.get(i) == Some(&b']') {
        i += 1;
    }
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b']' => return i + 1,
            _ => i += 1,
        }
    }
    b.len()
}

/// True when the match `[s, e)` in `hay` stands as a whole word.
fn whole_word(hay: &[u8], s: usize, e: usize) -> bool {
    let alnum = |b: u8| b.is_ascii_alphanumeric();
    (s == 0 || !alnum(hay[s - 1])) && (e == hay.len() || !alnum(hay[e]))
}

/// True when the match `[s, e)` names a bot without claiming to be it:
/// it follows the word `like` (`like FeedFetcher-Google`, `like Gecko`),
/// or it sits inside a URL or an e-mail address (`+https://openai.com/gptbot`,
/// `crawler@googlebot.example`).
fn mention(hay: &[u8], s: usize, e: usize) -> bool {
    let before = hay[..s].trim_ascii_end();
    let word_start = before
        .iter()
        .rposition(|b| !b.is_ascii_alphabetic())
        .map_or(0, |i| i + 1);
    if before.len() < s && before[word_start..].eq_ignore_ascii_case(b"like") {
        return true;
    }
    // The space-, `;`-, `(`- or `)`-delimited word around the match.
    let delim = |b: &u8| b.is_ascii_whitespace() || matches!(b, b';' | b'(' | b')' | b',');
    let ws = hay[..s].iter().rposition(delim).map_or(0, |i| i + 1);
    let we = hay[e..].iter().position(delim).map_or(hay.len(), |i| e + i);
    let word = &hay[ws..we];
    let lower = word.to_ascii_lowercase();
    lower.windows(3).any(|w| w == b"://")
        || lower.starts_with(b"www.")
        || lower.starts_with(b"+www.")
        || hay[ws..s].contains(&b'@')
        || hay[ws..s].contains(&b'/') && lower.contains(&b'.')
}

impl UaClassifier {
    /// Builds a classifier from uap-core regexes, the extras, crawler
    /// patterns (one regex per line, `#` comments) and a registry.
    pub fn new(
        regexes: &str,
        extras_text: &str,
        patterns: &str,
        isbot: &str,
        registry: &Registry,
    ) -> Result<UaClassifier, crate::Error> {
        let ua = compile_uap(regexes, extras_text).map_err(crate::Error::Classifier)?;
        Self::build(Uap::ready(ua), patterns, isbot, registry, 1).map_err(crate::Error::Classifier)
    }

    fn build(
        ua: Uap,
        patterns: &str,
        isbot: &str,
        registry: &Registry,
        threads: usize,
    ) -> Result<UaClassifier, String> {
        // Syntax checks only: compiling each pattern on its own just to
        // see that it compiles would double the start-up time.
        let compiles = |p: &str| regex_syntax::Parser::new().parse(p).is_ok();
        // isbot's patterns: those the regex crate compiles in one set, the
        // look-around ones apart.
        let isbot_all: Vec<String> = if isbot.trim().is_empty() {
            Vec::new()
        } else {
            serde_json::from_str(isbot).map_err(|e| format!("isbot patterns: {e}"))?
        };
        // JavaScript reads `-` after a class escape inside `[...]` as a
        // literal; Rust's regex wants it escaped.
        let isbot_all: Vec<(String, bool)> = isbot_all
            .into_iter()
            .map(|p| {
                let generic = GENERIC_ISBOT_PATTERNS.contains(&p.as_str());
                (js_class_dashes(&p), generic)
            })
            .collect();
        let (isbot_all, fancy): (Vec<_>, Vec<_>) =
            isbot_all.into_iter().partition(|(p, _)| compiles(p));
        let (isbot_text, isbot_generic): (Vec<String>, Vec<bool>) = isbot_all.into_iter().unzip();
        // The look-around patterns without their look-arounds. A relaxed
        // form the regex crate cannot compile matches everything: its
        // pattern always runs.
        let isbot_fancy_pre: Vec<String> = fancy
            .iter()
            .map(|(p, _)| without_lookaround(p))
            .map(|p| if compiles(&p) { p } else { String::new() })
            .collect();
        // The crawler patterns the regex crate can compile (look-around
        // ones are left out).
        let pattern_text: Vec<String> = patterns
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .filter(|l| compiles(l))
            .filter(|l| !PATTERNS_THAT_MATCH_BROWSERS.contains(l))
            .map(str::to_owned)
            .chain(
                OWN_PATTERNS
                    .lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty() && !l.starts_with('#'))
                    .map(|l| format!("(?i){l}")),
            )
            .collect();
        let mut token_text = Vec::new();
        let mut token_bot = Vec::new();
        let mut token_type = Vec::new();
        for b in registry.bots() {
            for t in b.tokens() {
                if t.len() >= 3 {
                    token_text.push(t.to_owned());
                    token_bot.push(b.name.clone());
                    token_type.push(crate::ClientType::of_category(b.category));
                }
            }
        }
        let mut words = Vec::new();
        let mut kind_of = Vec::new();
        for (rank, (t, ws)) in crate::client::KEYWORDS.iter().enumerate() {
            for w in *ws {
                words.push(*w);
                // Short words must start a word (`vlc`, not `…xvlc…`).
                kind_of.push((*t, rank, w.len() < 5));
            }
        }
        // All of them in one set; isbot's read regardless of case, as
        // isbot does.
        let robot_set = || {
            RegexSet::new(
                isbot_text
                    .iter()
                    .chain(&isbot_fancy_pre)
                    .map(|p| format!("(?i:{p})"))
                    .chain(pattern_text.iter().cloned()),
            )
            .map_err(|e| format!("robot patterns: {e}"))
        };
        // The look-around patterns whole, uap-core's families of automated
        // clients, neutral text and the registry's tokens.
        let rest = || -> Result<_, String> {
            let isbot_fancy = fancy
                .iter()
                .map(|(p, generic)| {
                    fancy_regex::Regex::new(&format!("(?i){p}"))
                        .map(|r| (r, *generic))
                        .map_err(|e| format!("isbot pattern {p}: {e}"))
                })
                .collect::<Result<Vec<_>, _>>()?;
            let automation = regex::Regex::new(AUTOMATION_FAMILY).map_err(|e| e.to_string())?;
            let neutral = regex::Regex::new(NEUTRAL_TEXT).map_err(|e| e.to_string())?;
            // Full DFAs: a User-Agent is searched byte by byte with one
            // table read each, where the default automaton takes several.
            let tokens = AhoCorasickBuilder::new()
                .ascii_case_insensitive(true)
                .match_kind(MatchKind::LeftmostLongest)
                .kind(Some(AhoCorasickKind::DFA))
                .build(&token_text)
                .map_err(|e| format!("registry tokens: {e}"))?;
            let kinds = AhoCorasickBuilder::new()
                .ascii_case_insensitive(true)
                .kind(Some(AhoCorasickKind::DFA))
                .build(&words)
                .map_err(|e| format!("client kinds: {e}"))?;
            let any = AhoCorasickBuilder::new()
                .ascii_case_insensitive(true)
                .kind(Some(AhoCorasickKind::DFA))
                .build(
                    token_text
                        .iter()
                        .map(String::as_str)
                        .chain(words.iter().copied()),
                )
                .map_err(|e| format!("tokens and client kinds: {e}"))?;
            Ok((isbot_fancy, automation, neutral, tokens, kinds, any))
        };
        // The set is half the compiling: with a second thread, it
        // compiles beside the rest.
        let (robot_patterns, rest) = if threads > 1 {
            std::thread::scope(|s| {
                let set = s.spawn(robot_set);
                let rest = rest();
                let set = set
                    .join()
                    .unwrap_or_else(|_| Err("robot patterns: the compiling thread failed".into()));
                (set, rest)
            })
        } else {
            (robot_set(), rest())
        };
        let robot_patterns = robot_patterns?;
        let (isbot_fancy, automation, neutral, tokens, kinds, any) = rest?;
        Ok(UaClassifier {
            ua,
            alone: (0..isbot_text.len() + pattern_text.len())
                .map(|_| std::sync::OnceLock::new())
                .collect(),
            robot_patterns,
            pattern_text,
            isbot_text,
            isbot_generic,
            isbot_fancy,
            automation,
            neutral,
            tokens,
            token_bot,
            token_text,
            token_type,
            kinds,
            kind_of,
            any,
        })
    }

    /// The classifier over the shipped data and `registry`.
    pub fn bundled(registry: &Registry) -> Result<UaClassifier, crate::Error> {
        UaClassifier::bundled_on(registry, 1)
    }

    /// [`UaClassifier::bundled`] for a process with `threads` threads of
    /// work: with more than one, uap-core's parsers are compiled at their
    /// first use ([`UaClassifier::family`], or a decision that needs
    /// them), not before, and the patterns compile on two threads.
    pub fn bundled_on(registry: &Registry, threads: usize) -> Result<UaClassifier, crate::Error> {
        let ua = if threads > 1 {
            Uap::lazy(UAP_REGEXES, UAP_EXTRAS)
        } else {
            Uap::ready(compile_uap(UAP_REGEXES, UAP_EXTRAS).map_err(crate::Error::Classifier)?)
        };
        Self::build(ua, CRAWLER_PATTERNS, ISBOT_PATTERNS, registry, threads)
            .map_err(crate::Error::Classifier)
    }

    /// uap-core's family for a User-Agent (`Other` when nothing matches).
    pub fn family(&self, ua: &str) -> String {
        self.ua
            .get()
            .extract(ua)
            .map_or_else(|| "Other".to_owned(), |v| v.family.into_owned())
    }

    /// The registered bot a User-Agent names, if any: the longest registry
    /// token standing as a whole word, outside URLs and e-mail addresses and
    /// not after `like` (a mention is not a claim).
    pub fn claimed_bot(&self, ua: &str) -> Option<&str> {
        self.claim(ua).map(|i| self.token_bot[i].as_str())
    }

    /// The registry token pattern `ua` claims ([`UaClassifier::claimed_bot`]).
    fn claim(&self, ua: &str) -> Option<usize> {
        let hay = ua.as_bytes();
        self.tokens
            .find_iter(hay)
            .filter(|m| {
                // Short tokens that are plain words (`Code`, `Spider`) claim
                // only in the registry's own case, so `code.google.com` or
                // `Sogou web spider` claim nothing; longer tokens match in
                // any case (`GoogleBot`).
                let token = &self.token_text[m.pattern().as_usize()];
                whole_word(hay, m.start(), m.end())
                    && (token.len() >= MIN_CASELESS_TOKEN
                        || &hay[m.start()..m.end()] == token.as_bytes())
                    && !mention(hay, m.start(), m.end())
            })
            .max_by_key(|m| m.end() - m.start())
            .map(|m| m.pattern().as_usize())
    }

    /// `ua` with the text that is no evidence (device models and builds,
    /// app package names) blanked out.
    fn without_neutral_text<'a>(&self, ua: &'a str) -> std::borrow::Cow<'a, str> {
        // Every match of the pattern holds one of these words (its first
        // branch `Android`, its second a package's first label and dot):
        // a string without them (most desktop browsers') is not searched.
        if !holds_a_hint(ua) {
            return std::borrow::Cow::Borrowed(ua);
        }
        let mut out: Option<Vec<u8>> = None;
        for c in self.neutral.captures_iter(ua) {
            for m in [c.name("model"), c.name("package")].into_iter().flatten() {
                let bytes = out.get_or_insert_with(|| ua.as_bytes().to_vec());
                // Blanking whole characters keeps the text UTF-8.
                bytes[m.start()..m.end()].fill(b' ');
            }
        }
        match out {
            Some(b) => String::from_utf8(b).map_or(std::borrow::Cow::Borrowed(ua), Into::into),
            None => std::borrow::Cow::Borrowed(ua),
        }
    }

    /// True when uap-core names the client as a browser or an app, not as
    /// a bot or an HTTP library.
    fn names_a_client(&self, family: Option<&str>) -> bool {
        family.is_some_and(|f| f != "Other" && !f.is_empty() && !self.automation.is_match(f))
    }

    /// The reason a pattern (number `k` of [`UaClassifier::alone`], its
    /// text `pattern`) gives for `text`: what it matched, in words.
    fn says(&self, k: usize, pattern: &str, text: &str) -> String {
        let re = self.alone.get(k).and_then(|c| {
            c.get_or_init(|| {
                regex::RegexBuilder::new(pattern)
                    .case_insensitive(true)
                    .build()
                    .ok()
            })
            .as_ref()
        });
        says(re.and_then(|r| r.find(text)).map(|m| m.as_str()))
    }

    /// Why the patterns take `ua` for a robot, if they do. A specific
    /// pattern decides; a generic one only when uap-core cannot name the
    /// client (`names_a_client`, which looks the family up).
    fn pattern_reason(
        &self,
        ua: &str,
        names_a_client: &mut dyn FnMut() -> bool,
    ) -> Option<(String, bool)> {
        let text = self.without_neutral_text(ua);
        let text = text.as_ref();
        let mut generic = None;
        let matched = which(&self.robot_patterns, text);
        let (n_isbot, n_fancy) = (self.isbot_text.len(), self.isbot_fancy.len());
        let split = matched.partition_point(|&i| i < n_isbot);
        let (isbot, rest) = matched.split_at(split);
        let split = rest.partition_point(|&i| i < n_isbot + n_fancy);
        let (fancy, crawler) = rest.split_at(split);
        for &i in isbot {
            // The bare `name/version` shape is generic; the same pattern
            // matching a plain `name,` prefix (`Anonymous, Mozilla/5.0 …`)
            // is not, unlike a structured one (`dv(iPh10,3);pr(UCBrowser…`).
            let is_generic = self.isbot_generic[i]
                && !(self.isbot_text[i].ends_with("(?:,|$)")
                    && text
                        .split_once(',')
                        .is_some_and(|(name, _)| !name.contains('(')));
            let why = self.says(i, &self.isbot_text[i], text);
            if !is_generic {
                return Some((why, false));
            }
            generic.get_or_insert(why);
        }
        for &i in fancy {
            let (r, is_generic) = &self.isbot_fancy[i - n_isbot];
            if r.is_match(text).unwrap_or(false) {
                let found = r.find(text).ok().flatten().map(|m| m.as_str());
                let why = says(found);
                if !is_generic {
                    return Some((why, false));
                }
                generic.get_or_insert(why);
            }
        }
        if let Some(&i) = crawler.first() {
            let i = i - n_isbot - n_fancy;
            let k = n_isbot + i;
            return Some((self.says(k, &self.pattern_text[i], text), false));
        }
        if let Some(why) = generic
            && !names_a_client()
        {
            return Some((why, true));
        }
        if ua.trim().is_empty() || ua.trim() == "-" {
            return Some(("empty User-Agent".to_owned(), false));
        }
        None
    }

    /// Classifies one User-Agent. uap-core's parsers are consulted only
    /// when the decision needs them (most User-Agents are decided by the
    /// patterns alone).
    pub fn classify(&self, ua: &str) -> UaInfo {
        let ua = if ua.len() > MAX_UA_BYTES {
            let mut end = MAX_UA_BYTES;
            while !ua.is_char_boundary(end) {
                end -= 1;
            }
            &ua[..end]
        } else {
            ua
        };
        let mut family: Option<Option<String>> = None;
        // Claims come from registry tokens only: a uap family can name a
        // browser after a robot (the bottica extra maps the DuckDuckGo
        // browser app to `DuckDuckBot`).
        // Neither a token nor a word in it: no claim and no kind named.
        let words = self.any.is_match(ua.as_bytes());
        let claim = if words { self.claim(ua) } else { None };
        let claimed = claim.map(|i| self.token_bot[i].clone());
        let mut weak = false;
        // A phone's browser, or a desktop's that robot lists name, is a
        // person's, whatever patterns its odd User-Agent meets.
        let phone = claimed.is_none() && crate::client::is_named_browser(ua);
        let reason = if let Some(c) = &claimed {
            Some(format!("names the registered bot {c}"))
        } else if phone {
            None
        } else {
            let cell = &mut family;
            self.pattern_reason(ua, &mut || {
                let f = cell.get_or_insert_with(|| {
                    self.ua.get().extract(ua).map(|v| v.family.into_owned())
                });
                self.names_a_client(f.as_deref())
            })
            .map(|(why, generic)| {
                weak = generic;
                why
            })
        };
        let client_type = if phone {
            crate::ClientType::Browser
        } else {
            self.type_of(ua, claim, words, reason.as_deref(), weak, &mut family)
        };
        UaInfo {
            is_bot: reason.is_some(),
            family: family.flatten(),
            claimed_bot: claimed,
            reason,
            client_type,
        }
    }

    /// The kind of client `ua` is, given its claim, whether it holds any
    /// token or word at all, and its robot reason; `family` is uap-core's,
    /// looked up here only for a string that is neither a robot's nor a
    /// browser's by its shape.
    fn type_of(
        &self,
        ua: &str,
        claim: Option<usize>,
        words: bool,
        reason: Option<&str>,
        weak: bool,
        family: &mut Option<Option<String>>,
    ) -> crate::ClientType {
        use crate::ClientType as T;
        if let Some(i) = claim {
            return self.token_type[i];
        }
        if ua.trim().is_empty() || ua.trim() == "-" {
            return T::Unknown;
        }
        if let Some(t) = words.then(|| self.named_kind(ua)).flatten() {
            return t;
        }
        // Only generic words took it for a robot, and it names a person's
        // app (a podcast app, a phone's or a watch's, a TV's): an app.
        if reason.is_some() && weak && crate::client::names_an_app(ua) {
            return T::Browser;
        }
        if reason.is_some() {
            return T::Crawler;
        }
        let t = ua.trim_start();
        if t.starts_with("Mozilla/") || t.starts_with("Opera") {
            return T::Browser;
        }
        let f =
            family.get_or_insert_with(|| self.ua.get().extract(ua).map(|v| v.family.into_owned()));
        if self.names_a_client(f.as_deref()) {
            T::Browser
        } else {
            T::Unknown
        }
    }

    /// The kind the words of `ua` name, the first in
    /// [`crate::client::KEYWORDS`]' order when several do.
    pub fn named_kind(&self, ua: &str) -> Option<crate::ClientType> {
        use crate::ClientType as T;
        let hay = ua.as_bytes();
        // Most strings name no kind: a search that stops at the first word
        // settles them in fewer steps than the overlapping one.
        if !self.kinds.is_match(hay) {
            return None;
        }
        let mut robot: Option<bool> = None;
        self.kinds
            .find_overlapping_iter(hay)
            .map(|m| (m, self.kind_of[m.pattern().as_usize()]))
            .filter(|(m, (t, _, starts))| {
                // What a declared robot is built on (`serpstatbot …
                // curl/7.58.0`, a crawler rendering with HeadlessChrome)
                // does not make it a library or a headless browser.
                if matches!(t, T::Library | T::Headless)
                    && *robot.get_or_insert_with(|| crate::client::says_robot(ua))
                {
                    return false;
                }
                !starts || m.start() == 0 || !hay[m.start() - 1].is_ascii_alphanumeric()
            })
            .min_by_key(|(_, (_, rank, _))| *rank)
            .map(|(_, (t, _, _))| t)
    }
}

/// A display name for an unregistered robot: its product, never a stray
/// word, a counter or a quote. The User-Agent is read without the quotes
/// or the `User-Agent:` a client wrapped it in; then its leading product
/// when it does not pose as a browser (`Chef Client/10.18` → `Chef
/// Client`; `Feedbin - 1 subscribers` → `Feedbin`; `Digg Feed Fetcher 1.0
/// (…)` → `Digg Feed Fetcher`; `Expanse, a Palo Alto Networks company, …`
/// → `Expanse`; `nutch-1.4/Nutch-1.4` → `nutch`), else what follows
/// `compatible;` when it is not a browser's or a platform's (`(compatible;
/// Indy Library)` → `Indy Library`, `(compatible; Google Desktop/5.9)` →
/// `Google Desktop`), else the first `name/version` product that is not a
/// browser's or a platform's (`Mail.RU_Bot/2.0` → `Mail.RU_Bot`,
/// `MJ12bot/v1.4` → `MJ12bot`), else the first word that says robot (`…
/// Firefox/1.5.0.11; 360Spider` → `360Spider`), else a bare word after a browser's tokens (`Mozilla/5.0 Keydrop` → `Keydrop`), else
/// the host of the URL it gives
/// (`http://www.tropicdesigns.net` → `tropicdesigns.net`, `via
/// docs.google.com/viewer` → `docs.google.com`), else the User-Agent
/// itself (`Mozilla/4.0 (compatible;)`: a robot that names nothing).
pub fn robot_name(ua: &str) -> Option<String> {
    let ua = unwrapped(ua);
    if ua.is_empty() {
        return None;
    }
    if !ua.starts_with("Mozilla/")
        && let Some(lead) = leading_product(ua)
    {
        return Some(lead);
    }
    if let Some(name) = compatible_name(ua)
        .or_else(|| versioned_product(ua))
        .or_else(|| robot_word(ua))
        .or_else(|| bare_word(ua))
    {
        return Some(name);
    }
    Some(url_host(ua).unwrap_or(ua).to_owned())
}

/// The User-Agent without what a client wrapped around it: surrounding
/// quotes (`"Mozilla/5.0 (…)"`, `'Mozilla…`) and a `User-Agent:` prefix.
fn unwrapped(ua: &str) -> &str {
    let mut ua = ua.trim();
    loop {
        let before = ua;
        ua = ua.trim_matches(|c| matches!(c, '"' | '\'' | '`')).trim();
        if ua
            .get(..11)
            .is_some_and(|p| p.eq_ignore_ascii_case("user-agent:"))
        {
            ua = ua[11..].trim();
        }
        if ua == before {
            return ua;
        }
    }
}

/// Names of browsers, engines and platforms: never a robot's name.
const NOT_PRODUCTS: &[&str] = &[
    "mozilla",
    "applewebkit",
    "khtml",
    "gecko",
    "chrome",
    "chromium",
    "safari",
    "version",
    "mobile",
    "firefox",
    "edge",
    "edg",
    "opr",
    "opera",
    "msie",
    "trident",
    "like",
    "compatible",
    "linux",
    "windows",
    "android",
    "x11",
    "macintosh",
    "intel",
    "iphone",
    "ipad",
    "cpu",
    "u",
    "rv",
    "wow64",
    "win64",
    "x64",
    "x86_64",
    "ubuntu",
    "fedora",
    "cros",
    "headlesschrome",
    "yabrowser",
    "samsungbrowser",
    "ucbrowser",
    "release",
    "build",
    "profile",
    "configuration",
];

fn not_a_product(word: &str) -> bool {
    NOT_PRODUCTS.iter().any(|b| b.eq_ignore_ascii_case(word))
}

/// Whether `v` reads as a version: a digit first, or `v` and a digit.
fn is_version(v: &str) -> bool {
    let mut c = v.chars();
    match c.next() {
        Some(d) if d.is_ascii_digit() => true,
        Some('v' | 'V') => c.next().is_some_and(|d| d.is_ascii_digit()),
        _ => false,
    }
}

/// `name` without a version stuck to it (`nutch-1.4` → `nutch`,
/// `binlar_2.6.3` → `binlar`).
fn without_version(name: &str) -> &str {
    match name.rfind(['-', '_']) {
        Some(i) if i > 0 && is_version(&name[i + 1..]) => &name[..i],
        _ => name,
    }
}

/// The product a User-Agent that does not pose as a browser starts with:
/// up to its version, comment, list or address, its trailing version words
/// dropped; `None` when that is not a name (a sentence, a browser's name,
/// nothing).
fn leading_product(ua: &str) -> Option<String> {
    let mut end = ua
        .find(['/', '(', ';', ',', '+', '[', '"', '<'])
        .unwrap_or(ua.len());
    if let Some(i) = ua[..end].find(" - ") {
        end = i;
    }
    let mut words: Vec<&str> = Vec::new();
    for w in ua[..end].split_whitespace() {
        // An address or a counter ends the name.
        if w.contains('@') || w.contains("://") || w.starts_with("www.") {
            break;
        }
        words.push(w);
    }
    while words.last().is_some_and(|w| is_version(w)) {
        words.pop();
    }
    if let Some(last) = words.last_mut() {
        *last = without_version(last.trim_end_matches(['-', ':', '.']));
    }
    let name = words.join(" ");
    let name = name.trim_matches(|c: char| matches!(c, '-' | ':' | ',' | '.') || c.is_whitespace());
    if name.is_empty() || name.len() > 40 || words.len() > 4 || not_a_product(name) {
        return None;
    }
    Some(name.to_owned())
}

/// The first `name/version` product of `ua` that is not a browser's,
/// an engine's or a platform's, and not part of an address.
fn versioned_product(ua: &str) -> Option<String> {
    let token = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '!');
    let b = ua.as_bytes();
    let mut i = 0;
    while i < ua.len() {
        let c = ua[i..].chars().next()?;
        if !token(c) || (i > 0 && token(ua[..i].chars().next_back().unwrap_or(' '))) {
            i += c.len_utf8();
            continue;
        }
        let len = ua[i..].find(|c: char| !token(c)).unwrap_or(ua.len() - i);
        let (name, end) = (&ua[i..i + len], i + len);
        let in_address = ua[..i].ends_with(['/', '@', ':']) || name.contains("..");
        if b.get(end) == Some(&b'/')
            && !in_address
            && is_version(&ua[end + 1..])
            && !not_a_product(name)
            && name.chars().any(|c| c.is_ascii_alphabetic())
        {
            return Some(name.trim_end_matches('.').to_owned());
        }
        i = end;
    }
    None
}

/// What a `compatible;` comment names first, when it is a product and
/// not a browser (`MSIE 6.0`) or a platform.
fn compatible_name(ua: &str) -> Option<String> {
    let at = ua.to_ascii_lowercase().find("compatible;")? + "compatible;".len();
    let rest = &ua[at..];
    let mut part = &rest[..rest.find([';', ')']).unwrap_or(rest.len())];
    // `Google Desktop/5.9.1005` is `Google Desktop`.
    if let Some(i) = part.find('/')
        && is_version(&part[i + 1..])
    {
        part = &part[..i];
    }
    let mut words: Vec<&str> = part.split_whitespace().collect();
    while words.last().is_some_and(|w| is_version(w)) {
        words.pop();
    }
    let name = words.join(" ");
    let first = words.first()?;
    (name.len() <= 40
        && words.len() <= 4
        && !not_a_product(first)
        && !first.contains(['/', '@', ':', '+'])
        && name.chars().any(|c| c.is_ascii_alphabetic()))
    .then_some(name)
}

/// A bare word after a browser's tokens, outside comments (`Mozilla/5.0
/// Keydrop` → `Keydrop`).
fn bare_word(ua: &str) -> Option<String> {
    let mut depth = 0usize;
    let mut outside = String::new();
    for c in ua.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            c if depth == 0 => outside.push(c),
            _ => {}
        }
    }
    outside
        .split_whitespace()
        .map(|w| w.trim_end_matches([';', ',']))
        .find(|w| {
            !w.contains(['/', '@', '.', ',', ';', ':', '=', '+'])
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
                && w.chars().any(|c| c.is_ascii_alphabetic())
                && w.len() >= 3
                && !not_a_product(w)
        })
        .map(str::to_owned)
}

/// Words that name what a robot is (`360Spider`, `GoogleImageProxy`).
const ROBOT_WORDS: &[&str] = &[
    "bot",
    "spider",
    "crawl",
    "fetch",
    "proxy",
    "preview",
    "favicon",
    "archiver",
    "validator",
];

/// The first word of `ua` that says robot, outside addresses.
fn robot_word(ua: &str) -> Option<String> {
    let is_word = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_');
    let mut start = 0;
    for (i, c) in ua.char_indices().chain([(ua.len(), ' ')]) {
        if is_word(c) {
            continue;
        }
        let word = &ua[start..i];
        let in_address = ua[..start].ends_with(['.', '/', '@']) || c == '@' || c == '.';
        let lower = word.to_ascii_lowercase();
        if !word.is_empty() && !in_address && ROBOT_WORDS.iter().any(|w| lower.contains(w)) {
            return Some(word.to_owned());
        }
        start = i + c.len_utf8();
    }
    None
}

/// The host of the first `http://`, `https://`, `www.` or `via` address in `ua`,
/// without `www.`.
fn url_host(ua: &str) -> Option<&str> {
    let lower = ua.to_ascii_lowercase();
    let start = ["http://", "https://", "www.", "via "]
        .iter()
        .filter_map(|p| {
            lower
                .find(p)
                .map(|i| i + if *p == "www." { 0 } else { p.len() })
        })
        .min()?;
    let rest = &ua[start..];
    let len = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '.')))
        .unwrap_or(rest.len());
    let host = rest[..len].trim_end_matches('.');
    let host = host
        .get(..4)
        .filter(|w| w.eq_ignore_ascii_case("www."))
        .map_or(host, |_| &host[4..]);
    host.contains('.').then_some(host)
}

#[cfg(test)]
mod name_tests {
    use super::*;

    /// The words that let a string skip the neutral-text search are in
    /// every match of it: over the labelled User-Agents and cases of each
    /// branch.
    #[test]
    fn every_neutral_match_holds_a_hint() {
        let re = regex::Regex::new(NEUTRAL_TEXT).expect("pattern");
        let labelled = include_str!("../tests/data/labeled_ua.tsv");
        let mut matched = 0;
        let cases = [
            "Mozilla/5.0 (Linux; Android 7.0; M bot Tab 103 Build/N9F27F) AppleWebKit/537.36",
            "Mozilla/5.0 (Linux; U; Android 4.4.2; en-us; SM-T230 Build/KOT49H) Safari/534.30",
            "Dalvik/2.1.0 (Linux; U; Android 11; Pixel 5 Build/RQ3A.210805.001.A1)",
            "YouTube/17.36.4 (com.google.android.youtube; U; Android 12) gzip",
            "Podcasts (org.example.podcasts.app; build:2)",
            "tv.twitch.android.app/14.3.1",
            "[io.flutter.app]",
            "Player (air.com.example.player; 1.0)",
        ];
        for ua in labelled
            .lines()
            .skip(1)
            .filter_map(|l| l.splitn(4, '\t').nth(3))
            .chain(cases)
        {
            for m in re.find_iter(ua) {
                matched += 1;
                assert!(
                    NEUTRAL_HINTS.iter().any(|h| m.as_str().contains(h)),
                    "{:?} in {ua}",
                    m.as_str()
                );
            }
        }
        assert!(matched > 50, "{matched} matches");
    }

    /// Found on real logs: feature phones' browsers were taken for robots
    /// (`MAXX_MAUI WAP Browser`, a LAVA phone's), and the registry did
    /// not name Google's favicon and preview fetchers, Palo Alto's Expanse
    /// or Nokia's GenomeCrawlerd. A phone's User-Agent that claims a
    /// robot is still one.
    #[test]
    fn phone_browsers_are_browsers_and_the_registry_names_what_it_knows() {
        let c = UaClassifier::bundled(&Registry::bundled()).expect("classifier");
        for ua in [
            "MAXX_MAUI WAP Browser",
            "Maui Browser",
            "LAVA.KKT35+.FARSIGHTED60D_CN_11B_HW (MAUI/KKT35_S116_20130820;BDATE/2013/08/20 14:41;LCD/240320;CHIP/MT6260;KEY/Normal;TOUCH/0;CAMERA/1;SENSOR/0;DEV/FARSIGHTED60D_CN_11B_HW;WAP Browser/MAUI (HTTPS)) LAVA_KKT35_S116_20130820 Release/2013.08.20 WAP Browser/MAUI (HTTPS) Profile/  Q03C1-2.40 en-US",
            "Nokia6300/2.0 (05.00) Profile/MIDP-2.0 Configuration/CLDC-1.1",
        ] {
            let info = c.classify(ua);
            assert!(!info.is_bot, "{ua}: {:?}", info.reason);
            assert_eq!(info.client_type, crate::ClientType::Browser, "{ua}");
        }
        let googlebot_mobile = "Nokia6820/2.0 (4.83) Profile/MIDP-1.0 Configuration/CLDC-1.0 (compatible; Googlebot-Mobile/2.1; +http://www.google.com/bot.html)";
        assert!(c.classify(googlebot_mobile).is_bot);
        for (ua, bot) in [
            (
                "Mozilla/5.0 (Windows NT 6.1; rv:6.0) Gecko/20110814 Firefox/6.0 Google favicon",
                "Google Favicon",
            ),
            (
                "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko; Google Web Preview) Chrome/27.0.1453 Safari/537.36",
                "Google Web Preview",
            ),
            (
                "Expanse, a Palo Alto Networks company, searches across the global IPv4 space multiple times per day to identify customers&#39; presences on the Internet. If you would like to be excluded from our scans, please send IP addresses/domains to: scaninfo@paloaltonetworks.com",
                "Expanse",
            ),
            (
                "'Mozilla/5.0 (compatible; GenomeCrawlerd/1.0; +https://www.nokia.com/genomecrawler)'",
                "GenomeCrawlerd",
            ),
        ] {
            assert_eq!(c.classify(ua).claimed_bot.as_deref(), Some(bot), "{ua}");
        }
    }

    /// The one-pass filter finds something exactly when the registry's
    /// tokens or the client words do: a string it passes over neither
    /// claims a robot nor names a kind.
    #[test]
    fn any_word_is_a_token_or_a_kind() {
        let c = UaClassifier::bundled(&Registry::bundled()).expect("classifier");
        let labelled = include_str!("../tests/data/labeled_ua.tsv");
        let (mut with, mut without) = (0, 0);
        for ua in labelled
            .lines()
            .skip(1)
            .filter_map(|l| l.splitn(4, '\t').nth(3))
            .chain([
                "",
                "curl/8.0",
                "xGooglebot",
                "Mozilla/5.0 (X11; Linux x86_64)",
                "FEEDLY",
            ])
        {
            let hay = ua.as_bytes();
            let either = c.tokens.is_match(hay) || c.kinds.is_match(hay);
            assert_eq!(c.any.is_match(hay), either, "{ua:?}");
            if either {
                with += 1;
            } else {
                without += 1;
                assert_eq!(c.claim(ua), None, "{ua:?}");
                assert_eq!(c.named_kind(ua), None, "{ua:?}");
            }
        }
        assert!(
            with > 100 && without > 100,
            "{with} with, {without} without"
        );
    }

    /// The hint search answers as a plain search for each word does.
    #[test]
    fn hints_are_found_as_a_plain_search_finds_them() {
        let labelled = include_str!("../tests/data/labeled_ua.tsv");
        let mut held = 0;
        for ua in labelled
            .lines()
            .filter_map(|l| l.splitn(4, '\t').nth(3))
            .chain([
                "",
                ".",
                "com.",
                "xcom.",
                "a.com",
                "Android",
                "Androi",
                "app/1 (tv.x)",
                "io",
                "dotted.io.",
                "é.org.",
            ])
        {
            let plain = NEUTRAL_HINTS.iter().any(|h| ua.contains(h));
            assert_eq!(holds_a_hint(ua), plain, "{ua:?}");
            held += usize::from(plain);
        }
        assert!(held > 20, "{held} strings hold a hint");
    }

    #[test]
    fn lookarounds_are_dropped() {
        for (p, relaxed) in [
            ("(?:^|[^g])news(?!sapphire)", "(?:^|[^g])news"),
            (
                "(?<! channel/|google/)google(?!(?:wv|app|/google| pixel))",
                "google",
            ),
            ("(?<! cu)bots?(?:\\b|_)", "bots?(?:\\b|_)"),
            ("java(?!;)", "java"),
            ("a[(?!]b(?=c\\))d", "a[(?!]bd"),
            ("(?!x", ""),
        ] {
            assert_eq!(without_lookaround(p), relaxed, "{p}");
        }
    }

    #[test]
    fn robot_names() {
        for (ua, want) in [
            (
                "Chef Client/10.18.2 (ruby-1.9.3-p327; +http://opscode.com)",
                "Chef Client",
            ),
            ("Tiny Tiny RSS/1.11 (http://tt-rss.org/)", "Tiny Tiny RSS"),
            (
                "Mozilla/5.0 (compatible; MJ12bot/v1.4.4; http://www.majestic12.co.uk/bot.php?+)",
                "MJ12bot",
            ),
            ("Mozilla/5.0 zgrab/0.x", "zgrab"),
            ("python-requests/2.31.0", "python-requests"),
            ("curl/8.5.0", "curl"),
            // Never a browser's name or a piece of a host name.
            (
                "Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1; SV1; http://www.tropicdesigns.net)",
                "tropicdesigns.net",
            ),
            (
                "Mozilla/5.0 (Windows NT 6.1; WOW64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/32.0.1700.76 Safari/537.36,gzip(gfe) (via docs.google.com/viewer)",
                "docs.google.com",
            ),
            ("Mozilla/4.0", "Mozilla/4.0"),
            (
                "Mozilla/5.0 (Windows; U; Windows NT 5.1; fr; rv:1.8.1) VoilaBot BETA 1.2 (support.voilabot@orange-ftgroup.com)",
                "VoilaBot",
            ),
            ("Mozilla/4.0 (compatible;)", "Mozilla/4.0 (compatible;)"),
            (
                "Mozilla/5.0 (compatible; MSIE or Firefox mutant; not on Windows server; + http://tab.search.daum.net/aboutWebSearch.html) Daumoa/3.0",
                "Daumoa",
            ),
            // Found on real logs: a sentence, quotes, a counter, an
            // address, versions stuck to the name (the design half of the
            // shared logs and the issue's study log).
            (
                "Expanse, a Palo Alto Networks company, searches across the global IPv4 space multiple times per day to identify customers&#39; presences on the Internet. If you would like to be excluded from our scans, please send IP addresses/domains to: scaninfo@paloaltonetworks.com",
                "Expanse",
            ),
            (
                "'Mozilla/5.0 (compatible; GenomeCrawlerd/1.0; +https://www.nokia.com/genomecrawler)'",
                "GenomeCrawlerd",
            ),
            ("Feedbin - 1 subscribers", "Feedbin"),
            ("Embedly +support@embed.ly", "Embedly"),
            ("binlar_2.6.3 test@mgmt.mic", "binlar"),
            ("nutch-1.4/Nutch-1.4", "nutch"),
            ("LumiBot 2.0", "LumiBot"),
            (
                "Digg Feed Fetcher 1.0 (Mozilla/5.0 (Macintosh; Intel Mac OS X 10_7_1) AppleWebKit/534.48.3 (KHTML, like Gecko) Version/5.1 Safari/534.48.3)",
                "Digg Feed Fetcher",
            ),
            (
                "Mozilla/5.0 (compatible; Linux x86_64; Mail.RU_Bot/2.0; +http://go.mail.ru/help/robots)",
                "Mail.RU_Bot",
            ),
            ("Mozilla/5.0 Keydrop", "Keydrop"),
            ("Mozilla/3.0 (compatible; Indy Library)", "Indy Library"),
            (
                "Mozilla/5.0 (compatible; Google Desktop/5.9.1005.12335; http://desktop.google.com/)",
                "Google Desktop",
            ),
            (
                "Mozilla/5.0 (compatible; theoldreader.com; 2 subscribers; feed-id=2e78188bde2b643b822a26d6)",
                "theoldreader.com",
            ),
            (
                "Mozilla/5.0 (Windows NT 6.2; WOW64; rv:30.0) Gecko/20100101 Firefox/30.0 AppEngine-Google; (+http://code.google.com/appengine; appid: s~copyliugoa)",
                "AppEngine-Google",
            ),
            ("Custom-AsyncHttpClient", "Custom-AsyncHttpClient"),
            (
                "User-Agent: Mozilla/4.0 (compatible;)",
                "Mozilla/4.0 (compatible;)",
            ),
            (
                "LiveJournal.com (webmaster@livejournal.com; for http://www.livejournal.com/users/x/; 8 readers)",
                "LiveJournal.com",
            ),
        ] {
            assert_eq!(robot_name(ua).as_deref(), Some(want), "{ua}");
        }
    }
}
