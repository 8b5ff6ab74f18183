"""Common Crawl's robots.txt on Spark: per crawl, site and agent, the
verdict of "Somesite I Used To Crawl" and the class of "Consent in
Crisis" (or botscope's exact engine), judged inside the executors by
botscope's engine (one call per WARC file, no process per record)::

    from botscope.spark import site_verdicts
    df = site_verdicts(spark,
        "https://data.commoncrawl.org/crawl-data/CC-MAIN-2024-10/robotstxt.paths.gz",
        ["GPTBot", "CCBot"], method="somesite")
    df.groupBy("crawl", "agent", "verdict").count().show()

Each site counts once per crawl, as the crawl's last capture of it found
it (a capture at the same second that brought a file wins), exactly as
``botscope trends --by crawl`` counts it after ``botscope store
import``: the same fetch policy reads each response (a 404 brings no
file; a body is cut at 500 KiB), and the same methods judge it.

As a job: ``python -m botscope.spark --paths LIST --out DIR`` (Spark in
local mode), or the same file given to ``spark-submit`` on a cluster
(docs/spark.md). The executors need the ``botscope`` package and
``pyarrow`` (and ``boto3`` for ``s3://`` locations) in their Python: each
file's captures reach Spark as Arrow batches (``mapInArrow``).
"""

from __future__ import annotations

import argparse
import gzip
import io
import os
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from typing import Iterator, List, Optional, Sequence, Tuple, Union

from botscope import _botscope

#: The 24 AI User-Agents of "Somesite I Used To Crawl", as their script
#: passes them to Google's matcher: the agents when none are named.
SOMESITE_AGENTS: List[str] = list(_botscope.SOMESITE_AGENTS)

#: Where Common Crawl's files are served over HTTPS (the paths lists'
#: entries are relative to it, as to ``s3://commoncrawl/``).
COMMON_CRAWL = "https://data.commoncrawl.org/"

#: ``exact`` (botscope's classes, ``--semantics``), ``somesite`` (Liu et
#: al., IMC 2025, as their script judges) and ``cic`` (Longpre et al.,
#: 2024, as their parser read files).
METHODS = ("exact", "somesite", "cic")

#: Largest paths list read (Common Crawl's are about 1 MB compressed).
MAX_PATHS_LIST_BYTES = 64 * 1024 * 1024

#: Largest WARC file copied from a URL (as ``botscope store import``
#: caps its downloads).
MAX_WARC_BYTES = 64 << 30

Paths = Union[str, "os.PathLike[str]", Sequence[str]]


def _plain(text: str) -> str:
    """``text`` with control characters escaped (``\\x1b``): locations and
    messages come from strangers' paths lists and files, and end up on a
    terminal."""
    return "".join(
        c if c.isprintable() or c == " " else c.encode("unicode_escape").decode("ascii")
        for c in text
    )


def _is_url(location: str) -> bool:
    return urllib.parse.urlsplit(location).scheme in ("http", "https", "s3", "s3a", "file")


def _base_of(location: str) -> Optional[str]:
    """What a paths list's entries are relative to: the part of its own
    location before ``crawl-data/`` (Common Crawl's layout, and
    ``botscope store synth``'s)."""
    at = location.rfind("crawl-data/")
    return location[:at] if at >= 0 else None


def _join(base: str, entry: str) -> str:
    if _is_url(entry) or os.path.isabs(entry):
        return entry
    if _is_url(base):
        return base.rstrip("/") + "/" + entry
    return os.path.join(base, entry)


def _read_capped(stream, what: str) -> bytes:
    data = stream.read(MAX_PATHS_LIST_BYTES + 1)
    if len(data) > MAX_PATHS_LIST_BYTES:
        raise ValueError(_plain(f"{what}: a paths list is at most {MAX_PATHS_LIST_BYTES} bytes"))
    return data


def _open_location(location: str):
    """A readable binary stream of a local path, ``file:``, ``http(s)://``
    or ``s3://`` location."""
    parts = urllib.parse.urlsplit(location)
    if parts.scheme in ("http", "https"):
        req = urllib.request.Request(location, headers={"User-Agent": "botscope-spark"})
        return urllib.request.urlopen(req, timeout=120)
    if parts.scheme in ("s3", "s3a"):
        try:
            import boto3
        except ImportError:
            raise ValueError(
                f"{location}: reading s3:// needs boto3 (pip install boto3), "
                f"or give the files by {COMMON_CRAWL}"
            ) from None
        obj = boto3.client("s3").get_object(Bucket=parts.netloc, Key=parts.path.lstrip("/"))
        return obj["Body"]
    if parts.scheme == "file":
        return open(urllib.request.url2pathname(parts.path), "rb")
    return open(location, "rb")


