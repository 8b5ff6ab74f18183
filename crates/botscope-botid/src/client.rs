//! What kind of client a User-Agent is: a browser, a crawler, a feed
//! reader, a link preview, an HTTP library, an operating system's own
//! agent, a media player, a headless browser, a monitor, a scanner, or
//! unknown. `is_bot` answers "robot or not"; a site owner deciding what to
//! let through, and a report that keeps feeds and people working, need
//! the kind.
//!
//! Pure and bounded: one pass of an Aho-Corasick automaton over the first
//! [`crate::MAX_UA_BYTES`] of the string, and the registry's category
//! of a claimed bot.

use serde::{Deserialize, Serialize};

use crate::Category;

/// The kind of client a User-Agent names.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum ClientType {
    /// A browser or an app a person runs (mail, messaging, in-app views).
    Browser,
    /// A robot that fetches on its own schedule or for a service: search,
    /// AI, SEO, archive and other crawlers (the registry's category says
    /// which).
    Crawler,
    /// A feed reader or fetcher (RSS, Atom, podcasts' feeds).
    FeedReader,
    /// A link preview: a social network or messenger fetching a page to
    /// show a card for a link.
    Preview,
    /// An HTTP library or download tool (curl, wget, python-requests).
    Library,
    /// An operating system's own agent (Apple's server-bag, Windows'
    /// connectivity check, package managers).
    OsService,
    /// A media player or streaming app.
    MediaPlayer,
    /// A headless or automated browser.
    Headless,
    /// An uptime or performance monitor.
    Monitor,
    /// A security or vulnerability scanner.
    Scanner,
    /// Nothing in the string says.
    #[default]
    Unknown,
}

impl ClientType {
    /// Every type, in the order reports list them.
    pub const ALL: &'static [ClientType] = &[
        ClientType::Browser,
        ClientType::Crawler,
        ClientType::FeedReader,
        ClientType::Preview,
        ClientType::Library,
        ClientType::OsService,
        ClientType::MediaPlayer,
        ClientType::Headless,
        ClientType::Monitor,
        ClientType::Scanner,
        ClientType::Unknown,
    ];

    /// The name in JSON and reports (`feed-reader`).
    pub fn as_str(self) -> &'static str {
        match self {
            ClientType::Browser => "browser",
            ClientType::Crawler => "crawler",
            ClientType::FeedReader => "feed-reader",
            ClientType::Preview => "preview",
            ClientType::Library => "library",
            ClientType::OsService => "os-service",
            ClientType::MediaPlayer => "media-player",
            ClientType::Headless => "headless",
            ClientType::Monitor => "monitor",
            ClientType::Scanner => "scanner",
            ClientType::Unknown => "unknown",
        }
    }

    /// The type a registered bot's category gives.
    pub fn of_category(c: Option<Category>) -> ClientType {
        match c {
            Some(Category::Monitoring) => ClientType::Monitor,
            Some(Category::Social) => ClientType::Preview,
            Some(Category::Feed) => ClientType::FeedReader,
            _ => ClientType::Crawler,
        }
    }

    /// Whether clients of this type are robots (not a person's browser,
    /// app or player).
    pub fn is_robot(self) -> bool {
        !matches!(
            self,
            ClientType::Browser | ClientType::MediaPlayer | ClientType::Unknown
        )
    }
}

