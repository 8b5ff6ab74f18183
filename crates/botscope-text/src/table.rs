//! A result table (a command's rows, column by column, typed), written as
//! CSV here and as Parquet by botscope-store: one set of columns, named as
//! in the command's JSON, whatever the encoding.

/// One column's cells.
#[derive(Debug, Clone, PartialEq)]
pub enum Cells {
    /// Text (untrusted: quoted and escaped for CSV, exact in Parquet).
    Text(Vec<Option<String>>),
    /// Text the program makes (dates, period labels): written bare in CSV,
    /// so it must hold no comma, quote or line break.
    Label(Vec<Option<String>>),
    /// Counts.
    Count(Vec<Option<u64>>),
    /// Real numbers.
    Real(Vec<Option<f64>>),
}

impl Cells {
    fn len(&self) -> usize {
        match self {
            Cells::Text(v) | Cells::Label(v) => v.len(),
            Cells::Count(v) => v.len(),
            Cells::Real(v) => v.len(),
        }
    }
}

/// A named column.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    /// Its name, as the command's JSON names the value.
    pub name: String,
    /// Its cells, one per row.
    pub cells: Cells,
}

/// Columns of equal length.
///
/// ```
/// use botscope_text::{Cells, Table};
/// let mut t = Table::default();
/// t.push("robot", Cells::Text(vec![Some("=cmd".into()), None]));
/// t.push("n", Cells::Count(vec![Some(3), Some(4)]));
/// assert_eq!(t.rows(), 2);
/// assert_eq!(t.to_csv(), "robot,n\n\"'=cmd\",3\n,4\n");
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Table {
    /// The columns, in order.
    pub columns: Vec<Column>,
}

impl Table {
    /// Adds a column (as long as those before it).
    pub fn push(&mut self, name: &str, cells: Cells) {
        debug_assert!(
            self.columns
                .first()
                .is_none_or(|c| c.cells.len() == cells.len())
        );
        self.columns.push(Column {
            name: name.to_owned(),
            cells,
        });
    }

    /// Rows.
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |c| c.cells.len())
    }

    /// CSV with a header: text quoted and escaped ([`crate::csv_cell`]),
    /// labels and numbers bare, a missing value empty.
    pub fn to_csv(&self) -> String {
        use std::fmt::Write;
        let mut o = String::new();
        let names: Vec<&str> = self.columns.iter().map(|c| c.name.as_str()).collect();
        o.push_str(&names.join(","));
        o.push('\n');
        for r in 0..self.rows() {
            for (i, c) in self.columns.iter().enumerate() {
                if i > 0 {
                    o.push(',');
                }
                let _ = match &c.cells {
                    Cells::Text(v) => match &v[r] {
                        Some(s) => write!(o, "\"{}\"", crate::csv_cell(s).replace('"', "\"\"")),
                        None => Ok(()),
                    },
                    Cells::Label(v) => v[r].as_deref().map_or(Ok(()), |x| {
                        debug_assert!(!x.contains([',', '"', '\n', '\r']));
                        write!(o, "{x}")
                    }),
                    Cells::Count(v) => v[r].map_or(Ok(()), |x| write!(o, "{x}")),
                    Cells::Real(v) => v[r].map_or(Ok(()), |x| write!(o, "{x}")),
                };
            }
            o.push('\n');
        }
        o
    }
}
