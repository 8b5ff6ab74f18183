"""botscope inside Scrapy: Scrapy's own parser-interface tests, from the
Scrapy release on PyPI (its source distribution, which scripts/test
fetches into target/scrapy-tests and checks against a pinned hash), run
against ``botscope.scrapy.RobotParser``; then what Scrapy's tests do not
ask: the answers equal ``botscope.Robots``'s, bytes arguments, the
settings, and Scrapy's robots.txt middleware driving the parser."""

import importlib
import os
import re
import sys
from pathlib import Path

import pytest

from conftest import ROOT, VECTORS, jsonl
from test_robots import body_of

scrapy = pytest.importorskip("scrapy")

import botscope  # noqa: E402
from botscope.scrapy import RobotParser  # noqa: E402

SCRAPY_VERSION = "2.19.0"


def scrapy_tests():
    """Scrapy's ``tests`` package of the pinned release (scripts/test
    unpacks it); a missing one fails, never skips: CI runs these."""
    root = Path(
        os.environ.get("BOTSCOPE_SCRAPY_TESTS", ROOT / "target" / "scrapy-tests" / SCRAPY_VERSION)
    )
    assert (root / "tests" / "test_robotstxt_interface.py").is_file(), (
        f"Scrapy {SCRAPY_VERSION}'s tests are not in {root}: scripts/test fetches them"
    )
    assert scrapy.__version__ == SCRAPY_VERSION, scrapy.__version__
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    return importlib.import_module("tests.test_robotstxt_interface")


_scrapy_tests = scrapy_tests()


class TestBotscopeRobotParser(_scrapy_tests.BaseRobotParserTest):
    """Every test of Scrapy's ``BaseRobotParserTest``, as Scrapy runs it
    for Protego, with botscope's parser."""

    def setup_method(self):
        super()._setUp(RobotParser)

    def test_order_based_precedence(self) -> None:
        pytest.skip(
            "Google's parser (RFC 9309) has no order-based precedence: the longest "
            "match wins (Scrapy skips this test for Protego for the same reason)"
        )

    def test_unicode_url_and_useragent(self) -> None:
        pytest.skip(
            "Google's parser reads `User-Agent: UnicödeBöt` as the product token `Unic` "
            "(RFC 9309: a product token is [a-zA-Z_-]), so no group names `UnicödeBöt`; "
            "the URL half of the test runs in test_unicode_urls_as_scrapy_requests_them"
        )


def test_scrapy_tests_ran_are_scrapys():
    """The class above runs Scrapy's tests, not copies: every test method
    of Scrapy's base class is inherited or skipped with its reason."""
    base = _scrapy_tests.BaseRobotParserTest
    names = {n for n in vars(base) if n.startswith("test_")}
    assert {"test_allowed", "test_allowed_wildcards", "test_crawl_delay",
            "test_garbage_response"} <= names
    overridden = {n for n in vars(TestBotscopeRobotParser) if n.startswith("test_")}
    assert overridden == {"test_order_based_precedence", "test_unicode_url_and_useragent"}


def test_the_module_s_examples_run():
    import doctest

    import botscope.scrapy

    failed, tried = doctest.testmod(botscope.scrapy)
    assert failed == 0
    assert tried >= 4


def test_unicode_urls_as_scrapy_requests_them():
    body = """
        User-Agent: *
        Disallow: /admin/
        Disallow: /wiki/K%C3%A4ytt%C3%A4j%C3%A4:
        Disallow: /wiki/Käyttäjä:

        User-Agent: UnicödeBöt
        Disallow: /some/randome/page.html""".encode()
    rp = RobotParser(body)
    assert rp.allowed("https://site.local/", "*")
    assert not rp.allowed("https://site.local/admin/", "*")
    assert not rp.allowed("https://site.local/wiki/K%C3%A4ytt%C3%A4j%C3%A4:", "*")
    # Scrapy requests this URL percent-encoded; the parser asks about that.
    assert not rp.allowed("https://site.local/wiki/Käyttäjä:", "*")
    assert not rp.allowed("https://site.local/wiki/Käyttäjä:".encode(), b"*")
    # Google's reading of the group line: the token `Unic`.
    assert not rp.allowed("https://site.local/some/randome/page.html", "Unic")
    assert rp.allowed("https://site.local/some/randome/page.html", "UnicodeBot")


def test_answers_are_google_s_and_botscope_robots_s():
    """On Google's vectors and the RFC's, the parser gives Google's
    answer, as ``botscope.Robots`` does, for the product token and for a
    whole User-Agent header carrying it."""
    asked = 0
    for file in ("google_vectors.jsonl", "spec_test_vectors.jsonl"):
        for v in jsonl(VECTORS / file):
            body = body_of(v)
            rp, r = RobotParser(body), botscope.Robots(body)
            url = v["url"]
            if not url.isascii():
                continue  # Scrapy requests it percent-encoded: asked about above
            agents = [v["useragent"]]
            if re.fullmatch(r"[A-Za-z_-]+", v["useragent"]):
                agents.append(f"Mozilla/5.0 (compatible; {v['useragent']}/1.0)")
            for agent in agents:
                assert rp.allowed(url, agent) == v["allowed"], (v["name"], agent, url)
                assert rp.allowed(url, agent) == r.allowed(agent, url)
                assert rp.crawl_delay(agent) == r.crawl_delay(agent)
                asked += 1
    assert asked > 800


