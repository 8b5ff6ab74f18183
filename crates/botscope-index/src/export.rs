//! The index's per-version analysis as a Parquet file, for DuckDB, pandas
//! and pyarrow: one row per version (indexed document), with each agent's
//! restriction class under both semantics, the bias per named robot, the
//! usage preferences, sitemaps and Crawl-delays (docs/research.md has the
//! schema).

use std::collections::HashMap;
use std::io::Write;
use std::sync::Arc;

use arrow_array::builder::{
    BinaryBuilder, BooleanBuilder, Float64Builder, Int64Builder, ListBuilder, MapBuilder,
    StringBuilder, TimestampMillisecondBuilder, UInt64Builder,
};
use arrow_array::types::Int8Type;
use arrow_array::{ArrayRef, DictionaryArray, Int8Array, RecordBatch, StringArray, StructArray};
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType, Field, Fields, Schema, TimeUnit};
use botscope_robotstxt::{Robots, Semantics};
use parquet::arrow::ArrowWriter;
use tantivy::schema::{IndexRecordOption, Value};
use tantivy::{DocId, DocSet, SegmentReader, TERMINATED, TantivyDocument, Term};

use crate::classes::{Decider, Stated};
use crate::engine::{FOREVER, Index, io_err, par_map};
use crate::error::{IndexError, Result};
use crate::schema::too_complex_term;

/// Versions per batch (one row group of [`botscope_store::PARQUET_ROW_GROUP`]).
const ROWS: usize = botscope_store::PARQUET_ROW_GROUP;

/// The two semantics in column order.
const SEMANTICS: [Semantics; 2] = [Semantics::Google, Semantics::Draft1996];

fn export_err(e: impl std::fmt::Display) -> IndexError {
    IndexError::Request(format!("the Parquet file: {e}"))
}

/// The restriction classes as stored (`none`, `partial`, `full`).
fn class_type() -> DataType {
    DataType::Dictionary(Box::new(DataType::Int8), Box::new(DataType::Utf8))
}

fn ts() -> DataType {
    DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into()))
}

/// The Parquet schema of [`Index::export_parquet`] for `agents`.
pub fn index_parquet_schema(agents: &[String]) -> Schema {
    let classes = |_: Semantics| {
        Fields::from(
            agents
                .iter()
                .map(|a| Field::new(a, class_type(), true))
                .collect::<Vec<_>>(),
        )
    };
    let bias = || {
        DataType::Map(
            Arc::new(Field::new(
                "entries",
                DataType::Struct(Fields::from(vec![
                    Field::new("key", DataType::Utf8, false),
                    Field::new("value", DataType::Int64, true),
                ])),
                false,
            )),
            false,
        )
    };
    let list = |t: DataType| DataType::List(Arc::new(Field::new("item", t, true)));
    Schema::new(vec![
        Field::new("host", DataType::Utf8, false),
        Field::new("url", DataType::Utf8, false),
        Field::new("first_seen", ts(), false),
        Field::new("until", ts(), true),
        Field::new("latest", DataType::Boolean, false),
        Field::new("rank", DataType::UInt64, true),
        Field::new("source", DataType::Utf8, false),
        Field::new("hash", DataType::Binary, false),
        Field::new("google", DataType::Struct(classes(Semantics::Google)), true),
        Field::new(
            "draft1996",
            DataType::Struct(classes(Semantics::Draft1996)),
            true,
        ),
        Field::new("bias_google", bias(), true),
        Field::new("bias_draft1996", bias(), true),
        Field::new("content_usage", DataType::Boolean, false),
        Field::new("content_signal", DataType::Boolean, false),
        Field::new("statements", list(DataType::Utf8), false),
        Field::new("sitemaps", list(DataType::Utf8), false),
        Field::new("crawl_delays", list(DataType::Float64), false),
        Field::new("crawls", list(DataType::Utf8), false),
    ])
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
    /// order, row groups of [`botscope_store::PARQUET_ROW_GROUP`] made on
    /// the index's threads. Returns the number of rows and `out`, the file
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
        let schema = Arc::new(index_parquet_schema(agents));
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
        let props = botscope_store::parquet_properties(meta)?;
        let mut writer =
            ArrowWriter::try_new(out, schema.clone(), Some(props)).map_err(export_err)?;
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
            let batches = par_map(self.threads, window, |&(i, start)| {
                let seg = &segments[i];
                let end = (start as usize + ROWS).min(seg.max_doc() as usize) as DocId;
                let crawls = (&seg_crawls[i], &names[..]);
                let rows = self.rows(seg, start, end, &deciders, crawls)?;
                batch(&schema, agents, &rows)
            })?;
            for b in batches {
                rows += b.num_rows() as u64;
                writer.write(&b).map_err(export_err)?;
            }
        }
        let out = writer.into_inner().map_err(export_err)?;
        Ok((rows, out))
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

