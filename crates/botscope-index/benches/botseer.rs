//! BotSeer's figures at BotSeer's scale: index build rate and size, the
//! latency of its example queries plus a free-text and a `delay:` range
//! query, and favourability over the whole set — beside SQLite FTS5 over
//! the same fields (what a user would build instead), in the same run.
//!
//! ```sh
//! # 2.2M sites from the real corpus (the figures of BENCHMARKS.md):
//! cargo run --release -p botscope-store --example gen_store -- \
//!     --corpus ../shared/data/robotstxt/corpus --sites 2200000 --seed 1 --db /data/botseer.db
//! BOTSCOPE_BOTSEER_DB=/data/botseer.db cargo bench -p botscope-index --bench botseer
//! # a quick run on 20,000 sites made from the checked-in files:
//! cargo bench -p botscope-index --bench botseer
//! ```
//!
//! The index is built next to the store (`DB.index`, `DB.fts5`) the first
//! time, and reused after (`BOTSCOPE_REBUILD=1` builds again); build
//! figures are printed when built. `BOTSCOPE_NO_PEER=1` times botscope
//! alone (no FTS5 database is built or read).

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use botscope_index::{BodyFields, Index, Rank, SearchRequest, Tilt, host_suffixes};
use botscope_robotstxt::Semantics;
use botscope_store::{SiteHistory, SqliteStore, Store};
use criterion::{Criterion, criterion_group};
use rusqlite::{Connection, params};

