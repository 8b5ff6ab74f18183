//! A WARC file's judged captures as one Arrow record batch, written as an
//! IPC stream: the columns of `botscope.spark`'s captures, so that Spark's
//! `mapInArrow` passes them on without a Python object per capture.

use std::sync::Arc;

use arrow_array::builder::{
    BooleanBuilder, Int8Builder, Int32Builder, Int64Builder, ListBuilder, StringBuilder,
};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{ArrowError, DataType, Field, Schema};
use botscope_index::{CaptureVerdict, Restriction};

/// The captures' schema (`botscope.spark._captures_schema` in Arrow's
/// types): `crawl`, `host`, `time`, `status`, `robots_txt`,
/// `past_budget`, `verdicts` (agent by agent, a [`code`] per method;
/// nulls when the capture brought no file), `file` (the file's place
/// among the job's), `seq` (the capture's place in its file).
pub fn schema() -> Schema {
    let code = Field::new("element", DataType::Int8, true);
    Schema::new(vec![
        Field::new("crawl", DataType::Utf8, false),
        Field::new("host", DataType::Utf8, false),
        Field::new("time", DataType::Int64, false),
        Field::new("status", DataType::Int32, true),
        Field::new("robots_txt", DataType::Boolean, false),
        Field::new("past_budget", DataType::Boolean, false),
        Field::new("verdicts", DataType::List(Arc::new(code)), false),
        Field::new("file", DataType::Int32, false),
        Field::new("seq", DataType::Int64, false),
    ])
}

/// A verdict's code in the `verdicts` column (`botscope.spark` reads 1
/// as `full`, 2 `partial`, 3 `none`).
pub fn code(v: Restriction) -> i8 {
    match v {
        Restriction::Full => 1,
        Restriction::Partial => 2,
        Restriction::None => 3,
    }
}

/// `captures` as an IPC stream of one batch: `agents` × `methods`
/// verdicts each, `name` the file's location (the crawl of a capture
/// whose file names none and whose location holds no `CC-MAIN-…` name),
/// `file` its place among the job's files.
pub fn captures(
    captures: &[CaptureVerdict],
    agents: usize,
    methods: usize,
    name: &str,
    file: i32,
) -> Result<Vec<u8>, ArrowError> {
    let n = captures.len();
    let named = botscope_store::crawl_of(name);
    let mut crawl = StringBuilder::with_capacity(n, n * 16);
    let mut host = StringBuilder::with_capacity(n, n * 24);
    let mut time = Int64Builder::with_capacity(n);
    let mut status = Int32Builder::with_capacity(n);
    let mut found = BooleanBuilder::with_capacity(n);
    let mut past = BooleanBuilder::with_capacity(n);
    let schema = Arc::new(schema());
    let DataType::List(element) = schema.field(6).data_type().clone() else {
        unreachable!("verdicts is a list")
    };
    let mut verdicts =
        ListBuilder::with_capacity(Int8Builder::with_capacity(n * agents * methods), n)
            .with_field(element);
    let mut files = Int32Builder::with_capacity(n);
    let mut seq = Int64Builder::with_capacity(n);
    for (i, c) in captures.iter().enumerate() {
        crawl.append_value(c.crawl.as_deref().or(named.as_deref()).unwrap_or(name));
        host.append_value(&c.host);
        time.append_value(c.time);
        status.append_option(c.status.map(i32::from));
        found.append_value(c.found);
        past.append_value(c.past_budget);
        let codes = verdicts.values();
        for a in 0..agents {
            for m in 0..methods {
                let v = c.verdicts.get(a).and_then(|v| v.get(m)).filter(|_| c.found);
                codes.append_option(v.map(|r| code(*r)));
            }
        }
        verdicts.append(true);
        files.append_value(file);
        seq.append_value(i as i64);
    }
    let columns: Vec<ArrayRef> = vec![
        Arc::new(crawl.finish()),
        Arc::new(host.finish()),
        Arc::new(time.finish()),
        Arc::new(status.finish()),
        Arc::new(found.finish()),
        Arc::new(past.finish()),
        Arc::new(verdicts.finish()),
        Arc::new(files.finish()),
        Arc::new(seq.finish()),
    ];
    let batch = RecordBatch::try_new(schema.clone(), columns)?;
    let mut w = arrow_ipc::writer::StreamWriter::try_new(Vec::new(), &schema)?;
    w.write(&batch)?;
    w.finish()?;
    w.into_inner()
}
