//! Accessibility (WCAG 2.1 A and AA, axe-core in headless Chromium) of
//! what the commands write as HTML and of the gate's pages. The web
//! application's pages are checked by botscope-web's browser tests.

#![allow(clippy::unwrap_used)]

use std::path::Path;

use botscope_testkit::webdriver::Browser;

/// axe-core's serious and critical findings in the file at `page`, read at
/// a laptop's width and a phone's; each line names the width.
pub fn violations(page: &Path) -> Vec<String> {
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
            out.extend(
                b.accessibility()
                    .await
                    .into_iter()
                    .map(|v| format!("at {w} px: {v}")),
            );
            b.close().await;
        }
        out
    })
}

/// Asserts that axe-core finds nothing serious in `page`.
pub fn assert_accessible(what: &str, page: &Path) {
    let v = violations(page);
    assert!(
        v.is_empty(),
        "{what}: axe-core (WCAG 2.1 A and AA, serious and critical):\n{}",
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
    let token = c.token("192.0.2.1".parse().unwrap(), "Mozilla/5.0", 1_800_000_000);
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
