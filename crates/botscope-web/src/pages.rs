//! The pages. Each handler reads its parameters, gets its model (the same
//! value its `/api` twin answers with, from [`crate::api`]'s model
//! functions) on a blocking thread, and renders it with maud.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::Form;
use axum::extract::{Multipart, Path, Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use botscope_index::{FileBias, SearchResults, Tilt, VersionDiff};
use botscope_robotstxt::{Semantics, Severity};
use maud::{Markup, html};
use serde::Deserialize;

use crate::App;
use crate::api::{
    self, CheckInput, CheckModel, CrawlerModel, FavorParams, SearchParams, SiteModel, SiteParams,
};
use crate::fail::Fail;
use crate::layout::{Page, Text, body_lines, day, enc, html_response, listing, query, verdict};

const STYLE: &str = include_str!("../static/style.css");
const FAVICON: &str = include_str!("../static/favicon.svg");

fn page(app: &App, title: &str, nav: &str, body: Markup) -> Response {
    page_with(app, StatusCode::OK, title, nav, body, None)
}

fn page_with(
    app: &App,
    status: StatusCode,
    title: &str,
    nav: &str,
    body: Markup,
    foot: Option<Markup>,
) -> Response {
    page_feed(app, status, title, nav, body, foot, None)
}

/// A page that has an Atom feed (its title and address), announced in
/// the head.
fn page_feed(
    app: &App,
    status: StatusCode,
    title: &str,
    nav: &str,
    body: Markup,
    foot: Option<Markup>,
    feed: Option<(String, String)>,
) -> Response {
    html_response(
        status,
        Page {
            title,
            nav,
            body,
            foot,
            demo: app.is_demo(),
            feed,
        }
        .render(),
    )
}

impl Fail {
    /// The failure as a page.
    pub fn page(self, app: &App) -> Response {
        let (status, title) = match &self {
            Fail::BadRequest(_) => (StatusCode::BAD_REQUEST, "That cannot be answered"),
            Fail::NotFound(_) => (StatusCode::NOT_FOUND, "Not found"),
            Fail::TooLarge(_) => (StatusCode::PAYLOAD_TOO_LARGE, "Too large"),
            Fail::Internal(_) => (StatusCode::INTERNAL_SERVER_ERROR, "Something failed"),
            Fail::Busy(_) => (StatusCode::SERVICE_UNAVAILABLE, "Busy"),
        };
        let res = crate::layout::error_page(status, title, self.detail(), app.is_demo());
        self.retry_after(res)
    }
}

/// `/`: what is here, and where to start.
pub async fn home(State(app): State<Arc<App>>) -> Response {
    let a = app.clone();
    let stats = app
        .work(move || {
            a.store_read().and_then(|s| {
                use botscope_store::Store;
                s.stats()
            })
        })
        .await;
    let stats = match stats {
        Ok(Ok(s)) => Some(s),
        _ => None,
    };
    let body = html! {
        h1 { "Robots.txt, robots, and who they really are" }
        p.lead {
            "Search robots.txt files by field, see how each file treats each robot (BotSeer's bias and favourability), "
            "follow restrictions over time, and see what robots do in access logs and whether they are who they say."
        }
        @if let Some(s) = &stats {
            p {
                b { (s.sites) } " sites, " b { (s.versions) } " robots.txt versions ("
                (s.bodies) " distinct files), " (app.index.documents()) " documents in the index."
            }
        }
        (search_form("", "relevance", "google"))
        h2 { "Try" }
        ul.examples {
            @for (q, what) in EXAMPLES {
                li { a href={ "/search" (query(&[("q", q)])) } { code { (q) } } " — " (what) }
            }
        }
        div.cards {
            a.card href="/robots" { b { "Robots" } span { "Favourability of every robot (BotSeer's Figure 5) and restriction over time" } }
            a.card href="/logs" { b { "Logs" } span { "Upload an access log: robots, spoofers, disobedience" } }
            a.card href="/submit" { b { "Submit" } span { "Add a robots.txt and see its bias at once" } }
            a.card href="/check" { b { "Check" } span { "Test a robots.txt against an agent and URLs, both semantics" } }
        }
    };
    page(
        &app,
        "Robots.txt, robots, and who they really are",
        "",
        body,
    )
}

const EXAMPLES: &[(&str, &str)] = &[
    ("botname:googlebot", "files with a group for Googlebot"),
    (
        "favor:googlebot site:gov",
        "government sites that favour Googlebot",
    ),
    (
        "disallow:/cgi-bin/",
        "files that close /cgi-bin/ (and below)",
    ),
    (
        "contain:universal delay:>10",
        "a * group and a Crawl-delay over 10 s",
    ),
    (
        "disfavor:gptbot",
        "files that keep GPTBot out more than others",
    ),
    (
        "favor:googlebot disfavor:msnbot",
        "Google favoured and MSN disfavoured",
    ),
];

fn search_form(q: &str, rank: &str, semantics: &str) -> Markup {
    html! {
        form.search method="get" action="/search" role="search" {
            input type="search" name="q" value=(q) placeholder="favor:googlebot site:gov" aria-label="Query" autofocus;
            select name="rank" aria-label="Ranking" {
                @for (v, l) in [("relevance", "relevance"), ("bias", "bias"), ("site", "site")] {
                    option value=(v) selected[v == rank] { "by " (l) }
                }
            }
            select name="semantics" aria-label="Semantics" {
                option value="google" selected[semantics == "google"] { "Google (RFC 9309)" }
                option value="draft1996" selected[semantics == "draft1996"] { "1996 draft" }
            }
            button type="submit" { "Search" }
        }
        details.help {
            summary { "Modifiers" }
            dl {
                dt { code { "botname:" } } dd { "a User-agent of the file, or its product token (" code { "botname:googlebot" } " finds " code { "Googlebot/2.1" } ")" }
                dt { code { "site:" } } dd { "the host, whole labels from the right (" code { "site:gov" } ", " code { "site:nasa.gov" } ")" }
                dt { code { "disallow:" } " " code { "allow:" } } dd { "a rule's path by prefix (" code { "disallow:/cgi-bin/" } "); " code { "disallow:/" } " alone is exactly " code { "/" } }
                dt { code { "delay:" } } dd { "Crawl-delay: " code { "delay:>10" } ", " code { "delay:[1 TO 5]" } }
                dt { code { "favor:" } " " code { "disfavor:" } " " code { "nobias:" } } dd { "the file's bias towards a robot" }
                dt { code { "contain:universal" } } dd { "the file has a " code { "*" } " group" }
                dt { code { "sitemap:" } " " code { "signal:" } " " code { "usage:" } } dd { "a Sitemap line; a Content-Signal (" code { "signal:ai-train=no" } "); a Content-Usage preference (" code { "usage:train-ai=n" } ")" }
                dt { code { "crawl:" } } dd { "the version an imported crawl found (" code { "crawl:CC-MAIN-2024-10" } "), instead of the latest" }
                dt { "words, " code { "\"phrases\"" } } dd { "in the file's text; terms are ANDed; " code { "OR" } ", " code { "-" } "negation and parentheses work" }
            }
        }
    }
}

/// `/search`.
pub async fn search(State(app): State<Arc<App>>, Query(p): Query<SearchParams>) -> Response {
    let q = p.q.clone().unwrap_or_default();
    let rank = p.rank.clone().unwrap_or_else(|| "relevance".into());
    let sem = p.semantics.clone().unwrap_or_else(|| "google".into());
    if q.trim().is_empty() {
        let body = html! { h1 { "Search" } (search_form("", &rank, &sem)) };
        return page(&app, "Search", "/search", body);
    }
    let page_no = p.page_number();
    let r = api::search_model(&app, &p, 20, (page_no - 1) * 20).await;
    let body = match &r {
        Ok(r) => html! {
            h1 { "Search" }
            (search_form(&q, &rank, &sem))
            (results(r, &p, page_no))
        },
        Err(e) => html! {
            h1 { "Search" }
            (search_form(&q, &rank, &sem))
            pre.error { (Text(e.detail())) }
        },
    };
    let status = r.as_ref().err().map_or(StatusCode::OK, Fail::status);
    let feed = r.is_ok().then(|| crate::feeds::search_feed(q.trim()));
    page_feed(&app, status, "Search", "/search", body, None, feed)
}

fn results(r: &SearchResults, p: &SearchParams, page_no: usize) -> Markup {
    let pages = (r.total as usize).div_ceil(20).max(1);
    let link = |n: usize| {
        format!(
            "/search{}",
            query(&[
                ("q", p.q.as_deref().unwrap_or_default()),
                ("rank", p.rank.as_deref().unwrap_or_default()),
                ("semantics", p.semantics.as_deref().unwrap_or_default()),
                ("as_of", p.as_of.as_deref().unwrap_or_default()),
                ("page", &if n > 1 { n.to_string() } else { String::new() }),
            ])
        )
    };
    html! {
        p.count { b { (r.total) } (if r.total == 1 { " site (" } else { " sites (" }) (format!("{:.1}", r.took_ms)) " ms)" @if pages > 1 { ", page " (page_no) " of " (pages) }
            " · " a href={ "/search/feed.atom" (query(&[("q", p.q.as_deref().unwrap_or_default())])) } type="application/atom+xml" { "Changes of these files (Atom feed)" } }
        ol.hits start=((page_no - 1) * 20 + 1) {
            @for h in &r.hits {
                li.hit {
                    div.head {
                        a.site href={ "/site/" (enc(&h.site)) } { (Text(&h.site)) }
                        @if let Some(rank) = h.rank { " " span.rank title="the site's rank in the host list it was harvested from" { "rank " (rank) } }
                        " " span.muted { "fetched " (h.fetched.get(..10).unwrap_or(&h.fetched)) " · " (h.source) }
                        " " a href={ "/site/" (enc(&h.site)) "/robots.txt" (query(&[("at", &h.fetched)])) } { "cached" }
                        " " a href={ "/site/" (enc(&h.site)) "/bias" (query(&[("as_of", &h.fetched)])) } { "Analyze it!" }
                    }
                    @if !h.snippet.is_empty() { pre.snippet { (Text(&h.snippet)) } }
                    @if !h.bias.is_empty() {
                        div.bias {
                            span.muted title="bias: the paths a robot may fetch minus those every robot (*) may; + favored, − disfavored" { "bias per robot:" }
                            @for (robot, b) in h.bias.iter().take(12) {
                                span class={ "tilt " (Tilt::of(*b).as_str()) } title={ "bias " (b) } {
                                    (Text(robot)) " " (format!("{b:+}"))
                                }
                            }
                        }
                    }
                }
            }
        }
        @if pages > 1 {
            nav.pages {
                @if page_no > 1 { a rel="prev" href=(link(page_no - 1)) { "← previous" } }
                @if page_no < pages { a rel="next" href=(link(page_no + 1)) { "next →" } }
            }
        }
    }
}

/// `/site/HOST`: the file with line numbers and lint, its versions, a
/// diff, and a checker.
pub async fn site(
    State(app): State<Arc<App>>,
    Path(host): Path<String>,
    Query(p): Query<SiteParams>,
) -> Response {
    match api::site_model(&app, &host, &p).await {
        Ok(m) => {
            let title = m.host.clone();
            let feed = crate::feeds::site_feed(&m.host);
            page_feed(
                &app,
                StatusCode::OK,
                &title,
                "",
                site_body(&m, &p),
                None,
                Some(feed),
            )
        }
        Err(e) => e.page(&app),
    }
}

fn site_body(m: &SiteModel, p: &SiteParams) -> Markup {
    let lines = body_lines(m.body.as_bytes());
    let notes = by_line(&m.diagnostics);
    let hit = |sem: &str| {
        m.check
            .iter()
            .find(|c| c.semantics == sem)
            .and_then(|c| c.line)
    };
    let (hit_g, hit_d) = (hit("google"), hit("draft1996"));
    let mark = |no: u32| {
        let class = if Some(no) == hit_g {
            Some("hit")
        } else if Some(no) == hit_d {
            Some("hit2")
        } else {
            None
        };
        let html = html! {
            @if Some(no) == hit_g { span.badge { "decides (Google)" } }
            @if Some(no) == hit_d { span.badge { "decides (1996)" } }
            @for d in notes.get(&no).into_iter().flatten() {
                div class={ "diag " (severity(d.severity)) } { b { (d.code.as_str()) } " " (Text(&d.message)) }
            }
        };
        (class, html)
    };
    let host = enc(&m.host);
    html! {
        h1 { (Text(&m.host)) }
        p {
            @if let Some(r) = m.rank { "Rank " b { (r) } " in the host list. " }
            (m.versions.len()) " version" @if m.versions.len() != 1 { "s" } ". "
            @if let Some(a) = m.absent {
                "Shown: from " b { (day(m.shown)) } " the site had no robots.txt (" (a) "). "
            } @else {
                "Shown: the version first fetched " b { (day(m.shown)) } " (" (m.source) ", " (m.bytes) " bytes). "
            }
            @if m.absent.is_none() {
                a href={ "/site/" (host) "/robots.txt" (query(&[("at", &m.shown.to_string())])) } { "As stored" } " · "
                a href={ "/site/" (host) "/bias" (query(&[("as_of", &m.shown.to_string())])) } { "Analyze it!" } " · "
            }
            a href={ "/site/" (host) "/feed.atom" } type="application/atom+xml" { "Changes (Atom feed)" }
        }
        @let submitted = m.versions.iter().filter(|v| v.source == "submitted").count();
        @if submitted > 0 && m.source != "submitted" {
            p.muted { (submitted) " of the versions were submitted by users: they are kept and listed as such, but search, bias and this page show what the site serves." }
        } @else if m.source == "submitted" {
            p.muted { "botscope has never fetched this site: what it shows was submitted by a user." }
        }
        (timeline(m))
        @if m.absent.is_none() {
        h2 { "Check a URL" }
        form.inline method="get" action={ "/site/" (host) } {
            input type="hidden" name="at" value=(m.shown);
            label { "Agent " input type="text" name="agent" value=(p.agent.as_deref().unwrap_or("Googlebot")) required; }
            label { "URL or path " input type="text" name="url" value=(p.url.as_deref().unwrap_or("/")) required; }
            button type="submit" { "Check" }
        }
        @if !m.check.is_empty() {
            table.verdicts {
                thead { tr { th { "Semantics" } th { "Verdict" } th { "Deciding line" } } }
                tbody {
                    @for c in &m.check {
                        tr {
                            td { (c.semantics) }
                            td { (verdict(c.allowed)) }
                            td { @if let Some(l) = c.line { a href={ "#L" (l) } { (Text(&c.describe)) } } @else { (Text(&c.describe)) } }
                        }
                    }
                }
            }
        }
        @if let Some(pr) = &m.check_preferences {
            (usage_for_check(pr, m.check.iter().any(|c| c.semantics == "google" && c.allowed)))
        }
        (stated_table(&m.stated))
        h2 { "robots.txt" " " span.muted { "(" (m.diagnostics.len()) " lint diagnostics)" } }
        @for d in m.diagnostics.iter().filter(|d| d.line == 0) {
            div class={ "diag " (severity(d.severity)) } { b { (d.code.as_str()) } " " (Text(&d.message)) }
        }
        (listing(&lines, &mark))
        }
        @if m.versions.len() > 1 {
            h2 { "Compare versions" }
            form.inline method="get" action={ "/site/" (host) } {
                input type="hidden" name="at" value=(m.shown);
                label { "From " select name="from" {
                    @for v in &m.versions { option value=(v.from) selected[Some(v.from) == m.diff_from] { (day(v.from)) " (" (v.what()) ")" } }
                } }
                label { "to " select name="to" {
                    @for v in &m.versions { option value=(v.from) selected[Some(v.from) == m.diff_to] { (day(v.from)) " (" (v.what()) ")" } }
                } }
                button type="submit" { "Compare" }
            }
            @if let Some(d) = &m.diff { (diff(d)) }
        }
    }
}

/// The usage preferences the checker's agent meets at its URL.
fn usage_for_check(p: &botscope_robotstxt::Preferences, allowed: bool) -> Markup {
    let lines = |ls: &[u32]| {
        html! { @for (k, l) in ls.iter().enumerate() { @if k > 0 { ", " } a href={ "#L" (l) } { "line " (l) } } }
    };
    html! {
        dl.usage id="usage" {
            dt { "AI usage (Content-Usage)" }
            dd {
                @match &p.usage {
                    Some(u) => { code { (Text(&botscope_robotstxt::show_usage(u))) } " (" (lines(&p.usage_lines)) ")" }
                    None if !allowed => { span.muted { "none: the agent may not crawl this URL, so no preference applies" } }
                    None => { span.muted { "none stated for this path" } }
                }
            }
            dt { "Content-Signal" }
            dd {
                @match &p.content_signal {
                    Some(s) => { code { (Text(&botscope_robotstxt::show_usage(s))) } " (" (lines(&p.signal_lines)) ")" }
                    None => { span.muted { "none stated for this agent" } }
                }
            }
        }
    }
}

/// Every statement of AI usage preferences, and every licence named, in
/// the version shown.
fn stated_table(stated: &[api::StatedLine]) -> Markup {
    html! {
        @if !stated.is_empty() {
            h3 { "AI usage preferences and licences it states" }
            div.wide tabindex="0" { table id="stated" {
                thead { tr { th { "Line" } th { "Agents" } th { "Path" } th { "Statement" } } }
                tbody {
                    @for l in stated {
                        tr {
                            td { a href={ "#L" (l.line) } { (l.line) } " " span.muted { (l.kind.trim_start_matches("Content-")) } }
                            td { (Text(&l.agents)) }
                            td { code { (Text(&l.path)) } }
                            td { code { (Text(&l.statement)) } }
                        }
                    }
                }
            } }
        }
    }
}

/// Diagnostics by line.
fn by_line(
    ds: &[botscope_robotstxt::Diagnostic],
) -> BTreeMap<u32, Vec<&botscope_robotstxt::Diagnostic>> {
    let mut notes: BTreeMap<u32, Vec<&botscope_robotstxt::Diagnostic>> = BTreeMap::new();
    for d in ds {
        notes.entry(d.line).or_default().push(d);
    }
    notes
}

fn severity(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        _ => "note",
    }
}

