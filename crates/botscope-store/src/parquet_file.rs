//! Parquet files written with the `parquet` crate's own column writers (no
//! Arrow in between): a schema made of the few shapes botscope writes, a
//! leaf column's values with their definition and repetition levels, and a
//! writer that takes one row group at a time. Every file is
//! Zstd-compressed (level 3) with statistics per page, as DuckDB, pandas,
//! pyarrow and Spark read it.
//!
//! Levels, for those who fill nested columns (the Dremel encoding): a
//! leaf's definition level counts how many of the optional or repeated
//! fields on its path are present; its repetition level says at which
//! repeated field on the path a value continues the same row (0: a new
//! row). A required top-level column has neither.

use std::io::Write;
use std::sync::Arc;

use parquet::basic::{
    Compression, FieldRepetitionType, LogicalType, TimeUnit, Type as Physical, ZstdLevel,
};
use parquet::column::writer::ColumnWriter;
use parquet::data_type::{ByteArray, ByteArrayType, DataType};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::{Type, TypePtr};

use crate::{Result, StoreError};

/// Rows per row group at most: DuckDB's own row group size, so that its
/// scans parallelise over groups and skip them by their statistics.
pub const PARQUET_ROW_GROUP: usize = 122_880;

/// Bytes of values buffered for one row group at most (a row group is
/// held in memory until it is written): large bodies close a group before
/// its rows reach [`PARQUET_ROW_GROUP`].
pub const PARQUET_ROW_GROUP_BYTES: usize = 64 << 20;

pub(crate) fn parquet_err(e: impl std::fmt::Display) -> StoreError {
    StoreError::Write {
        what: "the Parquet file".to_owned(),
        source: std::io::Error::other(e.to_string()),
    }
}

fn presence(nullable: bool) -> FieldRepetitionType {
    if nullable {
        FieldRepetitionType::OPTIONAL
    } else {
        FieldRepetitionType::REQUIRED
    }
}

fn leaf(
    name: &str,
    physical: Physical,
    logical: Option<LogicalType>,
    nullable: bool,
) -> Result<TypePtr> {
    Type::primitive_type_builder(name, physical)
        .with_repetition(presence(nullable))
        .with_logical_type(logical)
        .build()
        .map(Arc::new)
        .map_err(parquet_err)
}

/// A UTF-8 string column.
pub fn text(name: &str, nullable: bool) -> Result<TypePtr> {
    leaf(
        name,
        Physical::BYTE_ARRAY,
        Some(LogicalType::String),
        nullable,
    )
}

/// A column of bytes.
pub fn binary(name: &str, nullable: bool) -> Result<TypePtr> {
    leaf(name, Physical::BYTE_ARRAY, None, nullable)
}

/// Milliseconds since 1970 in UTC (pyarrow: `timestamp[ms, tz=UTC]`;
/// DuckDB: `TIMESTAMP WITH TIME ZONE`), written as `i64`.
pub fn timestamp_ms(name: &str, nullable: bool) -> Result<TypePtr> {
    leaf(
        name,
        Physical::INT64,
        Some(LogicalType::timestamp(true, TimeUnit::MILLIS)),
        nullable,
    )
}

/// An unsigned integer of `bits` (8, 16, 32 or 64), written as `i32` up to
/// 32 bits and as `i64` (the value's bits) at 64.
pub fn unsigned(name: &str, bits: i8, nullable: bool) -> Result<TypePtr> {
    let physical = if bits > 32 {
        Physical::INT64
    } else {
        Physical::INT32
    };
    leaf(
        name,
        physical,
        Some(LogicalType::integer(bits, false)),
        nullable,
    )
}

/// A signed 64-bit integer.
pub fn int64(name: &str, nullable: bool) -> Result<TypePtr> {
    leaf(name, Physical::INT64, None, nullable)
}

/// A boolean.
pub fn boolean(name: &str, nullable: bool) -> Result<TypePtr> {
    leaf(name, Physical::BOOLEAN, None, nullable)
}

/// A 64-bit float.
pub fn double(name: &str, nullable: bool) -> Result<TypePtr> {
    leaf(name, Physical::DOUBLE, None, nullable)
}

fn group_of(
    name: &str,
    fields: Vec<TypePtr>,
    repetition: FieldRepetitionType,
    logical: Option<LogicalType>,
) -> Result<TypePtr> {
    Type::group_type_builder(name)
        .with_repetition(repetition)
        .with_logical_type(logical)
        .with_fields(fields)
        .build()
        .map(Arc::new)
        .map_err(parquet_err)
}

/// A struct of `fields`.
pub fn group(name: &str, fields: Vec<TypePtr>, nullable: bool) -> Result<TypePtr> {
    group_of(name, fields, presence(nullable), None)
}

/// A list in the standard three levels (`name` / `list` / `element`);
/// `element` must be named `element`. Levels of the element, below this
/// list's own: definition +1 for an entry (+1 more if the element is
/// present and optional), repetition +1.
pub fn list(name: &str, element: TypePtr, nullable: bool) -> Result<TypePtr> {
    let entries = group_of("list", vec![element], FieldRepetitionType::REPEATED, None)?;
    group_of(
        name,
        vec![entries],
        presence(nullable),
        Some(LogicalType::List),
    )
}

/// A map in the standard three levels (`name` / `key_value` / `key`,
/// `value`); `key` must be required and named `key`, `value` named `value`.
pub fn map(name: &str, key: TypePtr, value: TypePtr, nullable: bool) -> Result<TypePtr> {
    let entries = group_of(
        "key_value",
        vec![key, value],
        FieldRepetitionType::REPEATED,
        None,
    )?;
    group_of(
        name,
        vec![entries],
        presence(nullable),
        Some(LogicalType::Map),
    )
}