/// The queries: (ours, FTS5 MATCH over the fields table, FTS5 MATCH over
/// the body table, SQL for the range).
const QUERIES: &[(&str, Peer)] = &[
    ("botname:msnbot", Peer::Fields("botname : msnbot")),
    (
        "favor:googlebot site:gov",
        Peer::Fields("favor : googlebot AND site : gov"),
    ),
    (
        "contain:universal site:gov disallow:/",
        Peer::Fields(r#"contain : universal AND site : gov AND disallow : "/""#),
    ),
    (
        "favor:googlebot disfavor:msnbot disfavor:slurp",
        Peer::Fields("favor : googlebot AND disfavor : msnbot AND disfavor : slurp"),
    ),
    ("images private", Peer::Body("images AND private")),
    ("delay:>10", Peer::DelayAbove(10.0)),
];

#[derive(Clone, Copy)]
enum Peer {
    Fields(&'static str),
    Body(&'static str),
    DelayAbove(f64),
}

/// The store the bench runs on: `BOTSCOPE_BOTSEER_DB`, or one generated
/// under `target/` from `BOTSCOPE_CORPUS` (default: the checked-in files)
/// with `BOTSCOPE_SITES` sites (default 20,000).
fn store_path() -> PathBuf {
    if let Some(p) = std::env::var_os("BOTSCOPE_BOTSEER_DB") {
        return PathBuf::from(p);
    }
    let sites: u64 = std::env::var("BOTSCOPE_SITES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_000);
    let corpus = std::env::var_os("BOTSCOPE_CORPUS").map_or_else(
        || botscope_testkit::root().join("crates/botscope-robotstxt/tests/data/corpus"),
        PathBuf::from,
    );
    let files = botscope_store::synth::corpus(&corpus).expect("the corpus");
    let dir = botscope_testkit::root().join("target/botseer-bench");
    std::fs::create_dir_all(&dir).expect("target/botseer-bench");
    let db = dir.join(format!("sites-{sites}-files-{}.db", files.len()));
    if !db.exists() {
        let tmp = db.with_extension("partial");
        let _ = std::fs::remove_file(&tmp);
        let mut store = SqliteStore::open(&tmp).expect("a store");
        botscope_store::synth::fill(&mut store, &files, sites, 1, &mut |_| {}).expect("generated");
        drop(store);
        std::fs::rename(&tmp, &db).expect("rename");
    }
    db
}

fn dir_bytes(p: &Path) -> u64 {
    if p.is_file() {
        return p.metadata().map_or(0, |m| m.len());
    }
    std::fs::read_dir(p)
        .map(|d| d.filter_map(|e| e.ok()).map(|e| dir_bytes(&e.path())).sum())
        .unwrap_or(0)
}

/// The same documents in SQLite FTS5: one row per version in `doc`, its
/// fields in the FTS5 table `f` (each value one token: every ASCII
/// punctuation mark but `"` is a token character, and the other bytes are
/// percent-encoded), its body in the
/// FTS5 table `b`, Crawl-delays and Google-semantics biases in plain
/// indexed tables.
fn build_fts5(store: &dyn Store, path: &Path) -> u64 {
    let _ = std::fs::remove_file(path);
    let mut db = Connection::open(path).expect("fts5 db");
    db.execute_batch(
        r#"PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA page_size = 8192;
        CREATE TABLE doc(id INTEGER PRIMARY KEY, host TEXT, rank INTEGER, first_seen INTEGER,
                         until INTEGER, latest INTEGER, url TEXT, bias TEXT);
        CREATE TABLE delay(id INTEGER, v REAL);
        CREATE TABLE bias(id INTEGER, robot TEXT, bias INTEGER);
        CREATE VIRTUAL TABLE f USING fts5(site, botname, disallow, allow, favor, disfavor, nobias,
            contain, sitemap, tokenize = "unicode61 tokenchars '!#$%&''()*+,-./:;<=>?@[\]^_`{|}~'");
        CREATE VIRTUAL TABLE b USING fts5(body);"#,
    )
    .expect("fts5 schema (SQLite built with FTS5)");
    let tx = db.transaction().expect("tx");
    let mut cache: std::collections::HashMap<[u8; 32], std::sync::Arc<BodyFields>> =
        std::collections::HashMap::new();
    let mut id = 0i64;
    {
        let mut doc = tx
            .prepare("INSERT INTO doc VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)")
            .expect("prepare");
        let mut f = tx
            .prepare("INSERT INTO f(rowid, site, botname, disallow, allow, favor, disfavor, nobias, contain, sitemap) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)")
            .expect("prepare");
        let mut b = tx
            .prepare("INSERT INTO b(rowid, body) VALUES (?1, ?2)")
            .expect("prepare");
        let mut delay = tx
            .prepare("INSERT INTO delay VALUES (?1, ?2)")
            .expect("prepare");
        let mut bias = tx
            .prepare("INSERT INTO bias VALUES (?1, ?2, ?3)")
            .expect("prepare");
        let mut add = |h: &SiteHistory| -> rusqlite::Result<()> {
            for (i, v) in h.versions.iter().enumerate() {
                id += 1;
                let until = h.versions.get(i + 1).map_or(i64::MAX, |w| w.first_seen);
                if cache.len() > 100_000 {
                    cache.clear();
                }
                let fields = cache
                    .entry(v.hash)
                    .or_insert_with(|| std::sync::Arc::new(BodyFields::of(&v.body)))
                    .clone();
                let table = fields.bias(Semantics::Google);
                let json: serde_json::Map<String, serde_json::Value> = table
                    .robots
                    .iter()
                    .map(|r| (r.robot.clone(), r.bias.into()))
                    .collect();
                doc.execute(params![
                    id,
                    h.host,
                    h.rank.map(|r| r as i64),
                    v.first_seen,
                    until,
                    i + 1 == h.versions.len(),
                    v.url,
                    serde_json::Value::Object(json).to_string()
                ])?;
                let join = |xs: &[String]| {
                    xs.iter()
                        .map(|x| one_token(x))
                        .collect::<Vec<_>>()
                        .join(" ")
                };
                f.execute(params![
                    id,
                    join(&host_suffixes(&h.host)),
                    join(&fields.botnames),
                    join(&fields.disallow),
                    join(&fields.allow),
                    join(&fields.robots_with(Semantics::Google, Tilt::Favored)),
                    join(&fields.robots_with(Semantics::Google, Tilt::Disfavored)),
                    join(&fields.robots_with(Semantics::Google, Tilt::Nobias)),
                    if fields.universal { "universal" } else { "" },
                    join(&fields.sitemaps),
                ])?;
                b.execute(params![id, fields.text])?;
                for d in &fields.delays {
                    delay.execute(params![id, d])?;
                }
                for r in &table.robots {
                    bias.execute(params![id, r.robot, r.bias])?;
                }
            }
            Ok(())
        };
        store
            .sites_changed(0, &mut |h| {
                add(&h).expect("fts5 insert");
                Ok(())
            })
            .expect("the store");
    }
    tx.commit().expect("commit");
    db.execute_batch(
        "CREATE INDEX delay_v ON delay(v); CREATE INDEX bias_robot ON bias(robot);
         INSERT INTO f(f) VALUES('optimize'); INSERT INTO b(b) VALUES('optimize');",
    )
    .expect("indexes");
    id as u64
}

/// A field value as one FTS5 token: bytes the tokenizer would split on
/// (space, controls, `"`, anything not ASCII) percent-encoded.
fn one_token(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for b in v.bytes() {
        if b.is_ascii_graphic() && b != b'"' {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A search through FTS5: the count and the first ten hits with what a
/// result page shows (host, rank, date, bias, body).
fn peer_search(db: &Connection, q: Peer) -> (u64, Vec<String>) {
    let (count_sql, top_sql, arg): (&str, &str, rusqlite::types::Value) = match q {
        Peer::Fields(m) => (
            "SELECT count(*) FROM f JOIN doc ON doc.id = f.rowid WHERE f MATCH ?1 AND doc.latest = 1",
            "SELECT f.rowid FROM f JOIN doc ON doc.id = f.rowid WHERE f MATCH ?1 AND doc.latest = 1 ORDER BY f.rank LIMIT 10",
            m.to_owned().into(),
        ),
        Peer::Body(m) => (
            "SELECT count(*) FROM b JOIN doc ON doc.id = b.rowid WHERE b MATCH ?1 AND doc.latest = 1",
            "SELECT b.rowid FROM b JOIN doc ON doc.id = b.rowid WHERE b MATCH ?1 AND doc.latest = 1 ORDER BY b.rank LIMIT 10",
            m.to_owned().into(),
        ),
        Peer::DelayAbove(x) => (
            "SELECT count(DISTINCT delay.id) FROM delay JOIN doc ON doc.id = delay.id WHERE delay.v > ?1 AND doc.latest = 1",
            "SELECT DISTINCT delay.id FROM delay JOIN doc ON doc.id = delay.id WHERE delay.v > ?1 AND doc.latest = 1 LIMIT 10",
            x.into(),
        ),
    };
    let total: i64 = db
        .prepare_cached(count_sql)
        .and_then(|mut s| s.query_row([&arg], |r| r.get(0)))
        .expect("count");
    let ids: Vec<i64> = db
        .prepare_cached(top_sql)
        .and_then(|mut s| {
            s.query_map([&arg], |r| r.get(0))?
                .collect::<rusqlite::Result<_>>()
        })
        .expect("top");
    let mut hits = Vec::new();
    for id in ids {
        let (host, _rank, _from, _bias): (String, Option<i64>, i64, String) = db
            .prepare_cached("SELECT host, rank, first_seen, bias FROM doc WHERE id = ?1")
            .and_then(|mut s| {
                s.query_row([id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            })
            .expect("doc");
        let body: String = db
            .prepare_cached("SELECT body FROM b WHERE rowid = ?1")
            .and_then(|mut s| s.query_row([id], |r| r.get(0)))
            .expect("body");
        black_box(body);
        hits.push(host);
    }
    (total as u64, hits)
}

/// Favourability through SQL over the stored biases (Google's rules).
fn peer_favor(db: &Connection) -> (u64, Vec<(String, i64, i64, i64)>) {
    let n: i64 = db
        .query_row("SELECT count(*) FROM doc WHERE latest = 1", [], |r| {
            r.get(0)
        })
        .expect("n");
    let mut s = db
        .prepare_cached(
            "SELECT robot, count(*), sum(bias.bias > 0), sum(bias.bias < 0) FROM bias
             JOIN doc ON doc.id = bias.id WHERE doc.latest = 1 GROUP BY robot",
        )
        .expect("favor");
    let rows = s
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .expect("favor")
        .collect::<rusqlite::Result<Vec<_>>>()
        .expect("rows");
    (n as u64, rows)
}

fn ours(index: &Index, q: &str) -> (u64, Vec<String>) {
    let r = index
        .search(&SearchRequest {
            query: q.into(),
            rank: Rank::Relevance,
            limit: 10,
            offset: 0,
            semantics: Semantics::Google,
            as_of: None,
        })
        .expect("search");
    (r.total, r.hits.into_iter().map(|h| h.site).collect())
}

fn quantile(sorted: &[Duration], q: f64) -> Duration {
    let i = ((sorted.len() as f64 * q).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn bench(c: &mut Criterion) {
    let db = store_path();
    let store = SqliteStore::open_read(&db).expect("the store");
    let index_dir = PathBuf::from(format!("{}.index", db.display()));
    let fts_path = PathBuf::from(format!("{}.fts5", db.display()));
    let rebuild = std::env::var_os("BOTSCOPE_REBUILD").is_some();
    let peer_on = std::env::var_os("BOTSCOPE_NO_PEER").is_none();
    println!();
    println!("== BotSeer at scale: {} ==", db.display());
    if rebuild || !index_dir.join("meta.json").exists() {
        let _ = std::fs::remove_dir_all(&index_dir);
        let t = Instant::now();
        let r = Index::build(&store, &index_dir, None, &mut |_| {}).expect("index build");
        let s = t.elapsed().as_secs_f64();
        println!(
            "botscope index build: {} sites, {} documents, {} distinct bodies in {:.1} s = {:.0} sites/s; {:.2} GB on disk ({:.0} bytes/document)",
            r.sites,
            r.documents,
            r.bodies,
            s,
            r.sites as f64 / s,
            r.bytes as f64 / 1e9,
            r.bytes as f64 / r.documents.max(1) as f64
        );
    }
    if peer_on && (rebuild || !fts_path.exists()) {
        let tmp = fts_path.with_extension("fts5.partial");
        let t = Instant::now();
        let docs = build_fts5(&store, &tmp);
        let s = t.elapsed().as_secs_f64();
        std::fs::rename(&tmp, &fts_path).expect("rename");
        let bytes = dir_bytes(&fts_path);
        println!(
            "SQLite FTS5 build:    {docs} documents in {s:.1} s = {:.0} documents/s; {:.2} GB on disk ({:.0} bytes/document)",
            docs as f64 / s,
            bytes as f64 / 1e9,
            bytes as f64 / docs.max(1) as f64
        );
    }
    let index = Index::open(&index_dir).expect("the index");
    let peer = peer_on.then(|| {
        let peer =
            Connection::open_with_flags(&fts_path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
                .expect("the fts5 db");
        peer.execute_batch("PRAGMA cache_size = -1000000; PRAGMA mmap_size = 30000000000;")
            .expect("pragmas");
        peer
    });
    println!(
        "documents: {} (index), {} bytes index, {} bytes FTS5",
        index.documents(),
        dir_bytes(&index_dir),
        dir_bytes(&fts_path)
    );

    // Same answers first.
    for (q, p) in QUERIES {
        let (a, _) = ours(&index, q);
        if let Some(peer) = &peer {
            let (b, _) = peer_search(peer, *p);
            assert_eq!(a, b, "{q}: botscope finds {a}, FTS5 {b}");
        }
    }

    let reps: usize = std::env::var("BOTSCOPE_REPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200);
    let budget = Duration::from_secs(30);
    println!();
    println!("latency per query, one thread, top 10 with count ({reps} runs at most, 30 s each):");
    println!("| query | hits | botscope p50 | botscope p99 | FTS5 p50 | FTS5 p99 | p99 ratio |");
    println!("|---|---|---|---|---|---|---|");
    for (q, p) in QUERIES {
        for _ in 0..3 {
            black_box(ours(&index, q));
            if let Some(peer) = &peer {
                black_box(peer_search(peer, *p));
            }
        }
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let started = Instant::now();
        let mut hits = 0;
        while a.len() < reps && (started.elapsed() < budget * 2 || a.len() < 20) {
            let t = Instant::now();
            hits = black_box(ours(&index, q)).0;
            a.push(t.elapsed());
            if let Some(peer) = peer
                .as_ref()
                .filter(|_| started.elapsed() < budget * 2 || b.len() < 20)
            {
                let t = Instant::now();
                black_box(peer_search(peer, *p));
                b.push(t.elapsed());
            }
        }
        a.sort();
        b.sort();
        if b.is_empty() {
            println!(
                "| `{q}` | {hits} | {:.2} ms | {:.2} ms | – | – | – |",
                ms(quantile(&a, 0.5)),
                ms(quantile(&a, 0.99)),
            );
            continue;
        }
        println!(
            "| `{q}` | {hits} | {:.2} ms | {:.2} ms | {:.2} ms | {:.2} ms | {:.1}× |",
            ms(quantile(&a, 0.5)),
            ms(quantile(&a, 0.99)),
            ms(quantile(&b, 0.5)),
            ms(quantile(&b, 0.99)),
            ms(quantile(&b, 0.99)) / ms(quantile(&a, 0.99)),
        );
    }

    println!();
    let mut runs = Vec::new();
    let mut table = None;
    for _ in 0..3 {
        let t = Instant::now();
        table = Some(index.favor(None, None, Semantics::Google).expect("favor"));
        runs.push(t.elapsed());
    }
    let table = table.expect("a table");
    runs.sort();
    // Restriction over time of the registry's AI-training crawlers, every
    // month the index spans, from the classes stored per version.
    let agents = botscope_botid::Registry::bundled().agents(Some("ai-training"), None);
    let (first, last) = index.span().expect("a span");
    let periods = botscope_index::periods(first, last, false);
    let mut trend_runs = Vec::new();
    let mut trends = None;
    for _ in 0..3 {
        let t = Instant::now();
        trends = Some(
            index
                .trends(&botscope_index::TrendsRequest {
                    agents: &agents,
                    periods: &periods,
                    where_: None,
                    semantics: Semantics::Google,
                    known_at: None,
                    yearly: false,
                    crawls: None,
                    cohort: None,
                    method: Default::default(),
                    per_site: None,
                })
                .expect("trends"),
        );
        trend_runs.push(t.elapsed());
    }
    trend_runs.sort();
    let trends = trends.expect("trends");
    println!(
        "trends of {} AI-training agents over {} months (N = {} sites in the last, {} versions read from bodies): best {:.2} s, worst {:.2} s; {:.1}× favor's best",
        agents.len(),
        periods.len(),
        trends.periods.last().map_or(0, |p| p.sites),
        trends.from_bodies,
        trend_runs[0].as_secs_f64(),
        trend_runs[trend_runs.len() - 1].as_secs_f64(),
        trend_runs[0].as_secs_f64() / runs[0].as_secs_f64(),
    );
    let Some(peer) = &peer else {
        println!(
            "favor over the whole set (N = {}, {} robots, 2 threads): botscope best {:.2} s, worst {:.2} s",
            table.n,
            table.robots.len(),
            runs[0].as_secs_f64(),
            runs[runs.len() - 1].as_secs_f64(),
        );
        return;
    };
    let t = Instant::now();
    let (n, rows) = peer_favor(peer);
    let peer_time = t.elapsed();
    assert_eq!(table.n, n, "same N");
    for (robot, appeared, favored, disfavored) in &rows {
        if let Some(r) = table.robots.iter().find(|r| &r.robot == robot) {
            assert_eq!(
                (r.appeared, r.favored, r.disfavored),
                (*appeared as u64, *favored as u64, *disfavored as u64),
                "{robot}"
            );
        }
    }
    println!(
        "favor over the whole set (N = {}, {} robots, 2 threads): botscope best {:.2} s, worst {:.2} s; SQL GROUP BY over stored biases {:.2} s ({:.1}×)",
        table.n,
        table.robots.len(),
        runs[0].as_secs_f64(),
        runs[runs.len() - 1].as_secs_f64(),
        peer_time.as_secs_f64(),
        peer_time.as_secs_f64() / runs[0].as_secs_f64()
    );

    let mut g = c.benchmark_group("botseer query");
    g.sample_size(10).measurement_time(Duration::from_secs(2));
    for (q, p) in QUERIES {
        g.bench_function(format!("botscope {q}"), |b| b.iter(|| ours(&index, q)));
        g.bench_function(format!("fts5 {q}"), |b| b.iter(|| peer_search(peer, *p)));
    }
    g.finish();
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
