"""botscope.Robots, bias and Favorability: Google's vectors, agreement with
Google's reference parser on real files, every method, and bad input as
exceptions."""

import csv
import gc
import os

import pytest

import botscope
from conftest import VECTORS, jsonl


def body_of(v):
    if "robotstxt" in v:
        return v["robotstxt"].encode("utf-8")
    return bytes.fromhex(v["robotstxt_hex"])


@pytest.mark.parametrize("file,count", [("google_vectors.jsonl", 145), ("spec_test_vectors.jsonl", 400)])
def test_google_vectors(file, count):
    vectors = jsonl(VECTORS / file)
    assert len(vectors) == count
    failures = []
    for v in vectors:
        r = botscope.Robots(body_of(v))
        got = r.allowed(v["useragent"], v["url"])
        if got != v["allowed"]:
            failures.append((v["name"], v["useragent"], v["url"], got))
        # The batch call and the explanation say the same.
        assert r.allowed_many(v["useragent"], [v["url"]]) == [got]
        assert r.explain(v["useragent"], v["url"])["allowed"] == got
    assert not failures, failures


def test_agreement_with_google_on_real_files():
    """The verdicts of Google's reference parser over real files (every
    40th file of the shared corpus): all agree."""
    robots = {}
    n = 0
    diffs = []
    with open(VECTORS / "google_verdicts_subset.tsv", newline="", encoding="utf-8") as f:
        rows = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        next(rows)
        for file, agent, url, want in rows:
            r = robots.get(file)
            if r is None:
                r = robots[file] = botscope.Robots((VECTORS / "corpus" / file).read_bytes())
            n += 1
            if r.allowed(agent, url) != (want == "1"):
                diffs.append((file, agent, url, want))
    assert n == 16_940
    assert not diffs, diffs[:20]


def test_allowed_many_takes_lists_and_tuples_of_any_url():
    r = botscope.Robots("User-agent: *\nDisallow: /private\nDisallow: /*%0A\n")
    urls = ["/", "/private/x", "", "/a\nb", "/private\n", "https://h/private"]
    want = [r.allowed("bot", u) for u in urls]
    assert want == [True, False, True, True, False, False]
    # A URL holding a newline is one URL.
    assert r.allowed_many("bot", urls) == want
    assert r.allowed_many("bot", tuple(urls)) == want
    assert r.allowed_many("bot", []) == []
    assert r.allowed_many("bot", [""]) == [True]
    assert r.allowed_many("bot", ["", ""]) == [True, True]
    # Any iterable of str; a batch past 64 URLs the same as a short one.
    assert r.allowed_many("bot", (u for u in urls)) == want
    assert r.allowed_many("bot", urls * 50) == want * 50
    # Lists without line feeds are read whole (joined), the others URL by
    # URL: the answers are the same, wherever the line feed stands.
    plain = [u for u in urls if "\n" not in u]
    assert r.allowed_many("bot", plain) == [r.allowed("bot", u) for u in plain]
    for at in range(len(plain) + 1):
        mixed = plain[:at] + ["/private\n"] + plain[at:]
        assert r.allowed_many("bot", mixed) == [r.allowed("bot", u) for u in mixed]
    class Url(str):
        pass
    assert r.allowed_many("bot", [Url("/private/x"), Url("/")]) == [False, True]


def test_allowed_many_is_allowed_in_a_loop():
    body = (VECTORS / "corpus").glob("*.txt")
    checked = 0
    for path in sorted(body)[:40]:
        r = botscope.Robots(path.read_bytes())
        urls = ["/", "/search", "/a/b?c=d", "https://example.com/wp-admin/", "/%7Euser", "/ü"]
        for agent in ("Googlebot", "Mozilla/5.0 (compatible; bingbot/2.0)", "GPTBot", "*"):
            assert r.allowed_many(agent, urls) == [r.allowed(agent, u) for u in urls]
            checked += 1
    assert checked == 160


