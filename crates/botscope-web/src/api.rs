//! The JSON API, and the models every page is rendered from: a page and
//! its `/api` twin take the same parameters and get the same value.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use botscope_index::{
    FavorSort, FavorTable, FileBias, Hit, Rank, RobotFavor, SearchRequest, SearchResults, Trends,
    VersionDiff,
};
use botscope_robotstxt::{Diagnostic, Matcher, ParseOptions, Robots, Semantics};
use botscope_store::Store;
use serde::{Deserialize, Serialize};

use crate::App;
use crate::fail::Fail;
use crate::logs::{Located, locate, seen_in};

/// The API's description (OpenAPI 3.1).
pub const OPENAPI: &str = include_str!("openapi.json");

/// A model as JSON, or the failure.
fn answer<T: Serialize>(r: Result<T, Fail>) -> Response {
    match r {
        Ok(v) => Json(v).into_response(),
        Err(e) => e.json(),
    }
}

fn semantics(s: Option<&str>) -> Result<Semantics, Fail> {
    match s.unwrap_or("google") {
        "" | "google" => Ok(Semantics::Google),
        "draft1996" => Ok(Semantics::Draft1996),
        other => Err(Fail::BadRequest(format!(
            "semantics `{}`: give google or draft1996",
            botscope_text::field(other)
        ))),
    }
}

fn time(s: Option<&str>) -> Result<Option<i64>, Fail> {
    match s.map(str::trim).filter(|s| !s.is_empty() && *s != "latest") {
        None => Ok(None),
        Some(s) => {
            if let Ok(n) = s.parse::<i64>() {
                return Ok(Some(n));
            }
            botscope_store::parse_time_arg(s)
                .map(Some)
                .map_err(|e| Fail::BadRequest(e.to_string()))
        }
    }
}

fn number(s: Option<&str>, what: &str, default: usize, max: usize) -> Result<usize, Fail> {
    match s.map(str::trim).filter(|s| !s.is_empty()) {
        None => Ok(default),
        Some(s) => s
            .parse::<usize>()
            .ok()
            .filter(|n| *n <= max)
            .ok_or_else(|| {
                Fail::BadRequest(format!(
                    "{what} `{}`: give a whole number up to {max}",
                    botscope_text::field(s)
                ))
            }),
    }
}

/// The parameters of `/search` and `/api/search`.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct SearchParams {
    /// The query.
    pub q: Option<String>,
    /// `relevance`, `bias` or `site`.
    pub rank: Option<String>,
    /// The page (1-based, 20 hits each) of `/search`.
    pub page: Option<String>,
    /// Hits (`/api/search`).
    pub limit: Option<String>,
    /// Hits skipped (`/api/search`).
    pub offset: Option<String>,
    /// `google` or `draft1996`.
    pub semantics: Option<String>,
    /// The time whose versions are searched.
    pub as_of: Option<String>,
}

impl SearchParams {
    /// The page asked (1 when none or nonsense).
    pub fn page_number(&self) -> usize {
        self.page
            .as_deref()
            .and_then(|p| p.trim().parse::<usize>().ok())
            .filter(|p| (1..=500).contains(p))
            .unwrap_or(1)
    }
}

/// Runs a search.
pub async fn search_model(
    app: &Arc<App>,
    p: &SearchParams,
    limit: usize,
    offset: usize,
) -> Result<SearchResults, Fail> {
    let query = p.q.clone().unwrap_or_default();
    if query.len() > 2000 {
        return Err(Fail::BadRequest("the query is over 2,000 bytes".into()));
    }
    let rank = match p.rank.as_deref().unwrap_or("relevance") {
        "" | "relevance" => Rank::Relevance,
        "bias" => Rank::Bias,
        "site" => Rank::Site,
        other => {
            return Err(Fail::BadRequest(format!(
                "rank `{}`: give relevance, bias or site",
                botscope_text::field(other)
            )));
        }
    };
    let req = SearchRequest {
        query: query.clone(),
        rank,
        limit,
        offset,
        semantics: semantics(p.semantics.as_deref())?,
        as_of: time(p.as_of.as_deref())?,
    };
    let a = app.clone();
    app.work(move || a.index.search(&req))
        .await?
        .map_err(|e| Fail::index(e, &query))
}

/// `GET /api/search`: the JSON of `botscope search --format json`.
pub async fn search(State(app): State<Arc<App>>, Query(p): Query<SearchParams>) -> Response {
    let limit = match number(p.limit.as_deref(), "limit", 10, 1000) {
        Ok(n) => n,
        Err(e) => return e.json(),
    };
    let offset = match number(p.offset.as_deref(), "offset", 0, 100_000) {
        Ok(n) => n,
        Err(e) => return e.json(),
    };
    answer(search_model(&app, &p, limit, offset).await)
}

