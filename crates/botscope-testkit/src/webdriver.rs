//! Headless Chromium driven through WebDriver: Debian's `chromedriver`
//! (package `chromium-driver`, installed by the test command) on a
//! loopback port it picks itself, and a fantoccini client.

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};

use fantoccini::wd::WebDriverCompatibleCommand;
use fantoccini::{Client, ClientBuilder};

/// axe-core's rules of WCAG 2.0 and 2.1, levels A and AA; a serious or
/// critical violation is reported.
const AXE_RUN: &str = "const done = arguments[arguments.length - 1];\
 axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']},\
                    resultTypes: ['violations']})\
   .then(r => done(r.violations.filter(v => v.impact == 'serious' || v.impact == 'critical')\
     .map(v => v.impact + ' ' + v.id + ': ' + v.help + ' (' + v.nodes.length + ' elements: ' +\
       v.nodes.slice(0, 5).map(n => n.target.join(' ') + ' [' +\
         (n.failureSummary || '').split('\\n').slice(1, 2).join(' ').trim() + ']').join('; ') + ')')))\
   .catch(e => done(['axe-core failed: ' + e]));";

/// Installs the focus log of [`Browser::keyboard_walk`] and returns how
/// many controls the page has (where the Tab key may stop).
const KEY_WALK_SETUP: &str = r#"
const describe = e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') +
  (e.className && typeof e.className == 'string' ? '.' + e.className.trim().split(/\s+/).join('.') : '') +
  (e.getAttribute('href') ? '[href=' + e.getAttribute('href').slice(0, 60) + ']' : '') +
  ' "' + (e.innerText || e.value || e.getAttribute('aria-label') || '').trim().slice(0, 40) + '"';
const log = { seen: 0, bad: [] };
document.addEventListener('focusin', ev => {
  const e = ev.target;
  log.seen++;
  const s = getComputedStyle(e);
  const ring = s.outlineStyle == 'auto' || (s.outlineStyle != 'none' && parseFloat(s.outlineWidth) >= 2) || s.boxShadow != 'none';
  if (!ring) log.bad.push('no visible focus indicator on ' + describe(e) +
    ' (outline ' + s.outlineStyle + ' ' + s.outlineWidth + ')');
  const r = e.getBoundingClientRect();
  if (r.width < 1 || r.height < 1 || s.visibility == 'hidden')
    log.bad.push('the focus lands on ' + describe(e) + ', which is not shown');
}, true);
log.problems = () => {
  const out = log.bad.slice();
  for (const e of document.querySelectorAll('[tabindex]'))
    if (e.tabIndex > 0) out.push('a positive tabindex changes the tab order: ' + describe(e));
  if (log.seen == 0 && window.__botscopeFocus.controls > 0)
    out.push('the Tab key reached none of the ' + window.__botscopeFocus.controls + ' controls');
  return [...new Set(out)];
};
window.__botscopeFocus = log;
if (document.activeElement && document.activeElement != document.body) document.activeElement.blur();
log.controls = document.querySelectorAll(
  'a[href], button, input:not([type=hidden]), select, textarea, summary, [tabindex]:not([tabindex="-1"])').length;
return log.controls;
"#;

/// axe-core's source, read once from `target/axe/axe.min.js`.
fn axe_source() -> &'static str {
    static AXE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    AXE.get_or_init(|| {
        let p = concat!(env!("CARGO_MANIFEST_DIR"), "/../../target/axe/axe.min.js");
        std::fs::read_to_string(p).unwrap_or_else(|e| {
            panic!("{p}: {e}; scripts/test fetches axe-core (npm, pinned) before the tests")
        })
    })
}

/// A chromedriver process with one browser session, stopped (driver and
/// browser, by their process group) when dropped.
#[derive(Debug)]
pub struct Browser {
    /// The session.
    pub client: Client,
    driver: Child,
    _profile: tempfile::TempDir,
}

/// One line of the browser's console.
#[derive(Debug, Clone)]
pub struct ConsoleLine {
    /// `SEVERE`, `WARNING`, `INFO`, …
    pub level: String,
    /// The text, with its source.
    pub message: String,
}

