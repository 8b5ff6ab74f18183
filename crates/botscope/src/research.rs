//! BotSeer's research commands: `index`, `search`, `bias`, `favor`,
//! `submit`. The work is botscope-index's; this module opens and prints.

use std::io::Write;

use anyhow::{Context, Result};
use botscope_index::{Index, IndexError, SearchRequest};
use botscope_store::StoreLocator;

use crate::cli::{
    BiasArgs, DiffArgs, FavorArgs, Format, IndexBuildArgs, IndexExportArgs, IndexUpdateArgs,
    SearchArgs, SubmitArgs, TableFormat, TrendsArgs, WatchArgs,
};
use crate::exit::ExitStatus;

/// Prints text for a terminal (escaped) or JSON as it is.
fn print(text: &str, json: bool) -> Result<()> {
    let mut out = std::io::stdout().lock();
    if json {
        out.write_all(text.as_bytes())?;
    } else {
        out.write_all(botscope_text::terminal(text).as_bytes())?;
    }
    Ok(out.flush()?)
}

/// Parquet goes to standard output only when it is not a terminal:
/// checked before any work.
fn parquet_to_terminal(format: TableFormat) -> Result<()> {
    anyhow::ensure!(
        format != TableFormat::Parquet || !std::io::IsTerminal::is_terminal(&std::io::stdout()),
        "--format parquet writes binary: redirect standard output to a file (> out.parquet)"
    );
    Ok(())
}

/// A result as its format says: JSON (the type's own), text for people,
/// or its table as CSV or Parquet.
fn emit<T: serde::Serialize>(
    format: TableFormat,
    value: &T,
    text: impl FnOnce() -> String,
    table: impl FnOnce() -> botscope_text::Table,
) -> Result<()> {
    match format {
        TableFormat::Json => print(&format!("{}\n", serde_json::to_string(value)?), true),
        TableFormat::Text => print(&text(), false),
        TableFormat::Csv => print(&table().to_csv(), true),
        TableFormat::Parquet => {
            let bytes = botscope_store::write_table(&table(), Vec::new())?;
            let mut out = std::io::stdout().lock();
            out.write_all(&bytes)?;
            Ok(out.flush()?)
        }
    }
}

/// A query error shows the query with a caret under the column.
fn query_error(e: IndexError, query: &str) -> anyhow::Error {
    match e {
        IndexError::Query(q) => anyhow::anyhow!("query: {q}\n{}", q.pointer(query)),
        e => e.into(),
    }
}

/// `index build`.
pub fn build(a: &IndexBuildArgs, s: &crate::Settings) -> Result<ExitStatus> {
    let index = a.index.resolve(Some(&a.db.db))?;
    let store = a.db.db.open_read()?;
    let bar = crate::progress::bar(s, false, 0, "{spinner} {pos} sites indexed, {elapsed}");
    let r = Index::build_on(&store, &index, a.as_of, s.threads, &mut |n| {
        if let Some(b) = &bar {
            b.set_position(n);
        }
    })?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    eprintln!("{}: {r}", index.display());
    Ok(ExitStatus::Success)
}

/// `index update`.
pub fn update(a: &IndexUpdateArgs) -> Result<ExitStatus> {
    let index = a.index.resolve(Some(&a.db.db))?;
    let store = a.db.db.open_read()?;
    let r = Index::open(&index)?.update(&store)?;
    eprintln!("{}: {r}", index.display());
    Ok(ExitStatus::Success)
}

/// `search`: exit 1 when nothing matches.
pub fn search(a: &SearchArgs) -> Result<ExitStatus> {
    parquet_to_terminal(a.format)?;
    let index = a.index.resolve(None)?;
    let idx = Index::open(&index)?;
    let rank = a.rank;
    let r = idx
        .search(&SearchRequest {
            query: a.query.clone(),
            rank,
            limit: a.limit,
            offset: a.offset,
            semantics: a.semantics,
            as_of: a.as_of,
        })
        .map_err(|e| query_error(e, &a.query))?;
    emit(a.format, &r, || r.to_text(a.offset), || r.to_table())?;
    Ok(if r.total == 0 {
        ExitStatus::Negative
    } else {
        ExitStatus::Success
    })
}

fn show_bias(b: &botscope_index::FileBias, format: Format) -> Result<()> {
    match format {
        Format::Json => print(&format!("{}\n", serde_json::to_string(b)?), true),
        Format::Text => print(&b.to_text(), false),
    }
}

/// `bias FILE|--site HOST`.
pub fn bias(a: &BiasArgs) -> Result<ExitStatus> {
    let b = match (&a.file, &a.site) {
        (Some(f), _) => {
            let (body, _) = crate::io::read_limited(f, Some(botscope_index::MAX_SUBMISSION))?;
            botscope_index::bias(&body, a.semantics)
        }
        (None, Some(site)) => {
            let store = a.db.db.open_read()?;
            botscope_index::site_bias(&store, site, a.as_of, a.semantics)?
                .with_context(|| format!("the store has no robots.txt of {site} at that time"))?
        }
        (None, None) => anyhow::bail!("give a FILE or --site HOST"),
    };
    show_bias(&b, a.format)?;
    Ok(ExitStatus::Success)
}

