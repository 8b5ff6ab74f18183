//! Change feeds: what sites' robots.txt newly say to each agent since a
//! time, from the classes stored per version (no file is parsed unless
//! its classes were past the index's budget), newest first, capped; as
//! text, a table and Atom 1.0.

use std::collections::{HashMap, HashSet};

use botscope_robotstxt::Semantics;
use serde::Serialize;
use tantivy::query::{EnableScoring, Query as TQuery};
use tantivy::schema::Value;
use tantivy::{BitSet, DocAddress, TantivyDocument};

use crate::classes::{Classes, Stated};
use crate::engine::{Index, io_err, rfc3339};
use crate::error::Result;
use crate::query::{self, Query};
use crate::{Restriction, restrictions};

/// Changes listed at most, whatever is asked.
pub const MAX_CHANGES: usize = 10_000;

/// What [`Index::changes`] looks for.
#[derive(Debug, Clone, Copy)]
pub struct ChangeRequest<'a> {
    /// Versions first seen after this time (Unix seconds).
    pub since: i64,
    /// The agents whose treatment is compared.
    pub agents: &'a [String],
    /// The semantics.
    pub semantics: Semantics,
    /// Only this site.
    pub site: Option<&'a str>,
    /// Only versions matching this query (the research index's language).
    pub where_: Option<&'a str>,
    /// Only changes of this kind (a usage-preference change has its own).
    pub only: Option<Kind>,
    /// Site changes listed at most (at most [`MAX_CHANGES`]).
    pub limit: usize,
}

impl ChangeRequest<'_> {
    /// A watch feed's title: what was asked (the site, the agents named
    /// or their category, the kind of change, the query).
    pub fn title(&self, named: &[String], category: Option<&str>) -> String {
        let who = match (named, category) {
            ([], Some(c)) => format!("the {c} crawlers"),
            ([], None) => "every known crawler".to_owned(),
            ([one], None) => one.clone(),
            (many, c) => {
                let mut s = many.join(", ");
                if let Some(c) = c {
                    s.push_str(&format!(" and the {c} crawlers"));
                }
                s
            }
        };
        let mut t = match (self.site, self.only) {
            (Some(site), _) => format!("robots.txt changes of {site} for {who}"),
            (None, Some(Kind::Blocked)) => format!("sites that started blocking {who}"),
            (None, Some(Kind::Allowed)) => format!("sites that relaxed their rules for {who}"),
            (None, None) => format!("robots.txt changes for {who}"),
        };
        if let Some(q) = self.where_ {
            t.push_str(&format!(" where {q}"));
        }
        t
    }
}

/// How an agent's treatment changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Stricter than before: partly or wholly kept out.
    Blocked,
    /// Less strict than before.
    Allowed,
}

impl Kind {
    /// `blocked` or `allowed`.
    pub fn parse(s: &str) -> Option<Kind> {
        match s {
            "blocked" => Some(Kind::Blocked),
            "allowed" => Some(Kind::Allowed),
            _ => None,
        }
    }
}

/// One agent's change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AgentChange {
    /// The agent.
    pub agent: String,
    /// Stricter or less strict.
    pub change: Kind,
    /// Its restriction before (`none` where the site had no file).
    pub before: Restriction,
    /// Its restriction in the new version.
    pub after: Restriction,
}

/// One new version that changes what the site says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SiteChange {
    /// The site.
    pub site: String,
    /// When the new version was first seen (RFC 3339).
    pub at: String,
    /// Its URL.
    pub url: String,
    /// The new version's content hash (BLAKE3, as the store keys bodies), hex.
    pub hash: String,
    /// The index holds no earlier version of the site (its first file).
    pub first: bool,
    /// The site's robots.txt went away here (`removed`: a 4xx,
    /// `unreachable`: no answer, 429 or 5xx, `moved`: a redirect that
    /// ended nowhere): no file from this time, every agent `none`. `url`
    /// is the file's that ended, `hash` empty.
    pub absent: Option<&'static str>,
    /// The agents whose treatment changed.
    pub agents: Vec<AgentChange>,
    /// Usage-preference statements the new version makes and the old did
    /// not (`usage:train-ai=n`, `signal:ai-train=no`).
    pub preferences_added: Vec<String>,
    /// Statements the old version made and the new does not.
    pub preferences_removed: Vec<String>,
}

