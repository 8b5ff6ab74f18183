//! A WARC file's judged captures as one Arrow record batch, written as an
//! IPC stream: the columns of `botscope.spark`'s captures, so that Spark's
//! `mapInArrow` passes them on without a Python object per capture.

use std::sync::Arc;

use arrow_array::builder::{
    BooleanBuilder, Int32Builder, Int64Builder, ListBuilder, StringBuilder,
};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{ArrowError, DataType, Field, Schema};
use botscope_index::CaptureVerdict;

/// The captures' schema (`botscope.spark._captures_schema` in Arrow's
/// types): `crawl`, `host`, `time`, `status`, `outcome`, `robots_txt`,
/// `past_budget`, `verdicts` (per agent, per method; nulls when the
/// capture brought no file), `source`, `seq`.
pub fn schema() -> Schema {
    let inner = Field::new("element", DataType::Utf8, true);
    let outer = Field::new("element", DataType::List(Arc::new(inner)), false);
    Schema::new(vec![
        Field::new("crawl", DataType::Utf8, false),
        Field::new("host", DataType::Utf8, false),
        Field::new("time", DataType::Int64, false),
        Field::new("status", DataType::Int32, true),
        Field::new("outcome", DataType::Utf8, false),
        Field::new("robots_txt", DataType::Boolean, false),
        Field::new("past_budget", DataType::Boolean, false),
        Field::new("verdicts", DataType::List(Arc::new(outer)), false),
        Field::new("source", DataType::Utf8, false),
        Field::new("seq", DataType::Int64, false),
    ])
}

/// `captures` as an IPC stream of one batch: `agents` × `methods`
/// verdicts each, `name` the file's location (`source`, and the crawl of
/// a capture whose file names none and whose location holds no
/// `CC-MAIN-…` name).
pub fn captures(
    captures: &[CaptureVerdict],
    agents: usize,
    methods: usize,
    name: &str,
) -> Result<Vec<u8>, ArrowError> {
    let n = captures.len();
    let named = botscope_store::crawl_of(name);
    let mut crawl = StringBuilder::with_capacity(n, n * 16);
    let mut host = StringBuilder::with_capacity(n, n * 24);
    let mut time = Int64Builder::with_capacity(n);
    let mut status = Int32Builder::with_capacity(n);
    let mut outcome = StringBuilder::with_capacity(n, n * 8);
    let mut found = BooleanBuilder::with_capacity(n);
    let mut past = BooleanBuilder::with_capacity(n);
    let schema = Arc::new(schema());
    let DataType::List(outer) = schema.field(7).data_type().clone() else {
        unreachable!("verdicts is a list")
    };
    let DataType::List(inner) = outer.data_type().clone() else {
        unreachable!("of lists")
    };
    let mut verdicts = ListBuilder::with_capacity(
        ListBuilder::with_capacity(
            StringBuilder::with_capacity(n * agents * methods, n * agents * methods * 7),
            n * agents,
        )
        .with_field(inner),
        n,
    )
    .with_field(outer);
    let mut source = StringBuilder::with_capacity(n, n * name.len());
    let mut seq = Int64Builder::with_capacity(n);
    for (i, c) in captures.iter().enumerate() {
        crawl.append_value(c.crawl.as_deref().or(named.as_deref()).unwrap_or(name));
        host.append_value(&c.host);
        time.append_value(c.time);
        status.append_option(c.status.map(i32::from));
        outcome.append_value(&c.outcome);
        found.append_value(c.found);
        past.append_value(c.past_budget);
        let per_agent = verdicts.values();
        for a in 0..agents {
            let per_method = per_agent.values();
            for m in 0..methods {
                match c.verdicts.get(a).and_then(|v| v.get(m)).filter(|_| c.found) {
                    Some(r) => per_method.append_value(r.as_str()),
                    None => per_method.append_null(),
                }
            }
            per_agent.append(true);
        }
        verdicts.append(true);
        source.append_value(name);
        seq.append_value(i as i64);
    }
    let columns: Vec<ArrayRef> = vec![
        Arc::new(crawl.finish()),
        Arc::new(host.finish()),
        Arc::new(time.finish()),
        Arc::new(status.finish()),
        Arc::new(outcome.finish()),
        Arc::new(found.finish()),
        Arc::new(past.finish()),
        Arc::new(verdicts.finish()),
        Arc::new(source.finish()),
        Arc::new(seq.finish()),
    ];
    let batch = RecordBatch::try_new(schema.clone(), columns)?;
    let mut w = arrow_ipc::writer::StreamWriter::try_new(Vec::new(), &schema)?;
    w.write(&batch)?;
    w.finish()?;
    w.into_inner()
}
