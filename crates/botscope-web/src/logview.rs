//! An analysed access log as the server keeps it: the report, its page
//! rendered once, the crawlers seen, what it weighs. Knows nothing of the
//! server around it.

use base64::Engine;
use botscope_accesslog::Report;
use botscope_logs::{CrawlerSeen, Job, NoProgress, Settings, Source};
use serde::Serialize;
use sha2::{Digest, Sha256};

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
    /// The report as JSON (schema `botscope.logs/1`), made once and
    /// served from these bytes: what the view holds is what it weighs (a
    /// report kept as structures weighed four times its JSON).
    pub json: axum::body::Bytes,
    /// What lists show of it.
    pub counts: LogCounts,
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

/// The figures of a report that lists show.
#[derive(Debug, Clone, Copy)]
pub struct LogCounts {
    /// Lines read.
    pub lines: u64,
    /// Requests analysed.
    pub requests: u64,
    /// Declared robots seen.
    pub robots: usize,
    /// Addresses that claimed a robot falsely.
    pub spoofed: u64,
}

impl LogCounts {
    fn of(r: &Report) -> LogCounts {
        LogCounts {
            lines: r.lines.total,
            requests: r.site.requests,
            robots: r.robots.len(),
            spoofed: r.spoofed.total,
        }
    }
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
            lines: self.counts.lines,
            requests: self.counts.requests,
            robots: self.counts.robots,
            spoofed: self.counts.spoofed,
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

/// What an analysis needs of the server: who robots are, who owns
/// addresses, and how many clients it may track.
pub struct Analysis<'a> {
    /// The crawler registry.
    pub registry: &'a botscope_botid::Registry,
    /// The IP-owner databases.
    pub owners: &'a botscope_ipdb::IpOwners,
    /// Distinct clients tracked at most.
    pub max_clients: usize,
}

/// Analyses one log offline: published addresses and IP-owner data
/// decide; no DNS query is sent.
pub fn analyse(
    on: &Analysis<'_>,
    name: &str,
    source: Source,
    uploaded: bool,
    threads: usize,
) -> Result<LogView, LogError> {
    analyse_against(
        on,
        name,
        source,
        Default::default(),
        None,
        uploaded,
        threads,
    )
}

/// FCrDNS for an analysis: the evidence, the runtime to ask it on (the
/// analysis runs on a blocking thread), and the most addresses asked.
pub struct Dns<'a> {
    /// Where answers come from.
    pub evidence: &'a botscope_dns::DnsEvidence,
    /// The server's runtime.
    pub runtime: &'a tokio::runtime::Handle,
    /// Addresses asked at most (the first the analysis names; the rest
    /// stay undecided, and the report says how many).
    pub max: usize,
}

/// [`analyse`], the requests judged against the site's robots.txt
/// versions (`robots`; none: nothing is judged, and the report says "not
/// checked").
pub fn analyse_against(
    on: &Analysis<'_>,
    name: &str,
    source: Source,
    robots: botscope_logs::RobotsTxt,
    dns: Option<Dns<'_>>,
    uploaded: bool,
    threads: usize,
) -> Result<LogView, LogError> {
    let job = Job::new(on.registry, robots, threads)?;
    // What would decide the claims left undecided, said where the report
    // is read.
    let hint = if dns.is_some() {
        "reverse DNS was asked (this server asks it about N addresses of an upload at most, \
         `botscope serve --verify-uploads N`) and did not decide these; `botscope logs \
         analyze --verify` checks a whole log, and `botscope data update` installs the \
         IP-owner database that tells an operator's network from a stranger's."
    } else {
        "this server does not ask reverse DNS about uploaded logs (its owner can turn that on: \
         `botscope serve --verify-uploads`); `botscope logs analyze --verify` checks a log by \
         forward-confirmed reverse DNS, and `botscope data update` installs the IP-owner \
         database that tells an operator's network from a stranger's."
    };
    let settings = Settings {
        format: None,
        window: Default::default(),
        threads,
        max_clients: on.max_clients,
        // Upload after upload on the same threads: the server stays its size.
        keep_threads: true,
    };
    let read = job.read(vec![source], &settings, &NoProgress)?;
    let evidence = match dns {
        Some(d) => {
            let mut want = job.dns_wanted(&read);
            want.truncate(d.max);
            if want.is_empty() {
                Default::default()
            } else {
                let (ev, problem) = d.runtime.block_on(d.evidence.gather(&want));
                if let Some(p) = problem {
                    tracing::warn!("upload {name}: reverse DNS: {p}");
                }
                ev
            }
        }
        None => Default::default(),
    };
    let outcome = job.finish(read, &evidence, on.owners, false);
    if let Some(p) = outcome.problem() {
        return Err(LogError::Unreadable(p.to_string()));
    }
    let html = botscope_logs::render::html_with(
        &outcome.report,
        &botscope_logs::render::PageOptions {
            robot_link: Some("/crawler/"),
            header: Some(&crate::layout::header("/logs")),
            style: Some(crate::layout::HEADER_STYLE),
            verify_hint: Some(hint),
        },
    );
    let crawlers = outcome.crawlers();
    let csp = report_csp(&html);
    let json = serde_json::to_vec(&outcome.report).unwrap_or_default();
    let size = html.len()
        + json.len()
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
        json: axum::body::Bytes::from(json),
        counts: LogCounts::of(&outcome.report),
        crawlers,
    })
}

/// The demo's logs, analysed at start (a log that cannot be read is told
/// and left out).
pub fn analyse_demo(on: &Analysis<'_>, threads: usize) -> Vec<LogView> {
    let mut out = Vec::new();
    for (name, bytes) in crate::demo::logs() {
        let source = Source::Reader((*name).to_owned(), Box::new(*bytes));
        match analyse(on, name, source, false, threads) {
            Ok(v) => out.push(v),
            Err(e) => tracing::warn!("demo log {name}: {e}"),
        }
    }
    out
}
