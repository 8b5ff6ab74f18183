"""botscope.Store and botscope.Index over a store the command made: the
command's answers, as rows, pandas and pyarrow."""

import csv
import datetime
import io
import json
import os

import pyarrow as pa
import pytest

import botscope


def test_store(research, cli):
    db, _ = research
    s = botscope.Store(db)
    stats = s.stats()
    _, out, _ = cli("store", "stats", "--db", db, "--format", "json")
    assert stats == json.loads(out)
    assert stats["sites"] == 6 and stats["versions"] == 6

    rows = list(s.iter_versions())
    assert len(rows) == 6
    v = next(r for r in rows if r["host"] == "www.ebay.com")
    assert v["first_seen"] == datetime.datetime(2007, 3, 1, tzinfo=datetime.timezone.utc)
    assert v["hash"].startswith("blake3:") and "User-agent" in v["body"]
    assert s.site("WWW.EBAY.COM") == [v]
    assert s.site("unknown.example") is None

    reader = s.versions()
    assert isinstance(reader, pa.RecordBatchReader)
    t = reader.read_all()
    assert t.num_rows == 6
    # The command's Parquet columns and types (times in UTC).
    assert t.schema.field("first_seen").type == pa.timestamp("ms", tz="UTC")
    assert t.schema.field("status").type == pa.uint16()
    assert t.column_names[:3] == ["host", "url", "first_seen"]
    assert set(t.column("host").to_pylist()) == {r["host"] for r in rows}
    assert "Store" in repr(s)

    # An iterator dropped half-way stops its reader.
    it = s.iter_versions()
    next(it)
    del it


def test_store_errors(tmp_path):
    with pytest.raises(botscope.Error, match="no such store"):
        botscope.Store(tmp_path / "missing.db")
    not_a_store = tmp_path / "x.db"
    not_a_store.write_bytes(b"this is not SQLite" * 100)
    with pytest.raises(botscope.Error, match="not a botscope store"):
        botscope.Store(not_a_store)
    with pytest.raises(TypeError):
        botscope.Store(42)
    # What is not a file is named, never opened: a FIFO would wait for a
    # writer, and SQLite's words for the others mislead.
    with pytest.raises(botscope.Error, match="it is a directory, not a regular file; a store is a file"):
        botscope.Store(tmp_path)
    with pytest.raises(botscope.Error, match="/dev/zero: it is a device"):
        botscope.Store("/dev/zero")
    fifo = tmp_path / "store.db"
    os.mkfifo(fifo)
    with pytest.raises(botscope.Error, match=r"it is a FIFO \(a named pipe\)"):
        botscope.Store(fifo)


def test_index_search_favor_trends_are_the_commands(research, cli):
    db, ix = research
    idx = botscope.Index(ix)
    first, last = idx.span()
    assert first.year == 2007

    hits = idx.search("botname:googlebot", limit=20)
    _, out, _ = cli("search", "botname:googlebot", "--index", ix, "--format", "json", "--limit", "20")
    want = json.loads(out)
    assert hits.result["total"] == want["total"] > 0
    assert [h["site"] for h in hits] == [h["site"] for h in want["hits"]]
    assert hits.columns[0] == "site"

    fav = idx.favor(sort="favorability")
    _, out, _ = cli("favor", "--index", ix, "--format", "json", "--sort", "favorability")
    want = json.loads(out)
    assert fav.result == want
    assert [r["robot"] for r in fav] == [r["robot"] for r in want["robots"]]
    assert fav.result["n"] == 6

    tr = idx.trends(["Googlebot", "GPTBot"], by="year", db=db)
    _, out, _ = cli("trends", "--agent", "Googlebot", "--agent", "GPTBot", "--by", "year",
                    "--index", ix, "--db", db, "--format", "csv")
    header, *lines = out.strip().splitlines()
    assert tr.columns == header.split(",")
    assert len(tr) == len(lines)

    df = tr.to_pandas()
    assert list(df.columns) == tr.columns and len(df) == len(tr)
    assert idx.favor(where="site:www.ebay.com").result["n"] == 1
    assert idx.search("botname:googlebot", as_of="2007-03-02").result["total"] >= 1
    assert idx.search("botname:googlebot", as_of=datetime.datetime(2000, 1, 1, tzinfo=datetime.timezone.utc)).result["total"] == 0


def test_trends_by_a_studys_method_are_the_commands(research, cli):
    db, ix = research
    idx = botscope.Index(ix)
    for method, agents in [("cic", ["GPTBot", "Googlebot"]), ("somesite", [])]:
        tr = idx.trends(agents, by="year", db=db, method=method)
        flags = [f for a in agents for f in ("--agent", a)]
        _, out, _ = cli("trends", *flags, "--by", "year", "--index", ix, "--db", db,
                        "--method", method, "--format", "json")
        assert tr.result == json.loads(out)
        assert tr.result["method"] == method
        assert "disagree_with_exact" in tr.columns
    # Without agents, Somesite's 24 and the group.
    assert len({r["agent"] for r in tr}) == 25
    with pytest.raises(ValueError, match="unknown method"):
        idx.trends("GPTBot", method="google")