fn timeline(m: &SiteModel) -> Markup {
    let (Some(first), Some(last)) = (m.versions.first(), m.versions.last()) else {
        return html! {};
    };
    let span = (last.from - first.from).max(1) as f64;
    let x = |t: i64| 20.0 + 680.0 * (t - first.from) as f64 / span;
    html! {
        // A group, not a picture: each version is a link.
        svg.timeline viewBox="0 0 720 44" role="group" aria-label="Versions over time" {
            line.axis x1="20" x2="700" y1="16" y2="16" {}
            @for v in &m.versions {
                a href={ "/site/" (enc(&m.host)) (query(&[("at", &v.from.to_string())])) }
                    aria-label={ "The version of " (day(v.from)) " (" (v.what()) ")" } {
                    circle class={ "version" @if v.from == m.shown { " current" } @if v.absent.is_some() { " absent" } } cx=(format!("{:.1}", x(v.from))) cy="16" r="6" {
                        title { (day(v.from)) " · " (v.what()) }
                    }
                }
            }
            text.axis x="20" y="40" { (day(first.from)) }
            @if m.versions.len() > 1 { text.axis x="700" y="40" text-anchor="end" { (day(last.from)) } }
        }
    }
}

fn diff(d: &VersionDiff) -> Markup {
    html! {
        @if d.added.is_empty() && d.removed.is_empty() && d.verdicts.is_empty() {
            p.muted { "No rule changed." }
        }
        @if !d.added.is_empty() || !d.removed.is_empty() {
            ul.diff {
                @for r in &d.removed { li.removed { "− " code { (Text(&r.agents)) " " (r.kind) ": " (Text(&r.value)) } } }
                @for r in &d.added { li.added { "+ " code { (Text(&r.agents)) " " (r.kind) ": " (Text(&r.value)) } } }
            }
        }
        @if !d.verdicts.is_empty() {
            div.wide tabindex="0" { table {
                thead { tr { th { "Robot" } th { "Path" } th { "Before" } th { "After" } } }
                tbody { @for v in d.verdicts.iter().take(200) {
                    tr { td { (Text(&v.robot)) } td { code { (Text(&v.path)) } } td { (verdict(v.before)) } td { (verdict(v.after)) } }
                } }
            } }
        }
        @if !d.bias.is_empty() {
            p { "Bias: "
                @for (k, b) in d.bias.iter().enumerate() {
                    @if k > 0 { ", " }
                    (Text(&b.robot)) " "
                    (b.before.map_or("—".to_owned(), |x| format!("{x:+}"))) " → "
                    (b.after.map_or("—".to_owned(), |x| format!("{x:+}")))
                }
            }
        }
    }
}

