//! Cohort lists (`trends --sites`, `--rank-file --top N --weight COL`):
//! any bytes give a cohort of distinct hosts, each its own host, with a
//! finite weight of 0 or more when weighted and no more hosts than lines,
//! or an error naming a line; never a panic.
#![no_main]

use std::collections::HashSet;

use botscope_index::{Cohort, CohortSpec};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&how, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    let spec = CohortSpec {
        top: (how & 1 != 0).then_some(u64::from(how >> 4)),
        weight: (how & 2 != 0).then(|| "w".to_owned()),
        ranked: how & 4 != 0,
    };
    let Ok(c) = Cohort::parse("list", &text, &spec) else {
        return;
    };
    assert!(c.hosts.len() <= text.lines().count());
    let mut seen = HashSet::new();
    for h in &c.hosts {
        assert_eq!(
            botscope_text::host_of(h).as_deref(),
            Some(h.as_str()),
            "{h:?}"
        );
        assert!(seen.insert(h), "{h} twice");
    }
    if let Some(w) = &c.weights {
        assert_eq!(w.len(), c.hosts.len());
        assert!(w.iter().all(|x| x.is_finite() && *x >= 0.0));
    }
});
