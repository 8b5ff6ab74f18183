//! BotSeer's query language, parsed by hand: values carry `/`, `:`, `*`,
//! `$` and leading `-` as written (a general query parser trips on them).
//!
//! ```text
//! query   = or
//! or      = and { "OR" and }
//! and     = unary { ["AND"] unary }          (AND is the default)
//! unary   = ("-" | "NOT ") unary | atom
//! atom    = "(" or ")" | FIELD ":" value | '"' words '"' | word
//! value   = '"' text '"' | text up to a space (or a `)` closing a group)
//! ```
//!
//! Fields: `botname`, `site`, `disallow`, `allow`, `delay` (`5`, `>10`,
//! `>=1`, `<2`, `<=2`, `[1 TO 5]`, `{1 TO 5}`, `*` for any bound),
//! `favor`, `disfavor`, `nobias`, `contain` (`universal`), `sitemap`,
//! `signal`, `usage`. A malformed query is a [`QueryError`] naming its column.

use std::fmt;

/// The longest query accepted, in bytes.
pub const MAX_QUERY_BYTES: usize = 4096;
/// The deepest nesting of groups and negations.
pub const MAX_DEPTH: usize = 32;
/// The most clauses in one query.
pub const MAX_CLAUSES: usize = 256;
/// Bytes of one field's value at most (a path prefix becomes an automaton
/// over the term dictionary; its size follows the value's).
pub const MAX_VALUE_BYTES: usize = 512;

/// A field of the index a clause searches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Field {
    /// A User-agent value, or its product token.
    Botname,
    /// The host, by whole labels from the right.
    Site,
    /// A Disallow path, by prefix (`/` alone: exactly `/`).
    Disallow,
    /// An Allow path, by prefix.
    Allow,
    /// A Crawl-delay, in seconds.
    Delay,
    /// A robot the file favours (bias > 0).
    Favor,
    /// A robot the file disfavours (bias < 0).
    Disfavor,
    /// A robot the file names without bias.
    Nobias,
    /// `contain:universal`: the file has a `*` group; `contain:too-complex`:
    /// its bias was not computed (past the work budget).
    Contain,
    /// A Sitemap URL, by prefix (`*`: any).
    Sitemap,
    /// A Content-Signal (`ai-train=no`, or a name alone).
    Signal,
    /// A Content-Usage preference (`train-ai=n`, or a category alone): the
    /// file states it in some group (IETF aipref).
    Usage,
    /// A crawl whose last capture of the site found this version
    /// (`CC-MAIN-2024-10`, as named when imported).
    Crawl,
}

impl Field {
    /// Every field, in the order help lists them.
    pub const ALL: [Field; 13] = [
        Field::Botname,
        Field::Site,
        Field::Disallow,
        Field::Allow,
        Field::Delay,
        Field::Favor,
        Field::Disfavor,
        Field::Nobias,
        Field::Contain,
        Field::Sitemap,
        Field::Signal,
        Field::Usage,
        Field::Crawl,
    ];

    /// The name written before the colon.
    pub fn name(self) -> &'static str {
        match self {
            Field::Botname => "botname",
            Field::Site => "site",
            Field::Disallow => "disallow",
            Field::Allow => "allow",
            Field::Delay => "delay",
            Field::Favor => "favor",
            Field::Disfavor => "disfavor",
            Field::Nobias => "nobias",
            Field::Contain => "contain",
            Field::Sitemap => "sitemap",
            Field::Signal => "signal",
            Field::Usage => "usage",
            Field::Crawl => "crawl",
        }
    }

    fn from_name(s: &str) -> Option<Field> {
        let s = s.to_ascii_lowercase();
        Field::ALL.into_iter().find(|f| f.name() == s)
    }

    /// True for the fields that name a robot.
    pub fn names_robot(self) -> bool {
        matches!(
            self,
            Field::Botname | Field::Favor | Field::Disfavor | Field::Nobias
        )
    }
}

/// A bound of a `delay:` range.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Bound {
    /// No bound.
    Open,
    /// At least / at most this, inclusive.
    Inclusive(f64),
    /// Strictly beyond this.
    Exclusive(f64),
}

/// One clause of a query.
#[derive(Debug, Clone, PartialEq)]
pub enum Clause {
    /// `field:value`, the value as written (lower-cased where the field
    /// is case-blind).
    Term(Field, String),
    /// `delay:` with its bounds.
    Delay(Bound, Bound),
    /// A word of free text, lower-cased.
    Word(String),
    /// `"words in order"` of free text, lower-cased.
    Phrase(Vec<String>),
}

