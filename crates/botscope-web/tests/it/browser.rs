//! The pages in headless Chromium driven through WebDriver: what a person
//! does (type a query, click a column, pick a file) and what only a
//! browser knows (layout width, console errors, the policy holding).
//!
//! `BOTSCOPE_SCREENSHOTS=DIR` also saves a PNG of each page at both
//! widths (`scripts/screenshots` writes the ones in docs/screenshots/).

use std::path::PathBuf;

use botscope_testkit::webdriver::Browser;
use fantoccini::Locator;
use serde_json::Value;

use super::{PAGES, demo, get, pct, uploads};

/// The console lines that mean something went wrong: errors and policy
/// refusals.
async fn errors(b: &Browser) -> Vec<String> {
    b.console()
        .await
        .into_iter()
        .filter(|l| {
            l.level == "SEVERE"
                || l.message.contains("Refused")
                || l.message.contains("Content Security Policy")
        })
        .map(|l| format!("{} {}", l.level, l.message))
        .collect()
}

async fn js(b: &Browser, script: &str) -> Value {
    b.client.execute(script, vec![]).await.unwrap()
}

/// The robots table's cells, row by row.
async fn rows(client: &fantoccini::Client) -> Vec<Vec<String>> {
    let v = client
        .execute(
            "return [...document.querySelectorAll('#favor tbody tr')]\
             .map(r => [...r.cells].map(c => c.textContent.trim()))",
            vec![],
        )
        .await
        .unwrap();
    serde_json::from_value(v).unwrap()
}

async fn click(b: &Browser, what: Locator<'_>) {
    b.client.find(what).await.unwrap().click().await.unwrap();
}

/// The rendered text of every element `css` selects, read in one script
/// so that a page that navigates meanwhile cannot leave a stale element.
async fn texts(b: &Browser, css: &str) -> Vec<String> {
    let v = b
        .client
        .execute(
            "return [...document.querySelectorAll(arguments[0])].map(e => e.innerText.trim())",
            vec![Value::from(css)],
        )
        .await
        .unwrap();
    serde_json::from_value(v).unwrap()
}

/// A file name for a page's screenshot.
pub(crate) fn shot_name(path: &str, width: &str) -> String {
    let mut s: String = path
        .trim_start_matches('/')
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    if s.is_empty() {
        s = "home".into();
    }
    format!("{s}.{width}.png")
}