/// `favor`.
pub fn favor(a: &FavorArgs) -> Result<ExitStatus> {
    parquet_to_terminal(a.format)?;
    let index = a.index.resolve(None)?;
    let idx = Index::open(&index)?;
    let sort = a.sort;
    let t = idx
        .favor(a.where_.as_deref(), a.as_of, a.semantics)
        .map_err(|e| query_error(e, a.where_.as_deref().unwrap_or_default()))?
        .sorted(sort, a.min_appeared);
    emit(a.format, &t, || t.to_text(), || t.to_table())?;
    Ok(ExitStatus::Success)
}

/// `submit FILE --site HOST`.
pub fn submit(a: &SubmitArgs) -> Result<ExitStatus> {
    let index = a.index.resolve(Some(&a.db.db))?;
    let (body, total) = crate::io::read_limited(&a.file, Some(botscope_index::MAX_SUBMISSION))?;
    anyhow::ensure!(
        total as usize <= botscope_index::MAX_SUBMISSION,
        "{} is {}, over the {} crawlers read; nothing was stored",
        crate::io::display(&a.file),
        botscope_text::size(total),
        botscope_text::size(botscope_index::MAX_SUBMISSION as u64)
    );
    let mut store = a.db.db.open()?;
    let now = botscope_os::unix_now();
    let b = botscope_index::submit(&mut store, &index, &a.site, &body, a.semantics, now)?;
    eprintln!("stored in {} and indexed in {}", a.db.db, index.display());
    show_bias(&b, a.format)?;
    Ok(ExitStatus::Success)
}

/// `trends`.
pub fn trends(a: &TrendsArgs, s: &crate::Settings) -> Result<ExitStatus> {
    parquet_to_terminal(a.format)?;
    let index = a.index.resolve(a.db.as_ref())?;
    let (category, operator) = (a.category.as_deref(), a.operator.as_deref());
    let mut agents = s
        .registry(None)?
        .followed(&a.agent, category, operator, false)
        .map_err(|e| anyhow::anyhow!("{e} (see `botscope bots list`)"))?;
    let method = botscope_index::studies::Method::parse(&a.method)
        .context("--method is exact, somesite or cic")?;
    let named = !a.agent.is_empty() || a.category.is_some() || a.operator.is_some();
    if a.directive.is_some() && !named && agents.is_empty() {
        // The directive's shares need no agent: every crawler's view.
        agents.push("*".to_owned());
    }
    anyhow::ensure!(
        named || a.directive.is_some() || method == botscope_index::studies::Method::Somesite,
        "which agents? give --agent, --category or --operator \
         (--method somesite alone counts the study's 24 AI User-Agents)"
    );
    if method == botscope_index::studies::Method::Somesite && !named && a.directive.is_none() {
        agents = botscope_index::studies::SOMESITE_AGENTS
            .iter()
            .map(|&x| x.to_owned())
            .collect();
    }
    let mut idx = Index::open(&index)?;
    idx.set_threads(s.threads);
    let store = a.db.as_ref().map(StoreLocator::open_read).transpose()?;
    anyhow::ensure!(
        a.by != "crawl" || store.is_some(),
        "trends --by crawl reads the crawls from the store: give --db"
    );
    let cohort = match (&a.sites, &a.rank_file) {
        (Some(path), _) | (None, Some(path)) => {
            let spec = botscope_index::CohortSpec {
                top: a.top,
                weight: a.weight.clone(),
                ranked: a.rank_file.is_some(),
            };
            Some(botscope_index::read_cohort(path, &spec)?)
        }
        (None, None) => None,
    };
    let by = botscope_index::By::parse(&a.by).context("--by is month, year or crawl")?;
    let t = idx
        .trends_over(
            store.as_ref(),
            botscope_index::TrendsPlan {
                agents: &agents,
                by,
                from: a.from,
                to: a.to,
                where_: a.where_.as_deref(),
                semantics: a.semantics,
                cohort,
                method,
                per_site: a.per_site.then_some(a.max_rows),
            },
        )
        .map_err(|e| query_error(e, a.where_.as_deref().unwrap_or_default()))?;
    if let Some(d) = a
        .directive
        .as_deref()
        .and_then(botscope_index::Directive::parse)
    {
        let rows = botscope_index::directives(&t, d);
        emit(a.format, &rows, || rows.to_text(), || rows.to_table())?;
        return Ok(ExitStatus::Success);
    }
    match &t.per_site {
        Some(rows) => emit(a.format, rows, || rows.to_text(), || rows.to_table())?,
        None => emit(a.format, &t, || t.to_text(), || t.to_table())?,
    }
    Ok(ExitStatus::Success)
}

