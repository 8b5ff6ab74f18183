//! The versions in columns (one row each; the columns are the JSON-lines
//! export's, typed: docs/store.md has the schema): with the `arrow`
//! feature as Arrow record batches (the Python package hands them to
//! pyarrow), with the `parquet` feature as Parquet files for researchers'
//! own tools (DuckDB, pandas, pyarrow, Spark), written with the `parquet`
//! crate's column writers ([`crate::parquet_file`]): the versions and any
//! result [`Table`](botscope_text::Table).

use crate::Version;

/// One version's cells, as both formats write them.
struct Cells<'a> {
    /// Milliseconds: Parquet has no timestamp in seconds (it would be a
    /// bare integer to other readers); the values are whole seconds.
    first_ms: i64,
    last_ms: i64,
    hash: String,
    content_type: Option<&'a str>,
    /// Text as text; bytes that are not UTF-8 as they are, beside.
    body: Result<&'a str, &'a [u8]>,
    status: Option<u16>,
    outcome: Option<&'a str>,
    truncated: Option<bool>,
    source: &'static str,
}

impl Cells<'_> {
    fn of(v: &Version) -> Cells<'_> {
        let origin = v.origin.as_ref();
        Cells {
            first_ms: v.first_seen.saturating_mul(1000),
            last_ms: v.last_seen.saturating_mul(1000),
            hash: format!("blake3:{}", crate::hex(&v.hash)),
            content_type: v.content_type.as_deref(),
            body: std::str::from_utf8(&v.body).map_err(|_| &v.body[..]),
            status: origin.map(|o| o.status),
            outcome: origin.map(|o| o.outcome.as_str()).filter(|o| !o.is_empty()),
            truncated: origin.map(|o| o.truncated),
            source: v.source.as_str(),
        }
    }

    /// The bytes the row holds, roughly (for a row group's byte bound).
    #[cfg(feature = "parquet")]
    fn bytes(&self, v: &Version) -> usize {
        v.host.len() + v.url.len() + v.body.len() + self.hash.len() + 64
    }
}

#[cfg(feature = "arrow")]
pub use arrow::{arrow_schema, each_version_batch};

#[cfg(feature = "arrow")]
mod arrow {
    use std::sync::Arc;

    use arrow_array::builder::{
        BinaryBuilder, BooleanBuilder, StringBuilder, TimestampMillisecondBuilder, UInt16Builder,
    };
    use arrow_array::{ArrayRef, RecordBatch};
    use arrow_schema::{DataType, Field, Schema, TimeUnit};

    use super::Cells;
    use crate::{Result, Store, StoreError, Version};

    /// Rows buffered before they are handed on.
    const BATCH: usize = 8_192;
    /// Bytes of text and bodies buffered before they are handed on, however
    /// few rows hold them (8,192 bodies of 500 KiB would be 4 GiB).
    const BATCH_BYTES: usize = 8 << 20;

    /// The schema of the versions' record batches ([`each_version_batch`]);
    /// `export_parquet`'s file has the same columns and types.
    pub fn arrow_schema() -> Schema {
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
        bytes: usize,
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
                bytes: 0,
            }
        }

        fn push(&mut self, v: &Version) {
            let c = Cells::of(v);
            self.bytes += v.host.len() + v.url.len() + v.body.len() + 64;
            self.host.append_value(&v.host);
            self.url.append_value(&v.url);
            self.first_seen.append_value(c.first_ms);
            self.last_seen.append_value(c.last_ms);
            self.hash.append_value(&c.hash);
            self.content_type.append_option(c.content_type);
            match c.body {
                Ok(text) => {
                    self.body.append_value(text);
                    self.body_binary.append_null();
                }
                Err(bytes) => {
                    self.body.append_null();
                    self.body_binary.append_value(bytes);
                }
            }
            self.status.append_option(c.status);
            self.outcome.append_option(c.outcome);
            self.truncated.append_option(c.truncated);
            self.source.append_value(c.source);
            self.rows += 1;
        }

        fn batch(&mut self, schema: &Arc<Schema>) -> std::result::Result<RecordBatch, String> {
            self.rows = 0;
            self.bytes = 0;
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

    /// Every version as one row of a record batch (schema [`arrow_schema()`],
    /// host then first seen order), handed to `f` 8,192 rows or 8 MiB of
    /// text at a time, whichever comes first: the versions are never all
    /// in memory at once. Returns the number of
    /// rows.
    pub fn each_version_batch<S: Store + ?Sized>(
        store: &S,
        f: &mut dyn FnMut(RecordBatch) -> Result<()>,
    ) -> Result<u64> {
        let schema = Arc::new(arrow_schema());
        let mut cols = Columns::new();
        let mut count = 0u64;
        store.each_version(&mut |v| {
            cols.push(&v);
            count += 1;
            if cols.rows >= BATCH || cols.bytes >= BATCH_BYTES {
                f(cols.batch(&schema).map_err(arrow_err)?)?;
            }
            Ok(())
        })?;
        if cols.rows > 0 {
            f(cols.batch(&schema).map_err(arrow_err)?)?;
        }
        Ok(count)
    }
}

