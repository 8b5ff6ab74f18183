//! `botscope logs`: access logs in, a report on robots out (and the
//! web-server lists). The analysis is botscope-accesslog's; this module
//! reads the inputs, runs the parsing threads, joins the registry, the
//! robots.txt engine and DNS to it, and writes the report.

mod html;
mod input;
mod render;

use std::io::{IsTerminal, Write};
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, mpsc};

use anyhow::{Context, Result, bail};
use botscope_accesslog::{
    Agent, Analysis, Analyzer, Check, Checked, Class, Identify, Input, LogFormat, Malformed,
    Partial, Policy, Report, RobotsTxtVersion, Window, format_rfc3339, parse_iso_time,
};
use botscope_botid::{Category, Lists, Registry, UaClassifier, UaInfo, Verdict, Verification};
use botscope_robotstxt::{Matcher, Semantics, path_of, product_token};

use crate::cli::{AnalyzeArgs, ExportListsArgs, LogInputArgs, ReportFormat};
use crate::exit::Outcome;
use crate::verify::Evidence;

/// Lines examined to detect the log format.
const DETECT_LINES: usize = 50;

/// Words that mark an uptime or performance monitor's User-Agent.
const MONITOR_WORDS: &[&str] = &[
    "uptime",
    "monitor",
    "pingdom",
    "statuscake",
    "site24x7",
    "nagios",
    "check_http",
    "zabbix",
    "hetrixtools",
    "freshping",
    "updown.io",
    "newrelicpinger",
    "datadog",
    "synthetic",
];

/// The registry's view of User-Agents.
struct RegistryIdentify<'r> {
    registry: &'r Registry,
    ua: &'r UaClassifier,
}

fn is_monitor_ua(ua: &str) -> bool {
    let lower = ua.to_ascii_lowercase();
    MONITOR_WORDS.iter().any(|w| lower.contains(w))
}

impl Identify for RegistryIdentify<'_> {
    fn identify(&self, user_agent: Option<&str>) -> Agent {
        let Some(ua) = user_agent else {
            return Agent::default();
        };
        let info = self.ua.classify(ua);
        if let Some(bot) = info
            .claimed_bot
            .as_deref()
            .and_then(|n| self.registry.get(n))
        {
            return Agent {
                robot: Some(bot.name.clone()),
                registered: true,
                category: bot.category.map(|c| c.as_str().to_owned()),
                monitor: bot.category == Some(Category::Monitoring),
                reason: Some(format!("the User-Agent names {}", bot.name)),
                token: bot.tokens().first().map(|t| (*t).to_owned()),
            };
        }
        if !info.is_bot {
            return Agent::default();
        }
        let name = robot_name(ua)
            .or_else(|| info.family.clone().filter(|f| f != "Other"))
            .unwrap_or_else(|| ua.chars().take(64).collect());
        Agent {
            token: Some(product_token(ua).to_owned()),
            robot: Some(name),
            registered: false,
            category: None,
            monitor: is_monitor_ua(ua),
            reason: Some(
                info.reason
                    .map(|r| format!("the User-Agent is a robot's ({r})"))
                    .unwrap_or_else(|| "the User-Agent is a robot's".into()),
            ),
        }
    }
}

/// A display name for an unregistered robot: the leading product of a
/// User-Agent that does not pose as a browser (`Chef Client/10.18` →
/// `Chef Client`), else its robot product token with the digits RFC 9309
/// tokens leave out (`MJ12bot/v1.4` → `MJ12bot`).
fn robot_name(ua: &str) -> Option<String> {
    let ua = ua.trim();
    if !ua.starts_with("Mozilla/") {
        let end = ua.find(['/', '(', ';']).unwrap_or(ua.len());
        let lead = ua[..end].trim().trim_end_matches(['-', ':', ',']);
        if !lead.is_empty() && lead.len() <= 40 {
            return Some(lead.to_owned());
        }
    }
    let token = product_token(ua);
    if token.is_empty() || token.len() == ua.len() && ua.len() > 40 {
        return None;
    }
    // Where the token sits in `ua` (it is a slice of it).
    let start = (token.as_ptr() as usize).checked_sub(ua.as_ptr() as usize)?;
    let rest = ua.get(start..)?;
    let len = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
        .unwrap_or(rest.len());
    Some(rest[..len].trim_end_matches('.').to_owned())
}