def test_a_large_group_answers_the_same_before_and_after_it_is_indexed():
    # 400 rules: asked often enough, the group is indexed by path; every
    # answer, before and after, is the one `explain` gives rule by rule.
    lines = ["User-agent: *"]
    for i in range(400):
        kind = "Allow" if i % 7 == 0 else "Disallow"
        pat = [f"/d{i}/", f"/d{i // 2}/p{i}", f"/*.x{i}$", f"/q{i}*z"][i % 4]
        lines.append(f"{kind}: {pat}")
    r = botscope.Robots("\n".join(lines) + "\n")
    urls = [f"/d{i}/p{2 * i}" for i in range(50)] + [f"/a.x{i}" for i in range(50)]
    urls += [f"/q{i}/z" for i in range(0, 400, 9)] + ["/", "/d7/", "/d8", "/a.x3/b"]
    want = [r.explain("anybot", u)["allowed"] for u in urls]
    assert True in want and False in want
    for _ in range(300):
        assert r.allowed_many("anybot", urls) == want
    assert [r.allowed("anybot", u) for u in urls] == want


BODY = """\
Sitemap: https://example.com/sitemap.xml
User-agent: *
Disallow: /private
Allow: /private/ok
Crawl-delay: 2
Content-Usage: / train-ai=n
Content-Usage: /open/ train-ai=y

User-agent: GPTBot
Disallow: /

Sitemap: https://example.com/news.xml
"""


def test_every_method():
    r = botscope.Robots(BODY)
    assert r.semantics == "google"
    assert r.allowed("Googlebot", "https://example.com/") is True
    assert r.allowed("Googlebot", "https://example.com/private/x") is False
    assert r.allowed("Mozilla/5.0 (compatible; GPTBot/1.2; +https://openai.com/gptbot)", "/") is False

    e = r.explain("Googlebot", "https://example.com/private/ok/1")
    assert e["verdict"] == "allowed" and e["allowed"] is True
    assert e["rule"] == {"line": 4, "kind": "allow", "pattern": "/private/ok"}
    assert e["group"] == "global"
    assert e["reason"] == "line 4: Allow: /private/ok in the * group"
    assert e["usage"] == {"train-ai": "n"}
    e = r.explain("GPTBot", "/x")
    assert e["verdict"] == "disallowed" and e["group"] == "specific" and e["rule"]["line"] == 10
    assert r.explain("Googlebot", "/")["rule"] is None

    assert r.usage("Googlebot", "/open/page")["usage"] == {"train-ai": "y"}
    assert r.usage("Googlebot", "/page")["usage_lines"] == [6]
    # No usage where the agent may not crawl.
    assert r.usage("GPTBot", "/open/page")["usage"] is None

    assert r.crawl_delay("Googlebot") == 2.0
    assert r.crawl_delay("GPTBot") is None
    assert r.sitemaps == ["https://example.com/sitemap.xml", "https://example.com/news.xml"]
    assert [len(g["rules"]) for g in r.groups] == [2, 1]
    assert r.to_dict()["groups"] == r.groups

    codes = {d["code"] for d in r.lint()}
    assert "R011" in codes  # Googlebot ignores Crawl-delay
    bad = botscope.Robots("User-agent: *\nDisalow: /x\n").lint()
    assert bad[0]["line"] == 2 and bad[0]["severity"] in ("warning", "error")
    assert "Robots" in repr(r)


def test_content_usage_header_reads_as_the_command_does():
    # One field line, or several read as one Dictionary (RFC 9651 4.2):
    # the later key wins.
    assert botscope.content_usage("train-ai=n, search=y")["usage"] == {"train-ai": "n", "search": "y"}
    p = botscope.content_usage(["train-ai=n, bots=n", "train-ai=y"])
    assert p["usage"] == {"train-ai": "y"} and p["error"] is None
    assert "draft-ietf-aipref-vocab-05" in p["problems"][0]
    # Upper-case keys fail the Dictionary: every preference unknown.
    p = botscope.content_usage(["train-ai=n", "Search=y"])
    assert p["usage"] == {} and p["error"]
    # Strings are not Tokens: unknown.
    assert botscope.content_usage('train-ai="n"')["usage"] == {}
    assert botscope.content_usage(["x=y,"] * 4000)["error"].endswith("more than 8192")
    # A malformed rule keeps its path, with every preference unknown.
    r = botscope.Robots("User-agent: *\nContent-Usage: / train-ai=n\nContent-Usage: /x Train-AI=y\n")
    u = r.usage("Bot", "/x/1")
    assert u["usage"] == {} and u["unreadable_lines"] == [3]


