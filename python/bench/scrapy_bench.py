"""Scrapy with botscope's robots.txt parser beside Scrapy with Protego
(its default), on the same loopback crawl of many hosts' real robots.txt:
the time each parser takes inside Scrapy, per robots.txt response (the
parser built from the body: ``from_crawler``) and per request checked
(``allowed``), measured around Scrapy's own calls.

Usage (from the repository's root, the package and Scrapy installed in
the venv):

    target/pyenv/bin/python python/bench/scrapy_bench.py [HOSTS] [URLS_PER_HOST]

Each host is a loopback address of its own (127.0.x.y) on one port,
serving one file of the shared corpus (../shared/data/robotstxt, else the
repository's subset) as its robots.txt and an empty page for every other
path; the spider asks for that file's verdict URLs (Google's reference
parser's queries) with the agent of the query. Both crawls run in their
own process, one after the other, with the same settings (botscope's
robots.txt middleware in place of Scrapy's for both, so that every
request is checked): the requests each parser lets through are compared
too (the verdicts differ where Protego disagrees with Google).
"""

import csv
import json
import os
import subprocess
import sys
import threading
import time
from collections import defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SPIDER = r'''
import json, sys, time
import scrapy
from scrapy import signals
from scrapy.robotstxt import ProtegoRobotParser
from botscope.scrapy import RobotParser as BotscopeRobotParser

TIMES = {"parse": [], "allowed": []}


def timed(base):
    class Timed(base):
        @classmethod
        def from_crawler(cls, crawler, body):
            t = time.perf_counter_ns()
            rp = super().from_crawler(crawler, body)
            TIMES["parse"].append(time.perf_counter_ns() - t)
            return rp

        def allowed(self, url, user_agent):
            t = time.perf_counter_ns()
            ok = super().allowed(url, user_agent)
            TIMES["allowed"].append(time.perf_counter_ns() - t)
            return ok
    return Timed


Botscope = timed(BotscopeRobotParser)
Protego = timed(ProtegoRobotParser)


class Crawl(scrapy.Spider):
    name = "crawl"

    def __init__(self, plan, **kw):
        super().__init__(**kw)
        self.plan = json.load(open(plan))
        self.fetched = []

    async def start(self):
        for url, agent in self.plan:
            yield scrapy.Request(url, headers={"User-Agent": agent}, callback=self.parse,
                                 dont_filter=True)

    def parse(self, response):
        self.fetched.append(response.url)

    def closed(self, reason):
        out = {"fetched": sorted(self.fetched), "times": TIMES}
        json.dump(out, open(self.settings.get("BENCH_OUT"), "w"))
'''


def corpus():
    shared = ROOT.parent / "shared" / "data" / "robotstxt"
    if (shared / "google_verdicts.tsv").is_file():
        return shared / "google_verdicts.tsv", shared / "corpus"
    data = ROOT / "crates" / "botscope-robotstxt" / "tests" / "data"
    return data / "google_verdicts_subset.tsv", data / "corpus"


def main():
    hosts = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    per_host = int(sys.argv[2]) if len(sys.argv) > 2 else 16
    verdicts, files = corpus()
    queries = defaultdict(list)
    with open(verdicts, newline="", encoding="utf-8") as f:
        rows = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        next(rows)
        for file, agent, url, _ in rows:
            queries[file].append((agent, url))
    chosen = sorted(queries)[:hosts]
    bodies = {}
    plan = []
    for i, file in enumerate(chosen):
        host = f"127.0.{1 + i // 250}.{1 + i % 250}"
        bodies[host] = (files / file).read_bytes()
        for agent, url in queries[file][:per_host]:
            path = url.split("://", 1)[-1]
            path = path[path.find("/"):] if "/" in path else "/"
            plan.append((host, path, agent))

    class Site(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self):
            host = self.headers.get("Host", "").rsplit(":", 1)[0]
            body = bodies.get(host, b"") if self.path == "/robots.txt" else b"ok"
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    server = ThreadingHTTPServer(("0.0.0.0", 0), Site)
    server.daemon_threads = True
    port = server.server_address[1]
    threading.Thread(target=server.serve_forever, daemon=True).start()

    work = Path(os.environ.get("TMPDIR", "/tmp")) / f"scrapy-bench-{os.getpid()}"
    work.mkdir(exist_ok=True)
    (work / "crawl.py").write_text(SPIDER)
    urls = [(f"http://{h}:{port}{p}", a) for h, p, a in plan]
    (work / "plan.json").write_text(json.dumps(urls))
    results = {}
    for name, parser in (("botscope", "crawl.Botscope"), ("Protego", "crawl.Protego")):
        out = work / f"{name}.json"
        t = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "scrapy", "runspider", "crawl.py", "-a", "plan=plan.json",
             "-s", "ROBOTSTXT_OBEY=True", "-s", f"ROBOTSTXT_PARSER={parser}",
             "-s", "CONCURRENT_REQUESTS=64", "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=8",
             "-s", "DOWNLOAD_DELAY=0", "-s", "LOG_LEVEL=ERROR", "-s", "TELNETCONSOLE_ENABLED=False",
             "-s", "RETRY_ENABLED=False", "-s", f"BENCH_OUT={out}",
             # Every request checked, for both parsers (Scrapy 2.19's own
             # middleware skips the check of requests that waited for
             # their host's robots.txt).
             "-s", "DOWNLOADER_MIDDLEWARES=" + json.dumps({
                 "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
                 "botscope.scrapy.RobotsTxtMiddleware": 100})],
            cwd=work, check=True, env={**os.environ, "PYTHONPATH": str(work)},
        )
        wall = time.perf_counter() - t
        results[name] = (json.loads(out.read_text()), wall)
    server.shutdown()

    import scrapy
    import protego

    print(f"Scrapy {scrapy.__version__}: {len(chosen)} hosts' robots.txt, {len(plan)} requests "
          f"planned (up to {per_host} a host), Protego {protego.__version__ if hasattr(protego, '__version__') else '0.7.0'}")
    print(f"{'parser':<10} {'robots.txt':>10} {'parse µs (median / mean)':>26} "
          f"{'checks':>8} {'check ns (median / mean)':>26} {'fetched':>8} {'crawl s':>8}")
    stats = {}
    for name, (r, wall) in results.items():
        p = sorted(r["times"]["parse"])
        a = sorted(r["times"]["allowed"])
        # Scrapy builds one parser on an empty body when the middleware
        # starts (to check the backend): not a response.
        med = lambda xs: xs[len(xs) // 2]
        stats[name] = (med(p), sum(p) / len(p), med(a), sum(a) / len(a))
        print(f"{name:<10} {len(p):>10} {med(p) / 1e3:>12.1f} / {sum(p) / len(p) / 1e3:<11.1f} "
              f"{len(a):>8} {med(a):>12.0f} / {sum(a) / len(a):<11.0f} {len(r['fetched']):>8} {wall:>8.1f}")
    b, p = stats["botscope"], stats["Protego"]
    print(f"Protego / botscope: parse {p[0] / b[0]:.1f}x (median) {p[1] / b[1]:.1f}x (mean); "
          f"check {p[2] / b[2]:.1f}x (median) {p[3] / b[3]:.1f}x (mean)")
    only_b = set(results["botscope"][0]["fetched"]) - set(results["Protego"][0]["fetched"])
    only_p = set(results["Protego"][0]["fetched"]) - set(results["botscope"][0]["fetched"])
    print(f"requests fetched by one parser's crawl only: botscope {len(only_b)}, Protego {len(only_p)}")


if __name__ == "__main__":
    main()
