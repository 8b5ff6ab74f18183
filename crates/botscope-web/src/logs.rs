//! Access logs in the browser: the demo's logs analysed at start, and
//! logs uploaded by users (streamed to a temporary file within the size
//! limit, gzip accepted and bounded once decompressed), each analysed by
//! botscope-logs offline and kept as the report the command line writes,
//! with its robots linked to their crawler pages.

use std::io::{Read, Write};
use std::sync::Arc;

use axum::extract::{Multipart, Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use base64::Engine;
use botscope_accesslog::Report;
use botscope_logs::{CrawlerSeen, Job, NoProgress, Settings, Source};
use maud::html;
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::App;
use crate::layout::{Page, Text, error_page, html_response};

/// One analysed log.
pub struct LogView {
    /// Its id in URLs (`/logs/ID`).
    pub id: u32,
    /// Its name as given (data only: shown escaped, never a path).
    pub name: String,
    /// Uploaded by a user (else the demo's).
    pub uploaded: bool,
    /// When it was analysed (Unix seconds).
    pub analysed: i64,
    /// The report.
    pub report: Report,
    /// The report as the command line's HTML, robots linked: rendered
    /// once, served from these bytes without a copy.
    pub html: axum::body::Bytes,
    /// About how many bytes this view holds (its page, its report's JSON
    /// and its crawlers), for the bound on what kept reports hold.
    pub size: usize,
    /// The Content-Security-Policy of that page: its inline style and
    /// script allowed by their hashes, nothing else.
    pub csp: String,
    /// Per declared robot, its User-Agents and addresses.
    pub crawlers: std::collections::BTreeMap<String, CrawlerSeen>,
}

/// The summary of a log in lists.
#[derive(Debug, Serialize)]
pub struct LogSummary<'a> {
    /// Its id.
    pub id: u32,
    /// Its name.
    pub name: &'a str,
    /// Uploaded by a user.
    pub uploaded: bool,
    /// When it was analysed (RFC 3339).
    pub analysed: String,
    /// Lines read.
    pub lines: u64,
    /// Requests analysed.
    pub requests: u64,
    /// Declared robots seen.
    pub robots: usize,
    /// Addresses that claimed a robot falsely.
    pub spoofed: u64,
}

impl LogView {
    /// Its summary.
    pub fn summary(&self) -> LogSummary<'_> {
        LogSummary {
            id: self.id,
            name: &self.name,
            uploaded: self.uploaded,
            analysed: botscope_index::rfc3339(self.analysed),
            lines: self.report.lines.total,
            requests: self.report.site.requests,
            robots: self.report.robots.len(),
            spoofed: self.report.spoofed.total,
        }
    }
}

/// `'sha256-…'` of an inline block.
fn hash_source(s: &str) -> String {
    format!(
        "'sha256-{}'",
        base64::engine::general_purpose::STANDARD.encode(Sha256::digest(s.as_bytes()))
    )
}

/// The text between the first `<tag>` and `</tag>`.
fn inline_block<'a>(html: &'a str, tag: &str) -> Option<&'a str> {
    let open = format!("<{tag}>");
    let start = html.find(&open)? + open.len();
    let end = html[start..].find(&format!("</{tag}>"))? + start;
    Some(&html[start..end])
}