/// The answer of [`Index::changes`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Changes {
    /// The time changes are counted from (RFC 3339).
    pub since: String,
    /// The semantics.
    pub semantics: &'static str,
    /// The agents compared.
    pub agents: Vec<String>,
    /// Site changes found (before the limit).
    pub total: u64,
    /// Fewer listed than found.
    pub truncated: bool,
    /// Newest first.
    pub changes: Vec<SiteChange>,
}

/// One version of a watched site.
struct Seen {
    from: i64,
    until: i64,
    ended: u64,
    at: DocAddress,
    classes: Option<Vec<u8>>,
}

impl Index {
    /// The new versions since `r.since` that change how their site treats
    /// any of `r.agents` (its restriction class, as `trends` counts it) or
    /// which usage preferences it states, each against the site's version
    /// before it (none: every agent `none`); and each time a site's file
    /// went away since then (removed, unreachable, moved: every agent
    /// `none` from then), listed whatever it said. Cost: one pass over the
    /// `from` and `site` columns, one over the versions of the sites that
    /// changed, and the stored fields of the listed changes.
    pub fn changes(&self, r: &ChangeRequest<'_>) -> Result<Changes> {
        let searcher = self.reader.searcher();
        let parsed = r.where_.map_or(Ok(Query::All), query::parse)?;
        let matching = match parsed {
            Query::All => None,
            ref q => Some(
                self.translate(q, r.semantics)?
                    .weight(EnableScoring::disabled_from_searcher(&searcher))
                    .map_err(self.err())?,
            ),
        };
        // Pass 1: the sites with a version first seen after `since`
        // (matching the query).
        let mut changed: HashSet<String> = HashSet::new();
        for seg in searcher.segment_readers() {
            let ff = seg.fast_fields();
            let from = ff.i64("from").map_err(self.err())?.first_or_default_col(0);
            let until = ff.i64("until").map_err(self.err())?.first_or_default_col(0);
            let ended = ff.u64("ended").map_err(self.err())?.first_or_default_col(0);
            let Some(site) = ff.str("site").map_err(self.err())? else {
                continue;
            };
            let wanted = match &matching {
                None => None,
                Some(w) => {
                    let mut set = BitSet::with_max_value(seg.max_doc());
                    w.for_each_no_score(seg, &mut |docs| {
                        for &d in docs {
                            set.insert(d);
                        }
                    })
                    .map_err(self.err())?;
                    Some(set)
                }
            };
            let mut ords: HashSet<u64> = HashSet::new();
            for d in 0..seg.max_doc() {
                // New since then, or ended by an absence since then.
                let new = from.get_val(d) > r.since
                    || (ended.get_val(d) != 0 && until.get_val(d) > r.since);
                if seg.is_deleted(d) || !new || wanted.as_ref().is_some_and(|w| !w.contains(d)) {
                    continue;
                }
                ords.extend(site.term_ords(d));
            }
            let mut name = String::new();
            for o in ords {
                name.clear();
                let found = site
                    .ord_to_str(o, &mut name)
                    .map_err(|e| io_err(&self.path, e))?;
                if found && r.site.is_none_or(|s| s == name) {
                    changed.insert(name.clone());
                }
            }
        }
        // Pass 2: every version of those sites, with its stored classes.
        let mut versions: HashMap<String, Vec<Seen>> = HashMap::new();
        for (si, seg) in searcher.segment_readers().iter().enumerate() {
            let ff = seg.fast_fields();
            let from = ff.i64("from").map_err(self.err())?.first_or_default_col(0);
            let until = ff.i64("until").map_err(self.err())?.first_or_default_col(0);
            let ended = ff.u64("ended").map_err(self.err())?.first_or_default_col(0);
            let Some(site) = ff.str("site").map_err(self.err())? else {
                continue;
            };
            let classes = ff.bytes("classes").map_err(self.err())?;
            // The segment's ords of the watched sites.
            let mut wanted: HashMap<u64, String> = HashMap::new();
            let mut stream = site
                .dictionary()
                .stream()
                .map_err(|e| io_err(&self.path, e))?;
            while stream.advance() {
                if let Ok(k) = std::str::from_utf8(stream.key())
                    && changed.contains(k)
                {
                    wanted.insert(stream.term_ord(), k.to_owned());
                }
            }
            if wanted.is_empty() {
                continue;
            }
            for d in 0..seg.max_doc() {
                if seg.is_deleted(d) {
                    continue;
                }
                let Some(name) = site.term_ords(d).find_map(|o| wanted.get(&o)) else {
                    continue;
                };
                let mut bytes = None;
                if let Some(c) = &classes
                    && let Some(o) = c.ords().first(d)
                {
                    let mut b = Vec::new();
                    if c.ord_to_bytes(o, &mut b)
                        .map_err(|e| io_err(&self.path, e))?
                    {
                        bytes = Some(b);
                    }
                }
                versions.entry(name.clone()).or_default().push(Seen {
                    from: from.get_val(d),
                    until: until.get_val(d),
                    ended: ended.get_val(d),
                    at: DocAddress::new(si as u32, d),
                    classes: bytes,
                });
            }
        }
        // Each new version against the one before it.
        let body_of = |at: DocAddress| -> Result<String> {
            let doc: TantivyDocument = searcher.doc(at).map_err(self.err())?;
            Ok(doc
                .get_first(self.f.body)
                .and_then(|v| v.as_str())
                .unwrap_or_default()
                .to_owned())
        };
        let judge = |v: &Seen| -> Result<(Vec<Restriction>, Stated)> {
            let decoded = v.classes.as_deref().and_then(Classes::decode);
            if let Some(c) = &decoded
                && let Some(r) = c.restrictions(r.semantics, r.agents)
            {
                return Ok((r, c.stated));
            }
            let body = body_of(v.at)?;
            Ok((
                restrictions(body.as_bytes(), r.agents, r.semantics),
                crate::trends::stated(body.as_bytes()),
            ))
        };
        let mut found: Vec<Found> = Vec::new();
        let none = vec![Restriction::None; r.agents.len()];
        for (site, mut vs) in versions {
            vs.sort_by_key(|v| v.from);
            // The file in force (none before the first, nor after an
            // absence), and whether the site had one yet.
            let mut before: Option<(Vec<Restriction>, Stated)> = None;
            let mut had_file = false;
            for v in &vs {
                let now = judge(v)?;
                let gone = crate::schema::ended_absence(v.ended);
                let mut events: Vec<Event> = vec![(v.from, None, now)];
                if let Some(a) = gone {
                    events.push((v.until, Some(a), (none.clone(), Stated::default())));
                }
                for (at, absent, now) in events {
                    if at > r.since {
                        let (old, old_stated) = before
                            .as_ref()
                            .map_or((&none, Stated::default()), |(o, s)| (o, *s));
                        let agents: Vec<AgentChange> = r
                            .agents
                            .iter()
                            .zip(old.iter().zip(&now.0))
                            .filter(|(_, (a, b))| a != b)
                            .map(|(agent, (&a, &b))| AgentChange {
                                agent: agent.clone(),
                                change: if b > a { Kind::Blocked } else { Kind::Allowed },
                                before: a,
                                after: b,
                            })
                            .filter(|c| r.only.is_none_or(|k| k == c.change))
                            .collect();
                        let prefs = old_stated.statements != now.1.statements;
                        // A file gone is listed whatever it said (but not
                        // among the sites that started blocking).
                        let listed =
                            !agents.is_empty() || (r.only.is_none() && (prefs || absent.is_some()));
                        if listed {
                            found.push(Found {
                                at,
                                site: site.clone(),
                                doc: v.at,
                                first: !had_file,
                                absent,
                                agents,
                                old: old_stated,
                                new: now.1,
                            });
                        }
                    }
                    if absent.is_some() {
                        before = None;
                    } else {
                        before = Some(now);
                        had_file = true;
                    }
                }
            }
        }
        found.sort_by(|a, b| b.at.cmp(&a.at).then_with(|| a.site.cmp(&b.site)));
        let total = found.len() as u64;
        let limit = r.limit.min(MAX_CHANGES);
        let mut changes = Vec::with_capacity(found.len().min(limit));
        for f in found.into_iter().take(limit) {
            let Found {
                at: from,
                site,
                doc: at,
                first,
                absent,
                agents,
                old,
                new,
            } = f;
            let doc: TantivyDocument = searcher.doc(at).map_err(self.err())?;
            let url = doc
                .get_first(self.f.url)
                .and_then(|v| v.as_str())
                .unwrap_or_default()
                .to_owned();
            let hash = match absent {
                Some(_) => String::new(),
                None => doc
                    .get_first(self.f.hash)
                    .and_then(|v| v.as_bytes())
                    .map(hex)
                    .unwrap_or_default(),
            };
            let (was, is): (HashSet<String>, HashSet<String>) =
                (old.made().collect(), new.made().collect());
            let mut added: Vec<String> = is.difference(&was).cloned().collect();
            let mut removed: Vec<String> = was.difference(&is).cloned().collect();
            added.sort();
            removed.sort();
            changes.push(SiteChange {
                site,
                at: rfc3339(from),
                url,
                hash,
                first: first && absent.is_none(),
                absent: absent.map(botscope_store::Absence::as_str),
                agents,
                preferences_added: added,
                preferences_removed: removed,
            });
        }
        Ok(Changes {
            since: rfc3339(r.since),
            semantics: r.semantics.as_str(),
            agents: r.agents.to_vec(),
            total,
            truncated: (total as usize) > changes.len(),
            changes,
        })
    }
}

