"""botscope.spark in Spark's local mode, over Common-Crawl-shaped crawls
that `botscope store synth` writes: its per-site verdicts add up to what
`botscope trends --by crawl` counts after `store import` of the same
files, by every method; files are read from a path, over HTTP (a
loopback server) and by their paths list; the job writes Parquet
partitioned by crawl and never over an existing directory."""

import doctest
import functools
import gzip
import http.server
import json
import os
import re
import subprocess
import sys
import threading
from collections import Counter

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from botscope.spark import SOMESITE_AGENTS, read_paths, site_verdicts
from conftest import ROOT

CRAWLS = ["CC-MAIN-2024-10", "CC-MAIN-2024-42"]
AGENTS = ["GPTBot", "ClaudeBot", "CCBot", "Google-Extended", "Kangaroo Bot"]


def local_spark_env():
    """Spark's workers run this Python, bound to loopback."""
    env = dict(os.environ)
    env["PYSPARK_PYTHON"] = sys.executable
    env["PYSPARK_DRIVER_PYTHON"] = sys.executable
    env["SPARK_LOCAL_IP"] = "127.0.0.1"
    return env


@pytest.fixture(scope="module")
def spark():
    os.environ.update(local_spark_env())
    s = (
        SparkSession.builder.master("local[2]")
        .appName("botscope-test")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    s.sparkContext.setLogLevel("ERROR")
    yield s
    s.stop()


@pytest.fixture(scope="module")
def crawls(cli, tmp_path_factory):
    d = tmp_path_factory.mktemp("spark")
    cc = d / "cc"
    cli("store", "synth", "--out", cc, "--sites", "300", "--crawl", CRAWLS[0], "--crawl", CRAWLS[1])
    warcs = sorted(cc.glob("crawl-data/*/segments/*/robotstxt/*.warc.gz"))
    assert len(warcs) >= 2
    cli("store", "import", "--db", d / "study.db", "--format", "warc", *warcs)
    cli("index", "build", "--db", d / "study.db")
    return d


def lists(d):
    return [str(d / "cc" / "crawl-data" / c / "robotstxt.paths.gz") for c in CRAWLS]


def counts(rows, column):
    return Counter((r["crawl"], r["agent"], r[column]) for r in rows)


def test_verdicts_equal_trends_by_crawl_for_every_method(spark, crawls, cli):
    locations = [loc for lst in lists(crawls) for loc in read_paths(lst)]
    assert all(os.path.isfile(loc) for loc in locations)
    methods = ["somesite", "cic", "exact"]
    df = site_verdicts(spark, locations, AGENTS, method=methods)
    assert df.columns[:3] == ["crawl", "host", "agent"]
    assert df.columns[3:6] == methods
    rows = df.collect()
    # One row per crawl, site and agent.
    assert len({(r["crawl"], r["host"], r["agent"]) for r in rows}) == len(rows)
    for method in methods:
        got = counts(rows, method)
        agent_args = [x for a in AGENTS for x in ("--agent", a)]
        _, out, _ = cli(
            "trends", "--method", method, "--by", "crawl", "--db", crawls / "study.db",
            *agent_args, "--format", "json",
        )
        periods = json.loads(out)["periods"]
        assert [p["period"] for p in periods] == CRAWLS
        for p in periods:
            for a in AGENTS:
                want = p["agents"][a]
                for v in ("full", "partial", "none"):
                    assert got[(p["period"], a, v)] == want[v], (method, p["period"], a, v)
                # A capture without a robots.txt: a row, verdict null.
                assert got[(p["period"], a, None)] == p["no_robots_txt"], (method, a)
            assert p["sites"] + p["no_robots_txt"] == 300
    # The methods do judge differently somewhere (else this proves little).
    assert counts(rows, "cic") != counts(rows, "exact")


def test_over_http_by_the_paths_list_with_crawl_from_warcinfo(spark, crawls, tmp_path):
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *a):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(crawls)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/cc/crawl-data/{CRAWLS[1]}/robotstxt.paths.gz"
        remote = read_paths(url)
        assert remote and all(r.startswith(f"http://127.0.0.1:{server.server_port}/cc/crawl-data/") for r in remote)
        by_http = site_verdicts(spark, url, ["GPTBot"]).collect()
    finally:
        server.shutdown()
    local = site_verdicts(spark, lists(crawls)[1], ["GPTBot"]).collect()
    assert counts(by_http, "verdict") == counts(local, "verdict")
    assert {r["crawl"] for r in by_http} == {CRAWLS[1]}

    # A file whose name says nothing: its warcinfo names the crawl.
    first = read_paths(lists(crawls)[0])[0]
    renamed = tmp_path / "part-0.warc.gz"
    renamed.write_bytes(open(first, "rb").read())
    rows = site_verdicts(spark, str(renamed), ["GPTBot"]).collect()
    assert rows and {r["crawl"] for r in rows} == {CRAWLS[0]}


