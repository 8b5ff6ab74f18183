"""Reads an Atom feed (the file given, or standard input with `-`) with
feedparser, as feed readers do, and checks RFC 4287's requirements that
feedparser tolerates: the feed and each entry have an id, a title and an
updated time; the feed has an author; entry ids are unique. Prints the
feed as JSON; exits 1 with the problem otherwise."""

import json
import sys
import xml.etree.ElementTree as ET

import feedparser

ATOM = "{http://www.w3.org/2005/Atom}"

path = sys.argv[1]
data = sys.stdin.buffer.read() if path == "-" else open(path, "rb").read()
problems = []
parsed = feedparser.parse(data)
if parsed.bozo:
    problems.append(f"not well-formed: {parsed.bozo_exception}")
if parsed.version != "atom10":
    problems.append(f"read as {parsed.version!r}, not Atom 1.0")
root = ET.fromstring(data)
if root.tag != ATOM + "feed":
    problems.append(f"the root is {root.tag}")
for need in ("id", "title", "updated"):
    if root.find(ATOM + need) is None:
        problems.append(f"the feed has no {need}")
if root.find(ATOM + "author") is None:
    problems.append("the feed has no author")
ids = []
for e in root.findall(ATOM + "entry"):
    for need in ("id", "title", "updated"):
        if e.find(ATOM + need) is None or not (e.find(ATOM + need).text or "").strip():
            problems.append(f"an entry has no {need}")
    ids.append(e.find(ATOM + "id").text)
if len(set(ids)) != len(ids):
    problems.append("entry ids repeat")
if problems:
    print("\n".join(problems), file=sys.stderr)
    sys.exit(1)
print(json.dumps({
    "title": parsed.feed.get("title"),
    "id": parsed.feed.get("id"),
    "updated": parsed.feed.get("updated"),
    "self": next((l["href"] for l in parsed.feed.get("links", []) if l.get("rel") == "self"), None),
    "entries": [
        {"id": e.get("id"), "title": e.get("title"), "updated": e.get("updated"),
         "link": e.get("link"), "content": e.get("summary")}
        for e in parsed.entries
    ],
}))