def test_draft1996_semantics():
    body = "User-agent: *\nDisallow: /a\nAllow: /a/b\n"
    assert botscope.Robots(body).allowed("x", "/a/b") is True
    old = botscope.Robots(body, semantics="draft1996")
    assert old.semantics == "draft1996"
    # The first matching rule in file order wins.
    assert old.allowed("x", "/a/b") is False


def test_bytes_that_are_not_utf8_are_read_as_google_reads_them():
    r = botscope.Robots(b"User-agent: *\nDisallow: /\xff\xfe\n")
    assert r.allowed("x", "/%FF%FE") is False
    assert r.allowed("x", "/ok") is True


def test_max_bytes_cuts_at_a_whole_line():
    body = "User-agent: *\n" + "Disallow: /x\n" * 10 + "Disallow: /late\n"
    assert botscope.Robots(body).allowed("x", "/late") is False
    assert botscope.Robots(body, max_bytes=len(body) - 1).allowed("x", "/late") is True


def test_a_body_is_read_as_a_crawler_reads_it_by_default():
    # Past 500 KiB (the robots commands' cap) a rule is not read, unless
    # the whole body is asked for.
    pad = "# " + "x" * 1000 + "\n"
    body = "User-agent: *\n" + pad * 600 + "Disallow: /late\n"
    assert len(body) > botscope.DEFAULT_PARSE_CAP
    assert botscope.Robots(body).allowed("x", "/late") is True
    assert botscope.Robots(body, max_bytes=None).allowed("x", "/late") is False


def test_a_stranger_s_huge_body_costs_a_crawler_s_read():
    # 1.5 GiB of zeros: over the whole-body limit, yet read as a crawler
    # reads it (its first 500 KiB), in memory of that order.
    import resource

    huge = bytes(botscope.MAX_BODY_BYTES + (512 << 20))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    r = botscope.Robots(huge)
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert r.allowed("x", "/") is True
    assert grown_kib < 64 << 10, f"{grown_kib} KiB for a 500 KiB read"
    with pytest.raises(ValueError, match="at most 1073741824 bytes"):
        botscope.Robots(huge, max_bytes=None)
    del huge, r
    gc.collect()


def test_bad_input_raises_and_never_crashes():
    with pytest.raises(TypeError, match="body must be str or bytes, not int"):
        botscope.Robots(5)
    with pytest.raises(TypeError):
        botscope.Robots(None)
    with pytest.raises(ValueError, match="unknown semantics"):
        botscope.Robots("", semantics="rfc1")
    with pytest.raises(UnicodeEncodeError):
        botscope.Robots("User-agent: \udcff")
    with pytest.raises(UnicodeEncodeError):
        botscope.Robots("").allowed("bot\udcff", "/")
    with pytest.raises(TypeError):
        botscope.Robots("").allowed(b"bot", "/")
    with pytest.raises(TypeError):
        botscope.Robots("").allowed_many("bot", "/not-a-list")
    with pytest.raises(TypeError, match="urls must be a list of str, not bytes"):
        botscope.Robots("").allowed_many("bot", b"/not-a-list")
    with pytest.raises(TypeError):
        botscope.Robots("").allowed_many("bot", 5)
    with pytest.raises(TypeError, match="urls must hold str, not int"):
        botscope.Robots("").allowed_many("bot", [1, 2])
    with pytest.raises(TypeError, match="urls must hold str, not bytes"):
        botscope.Robots("").allowed_many("bot", ("/a", b"/b"))
    with pytest.raises(TypeError):
        botscope.Robots("").allowed_many("bot", ["/a", None])
    with pytest.raises(UnicodeEncodeError):
        botscope.Robots("").allowed_many("bot", ["/a", "/\udcff"])
    # Over the size limit: a clear error before any work (zero-filled
    # bytes are not touched).
    huge = bytes(botscope.MAX_BODY_BYTES + 1)
    with pytest.raises(ValueError, match="at most 1073741824 bytes"):
        botscope.Robots(huge, max_bytes=None)
    with pytest.raises(ValueError):
        botscope.bias(huge)
    del huge
    gc.collect()
    # Pathological files answer, at a bounded cost.
    nasty = "User-agent: *\n" + "Disallow: /*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a$\n" * 2000
    r = botscope.Robots(nasty)
    assert r.allowed("x", "/" + "a" * 5000 + "b") is True
    assert botscope.bias(nasty)["semantics"] == "google"