def test_without_warcinfo_the_crawl_is_the_path_then_the_location(spark, tmp_path):
    def record(uri, body):
        http_block = (
            f"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {len(body)}\r\n\r\n{body}"
        ).encode()
        head = (
            "WARC/1.0\r\nWARC-Type: response\r\n"
            f"WARC-Target-URI: {uri}\r\nWARC-Date: 2025-01-20T10:00:00Z\r\n"
            f"Content-Length: {len(http_block)}\r\n\r\n"
        ).encode()
        return gzip.compress(head + http_block + b"\r\n\r\n")

    body = "User-agent: GPTBot\nDisallow: /\n\nUser-agent: *\nAllow: /\n"
    data = record("https://a.example/robots.txt", body) + record("https://B.example/robots.txt", body)
    named = tmp_path / "CC-MAIN-2025-05-robotstxt-00000.warc.gz"
    plain = tmp_path / "plain.warc.gz"
    named.write_bytes(data)
    plain.write_bytes(data)
    rows = site_verdicts(spark, [str(named), str(plain)], ["GPTBot", "CCBot"]).collect()
    got = sorted((r["crawl"], r["host"], r["agent"], r["verdict"]) for r in rows)
    assert got == sorted(
        (crawl, host, agent, verdict)
        for crawl in ("CC-MAIN-2025-05", str(plain))
        for host in ("a.example", "b.example")
        for agent, verdict in (("GPTBot", "full"), ("CCBot", "none"))
    )


def test_written_as_parquet_timestamps_leaving_the_session_as_it_was(spark, crawls, tmp_path):
    from botscope.spark import write_site_verdicts

    key = "spark.sql.parquet.outputTimestampType"
    spark.conf.set(key, "TIMESTAMP_MILLIS")
    try:
        write_site_verdicts(spark, lists(crawls)[0], str(tmp_path / "v"), ["GPTBot"], ["exact"])
        assert spark.conf.get(key) == "TIMESTAMP_MILLIS"
    finally:
        spark.conf.unset(key)
    arrow = pq.read_table(tmp_path / "v")
    assert arrow.schema.field("captured").type == pa.timestamp("us", tz="UTC"), arrow.schema
    assert arrow.num_rows == 300 and set(arrow.column("exact").drop_null().to_pylist()) <= {"full", "partial", "none"}


def test_a_damaged_file_keeps_its_captures_and_says_so(spark, tmp_path, capfd):
    body = "User-agent: *\nDisallow: /\n"
    block = f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\n\r\n{body}".encode()
    head = (
        "WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: https://a.example/robots.txt\r\n"
        f"WARC-Date: 2025-01-20T10:00:00Z\r\nContent-Length: {len(block)}\r\n\r\n"
    ).encode()
    damaged = tmp_path / "CC-MAIN-2025-05-damaged.warc.gz"
    damaged.write_bytes(gzip.compress(head + block + b"\r\n\r\n") + gzip.compress(b"WARC/1.0\r\nContent-Length: 999\r\n\r\nshort"))
    rows = site_verdicts(spark, str(damaged), ["GPTBot"]).collect()
    assert [(r["host"], r["verdict"]) for r in rows] == [("a.example", "full")]
    # What an executor says of it, in its log.
    from botscope.spark import _judge_file

    assert len(list(_judge_file(str(damaged), 0, ["GPTBot"], ["somesite"], "google"))) == 1
    err = capfd.readouterr().err
    assert f"botscope.spark: {damaged}: damaged after 1 captures (" in err, err[-2000:]


