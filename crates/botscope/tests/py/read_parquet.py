"""Reads a Parquet file botscope wrote, with pyarrow and with DuckDB, and
prints what each saw as one JSON object (the Rust test compares it with
the JSON-lines export)."""
import base64
import json
import sys

import duckdb
import pyarrow.parquet as pq

path = sys.argv[1]
f = pq.ParquetFile(path)
meta = f.metadata
table = f.read()
rows = []
for r in table.to_pylist():
    for k in ("first_seen", "last_seen"):
        r[k] = int(r[k].timestamp())
    if r["body_binary"] is not None:
        r["body_binary"] = base64.b64encode(r["body_binary"]).decode()
    rows.append(r)
con = duckdb.connect()
duck = con.execute(
    "SELECT count(*), count(body), count(body_binary), min(first_seen)::VARCHAR,"
    " count(DISTINCT host), sum(length(body)) FROM read_parquet(?)",
    [path],
).fetchone()
types = dict(con.execute("DESCRIBE SELECT * FROM read_parquet(?)", [path]).fetchall()[i][:2]
             for i in range(len(table.schema)))
print(json.dumps({
    "rows": rows,
    "schema": [[fld.name, str(fld.type), fld.nullable] for fld in table.schema],
    "row_groups": meta.num_row_groups,
    "codecs": sorted({meta.row_group(g).column(c).compression
                      for g in range(meta.num_row_groups)
                      for c in range(meta.num_columns)}),
    "duckdb": {
        "rows": duck[0], "bodies": duck[1], "binary": duck[2],
        "first": duck[3], "hosts": duck[4], "body_chars": duck[5],
        "types": types,
    },
}))