/// The parameters of a site's page.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct SiteParams {
    /// The version shown: the one in force at this time (default: the
    /// latest).
    pub at: Option<String>,
    /// Diff from the version in force at this time.
    pub from: Option<String>,
    /// … to the one in force at this time.
    pub to: Option<String>,
    /// The checker's agent.
    pub agent: Option<String>,
    /// The checker's URL or path.
    pub url: Option<String>,
}

/// One version in a site's timeline.
#[derive(Debug, Clone, Serialize)]
pub struct VersionInfo {
    /// First fetched (Unix seconds).
    pub from: i64,
    /// First fetched (RFC 3339).
    pub first_seen: String,
    /// Last seen (RFC 3339).
    pub last_seen: String,
    /// `harvest`, `import`, `submitted` …
    pub source: &'static str,
    /// Bytes.
    pub bytes: usize,
    /// The URL it came from.
    pub url: String,
    /// The site had no robots.txt from then: `removed`, `unreachable` or
    /// `moved` (the version is that absence, with no body).
    pub absent: Option<&'static str>,
}

impl VersionInfo {
    /// `harvest, 120 bytes` or `harvest, no robots.txt: removed`.
    pub fn what(&self) -> String {
        match self.absent {
            Some(a) => format!("{}, no robots.txt: {a}", self.source),
            None => format!("{}, {} bytes", self.source, self.bytes),
        }
    }
}

/// A checker's verdict under one semantics.
#[derive(Debug, Clone, Serialize)]
pub struct CheckRow {
    /// `google` or `draft1996`.
    pub semantics: &'static str,
    /// May be fetched.
    pub allowed: bool,
    /// The deciding line.
    pub line: Option<u32>,
    /// The verdict in words, with the deciding line.
    pub describe: String,
}

/// One line of a robots.txt that states AI usage preferences.
#[derive(Debug, Clone, Serialize)]
pub struct StatedLine {
    /// 1-based line.
    pub line: u32,
    /// `Content-Usage`, `Content-Signal` or `License`.
    pub kind: &'static str,
    /// The user agents of its group (`*`), or `every crawler` before any group.
    pub agents: String,
    /// The path (Content-Usage), `/` for Content-Signal.
    pub path: String,
    /// What it states, as `key=value` pairs.
    pub statement: String,
}

