#!/usr/bin/env python3
"""Ways around a gate in front of an application, tried against any
running `botscope gate --upstream` (or any reverse proxy), one line each.

Each attack is sent with a raw socket, byte for byte (no HTTP library to
tidy it up), and judged by the gate's answer alone: a respelling of a
path the policy closes must be refused (400), never passed; an h2c
upgrade must never become a tunnel; framing the application could read
otherwise must be refused; a request head's limit must not depend on the
connection's past; passes are never revoked without the operators'
token. Give a path your policy refuses (`--closed`) and one it
allows (`--open`).

    python3 scripts/gate-attacks.py http://127.0.0.1:8091 --closed /private/x

Prints `ok`, `FAIL` or `info` and the attack per line; exits 0 when no
line says FAIL, 1 when one does, 2 when the gate cannot be asked (or the
closed path is not closed). Standard library only.
"""

import argparse
import socket
import sys
import urllib.parse


def send(host, port, data, keep=None, timeout=10.0):
    """Sends `data` on a fresh connection (or `keep`) and reads one
    response: (status, headers dict, body bytes), or None when the
    connection closed without one."""
    s = keep or socket.create_connection((host, port), timeout=timeout)
    s.settimeout(timeout)
    try:
        s.sendall(data)
    except OSError:
        pass
    return read_one(s), s


def read_one(s):
    buf = b""
    try:
        while b"\r\n\r\n" not in buf:
            chunk = s.recv(65536)
            if not chunk:
                return None
            buf += chunk
    except OSError:
        return None
    head, _, rest = buf.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    try:
        status = int(lines[0].split(" ")[1])
    except (IndexError, ValueError):
        return None
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    length = headers.get("content-length")
    if status == 101 or status == 204 or status == 304:
        return status, headers, b""
    if length is not None and length.isdigit():
        need = int(length)
        return status, headers, read_until(s, rest, lambda b: len(b) >= need)[:need]
    if "chunked" in headers.get("transfer-encoding", ""):
        rest = read_until(s, rest, lambda b: b.endswith(b"0\r\n\r\n"))
    return status, headers, rest