/// `/site/HOST/robots.txt`: the file as stored, as plain text in a
/// sandbox.
pub async fn raw(
    State(app): State<Arc<App>>,
    Path(host): Path<String>,
    Query(p): Query<SiteParams>,
) -> Response {
    match api::site_model(&app, &host, &p).await {
        Ok(m) => {
            let mut res = m.raw.into_response();
            let h = res.headers_mut();
            h.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/plain; charset=utf-8"),
            );
            h.insert(
                header::CONTENT_SECURITY_POLICY,
                HeaderValue::from_static("sandbox; default-src 'none'"),
            );
            res
        }
        Err(e) => e.page(&app),
    }
}

/// `/site/HOST/bias`: "Analyze it!".
pub async fn bias(
    State(app): State<Arc<App>>,
    Path(host): Path<String>,
    Query(p): Query<api::BiasParams>,
) -> Response {
    match api::bias_model(&app, Some(&host), &p).await {
        Ok(b) => {
            let title = format!("Bias of {host}");
            let body = html! {
                h1 { "Analyze it! " a href={ "/site/" (enc(&host)) } { (Text(&host)) } }
                (semantics_switch(&format!("/site/{}/bias", enc(&host)), b.semantics, &[("as_of", p.as_of.as_deref().unwrap_or_default())]))
                (bias_table(&b, p.rows.as_deref() == Some("all"), &format!("/site/{}/bias{}", enc(&host), query(&[
                    ("as_of", p.as_of.as_deref().unwrap_or_default()),
                    ("semantics", p.semantics.as_deref().unwrap_or_default()),
                    ("rows", "all"),
                ]))))
            };
            page(&app, &title, "", body)
        }
        Err(e) => e.page(&app),
    }
}