/// What a person would see as broken, measured in the page: a table
/// whose body cells are not under their header cells (or beside the
/// header instead of below it), an axis or legend label that runs into
/// another or is cut by its picture, a page without the site's header.
const GEOMETRY: &str = r#"
const problems = [];
const name = e => e.id ? '#' + e.id : e.tagName.toLowerCase() + (e.className && typeof e.className == 'string' ? '.' + e.className.split(' ')[0] : '');
for (const t of document.querySelectorAll('table')) {
  if (!t.tHead || !t.tBodies.length) continue;
  // A table stacked on a phone: every cell names its column and stays in
  // the window, its last (the Why) too.
  if (t.classList.contains('stack') && getComputedStyle(t).display == 'block') {
    for (const r of [...t.tBodies[0].rows].slice(0, 8))
      for (const c of r.cells) {
        const b = c.getBoundingClientRect();
        if (!c.dataset.label) problems.push(name(t) + ': a stacked cell without its column name');
        if (b.right > window.innerWidth + 0.5 || b.left < -0.5)
          problems.push(name(t) + ': a stacked cell (' + c.dataset.label + ') runs out of the window');
      }
    continue;
  }
  const hb = t.tHead.getBoundingClientRect();
  if (hb.width == 0) continue;
  if (window.innerWidth >= 1200 && t.getBoundingClientRect().width > document.documentElement.clientWidth)
    problems.push(name(t) + ': wider than a laptop screen (' + Math.round(t.getBoundingClientRect().width) + ' px)');
  const head = [...t.tHead.rows].pop();
  const hcells = [...head.cells];
  for (const r of [...t.tBodies[0].rows].slice(0, 8)) {
    const rb = r.getBoundingClientRect();
    if (rb.top < hb.bottom - 1) { problems.push(name(t) + ': a body row is beside the header, not under it'); break; }
    if (r.cells.length != hcells.length) continue;
    [...r.cells].forEach((c, i) => {
      const a = c.getBoundingClientRect(), h = hcells[i].getBoundingClientRect();
      if (Math.abs(a.left - h.left) > 1.5 || Math.abs(a.right - h.right) > 1.5)
        problems.push(name(t) + ': cell ' + i + ' (' + c.textContent.trim().slice(0, 20) + ') is not under its header');
    });
  }
}
for (const svg of document.querySelectorAll('svg')) {
  const sb = svg.getBoundingClientRect();
  if (sb.width == 0) continue;
  const texts = [...svg.querySelectorAll('text')].map(t => [t.textContent, t.getBoundingClientRect()]).filter(([_, b]) => b.width > 0);
  for (const [t, b] of texts)
    if (b.left < sb.left - 0.5 || b.right > sb.right + 0.5 || b.top < sb.top - 0.5 || b.bottom > sb.bottom + 0.5)
      problems.push(name(svg) + ': label "' + t + '" is cut by its picture');
  for (let i = 0; i < texts.length; i++)
    for (let j = i + 1; j < texts.length; j++) {
      const [x, a] = texts[i], [y, b] = texts[j];
      if (a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5)
        problems.push(name(svg) + ': labels "' + x + '" and "' + y + '" overlap');
    }
}
if (!document.querySelector('header.top nav')) problems.push('no site header with its navigation');
return problems.slice(0, 12);
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_page_fits_a_laptop_and_a_phone() {
    let addr = demo();
    // The trends charts are computed in the background: asked here first,
    // so that the pages show them.
    for q in ["", "?agent=GPTBot"] {
        assert_eq!(get(addr, &format!("/api/trends{q}")).status, 200);
    }
    let shots = std::env::var_os("BOTSCOPE_SCREENSHOTS").map(PathBuf::from);
    let mut inaccessible = Vec::new();
    for (w, h, tag) in [(1400, 1000, "desktop"), (390, 844, "phone")] {
        let b = Browser::start(w, h).await;
        for p in PAGES {
            b.client.goto(&format!("http://{addr}{p}")).await.unwrap();
            let v = js(
                &b,
                "return [document.documentElement.scrollWidth, window.innerWidth, \
                 document.title, document.querySelectorAll('nav a').length]",
            )
            .await;
            assert_eq!(v[1], w, "the viewport is {w} px wide");
            if v[0].as_u64() > v[1].as_u64() {
                let culprits = js(
                    &b,
                    "return [...document.querySelectorAll('body *')]\
                     .filter(e => !e.parentElement.closest('.wide') && (e.getBoundingClientRect().right > window.innerWidth\
                       || (e.scrollWidth > e.clientWidth && getComputedStyle(e).overflowX == 'visible')))\
                     .slice(0, 8).map(e => e.tagName + '.' + (e.getAttribute('class') || ''))",
                )
                .await;
                panic!("{p} is wider than a {tag} screen: {v}; {culprits}");
            }
            assert!(
                v[2].as_str().is_some_and(|t| t.contains("botscope")),
                "{p}: {v}"
            );
            assert!(
                v[3].as_u64() >= Some(6),
                "{p}: navigation to every page: {v}"
            );
            let e = errors(&b).await;
            assert!(e.is_empty(), "{p} at {w} px: {e:?}");
            let broken = js(&b, GEOMETRY).await;
            assert_eq!(broken, serde_json::json!([]), "{p} at {w} px");
            let a11y = b.accessibility().await;
            if !a11y.is_empty() {
                inaccessible.push(format!("{p} at {w} px:\n  {}", a11y.join("\n  ")));
            }
            if p.starts_with("/crawler/") {
                // The verdict table's Why is in view without scrolling.
                let why = js(
                    &b,
                    "const c = document.querySelector('table.addresses tbody tr td[data-label=Why]');\
                     if (!c) return null; const r = c.getBoundingClientRect();\
                     return [r.left, r.right, window.innerWidth, c.textContent.length];",
                )
                .await;
                let v: Vec<f64> = serde_json::from_value(why.clone()).expect("a Why cell");
                assert!(
                    v[0] >= 0.0 && v[1] <= v[2] + 0.5 && v[3] > 0.0,
                    "{p} at {w} px: {why}"
                );
            }
            if let Some(dir) = &shots {
                std::fs::create_dir_all(dir).unwrap();
                let png = b.screenshot_page(3000).await;
                std::fs::write(dir.join(shot_name(p, tag)), png).unwrap();
            }
            // Last: the walk moves the focus (and may scroll).
            let keys = b.keyboard_walk().await;
            if !keys.is_empty() {
                inaccessible.push(format!(
                    "{p} at {w} px, by keyboard:\n  {}",
                    keys.join("\n  ")
                ));
            }
        }
        b.close().await;
    }
    assert!(
        inaccessible.is_empty(),
        "axe-core (WCAG 2.1 A and AA, serious and critical) and the keyboard walk:\n{}",
        inaccessible.join("\n")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_from_the_query_box() {
    let addr = demo();
    let b = Browser::start(1400, 1000).await;
    // Seed queries whose answer the example files fix, and one the API
    // answers (the API is checked against the command line elsewhere).
    let api = get(addr, &format!("/api/search?q={}", pct("favor:googlebot"))).json();
    let from_api: Vec<String> = api["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["site"].as_str().unwrap().to_owned())
        .collect();
    assert!(!from_api.is_empty());
    for (q, want) in [
        (
            "site:ebay.com OR site:etsy.com",
            vec!["www.ebay.com".to_owned(), "www.etsy.com".to_owned()],
        ),
        (
            "site:google.com botname:googlebot",
            vec!["news.google.com".to_owned()],
        ),
        ("favor:googlebot", from_api),
    ] {
        b.client.goto(&format!("http://{addr}/")).await.unwrap();
        let input = b
            .client
            .find(Locator::Css("form.search input[name=q]"))
            .await
            .unwrap();
        input.send_keys(q).await.unwrap();
        click(&b, Locator::Css("form.search button[type=submit]")).await;
        b.wait_for(Locator::Css("p.count")).await.unwrap();
        let url = b.client.current_url().await.unwrap();
        let sent: Vec<(String, String)> = url.query_pairs().into_owned().collect();
        assert!(sent.contains(&("q".into(), q.into())), "{url}");
        let mut got = texts(&b, "ol.hits li.hit a.site").await;
        let mut want = want;
        if q.starts_with("site:") {
            got.sort();
            want.sort();
        }
        assert_eq!(got, want, "{q}");
        let count = texts(&b, "p.count b").await;
        assert!(!count.is_empty(), "{q}: the result count is shown");
    }
    assert!(errors(&b).await.is_empty());
    b.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clicking_a_column_sorts_the_robots_table() {
    let addr = demo();
    let b = Browser::start(1400, 1000).await;
    b.client
        .goto(&format!("http://{addr}/robots"))
        .await
        .unwrap();
    let first = rows(&b.client).await;
    assert!(first.len() > 5, "{first:?}");
    let num = |s: &str| s.parse::<f64>().unwrap();
    for (label, col, ascending) in [
        ("Favourability", 4, false),
        ("Robot", 0, true),
        ("Disfavoured", 3, false),
        ("Appeared", 1, false),
    ] {
        click(&b, Locator::LinkText(label)).await;
        // The page before had a sorted column too: wait for this one.
        b.wait_for(Locator::XPath(&format!(
            "//table[@id='favor']//th[@aria-sort]//a[normalize-space(.)='{label}']"
        )))
        .await
        .unwrap();
        let sorted_by = texts(&b, "#favor th[aria-sort] a").await;
        assert_eq!(sorted_by, [label]);
        let now = rows(&b.client).await;
        assert_eq!(now.len(), first.len(), "{label}: same robots");
        for w in now.windows(2) {
            if col == 0 {
                assert!(
                    w[0][0].to_lowercase() <= w[1][0].to_lowercase(),
                    "{label}: {w:?}"
                );
            } else if ascending {
                assert!(num(&w[0][col]) <= num(&w[1][col]), "{label}: {w:?}");
            } else {
                assert!(num(&w[0][col]) >= num(&w[1][col]), "{label}: {w:?}");
            }
        }
        let order = |r: &Vec<Vec<String>>| r.iter().map(|x| x[0].clone()).collect::<Vec<_>>();
        if label != "Appeared" {
            assert_ne!(order(&now), order(&first), "{label} reorders the table");
        }
    }
    assert!(errors(&b).await.is_empty());
    b.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_map_draws_a_mark_per_located_address() {
    let addr = demo();
    let m = get(addr, "/api/crawler/googlebot").json();
    let located: Vec<(String, String)> = m["logs"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|l| l["addresses"].as_array().unwrap())
        .filter(|a| a["latitude"].is_f64())
        .map(|a| {
            (
                a["ip"].as_str().unwrap().to_owned(),
                a["verdict"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert!(!located.is_empty());
    let b = Browser::start(1400, 1000).await;
    b.client
        .goto(&format!("http://{addr}/crawler/googlebot"))
        .await
        .unwrap();
    // Each mark is drawn: it has a box inside the map's.
    let v = js(
        &b,
        "const map = document.querySelector('svg.map').getBoundingClientRect();\
         return [...document.querySelectorAll('svg.map circle.mark')].map(c => {\
           const r = c.getBoundingClientRect();\
           return [c.getAttribute('class'), c.textContent.trim(), r.width > 0 && r.height > 0 &&\
             r.left >= map.left - 5 && r.right <= map.right + 5 &&\
             r.top >= map.top - 5 && r.bottom <= map.bottom + 5];\
         })",
    )
    .await;
    let marks = v.as_array().unwrap();
    assert_eq!(marks.len(), located.len(), "{v}");
    for mark in marks {
        assert_eq!(mark[2], true, "drawn inside the map: {mark}");
    }
    for (ip, verdict) in &located {
        assert!(
            marks.iter().any(
                |mk| mk[1].as_str().unwrap_or_default().contains(ip.as_str())
                    && mk[0]
                        .as_str()
                        .unwrap_or_default()
                        .contains(match verdict.as_str() {
                            "verified" => "verified",
                            "spoofed" => "spoofed",
                            _ => "other",
                        })
            ),
            "{ip} ({verdict}) has its mark: {v}"
        );
    }
    assert!(errors(&b).await.is_empty());
    b.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_log_picked_in_the_browser_gives_the_report() {
    let addr = uploads();
    let b = Browser::start(1400, 1000).await;
    b.client.goto(&format!("http://{addr}/logs")).await.unwrap();
    let log = botscope_testkit::root()
        .join("examples/logs/elastic_examples_apache_logs.log")
        .canonicalize()
        .unwrap();
    b.client
        .find(Locator::Css("form.upload input[type=file]"))
        .await
        .unwrap()
        .send_keys(&log.display().to_string())
        .await
        .unwrap();
    click(&b, Locator::Css("form.upload button[type=submit]")).await;
    if let Err(e) = b.wait_for(Locator::Css("body[data-ready='1']")).await {
        panic!("{e}: {}", b.client.source().await.unwrap_or_default());
    }
    let url = b.client.current_url().await.unwrap();
    let id = url.path().strip_prefix("/logs/").unwrap().to_owned();
    let lines = std::fs::read_to_string(&log).unwrap().lines().count();
    let json = get(addr, &format!("/api/logs/{id}")).json();
    assert_eq!(json["lines"]["total"], lines, "the whole file was sent");
    let heading = texts(&b, "h1").await;
    assert!(
        heading
            .iter()
            .any(|h| h.contains("Robots in the access log")),
        "{heading:?}"
    );
    // Its robots link to their crawler pages, and the link works.
    let robot = b
        .client
        .find(Locator::Css("a[href^='/crawler/']"))
        .await
        .unwrap();
    robot.click().await.unwrap();
    b.wait_for(Locator::Css("svg.map")).await.unwrap();
    assert!(
        b.client
            .current_url()
            .await
            .unwrap()
            .path()
            .starts_with("/crawler/")
    );
    assert!(errors(&b).await.is_empty());
    b.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_preferences_beside_the_checker_fit_both_widths() {
    let addr = super::preferences_server();
    let page = "/site/preferences.example?agent=OtherBot&url=%2Fai-ok%2Fpage";
    let shots = std::env::var_os("BOTSCOPE_SCREENSHOTS").map(PathBuf::from);
    for (w, h, tag) in [(1400, 1000, "desktop"), (390, 844, "phone")] {
        let b = Browser::start(w, h).await;
        b.client
            .goto(&format!("http://{addr}{page}"))
            .await
            .unwrap();
        let v = js(
            &b,
            "return [document.documentElement.scrollWidth, window.innerWidth]",
        )
        .await;
        assert!(v[0].as_u64() <= v[1].as_u64(), "{tag}: {v}");
        assert_eq!(js(&b, GEOMETRY).await, serde_json::json!([]), "{tag}");
        assert!(errors(&b).await.is_empty());
        // The statement the checker meets, and its label, side by side on
        // a laptop and one under the other on a phone, never overlapping.
        let boxes = js(
            &b,
            "const dt = document.querySelector('#usage dt'), dd = document.querySelector('#usage dd');\
             const a = dt.getBoundingClientRect(), c = dd.getBoundingClientRect();\
             return [a.right <= c.left + 0.5 || a.bottom <= c.top + 0.5, dd.textContent]",
        )
        .await;
        assert_eq!(boxes[0], true, "{tag}: label and value overlap");
        assert!(
            boxes[1].as_str().unwrap_or_default().contains("train-ai=y"),
            "{boxes}"
        );
        assert_eq!(texts(&b, "#stated tbody tr").await.len(), 5);
        // The whole table is seen, not scrolled within its box.
        let fits = js(
            &b,
            "return document.querySelector('#stated').getBoundingClientRect().right <= window.innerWidth",
        )
        .await;
        assert_eq!(fits, true, "{tag}: the statements table is cut");
        if let Some(dir) = &shots {
            std::fs::create_dir_all(dir).unwrap();
            let png = b.screenshot_page(3000).await;
            std::fs::write(dir.join(shot_name("site-preferences", tag)), png).unwrap();
        }
        // Last: the walk moves the focus.
        let a11y = b.barriers().await;
        assert!(a11y.is_empty(), "{tag}:\n{}", a11y.join("\n"));
        b.close().await;
    }
}

/// What the forms answer (a checked robots.txt with its verdicts and lint,
/// a stored submission) and the error page are read by axe-core and
/// walked by keyboard at both widths, as the pages they come from are.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn form_answers_and_error_pages_are_accessible() {
    let addr = uploads();
    let mut found = Vec::new();
    for (w, h) in [(1400, 1000), (390, 844)] {
        let b = Browser::start(w, h).await;
        let mut look = async |what: &str| {
            assert_eq!(
                js(&b, GEOMETRY).await,
                serde_json::json!([]),
                "{what} at {w} px"
            );
            // The error page's own status is the one console line allowed.
            let e: Vec<String> = errors(&b)
                .await
                .into_iter()
                .filter(|l| !l.contains("status of 404"))
                .collect();
            assert!(e.is_empty(), "{what} at {w} px: {e:?}");
            found.extend(
                b.barriers()
                    .await
                    .into_iter()
                    .map(|v| format!("{what} at {w} px: {v}")),
            );
        };
        // The checker's answer.
        b.client
            .goto(&format!("http://{addr}/check"))
            .await
            .unwrap();
        let form = b.client.form(Locator::Css("form.stack")).await.unwrap();
        form.set_by_name(
            "robots_txt",
            "User-agent: *\nDisallow: /private/\nCrawl-delay: x\n",
        )
        .await
        .unwrap();
        form.set_by_name("agent", "Googlebot").await.unwrap();
        form.set_by_name("urls", "/\n/private/page").await.unwrap();
        form.submit().await.unwrap();
        b.wait_for(Locator::Css("#verdicts")).await.unwrap();
        assert_eq!(texts(&b, "#verdicts tbody tr").await.len(), 2);
        look("the checker's answer").await;
        // A submission, stored.
        b.client
            .goto(&format!("http://{addr}/submit"))
            .await
            .unwrap();
        let form = b.client.form(Locator::Css("form.stack")).await.unwrap();
        form.set_by_name("site", &format!("a11y-{w}.example"))
            .await
            .unwrap();
        form.set_by_name("robots_txt", "User-agent: *\nDisallow: /tmp/\n")
            .await
            .unwrap();
        form.submit().await.unwrap();
        // The form's own page has an h1 too: wait for the answer's, or
        // the read races the navigation and finds a stale element.
        b.wait_for(Locator::XPath("//h1[starts-with(., 'Stored')]"))
            .await
            .unwrap();
        look("a stored submission").await;
        // The error page.
        b.client
            .goto(&format!("http://{addr}/site/nowhere.invalid"))
            .await
            .unwrap();
        look("the error page").await;
        b.close().await;
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}