/// The policy of a report page: its own inline style and script, by hash.
fn report_csp(html: &str) -> String {
    let style = inline_block(html, "style").map_or_else(|| "'none'".into(), hash_source);
    let script = inline_block(html, "script").map_or_else(|| "'none'".into(), hash_source);
    format!(
        "default-src 'none'; style-src {style}; script-src {script}; img-src data:; \
         form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    )
}

/// Why an upload was not analysed.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// The log could not be read as a log.
    #[error("{0}")]
    Unreadable(String),
    /// The analysis failed.
    #[error(transparent)]
    Logs(#[from] botscope_logs::Error),
}

/// Analyses one log offline: published addresses and IP-owner data
/// decide; no DNS query is sent.
pub fn analyse(
    app: &App,
    name: &str,
    source: Source,
    uploaded: bool,
    threads: usize,
) -> Result<LogView, LogError> {
    let job = Job::new(&app.registry, Default::default(), threads)?;
    let settings = Settings {
        format: None,
        window: Default::default(),
        threads,
        max_clients: app.limits.upload_clients,
    };
    let read = job.read(vec![source], &settings, &NoProgress)?;
    let outcome = job.finish(read, &std::collections::HashMap::new(), &app.owners, false);
    if let Some(p) = outcome.problem() {
        return Err(LogError::Unreadable(p.to_string()));
    }
    let html = botscope_logs::render::html_with(
        &outcome.report,
        &botscope_logs::render::PageOptions {
            robot_link: Some("/crawler/"),
            header: Some(&crate::layout::header("/logs")),
            style: Some(crate::layout::HEADER_STYLE),
        },
    );
    let crawlers = outcome.crawlers();
    let csp = report_csp(&html);
    let size = html.len()
        + serde_json::to_vec(&outcome.report).map_or(0, |v| v.len())
        + crawlers
            .values()
            .map(|c| {
                c.addresses.len() * size_of::<botscope_logs::AddressSeen>()
                    + c.addresses.iter().map(|a| a.reason.len()).sum::<usize>()
                    + c.user_agents
                        .iter()
                        .map(|(u, _)| u.len() + 32)
                        .sum::<usize>()
            })
            .sum::<usize>();
    Ok(LogView {
        id: 0,
        name: name.to_owned(),
        uploaded,
        analysed: botscope_os::unix_now(),
        csp,
        html: axum::body::Bytes::from(html),
        size,
        report: outcome.report,
        crawlers,
    })
}

/// The demo's logs, analysed at start.
pub fn analyse_demo(app: &App) -> Result<(), crate::Error> {
    for (name, bytes) in crate::demo::logs() {
        let source = Source::Reader((*name).to_owned(), Box::new(*bytes));
        match analyse(app, name, source, false, app.threads) {
            Ok(v) => {
                app.add_log(v);
            }
            Err(e) => tracing::warn!("demo log {name}: {e}"),
        }
    }
    Ok(())
}

/// A reader that fails once more than `left` bytes came out of it, or
/// once nobody waits for the analysis any more (its request's deadline
/// passed): reading stops and the analysis ends early.
struct Capped<R> {
    inner: R,
    left: u64,
    cap: u64,
    cancel: crate::state::Cancel,
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.cancel.is_set() {
            return Err(std::io::Error::other(
                "the request was given up (its deadline passed); the analysis was stopped",
            ));
        }
        let n = self.inner.read(buf)?;
        if n as u64 > self.left {
            return Err(std::io::Error::other(format!(
                "the log is over {} bytes once decompressed (the server's limit)",
                self.cap
            )));
        }
        self.left -= n as u64;
        Ok(n)
    }
}

/// `GET /logs`: the analysed logs and the upload form.
pub async fn list(State(app): State<Arc<App>>) -> Response {
    let logs = app.logs();
    let limit = app.limits.upload;
    let body = html! {
        h1 { "Access logs" }
        p {
            "Upload an access log (combined, common, vhost_combined, JSON, W3C …; plain or gzip, up to "
            (botscope_logs::render::bytes(limit)) "): botscope finds the robots in it, verifies them against their operators' published addresses, and reports what they did. "
            "The log is analysed offline and kept in memory only."
        }
        form.upload method="post" action="/logs" enctype="multipart/form-data" {
            input type="file" name="log" required;
            button type="submit" { "Analyse" }
        }
        h2 { "Analysed" }
        @if logs.is_empty() {
            p.muted { "None yet." }
        } @else {
            div.wide { table {
                thead { tr { th { "Log" } th { "Lines" } th { "Requests" } th { "Robots" } th { "Spoofed" } th { "Analysed" } } }
                tbody {
                    @for l in logs.iter().rev() {
                        @let s = l.summary();
                        tr {
                            td { a href={ "/logs/" (l.id) } { (Text(&l.name)) } @if !l.uploaded { " " span.muted { "(demo)" } } }
                            td.n { (s.lines) } td.n { (s.requests) } td.n { (s.robots) } td.n { (s.spoofed) }
                            td { (s.analysed) }
                        }
                    }
                }
            } }
        }
    };
    html_response(
        StatusCode::OK,
        Page {
            title: "Access logs",
            nav: "/logs",
            body,
            foot: None,
            demo: app.is_demo(),
        }
        .render(),
    )
}

/// `GET /logs/ID`: the report, as the command line writes it.
pub async fn report(State(app): State<Arc<App>>, Path(id): Path<String>) -> Response {
    let Some(view) = id.parse().ok().and_then(|id| app.log(id)) else {
        return error_page(
            StatusCode::NOT_FOUND,
            "No such log",
            "This log is not (or no longer) here: uploaded logs are kept in memory, the most recent first.",
            app.is_demo(),
        );
    };
    // The page's bytes are shared, not copied, however many ask.
    let mut res = (StatusCode::OK, view.html.clone()).into_response();
    res.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    if let Ok(v) = HeaderValue::from_str(&view.csp) {
        res.headers_mut().insert(header::CONTENT_SECURITY_POLICY, v);
    }
    res
}