/// The statements of AI usage preferences in `robots`, in line order.
fn stated_lines(robots: &Robots) -> Vec<StatedLine> {
    let mut out = Vec::new();
    let names = |g: &botscope_robotstxt::Group| {
        g.user_agents
            .iter()
            .map(|u| u.value.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let signal = |v: &[botscope_robotstxt::Signal]| {
        v.iter()
            .map(|s| format!("{}={}", s.name, s.value))
            .collect::<Vec<_>>()
            .join(", ")
    };
    for l in &robots.licenses {
        out.push(StatedLine {
            line: l.line,
            kind: "License",
            agents: "every crawler".into(),
            path: "/".into(),
            statement: l.url.clone(),
        });
    }
    for l in &robots.content_signals {
        out.push(StatedLine {
            line: l.line,
            kind: "Content-Signal",
            agents: "every crawler".into(),
            path: "/".into(),
            statement: signal(&l.value),
        });
    }
    for g in &robots.groups {
        for l in &g.content_usage {
            out.push(StatedLine {
                line: l.line,
                kind: "Content-Usage",
                agents: names(g),
                path: l.value.path.clone(),
                statement: botscope_robotstxt::show_usage(&l.value.usage),
            });
        }
        for l in &g.content_signals {
            out.push(StatedLine {
                line: l.line,
                kind: "Content-Signal",
                agents: names(g),
                path: "/".into(),
                statement: signal(&l.value),
            });
        }
    }
    out.sort_by_key(|l| l.line);
    out
}

/// A site's page.
#[derive(Debug, Clone, Serialize)]
pub struct SiteModel {
    /// The host.
    pub host: String,
    /// Its rank in the host list.
    pub rank: Option<u64>,
    /// Every version, oldest first.
    pub versions: Vec<VersionInfo>,
    /// The version shown is an absence (`removed`, `unreachable`, `moved`).
    pub absent: Option<&'static str>,
    /// The version shown (first fetched, Unix seconds).
    pub shown: i64,
    /// Its source.
    pub source: &'static str,
    /// Its size.
    pub bytes: usize,
    /// Its text (invalid UTF-8 as U+FFFD).
    pub body: String,
    /// Its bytes (`/site/HOST/robots.txt`).
    #[serde(skip)]
    pub raw: Vec<u8>,
    /// Lint diagnostics.
    pub diagnostics: Vec<Diagnostic>,
    /// The checker's verdicts (both semantics), when asked.
    pub check: Vec<CheckRow>,
    /// The AI usage preferences for the checker's agent and URL (Content-
    /// Usage, Content-Signal), when asked: `usage` is null where the agent
    /// may not crawl (RFC 9309 groups, Google's verdict).
    pub check_preferences: Option<botscope_robotstxt::Preferences>,
    /// Every statement of AI usage preferences the version makes.
    pub stated: Vec<StatedLine>,
    /// The diff between `from` and `to`, when asked.
    pub diff: Option<VersionDiff>,
    /// The older version of the diff.
    pub diff_from: Option<i64>,
    /// The newer.
    pub diff_to: Option<i64>,
}

/// A host from a request: lower-cased; anything but a host name's
/// characters is not one.
fn host_param(host: &str) -> Result<String, Fail> {
    let h = host.trim().trim_end_matches('.').to_ascii_lowercase();
    let ok = !h.is_empty()
        && h.len() <= 253
        && h.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._:[]".contains(&b));
    if ok {
        Ok(h)
    } else {
        Err(Fail::NotFound(format!(
            "`{}` is not a host name",
            botscope_text::field(host)
        )))
    }
}

/// The verdict of `m` (compiled under `sem`) on `url` for `agent`.
fn verdict_row(m: &Matcher, sem: Semantics, agent: &str, url: &str) -> CheckRow {
    let v = m.check_path(agent, &botscope_robotstxt::path_of(url.as_bytes()));
    CheckRow {
        semantics: sem.as_str(),
        allowed: v.allowed,
        line: v.rule.as_ref().map(|r| r.line),
        describe: v.describe(),
    }
}

fn check_rows(body: &[u8], agent: &str, url: &str) -> Vec<CheckRow> {
    let opts = ParseOptions::default();
    [Semantics::Google, Semantics::Draft1996]
        .into_iter()
        .map(|sem| verdict_row(&Matcher::compile(body, sem, &opts), sem, agent, url))
        .collect()
}

/// A site's versions, the one shown, its lint, and the checker's and the
/// diff's answers.
pub async fn site_model(app: &Arc<App>, host: &str, p: &SiteParams) -> Result<SiteModel, Fail> {
    let host = host_param(host)?;
    let at = time(p.at.as_deref())?;
    let from = time(p.from.as_deref())?;
    let to = time(p.to.as_deref())?;
    let (agent, url) = (p.agent.clone(), p.url.clone());
    let a = app.clone();
    app.work(move || {
        let store = a.store_read()?;
        let h = store
            .site(&host)?
            .filter(|h| h.versions.iter().any(|v| v.is_file()))
            .ok_or_else(|| Fail::NotFound(format!("the store has no robots.txt of {host}")))?;
        // What the site serves (a submission is listed, never shown in
        // place of a fetched version).
        let stream = h.stream();
        let v = h
            .at(at.unwrap_or(i64::MAX))
            .or(stream.first().copied())
            .ok_or_else(|| Fail::NotFound(format!("no version of {host}")))?;
        let robots = Robots::parse_with(&v.body, &ParseOptions::default());
        let diagnostics =
            botscope_robotstxt::lint_with(&robots, &|t| a.registry.documents_token(t));
        let check = match (agent.as_deref(), url.as_deref()) {
            (Some(ag), Some(u)) if !ag.trim().is_empty() && !u.trim().is_empty() => {
                check_rows(&v.body, ag.trim(), u.trim())
            }
            _ => Vec::new(),
        };
        let check_preferences = check
            .iter()
            .find(|c| c.semantics == "google")
            .zip(agent.as_deref().zip(url.as_deref()))
            .map(|(c, (ag, u))| {
                robots.preferences(
                    botscope_robotstxt::product_token(ag.trim()),
                    &botscope_robotstxt::path_of(u.trim().as_bytes()),
                    c.allowed,
                )
            });
        let stated = stated_lines(&robots);
        let (mut diff, mut diff_from, mut diff_to) = (None, None, None);
        if let (Some(f), Some(t)) = (from, to) {
            if let (Some(a), Some(b)) = (h.at(f), h.at(t)) {
                diff = Some(botscope_index::diff_versions(
                    &a.body,
                    &b.body,
                    Semantics::Google,
                ));
                diff_from = Some(a.first_seen);
                diff_to = Some(b.first_seen);
            }
        } else if stream.len() > 1 {
            // The change that made the version shown, or the first one.
            let i = stream
                .iter()
                .position(|x| x.first_seen == v.first_seen)
                .unwrap_or(0)
                .max(1);
            let (a, b) = (stream[i - 1], stream[i]);
            diff = Some(botscope_index::diff_versions(
                &a.body,
                &b.body,
                Semantics::Google,
            ));
            diff_from = Some(a.first_seen);
            diff_to = Some(b.first_seen);
        }
        Ok(SiteModel {
            rank: h.rank,
            versions: h
                .versions
                .iter()
                .map(|x| VersionInfo {
                    from: x.first_seen,
                    first_seen: botscope_index::rfc3339(x.first_seen),
                    last_seen: botscope_index::rfc3339(x.last_seen),
                    source: x.source.as_str(),
                    bytes: x.body.len(),
                    url: x.url.clone(),
                    absent: x.absent.map(|a| a.as_str()),
                })
                .collect(),
            absent: v.absent.map(|a| a.as_str()),
            shown: v.first_seen,
            source: v.source.as_str(),
            bytes: v.body.len(),
            body: String::from_utf8_lossy(&v.body).into_owned(),
            raw: v.body.clone(),
            diagnostics,
            check,
            check_preferences,
            stated,
            diff,
            diff_from,
            diff_to,
            host: h.host.clone(),
        })
    })
    .await?
}

/// `GET /api/site/HOST`.
pub async fn site(
    State(app): State<Arc<App>>,
    Path(host): Path<String>,
    Query(p): Query<SiteParams>,
) -> Response {
    answer(site_model(&app, &host, &p).await)
}

/// The parameters of "Analyze it!".
#[derive(Debug, Clone, Default, Deserialize)]
pub struct BiasParams {
    /// The site (`/api/bias`).
    pub site: Option<String>,
    /// `google` or `draft1996`.
    pub semantics: Option<String>,
    /// The version in force then (default: the latest).
    pub as_of: Option<String>,
    /// `all`: the page shows up to 500 rows instead of 25.
    pub rows: Option<String>,
}

/// The bias table of a site's file.
pub async fn bias_model(
    app: &Arc<App>,
    host: Option<&str>,
    p: &BiasParams,
) -> Result<FileBias, Fail> {
    let host = host
        .or(p.site.as_deref())
        .ok_or_else(|| Fail::BadRequest("give site=HOST".into()))?;
    let host = host_param(host)?;
    let sem = semantics(p.semantics.as_deref())?;
    let as_of = time(p.as_of.as_deref())?;
    let a = app.clone();
    app.work(move || {
        let store = a.store_read()?;
        botscope_index::site_bias(&store, &host, as_of, sem)
            .map_err(|e| Fail::index(e, ""))?
            .ok_or_else(|| {
                Fail::NotFound(format!(
                    "the store has no robots.txt of {host} at that time"
                ))
            })
    })
    .await?
}

/// `GET /api/bias?site=HOST`: the JSON of `botscope bias --format json`.
pub async fn bias(State(app): State<Arc<App>>, Query(p): Query<BiasParams>) -> Response {
    answer(bias_model(&app, None, &p).await)
}

/// The parameters of `/robots`, `/api/favor` and `/api/trends`.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct FavorParams {
    /// The query selecting the files.
    #[serde(rename = "where")]
    pub where_: Option<String>,
    /// The time the set is taken at.
    pub as_of: Option<String>,
    /// `google` or `draft1996`.
    pub semantics: Option<String>,
    /// `robot`, `appeared`, `favored`, `disfavored`, `favorability`.
    pub sort: Option<String>,
    /// Robots named in at least this many files.
    pub min: Option<String>,
    /// The trend's robots (comma-separated).
    pub agent: Option<String>,
    /// The trend's registry category.
    pub category: Option<String>,
    /// `month` or `year` (default: by month up to three years).
    pub by: Option<String>,
    /// The trend's method: `exact` (default), `somesite` or `cic`.
    pub method: Option<String>,
    /// `all`: the page lists up to 300 robots instead of 25.
    pub rows: Option<String>,
}

impl FavorParams {
    fn where_(&self) -> Option<String> {
        self.where_
            .as_deref()
            .map(str::trim)
            .filter(|w| !w.is_empty())
            .map(str::to_owned)
    }
}

/// Favourability over the set, sorted.
pub async fn favor_model(app: &Arc<App>, p: &FavorParams) -> Result<FavorTable, Fail> {
    let sem = semantics(p.semantics.as_deref())?;
    let as_of = time(p.as_of.as_deref())?;
    let min = number(p.min.as_deref(), "min", 1, usize::MAX)? as u64;
    let by_name = p.sort.as_deref() == Some("robot");
    let sort = match p.sort.as_deref().unwrap_or("appeared") {
        "" | "appeared" | "robot" => FavorSort::Appeared,
        "favored" => FavorSort::Favored,
        "disfavored" => FavorSort::Disfavored,
        "favorability" => FavorSort::Favorability,
        other => {
            return Err(Fail::BadRequest(format!(
                "sort `{}`: give robot, appeared, favored, disfavored or favorability",
                botscope_text::field(other)
            )));
        }
    };
    let where_ = p.where_();
    let t = app.favor(where_, as_of, sem).await?;
    let mut t = FavorTable::clone(&t).sorted(sort, min.max(1));
    if by_name {
        t.robots.sort_by(|a, b| a.robot.cmp(&b.robot));
    }
    Ok(t)
}

/// `GET /api/favor`: the JSON of `botscope favor --format json`.
pub async fn favor(State(app): State<Arc<App>>, Query(p): Query<FavorParams>) -> Response {
    answer(favor_model(&app, &p).await)
}

/// The agents of a trend: the robots named, else the category's tokens
/// (default: AI training crawlers).
fn trend_agents(app: &App, p: &FavorParams) -> Result<Vec<String>, Fail> {
    let named: Vec<String> = p
        .agent
        .as_deref()
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    if !named.is_empty() {
        return Ok(named);
    }
    let cat = p
        .category
        .as_deref()
        .filter(|c| !c.is_empty())
        .unwrap_or("ai-training");
    let out = app.registry.agents(Some(cat), None);
    if out.is_empty() {
        return Err(Fail::BadRequest(format!(
            "no registry robot is in the category `{}`",
            botscope_text::field(cat)
        )));
    }
    Ok(out)
}

/// What one trends chart is computed from (and its memo key).
struct TrendJob {
    key: String,
    agents: Vec<String>,
    where_: Option<String>,
    sem: Semantics,
    /// `None`: by month up to three years of versions, else by year.
    by: Option<botscope_index::By>,
    method: botscope_index::studies::Method,
}

/// A trend's method by name: empty is the exact method; a name that is
/// none of the three is a 400, never the exact method answered in silence.
pub(crate) fn trend_method(m: Option<&str>) -> Result<botscope_index::studies::Method, Fail> {
    match m.map(str::trim).filter(|m| !m.is_empty()) {
        None => Ok(botscope_index::studies::Method::Exact),
        Some(m) => botscope_index::studies::Method::parse(m).ok_or_else(|| {
            Fail::BadRequest(format!(
                "method `{}`: it is exact, somesite or cic",
                botscope_text::field(m)
            ))
        }),
    }
}

fn trend_job(app: &App, p: &FavorParams) -> Result<TrendJob, Fail> {
    let sem = semantics(p.semantics.as_deref())?;
    let agents = trend_agents(app, p)?;
    let where_ = p.where_();
    let by = match p.by.as_deref().map(str::trim).filter(|b| !b.is_empty()) {
        None => None,
        Some(b) => Some(botscope_index::By::parse(b).ok_or_else(|| {
            Fail::BadRequest(format!(
                "by `{}`: it is month, year or crawl",
                botscope_text::field(b)
            ))
        })?),
    };
    let method = trend_method(p.method.as_deref())?;
    let key = format!(
        "{}\n{}\n{}\n{}\n{}",
        agents.join(","),
        where_.as_deref().unwrap_or_default(),
        sem.as_str(),
        by.map_or("", |b| b.as_str()),
        method.as_str()
    );
    Ok(TrendJob {
        key,
        agents,
        where_,
        sem,
        by,
        method,
    })
}

/// Computes (once, through the memo) and keeps the chart of `j`, through
/// the library call `botscope trends` and the Python package make.
async fn run_trend(app: &Arc<App>, j: TrendJob) -> Result<Arc<Trends>, Fail> {
    let a = app.clone();
    app.trends(j.key.clone(), move || {
        let (first, last) = a
            .index
            .span()
            .ok_or_else(|| Fail::NotFound("the index is empty".into()))?;
        let by = j.by.unwrap_or(if last - first > 3 * 366 * 86_400 {
            botscope_index::By::Year
        } else {
            botscope_index::By::Month
        });
        let store = a.store_read()?;
        a.index
            .trends_over(
                Some(&store),
                botscope_index::TrendsPlan {
                    agents: &j.agents,
                    by,
                    from: None,
                    to: None,
                    where_: j.where_.as_deref(),
                    semantics: j.sem,
                    cohort: None,
                    method: j.method,
                    per_site: None,
                },
            )
            .map_err(|e| Fail::index(e, j.where_.as_deref().unwrap_or_default()))
    })
    .await
}

/// Restriction over time (waits for it).
pub async fn trends_model(app: &Arc<App>, p: &FavorParams) -> Result<Trends, Fail> {
    let t = run_trend(app, trend_job(app, p)?).await?;
    Ok(Trends::clone(&t))
}

/// `GET /api/trends`: the JSON of `botscope trends --format json`.
pub async fn trends(State(app): State<Arc<App>>, Query(p): Query<FavorParams>) -> Response {
    answer(trends_model(&app, &p).await)
}

/// One log's view of a crawler.
#[derive(Debug, Serialize)]
pub struct CrawlerLog {
    /// The log's id (`/logs/ID`).
    pub id: u32,
    /// The log's name.
    pub log: String,
    /// The name the report gives the robot.
    pub robot: String,
    /// User-Agent strings and their requests, the most first.
    pub user_agents: Vec<(String, u64)>,
    /// Distinct User-Agent strings in all (more than listed past
    /// `botscope_logs::CRAWLER_USER_AGENTS`).
    pub user_agents_total: usize,
    /// Its addresses, placed, the most requests first.
    pub addresses: Vec<Located>,
    /// Distinct addresses in all (more than listed past
    /// `botscope_logs::CRAWLER_ADDRESSES`).
    pub addresses_total: usize,
}

/// A crawler's page.
#[derive(Debug, Serialize)]
pub struct CrawlerModel {
    /// The name asked.
    pub name: String,
    /// The registry's entry.
    pub registry: Option<botscope_botid::BotEntry>,
    /// Files in the index (N).
    pub n: u64,
    /// Its favourability over the whole index.
    pub favor: Option<RobotFavor>,
    /// Sites that favour it most.
    pub favoring: Vec<Hit>,
    /// Sites that disfavour it most.
    pub disfavoring: Vec<Hit>,
    /// What the analysed logs show of it.
    pub logs: Vec<CrawlerLog>,
    /// Whom the owners and places of its addresses are credited to (the
    /// IP-owner databases' sources, as their licences ask).
    pub credits: Vec<String>,
}

/// The crawler page's model.
pub async fn crawler_model(app: &Arc<App>, name: &str) -> Result<CrawlerModel, Fail> {
    let name = name.trim();
    if name.is_empty() || name.len() > 200 {
        return Err(Fail::NotFound("no crawler of that name".into()));
    }
    let entry = app.registry.find(name).cloned();
    // The robots.txt tokens it is named by in files, lower-cased.
    let mut tokens: Vec<String> = vec![name.to_lowercase()];
    if let Some(b) = &entry {
        tokens.push(b.name.to_lowercase());
        tokens.extend(b.ua_tokens.iter().map(|t| t.to_lowercase()));
    }
    tokens.dedup();
    let table = favor_model(app, &FavorParams::default()).await?;
    let favor = table
        .robots
        .iter()
        .filter(|r| tokens.contains(&r.robot))
        .max_by_key(|r| r.appeared)
        .cloned();
    let token = favor
        .as_ref()
        .map(|f| f.robot.clone())
        .unwrap_or_else(|| tokens[0].clone());
    let searchable = token
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
    let (favoring, disfavoring) = if searchable {
        let lists = app.crawler_sites(token).await?;
        (lists.0.clone(), lists.1.clone())
    } else {
        (Vec::new(), Vec::new())
    };
    let mut names = tokens.clone();
    names.push(name.to_owned());
    let logs: Vec<CrawlerLog> = app
        .logs()
        .iter()
        .filter_map(|l| {
            let (robot, seen) = seen_in(l, &names)?;
            Some(CrawlerLog {
                id: l.id,
                log: l.name.clone(),
                robot: robot.clone(),
                user_agents: seen.user_agents.clone(),
                user_agents_total: seen.user_agents_total,
                addresses: seen.addresses.iter().map(|a| locate(app, a)).collect(),
                addresses_total: seen.addresses_total,
            })
        })
        .collect();
    if entry.is_none() && favor.is_none() && logs.is_empty() {
        return Err(Fail::NotFound(format!(
            "no crawler named `{}`: not in the registry, in no robots.txt of the index, in no uploaded log",
            botscope_text::field(name)
        )));
    }
    Ok(CrawlerModel {
        name: entry
            .as_ref()
            .map_or_else(|| name.to_owned(), |b| b.name.clone()),
        registry: entry,
        credits: app.owners.credits(),
        n: table.n,
        favor,
        favoring,
        disfavoring,
        logs,
    })
}

/// `GET /api/crawler/NAME`.
pub async fn crawler(State(app): State<Arc<App>>, Path(name): Path<String>) -> Response {
    answer(crawler_model(&app, &name).await)
}

/// One crawler of the registry, as `/crawlers` lists it.
#[derive(Debug, Clone, Serialize)]
pub struct CrawlerEntry {
    /// Its name in the registry.
    pub name: String,
    /// Who runs it.
    pub operator: Option<String>,
    /// Its category (`search`, `ai-training`, `ai-search` …).
    pub category: Option<&'static str>,
    /// How a claim to be it is checked: `published addresses`, `reverse
    /// DNS`, `signature`; empty when it cannot be.
    pub verified_by: Vec<&'static str>,
    /// With both addresses and reverse DNS: `all-of` or `any-of`.
    pub combine: Option<&'static str>,
    /// The date of its published address list, when it has one.
    pub list_as_of: Option<String>,
    /// Its operator's documentation.
    pub url: Option<String>,
    /// Its page in this application.
    pub page: String,
}

/// The registry as a directory, by name; `category` keeps one category.
pub fn crawler_directory(app: &App, category: Option<&str>) -> Result<Vec<CrawlerEntry>, Fail> {
    if let Some(c) = category
        && !c.is_empty()
        && !app
            .registry
            .bots()
            .iter()
            .any(|b| b.category.is_some_and(|x| x.as_str() == c))
    {
        return Err(Fail::BadRequest(format!(
            "no crawler of the registry is in the category `{}`",
            botscope_text::field(c)
        )));
    }
    let mut v: Vec<CrawlerEntry> = app
        .registry
        .bots()
        .iter()
        .filter(|b| {
            category.is_none_or(|c| c.is_empty() || b.category.is_some_and(|x| x.as_str() == c))
        })
        .map(|b| {
            let mut by = Vec::new();
            if b.has_ip_verifier() {
                by.push("published addresses");
            }
            if b.fcrdns_hosts.is_some() {
                by.push("reverse DNS");
            }
            if !b.signature_agents.is_empty() {
                by.push("signature");
            }
            CrawlerEntry {
                name: b.name.clone(),
                operator: b.operator.clone(),
                category: b.category.map(|c| c.as_str()),
                combine: (b.has_ip_verifier() && b.fcrdns_hosts.is_some())
                    .then(|| b.verify.as_str()),
                verified_by: by,
                list_as_of: b.ip_as_of.clone(),
                url: b.url.clone(),
                page: format!("/crawler/{}", crate::layout::enc(&b.name)),
            }
        })
        .collect();
    v.sort_by_key(|c| c.name.to_lowercase());
    Ok(v)
}

/// The query of `/crawlers` and `/api/crawlers`.
#[derive(Debug, Default, Deserialize)]
pub struct DirectoryParams {
    /// One category only.
    pub category: Option<String>,
}

/// `GET /api/crawlers`: the registry's crawlers.
pub async fn crawlers(State(app): State<Arc<App>>, Query(p): Query<DirectoryParams>) -> Response {
    answer(
        crawler_directory(&app, p.category.as_deref())
            .map(|c| serde_json::json!({ "total": c.len(), "crawlers": c })),
    )
}

/// Any other address under `/api/`: a JSON 404 naming the API's index.
pub async fn not_found() -> Response {
    Fail::NotFound(
        "there is no API call at this address (the calls are listed at /api/openapi.json)".into(),
    )
    .json()
}

/// `GET /api/logs`.
pub async fn logs(State(app): State<Arc<App>>) -> Response {
    let logs = app.logs();
    let list: Vec<_> = logs.iter().map(|l| l.summary()).collect();
    Json(serde_json::json!({ "logs": list })).into_response()
}

/// `GET /api/logs/ID`: the report (schema `botscope.logs/1`).
pub async fn log(State(app): State<Arc<App>>, Path(id): Path<String>) -> Response {
    match id.parse().ok().and_then(|id| app.log(id)) {
        Some(v) => (
            [(
                axum::http::header::CONTENT_TYPE,
                axum::http::HeaderValue::from_static("application/json"),
            )],
            v.json.clone(),
        )
            .into_response(),
        None => Fail::NotFound("no such log".into()).json(),
    }
}

/// The body of `/api/submit`.
#[derive(Debug, Deserialize)]
pub struct SubmitBody {
    /// The host.
    pub site: String,
    /// The file.
    pub robots_txt: String,
    /// `google` (default) or `draft1996`, for the bias answered.
    pub semantics: Option<String>,
}

/// Stores and indexes a user's file; its bias.
pub async fn submit_model(
    app: &Arc<App>,
    site: &str,
    body: Vec<u8>,
    sem: Semantics,
) -> Result<FileBias, Fail> {
    if body.len() > botscope_index::MAX_SUBMISSION {
        return Err(Fail::TooLarge(format!(
            "the file is {}, over the {} crawlers read; nothing was stored",
            botscope_text::size(body.len() as u64),
            botscope_text::size(botscope_index::MAX_SUBMISSION as u64)
        )));
    }
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(Fail::BadRequest(
            "the file is empty; nothing was stored".into(),
        ));
    }
    let site = site.trim().to_owned();
    let _writer = app.write.lock().await;
    let a = app.clone();
    let r = app
        .work(move || {
            let mut store = a.store.open()?;
            botscope_index::submit(
                &mut store,
                &a.index_dir,
                &site,
                &body,
                sem,
                botscope_os::unix_now(),
            )
            .map_err(|e| Fail::index(e, ""))
        })
        .await?;
    app.changed();
    r
}