/// What a version brings at a time: a file (no absence) or its end by an
/// absence, with every agent's class and the statements then.
type Event = (
    i64,
    Option<botscope_store::Absence>,
    (Vec<Restriction>, Stated),
);

/// A change found, before it is listed.
struct Found {
    at: i64,
    site: String,
    /// The version (for an absence: the file that ended).
    doc: DocAddress,
    first: bool,
    absent: Option<botscope_store::Absence>,
    agents: Vec<AgentChange>,
    old: Stated,
    new: Stated,
}

fn hex(b: &[u8]) -> String {
    use std::fmt::Write;
    b.iter()
        .fold(String::with_capacity(b.len() * 2), |mut s, x| {
            let _ = write!(s, "{x:02x}");
            s
        })
}

/// What an Atom feed of [`Changes`] says about itself.
#[derive(Debug, Clone, Copy)]
pub struct Feed<'a> {
    /// Its title.
    pub title: &'a str,
    /// Its permanent IRI (`<id>`).
    pub id: &'a str,
    /// Where it is served, if known (`rel="self"`).
    pub this: Option<&'a str>,
    /// Each entry's link: `Some(prefix)` links `PREFIX` + the site (the
    /// web application's site page, relative to the feed); `None` links
    /// the robots.txt URL.
    pub site_link: Option<&'a str>,
    /// When the feed was made (its `<updated>` when no entry is newer).
    pub now: i64,
}