impl std::fmt::Display for ClientType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Words that name a kind of client, matched without regard to case, by
/// type; when several match, the first type in this list wins (a headless
/// browser that says `Mozilla` is still headless; a scanner that says
/// `curl` is a scanner).
pub const KEYWORDS: &[(ClientType, &[&str])] = &[
    (
        ClientType::Headless,
        &[
            "headlesschrome",
            "headless chrome",
            "headlessedg",
            "phantomjs",
            "slimerjs",
            "puppeteer",
            "playwright",
            "selenium",
            "htmlunit",
            "jsdom",
        ],
    ),
    (
        ClientType::Scanner,
        &[
            "nmap",
            "masscan",
            "zgrab",
            "zmap",
            "nikto",
            "sqlmap",
            "nuclei",
            "wpscan",
            "acunetix",
            "netsparker",
            "invicti",
            "censysinspect",
            "censys",
            "shodan",
            "expanse",
            "internet-measurement",
            "internetmeasurement",
            "qualys",
            "openvas",
            "nessus",
            "burp",
            "detectify",
            "securitytrails",
            "leakix",
            "l9explore",
            "l9tcpid",
            "w3af",
            "dirbuster",
            "gobuster",
            "feroxbuster",
            "wfuzz",
            "ffuf",
            "sucuri",
            "sitelock",
            "tenable",
            "vulnerab",
            "pentest",
            "security scan",
            "securityscan",
            "scanner",
        ],
    ),
    (
        ClientType::Monitor,
        &[
            "uptime",
            "pingdom",
            "statuscake",
            "site24x7",
            "monitor",
            "nagios",
            "check_http",
            "zabbix",
            "icinga",
            "newrelicpinger",
            "datadog",
            "hetrixtools",
            "nodeping",
            "freshping",
            "checkly",
            "catchpoint",
            "dynatrace",
            "gtmetrix",
            "lighthouse",
            "webpagetest",
            "ptst/",
            "sematext",
            "cronitor",
            "healthcheck",
            "health-check",
            "health check",
            "kube-probe",
            "prometheus",
            "blackbox",
            "statusgator",
            "updown.io",
            "appsignal",
            "pagespeed",
            "observatory",
            "synthetic",
        ],
    ),
    (
        ClientType::Preview,
        &[
            "facebookexternalhit",
            "facebookcatalog",
            "twitterbot",
            "slackbot",
            "slack-imgproxy",
            "discordbot",
            "telegrambot",
            "linkedinbot",
            "skypeuripreview",
            "iframely",
            "embedly",
            "redditbot",
            "vkshare",
            "viber",
            "snapchat",
            "bitlybot",
            "tumblr",
            "mastodon",
            "akkoma",
            "pleroma",
            "misskey",
            "cardyb",
            "bluesky",
            "bingpreview",
            "microsoftpreview",
            "google-pagerenderer",
            "link preview",
            "linkpreview",
            "preview",
        ],
    ),
    (
        ClientType::FeedReader,
        &[
            "feedly",
            "feedbin",
            "newsblur",
            "inoreader",
            "freshrss",
            "tiny tiny rss",
            "tt-rss",
            "miniflux",
            "feedfetcher",
            "feedburner",
            "netnewswire",
            "reeder",
            "liferea",
            "akregator",
            "newsboat",
            "newsbeuter",
            "quiterss",
            "rssowl",
            "feeddemon",
            "readkit",
            "feedreader",
            "feed reader",
            "feedparser",
            "feed-parser",
            "feedfetch",
            "feed fetch",
            "gpodder",
            "castget",
            "castero",
            "bashpodder",
            "playapod",
            "podpuppy",
            "superfeedr",
            "feedspot",
            "blogtrottr",
            "feedpress",
            "theoldreader",
            "bazqux",
            "rssapi",
            "rss",
        ],
    ),
    (
        ClientType::OsService,
        &[
            "server-bag",
            "com.apple.",
            "captivenetworksupport",
            "microsoft ncsi",
            "windows-update-agent",
            "microsoft-cryptoapi",
            "microsoft-wns",
            "microsoft-delivery-optimization",
            "apt-http",
            "libdnf",
            "zypper",
            "pacman/",
            "networkmanager",
            "connman",
            "ocspd",
            "trustd",
            "nsurlsessiond",
            "softwareupdate",
            "mobileasset",
        ],
    ),
    (
        ClientType::MediaPlayer,
        &[
            "vlc",
            "windows-media-player",
            "nsplayer",
            "itunes",
            "kodi",
            "xbmc",
            "mplayer",
            "mpv",
            "foobar2000",
            "winamp",
            "spotify",
            "deezer",
            "sonos",
            "pandora",
            "quicktime",
            "stagefright",
            "amarok",
            "audacious",
            "musicbee",
            "songbird",
            "nightingale",
            "jriver",
            "downcast",
            "flycast",
            "kasts",
            "nexplayer",
            "substream",
            "xtream",
            "youview",
            "mixerbox",
            "hubhopper",
            "music player daemon",
            "media go",
            "alexamediaplayer",
            "mediaplayer",
            "media player",
        ],
    ),
    (
        ClientType::Library,
        &[
            "curl",
            "wget",
            "python-requests",
            "python-urllib",
            "python-httpx",
            "aiohttp",
            "go-http-client",
            "java/",
            "okhttp",
            "apache-httpclient",
            "libwww-perl",
            "lwp::",
            "http::tiny",
            "http-tiny",
            "axios",
            "node-fetch",
            "undici",
            "faraday",
            "guzzle",
            "reqwest",
            "winhttp",
            "deno/",
            "symfony",
            "esp32",
            "carrierwave",
            "gstreamer",
            "lavf",
            "ffmpeg",
            "libsoup",
            "git-annex",
            "grequests",
            "google-http-java-client",
            "resty-requests",
            "matomotracker",
            "piwik",
            "powershell",
            "httpie",
            "postmanruntime",
            "insomnia",
            "applecoremedia",
            "download manager",
            "downloader",
            "libcurl",
            "got/",
            "got (",
            "down/",
            "fdm/",
            "fdm ",
            "emacs/",
            "libsyn",
        ],
    ),
];

