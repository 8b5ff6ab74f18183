//! The index's per-version analysis as a Parquet file, for DuckDB, pandas
//! and pyarrow: one row per version (indexed document), with each agent's
//! restriction class under both semantics, the bias per named robot, the
//! usage preferences, sitemaps and Crawl-delays (docs/research.md has the
//! schema).

use std::collections::HashMap;
use std::io::Write;
use std::sync::Arc;

use botscope_robotstxt::{Robots, Semantics};
use botscope_store::ParquetWriter;
use botscope_store::parquet_file::{
    Column, Leaf, binary, boolean, double, group, int64, list, map, message, text, timestamp_ms,
    unsigned,
};
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::schema::types::TypePtr;
use tantivy::schema::{IndexRecordOption, Value};
use tantivy::{DocId, DocSet, SegmentReader, TERMINATED, TantivyDocument, Term};

use crate::classes::{Decider, Stated};
use crate::engine::{FOREVER, Index, io_err, par_map};
use crate::error::{IndexError, Result};
use crate::schema::too_complex_term;

/// Versions per row group at most ([`botscope_store::PARQUET_ROW_GROUP`]).
const ROWS: usize = botscope_store::PARQUET_ROW_GROUP;

/// The two semantics in column order.
const SEMANTICS: [Semantics; 2] = [Semantics::Google, Semantics::Draft1996];

/// The restriction classes by their stored byte.
const CLASSES: [&str; 3] = ["none", "partial", "full"];

/// The Parquet schema of [`Index::export_parquet`] for `agents` (each a
/// column of the `google` and `draft1996` groups).
pub fn index_parquet_schema(agents: &[String]) -> Result<TypePtr> {
    if agents.is_empty() {
        return Err(IndexError::Request(
            "no agent to export: each names a column".to_owned(),
        ));
    }
    let classes = |name: &str| -> Result<TypePtr> {
        let fields = agents
            .iter()
            .map(|a| text(a, true))
            .collect::<botscope_store::Result<Vec<_>>>()?;
        Ok(group(name, fields, true)?)
    };
    let bias = |name: &str| map(name, text("key", false)?, int64("value", true)?, true);
    let strings = |name: &str| list(name, text("element", false)?, false);
    Ok(message(vec![
        text("host", false)?,
        text("url", false)?,
        timestamp_ms("first_seen", false)?,
        timestamp_ms("until", true)?,
        boolean("latest", false)?,
        unsigned("rank", 64, true)?,
        text("source", false)?,
        binary("hash", false)?,
        classes("google")?,
        classes("draft1996")?,
        bias("bias_google")?,
        bias("bias_draft1996")?,
        boolean("content_usage", false)?,
        boolean("content_signal", false)?,
        strings("statements")?,
        strings("sitemaps")?,
        list("crawl_delays", double("element", false)?, false)?,
        strings("crawls")?,
    ])?)
}

/// Sitemaps and Crawl-delays of a body, shared by its versions.
type Parsed = (Arc<Vec<String>>, Arc<Vec<f64>>);

/// One version's row, gathered from the stored fields.
struct Row {
    host: String,
    url: String,
    from: i64,
    until: i64,
    rank: Option<u64>,
    source: String,
    hash: Vec<u8>,
    /// Per semantics, each agent's class byte; `None`: not kept.
    classes: [Option<Vec<u8>>; 2],
    /// Per semantics, the bias per named robot; `None`: not computed.
    bias: [Option<Vec<(String, i64)>>; 2],
    stated: Stated,
    sitemaps: Arc<Vec<String>>,
    delays: Arc<Vec<f64>>,
    /// The crawls whose last capture of the site found this version.
    crawls: Vec<String>,
}

