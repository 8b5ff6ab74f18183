"""Reads a result table botscope wrote as Parquet, with pyarrow and DuckDB,
and prints its columns, their types and its rows as JSON."""
import json
import sys

import duckdb
import pyarrow.parquet as pq

path = sys.argv[1]
table = pq.read_table(path)
count = duckdb.connect().execute("SELECT count(*) FROM read_parquet(?)", [path]).fetchone()[0]
print(json.dumps({
    "columns": table.column_names,
    "types": [str(t) for t in table.schema.types],
    "rows": [list(r.values()) for r in table.to_pylist()],
    "duckdb_rows": count,
}))
