//! The pipeline in-process, as the web server and the command call it.

#![allow(clippy::unwrap_used)]

use std::collections::HashMap;
use std::io::Write;
use std::sync::Mutex;

use botscope_botid::Registry;
use botscope_logs::{Job, NoProgress, Progress, RobotsTxt, Settings, Source, Warning};

fn elastic() -> Vec<u8> {
    std::fs::read(botscope_testkit::root().join("examples/logs/elastic_examples_apache_logs.log"))
        .expect("the shipped log")
}

fn settings(threads: usize) -> Settings {
    Settings {
        format: None,
        window: Default::default(),
        threads,
        max_clients: botscope_accesslog::MAX_CLIENTS,
        keep_threads: false,
    }
}

/// `text` read as one input named `name`, on one thread, and its report.
fn analysed(job: &Job<'_>, name: &str, text: String) -> botscope_accesslog::Report {
    let source = Source::Reader(
        name.into(),
        Box::new(std::io::Cursor::new(text.into_bytes())),
    );
    let read = job
        .read(vec![source], &settings(1), &NoProgress)
        .expect("read");
    job.finish(read, &HashMap::new(), &botscope_botid::NoOwners, false)
        .report
}

fn report(job: &Job<'_>, log: Vec<u8>, threads: usize) -> String {
    let source = Source::Reader("elastic.log".into(), Box::new(std::io::Cursor::new(log)));
    let read = job
        .read(vec![source], &settings(threads), &NoProgress)
        .expect("read");
    let o = job.finish(read, &HashMap::new(), &botscope_botid::NoOwners, false);
    botscope_logs::render::json(&o.report)
}

#[test]
fn the_thread_count_does_not_change_the_report() {
    let registry = Registry::bundled();
    let job = Job::new(&registry, RobotsTxt::default(), 2).expect("job");
    let one = report(&job, elastic(), 1);
    assert!(one.contains("\"Googlebot\""));
    for threads in [2, 3] {
        assert_eq!(report(&job, elastic(), threads), one, "{threads} threads");
    }
}

/// Worker threads kept from one read to the next (as the web server
/// keeps them) fold as threads of the read's own, read after read and
/// two reads at once (each holds its own set).
#[test]
fn kept_worker_threads_fold_as_threads_of_their_own() {
    let registry = Registry::bundled();
    let job = Job::new(&registry, RobotsTxt::default(), 2).expect("job");
    let fresh = report(&job, elastic(), 2);
    let kept = |threads: usize| {
        let source = Source::Reader(
            "elastic.log".into(),
            Box::new(std::io::Cursor::new(elastic())),
        );
        let settings = Settings {
            keep_threads: true,
            ..settings(threads)
        };
        let read = job
            .read(vec![source], &settings, &NoProgress)
            .expect("read");
        let o = job.finish(read, &HashMap::new(), &botscope_botid::NoOwners, false);
        botscope_logs::render::json(&o.report)
    };
    for round in 0..3 {
        assert_eq!(kept(2), fresh, "read {round}");
    }
    assert_eq!(
        kept(1),
        report(&job, elastic(), 1),
        "a kept set larger than asked"
    );
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(|| kept(2));
        let b = s.spawn(|| kept(2));
        (a.join().unwrap(), b.join().unwrap())
    });
    assert_eq!((a.as_str(), b.as_str()), (fresh.as_str(), fresh.as_str()));
}