/// The agents named (`--agent`) and every registry robot of `category`;
/// with neither, `*` and every registry robot.
fn named_or_every(
    named: &[String],
    category: Option<&str>,
    s: &crate::Settings,
) -> Result<Vec<String>> {
    s.registry(None)?
        .followed(named, category, None, true)
        .map_err(|e| anyhow::anyhow!("{e} (see `botscope bots list`)"))
}

/// `watch`.
pub fn watch(a: &WatchArgs, s: &crate::Settings) -> Result<ExitStatus> {
    let index = a.index.resolve(a.db.as_ref())?;
    let agents = named_or_every(&a.agent, a.category.as_deref(), s)?;
    let mut idx = Index::open(&index)?;
    idx.set_threads(s.threads);
    // An index behind its store answers for the time it was updated.
    if let Some(db) = &a.db {
        let store = db.open_read()?;
        let mark = botscope_store::Store::change_mark(&store)?;
        if mark > idx.meta().mark {
            eprintln!(
                "botscope: note: the store has changes the index does not hold yet: \
                 run `botscope index update --db {db}` for a watch that includes them"
            );
        }
    }
    let only = a.only.as_deref().and_then(botscope_index::Kind::parse);
    let request = botscope_index::ChangeRequest {
        since: a.since,
        agents: &agents,
        semantics: a.semantics,
        site: a.site.as_deref(),
        where_: a.where_.as_deref(),
        only,
        limit: usize::try_from(a.limit).unwrap_or(usize::MAX),
    };
    let c = idx
        .changes(&request)
        .map_err(|e| query_error(e, a.where_.as_deref().unwrap_or_default()))?;
    match a.format.as_str() {
        "atom" => {
            let title = request.title(&a.agent, a.category.as_deref());
            let feed = botscope_index::Feed {
                title: &title,
                id: &botscope_index::feed_id(&format!(
                    "watch\n{}\n{:?}\n{:?}\n{:?}\n{}",
                    agents.join(","),
                    a.only,
                    a.site,
                    a.where_,
                    a.semantics.as_str()
                )),
                this: None,
                site_link: None,
                now: botscope_os::unix_now(),
            };
            print(&c.to_atom(&feed), true)?;
        }
        "json" => emit(TableFormat::Json, &c, || c.to_text(), || c.to_table())?,
        "csv" => emit(TableFormat::Csv, &c, || c.to_text(), || c.to_table())?,
        _ => emit(TableFormat::Text, &c, || c.to_text(), || c.to_table())?,
    }
    Ok(ExitStatus::Success)
}

/// `index export`.
pub fn export(a: &IndexExportArgs, s: &crate::Settings) -> Result<ExitStatus> {
    let index = a.index.resolve(a.db.as_ref())?;
    let mut idx = Index::open(&index)?;
    idx.set_threads(s.threads);
    let agents = named_or_every(&a.agent, a.category.as_deref(), s)?;
    let file = botscope_os::AtomicFile::create(&a.out)?;
    let (n, file) = idx.export_parquet(&agents, file)?;
    file.commit()?;
    eprintln!(
        "{n} versions written to {} ({} agents)",
        a.out.display(),
        agents.len()
    );
    Ok(ExitStatus::Success)
}

/// `diff --site HOST`.
pub fn diff(a: &DiffArgs) -> Result<ExitStatus> {
    use botscope_store::Store;
    let store = a.db.db.open_read()?;
    let h = store
        .site(&a.site.trim().to_ascii_lowercase())?
        .with_context(|| format!("the store does not know {}", a.site))?;
    let to = h
        .at(a.to.unwrap_or(i64::MAX))
        .context("no version at --to")?;
    let from = match a.from {
        Some(t) => h.at(t).context("no version at --from")?,
        None => h.at(to.first_seen - 1).unwrap_or(to),
    };
    // An absence (the file removed, unreachable, moved) compares as no
    // file: every rule of the other side added or removed.
    let d = botscope_index::diff_versions(&from.body, &to.body, a.semantics);
    let absent = |v: &botscope_store::Version| v.absent.map(|x| x.as_str());
    let side = |v: &botscope_store::Version| match v.absent {
        Some(x) => format!(
            "{} (no robots.txt: {})",
            botscope_index::rfc3339(v.first_seen),
            x.as_str()
        ),
        None => botscope_index::rfc3339(v.first_seen),
    };
    match a.format {
        Format::Json => {
            let v = serde_json::json!({"site": h.host, "from": botscope_index::rfc3339(from.first_seen),
                "to": botscope_index::rfc3339(to.first_seen), "from_absent": absent(from),
                "to_absent": absent(to), "diff": d});
            print(&format!("{v}\n"), true)?
        }
        Format::Text => print(
            &format!(
                "{}: {} -> {}\n{}",
                botscope_text::field(&h.host),
                side(from),
                side(to),
                d.to_text()
            ),
            false,
        )?,
    }
    Ok(ExitStatus::Success)
}
