#!/usr/bin/env python3
"""Builds matomo_types.tsv.gz: User-Agents labelled with the client type
botscope should give them, from Matomo Device Detector's test fixtures as
shipped in PyPI's `device_detector` 6.5.1 sdist
(device_detector/tests/fixtures/upstream/*.yml).

    pip download --no-deps --no-binary :all: device_detector==6.5.1
    tar xzf device_detector-6.5.1.tar.gz
    python3 build_matomo_types.py device_detector-6.5.1/device_detector/tests/fixtures/upstream

The label is Matomo's own, mapped onto botscope's types:
- bots.yml, by the bot's category: Site Monitor, Network Monitor and
  Benchmark are `monitor`; Security Checker and Security search bot
  `scanner`; Social Media Agent (link previews) `preview`; Feed Fetcher,
  Feed Parser and Feed Reader `feed-reader`; every other category
  (Crawler, Search bot, AI Data Scraper, AI Search Crawler, AI Assistant,
  Service Agent, Validator, …) `crawler`;
- the other fixtures, by the client's type: browser `browser` (a headless
  one `headless`), and the apps a person runs (mobile app, pim, messaging,
  av, p2p) `browser` too; mediaplayer `media-player`; feed reader
  `feed-reader`; library `library`. Entries without a client are left out.

Each distinct User-Agent is kept once, with the first file that has it.
The split is fixed by the SHA-1 of the User-Agent, as matomo_ua.tsv.gz's:
`design` (first byte < 128) was looked at while the rules were made;
`held-out` was not, and is where the figures are measured.
"""
import glob
import gzip
import hashlib
import os
import sys

import yaml

PEOPLE = {"browser", "mobile app", "pim", "messaging", "av", "p2p"}
BOTS = {
    "Site Monitor": "monitor",
    "Network Monitor": "monitor",
    "Benchmark": "monitor",
    "Security Checker": "scanner",
    "Security search bot": "scanner",
    "Social Media Agent": "preview",
    "Feed Fetcher": "feed-reader",
    "Feed Parser": "feed-reader",
    "Feed Reader": "feed-reader",
}
CLIENTS = {"mediaplayer": "media-player", "feed reader": "feed-reader", "library": "library"}


def label(name, d):
    if name == "bots.yml":
        cat = (d.get("bot") or {}).get("category") or ""
        return BOTS.get(cat, "crawler"), cat or "bot", (d.get("bot") or {}).get("name") or ""
    client = d.get("client") or {}
    kind = client.get("type")
    cname = client.get("name") or ""
    if kind in PEOPLE:
        return ("headless" if "headless" in cname.lower() else "browser"), kind, cname
    if kind in CLIENTS:
        return CLIENTS[kind], kind, cname
    return None


def main(base):
    rows = {}
    for path in sorted(glob.glob(os.path.join(base, "*.yml"))):
        name = os.path.basename(path)
        for d in yaml.load(open(path), Loader=yaml.CSafeLoader) or []:
            ua = d.get("user_agent")
            if not isinstance(ua, str) or not ua.strip() or "\t" in ua or "\n" in ua:
                continue
            got = label(name, d)
            if got is not None:
                rows.setdefault(ua, got)
    with gzip.open("matomo_types.tsv.gz", "wt", compresslevel=9) as out:
        out.write("split\texpected\tmatomo\tname\tuser_agent\n")
        for ua, (expected, matomo, cname) in rows.items():
            split = "design" if hashlib.sha1(ua.encode()).digest()[0] < 128 else "held-out"
            cname = cname.replace("\t", " ")
            out.write(f"{split}\t{expected}\t{matomo}\t{cname}\t{ua}\n")


if __name__ == "__main__":
    main(sys.argv[1])
