"""botscope beside Protego (Scrapy's robots.txt parser) and
urllib.robotparser, on the same real files and queries, in one run:

- agreement with Google's reference parser (its verdicts per query),
- parse time per file,
- `allowed(agent, url)` called in a Python loop, and `allowed_many` per
  (file, agent), against each peer's own per-query call; `allowed_many`
  also on new objects, each (file, agent) asked once (a single pass).

Usage (from the repository's root, the package installed in the venv):

    target/pyenv/bin/python python/bench/robots_bench.py [VERDICTS.tsv CORPUS_DIR]

Without arguments it reads ../shared/data/robotstxt (678,876 queries over
11,766 files) when it is there, else the repository's subset
(crates/botscope-robotstxt/tests/data: 16,940 queries).

Every parser reads each file whole, as Google's reference parser did for
its verdicts (`Robots(body, max_bytes=None)`: by default botscope reads
500 KiB, as a crawler does, and 15 of the files are larger). Each peer
runs as its users run it: Protego as Scrapy calls it
(`Protego.parse(text)`, `can_fetch(url, agent)`), urllib as Scrapy's
PythonRobotParser does (`parse(lines)`, `can_fetch(agent, url)`), both on
the body decoded as UTF-8 (undecodable bytes dropped, as Scrapy does).
Their decoding is not timed. The four agents are one str object each,
as in a crawler's loop (`Robots` remembers the last agent object it was
asked about); each URL is its own object.
"""

import csv
import gc
import sys
import time
import urllib.robotparser
from collections import defaultdict
from pathlib import Path

import botscope
from protego import Protego

ROOT = Path(__file__).resolve().parents[2]


def load(verdicts, corpus):
    queries = []
    with open(verdicts, newline="", encoding="utf-8") as f:
        rows = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        next(rows)
        for file, agent, url, want in rows:
            # One str object per agent, as a crawler's loop holds its own
            # name (the csv module makes a new one per row).
            queries.append((file, sys.intern(agent), url, want == "1"))
    files = sorted({q[0] for q in queries})
    bodies = {name: (corpus / name).read_bytes() for name in files}
    return queries, bodies


def timed(f):
    gc.collect()
    gc.disable()
    t = time.perf_counter()
    r = f()
    dt = time.perf_counter() - t
    gc.enable()
    return r, dt


def held_out(name):
    """Every fifth file of the corpus, by its number, held out."""
    stem = Path(name).stem
    return stem.isdigit() and int(stem) % 5 == 4