def read_until(s, got, done):
    """Reads on until `done(got)` or the connection ends."""
    try:
        while not done(got):
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk
    except OSError:
        pass
    return got


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("url", help="the gate, e.g. http://127.0.0.1:8091")
    ap.add_argument("--closed", default="/private/x", help="a path the policy refuses (two segments or more)")
    ap.add_argument("--open", default="/", help="a path the policy allows")
    ap.add_argument("--host", help="the Host header to send (default: the URL's)")
    a = ap.parse_args()
    u = urllib.parse.urlsplit(a.url)
    if u.scheme != "http" or not u.hostname:
        print("gate-attacks: give the gate's http:// URL", file=sys.stderr)
        return 2
    host, port = u.hostname, u.port or 80
    name = a.host or u.netloc
    segs = [x for x in a.closed.split("/") if x]
    if len(segs) < 2:
        print("gate-attacks: --closed needs two segments or more (/private/x)", file=sys.stderr)
        return 2
    first, rest = segs[0], "/".join(segs[1:])

    def req(target, method="GET", more=""):
        return f"{method} {target} HTTP/1.1\r\nHost: {name}\r\n{more}Connection: close\r\n\r\n".encode()

    try:
        base = send(host, port, req(a.closed))[0]
        opened = send(host, port, req(a.open))[0]
    except OSError as e:
        print(f"gate-attacks: {a.url}: {e}", file=sys.stderr)
        return 2
    if base is None or 200 <= base[0] < 300:
        print(f"gate-attacks: {a.closed} is not refused ({base and base[0]}): give --closed a path the policy refuses", file=sys.stderr)
        return 2
    closed_status = base[0]
    failed = 0

    def line(ok, what, got):
        nonlocal failed
        word = {True: "ok", False: "FAIL", None: "info"}[ok]
        if ok is False:
            failed += 1
        shown = what.encode("unicode_escape").decode("ascii")
        print(f"{word:<5} {shown} -> {got}")

    def status(r):
        return "closed" if r is None else str(r[0])

    # 1. Upgrades: only a WebSocket may become a tunnel.
    r, s = send(host, port, f"GET {a.open} HTTP/1.1\r\nHost: {name}\r\nUpgrade: h2c\r\nConnection: Upgrade, HTTP2-Settings\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n\r\n".encode())
    if r is not None and r[0] == 101:
        line(False, f"GET {a.open} Upgrade: h2c (a tunnel nobody judges)", "101")
    else:
        r2, _ = send(host, port, req(a.closed), keep=s)
        ok = r2 is None or r2[0] == closed_status
        line(ok, f"GET {a.open} Upgrade: h2c, then GET {a.closed} on the connection", f"{status(r)}, then {status(r2)}")
    s.close()
    r, s = send(host, port, f"GET {a.open} HTTP/1.1\r\nHost: {name}\r\nUpgrade: h2c, websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n".encode())
    named = r[1].get("upgrade", "").lower() if r else ""
    line(r is None or r[0] != 101 or named == "websocket", f"GET {a.open} Upgrade: h2c, websocket", f"{status(r)} {named}".strip())
    s.close()

    # 2 and 3. Spellings application stacks read otherwise.
    hexed = "%25{:02x}".format(ord(first[0])) + first[1:]
    for t in [
        f"/{first};x=1/{rest}",
        f"/;x=1/{first}/{rest}",
        f"/x/..;/{first}/{rest}",
        f"/x/.;/../{first}/{rest}",
        f"/.well-known/..;/{first}/{rest}",
        f"/\\{first}/{rest}",
        f"/%5c{first}/{rest}",
        f"/x/%2e%2e%5c{first}/{rest}",
        f"/{first}./{rest}",
        f"/{first}%20/{rest}",
        f"/{first}%2e/{rest}",
        f"/{first}::$DATA/{rest}",
        f"/{first}%252f{rest}",
        f"/%252e%252e/{first}/{rest}",
        f"/{hexed}/{rest}",
        f"/{first}%c0%af{rest}",
        f"/{first}%00/{rest}",
        f"/../{first}/{rest}",
        f"/%2e%2e/{first}/{rest}",
    ]:
        r = send(host, port, req(t))[0]
        line(r is not None and r[0] == 400, f"GET {t}", status(r))
    upper = "/" + first.upper() + "/" + rest
    r = send(host, port, req(upper))[0]
    verdict = "refused" if r is not None and r[0] == closed_status else "passed: under an application that routes without case, set path_case: insensitive"
    line(None, f"GET {upper}", f"{status(r)} ({verdict})")

    # 5. Host and framing.
    for what, data, want in [
        ("two Host lines", f"GET {a.open} HTTP/1.1\r\nHost: {name}\r\nHost: other.example\r\nConnection: close\r\n\r\n", {400}),
        ("HTTP/1.1 without Host", f"GET {a.open} HTTP/1.1\r\nConnection: close\r\n\r\n", {400}),
        ("a Host other than the absolute target's", f"GET http://other.example{a.open} HTTP/1.1\r\nHost: {name}\r\nConnection: close\r\n\r\n", {400}),
        ("CONNECT", f"CONNECT {name} HTTP/1.1\r\nHost: {name}\r\nConnection: close\r\n\r\n", {405}),
        ("GET *", f"GET * HTTP/1.1\r\nHost: {name}\r\nConnection: close\r\n\r\n", {400}),
        ("OPTIONS *", f"OPTIONS * HTTP/1.1\r\nHost: {name}\r\nConnection: close\r\n\r\n", set(range(200, 500))),
        ("chunk size 0x5", f"POST {a.open} HTTP/1.1\r\nHost: {name}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n0x5\r\nhello\r\n0\r\n\r\n", {400}),
        ("chunk size -5", f"POST {a.open} HTTP/1.1\r\nHost: {name}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n-5\r\nhello\r\n0\r\n\r\n", {400}),
        ("chunk size of 17 digits", f"POST {a.open} HTTP/1.1\r\nHost: {name}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n10000000000000005\r\nhello\r\n0\r\n\r\n", {400}),
        ("Transfer-Encoding: gzip, chunked", f"POST {a.open} HTTP/1.1\r\nHost: {name}\r\nTransfer-Encoding: gzip, chunked\r\nConnection: close\r\n\r\n0\r\n\r\n", {501, 400}),
    ]:
        r = send(host, port, data.encode())[0]
        line(r is not None and r[0] in want, what, status(r))

    # 6. One head limit, whatever came before on the connection.
    for size in (60_000, 90_000):
        big = req(a.open, more=f"X-Pad: {'a' * size}\r\n").replace(b"Connection: close\r\n", b"")
        fresh = send(host, port, big)[0]
        r, s = send(host, port, req(a.open).replace(b"Connection: close\r\n", b""))
        second = send(host, port, big, keep=s)[0]
        s.close()
        same = status(fresh) == status(second)
        line(same, f"a head of {size // 1000} KB, fresh and after a request", f"{status(fresh)} and {status(second)}")

    # 11. Revoking every pass is the operators' and needs their token:
    # never done for a request without it, whoever sends it (a botscope
    # gate answers 403, another proxy most likely 404).
    r = send(host, port, req("/.botscope/revoke-passes", method="POST", more="Content-Length: 0\r\n"))[0]
    line(r is None or not (200 <= r[0] < 300), "POST /.botscope/revoke-passes without the operators' token", status(r))

    if opened is None or not (200 <= opened[0] < 400):
        line(None, f"GET {a.open}", f"{status(opened)} (not allowed: the framing attacks above were refused for it)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
