#!/usr/bin/env python3
"""The attacks of strangers' bytes against a running demo, timed.

Starts `botscope serve` (the demo) on loopback, then, one after the other:
a submission of a 1,000 x 1,000 robots.txt and its bias page; a check of
1,000 URLs against a group of 15,000 User-agent lines; uploads of 300,000
and 1,000,000 log lines of distinct made-up robots (gzip). Meanwhile a
search is asked every 200 ms. Prints each answer's status and time, the
slowest search during the attacks, and the server's resident memory (after
each upload, and its peak). Loopback only; standard library only.

    cargo build --release -p botscope
    python3 scripts/attacks.py target/release/botscope
"""

import gzip
import http.client
import json
import os
import subprocess
import sys
import threading
import time
import uuid

PORT = int(os.environ.get("PORT", "18181"))


def request(method, path, body=None, headers=None, timeout=120):
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=timeout)
    t = time.monotonic()
    c.request(method, path, body=body, headers=headers or {})
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, data, time.monotonic() - t


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else "target/release/botscope"
    server = subprocess.Popen(
        [binary, "serve", "--listen", f"127.0.0.1:{PORT}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(600):
            try:
                if request("GET", "/healthz", timeout=2)[0] == 200:
                    break
            except OSError:
                pass
            time.sleep(0.2)
        peak = [rss_kb(server.pid)]
        searches = []
        stop = threading.Event()

        def watch():
            while not stop.is_set():
                peak[0] = max(peak[0], rss_kb(server.pid))
                time.sleep(0.05)

        def search():
            n = 0
            while not stop.is_set():
                n += 1
                try:
                    s, _, t = request("GET", f"/search?q=disallow:/p{n}", timeout=60)
                    searches.append((s, t))
                except OSError:
                    searches.append((0, 60.0))
                time.sleep(0.2)

        threading.Thread(target=watch, daemon=True).start()
        threading.Thread(target=search, daemon=True).start()
        rows = []

        body = "".join(f"User-agent: b{i}\n" for i in range(1000))
        body += "".join(f"Disallow: /p{i}\n" for i in range(1000))
        s, _, t = request(
            "POST",
            "/api/submit",
            json.dumps({"site": "attack.example", "robots_txt": body}),
            {"Content-Type": "application/json"},
        )
        rows.append(("submit 1,000 x 1,000 (33 KB)", s, t))
        s, _, t = request("GET", "/site/attack.example/bias")
        rows.append(("its bias page", s, t))

        group = "".join(f"User-agent: b{i}\n" for i in range(15000))
        group += "".join(f"Disallow: /p{i}\n" for i in range(1000))
        urls = [f"https://attack.example/p{i}/x" for i in range(1000)]
        s, _, t = request(
            "POST",
            "/api/check",
            json.dumps({"robots_txt": group, "agent": "b", "urls": urls}),
            {"Content-Type": "application/json"},
        )
        rows.append(("check 1,000 URLs, 15,000 agents", s, t))

        for lines in (300_000, 1_000_000):
            out = []
            for i in range(lines):
                ip = f"{10 + (i >> 24) % 200}.{(i >> 16) & 255}.{(i >> 8) & 255}.{i & 255}"
                out.append(
                    f'{ip} - - [24/Nov/2026:10:{(i // 60) % 60:02d}:{i % 60:02d} +0000] '
                    f'"GET /p/{i} HTTP/1.1" 200 512 "-" '
                    f'"Mozilla/5.0 (compatible; Crawler{i}/1.0; +http://example.com/bot{i})"\n'
                )
            data = gzip.compress("".join(out).encode(), 6)
            boundary = uuid.uuid4().hex
            form = (
                f"--{boundary}\r\nContent-Disposition: form-data; name=\"log\"; "
                f"filename=\"attack.log.gz\"\r\nContent-Type: application/gzip\r\n\r\n"
            ).encode() + data + f"\r\n--{boundary}--\r\n".encode()
            s, _, t = request(
                "POST",
                "/logs",
                form,
                {"Content-Type": f"multipart/form-data; boundary={boundary}"},
                timeout=600,
            )
            time.sleep(1)
            rows.append(
                (
                    f"upload {lines:,} distinct made-up robots ({len(data) / 1e6:.1f} MB gzip)",
                    s,
                    t,
                    rss_kb(server.pid),
                    peak[0],
                )
            )
        stop.set()
        time.sleep(0.3)
        print("| attack | status | time | memory after | peak |")
        print("|---|---|---|---|---|")
        for r in rows:
            mem = f"{r[3] / 1024:.0f} MB | {r[4] / 1024:.0f} MB" if len(r) > 3 else "– | –"
            print(f"| {r[0]} | {r[1]} | {r[2]:.2f} s | {mem} |")
        slow = max(t for _, t in searches) if searches else 0
        bad = sum(1 for s, _ in searches if s != 200)
        print(
            f"\n{len(searches)} searches meanwhile: slowest {slow:.2f} s, {bad} not answered 200"
        )
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
