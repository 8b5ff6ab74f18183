"""docs/python.md's Scrapy section runs as written: its spider, through
``scrapy runspider``, over a loopback site that is botscope's real gate
in front of a small application, the crawler's key directory published
over HTTPS. The crawl obeys robots.txt, is paced by its Crawl-delay, and
every request's signature is verified by the gate; without the key the
same crawl is refused."""

import contextlib
import datetime
import json
import os
import re
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conftest import ROOT

pytest.importorskip("scrapy")

import botscope  # noqa: E402

DOC = ROOT / "docs" / "python.md"

ROBOTS = "User-agent: *\nDisallow: /private/\nCrawl-delay: 1\n"

# The application: each page links to the next ones.
PAGES = {
    "/": ["/a", "/b", "/private/x"],
    "/a": ["/c"],
    "/b": [],
    "/c": ["/private/y"],
    "/private/x": [],
    "/private/y": [],
}


def section():
    text = DOC.read_text(encoding="utf-8")
    return text.split("\n## In Scrapy\n", 1)[1]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tls_pair(d):
    """A certificate authority and a certificate for 127.0.0.1 it signed:
    (ca.pem, cert.pem, key.pem)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID
    import ipaddress

    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "botscope test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True, content_commitment=False, key_encipherment=False,
                data_encipherment=False, key_agreement=False, key_cert_sign=True,
                crl_sign=True, encipher_only=False, decipher_only=False,
            ),
            critical=True,
        )
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    paths = (d / "ca.pem", d / "cert.pem", d / "key.pem")
    paths[0].write_bytes(ca.public_bytes(pem))
    paths[1].write_bytes(cert.public_bytes(pem))
    paths[2].write_bytes(
        key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return paths


def serve(handler, context=None):
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    if context is not None:
        server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


class Quiet(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass


@contextlib.contextmanager
def running_site(tmp_path, botscope_bin, cli, *, robots=ROBOTS, policy=None, pages=None,
                 gate_args=(), registry=None):
    """The crawler's key and its directory on HTTPS, the application
    (``pages``: path to (links, extra headers)), and the gate in front of
    it: (gate URL, agent URL, the application's requests as (monotonic
    time, path))."""
    pages = pages or {p: (links, {}) for p, links in PAGES.items()}
    code, out, err = cli("keys", "generate", "--out", tmp_path / "keys")
    assert code == 0, err
    directory = (tmp_path / "keys" / "http-message-signatures-directory").read_bytes()
    ca, cert, key = tls_pair(tmp_path)

    class Directory(Quiet):
        def do_GET(self):
            if self.path != "/.well-known/http-message-signatures-directory":
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/http-message-signatures-directory+json")
            self.send_header("Content-Length", str(len(directory)))
            self.end_headers()
            self.wfile.write(directory)

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    keys_server = serve(Directory, context)
    agent = f"https://127.0.0.1:{keys_server.server_address[1]}"

    seen = []

    class App(Quiet):
        def do_GET(self):
            path = self.path.split("?")[0]
            seen.append((time.monotonic(), path))
            if path not in pages:
                self.send_error(404)
                return
            links, headers = pages[path]
            links = "".join(f'<a href="{p}">{p}</a> ' for p in links)
            body = f"<!doctype html><title>{path}</title><p>{links}</p>".encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            for k, v in headers.items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)

    app = serve(App)

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    robots_dir = tmp_path / "robots"
    robots_dir.mkdir()
    (robots_dir / "default.txt").write_text(robots.replace("{gate}", url))
    policy_file = tmp_path / "policy.yaml"
    policy_file.write_text(policy or (
        "default: deny\nrules:\n  - name: signed\n    signature: verified\n    action: allow\n"
    ))
    extra = list(gate_args)
    if registry is not None:
        (tmp_path / "registry.yaml").write_text(registry.format(agent=agent))
        extra += ["--registry", str(tmp_path / "registry.yaml")]
    gate = subprocess.Popen(
        [botscope_bin, "gate", "--upstream", f"http://127.0.0.1:{app.server_address[1]}",
         "--listen", f"127.0.0.1:{port}", "--robots-dir", str(robots_dir),
         "--policy", str(policy_file), "--allow-private", "--ca-file", str(ca), *extra],
        env={**os.environ, "HOME": str(cli.home)},
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    try:
        started = time.monotonic()
        while True:
            assert gate.poll() is None, gate.stderr.read().decode()
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() - started < 30, "the gate did not start"
                time.sleep(0.05)
        # The gate fetches a new agent's key directory off the request
        # path: signed requests first, until one verifies.
        signer = botscope.Signer((tmp_path / "keys" / "signing-key.jwk").read_text(), agent)
        warm = url + "/"
        while True:
            req = urllib.request.Request(warm, headers=dict(signer.sign("GET", warm)))
            try:
                with urllib.request.urlopen(req, timeout=5) as r:
                    assert r.status == 200
                    break
            except urllib.error.HTTPError as e:
                assert e.code == 403, e.code
                assert time.monotonic() - started < 30, "the signature never verified"
                time.sleep(0.1)
        seen.clear()
        yield url, agent, seen
    finally:
        gate.terminate()
        gate.wait()
        app.shutdown()
        keys_server.shutdown()


@pytest.fixture
def site(tmp_path, botscope_bin, cli):
    with running_site(tmp_path, botscope_bin, cli) as s:
        yield s


def crawl(tmp_path, spider, *settings):
    out = tmp_path / "pages.jsonl"
    out.unlink(missing_ok=True)
    args = [sys.executable, "-m", "scrapy"]
    # The section's command, as written.
    command = re.search(r"\nscrapy (runspider spider\.py -O pages\.jsonl)\n", section()).group(1)
    args += command.split()
    for s in settings:
        args += ["-s", s]
    p = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-4000:]
    pages = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    return pages, p.stderr


def test_the_scrapy_section_runs_as_written(site, tmp_path):
    url, agent, seen = site
    text = section()
    spider = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    assert "botscope.scrapy.RobotParser" in spider
    (tmp_path / "spider.py").write_text(
        spider.replace("http://127.0.0.1:8080", url).replace("https://crawler.example\"", agent + '"')
    )
    robots = re.search(r"\n```\n(User-agent.*?)```", text, re.S).group(1)
    assert robots == ROBOTS
    shell = re.findall(r"```sh\n(.*?)```", text, re.S)
    assert shell[0].splitlines()[0] == "botscope keys generate --out keys"  # done by `site`

    pages, log = crawl(tmp_path, spider)
    assert "Warning" not in log, log[-3000:]
    got = sorted((p["url"].removeprefix(url), p["status"]) for p in pages)
    assert got == [("/", 200), ("/a", 200), ("/b", 200), ("/c", 200)], log[-3000:]
    # Obeyed: no request under /private/ reached the application.
    paths = [p for _, p in seen]
    assert sorted(paths) == ["/", "/a", "/b", "/c"], paths
    assert "'robotstxt/forbidden': 2" in log
    assert "'botscope/signed':" in log
    # Paced: Crawl-delay 1, a second at least between two requests.
    times = [t for t, _ in seen]
    gaps = [b - a for a, b in zip(times, times[1:])]
    assert min(gaps) >= 0.95, gaps

    # Without the key the gate verifies nothing: every page refused.
    seen.clear()
    pages, log = crawl(tmp_path, spider, "BOTSCOPE_SIGNING_KEY=", "HTTPERROR_ALLOW_ALL=1")
    assert [(p["url"].removeprefix(url), p["status"]) for p in pages] == [("/", 403)], log[-3000:]
    assert seen == []


def test_a_missing_key_stops_the_crawl_with_the_reason(site, tmp_path):
    url, agent, seen = site
    spider = re.search(r"```python\n(.*?)```", section(), re.S).group(1)
    (tmp_path / "spider.py").write_text(spider.replace("http://127.0.0.1:8080", url))
    args = [sys.executable, "-m", "scrapy", "runspider", "spider.py",
            "-s", "BOTSCOPE_SIGNING_KEY=no/such.jwk"]
    p = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert "BOTSCOPE_SIGNING_KEY 'no/such.jwk': No such file or directory" in p.stderr, p.stderr[-3000:]
    assert seen == []


RACE_SPIDER = """
import json, scrapy


