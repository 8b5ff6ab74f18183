//! Google's own unit-test assertions, the robots.txt conformance suite, and
//! agreement with Google's reference parser on real files.

use botscope_robotstxt::{
    Matcher, ParseOptions, Semantics, escape_pattern, is_product_token, path_of,
};

use crate::{data, jsonl};

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

/// One vector: robots.txt body, agent, URL, expected verdict. Google's
/// library takes the agent as given, so the vectors run through
/// `check_path` with the agent unreduced where it is not a User-Agent
/// header (all of them here).
fn check(name: &str, body: &[u8], agent: &str, url: &str, want: bool) -> Option<String> {
    let m = Matcher::compile(body, Semantics::Google, &ParseOptions::unlimited());
    let got = m.is_allowed(agent, url);
    (got != want)
        .then(|| format!("{name}: agent {agent:?} url {url:?}: got allowed={got}, want {want}"))
}

fn run(file: &str) -> (usize, Vec<String>) {
    let vectors = jsonl(file);
    let mut failures = Vec::new();
    for v in &vectors {
        let body = match (v["robotstxt"].as_str(), v["robotstxt_hex"].as_str()) {
            (Some(s), _) => s.as_bytes().to_vec(),
            (None, Some(h)) => hex(h),
            _ => panic!("vector without body: {v}"),
        };
        let name = v["name"].as_str().unwrap_or("?");
        let agent = v["useragent"].as_str().expect("useragent");
        let url = v["url"].as_str().expect("url");
        let want = v["allowed"].as_bool().expect("allowed");
        failures.extend(check(name, &body, agent, url, want));
    }
    (vectors.len(), failures)
}

#[test]
fn google_unit_vectors_145() {
    let (n, failures) = run("google_vectors.jsonl");
    assert_eq!(n, 145);
    assert!(
        failures.is_empty(),
        "{} of {n} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn spec_conformance_vectors_400() {
    let (n, failures) = run("spec_test_vectors.jsonl");
    assert_eq!(n, 400);
    assert!(
        failures.is_empty(),
        "{} of {n} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn google_helper_vectors() {
    let vectors = jsonl("google_aux_vectors.jsonl");
    assert_eq!(vectors.len(), 34);
    for v in vectors {
        let s = |k: &str| v[k].as_str().unwrap_or_default().to_owned();
        match v["kind"].as_str() {
            Some("valid_user_agent") => {
                assert_eq!(
                    is_product_token(&s("useragent")),
                    v["expected"].as_bool().unwrap_or_default(),
                    "{v}"
                );
            }
            Some("path_params_query") => assert_eq!(
                &*path_of(s("input").as_bytes()),
                s("expected").as_bytes(),
                "{v}"
            ),
            Some("escape_pattern") => assert_eq!(
                &*escape_pattern(s("input").as_bytes()),
                s("expected").as_bytes(),
                "{v}"
            ),
            other => panic!("unknown kind {other:?}"),
        }
    }
}

/// Runs `file\tagent\turl\tallowed` rows against files in `corpus`,
/// returning (queries, disagreements).
pub fn agreement(verdicts: &std::path::Path, corpus: &std::path::Path) -> (usize, Vec<String>) {
    let text = std::fs::read_to_string(verdicts).expect("verdicts");
    let mut cache: std::collections::HashMap<String, Matcher> = std::collections::HashMap::new();
    let mut n = 0;
    let mut diffs = Vec::new();
    for line in text.lines().skip(1) {
        let mut f = line.split('\t');
        let (Some(file), Some(agent), Some(url), Some(want)) =
            (f.next(), f.next(), f.next(), f.next())
        else {
            panic!("bad row {line:?}")
        };
        let m = cache.entry(file.to_owned()).or_insert_with(|| {
            let body = std::fs::read(corpus.join(file)).expect("corpus file");
            Matcher::compile(&body, Semantics::Google, &ParseOptions::unlimited())
        });
        n += 1;
        let got = m.is_allowed(agent, url);
        if got != (want == "1") {
            diffs.push(format!(
                "{file}\t{agent}\t{url}\tgoogle={want}\tours={}",
                u8::from(got)
            ));
        }
    }
    (n, diffs)
}

#[test]
fn agreement_with_google_on_real_files_subset() {
    let (n, diffs) = agreement(&data("google_verdicts_subset.tsv"), &data("corpus"));
    assert_eq!(n, 16_940);
    assert!(
        diffs.is_empty(),
        "{} of {n} differ:\n{}",
        diffs.len(),
        diffs.join("\n")
    );
}

/// The full run over 678,876 queries and 11,766 files. Needs the shared
/// data set beside the repository (or `BOTSCOPE_SHARED_DATA`):
/// `cargo test --release -p botscope-robotstxt --test it -- --ignored --nocapture full_agreement`
#[test]
#[ignore = "needs ../shared/data; run by hand, see docs/conformance.md"]
fn full_agreement_with_google() {
    let root = std::env::var_os("BOTSCOPE_SHARED_DATA")
        .map_or_else(
            || std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data"),
            Into::into,
        )
        .join("robotstxt");
    let (n, diffs) = agreement(&root.join("google_verdicts.tsv"), &root.join("corpus"));
    #[allow(clippy::cast_precision_loss)]
    let rate = 100.0 * (n - diffs.len()) as f64 / n as f64;
    println!("agreement: {}/{n} = {rate:.4}%", n - diffs.len());
    // Memory: the compiled form of every corpus file against its size.
    let mut worst = (0.0_f64, String::new());
    for entry in std::fs::read_dir(root.join("corpus")).expect("corpus") {
        let path = entry.expect("entry").path();
        if path.extension().is_none_or(|e| e != "txt") {
            continue;
        }
        let body = std::fs::read(&path).expect("read");
        // No panic anywhere on any real file.
        let robots = botscope_robotstxt::Robots::parse(&body);
        let _ = botscope_robotstxt::lint(&robots);
        let _ = Matcher::compile(&body, Semantics::Draft1996, &ParseOptions::default())
            .check("Googlebot", "/x");
        let m = Matcher::compile(&body, Semantics::Google, &ParseOptions::unlimited());
        #[allow(clippy::cast_precision_loss)]
        let ratio = m.heap_size() as f64 / body.len().max(1) as f64;
        if ratio > worst.0 {
            worst = (ratio, path.display().to_string());
        }
    }
    println!(
        "largest compiled/file size ratio: {:.3} ({})",
        worst.0, worst.1
    );
    assert!(worst.0 <= 2.0, "a compiled file is over twice its size");
    for d in &diffs {
        println!("{d}");
    }
    assert!(rate >= 99.99, "agreement {rate:.4}% is under 99.99%");
}
