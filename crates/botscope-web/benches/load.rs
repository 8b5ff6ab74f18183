//! The web application under load: a bounded number of requests per page
//! from 32 concurrent keep-alive clients on loopback, with requests/s and
//! latency percentiles per page; beside it, nginx serving the search page
//! as a static file under the same load (the ceiling of this load
//! generator and loopback on this machine).
//!
//! ```sh
//! # the research index's 2.2M sites (the figures of BENCHMARKS.md; the
//! # index DB.index is built at start when missing):
//! BOTSCOPE_BOTSEER_DB=/work/bench/botseer.db cargo bench -p botscope-web --bench load
//! # a quick run on the demo with 20,000 synthetic sites:
//! cargo bench -p botscope-web --bench load
//! ```
//!
//! `BOTSCOPE_LOAD_SCALE=F` multiplies every request count (default 1).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Instant;

use botscope_testkit::load::{Figures, Http, Nginx, Target};
use botscope_web::{Config, Limits, Server};

const CLIENTS: usize = 32;

/// The research index's example queries (BotSeer's and ours).
const QUERIES: &[&str] = &[
    "botname:msnbot",
    "favor:googlebot site:gov",
    "contain:universal site:gov disallow:/",
    "favor:googlebot disfavor:msnbot disfavor:slurp",
    "images private",
    "delay:>10",
];

fn enc(s: &str) -> String {
    botscope_text::url_component(s).to_string()
}

fn row(page: &str, f: &Figures) {
    println!("{}", f.row(page));
}

async fn load(c: &Http, urls: &[String], count: usize) -> Figures {
    let targets: Vec<Target> = urls.iter().map(Target::get).collect();
    botscope_testkit::load::load(c, &targets, count, CLIENTS, &[]).await
}

async fn fetch(c: &Http, url: &str) -> (u16, hyper::body::Bytes) {
    botscope_testkit::load::fetch(c, &Target::get(url)).await
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else is taken.
    let scale: f64 = std::env::var("BOTSCOPE_LOAD_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0);
    let n = |k: usize| ((k as f64 * scale) as usize).max(CLIENTS);
    let db = std::env::var_os("BOTSCOPE_BOTSEER_DB").map(PathBuf::from);
    let config = Config {
        db: db.as_deref().map(botscope_store::StoreLocator::from),
        demo_sites: 20_000,
        threads: 2,
        limits: Limits {
            api_per_second: 0,
            ..Limits::default()
        },
        ..Config::demo()
    };
    // The server on a runtime of its own with a worker per core, as
    // `botscope serve` runs it.
    let started = Instant::now();
    let server = botscope_testkit::spawn_server(None, move |ready, stop| async move {
        let server = Server::bind(config, "127.0.0.1:0".parse().unwrap())
            .await
            .expect("server");
        ready.send(server.local_addr());
        server.run(stop).await.unwrap();
    });
    let addr: SocketAddr = server.addr;
    eprintln!(
        "server ready in {:.1} s on {addr} ({})",
        started.elapsed().as_secs_f64(),
        db.as_ref()
            .map_or("demo, 20,000 synthetic sites".to_owned(), |p| p
                .display()
                .to_string())
    );
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        let c = botscope_testkit::load::client(CLIENTS);
        let base = format!("http://{addr}");
        // Steady state: the `/robots` chart the server starts computing
        // at start, and the favourability table, are ready.
        let t = Instant::now();
        fetch(&c, &format!("{base}/api/trends")).await;
        eprintln!(
            "trends chart ready after {:.1} s more",
            t.elapsed().as_secs_f64()
        );
        let t = Instant::now();
        fetch(&c, &format!("{base}/api/favor")).await;
        eprintln!("favourability in {:.2} s", t.elapsed().as_secs_f64());
        // Hosts to show: the sites a query finds.
        let (_, body) = fetch(
            &c,
            &format!("{base}/api/search?q={}&limit=200", enc("botname:googlebot")),
        )
        .await;
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
        let hosts: Vec<String> = v["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["site"].as_str().unwrap().to_owned())
            .collect();
        assert!(!hosts.is_empty(), "the store has sites naming Googlebot");
        let search: Vec<String> = QUERIES
            .iter()
            .map(|q| format!("{base}/search?q={}", enc(q)))
            .collect();
        let api: Vec<String> = QUERIES
            .iter()
            .map(|q| format!("{base}/api/search?q={}", enc(q)))
            .collect();
        let ranked: Vec<String> = ["favor:googlebot site:gov", "botname:msnbot"]
            .iter()
            .flat_map(|q| ["bias", "site"].map(|r| format!("{base}/search?q={}&rank={r}", enc(q))))
            .collect();
        let site: Vec<String> = hosts
            .iter()
            .map(|h| format!("{base}/site/{}", enc(h)))
            .collect();
        let bias: Vec<String> = hosts
            .iter()
            .map(|h| format!("{base}/site/{}/bias", enc(h)))
            .collect();
        let one = |p: &str| vec![format!("{base}{p}")];
        let pages: Vec<(&str, Vec<String>, usize)> = vec![
            ("`/search` (6 queries)", search.clone(), n(3000)),
            ("`/search` ranked by bias / site", ranked, n(1000)),
            ("`/api/search` (6 queries)", api, n(3000)),
            ("`/site/HOST` (200 hosts)", site, n(2000)),
            ("`/site/HOST/bias`", bias, n(2000)),
            ("`/crawler/Googlebot`", one("/crawler/Googlebot"), n(200)),
            ("`/robots`", one("/robots"), n(100)),
            ("`/check` (form)", one("/check"), n(5000)),
            ("`/healthz`", one("/healthz"), n(10000)),
            ("`/static/style.css`", one("/static/style.css"), n(10000)),
        ];
        println!("\n{CLIENTS} concurrent clients, keep-alive, loopback\n");
        println!("| page | requests | non-200 | requests/s | p50 ms | p99 ms | max ms |");
        println!("|---|---:|---:|---:|---:|---:|---:|");
        let mut search_rate = 0.0;
        for (label, urls, count) in &pages {
            let f = load(&c, urls, *count).await;
            if label.starts_with("`/search` (") {
                search_rate = f.rate();
            }
            row(label, &f);
        }
        // The peer: the same search page as a static file from nginx.
        let (_, page) = fetch(&c, &search[1]).await;
        match Nginx::start(&page) {
            Some(ng) => {
                let f = load(&c, &[ng.url()], n(10000)).await;
                row(
                    &format!(
                        "nginx: the search page as a static file ({} bytes)",
                        page.len()
                    ),
                    &f,
                );
                println!(
                    "\n`/search` runs its query for each request at {:.1}% of nginx's static rate.",
                    100.0 * search_rate / f.rate()
                );
            }
            None => println!("\n(nginx not found: no static-file baseline)"),
        }
    });
}
