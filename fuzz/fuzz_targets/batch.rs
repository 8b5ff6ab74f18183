//! Batch question lines: `robots check-batch` lines (`ROBOTS_PATH<TAB>
//! AGENT<TAB>URL`, the robots files served from the input itself) and
//! `verify --batch` lines (`IP<TAB>USER-AGENT`). Every line gets a verdict
//! or a reason, in order, the one its file gives the line asked alone
//! (answers kept for agents a file treats alike included); each file is
//! loaded at most twice (once while the lines keep to their files).

#![no_main]

use std::collections::HashMap;
use std::sync::OnceLock;

use botscope_botid::{Batch, Registry, UaClassifier};
use botscope_robotstxt::{BatchChecker, Matcher, ParseOptions, Semantics, path_of};
use libfuzzer_sys::fuzz_target;

fn registry() -> &'static (Registry, UaClassifier) {
    static R: OnceLock<(Registry, UaClassifier)> = OnceLock::new();
    R.get_or_init(|| {
        let r = Registry::bundled();
        let c = UaClassifier::bundled(&r).expect("classifier");
        (r, c)
    })
}

fuzz_target!(|data: &[u8]| {
    // The first part (up to a NUL) is the files' text; the rest, lines.
    let (files, lines) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (&b""[..], data),
    };
    for semantics in [Semantics::Google, Semantics::Draft1996] {
        let mut b = BatchChecker::new(semantics, ParseOptions::default());
        // Every file that loads holds `files`: each verdict, kept answers
        // given again included, is that file's for the line asked alone.
        let alone = Matcher::compile(files, semantics, &ParseOptions::default());
        let mut loads: HashMap<Vec<u8>, usize> = HashMap::new();
        for line in lines.split(|&b| b == b'\n') {
            let load = |p: &[u8], buf: &mut Vec<u8>| {
                *loads.entry(p.to_vec()).or_default() += 1;
                assert!(buf.is_empty(), "each file starts from an empty buffer");
                if p.len() % 3 == 0 {
                    Err("no such file".to_owned())
                } else {
                    buf.extend_from_slice(files);
                    Ok(())
                }
            };
            match b.check(line, load) {
                Ok(v) => {
                    if let Some(r) = v.rule {
                        assert!(r.line >= 1);
                    }
                    let mut f = line.splitn(3, |&b| b == b'\t');
                    let (_, agent, url) =
                        (f.next(), f.next().expect("agent"), f.next().expect("url"));
                    let want = alone.check_path(&String::from_utf8_lossy(agent), &path_of(url));
                    assert_eq!(v, want, "the line asked alone");
                }
                Err(e) => assert!(!e.is_empty()),
            }
        }
        assert!(
            loads.values().all(|&n| n <= 2),
            "each file loaded twice at most"
        );
    }
    let (registry, classifier) = registry();
    let mut batch = Batch::default();
    let n = lines.split(|&b| b == b'\n').count();
    for (i, line) in lines.split(|&b| b == b'\n').enumerate() {
        batch.push_line(i + 1, line, classifier);
    }
    let verdicts: Vec<_> = batch
        .verdicts(registry, &HashMap::new(), &botscope_botid::NoOwners)
        .collect();
    assert_eq!(verdicts.len(), n, "one answer per line");
    let _ = batch.dns_wanted(registry);
});
