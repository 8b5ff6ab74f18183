//! The pipeline in-process, as the web server and the command call it.

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
    }
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