@pytest.fixture(scope="module")
def crawls(cli, tmp_path_factory):
    """Two synthetic Common Crawl crawls of 120 sites imported and
    indexed: (directory, store)."""
    d = tmp_path_factory.mktemp("crawls")
    cli("store", "synth", "--out", d / "cc", "--sites", "120",
        "--crawl", "CC-MAIN-2024-10", "--crawl", "CC-MAIN-2024-42")
    warcs = sorted(str(p) for p in (d / "cc").rglob("*.warc.gz"))
    db = d / "study.db"
    cli("store", "import", "--db", db, "--format", "warc", *warcs)
    cli("index", "build", "--db", db)
    return d, db


def test_trends_per_site_are_the_commands_rows(crawls, cli):
    d, db = crawls
    idx = botscope.Index(str(db) + ".index")
    for method in ("exact", "cic"):
        rows = idx.trends(["GPTBot", "CCBot"], by="crawl", db=db, method=method, per_site=True)
        _, out, _ = cli("trends", "--agent", "GPTBot", "--agent", "CCBot", "--by", "crawl",
                        "--db", db, "--method", method, "--per-site", "--format", "csv")
        want = list(csv.DictReader(io.StringIO(out)))
        assert rows.columns == list(want[0].keys())
        assert len(rows) == len(want) > 100
        for got, w in zip(rows, want):
            assert {k: str(v) for k, v in got.items()} == w
        # The result is still the counts; the rows add up to them.
        _, out, _ = cli("trends", "--agent", "GPTBot", "--agent", "CCBot", "--by", "crawl",
                        "--db", db, "--method", method, "--format", "json")
        assert rows.result == json.loads(out)
        for p in rows.result["periods"]:
            for agent, c in p["agents"].items():
                for verdict in ("full", "partial", "none"):
                    n = sum(1 for r in rows if r["period"] == p["period"]
                            and r["agent"] == agent and r["verdict"] == verdict)
                    assert n == c[verdict], (method, p["period"], agent, verdict)
            if method == "cic":
                # The sites behind disagree_with_exact, listed.
                for agent, n in p["disagree"].items():
                    listed = [r for r in rows if r["period"] == p["period"]
                              and r["agent"] == agent and r["verdict"] != r["exact"]
                              and r["past_budget"] == 0]
                    assert len(listed) == n
    df = rows.to_pandas()
    assert list(df.columns) == rows.columns and len(df) == len(rows)
    with pytest.raises(botscope.Error, match="max-rows"):
        idx.trends("GPTBot", by="crawl", db=db, per_site=True, max_rows=10)


def test_a_site_without_a_robots_txt_is_an_absence(crawls):
    d, db = crawls
    s = botscope.Store(db)
    files = {v["host"] for v in s.iter_versions()}
    hosts = [line.split(",")[1] for line in (d / "cc" / "sites.csv").read_text().splitlines()[1:]]
    without = [h for h in hosts if h not in files]
    assert without, "the synthetic crawls have sites that never served a file"
    for h in without[:5]:
        versions = s.site(h)
        assert versions, h
        assert all(v["absent"] in ("removed", "unreachable", "moved") for v in versions), versions
        assert all(v["body"] == "" for v in versions)
    # A site with a file: its versions are files, or absences between them.
    with_file = s.site(sorted(files)[0])
    assert any(v["absent"] is None and v["body"] for v in with_file)


def test_trends_of_a_cohort_and_a_category_are_the_commands(research, cli, tmp_path):
    db, ix = research
    idx = botscope.Index(ix)
    ranked = tmp_path / "tranco.csv"
    ranked.write_text("1,www.ebay.com\n2,www.etsy.com\n3,example.org\n4,www.amazon.com\n")
    news = tmp_path / "news.csv"
    news.write_text("host,tokens\nwww.ebay.com,10\nwww.etsy.com,30\n")
    for kwargs, flags in [
        (dict(rank_file=ranked, top=3), ["--rank-file", ranked, "--top", "3"]),
        (dict(sites=news, weight="tokens"), ["--sites", news, "--weight", "tokens"]),
    ]:
        tr = idx.trends("GPTBot", by="year", db=db, **kwargs)
        _, out, _ = cli("trends", "--agent", "GPTBot", "--by", "year", "--index", ix,
                        "--db", db, "--format", "json", *[str(f) for f in flags])
        assert tr.result == json.loads(out)
        assert tr.result["cohort"]["hosts"] == (3 if "top" in kwargs else 2)
    tr = idx.trends(category="ai-training", by="year")
    _, out, _ = cli("trends", "--category", "ai-training", "--by", "year", "--index", ix,
                    "--format", "json")
    assert tr.result == json.loads(out)
    assert "GPTBot" in {r["agent"] for r in tr}
    with pytest.raises(ValueError, match="together"):
        idx.trends("GPTBot", rank_file=ranked)
    with pytest.raises(ValueError, match="not both"):
        idx.trends("GPTBot", sites=news, rank_file=ranked, top=2)
    with pytest.raises(ValueError, match="weight is a column"):
        idx.trends("GPTBot", weight="tokens")
    with pytest.raises(ValueError, match="no registry robot"):
        idx.trends(category="no-such-category")
    with pytest.raises(ValueError, match="give at least one agent"):
        idx.trends()
    with pytest.raises(botscope.Error, match="missing.csv"):
        idx.trends("GPTBot", sites=tmp_path / "missing.csv")
    with pytest.raises(ValueError, match=r"news.csv:2"):
        news.write_text("host,tokens\nwww.ebay.com,lots\n")
        idx.trends("GPTBot", sites=news, weight="tokens")