/// A feed's permanent id for the question `key` (its parameters): a
/// name-based `urn:uuid:` (RFC 9562's version 8 layout over BLAKE3), so
/// the same question always makes the same feed.
pub fn feed_id(key: &str) -> String {
    let h = botscope_store::content_hash(key.as_bytes());
    let mut b = [0u8; 16];
    b.copy_from_slice(&h[..16]);
    b[6] = (b[6] & 0x0f) | 0x80;
    b[8] = (b[8] & 0x3f) | 0x80;
    let x = hex(&b);
    format!(
        "urn:uuid:{}-{}-{}-{}-{}",
        &x[..8],
        &x[8..12],
        &x[12..16],
        &x[16..20],
        &x[20..]
    )
}

/// Text for XML character data and attribute values: the five special
/// characters escaped, characters XML 1.0 cannot hold dropped.
fn xml(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&apos;"),
            '\t' | '\n' | '\r' => o.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {}
            c => o.push(c),
        }
    }
    o
}

impl SiteChange {
    /// One line: `blocked GPTBot (none to full), allowed CCBot (full to
    /// partial); usage preferences +usage:train-ai=n`; a file gone starts
    /// with `robots.txt removed` (`unreachable`, `moved away`); a site's
    /// first file that changes more than three agents is counted, its
    /// agents named up to five (`closes 7 agents fully (GPTBot, CCBot, …
    /// and 2 more), 1 partly (Googlebot)`).
    pub fn summary(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        match self.absent {
            Some("moved") => parts.push("robots.txt moved away".to_owned()),
            Some(a) => parts.push(format!("robots.txt {a}")),
            None => {}
        }
        let counted = self.first && self.agents.len() > 3;
        if counted {
            let named = |r: Restriction| -> (usize, String) {
                let names: Vec<&str> = self
                    .agents
                    .iter()
                    .filter(|a| a.after == r)
                    .map(|a| a.agent.as_str())
                    .collect();
                let mut s = names.iter().take(5).copied().collect::<Vec<_>>().join(", ");
                if names.len() > 5 {
                    s.push_str(&format!(" and {} more", names.len() - 5));
                }
                (names.len(), s)
            };
            let (full, full_names) = named(Restriction::Full);
            let (partial, partial_names) = named(Restriction::Partial);
            let mut said = Vec::new();
            if full > 0 {
                let agents = if full == 1 { "agent" } else { "agents" };
                said.push(format!("{full} {agents} fully ({full_names})"));
            }
            if partial > 0 {
                said.push(format!("{partial} partly ({partial_names})"));
            }
            parts.push(format!("closes {}", said.join(", ")));
        }
        for kind in [Kind::Blocked, Kind::Allowed] {
            if counted {
                break;
            }
            let these: Vec<String> = self
                .agents
                .iter()
                .filter(|a| a.change == kind)
                .map(|a| {
                    format!(
                        "{} ({} to {})",
                        a.agent,
                        a.before.as_str(),
                        a.after.as_str()
                    )
                })
                .collect();
            if !these.is_empty() {
                let verb = match kind {
                    Kind::Blocked => "blocked",
                    Kind::Allowed => "allowed",
                };
                parts.push(format!("{verb} {}", these.join(", ")));
            }
        }
        let prefs: Vec<String> = self
            .preferences_added
            .iter()
            .map(|p| format!("+{p}"))
            .chain(self.preferences_removed.iter().map(|p| format!("-{p}")))
            .collect();
        let mut s = parts.join("; ");
        if !prefs.is_empty() {
            if !s.is_empty() {
                s.push_str("; ");
            }
            s.push_str(&format!("usage preferences {}", prefs.join(" ")));
        }
        s
    }
}