/// The site's robots.txt versions, each in force from its date.
pub struct Versions {
    v: Vec<(Option<i64>, Matcher)>,
}

impl Versions {
    fn at(&self, t: i64) -> Option<&Matcher> {
        self.v
            .iter()
            .rev()
            .find(|(from, _)| from.is_none_or(|f| f <= t))
            .map(|(_, m)| m)
    }
}

impl Policy for Versions {
    fn disallowed(&self, token: Option<&str>, target: &str, time: i64) -> Option<bool> {
        let m = self.at(time)?;
        let path = path_of(target.as_bytes());
        Some(!m.check_path(token.unwrap_or("*"), &path).allowed)
    }

    fn crawl_delay(&self, token: Option<&str>, time: i64) -> Option<f64> {
        self.at(time)?.crawl_delay(token.unwrap_or("*"))
    }
}

/// `YYYY-MM-DD` or RFC 3339 → seconds.
fn parse_when(s: &str) -> Option<i64> {
    let s = s.trim();
    if s.len() == 10 {
        parse_iso_time(format!("{s}T00:00:00Z").as_bytes())
    } else {
        parse_iso_time(s.as_bytes())
    }
}

/// Reads `--robots [DATE=]FILE` values.
fn load_robots(
    specs: &[String],
    semantics: Semantics,
) -> Result<(Versions, Vec<RobotsTxtVersion>)> {
    let mut v: Vec<(Option<i64>, Matcher, RobotsTxtVersion)> = Vec::new();
    for spec in specs {
        let (from, file) = match spec.split_once('=') {
            Some((d, f)) if parse_when(d).is_some() => (parse_when(d), f),
            Some((d, _)) if !Path::new(spec).exists() => {
                bail!("--robots {spec:?}: {d:?} is not a date (YYYY-MM-DD or RFC 3339)")
            }
            _ => (None, spec.as_str()),
        };
        let (body, _) = crate::robots::read_limited(
            Path::new(file),
            Some(botscope_robotstxt::DEFAULT_PARSE_CAP),
        )?;
        let m = Matcher::compile(
            &body,
            semantics,
            &botscope_robotstxt::ParseOptions::default(),
        );
        v.push((
            from,
            m,
            RobotsTxtVersion {
                file: file.to_owned(),
                from: from.map(format_rfc3339),
            },
        ));
    }
    v.sort_by_key(|x| x.0);
    let undated = v.iter().filter(|x| x.0.is_none()).count();
    if undated > 1 {
        bail!("--robots: give dates (DATE=FILE) when there are several versions");
    }
    let meta = v.iter().map(|x| x.2.clone()).collect();
    Ok((
        Versions {
            v: v.into_iter().map(|(f, m, _)| (f, m)).collect(),
        },
        meta,
    ))
}

fn window(a: &LogInputArgs) -> Result<Window> {
    let get = |v: &Option<String>, flag: &str| -> Result<Option<i64>> {
        v.as_deref()
            .map(|s| {
                parse_when(s).with_context(|| {
                    format!("--{flag} {s:?} is not a date (YYYY-MM-DD or RFC 3339)")
                })
            })
            .transpose()
    };
    Ok(Window {
        since: get(&a.since, "since")?,
        until: get(&a.until, "until")?,
    })
}

/// Everything one run produced.
struct Outcomes {
    report: Report,
    lists: Lists,
    damaged: bool,
}

/// A progress bar on a terminal, nothing otherwise.
fn progress(files: &[PathBuf], disabled: bool) -> Option<indicatif::ProgressBar> {
    if disabled || !std::io::stderr().is_terminal() {
        return None;
    }
    let total: u64 = files
        .iter()
        .filter(|f| f.as_path() != Path::new("-"))
        .filter_map(|f| std::fs::metadata(f).ok())
        .map(|m| m.len())
        .sum();
    let pb = if total > 0 {
        indicatif::ProgressBar::new(total)
    } else {
        indicatif::ProgressBar::new_spinner()
    };
    let style = indicatif::ProgressStyle::with_template(
        "{spinner} [{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} {bytes_per_sec} ETA {eta}",
    )
    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
    pb.set_style(style);
    pb.set_draw_target(indicatif::ProgressDrawTarget::stderr());
    Some(pb)
}

