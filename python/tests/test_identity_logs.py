"""botscope.Registry, parse_log_line and analyze_logs: the command's
answers, through the package."""

import gzip
import json
import os
import shutil
import socket
import subprocess
import time

import pytest

import botscope
from conftest import EXAMPLES

LOG = EXAMPLES / "logs" / "elastic_examples_apache_logs.log"
GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"


def test_identify():
    reg = botscope.Registry()
    assert len(reg) > 100
    g = reg.identify(GOOGLEBOT)
    assert g["is_bot"] is True
    assert g["claimed_bot"] == "Googlebot"
    assert g["category"] == "search" and g["operator"] == "Google"
    assert g["reason"] == "names the registered bot Googlebot"
    b = reg.identify("Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0")
    assert b["is_bot"] is False and b["claimed_bot"] is None and b["family"] == "Firefox"
    # A mention is not a claim.
    assert reg.identify("Mozilla/5.0 (like Googlebot)")["claimed_bot"] is None
    # A type for every client.
    assert g["client_type"] == "crawler" and b["client_type"] == "browser"
    types = {
        "curl/8.5.0": "library",
        "python-requests/2.32.3": "library",
        "Feedly/1.0 (+http://www.feedly.com/fetcher.html; like FeedFetcher-Google)": "feed-reader",
        "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)": "preview",
        "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0.0.0 Safari/537.36": "headless",
        "Mozilla/5.0+(compatible; UptimeRobot/2.0; http://www.uptimerobot.com/)": "monitor",
        "Mozilla/5.0 (compatible; Nmap Scripting Engine; https://nmap.org/book/nse.html)": "scanner",
        "VLC/3.0.20 LibVLC/3.0.20": "media-player",
        "server-bag [iPhone OS,17.5.1,21F90,iPhone15,2]": "os-service",
        "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; OAI-SearchBot/1.0; +https://openai.com/searchbot)": "crawler",
    }
    for ua, want in types.items():
        assert reg.identify(ua)["client_type"] == want, ua
    assert reg.identify("Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; OAI-SearchBot/1.0; +https://openai.com/searchbot)")["category"] == "ai-search"
    assert "GPTBot" in reg.agents(category="ai-training")
    assert "Googlebot" in reg.agents(operator="google")
    with pytest.raises(ValueError, match="unknown category `ai-crawler`"):
        reg.agents(category="ai-crawler")
    assert any(b["name"] == "Googlebot" for b in reg.bots())


@pytest.mark.parametrize(
    "ip,ua",
    [
        ("66.249.66.1", GOOGLEBOT),  # verified by the published list
        ("203.0.113.9", GOOGLEBOT),  # claims Googlebot from elsewhere
        ("66.249.66.1", None),  # a crawler's address, no claim
        ("192.0.2.1", "curl/8.0"),  # neither
        ("::ffff:66.249.66.1", "Googlebot/2.1"),  # IPv4-mapped
    ],
)
def test_verify_is_the_commands_verdict(cli, ip, ua):
    args = ["verify", ip, "--offline", "--format", "json"] + (["--ua", ua] if ua else [])
    _, out, _ = cli(*args, check=False)
    got = botscope.Registry().verify(ip, ua)
    assert got == json.loads(out)
    assert list(got) == list(json.loads(out))  # the same keys, in order


