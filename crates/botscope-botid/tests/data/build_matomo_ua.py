#!/usr/bin/env python3
"""Builds matomo_ua.tsv.gz, labelled User-Agents from Matomo Device Detector's
test fixtures, as shipped in PyPI's `device_detector` 6.5.1 sdist
(device_detector/tests/fixtures/upstream/*.yml).

    pip download --no-deps --no-binary :all: device_detector==6.5.1
    tar xzf device_detector-6.5.1.tar.gz
    python3 build_matomo_ua.py device_detector-6.5.1/device_detector/tests/fixtures/upstream

Labels: `bot` for bots.yml; `browser` for a client a person runs (Matomo's
client types browser, mobile app, mediaplayer, pim, feed reader, messaging,
av, p2p). HTTP libraries and entries without a client are left out: a
`curl` or an unknown string is neither. Each distinct User-Agent is kept
once, with the first file that has it.

The split is fixed by the SHA-1 of the User-Agent: `design` (first byte
< 128) was looked at while the classifier's rules were made; `held-out`
was not, and is where the figures are measured.
"""
import glob
import gzip
import hashlib
import os
import sys

import yaml

PEOPLE = {"browser", "mobile app", "mediaplayer", "pim", "feed reader", "messaging", "av", "p2p"}


def main(base):
    rows = {}
    for path in sorted(glob.glob(os.path.join(base, "*.yml"))):
        name = os.path.basename(path)
        for d in yaml.load(open(path), Loader=yaml.CSafeLoader) or []:
            ua = d.get("user_agent")
            if not isinstance(ua, str) or not ua.strip() or "\t" in ua or "\n" in ua:
                continue
            if name == "bots.yml":
                label, kind = "bot", "bot"
            else:
                kind = (d.get("client") or {}).get("type") or "none"
                if kind not in PEOPLE:
                    continue
                label = "browser"
            rows.setdefault(ua, (label, name, kind))
    with gzip.open("matomo_ua.tsv.gz", "wt", compresslevel=9) as out:
        out.write("split\tlabel\tfixture\tclient_type\tuser_agent\n")
        for ua, (label, name, kind) in rows.items():
            split = "design" if hashlib.sha1(ua.encode()).digest()[0] < 128 else "held-out"
            out.write(f"{split}\t{label}\t{name}\t{kind}\t{ua}\n")


if __name__ == "__main__":
    main(sys.argv[1])