def main():
    if len(sys.argv) == 3:
        verdicts, corpus = Path(sys.argv[1]), Path(sys.argv[2])
    else:
        shared = ROOT.parent / "shared" / "data" / "robotstxt"
        base = shared if (shared / "google_verdicts.tsv").exists() else ROOT / "crates/botscope-robotstxt/tests/data"
        verdicts = base / ("google_verdicts.tsv" if base == shared else "google_verdicts_subset.tsv")
        corpus = base / "corpus"
    queries, bodies = load(verdicts, corpus)
    texts = {k: v.decode("utf-8", errors="ignore") for k, v in bodies.items()}
    print(f"{len(queries):,} queries over {len(bodies):,} files ({verdicts})")
    print(f"Python {sys.version.split()[0]}, botscope {botscope.__version__}, protego {__import__('protego').__version__ if hasattr(__import__('protego'), '__version__') else '0.7.0'}")

    # Parse every file.
    ours, t_ours = timed(lambda: {k: botscope.Robots(b, max_bytes=None) for k, b in bodies.items()})
    theirs, t_protego = timed(lambda: {k: Protego.parse(t) for k, t in texts.items()})

    def parse_urllib():
        out = {}
        for k, t in texts.items():
            rp = urllib.robotparser.RobotFileParser()
            rp.parse(t.splitlines())
            out[k] = rp
        return out

    stdlib, t_urllib = timed(parse_urllib)

    # Agreement with Google.
    def agree(check):
        ok, errors, diffs = 0, 0, []
        for file, agent, url, want in queries:
            try:
                got = check(file, agent, url)
            except Exception:  # a peer that fails on a query disagrees
                errors += 1
                got = None
            if got == want:
                ok += 1
            elif len(diffs) < 400:
                diffs.append((file, agent, url, want, got))
        return ok, errors, diffs

    a_ours = agree(lambda f, a, u: ours[f].allowed(a, u))
    a_protego = agree(lambda f, a, u: theirs[f].can_fetch(u, a))
    a_urllib = agree(lambda f, a, u: stdlib[f].can_fetch(a, u))

    # Queries in a Python loop, each parser's own call.
    def loop_ours(qs=queries):
        n = 0
        for file, agent, url, _ in qs:
            n += ours[file].allowed(agent, url)
        return n

    def loop_protego(qs=queries):
        n = 0
        for file, agent, url, _ in qs:
            try:
                n += theirs[file].can_fetch(url, agent)
            except Exception:
                pass
        return n

    def loop_urllib():
        n = 0
        for file, agent, url, _ in queries:
            n += stdlib[file].can_fetch(agent, url)
        return n

    _, q_ours = timed(loop_ours)
    _, q_protego = timed(loop_protego)
    _, q_urllib = timed(loop_urllib)

    # The held-out part: every fifth file by its number (`03674.txt`, 4
    # left over), whose queries the loop's figure is reported on apart;
    # none of them is in the repository's subset (every 40th file, from
    # 03670), which the tests and the tuning read.
    held = [q for q in queries if held_out(q[0])]

    if held:
        h_ours = min(timed(lambda: loop_ours(held))[1] for _ in range(3))
        h_protego = min(timed(lambda: loop_protego(held))[1] for _ in range(3))

    # allowed_many: one call per (file, agent).
    grouped = defaultdict(list)
    for file, agent, url, _ in queries:
        grouped[(file, agent)].append(url)
    groups = list(grouped.items())

    def many(objects=ours):
        n = 0
        for (file, agent), urls in groups:
            n += sum(objects[file].allowed_many(agent, urls))
        return n

    _, q_many = timed(many)
    assert many() == loop_ours()

    # The same on objects never asked before: each (file, agent) once, as
    # a single pass over a corpus runs.
    fresh = {k: botscope.Robots(b, max_bytes=None) for k, b in bodies.items()}
    _, q_fresh = timed(lambda: many(fresh))

    n, files = len(queries), len(bodies)
    print()
    print("| parser | agrees with Google | parse per file | per query (loop) | queries/s |")
    print("|---|---|---|---|---|")
    for name, (ok, errors, _), tp, tq in [
        ("botscope `Robots.allowed`", a_ours, t_ours, q_ours),
        ("Protego 0.7.0", a_protego, t_protego, q_protego),
        ("urllib.robotparser", a_urllib, t_urllib, q_urllib),
    ]:
        err = f", {errors} raised" if errors else ""
        print(f"| {name} | {ok:,}/{n:,} = {100 * ok / n:.2f}%{err} | {1e6 * tp / files:.1f} µs | {1e9 * tq / n:.0f} ns | {n / tq:,.0f} |")
    print(f"| botscope `allowed_many` ({len(groups):,} calls) | (same verdicts) | | {1e9 * q_many / n:.0f} ns | {n / q_many:,.0f} |")
    print(f"| botscope `allowed_many`, first pass on new objects | (same verdicts) | | {1e9 * q_fresh / n:.0f} ns | {n / q_fresh:,.0f} |")
    print()
    print(f"allowed vs Protego:      {q_protego / q_ours:.1f}x  (parse {t_protego / t_ours:.1f}x)")
    print(f"allowed_many vs Protego: {q_protego / q_many:.1f}x  (first pass {q_protego / q_fresh:.1f}x)")
    print(f"allowed vs urllib:       {q_urllib / q_ours:.1f}x  (parse {t_urllib / t_ours:.1f}x)")
    held_files = len({q[0] for q in held})
    if held:
            print(f"held-out part ({held_files:,} files, {len(held):,} queries), best of 3: "
              f"allowed {1e9 * h_ours / len(held):.0f} ns, Protego {1e9 * h_protego / len(held):.0f} ns: "
              f"{h_protego / h_ours:.1f}x")

    for name, (_, _, diffs) in [("Protego", a_protego), ("urllib.robotparser", a_urllib)]:
        print(f"\nsome of {name}'s disagreements with Google (file, agent, url, Google, {name}):")
        seen = set()
        for d in diffs:
            if d[0] in seen:
                continue
            seen.add(d[0])
            print("  ", d)
            if len(seen) == 8:
                break


if __name__ == "__main__":
    main()
