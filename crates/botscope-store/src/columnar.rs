//! The versions as Arrow record batches (one row each; the columns are the
//! JSON-lines export's, typed: docs/store.md has the schema), and, with
//! the `parquet` feature, Parquet files for researchers' own tools
//! (DuckDB, pandas, pyarrow, Spark), Zstd-compressed, in row groups of
//! DuckDB's size: the versions and any result [`Table`](botscope_text::Table).

#[cfg(feature = "parquet")]
use std::io::Write;
use std::sync::Arc;

use arrow_array::builder::{
    BinaryBuilder, BooleanBuilder, StringBuilder, TimestampMillisecondBuilder, UInt16Builder,
};
use arrow_array::{ArrayRef, RecordBatch};
#[cfg(feature = "parquet")]
use arrow_array::{Float64Array, StringArray, UInt64Array};
use arrow_schema::{DataType, Field, Schema, TimeUnit};
#[cfg(feature = "parquet")]
use botscope_text::{Cells, Table};
#[cfg(feature = "parquet")]
use parquet::arrow::ArrowWriter;
#[cfg(feature = "parquet")]
use parquet::basic::{Compression, ZstdLevel};
#[cfg(feature = "parquet")]
use parquet::file::properties::WriterProperties;

use crate::{Result, Store, StoreError, Version};

/// Rows per row group: DuckDB's own row group size, so that its scans
/// parallelise over groups and skip them by their statistics.
#[cfg(feature = "parquet")]
pub const PARQUET_ROW_GROUP: usize = 122_880;

/// Rows buffered before they are handed to the writer.
const BATCH: usize = 8_192;

/// The schema of the versions' record batches ([`each_version_batch`]),
/// which is also the Parquet schema of `export_parquet`'s file.
pub fn parquet_schema() -> Schema {
    // Milliseconds: Parquet has no timestamp in seconds (it would be a bare
    // integer to other readers); the values are whole seconds.
    let utc = || DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into()));
    Schema::new(vec![
        Field::new("host", DataType::Utf8, false),
        Field::new("url", DataType::Utf8, false),
        Field::new("first_seen", utc(), false),
        Field::new("last_seen", utc(), false),
        Field::new("hash", DataType::Utf8, false),
        Field::new("content_type", DataType::Utf8, true),
        Field::new("body", DataType::Utf8, true),
        Field::new("body_binary", DataType::Binary, true),
        Field::new("status", DataType::UInt16, true),
        Field::new("outcome", DataType::Utf8, true),
        Field::new("truncated", DataType::Boolean, true),
        Field::new("source", DataType::Utf8, false),
    ])
}

/// Columns being filled.
struct Columns {
    host: StringBuilder,
    url: StringBuilder,
    first_seen: TimestampMillisecondBuilder,
    last_seen: TimestampMillisecondBuilder,
    hash: StringBuilder,
    content_type: StringBuilder,
    body: StringBuilder,
    body_binary: BinaryBuilder,
    status: UInt16Builder,
    outcome: StringBuilder,
    truncated: BooleanBuilder,
    source: StringBuilder,
    rows: usize,
}

impl Columns {
    fn new() -> Columns {
        Columns {
            host: StringBuilder::new(),
            url: StringBuilder::new(),
            first_seen: TimestampMillisecondBuilder::new().with_timezone("UTC"),
            last_seen: TimestampMillisecondBuilder::new().with_timezone("UTC"),
            hash: StringBuilder::new(),
            content_type: StringBuilder::new(),
            body: StringBuilder::new(),
            body_binary: BinaryBuilder::new(),
            status: UInt16Builder::new(),
            outcome: StringBuilder::new(),
            truncated: BooleanBuilder::new(),
            source: StringBuilder::new(),
            rows: 0,
        }
    }

    fn push(&mut self, v: &Version) {
        self.host.append_value(&v.host);
        self.url.append_value(&v.url);
        self.first_seen
            .append_value(v.first_seen.saturating_mul(1000));
        self.last_seen
            .append_value(v.last_seen.saturating_mul(1000));
        self.hash
            .append_value(format!("blake3:{}", crate::hex(&v.hash)));
        self.content_type.append_option(v.content_type.as_deref());
        // Text as text; bytes that are not UTF-8 as they are, beside.
        match std::str::from_utf8(&v.body) {
            Ok(text) => {
                self.body.append_value(text);
                self.body_binary.append_null();
            }
            Err(_) => {
                self.body.append_null();
                self.body_binary.append_value(&v.body);
            }
        }
        let origin = v.origin.as_ref();
        self.status.append_option(origin.map(|o| o.status));
        self.outcome
            .append_option(origin.map(|o| o.outcome.as_str()).filter(|o| !o.is_empty()));
        self.truncated.append_option(origin.map(|o| o.truncated));
        self.source.append_value(v.source.as_str());
        self.rows += 1;
    }

