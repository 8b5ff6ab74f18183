//! Headless Chromium (Debian's `chromium`, installed by the test command).

use std::path::Path;
use std::process::Command;

/// A page as Chromium left it.
#[derive(Debug)]
pub struct Page {
    /// The DOM after scripts ran.
    pub dom: String,
    /// Console lines Chromium logged.
    pub console: Vec<String>,
}

/// Chromium's flags for a headless run in a test: no sandbox (tests may
/// run as root), no GPU, and nothing fetched from outside.
pub(crate) const HEADLESS: &[&str] = &[
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
];

/// The Chromium executable on `PATH`.
///
/// # Panics
/// When there is none.
pub fn chromium_exe() -> String {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find_map(|c| {
            let path = std::env::var_os("PATH")?;
            std::env::split_paths(&path)
                .map(|d| d.join(c))
                .find(|p| p.is_file())
                .map(|p| p.display().to_string())
        })
        .expect("headless Chromium is needed (the test command in README installs it)")
}

/// Opens `url` (a `file://` or loopback address) in headless Chromium and
/// returns the DOM after scripts and the console lines. `profile` is an
/// empty directory for Chromium's profile.
pub fn chromium(url: &str, profile: &Path) -> Page {
    let exe = chromium_exe();
    let o = Command::new(exe)
        .args(HEADLESS)
        .args([
            // A laptop's width: pages are checked to fit it.
            "--window-size=1400,1000",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--dump-dom")
        .arg(url)
        .output()
        .expect("run chromium");
    let console = String::from_utf8_lossy(&o.stderr)
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(str::to_owned)
        .collect();
    Page {
        dom: String::from_utf8_lossy(&o.stdout).into_owned(),
        console,
    }
}