/// The threads share a log's clients out by address; a log one client
/// dominates goes to them chunk by chunk instead; a JSON input (no address
/// without parsing) chunk by chunk too; an address written two ways lands
/// on two threads and is merged. None of it changes the report.
#[test]
fn sharing_clients_out_does_not_change_the_report() {
    let registry = Registry::bundled();
    let job = Job::new(&registry, RobotsTxt::default(), 2).expect("job");
    let mut busy = Vec::new();
    botscope_testkit::synthlog::write_many_clients(&mut busy, 30_000, 7).expect("log");
    // Then a stretch that one client dominates, some of its lines with
    // its address written another way.
    let line = |ip: &str, i: u32| {
        format!(
            "{ip} - - [17/May/2015:10:{:02}:{:02} +0000] \"GET /page/{i} HTTP/1.1\" 200 512 \"-\" \"Mozilla/5.0 (X11; Linux x86_64) Firefox/120.0\"\n",
            (i / 60) % 60,
            i % 60
        )
    };
    for i in 0..20_000u32 {
        let ip = match i % 10 {
            0 => format!("203.0.113.{}", i % 200),
            1 => "2001:db8:0:0::7".to_owned(),
            _ => "2001:db8::7".to_owned(),
        };
        busy.extend_from_slice(line(&ip, i).as_bytes());
    }
    let json: Vec<u8> = (0..5_000u32)
        .flat_map(|i| {
            format!(
                "{{\"remote_addr\":\"192.0.2.{}\",\"time_iso8601\":\"2015-05-17T11:00:{:02}+00:00\",\"request\":\"GET /j/{i} HTTP/1.1\",\"status\":200,\"body_bytes_sent\":9,\"http_user_agent\":\"curl/8.{}\"}}\n",
                i % 7,
                i % 60,
                i % 3
            )
            .into_bytes()
        })
        .collect();
    let run = |threads: usize| {
        let sources = vec![
            Source::Reader(
                "busy.log".into(),
                Box::new(std::io::Cursor::new(busy.clone())),
            ),
            Source::Reader(
                "app.json".into(),
                Box::new(std::io::Cursor::new(json.clone())),
            ),
        ];
        let read = job
            .read(sources, &settings(threads), &NoProgress)
            .expect("read");
        let o = job.finish(read, &HashMap::new(), &botscope_botid::NoOwners, false);
        let mut v: serde_json::Value =
            serde_json::from_str(&botscope_logs::render::json(&o.report)).expect("json");
        // Which of equally requested paths a bounded top-path table keeps
        // depends on how lines were shared out.
        fn drop_paths(v: &mut serde_json::Value) {
            if let Some(o) = v.as_object_mut() {
                o.remove("top_paths");
                o.remove("not_found");
                o.values_mut().for_each(drop_paths);
            }
        }
        drop_paths(&mut v);
        (o.report.lines.parsed, o.report.lines.malformed, v)
    };
    let one = run(1);
    assert_eq!(one.0, 55_000, "every line once");
    assert_eq!(one.1, 0);
    for threads in [2, 3] {
        assert_eq!(run(threads), one, "{threads} threads");
    }
}

/// Collects what the pipeline reports.
#[derive(Default)]
struct Seen {
    bytes: Mutex<u64>,
    warnings: Mutex<Vec<Warning>>,
}

impl Progress for Seen {
    fn read(&self, n: u64) {
        *self.bytes.lock().expect("lock") += n;
    }
    fn warn(&self, w: &Warning) {
        self.warnings.lock().expect("lock").push(w.clone());
    }
}

#[test]
fn warnings_and_progress_come_back_not_printed() {
    let registry = Registry::bundled();
    let job = Job::new(&registry, RobotsTxt::default(), 2).expect("job");
    // Not a log at all, then a gzip cut in half.
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&elastic()).expect("gz");
    let gz = gz.finish().expect("gz");
    let cut = gz[..gz.len() / 2].to_vec();
    let sources = vec![
        Source::Reader("notes.txt".into(), Box::new(&b"shopping list\neggs\n"[..])),
        Source::Reader("cut.gz".into(), Box::new(std::io::Cursor::new(cut.clone()))),
    ];
    let seen = Seen::default();
    let read = job.read(sources, &settings(2), &seen).expect("read");
    assert!(read.damaged());
    assert_eq!(
        *seen.bytes.lock().expect("lock"),
        19 + cut.len() as u64,
        "raw bytes are reported"
    );
    let warned = seen.warnings.lock().expect("lock").clone();
    assert_eq!(warned, read.warnings);
    assert!(matches!(&warned[0], Warning::FormatGuessed { input } if input == "notes.txt"));
    assert!(matches!(&warned[1], Warning::InputDamaged { input, .. } if input == "cut.gz"));
    let o = job.finish(read, &HashMap::new(), &botscope_botid::NoOwners, false);
    assert!(o.damaged);
    assert!(o.report.lines.parsed > 1000, "what came before the damage");
    // The two lines of notes, and the last line of the cut file.
    assert!(o.report.lines.malformed >= 2, "{:?}", o.report.malformed);
}