/// Starts chromedriver on a port of its choice: the process and the
/// port it says it listens on, or `None` (the process stopped) when it
/// exits or says nothing for 30 seconds.
fn start_driver() -> Option<(Child, u16)> {
    let mut driver = Command::new("chromedriver")
        .arg("--port=0")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .expect("chromedriver is needed (the test command in README installs chromium-driver)");
    let stdout = driver.stdout.take().expect("piped");
    // "ChromeDriver was started successfully on port 40603."
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut sent = false;
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if !sent && let Some(rest) = line.split("on port ").nth(1) {
                let port: String = rest.chars().take_while(char::is_ascii_digit).collect();
                if line.contains("successfully") {
                    let _ = tx.send(port.parse::<u16>().ok());
                    sent = true;
                }
            }
        }
        let _ = tx.send(None);
    });
    match rx
        .recv_timeout(std::time::Duration::from_secs(30))
        .ok()
        .flatten()
    {
        Some(port) => Some((driver, port)),
        None => {
            let _ = driver.kill();
            let _ = driver.wait();
            None
        }
    }
}

impl Browser {
    /// Starts chromedriver and a headless Chromium whose viewport is
    /// `width` × `height` CSS pixels.
    ///
    /// # Panics
    /// When chromedriver or Chromium is missing or does not start.
    pub async fn start(width: u32, height: u32) -> Browser {
        // A chromedriver that exits or stays silent (seen once in a
        // busy run) is stopped and started again, three times at most.
        let (driver, port) = (0..3)
            .find_map(|_| start_driver())
            .expect("chromedriver said on which port it listens (three starts)");
        let profile = tempfile::tempdir().expect("profile directory");
        let mut caps = serde_json::Map::new();
        let mut args: Vec<String> = crate::browser::HEADLESS
            .iter()
            .map(|a| (*a).to_owned())
            .collect();
        args.extend([
            "--hide-scrollbars".to_owned(),
            format!("--window-size={width},{height}"),
            format!("--user-data-dir={}", profile.path().display()),
        ]);
        caps.insert(
            "goog:chromeOptions".into(),
            serde_json::json!({ "binary": crate::browser::chromium_exe(), "args": args }),
        );
        caps.insert(
            "goog:loggingPrefs".into(),
            serde_json::json!({ "browser": "ALL" }),
        );
        let client = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
            .capabilities(caps)
            .connect(&format!("http://127.0.0.1:{port}/"))
            .await
            .expect("a WebDriver session");
        let browser = Browser {
            client,
            driver,
            _profile: profile,
        };
        browser.resize(width, height).await;
        browser
    }

    /// Sets the viewport (not the window) to `width` × `height`.
    ///
    /// # Panics
    /// When the browser does not answer.
    pub async fn resize(&self, width: u32, height: u32) {
        let inner = self
            .client
            .execute(
                "return [window.outerWidth - window.innerWidth, window.outerHeight - window.innerHeight]",
                vec![],
            )
            .await
            .expect("window size");
        let dw = inner[0].as_u64().unwrap_or(0) as u32;
        let dh = inner[1].as_u64().unwrap_or(0) as u32;
        self.client
            .set_window_size(width + dw, height + dh)
            .await
            .expect("set window size");
    }

    /// Waits (fantoccini's default wait) until an element `what` selects
    /// is on the page. A search that a navigation interrupts (a form
    /// submitted or a link followed just before: Chromium answers
    /// "aborted by navigation") is searched again on the new page, at
    /// most 20 times.
    ///
    /// # Errors
    /// When no such element comes within the wait, or the driver fails
    /// otherwise.
    pub async fn wait_for(
        &self,
        what: fantoccini::Locator<'_>,
    ) -> Result<fantoccini::elements::Element, fantoccini::error::CmdError> {
        let mut interrupted = 0;
        loop {
            match self.client.wait().for_element(what).await {
                Err(fantoccini::error::CmdError::NotW3C(v))
                    if v.as_str() == Some("aborted by navigation") && interrupted < 20 =>
                {
                    interrupted += 1;
                }
                found => return found,
            }
        }
    }