fn semantics_switch(base: &str, current: Semantics, keep: &[(&str, &str)]) -> Markup {
    html! {
        p.switch {
            "Semantics: "
            @for (v, l) in [("google", "Google (RFC 9309)"), ("draft1996", "1996 draft")] {
                @let pairs: Vec<(&str, &str)> = keep.iter().copied().chain([("semantics", v)]).collect();
                @if current.as_str() == v { b { (l) } } @else { a href={ (base) (query(&pairs)) } { (l) } }
                " "
            }
        }
    }
}

/// Rows a bias table shows before "show all".
const BIAS_ROWS: usize = 25;
/// Rows it shows at most with "show all" (the JSON API has them all).
const BIAS_ROWS_ALL: usize = 500;
/// Columns of robots the path matrix shows at most (robots that decide
/// every shown path alike share a column).
const BIAS_COLUMNS: usize = 24;

/// The bias table of a file: robots, then who may fetch each path; `all`
/// shows up to [`BIAS_ROWS_ALL`] rows instead of [`BIAS_ROWS`], and `more`
/// is the link that shows them.
pub fn bias_table(b: &FileBias, all: bool, more: &str) -> Markup {
    let rows = if all { BIAS_ROWS_ALL } else { BIAS_ROWS };
    // Robots that decide each shown path alike share a matrix column.
    let shown = &b.decisions[..b.decisions.len().min(rows)];
    let mut columns: Vec<(Vec<usize>, usize)> = Vec::new();
    let mut by_key: std::collections::HashMap<Vec<(bool, Option<u32>)>, usize> =
        std::collections::HashMap::new();
    for i in 0..b.robots.len() {
        let key: Vec<(bool, Option<u32>)> = shown
            .iter()
            .map(|d| (d.robots[i].allowed, d.robots[i].line))
            .collect();
        match by_key.get(&key) {
            Some(&c) => columns[c].0.push(i),
            None => {
                by_key.insert(key, columns.len());
                columns.push((vec![i], i));
            }
        }
    }
    let hidden_columns = columns.len().saturating_sub(BIAS_COLUMNS);
    columns.truncate(BIAS_COLUMNS);
    let label = |members: &[usize]| -> String {
        let name = |i: usize| b.robots[i].robot.as_str();
        match members {
            [one] => name(*one).to_owned(),
            [a, b2] => format!("{}, {}", name(*a), name(*b2)),
            [a, rest @ ..] => format!("{} and {} more", name(*a), rest.len()),
            [] => String::new(),
        }
    };
    html! {
        @if let Some(t) = &b.too_complex {
            p.warn { (t.message()) ". The file is stored and searchable; its bias is not claimed." }
        } @else {
            p {
                "DIR: " b { (b.dir.len()) } " distinct Allow and Disallow paths; the universal robot (" code { "*" } ") may fetch "
                b { (b.universal_allowed) } ". bias(r) = |D_r| − |D_u|."
            }
        }
        @if b.robots.is_empty() {
            @if b.computed() { p.muted { "The file names no robot: there is no bias to measure." } }
        } @else {
            div.wide tabindex="0" { table.bias id="bias" {
                thead { tr { th { "Robot" } th { "May fetch" } th { "Bias" } th { "Verdict" } } }
                tbody {
                    @for r in b.robots.iter().take(rows) {
                        tr {
                            td { a href={ "/crawler/" (enc(&r.robot)) } { (Text(&r.robot)) } }
                            td.n { (r.allowed) } td.n { (format!("{:+}", r.bias)) }
                            td { span class={ "tilt " (r.verdict.as_str()) } { (r.verdict.as_str()) } }
                        }
                    }
                }
            } }
            @if b.robots.len() > rows {
                p.muted { "The first " (rows) " robots of " (b.robots.len()) " are shown. "
                    @if !all { a href=(more) { "Show " (b.robots.len().min(BIAS_ROWS_ALL)) } } @else { "The JSON API has them all." } }
            }
        }
        @if b.computed() && !b.dir.is_empty() {
            h2 { "Who may fetch each path" }
            div.wide tabindex="0" { table.matrix {
                thead { tr {
                    th { "Path" } th { "*" }
                    @for (members, _) in &columns {
                        th title=(members.iter().map(|&i| b.robots[i].robot.as_str()).take(200).collect::<Vec<_>>().join(", ")) { (Text(&label(members))) }
                    }
                } }
                tbody {
                    @for d in shown {
                        tr {
                            td { code { (Text(&d.path)) } }
                            (cell(d.universal))
                            @for (_, first) in &columns { (cell(d.robots[*first])) }
                        }
                    }
                }
            } }
            @if b.dir.len() > shown.len() || hidden_columns > 0 {
                p.muted {
                    "The first " (shown.len()) " paths of " (b.dir.len()) " are shown"
                    @if hidden_columns > 0 { ", and " (BIAS_COLUMNS) " columns of " (BIAS_COLUMNS + hidden_columns) " (robots that decide every shown path alike share one)" }
                    ". "
                    @if !all && b.dir.len() > shown.len() { a href=(more) { "Show " (b.dir.len().min(BIAS_ROWS_ALL)) " paths" } " · " }
                    "The JSON API has them all."
                }
            }
        }
    }
}