#[test]
fn a_missing_file_is_an_error_before_any_work() {
    let registry = Registry::bundled();
    let job = Job::new(&registry, RobotsTxt::default(), 2).expect("job");
    let sources = vec![
        Source::Reader("ok".into(), Box::new(&b""[..])),
        Source::File("no/such/file.log".into()),
    ];
    let e = job
        .read(sources, &settings(1), &NoProgress)
        .expect_err("missing");
    assert_eq!(e.to_string(), "failed to open no/such/file.log");
    assert!(std::error::Error::source(&e).is_some(), "the cause is kept");
}

/// Key directories from memory: one agent's keys, every other agent's
/// fetch fails; each agent is asked once.
struct Keys {
    agent: String,
    dir: botscope_httpsig::Directory,
    asked: Mutex<Vec<String>>,
}

impl botscope_logs::Directories for Keys {
    fn fetch(&self, agent: &str) -> Result<botscope_httpsig::Directory, String> {
        self.asked.lock().expect("lock").push(agent.to_owned());
        if agent == self.agent {
            Ok(self.dir.clone())
        } else {
            Err("status 404".into())
        }
    }
}

/// An nginx log line of a request, its signature headers escaped as nginx
/// writes them (`"` as `\x22`).
fn nginx_line(
    ip: &str,
    t: i64,
    path: &str,
    ua: &str,
    host: &str,
    sig: &[(String, String)],
) -> String {
    let time = jiff::Timestamp::from_second(t)
        .expect("time")
        .strftime("%d/%b/%Y:%H:%M:%S +0000");
    let h = |name: &str| {
        sig.iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map_or("-".to_owned(), |(_, v)| v.replace('"', "\\x22"))
    };
    format!(
        "{ip} - - [{time}] \"GET {path} HTTP/1.1\" 200 512 \"-\" \"{ua}\" \"{host}\" \"{}\" \"{}\" \"{}\"\n",
        h("Signature-Input"),
        h("Signature"),
        h("Signature-Agent")
    )
}