    /// The console lines since the last call.
    ///
    /// # Panics
    /// When the driver does not answer.
    pub async fn console(&self) -> Vec<ConsoleLine> {
        let v = self
            .client
            .issue_cmd(Post {
                path: "se/log",
                body: serde_json::json!({ "type": "browser" }),
            })
            .await
            .expect("the browser's log");
        v.as_array()
            .map(|a| {
                a.iter()
                    .map(|e| ConsoleLine {
                        level: e["level"].as_str().unwrap_or_default().to_owned(),
                        message: e["message"].as_str().unwrap_or_default().to_owned(),
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// A PNG of the whole page at the viewport's width, at most
    /// `max_height` pixels tall (through chromedriver's DevTools
    /// passthrough, which captures beyond the viewport).
    ///
    /// # Panics
    /// When the browser does not answer.
    pub async fn screenshot_page(&self, max_height: u32) -> Vec<u8> {
        use base64::Engine as _;
        let size = self
            .client
            .execute(
                "return [document.documentElement.clientWidth, document.documentElement.scrollHeight]",
                vec![],
            )
            .await
            .expect("page size");
        let w = size[0].as_u64().unwrap_or(1400);
        let h = size[1].as_u64().unwrap_or(1000).min(u64::from(max_height));
        let v = self
            .client
            .issue_cmd(Post {
                path: "goog/cdp/execute",
                body: serde_json::json!({
                    "cmd": "Page.captureScreenshot",
                    "params": {
                        "format": "png",
                        "captureBeyondViewport": true,
                        "clip": { "x": 0, "y": 0, "width": w, "height": h, "scale": 1 },
                    },
                }),
            })
            .await
            .expect("screenshot");
        base64::engine::general_purpose::STANDARD
            .decode(v["data"].as_str().unwrap_or_default())
            .expect("a base64 PNG")
    }

    /// The serious and critical violations of WCAG 2.1 A and AA that
    /// axe-core finds in the page shown, each as a line: impact, rule,
    /// help text and (up to five of) the elements, with why. axe-core is
    /// injected into the page (WebDriver's scripts are not subject to the
    /// page's Content-Security-Policy).
    ///
    /// # Panics
    /// When axe-core is not installed (`scripts/test` fetches it, pinned,
    /// into `target/axe/`) or the browser does not answer.
    pub async fn accessibility(&self) -> Vec<String> {
        let loaded = self
            .client
            .execute(&format!("{};\nreturn typeof axe;", axe_source()), vec![])
            .await
            .expect("axe-core injected");
        assert_eq!(loaded, "object", "axe-core loads in the page");
        let v = self
            .client
            .execute_async(AXE_RUN, vec![])
            .await
            .expect("axe-core ran");
        serde_json::from_value(v).unwrap_or_else(|e| vec![format!("axe-core's answer: {e}")])
    }

    /// Walks the page with the Tab key, as a person without a mouse does,
    /// and returns what stops them (each once): a control that takes the
    /// focus without a visible focus indicator (the browser's own ring, an
    /// outline of at least 2 px or a box shadow), a focus stop that takes
    /// no room on the screen, and an element that changes the tab order
    /// with a positive `tabindex`. The walk presses Tab once per control
    /// the page has, plus one (at most 500), so that each is reached.
    ///
    /// # Panics
    /// When the browser does not answer.
    pub async fn keyboard_walk(&self) -> Vec<String> {
        use fantoccini::actions::{InputSource, KeyAction, KeyActions};
        let n = self
            .client
            .execute(KEY_WALK_SETUP, vec![])
            .await
            .expect("the focus log is installed");
        let n = n.as_u64().unwrap_or(0).min(500);
        let tab: char = fantoccini::key::Key::Tab.into();
        let mut keys = KeyActions::new("keyboard".into());
        for _ in 0..=n {
            keys = keys
                .then(KeyAction::Down { value: tab })
                .then(KeyAction::Up { value: tab });
        }
        self.client
            .perform_actions(keys)
            .await
            .expect("the Tab key is pressed");
        let v = self
            .client
            .execute("return window.__botscopeFocus.problems();", vec![])
            .await
            .expect("the focus log is read");
        serde_json::from_value(v).unwrap_or_else(|e| vec![format!("the focus log: {e}")])
    }

    /// What axe-core finds ([`Browser::accessibility`]), then what stops
    /// the walk with the Tab key ([`Browser::keyboard_walk`], which moves
    /// the focus: call it last on a page).
    ///
    /// # Panics
    /// As the two do.
    pub async fn barriers(&self) -> Vec<String> {
        let mut v = self.accessibility().await;
        v.extend(self.keyboard_walk().await);
        v
    }

    /// What makes the page shown hard to read at this width, each as a
    /// line (at most 20): a word of a table cell, caption or heading broken
    /// across lines (a word that fits its cell never is; one wider than
    /// the cell may be), text under 10 CSS pixels (SVG text as drawn, its
    /// picture's scale applied), and a table whose last column (its last
    /// cell of the first rows, for a table stacked into blocks) runs past
    /// the window's right edge.
    ///
    /// # Panics
    /// When the browser does not answer.
    pub async fn reading_problems(&self) -> Vec<String> {
        let v = self
            .client
            .execute(READING, vec![])
            .await
            .expect("the page is measured");
        serde_json::from_value(v).unwrap_or_else(|e| vec![format!("the measure: {e}")])
    }

    /// Ends the session and the driver.
    pub async fn close(mut self) {
        let _ = self.client.clone().close().await;
        self.stop();
    }

    fn stop(&mut self) {
        // The browser runs in the driver's process group.
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.driver.id())])
            .status();
        let _ = self.driver.wait();
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if matches!(self.driver.try_wait(), Ok(None)) {
            self.stop();
        }
    }
}

/// A POST to a session's endpoint: chromedriver's log (`se/log`, not in
/// W3C WebDriver but kept by chromedriver) and its DevTools passthrough
/// (`goog/cdp/execute`).
#[derive(Debug)]
struct Post {
    path: &'static str,
    body: serde_json::Value,
}

impl WebDriverCompatibleCommand for Post {
    fn endpoint(
        &self,
        base_url: &url::Url,
        session_id: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        base_url.join(&format!(
            "session/{}/{}",
            session_id.unwrap_or_default(),
            self.path
        ))
    }

    fn method_and_body(&self, _: &url::Url) -> (http::Method, Option<String>) {
        (http::Method::POST, Some(self.body.to_string()))
    }
}

/// The measures of [`Browser::reading_problems`], in the page.
const READING: &str = r#"
const problems = [];
const add = p => { if (problems.length < 20 && !problems.includes(p)) problems.push(p); };
const W = document.documentElement.clientWidth;
// Words broken across lines.
for (const el of document.querySelectorAll('td, th, caption, h1, h2, h3, dt, dd, li')) {
  const box = el.getBoundingClientRect();
  if (box.width == 0) continue;
  const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  let n, seen = 0;
  while ((n = walker.nextNode()) && seen < 400) {
    if (n.parentElement.closest('svg')) continue;
    for (const m of n.textContent.matchAll(/\S+/g)) {
      if (++seen > 400) break;
      const r = document.createRange();
      r.setStart(n, m.index); r.setEnd(n, m.index + m[0].length);
      const rects = [...r.getClientRects()].filter(x => x.width > 0);
      if (rects.length < 2) continue;
      const tops = new Set(rects.map(x => Math.round(x.top)));
      const width = rects.reduce((s, x) => s + x.width, 0);
      if (tops.size > 1 && width <= box.width + 1)
        add('the word "' + m[0].slice(0, 40) + '" is broken across lines in ' + el.tagName.toLowerCase());
    }
  }
}
// Text under 10 px.
for (const el of document.querySelectorAll('body *')) {
  if (el.closest('svg') && el.tagName.toLowerCase() != 'text') continue;
  const own = [...el.childNodes].some(c => c.nodeType == 3 && c.textContent.trim());
  if (!own) continue;
  const b = el.getBoundingClientRect();
  if (b.width == 0 || b.height == 0) continue;
  let px = parseFloat(getComputedStyle(el).fontSize);
  const svg = el.closest('svg');
  if (svg && svg.viewBox && svg.viewBox.baseVal && svg.viewBox.baseVal.width > 0)
    px *= svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
  if (px < 10 - 0.05)
    add('text "' + el.textContent.trim().slice(0, 30) + '" is ' + px.toFixed(1) + ' px');
}
// Every table's last column on the screen.
for (const t of document.querySelectorAll('table')) {
  const tb = t.getBoundingClientRect();
  if (tb.width == 0) continue;
  // The rows read (a header hidden for the stacked layout is not).
  const rows = [...(t.tBodies[0] ? t.tBodies[0].rows : t.rows)].slice(0, 12);
  for (const r of rows) {
    const last = r.cells[r.cells.length - 1];
    if (!last) continue;
    const b = last.getBoundingClientRect();
    if (b.width > 0 && b.right > W + 1) {
      add('a table' + (t.id ? ' #' + t.id : '') + ': its last column ends at ' + Math.round(b.right) + ' px, past the window (' + W + ' px)');
      break;
    }
  }
}
return problems;
"#;