/// A parsed query.
#[derive(Debug, Clone, PartialEq)]
pub enum Query {
    /// Every document (the empty query).
    All,
    /// One clause.
    Clause(Clause),
    /// All of these.
    And(Vec<Query>),
    /// Any of these.
    Or(Vec<Query>),
    /// Not this.
    Not(Box<Query>),
}

impl Query {
    /// Every match must meet a `crawl:` clause (the whole query, a part of
    /// its top-level AND, or every branch of an OR): the crawl then picks
    /// each site's version (the one its last capture found), not the time.
    pub fn requires_crawl(&self) -> bool {
        match self {
            Query::Clause(Clause::Term(Field::Crawl, _)) => true,
            Query::And(v) => v.iter().any(Query::requires_crawl),
            Query::Or(v) => !v.is_empty() && v.iter().all(Query::requires_crawl),
            _ => false,
        }
    }

    /// The clauses that must match (not under a negation), in order.
    pub fn positive_clauses(&self) -> Vec<&Clause> {
        let mut out = Vec::new();
        fn walk<'a>(q: &'a Query, out: &mut Vec<&'a Clause>) {
            match q {
                Query::Clause(c) => out.push(c),
                Query::And(v) | Query::Or(v) => v.iter().for_each(|q| walk(q, out)),
                Query::All | Query::Not(_) => {}
            }
        }
        walk(self, &mut out);
        out
    }

    /// The robot the query is about: the first robot-naming clause not
    /// under a negation (`--rank bias` orders by its bias).
    pub fn robot(&self) -> Option<&str> {
        self.positive_clauses().into_iter().find_map(|c| match c {
            Clause::Term(f, v) if f.names_robot() => Some(v.as_str()),
            _ => None,
        })
    }
}

/// A query that cannot be read: what is wrong and where (1-based column,
/// in characters).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryError {
    /// The column of the offending character.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for QueryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "column {}: {}", self.column, self.message)
    }
}

impl std::error::Error for QueryError {}

impl QueryError {
    /// The query with a caret under the column, for a terminal (the query
    /// cut around the column when long, control characters escaped).
    pub fn pointer(&self, query: &str) -> String {
        let chars: Vec<char> = query.chars().collect();
        let at = self.column.saturating_sub(1).min(chars.len());
        let from = at.saturating_sub(60);
        let to = (at + 20).min(chars.len());
        let shown: String = chars[from..to]
            .iter()
            .map(|&c| if c.is_control() { '\u{fffd}' } else { c })
            .collect();
        let lead = if from > 0 { "…" } else { "" };
        format!(
            "  {lead}{shown}\n  {}{}^",
            if from > 0 { " " } else { "" },
            " ".repeat(at - from)
        )
    }
}

/// Words of free text, as the body is indexed: runs of letters and digits,
/// lower-cased.
pub fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

struct Parser<'a> {
    s: &'a str,
    pos: usize,
    depth: usize,
    groups: usize,
    clauses: usize,
}

/// Parses a query. The empty query is [`Query::All`].
pub fn parse(query: &str) -> Result<Query, QueryError> {
    if query.len() > MAX_QUERY_BYTES {
        return Err(QueryError {
            column: query[..floor_char(query, MAX_QUERY_BYTES)].chars().count() + 1,
            message: format!("the query is over {MAX_QUERY_BYTES} bytes"),
        });
    }
    let mut p = Parser {
        s: query,
        pos: 0,
        depth: 0,
        groups: 0,
        clauses: 0,
    };
    p.skip_space();
    if p.at_end() {
        return Ok(Query::All);
    }
    let q = p.or()?;
    p.skip_space();
    if !p.at_end() {
        return Err(p.error(if p.peek() == Some(')') {
            "a `)` without its `(`".to_owned()
        } else {
            "unexpected text".to_owned()
        }));
    }
    Ok(q)
}

