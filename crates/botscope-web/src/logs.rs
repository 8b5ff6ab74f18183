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
use botscope_logs::{CrawlerSeen, Source};
use maud::html;
use serde::Serialize;

use crate::App;
use crate::layout::{Page, Text, error_page, html_response};
use crate::logview::{Analysis, LogView, analyse_against};

/// A reader that fails once more than `left` bytes came out of it, or
/// once nobody waits for the analysis any more (its request's deadline
/// passed): reading stops and the analysis ends early.
struct Capped<R> {
    inner: R,
    left: u64,
    cap: u64,
    cancel: crate::work::Cancel,
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
                "the log is over {} once decompressed (the server's limit)",
                botscope_text::size(self.cap)
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
            (botscope_text::size(limit)) "): botscope finds the robots in it, verifies them against their operators' published addresses, and reports what they did. "
            "The log is analysed offline and kept in memory only."
        }
        form.upload method="post" action="/logs" enctype="multipart/form-data" {
            label { "Access log " input type="file" name="log" required; }
            label { "The site's robots.txt (optional) " input type="file" name="robots"; }
            label { "or its site in this store " input type="text" name="site" maxlength="253" size="24" placeholder="example.com" autocomplete="off"; }
            button type="submit" { "Analyse" }
        }
        p.muted {
            "With a robots.txt (a file, or every version the store holds of the site, each in force from when it was first seen, the oldest also before), "
            "each robot's requests are judged against it: what it fetched that the file closed, its Crawl-delay, its compliance. Without one, the report says "
            em { "not checked" } "."
        }
        h2 { "Analysed" }
        @if logs.is_empty() {
            p.muted { "None yet." }
        } @else {
            div.wide tabindex="0" { table {
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
            feed: None,
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
    let mut robots: Option<(String, Vec<u8>)> = None;
    let mut site = String::new();
    loop {
        let field = match form.next_field().await {
            Ok(Some(f)) => f,
            Ok(None) => break,
            Err(e) => return fail(e.status(), upload_error(&e.body_text(), app.limits.upload)),
        };
        match field.name() {
            Some("log") => {}
            Some(which @ ("robots" | "site")) => {
                let which = which.to_owned();
                let file = field
                    .file_name()
                    .filter(|n| !n.is_empty())
                    .unwrap_or("robots.txt")
                    .to_owned();
                // What a crawler reads (and the byte past it, which tells
                // the parser whether the last line is whole); the rest is
                // passed over.
                let cap = if which == "site" {
                    253
                } else {
                    botscope_robotstxt::DEFAULT_PARSE_CAP + 1
                };
                let mut field = field;
                let mut body = Vec::new();
                loop {
                    match next_chunk(&mut field, &app.limits).await {
                        Ok(Some(b)) => {
                            let room = cap.saturating_sub(body.len());
                            body.extend_from_slice(&b[..b.len().min(room)]);
                        }
                        Ok(None) => break,
                        Err((status, detail)) => return fail(status, detail),
                    }
                }
                if which == "site" {
                    site = String::from_utf8_lossy(&body).trim().to_ascii_lowercase();
                } else if !body.is_empty() {
                    robots = Some((file, body));
                }
                continue;
            }
            _ => continue,
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
            match next_chunk(&mut field, &app.limits).await {
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
                Err((status, detail)) => return fail(status, detail),
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
    if !site.is_empty() && robots.is_some() {
        return fail(
            StatusCode::BAD_REQUEST,
            "give a robots.txt file or a site, not both".into(),
        );
    }
    if !site.is_empty() && botscope_text::host_of(&site).is_none_or(|h| h != site) {
        return fail(
            StatusCode::BAD_REQUEST,
            format!("{site} is not a host name (such as example.com)"),
        );
    }
    let a = app.clone();
    let runtime = tokio::runtime::Handle::current();
    // A long job: it may use every work thread but one, which stays for
    // searches and pages; uploads wait their turn in the bounded queue.
    let threads = u32::try_from(app.threads).unwrap_or(u32::MAX);
    let analysed = app
        .pool
        .run_long(threads, move |threads, cancel| {
            let robots = robots_txt(&a, robots, &site)?;
            let source = source_of(&file, &name, a.limits.upload_unpacked, cancel)?;
            let on = Analysis {
                registry: &a.registry,
                owners: &a.owners,
                max_clients: a.limits.upload_clients,
            };
            let dns = a.dns.as_ref().map(|(evidence, max)| crate::logview::Dns {
                evidence,
                runtime: &runtime,
                max: *max,
            });
            let view = analyse_against(&on, &name, source, robots, dns, true, threads);
            view.map_err(|e| e.to_string())
        })
        .await;
    match analysed {
        Ok(Ok(view)) => {
            // Kept, the oldest uploads let go, and what they and the
            // analysis held given back to the system before the answer:
            // after each upload the server is the size of what it keeps.
            let a = app.clone();
            let kept = tokio::task::spawn_blocking(move || {
                let id = a.add_log(view);
                botscope_os::release_free_memory();
                id
            })
            .await;
            match kept {
                Ok(id) => Redirect::to(&format!("/logs/{id}")).into_response(),
                Err(e) => fail(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    format!("the analysed log could not be kept: {e}"),
                ),
            }
        }
        Ok(Err(e)) => fail(StatusCode::UNPROCESSABLE_ENTITY, e),
        Err(e) => {
            let status = e.status();
            e.retry_after(fail(status, e.detail().to_owned()))
        }
    }
}

/// The next chunk of a form field. A client that stops sending holds a
/// connection and a file: the body has a minimum rate, and a field that
/// sends nothing for `body_stall` is dropped.
async fn next_chunk(
    field: &mut axum::extract::multipart::Field<'_>,
    limits: &crate::Limits,
) -> Result<Option<axum::body::Bytes>, (StatusCode, String)> {
    match tokio::time::timeout(limits.body_stall, field.chunk()).await {
        Err(_) => Err((
            StatusCode::REQUEST_TIMEOUT,
            format!(
                "the upload sent nothing for {} s and was dropped; nothing was kept",
                limits.body_stall.as_secs()
            ),
        )),
        Ok(Ok(c)) => Ok(c),
        Ok(Err(e)) => Err((e.status(), upload_error(&e.body_text(), limits.upload))),
    }
}

/// The robots.txt versions an upload is judged against: the file sent
/// with it, or every version the store holds of `site` (each in force
/// from when it was first seen; the oldest also before it, as the store
/// cannot know when the site began serving it), or none.
fn robots_txt(
    app: &App,
    file: Option<(String, Vec<u8>)>,
    site: &str,
) -> Result<botscope_logs::RobotsTxt, String> {
    let semantics = botscope_robotstxt::Semantics::Google;
    let files = if let Some((name, body)) = file {
        vec![(None, name, body)]
    } else if site.is_empty() {
        return Ok(Default::default());
    } else {
        use botscope_store::Store;
        let store = app
            .store
            .open_read()
            .map_err(|e| format!("the store cannot be read: {e}"))?;
        let history = store
            .site(site)
            .map_err(|e| format!("the store cannot be read: {e}"))?
            .filter(|h| h.versions.iter().any(|v| v.is_file()))
            .ok_or_else(|| {
                format!("the store holds no robots.txt of {site}: send the file instead")
            })?;
        history
            .versions
            .into_iter()
            .enumerate()
            .map(|(k, v)| {
                let seen = botscope_accesslog::format_rfc3339(v.first_seen);
                // An absence is judged as no file: everything allowed.
                let name = match v.absent {
                    Some(a) => format!("no robots.txt at {} ({}, from {seen})", v.url, a.as_str()),
                    None => format!("{} (first seen {seen})", v.url),
                };
                ((k > 0).then_some(v.first_seen), name, v.body)
            })
            .collect()
    };
    botscope_logs::RobotsTxt::new(files, semantics).map_err(|e| e.to_string())
}

fn upload_error(detail: &str, limit: u64) -> String {
    if detail.contains("length limit") || detail.contains("too large") {
        format!(
            "the upload is over the server's limit of {}; nothing was kept",
            botscope_text::size(limit)
        )
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
    cancel: crate::work::Cancel,
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