fn cell(d: botscope_index::Decision) -> Markup {
    html! {
        td class=(if d.allowed { "yes" } else { "no" }) title=(d.line.map_or("no rule matched".to_owned(), |l| format!("line {l}"))) {
            (if d.allowed { "✓" } else { "✗" })
            @if let Some(l) = d.line { " " span.muted { (l) } }
        }
    }
}

/// `/robots`: Figure 5 and the trends chart.
pub async fn robots(State(app): State<Arc<App>>, Query(p): Query<FavorParams>) -> Response {
    // Both read stored columns (favourability's bias terms, the
    // versions' restriction classes): the chart is computed on request.
    // A method that is none of the three is the page's error, not the
    // exact chart under another name.
    if let Err(e) = api::trend_method(p.method.as_deref()) {
        let body = html! { h1 { "Robots" } (robots_form(&p)) pre.error { (Text(e.detail())) } };
        return page_with(&app, e.status(), "Robots", "/robots", body, None);
    }
    let (favor, trends) = tokio::join!(api::favor_model(&app, &p), api::trends_model(&app, &p));
    let favor = match favor {
        Ok(f) => f,
        Err(e) => {
            let body = html! { h1 { "Robots" } (robots_form(&p)) pre.error { (Text(e.detail())) } };
            let status = e.status();
            return page_with(&app, status, "Robots", "/robots", body, None);
        }
    };
    let sort = p.sort.as_deref().unwrap_or("appeared");
    // This page's parameters with `sort` and `rows` set (empty: left out).
    let link_with = |sort: &str, rows: &str| {
        format!(
            "/robots{}",
            query(&[
                ("where", p.where_.as_deref().unwrap_or_default()),
                ("as_of", p.as_of.as_deref().unwrap_or_default()),
                ("semantics", p.semantics.as_deref().unwrap_or_default()),
                ("min", p.min.as_deref().unwrap_or_default()),
                ("agent", p.agent.as_deref().unwrap_or_default()),
                ("category", p.category.as_deref().unwrap_or_default()),
                ("by", p.by.as_deref().unwrap_or_default()),
                ("method", p.method.as_deref().unwrap_or_default()),
                ("sort", sort),
                ("rows", rows),
            ])
        )
    };
    let link = |s: &str| link_with(s, "");
    let all = p.rows.as_deref() == Some("all");
    let shown = if all { 300 } else { 25 };
    let all_link = link_with(sort, "all");
    let body = html! {
        h1 { "Robots" }
        p.lead { "How the files treat each robot they name: " b { "favoured" } " (the robot may fetch more of the file's paths than the universal robot), "
            b { "disfavoured" } " (less), favourability = (favoured − disfavoured) / N over every file of the set (BotSeer's Figure 5)." }
        (robots_form(&p))
        p { "N = " b { (favor.n) } " files · " (favor.semantics) " semantics · as of " (favor.as_of)
            @if let Some(w) = &favor.where_ { " · where " code { (Text(w)) } } }
        h2 { "Restriction over time" }
        @match &trends {
            Ok(t) => {
                p { "Share of the sites with a robots.txt whose file keeps "
                    @if t.agents.len() == 1 { code { (Text(&t.agents[0])) } } @else { "the group (" (t.agents.len()) " agents, the strictest per site)" }
                    " out fully, partially or not at all, per " (t.by)
                    @match t.method {
                        "somesite" => { ", each file judged as Liu et al.'s script judges it (IMC 2025)" }
                        "cic" => { ", each file judged as Consent in Crisis's parser read it (Longpre et al., 2024)" }
                        _ => {}
                    }
                    "." }
                (crate::chart::trends(t))
                @if t.from_bodies > 0 {
                    p.muted { (t.from_bodies) " versions past the index's budget were read from their files." }
                }
            }
            Err(e) => { pre.error { (Text(e.detail())) } }
        }
        @if let Ok(t) = &trends { (crate::chart::terms_stated(t)) }
        h2 { "Favourability" }
        div.wide tabindex="0" { table.favor id="favor" {
            thead { tr {
                @for (key, label) in [("robot", "Robot"), ("appeared", "Appeared"), ("favored", "Favoured"), ("disfavored", "Disfavoured"), ("favorability", "Favourability")] {
                    th aria-sort=[(key == sort).then_some(if key == "robot" { "ascending" } else { "descending" })] {
                        a href=(link(key)) { (label) }
                    }
                }
            } }
            tbody {
                @for r in favor.robots.iter().take(shown) {
                    tr {
                        td { a href={ "/crawler/" (enc(&r.robot)) } { (Text(&r.robot)) } }
                        td.n { (r.appeared) } td.n { (r.favored) } td.n { (r.disfavored) }
                        td.n data-v=(r.favorability) { (format!("{:.3}", r.favorability)) }
                    }
                }
            }
        } }
        @if favor.robots.len() > shown {
            p.muted {
                "The first " (shown) " robots of " (favor.robots.len()) " are shown; "
                @if all { "raise the minimum or use the JSON API." } @else { a href=(all_link) { "show up to 300" } "." }
            }
        }
    };
    page(&app, "Robots", "/robots", body)
}

fn robots_form(p: &FavorParams) -> Markup {
    let categories: Vec<&str> = botscope_botid::Category::ALL
        .iter()
        .map(|(n, _)| *n)
        .collect();
    // The category the chart uses: the one asked for, else (no robot
    // named) AI training crawlers, as `api::trend_agents` takes them.
    let named = p.agent.as_deref().is_some_and(|a| !a.trim().is_empty());
    let shown = p
        .category
        .as_deref()
        .filter(|c| !c.is_empty())
        .or((!named).then_some("ai-training"));
    html! {
        form.inline method="get" action="/robots" {
            label { "Files matching " input type="search" name="where" value=(p.where_.as_deref().unwrap_or_default()) placeholder="site:gov"; }
            label { "as of " input type="text" name="as_of" value=(p.as_of.as_deref().unwrap_or_default()) placeholder="latest" size="10"; }
            label { "named in at least " input.count type="number" name="min" min="1" value=(p.min.as_deref().unwrap_or("1")); " files" }
            select name="semantics" aria-label="Semantics" {
                option value="google" selected[p.semantics.as_deref() != Some("draft1996")] { "Google" }
                option value="draft1996" selected[p.semantics.as_deref() == Some("draft1996")] { "1996 draft" }
            }
            label { "trend of robot " input type="text" name="agent" value=(p.agent.as_deref().unwrap_or_default()) placeholder="GPTBot" size="12"; }
            label { "or category " select name="category" {
                option value="" selected[shown.is_none()] { "—" }
                @for c in &categories { option value=(c) selected[shown == Some(*c)] { (c) } }
            } }
            label { "per " select name="by" {
                option value="" { "month or year" }
                @for (v, l) in [("month", "month"), ("year", "year"), ("crawl", "imported crawl")] {
                    option value=(v) selected[p.by.as_deref() == Some(v)] { (l) }
                }
            } }
            label { "judged " select name="method" {
                @for (v, l) in [("exact", "exactly (RFC 9309)"), ("somesite", "as Liu et al. (IMC 2025)"), ("cic", "as Consent in Crisis")] {
                    option value=(v) selected[p.method.as_deref().unwrap_or("exact") == v] { (l) }
                }
            } }
            input type="hidden" name="sort" value=(p.sort.as_deref().unwrap_or_default());
            button type="submit" { "Show" }
        }
    }
}