#[test]
fn signed_requests_are_checked_at_their_time_with_their_agents_keys() {
    use botscope_httpsig::{Directory, Request, SignSpec, SigningKey, sign_request};
    let registry = Registry::bundled();
    let robot = registry
        .signed_by("https://chatgpt.com")
        .expect("the bundled registry names ChatGPT's signature agent")
        .name
        .clone();
    let key = SigningKey::generate().expect("key");
    let keys = Keys {
        agent: "https://chatgpt.com".into(),
        dir: Directory {
            keys: vec![(key.keyid(), key.public())],
            ..Directory::default()
        },
        asked: Mutex::new(Vec::new()),
    };
    // Long ago: the log's own time decides, not the clock's.
    let t = 1_700_000_000;
    let sign = |agent: &str, path: &str, created: i64| {
        let req = Request::new("GET", "https", "shop.example", path, Vec::new());
        let spec = SignSpec::new(Some(agent), created, 300, Some(format!("n{created}{path}")));
        sign_request(&req, &key, &spec).expect("sign").headers()
    };
    let chrome = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";
    let good = sign("https://chatgpt.com", "/a", t - 5);
    let mut log = String::new();
    for k in 0..3 {
        log.push_str(&nginx_line(
            "192.0.2.7",
            t + k,
            "/a",
            chrome,
            "shop.example",
            &good,
        ));
    }
    // The same signature sent to another host (it covers the authority),
    // an expired one, one from an agent whose directory cannot be had.
    log.push_str(&nginx_line(
        "192.0.2.7",
        t + 5,
        "/a",
        chrome,
        "other.example",
        &good,
    ));
    log.push_str(&nginx_line(
        "192.0.2.7",
        t + 10,
        "/c",
        chrome,
        "shop.example",
        &sign("https://chatgpt.com", "/c", t - 1000),
    ));
    log.push_str(&nginx_line(
        "198.51.100.3",
        t + 11,
        "/d",
        "Made-up/1.0",
        "shop.example",
        &sign("https://made-up.example", "/d", t + 11),
    ));
    // An unsigned robot.
    log.push_str(&nginx_line(
        "66.249.66.1",
        t + 12,
        "/",
        "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
        "shop.example",
        &[],
    ));
    let format = r#"$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" "$host" "$http_signature_input" "$http_signature" "$http_signature_agent""#;
    let settings = Settings {
        format: Some(botscope_accesslog::LogFormat::nginx(format).expect("format")),
        ..settings(2)
    };
    let job = Job::new(&registry, RobotsTxt::default(), 2).expect("job");
    let offline = log.clone();
    let source = Source::Reader("signed.log".into(), Box::new(std::io::Cursor::new(log)));
    let read = job
        .read_signed(vec![source], &settings, &NoProgress, &keys)
        .expect("read");
    let o = job.finish(read, &HashMap::new(), &botscope_botid::NoOwners, true);
    assert_eq!(o.report.lines.malformed, 0, "{:?}", o.report.malformed);
    let mut asked = keys.asked.lock().expect("lock").clone();
    asked.sort();
    assert_eq!(
        asked,
        ["https://chatgpt.com", "https://made-up.example"],
        "each agent's directory is fetched once"
    );
    let by = |a: &str| {
        o.report
            .signature_agents
            .iter()
            .find(|x| x.agent == a)
            .unwrap_or_else(|| panic!("{a} in {:?}", o.report.signature_agents))
    };
    let gpt = by("https://chatgpt.com");
    assert_eq!(gpt.robot.as_deref(), Some(robot.as_str()));
    assert_eq!(
        (gpt.counts.signed, gpt.counts.verified, gpt.counts.invalid),
        (5, 3, 2)
    );
    assert_eq!(
        gpt.reasons.get("bad-signature"),
        Some(&1),
        "{:?}",
        gpt.reasons
    );
    assert_eq!(gpt.reasons.get("expired"), Some(&1), "{:?}", gpt.reasons);
    let other = by("https://made-up.example");
    assert_eq!(
        other.robot, None,
        "an agent no entry names is nobody's robot"
    );
    assert_eq!((other.counts.signed, other.unverified), (1, 1));
    assert!(
        other.reasons.keys().any(|r| r.contains("status 404")),
        "{:?}",
        other.reasons
    );
    assert_eq!(
        o.report.signature_agents.len(),
        2,
        "unsigned requests name no agent"
    );
    // A browser's User-Agent, signed by ChatGPT's agent: verified by its
    // signature, so its address is on the list of robots that are what
    // they say.
    let ip: std::net::IpAddr = "192.0.2.7".parse().expect("ip");
    assert!(o.lists.all_ok.contains(&ip), "{:?}", o.lists.all_ok);
    assert!(!o.lists.suspect.contains(&ip));
    assert!(o.report.robots["Googlebot"].signatures.is_none());
    let text = botscope_logs::render::text(&o.report);
    assert!(
        text.contains("signed requests by signature agent"),
        "{text}"
    );
    let html = botscope_logs::render::html(&o.report);
    assert!(html.contains("id=\"signatures\""));
    // Offline, the same requests are counted; only what needs no key (the
    // expired one) is decided.
    let source = Source::Reader("signed.log".into(), Box::new(std::io::Cursor::new(offline)));
    let read = job
        .read(vec![source], &settings, &NoProgress)
        .expect("read");
    let o = job.finish(read, &HashMap::new(), &botscope_botid::NoOwners, true);
    let gpt = &o.report.signature_agents[0];
    assert_eq!(gpt.agent, "https://chatgpt.com");
    assert_eq!(
        (gpt.counts.signed, gpt.counts.verified, gpt.counts.invalid),
        (5, 0, 1)
    );
    assert!(!o.lists.all_ok.contains(&ip), "no evidence offline");
}

