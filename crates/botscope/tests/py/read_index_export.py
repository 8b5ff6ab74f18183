"""Reads `index export --format parquet`'s file with pyarrow and DuckDB and
prints what each saw as one JSON object (the Rust test compares it with
trends, bias and the files themselves)."""
import json
import sys

import duckdb
import pyarrow.parquet as pq

path = sys.argv[1]
f = pq.ParquetFile(path)
meta = {k.decode(): v.decode() for k, v in (f.metadata.metadata or {}).items()}
rows = []
for r in f.read().to_pylist():
    r["first_seen"] = int(r["first_seen"].timestamp())
    r["until"] = None if r["until"] is None else int(r["until"].timestamp())
    r["hash"] = r["hash"].hex()
    for k in ("bias_google", "bias_draft1996"):
        if r[k] is not None:
            r[k] = dict(r[k])
    rows.append(r)
con = duckdb.connect()
agents = json.loads(meta.get("botscope.agents", "[]"))
gptbot = dict(con.execute(
    "SELECT google.\"GPTBot\", count(*) FROM read_parquet(?) WHERE latest GROUP BY 1",
    [path]).fetchall()) if "GPTBot" in agents else None
googlebot_bias = dict(con.execute(
    "SELECT host, bias_google['googlebot'] FROM read_parquet(?) WHERE latest",
    [path]).fetchall())
print(json.dumps({
    "agents": agents,
    "format": meta.get("botscope.index_format"),
    "rows": rows,
    "row_groups": f.metadata.num_row_groups,
    "duckdb": {"gptbot": gptbot, "googlebot_bias": googlebot_bias},
}, default=str))