fn floor_char(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

impl Parser<'_> {
    fn rest(&self) -> &str {
        &self.s[self.pos..]
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn at_end(&self) -> bool {
        self.pos >= self.s.len()
    }

    fn column_at(&self, byte: usize) -> usize {
        self.s[..byte].chars().count() + 1
    }

    fn error(&self, message: String) -> QueryError {
        self.error_at(self.pos, message)
    }

    fn error_at(&self, byte: usize, message: String) -> QueryError {
        QueryError {
            column: self.column_at(byte),
            message,
        }
    }

    fn skip_space(&mut self) {
        let t = self.rest().trim_start();
        self.pos = self.s.len() - t.len();
    }

    /// The keyword `kw` followed by a space, a `(`, or a `"`.
    fn keyword(&mut self, kw: &str) -> bool {
        let r = self.rest();
        let after = r.get(kw.len()..).unwrap_or("x");
        if r.starts_with(kw)
            && (after.is_empty()
                || after.starts_with(char::is_whitespace)
                || after.starts_with(['(', '"', '-']))
        {
            self.pos += kw.len();
            true
        } else {
            false
        }
    }

    fn enter(&mut self) -> Result<(), QueryError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error(format!("nested deeper than {MAX_DEPTH}")));
        }
        Ok(())
    }

    fn or(&mut self) -> Result<Query, QueryError> {
        let mut parts = vec![self.and()?];
        loop {
            self.skip_space();
            let at = self.pos;
            if self.keyword("OR") {
                self.skip_space();
                if self.at_end() || self.peek() == Some(')') {
                    return Err(self.error_at(at, "`OR` needs something after it".into()));
                }
                parts.push(self.and()?);
            } else {
                break;
            }
        }
        Ok(if parts.len() == 1 {
            parts.pop().unwrap_or(Query::All)
        } else {
            Query::Or(parts)
        })
    }

    fn and(&mut self) -> Result<Query, QueryError> {
        let mut parts = Vec::new();
        loop {
            self.skip_space();
            if self.at_end() || self.peek() == Some(')') {
                break;
            }
            let save = self.pos;
            if self.keyword("OR") {
                self.pos = save;
                break;
            }
            if self.keyword("AND") {
                self.skip_space();
                if parts.is_empty() || self.at_end() || self.peek() == Some(')') {
                    return Err(self.error_at(save, "`AND` needs something on each side".into()));
                }
                continue;
            }
            parts.push(self.unary()?);
        }
        match parts.len() {
            0 => Err(self.error(if self.at_end() {
                "the query ends where a term should be".into()
            } else {
                "a term is missing here".into()
            })),
            1 => Ok(parts.pop().unwrap_or(Query::All)),
            _ => Ok(Query::And(parts)),
        }
    }

    fn unary(&mut self) -> Result<Query, QueryError> {
        let start = self.pos;
        let negated = if self.rest().starts_with('-') {
            self.pos += 1;
            true
        } else {
            self.keyword("NOT")
        };
        if negated {
            self.enter()?;
            self.skip_space();
            if self.at_end() || self.peek() == Some(')') {
                return Err(self.error_at(start, "a negation needs a term after it".into()));
            }
            let q = self.unary()?;
            self.depth -= 1;
            return Ok(Query::Not(Box::new(q)));
        }
        self.atom()
    }

    fn atom(&mut self) -> Result<Query, QueryError> {
        let start = self.pos;
        match self.peek() {
            Some('(') => {
                self.pos += 1;
                self.enter()?;
                self.groups += 1;
                self.skip_space();
                if self.peek() == Some(')') {
                    return Err(self.error("an empty group".into()));
                }
                let q = self.or()?;
                self.skip_space();
                if self.peek() != Some(')') {
                    return Err(self.error_at(start, "this `(` is never closed".into()));
                }
                self.pos += 1;
                self.groups -= 1;
                self.depth -= 1;
                Ok(q)
            }
            Some('"') => {
                let text = self.quoted()?;
                let w = words(&text);
                self.count(start)?;
                Ok(Query::Clause(match w.len() {
                    0 => return Err(self.error_at(start, "an empty phrase".into())),
                    1 => Clause::Word(w.into_iter().next().unwrap_or_default()),
                    _ => Clause::Phrase(w),
                }))
            }
            _ => {
                // A field name, or a word.
                let word_end = self
                    .rest()
                    .find(|c: char| c.is_whitespace() || c == ':' || c == '(' || c == '"')
                    .map_or(self.s.len(), |i| self.pos + i);
                let head = &self.s[self.pos..word_end];
                if self.s[word_end..].starts_with(':') {
                    let Some(field) = Field::from_name(head) else {
                        let known: Vec<_> = Field::ALL.iter().map(|f| f.name()).collect();
                        return Err(self.error_at(
                            start,
                            format!("unknown field `{head}` (fields: {})", known.join(", ")),
                        ));
                    };
                    self.pos = word_end + 1;
                    self.count(start)?;
                    return self.field_value(field, start).map(Query::Clause);
                }
                let end = self.value_end();
                let raw = &self.s[self.pos..end];
                self.pos = end;
                self.count(start)?;
                let w = words(raw);
                match w.len() {
                    0 => Err(self.error_at(
                        start,
                        format!("`{raw}` has no letters or digits to search for"),
                    )),
                    1 => Ok(Query::Clause(Clause::Word(
                        w.into_iter().next().unwrap_or_default(),
                    ))),
                    // `cgi-bin` is the phrase `cgi bin`, as the body is indexed.
                    _ => Ok(Query::Clause(Clause::Phrase(w))),
                }
            }
        }
    }

    fn count(&mut self, at: usize) -> Result<(), QueryError> {
        self.clauses += 1;
        if self.clauses > MAX_CLAUSES {
            return Err(self.error_at(at, format!("more than {MAX_CLAUSES} terms")));
        }
        Ok(())
    }

    /// A `"…"` string (`\"` and `\\` escaped), the position after it.
    fn quoted(&mut self) -> Result<String, QueryError> {
        let start = self.pos;
        self.pos += 1;
        let mut out = String::new();
        let mut chars = self.rest().char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => {
                    self.pos += i + 1;
                    return Ok(out);
                }
                '\\' => match chars.next() {
                    Some((_, e)) => out.push(e),
                    None => break,
                },
                c => out.push(c),
            }
        }
        Err(self.error_at(start, "this `\"` is never closed".into()))
    }

    /// Where an unquoted value ends: at a space, or at the `)`s that close
    /// open groups.
    fn value_end(&self) -> usize {
        let r = self.rest();
        let mut end = r.find(char::is_whitespace).unwrap_or(r.len());
        let mut open = self.groups;
        while open > 0 && r[..end].ends_with(')') {
            end -= 1;
            open -= 1;
        }
        self.pos + end
    }

    fn field_value(&mut self, field: Field, start: usize) -> Result<Clause, QueryError> {
        let vstart = self.pos;
        if field == Field::Delay && self.peek().is_some_and(|c| c == '[' || c == '{') {
            return self.range(start);
        }
        let value = if self.peek() == Some('"') {
            self.quoted()?
        } else {
            let end = self.value_end();
            let v = self.s[self.pos..end].to_owned();
            self.pos = end;
            v
        };
        if value.is_empty() {
            return Err(self.error_at(vstart, format!("`{}:` needs a value", field.name())));
        }
        if value.len() > MAX_VALUE_BYTES {
            return Err(self.error_at(vstart, format!("a value is over {MAX_VALUE_BYTES} bytes")));
        }
        let lower = value.to_lowercase();
        Ok(match field {
            Field::Delay => {
                let (lo, hi) = delay_value(&value).ok_or_else(|| {
                    self.error_at(
                        vstart,
                        format!("`{value}` is not a delay: give 5, >10, >=1, <2, <=2 or [1 TO 5]"),
                    )
                })?;
                Clause::Delay(lo, hi)
            }
            Field::Contain => {
                if lower != "universal" && lower != "too-complex" {
                    return Err(self.error_at(
                        vstart,
                        format!(
                            "`contain:{value}`: the values are `contain:universal` and `contain:too-complex`"
                        ),
                    ));
                }
                Clause::Term(field, lower)
            }
            // Paths are case-sensitive; crawls are as they were named.
            Field::Disallow | Field::Allow => Clause::Term(field, value),
            Field::Crawl => Clause::Term(field, value.trim().to_owned()),
            Field::Site => Clause::Term(field, lower.trim_matches('.').to_owned()),
            Field::Signal | Field::Usage => Clause::Term(field, lower.replace([' ', '\t'], "")),
            _ => Clause::Term(field, lower.trim().to_owned()),
        })
    }

    /// `[a TO b]`, `{a TO b}` and mixed brackets; `*` for an open bound.
    fn range(&mut self, start: usize) -> Result<Clause, QueryError> {
        let open = self.peek();
        let close_at = self
            .rest()
            .find([']', '}'])
            .ok_or_else(|| self.error("this range is never closed with `]` or `}`".into()))?;
        let inner = &self.rest()[1..close_at];
        let close = self.rest()[close_at..].chars().next();
        let bad = || {
            self.error_at(
                start,
                format!("`{inner}` is not a range: give [1 TO 5], {{1 TO 5}} or [1 TO *]"),
            )
        };
        let parts: Vec<&str> = inner.split_whitespace().collect();
        let [lo, to, hi] = parts[..] else {
            return Err(bad());
        };
        if !to.eq_ignore_ascii_case("to") {
            return Err(bad());
        }
        let bound = |s: &str, inclusive: bool| -> Option<Bound> {
            if s == "*" {
                return Some(Bound::Open);
            }
            let v: f64 = s.parse().ok().filter(|v: &f64| v.is_finite())?;
            Some(if inclusive {
                Bound::Inclusive(v)
            } else {
                Bound::Exclusive(v)
            })
        };
        let lo = bound(lo, open == Some('[')).ok_or_else(bad)?;
        let hi = bound(hi, close == Some(']')).ok_or_else(bad)?;
        self.pos += close_at + 1;
        Ok(Clause::Delay(lo, hi))
    }
}

