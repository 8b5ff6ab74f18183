//! Accessibility (WCAG 2.1 A and AA, axe-core in headless Chromium) of
//! what the commands write as HTML and of the gate's pages. The web
//! application's pages are checked by botscope-web's browser tests.

#![allow(clippy::unwrap_used)]

use std::path::Path;

use botscope_testkit::webdriver::Browser;

/// What `look` finds in the file at `page` at a laptop's width and a
/// phone's, each line naming the width; with `BOTSCOPE_SCREENSHOTS` set,
/// the page at each width saved there.
fn at_both_widths(page: &Path, look: impl AsyncFn(&Browser) -> Vec<String>) -> Vec<String> {
    let url = format!(
        "file://{}",
        page.canonicalize().expect("the page exists").display()
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let mut out = Vec::new();
        for (w, h) in [(1400, 1000), (390, 844)] {
            let b = Browser::start(w, h).await;
            b.client.goto(&url).await.expect("the page opens");
            if let Some(dir) = std::env::var_os("BOTSCOPE_SCREENSHOTS") {
                let name = page.file_stem().and_then(|s| s.to_str()).unwrap_or("page");
                let png = b.screenshot_page(6000).await;
                let _ = std::fs::create_dir_all(&dir);
                let _ = std::fs::write(Path::new(&dir).join(format!("{name}.{w}.png")), png);
            }
            out.extend(
                look(&b)
                    .await
                    .into_iter()
                    .map(|v| format!("at {w} px: {v}")),
            );
            b.close().await;
        }
        out
    })
}

/// axe-core's serious and critical findings in the file at `page`, and
/// what stops a walk through it with the Tab key, read at a laptop's width
/// and a phone's; each line names the width.
pub fn violations(page: &Path) -> Vec<String> {
    at_both_widths(page, async |b: &Browser| b.barriers().await)
}

/// What makes `page` hard to read at a phone's width and a wide
/// screen's (words broken inside, text under 10 px, a table's last column
/// off the screen: `Browser::reading_problems`); each line names the width.
pub fn reading(page: &Path) -> Vec<String> {
    at_both_widths(page, async |b: &Browser| b.reading_problems().await)
}

/// Asserts that axe-core finds nothing serious in `page`.
pub fn assert_accessible(what: &str, page: &Path) {
    let v = violations(page);
    assert!(
        v.is_empty(),
        "{what}: axe-core (WCAG 2.1 A and AA, serious and critical) and the keyboard walk:\n{}",
        v.join("\n")
    );
}

#[test]
fn the_gates_challenge_page_is_accessible() {
    // The page a person meets when a scraper is suspected, as a browser
    // without JavaScript shows it (the script only changes the status
    // line's words, then leaves; its proof of work would keep the page
    // busy past the driver's patience). A long delay keeps it on screen.
    let mut cfg = botscope_gate::challenge::ChallengeConfig::new(
        b"a test key of 32 bytes, no more.".to_vec(),
    );
    cfg.delay = std::time::Duration::from_secs(600);
    let c = botscope_gate::challenge::Challenges::new(cfg);
    let token = c.token(
        "192.0.2.1".parse().unwrap(),
        "Mozilla/5.0",
        1_800_000_000,
        None,
    );
    let dir = crate::scratch("a11y-gate");
    for (name, note) in [
        ("plain", None),
        ("retry", Some("the proof of work did not hold")),
    ] {
        let page = dir.join(format!("challenge-{name}.html"));
        let html = botscope_gate::challenge::page(&c, &token, "/shop?item=1", note);
        let (before, script) = html
            .split_once("<script>")
            .expect("the page has its script");
        let after = script.split_once("</script>").expect("the script ends").1;
        std::fs::write(&page, format!("{before}{after}")).unwrap();
        assert_accessible(&format!("the challenge page ({name})"), &page);
    }
}