#[cfg(feature = "parquet")]
pub use parquet_out::{EachVersion, export_parquet, versions_schema, write_table, write_versions};

#[cfg(feature = "parquet")]
mod parquet_out {
    use std::io::Write;

    use botscope_text::{Cells as TableCells, Table};
    use parquet::data_type::{BoolType, ByteArrayType, DoubleType, Int32Type, Int64Type};
    use parquet::schema::types::TypePtr;

    use super::Cells;
    use crate::parquet_file::{
        Column, Leaf, PARQUET_ROW_GROUP, PARQUET_ROW_GROUP_BYTES, ParquetWriter, binary, boolean,
        double, message, text, timestamp_ms, unsigned,
    };
    use crate::{Result, Store, Version};

    /// The Parquet schema of [`export_parquet`]'s file: the columns and
    /// types of the Arrow batches (`arrow_schema`, feature `arrow`).
    pub fn versions_schema() -> Result<TypePtr> {
        message(vec![
            text("host", false)?,
            text("url", false)?,
            timestamp_ms("first_seen", false)?,
            timestamp_ms("last_seen", false)?,
            text("hash", false)?,
            text("content_type", true)?,
            text("body", true)?,
            binary("body_binary", true)?,
            unsigned("status", 16, true)?,
            text("outcome", true)?,
            boolean("truncated", true)?,
            text("source", false)?,
        ])
    }

    /// A row group of versions being filled.
    #[derive(Default)]
    struct Group {
        host: Leaf<ByteArrayType>,
        url: Leaf<ByteArrayType>,
        first_seen: Leaf<Int64Type>,
        last_seen: Leaf<Int64Type>,
        hash: Leaf<ByteArrayType>,
        content_type: Leaf<ByteArrayType>,
        body: Leaf<ByteArrayType>,
        body_binary: Leaf<ByteArrayType>,
        status: Leaf<Int32Type>,
        outcome: Leaf<ByteArrayType>,
        truncated: Leaf<BoolType>,
        source: Leaf<ByteArrayType>,
        rows: usize,
        bytes: usize,
    }

    impl Group {
        fn push(&mut self, v: &Version) {
            let c = Cells::of(v);
            self.bytes += c.bytes(v);
            self.host.text(&v.host);
            self.url.text(&v.url);
            self.first_seen.value(c.first_ms);
            self.last_seen.value(c.last_ms);
            self.hash.text(&c.hash);
            self.content_type.text_option(c.content_type);
            let (body, bytes) = match c.body {
                Ok(t) => (Some(t.as_bytes()), None),
                Err(b) => (None, Some(b)),
            };
            self.body.text_option(body);
            self.body_binary.text_option(bytes);
            self.status.option(c.status.map(i32::from));
            self.outcome.text_option(c.outcome);
            self.truncated.option(c.truncated);
            self.source.text(c.source);
            self.rows += 1;
        }

        fn write<W: Write + Send>(&mut self, w: &mut ParquetWriter<W>) -> Result<()> {
            w.row_group(&[
                &self.host as &dyn Column,
                &self.url,
                &self.first_seen,
                &self.last_seen,
                &self.hash,
                &self.content_type,
                &self.body,
                &self.body_binary,
                &self.status,
                &self.outcome,
                &self.truncated,
                &self.source,
            ])?;
            *self = Group::default();
            Ok(())
        }
    }

    /// A source of versions: calls its argument with each in turn, as
    /// [`Store::each_version`] does.
    pub type EachVersion<'a> = dyn FnMut(&mut dyn FnMut(Version) -> Result<()>) -> Result<()> + 'a;