impl Index {
    /// Every indexed version as one row of a Parquet file written to `out`
    /// (schema [`index_parquet_schema`] for `agents`, which name the
    /// columns of the `google` and `draft1996` structs; the agents are
    /// recorded in the file's metadata as `botscope.agents`). Rows in index
    /// order, row groups of at most [`botscope_store::PARQUET_ROW_GROUP`]
    /// rows made on the index's threads. Returns the number of rows and `out`, the file
    /// complete.
    pub fn export_parquet<W: Write + Send>(&self, agents: &[String], out: W) -> Result<(u64, W)> {
        let mut seen = std::collections::HashSet::new();
        for a in agents {
            if a.is_empty() || !seen.insert(a.as_str()) {
                return Err(IndexError::Request(format!(
                    "the agent `{}` is empty or given twice: each names a column",
                    a.escape_debug()
                )));
            }
        }
        let schema = index_parquet_schema(agents)?;
        let meta = vec![
            (
                "botscope.agents".to_owned(),
                serde_json::to_string(agents).unwrap_or_default(),
            ),
            (
                "botscope.index_format".to_owned(),
                crate::engine::FORMAT.to_string(),
            ),
        ];
        let mut writer = ParquetWriter::new(out, schema, meta)?;
        let searcher = self.reader.searcher();
        // The work: (segment, first doc) blocks of ROWS documents, made
        // `threads` at a time and written in order.
        let segments = searcher.segment_readers();
        let mut blocks: Vec<(usize, DocId)> = Vec::new();
        for (i, seg) in segments.iter().enumerate() {
            let mut d = 0;
            while d < seg.max_doc() {
                blocks.push((i, d));
                d = d.saturating_add(ROWS as DocId);
            }
        }
        let deciders = SEMANTICS.map(|s| Decider::new(s, agents));
        // Every crawl's times of each segment's sites, once a segment.
        let names: Vec<String> = self.crawl_list()?.into_iter().map(|e| e.name).collect();
        let mut maps = Vec::with_capacity(names.len());
        for (k, n) in names.iter().enumerate() {
            if let Some(m) = self.crawl_map(n)? {
                maps.push((k, m));
            }
        }
        let seg_crawls = segments
            .iter()
            .map(|seg| crate::crawls::SegmentCrawls::of(seg, &maps, &self.path))
            .collect::<Result<Vec<_>>>()?;
        let mut rows = 0u64;
        for window in blocks.chunks(self.threads.max(1)) {
            let groups = par_map(self.threads, window, |&(i, start)| {
                let seg = &segments[i];
                let end = (start as usize + ROWS).min(seg.max_doc() as usize) as DocId;
                let crawls = (&seg_crawls[i], &names[..]);
                let rows = self.rows(seg, start, end, &deciders, crawls)?;
                RowGroup::of(agents.len(), &rows)
            })?;
            for g in groups {
                rows += g.rows;
                writer.row_group(&g.columns())?;
            }
        }
        Ok((rows, writer.finish()?))
    }

