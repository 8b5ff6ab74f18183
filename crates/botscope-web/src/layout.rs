//! The frame every page shares (navigation, stylesheet, footer) and the
//! small pieces the pages are made of. Text from strangers goes through
//! [`Text`]: escaped by the template, with control and bidi characters
//! shown as visible escapes.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use maud::{DOCTYPE, Markup, html};

/// Text from strangers: HTML-escaped, control and bidi characters shown
/// as `\x1b`, `\u{202e}` (the log report's renderer).
pub use botscope_logs::render::Text;

/// A value for a URL's query or path, percent-encoded.
pub use botscope_text::url_component as enc;

/// `?k=v&…` of the non-empty pairs.
pub fn query(pairs: &[(&str, &str)]) -> String {
    let parts: Vec<String> = pairs
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| format!("{k}={}", enc(v)))
        .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!("?{}", parts.join("&"))
    }
}

/// `2025-06-01` of a time.
pub fn day(t: i64) -> String {
    jiff::Timestamp::from_second(t)
        .map_or_else(|_| t.to_string(), |ts| ts.strftime("%Y-%m-%d").to_string())
}

const NAV: &[(&str, &str)] = &[
    ("/search", "Search"),
    ("/robots", "Robots"),
    ("/crawlers", "Crawlers"),
    ("/logs", "Logs"),
    ("/submit", "Submit"),
    ("/check", "Check"),
    ("/api", "API"),
];

/// The site's header for pages with their own style (the log report the
/// command line writes), `current` marked; styled by [`HEADER_STYLE`],
/// which such a page adds to its own.
pub fn header(current: &str) -> Markup {
    html! {
        header.top {
            a.brand href="/" { "botscope" }
            nav {
                @for (href, label) in NAV {
                    a href=(href) aria-current=[(*href == current).then_some("page")] { (label) }
                }
            }
        }
    }
}

/// The rules of [`header`], as the site's stylesheet has them, for a page
/// whose policy allows only its own inline style.
pub const HEADER_STYLE: &str = "body{margin-top:0}header.top{display:flex;flex-wrap:wrap;align-items:center;gap:.4em 1.4em;padding:.6em 1.2em;margin:0 -1.5em 1em;background:#1f4e79;color:#fff}header.top a{color:#fff;text-decoration:none}header.top .brand{font-weight:700;font-size:1.15em}header.top nav{display:flex;flex-wrap:wrap;gap:.2em 1em}header.top nav a[aria-current=page]{text-decoration:underline;text-underline-offset:4px}";

/// A whole page.
pub struct Page<'a> {
    /// The title (also the `h1` unless the body has its own).
    pub title: &'a str,
    /// The navigation entry that is current.
    pub nav: &'a str,
    /// The content.
    pub body: Markup,
    /// A line at the foot (attributions).
    pub foot: Option<Markup>,
    /// The demo's notice is shown.
    pub demo: bool,
    /// The page's Atom feed (title, address), announced in the head for
    /// feed readers (`rel="alternate"`).
    pub feed: Option<(String, String)>,
}

impl Page<'_> {
    /// The HTML.
    pub fn render(self) -> Markup {
        html! {
            (DOCTYPE)
            html lang="en" {
                head {
                    meta charset="utf-8";
                    meta name="viewport" content="width=device-width,initial-scale=1";
                    title { (Text(self.title)) " · botscope" }
                    link rel="stylesheet" href="/static/style.css";
                    link rel="icon" href="/static/favicon.svg" type="image/svg+xml";
                    @if let Some((t, href)) = &self.feed {
                        link rel="alternate" type="application/atom+xml" title=(t) href=(href);
                    }
                }
                body {
                    (header(self.nav))
                    @if self.demo {
                        p.demo {
                            "Demo: the robots.txt files and logs this repository ships, and a synthetic web made from its real files. "
                            "Serve your own store with " code { "botscope serve --db STORE" } "."
                        }
                    }
                    main { (self.body) }
                    footer {
                        @if let Some(f) = self.foot { (f) " · " }
                        "botscope · " a href="/api" { "JSON API" } " · " a href="/healthz" { "health" }
                    }
                }
            }
        }
    }
}

/// An HTML response.
pub fn html_response(status: StatusCode, markup: Markup) -> Response {
    let mut res = (status, markup.into_string()).into_response();
    res.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    res
}

/// A page saying what went wrong.
pub fn error_page(status: StatusCode, title: &str, detail: &str, demo: bool) -> Response {
    let body = html! {
        h1 { (Text(title)) }
        pre.error { (Text(detail)) }
        p { a href="/" { "Back to the start" } }
    };
    html_response(
        status,
        Page {
            title,
            nav: "",
            body,
            foot: None,
            demo,
            feed: None,
        }
        .render(),
    )
}

/// A verdict, in colour.
pub fn verdict(allowed: bool) -> Markup {
    html! {
        @if allowed { span.ok { "allowed" } } @else { span.no { "disallowed" } }
    }
}

/// The lines of a robots.txt body as text (invalid UTF-8 shown as U+FFFD).
pub fn body_lines(body: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(body);
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    text.split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l).to_owned())
        .collect()
}

/// A robots.txt listing with line numbers; `mark(n)` gives a line's class
/// and the notes beside it.
pub fn listing(lines: &[String], mark: &dyn Fn(u32) -> (Option<&'static str>, Markup)) -> Markup {
    let n = if lines.last().is_some_and(String::is_empty) {
        lines.len() - 1
    } else {
        lines.len()
    };
    html! {
        div.wide tabindex="0" { table.listing {
            tbody {
                @for (i, l) in lines.iter().take(n).enumerate() {
                    @let no = u32::try_from(i + 1).unwrap_or(u32::MAX);
                    @let (class, notes) = mark(no);
                    tr id={ "L" (no) } class=[class] {
                        td.no { (no) }
                        td.src { code { (Text(l)) } }
                        td.notes { (notes) }
                    }
                }
            }
        } }
    }
}

/// Stylesheet content type and caching.
pub fn static_response(body: &'static str, content_type: &'static str) -> Response {
    let mut res = body.into_response();
    let h = res.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=3600"),
    );
    res
}