    /// The versions `each` hands over, as one row each of a Parquet file
    /// written to `out` ([`versions_schema`]), in row groups of at most
    /// `rows` rows and about `bytes` bytes of values. Returns the number of
    /// rows and `out`, the file complete.
    pub fn write_versions<W: Write + Send>(
        each: &mut EachVersion<'_>,
        out: W,
        (rows, bytes): (usize, usize),
    ) -> Result<(u64, W)> {
        let mut writer = ParquetWriter::new(out, versions_schema()?, Vec::new())?;
        let mut group = Group::default();
        let mut count = 0u64;
        each(&mut |v| {
            group.push(&v);
            count += 1;
            if group.rows >= rows || group.bytes >= bytes {
                group.write(&mut writer)?;
            }
            Ok(())
        })?;
        group.write(&mut writer)?;
        Ok((count, writer.finish()?))
    }

    /// Every version as one row of a Parquet file written to `out` (schema
    /// [`versions_schema`], host then first seen order, Zstd, row groups of
    /// [`PARQUET_ROW_GROUP`] rows or [`PARQUET_ROW_GROUP_BYTES`] of values,
    /// whichever comes first). Returns the number of rows and `out`, the
    /// file complete (its footer written).
    pub fn export_parquet<S: Store + ?Sized, W: Write + Send>(
        store: &S,
        out: W,
    ) -> Result<(u64, W)> {
        write_versions(
            &mut |f| store.each_version(f),
            out,
            (PARQUET_ROW_GROUP, PARQUET_ROW_GROUP_BYTES),
        )
    }

    /// `table` as a Parquet file written to `out` (text as strings, counts
    /// as uint64, reals as float64; a missing value null), in row groups of
    /// [`PARQUET_ROW_GROUP`] rows. Returns `out`, the file complete.
    pub fn write_table<W: Write + Send>(table: &Table, out: W) -> Result<W> {
        let mut fields = Vec::with_capacity(table.columns.len());
        for c in &table.columns {
            fields.push(match &c.cells {
                TableCells::Text(_) | TableCells::Label(_) => text(&c.name, true)?,
                TableCells::Count(_) => unsigned(&c.name, 64, true)?,
                TableCells::Real(_) => double(&c.name, true)?,
            });
        }
        let mut writer = ParquetWriter::new(out, message(fields)?, Vec::new())?;
        let rows = table.rows();
        let mut start = 0;
        while start < rows {
            let end = (start + PARQUET_ROW_GROUP).min(rows);
            let leaves: Vec<Box<dyn Column>> = table
                .columns
                .iter()
                .map(|c| -> Box<dyn Column> {
                    match &c.cells {
                        TableCells::Text(v) | TableCells::Label(v) => {
                            let mut l = Leaf::<ByteArrayType>::default();
                            for x in v.get(start..end).unwrap_or_default() {
                                l.text_option(x.as_deref());
                            }
                            Box::new(l)
                        }
                        TableCells::Count(v) => {
                            let mut l = Leaf::<Int64Type>::default();
                            for x in v.get(start..end).unwrap_or_default() {
                                // Unsigned 64-bit: the value's bits.
                                l.option(x.map(|n| n as i64));
                            }
                            Box::new(l)
                        }
                        TableCells::Real(v) => {
                            let mut l = Leaf::<DoubleType>::default();
                            for x in v.get(start..end).unwrap_or_default() {
                                l.option(*x);
                            }
                            Box::new(l)
                        }
                    }
                })
                .collect();
            let refs: Vec<&dyn Column> = leaves.iter().map(|b| b.as_ref()).collect();
            writer.row_group(&refs)?;
            start = end;
        }
        writer.finish()
    }

    #[cfg(test)]
    mod tests {
        use std::io::Seek;

        use parquet::file::reader::{FileReader, SerializedFileReader};

        use super::*;
        use crate::{Origin, Source};

        fn version(host: &str, body: &[u8], origin: Option<Origin>) -> Version {
            Version {
                host: host.to_owned(),
                url: format!("https://{host}/robots.txt"),
                first_seen: 1_700_000_000,
                last_seen: 1_700_086_400,
                hash: [7; 32],
                body: body.to_vec(),
                content_type: origin.as_ref().map(|_| "text/plain".to_owned()),
                origin,
                source: Source::Warc,
                absent: None,
            }
        }

