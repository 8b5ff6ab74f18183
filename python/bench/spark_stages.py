"""Where `botscope.spark`'s job spends its executors' time: runs
`write_site_verdicts` (somesite and cic, the 24 agents of "Somesite I
Used To Crawl") over a crawl's paths list in Spark's local mode on every
core, then reads each stage's executor run time (summed over its tasks)
from Spark's UI (`/api/v1/applications/APP/stages`).

Usage (from the repository's root, the package installed in the venv;
the data as BENCHMARKS.md's "Common Crawl on Spark" makes it):

    PYSPARK_PYTHON=target/pyenv/bin/python target/pyenv/bin/python \\
        python/bench/spark_stages.py /tmp/bench/w1m/crawl-data/CC-MAIN-2024-10/robotstxt.paths.gz

Another version of the package runs the same with `PYTHONPATH` naming
its unzipped wheel. Prints the write's wall time, each stage's executor
time and the captures per executor-second.
"""

import json
import shutil
import sys
import tempfile
import time
import urllib.request

from pyspark.sql import SparkSession

from botscope import spark as bs


def main() -> None:
    paths = sys.argv[1]
    spark = SparkSession.builder.master("local[*]").config("spark.ui.showConsoleProgress", "false").getOrCreate()
    out = tempfile.mkdtemp(prefix="spark-stages-")
    shutil.rmtree(out)
    try:
        locations = bs.read_paths(paths)
        started = time.monotonic()
        bs.write_site_verdicts(spark, locations, out, list(bs.SOMESITE_AGENTS), ["somesite", "cic"])
        took = time.monotonic() - started
        sites = spark.read.parquet(out).count() // len(bs.SOMESITE_AGENTS)
        app, ui = spark.sparkContext.applicationId, spark.sparkContext.uiWebUrl
        with urllib.request.urlopen(f"{ui}/api/v1/applications/{app}/stages") as r:
            stages = json.load(r)
    finally:
        shutil.rmtree(out, ignore_errors=True)
        spark.stop()
    # Sites, not captures: the two are equal only when each site is
    # captured once, as in gen_warc's data.
    total = sum(s.get("executorRunTime", 0) for s in stages) / 1000
    print(f"{bs.__file__}: write {took:.1f} s wall; executor time {total:.1f} s; {sites:,} sites, "
          f"{sites / total:,.0f} per executor-second")
    for s in sorted(stages, key=lambda s: s["stageId"]):
        print(f"  stage {s['stageId']}: {s['numTasks']} tasks, {s.get('executorRunTime', 0) / 1000:.1f} s")


if __name__ == "__main__":
    main()