/// `POST /logs`: streams the upload to a temporary file, analyses it, and
/// sends the browser to its report.
pub async fn upload(State(app): State<Arc<App>>, mut form: Multipart) -> Response {
    let demo = app.is_demo();
    let fail = |status: StatusCode, detail: String| {
        error_page(status, "The log was not analysed", &detail, demo)
    };
    let mut file = match tempfile::NamedTempFile::new() {
        Ok(f) => f,
        Err(e) => {
            return fail(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("no room for the upload: {e}"),
            );
        }
    };
    let mut name = None;
    let mut size = 0u64;
    loop {
        let field = match form.next_field().await {
            Ok(Some(f)) => f,
            Ok(None) => break,
            Err(e) => return fail(e.status(), upload_error(&e.body_text(), app.limits.upload)),
        };
        if field.name() != Some("log") {
            continue;
        }
        name = Some(
            field
                .file_name()
                .filter(|n| !n.is_empty())
                .unwrap_or("upload.log")
                .to_owned(),
        );
        let mut field = field;
        loop {
            // A client that stops sending holds a connection and a file:
            // the body has a minimum rate.
            let Ok(chunk) = tokio::time::timeout(app.limits.body_stall, field.chunk()).await else {
                return fail(
                    StatusCode::REQUEST_TIMEOUT,
                    format!(
                        "the upload sent nothing for {} s and was dropped; nothing was kept",
                        app.limits.body_stall.as_secs()
                    ),
                );
            };
            match chunk {
                Ok(Some(bytes)) => {
                    size += bytes.len() as u64;
                    if let Err(e) = file.write_all(&bytes) {
                        return fail(
                            StatusCode::INTERNAL_SERVER_ERROR,
                            format!("cannot keep the upload: {e}"),
                        );
                    }
                }
                Ok(None) => break,
                Err(e) => return fail(e.status(), upload_error(&e.body_text(), app.limits.upload)),
            }
        }
    }
    let Some(name) = name else {
        return fail(
            StatusCode::BAD_REQUEST,
            "the form has no file in its `log` field".into(),
        );
    };
    if size == 0 {
        return fail(StatusCode::BAD_REQUEST, format!("{name} is empty"));
    }
    let a = app.clone();
    // A long job: it may use every work thread but one, which stays for
    // searches and pages; uploads wait their turn in the bounded queue.
    let threads = u32::try_from(app.threads).unwrap_or(u32::MAX);
    let analysed = app
        .pool
        .run_long(threads, move |threads, cancel| {
            let source = source_of(&file, &name, a.limits.upload_unpacked, cancel)?;
            analyse(&a, &name, source, true, threads).map_err(|e| e.to_string())
        })
        .await;
    match analysed {
        Ok(Ok(view)) => {
            let id = app.add_log(view);
            Redirect::to(&format!("/logs/{id}")).into_response()
        }
        Ok(Err(e)) => fail(StatusCode::UNPROCESSABLE_ENTITY, e),
        Err(e) => {
            let status = e.status();
            e.retry_after(fail(status, e.detail().to_owned()))
        }
    }
}

fn upload_error(detail: &str, limit: u64) -> String {
    if detail.contains("length limit") || detail.contains("too large") {
        format!("the upload is over the server's limit of {limit} bytes; nothing was kept")
    } else {
        format!("the upload could not be read: {detail}")
    }
}

/// The uploaded file as a source: gzip is decompressed here, within the
/// decompressed limit.
fn source_of(
    file: &tempfile::NamedTempFile,
    name: &str,
    cap: u64,
    cancel: crate::state::Cancel,
) -> Result<Source, String> {
    let mut f = file
        .reopen()
        .map_err(|e| format!("cannot read the upload: {e}"))?;
    let mut head = [0u8; 2];
    let n = f.read(&mut head).map_err(|e| e.to_string())?;
    let f = file
        .reopen()
        .map_err(|e| format!("cannot read the upload: {e}"))?;
    let reader: Box<dyn Read + Send> = if n == 2 && head == [0x1f, 0x8b] {
        Box::new(flate2::read::MultiGzDecoder::new(std::io::BufReader::new(
            f,
        )))
    } else {
        Box::new(f)
    };
    Ok(Source::Reader(
        name.to_owned(),
        Box::new(Capped {
            inner: reader,
            left: cap,
            cap,
            cancel,
        }),
    ))
}

/// An address as a crawler page shows it: what the log says, and where
/// the IP-owner data places it.
#[derive(Debug, Serialize)]
pub struct Located {
    /// What the log says.
    #[serde(flatten)]
    pub seen: botscope_logs::AddressSeen,
    /// The AS number.
    pub asn: Option<u32>,
    /// Its registered owner.
    pub as_org: Option<String>,
    /// ISO country code.
    pub country: Option<String>,
    /// City.
    pub city: Option<String>,
    /// Latitude.
    pub latitude: Option<f64>,
    /// Longitude.
    pub longitude: Option<f64>,
}

/// Places an address.
pub fn locate(app: &App, seen: &botscope_logs::AddressSeen) -> Located {
    let (o, p) = app.owners.place(seen.ip);
    Located {
        seen: seen.clone(),
        asn: o.asn,
        as_org: o.as_org,
        country: o.country.or(p.country),
        city: p.city,
        latitude: p.latitude,
        longitude: p.longitude,
    }
}

/// The robot names a log report may use for `name` (the registry's name,
/// or its tokens), matched case-insensitively.
pub fn seen_in<'a>(view: &'a LogView, names: &[String]) -> Option<(&'a String, &'a CrawlerSeen)> {
    view.crawlers
        .iter()
        .find(|(k, _)| names.iter().any(|n| n.eq_ignore_ascii_case(k)))
}