def test_bad_input_is_refused_clearly(spark, tmp_path):
    with pytest.raises(ValueError, match="unknown method"):
        site_verdicts(spark, "x.warc.gz", ["GPTBot"], method="robotparser")
    with pytest.raises(ValueError, match="no agents"):
        site_verdicts(spark, "x.warc.gz", [])
    relative = tmp_path / "list.txt"
    relative.write_text("segments/1/x.warc.gz\n")
    with pytest.raises(ValueError, match="give base="):
        read_paths(str(relative))
    # A stranger's list: its entries are quoted escaped, never as
    # terminal controls.
    hostile = tmp_path / "hostile.txt"
    hostile.write_text("segments/\x1b[2Jx.warc.gz\n")
    with pytest.raises(ValueError) as e:
        read_paths(str(hostile))
    assert "\x1b" not in str(e.value) and "\\x1b[2J" in str(e.value)
    assert read_paths(str(relative), base="s3://commoncrawl/") == ["s3://commoncrawl/segments/1/x.warc.gz"]
    assert len(SOMESITE_AGENTS) == 24


def test_the_spark_guide_runs_as_written(spark, botscope_bin, tmp_path, monkeypatch):
    """docs/spark.md: its shell steps (the job in local mode), then its
    Python examples, output compared; the job again refuses to write over
    what it wrote."""
    text = (ROOT / "docs" / "spark.md").read_text(encoding="utf-8")
    blocks = [b for b in re.findall(r"```sh\n(.*?)```", text, re.S) if not b.startswith("# needs the network")]
    script = "\n".join(blocks)
    first, script = script.split("\n", 1)
    # What this run installed already (scripts/test: the pinned PySpark in
    # one venv, the newest through the extra in another).
    assert first == "pip install './python[spark]'"
    shims = tmp_path / "bin"
    shims.mkdir()
    (shims / "botscope").symlink_to(botscope_bin)
    # The venv's Python (a symlink elsewhere would lose the venv).
    (shims / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    (shims / "python").chmod(0o755)
    env = local_spark_env()
    env["PATH"] = f"{shims}:{env.get('PATH', '')}"
    p = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path, env=env,
        capture_output=True, text=True, timeout=900,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    # The job says what it did.
    assert re.search(r"botscope\.spark: \d+ WARC files judged by somesite, cic for 2 agents; "
                     r"1,200 rows \(crawl, site, agent\) written to \S+ in [\d.]+ s", p.stderr), p.stderr[-3000:]
    for c in CRAWLS:
        assert f"  {c}: 300 sites" in p.stderr, p.stderr[-3000:]
    walk = tmp_path / "spark-walk"
    out = walk / "verdicts"
    assert sorted(x.name for x in out.iterdir() if x.is_dir()) == [f"crawl={c}" for c in CRAWLS]
    arrow = pq.read_table(out)
    # Parquet's own timestamp, not the legacy INT96.
    assert arrow.schema.field("captured").type == pa.timestamp("us", tz="UTC"), arrow.schema
    table = arrow.to_pandas()
    assert len(table) == 2 * 300 * 2
    assert set(table["somesite"].dropna()) <= {"full", "partial", "none"}
    before = sorted((str(x), x.stat().st_size) for x in out.rglob("*"))

    job = next(line for line in script.splitlines() if line.startswith("python -m botscope.spark"))
    again = subprocess.run(
        ["bash", "-c", script[script.index(job):]], cwd=walk, env=env,
        capture_output=True, text=True, timeout=600,
    )
    assert again.returncode == 2, again.stderr[-3000:]
    assert "verdicts exists" in again.stderr
    assert sorted((str(x), x.stat().st_size) for x in out.rglob("*")) == before

    monkeypatch.chdir(walk)
    test = doctest.DocTestParser().get_doctest(text, {}, "docs/spark.md", "docs/spark.md", 0)
    assert len(test.examples) >= 10
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    report = []
    runner.run(test, out=report.append)
    failed, attempted = runner.summarize(verbose=False)
    assert failed == 0, "".join(report)
    assert attempted == len(test.examples)