/// `/crawlers`: the registry as a directory (name, operator, category,
/// how it is verified, its list's age), a category menu above it.
pub async fn crawlers(
    State(app): State<Arc<App>>,
    Query(p): Query<api::DirectoryParams>,
) -> Response {
    let category = p.category.as_deref().filter(|c| !c.is_empty());
    let list = match api::crawler_directory(&app, category) {
        Ok(l) => l,
        Err(e) => return e.page(&app),
    };
    let mut categories: Vec<&'static str> = app
        .registry
        .bots()
        .iter()
        .filter_map(|b| b.category.map(|c| c.as_str()))
        .collect();
    categories.sort_unstable();
    categories.dedup();
    let body = html! {
        h1 { "Crawlers" }
        p {
            (botscope_text::count(list.len() as u64, "crawler", "crawlers"))
            @if let Some(c) = category { " in the category " b { (Text(c)) } } @else { " in the registry" }
            ": who runs each, what it is for, and how a claim to be it is checked. "
            "The same as JSON: " a href={ "/api/crawlers" (query(&[("category", category.unwrap_or(""))])) } { "/api/crawlers" } "."
        }
        form.inline method="get" action="/crawlers" {
            label { "Category "
                select name="category" {
                    option value="" selected[category.is_none()] { "all" }
                    @for c in &categories { option value=(c) selected[category == Some(*c)] { (c) } }
                }
            }
            button type="submit" { "Show" }
        }
        div.wide tabindex="0" { table.crawlers.stack {
            thead { tr { th { "Crawler" } th { "Operator" } th { "Category" } th { "Verified by" } th { "List as of" } } }
            tbody {
                @for c in &list {
                    tr {
                        td data-label="Crawler" { a href=(c.page) { (Text(&c.name)) } }
                        td data-label="Operator" { (Text(c.operator.as_deref().unwrap_or("—"))) }
                        td data-label="Category" { (c.category.unwrap_or("—")) }
                        td data-label="Verified by" {
                            @if c.verified_by.is_empty() { span.muted { "nothing: it can be claimed, never verified" } }
                            @else {
                                (c.verified_by.join(match c.combine { Some("all-of") => " and ", _ => ", " }))
                                @if c.combine == Some("any-of") { span.muted { " (either)" } }
                            }
                        }
                        td.when data-label="List as of" { (Text(c.list_as_of.as_deref().unwrap_or("—"))) }
                    }
                }
            }
        } }
    };
    page(&app, "Crawlers", "/crawlers", body)
}

/// `/crawler/NAME`: BotSeer's crawler search.
pub async fn crawler(State(app): State<Arc<App>>, Path(name): Path<String>) -> Response {
    match api::crawler_model(&app, &name).await {
        Ok(m) => {
            let foot = (!m.credits.is_empty()).then(|| {
                html! { @for (i, c) in m.credits.iter().enumerate() { @if i > 0 { " · " } (credit(c)) } }
            });
            let feed = crate::feeds::crawler_feed(&m.name);
            page_feed(
                &app,
                StatusCode::OK,
                &m.name.clone(),
                "",
                crawler_body(&app, &m),
                foot,
                Some(feed),
            )
        }
        Err(e) => e.page(&app),
    }
}

/// A place database's credit, its address a link: `NAME (URL), REST`
/// shows NAME linked to URL, then REST.
fn credit(c: &str) -> Markup {
    let link = c.split_once(" (").and_then(|(name, rest)| {
        let (url, rest) = rest.split_once(')')?;
        url.starts_with("https://").then_some((name, url, rest))
    });
    match link {
        Some((name, url, rest)) => html! { a href=(url) { (Text(name)) } (Text(rest)) },
        None => html! { (Text(c)) },
    }
}

