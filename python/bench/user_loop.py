"""A user's loop beside Protego: for each file, `Robots(body)`, then
`allowed(agent, url)` once for each agent the verdicts ask about it (the
first URL listed for the pair), against `Protego.parse(text)` and
`can_fetch(url, agent)`. Every query is the first of its (file, agent)
pair, and each file's parse is counted: what a crawler pays that meets
each site's robots.txt once.

Usage (from the repository's root, the package installed in the venv):

    target/pyenv/bin/python python/bench/user_loop.py [RUNS [VERDICTS.tsv CORPUS_DIR]]

The corpus is ../shared/data/robotstxt when it is there, else the
repository's subset, as for robots_bench.py. Prints each run's time per
file and ratio, then the median ratio.
"""

import gc
import sys
import time
from pathlib import Path

from protego import Protego

import botscope
from robots_bench import ROOT, load


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    if len(sys.argv) == 4:
        verdicts, corpus = Path(sys.argv[2]), Path(sys.argv[3])
    else:
        shared = ROOT.parent / "shared" / "data" / "robotstxt"
        if (shared / "google_verdicts.tsv").exists():
            verdicts, corpus = shared / "google_verdicts.tsv", shared / "corpus"
        else:
            base = ROOT / "crates/botscope-robotstxt/tests/data"
            verdicts, corpus = base / "google_verdicts_subset.tsv", base / "corpus"
    queries, bodies = load(verdicts, corpus)
    first = {}
    for file, agent, url, _ in queries:
        first.setdefault(file, {}).setdefault(agent, url)
    files = sorted(first)
    # Protego is given text, as Scrapy gives it (not timed).
    texts = {n: b.decode("utf-8", "ignore") for n, b in bodies.items()}

    def ours():
        for f in files:
            r = botscope.Robots(bodies[f])
            for a, u in first[f].items():
                r.allowed(a, u)

    def theirs():
        for f in files:
            p = Protego.parse(texts[f])
            for a, u in first[f].items():
                p.can_fetch(u, a)

    pairs = sum(len(v) for v in first.values())
    print(f"{len(files)} files, {pairs} first queries")
    ratios = []
    for _ in range(runs):
        gc.collect()
        gc.disable()
        t = time.perf_counter()
        ours()
        t_ours = time.perf_counter() - t
        t = time.perf_counter()
        theirs()
        t_theirs = time.perf_counter() - t
        gc.enable()
        ratios.append(t_theirs / t_ours)
        print(
            f"ours {1e6 * t_ours / len(files):.1f} us a file, "
            f"Protego {1e6 * t_theirs / len(files):.1f} us a file, {t_theirs / t_ours:.1f}x"
        )
    ratios.sort()
    print(f"median {ratios[len(ratios) // 2]:.1f}x")


if __name__ == "__main__":
    main()
