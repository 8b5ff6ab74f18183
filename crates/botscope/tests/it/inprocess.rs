//! The library's `run`, called in-process as another front end would:
//! arguments parsed by the same clap types, settings given (no user
//! registry, no DNS cache), the named exit statuses returned.

use botscope::cli::Cli;
use botscope::{ExitStatus, Settings};
use clap::Parser;

fn run(args: &[&str]) -> anyhow::Result<ExitStatus> {
    let cli = Cli::try_parse_from(std::iter::once("botscope").chain(args.iter().copied()))
        .expect("arguments");
    let settings = Settings {
        user_registry: None,
        dns_cache: None,
        data_dir: None,
        threads: 2,
        terminal: false,
        leftovers: Default::default(),
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(botscope::run(cli, &settings))
}

#[test]
fn statuses_by_name() {
    let root = crate::root();
    let lint = crate::tmp("inproc-lint.txt", b"Disallow: /x\n");
    assert_eq!(
        run(&["robots", "lint", crate::arg(&lint)]).ok(),
        Some(ExitStatus::Negative)
    );
    let ua = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
    assert_eq!(
        run(&[
            "verify",
            "66.249.66.1",
            "--ua",
            ua,
            "--offline",
            "--format",
            "json"
        ])
        .ok(),
        Some(ExitStatus::Success)
    );
    assert_eq!(
        run(&["verify", "192.0.2.1", "--ua", "curl/8", "--offline"]).ok(),
        Some(ExitStatus::Unknown)
    );
    let log = root.join("examples/logs/pypi_apachelogs-0.6.1_vhost_combined.log");
    let out = crate::scratch("inproc").join("report.json");
    assert_eq!(
        run(&[
            "logs",
            "analyze",
            crate::arg(&log),
            "--format",
            "json",
            "--out",
            crate::arg(&out)
        ])
        .ok(),
        Some(ExitStatus::Success)
    );
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&out).expect("report")).expect("json");
    assert_eq!(report["lines"]["total"], 7);
    let e = run(&["bots", "show", "NoSuchBot"]).expect_err("unknown bot");
    assert!(e.to_string().contains("no bot named"), "{e}");
    assert_eq!(ExitStatus::Damaged.code(), ExitStatus::Unverifiable.code());
}