impl Changes {
    /// For people: a line per site change, newest first (strangers' names
    /// escaped for the terminal).
    pub fn to_text(&self) -> String {
        use std::fmt::Write;
        let mut o = String::new();
        let _ = writeln!(
            o,
            "changes since {}: {} {} ({} agents, {} semantics){}",
            self.since,
            self.total,
            if self.total == 1 {
                "site change"
            } else {
                "site changes"
            },
            self.agents.len(),
            self.semantics,
            if self.truncated {
                format!(", the newest {} listed", self.changes.len())
            } else {
                String::new()
            }
        );
        for c in &self.changes {
            let _ = writeln!(
                o,
                "{}  {}{}  {}",
                c.at,
                botscope_text::field(&c.site),
                if c.first { " (first file)" } else { "" },
                botscope_text::field(&c.summary())
            );
        }
        o
    }

    /// A row per agent change (a usage-preference change alone: one row
    /// with no agent), newest first.
    pub fn to_table(&self) -> botscope_text::Table {
        use botscope_text::Cells;
        struct Row<'a> {
            c: &'a SiteChange,
            a: Option<&'a AgentChange>,
        }
        let rows: Vec<Row<'_>> = self
            .changes
            .iter()
            .flat_map(|c| {
                let agents: Vec<Row<'_>> = c.agents.iter().map(|a| Row { c, a: Some(a) }).collect();
                if agents.is_empty() {
                    vec![Row { c, a: None }]
                } else {
                    agents
                }
            })
            .collect();
        let text =
            |f: &dyn Fn(&Row<'_>) -> Option<String>| Cells::Text(rows.iter().map(f).collect());
        let label =
            |f: &dyn Fn(&Row<'_>) -> Option<String>| Cells::Label(rows.iter().map(f).collect());
        let mut t = botscope_text::Table::default();
        t.push("at", label(&|r| Some(r.c.at.clone())));
        t.push("site", text(&|r| Some(r.c.site.clone())));
        t.push("agent", text(&|r| r.a.map(|a| a.agent.clone())));
        t.push(
            "change",
            label(&|r| {
                Some(
                    match r.a.map(|a| a.change) {
                        Some(Kind::Blocked) => "blocked",
                        Some(Kind::Allowed) => "allowed",
                        None => "preferences",
                    }
                    .to_owned(),
                )
            }),
        );
        t.push(
            "before",
            label(&|r| r.a.map(|a| a.before.as_str().to_owned())),
        );
        t.push(
            "after",
            label(&|r| r.a.map(|a| a.after.as_str().to_owned())),
        );
        t.push(
            "preferences_added",
            text(&|r| Some(r.c.preferences_added.join(" "))),
        );
        t.push(
            "preferences_removed",
            text(&|r| Some(r.c.preferences_removed.join(" "))),
        );
        t.push("first", label(&|r| Some(r.c.first.to_string())));
        t.push("url", text(&|r| Some(r.c.url.clone())));
        t.push("hash", label(&|r| Some(r.c.hash.clone())));
        t
    }

    /// An Atom 1.0 feed (RFC 4287): an entry per site change, newest
    /// first, its id the version's: site, time and content
    /// (`https://SITE/robots.txt#TIME;blake3=HASH`, or `#TIME;removed`), so
    /// a file that comes back (A, B, A) is a new entry, not an edit.
    pub fn to_atom(&self, feed: &Feed<'_>) -> String {
        use std::fmt::Write;
        let updated = self
            .changes
            .first()
            .map_or_else(|| rfc3339(feed.now), |c| c.at.clone());
        let mut o = String::from("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n");
        o.push_str("<feed xmlns=\"http://www.w3.org/2005/Atom\">\n");
        let _ = writeln!(o, "  <id>{}</id>", xml(feed.id));
        let _ = writeln!(o, "  <title>{}</title>", xml(feed.title));
        let _ = writeln!(o, "  <updated>{}</updated>", xml(&updated));
        o.push_str("  <author><name>botscope</name></author>\n");
        o.push_str("  <generator>botscope</generator>\n");
        if let Some(s) = feed.this {
            let _ = writeln!(
                o,
                "  <link rel=\"self\" type=\"application/atom+xml\" href=\"{}\"/>",
                xml(s)
            );
        }
        for c in &self.changes {
            let link = match feed.site_link {
                Some(prefix) => format!("{prefix}{}", c.site),
                None => c.url.clone(),
            };
            let mut body = format!("{}\n{}", c.summary(), c.url);
            if c.first {
                body.push_str("\nthe site's first robots.txt in the index");
            }
            let content = match c.absent {
                Some(a) => a.to_owned(),
                None => format!("blake3={}", c.hash),
            };
            o.push_str("  <entry>\n");
            let _ = writeln!(
                o,
                "    <id>https://{}/robots.txt#{};{}</id>",
                xml(&c.site),
                xml(&c.at),
                xml(&content)
            );
            let _ = writeln!(
                o,
                "    <title>{}: {}</title>",
                xml(&c.site),
                xml(&c.summary())
            );
            let _ = writeln!(o, "    <updated>{}</updated>", xml(&c.at));
            let _ = writeln!(o, "    <link href=\"{}\"/>", xml(&link));
            let _ = writeln!(o, "    <content type=\"text\">{}</content>", xml(&body));
            o.push_str("  </entry>\n");
        }
        o.push_str("</feed>\n");
        o
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_watch_title_says_what_was_asked() {
        let request = |site, only, where_| ChangeRequest {
            since: 0,
            agents: &[],
            semantics: Semantics::Google,
            site,
            where_,
            only,
            limit: 10,
        };
        let gpt = ["GPTBot".to_owned()];
        let two = ["GPTBot".to_owned(), "CCBot".to_owned()];
        let r = request(None, Some(Kind::Blocked), None);
        assert_eq!(r.title(&gpt, None), "sites that started blocking GPTBot");
        assert_eq!(
            r.title(&[], Some("ai-training")),
            "sites that started blocking the ai-training crawlers"
        );
        let r = request(None, Some(Kind::Allowed), Some("host:*.org"));
        assert_eq!(
            r.title(&two, Some("search")),
            "sites that relaxed their rules for GPTBot, CCBot and the search crawlers where host:*.org"
        );
        let r = request(Some("example.com"), Some(Kind::Blocked), None);
        assert_eq!(
            r.title(&[], None),
            "robots.txt changes of example.com for every known crawler"
        );
        assert_eq!(
            request(None, None, None).title(&gpt, None),
            "robots.txt changes for GPTBot"
        );
    }
}