        /// The file's row groups' row counts and its rows as the `parquet`
        /// crate's record reader shows them.
        fn read_back(mut f: std::fs::File) -> (Vec<i64>, Vec<String>) {
            f.rewind().expect("rewind");
            let r = SerializedFileReader::new(f).expect("a Parquet file");
            let groups = r
                .metadata()
                .row_groups()
                .iter()
                .map(|g| g.num_rows())
                .collect();
            let rows = r
                .get_row_iter(None)
                .expect("rows")
                .map(|row| row.expect("row").to_string())
                .collect();
            (groups, rows)
        }

        fn write(versions: &[Version], limits: (usize, usize)) -> (Vec<i64>, Vec<String>) {
            let f = tempfile::tempfile().expect("temp file");
            let (n, f) = write_versions(
                &mut |each| versions.iter().try_for_each(|v| each(v.clone())),
                f,
                limits,
            )
            .expect("written");
            assert_eq!(n, versions.len() as u64);
            read_back(f)
        }

        fn three() -> Vec<Version> {
            let fetched = Origin {
                status: 200,
                outcome: "parse".to_owned(),
                truncated: false,
                ..Origin::default()
            };
            vec![
                version("a.example", b"User-agent: *\nDisallow: /\n", Some(fetched)),
                version("b.example", b"Disallow: /caf\xe9\n", None),
                version("c.example", b"", None),
            ]
        }

        #[test]
        fn versions_read_back_with_their_nulls_and_types() {
            let (groups, rows) = write(&three(), (PARQUET_ROW_GROUP, PARQUET_ROW_GROUP_BYTES));
            assert_eq!(groups, [3]);
            let hash = format!("blake3:{}", "07".repeat(32));
            assert_eq!(
                rows[0],
                format!(
                    "{{host: \"a.example\", url: \"https://a.example/robots.txt\", \
                     first_seen: 2023-11-14 22:13:20.000 +00:00, last_seen: 2023-11-15 22:13:20.000 +00:00, \
                     hash: \"{hash}\", content_type: \"text/plain\", \
                     body: \"User-agent: *\nDisallow: /\n\", body_binary: null, status: 200, \
                     outcome: \"parse\", truncated: false, source: \"warc\"}}"
                )
            );
            // Not UTF-8: the bytes beside, the text null; no response: no
            // status, outcome or truncation.
            assert!(
                rows[1].contains("body: null, body_binary: [68, 105, 115, 97, 108, 108, 111, 119, 58, 32, 47, 99, 97, 102, 233, 10], status: null, outcome: null, truncated: null"),
                "{}",
                rows[1]
            );
            assert!(
                rows[2].contains("body: \"\", body_binary: null"),
                "{}",
                rows[2]
            );
        }

        #[test]
        fn row_groups_close_at_either_bound() {
            let v = three();
            assert_eq!(write(&v, (2, usize::MAX)).0, [2, 1]);
            // Every row over a byte: a row group each.
            assert_eq!(write(&v, (PARQUET_ROW_GROUP, 1)).0, [1, 1, 1]);
            // No versions: a file with its schema and no row group.
            assert_eq!(write(&[], (2, 1)), (vec![], vec![]));
        }

        #[test]
        fn a_table_reads_back_with_its_nulls() {
            let mut t = Table::default();
            t.push(
                "agent",
                TableCells::Text(vec![Some("GPTBot".into()), None, Some("=1+1".into())]),
            );
            t.push("period", TableCells::Label(vec![Some("2024-03".into()); 3]));
            t.push(
                "full",
                TableCells::Count(vec![Some(3), None, Some(u64::MAX)]),
            );
            t.push("share", TableCells::Real(vec![Some(0.5), Some(1.0), None]));
            let f = write_table(&t, tempfile::tempfile().expect("temp file")).expect("written");
            let (groups, rows) = read_back(f);
            assert_eq!(groups, [3]);
            assert_eq!(
                rows,
                [
                    "{agent: \"GPTBot\", period: \"2024-03\", full: 3, share: 0.5}",
                    "{agent: null, period: \"2024-03\", full: null, share: 1.0}",
                    "{agent: \"=1+1\", period: \"2024-03\", full: 18446744073709551615, share: null}",
                ]
            );
        }
    }
}