fn crawler_body(app: &App, m: &CrawlerModel) -> Markup {
    let mut marks = Vec::new();
    for l in &m.logs {
        for a in &l.addresses {
            if let (Some(lat), Some(lon)) = (a.latitude, a.longitude) {
                let class = match (a.seen.verdict, a.seen.disobeyed()) {
                    ("verified", _) => "verified",
                    ("spoofed", true) => "spoofed-disobeying",
                    ("spoofed", false) => "spoofed",
                    _ => "other",
                };
                marks.push(crate::map::Mark {
                    lon,
                    lat,
                    class,
                    title: format!(
                        "{} · {} · {}{}",
                        a.seen.ip,
                        a.seen.verdict,
                        botscope_text::count(a.seen.requests, "request", "requests"),
                        a.city
                            .as_deref()
                            .map(|c| format!(" · {c}"))
                            .unwrap_or_default()
                    ),
                });
            }
        }
    }
    let addresses: usize = m.logs.iter().map(|l| l.addresses.len()).sum();
    html! {
        h1 { (Text(&m.name)) }
        p { a href={ "/crawler/" (enc(&m.name)) "/feed.atom" } type="application/atom+xml" { "Sites that started blocking it (Atom feed)" } }
        @match &m.registry {
            Some(b) => {
                dl.entry {
                    dt { "Operator" } dd { (Text(b.operator.as_deref().unwrap_or("—"))) }
                    dt { "Category" } dd { (b.category.map_or("—", |c| c.as_str())) }
                    dt { "User-Agent tokens" } dd { @for (k, t) in b.ua_tokens.iter().enumerate() { @if k > 0 { ", " } code { (Text(t)) } } }
                    dt { "Obeys robots.txt" } dd { (match b.respects_robots_txt { Some(true) => "yes, its operator says", Some(false) => "no, its operator says", None => "not stated" }) }
                    dt { "Verification" } dd {
                        @if b.has_ip_verifier() { "published addresses (" (b.ranges().count()) " ranges" @if let Some(d) = &b.ip_as_of { ", as of " (Text(d)) } ")" }
                        @if b.has_ip_verifier() && b.fcrdns_hosts.is_some() { " " (b.verify.as_str()) " " }
                        @if let Some(h) = &b.fcrdns_hosts { "reverse DNS in " @for (k, d) in h.iter().enumerate() { @if k > 0 { ", " } code { (Text(d)) } } }
                        @if !b.has_ip_verifier() && b.fcrdns_hosts.is_none() { "none: it can be claimed, never verified" }
                    }
                    @if let Some(u) = &b.url { dt { "Documentation" } dd { (Text(u)) } }
                }
            }
            None => { p.muted { "Not in the registry: botscope cannot verify it." } }
        }
        h2 { "Favourability" }
        @match &m.favor {
            Some(f) => {
                p { "Named in " b { (f.appeared) } " of " (m.n) " files: favoured by " b { (f.favored) } ", disfavoured by " b { (f.disfavored) }
                    "; favourability " b { (format!("{:.3}", f.favorability)) } ". " a href="/robots" { "All robots" } }
            }
            None => { p.muted { "No file of the index names it." } }
        }
        div.cols {
            div { h3 { "Sites that favour it" } (site_list(&m.favoring)) }
            div { h3 { "Sites that disfavour it" } (site_list(&m.disfavoring)) }
        }
        h2 { "In the access logs" }
        @if m.logs.is_empty() {
            p.muted { "No analysed log shows it. " a href="/logs" { "Upload a log" } "." }
        } @else {
            @if marks.is_empty() {
                p.empty {
                    @if addresses == 1 { "Its address could not be placed on a map: " } @else { "None of its " (addresses) " addresses could be placed on a map: " }
                    @if app.owners.is_empty() { "no IP-owner data is installed. " } @else { "the installed IP-owner data does not cover them. " }
                    "Run " code { "botscope data update" } " to install the current tables (AS, country, city), then restart the server."
                }
            } @else {
                (crate::map::map(&marks))
                p.legend {
                    span { i.verified {} "verified" } span { i.spoofed-disobeying {} "spoofed, disobeying robots.txt" }
                    span { i.spoofed {} "spoofed" } span { i.other {} "unverifiable" }
                    span { (marks.len()) " of " (botscope_text::count(addresses as u64, "address", "addresses")) " located" }
                }
                @if marks.len() < addresses {
                    p.muted { "The others are not in the installed IP-owner data: " code { "botscope data update" } " installs the current tables." }
                }
            }
            @for l in &m.logs {
                h3 { a href={ "/logs/" (l.id) } { (Text(&l.log)) } " " span.muted { "as " (Text(&l.robot)) } }
                details {
                    summary { (l.user_agents_total) " User-Agent strings" @if l.user_agents_total > l.user_agents.len() { " (the " (l.user_agents.len()) " most active shown)" } }
                    ul { @for (ua, n) in &l.user_agents { li { code { (Text(ua)) } " " span.muted { (n) } } } }
                }
                div.wide tabindex="0" { table.addresses.stack {
                    thead { tr { th { "Address" } th { "Verdict" } th { "Network" } th { "Country" } th { "Requests" } th { "robots.txt" } th { "Disallowed" } th { "Why" } } }
                    tbody {
                        @for a in l.addresses.iter().take(200) {
                            tr {
                                td data-label="Address" { code { (a.seen.ip) } }
                                td data-label="Verdict" { span class={ "v " (a.seen.verdict) } { (a.seen.verdict) } }
                                td data-label="Network" { (Text(&match (a.asn, &a.as_org) { (Some(n), Some(o)) => format!("AS{n} {o}"), (Some(n), None) => format!("AS{n}"), _ => "—".into() })) }
                                td data-label="Country" { (Text(a.country.as_deref().unwrap_or("—"))) }
                                td.n data-label="Requests" { (a.seen.requests) }
                                td.n data-label="robots.txt" { (a.seen.robots_txt) }
                                @if a.seen.judged == 0 {
                                    // No robots.txt was given with the log:
                                    // nothing was judged, not nothing broken.
                                    td.n.muted data-label="Disallowed" title="no robots.txt was given with the log" { "not checked" }
                                } @else {
                                    td.n data-label="Disallowed" class=[(a.seen.disallowed > 0).then_some("bad")] { (a.seen.disallowed) " of " (a.seen.judged) }
                                }
                                td data-label="Why" { (Text(&a.seen.reason)) }
                            }
                        }
                    }
                } }
                @if l.addresses_total > l.addresses.len().min(200) {
                    p.muted { "The " (l.addresses.len().min(200)) " most active of " (l.addresses_total) " addresses." }
                }
            }
        }
    }
}

fn site_list(hits: &[botscope_index::Hit]) -> Markup {
    html! {
        @if hits.is_empty() { p.muted { "None." } } @else {
            ul { @for h in hits {
                li { a href={ "/site/" (enc(&h.site)) "/bias" } { (Text(&h.site)) } " " span.muted title="the robot's bias in this file" { "bias " (format!("{:+}", h.score)) } }
            } }
        }
    }
}

/// `GET /submit`.
pub async fn submit_form(State(app): State<Arc<App>>) -> Response {
    page(
        &app,
        "Submit a robots.txt",
        "/submit",
        submit_markup(None, "", ""),
    )
}

fn submit_markup(error: Option<&str>, site: &str, text: &str) -> Markup {
    html! {
        h1 { "Submit a robots.txt" }
        p { "A file you give is stored as a " code { "submitted" } " version of the site and its bias shown (BotSeer's submission). It is kept apart from what the site serves: search and bias keep using the versions fetched from the site, and use yours only for a site never fetched." }
        @if let Some(e) = error { pre.error { (Text(e)) } }
        form.stack method="post" action="/submit" enctype="multipart/form-data" {
            label { "Site " input type="text" name="site" value=(site) placeholder="www.example.com" required; }
            label { "robots.txt " textarea name="robots_txt" rows="14" placeholder="User-agent: *\nDisallow: /private/" { (text) } }
            label { "or a file " input type="file" name="file"; }
            button type="submit" { "Submit" }
        }
    }
}

/// `POST /submit`.
pub async fn submit(State(app): State<Arc<App>>, mut form: Multipart) -> Response {
    let mut site = String::new();
    let mut text = Vec::new();
    let mut file = Vec::new();
    loop {
        match form.next_field().await {
            Ok(Some(f)) => {
                let name = f.name().unwrap_or_default().to_owned();
                match f.bytes().await {
                    Ok(b) => match name.as_str() {
                        "site" => site = String::from_utf8_lossy(&b).into_owned(),
                        "robots_txt" => text = b.to_vec(),
                        "file" => file = b.to_vec(),
                        _ => {}
                    },
                    Err(e) => return Fail::TooLarge(e.body_text()).page(&app),
                }
            }
            Ok(None) => break,
            Err(e) => return Fail::BadRequest(e.body_text()).page(&app),
        }
    }
    let body = if file.is_empty() { text } else { file };
    // A textarea sends CRLF line ends: the file is kept as the user wrote it.
    match api::submit_model(&app, &site, body.clone(), Semantics::Google).await {
        Ok(b) => {
            let host = b.site.clone().unwrap_or_default();
            let page_body = html! {
                h1 { "Stored: " a href={ "/site/" (enc(&host)) } { (Text(&host)) } }
                p.ok { "The file is stored as a submitted version of " (Text(&host)) ", kept apart from the versions fetched from the site. Its bias:" }
                (bias_table(&b, false, &format!("/site/{}/bias?rows=all", enc(&host))))
            };
            page(&app, "Submitted", "/submit", page_body)
        }
        Err(e) => {
            let status = e.status();
            page_with(
                &app,
                status,
                "Submit a robots.txt",
                "/submit",
                submit_markup(Some(e.detail()), &site, &String::from_utf8_lossy(&body)),
                None,
            )
        }
    }
}