/// The checks themselves: a page with a link whose focus is invisible,
/// a control off the screen and a positive tabindex is refused for each;
/// the same page with its focus ring and order restored passes.
#[test]
fn the_keyboard_walk_finds_what_stops_a_person_without_a_mouse() {
    let dir = crate::scratch("a11y-keys");
    let bad = dir.join("bad.html");
    std::fs::write(
        &bad,
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>t</title>\
         <style>a:focus{outline:none}.gone{position:absolute;width:0;height:0;overflow:hidden}</style></head>\
         <body><main><h1>t</h1><p><a href=\"#one\">one</a> <a class=\"gone\" href=\"#two\">two</a>\
         <button tabindex=\"2\">three</button></p></main></body></html>",
    )
    .unwrap();
    let v = violations(&bad).join("\n");
    for want in [
        "no visible focus indicator on a[href=#one]",
        "which is not shown",
        "a positive tabindex changes the tab order: button",
    ] {
        assert!(v.contains(want), "{want:?} in:\n{v}");
    }
    let good = dir.join("good.html");
    std::fs::write(
        &good,
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>t</title></head>\
         <body><main><h1>t</h1><p><a href=\"#one\">one</a> <button>three</button></p></main></body></html>",
    )
    .unwrap();
    assert_accessible("a page with two plain controls", &good);
}

/// The honeypot's own pages (a site's page, its 404 and its failing
/// robots.txt) are meant for crawlers, but a person may follow a link to
/// them.
#[test]
fn the_honeypots_pages_are_accessible() {
    let d = botscope_honeypot::design::Design::new(8, "hp.test", 1).unwrap();
    let dir = crate::scratch("a11y-honeypot");
    // s5 answers its robots.txt with a server error.
    for (name, host, path, status) in [
        ("page", "s0.hp.test", "/page/1", 200),
        ("not-found", "s0.hp.test", "/nowhere", 404),
        ("server-error", "s5.hp.test", "/robots.txt", 500),
    ] {
        let a = d.answer(host, path, Some("Mozilla/5.0"));
        assert_eq!(a.status, status, "{host}{path}");
        let page = dir.join(format!("{name}.html"));
        std::fs::write(&page, &a.body).unwrap();
        assert_accessible(&format!("the honeypot's {name} page"), &page);
    }
}

/// The reports the commands write as HTML, on a phone and a wide screen:
/// no word of a rule, an action, a number or a robot's name broken
/// inside, no text under 10 px, every table's last column on the screen.
/// Found by a probe: the replay's rule names broke letter by letter at
/// 390 px ("pro/toc/ol-/file/s", "d/e/n/y") and "action" inside the word
/// at 1,400 px; the log report's chart labels were 4 px high on a phone.
#[test]
fn the_reports_read_on_a_phone_and_a_wide_screen() {
    let dir = crate::scratch("reading");
    let mut problems = Vec::new();
    // The policy replay of the balanced preset over the shipped logs.
    let policy = dir.join("policy.yaml");
    std::fs::write(&policy, botscope_policy::preset("balanced").unwrap()).unwrap();
    let replay = dir.join("replay.html");
    let logs = crate::root().join("examples/logs");
    let o = crate::botscope(
        &[
            "policy",
            "replay",
            crate::arg(&policy),
            crate::arg(&logs.join("elastic_examples_apache_logs.log")),
            crate::arg(&logs.join("nielsbasjes_logparser_hackers-access.log")),
            "--format",
            "html",
            "--out",
            crate::arg(&replay),
        ],
        b"",
    );
    assert!(o.status.success(), "{}", crate::stderr(&o));
    problems.extend(reading(&replay).into_iter().map(|p| format!("replay: {p}")));
    // The log reports.
    for log in [
        "elastic_examples_apache_logs.log",
        "nielsbasjes_logparser_hackers-access.log",
    ] {
        let out = dir.join(format!("{log}.html"));
        let o = crate::botscope(
            &[
                "logs",
                "analyze",
                crate::arg(&logs.join(log)),
                "--format",
                "html",
                "--out",
                crate::arg(&out),
            ],
            b"",
        );
        assert!(o.status.success(), "{}", crate::stderr(&o));
        problems.extend(reading(&out).into_iter().map(|p| format!("{log}: {p}")));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