/// Reads, parses and analyses every input on `threads` threads.
fn analyze_inputs(
    a: &LogInputArgs,
    identify: &dyn Identify,
    policy: &dyn Policy,
) -> Result<(Analysis, Vec<Input>)> {
    let files: Vec<PathBuf> = if a.files.is_empty() {
        vec![PathBuf::from("-")]
    } else {
        a.files.clone()
    };
    let fixed = a
        .log_format
        .as_deref()
        .map(|s| LogFormat::from_spec(s).map_err(|e| anyhow::anyhow!("--log-format: {e}")))
        .transpose()?;
    let window = window(a)?;
    // Open everything first: a missing file is an error before any work.
    let pb = progress(&files, a.no_progress);
    let mut readers = Vec::new();
    for f in &files {
        let pb = pb.clone();
        let r = input::open(f, move |n| {
            if let Some(pb) = &pb {
                pb.inc(n);
            }
        })
        .with_context(|| format!("failed to open {}", f.display()))?;
        readers.push(r);
    }
    let threads = a
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    let (tx, rx) = mpsc::sync_channel::<(Arc<LogFormat>, u32, input::Chunk)>(threads * 2);
    let rx = Mutex::new(rx);
    // Chunk buffers go back to the reader once parsed: a handful are
    // allocated, whatever the input's size.
    let (back_tx, back_rx) = mpsc::channel::<Vec<u8>>();
    let mut inputs: Vec<Input> = Vec::new();
    let partials: Vec<Partial> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                let rx = &rx;
                let back = back_tx.clone();
                s.spawn(move || {
                    let mut an = Analyzer::new(identify, policy, window);
                    loop {
                        let next = rx.lock().map(|r| r.recv());
                        let Ok(Ok((format, seq, chunk))) = next else {
                            break;
                        };
                        an.begin_chunk(seq);
                        for (n, line) in input::lines(&chunk) {
                            match line {
                                None => an.malformed(Malformed::TooLong, n),
                                Some(l) => match format.parse_line(l) {
                                    Ok(r) => an.record(&r, n),
                                    Err(Malformed::Empty) => {}
                                    Err(reason) => an.malformed(reason, n),
                                },
                            }
                        }
                        let mut data = chunk.data;
                        data.clear();
                        let _ = back.send(data);
                    }
                    an.into_partial()
                })
            })
            .collect();
        // Chunk sequence numbers, across inputs.
        let mut seq = 0u32;
        for (f, r) in files.iter().zip(readers) {
            let mut format: Option<Arc<LogFormat>> = fixed.clone().map(Arc::new);
            let mut warned = false;
            let fresh = || back_rx.try_recv().unwrap_or_else(|_| input::buffer());
            let stats = input::chunks(r, fresh, |chunk| {
                let fmt = format.get_or_insert_with(|| {
                    let sample: Vec<&[u8]> = input::lines(&chunk)
                        .filter_map(|(_, l)| l)
                        .take(DETECT_LINES)
                        .collect();
                    Arc::new(botscope_accesslog::detect(&sample).unwrap_or_else(|| {
                        warned = true;
                        LogFormat::preset("combined").unwrap_or_else(LogFormat::json)
                    }))
                });
                seq = (seq + 1) % u32::MAX;
                tx.send((fmt.clone(), seq, chunk)).is_ok()
            });
            if warned {
                eprintln!(
                    "botscope: warning: {}: no known log format fits the first lines; \
                     reading it as combined (give --log-format)",
                    f.display()
                );
            }
            inputs.push(Input {
                name: f.display().to_string(),
                bytes: stats.bytes,
                lines: stats.lines,
                error: stats.error,
            });
        }
        drop(tx);
        workers
            .into_iter()
            .map(|w| w.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    if let Some(pb) = pb {
        pb.finish_and_clear();
    }
    Ok((Partial::finish_all(partials), inputs))
}

/// Verdicts by client index.
type Checks = std::collections::HashMap<usize, Checked, foldhash::fast::RandomState>;