/// A log whose requests span decades: the HTML chart draws at most
/// `MAX_BARS` bars and a hundred day marks, so the page's size does not
/// grow with the span; lines dated before 1990 or after now are
/// malformed (`implausible-time`), counted and not charted.
#[test]
fn a_report_is_bounded_by_what_the_log_holds_not_by_its_dates() {
    let registry = Registry::bundled();
    let job = Job::new(&registry, RobotsTxt::default(), 1).expect("job");
    let mut log = String::new();
    // One request a year from 1991 to 2025, and two a clock got wrong.
    for year in 1991..=2025 {
        log.push_str(&format!(
            "192.0.2.{} - - [01/Jun/{year}:12:00:00 +0000] \"GET /{year} HTTP/1.1\" 200 5 \"-\" \"Mozilla/5.0 (X11; Linux x86_64)\"\n",
            year % 250
        ));
    }
    log.push_str(
        "192.0.2.1 - - [01/Jan/1970:00:00:00 +0000] \"GET / HTTP/1.1\" 200 5 \"-\" \"x\"\n",
    );
    log.push_str(
        "192.0.2.1 - - [31/Dec/9999:23:59:59 +0000] \"GET / HTTP/1.1\" 200 5 \"-\" \"x\"\n",
    );
    let report = analysed(&job, "decades.log", log);
    let json: serde_json::Value =
        serde_json::from_str(&botscope_logs::render::json(&report)).unwrap();
    assert_eq!(json["lines"]["malformed"], 2, "{}", json["lines"]);
    assert_eq!(json["site"]["requests"], 35);
    let html = botscope_logs::render::html(&report);
    let at = html
        .find("<svg class=\"hourly wide\"")
        .expect("the hourly chart");
    let chart = &html[at..at + html[at..].find("</svg>").unwrap()];
    let bars = chart.matches("<rect").count();
    let marks = chart.matches("<line").count();
    assert!(bars <= 40, "{bars} bars");
    assert!(marks <= 120, "{marks} lines");
    assert!(html.contains("each bar is"), "the bar's span said");
    assert!(html.len() < 300_000, "{} bytes", html.len());
    let span = 35 * 8_766;
    assert!(botscope_logs::render::hours_per_bar(span) * botscope_logs::render::MAX_BARS >= span);
    assert_eq!(botscope_logs::render::hours_per_bar(500), 1);
}

/// Robots named by their product and typed by what they did (cases from
/// real logs): a subscriber count, an address and a sentence are not
/// names; a client whose requests probe for secrets and exploits is a
/// scanner whatever its User-Agent says; a phone's browser is no robot;
/// the registry names Google's favicon fetcher.
#[test]
fn robots_are_named_by_their_product_and_typed_by_what_they_did() {
    let registry = Registry::bundled();
    let job = Job::new(&registry, RobotsTxt::default(), 1).expect("job");
    let line = |ip: &str, path: &str, ua: &str| {
        format!(
            "{ip} - - [10/Oct/2025:13:55:36 +0000] \"GET {path} HTTP/1.1\" 404 12 \"-\" \"{ua}\"\n"
        )
    };
    let mut log = String::new();
    log.push_str(&line("192.0.2.1", "/.env", "Mozilla/5.0 Keydrop"));
    for p in [
        "/cgi-bin/.%2e/.%2e/.%2e/bin/sh",
        "/cgi-bin/.%2e/%2e%2e/bin/sh",
    ] {
        log.push_str(&line("192.0.2.2", p, "Custom-AsyncHttpClient"));
    }
    for i in 0..3 {
        log.push_str(&line(
            "192.0.2.3",
            &format!("/feed/{i}"),
            "Feedbin - 1 subscribers",
        ));
        log.push_str(&line(
            "192.0.2.4",
            &format!("/blog/{i}"),
            "MAXX_MAUI WAP Browser",
        ));
    }
    log.push_str(&line(
        "192.0.2.5",
        "/favicon.ico",
        "Mozilla/5.0 (Windows NT 6.1; rv:6.0) Gecko/20110814 Firefox/6.0 Google favicon",
    ));
    log.push_str(&line("192.0.2.6", "/", "Embedly +support@embed.ly"));
    let report = analysed(&job, "names.log", log);
    let json: serde_json::Value =
        serde_json::from_str(&botscope_logs::render::json(&report)).unwrap();
    let robots = json["robots"].as_object().unwrap();
    let mut names: Vec<&str> = robots.keys().map(String::as_str).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "Custom-AsyncHttpClient",
            "Embedly",
            "Feedbin",
            "Google Favicon",
            "Keydrop"
        ],
        "{}",
        json["robots"]
    );
    assert_eq!(robots["Keydrop"]["client_type"], "scanner");
    assert_eq!(robots["Custom-AsyncHttpClient"]["client_type"], "scanner");
    assert_eq!(robots["Feedbin"]["client_type"], "feed-reader");
    assert_eq!(robots["Google Favicon"]["registered"], true);
}