/// `POST /api/submit`: `{"site", "robots_txt"}` → the bias JSON.
pub async fn submit(
    State(app): State<Arc<App>>,
    body: Result<Json<SubmitBody>, axum::extract::rejection::JsonRejection>,
) -> Response {
    let Json(b) = match body {
        Ok(b) => b,
        Err(e) => {
            return (
                e.status(),
                Json(serde_json::json!({ "error": e.body_text() })),
            )
                .into_response();
        }
    };
    let sem = match semantics(b.semantics.as_deref()) {
        Ok(s) => s,
        Err(e) => return e.json(),
    };
    answer(submit_model(&app, &b.site, b.robots_txt.into_bytes(), sem).await)
}

/// What `/check` and `/api/check` are given.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct CheckInput {
    /// The file's text.
    pub robots_txt: Option<String>,
    /// Or a site's URL to fetch it from.
    pub url: Option<String>,
    /// The agent.
    #[serde(default)]
    pub agent: String,
    /// URLs or paths.
    #[serde(default)]
    pub urls: Vec<String>,
}

/// One URL's verdicts.
#[derive(Debug, Clone, Serialize)]
pub struct UrlVerdicts {
    /// The URL as given.
    pub url: String,
    /// Under Google's rules.
    pub google: CheckRow,
    /// Under the 1996 draft.
    pub draft1996: CheckRow,
}