class Race(scrapy.Spider):
    name = "race"

    async def start(self):
        for i in range(12):
            yield scrapy.Request(f"{self.site}/private/{i}", dont_filter=True)
        yield scrapy.Request(f"{self.site}/public", dont_filter=True)

    def parse(self, response):
        yield {"path": response.url.split("/", 3)[3], "status": response.status}
"""


@pytest.mark.parametrize("robots_status", [200, 404, 503])
def test_every_request_is_checked_and_statuses_read_as_rfc_9309_says(tmp_path, robots_status):
    """Twelve requests to a host wait while its robots.txt (`Disallow:
    /private/`, slow to answer) downloads. Scrapy 2.19's own middleware
    lets all but the first of them through unchecked (the shared
    Deferred's result is consumed by the first waiter); botscope's checks
    every one. A robots.txt answered 404 (its body rules or not) is no
    rules; 503 is complete disallow."""
    seen = []

    class Site(Quiet):
        def do_GET(self):
            if self.path == "/robots.txt":
                time.sleep(0.5)
                body = b"User-agent: *\nDisallow: /private/\n"
                self.send_response(robots_status)
            else:
                seen.append(self.path)
                body = b"page"
                self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = serve(Site)
    site = f"http://127.0.0.1:{server.server_address[1]}"
    (tmp_path / "race.py").write_text(RACE_SPIDER)

    def run(middlewares):
        seen.clear()
        out = tmp_path / "out.jsonl"
        out.unlink(missing_ok=True)
        args = [sys.executable, "-m", "scrapy", "runspider", "race.py", "-a", f"site={site}",
                "-O", "out.jsonl", "-s", "ROBOTSTXT_OBEY=True",
                "-s", "ROBOTSTXT_PARSER=botscope.scrapy.RobotParser",
                "-s", "RETRY_ENABLED=False", "-s", "HTTPERROR_ALLOW_ALL=True",
                "-s", "DOWNLOADER_MIDDLEWARES=" + json.dumps(middlewares)]
        p = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr[-3000:]
        return sorted(seen), p.stderr

    try:
        ours, log = run({
            "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
            "botscope.scrapy.RobotsTxtMiddleware": 100,
        })
        if robots_status == 200:
            assert ours == ["/public"], ours
            assert "'robotstxt/forbidden': 12" in log
            # Scrapy's own middleware, the same crawl: requests under
            # /private/ reach the site.
            theirs, _ = run({})
            assert any(p.startswith("/private/") for p in theirs), theirs
        elif robots_status == 404:
            assert len(ours) == 13, ours
        else:
            assert ours == [], ours
            assert "'botscope/robotstxt/unreachable': 1" in log
    finally:
        server.shutdown()


TERMS_SPIDER = """
import scrapy


class Terms(scrapy.Spider):
    name = "terms"

    async def start(self):
        yield scrapy.Request(self.site + "/")

    def parse(self, response):
        yield {
            "path": "/" + response.url.split("/", 3)[3],
            "status": response.status,
            "answer": response.meta["botscope_terms"]["answer"],
            "charged": response.meta.get("botscope_charged"),
        }
        yield from response.follow_all(css="a")
"""


def test_the_terms_middleware_skips_pays_within_the_budget_and_records(
    tmp_path, botscope_bin, cli
):
    """Through the real gate stating terms every way it can: robots.txt's
    Content-Usage, an RSL licence (served by the gate, named by a
    `License` line), a `Content-Usage` header on pages that state none,
    and pay per crawl. The crawl for `train-ai` asks for no page the
    terms refuse before it is fetched, drops the pages whose header
    refuses it, pays for news within its budget (two pages at USD 0.01
    under USD 0.03, each offer USD 0.02 set aside; the other news pages
    asked without an offer), and leaves a page priced over its maximum
    unpaid."""
    allow = {"Content-Usage": "train-ai=y"}
    pages = {
        "/": (["/plain", "/no-ai/x", "/licensed/x", "/premium/x"]
              + [f"/news/{i}" for i in range(5)], allow),
        "/plain": ([], {}),
        "/no-ai/x": ([], allow),
        "/licensed/x": ([], allow),
        "/premium/x": ([], allow),
        **{f"/news/{i}": ([], allow) for i in range(5)},
    }
    robots = ("License: {gate}/license.xml\nUser-agent: *\n"
              "Content-Usage: /no-ai/ train-ai=n\nAllow: /\n")
    rsl = tmp_path / "license.xml"
    rsl.write_text(
        '<rsl xmlns="https://rslstandard.org/rsl">\n'
        '  <content url="/licensed/"><license><prohibits type="usage">ai-train</prohibits>'
        "</license></content>\n</rsl>\n"
    )
    policy = (
        "default: deny\nrules:\n"
        "  - {name: premium, action: charge, price: USD 0.50, path: [/premium/]}\n"
        "  - {name: news, action: charge, price: USD 0.01, path: [/news/]}\n"
        "  - {name: signed, signature: verified, action: allow}\n"
    )
    registry = ("bots:\n- name: ExampleBot\n  category: ai-assistant\n"
                "  ua_tokens: [ExampleBot]\n  signature_agents: ['{agent}']\n")
    with running_site(tmp_path, botscope_bin, cli, robots=robots, policy=policy, pages=pages,
                      registry=registry,
                      gate_args=["--rsl", str(rsl), "--content-usage", "train-ai=n"]) as (url, agent, seen):
        (tmp_path / "terms.py").write_text(TERMS_SPIDER)
        middlewares = {
            "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
            "botscope.scrapy.RobotsTxtMiddleware": 100,
            "botscope.scrapy.TermsMiddleware": 120,
            "botscope.scrapy.WebBotAuthMiddleware": 950,
        }
        args = [sys.executable, "-m", "scrapy", "runspider", "terms.py", "-O", "out.jsonl",
                "-a", f"site={url}",
                "-s", "USER_AGENT=ExampleBot/1.0 (+https://crawler.example/bot)",
                "-s", "ROBOTSTXT_OBEY=True", "-s", "ROBOTSTXT_PARSER=botscope.scrapy.RobotParser",
                "-s", "DOWNLOADER_MIDDLEWARES=" + json.dumps(middlewares),
                "-s", "CONCURRENT_REQUESTS=1",
                "-s", "BOTSCOPE_SIGNING_KEY=keys/signing-key.jwk",
                "-s", f"BOTSCOPE_SIGNATURE_AGENT={agent}",
                "-s", "BOTSCOPE_USE=train-ai",
                "-s", "BOTSCOPE_MAX_PRICE=USD 0.02", "-s", "BOTSCOPE_BUDGET=USD 0.03"]
        p = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr[-3000:]
        log = p.stderr
        got = [json.loads(l) for l in (tmp_path / "out.jsonl").read_text().splitlines()]
        by_path = {g["path"]: g for g in got}
        paid = sorted(g["path"] for g in got if g["charged"])
        assert len(paid) == 2 and all(p.startswith("/news/") for p in paid), (got, log[-6000:])
        assert all(by_path[p]["charged"] == "USD 0.01" for p in paid)
        assert set(by_path) == {"/", *paid}, got
        assert by_path["/"]["answer"] == "allowed", got
        asked = {p for _, p in seen}
        # Refused before the fetch: never asked for.
        assert "/no-ai/x" not in asked and "/licensed/x" not in asked, asked
        # Fetched, and dropped for the header the gate added.
        assert "/plain" in asked
        # Priced over the maximum, or asked without an offer once the
        # budget could not keep one: answered 402 by the gate, never
        # reaching the application.
        assert "/premium/x" not in asked
        assert len([p for p in asked if p.startswith("/news/")]) == 2, asked
        for stat in ["'botscope/terms/refused': 2", "'botscope/terms/page-refused': 1",
                     "'botscope/terms/unpaid': 4", "'botscope/spent_millionths': 20000",
                     "'botscope/charged': 2"]:
            assert stat in log, (stat, log[-3000:])