    /// The rows of the live documents `start..end` of `seg`.
    fn rows(
        &self,
        seg: &SegmentReader,
        start: DocId,
        end: DocId,
        deciders: &[Decider<'_>; 2],
        (crawls_of, names): (&crate::crawls::SegmentCrawls, &[String]),
    ) -> Result<Vec<Row>> {
        let store = seg.get_store_reader(4).map_err(|e| io_err(&self.path, e))?;
        let column = seg.fast_fields().bytes("classes").map_err(self.err())?;
        // Files whose bias was not computed, per semantics.
        let mut too_complex = [Vec::new(), Vec::new()];
        let inverted = seg.inverted_index(self.f.contain).map_err(self.err())?;
        for (k, sem) in SEMANTICS.into_iter().enumerate() {
            let term = Term::from_field_text(self.f.contain, too_complex_term(sem));
            if let Some(mut p) = inverted
                .read_postings(&term, IndexRecordOption::Basic)
                .map_err(|e| io_err(&self.path, e))?
            {
                let mut d = p.seek(start);
                while d != TERMINATED && d < end {
                    too_complex[k].push(d);
                    d = p.advance();
                }
            }
        }
        let mut parsed: HashMap<Vec<u8>, Parsed> = HashMap::new();
        let mut out = Vec::with_capacity((end - start) as usize);
        let (mut buf, mut key) = (Vec::new(), Vec::new());
        for d in start..end {
            if seg.is_deleted(d) {
                continue;
            }
            let doc: TantivyDocument = store.get(d).map_err(self.err())?;
            let text = |f| {
                doc.get_first(f)
                    .and_then(|v| v.as_str())
                    .unwrap_or_default()
                    .to_owned()
            };
            let int = |f| doc.get_first(f).and_then(|v| v.as_i64()).unwrap_or(0);
            let hash = doc
                .get_first(self.f.hash)
                .and_then(|v| v.as_bytes())
                .unwrap_or_default()
                .to_vec();
            // Each agent's class, and the statements, from the stored value.
            let mut classes = [None, None];
            let mut stated = None;
            if let Some(c) = &column
                && let Some(ord) = c.ords().first(d)
            {
                buf.clear();
                c.ord_to_bytes(ord, &mut buf)
                    .map_err(|e| io_err(&self.path, e))?;
                for (k, dec) in deciders.iter().enumerate() {
                    if let Some(st) = dec.decide(&buf, &mut key) {
                        classes[k] = Some(key.clone());
                        stated = Some(st);
                    }
                }
            }
            // Sitemaps and delays (and, past the budget, the statements)
            // from the body, parsed once per distinct body.
            let (sitemaps, delays) = match parsed.get(&hash) {
                Some(x) => x.clone(),
                None => {
                    let body = doc
                        .get_first(self.f.body)
                        .and_then(|v| v.as_str())
                        .unwrap_or_default();
                    let r = Robots::parse(body.as_bytes());
                    if stated.is_none() {
                        stated = Some(Stated::of(&r));
                    }
                    let mut delays: Vec<f64> = Vec::new();
                    for g in &r.groups {
                        if let Some(x) = &g.crawl_delay
                            && !delays.iter().any(|y| y.to_bits() == x.value.to_bits())
                        {
                            delays.push(x.value);
                        }
                    }
                    let mut maps: Vec<String> = Vec::new();
                    for s in &r.sitemaps {
                        let v = s.value.trim();
                        if !maps.iter().any(|m| m == v) {
                            maps.push(v.to_owned());
                        }
                    }
                    let x = (Arc::new(maps), Arc::new(delays));
                    if parsed.len() < 4_096 {
                        parsed.insert(hash.clone(), x.clone());
                    }
                    x
                }
            };
            let stated = match stated {
                Some(s) => s,
                None => {
                    let body = doc
                        .get_first(self.f.body)
                        .and_then(|v| v.as_str())
                        .unwrap_or_default();
                    Stated::of(&Robots::parse(body.as_bytes()))
                }
            };
            let bias_json: serde_json::Value = doc
                .get_first(self.f.bias_json)
                .and_then(|v| v.as_str())
                .and_then(|s| serde_json::from_str(s).ok())
                .unwrap_or_default();
            let bias = SEMANTICS.map(|sem| {
                let k = crate::schema::sem_index(sem);
                if too_complex[k].binary_search(&d).is_ok() {
                    return None;
                }
                Some(
                    bias_json[sem.as_str()]
                        .as_object()
                        .map(|m| {
                            m.iter()
                                .filter_map(|(r, b)| Some((r.clone(), b.as_i64()?)))
                                .collect()
                        })
                        .unwrap_or_default(),
                )
            });
            let rank = doc.get_first(self.f.rank).and_then(|v| v.as_u64());
            let crawls: Vec<String> = crawls_of
                .found(d, int(self.f.from), int(self.f.until))
                .map(|k| names[k].clone())
                .collect();
            out.push(Row {
                host: text(self.f.site),
                url: text(self.f.url),
                from: int(self.f.from),
                until: int(self.f.until),
                rank: rank.filter(|&r| r != u64::MAX),
                source: text(self.f.source),
                hash,
                classes,
                bias,
                stated,
                sitemaps,
                delays,
                crawls,
            });
        }
        Ok(out)
    }
}

/// A row group's columns, in the schema's leaf order.
#[derive(Default)]
struct RowGroup {
    host: Leaf<ByteArrayType>,
    url: Leaf<ByteArrayType>,
    first: Leaf<Int64Type>,
    until: Leaf<Int64Type>,
    latest: Leaf<BoolType>,
    rank: Leaf<Int64Type>,
    source: Leaf<ByteArrayType>,
    hash: Leaf<ByteArrayType>,
    /// Per semantics, a column per agent.
    classes: [Vec<Leaf<ByteArrayType>>; 2],
    /// Per semantics, the map's keys and values.
    bias: [(Leaf<ByteArrayType>, Leaf<Int64Type>); 2],
    usage: Leaf<BoolType>,
    signal: Leaf<BoolType>,
    statements: Leaf<ByteArrayType>,
    sitemaps: Leaf<ByteArrayType>,
    delays: Leaf<DoubleType>,
    crawls: Leaf<ByteArrayType>,
    rows: u64,
}

/// A required list's elements (required): definition 1 for an element,
/// 0 for an empty list; repetition 1 after the row's first.
fn list_of<T: parquet::data_type::DataType>(leaf: &mut Leaf<T>, items: impl Iterator<Item = T::T>) {
    let mut rep = 0;
    for x in items {
        leaf.put(x, 1, rep);
        rep = 1;
    }
    if rep == 0 {
        leaf.none(0, 0);
    }
}

impl RowGroup {
    /// The rows' columns for `agents` agents.
    fn of(agents: usize, rows: &[Row]) -> Result<RowGroup> {
        let ms = |t: i64| t.saturating_mul(1000);
        let names = CLASSES.map(ByteArray::from);
        let mut g = RowGroup {
            classes: [
                (0..agents).map(|_| Leaf::default()).collect(),
                (0..agents).map(|_| Leaf::default()).collect(),
            ],
            ..RowGroup::default()
        };
        let bytes = |s: &str| ByteArray::from(s);
        for r in rows {
            g.host.text(&r.host);
            g.url.text(&r.url);
            g.first.value(ms(r.from));
            g.until.option((r.until != FOREVER).then(|| ms(r.until)));
            g.latest.value(r.until == FOREVER);
            // Unsigned 64-bit: the value's bits.
            g.rank.option(r.rank.map(|x| x as i64));
            g.source.text(&r.source);
            g.hash.text(&r.hash);
            // The classes: an optional group (definition 1) of optional
            // strings (definition 2), each present when the group is.
            for (k, cols) in g.classes.iter_mut().enumerate() {
                match &r.classes[k] {
                    Some(c) => {
                        if c.len() != agents {
                            return Err(IndexError::Request(format!(
                                "the stored classes hold {} agents, not {agents}",
                                c.len()
                            )));
                        }
                        for (col, &b) in cols.iter_mut().zip(c) {
                            let name = names.get(usize::from(b)).ok_or_else(|| {
                                IndexError::Request(format!("an unknown class byte {b}"))
                            })?;
                            col.put(name.clone(), 2, 0);
                        }
                    }
                    None => cols.iter_mut().for_each(|col| col.none(0, 0)),
                }
            }
            // The bias: an optional map (definition 1) of entries
            // (definition 2, repeated at 1), each value optional and
            // present (definition 3).
            for (b, (keys, values)) in r.bias.iter().zip(g.bias.iter_mut()) {
                match b {
                    None => {
                        keys.none(0, 0);
                        values.none(0, 0);
                    }
                    Some(v) if v.is_empty() => {
                        keys.none(1, 0);
                        values.none(1, 0);
                    }
                    Some(v) => {
                        for (i, (robot, x)) in v.iter().enumerate() {
                            let rep = i16::from(i > 0);
                            keys.put(bytes(robot), 2, rep);
                            values.put(*x, 3, rep);
                        }
                    }
                }
            }
            g.usage.value(r.stated.usage);
            g.signal.value(r.stated.signal);
            list_of(
                &mut g.statements,
                r.stated.made().map(|s| ByteArray::from(s.into_bytes())),
            );
            list_of(&mut g.sitemaps, r.sitemaps.iter().map(|s| bytes(s)));
            list_of(&mut g.delays, r.delays.iter().copied());
            list_of(&mut g.crawls, r.crawls.iter().map(|s| bytes(s)));
            g.rows += 1;
        }
        Ok(g)
    }