/// Verifies the clients that claim a registered robot (published addresses;
/// FCrDNS with --verify), and, when `lists`, prepares the export lists.
fn verify_clients(
    analysis: &Analysis,
    registry: &Registry,
    dns: Option<&mut dyn Evidence>,
    lists: bool,
) -> Result<(Checks, Lists)> {
    // What the verdict needs of a User-Agent (the claim), from the
    // classification the parsing threads already made.
    let infos: Vec<Option<UaInfo>> = analysis
        .agents
        .iter()
        .map(|(ua, agent)| {
            (agent.registered && ua.is_some()).then(|| UaInfo {
                is_bot: true,
                family: None,
                claimed_bot: agent.robot.clone(),
                reason: agent.reason.clone(),
            })
        })
        .collect();
    let mut want: Vec<IpAddr> = analysis
        .clients
        .iter()
        .filter_map(|c| {
            let info = infos[c.agent()].as_ref()?;
            crate::verify::needs_dns(registry, c.ip, info).then_some(c.ip)
        })
        .collect();
    want.sort_unstable();
    want.dedup();
    let evidence = match dns {
        Some(d) if !want.is_empty() => d.fcrdns(&want)?,
        _ => Default::default(),
    };
    let mut checks = Checks::default();
    let mut verdicts: Vec<Verification> = Vec::new();
    let mut scanners: Vec<IpAddr> = Vec::new();
    for (i, c) in analysis.clients.iter().enumerate() {
        let (ua, agent) = analysis.agent_of(c);
        if lists && analysis.classes[i] == Class::Scanner {
            scanners.push(c.ip);
        }
        let check = infos[c.agent()].as_ref().map(|info| {
            let v = botscope_botid::verify(registry, c.ip, ua, info, evidence.get(&c.ip));
            let check = match v.verdict {
                Verdict::Verified => Check::Verified,
                Verdict::Spoofed => Check::Spoofed,
                _ => Check::Unverifiable,
            };
            let reason = v.reason.clone();
            if lists {
                verdicts.push(v);
            }
            Checked { check, reason }
        });
        if lists && check.is_none() && c.robots_txt > 0 {
            // A robots.txt requester is a robot (ACAP 3.1) even with a
            // browser's User-Agent.
            let info = UaInfo {
                is_bot: true,
                claimed_bot: None,
                family: None,
                reason: agent.reason.clone(),
            };
            verdicts.push(botscope_botid::verify(registry, c.ip, ua, &info, None));
        }
        if let Some(k) = check {
            checks.insert(i, k);
        }
    }
    if !lists {
        return Ok((checks, Lists::default()));
    }
    let mut lists = Lists::from_verdicts(&verdicts);
    for ip in scanners {
        lists.all_ok.remove(&ip);
        lists.other.remove(&ip);
        for set in lists.per_bot.values_mut() {
            set.remove(&ip);
        }
        lists.suspect.insert(ip);
    }
    lists.per_bot.retain(|_, s| !s.is_empty());
    Ok((checks, lists))
}

/// Reads, analyses and verifies; `lists`: also prepare the export lists.
fn run(a: &LogInputArgs, lists: bool) -> Result<Outcomes> {
    let registry = crate::bots::load_registry(a.registry.as_ref())?;
    let classifier = crate::verify::classifier(&registry)?;
    let (policy, versions) = load_robots(&a.robots, a.semantics.into())?;
    let mut dns = if a.verify {
        Some(crate::verify::dns_evidence(&a.dns)?)
    } else {
        None
    };
    let identify = RegistryIdentify {
        registry: &registry,
        ua: &classifier,
    };
    let (mut analysis, inputs) = analyze_inputs(a, &identify, &policy)?;
    let (checks, lists) = verify_clients(
        &analysis,
        &registry,
        dns.as_mut().map(|d| d as &mut dyn Evidence),
        lists,
    )?;
    let mut report = botscope_accesslog::build(&mut analysis, &checks, &policy);
    // Half a million small allocations are not worth freeing one by one
    // just before the process ends.
    std::mem::forget(analysis);
    let damaged = inputs.iter().any(|i| i.error.is_some());
    for i in &inputs {
        if let Some(e) = &i.error {
            eprintln!(
                "botscope: warning: {}: {e}; the report covers the {} lines before it",
                i.name, i.lines
            );
        }
    }
    report.inputs = inputs;
    report.robots_txt = versions;
    Ok(Outcomes {
        report,
        lists,
        damaged,
    })
}

