//! Atom 1.0 feeds of robots.txt changes (`Index::changes`, as `botscope
//! watch --format atom` makes them): per site (every change of its file),
//! per crawler (the sites that started blocking it) and per search query
//! (the changes of the files it matches). Newest first, at most
//! [`FEED_ENTRIES`] entries; the crawler and query feeds look back
//! [`WINDOW_DAYS`] days from the index's newest version, so that a feed
//! costs one pass over the index's columns, not over its history.

use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use botscope_robotstxt::Semantics;
use serde::Deserialize;

use crate::fail::Fail;
use crate::layout::{enc, query};
use crate::state::App;

/// Entries a feed holds at most.
pub const FEED_ENTRIES: usize = 100;

/// How far back the crawler and query feeds look, in days.
pub const WINDOW_DAYS: i64 = 366;

/// The site feed's title and address (also announced by the site's page).
pub fn site_feed(host: &str) -> (String, String) {
    (
        format!("robots.txt changes of {host}"),
        format!("/site/{}/feed.atom", enc(host)),
    )
}

/// The crawler feed's title and address.
pub fn crawler_feed(name: &str) -> (String, String) {
    (
        format!("sites that started blocking {name}"),
        format!("/crawler/{}/feed.atom", enc(name)),
    )
}

/// The search feed's title and address.
pub fn search_feed(q: &str) -> (String, String) {
    (
        format!("robots.txt changes matching {q}"),
        format!("/search/feed.atom{}", query(&[("q", q)])),
    )
}

/// One feed's question.
struct Job {
    key: String,
    title: String,
    agents: Vec<String>,
    site: Option<String>,
    where_: Option<String>,
    only: Option<botscope_index::Kind>,
    windowed: bool,
}

async fn answer(app: &Arc<App>, j: Job, this: String) -> Response {
    let a = app.clone();
    let (agents, site, where_, only, windowed) = (
        j.agents.clone(),
        j.site.clone(),
        j.where_.clone(),
        j.only,
        j.windowed,
    );
    let changes = app
        .changes(j.key.clone(), move || {
            let since = match (windowed, a.index.span()) {
                (true, Some((_, last))) => last - WINDOW_DAYS * 86_400,
                _ => -1,
            };
            a.index
                .changes(&botscope_index::ChangeRequest {
                    since,
                    agents: &agents,
                    semantics: Semantics::Google,
                    site: site.as_deref(),
                    where_: where_.as_deref(),
                    only,
                    limit: FEED_ENTRIES,
                })
                .map_err(|e| Fail::index(e, where_.as_deref().unwrap_or_default()))
        })
        .await;
    match changes {
        Ok(c) => {
            let feed = botscope_index::Feed {
                title: &j.title,
                id: &botscope_index::feed_id(&j.key),
                this: Some(&this),
                site_link: Some("/site/"),
                now: botscope_os::unix_now(),
            };
            let mut res = c.to_atom(&feed).into_response();
            res.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/atom+xml; charset=utf-8"),
            );
            res
        }
        Err(e) => e.page(app),
    }
}

/// Every registry robot's token and `*`: what a site feed compares.
fn every_agent(app: &App) -> Vec<String> {
    let mut out = vec!["*".to_owned()];
    for a in app.registry.all_agents() {
        if !out.iter().any(|x| x.eq_ignore_ascii_case(&a)) {
            out.push(a);
        }
    }
    out
}

/// `/site/HOST/feed.atom`: every change of the site's robots.txt.
pub async fn site(State(app): State<Arc<App>>, Path(host): Path<String>) -> Response {
    let host = host.trim().to_ascii_lowercase();
    if host.is_empty() || host.len() > 253 {
        return Fail::NotFound("no site of that name".into()).page(&app);
    }
    let (title, this) = site_feed(&host);
    let j = Job {
        key: format!("site\n{host}"),
        title,
        agents: every_agent(&app),
        site: Some(host),
        where_: None,
        only: None,
        windowed: false,
    };
    answer(&app, j, this).await
}

/// `/crawler/NAME/feed.atom`: the sites that started blocking it.
pub async fn crawler(State(app): State<Arc<App>>, Path(name): Path<String>) -> Response {
    let name = name.trim().to_owned();
    if name.is_empty() || name.len() > 200 {
        return Fail::NotFound("no crawler of that name".into()).page(&app);
    }
    // The crawler's robots.txt tokens, as its page reads files for it.
    let mut agents = vec![name.clone()];
    if let Some(b) = app.registry.find(&name) {
        for t in std::iter::once(&b.name).chain(&b.ua_tokens) {
            if !agents.iter().any(|x| x.eq_ignore_ascii_case(t)) {
                agents.push(t.clone());
            }
        }
    }
    let (title, this) = crawler_feed(&name);
    let j = Job {
        key: format!("crawler\n{}", agents.join(",")),
        title,
        agents,
        site: None,
        where_: None,
        only: Some(botscope_index::Kind::Blocked),
        windowed: true,
    };
    answer(&app, j, this).await
}

/// The query of a search feed.
#[derive(Debug, Default, Deserialize)]
pub struct FeedParams {
    /// The research index's query.
    pub q: Option<String>,
}

/// `/search/feed.atom?q=QUERY`: the changes of the files a query matches.
pub async fn search(State(app): State<Arc<App>>, Query(p): Query<FeedParams>) -> Response {
    let q = p.q.unwrap_or_default().trim().to_owned();
    if q.is_empty() {
        return Fail::BadRequest("a search feed needs a query: /search/feed.atom?q=QUERY".into())
            .page(&app);
    }
    if q.len() > 1024 {
        return Fail::TooLarge("a query is at most 1,024 bytes".into()).page(&app);
    }
    let (title, this) = search_feed(&q);
    let j = Job {
        key: format!("search\n{q}"),
        title,
        agents: every_agent(&app),
        site: None,
        where_: Some(q),
        only: None,
        windowed: true,
    };
    answer(&app, j, this).await
}