def read_paths(source: Union[str, "os.PathLike[str]"], base: Optional[str] = None) -> List[str]:
    """The WARC files a paths list names (``robotstxt.paths.gz`` as Common
    Crawl publishes it, gzip or plain, local or a URL), each made a full
    location: relative entries are joined to ``base``, by default the part
    of the list's own location before ``crawl-data/``."""
    source = os.fspath(source)
    with _open_location(source) as f:
        data = _read_capped(f, source)
    if data[:2] == b"\x1f\x8b":
        data = _read_capped(gzip.GzipFile(fileobj=io.BytesIO(data)), source)
    base = base if base is not None else _base_of(source)
    out = []
    for line in data.decode("utf-8", "replace").splitlines():
        entry = line.strip()
        if not entry or entry.startswith("#"):
            continue
        if base is None and not (_is_url(entry) or os.path.isabs(entry)):
            raise ValueError(
                f"{_plain(source)}: `{_plain(entry)}` is relative and the list is not under "
                "crawl-data/: give base="
            )
        out.append(_join(base, entry) if base is not None else entry)
    return out


def _locations(warc_paths: Paths, base: Optional[str]) -> List[str]:
    """Full locations; local ones absolute (the executors' working
    directory is not the driver's)."""
    if isinstance(warc_paths, (str, os.PathLike)):
        one = os.fspath(warc_paths)
        found = [one] if one.endswith((".warc", ".warc.gz")) else read_paths(one, base)
    else:
        found = [os.fspath(p) for p in warc_paths]
        if base is not None:
            found = [_join(base, p) for p in found]
    return [p if _is_url(p) else os.path.abspath(p) for p in found]


def _local_copy(location: str) -> Tuple[str, Optional[str]]:
    """A local file holding the WARC at ``location``, and the temporary
    file to remove after (None when it is the location itself)."""
    parts = urllib.parse.urlsplit(location)
    if parts.scheme == "":
        return location, None
    if parts.scheme == "file":
        return urllib.request.url2pathname(parts.path), None
    fd, tmp = tempfile.mkstemp(suffix=".warc.gz", prefix="botscope-")
    try:
        with os.fdopen(fd, "wb") as out, _open_location(location) as src:
            copied = 0
            while True:
                chunk = src.read(1 << 20)
                if not chunk:
                    break
                copied += len(chunk)
                if copied > MAX_WARC_BYTES:
                    raise ValueError(_plain(f"{location}: larger than {MAX_WARC_BYTES >> 30} GiB, not read"))
                out.write(chunk)
    except BaseException:
        os.unlink(tmp)
        raise
    return tmp, tmp


#: Rows per Arrow batch handed to Spark (its own default batch size).
BATCH_ROWS = 10_000


def _judge_file(location: str, file: int, agents: List[str], methods: List[str], semantics: str) -> Iterator:
    """One WARC file's captures, as Arrow record batches of the captures'
    schema (made in botscope's engine, passed on as they are); ``file``
    is its place among the job's files."""
    import pyarrow as pa

    path, tmp = _local_copy(location)
    try:
        stream, n, counts, damage = _botscope._warc_verdicts(path, agents, methods, semantics, location, file)
    finally:
        if tmp:
            os.unlink(tmp)
    if damage is not None and not n:
        raise ValueError(_plain(f"{location}: {damage}"))
    # What could not be read is said in the executor's log, never dropped
    # silently: a damaged file's captures before the damage are kept.
    lost = {k: counts[k] for k in ("skipped", "unreadable") if counts.get(k)}
    if damage is not None or lost:
        what = ", ".join(f"{n} records {k}" for k, n in lost.items())
        if damage is not None:
            what = f"damaged after {n} captures ({damage})" + (f"; {what}" if what else "")
        print(_plain(f"botscope.spark: {location}: {what}"), file=sys.stderr)
    for batch in pa.ipc.open_stream(stream):
        for at in range(0, batch.num_rows, BATCH_ROWS):
            yield batch.slice(at, BATCH_ROWS)


def _judge_locations(batches: Iterator, agents: List[str], methods: List[str], semantics: str) -> Iterator:
    """``mapInArrow``'s function: each (location, file) of the input
    batches judged in turn."""
    for b in batches:
        for location, file in zip(b.column(0).to_pylist(), b.column(1).to_pylist()):
            yield from _judge_file(location, file, agents, methods, semantics)