/// The rows as one record batch of `schema`.
fn batch(schema: &Arc<Schema>, agents: &[String], rows: &[Row]) -> Result<RecordBatch> {
    let ms = |t: i64| t.saturating_mul(1000);
    let mut host = StringBuilder::new();
    let mut url = StringBuilder::new();
    let mut first = TimestampMillisecondBuilder::new().with_timezone("UTC");
    let mut until = TimestampMillisecondBuilder::new().with_timezone("UTC");
    let mut latest = BooleanBuilder::new();
    let mut rank = UInt64Builder::new();
    let mut source = StringBuilder::new();
    let mut hash = BinaryBuilder::new();
    let mut usage = BooleanBuilder::new();
    let mut signal = BooleanBuilder::new();
    let mut statements = ListBuilder::new(StringBuilder::new());
    let mut sitemaps = ListBuilder::new(StringBuilder::new());
    let mut delays = ListBuilder::new(Float64Builder::new());
    let mut crawls = ListBuilder::new(StringBuilder::new());
    let mut bias = [
        MapBuilder::new(None, StringBuilder::new(), Int64Builder::new()),
        MapBuilder::new(None, StringBuilder::new(), Int64Builder::new()),
    ];
    for r in rows {
        host.append_value(&r.host);
        url.append_value(&r.url);
        first.append_value(ms(r.from));
        if r.until == FOREVER {
            until.append_null();
        } else {
            until.append_value(ms(r.until));
        }
        latest.append_value(r.until == FOREVER);
        rank.append_option(r.rank);
        source.append_value(&r.source);
        hash.append_value(&r.hash);
        usage.append_value(r.stated.usage);
        signal.append_value(r.stated.signal);
        for s in r.stated.made() {
            statements.values().append_value(s);
        }
        statements.append(true);
        for s in r.sitemaps.iter() {
            sitemaps.values().append_value(s);
        }
        sitemaps.append(true);
        for &x in r.delays.iter() {
            delays.values().append_value(x);
        }
        delays.append(true);
        for c in &r.crawls {
            crawls.values().append_value(c);
        }
        crawls.append(true);
        for (b, m) in r.bias.iter().zip(bias.iter_mut()) {
            match b {
                Some(v) => {
                    for (robot, x) in v {
                        m.keys().append_value(robot);
                        m.values().append_value(*x);
                    }
                    m.append(true).map_err(export_err)?;
                }
                None => m.append(false).map_err(export_err)?,
            }
        }
    }
    let names = Arc::new(StringArray::from(vec!["none", "partial", "full"]));
    let structs: Vec<ArrayRef> = (0..2)
        .map(|k| -> Result<ArrayRef> {
            let DataType::Struct(fields) = schema.field(8 + k).data_type().clone() else {
                return Err(export_err("the schema"));
            };
            let columns: Vec<ArrayRef> = (0..agents.len())
                .map(|a| -> Result<ArrayRef> {
                    let keys: Int8Array = rows
                        .iter()
                        .map(|r| r.classes[k].as_ref().map(|c| c[a] as i8))
                        .collect();
                    Ok(Arc::new(
                        DictionaryArray::<Int8Type>::try_new(keys, names.clone())
                            .map_err(export_err)?,
                    ))
                })
                .collect::<Result<_>>()?;
            let valid: Vec<bool> = rows.iter().map(|r| r.classes[k].is_some()).collect();
            Ok(Arc::new(
                StructArray::try_new(fields, columns, Some(NullBuffer::from(valid)))
                    .map_err(export_err)?,
            ))
        })
        .collect::<Result<_>>()?;
    let [bg, bd] = bias;
    let columns: Vec<ArrayRef> = vec![
        Arc::new(host.finish()),
        Arc::new(url.finish()),
        Arc::new(first.finish()),
        Arc::new(until.finish()),
        Arc::new(latest.finish()),
        Arc::new(rank.finish()),
        Arc::new(source.finish()),
        Arc::new(hash.finish()),
        structs[0].clone(),
        structs[1].clone(),
        Arc::new({ bg }.finish()),
        Arc::new({ bd }.finish()),
        Arc::new(usage.finish()),
        Arc::new(signal.finish()),
        Arc::new(statements.finish()),
        Arc::new(sitemaps.finish()),
        Arc::new(delays.finish()),
        Arc::new(crawls.finish()),
    ];
    RecordBatch::try_new(schema.clone(), columns).map_err(export_err)
}