/// The held-out half of the elastic log (lines 5,001–10,000; the naming
/// rules were written on the first half): every robot row's name, as
/// labelled by hand (docs/log-analysis.md gives the figures).
#[test]
fn the_held_out_half_names_its_robots_as_labelled() {
    let registry = Registry::bundled();
    let job = Job::new(&registry, RobotsTxt::default(), 1).expect("job");
    let log = elastic();
    let text = String::from_utf8_lossy(&log);
    let held: String = text.lines().skip(5_000).map(|l| format!("{l}\n")).collect();
    let report = analysed(&job, "held-out.log", held);
    let json: serde_json::Value =
        serde_json::from_str(&botscope_logs::render::json(&report)).unwrap();
    let mut names: Vec<&str> = json["robots"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    names.sort_by_key(|n| n.to_lowercase());
    let labelled = [
        "360Spider",
        "AhrefsBot",
        "AppEngine-Google",
        "Baiduspider",
        "bingbot",
        "BingPreview",
        "binlar",
        "changedetection.com",
        "Chef Client",
        "curl",
        "Digg Feed Fetcher",
        "distilator",
        "docs.google.com",
        "EasouSpider",
        "Embedly",
        "Exabot",
        "Ezooms",
        "facebookexternalhit",
        "Feedbin",
        "FeedBurner",
        "Feedly",
        "fetch libfetch",
        "FlipboardProxy",
        "Genieo",
        "Google Favicon",
        "Google-User-Triggered-Fetchers",
        "Googlebot",
        "ia_archiver",
        "Indy Library",
        "LiveJournal.com",
        "LWP::Simple",
        "magpie-crawler",
        "Mail.RU_Bot",
        "Microsoft Office Protocol Discovery",
        "MJ12bot",
        "Mozilla/4.0",
        "Mozilla/4.0 (compatible; MSIE 5.0; Windows NT; DigExt; DTS Agent",
        "Mozilla/4.0 (compatible;)",
        "Mozilla/5.0",
        "Mozilla/5.0 (Windows NT 6.1; WOW64; rv:14.0) Gecko/20100101 Firefox/14.0.1",
        "PhantomJS",
        "portscout",
        "psbot",
        "python-requests",
        "Python-urllib",
        "Reeder",
        "Robosourcer",
        "Ruby",
        "SimplePie",
        "SiteExplorer",
        "Slurp",
        "Sogou",
        "spinn3r.com",
        "theoldreader.com",
        "Tiny Tiny RSS",
        "Twitterbot",
        "UniversalFeedParser",
        "VoilaBot",
        "Wget",
        "Xenu Link Sleuth",
        "YandexBot",
        "YandexDirect",
    ];
    assert_eq!(names, labelled);
}