def test_a_large_body_is_parsed_whole_when_asked():
    body = "User-agent: *\n" + "".join(f"Disallow: /p{i}/\n" for i in range(100_000)) + "Disallow: /last\n"
    assert len(body) > 1_000_000
    r = botscope.Robots(body, max_bytes=None)
    assert r.allowed("x", "/last") is False
    assert r.allowed("x", "/p99999/") is False
    assert r.allowed("x", "/q") is True
    # A crawler's cut: the tail is not read.
    assert botscope.Robots(body).allowed("x", "/last") is True


def test_bias_and_favorability():
    files = [
        "User-agent: Googlebot\nAllow: /\n\nUser-agent: *\nDisallow: /\n",
        "User-agent: Googlebot\nDisallow: /\n\nUser-agent: *\nAllow: /\n",
        "User-agent: *\nDisallow: /tmp\n",
        "User-agent: Googlebot\nDisallow: /tmp\n\nUser-agent: *\nDisallow: /tmp\n",
    ]
    b = botscope.bias(files[0])
    assert b["robots"] == [{"robot": "googlebot", "allowed": 1, "bias": 1, "verdict": "favored"}]
    assert b["universal_allowed"] == 0 and b["too_complex"] is None

    f = botscope.Favorability()
    f.add_many(files)
    assert f.n == 4
    assert f.table() == [
        {"robot": "googlebot", "appeared": 3, "favored": 1, "disfavored": 1, "favorability": 0.0}
    ]
    # The same from the tables, added one by one, and merged.
    g = botscope.Favorability()
    for body in files[:2]:
        g.add_bias(botscope.bias(body))
    h = botscope.Favorability()
    h.add(files[2])
    h.add(files[3].encode())
    g.merge(h)
    assert g.n == 4 and g.table() == f.table()
    with pytest.raises(ValueError, match="unknown verdict"):
        g.add_bias({"robots": [{"robot": "x", "verdict": "maybe"}]})
    with pytest.raises(ValueError, match="unknown semantics"):
        botscope.Favorability("nope")
    # Draft semantics are carried through.
    assert botscope.bias(files[0], semantics="draft1996")["semantics"] == "draft1996"


def test_the_type_stubs_name_what_the_module_has():
    """Every class, function and method of the stubs exists in the module,
    and every public name of the module is in the stubs."""
    import ast
    from pathlib import Path

    from botscope import _botscope

    stub = ast.parse((Path(botscope.__file__).parent / "_botscope.pyi").read_text())
    named = set()
    for node in stub.body:
        if isinstance(node, ast.ClassDef):
            named.add(node.name)
            cls = getattr(_botscope, node.name)
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name != "__init__":
                    assert hasattr(cls, item.name), f"{node.name}.{item.name}"
        elif isinstance(node, ast.FunctionDef):
            named.add(node.name)
            assert callable(getattr(_botscope, node.name)), node.name
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            named.add(node.target.id)
            assert hasattr(_botscope, node.target.id), node.target.id
    public = {n for n in dir(_botscope) if not n.startswith("_")} | {"__version__"}
    assert public <= named, public - named
    assert (Path(botscope.__file__).parent / "py.typed").exists()


def test_the_version_is_the_workspaces():
    root = os.path.join(os.path.dirname(__file__), "..", "..")
    with open(os.path.join(root, "Cargo.toml"), encoding="utf-8") as f:
        line = next(l for l in f if l.startswith('version = "'))
    assert botscope.__version__ == line.split('"')[1]