def test_index_errors(research, tmp_path):
    _, ix = research
    idx = botscope.Index(ix)
    with pytest.raises(ValueError, match=r"query: column 11: `AND` needs something on each side\n  botname:x AND\n {12}\^"):
        idx.search("botname:x AND")
    with pytest.raises(ValueError, match="is not a delay"):
        idx.favor(where="delay:abc")
    with pytest.raises(ValueError, match="unknown rank"):
        idx.search("x", rank="best")
    with pytest.raises(ValueError, match="unknown sort"):
        idx.favor(sort="best")
    with pytest.raises(ValueError, match="crawl"):
        idx.trends("GPTBot", by="crawl")
    with pytest.raises(ValueError, match="unknown period"):
        idx.trends("GPTBot", by="week")
    with pytest.raises(ValueError, match="not a time"):
        idx.search("x", as_of="yesterday")
    with pytest.raises(botscope.Error, match="no index here"):
        botscope.Index(tmp_path / "none")


def test_a_postgresql_store_reads_as_the_sqlite_one(research, cli, postgres):
    """The same versions copied into PostgreSQL (`botscope store copy`)
    read back through the package as from SQLite."""
    db, _ = research
    url = postgres("copied")
    cli("store", "copy", "--from", db, "--to", url)
    pg, lite = botscope.Store(url), botscope.Store(db)
    assert "botscope" in repr(pg) and "127.0.0.1" in repr(pg)
    key = lambda v: (v["host"], v["first_seen"])
    assert sorted(pg.iter_versions(), key=key) == sorted(lite.iter_versions(), key=key)
    assert pg.site("www.etsy.com") == lite.site("www.etsy.com")
    assert pg.versions().read_all().num_rows == 6
    s = pg.stats()
    assert s["sites"] == lite.stats()["sites"] == 6
    with pytest.raises(botscope.Error):
        botscope.Store(url.rsplit("/", 1)[0] + "/missing")


def test_versions_stream_a_store_larger_than_the_memory_allowed(cli, tmp_path):
    """A store of 244 MB of bodies (600 files of 406 KB) read through
    ``Store.versions()`` in a process that peaks under 160 MB: the
    versions stream in bounded batches, never all in memory (nor sorted
    in a temporary tree that holds every body)."""
    import random
    import subprocess
    import sys

    files = tmp_path / "files"
    files.mkdir()
    rnd = random.Random(7)
    total = 0
    for n in range(600):
        lines = [f"User-agent: bot{n}"]
        lines += [f"Disallow: /p{rnd.getrandbits(64):016x}" for _ in range(14_000)]
        body = "\n".join(lines) + "\n"
        total += len(body)
        (files / f"site{n}.example.com.txt").write_text(body)
    assert total > 240_000_000, total
    db = tmp_path / "big.db"
    cli("store", "import", "--db", db, "--format", "files", "--date", "2007-03-01", files)
    assert db.stat().st_size > total
    probe = (
        "import sys, botscope, pyarrow.compute as pc\n"
        "rows = size = 0\n"
        "for b in botscope.Store(sys.argv[1]).versions():\n"
        "    rows += b.num_rows\n"
        "    size += pc.sum(pc.binary_length(b.column('body'))).as_py()\n"
        # VmHWM: this program's own peak (getrusage's maxrss starts from
        # the forking parent's).
        "hwm = next(l for l in open('/proc/self/status') if l.startswith('VmHWM:'))\n"
        "print(rows, size, int(hwm.split()[1]) * 1024)\n"
    )
    p = subprocess.run([sys.executable, "-c", probe, str(db)], capture_output=True, text=True,
                       check=True)
    rows, size, peak = map(int, p.stdout.split())
    assert rows == 600 and size == total
    assert peak < 160_000_000 < total, f"peak {peak >> 20} MiB for {total >> 20} MiB of bodies"