def _captures_schema():
    from pyspark.sql import types as T

    return T.StructType(
        [
            T.StructField("crawl", T.StringType(), False),
            T.StructField("host", T.StringType(), False),
            T.StructField("time", T.LongType(), False),
            T.StructField("status", T.IntegerType(), True),
            T.StructField("robots_txt", T.BooleanType(), False),
            T.StructField("past_budget", T.BooleanType(), False),
            T.StructField("verdicts", T.ArrayType(T.ByteType(), True), False),
            T.StructField("file", T.IntegerType(), False),
            T.StructField("seq", T.LongType(), False),
        ]
    )


def site_verdicts(
    spark,
    warc_paths: Paths,
    agents: Optional[Sequence[str]] = None,
    method: Union[str, Sequence[str]] = "somesite",
    *,
    base: Optional[str] = None,
    semantics: str = "google",
    partitions: Optional[int] = None,
):
    """Per crawl, site and agent, how a crawl's last capture of each site
    treats the agent, as a Spark DataFrame.

    ``warc_paths``: a paths list (``…/robotstxt.paths.gz``, local, URL or
    ``s3://``), one ``.warc.gz`` file, or a sequence of WARC locations
    (relative ones joined to ``base``). ``agents``: by default the 24 of
    "Somesite I Used To Crawl". ``method``: ``somesite``, ``cic`` or
    ``exact``; a sequence of them gives a column per method instead of
    ``verdict``. ``partitions``: Spark partitions of the files (one per
    file by default).

    Columns: ``crawl`` (the WARC's ``isPartOf``, else the ``CC-MAIN-…``
    name in its path, else its location), ``host``, ``agent``, ``verdict``
    (``full``, ``partial``, ``none``; null when the capture brought no
    robots.txt), ``captured`` (timestamp), ``status``, ``robots_txt``
    (the capture brought a file) and ``past_budget`` (a method was past
    its work budget on the file, judged as the exact engine judges it).
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    methods = [method] if isinstance(method, str) else list(method)
    if not methods:
        raise ValueError("no method: give somesite, cic or exact")
    for m in methods:
        if m not in METHODS:
            raise ValueError(f"unknown method `{m}` (expected exact, somesite or cic)")
    agents = list(agents) if agents is not None else list(SOMESITE_AGENTS)
    if not agents:
        raise ValueError("no agents: name at least one")
    locations = _locations(warc_paths, base)
    if not locations:
        raise ValueError("no WARC files to read")

    # A task per file (by default), each file's captures made as Arrow
    # batches by the engine and handed to Spark as they are. A file's
    # place is its location's in name order (Common Crawl's segments).
    n = partitions or len(locations)
    place = {loc: i for i, loc in enumerate(sorted(set(locations)))}
    files = spark.sparkContext.parallelize(
        [(loc, place[loc]) for loc in locations], max(1, min(n, len(locations)))
    )
    captures = spark.createDataFrame(files, "location string, file int").mapInArrow(
        lambda batches: _judge_locations(batches, agents, methods, semantics), _captures_schema()
    )

    # The crawl's last capture of each site; at one second, one that
    # brought a file (the store's rule), then the later in file order.
    last = Window.partitionBy("crawl", "host").orderBy(
        F.col("time").desc(), F.col("robots_txt").desc(), F.col("file").desc(), F.col("seq").desc()
    )
    kept = captures.withColumn("_n", F.row_number().over(last)).filter(F.col("_n") == 1)
    # Each capture's verdicts are codes, agent by agent, a code per method
    # (1 full, 2 partial, 3 none; null without a file): a row per agent,
    # the codes read back into words.
    names = F.array(*[F.lit(a) for a in agents])
    exploded = kept.select(
        "crawl",
        "host",
        "time",
        "status",
        "robots_txt",
        "past_budget",
        "verdicts",
        F.explode(F.sequence(F.lit(0), F.lit(len(agents) - 1))).alias("_i"),
    )

    def word(m: int):
        code = F.element_at("verdicts", F.col("_i") * len(methods) + (m + 1))
        return F.when(code == 1, "full").when(code == 2, "partial").when(code == 3, "none")

    judged_cols = (
        [word(0).alias("verdict")] if isinstance(method, str) else [word(i).alias(m) for i, m in enumerate(methods)]
    )
    return exploded.select(
        "crawl",
        "host",
        F.element_at(names, F.col("_i") + 1).alias("agent"),
        *judged_cols,
        F.timestamp_seconds("time").alias("captured"),
        "status",
        "robots_txt",
        "past_budget",
    )


def write_site_verdicts(
    spark,
    warc_paths: Paths,
    out: str,
    agents: Optional[Sequence[str]] = None,
    methods: Sequence[str] = ("somesite", "cic"),
    *,
    base: Optional[str] = None,
    semantics: str = "google",
    partitions: Optional[int] = None,
    mode: str = "errorifexists",
):
    """:func:`site_verdicts` with a column per method, written to ``out``
    as Parquet partitioned by crawl (``out/crawl=CC-MAIN-…/``). ``out``
    is never replaced unless ``mode`` says so (Spark's save modes)."""
    df = site_verdicts(
        spark, warc_paths, agents, list(methods), base=base, semantics=semantics, partitions=partitions
    )
    # `captured` as Parquet's own timestamp (microseconds, UTC), not the
    # legacy INT96 Spark writes by default: what pandas, pyarrow and
    # DuckDB read natively, and cheaper to write.
    key = "spark.sql.parquet.outputTimestampType"
    before = spark.conf.get(key, None)
    spark.conf.set(key, "TIMESTAMP_MICROS")
    try:
        df.write.mode(mode).partitionBy("crawl").parquet(out)
    finally:
        if before is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, before)
    return df