/// `5`, `>10`, `>=1`, `<2`, `<=2` as bounds.
fn delay_value(v: &str) -> Option<(Bound, Bound)> {
    let num = |s: &str| s.trim().parse::<f64>().ok().filter(|v| v.is_finite());
    Some(if let Some(r) = v.strip_prefix(">=") {
        (Bound::Inclusive(num(r)?), Bound::Open)
    } else if let Some(r) = v.strip_prefix('>') {
        (Bound::Exclusive(num(r)?), Bound::Open)
    } else if let Some(r) = v.strip_prefix("<=") {
        (Bound::Open, Bound::Inclusive(num(r)?))
    } else if let Some(r) = v.strip_prefix('<') {
        (Bound::Open, Bound::Exclusive(num(r)?))
    } else {
        let x = num(v)?;
        (Bound::Inclusive(x), Bound::Inclusive(x))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(f: Field, v: &str) -> Query {
        Query::Clause(Clause::Term(f, v.into()))
    }

    #[test]
    fn botseer_examples() {
        assert_eq!(parse("botname:msnbot"), Ok(t(Field::Botname, "msnbot")));
        assert_eq!(
            parse("favor:googlebot site:gov"),
            Ok(Query::And(vec![
                t(Field::Favor, "googlebot"),
                t(Field::Site, "gov")
            ]))
        );
        assert_eq!(
            parse("contain:universal site:gov disallow:/"),
            Ok(Query::And(vec![
                t(Field::Contain, "universal"),
                t(Field::Site, "gov"),
                t(Field::Disallow, "/")
            ]))
        );
        let q = parse("favor:googlebot disfavor:msnbot disfavor:slurp").expect("parses");
        assert_eq!(q.robot(), Some("googlebot"));
    }

    #[test]
    fn values_keep_their_punctuation() {
        assert_eq!(
            parse("disallow:/cgi-bin/*.php$"),
            Ok(t(Field::Disallow, "/cgi-bin/*.php$"))
        );
        assert_eq!(
            parse("allow:-/x:y"),
            Ok(t(Field::Allow, "-/x:y")),
            "a leading `-` inside a value is the value's"
        );
        assert_eq!(parse("Disallow:/A"), Ok(t(Field::Disallow, "/A")));
        assert_eq!(
            parse("botname:Googlebot/2.1"),
            Ok(t(Field::Botname, "googlebot/2.1"))
        );
        assert_eq!(parse("botname:\"My Bot\""), Ok(t(Field::Botname, "my bot")));
        assert_eq!(
            parse("signal:ai-train=no"),
            Ok(t(Field::Signal, "ai-train=no"))
        );
        assert_eq!(parse("usage:Train-AI=n"), Ok(t(Field::Usage, "train-ai=n")));
        assert_eq!(parse("site:.gov"), Ok(t(Field::Site, "gov")));
        assert_eq!(
            parse("(disallow:/a OR disallow:/b(c))"),
            Ok(Query::Or(vec![
                t(Field::Disallow, "/a"),
                t(Field::Disallow, "/b(c)")
            ])),
            "only the `)`s that close groups end a value"
        );
    }

    #[test]
    fn operators() {
        let q = parse("botname:a OR botname:b -site:gov").expect("parses");
        assert_eq!(
            q,
            Query::Or(vec![
                t(Field::Botname, "a"),
                Query::And(vec![
                    t(Field::Botname, "b"),
                    Query::Not(Box::new(t(Field::Site, "gov")))
                ])
            ])
        );
        let q = parse("(botname:a OR botname:b) AND NOT site:gov").expect("parses");
        assert_eq!(
            q,
            Query::And(vec![
                Query::Or(vec![t(Field::Botname, "a"), t(Field::Botname, "b")]),
                Query::Not(Box::new(t(Field::Site, "gov")))
            ])
        );
        assert_eq!(
            parse("\"Crawl-delay: 10\" sitemap"),
            Ok(Query::And(vec![
                Query::Clause(Clause::Phrase(vec![
                    "crawl".into(),
                    "delay".into(),
                    "10".into()
                ])),
                Query::Clause(Clause::Word("sitemap".into()))
            ]))
        );
        assert_eq!(parse("   "), Ok(Query::All));
        assert_eq!(parse("or"), Ok(Query::Clause(Clause::Word("or".into()))));
        assert_eq!(parse("-botname:x").expect("parses").robot(), None);
        // A crawl picks the versions only when every match needs it; its
        // name keeps its case.
        let needs = |q: &str| parse(q).expect("parses").requires_crawl();
        assert!(needs("crawl:CC-MAIN-2024-10"));
        assert!(needs("disallow:/ crawl:A"));
        assert!(needs("crawl:A OR crawl:B"));
        assert!(!needs("crawl:A OR disallow:/"));
        assert!(!needs("-crawl:A"));
        assert!(!needs("disallow:/"));
        assert_eq!(
            parse("crawl:CC-MAIN-2024-10"),
            Ok(t(Field::Crawl, "CC-MAIN-2024-10"))
        );
    }

    #[test]
    fn delays() {
        use Bound::*;
        let d = |q: &str| match parse(q) {
            Ok(Query::Clause(Clause::Delay(a, b))) => Some((a, b)),
            _ => None,
        };
        assert_eq!(d("delay:>10"), Some((Exclusive(10.0), Open)));
        assert_eq!(d("delay:>=1.5"), Some((Inclusive(1.5), Open)));
        assert_eq!(d("delay:<2"), Some((Open, Exclusive(2.0))));
        assert_eq!(d("delay:5"), Some((Inclusive(5.0), Inclusive(5.0))));
        assert_eq!(d("delay:[1 TO 5]"), Some((Inclusive(1.0), Inclusive(5.0))));
        assert_eq!(d("delay:{1 to *]"), Some((Exclusive(1.0), Open)));
        assert_eq!(
            parse("(delay:[1 TO 5])"),
            Ok(Query::Clause(Clause::Delay(Inclusive(1.0), Inclusive(5.0))))
        );
    }

    #[test]
    fn errors_point_at_their_column() {
        let col = |q: &str| parse(q).expect_err(q).column;
        assert_eq!(col("site:gov foo:bar"), 10);
        assert!(
            parse("foo:bar")
                .expect_err("unknown")
                .message
                .contains("unknown field `foo`")
        );
        assert_eq!(col("(site:gov"), 1);
        assert_eq!(col("site:gov )"), 10);
        assert_eq!(col("site:gov OR"), 10);
        assert_eq!(col("delay:abc"), 7);
        assert_eq!(col("delay:[1 TO x]"), 1);
        assert_eq!(col("delay:[1 TO 5"), 7);
        assert_eq!(col("contain:everything"), 9);
        assert_eq!(col("site:"), 6);
        assert_eq!(col("\"abc"), 1);
        assert_eq!(col("a -"), 3);
        assert_eq!(col("()"), 2);
        assert_eq!(col("AND site:x"), 1);
        assert_eq!(col("é foo:x"), 3, "columns count characters");
        let e = parse("site:gov foo:bar").expect_err("unknown");
        assert_eq!(
            e.pointer("site:gov foo:bar"),
            "  site:gov foo:bar\n           ^"
        );
    }

    #[test]
    fn hostile_queries_are_errors_not_panics() {
        let long = "a ".repeat(60_000);
        assert!(
            parse(&long)
                .expect_err("too long")
                .message
                .contains("over 4096 bytes")
        );
        let deep = format!("{}x{}", "(".repeat(1000), ")".repeat(1000));
        assert!(parse(&deep[..2001]).is_err());
        let deep = format!("{}x{}", "(".repeat(40), ")".repeat(40));
        assert!(
            parse(&deep)
                .expect_err("deep")
                .message
                .contains("nested deeper")
        );
        let negs = "-".repeat(100) + "x";
        assert!(parse(&negs).is_err());
        let many = "x ".repeat(300);
        assert!(
            parse(&many)
                .expect_err("many")
                .message
                .contains("more than 256")
        );
        for q in [
            "\u{0}:",
            ":",
            "-",
            "\"",
            "(",
            ")",
            "[",
            "delay:[",
            "delay:{1 TO",
            "NOT",
            "OR x",
            "é".repeat(3000).as_str(),
        ] {
            let _ = parse(q);
        }
    }
}