    fn batch(&mut self, schema: &Arc<Schema>) -> std::result::Result<RecordBatch, String> {
        self.rows = 0;
        let columns: Vec<ArrayRef> = vec![
            Arc::new(self.host.finish()),
            Arc::new(self.url.finish()),
            Arc::new(self.first_seen.finish()),
            Arc::new(self.last_seen.finish()),
            Arc::new(self.hash.finish()),
            Arc::new(self.content_type.finish()),
            Arc::new(self.body.finish()),
            Arc::new(self.body_binary.finish()),
            Arc::new(self.status.finish()),
            Arc::new(self.outcome.finish()),
            Arc::new(self.truncated.finish()),
            Arc::new(self.source.finish()),
        ];
        RecordBatch::try_new(schema.clone(), columns).map_err(|e| e.to_string())
    }
}

fn arrow_err(e: impl std::fmt::Display) -> StoreError {
    StoreError::Write {
        what: "the Arrow record batch".to_owned(),
        source: std::io::Error::other(e.to_string()),
    }
}

/// Every version as one row of a record batch (schema [`parquet_schema`],
/// host then first seen order), handed to `f` 8,192 rows at a time:
/// the versions are never all in memory at once. Returns the number of
/// rows.
pub fn each_version_batch<S: Store + ?Sized>(
    store: &S,
    f: &mut dyn FnMut(RecordBatch) -> Result<()>,
) -> Result<u64> {
    let schema = Arc::new(parquet_schema());
    let mut cols = Columns::new();
    let mut count = 0u64;
    store.each_version(&mut |v| {
        cols.push(&v);
        count += 1;
        if cols.rows >= BATCH {
            f(cols.batch(&schema).map_err(arrow_err)?)?;
        }
        Ok(())
    })?;
    if cols.rows > 0 {
        f(cols.batch(&schema).map_err(arrow_err)?)?;
    }
    Ok(count)
}

#[cfg(feature = "parquet")]
fn parquet_err(e: impl std::fmt::Display) -> StoreError {
    StoreError::Write {
        what: "the Parquet file".to_owned(),
        source: std::io::Error::other(e.to_string()),
    }
}

#[cfg(feature = "parquet")]
fn properties() -> Result<WriterProperties> {
    parquet_properties(Vec::new())
}

/// The writer settings of every Parquet file botscope writes (Zstd level
/// 3, row groups of [`PARQUET_ROW_GROUP`] rows), with `metadata` as the
/// file's key-value metadata.
#[cfg(feature = "parquet")]
pub fn parquet_properties(metadata: Vec<(String, String)>) -> Result<WriterProperties> {
    let kv: Vec<parquet::file::metadata::KeyValue> = metadata
        .into_iter()
        .map(|(k, v)| parquet::file::metadata::KeyValue::new(k, v))
        .collect();
    Ok(WriterProperties::builder()
        .set_compression(Compression::ZSTD(
            ZstdLevel::try_new(3).map_err(parquet_err)?,
        ))
        .set_max_row_group_row_count(Some(PARQUET_ROW_GROUP))
        .set_key_value_metadata((!kv.is_empty()).then_some(kv))
        .build())
}

/// `table` as a Parquet file written to `out` (text as strings, counts as
/// uint64, reals as float64; a missing value null).
/// Returns `out`, the file complete.
#[cfg(feature = "parquet")]
pub fn write_table<W: Write + Send>(table: &Table, out: W) -> Result<W> {
    let mut fields = Vec::new();
    let mut columns: Vec<ArrayRef> = Vec::new();
    for c in &table.columns {
        let (ty, col): (DataType, ArrayRef) = match &c.cells {
            Cells::Text(v) | Cells::Label(v) => {
                (DataType::Utf8, Arc::new(StringArray::from(v.clone())))
            }
            Cells::Count(v) => (DataType::UInt64, Arc::new(UInt64Array::from(v.clone()))),
            Cells::Real(v) => (DataType::Float64, Arc::new(Float64Array::from(v.clone()))),
        };
        fields.push(Field::new(&c.name, ty, true));
        columns.push(col);
    }
    let schema = Arc::new(Schema::new(fields));
    let batch = RecordBatch::try_new(schema.clone(), columns).map_err(parquet_err)?;
    let mut writer = ArrowWriter::try_new(out, schema, Some(properties()?)).map_err(parquet_err)?;
    writer.write(&batch).map_err(parquet_err)?;
    writer.into_inner().map_err(parquet_err)
}

/// Every version as one row of a Parquet file written to `out` (schema
/// [`parquet_schema`], host then first seen order, Zstd, row groups of
/// [`PARQUET_ROW_GROUP`] rows). Returns the number of rows and `out`,
/// the file complete (its footer written).
#[cfg(feature = "parquet")]
pub fn export_parquet<S: Store + ?Sized, W: Write + Send>(store: &S, out: W) -> Result<(u64, W)> {
    let schema = Arc::new(parquet_schema());
    let mut writer = ArrowWriter::try_new(out, schema, Some(properties()?)).map_err(parquet_err)?;
    let count = each_version_batch(store, &mut |b| writer.write(&b).map_err(parquet_err))?;
    let out = writer.into_inner().map_err(parquet_err)?;
    Ok((count, out))
}