def test_a_user_registry_layers_as_for_the_command(tmp_path, cli):
    mine = tmp_path / "mine.yaml"
    mine.write_text(
        "bots:\n- name: ExampleBot\n  operator: Example\n  category: other\n"
        "  ua_tokens: [ExampleBot]\n  cidr_list: ['198.51.100.0/24']\n"
    )
    reg = botscope.Registry(mine)
    v = reg.verify("198.51.100.7", "ExampleBot/1.0")
    assert v["verdict"] == "verified" and v["claimed_bot"] == "ExampleBot"
    _, out, _ = cli("verify", "198.51.100.7", "--ua", "ExampleBot/1.0", "--offline",
                    "--registry", mine, "--format", "json")
    assert v == json.loads(out)
    bad = tmp_path / "bad.yaml"
    bad.write_text("bots:\n- name: X\n  cidr_list: ['not-an-address']\n")
    with pytest.raises(botscope.Error, match="invalid registry"):
        botscope.Registry(bad)
    with pytest.raises(botscope.Error, match="nope.yaml"):
        botscope.Registry(tmp_path / "nope.yaml")
    with pytest.raises(ValueError):
        botscope.Registry().verify("not-an-ip")


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.skipif(shutil.which("dnsmasq") is None, reason="dnsmasq (scripts/test installs it)")
def test_verify_online_asks_dns(tmp_path):
    """FCrDNS through a real DNS server on loopback: an address outside
    Google's published list whose reverse name (under googlebot.com)
    confirms forward is verified by DNS; one whose name is not Google's is
    spoofed."""
    port = free_port()
    conf = tmp_path / "dnsmasq.conf"
    conf.write_text(
        "no-resolv\nno-hosts\nbind-interfaces\nlisten-address=127.0.0.1\n"
        f"port={port}\n"
        "ptr-record=66.2.0.192.in-addr.arpa,crawl-192-0-2-66.googlebot.com\n"
        "address=/crawl-192-0-2-66.googlebot.com/192.0.2.66\n"
        "ptr-record=9.113.0.203.in-addr.arpa,host.example.net\n"
        "address=/host.example.net/203.0.113.9\n"
    )
    p = subprocess.Popen(
        ["dnsmasq", "--keep-in-foreground", f"--conf-file={conf}", f"--pid-file={tmp_path/'pid'}",
         "--user=" + ("nobody" if os.geteuid() == 0 else os.environ.get("USER", "nobody"))],
        stderr=subprocess.PIPE,
    )
    try:
        time.sleep(0.3)
        assert p.poll() is None, p.stderr.read()
        reg = botscope.Registry()
        ns = [f"127.0.0.1:{port}"]
        assert reg.verify("192.0.2.66", GOOGLEBOT)["verdict"] != "verified"
        v = reg.verify("192.0.2.66", GOOGLEBOT, offline=False, nameservers=ns)
        assert v["verdict"] == "verified", v
        assert "fcrdns" in v["methods"], v
        assert v["hostnames"] == ["crawl-192-0-2-66.googlebot.com"]
        s = reg.verify("203.0.113.9", GOOGLEBOT, offline=False, nameservers=ns)
        assert s["verdict"] == "spoofed", s
        with pytest.raises(ValueError):
            reg.verify("66.249.66.1", GOOGLEBOT, offline=False, nameservers=["not a server"])
        # Offline, nameservers are not read.
        assert reg.verify("66.249.66.1", GOOGLEBOT, nameservers=["x"])["verdict"] == "verified"
    finally:
        p.terminate()
        p.wait()


COMBINED = '66.249.66.1 - - [17/May/2015:10:05:03 +0000] "GET /robots.txt?x=1 HTTP/1.1" 200 52 "-" "Googlebot/2.1"'


def test_parse_log_line():
    r = botscope.parse_log_line(COMBINED + "\n")
    assert r["ip"] == "66.249.66.1" and r["time"] == 1431857103
    assert (r["method"], r["path"], r["protocol"], r["status"], r["bytes"]) == (
        "GET", "/robots.txt?x=1", "HTTP/1.1", 200, 52)
    assert r["referer"] is None and r["user_agent"] == "Googlebot/2.1"
    assert r["truncated"] is False
    assert botscope.parse_log_line(COMBINED.encode()) == r
    common = botscope.parse_log_line(COMBINED.rsplit(' "-"', 1)[0], format="common")
    assert common["status"] == 200 and common["user_agent"] is None
    nginx = botscope.parse_log_line(
        '1.2.3.4 [17/May/2015:10:05:03 +0000] "GET / HTTP/1.1" 404 "sig1=:abc:"',
        format='$remote_addr [$time_local] "$request" $status "$http_signature"',
    )
    assert nginx["status"] == 404 and nginx["signature"] == "sig1=:abc:"
    j = botscope.parse_log_line(
        json.dumps({"remote_addr": "1.2.3.4", "time": "2015-05-17T10:05:03Z", "request": "GET / HTTP/1.1", "status": 200}),
        format="json",
    )
    assert j["ip"] == "1.2.3.4"

    for line, reason in [
        ("", "empty"),
        ("garbage", "layout-mismatch"),
        ('1.2.3.4 - - [99/Foo/2015:10:05:03 +0000] "GET / HTTP/1.1" 200 5 "-" "x"', "bad-time"),
        (b"\x00\x01\x02 binary", "binary"),
        ("x" * 70_000, "too-long"),
    ]:
        with pytest.raises(botscope.MalformedLine) as e:
            botscope.parse_log_line(line)
        assert e.value.args[1] == reason, (line[:20], e.value.args)
        assert isinstance(e.value, ValueError)
    with pytest.raises(ValueError, match="no client address"):
        botscope.parse_log_line(COMBINED, format="$nonsense")
    with pytest.raises(TypeError):
        botscope.parse_log_line(42)