def main(argv: Optional[List[str]] = None) -> int:
    """``python -m botscope.spark`` (or this file given to spark-submit)."""
    p = argparse.ArgumentParser(
        prog="python -m botscope.spark",
        description="Per crawl, site and agent, the Somesite verdict and the Consent-in-Crisis "
        "class of Common Crawl's robots.txt captures, as Parquet partitioned by crawl.",
    )
    p.add_argument("--paths", action="append", default=[], metavar="LIST",
                   help="a crawl's robotstxt.paths.gz (local, https:// or s3://); repeat for more crawls")
    p.add_argument("--warc", action="append", default=[], metavar="FILE", help="one WARC file; repeatable")
    p.add_argument("--base", help="what the lists' relative entries are relative to "
                   "(default: the list's location before crawl-data/)")
    p.add_argument("--agent", action="append", default=[],
                   help="a User-Agent; repeatable (default: the paper's 24)")
    p.add_argument("--method", action="append", choices=METHODS, default=[],
                   help="repeatable (default: somesite and cic)")
    p.add_argument("--semantics", choices=("google", "draft1996"), default="google",
                   help="the exact engine's semantics")
    p.add_argument("--partitions", type=int, help="Spark partitions of the files (default: one per file)")
    p.add_argument("--out", required=True, help="the Parquet directory (local, hdfs:// or s3a://); must not exist")
    a = p.parse_args(argv)
    if not a.paths and not a.warc:
        p.error("give --paths LIST or --warc FILE")
    if "://" not in a.out and os.path.exists(a.out):
        print(_plain(f"botscope.spark: {a.out} exists: give a new directory"), file=sys.stderr)
        return 2
    try:
        locations = [loc for lst in a.paths for loc in read_paths(lst, a.base)] + a.warc
    except (OSError, ValueError) as e:
        print(_plain(f"botscope.spark: {e}"), file=sys.stderr)
        return 2

    from pyspark.sql import SparkSession

    started = time.monotonic()
    spark = SparkSession.builder.appName("botscope site verdicts").getOrCreate()
    try:
        agents = a.agent or SOMESITE_AGENTS
        methods = a.method or ["somesite", "cic"]
        write_site_verdicts(
            spark,
            locations,
            a.out,
            agents,
            methods,
            semantics=a.semantics,
            partitions=a.partitions,
        )
        # What it did, from the Parquet written (its partition column and
        # footers: no file judged again).
        per_crawl = sorted(spark.read.parquet(a.out).groupBy("crawl").count().collect())
        took = time.monotonic() - started
        rows = sum(r["count"] for r in per_crawl)
        print(
            _plain(
                f"botscope.spark: {len(locations)} WARC files judged by {', '.join(methods)} "
                f"for {len(agents)} agents; {rows:,} rows (crawl, site, agent) written to "
                f"{a.out} in {took:.1f} s"
            ),
            file=sys.stderr,
        )
        for r in per_crawl:
            print(
                _plain(f"  {r['crawl']}: {r['count'] // len(agents):,} sites"),
                file=sys.stderr,
            )
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