def test_a_whole_user_agent_header_is_its_robots_token():
    rp = RobotParser(b"User-agent: Scrapy\nDisallow: /x\nCrawl-delay: 3\n\nUser-agent: *\nDisallow:\n")
    ua = f"Scrapy/{SCRAPY_VERSION} (+https://scrapy.org)"
    assert not rp.allowed("https://a.test/x", ua)
    assert rp.allowed("https://a.test/x", "OtherBot/1.0")
    assert rp.crawl_delay(ua) == 3.0
    assert rp.crawl_delay("OtherBot") is None


def test_settings_choose_semantics_and_cap():
    from scrapy.utils.test import get_crawler

    body = b"User-agent: *\nDisallow: /a\nAllow: /a/b\n"
    google = RobotParser.from_crawler(get_crawler(), body)
    assert google.allowed("https://a.test/a/b", "x")
    draft = RobotParser.from_crawler(
        get_crawler(settings_dict={"BOTSCOPE_ROBOTS_SEMANTICS": "draft1996"}), body
    )
    assert not draft.allowed("https://a.test/a/b", "x")  # first match wins
    assert draft.robots.semantics == "draft1996"

    # A rule past the cap is not read, as a crawler does not read it.
    big = b"User-agent: *\n" + b"# " + b"x" * 600_000 + b"\nDisallow: /\n"
    assert RobotParser.from_crawler(get_crawler(), big).allowed("https://a.test/", "x")
    whole = RobotParser.from_crawler(
        get_crawler(settings_dict={"BOTSCOPE_ROBOTS_MAX_BYTES": 0}), big
    )
    assert not whole.allowed("https://a.test/", "x")
    with pytest.raises(ValueError):
        RobotParser.from_crawler(
            get_crawler(settings_dict={"BOTSCOPE_ROBOTS_SEMANTICS": "bing"}), body
        )


def test_the_middleware_uses_it_and_the_signal_carries_it():
    """Scrapy's RobotsTxtMiddleware, as a project's settings switch it on:
    the robots.txt response parsed by botscope, a disallowed request
    refused, and ``robots_parsed`` handing the parser (its ``robots``
    and ``sitemaps``) to a handler."""
    import asyncio

    from scrapy import signals
    from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware
    from scrapy.exceptions import IgnoreRequest
    from scrapy.http import Request, TextResponse
    from scrapy.utils.test import get_crawler

    crawler = get_crawler(
        settings_dict={
            "ROBOTSTXT_OBEY": True,
            "ROBOTSTXT_PARSER": "botscope.scrapy.RobotParser",
            "USER_AGENT": "ExampleBot/1.0 (+https://example.com/bot)",
        }
    )
    seen = []

    def parsed(robotparser, request):
        seen.append(robotparser)

    crawler.signals.connect(parsed, signal=signals.robots_parsed)
    body = (b"User-agent: ExampleBot\nDisallow: /private\nCrawl-delay: 4\n"
            b"Sitemap: https://site.test/sitemap.xml\n")

    class Engine:
        async def download_async(self, request):
            assert request.url == "https://site.test/robots.txt"
            return TextResponse(request.url, body=body, request=request)

    crawler.engine = Engine()
    mw = RobotsTxtMiddleware.from_crawler(crawler)

    async def ask(path):
        return await mw.process_request(Request("https://site.test" + path))

    loop = asyncio.new_event_loop()
    try:
        assert loop.run_until_complete(ask("/public")) is None
        with pytest.raises(IgnoreRequest):
            loop.run_until_complete(ask("/private/x"))
    finally:
        loop.close()
    assert len(seen) == 1
    rp = seen[0]
    assert isinstance(rp, RobotParser)
    assert rp.sitemaps == ["https://site.test/sitemap.xml"]
    assert rp.crawl_delay("ExampleBot/1.0") == 4.0
    assert rp.robots.explain("ExampleBot", "/private/x")["rule"]["line"] == 2
    assert crawler.stats.get_value("robotstxt/forbidden") == 1


def test_a_charge_that_does_not_read_counts_as_the_whole_offer():
    """A stranger's `crawler-charged` that does not parse, is in another
    currency, or is over the offer never escapes the budget: it counts as
    the whole offer, and the response still reaches the spider."""
    from scrapy.http import Request, Response
    from scrapy.utils.test import get_crawler

    from botscope.scrapy import TermsMiddleware

    crawler = get_crawler(settings_dict={
        "BOTSCOPE_USE": "train-ai", "BOTSCOPE_MAX_PRICE": "USD 0.02",
        "BOTSCOPE_BUDGET": "USD 1", "BOTSCOPE_SIGNING_KEY": "k.jwk"})
    crawler.stats.open_spider()
    mw = TermsMiddleware.from_crawler(crawler)
    for header, spent in [("USD 0.01", 10_000), ("=cmd|' /C calc'!A0", 20_000),
                          ("EUR 0.01", 20_000), ("USD 5.00", 20_000), ("USD 0.02", 20_000)]:
        mw.spent = 0
        req = Request("https://site.test/p", meta={"botscope_terms": {}, "botscope_reserved": 20_000})
        mw.reserved = 20_000
        resp = Response(req.url, headers={"crawler-charged": header}, request=req)
        assert mw.process_response(req, resp) is resp
        assert (mw.spent, mw.reserved) == (spent, 0), header


def test_the_body_kept_for_the_terms_ends_at_a_whole_line():
    body = b"User-agent: *\n" + b"# " + b"x" * 600 + b"\nDisallow: /private/area\n"
    rp = RobotParser(body, max_bytes=len(body) - 5)
    assert rp.body.endswith(b"x\n"), rp.body[-10:]
    assert RobotParser(body).body == body
