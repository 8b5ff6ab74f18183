"""Reads an index export with DuckDB and prints, per version (by host,
then first seen), its host and the crawls that found it, as JSON."""
import json
import sys

import duckdb

rows = duckdb.connect().execute(
    "SELECT host, crawls FROM read_parquet(?) ORDER BY host, first_seen", [sys.argv[1]]
).fetchall()
print(json.dumps([[host, list(crawls)] for host, crawls in rows]))