/// The answer of a check.
#[derive(Debug, Clone, Serialize)]
pub struct CheckModel {
    /// What was fetched, when a URL was given.
    pub fetched: Option<String>,
    /// The file checked.
    pub robots_txt: String,
    /// Per URL.
    pub results: Vec<UrlVerdicts>,
    /// The file's lint.
    pub diagnostics: Vec<Diagnostic>,
}

/// Checks URLs against a pasted or fetched file.
pub async fn check_model(app: &Arc<App>, input: &CheckInput) -> Result<CheckModel, Fail> {
    let agent = input.agent.trim().to_owned();
    if agent.is_empty() {
        return Err(Fail::BadRequest(
            "give an agent (a product token such as Googlebot)".into(),
        ));
    }
    if input.urls.is_empty() || input.urls.len() > 1000 {
        return Err(Fail::BadRequest("give 1 to 1,000 URLs or paths".into()));
    }
    let (body, fetched) = match (&input.robots_txt, &input.url) {
        (Some(t), _) => (t.clone().into_bytes(), None),
        (None, Some(u)) => {
            let f = botscope_harvest::fetch_robots_txt(
                u.trim(),
                app.fetch.clone(),
                app.nameservers.clone(),
                app.fetch.connect_timeout,
            )
            .await
            .map_err(|e| {
                Fail::BadRequest(format!("cannot fetch {}: {e}", botscope_text::field(u)))
            })?;
            (f.robots_txt.clone(), Some(f.describe()))
        }
        (None, None) => return Err(Fail::BadRequest("paste a robots.txt or give a URL".into())),
    };
    if body.len() > botscope_index::MAX_SUBMISSION {
        return Err(Fail::TooLarge(format!(
            "the file is {}, over the {} crawlers read",
            botscope_text::size(body.len() as u64),
            botscope_text::size(botscope_index::MAX_SUBMISSION as u64)
        )));
    }
    let urls = input.urls.clone();
    let a = app.clone();
    app.work(move || {
        let robots = Robots::parse_with(&body, &ParseOptions::default());
        let diagnostics =
            botscope_robotstxt::lint_with(&robots, &|t| a.registry.documents_token(t));
        let opts = ParseOptions::default();
        let g = Matcher::compile(&body, Semantics::Google, &opts);
        let d = Matcher::compile(&body, Semantics::Draft1996, &opts);
        let results = urls
            .iter()
            .map(|u| UrlVerdicts {
                url: u.clone(),
                google: verdict_row(&g, Semantics::Google, &agent, u),
                draft1996: verdict_row(&d, Semantics::Draft1996, &agent, u),
            })
            .collect();
        CheckModel {
            fetched,
            robots_txt: String::from_utf8_lossy(&body).into_owned(),
            results,
            diagnostics,
        }
    })
    .await
}

/// `POST /api/check`.
pub async fn check(
    State(app): State<Arc<App>>,
    body: Result<Json<CheckInput>, axum::extract::rejection::JsonRejection>,
) -> Response {
    let Json(input) = match body {
        Ok(b) => b,
        Err(e) => {
            return (
                e.status(),
                Json(serde_json::json!({ "error": e.body_text() })),
            )
                .into_response();
        }
    };
    answer(check_model(&app, &input).await)
}

/// `GET /api/openapi.json`.
pub async fn openapi() -> Response {
    (
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        OPENAPI,
    )
        .into_response()
}
