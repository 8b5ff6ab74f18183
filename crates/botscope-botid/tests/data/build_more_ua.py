#!/usr/bin/env python3
"""Builds more_ua.tsv.gz: labelled User-Agents from sources other than
Matomo's, for the classifier's second held-out measure.

    pip download --no-deps --no-binary :all: crawlerdetect==0.4.2 fake-useragent==2.2.0
    npm pack woothee@1.11.1 user-agents@2.1.198
    (unpack each)
    python3 build_more_ua.py crawlerdetect-0.4.2 fake_useragent-2.2.0 woothee-1.11.1 user-agents-2.1.198

Sources and labels:
- CrawlerDetect's fixtures (PyPI `crawlerdetect` 0.4.2 sdist,
  tests/fixtures/user_agent/): crawlers.txt `bot`, devices.txt `browser`
  (real devices' traffic, 165,639 strings).
- woothee's testsets (npm `woothee` 1.11.1): crawler*.yaml `bot`; pc*,
  smartphone*, mobilephone* and appliance.yaml `browser`. misc.yaml is left
  out: it mixes desktop feed readers with server-side feed libraries.
- fake-useragent's browsers.jsonl (PyPI 2.2.0) and user-agents' dataset
  (npm `user-agents` 2.1.198, dist/user-agents.json): `browser`.

A string labelled both ways is left out; each distinct string is kept once.
The split is fixed by the SHA-1 of the User-Agent, as in matomo_ua.tsv.gz:
`design` (first byte < 128) may be looked at while rules are made;
`held-out` is where the figures are measured.
"""
import glob
import gzip
import hashlib
import json
import os
import sys

import yaml


def add(rows, ua, label, source):
    if not isinstance(ua, str):
        return
    ua = ua.strip()
    if not ua or "\t" in ua or "\n" in ua or "\r" in ua:
        return
    old = rows.get(ua)
    if old is None:
        rows[ua] = (label, source)
    elif old[0] != label:
        rows[ua] = (None, old[1])


def main(crawlerdetect, fake, woothee, useragents):
    rows = {}
    fixtures = os.path.join(crawlerdetect, "tests/fixtures/user_agent")
    for name, label in (("crawlers.txt", "bot"), ("devices.txt", "browser")):
        for line in open(os.path.join(fixtures, name), encoding="utf-8", errors="replace"):
            add(rows, line, label, "crawlerdetect/" + name)
    for path in sorted(glob.glob(os.path.join(woothee, "**/testsets/*.yaml"), recursive=True)):
        name = os.path.basename(path)
        if name.startswith("crawler"):
            label = "bot"
        elif name.startswith(("pc", "smartphone", "mobilephone", "appliance")):
            label = "browser"
        else:
            continue
        for d in yaml.load(open(path), Loader=yaml.CSafeLoader) or []:
            add(rows, d.get("target"), label, "woothee/" + name)
    for path in glob.glob(os.path.join(fake, "**/data/browsers.jsonl"), recursive=True):
        for line in open(path, encoding="utf-8"):
            add(rows, json.loads(line).get("useragent"), "browser", "fake-useragent")
    for path in glob.glob(os.path.join(useragents, "**/dist/user-agents.json"), recursive=True):
        for d in json.load(open(path, encoding="utf-8")):
            add(rows, d.get("userAgent"), "browser", "user-agents")
    with gzip.open("more_ua.tsv.gz", "wt", compresslevel=9, encoding="utf-8") as out:
        out.write("split\tlabel\tsource\tuser_agent\n")
        for ua, (label, source) in rows.items():
            if label is None:
                continue
            split = "design" if hashlib.sha1(ua.encode()).digest()[0] < 128 else "held-out"
            out.write(f"{split}\t{label}\t{source}\t{ua}\n")


if __name__ == "__main__":
    main(*sys.argv[1:5])