/// `GET /check`.
pub async fn check_form(State(app): State<Arc<App>>) -> Response {
    let input = CheckInput {
        agent: "Googlebot".into(),
        urls: vec!["/".into()],
        ..CheckInput::default()
    };
    page(
        &app,
        "Check a robots.txt",
        "/check",
        check_markup(&input, None),
    )
}

/// The check form's fields.
#[derive(Debug, Default, Deserialize)]
pub struct CheckForm {
    robots_txt: Option<String>,
    url: Option<String>,
    agent: Option<String>,
    urls: Option<String>,
}

/// `POST /check`.
pub async fn check(State(app): State<Arc<App>>, Form(f): Form<CheckForm>) -> Response {
    let input = CheckInput {
        robots_txt: f.robots_txt.filter(|s| !s.trim().is_empty()),
        url: f.url.filter(|s| !s.trim().is_empty()),
        agent: f.agent.unwrap_or_default(),
        urls: f
            .urls
            .unwrap_or_default()
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_owned)
            .collect(),
    };
    let r = api::check_model(&app, &input).await;
    let status = match &r {
        Ok(_) => StatusCode::OK,
        Err(Fail::BadRequest(_)) => StatusCode::BAD_REQUEST,
        Err(Fail::TooLarge(_)) => StatusCode::PAYLOAD_TOO_LARGE,
        Err(_) => StatusCode::BAD_GATEWAY,
    };
    page_with(
        &app,
        status,
        "Check a robots.txt",
        "/check",
        check_markup(&input, Some(r)),
        None,
    )
}

fn check_markup(input: &CheckInput, result: Option<Result<CheckModel, Fail>>) -> Markup {
    html! {
        h1 { "Check a robots.txt" }
        p { "Paste a robots.txt, or give a site's URL (fetched as botscope's harvester fetches it: https then http, redirects, 500 KiB cap, no private addresses), "
            "an agent and URLs: each URL's verdict under Google's rules (RFC 9309) and the 1996 draft, with the deciding line, and the file's lint." }
        form.stack method="post" action="/check" {
            label { "robots.txt " textarea name="robots_txt" rows="12" { (input.robots_txt.as_deref().unwrap_or_default()) } }
            label { "or fetch from " input type="url" name="url" value=(input.url.as_deref().unwrap_or_default()) placeholder="https://www.example.com/"; }
            label { "Agent " input type="text" name="agent" value=(input.agent) required; }
            label { "URLs or paths, one per line " textarea name="urls" rows="4" required { (input.urls.join("\n")) } }
            button type="submit" { "Check" }
        }
        @match result {
            None => {}
            Some(Err(e)) => { pre.error { (Text(e.detail())) } }
            Some(Ok(m)) => {
                @if let Some(f) = &m.fetched { p.muted { "Fetched: " (Text(f)) } }
                div.wide tabindex="0" { table.verdicts id="verdicts" {
                    thead { tr { th { "URL" } th { "Google" } th { "Deciding line" } th { "1996 draft" } th { "Deciding line" } } }
                    tbody {
                        @for r in &m.results {
                            tr {
                                td { code { (Text(&r.url)) } }
                                td { (verdict(r.google.allowed)) } td { (Text(&r.google.describe)) }
                                td { (verdict(r.draft1996.allowed)) } td { (Text(&r.draft1996.describe)) }
                            }
                        }
                    }
                } }
                @let lines = body_lines(m.robots_txt.as_bytes());
                @let hits: Vec<u32> = m.results.iter().filter_map(|r| r.google.line).collect();
                @let notes = by_line(&m.diagnostics);
                h2 { "The file " span.muted { "(" (m.diagnostics.len()) " lint diagnostics)" } }
                @for d in m.diagnostics.iter().filter(|d| d.line == 0) {
                    div class={ "diag " (severity(d.severity)) } { b { (d.code.as_str()) } " " (Text(&d.message)) }
                }
                (listing(&lines, &|no| {
                    let class = hits.contains(&no).then_some("hit");
                    let html = html! {
                        @for d in notes.get(&no).into_iter().flatten() {
                            div class={ "diag " (severity(d.severity)) } { b { (d.code.as_str()) } " " (Text(&d.message)) }
                        }
                    };
                    (class, html)
                }))
            }
        }
    }
}

/// `/api`: the API, from its OpenAPI description.
pub async fn api_doc(State(app): State<Arc<App>>) -> Response {
    let spec: serde_json::Value = serde_json::from_str(api::OPENAPI).unwrap_or_default();
    let paths = spec["paths"].as_object().cloned().unwrap_or_default();
    let body = html! {
        h1 { "JSON API" }
        p { "Every page has a JSON twin with the same parameters. The OpenAPI 3.1 description is at "
            a href="/api/openapi.json" { code { "/api/openapi.json" } } ". Requests are limited to "
            (app.limits.api_per_second) " a second per address (429 with Retry-After beyond)." }
        @for (path, ops) in &paths {
            @for (method, op) in ops.as_object().into_iter().flatten() {
                section.endpoint {
                    h2 { code { (method.to_uppercase()) " " (path) } }
                    p { (op["summary"].as_str().unwrap_or_default()) }
                    @if let Some(params) = op["parameters"].as_array() {
                        table {
                            thead { tr { th { "Parameter" } th { "In" } th { "Description" } } }
                            tbody { @for p in params {
                                tr { td { code { (p["name"].as_str().unwrap_or_default()) } } td { (p["in"].as_str().unwrap_or_default()) } td { (p["description"].as_str().unwrap_or_default()) } }
                            } }
                        }
                    }
                    @if let Some(d) = op["requestBody"]["description"].as_str() { p { "Body: " (d) } }
                }
            }
        }
    };
    page(&app, "JSON API", "/api", body)
}

/// `/healthz`.
pub async fn healthz(State(app): State<Arc<App>>) -> Response {
    axum::Json(serde_json::json!({
        "status": "ok",
        "documents": app.index.documents(),
        "logs": app.logs().len(),
    }))
    .into_response()
}

/// The stylesheet.
pub async fn style() -> Response {
    crate::layout::static_response(STYLE, "text/css; charset=utf-8")
}

/// The icon.
pub async fn favicon() -> Response {
    crate::layout::static_response(FAVICON, "image/svg+xml")
}

/// Anything else.
pub async fn not_found(State(app): State<Arc<App>>) -> Response {
    Fail::NotFound("There is no page at this address.".into()).page(&app)
}
