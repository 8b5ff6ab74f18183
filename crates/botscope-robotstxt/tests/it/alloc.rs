//! The hot path allocates nothing: allocations are counted (on this thread
//! only) while a burst of queries runs.

use botscope_robotstxt::{Matcher, ParseOptions, Semantics};

#[test]
fn queries_do_not_allocate() {
    let body = std::fs::read(crate::data("corpus/12710.txt")).expect("corpus file");
    let urls = [
        "https://www.example.com/",
        "https://www.example.com/search?q=x",
        "/a/b/c.css",
        "/x/1/y",
        "http://[::1]/p?q#f",
        "example.com/no/scheme",
    ];
    let agents = [
        "Googlebot",
        "bingbot",
        "Mozilla/5.0 (compatible; GPTBot/1.2; +https://openai.com/gptbot)",
    ];
    for semantics in [Semantics::Google, Semantics::Draft1996] {
        let m = Matcher::compile(&body, semantics, &ParseOptions::default());
        let mut disallowed = 0usize;
        let info = allocation_counter::measure(|| {
            for _ in 0..100 {
                for u in urls {
                    for a in agents {
                        disallowed += usize::from(!m.check(a, u).allowed);
                        let _ = m.crawl_delay(a);
                    }
                }
            }
        });
        assert_eq!(info.count_total, 0, "{semantics:?}: queries allocated");
        std::hint::black_box(disallowed);
    }
    // The one documented exception: a URL whose path must be given a
    // leading slash (`example.com?q`).
    let m = Matcher::new(&body);
    let info = allocation_counter::measure(|| {
        let _ = m.check("Googlebot", "example.com?q");
    });
    assert_eq!(info.count_total, 1);
}