/// A file's schema: its top-level columns.
pub fn message(fields: Vec<TypePtr>) -> Result<TypePtr> {
    Type::group_type_builder("schema")
        .with_fields(fields)
        .build()
        .map(Arc::new)
        .map_err(parquet_err)
}

/// One leaf column of a row group: its present values in order, and a
/// definition and a repetition level per slot (a value or a null or an
/// empty list). Levels the schema does not have (a required top-level
/// column's) are not written.
pub struct Leaf<T: DataType> {
    values: Vec<T::T>,
    def: Vec<i16>,
    rep: Vec<i16>,
}

impl<T: DataType> Default for Leaf<T> {
    fn default() -> Self {
        Leaf {
            values: Vec::new(),
            def: Vec::new(),
            rep: Vec::new(),
        }
    }
}

impl<T: DataType> Leaf<T> {
    /// A value present at definition level `def`, repetition level `rep`.
    pub fn put(&mut self, v: T::T, def: i16, rep: i16) {
        self.values.push(v);
        self.def.push(def);
        self.rep.push(rep);
    }

    /// No value: a null or an empty list at definition level `def`.
    pub fn none(&mut self, def: i16, rep: i16) {
        self.def.push(def);
        self.rep.push(rep);
    }

    /// A top-level column's value (required, or optional and present).
    pub fn value(&mut self, v: T::T) {
        self.put(v, 1, 0);
    }

    /// A top-level optional column's value or null.
    pub fn option(&mut self, v: Option<T::T>) {
        match v {
            Some(v) => self.put(v, 1, 0),
            None => self.none(0, 0),
        }
    }
}

impl Leaf<ByteArrayType> {
    /// A top-level column's string or bytes.
    pub fn text(&mut self, v: impl AsRef<[u8]>) {
        self.value(ByteArray::from(v.as_ref().to_vec()));
    }

    /// A top-level optional column's string or bytes, or null.
    pub fn text_option(&mut self, v: Option<impl AsRef<[u8]>>) {
        self.option(v.map(|v| ByteArray::from(v.as_ref().to_vec())));
    }
}

/// A leaf column a row group is made of, whatever its type.
pub trait Column: Send {
    /// Writes the column's values and levels through `w`, which must be
    /// of the column's physical type.
    fn write_to(&self, w: &mut ColumnWriter<'_>) -> Result<()>;
    /// The slots (values, nulls and empty lists) it holds.
    fn slots(&self) -> usize;
}

impl<T: DataType> Column for Leaf<T> {
    fn slots(&self) -> usize {
        self.def.len()
    }

    fn write_to(&self, w: &mut ColumnWriter<'_>) -> Result<()> {
        let w = T::get_column_writer_mut(w)
            .ok_or_else(|| parquet_err("a column's values are not of its schema's type"))?;
        let descr = w.get_descriptor().clone();
        let def = (descr.max_def_level() > 0).then_some(&self.def[..]);
        let rep = (descr.max_rep_level() > 0).then_some(&self.rep[..]);
        if def.is_none() && self.values.len() != self.def.len() {
            return Err(parquet_err(format!(
                "the required column `{}` has a null",
                descr.name()
            )));
        }
        w.write_batch(&self.values, def, rep).map_err(parquet_err)?;
        Ok(())
    }
}

/// The writer settings of every Parquet file botscope writes: Zstd level
/// 3, statistics per page, `metadata` as the file's key-value metadata.
fn properties(metadata: Vec<(String, String)>) -> Result<WriterProperties> {
    let kv: Vec<KeyValue> = metadata
        .into_iter()
        .map(|(k, v)| KeyValue::new(k, v))
        .collect();
    Ok(WriterProperties::builder()
        .set_compression(Compression::ZSTD(
            ZstdLevel::try_new(3).map_err(parquet_err)?,
        ))
        .set_key_value_metadata((!kv.is_empty()).then_some(kv))
        .build())
}

/// A Parquet file being written to `W`, one row group at a time.
pub struct ParquetWriter<W: Write + Send> {
    inner: SerializedFileWriter<W>,
}

impl<W: Write + Send> ParquetWriter<W> {
    /// A file of `schema` (made by [`message`]) with `metadata` as its
    /// key-value metadata.
    pub fn new(out: W, schema: TypePtr, metadata: Vec<(String, String)>) -> Result<Self> {
        let props = Arc::new(properties(metadata)?);
        let inner = SerializedFileWriter::new(out, schema, props).map_err(parquet_err)?;
        Ok(ParquetWriter { inner })
    }

    /// Writes one row group: `columns` are the schema's leaves in order
    /// (depth first), each holding the same rows. Nothing is written for
    /// no rows.
    pub fn row_group(&mut self, columns: &[&dyn Column]) -> Result<()> {
        if columns.iter().all(|c| c.slots() == 0) {
            return Ok(());
        }
        let mut rg = self.inner.next_row_group().map_err(parquet_err)?;
        for c in columns {
            let mut col = rg
                .next_column()
                .map_err(parquet_err)?
                .ok_or_else(|| parquet_err("more columns than the schema has"))?;
            c.write_to(col.untyped())?;
            col.close().map_err(parquet_err)?;
        }
        if rg.next_column().map_err(parquet_err)?.is_some() {
            return Err(parquet_err("fewer columns than the schema has"));
        }
        rg.close().map_err(parquet_err)?;
        Ok(())
    }

    /// Writes the footer; returns `out`, the file complete.
    pub fn finish(self) -> Result<W> {
        self.inner.into_inner().map_err(parquet_err)
    }
}