fn emit(out: Option<&Path>, content: &str) -> Result<()> {
    match out {
        Some(p) => crate::export::write_atomic(p, content),
        None => {
            let mut o = std::io::stdout().lock();
            o.write_all(content.as_bytes())?;
            o.flush()?;
            Ok(())
        }
    }
}

/// `logs analyze`.
pub fn analyze(a: &AnalyzeArgs) -> Result<Outcome> {
    let o = run(&a.input, a.export.is_some())?;
    let text = match a.format {
        ReportFormat::Json => {
            let mut s = serde_json::to_string_pretty(&o.report)?;
            s.push('\n');
            s
        }
        ReportFormat::Csv => render::csv(&o.report),
        ReportFormat::Text => render::text(&o.report),
        ReportFormat::Html => html::page(&o.report),
    };
    emit(a.out.as_deref(), &text)?;
    if let Some(dir) = &a.export {
        crate::export::write_dirs(dir, &o.lists)?;
        eprintln!("{}", lists_summary(dir, &o.lists));
    }
    Ok(if o.damaged {
        Outcome::Code(3)
    } else {
        Outcome::Ok
    })
}

fn lists_summary(dir: &Path, l: &Lists) -> String {
    format!(
        "{}: {} verified ({} bots), {} other, {} suspect",
        dir.display(),
        l.all_ok.len(),
        l.per_bot.len(),
        l.other.len(),
        l.suspect.len()
    )
}

/// `logs export-lists`.
pub fn export_lists(a: &ExportListsArgs) -> Result<Outcome> {
    let o = run(&a.input, true)?;
    crate::export::write_dirs(&a.out_dir, &o.lists)?;
    println!("{}", lists_summary(&a.out_dir, &o.lists));
    Ok(if o.damaged {
        Outcome::Code(3)
    } else {
        Outcome::Ok
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_pick_the_one_in_force() {
        let old = Matcher::new(b"User-agent: *\nDisallow: /old\n");
        let new = Matcher::new(b"User-agent: *\nDisallow: /new\nCrawl-delay: 5\n\nUser-agent: Googlebot\nDisallow: /g\n");
        let v = Versions {
            v: vec![(None, old), (Some(1000), new)],
        };
        assert_eq!(v.disallowed(None, "/old/x", 999), Some(true));
        assert_eq!(v.disallowed(None, "/old/x", 1000), Some(false));
        assert_eq!(v.disallowed(None, "/new", 1000), Some(true));
        assert_eq!(v.disallowed(Some("Googlebot"), "/new", 1000), Some(false));
        assert_eq!(v.disallowed(Some("Googlebot"), "/g?x", 2000), Some(true));
        assert_eq!(
            v.disallowed(Some("Googlebot"), "http://example.com/g", 2000),
            Some(true)
        );
        assert_eq!(v.crawl_delay(None, 1000), Some(5.0));
        assert_eq!(v.crawl_delay(None, 10), None);
        let dated = Versions {
            v: vec![(Some(1000), Matcher::new(b"User-agent: *\nDisallow: /\n"))],
        };
        assert_eq!(
            dated.disallowed(None, "/", 999),
            None,
            "nothing in force yet"
        );
    }

    #[test]
    fn robot_names() {
        for (ua, want) in [
            (
                "Chef Client/10.18.2 (ruby-1.9.3-p327; +http://opscode.com)",
                "Chef Client",
            ),
            ("Tiny Tiny RSS/1.11 (http://tt-rss.org/)", "Tiny Tiny RSS"),
            (
                "Mozilla/5.0 (compatible; MJ12bot/v1.4.4; http://www.majestic12.co.uk/bot.php?+)",
                "MJ12bot",
            ),
            ("Mozilla/5.0 zgrab/0.x", "zgrab"),
            ("python-requests/2.31.0", "python-requests"),
            ("curl/8.5.0", "curl"),
        ] {
            assert_eq!(robot_name(ua).as_deref(), Some(want), "{ua}");
        }
    }

    #[test]
    fn dates() {
        assert_eq!(parse_when("2015-05-17"), Some(1_431_820_800));
        assert_eq!(parse_when("2015-05-17T10:00:00Z"), Some(1_431_856_800));
        assert_eq!(parse_when("yesterday"), None);
    }
}
