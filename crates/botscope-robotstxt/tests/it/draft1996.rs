//! Tables 9-3 and 9-4 of "HTTP: The Definitive Guide", section 9.4 (the
//! 1996 draft semantics), as tests.

use botscope_robotstxt::{Matcher, ParseOptions, Semantics};

fn draft(body: &str) -> Matcher {
    Matcher::compile(
        body.as_bytes(),
        Semantics::Draft1996,
        &ParseOptions::default(),
    )
}

/// Table 9-3: rule path against URL path. Each row is tested as a
/// Disallow rule: "matches" means the URL is disallowed.
#[test]
fn table_9_3_path_matching() {
    let rows: &[(&str, &str, bool, &str)] = &[
        ("/tmp", "/tmp", true, "rule path == URL path"),
        (
            "/tmp",
            "/tmpfile.html",
            true,
            "rule path is a prefix of the URL path",
        ),
        (
            "/tmp",
            "/tmp/a.html",
            true,
            "rule path is a prefix of the URL path",
        ),
        ("/tmp/", "/tmp", false, "/tmp/ is not a prefix of /tmp"),
        (
            "/~fred/hi.html",
            "/%7Efred/hi.html",
            true,
            "%7E is treated like ~",
        ),
        (
            "/%7Efred/hi.html",
            "/~fred/hi.html",
            true,
            "%7E is treated like ~",
        ),
        (
            "/%7efred/hi.html",
            "/%7Efred/hi.html",
            true,
            "escapes are case-insensitive",
        ),
        (
            "/~fred/hi.html",
            "~fred%2Fhi.html",
            false,
            "%2F is a slash, but slashes must match exactly",
        ),
        (
            "/~fred/hi.html",
            "/~fred%2Fhi.html",
            false,
            "%2F is a slash, but slashes must match exactly",
        ),
        (
            "/~fred%2fhi.html",
            "/~fred%2Fhi.html",
            true,
            "an encoded slash matches an encoded slash",
        ),
    ];
    for (rule, path, matches, why) in rows {
        let m = draft(&format!("User-agent: *\nDisallow: {rule}\n"));
        assert_eq!(
            !m.check_path("anybot", path.as_bytes()).allowed,
            *matches,
            "{rule} vs {path}: {why}"
        );
    }
    // The empty rule path matches every path: an empty Disallow allows all.
    let m = draft("User-agent: *\nDisallow:\n");
    let v = m.check_path("anybot", b"/README.TXT");
    assert!(
        v.allowed && v.rule.is_some(),
        "empty rule path matches README.TXT"
    );
}

const MARYS_ANTIQUES: &str = "\
#####################################################################
# This is the robots.txt file for Mary's Antiques web site
#####################################################################
# Keep Suzy's robot out of all the dynamic URLs because it doesn't
# understand them, and out of all the private data, except for the
# small section Mary has reserved on the site for Suzy.
User-Agent: Suzy-Spider
Disallow: /dynamic
Allow: /private/suzy-stuff
Disallow: /private

# The Furniture-Finder robot was specially designed to understand
# Mary's antique store's furniture inventory program, so let it
# crawl that resource, but keep it out of all the other dynamic
# resources and out of all the private data.
User-Agent: Furniture-Finder
Allow: /dynamic/check-inventory
Disallow: /dynamic
Disallow: /private

# Keep everyone else out of the dynamic gateways and private data.
User-Agent: *
Disallow: /dynamic
Disallow: /private
";

/// Table 9-4. The robots are named as the file names them (the table's
/// headings drop the hyphens: under the draft's substring match
/// `SuzySpider` would not contain `Suzy-Spider`), and the last row reads
/// `check-inventory` as in the file (the table's `checkinventory` is a
/// misprint: as written it matches only `/dynamic`, asserted below).
#[test]
fn table_9_4_marys_antiques() {
    let m = draft(MARYS_ANTIQUES);
    let rows: &[(&str, [bool; 3])] = &[
        ("http://www.marys-antiques.com/", [true, true, true]),
        (
            "http://www.marys-antiques.com/index.html",
            [true, true, true],
        ),
        (
            "http://www.marys-antiques.com/private/payroll.xls",
            [false, false, false],
        ),
        (
            "http://www.marys-antiques.com/private/suzy-stuff/taxes.txt",
            [true, false, false],
        ),
        (
            "http://www.marys-antiques.com/dynamic/buystuff?id=3546",
            [false, false, false],
        ),
        (
            "http://www.marys-antiques.com/dynamic/check-inventory?kitchen",
            [false, true, false],
        ),
    ];
    let robots = ["Suzy-Spider/1.0", "Furniture-Finder", "NosyBot"];
    for (url, want) in rows {
        for (robot, allowed) in robots.iter().zip(want) {
            assert_eq!(m.is_allowed(robot, url), *allowed, "{robot} {url}");
        }
    }
    assert!(!m.is_allowed(
        "Furniture-Finder",
        "http://www.marys-antiques.com/dynamic/checkinventory?kitchen"
    ));
    // Under Google's semantics the same file gives the same answers.
    let g = Matcher::new(MARYS_ANTIQUES.as_bytes());
    assert!(g.is_allowed("Suzy-Spider", "/private/suzy-stuff/taxes.txt"));
    assert!(g.is_allowed("Furniture-Finder", "/dynamic/check-inventory?kitchen"));
}

/// "User-Agent: bot" matches Bot, Robot, Bottom-Feeder, Spambot and
/// Dont-Bother-Me (section 9.4.3).
#[test]
fn substring_user_agent_match() {
    let m = draft("User-Agent: bot\nDisallow: /\n");
    for robot in ["Bot", "Robot", "Bottom-Feeder", "Spambot", "Dont-Bother-Me"] {
        assert!(!m.is_allowed(robot, "/x"), "{robot}");
    }
    assert!(m.is_allowed("Crawler", "/x"));
}

/// The first matching record wins; records end at blank lines.
#[test]
fn first_record_and_blank_lines() {
    let m =
        draft("User-agent: a\nDisallow: /a\n\nDisallow: /orphan\n\nUser-agent: ab\nDisallow: /b\n");
    assert!(
        !m.is_allowed("ab", "/a"),
        "`a` is a substring of `ab` and comes first"
    );
    assert!(m.is_allowed("ab", "/b"));
    assert!(
        m.is_allowed("a", "/orphan"),
        "a rule after a blank line belongs to no record"
    );
}

/// The draft has no wildcards: `*` and `$` are plain characters.
#[test]
fn no_wildcards() {
    let m = draft("User-agent: *\nDisallow: /*.gif$\n");
    assert!(m.is_allowed("x", "/a.gif"));
    assert!(!m.is_allowed("x", "/*.gif$"));
}