/// Words of the apps people run that generic robot words also fire on
/// (`PodcastGuru 2.0.3`, `Garmin Forerunner 945/13.0`, `Podimo/1.11.3
/// build 91/Android 28`).
const APP_WORDS: &[&str] = &[
    "podcast",
    "android app",
    "ios app",
    "android/",
    "ios/",
    "(ios",
    " ios ",
    "iphone",
    "ipad",
    "ipod",
    "apple watch",
    "cfnetwork",
    "darwin/",
    "garmin",
    "radio",
    "music",
    "player",
    "tpapi",
];

/// Words that say robot however the rest reads.
const ROBOT_WORDS: &[&str] = &[
    "bot",
    "crawl",
    "spider",
    "scrap",
    "fetch",
    "index",
    "archiv",
    "monitor",
    "check",
    "scan",
    "seo",
    "http-client",
    "library",
];

/// Whether `ua` names an app a person runs and no robot.
pub(crate) fn names_an_app(ua: &str) -> bool {
    let lower = ua.to_ascii_lowercase();
    APP_WORDS.iter().any(|w| lower.contains(w)) && !ROBOT_WORDS.iter().any(|w| lower.contains(w))
}

/// What the browsers of feature phones and old mobile platforms write
/// (`MAXX_MAUI WAP Browser`, `LAVA… WAP Browser/MAUI`, `Nokia6300/2.0 …
/// Profile/MIDP-2.0`, `Opera Mini`, `UCWEB`): a person's browser, though
/// no browser engine is named.
const PHONE_BROWSER_WORDS: &[&str] = &[
    "wap browser",
    "maui",
    "profile/midp",
    "configuration/cldc",
    "up.browser",
    "netfront",
    "obigo",
    "opera mini",
    "ucweb",
    "series40",
    "s40ovibrowser",
    "dolfin",
    "teleca",
    "windows mobile",
    "iemobile",
    "symbianos",
    "blackberry",
];

/// People's desktop browsers that robot pattern lists take for robots:
/// BrowseX (a Tcl/Tk browser isbot lists by name), Google Earth (its
/// embedded WebKit writes `Google Earth/5.2`, which isbot's `google`
/// pattern reads as Google's crawlers), and applications built on
/// EmbeddedWB (a Delphi component embedding Internet Explorer, which
/// writes its home page `http://bsalsa.com` into the User-Agent).
const DESKTOP_BROWSER_WORDS: &[&str] = &["browsex", "google earth/", "bsalsa.com"];

/// Whether `ua` is a person's browser that a robot pattern would take
/// for a robot: a phone's (its browser's words above) or a desktop's
/// named one, and it says no robot.
pub(crate) fn is_named_browser(ua: &str) -> bool {
    let lower = ua.to_ascii_lowercase();
    PHONE_BROWSER_WORDS
        .iter()
        .chain(DESKTOP_BROWSER_WORDS)
        .any(|w| lower.contains(w))
        && !says_robot(ua)
}

/// Whether `ua` has a word that says robot, or a robot's contact URL
/// (`+http…`).
pub(crate) fn says_robot(ua: &str) -> bool {
    let lower = ua.to_ascii_lowercase();
    ROBOT_WORDS.iter().any(|w| lower.contains(w)) || lower.contains("+http")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_kebab_case_and_unique() {
        let names: std::collections::BTreeSet<&str> =
            ClientType::ALL.iter().map(|t| t.as_str()).collect();
        assert_eq!(names.len(), ClientType::ALL.len());
        assert_eq!(
            serde_json::to_string(&ClientType::FeedReader).expect("json"),
            "\"feed-reader\""
        );
        for (_, words) in KEYWORDS {
            for w in *words {
                assert_eq!(*w, w.to_ascii_lowercase(), "keywords are lower case");
            }
        }
    }
}