def test_analyze_logs_is_the_commands_report(cli, tmp_path):
    robots = tmp_path / "robots.txt"
    robots.write_text("User-agent: *\nDisallow: /blog/\n")
    gz = tmp_path / "access.log.gz"
    with gzip.open(gz, "wb") as f:
        f.write(LOG.read_bytes())
    _, out, _ = cli("logs", "analyze", gz, "--robots", robots, "--format", "json")
    want = json.loads(out)
    got = botscope.analyze_logs(gz, robots=robots)
    assert got == want
    assert got["schema"] == "botscope.logs/1" and got["lines"]["total"] == 10_000
    assert list(got) == list(want)
    # Kim et al.'s compliance, all robots together and per robot.
    assert {u["directive"] for u in got["compliance"]} <= {
        "nothing", "crawl-delay", "disallow-some", "disallow-all", "unknown"
    }
    assert any(r.get("compliance", {}).get("sessions", 0) > 0 for r in got["robots"].values())
    # A list of paths; robots.txt versions by date; a window.
    two = botscope.analyze_logs([str(LOG), LOG], robots=[f"2015-05-17={robots}"], threads=1)
    assert two["lines"]["total"] == 20_000
    window = botscope.analyze_logs(LOG, since="2015-05-18", until=1431993600 + 3600)
    assert 0 < window["lines"]["analyzed"] < 10_000


def test_analyze_logs_refuses_what_the_command_refuses(tmp_path):
    junk = tmp_path / "junk.log"
    junk.write_bytes(b"\x00\x01 not a log\n" * 100)
    with pytest.raises(botscope.Error, match="could be read|parsed"):
        botscope.analyze_logs(junk)
    with pytest.raises(botscope.Error, match="no request|window"):
        botscope.analyze_logs(LOG, since="2030-01-01")
    with pytest.raises(ValueError, match="at least one"):
        botscope.analyze_logs([])
    with pytest.raises(ValueError):
        botscope.analyze_logs(LOG, robots="2015-13-45=nope.txt")
    with pytest.raises(botscope.Error):
        botscope.analyze_logs(LOG, robots=tmp_path / "missing-robots.txt")
    with pytest.raises(botscope.Error, match="failed to open .*missing.log"):
        botscope.analyze_logs([LOG, tmp_path / "missing.log"])


def test_analyze_logs_refuses_pipes_and_devices_at_once(tmp_path):
    # A FIFO would wait for a writer and /dev/zero never ends: refused,
    # saying what is there, without opening either.
    fifo = tmp_path / "access.log"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match=r"access\.log: it is a FIFO \(a named pipe\), not a regular file"):
        botscope.analyze_logs(fifo)
    with pytest.raises(ValueError, match="/dev/zero: it is a device"):
        botscope.analyze_logs("/dev/zero")
    with pytest.raises(ValueError, match="it is a directory"):
        botscope.analyze_logs(tmp_path)


def test_ctrl_c_stops_analyze_logs(tmp_path):
    # A log large enough to take a while; SIGINT half-way raises
    # KeyboardInterrupt promptly instead of being held until the end.
    import signal
    import threading

    big = tmp_path / "big.log"
    with open(big, "wb") as out:
        chunk = LOG.read_bytes()
        for _ in range(10):
            out.write(chunk)
    # 40 times 100,000 lines: seconds of work, far past the signal.
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    # Python's own Ctrl-C handler, whatever the process was started with
    # (a command started in the background by a shell ignores SIGINT, and
    # Python then leaves it ignored).
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    started = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            botscope.analyze_logs([big] * 40, threads=1)
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, before)
    assert time.monotonic() - started < 20


def test_a_dash_is_a_file_never_the_interpreters_input(tmp_path, monkeypatch):
    # The command reads standard input for `-`; from Python it is the file
    # of that name, so a call never blocks on (or eats) sys.stdin.
    monkeypatch.chdir(tmp_path)
    with pytest.raises(botscope.Error, match=r"\./-"):
        botscope.Registry("-")
    (tmp_path / "-").write_text(
        "bots:\n- name: DashBot\n  operator: Example\n  category: other\n"
        "  ua_tokens: [DashBot]\n  cidr_list: ['198.51.100.0/24']\n"
    )
    assert botscope.Registry("-").identify("DashBot/1.0")["claimed_bot"] == "DashBot"
    shutil.copy(LOG, tmp_path / "-")
    got = botscope.analyze_logs("-")
    assert got["inputs"][0]["name"] == "./-", got["inputs"]
    assert got["lines"] == botscope.analyze_logs(LOG)["lines"]
