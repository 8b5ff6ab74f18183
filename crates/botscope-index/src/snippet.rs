//! The lines of a file that a query matched, for a hit's snippet (pure).

use crate::doc::product_token;
use crate::query::{Clause, Field, words};

/// Lines shown at most.
const MAX_LINES: usize = 5;
/// Characters shown of a line at most.
const MAX_CHARS: usize = 160;

/// A line's key (lower-case, without `-`, `_` or spaces; at most 16
/// bytes, longer keys are none of the keys a clause asks for) and value.
/// No allocation: every line of every hit goes through here.
fn key_value(line: &str) -> Option<([u8; 16], usize, &str)> {
    let line = line.split('#').next().unwrap_or("");
    let (k, v) = line.split_once(':')?;
    let mut key = [0u8; 16];
    let mut n = 0;
    for b in k.bytes() {
        if matches!(b, b'-' | b'_' | b' ' | b'\t') {
            continue;
        }
        if n == key.len() {
            return Some(([0; 16], 0, v.trim()));
        }
        key[n] = b.to_ascii_lowercase();
        n += 1;
    }
    Some((key, n, v.trim()))
}

fn path_matches(value: &str, wanted: &str) -> bool {
    if wanted == "/" {
        value == "/"
    } else if wanted.starts_with(['/', '*']) {
        value.starts_with(wanted)
    } else {
        let segs: Vec<String> = value.split('/').map(str::to_lowercase).collect();
        wanted
            .split('/')
            .filter(|s| !s.is_empty())
            .all(|w| segs.iter().any(|s| *s == w.to_lowercase()))
    }
}

fn names(value: &str, robot: &str) -> bool {
    let v = value.to_lowercase();
    v == robot || product_token(&v) == robot
}

/// Does `line` show what `clause` matched?
fn shows(line: &str, clause: &Clause) -> bool {
    let kv = key_value(line);
    let key = kv
        .as_ref()
        .and_then(|(k, n, _)| std::str::from_utf8(&k[..*n]).ok())
        .unwrap_or("");
    let value = kv.as_ref().map(|(_, _, v)| *v).unwrap_or("");
    match clause {
        Clause::Term(Field::Disallow, w) => key == "disallow" && path_matches(value, w),
        Clause::Term(Field::Allow, w) => key == "allow" && path_matches(value, w),
        Clause::Term(f, w) if f.names_robot() => key == "useragent" && names(value, w),
        Clause::Term(Field::Contain, _) => key == "useragent" && value == "*",
        Clause::Term(Field::Sitemap, w) => {
            key == "sitemap" && (w == "*" || value.to_lowercase().starts_with(w.as_str()))
        }
        Clause::Term(Field::Signal, w) => {
            let name = w.split('=').next().unwrap_or(w);
            key == "contentsignal" && value.to_lowercase().replace(' ', "").contains(name)
        }
        Clause::Term(Field::Usage, w) => {
            let name = w.split('=').next().unwrap_or(w);
            key == "contentusage" && value.to_lowercase().contains(name)
        }
        Clause::Term(_, _) => false,
        Clause::Delay(..) => key == "crawldelay",
        Clause::Word(w) => words(line).iter().any(|x| x == w),
        Clause::Phrase(p) => words(line).windows(p.len()).any(|x| x == &p[..]),
    }
}

/// The lines of `text` that the clauses match (`N: line`, at most five,
/// each cut at 160 characters), or the first rule lines when none does.
pub fn snippet(text: &str, clauses: &[&Clause]) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut picked: Vec<usize> = (0..lines.len())
        .filter(|&i| clauses.iter().any(|c| shows(lines[i], c)))
        .take(MAX_LINES)
        .collect();
    if picked.is_empty() {
        picked = (0..lines.len())
            .filter(|&i| key_value(lines[i]).is_some())
            .take(3)
            .collect();
    }
    picked
        .iter()
        .map(|&i| {
            let l = lines[i].trim_end();
            let mut cut: String = l.chars().take(MAX_CHARS).collect();
            if cut.len() < l.len() {
                cut.push('…');
            }
            format!("{}: {cut}", i + 1)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::parse;

    fn snip(text: &str, q: &str) -> String {
        let q = parse(q).expect("query");
        snippet(text, &q.positive_clauses())
    }

    #[test]
    fn matched_lines() {
        let t = "# hello\nUser-agent: *\nDisallow: /cgi-bin/test\nDisallow: /\n\nUser-agent: Googlebot/2.1\nAllow: /\nCrawl-delay: 5\nSitemap: https://a.test/s.xml\n";
        assert_eq!(snip(t, "disallow:/cgi-bin/"), "3: Disallow: /cgi-bin/test");
        assert_eq!(snip(t, "disallow:/"), "4: Disallow: /");
        assert_eq!(snip(t, "disallow:cgi-bin"), "3: Disallow: /cgi-bin/test");
        assert_eq!(
            snip(t, "favor:googlebot delay:>1"),
            "6: User-agent: Googlebot/2.1\n8: Crawl-delay: 5"
        );
        assert_eq!(snip(t, "contain:universal -botname:x"), "2: User-agent: *");
        assert_eq!(snip(t, "hello"), "1: # hello");
        assert_eq!(
            snip(t, "site:gov"),
            "2: User-agent: *\n3: Disallow: /cgi-bin/test\n4: Disallow: /"
        );
        assert_eq!(snip(t, "sitemap:*"), "9: Sitemap: https://a.test/s.xml");
        let long = format!("Disallow: /{}", "a".repeat(300));
        assert_eq!(snip(&long, "disallow:/a").chars().count(), 3 + 160 + 1);
    }
}