    fn columns(&self) -> Vec<&dyn Column> {
        let mut c: Vec<&dyn Column> = vec![
            &self.host,
            &self.url,
            &self.first,
            &self.until,
            &self.latest,
            &self.rank,
            &self.source,
            &self.hash,
        ];
        for cols in &self.classes {
            c.extend(cols.iter().map(|l| l as &dyn Column));
        }
        for (keys, values) in &self.bias {
            c.push(keys);
            c.push(values);
        }
        c.extend([
            &self.usage as &dyn Column,
            &self.signal,
            &self.statements,
            &self.sitemaps,
            &self.delays,
            &self.crawls,
        ]);
        c
    }
}

#[cfg(test)]
mod tests {
    use std::io::Seek;

    use parquet::file::reader::{FileReader, SerializedFileReader};

    use super::*;

    fn row(host: &str) -> Row {
        Row {
            host: host.to_owned(),
            url: format!("https://{host}/robots.txt"),
            from: 1_700_000_000,
            until: FOREVER,
            rank: None,
            source: "import".to_owned(),
            hash: vec![1, 2],
            classes: [None, None],
            bias: [None, None],
            stated: Stated::default(),
            sitemaps: Arc::new(Vec::new()),
            delays: Arc::new(Vec::new()),
            crawls: Vec::new(),
        }
    }

    /// `rows` in one row group, read back by the `parquet` crate's record
    /// reader, a row as it shows it.
    fn written(agents: &[String], rows: &[Row]) -> Result<Vec<String>> {
        let mut w = ParquetWriter::new(
            tempfile::tempfile().expect("temp file"),
            index_parquet_schema(agents)?,
            vec![],
        )?;
        w.row_group(&RowGroup::of(agents.len(), rows)?.columns())?;
        let mut f = w.finish()?;
        f.rewind().expect("rewind");
        let r = SerializedFileReader::new(f).expect("a Parquet file");
        Ok(r.get_row_iter(None)
            .expect("rows")
            .map(|row| row.expect("row").to_string())
            .collect())
    }

    #[test]
    fn nested_columns_read_back_at_every_level() {
        let agents = vec!["*".to_owned(), "GPTBot".to_owned()];
        // Everything present, lists of one and of two.
        let mut full = row("a.example");
        full.until = 1_700_086_400;
        full.rank = Some(u64::MAX - 1);
        full.classes = [Some(vec![0, 2]), Some(vec![1, 1])];
        full.bias = [
            Some(vec![("googlebot".to_owned(), 3), ("gptbot".to_owned(), -2)]),
            Some(vec![]),
        ];
        full.stated = Stated {
            usage: true,
            signal: false,
            license: false,
            statements: 1,
        };
        full.sitemaps = Arc::new(vec![
            "https://a.example/1.xml".to_owned(),
            "https://a.example/2.xml".to_owned(),
        ]);
        full.delays = Arc::new(vec![2.5]);
        full.crawls = vec!["CC-MAIN-2024-10".to_owned()];
        // Nothing kept, nothing computed, every list empty.
        let bare = row("b.example");
        let rows = written(&agents, &[full, bare]).expect("written");
        let statement = Stated {
            statements: 1,
            ..Stated::default()
        }
        .made()
        .next()
        .expect("a statement");
        assert_eq!(
            rows[0],
            format!(
                "{{host: \"a.example\", url: \"https://a.example/robots.txt\", \
                 first_seen: 2023-11-14 22:13:20.000 +00:00, until: 2023-11-15 22:13:20.000 +00:00, \
                 latest: false, rank: 18446744073709551614, source: \"import\", hash: [1, 2], \
                 google: {{*: \"none\", GPTBot: \"full\"}}, \
                 draft1996: {{*: \"partial\", GPTBot: \"partial\"}}, \
                 bias_google: {{\"googlebot\" -> 3, \"gptbot\" -> -2}}, bias_draft1996: {{}}, \
                 content_usage: true, content_signal: false, statements: [\"{statement}\"], \
                 sitemaps: [\"https://a.example/1.xml\", \"https://a.example/2.xml\"], \
                 crawl_delays: [2.5], crawls: [\"CC-MAIN-2024-10\"]}}"
            )
        );
        assert_eq!(
            rows[1],
            "{host: \"b.example\", url: \"https://b.example/robots.txt\", \
             first_seen: 2023-11-14 22:13:20.000 +00:00, until: null, latest: true, rank: null, \
             source: \"import\", hash: [1, 2], google: null, draft1996: null, \
             bias_google: null, bias_draft1996: null, content_usage: false, \
             content_signal: false, statements: [], sitemaps: [], crawl_delays: [], crawls: []}"
        );
    }

    #[test]
    fn bad_classes_and_no_agents_are_errors() {
        let agents = vec!["*".to_owned()];
        let mut r = row("a.example");
        r.classes[0] = Some(vec![3]);
        assert!(written(&agents, &[r]).is_err(), "an unknown class byte");
        let mut r = row("a.example");
        r.classes[1] = Some(vec![0, 0]);
        assert!(written(&agents, &[r]).is_err(), "a byte per agent");
        assert!(index_parquet_schema(&[]).is_err());
    }
}
